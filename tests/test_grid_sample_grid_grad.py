"""grid_sample's gradient in the grid: numerical gradients (gradcheck, float64) for bilinear
with each padding_mode and align_corners, the clip's zero gradient on and beyond the border
(PyTorch's), and nearest's zero grid gradient."""

import numpy as np
import pytest

import vizgrad
import vizgrad.nn.functional as F

RNG = np.random.default_rng(20261203)


def _normalize(u, n, align_corners):
    """Pixel coordinate ``u`` along an axis of ``n`` pixels to grid_sample's [-1, 1] scale."""
    return 2 * u / (n - 1) - 1 if align_corners else (2 * u + 1) / n - 1


def _smooth_grid(size, points, align_corners, low, high):
    """A (1, *points, d) grid whose pixel coordinates lie in [low, high) per axis (as multiples of
    the axis size), a fraction in [0.1, 0.9] off the pixel lattice, where bilinear is smooth."""
    d = len(size)
    grid = np.empty((1,) + points + (d,))
    for k in range(d):
        n = size[d - 1 - k]                                   # grid component k is axis d - 1 - k
        whole = RNG.integers(int(np.floor(low * n)), int(np.ceil(high * n)), size=(1,) + points)
        grid[..., k] = _normalize(whole + RNG.uniform(0.1, 0.9, size=whole.shape), n, align_corners)
    return grid


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size, points", [((4, 5), (3, 4)), ((3, 4, 3), (2, 2, 3))])
def test_bilinear_gradcheck_in_the_input_and_the_grid(padding_mode, align_corners, size, points):
    low, high = (-1.5, 2.5) if padding_mode == "reflection" else (-0.4, 1.4)   # reflection: several folds
    x = vizgrad.tensor(RNG.normal(size=(1, 2) + size), requires_grad=True)
    grid = vizgrad.tensor(_smooth_grid(size, points, align_corners, low, high), requires_grad=True)
    assert vizgrad.autograd.gradcheck(
        lambda a, g: F.grid_sample(a, g, padding_mode=padding_mode, align_corners=align_corners), (x, grid))


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
def test_bilinear_gradgradcheck_in_the_grid_with_clipping(padding_mode):
    x = vizgrad.tensor(RNG.normal(size=(1, 1, 3, 4)), requires_grad=True)
    grid = vizgrad.tensor(_smooth_grid((3, 4), (2, 3), True, -0.5, 1.5), requires_grad=True)
    assert vizgrad.autograd.gradgradcheck(
        lambda a, g: F.grid_sample(a, g, padding_mode=padding_mode, align_corners=True), (x, grid))


def _grid_grad(x, grid, **options):
    grid = vizgrad.tensor(grid, requires_grad=True)
    F.grid_sample(vizgrad.tensor(x), grid, **options).sum().backward()
    return grid.grad.numpy()


def test_the_grid_gradient_is_the_bilinear_slope_times_the_unnormalization_factor():
    x = np.arange(12.0).reshape(1, 1, 3, 4)           # slope 1 along x, 4 along y (per pixel)
    grid = np.array([[[[0.1, 0.2]]]])
    np.testing.assert_allclose(_grid_grad(x, grid, align_corners=True), [[[[1 * 3 / 2, 4 * 2 / 2]]]])
    np.testing.assert_allclose(_grid_grad(x, grid, align_corners=False), [[[[1 * 4 / 2, 4 * 3 / 2]]]])


@pytest.mark.parametrize("padding_mode, expected", [("zeros", [1.5, 4.0]), ("border", [0.0, 4.0]),
                                                    ("reflection", [0.0, 4.0])])
def test_a_point_on_the_border_pixel_gets_no_gradient_from_the_clip(padding_mode, expected):
    # x = -1 with align_corners is the first column's centre: clipped there (border, reflection),
    # PyTorch gives the x gradient 0; unclipped (zeros) it is the slope into the image, 1 · 3/2
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    grid = np.array([[[[-1.0, 0.2]]]])
    np.testing.assert_allclose(_grid_grad(x, grid, padding_mode=padding_mode, align_corners=True),
                               [[[expected]]])


def _lattice(n, align_corners):
    """Grid values whose pixel coordinates are the integers and half-integers in [-2n, 3n]:
    pixel centres, the clip bounds and the reflection folds, where one-sided slopes differ."""
    return _normalize(np.arange(-4 * n, 6 * n + 1) / 2.0, n, align_corners)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_gradients_on_the_lattice_and_the_borders_match_pytorch(padding_mode, align_corners, mode):
    torch = pytest.importorskip("torch")
    size = (4, 5)
    x = RNG.normal(size=(2, 3) + size)
    grid = np.stack([RNG.choice(_lattice(size[1], align_corners), size=(2, 6, 7)),
                     RNG.choice(_lattice(size[0], align_corners), size=(2, 6, 7))], axis=-1)
    cotangent = RNG.normal(size=(2, 3, 6, 7))
    options = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    results = []
    for lib, functional in ((vizgrad, F), (torch, torch.nn.functional)):
        a, g = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
        out = functional.grid_sample(a, g, **options)
        out.backward(lib.tensor(cotangent))
        results.append((out.detach().numpy(), a.grad.numpy(), g.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_nearest_gives_the_grid_a_zero_gradient(padding_mode):
    x = vizgrad.tensor(RNG.normal(size=(2, 3, 4, 5)))
    grid = vizgrad.tensor(RNG.uniform(-1.2, 1.2, size=(2, 3, 4, 2)), requires_grad=True)
    out = F.grid_sample(x, grid, mode="nearest", padding_mode=padding_mode, align_corners=False)
    assert out.requires_grad                      # as in PyTorch: the output depends on the grid
    (grad,) = vizgrad.autograd.grad(out.sum(), grid)
    assert grad.shape == grid.shape and not np.any(grad.numpy())
    x.requires_grad_(True)
    F.grid_sample(x, grid, mode="nearest", padding_mode=padding_mode, align_corners=False).sum().backward()
    assert x.grad is not None and np.array_equal(grid.grad.numpy(), np.zeros(grid.shape))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("size, points", [((3, 4), (2, 3)), ((2, 3, 4), (2, 2, 3))])
def test_nan_in_the_input_and_the_grid_gives_pytorch_values(padding_mode, mode, size, points):
    # PyTorch clips a NaN coordinate to 0 (2-D) or size - 1 (3-D); unclipped, a 3-D sample is a
    # zero and a 2-D bilinear one NaN; a NaN pixel reaches only the samples that read it
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(1, 2) + size)
    x.flat[::5] = np.nan
    grid = RNG.uniform(-1.3, 1.3, size=(1,) + points + (len(size),))
    grid.flat[1::4] = np.nan
    options = {"mode": mode, "padding_mode": padding_mode, "align_corners": False}
    ours = F.grid_sample(vizgrad.tensor(x), vizgrad.tensor(grid), **options).numpy()
    theirs = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(grid), **options).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-12, equal_nan=True)
