import assert from "node:assert/strict";
import { test } from "node:test";

import { cellAt, greyImage, inputChannelsOf, kernelGridLayout, layerTitle, macFormula, mapImage } from "../src/widgets/conv-explorer.js";

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

test("a kernel's input-channel slices tile a map-sized box, at least 14 px each, wider grids scroll", () => {
  assert.deepEqual(kernelGridLayout(1, 84), { columns: 1, size: 84 });
  assert.deepEqual(kernelGridLayout(3, 84), { columns: 2, size: 41 });
  assert.deepEqual(kernelGridLayout(16, 84), { columns: 4, size: 19 });
  assert.deepEqual(kernelGridLayout(64, 84), { columns: 5, size: 15 });   // 13 rows of 5: the grid scrolls
});

test("grouped convolutions read their group's input channels (PyTorch's groups)", () => {
  const grouped = { in_channels: 8, out_channels: 4, groups: 2, stride: [1, 1], padding: [0, 0] };
  assert.deepEqual(inputChannelsOf(grouped, 1), [0, 1, 2, 3]);
  assert.deepEqual(inputChannelsOf(grouped, 2), [4, 5, 6, 7]);
  assert.deepEqual(inputChannelsOf({ in_channels: 3, out_channels: 6, groups: 3 }, 5), [2]);   // depthwise
  assert.deepEqual(inputChannelsOf({ in_channels: 3, out_channels: 6 }, 5), [0, 1, 2]);
  assert.equal(macFormula({ channel: 2, i: 0, j: 1 }, grouped),
    "y[2, 0, 1] = b[2] + Σ_{k=4…7} Σ_a Σ_b w[2, k − 4, a, b] · x[k, 0·1 − 0 + a, 1·1 − 0 + b]");
});
