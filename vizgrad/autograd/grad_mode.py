"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` and
anomaly detection state.

The state is thread-local: a ``no_grad`` block in one thread does not affect another.
"""

import functools
import inspect
import threading

from ..errors import ArgumentTypeError


class _State(threading.local):
    grad_enabled = True   # whether ops record graphs (read by every op): grad mode on, inference mode off
    grad_mode = True      # the grad mode blocks set; enable_grad inside inference_mode sets it, recording nothing
    inference = False
    anomaly_enabled = False
    anomaly_check_nan = True
    scope = None      # the module call (or recurrent step) ops made now belong to: autograd/scopes.py


state = _State()


def is_grad_enabled():
    """Whether grad mode is on in this thread (as PyTorch: also inside ``enable_grad`` within
    ``inference_mode``, where ops still record nothing)."""
    return state.grad_enabled or (state.inference and state.grad_mode)


def _modes():
    return state.grad_mode, state.inference, state.grad_enabled


def _set_modes(grad_mode, inference, recording=None):
    state.grad_mode, state.inference = grad_mode, inference
    state.grad_enabled = grad_mode and not inference if recording is None else recording


def _decorated(function, make_mode):
    """``function`` run under a fresh ``make_mode()``; a generator function runs each of its
    steps under it (and the caller's mode in between), as PyTorch's decorators do."""
    if not inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with make_mode():
                return function(*args, **kwargs)
        return wrapper

    @functools.wraps(function)
    def generator_wrapper(*args, **kwargs):
        generator = function(*args, **kwargs)
        sent, thrown = None, None
        while True:
            try:
                with make_mode():
                    value = generator.throw(thrown) if thrown is not None else generator.send(sent)
            except StopIteration as stop:
                return stop.value
            sent, thrown = None, None
            try:
                sent = yield value
            except GeneratorExit:
                with make_mode():
                    generator.close()
                raise
            except BaseException as error:      # thrown into the wrapper: passed on to the generator
                thrown = error
    return generator_wrapper


def _check_bool(name, mode):
    if not isinstance(mode, bool):
        raise ArgumentTypeError(f"{name}: mode must be a bool, got {type(mode).__name__} ({mode!r})")
    return mode


class _GradMode:
    """A context manager that is also a decorator."""

    enabled = True

    def __enter__(self):
        self._previous = _modes()
        _set_modes(self.enabled, state.inference)

    def __exit__(self, *exc):
        _set_modes(*self._previous)
        return False

    def __call__(self, function):
        return _decorated(function, self.__class__)


class no_grad(_GradMode):
    """Disable graph recording inside the block or the decorated function (each step of a
    decorated generator).

    Example::

        with vizgrad.no_grad():
            w -= 0.1 * w.grad      # an update that must not be recorded
    """

    enabled = False


class inference_mode(_GradMode):
    """PyTorch's mode for running a model without training it: nothing is recorded, as
    under :class:`no_grad`, even inside ``enable_grad`` (PyTorch also makes the tensors
    cheaper; here the two are the same). ``inference_mode(False)`` turns inference mode off
    and grad mode on, as in PyTorch. A context manager and a decorator (``@inference_mode``
    with or without parentheses).

    Example::

        with vizgrad.inference_mode():
            prediction = model(x)          # no graph
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):      # @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = _check_bool("inference_mode", mode)

    def __enter__(self):
        self._previous = _modes()
        _set_modes(not self.mode, self.mode)

    def __call__(self, function):
        return _decorated(function, lambda: inference_mode(self.mode))


def is_inference_mode_enabled():
    """Whether an :class:`inference_mode` block is running in this thread."""
    return state.inference


class enable_grad(_GradMode):
    """Enable graph recording inside the block, also within ``no_grad`` (within
    ``inference_mode`` grad mode turns on but nothing is recorded, as in PyTorch)."""

    enabled = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` switches recording off now; as a context manager it
    restores the previous mode on exit. ``mode`` must be a bool, as PyTorch's."""

    def __init__(self, mode):
        self._previous = _modes()
        self.enabled = _check_bool("set_grad_enabled", mode)
        _set_modes(self.enabled, state.inference)

    def __enter__(self):
        pass

    def __call__(self, function):
        _set_modes(*self._previous)
        enabled = self.enabled
        return _decorated(function, lambda: set_grad_enabled(enabled))
