"""Tensors, autograd and printing, in the style of PyTorch's "Tensors" and "A Gentle
Introduction to torch.autograd" tutorials and of micrograd's scalar tests."""

import numpy as np

from ..suite import program


def _expect_tensor_ops(r):
    assert r["matmul"].shape == (2, 4) and r["sum_all"].shape == ()
    np.testing.assert_allclose(r["mean_rows"], r["data"].mean(1), rtol=1e-6)


@program("PyTorch tutorial: Tensors", expect=_expect_tensor_ops)
def tensor_operations(torch, rng):
    data = rng.standard_normal((2, 3)).astype(np.float32)
    x = torch.from_numpy(data)
    ones = torch.ones_like(x)
    y = torch.rand_like(x) * 0 + torch.tensor([[1.0, 2.0, 3.0]])      # random values cancelled: same on both
    w = torch.tensor(rng.standard_normal((3, 4)), dtype=torch.float32)
    joined = torch.cat([x, ones, y], dim=1)
    sliced = joined[:, 1:5]
    sliced[0, 0] = 100.0
    x.mul_(2)
    return {"data": data, "x_doubled_in_place": x, "first_row": x[0], "last_column": x[..., -1],
            "matmul": x @ w, "matmul_method": x.matmul(w), "elementwise": x * y, "sum_all": x.sum(),
            "mean_rows": torch.from_numpy(data).mean(dim=1), "joined": joined, "numpy_shares_memory": data,
            "stacked_shape": list(torch.stack([x, x]).shape), "transposed": x.T, "max": x.max(dim=1).values,
            "argmax": x.argmax(dim=1), "clamped": x.clamp(min=-0.5, max=0.5), "is_float32": x.dtype == torch.float32}


def _expect_autograd(r):
    np.testing.assert_allclose(r["a_grad"], 9 * r["a"] ** 2, rtol=1e-5)
    np.testing.assert_allclose(r["b_grad"], -2 * r["b"], rtol=1e-5)
    assert not r["no_grad_requires_grad"] and r["detached_is_leaf"]


@program("PyTorch tutorial: A Gentle Introduction to torch.autograd", expect=_expect_autograd)
def autograd_basics(torch, rng):
    a = torch.tensor(rng.standard_normal(2), dtype=torch.float32, requires_grad=True)
    b = torch.tensor(rng.standard_normal(2), dtype=torch.float32, requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    Q.backward(gradient=torch.tensor([1.0, 1.0]))
    x = torch.ones(5)
    w = torch.tensor(rng.standard_normal((5, 3)), dtype=torch.float32, requires_grad=True)
    bias = torch.tensor(rng.standard_normal(3), dtype=torch.float32, requires_grad=True)
    z = torch.matmul(x, w) + bias
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.zeros(3))
    loss.backward()
    first = w.grad.clone()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(torch.matmul(x, w) + bias, torch.zeros(3))
    loss.backward()                                  # gradients accumulate
    with torch.no_grad():
        frozen = torch.matmul(x, w) + bias
    hidden = (w * 2).sum(0)
    hidden.retain_grad()
    (hidden ** 2).sum().backward()
    return {"a": a, "b": b, "a_grad": a.grad, "b_grad": b.grad, "loss": loss, "w_grad_once": first,
            "w_grad_accumulated": w.grad, "bias_grad": bias.grad, "no_grad_requires_grad": frozen.requires_grad,
            "detached_is_leaf": z.detach().is_leaf, "hidden_grad": hidden.grad, "z_requires_grad": z.requires_grad}


def _expect_micrograd(r):
    assert r["y"] == -20.0 and r["x_grad"] == 46.0


@program("micrograd's test_engine.py (sanity check and more ops)", expect=_expect_micrograd)
def micrograd_scalars(torch, rng):
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    results = {"y": y.data.item(), "x_grad": x.grad.item()}

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    results.update(g=g.data.item(), a_grad=a.grad.item(), b_grad=b.grad.item())
    return results


@program("PyTorch tutorial: Tensors (printing)")
def printing(torch, rng):
    x = torch.tensor([[4.5, 0.01], [-1.0, 2.25]])
    print(x)
    print(x.shape, x.size())
    print(torch.arange(5))
    loss = (x ** 2).mean()
    print(f"loss: {loss:.4f}, item: {loss.item():.4f}")
    print(torch.zeros(2, 3, dtype=torch.int64))
    w = torch.ones(2, requires_grad=True)
    print(w * 2)
    return {"loss": loss}


@program("PyTorch's type promotion (Tensor Attributes docs)")
def type_promotion(torch, rng):
    ints = torch.arange(5)
    results = {"int_times_float": str((ints * 0.5).dtype).split(".")[-1],
               "int_div_int": str((ints / 2).dtype).split(".")[-1],
               "int_floordiv": (torch.tensor([5, -5]) // 2).tolist(),
               "float32_pow_int_tensor": str(torch.linspace(-1, 1, 5).unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
                                             .dtype).split(".")[-1],
               "legacy_constructor": str(torch.Tensor([1, 2]).dtype).split(".")[-1],
               "mse_float_int": str(torch.nn.functional.mse_loss(torch.ones(3), torch.tensor([1, 2, 3])).dtype)
               .split(".")[-1]}
    counts = torch.zeros(3, dtype=torch.int64)
    counts[0] = 1
    counts[1] += 2
    results["int_writes"] = counts.tolist()
    return results


@program("autograd through in-place writes (copy-slices), as in hand-written RNN/attention code")
def inplace_slices(torch, rng):
    w = torch.tensor(rng.standard_normal(2), dtype=torch.float32, requires_grad=True)
    out = torch.zeros(2, 2)
    out[0].add_(w * 3)
    d = torch.zeros(2)
    d[0] += w[0] * 2
    d[1] += w[1] * 2
    (out.sum() + (d ** 2).sum()).backward()
    return {"w_grad": w.grad}
