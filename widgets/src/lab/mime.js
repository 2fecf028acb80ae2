// JupyterLab's MIME renderers: `application/vnd.vizgrad.graph+json`, a graph output drawn
// interactively from the data saved in the notebook with no kernel running, and
// `application/vnd.vizgrad.snapshot+json`, a widget's last state (snapshot.js), ranked
// above the widget view (whose renderer, ipywidgets' manager, registers at -10 in each
// notebook) so that a saved widget never says "model not found". Both only ever write text
// into the page (and sanitise Graphviz's SVG), so they are safe for untrusted notebooks.

import { Widget } from "@lumino/widgets";

import { renderGraphOutput } from "./graph-output.js";
import { MIME_TYPE } from "./notebook-graphs.js";
import { SNAPSHOT_MIME_TYPE } from "./snapshot-data.js";
import { SnapshotOutput } from "./snapshot.js";

export const OUTPUT_CLASS = "jp-vizgrad-graph";
/** Ahead of the widget view's renderer (rank -10): a lower rank is preferred. */
export const SNAPSHOT_RANK = -20;

class GraphOutput extends Widget {
  constructor({ mimeType }) {
    super();
    this._mimeType = mimeType;
    this._clear = () => {};
    this.addClass(OUTPUT_CLASS);
  }

  async renderModel(model) {
    this._clear();
    this.node.replaceChildren();
    this._clear = renderGraphOutput(this.node, model.data[this._mimeType]);
  }

  dispose() {
    if (this.isDisposed) return;
    this._clear();
    super.dispose();
  }
}

const graphOutput = {
  id: "vizgrad:graph-output",
  description: "Draws vizgrad graph outputs (pan, zoom, node details, backward replay) without a kernel.",
  rendererFactory: {
    safe: true,
    mimeTypes: [MIME_TYPE],
    defaultRank: 0,
    createRenderer: (options) => new GraphOutput(options),
  },
  rank: 0,
  dataType: "json",
};

const snapshotOutput = {
  id: "vizgrad:widget-snapshot",
  description: "Draws a vizgrad widget's saved snapshot without a kernel, and the live widget when the kernel has it.",
  rendererFactory: {
    safe: true,
    mimeTypes: [SNAPSHOT_MIME_TYPE],
    defaultRank: SNAPSHOT_RANK,
    createRenderer: (options) => new SnapshotOutput(options),
  },
  rank: SNAPSHOT_RANK,
  dataType: "json",
};

export default [graphOutput, snapshotOutput];
