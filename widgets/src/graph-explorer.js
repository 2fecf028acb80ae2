// The graph as the report, the GraphView widget and the JupyterLab output all show it: a
// breadcrumb of the groups opened (click one to go back to it), a search box (a node by
// name or op: it is revealed, selected and zoomed to), the graph laid out in a worker, and
// the gradient legend under the graph (never over it). Which groups are collapsed is the
// caller's state (the widget keeps it in its "collapsed" trait): the explorer reports
// changes through onCollapsed and draws what it is given with setCollapsed. A graph
// updated with ``fit`` opens legible: its groups are collapsed a level at a time until the
// fitted drawing's labels are readable (src/fit.js). The overview (minimap) button's state
// is the caller's too (onMinimap, setMinimap).

import { h, listen } from "./dom.js";
import {
  ancestors, collapseGroup, expandGroup, graphDot, groupTree, legendCells, nodeTitle, openPath, reveal, runMembers, searchNodes,
} from "./graph-dot.js";
import { coarserCollapse, tooSmallToFit } from "./fit.js";
import { mountGraph } from "./graph-view.js";
import { layoutSvg } from "./layout.js";

const MIN_PANE_HEIGHT = 320; // the stage's min-height (graph-view.css)

/**
 * @param {HTMLElement} host where the explorer goes
 * @param {{onCollapsed?: (list: string[]) => void, onSelect?: (node: object|null) => void,
 *   onDrawn?: (view: object) => void, onError?: (error: Error) => void, onMinimap?: (shown: boolean) => void,
 *   minimap?: boolean}} callbacks and the overview's first state (shown unless false)
 */
export function createExplorer(host, {
  onCollapsed = () => {}, onSelect = () => {}, onDrawn = () => {}, onError = () => {}, onMinimap = () => {}, minimap = true,
} = {}) {
  const crumbs = h("nav", { class: "vg-breadcrumb", "aria-label": "open groups", "data-testid": "vg-breadcrumb" });
  const search = h("input", { type: "search", class: "vg-search", placeholder: "find a node (name or op)", "aria-label": "find a node by name or op",
    "data-testid": "vg-search", autocomplete: "off" });
  const matches = h("ul", { class: "vg-search-results", role: "listbox", hidden: true, "data-testid": "vg-search-results" });
  const minimapToggle = h("button", { type: "button", class: "vg-minimap-toggle", "aria-pressed": String(minimap),
    title: "show or hide the overview (minimap)", "data-testid": "vg-minimap-toggle" }, "overview");
  const stageHost = h("div", { class: "vg-graph-canvas" });
  const legend = h("div", { class: "vg-graph-legend", hidden: true, "data-testid": "vg-graph-legend" });
  host.append(h("div", { class: "vg-explorer" }, [
    h("div", { class: "vg-explorer-bar" }, [crumbs, minimapToggle, h("div", { class: "vg-search-box" }, [search, matches])]),
    stageHost, legend,
  ]));

  let graph = null;
  let tree = null;
  let collapsed = [];
  let unfolded = [];
  let view = null;
  let drawing = null;
  let drawnDot = null;
  let step = -1;
  let selected = null;
  let focus = null; // a node to zoom to once it is drawn
  let focusGroup = null; // a group just opened or closed: zoomed to once drawn, as the click asked to see it
  let fitting = false; // collapsing until the fitted drawing is readable (a graph just opened)
  let minimapShown = minimap;
  let running = false;
  let again = false;
  let destroyed = false;
  const removers = [];

  const changeCollapsed = (next) => {
    collapsed = next;
    onCollapsed(next);
    draw();
  };

  function onGroup(key, action) {
    focusGroup = key;
    const group = tree.groups.get(key);
    const run = group?.run;
    if (action === "open" && run && run.first === key && !unfolded.includes(key) && runMembers(tree, run).every((member) => collapsed.includes(member))) {
      unfolded = [...unfolded, key]; // a folded run ("Block ×6") opens into its blocks
      draw();
    } else if (action === "open") changeCollapsed(expandGroup(collapsed, key, tree));
    else changeCollapsed(collapseGroup(collapsed, key, tree));
  }

  function drawCrumbs() {
    const path = openPath(tree, collapsed);
    const items = [h("button", { type: "button", class: "vg-crumb", "data-testid": "vg-crumb", "data-group": "" }, "graph")];
    for (const key of path) {
      items.push(h("span", { class: "vg-crumb-sep", "aria-hidden": "true" }, "›"),
        h("button", { type: "button", class: "vg-crumb", "data-testid": "vg-crumb", "data-group": key }, tree.groups.get(key).label));
    }
    items.at(-1).setAttribute("aria-current", "true");
    crumbs.replaceChildren(...items);
  }

  /** Back to ``key`` (closing everything opened inside it); "" closes every top-level group. */
  function back(key) {
    unfolded = [];
    if (key === "") changeCollapsed([...tree.roots]);
    else {
      let next = collapsed;
      for (const child of tree.groups.get(key).children) next = collapseGroup(next, child, tree);
      changeCollapsed(next);
    }
  }

  function drawLegend(scale) {
    legend.hidden = !scale;
    if (!scale) return;
    const cells = legendCells(scale);
    legend.replaceChildren(
      h("span", { class: "vg-graph-legend-title" }, graph?.flow === "forward" ? "tangent size (RMS)" : "gradient size (RMS)"),
      h("span", {}, cells[0].label),
      h("span", { class: "vg-graph-legend-bar" }, cells.map((cell) => h("span", { style: `background:${cell.colour}`, title: cell.label }))),
      h("span", {}, cells.at(-1).label),
      h("span", { class: "vg-graph-legend-alarm" }, "NaN / inf"),
    );
  }

  async function draw() {
    if (!graph) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const next = graphDot(graph, { collapsed, unfolded, tree });
      drawCrumbs();
      if (next.dot === drawnDot) view.setGraph(graph);
      else {
        const svg = await layoutSvg(next.dot);
        if (destroyed) return;
        const coarser = fitting && tooSmall(svg) ? coarserCollapse(tree, collapsed) : null;
        if (coarser) { // unreadable when fitted: draw it a level more collapsed instead
          collapsed = coarser;
          unfolded = [];
          onCollapsed(coarser);
          again = true;
          return;
        }
        fitting = false;
        view?.destroy();
        drawing = next;
        drawnDot = next.dot;
        drawLegend(drawing.scale); // first: the legend takes its height from the stage before the view is fitted
        view = mountGraph(stageHost, graph, svg, drawing, {
          onSelect: (node) => {
            selected = node?.id ?? null;
            onSelect(node);
          },
          onGroup,
          minimap: minimapShown,
        });
      }
      view.setActiveStep(step);
      view.select(selected);
      if (focus && drawing.itemOfNode.has(focus)) {
        view.fitTo(focus);
        focus = null;
      } else if (focusGroup !== null) {
        view.fitToGroup(focusGroup);
        focusGroup = null;
      }
      onDrawn(view);
    } catch (error) {
      onError(error);
    } finally {
      running = false;
      if (again && !destroyed) {
        again = false;
        draw();
      }
    }
  }

  /** Whether the drawing ``svg`` (as Graphviz made it) fitted into the stage would have labels too small to read. */
  function tooSmall(svg) {
    const box = svg.viewBox.baseVal;
    const pane = { width: stageHost.clientWidth, height: Math.max(stageHost.clientHeight, MIN_PANE_HEIGHT) };
    return Boolean(box?.width && box.height && pane.width) && tooSmallToFit(box, pane);
  }

  function setMinimap(shown) {
    minimapShown = shown;
    minimapToggle.setAttribute("aria-pressed", String(shown));
    view?.setMinimap(shown);
  }

  function showMatches() {
    const found = graph ? searchNodes(graph, search.value) : [];
    matches.hidden = !search.value.trim();
    matches.replaceChildren(...(found.length ? found.map((node) => {
      const where = ancestors(tree, tree.nodeGroup.get(node.id)).map((key) => tree.groups.get(key).label).join(" › ");
      return h("li", { role: "option", class: "vg-search-result", "data-testid": "vg-search-result", "data-node-id": node.id, tabindex: "-1" },
        [h("span", {}, nodeTitle(node)), h("span", { class: "vg-muted" }, ` ${node.op && node.op !== nodeTitle(node) ? node.op : ""} ${where ? `in ${where}` : ""} (${node.id})`)]);
    }) : [h("li", { class: "vg-muted" }, "no node matches")]));
  }

  /** Open the groups around node ``id``, select it and zoom to it. */
  function goTo(id) {
    focus = id;
    selected = id;
    matches.hidden = true;
    onSelect(graph.nodes.find((node) => node.id === id) ?? null);
    const next = reveal(collapsed, id, tree);
    if (next.length !== collapsed.length || next.some((key, i) => key !== collapsed[i])) changeCollapsed(next);
    else draw();
  }

  removers.push(
    listen(crumbs, "click", (event) => {
      const crumb = event.target.closest(".vg-crumb");
      if (crumb) back(crumb.dataset.group);
    }),
    listen(search, "input", showMatches),
    listen(minimapToggle, "click", () => {
      setMinimap(!minimapShown);
      onMinimap(minimapShown);
    }),
    listen(search, "keydown", (event) => {
      if (event.key === "Enter") {
        const first = matches.querySelector(".vg-search-result");
        if (first) goTo(first.dataset.nodeId);
        event.preventDefault();
      } else if (event.key === "Escape") {
        matches.hidden = true;
      }
      event.stopPropagation(); // typing here never reaches the notebook's shortcuts
    }),
    listen(matches, "click", (event) => {
      const item = event.target.closest(".vg-search-result");
      if (item) goTo(item.dataset.nodeId);
    }),
  );

  return {
    get view() { return view; },
    get tree() { return tree; },
    get collapsed() { return collapsed; },
    /**
     * Show ``nextGraph`` with the groups in ``nextCollapsed`` collapsed; ``fit``: collapse
     * more, a level at a time, while the fitted drawing's labels would be too small to read.
     */
    update(nextGraph, nextCollapsed, { fit = false } = {}) {
      if (nextGraph !== graph) {
        graph = nextGraph;
        tree = groupTree(graph);
      }
      collapsed = nextCollapsed.filter((key) => tree.groups.has(key));
      if (fit) fitting = true;
      return draw();
    },
    setMinimap,
    setCollapsed(next) {
      collapsed = next.filter((key) => tree?.groups.has(key));
      return draw();
    },
    setActiveStep(next) {
      step = next;
      view?.setActiveStep(step);
    },
    select(id) {
      selected = id;
      view?.select(id);
    },
    goTo,
    fitSelection() {
      if (selected) view?.fitTo(selected);
    },
    destroy() {
      destroyed = true;
      removers.forEach((remove) => remove());
      view?.destroy();
      host.replaceChildren();
    },
  };
}
