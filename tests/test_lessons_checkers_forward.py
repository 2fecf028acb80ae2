"""The checkers of lesson 15 (vizgrad/lessons/exercises_forward.py): every reference solution
passes, a fresh stub is "not done", and each classic mistake of dual numbers, forward AD and
per-sample gradients is caught and named (its ``mistake`` kind), with a hint."""

import json
import math
import re
from pathlib import Path

import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import autograd
from vizgrad.autograd import forward_ad
from vizgrad.func import functional_call, grad, jvp, vjp, vmap
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_module, load_solution
from checker_helpers import assert_caught, run

ROOT = Path(__file__).resolve().parent.parent
FORWARD = ["15.1", "15.2", "15.3"]
solution = load_module("lesson15")


@pytest.mark.parametrize("exercise_id", FORWARD)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    exercise = EXERCISES[exercise_id]
    result = exercise(*load_solution(exercise))
    assert result.passed and result.score == 1.0, str(result)
    assert result.details


def test_the_exercises_of_lesson_15_are_these():
    ensure_loaded()
    assert sorted(i for i, e in EXERCISES.items() if e.lesson == "15") == FORWARD


def test_a_fresh_stub_is_not_done():
    class Stub(solution.Dual):
        def __truediv__(self, other):
            raise NotImplementedError

        def sin(self):
            raise NotImplementedError

    def stub(*args):
        raise NotImplementedError
    assert run("15.1", Stub).status == "not done"
    assert run("15.2", stub).status == "not done"
    assert run("15.3", stub).status == "not done"


def test_each_exercise_is_called_by_lesson_15():
    path = next(ROOT.glob("lessons/15-*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    called = sorted(".".join(numbers) for numbers in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source))
    assert called == FORWARD


# --- 15.1 a Dual's division and sine ---------------------------------------------------------------------------
def dual_with(divide=None, sine=None):
    """The reference Dual with one rule replaced: ``divide(a, b)`` gets b lifted, both return
    (value, tangent)."""
    class Wrong(solution.Dual):
        pass
    Dual = solution.Dual
    if divide is not None:
        def truediv(self, other):
            other = Dual.lift(other)
            return Wrong(*divide(self.value, self.tangent, other.value, other.tangent))
        Wrong.__truediv__ = truediv
    if sine is not None:
        Wrong.sin = lambda self: Wrong(*sine(self.value, self.tangent))
    return Wrong


@pytest.mark.parametrize("kind, divide, words", [
    ("quotient-sign", lambda a, da, b, db: (a / b, (da * b + a * db) / b ** 2), "subtracts"),
    ("sign", lambda a, da, b, db: (a / b, (a * db - da * b) / b ** 2), "ȧ·b − a·ḃ"),
    ("not-squared", lambda a, da, b, db: (a / b, (da * b - a * db) / b), "b²"),
    ("constant-divisor", lambda a, da, b, db: (a / b, da / b), "constant"),
    ("tangents-divided", lambda a, da, b, db: (a / b, da / db), "quotient of the tangents"),
    ("no-tangent", lambda a, da, b, db: (a / b, 0.0), "not 0"),
    ("value", lambda a, da, b, db: (da / db, (da * b - a * db) / b ** 2), "the value is a / b"),
])
def test_15_1_each_mistake_of_the_quotient_rule_is_named(kind, divide, words):
    result = run("15.1", dual_with(divide=divide))
    assert_caught(result, kind, words)
    failed = [part.name for part in result.parts if not part.passed]
    assert failed[0] == "a / b" and "sin(a)" not in failed, failed
    assert any("yours: `" in line for line in result.details), result.details


@pytest.mark.parametrize("kind, sine, words", [
    ("chain-rule", lambda a, da: (math.sin(a), math.cos(a)), "ȧ"),
    ("sign", lambda a, da: (math.sin(a), -math.cos(a) * da), "+cos"),
    ("wrong-derivative", lambda a, da: (math.sin(a), math.sin(a) * da), "its derivative, cos"),
    ("wrong-derivative", lambda a, da: (math.sin(a), -math.sin(a) * da), "rule of cos"),
    ("tangent-through-sin", lambda a, da: (math.sin(a), math.sin(da)), "sin(ȧ)"),
    ("value", lambda a, da: (math.cos(a), math.cos(a) * da), "math.sin"),
])
def test_15_1_each_mistake_of_the_sine_rule_is_named(kind, sine, words):
    result = run("15.1", dual_with(sine=sine))
    assert_caught(result, kind, words)
    assert [part.name for part in result.parts if not part.passed] == ["sin(a)"]
    assert result.score == pytest.approx(2 / 3)      # the composite of both rules waits for them


def test_15_1_a_divisor_that_is_a_number_is_named_when_not_lifted():
    class Unlifted(solution.Dual):
        def __truediv__(self, other):
            return Unlifted(self.value / other.value,
                            (self.tangent * other.value - self.value * other.tangent) / other.value ** 2)
    result = run("15.1", Unlifted)
    assert_caught(result, "number-operand", "a / 4.0", "AttributeError")
    assert [part.name for part in result.parts if not part.passed] == ["a / 4.0"]
    assert result.score == pytest.approx(2 / 3)


def test_15_1_a_rule_that_returns_no_dual_and_an_instance_instead_of_the_class():
    class Pair(solution.Dual):
        def sin(self):
            return math.sin(self.value), math.cos(self.value) * self.tangent
    assert_caught(run("15.1", Pair), "returns", "return Dual(value, tangent)")
    result = run("15.1", solution.Dual(1.0, 1.0))
    assert result.status == "failed" and result.mistake == "usage" and "without parentheses" in result.hint


# --- 15.2 a JVP with forward AD --------------------------------------------------------------------------------
def test_15_2_jv_is_checked_against_func_jvp_on_both_functions():
    result = run("15.2", solution.jvp_with_duals)
    assert result.passed and len(result.details) == 2 and "3 inputs → 3 outputs" in result.details[0]
    assert forward_ad._levels == []


def vjp_instead(f, x, v):
    out, vjp_fn = vjp(f, x)
    return out, vjp_fn(v if v.shape == out.shape else vg.ones_like(out))[0]


def tangent_of_the_input(f, x, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, v)
        return f(dual).detach(), forward_ad.unpack_dual(dual).tangent


def along_ones(f, x, v):
    return solution.jvp_with_duals(f, x, vg.ones_like(v))


def outside_the_level(f, x, v):
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, v)
    return forward_ad.unpack_dual(f(dual))


@pytest.mark.parametrize("kind, answer, words", [
    ("transposed", vjp_instead, "Jᵀv"),
    ("input-tangent", tangent_of_the_input, "not of `x_dual`"),
    ("ignored-v", along_ones, "make_dual(x, v)"),
    ("no-tangent", outside_the_level, "dual_level"),
    ("swapped", lambda f, x, v: solution.jvp_with_duals(f, x, v)[::-1], "wrong order"),
    ("not-forward-ad", lambda f, x, v: jvp(f, (x,), (v,)), "never saw a dual tensor"),
    ("sign", lambda f, x, v: (f(x), -solution.jvp_with_duals(f, x, v)[1]), "sign"),
])
def test_15_2_each_mistake_is_named(kind, answer, words):
    assert_caught(run("15.2", answer), kind, words)


def test_15_2_a_vjp_on_a_non_square_jacobian_is_named_by_its_shape():
    result = run("15.2", vjp_instead)
    parts = {part.name[:1]: part for part in result.parts}
    assert not parts["g"].passed and parts["g"].mistake.kind == "transposed"
    assert "the input's shape (4,)" in parts["g"].message and "(2,)" in parts["g"].message


def test_15_2_a_level_left_open_is_named_and_closed():
    def leaky(f, x, v):
        forward_ad.enter_dual_level()
        return forward_ad.unpack_dual(f(forward_ad.make_dual(x, v)))
    assert_caught(run("15.2", leaky), "level-open", "with forward_ad.dual_level()")
    assert forward_ad._levels == []
    with forward_ad.dual_level() as level:                  # a level of the learner's own stays open
        assert_caught(run("15.2", leaky), "level-open")
        assert forward_ad._levels == [level]
        assert run("15.2", solution.jvp_with_duals).passed


# --- 15.3 per-sample gradient norms -----------------------------------------------------------------------------
def per_sample_grads(model, X, Y):
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, X, Y)


def per_parameter_norms(model, X, Y):
    return vg.stack([g.reshape(len(X), -1).norm(dim=1) for g in per_sample_grads(model, X, Y).values()], dim=1)


def looped(model, X, Y):
    norms = []
    for i in range(len(X)):
        loss = F.cross_entropy(model(X[i:i + 1]), Y[i:i + 1])
        norms.append(vg.stack([g.pow(2).sum() for g in autograd.grad(loss, list(model.parameters()))]).sum().sqrt())
    return vg.stack(norms)


def batch_gradient(model, X, Y):
    grads = autograd.grad(F.cross_entropy(model(X), Y), list(model.parameters()))
    return vg.stack([g.pow(2).sum() for g in grads]).sum().sqrt().expand(len(X))


@pytest.mark.parametrize("kind, answer, words", [
    ("per-parameter", per_parameter_norms, "√(Σ_params ‖g‖²)"),
    ("squared", lambda m, X, Y: solution.per_sample_grad_norms(m, X, Y) ** 2, "square root"),
    ("sum-of-norms", lambda m, X, Y: per_parameter_norms(m, X, Y).sum(1), "squared norms"),
    ("missing-parameters", lambda m, X, Y: per_parameter_norms(m, X, Y)[:, ::2].pow(2).sum(1).sqrt(), "biases"),
    ("batch-gradient", batch_gradient, "own loss"),
    ("loop", looped, "12 backward passes"),
    ("scale", lambda m, X, Y: solution.per_sample_grad_norms(m, X, Y) / 12, "0.08333 times"),
])
def test_15_3_each_mistake_is_named(kind, answer, words):
    assert_caught(run("15.3", answer), kind, words)


def test_15_3_reports_one_backward_pass_and_a_wrong_shape():
    result = run("15.3", solution.per_sample_grad_norms)
    assert result.passed and "from 1 backward pass (a loop takes 12)" in result.details[1]
    assert_caught(run("15.3", lambda m, X, Y: solution.per_sample_grad_norms(m, X, Y)[None]), "shape", "(batch,)")


# --- the lesson is listed ----------------------------------------------------------------------------------------
def test_lesson_15_is_in_the_indexes_with_a_binder_link_and_opens_with_vizgrad_lab():
    name = next(ROOT.glob("lessons/15-*.ipynb")).name
    index = (ROOT / "lessons" / "README.md").read_text(encoding="utf-8")
    assert f"]({name})" in index and f"urlpath=lab/tree/lessons/{name}" in index
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"](lessons/{name})" in readme and f"urlpath=lab/tree/lessons/{name}" in readme
    from vizgrad.lessons import lab
    argv, _ = lab.lab_command("15", no_browser=True)
    assert argv[4].endswith(name)
