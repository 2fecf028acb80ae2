import assert from "node:assert/strict";
import { test } from "node:test";

import { colourScale, graphDot, gradMagnitude } from "../src/graph-dot.js";
import { describeNode } from "../src/node-info.js";
import { flowStepText, forwardGraph, hasForward, jvpFormula, jvpStep, renameTangents, tangentName } from "../src/widgets/jvp.js";

function stats(values, shape = [values.length]) {
  const norm = Math.sqrt(values.reduce((sum, v) => sum + v * v, 0));
  return { shape, mean: values.reduce((a, b) => a + b, 0) / values.length, std: 0, min: Math.min(...values),
    max: Math.max(...values), norm, nan_count: 0, inf_count: 0, histogram: [1, 1], sample: values.slice(0, 6) };
}

function node(id, fields) {
  return { id, kind: "op", label: "", shape: [2], dtype: "float32", device: "cpu", op: null, name: null, module: "",
    source: null, requires_grad: true, value: null, grad: null, backward_index: null, tangent: null, ...fields };
}

// with forward_ad.dual_level(): x = make_dual(x0, [1, 0]); b = x * w; y = b.tanh().sum(), as vizgrad.graph(y) writes it
const graph = {
  schema: "vizgrad.graph", version: 4, truncated: false, steps: [], groups: [], backward: { source: null, note: null },
  nodes: [
    node("n0", { kind: "leaf", label: "x0" }),
    node("n1", { op: "View", label: "x", tangent: stats([1, 0]) }),
    node("n2", { kind: "parameter", label: "w", name: "w" }),
    node("n3", { op: "Mul", label: "b", tangent: stats([0.5, 0]) }),
    node("n4", { op: "Tanh", label: "Tanh", tangent: stats([0.4, 0]) }),
    node("n5", { kind: "output", op: "Sum", label: "y", shape: [], tangent: stats([0.4], []) }),
  ],
  edges: [
    { source: "n0", target: "n1", index: 0, shape: [2] },
    { source: "n1", target: "n3", index: 0, shape: [2] },
    { source: "n2", target: "n3", index: 1, shape: [2] },
    { source: "n3", target: "n4", index: 0, shape: [2] },
    { source: "n4", target: "n5", index: 0, shape: [2] },
  ],
  backward_order: [],
  forward_order: ["n1", "n3", "n4", "n5"],
};

test("the JVP at Mul: the product rule in the user's names, the tangents in and the tangent out", () => {
  const step = jvpStep(graph, "n3");
  assert.equal(step.forward, "b = x · w");
  assert.equal(step.rule, "ḃ = ẋ·w + x·ẇ");
  assert.equal(step.seed, false);
  assert.equal(step.known, true);
  assert.deepEqual(step.inputs.map((input) => [input.source, input.tangentName, input.carries, input.local, input.shape, input.sample]), [
    ["n1", "ẋ", true, "∂b/∂x = w", "(2,)", "[1, 0]"],
    ["n2", "ẇ", false, "∂b/∂w = x", "(2,)", ""],
  ]);
  assert.equal(step.inputs[0].summary, "mean 0.5 · norm 1");
  assert.equal(step.inputs[1].summary, "no tangent: ẇ = 0, its term drops out");
  assert.deepEqual(step.out, { label: "ḃ (the tangent this op computed)", shape: "(2,)", summary: "mean 0.25 · norm 0.5",
    sample: "[0.5, 0]", bad: false });
  assert.deepEqual(step.missing, []);
});

test("the chain rule's table read forward: ẏ = ȧ·b + a·ḃ, elementwise terms, linear ops dotted", () => {
  assert.equal(jvpFormula("Mul"), "ẏ = ȧ·b + a·ḃ");
  assert.equal(jvpFormula("mul"), "ẏ = ȧ·b + a·ḃ"); // case does not matter
  assert.equal(jvpFormula("Add"), "ẏ = ȧ + ḃ");
  assert.equal(jvpFormula("Sub"), "ẏ = ȧ − ḃ");
  assert.equal(jvpFormula("Tanh"), "ẏ = (1 − y²)·ẋ");
  assert.equal(jvpFormula("Sigmoid"), "ẏ = y·(1 − y)·ẋ");
  assert.equal(jvpFormula("Exp"), "ẏ = exp(x)·ẋ");
  assert.equal(jvpFormula("Relu"), "ẏ = ẋ where x > 0, else 0");
  assert.equal(jvpFormula("Reshape"), "ẏ = ẋ reshaped");
  assert.equal(jvpFormula("Transpose"), "ẏ = ẋᵀ (two dimensions swapped)");
  assert.equal(jvpFormula("Neg"), "ẏ = −ẋ");
  assert.equal(jvpFormula("MatMul"), "Ẏ = Ȧ @ B + A @ Ḃ");
  assert.equal(jvpFormula("Linear"), "ẏ = ẋ @ Wᵀ + x @ Ẇᵀ + ḃ");
  assert.equal(jvpFormula("MyFunction"), null);
});

test("each step of the replay: the seed make_dual gave, an elementwise op, a reduction", () => {
  const seed = jvpStep(graph, "n1");
  assert.equal(seed.seed, true);
  assert.equal(seed.rule, "ẋ is given (forward_ad.make_dual): the direction the forward pass carries");
  const tanh = jvpStep(graph, "n4");
  assert.equal(tanh.forward, "[Tanh n4] = tanh b");
  assert.equal(tanh.rule, "ṫ[Tanh n4] = (1 − [Tanh n4]²)·ḃ");
  assert.equal(tanh.inputs[0].local, "∂[Tanh n4]/∂b = 1 − [Tanh n4]²");
  const sum = jvpStep(graph, "n5");
  assert.equal(sum.rule, "ẏ = Σᵢ ṫ[Tanh n4]ᵢ");
  assert.equal(sum.inputs[0].local, null); // a reduction's chain-rule text speaks of ∂L/∂y: no local line forward
  assert.equal(sum.out.shape, "()");
  assert.equal(sum.out.sample, "[0.4]");
  assert.equal(jvpStep(graph, "n9"), null);
});

test("inputs the graph does not draw are named as such, never as a generic x", () => {
  const linear = {
    ...graph,
    nodes: [...graph.nodes, node("n6", { op: "Linear", label: "h", tangent: stats([0.1, 0.2]) })],
    edges: [...graph.edges, { source: "n2", target: "n6", index: 1, shape: [2] }],
  };
  const step = jvpStep(linear, "n6");
  assert.deepEqual(step.missing, ["[input 0]", "[input 2]"]);
  assert.equal(step.seed, false);
  assert.equal(step.rule, "ḣ = ṫ[input 0] @ wᵀ + [input 0] @ ẇᵀ + ṫ[input 2]");
  assert.equal(step.forward, "h = [input 0] @ wᵀ + [input 2]");
});

test("an op without formula text gets the generic J·ṫ", () => {
  const custom = { ...graph, nodes: [...graph.nodes, node("n7", { op: "MyFunction", label: "MyFunction", tangent: stats([1, 1]) })],
    edges: [...graph.edges, { source: "n4", target: "n7", index: 0, shape: [2] }] };
  const step = jvpStep(custom, "n7");
  assert.equal(step.known, false);
  assert.equal(step.rule, "ṫ[MyFunction n7] = J·ṫ: the Jacobian of MyFunction applied to the input tangents");
  assert.equal(step.forward, "[MyFunction n7] = MyFunction([Tanh n4])");
});

test("tangent names: a dot over one letter, else ṫ(name); renamed in one pass", () => {
  assert.equal(tangentName("x"), "ẋ");
  assert.equal(tangentName("W"), "Ẇ");
  assert.equal(tangentName("x0"), "ẋ0");
  assert.equal(tangentName("loss"), "ṫ(loss)");
  assert.equal(tangentName("[Add n4]"), "ṫ[Add n4]");
  // the output named b and an input symbol b: no name is renamed twice
  assert.equal(renameTangents("ẏ = ȧ·b + a·ḃ", { a: "x", b: "w", y: "b" }), "ḃ = ẋ·w + x·ẇ");
});

test("the step text and the graph the forward replay draws", () => {
  assert.equal(flowStepText(graph, graph.forward_order, 1, "forward"), "forward step 2 of 4: b (n3)");
  assert.equal(flowStepText(graph, graph.forward_order, -1, "forward"), "before forward (0 of 4 steps)");
  assert.equal(flowStepText(graph, [], -1, "forward"), "no tangents recorded");
  assert.equal(flowStepText(graph, ["n5", "n4"], 0, "backward"), "backward step 1 of 2: y (n5)");
  assert.equal(hasForward(graph), true);
  assert.equal(hasForward({ ...graph, forward_order: undefined }), false);
  const drawn = forwardGraph(graph);
  assert.equal(drawn.flow, "forward");
  assert.deepEqual(drawn.nodes.map((n) => n.forward_index), [null, 0, null, 1, 2, 3]);
  assert.equal(graph.nodes[1].forward_index, undefined); // the graph itself is left as it was
  // coloured by tangent size: every node with a tangent gets a colour, none without
  assert.deepEqual(colourScale(graph), null);
  const scale = colourScale(drawn);
  assert.ok(scale && scale[0] < scale[1]);
  assert.ok(Math.abs(gradMagnitude(drawn.nodes[1], "tangent").log - Math.log10(1 / Math.sqrt(2))) < 1e-12);
  const { dot } = graphDot(drawn);
  assert.equal((dot.match(/penwidth=3/g) ?? []).length, 4);
  const info = describeNode(drawn.nodes[3]);
  assert.deepEqual(info.tangent[0], ["mean ± std", "0.25 ± 0"]);
  assert.deepEqual(info.general.at(-1), ["forward step", "2"]);
});
