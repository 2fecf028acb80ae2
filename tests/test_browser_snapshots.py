"""Widget snapshots end to end, in JupyterLab and in Notebook 7 (tests/lab_server.py), with
vizgrad's extension, a kernel running this interpreter and Debian's Chromium.

One notebook builds every widget type at a modest size (GraphView of a model with groups,
GradFlowView and the dashboard of a small MLP trained a few steps, ConvExplorer of a small
CNN, AttentionView of a tiny MultiheadAttention, OptimizerView stepped, a Playground trained)
and is run on a kernel:
- each widget is live (the snapshot gives way to it) and answers through the kernel: a node
  clicked, a dashboard tab, an attention head (read back in Python by a later cell), more
  training (the gradient flow follows, in the same live view), Backward (the convolution's
  gradient maps), a step of the optimizer race and of the playground (counted in Python);
- a widget closed in Python gives its place back to its snapshot;
- the saved file holds each widget's snapshot, refreshed to those last states.
Then the kernel is shut down and the page reloaded, with no kernel: each widget draws its
snapshot (the graph's nodes, the bars, the maps, the canvases) under the note
"snapshot: run the cell to make it live", nowhere "model not found"; the graph pans, zooms,
inspects and replays, the gradient flow answers hover. Once more with a fresh kernel (which
knows none of the saved widgets): still the snapshots, still no error.
The pages log no console or page errors and ask no host but the server for anything.

Screenshots (one per widget's snapshot, one of each live view) go to
test-artifacts/browser-snapshots/<front end>/. The saved notebook's size is printed.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

import chromium
from lab_server import running_jupyterlab

pytestmark = pytest.mark.xdist_group("jupyter-snapshots")

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-snapshots"
SNAPSHOT = "application/vnd.vizgrad.snapshot+json"
NOTE = '[data-testid="vg-snapshot-note"]'
NOTE_TEXT = "snapshot: run the cell to make it live"
NAME = "snapshots.ipynb"

# (tag, source, the widget's root test id)
CELLS = [
    ("setup", """\
import json
import vizgrad as vg
from vizgrad import events, nn, optim
from vizgrad.widgets import (AttentionView, ConvExplorer, GradFlowView, GraphView, OptimizerView, Playground,
                             dashboard)

vg.manual_seed(0)
x = vg.randn(32, 2)
y = (x[:, :1] * x[:, 1:] > 0).float()
mlp = nn.Sequential(nn.Sequential(nn.Linear(2, 8), nn.Tanh()), nn.Sequential(nn.Linear(8, 8), nn.Tanh()),
                    nn.Linear(8, 1))
optimizer = optim.Adam(mlp.parameters(), lr=0.01)
runs = 0


def train(steps):
    for step in range(steps):
        loss = nn.functional.binary_cross_entropy_with_logits(mlp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        events.mark("train", loss=loss)""", None),
    ("graph", """\
loss = nn.functional.binary_cross_entropy_with_logits(mlp(x[:4]), y[:4])
loss.backward()
graph_view = GraphView(loss)
graph_view""", "vg-graph-widget"),
    ("grad_flow", """\
grad_flow = GradFlowView(mlp)
board = dashboard(mlp, optimizer, summary_rate=None)
display(grad_flow)""", "vg-grad-flow-widget"),
    ("dashboard", """\
display(board)
train(3)""", "vg-dashboard"),
    ("conv", """\
vg.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))
digit = vg.zeros(1, 1, 8, 8)
digit[0, 0, 1:7, 3:5] = 1.0
explorer = ConvExplorer(cnn, digit)
explorer""", "conv-explorer"),
    ("attention", """\
vg.manual_seed(0)
mha = nn.MultiheadAttention(8, 2, batch_first=True)
tokens = vg.randn(1, 5, 8)
_, weights = mha(tokens, tokens, tokens, need_weights=True, average_attn_weights=False)
attention = AttentionView(weights, tokens=list("hello"))
attention""", "vg-attention-widget"),
    ("optimizer", """\
race = OptimizerView(resolution=60)
race.step(5)
race""", "optimizer-view"),
    ("playground", """\
playground = Playground(hidden=(4,), resolution=20, n_samples=120)
playground.train(5)
playground""", "playground-view"),
    ("check", """\
train(3)
runs += 1
print("VG-FACTS", json.dumps({"run": runs, "selected": graph_view.selected, "head": attention.head, "tab": board.tab,
                              "race": race.step_count, "playground": playground.step_count,
                              "target": explorer.target}))""", None),
]
WIDGETS = [(tag, root) for tag, _, root in CELLS if root]
TAGS = [tag for tag, _, _ in CELLS]


def notebook_file():
    cells = [nbformat.v4.new_code_cell(source, metadata={"tags": [tag]}) for tag, source, _ in CELLS]
    return nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


FRONT_ENDS = {
    # name: (server app, its option that keeps a notebook from starting a kernel when it opens, page)
    "jupyterlab": ("jupyterlab", "LabApp", f"lab/tree/{NAME}"),
    "notebook7": ("notebook", "JupyterNotebookApp", f"notebooks/{NAME}"),
}


@pytest.fixture(scope="module")
def browser():
    needs = ("jupyterlab", "notebook", "ipykernel", "anywidget", "ipywidgets", "nbformat")
    with chromium.launch(needs=needs) as browser:
        yield browser


def not_vizgrads(error):
    """True for the page errors that other code throws, not vizgrad's: ipywidgets' manager when
    its notebook has no kernel (the error's first frame is in that extension), and Notebook
    7.6's shortcut settings as a notebook page loads (it throws so with no vizgrad installed)."""
    stack = error.stack or ""
    first = next((line for line in stack.splitlines() if "http" in line), "")
    name = re.search(r"/extensions/((?:@[^/]+/)?[^/]+)/", first)
    if name is not None:
        return name.group(1) != "vizgrad"
    return ("/static/notebook/notebook_core." in first
            and error.message == "Cannot read properties of undefined (reading 'schema')")


class Page:
    """A page of the server that records problems (console and page errors, dialogs, requests elsewhere)."""

    def __init__(self, browser, server, folder):
        self.page = browser.new_page(viewport={"width": 1280, "height": 800})
        self.server = server
        self.folder = folder
        self.problems = []
        self.page.on("console", lambda message: self.problems.append(f"console {message.type}: {message.text}")
                     if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}\n{error.stack}")
                     if not not_vizgrads(error) else None)
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        self.page.on("request", lambda request: self.problems.append(f"network request: {request.url[:120]}")
                     if not request.url.startswith((server.base_url, "data:", "blob:", "about:")) else None)

    def cell(self, tag):
        return self.page.locator(".jp-Notebook .jp-Cell").nth(TAGS.index(tag))

    def output(self, tag):
        return self.cell(tag).locator(".jp-OutputArea-output").first

    def open(self, path):
        self.page.goto(self.server.url(path))
        self.cell(TAGS[-1]).wait_for(timeout=60_000)

    def command(self, name):
        """Run a JupyterLab command (the app is exposed in the page) and wait for it."""
        self.page.evaluate("name => window.jupyterapp.commands.execute(name)", name)

    def execute(self, code):
        """Run ``code`` on the notebook's kernel, in no cell, and wait for its reply."""
        self.page.evaluate("""code => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
            .requestExecute({code}).done.then(() => true)""", code)

    def wait_for_kernel(self):
        self.page.wait_for_function("""() => {
            const panel = window.jupyterapp.shell.currentWidget;
            return panel?.sessionContext?.session?.kernel?.status === 'idle';
        }""", timeout=60_000)

    def screenshot(self, name, tag=None):
        """The page, or cell ``tag``'s output."""
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.cell(tag).locator(".jp-OutputArea-output").first if tag else self.page
        if tag:       # its top (the note) in view: a tall widget is cut at the window's bottom
            target.evaluate("el => el.scrollIntoView({block: 'start'})")
        target.screenshot(path=str(self.folder / name))

    def assert_no_problems(self):
        problems, self.problems[:] = list(self.problems), []
        assert problems == [], "the page reported problems:\n" + "\n".join(problems)


def facts(page):
    text = page.cell("check").locator(".jp-OutputArea-output", has_text="VG-FACTS").first.inner_text()
    return json.loads(text.split("VG-FACTS", 1)[1].strip().splitlines()[0])


def wait_until_live(page, tag, root):
    """The live widget has taken the snapshot's place in cell ``tag``."""
    output = page.cell(tag)
    output.locator(f'[data-testid="{root}"]').first.wait_for(timeout=60_000)
    page.page.wait_for_function("el => !el.querySelector('[data-testid=\"vg-snapshot-note\"]')",
                                arg=output.element_handle(), timeout=60_000)
    assert output.locator(".jp-vizgrad-snapshot").count() == 1
    return output.locator(f'[data-testid="{root}"]')


def wait_for_text(page, locator, pattern):
    page.page.wait_for_function("([el, pattern]) => new RegExp(pattern).test(el.textContent)",
                                arg=[locator.element_handle(), pattern], timeout=30_000)


def run_and_interact(page):
    """Run every cell; check each widget is live and answers through the kernel. Returns what
    the page chose (the clicked node's id)."""
    page.command("notebook:run-all-cells")
    page.cell("check").locator(".jp-OutputArea-output", has_text="VG-FACTS").wait_for(timeout=120_000)
    views = {tag: wait_until_live(page, tag, root) for tag, root in WIDGETS}
    for tag in views:
        page.screenshot(f"live-{tag}.png", tag)

    graph = views["graph"]
    page.page.wait_for_function("el => el.dataset.ready === 'true'", arg=graph.element_handle(), timeout=60_000)
    node = graph.locator("svg g.vg-node").first
    chosen = node.get_attribute("data-node-id")
    node.click()
    graph.locator(f'[data-testid="vg-inspector"][data-node-id="{chosen}"]').wait_for()
    views["dashboard"].locator('[data-testid="vg-dashboard-tab-flow"]').click()
    views["attention"].locator('[data-testid="vg-attention-tab"][data-head="1"]').click()
    # Python answers these: Backward's gradient maps, a step of the race and of the playground
    views["conv"].locator('[data-testid="conv-explorer-backward"]').click()
    views["conv"].locator('[data-testid="conv-explorer-grad"]').first.wait_for(timeout=30_000)
    views["optimizer"].locator('[data-testid="optimizer-step"]').click()
    wait_for_text(page, views["optimizer"].locator('[data-testid="optimizer-step-count"]'), r"^step 6$")
    views["playground"].locator('[data-testid="playground-step"]').click()
    wait_for_text(page, views["playground"].locator('[data-testid="playground-step-count"]'), r"^step 6 ")

    # Python reads back what the page chose, and trains on: the gradient flow follows live,
    # the same live view (the snapshot's refresh reaches the output, which keeps it)
    assert views["grad_flow"].get_attribute("data-step") == "6"
    views["grad_flow"].evaluate("el => { el.dataset.seen = 'before'; }")
    page.cell("check").click()
    page.command("notebook:run-cell")
    page.cell("check").locator(".jp-OutputArea-output", has_text='"run": 2').wait_for(timeout=60_000)
    page.page.wait_for_function("el => el.dataset.step === '9'", arg=views["grad_flow"].element_handle(),
                                timeout=30_000)
    assert views["grad_flow"].get_attribute("data-seen") == "before"
    assert page.cell("grad_flow").locator(NOTE).count() == 0
    told = facts(page)
    assert told["selected"] == chosen and told["head"] == 1 and told["tab"] == "flow"
    assert told["race"] == 6 and told["playground"] == 6 and told["target"] is not None

    # a widget closed in Python leaves its snapshot in its place, the others stay live
    page.execute("attention.close()")
    page.cell("attention").locator(NOTE).wait_for(timeout=30_000)
    tab = page.cell("attention").locator('[data-testid="vg-attention-tab"][data-head="1"]')
    assert tab.get_attribute("aria-selected") == "true"
    assert page.cell("optimizer").locator(NOTE).count() == 0
    return told


def saved_snapshots(path):
    """{tag: snapshot data} of the saved notebook's widget outputs; every widget has one, and
    the outputs keep the widget view and the static pictures beside it."""
    saved = nbformat.read(str(path), as_version=4)
    found = {}
    for tag, cell in zip(TAGS, saved.cells):
        for output in cell.outputs:
            if SNAPSHOT in output.get("data", {}):
                assert {"application/vnd.jupyter.widget-view+json", "text/html", "text/plain"} <= set(output["data"])
                found[tag] = output["data"][SNAPSHOT]
    assert sorted(found) == sorted(tag for tag, _ in WIDGETS)
    return found


def check_snapshots(page, told, name):
    """Each widget's snapshot is drawn under the note; the graph pans, zooms, inspects and replays;
    the gradient flow answers hover. Screenshots named ``<name>-<tag>.png``."""
    views = {}
    for tag, root in WIDGETS:
        output = page.cell(tag)
        note = output.locator(NOTE)
        note.wait_for(timeout=60_000)
        assert note.inner_text() == NOTE_TEXT and note.count() == 1
        views[tag] = output.locator(f'[data-testid="{root}"]')
        views[tag].wait_for(timeout=60_000)
        assert output.locator('[data-testid="vg-error"]').count() == 0
    page.page.wait_for_function("el => el.dataset.ready === 'true'", arg=views["graph"].element_handle(),
                                timeout=60_000)
    for tag in views:
        page.screenshot(f"{name}-{tag}.png", tag)
    body = page.page.locator("body").inner_text()
    assert "model not found" not in body and "Error displaying widget" not in body

    graph = views["graph"]
    page.page.wait_for_function("el => el.dataset.ready === 'true'", arg=graph.element_handle(), timeout=60_000)
    # the model's three modules as boxes and the loss; the node chosen live still in the inspector
    assert graph.locator("svg g.vg-group").evaluate_all("boxes => boxes.map(b => b.dataset.group)") == ["0", "1", "2"]
    graph.locator(f'[data-testid="vg-inspector"][data-node-id="{told["selected"]}"]').wait_for()
    drawn = graph.locator("svg.vg-graph > g").get_attribute("id")
    graph.locator('svg g.vg-group[data-group="0"]').click()                     # a box opens
    page.page.wait_for_function("([el, before]) => el.querySelector('svg.vg-graph > g')?.id !== before",
                                arg=[graph.element_handle(), drawn], timeout=30_000)
    opened = graph.locator("svg g.vg-group").evaluate_all("boxes => boxes.map(b => b.dataset.group)")
    assert {"0.0", "0.1", "1", "2"} <= set(opened)
    before = graph.locator("svg.vg-graph").get_attribute("viewBox")
    graph.locator('[data-testid="vg-zoom-in"]').click()
    zoomed = graph.locator("svg.vg-graph").get_attribute("viewBox")
    assert zoomed != before
    stage = graph.locator('[data-testid="vg-graph-stage"]')
    box = stage.bounding_box()
    page.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.page.mouse.down()
    page.page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2 + 20, steps=4)
    page.page.mouse.up()
    assert graph.locator("svg.vg-graph").get_attribute("viewBox") != zoomed        # panned
    graph.locator('[data-testid="vg-zoom-fit"]').click()
    graph.locator('[data-testid="vg-step-first"]').click()
    graph.locator("svg g.vg-node.vg-pending").first.wait_for()
    graph.locator('[data-testid="vg-step-next"]').click()
    graph.locator("svg g.vg-node.vg-active").first.wait_for()
    assert re.match(r"backward step 1 of \d+", graph.locator('[data-testid="vg-step-text"]').inner_text())
    inspected = graph.locator("svg g.vg-node").last
    target = inspected.get_attribute("data-node-id")
    inspected.click()
    graph.locator(f'[data-testid="vg-inspector"][data-node-id="{target}"]').wait_for()
    page.screenshot(f"{name}-graph-inspected.png", "graph")

    flow = views["grad_flow"]
    assert flow.get_attribute("data-step") == "9"
    assert flow.locator('[data-testid="vg-grad-flow-row"]').count() == 6
    assert flow.locator('[data-testid="vg-grad-flow-row"] rect.vg-bar').count() == 6
    heatmap = flow.locator('[data-testid="vg-grad-flow-heatmap"]')
    heatmap.scroll_into_view_if_needed()
    box = heatmap.bounding_box()
    page.page.mouse.move(box["x"] + box["width"] - 2, box["y"] + 2)
    wait_for_text(page, flow.locator('[data-testid="vg-grad-flow-readout"]'),
                  r"^0\.0\.weight at step 9: gradient RMS \S+")
    page.screenshot(f"{name}-grad_flow-hover.png", "grad_flow")

    board = views["dashboard"]
    assert board.locator('[data-testid="vg-dashboard-tab-flow"]').get_attribute("aria-selected") == "true"
    assert board.locator('[data-testid="vg-grad-flow-row"]').count() == 6
    assert board.get_attribute("data-step") == "9"

    conv = views["conv"]
    assert conv.locator('[data-testid="conv-explorer-map"]').count() == 4
    assert conv.locator('[data-testid="conv-explorer-grad"]').count() >= 4
    assert conv.get_attribute("data-target") == str(told["target"])
    assert painted(conv.locator('[data-testid="conv-explorer-map"]').first)

    attention = views["attention"]
    assert attention.locator('[data-testid="vg-attention-tab"]').count() == 2
    assert attention.locator('[data-testid="vg-attention-tab"][data-head="1"]').get_attribute("aria-selected") == "true"
    assert attention.locator("rect.vg-attention-cell").count() == 25

    race = views["optimizer"]
    assert race.locator('[data-testid="optimizer-step-count"]').inner_text() == "step 6"
    assert painted(race.locator('[data-testid="optimizer-canvas"]'))
    assert painted(race.locator('[data-testid="optimizer-surface"]'))

    playground = views["playground"]
    assert playground.locator('[data-testid="playground-step-count"]').inner_text().startswith("step 6 ")
    assert painted(playground.locator('[data-testid="playground-boundary"]'))
    assert playground.locator('[data-testid="playground-edge"]').count() == 2 * 4 + 4 * 2


def painted(canvas):
    """Whether a canvas has at least one painted pixel."""
    return canvas.evaluate("""canvas => {
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) return true;
        return false;
    }""")


@pytest.mark.parametrize("front_end", list(FRONT_ENDS))
def test_saved_widgets_show_their_snapshots_after_the_kernel_stops(browser, tmp_path, front_end):
    app, app_class, path = FRONT_ENDS[front_end]
    nbformat.write(notebook_file(), str(tmp_path / NAME))
    options = [f"--{app_class}.expose_app_in_browser=True", f"--{app_class}.notebook_starts_kernel=False"]
    folder = ARTIFACTS / front_end
    with running_jupyterlab(tmp_path, app=app, options=options) as server:
        server.request("api/sessions", method="POST",
                       body={"path": NAME, "type": "notebook", "name": NAME, "kernel": {"name": "python3"}})
        page = Page(browser, server, folder)
        try:
            page.open(path)
            page.wait_for_kernel()
            told = run_and_interact(page)
            page.assert_no_problems()
            page.command("docmanager:save")
            snapshots = saved_snapshots(tmp_path / NAME)
            # the refresh kept up with the kernel: the last states are in the file
            assert snapshots["optimizer"]["state"]["step_count"] == 6
            assert snapshots["attention"]["state"]["head"] == 1
            assert snapshots["dashboard"]["state"]["tab"] == "flow"
            assert snapshots["graph"]["state"]["selected"] == told["selected"]
            assert snapshots["grad_flow"]["state"]["flow"]["step"] == 9
            assert snapshots["dashboard"]["state"]["step"] == 9
            size = (tmp_path / NAME).stat().st_size
            print(f"\n{front_end}: the saved notebook with every widget's snapshot is {size / 1024:.0f} KiB")
            assert size < 2 * 1024 * 1024

            for session in server.request("api/sessions"):
                server.request(f"api/sessions/{session['id']}", method="DELETE")
            assert server.request("api/kernels") == []
            page.page.reload()
            page.cell(TAGS[-1]).wait_for(timeout=60_000)
            check_snapshots(page, told, "snapshot")
            assert server.request("api/kernels") == []
            page.screenshot("snapshot-page.png")
            page.assert_no_problems()

            # a fresh kernel knows none of the saved widgets: the snapshots stay, with no error
            server.request("api/sessions", method="POST",
                           body={"path": NAME, "type": "notebook", "name": NAME, "kernel": {"name": "python3"}})
            page.page.reload()
            page.cell(TAGS[-1]).wait_for(timeout=60_000)
            page.wait_for_kernel()
            check_snapshots(page, told, "fresh-kernel")
            page.assert_no_problems()
        except Exception:
            folder.mkdir(parents=True, exist_ok=True)
            page.page.screenshot(path=str(folder / "failure.png"))
            raise
        finally:
            page.page.close()
