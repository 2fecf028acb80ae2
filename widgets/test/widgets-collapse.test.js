import assert from "node:assert/strict";
import { test } from "node:test";

import { isCollapsed, isWithin, moduleForGroupId, toggleModule } from "../src/widgets/collapse.js";

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

test("clicked clusters and collapsed boxes are found by their group's id", () => {
  // dot.py: "cluster_" + the group's id, "m_" + the group's id: unique whatever the names
  const graph = { groups: [{ id: "g0", name: "enc-a" }, { id: "g1", name: "enc_a" }, { id: "g2", name: "enc a" }] };
  assert.equal(moduleForGroupId(graph, "g1"), "enc_a");
  assert.equal(moduleForGroupId(graph, "g2"), "enc a");
  assert.equal(moduleForGroupId(graph, "g9"), null);
  assert.equal(moduleForGroupId({}, "g0"), null);
});
