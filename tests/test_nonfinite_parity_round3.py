"""Where an inf or NaN goes in the margin losses, embedding_bag, grid_sample and chain_matmul
(issue 34, the fuzzer's third round of non-finite entries): PyTorch's CPU kernels, value and
gradient, with the concrete numbers written out and PyTorch asked too.

- multi_margin_loss, multilabel_margin_loss: a class counts where ``z > 0`` for its excess z
  (``margin - x[y] + x[i]``), so a NaN excess counts nothing; the class weight multiplies only
  the terms counted (an inf weight times no term is 0).
- embedding_bag: a padded entry is skipped, never multiplied by 0; ``max`` keeps a bag's first
  entry unless a later one is greater (a NaN wins only as the first).
- grid_sample: the 3-D kernel adds only corners within bounds, so an infinite point reads 0;
  the 2-D kernel multiplies the zeros it reads there by NaN weights.
- chain_matmul is multi_dot: the cheapest order, (AB)C on a tie of three, which decides where
  an inf spreads.
"""

import warnings

import numpy as np
import pytest

import test_differential_fuzz as fuzz
import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.ops.registry import OPS

torch = pytest.importorskip("torch")
TF = torch.nn.functional

nan, inf = float("nan"), float("inf")


def _pair(array):
    """The same float64 leaf in vizgrad and in PyTorch."""
    return (vg.tensor(array, dtype=vg.float64, requires_grad=True),
            torch.tensor(array, dtype=torch.float64, requires_grad=True))


def _same(ours, theirs, expected=None):
    ours = ours.detach().numpy() if isinstance(ours, vg.Tensor) else np.asarray(ours)
    theirs = theirs.detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
    if expected is not None:
        np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


FIXED = [("multi_margin_loss", "nan"), ("multi_margin_loss", "inf"), ("multilabel_margin_loss", "nan"),
         ("multilabel_margin_loss", "inf"), ("embedding_bag", "inf"), ("grid_sample", "inf"),
         ("chain_matmul", "inf")]


@pytest.mark.parametrize("name, variant", FIXED, ids=[f"{name}-{variant}" for name, variant in FIXED])
def test_every_sample_agrees_with_pytorch(name, variant):
    info, function = OPS[name], fuzz._torch_function(name)
    assert not fuzz._known(name, variant), f"{name} ({variant}) is fixed: it must not be in KNOWN"
    for sample in info.samples(np.random.default_rng(0)):
        ours, our_error, _ = fuzz._call(vg, info.function, sample, variant)
        theirs, their_error, _ = fuzz._call(torch, function, sample, variant)
        label = f"{name} ({variant}, {sample.name})"
        assert our_error is None or isinstance(our_error, vg.VizgradError), f"{label}: {our_error!r}"
        if their_error is None:
            assert our_error is None, f"{label}: vizgrad refuses ({our_error}) where PyTorch answers"
            assert fuzz._difference(ours, theirs) is None, label


def test_multi_margin_loss_counts_no_nan_excess():
    x = [[nan, 0.5, 2.0, inf], [0.3, -inf, 0.1, 0.2]]
    (a, b), labels = _pair(x), [1, 0]
    ours = F.multi_margin_loss(a, vg.tensor(labels), reduction="none")
    theirs = TF.multi_margin_loss(b, torch.tensor(labels), reduction="none")
    _same(ours, theirs, [inf, 0.425])        # row 0: the NaN class is not counted; row 1: -inf is not
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[0.0, -0.5, 0.25, 0.25], [-0.5, 0.0, 0.25, 0.25]])


def test_multi_margin_loss_weighs_only_the_counted_terms():
    x, weight, labels = [[0.0, 5.0, 0.2, 0.1], [0.0, 0.3, 0.2, 0.1]], [1.0, inf, nan, 1.0], [1, 0]
    a, b = _pair(x)
    ours = F.multi_margin_loss(a, vg.tensor(labels), p=2, weight=vg.tensor(weight, dtype=vg.float64), reduction="none")
    theirs = TF.multi_margin_loss(b, torch.tensor(labels), p=2, weight=torch.tensor(weight, dtype=torch.float64),
                                  reduction="none")
    _same(ours, theirs, [0.0, 1.085])        # row 0 violates no margin: its inf weight multiplies nothing
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[0.0, 0.0, 0.0, 0.0], [-1.8, 0.65, 0.6, 0.55]])


def test_multilabel_margin_loss_counts_no_nan_excess():
    x, labels = [[nan, 0.5, 2.0, inf], [0.3, -inf, 0.1, 0.2]], [[1, -1, 0, 0], [0, 2, -1, 3]]
    a, b = _pair(x)
    ours = F.multilabel_margin_loss(a, vg.tensor(labels), reduction="none")
    theirs = TF.multilabel_margin_loss(b, torch.tensor(labels), reduction="none")
    _same(ours, theirs, [inf, 0.5])
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[0.0, -0.5, 0.25, 0.25], [-0.25, 0.0, -0.25, 0.5]])


def test_embedding_bag_skips_a_padded_inf_row():
    a, b = _pair([[0.0, 1.0], [inf, nan], [2.0, -3.0]])
    indices = [[0, 1, 2], [2, 1, 1]]
    ours = F.embedding_bag(vg.tensor(indices), a, mode="mean", padding_idx=1)
    theirs = TF.embedding_bag(torch.tensor(indices), b, mode="mean", padding_idx=1)
    _same(ours, theirs, [[1.0, -1.0], [2.0, -3.0]])
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[0.5, 0.5], [0.0, 0.0], [1.5, 1.5]])


def test_embedding_bag_skips_a_padded_entry_and_its_inf_weight():
    a, b = _pair([[inf, 1.0], [2.0, 3.0]])
    (pa, pb), indices, offsets = _pair([inf, 2.0, 0.5]), [0, 1, 1], [0, 2]
    ours = F.embedding_bag(vg.tensor(indices), a, vg.tensor(offsets), mode="sum", per_sample_weights=pa,
                           padding_idx=0)
    theirs = TF.embedding_bag(torch.tensor(indices), b, torch.tensor(offsets), mode="sum", per_sample_weights=pb,
                              padding_idx=0)
    _same(ours, theirs, [[4.0, 6.0], [1.0, 1.5]])
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[0.0, 0.0], [2.5, 2.5]])
    _same(pa.grad, pb.grad, [0.0, 5.0, 5.0])


def test_embedding_bag_max_lets_a_nan_win_only_as_the_first():
    a, b = _pair([[nan, 1.0], [2.0, nan], [3.0, -3.0]])
    indices = [[0, 1, 2], [2, 1, 0]]
    ours = F.embedding_bag(vg.tensor(indices), a, mode="max")
    theirs = TF.embedding_bag(torch.tensor(indices), b, mode="max")
    _same(ours, theirs, [[nan, 1.0], [3.0, 1.0]])
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, [[1.0, 2.0], [0.0, 0.0], [1.0, 0.0]])


@pytest.mark.parametrize("mode, value, input_grad, grid_grad", [
    ("bilinear", [0.0, 2.75], [0.125, 0.375, 0.0, 0.0, 0.125, 0.375, 0.0, 0.0], [[0.0, 0.0, 0.0], [1.0, 2.0, 4.0]]),
    ("nearest", [0.0, 1.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [[0.0] * 3, [0.0] * 3]),
])
def test_grid_sample_3d_reads_zero_at_an_infinite_point(mode, value, input_grad, grid_grad):
    a, b = _pair(np.arange(8.0).reshape(1, 1, 2, 2, 2))
    ga, gb = _pair([[[[[0.1, inf, -0.2], [0.25, -0.5, 0.0]]]]])
    ours = F.grid_sample(a, ga, mode=mode, align_corners=False)
    theirs = TF.grid_sample(b, gb, mode=mode, align_corners=False)
    _same(ours, theirs, np.reshape(value, (1, 1, 1, 1, 2)))
    ours.sum().backward()
    theirs.sum().backward()
    _same(a.grad, b.grad, np.reshape(input_grad, (1, 1, 2, 2, 2)))
    _same(ga.grad, gb.grad, np.reshape(grid_grad, (1, 1, 1, 2, 3)))


def test_grid_sample_2d_keeps_pytorchs_nan_at_an_infinite_point():
    image, grid = np.arange(4.0).reshape(1, 1, 2, 2), [[[[inf, 0.1], [0.2, -0.3]]]]
    ours = F.grid_sample(vg.tensor(image), vg.tensor(grid, dtype=vg.float64), align_corners=False)
    theirs = TF.grid_sample(torch.tensor(image), torch.tensor(grid, dtype=torch.float64), align_corners=False)
    _same(ours, theirs, [[[[nan, 1.1]]]])


@pytest.mark.parametrize("matrices, expected", [
    # (1, 2) (2, 3) (3, 1): A(BC) is cheaper, and spreads the inf as 0·inf
    ([[[0.0, 1.0]], [[2.0, 2.0, 1.0], [1.0, 0.0, 2.0]], [[2.0], [2.0], [inf]]], [[nan]]),
    # three square matrices cost the same either way: PyTorch takes (AB)C
    ([[[2.0, 1.0], [1.0, 0.0]], [[2.0, 2.0], [0.0, 0.0]], [[1.0, 1.0], [inf, 2.0]]], [[inf, 12.0], [inf, 6.0]]),
])
def test_chain_matmul_and_multi_dot_multiply_in_pytorchs_order(matrices, expected):
    ours_in = [vg.tensor(m, dtype=vg.float64) for m in matrices]
    theirs_in = [torch.tensor(m, dtype=torch.float64) for m in matrices]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # chain_matmul's deprecation, in both
        _same(vg.chain_matmul(*ours_in), torch.chain_matmul(*theirs_in), expected)
    _same(vg.linalg.multi_dot(ours_in), torch.linalg.multi_dot(theirs_in), expected)


def test_chain_matmul_gradients_agree_with_pytorch():
    arrays = [np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, 2, 12).reshape(3, 4),
              np.linspace(-2, 1, 8).reshape(4, 2)]
    pairs = [_pair(array) for array in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = vg.chain_matmul(*(a for a, _ in pairs))
        theirs = torch.chain_matmul(*(b for _, b in pairs))
    _same(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    for a, b in pairs:
        _same(a.grad, b.grad)
