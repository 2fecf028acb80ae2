"""``CosineSimilarity`` and ``PairwiseDistance``: comparing two batches of vectors."""

from . import functional as F
from .module import Module


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (see :func:`vizgrad.nn.functional.cosine_similarity`).

    Example::

        nn.CosineSimilarity(dim=1)(vizgrad.randn(4, 3), vizgrad.randn(4, 3)).shape    # (4,)
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``‖x1 - x2 + eps‖ₚ`` along the last dim (see :func:`vizgrad.nn.functional.pairwise_distance`).

    Example::

        nn.PairwiseDistance()(vizgrad.randn(4, 3), vizgrad.randn(4, 3)).shape    # (4,)
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
