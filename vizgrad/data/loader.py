"""Datasets and batching with PyTorch's names: ``Dataset``, ``TensorDataset``, ``DataLoader``,
``random_split``."""

import math

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, ShapeError, check_size, format_shape
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
                             + ", ".join(format_shape(t.shape) for t in tensors))
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
    """Stack a list of samples into a batch, as PyTorch's: tensors stacked; sequences (of equal
    lengths) collated field by field into a list (a named tuple stays one); dicts key by key;
    Python floats into a float64 tensor, ints into int64, bools into bool, NumPy numbers in
    their dtype; strings kept as they are."""
    from ..ops.joins import stack
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(list(samples), 0)
    if isinstance(first, (tuple, list)):
        lengths = sorted({len(sample) for sample in samples})
        if len(lengths) > 1:
            raise ShapeError(f"default_collate: each element in list of batch should be of equal size, got "
                             f"sequences of lengths {', '.join(map(str, lengths))}")
        fields = [default_collate(tuple(s[i] for s in samples)) for i in range(len(first))]
        return type(first)(*fields) if hasattr(type(first), "_fields") else fields
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, str):
        return samples
    if isinstance(first, (int, float, bool, np.number)):
        from .. import dtypes
        from ..creation import tensor
        return tensor(samples, dtype=dtypes.float64) if type(first) is float else tensor(samples)
    raise ArgumentTypeError(f"default_collate cannot batch samples of type {type(first).__name__}")


class DataLoader:
    """Iterate over a dataset in batches, with PyTorch's signature.

    Args:
        dataset: a :class:`Dataset`.
        batch_size: samples per batch; None yields the samples one by one, uncollated.
        shuffle: a new random order every epoch (drawn from ``generator``, else vizgrad's seed).
        sampler: an iterable of dataset indices, the order instead of ``shuffle``.
        batch_sampler: an iterable of lists of indices, one list per batch (instead of
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: accepted for PyTorch's code; vizgrad loads in this process, so batches are
            the same as with 0 workers. ``worker_init_fn(worker_id)`` still runs for each worker
            id at the start of every epoch.
        collate_fn: turns a list of samples into a batch (default: :func:`default_collate`).
        pin_memory, timeout, prefetch_factor, persistent_workers, ...: accepted, no effect.
        drop_last: skip the last, smaller batch.
        generator: the :class:`vizgrad.Generator` that shuffles.

    A :class:`TensorDataset` is batched by indexing its tensors once per batch, without
    building per-sample tensors.

    Example::

        loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True, num_workers=2)
        for xb, yb in loader: ...
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if batch_size is not None:
            batch_size = check_size("DataLoader", "batch_size", batch_size, 1)
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise ArgumentTypeError(f"DataLoader: dataset must support len() and indexing (a Dataset), got "
                                    f"a {type(dataset).__name__}")
        num_workers = check_size("DataLoader", "num_workers", num_workers)
        if sampler is not None and shuffle:
            raise ArgumentError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ArgumentError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                "sampler, and drop_last")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.worker_init_fn = num_workers, worker_init_fn
        self.pin_memory, self.timeout = pin_memory, timeout
        self.collate_fn = collate_fn
        self.generator = generator

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        count = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return count
        return count // self.batch_size if self.drop_last else math.ceil(count / self.batch_size)

    def _order(self):
        from ..creation import default_generator
        if self.sampler is not None:
            return np.asarray([int(i) for i in self.sampler], dtype=np.int64)
        count = len(self.dataset)
        if self.shuffle:
            return (self.generator or default_generator)._rng.permutation(count)
        return np.arange(count)

    def _batches(self):
        if self.batch_sampler is not None:
            yield from (np.asarray([int(i) for i in batch], dtype=np.int64) for batch in self.batch_sampler)
            return
        order = self._order()
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if self.drop_last and len(indices) < self.batch_size:
                return
            yield indices

    def __iter__(self):
        if self.worker_init_fn is not None:
            for worker_id in range(self.num_workers):
                self.worker_init_fn(worker_id)
        if self.batch_size is None and self.batch_sampler is None:
            yield from (self.dataset[int(i)] for i in self._order())
            return
        for indices in self._batches():
            if isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
                from ..creation import tensor
                index = tensor(indices, device=self.dataset.tensors[0].device)
                yield tuple(t[index] for t in self.dataset.tensors)
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in indices])
