"""Small assertions for checkers: each returns the checked value, or raises a
:class:`~vizgrad.lessons.framework.Mistake` that says what was expected in the
learner's terms (``"your make_w()"``, ``"the gradient for b"``)."""

import numpy as np

from ..autograd import Function
from ..tensor import Tensor
from .framework import Mistake
from .gradients import as_numpy, diagnose


def not_none(value, what):
    if value is None:
        raise Mistake(f"{_cap(what)} returned None.", "Did you forget the `return` statement?", kind="returned-none")
    return value


def tensor(value, what):
    """``value`` as a Tensor, or a Mistake naming what it is instead."""
    not_none(value, what)
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        raise Mistake(f"{_cap(what)} returned a NumPy array, not a vizgrad Tensor.",
                      "Stay with vizgrad operations (or wrap with `vg.tensor(...)`): NumPy arrays carry no "
                      "gradients.", kind="not-a-tensor")
    raise Mistake(f"{_cap(what)} returned a {type(value).__name__}, not a vizgrad Tensor.",
                  "Create tensors with `vg.tensor(...)`.", kind="not-a-tensor")


def number(value, what):
    """A Python float from a number, a NumPy scalar or a one-element Tensor."""
    not_none(value, what)
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise Mistake(f"{_cap(what)} returned a tensor of shape {tuple(value.shape)}; expected one number.",
                          "Use `.item()` to get the number out of a one-element tensor.", kind="shape")
        return float(value.detach().numpy().reshape(-1)[0])
    if isinstance(value, (bool, str)) or not np.isscalar(value) and not isinstance(value, np.ndarray):
        raise Mistake(f"{_cap(what)} returned {type(value).__name__} {value!r}; expected a number.", kind="type")
    array = np.asarray(value, dtype=np.float64)
    if array.size != 1:
        raise Mistake(f"{_cap(what)} returned {array.size} numbers; expected one.", kind="shape")
    return float(array.reshape(-1)[0])


def shape(value, expected, what, hint=None):
    got = tuple(value.shape)
    if got != tuple(expected):
        raise Mistake(f"{_cap(what)} has shape {got}; expected {tuple(expected)}.", hint, kind="shape")
    return value


def close_values(got, expected, what, candidates=()):
    """Compare arrays; on a mismatch raise the :func:`diagnose`\\ d Mistake."""
    problem = diagnose(as_numpy(got), as_numpy(expected), what, candidates=candidates, what="value")
    if problem is not None:
        raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)


def function_class(value, name="your class"):
    """``value`` must be a :class:`vizgrad.autograd.Function` subclass (not an instance)."""
    not_none(value, name)
    if isinstance(value, Function):
        raise Mistake(f"You passed an instance of {type(value).__name__}; pass the class itself.",
                      f"`check.exercise_...({type(value).__name__})`, without parentheses.", kind="usage")
    if not (isinstance(value, type) and issubclass(value, Function)):
        raise Mistake(f"Expected a class that subclasses `vg.autograd.Function`, got {type(value).__name__}.",
                      "Start with `class MyOp(vg.autograd.Function):` and give it static `forward` and "
                      "`backward` methods.", kind="usage")
    return value


def _cap(text):
    return text[:1].upper() + text[1:]
