"""B2: the cost of one small op. 1,000 chained elementwise ops on 10 numbers and their
backward, per op: what every op pays in Python before NumPy does any work, against PyTorch
CPU and HIPS autograd."""

import numpy as np

from benchmarks.harness import AUTOGRAD, TORCH, benchmark, require, vizgrad_and_torch

B2_OPS = 1000


def b2_chain(h, tanh):
    """The same 1,000 ops for every peer: x*1.0001, x+0.001, tanh, repeated."""
    for i in range(B2_OPS):
        if i % 3 == 0:
            h = h * 1.0001
        elif i % 3 == 1:
            h = h + 0.001
        else:
            h = tanh(h)
    return h


def b2_step(library, x):
    """B2's step in vizgrad or PyTorch: the chain from ``x`` (a leaf), sum, backward."""
    def step():
        x.grad = None
        loss = b2_chain(x, library.tanh).sum()
        loss.backward()
        return loss
    return step


@benchmark("B2", "small_op_overhead", "us/op", 1e6 / B2_OPS, references=(TORCH,))
def small_op_overhead():
    """x of shape (10,) float32; 1,000 chained elementwise ops; sum, backward. Time per op."""
    x_np = np.random.default_rng(0).uniform(-1, 1, 10).astype(np.float32)

    def library_step(library, tensor):
        return b2_step(library, library.tensor(x_np, requires_grad=True))

    def autograd_setup():
        require("autograd")
        import autograd.numpy as anp
        from autograd import value_and_grad
        loss_and_grad = value_and_grad(lambda x: anp.sum(b2_chain(x, anp.tanh)))
        return lambda: loss_and_grad(x_np)[0]

    return {**vizgrad_and_torch(library_step), AUTOGRAD: autograd_setup}
