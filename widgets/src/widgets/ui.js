// Small DOM pieces the widgets share: icon buttons, sections, a status line, an
// error box. Every function that attaches a listener returns its cleanup.

import { h, listen, s } from "../dom.js";

const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  previous: "M12 2v12L4 8z",
  play: "M4 2v12l10-6z",
  pause: "M3 2h4v12H3zM9 2h4v12H9z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
};

export function icon(name) {
  return s("svg", { viewBox: "0 0 16 16", width: 14, height: 14, "aria-hidden": "true" }, s("path", { d: ICONS[name] }));
}

/** A toolbar button; returns {element, remove}. */
export function button(label, content, onClick, testid) {
  const element = h("button", { type: "button", class: "vg-button", title: label, "aria-label": label, "data-testid": testid }, content);
  return { element, remove: listen(element, "click", onClick) };
}

/** A titled block of a side panel; ``action`` (an element) sits at the title's right. */
export function section(title, testid, children = [], action = null) {
  const heading = action ? h("div", { class: "vg-section-head" }, [h("h3", {}, title), action]) : h("h3", {}, title);
  return h("section", { class: "vg-side-section", "data-testid": testid }, [heading, ...[children].flat()]);
}

/** Show ``error`` in ``place`` and on ``root.dataset.error`` (tests read it). */
export function showError(root, place, error) {
  root.dataset.error = String(error?.message ?? error);
  place.replaceChildren(h("div", { class: "vg-error", role: "alert", "data-testid": "vg-error" },
    `vizgrad could not draw this view: ${root.dataset.error}`));
}

/** A legend row of coloured swatches. */
export function legend(entries) {
  return h("div", { class: "vg-legend-row" }, entries.map(({ name, colour }) =>
    h("span", { class: "vg-legend-item" }, [h("span", { class: "vg-swatch", style: `background:${colour}` }), name])));
}
