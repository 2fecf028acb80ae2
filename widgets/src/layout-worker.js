// The layout worker: Graphviz (WebAssembly) turns DOT into SVG text off the page's main
// thread, so a large graph never freezes the page. build.mjs bundles this file on its
// own and the pages start it from a Blob (src/layout.js): nothing is fetched.
// Messages in: {id, dot}; out: {id, svg} or {id, error}.

import { instance } from "@viz-js/viz";

const viz = instance();

self.onmessage = async ({ data: { id, dot } }) => {
  try {
    const svg = (await viz).renderString(dot, { format: "svg" });
    self.postMessage({ id, svg });
  } catch (error) {
    self.postMessage({ id, error: String(error?.message ?? error) });
  }
};
