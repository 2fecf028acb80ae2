"""Graphs in notebooks: the output that :class:`vizgrad.Graph` objects and
:func:`vizgrad.show` emit.

One output carries several representations, richest first; each front end draws the best
it can:

- ``application/vnd.vizgrad.graph+json``: the Graph JSON (``graph.schema.json``), with the
  DOT layout source in the output's metadata under the same key (``{"dot": ...,
  "vizgrad": version}``). vizgrad's JupyterLab extension draws it interactively (pan, zoom,
  node details, backward replay) from the saved notebook, with no kernel running.
- ``text/html``: for front ends without the extension (nbconvert's HTML export, Notebook 7,
  VS Code, Colab): the drawing below with a small inline script that pans, zooms and shows
  a node's details (:mod:`vizgrad.render.inline`), self-contained and isolated.
- ``image/svg+xml``: the collapsed model drawn by Graphviz in the kernel (bounded: at most
  ``inline.MAX_ITEMS`` items, at module level when the graph is large), for viewers
  without scripts (GitHub). Where Graphviz cannot run, the summary picture drawn without a
  layout engine (:func:`vizgrad.render.svg.summary_svg`), and no ``text/html``.
- ``text/plain``: the graph's repr.
"""

import os
import sys
import tempfile
from pathlib import Path

from ..errors import ArgumentTypeError
from ..trace.graph import gc_paused

MIME_TYPE = "application/vnd.vizgrad.graph+json"


@gc_paused()
def mimebundle(graph, **dot_options):
    """``(data, metadata)`` for IPython's display of ``graph``; ``dot_options`` go to
    :func:`vizgrad.render.dot.to_dot` (``collapse``, ``max_nodes``, ``rankdir``, ...)."""
    from .._version import __version__
    from .dot import to_dot

    dot = to_dot(graph, **dot_options)
    data = {MIME_TYPE: graph.to_dict(), **static_outputs(graph, **dot_options), "text/plain": repr(graph)}
    return data, {MIME_TYPE: {"dot": dot, "vizgrad": __version__}}


def static_outputs(graph, title=None, **dot_options):
    """``{"text/html": ..., "image/svg+xml": ...}``: the output for front ends without the
    extension, both from one bounded Graphviz layout (see :mod:`vizgrad.render.inline`); only
    the summary picture where Graphviz or the inline script is missing."""
    from .html import BundleMissing
    from .inline import StaticDrawing
    from .svg import LayoutUnavailable, summary_svg
    title = title or "vizgrad graph"
    try:
        drawing = StaticDrawing(graph, **dot_options)
    except LayoutUnavailable:
        return {"image/svg+xml": summary_svg(graph, title=title)}
    try:
        return {"text/html": drawing.html(title=title), "image/svg+xml": drawing.svg}
    except BundleMissing:
        return {"image/svg+xml": drawing.svg}


def as_graph(obj, names=None):
    """The :class:`vizgrad.Graph` that ``obj`` stands for: a Graph, a tensor (its
    autograd history, with the backward pass that ran; ``names``, e.g. the caller's
    ``locals()``, name its nodes and type its modules), a ``vizgrad.trace()`` block or a
    Recorder (what it recorded)."""
    from ..tensor import Tensor
    from ..trace import Graph, Recorder, graph, trace

    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, Tensor):
        return graph(obj, names=names)
    if isinstance(obj, trace):
        return obj.graph
    if isinstance(obj, Recorder):
        return obj.result()
    raise ArgumentTypeError(f"show: draws a Graph, a Tensor, a vizgrad.trace() block or a Recorder, "
                            f"not {type(obj).__name__}")


DOT_OPTIONS = ("collapse", "max_nodes", "show_grads", "rankdir", "title", "collapse_above")


def show(obj, **dot_options):
    """Show a computation graph.

    In Jupyter, display it as a graph output: interactive in JupyterLab with vizgrad's
    extension, even after the notebook is saved and reopened with no kernel; elsewhere
    (nbconvert's HTML, Notebook 7, VS Code, Colab) a drawing of the collapsed model that
    pans, zooms and shows a node's details, and that drawing as SVG for viewers without
    scripts. Outside a notebook, write it as a self-contained HTML page and
    open that in the web browser.

    Args:
        obj: a :class:`vizgrad.Graph`, a tensor (its autograd history and nothing else, as
            :func:`vizgrad.graph`, with the backward pass that ran, its nodes named after the
            caller's variables), a ``vizgrad.trace()`` block or a Recorder.
        dot_options: passed to :func:`vizgrad.render.dot.to_dot` (``collapse``,
            ``max_nodes``, ``show_grads``, ``rankdir``, ``title``, ``collapse_above``) for the DOT kept in the output's metadata and
            for the page written outside notebooks; the notebook's interactive view lays the
            graph out itself (grouped by module above 40 nodes, opened by clicking).

    Returns:
        None in a notebook; elsewhere the path of the page written.

    Example::

        x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
        loss = (x * x).sum()
        loss.backward()
        vizgrad.show(loss)
    """
    from .dot import check_options
    unknown = sorted(set(dot_options) - set(DOT_OPTIONS))
    if unknown:
        raise ArgumentTypeError(f"show: unexpected option {unknown[0]!r}; the options are {', '.join(DOT_OPTIONS)}")
    check_options("show", **dot_options)
    names = sys._getframe(1).f_locals
    if _in_notebook():
        display_graph(obj, names=names, **dot_options)
        return None
    graph = as_graph(obj, names=names)
    import webbrowser
    from .html import to_html
    handle, path = tempfile.mkstemp(prefix="vizgrad-graph-", suffix=".html")
    os.close(handle)
    to_html(graph, path, **dot_options)
    webbrowser.open(Path(path).as_uri())
    return path


def display_graph(obj, display=None, names=None, **dot_options):
    """What :func:`show` does in a notebook: ``obj``'s graph output (see :func:`as_graph` and
    :func:`mimebundle`) handed to ``display`` (IPython's by default: ``display(data,
    metadata=..., raw=True)``).

    The cyclic garbage collector stays paused until the output is sent and freed: the tens of
    thousands of objects of a big graph die by reference counting before any collection walks
    them (for a graph of 5,000 nodes, each walk would cost about 10 ms)."""
    if display is None:
        from IPython.display import display
    with gc_paused():
        data, metadata = mimebundle(as_graph(obj, names=names), **dot_options)
        display(data, metadata=metadata, raw=True)
        del data, metadata         # freed now, while the collector is paused


def _in_notebook():
    """True inside a Jupyter kernel (not a terminal IPython, not a script)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return getattr(shell, "kernel", None) is not None
