"""vizgrad's exceptions: the hierarchy, and that user mistakes are reported in
vizgrad's own words (op, shapes, dtypes, devices), never as a raw NumPy message."""

import re

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import errors
from vizgrad.backends import base
from vizgrad.errors import BackwardError, DeviceError, DTypeError, ShapeError, VizgradError, format_shape

DEVICES = ["cpu"] + (["strict"] if "strict" in base._by_device_type else [])


# --- the hierarchy -----------------------------------------------------------------
@pytest.mark.parametrize("error, builtin", [
    (errors.IndexingError, IndexError),
    (errors.ArgumentError, ValueError),
    (errors.ArgumentTypeError, TypeError),
    (errors.StateDictError, RuntimeError),
    (errors.NonFiniteError, RuntimeError),
    (ShapeError, ValueError),
    (DTypeError, TypeError),
    (DeviceError, RuntimeError),
    (BackwardError, RuntimeError),
])
def test_each_error_is_a_vizgrad_error_and_the_builtin_users_expect(error, builtin):
    assert issubclass(error, VizgradError)
    assert issubclass(error, builtin)
    with pytest.raises(builtin):
        raise error("message")


def test_the_base_and_the_exports():
    assert issubclass(VizgradError, Exception)
    assert vg.ShapeError is ShapeError and vg.DTypeError is DTypeError
    assert vg.DeviceError is DeviceError and vg.BackwardError is BackwardError
    assert vg.VizgradError is VizgradError
    assert vg.IndexingError is errors.IndexingError and vg.ArgumentError is errors.ArgumentError
    assert vg.ArgumentTypeError is errors.ArgumentTypeError and vg.StateDictError is errors.StateDictError
    assert vg.NonFiniteError is errors.NonFiniteError
    assert issubclass(vg.autograd.GradcheckError, BackwardError)


def test_format_shape():
    assert format_shape(()) == "()"
    assert format_shape((3,)) == "(3,)"
    assert format_shape((3, 4)) == "(3, 4)"


# --- broadcasting failures in elementwise ops ------------------------------------------
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
    "maximum": vg.maximum,
    "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("requires_grad", [False, True], ids=["no-grad", "grad"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_broadcasting_incompatible_shapes_raises_shape_error_naming_both(name, requires_grad, device):
    a = vg.ones(3, 4, device=device, requires_grad=requires_grad)
    b = vg.ones(5, device=device)
    with pytest.raises(ShapeError) as info:
        BINARY[name](a, b)
    assert str(info.value) == f"{name}: shapes (3, 4) and (5,) cannot be broadcast together: dim -1 is 4 vs 5"
    assert "operands could not be broadcast" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__   # no NumPy traceback chained


def test_broadcast_error_names_the_first_clashing_dimension():
    with pytest.raises(ShapeError, match=re.escape("shapes (2, 3, 4) and (5, 1, 4) cannot be broadcast "
                                                   "together: dim -3 is 2 vs 5")):
        vg.ones(2, 3, 4) * vg.ones(5, 1, 4)


def test_broadcast_error_in_where_names_the_clashing_pair():
    condition = vg.ones(3, 4) > 0
    with pytest.raises(ShapeError, match=re.escape("where: shapes (3, 4) and (2,) cannot be broadcast")):
        vg.where(condition, vg.ones(4), vg.ones(2))


def test_broadcast_error_in_an_in_place_op():
    x = vg.ones(3, 4)
    with pytest.raises(ShapeError, match=re.escape("(3, 4) and (5,)")):
        x.add_(vg.ones(5))
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))     # unchanged


def test_compatible_broadcasting_still_works():
    assert (vg.ones(3, 1) + vg.ones(4)).shape == (3, 4)
    assert (vg.ones(2, 1, 4) * vg.ones(3, 1)).shape == (2, 3, 4)


# --- other user mistakes, in vizgrad's words ----------------------------------------------
MISTAKES = {
    "ragged nested lists": (ShapeError, lambda: vg.tensor([[1, 2], [3]])),
    "unsupported dtype": (DTypeError, lambda: vg.tensor(np.array([1 + 1j]))),
    "unknown dtype name": (DTypeError, lambda: vg.zeros(2, dtype="complex64")),
    "gradient of an integer tensor": (DTypeError, lambda: vg.tensor([1, 2], requires_grad=True)),
    "unknown device": (DeviceError, lambda: vg.zeros(2, device="tpu")),
    "malformed device index": (DeviceError, lambda: vg.device("cuda:one")),
    "item of many elements": (ShapeError, lambda: vg.ones(3).item()),
    "truth value of many elements": (ShapeError, lambda: bool(vg.ones(3))),
    "negative size": (ShapeError, lambda: vg.ones(2, -3)),
    "backward without grad": (BackwardError, lambda: vg.ones(1).backward()),
    "backward of many elements": (ShapeError, lambda: (vg.ones(3, requires_grad=True) * 2).backward()),
    "numpy of a tensor that requires grad": (BackwardError, lambda: vg.ones(2, requires_grad=True).numpy()),
    "in-place on a leaf that requires grad": (BackwardError, lambda: vg.ones(2, requires_grad=True).mul_(2)),
    "mT of a vector": (ShapeError, lambda: vg.ones(3).mT),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_user_mistakes_raise_vizgrad_errors(name):
    expected, mistake = MISTAKES[name]
    with pytest.raises(expected) as info:
        mistake()
    assert isinstance(info.value, VizgradError)
    assert str(info.value)


def test_grad_of_an_input_that_does_not_require_grad_says_so():
    x = vg.ones(2)
    y = vg.ones(2, requires_grad=True)
    with pytest.raises(BackwardError, match=re.escape("inputs[0] (shape (2,)) does not require grad")):
        vg.autograd.grad((x * y).sum(), [x])


# --- indices out of range, in the op's words on every backend ---------------------------------
# (NumPy checks bounds itself and the op rewords its error; other backends are checked before)
OUT_OF_RANGE = {
    "getitem: index 5 is out of range for dim 0 of size 3": lambda x, i: x[i([0, 5])],
    "getitem: index 4 is out of range for dim 1 of size 4": lambda x, i: x[:, i([1, 4])],
    "getitem: index -5 is out of range for dim 1 of size 4": lambda x, i: x[i([0, 1]), i([2, -5])],
    "getitem: index 9 is out of range for dim 1 of size 4": lambda x, i: x[1, i([0, 9])],
    "put_add: index 7 is out of range for dim 0 of size 3": lambda x, i: vg.put_add(x, (i([0, 7]),), x[:2]),
    "index_put: index 4 is out of range for dim 1 of size 4": lambda x, i: vg.index_put(x, (0, i([4])), 1.0),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("message", sorted(OUT_OF_RANGE))
def test_an_index_out_of_range_names_the_op_the_index_and_the_dim(message, device):
    x = vg.randn(3, 4, device=device, requires_grad=True)
    with pytest.raises(IndexError) as info:
        OUT_OF_RANGE[message](x, lambda values: vg.tensor(values, device=device))
    assert str(info.value) == message


def test_setitem_out_of_range_leaves_the_tensor_unchanged():
    x = vg.zeros(3, 4)
    with pytest.raises(IndexError, match=re.escape("__setitem__: index 3 is out of range for dim 0 of size 3")):
        x[vg.tensor([0, 3])] = 1.0
    assert not x.numpy().any()


def test_negative_indices_count_from_the_end():
    x = vg.arange(12.0).reshape(3, 4).requires_grad_()
    picked = x[vg.tensor([-1, 0]), vg.tensor([-4, -1])]
    np.testing.assert_array_equal(picked.detach().numpy(), [8.0, 3.0])
    picked.sum().backward()
    np.testing.assert_array_equal(np.argwhere(x.grad.numpy()), [[0, 3], [2, 0]])
