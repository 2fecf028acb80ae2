"""Conversions that keep the graph: dtype casts, device transfers, clone."""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..autograd.grad_mode import no_grad
from ..errors import not_a_tensor
from ..tensor import Tensor
from .registry import register
from .samples import unary


class ToDtype(Op):
    @staticmethod
    def forward(ctx, a, native):
        ctx.source = a.dtype
        return ctx.xp.astype(a, native)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.astype(grad, ctx.source)


def to_dtype(input, dtype):
    """``input`` cast to ``dtype``. Differentiable between floating dtypes; a cast to an
    integer or bool dtype ends the graph."""
    dtype = dtypes.as_dtype(dtype)
    if input.dtype is dtype:
        return input
    native = input._backend().native_dtype(dtype)
    if not dtype.is_floating_point:
        with no_grad():
            return ToDtype.apply(input, native=native)
    return ToDtype.apply(input, native=native)


class ToDevice(Op):
    @staticmethod
    def forward(ctx, a, target, index):
        from ..backends import backend_of
        source = backend_of(a)
        ctx.source = (source, source.device_index(a))
        return target.asarray(source.to_numpy(a) if target is not source else a, None, index)

    @staticmethod
    def backward(ctx, grad):
        source, index = ctx.source
        if isinstance(grad, Tensor):  # create_graph: the move back is recorded too
            return ToDevice.apply(grad, target=source, index=index)
        from ..backends import backend_of
        return source.asarray(backend_of(grad).to_numpy(grad), None, index)


def to_device(input, device):
    """``input`` on ``device`` (a :class:`vizgrad.device`); differentiable, the gradient
    moves back."""
    backend = device.backend
    index = device.index or 0
    if backend is input._backend() and (not backend.multi_device or
                                        backend.device_index(input._array) == index):
        return input
    return ToDevice.apply(input, target=backend, index=index)


class Clone(Op):
    @staticmethod
    def forward(ctx, a):
        return ctx.xp.asarray(a, copy=True)

    @staticmethod
    def backward(ctx, grad):
        return grad


@register(np.copy, unary())
def clone(input):
    """A copy of ``input`` with its own memory; the gradient passes through unchanged."""
    return Clone.apply(input)


def _contiguous_reference(x):
    return np.array(x, order="C")  # not np.ascontiguousarray, which turns 0-d into 1-d


class Contiguous(Op):
    @staticmethod
    def forward(ctx, a):
        return ctx.xp.reshape(a, a.shape, copy=True)  # reshape copies in row-major order

    @staticmethod
    def backward(ctx, grad):
        return grad


@register(_contiguous_reference, unary())
def contiguous(input):
    """``input`` laid out contiguously in row-major order (a copy only when needed); the
    gradient passes through unchanged."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("contiguous", "input", input)
    if input._backend().is_contiguous(input._array):
        return input
    return Contiguous.apply(input)
