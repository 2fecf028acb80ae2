import assert from "node:assert/strict";
import { test } from "node:test";

import { SERIES_COLOURS } from "../src/charts.js";
import { hexToRgb } from "../src/widgets/optimizer-core.js";
import {
  boundaryImage, choices, CLASS_COLOURS, classImage, decodeSeries, edgeStyle, editHidden, maxAbs, networkLayout,
  SIGN_COLOURS, unitImage, unpackLayers,
} from "../src/widgets/playground-core.js";

function pixel(image, r, row, column) {
  const p = 4 * (row * r + column);
  return [...image.slice(p, p + 4)];
}

test("the boundary mixes class colours by probability and flips rows (row 0 is the bottom)", () => {
  // 2 x 2 grid, two classes: the bottom row is sure of class 0, the top row undecided
  const probabilities = new Float32Array([1, 1, 0.5, 0.5, /* class 1 */ 0, 0, 0.5, 0.5]);
  const image = boundaryImage(probabilities, 2, 2);
  const bottom = pixel(image, 2, 1, 0);
  const top = pixel(image, 2, 0, 0);
  const first = CLASS_COLOURS[0];
  const sure = 0.75; // 0.15 + 0.6 * certainty 1
  assert.deepEqual(bottom, [...first.map((c) => Math.round(255 * (1 - sure) + c * sure)), 255]);
  assert.ok(top[0] > 200 && top[1] > 200 && top[2] > 200, "uncertain regions are pale");
  assert.equal(boundaryImage(new Float32Array(3), 2, 2).every((v) => v === 0), true, "short buffers draw nothing");
});

test("unit images use the diverging map scaled by the unit's own largest |value|", () => {
  const units = new Float32Array([0, 0, 0, 0, /* unit 1 */ -2, 0, 0, 2]);
  assert.equal(maxAbs(units, 4, 4), 2);
  assert.equal(maxAbs(new Float32Array(4)), 1);
  const image = unitImage(units, 1, 2);
  const negative = pixel(image, 2, 1, 0); // cell 0 is the bottom-left
  const positive = pixel(image, 2, 0, 1);
  const zero = pixel(image, 2, 1, 1);
  assert.ok(negative[0] > negative[2], "negative is orange");
  assert.ok(positive[2] > positive[0], "positive is blue");
  assert.deepEqual(zero, [248, 248, 248, 255]);
});

test("loss series decode from binary buffers", () => {
  const steps = new Float32Array([0, 1, 2]);
  const values = new Float32Array([1, 2, 0.5, 1, 0, 0.5]);
  const { steps: decoded, series } = decodeSeries({ steps: new DataView(steps.buffer), values: new DataView(values.buffer), columns: 2, length: 3 });
  assert.deepEqual([...decoded], [0, 1, 2]);
  assert.deepEqual([...series[0]], [1, 0.5, 0]);
  assert.deepEqual([...series[1]], [2, 1, 0.5]);
  assert.equal(decodeSeries(null).series.length, 0);
});

test("editing the network's shape respects the limits", () => {
  const limits = { maxLayers: 3, maxWidth: 4 };
  assert.deepEqual(editHidden([4, 2], { op: "add-layer" }, limits), [4, 2, 2]);
  assert.deepEqual(editHidden([4, 2, 2], { op: "add-layer" }, limits), [4, 2, 2]);
  assert.deepEqual(editHidden([], { op: "add-layer" }, limits), [4]);
  assert.deepEqual(editHidden([4, 2], { op: "remove-layer" }, limits), [4]);
  assert.deepEqual(editHidden([], { op: "remove-layer" }, limits), []);
  assert.deepEqual(editHidden([4, 2], { op: "add-unit", layer: 0 }, limits), [4, 2]);
  assert.deepEqual(editHidden([4, 2], { op: "add-unit", layer: 1 }, limits), [4, 3]);
  assert.deepEqual(editHidden([4, 1], { op: "remove-unit", layer: 1 }, limits), [4, 1]);
  const original = [3];
  editHidden(original, { op: "add-unit", layer: 0 });
  assert.deepEqual(original, [3], "the input is not changed");
});

test("select choices include the current value", () => {
  assert.deepEqual(choices([0.01, 0.1], 0.05), [0.01, 0.05, 0.1]);
  assert.deepEqual(choices([0.01, 0.1], 0.1), [0.01, 0.1]);
});

test("the class palette is vizgrad's one palette: the report's series colours, blue then orange", () => {
  assert.deepEqual(CLASS_COLOURS.slice(0, 3), SERIES_COLOURS.slice(0, 3).map(hexToRgb));
  assert.deepEqual(CLASS_COLOURS[0], [76, 114, 176]);
  assert.deepEqual(CLASS_COLOURS[1], [221, 132, 82]);
});

test("the diagram: one weight per (input, output) pair, unpacked layer by layer; edges by sign and size", () => {
  // 2 inputs -> 3 hidden -> 2 classes: 6 + 6 weights, 3 + 2 biases
  const weights = Float32Array.from({ length: 12 }, (_, k) => k - 6);
  const grads = Float32Array.from({ length: 12 }, (_, k) => k / 100);
  const biases = Float32Array.from([1, 2, 3, 4, 5]);
  const layers = unpackLayers([2, 3, 2], weights.buffer, grads.buffer, biases.buffer);
  assert.deepEqual(layers.map((layer) => [layer.inputs, layer.outputs, layer.weight.length, layer.bias.length]), [[2, 3, 6, 3], [3, 2, 6, 2]]);
  assert.equal(layers[0].weight[1 * 2 + 0], -4);          // hidden unit 1 from input 0
  assert.equal(layers[1].bias[1], 5);
  assert.ok(Math.abs(layers[1].grad[5] - 0.11) < 1e-6);
  assert.deepEqual(unpackLayers([2, 3, 2], weights.subarray(0, 8), grads, biases).length, 1, "a short buffer stops at the last whole layer");
  const strong = edgeStyle(-6, 6);
  const weak = edgeStyle(0.6, 6);
  assert.equal(strong.colour, SIGN_COLOURS.negative);
  assert.equal(weak.colour, SIGN_COLOURS.positive);
  assert.equal(strong.width, 6);
  assert.ok(weak.width < strong.width && weak.opacity < strong.opacity);
  assert.equal(edgeStyle(Number.NaN, 1).width, 0.75);
  const layout = networkLayout([7, 4, 2], { node: 40, column: 100, row: 50, top: 30, left: 50 });
  assert.deepEqual(layout.columns[1][3], { x: 150, y: 180 });
  assert.deepEqual([layout.width, layout.height], [290, 370]);
});

test("an output node shows its class's probability in the class colour", () => {
  const image = classImage(Float32Array.from([1, 0, 0, 0, /* class 1 */ 0, 1, 1, 1]), 0, 2);
  assert.deepEqual(pixel(image, 2, 1, 0), [...CLASS_COLOURS[0], 255]);   // cell 0 (bottom-left): sure
  assert.deepEqual(pixel(image, 2, 0, 0), [255, 255, 255, 255]);        // cell 2: not this class
});
