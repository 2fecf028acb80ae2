"""GradFlowView and the training dashboard: the series their traits hold after a known
training run (decoded from the float32 buffers), flags that agree with
vizgrad.diagnostics, throttled updates, the headless form, cleanup and fallbacks.

Needs anywidget (``pip install 'vizgrad[widgets]'``) and the built bundle (``make build``).
"""

import gc
import math
import time
import weakref

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import vizgrad as vg  # noqa: E402
from vizgrad import diagnostics, events, nn, optim  # noqa: E402
from vizgrad.autograd import observers  # noqa: E402
from vizgrad.widgets import Dashboard, GradFlowView, dashboard  # noqa: E402
from vizgrad.widgets.base import from_float32_bytes  # noqa: E402
from vizgrad.widgets.dashboard import DashboardState, histogram  # noqa: E402
from vizgrad.widgets.grad_flow import classify  # noqa: E402

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


pytestmark = pytest.mark.usefixtures("no_listener_leaks")


def small_model():
    vg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))


def train(model, optimizer, steps, x=None, y=None, marks=True):
    """A plain loop; returns the losses it marked."""
    x = vg.randn(8, 3) if x is None else x
    y = vg.randn(8, 2) if y is None else y
    losses = []
    for step in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if marks:
            events.mark("train", loss=loss, step=step)
    return losses


def series(payload, columns=None):
    steps = from_float32_bytes(payload["steps"])
    values = from_float32_bytes(payload["values"], columns or payload["columns"])
    return steps, values


def count_messages(widget):
    sent = []
    original = widget._send

    def counting(msg, buffers=None):
        sent.append((msg, buffers))
        return original(msg, buffers=buffers)
    widget._send = counting
    return sent


def wait_until(condition, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


# --- GradFlowView ---------------------------------------------------------------------------------
def test_grad_flow_traits_hold_each_layers_rms_per_step(closing):
    model = small_model()
    view = GradFlowView(model)
    closing.append(view)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    rms_history = []
    x, y = vg.randn(8, 3), vg.randn(8, 2)
    for _ in range(5):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        rms_history.append([row.grad_rms for row in diagnostics.grad_flow(model)])
        optimizer.step()
    view._updates.flush()
    flow = view.flow
    assert flow["layers"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert flow["step"] == 5
    assert isinstance(flow["series"]["values"], bytes) and isinstance(flow["series"]["steps"], bytes)
    steps, values = series(flow["series"])
    np.testing.assert_array_equal(steps, [1, 2, 3, 4, 5])
    np.testing.assert_allclose(values, rms_history, rtol=1e-5)
    np.testing.assert_allclose(flow["current"]["rms"], rms_history[-1], rtol=1e-6)
    assert flow["current"]["status"] == [row.status for row in diagnostics.grad_flow(model)]
    assert flow["thresholds"] == {"vanishing": diagnostics.VANISHING, "exploding": diagnostics.EXPLODING,
                                  "relative": diagnostics.RELATIVE}


def test_vanishing_and_exploding_layers_are_flagged_as_diagnostics_flags_them(closing):
    model = small_model()
    view = GradFlowView(model)
    closing.append(view)
    params = dict(model.named_parameters())
    params["0.weight"].grad = vg.full(params["0.weight"].shape, 1e-9)
    params["0.bias"].grad = vg.tensor([math.nan, 0.0, 0.0, 0.0, 0.0])
    params["2.weight"].grad = vg.full(params["2.weight"].shape, 0.5)
    params["2.bias"].grad = None
    view.sample()
    view._updates.flush()
    expected = [row.status for row in diagnostics.grad_flow(model)]
    assert expected == ["vanishing", "exploding", "ok", "no grad"]
    assert view.flow["current"]["status"] == expected
    assert view.statuses() == dict(zip(view.flow["layers"], expected))
    assert view.flow["current"]["rms"][1] is None                       # JSON has no NaN
    assert "vanishing" in view._fallback_text() and "exploding" in view._fallback_text()


@pytest.mark.parametrize("rms, has, expected", [
    ([5.0, 1e-8, 1.5e3], [True, True, True], ["ok", "vanishing", "exploding"]),
    ([1.0, 1.5e3], [True, True], ["vanishing", "exploding"]),             # the largest counts, exploding or not
    ([1.0, 1e-4], [True, True], ["ok", "vanishing"]),                      # relative to the largest
    ([math.inf, 1.0, 0.0], [True, True, False], ["exploding", "ok", "no grad"]),
    ([], [], []),
])
def test_classify_follows_the_diagnostics_thresholds(rms, has, expected):
    assert classify(rms, has) == expected


def test_sampling_every_kth_backward(closing):
    model = small_model()
    view = GradFlowView(model, every=3)
    closing.append(view)
    train(model, optim.SGD(model.parameters(), lr=0.01), 7, marks=False)
    view._updates.flush()
    steps, _ = series(view.flow["series"])
    np.testing.assert_array_equal(steps, [1, 4, 7])


def test_grad_flow_follows_its_own_model_when_two_models_train_in_turn(closing):
    first, second = small_model(), small_model()
    view_first, view_second = GradFlowView(first), GradFlowView(second)
    closing.extend([view_first, view_second])
    train(first, optim.SGD(first.parameters(), lr=0.1), 10, marks=False)
    train(second, optim.SGD(second.parameters(), lr=0.1), 25, marks=False)
    view_first._updates.flush()
    view_second._updates.flush()
    assert view_first.flow["step"] == 10 and view_second.flow["step"] == 25
    np.testing.assert_array_equal(series(view_first.flow["series"])[0], np.arange(1, 11))
    np.testing.assert_array_equal(series(view_second.flow["series"])[0], np.arange(1, 26))
    # the first view's latest values are its own model's, not the second's
    expected = [row.grad_rms for row in diagnostics.grad_flow(first)]
    np.testing.assert_allclose(view_first.flow["current"]["rms"], expected, rtol=1e-6)


def test_a_view_made_mid_training_counts_from_its_creation(closing):
    model = small_model()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, 4, marks=False)
    view = GradFlowView(model)
    closing.append(view)
    train(model, optimizer, 3, marks=False)
    view._updates.flush()
    np.testing.assert_array_equal(series(view.flow["series"])[0], [1, 2, 3])


@pytest.mark.parametrize("with_optimizer", [True, False])
def test_dashboards_follow_their_own_model_and_marks_when_two_models_train_in_turn(closing, with_optimizer):
    first, second = small_model(), small_model()
    opt_first, opt_second = optim.SGD(first.parameters(), lr=0.1), optim.Adam(second.parameters(), lr=0.01)
    # every step's numbers (summary_rate=None): what is compared here is whose steps each one shows
    board_first = dashboard(first, opt_first if with_optimizer else None, summary_rate=None)
    board_second = dashboard(second, opt_second if with_optimizer else None, summary_rate=None)
    closing.extend([board_first, board_second])
    losses_first = train(first, opt_first, 10)
    losses_second = train(second, opt_second, 25)
    board_first.flush()
    board_second.flush()
    assert board_first.step == 10 and board_second.step == 25
    assert board_first.flow["step"] == 10 and board_second.flow["step"] == 25
    np.testing.assert_allclose(series(board_first.curves["loss"]["train"])[1][:, 0], losses_first, rtol=1e-6)
    np.testing.assert_allclose(series(board_second.curves["loss"]["train"])[1][:, 0], losses_second, rtol=1e-6)
    if with_optimizer:
        assert board_first.ratios["series"]["length"] == 10 and board_second.ratios["series"]["length"] == 25


# --- the dashboard ------------------------------------------------------------------------------------
def test_dashboard_curves_flow_ratios_and_histograms_after_a_known_run(closing):
    model = small_model()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    steps_seen = []
    board = dashboard(model, optimizer)
    closing.append(board)
    assert isinstance(board, Dashboard) and board.listening
    with events.subscribe(lambda event: steps_seen.append(event), kinds="optimizer_step"):
        losses = train(model, optimizer, 12)
        events.mark("val", loss=0.5, accuracy=0.75)
    board.flush()
    assert board.layers == ["0.weight", "0.bias", "2.weight", "2.bias"] and board.step == 12
    # loss curve: one line per mark name, values exactly what was marked
    assert set(board.curves) == {"loss", "accuracy"}
    steps, values = series(board.curves["loss"]["train"])
    np.testing.assert_array_equal(steps, np.arange(12))
    np.testing.assert_allclose(values[:, 0], losses, rtol=1e-6)
    val_steps, val_values = series(board.curves["loss"]["val"])
    assert val_steps.tolist() == [12] and val_values.tolist() == [[0.5]]
    assert series(board.curves["accuracy"]["val"])[1].tolist() == [[0.75]]
    # gradient flow and update ratios come from the optimizer's own summaries
    last = {p.name: p for p in steps_seen[-1].params}
    rms = [last[name].grad_norm / math.sqrt(p.numel()) for name, p in model.named_parameters()]
    np.testing.assert_allclose(board.flow["current"]["rms"], rms, rtol=1e-6)
    ratio_steps, ratios = series(board.ratios["series"])
    np.testing.assert_array_equal(ratio_steps, np.arange(1, 13))
    np.testing.assert_allclose(ratios[-1], [last[name].update_ratio for name in board.layers], rtol=1e-5)
    np.testing.assert_allclose(board.ratios["current"], ratios[-1], rtol=1e-5)
    # histograms: binary counts of every value (small tensors are not sampled)
    weight = model[0].weight.detach().numpy()
    entry = board.histograms["0.weight"]["weight"]
    counts = from_float32_bytes(entry["counts"])
    assert counts.sum() == weight.size and len(counts) == 30 and not entry["sampled"]
    assert entry["low"] == pytest.approx(weight.min()) and entry["high"] == pytest.approx(weight.max())
    assert "grad" in board.histograms["2.bias"]


def test_without_an_optimizer_the_dashboard_reads_gradients_after_backward(closing):
    model = small_model()
    board = dashboard(model)
    closing.append(board)
    x, y = vg.randn(8, 3), vg.randn(8, 2)
    for _ in range(3):
        model.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
    board.flush()
    assert board.step == 3
    expected = [row.grad_rms for row in diagnostics.grad_flow(model)]
    np.testing.assert_allclose(board.flow["current"]["rms"], expected, rtol=1e-6)
    assert board.ratios["series"]["length"] == 0


def test_headless_dashboard_keeps_its_payloads_and_detaches_on_close():
    model = small_model()
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    state = dashboard(model, optimizer, display=False)
    assert isinstance(state, DashboardState) and state.listening
    losses = train(model, optimizer, 4)
    state.flush()
    assert set(state.snapshot) == {"flow", "ratios", "step", "curves", "histograms"}
    assert state.snapshot["step"] == 4
    np.testing.assert_allclose(series(state.snapshot["curves"]["loss"]["train"])[1][:, 0], losses, rtol=1e-6)
    state.close()
    assert observers.active == [] and not state.listening


def test_a_burst_of_10000_marks_is_a_bounded_number_of_messages_and_the_last_arrives(closing):
    model = small_model()
    board = dashboard(model, max_rate=20)
    closing.append(board)
    sent = count_messages(board)
    started = time.monotonic()
    for step in range(10_000):
        events.mark("train", loss=float(step), step=step)

    def last_arrived():
        for msg, buffers in sent:
            curves = msg["state"].get("curves")
            if curves:
                position = msg["buffer_paths"].index(["curves", "loss", "train", "values"])
                if from_float32_bytes(buffers[position])[-1] == 9_999.0:
                    return True
        return False
    assert wait_until(last_arrived)
    elapsed = time.monotonic() - started
    assert len(sent) <= 20 * elapsed + 2, (len(sent), elapsed)
    # the buffer thins the history evenly and keeps every value exact
    steps, values = series(board.curves["loss"]["train"])
    assert 1000 < len(steps) <= 2000 and steps[0] == 0 and steps[-1] == 9_999
    np.testing.assert_array_equal(values[:, 0], steps)


def test_histograms_sample_large_tensors_and_count_nan_and_inf():
    big = np.arange(300_000, dtype=np.float32)
    entry = histogram(big, bins=10)
    assert entry["sampled"] and entry["size"] == 300_000
    counts = from_float32_bytes(entry["counts"])
    assert 60_000 <= counts.sum() <= 65_536 and entry["low"] == 0.0
    bad = histogram(np.array([1.0, np.nan, np.inf, 2.0], dtype=np.float32), bins=4)
    assert (bad["nan"], bad["inf"]) == (1, 1) and from_float32_bytes(bad["counts"]).sum() == 2
    empty = histogram(np.array([np.nan], dtype=np.float32), bins=3)
    assert empty["mean"] is None and from_float32_bytes(empty["counts"]).sum() == 0


def test_closed_widgets_leave_no_listener_and_are_freed():
    model = small_model()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    board = dashboard(model, optimizer)
    view = GradFlowView(model)
    train(model, optimizer, 3)
    board.close()
    view.close()
    assert observers.active == []
    refs = [weakref.ref(board), weakref.ref(view)]
    del board, view
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_static_fallbacks(closing):
    model = small_model()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    board = dashboard(model, optimizer)
    view = GradFlowView(model)
    closing.extend([board, view])
    train(model, optimizer, 2)
    board.flush()
    view._updates.flush()
    for widget in (board, view):
        data, _ = widget._repr_mimebundle_()
        assert WIDGET_MIME in data and "text/plain" in data
        svg = data["image/svg+xml"]                           # a picture, not a table
        assert svg.startswith("<svg") and ">0.weight</text>" in svg and ">2.bias</text>" in svg
        # the heatmap over the two recorded steps, one bar per layer, two threshold lines
        assert svg.count("class='heatmap'") == 1 and svg.count("class='bar'") == 4
        assert svg.count("class='threshold'") == 2
    assert "<polyline class='line' data-name='train'" in board._fallback_svg() and ">loss</text>" in board._fallback_svg()
    fresh = GradFlowView(small_model())                    # before any backward: a picture all the same
    closing.append(fresh)
    assert "image/svg+xml" in fresh._repr_mimebundle_()[0] and "no steps yet" in fresh._fallback_svg()
    fresh_board = dashboard(small_model())
    closing.append(fresh_board)
    assert "image/svg+xml" in fresh_board._repr_mimebundle_()[0]
    assert "train loss" in board._fallback_text()


def test_the_static_heatmap_colours_follow_the_healthy_band():
    from vizgrad.widgets.grad_flow import flow_colour, healthy_band
    thresholds = {"vanishing": 1e-7, "exploding": 1e3, "relative": 1e-3}
    assert healthy_band([2.0, 1e-9, math.nan], thresholds) == (2e-3, 1e3)
    band = (1e-3, 1e3)
    assert flow_colour(1.0, band) == "rgb(247,247,247)"                 # the band's log middle is pale
    assert flow_colour(1e-9, band) == "rgb(33,102,172)"                 # far below: full blue
    assert flow_colour(1e9, band) == "rgb(178,24,43)"                   # far above: full red
    assert flow_colour(math.inf, band) == "rgb(178,24,43)"
    assert flow_colour(math.nan, band) == "rgb(200,200,200)"


def test_a_model_without_parameters_is_refused():
    with pytest.raises(ValueError, match="no parameters"):
        GradFlowView(nn.Tanh())
    assert observers.active == []


def test_the_dashboards_tab_is_a_trait_of_three_panels(closing):
    import traitlets
    model = small_model()
    board = dashboard(model, optim.SGD(model.parameters(), lr=0.1))
    closing.append(board)
    assert board.tab == "curves"
    board.tab = "flow"
    assert board.tab == "flow"
    with pytest.raises(traitlets.TraitError):
        board.tab = "scalars"
