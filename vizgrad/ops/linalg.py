"""Linear algebra: matmul and its special cases (mm, bmm, mv, dot), outer, the determinants, kron;
einsum and tensordot live in :mod:`vizgrad.ops.contractions`.

matmul follows NumPy and PyTorch: 1-D operands are promoted to matrices (a row on
the left, a column on the right) and the added dim is removed from the result;
leading (batch) dims broadcast. Its backward works on the promoted operands and
leaves the batch sums to the engine's one broadcasting helper.
"""

import math
import warnings

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import (DTypeError, DTypeNotImplementedError, ShapeError, format_shape, ArgumentError, LinAlgError,
                      not_a_tensor, check_dim)
from ..tensor import Tensor
from . import binary, nonfinite
from .binary import mul
from .registry import Sample, register
from .samples import non_contiguous, values
from .shape import reshape


def _tensors(op, names, *operands):
    """Check that ``operands`` (the arguments ``names`` of ``op``) are Tensors of one dtype, not
    bool: as in PyTorch, the matrix products promote no dtypes ("expected m1 and m2 to have the
    same dtype") and have no bool kernels, refusals PyTorch makes RuntimeErrors (so is
    :class:`DTypeNotImplementedError`)."""
    for name, operand in zip(names, operands):
        if not isinstance(operand, Tensor):
            raise not_a_tensor(op, name, operand)
    first = operands[0]
    for name, operand in zip(names[1:], operands[1:]):   # (raw dtypes first: Tensor.dtype is a lookup)
        if operand._array.dtype is not first._array.dtype and operand.dtype is not first.dtype:
            common = dtypes.promote_types(first.dtype, operand.dtype)
            convert = name if common is first.dtype else names[0]
            raise DTypeNotImplementedError(
                f"{op}: expected {names[0]} and {name} to have the same dtype, but got: {first.dtype.name} != "
                f"{operand.dtype.name}. {op} does not promote dtypes, as in PyTorch: convert one first, e.g. "
                f"{convert} with .to({common!r})")
    if first.dtype is dtypes.bool_:
        raise DTypeNotImplementedError(f"{op}: not implemented for bool tensors, as in PyTorch; convert them "
                                       "first, e.g. with .float() or .long()")


# --- matmul --------------------------------------------------------------------
class MatMul(Op):
    broadcasts = True  # batch dims of the gradients are summed by the engine

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        # work on matrices: a 1-D a is a row (1, k), a 1-D b a column (k, 1); grad gets those dims back
        a2 = xp.expand_dims(a, axis=0) if a.ndim == 1 else a
        b2 = xp.expand_dims(b, axis=-1) if b.ndim == 1 else b
        g = xp.expand_dims(grad, axis=-1) if b.ndim == 1 else grad
        g = xp.expand_dims(g, axis=-2) if a.ndim == 1 else g
        grad_a = grad_b = None
        if needs_a:  # dL/dA = G Bᵀ
            grad_a = xp.matmul(g, xp.matrix_transpose(b2))
            grad_a = xp.squeeze(grad_a, axis=-2) if a.ndim == 1 else grad_a
        if needs_b:  # dL/dB = Aᵀ G
            grad_b = xp.matmul(xp.matrix_transpose(a2), g)
            grad_b = xp.squeeze(grad_b, axis=-1) if b.ndim == 1 else grad_b
        return grad_a, grad_b


def _matmul_shape(op, first, second):
    """The shape of ``first @ second``, or a ShapeError naming both shapes."""
    if len(first) == 2 and len(second) == 2 and first[1] == second[0]:
        return first[0], second[1]  # the common case: two matrices that fit
    if not first or not second:
        raise ShapeError(f"{op}: both operands need at least 1 dimension, got shapes {format_shape(first)} and "
                         f"{format_shape(second)} (use * to multiply by a 0-d tensor)")
    inner_a, inner_b = len(first) - 1, max(len(second) - 2, 0)
    if first[inner_a] != second[inner_b]:
        raise ShapeError(f"{op}: the inner dimensions do not match: {format_shape(first)} @ {format_shape(second)} "
                         f"-- dim {inner_a} of the first ({first[inner_a]}) must equal dim {inner_b} of the "
                         f"second ({second[inner_b]})")
    batch_a, batch_b = first[:-2], second[:-2]
    ndim = max(len(batch_a), len(batch_b))
    batch = []
    for axis in range(ndim):
        n = batch_a[axis - ndim + len(batch_a)] if axis - ndim + len(batch_a) >= 0 else 1
        m = batch_b[axis - ndim + len(batch_b)] if axis - ndim + len(batch_b) >= 0 else 1
        if n != m and 1 not in (n, m):
            raise ShapeError(f"{op}: the batch dimensions {format_shape(batch_a)} and {format_shape(batch_b)} of "
                             f"{format_shape(first)} @ {format_shape(second)} do not broadcast")
        batch.append(max(n, m) if 1 in (n, m) else n)
    rows = (first[-2],) if len(first) > 1 else ()
    columns = (second[-1],) if len(second) > 1 else ()
    return tuple(batch) + rows + columns


def _matmul_samples(rng):
    for left, right in (((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)),
                        ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                        ((1, 4), (4, 1))):
        yield Sample((values(rng, left), values(rng, right)), name=f"{left}@{right}")
    yield Sample((non_contiguous(values(rng, (3, 4))), non_contiguous(values(rng, (4, 2)))), name="non-contiguous")


@register(np.matmul, _matmul_samples)
def matmul(input, other):
    """Matrix product with NumPy's rules: 1-D operands are promoted (and the added dim
    removed), leading batch dims broadcast.

    C = AB:  dL/dA = G Bᵀ,  dL/dB = Aᵀ G  (summed over broadcast batch dims).

    Example::

        a = vizgrad.randn(2, 3, 4, requires_grad=True)
        b = vizgrad.randn(4, 5, requires_grad=True)
        (a @ b).shape          # (2, 3, 5); b.grad sums over the batch
    """
    _tensors("matmul", ("input", "other"), input, other)
    _matmul_shape("matmul", input.shape, other.shape)
    return MatMul.apply(input, other)


def _with_dims(op, names_and_ndims, *operands):
    for operand, (name, ndim) in zip(operands, names_and_ndims):
        if operand.ndim != ndim:
            raise ShapeError(f"{op}: {name} must be {ndim}-D, got shape {format_shape(operand.shape)}")


@register(np.matmul, lambda rng: iter([Sample((values(rng, (3, 4)), values(rng, (4, 2))))]))
def mm(input, mat2):
    """Product of two matrices, (n, m) @ (m, p) -> (n, p); :func:`matmul` without batching."""
    _tensors("mm", ("input", "mat2"), input, mat2)
    _with_dims("mm", (("input", 2), ("mat2", 2)), input, mat2)
    _matmul_shape("mm", input.shape, mat2.shape)
    return MatMul.apply(input, mat2)


@register(np.matmul, lambda rng: iter([Sample((values(rng, (2, 3, 4)), values(rng, (2, 4, 2))))]))
def bmm(input, mat2):
    """Batched matrix product, (b, n, m) @ (b, m, p) -> (b, n, p); the batch sizes must be
    equal (no broadcasting: use :func:`matmul` for that)."""
    _tensors("bmm", ("input", "mat2"), input, mat2)
    _with_dims("bmm", (("input", 3), ("mat2", 3)), input, mat2)
    if input.shape[0] != mat2.shape[0]:
        raise ShapeError(f"bmm: the batch sizes differ: {format_shape(input.shape)} and {format_shape(mat2.shape)}")
    _matmul_shape("bmm", input.shape, mat2.shape)
    return MatMul.apply(input, mat2)


@register(np.matmul, lambda rng: iter([Sample((values(rng, (3, 4)), values(rng, (4,))))]))
def mv(input, vec):
    """Matrix times vector, (n, m) @ (m,) -> (n,)."""
    _tensors("mv", ("input", "vec"), input, vec)
    _with_dims("mv", (("input", 2), ("vec", 1)), input, vec)
    _matmul_shape("mv", input.shape, vec.shape)
    return MatMul.apply(input, vec)


@register(np.dot, lambda rng: iter([Sample((values(rng, (5,)), values(rng, (5,))))]))
def dot(input, tensor):
    """Inner product of two 1-D tensors of one length: Σ a_i b_i (a 0-d tensor)."""
    return _vector_product("dot", ("input", "tensor"), input, tensor)


def _vector_product(op, names, a, b):
    """Σ a_i b_i of two 1-D tensors of one length, checked in ``op``'s words."""
    _tensors(op, names, a, b)
    _with_dims(op, ((names[0], 1), (names[1], 1)), a, b)
    if a.shape != b.shape:
        raise ShapeError(f"{op}: the vectors have different lengths: {format_shape(a.shape)} and "
                         f"{format_shape(b.shape)}")
    return MatMul.apply(a, b)


@register(np.vdot, lambda rng: iter([Sample((values(rng, (5,)), values(rng, (5,))))]))
def vdot(input, other):
    """Σ conj(a_i) b_i of two 1-D tensors of one length: :func:`dot` for real tensors (vizgrad's).

    Example::

        vizgrad.vdot(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([3.0, 4.0]))   # tensor(11.)
    """
    return _vector_product("vdot", ("input", "other"), input, other)


@register(np.outer, lambda rng: iter([Sample((values(rng, (3,)), values(rng, (4,))))]), aliases=("ger",))
def outer(input, vec2):
    """Outer product of two 1-D tensors: out[i, j] = a_i b_j.  dL/da = G b, dL/db = Gᵀ a.

    Computed as PyTorch does, ``input.reshape(-1, 1) * vec2`` (so ``grad_fn`` is
    ``MulBackward0`` and, unlike the matrix products, the dtypes promote as for ``*``).

    Example::

        vizgrad.outer(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 10.0]))   # [[1, 10], [2, 20]]
    """
    for name, operand in (("input", input), ("vec2", vec2)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor("outer", name, operand)
    _with_dims("outer", (("input", 1), ("vec2", 1)), input, vec2)
    return mul(reshape(input, (-1, 1)), vec2)


# --- addmm, addmv, addr, baddbmm, addbmm: beta·input + alpha·(a product) ------------------------

def _scaled_sum(op, input, product, beta, alpha):
    """``beta · input + alpha · product`` (``input`` broadcast to the product's shape); with
    beta = 0 input's values are ignored, NaN and inf included, as PyTorch. On integer tensors
    beta and alpha are truncated to integers, as PyTorch does, so the result keeps the dtype."""
    from ..errors import as_integer_scalar, as_number
    beta, alpha = as_number(op, "beta", beta), as_number(op, "alpha", alpha)
    if not product.dtype.is_floating_point:
        beta, alpha = as_integer_scalar(op, "beta", beta), as_integer_scalar(op, "alpha", alpha)
    if len(input.shape) > len(product.shape) or any(a not in (1, b) for a, b in zip(input.shape[::-1],
                                                                                       product.shape[::-1])):
        raise ShapeError(f"{op}: input of shape {format_shape(input.shape)} does not broadcast to the product's "
                         f"shape {format_shape(product.shape)}")
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:          # input's values are left out; its gradient is zero, not missing
        return input.masked_fill(input.new_ones((), dtype=dtypes.bool_), 0) + scaled
    return (input if beta == 1 else input * beta) + scaled


def _addmm_samples(rng):
    yield Sample((values(rng, (3, 2)), values(rng, (3, 4)), values(rng, (4, 2))), name="matrix")
    yield Sample((values(rng, (2,)), values(rng, (3, 4)), values(rng, (4, 2))), {"beta": 0.5, "alpha": 2.0},
                 name="row, scaled")


@register(lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b), _addmm_samples)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta · input + alpha · (mat1 @ mat2)`` for matrices (n, m) @ (m, p), input broadcast
    to (n, p); with beta = 0, input is ignored (its NaN too). A linear layer is one.

    Example::

        vizgrad.addmm(vizgrad.zeros(2), vizgrad.ones(3, 4), vizgrad.ones(4, 2))   # 3x2 of 4.
    """
    _tensors("addmm", ("input", "mat1", "mat2"), input, mat1, mat2)
    _with_dims("addmm", (("mat1", 2), ("mat2", 2)), mat1, mat2)
    _matmul_shape("addmm", mat1.shape, mat2.shape)
    return _scaled_sum("addmm", input, MatMul.apply(mat1, mat2), beta, alpha)


def _addmv_samples(rng):
    yield Sample((values(rng, (3,)), values(rng, (3, 4)), values(rng, (4,))), {"alpha": 0.5}, name="vector")


@register(lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b), _addmv_samples)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta · input + alpha · (mat @ vec)`` for (n, m) @ (m,), input broadcast to (n,).

    Example::

        vizgrad.addmv(vizgrad.ones(2), vizgrad.ones(2, 3), vizgrad.ones(3))   # tensor([4., 4.])
    """
    _tensors("addmv", ("input", "mat", "vec"), input, mat, vec)
    _with_dims("addmv", (("mat", 2), ("vec", 1)), mat, vec)
    _matmul_shape("addmv", mat.shape, vec.shape)
    return _scaled_sum("addmv", input, MatMul.apply(mat, vec), beta, alpha)


def _addr_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3,)), values(rng, (4,))), {"beta": 2.0}, name="outer")


@register(lambda c, a, b, beta=1, alpha=1: beta * c + alpha * np.outer(a, b), _addr_samples)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta · input + alpha · outer(vec1, vec2)``, input broadcast to (n, m).

    Example::

        vizgrad.addr(vizgrad.zeros(2, 2), vizgrad.ones(2), vizgrad.ones(2))   # 2x2 of 1.
    """
    _tensors("addr", ("input", "vec1", "vec2"), input, vec1, vec2)
    _with_dims("addr", (("vec1", 1), ("vec2", 1)), vec1, vec2)
    for name, scale in (("beta", beta), ("alpha", alpha)):
        if not input.dtype.is_floating_point and isinstance(scale, float):
            raise DTypeError(f"addr: for integer tensors, {name} must not be a floating point number, as in "
                             f"PyTorch; got {name}={scale!r}")
    return _scaled_sum("addr", input, mul(reshape(vec1, (-1, 1)), vec2), beta, alpha)


def _baddbmm_samples(rng):
    yield Sample((values(rng, (2, 3, 2)), values(rng, (2, 3, 4)), values(rng, (2, 4, 2))), name="batch")
    yield Sample((values(rng, (3, 1)), values(rng, (2, 3, 4)), values(rng, (2, 4, 2))), {"beta": 0.5, "alpha": -1.0},
                 name="broadcast, scaled")


@register(lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b), _baddbmm_samples)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta · input + alpha · (batch1 @ batch2)`` for batches (b, n, m) @ (b, m, p), input
    broadcast to (b, n, p) (attention scores with a mask added are one).

    Example::

        vizgrad.baddbmm(vizgrad.zeros(2, 3, 5), vizgrad.randn(2, 3, 4), vizgrad.randn(2, 4, 5)).shape   # (2, 3, 5)
    """
    _tensors("baddbmm", ("input", "batch1", "batch2"), input, batch1, batch2)
    _with_dims("baddbmm", (("batch1", 3), ("batch2", 3)), batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"baddbmm: the batch sizes differ: {format_shape(batch1.shape)} and "
                         f"{format_shape(batch2.shape)}")
    _matmul_shape("baddbmm", batch1.shape, batch2.shape)
    return _scaled_sum("baddbmm", input, MatMul.apply(batch1, batch2), beta, alpha)


def _addbmm_samples(rng):
    yield Sample((values(rng, (3, 2)), values(rng, (4, 3, 5)), values(rng, (4, 5, 2))), {"alpha": 0.5}, name="sum")


@register(lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b).sum(axis=0), _addbmm_samples)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta · input + alpha · Σᵢ batch1[i] @ batch2[i]``: the batch's products summed, input
    broadcast to (n, p).

    Example::

        vizgrad.addbmm(vizgrad.zeros(3, 5), vizgrad.ones(2, 3, 4), vizgrad.ones(2, 4, 5))   # 3x5 of 8.
    """
    from .reduce import sum as total
    _tensors("addbmm", ("input", "batch1", "batch2"), input, batch1, batch2)
    _with_dims("addbmm", (("batch1", 3), ("batch2", 3)), batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"addbmm: the batch sizes differ: {format_shape(batch1.shape)} and "
                         f"{format_shape(batch2.shape)}")
    _matmul_shape("addbmm", batch1.shape, batch2.shape)
    products = MatMul.apply(batch1, batch2)
    summed = total(products, 0).to(products.dtype)          # (int32 stays int32, as PyTorch's)
    return _scaled_sum("addbmm", input, summed, beta, alpha)


def _dist_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4))), name="2-norm")
    yield Sample((values(rng, (3, 4)), values(rng, (4,))), {"p": 1}, name="1-norm, broadcast")
    yield Sample((values(rng, (5,)), values(rng, (5,))), {"p": 3.0}, name="3-norm")


def _dist_reference(x, y, p=2):
    return np.linalg.norm((x - y).reshape(-1), ord=p)


@register(_dist_reference, _dist_samples)
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), as one number.

    Example::

        vizgrad.dist(vizgrad.ones(3), vizgrad.zeros(3), p=1)   # tensor(3.)
    """
    from ..linalg import vector_norm  # lazy: vizgrad.linalg, the public namespace, is built on the ops
    for name, operand in (("input", input), ("other", other)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor("dist", name, operand)
    return vector_norm(input - other, ord=p)


def _cross_samples(rng):
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3)), 1), name="rows")
    yield Sample((values(rng, (3, 2)), values(rng, (3, 2)), 0), name="dim 0")
    yield Sample((values(rng, (2, 1, 3)), values(rng, (1, 4, 3))), {"dim": -1}, name="broadcast")
    yield Sample((non_contiguous(values(rng, (3, 4))), values(rng, (3, 4)), -2), name="non-contiguous")


def _cross_reference(a, b, dim=None):
    shape = np.broadcast_shapes(a.shape, b.shape)
    axis = shape.index(3) if dim is None else dim
    return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=axis)


@register(_cross_reference, _cross_samples)
def cross(input, other, dim=None):
    """The cross product of the 3-vectors along ``dim``, broadcasting the other dims:
    (a × b)ᵢ = aᵢ₊₁bᵢ₊₂ − aᵢ₊₂bᵢ₊₁ (indices mod 3). Without ``dim``, PyTorch's deprecated
    default, with its warning: the first dim of size 3 (:func:`vizgrad.linalg.cross` takes
    the last).

    d(a × b)/da · g = b × g, d(a × b)/db · g = g × a.

    Example::

        vizgrad.cross(vizgrad.tensor([1.0, 0.0, 0.0]), vizgrad.tensor([0.0, 1.0, 0.0]), dim=0)   # tensor([0., 0., 1.])
    """
    return cross_product("cross", input, other, dim)


def cross_product(op, input, other, dim):
    """:func:`cross` for ``op`` (``cross`` or ``linalg.cross``), whose name its errors use."""
    from .joins import roll
    for name, operand in (("input", input), ("other", other)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor(op, name, operand)
    if input.ndim != other.ndim:
        raise ShapeError(f"{op}: input and other must have the same number of dims, got shapes "
                         f"{format_shape(input.shape)} and {format_shape(other.shape)}")
    if input.dtype is not other.dtype or input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: input and other must have one number dtype (as in PyTorch), got "
                         f"{input.dtype.name} and {other.dtype.name}")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise ShapeError(f"{op}: input of shape {format_shape(input.shape)} and other of shape "
                         f"{format_shape(other.shape)} do not broadcast") from None
    if dim is None:
        if 3 not in shape:
            raise ShapeError(f"{op}: no dim of size 3 in the inputs' shape {format_shape(shape)}; "
                             f"name the vectors' dim with dim=")
        warnings.warn(f"{op} without dim uses the first dim of size 3 (PyTorch's deprecated default); pass "
                      f"dim, or use vizgrad.linalg.cross, which takes the last", UserWarning, stacklevel=3)
        dim = shape.index(3)
    axis = check_dim(op, dim, len(shape))
    if shape[axis] != 3:
        raise ShapeError(f"{op}: dim {dim} must have size 3 (3-vectors), got {shape[axis]} in the inputs' "
                         f"shape {format_shape(shape)}")
    a, b = input.expand(shape), other.expand(shape)
    return roll(a, -1, axis) * roll(b, -2, axis) - roll(a, -2, axis) * roll(b, -1, axis)


def _cdist_samples(rng):
    yield Sample((values(rng, (4, 3)), values(rng, (5, 3))), name="euclidean")
    yield Sample((values(rng, (2, 4, 3)), values(rng, (2, 2, 3))), {"p": 1.0}, name="batch, p=1")
    yield Sample((values(rng, (3, 2)), values(rng, (4, 2))), {"p": 3.0}, name="p=3")


def _cdist_reference(x1, x2, p=2.0, compute_mode=None):
    difference = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    return np.max(difference, axis=-1) if p == np.inf else (difference ** p).sum(axis=-1) ** (1 / p)


@register(_cdist_reference, _cdist_samples, method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between every row of ``x1`` (…, P, M) and every row of ``x2`` (…, R, M), as
    (…, P, R): out[…, i, j] = ‖x1[…, i] - x2[…, j]‖ₚ (p ≥ 0, inf included; batch dims
    broadcast). Its gradient is the norm's, 0 where two rows coincide. ``compute_mode`` is
    accepted for PyTorch's signature (vizgrad always subtracts exactly).

    Example::

        vizgrad.cdist(vizgrad.tensor([[0.0, 0.0]]), vizgrad.tensor([[3.0, 4.0], [1.0, 0.0]]))   # tensor([[5., 1.]])
    """
    from ..linalg import vector_norm  # lazy: vizgrad.linalg, the public namespace, is built on the ops
    _tensors("cdist", ("x1", "x2"), x1, x2)
    for name, operand in (("x1", x1), ("x2", x2)):
        if operand.ndim < 2:
            raise ShapeError(f"cdist: {name} must be at least 2-D (rows of vectors), got shape "
                             f"{format_shape(operand.shape)}")
        if not operand.is_floating_point():
            raise DTypeError(f"cdist: {name} must be a floating point tensor, got {operand.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: x1 and x2 must have rows of one length, got shapes {format_shape(x1.shape)} and "
                         f"{format_shape(x2.shape)}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise ArgumentError(f"cdist: p must be a number at least 0, got {p!r}")
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), ord=p, dim=-1)


# --- inverse, det, slogdet, logdet, solve: square matrices ------------------------------------

def _matrix_name(op):
    """What ``op`` calls its matrix argument: ``A`` in ``linalg``, ``input`` at the top level (as PyTorch)."""
    return "A" if op.startswith("linalg.") else "input"


def _square(op, a):
    """``a`` must be a floating point (batch of) square matrix."""
    name = _matrix_name(op)
    if not isinstance(a, Tensor):
        raise not_a_tensor(op, name, a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: {name} must be a square matrix or a batch of them, got shape {format_shape(a.shape)}")
    if not a.is_floating_point():
        raise DTypeError(f"{op}: {name} must be a floating point tensor, got {a.dtype.name}")


def _singular(op, name, a):
    """The error for a singular matrix: what ``vizgrad.linalg.LinAlgError`` catches."""
    return LinAlgError(f"{op}: {name} is singular (its determinant is 0): it has no inverse, and "
                         f"systems with it have no unique solution (shape {format_shape(a.shape)})")


def _as_matrices(xp, value):
    """A batch of numbers as a batch of 1×1 matrices (to scale matrices)."""
    return xp.reshape(value, tuple(value.shape) + (1, 1))


class Inverse(Op):
    """A⁻¹; d(A⁻¹) = -A⁻¹ dA A⁻¹, so the gradient is -A⁻ᵀ G A⁻ᵀ."""

    @staticmethod
    def forward(ctx, a, op, name):
        xp = ctx.xp
        if nonfinite.all_finite(xp, a):
            try:
                out = xp.linalg.inv(a)
            except np.linalg.LinAlgError:          # (NumPy's and array_api_strict's; CuPy gives inf instead)
                raise _singular(op, name, a) from None
        else:                                      # PyTorch's pivots among the inf and NaN
            nonfinite.lapack_dtype(xp, a)
            out, info = xp.inv_ex(a)
            if bool(xp.any(info != 0)):
                raise _singular(op, name, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        transposed = ctx.xp.matrix_transpose(out)
        return -(transposed @ grad @ transposed)


class Det(Op):
    """det A; d det A = det A · tr(A⁻¹ dA), so the gradient is g · det A · A⁻ᵀ."""

    @staticmethod
    def forward(ctx, a):
        out = nonfinite.det(ctx.xp, a)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        if _any_zero(xp, out):     # a singular matrix: A⁻¹ does not exist, its adjugate does
            return _as_matrices(xp, grad) * _cofactors(xp, a)
        return _as_matrices(xp, grad * out) * xp.matrix_transpose(xp.linalg.inv(a))


def _any_zero(xp, values):
    """Whether any of the determinants ``values`` is 0 (the namespaces' one way to say it)."""
    return bool(xp.sum(xp.astype(values == 0, values.dtype)) > 0)


def _cofactors(xp, a):
    """The cofactor matrix adj(A)ᵀ (the gradient of det A), singular A included: with
    A = U diag(s) Vh, adj(A)ᵀ = det U · det Vh · U diag(∏_{j≠i} s_j) Vh, the products of the
    other singular values taken as the products before and after each one."""
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    ones = xp.ones_like(s[..., :1])
    before = xp.concat([ones, xp.cumulative_prod(s, axis=-1)[..., :-1]], axis=-1)
    after = xp.flip(xp.concat([ones, xp.cumulative_prod(xp.flip(s, axis=-1), axis=-1)[..., :-1]], axis=-1), axis=-1)
    rotation = _as_matrices(xp, xp.linalg.det(u) * xp.linalg.det(vh))
    return rotation * ((u * xp.expand_dims(before * after, axis=-2)) @ vh)


class Slogdet(Op):
    """(sign det A, log |det A|); the gradient of the log is A⁻ᵀ, the sign's is 0 (as PyTorch,
    both outputs require grad)."""

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = nonfinite.slogdet(ctx.xp, a)
        ctx.save_for_backward(a)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad):
        if grad is None:              # the sign is piecewise constant: its gradient is 0
            return None
        a, = ctx.saved_tensors
        xp = ctx.xp
        det = xp.linalg.det(a)
        if _any_zero(xp, det):     # singular: A⁻ᵀ = adj(A)ᵀ / det A, infinite (as PyTorch's)
            return _as_matrices(xp, grad) * _cofactors(xp, a) / _as_matrices(xp, det)
        return _as_matrices(xp, grad) * xp.matrix_transpose(xp.linalg.inv(a))


class Solve(Op):
    """X with A X = B; dX = A⁻¹(dB - dA X), so G_B = A⁻ᵀ G and G_A = -G_B Xᵀ."""

    broadcasts = True

    @staticmethod
    def forward(ctx, a, b, op):
        try:
            out = ctx.xp.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise _singular(op, "A", a) from None
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        grad_b = xp.linalg.solve(xp.matrix_transpose(a), grad)
        return -(grad_b @ xp.matrix_transpose(out)), grad_b


def _matrices(rng, shape):
    """Well-conditioned matrices: random ones plus a multiple of the identity."""
    return values(rng, shape) + 3.0 * np.eye(shape[-1])


def _square_samples(rng):
    yield Sample((_matrices(rng, (3, 3)),), name="matrix")
    yield Sample((_matrices(rng, (2, 4, 4)),), name="batch")
    yield Sample((-_matrices(rng, (1, 1)),), name="1x1, negative")


def _inverse(op, a):
    _square(op, a)
    return Inverse.apply(a, op=op, name=_matrix_name(op))


@register(np.linalg.inv, _square_samples)
def inverse(input):
    """The inverse A⁻¹ of a square matrix (or of each in a batch); d/dA: -A⁻ᵀ G A⁻ᵀ.

    Example::

        vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]]).inverse()   # tensor([[0.5000, 0.0000], [0.0000, 0.2500]])
    """
    return _inverse("inverse", input)


@register(np.linalg.det, _square_samples)
def det(input):
    """The determinant of a square matrix (or of each in a batch); d/dA: g · det A · A⁻ᵀ
    (defined where A is invertible).

    Example::

        vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]]).det()   # tensor(-2.)
    """
    return determinant("det", input)


def determinant(op, a):
    """:func:`det` for ``op`` (``det`` or ``linalg.det``), whose name its errors use."""
    _square(op, a)
    return Det.apply(a)


def _slogdet_reference(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


@register(_slogdet_reference, _square_samples, smooth=False)
def slogdet(input):
    """The sign and the log of the absolute value of the determinant, as a named tuple
    ``(sign, logabsdet)``: the log-determinant without overflow for large matrices. The
    gradient of ``logabsdet`` is A⁻ᵀ; that of ``sign`` is 0.

    Example::

        vizgrad.slogdet(vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))   # sign tensor(-1.), logabsdet tensor(0.6931)
    """
    return log_determinant("slogdet", input)


def log_determinant(op, a):
    """:func:`slogdet` for ``op`` (``slogdet`` or ``linalg.slogdet``), whose name its errors use."""
    _square(op, a)
    return return_types.slogdet(*Slogdet.apply(a))


def _logdet_reference(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.where(sign < 0, np.nan, logabsdet)


def _logdet_samples(rng):
    yield Sample((_matrices(rng, (3, 3)),), name="matrix")
    yield Sample((_matrices(rng, (2, 2, 2)),), name="batch")


@register(_logdet_reference, _logdet_samples)
def logdet(input):
    """log det A: NaN where the determinant is negative, -inf where it is 0 (as PyTorch);
    d/dA: A⁻ᵀ.

    Example::

        vizgrad.tensor([[2.0, 0.0], [0.0, 3.0]]).logdet()   # tensor(1.7918)
    """
    sign, logabsdet = log_determinant("logdet", input)
    return binary.where(sign < 0, math.nan, logabsdet)


def solve_system(op, a, b, left=True):
    """X with A X = B (``left``) or X A = B: :func:`vizgrad.linalg.solve`, named ``op`` in errors."""
    _square(op, a)
    if not isinstance(b, Tensor):
        raise not_a_tensor(op, "B", b)
    if b.dtype is not a.dtype:
        raise DTypeError(f"{op}: A and B must have one dtype, got {a.dtype.name} and {b.dtype.name}")
    if not left:              # X A = B  ⇔  Aᵀ Xᵀ = Bᵀ
        return solve_system(op, a.mT, b.mT).mT
    a, column, vector = system(op, a, b)
    out = Solve.apply(a, column, op=op)
    return out.squeeze(-1) if vector else out


def batch_shape(op, a, b):
    """The broadcast batch shape of A ``a`` and B ``b`` (all but their last two dims)."""
    try:
        return tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of A {format_shape(a.shape)} and B {format_shape(b.shape)} do not "
                         "broadcast") from None


def system(op, a, b):
    """A and B brought to one batch shape for A X = B, B a matrix or (as PyTorch) a vector or
    a batch of vectors of A's shape but its last dim: ``(A, B as columns, whether B was one)``."""
    size = a.shape[-1]
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))   # (*, n), as PyTorch
    column = b.unsqueeze(-1) if vector else b
    if column.ndim < 2 or column.shape[-2] != size:
        raise ShapeError(f"{op}: B must have {size} rows to match A of shape {format_shape(a.shape)}, got shape "
                         f"{format_shape(b.shape)}")
    batch = batch_shape(op, a, column)     # (a vector B has A's batch dims: column's shape is B's where this fails)
    return a.expand(batch + (size, size)), column.expand(batch + tuple(column.shape[-2:])), vector


def _kron_samples(rng):
    yield Sample((values(rng, (2, 2)), values(rng, (3, 2))), name="matrices")
    yield Sample((values(rng, (3,)), values(rng, (2,))), name="vectors")
    yield Sample((values(rng, (2,)), values(rng, (2, 3))), name="1-d and 2-d")
    yield Sample((values(rng, (2, 1, 2)), values(rng, (2, 2))), name="3-d and 2-d")


@register(np.kron, _kron_samples)
def kron(input, other):
    """The Kronecker product: every entry of ``input`` times the whole of ``other``, laid out
    as blocks; out[i·q + k, j·r + l] = a[i, j] b[k, l] (the fewer dims are padded with 1s in front).

    Example::

        vizgrad.kron(vizgrad.eye(2), vizgrad.ones(2, 2)).shape     # (4, 4): two blocks of ones
    """
    for name, operand in (("input", input), ("other", other)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor("kron", name, operand)
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
    spread_a = tuple(size for n in a_shape for size in (n, 1))     # (a0, 1, a1, 1, ...)
    spread_b = tuple(size for n in b_shape for size in (1, n))     # (1, b0, 1, b1, ...)
    product = mul(reshape(input, spread_a), reshape(other, spread_b))
    return reshape(product, tuple(m * n for m, n in zip(a_shape, b_shape)))


def matrix_trace(input):
    """The sum of the main diagonal of the 2-D ``input`` (``x.trace()``, ``vizgrad.trace(x)``);
    the gradient is the identity matrix times the incoming gradient.

    Example::

        vizgrad.tensor([[1., 2.], [3., 4.]]).trace()   # tensor(5.)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("trace", "input", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                         f"(shape {format_shape(input.shape)})")
    return input.diagonal().sum()
