"""Two points PyTorch programs met: ``x[i] = v`` accepts the same value shapes with and
without gradients (PyTorch drops the value's leading 1s), and ``from_numpy`` takes arrays
derived from ``np.memmap``, sharing their memory."""

import warnings

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("key, value_shape", [(1, (1, 27)), (1, (1, 1, 27)), ((1, 2), (1,)), ((1, 2), (1, 1)),
                                              ([0, 2], (1, 27)), (slice(0, 1), (1, 1, 27)), (1, (27,))])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_accepts_what_pytorch_accepts(key, value_shape, requires_grad):
    rng = np.random.default_rng(0)
    base, value = rng.normal(size=(3, 27)), rng.normal(size=value_shape)
    x, tx = vg.tensor(base, requires_grad=True), torch.tensor(base, requires_grad=True)
    v, tv = vg.tensor(value, requires_grad=requires_grad), torch.tensor(value, requires_grad=requires_grad)
    y, ty = x * 1, tx * 1
    y[key] = v
    ty[key] = tv
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    weights = rng.normal(size=(3, 27))
    (y * vg.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    if requires_grad:
        assert v.grad.shape == tuple(value_shape)
        np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


@pytest.mark.parametrize("value_shape", [(2, 27), (27, 1), (1, 26)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_refuses_what_pytorch_refuses(value_shape, requires_grad):
    with pytest.raises(RuntimeError):
        torch.zeros(3, 27)[1] = torch.zeros(value_shape, requires_grad=requires_grad)
    with pytest.raises(ValueError, match=r"\(27,\)"):
        vg.zeros(3, 27)[1] = vg.zeros(value_shape, requires_grad=requires_grad)


def test_a_grad_value_into_a_row_of_a_no_grad_tensor():
    x = vg.zeros(3, 27)
    v = vg.randn(1, 27, requires_grad=True)
    x[1] = v
    assert x.requires_grad
    (x * 2).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.full((1, 27), 2.0, dtype=np.float32))


@pytest.fixture
def memmap(tmp_path):
    array = np.memmap(tmp_path / "values.bin", dtype=np.float32, mode="w+", shape=(3, 4))
    array[:] = np.arange(12, dtype=np.float32).reshape(3, 4)
    return array


@pytest.mark.parametrize("derive", [lambda m: m, lambda m: m[1], lambda m: m[:, 1:3], lambda m: m.T],
                         ids=["memmap", "row", "slice", "transpose"])
def test_from_numpy_shares_a_memmaps_memory(memmap, derive):
    source = derive(memmap)
    ours, theirs = vg.from_numpy(source), torch.from_numpy(np.array(source))
    assert ours.shape == theirs.shape and ours.dtype is vg.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_allclose((ours * 2 + 1).sum().item(), (theirs * 2 + 1).sum().item())
    ours.add_(100)                              # a write through the tensor reaches the file's pages
    np.testing.assert_array_equal(np.asarray(source), theirs.numpy() + 100)
    source[...] = -1                            # and a write into the memmap reaches the tensor
    assert (ours == -1).all().item()


def test_from_numpy_of_memmap_derived_arrays_runs_autograd(memmap):
    x = vg.from_numpy(memmap * 1.0).requires_grad_()
    (x ** 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.asarray(memmap))
    assert type(x.grad.numpy()) is np.ndarray


def test_from_numpy_warns_for_a_read_only_memmap_as_pytorch(memmap, tmp_path):
    """PyTorch warns "The given NumPy array is not writable" (once per program) and shares."""
    memmap.flush()
    read_only = np.memmap(tmp_path / "values.bin", dtype=np.float32, mode="r", shape=(3, 4))
    with pytest.warns(UserWarning, match="from_numpy: the given NumPy array is not writable"):
        tensor = vg.from_numpy(read_only)
    assert tensor.sum().item() == 66.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vg.from_numpy(memmap)                   # a writable one: no warning
