"""``Embedding``: a lookup table of learned vectors; ``EmbeddingBag``: its rows reduced per bag."""

from ..errors import ArgumentError, as_int, check_size
from .. import creation
from ..autograd.grad_mode import no_grad
from . import functional as F
from . import init
from .module import Module, Parameter


class _EmbeddingTable(Module):
    """The ``num_embeddings`` x ``embedding_dim`` weight and ``padding_idx`` that
    :class:`Embedding` and :class:`EmbeddingBag` share."""

    def _init_table(self, layer, num_embeddings, embedding_dim, padding_idx, _weight, device, dtype):
        num_embeddings = check_size(layer, "num_embeddings", num_embeddings)
        embedding_dim = check_size(layer, "embedding_dim", embedding_dim)
        if padding_idx is not None:
            padding_idx = as_int(layer, "padding_idx", padding_idx)
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ArgumentError(f"{layer}: padding_idx ({padding_idx}) must be within num_embeddings "
                                    f"({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(creation.empty(num_embeddings, embedding_dim, device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ArgumentError(f"{layer}: _weight of shape {tuple(_weight.shape)} does not match "
                                    f"(num_embeddings, embedding_dim) = ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0


class Embedding(_EmbeddingTable):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``; integer indices of
    any shape look up rows. The weight starts as N(0, 1); the ``padding_idx`` row starts
    at zero and gets no gradient.

    Example::

        emb = nn.Embedding(10, 3, padding_idx=0)
        emb(vizgrad.tensor([[1, 2, 0]])).shape     # (1, 3, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self._init_table("Embedding", num_embeddings, embedding_dim, padding_idx, _weight, device, dtype)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        self.weight.requires_grad = not _freeze

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is (a copy of) the 2-D ``embeddings``; frozen by default."""
        if embeddings.ndim != 2:
            raise ArgumentError(f"Embedding.from_pretrained: embeddings must be 2-dimensional, got shape "
                                f"{tuple(embeddings.shape)}")
        rows, columns = embeddings.shape
        return cls(rows, columns, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings.detach().clone(), _freeze=freeze)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text


class EmbeddingBag(_EmbeddingTable):
    """A table of ``num_embeddings`` vectors whose looked-up rows are reduced per bag
    (``mode`` 'sum', 'mean' or 'max'; see :func:`vizgrad.nn.functional.embedding_bag`):
    ``forward(input, offsets=None, per_sample_weights=None)``.

    Example::

        bag = nn.EmbeddingBag(10, 3, mode="sum")
        bag(vizgrad.tensor([1, 2, 4, 5, 4, 3]), vizgrad.tensor([0, 4])).shape    # (2, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ArgumentError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self._init_table("EmbeddingBag", num_embeddings, embedding_dim, padding_idx, _weight, device, dtype)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is (a copy of) the 2-D ``embeddings``; frozen by default."""
        if embeddings.ndim != 2:
            raise ArgumentError(f"EmbeddingBag.from_pretrained: embeddings must be 2-dimensional, got shape "
                                f"{tuple(embeddings.shape)}")
        rows, columns = embeddings.shape
        bag = cls(rows, columns, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings.detach().clone(), include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        text += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
