"""vizgrad.explain_grad and Tensor.explain_grad: why a tensor's .grad is what it is."""

from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import ArgumentTypeError
from vizgrad.tutor import REASONS


def _leaves():
    x = vg.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    w = vg.tensor([[0.5], [-1.0]], requires_grad=True)
    return x, w


def test_ok_after_one_backward_pass_with_the_path_drawn():
    x, w = _leaves()
    h = x @ w
    loss = h.tanh().sum()
    loss.backward()
    explanation = vg.explain_grad(w, loss)
    assert explanation.reason == "ok"
    assert "`w.grad` holds the gradient of `loss` from one backward pass, shape (2, 1)" in explanation.message
    labels = [explanation.graph.node(node_id).label for node_id in explanation.path]
    assert labels[0] == "w" and labels[-1] == "loss" and "h" in labels and "x" not in labels
    assert explanation.fix is None


def test_not_leaf_suggests_retain_grad():
    x, w = _leaves()
    h = x @ w
    loss = h.relu().sum()
    loss.backward()
    explanation = h.explain_grad()
    assert explanation.reason == "not_leaf"
    assert "output of MmBackward0" in explanation.message
    assert "h.retain_grad()" in explanation.fix
    h2 = x @ w
    h2.retain_grad()
    (h2 * 2).sum().backward()
    assert h2.explain_grad().reason == "ok"


def test_requires_grad_false_for_a_plain_tensor_and_an_integer_one():
    c = vg.tensor([1.0, 2.0])
    explanation = vg.explain_grad(c)
    assert explanation.reason == "requires_grad_false"
    assert "c.requires_grad_()" in explanation.fix
    counts = vg.tensor([1, 2])
    assert "dtype is int64" in vg.explain_grad(counts).message


def test_created_under_no_grad_quotes_the_line():
    x, w = _leaves()
    with vg.no_grad():
        z = x * 2
    explanation = z.explain_grad()
    assert explanation.reason == "created_under_no_grad"
    assert "`z = x * 2`" in explanation.message


def test_detached_names_what_it_was_cut_from():
    x, w = _leaves()
    d = (x @ w).detach()
    explanation = d.explain_grad()
    assert explanation.reason == "detached"
    assert "`d = (x @ w).detach()`" in explanation.message and "`x @ w`" in explanation.fix


def test_detached_found_by_shared_memory_when_the_code_says_nothing():
    x, w = _leaves()
    k = x @ w
    namespace = {"k": k, "kd": k.detach()}
    explanation = vg.explain_grad(namespace["kd"], names=namespace)
    assert explanation.reason == "detached"
    assert "shares its memory with `k`, the output of MmBackward0" in explanation.message


def test_a_leaf_behind_a_detach_is_cut_from_the_loss():
    x, w = _leaves()
    h = (x @ w).detach()
    loss = (h * 3 + x.sum()).sum()
    loss.backward()
    explanation = vg.explain_grad(w, loss)
    assert explanation.reason == "detached"
    assert explanation.cut == "h = (x @ w).detach()"
    assert "the path was cut by `.detach()`" in explanation.message
    assert "without `.detach()`" in explanation.fix
    assert explanation._figure().note == "cut: h = (x @ w).detach()"


def test_a_leaf_behind_a_no_grad_block_is_cut_from_the_loss():
    x, w = _leaves()
    with vg.no_grad():
        h = x @ w
    loss = (h * x).sum()
    assert vg.explain_grad(w, loss).reason == "created_under_no_grad"


def test_not_used_by_loss():
    x, w = _leaves()
    v = vg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x @ w).sum()
    assert vg.explain_grad(v, loss).reason == "not_used_by_loss"
    assert vg.explain_grad(v).reason == "not_used_by_loss"      # used by nothing at all


def test_backward_not_called():
    x, w = _leaves()
    loss = (x @ w).sum()
    explanation = w.explain_grad(loss)
    assert explanation.reason == "backward_not_called"
    assert "loss.backward()" in explanation.fix


def test_accumulated_counts_the_passes_and_zero_grad_resets():
    x, w = _leaves()
    for _ in range(3):
        loss = (x @ w).sum()
        loss.backward()
    explanation = w.explain_grad()
    assert explanation.reason == "accumulated"
    assert "the sum of 3 backward passes" in explanation.message
    w.grad = None
    loss = (x @ w).sum()
    loss.backward()
    assert w.explain_grad().reason == "ok"


def test_accumulated_seen_against_the_loss_when_the_graph_is_still_there():
    x, w = _leaves()
    (x @ w).sum().backward()               # a pass whose graph is gone: w.grad still counts it
    loss = (x @ w).sum()
    loss.backward(retain_graph=True)
    explanation = w.explain_grad(loss)
    assert explanation.reason == "accumulated"
    assert "is the sum of 2 backward passes" in explanation.message


def test_grad_left_by_earlier_passes_before_this_backward():
    x, w = _leaves()
    (x @ w).sum().backward()
    loss = (x @ w * 2).sum()
    explanation = w.explain_grad(loss)
    assert explanation.reason == "backward_not_called"
    assert "holds what earlier backward passes left there" in explanation.message


def test_rebound_after_an_update_with_gradients_on():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    w = w - 0.1 * w.grad
    explanation = w.explain_grad()
    assert explanation.reason == "rebound"
    assert "`w = w - 0.1 * w.grad`" in explanation.message
    assert "with vizgrad.no_grad(): w -= lr * w.grad" in explanation.fix


def test_explanations_print_plainly_and_draw_in_notebooks():
    x, w = _leaves()
    h = x @ w
    loss = h.sum()
    text = str(h.explain_grad(loss))
    assert text.startswith("h.grad: not_leaf\n") and "`" not in text and "<-- not_leaf" in text
    page = h.explain_grad(loss)._repr_html_()
    assert "<code>h.grad</code>: not_leaf" in page and "<b>Fix:</b>" in page


def test_every_reason_is_documented_and_arguments_are_checked():
    text = (Path(__file__).parent.parent / "docs" / "tutor.md").read_text()
    assert all(f"`{reason}`" in text for reason in REASONS)
    with pytest.raises(ArgumentTypeError, match="explain_grad: tensor must be a Tensor, got ndarray"):
        vg.explain_grad(np.ones(2))


def test_in_ipython_the_cells_run_so_far_are_read():
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_module.InteractiveShell.instance()
    try:
        cells = ["import vizgrad as vg\nx = vg.tensor([1.0, 2.0], requires_grad=True)",
                 "with vg.no_grad():\n    z = x * 2",
                 "d = (x * 3).detach()",
                 "reasons = [z.explain_grad().reason, vg.explain_grad(d).reason, vg.explain_grad(x).reason]"]
        for cell in cells:
            assert shell.run_cell(cell, store_history=True).success
        assert shell.user_ns["reasons"] == ["created_under_no_grad", "detached", "not_used_by_loss"]
    finally:
        shell_module.InteractiveShell.clear_instance()
