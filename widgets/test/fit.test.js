import assert from "node:assert/strict";
import { test } from "node:test";

import {
  MIN_LABEL_PX, MIN_SCALE, MINIMAP_SHARE, NODE_FONT_PT, coarserCollapse, fitScale, minimapPlace, minimapSize, readableView, rootId,
  tooSmallToFit, viewScale,
} from "../src/fit.js";
import { groupTree } from "../src/graph-dot.js";

const pane = { width: 900, height: 560 };

test("a drawing that fits at a readable scale is shown whole, centred, small ones not blown up", () => {
  const content = { x: 0, y: 0, width: 400, height: 300 };
  const view = readableView(content, pane);
  const scale = viewScale(view, pane);
  assert.ok(Math.abs(scale - 1.6) < 1e-9, `scale ${scale}`); // MAX_FIT_SCALE: not blown up further
  assert.ok(Math.abs(view.x + view.width / 2 - 200) < 1e-9 && Math.abs(view.y + view.height / 2 - 150) < 1e-9);
  const big = { x: 0, y: 0, width: 800, height: 500 };
  assert.ok(!tooSmallToFit(big, pane));
  const fitted = readableView(big, pane);
  assert.ok(fitted.x <= 0 && fitted.y <= 0 && fitted.x + fitted.width >= 800 && fitted.y + fitted.height >= 500); // all of it
});

test("fit never shrinks labels below MIN_LABEL_PX: a tall drawing shows the root's part at the readable scale", () => {
  const content = { x: 0, y: 0, width: 300, height: 3000 };
  assert.ok(fitScale(content, pane) < MIN_SCALE && tooSmallToFit(content, pane));
  const root = { x: 100, y: 2940, width: 100, height: 40 };
  const view = readableView(content, pane, root);
  const scale = viewScale(view, pane);
  assert.ok(NODE_FONT_PT * scale >= MIN_LABEL_PX, `labels at ${NODE_FONT_PT * scale} px`);
  assert.ok(Math.abs(scale - MIN_SCALE) < 1e-9);
  // the root inside the view, the view inside the drawing (with its margin), centred across it
  assert.ok(view.y <= root.y && root.y + root.height <= view.y + view.height);
  assert.ok(view.y + view.height <= 3000 + 0.03 * 3000 + 4 + 1e-9);
  assert.ok(Math.abs(view.x + view.width / 2 - 150) < 1e-9);
  // without a root: the bottom centre, where Graphviz draws the output
  const bottom = readableView(content, pane);
  assert.ok(bottom.y + bottom.height >= 3000);
});

test("a wide drawing keeps the root in view, and the view within the drawing", () => {
  const content = { x: 0, y: 0, width: 5000, height: 200 };
  const root = { x: 4900, y: 150, width: 60, height: 40 };
  const view = readableView(content, pane, root);
  assert.ok(view.x <= root.x && root.x + root.width <= view.x + view.width);
  assert.ok(view.x + view.width <= 5000 + 0.03 * 5000 + 4 + 1e-9);
  const left = readableView(content, pane, { x: 0, y: 150, width: 60, height: 40 });
  assert.ok(left.x >= -(0.03 * 5000 + 4) - 1e-9 && left.x <= 0);
});

/** Groups a > a.b > a.b.c and a top-level d, one op node in each. */
function nestedGraph() {
  const groups = [
    { id: "g0", kind: "module", name: "a", type: "A", label: "A", parent: null },
    { id: "g1", kind: "module", name: "a.b", type: "B", label: "B", parent: "g0" },
    { id: "g2", kind: "module", name: "a.b.c", type: "C", label: "C", parent: "g1" },
    { id: "g3", kind: "module", name: "d", type: "D", label: "D", parent: null },
  ];
  const nodes = groups.map((group, i) => ({ id: `n${i}`, kind: "op", op: "Add", shape: [2], group: group.id }));
  nodes.push({ id: "n4", kind: "output", op: "Sum", shape: [], group: null });
  const edges = [0, 1, 2, 3].map((i) => ({ source: `n${i}`, target: `n${i + 1}`, index: 0, shape: [2] }));
  return { schema: "vizgrad.graph", version: 2, nodes, edges, groups, backward_order: [], steps: [], truncated: false };
}

test("collapsing to fit closes the deepest open groups first, a level at a time, until all are boxes", () => {
  const tree = groupTree(nestedGraph());
  let collapsed = [];
  const levels = [];
  for (let next = coarserCollapse(tree, collapsed); next; next = coarserCollapse(tree, collapsed)) {
    collapsed = next;
    levels.push([...collapsed].sort());
  }
  assert.deepEqual(levels, [["a.b.c"], ["a.b"], ["a", "d"]]);
  assert.equal(coarserCollapse(tree, ["a", "d"]), null); // nothing left open
  assert.deepEqual(coarserCollapse(tree, ["a"]), ["a", "d"]); // inside a collapsed group counts as closed
});

test("the minimap keeps the drawing's proportions within 15% of the pane, even for a very long drawing", () => {
  for (const content of [{ width: 400, height: 300 }, { width: 300, height: 9000 }, { width: 9000, height: 80 }]) {
    for (const size of [{ width: 900, height: 560 }, { width: 420, height: 320 }, { width: 200, height: 120 }]) {
      const map = minimapSize(content, size);
      assert.ok(map.width * map.height <= MINIMAP_SHARE * size.width * size.height + 1e-9,
        `${JSON.stringify(content)} in ${JSON.stringify(size)}: ${JSON.stringify(map)}`);
      assert.ok(map.width <= 140 && map.height <= 120);
    }
  }
  const map = minimapSize({ width: 400, height: 300 }, pane);
  assert.ok(Math.abs(map.width / map.height - 4 / 3) < 0.05);
});

test("the minimap goes to the first corner clear of the root, and hides when none is", () => {
  const size = { width: 100, height: 80 };
  assert.deepEqual(minimapPlace(pane, size, null), { left: 792, top: 472 }); // bottom right
  const bottomRight = { x: 820, y: 500, width: 40, height: 30 };
  assert.deepEqual(minimapPlace(pane, size, bottomRight), { left: 8, top: 472 });
  const bottom = { x: 0, y: 500, width: 900, height: 30 };
  assert.deepEqual(minimapPlace(pane, size, bottom), { left: 792, top: 8 });
  assert.equal(minimapPlace(pane, size, { x: 0, y: 0, width: 900, height: 560 }), null);
});

test("the root is the output node, else the last node no op reads", () => {
  assert.equal(rootId(nestedGraph()), "n4");
  const noOutput = { nodes: [{ id: "n0", kind: "leaf" }, { id: "n1", kind: "op" }, { id: "n2", kind: "constant" }],
    edges: [{ source: "n0", target: "n1" }, { source: "n2", target: "n1" }] };
  assert.equal(rootId(noOutput), "n1");
  assert.equal(rootId({ nodes: [], edges: [] }), null);
});
