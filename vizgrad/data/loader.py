"""Datasets and batching with PyTorch's names: ``Dataset``, ``TensorDataset``, ``DataLoader``,
``random_split``."""

import math

import numpy as np

from ..errors import ShapeError, ArgumentError, ArgumentTypeError, check_size
from ..tensor import Tensor


class Dataset:
    """Anything with ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index):  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self):  # pragma: no cover - abstract
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are rows of equally long tensors: ``TensorDataset(X, y)[i] == (X[i], y[i])``."""

    def __init__(self, *tensors):
        if not tensors:
            raise ArgumentError("TensorDataset needs at least one tensor")
        lengths = {t.shape[0] if t.ndim else None for t in tensors}
        if len(lengths) != 1 or None in lengths:
            raise ShapeError("TensorDataset: every tensor must have the same first dimension; got shapes "
                             + ", ".join(str(t.shape) for t in tensors))
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or fractions
    summing to 1)."""
    from ..creation import default_generator
    total = len(dataset)
    floats = not all(isinstance(x, int) for x in lengths)   # [0.5, 0.5] of 1 sample are fractions
    if (all(0 <= x <= 1 for x in lengths) and math.isclose(sum(lengths), 1.0)
            and (floats or sum(lengths) != total)):
        counts = [int(math.floor(total * fraction)) for fraction in lengths]
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != total:
        raise ArgumentError(f"random_split: the lengths add up to {sum(lengths)} but the dataset has {total} samples")
    order = (generator or default_generator)._rng.permutation(total).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


def default_collate(samples):
    """Stack a list of samples into a batch: tuples are collated field by field, tensors stacked,
    numbers turned into a tensor."""
    from ..ops.shape import stack
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(list(samples), 0)
    if isinstance(first, (tuple, list)):
        return type(first)(default_collate([s[i] for s in samples]) for i in range(len(first))) \
            if isinstance(first, tuple) else [default_collate([s[i] for s in samples]) for i in range(len(first))]
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (int, float, bool, np.number)):
        from ..creation import tensor
        return tensor(samples)
    raise ArgumentTypeError(f"default_collate cannot batch samples of type {type(first).__name__}")


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a :class:`Dataset`.
        batch_size: samples per batch.
        shuffle: a new random order every epoch (drawn from ``generator``, else vizgrad's seed).
        drop_last: skip the last, smaller batch.
        collate_fn: turns a list of samples into a batch (default: :func:`default_collate`).

    A :class:`TensorDataset` is batched by indexing its tensors once per batch, without
    building per-sample tensors.

    Example::

        loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
        for xb, yb in loader: ...
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None, generator=None):
        if batch_size is None:
            raise ArgumentError("DataLoader: batch_size must be a positive int; vizgrad has no unbatched loading "
                                "(batch_size=None)")
        batch_size = check_size("DataLoader", "batch_size", batch_size, 1)
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise ArgumentTypeError(f"DataLoader: dataset must support len() and indexing (a Dataset), got "
                                    f"a {type(dataset).__name__}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = collate_fn
        self.generator = generator

    def __len__(self):
        count = len(self.dataset)
        return count // self.batch_size if self.drop_last else math.ceil(count / self.batch_size)

    def _order(self):
        from ..creation import default_generator
        count = len(self.dataset)
        if self.shuffle:
            return (self.generator or default_generator)._rng.permutation(count)
        return np.arange(count)

    def __iter__(self):
        order = self._order()
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if self.drop_last and len(indices) < self.batch_size:
                return
            if isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
                from ..creation import tensor
                index = tensor(indices, device=self.dataset.tensors[0].device)
                yield tuple(t[index] for t in self.dataset.tensors)
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in indices])
