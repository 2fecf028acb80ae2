"""Every public op, one module per family. Importing this package registers them all
(see :mod:`vizgrad.ops.registry`)."""

from . import (activation, binary, bitwise, compare, conversion, conv, gamma, index, linalg, loss, normalization, pooling,
               histogram, reduce, shape, sorting, statistics, unary)
from . import decompositions
from . import joins, padding  # split from shape: cat, stack, split, ...; pad, repeat, flip, ...
from . import adaptive_pooling, matrix_functions, resampling, solvers  # split from pooling, decompositions
from . import classification, ctc, distance, margin  # split from loss: cross entropy, ctc_loss, pdist, hinges
from . import gather_scatter, index_composites  # split from index: gather, scatter; take, put, *_scatter
from . import embedding  # embedding_bag
from . import contractions  # einsum, tensordot (from linalg)
from . import lu  # linalg.lu_factor, linalg.lu, lu_unpack, Tensor.lu
from . import special_functions  # erf, erfc, erfinv, the gamma family, i0, frexp (from unary)
from . import hyperbolic  # asin, acos, asinh, acosh, atanh, sinh, cosh (from unary)
from . import composite_activations  # hardsigmoid, celu, glu, prelu, ... (from activation)
from . import representation  # copysign, ldexp, nextafter, gcd, lcm (from binary)
from . import division  # div, floor_divide, remainder, fmod (from binary)
from . import cumulative, truth  # cumsum, cumprod, cummax, cummin, logcumsumexp; all, any, nonzero (from reduce)
from . import sparse  # sparse COO tensors: sparse_coo_tensor, to_sparse, to_dense, the sparse rules of mm, +, *
from .registry import OPS

__all__ = sorted(name for name in OPS if "." not in name)   # (dotted names, "linalg.svd", live in their namespace)


def __getattr__(name):
    info = OPS.get(name)
    if info is None:
        raise AttributeError(f"module 'vizgrad.ops' has no attribute {name!r}")
    return info.function


from . import tensor_namespace  # noqa: E402
