"""``vizgrad.nn.init`` (the distributions against their formulas, PyTorch's default layer
init) and ``vizgrad.nn.utils`` (gradient clipping, flat parameter vectors).

Statistical checks draw tens of thousands of numbers and allow about five standard
errors, so they fail only when a formula is wrong, not by chance.
"""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.errors import ShapeError, VizgradError
from vizgrad.nn import init, utils


def arr(tensor):
    return tensor.detach().numpy().astype(np.float64)


def check_uniform(values, low, high):
    """Values lie in [low, high], reach close to both ends, and have U(low, high)'s mean and std."""
    values = np.ravel(values)
    width = high - low
    slack = 1e-6 * width                                  # the bounds rounded to float32
    assert values.min() >= low - slack and values.max() <= high + slack
    assert values.min() < low + 0.01 * width and values.max() > high - 0.01 * width
    std = width / math.sqrt(12)
    assert abs(values.mean() - (low + high) / 2) < 5 * std / math.sqrt(values.size)
    assert abs(values.std() / std - 1) < 0.03


def check_normal(values, mean, std):
    values = np.ravel(values)
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(values.size)
    assert abs(values.std() / std - 1) < 0.03
    kurtosis = np.mean(((values - values.mean()) / values.std()) ** 4)
    assert abs(kurtosis - 3) < 0.3                       # a normal's tails, not a uniform's (1.8)


# === calculate_gain ========================================================================
@pytest.mark.parametrize("nonlinearity, param, gain", [
    ("linear", None, 1.0), ("conv1d", None, 1.0), ("conv2d", None, 1.0), ("conv_transpose2d", None, 1.0),
    ("sigmoid", None, 1.0), ("tanh", None, 5 / 3), ("relu", None, math.sqrt(2)), ("selu", None, 0.75),
    ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))), ("leaky_relu", 0.2, math.sqrt(2 / 1.04)),
    ("leaky_relu", math.sqrt(5), math.sqrt(1 / 3)),
])
def test_calculate_gain(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain)


def test_calculate_gain_rejects_unknown_names_and_bad_slopes():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "0.1")


# === the plain distributions ===============================================================
def test_uniform_and_normal():
    w = vg.empty(200, 250)
    assert init.uniform_(w, -0.3, 0.7) is w
    check_uniform(arr(w), -0.3, 0.7)
    check_uniform(arr(init.uniform_(vg.empty(50_000))), 0.0, 1.0)
    init.normal_(w, mean=2.0, std=0.5)
    check_normal(arr(w), 2.0, 0.5)


def test_trunc_normal_stays_in_its_bounds():
    w = init.trunc_normal_(vg.empty(300, 200), mean=0.0, std=1.0, a=-1.0, b=2.0)
    values = arr(w)
    assert values.min() >= -1.0 and values.max() <= 2.0
    assert values.min() < -0.99 and values.max() > 1.99
    # the mean of N(0, 1) truncated to [a, b] is (φ(a) - φ(b)) / (Φ(b) - Φ(a))
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)         # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2                  # noqa: E731
    expected = (pdf(-1.0) - pdf(2.0)) / (cdf(2.0) - cdf(-1.0))
    assert abs(values.mean() - expected) < 0.02
    narrow = arr(init.trunc_normal_(vg.empty(10_000), std=0.02))          # the absolute bounds [-2, 2]
    check_normal(narrow, 0.0, 0.02)
    with pytest.raises(ValueError, match="must be below"):
        init.trunc_normal_(vg.empty(3), a=1.0, b=0.0)


def test_constant_ones_zeros_eye():
    w = vg.empty(3, 4)
    np.testing.assert_array_equal(arr(init.constant_(w, 0.25)), np.full((3, 4), 0.25))
    np.testing.assert_array_equal(arr(init.ones_(w)), np.ones((3, 4)))
    np.testing.assert_array_equal(arr(init.zeros_(w)), np.zeros((3, 4)))
    np.testing.assert_array_equal(arr(init.eye_(w)), np.eye(3, 4))
    with pytest.raises(ShapeError, match="2-D"):
        init.eye_(vg.empty(2, 2, 2))


def test_init_keeps_dtype_and_identity_and_records_no_gradient():
    param = nn.Parameter(vg.zeros(30, 40, dtype=vg.float64))
    version = param._version
    result = init.kaiming_uniform_(param)
    assert result is param and param.is_leaf and param.grad_fn is None and param.requires_grad
    assert param.dtype is vg.float64 and param._version > version
    assert np.any(arr(param))


def test_manual_seed_makes_init_reproducible():
    vg.manual_seed(7)
    first = arr(init.xavier_normal_(vg.empty(10, 10)))
    vg.manual_seed(7)
    np.testing.assert_array_equal(arr(init.xavier_normal_(vg.empty(10, 10))), first)
    generator = vg.Generator(3)
    one = arr(init.uniform_(vg.empty(5), generator=generator))
    assert np.array_equal(one, arr(init.uniform_(vg.empty(5), generator=vg.Generator(3))))


# === fan-based initializations ===============================================================
# (shape, fan_in, fan_out): for (out, in, *kernel), fan_in = in·prod(kernel), fan_out = out·prod(kernel)
FANS = [((300, 200), 200, 300), ((64, 16, 5, 5), 400, 1600), ((40, 30, 7), 210, 280)]


@pytest.mark.parametrize("shape, fan_in, fan_out", FANS)
def test_xavier(shape, fan_in, fan_out):
    gain = init.calculate_gain("tanh")
    check_uniform(arr(init.xavier_uniform_(vg.empty(*shape), gain=gain)),
                  -gain * math.sqrt(6 / (fan_in + fan_out)), gain * math.sqrt(6 / (fan_in + fan_out)))
    check_normal(arr(init.xavier_normal_(vg.empty(*shape))), 0.0, math.sqrt(2 / (fan_in + fan_out)))


@pytest.mark.parametrize("shape, fan_in, fan_out", FANS)
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming(shape, fan_in, fan_out, mode):
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(2) * math.sqrt(3 / fan)                           # gain √2 for ReLU
    check_uniform(arr(init.kaiming_uniform_(vg.empty(*shape), mode=mode, nonlinearity="relu")), -bound, bound)
    std = math.sqrt(2 / (1 + 0.2 ** 2)) / math.sqrt(fan)                # leaky ReLU with slope 0.2
    check_normal(arr(init.kaiming_normal_(vg.empty(*shape), a=0.2, mode=mode)), 0.0, std)


def test_fans_need_two_dims_and_a_known_mode():
    with pytest.raises(ShapeError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(vg.empty(5))
    with pytest.raises(ValueError, match="fan_in, fan_out"):
        init.kaiming_uniform_(vg.empty(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(vg.empty(0, 3))


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (8, 3), (4, 2, 3, 3)])
def test_orthogonal(shape):
    w = arr(init.orthogonal_(vg.empty(*shape, dtype=vg.float64), gain=2.0)).reshape(shape[0], -1)
    rows, cols = w.shape
    if rows <= cols:
        np.testing.assert_allclose(w @ w.T, 4 * np.eye(rows), atol=1e-12)     # W Wᵀ = gain² I
    if rows >= cols:
        np.testing.assert_allclose(w.T @ w, 4 * np.eye(cols), atol=1e-12)
    with pytest.raises(ShapeError, match="2 or more dimensions"):
        init.orthogonal_(vg.empty(4))


def test_orthogonal_is_not_biased_to_one_orientation():
    # the sign fix makes Q Haar-distributed: over many draws each entry averages to 0
    draws = np.stack([arr(init.orthogonal_(vg.empty(3, 3, dtype=vg.float64))) for _ in range(400)])
    assert np.abs(draws.mean(axis=0)).max() < 0.15
    np.testing.assert_allclose((draws ** 2).mean(axis=0), 1 / 3, atol=0.07)


def test_sparse():
    w = arr(init.sparse_(vg.empty(50, 40), sparsity=0.3, std=0.5))
    assert np.all((w == 0).sum(axis=0) == math.ceil(0.3 * 50))
    assert abs(w[w != 0].std() - 0.5) < 0.05


# === PyTorch's default layer init ============================================================
def test_linear_default_init_is_uniform_one_over_sqrt_fan_in():
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)              # kaiming_uniform_(a=√5): gain √(2/6), times √3, over √fan_in
    check_uniform(arr(layer.weight), -bound, bound)
    bias = arr(layer.bias)
    assert np.abs(bias).max() <= bound * (1 + 1e-6) and np.abs(bias).max() > 0.8 * bound


def test_conv_default_init_uses_in_channels_per_group_times_the_kernel():
    for conv, fan_in in [(nn.Conv2d(16, 256, 3), 16 * 9), (nn.Conv2d(32, 256, 5, groups=4), 8 * 25),
                         (nn.Conv1d(8, 512, 7), 56)]:
        bound = 1 / math.sqrt(fan_in)
        check_uniform(arr(conv.weight), -bound, bound)
        assert np.abs(arr(conv.bias)).max() <= bound * (1 + 1e-6) and np.abs(arr(conv.bias)).max() > 0.8 * bound
    # transposed weights are (in, out/groups, *kernel): PyTorch computes fan_in from dim 1
    up = nn.ConvTranspose2d(256, 16, 3)
    check_uniform(arr(up.weight), -1 / math.sqrt(16 * 9), 1 / math.sqrt(16 * 9))


def test_other_layer_defaults():
    bilinear = nn.Bilinear(25, 30, 40)
    check_uniform(arr(bilinear.weight), -0.2, 0.2)
    check_normal(arr(nn.Embedding(500, 64).weight), 0.0, 1.0)
    for layer in (nn.LayerNorm(8), nn.BatchNorm1d(8), nn.GroupNorm(2, 8)):
        np.testing.assert_array_equal(arr(layer.weight), 1.0)
        np.testing.assert_array_equal(arr(layer.bias), 0.0)


def test_reset_parameters_draws_again_in_place():
    layer = nn.Linear(10, 10)
    weight, before = layer.weight, arr(layer.weight).copy()
    layer.reset_parameters()
    assert layer.weight is weight and not np.array_equal(arr(layer.weight), before)
    assert np.abs(arr(layer.weight)).max() <= 1 / math.sqrt(10) * (1 + 1e-6)


# === clip_grad_norm_ ===========================================================================
def with_grads(*grads):
    """Parameters whose gradients are ``grads`` (None: no gradient)."""
    params = []
    for grad in grads:
        shape = (1,) if grad is None else np.shape(grad)
        p = nn.Parameter(vg.zeros(*shape, dtype=vg.float64))
        if grad is not None:
            p.grad = vg.tensor(np.asarray(grad, dtype=np.float64))
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type, total", [(2.0, 13.0), (2, 13.0), (1.0, 19.0), (float("inf"), 12.0),
                                               ("inf", 12.0), (3.0, (27 + 64 + 1728) ** (1 / 3))])
def test_clip_grad_norm_returns_the_total_norm_and_scales_to_max_norm(norm_type, total):
    params = with_grads([3.0, -4.0], [[12.0]], None)
    returned = utils.clip_grad_norm_(params, max_norm=2.0, norm_type=norm_type)
    assert returned.ndim == 0 and returned.item() == pytest.approx(total)
    factor = 2.0 / (total + 1e-6)
    np.testing.assert_allclose(arr(params[0].grad), np.array([3.0, -4.0]) * factor)
    np.testing.assert_allclose(arr(params[1].grad), [[12.0 * factor]])
    assert params[2].grad is None
    flat = np.concatenate([arr(p.grad).ravel() for p in params[:2]])
    order = float("inf") if norm_type == "inf" else float(norm_type)
    assert np.linalg.norm(flat, ord=order) == pytest.approx(2.0, rel=1e-5)


def test_clip_grad_norm_leaves_small_gradients_alone_and_takes_any_iterable():
    model = nn.Linear(3, 2)
    model(vg.randn(4, 3)).sum().backward()
    before = [arr(p.grad).copy() for p in model.parameters()]
    total = np.sqrt(sum((b ** 2).sum() for b in before))
    returned = utils.clip_grad_norm_(model.parameters(), max_norm=total * 10)    # a generator
    assert returned.item() == pytest.approx(total, rel=1e-5)
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(arr(p.grad), b)
    single = with_grads([6.0, 8.0])[0]
    assert utils.clip_grad_norm_(single, 1.0).item() == pytest.approx(10.0)      # one tensor
    np.testing.assert_allclose(arr(single.grad), [0.6, 0.8], rtol=1e-6)
    assert utils.clip_grad_norm_(with_grads(None), 1.0).item() == 0.0


def test_clip_grad_norm_error_if_nonfinite():
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(with_grads([1.0, float("nan")]), 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(with_grads([1.0], [float("inf")]), 1.0, error_if_nonfinite=True)
    params = with_grads([1.0, float("inf")])
    with np.errstate(invalid="ignore"):                                  # inf · 0 while scaling, as PyTorch
        assert math.isinf(utils.clip_grad_norm_(params, 1.0).item())    # without the flag: no error


def test_clip_grad_value_clamps_each_entry():
    params = with_grads([0.5, -3.0, 2.0], [[-0.1, 7.0]])
    assert utils.clip_grad_value_(params, 1) is None
    np.testing.assert_array_equal(arr(params[0].grad), [0.5, -1.0, 1.0])
    np.testing.assert_array_equal(arr(params[1].grad), [[-0.1, 1.0]])


def test_get_total_norm():
    tensors = [vg.tensor([3.0]), vg.tensor([[4.0]])]
    assert utils.get_total_norm(tensors).item() == pytest.approx(5.0)
    assert utils.get_total_norm(tensors, norm_type=1).item() == pytest.approx(7.0)


# === parameters_to_vector / vector_to_parameters ===============================================
def test_parameters_to_vector_and_back_round_trip():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    params = list(model.parameters())
    vector = utils.parameters_to_vector(params)
    assert vector.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    np.testing.assert_array_equal(arr(vector), np.concatenate([arr(p).ravel() for p in params]))

    replacement = vg.arange(vector.shape[0], dtype=vg.float32)
    versions = [p._version for p in params]
    utils.vector_to_parameters(replacement, model.parameters())
    assert list(model.parameters()) == params and all(a is b for a, b in zip(model.parameters(), params))
    np.testing.assert_array_equal(arr(model[0].weight), np.arange(12).reshape(4, 3))
    np.testing.assert_array_equal(arr(model[2].bias), [24.0, 25.0])
    assert all(p._version > v for p, v in zip(params, versions))
    assert all(p.is_leaf and p.requires_grad for p in params)
    np.testing.assert_array_equal(arr(utils.parameters_to_vector(model.parameters())), arr(replacement))


def test_parameters_to_vector_is_differentiable():
    a, b = nn.Parameter(vg.ones(2, 2)), nn.Parameter(vg.ones(3))
    weights = vg.arange(7, dtype=vg.float32)
    (utils.parameters_to_vector([a, b]) * weights).sum().backward()
    np.testing.assert_array_equal(arr(a.grad), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(arr(b.grad), [4, 5, 6])


def test_vector_to_parameters_checks_its_arguments():
    params = [nn.Parameter(vg.zeros(2, 2))]
    with pytest.raises(ShapeError, match="does not hold the 4 values"):
        utils.vector_to_parameters(vg.zeros(5), params)
    with pytest.raises(TypeError, match="expected vec to be a Tensor"):
        utils.vector_to_parameters(np.zeros(4), params)
    with pytest.raises(ValueError, match="no parameters"):
        utils.parameters_to_vector([])


def test_utils_on_lazy_parameters_say_to_run_the_module():
    with pytest.raises(VizgradError, match="lazy module"):
        utils.parameters_to_vector(nn.LazyLinear(3).parameters())


# === optional cross-check against PyTorch ======================================================
def test_clip_grad_norm_matches_pytorch():
    torch = pytest.importorskip("torch", reason="optional cross-check against PyTorch")
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((4, 5)) * 3, rng.standard_normal(7)]
    for norm_type in (2.0, 1.0, float("inf"), 1.5):
        ours = with_grads(*grads)
        theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        for t, g in zip(theirs, grads):
            t.grad = torch.tensor(g)
        total = utils.clip_grad_norm_(ours, 1.0, norm_type=norm_type).item()
        expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type=norm_type).item()
        assert total == pytest.approx(expected)
        for p, t in zip(ours, theirs):
            np.testing.assert_allclose(arr(p.grad), t.grad.numpy(), rtol=1e-12)
