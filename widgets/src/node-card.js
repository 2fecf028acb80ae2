// A graph node's details as an HTML block: used compact in the hover tooltip and in
// full (with value and gradient histograms) in the details panel.

import { h, s } from "./dom.js";
import { describeNode } from "./node-info.js";

function rowsTable(rows) {
  return h("table", { class: "vg-rows" }, rows.map(([label, value]) => h("tr", {}, [h("th", {}, label), h("td", {}, value)])));
}

/** A tiny histogram of a TensorStats dictionary, as SVG bars. */
export function histogram(stats, { width = 220, height = 36, colour = "#4c72b0" } = {}) {
  const counts = stats.histogram || [];
  const largest = Math.max(1, ...counts);
  const bar = width / Math.max(1, counts.length);
  return s("svg", { class: "vg-histogram", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "histogram" },
    counts.map((count, index) => {
      const barHeight = count ? Math.max(1, (count / largest) * (height - 2)) : 0;
      return s("rect", { x: index * bar + 0.5, width: Math.max(1, bar - 1), y: height - barHeight, height: barHeight, fill: colour });
    }));
}

function section(title, rows, stats, { histograms, bad = false, colour, testid }) {
  if (!rows.length) return null;
  return h("div", { class: `vg-card-section${bad ? " vg-bad" : ""}`, ...(testid ? { "data-testid": testid } : {}) }, [
    h("div", { class: "vg-card-heading" }, title),
    rowsTable(rows),
    histograms && stats && stats.histogram ? histogram(stats, { colour }) : null,
  ]);
}

/** The details of ``node`` (a Graph JSON node). ``histograms`` adds value/grad/tangent histograms. */
export function nodeCard(node, { histograms = false } = {}) {
  const info = describeNode(node);
  return h("div", { class: "vg-card" }, [
    h("div", { class: "vg-card-title" }, [h("span", {}, info.title), h("span", { class: "vg-card-id" }, info.id)]),
    rowsTable(info.general),
    section("value", info.value, node.value, { histograms, colour: "#4c72b0" }),
    section(info.gradIsBad ? "gradient — has NaN/inf" : "gradient", info.grad, node.grad,
      { histograms, bad: info.gradIsBad, colour: "#dd8452" }),
    info.gradNote ? h("p", { class: "vg-card-note", "data-testid": "vg-grad-note" }, info.gradNote) : null,
    section("tangent (forward mode)", info.tangent, node.tangent, { histograms, colour: "#55a868", testid: "vg-card-tangent" }),
    info.source ? h("code", { class: "vg-source" }, info.source) : null,
  ]);
}
