"""``vizgrad.jit``: TorchScript's entry points as PyTorch runs them with the JIT disabled
(``PYTORCH_JIT=0``): ``script`` and ``trace`` return the function or module they are given,
which then runs as ordinary Python (graphs and all). Saving or loading TorchScript files is
not supported and says so.

Example::

    model = vizgrad.jit.script(Net())       # the same Net, run eagerly
"""

from .errors import UnsupportedError


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself, as ``torch.jit.script`` returns it under ``PYTORCH_JIT=0``."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """``func`` itself, as ``torch.jit.trace`` returns it under ``PYTORCH_JIT=0`` (the example
    inputs are not run)."""
    return func


def trace_module(mod, inputs=None, *args, **kwargs):
    """``mod`` itself, as :func:`trace`."""
    return mod


def ignore(drop=False, **kwargs):
    """The decorator ``@torch.jit.ignore`` (with or without arguments): the function, unchanged."""
    if callable(drop):
        return drop
    return lambda function: function


unused = export = ignore


def is_scripting():
    """False: code never runs as TorchScript in vizgrad."""
    return False


def is_tracing():
    """False: code never runs under the TorchScript tracer in vizgrad."""
    return False


def save(m, f, _extra_files=None):
    raise UnsupportedError("jit.save: vizgrad has no TorchScript, so it cannot write a TorchScript file; save the "
                           "state dict with vizgrad.save(model.state_dict(), path)")


def load(f, map_location=None, _extra_files=None):
    raise UnsupportedError("jit.load: vizgrad has no TorchScript, so it cannot read a TorchScript file; load a "
                           "state dict with vizgrad.load(path) into the model's class")
