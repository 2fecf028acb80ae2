"""Gradient-flow diagnostics: which layers' gradients vanish or explode.

:func:`grad_flow` reads the ``.grad`` of every parameter of a model after a backward
pass and flags layers whose gradients are tiny or huge. The thresholds are on the
root-mean-square gradient of each parameter:

* vanishing: RMS below ``vanishing`` (default 1e-7), or below ``relative`` (default
  1e-3) times the largest RMS in the model;
* exploding: RMS above ``exploding`` (default 1e3), or any NaN/inf.

Example::

    loss.backward()
    for row in vizgrad.diagnostics.grad_flow(model):
        print(row.name, row.grad_rms, row.status)
"""

import math
from dataclasses import dataclass

import numpy as np

VANISHING = 1e-7
EXPLODING = 1e3
RELATIVE = 1e-3


@dataclass(frozen=True)
class LayerGrad:
    """Gradient statistics of one parameter."""

    name: str
    shape: tuple
    grad_rms: float
    grad_max: float
    param_rms: float
    ratio: float          # grad RMS / param RMS
    status: str           # "ok", "vanishing", "exploding", "no grad"


def _rms_and_max(tensor):
    values = np.asarray(tensor._backend().to_numpy(tensor._array), dtype=np.float64)
    if values.size == 0:
        return 0.0, 0.0
    if not np.all(np.isfinite(values)):
        return math.inf, math.inf
    return float(np.sqrt(np.mean(values * values))), float(np.max(np.abs(values)))


def grad_flow(model, vanishing=VANISHING, exploding=EXPLODING, relative=RELATIVE):
    """Per-parameter gradient statistics in module order, each flagged (see the module docstring)."""
    rows = []
    for position, (name, param) in enumerate(model.named_parameters()):
        param_rms, _ = _rms_and_max(param)
        if param.grad is None:
            rows.append([name, tuple(param.shape), math.nan, math.nan, param_rms, math.nan, "no grad"])
            continue
        grad_rms, grad_max = _rms_and_max(param.grad)
        ratio = grad_rms / param_rms if param_rms else math.inf
        rows.append([name, tuple(param.shape), grad_rms, grad_max, param_rms, ratio, "ok"])
    finite = [row[2] for row in rows if math.isfinite(row[2])]
    largest = max(finite, default=0.0)
    for row in rows:
        if row[6] == "no grad":
            continue
        rms = row[2]
        if not math.isfinite(rms) or rms > exploding:
            row[6] = "exploding"
        elif rms < vanishing or (largest > 0 and rms < relative * largest):
            row[6] = "vanishing"
    return [LayerGrad(*row) for row in rows]


def plot_grad_flow(model_or_rows, ax=None, **thresholds):
    """Bar chart (log scale) of each parameter's gradient RMS, vanishing layers in blue and
    exploding ones in red, with the thresholds drawn. Needs Matplotlib (``vizgrad[plot]``).
    Returns the Matplotlib axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_grad_flow needs Matplotlib: pip install 'vizgrad[plot]'") from None
    rows = model_or_rows if isinstance(model_or_rows, list) else grad_flow(model_or_rows, **thresholds)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4, 0.5 * len(rows)), 3))
    colours = {"ok": "#4c72b0", "vanishing": "#74add1", "exploding": "#d62728", "no grad": "#bdbdbd"}
    heights = [row.grad_rms if math.isfinite(row.grad_rms) and row.grad_rms > 0 else VANISHING / 10 for row in rows]
    ax.bar(range(len(rows)), heights, color=[colours[row.status] for row in rows])
    ax.set_yscale("log")
    ax.axhline(thresholds.get("vanishing", VANISHING), color="#74add1", linestyle="--", linewidth=1)
    ax.axhline(thresholds.get("exploding", EXPLODING), color="#d62728", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([row.name for row in rows], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("gradient RMS")
    ax.set_title("gradient flow")
    return ax
