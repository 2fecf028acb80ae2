"""Every registered op, tested from its registry entry alone.

For each entry of :data:`vizgrad.ops.registry.OPS` and each of its samples, on every
device (see ``conftest.py``):

* ``test_value``: the result matches the NumPy ``reference`` (values, shapes, dtypes; both
  through the op's ``gauge`` where it has one),
  stays an array of the device's own library (on ``strict`` this proves the op used
  only the portable Array API), leaves its inputs untouched, and carries
  ``requires_grad`` only where a gradient can exist;
* ``test_gradcheck``: backward matches central finite differences (differentiable ops;
  through the op's ``gradcheck_wrapper`` where it has one);
* ``test_gradgradcheck``: so do second derivatives (smooth ops);
* ``test_float32``: float32 inputs give float32 outputs (Python scalars do not widen a
  tensor's dtype, as in PyTorch) with values close to the reference.

An op added with ``@register`` is picked up here with nothing else to write.
"""

import zlib

import numpy as np
import pytest

import vizgrad
from vizgrad.autograd import gradcheck, gradgradcheck
from vizgrad.backends import backend_for_device
from vizgrad.ops.registry import OPS
from vizgrad.tensor import Tensor


# --- the cases: one per (op, sample), built from the registry at collection -----------

class Case:
    """One sample of one op, or the reason there is none (no samples, a sampler that failed)."""

    def __init__(self, info, sample=None, problem=None):
        self.info = info
        self.sample = sample
        self.problem = problem


def _describe(value):
    """A short readable id for one sample argument."""
    if isinstance(value, np.ndarray):
        shape = str(tuple(value.shape))
        return shape if value.dtype == np.float64 else f"{value.dtype}{shape}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_describe(item) for item in value) + "]"
    return repr(value)


def _sample_id(sample):
    if sample.name:
        return sample.name
    text = "x".join(_describe(arg) for arg in sample.args)
    if sample.kwargs:
        text += " " + " ".join(f"{key}={_describe(value)}" for key, value in sample.kwargs.items())
    return text


def _cases(keep=lambda info: True):
    """pytest params for every sample of every op that ``keep`` accepts, with ids like
    ``mul-(3, 4)x(4,)``. The generator seed comes from the op's name, so values (and
    ids) are the same in every process, as pytest-xdist requires."""
    params = []
    for name in sorted(OPS):
        info = OPS[name]
        if not keep(info):
            continue
        if info.samples is None:
            params.append(pytest.param(Case(info), id=f"{name}-no samples",
                                       marks=pytest.mark.skip(reason=f"{name} is registered without samples")))
            continue
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        try:
            samples = list(info.samples(rng))
        except Exception as error:  # reported by the test itself, not as a collection error
            params.append(pytest.param(Case(info, problem=error), id=f"{name}-samples"))
            continue
        seen = set()
        for sample in samples:
            case_id = f"{name}-{_sample_id(sample)}"
            unique, count = case_id, 1
            while unique in seen:
                count += 1
                unique = f"{case_id} #{count}"
            seen.add(unique)
            params.append(pytest.param(Case(info, sample), id=unique))
    return params


ALL = _cases()
DIFFERENTIABLE = _cases(lambda info: info.differentiable)
SMOOTH = _cases(lambda info: info.differentiable and info.smooth)


def _prepare(case, backend):
    info = case.info
    if case.problem is not None:
        raise AssertionError(f"{info.name}: its samples function raised "
                             f"{type(case.problem).__name__}: {case.problem}") from case.problem
    if backend == "strict" and not info.strict:
        pytest.skip(f"{info.name} is registered with strict=False: it needs more than the portable Array API")
    return info, case.sample


# --- walking nested call structures and results ---------------------------------------

def _map(value, is_leaf, function):
    """``value`` with each leaf replaced by ``function(leaf)``, depth first; lists,
    tuples (namedtuples too) and dicts keep their structure."""
    if is_leaf(value):
        return function(value)
    if isinstance(value, dict):
        return {key: _map(item, is_leaf, function) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_map(item, is_leaf, function) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _leaves(value, is_leaf):
    found = []
    _map(value, is_leaf, found.append)
    return found


def _is_tensor(value):
    return isinstance(value, Tensor)


def _is_array(value):
    return isinstance(value, np.ndarray)


def _floating_arrays(sample):
    return [a for a in _leaves((sample.args, sample.kwargs), _is_array) if a.dtype.kind == "f"]


def _flatten(result):
    """The tensors (or arrays) of an op's result, in order: a single one, or any nesting
    of tuples, lists and namedtuple-like objects."""
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in _flatten(item)]
    fields = getattr(result, "_fields", None)
    if fields is not None and not isinstance(result, Tensor):
        return [leaf for name in fields for leaf in _flatten(getattr(result, name))]
    return [result]


def _host(tensor):
    return np.array(tensor._backend().to_numpy(tensor._array))


def _call(info, sample, backend, as_tensors, float_dtype="float64"):
    """Run the op on tensors made from ``sample``; returns (result, args, kwargs)."""
    args = as_tensors(sample.args, backend, float_dtype)
    kwargs = as_tensors(sample.kwargs, backend, float_dtype)
    return info.function(*args, **kwargs), args, kwargs


def _outputs_and_expected(info, sample, result, float_dtype="float64"):
    outputs = _flatten(result)
    for position, output in enumerate(outputs):
        assert isinstance(output, Tensor), (
            f"{info.name} returned a {type(output).__name__} as output {position}; ops return Tensors")
    if info.reference is None:
        return outputs, None
    args, kwargs = _map((sample.args, sample.kwargs), _is_array,
                        lambda array: array.astype(float_dtype) if array.dtype.kind == "f" else array)
    expected = [np.asarray(value) for value in _flatten(info.reference(*args, **kwargs))]
    assert len(outputs) == len(expected), (
        f"{info.name} returned {len(outputs)} output(s) but its reference returned {len(expected)}")
    return outputs, expected


def _compared(info, outputs, expected):
    """``(actual, expected)``: the outputs on the host and the reference's, both through the
    op's ``gauge`` when it has one (singular vectors' signs are each library's choice)."""
    actual = [_host(output) for output in outputs]
    if info.gauge is None or expected is None:
        return actual, expected
    return [np.asarray(a) for a in info.gauge(actual)], [np.asarray(e) for e in info.gauge(expected)]


def _assert_values(info, position, actual, expected, atol, rtol):
    where = f"{info.name} output {position}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape}, reference {expected.shape}"
    if expected.dtype == bool or actual.dtype == bool:
        np.testing.assert_array_equal(actual, expected, err_msg=where)
    else:
        np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True, err_msg=where)


# --- the tests ------------------------------------------------------------------------

@pytest.mark.parametrize("case", ALL)
def test_value(case, backend, as_tensors):
    info, sample = _prepare(case, backend)
    result, args, kwargs = _call(info, sample, backend, as_tensors)
    outputs, expected = _outputs_and_expected(info, sample, result)
    array_type = backend_for_device(backend).array_type
    inputs = _leaves((args, kwargs), _is_tensor)
    inputs_need_grad = any(t.requires_grad for t in inputs)
    for position, output in enumerate(outputs):
        where = f"{info.name} output {position}"
        # on "strict" NumPy would accept the arrays silently: this catches any detour through it
        assert type(output._array) is array_type, (
            f"{where} holds a {type(output._array).__module__}.{type(output._array).__name__}, "
            f"not an array of the {backend} backend")
        if expected is not None and expected[position].dtype.name in ("float64", "bool", "int64"):
            assert output.dtype.name == expected[position].dtype.name, (
                f"{where}: dtype {output.dtype.name}, reference {expected[position].dtype.name}")
        if position in info.constant_outputs:
            assert not output.requires_grad, f"{where} requires grad though {info.name} gives it none"
        elif output.requires_grad:
            assert output.is_floating_point(), f"{where} is {output.dtype.name} but requires grad"
            assert info.differentiable, f"{where} requires grad though {info.name} is not differentiable"
        else:
            assert not (info.differentiable and inputs_need_grad and output.is_floating_point()), (
                f"{where} does not require grad although {info.name} is differentiable and its inputs do")
    if expected is not None:
        actual, expected = _compared(info, outputs, expected)
        for position, (value, reference) in enumerate(zip(actual, expected)):
            _assert_values(info, position, value, reference, info.atol, info.rtol)
    for tensor, original in zip(inputs, _leaves((sample.args, sample.kwargs), _is_array)):
        np.testing.assert_array_equal(_host(tensor), original, err_msg=f"{info.name} changed an input")


def _checkable(info, sample, backend, as_tensors):
    """(function of the flat tensors, the tensors) for gradcheck, or a skip when no
    floating input requires grad."""
    leaves = []
    args = as_tensors(sample.args, backend, leaves=leaves)
    kwargs = as_tensors(sample.kwargs, backend, leaves=leaves)
    if not any(t.requires_grad for t in leaves):
        pytest.skip(f"{info.name}: this sample has no floating input to differentiate")

    def function(*tensors):
        replacements = iter(tensors)
        call_args, call_kwargs = _map((args, kwargs), _is_tensor, lambda _: next(replacements))
        if info.gradcheck_wrapper is not None:
            return info.gradcheck_wrapper(info.function, *call_args, **call_kwargs)
        return info.function(*call_args, **call_kwargs)
    return function, tuple(leaves)


@pytest.mark.parametrize("case", DIFFERENTIABLE)
def test_gradcheck(case, backend, as_tensors):
    info, sample = _prepare(case, backend)
    function, inputs = _checkable(info, sample, backend, as_tensors)
    assert gradcheck(function, inputs)


# Second derivatives cost (inputs + outputs) double backwards per element, so larger
# samples (convolutions, pooling) are checked along random directions instead (fast_mode).
FULL_GRADGRADCHECK_UP_TO = 40  # floating input elements


@pytest.mark.parametrize("case", SMOOTH)
def test_gradgradcheck(case, backend, as_tensors):
    info, sample = _prepare(case, backend)
    function, inputs = _checkable(info, sample, backend, as_tensors)
    size = sum(t.numel() for t in inputs if t.requires_grad)
    assert gradgradcheck(function, inputs, fast_mode=size > FULL_GRADGRADCHECK_UP_TO)


@pytest.mark.parametrize("case", ALL)
def test_float32(case, backend, as_tensors):
    """float32 in, float32 out: Python scalars do not widen the dtype (PyTorch's promotion)."""
    info, sample = _prepare(case, backend)
    if not _floating_arrays(sample):
        pytest.skip(f"{info.name}: this sample has no floating input")
    result, _, _ = _call(info, sample, backend, as_tensors, "float32")
    outputs, expected = _outputs_and_expected(info, sample, result, "float32")
    for position, output in enumerate(outputs):
        if output.is_floating_point():
            assert output.dtype is vizgrad.float32, (
                f"{info.name} output {position} is {output.dtype.name} for float32 inputs")
    if expected is not None:
        actual, expected = _compared(info, outputs, expected)
        for position, (value, reference) in enumerate(zip(actual, expected)):
            _assert_values(info, position, value, reference, max(info.atol, 1e-5), max(info.rtol, 1e-4))
