// The HTML report's entry point: reads the JSON the page embeds and builds the page:
// the computation graph with its backward replay and a details panel, the loss curve,
// the gradient flow over training and the decision boundary (each when present).
// When the graph is drawn, the report's root gets data-ready="true" (tests wait on it).

import "./report.css";

import { barChart, lineChart, scatterOverImage, SERIES_COLOURS } from "./charts.js";
import { h, listen, s } from "./dom.js";
import { defaultCollapsed } from "./graph-dot.js";
import { createExplorer } from "./graph-explorer.js";
import { nodeCard } from "./node-card.js";
import { gradFlowSeries, latestGradBars, lossPoints, readEmbedded, STATUS_COLOURS, stepText } from "./report-data.js";
import { createTimeline } from "./timeline.js";

const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  previous: "M12 2v12L4 8z",
  play: "M4 2v12l10-6z",
  pause: "M3 2h4v12H3zM9 2h4v12H9z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
};

function icon(name) {
  return s("svg", { viewBox: "0 0 16 16", width: 14, height: 14, "aria-hidden": "true" }, s("path", { d: ICONS[name] }));
}

function button(label, content, onClick) {
  const element = h("button", { type: "button", class: "vg-button", title: label, "aria-label": label }, content);
  return { element, remove: listen(element, "click", onClick) };
}

function panel(title, hint, body, extraClass = "") {
  return h("section", { class: `vg-panel ${extraClass}` }, [
    h("div", { class: "vg-panel-head" }, [h("h2", {}, title), hint ? h("span", { class: "vg-hint" }, hint) : null]),
    body,
  ]);
}

function legend(entries) {
  return h("div", { class: "vg-legend-row" }, entries.map(({ name, colour }) =>
    h("span", { class: "vg-legend-item" }, [h("span", { class: "vg-swatch", style: `background:${colour}` }), name])));
}

function header(data) {
  const summary = data.extra?.summary ?? {};
  return h("header", { class: "vg-header" }, [
    h("h1", {}, data.title || "vizgrad report"),
    data.extra?.subtitle ? h("p", { class: "vg-subtitle" }, data.extra.subtitle) : null,
    Object.keys(summary).length
      ? h("dl", { class: "vg-facts" }, Object.entries(summary).map(([key, value]) =>
        h("div", { class: "vg-fact" }, [h("dt", {}, key), h("dd", {}, String(value))])))
      : null,
  ]);
}

/** The graph panel: toolbar (replay and zoom), graph and details. Returns its cleanup. */
async function graphPanel(root, data) {
  const { graph } = data;
  const timeline = createTimeline(graph.backward_order.length);
  const cleanups = [];
  const add = ({ element, remove }) => {
    cleanups.push(remove);
    return element;
  };

  const slider = h("input", { type: "range", class: "vg-slider", min: 0, max: timeline.length, step: 1,
    value: timeline.position, "aria-label": "backward step" });
  const status = h("span", { class: "vg-step-text", "aria-live": "polite" });
  const playButton = button("play the backward pass", icon("play"), () => timeline.toggle());
  const host = h("div", { class: "vg-graph-host" });
  const details = h("div", { class: "vg-details-body" });
  let explorer = null;
  const replayButtons = h("div", { class: "vg-button-group" }, [
    add(button("before backward", icon("first"), () => timeline.seek(0))),
    add(button("previous step", icon("previous"), () => timeline.step(-1))),
    add(playButton),
    add(button("next step", icon("next"), () => timeline.step(1))),
    add(button("all steps", icon("last"), () => timeline.seek(timeline.length))),
  ]);
  const zoom = h("div", { class: "vg-button-group" }, [
    add(button("zoom out", "−", () => explorer.view?.zoomOut())),
    add(button("zoom in", "+", () => explorer.view?.zoomIn())),
    add(button("fit the graph", "fit", () => explorer.view?.fit())),
    add(button("zoom to the selected node", "◎", () => explorer.fitSelection())),
  ]);
  const forwardOnly = graph.backward === null || (graph.backward && graph.backward.source === null) || !graph.backward_order.length;
  const replay = h("div", { class: "vg-replay", hidden: forwardOnly }, [replayButtons, slider, status]);
  // the graph's own note says what ran (written in Python, with the user's names); shown as given
  const note = graph.backward?.note ?? (forwardOnly ? "forward only: no backward pass to replay" : "");
  const hint = graph.truncated ? "truncated: the recorder's node budget was reached" : "drag to pan · scroll to zoom · click a node";
  const body = h("div", {}, [
    h("div", { class: "vg-toolbar" }, [replay, note ? h("span", { class: "vg-muted" }, note) : null, h("span", { class: "vg-spacer" }), zoom]),
    h("div", { class: "vg-graph-body" }, [host, h("aside", { class: "vg-details" }, [h("h3", {}, "Details"), details])]),
  ]);
  const section = panel("Computation graph", hint, body, "vg-graph-panel");
  root.append(section);

  let selected = null;
  function showDetails() {
    const activeId = graph.backward_order[timeline.activeStep];
    const node = selected ?? graph.nodes.find((candidate) => candidate.id === activeId);
    details.replaceChildren(node ? nodeCard(node, { histograms: true })
      : h("p", { class: "vg-muted" }, "Hover over a node for its details; click to keep them here."));
  }
  function update(state) {
    slider.value = String(state.position);
    status.textContent = stepText(graph, state.activeStep);
    playButton.element.replaceChildren(icon(state.playing ? "pause" : "play"));
    playButton.element.setAttribute("aria-label", state.playing ? "pause" : "play the backward pass");
    explorer?.setActiveStep(state.activeStep);
    showDetails();
  }

  cleanups.push(
    listen(slider, "input", () => timeline.seek(Number(slider.value))),
    listen(section, "keydown", (event) => {
      if (event.target === slider || event.target.tagName === "BUTTON") return;
      const moves = { ArrowLeft: -1, ArrowRight: 1 };
      if (event.key in moves) {
        event.preventDefault();
        timeline.step(moves[event.key]);
      }
    }),
    timeline.subscribe(update),
    drivePlayback(timeline),
  );

  await new Promise((resolve, reject) => {
    explorer = createExplorer(host, {
      onSelect: (node) => {
        selected = node;
        showDetails();
      },
      onDrawn: resolve,
      onError: reject,
    });
    explorer.setActiveStep(timeline.activeStep); // drawn at the step shown: the view opens fitted, not moved to it
    explorer.update(graph, defaultCollapsed(graph), { fit: true });
  });
  cleanups.push(() => explorer.destroy());
  update(timeline.state);
  return () => cleanups.forEach((cleanup) => cleanup());
}

/** Advance the timeline once per animation frame while it plays; returns the cleanup. */
function drivePlayback(timeline) {
  let frame = 0;
  let last = 0;
  const tick = (now) => {
    timeline.advance(now - last);
    last = now;
    frame = timeline.playing ? requestAnimationFrame(tick) : 0;
  };
  const unsubscribe = timeline.subscribe((state) => {
    if (state.playing && !frame) {
      last = performance.now();
      frame = requestAnimationFrame(tick);
    }
  });
  return () => {
    unsubscribe();
    cancelAnimationFrame(frame);
  };
}

function lossPanel(data) {
  const points = lossPoints(data.extra?.loss_curve, data.graph.steps);
  if (!points.length) return null;
  const positive = points.every(([, value]) => value === null || value > 0);
  const chart = lineChart({ series: [{ name: "loss", points }], xLabel: "step", yLabel: "loss", logY: positive && largeRange(points) });
  const final = points.at(-1)[1];
  return panel("Loss", `final ${typeof final === "number" ? final.toPrecision(4) : "—"}`, h("div", { class: "vg-chart-box" }, chart));
}

function largeRange(points) {
  const values = points.map(([, value]) => value).filter((value) => value > 0);
  return Math.max(...values) / Math.min(...values) > 20;
}

function gradFlowPanels(data) {
  const flow = data.extra?.grad_flow;
  const series = gradFlowSeries(flow);
  if (!series.length) return [];
  const over = lineChart({ series, xLabel: "step", yLabel: "gradient RMS", logY: true });
  const latest = barChart({ bars: latestGradBars(flow), yLabel: "gradient RMS", logY: true });
  return [
    panel("Gradient flow", "gradient size of each parameter during training", h("div", {}, [
      h("div", { class: "vg-chart-box" }, over),
      legend(series.map((line, index) => ({ name: line.name, colour: SERIES_COLOURS[index % SERIES_COLOURS.length] }))),
    ])),
    panel("Gradient per parameter", `at step ${flow.steps.at(-1)}`, h("div", {}, [
      h("div", { class: "vg-chart-box" }, latest),
      legend(Object.entries(STATUS_COLOURS).map(([name, colour]) => ({ name, colour }))),
    ])),
  ];
}

function boundaryPanel(data) {
  const boundary = data.extra?.decision_boundary;
  if (!boundary || !Array.isArray(boundary.extent)) return null;
  const classes = boundary.classes ?? [];
  return panel("Decision boundary", boundary.caption ?? "", h("div", {}, [
    h("div", { class: "vg-chart-box vg-square" }, scatterOverImage(boundary)),
    legend(classes.map((name, index) => ({ name, colour: SERIES_COLOURS[index % SERIES_COLOURS.length] }))),
  ]));
}

/** Say what went wrong in ``place``; the report's root gets data-error (tests read it). */
function showError(root, place, error) {
  root.dataset.error = String(error?.message ?? error);
  place.append(h("div", { class: "vg-error", role: "alert" }, `vizgrad could not draw this report: ${root.dataset.error}`));
}

/** Build the report in ``root``; returns the cleanup that removes its listeners. */
export async function main(root = document.getElementById("vizgrad-report"), doc = document) {
  let data;
  try {
    data = readEmbedded(doc);
  } catch (error) {
    showError(root, root, error);
    return () => {};
  }
  const graphArea = h("div", { class: "vg-graph-area" });
  if (data.layout === "fragment") {
    // inside a notebook's frame: the graph panel alone
    root.classList.add("vg-fragment");
    root.append(graphArea);
  } else {
    root.append(header(data), graphArea);
    const charts = [lossPanel(data), ...gradFlowPanels(data), boundaryPanel(data)].filter(Boolean);
    if (charts.length) root.append(h("div", { class: "vg-charts" }, charts));
    root.append(h("footer", { class: "vg-footer" }, `made with vizgrad ${data.vizgrad ?? ""} · a self-contained page that works offline`));
  }
  try {
    const cleanup = await graphPanel(graphArea, data);
    root.dataset.ready = "true";
    return cleanup;
  } catch (error) {
    showError(root, graphArea, error);
    return () => {};
  }
}

main();
