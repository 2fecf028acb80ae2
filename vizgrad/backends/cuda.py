"""``vizgrad.backends.cuda``: PyTorch's CUDA math flags, kept so that programs can set them.
CuPy computes float32 matrix products in full float32, so ``matmul.allow_tf32`` stays what
it is set to and changes nothing; ``is_built()`` says whether CuPy is installed."""

import types

matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                               allow_bf16_reduced_precision_reduction=True)


def is_built():
    """True when vizgrad can run on CUDA here: CuPy is installed."""
    from . import base
    return "cuda" in base._by_device_type


def preferred_linalg_library(backend=None):
    """The linear-algebra library: CuPy's own (``backend`` is accepted and ignored)."""
    return "cupy"
