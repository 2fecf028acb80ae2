// What a graph node says about itself, as plain text rows: shared by the hover
// tooltip and the details panel. Pure functions; no DOM.

/** A shape as Python prints a tuple: (), (3,), (2, 3). */
export function shapeText(shape) {
  if (!shape || shape.length === 0) return "()";
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

/** A number in at most four significant digits; "—" for null (a non-finite statistic). */
export function formatNumber(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  if (value === 0) return "0";
  const size = Math.abs(value);
  if (size >= 1e4 || size < 1e-3) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}

/** Rows of a TensorStats dictionary (see graph.schema.json), or [] when it is missing. */
export function statsRows(stats) {
  if (!stats) return [];
  const rows = [
    ["mean ± std", `${formatNumber(stats.mean)} ± ${formatNumber(stats.std)}`],
    ["min … max", `${formatNumber(stats.min)} … ${formatNumber(stats.max)}`],
    ["norm", formatNumber(stats.norm)],
  ];
  if (stats.nan_count || stats.inf_count) {
    rows.push(["NaN / inf", `${stats.nan_count} / ${stats.inf_count}`]);
  }
  return rows;
}

/** "file.py:12: code" for a node made by the user's code, or "" when unknown. */
export function sourceText(source) {
  if (!source) return "";
  const file = source.file.split(/[\\/]/).pop();
  return `${file}:${source.line}${source.code ? `: ${source.code}` : ""}`;
}

/** What the views show about ``node``: a title, general rows and the statistics. */
export function describeNode(node) {
  const title = node.name || node.label || node.op || node.kind;
  const general = [
    ["kind", node.kind],
    ...(node.op ? [["op", node.op]] : []),
    ["shape", shapeText(node.shape)],
    ...((node.shape ?? []).length === 0 && Array.isArray(node.value?.sample) && node.value.sample.length
      ? [["value", formatNumber(node.value.sample[0])]] : []), // a scalar says what it is
    ["dtype", node.dtype],
    ...(node.device && node.device !== "cpu" ? [["device", node.device]] : []),
    ...(node.module ? [["module", node.module]] : []),
    ...(node.backward_index !== null && node.backward_index !== undefined
      ? [["backward step", String(node.backward_index + 1)]]
      : []),
    ...(node.forward_index !== null && node.forward_index !== undefined
      ? [["forward step", String(node.forward_index + 1)]]
      : []),
  ];
  return {
    id: node.id,
    title,
    general,
    value: statsRows(node.value),
    grad: statsRows(node.grad),
    tangent: statsRows(node.tangent), // forward AD's (vizgrad.autograd.forward_ad), when the graph has one
    gradIsBad: Boolean(node.grad && (node.grad.nan_count || node.grad.inf_count)),
    // where the gradient shown came from when it is not this graph's (Python writes it with the user's names)
    gradNote: typeof node.grad_note === "string" ? node.grad_note : "",
    source: sourceText(node.source),
  };
}
