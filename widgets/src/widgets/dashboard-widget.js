// The training dashboard widget (vizgrad/widgets/dashboard.py), in three tabs (the `tab`
// trait): loss and metric curves (from vizgrad.events.mark) with the update/parameter
// ratios, the gradient flow, and weight and gradient histograms per layer (in a panel that
// scrolls when there are many). Redrawn at most once per animation frame; render()
// returns its cleanup.

import { lineChart, SERIES_COLOURS } from "../charts.js";
import { h, listen } from "../dom.js";
import { histogram } from "../node-card.js";
import { formatNumber } from "../node-info.js";
import { createFrameScheduler } from "./frame.js";
import {
  figureWidth, flaggedLayers, flagText, followWidth, gradFlowPanels, listenHeatmapReadout, panel,
} from "./grad-flow.js";
import { floats, onChange, save, seriesColumns } from "./model.js";

const TABS = [["curves", "Curves"], ["flow", "Gradient flow"], ["histograms", "Weights and gradients"]];
const CHART_HEIGHT = 190;
import { legend, showError } from "./ui.js";

/** One chart per value name: {key, lines: [{name (the mark), points}]}, in arrival order. */
export function curveCharts(curves) {
  return Object.entries(curves ?? {}).map(([key, lines]) => ({
    key,
    lines: Object.entries(lines).map(([name, payload]) => ({ name, points: seriesColumns(payload)[0] ?? [] })),
  }));
}

/** The last finite value of a line (null when there is none). */
export function latestValue(points) {
  for (let i = points.length - 1; i >= 0; i -= 1) {
    if (points[i][1] !== null && Number.isFinite(points[i][1])) return points[i][1];
  }
  return null;
}

/** Whether a log scale suits these lines: all positive and spanning more than ``span``×. */
export function wantsLog(lines, span = 20) {
  let low = Infinity;
  let high = 0;
  for (const line of lines) {
    for (const [, value] of line.points) {
      if (value === null) continue;
      if (value <= 0) return false;
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
  }
  return high > 0 && high / low > span;
}

/** Update/parameter ratio lines, one per layer. */
export function ratioLines(ratios, layers) {
  const columns = seriesColumns(ratios?.series);
  return layers.map((name, layer) => ({ name, points: columns[layer] ?? [] }));
}

/** A layer's histogram entry as the {histogram: counts} that node-card's histogram() draws. */
export function histogramStats(entry) {
  return entry ? { histogram: Array.from(floats(entry.counts)) } : null;
}

function curvePanel({ key, lines }, width) {
  const chart = lineChart({ series: lines, xLabel: "step", yLabel: key, logY: wantsLog(lines), width, height: CHART_HEIGHT });
  const latest = lines.map((line) => `${line.name} ${formatNumber(latestValue(line.points))}`).join(" · ");
  const element = panel(key, latest, h("div", {}, [
    chart,
    lines.length > 1 ? legend(lines.map((line, index) => ({ name: line.name, colour: SERIES_COLOURS[index % SERIES_COLOURS.length] }))) : null,
  ]), "vg-curve");
  element.dataset.curve = key;
  return element;
}

function ratioPanel(ratios, layers, width) {
  const lines = ratioLines(ratios, layers);
  const chart = lineChart({ series: lines, xLabel: "step", yLabel: "update / parameter", logY: true, width, height: CHART_HEIGHT });
  return panel("Update / parameter ratio", `‖Δw‖ / ‖w‖ per step; around ${formatNumber(ratios?.reference ?? 1e-3)} is typical`,
    h("div", {}, [chart, legend(lines.map((line, index) => ({ name: line.name, colour: SERIES_COLOURS[index % SERIES_COLOURS.length] })))]),
    "vg-ratio-chart");
}

function histogramCell(name, entry) {
  const part = (label, data, colour) => {
    if (!data) return h("div", { class: "vg-muted" }, `${label}: none`);
    const range = `${formatNumber(data.low)} … ${formatNumber(data.high)}`;
    const flags = data.nan || data.inf ? ` · NaN ${data.nan} inf ${data.inf}` : "";
    return h("div", { class: data.nan || data.inf ? "vg-bad" : "" }, [
      h("div", {}, `${label} ${range}${flags}`),
      histogram(histogramStats(data), { width: 200, height: 30, colour }),
    ]);
  };
  return h("div", { class: "vg-histogram-cell", "data-testid": "vg-layer-histogram", "data-layer": name }, [
    h("div", { class: "vg-chain-to" }, name),
    part("weights", entry.weight, "#4c72b0"),
    part("gradients", entry.grad, "#dd8452"),
  ]);
}

function histogramPanel(histograms, layers) {
  const cells = layers.filter((name) => histograms?.[name]).map((name) => histogramCell(name, histograms[name]));
  const sampled = layers.some((name) => histograms?.[name]?.weight?.sampled);
  const element = panel("Weights and gradients", sampled ? "histograms of a strided sample of each tensor" : "",
    h("div", { class: "vg-histograms" }, cells.length ? cells : [h("p", { class: "vg-muted" }, "no parameters")]), "vg-histograms");
  element.classList.add("vg-wide");
  return element;
}

function render({ model, el }) {
  const root = h("div", { class: "vg-widget vg-themed vg-dashboard", "data-testid": "vg-dashboard" });
  const heading = h("div", { class: "vg-toolbar" });
  const tabs = h("div", { class: "vg-tabs", role: "tablist" }, TABS.map(([name, label]) => h("button", {
    type: "button", class: "vg-tab", role: "tab", "data-tab": name, "data-testid": `vg-dashboard-tab-${name}`,
  }, label)));
  const body = h("div", { class: "vg-panels vg-dashboard-body" });
  const readout = h("div", { class: "vg-readout", "data-testid": "vg-grad-flow-readout", "aria-live": "polite" });
  root.append(heading, tabs, readout, body);
  const stopReadout = listenHeatmapReadout(body, readout, () => model.get("flow"));
  el.append(root);
  const scheduler = createFrameScheduler();

  function draw() {
    try {
      const layers = model.get("layers");
      const flow = model.get("flow");
      const flagged = flaggedLayers(flow);
      heading.replaceChildren(...[
        h("h3", {}, model.get("title")),
        h("span", { class: "vg-status", "data-testid": "vg-status" }, `step ${model.get("step")}`),
        h("span", { class: "vg-spacer" }),
        flagged.length ? h("span", { class: "vg-alert", "data-testid": "vg-flag-summary" }, flagged.length === 1 ? flagText(flagged[0]) : `${flagged.length} layers flagged (see gradient flow)`) : null,
      ].filter(Boolean));
      const width = figureWidth(root);
      const half = Math.floor((width - 34) / 2);        // two charts a row, in panels with padding
      const shown = model.get("tab") || "curves";
      const panels = {
        curves: [...curveCharts(model.get("curves")).map((chart) => curvePanel(chart, half)), ratioPanel(model.get("ratios"), layers, half)],
        flow: gradFlowPanels(flow, { width }),
        histograms: [histogramPanel(model.get("histograms"), layers)],
      };
      // every tab's panels stay in the page (hidden when not shown): tests and screen readers find them
      for (const [name, list] of Object.entries(panels)) for (const element of list) element.hidden = name !== shown;
      for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.dataset.tab === shown));
      body.replaceChildren(...panels.curves, ...panels.flow, ...panels.histograms);
      root.dataset.step = String(model.get("step"));
      root.dataset.ready = "true";
    } catch (error) {
      showError(root, body, error);
    }
  }

  const stop = onChange(model, ["layers", "flow", "ratios", "curves", "histograms", "step", "title", "tab"],
    () => scheduler.schedule("draw", draw));
  const stopTabs = listen(tabs, "click", (event) => {
    const tab = event.target.closest?.(".vg-tab");
    if (tab) save(model, { tab: tab.dataset.tab });
    scheduler.schedule("draw", draw);
  });
  const stopResize = followWidth(root, () => scheduler.schedule("draw", draw));
  draw();
  return () => {
    stopTabs();
    stopResize();
    stopReadout();
    stop();
    scheduler.cancel();
    root.remove();
  };
}

export default { render };
