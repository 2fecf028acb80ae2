"""The tutor in IPython and Jupyter: under the traceback of every vizgrad shape error, the
graph built so far with the failing op in red, the shapes aligned under the op's rule and
one fix (:mod:`vizgrad.tutor.shapes`). The traceback itself is shown as always, first.

It is on in every Jupyter kernel once vizgrad is imported (:func:`explain_in_kernel`), unless
the session has an exception handler of its own or ``VIZGRAD_EXPLAIN_ERRORS=0`` is set;
elsewhere (a terminal IPython) turn it on with ``vizgrad.tutor.explain_shape_errors()`` or
``%load_ext vizgrad.tutor``, and off anywhere with ``explain_shape_errors(False)``."""

import os

from ..errors import ShapeError
from .shapes import explain_error

#: Set to "0" to keep shape errors to their tracebacks in Jupyter kernels.
OPT_OUT = "VIZGRAD_EXPLAIN_ERRORS"


def explain_shape_errors(enable=True, shell=None):
    """Explain vizgrad shape errors under their tracebacks in this IPython session (off with
    ``enable=False``). Returns whether a session was found (False in a plain script)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    if enable:
        shell.set_custom_exc((ShapeError,), _show)
    elif ShapeError in getattr(shell, "custom_exceptions", ()):
        shell.set_custom_exc((), None)
    return True


def explain_in_kernel(shell=None):
    """What ``import vizgrad`` does: explain shape errors in a Jupyter kernel (not a terminal
    IPython, not a script), unless ``VIZGRAD_EXPLAIN_ERRORS=0`` or the session already sends
    exceptions to a handler of its own (IPython has one slot: vizgrad never takes it from
    another library). Returns whether it turned the explanations on."""
    if os.environ.get(OPT_OUT, "1").strip() == "0":
        return False
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None or tuple(getattr(shell, "custom_exceptions", ())):
        return False
    return explain_shape_errors(True, shell)


def _show(shell, etype, value, tb, tb_offset=None):
    """IPython's handler for a ShapeError: the usual traceback, then the explanation."""
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    explanation = explain_error(value)
    if explanation is not None:
        from IPython.display import display
        display(explanation)


def load_ipython_extension(shell):
    """``%load_ext vizgrad.tutor``."""
    explain_shape_errors(True, shell)


def unload_ipython_extension(shell):
    explain_shape_errors(False, shell)
