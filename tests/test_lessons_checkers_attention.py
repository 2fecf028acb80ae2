"""The checkers of lessons 11-12 (vizgrad/lessons/exercises_attention.py): every reference
solution passes, a fresh stub is "not done", and each classic mistake is caught, named (its
``mistake`` kind), given a hint and, where it sits at one node, drawn with that node
highlighted and named in the message."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_solution
from checker_helpers import assert_caught, run

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ["11.1", "11.2", "11.3", "12.1", "12.2"]


def highlighted(result):
    """The ids of the nodes the result's figure highlights."""
    assert result.figure is not None, str(result)
    return result.figure.highlight


@pytest.mark.parametrize("exercise_id", ATTENTION)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    exercise = EXERCISES[exercise_id]
    result = exercise(*load_solution(exercise))
    assert result.passed, str(result)
    assert result.details


def test_the_exercises_of_lessons_11_and_12_are_these():
    ensure_loaded()
    assert sorted(i for i, e in EXERCISES.items() if e.lesson in ("11", "12")) == ATTENTION


@pytest.mark.parametrize("exercise_id", ATTENTION)
def test_a_fresh_stub_is_not_done(exercise_id):
    if exercise_id in ("11.1", "12.1"):
        class Stub(vg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                raise NotImplementedError

            @staticmethod
            def backward(ctx, grad):
                raise NotImplementedError
        answer = Stub
    else:
        def answer(*args):
            raise NotImplementedError
    assert run(exercise_id, answer).status == "not done"


def test_each_exercise_is_called_by_its_lesson():
    called = {}
    for path in sorted(ROOT.glob("lessons/1[12]-*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
        for numbers in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source):
            called[".".join(numbers)] = path.name
    assert sorted(called) == ATTENTION
    for exercise_id, name in called.items():
        assert name.startswith(f"{exercise_id.split('.')[0]}-"), (exercise_id, name)


# --- 11.1 softmax backward -------------------------------------------------------------------------------------
def softmax_with(backward):
    class Softmax(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s = x.softmax(dim=-1)
            ctx.save_for_backward(s)
            return s
    Softmax.backward = staticmethod(backward)
    return Softmax


def test_11_1_the_diagonal_only_backward_is_caught_at_its_node():
    def diagonal(ctx, grad):
        s, = ctx.saved_tensors
        return grad * s * (1 - s)
    result = run("11.1", softmax_with(diagonal))
    assert_caught(result, "diagonal-only", "depends on every input")
    node = highlighted(result)[0]
    assert f"node `{node}`" in result.message and result.figure.graph.node(node).op == "Softmax"


def test_11_1_a_sum_over_the_whole_tensor_is_caught():
    def whole(ctx, grad):
        s, = ctx.saved_tensors
        return s * (grad - (grad * s).sum())
    assert_caught(run("11.1", softmax_with(whole)), "sum-over-everything", "keepdim=True")


def test_11_1_a_forgotten_upstream_gradient_is_caught():
    def local_only(ctx, grad):
        s, = ctx.saved_tensors
        return s * (1 - s.sum(dim=-1, keepdim=True) * s)
    result = run("11.1", softmax_with(local_only))
    assert result.status == "failed" and highlighted(result), str(result)


# --- 11.2 the mask ----------------------------------------------------------------------------------------------
def test_11_2_masking_after_softmax_is_caught_at_the_masked_fill_node():
    def after(q, k, v):
        T = q.shape[0]
        weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[1])).softmax(dim=-1)
        return weights.masked_fill(vg.tril(vg.ones(T, T)) == 0, 0.0) @ v
    result = run("11.2", after)
    assert_caught(result, "mask-after-softmax", "before softmax")
    node = highlighted(result)[0]
    assert result.figure.graph.node(node).op == "MaskedFill"
    assert f"Node `{node}` (MaskedFill) comes after the softmax" in result.message


def test_11_2_filling_with_zero_is_caught():
    def zero(q, k, v):
        T = q.shape[0]
        scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[1]))
        return scores.masked_fill(vg.tril(vg.ones(T, T)) == 0, 0.0).softmax(dim=-1) @ v
    result = run("11.2", zero)
    assert_caught(result, "mask-with-zero", "-inf")
    assert result.figure.graph.node(highlighted(result)[0]).op == "MaskedFill"


@pytest.mark.parametrize("kind, build", [
    ("mask-inverted", lambda T: vg.triu(vg.ones(T, T))),
    ("no-mask", lambda T: vg.ones(T, T)),
])
def test_11_2_a_wrong_or_missing_mask_is_caught(kind, build):
    def attention(q, k, v):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[1])
        return scores.masked_fill(build(q.shape[0]) == 0, float("-inf")).softmax(dim=-1) @ v
    assert_caught(run("11.2", attention), kind, "tril")


# --- 11.3 the scale ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, scores, op", [
    ("missing-scale", lambda q, k: q @ k.transpose(-2, -1), "MatMul"),
    ("scale-by-d", lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1], "Div"),
    ("scale-inverted", lambda q, k: q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), "Mul"),
])
def test_11_3_each_scaling_mistake_is_caught_at_its_node(kind, scores, op):
    result = run("11.3", scores)
    assert_caught(result, kind, "sqrt")
    node = highlighted(result)[0]
    assert result.figure.graph.node(node).op == op and f"node `{node}`" in result.message


def test_11_3_unscaled_scores_are_explained_by_their_spread():
    result = run("11.3", lambda q, k: q @ k.transpose(-2, -1))
    spread = float(re.search(r"std is ([0-9.]+)", result.message).group(1))
    assert 6 < spread < 10          # √64 = 8


# --- 12.1 LayerNorm backward ------------------------------------------------------------------------------------
def layer_norm_with(backward):
    class LayerNormFn(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mean = x.mean(dim=-1, keepdim=True)
            inv = 1 / ((x - mean) ** 2).mean(dim=-1, keepdim=True).add(1e-5).sqrt()
            ctx.save_for_backward((x - mean) * inv, inv)
            return (x - mean) * inv
    LayerNormFn.backward = staticmethod(backward)
    return LayerNormFn


@pytest.mark.parametrize("kind, backward", [
    ("constant-statistics", lambda ctx, g: g * ctx.saved_tensors[1]),
    ("missing-variance-term", lambda ctx, g: ctx.saved_tensors[1] * (g - g.mean(dim=-1, keepdim=True))),
    ("missing-mean-term", lambda ctx, g: ctx.saved_tensors[1] * (
        g - ctx.saved_tensors[0] * (g * ctx.saved_tensors[0]).mean(dim=-1, keepdim=True))),
])
def test_12_1_each_missing_path_is_caught_at_the_layer_norm_node(kind, backward):
    result = run("12.1", layer_norm_with(backward))
    assert_caught(result, kind, "mean")
    assert result.figure.graph.node(highlighted(result)[0]).op == "LayerNormFn"


# --- 12.2 residual paths ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, answer, highlighted_op", [
    ("missing-cross-path", lambda g, a, b: g + g @ a.T + g @ b.T, "MatMul"),
    ("no-skip", lambda g, a, b: g @ b.T @ a.T, "Add"),
    ("skip-only", lambda g, a, b: g * 1.0, "MatMul"),
    ("order", lambda g, a, b: g + g @ a.T + g @ b.T + g @ a.T @ b.T, "MatMul"),
    ("transposed", lambda g, a, b: g + g @ a + g @ b + g @ b @ a, "MatMul"),
])
def test_12_2_each_path_mistake_is_caught_and_drawn(kind, answer, highlighted_op):
    result = run("12.2", answer)
    assert_caught(result, kind)
    nodes = highlighted(result)
    assert len(nodes) == 2 and all(result.figure.graph.node(n).op == highlighted_op for n in nodes)


def test_12_2_the_reference_matches_autograd():
    rng = np.random.default_rng(0)
    g, w1, w2 = (vg.tensor(rng.normal(size=s)) for s in ((1, 3), (3, 3), (3, 3)))
    x = vg.zeros(1, 3, dtype=vg.float64, requires_grad=True)
    x1 = x + x @ w1
    ((x1 + x1 @ w2) * g).sum().backward()
    from vizgrad.lessons.solutions import load_module
    assert np.allclose(load_module("lesson12").residual_input_grad(g, w1, w2).numpy(), x.grad.numpy())
