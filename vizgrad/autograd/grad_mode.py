"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` and
anomaly detection state.

The state is thread-local: a ``no_grad`` block in one thread does not affect another.
"""

import functools
import threading


class _State(threading.local):
    grad_enabled = True
    inference = False
    anomaly_enabled = False
    anomaly_check_nan = True
    scope = None      # the module call (or recurrent step) ops made now belong to: autograd/scopes.py


state = _State()


def is_grad_enabled():
    """Whether ops record graphs in this thread."""
    return state.grad_enabled


class _GradMode:
    """A context manager that is also a decorator."""

    enabled = True

    def __enter__(self):
        self._previous = state.grad_enabled
        state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        state.grad_enabled = self._previous
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return function(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Disable graph recording inside the block or the decorated function.

    Example::

        with vizgrad.no_grad():
            w -= 0.1 * w.grad      # an update that must not be recorded
    """

    enabled = False


class inference_mode(_GradMode):
    """PyTorch's mode for running a model without training it: nothing is recorded, as
    under :class:`no_grad` (PyTorch also makes the tensors cheaper; here the two are the
    same). ``inference_mode(False)`` changes nothing. A context manager and a decorator.

    Example::

        with vizgrad.inference_mode():
            prediction = model(x)          # no graph
    """

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._previous = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._previous
        return False

    def __call__(self, function):
        mode = self.mode

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return function(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled():
    """Whether an :class:`inference_mode` block is running in this thread."""
    return state.inference


class enable_grad(_GradMode):
    """Enable graph recording inside the block, also within ``no_grad``."""

    enabled = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` switches recording off now; as a context manager it
    restores the previous mode on exit."""

    def __init__(self, mode):
        self._previous = state.grad_enabled
        self.enabled = bool(mode)
        state.grad_enabled = self.enabled

    def __enter__(self):
        pass

    def __call__(self, function):
        state.grad_enabled = self._previous

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self.enabled):
                return function(*args, **kwargs)
        return wrapper
