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

from ..tensor import Tensor
from .base import VizgradWidget, float32_bytes

CELL = 12                 # static picture: pixels per cell
LABEL = 14                # room for the row and column labels
GAP = 18                  # between heads


def token_label(token):
    """How a token shows as an axis label: visible marks for space, newline and tab."""
    text = str(token)
    return {" ": "␣", "\n": "↵", "\t": "⇥", "": "∅"}.get(text, text)


def as_weights(weights, sample=0):
    """``weights`` as a float64 array of shape (heads, queries, keys).

    Accepts (T, S) for one head, (heads, T, S), or (batch, heads, T, S), of which the
    batch item ``sample`` is shown.
    """
    if isinstance(weights, Tensor):
        weights = weights.detach().cpu().numpy()
    array = np.asarray(weights)
    if array.ndim == 4:               # pick the sample before converting: the batch may be large
        if not 0 <= sample < array.shape[0]:
            raise IndexError(f"AttentionView: sample={sample} is out of range for weights of shape "
                             f"{tuple(array.shape)} (batch of {array.shape[0]})")
        array = array[sample]
    array = array.astype(np.float64)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3:
        raise ValueError(f"AttentionView: weights must have shape (T, S), (heads, T, S) or (batch, heads, T, S), "
                         f"got shape {tuple(array.shape)}")
    return array


class AttentionView(VizgradWidget):
    """Attention maps: one query × key heatmap per head, click a cell to see where a query looks.

    Args:
        weights: the first weights to show (see :meth:`update`), or None.
        tokens: the sequence's tokens (characters), one per position, for the labels.
        sample: which batch item to show when weights have a batch dimension.
        max_rate: updates per second at most.
        title: a heading.

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

    def __init__(self, weights=None, tokens=None, sample=0, max_rate=10, **kwargs):
        super().__init__(**kwargs)
        self.sample = int(sample)
        self._latest = None                     # (weights, tokens, key_tokens, step) not yet sent
        self._array = np.zeros((0, 0, 0))
        self._hooks = []
        self._updates = self._coalescer(max_rate)
        self.observe(self._show_selected_head, "selected")
        if weights is not None:
            self.update(weights, tokens)
        elif tokens is not None:
            self.tokens = [str(t) for t in tokens]

    def _show_selected_head(self, change):
        head = (change["new"] or {}).get("head")
        if isinstance(head, int) and head != self.head:
            self.head = head

    # --- feeding it ---------------------------------------------------------------
    def update(self, weights, tokens=None, key_tokens=None, step=None):
        """Show ``weights`` (a tensor or array, see :func:`as_weights`); ``tokens`` label the
        queries (and the keys, unless ``key_tokens`` is given). Cheap to call every step:
        the array is copied, the message built only when the throttle lets it through."""
        array = as_weights(weights, self.sample)
        with self._updates.lock:
            self._latest = (array, tokens, key_tokens, self.step + 1 if step is None else int(step))
        self._updates.request(self._push, key="weights")

    def watch(self, module, attribute="weights"):
        """Follow ``module``'s forward passes: after each, show its attention weights.

        For :class:`vizgrad.nn.MultiheadAttention` (called with ``need_weights=True`` and
        ``average_attn_weights=False`` for one map per head) they are the second output;
        for any other module, the tensor it stored in ``module.<attribute>``. Returns the
        hook's handle; :meth:`close` removes it.
        """
        def after_forward(watched, args, output):
            weights = output[1] if isinstance(output, tuple) and len(output) == 2 else getattr(watched, attribute,
                                                                                                None)
            if weights is None:
                raise AttributeError(f"AttentionView.watch: {type(watched).__name__} returned no attention weights "
                                     f"and has no attribute {attribute!r} holding them")
            self.update(weights)

        handle = module.register_forward_hook(after_forward)
        self._hooks.append(handle)
        return handle

    def close(self):
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()
        super().close()

    # --- reading it ---------------------------------------------------------------
    @property
    def array(self):
        """The weights shown now, (heads, queries, keys) float64."""
        return self._array

    def attended(self, head=None, query=None):
        """``[(position, token, weight), ...]`` for one query of one head (the selected cell
        by default), largest weight first: where that query looks."""
        head = self.selected.get("head", 0) if head is None else head
        query = self.selected.get("query", 0) if query is None else query
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
                self.tokens = [str(t) for t in tokens][:queries]
            if key_tokens is not None:
                self.key_tokens = [str(t) for t in key_tokens][:keys]
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
        return attention_svg(self._array, self.tokens, self.key_tokens or self.tokens, self.title)


def attention_svg(array, tokens=(), key_tokens=(), title=""):
    """A static SVG of ``array`` (heads, queries, keys): one labelled heatmap per head."""
    heads, queries, keys = array.shape
    if heads == 0:
        return None
    top = LABEL + (18 if title else 0) + 14
    width = heads * (LABEL + keys * CELL) + (heads - 1) * GAP + 4
    height = top + queries * CELL + 4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="9" role="img" '
             f'aria-label="attention weights: {heads} heads, {queries} queries × {keys} keys">']
    if title:
        parts.append(f'<text x="0" y="12" font-size="12" font-family="sans-serif">{html.escape(title)}</text>')
    for head in range(heads):
        left = head * (LABEL + keys * CELL + GAP) + LABEL
        parts.append(f'<text x="{left}" y="{top - LABEL - 2}" font-family="sans-serif" font-size="10">'
                     f'head {head}</text>')
        for j in range(keys):
            label = html.escape(token_label(key_tokens[j])) if j < len(key_tokens) else str(j)
            parts.append(f'<text x="{left + j * CELL + CELL / 2}" y="{top - 3}" text-anchor="middle">{label}</text>')
        for i in range(queries):
            label = html.escape(token_label(tokens[i])) if i < len(tokens) else str(i)
            parts.append(f'<text x="{left - 3}" y="{top + i * CELL + CELL - 3}" text-anchor="end">{label}</text>')
            for j in range(keys):
                value = float(array[head, i, j])
                parts.append(f'<rect x="{left + j * CELL}" y="{top + i * CELL}" width="{CELL}" height="{CELL}" '
                             f'fill="{weight_colour(value)}"><title>head {head}, query {i}, key {j}: '
                             f'{value:.3f}</title></rect>')
        parts.append(f'<rect x="{left}" y="{top}" width="{keys * CELL}" height="{queries * CELL}" fill="none" '
                     'stroke="#c0c6cc"/>')
    parts.append("</svg>")
    return "".join(parts)


def weight_colour(value):
    """An attention weight in [0, 1] on a white-to-dark-blue scale (grey when not finite);
    the same scale as the browser's (widgets/src/widgets/attention.js)."""
    if not math.isfinite(value):
        return "rgb(160,160,160)"
    t = min(1.0, max(0.0, value))
    low, high = (255, 255, 255), (8, 48, 107)
    return "rgb({},{},{})".format(*(round(a + (b - a) * t) for a, b in zip(low, high)))
