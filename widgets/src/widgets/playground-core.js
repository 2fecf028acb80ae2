// Pure helpers for the playground: the decision-boundary and hidden-unit images (RGBA
// bytes from float32 grids), the loss curve's geometry, and editing the network's shape.
// No DOM: node --test checks them directly.

import { diverging, toFloat32 } from "./optimizer-core.js";

/** Class colours: orange, blue, green, then more. */
export const CLASS_COLOURS = [[230, 120, 30], [40, 110, 190], [85, 168, 104], [196, 78, 82], [129, 114, 179]];

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
 * Pixel polylines for loss curves in a width × height box with ``margin`` on each side:
 * x from the first to the last step, y from 0 (bottom) to the largest finite value.
 * Returns {lines: [Float32Array of x, y pairs], yMax, xMin, xMax}; non-finite points are skipped.
 */
export function lossGeometry(steps, series, width, height, margin = { left: 34, right: 8, top: 8, bottom: 16 }) {
  let yMax = 0;
  for (const line of series) for (const v of line) if (Number.isFinite(v) && v > yMax) yMax = v;
  yMax = yMax || 1;
  const xMin = steps.length ? steps[0] : 0;
  const xMax = steps.length ? steps[steps.length - 1] : 1;
  const spanX = xMax - xMin || 1;
  const innerW = width - margin.left - margin.right;
  const innerH = height - margin.top - margin.bottom;
  const lines = series.map((line) => {
    const pixels = [];
    for (let i = 0; i < line.length; i += 1) {
      if (!Number.isFinite(line[i])) continue;
      pixels.push(margin.left + ((steps[i] - xMin) / spanX) * innerW, margin.top + innerH * (1 - line[i] / yMax));
    }
    return Float32Array.from(pixels);
  });
  return { lines, yMax, xMin, xMax };
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
