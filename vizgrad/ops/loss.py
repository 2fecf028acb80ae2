"""Loss functions, with PyTorch's arguments and ``reduction`` ('mean', 'sum' or 'none'):
the helpers every loss module shares (``legacy_reduction``, the checks, the reductions inside
an op's forward and backward), and the regression losses, ``kl_div`` and the likelihoods.

The losses PyTorch computes as one function (``mse_loss``, ``huber_loss``,
``smooth_l1_loss``) are one op each, reduction included, so ``grad_fn`` is
``MseLossBackward0`` with the inputs' nodes next, as in PyTorch; ``l1_loss`` is
``mean(abs(x - y))``, the nodes PyTorch records for it. ``kl_div`` and the likelihoods
(``poisson_nll_loss``, ``gaussian_nll_loss``) are compositions of differentiable ops, as
PyTorch computes them.

The other families: :mod:`.classification` (nll, cross entropy, the binary cross entropies),
:mod:`.margin` (ranking, hinge and margin losses), :mod:`.distance` (pairwise distances and
cosine similarity), :mod:`.ctc` (``ctc_loss``).
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, as_number
from ..tensor import Tensor
from .. import creation
from . import binary, shape, truth, unary
from . import reduce as reductions  # `reduce` is also PyTorch's legacy argument name
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


def _check_not_bool(op, **tensors):
    for name, tensor in tensors.items():
        if tensor.dtype is dtypes.bool_:
            raise DTypeError(f"{op}: {name} is bool, which this loss cannot subtract or negate; convert it with "
                             ".float()")


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


# --- divergence --------------------------------------------------------------------------

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
        if var.numel() and truth.any(var < 0).item():
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
