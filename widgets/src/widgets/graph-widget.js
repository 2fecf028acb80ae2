// The GraphView widget (vizgrad/widgets/graph_view.py): the computation graph laid out
// by Graphviz (WebAssembly, bundled, in a worker) with its groups (modules, composite
// functions) collapsed once the graph is large (src/graph-explorer.js: breadcrumb,
// search, minimap), the backward replay (play, pause, step, scrub; hidden for a
// forward-only graph), the chain rule at the active node, an inspector for the clicked
// node and the group list (collapse/expand). A graph with tangents (made inside a forward-AD
// dual level) also replays forward mode (the `flow` trait; a toggle when it has both): each
// step lights the node whose tangent forward AD computed, and the side panel spells out
// its Jacobian-vector product (jvp.js). State lives in the model's traits; model changes are drawn
// at most once per animation frame; render() returns its cleanup.

import { h, listen } from "../dom.js";
import { collapseGroup, defaultCollapsed, expandGroup, ancestors } from "../graph-dot.js";
import { createExplorer } from "../graph-explorer.js";
import { provideWorkerSource } from "../layout.js";
import { nodeCard } from "../node-card.js";
import { shapeText } from "../node-info.js";
import { createTimeline } from "../timeline.js";
import { requestAsset } from "./assets.js";
import { chainRule } from "./chain-rule.js";
import { flowStepText, forwardGraph, hasForward, jvpStep } from "./jvp.js";
import { createFrameScheduler, drivePlayback } from "./frame.js";
import { heatmap, matrixCells } from "./heatmap.js";
import { jsonTrait, onChange, save } from "./model.js";
import { isHidden, judge, maskGraph, parseGuess, scoreText } from "./predict.js";
import { button, icon, section, showError } from "./ui.js";

/**
 * Prediction mode's box in place of a hidden incoming gradient: the learner writes the
 * gradient they expect (one number for every element, or the first values) and reveals it.
 */
export function predictionBox(node, onGuess) {
  const input = h("input", { type: "text", class: "vg-predict-input", "data-testid": "vg-predict-input",
    "aria-label": `your prediction of the gradient of ${node.name || node.label || node.id}`, placeholder: "e.g. 0.5 or 1, -2, 0.25" });
  const problem = h("p", { class: "vg-predict-problem", role: "alert", "data-testid": "vg-predict-problem", hidden: true });
  const submit = (event) => {
    event.preventDefault();
    const numbers = parseGuess(input.value);
    if (typeof numbers === "string") {
      problem.textContent = numbers;
      problem.hidden = false;
      return;
    }
    onGuess(input.value, numbers);
  };
  const form = h("form", { class: "vg-predict", "data-testid": "vg-predict" }, [
    h("div", { class: "vg-card-heading" }, `predict the gradient ${shapeText(node.grad?.shape ?? node.shape)} before it is shown`),
    h("div", { class: "vg-predict-row" }, [input, h("button", { type: "submit", class: "vg-button", "data-testid": "vg-predict-reveal" }, "reveal")]),
    h("p", { class: "vg-muted" }, "one number if every element is the same, else the first values, separated by commas"),
    problem,
  ]);
  const remove = listen(form, "submit", submit);
  return { element: form, remove };
}

/** What the learner predicted for a revealed gradient, marked right or wrong. */
function predictionResult(entry) {
  return h("p", { class: `vg-predict-result ${entry.correct ? "vg-right" : "vg-wrong"}`, "data-testid": "vg-predict-result",
    "data-correct": String(entry.correct) }, `${entry.correct ? "✓" : "✗"} ${entry.message}`);
}

/** The chain-rule panel for ``nodeId`` (the node at the active backward step); ``prediction``
 * (prediction mode) is the box that stands in for a hidden incoming gradient, or the result
 * of the learner's guess once revealed. */
export function chainRulePanel(graph, nodeId, step, prediction = null) {
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
      ...(prediction?.hidden ? [prediction.element] : [prediction?.element ?? null, ...stat(rule.incoming)]),
      rule.incoming.note && !prediction?.hidden ? h("p", { class: "vg-card-note", "data-testid": "vg-grad-note" }, rule.incoming.note) : null,
    ]),
    rule.leaf ? null : h("div", { class: "vg-chain-block", "data-testid": "vg-chain-outgoing" }, [
      h("div", { class: "vg-card-heading" }, "outgoing gradients (local derivative × incoming)"),
      outgoing.length ? h("ol", { class: "vg-chain-list" }, outgoing) : h("p", { class: "vg-muted" }, "no input needs a gradient"),
    ]),
  ]);
}

/** The forward-mode panel for ``nodeId`` (the node at the active forward step): the tangents in,
 * the local derivatives, the tangent out (ẏ = J·ṫ), with shapes and a few values. */
export function jvpPanel(graph, nodeId, step) {
  const rule = nodeId ? jvpStep(graph, nodeId) : null;
  if (!rule) {
    return section("Forward mode", "vg-jvp", h("p", { class: "vg-muted" },
      "Step through the forward pass to see the Jacobian-vector product at each node."));
  }
  const stat = (item) => [
    h("div", { class: "vg-chain-stats" }, [h("span", { class: "vg-chain-shape" }, item.shape), " ", item.summary]),
    item.sample ? h("code", { class: "vg-chain-sample" }, item.sample) : null,
  ];
  const inputs = rule.inputs.map((item) => h("li", {
    class: `vg-chain-input${item.bad ? " vg-bad" : ""}${item.carries ? "" : " vg-muted"}`, "data-testid": "vg-jvp-input",
    "data-source": item.source, "data-carries": String(item.carries),
  }, [
    h("div", { class: "vg-chain-to" }, `${item.tangentName}: the tangent of ${item.name} (${item.source})`),
    item.local ? h("div", { class: "vg-formula" }, `local derivative ${item.local}`) : null,
    ...stat(item),
  ]));
  const missing = rule.missing.length ? h("p", { class: "vg-muted" },
    `${rule.missing.join(", ")}: not drawn (needs no gradient); ${rule.missing.length > 1 ? "their tangents come" : "its tangent comes"} from outside the graph`) : null;
  return section(`Forward mode · step ${step + 1}: ${rule.title} (${rule.id})`, "vg-jvp", [
    h("div", { class: "vg-formula vg-chain-forward", "data-testid": "vg-jvp-forward" }, rule.forward),
    rule.known ? null : h("div", { class: "vg-muted" }, "no formula text for this op: the Jacobian-vector product applies"),
    rule.op && !rule.seed ? h("div", { class: "vg-chain-block", "data-testid": "vg-jvp-incoming" }, [
      h("div", { class: "vg-card-heading" }, "tangent in (ṫ of each input)"),
      inputs.length ? h("ol", { class: "vg-chain-list" }, inputs) : null,
      missing,
    ]) : null,
    h("div", { class: `vg-chain-block${rule.out.bad ? " vg-bad" : ""}`, "data-testid": "vg-jvp-outgoing" }, [
      h("div", { class: "vg-card-heading" }, "tangent out = J·ṫ"),
      h("div", { class: "vg-formula", "data-testid": "vg-jvp-rule" }, rule.rule),
      h("div", {}, rule.out.label),
      ...stat(rule.out),
    ]),
  ]);
}

/** The inspector for the selected node: statistics, histograms, heatmaps, source. */
export function inspectorPanel(node, onClose) {
  if (!node) {
    return { element: section("Inspector", "vg-inspector", h("p", { class: "vg-muted" }, "Click a node to inspect its value and gradient.")), remove: () => {} };
  }
  const close = button("close the inspector", "×", onClose, "vg-inspector-close");
  const maps = [["value", node.value], ["gradient", node.grad], ["tangent", node.tangent]].map(([name, stats]) => {
    const picture = heatmap(stats, { label: `${name} heatmap` });
    if (!picture) return null;
    const { cells } = matrixCells(stats);
    const rows = cells.length;
    const cols = cells[0].length;
    const sampled = rows < (stats.shape?.[0] ?? rows) || cols < (stats.shape?.[1] ?? cols);
    return h("div", { class: "vg-heatmap-box", "data-testid": `vg-heatmap-${name === "gradient" ? "grad" : name}` }, [
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

const FLOWS = ["backward", "forward"];

function render({ model, el }) {
  provideWorkerSource(() => requestAsset(model, "layout-worker"));   // (this module does not carry the layout engine)
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
  const firstButton = button("before backward", icon("first"), () => timeline?.seek(0), "vg-step-first");
  const status = h("span", { class: "vg-status", "data-testid": "vg-status" });
  const score = h("span", { class: "vg-predict-score", "data-testid": "vg-predict-score", hidden: true });
  const alert = h("span", { class: "vg-alert", role: "status", "data-testid": "vg-nan-alert", hidden: true }, "NaN/inf gradient");
  const host = h("div", { class: "vg-graph-host", "data-testid": "vg-graph-stage" });
  const side = h("aside", { class: "vg-side" });
  const backwardNote = h("span", { class: "vg-muted vg-backward-note", "data-testid": "vg-backward-note" });
  const flowButtons = FLOWS.map((name) => add(button(`replay the ${name} pass`, name, () => chooseFlow(name), `vg-flow-${name}`)));
  const flowToggle = h("div", { class: "vg-button-group vg-flow-toggle", role: "group", "aria-label": "the flow the replay shows",
    "data-testid": "vg-flow-toggle", hidden: true }, flowButtons);
  const replay = h("div", { class: "vg-replay" }, [
    h("div", { class: "vg-button-group" }, [
      add(firstButton),
      add(button("previous step", icon("previous"), () => timeline?.step(-1), "vg-step-prev")),
      add(playButton),
      add(button("next step", icon("next"), () => timeline?.step(1), "vg-step-next")),
      add(button("all steps", icon("last"), () => timeline?.seek(timeline.length), "vg-step-last")),
    ]),
    slider, stepLabel,
  ]);
  root.append(
    h("div", { class: "vg-toolbar", "data-testid": "vg-timeline" }, [
      flowToggle, replay, backwardNote, score, h("span", { class: "vg-spacer" }), alert, status,
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

  // --- which flow is replayed ----------------------------------------------------------
  /** "forward" (the tangents) or "backward": the ``flow`` trait when the graph has that flow, else the one it has. */
  function flow() {
    const graph = jsonTrait(model, "graph_json");
    if (!graph.nodes) return "backward";
    const forward = hasForward(graph);
    const backward = hasBackward(graph);
    const wanted = model.get("flow");
    if ((wanted === "forward" && forward) || (wanted === "backward" && backward)) return wanted;
    return forward && !backward ? "forward" : "backward";
  }

  /** The node ids of the replay shown, in order. */
  function order() {
    return flow() === "forward" ? jsonTrait(model, "graph_json").forward_order : model.get("timeline");
  }

  /** The toggle: the other flow, with every step shown (as a graph opens). */
  function chooseFlow(name) {
    if (name === flow()) return;
    const graph = jsonTrait(model, "graph_json");
    const length = name === "forward" ? graph.forward_order.length : model.get("timeline").length;
    save(model, { flow: name, step_index: length - 1, playing: false });
  }

  // --- the replay timeline (rebuilt when the flow or its number of steps changes) ----
  let builtFor = "";
  function buildTimeline() {
    unsubscribeTimeline();
    stopPlayback();
    const length = order().length;
    builtFor = `${flow()} ${length}`;
    // a saved output (a page model: no flow trait) opens its forward replay with every step shown, as its backward one
    const start = model.get("flow") === undefined && flow() === "forward" ? length : model.get("step_index") + 1;
    timeline = createTimeline(length, {
      position: Math.max(0, Math.min(length, start)),
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
    const shown = flow();
    slider.value = String(state.position);
    slider.setAttribute("aria-label", `${shown} step`);
    stepLabel.textContent = graph.nodes ? flowStepText(graph, order(), state.activeStep, shown) : "";
    playButton.element.replaceChildren(icon(state.playing ? "pause" : "play"));
    playButton.element.setAttribute("aria-label", state.playing ? "pause" : `play the ${shown} pass`);
    firstButton.element.setAttribute("aria-label", `before ${shown}`);
    firstButton.element.title = `before ${shown}`;
    root.dataset.flow = shown;
    root.dataset.step = String(state.activeStep);
    root.dataset.playing = String(state.playing);
    explorer.setActiveStep(state.activeStep);
    drawSide();
  }

  function drawSide() {
    panelCleanups.forEach((remove) => remove());
    panelCleanups = [];
    const full = jsonTrait(model, "graph_json");
    if (!full.nodes) {
      side.replaceChildren();
      return;
    }
    const graph = shownGraph();
    const active = order()[timeline.activeStep] ?? null;
    const selectedId = model.get("selected");
    const selected = graph.nodes.find((node) => node.id === selectedId) ?? null;
    const inspector = inspectorPanel(selected, () => save(model, { selected: null }));
    const modules = groupsPanel(explorer.tree, model.get("collapsed"), toggle);
    panelCleanups.push(inspector.remove, modules.remove);
    const panel = flow() === "forward" ? jvpPanel(graph, active, timeline.activeStep)
      : chainRulePanel(graph, active, timeline.activeStep, prediction(full, active));
    side.replaceChildren(...[panel, inspector.element, modules.element].filter(Boolean));
  }

  /** The graph as drawn: in prediction mode, the gradients not yet predicted are taken out; in
   * forward mode, nodes carry their forward step and are coloured by their tangents. */
  let forwardShown = [null, null]; // [the masked graph, its forward view]: made once per graph
  function shownGraph() {
    const masked = maskGraph(jsonTrait(model, "graph_json"), model.get("predict"), model.get("predictions"));
    if (!masked.nodes || flow() !== "forward") return masked;
    if (forwardShown[0] !== masked) forwardShown = [masked, forwardGraph(masked)];
    return forwardShown[1];
  }

  /** Prediction mode's part of the chain-rule panel at node ``id`` (null outside it). */
  function prediction(graph, id) {
    if (!model.get("predict") || !id) return null;
    const node = graph.nodes.find((candidate) => candidate.id === id);
    const predictions = model.get("predictions") ?? {};
    if (isHidden(true, predictions, node)) {
      const box = predictionBox(node, (guess, numbers) => {
        const { correct, expected, message } = judge(numbers, node.grad);
        save(model, { predictions: { ...(model.get("predictions") ?? {}), [id]: { guess, correct, expected, message } } });
      });
      panelCleanups.push(box.remove);
      return { hidden: true, element: box.element };
    }
    return predictions[id] ? { hidden: false, element: predictionResult(predictions[id]) } : null;
  }

  function toggle(key) {
    const collapsed = model.get("collapsed");
    save(model, { collapsed: collapsed.includes(key) ? expandGroup(collapsed, key, explorer.tree) : collapseGroup(collapsed, key, explorer.tree) });
  }

  function drawStatus() {
    status.textContent = model.get("status");
    const said = model.get("predict") ? scoreText(model.get("predictions")) : null;
    score.textContent = said ?? "";
    score.hidden = !said;
    const graph = shownGraph();
    alert.hidden = !(graph.nodes ?? []).some((node) => node.grad && (node.grad.nan_count || node.grad.inf_count));
    const replayable = Boolean(graph.nodes) && (hasBackward(graph) || hasForward(graph));
    replay.hidden = !replayable;
    root.dataset.replay = String(replayable);
    const shown = flow();
    flowToggle.hidden = !(graph.nodes && hasBackward(graph) && hasForward(graph));
    flowButtons.forEach((element, index) => element.setAttribute("aria-pressed", String(FLOWS[index] === shown)));
    // the graph's own note says what ran (written in Python, with the user's names): shown as given
    backwardNote.textContent = !graph.nodes ? "" : shown === "forward"
      ? "forward mode: each step is one op's Jacobian-vector product, its tangent ẏ = J·ṫ"
      : graph.backward?.note ?? (hasBackward(graph) ? "" : "forward only: no backward pass ran through this graph");
  }

  function layout() {
    if (destroyed) return;
    const graph = shownGraph();
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
    onChange(model, ["graph_json", "collapsed", "predict", "predictions", "flow"], () => scheduler.schedule("layout", layout)),
    onChange(model, ["timeline", "flow"], () => {
      buildTimeline();
      scheduler.schedule("step", drawStep);
    }),
    onChange(model, ["graph_json"], () => {
      if (`${flow()} ${order().length}` === builtFor) return;
      buildTimeline(); // the tangents' replay grew (a live graph), or the flow shown changed with it
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
    onChange(model, ["status", "graph_json", "predict", "predictions", "flow"], () => scheduler.schedule("status", drawStatus)),
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
