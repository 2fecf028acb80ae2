"""Drawing graphs: DOT (pure Python), SVG (Graphviz) and self-contained HTML.

Rendering depends on the graph model, never the other way round: importing this package
installs :class:`GraphRenderer` as ``vizgrad.trace.Graph.renderer``, which ``Graph.to_dot``,
``to_svg``, ``to_html`` and the notebook representations call."""

from ..trace.graph import Graph


class GraphRenderer:
    """What :class:`vizgrad.trace.Graph`'s drawing methods do (each submodule imported when used)."""

    @staticmethod
    def to_dot(graph, **options):
        from .dot import to_dot
        return to_dot(graph, **options)

    @staticmethod
    def to_svg(graph, **options):
        from .svg import to_svg
        return to_svg(graph, **options)

    @staticmethod
    def to_html(graph, path=None, **options):
        from .html import to_html
        return to_html(graph, path, **options)

    @staticmethod
    def mimebundle(graph):
        from .notebook import mimebundle
        return mimebundle(graph)

    @staticmethod
    def repr_html(graph):
        from .notebook import static_outputs
        return static_outputs(graph).get("text/html")

    @staticmethod
    def repr_svg(graph):
        from .svg import LayoutUnavailable, to_svg
        try:
            return to_svg(graph)
        except LayoutUnavailable:
            return None


Graph.renderer = GraphRenderer
