// How a drawing is fitted to its pane so that it can be read: pure geometry over boxes in
// the drawing's units (Graphviz points) and the pane's size in screen pixels; no DOM.
//
// A label is readable at MIN_LABEL_PX screen pixels or more. A graph opens fitted to its
// pane when its node labels are readable there; else its groups are collapsed a level at a
// time (coarserCollapse) until they are, and a drawing that is still too large is shown
// around its root (the output node) at the smallest readable scale. The minimap takes at
// most MINIMAP_SHARE of the pane, in a corner where it does not cover the root.

import { collapseGroup } from "./graph-dot.js";

export const MIN_LABEL_PX = 11;
export const NODE_FONT_PT = 12; // graph-dot.js's node and cluster font size
export const EDGE_FONT_PT = 10; // its edge labels' font size
/** Screen pixels per drawing unit at which node labels are MIN_LABEL_PX tall. */
export const MIN_SCALE = (MIN_LABEL_PX / NODE_FONT_PT) * 1.01; // a hair above: rounding never draws them at 10.99 px
/** Small graphs are not blown up past this scale when fitted. */
export const MAX_FIT_SCALE = 1.6;
export const MINIMAP_SHARE = 0.15;
const MINIMAP_MAX = { width: 140, height: 120 };
const MINIMAP_MIN = 24;
const MINIMAP_GAP = 8;

/** The margin kept around a drawing of this size when it is fitted. */
export function fitMargin(content) {
  return Math.max(content.width, content.height) * 0.03 + 4;
}

/** The scale (screen pixels per unit) at which ``content`` with its margin fits ``pane``. */
export function fitScale(content, pane) {
  const margin = fitMargin(content);
  return Math.min(pane.width / (content.width + 2 * margin), pane.height / (content.height + 2 * margin));
}

/** Whether node labels would be smaller than MIN_LABEL_PX with ``content`` fitted whole into ``pane``. */
export function tooSmallToFit(content, pane) {
  return fitScale(content, pane) < MIN_SCALE;
}

/**
 * The view (a box in drawing units, of the pane's proportions) that fits ``content`` into
 * ``pane`` at a readable scale: the whole drawing when it fits at MIN_SCALE or more (never
 * blown up past ``maxScale``), else the part around ``root`` (a box, or null: the drawing's
 * bottom centre, where Graphviz puts the output) at MIN_SCALE, kept within the drawing.
 */
export function readableView(content, pane, root = null, { minScale = MIN_SCALE, maxScale = MAX_FIT_SCALE } = {}) {
  const margin = fitMargin(content);
  const scale = Math.min(maxScale, Math.max(minScale, fitScale(content, pane)));
  const width = pane.width / scale;
  const height = pane.height / scale;
  const centre = root ? { x: root.x + root.width / 2, y: root.y + root.height / 2 }
    : { x: content.x + content.width / 2, y: content.y + content.height };
  // along each axis: centred on the drawing when it fits, else on the root, inside the drawing
  const place = (start, size, span, at, share) => {
    if (span >= size + 2 * margin) return start + size / 2 - span / 2;
    const wanted = at - span * share;
    return Math.min(start + size + margin - span, Math.max(start - margin, wanted));
  };
  return {
    x: place(content.x, content.width, width, centre.x, 0.5),
    y: place(content.y, content.height, height, centre.y, 0.7), // the root low in the view: what feeds it above
    width,
    height,
  };
}

/** Screen pixels per drawing unit of ``view`` shown in ``pane`` (preserveAspectRatio "meet"). */
export function viewScale(view, pane) {
  return Math.min(pane.width / view.width, pane.height / view.height);
}

/**
 * The collapsed list one level coarser: the deepest groups drawn open (not inside a
 * collapsed one) are collapsed; null when every group is already drawn as a box.
 */
export function coarserCollapse(tree, collapsed) {
  const closed = new Set(collapsed);
  const open = [];
  const visit = (keys, depth) => {
    for (const key of keys) {
      if (closed.has(key)) continue;
      open.push([key, depth]);
      visit(tree.groups.get(key).children, depth + 1);
    }
  };
  visit(tree.roots, 0);
  if (!open.length) return null;
  const deepest = Math.max(...open.map(([, depth]) => depth));
  let next = [...collapsed];
  for (const [key, depth] of open) if (depth === deepest) next = collapseGroup(next, key, tree);
  return next;
}

/** The minimap's size in pixels: the drawing's proportions, within MINIMAP_MAX and MINIMAP_SHARE of the pane's area. */
export function minimapSize(content, pane) {
  const limit = Math.min(MINIMAP_MAX.width / content.width, MINIMAP_MAX.height / content.height,
    Math.sqrt((MINIMAP_SHARE * pane.width * pane.height) / (content.width * content.height)));
  let width = Math.max(MINIMAP_MIN, Math.floor(content.width * limit));
  let height = Math.max(MINIMAP_MIN, Math.floor(content.height * limit));
  // the floor of MINIMAP_MIN pixels may pass the share for a very long drawing: shrink the long side
  const budget = MINIMAP_SHARE * pane.width * pane.height;
  if (width * height > budget) {
    if (width > height) width = Math.max(1, Math.floor(budget / height));
    else height = Math.max(1, Math.floor(budget / width));
  }
  return { width, height };
}

/**
 * Where the minimap goes in the pane: {left, top} in pixels, in the first corner (bottom
 * right, bottom left, top right, top left) where it does not cover ``root`` (the root's box
 * in pane pixels, or null); null when it would cover the root in every corner.
 */
export function minimapPlace(pane, size, root = null) {
  const right = pane.width - size.width - MINIMAP_GAP;
  const bottom = pane.height - size.height - MINIMAP_GAP;
  const corners = [[right, bottom], [MINIMAP_GAP, bottom], [right, MINIMAP_GAP], [MINIMAP_GAP, MINIMAP_GAP]];
  for (const [left, top] of corners) {
    const covers = root && left < root.x + root.width && left + size.width > root.x
      && top < root.y + root.height && top + size.height > root.y;
    if (!covers) return { left, top };
  }
  return null;
}

/** The graph's root: its output node, else the last node no op reads; null for an empty graph. */
export function rootId(graph) {
  const nodes = graph.nodes ?? [];
  const output = nodes.findLast((node) => node.kind === "output");
  if (output) return output.id;
  const read = new Set((graph.edges ?? []).map((edge) => edge.source));
  return nodes.findLast((node) => !read.has(node.id))?.id ?? null;
}
