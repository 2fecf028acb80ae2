"""``MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)``: the Gaussian
over vectors, through the Cholesky factor of its covariance."""

import math

import numpy as np

from .. import creation, linalg
from ..errors import ArgumentError, ShapeError, format_shape
from . import constraints
from .distribution import Distribution, as_parameter, lazy_property


def _solve_lower(lower, rhs):
    """X with L X = B for lower-triangular L (batch dims broadcast)."""
    return linalg.solve_triangular(lower, rhs, upper=False)


def _precision_to_scale_tril(precision):
    """The lower-triangular L with L Lᵀ = P⁻¹: with J the reversal of rows (or columns),
    J P J = L' L'ᵀ (Cholesky), so P = U Uᵀ for the upper-triangular U = J L' J and
    P⁻¹ = U⁻ᵀ U⁻¹: L = (Uᵀ)⁻¹, the inverse of a lower-triangular matrix."""
    flipped = linalg.cholesky(precision.flip(-2, -1))
    upper_t = flipped.flip(-2, -1).mT                      # Uᵀ, lower triangular
    eye = creation.eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return _solve_lower(upper_t, eye.expand(*upper_t.shape))


class MultivariateNormal(Distribution):
    """The normal distribution N(μ, Σ) over vectors of the last dim of ``loc``, given one of
    ``covariance_matrix`` Σ, ``precision_matrix`` Σ⁻¹ or ``scale_tril`` L (lower triangular,
    positive diagonal, Σ = L Lᵀ); batch dims broadcast.

    log p(x) = -½ (n log 2π + |L⁻¹(x - μ)|²) - Σᵢ log Lᵢᵢ;  H = ½ n (1 + log 2π) + Σᵢ log Lᵢᵢ;
    ``rsample`` = μ + L ε, ε ~ N(0, I), differentiable in μ and in the matrix given.

    Example::

        q = MultivariateNormal(mu, scale_tril=L)       # mu (batch, n), L (batch, n, n)
        z = q.rsample()
        q.log_prob(z)                                  # (batch,)
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        owner = "MultivariateNormal"
        loc = as_parameter(loc, "loc", owner)
        if loc.ndim < 1:
            raise ShapeError(f"{owner}: loc must be at least one-dimensional, got shape {format_shape(loc.shape)}")
        given = {name: value for name, value in (("covariance_matrix", covariance_matrix),
                                                  ("precision_matrix", precision_matrix),
                                                  ("scale_tril", scale_tril)) if value is not None}
        if len(given) != 1:
            raise ArgumentError(f"{owner}: exactly one of covariance_matrix or precision_matrix or scale_tril may "
                                f"be specified, got {', '.join(given) or 'none'}")
        (name, matrix), = given.items()
        matrix = as_parameter(matrix, name, owner, like=loc)
        if matrix.ndim < 2:
            raise ShapeError(f"{owner}: {name} matrix must be at least two-dimensional, with optional leading batch "
                             f"dimensions, got shape {format_shape(matrix.shape)}")
        size = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (size, size):
            raise ShapeError(f"{owner}: {name} of shape {format_shape(matrix.shape)} does not match loc of shape "
                             f"{format_shape(loc.shape)}: expected (..., {size}, {size})")
        try:
            batch_shape = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        except ValueError:
            raise ShapeError(f"{owner}: the batch dims of loc {format_shape(loc.shape)} and {name} "
                             f"{format_shape(matrix.shape)} do not broadcast together") from None
        setattr(self, name, matrix.expand(*batch_shape, size, size))
        self.loc = loc.expand(*batch_shape, size)
        super().__init__(batch_shape, (size,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril     # broadcast where used
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        """Σ⁻¹ = L⁻ᵀ L⁻¹."""
        lower = self._unbroadcasted_scale_tril
        eye = creation.eye(lower.shape[-1], dtype=lower.dtype, device=lower.device)
        inverse = _solve_lower(lower, eye.expand(*lower.shape))
        return (inverse.mT @ inverse).expand(*self._batch_shape, *self._event_shape * 2)

    @property
    def mean(self):
        return self.loc

    mode = mean

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        """μ + L ε, ε ~ N(0, I) of shape ``sample_shape + batch_shape + event_shape``."""
        shape = self._extended_shape(sample_shape)
        noise = creation.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ noise.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        """log √det Σ = Σᵢ log Lᵢᵢ."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        diff = value - self.loc
        lower = self._unbroadcasted_scale_tril
        shape = np.broadcast_shapes(tuple(diff.shape[:-1]), tuple(lower.shape[:-2]))
        whitened = _solve_lower(lower.expand(*shape, *lower.shape[-2:]), diff.expand(*shape, diff.shape[-1])
                                .unsqueeze(-1)).squeeze(-1)
        size = self._event_shape[0]
        return -0.5 * (size * math.log(2 * math.pi) + (whitened ** 2).sum(-1)) - self._half_log_det()

    def entropy(self):
        size = self._event_shape[0]
        entropy = 0.5 * size * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return entropy.expand(self._batch_shape)
