// JupyterLab's MIME renderer for `application/vnd.vizgrad.graph+json`: a graph output is
// drawn interactively from the data saved in the notebook, with no kernel running. It
// only ever writes text into the page (and sanitises Graphviz's SVG), so it is safe for
// untrusted notebooks.

import { Widget } from "@lumino/widgets";

import { renderGraphOutput } from "./graph-output.js";
import { MIME_TYPE } from "./notebook-graphs.js";

export const OUTPUT_CLASS = "jp-vizgrad-graph";

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

export default {
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
