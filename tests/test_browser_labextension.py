"""vizgrad's JupyterLab extension end to end: JupyterLab (tests/lab_server.py) with the
extension that the package installs, Debian's Chromium driven by Playwright.

- A saved notebook whose output is a graph (what ``vizgrad.show`` emits), opened with no
  kernel (the server runs with ``notebook_starts_kernel=False``, and the test checks that
  no kernel or session exists), draws the interactive graph: one SVG node per graph node,
  the backward replay, zoom, node details.
- "Open in vizgrad panel" on the output's context menu opens the side panel with that
  graph, and the panel stays in view while the notebook scrolls.
- From the command palette, the command pins the panel to the active notebook: the panel
  follows the notebook's latest graph output as cells run on a kernel, and stops when
  unpinned. An open panel comes back, following the active notebook, when the page reloads.
- The pages ask no host but the server for anything, and log no errors.

Screenshots go to test-artifacts/browser-labextension/.
"""

import re
from pathlib import Path

import nbformat
import pytest

import chromium
import graph_models
import vizgrad as vg
from lab_server import KERNEL_DISPLAY_NAME, running_jupyterlab
from vizgrad import nn

# one JupyterLab for the module: keep its tests on one xdist worker
pytestmark = pytest.mark.xdist_group("jupyterlab-extension")

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-labextension"
MIME = "application/vnd.vizgrad.graph+json"
OUTPUT = ".jp-vizgrad-graph"
DRAWN = '[data-testid="vg-graph-widget"][data-ready="true"]'
PANEL = '[data-testid="vg-lab-panel"]'
ACTIVE_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"   # the workspace may reopen others
FILLER_CELLS = 40          # enough text below the graph that the notebook scrolls


def saved_graph():
    """A traced MLP step (modules, parameters, backward) as its Graph."""
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with vg.trace() as recording:
        loss = model(vg.randn(5, 3)).pow(2).mean()
        loss.backward()
    return recording.graph


def transformer_output():
    """The 4-block transformer's graph output (tests/graph_models.py)."""
    model, graph = graph_models.traced("transformer")
    return graph._repr_mimebundle_()


def transformer_top_groups():
    """The keys of the transformer's top-level groups: its modules by name, the loss's
    cross_entropy (a composite function) by group id."""
    model, graph = graph_models.traced("transformer")
    loss = next(group.id for group in graph.groups if group.name == "cross_entropy")
    return ["embed", "blocks", "head", loss]


def saved_notebook(graph):
    """A notebook as a teacher would hand it out: run, saved, its output kept."""
    data, metadata = graph._repr_mimebundle_()
    transformer, transformer_metadata = transformer_output()
    cells = [
        nbformat.v4.new_markdown_cell("# A saved vizgrad graph"),
        nbformat.v4.new_code_cell("vg.show(recording)", execution_count=1, outputs=[
            nbformat.v4.new_output("display_data", data=data, metadata=metadata)]),
        nbformat.v4.new_code_cell("vg.show(transformer_step)", execution_count=2, outputs=[
            nbformat.v4.new_output("display_data", data=transformer, metadata=transformer_metadata)]),
    ]
    cells += [nbformat.v4.new_markdown_cell(f"Paragraph {i}: " + "text to scroll past. " * 30) for i in range(FILLER_CELLS)]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.validate(notebook)
    return notebook


FOLLOW_CELLS = [
    "import vizgrad as vg\nx = vg.tensor([1.0, 2.0], requires_grad=True)",
    "a = (x * 2).sum()\na.backward()\nvg.show(a)",
    "b = (x.exp() * x + 1).sum()\nb.backward()\nvg.show(b)",
    "c = x.tanh().sum()\nvg.show(c)",
]


@pytest.fixture(scope="module")
def browser():
    with chromium.launch(needs=("jupyterlab", "ipykernel", "nbformat")) as browser:
        yield browser


@pytest.fixture(scope="module")
def graph():
    return saved_graph()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, graph):
    root = tmp_path_factory.mktemp("lab-extension")
    nbformat.write(saved_notebook(graph), str(root / "saved.ipynb"))
    follow = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in FOLLOW_CELLS],
                                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
    nbformat.write(follow, str(root / "follow.ipynb"))
    # no notebook starts a kernel by opening it: a saved output must draw on its own
    with running_jupyterlab(root, options=["--LabApp.notebook_starts_kernel=False"]) as server:
        yield server


@pytest.fixture
def page(browser, lab):
    """A page of the server; at the end fails on console errors, page errors and requests
    to any host but the server."""
    page = browser.new_page(viewport={"width": 1500, "height": 950})
    problems = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}")
            if not from_another_extension(error.stack or "") else None)
    page.on("request", lambda request: problems.append(f"network request: {request.url[:120]}")
            if not request.url.startswith((lab.base_url, "data:", "blob:", "about:")) else None)
    yield page
    page.close()
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def from_another_extension(stack):
    """True when an error's first frame is in another JupyterLab extension's code (the
    ipywidgets manager throws when a notebook has no kernel: not vizgrad's to fix)."""
    first = next((line for line in stack.splitlines() if "http" in line), "")
    name = re.search(r"/lab/extensions/((?:@[^/]+/)?[^/]+)/", first)
    return name is not None and name.group(1) != "vizgrad"


def screenshot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def open_notebook(page, lab, name, workspace=None):
    """Open the notebook ``name``; in the workspace ``workspace`` (a layout of its own, which
    starts empty) when given."""
    page.goto(lab.url(f"lab/workspaces/{workspace}/tree/{name}" if workspace else f"lab/tree/{name}"))
    page.locator(f"{ACTIVE_NOTEBOOK} .jp-Cell").first.wait_for(timeout=60_000)


def node_ids(locator):
    return locator.locator("svg g.vg-node").evaluate_all("elements => elements.map(e => e.dataset.nodeId)")


def nodes_drawn(locator):
    """How many graph nodes the drawing stands for: each node drawn, and each collapsed group's box by its size."""
    return sum(locator.locator("svg g.vg-node, svg g.vg-group").evaluate_all(
        "elements => elements.map(e => e.dataset.nodeId ? 1 : Number(e.dataset.size))"))


def open_box(page, output, key):
    """Click the collapsed group ``key``'s box and wait for the graph to be drawn anew."""
    before = output.locator("svg.vg-graph > g").get_attribute("id")
    output.locator(f'svg g.vg-group[data-group="{key}"]').click()
    page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                           arg=[output.element_handle(), before], timeout=30_000)


def run_command(page, label):
    """Run a command by its label from the command palette."""
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".lm-CommandPalette-input")
    palette.wait_for()
    palette.fill(label)
    page.locator(".lm-CommandPalette-item", has_text=label).first.click()


def test_a_saved_graph_output_is_interactive_with_no_kernel(page, lab, graph):
    open_notebook(page, lab, "saved.ipynb")
    output = page.locator(f"{ACTIVE_NOTEBOOK} {OUTPUT}").first
    view = output.locator(DRAWN)
    view.wait_for(timeout=60_000)
    screenshot(page, "saved-output.png")
    assert lab.request("api/kernels") == [] and lab.request("api/sessions") == []

    # the picture is the graph: every graph node drawn or in a module's box (collapsed to be legible), the saved status
    assert nodes_drawn(output) == len(graph.nodes)
    assert set(node_ids(output)) <= {node.id for node in graph.nodes}
    status = output.locator('[data-testid="vg-status"]').inner_text()
    assert f"{len(graph.nodes)} nodes" in status and "notebook output" in status
    assert output.locator("img, image").count() == 0      # the SVG fallback is not what is shown

    # backward replay: first step, next step, the highlight follows backward's order
    order = graph.backward_order
    output.locator('[data-testid="vg-step-first"]').click()
    output.locator("svg g.vg-node.vg-pending").first.wait_for()
    assert output.locator("svg g.vg-node.vg-active").count() == 0
    output.locator('[data-testid="vg-step-next"]').click()
    output.locator(f'svg g.vg-node.vg-active[data-node-id="{order[0]}"]').wait_for()
    assert output.locator("svg g.vg-node.vg-active").count() == 1
    assert f"backward step 1 of {len(order)}" in output.locator('[data-testid="vg-step-text"]').inner_text()
    assert output.locator('[data-testid="vg-chain-rule"]').inner_text().strip() != ""

    # zoom changes the view; a click on a node shows its details
    before = output.locator("svg.vg-graph").get_attribute("viewBox")
    output.locator('[data-testid="vg-zoom-in"]').click()
    assert output.locator("svg.vg-graph").get_attribute("viewBox") != before
    output.locator('[data-testid="vg-zoom-fit"]').click()
    parameter = next(node for node in graph.nodes if node.kind == "parameter")
    if output.locator(f'svg g.vg-node[data-node-id="{parameter.id}"]').count() == 0:
        open_box(page, output, parameter.name.rsplit(".", 1)[0])      # inside its module's box: open it
    output.locator(f'svg g.vg-node[data-node-id="{parameter.id}"]').click()
    inspector = output.locator(f'[data-testid="vg-inspector"][data-node-id="{parameter.id}"]')
    inspector.wait_for()
    assert parameter.name in inspector.inner_text()
    screenshot(page, "saved-output-inspected.png")
    # its value and gradient heatmaps: a cell per element, read row by row from the flat matrix
    rows, cols = parameter.shape
    heatmap = inspector.locator('[data-testid="vg-heatmap-value"]')
    heatmap.scroll_into_view_if_needed()
    titles = heatmap.locator("title").all_text_contents()
    assert len(titles) == rows * cols and titles[cols].startswith("[1, 0] = ") and titles[-1].startswith(f"[{rows - 1}, {cols - 1}]")
    assert inspector.locator('[data-testid="vg-heatmap-grad"] rect').count() == rows * cols
    screenshot(page, "saved-output-heatmaps.png")
    assert lab.request("api/kernels") == []


def test_a_saved_transformer_output_opens_by_group_replays_and_searches_with_no_kernel(page, lab):
    open_notebook(page, lab, "saved.ipynb")
    output = page.locator(f"{ACTIVE_NOTEBOOK} {OUTPUT}").nth(1)
    output.scroll_into_view_if_needed()
    output.locator(DRAWN).wait_for(timeout=60_000)
    groups = output.locator("svg g.vg-group").evaluate_all("boxes => boxes.map((b) => b.dataset.group)")
    assert groups == transformer_top_groups()                  # 144 nodes: grouped by default

    def redrawn(action):
        before = output.locator("svg.vg-graph > g").get_attribute("id")
        action()
        page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                               arg=[output.element_handle(), before], timeout=30_000)

    redrawn(lambda: output.locator('g.vg-group[data-group="blocks"]').click())
    assert output.locator("svg g.vg-group text", has_text="Block ×4").count() == 1
    assert output.locator('[data-testid="vg-crumb"]').all_inner_texts() == ["graph", "Sequential"]
    # the replay lights the folded blocks' box while backward is inside them
    slider = output.locator('[data-testid="vg-step-slider"]')
    slider.fill("40")        # (before it, the last step lights the embedding's box: wait for the move)
    output.locator("svg g.vg-group.vg-active", has_text="Block ×4").wait_for()
    assert "Block ×4" in output.locator("svg g.vg-group.vg-active").text_content()
    screenshot(page, "transformer-output-blocks.png")

    output.locator('[data-testid="vg-search"]').fill("softmax")
    result = output.locator('[data-testid="vg-search-result"]').first
    target = result.get_attribute("data-node-id")
    redrawn(lambda: result.click())
    found = output.locator(f'svg g.vg-node[data-node-id="{target}"]')
    assert "vg-selected" in found.get_attribute("class")
    output.locator(f'[data-testid="vg-inspector"][data-node-id="{target}"]').wait_for()
    screenshot(page, "transformer-output-search.png")
    assert lab.request("api/kernels") == []


def test_open_in_vizgrad_panel_keeps_the_graph_in_view(page, lab, graph):
    open_notebook(page, lab, "saved.ipynb")
    output = page.locator(f"{ACTIVE_NOTEBOOK} {OUTPUT}").first
    output.locator(DRAWN).wait_for(timeout=60_000)
    output.locator('[data-testid="vg-status"]').click(button="right")
    page.locator(".lm-Menu-item", has_text="Open in vizgrad panel").click()

    panel = page.locator(PANEL)
    panel.locator(DRAWN).wait_for(timeout=60_000)
    assert nodes_drawn(panel) == len(graph.nodes)
    assert panel.locator('[data-testid="vg-lab-panel-source"]').inner_text() == "from saved.ipynb"
    assert panel.get_attribute("data-pinned") == "false"
    # it opens wide enough to read (JupyterLab's side area is narrower by default), and its edge drags to widen it
    width = panel.bounding_box()["width"]
    assert width >= 420
    edge = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)").last
    handle = edge.bounding_box()
    assert abs(handle["x"] - panel.bounding_box()["x"]) < 4          # the edge between the notebook and the panel
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(handle["x"] - 120, handle["y"] + handle["height"] / 2, steps=4)
    page.mouse.up()
    assert panel.bounding_box()["width"] >= width + 100

    # scroll the notebook to its end: the output leaves the screen, the panel stays
    page.locator(f"{ACTIVE_NOTEBOOK} .jp-Cell").last.scroll_into_view_if_needed()
    viewport = page.viewport_size
    assert not output.is_visible() or output.bounding_box()["y"] + output.bounding_box()["height"] < 0
    box = panel.locator("svg.vg-graph").bounding_box()
    assert box is not None and 0 <= box["y"] < viewport["height"] and box["x"] > viewport["width"] / 2
    screenshot(page, "panel-after-scrolling.png")
    assert lab.request("api/kernels") == []


def test_the_pinned_panel_follows_the_latest_graph_output(page, lab):
    # a kernel for this notebook (the server starts none by itself)
    lab.request("api/sessions", method="POST",
                body={"path": "follow.ipynb", "type": "notebook", "name": "follow.ipynb", "kernel": {"name": "python3"}})
    open_notebook(page, lab, "follow.ipynb")
    page.locator(".jp-StatusBar-Widget", has_text=f"{KERNEL_DISPLAY_NAME} | Idle").wait_for(timeout=60_000)
    cells = page.locator(f"{ACTIVE_NOTEBOOK} .jp-CodeCell")
    panel = page.locator(PANEL)

    def run(index):
        cells.nth(index).click()
        page.keyboard.press("Shift+Enter")
        cells.nth(index).locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[\d+\]")).wait_for(timeout=60_000)

    def panel_ops():
        panel.locator(DRAWN).wait_for(timeout=60_000)
        labels = panel.locator("svg g.vg-kind-op").evaluate_all("elements => elements.map(e => e.textContent)")
        return " ".join(labels)

    run(0)
    run(1)
    cells.nth(1).locator(OUTPUT).locator(DRAWN).wait_for(timeout=60_000)
    run_command(page, "Open in vizgrad panel")
    panel.wait_for(timeout=30_000)
    assert panel.get_attribute("data-pinned") == "true"
    assert panel.locator('[data-testid="vg-lab-panel-source"]').inner_text() == "following follow.ipynb"
    first = panel_ops()
    assert "Mul" in first and "Exp" not in first

    run(2)                                           # a new graph output: the panel follows
    page.wait_for_function("""selector => [...document.querySelectorAll(selector + ' svg g.vg-kind-op')]
                              .some(e => e.textContent.includes('Exp'))""", arg=PANEL, timeout=60_000)
    assert "Exp" in panel_ops()
    screenshot(page, "panel-following.png")

    panel.locator('[data-testid="vg-lab-panel-pin"]').click()   # unpinned: it keeps what it shows
    assert panel.get_attribute("data-pinned") == "false"
    run(3)
    cells.nth(3).locator(OUTPUT).locator(DRAWN).wait_for(timeout=60_000)
    ops = panel_ops()
    assert "Exp" in ops and "Tanh" not in ops


def test_the_panel_comes_back_after_a_reload(page, lab):
    open_notebook(page, lab, "saved.ipynb", workspace="reload")   # nothing restored from the other tests
    page.locator(f"{ACTIVE_NOTEBOOK} {OUTPUT}").first.locator(DRAWN).wait_for(timeout=60_000)
    # JupyterLab saves the layout to the server's workspace shortly after it changes
    with page.expect_request(lambda request: request.method == "PUT" and "/api/workspaces/reload" in request.url
                             and "vizgrad-graph-panel" in (request.post_data or ""), timeout=60_000):
        run_command(page, "Open in vizgrad panel")
    panel = page.locator(PANEL)
    panel.locator(DRAWN).wait_for(timeout=60_000)

    page.reload()                     # the layout restorer reopens it, following the active notebook
    panel.locator(DRAWN).wait_for(timeout=60_000)
    assert panel.is_visible()
    assert panel.get_attribute("data-pinned") == "true"
    assert panel.locator('[data-testid="vg-lab-panel-source"]').inner_text() == "following saved.ipynb"
    # the notebook's latest graph output: the transformer, grouped by module
    groups = panel.locator("svg g.vg-group").evaluate_all("boxes => boxes.map((box) => box.dataset.group)")
    assert groups == transformer_top_groups()
    screenshot(page, "panel-after-reload.png")


def test_the_saved_notebook_holds_the_graph_json_and_an_svg_picture(lab, graph):
    """What front ends without the extension see: the same output has an SVG picture."""
    saved = nbformat.read(str(lab.root_dir / "saved.ipynb"), as_version=4)
    output = saved.cells[1].outputs[0]
    assert output["data"][MIME]["nodes"][0]["id"] == graph.nodes[0].id
    assert output["data"]["image/svg+xml"].lstrip().startswith("<svg")
    assert output["metadata"][MIME]["dot"].startswith("digraph")
