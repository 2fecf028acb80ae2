"""The row-wise ops written in few passes, in place on their own temporaries (issue 31):
layer_norm, softmax, log_softmax, cross_entropy (nll_loss) and gelu. Values against plain
float64 NumPy formulas, gradients against finite differences (gradcheck), second derivatives
(gradgradcheck), and the in-place safety: no input, output or saved tensor changes in
forward or backward, and a second backward through the same graph gives the same result."""

import math

import numpy as np
import pytest
import torch

import vizgrad as vg
from vizgrad.autograd import gradcheck, gradgradcheck

F = vg.nn.functional
RNG = np.random.default_rng(31)


def _array(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


def _leaf(array, dtype=vg.float64):
    return vg.tensor(array, dtype=dtype, requires_grad=True)


# --- plain float64 references ------------------------------------------------------------

def _layer_norm_np(x, dims, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - dims, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        out = out * w
    return out if b is None else out + b


def _layer_norm_grads_np(x, g, dims, w, eps=1e-5):
    """dL/dx, dL/dγ, dL/dβ of layer norm written out directly (the textbook form)."""
    axes = tuple(range(x.ndim - dims, x.ndim))
    lead = tuple(range(x.ndim - dims))
    n = math.prod(x.shape[x.ndim - dims:])
    mean = x.mean(axis=axes, keepdims=True)
    inv = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mean) * inv
    gw = g * w
    grad_x = inv / n * (n * gw - gw.sum(axis=axes, keepdims=True) - xhat * (gw * xhat).sum(axis=axes, keepdims=True))
    return grad_x, (g * xhat).sum(axis=lead), g.sum(axis=lead)


def _softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _gelu_np(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _gelu_grad_np(x, approximate):
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(k * (x + c * x ** 3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return cdf + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


# --- values and first gradients against the references ---------------------------------

@pytest.mark.parametrize("dtype, tol", [(vg.float32, 2e-5), (vg.float64, 1e-12)])
@pytest.mark.parametrize("shape, dims", [((6, 8), 1), ((2, 3, 16), 1), ((2, 3, 4), 2), ((5, 1), 1)])
def test_layer_norm_values_and_gradients_match_the_textbook_formulas(dtype, tol, shape, dims):
    x, g = _array(*shape) * 3 + 1, _array(*shape)
    w, b = _array(*shape[len(shape) - dims:]), _array(*shape[len(shape) - dims:])
    xt, wt, bt = _leaf(x, dtype), _leaf(w, dtype), _leaf(b, dtype)
    out = F.layer_norm(xt, shape[len(shape) - dims:], wt, bt)
    np.testing.assert_allclose(out.detach().numpy(), _layer_norm_np(x, dims, w, b), rtol=tol, atol=tol)
    out.backward(vg.tensor(g, dtype=dtype))
    grad_x, grad_w, grad_b = _layer_norm_grads_np(x, g, dims, w)
    for got, want in ((xt.grad, grad_x), (wt.grad, grad_w), (bt.grad, grad_b)):
        np.testing.assert_allclose(got.numpy(), want, rtol=tol * 10, atol=tol * 10)


def test_layer_norm_without_affine_parameters_and_with_a_large_mean_keeps_its_accuracy():
    """No γ, β: the plain sums; a mean far from zero (1000 ± 1) loses nothing in float32."""
    x = _array(16, 32) + 1000.0
    g = _array(16, 32)
    xt = _leaf(x, vg.float32)
    out = F.layer_norm(xt, (32,))
    out.backward(vg.tensor(g, dtype=vg.float32))
    x32 = x.astype(np.float32).astype(np.float64)       # the float32 input, exactly
    np.testing.assert_allclose(out.detach().numpy(), _layer_norm_np(x32, 1), atol=5e-4)
    grad_x, _, _ = _layer_norm_grads_np(x32, g, 1, np.ones(32))
    np.testing.assert_allclose(xt.grad.numpy(), grad_x, atol=5e-4)


def test_layer_norm_matches_pytorch_in_float32_with_only_some_gradients_needed():
    x, w, b, g = _array(4, 10, 24), _array(24), _array(24), _array(4, 10, 24)
    xt = vg.tensor(x, dtype=vg.float32)                  # no input gradient: parameters only
    wt, bt = _leaf(w, vg.float32), _leaf(b, vg.float32)
    F.layer_norm(xt, (24,), wt, bt).backward(vg.tensor(g, dtype=vg.float32))
    xr = torch.tensor(x, dtype=torch.float32)
    wr, br = (torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in (w, b))
    torch.nn.functional.layer_norm(xr, (24,), wr, br).backward(torch.tensor(g, dtype=torch.float32))
    np.testing.assert_allclose(wt.grad.numpy(), wr.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bt.grad.numpy(), br.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, tol", [(vg.float32, 1e-6), (vg.float64, 1e-14)])
@pytest.mark.parametrize("shape, dim", [((4, 7), 1), ((4, 7), 0), ((2, 3, 4, 5), -1), ((3, 5, 2), 1)])
def test_softmax_and_log_softmax_and_their_fused_backwards(dtype, tol, shape, dim):
    x, g = _array(*shape) * 4, _array(*shape)
    probs = _softmax_np(x, dim)
    for function, want, grad in (
            (F.softmax, probs, probs * (g - (g * probs).sum(axis=dim, keepdims=True))),
            (F.log_softmax, np.log(probs), g - probs * g.sum(axis=dim, keepdims=True))):
        xt = _leaf(x, dtype)
        out = function(xt, dim=dim)
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=tol * 10, atol=tol)
        out.backward(vg.tensor(g, dtype=dtype))
        np.testing.assert_allclose(xt.grad.numpy(), grad, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype, tol", [(vg.float32, 2e-6), (vg.float64, 1e-13)])
@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_values_and_gradient_match_the_formulas(dtype, tol, approximate):
    x = np.concatenate([np.linspace(-6, 6, 97), [-30.0, 0.0, 30.0]]).reshape(4, 25)
    xt = _leaf(x, dtype)
    out = F.gelu(xt, approximate=approximate)
    np.testing.assert_allclose(out.detach().numpy(), _gelu_np(x, approximate), rtol=tol * 10, atol=tol)
    out.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), _gelu_grad_np(x, approximate), rtol=tol * 10, atol=tol * 10)


def _cross_entropy_np(x, target, weight=None, ignore_index=-100, reduction="mean"):
    """The class-index cross entropy over dim 1 and its gradient in x, for an (N, C, d...) x."""
    logp = np.log(_softmax_np(x, 1))
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    w = (np.ones(x.shape[1]) if weight is None else weight)[safe] * kept
    picked = np.take_along_axis(logp, np.expand_dims(safe, 1), axis=1).squeeze(1)
    losses = -w * picked
    onehot = (np.arange(x.shape[1]).reshape((1, -1) + (1,) * (x.ndim - 2)) == np.expand_dims(safe, 1))
    scale = np.ones_like(losses) if reduction != "mean" else np.full_like(losses, 1 / w.sum())
    grad = (_softmax_np(x, 1) - onehot) * np.expand_dims(w * scale, 1)
    if reduction == "none":
        return losses, grad
    return (losses.sum() if reduction == "sum" else losses.sum() / w.sum()), grad


@pytest.mark.parametrize("dtype, tol", [(vg.float32, 1e-5), (vg.float64, 1e-12)])
@pytest.mark.parametrize("case", ["plain", "weight ignore sum", "(N, C, d) none", "(N, C, h, w) mean"])
def test_cross_entropy_values_and_gradients_without_a_one_hot(dtype, tol, case):
    shapes = {"plain": (6, 5), "weight ignore sum": (6, 5), "(N, C, d) none": (3, 5, 4), "(N, C, h, w) mean": (2, 5, 3, 2)}
    x = _array(*shapes[case]) * 3
    target = RNG.integers(0, 5, (x.shape[0],) + x.shape[2:])
    weight = reduction = None
    reduction = {"weight ignore sum": "sum", "(N, C, d) none": "none"}.get(case, "mean")
    if case == "weight ignore sum":
        target[[1, 4]] = -100
        weight = RNG.uniform(0.5, 2.0, 5)
    loss, grad = _cross_entropy_np(x, target, weight, reduction=reduction)
    xt = _leaf(x, dtype)
    wt = None if weight is None else vg.tensor(weight, dtype=dtype)
    out = F.cross_entropy(xt, vg.tensor(target), weight=wt, reduction=reduction)
    np.testing.assert_allclose(out.detach().numpy(), loss, rtol=tol, atol=tol)
    out.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), grad, rtol=tol * 10, atol=tol)


def test_nll_loss_gradients_in_input_and_weight():
    """dL/dx as PyTorch's; dL/dw (which PyTorch does not give) as its formula
    Σ_{n: yₙ = c} (-x[n, c] - L) / W for 'mean', W = Σ w[yₙ]."""
    x, target, weight = _array(7, 4), RNG.integers(0, 4, 7), RNG.uniform(0.5, 2.0, 4)
    xt, wt = _leaf(x), _leaf(weight)
    loss = F.nll_loss(xt, vg.tensor(target), wt)
    loss.backward()
    xr = torch.tensor(x, requires_grad=True)
    torch.nn.functional.nll_loss(xr, torch.tensor(target), torch.tensor(weight)).backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12, atol=1e-12)
    total = weight[target].sum()
    want = np.zeros(4)
    np.add.at(want, target, (-x[np.arange(7), target] - loss.item()) / total)
    np.testing.assert_allclose(wt.grad.numpy(), want, rtol=1e-12, atol=1e-12)


# --- gradcheck and gradgradcheck in float64 ----------------------------------------------

CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b), [(3, 5), (5,), (5,)]),
    "layer_norm two dims, no bias": (lambda x, w: F.layer_norm(x, (2, 3), w), [(2, 2, 3), (2, 3)]),
    "layer_norm no affine": (lambda x: F.layer_norm(x, (4,)), [(3, 4)]),
    "softmax": (lambda x: F.softmax(x, dim=-1), [(3, 4)]),
    "softmax dim 0": (lambda x: F.softmax(x, dim=0), [(3, 4)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=1), [(2, 4, 3)]),
    "gelu tanh": (lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    "gelu erf": (lambda x: F.gelu(x), [(3, 4)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, vg.tensor([0, 3, 1])), [(3, 4)]),
    "cross_entropy (N, C, d) weight": (
        lambda x: F.cross_entropy(x, vg.tensor([[0, 2], [1, -100]]), weight=vg.tensor([1.0, 2.0, 0.5], dtype=x.dtype),
                                  reduction="sum"), [(2, 3, 2)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_and_gradgradcheck_in_float64(name):
    function, shapes = CASES[name]
    inputs = tuple(_leaf(_array(*shape)) for shape in shapes)
    assert gradcheck(function, inputs)
    assert gradgradcheck(function, inputs)


# --- in-place safety ---------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_inputs_outputs_and_gradients_are_untouched_and_a_second_backward_agrees(name):
    """The ops work in place only on buffers they own: the inputs, the output (which softmax
    and log_softmax save), the incoming gradient and the saved tensors are the same after
    forward and two backwards, and the second backward (retain_graph) repeats the first."""
    function, shapes = CASES[name]
    arrays = [_array(*shape).astype(np.float32) for shape in shapes]
    inputs = [vg.tensor(a, requires_grad=True) for a in arrays]
    out = function(*inputs)
    value = out.detach().numpy().copy()
    seed = vg.tensor(_array(*out.shape).astype(np.float32))
    seed_copy = seed.numpy().copy()
    first = vg.autograd.grad(out, inputs, seed, retain_graph=True)
    first = [g.numpy().copy() for g in first]
    second = vg.autograd.grad(out, inputs, seed)
    for array, tensor in zip(arrays, inputs):
        np.testing.assert_array_equal(tensor.detach().numpy(), array)
    np.testing.assert_array_equal(out.detach().numpy(), value)
    np.testing.assert_array_equal(seed.numpy(), seed_copy)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b.numpy())


def test_the_softmax_output_a_later_op_reads_is_not_changed_by_backward():
    """softmax saves its output, which another op also uses: backward must leave it alone."""
    x = _leaf(_array(4, 6), vg.float32)
    probs = F.softmax(x, dim=1)
    kept = probs.detach().numpy().copy()
    (probs * probs).sum().backward()
    np.testing.assert_array_equal(probs.detach().numpy(), kept)
    p = _softmax_np(x.detach().numpy().astype(np.float64), 1)
    g = 2 * p
    np.testing.assert_allclose(x.grad.numpy(), p * (g - (g * p).sum(axis=1, keepdims=True)), rtol=1e-5, atol=1e-6)


def test_double_backward_of_layer_norm_and_gelu_match_pytorch():
    """create_graph runs the out-of-place branches: second derivatives as PyTorch's."""
    x, w, b = _array(3, 6), _array(6), _array(6)
    results = []
    for library, make in ((vg, lambda a: vg.tensor(a, requires_grad=True)),
                          (torch, lambda a: torch.tensor(a, requires_grad=True))):
        xt, wt, bt = make(x), make(w), make(b)
        hidden = library.nn.functional.gelu(library.nn.functional.layer_norm(xt, (6,), wt, bt), approximate="tanh")
        loss = library.nn.functional.log_softmax(hidden, dim=1)[:, 0].sum()
        grad_x, = library.autograd.grad(loss, (xt,), create_graph=True)
        second = library.autograd.grad((grad_x * grad_x).sum(), (xt, wt, bt))
        results.append([grad_x.detach().numpy()] + [g.detach().numpy() for g in second])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
