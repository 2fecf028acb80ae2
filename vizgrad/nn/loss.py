"""Loss layers: each wraps one functional loss and keeps its options (and class weights,
as buffers) as PyTorch does. Call them as ``criterion(input, target)``."""

from ..errors import ArgumentError
from ..ops.loss import legacy_reduction
from . import functional as F
from .distance import PairwiseDistance
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


class MarginRankingLoss(_Loss):
    """Ranking hinge ``max(0, -y (x1 - x2) + margin)`` (see :func:`vizgrad.nn.functional.margin_ranking_loss`).

    Example::

        nn.MarginRankingLoss(margin=0.5)(score_a, score_b, vizgrad.tensor([1.0, -1.0]))
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for y = 1, ``max(0, margin - x)`` for y = -1 (see
    :func:`vizgrad.nn.functional.hinge_embedding_loss`).

    Example::

        nn.HingeEmbeddingLoss()(distances, vizgrad.tensor([1.0, -1.0, 1.0]))
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + e^(-y x))`` (see :func:`vizgrad.nn.functional.soft_margin_loss`).

    Example::

        nn.SoftMarginLoss()(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([1.0, -1.0]))   # tensor(1.4100)
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss, averaged over classes (see
    :func:`vizgrad.nn.functional.multilabel_soft_margin_loss`).

    Example::

        nn.MultiLabelSoftMarginLoss()(logits, labels)      # logits (N, C), labels (N, C) of 0 and 1
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see :func:`vizgrad.nn.functional.multi_margin_loss`); ``p`` is 1 or 2,
    ``weight`` one entry per class.

    Example::

        nn.MultiMarginLoss()(vizgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), vizgrad.tensor([3]))   # tensor(0.3250)
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ArgumentError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got p={p!r}")
        if weight is not None and weight.ndim != 1:
            raise ArgumentError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
                                "instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss with targets listed as class indices ended by -1 (see
    :func:`vizgrad.nn.functional.multilabel_margin_loss`).

    Example::

        nn.MultiLabelMarginLoss()(vizgrad.tensor([[0.1, 0.2, 0.4, 0.8]]), vizgrad.tensor([[3, 0, -1, 1]]))
        # tensor(0.8500)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for y = 1, ``max(0, cos(x1, x2) - margin)`` for y = -1 (see
    :func:`vizgrad.nn.functional.cosine_embedding_loss`).

    Example::

        nn.CosineEmbeddingLoss(margin=0.2)(a, b, vizgrad.tensor([1.0, -1.0]))    # a, b of shape (2, D)
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, margin + ‖a - p‖ - ‖a - n‖)`` per triplet (see
    :func:`vizgrad.nn.functional.triplet_margin_loss`).

    Example::

        nn.TripletMarginLoss(margin=1.0, p=2)(anchor, positive, negative)
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ArgumentError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any ``distance_function`` (default :class:`PairwiseDistance`, a child
    module here as in PyTorch); see :func:`vizgrad.nn.functional.triplet_margin_with_distance_loss`.

    Example::

        nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: 1 - F.cosine_similarity(x, y))
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ArgumentError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                                "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood of counts (see :func:`vizgrad.nn.functional.poisson_nll_loss`).

    Example::

        nn.PoissonNLLLoss()(log_rates, counts)        # log_input=True: the input is log λ
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood of targets given predicted means and variances (see
    :func:`vizgrad.nn.functional.gaussian_nll_loss`); called as ``criterion(input, target, var)``.

    Example::

        nn.GaussianNLLLoss()(mean, target, var)       # var: same shape, one per sample, or a float
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see :func:`vizgrad.nn.functional.ctc_loss`):
    ``forward(log_probs, targets, input_lengths, target_lengths)``.

    Example::

        ctc = nn.CTCLoss()
        log_probs = vizgrad.randn(50, 4, 20).log_softmax(2)
        ctc(log_probs, vizgrad.randint(1, 20, (4, 10)), [50] * 4, [10] * 4)
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
