import { test } from "node:test";
import assert from "node:assert/strict";

import { attendedKeys, clampSelection, readWeights, tokenLabel, weightColour } from "../src/widgets/attention.js";

function buffer(values) {
  return new DataView(new Float32Array(values).buffer);
}

test("weights read as heads × queries × keys from a float32 buffer", () => {
  // 2 heads, 2 queries, 3 keys
  const weights = readWeights(buffer([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5, 0, 0, 1]), [2, 2, 3]);
  assert.equal(weights.heads, 2);
  assert.equal(weights.at(0, 1, 1), 0.5);
  assert.ok(Math.abs(weights.at(1, 0, 2) - 0.5) < 1e-7);
  assert.equal(weights.at(1, 1, 2), 1);
});

test("a buffer shorter than its shape shows no heads rather than garbage", () => {
  assert.equal(readWeights(buffer([1, 2]), [1, 2, 2]).heads, 0);
  assert.equal(readWeights(null, [0, 0, 0]).heads, 0);
});

test("where a query looks: keys by weight, largest first, ties by position", () => {
  const weights = readWeights(buffer([0.25, 0.5, 0.25]), [1, 1, 3]);
  assert.deepEqual(attendedKeys(weights, 0, 0).map((k) => k.key), [1, 0, 2]);
});

test("the selection is clamped to the weights' shape", () => {
  const weights = readWeights(buffer(new Array(2 * 3 * 3).fill(0)), [2, 3, 3]);
  assert.deepEqual(clampSelection({ head: 5, query: -1, key: 2 }, weights), { head: 1, query: 0, key: 2 });
  assert.deepEqual(clampSelection({}, weights), { head: 0, query: 0, key: 0 });
  assert.equal(clampSelection({ head: 0 }, readWeights(null, [0, 0, 0])), null);
});

test("weights are white at 0, dark blue at 1, clamped, grey when not finite", () => {
  assert.equal(weightColour(0), "rgb(255,255,255)");
  assert.equal(weightColour(1), "rgb(8,48,107)");
  assert.equal(weightColour(2), "rgb(8,48,107)");
  assert.equal(weightColour(Number.NaN), "rgb(160,160,160)");
});

test("spaces and newlines get visible labels", () => {
  assert.equal(tokenLabel(" "), "␣");
  assert.equal(tokenLabel("\n"), "↵");
  assert.equal(tokenLabel("a"), "a");
});

test("cells are 14 px up to 31 tokens and shrink for longer sequences; labels thin to stay 12 px apart", async () => {
  const { cellSize, labelStride } = await import("../src/widgets/attention.js");
  assert.equal(cellSize(31), 14);
  assert.equal(cellSize(64), 6);
  assert.equal(cellSize(500), 4);
  assert.equal(labelStride(14), 1);
  assert.equal(labelStride(6), 2);
  assert.ok(labelStride(4) * 4 >= 12);
});
