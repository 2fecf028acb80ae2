"""Normalization layers: ``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``,
``RMSNorm``."""

import warnings

from .. import creation, dtypes
from ..autograd import observers
from ..autograd.grad_mode import no_grad
from ..errors import ShapeError, format_shape, ArgumentError, check_size, check_sizes
from . import functional as F
from . import init
from .module import Module, Parameter


def _affine_parameters(module, affine, bias, shape, device, dtype):
    """weight (ones) and bias (zeros) of ``shape``, or None where not wanted."""
    if affine:
        module.weight = Parameter(creation.ones(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(creation.zeros(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    """Batch normalization over the channel dim 1, with running statistics as PyTorch:
    buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``;
    weight ones and bias zeros (``affine``; ``bias=False`` drops the shift)."""

    _input_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features = check_size(type(self).__name__, "num_features", num_features, 1)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, (num_features,), device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.zeros((), device=device, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def forward(self, input):
        if input.ndim not in self._input_dims:
            expected = " or ".join(f"{d}D" for d in self._input_dims)
            raise ShapeError(f"{type(self).__name__}: expected {expected} input (got {input.ndim}D input of shape "
                             f"{format_shape(input.shape)})")
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{type(self).__name__}: expected {self.num_features} channels, got {input.shape[1]} "
                             f"(dim 1 of the input of shape {format_shape(input.shape)})")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad(), observers.quiet_ops:     # a buffer update: no part of the graph
                self.num_batches_tracked.add_(1)
            if self.momentum is None:          # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C.

    Example::

        bn = nn.BatchNorm1d(16)
        bn(vizgrad.randn(32, 16))          # standardized columns; running stats updated
    """

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, per channel C.

    Example::

        bn = nn.BatchNorm2d(8)
        bn(vizgrad.randn(4, 8, 5, 5)).shape    # (4, 8, 5, 5)
    """

    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs, per channel C.

    Example::

        bn = nn.BatchNorm3d(4)
        bn(vizgrad.randn(2, 4, 3, 5, 5)).shape    # (2, 4, 3, 5, 5)
    """

    _input_dims = (5,)


class _InstanceNorm(_BatchNorm):
    """Instance normalization (:func:`vizgrad.nn.functional.instance_norm`): each channel of
    each sample normalized over its own spatial dims. As PyTorch: no affine parameters and no
    running statistics by default; with ``track_running_stats`` they are kept in training and
    used in evaluation. An input without its batch dim is accepted."""

    _input_dims = ()         # (unbatched, batched) number of dims

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        unbatched, batched = self._input_dims
        name = type(self).__name__
        if input.ndim not in self._input_dims:
            raise ShapeError(f"{name}: expected {unbatched}D (unbatched) or {batched}D input (got {input.ndim}D "
                             f"input of shape {format_shape(input.shape)})")
        if input.ndim == unbatched:
            return self.forward(input.unsqueeze(0)).squeeze(0)
        if input.shape[1] != self.num_features:
            if self.affine:
                raise ShapeError(f"{name}: expected input's size at dim=1 to match num_features "
                                 f"({self.num_features}), got {input.shape[1]} (input of shape "
                                 f"{format_shape(input.shape)})")
            warnings.warn(f"{name}: input's size at dim=1 ({input.shape[1]}) does not match num_features "
                          f"({self.num_features}), which is not used because affine=False", UserWarning, stacklevel=2)
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               0.0 if self.momentum is None else self.momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) inputs (or (C, L)).

    Example::

        nn.InstanceNorm1d(3)(vizgrad.randn(2, 3, 10)).mean(dim=-1)    # ~0 everywhere
    """

    _input_dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) inputs (or (C, H, W)): style transfer's normalization.

    Example::

        nn.InstanceNorm2d(8, affine=True)(vizgrad.randn(4, 8, 16, 16)).shape    # (4, 8, 16, 16)
    """

    _input_dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) inputs (or (C, D, H, W)).

    Example::

        nn.InstanceNorm3d(2)(vizgrad.randn(1, 2, 4, 4, 4)).shape    # (1, 2, 4, 4, 4)
    """

    _input_dims = (4, 5)


class LayerNorm(Module):
    """Normalize over the last dims ``normalized_shape`` of each sample, then scale and shift
    elementwise (weight ones, bias zeros).

    Example::

        ln = nn.LayerNorm(16)
        ln(vizgrad.randn(8, 16)).mean(dim=-1)    # ~0 for every row
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int) or not hasattr(normalized_shape, "__iter__"):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = check_sizes("LayerNorm", tuple(normalized_shape), "normalized_shape")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize groups of channels of (N, C, ...) inputs, then scale and shift per channel.

    Example::

        gn = nn.GroupNorm(3, 6)
        gn(vizgrad.randn(2, 6, 5, 5)).shape     # (2, 6, 5, 5)
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        num_groups = check_size("GroupNorm", "num_groups", num_groups, 1)
        num_channels = check_size("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ArgumentError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                                f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, (num_channels,), device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the last dims ``normalized_shape``, then an
    elementwise scale (weight ones); see :func:`vizgrad.nn.functional.rms_norm`. ``eps=None``
    uses the input dtype's machine epsilon.

    Example::

        norm = nn.RMSNorm(16)
        norm(vizgrad.randn(8, 16)).pow(2).mean(dim=-1)    # ~1 for every row
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int) or not hasattr(normalized_shape, "__iter__"):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = check_sizes("RMSNorm", tuple(normalized_shape), "normalized_shape")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:                   # a scale and no shift (no bias at all, as PyTorch)
            self.weight = Parameter(creation.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Local response normalization over (N, C, *) inputs: each value divided by
    (k + alpha · the mean square of ``size`` neighbouring channels)^beta (AlexNet's).

    Example::

        nn.LocalResponseNorm(3)(vizgrad.randn(2, 8, 5, 5)).shape    # (2, 8, 5, 5)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
