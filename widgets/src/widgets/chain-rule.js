// The chain rule at one node of the backward pass, as text: the gradient the node
// received (∂L/∂y), its local derivative, and the gradient it passes to each input.
// Pure functions over Graph JSON (see vizgrad/trace/graph.schema.json); no DOM.
//
// The formulas are written with symbols (x, y, a, b, ...) and shown with the graph's real
// tensors in their place: the user's names where a tensor has one, else its op and id
// ("[Add n4]"), so that no generic symbol is ever read as a learner's own x or y.

import { formatNumber, shapeText } from "../node-info.js";

const elementwise = (forward, inputs, local) => ({ forward, inputs, local });
const unary = (forward, local) => elementwise(forward, ["x"], [local]);

/**
 * Per op (vizgrad's op class names): the forward formula, input names, and for each
 * input either its local derivative ``local[i]`` (elementwise: the gradient to that
 * input is ∂L/∂y ⊙ local[i]) or the whole gradient formula ``grads[i]``.
 */
export const DERIVATIVES = {
  Add: elementwise("y = a + b", ["a", "b"], ["1", "1"]),
  Sub: elementwise("y = a − b", ["a", "b"], ["1", "−1"]),
  Rsub: elementwise("y = b − a", ["a", "b"], ["−1", "1"]),
  Mul: elementwise("y = a · b", ["a", "b"], ["b", "a"]),
  Div: elementwise("y = a / b", ["a", "b"], ["1/b", "−a/b²"]),
  Pow: elementwise("y = a^b", ["a", "b"], ["b·a^(b − 1)", "a^b·ln a"]),
  Maximum: elementwise("y = max(a, b)", ["a", "b"], ["1 where a ≥ b, else 0", "1 where b > a, else 0"]),
  Minimum: elementwise("y = min(a, b)", ["a", "b"], ["1 where a ≤ b, else 0", "1 where b < a, else 0"]),
  Neg: unary("y = −x", "−1"),
  Exp: unary("y = exp(x)", "exp(x) = y"),
  Expm1: unary("y = exp(x) − 1", "exp(x)"),
  Log: unary("y = ln x", "1/x"),
  Log1p: unary("y = ln(1 + x)", "1/(1 + x)"),
  Sqrt: unary("y = √x", "1/(2√x)"),
  Rsqrt: unary("y = 1/√x", "−1/(2x√x)"),
  Square: unary("y = x²", "2x"),
  Reciprocal: unary("y = 1/x", "−1/x²"),
  Abs: unary("y = |x|", "sign(x)"),
  Sin: unary("y = sin x", "cos x"),
  Cos: unary("y = cos x", "−sin x"),
  Tan: unary("y = tan x", "1 + y²"),
  Tanh: unary("y = tanh x", "1 − y²"),
  Sigmoid: unary("y = σ(x) = 1/(1 + exp(−x))", "y·(1 − y)"),
  Relu: unary("y = max(x, 0)", "1 where x > 0, else 0"),
  LeakyRelu: unary("y = x if x > 0 else α·x", "1 where x > 0, else α"),
  Elu: unary("y = x if x > 0 else α(exp(x) − 1)", "1 where x > 0, else y + α"),
  Gelu: unary("y = x·Φ(x)", "Φ(x) + x·φ(x)"),
  Silu: unary("y = x·σ(x)", "σ(x)·(1 + x·(1 − σ(x)))"),
  Softplus: unary("y = ln(1 + exp(x))", "σ(x)"),
  Mish: unary("y = x·tanh(softplus(x))", "tanh(sp) + x·σ(x)·(1 − tanh²(sp))"),
  Hardtanh: unary("y = clamp(x, min, max)", "1 inside (min, max), else 0"),
  Clamp: unary("y = clamp(x, min, max)", "1 inside [min, max], else 0"),
  Erf: unary("y = erf x", "(2/√π)·e^(−x²)"),
  Dropout: unary("y = x ⊙ m / (1 − p)  (m: the random keep mask)", "m / (1 − p)"),
  Where: { forward: "y = a where c, else b", inputs: ["c", "a", "b"], local: [null, "1 where c, else 0", "1 where not c, else 0"] },
  MatMul: {
    forward: "Y = A @ B", inputs: ["A", "B"],
    grads: ["∂L/∂A = ∂L/∂Y @ Bᵀ", "∂L/∂B = Aᵀ @ ∂L/∂Y"],
  },
  Linear: {
    forward: "y = x @ Wᵀ + b", inputs: ["x", "W", "b"],
    grads: ["∂L/∂x = ∂L/∂y @ W", "∂L/∂W = (∂L/∂y)ᵀ @ x", "∂L/∂b = ∂L/∂y summed over the batch"],
  },
  Sum: unary("y = Σᵢ xᵢ", "1 (∂L/∂y is copied to every summed element)"),
  Mean: unary("y = (1/n) Σᵢ xᵢ", "1/n (∂L/∂y spread evenly over the n elements)"),
  Prod: unary("y = Πᵢ xᵢ", "y / xᵢ"),
  Amax: unary("y = max x", "1 at the maximum (shared among ties), else 0"),
  MaxDim: unary("y = max x along a dimension", "1 at each maximum, else 0"),
  Logsumexp: unary("y = ln Σᵢ e^xᵢ", "softmax(x)"),
  Norm: unary("y = ‖x‖", "x / ‖x‖"),
  Var: unary("y = Σ (x − x̄)² / (n − c)", "2(x − x̄)/(n − c)"),
  Std: unary("y = √var(x)", "(x − x̄)/((n − c)·y)"),
  Softmax: { forward: "y = exp(x) / Σ exp(x)", inputs: ["x"], grads: ["∂L/∂x = y ⊙ (∂L/∂y − Σ(∂L/∂y ⊙ y))"] },
  LogSoftmax: { forward: "y = x − ln Σ eˣ", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y − softmax(x) · Σ ∂L/∂y"] },
  NllLoss: { forward: "L = −mean of x[target]", inputs: ["x", "target"], grads: ["∂L/∂x = −1/n at each target entry, 0 elsewhere", null] },
  BinaryCrossEntropy: {
    forward: "L = −mean[t·ln p + (1 − t)·ln(1 − p)]", inputs: ["p", "t"],
    grads: ["∂L/∂p = (p − t) / (p(1 − p)·n)", "∂L/∂t = ln((1 − p)/p) / n"],
  },
  BinaryCrossEntropyWithLogits: {
    forward: "L = mean BCE(σ(x), t)", inputs: ["x", "t"], grads: ["∂L/∂x = (σ(x) − t) / n", "∂L/∂t = −x / n"],
  },
  Huber: { forward: "L = huber(a − b)", inputs: ["a", "b"], local: ["clamp(a − b, −δ, δ)", "−clamp(a − b, −δ, δ)"] },
  Conv: {
    forward: "y = x ⋆ w + b (cross-correlation)", inputs: ["x", "w", "b"],
    grads: ["∂L/∂x = ∂L/∂y convolved with the flipped kernel (a transposed convolution)",
      "∂L/∂w = x cross-correlated with ∂L/∂y", "∂L/∂b = ∂L/∂y summed over batch and positions"],
  },
  MaxPool: unary("y = max over each window", "1 at each window's maximum, else 0"),
  AvgPool: unary("y = mean over each window", "1/(window size), spread over the window"),
  AdaptiveAvgPool: unary("y = mean over each adaptive window", "1/(window size), spread over the window"),
  Embedding: { forward: "y = table[indices]", inputs: ["table", "indices"], grads: ["∂L/∂table: each row of ∂L/∂y is added to the row it was read from", null] },
  GetItem: { forward: "y = x[index]", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y placed at the indexed positions, 0 elsewhere"] },
  Gather: { forward: "y = gather(x, index)", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y scattered (added) back to the gathered positions"] },
  IndexSelect: { forward: "y = x.index_select(dim, index)", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y added back at the selected positions"] },
  Cat: { forward: "y = cat(x₀, x₁, …)", inputs: [], grads: [], generic: "∂L/∂xᵢ = the slice of ∂L/∂y that came from xᵢ" },
  Stack: { forward: "y = stack(x₀, x₁, …)", inputs: [], grads: [], generic: "∂L/∂xᵢ = ∂L/∂y[i]" },
  Reshape: { forward: "y = x reshaped", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y reshaped back to x's shape"] },
  Squeeze: { forward: "y = x without size-1 dimensions", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y reshaped back"] },
  Unsqueeze: { forward: "y = x with a new size-1 dimension", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y reshaped back"] },
  Transpose: { forward: "y = xᵀ (two dimensions swapped)", inputs: ["x"], grads: ["∂L/∂x = (∂L/∂y)ᵀ"] },
  MatrixTranspose: { forward: "y = xᵀ", inputs: ["x"], grads: ["∂L/∂x = (∂L/∂y)ᵀ"] },
  Permute: { forward: "y = x with dimensions permuted", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y with the inverse permutation"] },
  Expand: { forward: "y = x broadcast to a larger shape", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y summed over the broadcast dimensions"] },
  Repeat: { forward: "y = x tiled", inputs: ["x"], grads: ["∂L/∂x = the tiles of ∂L/∂y summed"] },
  Flip: { forward: "y = x flipped", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y flipped back"] },
  Narrow: { forward: "y = a slice of x", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y in the slice, 0 elsewhere"] },
  Unbind: { forward: "yᵢ = x[…, i, …] (one piece per index)", inputs: ["x"], grads: ["∂L/∂x = the pieces' gradients stacked (0 for unused pieces)"] },
  Split: { forward: "yᵢ = the i-th slice of x", inputs: ["x"], grads: ["∂L/∂x = the pieces' gradients joined (0 for unused pieces)"] },
  SplitWithSizes: { forward: "yᵢ = the i-th slice of x", inputs: ["x"], grads: ["∂L/∂x = the pieces' gradients joined (0 for unused pieces)"] },
  Pad: { forward: "y = x padded", inputs: ["x"], grads: ["∂L/∂x = ∂L/∂y without the padding"] },
  Clone: unary("y = x (a copy)", "1"),
  Contiguous: unary("y = x (contiguous memory)", "1"),
  ToDtype: unary("y = x converted to another dtype", "1 (∂L/∂y converted back)"),
  ToDevice: unary("y = x moved to another device", "1 (∂L/∂y moved back)"),
  MaskedFill: unary("y = x with masked entries set to v", "1 where not masked, else 0"),
  Tril: unary("y = lower triangle of x", "1 on and below the diagonal, else 0"),
  Triu: unary("y = upper triangle of x", "1 on and above the diagonal, else 0"),
  Normalize: unary("y = x / max(‖x‖, ε)", "(I − y yᵀ)/‖x‖ applied to ∂L/∂y"),
  Cumsum: { forward: "yᵢ = Σ_{j≤i} xⱼ", inputs: ["x"], grads: ["∂L/∂xⱼ = Σ_{i≥j} ∂L/∂yᵢ (reverse cumulative sum)"] },
};

const ALIASES = { Matmul: "MatMul", ReLU: "Relu", Softmax: "Softmax" };

/** The derivative entry of ``op`` (case-insensitive; null when vizgrad has no text for it). */
export function derivativeOf(op) {
  if (!op) return null;
  if (DERIVATIVES[op]) return DERIVATIVES[op];
  if (ALIASES[op]) return DERIVATIVES[ALIASES[op]];
  const key = Object.keys(DERIVATIVES).find((name) => name.toLowerCase() === String(op).toLowerCase());
  return key ? DERIVATIVES[key] : null;
}

/** ∂L/∂y ⊙ local, simplified for 1 and −1, with parentheses around compound terms. */
function compose(local) {
  if (local === "1") return "∂L/∂y";
  if (local === "−1") return "−∂L/∂y";
  const outside = local.replace(/\([^()]*\)/g, ""); // what is not already in parentheses
  return /[\s+\u2212]/.test(outside) ? `∂L/∂y ⊙ (${local})` : `∂L/∂y ⊙ ${local}`;
}

/** The gradient formula for input ``index`` named ``name`` of ``op``. */
export function gradientFormula(op, index, name) {
  const entry = derivativeOf(op);
  const target = `∂L/∂${name}`;
  if (entry?.grads?.[index]) return entry.grads[index];
  if (entry?.local?.[index]) return `${target} = ${compose(entry.local[index])}`;
  if (entry?.generic) return entry.generic.replaceAll("xᵢ", name);
  return `${target} = ∂L/∂y · ∂y/∂${name}  (chain rule)`;
}

/** "[0.1, −0.2, 3, …]" from a stats dictionary's ``sample`` ("" without one). */
export function sampleText(stats) {
  const sample = stats?.sample;
  if (!Array.isArray(sample) || sample.length === 0) return "";
  const count = (stats.shape ?? []).reduce((product, size) => product * size, 1);
  const more = count > sample.length ? ", …" : "";
  return `[${sample.map(formatNumber).join(", ")}${more}]`;
}

/** "mean 0.1 · norm 2 · NaN 3" for a stats dictionary ("not recorded" when missing). */
export function statsSummary(stats) {
  if (!stats) return "not recorded";
  const parts = [`mean ${formatNumber(stats.mean)}`, `norm ${formatNumber(stats.norm)}`];
  if (stats.nan_count) parts.push(`NaN ${stats.nan_count}`);
  if (stats.inf_count) parts.push(`inf ${stats.inf_count}`);
  return parts.join(" · ");
}

/** Whether a stats dictionary holds NaN or inf values. */
export function isBad(stats) {
  return Boolean(stats && (stats.nan_count || stats.inf_count));
}

/**
 * The user's name for a node, to write in formulas: its ``name`` (a parameter's last two
 * dotted parts, three when the middle one is an index), else a label that reads like a variable (not the op's or kind's name);
 * null when it has none.
 */
export function userName(node) {
  if (!node) return null;
  if (node.name) {
    const parts = node.name.split(".");
    const keep = parts.length > 2 && /^\d+$/.test(parts.at(-2)) ? 3 : 2; // "mlp.2.weight", not "2.weight"
    return parts.slice(-keep).join(".");
  }
  const label = node.label ?? "";
  const generic = [node.op, node.kind, "leaf", "parameter", "output", "constant"];
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(label) && !generic.includes(label) ? label : null;
}

/** ``formula`` with each standalone symbol (a key of ``names``) replaced by its name. */
export function renameSymbols(formula, names) {
  const symbols = Object.keys(names).filter((symbol) => names[symbol] && names[symbol] !== symbol);
  if (!symbols.length) return formula;
  const pattern = new RegExp(`(?<![A-Za-z0-9_.])(${symbols.map((symbol) => symbol.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})(?![A-Za-z0-9_])`, "g");
  return formula.replace(pattern, (symbol) => names[symbol]);
}

/** How a tensor without a user's name is written in formulas: its op (or kind) and id, "[Add n4]". */
export function nodeRef(node) {
  return `[${node.op || node.kind} ${node.id}]`;
}

/**
 * What each symbol of an op's formulas stands for at ``node``: ``symbols[i]`` is input i
 * (``inputs[i]``), "y" and "Y" the output (unless an input is called so). Each tensor is
 * written by the user's name, or by nodeRef when it has none; two different tensors that
 * share a name are told apart by their ids ("h [n7]"); the same tensor twice (x * x) is
 * one name.
 */
export function symbolNames(symbols, node, inputs) {
  const names = {};
  const owners = new Map(); // name -> the node id that has it
  const nameOf = (tensor) => {
    const name = userName(tensor);
    if (name === null) return nodeRef(tensor);
    if (owners.has(name) && owners.get(name) !== tensor.id) return `${name} [${tensor.id}]`;
    owners.set(name, tensor.id);
    return name;
  };
  symbols.forEach((symbol, index) => {
    if (inputs[index]) names[symbol] = nameOf(inputs[index]);
  });
  const output = nameOf(node);
  for (const symbol of ["y", "Y"]) if (!symbols.includes(symbol)) names[symbol] = output;
  return names;
}

/** The heading of an outgoing gradient: "to h (n0)", "to q.weight ← blocks.0.q.weight (n3)", "to [Add n4]". */
export function targetText(name, sourceTitle, source) {
  if (name.endsWith(`${source}]`)) return `to ${name}`; // the name already says op and id
  return name === sourceTitle ? `to ${name} (${source})` : `to ${name} ← ${sourceTitle} (${source})`;
}

function sameShape(a = [], b = []) {
  return a.length === b.length && a.every((size, i) => size === b[i]);
}

/**
 * What both flows' panels read at ``nodeId``: the node, its formula entry, its title, its
 * input edges (by input index) and input nodes (an input not drawn stands in as ``{id,
 * kind: "input"}``); null when the graph has no such node.
 */
export function nodeAt(graph, nodeId) {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const node = nodes.get(nodeId);
  if (!node) return null;
  const edges = graph.edges.filter((edge) => edge.target === nodeId).sort((a, b) => a.index - b.index);
  const inputs = [];
  for (const edge of edges) inputs[edge.index] = nodes.get(edge.source) ?? { id: edge.source, kind: "input" };
  return { nodes, node, entry: derivativeOf(node.op), title: node.name || node.label || node.op || node.kind, edges, inputs };
}

/**
 * The chain rule at ``nodeId`` of ``graph``: what the side panel shows.
 * @returns {null | {id: string, title: string, op: string|null, leaf: boolean, forward: string,
 *   known: boolean, incoming: {label: string, shape: string, summary: string, sample: string, bad: boolean, note: string},
 *   outgoing: {index: number, name: string, source: string, sourceTitle: string, target: string, formula: string,
 *   shape: string, summary: string, sample: string, bad: boolean, exact: boolean, broadcast: boolean}[]}}
 */
export function chainRule(graph, nodeId) {
  const at = nodeAt(graph, nodeId);
  if (!at) return null;
  const { nodes, node, entry, title, edges, inputs } = at;
  // an op without formula text (or one of any number of inputs, as cat) gets a symbol per input
  const symbols = entry?.inputs?.length ? entry.inputs : inputs.map((_, index) => `x${index}`);
  const names = symbolNames(symbols, node, inputs);
  const rename = (text) => renameSymbols(text, names);
  const incoming = {
    label: node.op ? `${rename("∂L/∂y")} (the gradient this op's output received)` : `∂L/∂${title}`,
    shape: shapeText(node.grad?.shape ?? node.shape),
    summary: statsSummary(node.grad),
    sample: sampleText(node.grad),
    bad: isBad(node.grad),
    note: typeof node.grad_note === "string" ? node.grad_note : "", // the gradient is not (only) this graph's
  };
  const leaf = !node.op;
  const outgoing = leaf ? [] : edges.map((edge) => {
    const source = nodes.get(edge.source);
    const symbol = symbols[edge.index] ?? `x${edge.index}`;
    const name = names[symbol] ?? nodeRef(inputs[edge.index]);
    const stats = edge.grad ?? null;
    const sourceTitle = source ? source.name || source.label || source.op || source.kind : edge.source;
    return {
      index: edge.index,
      name,
      source: edge.source,
      sourceTitle,
      target: targetText(name, sourceTitle, edge.source),
      formula: rename(gradientFormula(node.op, edge.index, symbol)),
      shape: shapeText(stats?.shape ?? edge.shape),
      summary: stats ? statsSummary(stats) : edge.grad_hidden ? "hidden until you predict it"
        : source?.requires_grad === false ? "no gradient (does not require grad)" : "not recorded",
      sample: sampleText(stats),
      bad: isBad(stats),
      exact: Boolean(stats),
      broadcast: !sameShape(edge.shape, node.shape) && Boolean(entry?.local),
    };
  });
  return {
    id: node.id,
    title,
    op: node.op ?? null,
    leaf,
    forward: leaf ? `${node.name ? `${node.name} is a ${node.kind}` : `a ${node.kind}`}: the gradient it receives is accumulated into .grad`
      : rename(entry?.forward ?? `y = ${node.op}(${edges.map((edge) => symbols[edge.index]).join(", ")})`),
    known: Boolean(entry) || leaf,
    incoming,
    outgoing,
  };
}
