// The vizgrad side panel: one graph output kept in view beside the notebook. Pinned to
// a notebook, it follows that notebook's latest graph output as cells run. It opens at
// least PANEL_MIN_WIDTH wide (JupyterLab's side area is narrower by default) and its edge
// drags to resize it, as any side area's.

import { Widget } from "@lumino/widgets";

import { h, listen } from "../dom.js";
import { renderGraphOutput } from "./graph-output.js";
import { followGraphOutputs, latestGraphOutput } from "./notebook-graphs.js";
import { PANEL_MIN_WIDTH, widenedSizes } from "./panel-size.js";

export const PANEL_ID = "vizgrad-graph-panel";

export class GraphPanel extends Widget {
  constructor() {
    super();
    this.id = PANEL_ID;
    this.title.label = "vizgrad";
    this.title.caption = "vizgrad graph";
    this.title.closable = true;
    this.addClass("vg-lab-panel");
    this.node.dataset.testid = "vg-lab-panel";

    this._notebook = null;      // the NotebookPanel the shown graph came from
    this._unfollow = null;      // set while pinned
    this._clearGraph = () => {};
    this._source = h("span", { class: "vg-lab-panel-source", "data-testid": "vg-lab-panel-source" });
    this._pin = h("button", { type: "button", class: "vg-button vg-lab-panel-pin", "aria-pressed": "false",
      title: "follow the notebook's latest graph output", "data-testid": "vg-lab-panel-pin" }, "Follow latest");
    this._body = h("div", { class: "vg-lab-panel-body", "data-testid": "vg-lab-panel-body" });
    this.node.append(h("div", { class: "vg-lab-panel-head" }, [this._source, this._pin]), this._body);
    this._removePinListener = listen(this._pin, "click", () => {
      if (this.pinned) this.unpin();
      else if (this._notebook) this.pin(this._notebook);
    });
    this._showEmpty();
  }

  /**
   * Make the side area that holds the panel at least PANEL_MIN_WIDTH wide, through the
   * split panel (Lumino's) around it; narrower only when the window is.
   */
  widen() {
    let child = this;
    for (let parent = this.parent; parent; child = parent, parent = parent.parent) {
      if (typeof parent.setRelativeSizes !== "function" || parent.orientation !== "horizontal") continue;
      const sizes = parent.relativeSizes();
      const index = parent.widgets.indexOf(child);
      // the pixels the sizes share: the split's width less its handles
      const handles = parent.handles.filter((handle) => !handle.classList.contains("lm-mod-hidden")).length;
      const total = parent.node.clientWidth - handles * parent.spacing;
      // 2 px more: the side area's border, and Lumino rounds each size down to whole pixels
      const next = widenedSizes(sizes, index, total, PANEL_MIN_WIDTH + 2);
      if (next !== sizes) parent.setRelativeSizes(next);
      return;
    }
  }

  /** True while the panel follows a notebook's latest graph output. */
  get pinned() {
    return this._unfollow !== null;
  }

  /** Show ``graph`` (with its output ``metadata``) from the notebook ``notebook``. */
  showGraph(graph, metadata, notebook) {
    if (notebook !== this._notebook) this.unpin();
    this._notebook = notebook;
    this._clearGraph();
    this._body.replaceChildren();
    this._clearGraph = renderGraphOutput(this._body, graph); // laid out from the graph alone
    this._describe();
  }

  /** Follow ``notebook``: show its latest graph output now and each new one as it comes. */
  pin(notebook) {
    this.unpin();
    this._notebook = notebook;
    const latest = latestGraphOutput(notebook.content.model);
    if (latest) this.showGraph(latest.graph, latest.metadata, notebook);
    else this._showEmpty();
    this._unfollow = followGraphOutputs(notebook.content.model, ({ graph, metadata }) => this.showGraph(graph, metadata, notebook));
    const onClosed = () => this.unpin();
    notebook.disposed.connect(onClosed);
    const stopFollowing = this._unfollow;
    this._unfollow = () => {
      stopFollowing();
      notebook.disposed.disconnect(onClosed);
    };
    this._describe();
  }

  unpin() {
    if (!this._unfollow) return;
    const stop = this._unfollow;
    this._unfollow = null;
    stop();
    this._describe();
  }

  dispose() {
    if (this.isDisposed) return;
    this.unpin();
    this._clearGraph();
    this._removePinListener();
    super.dispose();
  }

  _showEmpty() {
    this._clearGraph();
    this._clearGraph = () => {};
    this._body.replaceChildren(h("p", { class: "vg-lab-panel-empty" },
      "No vizgrad graph yet: display one in a notebook (vizgrad.show(...)), then right-click it and choose “Open in vizgrad panel”."));
    this._describe();
  }

  _describe() {
    const name = this._notebook && !this._notebook.isDisposed ? this._notebook.title.label : null;
    this._source.textContent = name ? `${this.pinned ? "following" : "from"} ${name}` : "";
    this._pin.setAttribute("aria-pressed", String(this.pinned));
    this._pin.disabled = !name;
    this.node.dataset.pinned = String(this.pinned);
  }
}
