// Pure helpers for the canvas plots of the optimizer race and the playground: binary
// buffers to typed arrays, data-to-pixel transforms, colour maps, contour images, two
// schedulers (one redraw per animation frame; one step request in flight while playing)
// and which hyperparameter inputs an optimizer gets. No DOM, no timers: the schedulers
// take requestAnimationFrame as an argument, so node --test drives them with fake frames.

/**
 * A Float32Array over a binary trait or message buffer (DataView, ArrayBuffer, typed
 * array). Shares memory when the offset is 4-aligned, copies otherwise.
 */
export function toFloat32(data) {
  if (!data) return new Float32Array(0);
  if (data instanceof Float32Array) return data;
  const buffer = data instanceof ArrayBuffer ? data : data.buffer;
  const offset = data instanceof ArrayBuffer ? 0 : data.byteOffset;
  const length = Math.floor(data.byteLength / 4);
  if (offset % 4 === 0) return new Float32Array(buffer, offset, length);
  return new Float32Array(buffer.slice(offset, offset + length * 4));
}

/** A Uint8Array over a binary buffer (no copy). */
export function toUint8(data) {
  if (!data) return new Uint8Array(0);
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Maps data coordinates in ``domain`` = [xmin, xmax, ymin, ymax] onto a width-by-height
 * canvas (y grows upwards in data, downwards on the canvas), and back.
 */
export function makeTransform([x0, x1, y0, y1], width, height) {
  const sx = width / (x1 - x0 || 1);
  const sy = height / (y1 - y0 || 1);
  return {
    x: (x) => (x - x0) * sx,
    y: (y) => height - (y - y0) * sy,
    invert: (px, py) => [x0 + px / sx, y0 + (height - py) / sy],
  };
}

/**
 * Splits packed (x, y) float32 pairs into one Float32Array per path, ``lengths[i]``
 * points each (views, no copies). Missing points give shorter paths, never a throw.
 */
export function splitPaths(points, lengths) {
  const paths = [];
  let offset = 0;
  for (const length of lengths) {
    const end = Math.min(points.length, offset + 2 * length);
    paths.push(points.subarray(Math.min(offset, end), end));
    offset += 2 * length;
  }
  return paths;
}

/** A path of (x, y) pairs in data coordinates as canvas pixel pairs (a new Float32Array). */
export function pathToPixels(path, transform) {
  const pixels = new Float32Array(path.length - (path.length % 2));
  for (let i = 0; i + 1 < path.length; i += 2) {
    pixels[i] = transform.x(path[i]);
    pixels[i + 1] = transform.y(path[i + 1]);
  }
  return pixels;
}

/**
 * Grid values mapped onto [0, 1]: linearly, or (mode "log") as log(1 + z - min) for
 * functions spanning orders of magnitude. Non-finite values become NaN.
 */
export function normaliseGrid(values, mode = "linear") {
  let low = Infinity;
  let high = -Infinity;
  for (const value of values) {
    if (!Number.isFinite(value)) continue;
    if (value < low) low = value;
    if (value > high) high = value;
  }
  const result = new Float32Array(values.length);
  if (!(low <= high)) return result.fill(NaN);
  const log = mode === "log";
  const span = log ? Math.log1p(high - low) : high - low;
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    if (!Number.isFinite(value)) {
      result[i] = NaN;
    } else if (span === 0) {
      result[i] = 0;
    } else {
      result[i] = (log ? Math.log1p(value - low) : value - low) / span;
    }
  }
  return result;
}

/** A colour map through evenly spaced [r, g, b] stops: t in [0, 1] -> [r, g, b] (0..255). */
export function colourRamp(stops) {
  const last = stops.length - 1;
  return (t) => {
    const clamped = Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0;
    const position = clamped * last;
    const index = Math.min(last - 1, Math.floor(position));
    const fraction = position - index;
    const a = stops[index];
    const b = stops[index + 1];
    return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * fraction));
  };
}

/** Low values dark blue, through teal and green, to pale yellow: the contour map. */
export const sequential = colourRamp([[28, 35, 92], [37, 92, 140], [42, 148, 145], [110, 196, 118], [245, 240, 180]]);

/** Orange for negative, white for zero, blue for positive (t = 0, 0.5, 1). */
export const diverging = colourRamp([[230, 120, 30], [245, 195, 140], [248, 248, 248], [150, 195, 230], [40, 110, 190]]);

/** "#4c72b0" -> [76, 114, 176]. */
export function hexToRgb(hex) {
  const value = parseInt(hex.replace("#", ""), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

/** The value at fractional grid position (gx, gy) of a row-major nx-by-ny grid, bilinearly. */
export function bilinear(grid, nx, ny, gx, gy) {
  const x = Math.min(nx - 1, Math.max(0, gx));
  const y = Math.min(ny - 1, Math.max(0, gy));
  const i = Math.min(nx - 2, Math.floor(x));
  const j = Math.min(ny - 2, Math.floor(y));
  const fx = x - i;
  const fy = y - j;
  const row = j * nx;
  const top = grid[row + i] * (1 - fx) + grid[row + i + 1] * fx;
  const bottom = grid[row + nx + i] * (1 - fx) + grid[row + nx + i + 1] * fx;
  return top * (1 - fy) + bottom * fy;
}

/**
 * An RGBA image (width × height × 4 bytes) of a grid of values in [0, 1] (row 0 is the
 * bottom of the plot): filled bands, ``levels`` of them, with a darker line where the band
 * changes (the contour lines). Pixels of NaN values are transparent.
 */
export function contourImage(normalised, nx, ny, width, height, { levels = 18, colourMap = sequential } = {}) {
  const image = new Uint8ClampedArray(width * height * 4);
  const bands = new Int16Array(width * height);
  const sx = (nx - 1) / Math.max(1, width - 1);
  const sy = (ny - 1) / Math.max(1, height - 1);
  for (let py = 0; py < height; py += 1) {
    const gy = (height - 1 - py) * sy;
    for (let px = 0; px < width; px += 1) {
      const value = bilinear(normalised, nx, ny, px * sx, gy);
      bands[py * width + px] = Number.isFinite(value) ? Math.min(levels - 1, Math.floor(value * levels)) : -1;
    }
  }
  const palette = Array.from({ length: levels }, (_, band) => colourMap((band + 0.5) / levels));
  for (let p = 0; p < bands.length; p += 1) {
    const band = bands[p];
    if (band < 0) continue;
    const px = p % width;
    const edge = (px + 1 < width && bands[p + 1] !== band) || (p + width < bands.length && bands[p + width] !== band);
    const [r, g, b] = palette[band];
    const shade = edge ? 0.7 : 1;
    image[4 * p] = r * shade;
    image[4 * p + 1] = g * shade;
    image[4 * p + 2] = b * shade;
    image[4 * p + 3] = 255;
  }
  return image;
}

/**
 * Coalesces redraw requests: however often ``request()`` is called, ``draw`` runs at most
 * once per animation frame. ``cancel()`` drops a pending frame (call it in cleanup).
 */
export function createFrameScheduler(draw, raf = globalThis.requestAnimationFrame, caf = globalThis.cancelAnimationFrame) {
  let handle = null;
  return {
    request() {
      if (handle !== null) return;
      handle = raf(() => {
        handle = null;
        draw();
      });
    },
    cancel() {
      if (handle !== null) caf(handle);
      handle = null;
    },
    get pending() {
      return handle !== null;
    },
  };
}

/**
 * The play loop: while playing, every animation frame sends one step request (through
 * ``send``) unless the previous one is unanswered; ``acknowledge()`` (on the kernel's
 * reply) lets the next one go. Backpressure, not timers, sets the pace: a busy kernel
 * gets one request at a time. ``onChange(playing)`` hears starts and stops.
 */
export function createPlayLoop({ send, raf = globalThis.requestAnimationFrame, caf = globalThis.cancelAnimationFrame, onChange = () => {} }) {
  let playing = false;
  let waiting = false;
  let handle = null;
  let sent = 0;

  function frame(time) {
    handle = null;
    if (!playing) return;
    if (!waiting) {
      waiting = true;
      sent += 1;
      send(sent, time);
    }
    handle = raf(frame);
  }

  const loop = {
    start() {
      if (playing) return;
      playing = true;
      onChange(true);
      if (handle === null) handle = raf(frame);
    },
    stop() {
      if (handle !== null) caf(handle);
      handle = null;
      if (!playing) return;
      playing = false;
      onChange(false);
    },
    toggle() {
      if (playing) loop.stop();
      else loop.start();
    },
    acknowledge() {
      waiting = false;
    },
    get playing() {
      return playing;
    },
    get waiting() {
      return waiting;
    },
  };
  return loop;
}

/**
 * How many steps one request should take to play at ``rate`` steps per second: the time
 * since the previous request times the rate (so a slow kernel takes more steps per request
 * and keeps the pace), at least 1 and at most one second's worth (a page that stalled does
 * not jump far ahead). ``last`` is null for the first request.
 */
export function stepsFor(rate, now, last) {
  const wanted = last === null || !Number.isFinite(last) ? rate / 60 : (rate * (now - last)) / 1000;
  return Math.max(1, Math.min(Math.ceil(rate), Math.round(wanted)));
}

/** The value of the contour map at normalised position t in [0, 1] (the inverse of normaliseGrid). */
export function valueAt(t, low, high, mode = "linear") {
  return mode === "log" ? low + Math.expm1(t * Math.log1p(high - low)) : low + t * (high - low);
}

/** Every ``stride``-th point of a path of [step, value] points, the last always kept: at most ``limit``. */
export function thinPoints(points, limit = 600) {
  if (points.length <= limit) return points;
  const stride = Math.ceil(points.length / limit);
  const kept = points.filter((_, i) => i % stride === 0);
  if (kept[kept.length - 1] !== points[points.length - 1]) kept.push(points[points.length - 1]);
  return kept;
}

/** A short number for the state panel: 4 significant digits, exponents when tiny or huge. */
export function formatNumber(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "-∞";
  if (value === 0) return "0";
  const size = Math.abs(value);
  if (size >= 1e5 || size < 1e-3) return value.toExponential(2).replace("e+", "e");
  return String(Number(value.toPrecision(4)));
}

/** A value for a data-testid: lower case, letters, digits and dashes. */
export function testId(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** Which inputs an optimizer's row gets: [trait key, index in a list value or null, label, min, max]. */
export function controlsFor(setting) {
  const controls = [["lr", null, "lr", 0, null]];
  if ("momentum" in setting) controls.push(["momentum", null, "momentum", 0, 0.999]);
  if ("betas" in setting) controls.push(["betas", 0, "β₁", 0, 0.999], ["betas", 1, "β₂", 0, 0.99999]);
  if ("alpha" in setting) controls.push(["alpha", null, "α", 0, 1]);
  return controls;
}

