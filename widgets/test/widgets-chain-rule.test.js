import assert from "node:assert/strict";
import { test } from "node:test";

import {
  chainRule, derivativeOf, gradientFormula, nodeRef, renameSymbols, sampleText, statsSummary, targetText, userName,
} from "../src/widgets/chain-rule.js";

function stats(values, shape = [values.length], extra = {}) {
  const finite = values.filter((v) => v !== null);
  const norm = Math.sqrt(finite.reduce((sum, v) => sum + v * v, 0));
  return {
    shape, mean: finite.reduce((a, b) => a + b, 0) / finite.length, std: 0, min: Math.min(...finite), max: Math.max(...finite),
    norm, nan_count: 0, inf_count: 0, histogram: [], bin_edges: [], sample: values.slice(0, 6), ...extra,
  };
}

function node(id, fields) {
  return { id, kind: "op", label: "", shape: [2], dtype: "float32", device: "cpu", op: null, name: null, module: "",
    source: null, requires_grad: true, value: null, grad: null, backward_index: null, ...fields };
}

// y = sum(tanh(a * b)) as vizgrad.trace records it (see tests/test_widgets_graph.py)
const graph = {
  schema: "vizgrad.graph", version: 1, truncated: false, steps: [],
  nodes: [
    node("n0", { kind: "leaf", label: "a", name: "a", grad: stats([0.62, -0.14]) }),
    node("n1", { kind: "leaf", grad: stats([0.21, 0.07]) }),
    node("n2", { op: "Mul", label: "Mul", grad: stats([0.41, 0.07]) }),
    node("n3", { op: "Tanh", label: "Tanh", grad: stats([1, 1]) }),
    node("n4", { kind: "output", op: "Sum", label: "Sum", shape: [], grad: stats([1], []) }),
    node("n5", { kind: "leaf", requires_grad: false, shape: [1] }),
  ],
  edges: [
    { source: "n0", target: "n2", index: 0, shape: [2], grad: stats([0.62, -0.14]) },
    { source: "n1", target: "n2", index: 1, shape: [2], grad: stats([0.21, 0.07]) },
    { source: "n2", target: "n3", index: 0, shape: [2], grad: stats([0.41, 0.07]) },
    { source: "n3", target: "n4", index: 0, shape: [2], grad: null },
  ],
  backward_order: ["n4", "n3", "n2", "n1", "n0"],
};

test("the chain rule at Mul: incoming gradient, forward formula, one outgoing gradient per input", () => {
  const rule = chainRule(graph, "n2");
  assert.equal(rule.title, "Mul");
  // the unnamed leaf and the unnamed output are written by op (or kind) and id, never as a generic b or y
  assert.equal(rule.forward, "[Mul n2] = a · [leaf n1]");
  assert.equal(rule.known, true);
  assert.equal(rule.incoming.shape, "(2,)");
  assert.equal(rule.incoming.sample, "[0.41, 0.07]");
  assert.equal(rule.incoming.label, "∂L/∂[Mul n2] (the gradient this op's output received)");
  assert.deepEqual(rule.outgoing.map((o) => [o.name, o.source, o.formula, o.exact, o.target]), [
    ["a", "n0", "∂L/∂a = ∂L/∂[Mul n2] ⊙ [leaf n1]", true, "to a (n0)"],
    ["[leaf n1]", "n1", "∂L/∂[leaf n1] = ∂L/∂[Mul n2] ⊙ a", true, "to [leaf n1]"],
  ]);
  assert.equal(rule.outgoing[0].sourceTitle, "a");
  assert.equal(rule.outgoing[0].sample, "[0.62, -0.14]");
  assert.match(rule.outgoing[0].summary, /^mean 0\.24 · norm 0\.6356$/);
});

test("local derivatives of common ops read as formulas", () => {
  assert.equal(gradientFormula("Tanh", 0, "x"), "∂L/∂x = ∂L/∂y ⊙ (1 − y²)");
  assert.equal(gradientFormula("Add", 1, "b"), "∂L/∂b = ∂L/∂y");
  assert.equal(gradientFormula("Div", 1, "b"), "∂L/∂b = ∂L/∂y ⊙ (−a/b²)");
  assert.equal(gradientFormula("Log", 0, "x"), "∂L/∂x = ∂L/∂y ⊙ 1/x");
  assert.equal(gradientFormula("Sub", 1, "b"), "∂L/∂b = −∂L/∂y");
  assert.equal(gradientFormula("MatMul", 1, "B"), "∂L/∂B = Aᵀ @ ∂L/∂Y");
  assert.equal(gradientFormula("Linear", 2, "b"), "∂L/∂b = ∂L/∂y summed over the batch");
  assert.equal(gradientFormula("Sigmoid", 0, "x"), "∂L/∂x = ∂L/∂y ⊙ y·(1 − y)");
  assert.equal(gradientFormula("Relu", 0, "x"), "∂L/∂x = ∂L/∂y ⊙ (1 where x > 0, else 0)");
  assert.equal(gradientFormula("Cat", 2, "x2"), "∂L/∂x2 = the slice of ∂L/∂y that came from x2");
  for (const op of ["Mul", "Add", "Tanh", "Exp", "Log", "Relu", "Sigmoid", "MatMul", "Linear", "Sum", "Mean", "Pow", "Div", "Sub"]) {
    assert.ok(derivativeOf(op), op);
  }
  assert.equal(derivativeOf("matmul"), derivativeOf("MatMul")); // case does not matter
  assert.equal(derivativeOf("Matmul").forward, "Y = A @ B");
});

test("an op without formula text gets the generic chain rule", () => {
  const custom = { ...graph, nodes: [...graph.nodes, node("n9", { op: "MyFunction", label: "MyFunction" })],
    edges: [...graph.edges, { source: "n3", target: "n9", index: 0, shape: [2] }] };
  const rule = chainRule(custom, "n9");
  assert.equal(rule.known, false);
  assert.equal(rule.forward, "[MyFunction n9] = MyFunction([Tanh n3])"); // its real inputs
  assert.equal(rule.outgoing[0].formula, "∂L/∂[Tanh n3] = ∂L/∂[MyFunction n9] · ∂[MyFunction n9]/∂[Tanh n3]  (chain rule)");
  assert.equal(rule.outgoing[0].summary, "not recorded");
  assert.equal(rule.outgoing[0].exact, false);
});

test("a leaf accumulates; broadcasting is mentioned; missing nodes give null", () => {
  const leaf = chainRule(graph, "n0");
  assert.equal(leaf.leaf, true);
  assert.equal(leaf.forward, "a is a leaf: the gradient it receives is accumulated into .grad");
  assert.deepEqual(leaf.outgoing, []);
  assert.equal(chainRule(graph, "n1").forward, "a leaf: the gradient it receives is accumulated into .grad");
  const sum = chainRule(graph, "n4");
  assert.equal(sum.incoming.shape, "()");
  assert.equal(sum.outgoing[0].broadcast, true); // (2,) summed into ()
  assert.equal(chainRule(graph, "n2").outgoing[0].broadcast, false);
  assert.equal(chainRule(graph, "n404"), null);
});

test("a gradient from another backward pass says so in the chain rule", () => {
  const note = "a.grad came from another backward pass, not this graph's";
  const noted = { ...graph, nodes: graph.nodes.map((n) => (n.id === "n0" ? { ...n, grad_note: note } : n)) };
  assert.equal(chainRule(noted, "n0").incoming.note, note);
  assert.equal(chainRule(graph, "n0").incoming.note, "");
});

test("samples end with an ellipsis when the tensor has more values; NaN/inf are flagged", () => {
  assert.equal(sampleText(stats([1, 2, 3, 4, 5, 6], [2, 5])), "[1, 2, 3, 4, 5, 6, …]");
  assert.equal(sampleText(stats([1, null], [2])), "[1, —]");
  assert.equal(sampleText(null), "");
  assert.equal(statsSummary(null), "not recorded");
  assert.equal(statsSummary({ ...stats([1]), nan_count: 2, inf_count: 1 }), "mean 1 · norm 1 · NaN 2 · inf 1");
  const bad = { ...graph, nodes: graph.nodes.map((n) => (n.id === "n2" ? { ...n, grad: { ...n.grad, nan_count: 1 } } : n)) };
  assert.equal(chainRule(bad, "n2").incoming.bad, true);
});

test("formulas use the user's names for the inputs and the output, never colliding with them", () => {
  const named = {
    ...graph,
    nodes: [
      node("n0", { kind: "leaf", label: "h", name: "h" }),
      node("n1", { kind: "parameter", label: "cell.hh.weight", name: "cell.hh.weight" }),
      node("n2", { op: "MatMul", label: "MatMul" }),
      node("n3", { op: "Tanh", label: "Tanh", name: "h_next" }),
      node("n4", { kind: "leaf", label: "y", name: "y" }),
      node("n5", { op: "Mul", label: "Mul" }),
    ],
    edges: [
      { source: "n0", target: "n2", index: 0, shape: [2] }, { source: "n1", target: "n2", index: 1, shape: [2] },
      { source: "n2", target: "n3", index: 0, shape: [2] },
      { source: "n4", target: "n5", index: 0, shape: [2] }, { source: "n4", target: "n5", index: 1, shape: [2] },
    ],
  };
  const matmul = chainRule(named, "n2");
  assert.equal(matmul.forward, "[MatMul n2] = h @ hh.weight");
  assert.deepEqual(matmul.outgoing.map((o) => o.formula),
    ["∂L/∂h = ∂L/∂[MatMul n2] @ hh.weightᵀ", "∂L/∂hh.weight = hᵀ @ ∂L/∂[MatMul n2]"]);
  assert.equal(matmul.outgoing[1].target, "to hh.weight ← cell.hh.weight (n1)");
  const tanh = chainRule(named, "n3");
  assert.equal(tanh.forward, "h_next = tanh [MatMul n2]"); // an unnamed input by its op and id
  assert.equal(tanh.outgoing[0].formula, "∂L/∂[MatMul n2] = ∂L/∂h_next ⊙ (1 − h_next²)");
  assert.equal(tanh.outgoing[0].target, "to [MatMul n2]");
  const square = chainRule(named, "n5"); // y * y: the same tensor twice is one name
  assert.equal(square.forward, "[Mul n5] = y · y");
  assert.equal(square.incoming.label, "∂L/∂[Mul n5] (the gradient this op's output received)");
});

test("a learner's leaf named x is never confused with an unnamed input (out_t = tanh(w·x + b))", () => {
  const lesson = {
    ...graph,
    nodes: [
      node("n0", { kind: "leaf", label: "w", name: "w" }), node("n1", { kind: "leaf", label: "x", name: "x" }),
      node("n2", { op: "Mul", label: "Mul" }), node("n3", { kind: "leaf", label: "b", name: "b" }),
      node("n4", { op: "Add", label: "Add" }), node("n5", { kind: "output", op: "Tanh", label: "out_t" }),
    ],
    edges: [
      { source: "n0", target: "n2", index: 0, shape: [] }, { source: "n1", target: "n2", index: 1, shape: [] },
      { source: "n2", target: "n4", index: 0, shape: [] }, { source: "n3", target: "n4", index: 1, shape: [] },
      { source: "n4", target: "n5", index: 0, shape: [] },
    ],
  };
  const tanh = chainRule(lesson, "n5");
  assert.equal(tanh.forward, "out_t = tanh [Add n4]");
  assert.deepEqual(tanh.outgoing.map((o) => [o.name, o.target]), [["[Add n4]", "to [Add n4]"]]);
  assert.ok(!/\bx\b/.test(`${tanh.forward} ${tanh.outgoing[0].formula}`));
  const add = chainRule(lesson, "n4");
  assert.equal(add.forward, "[Add n4] = [Mul n2] + b");
  assert.equal(chainRule(lesson, "n2").forward, "[Mul n2] = w · x"); // the real x, where it is the input
});

test("two different tensors with one name are told apart by their ids", () => {
  const twice = {
    ...graph,
    nodes: [node("n0", { kind: "leaf", name: "h" }), node("n1", { kind: "leaf", name: "h" }), node("n2", { op: "Add", name: "h" })],
    edges: [{ source: "n0", target: "n2", index: 0, shape: [2] }, { source: "n1", target: "n2", index: 1, shape: [2] }],
  };
  const rule = chainRule(twice, "n2");
  assert.equal(rule.forward, "h [n2] = h + h [n1]");
  assert.deepEqual(rule.outgoing.map((o) => o.target), ["to h (n0)", "to h [n1]"]);
  assert.equal(nodeRef({ id: "n7", op: "Linear", kind: "op" }), "[Linear n7]");
  assert.equal(targetText("q.weight", "blocks.0.q.weight", "n3"), "to q.weight ← blocks.0.q.weight (n3)");
});

test("renaming touches whole symbols only", () => {
  assert.equal(renameSymbols("y = Σᵢ xᵢ", { x: "h", y: "s" }), "s = Σᵢ hᵢ");
  assert.equal(renameSymbols("y = x̄ + ln x · exp", { x: "h" }), "y = h̄ + ln h · exp");
  assert.equal(userName({ label: "Tanh", op: "Tanh", kind: "op" }), null);
  assert.equal(userName({ label: "leaf", kind: "leaf" }), null);
  assert.equal(userName({ name: "blocks.0.attn.q.weight" }), "q.weight");
  assert.equal(userName({ name: "blocks.2.mlp.2.weight" }), "mlp.2.weight");
});
