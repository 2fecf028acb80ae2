// Predict, then reveal: in GraphView's prediction mode (the `predict` trait) each node's
// gradient stays hidden until the learner has written what they expect it to be; the
// guess is then judged against the gradient the backward pass computed and the gradient
// is shown. Pure functions over Graph JSON (vizgrad/trace/graph.schema.json); no DOM.

import { formatNumber } from "../node-info.js";

/** Relative and absolute tolerance of a hand-computed gradient. */
export const TOLERANCE = { relative: 1e-2, absolute: 1e-3 };

const elementCount = (shape = []) => shape.reduce((product, size) => product * size, 1);

/**
 * The numbers a learner wrote ("0.25", "-1, 0.5, 2", "[1 2 3]", "1e-3"): an array of
 * finite numbers, or a string saying what is wrong with the text.
 */
export function parseGuess(text) {
  const words = String(text ?? "").replace(/[[\]()]/g, " ").split(/[\s,;]+/).filter(Boolean);
  if (!words.length) return "write a number, or the first values separated by commas";
  const numbers = words.map((word) => Number(word.replace("−", "-")));
  const wrong = words.find((_, index) => !Number.isFinite(numbers[index]));
  return wrong === undefined ? numbers : `"${wrong}" is not a number`;
}

const close = (guess, actual) => actual !== null && actual !== undefined
  && Math.abs(guess - actual) <= TOLERANCE.absolute + TOLERANCE.relative * Math.abs(actual);

/**
 * Judge ``numbers`` (from parseGuess) against a gradient's statistics: one number for a
 * tensor means "every element is this" (right when min and max both are); several numbers
 * are its first elements in row-major order (checked against the recorded sample).
 * Returns ``{correct, expected, message}``; ``expected`` is the text of what was computed.
 */
export function judge(numbers, stats) {
  if (!stats) return { correct: false, expected: "not recorded", message: "this gradient was not recorded" };
  const count = elementCount(stats.shape);
  const sample = Array.isArray(stats.sample) ? stats.sample : [];
  const expectedText = count === 1 ? formatNumber(stats.mean)
    : `[${sample.map(formatNumber).join(", ")}${count > sample.length ? ", …" : ""}]`;
  if (numbers.length === 1) {
    const [guess] = numbers;
    const correct = count === 1 ? close(guess, stats.mean) : close(guess, stats.min) && close(guess, stats.max);
    const message = correct ? `right: ${count === 1 ? "the gradient is" : "every element is"} ${formatNumber(guess)}`
      : count === 1 ? `not quite: you predicted ${formatNumber(guess)}, the gradient is ${expectedText}`
        : `not quite: the elements are not all ${formatNumber(guess)} (they run from ${formatNumber(stats.min)} to ${formatNumber(stats.max)})`;
    return { correct, expected: expectedText, message };
  }
  if (numbers.length > count) {
    return { correct: false, expected: expectedText, message: `the gradient has ${count} elements, you wrote ${numbers.length} numbers` };
  }
  const checked = Math.min(numbers.length, sample.length);
  const first = numbers.slice(0, checked).findIndex((guess, index) => !close(guess, sample[index]));
  if (first >= 0) {
    return { correct: false, expected: expectedText,
      message: `not quite: element ${first} is ${formatNumber(sample[first])}, you predicted ${formatNumber(numbers[first])}` };
  }
  return { correct: true, expected: expectedText, message: `right: the first ${checked} element${checked > 1 ? "s" : ""} match` };
}

/** What a node whose gradient is hidden says in the inspector. */
export const HIDDEN_NOTE = "gradient hidden until you predict it at its backward step";

/** Whether node ``id``'s gradient is hidden: prediction mode, a gradient to hide, no guess yet. */
export function isHidden(predict, predictions, node) {
  return Boolean(predict && node?.grad && !predictions?.[node.id]);
}

/**
 * ``graph`` with the gradients of unpredicted nodes removed (so that neither the drawing's
 * colours nor the panels give them away); the graph itself when nothing is hidden.
 */
export function maskGraph(graph, predict, predictions) {
  if (!predict || !graph.nodes) return graph;
  const hidden = new Set(graph.nodes.filter((node) => isHidden(predict, predictions, node)).map((node) => node.id));
  if (!hidden.size) return graph;
  return {
    ...graph,
    nodes: graph.nodes.map((node) => (hidden.has(node.id) ? { ...node, grad: null, grad_hidden: true, grad_note: HIDDEN_NOTE } : node)),
    // an edge carries the gradient its source receives: hidden with it
    edges: graph.edges.map((edge) => (hidden.has(edge.source) && edge.grad ? { ...edge, grad: null, grad_hidden: true } : edge)),
  };
}

/** "3 of 5 predictions right" (null before the first). */
export function scoreText(predictions) {
  const entries = Object.values(predictions ?? {});
  if (!entries.length) return null;
  const right = entries.filter((entry) => entry.correct).length;
  return `${right} of ${entries.length} prediction${entries.length > 1 ? "s" : ""} right`;
}
