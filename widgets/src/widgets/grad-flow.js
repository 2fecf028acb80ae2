// Gradient flow as the widgets show it: per-layer gradient RMS over steps (binary
// series from vizgrad.widgets.grad_flow.GradFlowTracker.payload) and the current step's
// bars, vanishing and exploding layers flagged. The data helpers are pure; the panel
// builders return detached elements.

import { barChart, lineChart, SERIES_COLOURS } from "../charts.js";
import { h } from "../dom.js";
import { formatNumber } from "../node-info.js";
import { STATUS_COLOURS } from "../report-data.js";
import { seriesColumns } from "./model.js";
import { legend } from "./ui.js";

/** One {name, points} line per layer. */
export function flowLines(flow) {
  if (!flow?.layers) return [];
  const columns = seriesColumns(flow.series);
  return flow.layers.map((name, layer) => ({ name, points: columns[layer] ?? [] }));
}

/** The current step's bars, coloured by status. */
export function flowBars(flow) {
  if (!flow?.layers || !flow.current) return [];
  return flow.layers.map((label, layer) => {
    const status = flow.current.status?.[layer] ?? "ok";
    return { label, value: flow.current.rms?.[layer] ?? null, colour: STATUS_COLOURS[status] ?? STATUS_COLOURS.ok, note: status };
  });
}

/** The layers that are vanishing or exploding at the current step: [{name, status, rms}]. */
export function flaggedLayers(flow) {
  if (!flow?.layers || !flow.current) return [];
  return flow.layers.flatMap((name, layer) => {
    const status = flow.current.status?.[layer];
    return status === "vanishing" || status === "exploding" ? [{ name, status, rms: flow.current.rms?.[layer] ?? null }] : [];
  });
}

/** "exploding: 2.weight (RMS —)" lines. */
export function flagText({ name, status, rms }) {
  return `${status}: ${name} (RMS ${formatNumber(rms)})`;
}

export function panel(title, hint, body, testid) {
  return h("section", { class: "vg-panel", "data-testid": testid }, [
    h("div", { class: "vg-panel-head" }, [h("h3", {}, title), hint ? h("span", { class: "vg-hint" }, hint) : null]),
    body,
  ]);
}

/** The flagged layers as a list (or a calm line). */
export function flagList(flow) {
  const flagged = flaggedLayers(flow);
  if (!flagged.length) return h("p", { class: "vg-muted vg-flags-none", "data-testid": "vg-flags" }, "no vanishing or exploding layers");
  return h("ul", { class: "vg-flags", "data-testid": "vg-flags" }, flagged.map((item) =>
    h("li", { class: `vg-${item.status}`, "data-testid": "vg-flag", "data-layer": item.name, "data-status": item.status }, flagText(item))));
}

/** The two gradient-flow panels: RMS per layer over steps, and the current step's bars. */
export function gradFlowPanels(flow) {
  const lines = flowLines(flow);
  const thresholds = flow?.thresholds ?? {};
  const over = lineChart({ series: lines, xLabel: "step", yLabel: "gradient RMS", logY: true, height: 220 });
  const bars = barChart({ bars: flowBars(flow), yLabel: "gradient RMS", logY: true, height: 220 });
  const hint = thresholds.vanishing ? `flagged below ${formatNumber(thresholds.vanishing)} or ${formatNumber(thresholds.relative)}× the largest, above ${formatNumber(thresholds.exploding)}` : "";
  return [
    panel("Gradient flow", hint, h("div", {}, [
      over,
      legend(lines.map((line, index) => ({ name: line.name, colour: SERIES_COLOURS[index % SERIES_COLOURS.length] }))),
    ]), "vg-grad-flow-chart"),
    panel("Gradient per layer", flow?.step !== null && flow?.step !== undefined ? `at step ${flow.step}` : "no backward yet", h("div", {}, [
      bars,
      legend(Object.entries(STATUS_COLOURS).map(([name, colour]) => ({ name, colour }))),
      flagList(flow),
    ]), "vg-grad-flow-bars"),
  ];
}
