import assert from "node:assert/strict";
import { test } from "node:test";

import { itemRows, itemTip } from "../src/inline/inline-graph.js";

const stats = { mean: 0.5, std: 0.25, min: 0, max: 1, norm: 1.118034, nan_count: 0, inf_count: 0, sample: [0, 1], more: true };

test("a node's details: op, shape, dtype, its values and its gradient", () => {
  const node = { k: "node", id: "n3", kind: "op", op: "Linear", shape: [3, 16], dtype: "float32", module: "head", value: stats, grad: null };
  const { title, rows } = itemRows(node);
  const row = Object.fromEntries(rows);
  assert.equal(title, "Linear");
  assert.equal(row.shape, "(3, 16)");
  assert.equal(row.dtype, "float32");
  assert.equal(row.module, "head");
  assert.equal(row.values, "0, 1, …");
  assert.equal(row["value mean ± std"], "0.5 ± 0.25");
  assert.equal(row.grad, "none recorded");
  assert.equal(itemTip(node), "Linear · (3, 16) · float32");
});

test("a gradient from another pass says so, a scalar says its value", () => {
  const node = { k: "node", id: "n0", kind: "leaf", name: "w", shape: [], dtype: "float64", value: { ...stats, sample: [2.5], more: false },
    grad: { ...stats, nan_count: 1 }, grad_note: "from total.backward()" };
  const row = Object.fromEntries(itemRows(node).rows);
  assert.equal(row.value, "2.5");
  assert.equal(row["grad NaN / inf"], "1 / 0");
  assert.equal(row["grad note"], "from total.backward()");
  assert.equal(row.values, undefined); // a 0-d node's one value is its value row
});

test("a group box says what it holds", () => {
  const group = { k: "group", kind: "module", title: "t=0", name: "lstm.layer0.t0", type: "LSTM step", blocks: 12, last: "lstm.layer0.t11",
    nodes: 120, ops: 96, top: [["Linear", 12], ["Sigmoid", 36]], params: [{ name: "lstm.weight_hh_l0", shape: "(64, 16)" }], more_params: 1, children: 0 };
  const { title, rows } = itemRows(group);
  const row = Object.fromEntries(rows);
  assert.equal(title, "t=0 ×12");
  assert.equal(row.blocks, "12 identical: lstm.layer0.t0 … lstm.layer0.t11");
  assert.equal(row.holds, "120 nodes, 96 ops");
  assert.equal(row.ops, "Linear ×12, Sigmoid ×36");
  assert.equal(row.parameters, "lstm.weight_hh_l0 (64, 16), +1 more");
  assert.equal(itemTip(group), "t=0 ×12: 120 nodes, 96 ops (click for details)");
});
