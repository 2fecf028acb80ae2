"""rrelu, alpha_dropout, feature_alpha_dropout, gumbel_softmax (vizgrad/ops/random_activations.py),
their modules, trilinear and 5-D interpolation, and the deprecated upsample names: PyTorch's
values where they are deterministic, their laws where they are random."""

import math

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.errors import UnsupportedError

torch = pytest.importorskip("torch")


def test_rrelu_in_evaluation_is_the_leaky_relu_of_the_mean_slope_as_in_pytorch():
    x = np.array([-2.0, -1.0, 0.0, 0.5, 3.0])
    ours = F.rrelu(vg.tensor(x), 0.1, 0.3)
    np.testing.assert_allclose(ours.numpy(), torch.nn.functional.rrelu(torch.tensor(x), 0.1, 0.3).numpy())
    np.testing.assert_allclose(vg.nn.RReLU(0.1, 0.3).eval()(vg.tensor(x)).numpy(), ours.numpy())


def test_rrelu_in_training_draws_a_slope_per_negative_element_and_differentiates_to_it():
    vg.manual_seed(0)
    x = vg.tensor(-np.linspace(1.0, 2.0, 1000), requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (out / x).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.04     # drawn, not one value
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    positive = vg.tensor([0.5, 2.0], requires_grad=True)
    F.rrelu(positive, training=True).sum().backward()
    np.testing.assert_array_equal(positive.grad.numpy(), [1.0, 1.0])


def test_rrelu_refuses_what_pytorch_refuses():
    with pytest.raises(vg.ArgumentError, match="lower"):
        F.rrelu(vg.ones(3), 0.5, 0.1, training=True)
    with pytest.raises(vg.DTypeNotImplementedError, match="rrelu.*int64"):
        F.rrelu(vg.tensor([1, 2]))


def test_rrelu_in_place_writes_its_input():
    x = vg.tensor([-2.0, 1.0])
    assert F.rrelu_(x) is x
    np.testing.assert_allclose(x.numpy(), [-2.0 * (1 / 8 + 1 / 3) / 2, 1.0])


def test_alpha_dropout_keeps_a_unit_gaussians_mean_and_variance():
    vg.manual_seed(0)
    x = vg.randn(400_000, dtype=vg.float64)
    out = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1.0) < 0.01


def test_alpha_dropout_maps_kept_and_dropped_units_by_pytorchs_affine_map():
    p, saturation = 0.4, 1.7580993408473766
    a = 1 / math.sqrt((saturation ** 2 * p + 1) * (1 - p))
    vg.manual_seed(1)
    x = vg.tensor(np.linspace(-1.0, 1.0, 50), requires_grad=True)
    out = F.alpha_dropout(x, p, training=True)
    kept = np.isclose(out.detach().numpy(), a * x.detach().numpy() + saturation * a * p)
    dropped = np.isclose(out.detach().numpy(), saturation * a * (p - 1))
    assert (kept | dropped).all() and kept.any() and dropped.any()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0))


def test_alpha_dropout_is_the_identity_in_evaluation_and_zero_at_p_one():
    x = vg.randn(5)
    assert F.alpha_dropout(x, 0.5) is x and vg.nn.AlphaDropout(0.5).eval()(x) is x
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, training=True).numpy(), np.zeros(5))
    with pytest.raises(vg.ArgumentError, match="between 0 and 1"):
        F.alpha_dropout(x, 1.5, training=True)


def test_feature_alpha_dropout_drops_whole_channels():
    vg.manual_seed(0)
    out = F.feature_alpha_dropout(vg.ones(4, 6, 3, 3), 0.5, training=True).numpy()
    per_channel = out.reshape(4, 6, 9)
    assert (per_channel == per_channel[..., :1]).all() and len(np.unique(per_channel[..., 0])) == 2
    with pytest.raises(vg.ShapeError, match="at least 2 dims"):
        F.feature_alpha_dropout(vg.ones(3), 0.5, training=True)
    assert vg.nn.FeatureAlphaDropout(0.3)(vg.ones(2, 3)).shape == (2, 3)


def test_gumbel_softmax_samples_the_categorical_and_hard_samples_are_one_hot():
    vg.manual_seed(0)
    probabilities = np.array([0.7, 0.2, 0.1])
    logits = vg.tensor(np.log(probabilities)).expand(20_000, 3)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(axis=1) == 1).all()
    np.testing.assert_allclose(hard.mean(axis=0), probabilities, atol=0.015)
    soft = F.gumbel_softmax(vg.zeros(4, 3), tau=2.0).numpy()
    np.testing.assert_allclose(soft.sum(axis=1), 1.0)
    assert (soft > 0).all() and (soft < 1).all()


def test_a_hard_gumbel_sample_passes_the_soft_samples_gradient_straight_through():
    logits = vg.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    weights = vg.tensor([[1.0, 2.0, 3.0]])
    vg.manual_seed(3)
    (F.gumbel_softmax(logits, hard=True) * weights).sum().backward()
    hard_grad = logits.grad.numpy().copy()
    logits.grad = None
    vg.manual_seed(3)
    (F.gumbel_softmax(logits) * weights).sum().backward()
    np.testing.assert_allclose(hard_grad, logits.grad.numpy())


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(5, 6, 7), (2, 3, 3)])
def test_trilinear_interpolation_and_its_gradient_are_pytorchs(size, align_corners):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4, 5))
    grad = np.random.default_rng(1).standard_normal((1, 2) + size)
    results = []
    for library in (vg, torch):
        t = library.tensor(x, requires_grad=True)
        out = library.nn.functional.interpolate(t, size=size, mode="trilinear", align_corners=align_corners)
        out.backward(library.tensor(grad))
        results.append((out.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_the_deprecated_upsample_names_warn_and_interpolate():
    x = vg.arange(4.0).reshape(1, 1, 2, 2)
    with pytest.warns(DeprecationWarning, match="interpolate"):
        bilinear = F.upsample_bilinear(x, scale_factor=2)
    expected = torch.nn.functional.interpolate(torch.arange(4.0).reshape(1, 1, 2, 2), scale_factor=2,
                                               mode="bilinear", align_corners=True)
    np.testing.assert_allclose(bilinear.numpy(), expected.numpy(), rtol=1e-6)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_array_equal(F.upsample_nearest(x, size=4).numpy(), F.interpolate(x, size=4).numpy())
    with pytest.warns(DeprecationWarning):
        assert F.upsample(x, scale_factor=3).shape == (1, 1, 6, 6)


def test_interpolate_names_an_unknown_mode_and_refuses_the_ones_vizgrad_lacks():
    with pytest.raises(vg.ArgumentError, match="'cubic'"):
        F.interpolate(vg.ones(1, 1, 4), size=3, mode="cubic")
    with pytest.raises(UnsupportedError, match="area"):
        F.interpolate(vg.ones(1, 1, 4, 4), size=3, mode="area")


def test_the_modules_print_as_pytorchs():
    for name, args in (("RReLU", (0.1, 0.3)), ("AlphaDropout", (0.2,)), ("FeatureAlphaDropout", ())):
        assert repr(getattr(vg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
