"""Sparse COO tensors against PyTorch: values, printing, gradients (sparse and dense) and errors."""

import pickle

import numpy as np
import pytest

import vizgrad
from vizgrad.autograd import gradcheck
from vizgrad.errors import DTypeError, IndexingError, ShapeError, UnsupportedError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

INDICES = [[0, 1, 1], [2, 0, 2]]
VALUES = [3.0, 4.0, 5.0]
UNSORTED = [[1, 0, 1], [0, 0, 0]]     # with a duplicate position


def both(indices=INDICES, values=VALUES, size=(2, 3), **kwargs):
    """The same sparse tensor in vizgrad and in PyTorch."""
    return (vizgrad.sparse_coo_tensor(vizgrad.tensor(indices), vizgrad.tensor(values), size, **kwargs),
            torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size, **kwargs))


def same_repr(ours, theirs):
    assert repr(ours) == repr(theirs).replace("torch.", "vizgrad.")


def same(ours, theirs, flag=True):
    """Same layout, shape, dtype name and (dense) values; for sparse ones the same entries (and
    ``is_coalesced``, with ``flag``) too."""
    assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    assert ours.is_sparse == theirs.is_sparse
    if ours.is_sparse:
        np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
        np.testing.assert_allclose(ours._values().detach().numpy(), theirs._values().detach().numpy(), rtol=1e-6)
        assert ours.is_coalesced() == theirs.is_coalesced() or not flag
    np.testing.assert_allclose(ours.detach().to_dense().numpy(), theirs.detach().to_dense().numpy(), rtol=1e-6)


def test_construction_and_metadata_match_pytorch():
    ours, theirs = both()
    same(ours, theirs)
    assert ours.layout is vizgrad.sparse_coo and repr(ours.layout) == "vizgrad.sparse_coo"
    assert vizgrad.ones(2).layout is vizgrad.strided and not vizgrad.ones(2).is_sparse
    assert ours._nnz() == 3 and ours.size() == (2, 3) and str(ours.device) == "cpu" and ours.dim() == 2
    assert ours.sparse_dim() == 2 and ours.dense_dim() == 0
    assert pickle.loads(pickle.dumps(vizgrad.sparse_coo)) is vizgrad.sparse_coo
    inferred = vizgrad.sparse_coo_tensor([[0, 2]], [1.0, 2.0], check_invariants=True)
    assert inferred.shape == (3,)
    same(vizgrad.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], dtype=vizgrad.float64),
         torch.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], dtype=torch.float64))


@pytest.mark.parametrize("make", [
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (2, 3)),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES, dtype=lib.float64), (2, 3)),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor([3, 4, 5]), (2, 3)),
    lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3)),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (2, 3), requires_grad=True),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES, requires_grad=True), (2, 3)),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES, requires_grad=True), (2, 3)) * 2,
    lambda lib: lib.sparse_coo_tensor(lib.tensor(UNSORTED), lib.tensor(VALUES), (2, 2)).coalesce(),
    lambda lib: lib.tensor(3.0).to_sparse(),
    lambda lib: lib.tensor(0.0).to_sparse(),
    lambda lib: lib.zeros(2, 2).to_sparse(),
], ids=["float32", "float64", "int64", "empty", "leaf", "grad_fn", "mul", "coalesced", "0-d", "0-d-zero", "zeros"])
def test_repr_is_pytorchs(make):
    same_repr(make(vizgrad), make(torch))


def test_coalesce_indices_and_values():
    ours, theirs = both(UNSORTED, size=(2, 2))
    assert not ours.is_coalesced()
    same(ours.coalesce(), theirs.coalesce())
    same(ours.coalesce().indices(), theirs.coalesce().indices())
    same(ours.coalesce().values(), theirs.coalesce().values())
    with pytest.raises(vizgrad.ArgumentTypeError, match="uncoalesced"):
        ours.indices()
    with pytest.raises(vizgrad.ArgumentTypeError, match="uncoalesced"):
        ours.values()
    with pytest.raises(vizgrad.ArgumentTypeError, match="coalesce: expects a sparse COO tensor"):
        vizgrad.ones(2).coalesce()


def test_to_sparse_and_to_dense_round_trip():
    data = [[0.0, 2.0, 0.0], [3.0, 0.0, -1.0]]
    ours, theirs = vizgrad.tensor(data).to_sparse(), torch.tensor(data).to_sparse()
    same(ours, theirs)
    same_repr(ours, theirs)
    same(ours.to_dense(), theirs.to_dense())
    assert ours.to_sparse() is ours and vizgrad.ones(2).to_dense().is_sparse is False


@pytest.mark.parametrize("operation", [
    lambda lib, s, d: lib.sparse.mm(s, d),
    lambda lib, s, d: lib.mm(s, d),
    lambda lib, s, d: lib.matmul(s, d),
    lambda lib, s, d: s @ d,
    lambda lib, s, d: lib.spmm(s, d),
], ids=["sparse.mm", "mm", "matmul", "@", "spmm"])
def test_products_and_their_gradients_match_pytorch(operation):
    results = []
    for lib in (vizgrad, torch):
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (2, 3), requires_grad=True)
        d = lib.arange(6.0).reshape(3, 2).requires_grad_()
        out = operation(lib, s, d)
        (out * lib.arange(4.0).reshape(2, 2)).sum().backward()
        results.append((out, s.grad, d.grad))
    (out, s_grad, d_grad), (t_out, t_s_grad, t_d_grad) = results
    same(out, t_out)
    assert out.grad_fn.name() == type(t_out.grad_fn).__name__
    same(s_grad, t_s_grad)          # sparse with s's pattern from sparse.mm, dense from mm
    same(d_grad, t_d_grad)


def test_gradients_reach_values_through_construction():
    for lib in (vizgrad, torch):
        v = lib.tensor(VALUES, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), v, (2, 3))
        lib.sparse.mm(s, lib.arange(6.0).reshape(3, 2)).sum().backward()
        if lib is vizgrad:
            ours = v.grad
    np.testing.assert_allclose(ours.numpy(), v.grad.numpy())


@pytest.mark.parametrize("operation", [
    lambda lib, s: lib.sparse.sum(s),
    lambda lib, s: lib.sparse.sum(s, 0).to_dense(),
    lambda lib, s: lib.sparse.sum(s, (0, 1)),
    lambda lib, s: s.sum(),
    lambda lib, s: (s * 2).to_dense(),
    lambda lib, s: (s + s).to_dense(),
    lambda lib, s: lib.add(s, s, alpha=2).to_dense(),
    lambda lib, s: s.coalesce().values(),
    lambda lib, s: s.to_dense() * lib.arange(6.0).reshape(2, 3),
], ids=["sum", "sum0", "sum01", "Tensor.sum", "mul", "add", "add-alpha", "values", "to_dense"])
def test_sparse_ops_and_gradients_match_pytorch(operation):
    results = []
    for lib in (vizgrad, torch):
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (2, 3), requires_grad=True)
        out = operation(lib, s)
        out.sum().backward()
        results.append((out, s.grad))
    (out, grad), (t_out, t_grad) = results
    same(out, t_out)
    same(grad, t_grad)


def test_sparse_results_match_pytorch():
    ours, theirs = both()
    other, t_other = both([[0], [0]], [7.0])
    for op in (lambda a, b: a + b, lambda a, b: a.coalesce() + b.coalesce(), lambda a, b: a * 2.5,
               lambda a, b: 2 * a, lambda a, b: a.t(), lambda a, b: vizgrad.sparse.sum(a, -1)
               if isinstance(a, vizgrad.Tensor) else torch.sparse.sum(a, -1)):
        same(op(ours, other), op(theirs, t_other))
    assert ours.t().to_dense().shape == (3, 2)


def test_transpose_gradient():
    s = vizgrad.sparse_coo_tensor(vizgrad.tensor(INDICES), vizgrad.tensor(VALUES), (2, 3), requires_grad=True)
    (s.t().to_dense() * vizgrad.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_allclose(s.grad.to_dense().numpy(), [[0, 0, 4], [1, 0, 5]])


def test_gradcheck_through_sparse_ops():
    indices = vizgrad.tensor(INDICES)
    v = vizgrad.tensor(VALUES, dtype=vizgrad.float64, requires_grad=True)
    d = vizgrad.randn(3, 2, dtype=vizgrad.float64, requires_grad=True)
    x = vizgrad.randn(2, 3, dtype=vizgrad.float64, requires_grad=True)

    def product(v, d):
        return vizgrad.sparse.mm(vizgrad.sparse_coo_tensor(indices, v, (2, 3)), d)

    assert gradcheck(product, (v, d))
    assert gradcheck(lambda v, d: vizgrad.sparse_coo_tensor(indices, v, (2, 3)) @ d, (v, d))
    assert gradcheck(lambda x: vizgrad.sparse.mm(x.to_sparse(), d).sum(), (x,))
    assert gradcheck(lambda v: (vizgrad.sparse_coo_tensor(indices, v, (2, 3)) * 3).t().to_dense(), (v,))
    assert gradcheck(lambda v: vizgrad.sparse.sum(vizgrad.sparse_coo_tensor(indices, v, (2, 3)), 1).to_dense(), (v,))


def test_graph_of_sparse_mm_draws():
    import vizgrad.render  # noqa: F401  (to_svg)
    v = vizgrad.tensor(VALUES, requires_grad=True)
    with vizgrad.trace() as recorded:
        s = vizgrad.sparse_coo_tensor(vizgrad.tensor(INDICES), v, (2, 3))
        loss = vizgrad.sparse.mm(s, vizgrad.ones(3, 2, requires_grad=True)).sum()
        loss.backward()
    for graph in (vizgrad.graph(loss), recorded.graph):
        nodes = graph.to_dict()["nodes"]
        ops = [node for node in nodes if node["kind"] == "op"]
        assert [node["op"] for node in ops] == ["SparseCooTensor", "SparseMm"]   # no checks drawn
        assert ops[0]["shape"] == [2, 3] and ops[1]["shape"] == [2, 2]
        assert "SparseMm" in graph.to_dot() and "<svg" in graph.to_svg()


def test_higher_order_gradients_refused():
    v = vizgrad.tensor(VALUES, requires_grad=True)
    s = vizgrad.sparse_coo_tensor(vizgrad.tensor(INDICES), v, (2, 3))
    with pytest.raises(UnsupportedError, match="create_graph"):
        vizgrad.autograd.grad(vizgrad.sparse.mm(s, vizgrad.ones(3, 2)).sum(), v, create_graph=True)


@pytest.mark.parametrize("call, error, words", [
    (lambda s: s.exp(), UnsupportedError, "exp: not implemented for sparse COO"),
    (lambda s: s.reshape(6), UnsupportedError, "reshape: not implemented for sparse COO"),
    (lambda s: s + vizgrad.ones(2, 3), UnsupportedError, "add: a sparse COO tensor"),
    (lambda s: s * vizgrad.ones(2, 3), UnsupportedError, "mul: a sparse COO tensor"),
    (lambda s: s[0], UnsupportedError, "sparse COO"),
    (lambda s: s.numpy(), UnsupportedError, "numpy: not implemented for sparse COO"),
    (lambda s: s.tolist(), UnsupportedError, "tolist: not implemented for sparse COO"),
    (lambda s: s.sum(0), UnsupportedError, "vizgrad.sparse.sum"),
    (lambda s: vizgrad.ones(3, 2) @ s, UnsupportedError, "dense @ sparse"),
    (lambda s: s.mul_(2), UnsupportedError, "sparse COO"),
    (lambda s: vizgrad.sparse.mm(s, vizgrad.ones(2, 2)), ShapeError, "sparse.mm"),
    (lambda s: vizgrad.sparse.mm(s, vizgrad.ones(3, 2, dtype=vizgrad.float64)), DTypeError, "sparse.mm"),
    (lambda s: s + s.t(), ShapeError, "add"),
])
def test_other_ops_raise_clear_errors(call, error, words):
    s = vizgrad.sparse_coo_tensor(vizgrad.tensor(INDICES), vizgrad.tensor(VALUES), (2, 3))
    with pytest.raises(error, match=words):
        call(s)


def test_construction_errors():
    i = vizgrad.tensor(INDICES)
    with pytest.raises(ShapeError, match="same nnz"):
        vizgrad.sparse_coo_tensor(i, [3.0, 4.0])
    with pytest.raises(ShapeError, match="sparse_dim x nnz"):
        vizgrad.sparse_coo_tensor(i[0], VALUES)
    with pytest.raises(ShapeError, match="size"):
        vizgrad.sparse_coo_tensor(i, VALUES, (2, 3, 4))
    with pytest.raises(IndexingError, match="dim 0"):
        vizgrad.sparse_coo_tensor(i, VALUES, (1, 3))
    with pytest.raises(UnsupportedError, match="hybrid"):
        vizgrad.sparse_coo_tensor(i, vizgrad.ones(3, 2))


def ADD_MUL_T(lib, s, d):
    return (s + s * 3).t().to_dense() * d


@pytest.mark.parametrize("operation", [
    lambda lib, s, d: lib.sparse.mm(s, d) + lib.sparse.mm(s, d * d),
    lambda lib, s, d: lib.mm(s, d) * 2 + lib.sparse.mm(s, d),
    lambda lib, s, d: s.to_dense() * d,
    lambda lib, s, d: lib.sparse.sum(s) * d,
    lambda lib, s, d: lib.sparse.sum(s, 1).to_dense() * d,
    ADD_MUL_T,
], ids=["sparse.mm-twice", "mm-and-sparse.mm", "to_dense", "sum", "sum1", "add-mul-t"])
def test_duplicates_and_repeated_use_match_pytorch(operation):
    """An uncoalesced tensor with a duplicate position, used twice: sums and accumulated sparse gradients."""
    results = []
    for lib in (vizgrad, torch):
        s = lib.sparse_coo_tensor(lib.tensor(UNSORTED), lib.tensor(VALUES), (2, 2), requires_grad=True)
        d = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        out = operation(lib, s, d)
        (out * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        results.append((out, s.grad, d.grad, s.to_dense()))
    for ours, theirs in zip(*results):
        # (a sum of two sparse gradients is coalesced in vizgrad; PyTorch's flag depends on how they were made)
        same(ours, theirs, flag=operation is not ADD_MUL_T)


def test_portable_array_api_backend():
    """The kernels use only the Array API and vizgrad's extras: the strict backend gives the CPU's numbers."""
    results = []
    for device in ("cpu", "strict"):
        v = vizgrad.tensor(VALUES, device=device, requires_grad=True)
        d = vizgrad.tensor([[1.0, -2.0], [0.5, 3.0]], device=device, requires_grad=True)
        s = vizgrad.sparse_coo_tensor(vizgrad.tensor(UNSORTED, device=device), v, (2, 2))
        out = vizgrad.sparse.mm(s, d) + vizgrad.mm(s, d * d) + (s + s * 2).t().to_dense()
        out = out + vizgrad.sparse.sum(s.coalesce(), 1).to_dense()[:, None] + d.to_sparse().to_dense()
        out.sum().backward()
        results.append([t.detach().cpu().numpy() for t in (out, v.grad, d.grad)])
    for ours, reference in zip(*results):
        np.testing.assert_allclose(ours, reference)
