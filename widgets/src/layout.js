// Graph layout in a Web Worker: `layoutSvg(dot)` resolves to Graphviz's SVG element for
// the DOT source. One worker per page, started from a Blob holding the bundled worker
// (src/layout-worker.js, inlined in base64 by build.mjs), so the report, the widgets and the
// JupyterLab extension all lay out offline without blocking the page. A page whose
// Content-Security-Policy forbids workers from blob: gets an error that says so.

import { WORKER_SOURCE_BASE64 } from "./generated/layout-worker-source.js";

let worker = null;
let nextId = 0;
const pending = new Map();

/** The worker's script: the bytes that WORKER_SOURCE_BASE64 spells. */
function workerScript() {
  const text = atob(WORKER_SOURCE_BASE64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new Blob([bytes], { type: "text/javascript" });
}

function start() {
  const url = URL.createObjectURL(workerScript());
  try {
    worker = new Worker(url);
  } catch (error) {
    throw new Error(`this page does not allow vizgrad's layout worker (a Blob worker): ${error.message}`);
  } finally {
    URL.revokeObjectURL(url);
  }
  worker.onmessage = ({ data }) => {
    const request = pending.get(data.id);
    if (!request) return;
    pending.delete(data.id);
    if (data.error) request.reject(new Error(`Graphviz could not lay this graph out: ${data.error}`));
    else request.resolve(data.svg);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    const error = new Error(`the layout worker failed: ${event.message || "it could not start"}`);
    for (const request of pending.values()) request.reject(error);
    pending.clear();
    worker = null;
  };
}

/** Graphviz's SVG text for ``dot``, laid out in the page's worker. */
export function layoutText(dot) {
  if (!worker) start();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, dot });
  });
}

/** Graphviz's SVG for ``dot`` as an element of this document. */
export async function layoutSvg(dot) {
  const text = await layoutText(dot);
  const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (svg.nodeName !== "svg") throw new Error("Graphviz returned no SVG");
  return document.importNode(svg, true);
}
