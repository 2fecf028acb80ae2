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
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    with vg.trace() as tr:
        (a * 2).sum()
    for node in tr.graph.nodes:
        attrs = node_attrs(parse(tr.graph.to_dot()))[node.id]
        look.setdefault(node.kind, set()).add((attrs["shape"], attrs["style"], attrs["fillcolor"]))
    assert set(look) == {"leaf", "parameter", "constant", "op", "output"}
    assert all(len(styles) == 1 for styles in look.values())          # one look per kind
    assert len({next(iter(s)) for s in look.values()}) == 5            # and all five differ
    assert next(iter(look["op"]))[0] == "box" and next(iter(look["output"]))[0] == "doubleoctagon"
    assert next(iter(look["leaf"]))[0] == "ellipse"


def test_module_clusters_hold_their_nodes_and_are_labelled_with_their_type():
    graph = traced()
    agraph = parse(graph.to_dot())
    clusters = {unescape(sub.graph_attr["label"]): sub for sub in agraph.subgraphs()}
    assert {"Stack\nlayers", "Block\nhead"} <= set(clusters)
    stack = clusters["Stack\nlayers"]
    inner = {unescape(sub.graph_attr["label"]): {str(n) for n in sub.nodes()} for sub in stack.subgraphs()}
    assert inner["Block\nlayers.0"] == {"n1", "n2", "n3"}                 # its parameter and its two ops
    assert len(inner) == 4                                                # nested inside Stack
    assert {str(n) for n in clusters["Block\nhead"].nodes()} == {"n13", "n14", "n15"}
    assert "n0" not in {str(n) for sub in agraph.subgraphs() for n in sub.nodes()}   # the input: no module


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
        root = a.sqrt()                 # NaN at -1, silently (as PyTorch)
        loss = root.sum()
        loss.backward()
    graph = tr.graph
    assert graph.node("n0").grad["nan_count"] == 1
    attrs = node_attrs(parse(graph.to_dot()))
    assert attrs["n0"]["color"] == dot_module.ALARM and attrs["n0"]["fontcolor"] == dot_module.ALARM
    assert "grad has NaN/inf" in unescape(attrs["n0"]["label"])
    assert attrs["n2"]["color"] != dot_module.ALARM                # the loss's own gradient is fine


def group_id(graph, name):
    return next(group.id for group in graph.groups if group.name == name)


def test_collapse_by_name():
    graph = traced()
    layers = "m_" + group_id(graph, "layers")
    agraph = parse(graph.to_dot(collapse="layers"))
    attrs = node_attrs(agraph)
    assert layers in attrs and not any(f"n{i}" in attrs for i in range(1, 13))
    assert unescape(attrs[layers]["label"]) == "Stack\nlayers" and "8 ops" in attrs[layers]["tooltip"]
    assert attrs[layers]["shape"] == "box3d"
    assert agraph.has_edge("n0", layers) and agraph.has_edge(layers, "n14")
    both = node_attrs(parse(graph.to_dot(collapse=["layers.1", "head"])))
    assert {"m_" + group_id(graph, "layers.1"), "m_" + group_id(graph, "head")} <= set(both)
    assert "n1" in both and "n4" not in both
    assert dot_module.to_dot(graph, collapse="nothing-called-this") == graph.to_dot()


def test_collapse_by_depth_draws_repeated_blocks_once_with_a_count():
    graph = traced()
    assert [group.repeat for group in graph.groups if group.name.startswith("layers.")] == [
        {"count": 4, "index": i} for i in range(4)]
    agraph = parse(graph.to_dot(collapse=2))
    attrs = node_attrs(agraph)
    first = "m_" + group_id(graph, "layers.0")
    assert [name for name in attrs if name.startswith("m_")] == [first]     # four identical blocks, drawn once
    assert unescape(attrs[first]["label"]) == "Block ×4\nlayers.0 … layers.3"
    assert agraph.has_edge("n0", first) and agraph.has_edge(first, "n14")
    assert not agraph.has_edge(first, first)
    assert {"n13", "n14", "n15", "n16"} <= set(attrs)              # head is depth 1: still drawn


def test_blocks_that_differ_are_not_merged():
    class Mixed(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("0", Block())
            self.add_module("1", Block())
            self.add_module("2", Block(scale=2.0))          # same structure: identical block
            self.add_module("3", Scaled())

        def forward(self, x):
            for block in self._modules.values():
                x = block(x)
            return x.sum()

    class Scaled(vg.nn.Module):
        def forward(self, x):
            return x * 2

    with vg.trace() as tr:
        Mixed()(vg.ones(3)).backward()
    graph = tr.graph
    attrs = node_attrs(parse(graph.to_dot(collapse=1)))
    assert [name for name in attrs if name.startswith("m_")] == ["m_" + group_id(graph, "0"), "m_" + group_id(graph, "3")]
    assert unescape(attrs["m_" + group_id(graph, "0")]["label"]) == "Block ×3\n0 … 2"
    assert "×" not in attrs["m_" + group_id(graph, "3")]["label"]


def test_collapsed_ids_are_unique_whatever_the_module_names():
    class Named(vg.nn.Module):
        def __init__(self):
            super().__init__()
            for name in ("enc-a", "enc_a", "enc a"):
                self.add_module(name, vg.nn.Linear(2, 2))

        def forward(self, x):
            return sum(module(x) for module in self._modules.values())

    with vg.trace() as tr:
        Named()(vg.ones(1, 2)).sum().backward()
    graph = tr.graph
    attrs = node_attrs(parse(graph.to_dot(collapse=1)))
    boxes = {unescape(attrs[name]["label"]) for name in attrs if name.startswith("m_")}
    # identical Linear(2→2) siblings fold into one box; their names stay apart
    assert boxes == {"Linear(2→2) ×3\nenc-a … enc a"}
    unfolded = node_attrs(parse(graph.to_dot(collapse=["enc-a", "enc_a"])))
    assert {unescape(unfolded[name]["label"]) for name in unfolded if name.startswith("m_")} == {
        "Linear(2→2)\nenc-a", "Linear(2→2)\nenc_a"}


def test_big_graphs_are_collapsed_by_default_at_the_deepest_level_that_fits():
    graph = traced()                                   # 17 nodes
    assert not any(name.startswith("m_") for name in node_attrs(parse(graph.to_dot())))
    auto = node_attrs(parse(graph.to_dot(collapse_above=10)))
    first = "m_" + group_id(graph, "layers.0")
    assert first in auto and "×4" in auto[first]["label"]                  # depth 2 was enough
    coarser = node_attrs(parse(graph.to_dot(collapse_above=4)))
    assert {"m_" + group_id(graph, "layers"), "m_" + group_id(graph, "head")} <= set(coarser)   # depth 1
    assert "n14" not in coarser
    assert not any(name.startswith("m_") for name in node_attrs(parse(graph.to_dot(collapse=False, collapse_above=4))))
    # above the node budget: keep the nodes nearest the output and say what was left out
    a = vg.tensor([1.0], requires_grad=True)
    with vg.trace() as tr:
        value = a
        for _ in range(20):
            value = value * 1.5
    chain = tr.graph
    attrs = node_attrs(parse(chain.to_dot(max_nodes=8)))
    assert "omitted" in attrs and unescape(attrs["omitted"]["label"]) == "… 33 earlier nodes not shown"
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
    assert 'Odd\nwe"ird\\na\nme' in labels
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
    assert agraph.get_edge("n0", "n1").attr["label"] == "scalar"         # "()" would read as "0"
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
