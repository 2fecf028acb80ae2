"""Reference solutions for lesson 05 (optimizers)."""

import math


def momentum_step(p, grad, buffer, lr, momentum):
    """Exercise 5.1: b <- momentum * b + g, then p <- p - lr * b."""
    buffer = momentum * buffer + grad
    return p - lr * buffer, buffer


def adam_step(p, grad, m, v, t, lr, beta1, beta2, eps):
    """Exercise 5.2: moving averages of g and g², bias-corrected, then a normalised step."""
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad * grad
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return p - lr * m_hat / (v_hat.sqrt() + eps), m, v


def largest_stable_lr(curvatures):
    """Exercise 5.3: a step multiplies the component along an eigenvector of curvature λ by
    (1 - η·λ), which shrinks only while |1 - η·λ| < 1, that is η < 2/λ, for every λ."""
    return 2 / max(curvatures)


def warmup_cosine(step, total_steps, warmup_steps, base_lr):
    """Exercise 5.4: linear warm-up from 0, then half a cosine down to 0 at total_steps."""
    if step < warmup_steps:
        return base_lr * step / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return base_lr * 0.5 * (1 + math.cos(math.pi * progress))
