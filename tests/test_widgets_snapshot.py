"""Widget snapshots (vizgrad/widgets/snapshot.py): each widget type's snapshot holds its
synced state and buffers and reads back exactly; a widget displays itself with a display id
as the widget view, the snapshot, HTML, SVG and text; its displays are refreshed throttled
and when the cell ends (IPython's post_run_cell), each display once, nothing built while
nothing changed or nothing is displayed; close() stops it; outside IPython nothing breaks.

The display tests run a real IPython shell whose display publisher records what it is
given (the messages a kernel would send); the Coalescer's clock and timer are fakes.

Needs anywidget (``pip install 'vizgrad[widgets]'``) and the built bundle (``make build``).
"""

import base64
import json
import os

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import vizgrad as vg  # noqa: E402
from vizgrad import nn, optim  # noqa: E402
from vizgrad.errors import ArgumentError  # noqa: E402
from vizgrad.widgets import base, snapshot  # noqa: E402
from vizgrad.widgets.base import Coalescer  # noqa: E402

if not os.path.exists(os.path.join(base.STATIC_DIR, "playground-widget.js")):
    pytest.skip("the widget bundle is not built: make build", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("no_listener_leaks")

ORDER = ["application/vnd.jupyter.widget-view+json", snapshot.MIME_TYPE, "text/html", "image/svg+xml", "text/plain"]


# --- every widget type, at modest size --------------------------------------------------------
def mlp():
    vg.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 1))


def train(model, optimizer, steps=3):
    x = vg.randn(16, 2)
    y = x.sum(1, keepdim=True)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss


def graph_view():
    from vizgrad.widgets import GraphView
    model = mlp()
    loss = model(vg.randn(4, 2)).pow(2).mean()
    loss.backward()
    return GraphView(loss)


def grad_flow_view():
    from vizgrad.widgets import GradFlowView
    model = mlp()
    view = GradFlowView(model)
    train(model, optim.SGD(model.parameters(), lr=0.1))
    view.flush()
    return view


def dashboard_view():
    from vizgrad.widgets import dashboard
    model = mlp()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    board = dashboard(model, optimizer, summary_rate=None)
    train(model, optimizer)
    return board


def conv_explorer():
    from vizgrad.widgets import ConvExplorer
    vg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 3))
    return ConvExplorer(model, vg.randn(1, 1, 8, 8))


def attention_view():
    from vizgrad.widgets import AttentionView
    vg.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    x = vg.randn(1, 4, 8)
    _, weights = attention(x, x, x, need_weights=True, average_attn_weights=False)
    return AttentionView(weights, tokens=list("abcd"))


def optimizer_view():
    from vizgrad.widgets import OptimizerView
    view = OptimizerView(resolution=30)
    view.step(5)
    view.flush()
    return view


def playground():
    from vizgrad.widgets import Playground
    view = Playground(hidden=(4,), resolution=12, n_samples=60)
    view.step(3)
    view.flush()
    return view


WIDGETS = {"GraphView": graph_view, "GradFlowView": grad_flow_view, "Dashboard": dashboard_view,
           "ConvExplorer": conv_explorer, "AttentionView": attention_view, "OptimizerView": optimizer_view,
           "Playground": playground}


def as_bytes(value):
    """``value`` with every binary part as ``bytes`` (ipywidgets may hold memoryviews)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {key: as_bytes(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_bytes(item) for item in value]
    return value


@pytest.mark.parametrize("name", list(WIDGETS))
def test_each_widgets_snapshot_round_trips_its_state_and_buffers(name, closing):
    widget = WIDGETS[name]()
    closing.append(widget)
    taken = json.loads(json.dumps(snapshot.take(widget)))          # what the notebook file keeps
    assert taken["schema"] == "vizgrad.snapshot" and taken["version"] == 1
    assert taken["vizgrad"] == vg.__version__
    assert taken["widget"] == type(widget).__name__ == name
    assert taken["module"] == widget._bundle and taken["model_id"] == widget.model_id
    # the synced traits, none of the code, styles or ipywidgets' plumbing
    kept = set(widget.keys) - {"_esm", "_css", "_dom_classes", "layout", "tabbable", "tooltip"}
    kept = {key for key in kept if not key.startswith(("_model_", "_view_", "_anywidget_"))}
    assert set(snapshot.state_keys(widget)) == kept and kept
    assert as_bytes(snapshot.restore(taken)) == as_bytes(widget.get_state(key=sorted(kept)))
    # each binary trait travels as one base64 buffer at its path, not inside the JSON state
    expected_buffers = [key for key in kept if isinstance(getattr(widget, key), bytes)]
    paths = [entry["path"] for entry in taken["buffers"]]
    assert all([key] in paths for key in expected_buffers)
    for entry in taken["buffers"]:
        value = widget.get_state(key=entry["path"][0])[entry["path"][0]]
        for part in entry["path"][1:]:
            value = value[part]
        assert base64.b64decode(entry["data"]) == bytes(value)
    assert "IPY_MODEL_" not in json.dumps(taken["state"])
    bundle, _ = widget._repr_mimebundle_()
    assert list(bundle) == ORDER or list(bundle) == [key for key in ORDER if key != "image/svg+xml"]
    assert bundle[snapshot.MIME_TYPE]["state"] == taken["state"]


def test_a_snapshots_buffers_hold_the_widgets_numbers(closing):
    view = grad_flow_view()
    closing.append(view)
    restored = snapshot.restore(snapshot.take(view))
    values = base.from_float32_bytes(restored["flow"]["series"]["values"], columns=4)
    assert values.shape == (3, 4) and np.all(values > 0)
    assert list(base.from_float32_bytes(restored["flow"]["series"]["steps"])) == [1.0, 2.0, 3.0]


def test_a_graph_snapshot_holds_the_graph_json_text_as_one_buffer(closing):
    view = graph_view()
    closing.append(view)
    (entry,) = [entry for entry in snapshot.take(view)["buffers"] if entry["path"] == ["graph_json"]]
    graph = json.loads(base64.b64decode(entry["data"]))
    assert graph == json.loads(view.graph_json) and graph["schema"] == "vizgrad.graph" and len(graph["nodes"]) == 9


def test_data_that_is_no_snapshot_is_refused():
    with pytest.raises(ArgumentError, match="restore: snapshot is not a vizgrad snapshot"):
        snapshot.restore({"schema": "vizgrad.graph"})


# --- displays and their refresh --------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeTimer:
    def __init__(self, due, function):
        self.due, self.function = due, function
        self.started = self.cancelled = False
        self.daemon = False

    def start(self):
        self.started = True

    def cancel(self):
        self.cancelled = True


@pytest.fixture
def shell():
    """A real IPython shell whose display publisher records each message (data, display id, update)."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    InteractiveShell.clear_instance()          # (another module's test may have left its shell)
    ipython = InteractiveShell.instance(display_pub_class=CapturingDisplayPublisher)
    snapshot._hooked.clear()
    yield ipython
    snapshot._hooked.clear()
    InteractiveShell.clear_instance()


@pytest.fixture
def fake_time():
    clock, timers = FakeClock(), []

    def factory(wait, function):
        timers.append(FakeTimer(clock.now + wait, function))
        return timers[-1]
    return clock, timers, factory


@pytest.fixture
def takes(monkeypatch):
    """How many snapshots were built."""
    count = []
    original = snapshot.take
    monkeypatch.setattr(snapshot, "take", lambda widget: count.append(1) or original(widget))
    return count


def on_fake_time(widget, fake_time):
    """``widget``'s snapshot refresh paced by the fake clock and timers."""
    clock, _, factory = fake_time
    widget._snapshots = snapshot.SnapshotDisplays(
        widget._mimebundle, Coalescer(max_rate=1 / snapshot.REFRESH_INTERVAL, clock=clock, timer=factory),
        settle=widget.flush)
    return widget


def cell_end(shell):
    shell.events.trigger("post_run_cell", None)


def attention(closing, title=""):
    from vizgrad.widgets import AttentionView
    view = AttentionView(np.full((1, 2, 2), 0.5), tokens=["a", "b"], title=title, max_rate=1000)
    closing.append(view)
    return view


def updates(shell):
    return [output for output in shell.display_pub.outputs if output["update"]]


def test_a_displayed_widget_carries_its_snapshot_in_order_with_a_display_id(shell, closing):
    view = attention(closing, title="heads")
    shell.user_ns["view"] = view
    assert shell.run_cell("view").success                         # a cell's last expression
    (shown,) = shell.display_pub.outputs
    assert list(shown["data"]) == ORDER and not shown["update"]
    assert shown["transient"]["display_id"]
    data = shown["data"]
    assert data[ORDER[0]]["model_id"] == view.model_id == data[snapshot.MIME_TYPE]["model_id"]
    assert data[snapshot.MIME_TYPE]["state"]["title"] == "heads"
    assert data["image/svg+xml"].lstrip().startswith("<svg") and data["text/html"]
    assert updates(shell) == []          # nothing changed in the cell: no refresh


def test_changes_refresh_every_display_throttled_and_at_the_cells_end(shell, closing, fake_time, takes):
    from IPython.display import display
    clock, timers, _ = fake_time
    view = on_fake_time(attention(closing), fake_time)
    display(view)
    display(view)                                                  # two displays, two handles
    ids = [output["transient"]["display_id"] for output in shell.display_pub.outputs]
    assert len(set(ids)) == 2 and len(takes) == 2
    for index in range(100):                                       # 100 changes over 10 seconds
        clock.now = index * 0.1
        for timer in timers:
            if timer.started and not timer.cancelled and clock.now >= timer.due:
                timer.cancelled = True
                timer.function()
        view.title = f"title {index}"
    refreshes = view._snapshots.refreshes
    assert 2 <= refreshes <= 1 + 10 / snapshot.REFRESH_INTERVAL + 1
    assert len(takes) == 2 + refreshes                             # built only when delivered, once per refresh
    assert len(updates(shell)) == 2 * refreshes                    # each refresh updates both displays
    assert updates(shell)[-1]["data"][snapshot.MIME_TYPE]["state"]["title"] != "title 99"   # the last one waits
    cell_end(shell)                                                # ... until the cell ends
    last = updates(shell)[-2:]
    assert sorted(output["transient"]["display_id"] for output in last) == sorted(ids)
    assert all(output["data"][snapshot.MIME_TYPE]["state"]["title"] == "title 99" for output in last)
    assert list(last[0]["data"]) == ORDER
    assert not view._snapshots._coalescer.pending
    built = len(takes)
    cell_end(shell)                                                # nothing changed since: no work
    assert len(takes) == built and len(updates(shell)) == 2 * (refreshes + 1)


def test_nothing_is_built_for_a_widget_that_is_not_displayed(shell, closing, fake_time, takes):
    clock, timers, _ = fake_time
    view = on_fake_time(attention(closing), fake_time)
    for index in range(10):
        clock.now = index
        view.title = str(index)
    cell_end(shell)
    assert takes == [] and timers == [] and shell.display_pub.outputs == []


def test_the_cells_end_is_hooked_once_and_delivers_the_widgets_own_pending_updates(shell, closing):
    from vizgrad.widgets import GradFlowView
    model = mlp()
    view = GradFlowView(model)                      # its own updates: at most 20 a second
    closing.append(view)
    other = attention(closing)
    shell.user_ns.update(view=view, other=other, model=model, optim=optim, train=train)
    assert shell.run_cell("display(view); display(other)").success
    assert shell.events.callbacks["post_run_cell"].count(snapshot._flush_all) == 1
    view_id = shell.display_pub.outputs[0]["transient"]["display_id"]
    assert shell.run_cell("train(model, optim.SGD(model.parameters(), lr=0.1), steps=4);").success
    # the first change refreshed at once (step 1), the cell's end the rest: only the widget that changed
    first, refreshed = updates(shell)
    assert {first["transient"]["display_id"], refreshed["transient"]["display_id"]} == {view_id}
    assert snapshot.restore(first["data"][snapshot.MIME_TYPE])["flow"]["step"] == 1
    state = snapshot.restore(refreshed["data"][snapshot.MIME_TYPE])
    assert state["flow"]["step"] == 4               # the last step, not the first one the burst delivered
    assert list(base.from_float32_bytes(state["flow"]["series"]["steps"])) == [1.0, 2.0, 3.0, 4.0]
    assert shell.events.callbacks["post_run_cell"].count(snapshot._flush_all) == 1


def test_the_dashboards_pending_updates_reach_its_snapshot_when_the_cell_ends(shell, closing):
    from vizgrad.widgets import dashboard
    model = mlp()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    board = dashboard(model, optimizer, summary_rate=None)
    closing.append(board)
    shell.user_ns.update(board=board, model=model, optimizer=optimizer, train=train)
    assert shell.run_cell("display(board)").success
    assert shell.run_cell("train(model, optimizer, steps=5);").success
    state = updates(shell)[-1]["data"][snapshot.MIME_TYPE]["state"]
    assert state["step"] == 5 and state["flow"]["step"] == 5


def test_close_stops_the_refresh(shell, closing, fake_time, takes):
    from IPython.display import display
    view = on_fake_time(attention(closing), fake_time)
    display(view)
    view.title = "changed"                          # delivered at once (first change after a quiet spell)
    view.title = "pending"
    displays = view._snapshots
    view.close()
    assert displays not in snapshot._open and displays.handles == []
    cell_end(shell)
    assert [output["data"][snapshot.MIME_TYPE]["state"]["title"] for output in updates(shell)] == ["changed"]
    display(view)                                   # a closed widget shows its text, no widget view
    assert list(shell.display_pub.outputs[-1]["data"]) == ["text/plain"]


def test_a_fallback_that_raises_never_stops_the_widget_showing(closing, monkeypatch):
    view = attention(closing)

    def broken():
        raise RuntimeError("no picture today")
    monkeypatch.setattr(view, "_fallback_svg", broken)
    data, _ = view._repr_mimebundle_()
    assert list(data) == [key for key in ORDER if key != "image/svg+xml"]
    monkeypatch.setattr(view, "_fallback_html", broken)
    data, _ = view._repr_mimebundle_()
    assert "no picture today" in data["text/html"] and snapshot.MIME_TYPE in data


def test_outside_ipython_nothing_breaks(closing):
    from IPython.core.interactiveshell import InteractiveShell
    InteractiveShell.clear_instance()          # (another module's test may have left its shell)
    view = attention(closing)
    view.title = "changed"                          # not displayed: no refresh asked for
    data, metadata = view._repr_mimebundle_()
    assert list(data) == ORDER and metadata == {}
    view._snapshots.add(type("Handle", (), {"update": lambda self, *a, **k: None})())   # no shell: no hook
    assert snapshot._hooked == []


# --- the layout engine travels once per page, not in every widget's state ---------------------
def test_the_graph_widgets_module_leaves_the_layout_engine_to_a_request(closing):
    """The module is a synced trait (a notebook that saves widget state keeps one per widget),
    so it stays small; the 1.5 MB engine goes to the browser when it asks, as base64."""
    from vizgrad.widgets.base import asset_base64
    view = graph_view()
    closing.append(view)
    assert len(view.get_state()["_esm"]) < 200_000
    sent = []
    view.send = lambda content, buffers=None: sent.append(content)
    view._on_asset_request(view, {"type": "asset", "name": "layout-worker"}, [])
    assert sent[-1]["name"] == "layout-worker" and sent[-1]["base64"] == asset_base64("layout-worker")
    from vizgrad.widgets.base import STATIC_DIR
    with open(f"{STATIC_DIR}/layout-worker.js", "rb") as engine:
        assert base64.b64decode(sent[-1]["base64"]) == engine.read()
    view._on_asset_request(view, {"type": "asset", "name": "nothing"}, [])
    assert sent[-1] == {"type": "asset", "name": "nothing", "error": "vizgrad has no asset 'nothing'"}
    view._on_asset_request(view, {"type": "step"}, [])        # another widget's message: not answered
    assert len(sent) == 2
