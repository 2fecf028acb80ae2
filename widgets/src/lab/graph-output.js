// A graph output drawn without a kernel: the notebook output `application/vnd.vizgrad.graph+json`
// (the Graph JSON) shown by the same code as the GraphView widget, over a model that lives
// in the page instead of in Python. Everything works without Python: the layout (in a
// worker), groups opening and closing, search, replay, zoom, the chain rule, the inspector.

import graphWidget from "../widgets/graph-widget.js";

/** The status line GraphView's Python side writes, for a saved graph. */
export function statusText(graph) {
  const nodes = graph.nodes ?? [];
  const ops = nodes.filter((node) => node.op).length;
  const parts = [`${nodes.length} nodes, ${ops} ops`];
  const steps = graph.backward_order?.length ?? 0;
  if (steps) parts.push(`${steps} backward steps`);
  if (graph.truncated) parts.push("truncated at the recorder's node budget");
  const bad = nodes.filter((node) => node.grad && (node.grad.nan_count || node.grad.inf_count)).length;
  if (bad) parts.push(`NaN/inf gradient in ${bad} node${bad > 1 ? "s" : ""}`);
  parts.push("notebook output");
  return parts.join(" · ");
}

/**
 * The widget state for a graph output: ``graph_json`` holds the MIME data, already parsed
 * (GraphView's kernel sends it as JSON text; the widget reads either), which the browser lays
 * out itself (the DOT in the output's metadata is for other tools). Throws when it is unusable.
 */
export function graphState(graph) {
  if (!graph || graph.schema !== "vizgrad.graph" || !Array.isArray(graph.nodes)) {
    throw new Error("this output is not a vizgrad graph (its 'schema' is not 'vizgrad.graph')");
  }
  const timeline = [...(graph.backward_order ?? [])];
  return {
    graph_json: graph, timeline,
    step_index: timeline.length - 1,
    playing: false,
    steps_per_second: 2,
    selected: null,
    collapsed: [],
    auto_collapse: true,
    show_minimap: true,
    modules: [],
    revision: 0,
    live: false,
    status: statusText(graph),
  };
}

/**
 * An anywidget-shaped model whose state lives here: ``get``/``set`` with
 * ``change:<name>`` events, ``save_changes`` and ``send`` doing nothing (no kernel).
 */
export function pageModel(initial) {
  const state = { ...initial };
  const handlers = new Map();
  return {
    get: (name) => state[name],
    set(name, value) {
      if (Object.is(state[name], value)) return;
      state[name] = value;
      for (const handler of [...(handlers.get(`change:${name}`) ?? [])]) handler();
    },
    on(event, handler) {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event).add(handler);
    },
    off(event, handler) {
      handlers.get(event)?.delete(handler);
    },
    save_changes() {},
    send() {},
  };
}

/**
 * Draw the graph output into ``el``; returns the cleanup. A graph that cannot be drawn
 * leaves an error box saying why (and ``data-error`` on it, for tests).
 */
export function renderGraphOutput(el, graph) {
  let state;
  try {
    state = graphState(graph);
  } catch (error) {
    const box = document.createElement("div");
    box.className = "vg-widget vg-error";
    box.setAttribute("role", "alert");
    box.dataset.testid = "vg-error";
    box.dataset.error = error.message;
    box.textContent = `vizgrad could not draw this output: ${error.message}`;
    el.append(box);
    return () => box.remove();
  }
  return graphWidget.render({ model: pageModel(state), el });
}
