"""Reference solutions for lesson 13 (recurrent networks and backprop through time)."""

import vizgrad as vg


def rnn_step_back(grad_h, h, W_hh):
    """Exercise 13.1: through tanh (its derivative 1 - h², from the output), then back through W_hh."""
    return (grad_h * (1 - h ** 2)) @ W_hh


def lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """Exercise 13.2: the four gates in PyTorch's order i, f, g, o; the cell path is f ⊙ c."""
    i, f, g, o = (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h_new = o.sigmoid() * c_new.tanh()
    return h_new, c_new


def grad_w_hh(hs, W_hh, grad_last):
    """Exercise 13.3: one term δ_tᵀ h_(t-1) per time step, the gradient carried back through W_hh."""
    grad, total = grad_last, vg.zeros_like(W_hh)
    for t in range(len(hs) - 1, 0, -1):
        delta = grad * (1 - hs[t] ** 2)
        total = total + delta.T @ hs[t - 1]
        grad = delta @ W_hh
    return total
