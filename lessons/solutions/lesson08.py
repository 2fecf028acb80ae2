"""Reference solutions for lesson 08 (the GPU)."""

import vizgrad as vg


def pick_device():
    """Exercise 8.1: decide at run time, so one notebook runs everywhere."""
    return "cuda" if vg.cuda.is_available() else "cpu"


def matmul_gflops(n, seconds):
    """Exercise 8.2: n² entries, each n multiplies and n adds: 2n³ operations."""
    return 2 * n ** 3 / seconds / 1e9
