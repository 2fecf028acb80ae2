"""The optimizer race: surfaces (values, engine gradients, vectorised grids), the race's
paths and per-step optimizer state against vizgrad.optim run directly, and the
OptimizerView widget's traits, messages and cleanup."""

import math
import os
import threading
import warnings

import numpy as np
import pytest

import vizgrad
from vizgrad import optim
from vizgrad.widgets import surfaces
from vizgrad.widgets.optimizer_view import OptimizerRace
from vizgrad.widgets.surfaces import SURFACES, Surface, get_surface


def rosenbrock_gradient(x, y):
    return np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])


# --- surfaces ---------------------------------------------------------------------------------
@pytest.mark.parametrize("point", [(-1.2, 1.0), (0.0, 0.0), (1.0, 1.0), (1.5, -0.5), (-0.3, 2.7)])
def test_rosenbrock_gradient_matches_the_closed_form(point):
    np.testing.assert_allclose(get_surface("rosenbrock").gradient(point), rosenbrock_gradient(*point),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_gradients_match_central_differences(name):
    surface = SURFACES[name]
    point = np.array(surface.start) + 0.1
    h = 1e-6
    numeric = [(surface.value(point + h * e) - surface.value(point - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(surface.gradient(point), numeric, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_known_minima_are_minima(name):
    surface = SURFACES[name]
    for minimum in surface.minima:
        assert surface.value(minimum) == pytest.approx(0.0, abs=1e-9)
        np.testing.assert_allclose(surface.gradient(minimum), [0.0, 0.0], atol=1e-4)
        (x0, x1), (y0, y1) = surface.domain
        assert x0 <= minimum[0] <= x1 and y0 <= minimum[1] <= y1
    x, y = surface.start
    (x0, x1), (y0, y1) = surface.domain
    assert x0 < x < x1 and y0 < y < y1
    assert surface.scale in ("linear", "log")


def test_the_saddle_has_a_flat_point_and_no_minimum():
    saddle = get_surface("saddle")
    assert saddle.minima == ()
    np.testing.assert_array_equal(saddle.gradient((0.0, 0.0)), [0.0, 0.0])
    assert saddle.value((0.0, 1.0)) < saddle.value((0.0, 0.0)) < saddle.value((1.0, 0.0))


def test_the_grid_is_one_vectorised_evaluation():
    calls = []

    def counted(x, y):
        calls.append(tuple(x.shape))
        return surfaces._rosenbrock(x, y)

    surface = Surface("counted", "Counted", "", counted, ((-2.0, 2.0), (-1.0, 3.0)), ((1.0, 1.0),), (0.0, 0.0))
    xs, ys, z = surface.grid(50)
    assert calls == [(50, 50)]
    assert z.shape == (50, 50) and xs[0] == -2.0 and ys[-1] == 3.0
    i, j = 7, 31
    assert z[i, j] == pytest.approx(get_surface("rosenbrock").value((xs[j], ys[i])))
    with pytest.raises(ValueError, match="resolution"):
        surface.grid(1)


def test_unknown_surfaces_are_named():
    with pytest.raises(ValueError, match="rosenbrock"):
        get_surface("nope")


# --- the race ---------------------------------------------------------------------------------------
def run_directly(surface, start, cls, steps, **hyper):
    """The reference: a vizgrad.optim optimizer on a 2-vector, by hand."""
    p = vizgrad.tensor(list(start), dtype="float64", requires_grad=True)
    opt = cls([p], **hyper)
    path = [p.detach().numpy().copy()]
    for _ in range(steps):
        opt.zero_grad()
        surface(p[0], p[1]).backward()
        opt.step()
        path.append(p.detach().numpy().copy())
    return np.array(path), opt.state[p]


@pytest.mark.parametrize("name, cls, hyper", [
    ("Adam", optim.Adam, {"lr": 0.05, "betas": (0.9, 0.999)}),
    ("Momentum", optim.SGD, {"lr": 1e-3, "momentum": 0.9}),
    ("RMSprop", optim.RMSprop, {"lr": 0.05, "alpha": 0.99}),
])
def test_a_racing_optimizer_follows_vizgrad_optim_exactly(name, cls, hyper):
    race = OptimizerRace("rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"))
    assert race.step(40) == 40
    expected, state = run_directly(get_surface("rosenbrock"), race.start_point, cls, 40, **hyper)
    np.testing.assert_array_equal(race.paths[name], expected)
    got = race.states[name]
    for key, value in state.items():
        np.testing.assert_array_equal(got[key], value)


@pytest.mark.parametrize("name, cls, hyper", [
    ("Adamax", optim.Adamax, {"betas": (0.9, 0.999)}),
    ("NAdam", optim.NAdam, {"betas": (0.9, 0.999)}),
    ("Rprop", optim.Rprop, {}),
])
def test_the_later_adaptive_optimizers_race_as_vizgrad_optim_steps(name, cls, hyper):
    race = OptimizerRace("rosenbrock", optimizers=(name,))
    assert race.step(30) == 30
    lr = race.runners[0].hyper["lr"]
    expected, state = run_directly(get_surface("rosenbrock"), race.start_point, cls, 30, lr=lr, **hyper)
    np.testing.assert_array_equal(race.paths[name], expected)
    assert not np.array_equal(expected[-1], expected[0])
    rows = race.state_rows()[0]
    labelled = {vector["key"]: vector["label"] for vector in rows["vectors"]}
    for key in state:
        if key != "step" and np.ndim(state[key]) == 1:
            assert labelled[key] != key                    # every state buffer has a label in the panel
    assert "effective_lr" in labelled


def test_plain_gradient_descent_steps_against_the_closed_form_gradient():
    race = OptimizerRace("rosenbrock", optimizers=("SGD",), lr=1e-3)
    race.step(5)
    path = race.paths["SGD"]
    for before, after in zip(path[:-1], path[1:]):
        np.testing.assert_allclose(after, before - 1e-3 * rosenbrock_gradient(*before), rtol=1e-12)
    np.testing.assert_allclose(race.states["SGD"]["grad"], rosenbrock_gradient(*path[-2]), rtol=1e-12)


def test_adam_state_explains_its_step():
    race = OptimizerRace("beale", optimizers=("Adam",), lr=0.05)
    race.step(7)
    state = race.states["Adam"]
    t = state["step"]
    assert t == 7
    beta1, beta2 = 0.9, 0.999
    np.testing.assert_allclose(state["m_hat"], state["exp_avg"] / (1 - beta1 ** t))
    np.testing.assert_allclose(state["v_hat"], state["exp_avg_sq"] / (1 - beta2 ** t))
    assert state["lr_t"] == pytest.approx(0.05 / (1 - beta1 ** t))
    np.testing.assert_allclose(state["effective_lr"], state["lr_t"] / (np.sqrt(state["v_hat"]) + 1e-8))
    # the update is the effective step size times the first moment
    np.testing.assert_allclose(state["update"], -state["effective_lr"] * state["exp_avg"], rtol=1e-12)
    path = race.paths["Adam"]
    np.testing.assert_allclose(state["update"], path[-1] - path[-2])
    np.testing.assert_array_equal(state["position"], path[-1])
    assert state["value"] == pytest.approx(get_surface("beale").value(path[-1]))


def test_momentum_state_is_the_velocity():
    race = OptimizerRace("quadratic", optimizers=("Momentum",), lr=0.1)
    race.step(3)
    state = race.states["Momentum"]
    np.testing.assert_allclose(state["update"], -0.1 * state["momentum_buffer"])
    rows = race.state_rows()
    assert rows[0]["name"] == "Momentum" and rows[0]["step"] == 3
    assert {v["key"] for v in rows[0]["vectors"]} >= {"grad", "update", "momentum_buffer", "effective_lr"}


def test_hyperparameters_change_live_and_are_checked():
    race = OptimizerRace("quadratic", optimizers=("SGD", "Adam"), lr={"SGD": 0.1})
    race.configure("Adam", lr=0.2, betas=(0.5, 0.9))
    group = race.runner("Adam").optimizer.param_groups[0]
    assert group["lr"] == 0.2 and group["betas"] == (0.5, 0.9)
    with pytest.raises(ValueError, match="momentum"):
        race.configure("Adam", momentum=0.9)
    with pytest.raises(ValueError, match="lr must be"):
        race.configure("SGD", lr=-1)
    with pytest.raises(ValueError, match="betas"):
        race.configure("Adam", betas=(1.0, 0.9))
    race.reset()
    assert race.runner("Adam").optimizer.param_groups[0]["betas"] == (0.5, 0.9), "resets keep the settings"


def test_optimizer_specs_and_names():
    race = OptimizerRace("quadratic", optimizers=["Adam", {"name": "Adam", "kind": "Adam", "lr": 0.5},
                                                  {"kind": "Adagrad"}])
    assert [r.name for r in race.runners] == ["Adam", "Adam 2", "Adagrad"]
    assert race.runner("Adam 2").hyper["lr"] == 0.5
    with pytest.raises(ValueError, match="unknown optimizer"):
        OptimizerRace("quadratic", optimizers=("Lion",))
    with pytest.raises(ValueError, match="not racing"):
        OptimizerRace("quadratic", optimizers=("SGD",), lr={"Adam": 0.1})
    with pytest.raises(ValueError, match="start"):
        OptimizerRace("quadratic", start=(0.0, math.nan))


def test_a_diverging_optimizer_stops_with_a_finite_path():
    race = OptimizerRace("rosenbrock", optimizers=("SGD", "Adam"), lr={"SGD": 0.1})
    race.step(50)
    assert race.states["SGD"]["status"] == "diverged"
    assert np.all(np.isfinite(race.paths["SGD"]))
    assert len(race.paths["Adam"]) == 51 and race.running


def test_max_steps_stops_the_race_without_calling_it_finished():
    race = OptimizerRace("quadratic", optimizers=("SGD",), max_steps=10)
    assert race.step(100) == 10
    assert not race.running and race.states["SGD"]["status"] == "stopped"     # not at the minimum yet


# --- status badges ----------------------------------------------------------------------------
def test_on_the_saddle_every_optimizer_diverges_and_none_is_called_finished():
    """The saddle is unbounded below: f running off far beyond the range it spans on the
    plot is divergence (it used to end "finished" at f = -1e9 once out of steps)."""
    from vizgrad.widgets.optimizer_view import DIVERGED_SPANS, value_bounds
    race = OptimizerRace("saddle", optimizers=("SGD", "Momentum", "Adam", "RMSprop"))
    low, high = value_bounds(race.surface)
    assert (low, high) == pytest.approx((-4 - DIVERGED_SPANS * 8, 4 + DIVERGED_SPANS * 8), rel=1e-3)
    race.step(5000)
    for name, state in race.states.items():
        assert state["status"] == "diverged", (name, state["status"], state["value"])
        assert low <= state["value"] <= high and np.all(np.isfinite(race.paths[name]))
    assert not race.running
    sgd = race.runner("SGD")
    assert len(sgd.positions) < 100          # y grows by 1.1× a step: off the bound after about 76 steps


def test_non_finite_values_diverge():
    surface = Surface("cliff", "Cliff", "log(x)", lambda x, y: (x.log() + 0 * y), ((0.5, 2.0), (-1.0, 1.0)), (),
                      (0.6, 0.0), lr={"sgd": 1.0})
    race = OptimizerRace(surface, optimizers=("SGD",))
    with np.errstate(invalid="ignore"):                # log of a negative x: NaN, as intended
        race.step(10)
    assert race.states["SGD"]["status"] == "diverged"
    assert np.all(np.isfinite(race.values["SGD"]))


def test_badges_say_running_only_while_the_race_is_stepped():
    race = OptimizerRace("rosenbrock", optimizers=("SGD", "Adam"))
    race.step(10)
    assert [row["status"] for row in race.state_rows()] == ["paused", "paused"]
    assert [row["status"] for row in race.state_rows(stepping=True)] == ["running", "running"]
    race.step(5000)
    assert {state["status"] for state in race.states.values()} <= {"finished", "stopped"}
    assert race.states["Adam"]["status"] == "finished"
    assert all(row["status"] != "running" for row in race.state_rows(stepping=True))


def test_every_racer_has_its_own_colour_blind_safe_colour():
    from test_report import _CVD_SIMULATIONS, _cie_lab, _linear_rgb

    from vizgrad.render.html import SERIES_COLOURS
    from vizgrad.widgets.optimizer_view import PRESETS
    race = OptimizerRace("quadratic", optimizers=tuple(PRESETS)[:len(SERIES_COLOURS)])
    colours = [runner.colour for runner in race.runners]
    assert len(set(colours)) == len(colours) == len(SERIES_COLOURS)
    assert set(colours) == set(SERIES_COLOURS)
    default = [runner.colour for runner in OptimizerRace().runners]        # SGD, Momentum, Adam, RMSprop
    for simulation in _CVD_SIMULATIONS.values():
        seen = [_cie_lab(np.clip(simulation @ _linear_rgb(colour), 0, 1)) for colour in default]
        for i in range(len(seen)):
            for j in range(i):
                assert np.linalg.norm(seen[i] - seen[j]) > 15, (default[i], default[j])


def test_an_optimizer_at_the_minimum_has_finished_and_the_default_speed_shows_it_in_about_ten_seconds():
    pytest.importorskip("anywidget")
    from vizgrad.widgets import OptimizerView
    race = OptimizerRace("rosenbrock", optimizers=("Momentum", "Adam"))
    while race.running:
        race.step(100)
    steps = {}
    for name in ("Momentum", "Adam"):
        state = race.states[name]
        assert state["status"] == "finished"
        assert math.hypot(*(state["position"] - (1.0, 1.0))) < 4e-4           # CONVERGED × the domain's width
        steps[name] = len(race.paths[name]) - 1
        assert 1000 < steps[name] < 2500, f"{name} stopped after {steps[name]} steps"
    seconds = min(steps.values()) / OptimizerView.speed.default_value
    assert 5 < seconds < 10.5, f"the first optimizer reaches the minimum after {seconds:.1f} s at the default speed"


def _wcag_luminance(rgb):
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a, b):
    light, dark = sorted((_wcag_luminance(a), _wcag_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_every_trail_colour_stands_out_on_every_colour_of_the_contour_map():
    """The trail (or its dark outline) against each colour of the front end's contour map
    (its stops read from optimizer-core.js, contour lines 0.7 times as bright): 3:1 at least."""
    import json
    import re
    from pathlib import Path

    from vizgrad.widgets.optimizer_view import COLOURS, HALO, OUTLINE
    core = (Path(__file__).resolve().parent.parent / "widgets" / "src" / "widgets" / "optimizer-core.js").read_text(
        encoding="utf-8")
    stops = np.array(json.loads(re.search(r"export const sequential = colourRamp\((\[.*?\])\);", core).group(1)),
                     dtype=float)
    t = np.linspace(0, 1, 201)[:, None] * (len(stops) - 1)
    index = np.minimum(len(stops) - 2, np.floor(t).astype(int))[:, 0]
    fraction = t[:, 0] - index
    surface = stops[index] + (stops[index + 1] - stops[index]) * fraction[:, None]
    surface = np.concatenate([surface, surface * 0.7])
    outline = [int(OUTLINE[i:i + 2], 16) for i in (1, 3, 5)]
    halo = [int(HALO[i:i + 2], 16) for i in (1, 3, 5)]
    assert _contrast(outline, halo) >= 7
    for colour in COLOURS:
        trail = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        assert _contrast(trail, outline) >= 3, colour            # the trail stands out on its outline
    for under in surface:                                         # and the outline or its halo on the map
        assert max(_contrast(outline, under), _contrast(halo, under)) >= 3, under


def test_changing_function_resets_at_its_start_with_its_rates():
    race = OptimizerRace("rosenbrock", optimizers=("SGD", "Adam"))
    race.configure("Adam", betas=(0.8, 0.99))
    race.step(5)
    race.set_function("himmelblau")
    assert race.step_count == 0
    assert tuple(race.paths["SGD"][0]) == SURFACES["himmelblau"].start
    assert race.runner("SGD").hyper["lr"] == SURFACES["himmelblau"].lr["sgd"]
    assert race.runner("Adam").hyper["betas"] == (0.8, 0.99)


def test_packed_paths_are_float32_pairs():
    race = OptimizerRace("quadratic", optimizers=("SGD", "Adam"))
    race.step(4)
    data, lengths = race.packed_paths()
    assert lengths == [5, 5]
    unpacked = np.frombuffer(data, dtype="<f4").reshape(-1, 2)
    np.testing.assert_allclose(unpacked[:5], race.paths["SGD"], rtol=1e-6)
    np.testing.assert_allclose(unpacked[5:], race.paths["Adam"], rtol=1e-6)
    values = np.frombuffer(race.packed_values(), dtype="<f4")
    np.testing.assert_allclose(values[:5], race.values["SGD"], rtol=1e-6)
    np.testing.assert_allclose(values[5:], race.values["Adam"], rtol=1e-6)


def test_surfaces_describe_their_minimum_value():
    assert get_surface("rosenbrock").describe()["minimum"] == 0.0
    assert get_surface("himmelblau").describe()["minimum"] == pytest.approx(0.0, abs=1e-12)
    assert get_surface("saddle").describe()["minimum"] is None


# --- the widget ---------------------------------------------------------------------------------------
@pytest.fixture
def view_class():
    pytest.importorskip("anywidget")
    from vizgrad.widgets import base
    for name in ("optimizer-widget.js", "widgets.css"):
        if not os.path.exists(os.path.join(base.STATIC_DIR, name)):
            pytest.skip(f"the widget bundle is not built ({name}): make build")
    from vizgrad.widgets import OptimizerView
    return OptimizerView


def test_view_traits_after_steps_hold_the_paths_and_states(view_class):
    view = view_class("rosenbrock", optimizers=("SGD", "Adam"))
    try:
        assert view.step(12) == 12
        view._updates.flush()
        assert view.step_count == 12 and view.path_lengths == [13, 13]
        points = np.frombuffer(view.path_data, dtype="<f4").reshape(-1, 2)
        np.testing.assert_allclose(points[13:], view.paths["Adam"], rtol=1e-6)
        expected, _ = run_directly(get_surface("rosenbrock"), (-1.2, 1.0), optim.Adam, 12, lr=0.05)
        np.testing.assert_array_equal(view.paths["Adam"], expected)
        adam = view.state_rows[1]
        assert adam["name"] == "Adam" and adam["step"] == 12
        m = next(v for v in adam["vectors"] if v["key"] == "exp_avg")["value"]
        np.testing.assert_allclose(m, view.states["Adam"]["exp_avg"])
        assert view.surface["name"] == "rosenbrock" and view.grid_shape == [120, 120]
        grid = np.frombuffer(view.grid, dtype="<f4").reshape(120, 120)
        assert grid[0, 0] == pytest.approx(get_surface("rosenbrock").value((-2.0, -1.0)), rel=1e-6)
    finally:
        view.close()


def test_view_badges_are_final_when_step_returns_and_running_while_playing(view_class):
    view = view_class("rosenbrock", optimizers=("SGD", "Adam"))
    seen = []
    view.observe(lambda change: seen.append([row["status"] for row in change["new"]]), "state_rows")
    try:
        view.step(1000)
        assert ["running", "running"] in seen                   # the first update came while stepping
        assert [row["status"] for row in view.state_rows] == ["paused", "paused"], "no badge says running after step()"
        view.playing = True                                     # Play in the front end
        view._updates.flush()
        assert [row["status"] for row in view.state_rows] == ["running", "running"]
        view.playing = False
        view._updates.flush()
        assert [row["status"] for row in view.state_rows] == ["paused", "paused"]
        view.step(4000)
        assert [row["status"] for row in view.state_rows] == ["stopped", "finished"]
        assert not view.playing
    finally:
        view.close()


def test_view_on_the_saddle_ends_diverged(view_class):
    view = view_class("saddle", optimizers=("SGD", "Adam"))
    try:
        view.step(1000)
        assert [row["status"] for row in view.state_rows] == ["diverged", "diverged"]
        assert all(-1e4 < row["value"] < 0 for row in view.state_rows)
    finally:
        view.close()


def test_view_messages_step_and_acknowledge(view_class, monkeypatch):
    view = view_class("quadratic", optimizers=("SGD",))
    sent = []
    monkeypatch.setattr(view, "send", lambda content, buffers=None: sent.append(content))
    try:
        view._on_message(view, {"type": "step", "n": 3, "id": 7}, [])
        assert view.race.step_count == 3
        assert sent == [{"type": "stepped", "id": 7, "running": True, "step": 3}]
        view._on_message(view, {"type": "reset"}, [])
        assert view.race.step_count == 0
    finally:
        view.close()


def test_view_front_end_changes_apply(view_class):
    view = view_class("quadratic", optimizers=("Momentum", "Adam"))
    try:
        settings = [dict(entry) for entry in view.settings]
        settings[1]["betas"] = [0.5, 0.99]
        view.settings = settings
        assert view.race.runner("Adam").optimizer.param_groups[0]["betas"] == (0.5, 0.99)
        settings = [dict(entry) for entry in view.settings]
        settings[0]["momentum"] = 2.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            view.settings = settings
        assert any("momentum" in str(w.message) for w in caught)
        assert view.settings[0]["momentum"] == 0.9, "an invalid value is reverted"
        view.step(2)
        view.start = [0.5, -0.5]
        assert view.race.step_count == 0 and tuple(view.paths["Adam"][0]) == (0.5, -0.5)
        view.function = "beale"
        view._updates.flush()
        assert view.surface["name"] == "beale" and view.start == list(SURFACES["beale"].start)
        assert view.step_count == 0
    finally:
        view.close()


def test_view_configure_and_fallback(view_class):
    view = view_class("himmelblau", optimizers=("SGD", "RMSprop"))
    try:
        view.configure("RMSprop", alpha=0.9)
        assert view.settings[1]["alpha"] == 0.9
        view.step(5)
        data, _ = view._repr_mimebundle_()
        assert "<svg" in data["image/svg+xml"] and "RMSprop" in data["text/plain"]
    finally:
        view.close()


def test_closing_leaves_no_listener_and_no_timer(view_class):
    from vizgrad import events
    before = threading.active_count()
    subscriptions = list(events._bus.subscriptions)
    view = view_class("quadratic", optimizers=("SGD",))
    for _ in range(5):
        view.step(1)                       # throttled: the last update waits for a timer
    view.close()
    assert not view.listening and events._bus.subscriptions == subscriptions
    assert all(c._timer is None for c in view._coalescers)
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.join(1.0)
    assert threading.active_count() <= before
