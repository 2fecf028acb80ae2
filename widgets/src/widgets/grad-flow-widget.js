// The GradFlowView widget (vizgrad/widgets/grad_flow.py): gradient RMS per layer over
// training steps and the current step's bars, vanishing/exploding layers flagged.
// Redrawn at most once per animation frame; render() returns its cleanup.

import { h } from "../dom.js";
import { createFrameScheduler } from "./frame.js";
import { figureWidth, followWidth, gradFlowPanels, listenHeatmapReadout } from "./grad-flow.js";
import { onChange } from "./model.js";
import { showError } from "./ui.js";

function render({ model, el }) {
  const root = h("div", { class: "vg-widget vg-themed vg-grad-flow-widget", "data-testid": "vg-grad-flow-widget" });
  const heading = h("h3", {});
  const body = h("div", { class: "vg-panels" });
  const readout = h("div", { class: "vg-readout", "data-testid": "vg-grad-flow-readout", "aria-live": "polite" });
  root.append(heading, readout, body);
  const stopReadout = listenHeatmapReadout(body, readout, () => model.get("flow"));
  el.append(root);
  const scheduler = createFrameScheduler();

  function draw() {
    try {
      const flow = model.get("flow");
      heading.textContent = model.get("title");
      heading.hidden = !model.get("title");
      body.replaceChildren(...gradFlowPanels(flow, { width: figureWidth(root) }));
      root.dataset.step = String(flow?.step ?? "");
      root.dataset.ready = "true";
    } catch (error) {
      showError(root, body, error);
    }
  }

  const stop = onChange(model, ["flow", "title"], () => scheduler.schedule("draw", draw));
  const stopResize = followWidth(root, () => scheduler.schedule("draw", draw));
  draw();
  return () => {
    stopResize();
    stopReadout();
    stop();
    scheduler.cancel();
    root.remove();
  };
}

export default { render };
