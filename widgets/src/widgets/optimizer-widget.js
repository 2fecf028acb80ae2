// The optimizer race (vizgrad.widgets.OptimizerView): contours of a 2-D function drawn
// once per function (with axes and a colour bar), the optimizers' trails over them (a
// palette colour over a dark outline edged with a light halo, so that each stands out on
// every part of the map), f against the step beside it, and below that one card per
// optimizer (in a panel that scrolls when they are many): hyperparameter controls, status
// (as Python computed it) and internal state. Python owns the numbers; this module draws
// traits and sends requests.
// Redraws happen at most once per animation frame; Play sends one step request per frame
// while the previous one has been answered, each asking for the steps that the chosen
// speed (steps per second) owes since the last.

import { lineChart, niceTicks, tickLabel } from "../charts.js";
import { h, listen, s } from "../dom.js";
import {
  contourImage, controlsFor, createFrameScheduler, createPlayLoop, formatNumber, makeTransform, normaliseGrid,
  pathToPixels, sequential, splitPaths, stepsFor, testId, thinPoints, toFloat32, valueAt,
} from "./optimizer-core.js";
import "./optimizer-widget.css";

const SIZE = 360;
const AXIS = 44;           // px for the y axis at the left, and the x axis below (height 30)
const SPEEDS = [25, 50, 100, 200, 500, 1000];
const VALUES_W = 330;
const VALUES_H = 210;
const STATUS_TEXT = { running: "running", paused: "paused", finished: "✓ finished", diverged: "✗ diverged", stopped: "out of steps" };

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
  const speedSelect = h("select", { "data-testid": "optimizer-speed", "aria-label": "speed (steps per second)" },
    SPEEDS.map((n) => h("option", { value: n }, `${n} steps/s`)));
  const stepCount = h("span", { class: "vg-opt-count", "data-testid": "optimizer-step-count" });
  const toolbar = h("div", { class: "vg-opt-toolbar" }, [functionSelect, stepButton, playButton, resetButton, speedSelect, stepCount]);

  // --- plot ---------------------------------------------------------------------
  const surfaceCanvas = h("canvas", { class: "vg-opt-surface", "data-testid": "optimizer-surface", width: SIZE, height: SIZE });
  const canvas = h("canvas", { class: "vg-opt-canvas", "data-testid": "optimizer-canvas", width: SIZE, height: SIZE,
    title: "click to start the race from that point" });
  const yAxis = s("svg", { class: "vg-opt-axis", "data-testid": "optimizer-y-axis", width: AXIS, height: SIZE });
  const xAxis = s("svg", { class: "vg-opt-axis", "data-testid": "optimizer-x-axis", width: SIZE, height: 30 });
  const colourBar = s("svg", { class: "vg-opt-axis", "data-testid": "optimizer-colour-bar", width: 64, height: SIZE });
  const stage = h("div", { class: "vg-opt-stage" }, [surfaceCanvas, canvas]);
  const frameGrid = h("div", { class: "vg-opt-frame" }, [yAxis, stage, colourBar, h("span", {}), xAxis]);
  const caption = h("div", { class: "vg-opt-caption", "data-testid": "optimizer-formula" });
  const readout = h("div", { class: "vg-opt-readout", "data-testid": "optimizer-readout" }, "\u00a0");
  const plot = h("div", { class: "vg-opt-plot" }, [frameGrid, caption, readout]);
  const valueChart = h("div", { class: "vg-opt-values", "data-testid": "optimizer-values" });
  const cards = h("div", { class: "vg-opt-cards" });
  const side = h("div", { class: "vg-opt-side" }, [valueChart, cards]);
  const root = h("div", { class: "vg-widget vg-themed vg-opt", "data-testid": "optimizer-view" },
    [toolbar, h("div", { class: "vg-opt-body" }, [plot, side])]);
  el.append(root);

  let contour = null; // a detached canvas holding the contour image at the current pixel size
  let range = null;   // [low, high] of the grid's finite values
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
    surfaceCanvas.width = size;
    surfaceCanvas.height = size;
    range = null;
    if (nx < 2 || ny < 2 || values.length < nx * ny) return;
    let low = Infinity;
    let high = -Infinity;
    for (const value of values) {
      if (!Number.isFinite(value)) continue;
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
    range = low <= high ? [low, high] : null;
    const pixels = contourImage(normaliseGrid(values, surface().scale), nx, ny, size, size);
    contour.getContext("2d").putImageData(new ImageData(pixels, size, size), 0, 0);
    surfaceCanvas.getContext("2d").drawImage(contour, 0, 0);
    drawAxes();
  }

  function drawAxes() {
    const [x0, x1, y0, y1] = surface().domain || [0, 1, 0, 1];
    const transform = makeTransform([x0, x1, y0, y1], SIZE, SIZE);
    yAxis.replaceChildren(...niceTicks(y0, y1, 5).flatMap((tick) => [
      s("line", { x1: AXIS - 5, x2: AXIS, y1: transform.y(tick), y2: transform.y(tick), class: "vg-opt-tick-mark" }),
      s("text", { x: AXIS - 8, y: transform.y(tick), "text-anchor": "end", "dominant-baseline": "middle" }, tickLabel(tick)),
    ]), s("text", { x: 10, y: 12, class: "vg-opt-axis-name" }, "y"));
    xAxis.replaceChildren(...niceTicks(x0, x1, 5).flatMap((tick) => [
      s("line", { x1: transform.x(tick), x2: transform.x(tick), y1: 0, y2: 5, class: "vg-opt-tick-mark" }),
      s("text", { x: transform.x(tick), y: 18, "text-anchor": "middle" }, tickLabel(tick)),
    ]), s("text", { x: SIZE - 4, y: 28, "text-anchor": "end", class: "vg-opt-axis-name" }, "x"));
    // the colour bar: the contour map from low (bottom) to high, labelled with f
    const mode = surface().scale;
    const stops = Array.from({ length: 11 }, (_, i) => s("stop", { offset: `${i * 10}%`, "stop-color": `rgb(${sequential(1 - i / 10).join(",")})` }));
    const id = `vg-opt-bar-${Math.random().toString(36).slice(2, 9)}`;
    const parts = [
      s("defs", {}, s("linearGradient", { id, x1: 0, x2: 0, y1: 0, y2: 1 }, stops)),
      s("rect", { x: 4, y: 0, width: 12, height: SIZE, fill: `url(#${id})`, class: "vg-opt-bar" }),
    ];
    if (range) {
      for (const t of [0, 0.25, 0.5, 0.75, 1]) {
        const y = Math.min(SIZE - 6, Math.max(6, SIZE * (1 - t)));
        parts.push(s("text", { x: 20, y, "dominant-baseline": "middle" }, tickLabel(Number(valueAt(t, ...range, mode).toPrecision(2)))));
      }
    }
    parts.push(s("title", {}, mode === "log" ? "f, on a log(1 + f − min) scale" : "f"));
    colourBar.replaceChildren(...parts);
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
    const domain = surface().domain || [0, 1, 0, 1];
    const transform = makeTransform(domain, size, size);
    for (const [mx, my] of surface().minima || []) {
      const x = transform.x(mx);
      const y = transform.y(my);
      context.strokeStyle = "#111111";
      context.lineWidth = 2.5 * scaleUp;
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
    const outline = model.get("outline") || "#000000";
    const halo = model.get("halo") || "#ffffff";
    paths.forEach((path, index) => {
      const colour = (settings[index] || {}).colour || "#ffffff";
      const pixels = pathToPixels(path, transform);
      if (pixels.length < 2) return;
      context.lineJoin = "round";
      context.lineCap = "round";
      for (const [width, style] of [[8 * scaleUp, halo], [6 * scaleUp, outline], [3 * scaleUp, colour]]) {
        context.beginPath();
        context.moveTo(pixels[0], pixels[1]);
        for (let i = 2; i < pixels.length; i += 2) context.lineTo(pixels[i], pixels[i + 1]);
        context.lineWidth = width;
        context.strokeStyle = style;
        context.stroke();
      }
      const end = pixels.length - 2;
      const diverged = (rows[index] || {}).status === "diverged";
      drawMarker(context, pixels[end], pixels[end + 1], 5.5 * scaleUp, diverged ? outline : colour, diverged ? colour : outline);
    });
    const start = model.get("start");
    if (start && start.length === 2) {
      drawMarker(context, transform.x(start[0]), transform.y(start[1]), 4 * scaleUp, "#ffffff", outline);
    }
  }

  // --- f against the step, one line per optimizer (log scale when the minimum is known) --
  function drawValues() {
    const settings = model.get("settings") || [];
    const info = surface();
    const minimum = info.minimum ?? null;
    const flat = toFloat32(model.get("value_data"));
    let offset = 0;
    const values = (model.get("path_lengths") || []).map((count) => {
      const line = flat.subarray(Math.min(offset, flat.length), Math.min(offset + count, flat.length));
      offset += count;
      return line;
    });
    const series = values.map((line, index) => ({
      name: (settings[index] || {}).name || `optimizer ${index + 1}`,
      colour: (settings[index] || {}).colour,
      outline: model.get("outline") || "#000000",
      points: thinPoints(Array.from(line, (value, step) => [step, minimum === null ? value : value - minimum])),
    }));
    const chart = lineChart({
      series, xLabel: "step", yLabel: minimum === null ? "f" : "f − f(minimum)", logY: minimum !== null, width: VALUES_W, height: VALUES_H,
    });
    chart.setAttribute("data-testid", "optimizer-value-chart");
    const key = h("div", { class: "vg-opt-legend" }, series.map((line) => h("span", { class: "vg-opt-legend-item" }, [
      h("span", { class: "vg-opt-swatch", style: `background:${line.colour}` }), line.name])));
    valueChart.replaceChildren(h("div", { class: "vg-opt-values-title" }, minimum === null ? "f over the steps" : "f − f(minimum) over the steps (log scale)"), chart, key);
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
          h("strong", {}, setting.name), setting.kind !== setting.name ? h("span", { class: "vg-opt-kind" }, setting.kind) : null, status]),
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
        // the input's root: the document, or the shadow root a view lives in (marimo)
        if (input !== input.getRootNode().activeElement) input.value = String(value);
      }
    }
  }

  function updateStates() {
    for (const row of model.get("state_rows") || []) {
      const view = cardViews.get(row.name);
      if (!view) continue;
      view.status.textContent = row.status === "paused" && row.step === 0 ? "ready" : STATUS_TEXT[row.status] ?? row.status;
      view.status.dataset.status = row.status;
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
    drawValues();
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

  let lastRequest = null;
  const loop = createPlayLoop({
    send: (id, time) => {
      const n = stepsFor(Number(speedSelect.value) || SPEEDS[3], time, lastRequest);
      lastRequest = time;
      model.send({ type: "step", n, id });
    },
    onChange: (playing) => {
      if (playing) lastRequest = null;
      showPlaying();
    },
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
  for (const name of ["surface", "grid_shape", "path_data", "path_lengths", "value_data", "state_rows", "step_count", "start", "halo"]) {
    on(`change:${name}`, () => frame.request());
  }

  buildFunctions();
  speedSelect.value = String(model.get("speed") || SPEEDS[3]);
  frame.request();

  return () => {
    for (const cleanup of [...cardCleanups.splice(0), ...cleanups.splice(0).reverse()]) cleanup();
    root.remove();
  };
}

export default { render };
