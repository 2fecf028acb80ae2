"""Exercises of lesson 15 (forward mode and reverse mode).

* 15.1 the quotient rule and the sine rule of a dual number (``value + ε·tangent``), by hand,
* 15.2 a Jacobian-vector product with :mod:`vizgrad.autograd.forward_ad` (dual tensors),
* 15.3 per-sample gradient norms with ``vmap(grad(...))``: one backward pass for the batch.

Each checker compares with vizgrad's own answer (forward AD, ``func.jvp``, a loop of
``autograd.grad``) and recognises the usual mistakes by name: the quotient rule's minus, a
missing chain-rule factor, ``Jᵀv`` where ``J v`` belongs, a tangent read off the input, the
whole batch's gradient where each sample's belongs, a loop where one vmapped pass does.
"""

import math

import numpy as np

from .. import autograd, creation, events, random
from ..autograd import forward_ad
from ..dtypes import float64
from ..func import jvp as func_jvp, vjp as func_vjp
from ..nn import Linear, Sequential, Tanh
from ..nn import functional as F
from . import expect
from .exercises_early import _rng, _t
from .framework import LearnerError, Mistake, Parts, call, exercise
from .gradients import as_numpy, close, diagnose


def _cap(text):
    return text[:1].upper() + text[1:]


# ==== 15.1 a dual number's division and sine =================================================================
A, A_DOT, B, B_DOT = 1.3, 0.7, -0.8, 0.4      # a = 1.3 + 0.7ε, b = -0.8 + 0.4ε: every wrong rule gives its own number


def _dual_parts(result, what):
    """``(value, tangent)`` of a Dual the learner's rule returned, as floats."""
    if not (hasattr(result, "value") and hasattr(result, "tangent")):
        got = "None" if result is None else f"a {type(result).__name__}"
        raise Mistake(f"{_cap(what)} returned {got}; expected a Dual, with a `.value` and a `.tangent`.",
                      "End the rule with `return Dual(value, tangent)`.", kind="returns")
    return expect.number(result.value, what + ".value"), expect.number(result.tangent, what + ".tangent")


def _dual_text(value, tangent):
    return f"{value:.6g} {'−' if tangent < 0 else '+'} {abs(tangent):.6g}ε"


def _check_dual(got, want, what, wrong_values, wrong_tangents, hint):
    """Compare a Dual's (value, tangent) with ``want``; the known wrong ones raise their Mistake."""
    value, tangent = got
    details = [f"yours: `{_dual_text(value, tangent)}`", f"expected: `{_dual_text(*want)}`"]
    if not math.isclose(value, want[0], rel_tol=1e-9, abs_tol=1e-12):
        for kind, wrong, message in wrong_values:
            if math.isclose(value, wrong, rel_tol=1e-9, abs_tol=1e-12):
                raise Mistake(f"The value of {what} is wrong: {message}", hint, kind=kind, details=details)
        raise Mistake(f"The value of {what} is {value:.6g}; expected {want[0]:.6g}. The value part of a Dual is "
                      "the ordinary result, computed from the values alone.", hint, kind="value", details=details)
    if math.isclose(tangent, want[1], rel_tol=1e-9, abs_tol=1e-12):
        return
    for kind, wrong, message, hints in wrong_tangents:
        if math.isclose(tangent, wrong, rel_tol=1e-9, abs_tol=1e-12):
            raise Mistake(f"The tangent of {what} is wrong: {message}", hints, kind=kind, details=details)
    raise Mistake(f"The tangent of {what} is {tangent:.6g}; expected {want[1]:.6g}.", hint, kind="tangent",
                  details=details)


def _composite(x):
    return x.sin() / (1 + x * x)


@exercise("15.1", "a dual number's division and sine", lesson="15", solution="lesson15:Dual")
def exercise_15_1(Dual):
    """``Dual``: the lesson's dual-number class with ``__truediv__`` (a Dual or a number
    divisor) and ``sin()`` filled in; each rule is a sub-check, then sin(x)/(1 + x·x) against
    forward AD."""
    if not isinstance(Dual, type):
        raise Mistake(f"Expected the class Dual itself, got a {type(Dual).__name__}.",
                      "`check.exercise_15_1(Dual)`, without parentheses after Dual.", kind="usage")
    a, b = call(Dual, A, A_DOT, what="Dual(1.3, 0.7)"), call(Dual, B, B_DOT, what="Dual(-0.8, 0.4)")
    if _dual_parts(a, "Dual(1.3, 0.7)") != (A, A_DOT):
        raise Mistake("Dual(1.3, 0.7) does not keep 1.3 as its `.value` and 0.7 as its `.tangent`.",
                      "Keep the lesson's `__init__`: `self.value, self.tangent = value, tangent`.", kind="usage")
    parts = Parts()
    quotient = ("Multiply the top and the bottom by b − ε·ḃ: with ε² = 0 the bottom becomes b², and the top's ε "
                "part is the numerator of the rule.", "The quotient rule: (a/b)' = (ȧ·b − a·ḃ) / b².")
    with parts.check("a / b", passed="a / b: value a/b, tangent (ȧ·b − a·ḃ)/b² (the quotient rule)"):
        got = _dual_parts(call(lambda: a / b, what="your a / b"), "your a / b")
        _check_dual(got, (A / B, (A_DOT * B - A * B_DOT) / B ** 2), "a / b", [
            ("value", A_DOT / B_DOT, "it is ȧ / ḃ, the tangents divided; the value is a / b."),
        ], [
            ("quotient-sign", (A_DOT * B + A * B_DOT) / B ** 2, "you add the two terms, ȧ·b + a·ḃ, as the "
             "product rule does; the quotient rule subtracts: ȧ·b − a·ḃ.", list(quotient)),
            ("sign", (A * B_DOT - A_DOT * B) / B ** 2, "it has the wrong sign: the numerator is ȧ·b − a·ḃ "
             "(the tangent of the numerator first), yours is a·ḃ − ȧ·b.", list(quotient)),
            ("not-squared", (A_DOT * B - A * B_DOT) / B, "you divide by b; the quotient rule divides by b², "
             "b·b.", [quotient[0], "The denominator of (a/b)' is b², `other.value ** 2`."]),
            ("constant-divisor", A_DOT / B, "ȧ / b treats b as a constant; it is right only where ḃ = 0. b's "
             "own tangent adds −a·ḃ/b².", list(quotient)),
            ("tangents-divided", A_DOT / B_DOT, "ȧ / ḃ divides the tangents: the tangent of a quotient is not the "
             "quotient of the tangents.", list(quotient)),
            ("no-tangent", 0.0, "it is 0: a / b changes when a or b does, so its tangent is not 0.", list(quotient)),
        ], list(quotient))
    with parts.check("a / 4.0", passed="a / 4.0: a number is a Dual whose tangent is 0"):
        try:
            got = _dual_parts(call(lambda: a / 4.0, what="your a / 4.0"), "your a / 4.0")
        except LearnerError as error:
            if isinstance(error.error, ZeroDivisionError):
                raise Mistake("Your a / 4.0 divides by zero: a number is a Dual whose tangent is 0, so the rule "
                              "may divide by the divisor's value, never by its tangent.", list(quotient),
                              kind="tangents-divided") from None
            if not isinstance(error.error, (AttributeError, TypeError)):
                raise
            raise Mistake(f"Your division fails when the divisor is a plain number: a / 4.0 raised "
                          f"{type(error.error).__name__}: {error.error}.",
                          ["A number is a constant: a Dual whose tangent is 0.",
                           "Lift the divisor first, as `__add__` and `__mul__` do: `other = Dual.lift(other)`."],
                          kind="number-operand") from None
        _check_dual(got, (A / 4.0, A_DOT / 4.0), "a / 4.0", [], [
            ("no-tangent", 0.0, "it is 0, but a / 4 changes with a: ȧ / 4.",
             ["Dividing by a constant divides the tangent by it too."]),
        ], "a / 4 = 0.325 + 0.175ε: the value and the tangent are both divided by 4.")
    with parts.check("sin(a)", passed="sin(a): value sin(a), tangent cos(a)·ȧ (the chain rule)"):
        got = _dual_parts(call(lambda: a.sin(), what="your a.sin()"), "your a.sin()")
        chain = "sin(a + ε·ȧ) = sin(a) + ε·cos(a)·ȧ: the derivative of sin, times the tangent coming in."
        _check_dual(got, (math.sin(A), math.cos(A) * A_DOT), "sin(a)", [
            ("value", math.cos(A), "it is cos(a); the value of sin(a) is sin(a), with `math.sin`."),
        ], [
            ("chain-rule", math.cos(A), "it is cos(a) alone: the chain rule multiplies by a's tangent ȧ (with "
             "ȧ = 1 the two agree, which is why this is easy to miss).", [chain, "`math.cos(self.value) * "
                                                                           "self.tangent`."]),
            ("sign", -math.cos(A) * A_DOT, "it has the wrong sign: the derivative of sin is +cos (−sin is cos's "
             "derivative).", [chain]),
            ("wrong-derivative", math.sin(A) * A_DOT, "sin(a)·ȧ uses sin where its derivative, cos, belongs.",
             [chain]),
            ("wrong-derivative", -math.sin(A) * A_DOT, "−sin(a)·ȧ is the rule of cos, not of sin.", [chain]),
            ("tangent-through-sin", math.sin(A_DOT), "sin(ȧ) applies the function to the tangent; the tangent is "
             "multiplied by the derivative at the value.", [chain]),
            ("tangent-through-sin", math.cos(A_DOT), "cos(ȧ) takes the derivative at the tangent; it belongs at the "
             "value a, times ȧ.", [chain]),
        ], chain)
    if any(not part.passed for part in parts.items):
        return parts.done()                      # the composite needs both rules
    with parts.check("sin(x) / (1 + x·x)", passed="sin(x) / (1 + x·x) at x = 0.9 + 0.6ε: the tangent forward AD "
                                                  "gives"):
        x = call(Dual, 0.9, 0.6, what="Dual(0.9, 0.6)")
        got = _dual_parts(call(_composite, x, what="sin(x) / (1 + x * x) on your Duals"), "sin(x) / (1 + x * x)")
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(creation.tensor(0.9, dtype=float64), creation.tensor(0.6, dtype=float64))
            primal, tangent = forward_ad.unpack_dual(_composite(dual))
        want = (primal.item(), tangent.item())
        _check_dual(got, want, "sin(x) / (1 + x·x) at x = 0.9 + 0.6ε, against forward AD", [], [],
                    "It combines your two rules with the lesson's + and ·: fix the rule that fails above first.")
    return parts.done()


# ==== 15.2 a JVP with forward AD ==============================================================================
class _Watched:
    """The function given to the learner: it notes whether it was called with a dual tensor."""

    def __init__(self, function):
        self.function, self.saw_dual, self.calls = function, False, 0

    def __call__(self, x):
        self.calls += 1
        if forward_ad.unpack_dual(x).tangent is not None:
            self.saw_dual = True
        return self.function(x)


def _jvp_cases():
    rng = _rng(152)
    W, M = creation.tensor(rng.normal(0, 1, (3, 3))), creation.tensor(rng.normal(0, 1, (2, 4)))
    return [("f(x) = tanh(W @ sin(x)), 3 inputs → 3 outputs", lambda x: (W @ x.sin()).tanh(),
             _t(rng.normal(0, 1, 3), False), _t(rng.normal(0, 1, 3), False)),
            ("g(x) = exp(M @ x) · x[0], 4 inputs → 2 outputs", lambda x: (M @ x).exp() * x[0],
             _t(rng.normal(0, 0.5, 4), False), _t(rng.normal(0, 1, 4), False))]


def _close_levels_above(depth):
    """Exit the dual levels the learner's code left open above ``depth``; how many there were."""
    count = len(forward_ad._levels) - depth
    while len(forward_ad._levels) > depth:
        forward_ad.exit_dual_level()
    return count


def _check_jvp_answer(answer, function, x, v, what):
    primal_want, product = (as_numpy(t) for t in func_jvp(function, (x,), (v,)))
    output, vjp_fn = func_vjp(function, x)
    transposed = as_numpy(vjp_fn(v)[0]) if output.shape == v.shape else None      # Jᵀv, for a square J
    along_ones = as_numpy(func_jvp(function, (x,), (creation.ones_like(v),))[1])
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2):
        got = "None" if answer is None else f"a {type(answer).__name__}"
        raise Mistake(f"{_cap(what)} returned {got}; expected the pair (f(x), J·v).",
                      "End with `return primal, tangent`, the two fields of `forward_ad.unpack_dual(y)`.",
                      kind="returns")
    primal, tangent = answer
    if tangent is None:
        raise Mistake(f"{_cap(what)} returned None as J·v: the output carried no tangent.",
                      ["Only a tensor computed from a dual tensor, inside the `with forward_ad.dual_level():` "
                       "block, has a tangent.",
                       "`x_dual = forward_ad.make_dual(x, v)`, then `y = f(x_dual)` and "
                       "`forward_ad.unpack_dual(y)`, all inside the block."], kind="no-tangent")
    primal, tangent = expect.tensor(primal, what + "[0] (f(x))"), expect.tensor(tangent, what + "[1] (J·v)")
    got_primal, got = as_numpy(primal), as_numpy(tangent)
    if not close(got_primal, primal_want):
        if close(got_primal, product) and close(got, primal_want):
            raise Mistake("Your f(x) and J·v are the right values in the wrong order.",
                          "Return `(primal, tangent)`, the order of `unpack_dual`'s fields.", kind="swapped")
        problem = diagnose(got_primal, primal_want, "f(x)", what="value")
        raise Mistake(f"Your first result is not f(x). {problem.message}", "The primal is `unpack_dual(y).primal` "
                      "(or f(x) itself): the ordinary value.", kind="primal", details=problem.details)
    if close(got, product):
        return
    details = [f"yours: `{np.round(got, 4).tolist()}`", f"expected J·v: `{np.round(product, 4).tolist()}`"]
    if close(got, as_numpy(v)):
        raise Mistake("Your J·v is v itself: the tangent of the input x, not of the output f(x).",
                      "Unpack the tangent of `y = f(x_dual)`, not of `x_dual`.", kind="input-tangent",
                      details=details)
    if transposed is not None and close(got, transposed) or got.shape == tuple(x.shape) != tuple(product.shape):
        raise Mistake(f"Your answer has the input's shape {got.shape}, like vᵀJ (a reverse-mode product); J·v has "
                      f"the output's shape {product.shape}." if got.shape != product.shape else
                      "Your answer is Jᵀv, the vector-Jacobian product of reverse mode, not J·v.",
                      ["Forward mode pushes the input's tangent v through f: the result is shaped as f(x).",
                       "`forward_ad.make_dual(x, v)`, then `forward_ad.unpack_dual(f(x_dual)).tangent`."],
                      kind="transposed", details=details)
    if close(got, along_ones):
        raise Mistake("Your answer is J·1, the tangent along a vector of ones, not along the given v.",
                      "Make the dual with v as its tangent: `forward_ad.make_dual(x, v)`.", kind="ignored-v",
                      details=details)
    problem = diagnose(got, product, "J·v", what="value")
    raise Mistake(problem.message, "J·v is `forward_ad.unpack_dual(f(forward_ad.make_dual(x, v))).tangent`, "
                  "inside a `with forward_ad.dual_level():` block.", kind=problem.kind, details=details)


@exercise("15.2", "a Jacobian-vector product with forward AD", lesson="15", solution="lesson15:jvp_with_duals")
def exercise_15_2(jvp_with_duals):
    """``jvp_with_duals(f, x, v)``: ``(f(x), J·v)`` computed with dual tensors
    (:mod:`vizgrad.autograd.forward_ad`), on a square and a non-square Jacobian."""
    parts = Parts()
    for title, function, x, v in _jvp_cases():
        watched = _Watched(function)
        what = "your jvp_with_duals(f, x, v)"
        with parts.check(title, passed=f"{title}: J·v, from dual tensors"):
            depth = len(forward_ad._levels)
            try:
                answer = call(jvp_with_duals, watched, x, v, what=what)
            finally:
                left_open = _close_levels_above(depth)
            if left_open:
                raise Mistake(f"{_cap(what)} left {left_open} dual level{'s' if left_open > 1 else ''} open: every "
                              "later op would keep computing tangents.",
                              "Use `with forward_ad.dual_level():`, which closes the level when the block ends.",
                              kind="level-open")
            _check_jvp_answer(answer, function, x, v, what)
            if not watched.saw_dual:
                raise Mistake("Right J·v, but f never saw a dual tensor: this exercise is forward mode with dual "
                              "tensors." if watched.calls else "Right J·v, but f was never called with x.",
                              "`forward_ad.make_dual(x, v)` inside `with forward_ad.dual_level():`, then f of "
                              "that dual tensor.", kind="not-forward-ad")
    return parts.done()


# ==== 15.3 per-sample gradient norms with vmap ====================================================================
def classifier(seed=153, features=5, hidden=16, classes=3):
    """A small float64 MLP (Linear, Tanh, Linear) with weights drawn from ``seed``; vizgrad's
    random state is left as it was."""
    rng = _rng(seed)
    state = random.get_rng_state()
    model = Sequential(Linear(features, hidden, dtype=float64), Tanh(), Linear(hidden, classes, dtype=float64))
    random.set_rng_state(state)
    for parameter in model.parameters():
        parameter.data = creation.tensor(rng.normal(0, 0.7, tuple(parameter.shape)))
    return model


def _per_sample_gradients(model, X, Y):
    """Each sample's gradient of its own cross-entropy, by a loop of ``autograd.grad``."""
    params = list(model.parameters())
    rows = []
    for i in range(X.shape[0]):
        loss = F.cross_entropy(model(X[i:i + 1]), Y[i:i + 1])
        rows.append([as_numpy(g) for g in autograd.grad(loss, params)])
    return rows


@exercise("15.3", "per-sample gradient norms with vmap", lesson="15", solution="lesson15:per_sample_grad_norms")
def exercise_15_3(per_sample_grad_norms):
    """``per_sample_grad_norms(model, X, Y)``: for each sample i, the norm over all the model's
    parameters of the gradient of ``F.cross_entropy(model(X[i:i+1]), Y[i:i+1])``, shape (batch,),
    from one vmapped backward pass."""
    rng = _rng(1530)
    batch = 12
    model = classifier()
    X = creation.tensor(rng.normal(0, 1, (batch, 5)) * rng.uniform(0.2, 3.0, (batch, 1)))
    Y = creation.tensor(rng.integers(0, 3, batch))
    rows = _per_sample_gradients(model, X, Y)
    per_parameter = np.array([[np.linalg.norm(g) for g in row] for row in rows])
    want = np.sqrt((per_parameter ** 2).sum(axis=1))
    mean_loss = F.cross_entropy(model(X), Y)
    batch_norm = math.sqrt(sum(float((as_numpy(g) ** 2).sum()) for g in autograd.grad(mean_loss,
                                                                                       list(model.parameters()))))
    passes = []
    what = "your per_sample_grad_norms(model, X, Y)"
    with events.subscribe(passes.append, kinds="backward_start"):
        answer = call(per_sample_grad_norms, model, X, Y, what=what)
    got = as_numpy(expect.tensor(answer, what))
    details = [f"yours: `{np.round(got, 4).tolist()}`", f"expected: `{np.round(want, 4).tolist()}`"]
    if got.shape == per_parameter.shape and close(got, per_parameter):
        raise Mistake(f"{_cap(what)} gives one norm per parameter tensor, shape {got.shape}: the norm is over all "
                      "the parameters together, one number per sample.",
                      "Add the squared norms of the parameters, then take one square root per sample: "
                      "√(Σ_params ‖g‖²).", kind="per-parameter")
    expect.shape(answer, (batch,), what, "One norm per sample: shape (batch,). Flatten each parameter's "
                 "gradient per sample with `g.reshape(len(X), -1)` and sum over the rest.")
    if close(got, want):
        if len(passes) >= batch:
            raise Mistake(f"The right norms, from {len(passes)} backward passes: one per sample. "
                          "`vmap(grad(loss))` gives every sample's gradient from one pass over the batch.",
                          "Write the loss of one sample as a function of the parameters "
                          "(`functional_call(model, params, (x.unsqueeze(0),))`), then "
                          "`vmap(grad(loss), in_dims=(None, 0, 0))(params, X, Y)`.", kind="loop", details=details)
        return [f"{batch} per-sample gradient norms, √(Σ_params ‖∇ℓ_i‖²), as a loop over the samples gives them",
                f"from {len(passes)} backward pass{'es' if len(passes) != 1 else ''} (a loop takes {batch})"]
    known = [
        ("batch-gradient", np.full(batch, batch_norm), "Every sample has the same norm: the norm of the whole "
         "batch's mean gradient. Each sample's gradient is of its own loss.", "Under `vmap`, the loss function "
         "sees one sample: `F.cross_entropy(out, y.unsqueeze(0))` for that sample alone."),
        ("squared", want ** 2, "Your norms are squared: the square root is missing.", "√(Σ_params ‖g‖²): "
         "`.sqrt()` at the end."),
        ("sum-of-norms", per_parameter.sum(axis=1), "You add the norms of the parameter tensors; the norm of all "
         "of them together is the square root of the sum of their squared norms.", "√(‖g_W1‖² + ‖g_b1‖² + ...), "
         "not ‖g_W1‖ + ‖g_b1‖ + ..."),
        ("missing-parameters", np.sqrt((per_parameter[:, ::2] ** 2).sum(axis=1)), "Your norms leave out the biases: "
         "the norm is over every parameter.", "Loop over all of `grads.values()`."),
    ]
    for kind, wrong, message, hint in known:
        if close(got, wrong):
            raise Mistake(message, hint, kind=kind, details=details)
    problem = diagnose(got, want, "the per-sample norms", what="value")
    raise Mistake(problem.message, "Compare with a loop over the samples: `autograd.grad` of each sample's loss.",
                  kind=problem.kind, details=details)
