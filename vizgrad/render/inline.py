"""The graph output for front ends without vizgrad's extension (nbconvert's HTML, Notebook 7,
VS Code, Colab, GitHub): a drawing of the collapsed model laid out by Graphviz in the
kernel, as SVG, and the same SVG in a small self-contained HTML output that pans, zooms,
and shows a node's details on click.

The drawing is :func:`vizgrad.render.dot.to_dot`'s, with the groups collapsed as the
interactive view opens them (``collapse=None``: the deepest level of groups that fits;
the user's ``collapse`` when given). It is bounded whatever the graph's size: when that
drawing has more than ``MAX_ITEMS`` items it is drawn a level more collapsed, down to the
top-level modules, and past that only the ``MAX_ITEMS`` items nearest the output are
drawn (with a note saying how many nodes are not), so one layout takes a fraction of a
second.

The HTML holds the SVG, the facts of each drawn item (a node's op, shape, dtype and
statistics as the Graph JSON has them; what a group holds) as escaped JSON, its styles
scoped under the output's own element (a unique id) and the script ``make build`` bundles
from ``widgets/src/inline/`` (an IIFE that defines no globals).
"""

import html
import os
import re
import uuid
from collections import Counter

from .dot import (COLLAPSE_ABOVE, _Drawing, _depths, check_options, collapsed_groups, hierarchy_of, module_of, quote,
                  to_dot)
from .html import BundleMissing, STATIC_DIR, script_json
from ..trace.graph import Graph, shallow_copy, shape_text

MAX_ITEMS = 100          # items (nodes and group boxes) drawn at most
MIN_LABEL_PX = 11        # the smallest label at the SVG's natural size, in CSS pixels
SMALLEST_FONT_PT = 10    # to_dot's smaller fonts (edge and cluster labels) are raised to this
PX_PER_POINT = MIN_LABEL_PX / SMALLEST_FONT_PT      # Graphviz draws in points
SCRIPT = "inline-graph.js"
_STATS = ("mean", "std", "min", "max", "norm", "nan_count", "inf_count")
_SAMPLE = 6              # values of a tensor's sample kept in the details


def drawing_options(graph, collapse=None, max_nodes=MAX_ITEMS, collapse_above=COLLAPSE_ABOVE, **dot_options):
    """The :func:`to_dot` options of the bounded drawing: ``collapse`` as given (None: as the
    interactive view opens), coarser while the drawing has more than ``MAX_ITEMS`` items,
    and a node budget of at most ``MAX_ITEMS``."""
    groups, node_group = hierarchy_of(graph)
    chosen = collapsed_groups(graph, collapse, collapse_above)
    count = _Drawing(groups, node_group, chosen).item_count(graph)
    if count > MAX_ITEMS and groups:
        depths = _depths(groups)
        for depth in range(max(depths.values()), 0, -1):
            candidate = {group.id for group in groups if depths[group.id] == depth}
            candidate_count = _Drawing(groups, node_group, candidate).item_count(graph)
            if candidate_count < count:
                chosen, count = candidate, candidate_count
            if count <= MAX_ITEMS:
                break
    return {**dot_options, "collapse": sorted(chosen) or False, "max_nodes": min(max_nodes, MAX_ITEMS)}


class StaticDrawing:
    """The bounded drawing of a graph: ``svg`` (Graphviz's, with no ids, at a natural size
    whose smallest label is ``MIN_LABEL_PX``), ``items`` (each drawn item's facts by its DOT
    id), ``root`` (the DOT id of the output or the box that holds it) and ``summary``."""

    def __init__(self, graph, **dot_options):
        from .svg import layout_svg
        check_options("the graph's picture", **dot_options)
        options = drawing_options(graph, **dot_options)
        shown, omitted = nearest_the_output(graph, options["collapse"] or [], options["max_nodes"])
        dot = to_dot(shown, **options)
        self.items, self.root = drawn_items(shown, options["collapse"] or [])
        if omitted:
            note = f"… {omitted} earlier nodes not shown"
            dot = (dot.rstrip().removesuffix("}") + f'  omitted [label={quote(note)}, shape=note, style=dashed, '
                   'fontcolor="#757575"];\n}\n')
            self.items["omitted"] = {"k": "omitted", "title": note, "nodes": omitted}
        self.svg = tidy_svg(layout_svg(legible_dot(dot)))
        ops = sum(1 for node in graph.nodes if node.op)
        boxes = sum(1 for item in self.items.values() if item["k"] == "group")
        self.summary = f"{len(graph.nodes)} nodes, {ops} ops"
        if boxes:
            self.summary += f" · {boxes} group{'s' if boxes > 1 else ''} drawn as boxes"

    def html(self, title="vizgrad graph"):
        """The interactive HTML output (see the module docstring)."""
        return inline_html(self.svg, {"items": self.items, "root": self.root}, f"{title}: {self.summary}")


_FONT_SIZE = re.compile(r"\bfontsize=(\d+(?:\.\d+)?)")


def legible_dot(dot):
    """``dot`` with every font at least ``SMALLEST_FONT_PT`` (to_dot writes edge labels at 8
    points): laid out so, the SVG's natural size can be small and every label legible."""
    return _FONT_SIZE.sub(lambda m: f"fontsize={max(float(m[1]), SMALLEST_FONT_PT):g}", dot)


_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ID = re.compile(r'\s(?:id|xlink:href|href)="[^"]*"')
_TITLED = re.compile(r'<g class="(node|cluster)">\s*<title>([^<]*)</title>')
_TITLE = re.compile(r"\s*<title>[^<]*</title>")
_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def tidy_svg(svg):
    """Graphviz's SVG made fit to sit in a page beside others: no prologue, comments or ids
    (every output would repeat ``node1``), each node's and cluster's DOT id in ``data-vg-id``
    instead of a ``<title>`` (its tooltip stays), sized in pixels so that the smallest
    label reads ``MIN_LABEL_PX`` at the natural size."""
    svg = _COMMENT.sub("", _PROLOGUE.sub("", svg, count=1))
    svg = _ID.sub("", svg)
    svg = _TITLED.sub(lambda m: f'<g class="{m[1]}" data-vg-id="{m[2]}">', svg)
    svg = _TITLE.sub("", svg)
    size = _SIZE.search(svg)
    if size:
        width, height = (round(float(value) * PX_PER_POINT) for value in size.groups())
        svg = (svg[:size.start()] + f'<svg class="vg-drawing" width="{width}" height="{height}" role="img" '
               f'aria-label="computation graph"' + svg[size.end():])
    return svg.strip()


def _stats(stats):
    if not stats:
        return None
    kept = {key: stats.get(key) for key in _STATS if key in stats}
    sample = stats.get("sample")
    if sample:
        kept["sample"] = list(sample[:_SAMPLE])
        kept["more"] = len(sample) > _SAMPLE
    return kept


def _node_facts(node):
    """A node as the Graph JSON has it, less its histograms and most of its sample."""
    facts = {"k": "node", "id": node.id, "kind": node.kind, "name": node.name, "label": node.label, "op": node.op,
             "shape": list(node.shape), "dtype": node.dtype, "device": node.device, "module": module_of(node) or None,
             "backward_index": node.backward_index, "value": _stats(node.value), "grad": _stats(node.grad),
             "uses": node.uses, "grad_note": node.grad_note, "source": node.source}
    return {key: value for key, value in facts.items() if value is not None}


def nearest_the_output(graph, collapse, budget):
    """``(graph, omitted)``: ``graph`` itself when :func:`to_dot` with ``collapse`` (group
    ids) draws at most ``budget`` items, else the graph of the ``budget`` items nearest its
    output (the items whose last node came last: a node, or all the nodes of a collapsed
    group) with its groups given explicitly, and how many nodes were left out."""
    groups, node_group = hierarchy_of(graph)
    drawing = _Drawing(groups, node_group, set(collapse))
    item_of = {}
    last = {}
    for index, node in enumerate(graph.nodes):
        box = drawing.place(node.id)
        item_of[node.id] = item = node.id if box is None else "m_" + box
        last[item] = index
    if len(last) <= budget:
        return graph, 0
    kept = set(sorted(last, key=last.get)[-budget:])
    nodes = []
    for node in graph.nodes:
        if item_of[node.id] in kept:
            copy = shallow_copy(node)
            copy.group = node_group.get(node.id)
            nodes.append(copy)
    ids = {node.id for node in nodes}
    parents = {group.id: group.parent for group in groups}
    used = set()
    for node in nodes:
        group = node.group
        while group is not None and group not in used:
            used.add(group)
            group = parents.get(group)
    shown = Graph(nodes=nodes, edges=[edge for edge in graph.edges if edge.source in ids and edge.target in ids],
                  groups=[group for group in groups if group.id in used], backward_order=[], truncated=True,
                  backward=dict(graph.backward))
    return shown, len(graph.nodes) - len(nodes)


def drawn_items(graph, collapse):
    """``(items, root)``: the facts of what :func:`to_dot` draws with ``collapse`` (group ids),
    by DOT id (a node's id; ``m_<group id>`` for a collapsed group: what it holds), and the
    root's DOT id (the output, or the box drawn around it)."""
    groups, node_group = hierarchy_of(graph)
    drawing = _Drawing(groups, node_group, set(collapse))
    items, members = {}, {}
    for node in graph.nodes:
        box = drawing.place(node.id)
        if box is None:
            items[node.id] = _node_facts(node)
        else:
            members.setdefault(box, []).append(node)
    children = Counter(group.parent for group in groups if group.parent is not None)
    runs = {}
    for group_id, head in drawing.shown_as.items():
        runs.setdefault(head, []).append(group_id)
    for box, nodes in members.items():
        group = drawing.groups[box]
        count = drawing.count[box]
        folded = runs[box]
        ops = Counter(node.op for node in nodes if node.op)
        params = [{"name": node.name or node.id, "shape": shape_text(node.shape)} for node in nodes
                  if node.kind == "parameter" or (node.kind in ("leaf", "constant") and node.name)]
        items["m_" + box] = {
            "k": "group", "kind": group.kind, "title": group.label or group.name, "name": group.name,
            "type": group.type or None, "blocks": count,
            "last": drawing.groups[folded[-1]].name if count > 1 else None,
            "nodes": len(nodes), "ops": sum(ops.values()), "top": ops.most_common(8),
            "params": params[:12], "more_params": max(0, len(params) - 12), "children": children[box]}
    output = next((node for node in reversed(graph.nodes) if node.kind == "output"), None)
    output = output or (graph.nodes[-1] if graph.nodes else None)
    root = None
    if output is not None:
        box = drawing.place(output.id)
        root = output.id if box is None else "m_" + box
    return items, root


_script_cache = {}


def read_script():
    """The bundled script (``vizgrad/render/static/inline-graph.js``, built by ``make build``)."""
    script = _script_cache.get(SCRIPT)
    if script is None:
        path = os.path.join(STATIC_DIR, SCRIPT)
        try:
            with open(path, encoding="utf-8") as handle:
                script = handle.read()
        except FileNotFoundError:
            raise BundleMissing(
                f"vizgrad's browser bundle is missing ({path}): it is built from widgets/ with Node.js. "
                "In a source checkout run `make build`, then try again.") from None
        if "</script" in script.lower() or "<!--" in script:
            raise BundleMissing(f"{path} cannot be inlined safely; rebuild it with `make build`")
        _script_cache[SCRIPT] = script
    return script


# every rule under the output's own element ("{root}": its id)
_STYLE = """
{root}{{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2933;position:relative;
max-width:100%;border:1px solid #d9dee4;border-radius:6px;background:#fff;box-sizing:border-box;overflow:hidden}}
{root} *{{box-sizing:border-box}}
{root} .vg-inline-bar{{display:flex;align-items:center;gap:6px;padding:4px 8px;border-bottom:1px solid #e4e7eb;
background:#f7f9fb}}
{root} .vg-inline-title{{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#3e4c59}}
{root} .vg-inline-bar button{{font:inherit;min-width:28px;padding:1px 8px;border:1px solid #bcccdc;border-radius:4px;
background:#fff;color:#1f2933;cursor:pointer}}
{root} .vg-inline-bar button:hover{{background:#eef2f7}}
{root} .vg-inline-stage{{position:relative;overflow:auto;max-height:640px;touch-action:none}}
{root}.vg-live .vg-inline-stage{{overflow:hidden;cursor:grab}}
{root}.vg-live .vg-inline-stage.vg-dragging{{cursor:grabbing}}
{root}.vg-live .vg-drawing{{position:absolute;left:0;top:0;transform-origin:0 0;max-width:none}}
{root} .vg-drawing{{display:block;max-width:100%;height:auto}}
{root} .vg-drawing g.node,{root} .vg-drawing g.cluster{{cursor:pointer}}
{root} .vg-drawing g.node:hover polygon,{root} .vg-drawing g.node:hover ellipse,{root} .vg-drawing g.node:hover path{{
stroke:#2563eb}}
{root} .vg-drawing g.vg-selected polygon,{root} .vg-drawing g.vg-selected ellipse,{root} .vg-drawing g.vg-selected path{{
stroke:#2563eb;stroke-width:3}}
{root} .vg-drawing a{{text-decoration:none}}
{root} .vg-inline-info{{position:absolute;z-index:1;top:40px;right:8px;width:min(360px,60%);max-height:calc(100% - 48px);
overflow:auto;padding:6px 10px;border:1px solid #bcccdc;border-radius:6px;background:#fbfcfd;
box-shadow:0 2px 8px rgba(31,41,51,.18)}}
{root} .vg-inline-info h4{{margin:0 24px 4px 0;font-size:14px;word-break:break-word}}
{root} .vg-inline-info button{{position:absolute;top:4px;right:6px;border:0;background:none;font-size:16px;cursor:pointer;
color:#52606d}}
{root} .vg-inline-info dl{{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:0;padding:0}}
{root} .vg-inline-info dt{{color:#52606d;font-weight:normal;white-space:nowrap;float:none;width:auto;margin:0;padding:0}}
{root} .vg-inline-info dd{{margin:0;padding:0;float:none;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;
word-break:break-word}}
{root} .vg-inline-tip{{position:absolute;z-index:2;pointer-events:none;max-width:320px;padding:4px 8px;border-radius:4px;
background:#1f2933;color:#fff;font-size:12px;white-space:pre-line}}
{root} [hidden]{{display:none!important}}
"""


def inline_html(svg, data, title):
    """The HTML output: ``svg`` in a stage, ``data`` (escaped JSON) and the script, every rule
    scoped under a fresh id."""
    root = f"vg-inline-{uuid.uuid4().hex[:12]}"
    style = _STYLE.strip().replace("\n", "").format(root=f"#{root}")
    return (f'<div class="vg-inline" id="{root}" data-vg-inline="">'
            f"<style>{style}</style>"
            f'<div class="vg-inline-bar"><span class="vg-inline-title">{html.escape(title)}</span>'
            '<span class="vg-inline-tools" hidden title="drag to pan, wheel to zoom, click a node for its details">'
            '<button type="button" data-zoom="out" title="zoom out" aria-label="zoom out">−</button>'
            '<button type="button" data-zoom="in" title="zoom in" aria-label="zoom in">+</button>'
            '<button type="button" data-zoom="fit" title="fit the graph" aria-label="fit the graph">fit</button>'
            "</span></div>"
            f'<div class="vg-inline-stage">{svg}</div>'
            '<div class="vg-inline-info" hidden></div><div class="vg-inline-tip" hidden></div>'
            f'<script type="application/json" class="vg-inline-data">{script_json(data)}</script>'
            f"<script>{read_script()}</script></div>")
