import assert from "node:assert/strict";
import { test } from "node:test";

import { curveCharts, histogramStats, latestValue, ratioLines, wantsLog } from "../src/widgets/dashboard-widget.js";
import {
  divergingRgb, flaggedLayers, flagText, flowPixels, heatmapCell, flowPosition, flowSummary, healthyBand, moduleGroups, rowHeightFor, rowLabels,
} from "../src/widgets/grad-flow.js";
import { divergingColour, matrixCells, matrixLimit } from "../src/widgets/heatmap.js";
import { floats, jsonTrait, onChange, seriesColumns } from "../src/widgets/model.js";

/** float32 bytes as ipywidgets hands them over: a DataView. */
function buffer(values) {
  return new DataView(Float32Array.from(values).buffer);
}

test("float32 buffers arrive as DataView, ArrayBuffer, typed or plain arrays, even unaligned", () => {
  assert.deepEqual([...floats(buffer([1.5, -2]))], [1.5, -2]);
  assert.deepEqual([...floats(Float32Array.from([3]).buffer)], [3]);
  assert.deepEqual([...floats([1, null])].map(String), ["1", "NaN"]);
  const bytes = new Uint8Array(9);
  bytes.set(new Uint8Array(Float32Array.from([7, 8]).buffer), 1);
  assert.deepEqual([...floats(new DataView(bytes.buffer, 1, 8))], [7, 8]);
  assert.equal(floats(undefined).length, 0);
  assert.throws(() => floats("1,2"), TypeError);
});

test("a JSON buffer trait is parsed once per value, a new value parsed afresh", () => {
  const text = (data) => new DataView(new TextEncoder().encode(JSON.stringify(data)).buffer);
  const values = { graph: text({ nodes: [{ id: "n0", label: "wé" }] }) };
  const model = { get: (name) => values[name] };
  const first = jsonTrait(model, "graph");
  assert.deepEqual(first, { nodes: [{ id: "n0", label: "wé" }] });
  assert.equal(jsonTrait(model, "graph"), first);
  values.graph = text({ nodes: [] });
  assert.deepEqual(jsonTrait(model, "graph"), { nodes: [] });
  assert.deepEqual(jsonTrait(model, "missing"), {});
});

test("a series payload becomes one [step, value] list per column, NaN as a gap", () => {
  const payload = { steps: buffer([1, 2, 3]), values: buffer([10, 20, 11, Number.NaN, 12, 22]), columns: 2, length: 3 };
  assert.deepEqual(seriesColumns(payload), [[[1, 10], [2, 11], [3, 12]], [[1, 20], [2, null], [3, 22]]]);
  assert.deepEqual(seriesColumns(null), []);
});

test("onChange listens to each trait and its cleanup stops listening", () => {
  const handlers = new Map();
  const model = {
    on: (event, handler) => handlers.set(event, handler),
    off: (event, handler) => handlers.get(event) === handler && handlers.delete(event),
  };
  let calls = 0;
  const stop = onChange(model, ["graph", "dot"], () => (calls += 1));
  assert.deepEqual([...handlers.keys()], ["change:graph", "change:dot"]);
  handlers.get("change:dot")();
  stop();
  assert.equal(handlers.size, 0);
  assert.equal(calls, 1);
});

const flow = {
  layers: ["0.weight", "0.bias", "2.weight"],
  step: 3,
  series: { steps: buffer([1, 2, 3]), values: buffer([1, 2, 3, 1, 2, 3, 1, 2e-9, 3]), columns: 3, length: 3 },
  current: { rms: [1, 2e-9, null], norm: [2, 1e-8, null], status: ["ok", "vanishing", "exploding"] },
  thresholds: { vanishing: 1e-7, exploding: 1e3, relative: 1e-3 },
};

test("gradient flow: flagged layers listed, a one-line summary", () => {
  assert.deepEqual(flaggedLayers(flow).map((item) => [item.name, item.status]), [["0.bias", "vanishing"], ["2.weight", "exploding"]]);
  assert.equal(flagText(flaggedLayers(flow)[1]), "exploding: 2.weight (RMS —)");
  assert.equal(flowSummary(flow), "of 3 layers: 1 vanishing (0.bias), 1 exploding (2.weight)");
  assert.equal(flowSummary({ ...flow, current: { ...flow.current, status: ["ok", "ok", "ok"] } }), "no vanishing or exploding layers");
  const many = { layers: Array.from({ length: 6 }, (_, i) => `${i}.weight`), current: { rms: [], status: Array(6).fill("vanishing") } };
  assert.equal(flowSummary(many), "of 6 layers: 6 vanishing (0.weight, 1.weight, 2.weight, +3 more), 0 exploding");
  assert.deepEqual(flaggedLayers(null), []);
});

test("gradient flow heatmap: the healthy band follows the diagnostics thresholds, colours diverge from it", () => {
  const thresholds = { vanishing: 1e-7, exploding: 1e3, relative: 1e-3 };
  assert.deepEqual(healthyBand([2, 2e-9, null], thresholds), [2e-3, 1e3]);
  assert.deepEqual(healthyBand([1e-6, null], thresholds), [1e-7, 1e3]);
  const band = [1e-3, 1e3];
  assert.equal(flowPosition(1, band), 0);                       // the band's log middle is the pale centre
  assert.ok(Math.abs(flowPosition(1e-3, band) + 0.3) < 1e-12);  // its edges are light tints
  assert.ok(Math.abs(flowPosition(1e-5, band) + 0.65) < 1e-12); // two decades below: half way to full blue
  assert.equal(flowPosition(1e-9, band), -1);
  assert.ok(Math.abs(flowPosition(1e5, band) - 0.65) < 1e-12);
  assert.equal(flowPosition(Number.NaN, band), 1);             // NaN or inf reads as exploding
  assert.equal(flowPosition(0, band), -1);
  assert.deepEqual(divergingRgb(0), [247, 247, 247]);
  assert.deepEqual(divergingRgb(-1), [33, 102, 172]);
  assert.deepEqual(divergingRgb(1), [178, 24, 43]);
  const pixels = flowPixels(flow);
  assert.deepEqual([pixels.width, pixels.height, pixels.steps], [3, 3, [1, 2, 3]]);
  const at = (row, step) => [...pixels.data.slice((row * 3 + step) * 4, (row * 3 + step) * 4 + 3)];
  assert.deepEqual(at(1, 2), divergingRgb(-1));                  // 2e-9 at step 3: far below the band
  assert.ok(at(1, 2)[2] > at(1, 2)[0]);                           // blue
  assert.deepEqual(at(0, 0), divergingRgb(flowPosition(1, [3e-3, 1e3])));   // step 1: the largest is 3
});

test("gradient flow rows: grouped by module, labels thinned so that none come closer than the gap", () => {
  const layers = Array.from({ length: 13 }, (_, i) => [`layers.${i}.weight`, `layers.${i}.bias`]).flat();
  assert.deepEqual(moduleGroups(layers).slice(0, 2), [{ module: "layers.0", start: 0, end: 2 }, { module: "layers.1", start: 2, end: 4 }]);
  assert.equal(rowHeightFor(26), 16);
  assert.equal(rowHeightFor(200), 2);
  assert.equal(rowHeightFor(2), 18);
  assert.equal(rowLabels(layers, 16).length, 26);                 // room for every parameter's name
  const labels = rowLabels(layers, 8);                             // not enough room: one per module
  assert.deepEqual(labels.map((label) => label.text).slice(0, 2), ["layers.0", "layers.1"]);
  for (const height of [2, 3, 8, 12, 16]) {
    const ys = rowLabels(layers, height).map((label) => (label.row + 0.5) * height);
    ys.slice(1).forEach((y, i) => assert.ok(y - ys[i] >= 13, `row height ${height}: labels ${ys[i]} and ${y} overlap`));
  }
  const wide = Array.from({ length: 200 }, (_, i) => `${i}.weight`);
  assert.ok(rowLabels(wide, rowHeightFor(200)).length >= 25);     // 200 layers still get a label every few rows
});

test("dashboard curves: one chart per value, one line per mark, latest finite value", () => {
  const curves = {
    loss: { train: { steps: buffer([0, 1]), values: buffer([2, 1]), columns: 1 }, val: { steps: buffer([1]), values: buffer([1.5]), columns: 1 } },
    accuracy: { train: { steps: buffer([0, 1]), values: buffer([0.5, Number.NaN]), columns: 1 } },
  };
  const charts = curveCharts(curves);
  assert.deepEqual(charts.map((chart) => [chart.key, chart.lines.map((line) => line.name)]), [["loss", ["train", "val"]], ["accuracy", ["train"]]]);
  assert.equal(latestValue(charts[1].lines[0].points), 0.5);
  assert.equal(latestValue([]), null);
  assert.equal(wantsLog([{ points: [[0, 100], [1, 1]] }]), true);
  assert.equal(wantsLog([{ points: [[0, 2], [1, 1]] }]), false);
  assert.equal(wantsLog([{ points: [[0, 100], [1, -1]] }]), false);
});

test("update ratios per layer and histogram counts from buffers", () => {
  const ratios = { series: { steps: buffer([1]), values: buffer([1e-3, 2e-3]), columns: 2 } };
  assert.deepEqual(ratioLines(ratios, ["w", "b"]).map((line) => line.points[0][0]), [1, 1]);
  assert.deepEqual(histogramStats({ counts: buffer([0, 3, 1]) }), { histogram: [0, 3, 1] });
  assert.equal(histogramStats(undefined), null);
});

test("heatmap colours diverge from white at 0 to blue and red, grey for missing", () => {
  assert.equal(divergingColour(0, 1), "rgb(247,247,247)");
  assert.equal(divergingColour(1, 1), "rgb(215,48,39)");
  assert.equal(divergingColour(-5, 1), "rgb(49,54,149)"); // clamped
  assert.equal(divergingColour(null, 1), "rgb(160,160,160)");
  assert.equal(divergingColour(3, 0), "rgb(247,247,247)");
  assert.equal(matrixLimit([[1, -4], [null, 2]]), 4);
});

test("heatmap cells: Graph JSON 3's flat matrix row by row, and versions 1 and 2's rows", () => {
  const whole = matrixCells({ shape: [2, 3], matrix: [1, 2, 3, 4, null, 6] });
  assert.deepEqual(whole, { cells: [[1, 2, 3], [4, null, 6]], rowIndex: [0, 1], colIndex: [0, 1, 2] });
  const spaced = matrixCells({ shape: [100, 40], matrix: [1, 2, 3, 4], matrix_rows: [0, 99], matrix_cols: [0, 39] });
  assert.deepEqual(spaced, { cells: [[1, 2], [3, 4]], rowIndex: [0, 99], colIndex: [0, 39] });
  const nested = matrixCells({ shape: [2, 2], matrix: [[1, 2], [3, 4]], matrix_rows: [0, 1], matrix_cols: [0, 1] });
  assert.deepEqual(nested.cells, [[1, 2], [3, 4]]);
  assert.equal(matrixCells({ shape: [2, 3], matrix: [1, 2, 3, 4] }), null);      // not whole rows
  assert.equal(matrixCells({ shape: [3] }), null);
  assert.equal(matrixCells(null), null);
});

test("the heatmap cell under the pointer: its layer, step and value", () => {
  assert.deepEqual(heatmapCell(flow, 0, 0, 300, 90), { layer: "0.weight", step: 1, rms: 1 });
  const cell = heatmapCell(flow, 250, 45, 300, 90);          // the last column, the middle row
  assert.equal(cell.layer, "0.bias");
  assert.equal(cell.step, 3);
  assert.ok(Math.abs(cell.rms - 2e-9) < 1e-15);
  assert.equal(heatmapCell(flow, 300, 0, 300, 90), null);
  assert.equal(heatmapCell(null, 0, 0, 300, 90), null);
});

test("the gradient-flow figure fits the width it is given, its labels cut from the left", async () => {
  const { figureLayout, fitLabel, placeLabel } = await import("../src/widgets/grad-flow.js");
  const names = ["token.weight", "blocks.0.attention.qkv.weight", "head.bias"];
  for (const width of [600, 800, 890]) {
    const layout = figureLayout(names, width);
    assert.equal(layout.labels + layout.gap + layout.heat + layout.bars + 12, width);
    assert.ok(layout.labels <= 0.3 * width + 1 && layout.heat > layout.bars);
  }
  assert.equal(fitLabel("blocks.0.attention.qkv.weight", 12), "….qkv.weight");
  assert.equal(fitLabel("head.bias", 12), "head.bias");
  // a threshold label near the right edge ends there instead of running past it
  assert.deepEqual(placeLabel(790, 14, 500, 800, "start"), { x: 787, anchor: "end" });
  assert.deepEqual(placeLabel(520, 14, 500, 800, "start"), { x: 523, anchor: "start" });
  assert.deepEqual(placeLabel(505, 14, 500, 800, "end"), { x: 508, anchor: "start" });
});
