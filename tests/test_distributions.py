"""``vizgrad.distributions``: values and gradients of log_prob, entropy, cdf and kl_divergence
against closed forms (and PyTorch when importable), sampling frequencies, reproducibility
with ``manual_seed``, the reparameterisation gradient, batch shapes and argument checks."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd.gradcheck import gradcheck
from vizgrad.distributions import Bernoulli, Categorical, Exponential, Independent, Laplace, Normal, Uniform, kl_divergence
from vizgrad.errors import ShapeError

RNG = np.random.default_rng(3)


def t(values, requires_grad=False):
    return vg.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


# --- Normal ---------------------------------------------------------------------------

def test_normal_log_prob_entropy_cdf_match_the_closed_forms():
    loc, scale, x = np.array([0.0, 1.0, -2.0]), np.array([1.0, 2.0, 0.5]), np.array([0.5, -1.0, -2.0])
    dist = Normal(t(loc), t(scale))
    expected = -((x - loc) ** 2) / (2 * scale ** 2) - np.log(scale) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(dist.log_prob(t(x)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(dist.entropy().numpy(), 0.5 + 0.5 * math.log(2 * math.pi) + np.log(scale), rtol=1e-12)
    cdf = [0.5 * (1 + math.erf((a - m) / (s * math.sqrt(2)))) for a, m, s in zip(x, loc, scale)]
    np.testing.assert_allclose(dist.cdf(t(x)).numpy(), cdf, rtol=1e-12)
    assert dist.batch_shape == (3,) and dist.event_shape == () and dist.has_rsample
    np.testing.assert_allclose(dist.variance.numpy(), scale ** 2)
    np.testing.assert_allclose(dist.stddev.numpy(), scale)


def test_normal_gradients_pass_gradcheck():
    loc, scale, x = t([0.3, -1.0], True), t([0.7, 1.5], True), t([0.1, 0.4], True)
    assert gradcheck(lambda m, s, v: Normal(m, s).log_prob(v), (loc, scale, x))
    assert gradcheck(lambda m, s: Normal(m, s).entropy(), (loc, scale))
    assert gradcheck(lambda m, s, v: Normal(m, s).cdf(v), (loc, scale, x))
    q_loc, q_scale = t([1.0, 0.0], True), t([2.0, 0.5], True)
    assert gradcheck(lambda a, b, c, d: kl_divergence(Normal(a, b), Normal(c, d)), (loc, scale, q_loc, q_scale))


def test_rsample_is_loc_plus_scale_times_noise_with_the_reparameterisation_gradient():
    loc, scale = t([1.0, -2.0], True), t([0.5, 3.0], True)
    vg.manual_seed(11)
    z = Normal(loc, scale).rsample((4,))
    vg.manual_seed(11)
    noise = vg.randn(4, 2, dtype=vg.float64)
    assert tuple(z.shape) == (4, 2)
    np.testing.assert_allclose(z.detach().numpy(), loc.detach().numpy() + noise.numpy() * scale.detach().numpy())
    z.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0])                     # dz/dμ = 1 per sample
    np.testing.assert_allclose(scale.grad.numpy(), noise.numpy().sum(0))        # dz/dσ = ε
    sample = Normal(loc, scale).sample((3,))
    assert not sample.requires_grad and tuple(sample.shape) == (3, 2)


def test_samples_are_reproducible_with_manual_seed_and_have_the_right_moments():
    dist = Normal(t([2.0]), t([0.5]))
    vg.manual_seed(0)
    first = dist.sample((20000,))
    vg.manual_seed(0)
    np.testing.assert_array_equal(first.numpy(), dist.sample((20000,)).numpy())
    assert abs(first.numpy().mean() - 2.0) < 0.02 and abs(first.numpy().std() - 0.5) < 0.02


def test_kl_normal_normal_closed_form_and_vae_term():
    mu, log_var = t([[0.5, -0.3]], True), t([[0.2, -0.1]], True)
    kl = kl_divergence(Normal(mu, (0.5 * log_var).exp()), Normal(0.0, 1.0)).sum()
    # the VAE paper's -½ Σ (1 + log σ² - μ² - σ²)
    expected = -0.5 * (1 + log_var - mu ** 2 - log_var.exp()).sum()
    np.testing.assert_allclose(kl.item(), expected.item(), rtol=1e-12)
    kl.backward()
    np.testing.assert_allclose(mu.grad.numpy(), mu.detach().numpy())
    np.testing.assert_allclose(log_var.grad.numpy(), 0.5 * (np.exp(log_var.detach().numpy()) - 1))


# --- Categorical ----------------------------------------------------------------------

def test_categorical_from_probs_or_logits_agree():
    probs = RNG.random((2, 4))
    by_probs = Categorical(probs=t(probs))
    by_logits = Categorical(logits=t(np.log(probs) + 3.0))             # shifted logits: the same distribution
    normalised = probs / probs.sum(-1, keepdims=True)
    for dist in (by_probs, by_logits):
        np.testing.assert_allclose(dist.probs.numpy(), normalised, rtol=1e-12)
        np.testing.assert_allclose(dist.logits.numpy(), np.log(normalised), rtol=1e-10)
        np.testing.assert_allclose(dist.entropy().numpy(), -(normalised * np.log(normalised)).sum(-1), rtol=1e-12)
        assert dist.batch_shape == (2,) and dist.event_shape == () and dist.param_shape == (2, 4)
    values = vg.tensor([[3, 0], [1, 2], [0, 0]])                       # sample dims before the batch
    np.testing.assert_allclose(by_logits.log_prob(values).numpy(),
                               np.log(normalised)[[0, 1], values.numpy()], rtol=1e-12)


def test_categorical_gradients_pass_gradcheck():
    logits = t(RNG.standard_normal((3, 4)), True)
    values = vg.tensor([0, 3, 2])
    assert gradcheck(lambda l: Categorical(logits=l).log_prob(values), (logits,))
    assert gradcheck(lambda l: Categorical(logits=l).entropy(), (logits,))
    probs = t(RNG.random((3, 4)) + 0.1, True)
    assert gradcheck(lambda p: Categorical(probs=p).log_prob(values), (probs,))
    other = t(RNG.standard_normal((3, 4)), True)
    assert gradcheck(lambda a, b: kl_divergence(Categorical(logits=a), Categorical(logits=b)), (logits, other))


def test_categorical_sampling_frequencies_and_seed():
    dist = Categorical(probs=t([[0.1, 0.6, 0.3], [1.0, 0.0, 0.0]]))
    vg.manual_seed(5)
    samples = dist.sample((4000,))
    assert tuple(samples.shape) == (4000, 2) and samples.dtype == vg.int64
    counts = np.bincount(samples.numpy()[:, 0], minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.1, 0.6, 0.3], atol=0.03)
    assert (samples.numpy()[:, 1] == 0).all()                       # probability-zero classes never drawn
    vg.manual_seed(5)
    np.testing.assert_array_equal(dist.sample((4000,)).numpy(), samples.numpy())
    assert dist.enumerate_support().tolist() == [[0, 0], [1, 1], [2, 2]]


def test_kl_categorical_is_zero_for_equal_infinite_where_q_excludes_p():
    p = Categorical(probs=t([0.5, 0.5, 0.0]))
    assert kl_divergence(p, p).item() == 0.0
    assert kl_divergence(p, Categorical(probs=t([1.0, 0.0, 0.0]))).item() == math.inf
    q = [0.2, 0.3, 0.5]
    np.testing.assert_allclose(kl_divergence(p, Categorical(probs=t(q))).item(),
                               0.5 * math.log(0.5 / 0.2) + 0.5 * math.log(0.5 / 0.3), rtol=1e-12)


def test_reinforce_gradient_is_reward_weighted_score():
    logits = t([0.0, 1.0, -1.0], True)
    dist = Categorical(logits=logits)
    loss = -(dist.log_prob(vg.tensor(1)) * 2.0)
    loss.backward()
    probs = np.exp([0.0, 1.0, -1.0]) / np.exp([0.0, 1.0, -1.0]).sum()
    np.testing.assert_allclose(logits.grad.numpy(), -2.0 * (np.eye(3)[1] - probs), rtol=1e-12)


# --- Bernoulli, Independent -----------------------------------------------------------

def test_bernoulli_from_probs_and_logits():
    p = np.array([0.2, 0.7, 0.5])
    for dist in (Bernoulli(probs=t(p)), Bernoulli(logits=t(np.log(p / (1 - p))))):
        x = np.array([1.0, 0.0, 1.0])
        np.testing.assert_allclose(dist.log_prob(t(x)).numpy(), x * np.log(p) + (1 - x) * np.log(1 - p), rtol=1e-10)
        np.testing.assert_allclose(dist.entropy().numpy(), -p * np.log(p) - (1 - p) * np.log(1 - p), rtol=1e-10)
        np.testing.assert_allclose(dist.mean.numpy(), p, rtol=1e-12)
        np.testing.assert_allclose(dist.variance.numpy(), p * (1 - p), rtol=1e-12)
    vg.manual_seed(1)
    samples = Bernoulli(probs=t(p)).sample((5000,))
    assert set(np.unique(samples.numpy())) <= {0.0, 1.0} and samples.dtype == vg.float64
    np.testing.assert_allclose(samples.numpy().mean(0), p, atol=0.03)
    logits = t([0.3, -1.2], True)
    assert gradcheck(lambda l: Bernoulli(logits=l).log_prob(t([1.0, 0.0])), (logits,))
    assert gradcheck(lambda l: Bernoulli(logits=l).entropy(), (logits,))
    assert gradcheck(lambda a, b: kl_divergence(Bernoulli(logits=a), Bernoulli(logits=b)), (logits, t([1.0, 0.5], True)))


def test_independent_sums_the_reinterpreted_dims():
    loc, scale = t(RNG.standard_normal((2, 3))), t(RNG.random((2, 3)) + 0.5)
    base = Normal(loc, scale)
    dist = Independent(base, 1)
    assert dist.batch_shape == (2,) and dist.event_shape == (3,)
    x = t(RNG.standard_normal((2, 3)))
    np.testing.assert_allclose(dist.log_prob(x).numpy(), base.log_prob(x).numpy().sum(-1), rtol=1e-12)
    np.testing.assert_allclose(dist.entropy().numpy(), base.entropy().numpy().sum(-1), rtol=1e-12)
    q = Independent(Normal(loc * 0, scale * 0 + 1), 1)
    np.testing.assert_allclose(kl_divergence(dist, q).numpy(), kl_divergence(base, q.base_dist).numpy().sum(-1))
    assert tuple(dist.rsample((5,)).shape) == (5, 2, 3)


# --- against PyTorch, and errors -------------------------------------------------------

def test_values_and_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((3, 5))
    actions = np.array([4, 0, 2])
    ours, theirs = t(logits, True), torch.tensor(logits, requires_grad=True)
    mine = Categorical(logits=ours)
    ref = torch.distributions.Categorical(logits=theirs)
    (mine.log_prob(vg.tensor(actions)).sum() + mine.entropy().sum()).backward()
    (ref.log_prob(torch.tensor(actions)).sum() + ref.entropy().sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    assert repr(mine) == repr(ref)
    loc, scale, x = RNG.standard_normal(4), RNG.random(4) + 0.5, RNG.standard_normal(4)
    ours_n, theirs_n = Normal(t(loc), t(scale)), torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale))
    for name in ("log_prob", "cdf"):
        np.testing.assert_allclose(getattr(ours_n, name)(t(x)).numpy(),
                                   getattr(theirs_n, name)(torch.tensor(x)).numpy(), rtol=1e-12)
    other = torch.distributions.Normal(torch.tensor(x), torch.tensor(scale * 2))
    np.testing.assert_allclose(kl_divergence(ours_n, Normal(t(x), t(scale * 2))).numpy(),
                               torch.distributions.kl_divergence(theirs_n, other).numpy(), rtol=1e-12)
    p = RNG.random(4)
    np.testing.assert_allclose(Bernoulli(probs=t(p)).entropy().numpy(),
                               torch.distributions.Bernoulli(probs=torch.tensor(p)).entropy().numpy(), rtol=1e-10)


def _continuous(torch):
    """(vizgrad's, PyTorch's, parameter arrays, values inside the support) of each new distribution."""
    low, width = RNG.standard_normal(4), RNG.random(4) + 0.5
    rate, loc, scale = RNG.random(4) + 0.3, RNG.standard_normal(4), RNG.random(4) + 0.5
    return [(Uniform, torch.distributions.Uniform, (low, low + width), low + width * RNG.random(4)),
            (Exponential, torch.distributions.Exponential, (rate,), RNG.random(4) * 3),
            (Laplace, torch.distributions.Laplace, (loc, scale), RNG.standard_normal(4) * 2)]


def test_uniform_exponential_and_laplace_match_pytorch():
    torch = pytest.importorskip("torch")
    for ours_type, theirs_type, parameters, x in _continuous(torch):
        ours_parameters = [t(p, True) for p in parameters]
        theirs_parameters = [torch.tensor(p, requires_grad=True) for p in parameters]
        ours, theirs = ours_type(*ours_parameters), theirs_type(*theirs_parameters)
        assert repr(ours_type(*[t(p[:1]) for p in parameters])) == repr(
            theirs_type(*[torch.tensor(p[:1]) for p in parameters])).replace("torch.float64", "vizgrad.float64")
        assert repr(ours_type(*[float(p[0]) for p in parameters])) == repr(theirs_type(*[float(p[0]) for p in parameters]))
        quantiles = RNG.random(4) * 0.98 + 0.01
        for name, argument in (("log_prob", x), ("cdf", x), ("icdf", quantiles)):
            mine, reference = getattr(ours, name)(t(argument)), getattr(theirs, name)(torch.tensor(argument))
            np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=1e-12, err_msg=name)
        total = ours.log_prob(t(x)).sum() + ours.entropy().sum() + ours.cdf(t(x)).sum()
        theirs_total = theirs.log_prob(torch.tensor(x)).sum() + theirs.entropy().sum() + theirs.cdf(torch.tensor(x)).sum()
        total.backward()
        theirs_total.backward()
        for mine, reference in zip(ours_parameters, theirs_parameters):
            np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-10)
        for name in ("mean", "variance", "stddev"):
            np.testing.assert_allclose(getattr(ours, name).detach().numpy(), getattr(theirs, name).detach().numpy(),
                                       rtol=1e-12, err_msg=name)
        other = [p * 1.5 + 0.1 if i else p - 0.2 for i, p in enumerate(parameters)]
        np.testing.assert_allclose(kl_divergence(ours, ours_type(*[t(p) for p in other])).detach().numpy(),
                                   torch.distributions.kl_divergence(theirs, theirs_type(*[torch.tensor(p) for p in other]))
                                   .detach().numpy(), rtol=1e-10)
        # samples: reparameterised (gradients reach the parameters), in the support, the right mean
        vg.manual_seed(0)
        sample = ours.rsample((20000,))
        assert tuple(sample.shape) == (20000, 4) and ours.sample().requires_grad is False
        np.testing.assert_allclose(sample.mean(0).detach().numpy(), ours.mean.detach().numpy(),
                                   atol=0.05 * float(ours.stddev.max()) + 0.01)
        assert bool(ours.log_prob(sample.detach()).isfinite().all())
        sample.sum().backward()
        assert all(p.grad is not None and bool(p.grad.isfinite().all()) for p in ours_parameters)
    assert kl_divergence(Uniform(0.0, 2.0), Uniform(0.5, 3.0)).item() == math.inf     # p leaves q's interval
    assert Uniform(0.0, 2.0, validate_args=False).log_prob(t(3.0)).item() == -math.inf
    with pytest.raises(ValueError, match=r"Uniform.log_prob: expected value argument .* within the support "
                                         r"\(Interval\(lower_bound=0.0, upper_bound=2.0\)\)"):
        Uniform(0.0, 2.0).log_prob(t(3.0))
    with pytest.raises(ValueError, match=r"low .* to satisfy the constraint LessThan\(upper_bound=1.0\)"):
        Uniform(2.0, 1.0)
    with pytest.raises(ValueError, match=r"GreaterThanEq\(lower_bound=0.0\)"):
        Exponential(1.0).log_prob(t(-1.0))
    with pytest.raises(ValueError, match=r"rate .* GreaterThan\(lower_bound=0.0\)"):
        Exponential(t([1.0, 0.0]))


def test_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="either `probs` or `logits` must be specified, but not both"):
        Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0]))
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        Bernoulli()
    with pytest.raises(ValueError, match=r"scale \(Tensor of shape \(2,\)\).*GreaterThan\(lower_bound=0.0\)"):
        Normal(t([0.0, 0.0]), t([1.0, -1.0]))
    Normal(t([0.0]), t([-1.0]), validate_args=False)                  # checks can be turned off
    with pytest.raises(ValueError, match=r"within the support \(IntegerInterval\(lower_bound=0, upper_bound=1\)\)"):
        Categorical(logits=t([0.0, 0.0])).log_prob(vg.tensor(2))
    with pytest.raises(ValueError, match="Boolean"):
        Bernoulli(probs=t([0.5])).log_prob(t([0.5]))
    with pytest.raises(ShapeError, match=r"value of shape \(3,\) is not broadcastable with .* \(2,\)"):
        Normal(t([0.0, 0.0]), 1.0).log_prob(t([0.0, 0.0, 0.0]))
    with pytest.raises(ShapeError, match="do not broadcast together"):
        Normal(t([0.0, 0.0]), t([1.0, 1.0, 1.0]))
    with pytest.raises(NotImplementedError, match="no formula is registered for Normal and Categorical"):
        kl_divergence(Normal(0.0, 1.0), Categorical(logits=t([0.0])))
    with pytest.raises(NotImplementedError, match="rsample"):
        Categorical(logits=t([0.0, 1.0])).rsample()
    with pytest.raises(ShapeError, match="reinterpreted_batch_ndims"):
        Independent(Normal(0.0, 1.0), 1)


def test_distributions_run_on_every_backend(backend):
    loc = vg.tensor([0.5, -1.0], dtype=vg.float64, device=backend, requires_grad=True)
    scale = vg.tensor([1.0, 2.0], dtype=vg.float64, device=backend, requires_grad=True)
    normal = Normal(loc, scale)
    z = normal.rsample((3,))
    assert z.device == loc.device and tuple(z.shape) == (3, 2)
    prior = Normal(vg.zeros(2, dtype=vg.float64, device=backend), vg.ones(2, dtype=vg.float64, device=backend))
    total = normal.log_prob(z.detach()).sum() + kl_divergence(normal, prior).sum() + z.sum()
    total.backward()
    assert np.isfinite(loc.grad.cpu().numpy()).all()
    logits = vg.tensor([[0.0, 1.0, 2.0]], dtype=vg.float64, device=backend, requires_grad=True)
    categorical = Categorical(logits=logits)
    action = categorical.sample((5,))
    assert action.device == logits.device and tuple(action.shape) == (5, 1)
    categorical.log_prob(action).sum().backward()
    coin = Bernoulli(logits=logits)
    assert coin.sample().device == logits.device
    np.testing.assert_allclose(coin.entropy().detach().cpu().numpy(),
                               Bernoulli(logits=t([[0.0, 1.0, 2.0]])).entropy().numpy(), rtol=1e-12)
    for made in (Uniform(loc, loc + scale), Exponential(scale), Laplace(loc, scale)):
        z = made.rsample((3,))
        assert z.device == loc.device and tuple(z.shape) == (3, 2)
        (made.log_prob(z).sum() + made.entropy().sum() + made.cdf(z.detach()).sum()).backward()
    assert np.isfinite(scale.grad.cpu().numpy()).all()
