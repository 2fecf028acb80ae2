"""Loss functions, with PyTorch's arguments and ``reduction`` ('mean', 'sum' or 'none').

The classification losses are ops of their own where it matters: ``nll_loss`` (one
node that picks ``-w[y]·x[n, y]`` and scatters its gradient back), and the elementwise
``binary_cross_entropy`` (log clamped at -100 as PyTorch) and
``binary_cross_entropy_with_logits`` (stable: ``max(x, 0) - x·y + log(1 + e^-|x|)``).
``cross_entropy`` is ``log_softmax`` followed by ``nll_loss`` (plus label smoothing),
``l1_loss`` is ``mean(abs(x - y))``: the nodes PyTorch records for them. The losses PyTorch
computes as one function (``mse_loss``, ``huber_loss``, ``smooth_l1_loss``, the binary
cross entropies, ``soft_margin_loss``) are one op each, reduction included, so ``grad_fn`` is
``MseLossBackward0`` with the inputs' nodes next, as in PyTorch.

The ranking, hinge and embedding losses (``margin_ranking_loss``, ``hinge_embedding_loss``,
``cosine_embedding_loss``, the triplet losses, ``multilabel_soft_margin_loss``) and the
likelihoods (``poisson_nll_loss``, ``gaussian_nll_loss``) are compositions of differentiable
ops, as PyTorch computes them. ``multi_margin_loss`` and ``multilabel_margin_loss``, one kernel
each in PyTorch, are compositions here too (gather the target scores, hinge, masked sum), so
their graphs show those steps and every order of derivative comes for free.
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, IndexingError,
                      as_integer_scalar, as_number, not_a_tensor, DeviceError)
from ..tensor import Tensor
from .. import creation
from . import binary, shape, unary
from . import index as indexing
from . import reduce as reductions  # `reduce` is also PyTorch's legacy argument name
from .activation import log_softmax, logsigmoid
from .registry import Sample, register
from .samples import values

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce_, reduction):
    """PyTorch's deprecated ``size_average``/``reduce`` pair turned into ``reduction``."""
    if size_average is None and reduce_ is None:
        return reduction
    size_average = True if size_average is None else size_average      # each read for its truth, as PyTorch
    reduce_ = True if reduce_ is None else reduce_
    reduction = "mean" if size_average and reduce_ else "sum" if reduce_ else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  UserWarning, stacklevel=3)
    return reduction


def _check_reduction(op, reduction, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ArgumentError(f"{op}: {reduction!r} is not a valid value for reduction; use one of "
                            + ", ".join(repr(r) for r in allowed))


def _reduce(loss, reduction):
    if reduction == "mean":
        return reductions.mean(loss)
    if reduction == "sum":
        return reductions.sum(loss)
    return loss


def _check_tensors(op, **tensors):
    for name, tensor in tensors.items():
        if not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(tensor).__name__}")


def _check_some_floating(op, input, target):
    """PyTorch computes these losses in the operands' promoted dtype, which must be floating."""
    if not input.is_floating_point() and not target.is_floating_point():
        raise DTypeError(f"{op}: input ({input.dtype.name}) and target ({target.dtype.name}) are both integer or "
                         "bool; convert one to floating point with .float()")


def _warn_if_broadcast(op, input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{op}: using a target size ({format_shape(target.shape)}) that is different to the input "
                      f"size ({format_shape(input.shape)}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def _reduced(xp, ctx, loss, reduction):
    """Apply ``reduction`` to an elementwise loss array inside a loss op's forward (what
    :func:`_unreduced` needs is kept on ``ctx``)."""
    ctx.loss_shape, ctx.reduction = tuple(loss.shape), reduction
    if reduction == "mean":
        return xp.mean(loss)
    return xp.sum(loss) if reduction == "sum" else loss


def _unreduced(xp, grad, ctx):
    """The gradient of each element of the loss before its reduction."""
    if ctx.reduction == "none":
        return grad
    if ctx.reduction == "mean":
        grad = grad / max(int(np.prod(ctx.loss_shape)), 1)
    return xp.broadcast_to(grad, ctx.loss_shape)


def _np_reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum}.get(reduction, np.asarray)(loss)


def _pair_samples(reductions=_REDUCTIONS, low=-2.0, high=2.0, gap=None, **extra):
    """(input, target) pairs of equal shape, one per reduction; with ``gap``, |input - target|
    stays away from that kink."""
    def samples(rng):
        for position, reduction in enumerate(reductions):
            shape_ = ((3, 4), (5,), (2, 3, 2))[position % 3]
            input = values(rng, shape_, low, high)
            target = values(rng, shape_, low, high)
            if gap is not None:
                for kink in gap:
                    difference = input - target
                    near = np.abs(np.abs(difference) - kink) < 0.1
                    target = np.where(near, target - 0.25 * np.sign(difference + 1e-12), target)
            yield Sample((input, target), dict(extra, reduction=reduction), name=f"{shape_} {reduction}")
    return samples


# --- regression losses ---------------------------------------------------------------------

class MseLoss(Op):
    """``(x - y)²`` elementwise, then reduced: d/dx = 2(x - y), d/dy = -2(x - y)."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, x, y, reduction):
        ctx.save_for_backward(x, y)
        d = x - y
        return _reduced(ctx.xp, ctx, d * d, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        grad_x = _unreduced(ctx.xp, grad, ctx) * (x - y) * 2
        needs_x, needs_y = ctx.needs_input_grad
        return grad_x if needs_x else None, -grad_x if needs_y else None


@register(lambda x, y, size_average=None, reduce=None, reduction="mean": _np_reduce((x - y) ** 2, reduction),
          _pair_samples(), method=False)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean squared error ``(x - y)²`` (then reduced).  dL/dx = 2(x - y) (over n for 'mean').

    Example::

        F.mse_loss(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 4.0]))   # tensor(2.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("mse_loss", input=input, target=target)
    _check_reduction("mse_loss", reduction)
    _check_some_floating("mse_loss", input, target)
    _warn_if_broadcast("mse_loss", input, target)
    return MseLoss.apply(input, target, reduction=reduction)


@register(lambda x, y, size_average=None, reduce=None, reduction="mean": _np_reduce(np.abs(x - y), reduction),
          _pair_samples(gap=(0.0,)), method=False)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error ``|x - y|`` (then reduced).  dL/dx = sign(x - y).

    Example::

        F.l1_loss(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 4.0]))   # tensor(1.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("l1_loss", input=input, target=target)
    _check_reduction("l1_loss", reduction)
    _warn_if_broadcast("l1_loss", input, target)
    return _reduce(unary.abs(input - target), reduction)


class Huber(Op):
    """``scale · (½d² if |d| < delta else delta (|d| - ½ delta))`` for d = x - y, elementwise,
    then reduced (PyTorch's HuberLoss, and SmoothL1Loss with scale = 1/delta)."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, x, y, delta, scale, reduction):
        xp = ctx.xp
        ctx.delta, ctx.scale = delta, scale
        ctx.save_for_backward(x, y)
        d = x - y
        size = xp.abs(d)
        out = xp.where(size < delta, d * d * 0.5, (size - delta * 0.5) * delta)
        return _reduced(xp, ctx, out * scale if scale != 1 else out, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        xp = ctx.xp
        grad = _unreduced(xp, grad, ctx)
        slope = xp.clip(x - y, -ctx.delta, ctx.delta)           # d/dd: d inside, ±delta outside
        grad = grad * slope * ctx.scale if ctx.scale != 1 else grad * slope
        needs_x, needs_y = ctx.needs_input_grad
        return grad if needs_x else None, -grad if needs_y else None


class SmoothL1(Huber):
    """Huber's loss over delta (its own class, so the node is ``SmoothL1LossBackward0``)."""


def _huber_reference(x, y, reduction="mean", delta=1.0):
    d = np.abs(x - y)
    return _np_reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _huber_samples(rng):
    yield from _pair_samples(gap=(1.0,))(rng)
    yield from _pair_samples(("mean",), gap=(0.5,), delta=0.5)(rng)


@register(_huber_reference, _huber_samples, method=False)
def huber_loss(input, target, reduction="mean", delta=1.0):
    """Huber loss: ``½(x - y)²`` where |x - y| < delta, else ``delta (|x - y| - ½ delta)``.
    dL/dx = clamp(x - y, -delta, delta).

    Example::

        F.huber_loss(vizgrad.tensor([0.5, 3.0]), vizgrad.zeros(2), reduction='none')   # tensor([0.1250, 2.5000])
    """
    _check_tensors("huber_loss", input=input, target=target)
    _check_reduction("huber_loss", reduction)
    if not input.is_floating_point():
        raise DTypeError(f"huber_loss: input must be floating point, got {input.dtype.name}")
    if delta <= 0:
        raise ArgumentError(f"huber_loss: delta must be positive, got {delta}")
    _warn_if_broadcast("huber_loss", input, target)
    if target.is_floating_point() and target.dtype is not input.dtype:
        target = target.to(input.dtype)        # as PyTorch: the loss has the input's dtype
    return Huber.apply(input, target, delta=delta, scale=1.0, reduction=reduction)


def _smooth_l1_reference(x, y, size_average=None, reduce=None, reduction="mean", beta=1.0):
    d = np.abs(x - y)
    if beta == 0:
        return _np_reduce(d, reduction)
    return _np_reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _smooth_l1_samples(rng):
    yield from _pair_samples(gap=(1.0,))(rng)
    yield from _pair_samples(("sum",), gap=(0.5,), beta=0.5)(rng)
    yield from _pair_samples(("mean",), gap=(0.0,), beta=0.0)(rng)


@register(_smooth_l1_reference, _smooth_l1_samples, method=False)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1: ``½(x - y)²/beta`` where |x - y| < beta, else ``|x - y| - ½ beta``
    (huber_loss / beta; l1_loss when beta = 0).  dL/dx = clamp(x - y, -beta, beta)/beta.

    Example::

        F.smooth_l1_loss(vizgrad.tensor([0.5, 3.0]), vizgrad.zeros(2), reduction='none')  # tensor([0.1250, 2.5000])
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("smooth_l1_loss", input=input, target=target)
    _check_reduction("smooth_l1_loss", reduction)
    _check_some_floating("smooth_l1_loss", input, target)
    if beta < 0:
        raise ArgumentError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    _warn_if_broadcast("smooth_l1_loss", input, target)
    if beta == 0:
        return _reduce(unary.abs(input - target), reduction)
    return SmoothL1.apply(input, target, delta=beta, scale=1.0 / beta, reduction=reduction)


# --- classification ------------------------------------------------------------------

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
        index = xp.expand_dims(xp.where(kept, target, 0), axis=1)
        ctx.save_for_backward(x, weight, index, kept)   # index, kept: constants
        counts = _counted_weights(xp, weight, index, kept, x.dtype)
        losses = -(counts * _picked(xp, x, index))
        if reduction == "none":
            return losses
        total = xp.sum(losses)
        return total if reduction == "sum" else total / xp.sum(counts)

    @staticmethod
    def backward(ctx, grad):
        x, weight, index, kept = ctx.saved_tensors
        xp = ctx.xp
        needs_x, _, needs_w = ctx.needs_input_grad
        counts = _counted_weights(xp, weight, index, kept, x.dtype)
        scale = grad
        if ctx.reduction == "mean":
            scale = grad / xp.sum(counts)
        grad_x = grad_w = None
        if needs_x:                                   # -w[yₙ]·scale at [n, yₙ], zero elsewhere
            picked_grad = xp.expand_dims(-(counts * scale), axis=1)
            grad_x = xp.scatter_add(xp.zeros_like(x), 1, index, picked_grad)
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
    return bool(reductions.any(mask).item())


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


# --- divergences and similarities -------------------------------------------------

def _kl_div_reference(x, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if log_target:
        loss = np.exp(target) * (target - x)
    else:
        loss = np.where(target > 0, target * np.log(np.where(target > 0, target, 1.0)), 0.0) - target * x
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.ndim else 1)
    return _np_reduce(loss, reduction)


def _kl_div_samples(rng):
    # 'mean' is left out: like PyTorch it warns that it is not the true KL divergence
    for reduction, log_target in (("batchmean", False), ("sum", True), ("none", False), ("batchmean", True)):
        target = values(rng, (3, 4), 0.1, 1.0)
        yield Sample((values(rng, (3, 4), -3.0, 0.0), np.log(target) if log_target else target),
                     {"reduction": reduction, "log_target": log_target}, name=f"{reduction} log_target={log_target}")


@register(_kl_div_reference, _kl_div_samples, method=False)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence with ``input`` log-probabilities:
    ``y (log y - x)`` pointwise (0 where y = 0), or ``eʸ (y - x)`` with ``log_target``.
    'batchmean' divides the sum by the batch size (the true KL); 'mean' by the element count.

    dL/dx = -y (or -eʸ).

    Example::

        p = F.log_softmax(vizgrad.randn(4, 3), dim=1)
        q = F.softmax(vizgrad.randn(4, 3), dim=1)
        F.kl_div(p, q, reduction='batchmean')
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors("kl_div", input=input, target=target)
    _check_reduction("kl_div", reduction, _REDUCTIONS + ("batchmean",))
    for name, tensor in (("input", input), ("target", target)):
        if not tensor.is_floating_point():
            raise DTypeError(f"kl_div: {name} must be floating point (integer and bool inputs are not "
                             f"supported), got {tensor.dtype.name}")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = unary.exp(target) * (target - input)
    else:                                             # y log y with 0 log 0 = 0, NaN for y < 0 (PyTorch's xlogy)
        positive = target > 0
        safe = binary.where(positive, target, 1.0)
        zero_or_nan = binary.where(target == 0, 0.0, math.nan).to(target.dtype)    # (half targets stay half)
        loss = binary.where(positive, target * unary.log(safe), zero_or_nan) - target * input
    if reduction == "batchmean":
        return reductions.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def _cosine_similarity_reference(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1, x2)
    n1 = np.maximum(np.sqrt((x1 * x1).sum(axis=dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(axis=dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(axis=dim)


def _pairwise_distance_reference(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    difference = np.abs(x1 - x2 + eps)
    return (difference ** p).sum(axis=-1, keepdims=keepdim) ** (1 / p)


def _pairwise_distance_samples(rng):
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3))), name="rows")
    yield Sample((values(rng, (4, 3)), values(rng, (3,))), {"p": 1.0, "keepdim": True}, name="broadcast, p=1")
    yield Sample((values(rng, (5,)), values(rng, (5,))), {"p": 3.0}, name="vectors")


@register(_pairwise_distance_reference, _pairwise_distance_samples, method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``‖x1 - x2 + eps‖ₚ`` along the last dim, broadcasting (the ``eps`` keeps the
    gradient finite where the vectors coincide), as PyTorch.

    Example::

        F.pairwise_distance(vizgrad.tensor([[0.0, 0.0]]), vizgrad.tensor([[3.0, 4.0]]))   # tensor([5.0000])
    """
    from ..linalg import vector_norm
    _check_tensors("pairwise_distance", x1=x1, x2=x2)
    return vector_norm(x1 - x2 + eps, ord=p, dim=-1, keepdim=keepdim)


def _cosine_similarity_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4))), name="rows")
    yield Sample((values(rng, (3, 4)), values(rng, (1, 4))), name="broadcast")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (2, 3, 4))), {"dim": -1}, name="last dim")
    yield Sample((values(rng, (5,)), values(rng, (5,))), {"dim": 0}, name="vectors")


@register(_cosine_similarity_reference, _cosine_similarity_samples, method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``:
    ``Σ (x1/‖x1‖)(x2/‖x2‖)`` with each norm at least ``eps``.

    Example::

        F.cosine_similarity(vizgrad.tensor([[1.0, 0.0]]), vizgrad.tensor([[1.0, 1.0]]))   # tensor([0.7071])
    """
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    try:                                 # the norms along dim of the broadcast inputs, as PyTorch's
        common = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise ShapeError(f"cosine_similarity: shapes {format_shape(x1.shape)} (x1) and {format_shape(x2.shape)} (x2) "
                         "cannot be broadcast together") from None
    x1, x2 = x1.expand(common), x2.expand(common)
    norm1 = reductions.norm(x1, dim=dim, keepdim=True).clamp(min=eps)
    norm2 = reductions.norm(x2, dim=dim, keepdim=True).clamp(min=eps)
    return reductions.sum((x1 / norm1) * (x2 / norm2), dim=dim)


# --- ranking, hinge and margin losses ------------------------------------------------------
# PyTorch computes most of these as compositions of elementwise ops, and so does vizgrad
# (``soft_margin_loss`` is one op, as in PyTorch). Their hinges are ``clamp(min=0)`` (a
# gradient of 1 at the kink, as PyTorch's clamp_min) except the multi-class ones, which count
# a class only where its margin is strictly violated, as PyTorch does.

def _margin(op, value, name="margin"):
    """A margin as a float: PyTorch's argument is a double, so an int margin still gives a
    floating loss."""
    return float(as_number(op, name, value))


def _check_not_bool(op, **tensors):
    for name, tensor in tensors.items():
        if tensor.dtype is dtypes.bool_:
            raise DTypeError(f"{op}: {name} is bool, which this loss cannot subtract or negate; convert it with "
                             ".float()")


def _check_same_ndim(op, message, **tensors):
    if len({tensor.ndim for tensor in tensors.values()}) > 1:
        shapes = ", ".join(f"{name} {format_shape(tensor.shape)}" for name, tensor in tensors.items())
        raise ShapeError(f"{op}: {message}, got shapes {shapes}")


def _signs(rng, shape_):
    """A target of ±1 (as floats)."""
    return np.where(rng.uniform(size=shape_) < 0.5, -1.0, 1.0)


def _margin_ranking_reference(x1, x2, y, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    return _np_reduce(np.maximum(-y * (x1 - x2) + margin, 0.0), reduction)


def _margin_ranking_samples(rng):
    cases = (((6,), (6,), 0.0, "mean"), ((3, 4), (3, 4), 0.5, "sum"), ((2, 3, 2), (2, 3, 2), 1.0, "none"),
             ((3, 4), (1, 4), 0.3, "mean"))
    for shape_, target_shape, margin, reduction in cases:
        x2, y = values(rng, shape_), _signs(rng, target_shape)
        hinge = values(rng, shape_, away_from=0.0)        # -y (x1 - x2) + margin, off its kink
        x1 = x2 - (hinge - margin) * y
        yield Sample((x1, x2, y), {"margin": margin, "reduction": reduction},
                     name=f"{shape_} target {target_shape} margin={margin} {reduction}")


@register(_margin_ranking_reference, _margin_ranking_samples, method=False)
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Ranking hinge: ``max(0, -y (x1 - x2) + margin)`` elementwise (broadcasting), then
    reduced; y = 1 asks for x1 ranked above x2 by ``margin``, y = -1 for the reverse.
    dL/dx1 = -y where the hinge is active (≥ 0), dL/dx2 = y.

    Example::

        F.margin_ranking_loss(vizgrad.tensor([0.5, 2.0]), vizgrad.tensor([1.0, 1.0]),
                              vizgrad.tensor([1.0, 1.0]), reduction='none')    # tensor([0.5000, 0.])
    """
    op = "margin_ranking_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input1=input1, input2=input2, target=target)
    _check_reduction(op, reduction)
    margin = _margin(op, margin)
    _check_same_ndim(op, "input1, input2 and target must have the same number of dims", input1=input1,
                     input2=input2, target=target)
    _check_not_bool(op, input1=input1, input2=input2, target=target)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def _hinge_embedding_reference(x, y, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    loss = np.where(y != 1, np.maximum(margin - x, 0.0), 0.0) + np.where(y != -1, x, 0.0)
    return _np_reduce(loss, reduction)


def _hinge_embedding_samples(rng):
    for shape_, target_shape, margin, reduction in (((3, 4), (3, 4), 1.0, "mean"), ((6,), (6,), 0.5, "none"),
                                                    ((2, 3, 2), (3, 1), 2.0, "sum")):
        x = np.abs(values(rng, shape_, 0.0, 3.0, away_from=margin))
        yield Sample((x, _signs(rng, target_shape)), {"margin": margin, "reduction": reduction},
                     name=f"{shape_} target {target_shape} margin={margin} {reduction}")
    # targets other than ±1 count both terms, as in PyTorch
    yield Sample((values(rng, (4,), 0.2, 0.8), np.array([0.0, 1.0, -1.0, 2.0])), {"reduction": "none"},
                 name="targets other than ±1")


@register(_hinge_embedding_reference, _hinge_embedding_samples, method=False)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """Hinge embedding loss of distances x and labels y ∈ {1, -1}: ``x`` where y = 1,
    ``max(0, margin - x)`` where y = -1 (any other y counts both terms, as in PyTorch), then
    reduced. dL/dx = 1 (y = 1) or -1 where x < margin (y = -1). An integer input gives an
    integer loss (the margin truncated), as in PyTorch.

    Example::

        F.hinge_embedding_loss(vizgrad.tensor([0.3, 0.4]), vizgrad.tensor([1.0, -1.0]),
                               reduction='none')     # tensor([0.3000, 0.6000])
    """
    op = "hinge_embedding_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    _check_not_bool(op, input=input)
    if input.is_floating_point():
        margin = _margin(op, margin)
    else:          # PyTorch fills the margin into input's dtype: the loss stays integer
        margin = as_integer_scalar(op, "margin", margin)
        if reduction == "mean":
            raise DTypeError(f"{op}: reduction='mean' of an integer input ({input.dtype.name}) is not defined, as "
                             "in PyTorch; use reduction='sum' or 'none', or a floating-point input")
    below = (margin - input).clamp(min=0)
    loss = binary.where(target != 1, below, 0) + binary.where(target != -1, input, 0)
    return _reduce(loss, reduction)


class SoftMarginLoss(Op):
    """``log(1 + e^(-y x))`` elementwise (computed as a stable softplus), then reduced:
    d/dx = -y σ(-y x), d/dy = -x σ(-y x)."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, x, y, reduction):
        xp = ctx.xp
        ctx.save_for_backward(x, y)
        z = -(y * x)
        return _reduced(xp, ctx, xp.maximum(z, 0.0) + xp.log1p(xp.exp(-xp.abs(z))), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        xp = ctx.xp
        grad = _unreduced(xp, grad, ctx) * ((xp.tanh(y * x * -0.5) + 1) * 0.5)      # σ(-y x), smooth
        needs_x, needs_y = ctx.needs_input_grad
        return -grad * y if needs_x else None, -grad * x if needs_y else None


def _soft_margin_reference(x, y, size_average=None, reduce=None, reduction="mean"):
    return _np_reduce(np.logaddexp(0.0, -y * x), reduction)


def _soft_margin_samples(rng):
    for shape_, target_shape, reduction in (((3, 4), (3, 4), "mean"), ((5,), (5,), "sum"),
                                            ((2, 3, 2), (2, 3, 2), "none"), ((3, 4), (4,), "mean")):
        yield Sample((values(rng, shape_, -3.0, 3.0), _signs(rng, target_shape)), {"reduction": reduction},
                     name=f"{shape_} target {target_shape} {reduction}")
    yield Sample((np.array([-800.0, -30.0, 30.0, 800.0]), np.array([1.0, 1.0, -0.5, 0.5])), {"reduction": "none"},
                 name="large inputs")


@register(_soft_margin_reference, _soft_margin_samples, method=False)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + e^(-y x))`` for labels y ∈ {1, -1}, elementwise,
    then reduced (computed without overflow). dL/dx = -y σ(-y x).

    Example::

        F.soft_margin_loss(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([1.0, -1.0]), reduction='none')
        # tensor([0.6931, 2.1269])
    """
    op = "soft_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    if not input.is_floating_point():
        raise DTypeError(f"{op}: input must be floating point, got {input.dtype.name}")
    if not _broadcasts_to(target.shape, input.shape):
        raise ShapeError(f"{op}: target of shape {format_shape(target.shape)} must broadcast to the input's shape "
                         f"{format_shape(input.shape)}")
    if target.dtype is not input.dtype:             # as PyTorch: the loss has the input's dtype
        target = target.to(input.dtype)
    return SoftMarginLoss.apply(input, target, reduction=reduction)


def _broadcasts_to(shape_, target_shape):
    """Whether an array of ``shape_`` broadcasts to ``target_shape`` (without growing it)."""
    if len(shape_) > len(target_shape):
        return False
    return all(n in (1, m) for n, m in zip(reversed(shape_), reversed(target_shape)))


def _multilabel_soft_margin_reference(x, y, weight=None, size_average=None, reduce=None, reduction="mean"):
    log_sigmoid = -np.logaddexp(0.0, -x)
    log_rest = -np.logaddexp(0.0, x)
    loss = -(y * log_sigmoid + (1 - y) * log_rest)
    if weight is not None:
        loss = loss * weight
    return _np_reduce(loss.sum(axis=x.ndim - 1) / x.shape[-1], reduction)


def _multilabel_soft_margin_samples(rng):
    yield Sample((values(rng, (4, 3), -3.0, 3.0), (rng.uniform(size=(4, 3)) < 0.5) * 1.0), name="(N, C)")
    yield Sample((values(rng, (5,), -3.0, 3.0), values(rng, (5,), 0.0, 1.0)), {"reduction": "sum"},
                 name="(C,) soft labels sum")
    yield Sample((values(rng, (2, 4, 3), -3.0, 3.0), (rng.uniform(size=(2, 4, 3)) < 0.5) * 1.0,
                  values(rng, (3,), 0.5, 2.0)), {"reduction": "none"}, name="(N, d, C) weight none")


@register(_multilabel_soft_margin_reference, _multilabel_soft_margin_samples, method=False)
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-label one-versus-all logistic loss: for each sample, the mean over the C classes
    (the last dim) of ``-w (y log σ(x) + (1 - y) log σ(-x))``; then reduced over samples.
    dL/dx = w (σ(x) - y) / C.

    Example::

        F.multilabel_soft_margin_loss(vizgrad.tensor([[2.0, -1.0, 0.0]]), vizgrad.tensor([[1.0, 0.0, 1.0]]))
        # tensor(0.3778)
    """
    op = "multilabel_soft_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    if input.ndim == 0:
        raise ShapeError(f"{op}: input must have a class dim (its last): shape (C,) or (N, C), got a 0-d tensor")
    if not input.is_floating_point():
        raise DTypeError(f"{op}: input must be floating point, got {input.dtype.name}")
    _check_not_bool(op, target=target)
    if weight is not None:
        _check_tensors(op, weight=weight)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.shape[-1]
    return _reduce(reductions.sum(loss, dim=input.ndim - 1) / classes, reduction)


def _check_class_labels(op, target, classes, low=0):
    """Integer class labels in [low, classes): int64 as PyTorch asks, each one in range."""
    if target.dtype is not dtypes.int64:
        raise DTypeError(f"{op}: target must hold class indices as int64 (a LongTensor), got {target.dtype.name}"
                         + ("; convert it with .long()" if not target.is_floating_point() else ""))
    if target.numel():
        outside = reductions.any((target < low) | (target >= classes)).item()
        if outside:
            bad = target[(target < low) | (target >= classes)].reshape(-1)[0].item()
            allowed = f"[{low}, {classes})" if low == 0 else f"[{low}, {classes}) (-1 ends a sample's targets)"
            raise IndexingError(f"{op}: target {bad} is out of range: class indices must be in {allowed}")


def _multi_margin_reference(x, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                            reduction="mean"):
    rows = x.reshape(-1, x.shape[-1])
    labels = np.asarray(target).reshape(-1)
    classes = rows.shape[1]
    losses = np.zeros(len(labels))
    for n, label in enumerate(labels):
        for i in range(classes):
            excess = margin - rows[n, label] + rows[n, i]
            if i != label and excess > 0:
                losses[n] += excess ** p * (1.0 if weight is None else weight[label])
    losses = (losses / classes).reshape(np.shape(target))
    return _np_reduce(losses, reduction)


def _multi_margin_samples(rng):
    def scores(shape_):
        # margin - x[y] + x[i] off its kink at 0: scores a multiple of 0.45 apart, so no two are
        # within 0.1 of the margins used (1 and 0.6)
        base = rng.permutation(np.arange(shape_[-1] * 6))[:shape_[-1]] * 0.45
        rows = np.stack([rng.permutation(base) for _ in range(int(np.prod(shape_[:-1])))])
        return (rows + 0.013).reshape(shape_)
    yield Sample((scores((5, 4)), rng.integers(0, 4, size=5)), name="(N, C)")
    yield Sample((scores((5, 4)), rng.integers(0, 4, size=5)), {"p": 2, "reduction": "sum"}, name="p=2 sum")
    yield Sample((scores((4, 3)), rng.integers(0, 3, size=4), 1, 0.6, values(rng, (3,), 0.5, 2.0)),
                 {"reduction": "none"}, name="margin, weight, none")
    yield Sample((scores((4,)), np.asarray(2)), {"p": 2}, name="unbatched")


@register(_multi_margin_reference, _multi_margin_samples, method=False)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss of scores (N, C) or (C,) and class indices y:
    ``lₙ = Σ_{i ≠ yₙ} w[yₙ] max(0, margin - x[n, yₙ] + x[n, i])ᵖ / C`` with p = 1 or 2,
    then reduced over samples. A class counts only where its margin is violated (> 0).

    Example::

        F.multi_margin_loss(vizgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), vizgrad.tensor([3]))   # tensor(0.3250)
    """
    op = "multi_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    power = as_number(op, "p", p)
    if power not in (1, 2):
        raise ArgumentError(f"{op}: only p == 1 and p == 2 are supported, got p={p!r}")
    margin = _margin(op, margin)
    if weight is not None:
        _check_tensors(op, weight=weight)
        if weight.ndim != 1:
            raise ArgumentError(f"{op}: weight must be one-dimensional (one entry per class), got shape "
                                f"{format_shape(weight.shape)}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ShapeError(f"{op}: input must be a non-empty vector (C,) or a matrix (N, C) of scores (N may be 0), "
                         f"got shape {format_shape(input.shape)}")
    if not input.is_floating_point():
        raise DTypeError(f"{op}: input must be floating point, got {input.dtype.name}")
    batch, classes = (input.shape[0] if input.ndim == 2 else 1), input.shape[-1]
    if target.ndim > 1 or target.numel() != batch:
        raise ShapeError(f"{op}: target must be 1-D with one class index per sample: input of shape "
                         f"{format_shape(input.shape)} needs a target of shape ({batch},), got "
                         f"{format_shape(target.shape)}")
    _check_class_labels(op, target, classes)
    if weight is not None:
        if weight.shape[0] != classes:
            raise ShapeError(f"{op}: weight must have one entry per class, {classes}, got shape "
                             f"{format_shape(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise DTypeError(f"{op}: weight is {weight.dtype.name} but input is {input.dtype.name}; they must have "
                             f"the same dtype: convert weight with .to({input.dtype!r})")
    rows = shape.reshape(input, (batch, classes))
    labels = shape.reshape(target, (batch, 1))
    excess = unary.relu(rows - indexing.gather(rows, 1, labels) + margin)     # margin - x[y] + x[i], if > 0
    if power == 2:
        excess = excess * excess
    others = labels != creation.arange(classes, device=input.device)
    losses = reductions.sum(binary.where(others, excess, 0.0), dim=1) / classes
    if weight is not None:
        losses = losses * indexing.index_select(weight, 0, shape.reshape(labels, (-1,)))
    return _reduce(shape.reshape(losses, tuple(target.shape)), reduction)


def _multilabel_margin_reference(x, target, size_average=None, reduce=None, reduction="mean"):
    rows = x.reshape(-1, max(x.shape[-1:] or (1,)))
    labels = np.asarray(target).reshape(rows.shape)
    losses = np.zeros(len(rows))
    for n, (row, label_row) in enumerate(zip(rows, labels)):
        targets = []
        for label in label_row:
            if label < 0:
                break
            targets.append(label)
        for j in targets:
            for i in range(len(row)):
                if i not in targets:
                    losses[n] += max(0.0, 1 - (row[j] - row[i]))
    losses = losses / rows.shape[1]
    return _np_reduce(losses if x.ndim == 2 else losses[0], reduction)


def _multilabel_margin_samples(rng):
    def scores(shape_):          # 1 - (x[j] - x[i]) off its kink at 0
        return (rng.permutation(np.arange(int(np.prod(shape_)))) * 0.3 + 0.05).reshape(shape_)
    yield Sample((scores((3, 4)), np.array([[3, 0, -1, 1], [1, 2, 0, 3], [-1, 2, 0, 0]])), name="(N, C)")
    yield Sample((scores((3, 4)), np.array([[2, 2, -1, 0], [0, -1, -1, -1], [3, 1, -1, 3]])),
                 {"reduction": "none"}, name="repeats, none")
    yield Sample((scores((5,)), np.array([4, 1, -1, 0, 0])), {"reduction": "sum"}, name="unbatched")


@register(_multilabel_margin_reference, _multilabel_margin_samples, method=False)
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss. Each sample's ``target`` row lists its classes, ended by the
    first -1 (the rest is ignored); then ``lₙ = Σ_j Σ_{i ∉ targets} max(0, 1 - (x[yⱼ] - x[i])) / C``
    over its listed targets yⱼ and the other classes i, then reduced over samples.

    Example::

        F.multilabel_margin_loss(vizgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), vizgrad.tensor([[3, 0, -1, 1]]))
        # tensor(0.8500)
    """
    op = "multilabel_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    if input.ndim > 2 or (input.ndim >= 1 and input.shape[-1] == 0):
        raise ShapeError(f"{op}: input must be a non-empty vector (C,) or a matrix (N, C) of scores (N may be 0), "
                         f"got shape {format_shape(input.shape)}")
    if not input.is_floating_point():
        raise DTypeError(f"{op}: input must be floating point, got {input.dtype.name}")
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: target must have the input's shape {format_shape(input.shape)} (class indices, "
                         f"ended by -1), got {format_shape(target.shape)}")
    classes = input.shape[-1] if input.ndim else 1
    _check_class_labels(op, target, classes, low=-1)
    rows = shape.reshape(input, (-1, classes))
    labels = shape.reshape(target, (-1, classes))
    listed = reductions.cumprod((labels >= 0).long(), dim=1) > 0        # the slots before the first -1
    labels = binary.where(listed, labels, 0)
    classes_range = creation.arange(classes, device=input.device)
    is_target = reductions.any((shape.unsqueeze(labels, 2) == classes_range) & shape.unsqueeze(listed, 2), dim=1)
    # (N, slot j, class i): 1 - (x[yⱼ] - x[i]) for listed slots j and classes i that are no target
    excess = unary.relu(1 - shape.unsqueeze(indexing.gather(rows, 1, labels), 2) + shape.unsqueeze(rows, 1))
    counted = shape.unsqueeze(listed, 2) & ~shape.unsqueeze(is_target, 1)
    losses = reductions.sum(binary.where(counted, excess, 0.0), dim=(1, 2)) / classes
    return _reduce(losses if input.ndim == 2 else shape.reshape(losses, ()), reduction)


def _cosine_embedding_reference(x1, x2, y, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    dim = np.ndim(y)
    cosine = (x1 * x2).sum(axis=dim) / np.sqrt(((x1 * x1).sum(axis=dim) + 1e-12) * ((x2 * x2).sum(axis=dim) + 1e-12))
    loss = np.where(y == 1, 1 - cosine, 0.0) + np.where(y == -1, np.maximum(cosine - margin, 0.0), 0.0)
    return _np_reduce(loss, reduction)


def _cosine_embedding_samples(rng):
    def pairs(batch, dims, margin):
        """Rows whose cosine stays 0.1 away from ``margin`` (the kink of the -1 rows)."""
        x1, x2 = values(rng, (batch, dims)), values(rng, (batch, dims))
        for n in range(batch):
            while abs(np.dot(x1[n], x2[n]) / np.linalg.norm(x1[n]) / np.linalg.norm(x2[n]) - margin) < 0.1:
                x2[n] = values(rng, (dims,))
        return x1, x2
    x1, x2 = pairs(6, 3, 0.0)
    yield Sample((x1, x2, _signs(rng, (6,))), name="(N, D)")
    x1, x2 = pairs(5, 4, 0.3)
    yield Sample((x1, x2, np.array([1.0, -1.0, -1.0, 0.0, 1.0])), {"margin": 0.3, "reduction": "none"},
                 name="margin, a 0 target, none")
    x1, x2 = pairs(1, 4, -0.2)
    yield Sample((x1[0], x2[0], np.asarray(-1.0)), {"margin": -0.2, "reduction": "sum"}, name="unbatched")


@register(_cosine_embedding_reference, _cosine_embedding_samples, method=False)
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Cosine embedding loss of pairs of rows (N, D) (or one pair (D,)) and labels y:
    ``1 - cos(x1, x2)`` where y = 1, ``max(0, cos(x1, x2) - margin)`` where y = -1 (0 for other
    labels), then reduced; cos = x1·x2 / √((‖x1‖² + 1e-12)(‖x2‖² + 1e-12)).

    Example::

        F.cosine_embedding_loss(vizgrad.tensor([[1.0, 0.0]]), vizgrad.tensor([[1.0, 1.0]]),
                                vizgrad.tensor([1.0]))    # tensor(0.2929)
    """
    op = "cosine_embedding_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input1=input1, input2=input2, target=target)
    _check_reduction(op, reduction)
    margin = _margin(op, margin)
    if target.ndim > 1:
        raise ShapeError(f"{op}: target must be 0-D or 1-D (one label per pair, multi-target is not supported), "
                         f"got shape {format_shape(target.shape)}")
    expected = target.ndim + 1
    if input1.ndim != expected or input2.ndim != expected:
        raise ShapeError(f"{op}: a {target.ndim}-D target expects {expected}-D inputs, got input1 of shape "
                         f"{format_shape(input1.shape)} and input2 of shape {format_shape(input2.shape)}")
    input1, input2 = (x if x.is_floating_point() else x.to(dtypes.get_default_dtype()) for x in (input1, input2))
    dim = target.ndim
    squares = (reductions.sum(input1 * input1, dim=dim) + 1e-12) * (reductions.sum(input2 * input2, dim=dim) + 1e-12)
    cosine = reductions.sum(input1 * input2, dim=dim) / unary.sqrt(squares)
    loss = binary.where(target == 1, 1 - cosine, 0.0) + binary.where(target == -1, (cosine - margin).clamp(min=0),
                                                                       0.0)
    return _reduce(loss, reduction)


def _pairwise_reference(x1, x2, p=2.0, eps=1e-6):
    difference = np.abs(x1 - x2 + eps)
    return (difference ** p).sum(axis=-1) ** (1 / p) if difference.ndim else difference


def _triplet_reference(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                       reduce=None, reduction="mean"):
    near = _pairwise_reference(anchor, positive, p, eps)
    far = _pairwise_reference(anchor, negative, p, eps)
    if swap:
        far = np.minimum(far, _pairwise_reference(positive, negative, p, eps))
    return _np_reduce(np.maximum(margin + near - far, 0.0), reduction)


def _triplets(rng, shape_, margin, reference, **options):
    """(anchor, positive, negative) whose hinge stays 0.1 away from its kink (and, with swap,
    whose two negative distances stay apart)."""
    while True:
        anchor, positive, negative = (values(rng, shape_) for _ in range(3))
        hinge = reference(anchor, positive, negative, margin=margin, reduction="none", **options)
        gaps = [np.abs(hinge)]
        if options.get("swap"):
            p, eps = options.get("p", 2.0), options.get("eps", 1e-6)
            gaps.append(np.abs(_pairwise_reference(anchor, negative, p, eps)
                               - _pairwise_reference(positive, negative, p, eps)))
        if all(np.all(gap > 0.1) for gap in gaps):
            return anchor, positive, negative


def _triplet_samples(rng):
    yield Sample(_triplets(rng, (5, 3), 1.0, _triplet_reference), name="(N, D)")
    yield Sample(_triplets(rng, (4, 3), 0.5, _triplet_reference, p=1.0, swap=True),
                 {"margin": 0.5, "p": 1.0, "swap": True, "reduction": "none"}, name="p=1 swap none")
    yield Sample(_triplets(rng, (2, 3, 4), 2.0, _triplet_reference, p=3.0, eps=1e-3),
                 {"margin": 2.0, "p": 3.0, "eps": 1e-3, "reduction": "sum"}, name="(N, d, D) p=3 eps sum")
    yield Sample(_triplets(rng, (4,), 1.5, _triplet_reference), {"margin": 1.5}, name="unbatched")


def _check_triplet(op, anchor, positive, negative, reduction, margin):
    _check_tensors(op, anchor=anchor, positive=positive, negative=negative)
    _check_reduction(op, reduction)
    margin = _margin(op, margin)
    if margin <= 0:
        raise ArgumentError(f"{op}: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(f"{op}: the anchor, positive, and negative tensors are expected to have the same number "
                         f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                         f"{negative.ndim}D inputs")
    return margin


def _triplet_hinge(distance, anchor, positive, negative, margin, swap):
    near = distance(anchor, positive)
    far = distance(anchor, negative)
    if swap:                      # the positive may be nearer the negative than the anchor is
        far = binary.minimum(far, distance(positive, negative))
    return (margin + near - far).clamp(min=0)


@register(_triplet_reference, _triplet_samples, method=False)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """Triplet loss ``max(0, margin + d(a, p) - d(a, n))`` per triplet, d the p-norm distance
    ``‖x1 - x2 + eps‖ₚ`` along the last dim (:func:`pairwise_distance`), then reduced. With
    ``swap``, d(a, n) is replaced by min(d(a, n), d(p, n)) (Balntas et al., 2016).

    Example::

        a, p, n = vizgrad.zeros(1, 2), vizgrad.tensor([[0.0, 1.0]]), vizgrad.tensor([[0.0, 1.5]])
        F.triplet_margin_loss(a, p, n)            # tensor(0.5000): 1 + 1 - 1.5
    """
    op = "triplet_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    margin = _check_triplet(op, anchor, positive, negative, reduction, margin)
    p, eps = as_number(op, "p", p), as_number(op, "eps", eps)

    def distance(x1, x2):
        return pairwise_distance(x1, x2, p, eps)
    return _reduce(_triplet_hinge(distance, anchor, positive, negative, margin, bool(swap)), reduction)


def _triplet_distance_reference(anchor, positive, negative, distance_function=None, margin=1.0, swap=False,
                                reduction="mean"):
    return _triplet_reference(anchor, positive, negative, margin=margin, swap=swap, reduction=reduction)


def _triplet_distance_samples(rng):
    yield Sample(_triplets(rng, (5, 3), 1.0, _triplet_reference), name="(N, D)")
    yield Sample(_triplets(rng, (4, 3), 0.5, _triplet_reference, swap=True), {"margin": 0.5, "swap": True,
                                                                               "reduction": "none"},
                 name="swap none")


@register(_triplet_distance_reference, _triplet_distance_samples, method=False)
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any distance: ``distance_function(x1, x2)`` returns one
    non-negative distance per pair (default :func:`pairwise_distance`); the loss is
    ``max(0, margin + d(a, p) - d(a, n))`` per triplet, then reduced.

    Example::

        cosine_distance = lambda x, y: 1 - F.cosine_similarity(x, y)
        F.triplet_margin_with_distance_loss(a, p, n, distance_function=cosine_distance)
    """
    op = "triplet_margin_with_distance_loss"
    margin = _check_triplet(op, anchor, positive, negative, reduction, margin)
    if distance_function is None:
        distance_function = pairwise_distance
    elif not callable(distance_function):
        raise ArgumentTypeError(f"{op}: distance_function must be a callable taking two tensors, got "
                                f"{type(distance_function).__name__}")
    return _reduce(_triplet_hinge(distance_function, anchor, positive, negative, margin, bool(swap)), reduction)


# --- likelihoods ---------------------------------------------------------------------------------

def _poisson_nll_reference(x, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                           reduction="mean"):
    loss = np.exp(x) - target * x if log_input else x - target * np.log(x + eps)
    if full:
        safe = np.where(target > 1, target, 1.0)
        loss = loss + np.where(target > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)
    return _np_reduce(loss, reduction)


def _poisson_nll_samples(rng):
    counts = rng.poisson(2.0, size=(3, 4)).astype(np.float64)
    yield Sample((values(rng, (3, 4)), counts), name="log input")
    yield Sample((values(rng, (3, 4), 0.2, 3.0), counts), {"log_input": False, "reduction": "sum"},
                 name="rates sum")
    yield Sample((values(rng, (2, 3)), np.array([[0.0, 0.5, 1.5], [3.0, 7.0, 0.8]])), {"full": True,
                                                                                     "reduction": "none"},
                 name="full none")
    yield Sample((values(rng, (2, 3), 0.2, 3.0), values(rng, (3,), 0.5, 4.0)),
                 {"log_input": False, "full": True, "eps": 1e-3}, name="rates full eps broadcast")


@register(_poisson_nll_reference, _poisson_nll_samples, method=False)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of counts y under a Poisson of rate λ, up to log(y!):
    ``e^x - y x`` with ``log_input`` (x = log λ), else ``x - y log(x + eps)`` (x = λ). ``full``
    adds Stirling's approximation of log(y!), ``y log y - y + ½ log(2π y)``, where y > 1.
    Then reduced.

    Example::

        F.poisson_nll_loss(vizgrad.tensor([0.0, 1.0]), vizgrad.tensor([1.0, 2.0]), reduction='none')
        # tensor([1.0000, 0.7183])
    """
    op = "poisson_nll_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensors(op, input=input, target=target)
    _check_reduction(op, reduction)
    eps = as_number(op, "eps", eps)
    if log_input:
        loss = unary.exp(input) - target * input
    else:
        loss = input - target * unary.log(input + eps)
    if full:
        _check_not_bool(op, target=target)
        counted = target > 1
        safe = binary.where(counted, target, 1.0)          # no log of 0 where the term is dropped
        stirling = safe * unary.log(safe) - safe + unary.log(safe * (2 * math.pi)) * 0.5
        loss = loss + binary.where(counted, stirling, 0.0)
    return _reduce(loss, reduction)


def _gaussian_nll_reference(x, target, var, full=False, eps=1e-6, reduction="mean"):
    var = np.asarray(var, dtype=np.float64)
    if var.shape != x.shape and x.shape[:-1] == var.shape:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _np_reduce(loss, reduction)


def _gaussian_nll_samples(rng):
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3)), values(rng, (4, 3), 0.2, 2.0)), name="heteroscedastic")
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3)), values(rng, (4,), 0.2, 2.0)),
                 {"full": True, "reduction": "sum"}, name="one var per sample, full, sum")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (2, 3, 4)), values(rng, (2, 1, 4), 0.2, 2.0)),
                 {"reduction": "none"}, name="broadcast var, none")
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3)), 0.7), name="float var")
    yield Sample((values(rng, (3,)), values(rng, (3,)), np.array([0.5, 0.02, 2.0])), {"eps": 1e-2},
                 name="eps")


@register(_gaussian_nll_reference, _gaussian_nll_samples, method=False)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of ``target`` under a Gaussian of mean ``input`` and variance
    ``var``: ``½ (log v + (x - y)² / v)`` (plus ½ log 2π with ``full``), then reduced.

    ``var`` has the input's shape, or one dim fewer (one variance per sample: it gets a last
    dim of 1), or the input's number of dims with a size of 1 in one dim that differs; a
    float is one variance for all. Values below ``eps`` are clamped to ``eps`` for the loss
    while the gradient passes to ``var`` unchanged, as in PyTorch.

    Example::

        F.gaussian_nll_loss(vizgrad.zeros(2), vizgrad.tensor([1.0, 2.0]), vizgrad.ones(2))   # tensor(1.2500)
    """
    op = "gaussian_nll_loss"
    _check_tensors(op, input=input, target=target)
    if isinstance(var, Tensor):
        if not var.is_floating_point():
            raise DTypeError(f"{op}: var must be floating point, got {var.dtype.name}")
        if var.numel() and reductions.any(var < 0).item():
            raise ArgumentError(f"{op}: var has negative entry/entries")
    else:
        var = as_number(op, "var", var)
        if var < 0:
            raise ArgumentError(f"{op}: var has negative entry/entries (var={var})")
        var = creation.full_like(input, var, dtype=input.dtype if input.is_floating_point()
                                 else dtypes.get_default_dtype())
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = shape.unsqueeze(var, -1)                  # one variance per sample
        elif not (var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ShapeError(f"{op}: var is of incorrect size: input of shape {format_shape(input.shape)} takes a "
                             f"var of its shape, of {format_shape(input.shape[:-1])}, or of its shape with a 1 "
                             f"in one dim; got {format_shape(var.shape)}")
    if reduction not in _REDUCTIONS:
        raise ArgumentError(f"{op}: {reduction!r} is not valid; use one of " + ", ".join(map(repr, _REDUCTIONS)))
    eps = as_number(op, "eps", eps)
    # clamped to eps for the loss, the gradient passed through unchanged (PyTorch clamps in
    # place without recording): (v - v.detach()) is 0 in value and 1 in derivative
    var = binary.where(var < eps, (var - var.detach()) + eps, var)
    loss = (unary.log(var) + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- pdist --------------------------------------------------------------------------------------

def _pdist_reference(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    difference = np.abs(x[i] - x[j])
    if p == 0:
        return (difference != 0).sum(axis=-1).astype(x.dtype)
    if p == math.inf:
        return difference.max(axis=-1, initial=0.0)
    return (difference ** p).sum(axis=-1) ** (1 / p)


def _pdist_samples(rng):
    yield Sample((values(rng, (5, 3)),), name="p 2")
    yield Sample((values(rng, (4, 2)),), {"p": 1.0}, name="p 1")
    yield Sample((values(rng, (4, 3)),), {"p": 3.0}, name="p 3")
    yield Sample((values(rng, (3, 4)),), {"p": math.inf}, name="p inf")


@register(_pdist_reference, _pdist_samples, method=False)
def pdist(input, p=2):
    """The p-norm distances between the rows of an (N, M) input, every pair once: the upper
    triangle of ``cdist(input, input)`` row by row, N·(N-1)/2 values,

    out = [‖x_i - x_j‖ₚ for i < j].

    Gradients are those of the norm (zero where two rows coincide, as in PyTorch).

    Example::

        F.pdist(vizgrad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))    # tensor([5.0000, 1.0000, 4.2426])
    """
    from ..linalg import vector_norm
    op = "pdist"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim != 2:
        raise ShapeError(f"{op}: only supports 2D tensors, got: {input.ndim}D (shape {format_shape(input.shape)})")
    if not input.is_floating_point():
        raise DTypeError(f"{op}: only supports floating-point dtypes, got {input.dtype.name}")
    p = as_number(op, "p", p)
    if p < 0:
        raise ArgumentError(f"{op}: only supports non-negative p values, got p={p}")
    rows = input.shape[0]
    first, second = np.triu_indices(rows, 1)
    first = creation.tensor(first.astype(np.int64), device=input.device)
    second = creation.tensor(second.astype(np.int64), device=input.device)
    return vector_norm(input[first] - input[second], ord=p, dim=1)


# --- ctc_loss -----------------------------------------------------------------------------------
# Connectionist temporal classification: the probability of a target sequence summed over every
# alignment of it (blanks between and around labels, labels repeated) to the T input steps, by
# the forward-backward recursions over the extended target l' = (blank, l1, blank, l2, ..., blank),
# in log space. The gradient is PyTorch's: with α and β both counting step t's emission,
#   dL/dlog_probs[t, n, c] = exp(lp[t, n, c]) - exp(log Σ_{s: l'_s = c} α_t(s) β_t(s) + L_n - lp[t, n, c]),
# which is the gradient of L through a log_softmax (what the log_probs are meant to be).

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
    (see the comment above :class:`CtcLoss`); no second derivative, as in PyTorch.

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
