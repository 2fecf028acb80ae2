// Pure helpers of the convolution explorer (vizgrad.widgets.ConvExplorer): map images on
// the diverging scale, the grey input image, where a click lands on a map, and the
// multiply-accumulate as rows of text. No DOM: node --test checks them directly.

import { diverging } from "./optimizer-core.js";

/** The largest |value| of a typed array slice (1 when all are zero). */
function limitOf(values, offset, count) {
  let limit = 0;
  for (let k = offset; k < offset + count && k < values.length; k += 1) {
    const size = Math.abs(values[k]);
    if (Number.isFinite(size) && size > limit) limit = size;
  }
  return limit || 1;
}

/**
 * Map ``index`` of a stack of h × w maps as RGBA bytes on the diverging scale (orange
 * negative, white zero, blue positive), scaled by ``limit`` (default: the map's own |max|).
 * Row 0 is the top, as in an image.
 */
export function mapImage(stack, index, height, width, limit = null) {
  const cells = height * width;
  const offset = index * cells;
  const image = new Uint8ClampedArray(cells * 4);
  if (stack.length < offset + cells) return image;
  const scale = limit ?? limitOf(stack, offset, cells);
  for (let cell = 0; cell < cells; cell += 1) {
    const [r, g, b] = diverging(0.5 + stack[offset + cell] / scale / 2);
    image.set([r, g, b, 255], cell * 4);
  }
  return image;
}

/** Channel ``channel`` of the input as a grey image: the smallest value white, the largest black. */
export function greyImage(stack, channel, height, width) {
  const cells = height * width;
  const offset = channel * cells;
  const image = new Uint8ClampedArray(cells * 4);
  let low = Infinity;
  let high = -Infinity;
  for (let cell = 0; cell < cells; cell += 1) {
    const value = stack[offset + cell];
    if (value < low) low = value;
    if (value > high) high = value;
  }
  const span = high - low || 1;
  for (let cell = 0; cell < cells; cell += 1) {
    const shade = Math.round(255 - 255 * ((stack[offset + cell] - low) / span));
    image.set([shade, shade, shade, 255], cell * 4);
  }
  return image;
}

/** The (i, j) cell of an h × w map drawn in a box of ``boxWidth`` × ``boxHeight`` px under a
 * pointer at (x, y) px from its top-left corner (clamped to the map). */
export function cellAt(x, y, boxWidth, boxHeight, height, width) {
  const i = Math.min(height - 1, Math.max(0, Math.floor((y / boxHeight) * height)));
  const j = Math.min(width - 1, Math.max(0, Math.floor((x / boxWidth) * width)));
  return [i, j];
}

/** A layer's one-line description: "Conv2d 1→8, 3×3, stride 1, padding 1 · output 8 × 8 × 8". */
export function layerTitle(layer) {
  const [o, hh, ww] = layer.output_shape;
  return `${layer.name}: Conv2d ${layer.in_channels}→${layer.out_channels}, ${layer.kernel[0]}×${layer.kernel[1]}, `
    + `stride ${layer.stride[0]}, padding ${layer.padding[0]} · output ${o} × ${hh} × ${ww}`;
}

/** The formula a selection computes, with its indices: "y[3, 1, 2] = b[3] + Σₖ Σₐ Σᵦ w[3, k, a, b] · x[k, 1·1 − 1 + a, 2·1 − 1 + b]". */
export function macFormula(selection, layer) {
  const { channel, i, j } = selection;
  const [sh, sw] = layer.stride;
  const [ph, pw] = layer.padding;
  if ((layer.groups || 1) === 1) {
    return `y[${channel}, ${i}, ${j}] = b[${channel}] + Σ_k Σ_a Σ_b w[${channel}, k, a, b] · x[k, ${i}·${sh} − ${ph} + a, ${j}·${sw} − ${pw} + b]`;
  }
  const inputs = inputChannelsOf(layer, channel);     // its group's channels, w's slice k − first
  const first = inputs[0];
  return `y[${channel}, ${i}, ${j}] = b[${channel}] + Σ_{k=${first}…${inputs[inputs.length - 1]}} Σ_a Σ_b `
    + `w[${channel}, k − ${first}, a, b] · x[k, ${i}·${sh} − ${ph} + a, ${j}·${sw} − ${pw} + b]`;
}

/** How an output channel's ``slices`` kernel slices (one per input channel it reads) tile a
 * box ``box`` px wide: ``columns`` of ``size`` px squares ``gap`` px apart, each at least
 * ``minSize`` px (more rows than fit scroll), as square as the box allows. */
export function kernelGridLayout(slices, box, { minSize = 14, gap = 2 } = {}) {
  const widest = Math.max(1, Math.floor((box + gap) / (minSize + gap)));
  const columns = Math.max(1, Math.min(widest, Math.ceil(Math.sqrt(slices))));
  return { columns, size: Math.floor((box - gap * (columns - 1)) / columns) };
}

/** The input channels one output channel reads: all of them, or its group's (PyTorch's ``groups``). */
export function inputChannelsOf(layer, channel) {
  const groups = layer.groups || 1;
  const slices = layer.in_channels / groups;
  const first = Math.floor(channel / (layer.out_channels / groups)) * slices;
  return Array.from({ length: slices }, (_, k) => first + k);
}
