"""The checkers of lesson 10 (vizgrad/lessons/exercises_language.py): the reference solutions
pass, a fresh stub is "not done", and each classic mistake is caught, named (its
``mistake`` kind), given a hint, and pointed at: the feedback's figure highlights the
learner's node in the graph, and the message names it."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.lessons import check
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_solution

F = vg.nn.functional
ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = ["10.1", "10.2"]


def assert_points_at_node(result, kind, class_name):
    """Failed as ``kind``, with a hint, and the figure highlights the learner's Function node,
    which the message names."""
    assert result.status == "failed", str(result)
    assert result.mistake == kind, str(result)
    assert result.hint, str(result)
    figure = result.figure
    assert figure is not None and len(figure.highlight) == 1, str(result)
    node = figure.graph.node(figure.highlight[0])
    assert node.label == class_name, (node.label, class_name)
    assert f"`{node.id}` (`{class_name}`)" in result.message, result.message
    assert "<--" in figure.text() and kind in figure.dot()


@pytest.mark.parametrize("exercise_id", LANGUAGE)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    result = EXERCISES[exercise_id](*load_solution(EXERCISES[exercise_id]))
    assert result.passed, str(result)
    assert result.details


def test_the_lesson_calls_both_checks():
    notebook = json.loads(next(ROOT.glob("lessons/10-*.ipynb")).read_text(encoding="utf-8"))
    source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert sorted(".".join(m) for m in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source)) == LANGUAGE


def function(forward, backward, name):
    """A learner's Function class named ``name``, defined outside vizgrad."""
    return type(name, (vg.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                                "__module__": "learner"})


@pytest.mark.parametrize("exercise_id", LANGUAGE)
def test_a_fresh_stub_is_not_done(exercise_id):
    def stub(ctx, *args):
        raise NotImplementedError
    result = EXERCISES[exercise_id](function(stub, stub, "Stub"))
    assert result.status == "not done", str(result)


# --- 10.1: the cross-entropy backward -----------------------------------------------------------------------
def ce_forward(ctx, logits, targets):
    log_probs = F.log_softmax(logits, dim=1)
    ctx.save_for_backward(log_probs, targets)
    return -log_probs[vg.arange(logits.shape[0]), targets].mean()


def cross_entropy(grad_logits, forward=ce_forward):
    """A CrossEntropy Function whose backward returns ``grad_logits(grad, probs, one_hot, n)``."""
    def backward(ctx, grad):
        log_probs, targets = ctx.saved_tensors
        n, classes = log_probs.shape
        return grad_logits(grad, log_probs.exp(), F.one_hot(targets, classes), n), None
    return function(forward, backward, "CrossEntropy")


@pytest.mark.parametrize("kind, grad_logits", [
    ("no-batch-mean", lambda g, p, y, n: g * (p - y)),
    ("sign", lambda g, p, y, n: g * (y - p) / n),
    ("missing-one-hot", lambda g, p, y, n: g * p / n),
    ("one-everywhere", lambda g, p, y, n: g * (p - 1) / n),
    ("ignored-upstream", lambda g, p, y, n: (p - y) / n),
])
def test_cross_entropy_mistakes_point_at_the_node(kind, grad_logits):
    result = check.exercise_10_1(cross_entropy(grad_logits))
    assert_points_at_node(result, kind, "CrossEntropy")


def test_cross_entropy_wrong_count_and_shape():
    result = check.exercise_10_1(function(ce_forward, lambda ctx, g: g, "CrossEntropy"))
    assert result.mistake == "gradient-count" and "None" in result.hint, str(result)
    result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: (g * (p - y) / n).sum(0)))
    assert result.mistake == "shape" and result.figure is not None, str(result)


def test_cross_entropy_forward_mistakes():
    def summed(ctx, logits, targets):
        return -F.log_softmax(logits, dim=1)[vg.arange(logits.shape[0]), targets].sum()
    result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: g * (p - y) / n, summed))
    assert result.mistake == "forward-sum" and "mean" in result.hint, str(result)

    def naive(ctx, logits, targets):
        probs = logits.exp() / logits.exp().sum(dim=1, keepdim=True)
        return -probs[vg.arange(logits.shape[0]), targets].log().mean()
    with np.errstate(all="ignore"):            # the naive softmax overflows, which is the point
        result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: g * (p - y) / n, naive))
    assert result.mistake == "overflow" and "maximum" in result.hint, str(result)


# --- 10.2: the embedding-lookup backward --------------------------------------------------------------------
def lookup_forward(ctx, weight, index):
    ctx.save_for_backward(index)
    ctx.rows = weight.shape[0]
    return weight[index]


def embedding(grad_weight):
    """An Embedding Function whose backward returns ``grad_weight(grad, index, rows)``."""
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        return grad_weight(grad, index, ctx.rows), None
    return function(lookup_forward, backward, "Embedding")


def assigned(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    table[index.reshape(-1)] = grad.reshape(-1, grad.shape[-1])           # the repeated-index trap
    return table


def added_in_place(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    table[index.reshape(-1)] += grad.reshape(-1, grad.shape[-1])          # the same trap, with +=
    return table


def looped(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    for i, row in zip(index.reshape(-1).tolist(), grad.reshape(-1, grad.shape[-1])):
        table[i] += row
    return table


def one_hot_product(grad, index, rows):
    return F.one_hot(index.reshape(-1), rows).to(grad.dtype).T @ grad.reshape(-1, grad.shape[-1])


@pytest.mark.parametrize("grad_weight", [assigned, added_in_place])
def test_the_repeated_index_trap_points_at_the_node(grad_weight):
    result = check.exercise_10_2(embedding(grad_weight))
    assert_points_at_node(result, "repeated-index", "Embedding")
    assert "index_add_" in result.hint and re.search(r"row \d+ \('.'\) is used \d+ times", result.message)


@pytest.mark.parametrize("grad_weight", [looped, one_hot_product])
def test_every_accumulating_backward_passes(grad_weight):
    result = check.exercise_10_2(embedding(grad_weight))
    assert result.passed, str(result)


def test_embedding_backward_that_does_not_scatter():
    result = check.exercise_10_2(embedding(lambda grad, index, rows: grad))
    assert_points_at_node(result, "not-scattered", "Embedding")


def test_embedding_backward_sign_and_forward():
    result = check.exercise_10_2(embedding(lambda grad, index, rows: -looped(grad, index, rows)))
    assert_points_at_node(result, "sign", "Embedding")

    def transposed_forward(ctx, weight, index):
        ctx.save_for_backward(index)
        return weight[index.T]
    result = check.exercise_10_2(function(transposed_forward, lambda ctx, g: (None, None), "Embedding"))
    assert result.mistake == "shape", str(result)
