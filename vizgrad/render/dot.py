"""Graphviz DOT for a :class:`vizgrad.Graph`, in pure Python.

Leaves are ellipses, parameters filled ellipses, constants small plain boxes, ops boxes and
outputs double octagons; edges carry the shape that flows along them. The graph's groups
(modules, composite functions) are nested clusters labelled with their type and shape
signature (``Linear(784→512)``). After backward, nodes are coloured by the size of their
gradient on a log scale (with a legend), and NaN or inf gradients are drawn in an alarm
colour. Groups can be collapsed into one node each (ids ``m_<group id>``, unique whatever
the module names); a run of identical collapsed siblings (repeated blocks) is drawn once,
as ``Block ×6``. Graphs of more than ``collapse_above`` nodes are drawn collapsed by
default, at the deepest level of groups that fits.
"""

import math
from collections import Counter

from ..errors import ArgumentError, ArgumentTypeError
from ..trace.graph import GraphGroup, shape_text
from ..trace.groups import mark_repeats

COLLAPSE_ABOVE = 40     # graphs with more nodes are drawn with their groups collapsed


ALARM = "#d62728"
PALETTE = ("#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#fee090", "#fdae61", "#f46d43", "#d73027")
STYLES = {
    "leaf": 'shape=ellipse, style=filled, fillcolor="#eef3fb"',
    "parameter": 'shape=ellipse, style="filled,bold", fillcolor="#fde9c8"',
    "constant": 'shape=box, style="filled,dashed", fillcolor="#ffffff", fontsize=9',
    "op": 'shape=box, style="rounded,filled", fillcolor="#f4f4f4"',
    "output": 'shape=doubleoctagon, style=filled, fillcolor="#e8f5e9"',
    "module": 'shape=box3d, style=filled, fillcolor="#ede7f6"',
}


def quote(text):
    """A DOT string literal: user text can never break out of it."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'




def module_of(node):
    """The module a node belongs to: where its op ran, or the owner of a parameter."""
    if node.module:
        return node.module
    if node.kind == "parameter" and node.name and "." in node.name:
        return node.name.rpartition(".")[0]
    return ""


def grad_magnitude(node):
    """(log10 of the gradient's RMS, whether it holds NaN/inf), or None before backward."""
    grad = node.grad
    if not grad:
        return None
    bad = grad["nan_count"] or grad["inf_count"]
    count = 1
    for n in grad["shape"]:
        count *= n
    norm = grad["norm"]
    if norm is None or count == 0:
        return (None, bool(bad))
    rms = norm / math.sqrt(count)
    return (math.log10(rms) if rms > 0 else None, bool(bad))


def colour_scale(graph):
    """The (low, high) log10 range of gradient sizes in ``graph``, or None."""
    values = [m[0] for m in (grad_magnitude(n) for n in graph.nodes) if m and m[0] is not None]
    if not values:
        return None
    low, high = min(values), max(values)
    return (low, high if high > low else low + 1.0)


def colour_for(value, scale):
    fraction = (value - scale[0]) / (scale[1] - scale[0])
    return PALETTE[min(len(PALETTE) - 1, max(0, int(fraction * len(PALETTE))))]


def hierarchy_of(graph):
    """``(groups, node id -> group id)``: the graph's groups, or, for a graph recorded
    without them (schema version 1, hand-built), groups made from its module names."""
    if graph.groups:
        return graph.groups, {node.id: node.group for node in graph.nodes}
    paths, members = {}, {}
    for node in graph.nodes:
        module = module_of(node)
        if not module:
            continue
        parts = module.split(".")
        for depth in range(1, len(parts) + 1):
            paths.setdefault(".".join(parts[:depth]), [])
        paths[module].append(node.op or node.kind)
        members[node.id] = module
    ids = {path: f"g{index}" for index, path in enumerate(paths)}
    groups = [GraphGroup(ids[path], "module", path, "", path,
                         ids.get(path.rpartition(".")[0]) if "." in path else None,
                         repr(_subtree_ops(path, paths)))
              for path in paths]
    mark_repeats(groups)
    return groups, {node_id: ids[path] for node_id, path in members.items()}


def _subtree_ops(path, paths):
    return [(other[len(path):], ops) for other, ops in paths.items() if other == path or other.startswith(path + ".")]


class _Drawing:
    """Which groups are drawn collapsed, and where each node is drawn."""

    def __init__(self, groups, node_group, collapsed):
        self.groups = {group.id: group for group in groups}
        self.order = [group.id for group in groups]
        self.node_group = node_group
        # the outermost collapsed group around each group (itself when collapsed), or None
        box = {}
        for group in groups:                      # parents first
            outer = box.get(group.parent)
            box[group.id] = outer if outer is not None else (group.id if group.id in collapsed else None)
        # a run of identical collapsed siblings is drawn once, as its first
        self.shown_as, self.count = {}, {}
        head = None
        for group in groups:
            if box[group.id] != group.id:
                continue
            repeat = group.repeat
            first = self.groups.get(head)
            if (repeat and repeat["index"] > 0 and first is not None and first.parent == group.parent
                    and first.repeat["count"] == repeat["count"] and self.count[head] == repeat["index"]):
                self.shown_as[group.id] = head
                self.count[head] += 1
            else:
                self.shown_as[group.id] = group.id
                self.count[group.id] = 1
                head = group.id if repeat and repeat["index"] == 0 else None
        for group_id, first in list(self.shown_as.items()):     # only whole runs fold
            if self.count[first] != (self.groups[first].repeat or {"count": 1})["count"]:
                self.shown_as[group_id] = group_id
                self.count[group_id] = 1
        self.box = {group_id: (self.shown_as[outer] if outer is not None else None) for group_id, outer in box.items()}

    def place(self, node_id):
        """The collapsed group a node is drawn as (its id), or None when it is drawn itself."""
        group = self.node_group.get(node_id)
        return self.box.get(group) if group is not None else None

    def boxes(self):
        return [group_id for group_id in self.order if self.shown_as.get(group_id) == group_id]

    def item_count(self, graph):
        return sum(1 for node in graph.nodes if self.place(node.id) is None) + len(self.boxes())


def _depths(groups):
    depths = {}
    for group in groups:
        depths[group.id] = depths.get(group.parent, 0) + 1
    return depths


def collapsed_groups(graph, collapse=None, collapse_above=COLLAPSE_ABOVE):
    """The ids of the groups drawn collapsed.

    ``collapse``: None (automatic: none for graphs of at most ``collapse_above`` nodes, else
    the deepest level of groups at which the drawing has at most that many items, or the
    top level when none has), False or [] (none), an int depth (1: every top-level group),
    or group names (``"encoder.0"``, ``"cross_entropy"``) and ids (``"g3"``)."""
    groups, node_group = hierarchy_of(graph)
    depths = _depths(groups)
    if collapse is None:
        if len(graph.nodes) <= collapse_above or not groups:
            return set()
        chosen = {group.id for group in groups if depths[group.id] == 1}
        for depth in range(2, max(depths.values()) + 1):
            candidate = {group.id for group in groups if depths[group.id] == depth}
            if _Drawing(groups, node_group, candidate).item_count(graph) > collapse_above:
                break
            chosen = candidate
        return chosen
    if collapse is False:
        return set()
    if isinstance(collapse, int):
        return {group.id for group in groups if depths[group.id] == collapse}
    names = {collapse} if isinstance(collapse, str) else set(collapse)
    return {group.id for group in groups if group.name in names or group.id in names}


RANKDIRS = ("TB", "LR", "BT", "RL")


def check_options(caller, collapse=None, max_nodes=300, show_grads=True, rankdir="TB", title=None,
                  collapse_above=COLLAPSE_ABOVE):
    """Refuse drawing options :func:`to_dot` cannot honour, in the words of ``caller``
    (``vizgrad.show``, ``to_html``, ...)."""
    for name, value in (("max_nodes", max_nodes), ("collapse_above", collapse_above)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentTypeError(f"{caller}: {name} must be an int, got {type(value).__name__} ({value!r})")
        if value < 1:
            raise ArgumentError(f"{caller}: {name} must be at least 1, got {value}")
    if rankdir not in RANKDIRS:
        raise ArgumentError(f"{caller}: rankdir must be one of {', '.join(map(repr, RANKDIRS))}, got {rankdir!r}")
    if collapse is not None and collapse is not False and not isinstance(collapse, int):
        names = [collapse] if isinstance(collapse, str) else collapse
        if not isinstance(names, (list, tuple, set, frozenset)) or not all(isinstance(n, str) for n in names):
            raise ArgumentTypeError(f"{caller}: collapse must be None, False, a depth (int) or group names and "
                                    f"ids (str or a list of str), got {type(collapse).__name__} ({collapse!r})")
    elif isinstance(collapse, int) and not isinstance(collapse, bool) and collapse < 1:
        raise ArgumentError(f"{caller}: collapse as a depth must be at least 1 (1: every top-level group), "
                            f"got {collapse}")
    if title is not None and not isinstance(title, str):
        raise ArgumentTypeError(f"{caller}: title must be a str, got {type(title).__name__}")


def to_dot(graph, collapse=None, max_nodes=300, show_grads=True, rankdir="TB", title=None,
           collapse_above=COLLAPSE_ABOVE):
    """DOT source for ``graph``.

    Args:
        collapse: the groups to draw as single nodes (see :func:`collapsed_groups`): None
            collapses graphs of more than ``collapse_above`` nodes automatically; False or []
            draws every node; an int depth (1: every top-level module); or module names
            (one or several) and group ids.
        max_nodes: node budget; above it only the nodes closest to the output are kept.
        show_grads: colour nodes by gradient size when gradients were recorded.
        rankdir: "TB" (top to bottom) or "LR".
        title: a title above the graph.
        collapse_above: the size above which groups are collapsed by default.
    """
    check_options("to_dot", collapse, max_nodes, show_grads, rankdir, title, collapse_above)
    groups, node_group = hierarchy_of(graph)
    drawing = _Drawing(groups, node_group, collapsed_groups(graph, collapse, collapse_above))
    boxes = drawing.boxes()
    placed = {node.id: drawing.place(node.id) for node in graph.nodes}     # the box each node is drawn in
    visible = [n for n in graph.nodes if placed[n.id] is None]
    omitted = 0
    if len(visible) + len(boxes) > max_nodes:
        keep = max(1, max_nodes - len(boxes))
        omitted = len(visible) - keep
        visible = visible[-keep:]
    visible_ids = {n.id for n in visible}

    def place(node_id):
        box = placed.get(node_id)
        if box is not None:
            return "m_" + box
        return node_id if node_id in visible_ids else None

    scale = colour_scale(graph) if show_grads else None
    lines = ["digraph vizgrad {", f"  graph [rankdir={rankdir}, fontname=Helvetica, fontsize=11, "
             f"label={quote(title or '')}, labelloc=t];",
             '  node [fontname=Helvetica, fontsize=10, penwidth=1.2];',
             '  edge [fontname=Helvetica, fontsize=8, color="#666666", arrowsize=0.7];']
    content = {}           # group id (None: the top level) -> lines of the nodes drawn in it
    for node in visible:
        content.setdefault(node_group.get(node.id), []).append(_node_line(node, scale))
    children = {}
    for group in groups:
        children.setdefault(group.parent, []).append(group.id)

    ops_in = Counter(placed[node.id] for node in graph.nodes if node.op)   # per collapsed box

    def emit(parent, indent):
        lines.extend(indent + line for line in content.get(parent, ()))
        for group_id in children.get(parent, ()):
            if group_id in drawing.shown_as:
                if drawing.shown_as[group_id] == group_id:
                    lines.append(indent + _box_line(drawing, group_id, ops_in[group_id]))
                continue
            if not _has_content(group_id, content, children, drawing):
                continue
            group = drawing.groups[group_id]
            lines.append(f"{indent}subgraph {quote('cluster_' + group_id)} {{")
            lines.append(f'{indent}  label={quote(_group_title(group))}; style="rounded,dashed"; color="#9e9e9e"; '
                         f'fontsize=9; tooltip={quote(group.name)};')
            emit(group_id, indent + "  ")
            lines.append(indent + "}")

    emit(None, "  ")
    if omitted:
        lines.append(f'  omitted [label={quote(f"… {omitted} earlier nodes not shown")}, shape=note, '
                     'style=dashed, fontcolor="#757575"];')
    drawn = set()
    for edge in graph.edges:
        source, target = place(edge.source), place(edge.target)
        if source is None or target is None or source == target:
            continue
        key = (source, target, tuple(edge.shape))
        if key in drawn:
            continue
        drawn.add(key)
        label = shape_text(edge.shape) if len(edge.shape) else "scalar"     # "()" reads as "0"
        lines.append(f"  {quote(source)} -> {quote(target)} [label={quote(label)}];")
    if scale is not None:
        lines.extend(_legend(scale))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _group_title(group):
    """A cluster's label: the group's label, with the module's name below it."""
    if group.kind == "function" or group.name in (group.label, ""):
        return group.label
    return f"{group.label}\n{group.name}"


def _has_content(group_id, content, children, drawing):
    """Whether an expanded group draws anything (a node, a collapsed box, a non-empty cluster)."""
    if content.get(group_id):
        return True
    return any(drawing.shown_as.get(child) == child
               or (child not in drawing.shown_as and _has_content(child, content, children, drawing))
               for child in children.get(group_id, ()))


def _box_line(drawing, group_id, inside):
    """A collapsed group, or a folded run of identical ones (``Block ×6`` over their names),
    holding ``inside`` ops."""
    group = drawing.groups[group_id]
    count = drawing.count[group_id]
    label = group.label + (f" ×{count}" if count > 1 else "")
    name = group.name
    if count > 1:
        last = [other for other, head in drawing.shown_as.items() if head == group_id][-1]
        name = f"{group.name} … {drawing.groups[last].name}"
    if name and name != group.label:
        label += "\n" + name
    tooltip = f"{group.kind} {name}: {inside} ops" + (f" in {count} identical blocks" if count > 1 else "")
    return f"{quote('m_' + group_id)} [label={quote(label)}, {STYLES['module']}, tooltip={quote(tooltip)}];"


def _node_line(node, scale):
    title = node.label or node.kind
    if node.name and node.name != title:
        title = f"{node.name}"
    lines = [title]
    if node.op and node.op != title:
        lines.append(node.op)
    sample = (node.value or {}).get("sample")
    if not node.shape and sample and sample[0] is not None:      # a scalar shows its value
        value = f"{sample[0]:.4g}"
        if value != title:
            lines.append("= " + value)
    elif not title.endswith(shape_text(node.shape)):       # ("input (2, 3)" says it already)
        lines.append(shape_text(node.shape))
    if node.uses > 1 and node.op is None:
        lines.append(f"used {node.uses}×")
    style = STYLES.get(node.kind, STYLES["op"])
    extra = ""
    magnitude = grad_magnitude(node) if scale is not None else None
    if magnitude is not None:
        value, bad = magnitude
        if bad:
            extra = f', color="{ALARM}", penwidth=3, fontcolor="{ALARM}"'
            lines.append("grad has NaN/inf")
        elif value is not None:
            colour = colour_for(value, scale)
            extra = f', color="{colour}", penwidth=3'
    tooltip = f"{node.kind} {node.id} {node.dtype} {shape_text(node.shape)}"
    if node.source:
        tooltip += f"\n{node.source['file']}:{node.source['line']}: {node.source['code']}"
    return f"{quote(node.id)} [label={quote(chr(10).join(lines))}, {style}{extra}, tooltip={quote(tooltip)}];"


def _legend(scale):
    low, high = scale
    cells = []
    for position, colour in enumerate(PALETTE):
        value = low + (high - low) * (position + 0.5) / len(PALETTE)
        cells.append(f'    legend_{position} [label={quote(f"{10 ** value:.1e}")}, shape=box, style=filled, '
                     f'fillcolor="{colour}", fontcolor="{"white" if position < 2 else "black"}", width=0.5, height=0.25];')
    order = " -> ".join(f"legend_{i}" for i in range(len(PALETTE)))
    return (['  subgraph cluster_legend {', '    label="gradient size (RMS, log scale)"; style=dashed; '
             'color="#bdbdbd"; fontsize=9;']
            + cells + [f"    {order} [style=invis];", f'    legend_nan [label="NaN / inf", shape=box, '
                                                         f'color="{ALARM}", penwidth=3, fontcolor="{ALARM}"];', "  }"])
