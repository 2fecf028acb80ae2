"""What the tutor answers: a :class:`Report` that prints as plain text and draws itself in a
notebook (the graph with the faulty node in red, then the wrong gradient element by element
beside the right one, with both shapes)."""

import html
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .diagnose import Finding
from .numeric import ATOL, RTOL, preview

_RED, _GREEN = "#c62828", "#2e7d32"
_CELLS = (6, 8)       # the most rows and columns of a gradient drawn element by element


@dataclass
class Row:
    """One checked gradient: ``status`` is ``"exact"``, ``"approximate"`` or ``"wrong"``;
    ``finding`` says what is wrong (None when right)."""

    name: str
    got: Any
    expected: Any
    status: str
    max_difference: Optional[float] = None
    finding: Optional[Finding] = None
    node_id: Optional[str] = None

    @property
    def ok(self):
        return self.status != "wrong"


def row(name, got, expected, finding, node_id=None):
    """A :class:`Row` for ``got`` against ``expected`` (arrays) with its ``finding``."""
    got_array, want = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    same = got_array.shape == want.shape
    difference = float(np.max(np.abs(got_array - want))) if same and want.size else None
    if finding is not None:
        status = "wrong"
    else:
        status = "exact" if same and bool(np.array_equal(got_array, want)) else "approximate"
    return Row(name, got_array, want, status, difference, finding, node_id)


class Report:
    """The tutor's answer: ``ok``, ``first_wrong`` (the name of the first wrong gradient in
    backward order, None when all are right), ``kind`` (a code from
    :data:`vizgrad.tutor.KINDS`, None when right), ``message`` and ``hint``; ``rows`` has one
    :class:`Row` per gradient checked, in backward order; ``graph`` is the graph drawn (its
    node of the first wrong gradient is ``highlight``). ``passed`` is the message when all
    are right.

    ``print(report)`` gives plain text; in a notebook the report draws the graph with that
    node in red and the gradient element by element, yours beside the right one."""

    def __init__(self, title, rows, passed, graph=None, heading="Each gradient, in backward order:"):
        self.title, self.rows, self.graph, self.heading = title, list(rows), graph, heading
        wrong = next((r for r in self.rows if not r.ok), None)
        self.first = wrong
        self.ok = wrong is None
        self.first_wrong = wrong.name if wrong else None
        self.kind = wrong.finding.kind if wrong else None
        self.hint = wrong.finding.hint if wrong else None
        self.highlight = wrong.node_id if wrong else None
        if wrong:
            self.message = wrong.finding.message
            later = [r.name for r in self.rows[self.rows.index(wrong) + 1:] if not r.ok]
            if later:
                shown = ", ".join(f"`{n}`" for n in later[:3])
                shown += f" and {len(later) - 3} more" if len(later) > 3 else ""
                self.message += (f" ({shown} {'is' if len(later) == 1 else 'are'} wrong too, further down the "
                                 "backward pass: fix this one first, they may follow.)")
        else:
            self.message = passed

    def __bool__(self):
        return self.ok

    # --- text --------------------------------------------------------------------
    def table(self):
        """One line per gradient, as makemore's ``cmp`` prints: exact, approximate, max difference."""
        width = max([len(r.name) for r in self.rows] + [4])
        lines = []
        for r in self.rows:
            difference = "" if r.max_difference is None else f" | max difference {r.max_difference:.2e}"
            verdict = r.status if r.ok else f"WRONG ({r.finding.kind})"
            lines.append(f"  {r.name:<{width}} {_shape(r.expected)} {verdict}{difference}")
        return "\n".join(lines)

    def __str__(self):
        mark = "ok" if self.ok else "wrong"
        lines = [f"{self.title}: {mark}", _plain(self.message)]
        if self.hint:
            lines.append("Hint: " + _plain(self.hint))
        lines += ["", self.heading, self.table()]
        if self.first is not None and self.first.got.size:
            got, want = self.first.got, self.first.expected
            lines += ["", f"`{self.first.name}` element by element:",
                      f"  yours    {_shape(got)}: {preview(got)}", f"  expected {_shape(want)}: {preview(want)}"]
        if self.graph is not None and self.highlight is not None:
            lines += ["", "The graph (the first wrong gradient marked):", self._figure().text()]
        return "\n".join(_plain(line) for line in lines)

    __repr__ = __str__

    # --- notebook ------------------------------------------------------------------
    def _figure(self):
        from ..lessons.figures import GraphFigure     # (here: vizgrad.lessons imports the tutor)
        return GraphFigure(self.graph, [self.highlight] if self.highlight else [], note=self.kind)

    def _repr_html_(self):
        from ..lessons.framework import inline_markup
        parts = [panel(self.ok, f'{html.escape(self.title)}: {"ok" if self.ok else "wrong"}'),
                 f"<div>{inline_markup(self.message)}</div>"]
        if self.hint:
            parts.append(f"<div><b>Hint:</b> {inline_markup(self.hint)}</div>")
        parts.append(_rows_html(self.rows))
        if self.first is not None and self.first.got.size:
            parts.append(_elementwise_html(self.first))
        if self.graph is not None and self.highlight is not None:
            parts.append(f'<div style="margin-top:6px">{self._figure()._repr_html_()}</div>')
        parts.append("</div>")
        return "".join(parts)


def panel(ok, title_html, kind="vizgrad-tutor-report"):
    """The opening of the tutor's box in a notebook (green when ``ok``, red otherwise) and its
    title; the caller closes the ``div``."""
    colour = _GREEN if ok else _RED
    return (f'<div class="vizgrad-tutor {kind}" style="border-left:5px solid {colour};padding:8px 12px;'
            'font-family:system-ui,sans-serif;line-height:1.45;color:#212121;background:#fafafa">'
            f'<div style="font-weight:600;color:{colour}">{title_html}</div>')


def _shape(array):
    shape = tuple(np.shape(array))
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _plain(text):
    return str(text).replace("`", "")


def _rows_html(rows):
    cells = []
    for r in rows:
        verdict = r.status if r.ok else f"wrong: {r.finding.kind}"
        colour = _GREEN if r.ok else _RED
        difference = "" if r.max_difference is None else f"{r.max_difference:.2e}"
        cells.append(f'<tr><td><code>{html.escape(r.name)}</code></td><td>{_shape(r.expected)}</td>'
                     f'<td style="color:{colour}">{html.escape(verdict)}</td><td>{difference}</td></tr>')
    return ('<table style="border-collapse:collapse;margin:6px 0;font-size:12px"><tr><th align="left">tensor</th>'
            '<th align="left">shape</th><th align="left">gradient</th><th align="left">max difference</th></tr>'
            + "".join(cells) + "</table>")


def _grid(array):
    """At most :data:`_CELLS` of a 0-d, 1-d or n-d array as a 2-d grid (the first matrix of a batch)."""
    array = np.asarray(array, dtype=np.float64)
    while array.ndim > 2:
        array = array[0]
    array = array.reshape(1, -1) if array.ndim < 2 else array
    return array[:_CELLS[0], :_CELLS[1]]


def _elementwise_html(wrong):
    got, want = wrong.got, wrong.expected
    same = got.shape == want.shape
    bad = ~np.isclose(got, want, rtol=RTOL, atol=ATOL) if same else None

    def table(array, title, marks):
        grid = _grid(array)
        marks = _grid(marks) if marks is not None else np.zeros(grid.shape, dtype=bool)
        body = "".join("<tr>" + "".join(
            f'<td style="padding:1px 5px;text-align:right;{"color:" + _RED + ";font-weight:600" if m else ""}">'
            f"{v:.4g}</td>" for v, m in zip(values, flags)) + "</tr>" for values, flags in zip(grid, marks))
        return (f'<div style="display:inline-block;vertical-align:top;margin-right:18px"><div><b>{title}</b> '
                f'{_shape(array)}</div><table style="border-collapse:collapse;font:12px monospace">{body}'
                "</table></div>")

    return (f'<div style="margin-top:6px"><div>d<code>{html.escape(wrong.name)}</code> element by element '
            "(wrong elements in red):</div>" + table(got, "yours", bad) + table(want, "expected", bad) + "</div>")
