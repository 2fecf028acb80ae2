"""``torch.utils.data.dataloader``'s path: :class:`~vizgrad.data.DataLoader` and ``default_collate``."""

from ...data import DataLoader, default_collate

__all__ = ["DataLoader", "default_collate"]
