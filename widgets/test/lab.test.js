import assert from "node:assert/strict";
import { test } from "node:test";

import { graphState, pageModel, statusText } from "../src/lab/graph-output.js";
import { followGraphOutputs, graphOf, latestGraphOutput, MIME_TYPE } from "../src/lab/notebook-graphs.js";
import { PANEL_MIN_WIDTH, widenedSizes } from "../src/lab/panel-size.js";

const GRAPH = {
  schema: "vizgrad.graph", version: 1, truncated: false, steps: [],
  nodes: [
    { id: "n0", kind: "leaf", op: null, grad: { nan_count: 0, inf_count: 0 } },
    { id: "n1", kind: "op", op: "Mul", grad: { nan_count: 1, inf_count: 0 } },
    { id: "n2", kind: "output", op: "Sum", grad: null },
  ],
  edges: [], backward_order: ["n2", "n1", "n0"],
};

test("a saved graph's status line says what it holds", () => {
  assert.equal(statusText(GRAPH), "3 nodes, 2 ops · 3 backward steps · NaN/inf gradient in 1 node · notebook output");
  assert.equal(statusText({ nodes: [], truncated: true }), "0 nodes, 0 ops · truncated at the recorder's node budget · notebook output");
});

test("the widget state starts at the end of the replay, nothing selected, nothing collapsed", () => {
  const state = graphState(GRAPH);
  assert.deepEqual(state.timeline, ["n2", "n1", "n0"]);
  assert.equal(state.graph_json, GRAPH); // the parsed output, read as it is
  assert.equal(state.step_index, 2);
  assert.equal(state.dot, undefined); // the page lays the graph out from its JSON
  assert.deepEqual([state.playing, state.selected, state.collapsed, state.modules, state.live], [false, null, [], [], false]);
  state.timeline.push("x");
  assert.deepEqual(GRAPH.backward_order, ["n2", "n1", "n0"]); // the saved output is never changed
});

test("an output that is not a drawable graph says why", () => {
  assert.throws(() => graphState({ nodes: [] }), /not a vizgrad graph/);
  assert.throws(() => graphState(null), /not a vizgrad graph/);
  assert.throws(() => graphState({ schema: "other", nodes: [] }), /not a vizgrad graph/);
});

test("the page model keeps state and tells its listeners of changes", () => {
  const model = pageModel({ step_index: 2, selected: null });
  const seen = [];
  const handler = () => seen.push(model.get("step_index"));
  model.on("change:step_index", handler);
  model.set("step_index", 0);
  model.set("step_index", 0);            // no change, no event
  model.set("selected", "n1");           // another trait
  model.save_changes();
  model.send({ type: "ignored" });
  model.off("change:step_index", handler);
  model.set("step_index", 1);
  assert.deepEqual(seen, [0]);
  assert.equal(model.get("selected"), "n1");
  assert.equal(model.get("step_index"), 1);
});

// --- notebook models ------------------------------------------------------------------
class FakeSignal {
  constructor() { this.slots = new Set(); }
  connect(slot) { this.slots.add(slot); }
  disconnect(slot) { this.slots.delete(slot); }
  emit(args) { for (const slot of [...this.slots]) slot(this, args); }
}

class FakeList {
  constructor(items = []) { this.items = items; this.changed = new FakeSignal(); }
  get length() { return this.items.length; }
  get(index) { return this.items[index]; }
  add(...values) {
    this.items.push(...values);
    this.changed.emit({ type: "add", newValues: values, oldValues: [] });
  }
}

const graphOutput = (name) => ({ data: { [MIME_TYPE]: { ...GRAPH, name } }, metadata: { [MIME_TYPE]: { dot: `digraph ${name} {}` } } });
const textOutput = (text) => ({ data: { "text/plain": text }, metadata: {} });
const codeCell = (...outputs) => ({ outputs: new FakeList(outputs) });
const markdownCell = () => ({});

test("the latest graph output is the last one in document order", () => {
  const notebook = { cells: new FakeList([codeCell(graphOutput("a")), markdownCell(), codeCell(graphOutput("b"), textOutput("x")), codeCell()]) };
  const latest = latestGraphOutput(notebook);
  assert.equal(latest.graph.name, "b");
  assert.equal(latest.metadata.dot, "digraph b {}");
  assert.equal(latestGraphOutput({ cells: new FakeList([codeCell(textOutput("x"))]) }), null);
  assert.equal(latestGraphOutput(undefined), null);
  assert.equal(graphOf(textOutput("x")), null);
});

test("the follower reports each new graph output, in new cells too, until cleaned up", () => {
  const first = codeCell();
  const notebook = { cells: new FakeList([first, markdownCell()]) };
  const seen = [];
  const stop = followGraphOutputs(notebook, ({ graph }) => seen.push(graph.name));
  first.outputs.add(textOutput("no graph"));
  first.outputs.add(graphOutput("a"));
  const added = codeCell();
  notebook.cells.add(added);
  added.outputs.add(graphOutput("b"), graphOutput("c"));        // one change with two: the last counts
  first.outputs.changed.emit({ type: "remove", newValues: [], oldValues: [] });
  first.outputs.changed.emit({ type: "set", newValues: [graphOutput("d")], oldValues: [] });
  assert.deepEqual(seen, ["a", "c", "d"]);
  stop();
  first.outputs.add(graphOutput("e"));
  notebook.cells.add(codeCell(graphOutput("f")));
  assert.deepEqual(seen, ["a", "c", "d"]);
  assert.equal(notebook.cells.changed.slots.size, 0);
  assert.equal(first.outputs.changed.slots.size, 0);
});

test("the side panel opens at least 420 px wide, the room taken from the notebooks' area", () => {
  // left sidebar (closed), notebooks, right side area: 1200 px shared
  const sizes = [0, 0.8, 0.2];
  const next = widenedSizes(sizes, 2, 1200);
  assert.ok(Math.abs(next[2] * 1200 - PANEL_MIN_WIDTH) < 1e-9);
  assert.ok(Math.abs(next[1] + next[2] - 1) < 1e-9 && next[0] === 0);
  const wide = [0.4, 0.6];
  assert.equal(widenedSizes(wide, 1, 1200), wide);             // wide enough already: unchanged
  // a narrow window: the notebooks keep at least half the panel's width
  const narrow = widenedSizes([0.7, 0.3], 1, 500);
  assert.ok(narrow[0] * 500 >= PANEL_MIN_WIDTH / 2 - 1e-9 && narrow[1] > 0.3);
  assert.deepEqual(widenedSizes([1, 3], 1, 800, 400), [1, 3]);  // unnormalised sizes: 600 px already
  assert.equal(widenedSizes([], 0, 800).length, 0);
});
