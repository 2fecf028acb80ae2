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
        gradcheck_wrapper: ``wrapper(function, *args, **kwargs)``, what gradcheck and
            gradgradcheck differentiate instead of ``function(*args, **kwargs)``: an input made
            symmetric for ops that read one triangle (cholesky, eigh), or outputs made
            gauge-invariant (the signs of singular vectors), as PyTorch's own tests do.
        gauge: ``gauge(outputs)`` maps the NumPy arrays of the op's outputs (and of the
            reference's) to what the value test compares: ``|U|`` for singular vectors, whose
            signs each library chooses its own way.
        constant_outputs: positions of floating outputs that never carry a gradient (as in
            PyTorch: the singular values ``linalg.lstsq`` reports).
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
    gradcheck_wrapper: Optional[Callable] = None
    gauge: Optional[Callable] = None
    constant_outputs: tuple = ()


OPS = {}
ALIASES = {}  # alias -> public name, e.g. "subtract" -> "sub"


def register(reference=None, samples=None, *, smooth=True, differentiable=True, method=True,
             aliases=(), strict=True, atol=1e-6, rtol=1e-6, name=None, gradcheck_wrapper=None, gauge=None,
             constant_outputs=()):
    """Register a public op (see the module docstring). ``name`` may be dotted
    (``"linalg.svd"``): such an op lives in its namespace (``vizgrad.linalg.svd``), not at the
    top level, and is bound to no Tensor method."""
    def decorate(function):
        op_name = name or function.__name__
        OPS[op_name] = OpInfo(op_name, function, reference, samples, smooth, differentiable,
                              strict, atol, rtol, gradcheck_wrapper=gradcheck_wrapper, gauge=gauge,
                              constant_outputs=tuple(constant_outputs))
        public(op_name)(function)
        if method and "." not in op_name:
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
