import assert from "node:assert/strict";
import { test } from "node:test";

import { floats, seriesColumns } from "../src/widgets/model.js";
import {
  base64View, snapshotState, SNAPSHOT_NOTE, widgetView, WIDGET_VIEW_MIME_TYPE,
} from "../src/lab/snapshot-data.js";

const float32Base64 = (values) => Buffer.from(new Float32Array(values).buffer).toString("base64");

// what vizgrad/widgets/snapshot.py writes for a GradFlowView after two steps
const SNAPSHOT = {
  schema: "vizgrad.snapshot", version: 1, vizgrad: "0.1.0", widget: "GradFlowView",
  module: "grad-flow-widget", model_id: "abc123",
  state: {
    title: "", playing: true,
    flow: { layers: ["0.weight", "0.bias"], step: 2, series: { columns: 2, length: 2 } },
  },
  buffers: [
    { path: ["flow", "series", "steps"], data: float32Base64([1, 2]) },
    { path: ["flow", "series", "values"], data: float32Base64([0.5, 0.25, Number.NaN, 4]) },
  ],
};
const MODULES = { "grad-flow-widget": {} };

test("base64 text becomes the DataView of its bytes", () => {
  const view = base64View(Buffer.from([1, 2, 255]).toString("base64"));
  assert.ok(view instanceof DataView);
  assert.deepEqual([view.byteLength, view.getUint8(0), view.getUint8(2)], [3, 1, 255]);
  assert.equal(base64View("").byteLength, 0);
});

test("a snapshot's buffers go back at their paths, as a live widget's binary traits arrive", () => {
  const state = snapshotState(SNAPSHOT, MODULES);
  const { steps, values } = state.flow.series;
  assert.ok(steps instanceof DataView && values instanceof DataView);
  assert.deepEqual([...floats(steps)], [1, 2]);
  assert.deepEqual([...floats(values)].slice(0, 2), [0.5, 0.25]);
  // the widget's own reader sees the two layers' series, the gap as null
  assert.deepEqual(seriesColumns(state.flow.series), [[[1, 0.5], [2, null]], [[1, 0.25], [2, 4]]]);
  assert.deepEqual(state.flow.layers, ["0.weight", "0.bias"]);
  assert.equal(state.playing, false);                          // nothing would step it without a kernel
  // the saved output is never changed
  assert.deepEqual(Object.keys(SNAPSHOT.state.flow.series), ["columns", "length"]);
  assert.equal(SNAPSHOT.state.playing, true);
});

test("a top-level buffer and buffers inside lists are put back too", () => {
  const state = snapshotState({
    schema: "vizgrad.snapshot", module: "grad-flow-widget", state: { items: [{ a: 1 }, null] },
    buffers: [{ path: ["weights"], data: float32Base64([3]) }, { path: ["items", 1], data: float32Base64([7, 8]) }],
  }, MODULES);
  assert.deepEqual([...floats(state.weights)], [3]);
  assert.deepEqual([...floats(state.items[1])], [7, 8]);
  assert.deepEqual(state.items[0], { a: 1 });
  assert.equal("playing" in state, false);
});

test("data that is no snapshot, or of a widget the extension lacks, says why", () => {
  assert.throws(() => snapshotState(null, MODULES), /not a vizgrad widget snapshot/);
  assert.throws(() => snapshotState({ schema: "vizgrad.graph", state: {} }, MODULES), /not a vizgrad widget snapshot/);
  assert.throws(() => snapshotState({ ...SNAPSHOT, module: "future-widget" }, MODULES),
    /'future-widget'.*update vizgrad/);
  assert.throws(() => snapshotState({ ...SNAPSHOT, buffers: [{ path: ["nowhere", "x"], data: "" }] }, MODULES),
    /path \["nowhere","x"\] is not in the state/);
  assert.throws(() => snapshotState({ ...SNAPSHOT, buffers: [{ path: [], data: "" }] }, MODULES), /no path/);
});

test("the widget view beside a snapshot is found only when it names a model", () => {
  const view = { version_major: 2, version_minor: 1, model_id: "abc123" };
  assert.equal(widgetView({ [WIDGET_VIEW_MIME_TYPE]: view }), view);
  assert.equal(widgetView({ [WIDGET_VIEW_MIME_TYPE]: { model_id: "" } }), null);   // a closed widget's view
  assert.equal(widgetView({}), null);
  assert.equal(widgetView(undefined), null);
  assert.equal(SNAPSHOT_NOTE, "snapshot: run the cell to make it live");
});
