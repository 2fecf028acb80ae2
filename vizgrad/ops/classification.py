"""The classification losses: ``nll_loss``, ``cross_entropy`` and the binary cross entropies.

They are ops of their own where it matters: ``nll_loss`` (one node that picks
``-w[y]·x[n, y]`` and scatters its gradient back), and the elementwise
``binary_cross_entropy`` (log clamped at -100 as PyTorch) and
``binary_cross_entropy_with_logits`` (stable: ``max(x, 0) - x·y + log(1 + e^-|x|)``), one op
each, reduction included, as PyTorch computes them. ``cross_entropy`` is ``log_softmax``
followed by ``nll_loss`` (plus label smoothing): the nodes PyTorch records for it.
"""

import math

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import DTypeError, ShapeError, format_shape, ArgumentError, IndexingError
from ..tensor import Tensor
from . import binary, shape, truth
from . import reduce as reductions  # `reduce` is also PyTorch's legacy argument name
from .activation import log_softmax
from .loss import _check_reduction, _check_tensors, _np_reduce, _reduced, _unreduced, legacy_reduction
from .registry import Sample, register
from .samples import values


class NllLoss(Op):
    """``-w[y]·x[n, y, ...]`` over the class dim 1, zero where y == ignore_index, reduced.

    'mean' divides by the total weight W = Σ w[yₙ] of the counted elements, so for it
    dL/dw[c] = Σ_{n: yₙ = c} (-x[n, c] - L) / W.
    """

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction):
        xp = ctx.xp
        ctx.reduction = reduction
        kept = target != ignore_index
        safe = xp.where(kept, target, 0)
        index = xp.expand_dims(safe, axis=1)
        flat = _flat_positions(xp, x.shape, safe)
        ctx.save_for_backward(x, weight, index, kept, flat)   # index, kept, flat: constants
        counts = _counted_weights(xp, weight, index, kept, x.dtype)
        losses = -(counts * xp.reshape(xp.take(xp.reshape(x, (-1,)), flat), kept.shape))
        if reduction == "none":
            return losses
        total = xp.sum(losses)
        return total if reduction == "sum" else total / xp.sum(counts)

    @staticmethod
    def backward(ctx, grad):
        x, weight, index, kept, flat = ctx.saved_tensors
        xp = ctx.xp
        needs_x, _, needs_w = ctx.needs_input_grad
        counts = _counted_weights(xp, weight, index, kept, x.dtype)
        scale = grad
        if ctx.reduction == "mean":
            scale = grad / xp.sum(counts)
        grad_x = grad_w = None
        if needs_x:                                   # -w[yₙ]·scale at [n, yₙ], zero elsewhere (no one-hot)
            picked_grad = xp.reshape(-(counts * scale), (-1,))
            grad_x = xp.reshape(xp.index_add(xp.reshape(xp.zeros_like(x), (-1,)), 0, flat, picked_grad), x.shape)
        if needs_w:
            picked = _picked(xp, x, index)
            kept_float = xp.astype(kept, x.dtype)
            if ctx.reduction == "mean":
                loss = -xp.sum(counts * picked) / xp.sum(counts)
                contribution = kept_float * (-picked - loss) * scale
            else:
                contribution = kept_float * -picked * scale
            grad_w = xp.index_add(xp.zeros_like(weight), 0, xp.reshape(xp.squeeze(index, axis=1), (-1,)),
                                  xp.reshape(contribution, (-1,)))
        return grad_x, None, grad_w


def _flat_positions(xp, shape_, target):
    """The positions of x[n, yₙ, j...] in x of ``shape_`` (N, C, d...) read as one row, for the
    class indices ``target`` (N, d...): one take and one add in place of a gather and a scatter
    along the class dim."""
    classes, inner = shape_[1], math.prod(shape_[2:])
    lead = xp.reshape(xp.arange(shape_[0], dtype=target.dtype) * (classes * inner), (-1,) + (1,) * (len(shape_) - 2))
    within = xp.reshape(xp.arange(inner, dtype=target.dtype), tuple(shape_[2:]))
    return xp.reshape(lead + within + target * inner, (-1,))


def _picked(xp, x, index):
    """x[n, yₙ, ...] (the class dim removed)."""
    return xp.squeeze(xp.take_along_axis(x, index, axis=1), axis=1)


def _counted_weights(xp, weight, index, kept, dtype):
    """w[yₙ] where counted, 0 where ignored (1 for every class without ``weight``)."""
    kept_float = xp.astype(kept, dtype)
    if weight is None:
        return kept_float
    classes = xp.reshape(xp.squeeze(index, axis=1), (-1,))
    return xp.reshape(xp.take(weight, classes, axis=0), kept.shape) * kept_float


def _check_targets(op, input, target, ignore_index):
    """Class-index targets: integer, shape (N, d1, ...) for input (N, C, d1, ...), in range."""
    if target.dtype is not dtypes.int64:
        raise DTypeError(f"{op}: target must hold class indices as int64 (a LongTensor), got {target.dtype.name}"
                         + ("; convert it with .long()" if not target.is_floating_point() else ""))
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ShapeError(f"{op}: input of shape {format_shape(input.shape)} needs a target of shape "
                         f"{format_shape(expected)}, got {format_shape(target.shape)}")
    classes = input.shape[1]
    if target.numel():
        # on the raw array: a check, not part of the graph, and cheap next to a step
        xp, labels = target._backend().xp, target._array
        bad = xp.logical_and(labels != ignore_index, xp.logical_or(labels < 0, labels >= classes))
        if bool(xp.any(bad)):
            bad = Tensor._make(xp.reshape(bad, (-1,)))
            value = shape.reshape(target, (-1,))[reductions.argmax(bad.to(dtypes.int64))].item()
            raise IndexingError(f"{op}: target {value} is out of bounds: class indices must be in [0, {classes}) "
                             f"(or equal ignore_index={ignore_index})")


def _check_weight(op, weight, classes):
    if weight is not None and (not isinstance(weight, Tensor) or tuple(weight.shape) != (classes,)):
        got = format_shape(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ShapeError(f"{op}: weight must be a tensor of shape ({classes},), one entry per class; got {got}")


def _nll_loss_reference(x, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                        reduction="mean"):
    if x.ndim == 1:
        x, target = x[None], np.asarray(target)[None]
        out = _nll_loss_reference(x, target, weight, ignore_index=ignore_index, reduction=reduction)
        return out[0] if reduction == "none" else out
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    picked = np.squeeze(np.take_along_axis(x, safe[:, None], axis=1), 1)
    w = (np.ones(x.shape[1]) if weight is None else weight)[safe] * kept
    losses = -w * picked
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / w.sum()


def _class_samples(rng, classes=4):
    yield Sample((values(rng, (5, classes)), rng.integers(0, classes, size=5)), name="(N, C)")
    yield Sample((values(rng, (5, classes)), rng.integers(0, classes, size=5)), {"reduction": "sum"}, name="sum")
    yield Sample((values(rng, (2, classes, 3)), rng.integers(0, classes, size=(2, 3))), {"reduction": "none"},
                 name="(N, C, d)")
    yield Sample((values(rng, (6, classes)), np.array([0, 1, -100, 3, 1, -100]), values(rng, (classes,), 0.5, 2.0)),
                 name="weight, ignore_index")
    yield Sample((values(rng, (3, classes, 2, 2)), rng.integers(0, classes, size=(3, 2, 2)),
                  values(rng, (classes,), 0.5, 2.0)), {"ignore_index": 1, "reduction": "none"},
                 name="(N, C, h, w) weight none")
    yield Sample((values(rng, (4, classes)), np.array([2, 2, 0, 3]), values(rng, (classes,), 0.5, 2.0)),
                 {"reduction": "sum"}, name="weight sum")
    yield Sample((values(rng, (classes,)), np.asarray(2)), name="unbatched")


@register(_nll_loss_reference, _class_samples, method=False)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of class indices: ``lₙ = -w[yₙ]·x[n, yₙ]`` for input
    (N, C) or (N, C, d1, ...) of log-probabilities and target (N) or (N, d1, ...);
    elements whose target is ``ignore_index`` count zero. 'mean' divides by Σ w[yₙ]
    over the counted elements.

    dL/dx[n, c] = -w[c]·[c = yₙ] (over Σw for 'mean').

    Example::

        logp = F.log_softmax(vizgrad.randn(3, 5), dim=1)
        F.nll_loss(logp, vizgrad.tensor([1, 0, 4]))
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("nll_loss", input=input, target=target)
    _check_reduction("nll_loss", reduction)
    if input.ndim == 1:                               # one unbatched sample: (C,) and ()
        if target.ndim != 0:
            raise ShapeError(f"nll_loss: an unbatched input of shape {format_shape(input.shape)} needs a 0-d "
                             f"target, got shape {format_shape(target.shape)}")
        out = nll_loss(shape.unsqueeze(input, 0), shape.unsqueeze(target, 0), weight,
                       ignore_index=ignore_index, reduction=reduction)
        return shape.squeeze(out, 0) if reduction == "none" else out
    if input.ndim < 1 or not input.is_floating_point():
        raise ShapeError(f"nll_loss: input must be a floating tensor of shape (C,), (N, C) or (N, C, d1, ...), "
                         f"got {input.dtype.name} of shape {format_shape(input.shape)}")
    _check_targets("nll_loss", input, target, ignore_index)
    _check_weight("nll_loss", weight, input.shape[1])
    if weight is not None and weight.dtype is not input.dtype:
        raise DTypeError(f"nll_loss: weight is {weight.dtype.name} but input is {input.dtype.name}; they must have "
                         f"the same dtype: convert weight with .to({input.dtype!r})")
    return NllLoss.apply(input, target, weight, ignore_index=ignore_index, reduction=reduction)


def _cross_entropy_reference(x, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                             reduction="mean", label_smoothing=0.0):
    axis = 0 if x.ndim == 1 else 1
    shifted = x - x.max(axis=axis, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    classes = x.shape[axis]
    view = [1] * x.ndim
    view[axis] = classes
    w = np.ones(classes) if weight is None else weight
    if np.issubdtype(np.asarray(target).dtype, np.floating):
        target = target * (1 - label_smoothing) + label_smoothing / classes
        losses = -(logp * target * w.reshape(view)).sum(axis=axis)
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.sum() / (x.size / classes)
    nll = _nll_loss_reference(x=logp, target=target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    kept = np.asarray(target) != ignore_index
    smooth = -(logp * w.reshape(view)).sum(axis=axis) * kept
    if reduction == "mean":
        smooth = smooth.sum() / (w[np.where(kept, target, 0)] * kept).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def _cross_entropy_samples(rng):
    yield from _class_samples(rng)
    classes = 4
    target = np.array([0, 1, -100, 3, 1])
    yield Sample((values(rng, (5, classes)), target), {"label_smoothing": 0.1}, name="label smoothing")
    yield Sample((values(rng, (5, classes)), target, values(rng, (classes,), 0.5, 2.0)),
                 {"label_smoothing": 0.2, "reduction": "sum"}, name="label smoothing, weight, sum")
    yield Sample((values(rng, (2, classes, 3)), rng.integers(0, classes, size=(2, 3)), values(rng, (classes,), 0.5, 2)),
                 {"label_smoothing": 0.3}, name="(N, C, d) label smoothing, weight")
    probabilities = rng.dirichlet(np.ones(classes), size=5)
    yield Sample((values(rng, (5, classes)), probabilities), name="probabilities")
    yield Sample((values(rng, (5, classes)), probabilities, values(rng, (classes,), 0.5, 2.0)),
                 {"label_smoothing": 0.1, "reduction": "none"}, name="probabilities, weight, smoothing")
    yield Sample((values(rng, (2, classes, 3)), rng.dirichlet(np.ones(classes), size=(2, 3)).transpose(0, 2, 1)),
                 {"reduction": "sum"}, name="(N, C, d) probabilities")


@register(_cross_entropy_reference, _cross_entropy_samples, method=False)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between logits and targets: ``nll_loss(log_softmax(x, dim=1), y)``.

    ``input`` is (C,), (N, C) or (N, C, d1, ...) unnormalized scores. ``target`` is either
    class indices ((), (N) or (N, d1, ...), integer; ``weight``, ``ignore_index`` apply), or
    class probabilities of the input's shape (floating): lₙ = -Σ_c w_c y_{n,c} log p_{n,c},
    where 'mean' divides by the number of elements N·d1·... .
    ``label_smoothing`` ε mixes the target with the uniform distribution:
    (1-ε)·onehot(y) + ε/C.

    dL/dx = softmax(x) - y for one sample with probabilities y (summing to 1).

    Example::

        logits = vizgrad.randn(3, 5, requires_grad=True)
        loss = F.cross_entropy(logits, vizgrad.tensor([1, 0, 4]))
        loss.backward()
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("cross_entropy", input=input, target=target)
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ArgumentError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if input.ndim == 0:
        raise ShapeError("cross_entropy: input must have a class dim: shape (C,), (N, C) or (N, C, d1, ...)")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    _check_weight("cross_entropy", weight, classes)
    logp = log_softmax(input, dim=class_dim)
    view = [1] * input.ndim
    view[class_dim] = classes
    weight_view = None if weight is None else shape.reshape(weight, tuple(view))

    if target.is_floating_point():                    # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise ShapeError(f"cross_entropy: probability targets must have the input's shape "
                             f"{format_shape(input.shape)}, got {format_shape(target.shape)}")
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        product = logp * target
        if weight_view is not None:
            product = product * weight_view
        if reduction == "none":
            return -reductions.sum(product, dim=class_dim)
        total = -reductions.sum(product)
        return total if reduction == "sum" else total / (input.numel() // classes if classes else 0)

    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    # the uniform part: -Σ_c w_c log p_c / C, counted where the target is not ignored
    kept = (target != ignore_index).to(input.dtype)
    smooth = -reductions.sum(logp if weight_view is None else logp * weight_view, dim=class_dim) * kept
    if reduction == "mean":
        if weight is None:
            denominator = reductions.sum(kept)
        else:
            safe = binary.where(target != ignore_index, target, 0)
            denominator = reductions.sum(weight[shape.reshape(safe, (-1,))] * shape.reshape(kept, (-1,)))
        smooth = reductions.sum(smooth) / denominator
    elif reduction == "sum":
        smooth = reductions.sum(smooth)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / classes)


class BinaryCrossEntropy(Op):
    """``-(y log x + (1 - y) log(1 - x))`` elementwise, each log clamped at -100."""

    broadcasts = True

    @staticmethod
    def forward(ctx, x, y, weight, reduction):
        xp = ctx.xp
        ctx.save_for_backward(x, y, weight)
        log_x, log_rest = _clamped_logs(xp, x)
        loss = -(y * log_x + (1 - y) * log_rest)
        return _reduced(xp, ctx, loss if weight is None else loss * weight, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y, weight = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_y, needs_weight = ctx.needs_input_grad
        grad = _unreduced(xp, grad, ctx)
        grad_weight = None
        if needs_weight:                              # the unweighted loss
            log_x, log_rest = _clamped_logs(xp, x)
            grad_weight = -grad * (y * log_x + (1 - y) * log_rest)
        if weight is not None:
            grad = grad * weight
        grad_x = grad_y = None
        if needs_x:                                   # (x - y) / (x (1 - x)), the denominator kept >= 1e-12
            grad_x = grad * (x - y) / xp.maximum((1 - x) * x, 1e-12)
        if needs_y:
            log_x, log_rest = _clamped_logs(xp, x)
            grad_y = grad * (log_rest - log_x)
        return grad_x, grad_y, grad_weight


def _clamped_logs(xp, x):
    """(max(log x, -100), max(log(1 - x), -100)), without taking log 0."""
    tiny = 1e-45                                       # below e^-100: its log is clamped anyway
    return (xp.maximum(xp.log(xp.maximum(x, tiny)), -100.0),
            xp.maximum(xp.log(xp.maximum(1 - x, tiny)), -100.0))


def _bce_reference(x, y, weight=None, size_average=None, reduce=None, reduction="mean"):
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))
    return _np_reduce(loss if weight is None else loss * weight, reduction)


def _bce_samples(rng):
    for reduction, shape_ in (("mean", (3, 4)), ("sum", (5,)), ("none", (2, 3))):
        yield Sample((values(rng, shape_, 0.05, 0.95), values(rng, shape_, 0.0, 1.0)), {"reduction": reduction},
                     name=f"{shape_} {reduction}")
    yield Sample((values(rng, (3, 4), 0.05, 0.95), values(rng, (3, 4), 0.0, 1.0), values(rng, (4,), 0.5, 2.0)),
                 name="weight")


@register(_bce_reference, _bce_samples, method=False)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of probabilities: ``-w (y log x + (1 - y) log(1 - x))``, each
    log clamped at -100 (so the loss stays finite at x = 0 or 1, as PyTorch).

    dL/dx = w (x - y) / (x (1 - x)).

    Example::

        F.binary_cross_entropy(vizgrad.tensor([0.8, 0.1]), vizgrad.tensor([1.0, 0.0]))   # tensor(0.1643)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("binary_cross_entropy", input=input, target=target)
    _check_reduction("binary_cross_entropy", reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"binary_cross_entropy: using a target size ({format_shape(target.shape)}) that is "
                         f"different to the input size ({format_shape(input.shape)}); please ensure they have "
                         "the same size")
    if not input.is_floating_point():
        raise DTypeError(f"binary_cross_entropy: input must be floating point, got {input.dtype.name}")
    if target._array.dtype != input._array.dtype and target.dtype is not input.dtype:
        raise DTypeError(f"binary_cross_entropy: target is {target.dtype.name} but input is {input.dtype.name}; "
                         f"they must have the same dtype: convert target with .to({input.dtype!r})")
    if input.numel() and (_any(input < 0) or _any(input > 1)):
        raise ArgumentError("binary_cross_entropy: all elements of input should be between 0 and 1")
    if target.numel() and (_any(target < 0) or _any(target > 1)):
        raise ArgumentError("binary_cross_entropy: all elements of target should be between 0 and 1")
    return BinaryCrossEntropy.apply(input, target, _in_dtype_of(weight, input), reduction=reduction)


def _in_dtype_of(weight, input):
    """A loss weight of another dtype, converted to the input's: PyTorch applies it in place,
    so the loss keeps the input's dtype."""
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        return weight.to(input.dtype)
    return weight


def _any(mask):
    return bool(truth.any(mask).item())


class BinaryCrossEntropyWithLogits(Op):
    """``(1 - y) x + (1 + (p - 1) y) softplus(-x)`` elementwise, p the positive weight
    (equal to ``max(x, 0) - x y + log(1 + e^-|x|)`` when p = 1)."""

    broadcasts = True

    @staticmethod
    def forward(ctx, x, y, weight, pos_weight, reduction):
        xp = ctx.xp
        ctx.save_for_backward(x, y, weight, pos_weight)
        soft = xp.maximum(-x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))       # softplus(-x), stable
        if pos_weight is None:
            loss = (1 - y) * x + soft
        else:
            loss = (1 - y) * x + ((pos_weight - 1) * y + 1) * soft
        return _reduced(xp, ctx, loss if weight is None else loss * weight, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y, weight, pos_weight = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_y, needs_weight, needs_p = ctx.needs_input_grad
        grad = _unreduced(xp, grad, ctx)
        below = (xp.tanh(x * 0.5) - 1) * 0.5                              # d softplus(-x)/dx = σ(x) - 1
        grad_x = grad_y = grad_p = grad_weight = None
        if needs_y or needs_p or needs_weight:
            soft = xp.maximum(-x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))
        if needs_weight:                                                   # the unweighted loss
            positive = soft if pos_weight is None else ((pos_weight - 1) * y + 1) * soft
            grad_weight = grad * ((1 - y) * x + positive)
        if weight is not None:
            grad = grad * weight
        if pos_weight is None:
            if needs_x:
                grad_x = grad * ((1 - y) + below)
            if needs_y:
                grad_y = -grad * x
        else:
            log_weight = (pos_weight - 1) * y + 1
            if needs_x:
                grad_x = grad * ((1 - y) + log_weight * below)
            if needs_y:
                grad_y = grad * ((pos_weight - 1) * soft - x)
            if needs_p:
                grad_p = grad * y * soft
        return grad_x, grad_y, grad_weight, grad_p


def _bce_logits_reference(x, y, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    soft = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))
    p = 1.0 if pos_weight is None else pos_weight
    loss = (1 - y) * x + ((p - 1) * y + 1) * soft
    return _np_reduce(loss if weight is None else loss * weight, reduction)


def _bce_logits_samples(rng):
    for reduction, shape_ in (("mean", (3, 4)), ("sum", (5,)), ("none", (2, 3))):
        yield Sample((values(rng, shape_, -3.0, 3.0), values(rng, shape_, 0.0, 1.0)), {"reduction": reduction},
                     name=f"{shape_} {reduction}")
    yield Sample((values(rng, (3, 4), -3.0, 3.0), values(rng, (3, 4), 0.0, 1.0), values(rng, (4,), 0.5, 2.0)),
                 {"pos_weight": values(rng, (4,), 0.5, 3.0)}, name="weight, pos_weight")
    yield Sample((np.array([-800.0, -30.0, 30.0, 800.0]), np.array([0.0, 1.0, 0.0, 1.0])), {"reduction": "none"},
                 name="large logits")


@register(_bce_logits_reference, _bce_logits_samples, method=False)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of logits, ``BCE(σ(x), y)`` computed stably:
    ``max(x, 0) - x y + log(1 + e^-|x|)``. ``pos_weight`` p (broadcast over the last dim,
    one per class) weighs the positive term: ``(1 - y) x + (1 + (p - 1) y) log(1 + e^-x)``.

    dL/dx = σ(x) - y (for p = 1).

    Example::

        F.binary_cross_entropy_with_logits(vizgrad.tensor([2.0, -1.0]), vizgrad.tensor([1.0, 0.0]))
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("binary_cross_entropy_with_logits", input=input, target=target)
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"binary_cross_entropy_with_logits: target size ({format_shape(target.shape)}) must be "
                         f"the same as input size ({format_shape(input.shape)})")
    for name, tensor in (("input", input), ("target", target)):
        if not tensor.is_floating_point():
            raise DTypeError(f"binary_cross_entropy_with_logits: {name} must be floating point, got "
                             f"{tensor.dtype.name}")
    if getattr(pos_weight, "dtype", None) is dtypes.bool_:
        raise DTypeError("binary_cross_entropy_with_logits: pos_weight must be a number tensor, got bool")
    # as PyTorch: the loss has the target's dtype (the input's gradient, the input's)
    logits = input.to(target.dtype) if target.dtype is not input.dtype else input
    return BinaryCrossEntropyWithLogits.apply(logits, target, _in_dtype_of(weight, logits),
                                              _in_dtype_of(pos_weight, logits), reduction=reduction)
