// Extra settings for the JupyterLab extension's build, merged by the Jupyter builder
// (package.json: jupyterlab.webpackConfig). The bundle is large by design (Graphviz's
// WebAssembly is inlined so that nothing is fetched), and @viz-js/viz states its licence
// in its package.json rather than in a file: neither deserves a warning on every build,
// so the build stays quiet unless something is wrong.
module.exports = {
  performance: { hints: false },
  stats: "errors-warnings",
  infrastructureLogging: { level: "error" },
  ignoreWarnings: [/could not find any license file for @viz-js\/viz/],
};
