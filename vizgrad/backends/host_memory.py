"""Freed host memory kept for the next step, as CuPy's pool keeps device memory.

A training step on NumPy allocates and frees the same large temporaries every time. With
glibc's starting settings each one over 128 KiB is mapped afresh from the kernel, and the top
of the heap is handed back once 128 KiB of it is free, so every step pays a page fault per 4 KiB
it touches: a tiny transformer's step spends half its time there. glibc raises both thresholds
by itself once the program frees a large mapped block, up to 32 MiB and 64 MiB; vizgrad sets
them there at import, which is the ceiling glibc would reach anyway.

Whoever sets glibc's malloc themselves (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_TOP_PAD_``, ``MALLOC_MMAP_MAX_`` or a ``glibc.malloc`` tunable in ``GLIBC_TUNABLES``)
keeps their settings; other C libraries are left alone.
"""

import ctypes
import os
import platform

# mallopt's parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 1024 * 1024      # blocks below this come from the heap (glibc's dynamic maximum)
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD    # free memory kept at the heap's top (glibc keeps this ratio)

_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def user_has_set_malloc(environ=os.environ):
    """Whether the environment already configures glibc's malloc."""
    return (any(name in environ for name in _USER_SETTINGS)
            or "glibc.malloc." in environ.get("GLIBC_TUNABLES", ""))


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds (see the module's docstring); return whether it did."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc" or user_has_set_malloc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
