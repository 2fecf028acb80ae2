// Small SVG charts for the report: line charts (loss, per-layer gradient size over
// training), bar charts (gradient flow) and a scatter plot over an image (decision
// boundary). Each builder returns a detached <svg>; no listeners, nothing global.
// The scale helpers at the top are pure and unit-tested.

import { s } from "./dom.js";

// Colour-blind safe: Okabe and Ito's categorical palette after vizgrad's class blue and orange
// (every pair stays apart under simulated protanopia and deuteranopia: tests/test_report.py).
export const SERIES_COLOURS = ["#4c72b0", "#dd8452", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442"];

const MARGIN = { top: 12, right: 14, bottom: 38, left: 56 };

/** [min, max] of the finite numbers in ``values`` (null when there are none). */
export function extent(values, { positiveOnly = false } = {}) {
  let low = Infinity;
  let high = -Infinity;
  for (const value of values) {
    if (value === null || !Number.isFinite(value) || (positiveOnly && value <= 0)) continue;
    if (value < low) low = value;
    if (value > high) high = value;
  }
  return low <= high ? [low, high] : null;
}

/** About ``count`` round tick values covering [low, high]. */
export function niceTicks(low, high, count = 5) {
  if (!(high > low)) return [low];
  const rough = (high - low) / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((m) => m >= rough);
  const ticks = [];
  for (let tick = Math.ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
    ticks.push(Number(tick.toPrecision(12)));
  }
  return ticks;
}

/**
 * Powers of ten within [low, high] (both positive), thinned to at most ``count``; when
 * fewer than two fit, the 1-2-5 steps in between.
 */
export function logTicks(low, high, count = 6) {
  const first = Math.ceil(Math.log10(low) - 1e-9);
  const last = Math.floor(Math.log10(high) + 1e-9);
  const every = Math.max(1, Math.ceil((last - first + 1) / count));
  const ticks = [];
  for (let power = first; power <= last; power += every) ticks.push(10 ** power);
  if (ticks.length >= 2) return ticks;
  const steps = [];
  for (let power = first - 1; power <= last; power += 1) {
    for (const m of [1, 2, 5]) {
      const tick = Number((m * 10 ** power).toPrecision(6));
      if (tick >= low * (1 - 1e-9) && tick <= high * (1 + 1e-9)) steps.push(tick);
    }
  }
  return steps;
}

/** A function mapping [d0, d1] onto [r0, r1], linearly or on a log scale. */
export function scale([d0, d1], [r0, r1], { log = false } = {}) {
  const f = log ? Math.log10 : (x) => x;
  const a = f(d0);
  const b = f(d1);
  const span = b - a || 1;
  return (x) => r0 + ((f(x) - a) / span) * (r1 - r0);
}

/** A tick label: short, with exponents for very small or large values. */
export function tickLabel(value) {
  if (value === 0) return "0";
  const size = Math.abs(value);
  if (size >= 1e4 || size < 1e-2) return value.toExponential(0).replace("e+", "e");
  return String(Number(value.toPrecision(3)));
}

function padded(range, log) {
  let [low, high] = range;
  if (log) {
    if (high / low < 10) {
      const middle = Math.sqrt(low * high);
      return [middle / Math.sqrt(10) / 1.2, middle * Math.sqrt(10) * 1.2];
    }
    return [low / 1.3, high * 1.3];
  }
  if (high === low) return [low - 1, high + 1];
  const pad = (high - low) * 0.05;
  return [low - pad, high + pad];
}

function frame(width, height, label) {
  return s("svg", {
    class: "vg-chart", viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": label,
    preserveAspectRatio: "xMidYMid meet",
  });
}

function yAxis(svg, y, ticks, width, { grid = true, title }) {
  for (const tick of ticks) {
    const position = y(tick);
    if (grid) {
      svg.append(s("line", { class: "vg-grid", x1: MARGIN.left, x2: width - MARGIN.right, y1: position, y2: position }));
    }
    svg.append(s("text", { class: "vg-tick", x: MARGIN.left - 6, y: position, "text-anchor": "end", "dominant-baseline": "middle" }, tickLabel(tick)));
  }
  if (title) {
    svg.append(s("text", { class: "vg-axis-title", transform: `translate(14 ${MARGIN.top + 4}) rotate(-90)`, "text-anchor": "end" }, title));
  }
}

/**
 * A line chart.
 * @param {{series: {name: string, points: [number, number][], colour?: string, outline?: string}[], xLabel?: string,
 *   yLabel?: string, logY?: boolean, width?: number, height?: number}} options
 */
export function lineChart({ series, xLabel = "", yLabel = "", logY = false, width = 480, height = 240 }) {
  const svg = frame(width, height, yLabel || "line chart");
  const xs = series.flatMap((line) => line.points.map((p) => p[0]));
  const ys = series.flatMap((line) => line.points.map((p) => p[1]));
  const xRange = extent(xs);
  const yRange = extent(ys, { positiveOnly: logY });
  if (!xRange || !yRange) {
    svg.append(s("text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "vg-empty" }, "no data"));
    return svg;
  }
  const yDomain = padded(yRange, logY);
  const x = scale(xRange[0] === xRange[1] ? [xRange[0] - 1, xRange[1] + 1] : xRange, [MARGIN.left, width - MARGIN.right]);
  const y = scale(yDomain, [height - MARGIN.bottom, MARGIN.top], { log: logY });
  yAxis(svg, y, logY ? logTicks(...yDomain) : niceTicks(...yDomain, 4), width, { title: yLabel });
  for (const tick of niceTicks(...xRange, 6)) {
    svg.append(s("text", { class: "vg-tick", x: x(tick), y: height - MARGIN.bottom + 14, "text-anchor": "middle" }, tickLabel(tick)));
  }
  svg.append(s("line", { class: "vg-axis", x1: MARGIN.left, x2: width - MARGIN.right, y1: height - MARGIN.bottom, y2: height - MARGIN.bottom }));
  if (xLabel) {
    svg.append(s("text", { class: "vg-axis-title", x: width - MARGIN.right, y: height - 6, "text-anchor": "end" }, xLabel));
  }
  series.forEach((line, index) => {
    const colour = line.colour || SERIES_COLOURS[index % SERIES_COLOURS.length];
    const points = line.points.filter(([, v]) => v !== null && Number.isFinite(v) && (!logY || v > 0));
    const path = points.map(([px, py], i) => `${i ? "L" : "M"}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join("");
    if (line.outline) {
      // a dark edge under a light line keeps it visible on any background
      svg.append(s("path", { class: "vg-line vg-line-outline", d: path, stroke: line.outline, "stroke-width": 4 }));
    }
    svg.append(s("path", { class: "vg-line", d: path, stroke: colour }, s("title", {}, line.name)));
    if (points.length === 1) {
      svg.append(s("circle", { cx: x(points[0][0]), cy: y(points[0][1]), r: 3, fill: colour }));
    }
  });
  return svg;
}

/**
 * A bar chart, one bar per entry.
 * @param {{bars: {label: string, value: number|null, colour?: string, note?: string}[], yLabel?: string,
 *   logY?: boolean, width?: number, height?: number}} options
 */
export function barChart({ bars, yLabel = "", logY = false, width = 480, height = 240 }) {
  const bottom = MARGIN.bottom + 34; // room for slanted labels
  const svg = frame(width, height, yLabel || "bar chart");
  const range = extent(bars.map((bar) => bar.value), { positiveOnly: logY });
  if (!range) {
    svg.append(s("text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "vg-empty" }, "no data"));
    return svg;
  }
  const domain = logY ? padded(range, true) : [0, padded(range, false)[1]];
  const y = scale(domain, [height - bottom, MARGIN.top], { log: logY });
  yAxis(svg, y, logY ? logTicks(...domain) : niceTicks(...domain, 4), width, { title: yLabel });
  const slot = (width - MARGIN.left - MARGIN.right) / bars.length;
  bars.forEach((bar, index) => {
    const centre = MARGIN.left + slot * (index + 0.5);
    const valid = bar.value !== null && Number.isFinite(bar.value) && (!logY || bar.value > 0);
    if (valid) {
      const top = y(bar.value);
      svg.append(s("rect", {
        class: "vg-bar", x: centre - slot * 0.35, width: slot * 0.7, y: top, height: Math.max(1, height - bottom - top),
        fill: bar.colour || SERIES_COLOURS[0],
      }, s("title", {}, `${bar.label}: ${tickLabel(bar.value)}${bar.note ? ` (${bar.note})` : ""}`)));
    } else {
      svg.append(s("text", { class: "vg-tick", x: centre, y: height - bottom - 4, "text-anchor": "middle" }, "—"));
    }
    svg.append(s("text", {
      class: "vg-tick", transform: `translate(${centre} ${height - bottom + 10}) rotate(35)`, "text-anchor": "start",
    }, bar.label));
  });
  svg.append(s("line", { class: "vg-axis", x1: MARGIN.left, x2: width - MARGIN.right, y1: height - bottom, y2: height - bottom }));
  return svg;
}

/**
 * Points over a background image whose corners are ``extent`` = [xmin, xmax, ymin, ymax]
 * (the decision boundary). ``image`` must be a data: URI of a PNG.
 */
export function scatterOverImage({ image, extent: [x0, x1, y0, y1], points, colours = SERIES_COLOURS, size = 320 }) {
  const svg = frame(size, size, "decision boundary");
  const x = scale([x0, x1], [0, size]);
  const y = scale([y0, y1], [size, 0]);
  if (typeof image === "string" && image.startsWith("data:image/png;base64,")) {
    svg.append(s("image", { href: image, x: 0, y: 0, width: size, height: size, preserveAspectRatio: "none" }));
  }
  for (const [px, py, label] of points) {
    svg.append(s("circle", { class: "vg-point", cx: x(px).toFixed(1), cy: y(py).toFixed(1), r: 3.2, fill: colours[label % colours.length] }));
  }
  svg.append(s("rect", { class: "vg-frame", x: 0.5, y: 0.5, width: size - 1, height: size - 1 }));
  return svg;
}
