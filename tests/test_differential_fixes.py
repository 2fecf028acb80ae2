"""What the differential fuzzer (tests/test_differential_fuzz.py) found and issue 34 fixed, run
deterministically: every registry sample of each op in the variant where it differed from
PyTorch (integer and bool dtypes, inf and NaN entries, the float64 gradients), so that a
regression fails here whatever hypothesis draws there."""

import numpy as np
import pytest

import test_differential_fuzz as fuzz
import vizgrad as vg
from vizgrad.ops.registry import OPS

torch = pytest.importorskip("torch")

FIXED = {
    "integer": ("addbmm", "addmm", "addmv", "index_fill", "floor_divide", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "dropout", "dropout2d",
                "dropout3d", "hardtanh", "hinge_embedding_loss", "local_response_norm", "lp_pool1d", "lp_pool2d",
                "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "relu6", "softsign", "tanhshrink", "threshold",
                "xlog1py", "xlogy", "lu_unpack", "addcmul", "index_add", "pow", "logit", "einsum"),
    "bool": ("index_fill", "dropout", "dropout2d", "dropout3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "xlog1py",
             "xlogy", "cummin", "cummax", "diff", "mode", "lu_unpack", "kthvalue", "scatter", "scatter_reduce",
             "index_reduce", "einsum", "logit", "pad", "matrix_power", "linalg.matrix_power"),
    "inf": ("floor_divide", "ctc_loss", "interpolate", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
            "adaptive_avg_pool3d", "det", "logdet", "slogdet", "inverse", "linalg.inv_ex", "linalg.solve_ex",
            "linalg.cholesky_ex", "linalg.solve_triangular", "matrix_power", "linalg.matrix_power", "trapezoid", "trapz",
            "polygamma", "logaddexp", "fmod"),
    "nan": ("ctc_loss", "interpolate", "threshold", "hardshrink", "max_pool2d", "max_pool3d", "adaptive_max_pool2d",
            "adaptive_max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "slogdet",
            "linalg.cholesky_ex", "linalg.solve_triangular", "bucketize", "searchsorted", "mvlgamma"),
    "as is": ("ctc_loss", "interpolate", "max_pool2d", "hinge_embedding_loss", "adaptive_avg_pool2d"),
}
CASES = [(name, variant) for variant, names in FIXED.items() for name in names]


@pytest.mark.parametrize("name, variant", CASES, ids=[f"{name}-{variant}" for name, variant in CASES])
def test_every_sample_agrees_with_pytorch(name, variant):
    info, function = OPS[name], fuzz._torch_function(name)
    assert not fuzz._known(name, variant), f"{name} ({variant}) is fixed: it must not be in KNOWN"
    for sample in info.samples(np.random.default_rng(0)):
        ours, our_error, our_leaves = fuzz._call(vg, info.function, sample, variant)
        theirs, their_error, their_leaves = fuzz._call(torch, function, sample, variant)
        label = f"{name} ({variant}, {sample.name})"
        assert our_error is None or isinstance(our_error, vg.VizgradError), f"{label}: {our_error!r}"
        if their_error is not None:          # as in the fuzzer: vizgrad may answer where PyTorch refuses
            continue
        assert our_error is None, f"{label}: vizgrad refuses ({our_error}) where PyTorch answers"
        difference = fuzz._difference(ours, theirs)
        if difference is None and variant == "as is" and info.differentiable:
            difference = fuzz._gradient_difference(ours, our_leaves, theirs, their_leaves)
        assert difference is None, f"{label}: {difference}"


def test_integer_scales_and_bounds_truncate_as_pytorch_converts_them():
    a = [[1, 2], [3, 4]]
    for call in (lambda L, x: L.addmm(x, x, x, alpha=2.9, beta=-2.5),
                 lambda L, x: L.nn.functional.hardtanh(x, -1.5, 2.5),
                 lambda L, x: L.nn.functional.threshold(x, 1.5, -9.9),
                 lambda L, x: L.nn.functional.hinge_embedding_loss(x, -x.sign(), margin=3.9, reduction="none")):
        ours, theirs = call(vg, vg.tensor(a)), call(torch, torch.tensor(a))
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        assert ours.tolist() == theirs.tolist()
    with pytest.raises(vg.errors.ArgumentError, match="addmm: alpha=inf"):
        vg.addmm(vg.tensor(a), vg.tensor(a), vg.tensor(a), alpha=float("inf"))
    with pytest.raises(vg.errors.DTypeError, match="hinge_embedding_loss: reduction='mean' of an integer input"):
        vg.nn.functional.hinge_embedding_loss(vg.tensor(a), vg.tensor(a))


def test_refusals_of_the_dtypes_pytorch_has_no_kernel_for():
    x = vg.ones(1, 2, 6, dtype=vg.int32)
    for call, message in ((lambda: vg.nn.functional.avg_pool1d(x, 2), "avg_pool1d: input must be a floating-point "
                                                                        "or int64 tensor, got int32"),
                          (lambda: vg.nn.functional.conv1d(x > 0, x[:, :, :2] > 0), "conv1d: input must be a "
                                                                                    "floating-point or integer"),
                          (lambda: vg.nn.functional.dropout(x, 0.5), "dropout: expected a floating-point input"),
                          (lambda: vg.nn.functional.relu6(x > 0), "relu6: bool inputs are not supported")):
        with pytest.raises(vg.errors.DTypeError, match=message):
            call()
