// The convolution explorer widget (vizgrad/widgets/conv_explorer.py): the input image,
// then per Conv2d its kernels, feature maps and (after backward) gradient maps. A click on
// a map asks Python for that unit: its receptive field is outlined on the input and its
// multiply-accumulate listed term by term. Redrawn at most once per animation frame;
// render() returns its cleanup.

import { h, listen } from "../dom.js";
import { formatNumber } from "../node-info.js";
import { cellAt, greyImage, inputChannelsOf, kernelGridLayout, layerTitle, macFormula, mapImage } from "./conv-explorer.js";
import { createFrameScheduler } from "./frame.js";
import { floats, onChange } from "./model.js";
import { showError } from "./ui.js";

const INPUT_SIZE = 160;
const MAP_SIZE = 64;
const KERNEL_GAP = 2;

function pixelCanvas(image, height, width, size, attributes = {}) {
  const canvas = h("canvas", { width, height, class: "vg-cx-map", ...attributes });
  canvas.style.width = `${size}px`;
  canvas.style.height = `${(size * height) / width}px`;
  canvas.getContext("2d").putImageData(new ImageData(image, width, height), 0, 0);
  return canvas;
}

function render({ model, el }) {
  const root = h("div", { class: "vg-widget vg-themed vg-cx", "data-testid": "conv-explorer" });
  const toolbar = h("div", { class: "vg-toolbar" });
  const problem = h("div", { class: "vg-error", role: "alert", "data-testid": "conv-explorer-problem", hidden: true });
  const body = h("div", { class: "vg-cx-body" });
  root.append(toolbar, problem, body);
  el.append(root);
  const scheduler = createFrameScheduler();
  let cleanups = [];

  function backwardControls() {
    const scores = model.get("scores") || [];
    let best = 0;
    scores.forEach((score, k) => { if (score > scores[best]) best = k; });
    const targetSelect = h("select", { "data-testid": "conv-explorer-target", "aria-label": "class whose score to differentiate" },
      scores.map((score, k) => h("option", { value: k }, `class ${k}${k === best ? " (predicted)" : ""}`)));
    const target = model.get("target");
    targetSelect.value = String(target ?? best);
    const button = h("button", { type: "button", class: "vg-button", "data-testid": "conv-explorer-backward" }, "Backward");
    cleanups.push(listen(button, "click", () => model.send({ type: "backward", target: Number(targetSelect.value) })));
    return [
      h("h3", {}, "Convolutions"),
      h("span", { class: "vg-status", "data-testid": "conv-explorer-prediction" }, `predicted class ${best}`),
      h("span", { class: "vg-spacer" }),
      h("label", { class: "vg-cx-field" }, ["gradient of the score of ", targetSelect]), button,
      h("span", { class: "vg-status" }, target === null || target === undefined ? "" : `showing ∂ score[${target}] / ∂ map`),
    ];
  }

  function inputPanel(image, selection) {
    const { channels, height, width } = image;
    const data = floats(image.data);
    const stage = h("div", { class: "vg-cx-input-stage" }, [
      pixelCanvas(greyImage(data, 0, height, width), height, width, INPUT_SIZE, { "data-testid": "conv-explorer-input" }),
    ]);
    if (selection?.field) {
      const [top, left, bottom, right] = selection.field;
      const cell = INPUT_SIZE / width;
      const box = h("div", { class: "vg-cx-field-box", "data-testid": "conv-explorer-field" });
      Object.assign(box.style, { left: `${left * cell}px`, top: `${top * cell}px`, width: `${(right - left + 1) * cell}px`,
        height: `${(bottom - top + 1) * cell}px` });
      stage.append(box);
    }
    const children = [h("div", { class: "vg-cx-caption" }, `input ${channels} × ${height} × ${width}${channels > 1 ? " (channel 0)" : ""}`), stage];
    if (selection?.field) {
      const [top, left, bottom, right] = selection.field;
      children.push(h("div", { class: "vg-cx-caption" }, `receptive field: rows ${top}–${bottom}, columns ${left}–${right}`));
    }
    if (image.grad) {
      const grad = floats(image.grad);
      children.push(h("div", { class: "vg-cx-caption" }, "∂ score / ∂ input"),
        pixelCanvas(mapImage(grad, 0, height, width), height, width, INPUT_SIZE / 2, { "data-testid": "conv-explorer-input-grad" }));
    }
    return h("section", { class: "vg-cx-input" }, children);
  }

  // Output channel c's kernel: one kh × kw slice per input channel it reads, on one colour
  // scale, in a grid as wide as a map (more rows than fit scroll).
  function kernelGrid(kernels, c, inputs, kh, kw, columns, size) {
    const stack = kernels.subarray(c * inputs.length * kh * kw, (c + 1) * inputs.length * kh * kw);
    let limit = 0;
    for (const value of stack) limit = Math.max(limit, Math.abs(value));
    const grid = h("div", { class: "vg-cx-kernel-grid", "data-testid": "conv-explorer-kernel", "data-channel": c,
      title: `kernel ${c}: one slice per input channel (${inputs[0]}–${inputs[inputs.length - 1]})` },
    inputs.map((k, slice) => pixelCanvas(mapImage(stack, slice, kh, kw, limit || 1), kh, kw, size,
      { class: "vg-cx-map vg-cx-kernel-slice", title: `w[${c}, ${slice}] (input channel ${k})` })));
    Object.assign(grid.style, { gridTemplateColumns: `repeat(${columns}, ${size}px)`, gap: `${KERNEL_GAP}px`,
      width: `${MAP_SIZE}px`, maxHeight: `${MAP_SIZE}px` });
    return h("div", { class: "vg-cx-cell" }, [grid, h("span", {}, String(c))]);
  }

  function layerPanel(layer, index, selection) {
    const [, height, width] = layer.output_shape;
    const maps = floats(layer.maps);
    const kernels = floats(layer.kernels);
    const grads = layer.grads ? floats(layer.grads) : null;
    const [kh, kw] = layer.kernel;
    const slices = layer.in_channels / (layer.groups || 1);
    const { columns, size } = kernelGridLayout(slices, MAP_SIZE, { gap: KERNEL_GAP });
    const row = (label, testid, items) => h("div", { class: "vg-cx-row", "data-testid": testid }, [h("div", { class: "vg-cx-row-label" }, label), h("div", { class: "vg-cx-cells" }, items)]);
    const kernelItems = [];
    const mapItems = [];
    const gradItems = [];
    for (let c = 0; c < layer.shown; c += 1) {
      kernelItems.push(kernelGrid(kernels, c, inputChannelsOf(layer, c), kh, kw, columns, size));
      const canvas = pixelCanvas(mapImage(maps, c, height, width), height, width, MAP_SIZE, {
        "data-testid": "conv-explorer-map", "data-layer": index, "data-channel": c, title: `channel ${c}: click a unit`,
      });
      cleanups.push(listen(canvas, "click", (event) => {
        const box = canvas.getBoundingClientRect();
        const [i, j] = cellAt(event.clientX - box.left, event.clientY - box.top, box.width, box.height, height, width);
        model.send({ type: "select", layer: index, channel: c, i, j });
      }));
      const wrapper = h("div", { class: "vg-cx-cell" }, [canvas, h("span", {}, String(c))]);
      const read = selection && selection.layer === index + 1 && selection.previous_window
        && selection.channels.some((entry) => entry.channel === c);
      if (read) {       // the clicked unit (next layer) reads this window of this map
        const [top, left, bottom, right] = selection.previous_window;
        const cell = MAP_SIZE / width;
        const windowBox = h("div", { class: "vg-cx-unit-mark vg-cx-window-mark", "data-testid": "conv-explorer-window" });
        Object.assign(windowBox.style, { left: `${left * cell}px`, top: `${top * cell}px`, width: `${(right - left + 1) * cell}px`,
          height: `${(bottom - top + 1) * cell}px` });
        wrapper.append(windowBox);
      }
      if (selection && selection.layer === index && selection.channel === c) {
        const mark = h("div", { class: "vg-cx-unit-mark" });
        const cell = MAP_SIZE / width;
        Object.assign(mark.style, { left: `${selection.j * cell}px`, top: `${selection.i * cell}px`, width: `${cell}px`, height: `${cell}px` });
        wrapper.append(mark);
        wrapper.classList.add("vg-cx-selected");
      }
      mapItems.push(wrapper);
      if (grads) {
        gradItems.push(pixelCanvas(mapImage(grads, c, height, width), height, width, MAP_SIZE, { "data-testid": "conv-explorer-grad", title: `∂ score / ∂ channel ${c}` }));
      }
    }
    const more = layer.out_channels > layer.shown ? ` (first ${layer.shown} of ${layer.out_channels})` : "";
    return h("section", { class: "vg-cx-layer", "data-testid": "conv-explorer-layer", "data-layer": index }, [
      h("div", { class: "vg-cx-layer-title" }, layerTitle(layer) + more),
      row(slices > 1 ? `kernels (${slices} input-channel slices each)` : "kernels", "conv-explorer-kernels", kernelItems),
      row("feature maps", "conv-explorer-maps", mapItems),
      grads ? row("gradients ∂ score / ∂ map", "conv-explorer-grads", gradItems) : null,
    ]);
  }

  function macPanel(selection, layers) {
    const layer = layers[selection.layer];
    if (!layer) return null;
    const [kh, kw] = layer.kernel;
    // each input channel's products laid out as its kernel is (kh rows of kw), then their sum
    const channelRows = selection.channels.map((entry) => {
      const terms = entry.terms.map(([a, b, x, w, product]) => h("td", { class: "vg-cx-term", title: `w[${a}, ${b}] · x = ${formatNumber(w)} · ${formatNumber(x)}` },
        formatNumber(product)));
      const grid = h("table", { class: "vg-cx-term-grid" }, Array.from({ length: kh }, (_, a) => h("tr", {}, terms.slice(a * kw, (a + 1) * kw))));
      return h("tr", { "data-testid": "conv-explorer-mac-channel" }, [h("th", {}, `k = ${entry.channel}`), h("td", {}, grid),
        h("td", { class: "vg-cx-partial" }, formatNumber(entry.partial))]);
    });
    const first = selection.channels[0];
    const detail = first ? h("table", { class: "vg-cx-products" }, Array.from({ length: kh }, (_, a) => h("tr", {},
      Array.from({ length: kw }, (_, b) => {
        const [, , x, w, product] = first.terms[a * kw + b];
        return h("td", {}, `${formatNumber(w)} × ${formatNumber(x)} = ${formatNumber(product)}`);
      })))) : null;
    return h("section", { class: "vg-cx-mac", "data-testid": "conv-explorer-mac" }, [
      h("div", { class: "vg-cx-layer-title" }, `unit: layer ${layer.name}, channel ${selection.channel}, row ${selection.i}, column ${selection.j}`),
      h("div", { class: "vg-cx-formula" }, macFormula(selection, layer)),
      h("div", { class: "vg-cx-caption" }, `input channel ${first?.channel ?? 0}, each weight × input (0 in the padding):`),
      detail,
      h("div", { class: "vg-cx-caption" }, "every input channel: its products and their sum"),
      h("div", { class: "vg-cx-scroll" }, h("table", { class: "vg-cx-channels" }, channelRows)),
      h("div", { class: "vg-cx-total", "data-testid": "conv-explorer-total" },
        `b = ${formatNumber(selection.bias)}; b + Σ = ${formatNumber(selection.total)}; the layer computed ${formatNumber(selection.recorded)}`
        + (selection.grad === null || selection.grad === undefined ? "" : `; ∂ score / ∂ y = ${formatNumber(selection.grad)}`)),
    ]);
  }

  function draw() {
    try {
      for (const cleanup of cleanups.splice(0)) cleanup();
      problem.hidden = true;
      const image = model.get("image") || {};
      const layers = model.get("layers") || [];
      const selection = model.get("selection");
      const chosen = selection && selection.channels ? selection : null;
      toolbar.replaceChildren(...backwardControls());
      body.replaceChildren(
        h("div", { class: "vg-cx-side" }, [inputPanel(image, chosen), chosen ? macPanel(chosen, layers) : h("p", { class: "vg-muted" }, "Click a unit of a feature map to see where it looks and how it was computed.")]),
        h("div", { class: "vg-cx-layers" }, layers.map((layer, index) => layerPanel(layer, index, chosen))),
      );
      root.dataset.ready = "true";
      root.dataset.selected = chosen ? `${chosen.layer}/${chosen.channel}/${chosen.i}/${chosen.j}` : "";
      root.dataset.target = String(model.get("target") ?? "");
    } catch (error) {
      showError(root, body, error);
    }
  }

  const stop = onChange(model, ["image", "layers", "scores", "target", "selection"], () => scheduler.schedule("draw", draw));
  // Python answers a request it cannot serve with {type: "error", message}: show it until the next draw
  const onMessage = (message) => {
    if (message?.type !== "error") return;
    problem.textContent = message.message;
    problem.hidden = false;
  };
  model.on("msg:custom", onMessage);
  draw();
  return () => {
    model.off("msg:custom", onMessage);
    stop();
    scheduler.cancel();
    for (const cleanup of cleanups.splice(0)) cleanup();
    root.remove();
  };
}

export default { render };
