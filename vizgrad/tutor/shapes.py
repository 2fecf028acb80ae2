"""Shape errors explained: the failing op on the graph built so far, both shapes aligned
under the op's rule, and one concrete fix.

:func:`explain_error` reads a :class:`vizgrad.errors.ShapeError`'s traceback: the public
function the user called (``matmul``, ``add``, ``cat``, ``view``, ``conv2d``, ``linear``...),
the tensors it was given, and the names the caller's code has for them. In a notebook,
:func:`vizgrad.tutor.explain_shape_errors` shows this under every shape error's traceback.

Example::

    try:
        h = x @ W                    # (32, 10) @ (20, 5)
    except vizgrad.ShapeError as error:
        print(vizgrad.tutor.explain_error(error))
    # matmul: x (32, 10) @ W (20, 5)
    #   x :  32 [10]
    #   W :     [20]   5
    # the last dim of x must equal the first dim of W: 10 ≠ 20
    # Fix: W needs 10 rows ...
"""

import html
import math
from dataclasses import dataclass, field

from ..errors import PUBLIC_CODE, ShapeError
from ..tensor import Tensor
from .report import panel

_MATMUL = ("matmul", "mm", "bmm", "mv", "dot", "addmm", "baddbmm")
_JOIN = ("cat", "concat", "concatenate", "stack", "hstack", "vstack")
_VIEW = ("view", "reshape")
_CONV = ("conv1d", "conv2d", "conv3d")


@dataclass
class ShapeExplanation:
    """``op`` (the function called), ``error`` (its message), ``aligned`` (lines: the shapes
    under the op's rule), ``rule``, ``fix`` and ``graph`` (the graph built so far, the
    failing op as node ``highlight``)."""

    op: str
    error: str
    aligned: list
    rule: str
    fix: str = None
    graph: object = None
    highlight: str = None
    names: list = field(default_factory=list)

    def __str__(self):
        lines = [f"{self.op}: {', '.join(self.names)}", *self.aligned, self.rule]
        if self.fix:
            lines.append("Fix: " + self.fix)
        return "\n".join(lines).replace("`", "")

    __repr__ = __str__

    def _figure(self):
        from ..lessons.figures import GraphFigure
        return GraphFigure(self.graph, [self.highlight], note=f"{self.op} failed here")

    def _repr_html_(self):
        from ..lessons.framework import inline_markup
        parts = [panel(False, f"{html.escape(self.op)}: the shapes do not fit", "vizgrad-shape-error"),
                 f'<pre style="margin:4px 0;font-size:13px">{html.escape(chr(10).join(self.aligned))}</pre>',
                 f"<div>{inline_markup(self.rule)}</div>"]
        if self.fix:
            parts.append(f"<div><b>Fix:</b> {inline_markup(self.fix)}</div>")
        if self.graph is not None:
            parts.append(f'<div style="margin-top:6px">{self._figure()._repr_html_()}</div>')
        return "".join(parts) + "</div>"


def explain_error(error):
    """A :class:`ShapeExplanation` of ``error`` (a ShapeError raised by a vizgrad function),
    or None when it is another error or its call cannot be found in the traceback."""
    if not isinstance(error, ShapeError):
        return None
    call = _failing_call(error.__traceback__)
    if call is None:
        return None
    op, arguments, module, caller = call
    tensors = [(position, value) for position, value in arguments if isinstance(value, Tensor)]
    names = [_name(value, caller, position) for position, value in tensors]
    rule = _RULES.get(_family(op, str(error)))
    if rule is None or not tensors:
        return None
    aligned, text, fix = rule(op, [v for _, v in tensors], names, dict(arguments), module, str(error))
    explanation = ShapeExplanation(op, str(error), aligned, text, fix,
                                   names=[f"{n} {_shape(t.shape)}" for n, (_, t) in zip(names, tensors)])
    explanation.graph, explanation.highlight = _graph_so_far(op, [v for _, v in tensors], names,
                                                             _tensors_of(caller))
    return explanation


def _failing_call(tb):
    """``(op, [(argument name, value)], module or None, the caller's frame)`` for the first
    public vizgrad function in the traceback (the one the user's code called)."""
    from ..nn.module import Module
    caller, module = None, None
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        name = PUBLIC_CODE.get(code)
        if name is not None:
            count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4)
            arguments = [(a, frame.f_locals.get(a)) for a in code.co_varnames[:count]]
            flat = []
            for argument, value in arguments:
                if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
                    flat += [(f"{argument}[{i}]", v) for i, v in enumerate(value)]
                else:
                    flat.append((argument, value))
            return name, flat, module, caller
        owner = frame.f_locals.get("self")
        if code.co_name == "forward" and isinstance(owner, Module):
            module = owner
        elif not code.co_filename.startswith(_package_root()):
            caller = frame
        tb = tb.tb_next
    return None


def _package_root():
    import os
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _name(tensor, frame, fallback):
    """The caller's variable (local, else global) holding ``tensor``, else its name."""
    if frame is not None:
        for namespace in (frame.f_locals, frame.f_globals):
            for name, value in namespace.items():
                if value is tensor and not name.startswith("_"):
                    return name
    return tensor.name or fallback


def _family(op, message):
    if op in _MATMUL:
        return "matmul"
    if op in _JOIN:
        return "stack" if op == "stack" else "cat"
    if op in _VIEW:
        return "view"
    if op in _CONV:
        return "conv"
    if op == "linear":
        return "linear"
    if "broadcast" in message:
        return "broadcast"
    return None


def _shape(shape):
    shape = tuple(shape)
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _rows(names, cells, marked):
    """Lines ``name : cell cell ...`` with the cells of each column aligned (None: an empty
    cell); ``marked`` holds the (row, column) cells to bracket."""
    width = max(len(str(c)) for row in cells for c in row if c is not None) + 2
    label = max(len(n) for n in names)
    lines = []
    for r, (name, row) in enumerate(zip(names, cells)):
        text = "".join((f"[{c}]" if (r, k) in marked else f" {c} ").rjust(width + 1) if c is not None
                       else " " * (width + 1) for k, c in enumerate(row))
        lines.append(f"  {name:<{label}} :{text}".rstrip())
    return lines


# --- the rules, one per family: (aligned lines, the rule in words, a fix) ---------------------------
def _matmul(op, tensors, names, arguments, module, message):
    a, b = tensors[:2] if op not in ("addmm", "baddbmm") else tensors[1:3]
    na, nb = (names[:2] if op not in ("addmm", "baddbmm") else names[1:3])
    sa, sb = tuple(a.shape), tuple(b.shape)
    if len(sa) < 1 or len(sb) < 1:
        return [], f"{op} needs tensors of at least one dimension.", None
    k, k2 = sa[-1], (sb[-2] if len(sb) >= 2 else sb[0])
    columns = len(sa) + (len(sb) - 1)
    row_a = list(sa) + [None] * (columns - len(sa))
    row_b = [None] * (len(sa) - 1) + list(sb)
    aligned = _rows([na, nb], [row_a, row_b], {(0, len(sa) - 1), (1, len(sa) - 1)})
    rule = (f"For `{na} @ {nb}` the last dim of `{na}` must equal the "
            f"{'first' if len(sb) <= 2 else 'second-to-last'} dim of `{nb}`: {k} ≠ {k2}.")
    if len(sb) >= 2 and sb[-1] == k:
        fix = f"`{na} @ {nb}.T` (shape {_shape(sa[:-1] + (sb[-2],))}): `{nb}` is stored the other way round."
    elif len(sa) >= 2 and sa[-2] == k2:
        fix = f"`{na}.T @ {nb}` (shape {_shape((sa[-1],) + sb[-1:])})."
    else:
        fix = f"`{nb}` needs {k} rows to multiply `{na}` {_shape(sa)}: e.g. shape {_shape((k,) + sb[-1:])}."
    return aligned, rule, fix


def _broadcast(op, tensors, names, arguments, module, message):
    a, b = tensors[:2]
    sa, sb = tuple(a.shape), tuple(b.shape)
    width = max(len(sa), len(sb))
    row_a = [None] * (width - len(sa)) + list(sa)
    row_b = [None] * (width - len(sb)) + list(sb)
    bad = [k for k in range(width) if row_a[k] is not None and row_b[k] is not None
           and row_a[k] != row_b[k] and 1 not in (row_a[k], row_b[k])]
    aligned = _rows(names[:2], [row_a, row_b], {(r, k) for k in bad for r in (0, 1)})
    dims = ", ".join(f"{k - width}" for k in bad)
    rule = (f"Broadcasting compares shapes from the right: each pair of dims must be equal, or one of them 1. "
            f"Dim {dims} is {' vs '.join(str(row_a[k]) + ' vs ' + str(row_b[k]) for k in bad[:1])}.")
    small, big, small_name = (b, a, names[1]) if len(sb) <= len(sa) else (a, b, names[0])
    fix = None
    if small.ndim == 1:
        for position in range(big.ndim - 1, -1, -1):
            if big.shape[position] == small.shape[0] and position != big.ndim - 1:
                target = (small.shape[0],) + (1,) * (big.ndim - 1 - position)
                fix = (f"`{small_name}.view{_shape(target)}` (or `{small_name}[:, None]`) lines `{small_name}` up "
                       f"with dim {position} of {_shape(big.shape)}.")
                break
    if fix is None:
        fix = (f"Give `{small_name}` size 1 (or the other's size) in dim {dims}: `.unsqueeze`, `.view` or "
               "`.sum(dim, keepdim=True)`.")
    return aligned, rule, fix


def _cat(op, tensors, names, arguments, module, message):
    dim = arguments.get("dim", 0) or 0
    shapes = [tuple(t.shape) for t in tensors]
    width = max(len(s) for s in shapes)
    rows = [list(s) + [None] * (width - len(s)) for s in shapes]
    axis = dim % width if width else 0
    bad = {(r, k) for k in range(width) if k != axis and len({row[k] for row in rows}) > 1 for r in range(len(rows))}
    aligned = _rows(names, rows, bad)
    rule = f"`{op}` along dim {dim} needs every other dim equal in all tensors."
    fits = [d for d in range(width) if all(len(s) == width for s in shapes)
            and all(s[k] == shapes[0][k] for s in shapes for k in range(width) if k != d)]
    fix = (f"`{op}(..., dim={fits[0]})` joins these shapes." if fits else
           "Bring the tensors to one shape apart from the joining dim (`.T`, `.view`, `.unsqueeze`).")
    return aligned, rule, fix


def _stack(op, tensors, names, arguments, module, message):
    shapes = [tuple(t.shape) for t in tensors]
    width = max(len(s) for s in shapes)
    rows = [list(s) + [None] * (width - len(s)) for s in shapes]
    bad = {(r, k) for k in range(width) if len({row[k] for row in rows}) > 1 for r in range(len(rows))}
    aligned = _rows(names, rows, bad)
    rule = "`stack` puts tensors side by side along a new dim: they must all have the same shape."
    joinable = [d for d in range(width) if all(len(s) == width for s in shapes)
                and all(s[k] == shapes[0][k] for s in shapes for k in range(width) if k != d)]
    fix = (f"To join them along an existing dim, `cat(..., dim={joinable[0]})`." if joinable else
           "Bring them to one shape first (`.view`, `.T`, padding).")
    return aligned, rule, fix


def _view(op, tensors, names, arguments, module, message):
    tensor = tensors[0]
    shape = []       # the sizes asked for: view(2, 3), view((2, 3)) and view(2, *more) alike
    for name, value in arguments.items():
        if name != "input":
            shape += list(value) if isinstance(value, (tuple, list)) else [value] if isinstance(value, int) else []
    count = math.prod(tensor.shape)
    width = max(len(names[0]), 5)
    aligned = [f"  {names[0]:<{width}} : {_shape(tensor.shape)} = {count} elements",
               f"  {'asked':<{width}} : {_shape(shape)}"]
    if "row-major" in message or "stride" in message:
        return aligned, (f"`view` keeps the {count} elements in memory order: they must be laid out row by row "
                         "(no transpose, permute or expand before it)."), \
            (f"`{names[0]}.reshape({', '.join(map(str, shape))})` (it copies when it must), or "
             "`.contiguous().view(...)`.")
    divisors = [d for d in range(2, count) if count % d == 0][:6]
    rule = f"`{op}` keeps all {count} elements: the sizes asked for must multiply to {count}" + (
        f" (with -1: the others must divide {count})." if -1 in shape else ".")
    fix = (f"Sizes that divide {count}: {', '.join(map(str, divisors))}; e.g. `{names[0]}.{op}({divisors[0]}, -1)`."
           if divisors else f"`{names[0]}.{op}(-1)`.")
    return aligned, rule, fix


def _conv(op, tensors, names, arguments, module, message):
    x, w = tensors[:2]
    groups = arguments.get("groups") or 1
    expected = w.shape[1] * groups
    spatial = int(op[-2])
    aligned = [f"  {names[0]:<6} : {_shape(x.shape)}   (N, C_in{', ' + ', '.join('HWD'[:spatial]) if spatial else ''})",
               f"  weight : {_shape(w.shape)}   (C_out, C_in / groups, kernel...)"]
    rule = f"`{op}` reads input channels from dim 1 of the input: it must be {expected} (weight's dim 1 × groups)."
    if x.ndim == spatial + 2 and x.shape[-1] == expected:
        order = ", ".join(["0", str(x.ndim - 1)] + [str(i) for i in range(1, x.ndim - 1)])
        fix = f"`{names[0]}` is channels-last: `{names[0]}.permute({order})` puts the channels in dim 1."
    else:
        channels = x.shape[1] if x.ndim == spatial + 2 else x.shape[0]
        fix = (f"A layer for {channels} input channel{'s' if channels != 1 else ''} is `nn.Conv{spatial}d({channels}, "
               "...)`; or fix the input.")
    return aligned, rule, fix


def _linear(op, tensors, names, arguments, module, message):
    x, w = tensors[:2]
    features = x.shape[-1] if x.ndim else 1
    layer = (f"`{type(module).__name__}({w.shape[1]}, {w.shape[0]})`" if module is not None
             else f"the weight {_shape(w.shape)}")
    aligned = [f"  {names[0]:<6} : {_shape(x.shape)}   (..., in_features)",
               f"  weight : {_shape(w.shape)}   (out_features, in_features)"]
    rule = f"{layer} takes inputs whose last dim is in_features = {w.shape[1]}; `{names[0]}`'s is {features}."
    if x.ndim > 2 and math.prod(x.shape[1:]) == w.shape[1]:
        fix = f"Flatten the features first: `{names[0]}.flatten(1)` (shape {_shape((x.shape[0], w.shape[1]))})."
    else:
        fix = f"`nn.Linear({features}, {w.shape[0]})` fits this input."
    return aligned, rule, fix


_RULES = {"matmul": _matmul, "broadcast": _broadcast, "cat": _cat, "stack": _stack, "view": _view, "conv": _conv,
          "linear": _linear}


def _tensors_of(frame, depth=8):
    """The tensors among the variables of ``frame`` and the frames that called it, by name
    (the nearest frame's locals win)."""
    found = {}
    for _ in range(depth):
        if frame is None:
            break
        for namespace in (frame.f_locals, frame.f_globals):
            for name, value in namespace.items():
                if isinstance(value, Tensor) and not name.startswith("_"):
                    found.setdefault(name, value)
        frame = frame.f_back
    return found


def _graph_so_far(op, tensors, names, known):
    """The histories of the failing op's inputs (named after ``known``, the caller's
    tensors), joined by a node for the op that failed."""
    from ..trace import Graph, GraphEdge, GraphNode, graph
    joined = Graph()
    seen = {}
    for index, (tensor, name) in enumerate(zip(tensors, names)):
        if id(tensor) in seen:
            continue
        part = graph(tensor, values=False, names={**known, name: tensor})
        prefix = f"i{index}."
        for node in part.nodes:
            node.id = prefix + node.id
            if node.kind == "output":
                node.kind = "op" if node.op else ("leaf" if node.requires_grad else "constant")
                node.label = name
            joined.nodes.append(node)
        for edge in part.edges:
            edge.source, edge.target = prefix + edge.source, prefix + edge.target
            joined.edges.append(edge)
        seen[id(tensor)] = part.nodes[-1].id
    failed = GraphNode(id="failed", kind="output", label=f"{op} ✗", shape=[], dtype="")
    joined.nodes.append(failed)
    for index, tensor in enumerate(tensors):
        source = seen.get(id(tensor))
        if source is not None:
            joined.edges.append(GraphEdge(source, failed.id, index, list(tensor.shape)))
    return joined, failed.id
