"""The LU factorization (``linalg.lu_factor``, ``lu_factor_ex``, ``linalg.lu``, ``lu_unpack``,
``Tensor.lu``) against PyTorch: factors, pivots, infos, errors, and gradients of every order."""

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

SHAPES = [(3, 3), (2, 4, 4), (5, 3), (2, 3, 5), (1, 1)]


def _pair(array):
    return vg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def _close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_and_unpack_agree_with_pytorch_with_gradients(shape):
    rng = np.random.default_rng(0)
    x, tx = _pair(rng.normal(size=shape))
    LU, pivots = vg.linalg.lu_factor(x)
    their_LU, their_pivots = torch.linalg.lu_factor(tx)
    _close(LU, their_LU)
    assert pivots.dtype is vg.int32 and pivots.tolist() == their_pivots.tolist()
    P, L, U = vg.lu_unpack(LU, pivots)
    their_P, their_L, their_U = torch.lu_unpack(their_LU, their_pivots)
    for ours, theirs in ((P, their_P), (L, their_L), (U, their_U)):
        _close(ours, theirs)
    _close(P @ L @ U, tx)
    w_lu, w_l, w_u = (rng.normal(size=t.shape) for t in (LU, L, U))
    loss = (LU * vg.tensor(w_lu)).sum() + (L * vg.tensor(w_l)).sum() + (U * vg.tensor(w_u)).sum()
    their_loss = ((their_LU * torch.tensor(w_lu)).sum() + (their_L * torch.tensor(w_l)).sum()
                  + (their_U * torch.tensor(w_u)).sum())
    loss.backward()
    their_loss.backward()
    _close(x.grad, tx.grad, 1e-9)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2)])
def test_linalg_lu_and_its_second_derivative(shape):
    rng = np.random.default_rng(1)
    x, tx = _pair(rng.normal(size=shape))
    P, L, U = vg.linalg.lu(x)
    their_P, their_L, their_U = torch.linalg.lu(tx)
    for ours, theirs in ((P, their_P), (L, their_L), (U, their_U)):
        _close(ours, theirs)
    assert not P.requires_grad and L.requires_grad and U.requires_grad
    (grad,) = vg.autograd.grad((L ** 2).sum() + (U ** 3).sum(), x, create_graph=True)
    (their_grad,) = torch.autograd.grad((their_L ** 2).sum() + (their_U ** 3).sum(), tx, create_graph=True)
    _close(grad, their_grad, 1e-9)
    (grad.sin().sum()).backward()
    (their_grad.sin().sum()).backward()
    _close(x.grad, tx.grad, 1e-8)


def test_tensor_lu_and_the_infos():
    A = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours, theirs = vg.tensor(A).lu(get_infos=True), torch.tensor(A).lu(get_infos=True)
    _close(ours[0], theirs[0])
    assert ours[1].tolist() == theirs[1].tolist() == [2, 2]
    assert ours[2].item() == theirs[2].item() == 2
    LU, pivots, info = vg.linalg.lu_factor_ex(vg.zeros(3, 2, 2))
    assert info.tolist() == [1, 1, 1] and pivots.tolist() == [[1, 2]] * 3
    B = vg.randn(4, 4)
    _close(B.lu()[0], torch.tensor(B.numpy()).lu()[0], 1e-6)
    assert vg.linalg.lu_factor_ex(B).info.item() == 0


def test_singular_matrices_raise_where_pytorch_raises():
    singular = vg.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(vg.linalg.LinAlgError, match=r"linalg.lu_factor: U\[2,2\] is zero"):
        vg.linalg.lu_factor(singular)
    with pytest.raises(vg.linalg.LinAlgError, match=r"lu_factor: \(Batch element 1\): U\[1,1\] is zero"):
        vg.linalg.lu_factor(vg.stack([vg.eye(2), vg.zeros(2, 2)]))
    with pytest.raises(vg.linalg.LinAlgError, match="linalg.lu_factor_ex"):
        vg.linalg.lu_factor_ex(singular, check_errors=True)
    with pytest.raises(RuntimeError, match=r"lu: U\[2,2\] is zero"):
        singular.lu()
    P, L, U = vg.linalg.lu(singular)                 # linalg.lu does not check, as PyTorch's
    assert vg.allclose(P @ L @ U, singular)


def test_lu_unpack_options_and_mistakes():
    LU, pivots = vg.linalg.lu_factor(vg.randn(3, 3))
    P, L, U = vg.lu_unpack(LU, pivots, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and P.shape == (3, 3)
    P, L, U = vg.lu_unpack(LU, pivots, unpack_pivots=False)
    assert P.numel() == 0 and L.shape == (3, 3)
    with pytest.raises(TypeError, match="lu_unpack: LU_pivots is expected to be a tensor of int32 dtype.*int64"):
        vg.lu_unpack(LU, pivots.long())
    with pytest.raises(ValueError, match=r"lu_unpack: LU_pivots of shape \(2,\)"):
        vg.lu_unpack(LU, pivots[:2])
    with pytest.raises(TypeError, match="linalg.lu_factor: A must be a floating point matrix, got int64"):
        vg.linalg.lu_factor(vg.ones(2, 2, dtype=vg.int64))
    with pytest.raises(ValueError, match="linalg.lu: A must be a matrix"):
        vg.linalg.lu(vg.ones(3))
    with pytest.raises(ValueError, match="without pivoting"):
        vg.linalg.lu(vg.ones(2, 2), pivot=False)
