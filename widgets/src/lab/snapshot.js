// A widget's snapshot (`application/vnd.vizgrad.snapshot+json`) drawn with no kernel: the
// widget's own module renders over a model that lives in the page (pageModel: `send` and
// `save_changes` do nothing), under a note that says it is a snapshot. When the output
// also carries the widget view and its notebook's kernel knows the model, the live widget
// takes the snapshot's place once it has drawn; until then, whenever it cannot, and again
// when the widget is closed, the snapshot shows.

import { Panel, Widget } from "@lumino/widgets";

import { h } from "../dom.js";
import attention from "../widgets/attention-widget.js";
import convExplorer from "../widgets/conv-explorer-widget.js";
import dashboard from "../widgets/dashboard-widget.js";
import gradFlow from "../widgets/grad-flow-widget.js";
import graph from "../widgets/graph-widget.js";
import optimizer from "../widgets/optimizer-widget.js";
import playground from "../widgets/playground-widget.js";
import { pageModel } from "./graph-output.js";
import { SNAPSHOT_NOTE, snapshotState, WIDGET_VIEW_MIME_TYPE, widgetView } from "./snapshot-data.js";

export const SNAPSHOT_CLASS = "jp-vizgrad-snapshot";

/** Each widget's front-end module by the name a snapshot gives (the widget's `_bundle`). */
export const MODULES = {
  "attention-widget": attention,
  "conv-explorer-widget": convExplorer,
  "dashboard-widget": dashboard,
  "grad-flow-widget": gradFlow,
  "graph-widget": graph,
  "optimizer-widget": optimizer,
  "playground-widget": playground,
};

let findNotebook = () => null;

/**
 * How a snapshot finds the notebook panel its DOM node is in (plugin.js gives it, from
 * the notebook tracker: a MIME renderer is not told). Returns the cleanup.
 */
export function setNotebookLookup(lookup) {
  findNotebook = lookup;
  return () => {
    if (findNotebook === lookup) findNotebook = () => null;
  };
}

/** Draw ``snapshot`` into ``el`` under the note; returns the cleanup. A snapshot that cannot be drawn says why. */
export function renderSnapshot(el, snapshot) {
  const note = h("div", { class: "vg-snapshot-note", "data-testid": "vg-snapshot-note" }, SNAPSHOT_NOTE);
  const body = h("div", { class: "vg-snapshot-body" });
  el.append(note, body);
  let cleanup = () => {};
  let closed = false;
  try {
    const state = snapshotState(snapshot, MODULES);
    const drawn = MODULES[snapshot.module].render({ model: pageModel(state), el: body });
    if (typeof drawn === "function") cleanup = drawn;
    else if (drawn && typeof drawn.then === "function") {
      void drawn.then((done) => {
        if (typeof done !== "function") return;
        if (closed) done();
        else cleanup = done;
      });
    }
  } catch (error) {
    body.replaceChildren(h("div", { class: "vg-widget vg-error", role: "alert", "data-testid": "vg-error",
      "data-error": error.message }, `vizgrad could not draw this snapshot: ${error.message}`));
  }
  return () => {
    closed = true;
    cleanup();
    note.remove();
    body.remove();
  };
}

/** JupyterLab's renderer of a snapshot output (see the module's comment). */
export class SnapshotOutput extends Panel {
  constructor({ mimeType }) {
    super();
    this._mimeType = mimeType;
    this._model = null;
    this._view = null;          // the snapshot's widget while it is shown
    this._clear = () => {};
    this._live = null;          // {renderer, observer, shown}: the widget view, hidden until it has drawn
    this.addClass(SNAPSHOT_CLASS);
  }

  async renderModel(model) {
    this._model = model;
    if (this._live?.shown) return;     // the live view follows the kernel itself
    this._drawSnapshot();
    if (this.isAttached) this._tryLive();
  }

  onAfterAttach(message) {
    super.onAfterAttach(message);
    this._tryLive();
  }

  _drawSnapshot() {
    this._clear();
    if (!this._view) {
      this._view = new Widget();
      this.insertWidget(0, this._view);
    }
    this._clear = renderSnapshot(this._view.node, this._model.data[this._mimeType]);
  }

  /** Render the widget view into a hidden holder when the notebook's kernel has its model. */
  _tryLive() {
    const model = this._model;
    const view = widgetView(model?.data);
    if (this._live || !view || !model.trusted) return;
    const notebook = findNotebook(this.node);
    const rendermime = notebook?.content?.rendermime;
    // the widget manager keeps one comm per model on the kernel's connection: none, no model
    // (a kernel started after the notebook was saved knows none of its widgets)
    if (!notebook?.sessionContext?.session?.kernel?.hasComm(view.model_id)) return;
    if (!rendermime?.mimeTypes.includes(WIDGET_VIEW_MIME_TYPE)) return;
    const renderer = rendermime.createRenderer(WIDGET_VIEW_MIME_TYPE);
    renderer.addClass("vg-snapshot-trial");
    const observer = new MutationObserver(() => this._settle());
    observer.observe(renderer.node, { childList: true, subtree: true, characterData: true });
    this._live = { renderer, observer, shown: false };
    this.addWidget(renderer);
    renderer.renderModel(model).then(() => this._settle(), () => this._dropLive());
  }

  /**
   * Swap the live view in once its widget's root is there; drop it when it says it cannot
   * show; and when a shown live view goes (its widget closed), the snapshot comes back.
   */
  _settle() {
    const live = this._live;
    if (!live) return;
    const drawn = live.renderer.node.querySelector(".vg-widget") !== null;
    if (!live.shown && drawn) {
      live.shown = true;
      this._clear();
      this._clear = () => {};
      this._view?.dispose();
      this._view = null;
      live.renderer.removeClass("vg-snapshot-trial");
    } else if (live.shown && !drawn) {
      this._dropLive();
      this._drawSnapshot();
    } else if (!live.shown && live.renderer.node.textContent.includes("Error displaying widget")) {
      this._dropLive();
    }
  }

  _dropLive() {
    if (!this._live) return;
    this._live.observer.disconnect();
    this._live.renderer.dispose();
    this._live = null;
  }

  dispose() {
    if (this.isDisposed) return;
    this._live?.observer.disconnect();
    this._live = null;
    this._clear();
    super.dispose();
  }
}
