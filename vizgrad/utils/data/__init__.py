"""``vizgrad.utils.data``: PyTorch's import path for :mod:`vizgrad.data`'s datasets and loaders,
so ``from torch.utils.data import DataLoader, TensorDataset`` runs with ``import vizgrad as torch``
written ``from vizgrad.utils.data import ...``; the submodule paths programs import
(``torch.utils.data.dataloader``, ``torch.utils.data.dataset``) name the same classes."""

from ...data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from . import dataloader, dataset

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "dataloader", "dataset", "default_collate",
           "random_split"]
