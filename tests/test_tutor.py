"""vizgrad.tutor.compare and check_function: how they are called, what the report says and
draws (the corpus of mistakes is tests/test_tutor_corpus.py)."""

from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import tutor
from vizgrad.errors import ArgumentError, ArgumentTypeError, BackwardError


def _mlp():
    rng = np.random.default_rng(0)
    x = vg.tensor(rng.standard_normal((5, 3)))
    W = vg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = vg.tensor(rng.standard_normal(4), requires_grad=True)
    h = x @ W + b
    a = h.tanh()
    loss = (a * a).mean()
    return x, W, b, h, a, loss


def _right(x, a, h):
    da = 2 * a.detach().numpy() / a.numel()
    dh = da * (1 - a.detach().numpy() ** 2)
    return da, dh, x.numpy().T @ dh, dh.sum(0)


def test_right_gradients_pass_by_name_and_report_every_tensor_in_backward_order():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    report = tutor.compare(loss, {"W": dW, "b": db, "h": dh, "a": da})
    assert report.ok and bool(report)
    assert report.first_wrong is None and report.kind is None
    assert [r.name for r in report.rows] == ["a", "h", "b", "W"]
    assert all(r.status in ("exact", "approximate") for r in report.rows)
    assert "All 4 gradients agree" in report.message


def test_keys_may_be_tensors_or_d_names_and_gradients_tensors():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    report = tutor.compare(loss, {W: vg.tensor(dW), "db": db, "dh": vg.tensor(dh)})
    assert report.ok
    assert [r.name for r in report.rows] == ["h", "b", "W"]


def test_first_wrong_is_the_earliest_in_backward_order_and_later_ones_are_mentioned():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    wrong_dh = -dh
    report = tutor.compare(loss, {"W": x.numpy().T @ wrong_dh, "h": wrong_dh, "a": da})
    assert (report.first_wrong, report.kind) == ("h", "wrong_sign")
    assert [r.ok for r in report.rows] == [True, False, False]
    assert "`W` is wrong too" in report.message


def test_report_prints_plain_text_with_the_cmp_table_and_the_marked_graph():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    text = str(tutor.compare(loss, {"a": da, "b": dh}))
    assert text.startswith("vizgrad.tutor.compare: wrong")
    assert "`" not in text
    assert "b    (4,) WRONG (missing_broadcast_sum)" in text
    assert "yours    (5, 4):" in text and "expected (4,):" in text
    marked = [line for line in text.splitlines() if "<--" in line]
    assert len(marked) == 1 and marked[0].strip().startswith("n") and " b (4,)" in marked[0]


def test_report_html_draws_the_node_red_and_the_gradients_element_by_element():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    report = tutor.compare(loss, {"a": da, "h": dh * 3})
    assert report.kind == "scaled"
    page = report._repr_html_()
    assert "vizgrad.tutor.compare: wrong" in page and "wrong: scaled" in page
    assert "<b>yours</b> (5, 4)" in page and "<b>expected</b> (5, 4)" in page
    assert page.count("color:#c62828;font-weight:600") == 2 * 20      # every element of both grids is off
    assert report.graph.node(report.highlight).label == "h"
    figure = report._figure()
    assert figure.highlight == [report.highlight] and figure.note == "scaled"
    assert 'color="#d62728"' in figure.dot()


def test_graph_freed_by_backward_uses_the_kept_gradients():
    x, W, b, h, a, loss = _mlp()
    h.retain_grad()
    loss.backward()
    da, dh, dW, db = _right(x, a, h)
    assert tutor.compare(loss, {"W": dW, "h": dh}).ok
    report = tutor.compare(loss, {"W": dW.T, "h": dh})
    assert (report.first_wrong, report.kind) == ("W", "transposed")
    with pytest.raises(BackwardError, match="tutor.compare: .*kept no .grad.*retain_grad"):
        tutor.compare(loss, {"a": da})


def test_compare_leaves_grads_untouched():
    x, W, b, h, a, loss = _mlp()
    da, dh, dW, db = _right(x, a, h)
    tutor.compare(loss, {"W": dW})
    assert W.grad is None and b.grad is None
    assert loss.grad_fn.last_pass is None        # compare's own pass is not taken for the user's backward()
    assert vg.explain_grad(W, loss).reason == "backward_not_called"
    loss.backward()                      # the graph is still there
    np.testing.assert_allclose(W.grad.numpy(), dW, rtol=1e-6)


def test_mistakes_in_the_call_are_explained():
    x, W, b, h, a, loss = _mlp()
    with pytest.raises(ArgumentError, match=r"tutor.compare: no tensor named 'dz' among the variables \(W, a, b, h"):
        tutor.compare(loss, {"dz": 1.0})
    with pytest.raises(ArgumentError, match="tutor.compare: `x` .* is not part of loss's graph.*explain_grad"):
        tutor.compare(loss, {"x": np.zeros((5, 3))})
    with pytest.raises(ArgumentTypeError, match="tutor.compare: grads must be a non-empty dict"):
        tutor.compare(loss, [])
    with pytest.raises(ArgumentTypeError, match="tutor.compare: loss must be a Tensor"):
        tutor.compare(3.0, {"W": 1.0})
    with pytest.raises(vg.ShapeError, match=r"tutor.compare: loss must have one element .* shape \(5, 4\)"):
        tutor.compare(h, {"W": 1.0})
    with pytest.raises(ArgumentTypeError, match="tutor.compare: the gradient given for `W` is a str"):
        tutor.compare(loss, {"W": "zeros"})
    with pytest.raises(ArgumentError, match="tutor.compare: loss does not require grad"):
        tutor.compare(x.sum(), {"W": 1.0})


# --- check_function ------------------------------------------------------------------------------
class Mul(vg.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, (grad * a).sum(0)


class MulNoSum(Mul):
    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


class MulSign(Mul):
    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return -grad * b, (grad * a).sum(0)


class Cube(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 3 * x ** 2              # forgot grad


class Pair(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, grad):
        return grad


def _pair():
    rng = np.random.default_rng(1)
    return vg.tensor(rng.standard_normal((3, 4))), vg.tensor(rng.standard_normal(4))


def test_check_function_passes_a_right_function_and_names_the_inputs_from_the_caller():
    weights, bias = _pair()
    report = tutor.check_function(Mul, weights, bias)
    assert report.ok, str(report)
    assert [r.name for r in report.rows] == ["weights", "bias"]


@pytest.mark.parametrize("function, name, kind", [(MulNoSum, "bias", "missing_broadcast_sum"),
                                                   (MulSign, "weights", "wrong_sign")])
def test_check_function_names_the_input_whose_gradient_is_wrong(function, name, kind):
    weights, bias = _pair()
    report = tutor.check_function(function, weights, bias)
    assert (report.first_wrong, report.kind) == (name, kind)
    assert report.graph.node(report.highlight).label == name
    assert f"{function.__name__}" in report.title


def test_check_function_spots_a_backward_that_ignores_its_upstream_gradient():
    report = tutor.check_function(Cube, np.array([0.5, -1.0, 2.0]), names=["x"])
    assert (report.first_wrong, report.kind) == ("x", "other")
    assert "not multiplied by the gradient arriving from above" in report.message


def test_check_function_reports_the_wrong_number_of_gradients():
    x, y = _pair()
    report = tutor.check_function(Pair, x, x)
    assert not report.ok and report.kind == "other"
    assert "returned 1 gradient, but forward takes 2 inputs (x, x)" in report.message


def test_check_function_refuses_what_is_not_a_function_class():
    with pytest.raises(ArgumentTypeError, match="tutor.check_function: expected a vizgrad.autograd.Function"):
        tutor.check_function(lambda x: x, np.ones(2))


def test_every_kind_is_documented():
    text = (Path(__file__).parent.parent / "docs" / "tutor.md").read_text()
    assert all(f"| `{kind}` |" in text for kind in tutor.KINDS)


def test_compare_on_every_device(backend):
    rng = np.random.default_rng(3)
    x = vg.tensor(rng.standard_normal((5, 3)), device=backend)
    W = vg.tensor(rng.standard_normal((3, 4)), requires_grad=True, device=backend)
    b = vg.tensor(rng.standard_normal(4), requires_grad=True, device=backend)
    h = x @ W + b
    loss = h.tanh().sum()
    dh = 1 - h.tanh().detach().cpu().numpy() ** 2
    report = tutor.compare(loss, {"h": dh, "W": x.cpu().numpy().T @ dh, "b": dh})
    assert (report.first_wrong, report.kind) == ("b", "missing_broadcast_sum")
    swapped = tutor.compare(loss, {"h": 1 - h.detach().cpu().numpy() ** 2})
    assert swapped.kind == "used_output_for_input"      # tanh's 1 - y² written with the input h
    assert tutor.compare(loss, {"h": dh * 1.0}).ok
