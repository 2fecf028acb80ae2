"""Graphviz DOT for a :class:`vizgrad.Graph`, in pure Python.

Leaves are ellipses, parameters filled ellipses, ops boxes and outputs double
octagons; edges carry the shape that flows along them; nodes made inside a module
are clustered by module. After backward, nodes are coloured by the size of their
gradient on a log scale (with a legend), and NaN or inf gradients are drawn in an
alarm colour. Modules can be collapsed into one node each; identical collapsed
siblings in a row (repeated blocks) are drawn once with a count; graphs over the
node budget are collapsed automatically, deepest modules first.
"""

import math

ALARM = "#d62728"
PALETTE = ("#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#fee090", "#fdae61", "#f46d43", "#d73027")
STYLES = {
    "leaf": 'shape=ellipse, style=filled, fillcolor="#eef3fb"',
    "parameter": 'shape=ellipse, style="filled,bold", fillcolor="#fde9c8"',
    "op": 'shape=box, style="rounded,filled", fillcolor="#f4f4f4"',
    "output": 'shape=doubleoctagon, style=filled, fillcolor="#e8f5e9"',
    "module": 'shape=box3d, style=filled, fillcolor="#ede7f6"',
}


def quote(text):
    """A DOT string literal: user text can never break out of it."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def shape_text(shape):
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


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


def _collapsed_key(module, collapse):
    """The collapsed module that contains ``module`` ('' when none)."""
    if not module or collapse is None:
        return ""
    parts = module.split(".")
    if isinstance(collapse, int):
        return ".".join(parts[:collapse]) if len(parts) >= collapse else ""
    names = {collapse} if isinstance(collapse, str) else set(collapse)
    for depth in range(1, len(parts) + 1):
        prefix = ".".join(parts[:depth])
        if prefix in names:
            return prefix
    return ""


def _module_depth(graph):
    return max((len(module_of(n).split(".")) for n in graph.nodes if module_of(n)), default=0)


def to_dot(graph, collapse=None, max_nodes=300, show_grads=True, rankdir="TB", title=None):
    """DOT source for ``graph``.

    Args:
        collapse: module names (or one name) to draw as single nodes, or an int depth
            (1 collapses every top-level module).
        max_nodes: node budget; above it modules are collapsed automatically, and if the
            graph has no modules to collapse, only the nodes closest to the output are kept.
        show_grads: colour nodes by gradient size when gradients were recorded.
        rankdir: "TB" (top to bottom) or "LR".
    """
    omitted = 0
    if collapse is None and len(graph.nodes) > max_nodes:
        depth = _module_depth(graph)
        while depth > 0:
            collapse = depth
            if _visible_count(graph, collapse) <= max_nodes:
                break
            depth -= 1
    groups = {}
    for node in graph.nodes:
        key = _collapsed_key(module_of(node), collapse)
        if key:
            groups.setdefault(key, []).append(node)
    visible = [n for n in graph.nodes if not _collapsed_key(module_of(n), collapse)]
    if len(visible) + len(groups) > max_nodes:
        keep = max(1, max_nodes - len(groups))
        omitted = len(visible) - keep
        visible = visible[-keep:]
    visible_ids = {n.id for n in visible}

    # repeated blocks: consecutive collapsed siblings with the same op sequence are drawn once
    representative, counts = {}, {}
    ordered = list(groups)
    previous_key, previous_signature = None, None
    for key in ordered:
        signature = (key.rpartition(".")[0], tuple(n.op or n.kind for n in groups[key]))
        if previous_key is not None and signature == previous_signature and _adjacent(previous_key, key):
            representative[key] = representative[previous_key]
        else:
            representative[key] = key
        counts[representative[key]] = counts.get(representative[key], 0) + 1
        previous_key, previous_signature = key, signature

    def place(node):
        key = _collapsed_key(module_of(node), collapse)
        if key:
            return "m_" + _safe(representative[key])
        return node.id if node.id in visible_ids else None

    scale = colour_scale(graph) if show_grads else None
    lines = ["digraph vizgrad {", f"  graph [rankdir={rankdir}, fontname=Helvetica, fontsize=11, "
             f"label={quote(title or '')}, labelloc=t];",
             '  node [fontname=Helvetica, fontsize=10, penwidth=1.2];',
             '  edge [fontname=Helvetica, fontsize=8, color="#666666", arrowsize=0.7];']
    clusters = {}
    for node in visible:
        clusters.setdefault(module_of(node), []).append(node)
    for module, members in clusters.items():
        indent = "  "
        if module:
            lines.append(f"  subgraph {quote('cluster_' + module)} {{")
            lines.append(f'    label={quote(module)}; style="rounded,dashed"; color="#9e9e9e"; fontsize=9;')
            indent = "    "
        for node in members:
            lines.append(indent + _node_line(node, scale))
        if module:
            lines.append("  }")
    for key in dict.fromkeys(representative.values()):
        count = counts[key]
        ops = sum(1 for n in groups[key] if n.kind in ("op", "output"))
        label = f"{key}{f'  ×{count}' if count > 1 else ''}\n{ops} ops"
        lines.append(f"  {quote('m_' + _safe(key))} [label={quote(label)}, {STYLES['module']}, tooltip={quote(key)}];")
    if omitted:
        lines.append(f'  omitted [label={quote(f"… {omitted} earlier nodes not shown")}, shape=note, '
                     'style=dashed, fontcolor="#757575"];')
    drawn = set()
    for edge in graph.edges:
        source = place(graph_node(graph, edge.source))
        target = place(graph_node(graph, edge.target))
        if source is None or target is None or source == target:
            continue
        key = (source, target, tuple(edge.shape))
        if key in drawn:
            continue
        drawn.add(key)
        lines.append(f"  {quote(source)} -> {quote(target)} [label={quote(shape_text(edge.shape))}];")
    if scale is not None:
        lines.extend(_legend(scale))
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_node(graph, node_id):
    lookup = graph.__dict__.setdefault("_lookup_cache", None)
    if lookup is None or len(lookup) != len(graph.nodes):
        lookup = {n.id: n for n in graph.nodes}
        graph.__dict__["_lookup_cache"] = lookup
    return lookup[node_id]


def _visible_count(graph, collapse):
    keys = set()
    count = 0
    for node in graph.nodes:
        key = _collapsed_key(module_of(node), collapse)
        if key:
            keys.add(key)
        else:
            count += 1
    return count + len(keys)


def _adjacent(first, second):
    """Siblings such as ``layers.0`` and ``layers.1``."""
    a, _, a_last = first.rpartition(".")
    b, _, b_last = second.rpartition(".")
    return a == b and a_last.isdigit() and b_last.isdigit() and int(b_last) == int(a_last) + 1


def _safe(text):
    return "".join(c if c.isalnum() else "_" for c in text)


def _node_line(node, scale):
    title = node.label or node.kind
    if node.name and node.name != title:
        title = f"{node.name}"
    lines = [title]
    if node.op and node.op != title:
        lines.append(node.op)
    lines.append(shape_text(node.shape))
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
