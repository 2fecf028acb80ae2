"""End-to-end training: layers, losses, optimizers and data loading together reach the
accuracy the task promises, within a generous wall-clock bound.

- An MLP fits two moons (>= 97% training accuracy) within 10 seconds (here ~0.1-0.3 s).
- A small CNN reaches >= 90% test accuracy on scikit-learn's 8x8 digits within 60
  seconds (here ~1-3 s); skipped when scikit-learn, which ships the digits, is absent.

The time bounds are loose on purpose (CI machines are noisy); the accuracies are the
real assertions. Seeds are fixed, so a run is reproducible.
"""

import time

import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import data, nn


def accuracy(model, x, y):
    model.eval()
    with vg.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def test_mlp_fits_two_moons_within_ten_seconds():
    vg.manual_seed(0)
    x, y = data.make_moons(1000, noise=0.1, seed=1)
    model = nn.MLP([2, 16, 16, 2])
    optimizer = vg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=32, shuffle=True)
    start = time.perf_counter()
    first_loss = F.cross_entropy(model(x), y).item()
    for _ in range(10):                                   # 10 epochs of 32 mini-batches
        model.train()
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    final_loss = F.cross_entropy(model(x), y).item()
    train_accuracy = accuracy(model, x, y)
    elapsed = time.perf_counter() - start
    assert train_accuracy >= 0.97, f"training accuracy {train_accuracy:.3f} after 10 epochs"
    assert final_loss < 0.2 * first_loss
    assert elapsed < 10.0, f"training took {elapsed:.1f} s"


def small_cnn():
    """8x8 -> conv 16 -> pool -> conv 32 -> pool -> 32x2x2 -> 10 classes (7k parameters)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def test_small_cnn_learns_the_digits_within_a_minute():
    pytest.importorskip("sklearn", reason="scikit-learn is not installed, so load_digits has no data source "
                                          "(pip install 'vizgrad[digits]')")
    vg.manual_seed(0)
    x, y = data.load_digits()
    assert x.shape == (1797, 1, 8, 8)
    train, test = data.random_split(data.TensorDataset(x, y), [0.8, 0.2], generator=vg.Generator(0))
    test_rows = vg.tensor(test.indices)
    x_test, y_test = x[test_rows], y[test_rows]
    model = small_cnn()
    optimizer = vg.optim.Adam(model.parameters(), lr=1e-2)
    loader = data.DataLoader(train, batch_size=64, shuffle=True)
    start = time.perf_counter()
    for _ in range(6):
        model.train()
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    test_accuracy = accuracy(model, x_test, y_test)
    elapsed = time.perf_counter() - start
    assert len(test) == 359 and not set(test.indices) & set(train.indices)
    assert test_accuracy >= 0.90, f"test accuracy {test_accuracy:.3f} after 6 epochs"
    assert elapsed < 60.0, f"training took {elapsed:.1f} s"
