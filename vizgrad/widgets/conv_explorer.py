"""``ConvExplorer(model, input)``: a CNN's convolutions on the learner's own model and image,
in the spirit of CNN Explainer, with the backward pass too.

For every ``Conv2d`` of the model it shows the feature maps the input produces, the
kernels and, after :meth:`ConvExplorer.backward`, the gradient of a class score with
respect to each map. Clicking a unit of a map shows its receptive field on the input and
the exact multiply-accumulate that produced it: ``y[c, i, j] = b[c] + Σ w[c, k, a, b'] ·
x[k, i·s - p + a·d, j·s - p + b'·d]`` with every term, summed in float64 and set beside the
value the layer computed::

    explorer = ConvExplorer(model, X[:1])     # one image, shape (1, C, H, W) or (C, H, W)
    explorer                                  # maps and kernels; click a unit
    explorer.backward()                       # gradients of the predicted class's score
    explorer.select(0, 3, 2, 5)               # layer 0, channel 3, row 2, column 5 (also a click)
    explorer.selection["total"], explorer.selection["recorded"]

The model is run once when the explorer is made (and again by :meth:`update`); the
layers are expected one after another, as in a ``Sequential`` CNN: elementwise layers
(ReLU, BatchNorm) keep positions and pooling layers enter the receptive field. Every
kernel is shown whole (one slice per input channel it reads); a clicked unit's window is
also marked on the previous Conv2d's maps. Grouped convolutions (``groups`` > 1, as in
PyTorch) list the terms of the unit's group's input channels only.
"""

import numpy as np

from .. import autograd, nn
from ..autograd.grad_mode import no_grad
from ..errors import ArgumentTypeError, DTypeError, VizgradError, as_int, not_a_tensor
from ..tensor import Tensor
from . import pictures
from .base import VizgradWidget, float32_bytes, traitlets
from .checks import check_count, check_widget_options, describe

SPATIAL = (nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d)


class ConvExplorerError(VizgradError, ValueError):
    """A model or input ConvExplorer cannot show."""


def _check_image(op, image):
    """One image as a (1, C, H, W) floating-point Tensor (a (C, H, W) one gets its batch dim)."""
    if not isinstance(image, Tensor):
        raise not_a_tensor(op, "input", image)
    if not image.is_floating_point():
        raise DTypeError(f"{op}: input must be a floating-point Tensor (its gradient is shown), got {image.dtype}")
    shape = tuple(image.shape)
    if len(shape) == 3:
        return image.unsqueeze(0)
    if len(shape) != 4 or shape[0] != 1:
        raise ConvExplorerError(f"{op}: input must be one image of shape (1, C, H, W) or (C, H, W), "
                                f"got shape {shape}")
    return image


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def _numpy(tensor):
    return np.asarray(tensor.detach().numpy(), dtype=np.float64)


def receptive_field(geometry, i, j):
    """The rows and columns of the input that unit (i, j) after the spatial layers
    ``geometry`` (a list of (kernel, stride, padding, dilation) pairs, first layer first)
    depends on: ``(top, left, bottom, right)``, inclusive, before clipping to the input."""
    top, bottom, left, right = i, i, j, j
    for kernel, stride, padding, dilation in reversed(geometry):
        top = top * stride[0] - padding[0]
        bottom = bottom * stride[0] - padding[0] + dilation[0] * (kernel[0] - 1)
        left = left * stride[1] - padding[1]
        right = right * stride[1] - padding[1] + dilation[1] * (kernel[1] - 1)
    return top, left, bottom, right


class ConvExplorer(VizgradWidget):
    """Feature maps, kernels and gradient maps of every ``Conv2d`` in ``model`` for one input;
    click a unit for its receptive field and its multiply-accumulate.

    Args:
        model: a :class:`vizgrad.nn.Module` with at least one ``Conv2d`` (run in its
            current mode; call ``model.eval()`` first for BatchNorm's running statistics).
        input: one image, a floating-point Tensor of shape ``(1, C, H, W)`` or ``(C, H, W)``.
        max_channels: feature maps shown per layer, at most (an int >= 1).
        kwargs: traits (``layout``, ...).

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it (``ConvExplorerError``,
    a ``ValueError``, for a model or an input it cannot show), before any comm opens.

    Synced traits: ``image`` (the input: ``channels``, ``height``, ``width``, ``data`` float32);
    ``layers`` (one dict per Conv2d: ``name``, ``in_channels``, ``out_channels``, ``groups``, ``kernel``,
    ``stride``, ``padding``, ``dilation``, ``input_shape``, ``output_shape``, ``shown``,
    ``maps``, ``kernels``, ``grads`` as float32 buffers, ``bias``); ``scores``;
    ``target`` (the class whose score :meth:`backward` differentiated, or None);
    ``selection`` (see :meth:`select`).
    """

    _bundle = "conv-explorer-widget"

    image = traitlets.Dict().tag(sync=True)
    layers = traitlets.List().tag(sync=True)
    scores = traitlets.List().tag(sync=True)
    target = traitlets.Any(None).tag(sync=True)
    selection = traitlets.Dict().tag(sync=True)

    def __init__(self, model, input=None, max_channels=16, **kwargs):
        if not isinstance(model, nn.Module):
            raise ArgumentTypeError(f"ConvExplorer: model must be a vizgrad.nn.Module with a Conv2d layer, "
                                    f"got {describe(model)}")
        if not any(isinstance(module, nn.Conv2d) for module in model.modules()):
            raise ConvExplorerError(f"ConvExplorer: {type(model).__name__} has no Conv2d layer to explore")
        input = _check_image("ConvExplorer", input)
        self.max_channels = check_count("ConvExplorer", "max_channels", max_channels)
        check_widget_options("ConvExplorer", type(self), kwargs)
        self.model = model
        super().__init__(**kwargs)
        try:
            self.update(input)
        except BaseException:           # the model failed on the input: close the comm just opened
            self.close()
            raise
        self.on_msg(self._on_message)

    # --- Python API ---------------------------------------------------------------------
    def update(self, input=None):
        """Run the model on ``input`` (default: the current one) and redraw; gradients are cleared.
        An input the model cannot run on is refused and the explorer keeps what it showed."""
        image = self._input if input is None else _check_image("ConvExplorer.update", input).detach().clone()
        image.requires_grad_()
        captured = []
        hooks = [module.register_forward_hook(self._capture(name, captured))
                 for name, module in self.model.named_modules() if isinstance(module, SPATIAL)]
        try:
            output = self.model(image)
        except VizgradError as error:         # in a layer's words ("conv2d: ..."): say which call it was
            raise type(error)(f"ConvExplorer: {type(self.model).__name__} cannot run on the input of shape "
                              f"{tuple(image.shape)}: {error}") from error
        finally:
            for hook in hooks:
                hook.remove()
        if not isinstance(output, Tensor):
            raise ConvExplorerError(f"ConvExplorer: the model must return a Tensor of class scores, "
                                    f"got {describe(output)}")
        if not any(entry["kind"] == "conv" for entry in captured):
            raise ConvExplorerError(f"ConvExplorer: {type(self.model).__name__}'s forward ran no Conv2d on the input")
        self._input = image                    # a refused input leaves the explorer as it was
        self._captured = captured
        self._output = output
        self._grads = {}
        self._input_grad = None
        self.target = None
        self._push()
        if self.selection:
            previous = self.selection
            self.select(previous["layer"], previous["channel"], previous["i"], previous["j"])

    def backward(self, target=None):
        """The gradient of one class score (default: the predicted class's) with respect to
        every Conv2d's output and the input; no parameter's ``.grad`` is touched. Returns the class."""
        scores = self._output.reshape(-1)
        if target is None:
            target = int(np.argmax(_numpy(scores)))
        target = as_int("ConvExplorer.backward", "target", target)
        if not 0 <= target < scores.shape[0]:
            raise ConvExplorerError(f"ConvExplorer.backward: target must be a class in 0..{scores.shape[0] - 1}, "
                                    f"got {target}")
        convs = [entry for entry in self._captured if entry["kind"] == "conv"]
        grads = autograd.grad(scores[target], [self._input] + [entry["output"] for entry in convs], allow_unused=True,
                              retain_graph=True)
        self._input_grad = grads[0]
        self._grads = {entry["name"]: grad for entry, grad in zip(convs, grads[1:]) if grad is not None}
        self.target = target
        self._push()
        if self.selection:
            previous = self.selection
            self.select(previous["layer"], previous["channel"], previous["i"], previous["j"])
        return target

    def select(self, layer, channel, i, j):
        """Show unit ``(channel, i, j)`` of Conv2d number ``layer``: its receptive field on the
        input and its multiply-accumulate. Sets and returns :attr:`selection`: ``layer``,
        ``channel``, ``i``, ``j``, ``field`` (top, left, bottom, right on the input, clipped),
        ``window`` (the rows and columns read from the layer's own input), ``previous_window``
        (top, left, bottom, right on the previous Conv2d's maps, clipped, through any pooling
        between; None for the first), ``bias``, ``channels`` (per input channel the unit reads,
        all of them or its group's with ``groups`` > 1: ``channel``, ``partial`` sum and ``terms``
        [a, b, x, w, x·w], x = 0 in the padding), ``total`` (bias + Σ, in float64), ``recorded`` (the layer's
        output there) and ``grad`` (∂score/∂y there, after :meth:`backward`)."""
        layer, channel, i, j = (as_int("ConvExplorer.select", name, value)
                                for name, value in (("layer", layer), ("channel", channel), ("i", i), ("j", j)))
        convs = [entry for entry in self._captured if entry["kind"] == "conv"]
        if not 0 <= layer < len(convs):
            raise ConvExplorerError(f"ConvExplorer.select: layer must be in 0..{len(convs) - 1}, got {layer}")
        entry = convs[layer]
        module = entry["module"]
        output = _numpy(entry["output"])[0]
        if not (0 <= channel < output.shape[0] and 0 <= i < output.shape[1] and 0 <= j < output.shape[2]):
            raise ConvExplorerError(f"ConvExplorer.select: unit ({channel}, {i}, {j}) is outside layer {layer}'s "
                                    f"output of shape {tuple(output.shape)}")
        x = _numpy(entry["input"])[0]
        weight = _numpy(module.weight)[channel]                 # (in_channels / groups, kh, kw)
        first_input = (channel // (module.out_channels // module.groups)) * weight.shape[0]
        bias = float(_numpy(module.bias)[channel]) if module.bias is not None else 0.0
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = entry["geometry"]
        top, left = i * sh - ph, j * sw - pw
        channels = []
        total = bias
        for slice_index in range(weight.shape[0]):             # the input channels of this unit's group
            k = first_input + slice_index
            terms = []
            partial = 0.0
            for a in range(kh):
                for b in range(kw):
                    row, column = top + a * dh, left + b * dw
                    inside = 0 <= row < x.shape[1] and 0 <= column < x.shape[2]
                    value = float(x[k, row, column]) if inside else 0.0
                    product = value * float(weight[slice_index, a, b])
                    partial += product
                    terms.append([a, b, value, float(weight[slice_index, a, b]), product])
            channels.append({"channel": k, "partial": partial, "terms": terms})
            total += partial
        field = receptive_field([item["geometry"] for item in self._captured[:entry["index"] + 1]], i, j)
        height, width = self.image["height"], self.image["width"]
        grad = self._grads.get(entry["name"])
        previous_window = None
        if layer > 0:       # the rows and columns of the previous Conv2d's maps this unit depends on
            before = convs[layer - 1]
            _, previous_height, previous_width = _numpy(before["output"]).shape[1:]
            rows_columns = receptive_field([item["geometry"] for item in
                                            self._captured[before["index"] + 1:entry["index"] + 1]], i, j)
            previous_window = [max(0, rows_columns[0]), max(0, rows_columns[1]),
                               min(previous_height - 1, rows_columns[2]), min(previous_width - 1, rows_columns[3])]
        self.selection = {
            "layer": layer, "channel": channel, "i": i, "j": j,
            "field": [max(0, field[0]), max(0, field[1]), min(height - 1, field[2]), min(width - 1, field[3])],
            "window": [top, left, top + dh * (kh - 1), left + dw * (kw - 1)],
            "previous_window": previous_window,
            "bias": bias, "channels": channels, "total": total, "recorded": float(output[channel, i, j]),
            "grad": None if grad is None else float(_numpy(grad)[0, channel, i, j]),
        }
        return self.selection

    @property
    def feature_maps(self):
        """``{layer name: (out_channels, H, W) float64 array}`` of the last forward pass."""
        return {entry["name"]: _numpy(entry["output"])[0] for entry in self._captured if entry["kind"] == "conv"}

    @property
    def gradient_maps(self):
        """``{layer name: (out_channels, H, W)}``: ∂score/∂map after :meth:`backward` (empty before)."""
        return {name: _numpy(grad)[0] for name, grad in self._grads.items()}

    # --- internals ---------------------------------------------------------------------------
    def _capture(self, name, captured):
        def hook(module, args, output):
            if isinstance(module, nn.Conv2d):
                geometry = (_pair(module.kernel_size), _pair(module.stride), _pair(module.padding),
                            _pair(module.dilation))
                kind = "conv"
            else:
                kernel = _pair(module.kernel_size)
                stride = _pair(module.stride if module.stride is not None else module.kernel_size)
                geometry = (kernel, stride, _pair(module.padding), _pair(getattr(module, "dilation", 1)))
                kind = "pool"
            captured.append({"name": name or type(module).__name__, "kind": kind, "module": module,
                             "input": args[0], "output": output, "geometry": geometry, "index": len(captured)})
        return hook

    def _push(self):
        image = _numpy(self._input)[0]
        layers = []
        for entry in self._captured:
            if entry["kind"] != "conv":
                continue
            module = entry["module"]
            maps = _numpy(entry["output"])[0]
            shown = min(self.max_channels, maps.shape[0])
            kernels = _numpy(module.weight)[:shown]
            grad = self._grads.get(entry["name"])
            kernel, stride, padding, dilation = entry["geometry"]
            layers.append({
                "name": entry["name"], "in_channels": module.in_channels, "out_channels": module.out_channels,
                "groups": module.groups,
                "kernel": list(kernel), "stride": list(stride), "padding": list(padding), "dilation": list(dilation),
                "input_shape": list(_numpy(entry["input"]).shape[1:]), "output_shape": list(maps.shape),
                "shown": shown, "maps": float32_bytes(maps[:shown]), "kernels": float32_bytes(kernels),
                "bias": (_numpy(module.bias)[:shown].tolist() if module.bias is not None else [0.0] * shown),
                "grads": None if grad is None else float32_bytes(_numpy(grad)[0][:shown]),
            })
        with no_grad():
            scores = _numpy(self._output).reshape(-1).tolist()
        with self.hold_sync():
            self.image = {"channels": image.shape[0], "height": image.shape[1], "width": image.shape[2],
                          "data": float32_bytes(image),
                          "grad": None if self._input_grad is None else float32_bytes(_numpy(self._input_grad)[0])}
            self.layers = layers
            self.scores = scores

    def _on_message(self, _widget, content, _buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        try:
            if kind == "select":
                self.select(content["layer"], content["channel"], content["i"], content["j"])
            elif kind == "backward":
                self.backward(content.get("target"))
        except (KeyError, VizgradError) as error:
            self.send({"type": "error", "message": str(error)})

    # --- static picture ---------------------------------------------------------------------
    def _fallback_text(self):
        parts = [f"{layer['name']}: {layer['in_channels']}→{layer['out_channels']} channels, "
                 f"{layer['kernel'][0]}×{layer['kernel'][1]} kernels, output {tuple(layer['output_shape'])}"
                 for layer in self.layers]
        return "<ConvExplorer: " + "; ".join(parts) + ">"

    def _fallback_svg(self):
        return explorer_svg(self)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


PICTURE_CHANNELS = 8      # the static picture's maps per layer, at most
MAP_SIZE = 96             # ... and the largest side of a map, in pixels


def _map_row(left, top, maps, label, hover, pixels_of):
    """A labelled row of maps (each ``pixels_of(map)``, hover ``hover(k, map)``), each drawn at
    most :data:`MAP_SIZE` pixels a side (larger maps every n-th row and column); returns
    ``(fragment, width, height)``."""
    stride = max(1, -(-max(maps[0].shape) // MAP_SIZE))
    height, width = maps[0][::stride, ::stride].shape
    scale = max(1, min(8, MAP_SIZE // max(height, width)))
    parts = [pictures.text(left, top + 12, label, pictures.SMALL, fill=pictures.MUTED)]
    x = left
    for k, array in enumerate(maps):
        parts.append(pictures.image(x, top + 18, width * scale, height * scale, pixels_of(array[::stride, ::stride]),
                                    hover(k, array), extra="class='map'")
                     + f"<rect x='{x}' y='{top + 18}' width='{width * scale}' height='{height * scale}' "
                       f"fill='none' stroke='{pictures.AXIS}'/>")
        x += width * scale + 8
    return "".join(parts), max(x - left, 6.2 * len(label)), 18 + height * scale + 8


def _range_text(array):
    return f"min {pictures.number(float(array.min()))}, max {pictures.number(float(array.max()))}"


def explorer_svg(explorer):
    """The explorer as one static SVG: the input image (grey, a few channels), then per Conv2d
    its first feature maps (diverging: orange negative, blue positive) and, after
    :meth:`ConvExplorer.backward`, the gradient of the class score with respect to them."""
    image = _numpy(explorer._input)[0]
    scores = explorer.scores
    predicted = int(np.argmax(scores))
    heading = (f"ConvExplorer: input {'×'.join(map(str, image.shape))}, predicted class {predicted} "
               f"(score {scores[predicted]:.3g})")
    target = explorer.target
    parts = [pictures.heading(10, 20, heading),
             pictures.text(10, 40, f"gradients of class {target}'s score after backward()" if target is not None
                           else "no gradients yet: call explorer.backward() (or press Backward) to see them",
                           pictures.SMALL, fill=pictures.MUTED)]
    top, width = 50, 0
    channels = list(image[:3])
    rows = [(channels, f"input: {'channels 0-' + str(len(channels) - 1) if len(channels) > 1 else 'the image'} "
                       "(grey: dark is large)",
             lambda k, array: f"input channel {k}: {_range_text(array)}", pictures.grey_pixels)]
    if explorer._input_grad is not None:
        grads = list(_numpy(explorer._input_grad)[0][:3])
        rows.append((grads, f"∂score/∂input (class {target})",
                     lambda k, array: f"∂score/∂input channel {k}: {_range_text(array)}",
                     pictures.diverging_pixels))
    for entry in (item for item in explorer._captured if item["kind"] == "conv"):
        module, name = entry["module"], entry["name"]
        maps = _numpy(entry["output"])[0]
        shown = min(PICTURE_CHANNELS, explorer.max_channels, maps.shape[0])
        (kh, kw), stride = entry["geometry"][0], entry["geometry"][1]
        rows.append((list(maps[:shown]), f"{name}: Conv2d {module.in_channels}→{module.out_channels}, {kh}×{kw} "
                                         f"kernels, stride {stride[0]}; feature maps of channels 0-{shown - 1} of "
                                         f"{maps.shape[0]}, each {maps.shape[1]}×{maps.shape[2]}",
                     lambda k, array, name=name: f"{name} channel {k}: {_range_text(array)}",
                     pictures.diverging_pixels))
        grad = explorer._grads.get(name)
        if grad is not None:
            rows.append((list(_numpy(grad)[0][:shown]), f"{name}: ∂score/∂map (class {target})",
                         lambda k, array, name=name: f"∂score/∂{name} channel {k}: {_range_text(array)}",
                         pictures.diverging_pixels))
    for maps, label, hover, pixels_of in rows:
        fragment, used_width, used_height = _map_row(10, top, maps, label, hover, pixels_of)
        parts.append(fragment)
        width = max(width, used_width)
        top += used_height
    return pictures.document(max(width + 20, 8.2 * len(heading) + 20), top + 4, "".join(parts), heading)


__all__ = ["ConvExplorer", "ConvExplorerError", "receptive_field"]
