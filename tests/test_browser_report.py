"""The HTML report in a real browser: Debian's Chromium driven by Playwright.

Checks what a person would see: the graph is drawn with one SVG node per graph node
(the gradient legend becomes a colour bar beside it), the replay slider moves the highlight, hovering shows a
node's details, user strings stay text, the page asks the network for nothing and
logs no errors. Screenshots go to test-artifacts/browser-report/.

Skipped only where Chromium cannot be (no /usr/bin/chromium outside CI); under CI
(``CI=true``, where .ci/run installs it) a missing browser fails the test instead.
"""

import json
import re
from pathlib import Path

import pytest

import chromium
import vizgrad as vg
from vizgrad import cli, nn
from vizgrad.render.html import to_html_fragment

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-report"
EVIL = "</script><img src=x onerror=alert(1)>"
READY = "#vizgrad-report[data-ready], #vizgrad-report[data-error]"


@pytest.fixture(scope="module")
def browser():
    with chromium.launch() as browser:
        yield browser


@pytest.fixture
def open_page(browser):
    """open_page(path) -> a Playwright page showing the drawn report; at the end of the test,
    fails on any console error, page error, dialog or network request the page made."""
    pages, problems = [], []

    def open_(path, width=1400, height=1000):
        page = browser.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
                if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.on("request", lambda request: problems.append(f"network request: {request.url[:120]}")
                if not request.url.startswith(("file:", "data:", "about:", "blob:")) else None)
        page.goto(Path(path).as_uri())
        return page

    yield open_
    for page in pages:
        page.close()
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def wait_until_drawn(target):
    """Wait for the report's script to finish (it marks the root); fail on its error."""
    target.locator(READY).wait_for(timeout=60_000)
    error = target.locator("#vizgrad-report").get_attribute("data-error")
    assert error is None, f"the report could not draw its graph: {error}"


def screenshot(page, name, **options):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), **options)


def embedded_graph(path):
    text = Path(path).read_text(encoding="utf-8")
    return json.loads(re.search(r'id="vizgrad-data">(.*?)</script>', text, re.S).group(1))["graph"]


def node_ids(page, selector):
    return page.eval_on_selector_all(selector, "elements => elements.map(e => e.dataset.nodeId)")


def open_group(page, key):
    """Click the collapsed group ``key``'s box and wait for the graph to be drawn anew (the view goes to it)."""
    before = page.get_attribute("svg.vg-graph > g", "id")
    box = page.locator(f'g.vg-group[data-group="{key}"]')
    box.dispatch_event("pointerdown", {"button": 0})
    box.dispatch_event("pointerup", {"button": 0})
    page.wait_for_function("before => document.querySelector('svg.vg-graph > g')?.id !== before", arg=before, timeout=60_000)


def open_every_group(page, limit=40):
    """Open the collapsed groups (the graph opened collapsed to be legible) until every node is drawn."""
    for _ in range(limit):
        keys = page.eval_on_selector_all("g.vg-group", "boxes => boxes.map((box) => box.dataset.group)")
        if not keys:
            return
        open_group(page, keys[0])
    raise AssertionError(f"groups still collapsed after {limit} clicks")


def test_the_demo_report_draws_the_graph_and_replays_backward(open_page, tmp_path):
    path = tmp_path / "demo.html"
    assert cli.main(["demo", "--steps", "60", "--out", str(path)]) == 0
    graph = embedded_graph(path)
    order = graph["backward_order"]
    page = open_page(path)
    wait_until_drawn(page)
    # it opens with its modules collapsed (too tall to read whole otherwise): each box stands for its nodes
    sizes = page.eval_on_selector_all("svg.vg-graph g.node", "elements => elements.map(e => e.dataset.nodeId ? 1 : Number(e.dataset.size))")
    assert sum(sizes) == len(graph["nodes"]) and page.locator("g.vg-group").count() > 0
    open_every_group(page)

    # one SVG node per graph node; the gradient legend left the drawing for a colour bar
    drawn = node_ids(page, "svg.vg-graph g.node")
    assert sorted(drawn) == sorted(node["id"] for node in graph["nodes"])
    assert page.locator(".vg-graph-legend .vg-graph-legend-bar span").count() == 9
    assert page.locator("svg.vg-chart").count() == 4     # loss, gradient flow, per parameter, boundary
    screenshot(page, "demo-report.png", full_page=True)

    # the replay starts at the end: the last node backward visited is highlighted
    assert node_ids(page, "g.vg-node.vg-active") == [order[-1]]
    assert page.locator("g.vg-node.vg-pending").count() == 0
    page.locator("input.vg-slider").fill("3")
    assert node_ids(page, "g.vg-node.vg-active") == [order[2]]
    assert sorted(node_ids(page, "g.vg-node.vg-visited")) == sorted(order[:2])
    assert sorted(node_ids(page, "g.vg-node.vg-pending")) == sorted(order[3:])
    assert "backward step 3 of" in page.locator(".vg-step-text").inner_text()
    assert page.locator("g.edge.vg-flow").count() > 0     # the edges into the active node
    screenshot(page, "demo-replay-step-3.png")

    page.get_by_role("button", name="before backward").click()
    assert node_ids(page, "g.vg-node.vg-active") == []
    assert page.locator("g.vg-node.vg-pending").count() == len(order)
    page.get_by_role("button", name="next step").click()
    assert node_ids(page, "g.vg-node.vg-active") == [order[0]]
    page.get_by_role("button", name="play the backward pass").click()
    page.wait_for_function("() => Number(document.querySelector('input.vg-slider').value) >= 3")
    page.get_by_role("button", name="pause").click()


def test_hover_shows_details_and_click_keeps_them(open_page, tmp_path):
    path = tmp_path / "demo.html"
    assert cli.main(["demo", "--steps", "5", "--out", str(path)]) == 0
    page = open_page(path)
    wait_until_drawn(page)
    open_group(page, "0")                                        # the first Linear, collapsed at open: the view goes to it
    parameter = page.locator('g.vg-node.vg-kind-parameter[data-node-id="n1"]')
    parameter.hover()
    tooltip = page.locator(".vg-tooltip")
    tooltip.wait_for(state="visible")
    assert "0.weight" in tooltip.inner_text() and "(16, 2)" in tooltip.inner_text()
    screenshot(page, "demo-tooltip.png")
    parameter.click()
    assert page.locator("g.vg-node.vg-selected").count() == 1
    assert "n1" in page.locator(".vg-details").inner_text()

    # zoom changes the viewBox; fit brings it back
    svg = page.locator("svg.vg-graph")
    page.get_by_role("button", name="fit the graph").click()    # the first view may be a readable part of it
    home = svg.get_attribute("viewBox")
    page.get_by_role("button", name="zoom in").click()
    assert float(svg.get_attribute("viewBox").split()[2]) < float(home.split()[2])
    page.get_by_role("button", name="fit the graph").click()
    assert svg.get_attribute("viewBox") == home


def test_hostile_names_are_shown_as_text(open_page, tmp_path):
    model = nn.Module()
    model.add_module(EVIL, nn.Linear(2, 1))
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    w.name = EVIL
    with vg.trace() as recorded:
        (getattr(model, EVIL)(vg.tensor([[1.0, 2.0]])) * w).sum().backward()
    path = recorded.graph.to_html(tmp_path / "hostile.html", title=EVIL)
    page = open_page(path)
    wait_until_drawn(page)
    assert page.locator("img").count() == 0
    assert page.locator("h1").inner_text() == EVIL
    # the leaf named EVIL, drawn as text (the tooltip below shows it whole)
    assert page.locator("svg.vg-graph text", has_text="onerror=alert(1)").count() >= 1
    page.locator('g.vg-node[data-node-id="n4"]').hover()
    assert EVIL in page.locator(".vg-tooltip").inner_text()
    screenshot(page, "hostile-names.png")


def test_the_notebook_fragment_draws_inside_its_frame(open_page, tmp_path):
    x = vg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    with vg.trace() as recorded:
        (x.tanh() * x).sum().backward()
    graph = recorded.graph
    path = tmp_path / "notebook.html"
    path.write_text(f"<!DOCTYPE html><html><body><p>a notebook cell</p>{to_html_fragment(graph)}</body></html>",
                    encoding="utf-8")
    page = open_page(path)
    frame = page.frame_locator("iframe.vizgrad-graph")
    wait_until_drawn(frame)
    assert frame.locator("svg.vg-graph g.node").count() == len(graph.nodes)
    assert frame.locator("h1").count() == 0              # the fragment is the graph panel alone
    screenshot(page, "notebook-fragment.png")
