"""Reference solutions for lesson 12 (a tiny transformer)."""

import vizgrad as vg


class MyLayerNorm(vg.autograd.Function):
    """Exercise 12.1: x̂ = (x - mean) / sqrt(var + eps); backward has one term per path from x."""

    @staticmethod
    def forward(ctx, x, eps=1e-5):
        mean = x.mean(dim=-1, keepdim=True)
        inv_std = 1 / ((x - mean) ** 2).mean(dim=-1, keepdim=True).add(eps).sqrt()
        xhat = (x - mean) * inv_std
        ctx.save_for_backward(xhat, inv_std)
        return xhat

    @staticmethod
    def backward(ctx, grad):
        xhat, inv_std = ctx.saved_tensors
        return inv_std * (grad - grad.mean(dim=-1, keepdim=True) - xhat * (grad * xhat).mean(dim=-1, keepdim=True))


def residual_input_grad(g, W1, W2):
    """Exercise 12.2: four paths: skip-skip, block 1, block 2, both (backward: W2 first)."""
    return g + g @ W1.T + g @ W2.T + g @ W2.T @ W1.T
