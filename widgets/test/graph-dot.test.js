import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CHUNK, collapseGroup, defaultCollapsed, edgeLabel, expandGroup, graphDot, groupTree, openPath, quote, reveal, searchNodes, shortName,
} from "../src/graph-dot.js";

const node = (id, extra = {}) => ({ id, kind: "op", label: "", shape: [4, 8], dtype: "float32", op: null, name: null, module: "",
  value: null, grad: null, backward_index: null, ...extra });
const edge = (source, target, index = 0) => ({ source, target, index, shape: [4, 8] });

/** x -> embed -> 4 identical blocks (each: Linear with a parameter, Tanh) -> a loss, with the Graph JSON groups. */
function blocksGraph(blocks = 4) {
  const nodes = [node("n0", { kind: "leaf", label: "x", name: "x" })];
  const edges = [];
  const groups = [{ id: "g0", kind: "module", name: "blocks", type: "Sequential", label: "Sequential", parent: null, signature: "S", repeat: null }];
  let previous = "n0";
  for (let b = 0; b < blocks; b++) {
    groups.push({ id: `g${2 * b + 1}`, kind: "module", name: `blocks.${b}`, type: "Block", label: "Block(8)", parent: "g0", signature: "B",
      repeat: { count: blocks, index: b } });
    groups.push({ id: `g${2 * b + 2}`, kind: "module", name: `blocks.${b}.fc`, type: "Linear", label: "Linear(8→8)", parent: `g${2 * b + 1}`,
      signature: "L", repeat: null });
    const k = nodes.length;
    nodes.push(node(`n${k}`, { kind: "parameter", name: `blocks.${b}.fc.weight`, label: "weight", shape: [8, 8], group: `g${2 * b + 2}` }),
      node(`n${k + 1}`, { op: "Linear", label: "Linear", group: `g${2 * b + 2}` }),
      node(`n${k + 2}`, { op: "Tanh", label: "Tanh", group: `g${2 * b + 1}` }));
    edges.push(edge(previous, `n${k + 1}`), edge(`n${k}`, `n${k + 1}`, 1), edge(`n${k + 1}`, `n${k + 2}`));
    previous = `n${k + 2}`;
  }
  const last = nodes.length;
  nodes.push(node(`n${last}`, { kind: "constant", label: "2", shape: [], value: { sample: [2] } }),
    node(`n${last + 1}`, { kind: "output", op: "Mul", label: "Mul", shape: [], value: { sample: [0.125] } }));
  edges.push(edge(previous, `n${last + 1}`), edge(`n${last}`, `n${last + 1}`, 1));
  return { schema: "vizgrad.graph", version: 1, nodes, edges, groups, backward_order: [], steps: [], truncated: false };
}

test("groups come from the graph's groups list, keyed by module name, with runs of identical blocks", () => {
  const tree = groupTree(blocksGraph());
  assert.deepEqual(tree.roots, ["blocks"]);
  assert.deepEqual(tree.groups.get("blocks").children, ["blocks.0", "blocks.1", "blocks.2", "blocks.3"]);
  assert.equal(tree.groups.get("blocks.2").run.count, 4);
  assert.equal(tree.groups.get("blocks").size, 12);
  assert.deepEqual(tree.groups.get("blocks.1").params, [{ name: "weight", shape: [8, 8] }]);
  assert.equal(tree.nodeGroup.get("n5"), "blocks.1.fc");
});

test("without a groups list, modules come from each node's module and a parameter's or buffer's name", () => {
  const graph = blocksGraph(2);
  delete graph.groups;
  for (const each of graph.nodes) {
    delete each.group;
    if (each.op === "Linear") each.module = `blocks.${each.id === "n2" ? 0 : 1}.fc`;
  }
  graph.nodes.push(node("n99", { kind: "leaf", name: "blocks.0.norm.running_mean", shape: [8] }));
  const tree = groupTree(graph);
  assert.deepEqual([...tree.groups.keys()].sort(), ["blocks", "blocks.0", "blocks.0.fc", "blocks.0.norm", "blocks.1", "blocks.1.fc"]);
  assert.equal(tree.nodeGroup.get("n1"), "blocks.0.fc");        // the parameter, by its name
  assert.equal(tree.nodeGroup.get("n99"), "blocks.0.norm");     // a buffer, by its name
});

test("large graphs start collapsed; a click opens one level, the breadcrumb goes back", () => {
  const small = blocksGraph(4);
  assert.deepEqual(defaultCollapsed(small), []);               // 15 nodes: drawn open
  const graph = blocksGraph(14);
  const tree = groupTree(graph);
  let collapsed = defaultCollapsed(graph, tree);
  assert.deepEqual(collapsed, ["blocks"]);
  collapsed = expandGroup(collapsed, "blocks", tree);
  assert.equal(collapsed.length, 14);                          // each block is a box
  assert.deepEqual(openPath(tree, collapsed), ["blocks"]);
  collapsed = expandGroup(collapsed, "blocks.3", tree);
  assert.ok(collapsed.includes("blocks.3.fc") && !collapsed.includes("blocks.3"));
  assert.deepEqual(openPath(tree, collapsed), ["blocks", "blocks.3"]);
  assert.deepEqual(collapseGroup(collapsed, "blocks", tree), ["blocks"]);
  const revealed = reveal(["blocks"], "n20", tree);            // the Linear of blocks.6
  assert.ok(!revealed.includes("blocks") && !revealed.includes("blocks.6") && !revealed.includes("blocks.6.fc"));
  assert.ok(revealed.includes("blocks.5"));
});

test("a run of collapsed identical blocks is one box; an open group is a cluster; scalars show values", () => {
  const graph = blocksGraph(4);
  const tree = groupTree(graph);
  const open = expandGroup(["blocks"], "blocks", tree);
  const folded = graphDot(graph, { collapsed: open, tree });
  const boxes = [...folded.items.values()].filter((item) => item.kind === "group");
  assert.equal(boxes.length, 1);
  assert.equal(boxes[0].nodes.length, 12);                     // every block's nodes in the one box
  assert.match(folded.dot, /label="Block ×4\\nblocks.0 … 3\\nweight \(8, 8\)/);
  assert.match(folded.dot, /subgraph "cluster_0" \{\n\s+label="blocks · Sequential ▾"/);   // an open module: name and type
  assert.equal(folded.clusters.get("cluster_0"), "blocks");
  assert.match(folded.dot, /"n14" \[label="Mul\\n= 0.125"/);  // a 0-d output: its value, not "()"
  assert.match(folded.dot, /"n13" \[label="2", shape=plain/);    // a number: its value, said once
  const unfolded = graphDot(graph, { collapsed: open, unfolded: ["blocks.0"], tree });
  assert.equal([...unfolded.items.values()].filter((item) => item.kind === "group").length, 4);
});

test("a module's buffers (named constants) are listed in its box; data is a dashed box labelled once", () => {
  const graph = blocksGraph(1);
  graph.nodes.push(node("n99", { kind: "constant", name: "blocks.0.fc.running_mean", label: "blocks.0.fc.running_mean", shape: [8], group: "g2" }),
    node("n98", { kind: "constant", label: "input (4, 8)" }));
  graph.edges.push(edge("n99", "n2", 2), edge("n98", "n2", 3));
  const tree = groupTree(graph);
  assert.deepEqual(tree.groups.get("blocks.0.fc").params, [{ name: "weight", shape: [8, 8] }, { name: "running_mean", shape: [8] }]);
  const { dot } = graphDot(graph, { tree });
  assert.match(dot, /"n98" \[label="input \(4, 8\)", shape=box, style="rounded,dashed"/);
});

test("a shared parameter is drawn once: one edge, a 'used N×' badge, a line on its other readers", () => {
  const nodes = [node("n0", { kind: "parameter", name: "cell.weight", label: "weight", requires_grad: true, uses: 3 })];
  const edges = [];
  for (let step = 1; step <= 3; step++) {
    nodes.push(node(`n${step}`, { op: "MatMul", label: "MatMul" }));
    edges.push(edge("n0", `n${step}`, 1));
    if (step > 1) edges.push(edge(`n${step - 1}`, `n${step}`));
  }
  const { dot } = graphDot({ nodes, edges, backward_order: [] });
  assert.equal((dot.match(/"n0" ->/g) ?? []).length, 1);
  assert.match(dot, /"n0" \[label="cell.weight\\n\(4, 8\)\\nused 3×"/);
  assert.match(dot, /"n2" \[label="MatMul\\n\(4, 8\)\\n\+ cell.weight \(shared\)"/);
});

test("many top-level items become chunks of consecutive items", () => {
  const nodes = [];
  const edges = [];
  for (let i = 0; i < 3 * CHUNK; i++) {
    nodes.push(node(`n${i}`, { op: i % 2 ? "Tanh" : "Mul", label: "op" }));
    if (i) edges.push(edge(`n${i - 1}`, `n${i}`));
  }
  const graph = { nodes, edges, backward_order: [] };
  const tree = groupTree(graph);
  assert.deepEqual(tree.roots, ["chunk:0", "chunk:1", "chunk:2"]);
  const drawing = graphDot(graph, { collapsed: defaultCollapsed(graph, tree), tree });
  assert.equal(drawing.visible, 3);
  assert.match(drawing.dot, /nodes 0–59: Mul×30 Tanh×30/);
  const blocks = blocksGraph(3 * CHUNK);       // 180 top-level blocks... inside one Sequential
  blocks.groups[0].parent = null;
  for (const group of blocks.groups) if (group.parent === "g0") group.parent = null; // ...now each at the top
  blocks.groups.shift();
  const top = groupTree(blocks);
  assert.equal(top.roots.length, 4);            // the input and 180 blocks, the constant, the output: 183 items
  assert.deepEqual(top.groups.get("chunk:0").children.slice(0, 2), ["blocks.0", "blocks.1"]);
  assert.deepEqual(top.groups.get("chunk:0").nodes, ["n0"]);
  assert.equal(top.groups.get("blocks.0").parent, "chunk:0");
});

test("search finds nodes by name and op, exact matches first", () => {
  const graph = blocksGraph(2);
  assert.deepEqual(searchNodes(graph, "tanh").map((found) => found.id), ["n3", "n6"]);
  assert.deepEqual(searchNodes(graph, "blocks.1.fc.weight").map((found) => found.id), ["n4"]);
  assert.deepEqual(searchNodes(graph, "  "), []);
});

test("user strings cannot break out of DOT literals; long names keep their end", () => {
  assert.equal(quote('a"b\\c\nd'), '"a\\"b\\\\c\\nd"');
  assert.equal(shortName("encoder.layers.11.self_attention.q_proj.weight", 24), "…q_proj.weight");
});

test("a composite function (a function group) is one box that opens like a module", () => {
  const nodes = [node("n0", { kind: "leaf", label: "x", name: "x" })];
  const edges = [];
  const ops = ["Mean", "Sub", "Pow", "Mean", "Add", "Rsqrt", "Mul", "Mul", "Add"];
  ops.forEach((op, i) => {
    nodes.push(node(`n${i + 1}`, { op, label: op, group: "g1" }));
    edges.push(edge(`n${i}`, `n${i + 1}`));
  });
  const graph = {
    nodes, edges, backward_order: [],
    groups: [
      { id: "g0", kind: "module", name: "norm", type: "LayerNorm", label: "LayerNorm(8)", parent: null, signature: "N", repeat: null },
      { id: "g1", kind: "function", name: "layer_norm", type: "layer_norm", label: "layer_norm", parent: "g0", signature: "F", repeat: null },
    ],
  };
  const tree = groupTree(graph);
  assert.deepEqual(tree.groups.get("norm").children, ["g1"]);  // a function group is keyed by its id
  const open = expandGroup(["norm"], "norm", tree);
  assert.deepEqual(open, ["g1"]);
  const drawing = graphDot(graph, { collapsed: open, tree });
  assert.equal([...drawing.items.values()].filter((item) => item.kind === "group").length, 1);
  assert.match(drawing.dot, /label="layer_norm\\n9 ops · click to open"/);
  const inside = graphDot(graph, { collapsed: expandGroup(open, "g1", tree), tree });
  assert.equal(inside.visible, 10);                             // opened: its nine primitive ops and the input
});

test("edges say a scalar is a scalar: Python's () would read as a zero", () => {
  assert.equal(edgeLabel([]), "scalar");
  assert.equal(edgeLabel([3]), "(3,)");
  assert.equal(edgeLabel([2, 3]), "(2, 3)");
  assert.equal(edgeLabel(undefined), "");
  const graph = blocksGraph(1);
  const mul = graph.nodes.at(-1).id;
  const constant = graph.nodes.at(-2).id;
  graph.edges.find((e) => e.source === constant).shape = [];
  assert.match(graphDot(graph).dot, new RegExp(`"${constant}" -> "${mul}" \\[label="scalar"\\]`));
  assert.doesNotMatch(graphDot(graph).dot, /label="\(\)"/);
});

test("a fold of time steps (groups keyed by id) names its last step, not its id", () => {
  const groups = [{ id: "g0", kind: "module", name: "rnn", type: "RNN", label: "RNN(4→8)", parent: null, signature: "R", repeat: null }];
  const nodes = [node("n0", { kind: "leaf", label: "x", name: "x" })];
  const edges = [];
  for (let t = 0; t < 4; t++) {
    groups.push({ id: `g${t + 1}`, kind: "step", name: `rnn.t${t}`, type: "step", label: `t=${t}`, parent: "g0", signature: "S",
      repeat: { count: 4, index: t } });
    nodes.push(node(`n${t + 1}`, { op: "Tanh", label: "Tanh", group: `g${t + 1}` }));
    edges.push(edge(`n${t}`, `n${t + 1}`));
  }
  const graph = { schema: "vizgrad.graph", version: 3, nodes, edges, groups, backward_order: [], steps: [], truncated: false };
  const tree = groupTree(graph);
  const { dot } = graphDot(graph, { collapsed: ["g1", "g2", "g3", "g4"], tree });
  assert.match(dot, /label="step ×4\\nrnn.t0 … t3\\n/);
});
