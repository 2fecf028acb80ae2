// Drawing at most once per animation frame: model changes arrive in bursts (one Python
// update sets several traits, each firing its own change event), and each burst
// should cost one draw. Pure logic; the frame functions are injectable for tests.

/**
 * @param {{request?: (callback: FrameRequestCallback) => number, cancel?: (handle: number) => void}} frames
 * @returns {{schedule: (name: string, task: () => void) => void, flush: () => void,
 *   cancel: () => void, readonly pending: number}}
 */
export function createFrameScheduler({
  request = (callback) => requestAnimationFrame(callback),
  cancel = (handle) => cancelAnimationFrame(handle),
} = {}) {
  const tasks = new Map();
  let handle = null;

  function run() {
    handle = null;
    const batch = [...tasks.values()];
    tasks.clear();
    for (const task of batch) task();
  }

  return {
    /** Run ``task`` at the next frame; a task scheduled again under ``name`` before then replaces it. */
    schedule(name, task) {
      tasks.set(name, task);
      if (handle === null) handle = request(run);
    },
    /** Run what is pending now. */
    flush() {
      if (handle !== null) cancel(handle);
      run();
    },
    /** Drop what is pending (the view's cleanup). */
    cancel() {
      if (handle !== null) cancel(handle);
      handle = null;
      tasks.clear();
    },
    get pending() {
      return tasks.size;
    },
  };
}

/**
 * Advance ``timeline`` (see ../timeline.js) once per animation frame while it plays.
 * Returns the cleanup.
 */
export function drivePlayback(timeline, {
  request = (callback) => requestAnimationFrame(callback),
  cancel = (handle) => cancelAnimationFrame(handle),
  now = () => performance.now(),
} = {}) {
  let handle = 0;
  let last = 0;
  const tick = (time) => {
    timeline.advance(time - last);
    last = time;
    handle = timeline.playing ? request(tick) : 0;
  };
  const unsubscribe = timeline.subscribe((state) => {
    if (state.playing && !handle) {
      last = now();
      handle = request(tick);
    }
  });
  return () => {
    unsubscribe();
    if (handle) cancel(handle);
    handle = 0;
  };
}
