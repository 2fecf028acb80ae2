"""``python -m compat`` (``make compat``): run every program with vizgrad and with PyTorch and
print which agree, then ``compat: N of M programs agree with PyTorch``."""

import sys
import time

import vizgrad

from . import PROGRAMS, compare, run


def _outcome(entry, module):
    try:
        return run(entry, module), None
    except Exception as error:        # a program that fails is reported, not fatal to the suite
        return None, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def main():
    try:
        import torch
    except ImportError:
        torch = None
    start = time.perf_counter()
    agree = 0
    for name, entry in PROGRAMS.items():
        ours, error = _outcome(entry, vizgrad)
        if error:
            status = f"fails on vizgrad: {error}"
        elif torch is None:
            status = "runs on vizgrad"
        else:
            theirs, torch_error = _outcome(entry, torch)
            if torch_error:
                status = f"fails on PyTorch: {torch_error}"
            else:
                differences = compare(ours, theirs)
                agree += not differences
                status = "agrees" if not differences else "differs: " + "; ".join(differences)
        waiting = f"  [waits for: {entry.needs}]" if entry.needs else ""
        print(f"{name:<28} {status}{waiting}")
    elapsed = time.perf_counter() - start
    if torch is None:
        print(f"compat: PyTorch is not installed, so nothing was compared ({len(PROGRAMS)} programs, {elapsed:.1f} s)")
        return 0
    print(f"compat: {agree} of {len(PROGRAMS)} programs agree with PyTorch ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
