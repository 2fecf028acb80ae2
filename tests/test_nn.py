"""``vizgrad.nn``: layers (shapes, parameter counts, values against NumPy formulas), the
containers, the Module API (names, buffers, modes, conversion, state dicts, hooks, repr)
and the lazy layers.

The functional ops behind the layers are value- and gradient-checked by the op registry
(tests/test_ops.py); here we check what the modules add: their parameters, how they
call the ops, their state and their bookkeeping. torch is only an optional cross-check.
"""

import itertools
import math
from collections import OrderedDict

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.errors import BackwardError, DTypeError, ShapeError, StateDictError, VizgradError

RNG = np.random.default_rng(2024)


def arr(tensor):
    return tensor.detach().numpy()


def randn(*shape, requires_grad=False, dtype=np.float64):
    return vg.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=requires_grad)


def count(module):
    return sum(p.numel() for p in module.parameters())


# --- NumPy references ---------------------------------------------------------------------
def conv2d_reference(x, w, b, stride, padding, dilation, groups):
    """Direct convolution with loops over output positions and kernel taps."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    oh = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        for i, j in itertools.product(range(oh), range(ow)):
            rows = i * stride[0] + dilation[0] * np.arange(kh)
            cols = j * stride[1] + dilation[1] * np.arange(kw)
            patch = x[:, g * cg:(g + 1) * cg][:, :, rows][:, :, :, cols]
            out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + b.reshape(1, -1, 1, 1)


def conv_transpose2d_reference(x, w, b, stride, padding, output_padding, groups):
    """Scatter each input pixel times the kernel onto the output, then crop the padding."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    full_h = (h - 1) * stride[0] + kh + output_padding[0]
    full_w = (wd - 1) * stride[1] + kw + output_padding[1]
    out = np.zeros((n, og * groups, full_h, full_w))
    per_group = c // groups
    for ic in range(c):
        g = ic // per_group
        for i, j in itertools.product(range(h), range(wd)):
            r, s = i * stride[0], j * stride[1]
            out[:, g * og:(g + 1) * og, r:r + kh, s:s + kw] += x[:, ic, i, j][:, None, None, None] * w[ic]
    out = out[:, :, padding[0]:full_h - padding[0] or None, padding[1]:full_w - padding[1] or None]
    return out + b.reshape(1, -1, 1, 1)


# === affine layers ========================================================================
@pytest.mark.parametrize("shape", [(8, 3), (2, 5, 3), (3,)])
def test_linear_shape_count_and_value(shape):
    layer = nn.Linear(3, 4).double()
    x = randn(*shape)
    out = layer(x)
    assert out.shape == shape[:-1] + (4,)
    assert layer.weight.shape == (4, 3) and layer.bias.shape == (4,)
    assert count(layer) == 3 * 4 + 4
    np.testing.assert_allclose(arr(out), arr(x) @ arr(layer.weight).T + arr(layer.bias))


def test_linear_without_bias():
    layer = nn.Linear(5, 2, bias=False)
    assert layer.bias is None and count(layer) == 10
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    assert layer(vg.randn(7, 5)).shape == (7, 2)


def test_linear_rejects_a_wrong_input_size():
    with pytest.raises(ShapeError, match=r"in_features = 3"):
        nn.Linear(3, 4)(vg.randn(2, 5))


def test_bilinear_shape_count_and_value():
    layer = nn.Bilinear(3, 4, 5).double()
    x1, x2 = randn(8, 3), randn(8, 4)
    out = layer(x1, x2)
    assert out.shape == (8, 5)
    assert count(layer) == 5 * 3 * 4 + 5
    expected = np.einsum("ni,oij,nj->no", arr(x1), arr(layer.weight), arr(x2)) + arr(layer.bias)
    np.testing.assert_allclose(arr(out), expected)


def test_identity_returns_its_input_and_takes_any_arguments():
    x = vg.randn(3)
    assert nn.Identity(54, unused="ignored")(x) is x
    assert count(nn.Identity()) == 0


# === convolutions =========================================================================
CONV2D_CASES = [
    # (kwargs, input shape, output shape)
    (dict(in_channels=3, out_channels=8, kernel_size=3), (2, 3, 10, 10), (2, 8, 8, 8)),
    (dict(in_channels=3, out_channels=8, kernel_size=3, padding=1), (2, 3, 10, 10), (2, 8, 10, 10)),
    (dict(in_channels=3, out_channels=8, kernel_size=3, stride=2, padding=1), (2, 3, 10, 10), (2, 8, 5, 5)),
    (dict(in_channels=3, out_channels=8, kernel_size=(3, 5), stride=(1, 2)), (2, 3, 10, 11), (2, 8, 8, 4)),
    (dict(in_channels=4, out_channels=6, kernel_size=3, groups=2), (2, 4, 9, 9), (2, 6, 7, 7)),
    (dict(in_channels=4, out_channels=4, kernel_size=3, groups=4), (1, 4, 9, 9), (1, 4, 7, 7)),   # depthwise
    (dict(in_channels=3, out_channels=2, kernel_size=3, dilation=2), (2, 3, 10, 10), (2, 2, 6, 6)),
    (dict(in_channels=3, out_channels=2, kernel_size=3, dilation=2, padding="same"), (2, 3, 10, 10), (2, 2, 10, 10)),
    (dict(in_channels=3, out_channels=2, kernel_size=4, padding="same"), (2, 3, 9, 9), (2, 2, 9, 9)),   # even kernel
    (dict(in_channels=3, out_channels=2, kernel_size=3, padding="valid"), (2, 3, 9, 9), (2, 2, 7, 7)),
    (dict(in_channels=3, out_channels=2, kernel_size=3), (3, 6, 6), (2, 4, 4)),                       # unbatched
]


@pytest.mark.parametrize("kwargs, shape_in, shape_out", CONV2D_CASES,
                         ids=[f"conv2d-{i}" for i in range(len(CONV2D_CASES))])
def test_conv2d_shapes_and_parameter_counts(kwargs, shape_in, shape_out):
    conv = nn.Conv2d(**kwargs)
    kernel = conv.kernel_size
    groups = kwargs.get("groups", 1)
    assert conv.weight.shape == (kwargs["out_channels"], kwargs["in_channels"] // groups) + kernel
    assert conv.bias.shape == (kwargs["out_channels"],)
    assert count(conv) == kwargs["out_channels"] * (kwargs["in_channels"] // groups) * math.prod(kernel) \
        + kwargs["out_channels"]
    assert conv(vg.randn(*shape_in)).shape == shape_out


@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 2), (2, 0, 2, 4)])
def test_conv2d_layer_matches_a_direct_convolution(stride, padding, dilation, groups):
    conv = nn.Conv2d(4, 8, 3, stride=stride, padding=padding, dilation=dilation, groups=groups).double()
    x = randn(2, 4, 9, 8)
    expected = conv2d_reference(arr(x), arr(conv.weight), arr(conv.bias), (stride,) * 2, (padding,) * 2,
                                (dilation,) * 2, groups)
    np.testing.assert_allclose(arr(conv(x)), expected, atol=1e-12)


def test_conv2d_same_padding_matches_explicit_padding_for_odd_kernels():
    same = nn.Conv2d(2, 3, 5, padding="same", dilation=2).double()
    explicit = nn.Conv2d(2, 3, 5, padding=4, dilation=2).double()
    explicit.load_state_dict(same.state_dict())
    x = randn(1, 2, 11, 11)
    np.testing.assert_allclose(arr(same(x)), arr(explicit(x)), atol=1e-12)


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 6, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="'valid', 'same'"):
        nn.Conv2d(3, 6, 3, padding="full")
    with pytest.raises(ValueError, match=r"padding_mode must be one of \['zeros', 'reflect', 'replicate', "
                                         r"'circular'\], but got padding_mode='mirror'"):
        nn.Conv2d(3, 6, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="ConvTranspose2d: only \"zeros\" padding mode"):
        nn.ConvTranspose2d(3, 6, 3, padding_mode="reflect")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("layer, kwargs, shape", [
    ("Conv2d", dict(kernel_size=3, padding=1), (2, 3, 9, 8)),
    ("Conv2d", dict(kernel_size=(3, 5), padding=(2, 1), stride=2), (2, 3, 9, 8)),
    ("Conv2d", dict(kernel_size=4, padding="same", dilation=(1, 2)), (1, 3, 9, 10)),
    ("Conv2d", dict(kernel_size=3, padding="valid"), (2, 3, 6, 6)),
    ("Conv1d", dict(kernel_size=5, padding=2), (2, 3, 11)),
    ("Conv1d", dict(kernel_size=4, padding="same"), (3, 12)),
])
def test_conv_padding_modes_are_pytorchs(mode, layer, kwargs, shape):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, layer)(3, 4, padding_mode=mode, **kwargs).double()
    theirs = getattr(torch.nn, layer)(3, 4, padding_mode=mode, **kwargs).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal(shape)
    x_ours, x_theirs = vg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_ours, out_theirs = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    (out_ours * out_ours).sum().backward()
    (out_theirs * out_theirs).sum().backward()
    np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("kwargs, shape_in, shape_out", [
    (dict(in_channels=3, out_channels=16, kernel_size=5, padding=2), (8, 3, 32), (8, 16, 32)),
    (dict(in_channels=3, out_channels=6, kernel_size=3, stride=2), (2, 3, 11), (2, 6, 5)),
    (dict(in_channels=3, out_channels=6, kernel_size=3, groups=3, dilation=2, padding="same"), (2, 3, 10), (2, 6, 10)),
    (dict(in_channels=3, out_channels=6, kernel_size=3), (3, 7), (6, 5)),
])
def test_conv1d_shapes_and_parameter_counts(kwargs, shape_in, shape_out):
    conv = nn.Conv1d(**kwargs)
    groups = kwargs.get("groups", 1)
    assert conv.weight.shape == (kwargs["out_channels"], kwargs["in_channels"] // groups, kwargs["kernel_size"])
    assert count(conv) == kwargs["out_channels"] * (kwargs["in_channels"] // groups * kwargs["kernel_size"] + 1)
    assert conv(vg.randn(*shape_in)).shape == shape_out


def test_conv1d_is_conv2d_over_a_height_of_one():
    conv1 = nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=1).double()
    x = randn(2, 3, 9)
    expected = conv2d_reference(arr(x)[:, :, None], arr(conv1.weight)[:, :, None], arr(conv1.bias), (1, 2), (0, 1),
                                (1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(arr(conv1(x)), expected, atol=1e-12)


@pytest.mark.parametrize("kwargs, shape_in, shape_out", [
    (dict(in_channels=4, out_channels=2, kernel_size=3, stride=2), (1, 4, 10), (1, 2, 21)),
    (dict(in_channels=4, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1), (1, 4, 10),
     (1, 2, 20)),
    (dict(in_channels=4, out_channels=6, kernel_size=3, groups=2), (2, 4, 5), (2, 6, 7)),
    (dict(in_channels=4, out_channels=2, kernel_size=3, dilation=2), (4, 5), (2, 9)),
])
def test_conv_transpose1d_shapes_and_parameter_counts(kwargs, shape_in, shape_out):
    conv = nn.ConvTranspose1d(**kwargs)
    groups = kwargs.get("groups", 1)
    assert conv.weight.shape == (kwargs["in_channels"], kwargs["out_channels"] // groups, kwargs["kernel_size"])
    assert count(conv) == kwargs["in_channels"] * kwargs["out_channels"] // groups * kwargs["kernel_size"] \
        + kwargs["out_channels"]
    assert conv(vg.randn(*shape_in)).shape == shape_out


@pytest.mark.parametrize("kwargs, shape_in, shape_out", [
    (dict(in_channels=8, out_channels=4, kernel_size=2, stride=2), (2, 8, 7, 7), (2, 4, 14, 14)),
    (dict(in_channels=4, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1), (2, 4, 9, 9),
     (2, 2, 18, 18)),
    (dict(in_channels=4, out_channels=6, kernel_size=3, groups=2), (2, 4, 9, 9), (2, 6, 11, 11)),
    (dict(in_channels=4, out_channels=6, kernel_size=(3, 1), stride=(1, 2)), (4, 5, 5), (6, 7, 9)),
])
def test_conv_transpose2d_shapes_and_parameter_counts(kwargs, shape_in, shape_out):
    conv = nn.ConvTranspose2d(**kwargs)
    groups = kwargs.get("groups", 1)
    kernel = conv.kernel_size
    assert conv.weight.shape == (kwargs["in_channels"], kwargs["out_channels"] // groups) + kernel
    assert count(conv) == kwargs["in_channels"] * kwargs["out_channels"] // groups * math.prod(kernel) \
        + kwargs["out_channels"]
    assert conv(vg.randn(*shape_in)).shape == shape_out


@pytest.mark.parametrize("stride, padding, output_padding, groups", [(1, 0, 0, 1), (2, 1, 1, 1), (2, 0, 1, 2)])
def test_conv_transpose2d_layer_matches_a_scatter_reference(stride, padding, output_padding, groups):
    conv = nn.ConvTranspose2d(4, 6, 3, stride=stride, padding=padding, output_padding=output_padding,
                              groups=groups).double()
    x = randn(2, 4, 5, 4)
    expected = conv_transpose2d_reference(arr(x), arr(conv.weight), arr(conv.bias), (stride,) * 2, (padding,) * 2,
                                          (output_padding,) * 2, groups)
    np.testing.assert_allclose(arr(conv(x)), expected, atol=1e-12)


def test_conv_transpose2d_output_size_picks_the_output_padding():
    up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    x = vg.randn(1, 4, 9, 9)
    assert up(x).shape == (1, 2, 17, 17)
    assert up(x, output_size=(18, 18)).shape == (1, 2, 18, 18)
    assert up(x, output_size=(1, 2, 17, 18)).shape == (1, 2, 17, 18)
    with pytest.raises(ValueError, match="valid sizes range from 17 to 18"):
        up(x, output_size=(20, 20))
    with pytest.raises(ValueError, match="padding must be an int"):
        nn.ConvTranspose2d(4, 2, 3, padding="same")


def test_conv_transpose_undoes_the_shape_of_a_strided_conv():
    down = nn.Conv2d(3, 5, 4, stride=2, padding=1)
    up = nn.ConvTranspose2d(5, 3, 4, stride=2, padding=1)
    x = vg.randn(2, 3, 16, 16)
    assert up(down(x)).shape == x.shape


# === pooling ==============================================================================
@pytest.mark.parametrize("layer, shape_in, shape_out", [
    (nn.MaxPool2d(2), (2, 3, 8, 8), (2, 3, 4, 4)),
    (nn.MaxPool2d(2), (2, 3, 9, 9), (2, 3, 4, 4)),
    (nn.MaxPool2d(2, ceil_mode=True), (2, 3, 9, 9), (2, 3, 5, 5)),
    (nn.MaxPool2d(3, stride=2, padding=1), (2, 3, 9, 9), (2, 3, 5, 5)),
    (nn.MaxPool2d((2, 3)), (1, 6, 6), (1, 3, 2)),
    (nn.MaxPool2d(2, dilation=2), (1, 1, 8, 8), (1, 1, 3, 3)),
    (nn.AvgPool2d(2), (2, 3, 8, 8), (2, 3, 4, 4)),
    (nn.AvgPool2d(3, stride=2, padding=1), (2, 3, 9, 9), (2, 3, 5, 5)),
    (nn.AvgPool2d((2, 3), stride=1), (1, 1, 5, 5), (1, 1, 4, 3)),
    (nn.AdaptiveAvgPool2d(1), (2, 64, 7, 7), (2, 64, 1, 1)),
    (nn.AdaptiveAvgPool2d((3, 2)), (2, 4, 9, 7), (2, 4, 3, 2)),
    (nn.AdaptiveAvgPool2d((3, None)), (2, 4, 9, 7), (2, 4, 3, 7)),
    (nn.AdaptiveAvgPool2d(4), (4, 5, 5), (4, 4, 4)),
    (nn.MaxPool1d(2), (1, 3, 8), (1, 3, 4)),
    (nn.AvgPool1d(2), (1, 3, 8), (1, 3, 4)),
    (nn.AdaptiveAvgPool1d(1), (2, 3, 10), (2, 3, 1)),
])
def test_pooling_shapes_and_no_parameters(layer, shape_in, shape_out):
    assert count(layer) == 0 and not list(layer.buffers())
    assert layer(vg.randn(*shape_in)).shape == shape_out


def test_pooling_values():
    x = randn(2, 3, 6, 4)
    blocks = arr(x).reshape(2, 3, 3, 2, 2, 2)
    np.testing.assert_allclose(arr(nn.MaxPool2d(2)(x)), blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(arr(nn.AvgPool2d(2)(x)), blocks.mean(axis=(3, 5)))
    np.testing.assert_allclose(arr(nn.AdaptiveAvgPool2d(1)(x)), arr(x).mean(axis=(2, 3), keepdims=True))
    np.testing.assert_allclose(arr(nn.AdaptiveAvgPool2d((3, 2))(x)), blocks.mean(axis=(3, 5)))


def test_max_pool_returns_indices_when_asked():
    x = vg.tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0]]]])
    out, indices = nn.MaxPool2d(2, return_indices=True)(x)
    np.testing.assert_array_equal(arr(out), [[[[5.0, 8.0]]]])
    np.testing.assert_array_equal(indices.numpy(), [[[[1, 6]]]])     # flat positions in each (H, W) plane


# === reshaping ============================================================================
def test_flatten_and_unflatten():
    x = vg.randn(32, 1, 5, 5)
    assert nn.Flatten()(x).shape == (32, 25)
    assert nn.Flatten(0, -1)(x).shape == (800,)
    assert nn.Flatten(2)(x).shape == (32, 1, 25)
    assert nn.Flatten(1, 2)(x).shape == (32, 5, 5)
    assert nn.Unflatten(1, (2, 5))(vg.randn(3, 10)).shape == (3, 2, 5)
    assert nn.Unflatten(-1, (5, -1))(vg.randn(3, 10)).shape == (3, 5, 2)
    roundtrip = nn.Sequential(nn.Flatten(), nn.Unflatten(1, (1, 5, 5)))
    np.testing.assert_array_equal(arr(roundtrip(x)), arr(x))
    assert count(nn.Flatten()) == count(nn.Unflatten(1, (2, 5))) == 0


# === dropout ==============================================================================
def test_dropout_in_training_zeroes_a_fraction_p_and_scales_the_rest():
    p, n = 0.3, 40_000
    vg.manual_seed(11)
    out = arr(nn.Dropout(p)(vg.ones(n)))
    assert set(np.unique(out)) <= {0.0, np.float32(1 / (1 - p))}
    dropped = (out == 0).mean()
    assert abs(dropped - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert abs(out.mean() - 1.0) < 0.02              # the expectation is kept


def test_dropout_is_reproducible_with_manual_seed():
    layer = nn.Dropout(0.5)
    vg.manual_seed(3)
    first = arr(layer(vg.ones(100)))
    second = arr(layer(vg.ones(100)))
    vg.manual_seed(3)
    np.testing.assert_array_equal(arr(layer(vg.ones(100))), first)
    assert not np.array_equal(first, second)         # a new mask each call


def test_dropout_in_eval_is_the_identity_and_follows_the_parent_mode():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.9))
    x = vg.randn(3, 4)
    model.eval()
    assert model[1](x) is x
    np.testing.assert_array_equal(arr(model(x)), arr(model[0](x)))
    model.train()
    vg.manual_seed(0)
    assert (arr(model(vg.ones(50, 4))) == 0).mean() > 0.5


def test_dropout_gradient_is_the_scaled_mask_and_edge_probabilities():
    x = vg.randn(200, requires_grad=True)
    vg.manual_seed(5)
    out = nn.Dropout(0.25)(x)
    out.sum().backward()
    mask = arr(out) / arr(x)
    np.testing.assert_allclose(arr(x.grad), mask, rtol=1e-6)
    np.testing.assert_allclose(np.unique(np.round(mask, 5)), [0.0, round(1 / 0.75, 5)])
    assert np.all(arr(nn.Dropout(1.0)(vg.ones(10))) == 0)
    y = vg.randn(10)
    assert nn.Dropout(0.0)(y) is y
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# === normalization ========================================================================
def batch_norm_reference(x, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def test_batch_norm1d_training_normalizes_and_updates_running_stats():
    bn = nn.BatchNorm1d(3).double()
    assert count(bn) == 6
    assert [name for name, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    np.testing.assert_array_equal(arr(bn.running_mean), 0.0)
    np.testing.assert_array_equal(arr(bn.running_var), 1.0)
    xs = [randn(16, 3) * 2 + 1, randn(16, 3) * 0.5 - 3]
    mean, var = np.zeros(3), np.ones(3)
    for step, x in enumerate(xs, start=1):
        out = bn(x)
        np.testing.assert_allclose(arr(out), batch_norm_reference(arr(x), 0), atol=1e-10)
        mean = 0.9 * mean + 0.1 * arr(x).mean(axis=0)
        var = 0.9 * var + 0.1 * arr(x).var(axis=0, ddof=1)          # the unbiased variance, as PyTorch
        np.testing.assert_allclose(arr(bn.running_mean), mean)
        np.testing.assert_allclose(arr(bn.running_var), var)
        assert bn.num_batches_tracked.item() == step


def test_batch_norm_eval_uses_the_running_stats_and_leaves_them_alone():
    bn = nn.BatchNorm1d(3).double()
    with vg.no_grad():
        bn.weight.copy_(vg.tensor([1.0, 2.0, 3.0], dtype=vg.float64))
        bn.bias.copy_(vg.tensor([0.5, 0.0, -1.0], dtype=vg.float64))
    bn(randn(8, 3) * 3)
    bn.eval()
    mean, var = arr(bn.running_mean).copy(), arr(bn.running_var).copy()
    x = randn(5, 3)
    expected = (arr(x) - mean) / np.sqrt(var + 1e-5) * [1.0, 2.0, 3.0] + [0.5, 0.0, -1.0]
    np.testing.assert_allclose(arr(bn(x)), expected, atol=1e-12)
    np.testing.assert_array_equal(arr(bn.running_mean), mean)
    np.testing.assert_array_equal(arr(bn.running_var), var)
    assert bn.num_batches_tracked.item() == 1
    assert bn(randn(1, 3)).shape == (1, 3)          # a single sample is fine in eval


def test_batch_norm1d_over_channels_and_length():
    bn = nn.BatchNorm1d(4).double()
    x = randn(6, 4, 5)
    np.testing.assert_allclose(arr(bn(x)), batch_norm_reference(arr(x), (0, 2)), atol=1e-10)
    np.testing.assert_allclose(arr(bn.running_mean), 0.1 * arr(x).mean(axis=(0, 2)))
    with pytest.raises(ShapeError, match="expected 2D or 3D input"):
        bn(randn(2, 4, 5, 5))


def test_batch_norm2d_per_channel_statistics():
    bn = nn.BatchNorm2d(3).double()
    x = randn(4, 3, 5, 6) + vg.tensor([1.0, -2.0, 5.0], dtype=vg.float64).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(arr(bn(x)), batch_norm_reference(arr(x), (0, 2, 3)), atol=1e-10)
    np.testing.assert_allclose(arr(bn.running_var), 0.9 + 0.1 * arr(x).var(axis=(0, 2, 3), ddof=1))
    with pytest.raises(ShapeError, match="expected 4D input"):
        bn(randn(4, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(vg.randn(1, 3))


def test_batch_norm_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [randn(10, 2) + k for k in range(3)]
    for x in xs:
        bn(x)
    np.testing.assert_allclose(arr(bn.running_mean), np.mean([arr(x).mean(axis=0) for x in xs], axis=0))


def test_batch_norm_without_running_stats_or_affine():
    bn = nn.BatchNorm2d(3, affine=False, track_running_stats=False).double()
    assert count(bn) == 0 and not list(bn.buffers())
    bn.eval()
    x = randn(4, 3, 2, 2)
    np.testing.assert_allclose(arr(bn(x)), batch_norm_reference(arr(x), (0, 2, 3)), atol=1e-10)


def test_layer_norm():
    ln = nn.LayerNorm((3, 4)).double()
    assert ln.weight.shape == ln.bias.shape == (3, 4) and count(ln) == 24
    with vg.no_grad():
        ln.weight.mul_(2.0)
        ln.bias.add_(0.5)
    x = randn(5, 3, 4) * 3 + 2
    expected = batch_norm_reference(arr(x), (1, 2)) * 2 + 0.5
    np.testing.assert_allclose(arr(ln(x)), expected, atol=1e-10)
    plain = nn.LayerNorm(4, elementwise_affine=False).double()
    assert count(plain) == 0
    np.testing.assert_allclose(arr(plain(x)), batch_norm_reference(arr(x), 2), atol=1e-10)
    assert count(nn.LayerNorm(4, bias=False)) == 4


def test_group_norm():
    gn = nn.GroupNorm(2, 6).double()
    assert count(gn) == 12
    x = randn(3, 6, 4, 4) * 2 + 1
    grouped = arr(x).reshape(3, 2, 3 * 16)
    expected = batch_norm_reference(grouped, 2).reshape(x.shape)
    np.testing.assert_allclose(arr(gn(x)), expected, atol=1e-10)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(4, 6)


# === embedding ============================================================================
def test_embedding_shapes_and_lookup():
    emb = nn.Embedding(10, 3)
    assert emb.weight.shape == (10, 3) and count(emb) == 30
    indices = vg.tensor([[1, 2, 0], [9, 9, 4]])
    out = emb(indices)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(arr(out), arr(emb.weight)[indices.numpy()])
    assert emb(vg.tensor(5)).shape == (3,)
    with pytest.raises(IndexError, match="out of range"):
        emb(vg.tensor([10]))
    with pytest.raises(DTypeError, match="integer indices"):
        emb(vg.tensor([1.0]))


def test_embedding_padding_idx_starts_at_zero_and_gets_no_gradient():
    emb = nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4
    np.testing.assert_array_equal(arr(emb.weight)[4], 0.0)
    assert np.all(arr(emb.weight)[:4] != 0)
    emb(vg.tensor([4, 1, 1, 4, 2])).sum().backward()
    np.testing.assert_array_equal(arr(emb.weight.grad), [[0, 0], [2, 2], [1, 1], [0, 0], [0, 0]])
    with pytest.raises(ValueError, match="within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=5)


def test_embedding_from_pretrained_copies_and_freezes():
    table = vg.randn(4, 3)
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(arr(emb.weight), arr(table))
    assert emb.weight._array is not table._array
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


# === activations and losses as modules ====================================================
X_ACT = np.array([[-2.5, -1.2, -0.3, 0.4], [0.9, 1.7, 3.1, 7.5]])


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (nn.ELU(alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.SELU(), lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    (nn.GELU(), lambda x: x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x * np_sigmoid(x)),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (nn.Softplus(beta=2.0, threshold=5.0), lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2)),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Hardtanh(-0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    (nn.Sigmoid(), np_sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.Softmax(dim=1), lambda x: np_softmax(x, 1)),
    (nn.Softmax(dim=0), lambda x: np_softmax(x, 0)),
    (nn.LogSoftmax(dim=1), lambda x: np.log(np_softmax(x, 1))),
    (nn.Softmin(dim=1), lambda x: np_softmax(-x, 1)),
]


@pytest.mark.parametrize("module, reference", ACTIVATIONS, ids=[repr(m) for m, _ in ACTIVATIONS])
def test_activation_modules(module, reference):
    x = vg.tensor(X_ACT)
    assert count(module) == 0
    out = module(x)
    assert out.shape == x.shape
    np.testing.assert_allclose(arr(out), reference(X_ACT), rtol=1e-10, atol=1e-12)


def test_inplace_activation_modules_write_into_their_input():
    x = vg.tensor(X_ACT.copy())
    out = nn.ReLU(inplace=True)(x)
    np.testing.assert_array_equal(arr(x), np.maximum(X_ACT, 0))
    np.testing.assert_array_equal(arr(out), np.maximum(X_ACT, 0))


def test_softmax_without_dim_warns_like_pytorch():
    with pytest.warns(UserWarning, match="Implicit dimension"):
        nn.Softmax()(vg.tensor(X_ACT))


LOGITS = RNG.standard_normal((6, 4))
LABELS = np.array([0, 3, 1, 1, 2, 0])
PREDICTIONS, TARGETS = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
PROBABILITIES, BINARY = RNG.uniform(0.05, 0.95, (3, 5)), RNG.integers(0, 2, (3, 5)).astype(np.float64)


def np_log_softmax(x):
    return np.log(np_softmax(x, 1))


def test_regression_loss_modules():
    x, y = vg.tensor(PREDICTIONS), vg.tensor(TARGETS)
    d = PREDICTIONS - TARGETS
    np.testing.assert_allclose(nn.MSELoss()(x, y).item(), (d ** 2).mean())
    np.testing.assert_allclose(nn.MSELoss(reduction="sum")(x, y).item(), (d ** 2).sum())
    np.testing.assert_allclose(arr(nn.MSELoss(reduction="none")(x, y)), d ** 2)
    np.testing.assert_allclose(nn.L1Loss()(x, y).item(), np.abs(d).mean())
    huber = np.where(np.abs(d) < 0.7, 0.5 * d ** 2, 0.7 * (np.abs(d) - 0.35))
    np.testing.assert_allclose(nn.HuberLoss(delta=0.7)(x, y).item(), huber.mean())
    smooth = np.where(np.abs(d) < 0.5, 0.5 * d ** 2 / 0.5, np.abs(d) - 0.25)
    np.testing.assert_allclose(nn.SmoothL1Loss(beta=0.5)(x, y).item(), smooth.mean())


def test_classification_loss_modules():
    x, y = vg.tensor(LOGITS), vg.tensor(LABELS)
    logp = np_log_softmax(LOGITS)
    picked = logp[np.arange(6), LABELS]
    np.testing.assert_allclose(nn.CrossEntropyLoss()(x, y).item(), -picked.mean())
    np.testing.assert_allclose(nn.NLLLoss()(F.log_softmax(x, dim=1), y).item(), -picked.mean())
    weight = np.array([1.0, 2.0, 0.5, 3.0])
    weighted = nn.CrossEntropyLoss(weight=vg.tensor(weight))
    np.testing.assert_allclose(weighted(x, y).item(), -(weight[LABELS] * picked).sum() / weight[LABELS].sum())
    assert "weight" in weighted.state_dict()                   # class weights are a buffer, as PyTorch
    ignoring = nn.CrossEntropyLoss(ignore_index=1, reduction="sum")
    np.testing.assert_allclose(ignoring(x, y).item(), -picked[LABELS != 1].sum())
    smoothed = nn.CrossEntropyLoss(label_smoothing=0.2)
    expected = -(0.8 * picked + 0.2 * logp.mean(axis=1)).mean()
    np.testing.assert_allclose(smoothed(x, y).item(), expected)


def test_binary_and_divergence_loss_modules():
    p, t = vg.tensor(PROBABILITIES), vg.tensor(BINARY)
    bce = -(BINARY * np.log(PROBABILITIES) + (1 - BINARY) * np.log(1 - PROBABILITIES))
    np.testing.assert_allclose(nn.BCELoss()(p, t).item(), bce.mean())
    logits = vg.tensor(PREDICTIONS)
    s = np_sigmoid(PREDICTIONS)
    bce_logits = -(BINARY * np.log(s) + (1 - BINARY) * np.log(1 - s))
    np.testing.assert_allclose(nn.BCEWithLogitsLoss()(logits, t).item(), bce_logits.mean())
    pos = np.array([1.0, 2.0, 3.0, 0.5, 1.0])
    weighted = -(pos * BINARY * np.log(s) + (1 - BINARY) * np.log(1 - s))
    np.testing.assert_allclose(nn.BCEWithLogitsLoss(pos_weight=vg.tensor(pos))(logits, t).item(), weighted.mean())
    log_q, target = np_log_softmax(LOGITS), np_softmax(LOGITS[::-1].copy(), 1)
    kl = (target * (np.log(target) - log_q)).sum() / 6
    np.testing.assert_allclose(nn.KLDivLoss(reduction="batchmean")(vg.tensor(log_q), vg.tensor(target)).item(), kl)


def test_loss_module_gradient_and_options():
    x = vg.tensor(LOGITS, requires_grad=True)
    nn.CrossEntropyLoss()(x, vg.tensor(LABELS)).backward()
    one_hot = np.eye(4)[LABELS]
    np.testing.assert_allclose(arr(x.grad), (np_softmax(LOGITS, 1) - one_hot) / 6)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.L1Loss(reduction="avg")(vg.tensor(PREDICTIONS), vg.tensor(TARGETS))
    logits = vg.tensor(LOGITS[:3])
    with pytest.raises(IndexError, match=r"target 7 is out of bounds: class indices must be in \[0, 4\)"):
        nn.CrossEntropyLoss()(logits, vg.tensor([0, 7, 1]))
    with pytest.raises(IndexError, match="target -1 is out of bounds"):
        nn.NLLLoss()(logits, vg.tensor([0, 2, -1]))
    assert math.isfinite(nn.CrossEntropyLoss(ignore_index=-1)(logits, vg.tensor([0, 2, -1])).item())


# === containers ===========================================================================
def test_sequential_applies_in_order_and_supports_indexing_slicing_len_append():
    a, relu, b = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    model = nn.Sequential(a, relu, b)
    x = vg.randn(4, 2)
    np.testing.assert_array_equal(arr(model(x)), arr(b(relu(a(x)))))
    assert len(model) == 3
    assert model[0] is a and model[-1] is b and model[1] is relu
    assert list(model) == [a, relu, b]
    head = model[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, relu]
    assert [name for name, _ in head.named_children()] == ["0", "1"]
    assert list(model[::2]) == [a, b]
    with pytest.raises(IndexError, match="out of range"):
        model[3]
    tail = nn.Sigmoid()
    assert model.append(tail) is model
    assert len(model) == 4 and model[3] is tail
    assert [name for name, _ in model.named_children()] == ["0", "1", "2", "3"]
    assert [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_sequential_insert_delete_and_named_entries():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.Tanh())]))
    assert [name for name, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]
    assert model[0] is model.fc
    plain = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    extra = nn.Tanh()
    plain.insert(1, extra)
    assert plain[1] is extra and len(plain) == 4
    del plain[0]
    assert plain[0] is extra
    assert [name for name, _ in plain.named_parameters()] == ["2.weight", "2.bias"]
    assert plain[2].weight.name == "2.weight"
    combined = nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Tanh())
    assert len(combined) == 2 and isinstance(combined[1], nn.Tanh)


def test_module_list_registers_its_modules():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x

    net = Net()
    assert count(net) == 3 * 20
    assert [name for name, _ in net.named_parameters()][:3] == ["layers.0.weight", "layers.0.bias", "layers.1.weight"]
    assert net(vg.randn(2, 4)).shape == (2, 4)
    layers = net.layers
    assert len(layers) == 3 and layers[-1] is layers[2]
    assert isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 2
    layers.append(nn.Linear(4, 2))
    assert layers[3].weight.name == "layers.3.weight"
    layers.extend([nn.ReLU()])
    layers.insert(0, nn.Identity())
    assert isinstance(layers[0], nn.Identity) and layers[4].weight.name == "layers.4.weight"
    del layers[0]
    assert layers[3].weight.name == "layers.3.weight"
    assert len(nn.ModuleList()) == 0


def test_module_dict_registers_its_modules_in_order():
    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "box": nn.Linear(8, 4)})

    model = Heads()
    heads = model.heads
    assert list(heads.keys()) == ["cls", "box"] and list(heads) == ["cls", "box"]
    assert "cls" in heads and "mask" not in heads and len(heads) == 2
    assert [name for name, _ in model.named_parameters()] == ["heads.cls.weight", "heads.cls.bias",
                                                              "heads.box.weight", "heads.box.bias"]
    assert heads["box"](vg.randn(2, 8)).shape == (2, 4)
    heads["mask"] = nn.Linear(8, 1)
    assert heads["mask"].weight.name == "heads.mask.weight"
    heads.update([("extra", nn.ReLU())])
    assert list(heads.keys()) == ["cls", "box", "mask", "extra"]
    popped = heads.pop("cls")
    assert isinstance(popped, nn.Linear) and "cls" not in heads
    assert count(model) == 8 * 4 + 4 + 8 + 1


def test_mlp_structure_and_parameter_count():
    mlp = nn.MLP([2, 16, 16, 2])
    assert [type(m).__name__ for m in mlp] == ["Linear", "ReLU", "Linear", "ReLU", "Linear"]
    assert count(mlp) == (2 * 16 + 16) + (16 * 16 + 16) + (16 * 2 + 2)
    assert mlp(vg.randn(5, 2)).shape == (5, 2)
    fancy = nn.MLP([3, 8, 1], activation=nn.Tanh, dropout=0.1, norm_layer=nn.LayerNorm, output_activation=nn.Sigmoid,
                   bias=False)
    assert [type(m).__name__ for m in fancy] == ["Linear", "LayerNorm", "Tanh", "Dropout", "Linear", "Sigmoid"]
    assert count(fancy) == 3 * 8 + 2 * 8 + 8
    with pytest.raises(ValueError, match="at least an input and an output"):
        nn.MLP([4])


# === the Module API =======================================================================
class Net(nn.Module):
    """encoder (Linear, BatchNorm1d, ReLU) then a head; a scale parameter of its own."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.head = nn.Linear(8, 3)
        self.scale = nn.Parameter(vg.ones(3))

    def forward(self, x):
        return self.head(self.encoder(x)) * self.scale


NET_PARAMETERS = ["scale", "encoder.0.weight", "encoder.0.bias", "encoder.1.weight", "encoder.1.bias",
                  "head.weight", "head.bias"]
NET_BUFFERS = ["encoder.1.running_mean", "encoder.1.running_var", "encoder.1.num_batches_tracked"]


def test_named_parameters_have_qualified_names_and_parameters_know_them():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == NET_PARAMETERS
    for name, param in net.named_parameters():
        assert isinstance(param, nn.Parameter) and param.requires_grad
        assert param.name == name
    assert [p.shape for p in net.parameters()] == [(3,), (8, 4), (8,), (8,), (8,), (3, 8), (3,)]
    assert [name for name, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [name for name, _ in net.named_parameters(prefix="model")][1] == "model.encoder.0.weight"
    assert count(net) == 3 + 40 + 16 + 27


def test_parameter_names_follow_the_module_when_it_is_attached_later():
    block = nn.Sequential(nn.Linear(2, 2))
    assert block[0].weight.name == "0.weight"
    outer = nn.Module()
    outer.encoder = block
    assert block[0].weight.name == "encoder.0.weight"
    top = nn.ModuleList([outer])
    assert block[0].weight.name == "0.encoder.0.weight"
    bn = nn.BatchNorm1d(2)
    outer.norm = bn
    assert bn.running_mean.name == "0.norm.running_mean"


def test_shared_parameters_are_listed_once():
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(model.modules())) == 3
    assert len(list(model.named_parameters(remove_duplicate=False))) == 4


def test_buffers_and_persistence():
    net = Net()
    assert [name for name, _ in net.named_buffers()] == NET_BUFFERS
    assert len(list(net.buffers())) == 3
    net.register_buffer("steps", vg.zeros(()), persistent=False)
    net.register_buffer("table", vg.arange(3))
    assert [name for name, _ in net.named_buffers()][:2] == ["steps", "table"]
    state = net.state_dict()
    assert "table" in state and "steps" not in state
    assert net.table is net._buffers["table"]
    with pytest.raises(TypeError, match="must be a Tensor"):
        net.register_buffer("bad", [1, 2])


def test_children_and_named_modules():
    net = Net()
    assert [type(c).__name__ for c in net.children()] == ["Sequential", "Linear"]
    assert [name for name, _ in net.named_children()] == ["encoder", "head"]
    assert [name for name, _ in net.named_modules()] == ["", "encoder", "encoder.0", "encoder.1", "encoder.2", "head"]
    assert net.get_submodule("encoder.1") is net.encoder[1]
    with pytest.raises(AttributeError, match="no submodule 'missing'"):
        net.get_submodule("encoder.missing")


def test_attribute_assignment_rules():
    net = Net()
    net.plain = vg.zeros(2)                  # a plain tensor is an attribute, not a parameter
    assert "plain" not in dict(net.named_parameters())
    with pytest.raises(TypeError, match="assign a vizgrad.nn.Parameter or None"):
        net.scale = vg.ones(3)
    net.scale = None
    assert "scale" not in dict(net.named_parameters())
    del net.head
    assert [name for name, _ in net.named_children()] == ["encoder"]

    class Forgetful(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(2, 2)

    with pytest.raises(VizgradError, match=r"super\(\).__init__\(\)"):
        Forgetful()


def test_train_and_eval_propagate_to_every_descendant():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.encoder.eval()
    assert net.training and not net.encoder[1].training and net.head.training


def test_zero_grad_and_requires_grad_():
    net = Net()
    net(vg.randn(5, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    for p in net.parameters():
        assert p.grad is not None and p.grad.shape == p.shape and not np.any(arr(p.grad))
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())

    assert net.encoder.requires_grad_(False) is net.encoder
    assert [p.requires_grad for p in net.parameters()] == [True, False, False, False, False, True, True]
    net(vg.randn(5, 4)).sum().backward()
    assert net.encoder[0].weight.grad is None and net.head.weight.grad is not None


def test_zero_grad_clears_non_finite_gradients_too():
    layer = nn.Linear(2, 1)
    layer.weight.grad = vg.tensor([[float("nan"), float("inf")]])
    layer.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(arr(layer.weight.grad), [[0.0, 0.0]])


def test_to_float64_converts_in_place_keeping_parameter_identity():
    net = Net()
    params = list(net.parameters())
    net.eval()
    x32 = vg.randn(3, 4)
    before = arr(net(x32)).astype(np.float64)
    assert net.to(vg.float64) is net
    assert [p for p in net.parameters()] == params and all(a is b for a, b in zip(net.parameters(), params))
    assert all(p.dtype is vg.float64 for p in net.parameters())
    assert net.encoder[1].running_mean.dtype is vg.float64
    assert net.encoder[1].num_batches_tracked.dtype is vg.int64            # integers stay
    np.testing.assert_allclose(arr(net(x32.double())), before, rtol=1e-5, atol=1e-6)
    net.float()
    assert all(p.dtype is vg.float32 for p in net.parameters())
    with pytest.raises(DTypeError, match="floating"):
        net.to(vg.int32)


def test_an_optimizer_keeps_working_after_to():
    layer = nn.Linear(3, 1)
    opt = vg.optim.Adam(layer.parameters(), lr=0.1)
    layer(vg.randn(4, 3)).sum().backward()
    opt.step()
    layer.double()
    opt.zero_grad()
    before = arr(layer.weight).copy()
    layer(vg.randn(4, 3, dtype=vg.float64)).sum().backward()
    opt.step()
    assert layer.weight.dtype is vg.float64 and not np.array_equal(arr(layer.weight), before)
    assert opt.state[layer.weight]["exp_avg"].dtype == np.float64


def test_apply_visits_children_before_parents():
    net = Net()
    visited = []
    assert net.apply(lambda m: visited.append(type(m).__name__)) is net
    assert visited == ["Linear", "BatchNorm1d", "ReLU", "Sequential", "Linear", "Net"]

    def zero_linear(module):
        if isinstance(module, nn.Linear):
            nn.init.zeros_(module.weight)

    net.apply(zero_linear)
    assert not np.any(arr(net.encoder[0].weight)) and not np.any(arr(net.head.weight))


def test_state_dict_holds_detached_tensors_in_order():
    net = Net()
    state = net.state_dict()
    assert list(state) == NET_PARAMETERS[:5] + NET_BUFFERS + NET_PARAMETERS[5:]      # module by module
    assert all(not t.requires_grad for t in state.values())
    np.testing.assert_array_equal(arr(state["head.weight"]), arr(net.head.weight))
    assert net.state_dict(keep_vars=True)["head.weight"] is net.head.weight


def test_load_state_dict_round_trip_copies_values():
    source, target = Net(), Net()
    source(vg.randn(8, 4))                               # moves the running statistics
    state = source.state_dict()
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    source.eval(), target.eval()
    x = vg.randn(5, 4)
    np.testing.assert_array_equal(arr(target(x)), arr(source(x)))
    np.testing.assert_array_equal(arr(target.encoder[1].running_var), arr(source.encoder[1].running_var))
    with vg.no_grad():
        source.head.weight.add_(1.0)                     # the target holds copies
    assert not np.array_equal(arr(target.head.weight), arr(source.head.weight))


def test_load_state_dict_strict_errors_list_the_keys():
    layer = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict({"weight": vg.zeros(2, 3), "extra": vg.zeros(1), "more": vg.zeros(1)})
    assert isinstance(error.value, StateDictError)
    assert str(error.value) == ('load_state_dict: Error(s) in loading state_dict for Linear:\n\t'
                                'Missing key(s) in state_dict: "bias". \n\t'
                                'Unexpected key(s) in state_dict: "extra", "more". ')
    assert error.value.missing_keys == ["bias"] and error.value.unexpected_keys == ["extra", "more"]
    before = arr(layer.weight).copy()
    result = layer.load_state_dict({"weight": vg.zeros(2, 3), "extra": vg.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert not np.any(arr(layer.weight)) and np.any(before)


def test_load_state_dict_shape_mismatch_names_the_key_and_loads_nothing():
    layer = nn.Linear(3, 2)
    before = arr(layer.bias).copy()
    with pytest.raises(StateDictError, match=r"size mismatch for weight: copying a param with shape \(3, 3\) from "
                       r"checkpoint, the shape in current model is \(2, 3\)"):
        layer.load_state_dict({"weight": vg.zeros(3, 3), "bias": vg.zeros(2)})
    np.testing.assert_array_equal(arr(layer.bias), before)       # nothing was half loaded
    with pytest.raises(StateDictError, match="not a Tensor"):
        layer.load_state_dict({"weight": np.zeros((2, 3)), "bias": vg.zeros(2)})


# --- hooks ---------------------------------------------------------------------------------
def test_forward_pre_hooks_and_forward_hooks_can_replace_values_and_be_removed():
    layer = nn.Linear(3, 2).double()
    x = randn(4, 3)
    calls = []

    def double_input(module, args):
        calls.append(("pre", module, len(args)))
        return (args[0] * 2,)

    def add_one(module, args, output):
        calls.append(("post", module, args[0].shape, output.shape))
        return output + 1

    pre = layer.register_forward_pre_hook(double_input)
    post = layer.register_forward_hook(add_one)
    expected = arr(2 * x) @ arr(layer.weight).T + arr(layer.bias) + 1
    np.testing.assert_allclose(arr(layer(x)), expected)
    assert calls == [("pre", layer, 1), ("post", layer, (4, 3), (4, 2))]
    pre.remove()
    post.remove()
    np.testing.assert_allclose(arr(layer(x)), arr(F.linear(x, layer.weight, layer.bias)))
    assert len(calls) == 2
    observed = []
    with layer.register_forward_hook(lambda m, a, o: observed.append(o.shape)):   # a context manager too
        layer(x)
    layer(x)
    assert observed == [(4, 2)]


def test_full_backward_hook_sees_grad_input_and_grad_output_of_a_linear():
    layer = nn.Linear(3, 2).double()
    x = randn(4, 3, requires_grad=True)
    upstream = RNG.standard_normal((4, 2))
    seen = []
    handle = layer.register_full_backward_hook(lambda module, gi, go: seen.append((module, gi, go)))
    (layer(x) * vg.tensor(upstream)).sum().backward()
    (module, grad_input, grad_output), = seen
    assert module is layer
    assert len(grad_input) == 1 and len(grad_output) == 1
    np.testing.assert_allclose(arr(grad_output[0]), upstream)                     # dL/dy = G
    np.testing.assert_allclose(arr(grad_input[0]), upstream @ arr(layer.weight))  # dL/dx = G W
    np.testing.assert_allclose(arr(x.grad), upstream @ arr(layer.weight))
    np.testing.assert_allclose(arr(layer.weight.grad), upstream.T @ arr(x))       # weights unaffected by hooks
    handle.remove()
    x.grad = None
    (layer(x) * vg.tensor(upstream)).sum().backward()
    assert len(seen) == 1


def test_full_backward_hook_can_replace_grad_input():
    layer = nn.Linear(3, 2).double()
    x = randn(4, 3, requires_grad=True)
    layer.register_full_backward_hook(lambda module, gi, go: (gi[0] * 10,))
    layer(x).sum().backward()
    np.testing.assert_allclose(arr(x.grad), 10 * np.ones((4, 2)) @ arr(layer.weight))
    np.testing.assert_allclose(arr(layer.weight.grad), np.ones((2, 4)) @ arr(x))


def test_full_backward_hook_with_an_input_that_needs_no_gradient():
    layer = nn.Linear(3, 2).double()
    seen = []
    layer.register_full_backward_hook(lambda module, gi, go: seen.append((gi, go)))
    (layer(randn(4, 3)) * 3).sum().backward()
    (grad_input, grad_output), = seen
    assert grad_input == (None,)
    np.testing.assert_allclose(arr(grad_output[0]), np.full((4, 2), 3.0))


def test_full_backward_hook_returning_the_wrong_thing_is_an_error():
    layer = nn.Linear(3, 2)
    layer.register_full_backward_hook(lambda module, gi, go: (gi[0], gi[0]))
    with pytest.raises(BackwardError, match="expected a tuple of 1 entries"):
        layer(vg.randn(2, 3, requires_grad=True)).sum().backward()


def test_backward_hooks_of_nested_modules_each_fire():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).double()
    order = []
    for position, layer in enumerate(model):
        layer.register_full_backward_hook(lambda m, gi, go, position=position: order.append(position))
    model(randn(5, 3, requires_grad=True)).sum().backward()
    assert order == [2, 1, 0]


# --- repr ----------------------------------------------------------------------------------
def test_repr_is_a_pytorch_style_tree():
    assert repr(Net()) == (
        "Net(\n"
        "  (encoder): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "    (1): BatchNorm1d(8, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "    (2): ReLU()\n"
        "  )\n"
        "  (head): Linear(in_features=8, out_features=3, bias=True)\n"
        ")")
    assert repr(nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, bias=False)) == \
        "Conv2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2, bias=False)"
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"
    assert repr(nn.Sequential()) == "Sequential()"


LAYER_EXPRESSIONS = [
    "nn.Linear(3, 4)", "nn.Bilinear(3, 4, 5)", "nn.Conv1d(3, 6, 3, padding=1)",
    "nn.Conv2d(4, 6, 3, groups=2, dilation=2, stride=2, padding=1, bias=False)", "nn.Conv2d(4, 6, 3, padding='same')",
    "nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)", "nn.ConvTranspose1d(4, 2, 3)",
    "nn.MaxPool2d(3, 2, 1)", "nn.AvgPool2d(2)", "nn.AdaptiveAvgPool2d((1, 1))", "nn.Flatten()",
    "nn.Unflatten(1, (2, 5))", "nn.BatchNorm2d(3, momentum=None)", "nn.LayerNorm((2, 3))", "nn.GroupNorm(2, 4)",
    "nn.Embedding(10, 3, padding_idx=0)", "nn.LeakyReLU(0.2)", "nn.GELU('tanh')", "nn.Softmax(dim=1)",
    "nn.CrossEntropyLoss()", "nn.ModuleDict({'a': nn.Linear(2, 3)})", "nn.LazyLinear(4)",
    "nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.ModuleList([nn.Tanh()]))",
]


@pytest.mark.parametrize("expression", LAYER_EXPRESSIONS)
def test_repr_matches_pytorch(expression):
    torch = pytest.importorskip("torch", reason="optional cross-check against PyTorch's repr")
    assert repr(eval(expression, {"nn": nn})) == repr(eval(expression, {"nn": torch.nn}))


# === lazy layers ==========================================================================
def test_lazy_linear_infers_in_features_at_the_first_forward():
    layer = nn.LazyLinear(4)
    assert layer.has_uninitialized_params()
    assert repr(layer) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    out = layer(vg.randn(8, 3))
    assert out.shape == (8, 4)
    assert type(layer) is nn.Linear and layer.in_features == 3
    assert layer.weight.shape == (4, 3) and layer.bias.shape == (4,)
    assert type(layer.weight) is nn.Parameter and layer.weight.name == "weight"
    bound = 1 / math.sqrt(3) * (1 + 1e-6)          # PyTorch's default init happened (the bound rounded to float32)
    assert np.abs(arr(layer.weight)).max() <= bound and np.abs(arr(layer.bias)).max() <= bound
    assert np.any(arr(layer.weight))
    assert layer(vg.randn(2, 3)).shape == (2, 4)


def test_lazy_layers_follow_the_input_dtype_and_keep_names_in_a_model():
    model = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(2, bias=False))
    model(vg.randn(3, 7, dtype=vg.float64))
    assert [(name, p.shape) for name, p in model.named_parameters()] == [
        ("0.weight", (5, 7)), ("0.bias", (5,)), ("2.weight", (2, 5))]
    assert all(p.dtype is vg.float64 for p in model.parameters())
    assert model[0].weight.name == "0.weight"


def test_using_lazy_parameters_before_the_first_forward_raises_a_clear_error():
    layer = nn.LazyLinear(4)
    with pytest.raises(VizgradError, match="run the module once"):
        layer.weight.shape
    with pytest.raises(VizgradError, match="lazy module"):
        layer.weight.numel()
    with pytest.raises(VizgradError, match="lazy module"):
        nn.init.kaiming_uniform_(layer.weight)
    with pytest.raises(VizgradError, match="lazy module"):
        count(layer)
    with pytest.raises(VizgradError, match="lazy module"):
        F.linear(vg.randn(2, 3), layer.weight)
    with pytest.raises(VizgradError, match="lazy module"):     # any arithmetic, not an empty result
        layer.weight * 2
    with pytest.raises(VizgradError, match="bias belongs to a lazy module"):
        vg.zeros(4) + layer.bias
    with pytest.raises(StateDictError, match="lazy module that has not run yet"):
        layer.load_state_dict(nn.Linear(3, 4).state_dict())
    assert "weight" in repr(layer.weight)


@pytest.mark.parametrize("optimizer", [lambda ps: vg.optim.SGD(ps, lr=0.1), lambda ps: vg.optim.Adam(ps, lr=0.1)],
                         ids=["SGD", "Adam"])
def test_an_optimizer_made_before_the_first_forward_updates_lazy_parameters(optimizer):
    model = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(1))
    opt = optimizer(model.parameters())
    model(vg.randn(4, 2)).sum().backward()
    before = [arr(p).copy() for p in model.parameters()]
    grads = [arr(p.grad).copy() for p in model.parameters()]
    opt.step()
    for p, old, grad in zip(model.parameters(), before, grads):
        assert p.shape == old.shape
        if isinstance(opt, vg.optim.SGD):
            np.testing.assert_allclose(arr(p), old - 0.1 * grad, rtol=1e-6, atol=1e-7)
        else:                                              # Adam's first step moves every entry by lr·sign(g)
            moved = np.abs(grad) > 1e-3
            np.testing.assert_allclose(arr(p)[moved], (old - 0.1 * np.sign(grad))[moved], atol=1e-5)


def test_lazy_conv2d_infers_in_channels():
    conv = nn.LazyConv2d(8, 3, padding=1, groups=2)
    opt = vg.optim.SGD(conv.parameters(), lr=0.5)
    out = conv(vg.randn(2, 4, 10, 10))
    assert out.shape == (2, 8, 10, 10)
    assert type(conv) is nn.Conv2d and conv.in_channels == 4
    assert conv.weight.shape == (8, 2, 3, 3) and conv.bias.shape == (8,)
    assert repr(conv) == "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)"
    bound = 1 / math.sqrt(2 * 9) * (1 + 1e-6)
    assert np.abs(arr(conv.weight)).max() <= bound
    out.sum().backward()
    before = arr(conv.weight).copy()
    opt.step()
    np.testing.assert_allclose(arr(conv.weight), before - 0.5 * arr(conv.weight.grad), rtol=1e-6, atol=1e-7)
    assert nn.LazyConv2d(3, 3)(vg.randn(5, 6, 6)).shape == (3, 4, 4)          # unbatched input
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(vg.randn(1, 3, 5, 5))


# === optional cross-check against PyTorch =================================================
def test_a_small_cnn_matches_pytorch_given_the_same_weights():
    torch = pytest.importorskip("torch", reason="optional cross-check against PyTorch")

    def build(nn_):
        return nn_.Sequential(
            nn_.Conv2d(2, 6, 3, padding=1, groups=2), nn_.BatchNorm2d(6), nn_.ReLU(),
            nn_.Conv2d(6, 6, 3, dilation=2, padding="same"), nn_.MaxPool2d(2),
            nn_.ConvTranspose2d(6, 4, 2, stride=2), nn_.GroupNorm(2, 4), nn_.Tanh(),
            nn_.AdaptiveAvgPool2d(2), nn_.Flatten(), nn_.Dropout(0.0), nn_.Linear(16, 3), nn_.LayerNorm(3))

    ours, theirs = build(nn).double(), build(torch.nn).double()
    ours.load_state_dict({k: vg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((3, 2, 8, 8))
    mine = vg.tensor(x, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    out_mine, out_ref = ours(mine), theirs(ref)
    np.testing.assert_allclose(arr(out_mine), out_ref.detach().numpy(), atol=1e-10)
    out_mine.square().sum().backward()
    out_ref.square().sum().backward()
    np.testing.assert_allclose(arr(mine.grad), ref.grad.numpy(), atol=1e-10)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(arr(p.grad), q.grad.numpy(), atol=1e-10, err_msg=name)
    for (name, b), c in zip(ours.named_buffers(), theirs.buffers()):
        np.testing.assert_allclose(arr(b), c.numpy(), atol=1e-12, err_msg=name)


def test_deepcopy_of_a_model_copies_parameters_and_keeps_their_class():
    import copy
    model = vg.nn.Sequential(vg.nn.Linear(2, 3), vg.nn.ReLU(), vg.nn.Linear(3, 1))
    clone = copy.deepcopy(model)
    for (name, original), (clone_name, copied) in zip(model.named_parameters(), clone.named_parameters()):
        assert name == clone_name and isinstance(copied, vg.nn.Parameter) and copied.name == original.name
        assert np.array_equal(copied.detach().numpy(), original.detach().numpy())
        assert not np.shares_memory(copied.detach().numpy(), original.detach().numpy())
    clone(vg.randn(4, 2)).sum().backward()
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(vg.BackwardError, match="only leaf tensors"):
        copy.deepcopy(vg.randn(2, requires_grad=True) * 2)
