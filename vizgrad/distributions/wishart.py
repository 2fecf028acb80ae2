"""``Wishart(df, covariance_matrix | precision_matrix | scale_tril)``: the law of sums of outer
products of Gaussian vectors, over positive-definite matrices."""

import math
import warnings

import numpy as np

from .. import creation, dtypes, linalg
from ..errors import ArgumentError, ShapeError, format_shape
from ..ops import binary
from . import constraints
from .distribution import Distribution, as_parameter, lazy_property
from .gamma import Chi2
from .lkj_cholesky import multivariate_lgamma
from .multivariate_normal import _precision_to_scale_tril

LOG_2 = math.log(2)


def multivariate_digamma(a, p):
    """d/da log Γₚ(a) = Σᵢ₌₀..ₚ₋₁ ψ(a - i/2)."""
    total = 0
    for i in range(p):
        total = total + (a - i / 2).digamma()
    return total


class Wishart(Distribution):
    """The Wishart distribution W(ν, Σ) of ``df`` ν > p - 1 over p × p positive-definite
    matrices, given one of ``covariance_matrix`` Σ, ``precision_matrix`` Σ⁻¹ or ``scale_tril``
    L (Σ = L Lᵀ): for integer ν the law of Σₖ xₖ xₖᵀ, xₖ ~ N(0, Σ).

    log p(X) = -ν (p log 2 / 2 + log det L) - log Γₚ(ν/2) + (ν - p - 1)/2 · log det X - tr(Σ⁻¹ X)/2;
    mean ν Σ, mode (ν - p - 1) Σ (NaN where ν ≤ p + 1), variance ν (Σᵢⱼ² + Σᵢᵢ Σⱼⱼ).
    ``rsample`` is Bartlett's decomposition, L A Aᵀ Lᵀ with A lower triangular, Aᵢᵢ² ~ χ²(ν - i)
    and N(0, 1) below the diagonal (reparameterised, so gradients reach ν and Σ); samples that
    come out singular are drawn again up to ``max_try_correction`` times.

    Example::

        Wishart(vizgrad.tensor(5.0), covariance_matrix=vizgrad.eye(2)).mean     # 5 · I
    """

    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        owner = "Wishart"
        given = {name: value for name, value in (("covariance_matrix", covariance_matrix),
                                                  ("precision_matrix", precision_matrix),
                                                  ("scale_tril", scale_tril)) if value is not None}
        if len(given) != 1:
            raise ArgumentError(f"{owner}: Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                f"specified, got {', '.join(given) or 'none'}")
        (name, matrix), = given.items()
        matrix = as_parameter(matrix, name, owner)
        if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
            raise ShapeError(f"{owner}: {name} must be a batch of square matrices, got shape "
                             f"{format_shape(matrix.shape)}")
        size = matrix.shape[-1]
        df = as_parameter(df, "df", owner, like=matrix)
        try:
            batch_shape = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape))
        except ValueError:
            raise ShapeError(f"{owner}: the batch dims of df {format_shape(df.shape)} and {name} "
                             f"{format_shape(matrix.shape)} do not broadcast together") from None
        self.df = df.expand(tuple(batch_shape))
        if bool((self.df <= size - 1).any()):
            raise ArgumentError(f"{owner}: Value of df={df.detach()} expected to be greater than ndim - 1 = {size - 1}.")
        if bool((self.df < size).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        setattr(self, name, matrix.expand(*batch_shape, size, size))
        super().__init__(batch_shape, (size, size), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)
        self._chi2 = self._bartlett_chi2()

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def _bartlett_chi2(self):
        """χ²(ν - i) for i = 0..p-1: the laws of Bartlett's squared diagonal."""
        lower = self._unbroadcasted_scale_tril
        steps = creation.arange(self._event_shape[-1], dtype=lower.dtype, device=lower.device)
        return Chi2(self.df.unsqueeze(-1) - steps, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril        # broadcast where used
        new._chi2 = new._bartlett_chi2()
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """Σ⁻¹ = L⁻ᵀ L⁻¹."""
        lower = self._unbroadcasted_scale_tril
        eye = creation.eye(lower.shape[-1], dtype=lower.dtype, device=lower.device)
        inverse = linalg.solve_triangular(lower, eye.expand(*lower.shape), upper=False)
        return (inverse.mT @ inverse).expand(*self._batch_shape, *self._event_shape)

    def _per_matrix(self, value):
        return value.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self):
        return self._per_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        return self._per_matrix(binary.where(factor > 0, factor, math.nan)) * self.covariance_matrix

    @property
    def variance(self):
        covariance = self.covariance_matrix
        diagonal = covariance.diagonal(dim1=-2, dim2=-1)
        return self._per_matrix(self.df) * (covariance ** 2 + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        shape = self._extended_shape(sample_shape)
        root = self._chi2.rsample(sample_shape).sqrt().clamp(min=dtypes.finfo(self.df.dtype).eps)
        below = creation.randn(*shape, dtype=root.dtype, device=root.device).tril(-1)
        factor = self._unbroadcasted_scale_tril @ (below + root.diag_embed())
        return factor @ factor.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """L A Aᵀ Lᵀ (Bartlett); singular samples drawn again, up to ``max_try_correction``
        (default 10) times, with a warning."""
        tries = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                sample = binary.where(singular.reshape(*singular.shape, 1, 1), self._bartlett(sample_shape), sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        shape = np.broadcast_shapes(tuple(value.shape[:-2]), tuple(lower.shape[:-2]))
        lower = lower.expand(*shape, p, p)
        whitened = linalg.solve_triangular(lower, value.expand(*shape, p, p), upper=False)     # L⁻¹ X
        whitened = linalg.solve_triangular(lower, whitened.mT, upper=False)                     # L⁻¹ X L⁻ᵀ
        trace = whitened.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * LOG_2 / 2 + self._log_det_scale()) - multivariate_lgamma(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * LOG_2 / 2 + self._log_det_scale()) + multivariate_lgamma(nu / 2, p)
                - (nu - p - 1) / 2 * multivariate_digamma(nu / 2, p) + nu * p / 2)
