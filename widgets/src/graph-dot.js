// What the browser draws of a Graph JSON, and its DOT source: the graph's groups (modules,
// composite functions), which of them are drawn as one box, runs of identical blocks
// folded into one ("Block ×6"), shared parameters drawn once ("used 10×"), scalars with
// their values, nodes coloured by gradient size. Pure functions over Graph JSON; no DOM.
//
// Groups come from the graph's "groups" list when it has one (vizgrad.trace writes it);
// older graphs get them from each node's "module" (a qualified name) and a parameter's
// qualified name. When the top level holds too many items (loose nodes, groups), runs of
// them become chunks, so that nothing is ever laid out as thousands of boxes at once.
// Which groups are collapsed is a list of group keys (a module's qualified name; the id
// of any other group): the same list the GraphView widget keeps in its "collapsed" trait.

import { formatNumber, shapeText } from "./node-info.js";

/** Graphs with more nodes than this are drawn with every top-level group collapsed. */
export const GROUP_ABOVE = 40;
/** More than twice this many top-level items (groups, loose nodes) are cut into chunks of this many. */
export const CHUNK = 60;
/** Drawings with more items than this have no shape labels on their edges (the nodes' tooltips say them). */
export const EDGE_LABELS_UP_TO = 150;
export const PALETTE = ["#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#fee090", "#fdae61", "#f46d43", "#d73027"];
export const ALARM = "#d62728";
const STYLES = {
  leaf: 'shape=ellipse, style=filled, fillcolor="#eef3fb"',
  parameter: 'shape=ellipse, style="filled,bold", fillcolor="#fde9c8"',
  constant: 'shape=plain, fontcolor="#52606d"', // a number
  tensorConstant: 'shape=box, style="rounded,dashed", color="#7b8794", fontcolor="#3e4c59"', // data, a buffer
  op: 'shape=box, style="rounded,filled", fillcolor="#f4f4f4"',
  output: 'shape=doubleoctagon, style=filled, fillcolor="#e8f5e9"',
  group: 'shape=box, style="rounded,filled,bold", fillcolor="#ede7f6", color="#7e57c2", margin="0.15,0.08"',
  chunk: 'shape=box, style="rounded,filled,dashed", fillcolor="#f5f7fa", color="#7b8794", margin="0.15,0.08"',
};

/** A DOT string literal: user text can never break out of it. */
export function quote(text) {
  return `"${String(text).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\r?\n/g, "\\n")}"`;
}

/** A name shortened to at most ``limit`` characters (its last dotted parts, "…" in front). */
export function shortName(name, limit = 28) {
  if (name.length <= limit) return name;
  const parts = name.split(".");
  let tail = parts.pop();
  while (parts.length && tail.length + parts.at(-1).length + 1 <= limit - 1) tail = `${parts.pop()}.${tail}`;
  return `…${tail.length <= limit - 1 ? tail : tail.slice(-(limit - 1))}`;
}

/** What a node is called on the page: its name, else its label, op or kind. */
export function nodeTitle(node) {
  return node.name || node.label || node.op || node.kind;
}

/** "= 0.5" for a 0-d node whose value was recorded, else its shape "(3, 4)". */
export function valueOrShape(node) {
  const sample = node.value?.sample;
  if ((node.shape ?? []).length === 0 && Array.isArray(sample) && sample.length) return `= ${formatNumber(sample[0])}`;
  return shapeText(node.shape);
}

/** An edge's label: its tensor's shape, "scalar" for a 0-d one (Python's "()" reads as a zero there), "" when unknown. */
export function edgeLabel(shape) {
  if (!Array.isArray(shape)) return "";
  return shape.length ? shapeText(shape) : "scalar";
}

/** A node's module: where its op ran, or for a parameter or buffer (a named leaf) the owner in its qualified name. */
function moduleOf(node) {
  if (node.module) return node.module;
  if ((node.kind === "parameter" || node.kind === "leaf") && node.name?.includes(".")) return node.name.slice(0, node.name.lastIndexOf("."));
  return "";
}

/** How many op inputs read each node (``uses`` when the graph says, else counted from edges). */
function usesOf(graph) {
  const uses = new Map();
  for (const edge of graph.edges) uses.set(edge.source, (uses.get(edge.source) ?? 0) + 1);
  for (const node of graph.nodes) if (Number.isInteger(node.uses)) uses.set(node.id, node.uses);
  return uses;
}

/**
 * The graph's groups as a tree.
 * @returns {{groups: Map<string, object>, roots: string[], nodeGroup: Map<string, string|null>}}
 *   groups by key: {key, id, kind ("module"|"function"|"chunk"), name, type, label, parent, signature,
 *   repeat, children: keys, nodes: direct member ids, size: all member nodes, ops, params: [{name, shape}]};
 *   roots: top-level group keys in drawing order; nodeGroup: each node's innermost group key.
 */
export function groupTree(graph) {
  const groups = new Map();
  const nodeGroup = new Map();
  const keyOfId = new Map();
  const add = (group) => {
    groups.set(group.key, { children: [], nodes: [], size: 0, ops: 0, params: [], ...group });
    return groups.get(group.key);
  };
  if (Array.isArray(graph.groups)) {
    for (const group of graph.groups) {
      const key = group.kind === "module" ? group.name : group.id;
      keyOfId.set(group.id, key);
      add({ key, id: group.id, kind: group.kind, name: group.name, type: group.type, label: group.label || group.name,
        parent: group.parent === null || group.parent === undefined ? null : keyOfId.get(group.parent) ?? null,
        signature: group.signature ?? null, repeat: group.repeat ?? null });
    }
    for (const node of graph.nodes) nodeGroup.set(node.id, node.group ? keyOfId.get(node.group) ?? null : null);
  } else {
    for (const node of graph.nodes) {
      const module = moduleOf(node);
      if (!module) {
        nodeGroup.set(node.id, null);
        continue;
      }
      const parts = module.split(".");
      for (let depth = 1; depth <= parts.length; depth++) {
        const key = parts.slice(0, depth).join(".");
        if (!groups.has(key)) {
          add({ key, id: key, kind: "module", name: key, type: null, label: parts[depth - 1],
            parent: depth > 1 ? parts.slice(0, depth - 1).join(".") : null, signature: null, repeat: null });
        }
      }
      nodeGroup.set(node.id, module);
    }
  }
  for (const group of groups.values()) if (group.parent !== null && groups.has(group.parent)) groups.get(group.parent).children.push(group.key);
  const nodesById = new Map(graph.nodes.map((node) => [node.id, node]));
  for (const node of graph.nodes) {
    let key = nodeGroup.get(node.id);
    if (key === null || key === undefined) continue;
    groups.get(key).nodes.push(node.id);
    for (; key !== null && groups.has(key); key = groups.get(key).parent) {
      const group = groups.get(key);
      group.size += 1;
      if (node.op) group.ops += 1;
      // parameters and buffers (a buffer is a named constant: it needs no gradient)
      if (node.kind === "parameter" || ((node.kind === "leaf" || node.kind === "constant") && node.name)) {
        group.params.push({ name: node.name ? node.name.slice(node.name.lastIndexOf(".") + 1) : node.id, shape: node.shape });
      }
    }
  }
  // drawing order: by first member node; groups without nodes (nothing recorded inside) are dropped
  const position = new Map(graph.nodes.map((node, index) => [node.id, index]));
  const first = (key) => {
    const group = groups.get(key);
    const own = group.nodes.length ? position.get(group.nodes[0]) : Infinity;
    return Math.min(own, ...group.children.map(first));
  };
  for (const [key, group] of [...groups]) if (group.size === 0) groups.delete(key);
  for (const group of groups.values()) {
    group.children = group.children.filter((child) => groups.has(child));
    group.children.sort((a, b) => first(a) - first(b));
    group.signature ??= derivedSignature(group, groups, nodesById);
  }
  let roots = [...groups.values()].filter((group) => group.parent === null || !groups.has(group.parent))
    .map((group) => group.key).sort((a, b) => first(a) - first(b));
  const rootNodes = graph.nodes.filter((node) => nodeGroup.get(node.id) === null).map((node) => node.id);
  // too many top-level items (loose nodes, groups) to lay out at once: runs of them become chunks
  const items = [...roots.map((key) => ({ key, at: first(key) })), ...rootNodes.map((id) => ({ id, at: position.get(id) }))]
    .sort((a, b) => a.at - b.at);
  if (graph.nodes.length > GROUP_ABOVE && items.length > 2 * CHUNK) {
    roots = [];
    for (let start = 0; start < items.length; start += CHUNK) {
      const key = `chunk:${start / CHUNK}`;
      const chunk = add({ key, id: key, kind: "chunk", name: key, type: null, label: "", parent: null, signature: null, repeat: null });
      for (const item of items.slice(start, start + CHUNK)) {
        if (item.key !== undefined) {
          groups.get(item.key).parent = key;
          chunk.children.push(item.key);
        } else {
          chunk.nodes.push(item.id);
          nodeGroup.set(item.id, key);
        }
      }
      roots.push(key);
    }
    const chunkOps = new Map(roots.map((key) => [key, new Map()]));
    const span = new Map();
    for (const node of graph.nodes) {
      let top = nodeGroup.get(node.id);
      while (groups.get(top)?.parent !== null && groups.get(top)?.parent !== undefined) top = groups.get(top).parent;
      const chunk = groups.get(top);
      chunk.size += 1;
      const at = position.get(node.id);
      span.set(top, [Math.min(span.get(top)?.[0] ?? at, at), Math.max(span.get(top)?.[1] ?? at, at)]);
      if (node.op) {
        chunk.ops += 1;
        chunkOps.get(top).set(node.op, (chunkOps.get(top).get(node.op) ?? 0) + 1);
      }
    }
    for (const key of roots) {
      const common = [...chunkOps.get(key)].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([op, count]) => `${op}×${count}`).join(" ");
      groups.get(key).label = `nodes ${span.get(key)[0]}–${span.get(key)[1]}: ${common}`;
    }
  }
  findRepeats(groups, roots);
  return { groups, roots, nodeGroup };
}

/** A group's structure when the graph does not say: its type, its ops in order, its children's. */
function derivedSignature(group, groups, nodesById) {
  const ops = group.nodes.map((id) => {
    const node = nodesById.get(id);
    return `${node.op ?? node.kind}${shapeText(node.shape)}`;
  }).join(",");
  return `${group.type ?? ""}[${ops}](${group.children.map((child) => derivedSignature(groups.get(child), groups, nodesById)).join(";")})`;
}

/** Mark runs of consecutive identical siblings: ``group.run = {first, count, index}``. */
function findRepeats(groups, roots) {
  const mark = (keys) => {
    let runStart = 0;
    for (let i = 1; i <= keys.length; i++) {
      const previous = groups.get(keys[i - 1]);
      const current = i < keys.length ? groups.get(keys[i]) : null;
      const same = current && current.kind !== "chunk" && current.signature === previous.signature
        && (current.repeat ? current.repeat.index > 0 : true);
      if (!same) {
        const count = i - runStart;
        for (let j = runStart; j < i; j++) groups.get(keys[j]).run = count > 1 ? { first: keys[runStart], count, index: j - runStart } : null;
        runStart = i;
      }
    }
    for (const key of keys) mark(groups.get(key).children);
  };
  mark(roots);
}

/** The collapsed list a graph is first drawn with: every top-level group once it passes GROUP_ABOVE nodes. */
export function defaultCollapsed(graph, tree = groupTree(graph)) {
  return graph.nodes.length > GROUP_ABOVE ? [...tree.roots] : [];
}

/** Whether group ``key`` is hidden inside a collapsed group. */
function insideCollapsed(tree, key, collapsed) {
  for (let parent = tree.groups.get(key)?.parent; parent !== null && parent !== undefined; parent = tree.groups.get(parent)?.parent) {
    if (collapsed.has(parent)) return true;
  }
  return false;
}

/** Open ``key`` one level: it is drawn with its nodes, each of its child groups collapsed. */
export function expandGroup(collapsed, key, tree) {
  const next = new Set(collapsed);
  next.delete(key);
  for (const child of tree.groups.get(key)?.children ?? []) next.add(child);
  return [...next];
}

/** Close ``key``: one box again (what was collapsed inside it is forgotten). */
export function collapseGroup(collapsed, key, tree) {
  const next = new Set([...collapsed].filter((other) => !isInside(tree, other, key)));
  next.add(key);
  return [...next];
}

/** Whether group ``key`` lies inside group ``ancestor`` (not itself). */
export function isInside(tree, key, ancestor) {
  for (let parent = tree.groups.get(key)?.parent; parent !== null && parent !== undefined; parent = tree.groups.get(parent)?.parent) {
    if (parent === ancestor) return true;
  }
  return false;
}

/** The groups around a node or group, outermost first. */
export function ancestors(tree, key) {
  const path = [];
  for (let current = key; current !== null && current !== undefined && tree.groups.has(current); current = tree.groups.get(current).parent) path.unshift(current);
  return path;
}

/** The collapsed list with everything around node ``nodeId`` opened one level at a time. */
export function reveal(collapsed, nodeId, tree) {
  let next = [...collapsed];
  for (const key of ancestors(tree, tree.nodeGroup.get(nodeId))) {
    if (next.includes(key) || insideCollapsed(tree, key, new Set(next))) next = expandGroup(next, key, tree);
  }
  return next;
}

/**
 * The breadcrumb: the path to the deepest open group when every open group lies on it
 * (groups opened one inside another), else the path all open groups share (none for a
 * graph drawn fully open).
 */
export function openPath(tree, collapsed) {
  const closed = new Set(collapsed);
  const paths = [];
  const visit = (keys) => {
    for (const key of keys) {
      const group = tree.groups.get(key);
      if (closed.has(key)) continue;
      paths.push(ancestors(tree, key));
      visit(group.children);
    }
  };
  visit(tree.roots);
  if (!paths.length) return [];
  const prefix = (short, long) => short.every((key, i) => long[i] === key);
  const deepest = paths.reduce((a, b) => (b.length > a.length ? b : a));
  if (paths.every((path) => prefix(path, deepest))) return deepest;
  return paths.reduce((common, path) => {
    let length = 0;
    while (length < common.length && common[length] === path[length]) length++;
    return common.slice(0, length);
  });
}

/** What the drawing colours nodes by: the gradient, or the tangent in a forward replay (jvp.js's forwardGraph). */
export function sizeKey(graph) {
  return graph.flow === "forward" ? "tangent" : "grad";
}

/** log10 of a gradient's RMS (``key`` "tangent": of forward AD's tangent) and whether it holds NaN/inf; null before backward. */
export function gradMagnitude(node, key = "grad") {
  const grad = node[key];
  if (!grad) return null;
  const bad = Boolean(grad.nan_count || grad.inf_count);
  const count = (grad.shape ?? []).reduce((product, size) => product * size, 1);
  if (grad.norm === null || grad.norm === undefined || count === 0) return { log: null, bad };
  const rms = grad.norm / Math.sqrt(count);
  return { log: rms > 0 ? Math.log10(rms) : null, bad };
}

/** The [low, high] log10 range of the gradient sizes, or null when none were recorded. */
export function colourScale(graph) {
  const key = sizeKey(graph);
  const values = graph.nodes.map((node) => gradMagnitude(node, key)).filter((m) => m && m.log !== null).map((m) => m.log);
  if (!values.length) return null;
  const low = Math.min(...values);
  const high = Math.max(...values);
  return [low, high > low ? high : low + 1];
}

export function colourFor(value, [low, high]) {
  const index = Math.floor(((value - low) / (high - low)) * PALETTE.length);
  return PALETTE[Math.min(PALETTE.length - 1, Math.max(0, index))];
}

/** The legend's cells: the value at the middle of each colour, as text. */
export function legendCells(scale) {
  return PALETTE.map((colour, position) => ({
    colour, label: (10 ** (scale[0] + ((scale[1] - scale[0]) * (position + 0.5)) / PALETTE.length)).toExponential(1),
  }));
}

function paramsLine(group) {
  if (!group.params.length) return null;
  const shown = group.params.slice(0, 3).map((param) => `${param.name} ${shapeText(param.shape)}`);
  const more = group.params.length - shown.length;
  return `${shown.join(" · ")}${more > 0 ? ` · +${more} more` : ""}`;
}

/**
 * What is drawn and its DOT source.
 * @param {object} graph Graph JSON
 * @param {{collapsed?: string[], unfolded?: string[], tree?: object, rankdir?: string}} options
 *   collapsed: group keys drawn as one box; unfolded: first keys of runs drawn one by one
 * @returns {{dot: string, tree: object, items: Map<string, {kind: string, key?: string, nodes: string[]}>,
 *   itemOfNode: Map<string, string>, clusters: Map<string, string>, visible: number}}
 *   items by DOT id (node ids stay as they are; boxes are "grp<i>"); clusters: DOT cluster name -> group key
 */
export function graphDot(graph, { collapsed = [], unfolded = [], tree = groupTree(graph), rankdir = "TB" } = {}) {
  const closed = new Set(collapsed.filter((key) => tree.groups.has(key)));
  const open = new Set(unfolded);
  const nodesById = new Map(graph.nodes.map((node) => [node.id, node]));
  const items = new Map();
  const itemOfNode = new Map();
  const itemOfGroup = new Map();
  // the outermost collapsed group around each node (folded runs share their first group's box)
  const boxOf = (key) => {
    let box = null;
    for (let current = key; current !== null && current !== undefined && tree.groups.has(current); current = tree.groups.get(current).parent) {
      if (closed.has(current)) box = current;
    }
    if (box === null) return null;
    const run = tree.groups.get(box).run;
    if (run && !open.has(run.first) && runCollapsed(tree, run, closed)) return run.first;
    return box;
  };
  for (const node of graph.nodes) {
    const box = boxOf(tree.nodeGroup.get(node.id));
    if (box === null) {
      items.set(node.id, { kind: "node", nodes: [node.id] });
      itemOfNode.set(node.id, node.id);
      continue;
    }
    if (!itemOfGroup.has(box)) {
      const id = `grp${itemOfGroup.size}`;
      itemOfGroup.set(box, id);
      items.set(id, { kind: "group", key: box, nodes: [] });
    }
    items.get(itemOfGroup.get(box)).nodes.push(node.id);
    itemOfNode.set(node.id, itemOfGroup.get(box));
  }

  const scale = colourScale(graph);
  const uses = usesOf(graph);
  // shared inputs: the edge to the first reader stays, the others become a line on the reader
  const sharedReaders = new Map();
  const firstReader = new Map();
  const edgeLines = [];
  const drawn = new Set();
  for (const edge of graph.edges) {
    const source = itemOfNode.get(edge.source);
    const target = itemOfNode.get(edge.target);
    if (source === undefined || target === undefined || source === target) continue;
    const sourceNode = nodesById.get(edge.source);
    const shared = items.get(source).kind === "node" && (uses.get(edge.source) ?? 0) > 1
      && (sourceNode.kind === "parameter" || (sourceNode.kind === "leaf" && sourceNode.requires_grad));
    if (shared) {
      if (!firstReader.has(source)) firstReader.set(source, target);
      else if (firstReader.get(source) !== target) {
        if (!sharedReaders.has(target)) sharedReaders.set(target, new Set());
        sharedReaders.get(target).add(source);
        continue;
      }
    }
    const key = `${source}->${target}`;
    if (drawn.has(key)) continue;
    drawn.add(key);
    // shapes on edges only in small drawings: Graphviz lays each edge label out as a node of its own
    edgeLines.push(items.size <= EDGE_LABELS_UP_TO ? `  ${quote(source)} -> ${quote(target)} [label=${quote(edgeLabel(edge.shape))}];`
      : `  ${quote(source)} -> ${quote(target)};`);
  }

  const nodeLine = (id, indent) => {
    const item = items.get(id);
    if (item.kind === "group") return `${indent}${quote(id)} [label=${quote(groupLabel(tree, item.key, closed))}, ${STYLES[tree.groups.get(item.key).kind === "chunk" ? "chunk" : "group"]}${groupColour(item, nodesById, scale, sizeKey(graph))}];`;
    const node = nodesById.get(id);
    const lines = [shortName(nodeTitle(node))];
    if (node.op && node.op !== lines[0]) lines.push(node.op);
    const detail = node.kind === "constant" ? valueOrShape(node).replace(/^= /, "") : valueOrShape(node);
    if (!lines[0].endsWith(detail)) lines.push(detail); // "input (4, 8)", a number: said once
    if ((uses.get(id) ?? 0) > 1 && firstReader.has(id)) lines.push(`used ${uses.get(id)}×`);
    for (const reader of sharedReaders.get(id) ?? []) lines.push(`+ ${shortName(nodeTitle(nodesById.get(reader)), 18)} (shared)`);
    let extra = "";
    const magnitude = scale ? gradMagnitude(node, sizeKey(graph)) : null;
    if (magnitude?.bad) {
      extra = `, color="${ALARM}", penwidth=3, fontcolor="${ALARM}"`;
      lines.push(`${sizeKey(graph)} has NaN/inf`);
    } else if (magnitude && magnitude.log !== null) {
      extra = `, color="${colourFor(magnitude.log, scale)}", penwidth=3`;
    }
    const style = node.kind === "constant" && (node.shape ?? []).length ? STYLES.tensorConstant : STYLES[node.kind] ?? STYLES.op;
    return `${indent}${quote(id)} [label=${quote(lines.join("\n"))}, ${style}${extra}];`;
  };

  // expanded groups are clusters, nested as the groups are
  const clusters = new Map();
  const lines = ["digraph vizgrad {",
    `  graph [rankdir=${rankdir === "LR" ? "LR" : "TB"}, fontname=Helvetica, fontsize=12, nodesep=0.25, ranksep=0.35${items.size > 400 ? ", splines=false, nslimit=1, nslimit1=1, mclimit=0.2, remincross=false" : ""}];`,
    "  node [fontname=Helvetica, fontsize=12, penwidth=1.2, height=0.3];",
    '  edge [fontname=Helvetica, fontsize=10, color="#666666", arrowsize=0.7, fontcolor="#52606d"];'];
  const placed = new Set();
  const children = new Map();
  const loose = [];
  for (const [id, item] of items) {
    const around = item.kind === "group" ? tree.groups.get(item.key).parent : tree.nodeGroup.get(id);
    const container = openContainer(tree, around, closed);
    if (container === null) loose.push(id);
    else {
      if (!children.has(container)) children.set(container, []);
      children.get(container).push(id);
    }
  }
  const emit = (key, indent) => {
    const name = `cluster_${clusters.size}`;
    clusters.set(name, key);
    const group = tree.groups.get(key);
    lines.push(`${indent}subgraph ${quote(name)} {`);
    lines.push(`${indent}  label=${quote(`${clusterTitle(group)} ▾`)}; style="rounded,dashed"; color="#9e9e9e"; fontsize=12; fontcolor="#3e4c59";`);
    for (const id of children.get(key) ?? []) {
      lines.push(nodeLine(id, `${indent}  `));
      placed.add(id);
    }
    for (const child of group.children) if (!closed.has(child) && hasContent(child)) emit(child, `${indent}  `);
    lines.push(`${indent}}`);
  };
  const hasContent = (key) => (children.get(key)?.length ?? 0) > 0 || tree.groups.get(key).children.some((child) => !closed.has(child) && hasContent(child));
  for (const key of tree.roots) if (!closed.has(key) && hasContent(key)) emit(key, "  ");
  for (const id of loose) if (!placed.has(id)) lines.push(nodeLine(id, "  "));
  lines.push(...edgeLines, "}");
  return { dot: `${lines.join("\n")}\n`, tree, items, itemOfNode, clusters, visible: items.size, scale };
}

/** The group keys of a run of identical siblings. */
export function runMembers(tree, run) {
  const parent = tree.groups.get(run.first).parent;
  const siblings = parent === null || !tree.groups.has(parent) ? tree.roots : tree.groups.get(parent).children;
  const start = siblings.indexOf(run.first);
  return siblings.slice(start, start + run.count);
}

function runCollapsed(tree, run, closed) {
  return runMembers(tree, run).every((key) => closed.has(key));
}

/** The innermost expanded group that holds ``key`` (itself included), or null. */
function openContainer(tree, key, closed) {
  for (let current = key; current !== null && current !== undefined && tree.groups.has(current); current = tree.groups.get(current).parent) {
    if (!closed.has(current)) return current;
  }
  return null;
}

/** An open group's title: a module's name and its type label ("fc1 · Linear(784→512)"), else its label. */
function clusterTitle(group) {
  if (group.kind !== "module" || !group.label || group.label === group.name) return shortName(group.label || group.name, 48);
  return `${shortName(group.name, 30)} · ${shortName(group.label, 36)}`;
}

function groupLabel(tree, key, closed) {
  const group = tree.groups.get(key);
  const run = group.run && runCollapsed(tree, group.run, closed) ? group.run : null;
  const folded = run && run.first === key;
  const title = folded ? `${group.type ?? shortName(group.name)} ×${run.count}` : shortName(group.label, 36);
  const lines = [title];
  if (folded) lines.push(`${shortName(group.name, 30)} … ${tree.groups.get(runMembers(tree, run).at(-1)).name.split(".").pop()}`);
  else if (group.kind !== "chunk" && group.label !== group.name) lines.push(shortName(group.name, 36));
  const params = paramsLine(group);
  if (params) lines.push(params);
  lines.push(`${group.ops} op${group.ops === 1 ? "" : "s"} · click to open`);
  return lines.join("\n");
}

function groupColour(item, nodesById, scale, key) {
  if (!scale) return "";
  let worst = null;
  for (const id of item.nodes) {
    const magnitude = gradMagnitude(nodesById.get(id), key);
    if (magnitude?.bad) return `, color="${ALARM}", penwidth=3`;
    if (magnitude && magnitude.log !== null && (worst === null || magnitude.log > worst)) worst = magnitude.log;
  }
  return worst === null ? "" : `, color="${colourFor(worst, scale)}", penwidth=3`;
}

/** Nodes whose name, label, op or id contains ``query`` (case-insensitive): exact matches first, then prefixes. */
export function searchNodes(graph, query, limit = 12) {
  const needle = query.trim().toLowerCase();
  if (!needle) return [];
  const scored = [];
  for (const node of graph.nodes) {
    const fields = [node.name, node.label, node.op, node.id].filter(Boolean).map((text) => String(text).toLowerCase());
    const exact = fields.some((text) => text === needle);
    const start = fields.some((text) => text.startsWith(needle) || text.includes(`.${needle}`));
    if (exact || start || fields.some((text) => text.includes(needle))) scored.push([exact ? 0 : start ? 1 : 2, node]);
  }
  return scored.sort((a, b) => a[0] - b[0]).slice(0, limit).map(([, node]) => node);
}
