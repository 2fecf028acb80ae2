"""The widgets' static pictures (what nbconvert's HTML, GitHub or a notebook without its
kernel shows): each one draws the widget's current state, values included, as one
well-formed, self-contained, small SVG (``_fallback_svg``) and the same inline in HTML
(``_fallback_html``); an empty widget says so in words. ``made_widgets`` builds one widget
of each kind in a known state; tests/test_browser_pictures.py screenshots the same ones.
"""

import math
import re
from xml.etree import ElementTree

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import vizgrad as vg  # noqa: E402
from vizgrad import events, nn, optim  # noqa: E402
from vizgrad.widgets import (AttentionView, ConvExplorer, GradFlowView, OptimizerView, Playground,  # noqa: E402
                             dashboard, pictures)
from vizgrad.widgets.attention_view import token_label  # noqa: E402
from vizgrad.widgets.grad_flow import STATUS_COLOURS  # noqa: E402
from vizgrad.widgets.optimizer_view import COLOURS, LEVELS, OUTLINE, contour_pixels  # noqa: E402
from vizgrad.widgets.playground import boundary_pixels  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
MAX_BYTES = 80_000          # a picture of an ordinary widget stays within a few tens of KB


def parse(svg):
    """The picture as an XML tree (fails on anything malformed)."""
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root):
    return ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]


def heading(root):
    return texts(root)[0]


def mlp():
    vg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))


def backward_with(model, rms):
    """One backward pass through ``model`` in which each parameter's gradient is made constant
    (hooks): its RMS is ``rms[k]``."""
    handles = [param.register_hook(lambda grad, value=float(value): vg.full_like(grad, value))
               for param, value in zip(model.parameters(), rms)]
    model.zero_grad()
    model(vg.ones(2, model[0].in_features)).sum().backward()
    for handle in handles:
        handle.remove()


def lesson_cnn():
    vg.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


def causal_weights(heads, length, seed=0):
    rng = np.random.default_rng(seed)
    weights = np.tril(rng.random((heads, length, length)) ** 3 + 1e-3)
    return weights / weights.sum(-1, keepdims=True)


def made_widgets():
    """One widget of each kind in a known state, and most kinds empty too: ``{name: widget}``
    (the caller closes them)."""
    made = {}
    model = mlp()
    made["grad_flow_empty"] = GradFlowView(mlp())
    made["dashboard_empty"] = dashboard(mlp())
    flow = made["grad_flow"] = GradFlowView(model)
    for rms in ([5.0, 2.0, 1.0, 3.0], [40, 1e-9, 20, 5e3], [30, 1e-9, 10, 4e3]):
        backward_with(model, rms)
    flow._updates.flush()
    vg.manual_seed(0)
    deep = nn.Sequential(*[nn.Linear(4, 4) for _ in range(30)])
    made["grad_flow_deep"] = GradFlowView(deep)
    for step in range(12):
        backward_with(deep, np.logspace(-9 + step / 4, 4, 60))
    trained = mlp()
    optimizer = optim.SGD(trained.parameters(), lr=0.05)
    board = made["dashboard"] = dashboard(trained, optimizer)
    x, y = vg.randn(16, 3), vg.randn(16, 2)
    for step in range(30):
        loss = ((trained(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        events.mark("train", loss=loss, step=step)
        if step % 5 == 4:
            events.mark("test", loss=1.5 * loss.item(), accuracy=0.5 + step / 100, step=step)
    board.flush()
    made["optimizer_empty"] = OptimizerView("himmelblau", optimizers=("SGD", "Adam"))
    race = made["optimizer"] = OptimizerView("rosenbrock")
    race.step(120)
    made["playground_empty"] = Playground(hidden=[3])
    playground = made["playground"] = Playground(hidden=[4, 3], features=("x", "y", "x²", "sin x"))
    playground.step(40)
    made["conv_explorer"] = ConvExplorer(lesson_cnn(), vg.randn(1, 1, 8, 8))
    after = made["conv_explorer_backward"] = ConvExplorer(lesson_cnn(), vg.randn(1, 1, 8, 8))
    after.backward()
    made["attention_empty"] = AttentionView()
    made["attention"] = AttentionView(causal_weights(4, 8), tokens=list("the cat "), title="block 0")
    sentence = "to be or not to be, that is the question"
    made["attention_long"] = AttentionView(causal_weights(2, len(sentence)), tokens=list(sentence), title="block 1")
    words = "the model reads every word of this sentence".split()
    made["attention_words"] = AttentionView(causal_weights(3, len(words)), tokens=words, title="word attention")
    for view in (made["attention"], made["attention_long"], made["attention_words"]):
        view._updates.flush()
    return made


@pytest.fixture(scope="module")
def widgets():
    from vizgrad.autograd import observers
    made = made_widgets()
    for widget in made.values():          # a closed widget keeps its state, and its pictures
        widget.close()
    assert observers.active == [], "closing the widgets left an event listener attached"
    return made


# --- every picture ---------------------------------------------------------------------------------------
def test_every_picture_is_one_well_formed_small_self_contained_svg_titled_with_its_state(widgets):
    for name, widget in widgets.items():
        svg = widget._fallback_svg()
        root = parse(svg)
        assert len(svg) < MAX_BYTES, (name, len(svg))
        assert "<script" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in svg and "—" not in svg, name                # no placeholder dash for a value
        assert all(image.get("href").startswith("data:image/png;base64,") for image in root.iter(f"{SVG}image"))
        sizes = [float(element.get("font-size", pictures.FONT)) for element in root.iter(f"{SVG}text")]
        assert min(sizes) >= 11, (name, min(sizes))
        assert float(root.get("width")) <= 1240, (name, root.get("width"))  # fits a 1280-pixel-wide page
        page = widget._fallback_html()
        figure = ElementTree.fromstring(page)                                 # the HTML is well-formed too
        assert figure.tag == "div" and svg in page and pictures.STATIC_NOTE in page


def test_empty_widgets_say_so_in_words(widgets):
    said = {"grad_flow_empty": "no steps yet: run training", "dashboard_empty": "no steps yet: run training",
            "optimizer_empty": "no steps yet: press Play", "attention_empty": "no attention weights yet",
            "conv_explorer": "no gradients yet: call explorer.backward()"}
    for name, words in said.items():
        root = parse(widgets[name]._fallback_svg())
        assert any(words in line for line in texts(root)), (name, texts(root))
        if name.endswith("_empty") and name != "optimizer_empty":
            assert not root.findall(f".//{SVG}polyline") and not root.findall(f".//{SVG}image")


# --- gradient flow ------------------------------------------------------------------------------------------
def bars(root):
    return {bar.get("data-layer"): bar for bar in root.iter(f"{SVG}rect") if bar.get("class") == "bar"}


def test_grad_flow_bars_are_each_layers_rms_on_a_log_axis_with_the_flagged_layers(widgets):
    view = widgets["grad_flow"]
    root = parse(view._fallback_svg())
    assert heading(root) == "gradient flow of 4 layers at step 3"
    statuses = view.statuses()
    assert statuses == {"0.weight": "ok", "0.bias": "vanishing", "2.weight": "ok", "2.bias": "exploding"}
    drawn = bars(root)
    assert set(drawn) == set(statuses)
    for name, rms in zip(view.tracker.names, (30, 1e-9, 10, 4e3)):
        bar = drawn[name]
        assert float(bar.get("data-rms")) == pytest.approx(rms, rel=1e-5)
        assert bar.get("fill") == STATUS_COLOURS[statuses[name]]
        assert "".join(bar.find(f"{SVG}title").itertext()) == f"{name}: gradient RMS {rms:.4g} ({statuses[name]})"
    # the bars' lengths are log10(rms) on one axis: 1e-9 to 4e3 spans log10(4e12) decades, and a
    # factor of 3 (30 against 10) is log10(3) of them
    width = {name: float(bar.get("width")) for name, bar in drawn.items()}
    decade = (width["2.bias"] - width["0.bias"]) / math.log10(4e12)
    assert width["0.weight"] - width["2.weight"] == pytest.approx(math.log10(3) * decade, abs=0.15)
    thresholds = {line.get("data-kind"): float(line.get("x1")) for line in root.iter(f"{SVG}line")
                  if line.get("class") == "threshold"}
    x0 = float(drawn["0.weight"].get("x"))
    # exploding at 1e3: log10(1e3 / 30) decades to the right of the 30 bar's end
    assert thresholds["exploding"] - (x0 + width["0.weight"]) == pytest.approx(math.log10(1e3 / 30) * decade, abs=0.15)
    lines = texts(root)
    assert "2 flagged: 0.bias vanishing, 2.bias exploding" in lines
    labels = {line for line in root.iter(f"{SVG}text") if "".join(line.itertext()) in ("0.bias", "2.bias")}
    assert {label.get("fill") for label in labels} == {STATUS_COLOURS["vanishing"], STATUS_COLOURS["exploding"]}
    (heatmap,) = [image for image in root.iter(f"{SVG}image") if image.get("class") == "heatmap"]
    assert "over steps 1 to 3" in "".join(heatmap.itertext())


def test_a_layer_without_a_finite_gradient_says_so(no_listener_leaks, closing):
    model = mlp()
    view = GradFlowView(model)
    closing.append(view)
    backward_with(model, [1.0, float("nan"), 1.0, 1.0])
    svg = view._fallback_svg()
    root = parse(svg)
    missing = [text for text in root.iter(f"{SVG}text") if text.get("class") == "missing"]
    assert [(text.get("data-layer"), text.text) for text in missing] == [("0.bias", "not finite")]
    assert set(bars(root)) == {"0.weight", "2.weight", "2.bias"} and "—" not in svg
    assert "1 flagged: 0.bias exploding" in texts(root)


def test_one_step_draws_the_bars_without_a_heatmap_and_many_layers_thin_their_labels(no_listener_leaks, closing):
    vg.manual_seed(0)
    deep = nn.Sequential(*[nn.Linear(4, 4) for _ in range(100)])
    view = GradFlowView(deep)
    closing.append(view)
    backward_with(deep, np.logspace(-6, 1, 200))
    root = parse(view._fallback_svg())
    assert not [image for image in root.iter(f"{SVG}image") if image.get("class") == "heatmap"]
    assert len(bars(root)) == 200
    labels = [text for text in root.iter(f"{SVG}text") if "".join(text.itertext()) in view.tracker.names]
    ys = sorted(float(label.get("y")) for label in labels)
    assert 10 < len(labels) < 200 and min(np.diff(ys)) >= 13            # thinned: no two overlap


# --- dashboard -----------------------------------------------------------------------------------------------
def polylines(root):
    return {line.get("data-name"): line for line in root.iter(f"{SVG}polyline") if line.get("class") == "line"}


def test_the_dashboard_draws_a_chart_per_marked_value_with_every_mark_the_ratios_and_the_flow(widgets):
    board = widgets["dashboard"]
    state = board.state
    root = parse(board._fallback_svg())
    assert heading(root) == "Training at step 30"
    lines = texts(root)
    assert {"loss", "accuracy", "update / parameter ratio ‖Δw‖/‖w‖", "gradient flow"} <= set(lines)
    drawn = [line.get("data-name") for line in root.iter(f"{SVG}polyline") if line.get("class") == "line"]
    assert drawn == ["train", "test", "test", *state.names]               # loss: both marks; accuracy: test
    latest = float(state.curves["loss"]["train"].matrix()[-1, 0])
    assert f"train {latest:.4g}" in lines
    train = polylines(root)["train"]
    points = [tuple(map(float, point.split(","))) for point in train.get("points").split()]
    assert len(points) == 30 and all(b[0] > a[0] for a, b in zip(points, points[1:]))
    losses = state.curves["loss"]["train"].matrix()[:, 0]
    # y grows downwards: the highest loss is the topmost point, the lowest the bottom one
    heights = [y for _, y in points]
    assert np.argmin(heights) == np.argmax(losses) and np.argmax(heights) == np.argmin(losses)
    assert len(bars(root)) == len(state.names)
    (reference,) = [line for line in root.iter(f"{SVG}line") if line.get("class") == "reference"]
    assert "typical: 0.001" in "".join(reference.itertext())


def test_a_dashboard_without_an_optimizer_or_marks_says_what_is_missing(no_listener_leaks, closing):
    model = mlp()
    board = dashboard(model)
    closing.append(board)
    x = vg.randn(4, 3)
    for _ in range(3):
        model.zero_grad()
        model(x).pow(2).mean().backward()
    board.flush()
    lines = texts(parse(board._fallback_svg()))
    assert "Training at step 3" in lines
    assert any("no marks yet" in line for line in lines) and any("no optimizer" in line for line in lines)


def test_user_names_are_escaped(no_listener_leaks, closing):
    model = mlp()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    board = dashboard(model, optimizer, title="<b>&co</b>")
    closing.append(board)
    x = vg.randn(4, 3)
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    events.mark("<script>", loss=loss)
    board.flush()
    svg = board._fallback_svg()
    root = parse(svg)
    assert "<script" not in svg and "&lt;script&gt;" in svg
    assert heading(root) == "<b>&co</b> at step 1" and "<script>" in polylines(root)


# --- optimizer race -------------------------------------------------------------------------------------------
def map_transform(root):
    """Data (x, y) -> picture pixels, from the contour map's frame and the surface's domain."""
    (contours,) = [image for image in root.iter(f"{SVG}image") if image.get("class") == "contours"]
    left, top, size = (float(contours.get(key)) for key in ("x", "y", "width"))
    return left, top, size


def test_the_race_draws_each_optimizers_path_in_its_colour_over_the_contour_map(widgets):
    view = widgets["optimizer"]
    root = parse(view._fallback_svg())
    assert heading(root) == "Rosenbrock: f = (1 - x)² + 100·(y - x²)², step 120"
    left, top, size = map_transform(root)
    x0, x1, y0, y1 = view.surface["domain"]
    groups = {group.get("data-name"): group for group in root.iter(f"{SVG}g") if group.get("class") == "path"}
    assert list(groups) == ["SGD", "Momentum", "Adam", "RMSprop"]
    for (name, path), colour in zip(view.paths.items(), COLOURS):
        group = groups[name]
        strokes = [line.get("stroke") for line in group.iter(f"{SVG}polyline")]
        assert strokes == ["#ffffff", OUTLINE, colour]                      # halo, outline, the race colour
        points = np.array([point.split(",") for point in group.find(f"{SVG}polyline").get("points").split()],
                          dtype=float)
        data = np.stack([x0 + (points[:, 0] - left) / size * (x1 - x0),
                         y0 + (top + size - points[:, 1]) / size * (y1 - y0)], axis=1)
        np.testing.assert_allclose(data, path, atol=0.002)                 # every point, to a tenth of a pixel
        (current,) = [c for c in group.iter(f"{SVG}circle") if c.get("class") == "current"]
        assert float(current.get("cx")) == pytest.approx(points[-1, 0]) and current.get("fill") == colour
        state = view.states[name]
        assert f"{name}: {state['status']}" in texts(root)
        assert f"f = {state['value']:.4g}" in "".join(group.itertext())


def test_a_diverged_optimizer_ends_in_a_hollow_marker_and_its_status(no_listener_leaks, closing):
    view = OptimizerView("saddle", optimizers=({"name": "SGD", "lr": 0.4},))
    closing.append(view)
    view.step(200)
    assert view.states["SGD"]["status"] == "diverged"
    root = parse(view._fallback_svg())
    (current,) = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "current"]
    assert current.get("fill") == OUTLINE and current.get("stroke") == COLOURS[0]
    assert "SGD: diverged" in texts(root)


def test_the_contour_map_is_banded_as_the_live_view_paints_it():
    x = np.linspace(-1, 1, 50)
    grid = np.add.outer(x ** 2, x ** 2)                    # a bowl: lowest at the centre
    pixels = contour_pixels(grid, "linear", size=101, levels=LEVELS)
    lowest = pictures.ramp(pictures.SEQUENTIAL, 0.5 / LEVELS)
    highest = pictures.ramp(pictures.SEQUENTIAL, (LEVELS - 0.5) / LEVELS)
    assert pixels[50, 50].tolist() == lowest.tolist() and pixels[0, 0].tolist() == highest.tolist()
    edges = (pixels.sum(axis=2) < pictures.ramp(pictures.SEQUENTIAL, 0.5 / LEVELS).sum() * 0.8).sum()
    assert edges > 0                                       # darker pixels where the band changes


# --- playground ------------------------------------------------------------------------------------------------
def test_the_playground_draws_the_boundary_the_network_and_the_losses(widgets):
    playground = widgets["playground"]
    trainer = playground.trainer
    root = parse(playground._fallback_svg())
    assert heading(root) == "Playground: moons, hidden [4, 3], tanh, step 40"
    history = trainer.loss_history
    drawn = polylines(root)
    assert set(drawn) == {"train", "test"} and len(drawn["train"].get("points").split()) == 41
    metrics = trainer.metrics()
    lines = texts(root)
    assert f"train loss {metrics['train_loss']:.4g}, test loss {metrics['test_loss']:.4g}" in lines
    assert f"train {history['train'][-1]:.4g}" in lines and f"test {history['test'][-1]:.4g}" in lines
    nodes = [image for image in root.iter(f"{SVG}image") if image.get("class") == "node"]
    assert len(nodes) == 4 + 4 + 3 + 2
    edges = [line for line in root.iter(f"{SVG}line") if line.get("class") == "edge"]
    assert len(edges) == 4 * 4 + 4 * 3 + 3 * 2
    circles = list(root.iter(f"{SVG}circle"))
    assert len(circles) == len(trainer.points)
    test_points = sum(len(group.findall(f"{SVG}circle")) for group in root.iter(f"{SVG}g")
                      if group.get("stroke") == pictures.TEXT)
    assert test_points == int(trainer.is_test.sum())


def test_the_boundary_mixes_the_class_colours_by_probability_fading_where_unsure():
    probabilities = np.zeros((2, 2, 2))
    probabilities[0] = [[1.0, 0.5], [0.0, 0.5]]                     # row 0 is the bottom of the plot
    probabilities[1] = 1 - probabilities[0]
    pixels = boundary_pixels(probabilities, colours=((0, 0, 255), (255, 0, 0)))
    assert pixels[1, 0].tolist() == [64, 64, 255]                   # sure of class 0: 0.75 of its colour
    assert pixels[0, 0].tolist() == [255, 64, 64]                   # sure of class 1
    assert pixels[1, 1].tolist() == [236, 217, 236]                 # unsure: 0.15 of the half-and-half mix


# --- conv explorer --------------------------------------------------------------------------------------------
def maps(root):
    return [image for image in root.iter(f"{SVG}image") if image.get("class") == "map"]


def test_the_conv_explorer_draws_the_input_each_layers_maps_and_after_backward_their_gradients(widgets):
    before, after = widgets["conv_explorer"], widgets["conv_explorer_backward"]
    root = parse(before._fallback_svg())
    assert heading(root).startswith("ConvExplorer: input 1×8×8, predicted class ")
    assert len(maps(root)) == 1 + 8 + 8
    hover = ["".join(image.itertext()) for image in maps(root)]
    first = before.feature_maps["0"][3]
    assert hover[1 + 3] == f"0 channel 3: min {first.min():.4g}, max {first.max():.4g}"
    root = parse(after._fallback_svg())
    hover = ["".join(image.itertext()) for image in maps(root)]
    assert len(hover) == 2 * (1 + 8 + 8)                            # each row again as its gradient
    grad = after.gradient_maps["3"][5]
    assert f"∂score/∂3 channel 5: min {grad.min():.4g}, max {grad.max():.4g}" in hover
    assert f"gradients of class {after.target}'s score after backward()" in texts(root)


# --- attention ----------------------------------------------------------------------------------------------------
def test_attention_heads_are_labelled_maps_with_the_weights_as_hover_text(widgets):
    view = widgets["attention"]
    root = parse(view._fallback_svg())
    assert heading(root) == "block 0: 4 heads, 8 queries × 8 keys, step 1"
    cells = [rect for rect in root.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert len(cells) == 4 * 8 * 8
    value = view.array[2, 5, 1]
    assert f"head 2, query 5, key 1: {value:.3f}" in ["".join(cell.itertext()) for cell in cells]
    assert {"head 0", "head 3", "t", "h", "␣"} <= set(texts(root))


def test_long_sequences_are_pictures_with_thinned_labels_and_a_hover_text_per_query(widgets):
    view = widgets["attention_long"]
    root = parse(view._fallback_svg())
    heads = [image for image in root.iter(f"{SVG}image") if image.get("class") == "head"]
    assert len(heads) == 2
    rows = ["".join(rect.itertext()) for rect in root.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert len(rows) == 2 * 40
    weights = view.array[1, 12]
    strongest = int(np.argmax(weights))
    assert rows[40 + 12].startswith(f"head 1, query 12 {token_label(view.tokens[12])}: most on keys {strongest} ")
    labels = [text for text in root.iter(f"{SVG}text") if text.get("font-family") == "monospace"]
    assert len(labels) < 2 * 2 * 40                                 # thinned


# --- the helpers ---------------------------------------------------------------------------------------------------
def test_axes_ticks_and_numbers():
    assert pictures.nice_ticks(0, 1, 5) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert pictures.nice_ticks(-2, 3, 5) == [-2, -1, 0, 1, 2, 3]
    assert pictures.decade_ticks(-9, 4, 6) == [1e-9, 1e-6, 1e-3, 1.0, 1e3]
    assert [pictures.tick_text(v, log=True) for v in (1e-3, 1.0, 1e4)] == ["1e-3", "1", "1e4"]
    assert [pictures.short_number(v) for v in (2500.0, 0.061, 7.1e-5)] == ["2.5e3", "0.061", "7.1e-5"]
    assert pictures.number(float("nan")) == "n/a" and pictures.number(None) == "n/a"


def test_a_line_chart_maps_values_to_its_axes_and_picks_a_log_scale_for_decades():
    steps = np.arange(5.0)
    fragment, _ = pictures.line_chart(0, 0, 300, 200, [pictures.Line("a", steps, [1, 2, 3, 4, 5], "#000000")], "t")
    root = parse(pictures.document(300, 260, fragment, "t"))
    points = [tuple(map(float, p.split(","))) for p in polylines(root)["a"].get("points").split()]
    assert np.allclose(np.diff([x for x, _ in points]), np.diff([x for x, _ in points])[0])
    assert np.allclose(np.diff([y for _, y in points]), np.diff([y for _, y in points])[0])   # linear: even steps
    decades = [pictures.Line("b", steps, [1, 10, 100, 1000, 1e4], "#000000")]
    assert pictures.wants_log(decades) and not pictures.wants_log([pictures.Line("c", steps, [1, -1, 5, 2, 3], "#0")])
    fragment, _ = pictures.line_chart(0, 0, 300, 200, decades, "t", y_label="loss")
    root = parse(pictures.document(300, 260, fragment, "t"))
    ys = [float(p.split(",")[1]) for p in polylines(root)["b"].get("points").split()]
    assert np.allclose(np.diff(ys), np.diff(ys)[0])                 # log: a decade per step is even
    assert "loss (log)" in texts(root)
    many = [pictures.Line(f"l{k}", steps, steps + k, "#000000") for k in range(30)]
    fragment, _ = pictures.line_chart(0, 0, 300, 200, many, "t")
    legend = texts(parse(pictures.document(300, 400, fragment, "t")))
    assert "and 19 more (hover a line)" in legend and "l10 14" in legend and "l11 15" not in legend
    fragment, height = pictures.line_chart(0, 0, 300, 200, [pictures.Line("d", [], [], "#0")], "t", empty="nothing yet")
    assert "nothing yet" in fragment and "<polyline" not in fragment and height < 200


def test_large_histories_stay_bounded_and_quick(no_listener_leaks, closing):
    vg.manual_seed(0)
    deep = nn.Sequential(*[nn.Linear(4, 4) for _ in range(40)])
    optimizer = optim.SGD(deep.parameters(), lr=1e-3)
    board = dashboard(deep, optimizer, summary_rate=None)
    closing.append(board)
    x = vg.randn(8, 4)
    for step in range(300):
        optimizer.zero_grad()
        loss = deep(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        events.mark("train", loss=loss, step=step)
    board.flush()
    import time
    started = time.perf_counter()
    svg = board._fallback_svg()
    elapsed = time.perf_counter() - started
    parse(svg)
    assert len(svg) < 250_000 and elapsed < 1.0, (len(svg), elapsed)
    assert len(re.findall("class='line'", svg)) == 1 + 80
