"""Gradient-flow diagnostics: vanishing and exploding layers flagged by the documented thresholds."""

import math
import sys

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import diagnostics

X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def rms(values):
    values = np.asarray(values, np.float64)
    return float(np.sqrt(np.mean(values ** 2)))


class Chain(vg.nn.Module):
    """y = c·(b·(a·x)) elementwise, plus a branch d whose gradient is huge and a parameter e
    that the loss does not use. ``b`` is scaled by 1e-9: the gradients of the layer below it
    (a) and above it (c, whose input it shrinks) vanish; b's own gradient does not."""

    def __init__(self):
        super().__init__()
        self.a = vg.nn.Parameter(vg.full((4,), 3.0))
        self.b = vg.nn.Parameter(vg.full((4,), 1e-9))
        self.c = vg.nn.Parameter(vg.full((4,), 3.0))
        self.d = vg.nn.Parameter(vg.ones(4))
        self.e = vg.nn.Parameter(vg.ones(2))

    def forward(self, x):
        return (self.c * (self.b * (self.a * x))).sum() + 2000 * (self.d * x).sum()


def expected_status(grad_rms, largest, vanishing=1e-7, exploding=1e3, relative=1e-3):
    """The module docstring's rules, written out independently."""
    if not math.isfinite(grad_rms) or grad_rms > exploding:
        return "exploding"
    if grad_rms < vanishing or grad_rms < relative * largest:
        return "vanishing"
    return "ok"


def test_grad_flow_flags_vanishing_exploding_and_missing_gradients():
    model = Chain()
    model(vg.tensor(X)).backward()
    rows = diagnostics.grad_flow(model)
    assert [r.name for r in rows] == ["a", "b", "c", "d", "e"]
    assert {r.name: r.status for r in rows} == {"a": "vanishing", "b": "ok", "c": "vanishing", "d": "exploding",
                                                "e": "no grad"}
    expected_rms = {"a": rms(3.0 * 1e-9 * X), "b": rms(9.0 * X), "c": rms(3.0 * 1e-9 * X), "d": rms(2000 * X)}
    largest = max(expected_rms.values())
    for row in rows[:4]:
        assert row.grad_rms == pytest.approx(expected_rms[row.name], rel=1e-5), row.name
        assert row.status == expected_status(row.grad_rms, largest), row.name
        assert row.shape == (4,)
        param = getattr(model, row.name).detach().numpy()
        assert row.param_rms == pytest.approx(rms(param), rel=1e-6)
        assert row.ratio == pytest.approx(row.grad_rms / row.param_rms, rel=1e-6)
        assert row.grad_max == pytest.approx(float(np.abs(getattr(model, row.name).grad.numpy()).max()), rel=1e-6)
    assert rows[1].grad_max == pytest.approx(36.0)
    missing = rows[4]
    assert math.isnan(missing.grad_rms) and math.isnan(missing.ratio) and missing.param_rms == 1.0


def test_relative_threshold_flags_a_layer_far_below_the_largest():
    model = Chain()
    with vg.no_grad():
        model.b.fill_(1e-5)          # a and c now get 3e-5·x: above 1e-7, below 1e-3 × b's 9·x
        model.d.fill_(0.0)
    (model.c * (model.b * (model.a * vg.tensor(X)))).sum().backward()
    rows = {r.name: r for r in diagnostics.grad_flow(model)}
    assert rows["a"].grad_rms > diagnostics.VANISHING
    assert rows["a"].grad_rms < diagnostics.RELATIVE * rows["b"].grad_rms
    assert rows["a"].status == "vanishing" and rows["b"].status == "ok"
    # with the relative rule switched off, only the absolute thresholds apply
    relaxed = {r.name: r.status for r in diagnostics.grad_flow(model, relative=0.0)}
    assert relaxed["a"] == "ok" and relaxed["c"] == "ok" and relaxed["d"] == "no grad"


def test_custom_thresholds_and_non_finite_gradients():
    model = Chain()
    model.a.grad = vg.tensor([1.0, math.nan, 0.0, 0.0])
    model.b.grad = vg.full((4,), 50.0)
    model.c.grad = vg.full((4,), 1e-3)
    model.d.grad = vg.tensor([math.inf, 0.0, 0.0, 0.0])
    rows = {r.name: r for r in diagnostics.grad_flow(model, vanishing=1e-2, exploding=10.0)}
    assert rows["a"].status == "exploding" and rows["a"].grad_rms == math.inf
    assert rows["d"].status == "exploding"
    assert rows["b"].status == "exploding" and rows["b"].grad_rms == pytest.approx(50.0)
    assert rows["c"].status == "vanishing"
    assert rows["e"].status == "no grad"
    defaults = {r.name: r.status for r in diagnostics.grad_flow(model)}
    # non-finite gradients do not set the relative scale: the largest finite RMS is b's 50, and
    # c's 1e-3 is below 1e-3 × 50
    assert defaults["b"] == "ok" and defaults["c"] == "vanishing"


def test_a_model_without_any_gradient():
    rows = diagnostics.grad_flow(Chain())
    assert [r.status for r in rows] == ["no grad"] * 5


def test_plot_grad_flow_returns_axes():
    pytest.importorskip("matplotlib", reason="matplotlib is not installed; plot_grad_flow is optional")
    import matplotlib
    matplotlib.use("Agg")
    model = Chain()
    model(vg.tensor(X)).backward()
    ax = diagnostics.plot_grad_flow(model)
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c", "d", "e"]
    assert len(ax.patches) == 5
    rows = diagnostics.grad_flow(model)
    assert diagnostics.plot_grad_flow(rows, ax=ax) is ax


def test_plot_grad_flow_without_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    model = Chain()
    with pytest.raises(ImportError, match=r"plot_grad_flow needs Matplotlib: pip install 'vizgrad\[plot\]'"):
        diagnostics.plot_grad_flow(model)
