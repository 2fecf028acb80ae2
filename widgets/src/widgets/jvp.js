// Forward mode at one node, as text: the tangents its inputs carried (ṫ), its local
// derivatives, and the tangent it computed, ẏ = J·ṫ (the Jacobian-vector product that
// vizgrad.autograd.forward_ad runs op by op). Pure functions over Graph JSON (the nodes'
// `tangent` statistics and the graph's `forward_order`, vizgrad/trace/graph.schema.json); no DOM.
//
// The formulas are the chain-rule panel's (chain-rule.js: DERIVATIVES), read forward: an
// elementwise op's tangent is the sum of its local derivatives times the input tangents;
// a dot over a symbol is its tangent (ȧ = ṫ of a).

import { shapeText } from "../node-info.js";
import { derivativeOf, isBad, nodeAt, nodeRef, renameSymbols, sampleText, statsSummary, symbolNames } from "./chain-rule.js";

const DOT = "\u0307"; // combining dot above: ȧ

/** JVP formulas where the chain rule's table does not give them term by term. */
export const JVPS = {
  Mul: "ẏ = ȧ·b + a·ḃ",
  Div: "ẏ = ȧ/b − a·ḃ/b²",
  Pow: "ẏ = b·a^(b − 1)·ȧ + a^b·ln a·ḃ",
  MatMul: "Ẏ = Ȧ @ B + A @ Ḃ",
  Linear: "ẏ = ẋ @ Wᵀ + x @ Ẇᵀ + ḃ",
  Sum: "ẏ = Σᵢ ẋᵢ",
  Mean: "ẏ = (1/n) Σᵢ ẋᵢ",
  Prod: "ẏ = Σᵢ (y / xᵢ)·ẋᵢ",
  Amax: "ẏ = ẋ at the maximum (averaged over ties)",
  MaxDim: "ẏ = ẋ at each maximum",
  Logsumexp: "ẏ = Σᵢ softmax(x)ᵢ·ẋᵢ",
  Norm: "ẏ = ⟨x, ẋ⟩ / ‖x‖",
  Var: "ẏ = Σ 2(x − x̄)·ẋ / (n − c)",
  Std: "ẏ = Σ (x − x̄)·ẋ / ((n − c)·y)",
  Softmax: "ẏ = y ⊙ (ẋ − Σ(y ⊙ ẋ))",
  LogSoftmax: "ẏ = ẋ − Σ(softmax(x) ⊙ ẋ)",
  NllLoss: "L̇ = −mean of ẋ[target]",
  BinaryCrossEntropy: "L̇ = mean[(p − t)·ṗ / (p(1 − p)) + ln((1 − p)/p)·ṫ]",
  BinaryCrossEntropyWithLogits: "L̇ = mean[(σ(x) − t)·ẋ − x·ṫ]",
  Huber: "L̇ = mean[clamp(a − b, −δ, δ)·(ȧ − ḃ)]",
  Conv: "ẏ = ẋ ⋆ w + x ⋆ ẇ + ḃ",
  Embedding: "ẏ = ṫ(table)[indices]",
  Cat: "ẏ = cat(ẋ₀, ẋ₁, …)",
  Stack: "ẏ = stack(ẋ₀, ẋ₁, …)",
  Where: "ẏ = ȧ where c, else ḃ",
  Maximum: "ẏ = ȧ where a ≥ b, else ḃ",
  Minimum: "ẏ = ȧ where a ≤ b, else ḃ",
  MaxPool: "ẏ = ẋ at each window's maximum",
  AvgPool: "ẏ = the mean of ẋ over each window",
  AdaptiveAvgPool: "ẏ = the mean of ẋ over each adaptive window",
  View: "ẏ = ẋ viewed in y's shape (the same elements)",
  Cumsum: "ẏᵢ = Σ_{j≤i} ẋⱼ",
  Normalize: "ẏ = (I − y yᵀ)·ẋ / ‖x‖",
};

/** Ops linear in their inputs: the tangent is the op applied to the tangents (its formula, every tensor dotted). */
const LINEAR = new Set(["Add", "Sub", "Rsub", "Neg", "Reshape", "Squeeze", "Unsqueeze", "Transpose",
  "MatrixTranspose", "Permute", "Expand", "Repeat", "Flip", "Narrow", "Unbind", "Split", "SplitWithSizes", "Pad",
  "GetItem", "Gather", "IndexSelect", "Clone", "Contiguous", "ToDtype", "ToDevice", "Tril", "Triu"]);

/** Ops whose chain-rule "local derivative" text speaks of the gradient (reductions, losses): no local line forward. */
const REDUCTIONS = new Set(["Sum", "Mean", "Prod", "Amax", "MaxDim", "Logsumexp", "Norm", "Var", "Std", "MaxPool", "AvgPool",
  "AdaptiveAvgPool", "Huber"]);

/** How a tangent is written: a dot over a one-letter name (ẋ, Ẇ), else ṫ(name) (ṫ(loss), ṫ[Add n4]). */
export function tangentName(name) {
  if (/^[A-Za-z][0-9]*$/.test(name)) return `${name[0]}${DOT}${name.slice(1)}`.normalize("NFC");
  return name.startsWith("[") ? `ṫ${name}` : `ṫ(${name})`;
}

/** ``formula`` with each symbol and its tangent (the symbol dotted) replaced by its name, in one pass. */
export function renameTangents(formula, names) {
  const symbols = Object.keys(names).filter((symbol) => names[symbol]).sort((a, b) => b.length - a.length);
  if (!symbols.length) return formula;
  const escaped = symbols.map((symbol) => symbol.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(?<![A-Za-z0-9_.])(${escaped.join("|")})(${DOT})?(?![A-Za-z0-9_])`, "g");
  return formula.normalize("NFD").replace(pattern, (_, symbol, dot) => (dot ? tangentName(names[symbol]) : names[symbol]).normalize("NFD"))
    .normalize("NFC");
}

const dotted = (symbol) => `${symbol[0]}${DOT}${symbol.slice(1)}`;

/** One term of an elementwise JVP: the local derivative ``local`` times the tangent of ``symbol``. */
function term(derivative, symbol) {
  const tangent = dotted(symbol);
  const local = derivative.split(" = ")[0]; // "exp(x) = y": the first way of writing it
  if (local === "1") return tangent;
  if (local === "−1") return `−${tangent}`;
  if (/^1 (where|inside|on) .*else 0$/.test(local)) return `${tangent}${local.slice(1)}`; // "ẋ where x > 0, else 0"
  const outside = local.replace(/\([^()]*\)/g, "");
  return /[\s+\u2212]/.test(outside) ? `(${local})·${tangent}` : `${local}·${tangent}`;
}

/** The JVP formula of ``op`` in its own symbols (chain-rule.js's), or null when vizgrad has no text for it. */
export function jvpFormula(op) {
  const entry = derivativeOf(op);
  const key = Object.keys(JVPS).find((name) => name.toLowerCase() === String(op ?? "").toLowerCase());
  if (key) return JVPS[key];
  if (entry && LINEAR.has(op) && entry.forward) {
    // y = x reshaped → ẏ = ẋ reshaped; every tensor symbol of the formula gets its dot
    const tensors = [...entry.inputs, "y", "Y"];
    return entry.forward.replace(new RegExp(`(?<![A-Za-z0-9_])(${tensors.join("|")})(?![A-Za-z0-9_])`, "g"), (symbol) => dotted(symbol)).normalize("NFC");
  }
  if (entry?.local) {
    const terms = entry.inputs.map((symbol, index) => (entry.local[index] ? term(entry.local[index], symbol) : null)).filter(Boolean);
    return `ẏ = ${terms.join(" + ").replaceAll("+ −", "− ")}`.normalize("NFC");
  }
  return null;
}

/** The step text of a replay: "forward step 3 of 9: Mul (n4)", "before forward (0 of 9 steps)". */
export function flowStepText(graph, order, activeStep, flow) {
  const total = order.length;
  if (total === 0) return flow === "forward" ? "no tangents recorded" : "no backward pass recorded";
  if (activeStep < 0) return `before ${flow} (0 of ${total} steps)`;
  const id = order[activeStep];
  const node = graph.nodes.find((candidate) => candidate.id === id);
  const name = node ? node.name || node.label || node.op || node.kind : id;
  return `${flow} step ${activeStep + 1} of ${total}: ${name} (${id})`;
}

/** Whether a graph carries tangents to replay (a non-empty ``forward_order``). */
export function hasForward(graph) {
  return Array.isArray(graph.forward_order) && graph.forward_order.length > 0;
}

/**
 * The graph as the forward replay draws it: each node's replay index (``forward_index``, its
 * place in ``forward_order``) and ``flow: "forward"``, so that the drawing colours nodes by
 * their tangents and lights the edges a tangent came along (graph-dot.js, graph-view.js).
 */
export function forwardGraph(graph) {
  const index = new Map((graph.forward_order ?? []).map((id, position) => [id, position]));
  return { ...graph, flow: "forward", nodes: graph.nodes.map((node) => ({ ...node, forward_index: index.get(node.id) ?? null })) };
}

/**
 * Forward mode at ``nodeId`` of ``graph``: what the side panel shows.
 * @returns {null | {id: string, title: string, op: string|null, seed: boolean, forward: string, rule: string,
 *   known: boolean, inputs: {index: number, source: string, name: string, tangentName: string, carries: boolean,
 *   local: string|null, shape: string, summary: string, sample: string, bad: boolean}[], missing: string[] (inputs not drawn, "[input 0]"),
 *   out: {label: string, shape: string, summary: string, sample: string, bad: boolean}}}
 */
export function jvpStep(graph, nodeId) {
  const at = nodeAt(graph, nodeId);
  if (!at) return null;
  const { nodes, node, entry, title, edges, inputs } = at;
  const count = Math.max(entry?.inputs?.length ?? 0, edges.length ? edges.at(-1).index + 1 : 0);
  const symbols = entry?.inputs?.length ? entry.inputs : Array.from({ length: count }, (_, index) => `x${index}`);
  const names = symbolNames(symbols, node, inputs);
  const rename = (text) => renameTangents(text, names);
  const output = names.y ?? names.Y ?? nodeRef(node);
  const out = {
    label: `${tangentName(output)} (the tangent this ${node.op ? "op computed" : "tensor carries"})`,
    shape: shapeText(node.tangent?.shape ?? node.shape),
    summary: node.tangent ? statsSummary(node.tangent) : "no tangent",
    sample: sampleText(node.tangent),
    bad: isBad(node.tangent),
  };
  const drawn = edges.map((edge) => {
    const source = nodes.get(edge.source);
    const symbol = symbols[edge.index] ?? `x${edge.index}`;
    const name = names[symbol] ?? nodeRef(inputs[edge.index]);
    const carries = Boolean(source?.tangent);
    const local = REDUCTIONS.has(node.op) ? null : entry?.local?.[edge.index];
    return {
      index: edge.index,
      source: edge.source,
      name,
      tangentName: tangentName(name),
      carries,
      local: local ? `∂${output}/∂${name} = ${renameSymbols(local, names)}` : null,
      shape: shapeText(source?.tangent?.shape ?? edge.shape),
      summary: carries ? statsSummary(source.tangent) : `no tangent: ${tangentName(name)} = 0, its term drops out`,
      sample: carries ? sampleText(source.tangent) : "",
      bad: carries && isBad(source.tangent),
    };
  });
  // inputs the graph does not draw (they need no gradient): their tangents came from outside it
  const present = new Set(edges.map((edge) => edge.index));
  const differentiable = (index) => (entry?.local ?? entry?.grads ?? [])[index] !== null;
  symbols.forEach((symbol, index) => {
    if (!present.has(index)) names[symbol] = `[input ${index}]`; // never a generic x read as the user's own
  });
  const missing = node.op ? symbols.flatMap((symbol, index) => (!present.has(index) && differentiable(index) ? [names[symbol]] : [])) : [];
  const seed = Boolean(node.tangent) && !drawn.some((input) => input.carries) && (!node.op || (node.op === "View" && !missing.length));
  const formula = node.op ? jvpFormula(node.op) : null;
  let rule;
  if (seed) rule = `${tangentName(output)} is given (forward_ad.make_dual): the direction the forward pass carries`;
  else if (formula) rule = rename(formula);
  else rule = `${tangentName(output)} = J·ṫ: the Jacobian of ${node.op ?? node.kind} applied to the input tangents`;
  const forward = node.op
    ? rename(entry?.forward ?? `y = ${node.op}(${symbols.join(", ")})`)
    : `${title} is a ${node.kind}${node.tangent ? " carrying a tangent" : ""}`;
  return { id: node.id, title, op: node.op ?? null, seed, forward, rule, known: Boolean(formula) || seed, inputs: drawn, missing, out };
}
