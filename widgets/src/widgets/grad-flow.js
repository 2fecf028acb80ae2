// Gradient flow as the widgets show it (binary series from
// vizgrad.widgets.grad_flow.GradFlowTracker.payload): a layers × steps heatmap of the
// gradient RMS on a log scale, coloured by how far each value lies outside the healthy
// band (blue below it: vanishing; red above it: exploding; pale tints inside), and beside
// it, on the same rows, the current step's bars with the two thresholds drawn as lines.
// Rows are grouped by module; labels are thinned so that none overlap, from 2 to 200+
// layers. The data helpers are pure and unit-tested; the builders return detached elements.

import { logTicks, scale, tickLabel } from "../charts.js";
import { h, listen, s } from "../dom.js";
import { formatNumber } from "../node-info.js";
import { seriesColumns } from "./model.js";

/** Bar and summary colours by status: the heatmap's two ends, and a calm grey for "ok". */
export const FLOW_STATUS_COLOURS = { ok: "#7a7a7a", vanishing: "#2166ac", exploding: "#b2182b", "no grad": "#c8c8c8" };

const BLUE = [33, 102, 172];
const PALE = [247, 247, 247];
const RED = [178, 24, 43];
const MISSING = [200, 200, 200, 255];
const BAND_SHARE = 0.3;          // the healthy band takes the pale middle ±0.3 of the diverging scale
const DECADES_TO_FULL = 4;       // four decades outside the band reach the scale's full colour
const LABEL_GAP = 13;            // px between label baselines (12 px text)

/** [low, high] of the healthy band for one step's values, as vizgrad.diagnostics decides it:
 * vanishing below max(vanishing, relative × the largest finite value), exploding above ``exploding``. */
export function healthyBand(values, thresholds) {
  let largest = 0;
  for (const value of values) if (value !== null && Number.isFinite(value) && value > largest) largest = value;
  const { vanishing = 1e-7, exploding = 1e3, relative = 1e-3 } = thresholds ?? {};
  return [Math.max(vanishing, relative * largest), exploding];
}

/** Where ``value`` lies on the diverging scale, in [-1, 1]: inside the band [-0.3, 0.3] by
 * its log position, outside it by the decades beyond the edge (full colour at four). */
export function flowPosition(value, [low, high]) {
  if (!(value > 0)) return value === 0 ? -1 : Number.isFinite(value) ? -1 : 1;
  const t = Math.log10(value);
  const a = Math.log10(low);
  const b = Math.log10(high);
  if (t < a) return -BAND_SHARE - (1 - BAND_SHARE) * Math.min(1, (a - t) / DECADES_TO_FULL);
  if (t > b) return BAND_SHARE + (1 - BAND_SHARE) * Math.min(1, (t - b) / DECADES_TO_FULL);
  return b > a ? -BAND_SHARE + (2 * BAND_SHARE * (t - a)) / (b - a) : 0;
}

/** [r, g, b] at position ``u`` in [-1, 1] of the blue–pale–red scale. */
export function divergingRgb(u) {
  const end = u < 0 ? BLUE : RED;
  const weight = Math.min(1, Math.abs(u));
  return PALE.map((channel, i) => Math.round(channel + (end[i] - channel) * weight));
}

/** The heatmap's pixels: one column per recorded step, one row per layer (RGBA bytes),
 * each step coloured against its own healthy band; grey where a layer had no gradient. */
export function flowPixels(flow) {
  const columns = seriesColumns(flow?.series);
  const rows = flow?.layers?.length ?? 0;
  const steps = columns[0]?.length ?? 0;
  const data = new Uint8ClampedArray(Math.max(0, rows * steps * 4));
  for (let step = 0; step < steps; step += 1) {
    const values = columns.map((column) => column[step]?.[1] ?? null);
    const band = healthyBand(values, flow.thresholds);
    values.forEach((value, row) => {
      const offset = (row * steps + step) * 4;
      if (value === null) {
        data.set(MISSING, offset);
      } else {
        data.set([...divergingRgb(flowPosition(value, band)), 255], offset);
      }
    });
  }
  return { width: steps, height: rows, data, steps: columns[0]?.map(([step]) => step) ?? [] };
}

/** The module of a parameter name ("layers.3.weight" → "layers.3"; "weight" → ""). */
export function moduleOf(name) {
  const cut = name.lastIndexOf(".");
  return cut < 0 ? "" : name.slice(0, cut);
}

/** Consecutive rows of one module: [{module, start, end}] (end exclusive). */
export function moduleGroups(layers) {
  const groups = [];
  layers.forEach((name, row) => {
    const module = moduleOf(name);
    const last = groups[groups.length - 1];
    if (last && last.module === module) last.end = row + 1;
    else groups.push({ module, start: row, end: row + 1 });
  });
  return groups;
}

/**
 * The row labels to draw at row height ``rowHeight`` (px): with room for one label per row,
 * every parameter's full name; otherwise one label per module group (at the group's first row),
 * skipping any that would come closer than ``gap`` px to the previous one. [{row, text}].
 */
export function rowLabels(layers, rowHeight, gap = LABEL_GAP) {
  const candidates = rowHeight >= gap
    ? layers.map((name, row) => ({ row, text: name }))
    : moduleGroups(layers).map(({ module, start, end }) => ({ row: start, text: module || layers[start], span: end - start }));
  const labels = [];
  let lastY = -Infinity;
  for (const candidate of candidates) {
    const y = (candidate.row + 0.5) * rowHeight;
    if (y - lastY < gap) continue;
    labels.push({ row: candidate.row, text: candidate.text });
    lastY = y;
  }
  return labels;
}

/** The row height (px) for ``count`` layers: 18 px for a few, down to 2 px for 200. */
export function rowHeightFor(count) {
  return Math.max(2, Math.min(18, Math.floor(440 / Math.max(1, count))));
}

/** The layers that are vanishing or exploding at the current step: [{name, status, rms}]. */
export function flaggedLayers(flow) {
  if (!flow?.layers || !flow.current) return [];
  return flow.layers.flatMap((name, layer) => {
    const status = flow.current.status?.[layer];
    return status === "vanishing" || status === "exploding" ? [{ name, status, rms: flow.current.rms?.[layer] ?? null }] : [];
  });
}

/** "exploding: 2.weight (RMS —)". */
export function flagText({ name, status, rms }) {
  return `${status}: ${name} (RMS ${formatNumber(rms)})`;
}

/** The one-line summary: "3 of 26 layers vanishing (0.weight, 1.weight, 2.weight), 0 exploding". */
export function flowSummary(flow) {
  const flagged = flaggedLayers(flow);
  if (!flagged.length) return "no vanishing or exploding layers";
  const total = flow.layers.length;
  const part = (status) => {
    const names = flagged.filter((item) => item.status === status).map((item) => item.name);
    if (!names.length) return `0 ${status}`;
    const shown = names.slice(0, 3).join(", ") + (names.length > 3 ? `, +${names.length - 3} more` : "");
    return `${names.length} ${status} (${shown})`;
  };
  return `of ${total} layers: ${part("vanishing")}, ${part("exploding")}`;
}

export function panel(title, hint, body, testid) {
  return h("section", { class: "vg-panel", "data-testid": testid }, [
    h("div", { class: "vg-panel-head" }, [h("h3", {}, title), hint ? h("span", { class: "vg-hint" }, hint) : null]),
    body,
  ]);
}

/** The summary as one line (``vg-flags``; ``data-count`` = the number of flagged layers). */
export function flagLine(flow) {
  const count = flaggedLayers(flow).length;
  return h("p", { class: count ? "vg-flags vg-alert-text" : "vg-flags vg-muted", "data-testid": "vg-flags", "data-count": count },
    flowSummary(flow));
}

/** The heatmap's pixels as a PNG data: URI (needs a DOM canvas; null when there are no steps). */
function pixelsImage({ width, height, data }) {
  if (!width || !height || typeof document === "undefined") return null;
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  canvas.getContext("2d").putImageData(new ImageData(data, width, height), 0, 0);
  return canvas.toDataURL("image/png");
}

const CHAR = 7;                  // px per character of 12 px text, a generous average
const FIGURE_WIDTH = 890;

/** A label cut from the left ("…attention.qkv.weight") to at most ``chars`` characters. */
export function fitLabel(text, chars) {
  return text.length <= chars ? text : `…${text.slice(text.length - Math.max(1, chars - 1))}`;
}

/**
 * The figure's columns at ``width`` px: row labels as wide as the longest needs (at most 30%
 * of the width), then the heatmap and the bars sharing the rest.
 */
export function figureLayout(layers, width = FIGURE_WIDTH) {
  const longest = Math.max(6, ...layers.map((name) => name.length));
  const labels = Math.min(Math.round(0.3 * width), Math.max(90, longest * CHAR + 14));
  const gap = 18;
  const rest = width - labels - gap - 12;
  const heat = Math.round(0.58 * rest);
  return { width, labels, heat, gap, bars: rest - heat, top: 56, bottom: 62, labelChars: Math.floor((labels - 14) / CHAR) };
}

/** Where a label of ``chars`` characters goes near ``at`` so that it stays within [left, right]:
 * {x, anchor} (it starts at ``at`` when it fits there, else ends there or at ``right``). */
export function placeLabel(at, chars, left, right, prefer = "start") {
  const length = chars * CHAR;
  if (prefer === "start" && at + length <= right) return { x: at + 3, anchor: "start" };
  if (at - length >= left) return { x: Math.min(at, right) - 3, anchor: "end" };
  return at + length <= right ? { x: at + 3, anchor: "start" } : { x: right, anchor: "end" };
}

/**
 * The gradient-flow figure at ``width`` px: row labels, the layers × steps heatmap with its
 * step axis and colour bar, and the current bars with threshold lines, sharing one row per layer.
 */
export function gradFlowFigure(flow, { width: figureWidth = FIGURE_WIDTH } = {}) {
  const layers = flow?.layers ?? [];
  const LAYOUT = figureLayout(layers, figureWidth);
  const rowHeight = rowHeightFor(layers.length);
  const rowsHeight = rowHeight * layers.length;
  const width = LAYOUT.width;
  const height = LAYOUT.top + rowsHeight + LAYOUT.bottom;
  const heatX = LAYOUT.labels;
  const barX = heatX + LAYOUT.heat + LAYOUT.gap;
  const top = LAYOUT.top;
  const svg = s("svg", {
    class: "vg-chart vg-grad-flow-figure", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `gradient RMS of ${layers.length} layers over steps, and at the current step`,
  });
  const rowY = (row) => top + row * rowHeight;

  // titles
  svg.append(s("text", { class: "vg-axis-title", x: heatX, y: 14 }, "gradient RMS over steps (log)"));
  svg.append(s("text", { class: "vg-axis-title", x: barX, y: 14 }, `at step ${flow?.step ?? "—"}`));

  // module bands and row labels
  const groups = moduleGroups(layers);
  groups.forEach((group, index) => {
    if (index % 2 === 1) {
      svg.append(s("rect", { class: "vg-row-band", x: 0, width: LAYOUT.labels - 4, y: rowY(group.start), height: (group.end - group.start) * rowHeight }));
    }
  });
  for (const label of rowLabels(layers, rowHeight)) {
    svg.append(s("text", {
      class: "vg-tick vg-row-label", x: LAYOUT.labels - 8, y: rowY(label.row) + rowHeight / 2, "text-anchor": "end",
      "dominant-baseline": "middle", "data-row": label.row,
    }, fitLabel(label.text, LAYOUT.labelChars), s("title", {}, label.text)));
  }

  // heatmap
  const pixels = flowPixels(flow);
  const image = pixelsImage(pixels);
  if (image) {
    svg.append(s("image", {
      class: "vg-flow-heatmap", "data-testid": "vg-grad-flow-heatmap", href: image, x: heatX, y: top, width: LAYOUT.heat,
      height: rowsHeight, preserveAspectRatio: "none", style: "image-rendering: pixelated",
    }));
  } else {
    svg.append(s("text", { class: "vg-empty", x: heatX + LAYOUT.heat / 2, y: top + rowsHeight / 2, "text-anchor": "middle" }, "no backward yet"));
  }
  svg.append(s("rect", { class: "vg-frame", x: heatX, y: top, width: LAYOUT.heat, height: rowsHeight }));
  if (rowHeight >= 3) {
    for (const group of groups.slice(1)) {
      svg.append(s("line", { class: "vg-group-rule", x1: 0, x2: barX + LAYOUT.bars, y1: rowY(group.start), y2: rowY(group.start) }));
    }
  }
  // step axis: about five ticks at recorded steps
  const stepsDrawn = pixels.steps;
  if (stepsDrawn.length) {
    const ticks = Math.min(5, stepsDrawn.length);
    const seen = new Set();
    for (let i = 0; i < ticks; i += 1) {
      const column = ticks === 1 ? 0 : Math.round((i * (stepsDrawn.length - 1)) / (ticks - 1));
      if (seen.has(column)) continue;
      seen.add(column);
      // the first and last labels sit inside the heatmap's edges, clear of the bars' axis
      const edge = column === 0 ? "start" : column === stepsDrawn.length - 1 && ticks > 1 ? "end" : "middle";
      const x = edge === "start" ? heatX : edge === "end" ? heatX + LAYOUT.heat : heatX + ((column + 0.5) * LAYOUT.heat) / stepsDrawn.length;
      svg.append(s("text", { class: "vg-tick", x, y: top + rowsHeight + 14, "text-anchor": edge }, String(stepsDrawn[column])));
    }
    svg.append(s("text", { class: "vg-axis-title", x: heatX + LAYOUT.heat, y: top + rowsHeight + 28, "text-anchor": "end" }, "step"));
  }
  // colour bar: vanishing ← healthy band → exploding
  const barTop = top + rowsHeight + 34;
  const gradientId = `vg-flow-scale-${Math.random().toString(36).slice(2, 9)}`;
  const stops = [-1, -BAND_SHARE, 0, BAND_SHARE, 1].map((u) => s("stop", { offset: `${((u + 1) / 2) * 100}%`, "stop-color": `rgb(${divergingRgb(u).join(",")})` }));
  svg.append(s("defs", {}, s("linearGradient", { id: gradientId }, stops)));
  const scaleWidth = 240;
  svg.append(s("rect", { class: "vg-colour-bar", x: heatX, y: barTop, width: scaleWidth, height: 10, fill: `url(#${gradientId})` }));
  const legendY = barTop + 23;
  svg.append(s("text", { class: "vg-tick", x: heatX, y: legendY, "text-anchor": "start" }, "vanishing"));
  svg.append(s("text", { class: "vg-tick", x: heatX + scaleWidth / 2, y: legendY, "text-anchor": "middle" }, "healthy"));
  svg.append(s("text", { class: "vg-tick", x: heatX + scaleWidth, y: legendY, "text-anchor": "end" }, "exploding"));
  svg.append(s("text", { class: "vg-tick vg-muted-text", x: heatX + scaleWidth + 10, y: barTop + 9, "text-anchor": "start" },
    `full colour: ${DECADES_TO_FULL} decades outside the band`));

  // current bars on the same rows, log scale, with the thresholds as lines
  const rms = flow?.current?.rms ?? [];
  const status = flow?.current?.status ?? [];
  const band = healthyBand(rms, flow?.thresholds);
  const finite = rms.filter((value) => value !== null && Number.isFinite(value) && value > 0);
  const low = Math.min(band[0], ...finite) / 3;
  const high = Math.max(band[1], ...finite) * 3;
  const x = scale([low, high], [barX, barX + LAYOUT.bars], { log: true });
  svg.append(s("rect", { class: "vg-healthy-band", x: x(band[0]), width: x(band[1]) - x(band[0]), y: top, height: rowsHeight }));
  layers.forEach((name, row) => {
    const value = rms[row];
    const state = status[row] ?? "no grad";
    const group = s("g", { class: "vg-flow-row", "data-testid": "vg-grad-flow-row", "data-layer": name, "data-status": state });
    const note = `${name}: gradient RMS ${formatNumber(value ?? null)} (${state})`;
    group.append(s("rect", { class: "vg-row-hit", x: heatX, y: rowY(row), width: barX + LAYOUT.bars - heatX, height: rowHeight }, s("title", {}, note)));
    if (value !== null && value !== undefined && Number.isFinite(value) && value > 0) {
      const inset = rowHeight >= 4 ? Math.max(0.5, rowHeight * 0.12) : 0;
      group.append(s("rect", {
        class: "vg-bar", x: barX, y: rowY(row) + inset, width: Math.max(1, x(value) - barX), height: Math.max(1, rowHeight - 2 * inset),
        fill: FLOW_STATUS_COLOURS[state] ?? FLOW_STATUS_COLOURS.ok,
      }, s("title", {}, note)));
    }
    svg.append(group);
  });
  for (const [value, label, prefer] of [[band[0], "vanishing", "start"], [band[1], "exploding", "end"]]) {
    const at = x(value);
    svg.append(s("line", { class: `vg-threshold vg-threshold-${label}`, "data-testid": `vg-threshold-${label}`, x1: at, x2: at, y1: label === "vanishing" ? top - 36 : top - 20, y2: top + rowsHeight, stroke: FLOW_STATUS_COLOURS[label] }));
    // the two labels on lines of their own (the thresholds may lie close together on the
    // scale), each kept inside the bars' column
    const text = `${label} ${tickLabel(value)}`;
    const place = placeLabel(at, text.length, barX, barX + LAYOUT.bars + 10, prefer);
    svg.append(s("text", { class: "vg-tick", x: place.x, y: label === "vanishing" ? top - 24 : top - 8, "text-anchor": place.anchor, fill: FLOW_STATUS_COLOURS[label] },
      text));
  }
  const ticks = logTicks(low, high, 4);
  for (const tick of ticks) {
    svg.append(s("text", { class: "vg-tick", x: x(tick), y: top + rowsHeight + 14, "text-anchor": "middle" }, tickLabel(tick)));
  }
  svg.append(s("line", { class: "vg-axis", x1: barX, x2: barX + LAYOUT.bars, y1: top + rowsHeight, y2: top + rowsHeight }));
  svg.append(s("text", { class: "vg-axis-title", x: barX + LAYOUT.bars, y: top + rowsHeight + 28, "text-anchor": "end" }, "gradient RMS"));
  return svg;
}

/** The heatmap cell under a pointer at (x, y) px in a heatmap drawn ``width`` × ``height`` px:
 * {layer (name), step, rms}, or null outside it or before the first step. */
export function heatmapCell(flow, x, y, width, height) {
  const columns = seriesColumns(flow?.series);
  const rows = flow?.layers?.length ?? 0;
  const steps = columns[0]?.length ?? 0;
  if (!rows || !steps || x < 0 || y < 0 || x >= width || y >= height) return null;
  const row = Math.min(rows - 1, Math.floor((y / height) * rows));
  const column = Math.min(steps - 1, Math.floor((x / width) * steps));
  const [step, rms] = columns[row][column];
  return { layer: flow.layers[row], step, rms };
}

/** Hovering a heatmap inside ``container`` writes its cell's layer, step and RMS into
 * ``readout`` (``flowOf()`` gives the flow drawn). Returns the cleanup. */
export function listenHeatmapReadout(container, readout, flowOf) {
  const stopMove = listen(container, "pointermove", (event) => {
    // the rows' hover targets lie over the heatmap: find it through the figure under the pointer
    const image = event.target.closest?.("svg.vg-grad-flow-figure")?.querySelector("image.vg-flow-heatmap");
    if (!image) return;
    const box = image.getBoundingClientRect();
    const cell = heatmapCell(flowOf(), event.clientX - box.left, event.clientY - box.top, box.width, box.height);
    readout.textContent = cell ? `${cell.layer} at step ${cell.step}: gradient RMS ${formatNumber(cell.rms)}` : "";
  });
  const stopLeave = listen(container, "pointerleave", () => {
    readout.textContent = "";
  });
  return () => {
    stopMove();
    stopLeave();
  };
}

const PANEL_INSET = 46;           // the widget's and the panel's padding and borders, both sides

/** The figure's width inside a widget root ``root`` (its default while the root is not laid out). */
export function figureWidth(root) {
  const width = root?.clientWidth ?? 0;
  return width > 0 ? Math.max(480, Math.floor(width - PANEL_INSET)) : FIGURE_WIDTH;
}

/** Calls ``onResize()`` when ``root``'s width changes (a notebook's side panel opened, the
 * window resized). Returns the cleanup. */
export function followWidth(root, onResize) {
  if (typeof ResizeObserver === "undefined") return () => {};
  let last = root.clientWidth;
  const observer = new ResizeObserver(() => {
    if (Math.abs(root.clientWidth - last) < 2) return;
    last = root.clientWidth;
    onResize();
  });
  observer.observe(root);
  return () => observer.disconnect();
}

/** The gradient-flow panel: the figure (``width`` px wide) and its one-line summary. */
export function gradFlowPanels(flow, { width } = {}) {
  const thresholds = flow?.thresholds ?? {};
  const hint = thresholds.vanishing
    ? `healthy: above ${formatNumber(thresholds.vanishing)} and ${formatNumber(thresholds.relative)}× the largest, below ${formatNumber(thresholds.exploding)}`
    : "";
  return [
    h("section", { class: "vg-panel vg-wide", "data-testid": "vg-grad-flow-chart" }, [
      h("div", { class: "vg-panel-head" }, [h("h3", {}, "Gradient flow"), h("span", { class: "vg-hint" }, hint)]),
      flagLine(flow),
      h("div", { class: "vg-figure-scroll", "data-testid": "vg-grad-flow-bars" }, gradFlowFigure(flow, { width })),
    ]),
  ];
}
