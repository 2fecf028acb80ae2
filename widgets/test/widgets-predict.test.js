import assert from "node:assert/strict";
import { test } from "node:test";

import { HIDDEN_NOTE, isHidden, judge, maskGraph, parseGuess, scoreText } from "../src/widgets/predict.js";

const stats = (values, shape = [values.length]) => ({
  shape, mean: values.reduce((a, b) => a + b, 0) / values.length, std: 0, min: Math.min(...values), max: Math.max(...values),
  norm: Math.hypot(...values), nan_count: 0, inf_count: 0, histogram: [], sample: values.slice(0, 16),
});

test("a guess is read as numbers, with what is wrong said in words", () => {
  assert.deepEqual(parseGuess("0.25"), [0.25]);
  assert.deepEqual(parseGuess("[1, -2 3e-1]"), [1, -2, 0.3]);
  assert.deepEqual(parseGuess("−0.5"), [-0.5]);
  assert.equal(parseGuess("  "), "write a number, or the first values separated by commas");
  assert.equal(parseGuess("1, two"), '"two" is not a number');
});

test("one number for a scalar gradient is judged within 1% (or 0.001)", () => {
  assert.equal(judge([0.5], stats([0.5], [])).correct, true);
  assert.equal(judge([0.504], stats([0.5], [])).correct, true);
  const wrong = judge([0.25], stats([0.5], []));
  assert.equal(wrong.correct, false);
  assert.equal(wrong.message, "not quite: you predicted 0.25, the gradient is 0.5");
  assert.equal(wrong.expected, "0.5");
});

test("one number for a tensor means every element; several are its first elements", () => {
  assert.equal(judge([1], stats([1, 1, 1])).correct, true);
  const notAll = judge([1], stats([1, 2, 1]));
  assert.equal(notAll.correct, false);
  assert.match(notAll.message, /not all 1 \(they run from 1 to 2\)/);
  assert.equal(judge([0.1, -0.2], stats([0.1, -0.2, 0.3])).correct, true);
  const second = judge([0.1, 0.2], stats([0.1, -0.2, 0.3]));
  assert.equal(second.correct, false);
  assert.equal(second.message, "not quite: element 1 is -0.2, you predicted 0.2");
  assert.equal(judge([1, 2, 3, 4], stats([1, 2, 3])).message, "the gradient has 3 elements, you wrote 4 numbers");
  assert.equal(judge([1], null).correct, false);
});

test("unpredicted gradients are taken out of nodes and of the edges that carry them", () => {
  const graph = {
    nodes: [{ id: "n0", grad: stats([2, 2]) }, { id: "n1", grad: stats([1], []) }, { id: "n2", grad: null }],
    edges: [{ source: "n0", target: "n1", grad: stats([2, 2]) }],
  };
  assert.equal(maskGraph(graph, false, {}), graph);
  const masked = maskGraph(graph, true, { n1: { correct: true } });
  assert.equal(masked.nodes[0].grad, null);
  assert.equal(masked.nodes[0].grad_note, HIDDEN_NOTE);
  assert.equal(masked.nodes[1].grad, graph.nodes[1].grad);   // predicted: shown
  assert.equal(masked.edges[0].grad, null);
  assert.equal(masked.edges[0].grad_hidden, true);
  assert.equal(graph.nodes[0].grad.mean, 2);                 // the original is untouched
  assert.equal(isHidden(true, {}, graph.nodes[2]), false);   // nothing to hide
  const all = maskGraph(graph, true, { n0: {}, n1: {} });
  assert.equal(all, graph);
});

test("the score counts right predictions", () => {
  assert.equal(scoreText({}), null);
  assert.equal(scoreText({ a: { correct: true } }), "1 of 1 prediction right");
  assert.equal(scoreText({ a: { correct: true }, b: { correct: false } }), "1 of 2 predictions right");
});
