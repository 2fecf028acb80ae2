"""Sparse COO arrays and their kernels, written once over a backend namespace ``xp``.

A :class:`CooArray` is what a sparse tensor holds in place of a dense array (its
``_array``): ``indices`` (sparse_dim, nnz) int64 and ``values`` (nnz,) arrays of one
backend, the dense ``shape``, and whether the entries are known to be sorted and unique
(``coalesced``, as PyTorch's flag: set by ``coalesce`` and ``to_sparse``). A CooArray is
never written in place: every kernel makes a new one (the indices may be shared).

Duplicate entries of an uncoalesced array add up, as in PyTorch. The product with a dense
matrix is a scatter-add of ``values[k] * dense[col[k]]`` into row ``row[k]``.
"""

from ..errors import UnsupportedError, public_caller


class NoDenseArray(UnsupportedError, AttributeError):
    """A dense array's attribute asked of a sparse COO array: the op has no sparse version
    (an AttributeError too, so ``getattr(array, name, default)`` still answers)."""


class CooArray:
    """``indices`` (sparse_dim, nnz), ``values`` (nnz,), ``shape``, ``coalesced``, ``backend``."""

    __slots__ = ("indices", "values", "shape", "coalesced", "backend")
    __array_ufunc__ = None       # NumPy defers to the operators below instead of converting

    def __init__(self, indices, values, shape, coalesced, backend):
        self.indices, self.values, self.shape = indices, values, tuple(shape)
        self.coalesced, self.backend = coalesced, backend

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    def __array__(self, *args, **kwargs):
        name = public_caller(None)
        raise NoDenseArray(f"{name + ': not' if name else 'Not'} implemented for sparse COO tensors "
                           "(layout=vizgrad.sparse_coo); call .to_dense() first")

    def __setitem__(self, key, value):   # an in-place write
        self.__array__()

    def __getattr__(self, name):   # only for names a CooArray lacks: what dense code reads (flags, strides...)
        if name.startswith("__"):
            raise AttributeError(name)
        self.__array__()

    # The engine sums the gradients an input receives with + (sparse or dense); two sparse ones
    # sum to a coalesced one (PyTorch's accumulation mostly does; see tests/test_sparse.py).
    def __add__(self, other):
        xp = self.backend.xp
        if isinstance(other, CooArray):
            return coalesce(xp, add(xp, self, other))
        return to_dense(xp, self) + other

    __radd__ = __add__

    def __mul__(self, number):
        return CooArray(self.indices, self.values * number, self.shape, self.coalesced, self.backend)

    __rmul__ = __mul__


def linear_index(xp, indices, shape):
    """Each entry's position in the flattened dense array (row-major)."""
    key = xp.zeros(indices.shape[1:], dtype=indices.dtype)
    for dim, n in enumerate(shape):
        key = key * n + indices[dim, :]
    return key


def coalesce(xp, coo):
    """Sorted, unique entries: duplicates summed."""
    if coo.coalesced:
        return coo
    key = linear_index(xp, coo.indices, coo.shape)
    order = xp.argsort(key, stable=True)
    key = xp.take(key, order)
    first = xp.concat([xp.ones((min(key.shape[0], 1),), dtype=xp.bool), key[1:] != key[:-1]])
    group = xp.cumulative_sum(xp.astype(first, coo.indices.dtype)) - 1
    count = int(group[-1]) + 1 if key.shape[0] else 0
    values = xp.index_add(xp.zeros((count,), dtype=coo.values.dtype), 0, group, xp.take(coo.values, order))
    indices = xp.take(xp.take(coo.indices, order, axis=1), xp.nonzero(first)[0], axis=1)
    return CooArray(indices, values, coo.shape, True, coo.backend)


def to_dense(xp, coo):
    dense = xp.zeros(coo.shape, dtype=coo.values.dtype)
    if not coo.shape:
        return dense + xp.sum(coo.values)
    return xp.put_add(dense, tuple(coo.indices[dim, :] for dim in range(coo.ndim)), coo.values)


def from_dense(xp, dense, backend):
    """The non-zero elements of ``dense``, in row-major order (coalesced)."""
    if dense.ndim == 0:
        indices = xp.zeros((0, int(bool(dense != 0))), dtype=xp.int64)
        return CooArray(indices, xp.reshape(dense, (-1,))[:indices.shape[1]], (), True, backend)
    where = xp.nonzero(dense)
    indices = xp.stack([xp.astype(axis, xp.int64) for axis in where])
    values = xp.take(xp.reshape(dense, (-1,)), linear_index(xp, indices, dense.shape))
    return CooArray(indices, values, dense.shape, True, backend)


def gather(xp, dense, indices):
    """The elements of ``dense`` at ``indices``, one per entry."""
    return xp.take(xp.reshape(dense, (-1,)), linear_index(xp, indices, dense.shape))


def values_at(xp, grad, indices):
    """The values of ``grad`` (sparse or dense) at ``indices``: a gradient masked to a pattern."""
    if not isinstance(grad, CooArray):
        return gather(xp, grad, indices)
    grad = coalesce(xp, grad)
    if grad.values.shape[0] == 0:
        return xp.zeros((indices.shape[1],), dtype=grad.values.dtype)
    keys = linear_index(xp, grad.indices, grad.shape)
    wanted = linear_index(xp, indices, grad.shape)
    position = xp.clip(xp.searchsorted(keys, wanted), 0, keys.shape[0] - 1)
    found = xp.take(keys, position) == wanted
    return xp.where(found, xp.take(grad.values, position), xp.zeros((), dtype=grad.values.dtype))


def unique_positions(xp, pattern):
    """``pattern``'s positions, sorted and each once (its flag kept, as PyTorch's ``sparse_mask``)."""
    if pattern.coalesced:
        return pattern
    unique = coalesce(xp, with_values(pattern, xp.zeros(pattern.values.shape, dtype=pattern.values.dtype)))
    return CooArray(unique.indices, unique.values, pattern.shape, False, pattern.backend)


def masked(xp, grad, pattern):
    """``grad`` (sparse or dense) at the positions of ``pattern``: a gradient of a sparse tensor
    is the dense one masked to its pattern, each position once."""
    pattern = unique_positions(xp, pattern)
    return with_values(pattern, values_at(xp, grad, pattern.indices))


def with_values(coo, values, shape=None):
    """The same pattern holding ``values``."""
    return CooArray(coo.indices, values, coo.shape if shape is None else shape, coo.coalesced, coo.backend)


def add(xp, a, b):
    """``a + b``: the entries of both, duplicates summed (coalesced when both were)."""
    both = CooArray(xp.concat([a.indices, b.indices], axis=1), xp.concat([a.values, b.values]), a.shape,
                    False, a.backend)
    total = coalesce(xp, both)
    return CooArray(total.indices, total.values, a.shape, a.coalesced and b.coalesced, a.backend)


def transpose(xp, coo):
    """The transpose of a sparse matrix (PyTorch marks it uncoalesced)."""
    return CooArray(xp.flip(coo.indices, axis=0), coo.values, coo.shape[::-1], False, coo.backend)


def matmul(xp, coo, dense):
    """``coo @ dense`` for a sparse (n, m) matrix and a dense (m, p) one: scatter-add of rows."""
    rows, cols = coo.indices[0, :], coo.indices[1, :]
    products = xp.take(dense, cols, axis=0) * xp.expand_dims(coo.values, axis=1)
    return xp.index_add(xp.zeros((coo.shape[0], dense.shape[1]), dtype=dense.dtype), 0, rows, products)


def sum_dims(xp, coo, dims):
    """The sum over the sparse dims ``dims``: a sparse array of the others (coalesced)."""
    kept = [dim for dim in range(coo.ndim) if dim not in dims]
    indices = xp.take(coo.indices, xp.asarray(kept, dtype=xp.int64), axis=0)
    shape = tuple(coo.shape[dim] for dim in kept)
    return coalesce(xp, CooArray(indices, coo.values, shape, False, coo.backend))
