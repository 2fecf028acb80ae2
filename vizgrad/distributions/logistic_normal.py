"""``LogisticNormal(loc, scale)``: a Normal pushed onto the simplex by stick breaking, a
``TransformedDistribution`` as in PyTorch."""

from . import constraints
from .independent import Independent
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """The law of StickBreakingTransform(x) for x ~ N(``loc``, ``scale``²) over vectors of the
    last dim K: a distribution over the (K + 1)-simplex (a 0-d loc is one of length 1).

    Example::

        LogisticNormal(vizgrad.zeros(2), vizgrad.ones(2)).sample()     # a point of the 3-simplex
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self._normal().loc

    @property
    def scale(self):
        return self._normal().scale

    def _normal(self):
        base = self.base_dist
        return base.base_dist if isinstance(base, Independent) else base
