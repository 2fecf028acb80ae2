import assert from "node:assert/strict";
import { test } from "node:test";

import { describeNode, formatNumber, shapeText, sourceText, statsRows } from "../src/node-info.js";

const stats = {
  shape: [2], mean: 0.5, std: 0.25, min: 0, max: 1, norm: 1.118034, nan_count: 0, inf_count: 0,
  histogram: [1, 1], bin_edges: [0, 0.5, 1],
};

test("shapes print as Python tuples", () => {
  assert.equal(shapeText([]), "()");
  assert.equal(shapeText([3]), "(3,)");
  assert.equal(shapeText([2, 3]), "(2, 3)");
});

test("numbers keep four significant digits, tiny and huge ones in exponent form", () => {
  assert.equal(formatNumber(1.118034), "1.118");
  assert.equal(formatNumber(0), "0");
  assert.equal(formatNumber(123456), "1.23e+5");
  assert.equal(formatNumber(-0.0000123), "-1.23e-5");
  assert.equal(formatNumber(null), "—");
});

test("statistics rows flag NaN and inf only when present", () => {
  assert.equal(statsRows(null).length, 0);
  assert.equal(statsRows(stats).length, 3);
  const bad = statsRows({ ...stats, nan_count: 2 });
  assert.deepEqual(bad.at(-1), ["NaN / inf", "2 / 0"]);
});

test("a node's description names its op, shape, module, backward step and source", () => {
  const node = {
    id: "n3", kind: "op", label: "Linear", name: null, op: "Linear", shape: [200, 16], dtype: "float32",
    device: "cpu", module: "0", source: { file: "/home/me/train.py", line: 12, code: "out = model(x)" },
    requires_grad: true, value: stats, grad: { ...stats, inf_count: 1 }, backward_index: 4,
  };
  const info = describeNode(node);
  assert.equal(info.title, "Linear");
  assert.deepEqual(info.general, [
    ["kind", "op"], ["op", "Linear"], ["shape", "(200, 16)"], ["dtype", "float32"], ["module", "0"],
    ["backward step", "5"],
  ]);
  assert.equal(info.source, "train.py:12: out = model(x)");
  assert.equal(info.gradIsBad, true);
  assert.equal(sourceText(null), "");
});

test("a scalar node states its value", () => {
  const info = describeNode({ id: "n4", kind: "output", op: "Sum", label: "Sum", shape: [], dtype: "float32",
    value: { sample: [0.123456] } });
  assert.deepEqual(info.general.find(([label]) => label === "value"), ["value", "0.1235"]);
  const vector = describeNode({ id: "n1", kind: "leaf", shape: [2], dtype: "float32", value: { sample: [1, 2] } });
  assert.equal(vector.general.find(([label]) => label === "value"), undefined);
});

test("a gradient from another backward pass carries Python's note, shown as given", () => {
  const node = { id: "n0", kind: "leaf", shape: [3], dtype: "float32", grad: stats,
    grad_note: "x.grad came from another backward pass, not this graph's" };
  assert.equal(describeNode(node).gradNote, "x.grad came from another backward pass, not this graph's");
  assert.equal(describeNode({ ...node, grad_note: null }).gradNote, "");
  assert.equal(describeNode({ id: "n1", kind: "op", shape: [] }).gradNote, "");
});
