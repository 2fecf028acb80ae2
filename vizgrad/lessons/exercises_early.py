"""Exercises of lessons 00-04: tensors and backward (00), the chain rule by hand (01),
broadcasting (02), custom autograd Functions (03) and an MLP from scratch (04).

Each checker tries the learner's code on a few inputs and compares it with vizgrad's
own answer (or a finite-difference one), recognising the usual wrong answers by name.
"""

import math

import numpy as np

from .. import creation, no_grad
from ..autograd import gradcheck
from ..autograd.gradcheck import GradcheckError
from ..errors import DTypeError, ShapeError
from . import expect
from .framework import LearnerError, Mistake, call, exercise, learner_code
from .gradients import as_numpy, check_function, close, diagnose, find_wrong_nodes
from .handgraph import Scalar


def _t(values, requires_grad=True, name=None, dtype="float64"):
    return creation.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=requires_grad,
                           name=name)


def _rng(seed):
    return np.random.default_rng(seed)


# ==== lesson 00: welcome ================================================================================
@exercise("0.1", "a tensor that requires grad", lesson="00", solution="lesson00:make_w")
def exercise_0_1(make_w):
    """``make_w()`` returns [[1, 2, 3], [4, 5, 6]] as a floating tensor that requires grad."""
    try:
        w = call(make_w, what="your make_w()")
    except LearnerError as error:
        if isinstance(error.error, DTypeError):
            raise Mistake(f"vizgrad said: {error.error}", "Write the numbers as floats (`1.0`) or pass "
                          "`dtype=vg.float32`: only floating tensors can have gradients.", kind="dtype") from None
        raise
    w = expect.tensor(w, "your make_w()")
    expect.shape(w, (2, 3), "The tensor", "Two rows of three: `[[1, 2, 3], [4, 5, 6]]`." if w.shape != (3, 2)
                 else "That is the transpose: the first row is `[1, 2, 3]`.")
    if not w.is_floating_point():
        raise Mistake(f"The tensor has dtype {w.dtype.name}.", "Gradients need floating-point numbers: "
                      "write `1.0` or pass `dtype=vg.float32`.", kind="dtype")
    expect.close_values(w, [[1, 2, 3], [4, 5, 6]], "w")
    if not w.requires_grad:
        raise Mistake("The tensor does not require grad, so vizgrad will not compute a gradient for it.",
                      "Pass `requires_grad=True` to `vg.tensor`.", kind="requires-grad")
    if not w.is_leaf:
        raise Mistake(f"The tensor was computed by an operation ({w.grad_fn.name()}), so it is not a leaf: "
                      "its `.grad` will stay None after backward.",
                      "Create it directly with `vg.tensor(..., requires_grad=True)`.", kind="not-leaf")
    return ["a (2, 3) floating tensor", "the right values", "a leaf that requires grad"]


@exercise("0.2", "a derivative with .backward()", lesson="00", solution="lesson00:slope_at")
def exercise_0_2(slope_at):
    """``slope_at(x0)``: f'(x0) for f(x) = x³ - 2x, through vizgrad's backward."""
    points = [2.0, -1.0, 0.5, 3.0]
    got = []
    for x0 in points:
        value = call(slope_at, x0, what=f"your slope_at({x0})")
        got.append(expect.number(value, f"your slope_at({x0})"))
    expected = [3 * x * x - 2 for x in points]
    if np.allclose(got, expected, rtol=1e-4, atol=1e-5):
        return ["f'(x) = 3x² - 2 at x = 2, -1, 0.5 and 3"]
    if np.allclose(got, np.cumsum(expected), rtol=1e-4):
        raise Mistake("The first answer is right, but later ones keep growing: gradients from earlier calls "
                      "were added in.", "`.grad` accumulates over backward calls. Create `x` inside the "
                      "function each time (or reset `x.grad = None`).", kind="accumulated")
    if np.allclose(got, [x ** 3 - 2 * x for x in points], rtol=1e-4):
        raise Mistake("Your function returns f(x0), the value, not the slope.",
                      "After `y.backward()`, the slope is in `x.grad`.", kind="value-not-grad")
    problem = diagnose(np.array(got), np.array(expected), "f'(x)", what="value")
    raise Mistake(f"At x = {points}, you returned {np.round(got, 4).tolist()}; f'(x) is "
                  f"{np.round(expected, 4).tolist()}.", problem.hint if problem else None,
                  kind=problem.kind if problem else "values")


# ==== lesson 01: scalars and the chain rule ==============================================================
def _grads_1_1(x, y):
    return -y * math.sin(x * y) + 1.0, -x * math.sin(x * y)


@exercise("1.1", "the chain rule by hand", lesson="01", solution="lesson01:grads_by_hand")
def exercise_1_1(grads_by_hand):
    """``grads_by_hand(x, y)`` returns (df/dx, df/dy) for f = cos(x·y) + x, as numbers."""
    points = [(0.5, 2.0), (-1.2, 0.7), (2.0, -0.3)]
    for x, y in points:
        answer = expect.not_none(call(grads_by_hand, x, y, what=f"your grads_by_hand({x}, {y})"),
                                 f"your grads_by_hand({x}, {y})")
        if isinstance(answer, (int, float)) or not hasattr(answer, "__len__") or len(answer) != 2:
            raise Mistake(f"`grads_by_hand({x}, {y})` returned {answer!r}; expected two numbers, "
                          "`(df_dx, df_dy)`.", "End with `return df_dx, df_dy`.", kind="usage")
        got = np.array([expect.number(v, "each derivative") for v in answer])
        want = np.array(_grads_1_1(x, y))
        if close(got, want):
            continue
        s = math.sin(x * y)
        candidates = [
            ("sign", [y * s + 1.0, x * s], "Both derivatives of the cosine part have the wrong sign.",
             "d/du cos(u) = -sin(u): the minus sign stays."),
            ("chain-rule", [-s + 1.0, -s], "The outer derivative is there, but not the inner one.",
             "Chain rule: the derivative of cos(u) with u = x·y is -sin(u) times du/dx (= y) or du/dy (= x)."),
            ("missing-term", [-y * s, -x * s], "df/dx misses the derivative of the `+ x` term.",
             "f = cos(x·y) + x: the second term adds d(x)/dx = 1 to df/dx."),
            ("swapped", [want[1], want[0]], "You returned (df/dy, df/dx): the order is swapped.",
             "Return `(df_dx, df_dy)`."),
        ]
        for kind, wrong, message, hint in candidates:
            if close(got, wrong):
                raise Mistake(f"At x = {x}, y = {y}: {message}", hint, kind=kind,
                              details=[f"yours: `{got.round(5).tolist()}`", f"expected: `{want.round(5).tolist()}`"])
        which = [name for name, a, b in zip(("df/dx", "df/dy"), got, want) if not math.isclose(a, b, rel_tol=1e-4,
                                                                                                 abs_tol=1e-6)]
        raise Mistake(f"At x = {x}, y = {y}: {' and '.join(which)} {'is' if len(which) == 1 else 'are'} off.",
                      "Split f into nodes: u = x·y, c = cos(u), f = c + x. Multiply local derivatives along "
                      "each path from f to x, and add the paths.", kind="values",
                      details=[f"yours: `{got.round(5).tolist()}`", f"expected: `{want.round(5).tolist()}`"])
    return ["df/dx = -y·sin(x·y) + 1 and df/dy = -x·sin(x·y) at three points"]


def _graphs_1_2():
    """The hand-built graphs exercise 1.2 runs a backward pass on: (name, output, leaves)."""
    x, w, b = Scalar(2.0, "x"), Scalar(-0.5, "w"), Scalar(1.5, "b")
    z = w * x + b
    z.label = "z"
    neuron = z.tanh()
    neuron.label = "out"

    p, q = Scalar(3.0, "p"), Scalar(-2.0, "q")
    reuse = p * p + p * q
    reuse.label = "out"

    a, c = Scalar(1.5, "a"), Scalar(-0.5, "c")
    d = a * c
    d.label = "d"
    e = d + a
    e.label = "e"
    diamond = d * e
    diamond.label = "out"
    return [("out = tanh(w·x + b)", neuron), ("out = p·p + p·q", reuse), ("out = d·(d + a) with d = a·c", diamond)]


def _scalar_name(scalar):
    return f"`{scalar.label}`" if scalar.label else f"the `{scalar.op}` node (= {scalar.value:.4g})"


def _reference_backward(output, overwrite=False, upstream=True, reverse=True, seed=1.0):
    """The right backward pass over a :class:`Scalar` graph, and the usual wrong ones."""
    order = output.topological_order()
    for node in order:
        node.grad = 0.0
    output.grad = seed
    for node in (reversed(order) if reverse else order):
        for source, local in zip(node.inputs, node.local_grads):
            contribution = local * node.grad if upstream else local
            source.grad = contribution if overwrite else source.grad + contribution


@exercise("1.2", "a backward pass over a hand-built graph", lesson="01", solution="lesson01:backward")
def exercise_1_2(backward):
    """``backward(output)`` fills ``.grad`` of every Scalar in ``output``'s graph."""
    for title, output in _graphs_1_2():
        order = output.topological_order()
        call(backward, output, what="your backward(output)")
        got = {id(n): n.grad for n in order}
        _, reference = [g for g in _graphs_1_2() if g[0] == title][0]
        ref_order = reference.topological_order()
        _reference_backward(reference)
        want = {id(n): r.grad for n, r in zip(order, ref_order)}
        wrong = [n for n in reversed(order) if not math.isclose(got[id(n)], want[id(n)], rel_tol=1e-6, abs_tol=1e-9)]
        if not wrong:
            continue
        variants = {
            "overwrite": dict(overwrite=True),
            "ignored-upstream": dict(upstream=False),
            "order": dict(reverse=False),
            "no-seed": dict(seed=0.0),
        }
        kind = "values"
        for name, options in variants.items():
            _, trial = [g for g in _graphs_1_2() if g[0] == title][0]
            _reference_backward(trial, **options)
            if all(math.isclose(got[id(n)], t.grad, rel_tol=1e-6, abs_tol=1e-9)
                   for n, t in zip(order, trial.topological_order())):
                kind = name
                break
        first = wrong[0]
        uses = sum(1 for n in order for s in n.inputs if s is first)
        users = sum(1 for n in order if any(s is first for s in n.inputs))
        name = _scalar_name(first)
        hints = {
            "overwrite": (f"{name} is used {uses} times (as an input of {users} operation{'s' if users > 1 else ''}), "
                          f"so gradients reach it along {uses} paths, and they must be added up. Use "
                          "`source.grad += ...`, not `source.grad = ...`."),
            "ignored-upstream": ("Chain rule: what flows into an input is the local derivative *times* the "
                                 "gradient of the node (`node.grad`), not the local derivative alone."),
            "order": ("Visit nodes from the output back to the inputs (`reversed(order)`): a node's gradient must "
                      "be complete before it is passed on."),
            "no-seed": "Start the pass with `output.grad = 1.0`: d(out)/d(out) = 1.",
            "values": ("Each input gets `local_grad * node.grad` added to its `.grad`, for every node, visiting "
                       "nodes from the output back to the inputs."),
        }
        figure = output.draw(highlight=first, note=f"first wrong grad: {got[id(first)]:.4g}, "
                                                   f"expected {want[id(first)]:.4g}")
        raise Mistake(f"On the graph {title}, the first node (going backward) with a wrong gradient is {name}: "
                      f"its grad is {got[id(first)]:.6g}, but d(out) / d(this node) = {want[id(first)]:.6g}.",
                      hints[kind], kind=kind, figure=figure,
                      details=[f"{_scalar_name(n)}: yours {got[id(n)]:.5g}, expected {want[id(n)]:.5g}"
                               for n in reversed(order)])
    return ["a neuron, tanh(w·x + b)", "a value used several times (p·p + p·q)", "a diamond-shaped graph"]


@exercise("1.3", "the gradient of an intermediate result", lesson="01", solution="lesson01:hidden_grad")
def exercise_1_3(hidden_grad):
    """``hidden_grad(a, b, c)`` returns dL/dh for h = a·b, L = sum((h + c)²)."""
    rng = _rng(13)
    a, b, c = (_t(rng.standard_normal(4), name=n) for n in "abc")
    result = call(hidden_grad, a, b, c, what="your hidden_grad(a, b, c)")
    if result is None:
        raise Mistake("`hidden_grad` returned None. If you returned `h.grad`: vizgrad keeps `.grad` only for leaf "
                      "tensors (the ones you created), not for intermediate results like `h`.",
                      "Call `h.retain_grad()` right after computing `h`, before `.backward()`.", kind="retain-grad")
    got = as_numpy(expect.tensor(result, "your hidden_grad(a, b, c)"))
    av, bv, cv = as_numpy(a), as_numpy(b), as_numpy(c)
    want = 2 * (av * bv + cv)
    problem = diagnose(got, want, "h", candidates=[
        ("leaf-grad", want * bv, "You returned dL/da, the gradient of the leaf `a`, not of `h`.",
         "Call `h.retain_grad()` before backward and return `h.grad`."),
        ("leaf-grad", want * av, "You returned dL/db, the gradient of the leaf `b`, not of `h`.",
         "Call `h.retain_grad()` before backward and return `h.grad`."),
        ("accumulated", 2 * want, "Your gradient is twice the right one: was backward run twice?",
         "Call `.backward()` once per computation.")], what="gradient")
    if problem is not None:
        raise Mistake(problem.message, problem.hint, kind=problem.kind, details=problem.details)
    return ["dL/dh = 2(h + c), read from `h.grad` after `h.retain_grad()`"]


# ==== lesson 02: tensors and broadcasting ==================================================================
_SHAPE_CASES = [((4, 3), (3,), (4, 3)), ((4, 1), (1, 5), (4, 5)), ((2, 1, 3), (4, 1), (2, 4, 3)), ((), (5,), (5,)),
                ((3,), (3,), (3,)), ((1,), (2, 3), (2, 3))]
_BAD_SHAPES = [((4, 3), (4,)), ((2, 3), (3, 2))]


def _left_aligned(a, b):
    """What lining the shapes up from the left (the usual mistake) gives."""
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))


@exercise("2.1", "broadcasting rules", lesson="02", solution="lesson02:broadcast_shape")
def exercise_2_1(broadcast_shape):
    """``broadcast_shape(a, b)``: the broadcast shape of two shapes; ValueError when they clash."""
    for a, b, want in _SHAPE_CASES:
        got = expect.not_none(call(broadcast_shape, a, b, what=f"your broadcast_shape({a}, {b})"),
                              f"your broadcast_shape({a}, {b})")
        try:
            got = tuple(int(n) for n in got)
        except TypeError:
            raise Mistake(f"`broadcast_shape({a}, {b})` returned {got!r}; expected a tuple of ints.",
                          kind="type") from None
        if got == want:
            continue
        if got == _left_aligned(a, b):
            raise Mistake(f"`broadcast_shape({a}, {b})` returned {got}; expected {want}.",
                          "Shapes are lined up from the *right* (the last dimensions first), then the missing "
                          "leading dimensions count as 1.", kind="align-left")
        raise Mistake(f"`broadcast_shape({a}, {b})` returned {got}; expected {want}.",
                      "Line the shapes up from the right; in each position the sizes must be equal or one of "
                      "them 1, and the result takes the larger.", kind="values")
    for a, b in _BAD_SHAPES:
        try:
            got = call(broadcast_shape, a, b)
        except LearnerError:
            continue
        raise Mistake(f"`broadcast_shape({a}, {b})` returned {got!r}, but these shapes cannot be broadcast "
                      "together.", "Raise `ValueError` when two sizes differ and neither is 1.",
                      kind="incompatible")
    return [f"{len(_SHAPE_CASES)} shape pairs right, including () and size-1 dimensions",
            "clashing shapes raise an error"]


_UNBROADCAST_CASES = [((4, 3), (3,)), ((4, 3), (4, 1)), ((2, 4, 3), (4, 1)), ((2, 3), (2, 3)), ((2, 3), (1, 3)),
                      ((5,), ())]


@exercise("2.2", "undo broadcasting: the gradient of a broadcast input", lesson="02",
          solution="lesson02:unbroadcast")
def exercise_2_2(unbroadcast):
    """``unbroadcast(grad, shape)`` sums ``grad`` down to ``shape``."""
    rng = _rng(22)
    for big, small in _UNBROADCAST_CASES:
        grad = _t(rng.standard_normal(big), requires_grad=False)
        what = f"your unbroadcast(grad of shape {big}, {small})"
        result = call(unbroadcast, grad, small, what=what)
        got = as_numpy(expect.tensor(result, what))
        want = as_numpy(grad)
        lead = len(big) - len(small)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(small) if n == 1 and big[lead + i] != 1)
        want = want.sum(axis=axes).reshape(small) if axes else want
        if got.shape == want.shape and close(got, want):
            continue
        if got.shape == tuple(n for n in small if n != 1) or (got.size == want.size and got.shape != want.shape):
            if close(got.reshape(want.shape), want):
                raise Mistake(f"For a gradient of shape {big} and an input of shape {small}, you returned the right "
                              f"numbers with shape {got.shape}.",
                              "Where the input has a 1, keep the dimension: `.sum(dim, keepdim=True)`; dimensions "
                              "the input does not have at all are summed away.", kind="keepdim")
        count = np.prod(big) / max(1, np.prod(small))
        if got.shape == want.shape and close(got * count, want):
            raise Mistake(f"For shape {big} down to {small} your values are the sums divided by {count:g}: a mean.",
                          "Each broadcast copy of the input contributed fully to the output, so their gradients "
                          "add up: a sum, not a mean.", kind="mean")
        problem = diagnose(got, want, "the input", what="gradient")
        if problem is not None and problem.kind == "missing-broadcast-sum":
            raise Mistake(f"For a gradient of shape {big} and an input of shape {small}, your result still has "
                          f"shape {got.shape}: the broadcast dimensions were not summed.",
                          f"Sum over the leading dimensions the input lacks, and (with keepdim=True) over those "
                          f"where it has a 1: here `{axes}`.", kind="missing-broadcast-sum")
        raise Mistake(f"For a gradient of shape {big} and an input of shape {small}: "
                      f"{problem.message if problem else 'wrong values.'}",
                      problem.hint if problem else None, kind=problem.kind if problem else "values",
                      details=problem.details if problem else ())
    return [f"{len(_UNBROADCAST_CASES)} shape pairs: leading dimensions summed away, size-1 dimensions kept"]


@exercise("2.3", "centre each row with keepdim", lesson="02", solution="lesson02:center_rows")
def exercise_2_3(center_rows):
    """``center_rows(x)`` subtracts each row's mean, with vizgrad ops (so gradients flow)."""
    rng = _rng(23)
    for shape in ((4, 3), (3, 3)):
        x = _t(rng.standard_normal(shape), name="x")
        what = f"your center_rows(x) for x of shape {shape}"
        try:
            result = call(center_rows, x, what=what)
        except LearnerError as error:
            if isinstance(error.error, ShapeError):
                raise Mistake(f"For x of shape {shape}, vizgrad said: {error.error}",
                              "`x.mean(dim=1)` has shape (rows,), which lines up with the *columns* of x. Keep "
                              "the reduced dimension: `x.mean(dim=1, keepdim=True)` has shape (rows, 1).",
                              kind="keepdim") from None
            raise
        result = expect.tensor(result, what)
        xv = as_numpy(x)
        want = xv - xv.mean(axis=1, keepdims=True)
        expect.shape(result, shape, f"the result for x of shape {shape}")
        wrong_axis = xv - xv.mean(axis=1)[None, :] if shape[0] == shape[1] else None
        if wrong_axis is not None and close(as_numpy(result), wrong_axis) and not close(wrong_axis, want):
            raise Mistake(f"For the square x of shape {shape}, each row's mean was subtracted along the columns.",
                          "`x.mean(dim=1)` has shape (3,) and broadcasts as a row. Use `keepdim=True` so it "
                          "has shape (3, 1) and broadcasts down the columns.", kind="keepdim")
        expect.close_values(result, want, "center_rows(x)", candidates=[
            ("wrong-dim", xv - xv.mean(axis=0, keepdims=True), "You subtracted each column's mean.",
             "Rows are dimension 1's groups: average over `dim=1`.")])
        if not result.requires_grad:
            raise Mistake("The result does not require grad: the computation left vizgrad (NumPy? `.detach()`?).",
                          "Use only vizgrad tensor operations so the graph stays connected.", kind="no-grad")
        try:
            with learner_code("your center_rows"):
                gradcheck(center_rows, (x,))
        except GradcheckError as error:
            raise Mistake(f"The gradient through your function is wrong: {error}", kind="gradcheck") from None
    return ["right values for a (4, 3) and a square (3, 3) input", "gradients flow (gradcheck passes)"]


# ==== lesson 03: your own op ================================================================================
def _check_custom(cls, name, reference, input_sets, names, composite, candidates=None):
    """The common checker for a custom Function: forward values, then each application's
    local gradient in a small graph (the figure highlights the faulty node), then gradcheck."""
    expect.function_class(cls, name)
    for arrays in input_sets:
        tensors = [_t(a, name=n) for a, n in zip(arrays, names)]
        with learner_code(f"{cls.__name__}.forward"):
            out = cls.apply(*tensors)
        out = expect.tensor(out, f"`{cls.__name__}.apply`")
        want = as_numpy(reference(*[_t(a, requires_grad=False) for a in arrays]))
        expect.shape(out, want.shape, f"The output of {cls.__name__}.apply for inputs of shapes "
                                      f"{[tuple(np.shape(a)) for a in arrays]}")
        if not close(as_numpy(out), want):
            raise Mistake(f"`{cls.__name__}.forward` computes the wrong values.", "Check forward before backward.",
                          kind="forward", details=[f"yours: `{np.round(as_numpy(out), 4).tolist()}`",
                                                   f"expected: `{np.round(want, 4).tolist()}`"])
    for seed, arrays in enumerate(input_sets):
        single = check_function(cls, arrays, names, seed=seed, candidates=candidates)
        if single.ok:
            continue
        tensors = [_t(a, name=n) for a, n in zip(arrays, names)]
        report = find_wrong_nodes(lambda *ts: composite(cls, *ts), *tensors, seed=seed)
        diagnosis = single.diagnosis
        figure = report.figure if not report.ok else None
        where = (f" In the graph below, node `{report.wrong[0].node_id}` is the first, going backward, whose "
                 "local gradient disagrees with finite differences." if figure is not None else "")
        raise Mistake(f"{diagnosis.message}{where}", diagnosis.hint, kind=diagnosis.kind, figure=figure,
                      details=diagnosis.details)
    arrays = input_sets[0]
    tensors = tuple(_t(a, name=n) for a, n in zip(arrays, names))
    try:
        with learner_code(f"{cls.__name__}"):
            gradcheck(cls.apply, tensors)
    except GradcheckError as error:
        raise Mistake(f"gradcheck disagrees: {error}", kind="gradcheck") from None
    return ["forward matches vizgrad's own op", "backward matches finite differences at random inputs "
            "and random upstream gradients", "gradcheck passes"]


@exercise("3.1", "cos as an autograd.Function", lesson="03", solution="lesson03:MyCos")
def exercise_3_1(MyCos):
    rng = _rng(31)
    return _check_custom(MyCos, "MyCos", lambda x: x.cos(), [[rng.uniform(-3, 3, 5)], [rng.uniform(-3, 3, (2, 3))]],
                         ["x"], lambda op, x: (op.apply(x * 1.5) * x).sum())


@exercise("3.2", "sigmoid as an autograd.Function", lesson="03", solution="lesson03:MySigmoid")
def exercise_3_2(MySigmoid):
    rng = _rng(32)

    def candidates(arrays, v):
        x = arrays[0]
        return {0: [("used-input", v * x * (1 - x), "Your backward uses x·(1 - x), with the input x, where the "
                     "derivative needs the *output* s = sigmoid(x).",
                     "Save the output in forward (`ctx.save_for_backward(s)`) and return `grad * s * (1 - s)`.")]}

    return _check_custom(MySigmoid, "MySigmoid", lambda x: x.sigmoid(),
                         [[rng.normal(0, 2, 6)], [rng.normal(0, 2, (3, 2))]], ["x"],
                         lambda op, x: (op.apply(x * 2.0) * x).sum(), candidates)


@exercise("3.3", "matrix product as an autograd.Function", lesson="03", solution="lesson03:MyMatMul")
def exercise_3_3(MyMatMul):
    rng = _rng(33)

    def candidates(arrays, v):
        a, b = arrays
        result = {}
        if v.shape[1] == b.shape[1] and v.shape[1] == b.shape[0]:
            result[0] = [("transposed", v @ b, "The gradient for `a` uses `b` where it needs `b.T`.",
                          "For `C = a @ b`: `da = dC @ b.T`, which has a's shape.")]
        if a.shape[0] == v.shape[0] and a.shape[0] == a.shape[1]:
            result[1] = [("transposed", a @ v, "The gradient for `b` uses `a` where it needs `a.T`.",
                          "For `C = a @ b`: `db = a.T @ dC`, which has b's shape.")]
        return result

    try:
        return _check_custom(MyMatMul, "MyMatMul", lambda a, b: a @ b,
                             [[rng.standard_normal((3, 2)), rng.standard_normal((2, 4))],
                              [rng.standard_normal((3, 3)), rng.standard_normal((3, 3))]], ["a", "b"],
                             lambda op, a, b: op.apply(a, b).tanh().sum(), candidates)
    except LearnerError as error:
        if isinstance(error.error, ShapeError) and "matmul" in str(error.error):
            raise Mistake(f"A matrix product in `{MyMatMul.__name__}.backward` has mismatched shapes: {error.error}",
                          "For `C = a @ b` with a (m, k), b (k, n) and dC (m, n): `da = dC @ b.T` is (m, n) @ "
                          "(n, k) and `db = a.T @ dC` is (k, m) @ (m, n). A product whose shapes do not chain "
                          "usually misses (or has an extra) `.T`.", kind="transposed") from None
        raise


@exercise("3.4", "adding a broadcast bias as an autograd.Function", lesson="03", solution="lesson03:AddBias")
def exercise_3_4(AddBias):
    rng = _rng(34)
    return _check_custom(AddBias, "AddBias", lambda x, b: x + b,
                         [[rng.standard_normal((4, 3)), rng.standard_normal(3)],
                          [rng.standard_normal((2, 5)), rng.standard_normal(5)]], ["x", "b"],
                         lambda op, x, b: op.apply(x * 1.0, b).tanh().sum())


# ==== lesson 04: an MLP from scratch ==============================================================================
HIDDEN = 16


def init_params(hidden=HIDDEN, seed=0):
    """The parameters of lesson 04's 2-hidden-1 MLP: ``W1`` (2, hidden), ``b1`` (hidden,),
    ``W2`` (hidden, 1), ``b2`` (1,), float32, requiring grad."""
    rng = _rng(seed)
    return {"W1": creation.tensor(rng.normal(0, 2 ** -0.5, (2, hidden)).astype(np.float32), requires_grad=True,
                                  name="W1"),
            "b1": creation.tensor(np.zeros(hidden, np.float32), requires_grad=True, name="b1"),
            "W2": creation.tensor(rng.normal(0, 1 / math.sqrt(hidden), (hidden, 1)).astype(np.float32),
                                  requires_grad=True, name="W2"),
            "b2": creation.tensor(np.zeros(1, np.float32), requires_grad=True, name="b2")}


def _mlp(params, X):
    return (X @ params["W1"] + params["b1"]).tanh() @ params["W2"] + params["b2"]


def _bce(logits, y):
    y = y.reshape(logits.shape).to(logits.dtype)
    return (logits.relu() - logits * y + (-logits.abs()).exp().log1p()).mean()


def _params_64(seed):
    params = init_params(8, seed)
    rng = _rng(seed + 100)
    for name in ("b1", "b2"):
        params[name] = creation.tensor(rng.normal(0, 0.5, tuple(params[name].shape)), dtype="float64",
                                       requires_grad=True, name=name)
    for name in ("W1", "W2"):
        params[name] = params[name].detach().to("float64").requires_grad_()
    return params


@exercise("4.1", "the MLP's forward pass", lesson="04", solution="lesson04:forward")
def exercise_4_1(forward):
    """``forward(params, X)``: tanh hidden layer, then one logit per point, shape (n, 1)."""
    params = _params_64(41)
    X = _t(_rng(41).standard_normal((10, 2)), requires_grad=False, name="X")
    what = "your forward(params, X)"
    try:
        out = call(forward, params, X, what=what)
    except LearnerError as error:
        if isinstance(error.error, ShapeError):
            raise Mistake(f"vizgrad said: {error.error}", "X is (n, 2), W1 is (2, hidden), W2 is (hidden, 1): "
                          "`X @ W1` then `h @ W2`, with the biases added after each product.",
                          kind="shape") from None
        raise
    out = expect.tensor(out, what)
    if tuple(out.shape) == (10,):
        raise Mistake("The output has shape (10,); the lesson's loss expects one column: (10, 1).",
                      "Keep the shape that `h @ W2 + b2` gives you.", kind="shape")
    expect.shape(out, (10, 1), "The output for 10 points")
    Xv, p = as_numpy(X), {k: as_numpy(v) for k, v in params.items()}
    hidden = Xv @ p["W1"] + p["b1"]
    expect.close_values(out, np.tanh(hidden) @ p["W2"] + p["b2"], "forward(params, X)", candidates=[
        ("activation", np.maximum(hidden, 0) @ p["W2"] + p["b2"], "You used ReLU; this lesson's MLP uses tanh.",
         "`(X @ W1 + b1).tanh()`."),
        ("no-activation", hidden @ p["W2"] + p["b2"], "There is no activation between the layers.",
         "Without a non-linearity two linear layers are one linear layer, whose decision boundary is a straight "
         "line: add `.tanh()` to the hidden layer."),
        ("missing-bias", np.tanh(Xv @ p["W1"]) @ p["W2"] + p["b2"], "The hidden layer has no bias.",
         "Add `b1` before the tanh."),
        ("missing-bias", np.tanh(hidden) @ p["W2"], "The output has no bias.", "Add `b2` at the end.")])
    out.sum().backward()
    missing = [name for name, value in params.items() if value.grad is None]
    if missing:
        raise Mistake(f"No gradient reached {', '.join(missing)}: the computation left vizgrad's graph.",
                      "Use the tensors in `params` directly, with vizgrad operations.", kind="no-grad")
    return ["shape (n, 1)", "tanh hidden layer and both biases", "gradients reach all four parameters"]


@exercise("4.2", "a numerically stable binary cross-entropy", lesson="04", solution="lesson04:bce_with_logits")
def exercise_4_2(bce_with_logits):
    """``bce_with_logits(logits, y)``: mean BCE from logits (n, 1) and labels y (n,) or (n, 1)."""
    rng = _rng(42)
    logits_np = rng.normal(0, 2, (8, 1))
    labels = (rng.random(8) > 0.5).astype(np.float64)
    cases = [("y of shape (8, 1)", logits_np, labels[:, None]), ("y of shape (8,)", logits_np, labels),
             ("large logits (±60)", np.array([[60.0], [-60.0], [55.0], [-58.0]]), np.array([0.0, 1.0, 1.0, 0.0]))]
    cases.append(("integer labels of shape (8,)", logits_np, labels.astype(np.int64)))
    for title, z, y in cases:
        logits = _t(z, name="logits")
        target = creation.tensor(y, name="y") if y.dtype.kind == "i" else _t(y, requires_grad=False, name="y")
        what = f"your bce_with_logits for {title}"
        loss = expect.tensor(call(bce_with_logits, logits, target, what=what), what)
        if loss.numel() != 1:
            raise Mistake(f"For {title} the loss has shape {tuple(loss.shape)}; expected one number.",
                          "Average over all points with `.mean()`.", kind="shape")
        value = float(as_numpy(loss).reshape(-1)[0])
        zc, yc = z.reshape(-1), y.reshape(-1)
        per_point = np.maximum(zc, 0) - zc * yc + np.log1p(np.exp(-np.abs(zc)))
        want = per_point.mean()
        if not math.isfinite(value):
            raise Mistake(f"For {title} your loss is {value}.", "log(sigmoid(z)) overflows for large |z|. Use "
                          "log(1 + e^z) = relu(z) + log1p(exp(-|z|)): then BCE = relu(z) - y·z + "
                          "log1p(exp(-|z|)).", kind="unstable")
        if math.isclose(value, want, rel_tol=1e-4, abs_tol=1e-6):
            loss.backward()
            grad = as_numpy(logits.grad).reshape(-1)
            if not np.allclose(grad, (1 / (1 + np.exp(-zc)) - yc) / len(zc), rtol=1e-4, atol=1e-7):
                raise Mistake(f"For {title} the value is right but the gradient is not.", kind="gradient")
            continue
        broadcast = (np.maximum(z, 0) - z * y[None, :] + np.log1p(np.exp(-np.abs(z)))).mean() if y.ndim == 1 else None
        if broadcast is not None and math.isclose(value, broadcast, rel_tol=1e-4):
            raise Mistake(f"For {title}: logits (n, 1) and y (n,) broadcast to an (n, n) matrix, so every logit "
                          "was paired with every label.", "Reshape first: `y = y.reshape(logits.shape)`. "
                          "(Lesson 02: shapes line up from the right.)", kind="broadcast")
        if math.isclose(value, -want, rel_tol=1e-4):
            raise Mistake(f"For {title} your loss is {value:.5g}, the negative of {want:.5g}.",
                          "BCE = -[y·log p + (1-y)·log(1-p)]: mind the leading minus.", kind="sign")
        if math.isclose(value, per_point.sum(), rel_tol=1e-4):
            raise Mistake(f"For {title} your loss is the sum over points, {value:.5g}; the mean is {want:.5g}.",
                          "Use `.mean()`, so the learning rate does not depend on the batch size.", kind="sum")
        raise Mistake(f"For {title} your loss is {value:.6g}; expected {want:.6g}.",
                      "BCE with logits z: mean of relu(z) - y·z + log1p(exp(-|z|)).", kind="values")
    return ["right value for y of shape (n, 1) and (n,), floats or integers", "finite for logits of ±60",
            "right gradient"]


@exercise("4.3", "one step of gradient descent", lesson="04", solution="lesson04:sgd_step")
def exercise_4_3(sgd_step):
    """``sgd_step(params, lr)`` updates each parameter in place and clears its gradient."""
    params = _params_64(43)
    objects = {name: p for name, p in params.items()}
    X = _t(_rng(43).standard_normal((6, 2)), requires_grad=False)
    _mlp(params, X).pow(2).mean().backward()
    before = {name: as_numpy(p) for name, p in params.items()}
    grads = {name: as_numpy(p.grad) for name, p in params.items()}
    try:
        call(sgd_step, params, 0.1, what="your sgd_step(params, 0.1)")
    except LearnerError as error:
        if "in place" in str(error.error) and "no_grad" in str(error.error):
            raise Mistake(f"vizgrad said: {error.error}", "Put the update inside `with vg.no_grad():`: the update "
                          "itself must not become part of the graph.", kind="no-grad") from None
        raise
    for name, p in params.items():
        if p is not objects[name] or not p.is_leaf:
            raise Mistake(f"`params['{name}']` was replaced by a new tensor"
                          f"{' computed from the old one' if not p.is_leaf else ''}.",
                          "Update in place, so the tensor stays the same leaf: `with vg.no_grad(): p -= lr * "
                          "p.grad`.", kind="not-in-place")
        got = as_numpy(p)
        want = before[name] - 0.1 * grads[name]
        if close(got, before[name] + 0.1 * grads[name]):
            raise Mistake(f"`{name}` moved *up* the gradient.", "Gradient descent subtracts: `p -= lr * p.grad`.",
                          kind="sign")
        if close(got, before[name]) and not close(want, before[name]):
            raise Mistake(f"`{name}` did not change.", "Subtract `lr * p.grad` from every parameter.",
                          kind="no-update")
        expect.close_values(got, want, f"params['{name}']")
        if not p.requires_grad:
            raise Mistake(f"`{name}` no longer requires grad.", "Update in place under `vg.no_grad()` rather than "
                          "rebuilding the tensor.", kind="not-in-place")
        if p.grad is not None and np.any(as_numpy(p.grad) != 0):
            raise Mistake(f"The gradient of `{name}` was not cleared.", "vizgrad adds each backward's gradient to "
                          "`.grad`; without clearing, the next step would use the sum of all past gradients. Set "
                          "`p.grad = None` (or `p.grad.zero_()`) after the update.", kind="no-zero-grad")
    return ["every parameter moved by -lr·grad, in place", "gradients cleared for the next step"]


@exercise("4.4", "train the MLP on two moons", lesson="04", solution="lesson04:train")
def exercise_4_4(train):
    """``train(params, X, y)`` trains in place and returns the losses; 90% accuracy or more."""
    from ..data import make_moons
    X, y = make_moons(200, noise=0.1, seed=4)
    params = init_params(seed=4)
    losses = expect.not_none(call(train, params, X, y, what="your train(params, X, y)"), "your train(params, X, y)")
    try:
        losses = [float(v) for v in losses]
    except (TypeError, ValueError):
        raise Mistake("`train` should return the list of losses, one per step (floats, e.g. `loss.item()`).",
                      kind="type") from None
    if len(losses) < 2:
        raise Mistake(f"`train` returned {len(losses)} losses; expected one per step.", kind="type")
    if not all(math.isfinite(v) for v in losses):
        raise Mistake("The loss became NaN or inf during training.", "Lower the learning rate, and check that the "
                      "loss is the stable one from exercise 4.2.", kind="diverged")
    X_test, y_test = make_moons(400, noise=0.1, seed=44)
    with no_grad():
        predictions = as_numpy(_mlp(params, X_test)).reshape(-1) > 0
    accuracy = float(np.mean(predictions == (as_numpy(y_test) > 0.5)))
    if losses[-1] >= losses[0]:
        raise Mistake(f"The loss did not go down: {losses[0]:.4f} at the start, {losses[-1]:.4f} at the end.",
                      "Each step needs: forward, loss, `backward()`, then the update and clearing the gradients "
                      "(exercise 4.3). Is the update applied to the tensors in `params`?", kind="no-progress")
    if accuracy < 0.9:
        raise Mistake(f"After training, the MLP classifies {accuracy:.0%} of new points correctly; the goal is 90%.",
                      "Train for more steps or with a larger learning rate (try 1000 steps at lr 0.5).",
                      kind="accuracy", details=[f"loss: {losses[0]:.4f} → {losses[-1]:.4f} in {len(losses)} steps"])
    return [f"loss {losses[0]:.3f} → {losses[-1]:.3f} in {len(losses)} steps",
            f"{accuracy:.0%} accuracy on 400 new points"]
