"""Datasets, batching and toy data: ``vizgrad.data.DataLoader``, ``make_moons``, ..."""

from .loader import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from .text import available_texts, load_text
from .toy import load_digits, make_blobs, make_circles, make_moons, make_regression, make_spirals, make_xor

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "available_texts", "default_collate", "load_digits",
           "load_text", "make_blobs", "make_circles", "make_moons", "make_regression", "make_spirals", "make_xor", "random_split"]
