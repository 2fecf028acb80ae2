"""The widgets' foundation (bundle loading, throttling, listener ownership, static
fallbacks) and GraphView: what its traits hold after a known computation, live
updates, replay and collapse controls, and the recorder details it relies on
(per-edge gradients, sample values, heatmap matrices).

Needs anywidget (``pip install 'vizgrad[widgets]'``) and the built bundle (``make build``).
"""

import base64
import gc
import json
import math
import re
import subprocess
import sys
import time
import weakref

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

from ipywidgets.widgets.widget import _remove_buffers  # noqa: E402

import vizgrad as vg  # noqa: E402
from vizgrad import nn  # noqa: E402
from vizgrad.autograd import observers  # noqa: E402
from vizgrad.trace import Graph, Recorder  # noqa: E402
from vizgrad.widgets import GraphView, base  # noqa: E402
from vizgrad.widgets.base import Coalescer, SeriesBuffer, float32_bytes, from_float32_bytes  # noqa: E402
from vizgrad.widgets.graph_view import effective_collapse, module_names  # noqa: E402

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


pytestmark = pytest.mark.usefixtures("no_listener_leaks")


def count_messages(widget):
    """Count the state messages ``widget`` sends to the front end (one per sync)."""
    sent = []
    original = widget._send

    def counting(msg, buffers=None):
        sent.append((msg, buffers))
        return original(msg, buffers=buffers)
    widget._send = counting
    return sent


def sent_graph(msg, buffers):
    """The Graph JSON a state message carries (one buffer of JSON text), or None."""
    paths = msg.get("buffer_paths", [])
    return json.loads(bytes(buffers[paths.index(["graph_json"])])) if ["graph_json"] in paths else None


def wait_until(condition, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def mul_tanh_sum():
    """y = sum(tanh(a * b)) with known values: a = [0.5, 1], b = [1.5, -2]."""
    a = vg.tensor([0.5, 1.0], requires_grad=True)
    b = vg.tensor([1.5, -2.0], requires_grad=True)
    return a, b, (a * b).tanh().sum()


# --- packaging and import rules ---------------------------------------------------------
def test_the_engine_never_imports_the_widgets():
    code = ("import sys, vizgrad as vg, vizgrad.nn, vizgrad.optim, vizgrad.trace, vizgrad.render.html, "
            "vizgrad.diagnostics\nx = vg.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.startswith('vizgrad.widgets') or m in ('anywidget', 'ipywidgets')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_importing_the_widgets_without_anywidget_says_what_to_install():
    code = ("import sys\nsys.modules['anywidget'] = None\ntry:\n    import vizgrad.widgets\n"
            "except ImportError as error:\n    print(error)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'vizgrad[widgets]'" in out.stdout


def test_a_missing_bundle_says_to_run_make_build(monkeypatch, tmp_path):
    monkeypatch.setattr(base, "STATIC_DIR", str(tmp_path))
    monkeypatch.setattr(base, "_bundle_cache", {})
    with pytest.raises(base.BundleMissing, match="make build"):
        GraphView(vg.ones(2), live=False)
    assert observers.active == []


def test_every_widget_bundle_is_an_es_module_with_render_and_graphviz_comes_as_an_asset():
    for name in ("graph-widget", "grad-flow-widget", "dashboard-widget"):
        code = base.read_static(f"{name}.js")
        assert "export" in code and "render" in code
        assert "</script" not in code.lower()
    graph = base.read_static("graph-widget.js")
    # the module is small (it is a trait, saved with widget state): the layout worker, its wasm
    # inside, is the asset the widget asks its kernel for
    assert len(graph) < 200_000 and not re.findall(r'"[A-Za-z0-9+/]{100000,}={0,2}"', graph)
    worker = base64.b64decode(base.asset_base64("layout-worker")).decode()
    assert "WebAssembly" in worker and "onmessage" in worker
    for code in (graph, worker):
        assert "https://" not in code.replace("https://graphviz.org", "")   # nothing fetched from a CDN
    css = base.read_static("widgets.css")
    assert ".vg-widget" in css and "body" not in css.split("{")[0]


# --- the coalescer ---------------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeTimer:
    """threading.Timer's interface, due at a time of a FakeClock; fires when a test says so."""

    def __init__(self, due, function):
        self.due, self.function, self.cancelled, self.started = due, function, False, False
        self.daemon = False

    def start(self):
        self.started = True

    def cancel(self):
        self.cancelled = True

    def fire(self):
        if self.started and not self.cancelled:
            self.cancelled = True
            self.function()


@pytest.fixture
def fake_time():
    """(clock, timers, timer factory) for a Coalescer that runs on a fake clock."""
    clock = FakeClock()
    timers = []

    def factory(wait, function):
        timers.append(FakeTimer(clock.now + wait, function))
        return timers[-1]
    return clock, timers, factory


def test_a_burst_of_10000_updates_costs_at_most_max_rate_deliveries_per_second(fake_time):
    clock, timers, factory = fake_time
    delivered = []
    built = []
    coalescer = Coalescer(max_rate=20, clock=clock, timer=factory)
    for value in range(10_000):                   # 10,000 events over one second
        clock.now = value * 1e-4
        for timer in timers:                      # timers whose time has come fire first
            if clock.now >= timer.due:
                timer.fire()

        def build(value=value):
            built.append(value)
            delivered.append(value)
        coalescer.request(build)
    assert coalescer.flushes <= 1 + 20 + 1
    assert built == delivered                     # payloads are built only when delivered
    waiting = [timer for timer in timers if timer.started and not timer.cancelled]
    assert len(waiting) == 1 and coalescer.pending   # the last update waits for one one-shot timer
    clock.now = waiting[0].due
    waiting[0].fire()
    assert delivered[-1] == 9_999 and not coalescer.pending
    assert coalescer.flushes <= 1 + 20 + 1


def test_the_first_update_goes_at_once_and_a_quick_second_waits_for_one_timer(fake_time):
    clock, fake_timers, factory = fake_time
    delivered = []
    coalescer = Coalescer(max_rate=10, clock=clock, timer=factory)
    coalescer.request(lambda: delivered.append("a"))
    assert delivered == ["a"] and not fake_timers
    clock.now = 0.01
    coalescer.request(lambda: delivered.append("b"))
    coalescer.request(lambda: delivered.append("c"))     # replaces b: same key
    coalescer.request(lambda: delivered.append("other"), key="other")
    assert delivered == ["a"] and len(fake_timers) == 1
    assert fake_timers[0].due == pytest.approx(0.2) and fake_timers[0].daemon   # one interval after it could go
    fake_timers[0].fire()
    assert delivered == ["a", "c", "other"]
    # while requests keep coming, the first one after the interval delivers and cancels the timer
    clock.now = 0.25
    coalescer.request(lambda: delivered.append("d"))                 # after a quiet spell: at once
    clock.now = 0.27
    coalescer.request(lambda: delivered.append("e"))                 # too soon: a timer waits
    assert delivered[-1] == "d" and len(fake_timers) == 2 and not fake_timers[1].cancelled
    clock.now = 0.36
    coalescer.request(lambda: delivered.append("f"))                 # the interval is over: delivered here
    assert delivered[-2:] == ["d", "f"] and fake_timers[1].cancelled


def test_close_cancels_the_timer_and_ignores_later_requests(fake_time):
    clock, fake_timers, factory = fake_time
    delivered = []
    coalescer = Coalescer(max_rate=10, clock=clock, timer=factory)
    coalescer.request(lambda: delivered.append(1))
    coalescer.request(lambda: delivered.append(2))
    coalescer.close()
    assert fake_timers[0].cancelled
    coalescer.request(lambda: delivered.append(3))
    coalescer.flush()
    assert delivered == [1]


def test_the_real_timer_delivers_the_last_update_after_a_burst():
    delivered = []
    coalescer = Coalescer(max_rate=50)
    for value in range(1000):
        coalescer.request(lambda value=value: delivered.append(value))
    assert wait_until(lambda: delivered and delivered[-1] == 999, timeout=10)
    assert coalescer.flushes < 50
    coalescer.close()


def test_rejects_a_non_positive_rate():
    with pytest.raises(ValueError, match="max_rate"):
        Coalescer(max_rate=0)


# --- binary series ------------------------------------------------------------------------------
def test_series_travel_as_float32_bytes():
    data = float32_bytes([1.5, math.nan, -2.0])
    assert isinstance(data, bytes) and len(data) == 12
    back = from_float32_bytes(data)
    assert back[0] == 1.5 and math.isnan(back[1]) and back[2] == -2.0


def test_series_buffer_stays_bounded_and_spans_the_whole_history():
    buffer = SeriesBuffer(columns=2, max_points=10)
    for step in range(1000):
        buffer.append(step, [step, -step])
    assert len(buffer) <= 10
    steps = buffer.steps
    assert steps[0] == 0 and steps[-1] == 999                     # the latest row is always there
    assert np.all(np.diff(steps[:-1]) == buffer.stride) and steps[-2] > 999 - buffer.stride
    payload = buffer.payload()
    values = from_float32_bytes(payload["values"], columns=2)
    assert payload["length"] == len(buffer) and payload["columns"] == 2
    np.testing.assert_array_equal(values[:, 0], steps)
    np.testing.assert_array_equal(values[:, 1], -steps)


# --- GraphView: a known computation -------------------------------------------------------------
def test_traits_hold_the_graph_its_dot_and_the_backward_timeline(closing):
    a, b, y = mul_tanh_sum()
    view = GraphView(y)
    closing.append(view)
    ops = [node["op"] for node in view.graph["nodes"]]
    assert ops == [None, None, "Mul", "Tanh", "Sum"]
    assert [(e["source"], e["target"], e["index"]) for e in view.graph["edges"]] == [
        ("n0", "n2", 0), ("n1", "n2", 1), ("n2", "n3", 0), ("n3", "n4", 0)]
    assert view.timeline == [] and view.step_index == -1
    assert 'digraph vizgrad' in view.dot and '"n2"' in view.dot
    assert view.live and view.listening

    y.backward()
    assert wait_until(lambda: len(view.timeline) == 5)
    assert view.timeline == ["n4", "n3", "n2", "n0", "n1"]          # a's and b's gradients in Mul's order
    assert view.step_index == 4                                    # follows to the end
    assert view.active_node == "n1"
    nodes = {node["id"]: node for node in view.graph["nodes"]}
    assert [nodes[i]["backward_index"] for i in view.timeline] == [0, 1, 2, 3, 4]
    # the chain rule's parts: the gradient each input received from Mul
    dy = 1 - np.tanh(np.array([0.75, -2.0])) ** 2
    edges = {(e["source"], e["target"]): e for e in view.graph["edges"]}
    np.testing.assert_allclose(edges[("n0", "n2")]["grad"]["sample"], dy * [1.5, -2.0], rtol=1e-5)
    np.testing.assert_allclose(edges[("n1", "n2")]["grad"]["sample"], dy * [0.5, 1.0], rtol=1e-5)
    np.testing.assert_allclose(nodes["n2"]["grad"]["sample"], dy, rtol=1e-5)
    np.testing.assert_allclose(nodes["n0"]["grad"]["sample"], a.grad.numpy(), rtol=1e-6)
    assert "backward steps" in view.status and "penwidth=3" in view.dot    # coloured by gradient size


def test_the_graph_trait_follows_the_published_schema(closing):
    jsonschema = pytest.importorskip("jsonschema")
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    with vg.trace() as tr:
        loss = model(vg.randn(5, 3)).pow(2).mean()
        loss.backward()
    view = GraphView(tr)
    closing.append(view)
    jsonschema.Draft202012Validator(Graph.schema()).validate(view.graph)
    weight = next(n for n in view.graph["nodes"] if n["name"] == "0.weight")
    assert len(weight["value"]["matrix"]) == 4 * 3 and weight["value"]["shape"] == [4, 3]   # row by row
    assert "matrix_rows" not in weight["value"] and "bin_edges" not in weight["value"]      # every row; v3
    assert weight["grad"]["matrix"] is not None and len(weight["grad"]["sample"]) == 6
    # the optimizer/mark history is left to the other closing
    assert view.graph["steps"] == []


def test_stats_keep_a_few_values_and_a_small_evenly_spaced_matrix():
    from vizgrad.trace import stats_dict
    values = np.arange(100 * 40, dtype=np.float32).reshape(100, 40)
    values[0, 0] = np.nan
    stats = stats_dict(vg.tensor(values))
    assert stats["sample"] == [None, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert len(stats["matrix"]) == 16 * 16 and len(stats["matrix_rows"]) == len(stats["matrix_cols"]) == 16
    assert stats["matrix_rows"][0] == 0 and stats["matrix_rows"][-1] == 99
    assert stats["matrix_cols"][-1] == 39
    assert stats["matrix"][0] is None
    row, col = stats["matrix_rows"][1], stats["matrix_cols"][2]                  # row by row
    assert stats["matrix"][16 + 2] == pytest.approx(row * 40 + col, rel=1e-3)
    assert stats["matrix"][-1] == pytest.approx(99 * 40 + 39, rel=1e-3)
    assert "matrix" not in stats_dict(vg.ones(3, 4, 5))
    json.dumps(stats, allow_nan=False)


def test_edges_keep_a_cheap_summary_of_the_gradient_they_carried():
    from vizgrad.trace import summary_dict
    values = np.array([[3.0, -4.0], [0.0, 1.0]], dtype=np.float32)
    summary = summary_dict(vg.tensor(values))
    assert summary == {"shape": [2, 2], "mean": 0.0, "norm": pytest.approx(math.sqrt(26)), "min": -4.0, "max": 3.0,
                       "nan_count": 0, "inf_count": 0, "sample": [3.0, -4.0, 0.0, 1.0]}
    bad = summary_dict(np.array([1.0, np.nan, np.inf, -np.inf], dtype=np.float32))
    assert (bad["nan_count"], bad["inf_count"], bad["norm"], bad["sample"]) == (1, 2, 1.0, [1.0, None, None, None])
    huge = summary_dict(np.full(4, 1e30, dtype=np.float32))         # float32 squares overflow, values do not
    assert huge["norm"] == pytest.approx(2e30, rel=1e-6) and huge["inf_count"] == 0
    empty = summary_dict(np.zeros((0, 3), dtype=np.float32))
    assert empty["mean"] is None and empty["norm"] is None and empty["sample"] == []


def test_a_recorder_started_from_a_tensor_continues_with_its_backward():
    a, b, y = mul_tanh_sum()
    recorder = Recorder.from_tensor(y)
    assert [n.op for n in recorder.graph.nodes] == [n.op for n in vg.graph(y).nodes]
    with recorder:
        y.backward()
    graph = recorder.result()
    assert graph.backward_order == ["n4", "n3", "n2", "n0", "n1"]
    assert graph.node("n0").grad["norm"] == pytest.approx(float(np.linalg.norm(a.grad.numpy())), rel=1e-6)


def test_a_live_view_records_from_now_and_starts_afresh_each_iteration(closing):
    view = GraphView(max_rate=1000)
    closing.append(view)
    model = nn.Linear(3, 1)
    x = vg.randn(4, 3)
    for _ in range(2):
        loss = model(x).pow(2).mean()
        loss.backward()
    view.stop()
    assert not view.listening and not view.live
    ops = [n["op"] for n in view.graph["nodes"] if n["op"]]
    assert ops == ["Linear", "Pow", "Mean"]                 # the second iteration only
    assert len(view.timeline) == len(view.current_graph.backward_order) > 0
    assert module_names(view.current_graph) == [] and view.modules == []


def test_a_view_follows_a_trace_that_is_still_recording(closing):
    with vg.trace() as tr:
        view = GraphView(tr, max_rate=1000)
        closing.append(view)
        x = vg.tensor([1.0, -2.0], requires_grad=True)
        loss = (x.exp() * x).sum()
        loss.backward()
        view._updates.flush()
        assert view.listening
        assert [n["op"] for n in view.graph["nodes"] if n["op"]] == ["Exp", "Mul", "Sum"]
        assert view.timeline == tr.graph.backward_order and view.step_index == len(view.timeline) - 1
    view.stop()
    assert not view.listening


def test_a_static_graph_is_shown_without_listening(closing):
    _, _, y = mul_tanh_sum()
    y.backward()
    view = GraphView(vg.graph(y), live=True)
    closing.append(view)
    assert not view.listening and len(view.graph["nodes"]) == 5
    with pytest.raises(TypeError, match="GraphView: source must be a Tensor"):
        GraphView(42)


def test_a_view_of_a_tensor_never_changes_with_unrelated_work(closing):
    a, b, y = mul_tanh_sum()
    view = GraphView(y, max_rate=1000)
    closing.append(view)
    before, revision = json.dumps(view.graph), view.revision
    assert view.listening and "follows its backward" in view.status
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    other = (w * 3).exp().sum()                 # later, unrelated work: ops and a backward pass
    other.backward()
    view._updates.flush()
    assert json.dumps(view.graph) == before and view.revision == revision and view.timeline == []
    y.backward()                                # its own backward: replayed
    view._updates.flush()
    assert view.timeline == ["n4", "n3", "n2", "n0", "n1"] and view.graph["backward"]["source"] == "recorded"
    assert len(view.graph["nodes"]) == 5


def test_a_view_made_after_backward_replays_it(closing):
    a, b, y = mul_tanh_sum()
    y.backward()
    view = GraphView(y)
    closing.append(view)
    assert view.graph["backward"]["source"] == "graph" and "vizgrad.trace()" in view.graph["backward"]["note"]
    assert view.timeline == ["n4", "n3", "n2", "n0", "n1"] and view.step_index == 4
    nodes = {node["id"]: node for node in view.graph["nodes"]}
    np.testing.assert_allclose(nodes["n0"]["grad"]["sample"], a.grad.numpy())
    np.testing.assert_allclose(nodes["n1"]["grad"]["sample"], b.grad.numpy())
    assert [node["label"] for node in view.graph["nodes"]] == ["a", "b", "Mul", "Tanh", "y"]   # the caller's names
    forward_only = GraphView(mul_tanh_sum()[2], live=False)
    closing.append(forward_only)
    assert forward_only.graph["backward"] == {"source": None, "note": None} and not forward_only.listening


def test_every_argument_works_for_every_source(closing):
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    x = vg.randn(4, 2)
    with vg.trace() as tr:
        loss = model(x).pow(2).mean()
        loss.backward()
    recording = Recorder().start()
    try:
        model(x).sum()
        sources = {"tensor": model(x).sum(), "trace": tr, "recorder": recording, "graph": tr.graph, "none": None}
        for kind, source in sources.items():
            for live in (None, True, False):
                view = GraphView(source, live=live, max_nodes=3, max_rate=50, collapse=["0"])
                closing.append(view)
                assert view.collapsed == ["0"], (kind, live)
                assert view.max_nodes == 3 and view._updates.interval == pytest.approx(0.02)
                if kind != "none":
                    box = [g["id"] for g in view.graph["groups"] if g["name"] == "0"]
                    assert box and f'"m_{box[0]}"' in view.dot and "omitted" in view.dot, (kind, live)
                if live is False or kind == "graph":
                    assert not view.listening, (kind, live)
                view.close()
    finally:
        recording.close()
    everything = GraphView(model(x).sum(), live=True, max_rate=1000)
    closing.append(everything)
    vg.ones(2) * 3                                         # live=True: a tensor's view records new work too
    everything._updates.flush()
    assert everything.graph["nodes"][-1]["op"] == "Mul" and "live" in everything.status


# --- replay, selection, collapse --------------------------------------------------------------------
def test_step_seek_play_pause_and_select(closing):
    _, _, y = mul_tanh_sum()
    view = GraphView(y)
    closing.append(view)
    y.backward()
    view._updates.flush()
    assert view.step(-2) == 2 and view.active_node == "n2"
    assert view.step(-10) == -1 and view.active_node is None
    assert view.step(100) == 4
    assert view.seek(1) == 1
    view.step_index = 99                              # the front end cannot go past the end
    assert view.step_index == 4
    view.play()
    assert view.playing and view.step_index == -1     # from the end, play restarts
    view.pause()
    assert not view.playing
    view.select("n3")
    assert view.selected == "n3" and view.node("n3").op == "Tanh"
    with pytest.raises(KeyError):
        view.select("n99")
    view.select(None)


def test_steps_are_numbered_as_the_widget_numbers_them(closing):
    """step_index is the position in timeline; Python and the widget both say "backward
    step step_index + 1 of len(timeline)" (lesson 01 printed "step 0 of 5" beside "step 1 of 6")."""
    _, _, y = mul_tanh_sum()
    view = GraphView(y)
    closing.append(view)
    assert view.step_text == "no backward pass recorded"
    y.backward()
    view._updates.flush()
    total = len(view.timeline)
    view.seek(-1)
    assert view.step_text == f"before backward (0 of {total} steps)"
    view.step()
    first = view.node(view.active_node)
    assert view.step_index == 0
    assert view.step_text == f"backward step 1 of {total}: {first.name or first.label or first.op or first.kind} ({first.id})"
    view.seek(total - 1)
    assert view.step_text.startswith(f"backward step {total} of {total}: ")
    data, _ = view._repr_mimebundle_()
    assert data["text/plain"].endswith(f"; {view.step_text}>")     # what the cell prints says the same


def test_the_browser_may_collapse_to_fit_until_the_user_chooses(closing):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    with vg.trace() as tr:
        model(vg.randn(5, 3)).sum().backward()
    view = GraphView(tr)
    closing.append(view)
    assert view.auto_collapse and view.show_minimap
    view.collapsed = ["0"]                      # what the browser sends when it collapses to fit, or a click
    assert not view.auto_collapse and view.collapsed == ["0"]
    chosen = GraphView(tr, collapse=[])         # the user chose: drawn as asked, never collapsed further
    closing.append(chosen)
    assert not chosen.auto_collapse and chosen.collapsed == []
    later = GraphView(tr)
    closing.append(later)
    later.expand()
    assert not later.auto_collapse


def test_modules_collapse_and_expand_redraw_the_dot(closing):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    with vg.trace() as tr:
        model(vg.randn(5, 3)).sum().backward()
    view = GraphView(tr)
    closing.append(view)
    ids = {group.name: group.id for group in view.current_graph.groups}
    first, last = f'"m_{ids["0"]}"', f'"m_{ids["2"]}"'
    assert view.modules == ["0", "1", "2"] and view.collapsed == []
    assert first not in view.dot and f'cluster_{ids["0"]}' in view.dot and "Linear(3→4)" in view.dot
    view.collapse("0")
    assert view.collapsed == ["0"] and first in view.dot
    view.collapsed = ["0", "2"]                 # what a click in the browser does
    view._updates.flush()
    assert first in view.dot and last in view.dot
    view.expand("0")
    view._updates.flush()
    assert view.collapsed == ["2"] and first not in view.dot
    view.expand()
    view._updates.flush()
    assert view.collapsed == [] and last not in view.dot


def test_large_graphs_start_collapsed_and_the_collapsed_list_says_how():
    model = nn.Sequential(*[nn.Sequential(nn.Linear(2, 2), nn.Tanh()) for _ in range(30)])
    with vg.trace() as tr:
        model(vg.randn(1, 2)).sum().backward()
    graph = tr.graph
    assert len(graph.nodes) > 100
    collapsed = effective_collapse(graph, None)
    assert collapsed == sorted(str(i) for i in range(30))            # the top level: 30 identical blocks
    assert effective_collapse(graph, ["3"]) == ["3"]
    assert effective_collapse(graph, None, collapse_above=10_000) == []
    view = GraphView(graph)
    try:
        assert view.collapsed == collapsed
        assert view.dot.count("shape=box3d") == 1 and "Sequential ×30" in view.dot    # folded into one box
    finally:
        view.close()


# --- throttling, cleanup, fallbacks --------------------------------------------------------------------
def test_the_graph_travels_as_one_buffer_of_json_text(closing):
    _, _, y = mul_tanh_sum()
    view = GraphView(y)
    closing.append(view)
    state, buffer_paths, buffers = _remove_buffers(view.get_state())
    assert "graph_json" not in state and ["graph_json"] in buffer_paths      # not nested JSON in the message
    assert json.loads(bytes(buffers[buffer_paths.index(["graph_json"])])) == view.graph
    assert view.graph == {**view.current_graph.to_dict(), "steps": []}
    sent = count_messages(view)
    y.backward()
    assert wait_until(lambda: any(sent_graph(*message) == view.graph for message in sent))


def test_a_burst_of_10000_ops_becomes_a_bounded_number_of_messages_and_the_last_arrives(closing):
    view = GraphView(max_rate=20)
    closing.append(view)
    sent = count_messages(view)
    x = vg.tensor([0.5], requires_grad=True)
    started = time.monotonic()
    h = x
    for _ in range(10_000):
        h = h * 1.0
    final = len(view.current_graph.nodes)
    assert final == 5000 and view.current_graph.truncated      # the recorder's node budget

    def last_arrived():
        return any(len((sent_graph(msg, buffers) or {}).get("nodes", ())) == final for msg, buffers in sent)
    assert wait_until(last_arrived, timeout=15)   # a bound for loaded machines: it usually takes well under 1 s
    elapsed = time.monotonic() - started
    # at most max_rate messages per second, plus the first and the timer's last
    assert 2 <= len(sent) <= 20 * elapsed + 2, (len(sent), elapsed)
    assert all(msg["method"] == "update" for msg, _ in sent)


def test_closing_a_view_leaves_no_listener_and_frees_it():
    _, _, y = mul_tanh_sum()
    view = GraphView(y)
    assert observers.active != []
    y.backward()
    view.close()
    assert observers.active == []
    ref = weakref.ref(view)
    del view
    gc.collect()
    assert ref() is None


def test_every_view_brings_a_static_picture_for_front_ends_without_widgets(closing):
    _, _, y = mul_tanh_sum()
    view = GraphView(y)
    closing.append(view)
    data, _ = view._repr_mimebundle_()
    assert WIDGET_MIME in data and data["text/plain"].startswith("<GraphView")
    assert "<svg" in data["image/svg+xml"] and "Mul" in data["image/svg+xml"]


def test_the_static_picture_needs_no_graphviz_in_the_kernel(closing, monkeypatch):
    from vizgrad.render import svg
    _, _, y = mul_tanh_sum()
    view = GraphView(y, live=False)
    closing.append(view)

    def unavailable(source):
        raise svg.LayoutUnavailable("no graphviz here")
    monkeypatch.setattr(svg, "layout_svg", unavailable)
    data, _ = view._repr_mimebundle_()
    assert data["image/svg+xml"].startswith("<svg") and "Tanh" in data["image/svg+xml"]
    assert "vg-inline" not in data.get("text/html", "")               # no interactive page without a drawing


def test_widget_modules_travel_in_json_as_they_are():
    """A widget's ES module goes out in the first message of every view the kernel opens.
    Pure ASCII (no raw control or non-ASCII characters), it is copied into the JSON as it is:
    no escape per byte, no re-encoding."""
    import os
    modules = [name for name in sorted(os.listdir(base.STATIC_DIR))
               if name.endswith(".js") and name not in base.ASSETS.values()]     # (assets travel in base64)
    assert "graph-widget.js" in modules
    for name in modules:
        text = base.read_static(name)
        assert text.isascii(), name
        encoded = json.dumps(text)
        assert len(encoded) < 1.05 * len(text) + 100, name      # (quotes and newlines escaped)


# --- predict, then reveal ---------------------------------------------------------------------
def test_prediction_mode_is_a_synced_trait_and_the_score_counts_the_browsers_verdicts():
    a = vg.tensor(2.0, requires_grad=True)
    b = vg.tensor(-3.0, requires_grad=True)
    d = a * b + a
    view = GraphView(d, predict=True)
    d.backward()
    view._updates.flush()
    assert view.predict is True
    assert view.get_state()["predict"] is True
    assert view.score == (0, 0)
    # what the browser writes as the learner reveals two gradients, one right and one wrong
    view.set_state({"predictions": {view.timeline[0]: {"guess": "1", "correct": True, "expected": "1", "message": "right"},
                                    view.timeline[1]: {"guess": "5", "correct": False, "expected": "1", "message": "no"}}})
    assert view.score == (1, 2)
    view.close()
    plain = GraphView(d)
    assert plain.predict is False
    plain.close()


def test_prediction_mode_must_be_a_bool():
    with pytest.raises(vg.errors.ArgumentTypeError, match="GraphView: predict must be True or False, got str 'yes'"):
        GraphView(vg.tensor(1.0, requires_grad=True) * 2, predict="yes")
