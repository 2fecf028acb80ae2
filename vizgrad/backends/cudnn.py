"""``vizgrad.backends.cudnn``: PyTorch's cuDNN flags, kept so that programs can set them.
vizgrad's convolutions do not use cuDNN, so the flags change nothing: ``benchmark`` and
``deterministic`` are accepted as set (vizgrad's kernels are deterministic), ``enabled``
too; ``is_available()`` is False."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: vizgrad does not use cuDNN."""
    return False


def version():
    """None: no cuDNN is loaded (PyTorch's answer without one)."""
    return None
