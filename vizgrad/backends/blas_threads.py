"""BLAS threads chosen per matrix product, by its size.

OpenBLAS starts its threads for any product above a fixed size, and on a two-core machine
that other programs share (Binder, a lesson next to a test run) those threads wait for each
other: lesson 12's tiny transformer ran its step two to seven times slower with two threads
than with one. :func:`matmul` runs a product of fewer than :data:`SERIAL_BELOW` multiply-adds
on one thread and larger ones on the thread count BLAS had when vizgrad first multiplied
(what ``OPENBLAS_NUM_THREADS`` or the machine gave it). The count is set only when it
changes (a call into the library, about a microsecond), so a run of small products pays
nothing after the first.
"""

import math

import numpy as np
import threadpoolctl

SERIAL_BELOW = 1 << 25      # multiply-adds: lesson 12's (1024, 256) @ (256, 64) is one thread's, (512,)³ several's


class _Threads:
    """The BLAS libraries NumPy loaded and the thread count each product asks of them."""

    def __init__(self):
        self.libraries = None     # found on the first product, not at import
        self.full = 1
        self.current = None

    def use(self, count):
        if self.libraries is None:
            self.libraries = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
            self.full = max([library.num_threads for library in self.libraries], default=1)
            self.current = self.full
        count = min(count, self.full)
        if count != self.current:
            for library in self.libraries:
                library.set_num_threads(count)
            self.current = count


_threads = _Threads()


def multiply_adds(a, b):
    """How many multiply-adds ``np.matmul(a, b)`` does (batch dims broadcast; 1-D operands are
    a row or a column)."""
    rows = a.shape[-2] if a.ndim > 1 else 1
    inner = a.shape[-1]
    columns = b.shape[-1] if b.ndim > 1 else 1
    work = rows * inner * columns
    if a.ndim > 2 or b.ndim > 2:
        work *= math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return work


def matmul(a, b, /):
    """np.matmul on one BLAS thread when the product is small, on all of them when it is large."""
    if a.ndim == 0 or b.ndim == 0:
        return np.matmul(a, b)          # NumPy's own error for a scalar operand
    _threads.use(1 if multiply_adds(a, b) < SERIAL_BELOW else _threads.full)
    return np.matmul(a, b)
