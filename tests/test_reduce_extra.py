"""The reduction family (vizgrad/ops/reduce.py) beyond its registry samples, which
tests/test_ops.py runs: ties, zeros in prod, stability, dims, dtypes, errors, backends
and higher derivatives."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import gradcheck, gradgradcheck


def _host(value):
    return np.asarray(value.detach().cpu().numpy())


def test_ties_share_the_gradient_evenly(backend):
    x = vg.tensor([[1.0, 3.0, 3.0], [2.0, -1.0, 2.0]], device=backend, requires_grad=True)
    x.amax(dim=1).sum().backward()
    np.testing.assert_allclose(_host(x.grad), [[0, 0.5, 0.5], [0.5, 0, 0.5]])
    x.grad = None
    x.min().backward()
    np.testing.assert_allclose(_host(x.grad), [[0, 0, 0], [0, 1, 0]])
    x.grad = None
    y = vg.tensor([2.0, -2.0, 1.0], device=backend, requires_grad=True)
    y.norm(p=math.inf).backward()
    np.testing.assert_allclose(_host(y.grad), [0.5, -0.5, 0])


def test_max_with_dim_sends_the_gradient_to_the_first_index(backend):
    x = vg.tensor([[1.0, 3.0, 3.0], [2.0, -1.0, 2.0]], device=backend, requires_grad=True)
    result = x.max(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert not indices.requires_grad and indices.dtype is vg.int64 and values.requires_grad
    np.testing.assert_array_equal(_host(indices), [1, 0])
    values.sum().backward()
    np.testing.assert_allclose(_host(x.grad), [[0, 1, 0], [1, 0, 0]])
    low = vg.min(x, -1, keepdim=True)
    assert low.values.shape == (2, 1) and low.indices.shape == (2, 1)


def test_max_of_two_tensors_is_maximum(backend):
    a = vg.tensor([1.0, 5.0], device=backend)
    b = vg.tensor([3.0, 2.0], device=backend)
    np.testing.assert_allclose(_host(vg.max(a, b)), [3, 5])
    np.testing.assert_allclose(_host(a.min(b)), [1, 2])


@pytest.mark.parametrize("values,dim", [([2.0, 0.0, 5.0], None), ([0.0, 0.0, 5.0], None),
                                        ([[2.0, 0.0], [0.0, 0.0]], 1), ([0.0], 0)])
def test_prod_with_zeros(values, dim, backend):
    x = vg.tensor(values, dtype=vg.float64, device=backend, requires_grad=True)
    array = np.array(values)
    kwargs = {} if dim is None else {"dim": dim}
    vg.prod(x, **kwargs).sum().backward()
    flat = array.reshape(-1, array.shape[-1]) if dim is not None else array.reshape(1, -1)
    expected = np.array([[np.prod(np.delete(row, i)) for i in range(row.size)] for row in flat])
    np.testing.assert_allclose(_host(x.grad), expected.reshape(array.shape))
    assert gradcheck(lambda t: vg.prod(t, **kwargs), (x,))
    assert gradgradcheck(lambda t: vg.prod(t, **kwargs), (x,))


def test_norm_at_zero_has_zero_gradient(backend):
    for p in (2, 3, 0.5, 1, math.inf):
        x = vg.zeros(2, 3, dtype=vg.float64, device=backend, requires_grad=True)
        x.norm(p=p, dim=1).sum().backward()
        np.testing.assert_array_equal(_host(x.grad), np.zeros((2, 3)))


def test_logsumexp_is_stable(backend):
    x = vg.tensor([[1000.0, 1000.0], [-1000.0, -math.inf]], dtype=vg.float64, device=backend, requires_grad=True)
    out = x.logsumexp(dim=1)
    np.testing.assert_allclose(_host(out), [1000 + math.log(2), -1000])
    out.sum().backward()
    np.testing.assert_allclose(_host(x.grad), [[0.5, 0.5], [1, 0]])


def test_dims_empty_none_and_zero_d():
    x = vg.tensor(np.arange(6.0).reshape(2, 3))
    assert float(x.sum(dim=())) == 15.0 and float(x.amax()) == 5.0 and float(x.mean(dim=[])) == 2.5
    np.testing.assert_allclose(x.sum(dim=[-1, 0], keepdim=True).numpy(), [[15.0]])
    s = vg.tensor(3.0, requires_grad=True)
    for op in (vg.sum, vg.mean, vg.prod, vg.amax, vg.logsumexp, vg.norm, vg.cumsum):
        for dim in (0, -1):
            assert op(s, dim=dim).shape == ()
    assert s.max(0).indices.item() == 0 and s.argmax(dim=-1).item() == 0
    assert s.var(dim=0, correction=0).item() == 0.0


def test_dtypes():
    ints = vg.tensor([[1, 2], [3, 4]], dtype=vg.int32)
    assert ints.sum().dtype is vg.int64 and ints.sum().item() == 10
    assert vg.tensor([True, True, False]).sum().item() == 2
    assert ints.cumsum(0).dtype is vg.int64
    assert ints.sum(dtype=vg.float64).dtype is vg.float64
    assert ints.mean(dtype=vg.float32).item() == 2.5
    assert ints.count_nonzero().dtype is vg.int64
    x = vg.tensor([1.0, 2.0], dtype=vg.float32, requires_grad=True)
    x.sum(dtype=vg.float64).backward()
    assert x.grad.dtype is vg.float32
    assert vg.tensor([1.0, 2.0], dtype=vg.float32).mean().dtype is vg.float32
    assert x.var(unbiased=False).item() == 0.25


def test_errors_name_the_op_and_the_dims():
    x = vg.zeros(2, 3)
    with pytest.raises(IndexError, match=r"sum: dim 2 is out of range for a tensor of 2 dimensions"):
        x.sum(dim=2)
    with pytest.raises(IndexError, match=r"amax: dim -3"):
        x.amax(dim=(0, -3))
    with pytest.raises(IndexError, match=r"max: dim 1 .* 0 dimensions"):
        vg.tensor(1.0).max(1)
    with pytest.raises(IndexError, match=r"sum: dim 5 .* 0 dimensions"):
        vg.tensor(1.0).sum(dim=5)
    assert vg.tensor(2.0).sum(dim=-1).item() == 2.0 and vg.tensor(2.0).mean(dim=0).item() == 2.0
    with pytest.raises(ValueError, match=r"mean: dim -1 appears more than once"):
        x.mean(dim=(1, -1))
    with pytest.raises(TypeError, match=r"mean: expected a floating point tensor, got int64"):
        vg.tensor([1, 2]).mean()
    with pytest.raises(ValueError, match=r"amax: cannot reduce"):
        vg.zeros(0, 3).amax(dim=0)
    with pytest.raises(TypeError, match=r"max: dim must be an int"):
        x.max(dim=(0, 1))
    with pytest.raises(ValueError, match="nuc"):
        x.norm(p="nuc")


def test_results_stay_on_the_backend(backend):
    x = vg.tensor(np.random.default_rng(1).standard_normal((3, 4)), device=backend, requires_grad=True)
    library = x._backend()
    outs = [x.sum(), x.mean(1), x.prod(0), x.var(), x.std(1), x.amax(), x.amin(0), x.max(),
            x.logsumexp(1), x.norm(), x.norm(p=3), x.cumsum(1), x.argmax(), x.all(), x.any(1),
            x.count_nonzero(), *x.max(1), *x.min(0)]
    for out in outs:
        assert type(out._array) is library.array_type
    total = outs[0]
    for out in outs[1:12]:
        total = total + out.sum()
    total.backward()
    assert type(x.grad._array) is library.array_type


def test_third_derivative_of_prod_through_a_zero(backend):
    x = vg.tensor([1.0, 2.0, 0.0, 4.0], dtype=vg.float64, device=backend, requires_grad=True)
    g, = vg.autograd.grad(x.prod(), x, create_graph=True)
    h, = vg.autograd.grad(g[0], x, create_graph=True)
    k, = vg.autograd.grad(h[1], x)
    np.testing.assert_allclose(_host(k), [0.0, 0.0, 4.0, 0.0])   # d³/dx₀dx₁dxⱼ = Π of the others


@pytest.mark.parametrize("name,fn", [
    ("amax", lambda t: t.amax(dim=1)), ("amin", lambda t: t.amin()), ("max", lambda t: t.max()),
    ("max dim", lambda t: t.max(1).values), ("min dim", lambda t: t.min(0, keepdim=True).values),
    ("norm inf", lambda t: t.norm(p=math.inf, dim=0)), ("norm 1", lambda t: t.norm(p=1))])
def test_second_derivatives_of_non_smooth_ops_away_from_ties(name, fn, backend):
    x = vg.tensor(np.random.default_rng(3).uniform(-2, 2, (3, 4)), device=backend, requires_grad=True)
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("shape", [(7,), (3, 4), (300, 10), (4, 100), (2, 50, 3), (0, 5)])
def test_extrema_over_the_last_dim_match_numpy_on_every_layout(shape):
    """The NumPy backend reduces a short last axis through a transposed copy (NumPy's own
    row-at-a-time loop is slow there); values, shapes and nan must not change."""
    values = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    if values.size:
        values.flat[3] = np.nan
    for layout in (values, np.asfortranarray(values), values[..., ::-1]):
        x = vg.tensor(layout)
        for keepdim in (False, True):
            np.testing.assert_array_equal(x.amax(dim=-1, keepdim=keepdim).numpy(),
                                          np.max(layout, axis=-1, keepdims=keepdim))
            np.testing.assert_array_equal(x.amin(dim=len(shape) - 1, keepdim=keepdim).numpy(),
                                          np.min(layout, axis=-1, keepdims=keepdim))
