"""The lesson checkers (``vizgrad.lessons``): every reference solution passes, fresh stubs
are "not done", and the usual wrong answers are caught with the matching hint."""

import glob
import json
import math
import os
import re

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.lessons import EXERCISES, check, find_wrong_nodes
from vizgrad.lessons import framework
from vizgrad.lessons.figures import DecisionBoundary, GraphFigure, LossCurve
from vizgrad.lessons.handgraph import Scalar
from vizgrad.lessons.solutions import check_solutions, load_solution

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "lessons", "solutions")
framework.ensure_loaded()
ALL_IDS = sorted(EXERCISES, key=framework.sort_key)
EARLY_IDS = [i for i in ALL_IDS if EXERCISES[i].checker.__module__.endswith("exercises_early")]


def solution(exercise_id):
    return load_solution(EXERCISES[exercise_id], SOLUTIONS)


# --- reference solutions ----------------------------------------------------------------
# (tests/test_lessons_checkers_late.py runs the solutions of lessons 05 and later)
@pytest.mark.parametrize("exercise_id", EARLY_IDS)
def test_reference_solution_passes(exercise_id):
    result = EXERCISES[exercise_id](*solution(exercise_id))
    assert result.passed, str(result)
    assert result.status == "passed" and bool(result)


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_every_exercise_has_a_reference_solution(exercise_id):
    objects = solution(exercise_id)
    assert len(objects) == len(EXERCISES[exercise_id].solution) and all(o is not None for o in objects)


def test_check_solutions_command_reports_each_exercise(capsys):
    from vizgrad.lessons.__main__ import main
    assert main(["check-solutions", "--solutions", SOLUTIONS, "--only", *EARLY_IDS]) == 0
    output = capsys.readouterr().out
    for exercise_id in EARLY_IDS:
        assert re.search(rf"^\s+{re.escape(exercise_id)}\s+ok\b", output, re.M), output
    assert f"{len(EARLY_IDS)}/{len(EARLY_IDS)} passed" in output
    assert main(["check-solutions", "--solutions", SOLUTIONS, "--only", "0.9"]) == 2


def test_check_solutions_fails_on_a_missing_solution(tmp_path):
    lines = []
    assert check_solutions(str(tmp_path), only=["0.1"], out=lines.append) == 1
    assert any("MISSING" in line for line in lines)


def test_lessons_cli_subcommand_runs_the_solutions(capsys):
    from vizgrad import cli
    assert cli.main(["lessons", "check-solutions", "--solutions", SOLUTIONS, "--only", "3.2"]) == 0
    assert "1/1 passed" in capsys.readouterr().out


# --- fresh stubs: "not done", never an exception -------------------------------------------
def _stub_like(reference):
    if isinstance(reference, type) and issubclass(reference, vg.autograd.Function):
        class Stub(vg.autograd.Function):
            @staticmethod
            def forward(ctx, *args):
                raise NotImplementedError

            @staticmethod
            def backward(ctx, *grads):
                raise NotImplementedError
        return Stub

    def stub(*args, **kwargs):
        raise NotImplementedError
    return stub


@pytest.mark.parametrize("exercise_id", EARLY_IDS)
def test_a_fresh_stub_is_not_done(exercise_id):
    stubs = [_stub_like(reference) for reference in solution(exercise_id)]
    result = EXERCISES[exercise_id](*stubs)
    assert result.status == "not done", str(result)
    assert not result.passed
    assert "NotImplementedError" in result.message


def test_every_exercise_a_lesson_calls_is_registered():
    used = set()
    for path in glob.glob(os.path.join(ROOT, "lessons", "*.ipynb")):
        with open(path, encoding="utf-8") as handle:
            notebook = json.load(handle)
        for cell in notebook["cells"]:
            used |= set(re.findall(r"check\.(exercise_\d+_\d+)\(", "".join(cell["source"])))
    registered = {EXERCISES[i].attribute for i in ALL_IDS}
    assert used - registered == set()
    early = {EXERCISES[i].attribute for i in EARLY_IDS}
    assert early <= used, f"exercises no lesson calls: {sorted(early - used)}"


# --- the four classic mistakes --------------------------------------------------------------
def test_sign_error_in_a_derivative_by_hand():
    def grads_by_hand(x, y):
        return y * math.sin(x * y) + 1, x * math.sin(x * y)
    result = check.exercise_1_1(grads_by_hand)
    assert result.status == "failed" and result.mistake == "sign"
    assert "-sin" in result.hint


def test_sign_error_in_a_custom_backward_points_at_the_node():
    class MyCos(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.cos()

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.sin()
    result = check.exercise_3_1(MyCos)
    assert result.mistake == "sign"
    figure = result.figure
    assert isinstance(figure, GraphFigure)
    (highlighted,) = figure.highlight
    assert figure.graph.node(highlighted).op == "MyCos"
    assert f'"{highlighted}" [color="#d62728"' in figure.dot()


def test_sign_error_in_gradient_descent():
    def sgd_step(params, lr):
        with vg.no_grad():
            for p in params.values():
                p += lr * p.grad
                p.grad = None
    assert check.exercise_4_3(sgd_step).mistake == "sign"


def test_missing_sum_over_a_broadcast_dimension_in_unbroadcast():
    result = check.exercise_2_2(lambda grad, shape: grad)
    assert result.mistake == "missing-broadcast-sum"
    assert "sum" in result.hint.lower()


def test_missing_sum_over_a_broadcast_dimension_in_a_custom_backward():
    class AddBias(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad
    result = check.exercise_3_4(AddBias)
    assert result.mistake == "missing-broadcast-sum"
    assert "`.sum(0)`" in result.hint
    assert "`b`" in result.message and "(4, 3)" in result.message
    (highlighted,) = result.figure.highlight
    assert result.figure.graph.node(highlighted).op == "AddBias"


def test_keepdim_forgotten_in_unbroadcast():
    def unbroadcast(grad, shape):
        lead = grad.ndim - len(shape)
        for _ in range(lead):
            grad = grad.sum(dim=0)
        for dim, size in reversed(list(enumerate(shape))):
            if size == 1 and grad.shape[dim] != 1:
                grad = grad.sum(dim=dim)
        return grad
    assert check.exercise_2_2(unbroadcast).mistake == "keepdim"


def test_overwriting_instead_of_accumulating_a_gradient():
    def backward(output):
        order = output.topological_order()
        for node in order:
            node.grad = 0.0
        output.grad = 1.0
        for node in reversed(order):
            for source, local in zip(node.inputs, node.local_grads):
                source.grad = local * node.grad          # overwrites
    result = check.exercise_1_2(backward)
    assert result.mistake == "overwrite"
    assert "+=" in result.hint
    # the figure shows the hand-built graph with the value used twice highlighted
    (highlighted,) = result.figure.highlight
    assert result.figure.graph.node(highlighted).label == "p"
    assert "local" in result.figure.dot()


def test_transposed_matmul_gradient_with_the_wrong_shape():
    class MyMatMul(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad @ b.T, grad.T @ a                  # db is transposed
    result = check.exercise_3_3(MyMatMul)
    assert result.mistake == "transposed"
    assert "A.T @ dC" in result.hint or "a.T @ dC" in result.hint


def test_transposed_matmul_gradient_that_fails_to_multiply():
    class MyMatMul(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad @ b, a.T @ grad                    # missing .T on b
    result = check.exercise_3_3(MyMatMul)
    assert result.status == "failed" and result.mistake == "transposed"


def test_transposed_matmul_gradient_on_square_matrices():
    from vizgrad.lessons.gradients import check_function

    class MyMatMul(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return (a.T @ grad).T, a.T @ grad              # da is (da of a transposed problem)
    rng = np.random.default_rng(0)
    outcome = check_function(MyMatMul, [rng.standard_normal((3, 3)), rng.standard_normal((3, 3))], ["a", "b"])
    assert not outcome.ok


# --- more mistakes the checkers name ---------------------------------------------------------------
def test_sigmoid_backward_that_ignores_the_upstream_gradient():
    class MySigmoid(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s = 1 / (1 + (-x).exp())
            ctx.save_for_backward(s)
            return s

        @staticmethod
        def backward(ctx, grad):
            s, = ctx.saved_tensors
            return s * (1 - s)
    assert check.exercise_3_2(MySigmoid).mistake == "ignored-upstream"


def test_sigmoid_backward_from_the_input_instead_of_the_output():
    class MySigmoid(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 1 / (1 + (-x).exp())

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x * (1 - x)
    assert check.exercise_3_2(MySigmoid).mistake == "used-input"


def test_wrong_forward_is_reported_before_backward():
    class MyCos(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            raise NotImplementedError
    assert check.exercise_3_1(MyCos).mistake == "forward"


def test_passing_an_instance_or_a_function_instead_of_a_function_class():
    from vizgrad.lessons.gradients import is_custom_function
    assert check.exercise_3_1(lambda x: x).mistake == "usage"
    assert not is_custom_function(vg.autograd.Function)


@pytest.mark.parametrize("wrong, kind", [
    (lambda x, y: (-math.sin(x * y) + 1, -math.sin(x * y)), "chain-rule"),
    (lambda x, y: (-y * math.sin(x * y), -x * math.sin(x * y)), "missing-term"),
    (lambda x, y: (-x * math.sin(x * y), -y * math.sin(x * y) + 1), "swapped"),
    (lambda x, y: 1.0, "usage"),
])
def test_chain_rule_mistakes_by_hand(wrong, kind):
    assert check.exercise_1_1(wrong).mistake == kind


def test_slope_accumulated_over_calls():
    x = vg.tensor(0.0, requires_grad=True)

    def slope_at(x0):
        with vg.no_grad():
            x.copy_(vg.tensor(x0))
        (x ** 3 - 2 * x).backward()
        return x.grad.item()
    assert check.exercise_0_2(slope_at).mistake == "accumulated"


def test_tensor_that_does_not_require_grad():
    assert check.exercise_0_1(lambda: vg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).mistake == "requires-grad"
    assert check.exercise_0_1(lambda: vg.tensor([[1, 2, 3], [4, 5, 6]], requires_grad=True)).mistake == "dtype"
    assert check.exercise_0_1(lambda: np.ones((2, 3))).mistake == "not-a-tensor"


def test_intermediate_gradient_without_retain_grad():
    def hidden_grad(a, b, c):
        h = a * b
        ((h + c) ** 2).sum().backward()
        return h.grad
    assert check.exercise_1_3(hidden_grad).mistake == "retain-grad"


def test_broadcast_shape_aligned_from_the_left_and_clashes_accepted():
    def left(a, b):
        n = max(len(a), len(b))
        a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
        return tuple(max(x, y) for x, y in zip(a, b))
    assert check.exercise_2_1(left).mistake == "align-left"

    def lenient(a, b):
        return tuple(np.broadcast_shapes(a, b)) if _broadcastable(a, b) else (0,)
    assert check.exercise_2_1(lenient).mistake == "incompatible"


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def test_center_rows_without_keepdim():
    assert check.exercise_2_3(lambda x: x - x.mean(dim=1)).mistake == "keepdim"


def test_loss_with_labels_broadcast_against_logits():
    def bce(logits, y):
        return (logits.relu() - logits * y + (-logits.abs()).exp().log1p()).mean()
    assert check.exercise_4_2(bce).mistake == "broadcast"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_loss_that_overflows_for_large_logits():
    def bce(logits, y):
        y = y.reshape(logits.shape)
        p = logits.sigmoid()
        return -(y * p.log() + (1 - y) * (1 - p).log()).mean()
    assert check.exercise_4_2(bce).mistake == "unstable"


def test_gradient_step_without_clearing_or_out_of_place():
    def no_clear(params, lr):
        with vg.no_grad():
            for p in params.values():
                p -= lr * p.grad
    assert check.exercise_4_3(no_clear).mistake == "no-zero-grad"

    def rebinds(params, lr):
        for name in list(params):
            params[name] = params[name] - lr * params[name].grad
    assert check.exercise_4_3(rebinds).mistake == "not-in-place"

    def outside_no_grad(params, lr):
        for p in params.values():
            p -= lr * p.grad
    assert check.exercise_4_3(outside_no_grad).mistake == "no-grad"


def test_forward_with_the_wrong_activation_or_a_transposed_weight():
    def relu_forward(params, X):
        return (X @ params["W1"] + params["b1"]).relu() @ params["W2"] + params["b2"]
    assert check.exercise_4_1(relu_forward).mistake == "activation"

    def transposed(params, X):
        return (X @ params["W1"].T + params["b1"]).tanh() @ params["W2"] + params["b2"]
    assert check.exercise_4_1(transposed).mistake == "shape"


def test_training_that_does_not_learn():
    def train(params, X, y, steps=5, lr=0.5):
        return [0.7] * steps
    assert check.exercise_4_4(train).mistake == "no-progress"


# --- the runner never raises ------------------------------------------------------------------------
def test_an_exception_in_learner_code_quotes_the_learners_line():
    def grads_by_hand(x, y):
        return 1 / 0, 0.0
    result = check.exercise_1_1(grads_by_hand)
    assert result.status == "error" and result.mistake == "exception"
    assert "ZeroDivisionError" in result.message and "return 1 / 0, 0.0" in result.message


def test_calling_a_check_with_the_wrong_number_of_arguments():
    result = check.exercise_1_1()
    assert result.status == "error" and result.mistake == "usage"
    assert "`grads_by_hand`" in result.message


def test_a_bug_in_a_checker_is_reported_not_raised():
    @framework.exercise("99.1", "a broken checker", lesson="99", solution="lesson99:nothing")
    def broken(answer):
        return {}["missing"]
    try:
        result = check.exercise_99_1(lambda: None)
        assert result.status == "error" and result.mistake == "checker-bug"
        assert "bug in vizgrad's lessons" in result.message
    finally:
        del EXERCISES["99.1"]


def test_exercise_ids_are_validated_and_unique():
    with pytest.raises(ValueError):
        framework.exercise("one", "t", lesson="01", solution="x:y")
    with pytest.raises(ValueError):
        framework.exercise("1.1", "again", lesson="01", solution="x:y")(lambda f: None)


# --- rendering ------------------------------------------------------------------------------------------
def test_result_renders_as_html_markdown_and_text():
    result = check.exercise_2_2(lambda grad, shape: grad)
    page = result._repr_html_()
    assert "vizgrad-check-failed" in page and "Hint:" in page and "<code" in page
    assert result._repr_markdown_().startswith("**")
    text = str(result)
    assert text.startswith("✘ Exercise 2.2") and "Hint:" in text
    assert repr(result) == text
    passed = EXERCISES["2.2"](*solution("2.2"))
    assert "vizgrad-check-passed" in passed._repr_html_() and "<li>" in passed._repr_html_()


def test_learner_text_is_escaped_in_html():
    def grads_by_hand(x, y):
        raise ValueError("<script>alert(1)</script>")
    page = check.exercise_1_1(grads_by_hand)._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_graph_figure_without_graphviz_falls_back(monkeypatch):
    from vizgrad.render import svg
    monkeypatch.setattr(svg, "layout_svg", _no_layout)
    result = check.exercise_3_4(_forgetful_add())
    page = result._repr_html_()
    assert "<iframe" in page or "<pre>" in page
    assert result.figure.svg() is None
    assert "first wrong gradient" in result.figure.text()


def _no_layout(dot_source):
    from vizgrad.render.svg import LayoutUnavailable
    raise LayoutUnavailable("no Graphviz in this test")


def _forgetful_add():
    class AddBias(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad
    return AddBias


def test_check_namespace_lists_and_completes():
    names = dir(check)
    assert "exercise_3_2" in names and "list" in names
    listing = check.list()
    assert [e.id for e in listing] == ALL_IDS
    assert "check.exercise_1_1" in str(listing) and "| 3.2 |" in listing._repr_markdown_()
    with pytest.raises(AttributeError, match="the exercises are"):
        check.exercise_42_1


# --- the tools behind the checkers ---------------------------------------------------------------------
def test_find_wrong_nodes_on_correct_and_builtin_graphs():
    x = vg.tensor([0.3, -1.2, 2.0], requires_grad=True, name="x")
    assert "No custom Function" in find_wrong_nodes(lambda x: x.tanh().sum(), x).summary()
    cube = solution("3.2")[0]
    report = find_wrong_nodes(lambda x: (cube.apply(x) * x).sum(), x)
    assert report.ok and report.figure.highlight == []
    assert "agree" in report.summary()


def test_find_wrong_nodes_orders_wrong_nodes_backward():
    x = vg.tensor([0.3, -1.2, 2.0], requires_grad=True, name="x")
    bad = _forgetful_add()
    b = vg.tensor([0.1, 0.2, 0.3], requires_grad=True, name="b")
    report = find_wrong_nodes(lambda x, b: bad.apply(bad.apply(x.reshape(1, 3).expand(2, 3), b), b).sum(), x, b)
    assert len(report.wrong) == 2
    first, second = report.wrong
    assert int(first.node_id[1:]) > int(second.node_id[1:])   # the later node is met first going backward
    assert "first, going backward" in report.summary()
    assert report._repr_html_()


@pytest.mark.parametrize("build", [
    lambda v: (v["x"] * v["y"] + v["x"]).tanh(),
    lambda v: v["x"] * v["x"] + v["x"] * v["y"] - v["y"] / v["x"],
    lambda v: (v["x"].exp() + v["y"].sin() * v["y"].cos()) ** 2,
    lambda v: (v["x"] - 3.0).relu() + (2.0 * v["y"]).log() + 1.0 / v["x"],
])
def test_hand_built_scalars_agree_with_the_engine(build):
    from vizgrad.lessons.exercises_early import _reference_backward
    values = {"x": 0.7, "y": 1.3}
    scalars = {k: Scalar(v, k) for k, v in values.items()}
    out = build(scalars)
    _reference_backward(out)
    tensors = {k: vg.tensor(v, dtype=vg.float64, requires_grad=True) for k, v in values.items()}
    expected = build(tensors)
    expected.backward()
    assert math.isclose(out.value, expected.item(), rel_tol=1e-9)
    for name in values:
        assert math.isclose(scalars[name].grad, tensors[name].grad.item(), rel_tol=1e-9, abs_tol=1e-12)


def test_scalar_graph_picture_and_topological_order():
    x = Scalar(2.0, "x")
    y = x * x + 1
    order = y.topological_order()
    assert order[-1] is y and order[0] is x and len(order) == 4
    page = y._repr_html_()
    assert "local 2" in y.draw().dot() and page
    assert "grad" not in y.draw().dot()            # no gradients yet, so none drawn
    assert repr(x).startswith("Scalar(x, value=2")


def test_loss_curve_and_decision_boundary_render():
    curve = LossCurve([1.0, 0.5, float("nan"), 0.25])
    assert curve._repr_svg_().startswith("<svg") and "polyline" in curve._repr_svg_()
    assert "4 steps" in repr(curve)
    X, y = vg.data.make_moons(20, noise=0.1, seed=0)
    boundary = DecisionBoundary(lambda p: p[:, :1] - 0.5, X, y, title="t")
    page = boundary._repr_html_()
    assert page.count("<circle") == 20 and "data:image/png;base64," in page
    assert "<image" not in DecisionBoundary(None, X, y)._repr_html_()
