"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a Gaussian over vectors whose
covariance is low rank plus diagonal, W Wᵀ + D, scored in O(n m²) through the capacitance matrix."""

import math

import numpy as np

from .. import creation, linalg
from ..errors import ShapeError, format_shape
from . import constraints
from .distribution import Distribution, as_parameter, lazy_property


def _capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix C = I + Wᵀ D⁻¹ W (m × m)."""
    eye = creation.eye(W.shape[-1], dtype=W.dtype, device=W.device)
    return linalg.cholesky((W.mT / D.unsqueeze(-2)) @ W + eye)


def _solve_lower(lower, vectors):
    """L⁻¹ v for a batch of vectors v (batch dims broadcast)."""
    shape = np.broadcast_shapes(tuple(lower.shape[:-2]), tuple(vectors.shape[:-1]))
    lower = lower.expand(*shape, *lower.shape[-2:])
    return linalg.solve_triangular(lower, vectors.expand(*shape, vectors.shape[-1]).unsqueeze(-1),
                                   upper=False).squeeze(-1)


def lowrank_log_det(W, D, capacitance_tril):
    """log det(W Wᵀ + D) = log det C + Σ log Dᵢ (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def lowrank_mahalanobis(W, D, x, capacitance_tril):
    """xᵀ (W Wᵀ + D)⁻¹ x = xᵀ D⁻¹ x - |L_C⁻¹ Wᵀ D⁻¹ x|² (Woodbury)."""
    projected = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x ** 2 / D).sum(-1) - (_solve_lower(capacitance_tril, projected) ** 2).sum(-1)


class LowRankMultivariateNormal(Distribution):
    """N(μ, W Wᵀ + D) over vectors of the last dim n of ``loc``: ``cov_factor`` W (n × m) and
    ``cov_diag`` D > 0 (n); batch dims broadcast.

    With the capacitance matrix C = I + Wᵀ D⁻¹ W: log det Σ = log det C + Σ log Dᵢ (the matrix
    determinant lemma), and xᵀ Σ⁻¹ x = xᵀ D⁻¹ x - |L_C⁻¹ Wᵀ D⁻¹ x|² (Woodbury). ``rsample`` =
    μ + W ε_W + √D ε_D, differentiable in all three.

    Example::

        q = LowRankMultivariateNormal(mu, W, d)      # mu (n,), W (n, m), d (n,)
        q.log_prob(q.rsample())
    """

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        owner = "LowRankMultivariateNormal"
        loc = as_parameter(loc, "loc", owner)
        cov_factor = as_parameter(cov_factor, "cov_factor", owner, like=loc)
        cov_diag = as_parameter(cov_diag, "cov_diag", owner, like=loc)
        if loc.ndim < 1:
            raise ShapeError(f"{owner}: loc must be at least one-dimensional, got shape {format_shape(loc.shape)}")
        size = loc.shape[-1]
        if cov_factor.ndim < 2:
            raise ShapeError(f"{owner}: cov_factor must be at least two-dimensional, with optional leading batch "
                             f"dimensions, got shape {format_shape(cov_factor.shape)}")
        if cov_factor.shape[-2] != size:
            raise ShapeError(f"{owner}: cov_factor must be a batch of matrices with shape {size} x m, got "
                             f"{format_shape(cov_factor.shape)}")
        if tuple(cov_diag.shape[-1:]) != (size,):
            raise ShapeError(f"{owner}: cov_diag must be a batch of vectors with shape ({size},), got "
                             f"{format_shape(cov_diag.shape)}")
        try:
            batch_shape = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                              tuple(cov_diag.shape[:-1]))
        except ValueError:
            raise ShapeError(f"{owner}: Incompatible batch shapes: loc {format_shape(loc.shape)}, cov_factor "
                             f"{format_shape(cov_factor.shape)}, cov_diag {format_shape(cov_diag.shape)}") from None
        rank = cov_factor.shape[-1]
        self.loc = loc.expand(*batch_shape, size)
        self.cov_factor = cov_factor.expand(*batch_shape, size, rank)
        self.cov_diag = cov_diag.expand(*batch_shape, size)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, (size,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        kept = {name: self.__dict__[name] for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                                                        "_capacitance_tril")}
        new = super().expand(batch_shape, _instance)
        new.__dict__.update(kept)                         # broadcast where used
        return new

    @property
    def mean(self):
        return self.loc

    mode = mean

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return ((W ** 2).sum(-1) + D).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        """√D · chol(I + D^(-½) W Wᵀ D^(-½)): a factor of a well-conditioned matrix (eigenvalues ≥ 1)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        root = D.sqrt().unsqueeze(-1)
        scaled = W / root
        eye = creation.eye(self._event_shape[0], dtype=W.dtype, device=W.device)
        return (root * linalg.cholesky(scaled @ scaled.mT + eye)).expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.mT + D.diag_embed()).expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        """D⁻¹ - Aᵀ A, A = L_C⁻¹ Wᵀ D⁻¹ (Woodbury)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (D.reciprocal().diag_embed() - A.mT @ A).expand(*self._batch_shape, *self._event_shape * 2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        noise_w = creation.randn(*shape[:-1], W.shape[-1], dtype=self.loc.dtype, device=self.loc.device)
        noise_d = creation.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (W @ noise_w.unsqueeze(-1)).squeeze(-1) + D.sqrt() * noise_d

    def _log_det(self):
        return lowrank_log_det(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        self._validate_sample(value)
        mahalanobis = lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                          value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return entropy.expand(self._batch_shape)
