"""The ranking, hinge and margin losses: ``margin_ranking_loss``, ``hinge_embedding_loss``,
``soft_margin_loss``, ``multilabel_soft_margin_loss``, ``multi_margin_loss``,
``multilabel_margin_loss``, ``cosine_embedding_loss`` and the triplet losses.

PyTorch computes most of these as compositions of elementwise ops, and so does vizgrad
(``soft_margin_loss`` is one op, as in PyTorch). ``multi_margin_loss`` and
``multilabel_margin_loss``, one kernel each in PyTorch, are compositions here too (gather the
target scores, hinge, masked sum), so their graphs show those steps and every order of
derivative comes for free. Their hinges are ``clamp(min=0)`` (a gradient of 1 at the kink, as
PyTorch's clamp_min) except the multi-class ones, which count a class only where its margin is
strictly violated, as PyTorch's kernels test it (``z > 0``: a NaN excess counts nothing, and a
class weight multiplies only the terms counted).
"""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, IndexingError,
                      as_integer_scalar, as_number)
from .. import creation
from . import binary, cumulative, shape, truth, unary
from . import gather_scatter
from . import index as indexing
from . import reduce as reductions  # `reduce` is also PyTorch's legacy argument name
from .composite_activations import logsigmoid
from .distance import pairwise_distance
from .loss import (_check_not_bool, _check_reduction, _check_tensors, _np_reduce, _reduce, _reduced, _unreduced,
                   legacy_reduction)
from .registry import Sample, register
from .samples import values


def _margin(op, value, name="margin"):
    """A margin as a float: PyTorch's argument is a double, so an int margin still gives a
    floating loss."""
    return float(as_number(op, name, value))


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
        outside = truth.any((target < low) | (target >= classes)).item()
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
    excess = rows - gather_scatter.gather(rows, 1, labels) + margin      # margin - x[y] + x[i]
    # a class counts where its excess is > 0, as PyTorch's kernel tests it: a NaN excess is not
    counted = (labels != creation.arange(classes, device=input.device)) & (excess > 0)
    excess = binary.where(counted, excess, 0.0)
    if power == 2:
        excess = excess * excess
    if weight is not None:          # w[y] multiplies the counted terms only: an inf weight times no term is 0
        class_weight = shape.reshape(indexing.index_select(weight, 0, shape.reshape(labels, (-1,))), (batch, 1))
        excess = excess * binary.where(counted, class_weight, 0.0)
    losses = reductions.sum(excess, dim=1) / classes
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
    listed = cumulative.cumprod((labels >= 0).long(), dim=1) > 0        # the slots before the first -1
    labels = binary.where(listed, labels, 0)
    classes_range = creation.arange(classes, device=input.device)
    is_target = truth.any((shape.unsqueeze(labels, 2) == classes_range) & shape.unsqueeze(listed, 2), dim=1)
    # (N, slot j, class i): 1 - (x[yⱼ] - x[i]) for listed slots j and classes i that are no target
    excess = 1 - shape.unsqueeze(gather_scatter.gather(rows, 1, labels), 2) + shape.unsqueeze(rows, 1)
    # counted where the excess is > 0, as PyTorch's kernel tests it: a NaN excess is not
    counted = shape.unsqueeze(listed, 2) & ~shape.unsqueeze(is_target, 1) & (excess > 0)
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
