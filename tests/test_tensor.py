"""Tensors as a user meets them: factories, the random seed, dtypes and promotion,
attributes and methods, repr, devices."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.backends import base
from vizgrad.errors import BackwardError, DeviceError, DTypeError, ShapeError


def same(tensor, expected, dtype=None):
    """Values equal to ``expected``, and the dtype when given."""
    np.testing.assert_array_equal(tensor.detach().numpy(), np.asarray(expected))
    if dtype is not None:
        assert tensor.dtype is dtype


# --- factories --------------------------------------------------------------------
def test_tensor_infers_dtypes_like_pytorch():
    same(vg.tensor([1.0, 2.0]), [1.0, 2.0], vg.float32)
    same(vg.tensor([[1, 2], [3, 4]]), [[1, 2], [3, 4]], vg.int64)
    same(vg.tensor([True, False]), [True, False], vg.bool)
    same(vg.tensor(3.5), 3.5, vg.float32)
    assert vg.tensor(3.5).shape == ()
    same(vg.tensor([1, 2], dtype=vg.float64), [1.0, 2.0], vg.float64)
    same(vg.tensor(np.array([1, 2], dtype=np.int32)), [1, 2], vg.int32)     # arrays keep their dtype
    same(vg.tensor(np.array([1.5])), [1.5], vg.float64)


def test_tensor_copies_its_data():
    source = np.array([1.0, 2.0])
    x = vg.tensor(source)
    source[0] = 9.0
    same(x, [1.0, 2.0])
    y = vg.tensor(x)
    with vg.no_grad():
        y.add_(1)
    same(x, [1.0, 2.0])


def test_zeros_ones_full_empty():
    same(vg.zeros(2, 3), np.zeros((2, 3)), vg.float32)
    same(vg.zeros((2, 3)), np.zeros((2, 3)), vg.float32)
    same(vg.ones(2, dtype=vg.int32), [1, 1], vg.int32)
    same(vg.full((2, 2), 7), [[7, 7], [7, 7]], vg.int64)
    same(vg.full((2,), 2.5), [2.5, 2.5], vg.float32)
    same(vg.full((1,), True), [True], vg.bool)
    same(vg.full(3, 1.0, dtype=vg.float64), [1.0, 1.0, 1.0], vg.float64)
    empty = vg.empty(2, 3)
    assert empty.shape == (2, 3) and empty.dtype is vg.float32
    assert vg.zeros(0, 3).shape == (0, 3)
    with pytest.raises(ShapeError):
        vg.zeros(-1)


def test_factories_can_require_grad():
    x = vg.zeros(2, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert vg.randn(2, requires_grad=True).requires_grad


def test_arange_and_linspace():
    same(vg.arange(5), [0, 1, 2, 3, 4], vg.int64)
    same(vg.arange(2, 8, 2), [2, 4, 6], vg.int64)
    same(vg.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75], vg.float32)
    same(vg.arange(3, dtype=vg.float64), [0.0, 1.0, 2.0], vg.float64)
    same(vg.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0], vg.float32)
    with pytest.raises(ValueError, match="step"):
        vg.arange(0, 1, 0)


def test_eye():
    same(vg.eye(3), np.eye(3), vg.float32)
    same(vg.eye(2, 3), [[1, 0, 0], [0, 1, 0]])


def test_random_factories_shapes_ranges_and_dtypes():
    r = vg.rand(1000)
    assert r.shape == (1000,) and r.dtype is vg.float32
    assert 0.0 <= r.min().item() and r.max().item() < 1.0
    n = vg.randn(200, 50, dtype=vg.float64)
    assert n.shape == (200, 50) and n.dtype is vg.float64
    assert abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1.0) < 0.05
    i = vg.randint(5, 10, (1000,))
    assert i.dtype is vg.int64 and i.shape == (1000,)
    assert set(np.unique(i.numpy())) == {5, 6, 7, 8, 9}
    j = vg.randint(3, (4, 4))
    assert j.shape == (4, 4) and 0 <= j.numpy().min() and j.numpy().max() < 3
    with pytest.raises(DTypeError):
        vg.rand(2, dtype=vg.int64)


def test_like_factories_keep_shape_and_dtype():
    x = vg.tensor([[1, 2, 3]], dtype=vg.int32)
    same(vg.zeros_like(x), [[0, 0, 0]], vg.int32)
    same(vg.ones_like(x), [[1, 1, 1]], vg.int32)
    same(vg.full_like(x, 4), [[4, 4, 4]], vg.int32)
    same(vg.zeros_like(x, dtype=vg.float64), [[0.0, 0.0, 0.0]], vg.float64)
    assert vg.rand_like(vg.zeros(2, 3)).shape == (2, 3)


def test_from_numpy_shares_memory_both_ways():
    array = np.array([1.0, 2.0, 3.0])
    x = vg.from_numpy(array)
    assert x.dtype is vg.float64
    array[0] = 10.0
    same(x, [10.0, 2.0, 3.0])
    with vg.no_grad():
        x.mul_(2)
    np.testing.assert_array_equal(array, [20.0, 4.0, 6.0])
    assert np.shares_memory(x.numpy(), array)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        vg.from_numpy([1.0, 2.0])


def test_manual_seed_reproduces_random_numbers():
    vg.manual_seed(123)
    first = (vg.rand(4).numpy().copy(), vg.randn(4).numpy().copy(), vg.randint(100, (4,)).numpy().copy())
    vg.manual_seed(123)
    second = (vg.rand(4).numpy(), vg.randn(4).numpy(), vg.randint(100, (4,)).numpy())
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    vg.manual_seed(124)
    assert not np.array_equal(vg.rand(4).numpy(), first[0])


def test_generator_objects_are_independent_of_the_global_seed():
    a = vg.randn(3, generator=vg.Generator(7)).numpy()
    vg.manual_seed(0)
    b = vg.randn(3, generator=vg.Generator(7)).numpy()
    np.testing.assert_array_equal(a, b)
    generator = vg.Generator(1)
    state = generator.get_state()
    c = vg.rand(2, generator=generator).numpy()
    generator.set_state(state)
    np.testing.assert_array_equal(vg.rand(2, generator=generator).numpy(), c)


# --- dtypes and promotion (PyTorch's rules; tests/test_dtypes.py has the full table) -------
@pytest.mark.parametrize("left, right, expected", [
    ("float32", "float64", "float64"),
    ("float16", "float32", "float32"),
    ("int32", "int64", "int64"),
    ("bool", "int32", "int32"),
    ("int64", "float32", "float32"),     # PyTorch (NumPy would give float64)
    ("int32", "float32", "float32"),
    ("int32", "float16", "float16"),
])
def test_tensor_tensor_promotion_follows_pytorch(left, right, expected):
    a = vg.tensor([1], dtype=left)
    b = vg.tensor([2], dtype=right)
    assert (a + b).dtype is vg.dtypes.as_dtype(expected)
    assert (b * a).dtype is vg.dtypes.as_dtype(expected)


@pytest.mark.parametrize("dtype, scalar, expected", [
    ("float32", 2.5, "float32"),
    ("float16", 2.5, "float16"),
    ("float64", 2, "float64"),
    ("int32", 2, "int32"),
    ("int64", 2, "int64"),
    ("int64", 2.5, "float32"),           # the default float dtype (NumPy would give float64)
    ("bool", 1, "int64"),
])
def test_python_scalars_are_weak(dtype, scalar, expected):
    x = vg.tensor([1], dtype=dtype)
    assert (x * scalar).dtype is vg.dtypes.as_dtype(expected)
    assert (scalar + x).dtype is vg.dtypes.as_dtype(expected)


def test_true_division_of_integers_gives_floats():
    assert (vg.tensor([1, 2]) / vg.tensor([2, 2])).is_floating_point()
    same(vg.tensor([1, 2]) / 2, [0.5, 1.0])


def test_dtype_objects_and_names():
    assert vg.float32.name == "float32" and repr(vg.float32) == "vizgrad.float32"
    assert vg.dtypes.as_dtype("double") is vg.float64
    assert vg.dtypes.as_dtype(np.float16) is vg.float16
    assert vg.dtypes.as_dtype(float) is vg.float32 and vg.dtypes.as_dtype(int) is vg.int64
    assert vg.float64.is_floating_point and not vg.int64.is_floating_point
    with pytest.raises(DTypeError, match="complex128"):
        vg.tensor(np.array([1 + 2j]))


# --- attributes and methods ----------------------------------------------------------------
def test_metadata_attributes():
    x = vg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.shape == (2, 3) and isinstance(x.shape, tuple)
    assert x.ndim == 2 and x.dim() == 2
    assert x.dtype is vg.float32
    assert x.device == "cpu" and x.device == vg.device("cpu")
    assert x.requires_grad and x.is_leaf
    assert x.grad is None and x.grad_fn is None
    assert x.numel() == 6
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert len(x) == 2
    y = x * 2
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    with pytest.raises(IndexError, match="out of range"):
        x.size(2)


def test_item_and_tolist():
    assert vg.tensor(3.5).item() == 3.5 and isinstance(vg.tensor(3.5).item(), float)
    assert vg.tensor([7]).item() == 7 and isinstance(vg.tensor([7]).item(), int)
    assert vg.tensor([[True]]).item() is True
    assert vg.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert vg.tensor(2.0).tolist() == 2.0
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        vg.tensor([1.0, 2.0]).item()
    assert float(vg.tensor([2.5])) == 2.5 and int(vg.tensor(4)) == 4


def test_numpy_shares_memory_and_refuses_tensors_that_require_grad():
    x = vg.tensor([1.0, 2.0])
    array = x.numpy()
    array[0] = 5.0
    same(x, [5.0, 2.0])
    w = vg.tensor([1.0], requires_grad=True)
    with pytest.raises(BackwardError, match=r"detach\(\)\.numpy\(\)"):
        w.numpy()
    np.testing.assert_array_equal(w.detach().numpy(), [1.0])
    np.testing.assert_array_equal(np.asarray(w), [1.0])


def test_to_dtype_and_device():
    x = vg.tensor([1.5, 2.5], requires_grad=True)
    d = x.to(vg.float64)
    assert d.dtype is vg.float64 and d.grad_fn is not None
    assert x.to("float64").dtype is vg.float64
    assert x.to(dtype=vg.float16).dtype is vg.float16
    assert x.to("cpu") is x and x.cpu() is x
    assert x.to(vg.float32) is x
    same(vg.tensor([1.7, -1.7]).to(vg.int64), [1, -1], vg.int64)
    assert x.double().dtype is vg.float64 and x.float() is x and x.long().dtype is vg.int64
    assert x.to(vg.zeros(1, dtype=vg.float64)).dtype is vg.float64
    d.sum().backward()
    same(x.grad, [1.0, 1.0], vg.float32)      # the gradient comes back in x's dtype


def test_detach_shares_memory_and_version_counter():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1)                                  # allowed: d does not require grad
    same(x, [2.0, 3.0])
    assert x._version == 1 and d._version == 1
    assert x.data._version == 1


def test_detach_in_place():
    x = vg.tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_requires_grad_():
    x = vg.tensor([1.0])
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    with pytest.raises(DTypeError, match="int64"):
        vg.tensor([1, 2]).requires_grad_()
    with pytest.raises(DTypeError):
        vg.tensor([1, 2], requires_grad=True)
    with pytest.raises(BackwardError, match="leaf"):
        (vg.tensor([1.0], requires_grad=True) * 2).requires_grad_(False)


def test_retain_grad():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    same(y.grad, [6.0, 12.0])
    with pytest.raises(BackwardError):
        vg.tensor([1.0]).retain_grad()


def test_clone_copies_and_passes_gradients():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0"
    assert not np.shares_memory(c.detach().numpy(), x.detach().numpy())
    (c * 3).sum().backward()
    same(x.grad, [3.0, 3.0])


def test_contiguous_returns_self_when_already_contiguous():
    x = vg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.contiguous() is x


def test_contiguous_of_a_transposed_array_is_row_major():
    array = np.arange(12.0).reshape(3, 4).T
    x = vg.from_numpy(array)
    c = x.contiguous()
    same(c, array)
    assert c.numpy().flags.c_contiguous


def test_transposes():
    x = vg.arange(6.0).reshape(2, 3)
    same(x.T, [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
    same(x.mT, x.T.numpy())
    y = vg.arange(24.0).reshape(2, 3, 4)
    assert y.T.shape == (4, 3, 2) and y.mT.shape == (2, 4, 3)
    same(y.mT, np.swapaxes(np.arange(24.0).reshape(2, 3, 4), -1, -2))
    same(y.T, np.arange(24.0).reshape(2, 3, 4).T)
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        vg.ones(3).mT


def test_repr_shows_values_and_autograd_state():
    assert repr(vg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(vg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(vg.tensor(3.0)) == "tensor(3.)"
    assert repr(vg.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    y = vg.tensor([1.0, 2.0], requires_grad=True) * 2
    assert repr(y) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(vg.tensor([1.0], dtype=vg.float64)) == "tensor([1.], dtype=vizgrad.float64)"
    assert repr(vg.tensor([0.5], name="w")) == "tensor([0.5000], name='w')"
    assert repr(vg.zeros(0)) == "tensor([])" and repr(vg.zeros(0, dtype=vg.int64)) == "tensor([], dtype=vizgrad.int64)"


def test_name_is_an_optional_label():
    x = vg.tensor([1.0], name="weights")
    assert x.name == "weights"
    assert vg.tensor([1.0]).name is None
    x.name = "w"
    assert x.name == "w"
    assert (x * 2).name is None


def test_truth_value_of_a_tensor():
    assert bool(vg.tensor([1.0])) is True
    with pytest.raises(ShapeError, match="ambiguous"):
        bool(vg.tensor([1.0, 2.0]))


# --- devices --------------------------------------------------------------------------
def _cupy_installed():
    return "cuda" in base._by_device_type


@pytest.mark.skipif(vg.cuda.is_available(), reason="a GPU is usable here")
def test_to_cuda_without_a_gpu_says_what_to_do():
    x = vg.tensor([1.0])
    with pytest.raises(DeviceError) as info:
        x.to("cuda")
    message = str(info.value)
    if _cupy_installed():
        assert "no GPU was found" in message
    else:
        assert "vizgrad[cuda12]" in message and "vizgrad[cuda13]" in message
    with pytest.raises(DeviceError):
        x.cuda()
    with pytest.raises(DeviceError):
        vg.zeros(2, device="cuda")


@pytest.mark.skipif(_cupy_installed(), reason="CuPy is installed here")
def test_cuda_is_not_available_without_cupy():
    assert vg.cuda.is_available() is False
    assert vg.cuda.device_count() == 0


def test_device_objects():
    d = vg.device("cuda:1")
    assert d.type == "cuda" and d.index == 1
    assert str(d) == "cuda:1" and repr(d) == "device(type='cuda', index=1)"
    assert d == "cuda:1" and d != "cuda:0" and d != "cpu"
    assert vg.device("cuda") == "cuda:0" and vg.device("cuda", 2) == "cuda:2"
    assert vg.device("cpu") == "cpu" and vg.device(vg.device("cpu")) == vg.device("cpu")
    assert hash(vg.device("cuda")) == hash(vg.device("cuda:0"))
    assert vg.device("cpu").index is None
    with pytest.raises(DeviceError, match="cuda:x"):
        vg.device("cuda:x")
    with pytest.raises(DeviceError):
        vg.device(3)
    with pytest.raises(DeviceError, match="tpu"):
        vg.tensor([1.0], device="tpu")


@pytest.mark.skipif("strict" not in base._by_device_type, reason="array_api_strict is not installed")
def test_mixing_devices_in_one_op_names_both():
    x = np.array([1.0, 2.0])
    with pytest.raises(DeviceError) as info:
        vg.tensor(x, device="strict") + vg.tensor(x)
    message = str(info.value)
    assert "strict" in message and "cpu" in message
    with pytest.raises(DeviceError):
        vg.tensor(x) * vg.tensor(x, device="strict", requires_grad=True)


@pytest.mark.skipif("strict" not in base._by_device_type, reason="array_api_strict is not installed")
def test_moving_between_devices_is_differentiable():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    s = x.to("strict")
    assert s.device == "strict" and s.grad_fn is not None
    same(s.cpu(), [1.0, 2.0])
    (s * s).to("cpu").sum().backward()
    same(x.grad, [2.0, 4.0])
    assert x.grad.device == "cpu"
