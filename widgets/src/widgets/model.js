// Reading an anywidget model: change listeners that clean up after themselves, and the
// binary number series that vizgrad's widgets send (float32 buffers, not JSON lists).

/** Call ``handler`` when any of the traits ``names`` changes; returns the cleanup. */
export function onChange(model, names, handler) {
  const events = names.map((name) => `change:${name}`);
  for (const event of events) model.on(event, handler);
  return () => {
    for (const event of events) model.off(event, handler);
  };
}

/**
 * A float32 buffer as Float32Array. ipywidgets hands binary trait values over as
 * DataView; ArrayBuffers, typed arrays and plain arrays (tests) are accepted too.
 */
export function floats(value) {
  if (value === null || value === undefined) return new Float32Array(0);
  if (value instanceof Float32Array) return value;
  if (Array.isArray(value)) return Float32Array.from(value, (v) => (v === null ? Number.NaN : v));
  if (value instanceof ArrayBuffer) return new Float32Array(value.slice(0, value.byteLength - (value.byteLength % 4)));
  if (ArrayBuffer.isView(value)) {
    const { buffer, byteOffset, byteLength } = value;
    const usable = byteLength - (byteLength % 4);
    if (byteOffset % 4 === 0) return new Float32Array(buffer, byteOffset, usable / 4);
    return new Float32Array(buffer.slice(byteOffset, byteOffset + usable)); // unaligned: copy
  }
  throw new TypeError(`expected a float32 buffer, got ${Object.prototype.toString.call(value)}`);
}

const decodedJson = new WeakMap(); // buffer -> its data: each value is parsed once, however often it is read

/**
 * The value of a trait that Python sends as one buffer of UTF-8 JSON text (a DataView; a
 * graph of thousands of nodes travels much faster so than as nested JSON in the message),
 * parsed once per value; data already parsed (a saved notebook output's) as it is;
 * ``fallback`` while there is none.
 */
export function jsonTrait(model, name, fallback = {}) {
  const value = model.get(name);
  if (!value || !ArrayBuffer.isView(value)) return value ?? fallback;
  let data = decodedJson.get(value);
  if (data === undefined) {
    data = JSON.parse(new TextDecoder().decode(value));
    decodedJson.set(value, data);
  }
  return data;
}

/**
 * A series payload ({steps, values, columns, length}; see vizgrad.widgets.base.SeriesBuffer)
 * as one [step, value] list per column; NaN (a gap) becomes null.
 */
export function seriesColumns(payload) {
  if (!payload) return [];
  const steps = floats(payload.steps);
  const values = floats(payload.values);
  const columns = payload.columns ?? 1;
  const length = Math.min(steps.length, Math.floor(values.length / Math.max(1, columns)));
  const result = [];
  for (let column = 0; column < columns; column += 1) {
    const points = new Array(length);
    for (let row = 0; row < length; row += 1) {
      const value = values[row * columns + column];
      points[row] = [steps[row], Number.isFinite(value) ? value : null];
    }
    result.push(points);
  }
  return result;
}

/** Set traits from the view and send them to Python. */
export function save(model, changes) {
  for (const [name, value] of Object.entries(changes)) model.set(name, value);
  model.save_changes();
}
