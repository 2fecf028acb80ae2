"""Automatic differentiation: ``backward``, ``grad``, custom ``Function``s, grad modes,
anomaly detection, gradient checks and the functional API (``jacobian``, ``hessian``, ...)."""

import warnings

from ..errors import ArgumentTypeError, BackwardError  # noqa: F401  (BackwardError: vizgrad.autograd.BackwardError)
from . import function as _function
from .anomaly import detect_anomaly, is_anomaly_enabled
from .api import backward, grad
from .function import AccumulateGrad, Function, Node
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .hooks import RemovableHandle


class _VariableType(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, _function.Tensor)


class Variable(metaclass=_VariableType):
    """PyTorch's legacy ``Variable(tensor, requires_grad=False)``: since tensors carry autograd
    themselves, it returns a tensor sharing ``data``'s memory (cut from its history) that
    requires grad if asked; every Tensor is an instance of ``Variable``.

    Example::

        x = vizgrad.autograd.Variable(vizgrad.ones(2), requires_grad=True)   # a leaf tensor
    """

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, _function.Tensor):
            raise ArgumentTypeError(f"Variable: data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed (Variable.volatile is always False): use `with vizgrad.no_grad():` "
                          "instead", UserWarning, stacklevel=2)
        result = data.detach()
        if requires_grad:
            result.requires_grad_(True)
        return result


from . import functional  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

__all__ = ["AccumulateGrad", "Function", "GradcheckError", "Node", "RemovableHandle", "backward",
           "detect_anomaly", "enable_grad", "functional", "grad", "gradcheck", "gradgradcheck",
           "is_anomaly_enabled", "is_grad_enabled", "no_grad", "set_grad_enabled", "Variable"]
