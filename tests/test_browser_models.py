"""The learner's own models, drawn legible when they open (issue 27), end to end: JupyterLab
(tests/lab_server.py) with a kernel running this interpreter, Debian's Chromium driven by
Playwright at 1280×800.

Each model of tests/graph_models.py's USER_MODELS (a ResNet-style CNN with BatchNorm and a
skip connection, a 2-layer nn.LSTM over 12 steps with a Linear head, a GRU encoder-decoder,
a 4-block transformer with nn.MultiheadAttention, lesson 12's tiny transformer) runs one
forward and backward pass with no ``vg.trace()``, and is shown twice: ``vg.show(loss)`` (the
notebook output the JupyterLab extension draws) and ``GraphView(loss)`` (the live widget).
For each, at open and after one click that opens its largest group:
- every label drawn (node, group and edge labels that are not hidden) is 11 px or more on
  screen: its font size times the zoom, from the text's box on screen against its box in
  the drawing;
- the root (the loss, or the box that holds it) lies inside the graph's pane;
- the minimap, when shown, covers at most 15% of the pane and not the root;
- the cell's output is at most 800 px tall.
Screenshots of each output (at open, after the click) go to test-artifacts/browser-models/:
look at them.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

import chromium
import graph_models
from lab_server import KERNEL_DISPLAY_NAME, running_jupyterlab

# one JupyterLab and one notebook run for the module: keep its tests on one xdist worker
pytestmark = pytest.mark.xdist_group("jupyterlab-models")

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-models"
TESTS = Path(__file__).resolve().parent
NOTEBOOK = "models.ipynb"
VIEW = '[data-testid="vg-graph-widget"]'
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
MIN_LABEL_PX = 11
MAX_MINIMAP_SHARE = 0.15
MAX_OUTPUT_PX = 800
WAYS = ("show", "view")     # vg.show(loss), GraphView(loss)

# What a person sees of one drawn graph, measured in the page (the view's root element is the argument).
MEASURE = """view => {
    const svg = view.querySelector("svg.vg-graph");
    const stage = view.querySelector(".vg-graph-stage").getBoundingClientRect();
    const shown = (element) => getComputedStyle(element).display !== "none" && getComputedStyle(element).visibility !== "hidden";
    const labels = [...svg.querySelectorAll("text")].filter((text) => {
        for (let node = text; node && node !== svg; node = node.parentElement) if (!shown(node)) return false;
        return text.textContent.trim() && text.getBBox().height > 0;
    }).map((text) => {
        const onScreen = text.getBoundingClientRect();
        const px = parseFloat(getComputedStyle(text).fontSize) * onScreen.height / text.getBBox().height;
        const inPane = onScreen.bottom > stage.top && onScreen.top < stage.bottom && onScreen.right > stage.left && onScreen.left < stage.right;
        return { text: text.textContent, px, inPane };
    });
    const root = svg.querySelector(".vg-root")?.getBoundingClientRect() ?? null;
    const minimap = view.querySelector('[data-testid="vg-minimap"]');
    const map = minimap.classList.contains("vg-out-of-view") ? null : minimap.getBoundingClientRect();
    const meets = (a, b) => a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top;
    return {
        labels, stageArea: stage.width * stage.height,
        root: root && { left: root.left, top: root.top, right: root.right, bottom: root.bottom },
        rootInside: Boolean(root) && root.left >= stage.left - 0.5 && root.right <= stage.right + 0.5
            && root.top >= stage.top - 0.5 && root.bottom <= stage.bottom + 0.5,
        minimapShare: map ? (map.width * map.height) / (stage.width * stage.height) : 0,
        minimapOverRoot: Boolean(map && root && meets(map, root)),
        groups: [...svg.querySelectorAll("g.vg-group")].map((box) => [box.dataset.group, Number(box.dataset.size)]),
        glyphs: svg.classList.contains("vg-glyphs"),
    };
}"""


def models_notebook():
    """One cell that imports, then per model a cell that runs its step and shows it with
    vg.show(loss), and one that shows it with GraphView(loss); each cell tagged "<way>-<model>"."""
    cells = [nbformat.v4.new_code_cell(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport graph_models\nimport vizgrad as vg\n"
        "from vizgrad.widgets import GraphView", metadata={"tags": ["setup"]})]
    for name in graph_models.USER_MODELS:
        cells.append(nbformat.v4.new_code_cell(f"model, loss = graph_models.user_loss({name!r})\nvg.show(loss)",
                                               metadata={"tags": [f"show-{name}"]}))
        cells.append(nbformat.v4.new_code_cell("GraphView(loss)", metadata={"tags": [f"view-{name}"]}))
    # a view opened at the first backward step, with what Python says of it
    cells.append(nbformat.v4.new_code_cell('stepped = GraphView(loss)\nstepped.seek(0)\nprint("VG-STEP", stepped.step_text)\nstepped',
                                           metadata={"tags": ["stepped"]}))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.validate(notebook)
    return notebook


@pytest.fixture(scope="module")
def browser():
    with chromium.launch(needs=("jupyterlab", "ipykernel", "anywidget", "ipywidgets", "nbformat")) as browser:
        yield browser


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-models")
    nbformat.write(models_notebook(), str(root / NOTEBOOK))
    with running_jupyterlab(root) as server:
        yield server


@pytest.fixture(scope="module")
def notebook(browser, lab):
    """The notebook open in JupyterLab at 1280×800, every cell run; yields (page, tags, problems)."""
    tags = [cell.metadata.get("tags", []) for cell in models_notebook().cells]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    problems = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("request", lambda request: problems.append(f"network request: {request.url[:120]}")
            if not request.url.startswith((lab.base_url, "data:", "blob:", "about:")) else None)
    try:
        page.goto(lab.url(f"lab/tree/{NOTEBOOK}"))
        page.locator(".jp-Notebook .jp-Cell").nth(len(tags) - 1).wait_for(timeout=60_000)
        page.locator(".jp-StatusBar-Widget", has_text=f"{KERNEL_DISPLAY_NAME} | Idle").wait_for(timeout=60_000)
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        page.wait_for_function(
            """stderr => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
                   .every(p => /\\[\\d+\\]/.test(p.textContent)) || document.querySelector(stderr)""",
            arg=STDERR, timeout=180_000)
        written = page.eval_on_selector_all(STDERR, "elements => elements.map(e => e.textContent)")
        assert written == [], "notebook cells wrote to stderr:\n" + "\n\n".join(written)
        yield page, tags, problems
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "failure.png"))
        raise
    finally:
        page.close()


def drawn_view(page, tags, tag):
    """The graph view in cell ``tag``'s output, scrolled into view, once drawn."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(next(i for i, t in enumerate(tags) if tag in t))
    view = cell.locator(VIEW).first
    view.wait_for(timeout=60_000)
    view.scroll_into_view_if_needed()
    page.wait_for_function("el => el.dataset.ready === 'true' || el.dataset.error !== undefined",
                           arg=view.element_handle(), timeout=60_000)
    assert view.get_attribute("data-error") is None, f"{tag}: the graph could not be drawn: {view.get_attribute('data-error')}"
    return cell, view


def assert_legible(cell, view, what, root=True):
    """The checks of the module docstring, on the view as it is drawn now (``root``: the root
    in the pane too); returns the measures."""
    seen = view.evaluate(MEASURE)
    small = [(label["text"], round(label["px"], 2)) for label in seen["labels"] if label["inPane"] and label["px"] < MIN_LABEL_PX - 0.05]
    assert small == [], f"{what}: labels drawn under {MIN_LABEL_PX} px: {small[:8]}"
    assert any(label["inPane"] for label in seen["labels"]), f"{what}: no label can be read in the pane"
    assert seen["rootInside"] or not root, f"{what}: the root is not inside the pane ({seen['root']})"
    assert seen["minimapShare"] <= MAX_MINIMAP_SHARE, f"{what}: the minimap covers {seen['minimapShare']:.0%} of the pane"
    assert not seen["minimapOverRoot"], f"{what}: the minimap covers the root"
    height = cell.locator(".jp-OutputArea-output").first.bounding_box()["height"]
    assert height <= MAX_OUTPUT_PX, f"{what}: the output is {height:.0f} px tall"
    return seen


def in_pane(view, element):
    """Whether part of ``element`` (a locator) is drawn inside the view's graph pane."""
    stage = view.locator(".vg-graph-stage").bounding_box()
    box = element.bounding_box()
    return (box is not None and box["x"] < stage["x"] + stage["width"] and box["x"] + box["width"] > stage["x"]
            and box["y"] < stage["y"] + stage["height"] and box["y"] + box["height"] > stage["y"])


def shot(cell, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cell.locator(".jp-OutputArea-output").first.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", graph_models.USER_MODELS)
def test_a_model_opens_legible_and_one_click_opens_a_group(notebook, name, way):
    page, tags, problems = notebook
    cell, view = drawn_view(page, tags, f"{way}-{name}")
    page.mouse.move(1, 1)                                        # no tooltip in the screenshots
    seen = assert_legible(cell, view, f"{name} via {way}, at open")
    shot(cell, f"{name}-{way}-open")

    assert seen["groups"], f"{name} via {way}: opened with no module box to click"
    key = max(seen["groups"], key=lambda group: group[1])[0]     # the largest box
    before = view.locator("svg.vg-graph > g").get_attribute("id")
    box = view.locator(f'g.vg-group[data-group="{key}"]').first
    box.dispatch_event("pointerdown", {"button": 0})
    box.dispatch_event("pointerup", {"button": 0})
    page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                           arg=[view.element_handle(), before], timeout=60_000)
    page.mouse.move(1, 1)
    assert_legible(cell, view, f"{name} via {way}, after opening {key}", root=False)
    # the view went to what the click opened: its frame is in the pane
    frame = view.locator(f'g.cluster[data-group="{key}"]')
    assert frame.count() == 1, f"{name} via {way}: {key} did not open"
    assert in_pane(view, frame), f"{name} via {way}: the opened {key} is not in view"
    shot(cell, f"{name}-{way}-expanded")
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def test_fit_never_shrinks_labels_below_the_readable_size(notebook):
    page, tags, problems = notebook
    cell, view = drawn_view(page, tags, "view-lstm")
    for _ in range(4):                                           # open as much as the boxes allow
        groups = view.evaluate(MEASURE)["groups"]
        if not groups:
            break
        key = max(groups, key=lambda group: group[1])[0]
        before = view.locator("svg.vg-graph > g").get_attribute("id")
        box = view.locator(f'g.vg-group[data-group="{key}"]').first
        box.dispatch_event("pointerdown", {"button": 0})
        box.dispatch_event("pointerup", {"button": 0})
        page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                               arg=[view.element_handle(), before], timeout=60_000)
    view.locator('[data-testid="vg-zoom-out"]').click()
    view.locator('[data-testid="vg-zoom-fit"]').click()
    seen = assert_legible(cell, view, "the LSTM opened up, after fit")
    assert not seen["glyphs"]
    shot(cell, "lstm-view-opened-fit")
    # the minimap can be hidden, and stays hidden when the graph is drawn again
    toggle = view.locator('[data-testid="vg-minimap-toggle"]')
    if toggle.get_attribute("aria-pressed") == "true":
        toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert view.evaluate(MEASURE)["minimapShare"] == 0
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def test_the_steps_are_numbered_the_same_in_python_and_in_the_widget(notebook):
    page, tags, problems = notebook
    cell, view = drawn_view(page, tags, "stepped")
    printed = cell.locator(".jp-OutputArea-output", has_text="VG-STEP").first.inner_text().split("VG-STEP", 1)[1].strip()
    shown = view.locator('[data-testid="vg-step-text"]').inner_text()
    assert re.match(r"backward step 1 of \d+: ", printed), printed
    assert shown == printed
    assert view.get_attribute("data-step") == "0"                 # step_index 0: the first step
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)
