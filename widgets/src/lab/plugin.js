// The JupyterLab plugin: the command "Open in vizgrad panel" (on a graph output's context
// menu and in the command palette) and the side panel it opens. From a graph output, the
// panel shows that output; from the palette, it follows the active notebook's latest one.
// An open panel comes back when the page is reloaded: the layout restorer runs the command
// again (with ``restore``), and once the layout is back the panel follows the active notebook.
// It also tells widget snapshots (snapshot.js) which notebook an output is in, so that they
// can show the live widget when that notebook's kernel has it.

import { ILayoutRestorer } from "@jupyterlab/application";
import { ICommandPalette, WidgetTracker } from "@jupyterlab/apputils";
import { INotebookTracker } from "@jupyterlab/notebook";

import { OUTPUT_CLASS } from "./mime.js";
import { graphOf, latestGraphOutput } from "./notebook-graphs.js";
import { GraphPanel, PANEL_ID } from "./panel.js";
import { setNotebookLookup } from "./snapshot.js";

export const OPEN_COMMAND = "vizgrad:open-in-panel";

/** The notebook, and the graph output model, that ``node`` (inside an output) belongs to. */
function outputAt(tracker, node) {
  const notebook = tracker.find((panel) => panel.node.contains(node));
  const cell = notebook?.content.widgets.find((candidate) => candidate.node.contains(node));
  const area = cell?.outputArea;
  if (!area) return null;
  const index = area.widgets.findIndex((child) => child.node.contains(node));
  const found = index >= 0 ? graphOf(area.model.get(index)) : null;
  return found ? { notebook, ...found } : null;
}

export default {
  id: "vizgrad:graph-panel",
  description: "A side panel that keeps a vizgrad graph in view and follows a notebook's latest graph output.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ILayoutRestorer],
  activate(app, tracker, palette, restorer) {
    setNotebookLookup((node) => tracker.find((notebook) => notebook.node.contains(node)) ?? null);
    const panels = new WidgetTracker({ namespace: PANEL_ID });   // what the restorer remembers
    let panel = null;
    const openPanel = ({ activate = true } = {}) => {
      if (!panel || panel.isDisposed) {
        panel = new GraphPanel();
        app.shell.add(panel, "right", { rank: 700 });
        restorer?.add(panel, PANEL_ID);
        void panels.add(panel);
      }
      if (activate) {
        app.shell.activateById(panel.id);
        panel.widen();
      }
      return panel;
    };
    const clickedOutput = (args) => {
      if (args.from !== "context-menu") return null;
      const node = app.contextMenuHitTest((candidate) => candidate.classList?.contains(OUTPUT_CLASS));
      return node ? outputAt(tracker, node) : null;
    };

    app.commands.addCommand(OPEN_COMMAND, {
      label: "Open in vizgrad panel",
      caption: "Keep this vizgrad graph in view in a side panel",
      isEnabled: (args) => Boolean(clickedOutput(args) ?? latestGraphOutput(tracker.currentWidget?.content.model)),
      execute: (args) => {
        const clicked = clickedOutput(args);
        if (clicked) {
          openPanel().showGraph(clicked.graph, clicked.metadata, clicked.notebook);
        } else if (args.restore) {   // the layout restorer puts it where it was, open or not
          const restored = openPanel({ activate: false });
          void app.restored.then(async () => {   // the layout is back: follow the notebook it made active
            const notebook = tracker.currentWidget;
            await notebook?.context.ready;      // (its cells, outputs included, are loaded)
            if (notebook && !notebook.isDisposed && !restored.isDisposed) restored.pin(notebook);
          });
        } else if (tracker.currentWidget) {
          openPanel().pin(tracker.currentWidget);
        }
      },
    });
    restorer?.restore(panels, { command: OPEN_COMMAND, args: () => ({ restore: true }), name: () => PANEL_ID });
    app.contextMenu.addItem({ command: OPEN_COMMAND, selector: `.${OUTPUT_CLASS}`, args: { from: "context-menu" }, rank: 0 });
    palette?.addItem({ command: OPEN_COMMAND, category: "vizgrad" });
  },
};
