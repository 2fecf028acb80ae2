"""ConvExplorer: the feature maps, kernels and gradient maps it sends, the exact
multiply-accumulate of a unit (against the layer's own output and PyTorch), the receptive
field (against the support of the unit's gradient on the input), errors and fallbacks.

Needs anywidget and the built bundle (``make build``).
"""

import os

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import vizgrad as vg  # noqa: E402
from vizgrad import autograd, nn  # noqa: E402
from vizgrad.widgets import base  # noqa: E402
from vizgrad.widgets.base import from_float32_bytes  # noqa: E402

if not os.path.exists(os.path.join(base.STATIC_DIR, "conv-explorer-widget.js")):
    pytest.skip("the widget bundle is not built (conv-explorer-widget.js): make build", allow_module_level=True)

from vizgrad.widgets import ConvExplorer  # noqa: E402
from vizgrad.widgets.conv_explorer import ConvExplorerError, receptive_field  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_listener_leaks")


def lesson_cnn():
    vg.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


@pytest.fixture
def explorer(closing):
    def make(model, image, **options):
        widget = ConvExplorer(model, image, **options)
        closing.append(widget)
        return widget
    return make


def test_maps_and_kernels_are_each_conv_layers_output_and_weight(explorer):
    model = lesson_cnn()
    image = vg.randn(1, 1, 8, 8)
    view = explorer(model, image)
    assert [layer["name"] for layer in view.layers] == ["0", "3"]
    first, second = view.layers
    assert first["output_shape"] == [8, 8, 8] and second["output_shape"] == [16, 4, 4]
    assert second["input_shape"] == [8, 4, 4] and first["kernel"] == [3, 3] and first["padding"] == [1, 1]
    expected = model[0](image).detach().numpy()[0]
    np.testing.assert_allclose(from_float32_bytes(first["maps"]).reshape(8, 8, 8), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(from_float32_bytes(second["kernels"]).reshape(16, 8, 3, 3), model[3].weight.detach().numpy())
    np.testing.assert_allclose(view.scores, model(image).detach().numpy()[0], rtol=1e-5)
    assert first["grads"] is None and view.target is None
    np.testing.assert_allclose(from_float32_bytes(view.image["data"]).reshape(8, 8), image.numpy()[0, 0])


def test_a_units_multiply_accumulate_is_exact(explorer):
    model = lesson_cnn()
    view = explorer(model, vg.randn(1, 8, 8))          # (C, H, W) is one image too
    for layer, channel, i, j in [(0, 0, 0, 0), (0, 5, 3, 7), (1, 3, 1, 2), (1, 15, 3, 3)]:
        selection = view.select(layer, channel, i, j)
        in_channels = 1 if layer == 0 else 8
        assert len(selection["channels"]) == in_channels and all(len(c["terms"]) == 9 for c in selection["channels"])
        terms = [term for entry in selection["channels"] for term in entry["terms"]]
        assert all(term[4] == term[2] * term[3] for term in terms)
        assert selection["total"] == pytest.approx(selection["bias"] + sum(term[4] for term in terms), abs=1e-12)
        assert selection["total"] == pytest.approx(selection["recorded"], abs=1e-5)
    # at a corner with padding 1 the top row and left column of the window read zeros
    corner = view.select(0, 2, 0, 0)
    assert corner["window"] == [-1, -1, 1, 1]
    assert [term[2] for term in corner["channels"][0]["terms"][:3]] == [0.0, 0.0, 0.0]


def test_the_multiply_accumulate_matches_pytorch(explorer):
    torch = pytest.importorskip("torch")
    model = nn.Sequential(nn.Conv2d(2, 3, 3, stride=2, padding=1, dilation=1))
    image = vg.randn(1, 2, 7, 7)
    view = explorer(model, image)
    reference = torch.nn.functional.conv2d(torch.tensor(image.numpy()), torch.tensor(model[0].weight.detach().numpy()),
                                           torch.tensor(model[0].bias.detach().numpy()), stride=2, padding=1)
    selection = view.select(0, 1, 2, 3)
    assert selection["total"] == pytest.approx(float(reference[0, 1, 2, 3]), abs=1e-5)
    assert selection["window"] == [3, 5, 5, 7]


def test_the_receptive_field_is_where_the_unit_depends_on_the_input(explorer):
    vg.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.AvgPool2d(2), nn.Conv2d(2, 2, 3, dilation=2))
    image = vg.randn(1, 1, 12, 12, requires_grad=True)
    view = explorer(model, image)
    for i, j in [(0, 0), (1, 1)]:
        field = view.select(1, 0, i, j)["field"]
        x = image.detach().clone().requires_grad_()
        (grad,) = autograd.grad(model(x)[0, 0, i, j], x)
        rows, columns = np.nonzero(np.abs(grad.numpy()[0, 0]) > 0)
        assert field == [rows.min(), columns.min(), rows.max(), columns.max()]
    geometry = [((3, 3), (1, 1), (1, 1), (1, 1)), ((2, 2), (2, 2), (0, 0), (1, 1))]
    assert receptive_field(geometry, 0, 0) == (-1, -1, 2, 2)


def test_backward_gives_gradient_maps_without_touching_parameter_grads(explorer):
    model = lesson_cnn()
    image = vg.randn(1, 1, 8, 8)
    view = explorer(model, image)
    predicted = int(np.argmax(view.scores))
    assert view.backward() == predicted and view.target == predicted
    assert all(p.grad is None for p in model.parameters())
    # the oracle: the same gradients through autograd.grad on a fresh forward pass
    x = image.clone().requires_grad_()
    first = model[0](x)
    rest = model[1:](first)
    (expected_first, expected_input) = autograd.grad(rest[0, predicted], [first, x])
    np.testing.assert_allclose(from_float32_bytes(view.layers[0]["grads"]).reshape(8, 8, 8),
                               expected_first.numpy()[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(view.gradient_maps["0"], expected_first.numpy()[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(from_float32_bytes(view.image["grad"]).reshape(8, 8), expected_input.numpy()[0, 0],
                               rtol=1e-5, atol=1e-7)
    view.select(0, 1, 2, 2)
    assert view.selection["grad"] == pytest.approx(float(expected_first.numpy()[0, 1, 2, 2]), abs=1e-6)
    view.backward(3)
    assert view.target == 3
    view.update()                                        # a new forward pass clears the gradients
    assert view.target is None and view.layers[0]["grads"] is None


def test_front_end_messages_select_and_backward(explorer, monkeypatch):
    view = explorer(lesson_cnn(), vg.randn(1, 1, 8, 8))
    sent = []
    monkeypatch.setattr(view, "send", lambda content, buffers=None: sent.append(content))
    view._on_message(view, {"type": "select", "layer": 1, "channel": 2, "i": 0, "j": 1}, [])
    assert (view.selection["layer"], view.selection["channel"], view.selection["i"], view.selection["j"]) == (1, 2, 0, 1)
    view._on_message(view, {"type": "backward", "target": 4}, [])
    assert view.target == 4 and view.selection["grad"] is not None
    view._on_message(view, {"type": "select", "layer": 5, "channel": 0, "i": 0, "j": 0}, [])
    assert sent and sent[-1]["type"] == "error" and "layer must be in 0..1" in sent[-1]["message"]


def test_mistakes_are_named(explorer):
    with pytest.raises(ConvExplorerError, match="no Conv2d"):
        ConvExplorer(nn.Sequential(nn.Linear(2, 2)), vg.randn(1, 2))
    with pytest.raises(ConvExplorerError, match=r"shape \(2, 1, 8, 8\)"):
        ConvExplorer(lesson_cnn(), vg.randn(2, 1, 8, 8))
    view = explorer(lesson_cnn(), vg.randn(1, 1, 8, 8))
    with pytest.raises(ConvExplorerError, match=r"outside layer 0's output of shape \(8, 8, 8\)"):
        view.select(0, 0, 8, 0)
    with pytest.raises(ValueError, match="target must be a class in 0..9"):
        view.backward(10)


def test_max_channels_and_the_static_picture(explorer):
    view = explorer(lesson_cnn(), vg.randn(1, 1, 8, 8), max_channels=4)
    assert [layer["shown"] for layer in view.layers] == [4, 4]
    assert len(from_float32_bytes(view.layers[1]["maps"])) == 4 * 4 * 4
    data, _ = view._repr_mimebundle_()
    assert data["image/svg+xml"].startswith("<svg") and data["image/svg+xml"].count("class='map'") == 1 + 4 + 4
    assert "3×3 kernels" in data["text/plain"]


def test_grouped_convolutions_list_their_groups_terms_as_pytorch_computes(explorer):
    torch = pytest.importorskip("torch")
    vg.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(4, 6, 3, padding=1, groups=2))
    image = vg.randn(1, 4, 5, 5)
    view = explorer(model, image)
    reference = torch.nn.functional.conv2d(torch.tensor(image.numpy()), torch.tensor(model[0].weight.detach().numpy()),
                                           torch.tensor(model[0].bias.detach().numpy()), padding=1, groups=2)
    for channel, reads in [(0, [0, 1]), (2, [0, 1]), (3, [2, 3]), (5, [2, 3])]:
        selection = view.select(0, channel, 1, 2)
        assert [entry["channel"] for entry in selection["channels"]] == reads
        assert selection["total"] == pytest.approx(float(reference[0, channel, 1, 2]), abs=1e-5)
        assert selection["total"] == pytest.approx(selection["recorded"], abs=1e-5)
    layer = view.layers[0]
    assert layer["groups"] == 2
    kernels = from_float32_bytes(layer["kernels"]).reshape(6, 2, 3, 3)     # one 3×3 slice per input channel read
    np.testing.assert_allclose(kernels, model[0].weight.detach().numpy(), rtol=1e-6)


def test_a_units_window_on_the_previous_layers_maps_is_where_it_depends_on_them(explorer):
    view = explorer(lesson_cnn(), vg.randn(1, 1, 8, 8))
    assert view.select(0, 0, 3, 3)["previous_window"] is None
    first, second = (entry["output"] for entry in view._captured if entry["kind"] == "conv")   # recorded maps
    for i, j in [(0, 0), (1, 0), (1, 1)]:
        selection = view.select(1, 3, i, j)
        (grad,) = autograd.grad(second[0, 3, i, j], first, retain_graph=True)
        rows, columns = np.nonzero(np.abs(grad.numpy()[0]).sum(axis=0) > 0)   # ReLU and max-pool keep a subset
        top, left, bottom, right = selection["previous_window"]
        assert top <= rows.min() and left <= columns.min() and rows.max() <= bottom and columns.max() <= right
    assert view.select(1, 3, 1, 1)["previous_window"] == [0, 0, 5, 5]   # pool 2 ← conv 3×3 pad 1 at (1, 1)
