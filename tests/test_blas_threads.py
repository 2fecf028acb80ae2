"""BLAS threads per product size (vizgrad/backends/blas_threads.py): small products run on one
thread, large ones on the count BLAS started with, and the values are np.matmul's."""

import numpy as np
import pytest
import threadpoolctl

import vizgrad as vg
from vizgrad.backends import blas_threads


def blas_thread_counts():
    return [library["num_threads"] for library in threadpoolctl.threadpool_info() if library["user_api"] == "blas"]


@pytest.fixture
def two_threads(monkeypatch):
    """A fresh chooser that found BLAS on two threads; the process's counts are restored after."""
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        monkeypatch.setattr(blas_threads, "_threads", blas_threads._Threads())
        yield


@pytest.mark.parametrize("a, b, expected", [
    ((3, 4), (4, 5), 3 * 4 * 5),
    ((4,), (4, 5), 4 * 5),
    ((3, 4), (4,), 3 * 4),
    ((4,), (4,), 4),
    ((7, 3, 4), (4, 5), 7 * 3 * 4 * 5),
    ((3, 4), (7, 4, 5), 7 * 3 * 4 * 5),
    ((2, 1, 3, 4), (6, 4, 5), 2 * 6 * 3 * 4 * 5),
])
def test_multiply_adds_counts_the_broadcast_product(a, b, expected):
    assert blas_threads.multiply_adds(np.empty(a), np.empty(b)) == expected


def test_small_products_run_on_one_thread_and_large_ones_on_all(two_threads):
    if not blas_thread_counts():
        pytest.skip("NumPy is linked to no BLAS that threadpoolctl can control")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 64)), rng.standard_normal((64, 16))
    np.testing.assert_array_equal(blas_threads.matmul(a, b), np.matmul(a, b))
    assert blas_thread_counts() == [1] * len(blas_thread_counts())
    big = rng.standard_normal((256, 256))
    assert blas_threads.multiply_adds(big, big) * 2 >= blas_threads.SERIAL_BELOW   # (512, 256) @ (256, 256) is large
    tall = rng.standard_normal((512, 256))
    np.testing.assert_allclose(blas_threads.matmul(tall, big), np.matmul(tall, big), rtol=1e-12, atol=1e-12)
    assert blas_thread_counts() == [2] * len(blas_thread_counts())


def test_scalar_operands_keep_numpys_error():
    with pytest.raises(ValueError, match="matmul"):
        blas_threads.matmul(np.float64(2.0), np.ones(3))


def test_tensor_matmul_goes_through_the_chooser(two_threads):
    if not blas_thread_counts():
        pytest.skip("NumPy is linked to no BLAS that threadpoolctl can control")
    a = vg.randn(8, 16, requires_grad=True)
    b = vg.randn(16, 4, requires_grad=True)
    (a @ b).sum().backward()
    assert blas_thread_counts() == [1] * len(blas_thread_counts())
    # float32 sums in another order than the float64 reference: float32's tolerance, with an
    # absolute part for the entries where the four terms nearly cancel
    np.testing.assert_allclose(a.grad.numpy(), np.ones((8, 4)) @ b.detach().numpy().T.astype(np.float64),
                               rtol=1e-5, atol=1e-6)
