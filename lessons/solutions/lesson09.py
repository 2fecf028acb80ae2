"""Reference solutions for lesson 09 (higher-order gradients)."""

import vizgrad as vg


def second_derivative(f, x0):
    """Exercise 9.1: differentiate the derivative, which create_graph=True keeps in the graph."""
    x = vg.tensor(x0, dtype=vg.float64, requires_grad=True)
    (dy,) = vg.autograd.grad(f(x), x, create_graph=True)
    (d2y,) = vg.autograd.grad(dy, x)
    return d2y.item()


def hvp(f, x, v):
    """Exercise 9.2: H·v = ∇ₓ(∇f(x) · v), two backward passes, no n×n matrix."""
    (g,) = vg.autograd.grad(f(x), x, create_graph=True)
    (hv,) = vg.autograd.grad((g * v).sum(), x)
    return hv


def top_eigenvalue(f, x, steps=100):
    """Exercise 9.3: power iteration v <- Hv/‖Hv‖, then the Rayleigh quotient vᵀHv."""
    v = vg.randn(*x.shape, dtype=x.dtype)
    v = v / v.norm()
    for _ in range(steps):
        w = hvp(f, x, v)
        v = w / w.norm()
    return (v * hvp(f, x, v)).sum().item()
