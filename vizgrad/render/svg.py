"""SVG through Graphviz's layout, with no system install needed: pygraphviz 2.x wheels
bundle Graphviz; the ``graphviz`` package with a ``dot`` program on PATH also works."""

import shutil


class LayoutUnavailable(ImportError):
    """Neither pygraphviz nor graphviz with a ``dot`` program can be used here."""


def _layout_with_pygraphviz(dot_source):
    import pygraphviz
    graph = pygraphviz.AGraph(string=dot_source)
    return graph.draw(format="svg", prog="dot").decode("utf-8")


def _layout_with_graphviz(dot_source):
    import graphviz
    if shutil.which("dot") is None:
        raise LayoutUnavailable("the graphviz package needs the 'dot' program on PATH")
    return graphviz.Source(dot_source).pipe(format="svg").decode("utf-8")


def layout_available():
    """Whether :func:`layout_svg` can run here (without laying anything out)."""
    try:
        import pygraphviz  # noqa: F401
        return True
    except ImportError:
        pass
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def layout_svg(dot_source):
    """SVG text for DOT source, using the first available Graphviz binding."""
    errors = []
    for attempt in (_layout_with_pygraphviz, _layout_with_graphviz):
        try:
            return attempt(dot_source)
        except (ImportError, LayoutUnavailable) as error:
            errors.append(str(error))
    raise LayoutUnavailable(
        "Graph.to_svg needs Graphviz's layout: pip install 'vizgrad[svg]' (pygraphviz, which bundles "
        "Graphviz), or install the graphviz package and the 'dot' program. Graph.to_html() needs "
        "neither: it lays out in the browser. (" + "; ".join(errors) + ")")


def to_svg(graph, **options):
    """The graph as SVG text (options as for :func:`vizgrad.render.dot.to_dot`)."""
    from .dot import to_dot
    return layout_svg(to_dot(graph, **options))

