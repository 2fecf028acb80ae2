"""The graph output for front ends without vizgrad's extension (vizgrad/render/inline.py), in
Debian's Chromium driven by Playwright at 1280×800:

- the ``text/html`` output in a page that first defines the loaders VS Code's and Colab's
  output frames have (``define`` with ``define.amd``, ``module``, ``exports``): two outputs
  on one page render with no page or console error, leak no global, leave the loaders as
  they were, and each pans, zooms, shows tooltips and its own details;
- ``jupyter nbconvert --to html`` of a notebook run with nbclient that calls ``vg.show(loss)``
  on a 2-layer LSTM over 12 steps: the graph is drawn inside its cell, every label in view
  reads 11 px or more, dragging pans it, a click on the output shows its value; the output
  is small, and lesson 07 saved with all its outputs stays under 8 MB.

Screenshots go to test-artifacts/browser-inline/: look at them.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest

import chromium
import graph_models
import vizgrad as vg
from vizgrad.render import notebook

pytest.importorskip("pygraphviz", reason="the drawing is laid out by the Graphviz that pygraphviz bundles")

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
ARTIFACTS = ROOT / "test-artifacts" / "browser-inline"
KERNEL_NAME = "vizgrad-inline-test"
MAX_OUTPUT_BYTES = 300_000
MAX_LESSON_BYTES = 8_000_000
LOADERS = ("<script>window.define = function () { throw new Error('define was called'); };"
           "window.define.amd = {}; window.module = {exports: {}}; window.exports = {};</script>")
# Each drawn label's size on screen (font size × the drawing's scale there), for those inside the stage.
LABELS = """root => {
    const stage = root.querySelector(".vg-inline-stage").getBoundingClientRect();
    return [...root.querySelectorAll("svg.vg-drawing text")].map((text) => {
        const box = text.getBoundingClientRect();
        const inside = box.left >= stage.left && box.right <= stage.right && box.top >= stage.top && box.bottom <= stage.bottom;
        return { text: text.textContent, inside, px: parseFloat(getComputedStyle(text).fontSize) * box.height / text.getBBox().height };
    }).filter((label) => label.inside && label.text.trim());
}"""


@pytest.fixture(scope="module")
def browser():
    with chromium.launch() as browser:
        yield browser


def open_page(browser):
    """A 1280×800 page that records page errors and console errors, with every network request refused."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    problems = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(f"console: {message.text}") if message.type == "error"
            and "Failed to load resource" not in message.text else None)
    page.route("http*://**/*", lambda route: route.abort())
    return page, problems


def html_of(loss_or_graph):
    return notebook.mimebundle(loss_or_graph if isinstance(loss_or_graph, vg.Graph) else vg.graph(loss_or_graph))[0]["text/html"]


def small_graph():
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.name = "x <b>bold</b>"
    loss = (x * x).sum()
    loss.backward()
    return vg.graph(loss)


def test_two_outputs_under_amd_and_commonjs_loaders_render_isolated(browser, tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _, loss = graph_models.user_loss("lstm")
    outputs = [html_of(loss), html_of(small_graph())]
    empty = tmp_path / "loaders.html"
    empty.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'>{LOADERS}</head><body></body></html>")
    page, problems = open_page(browser)
    page.goto(empty.as_uri())
    before = set(page.evaluate("Object.keys(window)"))
    full = tmp_path / "two-outputs.html"
    full.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'>{LOADERS}</head><body>"
                    f"<div style='width:1000px;margin:16px'>{outputs[0]}<p>between the outputs</p>{outputs[1]}</div></body></html>")
    page.goto(full.as_uri())
    page.wait_for_selector(".vg-inline[data-vg-ready]")
    assert set(page.evaluate("Object.keys(window)")) - before == set()
    assert page.evaluate("typeof define === 'function' && JSON.stringify(define.amd) === '{}' "
                         "&& Object.keys(module).join() === 'exports' && Object.keys(module.exports).length === 0 "
                         "&& Object.keys(exports).length === 0")
    roots = page.locator(".vg-inline")
    assert roots.count() == 2
    assert [roots.nth(i).get_attribute("data-vg-ready") for i in range(2)] == ["true", "true"]
    assert roots.nth(0).get_attribute("id") != roots.nth(1).get_attribute("id")
    page.screenshot(path=str(ARTIFACTS / "two-outputs.png"))

    # the second output: its leaf's details, with the name as text; the first output's panel stays shut
    second = roots.nth(1)
    leaf = second.locator("g.node").filter(has_text="x <b>bold</b>")
    leaf.hover()
    tip = second.locator(".vg-inline-tip")
    assert tip.is_visible() and tip.inner_text().startswith("x <b>bold</b> · (3,) · float32")
    leaf.click()
    info = second.locator(".vg-inline-info")
    assert info.is_visible() and "x <b>bold</b>" in info.locator("h4").inner_text()
    assert "grad mean ± std" in info.inner_text() and "2, 4, 6" in info.inner_text()    # its gradient, 2x
    assert second.locator("b").count() == 0
    assert roots.nth(0).locator(".vg-inline-info").is_hidden()
    assert second.get_attribute("data-selected") == leaf.get_attribute("data-vg-id")
    page.screenshot(path=str(ARTIFACTS / "two-outputs-details.png"))
    info.locator(".vg-inline-close").click()
    assert info.is_hidden() and second.get_attribute("data-selected") is None

    # the first: zoom buttons and the wheel change its scale, a drag its position
    first = roots.nth(0)
    drawing = first.locator("svg.vg-drawing")
    zoom = float(first.get_attribute("data-zoom"))
    first.locator('button[data-zoom="in"]').click()
    assert float(first.get_attribute("data-zoom")) == pytest.approx(zoom * 1.25, rel=1e-3)
    box = first.locator(".vg-inline-stage").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, 300)
    assert float(first.get_attribute("data-zoom")) < zoom
    moved_from = drawing.evaluate("svg => svg.style.transform")
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 120, box["y"] + box["height"] / 2 + 60, steps=5)
    page.mouse.up()
    assert drawing.evaluate("svg => svg.style.transform") != moved_from
    assert first.locator(".vg-inline-info").is_hidden()                  # a drag is no click
    first.locator('button[data-zoom="fit"]').click()
    assert first.get_attribute("data-zoom") == "1.000"
    for _ in range(4):                                                    # the whole drawing in view
        first.locator('button[data-zoom="out"]').click()
    page.screenshot(path=str(ARTIFACTS / "two-outputs-zoomed-out.png"))
    box = first.locator('g.node[data-vg-id^="m_"]').first                 # a layer's 12 steps, folded
    box.click()
    details = first.locator(".vg-inline-info").inner_text()
    assert "t=0 ×12" in details and "12 identical: lstm.layer0.t0 … lstm.layer0.t11" in details, details
    assert re.search(r"holds\s+\d+ nodes, \d+ ops", details) and "Sigmoid ×" in details
    page.screenshot(path=str(ARTIFACTS / "two-outputs-group.png"))

    # inserted later as a front end does (scripts run when the fragment is attached), hidden at first
    # as an output laid out after its script ran: it mounts, and fits once it is shown
    page.evaluate("""html => {
        const host = document.createElement("div");
        host.id = "late";
        host.style.cssText = "display: none; width: 700px";
        document.body.append(host);
        host.append(document.createRange().createContextualFragment(html));
    }""", outputs[0])
    assert page.locator(".vg-inline[data-vg-ready]").count() == 3
    page.evaluate("document.getElementById('late').style.display = 'block'")
    late = page.locator("#late .vg-inline")
    page.wait_for_function("""() => {
        const root = document.querySelector("#late .vg-inline");
        const id = JSON.parse(root.querySelector("script.vg-inline-data").textContent).root;
        const output = [...root.querySelectorAll("g.node")].find((g) => g.dataset.vgId === id).getBoundingClientRect();
        const stage = root.querySelector(".vg-inline-stage").getBoundingClientRect();
        return output.left >= stage.left && output.right <= stage.right && output.top >= stage.top && output.bottom <= stage.bottom;
    }""", timeout=5000)
    assert late.get_attribute("data-zoom") == "1.000"
    assert set(page.evaluate("Object.keys(window)")) - before == set()
    page.close()
    assert problems == []


@pytest.fixture(scope="module")
def kernel_manager_factory(tmp_path_factory):
    """Kernel managers that start this interpreter's ipykernel with the checkout on PYTHONPATH."""
    pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    folder = tmp_path_factory.mktemp("kernels")
    (folder / KERNEL_NAME).mkdir()
    python_path = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    (folder / KERNEL_NAME / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "vizgrad inline (test)", "language": "python",
        "env": {"PYTHONPATH": python_path, "MPLBACKEND": "Agg"}}))
    specs = KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)
    return lambda: KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)


def execute(notebook_node, kernel_manager_factory, cwd):
    from nbclient import NotebookClient
    manager = kernel_manager_factory()
    client = NotebookClient(notebook_node, km=manager, timeout=180, allow_errors=False,
                            resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute()
    finally:
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)
    return notebook_node


def test_nbconvert_html_of_an_lstm_is_drawn_pans_and_shows_values(browser, kernel_manager_factory, tmp_path):
    import nbformat
    from nbconvert import HTMLExporter
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cells = [nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport graph_models\nimport vizgrad as vg"),
             nbformat.v4.new_code_cell('_, loss = graph_models.user_loss("lstm")\nvg.show(loss)')]
    ran = execute(nbformat.v4.new_notebook(cells=cells), kernel_manager_factory, tmp_path)
    outputs = ran.cells[1].outputs
    assert [list(output["data"]) for output in outputs] == [[notebook.MIME_TYPE, "text/html", "image/svg+xml", "text/plain"]]
    size = len(json.dumps(outputs))
    assert size < MAX_OUTPUT_BYTES, size
    body, _ = HTMLExporter().from_notebook_node(ran)
    exported = ARTIFACTS / "lstm-nbconvert.html"
    exported.write_text(body, encoding="utf-8")

    page, problems = open_page(browser)
    page.goto(exported.as_uri())
    root = page.locator(".vg-inline[data-vg-ready]")
    root.wait_for()
    assert root.count() == 1
    cell = page.locator(".jp-Cell").nth(1).bounding_box()
    box = root.bounding_box()
    assert box["x"] >= cell["x"] - 0.5 and box["x"] + box["width"] <= cell["x"] + cell["width"] + 0.5   # fits its cell
    assert box["height"] <= 700
    nodes = root.locator("svg.vg-drawing g.node")
    assert nodes.count() > 20
    labels = root.evaluate(LABELS)
    assert len(labels) > 10 and min(label["px"] for label in labels) >= 11 - 0.01, sorted(labels, key=lambda l: l["px"])[:3]
    output_id = root.evaluate("root => JSON.parse(root.querySelector('script.vg-inline-data').textContent).root")
    output = root.locator(f'g.node[data-vg-id="{output_id}"]')
    assert output.is_visible() and "Mean" in output.text_content()
    page.screenshot(path=str(ARTIFACTS / "lstm-nbconvert.png"))

    output.click()
    info = root.locator(".vg-inline-info")
    value = f"{float(loss_value(ran)):.4g}"
    assert info.is_visible() and f"value{value}" in info.inner_text().replace("\n", "").replace("\t", ""), info.inner_text()
    page.screenshot(path=str(ARTIFACTS / "lstm-nbconvert-clicked.png"))

    drawing = root.locator("svg.vg-drawing")
    before = drawing.evaluate("svg => svg.style.transform")
    stage = root.locator(".vg-inline-stage").bounding_box()
    page.mouse.move(stage["x"] + stage["width"] * 0.15, stage["y"] + 40)
    page.mouse.down()
    page.mouse.move(stage["x"] + stage["width"] * 0.15 + 60, stage["y"] + 300, steps=6)
    page.mouse.up()
    assert drawing.evaluate("svg => svg.style.transform") != before
    page.screenshot(path=str(ARTIFACTS / "lstm-nbconvert-panned.png"))
    page.close()
    assert problems == []


def loss_value(ran):
    """The loss the notebook's vg.show drew, read from its Graph JSON output."""
    graph = ran.cells[1].outputs[0]["data"][notebook.MIME_TYPE]
    return graph["nodes"][-1]["value"]["sample"][0]


def test_lesson_07_saved_with_all_outputs_stays_small(kernel_manager_factory, tmp_path):
    import nbformat
    path = ROOT / "lessons" / "07-convnets-digits.ipynb"
    ran = execute(nbformat.read(path, as_version=4), kernel_manager_factory, path.parent)
    saved = tmp_path / path.name
    nbformat.write(ran, saved)
    print(f"\n{path.name} saved with its outputs: {saved.stat().st_size:,} bytes")
    assert saved.stat().st_size < MAX_LESSON_BYTES, saved.stat().st_size
    pages = [output["data"]["text/html"] for cell in ran.cells for output in cell.get("outputs", [])
             if "text/html" in output.get("data", {}) and "vg-inline" in output["data"]["text/html"]]
    assert pages and all(len(text) < MAX_OUTPUT_BYTES for text in pages)


def test_notebook_7_without_vizgrads_extension_draws_a_saved_graph_output(browser, kernel_manager_factory, tmp_path):
    """A front end that does not know vizgrad's MIME type (here Notebook 7 with the extension
    disabled, its saved notebook trusted as its owner's would be) shows the ``text/html``: the
    drawn graph, which pans and opens a node's details, with no kernel running."""
    import nbformat
    from lab_server import running_jupyterlab
    cells = [nbformat.v4.new_code_cell("import vizgrad as vg\nfrom vizgrad import nn\n"
                                       "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
                                       "loss = model(vg.randn(5, 3)).pow(2).mean()\nloss.backward()\nvg.show(loss)")]
    ran = execute(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                                 "language": "python"}}),
                  kernel_manager_factory, tmp_path)
    root_dir = tmp_path / "served"
    root_dir.mkdir()
    path = root_dir / "saved.ipynb"
    nbformat.write(ran, str(path))
    with running_jupyterlab(root_dir, app="notebook", options=["--LabApp.notebook_starts_kernel=False"],
                            disabled_extensions=["vizgrad"], trusted=[path]) as server:
        page, problems = open_page(browser)
        page.unroute("http*://**/*")
        page.route("http*://**/*", lambda route: route.continue_() if route.request.url.startswith(server.base_url)
                   else route.abort())
        page.goto(server.url("notebooks/saved.ipynb"))
        graph = page.locator(".jp-OutputArea-output .vg-inline[data-vg-ready]")
        graph.wait_for(timeout=60_000)
        assert page.locator(".jp-vizgrad-graph").count() == 0                 # not vizgrad's own renderer
        assert graph.locator("svg.vg-drawing g.node").count() >= 3
        page.screenshot(path=str(ARTIFACTS / "notebook7-no-extension.png"))
        output_id = graph.evaluate("root => JSON.parse(root.querySelector('script.vg-inline-data').textContent).root")
        graph.locator(f'g.node[data-vg-id="{output_id}"]').click()
        info = graph.locator(".vg-inline-info")
        assert info.is_visible() and "loss" in info.inner_text()
        drawing = graph.locator("svg.vg-drawing")
        before = drawing.evaluate("svg => svg.style.transform")
        stage = graph.locator(".vg-inline-stage").bounding_box()
        page.mouse.move(stage["x"] + 40, stage["y"] + 40)
        page.mouse.down()
        page.mouse.move(stage["x"] + 140, stage["y"] + 90, steps=5)
        page.mouse.up()
        assert drawing.evaluate("svg => svg.style.transform") != before
        page.screenshot(path=str(ARTIFACTS / "notebook7-no-extension-clicked.png"))
        page.close()
    # not vizgrad's: ipywidgets' manager logs that the notebook has no kernel, and Notebook 7.6
    # itself throws "reading 'schema'" on this page whether vizgrad is installed or not
    assert [problem for problem in problems if "kernel" not in problem.lower()
            and "reading 'schema'" not in problem] == []
