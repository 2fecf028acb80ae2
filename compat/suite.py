"""The program registry, the runner and the number-by-number comparison."""

import contextlib
import io
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

# float32 rounding, accumulated over a few training steps
RTOL = 2e-4
ATOL = 1e-5


@dataclass(frozen=True)
class Program:
    """One compatibility program (see the package docstring)."""

    name: str
    function: Callable
    source: str
    needs: Optional[str] = None
    expect: Optional[Callable] = None

    @property
    def seed(self):
        return zlib.crc32(self.name.encode())


PROGRAMS = {}


def program(source, needs=None, expect=None):
    """Register ``function(torch, rng)`` as a program modelled on ``source``."""
    def decorate(function):
        PROGRAMS[function.__name__] = Program(function.__name__, function, source, needs, expect)
        return function
    return decorate


def plain(value):
    """Results as plain Python/NumPy values: tensors of either library become arrays."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return np.asarray(value.detach().cpu().numpy())
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and any(hasattr(v, "detach") for v in value):
        return [plain(item) for item in value]
    return value


@contextlib.contextmanager
def _single_threaded(module):
    """One intra-op thread while a program runs: its tensors are tiny, and on a busy machine
    PyTorch's thread pool makes them up to 50 times slower."""
    if not hasattr(module, "set_num_threads"):
        yield
        return
    threads = module.get_num_threads()
    module.set_num_threads(1)
    try:
        yield
    finally:
        module.set_num_threads(threads)


def run(entry, module):
    """Run one program with ``module`` as torch: its results, plus ``stdout`` when it printed."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output), _single_threaded(module):
        results = entry.function(module, np.random.default_rng(entry.seed))
    results = plain(dict(results))
    if output.getvalue():
        results["stdout"] = output.getvalue()
    return results


def compare(ours, theirs, rtol=RTOL, atol=ATOL):
    """The differences between two result dicts, as readable lines (empty when they agree)."""
    differences = []
    for key in sorted(set(ours) | set(theirs)):
        if key not in ours or key not in theirs:
            differences.append(f"{key}: only in {'vizgrad' if key in ours else 'PyTorch'}'s results")
            continue
        a, b = ours[key], theirs[key]
        if isinstance(a, str) or isinstance(b, str):
            # vizgrad's own objects print as `vizgrad.Size`, `vizgrad.float64` where PyTorch
            # writes `torch.` (README): the one difference in printed text that is by design
            if isinstance(a, str):
                a = a.replace("vizgrad.", "torch.")
            if a != b:
                differences.append(f"{key}: {a!r} (vizgrad) != {b!r} (PyTorch)")
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            differences.append(f"{key}: shape {a.shape} (vizgrad) != {b.shape} (PyTorch)")
        elif a.dtype.kind in "biu" and b.dtype.kind in "biu" or a.dtype == bool or b.dtype == bool:
            if not np.array_equal(a, b):
                differences.append(f"{key}: {a.tolist()} (vizgrad) != {b.tolist()} (PyTorch)")
        elif not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True):
            worst = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))
            differences.append(f"{key}: differs by up to {worst:.3g} (rtol={rtol}, atol={atol})")
    return differences
