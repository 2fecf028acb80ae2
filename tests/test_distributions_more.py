"""The distributions beyond the first seven (Gamma, Chi2, Beta, Dirichlet, Poisson, LogNormal,
HalfNormal, Gumbel, Cauchy, StudentT, Geometric, Binomial, OneHotCategorical, MultivariateNormal),
TransformedDistribution with its transforms, constraints, and the special functions they need
(erfinv, igamma/igammac, atan): values, gradients and KL divergences against
``torch.distributions`` (the oracle, skipped without PyTorch), reparameterised gradients against
their closed forms and finite differences, sample moments, argument and support errors, reprs."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import distributions as D
from vizgrad.distributions import constraints, transforms
from vizgrad.errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, VizgradError

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(7)
N = 200_000


def t(values, requires_grad=False):
    return vg.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def tt(values, requires_grad=False):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def close(mine, reference, rtol=1e-10, atol=1e-12, err_msg=""):
    mine = mine.detach().numpy() if hasattr(mine, "detach") else np.asarray(mine)
    reference = reference.detach().numpy() if hasattr(reference, "detach") else np.asarray(reference)
    assert mine.shape == reference.shape, f"{err_msg}: shape {mine.shape} != {reference.shape}"
    np.testing.assert_allclose(mine, reference, rtol=rtol, atol=atol, err_msg=err_msg)


def positive(*shape, low=0.5, high=3.0):
    return RNG.uniform(low, high, shape)


def unit(*shape):
    return RNG.uniform(0.1, 0.9, shape)


def _cov(*batch, n=3):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# Each case: constructor arguments as (positional arrays, keyword arrays) — batched, some broadcasting —
# values inside the support (leading sample dim 2), and whether icdf is defined there.
CASES = {
    "Gamma": (((positive(2, 3), positive(3)), {}), lambda: positive(2, 2, 3, low=0.05, high=5)),
    "Chi2": (((positive(2, 3, low=0.5, high=6),), {}), lambda: positive(2, 2, 3, low=0.05, high=8)),
    "Beta": (((positive(2, 3), positive(2, 1)), {}), lambda: unit(2, 2, 3)),
    "Dirichlet": (((positive(2, 4),), {}), lambda: (lambda p: p / p.sum(-1, keepdims=True))(positive(2, 2, 4))),
    "Poisson": (((positive(2, 3, high=6),), {}), lambda: RNG.integers(0, 8, (2, 2, 3)).astype(np.float64)),
    "LogNormal": (((RNG.normal(size=(2, 3)), positive(3)), {}), lambda: positive(2, 2, 3, low=0.05, high=5)),
    "HalfNormal": (((positive(2, 3),), {}), lambda: positive(2, 2, 3, low=0.0, high=4)),
    "Gumbel": (((RNG.normal(size=(2, 3)), positive(3)), {}), lambda: RNG.normal(size=(2, 2, 3)) * 2),
    "Cauchy": (((RNG.normal(size=(2, 3)), positive(2, 1)), {}), lambda: RNG.normal(size=(2, 2, 3)) * 3),
    "StudentT": (((positive(2, 3, low=0.5, high=8), RNG.normal(size=3), positive(2, 1)), {}),
                 lambda: RNG.normal(size=(2, 2, 3)) * 2),
    "Geometric": (((), {"probs": unit(2, 3)}), lambda: RNG.integers(0, 6, (2, 2, 3)).astype(np.float64)),
    "Binomial": (((np.full((2, 3), 9.0),), {"probs": unit(2, 3)}),
                 lambda: RNG.integers(0, 10, (2, 2, 3)).astype(np.float64)),
    "OneHotCategorical": (((), {"logits": RNG.normal(size=(2, 4))}), lambda: np.eye(4)[RNG.integers(0, 4, (2, 2))]),
    "MultivariateNormal": (((RNG.normal(size=(2, 3)),), {"covariance_matrix": _cov(2)}),
                           lambda: RNG.normal(size=(2, 2, 3))),
}
ICDF = {"LogNormal", "HalfNormal", "Gumbel", "Cauchy"}                 # PyTorch's icdf among the new ones
CDF = ICDF | {"Gamma", "Chi2"}
ENTROPY_UNDEFINED = {"Poisson"}


def _pair(name, requires_grad=False):
    """vizgrad's and PyTorch's distribution of one case, and the parameter leaves of each."""
    (positional, keywords), _ = CASES[name]
    return _made(name, positional, keywords, requires_grad)


def _made(name, positional, keywords=None, requires_grad=False):
    keywords = keywords or {}
    ours_leaves = [t(a, requires_grad) for a in positional] + [t(v, requires_grad) for v in keywords.values()]
    theirs_leaves = [tt(a, requires_grad) for a in positional] + [tt(v, requires_grad) for v in keywords.values()]
    count = len(positional)
    ours = getattr(D, name)(*ours_leaves[:count], **dict(zip(keywords, ours_leaves[count:])))
    theirs = getattr(TD, name)(*theirs_leaves[:count], **dict(zip(keywords, theirs_leaves[count:])))
    return ours, theirs, ours_leaves, theirs_leaves


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_moments_match_pytorch(name):
    ours, theirs, _, _ = _pair(name)
    value = CASES[name][1]()
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    close(ours.log_prob(t(value)), theirs.log_prob(tt(value)), err_msg="log_prob")
    if name in CDF:
        close(ours.cdf(t(value)), theirs.cdf(tt(value)), err_msg="cdf")
    if name in ICDF:
        quantiles = RNG.uniform(0.01, 0.99, (2, 2, 3))
        close(ours.icdf(t(quantiles)), theirs.icdf(tt(quantiles)), rtol=1e-9, err_msg="icdf")
    if name in ENTROPY_UNDEFINED:
        with pytest.raises(NotImplementedError):
            ours.entropy()
    else:
        close(ours.entropy(), theirs.entropy(), err_msg="entropy")
    for moment in ("mean", "mode", "variance", "stddev"):
        mine, reference = getattr(ours, moment), getattr(theirs, moment)
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=1e-10, err_msg=moment)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_of_log_prob_entropy_and_cdf_match_pytorch(name):
    ours, theirs, ours_leaves, theirs_leaves = _pair(name, requires_grad=True)
    value = CASES[name][1]()
    mine = ours.log_prob(t(value)).sum()
    reference = theirs.log_prob(tt(value)).sum()
    if name not in ENTROPY_UNDEFINED:
        mine, reference = mine + ours.entropy().sum(), reference + theirs.entropy().sum()
    if name in ICDF:
        quantiles = RNG.uniform(0.05, 0.95, (2, 2, 3))
        mine, reference = mine + ours.icdf(t(quantiles)).sum(), reference + theirs.icdf(tt(quantiles)).sum()
    mine.backward()
    reference.backward()
    for mine_leaf, reference_leaf in zip(ours_leaves, theirs_leaves):
        assert reference_leaf.grad is not None
        close(mine_leaf.grad, reference_leaf.grad, rtol=1e-9, atol=1e-9, err_msg=name)


def test_gamma_cdf_gradients_match_pytorch_in_x_and_finite_differences_in_concentration():
    alpha, rate, x = positive(3, 4, low=0.3, high=6), positive(4), positive(3, 4, low=0.05, high=9)
    ours_x, theirs_x = t(x, True), tt(x, True)
    D.Gamma(t(alpha), t(rate)).cdf(ours_x).sum().backward()
    TD.Gamma(tt(alpha), tt(rate)).cdf(theirs_x).sum().backward()
    close(ours_x.grad, theirs_x.grad, rtol=1e-9)
    concentration = t(alpha, True)
    D.Gamma(concentration, t(rate)).cdf(t(x)).sum().backward()
    step = 1e-6
    difference = (vg.igamma(t(alpha + step), t(rate * x)) - vg.igamma(t(alpha - step), t(rate * x))) / (2 * step)
    close(concentration.grad, difference, rtol=1e-6, atol=1e-10)


# --- special functions ------------------------------------------------------------------------

def test_erfinv_igamma_and_atan_match_pytorch_with_gradients():
    p = RNG.uniform(-0.999, 0.999, 50)
    mine, reference = t(p, True), tt(p, True)
    vg.erfinv(mine).sum().backward()
    torch.erfinv(reference).sum().backward()
    close(vg.erfinv(t(p)), torch.erfinv(tt(p)), rtol=1e-13)
    close(mine.grad, reference.grad, rtol=1e-12)
    edges = [1.0, -1.0, 1.5, 0.0, float("nan")]
    np.testing.assert_array_equal(vg.erfinv(t(edges)).numpy(), torch.erfinv(tt(edges)).numpy())
    assert vg.special.erfinv is vg.erfinv and t([0.5]).erfinv().item() == pytest.approx(0.4769362762044699, rel=1e-14)
    a, x = RNG.uniform(0.01, 40, 200), RNG.uniform(0.0, 60, 200)
    a_edge = [0.0, 0.0, math.inf, 1.0, -1.0, 2.0, 3.0]
    x_edge = [0.0, 1.0, 1.0, 0.0, 1.0, math.inf, -0.5]
    scipy_special = pytest.importorskip("scipy.special")
    for ours, theirs, reference in ((vg.igamma, torch.igamma, scipy_special.gammainc),
                                    (vg.igammac, torch.igammac, scipy_special.gammaincc),
                                    (vg.special.gammainc, torch.special.gammainc, scipy_special.gammainc),
                                    (vg.special.gammaincc, torch.special.gammaincc, scipy_special.gammaincc)):
        close(ours(t(a), t(x)), reference(a, x), rtol=1e-12, atol=1e-300)      # (PyTorch's: within 2e-9)
        close(ours(t(a), t(x)), theirs(tt(a), tt(x)), rtol=5e-9, atol=1e-300)
        np.testing.assert_array_equal(ours(t(a_edge), t(x_edge)).numpy(), theirs(tt(a_edge), tt(x_edge)).numpy())
    mine, reference = t(x, True), tt(x, True)
    vg.igamma(t(a), mine).sum().backward()
    torch.igamma(tt(a), reference).sum().backward()
    close(mine.grad, reference.grad, rtol=1e-10)
    assert vg.igammac(t([1.0]), t([30.0])).item() == pytest.approx(math.exp(-30), rel=1e-13)   # far tail: no 1 - P
    z = RNG.normal(size=20) * 3
    mine, reference = t(z, True), tt(z, True)
    vg.atan(mine).sum().backward()
    torch.atan(reference).sum().backward()
    close(vg.arctan(t(z)), torch.atan(tt(z)), rtol=1e-14)
    close(mine.grad, reference.grad, rtol=1e-14)
    with pytest.raises(DTypeError, match="igamma: not implemented for int64"):
        vg.igamma(vg.tensor([1, 2]), vg.tensor([1, 2]))
    with pytest.raises(ArgumentTypeError, match="igamma"):
        vg.igamma(t([1.0]), 2.0)


def test_the_a_derivative_of_igamma_against_finite_differences_and_second_derivatives():
    scipy_special = pytest.importorskip("scipy.special")
    a = np.array([0.05, 0.7, 2.5, 3.0, 30.0, 250.0, 1.2])
    x = np.array([0.01, 0.3, 1.5, 6.5, 25.0, 260.0, 40.0])         # series and continued-fraction regions
    mine = t(a, True)
    vg.igamma(mine, t(x)).sum().backward()
    step = 1e-5 * a
    difference = (scipy_special.gammainc(a + step, x) - scipy_special.gammainc(a - step, x)) / (2 * step)
    close(mine.grad, difference, rtol=1e-6, atol=1e-12)
    # the backward is itself differentiable (its sums recorded op by op): d²P/dx² = p(x)((a - 1)/x - 1)
    xs = t(x[:4], True)
    first, = vg.autograd.grad(vg.igamma(t(a[:4]), xs).sum(), xs, create_graph=True)
    second, = vg.autograd.grad(first.sum(), xs)
    density = np.exp((a[:4] - 1) * np.log(x[:4]) - x[:4] - scipy_special.gammaln(a[:4]))
    close(second, density * ((a[:4] - 1) / x[:4] - 1), rtol=1e-9)


# --- reparameterised sampling ------------------------------------------------------------------

def test_gamma_rsample_gradient_is_the_implicit_reparameterisation_per_sample():
    """dz/dα = -(∂F/∂α)(z) / p(z) with F the CDF: checked per sample against a finite difference
    of SciPy's CDF and density (an independent implementation)."""
    scipy_special = pytest.importorskip("scipy.special")
    alpha = np.array([0.02, 0.4, 1.0, 3.5, 40.0, 900.0])
    concentration = t(alpha, True)
    vg.manual_seed(3)
    z = D.Gamma(concentration, 1.0).rsample((5,))
    z.sum().backward()
    samples = z.detach().numpy()
    step = 1e-6 * alpha
    dcdf = (scipy_special.gammainc(alpha + step, samples) - scipy_special.gammainc(alpha - step, samples)) / (2 * step)
    density = np.exp((alpha - 1) * np.log(samples) - samples - scipy_special.gammaln(alpha))
    expected = (-dcdf / density).sum(0)
    close(concentration.grad, expected, rtol=1e-5)
    # the same draws with their gradient: the sample is reproducible and z / rate's rate gradient is -z/rate
    rate = t([2.0], True)
    vg.manual_seed(3)
    scaled = D.Gamma(t(alpha), rate).rsample((5,))
    close(scaled, samples / 2.0, rtol=1e-15)
    scaled.sum().backward()
    close(rate.grad, [-(samples / 4.0).sum()], rtol=1e-12)
    # second derivatives: the backward records its own graph, d²z/dα² against the quantile function's
    concentration = t(alpha[1:4], True)
    vg.manual_seed(3)
    z = D.Gamma(concentration, 1.0).rsample()
    slope, = vg.autograd.grad(z.sum(), concentration, create_graph=True)
    curvature, = vg.autograd.grad(slope.sum(), concentration)
    quantile = scipy_special.gammainc(alpha[1:4], z.detach().numpy())
    step = 1e-4 * alpha[1:4]
    second = (scipy_special.gammaincinv(alpha[1:4] + step, quantile) - 2 * z.detach().numpy()
              + scipy_special.gammaincinv(alpha[1:4] - step, quantile)) / step ** 2
    close(curvature, second, rtol=1e-4, atol=1e-6)


def _expectation_gradients(make, statistic, parameters, samples=N, seed=0):
    vg.manual_seed(seed)
    leaves = [t(p, True) for p in parameters]
    statistic(make(*leaves).rsample((samples,))).mean(0).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


def test_rsample_expectation_gradients_match_the_closed_forms():
    """∇ E[f(X)] by reparameterisation (200k samples) against the gradient of E[f(X)]'s closed form."""
    a, b = np.array([0.4, 1.0, 5.0]), np.array([2.0, 0.7, 1.5])
    grad_a, grad_b = _expectation_gradients(D.Gamma, lambda z: z, (a, b))          # E = a/b
    np.testing.assert_allclose(grad_a, 1 / b, rtol=0.02)
    np.testing.assert_allclose(grad_b, -a / b ** 2, rtol=0.02)
    grad_a, grad_b = _expectation_gradients(D.Gamma, lambda z: z ** 2, (a, b))     # E = a(a+1)/b²
    np.testing.assert_allclose(grad_a, (2 * a + 1) / b ** 2, rtol=0.03)
    grad_a, grad_b = _expectation_gradients(D.Beta, lambda x: x, (a, b))           # E = a/(a+b)
    np.testing.assert_allclose(grad_a, b / (a + b) ** 2, rtol=0.03)
    np.testing.assert_allclose(grad_b, -a / (a + b) ** 2, rtol=0.03)
    alpha = np.array([[0.5, 2.0, 4.0]])                                            # E[x₀] = α₀/α₀₊
    grad, = _expectation_gradients(D.Dirichlet, lambda x: x[..., 0], (alpha,))
    total = alpha.sum()
    np.testing.assert_allclose(grad[0], (np.eye(3)[0] * total - alpha[0, 0]) / total ** 2, rtol=0.03, atol=2e-3)
    df = np.array([3.0, 7.0])
    grad_df, = _expectation_gradients(D.Chi2, lambda z: z, (df,))                  # E = df
    np.testing.assert_allclose(grad_df, [1.0, 1.0], rtol=0.02)
    nu, loc, scale = np.array([6.0, 9.0]), np.array([0.5, -1.0]), np.array([1.5, 0.7])
    grads = _expectation_gradients(D.StudentT, lambda x: x ** 2, (nu, loc, scale))  # E = σ²ν/(ν-2) + μ²
    np.testing.assert_allclose(grads[0], -2 * scale ** 2 / (nu - 2) ** 2, rtol=0.08)
    np.testing.assert_allclose(grads[1], 2 * loc, rtol=0.03)
    np.testing.assert_allclose(grads[2], 2 * scale * nu / (nu - 2), rtol=0.03)
    mu, sigma = np.array([0.2, -0.5]), np.array([0.3, 0.6])
    grads = _expectation_gradients(D.LogNormal, lambda x: x, (mu, sigma))          # E = e^(μ + σ²/2)
    mean = np.exp(mu + sigma ** 2 / 2)
    np.testing.assert_allclose(grads[0], mean, rtol=0.02)
    np.testing.assert_allclose(grads[1], sigma * mean, rtol=0.03)
    grad, = _expectation_gradients(D.HalfNormal, lambda x: x, (sigma,))            # E = σ√(2/π)
    np.testing.assert_allclose(grad, [math.sqrt(2 / math.pi)] * 2, rtol=0.02)
    grads = _expectation_gradients(D.Gumbel, lambda x: x, (mu, sigma))             # E = μ + βγ
    np.testing.assert_allclose(grads[0], [1.0, 1.0], rtol=1e-9)
    np.testing.assert_allclose(grads[1], [0.5772156649015329] * 2, rtol=0.02)


def test_transformed_rsamples_are_their_transforms_of_the_base_noise():
    loc, scale = t([0.5, -1.0], True), t([1.5, 0.4], True)
    vg.manual_seed(5)
    x = D.Cauchy(loc, scale).rsample((4,))
    vg.manual_seed(5)
    u = vg.rand(4, 2, dtype=vg.float64).numpy()
    noise = np.tan(math.pi * (u - 0.5))
    close(x, loc.detach().numpy() + scale.detach().numpy() * noise, rtol=1e-12)
    x.sum().backward()
    close(loc.grad, [4.0, 4.0])
    close(scale.grad, noise.sum(0), rtol=1e-12)
    vg.manual_seed(5)
    y = D.Gumbel(loc.detach(), scale.detach()).rsample((4,))
    vg.manual_seed(5)
    u = vg.rand(4, 2, dtype=vg.float64).numpy()
    close(y, loc.detach().numpy() - scale.detach().numpy() * np.log(-np.log(u)), rtol=1e-12)


def test_multivariate_normal_rsample_log_prob_gradients_and_kl():
    mu, cov = RNG.normal(size=(2, 3)), _cov(2)
    lower = np.linalg.cholesky(cov)
    loc, tril = t(mu, True), t(lower, True)
    vg.manual_seed(9)
    x = D.MultivariateNormal(loc, scale_tril=tril).rsample((4,))
    vg.manual_seed(9)
    eps = vg.randn(4, 2, 3, dtype=vg.float64).numpy()
    close(x, mu + np.einsum("bij,sbj->sbi", lower, eps), rtol=1e-12)
    x.sum().backward()
    close(loc.grad, np.full((2, 3), 4.0))
    close(tril.grad, np.einsum("sbj->bj", eps)[:, None, :].repeat(3, 1), rtol=1e-12)    # ∂Σ xᵢ/∂Lᵢⱼ = Σ εⱼ
    value = RNG.normal(size=(5, 2, 3))
    for keyword, matrix in (("covariance_matrix", cov), ("precision_matrix", np.linalg.inv(cov)),
                            ("scale_tril", lower)):
        ours_loc, ours_matrix, theirs_loc, theirs_matrix = t(mu, True), t(matrix, True), tt(mu, True), tt(matrix, True)
        ours = D.MultivariateNormal(ours_loc, **{keyword: ours_matrix})
        theirs = TD.MultivariateNormal(theirs_loc, **{keyword: theirs_matrix})
        assert repr(ours) == repr(theirs)
        close(ours.log_prob(t(value)), theirs.log_prob(tt(value)), err_msg=keyword)
        close(ours.entropy(), theirs.entropy(), err_msg=keyword)
        for name in ("scale_tril", "covariance_matrix", "precision_matrix", "variance", "mean", "mode"):
            close(getattr(ours, name), getattr(theirs, name), rtol=1e-9, err_msg=name)
        (ours.log_prob(t(value)).sum() + ours.entropy().sum()).backward()
        (theirs.log_prob(tt(value)).sum() + theirs.entropy().sum()).backward()
        close(ours_loc.grad, theirs_loc.grad, rtol=1e-9)
        close(ours_matrix.grad, theirs_matrix.grad, rtol=1e-8, atol=1e-12, err_msg=keyword)
    q_mu, q_cov = RNG.normal(size=3), _cov()
    p_loc, p_cov = t(mu, True), t(cov, True)
    kl = D.kl_divergence(D.MultivariateNormal(p_loc, p_cov), D.MultivariateNormal(t(q_mu), t(q_cov)))
    tp_loc, tp_cov = tt(mu, True), tt(cov, True)
    reference = TD.kl_divergence(TD.MultivariateNormal(tp_loc, tp_cov), TD.MultivariateNormal(tt(q_mu), tt(q_cov)))
    close(kl, reference, rtol=1e-10)
    kl.sum().backward()
    reference.sum().backward()
    close(p_loc.grad, tp_loc.grad, rtol=1e-9)
    close(p_cov.grad, tp_cov.grad, rtol=1e-8, atol=1e-12)


# --- KL divergences ----------------------------------------------------------------------------

def _uniform_inside():
    low = RNG.uniform(0.05, 0.4, 4)
    return low, low + RNG.uniform(0.1, 0.5, 4)


PARAMETERS = {
    "Normal": lambda: (RNG.normal(size=4), positive(4)), "Laplace": lambda: (RNG.normal(size=4), positive(4)),
    "Cauchy": lambda: (RNG.normal(size=4), positive(4)), "Gumbel": lambda: (RNG.normal(size=4), positive(4)),
    "Uniform": _uniform_inside, "Exponential": lambda: (positive(4),), "Gamma": lambda: (positive(4), positive(4)),
    "Chi2": lambda: (positive(4),), "Beta": lambda: (positive(4), positive(4)), "HalfNormal": lambda: (positive(4),),
    "LogNormal": lambda: (RNG.normal(size=4), positive(4)), "Poisson": lambda: (positive(4),),
    "Geometric": lambda: (unit(4),), "Bernoulli": lambda: (unit(4),),
    "Binomial": lambda: (np.full(4, 7.0), unit(4)), "Dirichlet": lambda: (positive(4, 3),),
    "Categorical": lambda: (positive(4, 3),), "OneHotCategorical": lambda: (positive(4, 3),),
}
PAIRS = [(p, q) for p in PARAMETERS for q in PARAMETERS]




@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_divergence_matches_pytorch_for_every_registered_pair(p_name, q_name):
    p_parameters = PARAMETERS[p_name]()
    q_parameters = PARAMETERS[q_name]()
    if q_name == "Uniform":                     # wide enough that some pairs are finite
        q_parameters = (q_parameters[0] - 3.0, q_parameters[1] + 3.0)
    ours_p, theirs_p, ours_leaves, theirs_leaves = _made(p_name, p_parameters, requires_grad=True)
    ours_q, theirs_q, _, _ = _made(q_name, q_parameters)
    try:
        reference = TD.kl_divergence(theirs_p, theirs_q)
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="kl_divergence"):
            D.kl_divergence(ours_p, ours_q)
        return
    mine = D.kl_divergence(ours_p, ours_q)
    close(mine, reference, rtol=1e-9, err_msg=f"{p_name} ‖ {q_name}")
    if bool(torch.isfinite(reference).all()) and reference.requires_grad:
        mine.sum().backward()
        reference.sum().backward()
        for ours_leaf, theirs_leaf in zip(ours_leaves, theirs_leaves):
            if theirs_leaf.grad is None:            # (Binomial's total_count: no gradient in either)
                assert ours_leaf.grad is None or not bool(ours_leaf.grad.any())
            else:
                close(ours_leaf.grad, theirs_leaf.grad, rtol=1e-8, atol=1e-9, err_msg=f"d KL({p_name} ‖ {q_name})")


def test_kl_divergences_at_the_edges_of_support():
    inside, outside = D.Uniform(t([0.2, -0.1]), t([0.5, 0.5])), TD.Uniform(tt([0.2, -0.1]), tt([0.5, 0.5]))
    for q_ours, q_theirs in ((D.Beta(t(2.0), t(3.0)), TD.Beta(tt(2.0), tt(3.0))),
                             (D.Exponential(t(2.0)), TD.Exponential(tt(2.0))),
                             (D.Gamma(t(2.0), t(3.0)), TD.Gamma(tt(2.0), tt(3.0)))):
        mine = D.kl_divergence(inside, q_ours)
        close(mine, TD.kl_divergence(outside, q_theirs), rtol=1e-10)
        assert mine[1].item() == math.inf and math.isfinite(mine[0].item())     # low < 0 leaves the support
    beta = D.Beta(t([2.0, 2.0]), t([3.0, 3.0]))
    kl = D.kl_divergence(beta, D.Uniform(t([0.0, 0.1]), t([1.0, 1.0])))
    assert math.isfinite(kl[0].item()) and kl[1].item() == math.inf
    assert D.kl_divergence(D.Poisson(t([1.0, 2.0])), D.Bernoulli(0.5)).tolist() == [math.inf, math.inf]
    assert D.kl_divergence(D.Normal(t([0.0]), 1.0), D.Gamma(t([2.0, 1.0]), 1.0)).shape == (2,)   # batch broadcast
    same = D.Gamma(t([2.0, 0.5]), t([3.0, 1.0]))
    close(D.kl_divergence(same, same), [0.0, 0.0], atol=1e-14)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(5, probs=t([0.5])), D.Binomial(8, probs=t([0.5])))
    assert D.kl_divergence(D.Binomial(8, probs=t([0.5])), D.Binomial(5, probs=t([0.5]))).item() == math.inf
    # Chi2 is a Gamma, LogNormal a transformed Normal: the KL dispatch finds their families
    close(D.kl_divergence(D.Chi2(t([3.0])), D.Chi2(t([5.0]))),
          TD.kl_divergence(TD.Chi2(tt([3.0])), TD.Chi2(tt([5.0]))), rtol=1e-12)
    close(D.kl_divergence(D.LogNormal(t([0.3]), 1.0), D.LogNormal(t([0.0]), 2.0)),
          D.kl_divergence(D.Normal(t([0.3]), 1.0), D.Normal(t([0.0]), 2.0)), rtol=1e-15)
    with pytest.raises(NotImplementedError, match="different transforms"):
        D.kl_divergence(D.LogNormal(0.0, 1.0),
                        D.TransformedDistribution(D.Normal(0.0, 1.0), transforms.TanhTransform()))
    with pytest.raises(ArgumentError, match="different event shapes"):
        D.kl_divergence(D.MultivariateNormal(vg.zeros(2, dtype=vg.float64), vg.eye(2, dtype=vg.float64)),
                        D.MultivariateNormal(vg.zeros(3, dtype=vg.float64), vg.eye(3, dtype=vg.float64)))


# --- samples -----------------------------------------------------------------------------------

MOMENTS = {   # distributions whose samples' mean and variance are compared with the exact ones
    "Gamma": lambda: D.Gamma(t([0.3, 2.0, 9.0]), t([1.0, 2.0, 0.5])),
    "Chi2": lambda: D.Chi2(t([1.0, 4.0])),
    "Beta": lambda: D.Beta(t([0.5, 2.0, 7.0]), t([0.5, 5.0, 1.0])),
    "LogNormal": lambda: D.LogNormal(t([0.0, 1.0]), t([0.25, 0.5])),
    "HalfNormal": lambda: D.HalfNormal(t([0.5, 2.0])),
    "Gumbel": lambda: D.Gumbel(t([0.0, 3.0]), t([1.0, 0.5])),
    "StudentT": lambda: D.StudentT(t([10.0, 12.0]), t([1.0, -2.0]), t([1.0, 0.5])),
    "Poisson": lambda: D.Poisson(t([0.5, 4.0, 30.0])),
    "Geometric": lambda: D.Geometric(probs=t([0.2, 0.7])),
    "Binomial": lambda: D.Binomial(t([5.0, 20.0]), probs=t([0.3, 0.9])),
    "Dirichlet": lambda: D.Dirichlet(t([[0.5, 1.0, 3.0]])),
    "OneHotCategorical": lambda: D.OneHotCategorical(probs=t([0.2, 0.5, 0.3])),
    "MultivariateNormal": lambda: D.MultivariateNormal(t([1.0, -1.0]), t([[2.0, 0.6], [0.6, 0.5]])),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_sample_moments_support_and_reproducibility(name):
    dist = MOMENTS[name]()
    vg.manual_seed(11)
    samples = dist.sample((N,))
    vg.manual_seed(11)
    again = dist.sample((N,))
    np.testing.assert_array_equal(samples.numpy(), again.numpy())            # manual_seed reproduces them
    assert samples.shape == (N, *dist.batch_shape, *dist.event_shape) and not samples.requires_grad
    assert bool(dist.support.check(samples).all())
    values = samples.numpy()
    mean, variance = dist.mean.detach().numpy(), dist.variance.detach().numpy()
    # 5 standard errors for the mean; the variance's standard error from the sample's 4th moment
    mean_error = 5 * np.sqrt(variance / N)
    np.testing.assert_array_less(np.abs(values.mean(0) - mean), mean_error + 1e-12)
    centred = values - values.mean(0)
    fourth = (centred ** 4).mean(0)
    variance_error = 5 * np.sqrt(np.maximum(fourth - variance ** 2, 0) / N)
    np.testing.assert_array_less(np.abs(values.var(0) - variance), variance_error + 1e-12)
    if name == "MultivariateNormal":
        np.testing.assert_allclose(np.cov(values.T), [[2.0, 0.6], [0.6, 0.5]], atol=0.02)


def test_discrete_sample_frequencies_follow_the_probabilities():
    for dist in (D.Poisson(t([2.5])), D.Binomial(6, probs=t([0.35])), D.Geometric(probs=t([0.4]))):
        vg.manual_seed(2)
        counts = np.bincount(dist.sample((N,)).numpy()[:, 0].astype(np.int64), minlength=6)[:6] / N
        expected = dist.log_prob(t(np.arange(6.0))[:, None]).exp().numpy()[:, 0]
        np.testing.assert_array_less(np.abs(counts - expected), 5 * np.sqrt(expected * (1 - expected) / N) + 1e-4)


def test_cauchy_quartiles_and_reparameterised_gamma_sample_shapes():
    vg.manual_seed(4)
    x = D.Cauchy(t([1.0]), t([2.0])).sample((N,)).numpy()[:, 0]
    np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.05)
    concentration = t([[0.5, 1.5]], True)
    z = D.Dirichlet(concentration).rsample((3, 2))
    assert z.shape == (3, 2, 1, 2) and z.requires_grad
    np.testing.assert_allclose(z.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    tiny = D.Gamma(t([1e-3]), 1.0).sample((1000,))
    assert bool((tiny > 0).all())                 # small concentrations underflow: kept at the smallest normal
    assert bool(D.Gamma(t([1e-3]), 1.0).log_prob(tiny).isfinite().all())


def test_distributions_sample_and_differentiate_on_every_backend(backend):
    alpha = vg.tensor([0.7, 2.0], dtype=vg.float64, device=backend, requires_grad=True)
    vg.manual_seed(1)
    z = D.Gamma(alpha, 1.0).rsample((3,))
    vg.manual_seed(1)
    reference_alpha = t([0.7, 2.0], True)
    reference = D.Gamma(reference_alpha, 1.0).rsample((3,))
    assert z.device == alpha.device
    close(z.cpu(), reference, rtol=1e-15)
    z.sum().backward()
    reference.sum().backward()
    close(alpha.grad.cpu(), reference_alpha.grad, rtol=1e-12)
    x = vg.tensor([0.1, 0.7], dtype=vg.float64, device=backend)
    close(vg.erfinv(x).cpu(), vg.erfinv(t([0.1, 0.7])), rtol=1e-15)
    close(vg.igamma(alpha.detach(), x).cpu(), vg.igamma(t([0.7, 2.0]), t([0.1, 0.7])), rtol=1e-15)
    beta = D.Beta(alpha, alpha.detach() + 1)
    (beta.log_prob(beta.rsample((2,)).detach()).sum() + beta.entropy().sum()).backward()
    assert bool(alpha.grad.cpu().isfinite().all())


# --- transforms and TransformedDistribution ------------------------------------------------------

def test_transforms_match_pytorch():
    x = RNG.normal(size=(3, 4))
    loc, scale = RNG.normal(size=4), RNG.uniform(-2, 2, 4)
    made = {
        "exp": (transforms.ExpTransform(), TD.transforms.ExpTransform()),
        "affine": (transforms.AffineTransform(t(loc), t(scale)), TD.transforms.AffineTransform(tt(loc), tt(scale))),
        "affine numbers": (transforms.AffineTransform(1.5, -2.0), TD.transforms.AffineTransform(1.5, -2.0)),
        "sigmoid": (transforms.SigmoidTransform(), TD.transforms.SigmoidTransform()),
        "tanh": (transforms.TanhTransform(), TD.transforms.TanhTransform()),
        "compose": (transforms.ComposeTransform([transforms.AffineTransform(0.5, 2.0), transforms.TanhTransform()]),
                    TD.transforms.ComposeTransform([TD.transforms.AffineTransform(0.5, 2.0),
                                                    TD.transforms.TanhTransform()])),
        "inverse": (transforms.ExpTransform().inv, TD.transforms.ExpTransform().inv),
    }
    for name, (ours, theirs) in made.items():
        start = np.exp(x) if name == "inverse" else x
        y_ours, y_theirs = ours(t(start)), theirs(tt(start))
        close(y_ours, y_theirs, rtol=1e-12, err_msg=name)
        close(ours.inv(y_ours), theirs.inv(y_theirs), rtol=1e-9, err_msg=name)
        close(ours.log_abs_det_jacobian(t(start), y_ours), theirs.log_abs_det_jacobian(tt(start), y_theirs),
              rtol=1e-10, err_msg=name)
        assert repr(ours) == repr(theirs)
        assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain), name
        assert ours.bijective == theirs.bijective
        sign = ours.sign
        reference_sign = theirs.sign
        np.testing.assert_array_equal(np.asarray(sign.numpy() if hasattr(sign, "numpy") else sign),
                                      np.asarray(reference_sign.numpy() if hasattr(reference_sign, "numpy")
                                                 else reference_sign), err_msg=name)
    assert repr(transforms.identity_transform) == repr(TD.transforms.identity_transform)
    assert transforms.ExpTransform() == transforms.ExpTransform() and transforms.ExpTransform() != \
        transforms.TanhTransform()
    assert transforms.AffineTransform(1.0, 2.0) == transforms.AffineTransform(1.0, 2.0)
    assert transforms.AffineTransform(1.0, 2.0) != transforms.AffineTransform(1.0, 3.0)
    assert transforms.ExpTransform().inv == transforms.ExpTransform().inv and transforms.ExpTransform().inv.inv == \
        transforms.ExpTransform()
    cached = transforms.TanhTransform(cache_size=1)
    y = cached(t([30.0]))                           # tanh(30) rounds to 1: only the cache recovers x
    assert cached.inv(y).item() == 30.0 and transforms.TanhTransform().inv(y).item() == math.inf
    with pytest.raises(ArgumentError, match="cache_size must be 0 or 1"):
        transforms.ExpTransform(cache_size=2)
    with pytest.raises(ArgumentTypeError, match="ComposeTransform: parts must be a list of Transforms"):
        transforms.ComposeTransform([transforms.ExpTransform(), "exp"])


def test_transformed_distribution_matches_pytorch():
    loc, scale = RNG.normal(size=(2, 3)), positive(3)
    def parts(library, module):
        return [module.AffineTransform(library.tensor(loc), library.tensor(scale)), module.SigmoidTransform()]

    ours_base_loc, theirs_base_loc = t(np.zeros(3), True), tt(np.zeros(3), True)
    ours = D.TransformedDistribution(D.Normal(ours_base_loc, 1.0), parts(vg, transforms))
    theirs = TD.TransformedDistribution(TD.Normal(theirs_base_loc, 1.0), parts(torch, TD.transforms))
    assert ours.batch_shape == (2, 3) and ours.event_shape == () and repr(ours) == repr(theirs)
    assert repr(ours.support) == repr(theirs.support) and ours.has_rsample
    y = RNG.uniform(0.05, 0.95, (4, 2, 3))
    close(ours.log_prob(t(y)), theirs.log_prob(tt(y)), rtol=1e-10)
    close(ours.cdf(t(y)), theirs.cdf(tt(y)), rtol=1e-10)
    close(ours.icdf(t(y)), theirs.icdf(tt(y)), rtol=1e-10)
    ours.log_prob(t(y)).sum().backward()
    theirs.log_prob(tt(y)).sum().backward()
    close(ours_base_loc.grad, theirs_base_loc.grad, rtol=1e-10)
    decreasing = D.TransformedDistribution(D.Exponential(t([1.5])), [transforms.AffineTransform(1.0, -2.0)])
    reference = TD.TransformedDistribution(TD.Exponential(tt([1.5])), [TD.transforms.AffineTransform(1.0, -2.0)])
    points = t([[-3.0], [0.5]])
    close(decreasing.cdf(points), reference.cdf(tt([[-3.0], [0.5]])), rtol=1e-12)  # a decreasing map flips the CDF
    vectors = D.TransformedDistribution(D.Normal(t(np.zeros((2, 3))), 1.0),
                                        transforms.AffineTransform(0.0, t([1.0, 2.0, 3.0]), event_dim=1))
    vectors_theirs = TD.TransformedDistribution(TD.Normal(tt(np.zeros((2, 3))), 1.0),
                                                TD.transforms.AffineTransform(0.0, tt([1.0, 2.0, 3.0]), event_dim=1))
    assert vectors.batch_shape == (2,) and vectors.event_shape == (3,)
    close(vectors.log_prob(t(y[0])), vectors_theirs.log_prob(tt(y[0])), rtol=1e-12)
    vg.manual_seed(0)
    sample = ours.rsample((5,))
    assert sample.shape == (5, 2, 3) and sample.requires_grad and bool(((sample > 0) & (sample < 1)).all())
    assert not ours.sample().requires_grad
    expanded = D.LogNormal(t([0.0, 1.0]), 1.0).expand((3, 2))
    assert type(expanded) is D.LogNormal and expanded.batch_shape == (3, 2) and expanded.base_dist.batch_shape == (3, 2)
    close(expanded.log_prob(t([1.0, 2.0])), TD.LogNormal(tt([0.0, 1.0]), 1.0).expand((3, 2)).log_prob(tt([1.0, 2.0])))
    assert D.Gumbel(t(0.0), t(1.0)).cdf(t(40.0)).item() == 1.0   # (PyTorch refuses: 40 maps outside its uniform base)
    gumbel = D.Gumbel(t([0.0, 1.0]), 2.0).expand((3, 2))
    close(gumbel.cdf(t([0.5, 1.5])), TD.Gumbel(tt([0.0, 1.0]), 2.0).expand((3, 2)).cdf(tt([0.5, 1.5])), rtol=1e-12)


def test_expand_matches_pytorch():
    for name in sorted(CASES):
        ours, theirs, _, _ = _pair(name)
        shape = (4, *ours.batch_shape)
        expanded, reference = ours.expand(shape), theirs.expand(shape)
        assert type(expanded) is type(ours) and expanded.batch_shape == tuple(reference.batch_shape), name
        value = CASES[name][1]()[0]
        close(expanded.log_prob(t(value)), reference.log_prob(tt(value)), err_msg=name)
        close(expanded.mean, reference.mean, err_msg=name)
        assert repr(expanded) == repr(reference).replace("torch.float64", "vizgrad.float64"), name
    loc = RNG.normal(size=(2, 3))
    independent = D.Independent(D.Normal(t(loc), 1.0), 1).expand((4, 2))
    reference = TD.Independent(TD.Normal(tt(loc), 1.0), 1).expand((4, 2))
    assert independent.batch_shape == (4, 2) and independent.event_shape == (3,)
    close(independent.log_prob(t(loc * 0.5)), reference.log_prob(tt(loc * 0.5)))
    with pytest.raises(ShapeError):
        D.Gamma(t([1.0, 2.0]), 1.0).expand((3,))


def test_enumerate_support_and_one_hot_samples():
    binomial = D.Binomial(t([3.0, 3.0]), probs=t([0.2, 0.6]))
    support = binomial.enumerate_support()
    assert support.shape == (4, 2) and support[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    close(binomial.entropy(), TD.Binomial(tt([3.0, 3.0]), probs=tt([0.2, 0.6])).entropy(), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="inhomogeneous total count"):
        D.Binomial(t([3.0, 4.0]), probs=t([0.2, 0.6])).entropy()
    one_hot = D.OneHotCategorical(probs=t([[0.2, 0.8, 0.0]]))
    assert one_hot.enumerate_support().shape == (3, 1, 3)
    vg.manual_seed(0)
    draws = one_hot.sample((1000,))
    assert draws.shape == (1000, 1, 3) and bool(constraints.one_hot.check(draws).all())
    assert draws[..., 2].sum().item() == 0.0                # a probability-zero class never comes up
    close(D.Bernoulli(probs=t([0.3, 0.6])).enumerate_support(), TD.Bernoulli(probs=tt([0.3, 0.6])).enumerate_support())
    assert D.Binomial(vg.tensor([4]), probs=t([0.5])).total_count.dtype == vg.float64     # integer counts accepted


# --- errors and reprs ----------------------------------------------------------------------------

REPRS = [("Gamma", (2.0, 3.0)), ("Gamma", ([2.0], [3.0])), ("Gamma", ([2.0, 1.0], 3.0)), ("Chi2", ([3.0],)),
         ("Beta", (2.0, 3.0)), ("Dirichlet", ([1.0, 2.0],)), ("Poisson", ([3.0],)), ("Poisson", ([3.0, 1.0],)),
         ("LogNormal", (0.0, 1.0)), ("HalfNormal", ([2.0],)), ("Gumbel", (1.0, 2.0)), ("Cauchy", (0.0, [1.0])),
         ("StudentT", (3.0,)), ("StudentT", ([3.0], 1.0, 2.0)), ("Geometric", ([0.3],)), ("Binomial", (10, [0.3])),
         ("Binomial", ([10.0, 5.0], [0.3, 0.2])), ("OneHotCategorical", ([0.2, 0.8],))]


@pytest.mark.parametrize("name,arguments", REPRS, ids=[f"{n}{i}" for i, (n, _) in enumerate(REPRS)])
def test_reprs_supports_and_constraints_print_as_pytorch(name, arguments):
    def made(library, module):
        return getattr(module, name)(*[library.tensor(a, dtype=library.float64) if isinstance(a, list) else a
                                       for a in arguments])
    ours, theirs = made(vg, D), made(torch, TD)
    as_ours = lambda text: text.replace("torch.float64", "vizgrad.float64")    # noqa: E731
    assert repr(ours) == as_ours(repr(theirs))
    assert repr(ours.support) == as_ours(repr(theirs.support))
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == \
        {k: as_ours(repr(v)) for k, v in theirs.arg_constraints.items()}
    assert ours.has_enumerate_support == theirs.has_enumerate_support


def test_parameter_constraints_raise_vizgrad_errors_in_pytorchs_words():
    bad = [(lambda: D.Gamma(t([1.0, -1.0]), 1.0), r"concentration .* GreaterThan\(lower_bound=0.0\)"),
           (lambda: D.Gamma(1.0, t([0.0])), r"rate .* GreaterThan\(lower_bound=0.0\)"),
           (lambda: D.Chi2(t([-2.0])), r"parameter df .* of distribution Chi2\(\)"),
           (lambda: D.Beta(t([1.0]), t([-1.0])), r"concentration0 .* of distribution Beta\(\)"),
           (lambda: D.Dirichlet(t([1.0, 0.0])), r"IndependentConstraint\(GreaterThan\(lower_bound=0.0\), 1\)"),
           (lambda: D.Poisson(t([-0.5])), r"rate .* GreaterThanEq\(lower_bound=0.0\)"),
           (lambda: D.LogNormal(0.0, t([-1.0])), r"scale .* LogNormal\(\)"),
           (lambda: D.HalfNormal(t([0.0])), r"scale .* GreaterThan"),
           (lambda: D.Gumbel(t([math.nan]), 1.0), r"loc .* Real\(\)"),
           (lambda: D.Cauchy(0.0, t([-2.0])), r"scale .* GreaterThan"),
           (lambda: D.StudentT(t([0.0])), r"df .* GreaterThan"),
           (lambda: D.Geometric(probs=t([1.5])), r"probs .* Interval\(lower_bound=0.0, upper_bound=1.0\)"),
           (lambda: D.Binomial(t([2.5]), probs=t([0.5])), r"total_count .* IntegerGreaterThan\(lower_bound=0\)"),
           (lambda: D.OneHotCategorical(probs=t([0.5, -0.5])), r"probs .* Simplex\(\)"),
           (lambda: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
            r"covariance_matrix .* PositiveDefinite\(\)"),
           (lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
            r"scale_tril .* LowerCholesky\(\)")]
    for make, message in bad:
        with pytest.raises(ValueError, match=message) as info:
            make()
        assert isinstance(info.value, VizgradError)
    D.Gamma(t([-1.0]), 1.0, validate_args=False)            # checks can be turned off
    for make in (lambda: TD.Gamma(tt([1.0, -1.0]), 1.0), lambda: TD.Binomial(tt([2.5]), probs=tt([0.5])),
                 lambda: TD.MultivariateNormal(tt([0.0, 0.0]), tt([[1.0, 2.0], [2.0, 1.0]]))):
        with pytest.raises(ValueError):             # PyTorch refuses the same parameters
            make()


def test_values_outside_the_support_raise_vizgrad_errors():
    outside = [(D.Gamma(2.0, 1.0), t([-1.0]), r"GreaterThanEq\(lower_bound=0.0\)"),
               (D.Beta(2.0, 2.0), t([1.5]), r"Interval\(lower_bound=0.0, upper_bound=1.0\)"),
               (D.Dirichlet(t([1.0, 1.0])), t([0.3, 0.3]), r"Simplex\(\)"),
               (D.Poisson(t([1.0])), t([1.5]), r"IntegerGreaterThan\(lower_bound=0\)"),
               (D.LogNormal(0.0, 1.0), t([0.0]), r"GreaterThan\(lower_bound=0.0\)"),
               (D.HalfNormal(1.0), t([-0.5]), r"GreaterThanEq"),
               (D.Geometric(probs=t([0.5])), t([-1.0]), r"IntegerGreaterThan"),
               (D.Binomial(3, probs=t([0.5])), t([4.0]),
                r"IntegerInterval\(lower_bound=0, upper_bound=tensor\(\[3\.\]"),
               (D.OneHotCategorical(probs=t([0.5, 0.5])), t([1.0, 1.0]), r"OneHot\(\)")]
    for dist, value, support in outside:
        with pytest.raises(ValueError, match=rf"{type(dist).__name__}.log_prob: expected value argument .* "
                                             rf"within the support \({support}") as info:
            dist.log_prob(value)
        assert isinstance(info.value, VizgradError)
    assert D.Gamma(2.0, 1.0, validate_args=False).log_prob(t([-1.0])).isnan().item()
    with pytest.raises(ShapeError, match=r"does not end with the event_shape \(3,\)"):
        D.Dirichlet(t([1.0, 1.0, 1.0])).log_prob(t([0.5, 0.5]))
    with pytest.raises(ShapeError, match=r"not broadcastable with batch_shape \+ event_shape \(2,\)"):
        D.Gamma(t([1.0, 2.0]), 1.0).log_prob(t([1.0, 1.0, 1.0]))
    with pytest.raises(ArgumentTypeError, match="Gamma.log_prob: value must be a Tensor"):
        D.Gamma(1.0, 1.0).log_prob(1.0)


def test_argument_errors_say_what_is_wrong():
    with pytest.raises(ShapeError, match="Dirichlet: `concentration` parameter must be at least one-dimensional"):
        D.Dirichlet(t(1.0))
    with pytest.raises(ArgumentError, match="exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(t([0.0, 0.0]), t(np.eye(2)), scale_tril=t(np.eye(2)))
    with pytest.raises(ArgumentError, match="exactly one of .* got none"):
        D.MultivariateNormal(t([0.0, 0.0]))
    with pytest.raises(ShapeError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(t(0.0), t(np.eye(1)))
    with pytest.raises(ShapeError, match=r"covariance_matrix of shape \(3, 3\) does not match loc of shape \(2,\)"):
        D.MultivariateNormal(t([0.0, 0.0]), t(np.eye(3)))
    with pytest.raises(ShapeError, match="do not broadcast together"):
        D.Gamma(t([1.0, 2.0]), t([1.0, 2.0, 3.0]))
    with pytest.raises(ArgumentTypeError, match="Gamma: rate must be a Tensor or a number, got str"):
        D.Gamma(1.0, "fast")
    with pytest.raises(DTypeError, match="Poisson: rate must be a floating-point tensor"):
        D.Poisson(vg.tensor([1, 2]))
    with pytest.raises(ArgumentError, match="either `probs` or `logits`"):
        D.Geometric()
    with pytest.raises(ArgumentTypeError, match="transforms must be a Transform or a list of Transforms"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    with pytest.raises(NotImplementedError, match="Poisson does not define entropy"):
        D.Poisson(t([1.0])).entropy()
    with pytest.raises(NotImplementedError, match="StudentT does not define cdf"):
        D.StudentT(3.0).cdf(t(0.0))
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Poisson(t([1.0])).rsample()


def test_normal_icdf_and_constraint_checks():
    loc, scale, p = RNG.normal(size=4), positive(4), RNG.uniform(0.001, 0.999, 4)
    ours_loc, theirs_loc = t(loc, True), tt(loc, True)
    ours, theirs = D.Normal(ours_loc, t(scale)), TD.Normal(theirs_loc, tt(scale))
    close(ours.icdf(t(p)), theirs.icdf(tt(p)), rtol=1e-12)
    close(ours.cdf(ours.icdf(t(p))), p, rtol=1e-12)
    checks = [(constraints.positive, [1.0, 0.0, -1.0], [True, False, False]),
              (constraints.nonnegative_integer, [0.0, 2.0, 1.5, -1.0], [True, True, False, False]),
              (constraints.unit_interval, [0.0, 1.0, 1.1], [True, True, False]),
              (constraints.integer_interval(0, 3), [0.0, 3.0, 4.0], [True, True, False]),
              (constraints.half_open_interval(0.0, 1.0), [0.0, 1.0], [True, False])]
    for constraint, values, expected in checks:
        assert constraint.check(t(values)).tolist() == expected
    assert constraints.simplex.check(t([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.lower_cholesky.check(t([[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]])).tolist() == \
        [True, False]
    assert constraints.positive_definite.check(t([[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]])).tolist() == \
        [True, False]
    assert repr(constraints.real_vector) == repr(TD.constraints.real_vector)
    assert repr(constraints.nonnegative_integer) == repr(TD.constraints.nonnegative_integer)
    assert repr(D.Uniform.support) == "Dependent()" and constraints.is_dependent(D.Uniform.support)


def test_expand_reaches_the_distribution_inside():
    """Beta, StudentT and OneHotCategorical sample through a distribution they hold: expand expands it too."""
    for dist in (D.Beta(t([2.0, 3.0]), t([1.0, 2.0])), D.StudentT(t([3.0, 4.0])),
                 D.OneHotCategorical(probs=t([[0.2, 0.8], [0.5, 0.5]]))):
        expanded = dist.expand((3, 2))
        assert tuple(expanded.sample((5,)).shape) == (5, 3, 2) + dist.event_shape, type(dist).__name__


def test_cdf_checks_the_value_against_the_support():
    """Exponential's and Uniform's cdf refuse values outside the support, as PyTorch's (and the
    other distributions' here) do, instead of returning a value that is no probability."""
    with pytest.raises(ValueError, match="support"):
        D.Exponential(2.0).cdf(t(-1.0))
    with pytest.raises(ValueError, match="support"):
        D.Uniform(0.0, 1.0).cdf(t(2.0))
    close(D.Exponential(2.0, validate_args=False).cdf(t(0.5)), TD.Exponential(2.0).cdf(tt(0.5)))
