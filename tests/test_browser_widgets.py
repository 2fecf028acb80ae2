"""The live widgets end to end: JupyterLab, a kernel running this interpreter, Debian's
Chromium driven by Playwright.

The test starts JupyterLab (tests/lab_server.py), opens tests/notebooks/widgets.ipynb,
runs every cell from the Run menu and checks what a person would see:
- GraphView draws one SVG node per graph node, and its "next step" button moves the
  highlight along the graph's backward order;
- GradFlowView and the dashboard draw a heatmap row and a bar per parameter (and the loss curve, the
  update ratios and a histogram per parameter); a 26-layer net's view shows its own
  model's steps only (another model trains after it) and no two of its labels overlap,
  and a 200-layer view thins its labels;
- OptimizerView steps the race and shows Adam's moments; at its default speed Momentum
  and Adam reach Rosenbrock's minimum (timed and printed), every trail pixel stands out
  against the surface under it (WCAG contrast from the drawn colours), a click restarts it;
- Playground's train loss falls when it trains; its diagram has one edge per weight
  (coloured by sign, as thick as the weight), a hovered edge tells its weight and
  gradient, a clicked unit shows its response and incoming weights;
- ConvExplorer draws every feature map and every input channel's kernel slice; a clicked
  unit shows its receptive field, its window on the previous layer's maps and a
  multiply-accumulate equal to the layer's output; Backward adds the gradient maps;
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
SIZES_NOTEBOOK = NOTEBOOK.with_name("widget-sizes.ipynb")
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
    for notebook in (NOTEBOOK, SIZES_NOTEBOOK):
        shutil.copy(notebook, root)         # the server may write beside it (checkpoints)
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


def test_graph_view_in_prediction_mode_hides_each_gradient_until_it_is_predicted(notebook):
    order = notebook.facts("graph_predict")["backward_order"]
    view = notebook.widget("graph_predict", "vg-graph-widget")
    _wait_until_drawn(view)
    view.locator('[data-testid="vg-step-first"]').click()
    _wait_for_step(view, -1)
    view.locator('[data-testid="vg-step-next"]').click()          # the output d: ∂d/∂d = 1
    _wait_for_step(view, 0)
    incoming = view.locator('[data-testid="vg-chain-incoming"]')
    assert incoming.locator('[data-testid="vg-predict"]').is_visible()
    assert "mean" not in incoming.inner_text()                    # the gradient is not shown yet
    box = incoming.locator('[data-testid="vg-predict-input"]')
    box.fill("one")
    incoming.locator('[data-testid="vg-predict-reveal"]').click()
    assert incoming.locator('[data-testid="vg-predict-problem"]').inner_text() == '"one" is not a number'
    box.fill("1")
    incoming.locator('[data-testid="vg-predict-reveal"]').click()
    result = view.locator('[data-testid="vg-predict-result"]')
    result.wait_for(timeout=10_000)
    assert result.get_attribute("data-correct") == "true"
    assert "mean 1" in view.locator('[data-testid="vg-chain-incoming"]').inner_text()   # revealed
    notebook.screenshot("graph_predict", "graph_predict-right")

    # the next steps down to a leaf: a wrong guess is marked wrong and says what it is
    for step in range(1, len(order)):
        view.locator('[data-testid="vg-step-next"]').click()
        _wait_for_step(view, step)
        incoming = view.locator('[data-testid="vg-chain-incoming"]')
        if incoming.locator('[data-testid="vg-predict-input"]').count():
            break
    incoming.locator('[data-testid="vg-predict-input"]').fill("5")
    incoming.locator('[data-testid="vg-predict-reveal"]').click()
    result = view.locator('[data-testid="vg-predict-result"]')
    view.page.wait_for_function("el => el.dataset.correct === 'false'", arg=result.element_handle(), timeout=10_000)
    assert "not quite: you predicted 5, the gradient is" in result.inner_text()
    assert view.locator('[data-testid="vg-predict-score"]').inner_text() == "1 of 2 predictions right"
    notebook.screenshot("graph_predict", "graph_predict-wrong")
    notebook.assert_no_problems()


def test_graph_view_replays_the_tangents_flowing_forward(notebook):
    facts = notebook.facts("graph_forward")
    order, tangents = facts["forward_order"], facts["tangents"]
    assert facts["step_text"] == f"forward step 4 of 4: y ({order[-1]})"     # before backward, forward was shown
    view = notebook.widget("graph_forward", "vg-graph-widget")
    _wait_until_drawn(view)
    # backward ran after: both flows, backward shown first, the toggle offers forward
    toggle = view.locator('[data-testid="vg-flow-toggle"]')
    toggle.wait_for(timeout=10_000)
    view.page.wait_for_function("el => el.dataset.flow === 'backward'", arg=view.element_handle(), timeout=10_000)
    assert toggle.locator('[data-testid="vg-flow-backward"]').get_attribute("aria-pressed") == "true"
    toggle.locator('[data-testid="vg-flow-forward"]').click()
    view.page.wait_for_function("el => el.dataset.flow === 'forward'", arg=view.element_handle(), timeout=10_000)
    _wait_for_step(view, len(order) - 1)                              # every step shown, as the graph opens
    assert view.locator('[data-testid="vg-graph-legend"]').inner_text().startswith("tangent size (RMS)")
    view.locator('[data-testid="vg-step-first"]').click()
    _wait_for_step(view, -1)
    assert view.locator('[data-testid="vg-step-text"]').inner_text() == "before forward (0 of 4 steps)"
    view.locator('[data-testid="vg-step-next"]').click()             # the seed: x = make_dual(x0, ẋ)
    _wait_for_step(view, 0)
    assert "ẋ is given (forward_ad.make_dual)" in view.locator('[data-testid="vg-jvp-rule"]').inner_text()
    view.locator('[data-testid="vg-step-next"]').click()             # h = x · w
    _wait_for_step(view, 1)
    assert view.locator('[data-testid="vg-step-text"]').inner_text() == f"forward step 2 of 4: h ({order[1]})"
    active = view.locator("svg g.vg-node.vg-active")
    assert active.evaluate_all("nodes => nodes.map(n => n.dataset.nodeId)") == [order[1]]
    # the tangent came along the edge from x only: w carries none
    assert view.locator("svg g.edge.vg-flow").evaluate_all("edges => edges.map(e => e.dataset.source)") == [order[0]]
    panel = view.locator('[data-testid="vg-jvp"]')
    assert panel.locator('[data-testid="vg-jvp-forward"]').inner_text() == "h = x · w"
    assert panel.locator('[data-testid="vg-jvp-rule"]').inner_text() == "ḣ = ẋ·w + x·ẇ"
    inputs = panel.locator('[data-testid="vg-jvp-input"]')
    assert inputs.evaluate_all("items => items.map(i => i.dataset.carries)") == ["true", "false"]
    assert "[1, 0, 0]" in inputs.nth(0).inner_text() and "local derivative ∂h/∂x = w" in inputs.nth(0).inner_text()
    assert "no tangent: ẇ = 0, its term drops out" in inputs.nth(1).inner_text()
    outgoing = panel.locator('[data-testid="vg-jvp-outgoing"]').inner_text()
    assert "(3,)" in outgoing and f"[{tangents['h'][0]:g}, 0, 0]" in outgoing
    notebook.screenshot("graph_forward", "graph_forward-mul")
    # the last step: the sum's tangent is the directional derivative, and the inspector shows the tangent
    view.locator('[data-testid="vg-step-last"]').click()
    _wait_for_step(view, 3)
    assert "ẏ = Σᵢ" in panel.locator('[data-testid="vg-jvp-rule"]').inner_text()
    assert f"[{tangents['y']:.4g}]" in panel.locator('[data-testid="vg-jvp-outgoing"]').inner_text()
    view.locator(f'svg g.vg-node[data-node-id="{order[1]}"]').click()
    card = view.locator('[data-testid="vg-inspector"] [data-testid="vg-card-tangent"]')
    card.wait_for(timeout=10_000)
    assert "tangent (forward mode)" in card.inner_text().lower() and "min … max\t0 … 0.5" in card.inner_text()
    notebook.screenshot("graph_forward", "graph_forward-sum")
    # back to backward: the chain rule again
    toggle.locator('[data-testid="vg-flow-backward"]').click()
    view.page.wait_for_function("el => el.dataset.flow === 'backward'", arg=view.element_handle(), timeout=10_000)
    assert view.locator('[data-testid="vg-chain-rule"]').count() == 1
    assert view.locator('[data-testid="vg-step-text"]').inner_text().startswith("backward step")
    notebook.assert_no_problems()


def test_grad_flow_view_draws_a_heatmap_row_and_a_bar_per_layer(notebook):
    facts = notebook.facts("grad_flow")
    view = notebook.widget("grad_flow", "vg-grad-flow-widget")
    _wait_for_training(view, facts["steps"])
    rows = view.locator('[data-testid="vg-grad-flow-row"]')
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.layer)") == facts["layers"]
    assert view.locator('[data-testid="vg-grad-flow-row"] rect.vg-bar').count() == len(facts["layers"])
    assert view.locator('[data-testid="vg-grad-flow-heatmap"]').count() == 1
    assert view.locator('[data-testid="vg-flags"]').inner_text() == "no vanishing or exploding layers"
    notebook.screenshot("grad_flow")
    notebook.assert_no_problems()


def _text_boxes(element):
    """The page boxes of every non-empty SVG text inside ``element``: [{text, left, top, right, bottom}]."""
    return element.evaluate(
        """root => [...root.querySelectorAll('svg text')].filter(t => t.textContent.trim()).map(t => {
            const box = t.getBoundingClientRect();
            return {text: t.textContent, left: box.left, top: box.top, right: box.right, bottom: box.bottom};
        })""")


def _overlapping(boxes):
    return [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5
            and a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5]


def test_grad_flow_of_a_26_layer_net_follows_its_model_with_no_overlapping_labels(notebook):
    facts = notebook.facts("grad_flow_deep")
    assert len(facts["layers"]) == 26
    view = notebook.widget("grad_flow_deep", "vg-grad-flow-widget")
    _wait_for_training(view, facts["steps"])
    # its own model's 30 steps, not the 25 steps of the model trained after it
    assert view.get_attribute("data-step") == "30"
    rows = view.locator('[data-testid="vg-grad-flow-row"]')
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.status)") == facts["statuses"]
    labels = view.locator("svg text.vg-row-label").evaluate_all("texts => texts.map(t => t.textContent)")
    assert labels == facts["layers"], "at 26 layers every parameter has its label"
    boxes = _text_boxes(view)
    assert _overlapping(boxes) == []
    assert min(box["bottom"] - box["top"] for box in boxes) >= 12, "labels readable on a projector"
    flags = view.locator('[data-testid="vg-flags"]')
    assert flags.evaluate("el => el.scrollHeight <= 2 * parseFloat(getComputedStyle(el).lineHeight)")
    assert view.locator('[data-testid="vg-threshold-vanishing"]').count() == 1
    assert view.locator('[data-testid="vg-threshold-exploding"]').count() == 1
    # hovering the heatmap reads out the cell: the first layer at the last step
    heatmap = view.locator('[data-testid="vg-grad-flow-heatmap"]')
    heatmap.scroll_into_view_if_needed()
    box = heatmap.bounding_box()
    notebook.page.mouse.move(box["x"] + box["width"] - 2, box["y"] + 2)
    readout = view.locator('[data-testid="vg-grad-flow-readout"]')
    notebook.page.wait_for_function("el => el.textContent.length > 0", arg=readout.element_handle(), timeout=5_000)
    assert re.fullmatch(r"0\.weight at step 30: gradient RMS \S+", readout.inner_text()), readout.inner_text()
    notebook.screenshot("grad_flow_deep")
    notebook.assert_no_problems()


def test_grad_flow_of_200_layers_thins_its_labels(notebook):
    facts = notebook.facts("grad_flow_wide")
    view = notebook.widget("grad_flow_wide", "vg-grad-flow-widget")
    _wait_for_training(view, facts["steps"])
    assert view.locator('[data-testid="vg-grad-flow-row"]').count() == facts["layers"] == 200
    assert 20 <= view.locator("svg text.vg-row-label").count() < 100
    assert _overlapping(_text_boxes(view)) == []
    notebook.screenshot("grad_flow_wide")
    notebook.assert_no_problems()


def test_dashboard_draws_loss_gradients_ratios_and_histograms(notebook):
    facts = notebook.facts("dashboard")
    view = notebook.widget("dashboard", "vg-dashboard")
    _wait_for_training(view, facts["steps"])
    loss = view.locator('[data-testid="vg-curve"][data-curve="loss"]')
    assert _drawn_lines(loss.locator("svg.vg-chart path.vg-line")) == ["train"]
    gradients = view.locator('[data-testid="vg-grad-flow-row"]')
    # the gradients are read when the dashboard draws, which may be the update after the last step's
    view.page.wait_for_function("([el, n]) => el.querySelectorAll('[data-testid=\"vg-grad-flow-row\"]').length >= n",
                                arg=[view.element_handle(), len(facts["layers"])], timeout=30_000)
    assert gradients.evaluate_all("rows => rows.map(r => r.dataset.layer)") == facts["layers"]
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
    # no label twice in a card's head ("Adam Adam"); axes and a colour bar with numbers
    for name in ("sgd", "momentum", "adam", "rmsprop"):
        head = view.locator(f'[data-testid="optimizer-card-{name}"] .vg-opt-card-head').inner_text().split()
        words = [word for word in head if word not in ("running", "paused", "ready", "✓", "finished", "✗", "diverged",
                                                       "out", "of", "steps")]
        assert len(words) == len(set(words)), f"{name}'s card repeats a label: {head}"
    for axis in ("optimizer-x-axis", "optimizer-y-axis", "optimizer-colour-bar"):
        ticks = view.locator(f'[data-testid="{axis}"] text').evaluate_all("ts => ts.map(t => t.textContent)")
        assert sum(1 for text in ticks if re.fullmatch(r"-?[0-9.e+-]+", text)) >= 3, f"{axis}: {ticks}"
    notebook.screenshot("optimizer_view")
    notebook.assert_no_problems()


def _wcag_luminance(rgb):
    channels = [c / 255 for c in rgb]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a, b):
    light, dark = sorted((_wcag_luminance(a), _wcag_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_optimizer_race_at_the_default_speed_reaches_rosenbrocks_minimum_with_trails_that_stand_out(notebook):
    view = notebook.widget("optimizer_view", "optimizer-view")
    view.locator('[data-testid="optimizer-reset"]').click()
    notebook.page.wait_for_function("el => el.textContent === 'step 0'",
                                    arg=view.locator('[data-testid="optimizer-step-count"]').element_handle(), timeout=10_000)
    assert view.locator('[data-testid="optimizer-speed"]').input_value() == "200"
    started = time.perf_counter()
    view.locator('[data-testid="optimizer-play"]').click()
    # while it plays the badges say running (Python's state_rows, drawn)
    notebook.page.wait_for_function(
        "root => root.querySelector('[data-testid=\"optimizer-status-sgd\"]').dataset.status === 'running'",
        arg=view.element_handle(), timeout=10_000)
    notebook.page.wait_for_function(
        "root => root.querySelector('[data-testid=\"optimizer-status-adam\"]').dataset.status === 'finished'"
        " && root.querySelector('[data-testid=\"optimizer-status-momentum\"]').dataset.status === 'finished'",
        arg=view.element_handle(), timeout=40_000)
    seconds = time.perf_counter() - started
    view.locator('[data-testid="optimizer-play"]').click()          # pause
    print(f"\nOptimizerView: Momentum and Adam reached Rosenbrock's minimum {seconds:.1f} s after Play at the default speed")
    # about 10 s on an idle machine (1,800 steps at 200 steps/s); the bound leaves room for a
    # loaded one and still fails the old pace of one step per frame (about a minute)
    assert seconds < 40, "the default speed should show Rosenbrock converging in about 10 s"
    # once paused no badge says running; finished and paused each look different
    notebook.page.wait_for_function(
        "root => ![...root.querySelectorAll('[data-testid^=\"optimizer-status-\"]')].some(e => e.dataset.status === 'running')",
        arg=view.element_handle(), timeout=10_000)
    statuses = view.locator('[data-testid^="optimizer-status-"]').evaluate_all(
        "els => els.map(e => [e.dataset.status, getComputedStyle(e).backgroundColor, e.textContent])")
    by_status = {status: (background, text) for status, background, text in statuses}
    assert {"finished", "paused"} <= set(by_status)
    assert by_status["finished"][0] != by_status["paused"][0] and "finished" in by_status["finished"][1]
    # every trail pixel (its own colour, read back from the drawn canvas) stands out against the
    # surface under it (read back from the surface canvas): the trail, its dark outline or the
    # outline's light halo by 3:1
    drawn = view.evaluate(
        r"""root => {
            const read = (testid) => {
                const canvas = root.querySelector(`[data-testid="${testid}"]`);
                return canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            };
            const trails = read('optimizer-canvas');
            const surface = read('optimizer-surface');
            const hex = (text) => { const m = text.match(/\d+/g).map(Number); return m.slice(0, 3); };
            const colours = [...root.querySelectorAll('[data-testid^="optimizer-card-"] .vg-opt-swatch')]
                .map(swatch => hex(getComputedStyle(swatch).backgroundColor));
            return colours.map(colour => {
                const pairs = [];
                for (let i = 0; i < trails.length && pairs.length < 3000; i += 4) {
                    if (trails[i + 3] === 255 && trails[i] === colour[0] && trails[i + 1] === colour[1] && trails[i + 2] === colour[2]) {
                        pairs.push([surface[i], surface[i + 1], surface[i + 2]]);
                    }
                }
                return {colour, surface: pairs};
            });
        }""")
    outline, halo = (0, 0, 0), (255, 255, 255)
    assert len(drawn) == 4
    assert len({tuple(trail["colour"]) for trail in drawn}) == 4, "every racer has its own colour"
    # trails drawn later cover parts of earlier ones (SGD's path lies under Momentum's): most show
    visible = sorted(len(trail["surface"]) for trail in drawn)
    assert visible[1] > 50 and sum(visible) > 500, f"trail pixels visible: {visible}"
    for trail in drawn:
        assert _contrast(trail["colour"], outline) >= 3
        if not trail["surface"]:          # wholly under later trails (the race's timing decides): nothing to read
            continue
        worst = min(max(_contrast(trail["colour"], under), _contrast(outline, under), _contrast(halo, under))
                    for under in trail["surface"])
        assert worst >= 3, f"trail {trail['colour']} reaches a contrast of only {worst:.2f} against the surface"
    chart = view.locator('[data-testid="optimizer-value-chart"] path.vg-line:not(.vg-line-outline)')
    assert len(_drawn_lines(chart)) == 4
    notebook.screenshot("optimizer_view", "optimizer_view-converged")
    # a click on the surface restarts the race there
    canvas = view.locator('[data-testid="optimizer-canvas"]')
    box = canvas.bounding_box()
    canvas.click(position={"x": box["width"] * 0.25, "y": box["height"] * 0.25})
    notebook.page.wait_for_function("el => el.textContent === 'step 0'",
                                    arg=view.locator('[data-testid="optimizer-step-count"]').element_handle(), timeout=10_000)
    summary = view.locator('[data-testid="optimizer-card-adam"] .vg-opt-summary').inner_text()
    x, y = map(float, re.search(r"\(([-0-9.e]+), ([-0-9.e]+)\)", summary).groups())
    assert x == pytest.approx(-1, abs=0.02) and y == pytest.approx(2, abs=0.02), summary   # a quarter into [-2, 2] × [3, -1]
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
    # the loss chart: train and test curves on labelled axes, its text at least 13 px on screen
    chart = view.locator('[data-testid="playground-loss"] svg.vg-chart')
    assert chart.locator("path.vg-line").count() == 2
    texts = chart.locator("text").evaluate_all("items => items.map((item) => [item.textContent, "
                                              "item.getBoundingClientRect().height])")
    assert {"loss", "step"} <= {text for text, _ in texts}
    assert min(height for _, height in texts) >= 13, texts
    assert chart.bounding_box()["width"] >= 300
    view.locator('[data-testid="playground-loss"]').screenshot(path=str(ARTIFACTS / "playground-loss.png"))
    notebook.screenshot("playground")
    notebook.assert_no_problems()


def test_playground_draws_the_network_with_one_edge_per_weight(notebook):
    facts = notebook.facts("playground")
    sizes = facts["sizes"]
    view = notebook.widget("playground", "playground-view")
    edges = view.locator('[data-testid="playground-edge"]')
    assert edges.count() == sum(a * b for a, b in zip(sizes, sizes[1:]))
    for layer, (inputs, outputs) in enumerate(zip(sizes, sizes[1:])):
        pairs = view.locator(f'[data-testid="playground-edge"][data-layer="{layer}"]').evaluate_all(
            "lines => lines.map(l => [Number(l.dataset.from), Number(l.dataset.to)])")
        assert sorted(map(tuple, pairs)) == [(i, o) for i in range(inputs) for o in range(outputs)]
    widths = edges.evaluate_all("lines => lines.map(l => Number(l.getAttribute('stroke-width')))")
    colours = set(edges.evaluate_all("lines => lines.map(l => l.getAttribute('stroke'))"))
    assert max(widths) > 3 * min(widths), "edges are as thick as their weights"
    assert len(colours) == 2, "positive and negative weights have their own colours"
    features = [f for f in facts["features"]]
    pressed = view.locator('[data-testid^="playground-feature-"][aria-pressed="true"]').evaluate_all(
        "boxes => boxes.map(b => b.dataset.testid.replace('playground-feature-', ''))")
    assert pressed == features
    # hovering an edge tells its weight and gradient
    edges.first.dispatch_event("pointerover")
    info = view.locator('[data-testid="playground-edge-info"]').inner_text()
    assert re.search(r"x → layer 1 unit 1: w = -?[0-9.e-]+, ∂L/∂w = ", info), info
    # clicking a unit shows its response and its incoming weights
    view.locator('[data-testid="playground-unit-0-2"]').click()
    detail = view.locator('[data-testid="playground-unit-detail"]')
    detail.wait_for()
    assert detail.locator('[data-testid="playground-incoming"]').count() == sizes[0]
    assert "layer 1 unit 3" in detail.inner_text()
    notebook.screenshot("playground", "playground-unit")
    # adding a unit to the first layer adds its edges
    view.locator('[data-testid="playground-layer-0-add-unit"]').click()
    expected = sizes[0] * (sizes[1] + 1) + (sizes[1] + 1) * sizes[2] + sum(a * b for a, b in zip(sizes[2:], sizes[3:]))
    notebook.page.wait_for_function("([root, n]) => root.querySelectorAll('[data-testid=\"playground-edge\"]').length === n",
                                    arg=[view.element_handle(), expected], timeout=10_000)
    notebook.assert_no_problems()


def test_conv_explorer_shows_a_units_receptive_field_and_multiply_accumulate(notebook):
    facts = notebook.facts("conv_explorer")
    view = notebook.widget("conv_explorer", "conv-explorer")
    notebook.page.wait_for_function("el => el.dataset.ready === 'true'", arg=view.element_handle(), timeout=10_000)
    maps = view.locator('[data-testid="conv-explorer-map"]')
    assert maps.count() == sum(shown for shown, *_ in facts["layers"])
    painted, canvases = _painted_canvases(view)
    assert painted == canvases
    # every input channel's kernel slice: 8 kernels of 1 slice, then 16 kernels of 8 slices
    kernels = view.locator('[data-testid="conv-explorer-kernel"]')
    assert kernels.count() == 8 + 16
    assert view.locator(".vg-cx-kernel-slice").count() == 8 * 1 + 16 * 8
    slice_box = view.locator('[data-layer="1"] .vg-cx-kernel-slice').first.bounding_box()
    assert slice_box["width"] >= 14                             # a 3 × 3 slice, at least 14 px across
    # click unit (row 1, column 2) of channel 3 in the second layer (4 × 4 maps)
    target = view.locator('[data-testid="conv-explorer-map"][data-layer="1"][data-channel="3"]')
    box = target.bounding_box()
    target.click(position={"x": box["width"] * 2.5 / 4, "y": box["height"] * 1.5 / 4})
    notebook.page.wait_for_function("el => el.dataset.selected === '1/3/1/2'", arg=view.element_handle(), timeout=10_000)
    field = view.locator('[data-testid="conv-explorer-field"]')
    assert field.count() == 1
    assert "rows 0–6, columns 1–7" in view.inner_text()      # conv 3×3 pad 1 ← pool 2 ← conv 3×3 pad 1, clipped
    assert view.locator('[data-testid="conv-explorer-mac-channel"]').count() == 8
    # the unit reads a 6 × 6 window (rows 0–5, columns 2–7) of each of the first layer's 8 maps
    windows = view.locator('[data-layer="0"] [data-testid="conv-explorer-window"]')
    assert windows.count() == 8
    first_map = view.locator('[data-testid="conv-explorer-map"][data-layer="0"][data-channel="0"]').bounding_box()
    window = windows.first.bounding_box()
    cell = first_map["width"] / 8
    assert window["x"] - first_map["x"] == pytest.approx(2 * cell, abs=3)
    assert window["width"] == pytest.approx(6 * cell, abs=3) and window["height"] == pytest.approx(6 * cell, abs=3)
    total = view.locator('[data-testid="conv-explorer-total"]').inner_text()
    computed, recorded = re.search(r"b \+ Σ = ([-0-9.e]+); the layer computed ([-0-9.e]+)", total).groups()
    assert computed == recorded, total
    notebook.screenshot("conv_explorer", "conv_explorer-unit")
    # Backward: gradient maps appear under every layer
    view.locator('[data-testid="conv-explorer-backward"]').click()
    notebook.page.wait_for_function("el => el.dataset.target !== ''", arg=view.element_handle(), timeout=10_000)
    assert view.locator('[data-testid="conv-explorer-grad"]').count() == maps.count()
    notebook.screenshot("conv_explorer", "conv_explorer-backward")
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


MY_WIDGETS = {"grad_flow_deep": "vg-grad-flow-widget", "dashboard": "vg-dashboard", "optimizer_view": "optimizer-view",
              "playground": "playground-view", "conv_explorer": "conv-explorer"}


def _rgb(text):
    return [int(v) for v in re.findall(r"\d+", text)[:3]]


def test_widgets_are_readable_at_projector_size_in_light_and_dark_themes(notebook):
    """At 1280 px wide no widget overflows sideways and no text is under 11 px; in JupyterLab's
    dark theme each widget's background turns dark and its text light (screenshots of both)."""
    page = notebook.page
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        for tag, testid in MY_WIDGETS.items():
            view = notebook.widget(tag, testid)
            view.scroll_into_view_if_needed()
            sizes = view.evaluate("""root => {
                const small = [...root.querySelectorAll('*')].filter(e => e.childNodes.length && [...e.childNodes]
                    .some(n => n.nodeType === 3 && n.textContent.trim()) && e.getClientRects().length)
                    .map(e => [parseFloat(getComputedStyle(e).fontSize) * (e.closest('svg') ? (e.closest('svg')
                        .getBoundingClientRect().width / (e.closest('svg').viewBox.baseVal?.width || e.closest('svg')
                        .getBoundingClientRect().width)) : 1), e.textContent.slice(0, 30)])
                    .filter(([size]) => size < 10.5);
                return {overflow: root.scrollWidth - root.clientWidth, small};
            }""")
            assert sizes["overflow"] <= 1, f"{tag} overflows by {sizes['overflow']} px at 1280 px"
            assert sizes["small"] == [], f"{tag} has text under 11 px: {sizes['small'][:5]}"
        # JupyterLab's dark theme, from its Settings menu (screenshots on the tall page again)
        page.set_viewport_size({"width": 1400, "height": 2000})
        page.locator(".lm-MenuBar-item", has_text="Settings").first.click()
        page.locator(".lm-Menu-item", has_text="Theme").first.hover()
        page.locator(".lm-Menu-item", has_text="JupyterLab Dark").first.click()
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=20_000)
        for tag, testid in MY_WIDGETS.items():
            view = notebook.widget(tag, testid)
            background, colour = view.evaluate("root => [getComputedStyle(root).backgroundColor, getComputedStyle(root).color]")
            assert _wcag_luminance(_rgb(background)) < 0.1, f"{tag}: background {background} in the dark theme"
            assert _contrast(_rgb(colour), _rgb(background)) >= 7, f"{tag}: text {colour} on {background}"
            notebook.screenshot(tag, f"{tag}-dark")
        notebook.assert_no_problems()
    finally:
        page.locator(".lm-MenuBar-item", has_text="Settings").first.click()
        page.locator(".lm-Menu-item", has_text="Theme").first.hover()
        page.locator(".lm-Menu-item", has_text="JupyterLab Light").first.click()
        page.set_viewport_size({"width": 1400, "height": 2000})


def test_the_playgrounds_static_picture_shows_the_network_and_the_boundary(browser):
    """The picture a notebook keeps without a kernel: the diagram's labels and maps inside the
    picture, none of its text over the boundary (screenshot: playground-static.png)."""
    from vizgrad.widgets import Playground

    playground = Playground(hidden=[4, 3], features=("x", "y", "x²", "sin x"))
    try:
        playground.step(30)
        svg = playground._repr_mimebundle_()[0]["image/svg+xml"]
    finally:
        playground.close()
    page = browser.new_page(viewport={"width": 900, "height": 360})
    try:
        page.set_content(svg)
        picture = page.locator("svg").bounding_box()
        boxes = page.eval_on_selector_all("svg text, svg image", "items => items.map((item) => { const box = item.getBoundingClientRect(); "
                                          "const base = item.ownerSVGElement.getBoundingClientRect(); "
                                          "return {tag: item.tagName, node: item.getAttribute('class') === 'node', "
                                          "x: box.left - base.left, y: box.top - base.top, right: box.right - base.left, "
                                          "bottom: box.bottom - base.top}; })")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("svg").screenshot(path=str(ARTIFACTS / "playground-static.png"))
    finally:
        page.close()
    assert sum(box["node"] for box in boxes) == 4 + 4 + 3 + 2
    (boundary,) = [box for box in boxes if box["tag"] == "image" and not box["node"]]
    for box in boxes:
        assert box["x"] >= 0 and box["right"] <= picture["width"] and box["bottom"] <= picture["height"]
        if box["tag"] == "text":
            overlaps = box["x"] < boundary["right"] and boundary["x"] < box["right"] and \
                box["y"] < boundary["bottom"] and boundary["y"] < box["bottom"]
            assert not overlaps, box


# --- every widget fits a laptop's screen ------------------------------------------------------------------------

SCREEN = {"width": 1280, "height": 800}
MAX_HEIGHT = 760
# cell tag in widget-sizes.ipynb -> the widget's root
FITTED = {"playground": "playground-view", "conv_explorer": "conv-explorer", "attention": "vg-attention-widget",
          "grad_flow_06": "vg-grad-flow-widget", "grad_flow_07": "vg-grad-flow-widget",
          "grad_flow_12": "vg-grad-flow-widget", "dashboard": "vg-dashboard", "optimizer_view": "optimizer-view"}
# what a person clicks next, after which the widget must still fit: a hidden unit (its detail opens),
# another of the dashboard's tabs, another head
CLICKED = {"playground": '[data-testid="playground-unit-0-2"]', "dashboard": '[data-testid="vg-dashboard-tab-flow"]',
           "attention": '[data-testid="vg-attention-tab"][data-head="3"]'}

# What a person would see cut off or too small in one widget's output: its height; how far the output
# scrolls sideways; every element or SVG text that reaches past the right (or left) of a box that clips it
# (the output itself, a scrolling panel, an SVG) or whose text overflows its own box (an ellipsis);
# every text under 11 px on screen.
_MEASURE = """output => {
    const outside = output.getBoundingClientRect();
    const clips = (e) => e === output || (e instanceof SVGSVGElement && getComputedStyle(e).overflow !== 'visible')
        || (e instanceof HTMLElement && getComputedStyle(e).overflowX !== 'visible');
    const name = (e) => `${e.tagName.toLowerCase()}${e.dataset?.testid ? `[${e.dataset.testid}]` : ''}`
        + ` "${(e.textContent || '').trim().slice(0, 40)}"`;
    const clipped = [], overflowing = [], small = [];
    for (const e of output.querySelectorAll('*')) {
        const box = e.getBoundingClientRect();
        if (!box.width || !box.height || getComputedStyle(e).visibility === 'hidden') continue;
        for (let up = e.parentElement; up; up = up.parentElement) {
            if (!clips(up)) { if (up === output) break; continue; }
            const frame = up.getBoundingClientRect();
            if (box.right > frame.right + 1 || box.left < frame.left - 1) {
                clipped.push(`${name(e)} reaches ${Math.round(box.right - frame.right)} px past ${name(up).slice(0, 40)}`);
            }
            if (up === output) break;
        }
        const text = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!text) continue;
        if (e instanceof HTMLElement && getComputedStyle(e).overflowX !== 'visible' && e.scrollWidth > e.clientWidth + 1) {
            overflowing.push(`${name(e)}: ${e.scrollWidth} px of text in ${e.clientWidth} px`);
        }
        const svg = e.closest('svg');
        const scale = svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width
            ? svg.getBoundingClientRect().width / svg.viewBox.baseVal.width : 1;
        const size = parseFloat(getComputedStyle(e).fontSize) * scale;
        if (size < 10.9) small.push(`${name(e)}: ${size.toFixed(1)} px`);
    }
    return {height: outside.height, width: outside.width, scroll: output.scrollWidth - output.clientWidth,
            clipped, overflowing, small};
}"""


@pytest.fixture(scope="module")
def laptop(browser, lab):
    """widget-sizes.ipynb open at 1280 × 800 with JupyterLab's file browser open, every cell run."""
    cells = json.loads(SIZES_NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    page = browser.new_page(viewport=SCREEN)
    nb = Notebook(page, [cell.get("metadata", {}).get("tags", []) for cell in cells])
    page.on("console", lambda message: nb.problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: nb.problems.append(f"page error: {error}"))
    try:
        # a workspace of its own: only this notebook open (the module's other page has widgets.ipynb)
        page.goto(lab.url(f"lab/workspaces/laptop/tree/{SIZES_NOTEBOOK.name}"))
        page.locator(".jp-Notebook .jp-Cell").nth(len(cells) - 1).wait_for(timeout=60_000)
        page.locator(".jp-StatusBar-Widget", has_text=f"{KERNEL_DISPLAY_NAME} | Idle").wait_for(timeout=60_000)
        if not page.locator(".jp-FileBrowser").first.is_visible():
            page.locator('.jp-SideBar .lm-TabBar-tab[data-id="filebrowser"]').first.click()
        page.locator(".jp-FileBrowser").first.wait_for(state="visible", timeout=10_000)
        nb.cell("setup").click()
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        _wait_for_all_cells(page, lab)
        yield nb
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "laptop-failure.png"))
        raise
    finally:
        page.close()


@pytest.mark.parametrize("tag", list(FITTED))
def test_every_widget_fits_a_laptop_screen(laptop, tag):
    """At 1280 × 800 with the file browser open, each widget at its default size (the lessons'
    models) is at most 760 px tall, with nothing clipped at the right and no text under 11 px
    (screenshots: laptop-<tag>.png)."""
    view = laptop.widget(tag, FITTED[tag])
    laptop.page.wait_for_function("el => el.dataset.ready === undefined || el.dataset.ready === 'true'"
                                  " || el.dataset.error !== undefined", arg=view.element_handle(), timeout=30_000)
    assert view.get_attribute("data-error") is None, view.get_attribute("data-error")
    browser_panel = laptop.page.locator(".jp-FileBrowser").first.bounding_box()
    assert browser_panel and browser_panel["width"] >= 200, "the file browser is open"
    output = laptop.cell(tag).locator(".jp-OutputArea-output", has=laptop.page.locator(f'[data-testid="{FITTED[tag]}"]')).first
    output.scroll_into_view_if_needed()
    measured = output.evaluate(_MEASURE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    output.screenshot(path=str(ARTIFACTS / f"laptop-{tag}.png"))
    print(f"\n{tag}: {measured['width']:.0f} × {measured['height']:.0f} px")
    assert 780 <= measured["width"] <= 920, f"a notebook output at 1280 px with the file browser open: {measured['width']}"
    assert measured["height"] <= MAX_HEIGHT, f"{tag} is {measured['height']:.0f} px tall"
    assert measured["scroll"] <= 1, f"{tag}'s output scrolls sideways by {measured['scroll']} px"
    assert measured["clipped"] == [], f"{tag} clips: {measured['clipped'][:8]}"
    assert measured["overflowing"] == [], f"{tag} cuts text off: {measured['overflowing'][:8]}"
    assert measured["small"] == [], f"{tag} has text under 11 px: {measured['small'][:8]}"
    if tag in CLICKED:
        view.locator(CLICKED[tag]).click()
        laptop.page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        after = output.evaluate(_MEASURE)
        output.screenshot(path=str(ARTIFACTS / f"laptop-{tag}-clicked.png"))
        print(f"{tag} after a click: {after['height']:.0f} px tall")
        assert after["height"] <= MAX_HEIGHT, f"{tag} is {after['height']:.0f} px tall after a click"
        assert after["clipped"] == [] and after["overflowing"] == [] and after["small"] == [], after
    laptop.assert_no_problems()
