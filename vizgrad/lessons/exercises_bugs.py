"""Exercises of lesson 14 (find the bug: a hand-written backward pass checked by the tutor).

* 14.1 the gradient of cross-entropy with respect to the logits, by hand,
* 14.2 the whole backward pass of a makemore-style MLP with batch norm, every tensor's
  gradient checked by :func:`vizgrad.tutor.compare` (each one a sub-check: partial credit),
* 14.3 "why is my .grad None?": the reason for each of five puzzles, checked against
  :func:`vizgrad.explain_grad` (each puzzle a sub-check).

The network and its forward pass are :func:`makemore_batch`, which the lesson uses too.
"""

import inspect

import numpy as np

from .. import creation
from ..nn import functional as F
from ..tutor import compare, explain_grad
from . import expect
from .exercises_early import _rng, _t
from .figures import GraphFigure
from .framework import Mistake, Parts, call, exercise
from .gradients import as_numpy, diagnose
from .hints import FURTHER, LESSON_CODES

EPS = 1e-5
#: The leaves of the network (its parameters) and the forward pass's intermediate tensors, in forward order.
PARAMETERS = ("C", "W1", "b1", "bngain", "bnbias", "W2", "b2")
INTERMEDIATES = ("emb", "embcat", "hprebn", "bnmeani", "bndiff", "bndiff2", "bnvar", "bnvar_inv", "bnraw", "hpreact",
                 "h", "logits")
#: Exercise 14.2 must give these gradients; the others are checked when given.
REQUIRED = ("logits", "h", "W2", "b2", "hpreact", "bngain", "bnbias", "hprebn", "W1", "b1")


def makemore_batch(seed=14, n=32, vocab=27, block=3, embedding=5, hidden=32):
    """A makemore MLP (an embedding table, a Linear layer, batch norm, tanh, a Linear layer,
    cross-entropy) on one batch of ``n`` random contexts of ``block`` characters, in float64.

    Returns a dict: the parameters (:data:`PARAMETERS`, requiring grad), the inputs ``Xb``
    and targets ``Yb``, every intermediate tensor of the forward pass (:data:`INTERMEDIATES`)
    and ``loss``, with ``n`` and ``vocab``."""
    rng = _rng(seed)
    p = {"C": _t(rng.normal(0, 1, (vocab, embedding))),
         "W1": _t(rng.normal(0, 1, (block * embedding, hidden)) * (5 / 3) / (block * embedding) ** 0.5),
         "b1": _t(rng.normal(0, 0.1, hidden)),
         "bngain": _t(1 + rng.normal(0, 0.1, (1, hidden))), "bnbias": _t(rng.normal(0, 0.1, (1, hidden))),
         "W2": _t(rng.normal(0, 0.1, (hidden, vocab))), "b2": _t(rng.normal(0, 0.1, vocab))}
    t = dict(p, Xb=creation.tensor(rng.integers(0, vocab, (n, block))), Yb=creation.tensor(rng.integers(0, vocab, n)),
             n=n, vocab=vocab)
    t["emb"] = p["C"][t["Xb"]]                                   # (n, block, embedding)
    t["embcat"] = t["emb"].view(n, -1)                           # (n, block * embedding)
    t["hprebn"] = t["embcat"] @ p["W1"] + p["b1"]                # (n, hidden)
    t["bnmeani"] = t["hprebn"].sum(0, keepdim=True) / n
    t["bndiff"] = t["hprebn"] - t["bnmeani"]
    t["bndiff2"] = t["bndiff"] ** 2
    t["bnvar"] = t["bndiff2"].sum(0, keepdim=True) / (n - 1)     # Bessel's correction, as makemore
    t["bnvar_inv"] = (t["bnvar"] + EPS) ** -0.5
    t["bnraw"] = t["bndiff"] * t["bnvar_inv"]
    t["hpreact"] = p["bngain"] * t["bnraw"] + p["bnbias"]
    t["h"] = t["hpreact"].tanh()
    t["logits"] = t["h"] @ p["W2"] + p["b2"]
    t["loss"] = F.cross_entropy(t["logits"], t["Yb"])
    return t


# ==== 14.1 the gradient of cross-entropy ==================================================================
@exercise("14.1", "the gradient of cross-entropy, by hand", lesson="14", solution="lesson14:cross_entropy_backward")
def exercise_14_1(cross_entropy_backward):
    """``cross_entropy_backward(logits, Yb)``: ∂loss/∂logits for ``loss = F.cross_entropy(logits, Yb)``."""
    t = makemore_batch(seed=141, n=8)
    logits = t["logits"].detach()
    what = "your cross_entropy_backward(logits, Yb)"
    got = as_numpy(expect.tensor(call(cross_entropy_backward, logits, t["Yb"], what=what), what))
    leaf = logits.clone().requires_grad_()
    F.cross_entropy(leaf, t["Yb"]).backward()
    want = as_numpy(leaf.grad)
    n, vocab = want.shape
    softmax = as_numpy(F.softmax(logits, dim=1))
    onehot = np.eye(vocab)[as_numpy(t["Yb"]).astype(int)]
    problem = diagnose(got, want, "logits", sizes=(n, vocab), candidates=[
        ("no-onehot", softmax / n, "Your dlogits is softmax(logits) / n: the target's `- 1` is missing.",
         ["The loss is -log p[target]: its derivative is p - 1 at the target's column and p elsewhere.",
          "Subtract the one-hot targets: `F.one_hot(Yb, vocab)` has a 1 at each row's target."]),
        ("onehot-only", -onehot / n, "Your dlogits is -onehot / n: the softmax part is missing.",
         ["Every logit changes every probability through the softmax's normalisation.",
          "dlogits = (softmax(logits) - onehot) / n."]),
    ])
    if problem is not None:
        raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)
    return ["dlogits = (softmax(logits) - onehot(Yb)) / n, on a batch of 8"]


# ==== 14.2 the whole backward pass ==========================================================================
#: Nearly the answer: the formula of each gradient, the last hint for the first wrong one.
FORMULAS = {
    "logits": "dlogits = (F.softmax(logits, 1) - F.one_hot(Yb, vocab)) / n",
    "h": "dh = dlogits @ W2.T",
    "W2": "dW2 = h.T @ dlogits",
    "b2": "db2 = dlogits.sum(0)",
    "hpreact": "dhpreact = (1 - h ** 2) * dh",
    "bngain": "dbngain = (bnraw * dhpreact).sum(0, keepdim=True)",
    "bnbias": "dbnbias = dhpreact.sum(0, keepdim=True)",
    "bnraw": "dbnraw = bngain * dhpreact",
    "bnvar_inv": "dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)",
    "bnvar": "dbnvar = -0.5 * (bnvar + 1e-5) ** -1.5 * dbnvar_inv",
    "bndiff2": "dbndiff2 = vg.ones_like(bndiff2) / (n - 1) * dbnvar",
    "bndiff": "dbndiff = bnvar_inv * dbnraw + 2 * bndiff * dbndiff2 (two uses: two terms)",
    "bnmeani": "dbnmeani = -dbndiff.sum(0, keepdim=True)",
    "hprebn": "dhprebn = dbndiff + dbnmeani / n (hprebn is used by bndiff and by bnmeani)",
    "embcat": "dembcat = dhprebn @ W1.T",
    "W1": "dW1 = embcat.T @ dhprebn",
    "b1": "db1 = dhprebn.sum(0)",
    "emb": "demb = dembcat.view(emb.shape)",
    "C": "dC = F.one_hot(Xb.view(-1), vocab).double().T @ demb.view(-1, C.shape[1]) (a row used twice gets both)",
}


def _gradient_names(grads):
    """The tensor a key of the learner's dict means: ``"dW1"`` and ``"W1"`` both mean W1."""
    names = {}
    for key in grads:
        name = key[1:] if isinstance(key, str) and key[:1] == "d" and key[1:] in FORMULAS else key
        if name not in FORMULAS:
            known = ", ".join(f"`d{n}`" for n in FORMULAS)
            raise Mistake(f"Your backprop returned a gradient for {key!r}, which is no tensor of this network.",
                          f"Name each gradient after its tensor: {known}.", kind="usage")
        names[name] = grads[key]
    return names


@exercise("14.2", "the backward pass of an MLP with batch norm, by hand", lesson="14", solution="lesson14:backprop")
def exercise_14_2(backprop):
    """``backprop(t)``: ``{"dlogits": ..., "dW2": ..., ...}`` from the forward pass's tensors
    ``t`` (:func:`makemore_batch`); each gradient is a sub-check, in backward order."""
    t = makemore_batch(seed=142)
    given = {k: (v.detach() if hasattr(v, "detach") else v) for k, v in t.items()}
    what = "your backprop(t)"
    grads = call(backprop, given, what=what)
    if not isinstance(grads, dict):
        raise Mistake(f"{what[0].upper()}{what[1:]} returned {type(grads).__name__}; return a dict "
                      "`{\"dlogits\": dlogits, \"dW2\": dW2, ...}`.", kind="usage")
    grads = _gradient_names(grads)
    checked = {t[name]: grads[name] for name in FORMULAS if name in grads}
    parts = Parts()
    if checked:
        report = compare(t["loss"], checked, names={name: t[name] for name in FORMULAS})
        for row in report.rows:
            if row.ok:
                parts.add(f"d{row.name}", passed=f"d{row.name} is right ({row.status})")
                continue
            first = row is report.first
            figure = GraphFigure(report.graph, [row.node_id], note=row.finding.kind) if first and row.node_id else None
            hints = [row.finding.hint, FURTHER.get(row.finding.kind), FORMULAS[row.name]]
            parts.add(f"d{row.name}", Mistake(report.message if first else row.finding.message, hints,
                                              kind=LESSON_CODES.get(row.finding.kind, row.finding.kind),
                                              figure=figure, details=row.finding.details))
    for name in REQUIRED:
        if name not in grads:
            parts.add(f"d{name}", Mistake(f"Your backprop returned no `d{name}`.",
                                          f"Return `d{name}` too: its formula comes from the line of the forward "
                                          f"pass that computes `{name}`.", kind="missing"))
    return parts.done()


# ==== 14.3 why is my .grad None? =============================================================================
def puzzle_a():
    x = creation.randn(4, 3, requires_grad=True)
    w = creation.randn(3, 2, requires_grad=True)
    h = x @ w
    loss = h.tanh().sum()
    loss.backward()
    return explain_grad(h, loss)                  # h.grad is None


def puzzle_b():
    x = creation.randn(4, 3)
    w = creation.randn(3, 2, requires_grad=True)
    for step in range(3):
        loss = (x @ w).pow(2).mean()
        loss.backward()
    return explain_grad(w, loss)                  # w.grad is three times the gradient


def puzzle_c():
    x = creation.randn(4, 3)
    w = creation.randn(3, 2, requires_grad=True)
    loss = (x @ w).pow(2).mean()
    loss.backward()
    w = w - 0.1 * w.grad                          # one step of gradient descent
    loss = (x @ w).pow(2).mean()
    loss.backward()
    return explain_grad(w, loss)                  # w.grad is None now


def puzzle_d():
    x = creation.randn(4, 3, requires_grad=True)
    w = creation.randn(3, 2, requires_grad=True)
    features = x.detach() * 2
    loss = (features @ w).sum()
    loss.backward()
    return explain_grad(x, loss)                  # x.grad is None


def puzzle_e():
    x = creation.randn(4, 3)
    w = creation.randn(3, 2)
    loss = (x @ w).relu().sum()
    return explain_grad(w, loss)                  # w.grad is None, and loss.backward() fails


PUZZLES = {"A": puzzle_a, "B": puzzle_b, "C": puzzle_c, "D": puzzle_d, "E": puzzle_e}

#: A first nudge per reason, before explain_grad's own sentence.
NUDGES = {
    "not_leaf": "Which tensors does backward() fill `.grad` for: all of them, or only some kind?",
    "accumulated": "What does backward() do with a `.grad` that is already there: replace it or add to it?",
    "rebound": "After the update line, is the variable still the tensor you created with requires_grad=True?",
    "detached": "Follow the path from the loss back to the tensor: is it connected all the way?",
    "created_under_no_grad": "Was that tensor computed while gradients were being recorded?",
    "requires_grad_false": "Was the tensor created with `requires_grad=True`?",
    "not_used_by_loss": "Is the loss really computed from that tensor?",
    "backward_not_called": "Has backward() run on this loss yet?",
    "ok": "Is anything wrong here at all?",
}


def puzzle_source(letter):
    """The code of puzzle ``letter`` (for the lesson to print)."""
    lines = [line[4:] for line in inspect.getsource(PUZZLES[letter]).splitlines()[1:]]
    question = lines.pop().partition("#")[2].strip()          # the return line's comment
    return "\n".join(lines).replace("creation.", "vg.") + f"\n# {question}: why?"


@exercise("14.3", "why is my .grad None?", lesson="14", solution="lesson14:grad_none_reasons")
def exercise_14_3(grad_none_reasons):
    """``grad_none_reasons()``: ``{"A": reason, ..., "E": reason}``, each reason one of
    :data:`vizgrad.tutor.REASONS`, for the puzzles of :data:`PUZZLES`."""
    from ..tutor import REASONS
    what = "your grad_none_reasons()"
    answer = call(grad_none_reasons, what=what)
    if not isinstance(answer, dict):
        raise Mistake(f"{what[0].upper()}{what[1:]} returned {type(answer).__name__}; return a dict "
                      "`{\"A\": \"not_leaf\", ...}`.", kind="usage")
    parts = Parts()
    for letter, puzzle in PUZZLES.items():
        truth = puzzle()
        given = answer.get(letter)
        with parts.check(f"puzzle {letter}", passed=f"puzzle {letter}: {truth.reason}"):
            if given is None:
                raise Mistake(f"Puzzle {letter} has no answer.", f"Add `\"{letter}\": ...` to the dict.",
                              kind="missing")
            if given not in REASONS:
                raise Mistake(f"Puzzle {letter}: {given!r} is not one of the reasons.",
                              f"Choose among {', '.join(REASONS)}.", kind="usage")
            if given != truth.reason:
                raise Mistake(f"Puzzle {letter}: not `{given}`.",
                              [NUDGES[truth.reason], truth.message, f"It is `{truth.reason}`. Fix: {truth.fix}"],
                              kind="wrong-reason")
    return parts.done()
