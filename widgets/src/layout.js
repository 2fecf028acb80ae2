// Graph layout in a Web Worker: `layoutSvg(dot)` resolves to Graphviz's SVG element for
// the DOT source. One worker per page, started from a Blob holding the bundled worker
// (src/layout-worker.js, in base64), so the report, the widgets and the JupyterLab extension
// all lay out offline without blocking the page. The report and the extension carry the
// worker (build.mjs inlines it); the widget modules do not, and get it once from their
// kernel (`provideWorkerSource`). A page whose Content-Security-Policy forbids workers from
// blob: gets an error that says so.

import { WORKER_SOURCE_BASE64 } from "./generated/layout-worker-source.js";

let worker = null;
let starting = null;       // the promise of the running worker, while its script is fetched
let provider = null;       // where the script comes from when this bundle does not hold it
let nextId = 0;
const pending = new Map();

/**
 * Where the worker's script comes from in a bundle that does not hold it: ``load()``
 * resolves to its base64 text (the graph widget asks its kernel). The first provider given is used.
 */
export function provideWorkerSource(load) {
  if (!WORKER_SOURCE_BASE64 && !provider) provider = load;
}

/** The worker's script: the bytes that ``base64`` spells. */
function workerScript(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new Blob([bytes], { type: "text/javascript" });
}

async function started() {
  if (worker) return worker;
  if (!starting) {
    starting = (async () => {
      const base64 = WORKER_SOURCE_BASE64 ?? (provider ? await provider() : null);
      if (!base64) throw new Error("vizgrad's layout engine is not in this page: run the cell to draw the graph");
      start(base64);
      return worker;
    })().finally(() => { starting = null; });
  }
  return starting;
}

function start(base64) {
  const url = URL.createObjectURL(workerScript(base64));
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
export async function layoutText(dot) {
  const running = await started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    running.postMessage({ id, dot });
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
