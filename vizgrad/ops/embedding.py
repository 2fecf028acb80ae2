"""``embedding_bag``: the rows of a table looked up and reduced per bag (sum, mean or max).

A composition of differentiable ops, as it is one step of a model: the rows come from
:func:`vizgrad.nn.functional.embedding` (so ``max_norm`` renormalizes as there), are
weighted by ``per_sample_weights``, and are summed into their bags with ``index_add``
(whose gradient gathers back) or, for ``max``, laid out one bag per row and reduced with
``max`` (the gradient goes to each bag's largest entry). Non-finite entries go where PyTorch's
CPU kernel puts them: a padded entry is skipped, not multiplied by 0 (an inf row of it adds
nothing), and ``max`` keeps a bag's first entry unless a later one is greater (a NaN counts
only as the first).
"""

import numpy as np

from .. import creation, dtypes
from ..errors import ArgumentError, DTypeError, IndexingError, ShapeError, format_shape, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import values

_MODES = ("sum", "mean", "max")


def _bags(op, input, offsets, include_last_offset):
    """(flat indices, start and end of each bag) from a 2-D input or a 1-D input with offsets."""
    if input.ndim == 2:
        if offsets is not None:
            raise ArgumentError(f"{op}: if input is 2D, then offsets has to be None, as input is treated as a "
                                f"mini-batch of fixed length sequences. However, found offsets of type "
                                f"{type(offsets).__name__}")
        bags, length = input.shape
        starts = np.arange(bags, dtype=np.int64) * length
        return input.reshape(-1), starts, starts + length
    if input.ndim != 1:
        raise ShapeError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim} (shape "
                         f"{format_shape(input.shape)})")
    if offsets is None:
        raise ArgumentError(f"{op}: offsets has to be a 1D Tensor but got None")
    if not isinstance(offsets, Tensor):
        raise not_a_tensor(op, "offsets", offsets)
    if offsets.ndim != 1:
        raise ShapeError(f"{op}: offsets has to be a 1D Tensor, got shape {format_shape(offsets.shape)}")
    if offsets.is_floating_point() or offsets.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: offsets must be integers, got {offsets.dtype.name}")
    marks = np.asarray(offsets.cpu().numpy(), dtype=np.int64)
    total = input.shape[0]
    if marks.size and marks[0] != 0:
        raise ArgumentError(f"{op}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                            f"from position 0. However, got {marks[0]}")
    if marks.size and marks[-1] > total:
        raise ArgumentError(f"{op}: offsets[-1] can not be greater than input's length ({total}), but got "
                            f"offsets[-1] of {marks[-1]}")
    if np.any(np.diff(marks) < 0):
        raise ArgumentError(f"{op}: offsets must be non-decreasing, got {marks.tolist()}")
    if include_last_offset:     # (the last bag runs to the input's end, whatever the last offset, as in PyTorch)
        return input, marks[:-1], np.append(marks[1:-1], total).astype(np.int64)
    return input, marks, np.append(marks[1:], total).astype(np.int64)


def _embedding_bag_reference(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                             mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                             padding_idx=None):
    if input.ndim == 2:
        starts = np.arange(input.shape[0]) * input.shape[1]
        ends = starts + input.shape[1]
        input = input.reshape(-1)
        per_sample_weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    else:
        starts = offsets[:-1] if include_last_offset else offsets
        ends = np.append(offsets[1:-1] if include_last_offset else offsets[1:], len(input))
    if padding_idx is not None:
        padding_idx %= weight.shape[0]
    out = np.zeros((len(starts), weight.shape[1]), dtype=weight.dtype)
    for b, (start, end) in enumerate(zip(starts, ends)):
        kept = [i for i in range(start, end) if input[i] != padding_idx]
        if not kept:
            continue
        rows = weight[input[kept]]
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[kept][:, None]
        out[b] = {"sum": rows.sum(axis=0), "mean": rows.mean(axis=0), "max": rows.max(axis=0)}[mode]
    return out


def _embedding_bag_samples(rng):
    def distinct(shape):     # no ties within a bag's max
        return (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 - 1.0).astype(np.float64)
    weight = distinct((6, 3))
    yield Sample((np.array([[0, 2, 4], [5, 1, 1]]), weight), name="2-D, mean")
    yield Sample((np.array([1, 2, 4, 5, 4, 3, 2]), weight, np.array([0, 2, 2, 5])), {"mode": "sum"},
                 name="offsets, an empty bag, sum")
    yield Sample((np.array([1, 2, 4, 5, 0, 3, 2]), weight, np.array([0, 3, 6])),
                 {"mode": "max", "include_last_offset": True}, name="max, include_last_offset")
    yield Sample((np.array([1, 2, 4, 5, 4, 3]), weight, np.array([0, 4])),
                 {"mode": "sum", "per_sample_weights": values(rng, (6,))}, name="per_sample_weights")
    yield Sample((np.array([[0, 2, 4], [5, 2, 1]]), weight), {"mode": "mean", "padding_idx": 2}, name="padding_idx")
    yield Sample((np.array([1, 2, 4, 5, 4, 3]), weight, np.array([0, 1, 4])), {"mode": "max", "padding_idx": -2},
                 name="max, padding_idx")


@register(_embedding_bag_reference, _embedding_bag_samples, method=False, smooth=False)
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The rows of ``weight`` (num_embeddings, D) looked up by ``input`` and reduced per bag,
    without materializing the looked-up rows bag by bag: (B, D).

    Bags are the rows of a 2-D ``input`` (B, L), or the pieces of a 1-D ``input`` that start
    at ``offsets`` (B,) (B + 1 of them, the last the input's length, with
    ``include_last_offset``). ``mode`` reduces each bag: ``'sum'``, ``'mean'`` or ``'max'``;
    an empty bag gives zeros. ``per_sample_weights`` (like ``input``; ``'sum'`` only) scales
    each row first. Entries equal to ``padding_idx`` are left out (of the count too).
    ``max_norm`` renormalizes the rows used, in place, as :func:`embedding` does.

    out[b] = Σ_{i in bag b} w_i · weight[input[i]]   (``'mean'`` divides by the bag's size)

    Example::

        weight = vizgrad.randn(10, 3)
        F.embedding_bag(vizgrad.tensor([1, 2, 4, 5, 4, 3]), weight, vizgrad.tensor([0, 4])).shape   # (2, 3)
    """
    from .activation import embedding
    from . import binary
    op = "embedding_bag"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if not isinstance(weight, Tensor):
        raise not_a_tensor(op, "weight", weight)
    if input.is_floating_point() or input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: input must be a tensor of integer indices, got {input.dtype.name}")
    if weight.ndim != 2:
        raise ShapeError(f"{op}: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                         f"{format_shape(weight.shape)}")
    if not weight.is_floating_point():
        raise DTypeError(f"{op}: weight must be floating point, got {weight.dtype.name}")
    if mode not in _MODES:
        raise ArgumentError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{op}: scale_grad_by_freq and sparse gradients are not supported by vizgrad")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"{op}: embedding_bag: per_sample_weights was not None. per_sample_weights "
                                      f"is only supported for mode='sum' (got mode='{mode}'). Please open a "
                                      "feature request on GitHub.")
        if not isinstance(per_sample_weights, Tensor):
            raise not_a_tensor(op, "per_sample_weights", per_sample_weights)
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ShapeError(f"{op}: embedding_bag: If per_sample_weights ({format_shape(per_sample_weights.shape)}) "
                             f"is not None, then it must have the same shape as the input "
                             f"({format_shape(input.shape)})")
    count = weight.shape[0]
    if padding_idx is not None:
        if not -count <= padding_idx < count:
            raise ArgumentError(f"{op}: padding_idx must be within the number of embeddings, -{count} to "
                                f"{count - 1}, got {padding_idx}")
        padding_idx %= count
    flat, starts, ends = _bags(op, input, offsets, include_last_offset)
    host = np.asarray(flat.cpu().numpy(), dtype=np.int64)
    if host.size and (host.min() < 0 or host.max() >= count):
        raise IndexingError(f"{op}: index out of range: indices must be in [0, {count}), got values from "
                            f"{host.min()} to {host.max()}")
    rows = embedding(flat, weight, max_norm=max_norm, norm_type=norm_type)            # (L, D)
    bags = len(starts)
    kept = host != padding_idx if padding_idx is not None else np.ones(host.shape, dtype=bool)
    if not kept.all() and mode != "max":     # padded entries are skipped, not multiplied by 0: an inf row adds nothing
        rows = binary.where(creation.tensor(kept[:, None], device=weight.device), rows, 0.0)
    if per_sample_weights is not None:
        sample_weights = per_sample_weights.reshape(-1, 1)
        if not kept.all():          # (and their weights: no 0·inf in the values or the gradients)
            sample_weights = binary.where(creation.tensor(kept[:, None], device=weight.device), sample_weights, 0.0)
        rows = rows * sample_weights
    bag_of = np.repeat(np.arange(bags, dtype=np.int64), ends - starts)              # the bag of each entry
    sizes = np.bincount(bag_of[kept[:len(bag_of)]], minlength=bags) if bags else np.zeros(0, np.int64)
    device, dtype = weight.device, rows.dtype
    if mode == "max":
        widest = int(sizes.max()) if bags else 0
        if widest == 0:
            return rows.new_zeros((bags, weight.shape[1]))
        # one bag per row, (B, widest, D), empty slots pointing at entry 0 and masked out
        slots = np.zeros((bags, widest), dtype=np.int64)
        filled = np.zeros((bags, widest), dtype=bool)
        for b, (start, end) in enumerate(zip(starts, ends)):
            where = np.flatnonzero(kept[start:end]) + start
            slots[b, :len(where)], filled[b, :len(where)] = where, True
        laid = rows[creation.tensor(slots, device=device)]
        # PyTorch's kernel starts from a bag's first row and takes a later entry only where it is
        # greater (>): a NaN wins only as the first, so later NaNs are masked out with the empty slots
        later = creation.tensor((np.arange(widest) > 0)[None, :, None], device=device)
        mask = creation.tensor(filled[:, :, None], device=device) & ~(laid.isnan() & later)
        largest = binary.where(mask, laid, creation.tensor(-np.inf, dtype=dtype, device=device)).max(dim=1).values
        present = creation.tensor((sizes > 0)[:, None], device=device)
        return binary.where(present, largest, largest.new_zeros(largest.shape))
    out = rows.new_zeros((bags, weight.shape[1])).index_add(
        0, creation.tensor(bag_of, device=device), rows[:len(bag_of)] if len(bag_of) != rows.shape[0] else rows)
    if mode == "mean":
        out = out / creation.tensor(np.maximum(sizes, 1)[:, None].astype(np.float64), dtype=dtype, device=device)
    return out
