"""3-D convolutions and pooling, adaptive max pooling, unpooling, power-average pooling, local
response normalization, grid_sample/affine_grid, embedding_bag, pdist, ctc_loss and the lazy
layers: values and gradients against PyTorch, reprs, and errors in the called function's words.
(The op registry also runs each of these ops through tests/test_ops.py: NumPy references,
gradcheck and gradgradcheck in float64, the portable backend.)"""

import warnings

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
from vizgrad.errors import ArgumentError, DTypeError, ShapeError, VizgradError

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _run(function_v, function_t, arrays, kwargs=None, grad_of=None, seed=0):
    """Run ``function_v`` on vizgrad tensors and ``function_t`` on torch tensors made from
    ``arrays`` (float ones require grad), backpropagate one random cotangent through the
    (first) output, and return (values, gradients) of both libraries as NumPy."""
    kwargs = kwargs or {}
    rng = np.random.default_rng(seed)
    results = []
    for lib, function in ((vizgrad, function_v), (torch, function_t)):
        tensors = [lib.tensor(a, requires_grad=np.issubdtype(np.asarray(a).dtype, np.floating))
                   if isinstance(a, np.ndarray) else a for a in arrays]
        out = function(*tensors, **kwargs)
        first = out[0] if isinstance(out, tuple) else out
        cotangent = np.random.default_rng(seed).normal(size=tuple(first.shape))
        if first.requires_grad:
            (first * lib.tensor(cotangent)).sum().backward()
        values = [o.detach().numpy() for o in (out if isinstance(out, tuple) else (out,))]
        grads = [t.grad.numpy() if getattr(t, "grad", None) is not None else None
                 for t in tensors if hasattr(t, "requires_grad") and t.requires_grad]
        results.append((values, grads))
    del rng
    return results


def _assert_same(function_v, function_t, arrays, kwargs=None, atol=1e-10):
    (values_v, grads_v), (values_t, grads_t) = _run(function_v, function_t, arrays, kwargs)
    assert len(values_v) == len(values_t)
    for a, b in zip(values_v, values_t):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-7)
    for a, b in zip(grads_v, grads_t):
        if a is None or b is None:     # no gradient in one library: zeros (or none) in the other
            assert not np.any(a if b is None else b)
            continue
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-7)


def _distinct(rng, shape):
    size = int(np.prod(shape))
    return rng.permutation(size).reshape(shape) * (4.0 / size) - 2.0


RNG = np.random.default_rng(7)


# === conv3d, conv_transpose3d ===============================================================

@pytest.mark.parametrize("x_shape, w_shape, options", [
    ((2, 3, 5, 4, 6), (4, 3, 2, 3, 2), {}),
    ((1, 4, 6, 5, 5), (6, 2, 3, 2, 3), {"stride": (2, 1, 2), "padding": (1, 0, 2), "dilation": (1, 2, 1),
                                        "groups": 2}),
    ((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), {"padding": "same"}),
    ((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), {"padding": "valid", "stride": 2}),
    ((3, 4, 5, 4), (2, 3, 2, 2, 2), {"padding": 1}),                         # unbatched
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d_matches_pytorch(x_shape, w_shape, options, bias):
    arrays = [RNG.normal(size=x_shape), RNG.normal(size=w_shape)] + ([RNG.normal(size=w_shape[0])] if bias else [])
    _assert_same(F.conv3d, TF.conv3d, arrays, options)


@pytest.mark.parametrize("x_shape, w_shape, options", [
    ((2, 3, 3, 4, 2), (3, 2, 2, 3, 2), {}),
    ((1, 4, 3, 2, 3), (4, 3, 3, 2, 2), {"stride": 2, "padding": 1, "output_padding": (1, 0, 1), "groups": 2}),
    ((2, 2, 2, 3, 2), (2, 2, 2, 2, 3), {"stride": (1, 2, 3), "dilation": (2, 1, 1)}),
    ((2, 3, 2, 3), (2, 2, 2, 2, 2), {"stride": 2}),                          # unbatched
])
def test_conv_transpose3d_matches_pytorch(x_shape, w_shape, options):
    out_channels = w_shape[1] * options.get("groups", 1)
    arrays = [RNG.normal(size=x_shape), RNG.normal(size=w_shape), RNG.normal(size=out_channels)]
    _assert_same(F.conv_transpose3d, TF.conv_transpose3d, arrays, options)


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_layer_matches_pytorch_with_its_padding_modes(padding_mode):
    layer_t = torch.nn.Conv3d(2, 4, (3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 2), padding_mode=padding_mode,
                              dtype=torch.float64)
    layer_v = nn.Conv3d(2, 4, (3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 2), padding_mode=padding_mode,
                        dtype=vizgrad.float64)
    layer_v.weight.data = vizgrad.tensor(layer_t.weight.detach().numpy())
    layer_v.bias.data = vizgrad.tensor(layer_t.bias.detach().numpy())
    x = RNG.normal(size=(2, 2, 4, 5, 6))
    np.testing.assert_allclose(layer_v(vizgrad.tensor(x)).detach().numpy(),
                               layer_t(torch.tensor(x)).detach().numpy(), atol=1e-10)
    assert repr(layer_v) == repr(layer_t)


def test_conv_transpose3d_layer_output_size_and_shapes():
    layer_t = torch.nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, dtype=torch.float64)
    layer_v = nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, dtype=vizgrad.float64)
    layer_v.weight.data = vizgrad.tensor(layer_t.weight.detach().numpy())
    layer_v.bias.data = vizgrad.tensor(layer_t.bias.detach().numpy())
    x = RNG.normal(size=(1, 3, 3, 4, 3))
    for size in (None, (6, 8, 5), (1, 2, 5, 7, 6)):
        out_v = layer_v(vizgrad.tensor(x), output_size=size)
        out_t = layer_t(torch.tensor(x), output_size=size)
        assert tuple(out_v.shape) == tuple(out_t.shape)
        np.testing.assert_allclose(out_v.detach().numpy(), out_t.detach().numpy(), atol=1e-10)
    assert tuple(layer_v.weight.shape) == (3, 2, 3, 3, 3)


# === 3-D pooling, pooling with indices ===================================================

@pytest.mark.parametrize("shape, args, options", [
    ((2, 2, 4, 6, 5), (2,), {}),
    ((1, 3, 5, 5, 6), ((3, 2, 3),), {"stride": (2, 1, 2), "padding": (1, 1, 1)}),
    ((1, 2, 7, 6, 5), (2,), {"stride": 2, "dilation": (2, 1, 2), "ceil_mode": True}),
    ((2, 5, 4, 5), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),         # unbatched
])
def test_max_pool3d_values_indices_and_gradients(shape, args, options):
    x = _distinct(RNG, shape)
    _assert_same(lambda t, **kw: F.max_pool3d(t, *args, return_indices=True, **kw),
                 lambda t, **kw: TF.max_pool3d(t, *args, return_indices=True, **kw), [x], options)
    _assert_same(lambda t, **kw: F.max_pool3d(t, *args, **kw), lambda t, **kw: TF.max_pool3d(t, *args, **kw),
                 [x], options)


@pytest.mark.parametrize("name, d", [("max_pool1d_with_indices", 1), ("max_pool2d_with_indices", 2),
                                     ("max_pool3d_with_indices", 3)])
def test_max_pool_with_indices_returns_both(name, d):
    x = _distinct(RNG, (2, 3) + (5,) * d)
    _assert_same(lambda t: getattr(F, name)(t, 2, 2, 1), lambda t: getattr(TF, name)(t, 2, 2, 1), [x])


@pytest.mark.parametrize("shape, args, options", [
    ((2, 2, 4, 6, 5), (2,), {}),
    ((1, 3, 5, 5, 6), ((3, 2, 3),), {"stride": (2, 1, 2), "padding": (1, 1, 1)}),
    ((1, 3, 5, 5, 6), (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}),
    ((1, 2, 4, 4, 4), (2,), {"stride": 1, "divisor_override": 3}),
    ((2, 5, 4, 5), (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),         # unbatched
])
def test_avg_pool3d_matches_pytorch(shape, args, options):
    _assert_same(lambda t, **kw: F.avg_pool3d(t, *args, **kw), lambda t, **kw: TF.avg_pool3d(t, *args, **kw),
                 [RNG.normal(size=shape)], options)


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 7, 6), (2, 3, 4)), ((1, 2, 4, 3, 5), (None, 2, 1)),
                                         ((2, 5, 4, 3), 3)])
def test_adaptive_avg_pool3d_matches_pytorch(shape, size):
    _assert_same(lambda t: F.adaptive_avg_pool3d(t, size), lambda t: TF.adaptive_avg_pool3d(t, size),
                 [RNG.normal(size=shape)])


@pytest.mark.parametrize("d, shape, size", [
    (1, (2, 3, 7), 3), (1, (2, 3, 5), 4), (1, (3, 8), 8),
    (2, (2, 2, 7, 6), (3, 4)), (2, (1, 2, 5, 4), (2, None)), (2, (2, 5, 5), 1), (2, (1, 1, 3, 3), (5, 4)),
    (3, (1, 2, 5, 4, 3), (2, 3, 2)), (3, (2, 4, 4, 3), 2),
])
def test_adaptive_max_pool_values_indices_and_gradients(d, shape, size):
    name = f"adaptive_max_pool{d}d"
    x = _distinct(RNG, shape)
    _assert_same(lambda t: getattr(F, name)(t, size, True), lambda t: getattr(TF, name)(t, size, True), [x])
    _assert_same(lambda t: getattr(F, name)(t, size), lambda t: getattr(TF, name)(t, size), [x])


def test_adaptive_max_pool_sends_the_gradient_to_the_first_of_tied_maxima():
    x = np.zeros((1, 1, 4, 4))
    _assert_same(lambda t: F.adaptive_max_pool2d(t, 3), lambda t: TF.adaptive_max_pool2d(t, 3), [x])


# === max_unpool ==============================================================================

@pytest.mark.parametrize("d, shape, kernel, options", [
    (1, (2, 3, 8), 2, {}),
    (1, (2, 2, 9), 3, {"stride": 3, "padding": 1}),
    (2, (2, 2, 4, 6), 2, {}),
    (2, (1, 2, 7, 5), 3, {"stride": (3, 4), "padding": 1}),
    (2, (2, 5, 4), 2, {}),                                                          # unbatched
    (3, (1, 2, 4, 4, 2), 2, {}),
    (3, (2, 3, 5, 4), (2, 3, 2), {"stride": (2, 3, 2), "padding": (1, 1, 0)}),
])
def test_max_unpool_inverts_max_pool_as_pytorch(d, shape, kernel, options):
    pool, unpool = f"max_pool{d}d", f"max_unpool{d}d"
    x = _distinct(RNG, shape)

    def run(lib_f, t):
        out, where = getattr(lib_f, pool)(t, kernel, return_indices=True, **options)
        return getattr(lib_f, unpool)(out, where, kernel, output_size=tuple(shape[-d:]), **options)
    _assert_same(lambda t: run(F, t), lambda t: run(TF, t), [x])


def test_max_unpool_output_size_and_its_errors():
    x = np.arange(25.0).reshape(1, 1, 5, 5)          # maxima at flat indices 6, 8, 16, 18 of the 5x5 plane
    pooled, where = F.max_pool2d(vizgrad.tensor(x), 2, return_indices=True)
    small, small_where = F.max_pool2d(vizgrad.tensor(x[..., :4, :4]), 2, return_indices=True)
    assert tuple(F.max_unpool2d(small, small_where, 2).shape) == (1, 1, 4, 4)
    assert tuple(F.max_unpool2d(pooled, where, 2, output_size=(5, 5)).shape) == (1, 1, 5, 5)
    with pytest.raises(RuntimeError):           # the indices of a 5x5 plane do not fit the default 4x4, in both
        TF.max_unpool2d(torch.tensor(pooled.numpy()), torch.tensor(where.numpy()), 2)
    with pytest.raises(ArgumentError, match="max_unpool2d: found an invalid max index"):
        F.max_unpool2d(pooled, where, 2)
    assert tuple(nn.MaxUnpool2d(2)(pooled, where, output_size=(1, 1, 5, 5)).shape) == (1, 1, 5, 5)
    with pytest.raises(ArgumentError, match="max_unpool2d: invalid output_size"):
        F.max_unpool2d(pooled, where, 2, output_size=(7, 5))
    with pytest.raises(ArgumentError, match="max_unpool2d: found an invalid max index 99"):
        F.max_unpool2d(pooled, vizgrad.full(tuple(where.shape), 99, dtype=vizgrad.int64), 2)
    with pytest.raises(ShapeError, match="max_unpool2d: expected indices of the input's shape"):
        F.max_unpool2d(pooled, where[..., :1], 2)
    with pytest.raises(DTypeError, match="max_unpool2d: indices must be an int64 tensor"):
        F.max_unpool2d(pooled, where.float(), 2)


# === lp_pool, local_response_norm ==========================================================

@pytest.mark.parametrize("d, shape, p, kernel, options", [
    (1, (2, 3, 8), 2.0, 2, {}),
    (1, (2, 3, 9), 3.0, 3, {"stride": 2, "ceil_mode": True}),
    (2, (2, 2, 5, 6), 2.0, (2, 3), {"stride": 1}),
    (2, (2, 5, 7), 1.5, 2, {"ceil_mode": True}),                                     # unbatched
    (3, (1, 2, 4, 5, 4), 2.0, 2, {}),
])
def test_lp_pool_matches_pytorch(d, shape, p, kernel, options):
    name = f"lp_pool{d}d"
    x = RNG.uniform(0.5, 2.0, size=shape)
    _assert_same(lambda t, **kw: getattr(F, name)(t, p, kernel, **kw),
                 lambda t, **kw: getattr(TF, name)(t, p, kernel, **kw), [x], options)


@pytest.mark.parametrize("shape, size, options", [
    ((2, 5, 4), 3, {}), ((2, 6, 3, 4), 2, {"alpha": 0.1, "beta": 0.5, "k": 2.0}),
    ((1, 4, 2, 3, 2), 5, {"alpha": 0.2}), ((2, 3, 2, 2, 2, 2), 2, {}),
])
def test_local_response_norm_matches_pytorch(shape, size, options):
    _assert_same(lambda t, **kw: F.local_response_norm(t, size, **kw),
                 lambda t, **kw: TF.local_response_norm(t, size, **kw), [RNG.normal(size=shape)], options)
    layer_v, layer_t = nn.LocalResponseNorm(size, **options), torch.nn.LocalResponseNorm(size, **options)
    x = RNG.normal(size=shape)
    np.testing.assert_allclose(layer_v(vizgrad.tensor(x)).numpy(), layer_t(torch.tensor(x)).numpy(), atol=1e-12)


# === grid_sample, affine_grid ==============================================================

@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 4, 2)), ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3))])
def test_grid_sample_matches_pytorch_in_the_input_and_the_grid(mode, padding_mode, align_corners, shapes):
    x_shape, grid_shape = shapes
    x, grid = RNG.normal(size=x_shape), RNG.uniform(-1.7, 1.7, size=grid_shape)
    options = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    _assert_same(F.grid_sample, TF.grid_sample, [x, grid], options)


def test_grid_sample_and_affine_grid_warn_when_align_corners_is_not_given():
    x, grid = vizgrad.randn(1, 1, 3, 3), vizgrad.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(vizgrad.randn(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, grid, align_corners=True)


@pytest.mark.parametrize("theta_shape, size", [((2, 2, 3), (2, 3, 4, 5)), ((1, 2, 3), (1, 1, 1, 3)),
                                               ((2, 3, 4), (2, 1, 2, 3, 4))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_pytorch(theta_shape, size, align_corners):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_same(lambda t: F.affine_grid(t, size, align_corners=align_corners),
                     lambda t: TF.affine_grid(t, size, align_corners=align_corners), [RNG.normal(size=theta_shape)])


def test_a_spatial_transformer_trains_theta_as_pytorch():
    x = RNG.normal(size=(2, 1, 5, 6))
    theta = np.tile(np.array([[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]), (2, 1, 1))

    def program(f, t, th):
        return f.grid_sample(t, f.affine_grid(th, (2, 1, 4, 4), align_corners=False), align_corners=False)
    _assert_same(lambda t, th: program(F, t, th), lambda t, th: program(TF, t, th), [x, theta])


def test_grid_sample_gradgradcheck_in_the_grid():
    x = vizgrad.tensor(RNG.normal(size=(1, 2, 3, 4)), requires_grad=True)
    grid = vizgrad.tensor(RNG.uniform(-0.9, 0.9, size=(1, 2, 2, 2)) + 0.013, requires_grad=True)
    assert vizgrad.autograd.gradgradcheck(lambda a, g: F.grid_sample(a, g, align_corners=False), (x, grid))


# === embedding_bag =========================================================================

BAG_CASES = [
    (np.array([[0, 2, 4], [5, 1, 1]]), None, {}),
    (np.array([1, 2, 4, 5, 4, 3, 2]), np.array([0, 2, 2, 5]), {"mode": "sum"}),
    (np.array([1, 2, 4, 5, 4, 3, 2]), np.array([0, 2, 2, 5]), {"mode": "mean"}),
    (np.array([1, 2, 4, 5, 4, 3, 2]), np.array([0, 2, 2, 5]), {"mode": "max"}),
    (np.array([1, 2, 4, 5, 0, 3, 2]), np.array([0, 3, 6]), {"mode": "max", "include_last_offset": True}),
    (np.array([1, 2, 4, 5, 0, 3, 2]), np.array([0, 3, 7]), {"include_last_offset": True, "padding_idx": 2}),
    (np.array([[2, 2, 4], [5, 2, 1]]), None, {"mode": "max", "padding_idx": 2}),
    (np.array([[2, 2, 4], [5, 2, 1]]), None, {"mode": "sum", "padding_idx": -6}),
]


@pytest.mark.parametrize("indices, offsets, options", BAG_CASES)
def test_embedding_bag_matches_pytorch(indices, offsets, options):
    weight = _distinct(RNG, (8, 4))
    arrays = [indices, weight] + ([offsets] if offsets is not None else [])
    _assert_same(lambda i, w, *o, **kw: F.embedding_bag(i, w, *o, **kw),
                 lambda i, w, *o, **kw: TF.embedding_bag(i, w, *o, **kw), arrays, options)


def test_embedding_bag_per_sample_weights_get_pytorchs_gradient():
    weight, per_sample = RNG.normal(size=(8, 3)), RNG.normal(size=(7,))
    _assert_same(lambda w, p: F.embedding_bag(vizgrad.tensor([1, 2, 4, 5, 4, 3, 2]), w, vizgrad.tensor([0, 3]),
                                              mode="sum", per_sample_weights=p),
                 lambda w, p: TF.embedding_bag(torch.tensor([1, 2, 4, 5, 4, 3, 2]), w, torch.tensor([0, 3]),
                                               mode="sum", per_sample_weights=p), [weight, per_sample])


def test_embedding_bag_layer_matches_pytorch_and_its_repr():
    for options in ({}, {"mode": "sum", "padding_idx": 0}, {"mode": "max", "include_last_offset": True}):
        bag_t = torch.nn.EmbeddingBag(6, 3, dtype=torch.float64, **options)
        bag_v = nn.EmbeddingBag.from_pretrained(vizgrad.tensor(bag_t.weight.detach().numpy()), freeze=False,
                                                **options)
        indices, offsets = [1, 2, 4, 5, 0, 3], [0, 2, 6]
        out_v = bag_v(vizgrad.tensor(indices), vizgrad.tensor(offsets))
        out_t = bag_t(torch.tensor(indices), torch.tensor(offsets))
        np.testing.assert_allclose(out_v.detach().numpy(), out_t.detach().numpy(), atol=1e-12)
        assert repr(nn.EmbeddingBag(6, 3, **options)) == repr(torch.nn.EmbeddingBag(6, 3, **options))
        assert bag_v.weight.requires_grad
    weight = nn.EmbeddingBag(10, 4, padding_idx=3).weight
    assert not weight[3].any().item() and weight[4].abs().sum().item() > 0


def test_embedding_bag_errors_name_the_function():
    weight = vizgrad.randn(5, 2)
    with pytest.raises(ArgumentError, match="embedding_bag: if input is 2D, then offsets has to be None"):
        F.embedding_bag(vizgrad.tensor([[1, 2]]), weight, vizgrad.tensor([0]))
    with pytest.raises(ArgumentError, match=r"embedding_bag: offsets\[0\] has to be 0"):
        F.embedding_bag(vizgrad.tensor([1, 2]), weight, vizgrad.tensor([1]))
    with pytest.raises(ShapeError, match="embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                                         "dimension 3"):
        F.embedding_bag(vizgrad.zeros(1, 1, 1, dtype=vizgrad.int64), weight)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(vizgrad.tensor([[1, 2]]), weight, per_sample_weights=vizgrad.ones(1, 2))
    with pytest.raises(VizgradError, match=r"embedding_bag: index out of range"):
        F.embedding_bag(vizgrad.tensor([[1, 7]]), weight)
    with pytest.raises(ArgumentError, match="embedding_bag: mode has to be one of sum, mean or max"):
        F.embedding_bag(vizgrad.tensor([[1, 2]]), weight, mode="median")


# === pdist ====================================================================================

@pytest.mark.parametrize("shape", [(5, 3), (2, 4), (1, 3), (6, 1)])
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf")])
def test_pdist_matches_pytorch(shape, p):
    _assert_same(lambda t: F.pdist(t, p), lambda t: TF.pdist(t, p), [RNG.normal(size=shape)])


def test_pdist_gradient_is_zero_where_rows_coincide_and_its_errors():
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
    _assert_same(F.pdist, TF.pdist, [x])
    with pytest.raises(ShapeError, match="pdist: only supports 2D tensors, got: 3D"):
        F.pdist(vizgrad.zeros(2, 2, 2))
    with pytest.raises(ArgumentError, match="pdist: only supports non-negative p values"):
        F.pdist(vizgrad.zeros(2, 2), -1)


# === ctc_loss ===============================================================================

def _ctc_inputs(steps=10, batch=3, classes=5, seed=3):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(steps, batch, classes))
    return logits, rng.integers(1, classes, (batch, 4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_and_its_gradient_match_pytorch(reduction, zero_infinity):
    logits, targets = _ctc_inputs()
    options = {"reduction": reduction, "zero_infinity": zero_infinity}
    _assert_same(lambda x, **kw: F.ctc_loss(F.log_softmax(x, 2), vizgrad.tensor(targets), [10, 8, 6], [4, 2, 3], **kw),
                 lambda x, **kw: TF.ctc_loss(TF.log_softmax(x, 2), torch.tensor(targets), [10, 8, 6], [4, 2, 3], **kw),
                 [logits], options)


def test_ctc_loss_gradient_in_log_probs_is_pytorchs_own():
    """PyTorch's gradient assumes log_probs are normalized: given raw values, it is not the
    derivative of the loss, and vizgrad gives the same numbers."""
    logits, targets = _ctc_inputs(seed=5)
    raw = logits * 0.3 - 1.0
    _assert_same(lambda x: F.ctc_loss(x, vizgrad.tensor(targets), (10, 10, 9), (4, 4, 1)),
                 lambda x: TF.ctc_loss(x, torch.tensor(targets), (10, 10, 9), (4, 4, 1)), [raw])


def test_ctc_loss_concatenated_targets_blank_and_unbatched():
    logits, targets = _ctc_inputs(seed=9)
    concatenated = np.concatenate([targets[0, :3], targets[1, :1], targets[2, :4]])
    for blank in (0, 4):
        labels = np.where(concatenated == blank, 1 if blank else 2, concatenated)
        _assert_same(lambda x: F.ctc_loss(F.log_softmax(x, 2), vizgrad.tensor(labels), vizgrad.tensor([9, 10, 10]),
                                          vizgrad.tensor([3, 1, 4]), blank=blank, reduction="sum"),
                     lambda x: TF.ctc_loss(TF.log_softmax(x, 2), torch.tensor(labels), torch.tensor([9, 10, 10]),
                                           torch.tensor([3, 1, 4]), blank=blank, reduction="sum"), [logits])
    _assert_same(lambda x: F.ctc_loss(F.log_softmax(x, 1), vizgrad.tensor(targets[0]), [10], [4], reduction="none"),
                 lambda x: TF.ctc_loss(TF.log_softmax(x, 1), torch.tensor(targets[0]), [10], [4], reduction="none"),
                 [logits[:, 0]])


def test_ctc_loss_impossible_alignments():
    logits = np.random.default_rng(0).normal(size=(3, 1, 4))
    targets = np.array([[1, 1, 1, 1]])         # needs 7 steps
    for zero_infinity in (False, True):
        x_v = vizgrad.tensor(logits, requires_grad=True)
        loss_v = F.ctc_loss(x_v, vizgrad.tensor(targets), [3], [4], zero_infinity=zero_infinity, reduction="sum")
        loss_v.backward()
        x_t = torch.tensor(logits, requires_grad=True)
        loss_t = TF.ctc_loss(x_t, torch.tensor(targets), [3], [4], zero_infinity=zero_infinity, reduction="sum")
        loss_t.backward()
        assert loss_v.item() == loss_t.item()
        np.testing.assert_array_equal(np.isnan(x_v.grad.numpy()), np.isnan(x_t.grad.numpy()))
        np.testing.assert_allclose(np.nan_to_num(x_v.grad.numpy()), np.nan_to_num(x_t.grad.numpy()))


def test_ctc_loss_layer_and_errors():
    logits, targets = _ctc_inputs()
    log_probs = F.log_softmax(vizgrad.tensor(logits), 2)
    loss_t = torch.nn.CTCLoss(blank=0, reduction="sum")(TF.log_softmax(torch.tensor(logits), 2), torch.tensor(targets),
                                                        [10, 9, 8], [4, 3, 2])
    loss_v = nn.CTCLoss(blank=0, reduction="sum")(log_probs, vizgrad.tensor(targets), [10, 9, 8], [4, 3, 2])
    assert abs(loss_v.item() - loss_t.item()) < 1e-10
    assert repr(nn.CTCLoss(blank=2, zero_infinity=True)) == "CTCLoss()"
    with pytest.raises(ArgumentError, match="ctc_loss: Expected input_lengths to have value at most 10"):
        F.ctc_loss(log_probs, vizgrad.tensor(targets), [11, 9, 8], [4, 3, 2])
    with pytest.raises(ArgumentError, match=r"ctc_loss: blank must be in label range \[0, 5\)"):
        F.ctc_loss(log_probs, vizgrad.tensor(targets), [10, 9, 8], [4, 3, 2], blank=5)
    with pytest.raises(ShapeError, match="ctc_loss: targets of shape"):
        F.ctc_loss(log_probs, vizgrad.tensor(targets), [10, 9, 8], [5, 3, 2])
    with pytest.raises(DTypeError, match="ctc_loss: targets must be integers"):
        F.ctc_loss(log_probs, vizgrad.tensor(targets).double(), [10, 9, 8], [4, 3, 2])


# === reprs of the new layers ==============================================================

REPRS = [
    "MaxPool3d(2)", "MaxPool3d((2, 1, 2), stride=1, padding=1, dilation=2, return_indices=True, ceil_mode=True)",
    "AvgPool3d(2)", "AvgPool3d((2, 1, 2), stride=1, padding=1, ceil_mode=True, count_include_pad=False)",
    "AdaptiveAvgPool3d((2, None, 3))", "AdaptiveMaxPool1d(3)", "AdaptiveMaxPool2d((2, 3), True)",
    "AdaptiveMaxPool3d(2)", "MaxUnpool1d(2)", "MaxUnpool2d(3, 2, 1)", "MaxUnpool3d((2, 2, 1))", "LPPool1d(2, 3)",
    "LPPool2d(1.5, (2, 3), stride=1, ceil_mode=True)", "LPPool3d(2, 2)", "LocalResponseNorm(3)",
    "LocalResponseNorm(2, 1e-3, 0.5, 2.0)", "Conv3d(2, 4, 3)",
    "Conv3d(2, 4, (1, 2, 3), stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode='circular')",
    "ConvTranspose3d(2, 4, 3, stride=2, output_padding=1)", "ConvTranspose3d(4, 2, 2, groups=2, bias=False, dilation=2)",
    "EmbeddingBag(10, 3)", "EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, mode='sum', padding_idx=2)",
    "CTCLoss()", "LazyConv1d(3, 2)", "LazyConv3d(3, 2, stride=2)", "LazyConvTranspose1d(3, 2)",
    "LazyConvTranspose2d(3, 2, output_padding=0, dilation=2)", "LazyConvTranspose3d(3, 2, groups=3)",
    "LazyBatchNorm1d()", "LazyBatchNorm2d(momentum=None)", "LazyBatchNorm3d(affine=False)", "LazyInstanceNorm1d()",
    "LazyInstanceNorm2d(track_running_stats=False)", "LazyInstanceNorm3d(affine=False, eps=1e-3)",
]


@pytest.mark.parametrize("spec", REPRS)
def test_new_layers_print_as_pytorchs(spec):
    assert repr(eval("nn." + spec)) == repr(eval("torch.nn." + spec))


# === lazy layers ===========================================================================

@pytest.mark.parametrize("spec, shape", [
    ("LazyConv1d(4, 3)", (2, 3, 7)), ("LazyConv1d(4, 3, groups=2)", (2, 6, 7)), ("LazyConv3d(2, 2)", (1, 3, 3, 4, 3)),
    ("LazyConvTranspose1d(2, 3, stride=2)", (2, 4, 5)), ("LazyConvTranspose2d(2, 3, groups=2)", (1, 4, 3, 3)),
    ("LazyConvTranspose3d(2, 2)", (1, 3, 2, 2, 2)), ("LazyConv2d(3, 2)", (3, 4, 4)),
])
def test_lazy_convolutions_infer_in_channels_and_become_plain_layers(spec, shape):
    layer_v, layer_t = eval("nn." + spec), eval("torch.nn." + spec)
    assert layer_v.has_uninitialized_params()
    x = np.random.default_rng(1).normal(size=shape)
    out_v, out_t = layer_v(vizgrad.tensor(x)), layer_t(torch.tensor(x, dtype=torch.float32))
    assert type(layer_v).__name__ == type(layer_t).__name__
    assert repr(layer_v) == repr(layer_t)
    assert tuple(out_v.shape) == tuple(out_t.shape)
    assert tuple(layer_v.weight.shape) == tuple(layer_t.weight.shape)
    assert layer_v.weight.dtype == vizgrad.float64       # from the input, as PyTorch
    layer_v.weight.data = vizgrad.tensor(layer_t.weight.detach().double().numpy())
    layer_v.bias.data = vizgrad.tensor(layer_t.bias.detach().double().numpy())
    np.testing.assert_allclose(layer_v(vizgrad.tensor(x)).detach().numpy(),
                               layer_t.double()(torch.tensor(x)).detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("spec, shape", [
    ("LazyBatchNorm1d()", (4, 3)), ("LazyBatchNorm1d(affine=False)", (4, 3, 5)), ("LazyBatchNorm2d()", (3, 2, 4, 4)),
    ("LazyBatchNorm3d(track_running_stats=False)", (2, 3, 2, 3, 2)), ("LazyInstanceNorm1d()", (2, 3, 6)),
    ("LazyInstanceNorm2d(affine=False)", (2, 3, 4, 4)),
    ("LazyInstanceNorm3d()", (2, 3, 2, 3, 2)),
])
def test_lazy_normalizations_infer_num_features_and_train_as_pytorch(spec, shape):
    layer_v, layer_t = eval("nn." + spec), eval("torch.nn." + spec)
    x = np.random.default_rng(2).normal(size=shape)
    out_v, out_t = layer_v(vizgrad.tensor(x)), layer_t.double()(torch.tensor(x))
    assert type(layer_v).__name__ == type(layer_t).__name__
    assert repr(layer_v) == repr(layer_t)
    np.testing.assert_allclose(out_v.detach().numpy(), out_t.detach().numpy(), atol=1e-10)
    for name, buffer in layer_t.named_buffers():
        np.testing.assert_allclose(getattr(layer_v, name).numpy(), buffer.numpy(), atol=1e-12)
    assert sorted(dict(layer_v.named_parameters())) == sorted(dict(layer_t.named_parameters()))


def test_a_lazy_instance_norm_takes_the_channels_of_an_unbatched_input_from_dim_0():
    """(PyTorch 2.x reads dim 1 there and then refuses its own input; a batch of one agrees.)"""
    x = np.random.default_rng(4).normal(size=(3, 4, 4))
    layer = nn.LazyInstanceNorm2d()
    out = layer(vizgrad.tensor(x))
    assert layer.num_features == 3 and tuple(layer.weight.shape) == (3,)
    expected = torch.nn.LazyInstanceNorm2d().double()(torch.tensor(x[None]))[0]
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-10)


def test_lazy_layers_refuse_use_before_the_first_forward_and_check_groups():
    conv = nn.LazyConvTranspose2d(4, 3, groups=2)
    with pytest.raises(VizgradError, match="lazy module"):
        conv.weight.shape
    with pytest.raises(ArgumentError, match="LazyConvTranspose2d: in_channels \\(3\\) must be divisible by groups"):
        conv(vizgrad.randn(1, 3, 4, 4))
    norm = nn.LazyBatchNorm2d()
    with pytest.raises(VizgradError, match="lazy module"):
        norm.weight.shape


def test_an_optimizer_made_before_the_first_forward_trains_a_lazy_conv3d():
    model = nn.Sequential(nn.LazyConv3d(2, 2), nn.LazyBatchNorm3d(), nn.ReLU())
    optimizer = vizgrad.optim.SGD(model.parameters(), lr=0.1)
    x = vizgrad.randn(2, 3, 3, 3, 3)
    model(x).sum().backward()
    before = model[0].weight.detach().clone()
    optimizer.step()
    assert not vizgrad.equal(before, model[0].weight.detach())
    assert type(model[0]) is nn.Conv3d and type(model[1]) is nn.BatchNorm3d


# === errors in the called function's words ==================================================

def test_errors_name_the_function_and_the_argument():
    with pytest.raises(ShapeError, match=r"conv3d: expected a 4-D \(unbatched\) or 5-D \(batched\) input"):
        F.conv3d(vizgrad.randn(1, 2, 3), vizgrad.randn(1, 2, 1, 1, 1))
    with pytest.raises(ShapeError, match="conv_transpose3d: expected a 5-D weight"):
        F.conv_transpose3d(vizgrad.randn(1, 2, 3, 3, 3), vizgrad.randn(2, 1, 1, 1))
    with pytest.raises(ArgumentError, match="max_pool3d: padding .* must be at most half of kernel_size"):
        F.max_pool3d(vizgrad.randn(1, 1, 4, 4, 4), 2, padding=2)
    with pytest.raises(ShapeError, match="avg_pool3d: the kernel"):
        F.avg_pool3d(vizgrad.randn(1, 1, 2, 4, 4), 3)
    with pytest.raises(ArgumentError, match="adaptive_max_pool2d: output_size must be"):
        F.adaptive_max_pool2d(vizgrad.randn(1, 1, 4, 4), (1, 2, 3))
    with pytest.raises(ArgumentError, match="adaptive_max_pool3d: output_size must be positive"):
        F.adaptive_max_pool3d(vizgrad.randn(1, 1, 4, 4, 4), 0)
    with pytest.raises(ShapeError, match=r"local_response_norm: expected 3D or higher dimensionality input \(got 2"):
        F.local_response_norm(vizgrad.randn(2, 3), 2)
    with pytest.raises(ArgumentError, match="lp_pool2d: norm_type must be a non-zero number"):
        F.lp_pool2d(vizgrad.rand(1, 1, 4, 4), 0, 2)
    with pytest.raises(ArgumentError, match="grid_sample: expected padding_mode to be 'zeros', 'border', or "
                                            "'reflection', but got: 'wrap'"):
        F.grid_sample(vizgrad.randn(1, 1, 3, 3), vizgrad.zeros(1, 1, 1, 2), padding_mode="wrap", align_corners=False)
    with pytest.raises(ShapeError, match=r"grid_sample: grid of shape \(1, 1, 1, 3\)"):
        F.grid_sample(vizgrad.randn(1, 1, 3, 3), vizgrad.zeros(1, 1, 1, 3), align_corners=False)
    with pytest.raises(ShapeError, match="affine_grid: expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(vizgrad.randn(1, 3, 3), (1, 1, 4, 4), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid: only supports 4D and 5D sizes"):
        F.affine_grid(vizgrad.randn(1, 2, 3), (1, 1, 4), align_corners=False)
    for torch_call in (lambda: TF.max_pool3d(torch.randn(1, 1, 4, 4, 4), 2, padding=2),
                       lambda: TF.local_response_norm(torch.randn(2, 3), 2),
                       lambda: TF.pdist(torch.zeros(2, 2, 2))):
        with pytest.raises((RuntimeError, ValueError)):       # what PyTorch refuses too
            torch_call()
