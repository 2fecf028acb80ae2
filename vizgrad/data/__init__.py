"""Datasets, batching and toy data: ``vizgrad.data.DataLoader``, ``make_moons``, ``load_text``, ..."""

from .loader import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from .text import load_text, text_names
from .toy import load_digits, make_blobs, make_circles, make_moons, make_regression, make_spirals, make_xor

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "load_digits", "load_text",
           "make_blobs", "make_circles", "make_moons", "make_regression", "make_spirals", "make_xor", "random_split", "text_names"]
