"""The tutor in IPython and Jupyter: under the traceback of every vizgrad shape error, the
graph built so far with the failing op in red, the shapes aligned under the op's rule and
one fix (:mod:`vizgrad.tutor.shapes`). The traceback itself is shown as always, first.

Turn it on with ``vizgrad.tutor.explain_shape_errors()`` or ``%load_ext vizgrad.tutor``."""

from ..errors import ShapeError
from .shapes import explain_error


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
