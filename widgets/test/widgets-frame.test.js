import assert from "node:assert/strict";
import { test } from "node:test";

import { createTimeline } from "../src/timeline.js";
import { createFrameScheduler, drivePlayback } from "../src/widgets/frame.js";

/** requestAnimationFrame / cancelAnimationFrame under a test's control. */
function fakeFrames() {
  const callbacks = new Map();
  let next = 1;
  let time = 0;
  return {
    request: (callback) => {
      callbacks.set(next, callback);
      return next++;
    },
    cancel: (handle) => callbacks.delete(handle),
    now: () => time,
    /** Run the frame's callbacks at ``time + ms``. */
    frame(ms = 16) {
      time += ms;
      const due = [...callbacks.values()];
      callbacks.clear();
      for (const callback of due) callback(time);
    },
    get waiting() {
      return callbacks.size;
    },
  };
}

test("a burst of model changes is drawn once, at the next frame", () => {
  const frames = fakeFrames();
  const scheduler = createFrameScheduler(frames);
  const drawn = [];
  for (let i = 0; i < 100; i += 1) {
    scheduler.schedule("layout", () => drawn.push(`layout ${i}`));
    scheduler.schedule("step", () => drawn.push("step"));
  }
  assert.equal(frames.waiting, 1); // one frame requested for the whole burst
  assert.deepEqual(drawn, []);
  frames.frame();
  assert.deepEqual(drawn, ["layout 99", "step"]); // the latest task of each name, once
  frames.frame();
  assert.deepEqual(drawn, ["layout 99", "step"]);
  assert.equal(scheduler.pending, 0);
});

test("a task scheduled while drawing waits for the next frame", () => {
  const frames = fakeFrames();
  const scheduler = createFrameScheduler(frames);
  const drawn = [];
  scheduler.schedule("a", () => {
    drawn.push("a");
    scheduler.schedule("a", () => drawn.push("a again"));
  });
  frames.frame();
  assert.deepEqual(drawn, ["a"]);
  frames.frame();
  assert.deepEqual(drawn, ["a", "a again"]);
});

test("flush draws now; cancel drops what is pending", () => {
  const frames = fakeFrames();
  const scheduler = createFrameScheduler(frames);
  const drawn = [];
  scheduler.schedule("x", () => drawn.push("x"));
  scheduler.flush();
  assert.deepEqual(drawn, ["x"]);
  assert.equal(frames.waiting, 0);
  scheduler.schedule("y", () => drawn.push("y"));
  scheduler.cancel();
  frames.frame();
  assert.deepEqual(drawn, ["x"]);
});

test("playback advances the timeline once per animation frame and stops at the end", () => {
  const frames = fakeFrames();
  const timeline = createTimeline(3, { position: 0, stepsPerSecond: 10 });
  const stop = drivePlayback(timeline, frames);
  assert.equal(frames.waiting, 0); // nothing runs while paused
  timeline.play();
  assert.equal(frames.waiting, 1);
  frames.frame(50);
  assert.equal(timeline.position, 0);
  frames.frame(60); // 110 ms: one step at 10 per second
  assert.equal(timeline.position, 1);
  frames.frame(500);
  assert.deepEqual([timeline.position, timeline.playing], [3, false]);
  assert.equal(frames.waiting, 0); // no frame requested once it stopped
  timeline.play();
  stop();
  assert.equal(frames.waiting, 0); // the cleanup cancels the pending frame
  timeline.pause();
  timeline.play();
  assert.equal(frames.waiting, 0); // and no longer listens
});
