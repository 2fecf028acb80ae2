// The GraphView widget (vizgrad/widgets/graph_view.py): the computation graph laid out
// by Graphviz (WebAssembly, bundled, in a worker) with its groups (modules, composite
// functions) collapsed once the graph is large (src/graph-explorer.js: breadcrumb,
// search, minimap), the backward replay (play, pause, step, scrub; hidden for a
// forward-only graph), the chain rule at the active node, an inspector for the clicked
// node and the group list (collapse/expand). State lives in the model's traits; model changes are drawn
// at most once per animation frame; render() returns its cleanup.

import { h, listen } from "../dom.js";
import { collapseGroup, defaultCollapsed, expandGroup, ancestors } from "../graph-dot.js";
import { createExplorer } from "../graph-explorer.js";
import { nodeCard } from "../node-card.js";
import { shapeText } from "../node-info.js";
import { stepText } from "../report-data.js";
import { createTimeline } from "../timeline.js";
import { chainRule } from "./chain-rule.js";
import { createFrameScheduler, drivePlayback } from "./frame.js";
import { heatmap, matrixCells } from "./heatmap.js";
import { jsonTrait, onChange, save } from "./model.js";
import { button, icon, section, showError } from "./ui.js";

/** The chain-rule panel for ``nodeId`` (the node at the active backward step). */
export function chainRulePanel(graph, nodeId, step) {
  const rule = nodeId ? chainRule(graph, nodeId) : null;
  if (!rule) {
    return section("Chain rule", "vg-chain-rule", h("p", { class: "vg-muted" },
      graph.backward_order?.length ? "Step through the backward pass to see the chain rule at each node."
        : "Run backward() to replay the gradient flow here."));
  }
  const stat = (item) => [
    h("div", { class: "vg-chain-stats" }, [h("span", { class: "vg-chain-shape" }, item.shape), " ", item.summary]),
    item.sample ? h("code", { class: "vg-chain-sample" }, item.sample) : null,
  ];
  const outgoing = rule.outgoing.map((item) => h("li", {
    class: `vg-chain-input${item.bad ? " vg-bad" : ""}`, "data-testid": "vg-chain-input", "data-source": item.source,
  }, [
    h("div", { class: "vg-chain-to" }, item.target),
    h("div", { class: "vg-formula" }, item.formula),
    item.broadcast ? h("div", { class: "vg-muted" }, `summed over broadcast dimensions to ${item.shape}`) : null,
    ...stat(item),
  ]));
  return section(`Chain rule · step ${step + 1}: ${rule.title} (${rule.id})`, "vg-chain-rule", [
    h("div", { class: "vg-formula vg-chain-forward", "data-testid": "vg-chain-forward" }, rule.forward),
    rule.known ? null : h("div", { class: "vg-muted" }, "no formula text for this op: the generic chain rule applies"),
    h("div", { class: `vg-chain-block${rule.incoming.bad ? " vg-bad" : ""}`, "data-testid": "vg-chain-incoming" }, [
      h("div", { class: "vg-card-heading" }, "incoming gradient"),
      h("div", {}, rule.incoming.label),
      ...stat(rule.incoming),
      rule.incoming.note ? h("p", { class: "vg-card-note", "data-testid": "vg-grad-note" }, rule.incoming.note) : null,
    ]),
    rule.leaf ? null : h("div", { class: "vg-chain-block", "data-testid": "vg-chain-outgoing" }, [
      h("div", { class: "vg-card-heading" }, "outgoing gradients (local derivative × incoming)"),
      outgoing.length ? h("ol", { class: "vg-chain-list" }, outgoing) : h("p", { class: "vg-muted" }, "no input needs a gradient"),
    ]),
  ]);
}

/** The inspector for the selected node: statistics, histograms, heatmaps, source. */
export function inspectorPanel(node, onClose) {
  if (!node) {
    return { element: section("Inspector", "vg-inspector", h("p", { class: "vg-muted" }, "Click a node to inspect its value and gradient.")), remove: () => {} };
  }
  const close = button("close the inspector", "×", onClose, "vg-inspector-close");
  const maps = [["value", node.value], ["gradient", node.grad]].map(([name, stats]) => {
    const picture = heatmap(stats, { label: `${name} heatmap` });
    if (!picture) return null;
    const { cells } = matrixCells(stats);
    const rows = cells.length;
    const cols = cells[0].length;
    const sampled = rows < (stats.shape?.[0] ?? rows) || cols < (stats.shape?.[1] ?? cols);
    return h("div", { class: "vg-heatmap-box", "data-testid": `vg-heatmap-${name === "value" ? "value" : "grad"}` }, [
      h("div", { class: "vg-card-heading" }, `${name} heatmap ${sampled ? `(${rows}×${cols} of ${shapeText(stats.shape)}, evenly spaced)` : ""}`),
      picture,
    ]);
  });
  const element = section("Inspector", "vg-inspector", [nodeCard(node, { histograms: true }), ...maps], close.element);
  element.dataset.nodeId = node.id;
  return { element, remove: close.remove };
}

/** The group list (modules and composite functions): one toggle each, collapsed ones checked. */
function groupsPanel(tree, collapsed, onToggle) {
  const groups = tree ? [...tree.groups.values()].filter((group) => group.kind !== "chunk") : [];
  if (!groups.length) return { element: null, remove: () => {} };
  const closed = new Set(collapsed);
  const removers = [];
  const order = [];
  const visit = (keys) => keys.forEach((key) => {
    if (tree.groups.get(key).kind !== "chunk") order.push(key);
    visit(tree.groups.get(key).children);
  });
  visit(tree.roots);
  const items = order.map((key) => {
    const group = tree.groups.get(key);
    const path = ancestors(tree, key).filter((outer) => tree.groups.get(outer).kind !== "chunk");
    const hidden = path.slice(0, -1).some((outer) => closed.has(outer));
    const box = h("input", { type: "checkbox", checked: closed.has(key), disabled: hidden, "aria-label": `collapse ${group.name}` });
    removers.push(listen(box, "change", () => onToggle(key)));
    return h("label", { class: "vg-module-toggle", style: `padding-left:${(path.length - 1) * 12}px`, "data-testid": "vg-module-toggle", "data-module": key },
      [box, " ", group.label, group.label !== group.name ? h("span", { class: "vg-muted" }, ` ${group.name}`) : null]);
  });
  const element = section("Modules", "vg-modules", [h("div", { class: "vg-muted" }, "checked: drawn as one box"), ...items]);
  return { element, remove: () => removers.forEach((remove) => remove()) };
}

/** Whether a graph has a backward pass to replay (a graph that says it has none, or has no order, does not). */
export function hasBackward(graph) {
  if (graph.backward === null || (graph.backward && graph.backward.source === null)) return false;
  return (graph.backward_order?.length ?? 0) > 0;
}

function render({ model, el }) {
  const root = h("div", { class: "vg-widget vg-graph-widget", "data-testid": "vg-graph-widget", tabindex: "-1" });
  el.append(root);
  const cleanups = [];
  const scheduler = createFrameScheduler();
  cleanups.push(() => scheduler.cancel());
  let destroyed = false;
  let defaulted = false;
  let timeline = null;
  let stopPlayback = () => {};
  let unsubscribeTimeline = () => {};
  let panelCleanups = [];
  const add = ({ element, remove }) => {
    cleanups.push(remove);
    return element;
  };

  // --- layout ----------------------------------------------------------------------
  const slider = h("input", { type: "range", class: "vg-slider", min: 0, max: 0, step: 1, value: 0,
    "aria-label": "backward step", "data-testid": "vg-step-slider" });
  const stepLabel = h("span", { class: "vg-step-text", "aria-live": "polite", "data-testid": "vg-step-text" });
  const playButton = button("play the backward pass", icon("play"), () => timeline?.toggle(), "vg-play");
  const status = h("span", { class: "vg-status", "data-testid": "vg-status" });
  const alert = h("span", { class: "vg-alert", role: "status", "data-testid": "vg-nan-alert", hidden: true }, "NaN/inf gradient");
  const host = h("div", { class: "vg-graph-host", "data-testid": "vg-graph-stage" });
  const side = h("aside", { class: "vg-side" });
  const backwardNote = h("span", { class: "vg-muted vg-backward-note", "data-testid": "vg-backward-note" });
  const replay = h("div", { class: "vg-replay" }, [
    h("div", { class: "vg-button-group" }, [
      add(button("before backward", icon("first"), () => timeline?.seek(0), "vg-step-first")),
      add(button("previous step", icon("previous"), () => timeline?.step(-1), "vg-step-prev")),
      add(playButton),
      add(button("next step", icon("next"), () => timeline?.step(1), "vg-step-next")),
      add(button("all steps", icon("last"), () => timeline?.seek(timeline.length), "vg-step-last")),
    ]),
    slider, stepLabel,
  ]);
  root.append(
    h("div", { class: "vg-toolbar", "data-testid": "vg-timeline" }, [
      replay, backwardNote, h("span", { class: "vg-spacer" }), alert, status,
      h("div", { class: "vg-button-group" }, [
        add(button("zoom out", "−", () => explorer.view?.zoomOut(), "vg-zoom-out")),
        add(button("zoom in", "+", () => explorer.view?.zoomIn(), "vg-zoom-in")),
        add(button("fit the graph", "fit", () => explorer.view?.fit(), "vg-zoom-fit")),
        add(button("zoom to the selected node", "◎", () => explorer.fitSelection(), "vg-zoom-selection")),
      ]),
    ]),
    h("div", { class: "vg-graph-body" }, [host, side]),
  );
  const explorer = createExplorer(host, {
    minimap: model.get("show_minimap") !== false,
    onMinimap: (shown) => save(model, { show_minimap: shown }),
    onCollapsed: (collapsed) => save(model, { collapsed }),
    onSelect: (node) => {
      const id = node?.id ?? null;
      if (model.get("selected") !== id) save(model, { selected: id });
    },
    onDrawn: () => {
      root.dataset.revision = String(model.get("revision"));
      root.dataset.ready = "true";
      delete root.dataset.error;
    },
    onError: (error) => showError(root, host, error),
  });
  cleanups.push(() => explorer.destroy());

  // --- the replay timeline (rebuilt when the number of backward steps changes) ----
  function buildTimeline() {
    unsubscribeTimeline();
    stopPlayback();
    const length = model.get("timeline").length;
    timeline = createTimeline(length, {
      position: Math.max(0, Math.min(length, model.get("step_index") + 1)),
      stepsPerSecond: model.get("steps_per_second") || 2,
    });
    slider.max = String(length);
    unsubscribeTimeline = timeline.subscribe((state) => {
      const changes = {};
      if (state.activeStep !== model.get("step_index")) changes.step_index = state.activeStep;
      if (state.playing !== model.get("playing")) changes.playing = state.playing;
      if (Object.keys(changes).length) save(model, changes);
      scheduler.schedule("step", drawStep);
    });
    stopPlayback = drivePlayback(timeline);
    if (model.get("playing")) timeline.play();
  }

  // --- drawing (each runs at most once per animation frame) ------------------------
  function drawStep() {
    const graph = jsonTrait(model, "graph_json");
    const state = timeline.state;
    slider.value = String(state.position);
    stepLabel.textContent = graph.nodes ? stepText(graph, state.activeStep) : "";
    playButton.element.replaceChildren(icon(state.playing ? "pause" : "play"));
    playButton.element.setAttribute("aria-label", state.playing ? "pause" : "play the backward pass");
    root.dataset.step = String(state.activeStep);
    root.dataset.playing = String(state.playing);
    explorer.setActiveStep(state.activeStep);
    drawSide();
  }

  function drawSide() {
    panelCleanups.forEach((remove) => remove());
    panelCleanups = [];
    const graph = jsonTrait(model, "graph_json");
    if (!graph.nodes) {
      side.replaceChildren();
      return;
    }
    const active = model.get("timeline")[timeline.activeStep] ?? null;
    const selectedId = model.get("selected");
    const selected = graph.nodes.find((node) => node.id === selectedId) ?? null;
    const inspector = inspectorPanel(selected, () => save(model, { selected: null }));
    const modules = groupsPanel(explorer.tree, model.get("collapsed"), toggle);
    panelCleanups.push(inspector.remove, modules.remove);
    side.replaceChildren(...[chainRulePanel(graph, active, timeline.activeStep), inspector.element, modules.element].filter(Boolean));
  }

  function toggle(key) {
    const collapsed = model.get("collapsed");
    save(model, { collapsed: collapsed.includes(key) ? expandGroup(collapsed, key, explorer.tree) : collapseGroup(collapsed, key, explorer.tree) });
  }

  function drawStatus() {
    status.textContent = model.get("status");
    const graph = jsonTrait(model, "graph_json");
    alert.hidden = !(graph.nodes ?? []).some((node) => node.grad && (node.grad.nan_count || node.grad.inf_count));
    const replayable = Boolean(graph.nodes) && hasBackward(graph);
    replay.hidden = !replayable;
    root.dataset.replay = String(replayable);
    // the graph's own note says what ran (written in Python, with the user's names): shown as given
    backwardNote.textContent = !graph.nodes ? "" : graph.backward?.note
      ?? (replayable ? "" : "forward only: no backward pass ran through this graph");
  }

  function layout() {
    if (destroyed) return;
    const graph = jsonTrait(model, "graph_json");
    if (!graph.nodes) {
      root.dataset.ready = "true";
      host.querySelector(".vg-graph-canvas")?.replaceChildren(h("p", { class: "vg-muted vg-empty-graph" }, "No graph yet: run some operations."));
      return;
    }
    let collapsed = model.get("collapsed");
    const opening = !defaulted;
    if (opening) {
      // the first graph: large ones start with their top-level groups collapsed, unless Python chose
      defaulted = true;
      if (!collapsed.length && model.get("auto_collapse") !== false) {
        collapsed = defaultCollapsed(graph);
        if (collapsed.length) save(model, { collapsed });
      }
    }
    // it opens legible: collapsed further while the fitted labels would be too small, unless the user chose
    const fit = opening && model.get("auto_collapse") !== false;
    explorer.update(graph, collapsed, { fit }).then(() => scheduler.schedule("side", drawSide));
  }

  // --- wiring --------------------------------------------------------------------------
  cleanups.push(
    onChange(model, ["graph_json", "collapsed"], () => scheduler.schedule("layout", layout)),
    onChange(model, ["timeline"], () => {
      buildTimeline();
      scheduler.schedule("step", drawStep);
    }),
    onChange(model, ["step_index"], () => {
      const step = model.get("step_index");
      if (step !== timeline.activeStep) timeline.seek(step + 1);
    }),
    onChange(model, ["playing"], () => {
      const playing = model.get("playing");
      if (playing && !timeline.playing) timeline.play();
      else if (!playing && timeline.playing) timeline.pause();
    }),
    onChange(model, ["selected"], () => {
      explorer.select(model.get("selected"));
      scheduler.schedule("side", drawSide);
    }),
    onChange(model, ["status", "graph_json"], () => scheduler.schedule("status", drawStatus)),
    onChange(model, ["show_minimap"], () => explorer.setMinimap(model.get("show_minimap") !== false)),
    listen(slider, "input", () => timeline.seek(Number(slider.value))),
    listen(root, "keydown", (event) => {
      if (event.target === slider || event.target.tagName === "BUTTON" || event.target.tagName === "INPUT") return;
      const moves = { ArrowLeft: -1, ArrowRight: 1 };
      if (event.key in moves && !event.ctrlKey && !event.metaKey && !event.altKey) {
        event.preventDefault();
        event.stopPropagation(); // the notebook's own shortcuts never see keys the replay used
        timeline.step(moves[event.key]);
      }
    }),
  );

  buildTimeline();
  drawStep();
  drawStatus();
  layout();

  return () => {
    destroyed = true;
    cleanups.forEach((cleanup) => cleanup());
    panelCleanups.forEach((remove) => remove());
    unsubscribeTimeline();
    stopPlayback();
    root.remove();
  };
}

export default { render };
