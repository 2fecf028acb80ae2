"""``ctc_loss``: connectionist temporal classification, one op with PyTorch's gradient.

The probability of a target sequence summed over every alignment of it (blanks between and
around labels, labels repeated) to the T input steps, by the forward-backward recursions over
the extended target l' = (blank, l1, blank, l2, ..., blank), in log space. The gradient is
PyTorch's: with α and β both counting step t's emission,

    dL/dlog_probs[t, n, c] = exp(lp[t, n, c]) - exp(log Σ_{s: l'_s = c} α_t(s) β_t(s) + L_n - lp[t, n, c]),

which is the gradient of L through a log_softmax (what the log_probs are meant to be).
"""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, IndexingError,
                      not_a_tensor, DeviceError)
from ..tensor import Tensor
from .. import creation
from .activation import log_softmax
from .loss import _check_reduction
from .registry import Sample, register


class CtcLoss(Op):
    @staticmethod
    def forward(ctx, log_probs, labels, input_lengths, target_lengths, blank, reduction, zero_infinity):
        xp = ctx.xp
        steps, batch, classes = log_probs.shape
        width = labels.shape[1]
        ninf = -xp.inf
        emissions = xp.take_along_axis(log_probs, xp.broadcast_to(labels[None, ...], (steps, batch, width)), axis=2)
        position = xp.arange(width, device=log_probs.device)[None, :]
        valid = position < 2 * target_lengths[:, None] + 1                      # (N, S')
        # the skip s-2 -> s: l'_s a label that differs from l'_{s-2}
        shifted = xp.concat([xp.full((batch, 2), blank, dtype=labels.dtype, device=labels.device),
                             labels[:, :-2]], axis=1)
        skip = xp.logical_and(labels != blank, labels != shifted)
        skip_back = xp.concat([skip[:, 2:], xp.zeros((batch, 2), dtype=xp.bool, device=labels.device)], axis=1)
        empty = xp.full((batch, width), ninf, dtype=log_probs.dtype, device=log_probs.device)

        def before(a, k):        # a shifted right by k along s, -inf coming in
            return xp.concat([empty[:, :k], a[:, :-k]], axis=1) if k < width else empty

        def after(a, k):         # a shifted left by k along s
            return xp.concat([a[:, k:], empty[:, :k]], axis=1) if k < width else empty

        alpha = [xp.where(xp.logical_and(position < 2, valid), emissions[0, ...], empty)]
        for t in range(1, steps):
            prev = alpha[-1]
            total = _log_add(xp, prev, before(prev, 1), xp.where(skip, before(prev, 2), empty))
            alpha.append(xp.where(valid, emissions[t, ...] + total, empty))
        alpha = xp.stack(alpha)                                                  # (T, N, S')
        last = xp.maximum(input_lengths - 1, xp.zeros_like(input_lengths))
        at_end = xp.take_along_axis(alpha, xp.broadcast_to(last[None, :, None], (1, batch, width)), axis=0)[0, ...]
        ends = xp.logical_and(position >= 2 * target_lengths[:, None] - 1, valid)
        nll = -_log_sum(xp, xp.where(ends, at_end, empty))                      # (N,)
        if zero_infinity:
            nll_out = xp.where(xp.isinf(nll), xp.zeros_like(nll), nll)
        else:
            nll_out = nll
        ctx.reduction = reduction
        ctx.save_for_backward(log_probs, alpha, nll, labels, input_lengths, target_lengths, skip_back, ends,
                              valid)
        ctx.zero_infinity = zero_infinity
        if reduction == "none":
            return nll_out
        if reduction == "sum":
            return xp.sum(nll_out)
        return xp.mean(nll_out / xp.astype(xp.maximum(target_lengths, xp.ones_like(target_lengths)), nll.dtype))

    @staticmethod
    def backward(ctx, grad):
        log_probs, alpha, nll, labels, input_lengths, target_lengths, skip_back, ends, valid = ctx.saved_tensors
        xp = ctx.xp
        steps, batch, classes = log_probs.shape
        width = labels.shape[1]
        ninf = -xp.inf
        empty = xp.full((batch, width), ninf, dtype=log_probs.dtype, device=log_probs.device)
        emissions = xp.take_along_axis(log_probs, xp.broadcast_to(labels[None, ...], (steps, batch, width)), axis=2)
        last = input_lengths - 1

        def after(a, k):
            return xp.concat([a[:, k:], empty[:, :k]], axis=1) if k < width else empty

        betas = [None] * steps
        nxt = empty
        for t in reversed(range(steps)):
            total = _log_add(xp, nxt, after(nxt, 1), xp.where(skip_back, after(nxt, 2), empty))
            start = xp.where(ends, emissions[t, ...], empty)
            current = xp.where((t == last)[:, None], start,
                               xp.where((t < last)[:, None], xp.where(valid, emissions[t, ...] + total, empty), empty))
            betas[t] = current
            nxt = current
        beta = xp.stack(betas)                                                   # (T, N, S')
        both = alpha + beta
        peak = xp.max(both, axis=2, keepdims=True)
        peak = xp.where(xp.isinf(peak), xp.zeros_like(peak), peak)
        per_class = xp.scatter_add(xp.zeros((steps, batch, classes), dtype=both.dtype, device=both.device), 2,
                                   xp.broadcast_to(labels[None, ...], (steps, batch, width)), xp.exp(both - peak))
        with_floor = xp.where(per_class > 0, per_class, xp.ones_like(per_class))
        log_ab = xp.where(per_class > 0, xp.log(with_floor) + peak, xp.full_like(per_class, ninf))
        finite_nll = xp.where(xp.isinf(nll), xp.zeros_like(nll), nll)
        g = xp.exp(log_probs) - xp.exp(log_ab + finite_nll[None, :, None] - log_probs)
        inside = xp.arange(steps, device=log_probs.device)[:, None] < input_lengths[None, :]
        g = xp.where(inside[:, :, None], g, xp.zeros_like(g))
        impossible = xp.logical_and(xp.isinf(nll)[None, :, None], inside[:, :, None])
        # no alignment: zero with zero_infinity, else NaN, as PyTorch's
        g = xp.where(impossible, xp.zeros_like(g) if ctx.zero_infinity else xp.full_like(g, xp.nan), g)
        if ctx.reduction == "none":
            scale = grad
        elif ctx.reduction == "sum":
            scale = xp.broadcast_to(grad, (batch,))
        else:
            lengths = xp.astype(xp.maximum(target_lengths, xp.ones_like(target_lengths)), g.dtype)
            scale = grad / (lengths * batch)
        return g * scale[None, :, None]


def _log_add(xp, *terms):
    """log Σ e^term, elementwise, as PyTorch's CTC kernel computes it: the largest term
    factored out (none where all are -inf, which gives -inf); NaN where one is NaN or +inf."""
    peak = terms[0]
    for term in terms[1:]:
        peak = xp.maximum(peak, term)
    return _log_of_sum(xp, sum(xp.exp(term - _finite_peak(xp, peak)) for term in terms), peak)


def _log_sum(xp, a):
    """log Σ exp(a) along the last axis, as :func:`_log_add` does elementwise."""
    peak = xp.max(a, axis=-1, keepdims=True)
    return _log_of_sum(xp, xp.sum(xp.exp(a - _finite_peak(xp, peak)), axis=-1), peak[..., 0])


def _finite_peak(xp, peak):
    return xp.where(peak == -xp.inf, xp.zeros_like(peak), peak)


def _log_of_sum(xp, total, peak):
    """log(total) + peak, -inf where total is 0 (every term -inf)."""
    nothing = total == 0
    return xp.where(nothing, xp.full_like(total, -xp.inf),
                    xp.log(xp.where(nothing, xp.ones_like(total), total)) + _finite_peak(xp, peak))


def _ctc_lengths(op, name, value, batch, device):
    if isinstance(value, Tensor):
        if value.is_floating_point() or value.dtype is dtypes.bool_:
            raise DTypeError(f"{op}: {name} must be integers, got {value.dtype.name}")
        value = value.reshape(-1).tolist()
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [int(value)]
    elif not isinstance(value, (list, tuple)):
        raise ArgumentTypeError(f"{op}: {name} must be a tensor or a sequence of ints, got {type(value).__name__}")
    value = [int(v) for v in value]
    if len(value) != batch:
        raise ShapeError(f"{op}: {name} must have one entry per sequence ({batch}), got {len(value)}")
    if any(v < 0 for v in value):
        raise ArgumentError(f"{op}: {name} must be non-negative, got {value}")
    return value


def _ctc_reference(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
                   zero_infinity=False):
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs[:, None], targets[None]
        input_lengths, target_lengths = [int(np.asarray(input_lengths).reshape(-1)[0])], [
            int(np.asarray(target_lengths).reshape(-1)[0])]
    losses, start = [], 0
    for n, (steps, length) in enumerate(zip(input_lengths, target_lengths)):
        if targets.ndim == 1:
            labels, start = list(targets[start:start + length]), start + length
        else:
            labels = list(targets[n, :length])
        extended = [blank]
        for label in labels:
            extended += [label, blank]
        alpha = np.full(len(extended), -np.inf)
        alpha[0] = log_probs[0, n, blank]
        if len(extended) > 1:
            alpha[1] = log_probs[0, n, extended[1]]
        for t in range(1, steps):
            new = np.full_like(alpha, -np.inf)
            for s, label in enumerate(extended):
                terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else []) + (
                    [alpha[s - 2]] if s >= 2 and label != blank and label != extended[s - 2] else [])
                new[s] = np.logaddexp.reduce(terms) + log_probs[t, n, label]
            alpha = new
        loss = -np.logaddexp.reduce(alpha[-2:] if len(extended) > 1 else alpha[-1:])
        losses.append(0.0 if zero_infinity and np.isinf(loss) else loss)
    losses = np.array(losses, dtype=log_probs.dtype)
    if reduction == "none":
        return losses[0] if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    return (losses / np.maximum(np.array(target_lengths), 1)).mean()


def _ctc_samples(rng):
    def log_probs(shape):
        x = rng.normal(size=shape)
        return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    yield Sample((log_probs((6, 2, 4)), np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2]), name="padded targets")
    yield Sample((log_probs((5, 3, 3)), np.array([1, 1, 2, 2, 1]), (5, 4, 3), (2, 2, 1)),
                 {"reduction": "sum", "blank": 0}, name="concatenated targets, sum")
    yield Sample((log_probs((4, 2, 4)), np.array([[0, 1], [2, 3]]), [4, 4], [2, 1]),
                 {"reduction": "none", "blank": 3}, name="blank 3, none")
    yield Sample((log_probs((5, 4)), np.array([1, 2]), [5], [2]), name="unbatched")


def _ctc_wrapper(function, log_probs, *args, **kwargs):
    """PyTorch's CTC gradient is the loss's gradient through a log_softmax: check it there."""
    return function(log_softmax(log_probs, -1), *args, **kwargs)


@register(_ctc_reference, _ctc_samples, method=False, smooth=False, gradcheck_wrapper=_ctc_wrapper)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (speech, handwriting): -log of the
    probability of each target sequence summed over all its alignments to the input steps.

    ``log_probs`` (T, N, C) (or (T, C)) are log-softmax outputs; ``targets`` (N, S) padded
    or the targets of the batch concatenated (1-D); ``input_lengths`` and ``target_lengths``
    (N,) give each sequence's lengths; ``blank`` is the blank class. Computed by the
    forward-backward recursions in log space; ``reduction='mean'`` divides each loss by its
    target length, then averages over the batch; ``zero_infinity`` turns impossible
    alignments (infinite losses) and their gradients to zero. The gradient is PyTorch's
    (see the module docstring); no second derivative, as in PyTorch.

    Example::

        log_probs = vizgrad.randn(50, 4, 20).log_softmax(2).requires_grad_()
        targets = vizgrad.randint(1, 20, (4, 10))
        F.ctc_loss(log_probs, targets, [50] * 4, [10] * 4).backward()
    """
    op = "ctc_loss"
    if not isinstance(log_probs, Tensor):
        raise not_a_tensor(op, "log_probs", log_probs)
    if not isinstance(targets, Tensor):
        raise not_a_tensor(op, "targets", targets)
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"{op}: log_probs must be (T, N, C) or unbatched (T, C), got shape "
                         f"{format_shape(log_probs.shape)}")
    if not log_probs.is_floating_point():
        raise DTypeError(f"{op}: log_probs must be floating point, got {log_probs.dtype.name}")
    if targets.is_floating_point() or targets.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: targets must be integers, got {targets.dtype.name}")
    for name, value in (("targets", targets), ("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(value, Tensor) and type(value._array) is not type(log_probs._array):
            raise DeviceError(f"{op}: log_probs is on {log_probs.device} but {name} is on {value.device}; move one "
                              f"with .to('{log_probs.device}')")
    _check_reduction(op, reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        if targets.ndim != 1:
            raise ShapeError(f"{op}: an unbatched log_probs (T, C) takes 1-D targets, got shape "
                             f"{format_shape(targets.shape)}")
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise ArgumentError(f"{op}: blank must be in label range [0, {classes}), got {blank}")
    inputs = _ctc_lengths(op, "input_lengths", input_lengths, batch, log_probs.device)
    lengths = _ctc_lengths(op, "target_lengths", target_lengths, batch, log_probs.device)
    for n, length in enumerate(inputs):
        if length > steps:
            raise ArgumentError(f"{op}: Expected input_lengths to have value at most {steps}, but got value "
                                f"{length} (while checking arguments for ctc_loss_cpu)")
    host = targets.cpu().numpy() if hasattr(targets, "numpy") else None
    widest = max(lengths, default=0)
    rows = np.zeros((batch, widest), dtype=np.int64)
    if targets.ndim == 1 and not unbatched:
        if targets.shape[0] < sum(lengths):
            raise ShapeError(f"{op}: the concatenated targets (shape {format_shape(targets.shape)}) must hold "
                             f"sum(target_lengths) = {sum(lengths)} labels")
        start = 0
        for n, length in enumerate(lengths):
            rows[n, :length] = host[start:start + length]
            start += length
    elif targets.ndim == 2:
        if targets.shape[0] != batch or targets.shape[1] < widest:
            raise ShapeError(f"{op}: targets of shape {format_shape(targets.shape)} must be (N={batch}, S) with S "
                             f"at least max(target_lengths) = {widest}")
        for n, length in enumerate(lengths):
            rows[n, :length] = host[n, :length]
    else:
        raise ShapeError(f"{op}: targets must be (N, S) or 1-D, got shape {format_shape(targets.shape)}")
    if rows.size and (rows.min() < 0 or rows.max() >= classes):
        raise IndexingError(f"{op}: target labels must be in [0, {classes}), got values from {rows.min()} to "
                            f"{rows.max()}")
    extended = np.full((batch, 2 * widest + 1), blank, dtype=np.int64)
    extended[:, 1::2] = rows
    as_tensor = lambda a: creation.tensor(a, device=log_probs.device)._array  # noqa: E731
    loss = CtcLoss.apply(log_probs, labels=as_tensor(extended), input_lengths=as_tensor(np.array(inputs, np.int64)),
                         target_lengths=as_tensor(np.array(lengths, np.int64)), blank=int(blank),
                         reduction=reduction, zero_infinity=bool(zero_infinity))
    return loss.squeeze(0) if unbatched and reduction == "none" else loss
