"""Small datasets made locally and deterministically from a seed, for lessons and tests.

Each returns ``(X, y)`` tensors: X float32 of shape (n, features), y int64 class labels
(float32 targets for ``make_regression``).
"""

import math

import numpy as np

from ..errors import ArgumentError


def _tensors(points, labels, dtype_labels="int64"):
    from ..creation import tensor
    return tensor(points.astype(np.float32)), tensor(labels.astype(dtype_labels))


def make_moons(n_samples=100, noise=0.0, seed=0):
    """Two interleaving half circles (classes 0 and 1), with Gaussian ``noise``."""
    rng = np.random.default_rng(seed)
    outer, inner = n_samples // 2 + n_samples % 2, n_samples // 2
    angles_outer = np.linspace(0, math.pi, outer)
    angles_inner = np.linspace(0, math.pi, inner)
    points = np.concatenate([np.stack([np.cos(angles_outer), np.sin(angles_outer)], 1),
                             np.stack([1 - np.cos(angles_inner), 0.5 - np.sin(angles_inner)], 1)])
    labels = np.concatenate([np.zeros(outer), np.ones(inner)])
    points += rng.normal(scale=noise, size=points.shape)
    return _tensors(points, labels)


def make_circles(n_samples=100, noise=0.0, factor=0.5, seed=0):
    """A small circle (class 1) inside a large one (class 0); ``factor`` is the radius ratio."""
    if not 0 < factor < 1:
        raise ArgumentError(f"make_circles: factor must be in (0, 1), got {factor}")
    rng = np.random.default_rng(seed)
    outer, inner = n_samples // 2 + n_samples % 2, n_samples // 2
    a = np.linspace(0, 2 * math.pi, outer, endpoint=False)
    b = np.linspace(0, 2 * math.pi, inner, endpoint=False)
    points = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1), factor * np.stack([np.cos(b), np.sin(b)], 1)])
    labels = np.concatenate([np.zeros(outer), np.ones(inner)])
    points += rng.normal(scale=noise, size=points.shape)
    return _tensors(points, labels)


def make_spirals(n_samples=100, noise=0.0, classes=2, turns=1.5, seed=0):
    """``classes`` interleaved spiral arms, each turning ``turns`` times."""
    rng = np.random.default_rng(seed)
    per_class = [n_samples // classes + (1 if k < n_samples % classes else 0) for k in range(classes)]
    points, labels = [], []
    for k, count in enumerate(per_class):
        radius = np.linspace(0.05, 1.0, count)
        angle = radius * turns * 2 * math.pi + 2 * math.pi * k / classes
        points.append(np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1))
        labels.append(np.full(count, k))
    points = np.concatenate(points) + rng.normal(scale=noise, size=(n_samples, 2))
    return _tensors(points, np.concatenate(labels))


def make_xor(n_samples=100, noise=0.0, seed=0):
    """Points in the square [-1, 1]²; class 1 where x and y have opposite signs."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(-1, 1, size=(n_samples, 2))
    labels = (points[:, 0] * points[:, 1] < 0).astype(np.int64)
    points += rng.normal(scale=noise, size=points.shape)
    return _tensors(points, labels)


def make_blobs(n_samples=100, centers=3, n_features=2, cluster_std=1.0, center_box=(-10.0, 10.0), seed=0):
    """Gaussian clusters around ``centers`` (a count, or an array of centre coordinates)."""
    rng = np.random.default_rng(seed)
    if isinstance(centers, int):
        centers = rng.uniform(*center_box, size=(centers, n_features))
    centers = np.asarray(centers, dtype=np.float64)
    counts = [n_samples // len(centers) + (1 if k < n_samples % len(centers) else 0) for k in range(len(centers))]
    points = np.concatenate([rng.normal(c, cluster_std, size=(n, centers.shape[1])) for c, n in zip(centers, counts)])
    labels = np.concatenate([np.full(n, k) for k, n in enumerate(counts)])
    return _tensors(points, labels)


def make_regression(n_samples=100, n_features=1, noise=0.0, bias=0.0, seed=0):
    """A linear target ``X @ w + bias + noise`` with random weights; y is float32 of shape (n,)."""
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((n_samples, n_features))
    weights = rng.uniform(-2, 2, size=n_features) * 10
    target = points @ weights + bias + rng.normal(scale=noise, size=n_samples) if noise else points @ weights + bias
    return _tensors(points, target, "float32")


def load_digits():
    """scikit-learn's bundled 8×8 handwritten digits (1,797 images, offline), as
    ``(X, y)`` with X float32 of shape (1797, 1, 8, 8) scaled to [0, 1] and y int64.
    Needs the optional extra: ``pip install 'vizgrad[digits]'`` (scikit-learn)."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise ImportError("load_digits needs scikit-learn, which ships the digits offline: "
                          "pip install 'vizgrad[digits]' (or pip install scikit-learn)") from None
    bunch = sklearn_digits()
    images = bunch.images.reshape(-1, 1, 8, 8) / 16.0
    return _tensors(images, bunch.target)
