"""Exercises of lessons 11 (attention) and 12 (a tiny transformer).

* 11.1 softmax as an ``autograd.Function`` (its backward is a Jacobian-vector product),
* 11.2 causal self-attention: the mask goes on the scores, *before* softmax,
* 11.3 the scores' scaling by 1/√d,
* 12.1 LayerNorm as an ``autograd.Function`` (the mean and variance depend on x too),
* 12.2 the gradient paths through two residual blocks, by hand.

Where a mistake sits at one node of the learner's graph, the feedback draws that graph
with the node highlighted and names it (``node n8 (MaskedFill)``).
"""

import math

import numpy as np

from .. import creation
from ..errors import ShapeError
from ..nn.functional import scaled_dot_product_attention
from . import expect
from .exercises_early import _check_custom, _rng, _t
from .figures import GraphFigure
from .framework import LearnerError, Mistake, call, exercise
from .gradients import as_numpy, close, diagnose, record_graph


def _softmax(x):
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _ops(graph):
    """The op nodes of ``graph`` in forward order."""
    return [node for node in graph.nodes if node.kind in ("op", "output")]


def _record(function, tensors, what):
    """Run the learner's ``function(*tensors)`` recording its graph; (output, graph)."""
    try:
        output, graph, _ = record_graph(lambda *args: call(function, *args, what=what), tensors)
    except LearnerError as error:
        if isinstance(error.error, ShapeError):
            raise Mistake(f"{what[:1].upper()}{what[1:]} raised a shape error: {error.error}",
                          "Print the shape of each tensor: q and k are (T, d), the scores (T, T), the mask "
                          "(T, T).", kind="shape") from None
        raise
    return expect.tensor(output, what), graph


def _after(graph, node, op):
    """Whether an ``op`` node lies on a path from the graph's inputs to ``node``."""
    seen, stack = set(), list(graph.inputs_of(node.id))
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if graph.node(current).op == op:
            return True
        stack.extend(graph.inputs_of(current))
    return False


# ==== lesson 11: attention ================================================================================
@exercise("11.1", "softmax as an autograd.Function", lesson="11", solution="lesson11:MySoftmax")
def exercise_11_1(MySoftmax):
    """``MySoftmax.apply(x)``: softmax over the last dimension, with its backward."""
    rng = _rng(111)

    def candidates(arrays, v):
        s = _softmax(arrays[0])
        return {0: [
            ("diagonal-only", v * s * (1 - s),
             "Your backward multiplies by s·(1 - s), the diagonal of the Jacobian only: it treats each output as "
             "if it depended on its own input alone, as a sigmoid does.",
             "Every output of softmax depends on every input of its row: ∂sᵢ/∂xⱼ = sᵢ(δᵢⱼ - sⱼ). Contracted with "
             "the upstream gradient g this is `s * (g - (g * s).sum(-1, keepdim=True))`."),
            ("sum-over-everything", s * (v - (v * s).sum()),
             "Your backward sums g·s over the whole tensor instead of each row.",
             "Each row is its own softmax: `(g * s).sum(dim=-1, keepdim=True)`."),
            ("missing-keepdim", s * (v - (v * s).sum(-1)[None, :]) if v.ndim == 2 and v.shape[0] == v.shape[1]
             else None, "Your row sums line up with the columns: `(g * s).sum(-1)` lost its dimension.",
             "Keep it: `(g * s).sum(dim=-1, keepdim=True)` has shape (rows, 1)."),
        ]}

    inputs = [[rng.normal(0, 1.5, 5)], [rng.normal(0, 1.5, (4, 4))], [rng.normal(0, 1.5, (2, 3, 4))]]
    return _check_custom(MySoftmax, "MySoftmax", lambda x: x.softmax(-1), inputs, ["scores"],
                         lambda op, x: (op.apply(x * 0.5) * x).sum(), candidates)


def _attention_inputs(seed, length=6, dim=4):
    rng = _rng(seed)
    return [_t(rng.normal(0, 1, (length, dim)), name=name) for name in ("q", "k", "v")]


def _reference_attention(q, k, v, mask_after=False, mask_value=-math.inf, future=False, masked=True):
    length, dim = q.shape
    scores = q @ k.T / math.sqrt(dim)
    allowed = np.tril(np.ones((length, length), dtype=bool))
    if future:
        allowed = ~allowed | np.eye(length, dtype=bool)
    if not masked:
        return _softmax(scores) @ v
    if mask_after:
        return np.where(allowed, _softmax(scores), 0.0) @ v
    return _softmax(np.where(allowed, scores, mask_value)) @ v


@exercise("11.2", "causal self-attention: mask, then softmax", lesson="11", solution="lesson11:causal_attention")
def exercise_11_2(causal_attention):
    """``causal_attention(q, k, v)`` for q, k, v of shape (T, d): softmax(mask(q kᵀ/√d)) v."""
    q, k, v = _attention_inputs(112)
    what = "your causal_attention(q, k, v)"
    out, graph = _record(causal_attention, (q, k, v), what)
    expect.shape(out, tuple(v.shape), what, "The output has one row per query position and v's width.")
    got = as_numpy(out)
    arrays = [as_numpy(t) for t in (q, k, v)]
    if close(got, _reference_attention(*arrays)):
        if not out.requires_grad:
            raise Mistake("Right values, but the result does not require grad: the computation left vizgrad.",
                          "Use vizgrad operations only (no NumPy, no `.detach()`).", kind="no-grad")
        upstream = creation.tensor(_rng(1120).normal(0, 1, tuple(out.shape)))
        (out * upstream).sum().backward()
        reference = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
        (scaled_dot_product_attention(*reference, is_causal=True) * upstream).sum().backward()
        for name, mine, theirs in zip("qkv", (q, k, v), reference):
            if mine.grad is None:
                raise Mistake(f"No gradient reaches `{name}`: the computation left vizgrad on the way.",
                              "Use vizgrad operations only (no NumPy, no `.detach()`).", kind="no-grad")
            expect.close_values(mine.grad, theirs.grad, f"the gradient for {name}")
        return ["right values: position i attends to positions 0..i only, each row of weights sums to 1",
                "gradients for q, k and v match `F.scaled_dot_product_attention(q, k, v, is_causal=True)`"]
    if close(got, _reference_attention(*arrays, mask_after=True)):
        fills = [node for node in _ops(graph) if node.op == "MaskedFill" and _after(graph, node, "Softmax")]
        wrong = fills[0] if fills else next((node for node in _ops(graph) if node.op == "Softmax"), None)
        where = f" Node `{wrong.id}` ({wrong.op}) comes after the softmax." if wrong is not None else ""
        raise Mistake("You mask *after* the softmax: the future weights become 0, but the rest no longer sum to 1 "
                      "(row 0 keeps only its share of the whole row)." + where,
                      "Mask the *scores*, before softmax, with -inf: `scores.masked_fill(mask == 0, float('-inf'))`, "
                      "then `softmax(dim=-1)`; exp(-inf) = 0, and the softmax renormalises what is left.",
                      kind="mask-after-softmax",
                      figure=GraphFigure(graph, [wrong.id] if wrong is not None else [], note="masked after softmax"))
    if close(got, _reference_attention(*arrays, mask_value=0.0)):
        fills = [node for node in _ops(graph) if node.op == "MaskedFill"]
        raise Mistake("Your mask fills the future scores with 0, and exp(0) = 1: the future still gets weight."
                      + (f" Node `{fills[0].id}` (MaskedFill) writes the 0." if fills else ""),
                      "Fill with `float('-inf')`, whose exponential is exactly 0.", kind="mask-with-zero",
                      figure=GraphFigure(graph, [fills[0].id] if fills else [], note="fills 0, not -inf"))
    if close(got, _reference_attention(*arrays, future=True)):
        raise Mistake("Your mask hides the past and shows the future: position i attends to i..T-1.",
                      "`tril` keeps the lower triangle (j ≤ i): use `vg.tril(vg.ones(T, T))` and fill where it is 0.",
                      kind="mask-inverted")
    if close(got, _reference_attention(*arrays, masked=False)):
        raise Mistake("No mask: every position attends to the whole sequence, future included.",
                      "Build `mask = vg.tril(vg.ones(T, T))` and fill the scores where `mask == 0` with -inf.",
                      kind="no-mask")
    expect.close_values(out, _reference_attention(*arrays), "causal_attention(q, k, v)")


@exercise("11.3", "scaled scores: q kᵀ / √d", lesson="11", solution="lesson11:attention_scores")
def exercise_11_3(attention_scores):
    """``attention_scores(q, k)`` for q, k of shape (T, d) returns q kᵀ / √d, shape (T, T)."""
    rng = _rng(113)
    length, dim = 8, 64
    q, k = (_t(rng.normal(0, 1, (length, dim)), name=name) for name in ("q", "k"))
    what = "your attention_scores(q, k)"
    out, graph = _record(attention_scores, (q, k), what)
    expect.shape(out, (length, length), what, "q kᵀ is (T, d) @ (d, T) = (T, T): transpose k's last two dims.")
    raw = as_numpy(q) @ as_numpy(k).T
    got = as_numpy(out)
    want = raw / math.sqrt(dim)
    if close(got, want):
        return [f"scores of std {got.std():.2f} for d = {dim} (unscaled they would have std {raw.std():.1f})",
                "softmax of them stays soft, so its gradient stays alive"]
    ops = _ops(graph)
    products = [node for node in ops if node.op in ("MatMul", "Mm")]
    scalings = [node for node in ops if node.op in ("Div", "Mul")]
    node = (scalings or products or ops)[-1] if ops else None
    figure = GraphFigure(graph, [node.id] if node is not None else [], note="wrong scale")
    where = f" (node `{node.id}`, {node.op})" if node is not None else ""
    weights = _softmax(got)
    peak = float(weights.max(axis=-1).mean())
    if close(got, raw):
        raise Mistake(f"Your scores are not scaled: for d = {dim} their std is {got.std():.1f}, so softmax is "
                      f"almost one-hot (the largest weight averages {peak:.2f}) and its gradient almost "
                      f"zero.{where}", "Divide by √d: `q @ k.transpose(-2, -1) / math.sqrt(d)` keeps the std near 1.",
                      kind="missing-scale", figure=figure)
    if close(got, raw / dim):
        raise Mistake(f"You divide by d = {dim}, not √d: the scores' std is {got.std():.3f}, so softmax is almost "
                      f"uniform and attention cannot focus.{where}",
                      "q·k sums d products of variance 1, so its variance is d and its std √d: divide by "
                      "`math.sqrt(d)`.", kind="scale-by-d", figure=figure)
    if close(got, raw * math.sqrt(dim)):
        raise Mistake(f"You multiply by √d instead of dividing: the scores' std is {got.std():.0f}.{where}",
                      "Divide: `/ math.sqrt(d)`.", kind="scale-inverted", figure=figure)
    if close(got, raw.T / math.sqrt(dim)):
        raise Mistake("Your scores are transposed: row i must hold query i's scores against every key.",
                      "`q @ k.transpose(-2, -1)`, not `k @ q.transpose(-2, -1)`.", kind="transposed", figure=figure)
    expect.close_values(out, want, "attention_scores(q, k)")


# ==== lesson 12: a tiny transformer =========================================================================
@exercise("12.1", "LayerNorm as an autograd.Function", lesson="12", solution="lesson12:MyLayerNorm")
def exercise_12_1(MyLayerNorm):
    """``MyLayerNorm.apply(x)``: (x - mean) / sqrt(var + 1e-5) over the last dim (biased variance)."""
    rng = _rng(121)
    eps = 1e-5

    def normalise(x):
        mean = x.mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps), mean

    def candidates(arrays, g):
        x = arrays[0]
        xhat, mean = normalise(x)
        inv = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
        return {0: [
            ("constant-statistics", g * inv,
             "Your backward divides g by the standard deviation and stops there: it treats the mean and the "
             "variance as constants, but both depend on x.",
             "The full gradient is `inv_std * (g - g.mean(-1, keepdim=True) - x̂ * (g * x̂).mean(-1, keepdim=True))`: "
             "one term per path from x to the output (directly, through the mean, through the variance)."),
            ("missing-variance-term", inv * (g - g.mean(axis=-1, keepdims=True)),
             "Your backward includes the path through the mean but not the one through the variance.",
             "Add `- x̂ * (g * x̂).mean(-1, keepdim=True)` inside the bracket."),
            ("missing-mean-term", inv * (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)),
             "Your backward includes the path through the variance but not the one through the mean.",
             "Subtract `g.mean(-1, keepdim=True)` too."),
        ]}

    def reference(x):
        mean = x.mean(dim=-1, keepdim=True)
        return (x - mean) / ((x - mean) ** 2).mean(dim=-1, keepdim=True).add(eps).sqrt()

    inputs = [[rng.normal(1, 2, 6)], [rng.normal(0, 1, (3, 5))], [rng.normal(0, 3, (2, 2, 4))]]
    return _check_custom(MyLayerNorm, "MyLayerNorm", reference, inputs, ["x"],
                         lambda op, x: (op.apply(x * 1.5) * x).sum(), candidates)


def _residual_graph(g, w1, w2):
    """The graph of two linear residual blocks, x1 = x + x @ W1, x2 = x1 + x1 @ W2, and its
    MatMul (block) and Add (skip) nodes."""
    x = creation.tensor(np.zeros((1, w1.shape[0])), requires_grad=True, name="x")
    weights = [creation.tensor(w, requires_grad=True, name=name) for w, name in ((w1, "W1"), (w2, "W2"))]

    def stack(x, a, b):
        x1 = x + x @ a
        return x1 + x1 @ b
    _, graph, _ = record_graph(stack, (x, *weights))
    ops = _ops(graph)
    return graph, [n.id for n in ops if n.op in ("MatMul", "Mm")], [n.id for n in ops if n.op == "Add"]


@exercise("12.2", "gradient paths through residual blocks", lesson="12", solution="lesson12:residual_input_grad")
def exercise_12_2(residual_input_grad):
    """``residual_input_grad(g, W1, W2)``: the gradient at x of x2 = x1 + x1 @ W2, x1 = x + x @ W1,
    for the upstream gradient g (1, n) at x2."""
    rng = _rng(122)
    n = 4
    g, w1, w2 = rng.normal(0, 1, (1, n)), rng.normal(0, 0.5, (n, n)), rng.normal(0, 0.5, (n, n))
    answer = call(residual_input_grad, _t(g, False, "g"), _t(w1, False, "W1"), _t(w2, False, "W2"),
                  what="your residual_input_grad(g, W1, W2)")
    answer = expect.tensor(answer, "your residual_input_grad(g, W1, W2)")
    got = as_numpy(answer)
    skip, block1, block2, both = g, g @ w1.T, g @ w2.T, g @ w2.T @ w1.T
    want = skip + block1 + block2 + both
    graph, blocks, adds = _residual_graph(g, w1, w2)

    def figure(nodes, note):
        return GraphFigure(graph, nodes, note=note)

    known = [
        ("missing-cross-path", skip + block1 + block2, "You have three of the four paths: the one through *both* "
         "blocks (`g @ W2.T @ W1.T`) is missing.", "Expand (I + W2)ᵀ then (I + W1)ᵀ applied to g: "
         "skip-skip, block 2 then skip, skip then block 1, block 2 then block 1.", blocks, "the path through both"),
        ("no-skip", both, "You have only the path through both blocks: that is the gradient without residual "
         "connections.", "Each residual `x + f(x)` passes g through unchanged *and* through f: add the skip paths.",
         adds, "the skip connections"),
        ("skip-only", skip, "You have only the skip path: the blocks pass gradient too.",
         "Add the paths through W1, through W2 and through both.", blocks, "the blocks"),
        ("order", skip + block1 + block2 + g @ w1.T @ w2.T, "Your path through both blocks goes in forward order: "
         "backward visits block 2 first, then block 1.", "`g @ W2.T @ W1.T`, not `g @ W1.T @ W2.T`.", blocks,
         "backward order: W2 then W1"),
        ("transposed", g + g @ w1 + g @ w2 + g @ w2 @ w1, "Your paths multiply by W where backward needs Wᵀ.",
         "For y = x @ W, dx = dy @ W.T.", blocks, "needs W.T"),
    ]
    if got.shape != want.shape:
        expect.shape(answer, want.shape, "your residual_input_grad(g, W1, W2)", "The gradient has x's shape, (1, n).")
    if close(got, want):
        return ["the four paths: skip-skip, through W1, through W2 and through both",
                "matches autograd through the two residual blocks"]
    for kind, wrong, message, hint, nodes, note in known:
        if close(got, wrong) and not close(wrong, want):
            raise Mistake(message, hint, kind=kind, figure=figure(nodes, note),
                          details=[f"yours: `{np.round(got, 4).tolist()}`",
                                   f"expected: `{np.round(want, 4).tolist()}`"])
    problem = diagnose(got, want, "x", what="gradient")
    raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)

