"""torch.distributions' export list in vizgrad.distributions: the transforms (values, inverses,
log-Jacobians, shapes), ``biject_to``/``transform_to``, and the distributions added with them
(values, dtypes, shapes, reparameterised and log_prob gradients, errors, reprs) against PyTorch,
the oracle (skipped without it)."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import distributions as D
from vizgrad.distributions import constraints
from vizgrad.errors import ArgumentError, ShapeError

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(11)


def t(values, requires_grad=False):
    return vg.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def tt(values, requires_grad=False):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def close(mine, reference, rtol=1e-9, atol=1e-11, err_msg=""):
    mine, reference = mine.detach().numpy(), reference.detach().numpy()
    assert mine.shape == reference.shape, f"{err_msg}: shape {mine.shape} != {reference.shape}"
    np.testing.assert_allclose(mine, reference, rtol=rtol, atol=atol, err_msg=err_msg)


def test_every_torch_name_is_exported():
    assert [name for name in TD.__all__ if not hasattr(D, name)] == []
    assert [name for name in D.__all__ if not hasattr(D, name)] == []
    for name in set(TD.transforms.__all__) - {"_InverseTransform"}:
        assert hasattr(D.transforms, name), name


TRANSFORMS = [
    ("PowerTransform", lambda m: m.PowerTransform(2.5), (3, 4), "positive"),
    ("PowerTransform tensor", lambda m: m.PowerTransform(
        (vg if m is D.transforms else torch).tensor([-1.5, 0.5, 2.0, 3.0],
                                                   dtype=(vg if m is D.transforms else torch).float64)),
     (3, 4), "positive"),
    ("SoftplusTransform", lambda m: m.SoftplusTransform(), (3, 4), "real"),
    ("StickBreakingTransform", lambda m: m.StickBreakingTransform(), (3, 4), "real"),
    ("CorrCholeskyTransform", lambda m: m.CorrCholeskyTransform(), (2, 6), "real"),
    ("ReshapeTransform", lambda m: m.ReshapeTransform((2, 3), (3, 2)), (4, 2, 3), "real"),
    ("IndependentTransform", lambda m: m.IndependentTransform(m.ExpTransform(), 1), (3, 4), "real"),
    ("CatTransform", lambda m: m.CatTransform([m.ExpTransform(), m.SoftplusTransform()], dim=-1, lengths=[1, 3]),
     (3, 4), "real"),
    ("CatTransform dim 0", lambda m: m.CatTransform([m.ExpTransform(), m.AffineTransform(1.0, 2.0)], dim=0,
                                                    lengths=[1, 2]), (3, 4), "real"),
    ("StackTransform", lambda m: m.StackTransform([m.ExpTransform(), m.SoftplusTransform()], dim=1), (3, 2), "real"),
    ("CumulativeDistributionTransform", lambda m: m.CumulativeDistributionTransform(
        (D.Normal(t(0.5), t(2.0)) if m is D.transforms else TD.Normal(tt(0.5), tt(2.0)))), (3, 4), "real"),
]


@pytest.mark.parametrize("name, make, shape, domain", TRANSFORMS, ids=[row[0] for row in TRANSFORMS])
def test_transform_matches_torch(name, make, shape, domain):
    x = RNG.normal(size=shape)
    if domain == "positive":
        x = np.abs(x) + 0.2
    mine, theirs = make(D.transforms), make(TD.transforms)
    xv, xt = t(x, requires_grad=True), tt(x, requires_grad=True)
    y, yt = mine(xv), theirs(xt)
    close(y, yt, err_msg=f"{name} forward")
    assert y.dtype == vg.float64
    close(mine.inv(y), xt, rtol=1e-7, atol=1e-9, err_msg=f"{name} inverse")
    assert tuple(mine.forward_shape(shape)) == tuple(theirs.forward_shape(shape))
    assert tuple(mine.inverse_shape(y.shape)) == tuple(theirs.inverse_shape(yt.shape))
    assert mine.bijective == theirs.bijective and repr(mine) == repr(theirs)
    assert mine.domain.event_dim == theirs.domain.event_dim
    assert mine.codomain.event_dim == theirs.codomain.event_dim
    assert bool(mine.codomain.check(y).all()) and bool(theirs.codomain.check(yt).all())
    ladj, ladjt = mine.log_abs_det_jacobian(xv, y), theirs.log_abs_det_jacobian(xt, yt)
    close(ladj, ladjt, rtol=1e-8, atol=1e-10, err_msg=f"{name} log_abs_det_jacobian")
    assert ladj.requires_grad == ladjt.requires_grad
    if not ladjt.requires_grad:                      # a constant (ReshapeTransform's zeros)
        return
    ladj.sum().backward()
    ladjt.sum().backward()
    close(xv.grad, xt.grad, rtol=1e-7, atol=1e-9, err_msg=f"{name} gradient of log_abs_det_jacobian")


def test_matrix_transforms_match_torch():
    x = RNG.normal(size=(2, 3, 3))
    for name in ("LowerCholeskyTransform", "PositiveDefiniteTransform"):
        mine, theirs = getattr(D.transforms, name)(), getattr(TD.transforms, name)()
        xv, xt = t(x, requires_grad=True), tt(x, requires_grad=True)
        y, yt = mine(xv), theirs(xt)
        close(y, yt, err_msg=name)
        close(mine.inv(y), theirs.inv(yt), rtol=1e-8, err_msg=f"{name} inverse")
        assert bool(mine.codomain.check(y).all())
        (y ** 2).sum().backward()
        (yt ** 2).sum().backward()
        close(xv.grad, xt.grad, rtol=1e-8, err_msg=f"{name} gradient")
    softmax, softmax_t = D.transforms.SoftmaxTransform(), TD.transforms.SoftmaxTransform()
    close(softmax(t(x)), softmax_t(tt(x)))
    assert softmax.bijective is False and softmax == D.transforms.SoftmaxTransform()


def test_transform_errors():
    with pytest.raises(ShapeError, match="D\\(D-1\\)/2"):
        D.CorrCholeskyTransform()(t(np.zeros(4)))
    with pytest.raises(ShapeError, match="elements"):
        D.ReshapeTransform((2, 3), (4,))
    with pytest.raises(ShapeError, match="lengths add up to 3"):
        D.CatTransform([D.ExpTransform(), D.ExpTransform()], dim=0, lengths=[1, 2])(t(np.zeros(4)))
    with pytest.raises(ArgumentError, match="2 transforms but 1 lengths"):
        D.CatTransform([D.ExpTransform(), D.ExpTransform()], lengths=[1])
    with pytest.raises(ShapeError, match="expected 2"):
        D.StackTransform([D.ExpTransform(), D.ExpTransform()])(t(np.zeros(3)))
    assert D.PowerTransform(2.0) == D.PowerTransform(2.0) and D.PowerTransform(2.0) != D.PowerTransform(3.0)


CONSTRAINTS = [
    ("real", lambda c: c.real, (4,)),
    ("positive", lambda c: c.positive, (4,)),
    ("nonnegative", lambda c: c.nonnegative, (4,)),
    ("greater_than", lambda c: c.greater_than(2.0), (4,)),
    ("greater_than_eq", lambda c: c.greater_than_eq(-1.0), (4,)),
    ("less_than", lambda c: c.less_than(1.0), (4,)),
    ("unit_interval", lambda c: c.unit_interval, (4,)),
    ("interval", lambda c: c.interval(1.0, 3.0), (4,)),
    ("half_open_interval", lambda c: c.half_open_interval(-2.0, 3.0), (4,)),
    ("simplex", lambda c: c.simplex, (3, 4)),
    ("corr_cholesky", lambda c: c.corr_cholesky, (2, 3)),
    ("real_vector", lambda c: c.real_vector, (3, 4)),
    ("independent positive", lambda c: c.independent(c.positive, 1), (3, 4)),
    ("cat", lambda c: c.cat([c.positive, c.interval(0.0, 2.0)], dim=-1, lengths=[2, 2]), (3, 4)),
    ("stack", lambda c: c.stack([c.positive, c.real], dim=-1), (3, 2)),
]


@pytest.mark.parametrize("name, make, shape", CONSTRAINTS, ids=[row[0] for row in CONSTRAINTS])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_match_torch(registry, name, make, shape):
    mine, theirs = getattr(D, registry)(make(constraints)), getattr(TD, registry)(make(TD.constraints))
    assert repr(mine) == repr(theirs)
    x = RNG.normal(size=shape)
    y, yt = mine(t(x)), theirs(tt(x))
    close(y, yt, rtol=1e-8, err_msg=f"{registry}({name})")
    assert bool(make(constraints).check(y).all())
    if mine.bijective:
        close(mine.log_abs_det_jacobian(t(x), y), theirs.log_abs_det_jacobian(tt(x), yt), rtol=1e-8)


def test_registry_matrix_constraints_and_errors():
    x = RNG.normal(size=(2, 3, 3))
    for name in ("lower_cholesky", "positive_definite"):
        mine = D.transform_to(getattr(constraints, name))
        theirs = TD.transform_to(getattr(TD.constraints, name))
        assert repr(mine) == repr(theirs)
        close(mine(t(x)), theirs(tt(x)))
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        D.biject_to(constraints.lower_cholesky)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean"):
        D.transform_to(constraints.boolean)


FAMILIES = {
    "HalfCauchy": ([[1.5, 0.7]], [[1.2, 2.5]]),
    "InverseGamma": ([[3.0, 2.5], [2.0, 0.7]], [[0.6, 1.9]]),
    "Pareto": ([[1.0, 0.5], [3.0, 1.5]], [[1.2, 2.5]]),
    "Weibull": ([[2.0, 0.8], [1.5, 0.6]], [[0.4, 2.5]]),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_torch(name):
    parameters, (value,) = FAMILIES[name][0], FAMILIES[name][1]
    mine = getattr(D, name)(*[t(p, requires_grad=True) for p in parameters])
    given_t = [tt(p, requires_grad=True) for p in parameters]
    theirs = getattr(TD, name)(*given_t)
    assert repr(mine) == repr(theirs) and mine.batch_shape == tuple(theirs.batch_shape)
    assert mine.has_rsample == theirs.has_rsample
    if name != "Pareto":                             # its support shows the scale tensor: see below
        assert repr(mine.support) == repr(theirs.support)
    for moment in ("mean", "mode", "variance"):
        close(getattr(mine, moment), getattr(theirs, moment), err_msg=f"{name}.{moment}")
    close(mine.entropy(), theirs.entropy(), err_msg=f"{name}.entropy")
    close(mine.cdf(t(value)), theirs.cdf(tt(value)), err_msg=f"{name}.cdf")
    if name != "InverseGamma":                       # Gamma, its base, has no icdf (as in PyTorch)
        close(mine.icdf(t([0.3, 0.8])), theirs.icdf(tt([0.3, 0.8])), err_msg=f"{name}.icdf")
    log_prob, log_prob_t = mine.log_prob(t(value)), theirs.log_prob(tt(value))
    close(log_prob, log_prob_t, err_msg=f"{name}.log_prob")
    assert log_prob.dtype == vg.float64
    log_prob.sum().backward()
    log_prob_t.sum().backward()
    mine_grads = [p.grad for p in _parameters(mine, name)]
    for got, reference in zip(mine_grads, given_t):
        close(got, reference.grad, rtol=1e-8, err_msg=f"{name}: gradient of log_prob")
    expanded = mine.expand((3, 2))
    assert expanded.batch_shape == (3, 2) and expanded.sample().shape == (3, 2)
    close(expanded.log_prob(t(value)), theirs.expand((3, 2)).log_prob(tt(value)))


def _parameters(distribution, name):
    """The leaf tensors a family was made from, in its constructor's order."""
    names = {"HalfCauchy": ["scale"], "InverseGamma": ["concentration", "rate"], "Pareto": ["scale", "alpha"],
             "Weibull": ["scale", "concentration"]}[name]
    return [getattr(distribution, n) for n in names]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_rsample_gradients(name):
    """rsample's shape, support and gradient: d E[g(x)] / dθ by the reparameterisation agrees
    with the score-function estimator on the same draws (both unbiased) to Monte Carlo error
    (but for Pareto's scale, which moves the support, so the score estimator does not apply)."""
    parameters = [t(p[:1], requires_grad=True) for p in FAMILIES[name][0]]
    distribution = getattr(D, name)(*parameters)
    vg.manual_seed(3)
    x = distribution.rsample((40_000,))
    assert x.shape == (40_000, 1) and x.dtype == vg.float64
    assert bool(distribution.support.check(x).all())
    g = lambda v: (-v).exp()                         # bounded, so both estimators have finite variance
    g(x).mean().backward()
    pathwise = [p.grad.item() for p in parameters]
    for p in parameters:
        p.grad = None
    fixed = x.detach()
    (g(fixed) * getattr(D, name)(*parameters).log_prob(fixed)).mean().backward()
    score = [p.grad.item() for p in parameters]
    kept = slice(1, None) if name == "Pareto" else slice(None)
    np.testing.assert_allclose(pathwise[kept], score[kept], rtol=0.1, atol=0.01)
    assert all(abs(value) > 1e-3 for value in pathwise)


@pytest.mark.parametrize("name, arguments, parameter", [
    ("HalfCauchy", (-1.0,), "scale"),
    ("InverseGamma", (0.0, 1.0), "concentration"),
    ("Pareto", (1.0, -2.0), "rate"),                 # alpha is its Exponential base's rate, as in PyTorch
    ("Weibull", (-1.0, 1.0), "scale"),
])
def test_family_invalid_parameters(name, arguments, parameter):
    with pytest.raises(ArgumentError, match=f"(?i)expected parameter {parameter}"):
        getattr(D, name)(*[t(a) for a in arguments])
    with pytest.raises(ValueError, match=f"(?i)expected parameter {parameter}"):
        getattr(TD, name)(*[tt(a) for a in arguments])


def test_family_support_errors():
    with pytest.raises(ArgumentError, match="support"):
        D.Pareto(t(2.0), t(3.0)).log_prob(t(1.0))
    with pytest.raises(ArgumentError, match="support"):
        D.Weibull(t(2.0), t(3.0)).log_prob(t(-1.0))
    pareto, pareto_t = D.Pareto(t(2.0), t(3.0)), TD.Pareto(tt(2.0), tt(3.0))
    assert repr(pareto) == repr(pareto_t) and repr(pareto.support) == repr(pareto_t.support)


def _pair(make):
    """(vizgrad's, PyTorch's) distribution from ``make(module, tensor)``, with the float64
    parameters ``tensor`` made (leaves that require grad) kept in order for each."""
    made = {D: [], TD: []}

    def maker(module, to_tensor):
        def tensor(values, grad=True):
            value = to_tensor(values, requires_grad=grad)
            if grad:
                made[module].append(value)
            return value
        return tensor

    mine, theirs = make(D, maker(D, t)), make(TD, maker(TD, tt))
    return mine, theirs, made[D], made[TD]


# name: (make(module, tensor), a value in the support, the properties to compare, rtol)
TABLE = {
    "Multinomial": (lambda m, p: m.Multinomial(6, probs=p([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
                    [[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]], ("mean", "variance", "entropy"), 1e-6),
    "Multinomial logits": (lambda m, p: m.Multinomial(4, logits=p([0.3, -1.0, 2.0])), [[1.0, 0.0, 3.0]],
                           ("mean", "variance"), 1e-9),
    "NegativeBinomial probs": (lambda m, p: m.NegativeBinomial(p([3.0, 0.5]), probs=p([0.3, 0.6])), [[0.0, 4.0]],
                               ("mean", "mode", "variance"), 1e-9),
    "NegativeBinomial logits": (lambda m, p: m.NegativeBinomial(p([3.0, 2.5]), logits=p([0.3, -1.0])), [[5.0, 1.0]],
                                ("mean", "mode", "variance"), 1e-9),
    "MixtureSameFamily": (lambda m, p: m.MixtureSameFamily(m.Categorical(logits=p([[0.2, 0.3, -0.5], [1.0, 0.1, 0.8]])),
                                                           m.Normal(p([[-1.0, 0.0, 2.0], [0.5, 0.1, -0.3]]),
                                                                    p([[1.0, 0.5, 2.0], [0.3, 1.1, 0.7]]))),
                          [[0.3, -1.2], [2.0, 0.1]], ("mean", "variance"), 1e-9),
    "MixtureSameFamily events": (lambda m, p: m.MixtureSameFamily(
        m.Categorical(probs=p([0.2, 0.8])), m.Independent(m.Normal(p([[0.0, 1.0], [2.0, -1.0]]), p([[1.0, 0.5], [0.3, 2.0]])), 1)),
        [[0.3, -1.2], [2.0, 0.1]], ("mean", "variance"), 1e-9),
    "LowRankMultivariateNormal one": (lambda m, p: m.LowRankMultivariateNormal(
        p([0.0, 1.0]), p([[1.0], [-0.5]]), p([0.5, 1.5])), [[0.3, -1.2]], ("entropy", "precision_matrix"), 1e-9),
    "LowRankMultivariateNormal": (lambda m, p: m.LowRankMultivariateNormal(
        p([[0.0, 1.0, -1.0], [0.5, 0.2, 0.1]]), p([[1.0, 0.2], [-0.5, 0.3], [0.1, 2.0]]), p([0.5, 1.5, 0.7])),
        [[0.3, -1.2, 0.5], [2.0, 0.1, 0.0]], ("mean", "variance", "entropy", "covariance_matrix",
                                              "precision_matrix", "scale_tril"), 1e-9),
    "RelaxedBernoulli": (lambda m, p: m.RelaxedBernoulli(p(0.7, grad=False), probs=p([0.3, 0.8])), [[0.3, 0.9]],
                         (), 1e-9),
    "RelaxedOneHotCategorical": (lambda m, p: m.RelaxedOneHotCategorical(p(0.5, grad=False), logits=p([0.3, 0.8, -1.0])),
                                 [[0.3, 0.2, 0.5]], (), 1e-9),
    "ContinuousBernoulli": (lambda m, p: m.ContinuousBernoulli(probs=p([0.2, 0.5, 0.9])), [[0.3, 0.6, 0.95]],
                            ("mean", "variance", "entropy"), 1e-9),
    "ContinuousBernoulli logits": (lambda m, p: m.ContinuousBernoulli(logits=p([-1.0, 0.001, 2.0])), [[0.3, 0.6, 0.95]],
                                   ("mean", "variance", "entropy"), 1e-9),
    "Kumaraswamy": (lambda m, p: m.Kumaraswamy(p([2.0, 0.5]), p([3.0, 1.5])), [[0.3, 0.7]],
                    ("mean", "mode", "variance", "entropy"), 1e-9),
    "FisherSnedecor": (lambda m, p: m.FisherSnedecor(p([5.0, 1.5]), p([10.0, 3.0])), [[0.3, 1.7]],
                       ("mean", "mode", "variance"), 1e-9),
    "LogisticNormal": (lambda m, p: m.LogisticNormal(p([0.5, -0.2]), p([1.0, 2.0])), [[0.3, 0.2, 0.5]], (), 1e-9),
    "VonMises": (lambda m, p: m.VonMises(p([0.0, 1.0, -2.0]), p([4.0, 0.5, 10.0])), [[0.3, 2.0, -1.0]],
                 ("mean", "mode", "variance"), 1e-9),
    "Wishart": (lambda m, p: m.Wishart(p([5.0, 3.5]), covariance_matrix=p([[2.0, 0.3], [0.3, 1.0]])),
                [[[1.5, 0.2], [0.2, 0.7]], [[3.0, -0.5], [-0.5, 1.0]]],
                ("mean", "mode", "variance", "entropy", "precision_matrix", "scale_tril"), 1e-9),
    "Wishart scale_tril": (lambda m, p: m.Wishart(p([4.0, 3.0]), scale_tril=p([[[1.0, 0.0], [0.3, 2.0]]])),
                           [[[1.5, 0.2], [0.2, 0.7]]], ("mean", "variance", "entropy", "covariance_matrix"), 1e-9),
    "LKJCholesky": (lambda m, p: m.LKJCholesky(3, p([0.5, 2.0])),
                    [[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]], (), 1e-9),
    "OneHotCategoricalStraightThrough": (lambda m, p: m.OneHotCategoricalStraightThrough(probs=p([0.2, 0.3, 0.5])),
                                         [[0.0, 1.0, 0.0]], ("mean", "mode", "variance", "entropy"), 1e-9),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_distribution_matches_torch(name):
    make, value, properties, rtol = TABLE[name]
    mine, theirs, leaves, leaves_t = _pair(make)
    assert repr(mine) == repr(theirs)
    assert mine.batch_shape == tuple(theirs.batch_shape) and mine.event_shape == tuple(theirs.event_shape)
    assert repr(mine.support) == repr(theirs.support) and mine.has_rsample == theirs.has_rsample
    for attribute in properties:
        got, expected = getattr(mine, attribute), getattr(theirs, attribute)
        got, expected = (got(), expected()) if callable(got) else (got, expected)
        close(got, expected, rtol=rtol, atol=1e-10, err_msg=f"{name}.{attribute}")
    log_prob, log_prob_t = mine.log_prob(t(value)), theirs.log_prob(tt(value))
    close(log_prob, log_prob_t, rtol=1e-9, atol=1e-10, err_msg=f"{name}.log_prob")
    assert log_prob.dtype == vg.float64
    log_prob.sum().backward()
    log_prob_t.sum().backward()
    for leaf, leaf_t in zip(leaves, leaves_t):
        got, expected = leaf.grad, leaf_t.grad
        if name.endswith("scale_tril") and leaf.ndim >= 2:     # PyTorch's cholesky_solve also "differentiates"
            got, expected = got.tril(), expected.tril()         # the upper triangle, which a factor never reads
        close(got, expected, rtol=1e-8, atol=1e-10, err_msg=f"{name}: gradient of log_prob")
    vg.manual_seed(0)
    draws = mine.sample((500,))
    assert draws.shape == (500,) + tuple(theirs.batch_shape + theirs.event_shape) and draws.dtype == vg.float64
    if name != "RelaxedOneHotCategorical":           # the simplex's 1e-6 sum check fails at low temperature in both
        assert bool(mine.support.check(draws).all())
    if mine.has_rsample:
        mine, _, leaves, _ = _pair(make)               # a fresh graph: the first backward freed its parents'
        sample = mine.rsample((3,))
        assert sample.shape == (3,) + tuple(theirs.batch_shape + theirs.event_shape)
        (sample * t(np.arange(1.0, 1.0 + sample.shape[-1]))).sum().backward()
        assert any(leaf.grad is not None and bool((leaf.grad != 0).any()) for leaf in leaves), name
    expanded, expanded_t = mine.expand((4,) + tuple(mine.batch_shape)), theirs.expand((4,) + tuple(theirs.batch_shape))
    assert expanded.batch_shape == tuple(expanded_t.batch_shape)
    first = np.asarray(value)[:1]                     # broadcasts with the new batch dim
    close(expanded.log_prob(t(first)), expanded_t.log_prob(tt(first)), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name, make, moments", [
    ("Multinomial", lambda m, p: m.Multinomial(5, probs=p([0.2, 0.3, 0.5])), ("mean", "variance")),
    ("NegativeBinomial", lambda m, p: m.NegativeBinomial(p([3.0]), probs=p([0.4])), ("mean", "variance")),
    ("MixtureSameFamily", lambda m, p: m.MixtureSameFamily(m.Categorical(probs=p([0.3, 0.7])),
                                                           m.Normal(p([-2.0, 1.0]), p([0.5, 1.0]))), ("mean", "variance")),
    ("LowRankMultivariateNormal", lambda m, p: m.LowRankMultivariateNormal(
        p([0.0, 1.0]), p([[1.0], [0.5]]), p([0.5, 1.5])), ("mean", "variance")),
    ("ContinuousBernoulli", lambda m, p: m.ContinuousBernoulli(probs=p([0.2, 0.5])), ("mean", "variance")),
    ("Kumaraswamy", lambda m, p: m.Kumaraswamy(p([2.0]), p([3.0])), ("mean", "variance")),
    ("FisherSnedecor", lambda m, p: m.FisherSnedecor(p([6.0]), p([12.0])), ("mean", "variance")),
    ("GeneralizedPareto", lambda m, p: m.GeneralizedPareto(p([0.5]), p([2.0]), p([0.1])), ("mean", "variance")),
    ("Wishart", lambda m, p: m.Wishart(p(6.0), covariance_matrix=p([[1.0, 0.3], [0.3, 0.5]])), ("mean", "variance")),
])
def test_sample_moments(name, make, moments):
    """The sampler draws from the law the formulas describe: sample moments within 5 standard errors."""
    mine, _, _, _ = _pair(make)
    vg.manual_seed(1)
    draws = mine.sample((40_000,)).numpy()
    mean, variance = mine.mean.detach().numpy(), mine.variance.detach().numpy()
    np.testing.assert_allclose(draws.mean(0), mean, atol=5 * np.sqrt(variance.max() / len(draws)))
    np.testing.assert_allclose(draws.var(0), variance, rtol=0.05)


def test_generalized_pareto_matches_torch():
    """In float32 (PyTorch's own compares ξ with a float32 zero, so refuses float64)."""
    def f32(values, requires_grad=False):
        return vg.tensor(np.asarray(values, dtype=np.float32), requires_grad=requires_grad)

    def f32t(values, requires_grad=False):
        return torch.tensor(np.asarray(values, dtype=np.float32), requires_grad=requires_grad)

    arguments = ([0.0, 1.0, 0.5], [1.0, 2.0, 0.5], [0.0, 0.3, -0.4])
    mine = D.GeneralizedPareto(*[f32(a, True) for a in arguments])
    leaves_t = [f32t(a, True) for a in arguments]
    theirs = TD.GeneralizedPareto(*leaves_t)
    assert repr(mine) == repr(theirs)
    bare, bare_t = D.GeneralizedPareto(*[f32(a) for a in arguments]), TD.GeneralizedPareto(*[f32t(a) for a in arguments])
    assert repr(bare.support).replace("vizgrad", "torch") == repr(bare_t.support)
    value, probabilities = [0.5, 1.5, 0.9], [0.2, 0.5, 0.7]
    for attribute in ("mean", "variance", "mode", "entropy"):
        got, expected = getattr(mine, attribute), getattr(theirs, attribute)
        got, expected = (got(), expected()) if callable(got) else (got, expected)
        close(got, expected, rtol=1e-6, atol=1e-6, err_msg=attribute)
    close(mine.cdf(f32(value)), theirs.cdf(f32t(value)), rtol=1e-6, atol=1e-6)
    close(mine.icdf(f32(probabilities)), theirs.icdf(f32t(probabilities)), rtol=1e-6, atol=1e-6)
    log_prob, log_prob_t = mine.log_prob(f32(value)), theirs.log_prob(f32t(value))
    close(log_prob, log_prob_t, rtol=1e-6, atol=1e-6)
    assert log_prob.dtype == vg.float32
    log_prob.sum().backward()
    log_prob_t.sum().backward()
    for leaf, leaf_t in zip((mine.loc, mine.scale, mine.concentration), leaves_t):
        close(leaf.grad, leaf_t.grad, rtol=1e-5, atol=1e-5)


def test_exponential_family_entropy_is_the_bregman_form():
    """ExponentialFamily.entropy (through autograd of the log normaliser) agrees with
    ContinuousBernoulli's closed form, value and gradient in the logits."""
    logits = t([-1.5, 0.7, 3.0], requires_grad=True)
    distribution = D.ContinuousBernoulli(logits=logits)
    assert isinstance(distribution, D.ExponentialFamily)
    bregman = D.ExponentialFamily.entropy(distribution)
    close(bregman, distribution.entropy(), rtol=1e-9)
    close(bregman, TD.ExponentialFamily.entropy(TD.ContinuousBernoulli(logits=tt([-1.5, 0.7, 3.0]))), rtol=1e-9)
    bregman.sum().backward()
    closed_logits = t([-1.5, 0.7, 3.0], requires_grad=True)
    D.ContinuousBernoulli(logits=closed_logits).entropy().sum().backward()
    close(logits.grad, closed_logits.grad, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("make, error, match", [
    (lambda: D.Multinomial(2.5, probs=t([0.5, 0.5])), vg.errors.ArgumentTypeError, "total_count must be an int"),
    (lambda: D.Multinomial(3, probs=t([0.5, -0.5])), ArgumentError, "(?i)expected parameter probs"),
    (lambda: D.NegativeBinomial(t(-1.0), probs=t(0.5)), ArgumentError, "(?i)expected parameter total_count"),
    (lambda: D.NegativeBinomial(t(2.0), probs=t(1.0)), ArgumentError, "(?i)expected parameter probs"),
    (lambda: D.MixtureSameFamily(D.Normal(t(0.0), t(1.0)), D.Normal(t([0.0]), t([1.0]))), vg.errors.ArgumentTypeError,
     "Categorical"),
    (lambda: D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])), D.Normal(t([0.0] * 3), t([1.0] * 3))),
     ArgumentError, "does not equal"),
    (lambda: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5], [0.2]]), t([1.0, 1.0])), ShapeError,
     "2 x m"),
    (lambda: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, -1.0])), ArgumentError,
     "(?i)expected parameter cov_diag"),
    (lambda: D.ContinuousBernoulli(probs=t([1.5])), ArgumentError, "(?i)expected parameter probs"),
    (lambda: D.Kumaraswamy(t(-1.0), t(1.0)), ArgumentError, "(?i)expected parameter concentration1"),
    (lambda: D.FisherSnedecor(t(1.0), t(0.0)), ArgumentError, "(?i)expected parameter df2"),
    (lambda: D.GeneralizedPareto(t(0.0), t(-1.0), t(0.1)), ArgumentError, "(?i)expected parameter scale"),
    (lambda: D.RelaxedBernoulli(t(0.5), probs=t(1.5)), ArgumentError, "(?i)expected parameter probs"),
    (lambda: D.LogisticNormal(t([0.0]), t([-1.0])), ArgumentError, "(?i)expected parameter scale"),
    (lambda: D.VonMises(t(0.0), t(-1.0)), ArgumentError, "(?i)expected parameter concentration"),
    (lambda: D.LKJCholesky(1, t(1.0)), ArgumentError, "dim to be an integer greater than or equal to 2"),
    (lambda: D.LKJCholesky(3, t(0.0)), ArgumentError, "(?i)expected parameter concentration"),
    (lambda: D.Wishart(t(0.5), covariance_matrix=t(np.eye(2))), ArgumentError, "greater than ndim - 1 = 1"),
    (lambda: D.Wishart(t(3.0), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])), ArgumentError,
     "(?i)expected parameter covariance_matrix"),
    (lambda: D.Wishart(t(3.0)), ArgumentError, "Exactly one of"),
])
def test_invalid_parameters(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_support_errors_name_the_support():
    with pytest.raises(ArgumentError, match="support"):
        D.Multinomial(3, probs=t([0.5, 0.5])).log_prob(t([3.0, 2.0]))
    with pytest.raises(ArgumentError, match="support"):
        D.NegativeBinomial(t(2.0), probs=t(0.5)).log_prob(t(1.5))
    with pytest.raises(ArgumentError, match="support"):
        D.Kumaraswamy(t(2.0), t(2.0)).log_prob(t(1.5))


def test_von_mises_samples_are_angles_of_the_right_law():
    """Samples lie in [-π, π); their circular mean and variance match the formulas."""
    distribution = D.VonMises(t([0.5, -2.0]), t([4.0, 0.7]))
    vg.manual_seed(2)
    draws = distribution.sample((40_000,)).numpy()
    assert draws.min() >= -np.pi and draws.max() < np.pi
    resultant = np.exp(1j * draws).mean(0)
    np.testing.assert_allclose(np.angle(resultant), [0.5, -2.0], atol=0.03)
    np.testing.assert_allclose(1 - np.abs(resultant), distribution.variance.numpy(), atol=0.01)


def test_lkj_cholesky_samples():
    """Samples are correlation Cholesky factors; an off-diagonal correlation's variance matches
    PyTorch's sampler, 1/(2η + d - 1) for the first column."""
    distribution = D.LKJCholesky(4, t([0.5, 2.0]))
    vg.manual_seed(4)
    factors = distribution.sample((20_000,))
    assert factors.shape == (20_000, 2, 4, 4) and bool(distribution.support.check(factors).all())
    correlations = (factors @ factors.mT).numpy()
    np.testing.assert_allclose(np.diagonal(correlations, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(correlations[:, :, 1, 0].var(0), [1 / 4, 1 / 7], rtol=0.05)
    torch.manual_seed(4)
    reference = TD.LKJCholesky(4, tt([0.5, 2.0])).sample((20_000,))
    reference = (reference @ reference.mT).numpy()
    np.testing.assert_allclose(correlations[:, :, 3, 2].var(0), reference[:, :, 3, 2].var(0), rtol=0.06)


def test_wishart_rsample_gradient():
    """Bartlett's rsample is differentiable in df and the scale: d E[tr X]/dΣ = ν I, d/dν = tr Σ."""
    df = t(5.0, requires_grad=True)
    covariance = t([[1.0, 0.3], [0.3, 0.5]], requires_grad=True)
    vg.manual_seed(5)
    draws = D.Wishart(df, covariance_matrix=covariance).rsample((20_000,))
    draws.diagonal(dim1=-2, dim2=-1).sum(-1).mean().backward()
    np.testing.assert_allclose(df.grad.item(), 1.5, rtol=0.05)
    symmetric = covariance.grad.numpy()
    np.testing.assert_allclose((symmetric + symmetric.T) / 2, 5.0 * np.eye(2), atol=0.2)


def _kl_pairs():
    """(p, q) factories for every pair PyTorch registers among the added distributions."""
    cb = lambda m, p: m.ContinuousBernoulli(probs=p([0.2, 0.7]))
    cb2 = lambda m, p: m.ContinuousBernoulli(logits=p([0.3, -2.0]))
    pareto = lambda m, p: m.Pareto(p([1.0, 2.0]), p([3.0, 2.5]))
    lowrank = lambda m, p: m.LowRankMultivariateNormal(p([0.0, 1.0, -1.0]), p([[1.0, 0.2], [-0.5, 0.3], [0.1, 2.0]]),
                                                       p([0.5, 1.5, 0.7]))
    lowrank2 = lambda m, p: m.LowRankMultivariateNormal(p([[0.5, 0.0, 1.0], [0.0, 0.0, 0.0]]), p([[0.4], [1.0], [-0.3]]),
                                                        p([1.0, 0.5, 2.0]))
    mvn = lambda m, p: m.MultivariateNormal(p([0.2, -0.3, 0.5]), scale_tril=p([[1.0, 0.0, 0.0], [0.3, 1.2, 0.0],
                                                                                [-0.2, 0.1, 0.8]]))
    return {
        "CB-CB": (cb, cb2), "LowRank-LowRank": (lowrank, lowrank2), "MVN-LowRank": (mvn, lowrank2),
        "LowRank-MVN": (lowrank2, mvn), "Pareto-Pareto": (pareto, lambda m, p: m.Pareto(p([0.5, 3.0]), p([2.0, 1.0]))),
        "Beta-CB": (lambda m, p: m.Beta(p([2.0, 0.5]), p([3.0, 1.5])), cb),
        "Uniform-CB": (lambda m, p: m.Uniform(p([0.1, 0.0]), p([0.9, 0.5])), cb),
        "CB-Exponential": (cb, lambda m, p: m.Exponential(p([2.0, 0.5]))),
        "CB-Normal": (cb, lambda m, p: m.Normal(p([0.3, -1.0]), p([1.0, 0.5]))),
        "CB-Uniform": (cb, lambda m, p: m.Uniform(p([-0.5, 0.2]), p([1.5, 2.0]))),
        "Pareto-Exponential": (pareto, lambda m, p: m.Exponential(p([2.0, 0.5]))),
        "Pareto-Gamma": (pareto, lambda m, p: m.Gamma(p([2.0, 0.5]), p([1.0, 3.0]))),
        "Pareto-Normal": (lambda m, p: m.Pareto(p([1.0, 2.0]), p([3.0, 1.5])), lambda m, p: m.Normal(p([0.3, -1.0]),
                                                                                                    p([1.0, 0.5]))),
        "Uniform-Pareto": (lambda m, p: m.Uniform(p([1.5, 0.5]), p([3.0, 4.0])), pareto),
        "Normal-Pareto": (lambda m, p: m.Normal(p([0.3, -1.0]), p([1.0, 0.5])), pareto),
        "Pareto-CB": (pareto, cb),
    }


@pytest.mark.parametrize("pair", sorted(_kl_pairs()))
def test_kl_divergence_matches_torch(pair):
    make_p, make_q = _kl_pairs()[pair]
    p, p_t, leaves, leaves_t = _pair(make_p)
    q, q_t, _, _ = _pair(make_q)
    kl, kl_t = D.kl_divergence(p, q), TD.kl_divergence(p_t, q_t)
    close(kl, kl_t, rtol=1e-8, atol=1e-10, err_msg=pair)
    if bool(vg.isfinite(kl).all()):
        kl.sum().backward()
        kl_t.sum().backward()
        for leaf, leaf_t in zip(leaves, leaves_t):
            close(leaf.grad, leaf_t.grad, rtol=1e-7, atol=1e-9, err_msg=f"{pair}: gradient")


def test_kl_exponential_family_bregman():
    """The Bregman form, reached through ExponentialFamily, agrees with the closed form."""
    from vizgrad.distributions.kl import _kl_expfamily_expfamily
    p, q = D.ContinuousBernoulli(logits=t([-1.0, 0.7, 3.0])), D.ContinuousBernoulli(logits=t([0.5, 0.2, -2.0]))
    close(_kl_expfamily_expfamily(p, q), D.kl_divergence(p, q), rtol=1e-8)
