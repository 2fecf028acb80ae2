// A widget snapshot's data (`application/vnd.vizgrad.snapshot+json`, written by
// vizgrad/widgets/snapshot.py) as the state of a model that lives in the page: pure, so the
// unit tests read it without a browser.

export const SNAPSHOT_MIME_TYPE = "application/vnd.vizgrad.snapshot+json";
export const WIDGET_VIEW_MIME_TYPE = "application/vnd.jupyter.widget-view+json";
export const SNAPSHOT_SCHEMA = "vizgrad.snapshot";
export const SNAPSHOT_NOTE = "snapshot: run the cell to make it live";

/** The bytes of a base64 text, as a DataView (what ipywidgets gives a live widget for a binary trait). */
export function base64View(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return new DataView(bytes.buffer);
}

function copyPath(state, path) {
  // a fresh copy of each container on the path, so the saved output is never changed
  let target = state;
  for (const key of path.slice(0, -1)) {
    const inner = target[key];
    if (inner === null || typeof inner !== "object") {
      throw new Error(`a buffer's path ${JSON.stringify(path)} is not in the state`);
    }
    target[key] = Array.isArray(inner) ? [...inner] : { ...inner };
    target = target[key];
  }
  return target;
}

/**
 * The widget state of ``snapshot``: its ``state`` with each buffer back at its path as a
 * DataView, and nothing playing (no kernel would step it). Throws, saying why, when the
 * data is no vizgrad snapshot or names no module of ``modules``.
 */
export function snapshotState(snapshot, modules) {
  if (snapshot?.schema !== SNAPSHOT_SCHEMA || typeof snapshot.state !== "object" || snapshot.state === null) {
    throw new Error(`this output is not a vizgrad widget snapshot (its 'schema' is not '${SNAPSHOT_SCHEMA}')`);
  }
  if (modules && !Object.hasOwn(modules, snapshot.module)) {
    throw new Error(`this snapshot is of a widget this extension cannot draw ('${snapshot.module}'): update vizgrad`);
  }
  const state = { ...snapshot.state };
  for (const { path, data } of snapshot.buffers ?? []) {
    if (!Array.isArray(path) || !path.length) throw new Error("a snapshot buffer has no path");
    copyPath(state, path)[path.at(-1)] = base64View(data);
  }
  if ("playing" in state) state.playing = false;
  return state;
}

/** The widget view's data beside a snapshot in one output, when it names a model. */
export function widgetView(data) {
  const view = data?.[WIDGET_VIEW_MIME_TYPE];
  return view && typeof view.model_id === "string" && view.model_id ? view : null;
}
