"""PyTorch's ``torch.utils`` path: ``vizgrad.utils.data`` holds the datasets and loaders."""

from . import data

__all__ = ["data"]
