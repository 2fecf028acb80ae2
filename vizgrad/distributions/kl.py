"""``kl_divergence(p, q)`` = E_p[log p - log q], dispatched on the pair of distribution types."""

import math

import numpy as np

from .. import creation
from ..autograd.api import grad
from ..autograd.grad_mode import enable_grad
from ..errors import ArgumentError
from ..linalg import solve_triangular
from ..ops import binary
from ..ops.activation import softplus
from ..ops.binary import xlogy
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .exponential import Exponential
from .exponential_family import ExponentialFamily
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent, sum_rightmost
from .laplace import Laplace
from .log_normal import EULER_GAMMA, Gumbel, HalfNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal, lowrank_log_det, lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal
from .normal import HALF_LOG_2PI, Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: register ``function(p, q)`` as the KL divergence of ``type_p`` from ``type_q``."""
    def decorate(function):
        _KL[type_p, type_q] = function
        return function
    return decorate


def kl_divergence(p, q):
    """KL(p ‖ q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shapes.

    Example::

        kl_divergence(Normal(mu, sigma), Normal(0.0, 1.0)).sum()     # a VAE's KL term
    """
    for type_p in type(p).__mro__:
        for type_q in type(q).__mro__:
            function = _KL.get((type_p, type_q))
            if function is not None:
                return function(p, q)
    raise NotImplementedError(f"kl_divergence: no formula is registered for {type(p).__name__} and "
                              f"{type(q).__name__} (register one with vizgrad.distributions.register_kl)")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    """½ (σp²/σq² + (μp - μq)²/σq² - 1 - log(σp²/σq²))."""
    variance_ratio = (p.scale / q.scale) ** 2
    shift = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (variance_ratio + shift - 1 - variance_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """Σₖ pₖ (log pₖ - log qₖ): 0 where pₖ = 0, ∞ where qₖ = 0 < pₖ."""
    terms = p.probs * (p.logits - q.logits)
    terms = binary.where((q.probs == 0).expand(*terms.shape), math.inf, terms)
    terms = binary.where((p.probs == 0).expand(*terms.shape), 0.0, terms)
    return terms.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p log(p/q) + (1 - p) log((1 - p)/(1 - q)), from the logits (softplus form)."""
    return p.probs * (p.logits - q.logits) + softplus(q.logits) - softplus(p.logits)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independent distributions with different "
                                  "reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    """λq/λp - 1 - log(λq/λp)."""
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log((high_q - low_q) / (high_p - low_p)), ∞ where p's interval leaves q's."""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return binary.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    """-log(bp/bq) + |μp - μq|/bq + (bp/bq) e^(-|μp - μq|/bp) - 1."""
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -ratio.log() + distance / q.scale + ratio * (-distance / p.scale).exp() - 1


# --- more pairs of one family ----------------------------------------------------------------

@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    """log B(a_q, b_q) - log B(a_p, b_p) + (a_p - a_q) ψ(a_p) + (b_p - b_q) ψ(b_p)
    + (a_q - a_p + b_q - b_p) ψ(a_p + b_p)."""
    a_p, b_p, a_q, b_q = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    total_p = a_p + b_p
    log_beta_ratio = (a_q.lgamma() + b_q.lgamma() - (a_q + b_q).lgamma()) - (a_p.lgamma() + b_p.lgamma()
                                                                              - total_p.lgamma())
    return (log_beta_ratio + (a_p - a_q) * a_p.digamma() + (b_p - b_q) * b_p.digamma()
            + (a_q - a_p + b_q - b_p) * total_p.digamma())


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """n (p log(p/q) + (1 - p) log((1 - p)/(1 - q))), for equal counts n; ∞ where p's n exceeds q's
    (p reaches counts q cannot)."""
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("kl_divergence: KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    result = p.total_count * _kl_bernoulli_bernoulli(p, q)
    return binary.where(p.total_count > q.total_count, math.inf, result)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    """log Γ(α₀) - Σ log Γ(αᵢ) - log Γ(β₀) + Σ log Γ(βᵢ) + Σ (αᵢ - βᵢ)(ψ(αᵢ) - ψ(α₀))."""
    alpha, beta = p.concentration, q.concentration
    total_alpha, total_beta = alpha.sum(-1), beta.sum(-1)
    return (total_alpha.lgamma() - alpha.lgamma().sum(-1) - total_beta.lgamma() + beta.lgamma().sum(-1)
            + ((alpha - beta) * (alpha.digamma() - total_alpha.unsqueeze(-1).digamma())).sum(-1))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    """(α_p - α_q) ψ(α_p) - log Γ(α_p) + log Γ(α_q) + α_q log(β_p/β_q) + α_p (β_q - β_p)/β_p."""
    return ((p.concentration - q.concentration) * p.concentration.digamma() - p.concentration.lgamma()
            + q.concentration.lgamma() + q.concentration * (p.rate.log() - q.rate.log())
            + p.concentration * (q.rate - p.rate) / p.rate)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    """log(β_q/β_p) + (μ_p + β_p γ - μ_q)/β_q + Γ(1 + β_p/β_q) e^((μ_q - μ_p)/β_q) - 1 - γ
    (E_p[e^(-X/β_q)] is the Gumbel's moment generating function)."""
    ratio = p.scale / q.scale
    return (-ratio.log() + (p.loc + p.scale * EULER_GAMMA - q.loc) / q.scale
            + ((q.loc - p.loc) / q.scale + (ratio + 1).lgamma()).exp() - (1 + EULER_GAMMA))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    """-H(p) - E_p[k] log(1 - q) - log q, E_p[k] = (1 - p)/p."""
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    """½ (r - 1 - log r), r = σ_p²/σ_q² (as for the normals they fold)."""
    ratio = (p.scale / q.scale) ** 2
    return 0.5 * (ratio - 1 - ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    """λ_p log(λ_p/λ_q) - (λ_p - λ_q)."""
    return xlogy(p.rate, p.rate / q.rate) - (p.rate - q.rate)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    """log(((γ_p + γ_q)² + (μ_p - μ_q)²) / (4 γ_p γ_q))."""
    return (((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) / (4 * p.scale * q.scale)).log()


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """KL of the bases, when both push them through equal transforms (KL is invariant under a
    bijection applied to both)."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different transforms or "
                                  "event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


# --- pairs of two families: KL(p ‖ q) = -H(p) - E_p[log q(X)] ---------------------------------

def _normal_cross_entropy(mean, variance, q):
    """-E[log q(X)] for a normal q, from X's mean and variance: log σ + ½ log 2π + E[(X - μ)²]/2σ²."""
    return q.scale.log() + HALF_LOG_2PI + (variance + (mean - q.loc) ** 2) / (2 * q.scale ** 2)


def _gumbel_cross_entropy(mean, shifted_mgf, q):
    """-E[log q(X)] for a Gumbel q: log β + (E[X] - μ)/β + e^(μ/β) E[e^(-X/β)], the last factor
    given as ``shifted_mgf`` = E[e^(-X/β)]."""
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * shifted_mgf


def _gamma_cross_entropy(mean, mean_log, q):
    """-E[log q(X)] for a gamma q, from E[X] and E[log X]:
    log Γ(α) - α log β - (α - 1) E[log X] + β E[X]."""
    alpha, rate = q.concentration, q.rate
    return alpha.lgamma() - alpha * rate.log() - (alpha - 1) * mean_log + rate * mean


def _uniform_mean_log(low, high):
    """E[log X] for X ~ U(low, high), 0 ≤ low: (h log h - l log l)/(h - l) - 1."""
    return (xlogy(high, high) - xlogy(low, low)) / (high - low) - 1


@register_kl(Beta, Exponential)
@register_kl(Gamma, Exponential)
def _kl_to_exponential(p, q):
    """-H(p) - E[log q(X)] = -H(p) - log λ + λ E[X]."""
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Normal)
@register_kl(Exponential, Normal)
@register_kl(Gamma, Normal)
@register_kl(Gumbel, Normal)
@register_kl(Laplace, Normal)
@register_kl(Uniform, Normal)
def _kl_to_normal(p, q):
    """-H(p) + the normal cross-entropy from p's mean and variance."""
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    """-H(p) - (p log λ - λ) (log k! = 0 for k = 0, 1)."""
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    return -p.entropy() + _gamma_cross_entropy(p.mean, a.digamma() - (a + b).digamma(), q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    """-H(p) + log(high - low), ∞ unless [0, 1] ⊂ [low, high]."""
    result = -p.entropy() + (q.high - q.low).log()
    return binary.where((q.low > 0) | (q.high < 1), math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    """E[log X] = -γ - log λ for X ~ Exp(λ)."""
    return -p.entropy() + _gamma_cross_entropy(p.mean, -EULER_GAMMA - p.rate.log(), q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    """E[e^(-X/β)] = λ/(λ + 1/β) for X ~ Exp(λ)."""
    return -p.entropy() + _gumbel_cross_entropy(p.mean, p.rate / (p.rate + 1 / q.scale), q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    """E[e^(-X/β)] = (1 + 1/(β β_p))^(-α) for X ~ Gamma(α, β_p)."""
    mgf = (-p.concentration * (1 / (q.scale * p.rate)).log1p()).exp()
    return -p.entropy() + _gumbel_cross_entropy(p.mean, mgf, q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    """E[e^(-X/β)] = e^(-μ/β + σ²/2β²) for X ~ N(μ, σ²)."""
    mgf = (-p.loc / q.scale + p.scale ** 2 / (2 * q.scale ** 2)).exp()
    return -p.entropy() + _gumbel_cross_entropy(p.loc, mgf, q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    """-H(p) + log 2b + E|X - μ_q|/b, E|X - m| = σ√(2/π) e^(-d²/2σ²) + d erf(d/σ√2), d = μ_p - m
    (the folded normal's mean)."""
    shift = p.loc - q.loc
    absolute = (p.scale * math.sqrt(2 / math.pi) * (-(shift ** 2) / (2 * p.scale ** 2)).exp()
                + shift * (shift / (p.scale * math.sqrt(2))).erf())
    return -p.entropy() + (2 * q.scale).log() + absolute / q.scale


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    """∞ unless [low, high] ⊂ [0, 1]; else -log(h - l) + log B(a, b) - (a - 1) E[log X]
    - (b - 1) E[log(1 - X)]."""
    a, b = q.concentration1, q.concentration0
    inside_low, inside_high = p.low.clamp(0, 1), p.high.clamp(0, 1)
    mean_log = _uniform_mean_log(inside_low, inside_high)
    mean_log_complement = _uniform_mean_log(1 - inside_high, 1 - inside_low)
    result = (-(p.high - p.low).log() + a.lgamma() + b.lgamma() - (a + b).lgamma()
              - (a - 1) * mean_log - (b - 1) * mean_log_complement)
    return binary.where((p.low < 0) | (p.high > 1), math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    """∞ where low < 0; else -log(h - l) - log λ + λ (h + l)/2."""
    return binary.where(p.low < 0, math.inf, _kl_to_exponential(p, q))


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    """∞ where low < 0; else -log(h - l) + the gamma cross-entropy with E[log X] of the uniform."""
    low = p.low.clamp(min=0)
    result = -p.entropy() + _gamma_cross_entropy(p.mean, _uniform_mean_log(low, p.high), q)
    return binary.where(p.low < 0, math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    """E[e^(-X/β)] = β (e^(-l/β) - e^(-h/β)) / (h - l) for X ~ U(l, h)."""
    mgf = q.scale * ((-p.low / q.scale).exp() - (-p.high / q.scale).exp()) / (p.high - p.low)
    return -p.entropy() + _gumbel_cross_entropy(p.mean, mgf, q)


def _infinite(p, q):
    """p puts mass where q has none (outside q's support): ∞, batched as the pair broadcast."""
    shape = np.broadcast_shapes(p.batch_shape, q.batch_shape)
    like = p.mean
    return creation.full(shape, math.inf, dtype=like.dtype, device=like.device)


for _p, _q in ((Exponential, Beta), (Exponential, Uniform), (Gamma, Beta), (Gamma, Uniform), (Gumbel, Beta),
               (Gumbel, Exponential), (Gumbel, Gamma), (Gumbel, Uniform), (Laplace, Beta), (Laplace, Exponential),
               (Laplace, Gamma), (Laplace, Uniform), (Normal, Beta), (Normal, Exponential), (Normal, Gamma),
               (Normal, Uniform), (Poisson, Bernoulli), (Poisson, Binomial)):
    register_kl(_p, _q)(_infinite)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """½ (tr(Σq⁻¹ Σp) + |Lq⁻¹(μq - μp)|² - n + log det Σq - log det Σp), through the Cholesky
    factors: tr(Σq⁻¹ Σp) = ‖Lq⁻¹ Lp‖²_F."""
    if p.event_shape != q.event_shape:
        raise ArgumentError("kl_divergence: KL-divergence between two Multivariate Normals with different event "
                            f"shapes cannot be computed: {p.event_shape} and {q.event_shape}")
    size = p.event_shape[0]
    lower_p, lower_q = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    batch = np.broadcast_shapes(p.batch_shape, q.batch_shape)
    matrix_shape = (*batch, size, size)
    lower_q_full = lower_q.expand(*matrix_shape)
    trace = (solve_triangular(lower_q_full, lower_p.expand(*matrix_shape), upper=False) ** 2).sum((-2, -1))
    shift = (q.loc - p.loc).expand(*batch, size).unsqueeze(-1)
    mahalanobis = (solve_triangular(lower_q_full, shift, upper=False) ** 2).sum((-2, -1))
    return 0.5 * (trace + mahalanobis - size) + q._half_log_det() - p._half_log_det()


def _check_event_shapes(p, q):
    if p.event_shape != q.event_shape:
        raise ArgumentError("kl_divergence: KL-divergence between two (Low Rank) Multivariate Normals with different "
                            f"event shapes cannot be computed: {p.event_shape} and {q.event_shape}")


def _trace_xxt(x):
    """tr(X Xᵀ) = ‖X‖²_F over the last two dims."""
    return (x ** 2).sum((-2, -1))


def _woodbury_factor(q):
    """A = L_C⁻¹ Wᵀ D⁻¹ of q, so Σq⁻¹ = D⁻¹ - Aᵀ A."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return solve_triangular(q._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)


def _lowrank_terms(q, p_loc):
    """log det Σq and (μq - μp)ᵀ Σq⁻¹ (μq - μp) of a low-rank q."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return lowrank_log_det(W, D, q._capacitance_tril), lowrank_mahalanobis(W, D, q.loc - p_loc, q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    """½ (tr(Σq⁻¹ Σp) + Mahalanobis - n + log det Σq - log det Σp), with Σq⁻¹ = D⁻¹ - AᵀA
    expanded against Σp = Wp Wpᵀ + Dp (no n × n matrix formed)."""
    _check_event_shapes(p, q)
    log_det_q, mahalanobis = _lowrank_terms(q, p.loc)
    W, D = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    log_det_p = lowrank_log_det(W, D, p._capacitance_tril)
    A = _woodbury_factor(q)
    trace = ((D / q._unbroadcasted_cov_diag).sum(-1) + _trace_xxt(W * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _trace_xxt(A * D.sqrt().unsqueeze(-2)) - _trace_xxt(A @ W))
    return 0.5 * (log_det_q - log_det_p + trace + mahalanobis - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_event_shapes(p, q)
    log_det_q, mahalanobis = _lowrank_terms(q, p.loc)
    lower = p._unbroadcasted_scale_tril
    trace = _trace_xxt(lower * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)) - _trace_xxt(_woodbury_factor(q) @ lower)
    return 0.5 * (log_det_q - 2 * p._half_log_det() + trace + mahalanobis - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _check_event_shapes(p, q)
    size = p.event_shape[0]
    W, D = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    lower_q = q._unbroadcasted_scale_tril
    batch = np.broadcast_shapes(tuple(lower_q.shape[:-2]), tuple(W.shape[:-2]))
    lower_q = lower_q.expand(*batch, size, size)
    trace = (_trace_xxt(solve_triangular(lower_q, W.expand(*batch, size, W.shape[-1]), upper=False))
             + _trace_xxt(solve_triangular(lower_q, D.sqrt().diag_embed().expand(*batch, size, size), upper=False)))
    shape = np.broadcast_shapes(batch, tuple(p.batch_shape))
    shift = (q.loc - p.loc).expand(*shape, size).unsqueeze(-1)
    mahalanobis = (solve_triangular(lower_q.expand(*shape, size, size), shift, upper=False) ** 2).sum((-2, -1))
    log_det_p = lowrank_log_det(W, D, p._capacitance_tril)
    return 0.5 * (2 * q._half_log_det() - log_det_p + trace + mahalanobis - size)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """A(θq) - A(θp) - ⟨θq - θp, ∇A(θp)⟩: the Bregman divergence of the log normaliser (one family)."""
    if type(p) is not type(q):
        raise NotImplementedError("kl_divergence: The cross KL-divergence between different exponential families "
                                  "cannot be computed using Bregman divergences")
    with enable_grad():
        p_params = [x if x.requires_grad else x.detach().requires_grad_() for x in p._natural_params]
        log_normalizer = p._log_normalizer(*p_params)
        gradients = grad(log_normalizer.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q._natural_params) - log_normalizer
    for p_param, q_param, gradient in zip(p_params, q._natural_params, gradients):
        result = result - sum_rightmost((q_param - p_param) * gradient, len(q.event_shape))
    return result


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + (-p.probs).log1p()
            - q._cont_bern_log_norm() - (-q.probs).log1p())


def _cross_entropy_continuous_bernoulli(mean, q):
    """-E_p[log q(x)] for a continuous Bernoulli q, from p's mean."""
    return -mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)
    return binary.where((p.high >= 1) | (p.low <= 0), math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return binary.where((q.low >= 0) | (q.high <= 1), math.inf, result)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    """αq log(xp/xq) - log(αq/αp) + αq/αp - 1; ∞ where p's support starts below q's."""
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return binary.where(p.scale < q.scale, math.inf, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    product = p.scale * q.rate
    result = (p.alpha / product).log() - p.alpha.reciprocal() + p.alpha * product / (p.alpha - 1) - 1
    return binary.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()           # E[log x] for x ~ Pareto
    result = (p.alpha.log() - common + q.concentration.lgamma() - q.concentration * q.rate.log()
              + (1 - q.concentration) * common + q.rate * p.alpha * p.scale / (p.alpha - 1) - 1)
    return binary.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    common = p.scale / (p.alpha - 1)
    result = ((math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log() - p.alpha.reciprocal()
              + (p.alpha * common ** 2 / (p.alpha - 2) + (p.alpha * common - q.loc) ** 2) / (2 * q.scale ** 2) - 1)
    return binary.where(p.alpha <= 2, math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    log_normaliser = (q.alpha * q.scale ** q.alpha * width).log()
    mean_log = (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    return binary.where(p.low < q.scale, math.inf, mean_log * (q.alpha + 1) - log_normaliser)


for _p, _q in ((Beta, Pareto), (ContinuousBernoulli, Pareto), (Exponential, Pareto), (Exponential, ContinuousBernoulli),
               (Gamma, Pareto), (Gamma, ContinuousBernoulli), (Gumbel, Pareto), (Gumbel, ContinuousBernoulli),
               (Laplace, Pareto), (Laplace, ContinuousBernoulli), (Normal, Pareto), (Normal, ContinuousBernoulli),
               (Pareto, Uniform), (Pareto, ContinuousBernoulli), (Pareto, Beta)):
    register_kl(_p, _q)(_infinite)
