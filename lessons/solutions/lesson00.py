"""Reference solutions for lesson 00 (welcome and tour)."""

import vizgrad as vg


def make_w():
    """Exercise 0.1: a 2x3 floating tensor that requires grad."""
    return vg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)


def slope_at(x0):
    """Exercise 0.2: f'(x0) for f(x) = x**3 - 2*x, computed by vizgrad's backward."""
    x = vg.tensor(x0, requires_grad=True)
    y = x ** 3 - 2 * x
    y.backward()
    return x.grad.item()
