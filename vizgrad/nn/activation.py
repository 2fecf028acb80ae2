"""Activation layers: one module per functional activation (no parameters), as PyTorch."""

from ..creation import full
from ..errors import ArgumentError, ShapeError, format_shape
from . import functional as F
from .init import constant_
from .module import Module, Parameter


def _inplace_repr(module):
    return "inplace=True" if module.inplace else ""


class ReLU(Module):
    """``max(x, 0)``.

    Example::

        nn.ReLU()(vizgrad.tensor([-1.0, 2.0]))    # tensor([0., 2.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    extra_repr = _inplace_repr


class ReLU6(Module):
    """``min(max(x, 0), 6)``.

    Example::

        nn.ReLU6()(vizgrad.tensor([-1.0, 8.0]))    # tensor([0., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu6(input, self.inplace)

    extra_repr = _inplace_repr


class LeakyReLU(Module):
    """``x`` for x > 0, ``negative_slope · x`` otherwise.

    Example::

        nn.LeakyReLU(0.1)(vizgrad.tensor([-2.0, 3.0]))    # tensor([-0.2000, 3.0000])
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU: ``x`` for x ≥ 0, ``a · x`` otherwise, ``a`` drawn uniformly from
    [lower, upper] per element in training and ``(lower + upper) / 2`` after ``.eval()``.

    Example::

        nn.RReLU().eval()(vizgrad.tensor([-2.0, 3.0]))    # tensor([-0.4583,  3.0000])
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` for x > 0, ``alpha (eˣ - 1)`` otherwise.

    Example::

        nn.ELU()(vizgrad.tensor([-1.0, 2.0]))     # tensor([-0.6321, 2.0000])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(Module):
    """Continuously differentiable ELU: ``x`` for x > 0, ``alpha (e^(x/alpha) - 1)`` otherwise.

    Example::

        nn.CELU(alpha=2.0)(vizgrad.tensor([-1.0, 2.0]))   # tensor([-0.7869,  2.0000])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(Module):
    """Scaled ELU with the self-normalizing constants λ ≈ 1.0507, α ≈ 1.6733.

    Example::

        nn.SELU()(vizgrad.tensor([-1.0, 1.0]))    # tensor([-1.1113, 1.0507])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    extra_repr = _inplace_repr


class GELU(Module):
    """``x Φ(x)`` (``approximate='tanh'``: the tanh approximation).

    Example::

        nn.GELU()(vizgrad.tensor([1.0]))          # tensor([0.8413])
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x σ(x)`` (swish).

    Example::

        nn.SiLU()(vizgrad.tensor([1.0]))          # tensor([0.7311])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    extra_repr = _inplace_repr


class Softplus(Module):
    """``(1/β) log(1 + e^(βx))``, linear above ``threshold``.

    Example::

        nn.Softplus()(vizgrad.tensor([0.0]))      # tensor([0.6931])
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """``x tanh(softplus(x))``.

    Example::

        nn.Mish()(vizgrad.tensor([1.0]))          # tensor([0.8651])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    extra_repr = _inplace_repr


class Hardtanh(Module):
    """``x`` clipped to [min_val, max_val].

    Example::

        nn.Hardtanh()(vizgrad.tensor([-3.0, 0.5]))    # tensor([-1.0000, 0.5000])
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if max_val <= min_val:
            raise ArgumentError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    """``1 / (1 + e^-x)``.

    Example::

        nn.Sigmoid()(vizgrad.tensor([0.0]))       # tensor([0.5000])
    """

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent.

    Example::

        nn.Tanh()(vizgrad.tensor([0.0]))          # tensor([0.])
    """

    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    """``e^xᵢ / Σⱼ e^xⱼ`` along ``dim``.

    Example::

        nn.Softmax(dim=1)(vizgrad.randn(2, 3)).sum(dim=1)    # tensor([1., 1.])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) inputs, at every position
    (``softmax`` along dim -3).

    Example::

        nn.Softmax2d()(vizgrad.randn(2, 3, 4, 4)).sum(dim=1)    # ones, shape (2, 4, 4)
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead (shape "
                             f"{format_shape(input.shape)})")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(Module):
    """``xᵢ - logsumexp(x)`` along ``dim``.

    Example::

        nn.LogSoftmax(dim=1)(vizgrad.randn(2, 3)).exp().sum(dim=1)    # tensor([1., 1.])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``.

    Example::

        nn.Softmin(dim=0)(vizgrad.tensor([1.0, 2.0]))      # tensor([0.7311, 0.2689])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``.

    Example::

        nn.Hardsigmoid()(vizgrad.tensor([0.0]))   # tensor([0.5000])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    extra_repr = _inplace_repr


class Hardswish(Module):
    """``x · relu6(x + 3) / 6``.

    Example::

        nn.Hardswish()(vizgrad.tensor([1.0]))     # tensor([0.6667])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    extra_repr = _inplace_repr


class LogSigmoid(Module):
    """``log σ(x)``.

    Example::

        nn.LogSigmoid()(vizgrad.tensor([0.0]))    # tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``.

    Example::

        nn.Softsign()(vizgrad.tensor([3.0]))      # tensor([0.7500])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Example::

        nn.Tanhshrink()(vizgrad.tensor([1.0]))    # tensor([0.2384])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Threshold(Module):
    """``x`` where x > threshold, else ``value``.

    Example::

        nn.Threshold(0.1, 20.0)(vizgrad.tensor([0.1, 0.2]))   # tensor([20.0000,  0.2000])
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    """``x`` where |x| > lambd, else 0.

    Example::

        nn.Hardshrink()(vizgrad.tensor([-1.0, 0.2]))   # tensor([-1.,  0.])
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    """``x - clamp(x, -lambd, lambd)``: shrunk toward 0 by lambd, 0 within it.

    Example::

        nn.Softshrink()(vizgrad.tensor([-1.0, 0.2]))   # tensor([-0.5000,  0.0000])
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class GLU(Module):
    """Gated linear unit over ``dim``: the halves a, b give ``a · σ(b)``.

    Example::

        nn.GLU()(vizgrad.tensor([[1.0, 2.0, 0.0, 0.0]]))   # tensor([[0.5000, 1.0000]])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """``x`` where x ≥ 0, ``a · x`` otherwise, with ``a`` learned: one number, or one per
    channel (``num_parameters``), starting at ``init``.

    Example::

        nn.PReLU()(vizgrad.tensor([-2.0, 3.0]))   # tensor([-0.5000,  3.0000], grad_fn=...)
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if num_parameters < 1:
            raise ArgumentError(f"PReLU: num_parameters must be at least 1, got {num_parameters}")
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def reset_parameters(self):
        constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
