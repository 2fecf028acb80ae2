"""Naming what is wrong with one gradient: a learner's array against the right one.

:func:`diagnose` answers None when the two agree, otherwise a :class:`Finding` whose
``kind`` is one of :data:`KINDS` (documented in ``docs/tutor.md``), with a message that
says what is wrong in the learner's terms and a hint that says how to fix it. What only
the graph knows (the contributions of each use of a tensor, a local derivative written
with the op's output instead of its input) comes in as ``alternatives``: known wrong
answers, each with its kind, tried before the generic checks.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .numeric import ATOL, RTOL, broadcast_axes, close, preview, sum_to

#: The kinds of mistake the tutor names, in the order docs/tutor.md explains them.
KINDS = ("wrong_sign", "missing_broadcast_sum", "transposed", "wrong_shape", "scaled", "not_accumulated",
         "used_output_for_input", "nan", "other")


@dataclass
class Finding:
    """What is wrong with one gradient: ``kind`` (one of :data:`KINDS`), ``message`` and ``hint``."""

    kind: str
    message: str
    hint: Optional[str] = None
    details: list = field(default_factory=list)


@dataclass
class Alternative:
    """A wrong answer the graph predicts for this tensor: if the learner's gradient equals
    ``array``, the mistake is ``kind``, explained by ``message`` and ``hint``."""

    kind: str
    array: np.ndarray
    message: str
    hint: Optional[str] = None


def side_by_side(got, expected):
    return [f"yours: `{preview(got)}`", f"expected: `{preview(expected)}`"]


def diagnose(got, expected, name, alternatives=(), sizes=(), rtol=RTOL, atol=ATOL, what="gradient"):
    """None when ``got`` matches ``expected`` (the gradient of the tensor the learner calls
    ``name``); otherwise a :class:`Finding`.

    Args:
        got, expected: arrays (``expected`` has the tensor's shape).
        alternatives: :class:`Alternative` answers predicted from the graph, tried in order.
        sizes: the dimensions of the shapes in the graph, to name a missing ``1/N``.
        what: what the array is, in the messages ("gradient"; a lesson checking a slope says "value").
    """
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        return _shape_mistake(got, expected, name, rtol, atol, what)
    details = side_by_side(got, expected)
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(expected)):
        bad = int(np.sum(~np.isfinite(got)))
        return Finding("nan", f"The {what} for `{name}` contains NaN or inf ({bad} of {got.size} elements), "
                              "where the right one is finite everywhere.",
                       "Look for a division by zero, a log or sqrt of a non-positive number, or an exp that "
                       "overflowed (softmax: subtract the row's maximum first).", details)
    if close(got, expected, rtol, atol):
        return None
    for alternative in alternatives:
        if alternative.array is not None and close(got, alternative.array, rtol, atol):
            return Finding(alternative.kind, alternative.message, alternative.hint, details)
    if close(got, -expected, rtol, atol):
        return Finding("wrong_sign", f"The {what} for `{name}` has the wrong sign: every element is the negative "
                                     "of the right one.",
                       "Check the sign of each local derivative: d/dx (a - x) = -1, d/dx cos(x) = -sin(x), "
                       "d/dx 1/x = -1/x².", details)
    if got.ndim >= 2 and got.shape[-1] == got.shape[-2]:
        flipped = np.swapaxes(expected, -1, -2)
        if not close(expected, flipped, rtol, atol) and close(got, flipped, rtol, atol):
            return Finding("transposed", f"The {what} for `{name}` is the transpose of the right one.",
                           _MATMUL_HINT, details)
    scaled = _scale_mistake(got, expected, name, sizes, rtol, atol, what)
    if scaled is not None:
        scaled.details = details
        return scaled
    return _other(got, expected, name, details, atol, what)


_MATMUL_HINT = ("For `C = A @ B`: `dA = dC @ B.T` (the shape of A) and `dB = A.T @ dC` (the shape of B). Check "
                "each product's shape: (m, k) @ (k, n) gives (m, n).")


def _shape_mistake(got, expected, name, rtol, atol, what):
    shapes = f"has shape {tuple(got.shape)}, but `{name}` has shape {tuple(expected.shape)}"
    axes = broadcast_axes(got.shape, expected.shape)
    if axes:
        dims = axes[0] if len(axes) == 1 else axes
        lead = got.ndim - expected.ndim
        keep = any(i >= lead and expected.shape[i - lead] == 1 for i in axes)
        how = f"`.sum({dims}{', keepdim=True' if keep else ''})`"
        summed = diagnose(sum_to(got, expected.shape), expected, name, rtol=rtol, atol=atol, what=what)
        return Finding("missing_broadcast_sum",
                       f"The {what} for `{name}` {shapes}: `{name}` was broadcast along dimension"
                       f"{'s' if len(axes) > 1 else ''} {dims} in the forward pass, and its gradient was not summed "
                       "back." + (" Summed, it would be right." if summed is None else
                                  f" Even summed, the values would still be off ({summed.kind}): "
                                  + summed.message),
                       "A broadcast tensor is used once per copy, so its gradient is the sum of the copies' "
                       f"gradients: {how}. A gradient always has its tensor's shape.")
    if got.ndim >= 2 and got.shape[:-2] + got.shape[-2:][::-1] == expected.shape:
        values_ok = close(np.swapaxes(got, -1, -2), expected, rtol, atol)
        return Finding("transposed", f"The {what} for `{name}` {shapes}: the transpose of it."
                       + (" Transposed, it would be right." if values_ok else ""), _MATMUL_HINT)
    if got.size == expected.size and close(got.reshape(expected.shape), expected, rtol, atol):
        return Finding("wrong_shape", f"The {what} for `{name}` {shapes}. The values are right; only the shape "
                                      "is off.",
                       "Keep the summed dimensions (`keepdim=True`) or `.reshape` it to the tensor's shape: a "
                       "gradient always has exactly its tensor's shape.")
    return Finding("wrong_shape", f"The {what} for `{name}` {shapes}.",
                   "A gradient always has exactly its tensor's shape: write down each factor's shape and check "
                   "that the product has the shape of the tensor.")


def _scale_mistake(got, expected, name, sizes, rtol, atol, what):
    """A :class:`Finding` when ``got`` is a constant multiple of ``expected``, else None."""
    mask = np.abs(expected) > max(atol, 1e-12)
    if not mask.any():
        return None
    ratios = got[mask] / expected[mask]
    factor = float(np.median(ratios))
    if not np.isfinite(factor) or abs(factor) < 1e-12 or not close(got, factor * expected, rtol * 10, atol):
        return None
    message = f"The {what} for `{name}` is {factor:.4g} times the right one."
    hint = "A constant factor is off: a missing or extra 2 (the derivative of a square), or a mean written as a sum?"
    for size in sorted(set(int(s) for s in sizes if s > 1), reverse=True):
        if np.isclose(factor, size, rtol=1e-3):
            message += f" {size} is a size in this graph: a division by {size} is missing."
            hint = f"Is there a mean over {size} elements in the forward pass? Its derivative carries 1/{size}."
            break
        if np.isclose(factor, 1 / size, rtol=1e-3):
            message += f" {size} is a size in this graph: it was divided by {size} once too often."
            hint = f"Divide by {size} once only: where the forward pass takes the mean, not again after it."
            break
    else:
        bessel = next((n for n in sorted(sizes) if n > 2 and (np.isclose(factor, (n - 1) / n, rtol=1e-4)
                                                            or np.isclose(factor, n / (n - 1), rtol=1e-4))), None)
        if bessel is not None:
            used, right = (bessel, bessel - 1) if factor < 1 else (bessel - 1, bessel)
            message += f" Yours divides by {used} where the forward pass divides by {right}."
            hint = (f"A variance divides by n - 1 = {bessel - 1} (unbiased: `var()`, batch norm's training "
                    f"statistics) or by n = {bessel} (biased: layer norm): use the forward pass's choice.")
        elif np.isclose(abs(factor), 2, rtol=1e-3) or np.isclose(abs(factor), 0.5, rtol=1e-3):
            hint = ("A factor 2 is off: d/dx x² = 2x; and a tensor used twice in one op (`x * x`) gets a "
                    "gradient from each use.")
    if factor < 0:
        hint += " The sign is flipped too."
    return Finding("scaled", message, hint)


def _other(got, expected, name, details, atol, what):
    difference = np.abs(got - expected)
    worst = np.unravel_index(int(np.argmax(difference)), got.shape) if got.ndim else ()
    wrong = int(np.sum(difference > atol + RTOL * np.abs(expected)))
    where = f" at index {tuple(int(i) for i in worst)}" if got.ndim else ""
    message = (f"The {what} for `{name}` has the right shape but wrong values in {wrong} of {got.size} elements "
               f"(the largest difference{where}: {float(got[worst]):.5g} instead of {float(expected[worst]):.5g}).")
    if np.all(np.abs(got) <= atol):
        message = f"The {what} for `{name}` is all zeros; the right one is not."
        hint = "Is the gradient computed but never stored, or multiplied by a mask that is all zeros?"
    elif wrong < got.size:
        hint = ("Only some elements are off: look at what is special about them (a mask such as relu's or max's, "
                "a diagonal, the target class of a cross-entropy, an index used twice).")
    else:
        hint = "Write the local derivative on paper first, then translate it term by term."
    return Finding("other", message, hint, details)
