// Graph outputs in a notebook's model: the latest one, and a follower that reports each
// new one as cells run. Works on JupyterLab's models (a notebook model's `cells`, a code
// cell's `outputs`: lists with `length`, `get(i)` and a `changed` signal) and on plain
// stand-ins in the unit tests.

/** The MIME type of a graph output (vizgrad.render.notebook.MIME_TYPE). */
export const MIME_TYPE = "application/vnd.vizgrad.graph+json";

/** ``{graph, metadata}`` of an output model holding a vizgrad graph, else null. */
export function graphOf(output) {
  const graph = output?.data?.[MIME_TYPE];
  return graph ? { graph, metadata: output.metadata?.[MIME_TYPE] ?? {} } : null;
}

function* items(list) {
  for (let index = 0; index < (list?.length ?? 0); index += 1) yield list.get(index);
}

/** The last graph output of ``notebookModel`` in document order, or null. */
export function latestGraphOutput(notebookModel) {
  let latest = null;
  for (const cell of items(notebookModel?.cells)) {
    for (const output of items(cell.outputs)) latest = graphOf(output) ?? latest;
  }
  return latest;
}

/**
 * Call ``onGraph({graph, metadata})`` whenever a cell of ``notebookModel`` gets a graph
 * output (a run, a re-run, an updated display), also in cells added later. Returns the
 * cleanup that disconnects everything.
 */
export function followGraphOutputs(notebookModel, onGraph) {
  const watched = new Set();
  const onOutputs = (_, change) => {
    if (change.type !== "add" && change.type !== "set") return;
    const found = change.newValues.map(graphOf).filter(Boolean).at(-1);
    if (found) onGraph(found);
  };
  const watchCells = () => {
    for (const outputs of watched) outputs.changed.disconnect(onOutputs);
    watched.clear();
    for (const cell of items(notebookModel.cells)) {
      if (!cell.outputs) continue; // markdown and raw cells
      cell.outputs.changed.connect(onOutputs);
      watched.add(cell.outputs);
    }
  };
  watchCells();
  notebookModel.cells.changed.connect(watchCells);
  return () => {
    notebookModel.cells.changed.disconnect(watchCells);
    for (const outputs of watched) outputs.changed.disconnect(onOutputs);
    watched.clear();
  };
}
