// The neural-network playground (vizgrad.widgets.Playground): settings, the network's
// hidden units (each one's response over the input plane), the decision boundary with
// the data, and the train/test loss curves. Python trains; this module draws the float32
// grids it sends on canvases, at most once per animation frame, and while Train is on
// sends one step request per frame once the previous one was answered.

import { h, listen } from "../dom.js";
import {
  createFrameScheduler, createPlayLoop, formatNumber, makeTransform, toFloat32, toUint8,
} from "./optimizer-core.js";
import {
  boundaryImage, choices, classColour, decodeSeries, editHidden, lossGeometry, unitImage,
} from "./playground-core.js";
import "./playground-widget.css";

const BOUNDARY = 320;
const LOSS_W = 320;
const LOSS_H = 110;
const UNIT = 44;
const RATES = [0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3];
const DECAYS = [0, 0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1];
const BATCHES = [1, 4, 8, 16, 32, 64, 128, 256];

function ratio() {
  return Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
}

function select(testid, label, options) {
  return h("label", { class: "vg-pg-field" }, [h("span", {}, label), h("select", { "data-testid": testid, "aria-label": label }, options)]);
}

function fillSelect(element, values, current, text = String) {
  element.replaceChildren(...values.map((value) => h("option", { value: String(value) }, text(value))));
  element.value = String(current);
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

  // --- toolbar and settings ---------------------------------------------------------------
  const trainButton = h("button", { type: "button", class: "vg-pg-train", "data-testid": "playground-train", "aria-pressed": "false" }, "Train");
  const stepButton = h("button", { type: "button", "data-testid": "playground-step" }, "Step");
  const resetButton = h("button", { type: "button", "data-testid": "playground-reset", title: "fresh weights, same data" }, "Reset");
  const speedField = select("playground-speed", "steps/frame", [1, 2, 5, 10, 25].map((n) => h("option", { value: n }, String(n))));
  const status = h("span", { class: "vg-pg-status", "data-testid": "playground-step-count" });
  const toolbar = h("div", { class: "vg-pg-toolbar" }, [trainButton, stepButton, resetButton, speedField, status]);

  const datasetField = select("playground-dataset", "data", []);
  const noiseInput = h("input", { type: "range", min: 0, max: 0.5, step: 0.05, "data-testid": "playground-noise", "aria-label": "noise" });
  const noiseValue = h("span", { class: "vg-pg-value" });
  const noiseField = h("label", { class: "vg-pg-field" }, [h("span", {}, "noise"), noiseInput, noiseValue]);
  const activationField = select("playground-activation", "activation", []);
  const optimizerField = select("playground-optimizer", "optimizer", []);
  const rateField = select("playground-lr", "learning rate", []);
  const decayField = select("playground-l2", "L2", []);
  const batchField = select("playground-batch", "batch", []);
  const settings = h("div", { class: "vg-pg-settings" }, [datasetField, noiseField, activationField, optimizerField, rateField, decayField, batchField]);
  const field = (wrapper) => wrapper.querySelector("select");

  // --- network, boundary, loss ------------------------------------------------------------------
  const addLayer = h("button", { type: "button", "data-testid": "playground-add-layer", title: "add a hidden layer" }, "+ layer");
  const removeLayer = h("button", { type: "button", "data-testid": "playground-remove-layer", title: "remove the last hidden layer" }, "− layer");
  const layersBox = h("div", { class: "vg-pg-layers", "data-testid": "playground-network" });
  const network = h("div", { class: "vg-pg-network" }, [h("div", { class: "vg-pg-network-head" }, [h("strong", {}, "hidden layers"), addLayer, removeLayer]), layersBox]);

  const boundaryCanvas = h("canvas", { class: "vg-pg-boundary", "data-testid": "playground-boundary", width: BOUNDARY, height: BOUNDARY });
  const metrics = h("div", { class: "vg-pg-metrics", "data-testid": "playground-metrics" });
  const lossCanvas = h("canvas", { class: "vg-pg-loss", "data-testid": "playground-loss", width: LOSS_W, height: LOSS_H });
  const output = h("div", { class: "vg-pg-output" }, [h("strong", {}, "output"), boundaryCanvas, metrics, lossCanvas]);
  const root = h("div", { class: "vg-pg", "data-testid": "playground-view" }, [toolbar, settings, h("div", { class: "vg-pg-body" }, [network, output])]);
  el.append(root);

  const boundarySource = document.createElement("canvas");
  let unitCanvases = [];
  let layerCleanups = [];
  let layersKey = "";
  const dirty = { data: true, progress: true };

  // --- drawing --------------------------------------------------------------------------------
  function buildLayers() {
    const widths = model.get("hidden") || [];
    const key = widths.join(",");
    if (key === layersKey) return;
    layersKey = key;
    dirty.progress = true;
    for (const cleanup of layerCleanups.splice(0)) cleanup();
    unitCanvases = [];
    const options = model.get("options") || {};
    const columns = widths.map((width, layer) => {
      const minus = h("button", { type: "button", "data-testid": `playground-layer-${layer}-remove-unit`, title: "one unit fewer" }, "−");
      const plus = h("button", { type: "button", "data-testid": `playground-layer-${layer}-add-unit`, title: "one unit more" }, "+");
      for (const [button, op] of [[minus, "remove-unit"], [plus, "add-unit"]]) {
        layerCleanups.push(listen(button, "click", () => save("hidden", editHidden(model.get("hidden") || [], { op, layer },
          { maxLayers: options.max_layers, maxWidth: options.max_width }))));
      }
      const units = Array.from({ length: width }, (_, unit) => {
        const canvas = h("canvas", { class: "vg-pg-unit", width: 1, height: 1, "data-testid": `playground-unit-${layer}-${unit}`,
          title: `layer ${layer + 1}, unit ${unit + 1}` });
        unitCanvases.push(canvas);
        return canvas;
      });
      return h("div", { class: "vg-pg-layer", "data-testid": `playground-layer-${layer}` }, [
        h("div", { class: "vg-pg-layer-head" }, [minus, h("span", {}, `${width}`), plus]), ...units]);
    });
    layersBox.replaceChildren(...(columns.length ? columns : [h("em", {}, "no hidden layer: a linear classifier")]));
  }

  function drawUnits() {
    const r = model.get("resolution");
    const units = toFloat32(model.get("units"));
    const count = Math.min(unitCanvases.length, Math.floor(units.length / (r * r)));
    for (let unit = 0; unit < count; unit += 1) {
      const canvas = unitCanvases[unit];
      if (canvas.width !== r) {
        canvas.width = r;
        canvas.height = r;
      }
      canvas.getContext("2d").putImageData(new ImageData(unitImage(units, unit, r), r, r), 0, 0);
    }
  }

  function drawBoundary() {
    const size = Math.round(BOUNDARY * ratio());
    if (boundaryCanvas.width !== size) {
      boundaryCanvas.width = size;
      boundaryCanvas.height = size;
    }
    const r = model.get("resolution");
    const classes = model.get("classes");
    const context = boundaryCanvas.getContext("2d");
    context.clearRect(0, 0, size, size);
    const probabilities = toFloat32(model.get("boundary"));
    if (probabilities.length >= classes * r * r) {
      boundarySource.width = r;
      boundarySource.height = r;
      boundarySource.getContext("2d").putImageData(new ImageData(boundaryImage(probabilities, classes, r), r, r), 0, 0);
      context.imageSmoothingEnabled = true;
      context.drawImage(boundarySource, 0, 0, size, size);
    }
    const points = toFloat32(model.get("points"));
    const labels = toUint8(model.get("labels"));
    const isTest = toUint8(model.get("is_test"));
    const transform = makeTransform(model.get("domain"), size, size);
    const radius = 3.2 * ratio();
    for (let i = 0; i < labels.length && 2 * i + 1 < points.length; i += 1) {
      context.beginPath();
      context.arc(transform.x(points[2 * i]), transform.y(points[2 * i + 1]), radius, 0, 2 * Math.PI);
      context.fillStyle = classColour(labels[i]);
      context.fill();
      context.lineWidth = ratio();
      context.strokeStyle = isTest[i] ? "#1f2933" : "#ffffff";
      context.stroke();
    }
  }

  function drawLoss() {
    const scaleUp = ratio();
    const width = Math.round(LOSS_W * scaleUp);
    const height = Math.round(LOSS_H * scaleUp);
    if (lossCanvas.width !== width) {
      lossCanvas.width = width;
      lossCanvas.height = height;
    }
    const context = lossCanvas.getContext("2d");
    context.setTransform(scaleUp, 0, 0, scaleUp, 0, 0);
    context.clearRect(0, 0, LOSS_W, LOSS_H);
    const { steps, series } = decodeSeries(model.get("losses"));
    const { lines, yMax, xMax } = lossGeometry(steps, series, LOSS_W, LOSS_H);
    context.font = "10px sans-serif";
    context.fillStyle = "#52606d";
    context.strokeStyle = "#cbd2d9";
    context.lineWidth = 1;
    context.beginPath();
    context.moveTo(34, 8);
    context.lineTo(34, LOSS_H - 16);
    context.lineTo(LOSS_W - 8, LOSS_H - 16);
    context.stroke();
    context.textAlign = "right";
    context.fillText(formatNumber(yMax), 31, 14);
    context.fillText("0", 31, LOSS_H - 16);
    context.fillText(`step ${formatNumber(xMax)}`, LOSS_W - 8, LOSS_H - 4);
    const styles = [["#1f2933", "train"], ["#dd8452", "test"]];
    lines.forEach((line, index) => {
      if (line.length < 2) return;
      const [colour] = styles[index % styles.length];
      context.beginPath();
      context.moveTo(line[0], line[1]);
      for (let i = 2; i < line.length; i += 2) context.lineTo(line[i], line[i + 1]);
      context.strokeStyle = colour;
      context.lineWidth = 1.5;
      context.stroke();
    });
    context.textAlign = "left";
    styles.forEach(([colour, name], index) => {
      context.fillStyle = colour;
      context.fillText(`— ${name}`, 42 + 52 * index, 14);
    });
  }

  function updateSettings() {
    const options = model.get("options") || {};
    fillSelect(field(datasetField), options.datasets || [], model.get("dataset"));
    fillSelect(field(activationField), options.activations || [], model.get("activation"));
    fillSelect(field(optimizerField), options.optimizers || [], model.get("optimizer"));
    fillSelect(field(rateField), choices(RATES, model.get("learning_rate")), model.get("learning_rate"));
    fillSelect(field(decayField), choices(DECAYS, model.get("weight_decay")), model.get("weight_decay"));
    fillSelect(field(batchField), choices(BATCHES, model.get("batch_size")), model.get("batch_size"));
    noiseInput.value = String(model.get("noise"));
    noiseValue.textContent = formatNumber(model.get("noise"));
    field(speedField).value = String(model.get("speed") || 1);
    const hidden = model.get("hidden") || [];
    addLayer.disabled = hidden.length >= (options.max_layers || 6);
    removeLayer.disabled = hidden.length === 0;
  }

  function updateText() {
    const m = model.get("metrics") || {};
    status.textContent = `step ${m.step ?? 0} · epoch ${formatNumber(m.epoch ?? 0)}`;
    metrics.textContent = `train loss ${formatNumber(m.train_loss)} · test loss ${formatNumber(m.test_loss)} · `
      + `test accuracy ${m.test_accuracy === undefined ? "–" : `${(100 * m.test_accuracy).toFixed(1)}%`}`;
    showPlaying();
  }

  function showPlaying() {
    const playing = loop.playing || Boolean(model.get("playing"));
    trainButton.textContent = playing ? "Pause" : "Train";
    trainButton.setAttribute("aria-pressed", String(playing));
  }

  const frame = createFrameScheduler(() => {
    if (dirty.data) {
      dirty.data = false;
      updateSettings();
      buildLayers();
    }
    if (dirty.progress) {
      dirty.progress = false;
      drawUnits();
      drawLoss();
    }
    drawBoundary();
    updateText();
  });
  cleanups.push(() => frame.cancel());
  const redraw = (what) => () => {
    if (what) dirty[what] = true;
    frame.request();
  };

  const loop = createPlayLoop({
    send: (id) => model.send({ type: "step", n: Number(field(speedField).value) || 1, id }),
    onChange: () => showPlaying(),
  });
  cleanups.push(() => loop.stop());

  // --- events ------------------------------------------------------------------------------------
  listenTo(trainButton, "click", () => {
    if (loop.playing || model.get("playing")) {
      loop.stop();
      model.send({ type: "stop" });
      save("playing", false);
    } else {
      save("playing", true);
      loop.start();
    }
  });
  listenTo(stepButton, "click", () => model.send({ type: "step", n: 1 }));
  listenTo(resetButton, "click", () => {
    loop.stop();
    model.send({ type: "reset" });
  });
  listenTo(addLayer, "click", () => save("hidden", editHidden(model.get("hidden") || [], { op: "add-layer" },
    { maxLayers: (model.get("options") || {}).max_layers, maxWidth: (model.get("options") || {}).max_width })));
  listenTo(removeLayer, "click", () => save("hidden", editHidden(model.get("hidden") || [], { op: "remove-layer" })));
  listenTo(field(datasetField), "change", () => save("dataset", field(datasetField).value));
  listenTo(field(activationField), "change", () => save("activation", field(activationField).value));
  listenTo(field(optimizerField), "change", () => save("optimizer", field(optimizerField).value));
  listenTo(field(rateField), "change", () => save("learning_rate", Number(field(rateField).value)));
  listenTo(field(decayField), "change", () => save("weight_decay", Number(field(decayField).value)));
  listenTo(field(batchField), "change", () => save("batch_size", Number(field(batchField).value)));
  listenTo(field(speedField), "change", () => save("speed", Number(field(speedField).value)));
  listenTo(noiseInput, "input", () => {
    noiseValue.textContent = formatNumber(Number(noiseInput.value));
  });
  listenTo(noiseInput, "change", () => save("noise", Number(noiseInput.value)));

  on("msg:custom", (message) => {
    if (message && message.type === "stepped") loop.acknowledge();
  });
  on("change:playing", () => {
    if (!model.get("playing")) loop.stop();
    showPlaying();
  });
  for (const name of ["dataset", "noise", "hidden", "activation", "optimizer", "learning_rate", "weight_decay", "batch_size", "options", "speed"]) {
    on(`change:${name}`, redraw("data"));
  }
  for (const name of ["units", "losses", "unit_layers"]) on(`change:${name}`, redraw("progress"));
  for (const name of ["boundary", "points", "labels", "is_test", "domain", "classes", "metrics", "step_count"]) {
    on(`change:${name}`, redraw());
  }

  frame.request();

  return () => {
    for (const cleanup of [...layerCleanups.splice(0), ...cleanups.splice(0).reverse()]) cleanup();
    root.remove();
  };
}

export default { render };
