"""An inf or NaN gradient reaches only the inputs its output read, as in PyTorch: relu, the
max and adaptive poolings, interpolation, hardswish, softshrink and where give the other inputs
0, not 0 times the gradient (NaN). The backends' ``keep_where`` is the masked gradient they use."""

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.backends import backend_of

torch = pytest.importorskip("torch")

GRADIENT = np.array([np.nan, 1.0, np.inf, 2.0, -np.inf, 0.5])

CASES = {
    "relu": (lambda L, t: L.relu(t), (2, 4)),
    "hardswish": (lambda L, t: L.nn.functional.hardswish(t * 3), (2, 4)),
    "softshrink": (lambda L, t: L.nn.functional.softshrink(t), (2, 4)),
    "where": (lambda L, t: L.where(t > 0, t, L.zeros_like(t)), (2, 4)),
    "max_pool1d": (lambda L, t: L.nn.functional.max_pool1d(t, 2), (1, 2, 6)),
    "max_pool2d overlapping": (lambda L, t: L.nn.functional.max_pool2d(t, (1, 2), stride=1), (1, 1, 2, 4)),
    "max_pool3d": (lambda L, t: L.nn.functional.max_pool3d(t, 2), (1, 1, 2, 4, 4)),
    "adaptive_avg_pool1d": (lambda L, t: L.nn.functional.adaptive_avg_pool1d(t, 3), (1, 2, 7)),
    "adaptive_avg_pool2d": (lambda L, t: L.nn.functional.adaptive_avg_pool2d(t, (2, 3)), (1, 2, 5, 7)),
    "adaptive_max_pool1d": (lambda L, t: L.nn.functional.adaptive_max_pool1d(t, 3), (1, 2, 7)),
    "adaptive_max_pool2d": (lambda L, t: L.nn.functional.adaptive_max_pool2d(t, (2, 3)), (1, 2, 5, 7)),
    "nearest down": (lambda L, t: L.nn.functional.interpolate(t, scale_factor=0.5, mode="nearest"), (1, 1, 8)),
    "nearest up": (lambda L, t: L.nn.functional.interpolate(t, scale_factor=2, mode="nearest"), (1, 2, 3, 4)),
    "nearest-exact": (lambda L, t: L.nn.functional.interpolate(t, size=(4, 5), mode="nearest-exact"), (1, 2, 3, 7)),
    "linear": (lambda L, t: L.nn.functional.interpolate(t, size=9, mode="linear"), (1, 2, 5)),
    "bilinear": (lambda L, t: L.nn.functional.interpolate(t, size=(7, 9), mode="bilinear"), (1, 2, 5, 7)),
    "bilinear corners": (lambda L, t: L.nn.functional.interpolate(t, size=(3, 4), mode="bilinear", align_corners=True),
                         (1, 2, 5, 7)),
}


def _gradients(name, library):
    function, shape = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape)
    t = library.tensor(x, requires_grad=True)
    out = function(library, t)
    grad = np.resize(GRADIENT, int(np.prod(tuple(out.shape)))).reshape(tuple(out.shape))
    out.backward(library.tensor(grad))
    return t.grad.detach().numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_non_finite_gradient_reaches_only_the_inputs_read_as_in_pytorch(name):
    ours, theirs = _gradients(name, vg), _gradients(name, torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isfinite(ours).any() or not np.isfinite(theirs).all()      # (not NaN everywhere)


def test_relu_gives_an_inactive_unit_zero_whatever_its_gradient():
    x = vg.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    x.relu().backward(vg.tensor([np.nan, np.nan, np.inf, -np.inf]))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, np.nan, 0.0, -np.inf])


def test_max_pool_sends_an_inf_gradient_to_the_maximum_alone():
    x = vg.tensor([[[1.0, 3.0, 2.0, 0.0]]], requires_grad=True)
    F.max_pool1d(x, 2).backward(vg.tensor([[[np.inf, 1.0]]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, np.inf, 1.0, 0.0]]])


def test_the_gradients_of_gradients_still_flow_through_the_masks():
    x = vg.tensor([-2.0, -0.5, 1.0, 4.0], dtype=vg.float64, requires_grad=True)
    (g,) = vg.autograd.grad(F.hardswish(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [1 / 3 * -2 + 0.5, 1 / 3 * -0.5 + 0.5, 1 / 3 + 0.5, 1.0])
    (gg,) = vg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [1 / 3, 1 / 3, 1 / 3, 0.0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
def test_keep_where_keeps_every_value_under_the_mask_bit_for_bit_and_zero_elsewhere(dtype):
    native = getattr(vg, dtype).numpy
    values = np.array([[np.nan, -0.0, np.inf], [-np.inf, 2.5, -1.0]]) if dtype[0] != "i" else np.arange(6).reshape(2, 3)
    values = values.astype(native)[:, ::-1]                        # non-contiguous
    mask = np.array([True, False, True])                           # broadcast along the rows
    kept = backend_of(values).xp.keep_where(mask, values)
    assert kept.dtype == values.dtype and kept.shape == values.shape
    expected = np.where(mask, values, native.type(0))
    np.testing.assert_array_equal(kept.astype(np.float64), expected.astype(np.float64))
    assert not np.signbit(kept[:, 1].astype(np.float64)).any()     # +0 where the mask is off
    if dtype[0] == "f" or dtype == "bfloat16":
        same_bits = kept.view(f"u{values.itemsize}")[:, [0, 2]] == np.ascontiguousarray(values).view(
            f"u{values.itemsize}")[:, [0, 2]]
        assert same_bits.all()


def test_keep_where_takes_zero_dim_masks_and_values():
    kept = backend_of(np.zeros(1)).xp.keep_where(np.bool_(False), np.float64(np.inf))
    assert kept.shape == () and kept == 0.0
    x = vg.tensor(-1.5, requires_grad=True)
    x.relu().backward(vg.tensor(np.nan))
    assert x.grad.item() == 0.0
