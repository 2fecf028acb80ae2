"""Exercises of lesson 10 (characters to a language model): the cross-entropy backward
by hand (10.1) and the backward of an embedding lookup (10.2).

Both ask for a :class:`vizgrad.autograd.Function`. The checker runs it inside a small
character-level MLP (embedding lookup, linear layer, tanh, linear layer, loss), catches
what its ``backward`` returns (even when the engine would reject it), compares that with
the right gradient, and names the classic mistakes, which it recognises by computing
them too. On a wrong gradient the feedback shows that graph with the learner's node in
red.
"""

import numpy as np

from .. import creation
from ..errors import BackwardError, ShapeError
from ..nn import functional as F
from ..tensor import Tensor
from . import expect
from .figures import GraphFigure
from .framework import LearnerError, Mistake, exercise, learner_code
from .gradients import Diagnosis, as_numpy, close, diagnose, record_graph

VOCABULARY, BLOCK, DIM, HIDDEN = 27, 3, 2, 8      # the lesson's MLP, in miniature


def _t(values, requires_grad=False, name=None):
    return creation.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad, name=name)


def _ints(values, name=None):
    return creation.tensor(np.asarray(values, dtype=np.int64), name=name)


def _softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _one_hot(targets, classes):
    return np.eye(classes)[targets]


def _contexts(rng, n):
    """n contexts of BLOCK character indices, padded with '.' (index 0) at the start of a
    word as in the lesson, so indices repeat within the batch (and within a context)."""
    index = rng.integers(1, VOCABULARY, (n, BLOCK))
    index[: n // 2, 0] = 0
    index[: n // 4, 1] = 0
    return index


def _network(rng):
    """The parameters of the small MLP the checkers run the learner's Function in."""
    return {"C": rng.standard_normal((VOCABULARY, DIM)), "W1": rng.standard_normal((BLOCK * DIM, HIDDEN)) * 0.5,
            "W2": rng.standard_normal((HIDDEN, VOCABULARY)) * 0.5}


class _Capture:
    """``probe``: a subclass of the learner's Function (same name and module, so the graph and
    the feedback call it by its name) whose backward records what the learner's returns."""

    def __init__(self, cls):
        self.returned = []
        returned = self.returned

        def backward(ctx, *grads):
            result = cls.backward(ctx, *grads)
            returned.append(result)
            return result

        self.probe = type(cls.__name__, (cls,), {"backward": staticmethod(backward), "__module__": cls.__module__})


def _run_in_graph(cls, build, args):
    """Record ``build(probe, *args)`` (a scalar loss) and run its backward; return ``(graph, the
    learner's Function's node id, what its backward returned, the engine's error or None)``."""
    capture = _Capture(cls)
    output, graph, applications = record_graph(lambda *values: build(capture.probe, *values), args)
    node_id = next((node for node, op, _ in applications if op is capture.probe), None)
    engine_error = None
    with learner_code(f"{cls.__name__}.backward"):
        try:
            output.backward()
        except BackwardError as error:       # e.g. a gradient of the wrong shape: the capture has it
            engine_error = error
    returned = capture.returned[0] if capture.returned else None
    return graph, node_id, returned, engine_error


def _gradient_for_first_input(cls, returned, engine_error, input_name, second_name):
    """The gradient the learner's backward returned for its first input, as a float64 array."""
    if returned is None:
        raise Mistake(f"vizgrad could not run `{cls.__name__}.backward`: {engine_error}", kind="backward")
    raw = tuple(returned) if isinstance(returned, (tuple, list)) else (returned,)
    if len(raw) != 2:
        raise Mistake(f"`{cls.__name__}.backward` returned {len(raw)} gradient{'s' if len(raw) != 1 else ''}; "
                      f"forward takes two inputs (`{input_name}`, `{second_name}`).",
                      f"Return one gradient per input, in order: `return grad_{input_name}, None` (`{second_name}` "
                      "holds integers, which have no gradient).", kind="gradient-count")
    got = raw[0]
    if got is None:
        raise Mistake(f"`{cls.__name__}.backward` returned None for `{input_name}`, which needs a gradient.",
                      f"Return a Tensor of `{input_name}`'s shape first, then None for `{second_name}`.",
                      kind="missing-gradient")
    if not isinstance(got, Tensor):
        raise Mistake(f"`{cls.__name__}.backward` returned a {type(got).__name__} for `{input_name}`; return a "
                      "Tensor.", "Compute the gradient with vizgrad operations on `grad_output` and the saved "
                      "tensors.", kind="not-a-tensor")
    return as_numpy(got)


def _wrong_node(cls, graph, node_id, diagnosis):
    """The Mistake for a wrong gradient, with the graph and the learner's node in red."""
    figure = GraphFigure(graph, [node_id], note=f"wrong gradient: {diagnosis.kind}") if node_id else None
    where = (f" In the graph below, your node `{node_id}` (`{cls.__name__}`) is where the wrong gradient enters the "
             "backward pass: everything before it (going backward) is right, everything after it inherits the "
             "error." if figure is not None else "")
    return Mistake(diagnosis.message + where, diagnosis.hint, kind=diagnosis.kind, figure=figure,
                   details=diagnosis.details)


# ==== exercise 10.1: the cross-entropy backward ============================================================
def _mlp_loss(loss_op, C, W1, W2, index, targets):
    hidden = (C[index].view(index.shape[0], -1) @ W1).tanh()
    return loss_op.apply(hidden @ W2, targets)


@exercise("10.1", "the cross-entropy backward by hand", lesson="10", solution="lesson10:CrossEntropy")
def exercise_10_1(CrossEntropy):
    """``CrossEntropy.apply(logits, targets)``: the mean negative log-likelihood of the
    ``targets`` (n,) under the softmax of ``logits`` (n, classes); backward returns
    ``(grad_output · (softmax(logits) - one_hot(targets)) / n, None)``."""
    cls = expect.function_class(CrossEntropy, "CrossEntropy")
    rng = np.random.default_rng(101)
    for n, classes, scale in [(5, 4, 1.0), (7, VOCABULARY, 3.0)]:
        logits, targets = rng.standard_normal((n, classes)) * scale, rng.integers(0, classes, n)
        with learner_code(f"{cls.__name__}.forward"):
            value = cls.apply(_t(logits), _ints(targets))
        got = expect.number(expect.tensor(value, f"`{cls.__name__}.apply(logits, targets)`"),
                            f"`{cls.__name__}.apply(logits, targets)`")
        want = F.cross_entropy(_t(logits), _ints(targets)).item()
        if not np.isclose(got, want, rtol=1e-6, atol=1e-9):
            total = -np.log(_softmax(logits)[np.arange(n), targets]).sum()
            summed = np.isclose(got, total, rtol=1e-6)
            raise Mistake(f"`{cls.__name__}.forward` gives {got:.6g} for {n} examples; the mean cross-entropy is "
                          f"{want:.6g}" + (f" and the sum {total:.6g}: you sum over the batch." if summed else "."),
                          "The loss is the *mean* over the batch of -log softmax(logits)[i, targets[i]]."
                          if summed else "Check forward before backward: -log of the softmax probability of "
                          "each target, averaged over the batch.", kind="forward-sum" if summed else "forward")
    large = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]])
    with learner_code(f"{cls.__name__}.forward"):
        value = cls.apply(_t(large), _ints([0, 2]))
    got = expect.number(value, f"`{cls.__name__}.apply` on logits of ±1000")
    if not np.isfinite(got):
        raise Mistake(f"`{cls.__name__}.forward` returns {got} for logits of ±1000: exp overflows.",
                      "Subtract each row's maximum before `exp`: softmax does not change, and the largest "
                      "exponent becomes e⁰ = 1. (`logits.amax(dim=1, keepdim=True)`.)", kind="overflow")

    n = 12
    index, targets = _contexts(rng, n), rng.integers(0, VOCABULARY, n)
    params = _network(rng)
    upstream = 2.5                      # the loss is scaled after the Function: grad_output is not 1
    tensors = [_t(params[k], requires_grad=True, name=k) for k in ("C", "W1", "W2")]
    graph, node_id, returned, engine_error = _run_in_graph(
        cls, lambda op, *args: _mlp_loss(op, *args) * upstream,
        (*tensors, _ints(index, "context"), _ints(targets, "targets")))
    got = _gradient_for_first_input(cls, returned, engine_error, "logits", "targets")
    hidden = np.tanh(params["C"][index].reshape(n, -1) @ params["W1"])
    logits = hidden @ params["W2"]
    p, y = _softmax(logits), _one_hot(targets, VOCABULARY)
    want = upstream * (p - y) / n
    column_softmax = np.exp(logits - logits.max(axis=0)) / np.exp(logits - logits.max(axis=0)).sum(axis=0)
    candidates = [
        ("no-batch-mean", upstream * (p - y), f"Your gradient is {n} times too large: the loss is a *mean* over the "
         f"{n} examples, so each example's share of it carries a factor 1/{n}.", "Divide by the batch size: "
         "`(probs - one_hot) / n` with `n = logits.shape[0]`."),
        ("sign", upstream * (y - p) / n, "Your gradient has the wrong sign: it points uphill, towards a larger "
         "loss.", "d(-log pᵧ)/dzⱼ = pⱼ - 1[j = y]: softmax *minus* the one-hot, not the other way round."),
        ("missing-one-hot", upstream * p / n, "Your gradient is softmax(logits) / n: the one-hot of the targets is "
         "missing, so nothing pulls the right character's logit up.", "Subtract 1 at each row's target: "
         "`probs - F.one_hot(targets, classes)` (or `probs[vg.arange(n), targets] -= 1` on a copy)."),
        ("one-everywhere", upstream * (p - 1) / n, "Your gradient is (softmax - 1) / n: you subtract 1 from every "
         "logit's probability, not only from the target's.", "Only the target's entry gets the -1: subtract a "
         "one-hot, `F.one_hot(targets, classes)`."),
        ("ignored-upstream", (p - y) / n, "Your gradient is the local derivative alone: it is not multiplied by "
         f"`grad_output` (here {upstream}, because the loss is scaled after your Function).",
         "Chain rule: return `grad_output * (probs - one_hot) / n`."),
        ("softmax-dim", upstream * (column_softmax - y) / n, "Your softmax runs down the columns (over the batch, "
         "dim 0) instead of along each row (over the classes).", "Normalise each row: `dim=1`."),
    ]
    problem = diagnose(got, want, "logits", candidates=candidates)
    if problem is not None:
        raise _wrong_node(cls, graph, node_id, problem)
    if engine_error is not None:
        raise Mistake(str(engine_error), kind="backward")
    return ["forward: the mean cross-entropy, also for logits of ±1000",
            f"backward: `grad_output · (softmax - one_hot) / n` inside an MLP, node `{node_id}`"]


# ==== exercise 10.2: the embedding-lookup backward ==========================================================
def _embedding_loss(lookup, C, W1, W2, index, targets):
    hidden = (lookup.apply(C, index).view(index.shape[0], -1) @ W1).tanh()
    return F.cross_entropy(hidden @ W2, targets)


def _repeated_rows(got, want, index, upstream_rows):
    """The rows of C whose index repeats and whose gradient is one use's, or the mean of the uses
    (what an indexed assignment writes where an index repeats: PyTorch leaves the winner
    undefined, vizgrad writes the mean), not their sum, when every other row is right; else None."""
    flat = index.reshape(-1)
    counts = np.bincount(flat, minlength=want.shape[0])
    repeated = np.flatnonzero(counts > 1)
    single = np.setdiff1d(np.arange(want.shape[0]), repeated)
    if not repeated.size or not close(got[single], want[single]):
        return None
    lost = [r for r in repeated if not close(got[r], want[r])]
    one_use = all(any(close(got[r], written) for written in [*upstream_rows[flat == r],
                                                             upstream_rows[flat == r].mean(0)])
                  for r in lost)
    return lost if lost and one_use else None


@exercise("10.2", "the embedding-lookup backward (scatter-add)", lesson="10", solution="lesson10:Embedding")
def exercise_10_2(Embedding):
    """``Embedding.apply(weight, index)``: ``weight[index]``, rows of a (V, D) table for an
    integer ``index`` of any shape; backward returns ``(grad_weight, None)``, the rows of
    ``grad_output`` added up into a (V, D) zero table at their indices (scatter-add)."""
    cls = expect.function_class(Embedding, "Embedding")
    rng = np.random.default_rng(102)
    weight, index = rng.standard_normal((6, 3)), np.array([[1, 4], [1, 5], [0, 1]])
    with learner_code(f"{cls.__name__}.forward"):
        out = cls.apply(_t(weight), _ints(index))
    out = expect.tensor(out, f"`{cls.__name__}.apply(weight, index)`")
    expect.shape(out, (3, 2, 3), f"`{cls.__name__}.apply(weight, index)` for weight (6, 3) and index (3, 2)",
                 "One row of weight per index: the output has index's shape followed by D, `weight[index]`.")
    if not close(as_numpy(out), weight[index]):
        raise Mistake(f"`{cls.__name__}.forward` returns the wrong rows.", "`weight[index]` picks row index[i, j] "
                      "for every position.", kind="forward")

    n = 16
    index, targets = _contexts(rng, n), rng.integers(0, VOCABULARY, n)
    params = _network(rng)
    tensors = [_t(params[k], requires_grad=True, name=k) for k in ("C", "W1", "W2")]
    try:
        graph, node_id, returned, engine_error = _run_in_graph(
            cls, _embedding_loss, (*tensors, _ints(index, "context"), _ints(targets, "targets")))
    except LearnerError as error:
        if isinstance(error.error, ShapeError) and error.what == f"{cls.__name__}.backward":
            raise Mistake(f"`{cls.__name__}.backward` raised a ShapeError for an index of shape {index.shape} and "
                          f"a `grad_output` of shape {index.shape + (DIM,)}: {error.error}",
                          "Flatten both first, `index.reshape(-1)` and `grad_output.reshape(-1, D)`: then row k of "
                          "the gradient goes back to row `index[k]` of weight.", kind="index-not-flat") from None
        raise
    got = _gradient_for_first_input(cls, returned, engine_error, "weight", "index")
    embedded = _t(params["C"][index], requires_grad=True)
    hidden = (embedded.view(n, -1) @ _t(params["W1"])).tanh()
    F.cross_entropy(hidden @ _t(params["W2"]), _ints(targets)).backward()
    upstream = as_numpy(embedded.grad).reshape(-1, DIM)        # the gradient at each looked-up row
    want = np.zeros((VOCABULARY, DIM))
    np.add.at(want, index.reshape(-1), upstream)
    if got.shape == want.shape:
        lost = _repeated_rows(got, want, index, upstream)
        if lost:
            uses = np.bincount(index.reshape(-1), minlength=VOCABULARY)
            worst = max(lost, key=lambda r: uses[r])
            raise _wrong_node(cls, graph, node_id, Diagnosis(
                "repeated-index",
                f"Rows of `weight` looked up more than once get one use's gradient (or their mean), not the sum of "
                f"all their uses: row {worst} "
                f"('{'.abcdefghijklmnopqrstuvwxyz'[worst]}') is used {uses[worst]} times in this batch, and its "
                f"gradient should be the sum of all {uses[worst]} (rows used once are right). An indexed "
                "assignment, `grad_weight[index] = grad` (or `+=`, which reads, adds and assigns once per "
                "distinct index), keeps one write per row: the repeated-index trap.",
                "Accumulate: `grad_weight.index_add_(0, index.reshape(-1), grad.reshape(-1, D))`, or a loop "
                "with `grad_weight[i] += row` one row at a time, or "
                "`F.one_hot(index.reshape(-1), V).float().T @ grad.reshape(-1, D)`.",
                [f"yours, row {worst}: `{np.round(got[worst], 4).tolist()}`",
                 f"expected (the sum of {uses[worst]} uses): `{np.round(want[worst], 4).tolist()}`"]))
    if got.shape == tuple(index.shape) + (DIM,):
        raise _wrong_node(cls, graph, node_id, Diagnosis(
            "not-scattered", f"Your gradient for `weight` has shape {got.shape}, the shape of the *output* (one row "
            f"per lookup); `weight` has shape {want.shape}.", "Send each row of `grad_output` back to the row of "
            "weight it came from: start from zeros of weight's shape and add at the indices."))
    problem = diagnose(got, want, "weight")
    if problem is not None:
        raise _wrong_node(cls, graph, node_id, problem)
    if engine_error is not None:
        raise Mistake(str(engine_error), kind="backward")
    repeats = int((np.bincount(index.reshape(-1)) > 1).sum())
    return ["forward: `weight[index]` for a 2-D index",
            f"backward: a scatter-add inside an MLP (node `{node_id}`), {repeats} rows used several times "
            "in the batch, each getting the sum of its uses"]
