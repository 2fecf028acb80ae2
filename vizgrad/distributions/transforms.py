"""Transforms: invertible maps y = f(x) with the log |det ∂y/∂x| a change of variables needs, with
PyTorch's names (``torch.distributions.transforms``). A :class:`TransformedDistribution` pushes a
base distribution through them (``LogNormal`` is ``Normal`` through ``ExpTransform``).

Example::

    t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])   # y = 1 + 2 eˣ
    y = t(x)
    t.inv(y)                                  # x again
    t.log_abs_det_jacobian(x, y)              # log 2 + x
"""

import math
import numbers

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError
from ..ops.activation import softplus
from ..tensor import Tensor
from . import constraints
from .distribution import binary_logits, clamp_probs
from .independent import sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform", "TanhTransform",
           "Transform", "identity_transform"]


class Transform:
    """An invertible (``bijective``) or merely computable map between two constrained sets.

    Subclasses define ``_call(x)``, ``_inverse(y)`` and ``log_abs_det_jacobian(x, y)``, and set
    ``domain``, ``codomain``, ``bijective`` and ``sign`` (+1 increasing, -1 decreasing, for
    monotone maps of numbers). ``cache_size=1`` remembers the last pair (x, y), so ``inv(t(x))``
    returns ``x`` itself (exactly, and with its graph).
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ArgumentError(f"{type(self).__name__}: cache_size must be 0 or 1, got {cache_size!r}")
        self._cache_size = cache_size
        self._cached = None               # (x, y) of the last call when cache_size is 1

    @property
    def event_dim(self):
        if self.domain.event_dim != self.codomain.event_dim:
            raise ArgumentError(f"{type(self).__name__}: event_dim is ambiguous: please use domain.event_dim "
                                f"or codomain.event_dim")
        return self.domain.event_dim

    @property
    def inv(self):
        """The inverse transform: ``t.inv(t(x)) == x``."""
        return _InverseTransform(self)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __call__(self, x):
        if self._cache_size and self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        if self._cache_size:
            self._cached = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size and self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        if self._cache_size:
            self._cached = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not define its forward map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} is not invertible")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__} does not define log_abs_det_jacobian")

    def forward_shape(self, shape):
        return tuple(shape)

    def inverse_shape(self, shape):
        return tuple(shape)

    def __eq__(self, other):
        return type(self) is type(other) if type(self) in _PARAMETERLESS else self is other

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    """The inverse of ``transform``: its call is the other's inverse, and its log-Jacobian the
    other's, negated, at the swapped pair."""

    def __init__(self, transform):
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """The transforms of ``parts`` applied in order: ``ComposeTransform([f, g])(x) = g(f(x))``;
    the log-Jacobians add up (each summed over the event dims it sees as batch)."""

    def __init__(self, parts, cache_size=0):
        if not isinstance(parts, (list, tuple)) or not all(isinstance(part, Transform) for part in parts):
            raise ArgumentTypeError(f"ComposeTransform: parts must be a list of Transforms, got {parts!r}")
        super().__init__(cache_size)
        self.parts = list(parts)

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim       # walk back: the event dims the input needs
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.over_event_dims(domain, event_dim - domain.event_dim)

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.over_event_dims(codomain, event_dim - codomain.event_dim)

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self):
        return ComposeTransform([part.inv for part in reversed(self.parts)], self._cache_size)

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x * 0
        points = [x]
        for part in self.parts[:-1]:
            points.append(part(points[-1]))
        points.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, before, after in zip(self.parts, points[:-1], points[1:]):
            total = total + sum_rightmost(part.log_abs_det_jacobian(before, after), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def __repr__(self):
        inner = ",\n".join(repr(part) for part in self.parts)
        return type(self).__name__ + "(\n    " + inner.replace("\n", "\n    ") + "\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = eˣ;  log |dy/dx| = x."""

    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class AbsTransform(Transform):
    """y = |x| (not injective: its ``inv`` returns the non-negative preimage)."""

    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SigmoidTransform(Transform):
    """y = σ(x) = 1 / (1 + e⁻ˣ), kept inside [ε, 1 - ε];  log |dy/dx| = -softplus(-x) - softplus(x)."""

    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, 1

    def _call(self, x):
        return clamp_probs(x.sigmoid())

    def _inverse(self, y):
        return binary_logits(y)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh x;  x = atanh y = ½ (log1p(y) - log1p(-y));  log |dy/dx| = 2 (log 2 - x - softplus(-2x)),
    stable for large |x|. Use ``cache_size=1`` to score samples near ±1 exactly."""

    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), True, 1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale · x (``loc`` and ``scale`` numbers or tensors); log |dy/dx| = log |scale|,
    summed over the last ``event_dim`` dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        for name, value in (("loc", loc), ("scale", scale)):
            if not isinstance(value, (Tensor, numbers.Real)) or isinstance(value, bool):
                raise ArgumentTypeError(f"AffineTransform: {name} must be a Tensor or a number, got "
                                        f"{type(value).__name__}")
        if not isinstance(event_dim, int) or isinstance(event_dim, bool) or event_dim < 0:
            raise ArgumentError(f"AffineTransform: event_dim must be a non-negative int, got {event_dim!r}")
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.over_event_dims(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, Tensor):
            return self.scale.sign()
        return 1 if self.scale > 0 else -1 if self.scale < 0 else 0

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, Tensor):
            result = self.scale.abs().log()
        else:
            result = x * 0 + math.log(abs(self.scale))
        shape = tuple(x.shape)
        if self._event_dim:
            result = sum_rightmost(result.expand(_broadcast(tuple(result.shape), shape)), self._event_dim)
            shape = shape[:-self._event_dim]
        return result.expand(_broadcast(tuple(result.shape), shape))

    def forward_shape(self, shape):
        return _broadcast(tuple(shape), tuple(getattr(self.loc, "shape", ())), tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape

    def __eq__(self, other):
        if not isinstance(other, AffineTransform) or self._event_dim != other._event_dim:
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = object.__hash__


def _broadcast(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def _same(a, b):
    """Whether two numbers or tensors hold the same values (PyTorch's test of equal transforms)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        try:
            return bool((a == b).all())
        except (ValueError, RuntimeError):     # shapes that do not broadcast
            return False
    return a == b


_PARAMETERLESS = (ExpTransform, AbsTransform, SigmoidTransform, TanhTransform)
