"""Reference solutions for lesson 03 (writing your own op)."""

import vizgrad as vg


class MyCos(vg.autograd.Function):
    """Exercise 3.1: d/dx cos(x) = -sin(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.cos()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return -grad * x.sin()


class MySigmoid(vg.autograd.Function):
    """Exercise 3.2: s = 1 / (1 + e^-x); ds/dx = s (1 - s), from the saved output."""

    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        s, = ctx.saved_tensors
        return grad * s * (1 - s)


class MyMatMul(vg.autograd.Function):
    """Exercise 3.3: C = a @ b; da = dC @ b.T, db = a.T @ dC."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.T, a.T @ grad


class AddBias(vg.autograd.Function):
    """Exercise 3.4: y = x + b with x (n, d) and b (d,); b's gradient sums over the rows."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.sum(dim=0)
