// A heatmap of a 2-D tensor's recorded cells (stats.matrix: a few evenly spaced rows
// and columns, see vizgrad.trace.recorder.stats_dict), on a diverging scale centred
// at 0. Colour maths is pure and unit-tested; heatmap() builds a detached <svg>.

import { s } from "../dom.js";
import { formatNumber } from "../node-info.js";

const NEGATIVE = [49, 54, 149];
const ZERO = [247, 247, 247];
const POSITIVE = [215, 48, 39];

/** The colour of ``value`` on a blue-white-red scale over [-limit, limit]; grey for null. */
export function divergingColour(value, limit) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "rgb(160,160,160)";
  const t = limit > 0 ? Math.max(-1, Math.min(1, value / limit)) : 0;
  const end = t < 0 ? NEGATIVE : POSITIVE;
  const weight = Math.abs(t);
  const mix = ZERO.map((channel, i) => Math.round(channel + (end[i] - channel) * weight));
  return `rgb(${mix.join(",")})`;
}

/** The largest absolute finite value of a matrix (0 when there is none). */
export function matrixLimit(matrix) {
  let limit = 0;
  for (const row of matrix) {
    for (const value of row) {
      if (value !== null && Number.isFinite(value)) limit = Math.max(limit, Math.abs(value));
    }
  }
  return limit;
}

/**
 * The recorded cells of ``stats`` as ``{cells, rowIndex, colIndex}`` (cells: an array of
 * rows), or null when it has none. Graph JSON 3 writes ``matrix`` flat, row by row, its
 * rows ``matrix_rows`` and columns ``matrix_cols`` (every one of the tensor's when absent);
 * versions 1 and 2 wrote an array of rows.
 */
export function matrixCells(stats) {
  const matrix = stats?.matrix;
  if (!Array.isArray(matrix) || matrix.length === 0) return null;
  let cells = matrix;
  if (!Array.isArray(matrix[0])) {
    const cols = stats.matrix_cols?.length ?? stats.shape?.[1];
    if (!(cols > 0) || matrix.length % cols) return null;
    cells = Array.from({ length: matrix.length / cols }, (_, i) => matrix.slice(i * cols, (i + 1) * cols));
  }
  if (!cells[0].length) return null;
  return {
    cells,
    rowIndex: stats.matrix_rows ?? cells.map((_, i) => i),
    colIndex: stats.matrix_cols ?? cells[0].map((_, j) => j),
  };
}

/** The heatmap of ``stats.matrix`` as SVG (null when the tensor has none). */
export function heatmap(stats, { size = 200, label = "heatmap" } = {}) {
  const found = matrixCells(stats);
  if (!found) return null;
  const { cells, rowIndex, colIndex } = found;
  const rows = cells.length;
  const cols = cells[0].length;
  const cell = size / Math.max(rows, cols);
  const limit = matrixLimit(cells);
  const svg = s("svg", {
    class: "vg-heatmap", viewBox: `0 0 ${cols * cell} ${rows * cell}`, width: cols * cell, height: rows * cell,
    role: "img", "aria-label": `${label}: ${rows}×${cols} cells, ±${formatNumber(limit)}`, "data-testid": "vg-heatmap",
  });
  cells.forEach((row, i) => row.forEach((value, j) => {
    svg.append(s("rect", { x: j * cell, y: i * cell, width: cell + 0.2, height: cell + 0.2, fill: divergingColour(value, limit) },
      s("title", {}, `[${rowIndex[i]}, ${colIndex[j]}] = ${formatNumber(value)}`)));
  }));
  return svg;
}
