import assert from "node:assert/strict";
import { test } from "node:test";

import { isCollapsed, isWithin, moduleForNodeId, moduleNodeId, toggleModule } from "../src/widgets/collapse.js";

test("a module is within itself and its ancestors only", () => {
  assert.equal(isWithin("a.b", "a"), true);
  assert.equal(isWithin("a", "a"), true);
  assert.equal(isWithin("a.bc", "a.b"), false);
  assert.equal(isWithin("ab", "a"), false);
});

test("toggling collapses, expands, and a parent subsumes its children", () => {
  assert.deepEqual(toggleModule([], "encoder"), ["encoder"]);
  assert.deepEqual(toggleModule(["encoder"], "encoder"), []);
  assert.deepEqual(toggleModule(["encoder.0", "encoder.1", "head"], "encoder"), ["encoder", "head"]);
  // a module hidden inside a collapsed parent: toggling it opens the parent
  assert.deepEqual(toggleModule(["encoder", "head"], "encoder.1"), ["head"]);
  assert.deepEqual(toggleModule(["b", "a"], "c"), ["a", "b", "c"]); // sorted, as Python keeps it
  const before = ["x"];
  toggleModule(before, "y");
  assert.deepEqual(before, ["x"]); // the input is not changed
});

test("which modules are drawn collapsed", () => {
  assert.equal(isCollapsed(["encoder"], "encoder.0.linear"), true);
  assert.equal(isCollapsed(["encoder"], "decoder"), false);
  assert.equal(isCollapsed([], "encoder"), false);
});

test("collapsed modules are found by the DOT id vizgrad.render.dot gives them", () => {
  // dot.py: "m_" + every non-alphanumeric character as "_"
  assert.equal(moduleNodeId("layers.0"), "m_layers_0");
  assert.equal(moduleNodeId("blocks.1.attn-out"), "m_blocks_1_attn_out");
  assert.equal(moduleNodeId("état.x"), "m_état_x");
  const modules = ["layers", "layers.0", "layers.1"];
  assert.equal(moduleForNodeId(modules, "m_layers_1"), "layers.1");
  assert.equal(moduleForNodeId(modules, "m_nothing"), null);
});
