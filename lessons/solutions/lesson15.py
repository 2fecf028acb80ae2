"""Reference solutions for lesson 15 (forward mode and reverse mode)."""

import math

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.autograd import forward_ad
from vizgrad.func import functional_call, grad, vmap


class Dual:
    """Exercise 15.1: the lesson's dual number value + ε·tangent (ε² = 0), with the quotient
    rule and the sine rule filled in."""

    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    @staticmethod
    def lift(x):
        return x if isinstance(x, Dual) else Dual(x, 0.0)

    def __add__(self, other):
        other = Dual.lift(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.value, -self.tangent)

    def __sub__(self, other):
        return self + -Dual.lift(other)

    def __rsub__(self, other):
        return Dual.lift(other) - self

    def __mul__(self, other):
        other = Dual.lift(other)
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    __rmul__ = __mul__

    def exp(self):
        return Dual(math.exp(self.value), math.exp(self.value) * self.tangent)

    def __truediv__(self, other):
        other = Dual.lift(other)
        return Dual(self.value / other.value,
                    (self.tangent * other.value - self.value * other.tangent) / other.value ** 2)

    def sin(self):
        return Dual(math.sin(self.value), math.cos(self.value) * self.tangent)


def jvp_with_duals(f, x, v):
    """Exercise 15.2: x made dual with tangent v; f's output carries J·v."""
    with forward_ad.dual_level():
        y = f(forward_ad.make_dual(x, v))
        primal, tangent = forward_ad.unpack_dual(y)
    return primal, tangent


def per_sample_grad_norms(model, X, Y):
    """Exercise 15.3: every sample's gradient from one vmapped pass, then one norm per sample."""
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))

    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, X, Y)
    return vg.stack([g.reshape(len(X), -1).pow(2).sum(1) for g in grads.values()]).sum(0).sqrt()
