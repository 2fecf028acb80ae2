"""``torch.utils.data.dataset``'s path: the dataset classes of :mod:`vizgrad.data` and ``random_split``."""

from ...data import Dataset, Subset, TensorDataset, random_split

__all__ = ["Dataset", "Subset", "TensorDataset", "random_split"]
