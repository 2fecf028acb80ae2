"""``MLP``: a multilayer perceptron as one Sequential, for lessons and quick experiments."""

from ..errors import ArgumentError
from .activation import ReLU
from .container import Sequential
from .dropout import Dropout
from .linear import Linear


class MLP(Sequential):
    """Linear layers of the given ``sizes``, with ``activation`` between them:
    ``MLP([2, 16, 16, 2])`` is ``Sequential(Linear(2, 16), ReLU(), Linear(16, 16), ReLU(),
    Linear(16, 2))``.

    Args:
        sizes: input size, hidden sizes..., output size (at least two numbers).
        activation: a module class (or any callable returning a module) put after every
            hidden layer.
        bias: whether the linear layers have biases.
        dropout: if positive, a Dropout of that probability after every activation.
        norm_layer: a callable ``norm_layer(size)`` (e.g. ``nn.BatchNorm1d``, ``nn.LayerNorm``)
            put after every hidden linear layer, before the activation.
        output_activation: a module class (or callable) put after the last layer.

    Example::

        model = nn.MLP([2, 16, 16, 2])
        model(vizgrad.randn(5, 2)).shape         # (5, 2)
    """

    def __init__(self, sizes, activation=ReLU, bias=True, dropout=0.0, norm_layer=None, output_activation=None):
        sizes = [int(size) for size in sizes]
        if len(sizes) < 2:
            raise ArgumentError(f"MLP needs at least an input and an output size, got sizes={sizes}")
        layers = []
        for position, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(Linear(fan_in, fan_out, bias=bias))
            if position < len(sizes) - 2:
                if norm_layer is not None:
                    layers.append(norm_layer(fan_out))
                layers.append(activation())
                if dropout:
                    layers.append(Dropout(dropout))
        if output_activation is not None:
            layers.append(output_activation())
        super().__init__(*layers)
