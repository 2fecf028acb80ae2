"""The graph at real model sizes in a real browser (issue 13): Debian's Chromium driven
by Playwright, on the HTML report, which draws with the same code as the GraphView
widget and the JupyterLab output (src/graph-explorer.js).

Models (tests/graph_models.py): a CNN with BatchNorm, an unrolled RNN, a 4-block
transformer-like model, with the Graph JSON groups (module types and labels, runs of
identical blocks). Checked as a person would see them, at 1280×720: large graphs start
grouped, a click opens a group one level, the breadcrumb goes back, identical blocks
fold into one box, the backward replay lights a collapsed group while a node inside it
is visited, search reveals and selects a node, labels are never drawn too small to read
(they give way to the shapes and come back on zoom), the legend stays under the graph,
the minimap appears when part of the graph is in view, a forward-only graph has no
replay controls. Screenshots go to test-artifacts/browser-graph/.
"""

import json
import math
import re
from pathlib import Path

import pytest

import chromium
import graph_models
import vizgrad as vg
from vizgrad.render.html import REPORT_SCHEMA, page as report_page

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-graph"
READY = "#vizgrad-report[data-ready], #vizgrad-report[data-error]"
DRAWING = "svg.vg-graph > g"          # each new drawing gets a new id
MIN_LABEL_PX = 11                     # issue 27: every label drawn is readable


@pytest.fixture(scope="module")
def browser():
    with chromium.launch() as browser:
        yield browser


@pytest.fixture
def open_graph(browser, tmp_path):
    """open_graph(graph_json, name) -> the report page of that Graph JSON, drawn; at the end of
    the test, fails on console errors, page errors and requests beyond the page's own data."""
    pages, problems = [], []

    def open_(graph, name):
        path = tmp_path / f"{name}.html"
        data = {"schema": REPORT_SCHEMA, "version": 1, "vizgrad": vg.__version__, "title": name, "layout": "page",
                "graph": graph, "dot": "", "extra": {}}
        path.write_text(report_page(json.loads(json.dumps(data)), name), encoding="utf-8")
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        pages.append(page)
        page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
                if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("request", lambda request: problems.append(f"network request: {request.url[:120]}")
                if not request.url.startswith(("file:", "data:", "about:", "blob:")) else None)
        page.goto(path.as_uri())
        page.locator(READY).wait_for(timeout=60_000)
        assert page.locator("#vizgrad-report").get_attribute("data-error") is None
        page.locator(".vg-graph-panel").scroll_into_view_if_needed()
        return page

    yield open_
    for page in pages:
        page.close()
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def shot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def redrawn(page, action):
    """Run ``action`` (a click) and wait for the graph to be drawn anew."""
    before = page.get_attribute(DRAWING, "id")
    action()
    page.wait_for_function("([selector, before]) => document.querySelector(selector)?.id !== before",
                           arg=[DRAWING, before], timeout=60_000)


def open_group(page, key):
    box = page.locator(f'g.vg-group[data-group="{key}"]')
    redrawn(page, lambda: box.dispatch_event("pointerdown", {"button": 0}) or box.dispatch_event("pointerup", {"button": 0}))


def open_every_group(page, limit=60):
    """Open the collapsed groups one click at a time until none is left (a graph that opened
    collapsed to be legible, drawn with all its nodes)."""
    for _ in range(limit):
        keys = page.eval_on_selector_all("g.vg-group", "boxes => boxes.map((box) => box.dataset.group)")
        if not keys:
            return
        open_group(page, keys[0])
    raise AssertionError(f"groups still collapsed after {limit} clicks")


def texts_too_small(page):
    """Labels (of nodes, groups, open groups' frames and edges) drawn on screen smaller than
    MIN_LABEL_PX: the font size times the zoom (the text's height on screen over its height
    in the drawing); hidden ones do not count."""
    return page.eval_on_selector_all("svg.vg-graph text", f"""texts => texts
        .filter((text) => getComputedStyle(text).display !== "none" && text.getBBox().height > 0)
        .map((text) => [text.textContent,
                        parseFloat(getComputedStyle(text).fontSize) * text.getBoundingClientRect().height / text.getBBox().height])
        .filter(([, px]) => px < {MIN_LABEL_PX} - 0.05)""")


def covers_a_node(page, selector):
    """Whether the element ``selector`` lies over any graph node shown in the graph's stage."""
    return page.evaluate("""(selector) => {
        const over = document.querySelector(selector).getBoundingClientRect();
        const stage = document.querySelector(".vg-graph-stage").getBoundingClientRect();
        const meets = (a, b) => a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top;
        const clip = (r) => ({ left: Math.max(r.left, stage.left), right: Math.min(r.right, stage.right),
                               top: Math.max(r.top, stage.top), bottom: Math.min(r.bottom, stage.bottom) });
        return [...document.querySelectorAll("svg.vg-graph g.node")].some((node) => {
            const r = node.getBoundingClientRect();
            return r.width > 0 && meets(r, stage) && meets(clip(r), over);   // the part of the node on screen
        });
    }""", selector)


def test_the_transformer_opens_level_by_level_and_the_breadcrumb_goes_back(open_graph):
    model, graph = graph_models.traced("transformer")
    data = graph.to_dict()
    page = open_graph(data, "transformer")
    groups = page.eval_on_selector_all("g.vg-group", "boxes => boxes.map((box) => box.dataset.group)")
    loss = next(group["id"] for group in data["groups"] if group["name"] == "cross_entropy")   # a composite: by id
    assert groups == ["embed", "blocks", "head", loss]          # 144 nodes: grouped by default
    assert page.locator(f'g.vg-group[data-group="{loss}"] text', has_text="cross_entropy").count() == 1
    assert page.locator('g.vg-group[data-group="embed"] text', has_text="Embedding(20→16)").count() == 1
    assert page.locator('g.vg-group[data-group="embed"] text', has_text="weight (20, 16)").count() == 1
    assert texts_too_small(page) == []
    shot(page, "transformer-grouped")

    open_group(page, "blocks")                                   # four identical blocks: one box
    assert page.locator('g.cluster[data-group="blocks"]').count() == 1
    assert page.locator("g.vg-group text", has_text="Block ×4").count() == 1
    assert page.locator(".vg-crumb").all_inner_texts() == ["graph", "Sequential"]
    shot(page, "transformer-blocks-folded")

    open_group(page, "blocks.0")                                 # the fold opens into the blocks
    assert sorted(page.eval_on_selector_all("g.vg-group", "boxes => boxes.map((b) => b.dataset.group)")) \
        == sorted(["blocks.0", "blocks.1", "blocks.2", "blocks.3", "embed", "head", loss])
    open_group(page, "blocks.2")
    assert page.locator('g.cluster[data-group="blocks.2"]').count() == 1
    assert page.locator('g.vg-group[data-group^="blocks.2.norm"] text', has_text="LayerNorm(16)").count() == 2
    assert page.locator(".vg-crumb").all_inner_texts() == ["graph", "Sequential", "Block"]
    assert texts_too_small(page) == []
    shot(page, "transformer-block-2-open")

    redrawn(page, lambda: page.locator(".vg-crumb").first.click())   # back to the top
    assert page.eval_on_selector_all("g.vg-group", "boxes => boxes.map((box) => box.dataset.group)") == ["embed", "blocks", "head", loss]


def test_the_replay_lights_a_collapsed_group_while_a_node_inside_is_visited(open_graph):
    model, graph = graph_models.traced("transformer")
    data = graph.to_dict()
    page = open_graph(data, "transformer-replay")
    order = data["backward_order"]
    group_of = {node["id"]: node["group"] for node in data["nodes"]}
    top = {group["id"]: group for group in data["groups"]}

    def outermost(node_id):
        group = group_of[node_id]
        while group is not None and top[group]["parent"] is not None:
            group = top[group]["parent"]
        if group is None:
            return None
        return top[group]["name"] if top[group]["kind"] == "module" else group   # a composite's key is its id

    slider = page.locator("input.vg-slider")
    for step in (1, 5, len(order) // 2, len(order)):
        slider.fill(str(step))
        node_id = order[step - 1]
        expected = outermost(node_id)
        active_groups = page.eval_on_selector_all("g.vg-group.vg-active", "boxes => boxes.map((b) => b.dataset.group)")
        active_nodes = page.eval_on_selector_all("g.vg-node.vg-active", "nodes => nodes.map((n) => n.dataset.nodeId)")
        assert (active_groups, active_nodes) == (([expected], []) if expected else ([], [node_id]))
        if step == len(order) // 2:
            shot(page, "transformer-replay-inside-blocks")
    assert page.locator("g.vg-group.vg-visited").count() + page.locator("g.vg-group.vg-active").count() == 4


def test_search_reveals_selects_and_zooms_to_a_node(open_graph):
    model, graph = graph_models.traced("transformer")
    data = graph.to_dict()
    page = open_graph(data, "transformer-search")
    page.locator('[data-testid="vg-search"]').fill("softmax")
    results = page.locator('[data-testid="vg-search-result"]')
    assert results.count() == 5                                  # four attention softmaxes, the loss's log-softmax
    assert "in Sequential › Block › Attention" in results.first.inner_text()
    shot(page, "transformer-search-results")
    target = results.nth(2).get_attribute("data-node-id")
    redrawn(page, lambda: results.nth(2).click())
    node = page.locator(f'g.vg-node[data-node-id="{target}"]')
    assert node.count() == 1 and "vg-selected" in node.get_attribute("class")
    assert page.locator(".vg-crumb").all_inner_texts()[-1] == "Attention"
    box = node.bounding_box()
    stage = page.locator(".vg-graph-stage").bounding_box()
    assert stage["x"] <= box["x"] and box["x"] + box["width"] <= stage["x"] + stage["width"]   # zoomed to it
    assert stage["y"] <= box["y"] and box["y"] + box["height"] <= stage["y"] + stage["height"]
    assert "Softmax" in page.locator(".vg-details").inner_text()
    assert texts_too_small(page) == []
    shot(page, "transformer-search-found")


def close_group(page, key):
    cluster = page.locator(f'g.cluster[data-group="{key}"]')
    redrawn(page, lambda: cluster.dispatch_event("pointerdown", {"button": 0}) or cluster.dispatch_event("pointerup", {"button": 0}))


def test_the_cnn_keeps_batchnorm_buffers_in_its_box_and_shows_the_loss_value(open_graph):
    model, graph = graph_models.traced("cnn")                    # 24 nodes: BatchNorm is one op
    page = open_graph(graph.to_dict(), "cnn")
    assert texts_too_small(page) == []                           # it opens collapsed as far as that needs
    open_every_group(page)
    assert page.eval_on_selector_all("g.cluster", "boxes => boxes.map((b) => b.dataset.group)") == [
        *map(str, range(10)), "g10"]                             # each module, and cross_entropy's ops
    batchnorm = page.locator('g.cluster[data-group="1"]')
    assert batchnorm.locator(":scope > text", has_text="1 · BatchNorm2d(8)").count() == 1
    assert page.locator('g.cluster[data-group="9"] > text', has_text="9 · Linear(784→10)").count() == 1
    assert page.locator('g.vg-node.vg-kind-constant text', has_text="input (4, 1, 28, 28)").count() == 1
    loss = page.locator("g.vg-node.vg-kind-output text", has_text="= 2.")
    assert loss.count() == 1                                     # a scalar shows its value
    assert texts_too_small(page) == []
    assert page.locator('[data-testid="vg-graph-legend"]').is_visible()
    assert not covers_a_node(page, '[data-testid="vg-graph-legend"]')
    shot(page, "cnn")

    model, graph = graph_models.traced("cnn-eval")               # BatchNorm reads its running statistics
    page = open_graph(graph.to_dict(), "cnn-eval")
    open_every_group(page)
    close_group(page, "1")
    batchnorm = page.locator('g.vg-group[data-group="1"]')
    assert batchnorm.locator("text", has_text="BatchNorm2d(8)").count() == 1
    assert batchnorm.locator("text", has_text="running_mean (8,)").count() == 1   # its buffers inside the box
    assert page.locator("svg.vg-graph g.node[data-node-id] text", has_text="1.running_mean").count() == 0
    assert texts_too_small(page) == []
    shot(page, "cnn-eval-batchnorm-closed")


def test_the_rnn_draws_a_shared_weight_once_with_its_use_count(open_graph):
    vg.manual_seed(0)
    w = vg.randn(8, 8, requires_grad=True)
    w.name = "W_hh"
    xs = vg.randn(10, 8)
    with vg.trace() as recording:
        h = vg.zeros(8)
        for t in range(10):
            h = (w @ h + xs[t]).tanh()
        h.sum().backward()
    page = open_graph(recording.graph.to_dict(), "rnn-shared")
    weight = page.locator("g.vg-node.vg-kind-leaf", has=page.locator("text", has_text="W_hh"))
    assert weight.locator("text", has_text="used 10×").count() == 1
    weight_id = weight.get_attribute("data-node-id")
    assert page.locator(f'g.edge[data-source="{weight_id}"]').count() == 1   # no fan-out of long edges
    assert page.locator("g.vg-node text", has_text="+ W_hh (shared)").count() == 9
    shot(page, "rnn-shared-weight")

    model, graph = graph_models.traced("rnn")                    # the cell module: one box for every step
    page = open_graph(graph.to_dict(), "rnn")
    assert page.locator('g.vg-group[data-group="cell"] text', has_text=re.compile("^Cell$")).count() == 1
    open_group(page, "cell")
    assert page.locator('g.cluster[data-group="cell"]').count() == 1
    shot(page, "rnn-cell-open")


def test_labels_give_way_to_shapes_when_too_small_and_fit_keeps_them_readable(open_graph):
    model, graph = graph_models.traced("transformer")
    page = open_graph(graph.to_dict(), "transformer-zoom")
    open_group(page, "blocks")
    open_group(page, "blocks.0")
    for key in ("blocks.0", "blocks.1", "blocks.2", "blocks.3"):
        open_group(page, key)
    svg = page.locator("svg.vg-graph")
    minimap = page.locator('[data-testid="vg-minimap"]')
    for _ in range(12):                                          # zoom out until the labels give way to the shapes
        if "vg-glyphs" in svg.get_attribute("class"):
            break
        page.get_by_role("button", name="zoom out").click()
    assert "vg-glyphs" in svg.get_attribute("class")
    assert page.locator("svg.vg-graph g.node text").first.evaluate("t => getComputedStyle(t).display") == "none"
    assert texts_too_small(page) == []
    shot(page, "transformer-all-open-zoomed-out")
    # too large to fit whole at a readable size: "fit" shows the root's part of it, readable
    page.get_by_role("button", name="fit the graph").click()
    assert "vg-glyphs" not in svg.get_attribute("class")
    assert texts_too_small(page) == []
    root = page.locator("svg.vg-graph .vg-root").bounding_box()
    stage = page.locator(".vg-graph-stage").bounding_box()
    assert stage["y"] <= root["y"] and root["y"] + root["height"] <= stage["y"] + stage["height"]
    assert minimap.is_visible()                                  # part of the graph in view: the overview shows
    over_root = page.evaluate("""() => {
        const map = document.querySelector('[data-testid="vg-minimap"]').getBoundingClientRect();
        const r = document.querySelector('svg.vg-graph .vg-root').getBoundingClientRect();
        return map.left < r.right && map.right > r.left && map.top < r.bottom && map.bottom > r.top; }""")
    assert not over_root                                         # never over the root
    shot(page, "transformer-all-open-fitted")
    page.get_by_role("button", name="overview").click()         # the overview can be hidden
    assert minimap.is_hidden()
    assert page.locator('[data-testid="vg-minimap-toggle"]').get_attribute("aria-pressed") == "false"


def view_box(page):
    return [float(v) for v in page.get_attribute("svg.vg-graph", "viewBox").split()]


def wheel_and_settle(page, delta_y, turns):
    """Turn the wheel over the graph's centre ``turns`` times and wait until the gesture has
    settled: the graph painted afresh at the new view (its viewBox), no layer transform left."""
    before = page.get_attribute("svg.vg-graph", "viewBox")
    box = page.locator("svg.vg-graph").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(turns):
        page.mouse.wheel(0, delta_y)
    page.wait_for_function("""(before) => {
        const svg = document.querySelector("svg.vg-graph");
        return svg.getAttribute("viewBox") !== before && !svg.classList.contains("vg-layered") && !svg.style.transform;
    }""", arg=before, timeout=10_000)
    page.mouse.move(1, 1)                                        # off the graph: no tooltip in the screenshots


def test_a_wheel_zoom_settles_with_the_labels_shown_as_the_zoom_allows(open_graph):
    model, graph = graph_models.traced("transformer")
    page = open_graph(graph.to_dict(), "transformer-wheel")
    open_group(page, "blocks")
    open_group(page, "blocks.0")
    svg = page.locator("svg.vg-graph")
    texts = page.locator("svg.vg-graph g.node text")
    assert "vg-glyphs" not in svg.get_attribute("class")         # the first view is readable
    width = view_box(page)[2]
    wheel_and_settle(page, 100, 3)                               # zoom out: 3 turns of 100 px
    assert view_box(page)[2] == pytest.approx(width * math.exp(3 * 100 * 0.0015), rel=0.02)
    assert "vg-glyphs" in svg.get_attribute("class")             # labels would be under 9 px: shapes only
    assert texts.first.evaluate("t => getComputedStyle(t).display") == "none"
    assert texts_too_small(page) == []
    shot(page, "transformer-wheel-out")
    wheel_and_settle(page, -100, 5)                              # zoom back in past the first view
    assert view_box(page)[2] == pytest.approx(width * math.exp(-2 * 100 * 0.0015), rel=0.02)
    assert "vg-glyphs" not in svg.get_attribute("class")
    assert texts.first.evaluate("t => getComputedStyle(t).display") != "none"
    assert texts_too_small(page) == []
    assert page.locator('[data-testid="vg-minimap"]').is_visible()
    shot(page, "transformer-wheel-in")


def test_a_forward_only_graph_has_no_replay_controls(open_graph):
    x = vg.tensor([1.0, 2.0, 3.0])
    with vg.trace() as recording:
        (x * 2).tanh().sum()
    data = recording.graph.to_dict()
    assert data["backward_order"] == []
    page = open_graph(data, "forward-only")
    assert page.locator(".vg-replay").is_hidden()
    assert page.locator(".vg-toolbar", has_text="forward only").count() == 1
    shot(page, "forward-only")
