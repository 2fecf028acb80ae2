// Backward replay state: which backward step is shown, and whether it is playing.
// Pure logic with no DOM and no timers: whoever drives playback calls advance(ms).
//
// ``position`` counts the backward steps already replayed, from 0 (none: the graph
// as the forward pass left it) to ``length`` (all of them). The step being shown is
// ``position - 1`` (-1 before the first).

/**
 * @param {number} length how many backward steps there are
 * @param {{position?: number, stepsPerSecond?: number}} options start position
 *   (default: the end) and playback speed (default 2 steps per second)
 */
export function createTimeline(length, { position = length, stepsPerSecond = 2 } = {}) {
  if (!Number.isInteger(length) || length < 0) {
    throw new RangeError(`timeline length must be a non-negative integer, got ${length}`);
  }
  if (!(stepsPerSecond > 0)) {
    throw new RangeError(`stepsPerSecond must be positive, got ${stepsPerSecond}`);
  }
  const listeners = new Set();
  const state = { position: clamp(position, length), playing: false };
  let elapsed = 0; // milliseconds played since the last step

  function notify() {
    const snapshot = timeline.state;
    for (const listener of [...listeners]) listener(snapshot);
  }

  function change(position, playing) {
    position = clamp(position, length);
    if (position === state.position && playing === state.playing) return;
    state.position = position;
    state.playing = playing;
    notify();
  }

  const timeline = {
    get length() {
      return length;
    },
    get position() {
      return state.position;
    },
    get playing() {
      return state.playing;
    },
    /** The backward step shown (-1 before the first). */
    get activeStep() {
      return state.position - 1;
    },
    get state() {
      return { position: state.position, length, playing: state.playing, activeStep: state.position - 1 };
    },
    /** Jump to ``position`` (clamped to 0..length); stops playback. */
    seek(position) {
      elapsed = 0;
      change(Number.isFinite(position) ? Math.round(position) : 0, false);
    },
    /** Move ``delta`` steps (default one forward); stops playback. */
    step(delta = 1) {
      timeline.seek(state.position + delta);
    },
    /** Start playing; from the end, the replay starts again from the beginning. */
    play() {
      if (length === 0) return;
      elapsed = 0;
      change(state.position >= length ? 0 : state.position, true);
    },
    pause() {
      change(state.position, false);
    },
    toggle() {
      if (state.playing) timeline.pause();
      else timeline.play();
    },
    /** Let ``milliseconds`` of playback pass: moves by whole steps, stops at the end. */
    advance(milliseconds) {
      if (!state.playing || !(milliseconds > 0)) return;
      elapsed += milliseconds;
      const interval = 1000 / stepsPerSecond;
      const steps = Math.floor(elapsed / interval);
      if (steps === 0) return;
      elapsed -= steps * interval;
      const position = Math.min(length, state.position + steps);
      change(position, position < length);
    },
    /** Call ``listener(state)`` after every change; returns the function that unsubscribes. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return timeline;
}

function clamp(position, length) {
  return Math.max(0, Math.min(length, position));
}
