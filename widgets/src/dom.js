// Element builders. Text always goes in through textContent, so user strings
// (tensor and module names) can never become markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return element;
}

/** An HTML element: h("div", {class: "x"}, ["text", child]). */
export function h(tag, attributes = {}, children = []) {
  return fill(document.createElement(tag), attributes, children);
}

/** An SVG element, same signature as h. */
export function s(tag, attributes = {}, children = []) {
  return fill(document.createElementNS(SVG_NS, tag), attributes, children);
}

/** Add a listener; returns the function that removes it. */
export function listen(target, type, handler, options) {
  target.addEventListener(type, handler, options);
  return () => target.removeEventListener(type, handler, options);
}
