"""vizgrad.render.inline: the graph output for front ends without vizgrad's extension. One
bounded Graphviz layout of the collapsed model gives the ``image/svg+xml`` entry and the SVG
inside a small, isolated ``text/html`` entry; the bundle is ordered richest first."""

import json
import re
import time

import pytest

import graph_models
import vizgrad as vg
from vizgrad import nn
from vizgrad.render import dot, inline, notebook

pytest.importorskip("pygraphviz", reason="the drawing is laid out by the Graphviz that pygraphviz bundles")

DRAWN = re.compile(r'<g class="node" data-vg-id="([^"]+)"')


def drawn_ids(svg):
    return [item for item in DRAWN.findall(svg) if not item.startswith("legend_")]


@pytest.fixture(scope="module")
def lstm_bundle():
    _, loss = graph_models.user_loss("lstm")
    graph = vg.graph(loss)
    data, metadata = notebook.mimebundle(graph)
    return graph, data, metadata


def test_the_bundle_is_ordered_richest_first_and_small(lstm_bundle):
    graph, data, metadata = lstm_bundle
    assert list(data) == [notebook.MIME_TYPE, "text/html", "image/svg+xml", "text/plain"]
    assert data[notebook.MIME_TYPE]["nodes"][0]["id"] == graph.nodes[0].id
    size = len(json.dumps({"data": data, "metadata": metadata}))
    assert size < 300_000, size                                        # no 2 MB layout engine in it
    assert len(data["text/html"]) < 80_000 and "<iframe" not in data["text/html"]
    assert data["image/svg+xml"] in data["text/html"]                   # one layout, reused


def test_the_svg_draws_each_item_and_edge_with_module_boxes(lstm_bundle):
    graph, data, _ = lstm_bundle
    svg = data["image/svg+xml"]
    options = inline.drawing_options(graph)
    source = dot.to_dot(graph, **options)
    items, root = inline.drawn_items(graph, options["collapse"])
    assert sorted(drawn_ids(svg)) == sorted(items)                     # one shape per drawn item
    assert svg.count('<g class="edge"') == len(re.findall(r'^\s+"[^"]+" -> "[^"]+" \[label=', source, re.M))
    assert svg.count('<g class="edge"') >= len(items) - 1              # a connected drawing, not a list
    assert len(re.findall(r'<g class="edge">\s*<path [^>]*d="M', svg)) == svg.count('<g class="edge"')
    boxes = {key: item for key, item in items.items() if item["k"] == "group"}
    assert {item["title"] for item in boxes.values()} == {"t=0"}       # each layer's 12 steps folded into one box
    assert all(item["blocks"] == 12 and item["ops"] > 0 for item in boxes.values())
    assert {"lstm.weight_ih_l0", "head.weight"} <= {item.get("name") for item in items.values()}
    assert re.search(r'<g class="cluster" data-vg-id="cluster_g\d+">', svg)    # the open modules: lstm, its layers, head
    assert root in items and items[root]["kind"] == "output"


def test_every_label_is_legible_at_the_natural_size_and_ids_are_gone(lstm_bundle):
    _, data, _ = lstm_bundle
    svg = data["image/svg+xml"]
    width, height = (float(v) for v in re.search(r'<svg class="vg-drawing" width="(\d+)" height="(\d+)"', svg).groups())
    view = [float(v) for v in re.search(r'viewBox="([^"]+)"', svg)[1].split()]
    scale = width / view[2]
    assert height / view[3] == pytest.approx(scale, rel=0.01)
    sizes = {float(size) for size in re.findall(r'font-size="([\d.]+)"', svg)}
    assert min(sizes) * scale >= inline.MIN_LABEL_PX - 0.01, (sizes, scale)
    assert 200 < width < 1400 and height < 2000                       # a notebook cell's picture
    assert not re.search(r'\sid="', svg) and "<title>" not in svg and "<?xml" not in svg


def test_a_large_graph_is_drawn_at_module_level_bounded_and_fast():
    blocks = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8)) for _ in range(8)])
    with vg.trace() as traced:
        y = vg.randn(4, 8)
        for _ in range(80):                 # ~2,100 nodes in 8 modules called 80 times each
            y = blocks(y) * 0.5
    graph = traced.graph
    assert len(graph.nodes) > 2000
    start = time.perf_counter()
    data, _ = notebook.mimebundle(graph)
    assert time.perf_counter() - start < 5
    items = drawn_ids(data["image/svg+xml"])
    assert len(items) <= inline.MAX_ITEMS + 1
    groups = [item for item in json.loads(re.search(r'class="vg-inline-data">(.*?)</script>', data["text/html"])[1])
              ["items"].values() if item["k"] == "group"]
    assert groups and all(item["name"].count(".") == 0 for item in groups)    # top-level modules, boxed
    assert len(data["text/html"]) < 200_000


def test_thousands_of_top_level_modules_keep_the_boxes_nearest_the_output():
    model = nn.Sequential(*[layer for _ in range(600) for layer in (nn.Linear(8, 8), nn.Tanh())])
    loss = model(vg.randn(16, 8)).square().mean()
    loss.backward()
    graph = vg.graph(loss)
    assert len(graph.nodes) > 2000
    start = time.perf_counter()
    drawing = inline.StaticDrawing(graph)
    assert time.perf_counter() - start < 2
    ids = drawn_ids(drawing.svg)
    assert len(ids) == inline.MAX_ITEMS + 1 and set(ids) == set(drawing.items)
    boxes = [drawing.items[item] for item in ids if item.startswith("m_")]
    assert len(boxes) > 90 and boxes[-1]["name"] == "1199" and drawing.items[drawing.root]["kind"] == "output"
    note = drawing.items["omitted"]
    assert note["title"] == f"… {note['nodes']} earlier nodes not shown" and note["nodes"] > 1500


def test_a_long_chain_without_modules_keeps_the_nodes_nearest_the_output():
    y = vg.randn(3, requires_grad=True)
    for _ in range(2000):
        y = y * 1.0001
    graph = vg.graph(y.sum())
    start = time.perf_counter()
    drawing = inline.StaticDrawing(graph)
    assert time.perf_counter() - start < 5
    ids = drawn_ids(drawing.svg)
    assert len(ids) == inline.MAX_ITEMS + 1 and "omitted" in ids       # and a note saying how many are not
    assert drawing.items["omitted"]["title"].endswith("earlier nodes not shown")
    assert graph.nodes[-1].id in ids and graph.nodes[0].id not in ids
    assert set(drawing.items) == set(ids)


def test_user_strings_reach_the_html_escaped_and_styles_are_scoped():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    evil = "</script><img src=x onerror=alert(1)>"
    x.name = evil
    loss = (x * x).sum()
    loss.backward()
    graph = vg.graph(loss)
    first, second = notebook.static_outputs(graph)["text/html"], notebook.static_outputs(graph)["text/html"]
    for text in (first, second):
        assert "<img" not in text and text.lower().count("</script") == 2      # the data's and the script's own
        root = re.match(r'<div class="vg-inline" id="(vg-inline-[0-9a-f]+)" data-vg-inline="">', text)[1]
        style = re.search(r"<style>(.*?)</style>", text)[1]
        rules = [rule.split("{")[0] for rule in re.findall(r"[^{}]+\{[^{}]*\}", style)]
        assert rules and all(part.strip().startswith(f"#{root}") for rule in rules for part in rule.split(","))
    assert re.search(r'id="(vg-inline-\w+)"', first)[1] != re.search(r'id="(vg-inline-\w+)"', second)[1]
    data = json.loads(re.search(r'class="vg-inline-data">(.*?)</script>', first)[1])
    assert data["items"][graph.nodes[0].id]["name"] == evil                # the name itself, as data
    assert data["items"][graph.nodes[0].id]["grad"]["sample"] == [2.0, 4.0]


def test_the_inline_script_defines_no_globals_and_reads_no_loaders():
    script = inline.read_script()
    assert script.startswith("(()=>{") and script.rstrip().endswith("})();")
    assert len(script) < 20_000
    code = re.sub(r'"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`', '""', script)         # strings aside
    assert not re.search(r"(?<![.\w$])(define|require|exports|module)(?![\w$])", code)


def test_graph_repr_html_is_the_same_small_output(lstm_bundle):
    graph, data, _ = lstm_bundle
    text = graph._repr_html_()
    assert text.startswith('<div class="vg-inline"') and "<iframe" not in text
    strip = re.compile(r"vg-inline-[0-9a-f]{12}")
    assert strip.sub("", text) == strip.sub("", data["text/html"])


def test_without_graphviz_the_summary_picture_stays(monkeypatch):
    from vizgrad.render import svg

    def unavailable(_source):
        raise svg.LayoutUnavailable("no Graphviz here")
    monkeypatch.setattr(svg, "layout_svg", unavailable)
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    data, _ = notebook.mimebundle(vg.graph((x * x).sum()))
    assert list(data) == [notebook.MIME_TYPE, "image/svg+xml", "text/plain"]
    assert data["image/svg+xml"].count("<rect") == 3


def test_the_graph_views_fallbacks_are_the_same_drawing():
    pytest.importorskip("anywidget")
    from vizgrad.widgets import GraphView
    _, loss = graph_models.user_loss("lstm")
    view = GraphView(loss)
    try:
        svg, page = view._fallback_svg(), view._fallback_html()
        assert svg in page and page.startswith('<div class="vg-inline"')
        assert "GraphView: 309 nodes" in page
        assert sorted(drawn_ids(svg)) == sorted(inline.drawn_items(view.current_graph, inline.drawing_options(
            view.current_graph, collapse=view.collapsed or False)["collapse"])[0])
    finally:
        view.close()
    _, loss = graph_models.user_loss("resnet")
    view = GraphView(loss)
    try:
        assert any(item.startswith("m_") for item in drawn_ids(view._fallback_svg()))
        view.expand()                                                      # the user opened every group
        assert sorted(drawn_ids(view._fallback_svg())) == sorted(node.id for node in view.current_graph.nodes)
    finally:
        view.close()


def test_prediction_modes_fallbacks_give_no_gradient_away():
    pytest.importorskip("anywidget")
    from vizgrad.widgets import GraphView
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    view = GraphView(loss, predict=True)
    try:
        page = view._fallback_html()
        data = json.loads(re.search(r'class="vg-inline-data">(.*?)</script>', page)[1])
        assert all("grad" not in item for item in data["items"].values())
        assert "gradient size" not in view._fallback_svg()                 # no colour legend either
    finally:
        view.close()
    view = GraphView(loss)
    try:
        data = json.loads(re.search(r'class="vg-inline-data">(.*?)</script>', view._fallback_html())[1])
        assert data["items"]["n0"]["grad"]["sample"] == [2.0, 4.0, 6.0]
    finally:
        view.close()
