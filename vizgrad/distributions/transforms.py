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

from .. import creation, dtypes, linalg
from ..errors import ArgumentError, ArgumentTypeError, ShapeError, format_shape
from ..ops.activation import softplus
from ..ops.joins import cat, stack
from ..ops.padding import pad
from ..tensor import Tensor
from . import constraints
from .distribution import binary_logits, clamp_probs
from .independent import sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


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


class PowerTransform(Transform):
    """y = xᵉ on the positive reals (``exponent`` e a number or a tensor);  log |dy/dx| = log |e y / x|."""

    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        if not isinstance(exponent, (Tensor, numbers.Real)) or isinstance(exponent, bool):
            raise ArgumentTypeError(f"PowerTransform: exponent must be a Tensor or a number, got "
                                    f"{type(exponent).__name__}")
        self.exponent = exponent

    @property
    def sign(self):
        if isinstance(self.exponent, Tensor):
            return self.exponent.sign()
        return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast(tuple(shape), tuple(getattr(self.exponent, "shape", ())))

    inverse_shape = forward_shape

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = object.__hash__


class SoftplusTransform(Transform):
    """y = log(1 + eˣ);  x = y + log(1 - e⁻ʸ);  log |dy/dx| = -softplus(-x)."""

    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class SoftmaxTransform(Transform):
    """y = eˣ / Σ eˣ over the last dim, onto the simplex (not injective: ``inv`` gives log y)."""

    domain, codomain = constraints.real_vector, constraints.simplex

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


def _offsets(x, extra):
    """K + ``extra`` - 1, ..., ``extra`` for a last dim of K: the stick-breaking shifts."""
    count = x.shape[-1]
    return creation.arange(count + extra - 1, extra - 1, -1, dtype=x.dtype, device=x.device)


class StickBreakingTransform(Transform):
    """R^K onto the (K+1)-simplex by breaking a stick: zᵢ = σ(xᵢ - log(K + 1 - i)),
    yᵢ = zᵢ Πⱼ₍ⱼ<ᵢ₎ (1 - zⱼ), the last entry what remains; x = 0 maps to the uniform vector."""

    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    def _call(self, x):
        z = (x - _offsets(x, 1).log()).sigmoid()
        remaining = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        rest = (1 - head.cumsum(-1)).clamp(min=dtypes.finfo(y.dtype).tiny)
        return head.log() - rest.log() + _offsets(head, 1).log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _offsets(x, 1).log()
        return (-x - softplus(-x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _need_dims("StickBreakingTransform", shape, 1)
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _need_dims("StickBreakingTransform", shape, 1)
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _need_dims(owner, shape, dims):
    if len(shape) < dims:
        raise ShapeError(f"{owner}: expected a shape of at least {dims} dims, got {format_shape(shape)}")


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated, the upper triangle dropped."""

    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: L Lᵀ with L = LowerCholeskyTransform(x)."""

    domain, codomain = constraints.independent(constraints.real, 2), constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


def _tril_positions(size, diagonal):
    """The flat (row-major) positions of the entries of a size × size matrix on or below ``diagonal``."""
    rows, cols = np.tril_indices(size, diagonal)
    return rows * size + cols


def _vector_to_tril(vector, size, diagonal):
    """The size × size matrices whose entries below ``diagonal`` are ``vector``'s, row by row, zeros elsewhere."""
    index = np.full(size * size, vector.shape[-1])       # the appended zero
    index[_tril_positions(size, diagonal)] = np.arange(vector.shape[-1])
    padded = pad(vector, [0, 1])
    chosen = padded[..., creation.tensor(index, device=vector.device)]
    return chosen.reshape(*vector.shape[:-1], size, size)


def _tril_to_vector(matrix, diagonal):
    size = matrix.shape[-1]
    flat = matrix.reshape(*matrix.shape[:-2], size * size)
    return flat[..., creation.tensor(_tril_positions(size, diagonal), device=matrix.device)]


class CorrCholeskyTransform(Transform):
    """Vectors of D(D-1)/2 reals onto Cholesky factors of D × D correlation matrices (lower
    triangular, unit rows): each entry tanh(x) is a partial correlation, and each row is built by
    breaking the unit length into its squares (Stan's construction)."""

    domain, codomain, bijective = constraints.real_vector, constraints.corr_cholesky, True

    def _call(self, x):
        eps = dtypes.finfo(x.dtype).eps
        size = self._size(x.shape[-1])
        r = _vector_to_tril(x.tanh().clamp(min=-1 + eps, max=1 - eps), size, -1)
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + creation.eye(size, dtype=x.dtype, device=x.device)
        return r * pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        shifted = pad(left[..., :-1], [1, 0], value=1)
        t = _tril_to_vector(y, -1) / _tril_to_vector(shifted, -1).sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y):
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * _tril_to_vector(left, -2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    @staticmethod
    def _size(count):
        size = round((0.25 + 2 * count) ** 0.5 + 0.5)
        if size * (size - 1) // 2 != count:
            raise ShapeError(f"CorrCholeskyTransform: the last dim ({count}) is not D(D-1)/2 for any D")
        return size

    def forward_shape(self, shape):
        _need_dims("CorrCholeskyTransform", shape, 1)
        size = self._size(shape[-1])
        return tuple(shape[:-1]) + (size, size)

    def inverse_shape(self, shape):
        _need_dims("CorrCholeskyTransform", shape, 2)
        if shape[-1] != shape[-2]:
            raise ShapeError(f"CorrCholeskyTransform: expected square matrices, got {format_shape(shape)}")
        return tuple(shape[:-2]) + (shape[-1] * (shape[-1] - 1) // 2,)


class ReshapeTransform(Transform):
    """The event shape ``in_shape`` reshaped to ``out_shape`` (same number of elements);
    log |det| = 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        super().__init__(cache_size)
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ShapeError(f"ReshapeTransform: in_shape {format_shape(self.in_shape)} and out_shape "
                             f"{format_shape(self.out_shape)} have different numbers of elements")

    @property
    def domain(self):
        return constraints.over_event_dims(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.over_event_dims(constraints.real, len(self.out_shape))

    def _call(self, x):
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y):
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return creation.zeros(*x.shape[:x.ndim - len(self.in_shape)], dtype=x.dtype, device=x.device)

    def _swap(self, shape, given, wanted):
        cut = len(shape) - len(given)
        if cut < 0 or tuple(shape[cut:]) != given:
            raise ShapeError(f"ReshapeTransform: shape {format_shape(shape)} does not end with {format_shape(given)}")
        return tuple(shape[:cut]) + wanted

    def forward_shape(self, shape):
        return self._swap(tuple(shape), self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(tuple(shape), self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """``base_transform`` with its last ``reinterpreted_batch_ndims`` batch dims read as event
    dims: its log-Jacobian summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size)
        if not isinstance(base_transform, Transform):
            raise ArgumentTypeError(f"IndependentTransform: base_transform must be a Transform, got "
                                    f"{type(base_transform).__name__}")
        self.base_transform, self.reinterpreted_batch_ndims = base_transform, reinterpreted_batch_ndims

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _check_transforms(owner, tseq):
    if not isinstance(tseq, (list, tuple)) or not tseq or not all(isinstance(t, Transform) for t in tseq):
        raise ArgumentTypeError(f"{owner}: tseq must be a non-empty list of Transforms, got {tseq!r}")
    return list(tseq)


class CatTransform(Transform):
    """The transforms of ``tseq`` applied to consecutive slices of ``lengths`` (default 1 each)
    along ``dim``, their results concatenated (as ``vizgrad.cat``)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size)
        self.transforms = _check_transforms("CatTransform", tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ArgumentError(f"CatTransform: {len(self.transforms)} transforms but {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x, apply):
        self._check_length(x)
        pieces, start = [], 0
        for transform, length in zip(self.transforms, self.lengths):
            pieces.append(apply(transform, x.narrow(self.dim, start, length)))
            start += length
        return cat(pieces, self.dim)

    def _check_length(self, x):
        if x.shape[self.dim] != sum(self.lengths):
            raise ShapeError(f"CatTransform: dim {self.dim} of the value has size {x.shape[self.dim]}, the lengths "
                             f"add up to {sum(self.lengths)}")

    def _call(self, x):
        return self._pieces(x, lambda transform, piece: transform(piece))

    def _inverse(self, y):
        return self._pieces(y, lambda transform, piece: transform.inv(piece))

    def log_abs_det_jacobian(self, x, y):
        self._check_length(x)
        terms, start = [], 0
        for transform, length in zip(self.transforms, self.lengths):
            term = transform.log_abs_det_jacobian(x.narrow(self.dim, start, length), y.narrow(self.dim, start, length))
            terms.append(sum_rightmost(term, self.event_dim - transform.event_dim))
            start += length
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + self.event_dim
        return cat(terms, dim) if dim < 0 else sum(terms)


class StackTransform(Transform):
    """The transforms of ``tseq`` applied to the successive entries of ``dim``, their results
    stacked (as ``vizgrad.stack``)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size)
        self.transforms, self.dim = _check_transforms("StackTransform", tseq), dim

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def _slices(self, x):
        if x.shape[self.dim] != len(self.transforms):
            raise ShapeError(f"StackTransform: dim {self.dim} of the value has size {x.shape[self.dim]}, expected "
                             f"{len(self.transforms)} (one per transform)")
        return [x.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return stack([t(piece) for t, piece in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return stack([t.inv(piece) for t, piece in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return stack([t.log_abs_det_jacobian(a, b)
                      for t, a, b in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = F(x), the CDF of ``distribution`` (one with ``cdf``, ``icdf`` and ``log_prob``), onto
    [0, 1];  log |dy/dx| = log p(x)."""

    bijective, sign, codomain = True, 1, constraints.unit_interval

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


_PARAMETERLESS = (ExpTransform, AbsTransform, SigmoidTransform, TanhTransform, SoftplusTransform, SoftmaxTransform,
                  StickBreakingTransform, LowerCholeskyTransform, PositiveDefiniteTransform, CorrCholeskyTransform)

