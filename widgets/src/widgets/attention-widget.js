// The AttentionView widget (vizgrad/widgets/attention_view.py): a row of head tabs, each
// with a thumbnail of its weights, and the shown head's query × key heatmap (the `head`
// trait); a click selects a cell (the `selected` trait) and the panel beside the map shows
// where that query looks. Redrawn at most once per animation frame; render() returns its
// cleanup.

import { h, listen, s } from "../dom.js";
import { attendedKeys, cellSize, clampSelection, labelStride, readWeights, tokenLabel, weightColour } from "./attention.js";
import { createFrameScheduler } from "./frame.js";
import { onChange, save } from "./model.js";
import { showError } from "./ui.js";

const LABEL = 18;

function headMap(weights, head, queryTokens, keyTokens, selection) {
  const cell = cellSize(Math.max(weights.queries, weights.keys));
  const stride = labelStride(cell);
  const width = LABEL + weights.keys * cell;
  const height = LABEL + weights.queries * cell;
  const svg = s("svg", {
    class: "vg-attention-map", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `head ${head}: ${weights.queries} queries × ${weights.keys} keys`,
    "data-testid": "vg-attention-map", "data-head": head,
  });
  for (let key = 0; key < weights.keys; key += stride) {
    svg.append(s("text", { x: LABEL + key * cell + cell / 2, y: LABEL - 5, "text-anchor": "middle" },
      tokenLabel(keyTokens[key] ?? String(key))));
  }
  for (let query = 0; query < weights.queries; query += 1) {
    if (query % stride === 0) {
      svg.append(s("text", { x: LABEL - 3, y: LABEL + query * cell + cell / 2, "text-anchor": "end", "dominant-baseline": "central" },
        tokenLabel(queryTokens[query] ?? String(query))));
    }
    for (let key = 0; key < weights.keys; key += 1) {
      const value = weights.at(head, query, key);
      svg.append(s("rect", {
        class: "vg-attention-cell", x: LABEL + key * cell, y: LABEL + query * cell, width: cell, height: cell,
        fill: weightColour(value), "data-query": query, "data-key": key,
      }, s("title", {}, `query ${query} ${tokenLabel(queryTokens[query] ?? "")} → key ${key} `
        + `${tokenLabel(keyTokens[key] ?? "")}: ${value.toFixed(3)}`)));
    }
  }
  svg.append(s("rect", { class: "vg-attention-frame", x: LABEL, y: LABEL, width: weights.keys * cell, height: weights.queries * cell, fill: "none" }));
  if (selection && selection.head === head) {
    svg.append(s("rect", {
      class: "vg-attention-row", x: LABEL, y: LABEL + selection.query * cell, width: weights.keys * cell,
      height: cell, fill: "none",
    }));
    svg.append(s("rect", {
      class: "vg-attention-selected", x: LABEL + selection.key * cell, y: LABEL + selection.query * cell,
      width: cell, height: cell, fill: "none", "data-testid": "vg-attention-selected",
    }));
  }
  return svg;
}

/** A head's weights as a small picture (one pixel per cell, scaled up by CSS). */
function thumbnail(weights, head) {
  const canvas = h("canvas", { class: "vg-attention-thumb", width: weights.keys, height: weights.queries });
  const pixels = new Uint8ClampedArray(weights.keys * weights.queries * 4);
  for (let query = 0; query < weights.queries; query += 1) {
    for (let key = 0; key < weights.keys; key += 1) {
      const [r, g, b] = weightColour(weights.at(head, query, key)).match(/\d+/g).map(Number);
      pixels.set([r, g, b, 255], (query * weights.keys + key) * 4);
    }
  }
  canvas.getContext("2d")?.putImageData(new ImageData(pixels, weights.keys, weights.queries), 0, 0);
  return canvas;
}

function headTabs(weights, shown) {
  return Array.from({ length: weights.heads }, (_, head) => h("button", {
    type: "button", class: "vg-attention-tab", role: "tab", "aria-selected": String(head === shown),
    "data-testid": "vg-attention-tab", "data-head": head, title: `show head ${head}`,
  }, [thumbnail(weights, head), h("span", {}, `head ${head}`)]));
}

function detail(weights, selection, queryTokens, keyTokens) {
  const { head, query } = selection;
  const row = attendedKeys(weights, head, query);
  const strip = h("div", { class: "vg-attention-strip", "data-testid": "vg-attention-strip" });
  for (let key = 0; key < weights.keys; key += 1) {
    const weight = weights.at(head, query, key);
    strip.append(h("span", {
      class: `vg-attention-token${key === query ? " vg-attention-query" : ""}`,
      style: `background:${weightColour(weight)};color:${weight > 0.5 ? "#fff" : "#111"}`,
      title: `key ${key}: ${weight.toFixed(3)}`, "data-key": key,
    }, tokenLabel(keyTokens[key] ?? String(key))));
  }
  const top = row.slice(0, 3).map(({ key, weight }) =>
    `${tokenLabel(keyTokens[key] ?? String(key))} (position ${key}) ${(100 * weight).toFixed(0)}%`);
  return h("div", { class: "vg-attention-detail", "data-testid": "vg-attention-detail" }, [
    h("div", { "data-testid": "vg-attention-caption" },
      `head ${head}, query ${query} “${tokenLabel(queryTokens[query] ?? "")}” attends most to: ${top.join(", ")}`),
    strip,
  ]);
}

function render({ model, el }) {
  const root = h("div", { class: "vg-widget vg-attention-widget", "data-testid": "vg-attention-widget" });
  const heading = h("h3", {});
  const status = h("div", { class: "vg-muted", "data-testid": "vg-status" });
  const tabs = h("div", { class: "vg-attention-tabs", role: "tablist", "aria-label": "heads" });
  const maps = h("div", { class: "vg-attention-heads" });
  const below = h("div", { class: "vg-attention-side" });
  root.append(heading, status, tabs, h("div", { class: "vg-attention-body" }, [maps, below]));
  el.append(root);
  const scheduler = createFrameScheduler();

  function draw() {
    try {
      const weights = readWeights(model.get("weights"), model.get("shape"));
      const queryTokens = model.get("tokens") ?? [];
      const keyTokens = (model.get("key_tokens") ?? []).length ? model.get("key_tokens") : queryTokens;
      const chosen = model.get("selected");
      const selection = chosen?.head === undefined ? null : clampSelection(chosen, weights);
      const shown = Math.max(0, Math.min(weights.heads - 1, model.get("head") ?? 0));
      heading.textContent = model.get("title");
      heading.hidden = !model.get("title");
      status.textContent = weights.heads
        ? `${weights.heads} head${weights.heads === 1 ? "" : "s"} · ${weights.queries} queries × ${weights.keys} keys`
          + ` · step ${model.get("step")} · pick a head, click a cell`
        : "no attention weights yet";
      tabs.replaceChildren(...(weights.heads > 1 ? headTabs(weights, shown) : []));
      maps.replaceChildren(...(weights.heads ? [h("figure", { class: "vg-attention-head" }, [
        h("figcaption", {}, `head ${shown}`), headMap(weights, shown, queryTokens, keyTokens, selection)])] : []));
      below.replaceChildren(selection && selection.head === shown ? detail(weights, selection, queryTokens, keyTokens)
        : h("p", { class: "vg-muted" }, "click a cell: where that query looks"));
      root.dataset.step = String(model.get("step"));
      root.dataset.ready = "true";
    } catch (error) {
      showError(root, maps, error);
    }
  }

  const stopTabs = listen(tabs, "click", (event) => {
    const tab = event.target.closest?.(".vg-attention-tab");
    if (!tab) return;
    save(model, { head: Number(tab.dataset.head) });
    scheduler.schedule("draw", draw);
  });
  const stopClicks = listen(maps, "click", (event) => {
    const cell = event.target.closest?.(".vg-attention-cell");
    const map = cell?.closest(".vg-attention-map");
    if (!cell || !map) return;
    save(model, { selected: { head: Number(map.dataset.head), query: Number(cell.dataset.query), key: Number(cell.dataset.key) } });
    scheduler.schedule("draw", draw);
  });
  const stop = onChange(model, ["weights", "shape", "tokens", "key_tokens", "step", "title", "selected", "head"],
    () => scheduler.schedule("draw", draw));
  draw();
  return () => {
    stop();
    stopTabs();
    stopClicks();
    scheduler.cancel();
    root.remove();
  };
}

export default { render };
