"""Reference solutions for lesson 06 (vanishing and exploding gradients)."""

import math

from vizgrad import nn


def he_std(fan_in):
    """Exercise 6.1: Var(w) = 2 / fan_in keeps Var(h) constant through ReLU layers."""
    return math.sqrt(2 / fan_in)


def layer_norm(x, eps=1e-5):
    """Exercise 6.2: normalise each row over its features (biased variance)."""
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / (var + eps).sqrt()


def make_deep_net(depth, width=32):
    """Exercise 6.3: ReLU layers with He initialisation (and zero biases)."""
    model = nn.MLP([2] + [width] * depth + [2], activation=nn.ReLU)
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            nn.init.normal_(layer.weight, std=he_std(layer.in_features))
            nn.init.zeros_(layer.bias)
    return model
