"""Reference solutions for lesson 04 (an MLP from scratch on two moons)."""

import vizgrad as vg


def forward(params, X):
    """Exercise 4.1: a tanh hidden layer, then one logit per point: shape (n, 1)."""
    hidden = (X @ params["W1"] + params["b1"]).tanh()
    return hidden @ params["W2"] + params["b2"]


def bce_with_logits(logits, y):
    """Exercise 4.2: mean binary cross-entropy from logits z, stable for large |z|:
    -[y log s(z) + (1 - y) log(1 - s(z))] = relu(z) - y z + log1p(exp(-|z|))."""
    y = y.reshape(logits.shape).to(logits.dtype)
    return (logits.relu() - logits * y + (-logits.abs()).exp().log1p()).mean()


def sgd_step(params, lr):
    """Exercise 4.3: p <- p - lr * grad, in place and unrecorded; then clear the gradient."""
    with vg.no_grad():
        for p in params.values():
            p -= lr * p.grad
            p.grad = None


def train(params, X, y, steps=500, lr=0.5):
    """Exercise 4.4: full-batch gradient descent; returns the losses."""
    losses = []
    for _ in range(steps):
        loss = bce_with_logits(forward(params, X), y)
        loss.backward()
        sgd_step(params, lr)
        losses.append(loss.item())
    return losses
