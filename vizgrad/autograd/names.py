"""PyTorch's names for the ``grad_fn`` nodes of vizgrad's ops: ``MulBackward0``, ``AddmmBackward0``.

PyTorch names a node after the ATen function that made it, numbered by that function's
overload (``SumBackward0`` sums everything, ``SumBackward1`` over dims). A vizgrad op that
computes the same function gets the same name, chosen here from what the node recorded;
an op PyTorch has no single function for keeps its own class name plus ``Backward0``.
Custom :class:`~vizgrad.autograd.Function` nodes are ``<ClassName>Backward``, as in PyTorch.
The graph views label nodes by op (``Mul``); these names are what ``repr`` and errors show.
"""


def _reduced_all(node):
    return set(node.axes) == set(range(len(node.shape))) and not node.keepdim


def _overload(full, along):
    """A reduction's name: overload 0 over every dim, 1 along dims (Sum, Mean, Prod)."""
    return lambda node: full if _reduced_all(node) else along


def _pow(node):
    base, exponent = node.saved[0], node.saved[1]
    if isinstance(exponent, (int, float)):
        return "PowBackward0"
    return "PowBackward2" if isinstance(base, (int, float)) else "PowBackward1"


def _matmul(node):
    a, b = node.saved[0], node.saved[1]
    dims = (getattr(a, "ndim", 0), getattr(b, "ndim", 0))
    return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}.get(dims, "UnsafeViewBackward0")


def _linear(node):
    with_bias = node.input_meta[2] is not None
    if node.saved[0].ndim == 2:
        return "AddmmBackward0" if with_bias else "MmBackward0"
    return "AddBackward0" if with_bias else "UnsafeViewBackward0"


def _getitem(node):
    entries = [entry for entry in node.key if entry is not None and entry is not Ellipsis]
    if any(not isinstance(entry, (int, slice)) for entry in entries):
        return "IndexBackward0"
    if any(isinstance(entry, int) for entry in entries):
        return "SelectBackward0"
    return "SliceBackward0"


_RESHAPES = {"view": "ViewBackward0", "alias": "ReshapeAliasBackward0", "copy": "UnsafeViewBackward0"}


def _einsum(node):
    """The last step of PyTorch's einsum: with indices summed away, a sum (one operand) or a
    batched product viewed back (several); without, a permutation or an elementwise product."""
    summed = set("".join(node.terms)) - set(node.output)
    if len(node.terms) == 1:
        return "SumBackward1" if summed else "PermuteBackward0"
    return "ViewBackward0" if summed else "MulBackward0"


def _normalize(node):
    if node.stats_shape is not None:
        return "NativeGroupNormBackward0"
    return "NativeBatchNormBackward0" if 0 in node.axes else "NativeLayerNormBackward0"


_UPSAMPLE = {"nearest": "UpsampleNearest", "nearest-exact": "_UpsampleNearestExact", "linear": "UpsampleLinear",
             "bilinear": "UpsampleBilinear", "bicubic": "UpsampleBicubic", "trilinear": "UpsampleTrilinear"}


def _interpolate(node):
    return f"{_UPSAMPLE[node.mode]}{len(node.input_meta[0][0]) - 2}DBackward0"


def _pool(kind):
    """``MaxPool2DWithIndicesBackward0``, ``AvgPool1DBackward0``: numbered by the spatial dims."""
    return lambda node: kind.format(len(node.input_meta[0][0]) - 2)


_NAMES = {
    "CopySlices": "CopySlices",   # a write into a view of a tensor with history
    "Sum": _overload("SumBackward0", "SumBackward1"),
    "Mean": _overload("MeanBackward0", "MeanBackward1"),
    "Prod": _overload("ProdBackward0", "ProdBackward1"),
    "Max": "MaxBackward1", "Min": "MinBackward1", "MaxDim": "MaxBackward0", "MinDim": "MinBackward0",
    "MedianAll": "MedianBackward0", "NanmedianAll": "NanmedianBackward0", "MedianDim": "MedianBackward1",
    "NanmedianDim": "NanmedianBackward1",
    "Norm": "LinalgVectorNormBackward0",
    "Pow": _pow,
    "Square": "PowBackward0",
    "RoundedDiv": "DivBackward2",
    "ToDtype": "ToCopyBackward0", "ToDevice": "ToCopyBackward0", "Contiguous": "CloneBackward0",
    "Clamp": "ClampBackward1",
    "Reshape": lambda node: _RESHAPES[node.layout], "View": "ViewBackward0", "Narrow": "SliceBackward0",
    "Squeeze": lambda node: f"SqueezeBackward{node.overload}", "MatrixTranspose": "TBackward0",
    "Rsub": lambda node: "RsubBackward1" if node.number_other else "RsubBackward0",
    "Einsum": _einsum,
    "GetItem": _getitem,
    "Pad": "ConstantPadNdBackward0",
    "ReflectionPad": lambda node: f"ReflectionPad{node.padded_dims}DBackward0",
    "ReplicationPad": lambda node: f"ReplicationPad{node.padded_dims}DBackward0",
    "MaxPool": _pool("MaxPool{}DWithIndicesBackward0"), "AvgPool": _pool("AvgPool{}DBackward0"),
    "Log1p": "Log1PBackward0",
    "Unfold": "Im2ColBackward0", "Fold": "Col2ImBackward0",
    "Conv": "ConvolutionBackward0", "ConvTranspose": "ConvolutionBackward0",
    "Linear": _linear,
    "Interpolate": _interpolate,
    "MatMul": _matmul,
    "SparseCooTensor": "SparseCooTensorWithDimsAndTensorsBackward0", "ToSparse": "ToSparseBackward1",
    "SparseMm": "SparseAddmmBackward0", "SparseMatMul": "MmBackward0", "SparseAdd": "AddBackward0",
    "SparseMul": "MulBackward0", "SparseTranspose": "TBackward0", "SparseSumAll": "SumBackward0",
    # linear algebra: PyTorch names the nodes after its linalg kernels
    "Inverse": "LinalgInvExBackward0", "InverseEx": "LinalgInvExBackward0", "Solve": "LinalgSolveExBackward0",
    "SolveEx": "LinalgSolveExBackward0", "Det": "LinalgDetBackward0", "Slogdet": "LinalgSlogdetBackward0",
    "Cholesky": "LinalgCholeskyExBackward0", "Qr": "LinalgQrBackward0", "Eigh": "LinalgEighBackward0",
    "Eigvalsh": "LinalgEighBackward0", "Svd": "LinalgSvdBackward0", "Svdvals": "LinalgSvdBackward0",
    "Pinv": "LinalgPinvBackward0", "SolveTriangular": "LinalgSolveTriangularBackward0",
    "MatrixExp": "LinalgMatrixExpBackward0",
    "Normalize": _normalize, "NormalizeWithStatistics": "NativeBatchNormBackward0",
    "Huber": "HuberLossBackward0", "SmoothL1": "SmoothL1LossBackward0",
    "Dropout": "MulBackward0", "Normal": lambda node: f"NormalBackward{node.overload}",
    "AdaptiveAvgPool": _pool("AdaptiveAvgPool{}DBackward0"),
    "AdaptiveMaxPool": _pool("AdaptiveMaxPool{}DBackward0"), "MaxUnpool": _pool("MaxUnpool{}DBackward0"),
}


def grad_fn_name(node):
    """The name PyTorch gives the node of the same op (see the module docstring)."""
    op = node.op
    if op.takes_tensors:   # a user's Function: PyTorch's <Name>Backward
        return op.__name__ + "Backward"
    name = _NAMES.get(op.__name__)
    if name is None:
        return op.__name__ + "Backward0"
    if callable(name):
        pinned = getattr(node, "pinned_name", None)
        return pinned if pinned is not None else name(node)
    return name


def static_name(op):
    """The name every node of ``op`` gets, or None where it depends on the node (an overload
    read from its arguments)."""
    if op.takes_tensors:
        return op.__name__ + "Backward"
    name = _NAMES.get(op.__name__)
    if name is None:
        return op.__name__ + "Backward0"
    return None if callable(name) else name


def pin_name(node):
    """Fix the name of a node whose name reads its saved values, before backward frees them."""
    name = _NAMES.get(node.op.__name__)
    if callable(name) and not node.op.takes_tensors:
        node.pinned_name = name(node)
