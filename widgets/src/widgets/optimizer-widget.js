// The optimizer race (vizgrad.widgets.OptimizerView): contours of a 2-D function drawn
// once per function, the optimizers' paths over them, per-optimizer hyperparameter
// controls and internal state. Python owns the numbers; this module draws traits and
// sends requests. Redraws happen at most once per animation frame; Play sends one step
// request per frame while the previous one has been answered.

import { h, listen } from "../dom.js";
import {
  contourImage, controlsFor, createFrameScheduler, createPlayLoop, formatNumber, makeTransform, normaliseGrid,
  pathToPixels, splitPaths, testId, toFloat32,
} from "./optimizer-core.js";
import "./optimizer-widget.css";

const SIZE = 400;

function controlId(key, index) {
  return key === "betas" ? `beta${index + 1}` : key;
}

function render({ model, el }) {
  const cleanups = [];
  const on = (event, handler) => {
    model.on(event, handler);
    cleanups.push(() => model.off(event, handler));
  };
  const listenTo = (target, type, handler) => cleanups.push(listen(target, type, handler));
  const save = (name, value) => {
    model.set(name, value);
    model.save_changes();
  };

  // --- toolbar ------------------------------------------------------------------
  const functionSelect = h("select", { "data-testid": "optimizer-function", "aria-label": "function" });
  const stepButton = h("button", { type: "button", "data-testid": "optimizer-step", title: "one step of every optimizer" }, "Step");
  const playButton = h("button", { type: "button", "data-testid": "optimizer-play", "aria-pressed": "false" }, "Play");
  const resetButton = h("button", { type: "button", "data-testid": "optimizer-reset", title: "back to the start point, fresh state" }, "Reset");
  const speedSelect = h("select", { "data-testid": "optimizer-speed", "aria-label": "steps per frame" },
    [1, 2, 5, 10, 25].map((n) => h("option", { value: n }, `${n} step${n > 1 ? "s" : ""}/frame`)));
  const stepCount = h("span", { class: "vg-opt-count", "data-testid": "optimizer-step-count" });
  const toolbar = h("div", { class: "vg-opt-toolbar" }, [functionSelect, stepButton, playButton, resetButton, speedSelect, stepCount]);

  // --- plot ---------------------------------------------------------------------
  const canvas = h("canvas", { class: "vg-opt-canvas", "data-testid": "optimizer-canvas", width: SIZE, height: SIZE,
    title: "click to start the race from that point" });
  const caption = h("div", { class: "vg-opt-caption", "data-testid": "optimizer-formula" });
  const readout = h("div", { class: "vg-opt-readout", "data-testid": "optimizer-readout" }, "\u00a0");
  const plot = h("div", { class: "vg-opt-plot" }, [canvas, caption, readout]);
  const cards = h("div", { class: "vg-opt-cards" });
  const root = h("div", { class: "vg-opt", "data-testid": "optimizer-view" }, [toolbar, h("div", { class: "vg-opt-body" }, [plot, cards])]);
  el.append(root);

  let contour = null; // a detached canvas holding the contour image at the current pixel size
  let cardViews = new Map();
  let cardCleanups = [];

  function pixelSize() {
    const ratio = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
    return Math.round(SIZE * ratio);
  }

  function surface() {
    return model.get("surface") || {};
  }

  function ensureContour(size) {
    if (contour && contour.width === size) return;
    const [ny, nx] = model.get("grid_shape") || [0, 0];
    const values = toFloat32(model.get("grid"));
    contour = document.createElement("canvas");
    contour.width = size;
    contour.height = size;
    if (nx < 2 || ny < 2 || values.length < nx * ny) return;
    const pixels = contourImage(normaliseGrid(values, surface().scale), nx, ny, size, size);
    contour.getContext("2d").putImageData(new ImageData(pixels, size, size), 0, 0);
  }

  function drawMarker(context, x, y, radius, fill, stroke) {
    context.beginPath();
    context.arc(x, y, radius, 0, 2 * Math.PI);
    context.fillStyle = fill;
    context.fill();
    context.lineWidth = 1.5;
    context.strokeStyle = stroke;
    context.stroke();
  }

  function drawCanvas() {
    const size = pixelSize();
    if (canvas.width !== size) {
      canvas.width = size;
      canvas.height = size;
    }
    ensureContour(size);
    const context = canvas.getContext("2d");
    const scaleUp = size / SIZE;
    context.clearRect(0, 0, size, size);
    context.drawImage(contour, 0, 0);
    const domain = surface().domain || [0, 1, 0, 1];
    const transform = makeTransform(domain, size, size);
    for (const [mx, my] of surface().minima || []) {
      const x = transform.x(mx);
      const y = transform.y(my);
      context.strokeStyle = "#ffffff";
      context.lineWidth = 2 * scaleUp;
      context.beginPath();
      context.moveTo(x - 6 * scaleUp, y - 6 * scaleUp);
      context.lineTo(x + 6 * scaleUp, y + 6 * scaleUp);
      context.moveTo(x + 6 * scaleUp, y - 6 * scaleUp);
      context.lineTo(x - 6 * scaleUp, y + 6 * scaleUp);
      context.stroke();
    }
    const settings = model.get("settings") || [];
    const rows = model.get("state_rows") || [];
    const paths = splitPaths(toFloat32(model.get("path_data")), model.get("path_lengths") || []);
    paths.forEach((path, index) => {
      const colour = (settings[index] || {}).colour || "#333333";
      const pixels = pathToPixels(path, transform);
      if (pixels.length < 2) return;
      context.lineJoin = "round";
      for (const [width, style] of [[4 * scaleUp, "rgba(255,255,255,0.6)"], [2 * scaleUp, colour]]) {
        context.beginPath();
        context.moveTo(pixels[0], pixels[1]);
        for (let i = 2; i < pixels.length; i += 2) context.lineTo(pixels[i], pixels[i + 1]);
        context.lineWidth = width;
        context.strokeStyle = style;
        context.stroke();
      }
      const end = pixels.length - 2;
      const diverged = (rows[index] || {}).status === "diverged";
      drawMarker(context, pixels[end], pixels[end + 1], 5 * scaleUp, diverged ? "#ffffff" : colour, diverged ? colour : "#ffffff");
    });
    const start = model.get("start");
    if (start && start.length === 2) {
      drawMarker(context, transform.x(start[0]), transform.y(start[1]), 4 * scaleUp, "#111111", "#ffffff");
    }
  }

  // --- optimizer cards -----------------------------------------------------------
  function buildCards() {
    const settings = model.get("settings") || [];
    for (const cleanup of cardCleanups.splice(0)) cleanup();
    cards.replaceChildren();
    cardViews = new Map();
    settings.forEach((setting, index) => {
      const id = testId(setting.name);
      const inputs = controlsFor(setting).map(([key, position, label, min, max]) => {
        const input = h("input", {
          type: "number", step: "any", min, max: max === null ? undefined : max, "aria-label": `${setting.name} ${label}`,
          "data-testid": `optimizer-${controlId(key, position)}-${id}`,
        });
        cardCleanups.push(listen(input, "change", () => {
          const value = Number(input.value);
          const low = min;
          const high = max === null ? Infinity : max;
          const current = (model.get("settings") || [])[index];
          if (!current || !Number.isFinite(value) || value < low || value > high) {
            input.value = String(position === null ? current[key] : current[key][position]);
            return;
          }
          const next = (model.get("settings") || []).map((entry) => ({ ...entry }));
          if (position === null) next[index][key] = value;
          else next[index][key] = next[index][key].map((old, i) => (i === position ? value : old));
          save("settings", next);
        }));
        return { key, position, input, label: h("label", {}, [h("span", {}, label), input]) };
      });
      const status = h("span", { class: "vg-opt-status", "data-testid": `optimizer-status-${id}` });
      const summary = h("div", { class: "vg-opt-summary" });
      const table = h("table", { class: "vg-opt-state", "data-testid": `optimizer-state-${id}` });
      const card = h("div", { class: "vg-opt-card", "data-testid": `optimizer-card-${id}` }, [
        h("div", { class: "vg-opt-card-head" }, [
          h("span", { class: "vg-opt-swatch", style: `background:${setting.colour}` }),
          h("strong", {}, setting.name), h("span", { class: "vg-opt-kind" }, setting.kind), status]),
        h("div", { class: "vg-opt-controls" }, inputs.map((entry) => entry.label)), summary, table]);
      cards.append(card);
      cardViews.set(setting.name, { inputs, status, summary, table });
    });
    updateInputs();
  }

  function updateInputs() {
    for (const setting of model.get("settings") || []) {
      const view = cardViews.get(setting.name);
      if (!view) continue;
      for (const { key, position, input } of view.inputs) {
        const value = position === null ? setting[key] : (setting[key] || [])[position];
        if (input !== input.ownerDocument.activeElement) input.value = String(value);
      }
    }
  }

  function updateStates() {
    for (const row of model.get("state_rows") || []) {
      const view = cardViews.get(row.name);
      if (!view) continue;
      view.status.textContent = row.status === "running" ? "" : row.status;
      view.summary.textContent = `step ${row.step} · f = ${formatNumber(row.value)} · `
        + `(${formatNumber(row.position[0])}, ${formatNumber(row.position[1])})`;
      const lines = row.vectors.map(({ key, label, value }) => h("tr", { "data-key": key }, [
        h("th", {}, label), ...value.map((v) => h("td", {}, formatNumber(v)))]));
      view.table.replaceChildren(h("tr", {}, [h("th", {}, ""), h("th", {}, "x"), h("th", {}, "y")]), ...lines);
    }
  }

  function buildFunctions() {
    functionSelect.replaceChildren(...(model.get("functions") || []).map(({ name, title }) => h("option", { value: name }, title)));
    functionSelect.value = model.get("function");
  }

  // --- drawing, at most once per frame -------------------------------------------------
  let cardsDirty = true;
  const frame = createFrameScheduler(() => {
    if (cardsDirty) {
      cardsDirty = false;
      buildCards();
    }
    drawCanvas();
    updateStates();
    stepCount.textContent = `step ${model.get("step_count")}`;
    const info = surface();
    caption.textContent = info.title ? `${info.title}: f(x, y) = ${info.formula}` : "";
    showPlaying();
  });

  function showPlaying() {
    playButton.textContent = loop.playing ? "Pause" : "Play";
    playButton.setAttribute("aria-pressed", String(loop.playing));
  }
  cleanups.push(() => frame.cancel());

  const loop = createPlayLoop({
    send: (id) => model.send({ type: "step", n: Number(speedSelect.value) || 1, id }),
    onChange: () => showPlaying(),
  });
  cleanups.push(() => loop.stop());

  // --- events ---------------------------------------------------------------------------
  listenTo(stepButton, "click", () => model.send({ type: "step", n: 1 }));
  listenTo(resetButton, "click", () => {
    loop.stop();
    model.send({ type: "reset" });
  });
  listenTo(playButton, "click", () => {
    if (loop.playing) {
      loop.stop();
      save("playing", false);
    } else {
      save("playing", true);
      loop.start();
    }
  });
  listenTo(functionSelect, "change", () => {
    loop.stop();
    save("function", functionSelect.value);
  });
  listenTo(speedSelect, "change", () => save("speed", Number(speedSelect.value)));
  listenTo(canvas, "click", (event) => {
    const box = canvas.getBoundingClientRect();
    const transform = makeTransform(surface().domain || [0, 1, 0, 1], box.width, box.height);
    const [x, y] = transform.invert(event.clientX - box.left, event.clientY - box.top);
    loop.stop();
    save("start", [Number(x.toPrecision(4)), Number(y.toPrecision(4))]);
  });
  listenTo(canvas, "pointermove", (event) => {
    const box = canvas.getBoundingClientRect();
    const [x, y] = makeTransform(surface().domain || [0, 1, 0, 1], box.width, box.height)
      .invert(event.clientX - box.left, event.clientY - box.top);
    readout.textContent = `x = ${formatNumber(x)}, y = ${formatNumber(y)}`;
  });
  listenTo(canvas, "pointerleave", () => {
    readout.textContent = "\u00a0";
  });

  on("msg:custom", (message) => {
    if (!message || message.type !== "stepped") return;
    loop.acknowledge();
    if (!message.running) loop.stop();
  });
  on("change:playing", () => {
    if (!model.get("playing")) loop.stop();
    frame.request();
  });
  on("change:settings", () => {
    const names = (model.get("settings") || []).map((s) => s.name).join("\n");
    if (names !== [...cardViews.keys()].join("\n")) cardsDirty = true;
    else updateInputs();
    frame.request();
  });
  on("change:functions", buildFunctions);
  on("change:function", () => {
    functionSelect.value = model.get("function");
  });
  on("change:speed", () => {
    speedSelect.value = String(model.get("speed"));
  });
  on("change:grid", () => {
    contour = null;
    frame.request();
  });
  for (const name of ["surface", "grid_shape", "path_data", "path_lengths", "state_rows", "step_count", "start"]) {
    on(`change:${name}`, () => frame.request());
  }

  buildFunctions();
  speedSelect.value = String(model.get("speed") || 1);
  frame.request();

  return () => {
    for (const cleanup of [...cardCleanups.splice(0), ...cleanups.splice(0).reverse()]) cleanup();
    root.remove();
  };
}

export default { render };
