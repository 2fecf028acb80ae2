"""The tutor: finds the bug in a learner's backward pass and explains it on the graph.

* :func:`compare` checks hand-computed gradients of a loss, tensor by tensor in backward
  order, and names the first wrong one and its mistake (:data:`KINDS`).
* :func:`check_function` does the same for a custom :class:`vizgrad.autograd.Function`,
  naming the input whose gradient is wrong.
* :func:`explain_grad` says why a tensor's ``.grad`` is what it is (:data:`REASONS`).
* :func:`explain_error` explains a shape error on the graph built so far (the shapes aligned
  under the op's rule, one fix); :func:`explain_shape_errors` (or ``%load_ext vizgrad.tutor``)
  shows that under every shape error's traceback in IPython and Jupyter.

``docs/tutor.md`` lists every code with an example.
"""

from .compare import compare
from .diagnose import KINDS, Finding, diagnose
from .explain import REASONS, Explanation, explain_grad
from .function import check_function
from .notebook import explain_shape_errors, load_ipython_extension, unload_ipython_extension
from .shapes import ShapeExplanation, explain_error
from .report import Report, Row

__all__ = ["KINDS", "REASONS", "Explanation", "Finding", "Report", "Row", "ShapeExplanation", "check_function",
           "compare", "diagnose", "explain_error", "explain_grad", "explain_shape_errors", "load_ipython_extension",
           "unload_ipython_extension"]
