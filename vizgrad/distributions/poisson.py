"""``Poisson(rate)``: counts of events at rate λ."""

from ..ops.binary import xlogy
from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host


class Poisson(Distribution):
    """The Poisson distribution of ``rate`` λ ≥ 0 over the counts 0, 1, 2, ...

    log p(k) = k log λ - λ - log k!;  mean = variance = λ, mode ⌊λ⌋.
    Samples are float counts of the rate's dtype (NumPy's Poisson sampler on vizgrad's generator).

    Example::

        Poisson(vizgrad.tensor([4.0])).log_prob(vizgrad.tensor([2.0]))   # tensor([-2.0127])
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all("Poisson", rate=rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return draw_on_host(lambda rng, rate: rng.poisson(rate), self.rate, shape, self.rate)

    def log_prob(self, value):
        self._validate_sample(value)
        value = value.to(self.rate.dtype)
        return xlogy(value, self.rate) - self.rate - (value + 1).lgamma()
