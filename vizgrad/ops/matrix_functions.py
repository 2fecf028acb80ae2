"""``torch.linalg``'s functions of one matrix and products: the condition number
(``cond``), the matrix exponential (``linalg.matrix_exp``, ``matrix_exp``) and powers
(``matrix_power``), ``multi_dot`` (in the cheapest order) and ``chain_matmul`` (PyTorch's
deprecated spelling of it), ``vecdot``, ``diagonal``, ``linalg.matmul`` and ``vander``.

Every op is registered under its dotted name (``linalg.multi_dot``) and reached as
``vizgrad.linalg.multi_dot``. The exponential's kernel is the backends' EXTRAS
``matrix_exp``. The argument checks are :mod:`vizgrad.ops.decompositions`'.
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (ArgumentError, ArgumentTypeError, DTypeError, DTypeNotImplementedError, ShapeError, check_dim,
                      format_shape, not_a_tensor)
from ..tensor import Tensor
from .decompositions import _int, _matrix, _same_dtype, svdvals
from .linalg import MatMul, _matmul_shape, _matrices, _matrix_name, _tensors
from .registry import Sample, register
from .samples import values
from .solvers import inv_ex


# --- the condition number ------------------------------------------------------------------

_COND_NORMS = (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1)


def _cond_samples(rng):
    for p in _COND_NORMS:
        yield Sample((_matrices(rng, (3, 3)),), {} if p is None else {"p": p}, name=f"p={p}")
    yield Sample((values(rng, (2, 4, 3)),), {"p": 2}, name="p=2, tall batch")
    yield Sample((_matrices(rng, (2, 3, 3)),), {"p": 1}, name="p=1, batch")


def _cond_reference(A, p=None):
    return np.linalg.cond(A, p)


@register(_cond_reference, _cond_samples, name="linalg.cond", method=False, atol=1e-9, rtol=1e-9)
def cond(A, p=None):
    """The condition number of a matrix (or of each in a batch) in the norm ``p``: for None,
    2 and -2 the ratio of the largest to the smallest singular value (its inverse for -2),
    any m×n; for 'fro', 'nuc', inf, -inf, 1 and -1, ‖A‖ ‖A⁻¹‖ of a square A (inf where A is
    singular).

    Example::

        vizgrad.linalg.cond(vizgrad.tensor([[2.0, 0.0], [0.0, 0.5]]))   # tensor(4.)
    """
    from ..linalg import matrix_norm  # lazy: vizgrad.linalg, the public namespace, is built on the ops
    op = "linalg.cond"
    _matrix(op, A)
    if p is not None and (isinstance(p, bool) or p not in _COND_NORMS):
        raise ArgumentError(f"{op}: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got {p!r}")
    if p in (None, 2, -2):
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return 1 / ratio if p == -2 else ratio
    _matrix(op, A, square=True)
    inverse, info = inv_ex(A)
    product = matrix_norm(A, p) * matrix_norm(inverse, p)
    from .binary import where
    return where(info > 0, math.inf, product)


# --- functions of one matrix -----------------------------------------------------------------

class MatrixExp(Op):
    """e^A. Its derivative in direction E is the upper right block of exp([[A, E], [0, A]]),
    and the adjoint of that map is the same map at Aᵀ: Ā = that block of exp([[Aᵀ, Ḡ], [0, Aᵀ]])."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.matrix_exp(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        n = a.shape[-1]
        transposed = xp.matrix_transpose(a)
        block = xp.concat([xp.concat([transposed, grad], axis=-1),
                           xp.concat([xp.zeros_like(a), transposed], axis=-1)], axis=-2)
        return xp.matrix_exp(block)[..., :n, n:]


def exponential(op, A):
    """:func:`matrix_exp` for ``op`` (``matrix_exp`` or ``linalg.matrix_exp``), named in errors."""
    name = _matrix_name(op)
    _matrix(op, A, name, square=True, floating=False)
    if not A.is_floating_point():
        raise DTypeError(f"{op}: {name} must be a floating point tensor, got {A.dtype.name}")
    return MatrixExp.apply(A)


def _exp_samples(rng):
    yield Sample((values(rng, (3, 3)),), name="matrix")
    yield Sample((values(rng, (2, 4, 4)) * 2,), name="batch, scaled and squared")
    yield Sample((values(rng, (1, 1)),), name="1x1")


def _exp_reference(A):
    """e^A by its Taylor series (30 terms) after halving A below norm 1/2, then squaring."""
    norm = np.max(np.sum(np.abs(A), axis=-2), axis=-1).max()
    steps = max(0, int(np.ceil(np.log2(max(norm, 1e-300) / 0.5))))
    x = A / 2.0 ** steps
    term = np.broadcast_to(np.eye(A.shape[-1]), A.shape).copy()
    total = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        total = total + term
    for _ in range(steps):
        total = total @ total
    return total


@register(_exp_reference, _exp_samples, name="linalg.matrix_exp", method=False, atol=1e-10, rtol=1e-10)
def linalg_matrix_exp(A):
    """The matrix exponential e^A = Σ Aᵏ/k! of a square matrix (or of each in a batch), by
    scaling and squaring with a [13/13] Padé approximant. Gradient: the upper right block of
    exp([[Aᵀ, Ḡ], [0, Aᵀ]]).

    Example::

        vizgrad.linalg.matrix_exp(vizgrad.zeros(2, 2))   # the identity
    """
    return exponential("linalg.matrix_exp", A)


@register(_exp_reference, _exp_samples, atol=1e-10, rtol=1e-10)
def matrix_exp(input):
    """The matrix exponential of a square matrix (or of each in a batch):
    :func:`vizgrad.linalg.matrix_exp`.

    Example::

        vizgrad.zeros(2, 2).matrix_exp()   # the identity
    """
    return exponential("matrix_exp", input)


def power(op, A, n):
    """A raised to the integer ``n`` (A⁻¹ to -n for n < 0), by repeated squaring."""
    name = _matrix_name(op)
    _matrix(op, A, name, square=True, floating=False)
    n = _int(op, "n", n)
    if A.dtype is dtypes.bool_ and n not in (0, 1):       # (PyTorch multiplies no bool matrices)
        raise DTypeError(f"{op}: {name} must be a number tensor for n = {n}, not bool (only n = 0 and 1 "
                         "take bool)")
    if n == 0:
        from ..creation import eye
        return A.clone().copy_(eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)))
    if n < 0:
        if not A.is_floating_point():
            raise DTypeError(f"{op}: {name} must be a floating point tensor for a negative n ({n}), got "
                             f"{A.dtype.name}")
        from .linalg import _inverse
        A, n = _inverse(op, A), -n
    if n == 1:
        return A.clone()
    if n == 3:                 # (A A) A, as PyTorch groups it (inf/NaN entries depend on the grouping)
        return MatMul.apply(MatMul.apply(A, A), A)
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else MatMul.apply(result, base)
        n >>= 1
        if n:
            base = MatMul.apply(base, base)
    return result


def _power_samples(rng):
    yield Sample((_matrices(rng, (3, 3)) / 3, 3), name="cube")
    yield Sample((_matrices(rng, (2, 3, 3)) / 3, 6), name="batch, n=6")
    yield Sample((_matrices(rng, (3, 3)), -2), name="inverse squared")
    yield Sample((_matrices(rng, (3, 3)), 1), name="n=1")
    yield Sample((_matrices(rng, (3, 3)), 0), name="n=0")
    yield Sample((np.arange(4, dtype=np.int64).reshape(2, 2), 3), name="int64")


@register(np.linalg.matrix_power, _power_samples, name="linalg.matrix_power", method=False, atol=1e-10, rtol=1e-10)
def matrix_power(A, n):
    """A square matrix (or each in a batch) to the integer power ``n``: repeated products for
    n > 0, the identity for 0, the inverse's power for n < 0 (floating A). Integer A works for
    n ≥ 0, bool A for n = 0 and 1, as in PyTorch.

    Example::

        vizgrad.linalg.matrix_power(vizgrad.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)   # tensor([[1., 3.], [0., 1.]])
    """
    return power("linalg.matrix_power", A, n)


@register(np.linalg.matrix_power, _power_samples, name="matrix_power")
def tensor_matrix_power(input, n):
    """:func:`vizgrad.linalg.matrix_power`, as ``torch.matrix_power`` and ``Tensor.matrix_power``.

    Example::

        vizgrad.eye(2).matrix_power(5)   # the identity
    """
    return power("matrix_power", input, n)


# --- products --------------------------------------------------------------------------------

def _chain_order(dims):
    """The cheapest parenthesization of a chain of matrices with shapes (dims[i], dims[i+1]):
    ``split[i][j]``, where the product of matrices i..j splits (dynamic programming over
    the number of scalar multiplications). Ties go as in PyTorch, whose order decides where an
    inf or NaN spreads: three matrices are (AB)C unless A(BC) is strictly cheaper, longer
    chains take the first cheapest split."""
    count = len(dims) - 1
    if count == 3:
        a, b, c, d = dims
        return [[0, 0, 1 if a * c * (b + d) <= b * d * (a + c) else 0], [0, 0, 1], [0, 0, 0]]
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multi_dot_samples(rng):
    yield Sample(([values(rng, (2, 3)), values(rng, (3, 4)), values(rng, (4, 2))],), name="three matrices")
    yield Sample(([values(rng, (3,)), values(rng, (3, 4)), values(rng, (4, 5)), values(rng, (5,))],),
                 name="vectors at the ends")
    yield Sample(([values(rng, (5, 1)), values(rng, (1, 5)), values(rng, (5, 2))],), name="reordered")
    yield Sample(([values(rng, (3,)), values(rng, (3, 2))],), name="two")


@register(np.linalg.multi_dot, _multi_dot_samples, name="linalg.multi_dot", method=False, atol=1e-10, rtol=1e-10)
def multi_dot(tensors):
    """The product of two or more matrices, multiplied in the order that costs the fewest
    scalar products; the first may be a 1-D row vector and the last a 1-D column vector (their
    dims are dropped from the result).

    Example::

        vizgrad.linalg.multi_dot([vizgrad.ones(3), vizgrad.ones(3, 2), vizgrad.ones(2)])   # tensor(6.)
    """
    op = "linalg.multi_dot"
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise ArgumentTypeError(f"{op}: tensors must be a list or tuple of Tensors, got {type(tensors).__name__}")
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ArgumentError(f"{op}: expected at least 2 tensors, got {len(tensors)}")
    _tensors(op, tuple(f"tensors[{i}]" for i in range(len(tensors))), *tensors)
    last = len(tensors) - 1
    matrices = []
    for i, tensor in enumerate(tensors):
        allowed = (1, 2) if i in (0, last) else (2,)
        if tensor.ndim not in allowed:
            where = "the first tensor" if i == 0 else "the last tensor" if i == last else f"tensors[{i}] (in the middle)"
            raise ShapeError(f"{op}: {where} must be {' or '.join(f'{d}-D' for d in allowed)}, got shape "
                             f"{format_shape(tensor.shape)}")
        if tensor.ndim == 1:
            tensor = tensor.unsqueeze(0) if i == 0 else tensor.unsqueeze(-1)
        matrices.append(tensor)
    for i in range(last):
        if matrices[i].shape[1] != matrices[i + 1].shape[0]:
            raise ShapeError(f"{op}: tensors[{i}] of shape {format_shape(tensors[i].shape)} and tensors[{i + 1}] of "
                             f"shape {format_shape(tensors[i + 1].shape)} cannot be multiplied")
    split = _chain_order([matrices[0].shape[0]] + [m.shape[1] for m in matrices])

    def product(i, j):
        if i == j:
            return matrices[i]
        k = split[i][j]
        return MatMul.apply(product(i, k), product(k + 1, j))

    out = product(0, last)
    if tensors[last].ndim == 1:
        out = out.squeeze(-1)
    if tensors[0].ndim == 1:
        out = out.squeeze(0)
    return out


def _chain_matmul_samples(rng):
    yield Sample((values(rng, (2, 3)), values(rng, (3, 4)), values(rng, (4, 2))), name="three")
    yield Sample((values(rng, (2, 3)),), name="one")


@register(lambda *matrices: np.linalg.multi_dot(matrices) if len(matrices) > 1 else matrices[0].copy(),
          _chain_matmul_samples, method=False)
def chain_matmul(*matrices):
    """The product of the 2-D ``matrices``: :func:`vizgrad.linalg.multi_dot` of them (in
    the cheapest order, as PyTorch computes it; PyTorch deprecates chain_matmul for it); one
    matrix is returned as a copy.

    Example::

        vizgrad.chain_matmul(vizgrad.eye(2), vizgrad.ones(2, 3))   # (2, 3) of ones
    """
    warnings.warn("chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "vizgrad.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise ArgumentError("chain_matmul: chain_matmul(): Expected one or more matrices")
    for position, matrix in enumerate(matrices):
        if not isinstance(matrix, Tensor):
            raise not_a_tensor("chain_matmul", f"matrices[{position}]", matrix)
        if matrix.ndim != 2:
            raise ShapeError(f"chain_matmul: Tensor dimension is {matrix.ndim}, expected 2 instead "
                             f"(matrices[{position}] has shape {format_shape(matrix.shape)})")
    for position, (left, right) in enumerate(zip(matrices, matrices[1:])):
        if left.shape[1] != right.shape[0]:
            raise ShapeError(f"chain_matmul: matrices[{position}] of shape {format_shape(left.shape)} and "
                             f"matrices[{position + 1}] of shape {format_shape(right.shape)} cannot be multiplied")
    return matrices[0].clone() if len(matrices) == 1 else multi_dot(matrices)


def _vecdot_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4))), name="rows")
    yield Sample((values(rng, (2, 1, 4)), values(rng, (3, 4))), name="broadcast")
    yield Sample((values(rng, (3, 4)), values(rng, (3, 1))), {"dim": 0}, name="dim=0")


def _vecdot_reference(x, y, *, dim=-1):
    return np.sum(x * y, axis=dim)


@register(_vecdot_reference, _vecdot_samples, name="linalg.vecdot", method=False, atol=1e-10, rtol=1e-10)
def vecdot(x, y, *, dim=-1):
    """The dot products of the vectors along ``dim`` (the last by default), the other dims
    broadcast: Σᵢ xᵢ yᵢ.

    Example::

        vizgrad.linalg.vecdot(vizgrad.ones(2, 3), vizgrad.tensor([1.0, 2.0, 3.0]))   # tensor([6., 6.])
    """
    op = "linalg.vecdot"
    for name, operand in (("x", x), ("y", y)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor(op, name, operand)
        if not operand.is_floating_point():
            raise DTypeNotImplementedError(f"{op}: {name} must be a floating point tensor, got {operand.dtype.name}")
    _same_dtype(op, ("x", "y"), x, y)
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ShapeError(f"{op}: x of shape {format_shape(x.shape)} and y of shape {format_shape(y.shape)} do not "
                         "broadcast") from None
    axis = check_dim(op, dim, len(shape))
    return (x * y).sum(axis - len(shape))


def _diagonal_samples(rng):
    yield Sample((values(rng, (3, 4)),), name="matrix")
    yield Sample((values(rng, (2, 3, 3)),), {"offset": 1}, name="batch, offset 1")
    yield Sample((values(rng, (3, 2, 4)),), {"offset": -1, "dim1": 0, "dim2": 2}, name="dims 0 and 2")


def _diagonal_reference(A, *, offset=0, dim1=-2, dim2=-1):
    return np.diagonal(A, offset, dim1, dim2)


@register(_diagonal_reference, _diagonal_samples, name="linalg.diagonal", method=False)
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices over ``dim1`` and ``dim2`` (the last two by default), as
    the last dim: :func:`vizgrad.diagonal` with PyTorch's ``linalg`` defaults.

    Example::

        vizgrad.linalg.diagonal(vizgrad.eye(3).expand(2, 3, 3))   # tensor([[1., 1., 1.], [1., 1., 1.]])
    """
    from .index import diagonal as take_diagonal
    if not isinstance(A, Tensor):
        raise not_a_tensor("linalg.diagonal", "A", A)
    if A.ndim < 2:
        raise ShapeError(f"linalg.diagonal: A must have at least 2 dimensions, got shape {format_shape(A.shape)}")
    return take_diagonal(A, offset, dim1, dim2)


@register(np.matmul, lambda rng: iter([Sample((values(rng, (2, 3, 4)), values(rng, (4, 2))), name="batch"),
                                       Sample((values(rng, (4,)), values(rng, (4, 3))), name="vector")]),
          name="linalg.matmul", method=False)
def matmul(input, other):
    """The matrix product: :func:`vizgrad.matmul`, as ``torch.linalg.matmul``.

    Example::

        vizgrad.linalg.matmul(vizgrad.ones(2, 3), vizgrad.ones(3))   # tensor([3., 3.])
    """
    _tensors("linalg.matmul", ("input", "other"), input, other)
    _matmul_shape("linalg.matmul", input.shape, other.shape)
    return MatMul.apply(input, other)


def _vander_samples(rng):
    yield Sample((values(rng, (4,)),), name="vector")
    yield Sample((values(rng, (2, 3)),), {"N": 5}, name="batch, N=5")
    yield Sample((np.array([0.0, 1.5, -2.0]),), {"N": 3}, name="with zero")
    yield Sample((np.array([2, -1, 3], dtype=np.int64),), name="int64")


def _vander_reference(x, N=None):
    N = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(N, dtype=np.int64)


@register(_vander_reference, _vander_samples, name="linalg.vander", method=False, atol=1e-10, rtol=1e-10)
def vander(x, *, N=None):
    """The Vandermonde matrix of the vectors along x's last dim: out[..., i, j] = x[..., i]ʲ for
    j < N (N, at least 2, defaults to x's last size), each power the previous one times x (so
    the gradients, of every order, are exact at 0); integer x gives integers.

    Example::

        vizgrad.linalg.vander(vizgrad.tensor([1.0, 2.0, 3.0]))   # rows (1, x, x²)
    """
    from ..creation import ones_like
    from .joins import stack
    op = "linalg.vander"
    if not isinstance(x, Tensor):
        raise not_a_tensor(op, "x", x)
    if x.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: x must be a floating point or integer tensor, got bool")
    if x.ndim == 0:
        raise ShapeError(f"{op}: x must have at least 1 dimension, got a 0-d tensor")
    N = x.shape[-1] if N is None else _int(op, "N", N)
    if N <= 1:
        raise ArgumentError(f"{op}: N must be greater than 1, got {N}")
    powers = [ones_like(x), x]
    while len(powers) < N:
        powers.append(powers[-1] * x)
    return stack(powers, -1)
