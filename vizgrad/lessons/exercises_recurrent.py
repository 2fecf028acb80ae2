"""Exercises of lesson 13 (recurrent networks and backprop through time).

* 13.1 one step of backprop through time in a tanh RNN, by hand,
* 13.2 an LSTM cell's forward as ``nn.LSTMCell`` computes it (PyTorch's gate order i, f, g, o),
* 13.3 the gradient of the recurrent weights, a sum over the time steps.

Each checker compares with autograd (or with ``nn.LSTMCell``) and recognises the usual
mistakes by name: a missing tanh derivative, ``W_hh`` where ``W_hhᵀ`` belongs, a gate read
from the wrong chunk, the last step's term alone instead of the sum over time.
"""

from itertools import permutations

import numpy as np

from .. import creation, random
from ..dtypes import float64
from ..errors import ShapeError
from ..nn import LSTMCell
from ..tensor import Tensor
from . import expect
from .exercises_early import _rng, _t
from .figures import GraphFigure
from .framework import LearnerError, Mistake, call, exercise
from .gradients import as_numpy, close, diagnose, record_graph


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _details(got, want):
    return [f"yours: `{np.round(got, 4).tolist()}`", f"expected: `{np.round(want, 4).tolist()}`"]


# ==== 13.1 one step back =====================================================================================
def _rnn_step(projection, h_prev, w_hh, grad_h):
    """Autograd's answer for one step h = tanh(projection + h_prev W_hhᵀ): the step's graph, its
    output h and ∂L/∂h_prev for L = sum(grad_h ⊙ h)."""
    h_prev = creation.tensor(h_prev, requires_grad=True, name="h_prev")
    weights = creation.tensor(w_hh, requires_grad=True, name="W_hh")
    inputs = creation.tensor(projection, name="x W_ihᵀ + b")
    h, graph, _ = record_graph(lambda hp, w, u: (u + hp @ w.T).tanh(), (h_prev, weights, inputs))
    (h * creation.tensor(grad_h)).sum().backward()
    return graph, as_numpy(h), as_numpy(h_prev.grad)


@exercise("13.1", "one step of backprop through time", lesson="13", solution="lesson13:rnn_step_back")
def exercise_13_1(rnn_step_back):
    """``rnn_step_back(grad_h, h, W_hh)``: ∂L/∂h_prev for h = tanh(x W_ihᵀ + b + h_prev W_hhᵀ),
    given grad_h = ∂L/∂h (batch, hidden), the step's output h and W_hh (hidden, hidden)."""
    rng = _rng(131)
    batch, hidden = 3, 5
    projection, h_prev = rng.normal(0, 1, (batch, hidden)), rng.normal(0, 0.5, (batch, hidden))
    w_hh, grad_h = rng.normal(0, 0.6, (hidden, hidden)), rng.normal(0, 1, (batch, hidden))
    graph, h, want = _rnn_step(projection, h_prev, w_hh, grad_h)
    what = "your rnn_step_back(grad_h, h, W_hh)"
    answer = call(rnn_step_back, _t(grad_h, False, "grad_h"), _t(h, False, "h"), _t(w_hh, False, "W_hh"), what=what)
    got = as_numpy(expect.tensor(answer, what))
    if close(got, want):
        return ["(grad_h ⊙ (1 - h²)) W_hh: the tanh derivative, then back through W_hh",
                "matches autograd's gradient at h_prev"]
    local = grad_h * (1 - h ** 2)
    known = [
        ("missing-tanh-derivative", grad_h @ w_hh, "You pass grad_h through W_hh but skip the tanh: the step "
         "computes h = tanh(z), so the gradient at z is grad_h ⊙ tanh'(z) first.",
         "tanh'(z) = 1 - tanh(z)², and tanh(z) is the step's output: `grad_h * (1 - h * h)`.", "Tanh",
         "tanh' missing"),
        ("tanh-of-output", (grad_h * (1 - np.tanh(h) ** 2)) @ w_hh, "You apply tanh to h again in the derivative: "
         "h is already tanh(z), so tanh'(z) = 1 - h², not 1 - tanh(h)².", "Use the output as it is: `1 - h * h`.",
         "Tanh", "1 - h², h = tanh(z)"),
        ("not-squared", (grad_h * (1 - h)) @ w_hh, "Your tanh derivative is 1 - h; it is 1 - h² (h squared).",
         "d/dz tanh(z) = 1 - tanh(z)² = `1 - h * h`.", "Tanh", "1 - h²"),
        ("transposed", local @ w_hh.T, "You multiply by W_hhᵀ where backward needs W_hh: the forward multiplies "
         "h_prev by W_hhᵀ, so the gradient goes back through (W_hhᵀ)ᵀ = W_hh.",
         "For z = h_prev @ W_hh.T, ∂L/∂h_prev = ∂L/∂z @ W_hh.", "MatMul", "back through W_hh, not W_hhᵀ"),
        ("missing-tanh-derivative", grad_h @ w_hh.T, "You skip the tanh derivative, and multiply by W_hhᵀ where "
         "backward needs W_hh.", "First `grad_h * (1 - h * h)` (the gradient at z), then `@ W_hh` (z = h_prev @ "
         "W_hh.T).", "Tanh", "tanh' missing"),
    ]
    if got.shape == want.shape:
        for kind, wrong, message, hint, op, note in known:
            if close(got, wrong):
                node = next(node.id for node in graph.nodes if node.op == op)
                raise Mistake(f"{message} In the step's graph: node `{node}` ({op}).", hint, kind=kind,
                              figure=GraphFigure(graph, [node], note=note), details=_details(got, want))
    problem = diagnose(got, want, "h_prev")
    raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)


# ==== 13.2 an LSTM cell ======================================================================================
_GATES = "ifgo"


def _lstm_numpy(x, h, c, w_ih, w_hh, b_ih, b_hh, order=(0, 1, 2, 3), variant=None):
    """One LSTM step in NumPy, the gates i, f, g, o read from chunks ``order``; ``variant`` names a
    known mistake to reproduce."""
    bias = b_ih if variant == "missing-bias" else b_ih + b_hh
    chunks = np.split(x @ w_ih.T + h @ w_hh.T + bias, 4, axis=-1)
    i, f, g, o = (chunks[k] for k in order)
    candidate = _sigmoid(g) if variant == "sigmoid-candidate" else np.tanh(g)
    if variant == "missing-input-gate":
        c_new = _sigmoid(f) * c + candidate
    elif variant == "missing-forget-gate":
        c_new = c + _sigmoid(i) * candidate
    else:
        c_new = _sigmoid(f) * c + _sigmoid(i) * candidate
    shown = {"missing-cell-tanh": c_new, "old-cell": np.tanh(c)}.get(variant, np.tanh(c_new))
    return _sigmoid(o) * shown, c_new


_LSTM_MISTAKES = {
    "missing-cell-tanh": ("Your c_new is right, but h_new = σ(o) ⊙ c_new: the cell state goes through tanh "
                          "before the output gate.", "`h_new = o.sigmoid() * c_new.tanh()`."),
    "old-cell": ("Your c_new is right, but h_new uses the previous cell state c: it is σ(o) ⊙ tanh(c_new).",
                 "Compute c_new first, then `h_new = o.sigmoid() * c_new.tanh()`."),
    "missing-input-gate": ("Your cell update adds tanh(g) ungated: the input gate σ(i) decides how much of it "
                           "to write.", "`c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()`."),
    "missing-forget-gate": ("Your cell update keeps all of c: the forget gate σ(f) scales it first (it is what "
                            "lets the cell forget, and what scales the gradient on the cell path).",
                            "`c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()`."),
    "sigmoid-candidate": ("Your candidate g goes through a sigmoid; in an LSTM it goes through tanh (values in "
                          "(-1, 1), so the cell can be written down as well as up), and only i, f and o are "
                          "sigmoids.", "`i.sigmoid() * g.tanh()`."),
    "missing-bias": ("Your gates leave out b_hh: nn.LSTMCell adds both biases, x W_ihᵀ + b_ih + h W_hhᵀ + b_hh.",
                     "Add `b_hh` too."),
}


def _lstm_reference(arrays, upstream):
    """nn.LSTMCell with these weights: its (h_new, c_new) and the gradients of
    sum(upstream[0] ⊙ h_new + upstream[1] ⊙ c_new) with respect to each argument."""
    x, h, c = arrays[:3]
    state = random.get_rng_state()             # the cell's initialisation must not move the learner's seed
    cell = LSTMCell(x.shape[1], h.shape[1], dtype=float64)
    random.set_rng_state(state)
    for parameter, value in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), arrays[3:]):
        parameter.data = creation.tensor(value)
    inputs = [creation.tensor(v, requires_grad=True) for v in (x, h, c)]
    h_new, c_new = cell(inputs[0], (inputs[1], inputs[2]))
    (h_new * creation.tensor(upstream[0]) + c_new * creation.tensor(upstream[1])).sum().backward()
    grads = [t.grad for t in inputs] + [p.grad for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    return as_numpy(h_new), as_numpy(c_new), [as_numpy(g) for g in grads]


def _lstm_pair(answer, what):
    """The learner's (h_new, c_new), or a Mistake that says what came back instead."""
    if isinstance(answer, (tuple, list)) and len(answer) == 2:
        return expect.tensor(answer[0], what + "[0] (h_new)"), expect.tensor(answer[1], what + "[1] (c_new)")
    got = "None" if answer is None else f"a {type(answer).__name__}"
    if isinstance(answer, (tuple, list)):
        got += f" of {len(answer)} items"
    raise Mistake(f"{what[:1].upper()}{what[1:]} returned {got}; expected the pair (h_new, c_new).",
                  "End with `return h_new, c_new`, as nn.LSTMCell returns them.", kind="returns")


def _gate_order_message(order):
    wrong = [f"{_GATES[k]} from chunk {order[k]} (the {_GATES[order[k]]} gate's)" for k in range(4) if order[k] != k]
    return ("Your gates come from the wrong chunks: you read " + ", ".join(wrong) + ". nn.LSTMCell's weights and "
            "biases hold the four gates in the order i, f, g, o.")


@exercise("13.2", "an LSTM cell, PyTorch's way", lesson="13", solution="lesson13:lstm_cell")
def exercise_13_2(lstm_cell):
    """``lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh)``: (h_new, c_new), one step of ``nn.LSTMCell``."""
    rng = _rng(132)
    batch, inputs, hidden = 3, 4, 5
    arrays = [rng.normal(0, 1, (batch, inputs)), rng.normal(0, 0.5, (batch, hidden)),
              rng.normal(0, 1, (batch, hidden)), rng.normal(0, 0.5, (4 * hidden, inputs)),
              rng.normal(0, 0.5, (4 * hidden, hidden)), rng.normal(0, 1, 4 * hidden), rng.normal(0, 1, 4 * hidden)]
    names = ("x", "h", "c", "W_ih", "W_hh", "b_ih", "b_hh")
    tensors = [_t(value, True, name) for value, name in zip(arrays, names)]
    what = "your lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh)"
    try:
        answer = call(lstm_cell, *tensors, what=what)
    except LearnerError as error:
        if isinstance(error.error, ShapeError):
            raise Mistake(f"Your lstm_cell raised a shape error: {error.error}",
                          "W_ih is (4·hidden, inputs) and W_hh (4·hidden, hidden), as in nn.LSTMCell: the gates "
                          "are `x @ W_ih.T + b_ih + h @ W_hh.T + b_hh`, shape (batch, 4·hidden).",
                          kind="shape") from None
        raise
    h_new, c_new = _lstm_pair(answer, what)
    for value, name in ((h_new, "h_new"), (c_new, "c_new")):
        expect.shape(value, (batch, hidden), f"your {name}", "h_new and c_new have h's shape, (batch, hidden): "
                     "split the gates into 4 chunks along the last dimension.")
    upstream = [rng.normal(0, 1, (batch, hidden)), rng.normal(0, 1, (batch, hidden))]
    want_h, want_c, want_grads = _lstm_reference(arrays, upstream)
    got_h, got_c = as_numpy(h_new), as_numpy(c_new)
    if close(got_h, want_h) and close(got_c, want_c):
        if not (h_new.requires_grad and c_new.requires_grad):
            raise Mistake("Right values, but the result does not require grad: the computation left vizgrad.",
                          "Use vizgrad operations only (no NumPy, no `.detach()`).", kind="no-grad")
        (h_new * creation.tensor(upstream[0]) + c_new * creation.tensor(upstream[1])).sum().backward()
        for tensor, name, want in zip(tensors, names, want_grads):
            if tensor.grad is None:
                raise Mistake(f"No gradient reaches `{name}`: the computation left vizgrad on the way.",
                              "Use vizgrad operations only (no NumPy, no `.detach()`).", kind="no-grad")
            expect.close_values(tensor.grad, want, f"the gradient for {name}")
        return ["gates in PyTorch's order i, f, g, o: σ, σ, tanh, σ",
                "c_new = σ(f) ⊙ c + σ(i) ⊙ tanh(g), h_new = σ(o) ⊙ tanh(c_new)",
                "values and gradients match nn.LSTMCell"]
    if close(got_h, want_c) and close(got_c, want_h):
        raise Mistake("Your h_new and c_new are the right values in the wrong order.",
                      "Return `(h_new, c_new)`, the order nn.LSTMCell uses.", kind="swapped-outputs")
    for order in permutations(range(4)):
        if order != (0, 1, 2, 3):
            wrong_h, wrong_c = _lstm_numpy(*arrays, order=order)
            if close(got_h, wrong_h) and close(got_c, wrong_c):
                raise Mistake(_gate_order_message(order), "Split as `i, f, g, o = gates.chunk(4, dim=-1)`.",
                              kind="gate-order")
    for variant, (message, hint) in _LSTM_MISTAKES.items():
        wrong_h, wrong_c = _lstm_numpy(*arrays, variant=variant)
        if close(got_h, wrong_h) and close(got_c, wrong_c):
            raise Mistake(message, hint, kind=variant)
    if close(got_c, want_c):
        problem = diagnose(got_h, want_h, "h_new", what="value")
        raise Mistake("Your c_new is right, but h_new is not. " + problem.message,
                      "h_new = σ(o) ⊙ tanh(c_new).", kind=problem.kind, details=problem.details)
    problem = diagnose(got_c, want_c, "c_new", what="value")
    raise Mistake("Your c_new is wrong. " + problem.message, "c_new = σ(f) ⊙ c + σ(i) ⊙ tanh(g), with i, f, g, o "
                  "the four chunks of `x @ W_ih.T + b_ih + h @ W_hh.T + b_hh`.", kind=problem.kind,
                  details=problem.details)


# ==== 13.3 the gradient of W_hh ===============================================================================
def _bptt(hs, w_hh, grad_last, variant=None):
    """∂L/∂W_hh by BPTT in NumPy, or the answer of the mistake ``variant``."""
    total, grad, steps = np.zeros_like(w_hh), grad_last, len(hs) - 1
    for t in range(steps, 0, -1):
        delta = grad if variant == "missing-tanh-derivative" else grad * (1 - hs[t] ** 2)
        before = hs[t] if variant == "off-by-one" else hs[t - 1]
        total = total + (before.T @ delta if variant == "transposed" else delta.T @ before)
        if variant == "missing-sum-over-time":
            break
        if variant != "no-carry":
            grad = delta @ w_hh
    return total / steps if variant == "mean-over-time" else total


_BPTT_MISTAKES = {
    "missing-sum-over-time": ("Your answer is the last step's term alone, δ_Tᵀ h_(T-1). W_hh is used at every "
                              "one of the T steps, so its gradient is the sum of T terms, one per step.",
                              "Loop t = T, ..., 1, adding `delta.T @ hs[t - 1]` at each step, and pass the "
                              "gradient back with `grad = delta @ W_hh`."),
    "no-carry": ("Every one of your terms starts from grad_last: the gradient that reaches step t has come back "
                 "through every step after it.", "After each term, carry it back one step: `grad = delta @ W_hh`, "
                 "with `delta = grad * (1 - hs[t] * hs[t])`."),
    "off-by-one": ("Your terms pair δ_t with h_t; W_hh multiplies the previous state, so its term at step t is "
                   "δ_tᵀ h_(t-1).", "`delta.T @ hs[t - 1]`."),
    "transposed": ("Your gradient is the transpose of the right one: h_(t-1)ᵀ δ_t where δ_tᵀ h_(t-1) belongs.",
                   "For z = h @ W_hh.T, the (i, j) entry of ∂L/∂W_hh is Σ δ[:, i] h[:, j]: "
                   "`delta.T @ hs[t - 1]`."),
    "missing-tanh-derivative": ("Your δ_t leaves out the tanh derivative: δ_t = ∂L/∂h_t ⊙ (1 - h_t²) is the "
                                "gradient at z_t, the input of tanh.", "`delta = grad * (1 - hs[t] * hs[t])`."),
    "mean-over-time": ("Your answer is the mean of the T terms, not their sum: each step's use of W_hh adds its "
                       "own gradient.", "Add the terms; do not divide by T."),
}


@exercise("13.3", "the gradient of W_hh: a sum over time", lesson="13", solution="lesson13:grad_w_hh")
def exercise_13_3(grad_w_hh):
    """``grad_w_hh(hs, W_hh, grad_last)``: ∂L/∂W_hh for a tanh RNN that produced the states
    hs = [h_0, ..., h_T], when the loss depends on h_T only and grad_last = ∂L/∂h_T."""
    rng = _rng(133)
    batch, hidden, steps = 2, 4, 5
    w_hh, h0 = rng.normal(0, 0.6, (hidden, hidden)), rng.normal(0, 0.5, (batch, hidden))
    projections, grad_last = rng.normal(0, 1, (steps, batch, hidden)), rng.normal(0, 1, (batch, hidden))
    weights = creation.tensor(w_hh, requires_grad=True, name="W_hh")
    h, states = creation.tensor(h0), [creation.tensor(h0)]
    for projection in projections:
        h = (creation.tensor(projection) + h @ weights.T).tanh()
        states.append(h)
    (h * creation.tensor(grad_last)).sum().backward()
    want = as_numpy(weights.grad)
    hs = [as_numpy(state) for state in states]
    what = "your grad_w_hh(hs, W_hh, grad_last)"
    answer = call(grad_w_hh, [_t(state, False, f"h_{t}") for t, state in enumerate(hs)], _t(w_hh, False, "W_hh"),
                  _t(grad_last, False, "grad_last"), what=what)
    if isinstance(answer, (list, tuple)) and len(answer) == steps and all(isinstance(a, Tensor) for a in answer):
        if close(sum(as_numpy(a) for a in answer), want):
            raise Mistake(f"You return the {steps} terms, one per time step, separately: the gradient of W_hh "
                          "is their sum.", "Add them up: `total = total + delta.T @ hs[t - 1]`.",
                          kind="missing-sum-over-time")
    got = as_numpy(expect.tensor(answer, what))
    expect.shape(answer, want.shape, what, "The gradient of W_hh has W_hh's shape, (hidden, hidden).")
    if close(got, want):
        return [f"the sum of {steps} terms δ_tᵀ h_(t-1), one per time step: the same W_hh at every step",
                "δ_t carried back through W_hh and the tanh derivative at each step",
                "matches autograd's W_hh.grad"]
    for variant, (message, hint) in _BPTT_MISTAKES.items():
        if close(got, _bptt(hs, w_hh, grad_last, variant)):
            raise Mistake(message, hint, kind=variant, details=_details(got, want))
    problem = diagnose(got, want, "W_hh")
    raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)
