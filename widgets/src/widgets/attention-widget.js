// The AttentionView widget (vizgrad/widgets/attention_view.py): one query × key heatmap
// per head; a click selects a cell (the `selected` trait) and the sequence below shows
// where that query looks. Redrawn at most once per animation frame; render() returns
// its cleanup.

import { h, listen, s } from "../dom.js";
import { attendedKeys, clampSelection, readWeights, tokenLabel, weightColour } from "./attention.js";
import { createFrameScheduler } from "./frame.js";
import { onChange, save } from "./model.js";
import { showError } from "./ui.js";

const CELL = 14;
const LABEL = 16;

function headMap(weights, head, queryTokens, keyTokens, selection) {
  const width = LABEL + weights.keys * CELL;
  const height = LABEL + weights.queries * CELL;
  const svg = s("svg", {
    class: "vg-attention-map", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `head ${head}: ${weights.queries} queries × ${weights.keys} keys`,
    "data-testid": "vg-attention-map", "data-head": head,
  });
  for (let key = 0; key < weights.keys; key += 1) {
    svg.append(s("text", { x: LABEL + key * CELL + CELL / 2, y: LABEL - 4, "text-anchor": "middle" },
      tokenLabel(keyTokens[key] ?? String(key))));
  }
  for (let query = 0; query < weights.queries; query += 1) {
    svg.append(s("text", { x: LABEL - 3, y: LABEL + query * CELL + CELL - 3, "text-anchor": "end" },
      tokenLabel(queryTokens[query] ?? String(query))));
    for (let key = 0; key < weights.keys; key += 1) {
      const value = weights.at(head, query, key);
      svg.append(s("rect", {
        class: "vg-attention-cell", x: LABEL + key * CELL, y: LABEL + query * CELL, width: CELL, height: CELL,
        fill: weightColour(value), "data-query": query, "data-key": key,
      }, s("title", {}, `query ${query} ${tokenLabel(queryTokens[query] ?? "")} → key ${key} `
        + `${tokenLabel(keyTokens[key] ?? "")}: ${value.toFixed(3)}`)));
    }
  }
  svg.append(s("rect", { class: "vg-attention-frame", x: LABEL, y: LABEL, width: weights.keys * CELL, height: weights.queries * CELL, fill: "none" }));
  if (selection && selection.head === head) {
    svg.append(s("rect", {
      class: "vg-attention-row", x: LABEL, y: LABEL + selection.query * CELL, width: weights.keys * CELL,
      height: CELL, fill: "none",
    }));
    svg.append(s("rect", {
      class: "vg-attention-selected", x: LABEL + selection.key * CELL, y: LABEL + selection.query * CELL,
      width: CELL, height: CELL, fill: "none", "data-testid": "vg-attention-selected",
    }));
  }
  return svg;
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
  const maps = h("div", { class: "vg-attention-heads" });
  const below = h("div", {});
  root.append(heading, status, maps, below);
  el.append(root);
  const scheduler = createFrameScheduler();

  function draw() {
    try {
      const weights = readWeights(model.get("weights"), model.get("shape"));
      const queryTokens = model.get("tokens") ?? [];
      const keyTokens = (model.get("key_tokens") ?? []).length ? model.get("key_tokens") : queryTokens;
      const chosen = model.get("selected");
      const selection = chosen?.head === undefined ? null : clampSelection(chosen, weights);
      heading.textContent = model.get("title");
      heading.hidden = !model.get("title");
      status.textContent = weights.heads
        ? `${weights.heads} head${weights.heads === 1 ? "" : "s"} · ${weights.queries} queries × ${weights.keys} keys`
          + ` · step ${model.get("step")} · click a cell`
        : "no attention weights yet";
      const panels = [];
      for (let head = 0; head < weights.heads; head += 1) {
        panels.push(h("figure", { class: "vg-attention-head" }, [
          h("figcaption", {}, `head ${head}`), headMap(weights, head, queryTokens, keyTokens, selection)]));
      }
      maps.replaceChildren(...panels);
      below.replaceChildren(...(selection ? [detail(weights, selection, queryTokens, keyTokens)] : []));
      root.dataset.step = String(model.get("step"));
      root.dataset.ready = "true";
    } catch (error) {
      showError(root, maps, error);
    }
  }

  const stopClicks = listen(maps, "click", (event) => {
    const cell = event.target.closest?.(".vg-attention-cell");
    const map = cell?.closest(".vg-attention-map");
    if (!cell || !map) return;
    save(model, { selected: { head: Number(map.dataset.head), query: Number(cell.dataset.query), key: Number(cell.dataset.key) } });
    scheduler.schedule("draw", draw);
  });
  const stop = onChange(model, ["weights", "shape", "tokens", "key_tokens", "step", "title", "selected"],
    () => scheduler.schedule("draw", draw));
  draw();
  return () => {
    stop();
    stopClicks();
    scheduler.cancel();
    root.remove();
  };
}

export default { render };
