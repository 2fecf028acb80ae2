"""Datasets, batching, splitting and the toy datasets."""

import math
import sys

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import data
from vizgrad.errors import ShapeError


def rows(n=10):
    return data.TensorDataset(vg.arange(n), vg.arange(n) * 2)


class Squares(data.Dataset):
    """A plain map-style dataset whose samples are dicts."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": vg.tensor([float(i), float(-i)]), "y": i * i, "tag": (i % 2 == 0)}


# --- datasets -------------------------------------------------------------------------
def test_tensor_dataset_indexes_rows_and_checks_lengths():
    ds = rows(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.item() == 3 and y.item() == 6
    with pytest.raises(ShapeError, match=r"\(5,\).*\(4,\)"):
        data.TensorDataset(vg.arange(5), vg.arange(4))
    with pytest.raises(ValueError, match="at least one"):
        data.TensorDataset()


def test_subset_maps_indices():
    subset = data.Subset(rows(10), [7, 2, 5])
    assert len(subset) == 3
    assert subset[0][0].item() == 7 and subset[2][1].item() == 10


# --- DataLoader -------------------------------------------------------------------------
@pytest.mark.parametrize("drop_last, sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_batch_sizes_and_drop_last(drop_last, sizes):
    loader = data.DataLoader(rows(10), batch_size=4, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(sizes)
    assert [b[0].shape[0] for b in batches] == sizes
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), np.arange(sum(sizes)))
    for x, y in batches:                      # fields stay aligned
        np.testing.assert_array_equal(y.numpy(), 2 * x.numpy())


def test_batch_size_must_be_positive():
    for bad in (0, -1):    # None is PyTorch's "no batching"
        with pytest.raises(ValueError, match="batch_size"):
            data.DataLoader(rows(), batch_size=bad)
    with pytest.raises(TypeError, match="batch_size must be an int"):   # a vizgrad ArgumentTypeError
        data.DataLoader(rows(), batch_size=2.5)


def epochs(loader, count):
    return [np.concatenate([b[0].numpy() for b in loader]).tolist() for _ in range(count)]


def test_shuffle_is_reproducible_with_a_seeded_generator_and_new_each_epoch():
    first = epochs(data.DataLoader(rows(20), batch_size=6, shuffle=True, generator=vg.Generator(7)), 3)
    again = epochs(data.DataLoader(rows(20), batch_size=6, shuffle=True, generator=vg.Generator(7)), 3)
    other = epochs(data.DataLoader(rows(20), batch_size=6, shuffle=True, generator=vg.Generator(8)), 1)
    assert first == again
    assert first[0] != first[1] != first[2]
    assert first[0] != other[0]
    for order in first:
        assert sorted(order) == list(range(20)) and order != list(range(20))


def test_shuffle_without_generator_follows_manual_seed():
    vg.manual_seed(3)
    a = epochs(data.DataLoader(rows(12), batch_size=5, shuffle=True), 2)
    vg.manual_seed(3)
    b = epochs(data.DataLoader(rows(12), batch_size=5, shuffle=True), 2)
    assert a == b and a[0] != a[1]


def test_collate_fn_receives_the_list_of_samples():
    seen = []

    def collate(samples):
        seen.append(len(samples))
        return [int(x.item()) for x, _ in samples]

    loader = data.DataLoader(rows(7), batch_size=3, collate_fn=collate)
    assert list(loader) == [[0, 1, 2], [3, 4, 5], [6]]
    assert seen == [3, 3, 1]


def test_default_collate_of_dict_samples_from_a_plain_dataset():
    batches = list(data.DataLoader(Squares(5), batch_size=2))
    assert len(batches) == 3
    first = batches[0]
    assert set(first) == {"x", "y", "tag"}
    np.testing.assert_array_equal(first["x"].numpy(), [[0.0, -0.0], [1.0, -1.0]])
    np.testing.assert_array_equal(first["y"].numpy(), [0, 1])
    np.testing.assert_array_equal(first["tag"].numpy(), [True, False])
    np.testing.assert_array_equal(batches[2]["y"].numpy(), [16])


def test_default_collate_structures():
    batch = data.default_collate([(vg.tensor([1.0, 2.0]), 3, 0.5), (vg.tensor([3.0, 4.0]), 4, 1.5)])
    assert isinstance(batch, list) and len(batch) == 3           # tuples collate to lists, as in PyTorch
    assert batch[0].shape == (2, 2)
    np.testing.assert_array_equal(batch[0].numpy(), [[1, 2], [3, 4]])
    assert batch[1].dtype == vg.int64 and batch[1].tolist() == [3, 4]
    assert batch[2].is_floating_point() and batch[2].tolist() == [0.5, 1.5]
    as_list = data.default_collate([[1, 2], [3, 4]])
    assert isinstance(as_list, list) and [t.tolist() for t in as_list] == [[1, 3], [2, 4]]
    nested = data.default_collate([{"a": {"b": 1.0}}, {"a": {"b": 2.0}}])
    assert nested["a"]["b"].tolist() == [1.0, 2.0]
    assert data.default_collate([np.float64(1.5), np.float64(2.5)]).tolist() == [1.5, 2.5]
    assert data.default_collate(["a", "b"]) == ["a", "b"]


# --- random_split ---------------------------------------------------------------------------
def indices(subset):
    return [int(subset[i][0].item()) for i in range(len(subset))]


def test_random_split_by_lengths_is_a_disjoint_cover_and_reproducible():
    ds = rows(10)
    parts = data.random_split(ds, [3, 7], generator=vg.Generator(1))
    assert [len(p) for p in parts] == [3, 7]
    a, b = indices(parts[0]), indices(parts[1])
    assert set(a).isdisjoint(b) and sorted(a + b) == list(range(10))
    again = data.random_split(ds, [3, 7], generator=vg.Generator(1))
    assert indices(again[0]) == a
    other = data.random_split(ds, [3, 7], generator=vg.Generator(2))
    assert indices(other[0]) != a or indices(other[1]) != b


def test_random_split_by_fractions_spreads_the_remainder():
    parts = data.random_split(rows(11), [0.5, 0.3, 0.2], generator=vg.Generator(0))
    # floor: 5, 3, 2 (10); the one left over goes to the first subset, as in PyTorch
    assert [len(p) for p in parts] == [6, 3, 2]
    seen = sum((indices(p) for p in parts), [])
    assert sorted(seen) == list(range(11))


def test_random_split_fractions_on_a_tiny_dataset():
    # the fractions add up to 1 == len(dataset): they are still fractions, not counts
    parts = data.random_split(rows(1), [0.5, 0.5], generator=vg.Generator(0))
    assert [len(p) for p in parts] == [1, 0]


def test_random_split_lengths_must_add_up():
    with pytest.raises(ValueError, match="add up to 9 but the dataset has 10"):
        data.random_split(rows(10), [4, 5])


# --- toy datasets -------------------------------------------------------------------------
TOYS = {
    "moons": lambda seed: data.make_moons(101, noise=0.1, seed=seed),
    "circles": lambda seed: data.make_circles(101, noise=0.1, seed=seed),
    "spirals": lambda seed: data.make_spirals(101, noise=0.1, classes=3, seed=seed),
    "xor": lambda seed: data.make_xor(101, noise=0.1, seed=seed),
    "blobs": lambda seed: data.make_blobs(101, centers=4, n_features=3, seed=seed),
    "regression": lambda seed: data.make_regression(101, n_features=4, noise=0.5, seed=seed),
}
FEATURES = {"moons": 2, "circles": 2, "spirals": 2, "xor": 2, "blobs": 3, "regression": 4}


@pytest.mark.parametrize("name", list(TOYS))
def test_toy_datasets_are_deterministic_per_seed_with_shapes_and_dtypes(name):
    X, y = TOYS[name](0)
    X2, y2 = TOYS[name](0)
    X3, _ = TOYS[name](1)
    assert X.shape == (101, FEATURES[name]) and X.dtype == vg.float32
    assert y.shape == (101,)
    assert y.dtype == (vg.float32 if name == "regression" else vg.int64)
    np.testing.assert_array_equal(X.numpy(), X2.numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    assert not np.array_equal(X.numpy(), X3.numpy())
    assert np.all(np.isfinite(X.numpy()))


@pytest.mark.parametrize("name, counts", [("moons", [51, 50]), ("circles", [51, 50]), ("spirals", [34, 34, 33]),
                                          ("blobs", [26, 25, 25, 25])])
def test_toy_class_balance(name, counts):
    _, y = TOYS[name](0)
    assert np.bincount(y.numpy()).tolist() == counts


def test_moons_and_circles_geometry_without_noise():
    X, y = data.make_moons(40)
    X, y = X.numpy().astype(np.float64), y.numpy()
    upper = X[y == 0]
    np.testing.assert_allclose(np.hypot(upper[:, 0], upper[:, 1]), 1.0, rtol=1e-6)
    lower = X[y == 1]
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1.0, rtol=1e-6)
    X, y = data.make_circles(40, factor=0.3)
    radius = np.hypot(*X.numpy().astype(np.float64).T)
    np.testing.assert_allclose(radius[y.numpy() == 0], 1.0, rtol=1e-6)
    np.testing.assert_allclose(radius[y.numpy() == 1], 0.3, rtol=1e-6)
    with pytest.raises(ValueError, match="factor"):
        data.make_circles(10, factor=1.5)


def test_xor_labels_follow_the_quadrants():
    X, y = data.make_xor(200, seed=5)
    X = X.numpy()
    np.testing.assert_array_equal(y.numpy(), (X[:, 0] * X[:, 1] < 0).astype(np.int64))
    assert 60 < y.numpy().sum() < 140          # roughly balanced
    assert np.abs(X).max() <= 1


def test_blobs_cluster_around_given_centres():
    centres = np.array([[-5.0, 0.0], [5.0, 0.0]])
    X, y = data.make_blobs(400, centers=centres, cluster_std=0.5, seed=3)
    X, y = X.numpy(), y.numpy()
    for k in range(2):
        np.testing.assert_allclose(X[y == k].mean(axis=0), centres[k], atol=0.15)
        np.testing.assert_allclose(X[y == k].std(axis=0), 0.5, atol=0.1)


def test_regression_is_linear_without_noise():
    X, y = data.make_regression(50, n_features=3, bias=2.0, seed=4)
    A = np.hstack([X.numpy().astype(np.float64), np.ones((50, 1))])
    solution, residual, *_ = np.linalg.lstsq(A, y.numpy().astype(np.float64), rcond=None)
    assert solution[-1] == pytest.approx(2.0, abs=1e-4)
    np.testing.assert_allclose(A @ solution, y.numpy(), atol=1e-3)


def test_load_digits_with_scikit_learn():
    pytest.importorskip("sklearn", reason="scikit-learn is not installed, so load_digits has no data source")
    X, y = data.load_digits()
    assert X.shape == (1797, 1, 8, 8) and X.dtype == vg.float32
    assert y.shape == (1797,) and y.dtype == vg.int64
    values = X.numpy()
    assert values.min() >= 0 and values.max() <= 1 and values.max() == 1
    assert sorted(set(y.numpy().tolist())) == list(range(10))


def test_load_digits_without_scikit_learn_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match="scikit-learn") as info:
        data.load_digits()
    assert "pip install" in str(info.value) and "vizgrad[digits]" in str(info.value)


def test_toy_data_trains_through_a_loader():
    """The pieces together: a shuffled loader over make_moons feeds a logistic regression."""
    X, y = data.make_moons(64, noise=0.05, seed=0)
    w = vg.zeros(2, requires_grad=True)
    b = vg.zeros(1, requires_grad=True)
    opt = vg.optim.SGD([w, b], lr=0.5)
    loader = data.DataLoader(data.TensorDataset(X, y), batch_size=16, shuffle=True, generator=vg.Generator(0))

    def loss_of(xb, yb):
        logits = (xb * w).sum(1) + b
        target = yb.to(vg.float32)
        return (logits.exp().add(1).log() - target * logits).mean()

    start = loss_of(X, y).item()
    for _ in range(5):
        for xb, yb in loader:
            opt.zero_grad()
            loss_of(xb, yb).backward()
            opt.step()
    assert loss_of(X, y).item() < start - 0.1
    assert math.isfinite(start)
