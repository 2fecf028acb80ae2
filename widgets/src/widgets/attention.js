// Pure parts of the AttentionView widget (vizgrad/widgets/attention_view.py): the colour
// scale, token labels, reading the weights and where one query looks. Unit-tested.

import { floats } from "./model.js";

const LOW = [255, 255, 255];
const HIGH = [8, 48, 107];

/** An attention weight in [0, 1] on a white-to-dark-blue scale; grey when not finite. */
export function weightColour(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "rgb(160,160,160)";
  const t = Math.max(0, Math.min(1, value));
  return `rgb(${LOW.map((channel, i) => Math.round(channel + (HIGH[i] - channel) * t)).join(",")})`;
}

/** A token as an axis label: visible marks for space, newline and tab. */
export function tokenLabel(token) {
  const marks = { " ": "␣", "\n": "↵", "\t": "⇥", "": "∅" };
  return Object.hasOwn(marks, token) ? marks[token] : String(token);
}

/** The weights trait (float32 bytes) and shape [heads, queries, keys] as an accessor. */
export function readWeights(buffer, shape) {
  const [heads = 0, queries = 0, keys = 0] = shape ?? [];
  const values = floats(buffer);
  const complete = values.length >= heads * queries * keys;
  return {
    heads: complete ? heads : 0, queries, keys,
    at: (head, query, key) => values[(head * queries + query) * keys + key],
  };
}

/** The selected cell clamped to the weights' shape (null when there are no weights). */
export function clampSelection(selected, weights) {
  if (!weights.heads || !weights.queries || !weights.keys) return null;
  const clamp = (value, size) => Math.max(0, Math.min(size - 1, Number.isInteger(value) ? value : 0));
  return {
    head: clamp(selected?.head, weights.heads),
    query: clamp(selected?.query, weights.queries),
    key: clamp(selected?.key, weights.keys),
  };
}

/** Where ``query`` of ``head`` looks: [{key, weight}] largest weight first (ties by position). */
export function attendedKeys(weights, head, query) {
  const row = [];
  for (let key = 0; key < weights.keys; key += 1) row.push({ key, weight: weights.at(head, query, key) });
  return row.sort((a, b) => (b.weight - a.weight) || (a.key - b.key));
}

/** The side of one heatmap cell (px) for ``count`` tokens: 14 px up to 31 tokens, smaller for
 * longer sequences so that the map stays within ``room`` px (never under 4 px). */
export function cellSize(count, room = 440) {
  return Math.max(4, Math.min(14, Math.floor(room / Math.max(1, count))));
}

/** Label every ``labelStride(cell)``-th token so that labels (11 px text) are 12 px apart at least. */
export function labelStride(cell) {
  return Math.max(1, Math.ceil(12 / cell));
}
