// Bundle vizgrad's browser code (package data, written by `make build`):
//
// * the HTML report: src/report.js -> vizgrad/render/static/report.js (one minified IIFE,
//   safe to inline in an HTML page) and report.css;
// * the graph output for front ends without the extension: src/inline/entry.js ->
//   vizgrad/render/static/inline-graph.js (a small minified IIFE that vizgrad/render/inline.py
//   inlines in each output; no globals);
// * the Jupyter widgets: every src/widgets/<name>-widget.js -> vizgrad/widgets/static/
//   <name>-widget.js, a minified ES module exporting anywidget's `render` (and
//   `initialize`), plus src/widgets/widgets.css -> widgets.css, the styles every widget
//   shares. A widget module that imports CSS of its own also gets <name>-widget.css.
//
// Graphviz lays graphs out in a Web Worker: src/layout-worker.js is bundled first (Graphviz's
// WebAssembly comes embedded in @viz-js/viz) and written in base64 into
// src/generated/layout-worker-source.js (build output), which src/layout.js starts from a
// Blob. The JupyterLab extension's build (`jupyter-builder`, run after this script) picks
// the same file up. Everything is inlined: no bundle fetches anything from the network.
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const reportDir = join(here, "..", "vizgrad", "render", "static");
const widgetSources = join(here, "src", "widgets");
const widgetDir = join(here, "..", "vizgrad", "widgets", "static");

/**
 * Inside an inline <script>, "</script" ends the element and "<!--" can stop a later
 * "</script>" from ending it. In the bundles they only occur inside string literals
 * (Graphviz's text tables), where "\x3C" spells the same "<". Widget modules get the
 * same treatment: notebook HTML exports embed their source in a <script> element.
 */
function inlineSafe(code) {
  return code.replace(/<(?=\/script|!--|script)/gi, "\\x3C");
}

const common = {
  bundle: true,
  minify: true,
  target: ["es2020"],
  legalComments: "none",
  // viz-js reads import.meta.url only to locate a .wasm file it never fetches (the binary is embedded)
  define: { "import.meta.url": "undefined" },
  logLevel: "warning",
  write: false,
};

async function writeOutputs(result) {
  for (const file of result.outputFiles) {
    await writeFile(file.path, file.path.endsWith(".js") ? inlineSafe(file.text) : file.text);
  }
}

/** The widget entry points: {"graph-widget": ".../graph-widget.js", ...}. */
async function widgetEntries() {
  let names = [];
  try {
    names = await readdir(widgetSources);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  return Object.fromEntries(names.filter((name) => name.endsWith("-widget.js")).sort()
    .map((name) => [name.slice(0, -".js".length), join(widgetSources, name)]));
}

// the layout worker, as a string the pages start from a Blob
const generatedDir = join(here, "src", "generated");
await mkdir(generatedDir, { recursive: true });
const worker = await esbuild.build({ ...common, entryPoints: [join(here, "src", "layout-worker.js")], format: "iife" });
// (in base64: pure ASCII, which a widget module carries in Jupyter's JSON messages as it is;
// the bundle's own text holds Graphviz's WebAssembly as raw control characters, six bytes
// each once escaped in JSON, and several milliseconds of packing per widget shown)
const workerBase64 = Buffer.from(worker.outputFiles[0].text).toString("base64");
await writeFile(join(generatedDir, "layout-worker-source.js"),
  `// Build output of build.mjs: the bundled src/layout-worker.js, in base64.\nexport const WORKER_SOURCE_BASE64 = "${workerBase64}";\n`);

await mkdir(reportDir, { recursive: true });
await writeOutputs(await esbuild.build({
  ...common,
  entryPoints: { report: join(here, "src", "report.js") },
  outdir: reportDir,
  format: "iife",
}));

await writeOutputs(await esbuild.build({
  ...common,
  entryPoints: { "inline-graph": join(here, "src", "inline", "entry.js") },
  outdir: reportDir,
  format: "iife",
}));

// the widget folder holds build output only: start it afresh so a removed widget leaves nothing behind
await rm(widgetDir, { recursive: true, force: true });
await mkdir(widgetDir, { recursive: true });
// The widget modules leave the layout engine out (each module is a trait of its widget, so a
// notebook that saves widget state would hold a 2 MB copy per GraphView): the graph widget asks
// its kernel for vizgrad/widgets/static/layout-worker.js once per page instead (src/layout.js).
const noEmbeddedWorker = {
  name: "no-embedded-worker",
  setup(build) {
    build.onResolve({ filter: /generated\/layout-worker-source\.js$/ }, () => ({ path: "layout-worker-source", namespace: "stub" }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export const WORKER_SOURCE_BASE64 = null;", loader: "js" }));
  },
};
await writeFile(join(widgetDir, "layout-worker.js"), worker.outputFiles[0].text);
const entries = await widgetEntries();
if (Object.keys(entries).length) {
  await writeOutputs(await esbuild.build({ ...common, entryPoints: entries, outdir: widgetDir, format: "esm",
    plugins: [noEmbeddedWorker] }));
}
await writeOutputs(await esbuild.build({
  ...common,
  entryPoints: { widgets: join(widgetSources, "widgets.css") },
  outdir: widgetDir,
}));
