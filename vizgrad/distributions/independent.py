"""``Independent(base, n)``: the rightmost ``n`` batch dims of ``base`` read as one event."""

from ..errors import ShapeError
from . import constraints
from .distribution import Distribution


def sum_rightmost(value, dims):
    """``value`` summed over its last ``dims`` dims."""
    return value.sum(tuple(range(-dims, 0))) if dims else value


class Independent(Distribution):
    """Reinterpret the last ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` as
    event dims: ``log_prob`` and ``entropy`` sum over them (a diagonal Gaussian over vectors is
    ``Independent(Normal(mu, sigma), 1)``).

    Example::

        q = Independent(Normal(mu, sigma), 1)      # mu, sigma: (batch, latent)
        q.log_prob(z).shape                        # (batch,)
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        shape = base_distribution.batch_shape
        if not 0 <= reinterpreted_batch_ndims <= len(shape):
            raise ShapeError(f"Independent: expected 0 <= reinterpreted_batch_ndims <= len(batch_shape) = "
                             f"{len(shape)}, actual {reinterpreted_batch_ndims}")
        split = len(shape) - reinterpreted_batch_ndims
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:split], shape[split:] + base_distribution.event_shape,
                         validate_args=False if validate_args is None else validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        return constraints.over_event_dims(self.base_dist.support, self.reinterpreted_batch_ndims)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.base_dist = self.base_dist.expand(new.batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        return new

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
