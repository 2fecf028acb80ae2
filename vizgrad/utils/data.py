"""``vizgrad.utils.data``: PyTorch's import path for :mod:`vizgrad.data`'s datasets and loaders,
so ``from torch.utils.data import DataLoader, TensorDataset`` runs with ``import vizgrad as torch``
written ``from vizgrad.utils.data import ...``."""

from ..data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
