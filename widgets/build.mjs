// Bundle the HTML report's script and styles into vizgrad/render/static/ (package data):
// one minified IIFE (Graphviz's WebAssembly comes embedded in @viz-js/viz) and one CSS
// file, both safe to inline in an HTML page.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "vizgrad", "render", "static");

/**
 * Inside an inline <script>, "</script" ends the element and "<!--" can stop a later
 * "</script>" from ending it. In the bundle they only occur inside string literals
 * (Graphviz's text tables), where "\x3C" spells the same "<".
 */
function inlineSafe(code) {
  return code.replace(/<(?=\/script|!--|script)/gi, "\\x3C");
}

await mkdir(outdir, { recursive: true });
const result = await esbuild.build({
  entryPoints: { report: join(here, "src", "report.js") },
  outdir,
  bundle: true,
  format: "iife",
  minify: true,
  target: ["es2020"],
  legalComments: "none",
  // viz-js reads import.meta.url only to locate a .wasm file it never fetches (the binary is embedded)
  define: { "import.meta.url": "undefined" },
  logLevel: "warning",
  write: false,
});
for (const file of result.outputFiles) {
  await writeFile(file.path, file.path.endsWith(".js") ? inlineSafe(file.text) : file.text);
}
