"""The live widgets end to end: JupyterLab, a kernel running this interpreter, Debian's
Chromium driven by Playwright.

The test starts JupyterLab (tests/lab_server.py), opens tests/notebooks/widgets.ipynb,
runs every cell from the Run menu and checks what a person would see:
- GraphView draws one SVG node per graph node, and its "next step" button moves the
  highlight along the graph's backward order;
- GradFlowView and the dashboard draw a line per parameter (and the loss curve, the
  update ratios and a histogram per parameter);
- OptimizerView steps the race and shows Adam's moments;
- Playground's train loss falls when it trains;
- a 300-node graph is laid out and drawn in the browser (the time is printed);
- the page logs no console or page errors, asks no host but the server for anything,
  and no cell writes to stderr.
Screenshots go to test-artifacts/browser-widgets/.

Notebook cells carry a tag naming what they show; a cell that knows something the page
should agree with (the graph's backward order, the parameter names) prints it on a
``VG-FACTS {json}`` line, which the test reads back from the page.

The module's tests share one server and one notebook run (about 10 s to open it and run
its cells): they stay on one xdist worker (``--dist loadgroup`` in the Makefile).

Skipped only where Chromium cannot be (no /usr/bin/chromium outside CI); under CI
(``CI=true``, where .ci/run installs it) a missing browser fails the test, and so does a
missing JupyterLab, ipykernel, anywidget, ipywidgets or Playwright everywhere (they come
with ``.[dev]``).
"""

import json
import re
import shutil
import time
from pathlib import Path

import pytest

import chromium
from lab_server import KERNEL_DISPLAY_NAME, running_jupyterlab

# one JupyterLab and one notebook run for the whole module: keep its tests on one xdist worker
pytestmark = pytest.mark.xdist_group("jupyterlab")

NOTEBOOK = Path(__file__).resolve().parent / "notebooks" / "widgets.ipynb"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-widgets"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
GRAPH_VIEW = '[data-testid="vg-graph-widget"]'
BIG_GRAPH_NODES = 300
LAYOUT_BOUND_S = 5.0       # the issue asks for under one second; a generous bound keeps slow CI honest


@pytest.fixture(scope="module")
def browser():
    with chromium.launch(needs=("jupyterlab", "ipykernel", "anywidget", "ipywidgets")) as browser:
        yield browser


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-root")
    shutil.copy(NOTEBOOK, root)             # the server may write beside it (checkpoints)
    with running_jupyterlab(root) as server:
        yield server


class Notebook:
    """The notebook open in a page, its cells by tag, and what the page reported."""

    def __init__(self, page, tags):
        self.page = page
        self.tags = tags                    # cell index -> its tags
        self.problems = []
        self.stderr_seen = 0

    def index(self, tag):
        return next(i for i, tags in enumerate(self.tags) if tag in tags)

    def cell(self, tag):
        return self.page.locator(".jp-Notebook .jp-Cell").nth(self.index(tag))

    def facts(self, tag):
        """The ``VG-FACTS`` line that cell ``tag`` printed, decoded."""
        text = self.cell(tag).locator(".jp-OutputArea-output", has_text="VG-FACTS").first.inner_text()
        return json.loads(text.split("VG-FACTS", 1)[1].strip().splitlines()[0])

    def widget(self, tag, testid):
        """The element ``[data-testid=testid]`` in the output of cell ``tag``, once it is visible."""
        element = self.cell(tag).locator(f'[data-testid="{testid}"]').first
        element.wait_for(timeout=30_000)
        return element

    def screenshot(self, tag, name=None):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.cell(tag).screenshot(path=str(ARTIFACTS / f"{name or tag}.png"))

    def assert_no_problems(self):
        """Fail on console errors, page errors and dialogs so far, and on anything written
        to a cell's stderr since the cells ran (a widget's update failing in a timer thread)."""
        problems, self.problems[:] = list(self.problems), []
        written = self.page.eval_on_selector_all(STDERR, "elements => elements.map(e => e.textContent)")
        problems += [f"stderr output: {text}" for text in written[self.stderr_seen:]]
        self.stderr_seen = len(written)
        assert problems == [], "the page reported problems:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def notebook(browser, lab):
    """The test notebook open in JupyterLab with every cell run (Run > Run All Cells)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    # tall enough that the tallest widget (the dashboard) fits in a screenshot
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    nb = Notebook(page, [cell.get("metadata", {}).get("tags", []) for cell in cells])
    page.on("console", lambda message: nb.problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: nb.problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (nb.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    # the widgets carry everything they need: nothing but the server and in-page data
    page.on("request", lambda request: nb.problems.append(f"network request: {request.url[:120]}")
            if not request.url.startswith((lab.base_url, "data:", "blob:", "about:")) else None)
    try:
        started = time.perf_counter()
        page.goto(lab.url(f"lab/tree/{NOTEBOOK.name}"))
        page.locator(".jp-Notebook .jp-Cell").nth(len(cells) - 1).wait_for(timeout=60_000)
        # Run All before the notebook has its kernel would ask for one in a dialog instead
        page.locator(".jp-StatusBar-Widget", has_text=f"{KERNEL_DISPLAY_NAME} | Idle").wait_for(timeout=60_000)
        _time_the_drawing(page, nb.index("big_graph"))
        nb.cell("setup").click()            # the notebook is the current widget: Run All acts on it
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        _wait_for_all_cells(page, lab)
        print(f"\nJupyterLab opened the widget notebook and ran its cells in {time.perf_counter() - started:.1f} s")
        yield nb
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "failure.png"))
        raise
    finally:
        page.close()


def _wait_for_all_cells(page, lab):
    """Wait until every code cell has run (an execution count in its prompt) or one
    failed (a traceback: the cells after it never run); then fail on anything a cell
    wrote to stderr (tracebacks, warnings, a widget's failed update)."""
    first_prompt = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").first
    try:
        first_prompt.filter(has_text=re.compile(r"\[(\*|\d+)\]")).wait_for(timeout=15_000)
    except Exception as error:
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        raise AssertionError("Run > Run All Cells did not start the notebook's cells"
                             + (f"; JupyterLab shows a dialog: {dialogs}" if dialogs else "")) from error
    page.wait_for_function(
        """stderr => {
            const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
            const failed = [...document.querySelectorAll(stderr)]
                .some(e => /Traceback \\(most recent call last\\)|^\\s*\\w*(Error|Exception)\\b/m.test(e.textContent));
            return failed || (prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)));
        }""", arg=STDERR, timeout=120_000)
    written = page.eval_on_selector_all(STDERR, "elements => elements.map(e => e.textContent)")
    assert written == [], ("notebook cells wrote to stderr:\n" + "\n\n".join(written)
                           + f"\n\nthe server's log ends:\n{lab.log(2000)}")


def _time_the_drawing(page, index):
    """Before the cells run: watch cell ``index`` and note when its GraphView's root
    appears (the widget's render has started) and when its SVG shows all the graph's
    nodes (drawn, or inside a collapsed group's box: its data-size), plus two animation
    frames so that they were painted."""
    page.evaluate(
        """([index, root, count]) => {
            const timing = window.__vgLayoutTiming = {};
            const observer = new MutationObserver(() => {
                const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[index];
                const view = cell && cell.querySelector(root);
                if (!view) return;
                timing.rendering ??= performance.now();
                const shown = [...view.querySelectorAll('svg g.node')].reduce((sum, node) => sum + Number(node.dataset.size ?? 1), 0);
                if (shown >= count) {
                    timing.nodesDrawn = performance.now();
                    observer.disconnect();
                    requestAnimationFrame(() => requestAnimationFrame(() => { timing.painted = performance.now(); }));
                }
            });
            observer.observe(document.body, { childList: true, subtree: true });
        }""", [index, GRAPH_VIEW, BIG_GRAPH_NODES])


def _wait_until_drawn(view):
    """Wait for a GraphView to finish drawing (it marks its root); fail on its error."""
    view.page.wait_for_function("el => el.dataset.ready === 'true' || el.dataset.error !== undefined",
                                arg=view.element_handle(), timeout=30_000)
    assert view.get_attribute("data-error") is None, f"the GraphView could not draw: {view.get_attribute('data-error')}"


def _wait_for_training(view, steps):
    """Wait until a training widget has shown ``steps`` steps (the last update comes
    throttled, after the cell finished) and drawn them; fail on its error."""
    view.page.wait_for_function(
        "([el, steps]) => el.dataset.error !== undefined"
        " || (el.dataset.ready === 'true' && Number(el.dataset.step) >= steps)",
        arg=[view.element_handle(), steps], timeout=30_000)
    assert view.get_attribute("data-error") is None, f"the widget could not draw: {view.get_attribute('data-error')}"


def _drawn_lines(paths):
    """The names of the chart lines (their <title>) that have at least two points."""
    return paths.evaluate_all(
        "paths => paths.filter(p => (p.getAttribute('d').match(/[ML]/g) || []).length >= 2)"
        ".map(p => p.querySelector('title').textContent)")


def _wait_for_step(view, step):
    view.page.wait_for_function("([el, step]) => el.dataset.step === String(step)",
                                arg=[view.element_handle(), step], timeout=10_000)


def _painted_canvases(element):
    """How many of the canvases inside ``element`` have at least one painted pixel, and how many there are."""
    return element.evaluate(
        """root => {
            const canvases = [...root.querySelectorAll('canvas')];
            const painted = canvases.filter(canvas => {
                if (!canvas.width || !canvas.height) return false;
                const context = canvas.getContext('2d');
                if (!context) return true;             // a WebGL canvas: drawn by other means
                const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
                for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) return true;
                return false;
            });
            return [painted.length, canvases.length];
        }""")


def _number(text):
    """The first whole number in ``text`` ("step 3" gives 3)."""
    return int(re.search(r"\d+", text).group())


def _train_loss(text):
    """The train loss in the Playground's metrics line ("train loss 0.6931 · test loss ...")."""
    match = re.search(r"train loss ([-+0-9.e]+)", text)
    assert match, f"no train loss in the Playground's metrics: {text!r}"
    return float(match.group(1))


def node_ids(element, selector):
    return element.evaluate(f"root => [...root.querySelectorAll({json.dumps(selector)})].map(e => e.dataset.nodeId)")


# --- the tests ---------------------------------------------------------------------------------------------------

def test_the_notebook_runs_without_page_errors(notebook):
    assert notebook.facts("setup")["nodes"] > 0
    notebook.assert_no_problems()


def test_graph_view_draws_the_graph_and_steps_backward(notebook):
    facts = notebook.facts("setup")
    order = facts["backward_order"]
    view = notebook.widget("graph_view", "vg-graph-widget")
    _wait_until_drawn(view)
    assert view.locator("svg g.node").count() == facts["nodes"]
    notebook.screenshot("graph_view")

    # a finished backward pass opens at its last step; from "before backward", each
    # "next step" highlights the next node in backward's order, and only that node
    view.locator('[data-testid="vg-step-first"]').click()
    _wait_for_step(view, -1)
    assert node_ids(view, "g.vg-node.vg-active") == []
    for step in range(min(4, len(order))):
        view.locator('[data-testid="vg-step-next"]').click()
        _wait_for_step(view, step)
        assert node_ids(view, "g.vg-node.vg-active") == [order[step]], f"backward step {step}"
    notebook.screenshot("graph_view", "graph_view-stepped")
    notebook.assert_no_problems()


def test_grad_flow_view_draws_a_line_and_a_bar_per_layer(notebook):
    facts = notebook.facts("grad_flow")
    view = notebook.widget("grad_flow", "vg-grad-flow-widget")
    _wait_for_training(view, facts["steps"])
    lines = view.locator('[data-testid="vg-grad-flow-chart"] svg.vg-chart path.vg-line')
    assert _drawn_lines(lines) == facts["layers"]
    assert view.locator('[data-testid="vg-grad-flow-bars"] svg.vg-chart rect.vg-bar').count() == len(facts["layers"])
    assert view.locator('[data-testid="vg-flags"]').inner_text() == "no vanishing or exploding layers"
    notebook.screenshot("grad_flow")
    notebook.assert_no_problems()


def test_dashboard_draws_loss_gradients_ratios_and_histograms(notebook):
    facts = notebook.facts("dashboard")
    view = notebook.widget("dashboard", "vg-dashboard")
    _wait_for_training(view, facts["steps"])
    loss = view.locator('[data-testid="vg-curve"][data-curve="loss"]')
    assert _drawn_lines(loss.locator("svg.vg-chart path.vg-line")) == ["train"]
    gradients = view.locator('[data-testid="vg-grad-flow-chart"] svg.vg-chart path.vg-line')
    assert _drawn_lines(gradients) == facts["layers"]
    ratios = view.locator('[data-testid="vg-ratio-chart"] svg.vg-chart path.vg-line')
    assert sorted(_drawn_lines(ratios)) == sorted(name for name in facts["layers"])
    histograms = view.locator('[data-testid="vg-layer-histogram"]')
    assert histograms.evaluate_all("cells => cells.map(c => c.dataset.layer)") == facts["layers"]
    notebook.screenshot("dashboard")
    notebook.assert_no_problems()


def test_optimizer_view_races_on_the_surface(notebook):
    view = notebook.widget("optimizer_view", "optimizer-view")
    painted, canvases = _painted_canvases(view)
    assert canvases > 0 and painted == canvases, f"{painted} of {canvases} canvases painted"
    count = view.locator('[data-testid="optimizer-step-count"]')
    before = count.inner_text()
    view.locator('[data-testid="optimizer-step"]').click()
    notebook.page.wait_for_function("([el, before]) => el.textContent !== before",
                                    arg=[count.element_handle(), before], timeout=10_000)
    assert _number(count.inner_text()) == _number(before) + 1
    adam = view.locator('[data-testid="optimizer-state-adam"] tr[data-key]')
    assert {"exp_avg", "exp_avg_sq", "m_hat", "v_hat"} <= set(adam.evaluate_all("rows => rows.map(r => r.dataset.key)"))
    notebook.screenshot("optimizer_view")
    notebook.assert_no_problems()


def test_playground_loss_falls_when_it_trains(notebook):
    view = notebook.widget("playground", "playground-view")
    metrics = view.locator('[data-testid="playground-metrics"]')
    before = _train_loss(metrics.inner_text())
    train = view.locator('[data-testid="playground-train"]')
    train.click()
    assert train.get_attribute("aria-pressed") == "true"
    steps = view.locator('[data-testid="playground-step-count"]')
    notebook.page.wait_for_function("el => Number((el.textContent.match(/step (\\d+)/) || [0, 0])[1]) >= 100",
                                    arg=steps.element_handle(), timeout=30_000)
    train.click()                                   # pause
    notebook.page.wait_for_function("el => el.getAttribute('aria-pressed') === 'false'",
                                    arg=train.element_handle(), timeout=10_000)
    after = _train_loss(metrics.inner_text())
    print(f"\nPlayground: train loss {before} before training, {after} at {steps.inner_text()}")
    assert after < before
    painted, canvases = _painted_canvases(view)
    assert canvases > 0 and painted == canvases, f"{painted} of {canvases} canvases painted"
    notebook.screenshot("playground")
    notebook.assert_no_problems()


def test_a_300_node_graph_lays_out_and_draws_quickly(notebook):
    assert notebook.facts("big_graph")["nodes"] == BIG_GRAPH_NODES
    view = notebook.widget("big_graph", "vg-graph-widget")
    _wait_until_drawn(view)
    notebook.screenshot("big_graph")
    # 300 loose nodes start as chunks of consecutive nodes (src/graph-dot.js): every node is in one box
    sizes = view.locator("svg g.vg-group").evaluate_all("boxes => boxes.map((box) => Number(box.dataset.size))")
    assert len(sizes) == 5 and sum(sizes) + view.locator("svg g.vg-node").count() == BIG_GRAPH_NODES
    notebook.page.wait_for_function("() => window.__vgLayoutTiming.painted !== undefined", timeout=10_000)
    timing = notebook.page.evaluate("() => window.__vgLayoutTiming")
    seconds = (timing["painted"] - timing["rendering"]) / 1000
    print(f"\na {BIG_GRAPH_NODES}-node graph: laid out and drawn in {seconds:.3f} s (from the GraphView's render "
          f"to its nodes painted; the issue asks for under 1 s, the test allows {LAYOUT_BOUND_S:.0f} s)")
    assert seconds < LAYOUT_BOUND_S

    # a click opens a chunk (Python hears of it through the collapsed trait), search finds a node in another
    drawing = view.locator("svg.vg-graph > g")
    before = drawing.get_attribute("id")
    view.locator('g.vg-group[data-group="chunk:0"]').click()
    notebook.page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                                    arg=[view.element_handle(), before], timeout=30_000)
    assert view.locator('g.cluster[data-group="chunk:0"]').count() == 1
    assert view.locator('[data-testid="vg-crumb"]').all_inner_texts()[:1] == ["graph"]
    view.locator('[data-testid="vg-search"]').fill("n250")
    before = drawing.get_attribute("id")
    view.locator('[data-testid="vg-search-result"]').first.click()
    notebook.page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                                    arg=[view.element_handle(), before], timeout=30_000)
    found = view.locator('g.vg-node[data-node-id="n250"]')
    found.wait_for(timeout=10_000)
    assert "vg-selected" in found.get_attribute("class")
    notebook.page.wait_for_function("el => el.querySelector('[data-testid=\"vg-inspector\"]')?.dataset.nodeId === 'n250'",
                                    arg=view.element_handle(), timeout=10_000)
    notebook.screenshot("big_graph", "big_graph_search")
    notebook.assert_no_problems()
