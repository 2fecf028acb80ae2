"""The registry of public ops.

Decorating a public op with :func:`register` does four things: binds it as a
Tensor method (``x.exp()``), records it under a stable name for the event layer,
marks it public so that errors reworded beneath it name it (:func:`vizgrad.errors.public`),
and describes how to test it. ``tests/test_ops.py`` walks :data:`OPS`: every
entry gets a value test against its NumPy ``reference``, gradcheck, and (when
``smooth``) gradgradcheck, on every backend, for every :class:`Sample`.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..errors import public


@dataclass(frozen=True)
class Sample:
    """One call of an op for the tests: positional ``args`` (NumPy arrays become
    tensors; floating ones require grad) and keyword ``kwargs``."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass(frozen=True)
class OpInfo:
    """How to test one public op.

    Attributes:
        name: the public name (``vizgrad.<name>`` and, if ``method``, ``Tensor.<name>``).
        function: the public function.
        reference: a NumPy function taking the same arguments (arrays in place of tensors).
        samples: ``samples(rng)`` yields :class:`Sample` objects.
        smooth: whether second derivatives exist on the samples (gradgradcheck runs).
        differentiable: False for comparisons and the like: only values are tested.
        strict: False when the op cannot run on the portable Array API backend.
        atol, rtol: tolerances of the value test.
    """

    name: str
    function: Callable
    reference: Optional[Callable]
    samples: Optional[Callable]
    smooth: bool = True
    differentiable: bool = True
    strict: bool = True
    atol: float = 1e-6
    rtol: float = 1e-6
    extra: Any = None


OPS = {}
ALIASES = {}  # alias -> public name, e.g. "subtract" -> "sub"


def register(reference=None, samples=None, *, smooth=True, differentiable=True, method=True,
             aliases=(), strict=True, atol=1e-6, rtol=1e-6, name=None):
    """Register a public op (see the module docstring)."""
    def decorate(function):
        op_name = name or function.__name__
        OPS[op_name] = OpInfo(op_name, function, reference, samples, smooth, differentiable,
                              strict, atol, rtol)
        public(op_name)(function)
        if method:
            bind_method(op_name, function)
        for alias in aliases:
            ALIASES[alias] = op_name
            if method:
                bind_method(alias, function)
        return function
    return decorate


def bind_method(name, function):
    from ..tensor import Tensor
    setattr(Tensor, name, function)
