"""vizgrad's widgets live in marimo: a real marimo server, Debian's Chromium driven by Playwright.

marimo runs anywidgets itself (no Jupyter, no ipywidgets front end): the widget's ES module
and traits travel over marimo's own websocket, and each view lives in a shadow root. The
test serves the notebooks of tests/marimo/ (marimo notebooks are Python files) twice, with
``marimo edit`` (the notebook a user writes; its kernel is a subprocess, cells run on open
as ``runtime.auto_instantiate`` says) and with ``marimo run`` (the notebook as an app), and
checks what a person would see:
- graph_view.py: GraphView(loss) of a small MLP from the loss's own history (no
  vizgrad.trace), wrapped in ``mo.ui.anywidget`` as marimo documents: one SVG node per
  graph node, a box per module, the backward replay; a click on a node opens its inspector
  with the value and gradient norms Python computed, and the selection reaches Python (a
  cell that reads the widget's value reruns and says so);
- grad_flow.py: GradFlowView fed by five training steps, a row per parameter with the
  status Python gives it; a marimo button trains five more and the view follows live;
- optimizer.py: OptimizerView, shown as the cell's last expression (marimo's formatter for
  anywidgets): Step asks Python for a step (a custom message) and the cards show where
  the optimizers are, as an OptimizerRace computes it here; Play steps on through
  Python's "stepped" replies until Pause;
- the pages log no console or page errors and ask no host but the server for anything.

Notebook cells that know something the page should agree with show it on a
``VG-FACTS {json}`` line, which the test reads from the page.

The server: ``sys.executable -m marimo`` on 127.0.0.1 at a free port, headless, with a
token the test picks, serving a temporary copy of tests/marimo/ (marimo may write beside
the notebooks), its config, cache, state and home folders fresh temporary ones (no user
setting leaks in), no update check; stopped by its process handle at the end, also when
a test fails. Screenshots go to test-artifacts/browser-marimo/.
"""

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

import chromium
from lab_server import REPOSITORY, free_port

# one marimo server per mode for the module: keep its tests on one xdist worker
pytestmark = pytest.mark.xdist_group("marimo")

NOTEBOOKS = Path(__file__).resolve().parent / "marimo"
ARTIFACTS = REPOSITORY / "test-artifacts" / "browser-marimo"
# the user config marimo reads from $XDG_CONFIG_HOME/marimo/marimo.toml: run every cell when
# a notebook opens in the editor (marimo run always does)
CONFIG = "[runtime]\nauto_instantiate = true\n"
VIEWPORT = {"width": 1280, "height": 800}
FACTS = re.compile(r"^VG-FACTS (\{.*\})$")


@dataclass
class Marimo:
    """A running marimo server: how it was started, where it listens, its process."""

    mode: str
    port: int
    token: str
    process: subprocess.Popen
    log_path: Path

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/"

    def url(self, notebook):
        """The address of ``notebook`` (a file name in the served folder) with the token."""
        return f"{self.base_url}?file={notebook}&access_token={self.token}"

    def log(self, last_chars=4000):
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-last_chars:]
        except OSError as error:
            return f"(no server log: {error})"


def _environment(home):
    """This environment with marimo's folders (and HOME) moved into ``home``, no update
    check, and the repository first on PYTHONPATH (the notebooks import the vizgrad under test)."""
    env = dict(os.environ)
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        env[name] = str(home / name.lower())
        (home / name.lower()).mkdir()
    (home / "xdg_config_home" / "marimo").mkdir()
    (home / "xdg_config_home" / "marimo" / "marimo.toml").write_text(CONFIG, encoding="utf-8")
    env["MARIMO_SKIP_UPDATE_CHECK"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                             if p])
    return env


def wait_until_ready(server, attempts=240, interval=0.25):
    """Poll ``/health`` until it answers (about a minute at most); fail with the log if the
    process exits first or the server never answers."""
    last_error = None
    for _ in range(attempts):
        if server.process.poll() is not None:
            raise RuntimeError(f"marimo exited with status {server.process.returncode} before it answered:\n"
                               f"{server.log()}")
        try:
            with urllib.request.urlopen(server.base_url + "health", timeout=2.0) as response:
                if json.loads(response.read()).get("status") == "healthy":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError) as error:
            last_error = error
        time.sleep(interval)
    raise RuntimeError(f"marimo did not answer /health after {attempts} attempts ({last_error}):\n{server.log()}")


def stop(server, timeout=10.0):
    """Terminate the server, then kill it if it lingers; then whatever it started (the
    editor's kernels, in the process group the server leads) that outlived it."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.process.pid, signal.SIGKILL)


@contextlib.contextmanager
def running_marimo(mode, root):
    """Start ``marimo edit`` or ``marimo run`` (``mode``) serving the folder ``root``; yield
    a :class:`Marimo`; always stop it."""
    with tempfile.TemporaryDirectory(prefix="vizgrad-marimo-") as home:
        home = Path(home)
        env = _environment(home)
        token = secrets.token_hex(16)
        port = free_port()
        log_path = home / "server.log"
        command = [sys.executable, "-m", "marimo", "--yes", mode, str(root), "--headless", "--host", "127.0.0.1",
                   "--port", str(port), "--token-password", token, "--no-sandbox"]
        if mode == "edit":
            command.append("--skip-update-check")
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        server = Marimo(mode=mode, port=port, token=token, process=process, log_path=log_path)
        try:
            wait_until_ready(server)
            yield server
        finally:
            stop(server)


@pytest.fixture(scope="module")
def browser():
    with chromium.launch(needs=("marimo", "anywidget")) as browser:
        yield browser


@pytest.fixture(scope="module", params=["edit", "run"])
def server(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"marimo-{request.param}")
    for notebook in NOTEBOOKS.glob("*.py"):
        shutil.copy(notebook, root)
    with running_marimo(request.param, root) as running:
        yield running


@pytest.fixture
def page(browser, server):
    """A page of the server; at the end fails on console errors, page errors and requests
    to any host but the server."""
    page = browser.new_page(viewport=VIEWPORT)
    problems = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("request", lambda request: problems.append(f"network request: {request.url[:120]}")
            if not request.url.startswith((server.base_url, "data:", "blob:", "about:")) else None)
    yield page
    page.close()
    assert problems == [], f"the page reported problems ({server.mode} mode):\n" + "\n".join(problems)


def screenshot(locator, server, name):
    """A PNG of the page, ``locator`` scrolled into view, in test-artifacts/browser-marimo/:
    what a person sees (in the editor, outputs over 610 px tall scroll inside their cell)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    locator.scroll_into_view_if_needed()
    locator.page.screenshot(path=str(ARTIFACTS / f"{server.mode}-{name}.png"))


def facts(page, pattern=""):
    """The data on the page's VG-FACTS line, once its text matches ``pattern`` (a regular
    expression over the JSON; a cell that reruns shows new facts)."""
    line = page.get_by_text(re.compile(r"^VG-FACTS \{.*" + pattern))
    line.wait_for(timeout=60_000)
    return json.loads(FACTS.match(line.inner_text().strip()).group(1))


def section_norm(text, heading):
    """The norm in the inspector's section ``heading`` ("VALUE", "GRADIENT"): its text has a
    line per section heading and a ``label<TAB>value`` line per statistic."""
    lines = text.splitlines()
    rows = lines[lines.index(heading) + 1:]
    return float(next(line.split("\t")[1] for line in rows if line.startswith("norm\t")))


def test_graph_view_live(page, server):
    page.goto(server.url("graph_view.py"))
    view = page.locator('[data-testid="vg-graph-widget"][data-ready="true"]')
    view.wait_for(timeout=60_000)
    known = facts(page)
    assert view.get_attribute("data-replay") == "true"
    drawn = view.locator("svg g.vg-node").evaluate_all("elements => elements.map(e => e.dataset.nodeId)")
    assert sorted(drawn) == sorted(known["nodes"]) and len(drawn) == 8
    boxes = view.locator("svg g.cluster[data-group]").evaluate_all("elements => elements.map(e => e.dataset.group)")
    assert sorted(boxes) == sorted(known["modules"]) == ["0", "1", "2"]
    assert f"{len(known['timeline'])} backward steps" in view.get_by_test_id("vg-status").inner_text()
    # the gradient legend's labels ("gradient size (RMS)", the two ends of its scale) are one
    # line each at marimo's default cell width, never broken inside a number
    heights = view.get_by_test_id("vg-graph-legend").evaluate(
        """legend => [...legend.children].filter((span) => !span.className || span.className === "vg-graph-legend-title")
             .map((span) => span.getBoundingClientRect().height / parseFloat(getComputedStyle(span).lineHeight))""")
    assert len(heights) == 3 and max(heights) < 1.2, heights
    screenshot(view, server, "graph-view")

    # the replay: its first step is the first node the engine differentiated
    view.get_by_test_id("vg-step-first").click()
    view.get_by_test_id("vg-step-next").click()
    first = known["timeline"][0]
    page.locator('[data-testid="vg-graph-widget"][data-step="0"]').wait_for(timeout=10_000)
    assert view.get_by_test_id("vg-step-text").inner_text() == \
        f"backward step 1 of {len(known['timeline'])}: {known['nodes'][first]} ({first})"
    assert view.locator(f'svg g.vg-node[data-node-id="{first}"]').get_attribute("class").split().count("vg-active") == 1

    # a click on the first layer's weight: its inspector, with Python's norms; the
    # selection reaches Python, whose cell reruns
    weight = next(node for node, label in known["nodes"].items() if label == "0.weight")
    view.locator(f'svg g.vg-node[data-node-id="{weight}"]').click()
    inspector = view.get_by_test_id("vg-inspector")
    inspector.get_by_text(weight, exact=True).wait_for(timeout=10_000)
    assert inspector.get_attribute("data-node-id") == weight
    text = inspector.inner_text()
    assert section_norm(text, "VALUE") == pytest.approx(known["weight_norm"], rel=1e-3)
    assert section_norm(text, "GRADIENT") == pytest.approx(known["weight_grad_norm"], rel=1e-3)
    for box in ("vg-heatmap-value", "vg-heatmap-grad"):           # an (8, 3) weight: heatmaps of both
        assert inspector.get_by_test_id(box).locator("svg").count() == 1
    assert facts(page, f'"selected": "{weight}"')["selected"] == weight
    screenshot(view, server, "graph-view-inspected")


def test_grad_flow_live(page, server):
    page.goto(server.url("grad_flow.py"))
    view = page.get_by_test_id("vg-grad-flow-widget")
    page.locator('[data-testid="vg-grad-flow-widget"][data-ready="true"][data-step="5"]').wait_for(timeout=60_000)
    known = facts(page, '"steps": 5,')
    rows = view.get_by_test_id("vg-grad-flow-row")
    layers = rows.evaluate_all("rows => rows.map(r => [r.dataset.layer, r.dataset.status])")
    assert layers == [[name, status] for name, status in known["statuses"].items()]
    assert len(layers) == 6 and view.locator("rect.vg-bar").count() == 6
    assert heatmap_size(view) == [5, 6]           # one pixel column per step, one row per parameter
    screenshot(view, server, "grad-flow")

    # five more steps from a marimo button: Python trains, the view follows live
    page.get_by_role("button", name="train 5 steps").click()
    page.locator('[data-testid="vg-grad-flow-widget"][data-step="10"]').wait_for(timeout=30_000)
    known = facts(page, '"steps": 10,')
    assert known["clicks"] == 1
    assert heatmap_size(view) == [10, 6]
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.status)") == list(known["statuses"].values())
    screenshot(view, server, "grad-flow-trained")


def heatmap_size(view):
    """The gradient-flow heatmap image's size in pixels, [steps, parameters]."""
    return view.get_by_test_id("vg-grad-flow-heatmap").evaluate(
        """image => new Promise((resolve, reject) => { const picture = new Image();
             picture.onload = () => resolve([picture.naturalWidth, picture.naturalHeight]);
             picture.onerror = reject; picture.src = image.getAttribute("href"); })""")


def test_optimizer_view_live(page, server):
    from vizgrad.widgets import OptimizerRace

    page.goto(server.url("optimizer.py"))
    view = page.get_by_test_id("optimizer-view")
    view.wait_for(timeout=60_000)
    count = view.get_by_test_id("optimizer-step-count")
    assert count.inner_text() == "step 0"
    # the contour map is drawn (its canvas holds more than one colour)
    colours = view.get_by_test_id("optimizer-surface").evaluate(
        """canvas => { const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
                       const seen = new Set(); for (let i = 0; i < data.length; i += 997 * 4) seen.add(data[i] << 16 | data[i + 1] << 8 | data[i + 2]);
                       return seen.size; }""")
    assert colours > 10

    # Step: a message to Python, which steps the race; the cards show where it went
    view.get_by_test_id("optimizer-step").click()
    wait_for_step(view, 1)
    expect_cards(view, OptimizerRace("rosenbrock", ("SGD", "Momentum", "Adam")))
    screenshot(view, server, "optimizer-stepped")

    # Play: one step request per frame, each after Python's "stepped" reply; Pause stops it
    play = view.get_by_test_id("optimizer-play")
    play.click()
    view.locator('[data-testid="optimizer-step-count"]', has_text=re.compile(r"^step \d{3,}$")).wait_for(timeout=30_000)
    play.click()
    assert play.get_attribute("aria-pressed") == "false" and play.inner_text() == "Play"
    view.locator('[data-testid="optimizer-status-adam"][data-status="paused"]').wait_for(timeout=10_000)
    stopped = count.inner_text()
    page.wait_for_timeout(500)
    assert count.inner_text() == stopped
    screenshot(view, server, "optimizer-raced")

    # Python retunes Adam (a marimo button's cell; the synthetic click leaves the focus where
    # it is) while SGD's rate is being typed: Adam's card follows Python, and the text typed
    # stays (the view lives in a shadow root: the focus is the root's, not the document's)
    sgd_lr, adam_lr = view.get_by_test_id("optimizer-lr-sgd"), view.get_by_test_id("optimizer-lr-adam")
    assert (sgd_lr.input_value(), adam_lr.input_value()) == ("0.001", "0.05")     # the rates for Rosenbrock
    sgd_lr.fill("0.002")                       # typed, not committed: no change event yet
    page.get_by_role("button", name="Adam: lr 0.02").dispatch_event("click")
    page.wait_for_function("input => input.value === '0.02'", arg=adam_lr.element_handle(), timeout=30_000)
    assert sgd_lr.input_value() == "0.002"
    assert sgd_lr.evaluate("input => input.getRootNode().activeElement === input")
    # Enter commits it; Reset and Step race again with both rates, as Python computes it here
    sgd_lr.press("Enter")
    view.get_by_test_id("optimizer-reset").click()
    wait_for_step(view, 0)
    view.get_by_test_id("optimizer-step").click()
    wait_for_step(view, 1)
    retuned = OptimizerRace("rosenbrock", ("SGD", "Momentum", "Adam"))
    retuned.configure("SGD", lr=0.002)
    retuned.configure("Adam", lr=0.02)
    expect_cards(view, retuned)


def wait_for_step(view, step):
    view.locator('[data-testid="optimizer-step-count"]', has_text=re.compile(rf"^step {step}$")).wait_for(timeout=10_000)


def expect_cards(view, race):
    """Step ``race`` (an OptimizerRace here, as the notebook's) once; each card of the view
    must say where the same step took its optimizer: "step 1 · f = … · (x, y)"."""
    race.step(1)
    for name, state in race.states.items():
        card = view.get_by_test_id(f"optimizer-card-{name.lower()}").inner_text()
        summary = re.search(r"step 1 · f = (\S+) · \((\S+), (\S+)\)", card)
        assert summary, card
        assert [float(v) for v in summary.groups()] == pytest.approx([state["value"], *state["position"]], rel=1e-3)
