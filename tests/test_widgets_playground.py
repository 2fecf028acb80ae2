"""The playground: training on vizgrad's engine (loss falls, accuracy), what it sends
the front end (probabilities and hidden-unit grids), settings, the background thread,
and cleanup on close()."""

import json
import os
import re
import threading
import time
import warnings

import numpy as np
import pytest

import vizgrad
from vizgrad import nn
from vizgrad.widgets.playground import DATASETS, PlaygroundTrainer, make_dataset


# --- the trainer ------------------------------------------------------------------------------
def test_training_on_moons_lowers_the_loss_and_classifies_well():
    trainer = PlaygroundTrainer("moons", noise=0.1)
    trainer.step(200)
    history = trainer.loss_history
    assert len(history["train"]) == 201 and history["step"][-1] == 200
    assert history["train"][-1] < 0.5 * history["train"][0]
    assert history["test"][-1] < history["test"][0]
    assert trainer.accuracy() > 0.9 and trainer.accuracy("train") > 0.9


def test_runs_are_reproducible_from_the_seed_and_leave_the_global_seed_alone():
    vizgrad.manual_seed(123)
    expected = vizgrad.randn(3).numpy()
    vizgrad.manual_seed(123)
    first = PlaygroundTrainer("xor", seed=5)
    after = vizgrad.randn(3).numpy()
    np.testing.assert_array_equal(after, expected)
    first.step(20)
    second = PlaygroundTrainer("xor", seed=5)
    second.step(20)
    assert first.loss_history == second.loss_history


@pytest.mark.parametrize("name", DATASETS)
def test_every_dataset_trains_and_draws(name):
    trainer = PlaygroundTrainer(name, hidden=(4, 3), resolution=12)
    trainer.step(3)
    probabilities, units = trainer.responses()
    assert probabilities.shape == (trainer.classes, 12, 12)
    np.testing.assert_allclose(probabilities.sum(axis=0), 1.0, rtol=1e-5)
    assert units.shape == (7, 12, 12)
    assert trainer.classes == (3 if name == "blobs" else 2)
    x0, x1, y0, y1 = trainer.domain
    assert x1 - x0 == pytest.approx(y1 - y0)
    assert np.all((trainer.points >= [x0, y0]) & (trainer.points <= [x1, y1]))
    assert trainer.is_test.sum() == 90


def test_unit_responses_are_the_hidden_activations_on_the_grid():
    trainer = PlaygroundTrainer("circles", hidden=(3,), activation="relu", resolution=5)
    _, units = trainer.responses()
    grid = vizgrad.tensor(trainer._standardise(trainer.grid_points()), dtype="float32")
    with vizgrad.no_grad():
        hidden = nn.functional.relu(trainer.model[0](grid)).numpy()
    np.testing.assert_allclose(units, hidden.T.reshape(3, 5, 5), rtol=1e-6)
    assert trainer.grid_points()[1][0] > trainer.grid_points()[0][0], "row-major, x fastest"


def test_hyperparameters_and_regularisation():
    trainer = PlaygroundTrainer("moons", weight_decay=0.01, optimizer="sgd", learning_rate=0.1)
    groups = trainer.optimizer.param_groups
    assert groups[0]["weight_decay"] == 0.01 and groups[1]["weight_decay"] == 0.0
    assert all(p.ndim == 2 for p in groups[0]["params"]) and all(p.ndim == 1 for p in groups[1]["params"])
    trainer.set_hyperparameters(learning_rate=0.5, weight_decay=0.1, batch_size=1000)
    assert groups[0]["lr"] == groups[1]["lr"] == 0.5 and groups[0]["weight_decay"] == 0.1
    trainer.step(1)
    assert trainer.epoch == pytest.approx(1.0), "a batch larger than the training set is the whole set"
    with pytest.raises(ValueError):
        trainer.set_hyperparameters(batch_size=0)
    assert trainer.batch_size == 1000
    with pytest.raises(ValueError, match="hidden"):
        PlaygroundTrainer(hidden=(8,) * 7)
    with pytest.raises(ValueError, match="activation"):
        PlaygroundTrainer(activation="swish2")
    with pytest.raises(ValueError, match="dataset"):
        make_dataset("mnist")


def test_weight_decay_shrinks_the_weights():
    plain = PlaygroundTrainer("moons", optimizer="sgd", learning_rate=0.1, weight_decay=0.0)
    decayed = PlaygroundTrainer("moons", optimizer="sgd", learning_rate=0.1, weight_decay=0.1)
    plain.step(100)
    decayed.step(100)

    def norm(trainer):
        return sum(float((p.detach().numpy() ** 2).sum()) for name, p in trainer.model.named_parameters()
                   if name.endswith("weight"))

    assert norm(decayed) < norm(plain)


def test_input_features_are_functions_of_the_standardised_coordinates():
    trainer = PlaygroundTrainer("circles", features=("x", "y", "x²", "y²", "xy", "sin x", "sin y"), resolution=6)
    standard = trainer._standardise(trainer.points[~trainer.is_test])
    x, y = standard[:, 0], standard[:, 1]
    expected = np.stack([x, y, x * x, y * y, x * y, np.sin(x), np.sin(y)], axis=1)
    np.testing.assert_allclose(trainer.x_train.numpy(), expected, rtol=1e-6, atol=1e-6)
    assert trainer.model[0].weight.shape == (8, 7)
    maps = trainer.feature_maps()
    assert maps.shape == (7, 6, 6)
    grid = trainer._standardise(trainer.grid_points())
    np.testing.assert_allclose(maps[4].ravel(), grid[:, 0] * grid[:, 1])
    assert PlaygroundTrainer(features=("sin y", "x")).features == ["x", "sin y"], "kept in the canonical order"
    for wrong in ((), ("x", "z"), ("x", "x")):
        with pytest.raises(ValueError, match="features"):
            PlaygroundTrainer(features=wrong)


def test_circles_need_squared_features_without_hidden_layers():
    linear = PlaygroundTrainer("circles", hidden=(), learning_rate=0.1)
    squares = PlaygroundTrainer("circles", hidden=(), learning_rate=0.1, features=("x", "y", "x²", "y²"))
    linear.step(300)
    squares.step(300)
    assert linear.accuracy() < 0.75 and squares.accuracy() > 0.95


def test_l1_adds_rate_times_the_absolute_weights_to_the_loss():
    trainer = PlaygroundTrainer("moons", optimizer="sgd", learning_rate=0.1, weight_decay=0.01, regularization="L1")
    weights = [p for name, p in trainer.model.named_parameters() if name.endswith("weight")]
    assert trainer.penalty().item() == pytest.approx(0.01 * sum(float(np.abs(w.detach().numpy()).sum()) for w in weights),
                                                     rel=1e-5)
    assert trainer.optimizer.param_groups[0]["weight_decay"] == 0.0, "L1 is in the loss, not the optimizer"
    before = [w.detach().numpy().copy() for w in weights]
    trainer.step(1)
    # one SGD step: w - lr·(∂CE/∂w + rate·sign(w)); the L1 part alone is checked against a run without it
    plain = PlaygroundTrainer("moons", optimizer="sgd", learning_rate=0.1, weight_decay=0.0)
    plain.step(1)
    after_plain = [p.detach().numpy() for name, p in plain.model.named_parameters() if name.endswith("weight")]
    for w0, w1, wp in zip(before, weights, after_plain):
        np.testing.assert_allclose(w1.detach().numpy() - wp, -0.1 * 0.01 * np.sign(w0), atol=1e-6)
    trainer.set_hyperparameters(regularization="L2")
    assert trainer.penalty() is None and trainer.optimizer.param_groups[0]["weight_decay"] == 0.01
    with pytest.raises(ValueError, match="regularization"):
        trainer.set_hyperparameters(regularization="L3")


def test_spirals_are_learnable_at_the_default_noise():
    trainer = PlaygroundTrainer("spirals")
    trainer.step(500)
    assert trainer.accuracy("test") > 0.9


def test_the_network_payload_has_one_weight_per_edge():
    trainer = PlaygroundTrainer("blobs", hidden=(5, 3), features=("x", "y", "xy"))
    network = trainer.network()
    assert network["sizes"] == [3, 5, 3, 3]
    assert [layer["weight"].shape for layer in network["layers"]] == [(5, 3), (3, 5), (3, 3)]
    assert all(not layer["weight_grad"].any() for layer in network["layers"]), "no gradient before the first step"
    trainer.step(1)
    np.testing.assert_array_equal(trainer.network()["layers"][0]["weight_grad"], trainer.model[0].weight.grad.numpy())


def test_one_class_palette_for_the_playground_the_report_and_the_lessons():
    from pathlib import Path

    from vizgrad.render.html import CLASS_COLOURS
    from vizgrad.widgets.playground import CLASS_PALETTE
    charts = (Path(__file__).resolve().parent.parent / "widgets" / "src" / "charts.js").read_text(encoding="utf-8")
    series = re.search(r"SERIES_COLOURS = \[([^\]]*)\]", charts).group(1)
    hexes = re.findall(r'"#([0-9a-f]{6})"', series)
    js = [tuple(int(code[i:i + 2], 16) for i in (0, 2, 4)) for code in hexes[:3]]
    assert tuple(CLASS_COLOURS) == tuple(CLASS_PALETTE) == tuple(js)
    # the signed-value scale of the lessons' matplotlib figures is the widgets' diverging map
    from vizgrad.lessons.figures import DIVERGING
    core = (Path(__file__).resolve().parent.parent / "widgets" / "src" / "widgets" / "optimizer-core.js").read_text(
        encoding="utf-8")
    stops = re.search(r"export const diverging = colourRamp\((\[.*?\])\);", core).group(1)
    assert tuple(tuple(stop) for stop in json.loads(stops)) == DIVERGING


# --- the widget ---------------------------------------------------------------------------------------
@pytest.fixture
def playground():
    pytest.importorskip("anywidget")
    from vizgrad.widgets import base
    for name in ("playground-widget.js", "widgets.css"):
        if not os.path.exists(os.path.join(base.STATIC_DIR, name)):
            pytest.skip(f"the widget bundle is not built ({name}): make build")
    from vizgrad.widgets import Playground
    widgets = []

    def make(**kwargs):
        widget = Playground(**kwargs)
        widgets.append(widget)
        return widget

    yield make
    for widget in widgets:
        widget.close()


def test_pg_train_lowers_the_loss_and_reaches_90_percent(playground):
    pg = playground(dataset="moons")
    first = pg.loss_history["train"][0]
    pg.train(200)
    assert pg.loss_history["train"][-1] < first
    assert len(pg.loss_history["test"]) == 201
    assert pg.accuracy() > 0.9


def test_traits_carry_float32_grids_and_the_loss_series(playground):
    pg = playground(dataset="blobs", hidden=[5, 3], resolution=16)
    pg.step(10)
    pg._updates.flush()
    assert pg.step_count == 10 and pg.metrics["step"] == 10
    assert pg.classes == 3 and pg.unit_layers == [5, 3]
    probabilities = np.frombuffer(pg.boundary, dtype="<f4").reshape(3, 16, 16)
    np.testing.assert_allclose(probabilities.sum(axis=0), 1.0, rtol=1e-5)
    units = np.frombuffer(pg.units, dtype="<f4").reshape(8, 16, 16)
    _, expected = pg.trainer.responses()
    np.testing.assert_allclose(units, expected, rtol=1e-6)
    assert pg.losses["length"] == 11 and pg.losses["columns"] == 2
    values = np.frombuffer(pg.losses["values"], dtype="<f4").reshape(-1, 2)
    np.testing.assert_allclose(values[:, 0], pg.loss_history["train"], rtol=1e-6)
    points = np.frombuffer(pg.points, dtype="<f4").reshape(-1, 2)
    assert len(points) == len(pg.labels) == len(pg.is_test) == 300


def test_settings_rebuild_or_apply_live(playground):
    pg = playground()
    pg.step(5)
    pg.hidden = [3]
    assert pg.trainer.step_count == 0 and pg.trainer.model[0].out_features == 3
    pg.dataset = "spirals"
    assert pg.trainer.dataset == "spirals"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pg.hidden = [100]
        pg.activation = "nope"
    assert len(caught) == 2
    assert pg.hidden == [3] and pg.activation == "tanh", "invalid settings are reverted"
    pg.learning_rate = 0.3
    assert pg.trainer.optimizer.param_groups[0]["lr"] == 0.3
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        pg.batch_size = 0
    assert pg.batch_size == 32 and pg.trainer.batch_size == 32


def test_front_end_messages_step_and_are_answered(playground, monkeypatch):
    pg = playground()
    sent = []
    monkeypatch.setattr(pg, "send", lambda content, buffers=None: sent.append(content))
    pg._on_message(pg, {"type": "step", "n": 4, "id": 2}, [])
    assert pg.trainer.step_count == 4 and sent == [{"type": "stepped", "id": 2, "step": 4}]
    pg._on_message(pg, {"type": "reset"}, [])
    assert pg.trainer.step_count == 0 and pg.loss_history["step"] == [0]


def test_background_training_stops_on_request(playground):
    pg = playground()
    pg.start()
    deadline = time.monotonic() + 10
    while pg.trainer.step_count < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pg.running and pg.playing
    pg.stop()
    assert not pg.running and not pg.playing
    steps = pg.trainer.step_count
    time.sleep(0.05)
    assert pg.trainer.step_count == steps
    pg.start(steps=7)
    pg._thread.join(10)
    assert pg.trainer.step_count == steps + 7


def test_the_front_end_pausing_stops_the_thread(playground):
    pg = playground()
    pg.start()
    thread = pg._thread
    pg.playing = False                       # what the front end's Pause does
    thread.join(10)
    assert not thread.is_alive()


def test_closing_stops_the_thread_and_leaves_no_listener(playground):
    from vizgrad import events
    subscriptions = list(events._bus.subscriptions)
    pg = playground()
    pg.start()
    thread = pg._thread
    pg.close()
    assert not thread.is_alive() and not pg.running
    assert not pg.listening and events._bus.subscriptions == subscriptions
    assert all(c._timer is None for c in pg._coalescers)
    steps = pg.trainer.step_count
    time.sleep(0.05)
    assert pg.trainer.step_count == steps
    assert not [t for t in threading.enumerate() if t.name == "vizgrad-playground"]


def test_the_static_picture_is_the_network_diagram_beside_the_boundary(playground):
    from xml.etree import ElementTree

    pg = playground(hidden=[3, 2], features=("x", "y", "x²"))
    pg.step(5)
    data, _ = pg._repr_mimebundle_()
    assert "moons" in data["text/plain"]
    svg = ElementTree.fromstring(data["image/svg+xml"])                   # well-formed, self-contained
    namespace = {"svg": "http://www.w3.org/2000/svg"}
    nodes = svg.findall(".//svg:image[@class='node']", namespace)
    assert len(nodes) == 3 + 3 + 2 + 2                                     # features, hidden units, classes
    assert all(node.get("href").startswith("data:image/png;base64,") for node in nodes)
    texts = [text.text for text in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert {"x", "y", "x²", "features", "layer 1", "layer 2", "classes"} <= set(texts)
    edges = svg.findall(".//svg:line[@class='edge']", namespace)
    layers = pg.trainer.network()["layers"]
    assert len(edges) == sum(layer["weight"].size for layer in layers)   # one edge per weight
    largest = max(np.abs(layer["weight"]).max() for layer in layers)
    for edge in edges:
        weight = layers[int(edge.get("data-layer"))]["weight"][int(edge.get("data-to")), int(edge.get("data-from"))]
        assert edge.get("stroke") == ("rgb(230,120,30)" if weight < 0 else "rgb(40,110,190)")
        assert float(edge.get("stroke-width")) == pytest.approx(0.75 + 5.25 * abs(weight) / largest, abs=0.01)
    boundary = [image for image in svg.iter("{http://www.w3.org/2000/svg}image") if image.get("class") != "node"]
    assert len(boundary) == 1 and len(svg.findall(".//svg:circle", namespace)) == len(pg.trainer.points)
