"""``vizgrad.backends.mps``: Apple's Metal backend, which vizgrad does not have."""


def is_available():
    """False: vizgrad runs on NumPy (CPU) and CuPy (CUDA) only."""
    return False


def is_built():
    """False: vizgrad has no Metal backend."""
    return False
