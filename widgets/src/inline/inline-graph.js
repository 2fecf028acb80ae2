// A graph output for front ends without vizgrad's extension (vizgrad/render/inline.py): the
// SVG that Graphviz laid out in the kernel, panned (drag), zoomed (wheel, buttons), with a
// tooltip per node and group and a details panel for the clicked one.
//
// build.mjs bundles this file as a minified IIFE (vizgrad/render/static/inline-graph.js)
// that Python inlines after each output's markup. It defines no globals and never reads
// the page's module loaders (define, module, exports, require): VS Code's and Colab's
// output frames have them. Each copy finds its own output from its <script> element
// (outputs share a page in nbconvert's export) and mounts it once; the data arrives as
// JSON text, and every user string reaches the page through textContent.

import { h, listen } from "../dom.js";
import { describeNode, formatNumber, shapeText } from "../node-info.js";

/** The natural size's scale: the smallest label is 11 px there (inline.py sizes the SVG so). */
const LEGIBLE = 1;
const MIN_ZOOM = 0.05;
const MAX_ZOOM = 4;
const STEP = 1.25;
const PAD = 8;
const STAGE_MAX = 640;
const STAGE_MIN = 120;
const DRAG_PX = 4;
const XLINK = "http://www.w3.org/1999/xlink";

/** The text rows of a drawn item's details: [label, value] pairs under a title. */
export function itemRows(item) {
  if (item.k === "node") {
    const described = describeNode(item);
    const rows = [...described.general];
    const sample = (stats) => `${stats.sample.map(formatNumber).join(", ")}${stats.more ? ", …" : ""}`;
    if (Array.isArray(item.value?.sample) && (item.shape ?? []).length) rows.push(["values", sample(item.value)]);
    rows.push(...described.value.map(([label, text]) => [`value ${label}`, text]));
    if (described.grad.length) {
      if (Array.isArray(item.grad?.sample)) rows.push(["grad values", sample(item.grad)]);
      rows.push(...described.grad.map(([label, text]) => [`grad ${label}`, text]));
    } else rows.push(["grad", item.grad_note || (item.kind === "constant" ? "none (a constant)" : "none recorded")]);
    if (described.grad.length && described.gradNote) rows.push(["grad note", described.gradNote]);
    if (item.uses > 1) rows.push(["used", `${item.uses}×`]);
    if (described.source) rows.push(["source", described.source]);
    return { title: described.title, rows };
  }
  if (item.k === "group") {
    const rows = [["kind", item.type && item.type !== item.kind ? `${item.kind} (${item.type})` : item.kind], ["name", item.name]];
    if (item.blocks > 1) rows.push(["blocks", `${item.blocks} identical: ${item.name} … ${item.last}`]);
    rows.push(["holds", `${item.nodes} node${item.nodes === 1 ? "" : "s"}, ${item.ops} op${item.ops === 1 ? "" : "s"}`
      + (item.children ? `, ${item.children} group${item.children === 1 ? "" : "s"}` : "")]);
    if (item.top.length) rows.push(["ops", item.top.map(([op, count]) => `${op} ×${count}`).join(", ")]);
    if (item.params.length) {
      rows.push(["parameters", item.params.map((param) => `${param.name} ${param.shape}`).join(", ")
        + (item.more_params ? `, +${item.more_params} more` : "")]);
    }
    return { title: item.blocks > 1 ? `${item.title} ×${item.blocks}` : item.title, rows };
  }
  return { title: item.title, rows: [] };
}

/** A drawn item's one-line tooltip. */
export function itemTip(item) {
  if (item.k === "node") {
    const title = item.name || item.label || item.op || item.kind;
    return [title, item.op && item.op !== title ? item.op : "", shapeText(item.shape), item.dtype].filter(Boolean).join(" · ");
  }
  if (item.k === "group") return `${itemRows(item).title}: ${item.nodes} nodes, ${item.ops} ops (click for details)`;
  return item.title;
}

/**
 * Make the output ``root`` interactive (once); returns its cleanup.
 * @param {HTMLElement} root the output's element (class vg-inline)
 */
export function mountInline(root) {
  const stage = root.querySelector(".vg-inline-stage");
  const svg = stage?.querySelector("svg.vg-drawing");
  const dataScript = root.querySelector("script.vg-inline-data");
  if (!svg || !dataScript || root.hasAttribute("data-vg-ready")) return () => {};
  const data = JSON.parse(dataScript.textContent);
  const items = data.items ?? {};
  const info = root.querySelector(".vg-inline-info");
  const tip = root.querySelector(".vg-inline-tip");
  const tools = root.querySelector(".vg-inline-tools");
  const width = svg.width.baseVal.value;
  const height = svg.height.baseVal.value;
  for (const link of svg.querySelectorAll("a")) { // the script's tooltip replaces Graphviz's
    link.removeAttributeNS(XLINK, "title");
    link.removeAttribute("title");
  }
  root.classList.add("vg-live");
  root.setAttribute("data-vg-ready", "true");
  tools.hidden = false;

  let zoom = LEGIBLE;
  let x = 0;
  let y = 0;
  let drag = null;
  let dragged = false;
  let selected = null;
  let moved = false; // panned or zoomed by the reader since the last fit

  const paint = () => {
    svg.style.transform = `translate(${x.toFixed(1)}px, ${y.toFixed(1)}px) scale(${zoom.toFixed(4)})`;
    root.dataset.zoom = zoom.toFixed(3);
  };
  /** Along one axis: centred when the drawing fits, else ``at`` (a drawing coordinate) at ``share`` of the pane, kept inside. */
  const place = (pane, size, at, share) => {
    if (size * zoom + 2 * PAD <= pane) return (pane - size * zoom) / 2;
    return Math.min(PAD, Math.max(pane - PAD - size * zoom, pane * share - at * zoom));
  };
  const rootBox = () => {
    const element = data.root ? [...svg.querySelectorAll("g[data-vg-id]")].find((g) => g.dataset.vgId === data.root) : null;
    if (!element) return { x: width / 2, y: height };
    const box = element.getBoundingClientRect();
    const origin = svg.getBoundingClientRect();
    return { x: (box.left + box.width / 2 - origin.left) / zoom, y: (box.top + box.height / 2 - origin.top) / zoom };
  };
  /** The whole drawing when it fits at a legible size, else the part around the root at that size. */
  const fit = () => {
    const pane = { width: stage.clientWidth, height: stage.clientHeight };
    const at = rootBox();
    zoom = LEGIBLE; // never blown up past its natural size, never below a legible one
    x = place(pane.width, width, at.x, 0.5);
    y = place(pane.height, height, at.y, 0.7);
    paint();
  };
  const zoomAt = (factor, px, py) => {
    moved = true;
    const next = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom * factor));
    x = px - ((px - x) * next) / zoom;
    y = py - ((py - y) * next) / zoom;
    zoom = next;
    paint();
  };
  const itemAt = (target) => {
    const element = target instanceof Element ? target.closest("g[data-vg-id]") : null;
    return element && svg.contains(element) && items[element.dataset.vgId] ? element : null;
  };
  const select = (element) => {
    selected?.classList.remove("vg-selected");
    selected = element;
    info.hidden = !element;
    if (!element) {
      delete root.dataset.selected;
      return;
    }
    element.classList.add("vg-selected");
    root.dataset.selected = element.dataset.vgId;
    const { title, rows } = itemRows(items[element.dataset.vgId]);
    info.replaceChildren(h("button", { type: "button", class: "vg-inline-close", "aria-label": "close the details", title: "close" }, "×"),
      h("h4", {}, title), h("dl", {}, rows.flatMap(([label, text]) => [h("dt", {}, label), h("dd", {}, text)])));
  };

  stage.style.height = `${Math.round(Math.max(STAGE_MIN, Math.min(STAGE_MAX, height * LEGIBLE + 2 * PAD)))}px`;
  fit();
  // refitted while the reader has not moved it: the output may be laid out after this script ran, or resized
  const resizes = typeof ResizeObserver === "function" ? new ResizeObserver(() => { if (!moved) fit(); }) : null;
  resizes?.observe(stage);

  const removers = [
    listen(stage, "wheel", (event) => {
      event.preventDefault();
      const box = stage.getBoundingClientRect();
      const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
      zoomAt(Math.exp(-delta * 0.002), event.clientX - box.left, event.clientY - box.top);
    }, { passive: false }),
    listen(stage, "pointerdown", (event) => {
      if (event.button !== 0) return;
      drag = { id: event.pointerId, startX: event.clientX, startY: event.clientY, x, y };
      dragged = false;
    }),
    listen(stage, "pointermove", (event) => {
      if (drag && drag.id === event.pointerId) {
        const dx = event.clientX - drag.startX;
        const dy = event.clientY - drag.startY;
        if (!dragged && Math.hypot(dx, dy) < DRAG_PX) return;
        if (!dragged) { // captured only once it is a drag: a click still reaches the node under it
          dragged = true;
          stage.setPointerCapture(event.pointerId);
          stage.classList.add("vg-dragging");
          tip.hidden = true;
        }
        moved = true;
        x = drag.x + dx;
        y = drag.y + dy;
        paint();
        return;
      }
      const element = itemAt(event.target);
      tip.hidden = !element;
      if (!element) return;
      tip.textContent = itemTip(items[element.dataset.vgId]);
      const box = root.getBoundingClientRect();
      tip.style.left = `${Math.min(event.clientX - box.left + 14, Math.max(0, box.width - 330))}px`;
      tip.style.top = `${event.clientY - box.top + 16}px`;
    }),
    listen(stage, "pointerleave", () => { tip.hidden = true; }),
    ...["pointerup", "pointercancel"].map((type) => listen(stage, type, (event) => {
      if (!drag || drag.id !== event.pointerId) return;
      if (dragged) stage.releasePointerCapture(event.pointerId);
      stage.classList.remove("vg-dragging");
      drag = null;
    })),
    listen(stage, "click", (event) => {
      if (dragged) { // the end of a drag, not a click
        dragged = false;
        return;
      }
      select(itemAt(event.target));
    }),
    listen(info, "click", (event) => {
      if (event.target instanceof Element && event.target.closest(".vg-inline-close")) select(null);
    }),
    listen(tools, "click", (event) => {
      const button = event.target instanceof Element ? event.target.closest("button[data-zoom]") : null;
      if (!button) return;
      if (button.dataset.zoom === "fit") {
        moved = false;
        fit();
      }
      else zoomAt(button.dataset.zoom === "in" ? STEP : 1 / STEP, stage.clientWidth / 2, stage.clientHeight / 2);
    }),
  ];
  return () => {
    resizes?.disconnect();
    removers.forEach((remove) => remove());
    select(null);
    root.classList.remove("vg-live");
    root.removeAttribute("data-vg-ready");
    svg.style.transform = "";
    stage.style.height = "";
    tools.hidden = true;
  };
}

/** Mount the output this script belongs to; where that is unknown, every output not yet mounted. */
export function start(doc = document) {
  const own = doc.currentScript?.closest?.(".vg-inline[data-vg-inline]");
  const roots = own ? [own] : [...doc.querySelectorAll(".vg-inline[data-vg-inline]:not([data-vg-ready])")];
  return roots.map(mountInline);
}
