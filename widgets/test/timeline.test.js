import assert from "node:assert/strict";
import { test } from "node:test";

import { createTimeline } from "../src/timeline.js";

test("starts at the end by default, or where asked (clamped)", () => {
  assert.equal(createTimeline(5).position, 5);
  assert.equal(createTimeline(5).activeStep, 4);
  assert.equal(createTimeline(5, { position: 2 }).position, 2);
  assert.equal(createTimeline(5, { position: 9 }).position, 5);
  assert.equal(createTimeline(5, { position: -3 }).activeStep, -1);
});

test("rejects a bad length or speed", () => {
  assert.throws(() => createTimeline(-1), RangeError);
  assert.throws(() => createTimeline(2.5), RangeError);
  assert.throws(() => createTimeline(3, { stepsPerSecond: 0 }), RangeError);
});

test("seek and step clamp to 0..length and stop playback", () => {
  const timeline = createTimeline(4, { position: 0 });
  timeline.step();
  timeline.step();
  assert.equal(timeline.position, 2);
  timeline.step(-5);
  assert.equal(timeline.position, 0);
  timeline.seek(10);
  assert.equal(timeline.position, 4);
  timeline.play();
  timeline.seek(1.6);
  assert.deepEqual(timeline.state, { position: 2, length: 4, playing: false, activeStep: 1 });
  timeline.seek(Number.NaN);
  assert.equal(timeline.position, 0);
});

test("play from the end restarts; advance moves whole steps and stops at the end", () => {
  const timeline = createTimeline(3, { stepsPerSecond: 2 });
  timeline.play();
  assert.deepEqual([timeline.position, timeline.playing], [0, true]);
  timeline.advance(499);
  assert.equal(timeline.position, 0);
  timeline.advance(1);
  assert.equal(timeline.position, 1);
  timeline.advance(5000);
  assert.deepEqual([timeline.position, timeline.playing], [3, false]);
  timeline.advance(1000);
  assert.equal(timeline.position, 3);
});

test("pause keeps the position; advance does nothing while paused", () => {
  const timeline = createTimeline(6, { position: 1 });
  timeline.toggle();
  timeline.advance(500);
  timeline.toggle();
  assert.deepEqual([timeline.position, timeline.playing], [2, false]);
  timeline.advance(5000);
  assert.equal(timeline.position, 2);
});

test("an empty timeline never plays", () => {
  const timeline = createTimeline(0);
  timeline.play();
  assert.equal(timeline.playing, false);
  assert.equal(timeline.activeStep, -1);
});

test("subscribers hear each change once, and stop hearing after unsubscribing", () => {
  const timeline = createTimeline(3, { position: 0 });
  const seen = [];
  const unsubscribe = timeline.subscribe((state) => seen.push(state.position));
  timeline.step();
  timeline.seek(1); // no change: no call
  timeline.step();
  unsubscribe();
  timeline.step();
  assert.deepEqual(seen, [1, 2]);
});
