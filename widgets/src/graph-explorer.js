// The graph as the report, the GraphView widget and the JupyterLab output all show it: a
// breadcrumb of the groups opened (click one to go back to it), a search box (a node by
// name or op: it is revealed, selected and zoomed to), the graph laid out in a worker, and
// the gradient legend under the graph (never over it). Which groups are collapsed is the
// caller's state (the widget keeps it in its "collapsed" trait): the explorer reports
// changes through onCollapsed and draws what it is given with setCollapsed.

import { h, listen } from "./dom.js";
import {
  ancestors, collapseGroup, expandGroup, graphDot, groupTree, legendCells, nodeTitle, openPath, reveal, runMembers, searchNodes,
} from "./graph-dot.js";
import { mountGraph } from "./graph-view.js";
import { layoutSvg } from "./layout.js";

/**
 * @param {HTMLElement} host where the explorer goes
 * @param {{onCollapsed?: (list: string[]) => void, onSelect?: (node: object|null) => void,
 *   onDrawn?: (view: object) => void, onError?: (error: Error) => void}} callbacks
 */
export function createExplorer(host, { onCollapsed = () => {}, onSelect = () => {}, onDrawn = () => {}, onError = () => {} } = {}) {
  const crumbs = h("nav", { class: "vg-breadcrumb", "aria-label": "open groups", "data-testid": "vg-breadcrumb" });
  const search = h("input", { type: "search", class: "vg-search", placeholder: "find a node (name or op)", "aria-label": "find a node by name or op",
    "data-testid": "vg-search", autocomplete: "off" });
  const matches = h("ul", { class: "vg-search-results", role: "listbox", hidden: true, "data-testid": "vg-search-results" });
  const stageHost = h("div", { class: "vg-graph-canvas" });
  const legend = h("div", { class: "vg-graph-legend", hidden: true, "data-testid": "vg-graph-legend" });
  host.append(h("div", { class: "vg-explorer" }, [
    h("div", { class: "vg-explorer-bar" }, [crumbs, h("div", { class: "vg-search-box" }, [search, matches])]),
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
      h("span", { class: "vg-graph-legend-title" }, "gradient size (RMS)"),
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
        view?.destroy();
        drawing = next;
        drawnDot = next.dot;
        view = mountGraph(stageHost, graph, svg, drawing, {
          onSelect: (node) => {
            selected = node?.id ?? null;
            onSelect(node);
          },
          onGroup,
        });
        drawLegend(drawing.scale);
      }
      view.setActiveStep(step);
      view.select(selected);
      if (focus && drawing.itemOfNode.has(focus)) {
        view.fitTo(focus);
        focus = null;
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
    /** Show ``nextGraph`` with the groups in ``nextCollapsed`` collapsed. */
    update(nextGraph, nextCollapsed) {
      if (nextGraph !== graph) {
        graph = nextGraph;
        tree = groupTree(graph);
      }
      collapsed = nextCollapsed.filter((key) => tree.groups.has(key));
      return draw();
    },
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
