"""``TransformedDistribution(base, transforms)``: the law of ``transforms(x)`` for x ~ ``base``."""

from ..autograd.grad_mode import no_grad
from ..errors import ArgumentTypeError, ShapeError
from . import constraints
from .distribution import Distribution
from .independent import Independent, sum_rightmost
from .transforms import ComposeTransform, Transform


class TransformedDistribution(Distribution):
    """The distribution of y = fₖ(...f₁(x)) for x ~ ``base_distribution`` and the transforms
    f₁, ..., fₖ, by the change of variables

        log p(y) = log p_base(x) - Σᵢ log |det ∂fᵢ/∂xᵢ|,   x = f₁⁻¹(...fₖ⁻¹(y));

    samples are the base's pushed through the transforms (reparameterised when the base's are);
    ``cdf``/``icdf`` go through monotone transforms (flipped where they decrease).

    Example::

        log_normal = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
        log_normal.log_prob(vizgrad.tensor(2.0))      # as LogNormal(0.0, 1.0)
    """

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise ArgumentTypeError(f"{type(self).__name__}: transforms must be a Transform or a list of Transforms, "
                                    f"got {transforms!r}")
        if not isinstance(base_distribution, Distribution):
            raise ArgumentTypeError(f"{type(self).__name__}: base_distribution must be a Distribution, got "
                                    f"{type(base_distribution).__name__}")
        self.transforms = list(transforms)
        chain = ComposeTransform(self.transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        if len(base_shape) < chain.domain.event_dim:
            raise ShapeError(f"{type(self).__name__}: base_distribution needs at least {chain.domain.event_dim} dims "
                             f"but has batch_shape + event_shape {base_shape}")
        shape = chain.forward_shape(base_shape)
        expanded = chain.inverse_shape(shape)          # parameters of the transforms may add batch dims
        if expanded != base_shape:
            base_distribution = base_distribution.expand(expanded[:len(expanded) - len(base_distribution.event_shape)])
        extra = chain.domain.event_dim - len(base_distribution.event_shape)
        self.base_dist = Independent(base_distribution, extra) if extra > 0 else base_distribution
        event_dim = chain.codomain.event_dim + max(len(self.base_dist.event_shape) - chain.domain.event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @constraints.dependent_property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        return constraints.over_event_dims(support, len(self.event_shape) - support.event_dim)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)       # and a subclass's own parameters (Gumbel's loc, scale)
        shape = ComposeTransform(self.transforms).inverse_shape(new.batch_shape + self.event_shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        return new

    def sample(self, sample_shape=()):
        with no_grad():                       # the transforms' parameters (Gumbel's loc) record nothing
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """The base's CDF value read through the transforms: 1 - F where they decrease."""
        sign = ComposeTransform(self.transforms).sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        self._check_value_shape(value, "cdf")
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value, "cdf")
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
