import assert from "node:assert/strict";
import { test } from "node:test";

import { cellAt, greyImage, layerTitle, macFormula, mapImage } from "../src/widgets/conv-explorer.js";

function pixel(image, width, row, column) {
  const p = 4 * (row * width + column);
  return [...image.slice(p, p + 4)];
}

test("feature maps on the diverging scale, each scaled by its own largest |value| (row 0 on top)", () => {
  const stack = Float32Array.from([0, 0, 0, 0, /* map 1 */ -2, 0, 0, 2]);
  const image = mapImage(stack, 1, 2, 2);
  const negative = pixel(image, 2, 0, 0);
  const positive = pixel(image, 2, 1, 1);
  assert.ok(negative[0] > negative[2], "negative is orange");
  assert.ok(positive[2] > positive[0], "positive is blue");
  assert.deepEqual(pixel(image, 2, 0, 1), [248, 248, 248, 255]);
  assert.deepEqual(pixel(mapImage(stack, 1, 2, 2, 4), 2, 1, 1), [150, 195, 230, 255], "2 on a shared scale of 4: half way to blue");
  assert.equal(mapImage(stack, 2, 2, 2).every((v) => v === 0), true, "a missing map draws nothing");
});

test("the input in grey: the smallest value white, the largest black", () => {
  const image = greyImage(Float32Array.from([0, 0.5, 1, 1]), 0, 2, 2);
  assert.deepEqual(pixel(image, 2, 0, 0), [255, 255, 255, 255]);
  assert.deepEqual(pixel(image, 2, 1, 0), [0, 0, 0, 255]);
  assert.deepEqual(pixel(image, 2, 0, 1), [128, 128, 128, 255]);
});

test("a click lands on the cell under the pointer, clamped to the map", () => {
  assert.deepEqual(cellAt(0, 0, 84, 84, 4, 4), [0, 0]);
  assert.deepEqual(cellAt(52.5, 31.5, 84, 84, 4, 4), [1, 2]);
  assert.deepEqual(cellAt(84, 84, 84, 84, 4, 4), [3, 3]);
  assert.deepEqual(cellAt(-3, 90, 84, 84, 4, 4), [3, 0]);
});

test("a layer's title and the formula of a unit name its geometry", () => {
  const layer = { name: "3", in_channels: 8, out_channels: 16, kernel: [3, 3], stride: [1, 1], padding: [1, 1], output_shape: [16, 4, 4] };
  assert.equal(layerTitle(layer), "3: Conv2d 8→16, 3×3, stride 1, padding 1 · output 16 × 4 × 4");
  assert.equal(macFormula({ channel: 3, i: 1, j: 2 }, layer),
    "y[3, 1, 2] = b[3] + Σ_k Σ_a Σ_b w[3, k, a, b] · x[k, 1·1 − 1 + a, 2·1 − 1 + b]");
});
