// The report's data, read and put into the shapes the charts draw. Pure functions.

/** The JSON that the page embeds in <script type="application/json" id="vizgrad-data">. */
export function readEmbedded(doc, id = "vizgrad-data") {
  const element = doc.getElementById(id);
  if (!element) throw new Error(`this page has no <script id="${id}"> with vizgrad's data`);
  return JSON.parse(element.textContent);
}

/**
 * The loss curve as [step, loss] points: ``extra.loss_curve`` ({steps, values}) when
 * given, else the marks in the graph's step history that carry a ``loss`` value.
 */
export function lossPoints(lossCurve, steps = []) {
  if (lossCurve && Array.isArray(lossCurve.values)) {
    const xs = Array.isArray(lossCurve.steps) ? lossCurve.steps : lossCurve.values.map((_, i) => i);
    return lossCurve.values.map((value, i) => [xs[i], value]);
  }
  const marks = steps.filter((entry) => entry.kind === "mark" && typeof entry.values?.loss === "number");
  return marks.map((entry, i) => [typeof entry.values.step === "number" ? entry.values.step : i, entry.values.loss]);
}

/** One [step, rms] series per layer from ``{steps, layers, rms: [checkpoint][layer]}``. */
export function gradFlowSeries(gradFlow) {
  if (!gradFlow || !Array.isArray(gradFlow.layers)) return [];
  return gradFlow.layers.map((name, layer) => ({
    name,
    points: gradFlow.steps.map((step, checkpoint) => [step, gradFlow.rms[checkpoint][layer]]),
  }));
}

export const STATUS_COLOURS = { ok: "#4c72b0", vanishing: "#74add1", exploding: "#d62728", "no grad": "#bdbdbd" };

/** Bars for the latest checkpoint of the gradient flow, coloured by status. */
export function latestGradBars(gradFlow) {
  if (!gradFlow || !gradFlow.rms?.length) return [];
  const last = gradFlow.rms.length - 1;
  return gradFlow.layers.map((label, layer) => {
    const status = gradFlow.status?.[last]?.[layer] ?? "ok";
    return { label, value: gradFlow.rms[last][layer], colour: STATUS_COLOURS[status] ?? STATUS_COLOURS.ok, note: status };
  });
}

/** "backward step 3 of 13: Linear (n7)" and the like, for the replay's status line. */
export function stepText(graph, activeStep) {
  const total = graph.backward_order.length;
  if (total === 0) return "no backward pass recorded";
  if (activeStep < 0) return `before backward (0 of ${total} steps)`;
  const id = graph.backward_order[activeStep];
  const node = graph.nodes.find((candidate) => candidate.id === id);
  const name = node ? node.name || node.label || node.op || node.kind : id;
  return `backward step ${activeStep + 1} of ${total}: ${name} (${id})`;
}
