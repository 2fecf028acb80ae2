"""``vizgrad.nn.functional``: every functional op of the layers, as ``torch.nn.functional``.

The ops themselves live in :mod:`vizgrad.ops` (one module per family) and are tested
from the op registry; this module only gathers them under PyTorch's names::

    import vizgrad.nn.functional as F
    loss = F.cross_entropy(F.linear(x, w, b), y)
"""

import importlib as _importlib

from ..ops import unary as _unary
from ..ops.activation import (bilinear, dropout, elu, embedding, gelu, hardtanh, leaky_relu, linear, log_softmax, mish,
                              one_hot, relu6, selu, silu, softmax, softmin, softplus)
from ..ops.composite_activations import (celu, glu, hardshrink, hardsigmoid, hardswish, logsigmoid, prelu, softshrink,
                                         softsign, tanhshrink, threshold)
from ..ops.classification import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, nll_loss
from ..ops.distance import cosine_similarity, pairwise_distance
from ..ops.loss import huber_loss, kl_div, l1_loss, mse_loss, smooth_l1_loss
from ..ops.normalization import batch_norm, group_norm, instance_norm, layer_norm, normalize
from ..ops.registry import OPS as _OPS
from ..ops.activation import dropout1d, dropout2d, dropout3d
from ..ops.normalization import rms_norm
from ..ops.padding import channel_shuffle, pad
from ..ops.unary import sigmoid, tanh
from .attention import scaled_dot_product_attention

__all__ = ["batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu",
           "cosine_similarity", "cross_entropy", "dropout", "elu", "embedding", "gelu", "glu", "group_norm",
           "instance_norm", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "huber_loss", "kl_div", "l1_loss", "layer_norm",
           "leaky_relu", "linear", "log_softmax", "logsigmoid", "mish", "mse_loss", "nll_loss", "normalize",
           "one_hot", "pad", "pairwise_distance", "prelu", "relu", "relu6", "scaled_dot_product_attention", "selu", "sigmoid", "silu",
           "smooth_l1_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink",
           "threshold", "channel_shuffle", "dropout1d", "dropout2d", "dropout3d", "rms_norm"]


def relu(input, inplace=False):
    """``max(x, 0)`` elementwise (in place with ``inplace=True``).

    Example::

        F.relu(vizgrad.tensor([-1.0, 2.0]))    # tensor([0., 2.])
    """
    return input.relu_() if inplace else _unary.relu(input)


def _inplace(name):
    """``F.<name>_(input, ...)``: ``F.<name>`` written into ``input`` (PyTorch's in-place activations)."""
    def function(input, *args, **kwargs):
        from ..ops.inplace import apply_inplace
        compute = globals()[name]
        return apply_inplace(input, lambda target: compute(target, *args, **kwargs), name + "_", *args,
                             *kwargs.values())
    function.__name__ = function.__qualname__ = name + "_"
    function.__doc__ = f"In-place :func:`{name}`: changes ``input`` and returns it."
    return function


relu_, elu_, selu_, celu_ = _inplace("relu"), _inplace("elu"), _inplace("selu"), _inplace("celu")
leaky_relu_, hardtanh_, threshold_ = _inplace("leaky_relu"), _inplace("hardtanh"), _inplace("threshold")
__all__ += ["relu_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_", "threshold_"]


def _export(family):
    """Export the public ops of ``vizgrad.ops.<family>``: its registered ops and its
    ``__all__``. Nothing happens if that module does not exist (yet)."""
    name = f"{__package__.rpartition('.')[0]}.ops.{family}"
    try:
        module = _importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return
    public = [op for op, info in _OPS.items() if info.function.__module__ == module.__name__]
    public += [item for item in getattr(module, "__all__", ()) if item not in public]
    for item in public:
        globals()[item] = _OPS[item].function if item in _OPS else getattr(module, item)
        if item not in __all__:
            __all__.append(item)


for _family in ("conv", "pooling", "adaptive_pooling", "resampling", "loss", "classification", "margin", "distance",
                "ctc", "embedding", "random_activations"):  # max_pool2d, interpolate, rrelu, ...
    _export(_family)
__all__.sort()
