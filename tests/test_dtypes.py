"""PyTorch's type promotion, default dtype, and writes into tensors of any dtype.

The rules are checked against a table of PyTorch's results checked in with the tests
(``data/torch_promotion.json``: every pair of a dimensioned tensor, a 0-d tensor and a
Python number, for add, true division, floor division and maximum), on every backend.
When PyTorch is importable it is also the oracle: the table is compared with it, and
the expressions below run on both with their dtypes and values compared.
"""

import json
import pathlib

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import ArgumentError, BackwardError, DivisionByZeroError, DTypeError, VizgradError

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "torch_promotion.json").read_text())
DTYPES = ["bool", "int32", "int64", "float16", "float32", "float64"]


def _operands(lib, device=None, skip=()):
    """Name -> operand: a 2-element tensor and a 0-d tensor of each dtype, and Python numbers."""
    found = {}
    for name in DTYPES:
        if name in skip:
            continue
        dtype = lib.bool if name == "bool" else getattr(lib, name)
        kwargs = {"dtype": dtype} if device is None else {"dtype": dtype, "device": device}
        found[f"tensor {name}"] = lib.tensor([True, True] if name == "bool" else [3, 1], **kwargs)
        found[f"0-d {name}"] = lib.tensor(True if name == "bool" else 2, **kwargs)
    found.update({"python bool": True, "python int": 2, "python float": 2.5})
    return found


def _apply(lib, op, a, b):
    if op == "add":
        return a + b
    if op == "div":
        return a / b
    if op == "floor_divide":
        return a // b
    return lib.maximum(a, b)


@pytest.mark.parametrize("op", sorted(TABLE))
def test_promotion_table(op, backend):
    operands = _operands(vg, backend, skip=() if backend != "strict" else ("float16",))
    wrong = []
    for pair, expected in TABLE[op].items():
        left, right = pair.split(" | ")
        if left not in operands or right not in operands:
            continue   # array_api_strict has no float16
        got = _apply(vg, op, operands[left], operands[right])
        if got.dtype.name != expected or got.device != vg.device(backend):
            wrong.append(f"{pair}: {got.dtype.name} on {got.device}, PyTorch {expected}")
    assert not wrong, f"{op}: {len(wrong)} of {len(TABLE[op])} pairs differ:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("op", sorted(TABLE))
def test_promotion_table_is_pytorchs(op):
    """The checked-in table agrees with the installed PyTorch, values included."""
    torch = pytest.importorskip("torch")
    ours, theirs = _operands(vg), _operands(torch)
    for pair, expected in TABLE[op].items():
        left, right = pair.split(" | ")
        result = _apply(torch, op, theirs[left], theirs[right])
        assert str(result.dtype).replace("torch.", "") == expected, pair
        mine = _apply(vg, op, ours[left], ours[right])
        np.testing.assert_allclose(mine.numpy().astype(float), result.numpy().astype(float), rtol=1e-3,
                                   err_msg=f"{op} {pair}")


# --- expressions from programs written for PyTorch: dtype and values ---------------------------
EXPRESSIONS = {
    "T.arange(5) * 0.5": "float32",
    "T.linspace(-1, 1, 5).unsqueeze(-1).pow(T.tensor([1, 2, 3]))": "float32",
    "T.tensor([5, -5]) // 2": "int64",
    "T.tensor([5, -5]) % 3": "int64",
    "T.tensor([5, -5]) % -3": "int64",
    "T.tensor([5, -5]).remainder(T.tensor([3, -3]))": "int64",
    "T.tensor([5, -5]).div(2, rounding_mode='trunc')": "int64",
    "T.tensor([5, -5]).div(2, rounding_mode='floor')": "int64",
    "T.tensor([7, -7], dtype=T.int32) // T.tensor([2, 2], dtype=T.int32)": "int32",
    "17 // T.tensor([5, -5])": "int64",
    "T.tensor([5, -5]) / 2": "float32",
    "T.tensor([5, -5]) / T.tensor([2, 3])": "float32",
    "T.tensor([5, -5]) // T.tensor([2.0])": "float32",
    "T.tensor([5.0, -5.0]) // 0": "float32",
    "T.tensor([5.5, -5.5]) % 2": "float32",
    "T.tensor([5.5, -5.5]) % -2": "float32",
    "T.tensor([True, False]) + T.tensor([True, True])": "bool",
    "T.tensor([True, False]) * T.tensor([True, True])": "bool",
    "T.tensor([True]) + True": "bool",
    "T.tensor([True]) + 1": "int64",
    "T.tensor([True]) * 2.5": "float32",
    "T.tensor([True]) / T.tensor([True])": "float32",
    "T.arange(3) * T.tensor(1.5)": "float32",
    "T.arange(3) * T.tensor(1.5, dtype=T.float64)": "float64",
    "T.tensor(1.5) * T.tensor([1, 2])": "float32",
    "T.arange(3, dtype=T.int32) + T.tensor(1)": "int32",
    "T.arange(3, dtype=T.int32) * 2": "int32",
    "T.arange(3, dtype=T.int32) + T.arange(3)": "int64",
    "T.ones(2) + T.tensor(1.0, dtype=T.float64)": "float32",
    "T.ones(2, dtype=T.float16) + T.ones(2)": "float32",
    "T.ones(2, dtype=T.float16) + T.tensor(1.0)": "float16",
    "T.ones(2, dtype=T.float16) * 2.5": "float16",
    "T.tensor([1, 2], dtype=T.int32) + T.ones(2, dtype=T.float16)": "float16",
    "T.tensor(1, dtype=T.int32) + T.tensor(1.0)": "float32",
    "T.tensor(1.0) + T.tensor(1.0, dtype=T.float64)": "float64",
    "T.tensor([1, 2]) - 0.5": "float32",
    "0.5 - T.tensor([1, 2])": "float32",
    "T.clamp(T.tensor([1, 2, 3]), min=1.5)": "float32",
    "T.clamp(T.tensor([1, 2, 3]), min=0, max=2)": "int64",
    "T.clamp(T.tensor([1.0, 2, 3]), min=T.tensor([1.5], dtype=T.float64))": "float64",
    "T.where(T.tensor([True, False]), T.tensor([1, 2]), 2.5)": "float32",
    "T.where(T.tensor([True, False]), T.tensor([1, 2]), 0)": "int64",
    "T.where(T.tensor([True, False]), T.tensor([1, 2]), T.tensor([1.0, 2.0]))": "float32",
    "T.tensor([1, 2]) ** 2": "int64",
    "T.tensor([1, 2]) ** 2.0": "float32",
    "T.tensor([1, 2]).pow(T.tensor([1, 2]))": "int64",
    "2 ** T.tensor([1, 2])": "int64",
    "2.0 ** T.tensor([1, 2])": "float32",
    "T.tensor([1.0, 2.0]) ** T.tensor([1, 2])": "float32",
    "T.tensor([1, 2]) == 1.5": "bool",
    "T.tensor([1, 2]) < T.tensor([1.5, 1.5])": "bool",
    "T.tensor([0.1], dtype=T.float32) == T.tensor(0.1, dtype=T.float64)": "bool",
    "T.maximum(T.tensor([1, 2]), T.tensor([1.5, 0.0]))": "float32",
    "T.minimum(T.tensor([1, 2], dtype=T.int32), T.tensor([3, 0]))": "int64",
    "T.tensor([1, 2]).exp()": "float32",
    "T.tensor([1, 4]).sqrt()": "float32",
    "T.tensor([1, 2]).sigmoid()": "float32",
    "T.tensor([1, 2]).reciprocal()": "float32",
    "T.tensor([1, -2]).abs()": "int64",
    "T.tensor([1, 2]).sum()": "int64",
    "T.nn.functional.mse_loss(T.ones(3), T.tensor([1, 2, 3]))": "float32",
    "T.tensor([1.5, 2.5])": "float32",
    "T.full((2,), 1.5)": "float32",
    "T.zeros(2)": "float32",
}


@pytest.mark.parametrize("expression", sorted(EXPRESSIONS))
def test_expressions_follow_pytorch(expression):
    result = eval(expression, {"T": vg})
    assert result.dtype.name == EXPRESSIONS[expression]
    try:
        import torch
    except ImportError:
        return
    expected = eval(expression, {"T": torch})
    assert str(expected.dtype) == f"torch.{EXPRESSIONS[expression]}"
    np.testing.assert_allclose(result.numpy().astype(float), expected.numpy().astype(float), rtol=1e-6)


def test_integer_division_values_are_pytorchs():
    same = np.testing.assert_array_equal
    same((vg.tensor([5, -5, 7, -7]) // vg.tensor([2, 2, -3, -3])).numpy(), [2, -3, -3, 2])
    same((vg.tensor([5, -5, 7, -7]) % vg.tensor([2, 2, -3, -3])).numpy(), [1, 1, -2, -1])
    same(vg.tensor([5, -5, 7, -7]).div(vg.tensor([2, 2, -3, -3]), rounding_mode="trunc").numpy(), [2, -2, -2, 2])
    big = 2 ** 62 + 1   # exact: no detour through float64
    assert (vg.tensor([big]) // 1).item() == big and (vg.tensor([big]) % 2).item() == 1


@pytest.mark.parametrize("expression", [
    "vg.tensor([5, -5]) // 0", "vg.tensor([5, -5]) % 0", "vg.tensor([5, -5]) // vg.tensor([1, 0])",
    "vg.tensor([5, -5]).div(0, rounding_mode='trunc')", "vg.tensor([5]).remainder(vg.tensor([0]))"])
def test_integer_division_by_zero_raises_as_in_pytorch(expression):
    with pytest.raises(DivisionByZeroError, match="ZeroDivisionError") as caught:
        eval(expression)
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, ZeroDivisionError)
    assert isinstance(caught.value, VizgradError)
    assert np.isinf((vg.tensor([5.0]) // 0).numpy()).all()   # floats: inf, no error


def test_integer_to_negative_power_is_an_error():
    with pytest.raises(ArgumentError, match="negative integer powers"):     # a ValueError
        vg.tensor([1, 2]) ** -1
    assert (vg.tensor([1, 2]) ** vg.tensor([1, -1])).tolist() == [1, 0]   # a tensor exponent: PyTorch answers
    assert (vg.tensor([1.0, 2.0]) ** -1).tolist() == [1.0, 0.5]


def test_mixed_dtypes_differentiate_into_each_inputs_dtype():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = vg.tensor([3.0, 4.0], dtype=vg.float64, requires_grad=True)
    (x * y * vg.tensor([1, 2])).sum().backward()
    assert x.grad.dtype is vg.float32 and y.grad.dtype is vg.float64
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 8.0])
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 4.0])


def test_mixed_dtypes_gradcheck_and_gradgradcheck():
    x = vg.tensor([0.5, 1.5, 2.0], dtype=vg.float64, requires_grad=True)
    counts = vg.tensor([1, 2, 3])
    assert vg.autograd.gradcheck(lambda t: (t * counts + counts / 2) ** 2 / counts, (x,))
    assert vg.autograd.gradgradcheck(lambda t: (t * counts) ** 3 / counts, (x,))


# --- the default dtype ----------------------------------------------------------------------
@pytest.fixture
def float64_default():
    vg.set_default_dtype(vg.float64)
    yield
    vg.set_default_dtype(vg.float32)


def test_default_dtype_is_float32():
    assert vg.get_default_dtype() is vg.float32


def test_set_default_dtype_reaches_creation_numbers_and_division(float64_default):
    assert vg.get_default_dtype() is vg.float64
    for made in (vg.tensor([1.5]), vg.zeros(2), vg.ones(1), vg.full((2,), 0.5), vg.randn(2), vg.rand(2),
                 vg.linspace(0, 1, 3), vg.arange(0, 1, 0.5), vg.eye(2), vg.arange(3) * 0.5,
                 vg.tensor([1, 2]) / 2, vg.tensor([1, 2]).exp(), vg.tensor([True]) * 1.5):
        assert made.dtype is vg.float64
    assert (vg.ones(2, dtype=vg.float32) * 2.5).dtype is vg.float32   # tensors keep their dtype
    assert vg.nn.Linear(2, 3).weight.dtype is vg.float64


def test_set_default_dtype_takes_floating_types_only():
    with pytest.raises(DTypeError, match="only floating-point types"):
        vg.set_default_dtype(vg.int64)
    assert vg.get_default_dtype() is vg.float32


def test_promote_types_result_type_can_cast():
    assert vg.promote_types(vg.int32, vg.float16) is vg.float16
    assert vg.promote_types(vg.bool, vg.int32) is vg.int32
    assert vg.result_type(vg.tensor([1]), 1.5) is vg.float32
    assert vg.result_type(vg.tensor([1.0]), vg.tensor(1.0, dtype=vg.float64)) is vg.float32
    assert vg.result_type(2, 2.5) is vg.float32
    assert not vg.can_cast(vg.float32, vg.int32) and not vg.can_cast(vg.int64, vg.bool)
    assert vg.can_cast(vg.bool, vg.float16) and vg.can_cast(vg.float64, vg.float16)


# --- writing into tensors of any dtype -------------------------------------------------------
def test_index_writes_into_integer_and_bool_tensors(backend):
    x = vg.zeros(4, dtype=vg.int64, device=backend)
    x[0] = 1
    x[1] = 2.9                        # truncates, as in PyTorch
    x[2] = vg.tensor(-1.7, device=backend)
    x[[3]] = -2
    assert x.tolist() == [1, 2, -1, -2] and x.dtype is vg.int64
    counts = vg.zeros(3, 3, dtype=vg.int32, device=backend)
    for i, j in ((1, 2), (1, 2), (0, 0)):
        counts[i, j] += 1
    assert counts.dtype is vg.int32 and counts.tolist() == [[1, 0, 0], [0, 0, 2], [0, 0, 0]]
    flags = vg.zeros(3, dtype=vg.bool, device=backend)
    flags[0] = 2
    flags[vg.tensor([False, True, False], device=backend)] = True
    assert flags.tolist() == [True, True, False]


def test_copy_and_fill_convert_to_the_tensors_dtype(backend):
    x = vg.zeros(3, dtype=vg.int64, device=backend)
    x.copy_(vg.tensor([1.7, 2.0, -1.7], device=backend))
    assert x.tolist() == [1, 2, -1]
    x.fill_(2.9)
    assert x.tolist() == [2, 2, 2]
    y = vg.full((2,), float("inf"), device=backend)
    y.fill_(1.0)
    assert y.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("statement", ["x.add_(1.5)", "x.div_(2)", "x.exp_()", "x += 0.5", "x /= 2",
                                       "x.clamp_(min=0.5)"])
def test_inplace_float_results_into_integer_tensors_are_refused(statement):
    x = vg.zeros(3, dtype=vg.int64)
    with pytest.raises(DTypeError, match="result type Float can't be cast to the desired output type Long"):
        exec(statement)
    assert x.tolist() == [0, 0, 0]


def test_inplace_integer_ops_keep_the_dtype():
    x = vg.tensor([3, 4, 5], dtype=vg.int32)
    x *= 2
    x += vg.tensor([1, 1, 1])      # int64 operand, stored as int32
    x //= 2
    x %= 3
    assert x.dtype is vg.int32 and x.tolist() == [0, 1, 2]
    f = vg.ones(2)
    f.add_(vg.ones(2, dtype=vg.float64))
    assert f.dtype is vg.float32


# --- autograd through in-place writes into views (CopySlices) --------------------------------
def test_inplace_on_a_slice_records_history_on_the_base(backend):
    x = vg.ones(2, device=backend, requires_grad=True)
    out = vg.zeros(2, 2, device=backend)
    out[0].add_(x * 3)
    assert out.requires_grad and out.grad_fn.name() == "CopySlices"
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_repeated_augmented_assignments_into_rows(backend):
    w = vg.ones(2, 3, device=backend, requires_grad=True)
    d = vg.zeros(2, 3, device=backend)
    d[0] += w[0] * 2
    d[1] += w[1] * 2
    (d * d).sum().backward()
    assert w.grad.tolist() == [[8.0] * 3] * 2


def test_setitem_of_a_tensor_that_requires_grad():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    p = vg.zeros(2)
    p[0] = w[1] * 3
    assert p.requires_grad
    (p * vg.tensor([5.0, 7.0])).sum().backward()
    assert w.grad.tolist() == [0.0, 15.0]


def test_writes_through_views_of_views_and_stale_views():
    base = vg.zeros(4)
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    base.view(2, 2).T[0].mul_(0).add_(w)          # elements 0 and 2
    assert base.tolist() == [1.0, 0.0, 2.0, 0.0]
    (base * vg.arange(4.0)).sum().backward()
    assert w.grad.tolist() == [0.0, 2.0]
    d = vg.zeros(3)
    v = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    row = d[0:2]                                  # taken before d gets a history
    d[1:3] += v[1:3] * 2
    row.add_(v[0:2])
    assert d.tolist() == [1.0, 6.0, 6.0]
    (d * vg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert v.grad.tolist() == [1.0, 30.0, 200.0]


def test_copy_slices_gradcheck(backend):
    def build(x, w):
        out = x * 1
        out[0].mul_(w)
        out[1:, 1] += w[1:] ** 2
        out.T[2].add_(w)
        return out
    x = vg.tensor(np.linspace(0.5, 2.0, 9).reshape(3, 3), device=backend, requires_grad=True)
    w = vg.tensor([0.7, -1.2, 1.6], dtype=vg.float64, device=backend, requires_grad=True)
    assert vg.autograd.gradcheck(build, (x, w))
    assert vg.autograd.gradgradcheck(build, (x, w))


def test_copy_slices_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for T in (vg, torch):
        x = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = T.zeros(2, 3)
        out[0].add_(x[1] * 3)
        out[1, 1:] += x[0, :2].exp()
        out[:, 0] = x[:, 2] ** 2
        out[1, 2:].fill_(x[0, 0] * 7)
        out.T[1].copy_(x[1, :2].double())
        (out * out).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def test_version_counter_error_kept_where_pytorch_raises():
    a = vg.ones(3, requires_grad=True)
    y = a * 1
    z = y * y           # saves y
    y[0] = 5.0
    with pytest.raises(BackwardError, match="modified by an in-place operation"):
        z.sum().backward()
    leaf = vg.ones(3, requires_grad=True)
    with pytest.raises(BackwardError, match="view of a leaf tensor"):
        leaf[0].add_(1)
    with vg.no_grad():
        leaf[0].add_(1)   # optimizers update this way
    assert leaf.tolist() == [2.0, 1.0, 1.0]


def test_writing_into_an_expanded_view_is_refused():
    x = vg.ones(3, requires_grad=True)
    expanded = vg.zeros(1).expand(3)
    with pytest.raises(vg.ShapeError, match="same memory"):
        expanded.add_(x)
    with pytest.raises(vg.ShapeError, match="same memory"):
        expanded.add_(1)
    with pytest.raises(vg.ShapeError, match="same memory"):
        expanded[0] = 1


def test_bool_arithmetic_is_logical(backend):
    a = vg.tensor([True, False, False], device=backend)
    b = vg.tensor([True, True, False], device=backend)
    assert (a + b).tolist() == [True, True, False] and (a * b).tolist() == [True, False, False]
    assert vg.maximum(a, b).tolist() == [True, True, False] and vg.minimum(a, b).tolist() == [True, False, False]
    assert (a + True).tolist() == [True, True, True] and (a + 1).tolist() == [2, 1, 1]
    with pytest.raises(DTypeError, match="logical_xor"):
        a - b


def test_where_of_numbers_follows_pytorch(backend):
    condition = vg.tensor([True, False], device=backend)
    assert vg.where(condition, 1.0, 0.0).dtype is vg.float32
    assert vg.where(condition, 1, 0).dtype is vg.int64
    assert vg.where(condition, 2.5, 0).tolist() == [2.5, 0.0]


def test_a_view_whose_base_changed_gets_a_fresh_history():
    """PyTorch regenerates a view's grad_fn from its base (these values are PyTorch's)."""
    out = vg.zeros(3)
    view = out[0:2]                     # no history yet
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    out[1:] += w * 2                    # changes view[1]
    ((view * view).sum() + out.sum()).backward()
    assert w.grad.tolist() == [10.0, 2.0] and view.grad_fn.name() == "AsStridedBackward0"
    x = vg.ones(2, 3)
    row = x[0]
    v = vg.ones(3, requires_grad=True)
    x[0] = v * 5
    (row * 3).sum().backward()
    assert v.grad.tolist() == [15.0, 15.0, 15.0]


def test_index_add_and_scatter_add_take_the_tensors_dtype_only():
    x = vg.zeros(3, dtype=vg.int64)
    with pytest.raises(DTypeError, match=r"self \(Long\) and source \(Float\)"):
        x.index_add_(0, vg.tensor([0]), vg.tensor([1.5]))
    with pytest.raises(DTypeError, match=r"self \(Long\) and src \(Int\)"):
        x.scatter_add_(0, vg.tensor([0]), vg.tensor([1], dtype=vg.int32))
    x.index_add_(0, vg.tensor([0, 0]), vg.tensor([1, 2]))
    assert x.tolist() == [3, 0, 0]


def test_basic_index_writes_outside_autograd_match_the_general_path(backend):
    """x[basic key] = v is written straight into the array when nothing records; the values
    and errors are those of the general path."""
    x = vg.zeros(3, 4, dtype=vg.int32, device=backend)
    x[0] = 7
    x[1, 1:3] = vg.tensor([5, 6], device=backend)
    x[2, ::2] = vg.tensor([1.9, -1.9], device=backend)     # truncated
    x[..., -1] = 9
    assert x.tolist() == [[7, 7, 7, 9], [0, 5, 6, 9], [1, 0, -1, 9]]
    version = x._version
    x[None, 0, 0] = 1
    assert x._version == version + 1 and x[0, 0].item() == 1
    with pytest.raises(IndexError):
        x[5] = 1
    with pytest.raises(vg.ShapeError):
        x[0] = vg.ones(3, device=backend)


def test_writing_a_tensor_that_requires_grad_into_an_integer_tensor():
    w = vg.tensor([1.5], requires_grad=True)
    x = vg.zeros(3, dtype=vg.int64)
    x[0] = w[0]
    y = vg.zeros(3, dtype=vg.int64)
    y.copy_(w.expand(3))
    z = vg.zeros(2, 3, dtype=vg.int32)
    z[1].add_(w.detach().long())
    assert (x.tolist(), y.tolist()) == ([1, 0, 0], [1, 1, 1])
    assert not (x.requires_grad or y.requires_grad) and x.grad_fn is None and y.grad_fn is None


# --- matrix products do not promote, as in PyTorch ----------------------------------------------
def _matrix_products(T):
    f32, f64, i64, b = (T.ones(2, 2, dtype=d) for d in (T.float32, T.float64, T.int64, T.bool))
    return {
        "matmul": lambda: T.matmul(f32, f64), "@": lambda: f32 @ f64, "mm": lambda: T.mm(f64, f32),
        "bmm": lambda: T.bmm(f32[None], f64[None]), "mv": lambda: T.mv(f32, f64[0]),
        "dot": lambda: T.dot(f32[0], f64[0]), "int @ float": lambda: i64 @ f32,
        "einsum": lambda: T.einsum("ij,jk->ik", f32, f64), "tensordot": lambda: T.tensordot(f32, f64, dims=1),
        "bool @ bool": lambda: b @ b, "Linear(int)": lambda: T.nn.Linear(2, 3)(i64),
        "Linear(double)": lambda: T.nn.Linear(2, 3)(f64),
        "linear, double bias": lambda: T.nn.functional.linear(f32, f32, f64[0]),
        "int @ int": lambda: i64 @ i64, "outer": lambda: T.outer(f32[0], f64[0]),
    }


def _outcomes(T):
    outcomes = {}
    for name, product in _matrix_products(T).items():
        try:
            outcomes[name] = str(product().dtype).rsplit(".", 1)[-1]
        except (RuntimeError, TypeError, NotImplementedError) as error:
            outcomes[name] = error
    return outcomes


def test_matrix_products_of_mixed_dtypes_raise_naming_the_op_and_both_dtypes():
    outcomes = _outcomes(vg)
    assert (outcomes.pop("int @ int"), outcomes.pop("outer")) == ("int64", "float64")   # outer is a product *
    for name, error in outcomes.items():
        assert isinstance(error, DTypeError), name
    assert str(outcomes["@"]).startswith("matmul: expected input and other to have the same dtype, but got: "
                                         "float32 != float64")
    assert "input with .to(vizgrad.float32)" in str(outcomes["int @ float"])
    assert str(outcomes["mm"]).startswith("mm: expected input and mat2") and "float64 != float32" in str(outcomes["mm"])
    assert "bool" in str(outcomes["bool @ bool"])
    assert str(outcomes["Linear(int)"]) == "linear: input is int64 but weight is float32; convert one with .to()"
    assert str(outcomes["linear, double bias"]).startswith("linear: bias is float64 but weight is float32")


def test_matrix_products_raise_where_pytorch_raises():
    torch = pytest.importorskip("torch")
    ours, theirs = _outcomes(vg), _outcomes(torch)
    assert {name: isinstance(value, str) and value for name, value in ours.items()} == \
        {name: isinstance(value, str) and value for name, value in theirs.items()}
