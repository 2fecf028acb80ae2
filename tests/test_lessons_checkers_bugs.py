"""The checkers of lesson 14 (vizgrad/lessons/exercises_bugs.py): every reference solution
passes, a fresh stub is "not done", each classic mistake is caught and named (its ``mistake``
kind) with a hint, and a partly right answer gets partial credit: every sub-check reported."""

import json
import re
from pathlib import Path

import pytest

import vizgrad.nn.functional as F
from vizgrad.lessons.exercises_bugs import FORMULAS, PUZZLES, REQUIRED, makemore_batch, puzzle_source
from vizgrad.lessons.framework import ATTEMPTS, EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_module, load_solution
from checker_helpers import assert_caught, run

ROOT = Path(__file__).resolve().parent.parent
BUGS = ["14.1", "14.2", "14.3"]
solution = load_module("lesson14")


@pytest.mark.parametrize("exercise_id", BUGS)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    exercise = EXERCISES[exercise_id]
    result = exercise(*load_solution(exercise))
    assert result.passed and result.grade == "passed" and result.score == 1.0, str(result)
    assert result.details


def test_the_exercises_of_lesson_14_are_these():
    ensure_loaded()
    assert sorted(i for i, e in EXERCISES.items() if e.lesson == "14") == BUGS


@pytest.mark.parametrize("exercise_id", BUGS)
def test_a_fresh_stub_is_not_done(exercise_id):
    def stub(*args):
        raise NotImplementedError
    assert run(exercise_id, stub).status == "not done"


def test_each_exercise_is_called_by_lesson_14():
    path = next(ROOT.glob("lessons/14-*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    called = sorted(".".join(numbers) for numbers in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source))
    assert called == BUGS


# --- 14.1 cross-entropy ----------------------------------------------------------------------------------------
def softmax_minus_onehot(logits, Yb):
    return F.softmax(logits, dim=1) - F.one_hot(Yb, logits.shape[1]).double()


@pytest.mark.parametrize("kind, answer, words", [
    ("scale", softmax_minus_onehot, "a division by 8 is missing"),
    ("no-onehot", lambda logits, Yb: F.softmax(logits, dim=1) / logits.shape[0], "`- 1`"),
    ("sign", lambda logits, Yb: -softmax_minus_onehot(logits, Yb) / logits.shape[0], "sign"),
    ("missing-broadcast-sum", lambda logits, Yb: (softmax_minus_onehot(logits, Yb) / 8)[None], "dimension 0"),
])
def test_14_1_each_mistake_is_named(kind, answer, words):
    assert_caught(run("14.1", answer), kind, words)


# --- 14.2 the whole backward pass: the tutor locates the first wrong gradient -----------------------------------
def with_changes(**changes):
    def backprop(t):
        grads = solution.backprop(t)
        for key, make in changes.items():
            grads[key] = make(t, grads)
        return grads
    return backprop


@pytest.mark.parametrize("kind, changes, first", [
    ("missing-broadcast-sum", {"db2": lambda t, g: g["dlogits"]}, "b2"),
    ("transposed", {"dW2": lambda t, g: g["dlogits"].T @ t["h"]}, "W2"),
    ("scale", {"dlogits": lambda t, g: g["dlogits"] * t["n"]}, "logits"),
    ("used-output", {"dhpreact": lambda t, g: (1 - t["hpreact"] ** 2) * g["dh"]}, "hpreact"),
    ("overwrite", {"dbndiff": lambda t, g: 2 * t["bndiff"] * g["dbndiff2"]}, "bndiff"),
    ("sign", {"dbnvar": lambda t, g: -g["dbnvar"]}, "bnvar"),
])
def test_14_2_the_first_wrong_gradient_is_located_and_classified(kind, changes, first):
    result = run("14.2", with_changes(**changes))
    assert_caught(result, kind, f"`{first}`")
    assert result.grade == "partial" and result.score == pytest.approx(18 / 19), str(result)
    wrong = [part.name for part in result.parts if not part.passed]
    assert wrong == [f"d{first}"] and len(result.parts) == 19
    node = result.figure.highlight[0]
    assert result.figure.graph.node(node).label == first


def test_14_2_every_wrong_and_missing_gradient_is_reported_in_backward_order():
    def backprop(t):
        grads = solution.backprop(t)
        grads["dW1"] = -grads["dW1"]
        grads["db2"] = grads["dlogits"]
        del grads["dbngain"], grads["dC"]
        return grads
    result = run("14.2", backprop)
    assert result.status == "failed" and result.grade == "partial", str(result)
    failed = [(p.name, p.mistake.kind) for p in result.parts if not p.passed]
    assert failed == [("db2", "missing-broadcast-sum"), ("dW1", "sign"), ("dbngain", "missing")]
    assert result.score == pytest.approx(15 / 18)
    assert "`b2`" in result.message and "`W1` is wrong too" in result.message
    text = str(result)
    assert "15 of 18 checks passed" in text and "✘ dW1: The gradient for `W1` has the wrong sign" in text


def test_14_2_an_answer_with_only_the_optional_gradients_fails_with_each_required_one_named():
    result = run("14.2", lambda t: {"dbnraw": solution.backprop(t)["dbnraw"]})
    assert result.grade == "partial" and result.score == pytest.approx(1 / (1 + len(REQUIRED)))
    assert [p.name for p in result.parts if not p.passed] == [f"d{name}" for name in REQUIRED]


def test_14_2_hints_grow_with_each_attempt_up_to_the_formula():
    ATTEMPTS.pop("14.2", None)
    wrong = with_changes(db2=lambda t, g: g["dlogits"])
    first, second, third, fourth = (run("14.2", wrong) for _ in range(4))
    assert first.attempt == 1 and first.more_hints == [] and first.hints_left == 2
    assert "`.sum(0)`" in first.hint
    assert second.more_hints and "x.shape" in second.more_hints[0] and second.hints_left == 1
    assert third.more_hints[-1] == FORMULAS["b2"] and third.hints_left == 0
    assert fourth.more_hints == third.more_hints
    assert "Another hint comes with your next attempt." in str(first)
    assert "Another hint" not in str(third) and "Hint 3: db2 = dlogits.sum(0)" in str(third)


def test_14_2_a_key_that_names_no_tensor_is_a_usage_mistake():
    result = run("14.2", lambda t: {"dW3": t["W2"]})
    assert result.mistake == "usage" and "'dW3'" in result.message and "`dW1`" in result.hint


def test_14_2_a_result_that_is_not_a_dict_is_a_usage_mistake():
    assert run("14.2", lambda t: [1, 2]).mistake == "usage"


def test_the_batch_is_the_forward_pass_of_the_lesson():
    t = makemore_batch(seed=3, n=6)
    again = F.cross_entropy(((t["embcat"] @ t["W1"] + t["b1"] - t["bnmeani"]) * t["bnvar_inv"] * t["bngain"]
                             + t["bnbias"]).tanh() @ t["W2"] + t["b2"], t["Yb"])
    assert again.item() == pytest.approx(t["loss"].item(), rel=1e-12)
    unbiased = t["hprebn"].var(0, keepdim=True)
    assert t["bnvar"].detach().numpy() == pytest.approx(unbiased.detach().numpy(), rel=1e-10)


# --- 14.3 why is my .grad None? ----------------------------------------------------------------------------------
def test_14_3_each_wrong_reason_is_a_failed_part_with_explain_grads_sentence_as_a_later_hint():
    ATTEMPTS.pop("14.3", None)
    answer = dict(solution.grad_none_reasons(), B="not_leaf", E="typo")
    first = run("14.3", lambda: answer)
    assert first.grade == "partial" and first.score == pytest.approx(3 / 5), str(first)
    assert [(p.name, p.mistake.kind) for p in first.parts if not p.passed] == [("puzzle B", "wrong-reason"),
                                                                                ("puzzle E", "usage")]
    assert first.message == "Puzzle B: not `not_leaf`." and "add to it" in first.hint
    second = run("14.3", lambda: answer)
    assert "sum of 3 backward passes" in second.more_hints[0]
    third = run("14.3", lambda: answer)
    assert "It is `accumulated`" in third.more_hints[1]


def test_14_3_the_puzzles_are_shown_without_their_answers():
    for letter in PUZZLES:
        code = puzzle_source(letter)
        assert "explain_grad" not in code and code.endswith(": why?") and "vg.randn" in code


def test_14_3_a_missing_answer_is_named():
    result = run("14.3", lambda: {"A": "not_leaf"})
    assert result.score == pytest.approx(1 / 5) and result.message == "Puzzle B has no answer."
