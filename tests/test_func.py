"""vizgrad.func against torch.func, value by value: the transforms, their structures and errors,
vmap's batching rules (ops run once on the batch) and its per-sample fallback."""

import warnings

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.func as vf
from vizgrad.func import rules

torch = pytest.importorskip("torch")
tf = torch.func

rng = np.random.default_rng(7)
X = rng.standard_normal((5, 3))
W = rng.standard_normal((4, 3))
Y = rng.standard_normal((5, 4))
LABELS = np.array([1, 0, 3, 3, 2])


def both(fn):
    """``fn(lib, func, T)`` with vizgrad and with PyTorch (T makes a float64 tensor of an array)."""
    ours = fn(vg, vf, lambda a: vg.tensor(np.asarray(a)))
    theirs = fn(torch, tf, lambda a: torch.tensor(np.asarray(a)))
    return ours, theirs


def assert_same(ours, theirs, atol=1e-10):
    """Same structure (tuples, lists, dicts), shapes and values."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, atol)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            assert_same(ours[key], theirs[key], atol)
    else:
        a, b = ours.detach().numpy(), theirs.detach().numpy()
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-8)


def agree(fn, atol=1e-10):
    with warnings.catch_warnings():
        warnings.simplefilter("error", vf.PerSampleWarning)      # every op here has a batching rule
        ours, theirs = both(fn)
    assert_same(ours, theirs, atol)


# --- grad, grad_and_value -----------------------------------------------------------------

def test_grad_of_one_and_several_arguments():
    agree(lambda L, F, T: F.grad(lambda x: (x.sin() * x).sum())(T(X)))
    agree(lambda L, F, T: F.grad(lambda x, w: ((x @ w.T) ** 2).mean(), argnums=(0, 1))(T(X), T(W)))
    agree(lambda L, F, T: F.grad(lambda x, w: (x @ w.T).tanh().sum(), argnums=-1)(T(X), T(W)))


def test_grad_of_pytrees_and_aux():
    def loss(params, x):
        out = x @ params["w"].T + params["b"][0]
        return out.pow(2).sum(), {"out": out}
    agree(lambda L, F, T: F.grad(loss, has_aux=True)({"w": T(W), "b": (T(Y[0]),)}, T(X)))
    agree(lambda L, F, T: F.grad_and_value(loss, has_aux=True)({"w": T(W), "b": [T(Y[0])]}, T(X)))
    agree(lambda L, F, T: F.grad_and_value(lambda x: x.exp().sum())(T(X)))


def test_grad_of_an_unused_input_is_zero_and_nesting_gives_higher_derivatives():
    agree(lambda L, F, T: F.grad(lambda x, y: (y * 2).sum(), argnums=(0, 1))(T(X), T(Y)))
    agree(lambda L, F, T: F.grad(lambda x: F.grad(lambda y: (y ** 3).sum())(x).sum())(T(X)))
    agree(lambda L, F, T: F.grad(F.grad(lambda x: x.sin() * x))(T(1.3)))


def test_grad_stays_connected_to_tensors_that_require_grad():
    x = vg.tensor(X, requires_grad=True)
    g = vf.grad(lambda v: (v ** 3).sum())(x)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * X)
    result = vf.grad(lambda v: (v ** 3).sum())(vg.tensor(X))
    assert not result.requires_grad and result.grad_fn is None


def test_grad_errors_are_pytorchs():
    x = vg.tensor(X)
    with pytest.raises(vg.errors.TransformError, match="Expected f\\(\\*args\\) to return a scalar Tensor, got "
                                                       "tensor with 2 dims"):
        vf.grad(lambda v: v * 2)(x)
    with pytest.raises(RuntimeError, match="to return a Tensor, got <class 'float'>"):
        vf.grad(lambda v: 1.0)(x)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 2 positional inputs"):
        vf.grad(lambda a, b: a.sum(), argnums=2)(x, x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique, got \\(0, 0\\)"):
        vf.grad(lambda a, b: a.sum(), argnums=(0, 0))(x, x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        vf.grad(lambda a: a.sum(), argnums=1.0)(x)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
        vf.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(ValueError, match="must be Tensor, got <class 'float'>"):
        vf.grad(lambda a: a.sum())(3.0)


# --- vjp, jvp ----------------------------------------------------------------------------

def test_vjp_values_structures_and_repeated_calls():
    def fn(L, F, T):
        out, vjp_fn = F.vjp(lambda x, w: (x @ w.T, x.sum()), T(X), T(W))
        first = vjp_fn((T(Y), T(2.0)))
        return out, first, vjp_fn((T(Y * 3), T(0.5)))
    agree(fn)
    agree(lambda L, F, T: F.vjp(L.sin, T(X))[1](T(X)))
    agree(lambda L, F, T: F.vjp(lambda x: (x.exp(), x), T(X), has_aux=True)[2])


def test_vjp_errors():
    out, vjp_fn = vf.vjp(lambda v: v * 2, vg.tensor(X))
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\] has a shape of \\(2,\\)"):
        vjp_fn(vg.zeros(2))
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_fn((vg.tensor(X),))
    with pytest.raises(RuntimeError, match="to return only tensors, got unsupported type <class 'int'>"):
        vf.vjp(lambda v: 1, vg.tensor(X))


def test_jvp_values_structures_and_aux():
    agree(lambda L, F, T: F.jvp(lambda x: x.exp() * 2, (T(X),), (T(Y[:, :3]),)))
    agree(lambda L, F, T: F.jvp(lambda x, w: {"y": (x @ w.T).tanh(), "s": (x * x).sum()}, (T(X), T(W)),
                                (T(X * 0.5), T(W * -1))))
    agree(lambda L, F, T: F.jvp(lambda x: (x.cos(), x), (T(X),), (T(X),), has_aux=True))
    agree(lambda L, F, T: F.jvp(lambda x: x.sum() * 0 + 4.0, (T(X),), (T(X),)))


def test_jvp_errors():
    x = vg.tensor(X)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        vf.jvp(lambda v: v, x, x)
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        vf.jvp(lambda v: v, (x,), (x, x))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        vf.jvp(lambda v: v, (x,), [x])
    with pytest.raises(RuntimeError, match="Tensor is of size \\[5, 3\\] while the given forward gradient is of size "
                                         "\\[2\\]"):
        vf.jvp(lambda v: v, (x,), (vg.zeros(2),))


# --- jacrev, jacfwd, hessian --------------------------------------------------------------

@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians(jac):
    agree(lambda L, F, T: getattr(F, jac)(lambda x: (x @ T(W).T).tanh())(T(X[0])))
    agree(lambda L, F, T: getattr(F, jac)(lambda x: (x @ T(W).T).tanh())(T(X)))
    agree(lambda L, F, T: getattr(F, jac)(lambda x: x.sin().sum())(T(X)))
    agree(lambda L, F, T: getattr(F, jac)(lambda x, w: {"a": x @ w.T, "b": x.sum()}, argnums=(0, 1))(T(X[0]), T(W)))
    agree(lambda L, F, T: getattr(F, jac)(lambda p: p["w"] @ p["v"], argnums=0)({"w": T(W), "v": T(X[0])}))
    agree(lambda L, F, T: getattr(F, jac)(lambda x: (x.exp(), x.sum()), has_aux=True)(T(X[0])))


def test_jacrev_in_chunks_and_nested_jacobians():
    agree(lambda L, F, T: F.jacrev(lambda x: x.exp() @ T(W).T, chunk_size=3)(T(X)))
    agree(lambda L, F, T: F.jacrev(F.jacrev(lambda x: (x.sin() * x).sum()))(T(X[0])))
    agree(lambda L, F, T: F.jacfwd(F.jacrev(lambda x: x.tanh() * x.sum()))(T(X[0])))


def test_hessian():
    agree(lambda L, F, T: F.hessian(lambda x: (x.sin() * x).sum())(T(X[0])))
    agree(lambda L, F, T: F.hessian(lambda x, w: ((x @ w.T) ** 2).sum(), argnums=1)(T(X[0]), T(W)))
    agree(lambda L, F, T: F.hessian(lambda x, w: ((x @ w.T).tanh()).sum(), argnums=(0, 1))(T(X[0]), T(W)))


def test_jacobian_errors():
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        vf.jacrev(lambda v: v, argnums=())(vg.tensor(X))
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        vf.jacrev(lambda v: v, chunk_size=0)


# --- vmap --------------------------------------------------------------------------------

def test_vmap_in_dims_out_dims_and_nesting():
    agree(lambda L, F, T: F.vmap(lambda x, w: x @ w.T, in_dims=(0, None))(T(X), T(W)))
    agree(lambda L, F, T: F.vmap(lambda x: x.softmax(-1).sum(0), in_dims=1)(T(X)))
    agree(lambda L, F, T: F.vmap(lambda x: (x * 2, x.sum()), in_dims=1, out_dims=(1, 0))(T(X)))
    agree(lambda L, F, T: F.vmap(lambda d: d["a"] * d["b"][0], in_dims=({"a": 0, "b": (1,)},))(
        {"a": T(X), "b": (T(X.T),)}))
    agree(lambda L, F, T: F.vmap(F.vmap(lambda a, b: a * b))(T(X), T(X)))
    agree(lambda L, F, T: F.vmap(F.vmap(lambda a, b: a.dot(b), in_dims=(0, None)), in_dims=(None, 0))(
        T(X), T(Y[:, :3])))
    agree(lambda L, F, T: F.vmap(lambda x: T(W).sum() * 1.0)(T(X)))
    agree(lambda L, F, T: F.vmap(lambda x, s: x * s, in_dims=(0, None))(T(X), 3.0))
    agree(lambda L, F, T: F.vmap(lambda x: x.exp(), chunk_size=2)(T(X)))


def test_vmap_batching_rules_match_pytorch():
    cases = [
        lambda L, x: L.nn.functional.linear(x, L.tensor(W[:, :2]), L.tensor(Y[0])),
        lambda L, x: x[1:, None].sum(-1),
        lambda L, x: L.cat([x, x * 2]).reshape(2, -1).permute(1, 0).flatten(),
        lambda L, x: L.stack([x, x.flip(0)], 1).transpose(0, 1).unsqueeze(-1).squeeze(),
        lambda L, x: x.max(0)[0] + x.argmax(0) + x.logsumexp(0) + x.var(0) + x.norm(),
        lambda L, x: x.cumsum(1) + x.cumprod(0) + x.log_softmax(1),
        lambda L, x: x.expand(2, 3, 2).repeat(1, 1, 2).mean((0, 2)),
        lambda L, x: L.where(x > 0, x, x.exp() - 1).clamp(-0.5, 0.5) + x.sigmoid() * x.relu(),
        lambda L, x: x.gather(1, L.tensor([[0, 1], [1, 0], [1, 1]])) + x[L.tensor([2, 0, 1])],
        lambda L, x: L.index_select(x, 0, L.tensor([2, 0, 2])).sum(0) + x[[0, 1], [1, 0]].sum(),
        lambda L, x: L.matmul(x, x.T) + L.matmul(x[:, 0], x).sum() + L.matmul(x, x[0]).sum(),
        lambda L, x: L.nn.functional.gelu(x) + L.nn.functional.softplus(x) + L.nn.functional.silu(x),
        lambda L, x: x.narrow(0, 1, 2).chunk(2, 1)[0].sum() + x.unbind(1)[1],
        lambda L, x: x.sort(1)[0] + x.topk(1, 0)[0],
        lambda L, x: L.einsum("ij,kj->ik", x, L.tensor(W[:3, :2])) + L.einsum("ij->j", x).sum(),
    ]
    for case in cases:
        agree(lambda L, F, T: F.vmap(lambda x: case(L, x))(T(np.stack([X[:3, :2], X[1:4, :2], X[2:5, :2]]))))


def test_vmap_losses_are_reduced_per_sample():
    import functools
    for name, kwargs in [("cross_entropy", {}), ("cross_entropy", {"reduction": "sum"}),
                         ("cross_entropy", {"weight": np.array([1.0, 2.0, 0.5, 1.5])}),
                         ("nll_loss", {"ignore_index": 3})]:
        def fn(L, F, T, name=name, kwargs=kwargs):
            loss = functools.partial(getattr(L.nn.functional, name),
                                     **{k: T(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
            targets = np.stack([LABELS[:2], LABELS[3:]] * 2 + [LABELS[1:3]])
            return F.vmap(lambda x, y: loss(x.reshape(2, 4), y))(T(np.concatenate([Y, Y], 1)), T(targets))
        agree(fn)
    agree(lambda L, F, T: F.vmap(lambda x, y: L.nn.functional.mse_loss(x, y))(T(X), T(Y[:, :3])))
    agree(lambda L, F, T: F.vmap(lambda x, y: L.nn.functional.binary_cross_entropy_with_logits(x, y))(
        T(X), T((Y[:, :3] > 0) * 1.0)))


def test_per_sample_gradients_of_a_model_over_functional_call():
    vg.manual_seed(0)
    model = vg.nn.Sequential(vg.nn.Linear(3, 8), vg.nn.Tanh(), vg.nn.Linear(8, 4))
    reference = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4)).double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))

    def per_sample(L, F, T, net):
        params = {k: v.detach() for k, v in net.named_parameters()}

        def loss(p, x, y):
            return L.nn.functional.cross_entropy(F.functional_call(net, p, (x.unsqueeze(0),)), y.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, T(X), T(LABELS))

    model.double()
    ours = per_sample(vg, vf, vg.tensor, model)
    theirs = per_sample(torch, tf, torch.tensor, reference)
    assert_same(ours, theirs)
    for name in ours:   # and the loop of ordinary backward passes it replaces
        model.zero_grad()
        vg.nn.functional.cross_entropy(model(vg.tensor(X[2:3])), vg.tensor(LABELS[2:3])).backward()
        np.testing.assert_allclose(ours[name][2].numpy(), dict(model.named_parameters())[name].grad.numpy())


def _per_sample_gradients(L, F, net, x, y):
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss(p, xi, yi):
        return L.nn.functional.cross_entropy(F.functional_call(net, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def _twins(make):
    ours, theirs = make(vg).double(), make(torch).double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    return ours, theirs


def test_per_sample_gradients_of_a_cnn_batch_in_one_grouped_convolution():
    ours, theirs = _twins(lambda L: L.nn.Sequential(L.nn.Conv2d(2, 4, 3, groups=2, padding=1), L.nn.ReLU(),
                                                    L.nn.MaxPool2d(2), L.nn.Flatten(), L.nn.Linear(16, 3)))
    images = rng.standard_normal((5, 2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", vf.PerSampleWarning)
        found = _per_sample_gradients(vg, vf, ours, vg.tensor(images), vg.tensor(LABELS % 3))
    assert_same(found, _per_sample_gradients(torch, tf, theirs, torch.tensor(images), torch.tensor(LABELS % 3)))


def test_per_sample_gradients_through_normalization_layers():
    ours, theirs = _twins(lambda L: L.nn.Sequential(L.nn.Linear(3, 6), L.nn.LayerNorm(6), L.nn.Unflatten(1, (2, 3)),
                                                    L.nn.GroupNorm(2, 2), L.nn.Flatten(), L.nn.Linear(6, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", vf.PerSampleWarning)
        found = _per_sample_gradients(vg, vf, ours, vg.tensor(X), vg.tensor(LABELS))
    assert_same(found, _per_sample_gradients(torch, tf, theirs, torch.tensor(X), torch.tensor(LABELS)))


def test_per_sample_gradients_through_an_op_without_a_rule():
    ours, theirs = _twins(lambda L: L.nn.Sequential(L.nn.Linear(3, 6), L.nn.ConstantPad1d(1, 0.5), L.nn.Linear(8, 4)))
    with pytest.warns(vf.PerSampleWarning, match="Pad"):
        found = _per_sample_gradients(vg, vf, ours, vg.tensor(X), vg.tensor(LABELS))
    assert_same(found, _per_sample_gradients(torch, tf, theirs, torch.tensor(X), torch.tensor(LABELS)))


def test_vmap_of_jacrev_and_of_vjp_fn():
    agree(lambda L, F, T: F.vmap(F.jacrev(lambda x: x.sin() * x.sum()))(T(X)))
    agree(lambda L, F, T: F.vmap(F.vjp(lambda x: x.exp() @ T(W).T, T(X[0]))[1])(T(Y)))
    agree(lambda L, F, T: F.vmap(lambda x, t: F.jvp(lambda v: v.tanh(), (x,), (t,))[1])(T(X), T(X * 2)))


def test_an_op_without_a_rule_runs_per_sample_with_a_warning():
    assert vg.ops.linalg.Det not in rules.RULES
    x = vg.tensor(rng.standard_normal((4, 3, 3)))
    with pytest.warns(vf.PerSampleWarning, match="no batching rule for Det"):
        out = vf.vmap(vg.linalg.det)(x)
    np.testing.assert_allclose(out.numpy(), np.linalg.det(x.numpy()))
    with pytest.warns(vf.PerSampleWarning, match="batched index"):
        out = vf.vmap(lambda v, i: v[i])(vg.tensor(X), vg.tensor(np.array([0, 2, 1, 1, 0])))
    np.testing.assert_allclose(out.numpy(), X[np.arange(5), [0, 2, 1, 1, 0]])


def test_ops_batch_in_one_call(monkeypatch):
    """A batched op runs once on the whole batch, not once per sample."""
    calls = []
    forward = vg.ops.unary.Tanh.forward
    counted = staticmethod(lambda ctx, a: calls.append(a.shape) or forward(ctx, a))
    monkeypatch.setattr(vg.ops.unary.Tanh, "forward", counted)
    vf.vmap(lambda v: v.tanh())(vg.tensor(X))
    assert calls == [(5, 3)]


def test_custom_function_with_a_vmap_staticmethod():
    class Double(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vmap(info, in_dims, x):
            assert info.batch_size == 5 and in_dims == (0,)
            return x * 2, 0

    out = vf.vmap(lambda v: Double.apply(v).sum())(vg.tensor(X))
    np.testing.assert_allclose(out.numpy(), 2 * X.sum(1))


def test_randomness():
    x = vg.ones(6, 1000)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vf.vmap(lambda v: vg.nn.functional.dropout(v, 0.5))(x)
    same = vf.vmap(lambda v: vg.nn.functional.dropout(v, 0.5), randomness="same")(x)
    different = vf.vmap(lambda v: vg.nn.functional.dropout(v, 0.5), randomness="different")(x)
    assert (same == same[0]).all() and not (different == different[0]).all()
    assert set(np.unique(different.numpy())) == {0.0, 2.0}
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vf.vmap(lambda v: v, randomness="foo")


def test_vmap_errors_are_pytorchs():
    x = vg.tensor(X[0])
    cases = [
        (lambda: vf.vmap(lambda v: v)(3.0), ValueError, "Got in_dim=0 for an input but the input is of type"),
        (lambda: vf.vmap(lambda v: v, in_dims=1)(x), ValueError, "expected in_dim to satisfy -1 <= in_dim < 1"),
        (lambda: vf.vmap(lambda v: v, in_dims=(0, 0))(x), ValueError, "in_dims is not compatible with the structure"),
        (lambda: vf.vmap(lambda a, b: a)(x, vg.zeros(4)), ValueError, "got sizes \\[3, 4\\] for the mapped dimension"),
        (lambda: vf.vmap(lambda v: v, in_dims=None)(x), ValueError, "expected `in_dims` to be int or a"),
        (lambda: vf.vmap(lambda v: 1.0)(x), ValueError, "must only return Tensors, got type <class 'float'>"),
        (lambda: vf.vmap(lambda v: v, out_dims=None)(x), ValueError, "can not return a BatchedTensor when out_dim is"),
        (lambda: vf.vmap(lambda v: v.item())(x), RuntimeError, "calling .item\\(\\) on a Tensor"),
        (lambda: vf.vmap(lambda v: v)(), ValueError, "got no inputs"),
        (lambda: vf.vmap(lambda v: v.size(-2))(x), IndexError, "dim -2 is out of range"),
        (lambda: vf.vmap(lambda v: v, chunk_size=0), ValueError, "chunk_size should be None or greater than 0"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message) as raised:
            call()
        assert isinstance(raised.value, vg.errors.VizgradError)
    agree(lambda L, F, T: F.vmap(lambda v: L.ones(2), out_dims=None)(T(X[0])))
    agree(lambda L, F, T: F.vmap(lambda v: v * v.size(0) + v.size(-1) * len(v) + v.ndim + v.numel())(T(X)))


# --- functional_call, stack_module_state --------------------------------------------------

def test_functional_call():
    model = vg.nn.Linear(3, 2)
    weight, bias = model.weight, model.bias
    out = vf.functional_call(model, {"weight": vg.ones(2, 3)}, (vg.tensor([1.0, 2.0, 3.0]),))
    np.testing.assert_allclose(out.detach().numpy(), 6 + bias.detach().numpy(), rtol=1e-6)
    out = vf.functional_call(model, ({"weight": vg.ones(2, 3)}, {"bias": vg.zeros(2)}), vg.ones(3))
    np.testing.assert_allclose(out.numpy(), [3.0, 3.0])
    assert model.weight is weight and model.bias is bias
    assert [n for n, _ in model.named_parameters()] == ["weight", "bias"]
    with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Linear:\n\tMissing key\\(s\\): 'bias'"):
        vf.functional_call(model, {"weight": vg.ones(2, 3)}, (vg.ones(3),), strict=True)
    with pytest.raises(ValueError, match="\\['weight'\\] appeared in multiple dictionaries"):
        vf.functional_call(model, ({"weight": vg.ones(2, 3)}, {"weight": vg.ones(2, 3)}), (vg.ones(3),))


def test_functional_call_ties_weights():
    class Tied(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = vg.nn.Linear(2, 2, bias=False)
            self.b = vg.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model = Tied()
    out = vf.functional_call(model, {"a.weight": 2 * vg.eye(2)}, (vg.ones(2),))
    np.testing.assert_allclose(out.numpy(), [4.0, 4.0])
    untied = vf.functional_call(model, {"a.weight": 2 * vg.eye(2)}, (vg.ones(2),), tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(), (model.a.weight.detach().numpy() @ [2.0, 2.0]))


def test_stack_module_state_and_an_ensemble():
    models = [vg.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = vf.stack_module_state(models)
    assert buffers == {} and list(params) == ["weight", "bias"]
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
    x = vg.tensor(X[:, :3]).float()
    out = vf.vmap(lambda p, v: vf.functional_call(models[0], p, (v,)), in_dims=(0, None))(params, x)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        vf.stack_module_state([])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        vf.stack_module_state([vg.nn.Linear(2, 2), vg.nn.Linear(2, 2).eval()])


def test_torch_names():
    assert vg.vmap is vf.vmap
    assert vg.errors.TransformError.__mro__[1:3] == (vg.errors.VizgradError, RuntimeError)


def test_batch_norm_without_running_statistics_under_vmap():
    ours, theirs = _twins(lambda L: L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2)))
    for model, func in ((ours, vf), (theirs, tf)):
        assert func.replace_all_batch_norm_modules_(model) is model
        assert model[1].running_mean is None and not model[1].track_running_stats
    batches = rng.standard_normal((3, 5, 3))      # three batches of five samples
    with warnings.catch_warnings():
        warnings.simplefilter("error", vf.PerSampleWarning)
        found = vf.vmap(ours)(vg.tensor(batches))
    assert_same(found, tf.vmap(theirs)(torch.tensor(batches)))


# --- random draws inside vmap follow randomness, as PyTorch's -----------------------------------
@pytest.mark.parametrize("draw", [lambda r: vg.randn(3), lambda r: vg.rand_like(r), lambda r: vg.randint(0, 100, (3,)).float(),
                                  lambda r: vg.randperm(3).float()], ids=["randn", "rand_like", "randint", "randperm"])
def test_random_draws_inside_vmap_follow_its_randomness(draw):
    rows = vg.zeros(6, 3)
    with pytest.raises(vg.errors.TransformError, match="called random operation while in randomness error mode"):
        vf.vmap(lambda r: r + draw(r))(rows)
    same = vf.vmap(lambda r: r + draw(r), randomness="same")(rows)
    assert same.shape == (6, 3) and all(bool((same[i] == same[0]).all()) for i in range(6))
    different = vf.vmap(lambda r: r + draw(r), randomness="different")(rows)
    assert different.shape == (6, 3) and not all(bool((different[i] == different[0]).all()) for i in range(6))


def test_nested_vmaps_draw_per_sample_only_where_they_say_different():
    out = vf.vmap(vf.vmap(lambda r: vg.randn(()) + r, randomness="different"), randomness="same")(vg.zeros(2, 5))
    assert out.shape == (2, 5)
    assert bool((out[0] == out[1]).all())                 # the outer level shares its draws
    assert len(set(out[0].tolist())) == 5                 # the inner one draws per sample
