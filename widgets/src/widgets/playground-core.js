// Pure helpers for the playground: the decision-boundary and hidden-unit images (RGBA
// bytes from float32 grids), the loss curve's geometry, and editing the network's shape.
// No DOM: node --test checks them directly.

import { SERIES_COLOURS } from "../charts.js";
import { diverging, hexToRgb, toFloat32 } from "./optimizer-core.js";

/** Class colours: vizgrad's one class palette (the report's and the lessons' figures':
 * blue, orange, green, ...), as [r, g, b]. */
export const CLASS_COLOURS = SERIES_COLOURS.slice(0, 5).map(hexToRgb);

/** Edge colours by the weight's sign, as the unit maps show values: blue positive, orange negative. */
export const SIGN_COLOURS = { positive: "rgb(40, 110, 190)", negative: "rgb(230, 120, 30)" };

/** "rgb(r, g, b)" for a class. */
export function classColour(label) {
  const [r, g, b] = CLASS_COLOURS[label % CLASS_COLOURS.length];
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * The decision boundary as an r-by-r RGBA image. ``probabilities`` holds ``classes`` grids
 * of r × r (row 0 at the bottom of the plot). Each pixel mixes the class colours by
 * probability and fades to white where the network is unsure (uniform probabilities).
 */
export function boundaryImage(probabilities, classes, r, colours = CLASS_COLOURS) {
  const image = new Uint8ClampedArray(r * r * 4);
  const cells = r * r;
  if (probabilities.length < classes * cells || classes < 1) return image;
  const uniform = 1 / classes;
  for (let cell = 0; cell < cells; cell += 1) {
    const mixed = [0, 0, 0];
    let best = 0;
    for (let k = 0; k < classes; k += 1) {
      const p = probabilities[k * cells + cell];
      if (p > best) best = p;
      const colour = colours[k % colours.length];
      for (let c = 0; c < 3; c += 1) mixed[c] += p * colour[c];
    }
    const certainty = classes > 1 ? Math.max(0, (best - uniform) / (1 - uniform)) : 1;
    const strength = 0.15 + 0.6 * certainty;
    const row = r - 1 - Math.floor(cell / r);
    const pixel = 4 * (row * r + (cell % r));
    for (let c = 0; c < 3; c += 1) image[pixel + c] = 255 * (1 - strength) + mixed[c] * strength;
    image[pixel + 3] = 255;
  }
  return image;
}

/** The largest |value| of ``count`` values from ``offset`` (1 when all are zero or absent). */
export function maxAbs(values, offset = 0, count = values.length) {
  let high = 0;
  for (let i = offset; i < Math.min(values.length, offset + count); i += 1) {
    const size = Math.abs(values[i]);
    if (Number.isFinite(size) && size > high) high = size;
  }
  return high || 1;
}

/**
 * One hidden unit's response (grid ``unit`` of an r × r stack) as an RGBA image on the
 * diverging map: orange negative, white zero, blue positive, scaled by the unit's own |max|.
 */
export function unitImage(units, unit, r, colourMap = diverging) {
  const cells = r * r;
  const offset = unit * cells;
  const image = new Uint8ClampedArray(cells * 4);
  if (units.length < offset + cells) return image;
  const scale = maxAbs(units, offset, cells);
  for (let cell = 0; cell < cells; cell += 1) {
    const [red, green, blue] = colourMap(0.5 + units[offset + cell] / scale / 2);
    const row = r - 1 - Math.floor(cell / r);
    const pixel = 4 * (row * r + (cell % r));
    image[pixel] = red;
    image[pixel + 1] = green;
    image[pixel + 2] = blue;
    image[pixel + 3] = 255;
  }
  return image;
}

/**
 * The loss trait ({steps, values, columns, length}, binary buffers) as plain arrays:
 * {steps: Float32Array, series: [Float32Array per column]}.
 */
export function decodeSeries(payload) {
  if (!payload || !payload.length) return { steps: new Float32Array(0), series: [] };
  const steps = toFloat32(payload.steps).subarray(0, payload.length);
  const values = toFloat32(payload.values);
  const columns = payload.columns || 1;
  const series = Array.from({ length: columns }, (_, column) => {
    const line = new Float32Array(steps.length);
    for (let i = 0; i < steps.length; i += 1) line[i] = values[i * columns + column];
    return line;
  });
  return { steps, series };
}

/**
 * The hidden layer widths after one edit: {op: "add-layer" | "remove-layer" | "add-unit" |
 * "remove-unit", layer}. Limits come from the widget (at most ``maxLayers`` layers of
 * 1..``maxWidth`` units); an edit past a limit returns the widths unchanged.
 */
export function editHidden(hidden, { op, layer }, { maxLayers = 6, maxWidth = 16 } = {}) {
  const next = hidden.slice();
  if (op === "add-layer" && next.length < maxLayers) next.push(next.length ? next[next.length - 1] : 4);
  else if (op === "remove-layer" && next.length > 0) next.pop();
  else if (op === "add-unit" && layer < next.length && next[layer] < maxWidth) next[layer] += 1;
  else if (op === "remove-unit" && layer < next.length && next[layer] > 1) next[layer] -= 1;
  return next;
}

/** Choices for a select: the standard values plus the current one, sorted. */
export function choices(values, current) {
  const all = values.includes(current) || current === undefined || current === null ? values.slice() : [...values, current];
  return all.sort((a, b) => a - b);
}

/**
 * The weights, their gradients and the biases of each Linear layer, unpacked from the
 * float32 buffers the widget sends (layer after layer, each weight row-major (out, in)):
 * [{inputs, outputs, weight, grad, bias}] with ``weight[o * inputs + i]`` from input i to output o.
 */
export function unpackLayers(sizes, weights, grads, biases) {
  const w = toFloat32(weights);
  const g = toFloat32(grads);
  const b = toFloat32(biases);
  const layers = [];
  let offset = 0;
  let biasOffset = 0;
  for (let layer = 0; layer + 1 < sizes.length; layer += 1) {
    const inputs = sizes[layer];
    const outputs = sizes[layer + 1];
    const count = inputs * outputs;
    if (offset + count > w.length || biasOffset + outputs > b.length) break;
    layers.push({
      inputs, outputs, weight: w.subarray(offset, offset + count), grad: g.subarray(offset, Math.min(g.length, offset + count)),
      bias: b.subarray(biasOffset, biasOffset + outputs),
    });
    offset += count;
    biasOffset += outputs;
  }
  return layers;
}

/** How an edge of weight ``value`` is drawn when the largest |weight| is ``largest``:
 * {colour (by sign), width 0.75..6 px and opacity 0.3..1, both growing with |value|}. */
export function edgeStyle(value, largest) {
  const share = largest > 0 && Number.isFinite(value) ? Math.min(1, Math.abs(value) / largest) : 0;
  return {
    colour: value < 0 ? SIGN_COLOURS.negative : SIGN_COLOURS.positive,
    width: Number((0.75 + 5.25 * share).toFixed(2)),
    opacity: Number((0.3 + 0.7 * share).toFixed(2)),
  };
}

/**
 * Where the diagram puts its nodes: column c (inputs, hidden layers, outputs) at x = left + c·column,
 * node j at y = top + j·row. ``sizes`` = [nodes per column]. Returns {columns: [[{x, y}]],
 * width, height}; each {x, y} is a node's top-left corner (nodes are ``node`` px squares).
 */
export function networkLayout(sizes, { node = 40, column = 112, row = 48, top = 30, left = 48 } = {}) {
  const columns = sizes.map((count, c) => Array.from({ length: count }, (_, j) => ({ x: left + c * column, y: top + j * row })));
  const tallest = Math.max(1, ...sizes);
  return { columns, width: left + (sizes.length - 1) * column + node, height: top + (tallest - 1) * row + node, node };
}

/** One class's probability over the plane (grid ``k`` of the boundary buffer) as an r × r RGBA
 * image: the class colour, deeper where the class is more likely. */
export function classImage(probabilities, k, r, colours = CLASS_COLOURS) {
  const cells = r * r;
  const image = new Uint8ClampedArray(cells * 4);
  if (probabilities.length < (k + 1) * cells) return image;
  const colour = colours[k % colours.length];
  for (let cell = 0; cell < cells; cell += 1) {
    const p = Math.max(0, Math.min(1, probabilities[k * cells + cell]));
    const row = r - 1 - Math.floor(cell / r);
    const pixel = 4 * (row * r + (cell % r));
    for (let c = 0; c < 3; c += 1) image[pixel + c] = 255 * (1 - p) + colour[c] * p;
    image[pixel + 3] = 255;
  }
  return image;
}
