"""The ``Distribution`` base class (batch and event shapes, sample shapes, argument checks) and
the bases of two families: ``LocationScale`` and ``ProbsOrLogits``."""

import numbers

import numpy as np

from .. import creation
from ..autograd.grad_mode import no_grad
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, check_sizes, format_shape
from ..tensor import Size, Tensor
from . import constraints


class lazy_property:
    """A property computed on first use and then stored on the instance (so a Categorical
    made from logits draws no softmax node until ``probs`` is asked for)."""

    def __init__(self, function):
        self.function = function
        self.__doc__ = function.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.function(instance)
        instance.__dict__[self.name] = value
        return value


def as_parameter(value, name, owner, like=None):
    """``value`` as a floating tensor (Python numbers take ``like``'s dtype, else the default)."""
    if isinstance(value, Tensor):
        if not value.is_floating_point():
            raise DTypeError(f"{owner}: {name} must be a floating-point tensor, got {value.dtype.name}")
        return value
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if isinstance(like, Tensor) and like.is_floating_point():
            return creation.tensor(float(value), dtype=like.dtype, device=like.device)
        return creation.tensor(float(value))          # the default floating dtype
    raise ArgumentTypeError(f"{owner}: {name} must be a Tensor or a number, got {type(value).__name__}")


def broadcast_all(owner, **values):
    """The named parameters as tensors broadcast to one shape."""
    like = next((v for v in values.values() if isinstance(v, Tensor)), None)
    tensors = {name: as_parameter(value, name, owner, like) for name, value in values.items()}
    try:
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors.values()))
    except ValueError:
        described = ", ".join(f"{name} of shape {format_shape(t.shape)}" for name, t in tensors.items())
        raise ShapeError(f"{owner}: the parameters do not broadcast together: {described}") from None
    return [t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors.values()]


def check_values(owner, name, tensor, valid, constraint):
    """Raise a ValueError naming ``constraint`` where the boolean tensor ``valid`` is False."""
    with no_grad():
        if not bool(valid.all()):
            raise ArgumentError(f"{owner}: expected parameter {name} (Tensor of shape {format_shape(tensor.shape)}) of "
                                f"distribution {owner} to satisfy the constraint {constraint}, but found invalid "
                                f"values:\n{tensor.detach()}")


def check_support(distribution, value, valid, support, method="log_prob"):
    """Raise PyTorch's ValueError where the boolean tensor ``valid`` says a value given to
    ``distribution.log_prob`` lies outside its ``support`` (a constraint's repr)."""
    with no_grad():
        if not bool(valid.all()):
            raise ArgumentError(f"{type(distribution).__name__}.{method}: expected value argument (Tensor of shape "
                                f"{format_shape(value.shape)}) to be within the support ({support}) of the "
                                f"distribution {distribution!r}, but found invalid values:\n{value}")


class Distribution:
    """A family of distributions over events of ``event_shape``, batched over ``batch_shape``.

    Subclasses set their parameters, then call ``Distribution.__init__``, which checks each
    parameter against ``arg_constraints`` when ``validate_args`` (default True, as PyTorch's);
    they define ``sample``/``rsample``, ``log_prob`` (its values checked against ``support``),
    ``entropy`` and the moments. ``repr`` shows the parameters of ``arg_constraints`` that are set.
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    _validate_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        """Raise PyTorch's ValueError for a parameter outside its constraint (parameters a lazy
        property has not computed yet, and dependent ones, are not checked)."""
        for name, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                continue
            value = getattr(self, name)
            check_values(repr(self), name, value, constraint.check(value), repr(constraint))

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument checks on or off for every distribution made afterwards."""
        if value not in (True, False):
            raise ArgumentError(f"Distribution.set_default_validate_args: expects True or False, got {value!r}")
        Distribution._validate_default = value

    @property
    def batch_shape(self):
        return Size(self._batch_shape)

    @property
    def event_shape(self):
        return Size(self._event_shape)

    @property
    def support(self):
        raise NotImplementedError(f"{type(self).__name__} does not define its support")

    def _extended_shape(self, sample_shape=()):
        if isinstance(sample_shape, numbers.Integral):
            sample_shape = (sample_shape,)
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape, _instance=None):
        """The same distribution over a larger ``batch_shape``: each batched parameter expanded
        (a view, no copy) to ``batch_shape`` followed by its event dims, and each distribution
        it is built on (Beta's Dirichlet) expanded with it when they share the batch shape.

        Example::

            Normal(vizgrad.tensor(0.0), 1.0).expand((3,)).batch_shape   # vizgrad.Size([3])
        """
        batch_shape = tuple(check_sizes(f"{type(self).__name__}.expand", batch_shape, "batch_shape"))
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        kept = len(self._batch_shape)
        for name, value in self.__dict__.items():
            if isinstance(value, Tensor) and tuple(value.shape[:kept]) == self._batch_shape:
                new.__dict__[name] = value.expand(*batch_shape, *value.shape[kept:])
            elif isinstance(value, Distribution) and value.batch_shape == self._batch_shape:
                new.__dict__[name] = value.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, with no gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler (rsample): use "
                                  f"sample(), and a score-function estimator (log_prob) for gradients")

    def sample_n(self, n):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not define log_prob")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not define entropy")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not define cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not define icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} does not define enumerate_support")

    def _over_batch(self, values, expand):
        """The 1-D ``values`` of the support shaped (n, 1, ..., 1), or expanded to (n,) + batch_shape."""
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(values.shape[0], *self._batch_shape) if expand else values

    def perplexity(self):
        return self.entropy().exp()

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not define mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} does not define mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not define variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _check_value_shape(self, value, method="log_prob"):
        if not isinstance(value, Tensor):
            raise ArgumentTypeError(f"{type(self).__name__}.{method}: value must be a Tensor, got "
                                    f"{type(value).__name__}")
        shape = tuple(value.shape)
        expected = self._batch_shape + self._event_shape
        event = len(self._event_shape)
        if event and tuple(shape[-event:]) != self._event_shape:
            raise ShapeError(f"{type(self).__name__}.{method}: the value of shape {format_shape(shape)} does not end "
                             f"with the event_shape {format_shape(self._event_shape)}")
        try:
            np.broadcast_shapes(shape, expected)
        except ValueError:
            raise ShapeError(f"{type(self).__name__}.{method}: the value of shape {format_shape(shape)} is not "
                             f"broadcastable with batch_shape + event_shape {format_shape(expected)}") from None

    def _validate_sample(self, value, method="log_prob"):
        """The checks of a value given to ``log_prob`` (or ``cdf``): a Tensor of a broadcastable
        shape and, when ``validate_args``, inside the support."""
        self._check_value_shape(value, method)
        if self._validate_args:
            support = self.support
            check_support(self, value, support.check(value), repr(support), method)

    def __repr__(self):
        shown = ", ".join(f"{name}: {self._describe(self.__dict__[name])}" for name in self.arg_constraints
                          if name in self.__dict__)   # the parameters computed so far, as PyTorch
        return f"{type(self).__name__}({shown})"

    @staticmethod
    def _describe(value):
        """As PyTorch shows a parameter: its value when it has one element (a number for a 0-d
        tensor, else the tensor), else its size."""
        if value.numel() != 1:
            return f"torch.Size({list(value.shape)})"
        return repr(value.item()) if value.ndim == 0 else str(value.detach())


class LocationScale(Distribution):
    """Base of the distributions of a location μ and a scale σ > 0 (Normal, Laplace, Cauchy):
    their parameters, broadcast together and checked, μ as mode and, by default, as mean."""

    has_rsample = True
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(type(self).__name__, loc=loc, scale=scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


def clamp_probs(probs):
    """Probabilities kept inside [eps, 1 - eps] of their dtype (so their logarithms are finite)."""
    eps = float(np.finfo(probs.dtype.numpy).eps)
    return probs.clamp(min=eps, max=1 - eps)


def binary_logits(probs):
    """log(p / (1 - p)), with p clamped away from 0 and 1 (finite logits)."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p()


class ProbsOrLogits(Distribution):
    """Base of the distributions given either ``probs`` or ``logits`` (exactly one of them).

    The one given is kept, as that attribute and as ``_param`` (of shape ``param_shape``); the
    other is a ``lazy_property`` computed from it on first use. By default they are a success
    probability's: p = σ(l), l = log(p / (1 - p)) (Categorical has its own). The trailing dims
    of the parameter that its constraint reads as one value (``event_dim``) are not batch dims.
    A subclass that prepares the parameter (broadcasts or normalises it) reads it with
    ``_given_probs_or_logits`` and passes it on to ``__init__`` under the same name.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        setattr(self, name, parameter)          # the other stays a lazy property until asked for
        self._param = parameter
        batch_dims = parameter.ndim - self.arg_constraints[name].event_dim
        super().__init__(tuple(parameter.shape[:batch_dims]), validate_args=validate_args)

    def _given_probs_or_logits(self, probs, logits):
        """The name of the one parameter given, and its value as a floating tensor."""
        owner = type(self).__name__
        if (probs is None) == (logits is None):
            raise ArgumentError(f"{owner}: either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        return name, as_parameter(value, name, owner)

    @lazy_property
    def logits(self):
        """log(p / (1 - p)), with p clamped away from 0 and 1."""
        return binary_logits(self.probs)

    @lazy_property
    def probs(self):
        """σ(logits)."""
        return self.logits.sigmoid()

    @property
    def param_shape(self):
        return tuple(self._param.shape)


def draw_on_host(draw, like, shape, *parameters):
    """Random values of ``shape`` from vizgrad's generator (``vizgrad.manual_seed`` makes them
    reproducible), drawn on the host by ``draw(rng, *arrays)`` from the parameters (Tensors,
    broadcast to ``shape``) and returned as a tensor of ``like``'s dtype and device: the samplers
    NumPy has and the Array API lacks (gamma, Poisson, binomial)."""
    arrays = [np.broadcast_to(np.asarray(p._backend().to_numpy(p.detach()._array), dtype=np.float64), shape)
              for p in parameters]
    host = np.asarray(draw(creation.default_generator._rng, *arrays), dtype=like.dtype.numpy).reshape(shape)
    return creation.tensor(host, dtype=like.dtype, device=like.device)
