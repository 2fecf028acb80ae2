// The neural-network playground (vizgrad.widgets.Playground): settings, the network as
// a diagram (input features, hidden units drawn as their response over the input plane,
// output classes; one edge per weight, coloured by sign and as thick as its size, live),
// a clicked unit's response and incoming weights, the decision boundary with the data,
// and the train/test loss curves. Python trains; this module draws the float32 buffers it
// sends, at most once per animation frame, and while Train is on sends one step request
// per frame once the previous one was answered.

import { lineChart, SERIES_COLOURS } from "../charts.js";
import { h, listen, s } from "../dom.js";
import {
  createFrameScheduler, createPlayLoop, formatNumber, makeTransform, toFloat32, toUint8,
} from "./optimizer-core.js";
import {
  boundaryImage, choices, classColour, classImage, decodeSeries, edgeStyle, editHidden, maxAbs,
  networkLayout, unitImage, unpackLayers,
} from "./playground-core.js";
import { legend } from "./ui.js";
import "./playground-widget.css";

const BOUNDARY = 320;
const LOSS_W = 320;
const LOSS_H = 200;
// train in the theme's text colour, test in the palette's bluish green (neither a class colour)
const LOSS_LINES = [{ name: "train", colour: "currentColor" }, { name: "test", colour: SERIES_COLOURS[2] }];
const NODE = 40;
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
  const regularizationField = select("playground-regularization", "regularisation", []);
  const decayField = select("playground-l2", "rate", []);
  const batchField = select("playground-batch", "batch", []);
  const settings = h("div", { class: "vg-pg-settings" }, [datasetField, noiseField, activationField, optimizerField, rateField,
    regularizationField, decayField, batchField]);
  const field = (wrapper) => wrapper.querySelector("select");

  // --- network, boundary, loss ------------------------------------------------------------------
  const addLayer = h("button", { type: "button", "data-testid": "playground-add-layer", title: "add a hidden layer" }, "+ layer");
  const removeLayer = h("button", { type: "button", "data-testid": "playground-remove-layer", title: "remove the last hidden layer" }, "− layer");
  const edges = s("svg", { class: "vg-pg-edges", "data-testid": "playground-edges", "aria-label": "the network's weights" });
  const nodesBox = h("div", { class: "vg-pg-nodes" });
  const layersBox = h("div", { class: "vg-pg-diagram", "data-testid": "playground-network" }, [edges, nodesBox]);
  const edgeInfo = h("div", { class: "vg-pg-edge-info", "data-testid": "playground-edge-info" }, "hover an edge for its weight and gradient; click a unit");
  const detail = h("div", { class: "vg-pg-detail", "data-testid": "playground-unit-detail", hidden: true });
  const network = h("div", { class: "vg-pg-network" }, [
    h("div", { class: "vg-pg-network-head" }, [h("strong", {}, "network"), addLayer, removeLayer,
      h("span", { class: "vg-pg-legend" }, [h("span", { class: "vg-pg-key vg-pg-key-positive" }), "positive weight",
        h("span", { class: "vg-pg-key vg-pg-key-negative" }), "negative"])]),
    layersBox, edgeInfo, detail]);

  const boundaryCanvas = h("canvas", { class: "vg-pg-boundary", "data-testid": "playground-boundary", width: BOUNDARY, height: BOUNDARY });
  const metrics = h("div", { class: "vg-pg-metrics", "data-testid": "playground-metrics" });
  const lossChart = h("div", { class: "vg-pg-loss", "data-testid": "playground-loss" });
  const output = h("div", { class: "vg-pg-output" }, [h("strong", {}, "output"), boundaryCanvas, metrics, lossChart]);
  const root = h("div", { class: "vg-widget vg-themed vg-pg", "data-testid": "playground-view" }, [toolbar, settings, h("div", { class: "vg-pg-body" }, [network, output])]);
  el.append(root);

  const boundarySource = document.createElement("canvas");
  let unitCanvases = [];
  let layerCleanups = [];
  let layersKey = "";
  const dirty = { data: true, progress: true };

  // --- drawing --------------------------------------------------------------------------------
  // --- the diagram ----------------------------------------------------------------------------
  let layout = null;
  let nodeViews = [];        // per column: [{canvas|box, kind, layer, unit}]
  let edgeElements = [];     // per Linear layer: [line per weight, index o * inputs + i]
  let selected = null;       // {column, unit} of the clicked node

  function sizes() {
    return [(model.get("features") || []).length, ...(model.get("hidden") || []), model.get("classes") || 2];
  }

  function nodeName(column, unit) {
    const features = model.get("features") || [];
    const last = sizes().length - 1;
    if (column === 0) return features[unit] ?? `input ${unit + 1}`;
    if (column === last) return `class ${unit}`;
    return `layer ${column} unit ${unit + 1}`;
  }

  function buildLayers() {
    const options = model.get("options") || {};
    const widths = model.get("hidden") || [];
    const features = model.get("features") || [];
    const allFeatures = options.features || features;
    const key = [features.join(","), widths.join(","), model.get("classes")].join("|");
    if (key === layersKey) return;
    layersKey = key;
    dirty.progress = true;
    for (const cleanup of layerCleanups.splice(0)) cleanup();
    unitCanvases = [];
    const counts = [allFeatures.length, ...widths, model.get("classes") || 2];
    layout = networkLayout(counts, { node: NODE });
    layersBox.style.width = `${layout.width + 8}px`;
    layersBox.style.height = `${layout.height + 8}px`;
    edges.setAttribute("width", layout.width);
    edges.setAttribute("height", layout.height);
    const place = (element, { x, y }) => {
      element.style.left = `${x}px`;
      element.style.top = `${y}px`;
      return element;
    };
    const children = [];
    nodeViews = counts.map(() => []);
    // inputs: every feature, the chosen ones drawn as their map, the others as a faded button
    allFeatures.forEach((name, index) => {
      const active = features.indexOf(name);
      const canvas = active >= 0 ? h("canvas", { width: 1, height: 1, class: "vg-pg-node-map" }) : null;
      const box = h("button", {
        type: "button", class: `vg-pg-node vg-pg-input${active < 0 ? " vg-pg-off" : ""}`, "data-testid": `playground-feature-${name}`,
        "aria-pressed": String(active >= 0), title: active < 0 ? `use ${name} as an input` : `stop using ${name}`,
      }, [canvas, h("span", { class: "vg-pg-node-label" }, name)]);
      layerCleanups.push(listen(box, "click", () => {
        const chosen = new Set(model.get("features") || []);
        if (chosen.has(name)) chosen.delete(name);
        else chosen.add(name);
        if (chosen.size) save("features", allFeatures.filter((feature) => chosen.has(feature)));
      }));
      if (active >= 0) nodeViews[0][active] = { element: box, canvas, position: layout.columns[0][index] };
      children.push(place(box, layout.columns[0][index]));
    });
    // hidden layers with their width buttons
    widths.forEach((width, layer) => {
      const column = layer + 1;
      const minus = h("button", { type: "button", "data-testid": `playground-layer-${layer}-remove-unit`, title: "one unit fewer" }, "−");
      const plus = h("button", { type: "button", "data-testid": `playground-layer-${layer}-add-unit`, title: "one unit more" }, "+");
      for (const [button, op] of [[minus, "remove-unit"], [plus, "add-unit"]]) {
        layerCleanups.push(listen(button, "click", () => save("hidden", editHidden(model.get("hidden") || [], { op, layer },
          { maxLayers: options.max_layers, maxWidth: options.max_width }))));
      }
      const head = h("div", { class: "vg-pg-layer-head", "data-testid": `playground-layer-${layer}` }, [minus, h("span", {}, `${width}`), plus]);
      head.style.left = `${layout.columns[column][0].x + NODE / 2}px`;
      children.push(head);
      for (let unit = 0; unit < width; unit += 1) {
        const canvas = h("canvas", { class: "vg-pg-unit vg-pg-node", width: 1, height: 1, "data-testid": `playground-unit-${layer}-${unit}`,
          title: `layer ${layer + 1}, unit ${unit + 1}: click for its response and incoming weights` });
        unitCanvases.push(canvas);
        nodeViews[column][unit] = { element: canvas, canvas, position: layout.columns[column][unit] };
        layerCleanups.push(listen(canvas, "click", () => selectNode(column, unit)));
        children.push(place(canvas, layout.columns[column][unit]));
      }
    });
    // outputs: one node per class, its probability over the plane
    const last = counts.length - 1;
    layout.columns[last].forEach((position, unit) => {
      const canvas = h("canvas", { class: "vg-pg-node vg-pg-output-node", width: 1, height: 1, "data-testid": `playground-output-${unit}`,
        title: `class ${unit}: click for its incoming weights`, style: `border-color:${classColour(unit)}` });
      nodeViews[last][unit] = { element: canvas, canvas, position };
      layerCleanups.push(listen(canvas, "click", () => selectNode(last, unit)));
      children.push(place(canvas, position));
    });
    nodesBox.replaceChildren(...children);
    // one line per weight, from the chosen inputs on
    edgeElements = [];
    const lines = [];
    const active = [features.length, ...widths, counts[last]];
    for (let layer = 0; layer + 1 < active.length; layer += 1) {
      const lineList = [];
      for (let o = 0; o < active[layer + 1]; o += 1) {
        for (let i = 0; i < active[layer]; i += 1) {
          const from = nodeViews[layer][i].position;
          const to = nodeViews[layer + 1][o].position;
          const line = s("line", {
            class: "vg-pg-edge", "data-testid": "playground-edge", "data-layer": layer, "data-from": i, "data-to": o,
            x1: from.x + NODE, y1: from.y + NODE / 2, x2: to.x, y2: to.y + NODE / 2,
          });
          lineList.push(line);
          lines.push(line);
        }
      }
      edgeElements.push(lineList);
    }
    edges.replaceChildren(...lines);
    if (selected && !nodeViews[selected.column]?.[selected.unit]) selected = null;
  }

  function selectNode(column, unit) {
    selected = selected && selected.column === column && selected.unit === unit ? null : { column, unit };
    drawDetail();
  }

  function currentLayers() {
    return unpackLayers(model.get("layer_sizes") || sizes(), model.get("weights"), model.get("weight_grads"), model.get("biases"));
  }

  function edgeText(layer, i, o, layers = currentLayers()) {
    const data = layers[layer];
    if (!data) return "";
    const index = o * data.inputs + i;
    return `${nodeName(layer, i)} → ${nodeName(layer + 1, o)}: w = ${formatNumber(data.weight[index])}, `
      + `∂L/∂w = ${formatNumber(data.grad[index])} (last step)`;
  }

  function drawEdges() {
    const layers = currentLayers();
    let largest = 0;
    for (const layer of layers) largest = Math.max(largest, maxAbs(layer.weight));
    layers.forEach((layer, index) => {
      const lineList = edgeElements[index] || [];
      const count = Math.min(lineList.length, layer.weight.length);
      for (let k = 0; k < count; k += 1) {
        const style = edgeStyle(layer.weight[k], largest);
        const line = lineList[k];
        line.setAttribute("stroke", style.colour);
        line.setAttribute("stroke-width", style.width);
        line.setAttribute("stroke-opacity", style.opacity);
      }
    });
  }

  function drawMap(canvas, r, image) {
    if (canvas.width !== r) {
      canvas.width = r;
      canvas.height = r;
    }
    canvas.getContext("2d").putImageData(new ImageData(image, r, r), 0, 0);
  }

  function drawUnits() {
    const r = model.get("resolution");
    const units = toFloat32(model.get("units"));
    const count = Math.min(unitCanvases.length, Math.floor(units.length / (r * r)));
    for (let unit = 0; unit < count; unit += 1) drawMap(unitCanvases[unit], r, unitImage(units, unit, r));
    const maps = toFloat32(model.get("feature_maps"));
    (nodeViews[0] || []).forEach((view, index) => {
      if (view && maps.length >= (index + 1) * r * r) drawMap(view.canvas, r, unitImage(maps, index, r));
    });
    const probabilities = toFloat32(model.get("boundary"));
    (nodeViews[nodeViews.length - 1] || []).forEach((view, k) => drawMap(view.canvas, r, classImage(probabilities, k, r)));
    drawEdges();
    drawDetail();
  }

  function drawDetail() {
    for (const column of nodeViews) for (const view of column) view?.element.classList.remove("vg-pg-selected");
    if (!selected || !layout) {
      detail.hidden = true;
      return;
    }
    const { column, unit } = selected;
    const view = nodeViews[column]?.[unit];
    const layer = currentLayers()[column - 1];
    if (!view || !layer) {
      detail.hidden = true;
      return;
    }
    view.element.classList.add("vg-pg-selected");
    const large = h("canvas", { class: "vg-pg-detail-map", width: view.canvas.width, height: view.canvas.height });
    large.getContext("2d").drawImage(view.canvas, 0, 0);
    const incoming = Array.from({ length: layer.inputs }, (_, i) => ({
      name: nodeName(column - 1, i), weight: layer.weight[unit * layer.inputs + i], grad: layer.grad[unit * layer.inputs + i],
    }));
    const largest = maxAbs(Float32Array.from(incoming.map((entry) => entry.weight)));
    const rows = incoming.map((entry) => {
      const style = edgeStyle(entry.weight, largest);
      return h("tr", { "data-testid": "playground-incoming" }, [
        h("th", {}, entry.name),
        h("td", { class: "vg-pg-bar-cell" }, h("span", { class: "vg-pg-bar", style: `width:${Math.round(60 * Math.abs(entry.weight) / largest)}px;background:${style.colour}` })),
        h("td", {}, formatNumber(entry.weight)),
        h("td", { class: "vg-pg-grad" }, formatNumber(entry.grad)),
      ]);
    });
    detail.replaceChildren(
      h("div", { class: "vg-pg-detail-head" }, [h("strong", {}, nodeName(column, unit)), ` · bias ${formatNumber(layer.bias[unit])}`]),
      h("div", { class: "vg-pg-detail-body" }, [
        large,
        h("table", { class: "vg-pg-incoming" }, [
          h("tr", {}, [h("th", {}, "from"), h("th", {}, ""), h("th", {}, "weight"), h("th", {}, "∂L/∂w")]), ...rows]),
      ]),
    );
    detail.hidden = false;
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

  // The train and test loss on the shared SVG line chart: axes with ticks and titles in
  // text a projector shows (the chart is drawn at the column's width, 1 unit = 1 px).
  function drawLoss() {
    const { steps, series } = decodeSeries(model.get("losses"));
    const lines = LOSS_LINES.map(({ name, colour }, index) => ({
      name, colour, points: Array.from(steps, (step, k) => [step, series[index]?.[k] ?? null]),
    }));
    lossChart.replaceChildren(lineChart({ series: lines, xLabel: "step", yLabel: "loss", width: LOSS_W, height: LOSS_H }),
      legend(LOSS_LINES));
  }


  function updateSettings() {
    const options = model.get("options") || {};
    fillSelect(field(datasetField), options.datasets || [], model.get("dataset"));
    fillSelect(field(activationField), options.activations || [], model.get("activation"));
    fillSelect(field(optimizerField), options.optimizers || [], model.get("optimizer"));
    fillSelect(field(rateField), choices(RATES, model.get("learning_rate")), model.get("learning_rate"));
    fillSelect(field(decayField), choices(DECAYS, model.get("weight_decay")), model.get("weight_decay"));
    fillSelect(field(regularizationField), options.regularizations || ["L2"], model.get("regularization"));
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
  listenTo(field(regularizationField), "change", () => save("regularization", field(regularizationField).value));
  listenTo(edges, "pointerover", (event) => {
    const line = event.target.closest?.("line.vg-pg-edge");
    if (!line) return;
    edgeInfo.textContent = edgeText(Number(line.dataset.layer), Number(line.dataset.from), Number(line.dataset.to));
    line.classList.add("vg-pg-edge-hover");
  });
  listenTo(edges, "pointerout", (event) => event.target.classList?.remove("vg-pg-edge-hover"));
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
  for (const name of ["dataset", "noise", "hidden", "activation", "optimizer", "learning_rate", "weight_decay", "batch_size", "options",
    "speed", "features", "regularization", "classes"]) {
    on(`change:${name}`, redraw("data"));
  }
  for (const name of ["units", "losses", "unit_layers", "weights", "weight_grads", "biases", "feature_maps", "boundary"]) on(`change:${name}`, redraw("progress"));
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
