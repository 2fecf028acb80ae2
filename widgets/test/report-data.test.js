import assert from "node:assert/strict";
import { test } from "node:test";

import { gradFlowSeries, latestGradBars, lossPoints, readEmbedded, stepText } from "../src/report-data.js";

test("the loss curve comes from loss_curve, else from marks carrying a loss", () => {
  assert.deepEqual(lossPoints({ steps: [0, 5], values: [1.5, 0.5] }), [[0, 1.5], [5, 0.5]]);
  assert.deepEqual(lossPoints({ values: [2, 1] }), [[0, 2], [1, 1]]);
  const steps = [
    { kind: "optimizer_step", optimizer: "SGD", step: 1, params: [] },
    { kind: "mark", name: "train", values: { step: 10, loss: 0.7 } },
    { kind: "mark", name: "epoch", values: { epoch: 1 } },
    { kind: "mark", name: "train", values: { loss: 0.4 } },
  ];
  assert.deepEqual(lossPoints(null, steps), [[10, 0.7], [1, 0.4]]);
  assert.deepEqual(lossPoints(undefined), []);
});

test("gradient flow becomes one series per layer and bars for the last checkpoint", () => {
  const flow = { steps: [0, 10], layers: ["0.weight", "0.bias"], rms: [[0.1, 0.2], [0.01, 1e-9]],
    status: [["ok", "ok"], ["ok", "vanishing"]] };
  assert.deepEqual(gradFlowSeries(flow), [
    { name: "0.weight", points: [[0, 0.1], [10, 0.01]] },
    { name: "0.bias", points: [[0, 0.2], [10, 1e-9]] },
  ]);
  const bars = latestGradBars(flow);
  assert.equal(bars[1].note, "vanishing");
  assert.equal(bars[1].value, 1e-9);
  assert.deepEqual(gradFlowSeries(null), []);
  assert.deepEqual(latestGradBars(null), []);
});

test("the replay status names the step's node", () => {
  const graph = { backward_order: ["n2", "n0"], nodes: [{ id: "n0", kind: "leaf", label: "", name: "w" },
    { id: "n2", kind: "output", label: "Sum", op: "Sum", name: null }] };
  assert.equal(stepText(graph, -1), "before backward (0 of 2 steps)");
  assert.equal(stepText(graph, 0), "backward step 1 of 2: Sum (n2)");
  assert.equal(stepText(graph, 1), "backward step 2 of 2: w (n0)");
  assert.equal(stepText({ backward_order: [], nodes: [] }, -1), "no backward pass recorded");
});

test("the embedded data is read from its script element, with a clear error when absent", () => {
  const doc = { getElementById: (id) => (id === "vizgrad-data" ? { textContent: '{"a": "<\\/script>"}' } : null) };
  assert.deepEqual(readEmbedded(doc), { a: "</script>" });
  assert.throws(() => readEmbedded({ getElementById: () => null }), /vizgrad-data/);
});
