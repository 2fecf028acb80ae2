"""``AttentionView``: attention weights as heads × query × key heatmaps, live during training.

Each head is one heatmap: row ``i`` is query position ``i``, column ``j`` key position
``j``, the colour the weight ``softmax(q·k / √d)[i, j]`` (0 white, 1 dark). Rows and
columns are labelled with the sequence's characters. Clicking a cell selects that head
and query: the view then shows the sequence with each character shaded by how much the
query attends to it, and the ``selected`` trait (``{"head", "query", "key"}``) tells
Python what was clicked.

Weights arrive with :meth:`AttentionView.update` (call it in a training loop: updates
reach the browser at most ``max_rate`` times per second, built from the latest weights
only when sent) or by :meth:`AttentionView.watch`, which follows a module's forward
passes. They travel as one float32 buffer. Without a widget front end the view shows a
static SVG of the same heatmaps.

Example::

    view = AttentionView(tokens=list("the cat"))
    view.update(weights)              # (heads, T, T), (T, T) or (batch, heads, T, T)
    view.watch(model.blocks[0].attn)  # or: follow a module's forward passes
"""

import html
import math

import numpy as np
import traitlets

from ..errors import ArgumentError, ArgumentTypeError, IndexingError, ShapeError, VizgradError, as_int
from ..tensor import Tensor
from . import pictures
from .base import VizgradWidget, float32_bytes
from .checks import check_count, check_module, check_rate, check_widget_options, describe

CELL_MAX = 18             # static picture: pixels per cell, at most
GAP = 18                  # between heads
RECT_CELLS = 1200         # up to this many cells in all, each is a <rect> with its weight as hover text
_WHITE, _DARK = (255, 255, 255), (8, 48, 107)


def token_label(token):
    """How a token shows as an axis label: visible marks for space, newline and tab."""
    text = str(token)
    return {" ": "␣", "\n": "↵", "\t": "⇥", "": "∅"}.get(text, text)


class AttentionWeightsMissing(VizgradError, AttributeError):
    """A module :meth:`AttentionView.watch` follows returned no attention weights and holds none."""


def as_weights(weights, sample=0, op="as_weights"):
    """``weights`` as a float64 array of shape (heads, queries, keys).

    Accepts a Tensor or an array of real numbers: (T, S) for one head, (heads, T, S), or
    (batch, heads, T, S), of which the batch item ``sample`` is shown. Attention weights are
    softmax outputs: a negative one (raw scores passed by mistake) is refused, as are empty maps.
    """
    if isinstance(weights, Tensor):
        weights = weights.detach().cpu().numpy()
    if isinstance(weights, (str, bytes, dict)) or weights is None:
        raise ArgumentTypeError(f"{op}: weights must be a Tensor or an array of attention weights, "
                                f"got {describe(weights)}")
    try:
        array = np.asarray(weights)
    except ValueError:                # ragged nested lists
        raise ArgumentTypeError(f"{op}: weights must be a Tensor or an array of attention weights, "
                                f"got {describe(weights)}") from None
    if array.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"{op}: weights must hold real numbers, got an array of {array.dtype}")
    if array.ndim == 4:               # pick the sample before converting: the batch may be large
        if not 0 <= sample < array.shape[0]:
            raise IndexingError(f"{op}: sample={sample} is out of range for weights of shape "
                                f"{tuple(array.shape)} (batch of {array.shape[0]})")
        array = array[sample]
    array = array.astype(np.float64)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or 0 in array.shape:
        raise ShapeError(f"{op}: weights must have shape (T, S), (heads, T, S) or (batch, heads, T, S), "
                         f"none of them 0, got shape {tuple(array.shape)}")
    with np.errstate(invalid="ignore"):
        lowest = np.nanmin(array) if not np.isnan(array).all() else 0.0
    if lowest < 0:
        raise ArgumentError(f"{op}: weights must be attention weights (softmax outputs, >= 0), got a minimum of "
                            f"{lowest:.4g}: pass softmax(scores), not the scores")
    return array


def _labels(op, name, tokens, count, hint=""):
    """``tokens`` (None, a string of characters or a sequence of tokens) as ``count`` strings."""
    if tokens is None:
        return None
    if isinstance(tokens, dict) or not hasattr(tokens, "__iter__"):
        raise ArgumentTypeError(f"{op}: {name} must be a sequence of tokens (or a str of characters), "
                                f"got {describe(tokens)}")
    labels = [str(token) for token in tokens]
    if count is not None and len(labels) != count:
        raise ShapeError(f"{op}: {name} has {len(labels)} tokens for weights of {count} positions{hint}")
    return labels


def _hint(queries, keys, key_tokens):
    """What a tokens-count error adds when the queries and keys differ and tokens label both."""
    if key_tokens is None and queries != keys:
        return f" ({queries} queries, {keys} keys: tokens label both; give key_tokens for the keys)"
    return ""


class AttentionView(VizgradWidget):
    """Attention maps: one query × key heatmap per head, click a cell to see where a query looks.

    Args:
        weights: the first weights to show (see :meth:`update`), or None.
        tokens: the sequence's tokens (a str is its characters), one per position, for the labels
            (see :meth:`update`); ``key_tokens``: the keys' tokens, when they differ.
        sample: which batch item to show when weights have a batch dimension (an int >= 0).
        max_rate: updates per second at most (> 0).
        title: a heading; other traits as keywords.

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it, before any comm opens.

    Synced traits: ``weights`` (float32 bytes, row-major heads × queries × keys),
    ``shape`` ([heads, queries, keys]), ``tokens`` (query labels; ``key_tokens`` when the
    keys differ), ``step``, ``title``, ``head`` (the head drawn large; the others show as
    thumbnails on tabs), and ``selected`` ({"head", "query", "key"}, set by a click in the
    browser, or from Python to point at a cell: its head is then shown).
    """

    _bundle = "attention-widget"

    weights = traitlets.Bytes(b"").tag(sync=True)
    shape = traitlets.List(traitlets.Int(), [0, 0, 0]).tag(sync=True)
    tokens = traitlets.List(traitlets.Unicode(), []).tag(sync=True)
    key_tokens = traitlets.List(traitlets.Unicode(), []).tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Dict({}).tag(sync=True)
    head = traitlets.Int(0).tag(sync=True)

    def __init__(self, weights=None, tokens=None, sample=0, max_rate=10, key_tokens=None, **kwargs):
        sample = check_count("AttentionView", "sample", sample, minimum=0)
        max_rate = check_rate("AttentionView", "max_rate", max_rate)
        check_widget_options("AttentionView", type(self), kwargs)
        array = None if weights is None else as_weights(weights, sample, "AttentionView")
        _, queries, keys = (None, None, None) if array is None else array.shape
        key_tokens = _labels("AttentionView", "key_tokens", key_tokens, keys)
        tokens = _labels("AttentionView", "tokens", tokens, None if array is None else
                         max(queries, keys) if key_tokens is None else queries, _hint(queries, keys, key_tokens))
        super().__init__(**kwargs)
        self.sample = sample
        self._latest = None                     # (weights, tokens, key_tokens, step) not yet sent
        self._array = np.zeros((0, 0, 0))
        self._hooks = []
        self._updates = self._coalescer(max_rate)
        self.observe(self._show_selected_head, "selected")
        if array is not None:
            self._show(array, tokens, key_tokens, 1)
        else:
            self.tokens, self.key_tokens = tokens or [], key_tokens or []

    @traitlets.validate("head")
    def _valid_head(self, proposal):
        head = as_int("AttentionView.head", "head", proposal["value"])
        heads = self._array.shape[0] if hasattr(self, "_array") else 0
        if heads and not 0 <= head < heads:
            raise IndexingError(f"AttentionView.head: head {head} is out of range for {heads} heads")
        return head

    def _show_selected_head(self, change):
        head = (change["new"] or {}).get("head")
        if isinstance(head, int) and head != self.head:
            self.head = head

    # --- feeding it ---------------------------------------------------------------
    def update(self, weights, tokens=None, key_tokens=None, step=None):
        """Show ``weights`` (a tensor or array, see :func:`as_weights`); ``tokens`` label the
        queries (and the keys, unless ``key_tokens`` is given: then one token per query or key,
        whichever are more). Cheap to call every step: the array is copied, the message built
        only when the throttle lets it through."""
        op = "AttentionView.update"
        array = as_weights(weights, self.sample, op)
        _, queries, keys = array.shape
        key_tokens = _labels(op, "key_tokens", key_tokens, keys)
        tokens = _labels(op, "tokens", tokens, max(queries, keys) if key_tokens is None else queries,
                         _hint(queries, keys, key_tokens))
        step = self.step + 1 if step is None else check_count(op, "step", step, minimum=0)
        self._show(array, tokens, key_tokens, step)

    def _show(self, array, tokens, key_tokens, step):
        with self._updates.lock:
            self._latest = (array, tokens, key_tokens, step)
        self._updates.request(self._push, key="weights")

    def watch(self, module, attribute="weights"):
        """Follow ``module``'s forward passes: after each, show its attention weights.

        For :class:`vizgrad.nn.MultiheadAttention` (called with ``need_weights=True`` and
        ``average_attn_weights=False`` for one map per head) they are the second output;
        for any other module, the tensor it stored in ``module.<attribute>``. Returns the
        hook's handle; :meth:`close` removes it.
        """
        check_module("AttentionView.watch", "module", module)
        if not isinstance(attribute, str) or not attribute.isidentifier():
            raise ArgumentTypeError(f"AttentionView.watch: attribute must be an attribute name, "
                                    f"got {describe(attribute)}")

        def after_forward(watched, args, output):
            weights = output[1] if isinstance(output, tuple) and len(output) == 2 else getattr(watched, attribute,
                                                                                                None)
            if weights is None:
                raise AttentionWeightsMissing(f"AttentionView.watch: {type(watched).__name__} returned no attention "
                                              f"weights and has no attribute {attribute!r} holding them")
            self.update(weights)

        handle = module.register_forward_hook(after_forward)
        self._hooks.append(handle)
        return handle

    def close(self):
        hooks = getattr(self, "_hooks", [])       # none on a widget whose constructor failed
        for handle in hooks:
            handle.remove()
        hooks.clear()
        super().close()

    # --- reading it ---------------------------------------------------------------
    @property
    def array(self):
        """The weights shown now, (heads, queries, keys) float64."""
        return self._array

    def attended(self, head=None, query=None):
        """``[(position, token, weight), ...]`` for one query of one head (the selected cell
        by default), largest weight first: where that query looks."""
        op = "AttentionView.attended"
        heads, queries, _ = self._array.shape
        if not heads:
            raise ArgumentError(f"{op}: no attention weights yet: call update(weights) or watch(module) first")
        head = self.selected.get("head", 0) if head is None else as_int(op, "head", head)
        query = self.selected.get("query", 0) if query is None else as_int(op, "query", query)
        for name, value, count in (("head", head, heads), ("query", query, queries)):
            if not 0 <= value < count:
                raise IndexingError(f"{op}: {name} {value} is out of range for {count} {name}s")
        row = self._array[head, query]
        keys = self.key_tokens or self.tokens
        order = np.argsort(-row, kind="stable")
        return [(int(j), keys[j] if j < len(keys) else str(j), float(row[j])) for j in order]

    def _push(self):
        with self._updates.lock:
            if self._latest is None:
                return
            array, tokens, key_tokens, step = self._latest
            self._latest = None
        heads, queries, keys = array.shape
        with self.hold_sync():
            self._array = array
            if tokens is not None:
                self.tokens = tokens
            if key_tokens is not None:
                self.key_tokens = key_tokens
            self.shape = [heads, queries, keys]
            self.weights = float32_bytes(array.reshape(-1))
            self.step = step

    # --- static picture -------------------------------------------------------------
    def _fallback_text(self):
        heads, queries, keys = self._array.shape
        if not heads:
            return "<AttentionView: no attention weights yet>"
        return f"<AttentionView: {heads} heads × {queries} queries × {keys} keys, step {self.step}>"

    def _fallback_svg(self):
        return attention_svg(self._array, self.tokens, self.key_tokens or self.tokens, self.title, self.step)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


def attention_svg(array, tokens=(), key_tokens=(), title="", step=None):
    """A static SVG of ``array`` (heads, queries, keys): one heatmap per head, rows the queries
    and columns the keys labelled with their tokens (thinned past what 11 px text fits), heads
    side by side, wrapping. Small maps have a ``<rect>`` per cell with its weight as hover text;
    larger ones are a PNG each, with a hover text per query row naming where it looks most.
    With no weights yet, a sentence says so."""
    heads, queries, keys = array.shape
    name = title or "attention weights"
    if heads == 0:
        body = pictures.heading(10, 20, name) + pictures.note(10, 32, 560, "no attention weights yet: call "
                                                                         "view.update(weights) or view.watch(module)")
        return pictures.document(580, 98, body, name)
    heading = f"{name}: {heads} head{'s' if heads > 1 else ''}, {queries} queries × {keys} keys" + (
        f", step {step}" if step is not None else "")
    cell = max(4, min(CELL_MAX, 300 // max(queries, keys)))
    every = max(1, math.ceil(13 / cell))                  # a label every `every` cells: 11 px text never overlaps
    query_labels = [html.escape(token_label(tokens[i])) if i < len(tokens) else str(i) for i in range(queries)]
    key_labels = [html.escape(token_label(key_tokens[j])) if j < len(key_tokens) else str(j) for j in range(keys)]
    label_w = 10 + 7 * max(len(label) for label in query_labels[::every])
    turned = max(len(token_label(key_tokens[j])) if j < len(key_tokens) else len(str(j))
                  for j in range(0, keys, every)) * 7 > cell * every - 2     # too wide to sit side by side
    key_h = 8 + 7 * max(len(label) for label in key_labels[::every]) if turned else 16
    panel_w, panel_h = label_w + keys * cell + GAP, 20 + key_h + queries * cell + GAP
    per_row = max(1, min(heads, (1180 - 20) // panel_w))
    cells_as_rects = heads * queries * keys <= RECT_CELLS
    parts = [pictures.heading(10, 20, heading),
             pictures.text(10, 38, "rows: queries, columns: keys; white 0, dark blue 1", pictures.SMALL,
                           fill=pictures.MUTED)]
    for head in range(heads):
        x0 = 10 + (head % per_row) * panel_w + label_w
        y0 = 48 + (head // per_row) * panel_h
        grid_top = y0 + 20 + key_h
        parts.append(pictures.text(x0, y0 + 14, f"head {head}", bold=True))
        for j in range(0, keys, every):
            x = x0 + j * cell + cell / 2
            turn = (f' transform="rotate(-90 {x + 4:.1f} {grid_top - 4})"' if turned
                    else ' text-anchor="middle"')
            parts.append(f'<text x="{x + 4 if turned else x:.1f}" y="{grid_top - 4}" font-size="{pictures.SMALL}" '
                         f'font-family="monospace"{turn}>{key_labels[j]}</text>')
        for i in range(0, queries, every):
            parts.append(f'<text x="{x0 - 4}" y="{grid_top + i * cell + cell / 2 + 4:.1f}" text-anchor="end" '
                         f'font-size="{pictures.SMALL}" font-family="monospace">{query_labels[i]}</text>')
        if cells_as_rects:
            for i in range(queries):
                for j in range(keys):
                    value = float(array[head, i, j])
                    parts.append(f'<rect x="{x0 + j * cell}" y="{grid_top + i * cell}" width="{cell}" height="{cell}" '
                                 f'fill="{weight_colour(value)}"><title>head {head}, query {i}, key {j}: '
                                 f'{value:.3f}</title></rect>')
        else:
            parts.append(pictures.image(x0, grid_top, keys * cell, queries * cell, weight_pixels(array[head]),
                                        extra="class='head'"))
            for i in range(queries):
                row = array[head, i]
                top_keys = ", ".join(f"{j} {key_labels[j]} ({row[j]:.2f})" for j in np.argsort(-row, kind="stable")[:3])
                parts.append(f'<rect x="{x0}" y="{grid_top + i * cell}" width="{keys * cell}" height="{cell}" '
                             f'fill-opacity="0"><title>head {head}, query {i} {query_labels[i]}: most on keys '
                             f'{top_keys}</title></rect>')
        parts.append(f'<rect x="{x0}" y="{grid_top}" width="{keys * cell}" height="{queries * cell}" fill="none" '
                     'stroke="#c0c6cc"/>')
    width = 10 + per_row * panel_w + 10
    height = 48 + math.ceil(heads / per_row) * panel_h
    return pictures.document(max(width, 8.2 * len(heading) + 20), height, "".join(parts), heading)


def weight_pixels(weights):
    """A (queries, keys) map of weights as the PNG's pixels, on :func:`weight_colour`'s scale."""
    t = np.clip(np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0), 0, 1)[..., None]
    pixels = np.rint(np.array(_WHITE) + (np.array(_DARK) - np.array(_WHITE)) * t).astype(np.uint8)
    pixels[~np.isfinite(weights)] = (160, 160, 160)
    return pixels


def weight_colour(value):
    """An attention weight in [0, 1] on a white-to-dark-blue scale (grey when not finite);
    the same scale as the browser's (widgets/src/widgets/attention.js)."""
    if not math.isfinite(value):
        return "rgb(160,160,160)"
    t = min(1.0, max(0.0, value))
    return "rgb({},{},{})".format(*(round(a + (b - a) * t) for a, b in zip(_WHITE, _DARK)))
