"""Graphviz DOT and SVG output: parsed by Graphviz itself (pygraphviz), never only grepped."""

import html
import re
import sys

import pytest

import vizgrad as vg
from vizgrad.render import dot as dot_module
from vizgrad.render import svg as svg_module
from vizgrad.trace import Graph, GraphEdge, GraphNode


def parse(source):
    """Graphviz's own reading of DOT source (skips where pygraphviz is not installed)."""
    pygraphviz = pytest.importorskip("pygraphviz", reason="pygraphviz (Graphviz's binding) parses the DOT we write")
    return pygraphviz.AGraph(string=source)


def unescape(text):
    """Graphviz's escString rules for what a label shows: \\n, \\l, \\r end a line, \\\\ is a backslash."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\n" if nxt in "nlr" else nxt)
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class Block(vg.nn.Module):
    def __init__(self, scale=0.5):
        super().__init__()
        self.w = vg.nn.Parameter(vg.ones(3) * scale)

    def forward(self, x):
        return (x * self.w).tanh()


class Stack(vg.nn.Module):
    def __init__(self, n=4):
        super().__init__()
        for i in range(n):
            self.add_module(str(i), Block())

    def forward(self, x):
        for block in self._modules.values():
            x = block(x)
        return x


class Net(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = Stack()
        self.head = Block()

    def forward(self, x):
        return self.head(self.layers(x))


def traced(backward=True):
    net = Net()
    x = vg.tensor([1.0, 2.0, 3.0])
    x.name = "x"
    with vg.trace() as tr:
        out = net(x)
        loss = out.sum()
        if backward:
            loss.backward()
    return tr.graph


def node_attrs(agraph):
    return {str(n): dict(agraph.get_node(n).attr) for n in agraph.nodes()}


def test_dot_parses_and_has_every_node_and_edge_with_shape_labels():
    graph = traced()
    agraph = parse(graph.to_dot())
    assert agraph.is_directed()
    ids = {n.id for n in graph.nodes}
    assert ids <= {str(n) for n in agraph.nodes()}
    drawn = {(str(a), str(b)): agraph.get_edge(a, b).attr["label"] for a, b in agraph.edges()
             if not str(a).startswith("legend")}
    assert set(drawn) == {(e.source, e.target) for e in graph.edges}
    assert all(label == "(3,)" for label in drawn.values())
    assert agraph.get_edge("n15", "n16").attr["label"] == "(3,)"


def test_each_kind_has_its_own_look():
    graph = traced()
    attrs = node_attrs(parse(graph.to_dot()))
    look = {}
    for node in graph.nodes:
        a = attrs[node.id]
        look.setdefault(node.kind, set()).add((a["shape"], a["style"], a["fillcolor"]))
    assert set(look) == {"leaf", "parameter", "op", "output"}
    assert all(len(styles) == 1 for styles in look.values())          # one look per kind
    assert len({next(iter(s)) for s in look.values()}) == 4            # and all four differ
    assert next(iter(look["op"]))[0] == "box" and next(iter(look["output"]))[0] == "doubleoctagon"
    assert next(iter(look["leaf"]))[0] == "ellipse"


def test_module_clusters_hold_their_nodes():
    graph = traced()
    agraph = parse(graph.to_dot())
    clusters = {sub.name: {str(n) for n in sub.nodes()} for sub in agraph.subgraphs()}
    assert clusters["cluster_layers.0"] == {"n1", "n2", "n3"}      # its parameter and its two ops
    assert clusters["cluster_head"] == {"n13", "n14", "n15"}
    assert agraph.get_subgraph("cluster_layers.2").graph_attr["label"] == "layers.2"
    assert "n0" not in set().union(*clusters.values())             # the input belongs to no module


def test_gradient_colours_and_legend_after_backward_only():
    before = parse(traced(backward=False).to_dot())
    assert all("color" not in a or a["color"] == "" for a in node_attrs(before).values())
    assert "cluster_legend" not in {s.name for s in before.subgraphs()}

    graph = traced()
    agraph = parse(graph.to_dot())
    attrs = node_attrs(agraph)
    assert "cluster_legend" in {s.name for s in agraph.subgraphs()}
    assert all(f"legend_{i}" in attrs for i in range(len(dot_module.PALETTE))) and "legend_nan" in attrs
    coloured = {n.id: attrs[n.id]["color"] for n in graph.nodes if n.grad}
    assert "n0" not in coloured and len(coloured) == 16
    assert set(coloured.values()) <= set(dot_module.PALETTE)
    # the gradient grows towards the output here (tanh'(.) < 1 at every block): the loss is
    # the largest, the first block's ops among the smallest
    scale = dot_module.colour_scale(graph)
    assert coloured["n16"] == dot_module.PALETTE[-1]
    assert dot_module.PALETTE.index(coloured["n2"]) < dot_module.PALETTE.index(coloured["n14"])
    assert scale[0] < scale[1]
    plain = node_attrs(parse(graph.to_dot(show_grads=False)))
    assert "legend_0" not in plain and plain["n16"].get("color", "") == ""


def test_nan_gradients_are_drawn_in_the_alarm_colour():
    a = vg.tensor([-1.0, 4.0], requires_grad=True)
    a.name = "a"
    with vg.trace() as tr:
        with pytest.warns(RuntimeWarning):
            root = a.sqrt()
        loss = root.sum()
        loss.backward()
    graph = tr.graph
    assert graph.node("n0").grad["nan_count"] == 1
    attrs = node_attrs(parse(graph.to_dot()))
    assert attrs["n0"]["color"] == dot_module.ALARM and attrs["n0"]["fontcolor"] == dot_module.ALARM
    assert "grad has NaN/inf" in unescape(attrs["n0"]["label"])
    assert attrs["n2"]["color"] != dot_module.ALARM                # the loss's own gradient is fine


def test_collapse_by_name():
    graph = traced()
    agraph = parse(graph.to_dot(collapse="layers"))
    attrs = node_attrs(agraph)
    assert "m_layers" in attrs and not any(f"n{i}" in attrs for i in range(1, 13))
    assert unescape(attrs["m_layers"]["label"]) == "layers\n8 ops"
    assert attrs["m_layers"]["shape"] == "box3d"
    assert agraph.has_edge("n0", "m_layers") and agraph.has_edge("m_layers", "n14")
    both = node_attrs(parse(graph.to_dot(collapse=["layers.1", "head"])))
    assert {"m_layers_1", "m_head"} <= set(both) and "n1" in both and "n4" not in both
    assert dot_module.to_dot(graph, collapse="nothing-called-this") == graph.to_dot()


def test_collapse_by_depth_draws_repeated_blocks_once_with_a_count():
    graph = traced()
    agraph = parse(graph.to_dot(collapse=2))
    attrs = node_attrs(agraph)
    blocks = [name for name in attrs if name.startswith("m_")]
    assert blocks == ["m_layers_0"]                                # four identical blocks, drawn once
    assert unescape(attrs["m_layers_0"]["label"]) == "layers.0  ×4\n2 ops"
    assert agraph.has_edge("n0", "m_layers_0") and agraph.has_edge("m_layers_0", "n14")
    assert not agraph.has_edge("m_layers_0", "m_layers_0")
    assert {"n13", "n14", "n15", "n16"} <= set(attrs)              # head is depth 1: still drawn


def test_blocks_that_differ_are_not_merged():
    class Mixed(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("0", Block())
            self.add_module("1", Block())
            self.add_module("2", Scaled())

        def forward(self, x):
            for block in self._modules.values():
                x = block(x)
            return x.sum()

    class Scaled(vg.nn.Module):
        def forward(self, x):
            return x * 2

    with vg.trace() as tr:
        Mixed()(vg.ones(3)).backward()
    attrs = node_attrs(parse(tr.graph.to_dot(collapse=1)))
    assert {"m_0", "m_2"} <= set(attrs) and "m_1" not in attrs
    assert unescape(attrs["m_0"]["label"]).startswith("0  ×2\n")
    assert "×" not in attrs["m_2"]["label"]


def test_big_graphs_are_summarised_automatically():
    graph = traced()                                   # 17 nodes
    auto = node_attrs(parse(graph.to_dot(max_nodes=10)))
    assert "m_layers_0" in auto and "×4" in auto["m_layers_0"]["label"]      # depth 2 was enough
    coarser = node_attrs(parse(graph.to_dot(max_nodes=6)))
    assert {"m_layers", "m_head"} <= set(coarser) and "n14" not in coarser  # depth 1
    # no modules to collapse: keep the nodes nearest the output and say what was left out
    a = vg.tensor([1.0], requires_grad=True)
    with vg.trace() as tr:
        value = a
        for _ in range(20):
            value = value * 1.5
    chain = tr.graph
    attrs = node_attrs(parse(chain.to_dot(max_nodes=8)))
    assert "omitted" in attrs and unescape(attrs["omitted"]["label"]) == "… 13 earlier nodes not shown"
    assert {n.id for n in chain.nodes[-8:]} <= set(attrs) and "n0" not in attrs


def test_user_strings_are_escaped_and_round_trip():
    nasty = 'say "hi" \\ back\\slash\nnew line </script><b>\\n'

    class Odd(vg.nn.Module):
        def forward(self, x):
            return x * 2

    class Holder(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module('we"ird\\na\nme', Odd())

        def forward(self, x):
            return self._modules['we"ird\\na\nme'](x)

    x = vg.tensor([1.0], requires_grad=True)
    x.name = nasty
    with vg.trace() as tr:
        Holder()(x).sum().backward()
    graph = tr.graph
    source = graph.to_dot(title=nasty)
    agraph = parse(source)
    assert unescape(agraph.graph_attr["label"]) == nasty
    leaf = agraph.get_node("n0").attr["label"]
    assert unescape(leaf).split("\n(1,)")[0] == nasty
    labels = [unescape(sub.graph_attr["label"]) for sub in agraph.subgraphs()]
    assert 'we"ird\\na\nme' in labels
    # the laid-out picture shows the text itself (escaped for XML)
    svg = svg_module.layout_svg(source)
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", svg)]
    for line in nasty.split("\n"):
        assert line in texts, line
    assert "</script><b>" not in svg                                # no raw markup leaks into the SVG


def test_hand_built_graph_with_odd_ids_and_empty_shapes():
    graph = Graph(nodes=[GraphNode(id="n0", kind="leaf", label="", shape=[], dtype="float32"),
                         GraphNode(id="n1", kind="op", label="Neg", op="Neg", shape=[], dtype="float32")],
                  edges=[GraphEdge("n0", "n1", 0, [])])
    agraph = parse(graph.to_dot(rankdir="LR"))
    assert agraph.graph_attr["rankdir"] == "LR"
    assert agraph.get_edge("n0", "n1").attr["label"] == "()"
    assert unescape(agraph.get_node("n0").attr["label"]) == "leaf\n()"


def test_to_svg_needs_no_dot_program_on_path(monkeypatch):
    pytest.importorskip("pygraphviz", reason="pygraphviz bundles Graphviz's layout")
    monkeypatch.setenv("PATH", "")
    svg = traced().to_svg()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "</svg>" in svg
    assert ">Tanh</text>" in svg
    assert traced()._repr_mimebundle_()[0]["image/svg+xml"].count("<svg") == 1


def test_without_any_graphviz_binding_the_error_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygraphviz", None)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    graph = traced()
    with pytest.raises(ImportError) as info:
        graph.to_svg()
    assert isinstance(info.value, svg_module.LayoutUnavailable)
    message = str(info.value)
    assert "pip install 'vizgrad[svg]'" in message and "pygraphviz" in message and "to_html" in message
    assert graph._repr_mimebundle_()[0]["image/svg+xml"].startswith("<svg")   # the display needs no Graphviz
    graph.to_dot()                                                 # DOT itself needs nothing


def test_grad_magnitude_and_colour_scale_helpers():
    node = GraphNode(id="n0", kind="op", label="", shape=[4], dtype="float32",
                     grad={"shape": [4], "norm": 2.0, "nan_count": 0, "inf_count": 0})
    assert dot_module.grad_magnitude(node) == (pytest.approx(0.0), False)      # RMS = 2/√4 = 1
    node.grad = {"shape": [4], "norm": None, "nan_count": 0, "inf_count": 4}
    assert dot_module.grad_magnitude(node) == (None, True)
    node.grad = None
    assert dot_module.grad_magnitude(node) is None
    assert dot_module.colour_for(-3.0, (-3.0, 1.0)) == dot_module.PALETTE[0]
    assert dot_module.colour_for(1.0, (-3.0, 1.0)) == dot_module.PALETTE[-1]
    assert dot_module.colour_scale(Graph()) is None
    assert dot_module.shape_text([2]) == "(2,)" and dot_module.shape_text([2, 3]) == "(2, 3)"
    assert dot_module.quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
