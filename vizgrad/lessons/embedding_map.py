"""``EmbeddingMap``: the rows of an embedding table as labelled points in the plane, redrawn
in place while a model trains (lesson 10 watches characters organise themselves).

An inline SVG, like the other lesson figures: nothing beyond vizgrad and IPython's display
is needed. ``show()`` displays it with a display id; each ``update()`` replaces that output,
so in a notebook the picture moves while the training cell runs::

    picture = EmbeddingMap(C, labels=".abcdefghijklmnopqrstuvwxyz").show()
    for step in range(steps):
        ...                                   # a training step that changes C
        if step % 200 == 0:
            picture.update(C, note=f"step {step}")
"""

import html

import numpy as np

from ..errors import ShapeError
from .figures import _numpy

_COLOURS = ("#4c72b0", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


class EmbeddingMap:
    """The rows of ``weight`` (V, D), one point per row labelled ``labels[row]``.

    D = 2 is drawn as it is; for D > 2 the points are projected on their first two principal
    components, with each axis's sign kept from one update to the next so the picture does
    not flip. ``groups`` maps a label to a group number (colour; group 0 is the default), e.g.
    vowels in group 1.
    """

    def __init__(self, weight, labels, groups=None, title="embedding", note=None, size=360):
        self.labels = [str(label) for label in labels]
        self.groups = dict(groups or {})
        self.title, self.size = title, size
        self.points, self.note, self.updates = None, None, 0
        self._axes = None
        self._handle = None
        self.update(weight, note=note)

    def update(self, weight, note=None):
        """Take a new snapshot of ``weight`` (and a ``note`` under the title); redraw the
        displayed picture, if :meth:`show` displayed it."""
        table = _numpy(weight).astype(np.float64)
        if table.ndim != 2 or table.shape[0] != len(self.labels):
            raise ShapeError(f"EmbeddingMap.update: weight must have shape ({len(self.labels)}, D), one row per "
                             f"label; got {tuple(table.shape)}")
        self.points = self._project(table)
        self.note = note
        self.updates += 1
        if self._handle is not None:
            self._handle.update(self)
        return self

    def show(self):
        """Display the picture with a display id, so that :meth:`update` redraws it in place."""
        from IPython.display import display
        self._handle = display(self, display_id=True)
        return self

    def _project(self, table):
        if table.shape[1] <= 2:
            return np.pad(table, ((0, 0), (0, 2 - table.shape[1])))
        centred = table - table.mean(axis=0)
        axes = np.linalg.svd(centred, full_matrices=False)[2][:2]
        if self._axes is not None:
            axes *= np.where(np.sum(axes * self._axes, axis=1, keepdims=True) < 0, -1.0, 1.0)
        self._axes = axes
        return centred @ axes.T

    def _repr_svg_(self):
        s, pad = self.size, 18
        top = 34 if self.note else 22
        low, high = self.points.min(axis=0), self.points.max(axis=0)
        centre, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-9)

        def position(point):
            x = pad + (s - 2 * pad) * (0.5 + (point[0] - centre[0]) / (2 * half))
            y = top + (s - top - pad) * (0.5 - (point[1] - centre[1]) / (2 * half))
            return x, y
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{s}" height="{s}" viewBox="0 0 {s} {s}" '
                 'font-family="sans-serif" class="vizgrad-embedding-map">',
                 f'<rect width="{s}" height="{s}" fill="white" stroke="#999"/>',
                 f'<text x="8" y="15" font-size="12" font-weight="bold">{html.escape(self.title)}</text>']
        if self.note:
            parts.append(f'<text x="8" y="29" font-size="11" fill="#555">{html.escape(self.note)}</text>')
        for label, point in zip(self.labels, self.points):
            x, y = position(point)
            colour = _COLOURS[self.groups.get(label, 0) % len(_COLOURS)]
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="{colour}" fill-opacity="0.18" '
                         f'stroke="{colour}"/><text x="{x:.1f}" y="{y + 4:.1f}" font-size="12" '
                         f'text-anchor="middle" fill="{colour}">{html.escape(label)}</text>')
        parts.append("</svg>")
        return "".join(parts)

    def __repr__(self):
        spread = float(np.linalg.norm(self.points - self.points.mean(axis=0), axis=1).mean())
        return (f"<EmbeddingMap: {len(self.labels)} points, update {self.updates}"
                f"{', ' + self.note if self.note else ''}, mean distance from the centre {spread:.3g}>")
