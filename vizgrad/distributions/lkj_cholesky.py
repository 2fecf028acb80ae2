"""``LKJCholesky(dim, concentration)``: the LKJ law over Cholesky factors of correlation matrices."""

import math
import numbers

from .. import creation, dtypes
from ..autograd.grad_mode import no_grad
from ..errors import ArgumentError
from ..ops import binary
from ..ops.joins import cat
from . import constraints
from .dirichlet import Beta
from .distribution import Distribution, broadcast_all


def multivariate_lgamma(a, p):
    """log Γₚ(a) = p(p - 1)/4 · log π + Σⱼ₌₁..ₚ log Γ(a + (1 - j)/2)."""
    total = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p + 1):
        total = total + (a + (1 - j) / 2).lgamma()
    return total


class LKJCholesky(Distribution):
    """The LKJ distribution of ``concentration`` η over the lower Cholesky factors L of
    ``dim`` × ``dim`` correlation matrices: p(L L ᵀ) ∝ det(L Lᵀ)^(η - 1), so with the Jacobian
    of L ↦ L Lᵀ, p(L) ∝ Πᵢ₌₂..d Lᵢᵢ^(2η - 2 + d - i). η = 1 is uniform over correlation
    matrices; larger η concentrates near the identity.

    Samples come from the onion method (Lewandowski, Kurowicka and Joe, 2009): each row a
    direction uniform on the sphere scaled by the root of a Beta draw; there is no rsample.

    Example::

        LKJCholesky(3, 0.5).sample()       # a 3 × 3 lower-triangular factor with unit rows
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if not isinstance(dim, numbers.Integral) or isinstance(dim, bool) or dim < 2:
            raise ArgumentError(f"LKJCholesky: Expected dim to be an integer greater than or equal to 2. "
                                f"Found dim={dim}.")
        self.dim = int(dim)
        self.concentration, = broadcast_all("LKJCholesky", concentration=concentration)
        conc = self.concentration
        offset = creation.arange(self.dim - 1, dtype=conc.dtype, device=conc.device)
        offset = cat([creation.zeros(1, dtype=conc.dtype, device=conc.device), offset])
        marginal = conc + 0.5 * (self.dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset, validate_args=False)
        super().__init__(tuple(conc.shape), (self.dim, self.dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._beta = self._beta.expand(tuple(new.batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            normal = creation.randn(*shape, dtype=y.dtype, device=y.device).tril(-1)
            first_row = (creation.arange(self.dim, device=y.device) == 0).reshape(self.dim, 1)
            norm = (normal ** 2).sum(-1, keepdim=True).sqrt()
            direction = binary.where(first_row, 0.0, normal / binary.where(first_row, 1.0, norm))
            w = y.sqrt() * direction
            diagonal = (1 - (w ** 2).sum(-1)).clamp(min=dtypes.finfo(w.dtype).tiny).sqrt()
            return w + diagonal.diag_embed()

    def log_prob(self, value):
        self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = creation.arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalised = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normaliser = 0.5 * dm1 * math.log(math.pi) + multivariate_lgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalised - normaliser
