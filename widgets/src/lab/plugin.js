// The JupyterLab plugin: the command "Open in vizgrad panel" (on a graph output's context
// menu and in the command palette) and the side panel it opens. From a graph output, the
// panel shows that output; from the palette, it follows the active notebook's latest one.

import { ICommandPalette } from "@jupyterlab/apputils";
import { INotebookTracker } from "@jupyterlab/notebook";

import { OUTPUT_CLASS } from "./mime.js";
import { graphOf, latestGraphOutput } from "./notebook-graphs.js";
import { GraphPanel } from "./panel.js";

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
  optional: [ICommandPalette],
  activate(app, tracker, palette) {
    let panel = null;
    const openPanel = () => {
      if (!panel || panel.isDisposed) {
        panel = new GraphPanel();
        app.shell.add(panel, "right", { rank: 700 });
      }
      app.shell.activateById(panel.id);
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
        } else if (tracker.currentWidget) {
          openPanel().pin(tracker.currentWidget);
        }
      },
    });
    app.contextMenu.addItem({ command: OPEN_COMMAND, selector: `.${OUTPUT_CLASS}`, args: { from: "context-menu" }, rank: 0 });
    palette?.addItem({ command: OPEN_COMMAND, category: "vizgrad" });
  },
};
