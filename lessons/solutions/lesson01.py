"""Reference solutions for lesson 01 (scalars and the chain rule)."""

import math


def grads_by_hand(x, y):
    """Exercise 1.1: (df/dx, df/dy) for f = cos(x*y) + x.

    With u = x*y: df/du = -sin(u), du/dx = y, du/dy = x, and the `+ x` adds 1 to df/dx.
    """
    u = x * y
    df_du = -math.sin(u)
    return df_du * y + 1.0, df_du * x


def backward(output):
    """Exercise 1.2: fill .grad of every Scalar in output's graph."""
    order = output.topological_order()
    for node in order:
        node.grad = 0.0
    output.grad = 1.0
    for node in reversed(order):
        for source, local in zip(node.inputs, node.local_grads):
            source.grad += local * node.grad


def hidden_grad(a, b, c):
    """Exercise 1.3: dL/dh for h = a*b and L = ((h + c)**2).sum()."""
    h = a * b
    h.retain_grad()
    loss = ((h + c) ** 2).sum()
    loss.backward()
    return h.grad
