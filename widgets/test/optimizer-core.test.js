import assert from "node:assert/strict";
import { test } from "node:test";

import {
  bilinear, colourRamp, contourImage, controlsFor, createFrameScheduler, createPlayLoop, diverging, formatNumber,
  hexToRgb, makeTransform, normaliseGrid, pathToPixels, sequential, splitPaths, stepsFor, testId, thinPoints, toFloat32, valueAt,
} from "../src/widgets/optimizer-core.js";

/** A fake requestAnimationFrame: frames run when the test says so. */
function fakeFrames() {
  let next = 1;
  const queue = new Map();
  return {
    raf: (callback) => {
      queue.set(next, callback);
      return next++;
    },
    caf: (handle) => queue.delete(handle),
    tick() {
      const callbacks = [...queue.values()];
      queue.clear();
      for (const callback of callbacks) callback(0);
    },
    get size() {
      return queue.size;
    },
  };
}

test("float32 views over trait buffers share memory when aligned and copy when not", () => {
  const values = new Float32Array([1.5, -2, 3.25]);
  const view = new DataView(values.buffer);
  const shared = toFloat32(view);
  assert.deepEqual([...shared], [1.5, -2, 3.25]);
  assert.equal(shared.buffer, values.buffer);
  const bytes = new Uint8Array(13);
  bytes.set(new Uint8Array(values.buffer), 1);
  assert.deepEqual([...toFloat32(new DataView(bytes.buffer, 1, 12))], [1.5, -2, 3.25]);
  assert.equal(toFloat32(null).length, 0);
});

test("the transform maps the domain onto the canvas with y upwards, and inverts", () => {
  const t = makeTransform([-2, 2, -1, 3], 400, 400);
  assert.equal(t.x(-2), 0);
  assert.equal(t.x(2), 400);
  assert.equal(t.y(-1), 400);
  assert.equal(t.y(3), 0);
  assert.deepEqual(t.invert(t.x(1), t.y(1)), [1, 1]);
});

test("packed paths split by length and scale to canvas pixels", () => {
  const packed = new Float32Array([0, 0, 1, 1, /* second */ -1, 0.5, -1, 0.25, -0.5, 0]);
  const [first, second] = splitPaths(packed, [2, 3]);
  assert.deepEqual([...first], [0, 0, 1, 1]);
  assert.equal(second.length, 6);
  const pixels = pathToPixels(second, makeTransform([-1, 1, 0, 1], 200, 100));
  assert.deepEqual([...pixels], [0, 50, 0, 75, 50, 100]);
  assert.deepEqual(splitPaths(new Float32Array(2), [3]).map((p) => p.length), [2]);
});

test("grids normalise linearly or on a log scale, NaN for non-finite values", () => {
  assert.deepEqual([...normaliseGrid(new Float32Array([2, 4, 6]))], [0, 0.5, 1]);
  const log = normaliseGrid(new Float32Array([0, Math.E - 1, NaN]), "log");
  assert.equal(log[0], 0);
  assert.ok(Math.abs(log[1] - 1) < 1e-6);
  assert.ok(Number.isNaN(log[2]));
  assert.deepEqual([...normaliseGrid(new Float32Array([3, 3]))], [0, 0]);
});

test("colour maps interpolate between stops and clamp", () => {
  const ramp = colourRamp([[0, 0, 0], [100, 200, 250]]);
  assert.deepEqual(ramp(0), [0, 0, 0]);
  assert.deepEqual(ramp(0.5), [50, 100, 125]);
  assert.deepEqual(ramp(2), [100, 200, 250]);
  assert.deepEqual(ramp(NaN), [0, 0, 0]);
  assert.deepEqual(diverging(0.5), [248, 248, 248]);
  const low = sequential(0);
  const high = sequential(1);
  assert.ok(low[0] + low[1] + low[2] < high[0] + high[1] + high[2], "the sequential map gets lighter");
  assert.deepEqual(hexToRgb("#4c72b0"), [76, 114, 176]);
});

test("bilinear interpolation and contour images", () => {
  const grid = new Float32Array([0, 1, 0, 1]); // 2 x 2, value = x
  assert.equal(bilinear(grid, 2, 2, 0.5, 0.5), 0.5);
  assert.equal(bilinear(grid, 2, 2, 5, -1), 1);
  const image = contourImage(new Float32Array([0, 1, 0, 1]), 2, 2, 8, 4, { levels: 2 });
  assert.equal(image.length, 8 * 4 * 4);
  const alpha = [];
  for (let p = 3; p < image.length; p += 4) alpha.push(image[p]);
  assert.ok(alpha.every((a) => a === 255));
  const left = image.slice(0, 3);
  const right = image.slice(4 * 7, 4 * 7 + 3);
  assert.notDeepEqual([...left], [...right], "low and high values get different bands");
  const transparent = contourImage(new Float32Array([NaN, NaN, NaN, NaN]), 2, 2, 2, 2);
  assert.equal(transparent[3], 0);
});

test("the frame scheduler coalesces many requests into one draw per frame", () => {
  const frames = fakeFrames();
  let draws = 0;
  const scheduler = createFrameScheduler(() => { draws += 1; }, frames.raf, frames.caf);
  for (let i = 0; i < 50; i += 1) scheduler.request();
  assert.equal(frames.size, 1);
  frames.tick();
  assert.equal(draws, 1);
  scheduler.request();
  scheduler.cancel();
  frames.tick();
  assert.equal(draws, 1, "a cancelled frame does not draw");
  assert.equal(scheduler.pending, false);
});

test("the play loop keeps one step request in flight and stops cleanly", () => {
  const frames = fakeFrames();
  const sent = [];
  const changes = [];
  const loop = createPlayLoop({ send: (id) => sent.push(id), raf: frames.raf, caf: frames.caf, onChange: (p) => changes.push(p) });
  loop.start();
  frames.tick();
  frames.tick();
  frames.tick();
  assert.deepEqual(sent, [1], "no second request before the first is answered");
  loop.acknowledge();
  frames.tick();
  assert.deepEqual(sent, [1, 2]);
  loop.stop();
  loop.acknowledge();
  frames.tick();
  assert.deepEqual(sent, [1, 2]);
  assert.equal(frames.size, 0, "nothing left scheduled after stop");
  assert.deepEqual(changes, [true, false]);
  loop.toggle();
  assert.equal(loop.playing, true);
  loop.toggle();
  assert.equal(loop.playing, false);
});

test("controls follow each optimizer's hyperparameters", () => {
  const keys = (setting) => controlsFor(setting).map(([key, index]) => (index === null ? key : `${key}${index}`));
  assert.deepEqual(keys({ lr: 0.1 }), ["lr"]);
  assert.deepEqual(keys({ lr: 0.1, momentum: 0.9 }), ["lr", "momentum"]);
  assert.deepEqual(keys({ lr: 0.1, betas: [0.9, 0.999] }), ["lr", "betas0", "betas1"]);
  assert.deepEqual(keys({ lr: 0.1, alpha: 0.99 }), ["lr", "alpha"]);
});

test("numbers and test ids are short and safe", () => {
  assert.equal(formatNumber(0.000123456), "1.23e-4");
  assert.equal(formatNumber(12.34567), "12.35");
  assert.equal(formatNumber(Infinity), "∞");
  assert.equal(formatNumber(undefined), "–");
  assert.equal(testId("Adam (β1=0.5)"), "adam-1-0-5");
  assert.equal(testId("RMSprop"), "rmsprop");
});

test("playing at a rate: steps owed since the last request, at least one, at most a second's worth", () => {
  assert.equal(stepsFor(200, 1000, null), 3);             // the first request: one frame's worth at 60 fps
  assert.equal(stepsFor(200, 1050, 1000), 10);            // 50 ms at 200 steps/s
  assert.equal(stepsFor(200, 1001, 1000), 1);
  assert.equal(stepsFor(200, 9000, 1000), 200);           // a stalled page does not jump 8 s ahead
});

test("the colour bar's values invert the contour map's normalisation; long paths are thinned", () => {
  const grid = Float32Array.from([1, 10, 100, 1000]);
  for (const mode of ["linear", "log"]) {
    const normalised = normaliseGrid(grid, mode);
    grid.forEach((value, i) => assert.ok(Math.abs(valueAt(normalised[i], 1, 1000, mode) - value) < 1e-3 * value));
  }
  const points = Array.from({ length: 1000 }, (_, i) => [i, i]);
  const thin = thinPoints(points, 100);
  assert.ok(thin.length <= 101 && thin[0][0] === 0 && thin[thin.length - 1][0] === 999);
  assert.equal(thinPoints(points.slice(0, 5), 100).length, 5);
});
