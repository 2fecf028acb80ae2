"""Loss layers: each wraps one functional loss and keeps its options (and class weights,
as buffers) as PyTorch does. Call them as ``criterion(input, target)``."""

from ..ops.loss import legacy_reduction
from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error ``|x - y|`` (see :func:`vizgrad.nn.functional.l1_loss`).

    Example::

        nn.L1Loss()(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 4.0]))   # tensor(1.)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``(x - y)²`` (see :func:`vizgrad.nn.functional.mse_loss`).

    Example::

        nn.MSELoss()(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 4.0]))  # tensor(2.)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above (see :func:`vizgrad.nn.functional.huber_loss`).

    Example::

        nn.HuberLoss(delta=1.0)(vizgrad.tensor([3.0]), vizgrad.tensor([0.0]))  # tensor(2.5000)
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Huber loss divided by ``beta`` (see :func:`vizgrad.nn.functional.smooth_l1_loss`).

    Example::

        nn.SmoothL1Loss()(vizgrad.tensor([0.5]), vizgrad.tensor([0.0]))   # tensor(0.1250)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities
    (see :func:`vizgrad.nn.functional.nll_loss`).

    Example::

        nn.NLLLoss()(F.log_softmax(vizgrad.randn(3, 5), dim=1), vizgrad.tensor([1, 0, 4]))
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or probabilities, with class
    ``weight``, ``ignore_index`` and ``label_smoothing`` (see
    :func:`vizgrad.nn.functional.cross_entropy`).

    Example::

        criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        loss = criterion(model(x), y)        # logits (N, C), y (N,) int64
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (see :func:`vizgrad.nn.functional.binary_cross_entropy`).

    Example::

        nn.BCELoss()(vizgrad.tensor([0.8, 0.1]), vizgrad.tensor([1.0, 0.0]))   # tensor(0.1643)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably, with per-element ``weight`` and
    per-class ``pos_weight`` (see :func:`vizgrad.nn.functional.binary_cross_entropy_with_logits`).

    Example::

        nn.BCEWithLogitsLoss()(vizgrad.tensor([2.0, -1.0]), vizgrad.tensor([1.0, 0.0]))
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence, input as log-probabilities (see
    :func:`vizgrad.nn.functional.kl_div`); use ``reduction='batchmean'`` for the true KL.

    Example::

        nn.KLDivLoss(reduction="batchmean")(F.log_softmax(a, dim=1), F.softmax(b, dim=1))
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
