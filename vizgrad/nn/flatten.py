"""Reshaping layers: ``Flatten`` and ``Unflatten``."""

from ..ops import shape
from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one (by default all but the batch dim).

    Example::

        nn.Flatten()(vizgrad.randn(32, 1, 5, 5)).shape     # (32, 25)
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return shape.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (the inverse of :class:`Flatten`).

    Example::

        nn.Unflatten(1, (2, 5))(vizgrad.randn(3, 10)).shape    # (3, 2, 5)
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        return shape.unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
