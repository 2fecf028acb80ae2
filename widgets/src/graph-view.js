// The interactive graph: attaches pan (drag), zoom (wheel, buttons, keys, fit, fit to the
// selection), a hover tooltip, click-to-select, semantic zoom (labels too small to read
// give way to the node shapes, and come back on zoom), a minimap once the view shows part
// of the graph, and the backward replay highlight (setActiveStep, which also lights a
// collapsed group while any node inside it is visited) to the SVG that Graphviz made from
// src/graph-dot.js's DOT (src/graph-explorer.js lays it out in a worker).
//
// Every listener sits on the view's own elements and every function that attaches
// listeners returns its cleanup; view.destroy() runs them all and removes the view.

import { h, listen } from "./dom.js";
import {
  EDGE_FONT_PT, MAX_FIT_SCALE, MIN_LABEL_PX, MIN_SCALE, NODE_FONT_PT, fitMargin, fitScale, minimapPlace, minimapSize, readableView, rootId,
  viewScale,
} from "./fit.js";
import { nodeCard } from "./node-card.js";

const XLINK = "http://www.w3.org/1999/xlink";
const DRAG_THRESHOLD = 4; // pixels a press may move and still count as a click
const MAX_ZOOM_IN = 20;
const MAX_ZOOM_OUT = 3; // zoomed out at most this far past the whole drawing fitted
const LAYER_SCALE_LIMIT = 1.25; // a painted layer scaled more than this is painted afresh...
const LAYER_SHIFT_LIMIT = 0.3; // ...and one moved by more than this part of the view
// a wheel gesture scales the layer this far (and moves it freely) before painting afresh: painting
// a 1,000-node drawing takes several frames, so a gesture paints only past 8x, and when it ends
const WHEEL_LAYER_SCALE_LIMIT = 8;
const SETTLE_FRAMES = 4; // animation frames without a wheel event that end a wheel gesture
let viewCount = 0;

/**
 * Attach the interactions to an SVG that Graphviz made from ``drawing.dot``.
 * @param {HTMLElement} container
 * @param {object} graph Graph JSON
 * @param {SVGSVGElement} svg
 * @param {{items: Map, itemOfNode: Map, clusters: Map, tree: object}} drawing what src/graph-dot.js's graphDot drew
 * @param {{onSelect?: (node: object|null) => void, onGroup?: (key: string, action: "open"|"close") => void,
 *   minimap?: boolean}} options
 *   onSelect: called when the selection changes; onGroup: a click on a collapsed group's box ("open")
 *   or on an open group's frame ("close"); minimap: whether the overview may show (setMinimap changes it)
 * @typedef {{svg: SVGSVGElement, stage: HTMLElement, setActiveStep: (step: number) => void,
 *   select: (id: string|null) => void, zoomIn: () => void, zoomOut: () => void, fit: () => void,
 *   fitTo: (id: string) => void, fitToGroup: (key: string) => void, setMinimap: (shown: boolean) => void,
 *   destroy: () => void}} GraphView
 */
export function mountGraph(container, graph, svg, drawing, { onSelect = () => {}, onGroup = null, minimap: minimapShown = true } = {}) {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const { nodeElements, groupElements, edgeElements } = prepareSvg(svg, nodes, drawing);
  const nodesWere = nodes.size;
  const tooltip = h("div", { class: "vg-tooltip", role: "tooltip", hidden: true });
  const minimap = h("canvas", { class: "vg-minimap vg-out-of-view", width: 24, height: 24, "aria-label": "overview: click to move there", "data-testid": "vg-minimap" });
  const stage = h("div", { class: "vg-graph-stage", tabindex: "0", "aria-label": "computation graph" }, [svg, minimap, tooltip]);
  container.append(stage);

  /** The element drawing node ``id``: its own, or the collapsed group's box that holds it. */
  const elementOf = (id) => nodeElements.get(id) ?? groupElements.get(drawing.itemOfNode.get(id)) ?? null;
  const rootElement = elementOf(rootId(graph));
  rootElement?.classList.add("vg-root");
  const root = rootElement ? boxIn(svg, rootElement) : null; // the output (or the box holding it), in user units

  let overview = null;
  const viewport = createViewport(svg, contentBox(svg), root, (painted) => overview?.update(painted));
  overview = createMinimap(minimap, svg, viewport, root, minimapShown);
  overview.viewport = viewport;
  let selected = null;

  function select(id) {
    const next = id !== null && nodeElements.has(id) ? id : null;
    if (next === selected) return;
    nodeElements.get(selected)?.classList.remove("vg-selected");
    selected = next;
    nodeElements.get(selected)?.classList.add("vg-selected");
    onSelect(selected === null ? null : nodes.get(selected));
  }

  // a click on a collapsed group opens it, on an open group's frame closes it (when onGroup is given)
  const click = (target) => {
    const group = onGroup ? groupAt(target) : null;
    if (group) onGroup(group.key, group.action);
    else select(nodeIdAt(target));
  };
  const cleanups = [
    attachPanZoom(svg, viewport, click),
    attachTooltip(stage, svg, tooltip, nodes, drawing),
    attachZoomKeys(stage, viewport),
    attachMinimap(minimap, overview),
    attachResize(svg, viewport),
    () => viewport.cancel(),
  ];
  overview.update();

  let shownStep;

  return {
    svg,
    stage,
    /**
     * Highlight the node visited at backward step ``step`` (-1: none), mark the ones before.
     * A collapsed group is active while any node inside it is, visited once all are. In a
     * forward replay (nodes with ``forward_index``, jvp.js) the steps are forward's, and only
     * the edges from nodes carrying a tangent light up.
     */
    setActiveStep(step) {
      const indexOf = (node) => ("forward_index" in node ? node.forward_index : node.backward_index);
      const quiet = (id) => nodes.has(id) && "forward_index" in nodes.get(id) && !nodes.get(id).tangent;
      const state = (indices) => {
        const visited = indices.filter((index) => index !== null && index !== undefined);
        if (!visited.length) return null;
        if (visited.includes(step)) return "active";
        return visited.every((index) => index < step) ? "visited" : visited.some((index) => index < step) ? "active-partly" : "pending";
      };
      let activeItem = null;
      const mark = (element, itemState) => {
        element.classList.toggle("vg-active", itemState === "active");
        element.classList.toggle("vg-visited", itemState === "visited" || itemState === "active-partly");
        element.classList.toggle("vg-pending", itemState === "pending");
      };
      for (const [id, element] of nodeElements) {
        const itemState = state([indexOf(nodes.get(id))]);
        mark(element, itemState);
        if (itemState === "active") activeItem = id;
      }
      for (const [id, element] of groupElements) {
        const itemState = state(drawing.items.get(id).nodes.map((member) => indexOf(nodes.get(member))));
        mark(element, itemState);
        if (itemState === "active") activeItem = id;
      }
      for (const edge of edgeElements) {
        edge.classList.toggle("vg-flow", activeItem !== null && edge.dataset.target === activeItem && !quiet(edge.dataset.source));
      }
      // the replay never leaves the view: as the step moves, an active node outside it is brought to the centre
      const moved = shownStep !== undefined && step !== shownStep;
      shownStep = step;
      const activeElement = activeItem === null || !moved ? null : nodeElements.get(activeItem) ?? groupElements.get(activeItem);
      if (activeElement) {
        const target = boxIn(svg, activeElement);
        const view = viewport.box;
        const inside = target.x >= view.x && target.y >= view.y && target.x + target.width <= view.x + view.width
          && target.y + target.height <= view.y + view.height;
        if (!inside) viewport.centre(target.x + target.width / 2, target.y + target.height / 2);
      }
    },
    select,
    /** New data for the same drawing (a graph whose DOT did not change: values, gradients). */
    setGraph(next) {
      nodes.clear();
      for (const node of next.nodes) nodes.set(node.id, node);
      return nodes.size === nodesWere;
    },
    zoomIn: () => viewport.zoom(1.25),
    zoomOut: () => viewport.zoom(0.8),
    fit: () => viewport.fit(),
    /** Zoom to group ``key``: its open frame or its box (nothing when it is not drawn). */
    fitToGroup(key) {
      const element = [...svg.querySelectorAll("g.cluster[data-group], g.vg-group")].find((candidate) => candidate.dataset.group === key);
      if (element) viewport.show(boxIn(svg, element), root);
    },
    /** Let the overview show (while part of the graph is out of view) or keep it hidden. */
    setMinimap(shown) {
      overview.setShown(shown);
    },
    /** Zoom to node ``id`` (or the group box that holds it), at a readable size at least. */
    fitTo(id) {
      const element = elementOf(id);
      if (element) viewport.show(boxIn(svg, element));
    },
    destroy() {
      for (const cleanup of cleanups) cleanup();
      stage.remove();
    },
  };
}

/** An element's bounding box in the SVG's user units. */
function boxIn(svg, element) {
  const box = element.getBBox();
  const matrix = svg.querySelector(":scope > g")?.transform.baseVal.consolidate()?.matrix;
  if (!matrix) return { x: box.x, y: box.y, width: box.width, height: box.height };
  const a = new DOMPoint(box.x, box.y).matrixTransform(matrix);
  const b = new DOMPoint(box.x + box.width, box.y + box.height).matrixTransform(matrix);
  return { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(b.x - a.x), height: Math.abs(b.y - a.y) };
}

/** The smallest box holding boxes ``a`` and ``b``. */
function unionBox(a, b) {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
}

/** The graph node id under an event target, or null. */
function nodeIdAt(target) {
  return target?.closest?.("g.vg-node")?.dataset.nodeId ?? null;
}

/** The group under an event target: {key, action: "open"} for a collapsed group's box,
 * {key, action: "close"} for an open group's frame; null otherwise. */
function groupAt(target) {
  const box = target?.closest?.("g.vg-group");
  if (box) return { key: box.dataset.group, action: "open" };
  const cluster = target?.closest?.("g.cluster");
  if (cluster?.dataset.group) return { key: cluster.dataset.group, action: "close" };
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
 * Tag Graphviz's output with what the views need: graph nodes get data-node-id and
 * classes vg-node and vg-kind-<kind>; collapsed groups vg-group, data-group (the group's
 * key), data-size (how many graph nodes it holds) and data-module (the same, for modules); open groups' clusters data-group and
 * data-module; edges data-source and data-target (DOT ids: a node's id or a group box's).
 */
function prepareSvg(svg, nodes, drawing) {
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  svg.classList.add("vg-graph");
  const content = svg.querySelector(":scope > g");
  content?.setAttribute("id", `vg-graph-${viewCount++}`);
  svg.querySelector(":scope > g > title")?.remove();
  svg.querySelector(":scope > g > polygon")?.remove(); // the white page behind the graph
  const nodeElements = new Map();
  const groupElements = new Map();
  for (const element of svg.querySelectorAll("g.node")) {
    const key = takeTitle(element);
    const item = drawing.items.get(key);
    if (item?.kind === "node" && nodes.has(key)) {
      element.classList.add("vg-node", `vg-kind-${nodes.get(key).kind}`);
      element.dataset.nodeId = key;
      nodeElements.set(key, element);
    } else if (item?.kind === "group") {
      const group = drawing.tree.groups.get(item.key);
      element.classList.add("vg-group", `vg-group-${group.kind}`);
      element.dataset.group = item.key;
      element.dataset.itemId = key;
      element.dataset.size = String(item.nodes.length); // the graph nodes the box stands for
      if (group.kind === "module") element.dataset.module = item.key;
      groupElements.set(key, element);
    }
  }
  for (const element of svg.querySelectorAll("g.cluster")) {
    const key = drawing.clusters.get(takeTitle(element));
    if (key === undefined) continue;
    element.dataset.group = key;
    if (drawing.tree.groups.get(key).kind === "module") element.dataset.module = key;
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
  return { nodeElements, groupElements, edgeElements };
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

/**
 * Zooming and panning by rewriting the SVG's viewBox (at most once per animation frame).
 * "fit" (and the first view) shows ``content`` whole when its labels are readable there,
 * else the part around ``root`` (a box in user units, or null) at the smallest readable
 * scale (src/fit.js). Labels that would be drawn smaller than MIN_LABEL_PX give way: edge
 * labels first (class vg-small-text), then every label to the shapes (class vg-glyphs);
 * they return when zoomed in. ``onChange(painted)`` runs after each change (the minimap
 * follows): ``painted`` is false while a gesture moves the painted drawing as a layer.
 */
function createViewport(svg, content, root, onChange = () => {}) {
  const pane = () => ({ width: svg.clientWidth, height: svg.clientHeight });
  /** The readable fitted view; Graphviz's whole drawing while the SVG has no size (not displayed). */
  function home() {
    if (!svg.clientWidth || !svg.clientHeight) {
      const margin = fitMargin(content);
      return { x: content.x - margin, y: content.y - margin, width: content.width + 2 * margin, height: content.height + 2 * margin };
    }
    return readableView(content, pane(), root);
  }

  let box = home();
  let fitted = true; // ``box`` is the fitted view (no zoom or pan since): a resized pane is fitted afresh
  let paneWas = pane(); // the size of the pane ``box`` was painted in
  let frame = 0;
  let committed = { ...box };
  let layered = false;
  let settleFrame = 0;
  let idleFrames = 0;
  apply();

  /** Draw the graph at ``box``: the viewBox, the semantic zoom's classes, no layer transform. */
  function apply() {
    cancelAnimationFrame(frame);
    cancelAnimationFrame(settleFrame);
    frame = 0;
    settleFrame = 0;
    svg.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
    paneWas = pane();
    svg.style.transform = "";
    svg.classList.remove("vg-layered");
    layered = false;
    committed = { ...box };
    const scale = pixelsPerUnit();
    const unreadable = (points) => scale > 0 && points * scale < MIN_LABEL_PX * 0.999; // (MIN_SCALE itself is readable)
    svg.classList.toggle("vg-glyphs", unreadable(NODE_FONT_PT));
    svg.classList.toggle("vg-small-text", unreadable(EDGE_FONT_PT));
    onChange(true);
  }
  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      apply();
    });
  }

  /**
   * End a wheel gesture once SETTLE_FRAMES animation frames pass without a wheel event:
   * then the graph is painted afresh at the new view (viewBox, semantic zoom, minimap).
   */
  function settleAfterWheel() {
    idleFrames = 0;
    if (settleFrame) return;
    const tick = () => {
      idleFrames += 1;
      if (idleFrames < SETTLE_FRAMES) {
        settleFrame = requestAnimationFrame(tick);
        return;
      }
      settleFrame = 0;
      if (layered) apply();
    };
    settleFrame = requestAnimationFrame(tick);
  }

  /**
   * Show ``box`` by moving and scaling the drawing last painted (at ``committed``) as a
   * layer: no repaint of the graph (its labels keep the visibility they were painted with),
   * so drags and wheel zooms keep the frame rate. The drawing is painted afresh (commit)
   * when the drag ends, the wheel gesture settles, the pointer moves on, or the layer is
   * scaled past ``scaleLimit`` or moved past ``shiftLimit`` (parts of the view).
   */
  function showLayer(scaleLimit = LAYER_SCALE_LIMIT, shiftLimit = LAYER_SHIFT_LIMIT) {
    const width = svg.clientWidth;
    const height = svg.clientHeight;
    const was = Math.min(width / committed.width, height / committed.height);
    const now = Math.min(width / box.width, height / box.height);
    const k = now / was;
    const x = (width - box.width * now) / 2 + (committed.x - box.x) * now - ((width - committed.width * was) / 2) * k;
    const y = (height - box.height * now) / 2 + (committed.y - box.y) * now - ((height - committed.height * was) / 2) * k;
    // past these the layer would blur or show too much of the unpainted margin: paint afresh
    if (k > scaleLimit || k < 1 / scaleLimit || Math.abs(x) > width * shiftLimit
      || Math.abs(y) > height * shiftLimit) {
      apply();
      return;
    }
    svg.style.transform = `translate(${x}px, ${y}px) scale(${k})`;
    svg.classList.add("vg-layered");
    layered = true;
    onChange(false);
  }

  /** Screen pixels per layout unit (the viewBox is fitted into the element: "meet"). */
  function pixelsPerUnit() {
    if (!svg.clientWidth || !svg.clientHeight) return 0;
    return viewScale(box, pane());
  }

  /** A client (screen) point in the SVG's user units; the view's centre when unknown. */
  function toSvg(clientX, clientY) {
    const rect = svg.parentElement.getBoundingClientRect(); // the stage: the svg's place before any layer transform
    const scale = pixelsPerUnit();
    if (!scale || clientX === undefined) return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    // "meet" centres the viewBox in the element
    const offsetX = (rect.width - box.width * scale) / 2;
    const offsetY = (rect.height - box.height * scale) / 2;
    return { x: box.x + (clientX - rect.left - offsetX) / scale, y: box.y + (clientY - rect.top - offsetY) / scale };
  }

  return {
    get box() { return box; },
    get content() { return content; },
    get pane() { return pane(); },
    /** A box in user units as painted (the committed view) in the SVG element's pixels, or null. */
    toPane(target) {
      const scale = viewScale(committed, pane());
      if (!target || !scale) return null;
      const offsetX = (svg.clientWidth - committed.width * scale) / 2;
      const offsetY = (svg.clientHeight - committed.height * scale) / 2;
      return { x: offsetX + (target.x - committed.x) * scale, y: offsetY + (target.y - committed.y) * scale,
        width: target.width * scale, height: target.height * scale };
    },
    /**
     * Zoom by ``factor`` (> 1 zooms in) keeping the point under (clientX, clientY) still;
     * ``layer``: by moving the painted layer (a wheel turn), committed later.
     */
    zoom(factor, clientX, clientY, layer = false) {
      fitted = false;
      const widest = (content.width + 2 * fitMargin(content)) * MAX_ZOOM_OUT;
      const narrowest = (svg.clientWidth || content.width) / (MAX_FIT_SCALE * MAX_ZOOM_IN);
      const width = Math.min(widest, Math.max(narrowest, box.width / factor));
      const applied = box.width / width;
      const point = toSvg(clientX, clientY);
      box = {
        x: point.x - (point.x - box.x) / applied,
        y: point.y - (point.y - box.y) / applied,
        width,
        height: box.height / applied,
      };
      if (layer) {
        showLayer(WHEEL_LAYER_SCALE_LIMIT, Infinity);
        settleAfterWheel();
      } else {
        apply(); // a button or key: one step, drawn at once
      }
    },
    /** Move the picture by a drag of (dx, dy) screen pixels (as a layer: see commit). */
    pan(dx, dy) {
      fitted = false;
      const scale = pixelsPerUnit() || 1;
      box = { ...box, x: box.x - dx / scale, y: box.y - dy / scale };
      showLayer();
    },
    /** Paint the graph where the layer moved it (after a drag, once the pointer moves on after a wheel zoom). */
    commit() {
      if (!layered) return;
      layered = false;
      apply();
    },
    /** Centre the view on the point (x, y) in user units. */
    centre(x, y) {
      fitted = false;
      box = { ...box, x: x - box.width / 2, y: y - box.height / 2 };
      schedule();
    },
    /** The pane changed size: fitted afresh when the view was the fitted one, else the same scale and centre. */
    resize() {
      const now = pane();
      if (!now.width || !now.height || (now.width === paneWas.width && now.height === paneWas.height)) return;
      if (fitted || !paneWas.width || !paneWas.height) box = home();
      else {
        const scale = viewScale(box, paneWas);
        const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
        box = { x: centre.x - now.width / scale / 2, y: centre.y - now.height / scale / 2, width: now.width / scale, height: now.height / scale };
      }
      apply();
    },
    /** The whole drawing when its labels are readable so, else the root's part at a readable size. */
    fit() {
      box = home();
      fitted = true;
      apply();
    },
    /**
     * Show ``target`` (a box in user units), with its labels readable (a large one: its
     * centre); with ``alongside`` too (the root) when both fit at a readable scale.
     */
    show(target, alongside = null) {
      fitted = false;
      if (!svg.clientWidth || !svg.clientHeight) {
        box = home();
      } else {
        const both = alongside ? unionBox(target, alongside) : target;
        const shown = fitScale(both, pane()) >= MIN_SCALE ? both : target;
        box = readableView(shown, pane(), shown, { maxScale: MAX_FIT_SCALE * 0.75 });
      }
      apply();
    },
    cancel() {
      cancelAnimationFrame(frame);
      cancelAnimationFrame(settleFrame);
    },
  };
}

/**
 * The minimap: the whole graph's boxes drawn on a canvas, the visible part as a frame; shown
 * only while the view shows part of the graph and ``shown`` allows it, at most MINIMAP_SHARE
 * of the pane (src/fit.js), in a corner where it does not cover ``root`` (hidden when every
 * corner would).
 */
function createMinimap(canvas, svg, viewport, root, shown = true) {
  let boxes = null;
  let geometry = null;
  const content = viewport.content;
  function measure(pane) {
    boxes ??= [...svg.querySelectorAll("g.node, g.cluster")].map((element) => [boxIn(svg, element), element.classList.contains("cluster")]);
    const size = minimapSize(content, pane);
    geometry = { pane: `${pane.width}x${pane.height}`, size, scale: Math.min(size.width / content.width, size.height / content.height) };
    canvas.width = size.width;
    canvas.height = size.height;
  }
  function draw() {
    const context = canvas.getContext("2d");
    const { scale } = geometry;
    context.clearRect(0, 0, canvas.width, canvas.height);
    context.fillStyle = "rgba(255,255,255,0.92)";
    context.fillRect(0, 0, canvas.width, canvas.height);
    for (const [box, cluster] of boxes) {
      const x = (box.x - content.x) * scale;
      const y = (box.y - content.y) * scale;
      if (cluster) {
        context.strokeStyle = "#b0b8c1";
        context.strokeRect(x, y, box.width * scale, box.height * scale);
      } else {
        context.fillStyle = "#7b8794";
        context.fillRect(x, y, Math.max(1, box.width * scale), Math.max(1, box.height * scale));
      }
    }
    const view = viewport.box;
    context.strokeStyle = "#e8590c";
    context.lineWidth = 2;
    context.strokeRect((view.x - content.x) * scale, (view.y - content.y) * scale, view.width * scale, view.height * scale);
  }
  const overview = {
    /**
     * Follow the view; ``painted``: the graph was painted at it (else a gesture moves the
     * painted layer: the minimap is then only redrawn, shown or hidden once it ends, as a
     * change of the page's layout there would lay the whole drawing out again mid-gesture).
     */
    update(painted = true) {
      const view = viewport.box;
      const pane = viewport.pane;
      if (painted) {
        const partial = view.width < content.width * 0.98 || view.height < content.height * 0.98;
        let place = null;
        if (shown && partial && pane.width && pane.height) {
          if (geometry?.pane !== `${pane.width}x${pane.height}`) measure(pane);
          place = minimapPlace(pane, geometry.size, viewport.toPane(root));
        }
        canvas.classList.toggle("vg-out-of-view", place === null);
        if (place) {
          canvas.style.left = `${place.left}px`;
          canvas.style.top = `${place.top}px`;
        }
      }
      if (canvas.classList.contains("vg-out-of-view")) return;
      draw();
    },
    setShown(next) {
      shown = next;
      overview.update();
    },
    /** The user-unit point under a click on the minimap. */
    pointAt(offsetX, offsetY) {
      return { x: content.x + offsetX / geometry.scale, y: content.y + offsetY / geometry.scale };
    },
  };
  return overview;
}

/** Press or drag on the minimap to move the view there. */
function attachMinimap(canvas, overview) {
  let dragging = false;
  const move = (event) => {
    const point = overview.pointAt(event.offsetX, event.offsetY);
    overview.viewport?.centre(point.x, point.y);
  };
  const removers = [
    listen(canvas, "pointerdown", (event) => {
      event.stopPropagation();
      dragging = true;
      canvas.setPointerCapture(event.pointerId);
      move(event);
    }),
    listen(canvas, "pointermove", (event) => dragging && move(event)),
    listen(canvas, "pointerup", () => { dragging = false; }),
    listen(canvas, "pointercancel", () => { dragging = false; }),
  ];
  return () => removers.forEach((remove) => remove());
}

/** Follow the SVG element's size (a panel resized, a legend shown): the view keeps its scale. */
function attachResize(svg, viewport) {
  const observer = new ResizeObserver(() => viewport.resize());
  observer.observe(svg);
  return () => observer.disconnect();
}

/** Drag to pan, wheel to zoom; a press that does not move is a click (``onClick(target)``). */
function attachPanZoom(svg, viewport, onClick) {
  let press = null;
  const down = (event) => {
    if (event.button !== 0) return;
    viewport.commit();
    press = { id: event.pointerId, startX: event.clientX, startY: event.clientY, x: event.clientX, y: event.clientY,
      target: event.target, dragging: false };
    if (event.isTrusted) svg.setPointerCapture(event.pointerId); // a dispatched event has no pointer to capture
  };
  const move = (event) => {
    if (!press) viewport.commit(); // the pointer moves on after a wheel zoom: paint the graph afresh
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
    if (press.dragging) viewport.commit();
    svg.classList.remove("vg-panning");
    press = null;
  };
  const wheel = (event) => {
    event.preventDefault();
    const pixels = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    viewport.zoom(Math.exp(-pixels * 0.0015), event.clientX, event.clientY, true);
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
function attachTooltip(stage, svg, tooltip, nodes, drawing) {
  let shown = null;
  const hide = () => {
    shown = null;
    tooltip.hidden = true;
  };
  const move = (event) => {
    const id = event.buttons ? null : nodeIdAt(event.target) ?? groupItemAt(event.target);
    if (id === null) {
      hide();
      return;
    }
    if (id !== shown) {
      shown = id;
      tooltip.replaceChildren(nodes.has(id) ? nodeCard(nodes.get(id)) : groupCard(drawing, id));
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

function groupItemAt(target) {
  return target?.closest?.("g.vg-group")?.dataset.itemId ?? null;
}

/** What a collapsed group's box holds, for the tooltip. */
function groupCard(drawing, itemId) {
  const item = drawing.items.get(itemId);
  const group = drawing.tree.groups.get(item.key);
  const rows = [["kind", group.kind === "chunk" ? "consecutive nodes" : group.kind], ["name", group.name],
    ["nodes", String(item.nodes.length)], ["ops", String(group.ops)]];
  if (group.params.length) rows.push(["parameters", group.params.map((param) => param.name).join(", ")]);
  return h("div", { class: "vg-card" }, [
    h("div", { class: "vg-card-title" }, [h("span", {}, group.label), h("span", { class: "vg-card-id" }, "click to open")]),
    h("table", { class: "vg-rows" }, rows.map(([label, value]) => h("tr", {}, [h("th", {}, label), h("td", {}, value)]))),
  ]);
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
