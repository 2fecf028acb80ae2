import assert from "node:assert/strict";
import { test } from "node:test";

import { extent, logTicks, niceTicks, scale, tickLabel } from "../src/charts.js";

test("extent skips null, non-finite and (for log scales) non-positive values", () => {
  assert.deepEqual(extent([3, null, -1, Infinity, 2]), [-1, 3]);
  assert.deepEqual(extent([0, -2, 0.5, 4], { positiveOnly: true }), [0.5, 4]);
  assert.equal(extent([null, NaN]), null);
});

test("nice ticks are round numbers inside the range", () => {
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(0.13, 0.71, 3), [0.2, 0.4, 0.6]);
  assert.deepEqual(niceTicks(2, 2), [2]);
});

test("log ticks are powers of ten, thinned when there are many", () => {
  assert.deepEqual(logTicks(0.003, 20), [0.01, 0.1, 1, 10]);
  assert.ok(logTicks(1e-12, 1e12, 6).length <= 6);
  assert.deepEqual(logTicks(3e-4, 4e-3), [5e-4, 1e-3, 2e-3]);
});

test("scales map the domain onto the range, linearly or logarithmically", () => {
  const linear = scale([0, 10], [100, 200]);
  assert.equal(linear(5), 150);
  const log = scale([1, 100], [0, 2], { log: true });
  assert.equal(log(10), 1);
  assert.equal(scale([3, 3], [0, 1])(3), 0);
});

test("tick labels are short", () => {
  assert.equal(tickLabel(0.25), "0.25");
  assert.equal(tickLabel(0.001), "1e-3");
  assert.equal(tickLabel(20000), "2e4");
});
