"""Shape and indexing functions and Tensor methods (tile, take, put_, the *_scatter family,
scatter_reduce, index_reduce, repeat_interleave, unfold, in-place shape changes, strides, trace,
...): values and gradients against PyTorch, in-place semantics, errors in the function's words."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import (ArgumentError, BackwardError, DeviceError, DTypeError, IndexingError, ShapeError,
                            VizgradError)

torch = pytest.importorskip("torch")


def _both(array, requires_grad=False):
    """The same values as a vizgrad and a torch tensor."""
    array = np.asarray(array)
    return (vg.tensor(array, requires_grad=requires_grad and array.dtype.kind == "f"),
            torch.tensor(array, requires_grad=requires_grad and array.dtype.kind == "f"))


def _numpy(value):
    return value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)


def _same(ours, theirs, atol=1e-10):
    if isinstance(ours, (tuple, list)):
        assert isinstance(theirs, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), atol=atol, rtol=1e-10)


def compare(function, *arrays, grad=True, seed=0):
    """Run ``function(lib, *tensors)`` with vizgrad and with torch: same values and, for the
    floating inputs, the same gradients of a weighted sum of the outputs."""
    pairs = [_both(a, requires_grad=grad) for a in arrays]
    ours = function(vg, *[p[0] for p in pairs])
    theirs = function(torch, *[p[1] for p in pairs])
    _same(ours, theirs)
    if not grad:
        return ours
    outputs = list(zip(ours, theirs) if isinstance(ours, (tuple, list)) else [(ours, theirs)])
    assert [o.requires_grad for o, _ in outputs] == [t.requires_grad for _, t in outputs]
    outputs = [(o, t) for o, t in outputs if o.requires_grad]
    if not outputs:
        return ours
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=tuple(o.shape)) for o, _ in outputs]
    sum(((o * vg.tensor(w)).sum() for (o, _), w in zip(outputs, weights)), vg.tensor(0.0)).backward()
    sum(((t * torch.tensor(w)).sum() for (_, t), w in zip(outputs, weights)), torch.tensor(0.0)).backward()
    for ours_input, theirs_input in pairs:
        if theirs_input.requires_grad:
            assert theirs_input.grad is not None and ours_input.grad is not None
            np.testing.assert_allclose(_numpy(ours_input.grad), _numpy(theirs_input.grad), atol=1e-10)
    return ours


RNG = np.random.default_rng(1)


def floats(*shape):
    return RNG.normal(size=shape)


# --- tile, ravel, take, put, select ------------------------------------------------------------

@pytest.mark.parametrize("shape, dims", [((2, 3), (2,)), ((3,), (2, 2)), ((), (3,)), ((2, 3), ()), ((0, 2), (2, 1)),
                                         ((2, 1, 3), (1, 2, 1))])
def test_tile(shape, dims):
    compare(lambda lib, x: x.tile(dims), floats(*shape))
    compare(lambda lib, x: lib.tile(x, dims), floats(*shape))


@pytest.mark.parametrize("shape", [(2, 3), (), (0, 3), (2, 3, 4)])
def test_ravel_and_transposed(shape):
    compare(lambda lib, x: x.ravel(), floats(*shape))
    if len(shape) >= 2:
        compare(lambda lib, x: lib.ravel(x.transpose(0, 1)), floats(*shape))


def test_take_values_and_gradient():
    compare(lambda lib, x, i: lib.take(x, i), floats(3, 4), np.array([[0, 11], [-1, 5], [5, 5]]))
    compare(lambda lib, x, i: x.take(i), floats(), np.array(0))
    compare(lambda lib, x, i: x.take(i), floats(2, 3), np.zeros((0,), dtype=np.int64))
    assert vg.take(vg.tensor([[1, 2], [3, 4]]), vg.tensor([3, 0])).tolist() == [4, 1]


def test_take_errors():
    with pytest.raises(IndexingError, match="take: index 12 is out of bounds"):
        vg.take(vg.zeros(3, 4), vg.tensor([12]))
    with pytest.raises(DTypeError, match="take: index must be an int64"):
        vg.take(vg.zeros(3), vg.tensor([0.0]))
    with pytest.raises(TypeError, match="take"):
        vg.take([1, 2], vg.tensor([0]))


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    index = np.array([[0, 10], [-1, 5]]) if not accumulate else np.array([1, 1, 4, -12])
    source_shape = (2, 2) if not accumulate else (4,)
    compare(lambda lib, x, i, s: lib.put(x, i, s, accumulate), floats(3, 4), index, floats(*source_shape))
    compare(lambda lib, x, i, s: x.clone().put_(i, s, accumulate=accumulate), floats(3, 4), index,
            floats(*source_shape))


def test_put_in_place_semantics_and_errors():
    x = vg.zeros(2, 2)
    version = x._version
    assert x.put_(vg.tensor([3]), vg.tensor([5.0])) is x
    assert x.tolist() == [[0.0, 0.0], [0.0, 5.0]] and x._version == version + 1
    leaf = vg.zeros(3, requires_grad=True)
    with pytest.raises(BackwardError, match="put_: a leaf tensor that requires grad"):
        leaf.put_(vg.tensor([0]), vg.tensor([1.0]))
    with pytest.raises(ShapeError, match="put: index .* and source .* must have the same number of elements"):
        vg.zeros(3).put(vg.tensor([0, 1]), vg.tensor([1.0]))
    with pytest.raises(IndexingError, match="put: index 3 is out of bounds"):
        vg.zeros(3).put(vg.tensor([3]), vg.tensor([1.0]))
    with pytest.raises(DTypeError, match="put: source has dtype float64 but input has float32"):
        vg.zeros(3).put(vg.tensor([0]), vg.tensor([1.0], dtype=vg.float64))


@pytest.mark.parametrize("shape, dim, index", [((3, 4), 0, 1), ((2, 3, 4), -1, -2), ((3,), 0, 2), ((2, 0), 0, 1)])
def test_select_is_a_view_with_torch_values(shape, dim, index):
    compare(lambda lib, x: x.select(dim, index) * 1, floats(*shape))
    compare(lambda lib, x: lib.select(x, dim, index) * 1, floats(*shape))
    x = vg.zeros(*shape)
    assert x.select(dim, index)._base is x


def test_select_errors():
    with pytest.raises(IndexingError, match="select: index 3 out of range"):
        vg.zeros(2, 3).select(1, 3)
    with pytest.raises(IndexingError, match="select"):
        vg.tensor(1.0).select(0, 0)
    with pytest.raises(IndexError, match="select"):
        vg.zeros(2, 3).select(2, 0)


# --- the *_scatter family, index_copy, index_fill, masked_scatter --------------------------------

@pytest.mark.parametrize("shape, dim, index", [((3, 4), 0, 1), ((2, 3, 4), -1, -2), ((3,), 0, 2)])
def test_select_scatter(shape, dim, index):
    src_shape = tuple(n for d, n in enumerate(shape) if d != dim % len(shape))
    compare(lambda lib, x, s: lib.select_scatter(x, s, dim, index), floats(*shape), floats(*src_shape))


@pytest.mark.parametrize("kwargs, src_shape", [({"start": 1, "end": 3}, (2, 3)), ({"dim": -1, "step": 2}, (5, 2)),
                                                ({}, (5, 3)), ({"start": -2}, (2, 3)),
                                                ({"start": 4, "end": 2}, (0, 3))])
def test_slice_scatter(kwargs, src_shape):
    compare(lambda lib, x, s: lib.slice_scatter(x, s, **kwargs), floats(5, 3), floats(*src_shape))


@pytest.mark.parametrize("shape, offset, dim1, dim2", [((3, 4), 0, 0, 1), ((3, 4), -1, 0, 1), ((3, 4), 2, 0, 1),
                                                       ((2, 3, 4), 0, 0, 1), ((2, 3, 4), 1, -1, 0),
                                                       ((2, 3, 4), 0, 2, 1), ((3, 3), 5, 0, 1)])
def test_diagonal_scatter(shape, offset, dim1, dim2):
    src_shape = tuple(torch.zeros(shape).diagonal(offset, dim1, dim2).shape)
    compare(lambda lib, x, s: lib.diagonal_scatter(x, s, offset, dim1, dim2), floats(*shape), floats(*src_shape))


def test_scatter_family_errors():
    with pytest.raises(ShapeError, match="select_scatter: expected src to have a size equal to the slice"):
        vg.select_scatter(vg.zeros(3, 4), vg.zeros(3), 0, 0)
    with pytest.raises(IndexingError, match="select_scatter: index 3 is out of range"):
        vg.select_scatter(vg.zeros(3, 4), vg.zeros(4), 0, 3)
    with pytest.raises(ShapeError, match="slice_scatter"):
        vg.slice_scatter(vg.zeros(3, 4), vg.zeros(2, 4), 0, 0, 1)
    with pytest.raises(ShapeError, match="diagonal_scatter: dim1 and dim2"):
        vg.diagonal_scatter(vg.zeros(3, 3), vg.zeros(3), 0, 1, 1)
    with pytest.raises(DTypeError, match="diagonal_scatter: src has dtype float64"):
        vg.diagonal_scatter(vg.zeros(3, 3), vg.zeros(3, dtype=vg.float64))
    with pytest.raises(DeviceError, match="slice_scatter"):
        vg.slice_scatter(vg.zeros(3), vg.zeros(3, device="strict"))


@pytest.mark.parametrize("shape, dim, index", [((4, 3), 0, [3, 0]), ((2, 3, 4), -1, [1, 2, 0]), ((3,), 0, [2]),
                                               ((2, 3), 1, [])])
def test_index_copy(shape, dim, index):
    index = np.array(index, dtype=np.int64)
    source_shape = list(shape)
    source_shape[dim] = len(index)
    compare(lambda lib, x, i, s: lib.index_copy(x, dim, i, s), floats(*shape), index, floats(*source_shape))
    compare(lambda lib, x, i, s: (x * 1).index_copy_(dim, i, s), floats(*shape), index, floats(*source_shape))


def test_index_copy_errors():
    with pytest.raises(ShapeError, match="index_copy: source of shape \\(2, 2\\) must have the shape of self"):
        vg.zeros(4, 3).index_copy(0, vg.tensor([0, 1]), vg.zeros(2, 2))
    with pytest.raises(IndexingError, match="index_copy: index 4 is out of bounds for dim 0 with size 4"):
        vg.zeros(4, 3).index_copy(0, vg.tensor([4]), vg.zeros(1, 3))
    with pytest.raises(DTypeError, match="index_copy: index must be an int64"):
        vg.zeros(4, 3).index_copy(0, vg.tensor([0], dtype=vg.int32), vg.zeros(1, 3))


def test_index_fill_in_place():
    compare(lambda lib, x, i: (x * 1).index_fill_(1, i, -2.5), floats(3, 4), np.array([0, 2]))
    x = vg.zeros(2, 3)
    assert x.index_fill_(1, vg.tensor([2]), 1.0) is x and x.tolist() == [[0, 0, 1], [0, 0, 1]]


@pytest.mark.parametrize("shape, mask_shape, source_shape", [((3, 4), (3, 4), (12,)), ((3, 4), (4,), (4, 5)),
                                                             ((4,), (2, 4), (9,)), ((), (), (2,))])
def test_masked_scatter(shape, mask_shape, source_shape):
    mask = RNG.uniform(size=mask_shape) > 0.4
    compare(lambda lib, x, m, s: x.masked_scatter(m, s), floats(*shape), mask, floats(*source_shape))
    if np.broadcast_shapes(shape, mask_shape) == shape:
        compare(lambda lib, x, m, s: (x * 1).masked_scatter_(m, s), floats(*shape), mask, floats(*source_shape))


def test_masked_scatter_errors():
    with pytest.raises(ShapeError, match="masked_scatter: expected source to have at least as many elements"):
        vg.zeros(3).masked_scatter(vg.tensor([True, True, False]), vg.zeros(1))
    with pytest.raises(DTypeError, match="masked_scatter: mask must be a bool tensor"):
        vg.zeros(3).masked_scatter(vg.tensor([1, 1, 0]), vg.zeros(3))


# --- scatter_, scatter_reduce, index_reduce -----------------------------------------------------

def test_scatter_in_place_value_src_and_reduce():
    index = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    compare(lambda lib, x, i, s: (x * 1).scatter_(0, i, s), floats(3, 4), np.array([[0, 1, 2, 0]]), floats(1, 4))
    compare(lambda lib, x, i, s: (x * 1).scatter_(0, i, s), floats(3, 4), np.array([[0, 1, 2, 0]]), floats(2, 4),
            grad=False)   # a src larger than index: PyTorch has no gradient for it
    compare(lambda lib, x, i: (x * 1).scatter_(1, i, 2.5), floats(2, 4), np.array([[3], [0]]))
    compare(lambda lib, x, i: (x * 1).scatter_(1, i, value=-1.0), floats(2, 4), np.array([[3], [0]]))
    compare(lambda lib, x, i, s: (x * 1).scatter_(0, i, s, reduce="add"), floats(3, 4), index, floats(2, 4),
            grad=False)
    compare(lambda lib, x, i, s: (x * 1).scatter_(0, i, s, reduce="multiply"), floats(3, 4), index, floats(2, 4),
            grad=False)
    compare(lambda lib, x, i: (x * 1).scatter_(0, i, 2.0, reduce="multiply"), floats(3, 4), index, grad=False)
    x = vg.zeros(3)
    assert x.scatter_(0, vg.tensor([1]), 4.0) is x and x.tolist() == [0.0, 4.0, 0.0] and x._version == 1
    with pytest.raises(ArgumentError, match="scatter_: reduce argument must be one of add, multiply"):
        vg.zeros(3).scatter_(0, vg.tensor([1]), 4.0, reduce="max")


def test_scatter_add_reduce_gradient_matches_scatter_add():
    index = vg.tensor([[0, 1], [0, 0]])
    src = vg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = vg.ones(2, 2, requires_grad=True)
    out = vg.scatter(x, 0, index, src, reduce="add")
    assert out.tolist() == [[5.0, 5.0], [1.0, 3.0]]
    (out * vg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]] and src.grad.tolist() == [[1.0, 4.0], [1.0, 2.0]]


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("case", ["dim 0", "dim -1, smaller index", "3-d", "ties"])
def test_scatter_reduce_values_and_gradients(reduce, include_self, case):
    if case == "dim 0":
        args, dim = (floats(3, 4), RNG.integers(0, 3, size=(5, 4)), floats(5, 4)), 0
    elif case == "dim -1, smaller index":
        args, dim = (floats(3, 4), RNG.integers(0, 4, size=(2, 3)), floats(2, 3)), -1
    elif case == "3-d":
        args, dim = (floats(2, 3, 4), RNG.integers(0, 3, size=(2, 4, 4)), floats(2, 4, 4)), 1
    else:   # equal values meet at one place (and equal the place's own value): shared gradients
        base = np.array([[1.5, 2.0, 0.0], [1.5, 1.5, 1.5]])
        args, dim = (base, np.array([[0, 0, 1], [0, 0, 1]]), np.full((2, 3), 1.5)), 0
    compare(lambda lib, x, i, s: x.scatter_reduce(dim, i, s, reduce, include_self=include_self), *args)
    compare(lambda lib, x, i, s: lib.scatter_reduce(x, dim, i, s, reduce=reduce, include_self=include_self), *args)
    compare(lambda lib, x, i, s: (x * 1).scatter_reduce_(dim, i, s, reduce, include_self=include_self), *args)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_on_integers(reduce):
    compare(lambda lib, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=False),
            np.array([[3, 4], [5, 6], [7, 8]]), np.array([[0, 2], [0, 0]]), np.array([[2, -3], [5, 9]]), grad=False)
    compare(lambda lib, x, i, s: x.scatter_reduce(0, i, s, reduce),
            np.array([[3, 4], [5, 6], [7, 8]]), np.array([[0, 2], [0, 0]]), np.array([[2, -3], [5, 9]]), grad=False)


def test_scatter_reduce_second_derivatives():
    from vizgrad.autograd import gradcheck, gradgradcheck
    index = vg.tensor([[0, 1, 0], [0, 0, 1]])
    for reduce in REDUCTIONS:
        for include_self in (True, False):
            x = vg.tensor(floats(2, 3), requires_grad=True)
            s = vg.tensor(floats(2, 3), requires_grad=True)
            function = lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self)  # noqa: E731
            assert gradcheck(function, (x, s))
            assert gradgradcheck(function, (x, s))


def test_scatter_reduce_errors():
    with pytest.raises(ArgumentError, match="scatter_reduce: reduce argument must be one of"):
        vg.zeros(3).scatter_reduce(0, vg.tensor([0]), vg.ones(1), "max")
    with pytest.raises(ShapeError, match="scatter_reduce: index of shape"):
        vg.zeros(3).scatter_reduce(0, vg.tensor([[0]]), vg.ones(1), "sum")
    with pytest.raises(IndexingError, match="scatter_reduce"):
        vg.zeros(3).scatter_reduce(0, vg.tensor([3]), vg.ones(1), "sum")
    with pytest.raises(DTypeError, match="scatter_reduce"):
        vg.zeros(3).scatter_reduce(0, vg.tensor([0]), vg.ones(1, dtype=vg.float64), "sum")
    x = vg.zeros(3, requires_grad=True)
    with pytest.raises(BackwardError, match="scatter_reduce_: a leaf tensor that requires grad"):
        x.scatter_reduce_(0, vg.tensor([0]), vg.ones(1), "sum")


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("shape, dim, index", [((4, 3), 0, [0, 3, 0, 1, 0]), ((2, 3, 4), -1, [2, 2, 1]),
                                               ((5,), 0, [4, 4])])
def test_index_reduce(reduce, include_self, shape, dim, index):
    index = np.array(index)
    source_shape = list(shape)
    source_shape[dim] = len(index)
    args = (floats(*shape), index, floats(*source_shape))
    compare(lambda lib, x, i, s: x.index_reduce(dim, i, s, reduce, include_self=include_self), *args)
    compare(lambda lib, x, i, s: (x * 1).index_reduce_(dim, i, s, reduce, include_self=include_self), *args)


def test_index_reduce_errors():
    with pytest.raises(ArgumentError, match="index_reduce: reduce argument must be one of prod, mean, amax, amin"):
        vg.zeros(3).index_reduce(0, vg.tensor([0]), vg.ones(1), "sum")
    with pytest.raises(ShapeError, match="index_reduce: index must be 1-D"):
        vg.zeros(3).index_reduce(0, vg.tensor([[0]]), vg.ones(1), "prod")


# --- repeat_interleave, splits, unravel_index, combinations, ... -------------------------------

@pytest.mark.parametrize("shape, repeats, kwargs", [((2, 3), 2, {}), ((2, 3), [1, 0, 2], {"dim": -1}),
                                                    ((2, 3), [3], {"dim": 0}), ((), 3, {}), ((2, 3), 0, {"dim": 1}),
                                                    ((4,), [1, 2, 3, 4], {"output_size": 10}),
                                                    ((2, 2), np.array(2), {"dim": 0})])
def test_repeat_interleave(shape, repeats, kwargs):
    def call(lib, x):
        counts = lib.tensor(repeats) if isinstance(repeats, (list, np.ndarray)) else repeats
        return x.repeat_interleave(counts, **kwargs)
    compare(call, floats(*shape))
    compare(lambda lib, x: lib.repeat_interleave(x, lib.tensor(repeats) if isinstance(repeats, (list, np.ndarray))
                                                  else repeats, **kwargs), floats(*shape))


def test_repeat_interleave_counts_only_and_errors():
    assert vg.repeat_interleave(vg.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    compare(lambda lib, r: lib.repeat_interleave(r), np.array([1, 3, 0, 2]), grad=False)
    with pytest.raises(ShapeError, match="repeat_interleave: repeats must have the same size as input along dim"):
        vg.zeros(2, 3).repeat_interleave(vg.tensor([1, 2]), dim=1)
    with pytest.raises(ArgumentError, match="repeat_interleave: repeats can not be negative"):
        vg.zeros(3).repeat_interleave(-1)
    with pytest.raises(ShapeError, match="repeat_interleave: output_size 3 does not match"):
        vg.zeros(3).repeat_interleave(2, output_size=3)


@pytest.mark.parametrize("name, shape, sections", [("hsplit", (2, 4, 6), 2), ("hsplit", (6,), 3),
                                                   ("hsplit", (4, 4), [1, 3]), ("vsplit", (4, 2), 2),
                                                   ("vsplit", (4, 4), [1, -1]),
                                                   ("dsplit", (1, 2, 6), 3), ("dsplit", (2, 2, 4), [2])])
def test_directional_splits(name, shape, sections):
    compare(lambda lib, x: getattr(lib, name)(x, sections), floats(*shape))
    compare(lambda lib, x: getattr(x, name)(sections), floats(*shape))


def test_directional_split_errors():
    with pytest.raises(ShapeError, match="hsplit: hsplit attempted to split along dimension 1, but the size of the "
                                         "dimension 3 is not divisible by the split_size 2"):
        vg.zeros(2, 3).hsplit(2)
    with pytest.raises(ShapeError, match="vsplit: vsplit requires a tensor with at least 2 dimensions"):
        vg.zeros(4).vsplit(2)
    with pytest.raises(ShapeError, match="dsplit: dsplit requires a tensor with at least 3 dimensions"):
        vg.zeros(4, 4).dsplit(2)


def test_split_with_sizes():
    compare(lambda lib, x: x.split_with_sizes([2, 3]), floats(5, 3))
    compare(lambda lib, x: lib.split_with_sizes(x, (1, 0, 5), dim=-1), floats(3, 6))
    with pytest.raises(ShapeError, match="split_with_sizes: split_sizes \\[2, 2\\] must be non-negative and sum"):
        vg.zeros(5).split_with_sizes([2, 2])
    pieces = vg.zeros(4, requires_grad=True).split_with_sizes([1, 3])
    with pytest.raises(BackwardError, match="multiple views"):
        pieces[0].mul_(2)


@pytest.mark.parametrize("indices, shape", [([0, 5, 11, -1], (3, 4)), ([[1, 23]], (2, 3, 4)), (7, (4, 2)),
                                            ([], (2, 2)), ([0], ())])
def test_unravel_index(indices, shape):
    compare(lambda lib, i: lib.unravel_index(i, shape), np.array(indices, dtype=np.int64), grad=False)


def test_unravel_index_errors():
    with pytest.raises(IndexingError, match="unravel_index: index out of bounds"):
        vg.unravel_index(vg.tensor([6]), (2, 3))
    with pytest.raises(DTypeError, match="unravel_index: expected 'indices' to be integer dtype"):
        vg.unravel_index(vg.tensor([1.0]), (2, 3))


@pytest.mark.parametrize("n, r, with_replacement", [(4, 2, False), (4, 3, False), (3, 2, True), (2, 3, False),
                                                    (3, 0, False), (3, 1, True), (0, 2, False)])
def test_combinations(n, r, with_replacement):
    compare(lambda lib, x: lib.combinations(x, r, with_replacement), floats(n))
    with pytest.raises(ShapeError, match="combinations: Expect a 1D vector"):
        vg.combinations(vg.zeros(2, 2))


def test_cartesian_block_diag_kron_rot90_against_torch():
    compare(lambda lib, a, b: lib.cartesian_prod(a, b), floats(3), floats(2))
    compare(lambda lib, a, b: lib.block_diag(a, b), floats(2, 3), floats(1, 2))
    compare(lambda lib, a, b: lib.kron(a, b), floats(2, 3), floats(2, 2))
    compare(lambda lib, a: lib.rot90(a, -1, (1, 2)), floats(2, 3, 4))


@pytest.mark.parametrize("shape, size", [((2, 3, 4), (3, 1)), ((2, 3), (1, 3)), ((2, 3), ()), ((2, 3), (2, 3)),
                                         ((0, 3), (1, 3))])
def test_sum_to_size(shape, size):
    compare(lambda lib, x: x.sum_to_size(size), floats(*shape))
    if size:
        compare(lambda lib, x: x.sum_to_size(*size) * 1, floats(*shape))
    with pytest.raises(ShapeError, match="sum_to_size: size \\[4\\] is not expandable to size"):
        vg.zeros(2, 3).sum_to_size(4)


def test_narrow_copy_is_no_view():
    compare(lambda lib, x: lib.narrow_copy(x, -1, 1, 2), floats(3, 4))
    x = vg.zeros(3, 4)
    copy = x.narrow_copy(0, 0, 2)
    copy += 1
    assert x.sum().item() == 0 and copy._base is None


def test_chain_matmul():
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        compare(lambda lib, a, b, c: lib.chain_matmul(a, b, c), floats(2, 3), floats(3, 4), floats(4, 2))
        compare(lambda lib, a: lib.chain_matmul(a), floats(2, 3))
        with pytest.raises(ShapeError, match="chain_matmul: Tensor dimension is 1, expected 2"):
            vg.chain_matmul(vg.zeros(2, 3), vg.zeros(3))


# --- Tensor.unfold ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape, dimension, size, step", [((5,), 0, 2, 2), ((2, 5), 1, 2, 1), ((2, 5), -1, 3, 2),
                                                          ((4, 3), 0, 4, 1), ((4, 3), 0, 0, 1), ((), 0, 1, 1),
                                                          ((3, 4, 5), 1, 2, 3)])
def test_unfold(shape, dimension, size, step):
    compare(lambda lib, x: x.unfold(dimension, size, step), floats(*shape))


def test_unfold_errors_and_gradient_accumulates():
    x = vg.ones(4, requires_grad=True)
    x.unfold(0, 2, 1).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 2.0, 1.0]
    with pytest.raises(ShapeError, match="unfold: maximum size for tensor at dimension 0 is 4 but size is 5"):
        vg.zeros(4).unfold(0, 5, 1)
    with pytest.raises(ArgumentError, match="unfold: step is 0 but must be > 0"):
        vg.zeros(4).unfold(0, 2, 0)


# --- in-place shape changes, tril_/triu_, fill_diagonal_ -----------------------------------

@pytest.mark.parametrize("name, args, shape", [("transpose_", (0, 2), (2, 3, 4)), ("swapaxes_", (-1, 0), (2, 3)),
                                               ("swapdims_", (1, 0), (2, 3)), ("squeeze_", (), (1, 3, 1)),
                                               ("squeeze_", (0,), (1, 3)), ("unsqueeze_", (-1,), (2, 3)),
                                               ("t_", (), (2, 3))])
def test_in_place_shape_changes(name, args, shape):
    def call(lib, x):
        y = x * 1
        assert getattr(y, name)(*args) is y
        return y
    compare(call, floats(*shape))
    x = vg.zeros(*shape)
    version = x._version
    getattr(x, name)(*args)
    assert x._version == version + 1 and tuple(x.shape) == tuple(getattr(torch.zeros(shape), name)(*args).shape)
    leaf = vg.zeros(*shape, requires_grad=True)
    with pytest.raises(BackwardError, match=name):
        getattr(leaf, name)(*args)
    with vg.no_grad():
        getattr(leaf, name)(*args)
    assert leaf.shape == x.shape


@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("diagonal", [0, -1, 2])
def test_triangles_in_place(name, diagonal):
    compare(lambda lib, x: getattr(x * 1, name)(diagonal), floats(3, 4))
    x = vg.ones(3, 3)
    assert getattr(x, name)(diagonal) is x and x._version == 1
    with pytest.raises(BackwardError, match=name):
        getattr(vg.ones(3, 3, requires_grad=True), name)()


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((5, 3), False), ((5, 3), True), ((7, 2), True),
                                         ((2, 5), True), ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap):
    compare(lambda lib, x: (x * 1).fill_diagonal_(-2.0, wrap=wrap), floats(*shape))
    x = vg.zeros(*shape)
    assert x.fill_diagonal_(1, wrap) is x and x._version == 1


def test_fill_diagonal_errors():
    with pytest.raises(ShapeError, match="fill_diagonal_: all dimensions of input must be of equal length"):
        vg.zeros(2, 3, 3).fill_diagonal_(1.0)
    with pytest.raises(ShapeError, match="fill_diagonal_: dimensions must larger than 1"):
        vg.zeros(3).fill_diagonal_(1.0)
    with pytest.raises(BackwardError, match="fill_diagonal_"):
        vg.zeros(2, 2, requires_grad=True).fill_diagonal_(1.0)


def test_in_place_write_into_a_view_reaches_the_base():
    base_vg, base_torch = _both(floats(4, 3), requires_grad=True)
    for lib, base in ((vg, base_vg), (torch, base_torch)):
        y = base * 2
        y[1:].index_fill_(1, lib.tensor([0]), 0.0)
        y.sum().backward()
    np.testing.assert_allclose(base_vg.grad.numpy(), base_torch.grad.numpy())


# --- trace, conjugate transposes, where, layout -----------------------------------------------

def test_trace_of_a_matrix_and_the_recorder():
    compare(lambda lib, x: lib.trace(x), floats(3, 4))
    compare(lambda lib, x: x.trace(), floats(4, 2))
    assert vg.trace(vg.tensor([[1, 2], [3, 4]])).item() == 5
    with pytest.raises(ShapeError, match="trace: expected a matrix, but got tensor with dim 1"):
        vg.trace(vg.zeros(3))
    w = vg.ones(2, requires_grad=True)
    with vg.trace() as recording:          # the recorder is still what vizgrad.trace() opens
        (w * 3).sum().backward()
    assert isinstance(recording, vg.trace) and recording.graph.nodes


def test_conjugate_transposes_and_where():
    compare(lambda lib, x: x.H * 1, floats(2, 3))
    compare(lambda lib, x: x.mH * 1, floats(4, 2, 3))
    compare(lambda lib, x: x.adjoint() * 1, floats(4, 2, 3))
    compare(lambda lib, x, c, y: x.where(c, y), floats(2, 3), RNG.uniform(size=(3,)) > 0.5, floats(2, 1))
    with pytest.raises(ShapeError, match="H: tensor.H is only supported on matrices"):
        vg.zeros(2, 3, 4).H
    with pytest.raises(ShapeError, match="mH"):
        vg.zeros(3).mH


LAYOUTS = [lambda x: x, lambda x: x.transpose(0, 2), lambda x: x[:, 1:], lambda x: x[..., ::2],
           lambda x: x[:1].expand(3, 3, 4), lambda x: x[1, 2], lambda x: x.permute(1, 0, 2)[1:],
           lambda x: x.reshape(6, 4), lambda x: x[0].t()]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_stride_storage_offset_is_contiguous(layout):
    ours = LAYOUTS[layout](vg.arange(24.0).reshape(2, 3, 4))
    theirs = LAYOUTS[layout](torch.arange(24.0).reshape(2, 3, 4))
    assert ours.stride() == theirs.stride()
    assert ours.stride(-1) == theirs.stride(-1)
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.contiguous().is_contiguous() and ours.contiguous().stride() == theirs.contiguous().stride()


def test_new_empty_strided():
    made = vg.zeros(2, dtype=vg.float64).new_empty_strided((2, 3), (3, 1))
    assert made.shape == (2, 3) and made.dtype is vg.float64 and made.stride() == (3, 1)
    with pytest.raises(ArgumentError, match="new_empty_strided"):
        vg.zeros(2).new_empty_strided((2, 3), (1, 2))


def test_new_functions_raise_vizgrad_errors_naming_themselves():
    calls = {
        "tile": lambda: vg.tile(vg.zeros(2), (-1,)),
        "take": lambda: vg.take(vg.zeros(2), vg.tensor([5])),
        "index_copy": lambda: vg.index_copy(vg.zeros(2), 1, vg.tensor([0]), vg.zeros(1)),
        "scatter_reduce": lambda: vg.scatter_reduce(vg.zeros(2), 0, vg.tensor([0]), vg.zeros(1), "mul"),
        "combinations": lambda: vg.combinations(vg.zeros(2), -1),
        "sum_to_size": lambda: vg.zeros(2).sum_to_size(3),
    }
    for name, call in calls.items():
        with pytest.raises(VizgradError) as info:
            call()
        assert name in str(info.value)


def test_scatter_reduce_src_larger_than_index_values():
    """PyTorch computes the values (it has no gradient for this case): vizgrad uses the leading part of src."""
    compare(lambda lib, x, i, s: x.scatter_reduce(1, i, s, "amax", include_self=False), floats(3, 4),
            np.array([[0, 0], [3, 1]]), floats(3, 5), grad=False)


def test_unfold_is_a_view_of_its_input():
    ours, theirs = vg.zeros(5), torch.zeros(5)
    ours_windows, theirs_windows = ours.unfold(0, 2, 1), theirs.unfold(0, 2, 1)
    ours[1] = 3.0
    theirs[1] = 3.0
    assert ours_windows._base is ours and ours_windows.tolist() == theirs_windows.tolist()
    base_vg, base_torch = _both(floats(4), requires_grad=True)
    for base in (base_vg, base_torch):      # non-overlapping windows written through while recording
        y = base * 1
        y.unfold(0, 2, 2).mul_(3)
        (y * y).sum().backward()
    np.testing.assert_allclose(base_vg.grad.numpy(), base_torch.grad.numpy())


def test_unfold_second_derivatives_on_every_backend():
    from vizgrad.autograd import gradcheck, gradgradcheck
    for device in ("cpu", "strict"):
        x = vg.tensor(floats(3, 5, 2), device=device, requires_grad=True)
        assert gradcheck(lambda z: z.unfold(1, 2, 1), (x,))
        assert gradgradcheck(lambda z: z.unfold(1, 3, 2) ** 2, (x,))
