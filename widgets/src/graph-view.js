// The interactive graph: lays a Graph JSON's DOT source out with Graphviz (compiled to
// WebAssembly), then adds pan (drag), zoom (wheel, buttons, keys, fit), a hover
// tooltip, click-to-select and the backward replay highlight (setActiveStep). The
// gradient legend that vizgrad.render.dot draws beside the graph becomes a compact
// colour bar in the view's corner, so the graph gets the whole stage.
//
// Every listener sits on the view's own elements and every function that attaches
// listeners returns its cleanup; view.destroy() runs them all and removes the view.

import { instance } from "@viz-js/viz";

import { h, listen } from "./dom.js";
import { nodeCard } from "./node-card.js";

const XLINK = "http://www.w3.org/1999/xlink";
const DRAG_THRESHOLD = 4; // pixels a press may move and still count as a click
const MAX_ZOOM_IN = 20;
const MAX_ZOOM_OUT = 3;
const MAX_FIT_SCALE = 1.6; // screen pixels per layout point when a small graph is fitted

let graphvizInstance = null;

/** Graphviz, started once per page (compiling the WebAssembly takes a moment). */
export function graphviz() {
  graphvizInstance ??= instance();
  return graphvizInstance;
}

/**
 * Render ``graph`` (Graph JSON) laid out from ``dot`` into ``container``.
 * @param {HTMLElement} container
 * @param {{graph: object, dot: string}} data
 * @param {{onSelect?: (node: object|null) => void, onModule?: (module: object) => void}} options
 *   onSelect: called when the selection changes; onModule: called on a click on a module
 *   (see moduleAt), which then selects nothing
 * @returns {Promise<GraphView>}
 */
export async function renderGraph(container, { graph, dot }, options = {}) {
  const viz = await graphviz();
  return mountGraph(container, graph, viz.renderSVGElement(dot), options);
}

/**
 * Attach the interactions to an SVG that Graphviz made from the graph's DOT.
 * @typedef {{svg: SVGSVGElement, stage: HTMLElement, setActiveStep: (step: number) => void,
 *   select: (id: string|null) => void, zoomIn: () => void, zoomOut: () => void, fit: () => void,
 *   destroy: () => void}} GraphView
 */
export function mountGraph(container, graph, svg, { onSelect = () => {}, onModule = null } = {}) {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const legend = takeLegend(svg);
  const { nodeElements, edgeElements } = prepareSvg(svg, nodes);
  const tooltip = h("div", { class: "vg-tooltip", role: "tooltip", hidden: true });
  const stage = h("div", { class: "vg-graph-stage", tabindex: "0", "aria-label": "computation graph" },
    [svg, legend.entries.length ? legendBar(legend) : null, tooltip]);
  container.append(stage);

  const viewport = createViewport(svg, contentBox(svg));
  let selected = null;

  function select(id) {
    const next = id !== null && nodeElements.has(id) ? id : null;
    if (next === selected) return;
    nodeElements.get(selected)?.classList.remove("vg-selected");
    selected = next;
    nodeElements.get(selected)?.classList.add("vg-selected");
    onSelect(selected === null ? null : nodes.get(selected));
  }

  // a click on a collapsed module or on a module's cluster label goes to onModule (when given)
  const click = (target) => {
    const module = onModule ? moduleAt(target) : null;
    if (module) onModule(module);
    else select(nodeIdAt(target));
  };
  const cleanups = [
    attachPanZoom(svg, viewport, click),
    attachTooltip(stage, svg, tooltip, nodes),
    attachZoomKeys(stage, viewport),
  ];

  return {
    svg,
    stage,
    /** Highlight the node visited at backward step ``step`` (-1: none), mark the ones before. */
    setActiveStep(step) {
      let activeId = null;
      for (const [id, element] of nodeElements) {
        const index = nodes.get(id).backward_index;
        const visitedByBackward = index !== null && index !== undefined;
        element.classList.toggle("vg-active", visitedByBackward && index === step);
        element.classList.toggle("vg-visited", visitedByBackward && index < step);
        element.classList.toggle("vg-pending", visitedByBackward && index > step);
        if (visitedByBackward && index === step) activeId = id;
      }
      for (const edge of edgeElements) {
        edge.classList.toggle("vg-flow", activeId !== null && edge.dataset.target === activeId);
      }
    },
    select,
    zoomIn: () => viewport.zoom(1.25),
    zoomOut: () => viewport.zoom(0.8),
    fit: () => viewport.fit(),
    destroy() {
      for (const cleanup of cleanups) cleanup();
      stage.remove();
    },
  };
}

/** The graph node id under an event target, or null. */
function nodeIdAt(target) {
  return target?.closest?.("g.vg-node")?.dataset.nodeId ?? null;
}

/**
 * The module under an event target: {kind: "node", key} for a collapsed module (key is its
 * DOT id, "m_..."), {kind: "cluster", name} for a module's cluster; null otherwise.
 */
function moduleAt(target) {
  const node = target?.closest?.("g.vg-module");
  if (node) return { kind: "node", key: node.dataset.moduleNode };
  const cluster = target?.closest?.("g.cluster");
  if (cluster?.dataset.module) return { kind: "cluster", name: cluster.dataset.module };
  return null;
}

/** Read and remove a Graphviz element's <title> (browsers would show it as a native tooltip). */
function takeTitle(element) {
  const title = element.querySelector(":scope > title");
  if (!title) return "";
  title.remove();
  return title.textContent;
}

/**
 * Remove the gradient legend (the cluster "cluster_legend" and its legend_* nodes) from
 * Graphviz's output; returns its title and entries ({label, fill, stroke}) in order.
 */
function takeLegend(svg) {
  const legend = { title: "", entries: [] };
  for (const element of svg.querySelectorAll("g.cluster")) {
    if (element.querySelector(":scope > title")?.textContent === "cluster_legend") {
      legend.title = element.querySelector("text")?.textContent ?? "";
      element.remove();
    }
  }
  for (const element of svg.querySelectorAll("g.node, g.edge")) {
    const key = element.querySelector(":scope > title")?.textContent ?? "";
    if (!key.startsWith("legend_")) continue;
    if (element.classList.contains("node")) {
      const shape = element.querySelector("polygon, path, ellipse");
      legend.entries.push({
        label: [...element.querySelectorAll("text")].map((text) => text.textContent).join(" "),
        fill: shape?.getAttribute("fill") ?? "none",
        stroke: shape?.getAttribute("stroke") ?? "none",
      });
    }
    element.remove();
  }
  return legend;
}

/** The legend as a colour bar: smallest to largest gradient, then the NaN/inf mark. */
function legendBar({ title, entries }) {
  const scale = entries.filter((entry) => entry.fill !== "none");
  const alarm = entries.filter((entry) => entry.fill === "none");
  return h("div", { class: "vg-graph-legend", "aria-label": title }, [
    h("div", { class: "vg-graph-legend-title" }, title),
    h("div", { class: "vg-graph-legend-row" }, [
      h("span", {}, scale[0]?.label ?? ""),
      h("span", { class: "vg-graph-legend-bar" }, scale.map((entry) =>
        h("span", { style: `background:${safeColour(entry.fill)}`, title: entry.label }))),
      h("span", {}, scale.at(-1)?.label ?? ""),
      ...alarm.map((entry) => h("span", { class: "vg-graph-legend-alarm", style: `border-color:${safeColour(entry.stroke)};color:${safeColour(entry.stroke)}` }, entry.label)),
    ]),
  ]);
}

/** A colour attribute as Graphviz writes it (#rrggbb or a name); anything else is dropped. */
function safeColour(value) {
  return /^(#[0-9a-f]{3,8}|[a-z]+)$/i.test(value) ? value : "transparent";
}

/**
 * Tag Graphviz's output with what the views need: graph nodes get data-node-id and
 * classes vg-node and vg-kind-<kind>; collapsed modules vg-module and data-module-node
 * (their DOT id); module clusters data-module (the module's name); edges data-source
 * and data-target.
 */
function prepareSvg(svg, nodes) {
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  svg.classList.add("vg-graph");
  svg.querySelector(":scope > g > title")?.remove();
  svg.querySelector(":scope > g > polygon")?.remove(); // the white page behind the graph
  const nodeElements = new Map();
  for (const element of svg.querySelectorAll("g.node")) {
    const key = takeTitle(element);
    if (nodes.has(key)) {
      element.classList.add("vg-node", `vg-kind-${nodes.get(key).kind}`);
      element.dataset.nodeId = key;
      nodeElements.set(key, element);
    } else if (key.startsWith("m_")) {
      element.classList.add("vg-module");
      element.dataset.moduleNode = key;
    }
  }
  for (const element of svg.querySelectorAll("g.cluster")) {
    const key = takeTitle(element);
    if (key.startsWith("cluster_")) element.dataset.module = key.slice("cluster_".length);
  }
  const edgeElements = [...svg.querySelectorAll("g.edge")];
  for (const element of edgeElements) {
    const [source, target] = takeTitle(element).split("->");
    element.dataset.source = source;
    element.dataset.target = target;
  }
  // Graphviz writes DOT tooltips as xlink:title; the view's own tooltip replaces them.
  // Links go too: a saved notebook's DOT is not trusted, and a URL attribute in it would
  // become a clickable (even javascript:) link.
  for (const link of svg.querySelectorAll("a")) {
    for (const name of ["title", "href", "target"]) {
      link.removeAttributeNS(XLINK, name);
      link.removeAttribute(name);
    }
  }
  for (const image of svg.querySelectorAll("image")) image.remove(); // nothing is fetched
  return { nodeElements, edgeElements };
}

/**
 * The drawing's bounding box in the SVG's user units (what is left once the legend is
 * gone); Graphviz's own viewBox when the SVG cannot be measured (not displayed).
 */
function contentBox(svg) {
  const base = svg.viewBox.baseVal;
  const fallback = { x: base.x, y: base.y, width: base.width, height: base.height };
  const content = svg.querySelector(":scope > g");
  const box = content?.getBBox();
  if (!box || !box.width || !box.height) return fallback;
  const matrix = content.transform.baseVal.consolidate()?.matrix;
  const corners = [[box.x, box.y], [box.x + box.width, box.y + box.height]]
    .map(([x, y]) => (matrix ? new DOMPoint(x, y).matrixTransform(matrix) : { x, y }));
  const [a, b] = corners;
  return { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(b.x - a.x), height: Math.abs(b.y - a.y) };
}

/** Zooming and panning by rewriting the SVG's viewBox; ``content`` is what "fit" shows. */
function createViewport(svg, content) {
  /** The fitted view: the content with a margin, small graphs not blown up past MAX_FIT_SCALE. */
  function fitted() {
    const margin = Math.max(content.width, content.height) * 0.03 + 4;
    let width = content.width + 2 * margin;
    let height = content.height + 2 * margin;
    if (svg.clientWidth && svg.clientHeight) {
      width = Math.max(width, svg.clientWidth / MAX_FIT_SCALE);
      height = Math.max(height, svg.clientHeight / MAX_FIT_SCALE);
    }
    return { x: content.x + content.width / 2 - width / 2, y: content.y + content.height / 2 - height / 2, width, height };
  }

  const home = fitted();
  let box = { ...home };
  apply();

  function apply() {
    svg.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
  }

  /** A client (screen) point in the SVG's user units; the view's centre when unknown. */
  function toSvg(clientX, clientY) {
    const matrix = svg.getScreenCTM();
    if (!matrix || clientX === undefined) return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    return new DOMPoint(clientX, clientY).matrixTransform(matrix.inverse());
  }

  return {
    /** Zoom by ``factor`` (> 1 zooms in) keeping the point under (clientX, clientY) still. */
    zoom(factor, clientX, clientY) {
      const width = Math.min(home.width * MAX_ZOOM_OUT, Math.max(home.width / MAX_ZOOM_IN, box.width / factor));
      const applied = box.width / width;
      const point = toSvg(clientX, clientY);
      box = {
        x: point.x - (point.x - box.x) / applied,
        y: point.y - (point.y - box.y) / applied,
        width,
        height: box.height / applied,
      };
      apply();
    },
    /** Move the picture by a drag of (dx, dy) screen pixels. */
    pan(dx, dy) {
      const pixelsPerUnit = svg.getScreenCTM()?.a || 1;
      box = { ...box, x: box.x - dx / pixelsPerUnit, y: box.y - dy / pixelsPerUnit };
      apply();
    },
    fit() {
      box = fitted();
      apply();
    },
  };
}

/** Drag to pan, wheel to zoom; a press that does not move is a click (``onClick(target)``). */
function attachPanZoom(svg, viewport, onClick) {
  let press = null;
  const down = (event) => {
    if (event.button !== 0) return;
    press = { id: event.pointerId, startX: event.clientX, startY: event.clientY, x: event.clientX, y: event.clientY,
      target: event.target, dragging: false };
    svg.setPointerCapture(event.pointerId);
  };
  const move = (event) => {
    if (!press || event.pointerId !== press.id) return;
    if (!press.dragging && Math.hypot(event.clientX - press.startX, event.clientY - press.startY) < DRAG_THRESHOLD) return;
    press.dragging = true;
    svg.classList.add("vg-panning");
    viewport.pan(event.clientX - press.x, event.clientY - press.y);
    press.x = event.clientX;
    press.y = event.clientY;
  };
  const up = (event) => {
    if (!press || event.pointerId !== press.id) return;
    if (!press.dragging && event.type === "pointerup") onClick(press.target);
    svg.classList.remove("vg-panning");
    press = null;
  };
  const wheel = (event) => {
    event.preventDefault();
    const pixels = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    viewport.zoom(Math.exp(-pixels * 0.0015), event.clientX, event.clientY);
  };
  const removers = [
    listen(svg, "pointerdown", down),
    listen(svg, "pointermove", move),
    listen(svg, "pointerup", up),
    listen(svg, "pointercancel", up),
    listen(svg, "wheel", wheel, { passive: false }),
  ];
  return () => removers.forEach((remove) => remove());
}

/** The hover tooltip: a node's details next to the pointer, kept inside the stage. */
function attachTooltip(stage, svg, tooltip, nodes) {
  let shown = null;
  const hide = () => {
    shown = null;
    tooltip.hidden = true;
  };
  const move = (event) => {
    const id = event.buttons ? null : nodeIdAt(event.target);
    if (id === null) {
      hide();
      return;
    }
    if (id !== shown) {
      shown = id;
      tooltip.replaceChildren(nodeCard(nodes.get(id)));
      tooltip.hidden = false;
    }
    const area = stage.getBoundingClientRect();
    const gap = 14;
    let left = event.clientX - area.left + gap;
    let top = event.clientY - area.top + gap;
    if (left + tooltip.offsetWidth > area.width) left = Math.max(0, event.clientX - area.left - gap - tooltip.offsetWidth);
    if (top + tooltip.offsetHeight > area.height) top = Math.max(0, area.height - tooltip.offsetHeight);
    tooltip.style.left = `${left}px`;
    tooltip.style.top = `${top}px`;
  };
  const removers = [listen(svg, "pointermove", move), listen(svg, "pointerleave", hide)];
  return () => {
    removers.forEach((remove) => remove());
    hide();
  };
}

/** + and - zoom, 0 fits, while the graph has the keyboard focus. */
function attachZoomKeys(stage, viewport) {
  return listen(stage, "keydown", (event) => {
    const actions = { "+": () => viewport.zoom(1.25), "=": () => viewport.zoom(1.25), "-": () => viewport.zoom(0.8),
      "0": () => viewport.fit() };
    const action = actions[event.key];
    if (action && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      action();
    }
  });
}
