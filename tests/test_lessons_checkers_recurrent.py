"""The checkers of lesson 13 (vizgrad/lessons/exercises_recurrent.py): every reference solution
passes, a fresh stub is "not done", and each classic mistake of backprop through time and of
the LSTM cell is caught and named (its ``mistake`` kind), with a hint."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_solution
from checker_helpers import assert_caught, run

ROOT = Path(__file__).resolve().parent.parent
RECURRENT = ["13.1", "13.2", "13.3"]


@pytest.mark.parametrize("exercise_id", RECURRENT)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    exercise = EXERCISES[exercise_id]
    result = exercise(*load_solution(exercise))
    assert result.passed, str(result)
    assert result.details


def test_the_exercises_of_lesson_13_are_these():
    ensure_loaded()
    assert sorted(i for i, e in EXERCISES.items() if e.lesson == "13") == RECURRENT


@pytest.mark.parametrize("exercise_id", RECURRENT)
def test_a_fresh_stub_is_not_done(exercise_id):
    def stub(*args):
        raise NotImplementedError
    assert run(exercise_id, stub).status == "not done"


def test_each_exercise_is_called_by_lesson_13():
    path = next(ROOT.glob("lessons/13-*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    called = sorted(".".join(numbers) for numbers in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source))
    assert called == RECURRENT


# --- 13.1 one step back ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, answer, op, words", [
    ("missing-tanh-derivative", lambda g, h, W: g @ W, "Tanh", "1 - h * h"),
    ("missing-tanh-derivative", lambda g, h, W: g @ W.T, "Tanh", "`@ W_hh`"),
    ("tanh-of-output", lambda g, h, W: (g * (1 - h.tanh() ** 2)) @ W, "Tanh", "already tanh(z)"),
    ("not-squared", lambda g, h, W: (g * (1 - h)) @ W, "Tanh", "1 - h²"),
    ("transposed", lambda g, h, W: (g * (1 - h ** 2)) @ W.T, "MatMul", "∂L/∂z @ W_hh"),
])
def test_13_1_each_mistake_is_caught_at_its_node(kind, answer, op, words):
    result = run("13.1", answer)
    assert_caught(result, kind, words)
    node = result.figure.highlight[0]
    assert result.figure.graph.node(node).op == op and f"node `{node}` ({op})" in result.message


def test_13_1_a_wrong_sign_and_a_transposed_shape_are_named():
    assert_caught(run("13.1", lambda g, h, W: -(g * (1 - h ** 2)) @ W), "sign")
    assert_caught(run("13.1", lambda g, h, W: ((g * (1 - h ** 2)) @ W).T), "transposed", "(5, 3)")


def test_13_1_a_numpy_answer_is_not_a_tensor():
    result = run("13.1", lambda g, h, W: (g * (1 - h ** 2)).numpy() @ W.numpy())
    assert_caught(result, "not-a-tensor", "NumPy")


# --- 13.2 the LSTM cell ------------------------------------------------------------------------------------------
def lstm_cell_with(order="ifgo", cell=None, hidden=None, bias=True):
    """An LSTM cell that names the chunks in ``order`` and computes c_new and h_new as given."""
    def lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
        gates = x @ W_ih.T + b_ih + h @ W_hh.T + (b_hh if bias else 0)
        named = dict(zip(order, gates.chunk(4, dim=-1)))
        i, f, g, o = (named[k] for k in "ifgo")
        c_new = (cell or (lambda i, f, g, c: f.sigmoid() * c + i.sigmoid() * g.tanh()))(i, f, g, c)
        h_new = (hidden or (lambda o, c, c_new: o.sigmoid() * c_new.tanh()))(o, c, c_new)
        return h_new, c_new
    return lstm_cell


def test_13_2_the_reference_leaves_the_learners_random_numbers_alone():
    vg.manual_seed(7)
    expected = vg.rand(3)
    vg.manual_seed(7)
    run("13.2", lstm_cell_with())
    assert np.array_equal(vg.rand(3).numpy(), expected.numpy())


@pytest.mark.parametrize("order, named", [
    ("ifog", ["g from chunk 3 (the o gate's)", "o from chunk 2 (the g gate's)"]),
    ("figo", ["i from chunk 1 (the f gate's)", "f from chunk 0 (the i gate's)"]),
    ("igfo", ["f from chunk 2 (the g gate's)", "g from chunk 1 (the f gate's)"]),
])
def test_13_2_a_gate_from_the_wrong_chunk_is_named(order, named):
    result = run("13.2", lstm_cell_with(order))
    assert_caught(result, "gate-order", "i, f, g, o")
    for words in named:
        assert words in result.message, str(result)


@pytest.mark.parametrize("kind, options, words", [
    ("missing-cell-tanh", dict(hidden=lambda o, c, c_new: o.sigmoid() * c_new), "tanh"),
    ("old-cell", dict(hidden=lambda o, c, c_new: o.sigmoid() * c.tanh()), "c_new"),
    ("missing-input-gate", dict(cell=lambda i, f, g, c: f.sigmoid() * c + g.tanh()), "input gate"),
    ("missing-forget-gate", dict(cell=lambda i, f, g, c: c + i.sigmoid() * g.tanh()), "forget gate"),
    ("sigmoid-candidate", dict(cell=lambda i, f, g, c: f.sigmoid() * c + i.sigmoid() * g.sigmoid()), "tanh"),
    ("missing-bias", dict(bias=False), "b_hh"),
])
def test_13_2_each_wrong_formula_is_named(kind, options, words):
    assert_caught(run("13.2", lstm_cell_with(**options)), kind, words)


def test_13_2_outputs_in_the_wrong_order_are_caught():
    def swapped(*args):
        h_new, c_new = lstm_cell_with()(*args)
        return c_new, h_new
    assert_caught(run("13.2", swapped), "swapped-outputs", "(h_new, c_new)")


def test_13_2_a_single_tensor_is_not_the_pair():
    result = run("13.2", lambda *args: lstm_cell_with()(*args)[0])
    assert_caught(result, "returns", "return h_new, c_new")


def test_13_2_weights_used_untransposed_get_a_shape_hint():
    def untransposed(x, h, c, W_ih, W_hh, b_ih, b_hh):
        return lstm_cell_with()(x, h, c, W_ih.T, W_hh.T, b_ih, b_hh)
    assert_caught(run("13.2", untransposed), "shape", "W_ih.T")


def test_13_2_values_that_left_autograd_are_caught():
    def detached(*args):
        h_new, c_new = lstm_cell_with()(*args)
        return h_new.detach(), c_new.detach()
    assert_caught(run("13.2", detached), "no-grad", "detach")


def test_13_2_an_unknown_mistake_in_h_says_that_c_is_right():
    result = run("13.2", lstm_cell_with(hidden=lambda o, c, c_new: o.sigmoid() * c_new.tanh() * 0.5))
    assert result.status == "failed" and result.mistake == "scale", str(result)
    assert result.message.startswith("Your c_new is right, but h_new is not."), str(result)


# --- 13.3 the gradient of W_hh -----------------------------------------------------------------------------------
def bptt_with(delta=None, term=None, carry=True, steps=None, scale=1.0):
    """BPTT for grad_w_hh with one piece replaced: ``delta(grad, h_t)``, ``term(delta, hs, t)``, ..."""
    def grad_w_hh(hs, W_hh, grad_last):
        grad, total = grad_last, vg.zeros_like(W_hh)
        for t in list(range(len(hs) - 1, 0, -1))[:steps]:
            d = (delta or (lambda grad, h: grad * (1 - h ** 2)))(grad, hs[t])
            total = total + (term or (lambda d, hs, t: d.T @ hs[t - 1]))(d, hs, t)
            if carry:
                grad = d @ W_hh
        return total * scale
    return grad_w_hh


@pytest.mark.parametrize("kind, answer, words", [
    ("missing-sum-over-time", bptt_with(steps=1), "sum of T terms"),
    ("no-carry", bptt_with(carry=False), "delta @ W_hh"),
    ("off-by-one", bptt_with(term=lambda d, hs, t: d.T @ hs[t]), "hs[t - 1]"),
    ("transposed", bptt_with(term=lambda d, hs, t: hs[t - 1].T @ d), "transpose"),
    ("missing-tanh-derivative", bptt_with(delta=lambda grad, h: grad), "1 - hs[t] * hs[t]"),
    ("mean-over-time", bptt_with(scale=1 / 5), "sum"),
])
def test_13_3_each_mistake_is_named(kind, answer, words):
    assert_caught(run("13.3", answer), kind, words)


def test_13_3_the_terms_returned_apart_are_told_to_be_summed():
    def terms(hs, W_hh, grad_last):
        grad, parts = grad_last, []
        for t in range(len(hs) - 1, 0, -1):
            d = grad * (1 - hs[t] ** 2)
            parts.append(d.T @ hs[t - 1])
            grad = d @ W_hh
        return parts
    assert_caught(run("13.3", terms), "missing-sum-over-time", "their sum")


def test_13_3_a_wrong_sign_and_a_wrong_shape_are_named():
    assert_caught(run("13.3", bptt_with(scale=-1.0)), "sign")
    result = run("13.3", lambda hs, W_hh, grad_last: grad_last)
    assert_caught(result, "shape", "(hidden, hidden)")
