"""The PyTorch API that tutorials use, with PyTorch's semantics: values, gradients and errors,
PyTorch as the oracle where it is installed."""

import warnings

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.errors import ArgumentError, BackwardError, DeviceError, ShapeError


def close(a, b, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a, dtype=np.float64),
                               np.asarray(b.detach().numpy() if hasattr(b, "detach") else b, dtype=np.float64),
                               atol=atol, rtol=1e-6)


# --- legacy constructors and types -------------------------------------------------------

def test_legacy_tensor_constructor():
    assert vg.Tensor(2, 3).shape == (2, 3) and vg.Tensor(2, 3).dtype is vg.float32
    assert vg.Tensor([1, 2]).dtype is vg.float32 and vg.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert vg.Tensor().shape == (0,) and vg.Tensor(vg.Size([4])).shape == (4,)
    assert vg.Tensor((2, 3)).tolist() == [2.0, 3.0]          # a tuple is data, as in PyTorch
    with pytest.raises(TypeError, match="sizes"):
        vg.Tensor([1], 2)


def test_legacy_tensor_types_and_type_method():
    assert vg.FloatTensor([1, 2]).dtype is vg.float32 and vg.LongTensor(2, 3).shape == (2, 3)
    assert vg.LongTensor([1.7]).tolist() == [1]
    assert isinstance(vg.tensor([1.0]), vg.FloatTensor) and not isinstance(vg.tensor([1]), vg.FloatTensor)
    assert isinstance(vg.tensor([1]), vg.LongTensor) and isinstance(vg.tensor([True]), vg.BoolTensor)
    assert vg.tensor([1.0]).type() == "vizgrad.FloatTensor" and vg.tensor([1]).type() == "vizgrad.LongTensor"
    assert vg.tensor([1.0]).double().type() == "vizgrad.DoubleTensor"
    assert vg.tensor([1.5]).type(vg.int64).tolist() == [1]
    assert vg.tensor([1.5]).type(vg.LongTensor).dtype is vg.int64
    assert vg.tensor([1.5]).type("torch.DoubleTensor").dtype is vg.float64
    x = vg.tensor([1.0])
    assert x.type(vg.float32) is x


def test_metadata_helpers():
    x = vg.zeros(2, 3)
    assert x.nelement() == x.numel() == 6 and x.ndimension() == 2
    assert vg.is_tensor(x) and not vg.is_tensor([1.0]) and vg.is_tensor(vg.nn.Parameter(vg.ones(1)))
    assert x.is_floating_point() and not vg.tensor([1]).is_floating_point()


def test_new_factories_follow_the_tensor():
    x = vg.ones(2, dtype=vg.float64)
    for made in (x.new_zeros(3), x.new_ones((3,)), x.new_empty(3), x.new_full((3,), 7.0), x.new_tensor([1, 2, 3])):
        assert made.dtype is vg.float64 and made.shape == (3,)
    assert x.new_full((2,), 7.0).tolist() == [7.0, 7.0] and x.new_zeros(2, 2, dtype=vg.int64).dtype is vg.int64
    assert not x.new_tensor(x * 1).requires_grad


def test_view_as_reshape_as_expand_as_and_transposes():
    x = vg.arange(6.0, requires_grad=True)
    target = vg.zeros(2, 3)
    assert x.view_as(target).shape == (2, 3) and x.reshape_as(target).shape == (2, 3)
    m = x.view(2, 3)
    assert m.t().shape == (3, 2) and m.t().tolist() == m.T.tolist()
    assert x.t().shape == (6,)
    (m.t() * vg.arange(6.0).view(3, 2)).sum().backward()
    close(x.grad, [0, 2, 4, 1, 3, 5])
    with pytest.raises(ShapeError, match="<= 2 dimensions"):
        vg.zeros(2, 2, 2).t()
    y = vg.arange(6.0).view(2, 3)
    assert y.t_() is y and y.shape == (3, 2) and y.tolist() == [[0, 3], [1, 4], [2, 5]]


# --- creation ------------------------------------------------------------------------------

def test_size_keyword_on_factories():
    for factory in (vg.zeros, vg.ones, vg.empty, vg.rand, vg.randn):
        assert factory(size=(2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="either"):
        vg.zeros(2, size=(2,))


def test_generator_drives_every_random_function():
    def draws(generator):
        return [vg.rand(3, generator=generator), vg.randn(3, generator=generator),
                vg.randint(0, 10, (3,), generator=generator), vg.randperm(5, generator=generator),
                vg.normal(0.0, 1.0, (3,), generator=generator),
                vg.multinomial(vg.ones(4), 2, generator=generator)]
    first, again = draws(vg.Generator().manual_seed(5)), draws(vg.Generator().manual_seed(5))
    for a, b in zip(first, again):
        assert a.tolist() == b.tolist()
    g = vg.Generator()
    assert g.manual_seed(3) is g and g.initial_seed() == 3 and g.device == "cpu"


def test_multinomial_with_and_without_replacement():
    g = vg.Generator().manual_seed(0)
    weights = vg.tensor([0.1, 0.0, 0.9])
    draws = vg.multinomial(weights, 5000, replacement=True, generator=g)
    assert draws.dtype is vg.int64 and draws.shape == (5000,)
    counts = np.bincount(draws.numpy(), minlength=3) / 5000
    np.testing.assert_allclose(counts, [0.1, 0.0, 0.9], atol=0.02)
    rows = vg.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 5.0, 1.0, 0.0]])
    picked = rows.multinomial(2, generator=g)
    assert picked.shape == (2, 2) and len(set(picked[0].tolist())) == 2 and set(picked[1].tolist()) == {1, 2}
    assert sorted(vg.multinomial(vg.ones(6), 6).tolist()) == list(range(6))


def test_multinomial_errors_in_pytorchs_words():
    with pytest.raises(ValueError, match="n_sample"):
        vg.multinomial(vg.ones(2), 3)
    with pytest.raises(ValueError, match="element < 0"):
        vg.multinomial(vg.tensor([-1.0, 2.0]), 1)
    with pytest.raises(ValueError, match="sum of probabilities <= 0"):
        vg.multinomial(vg.zeros(2), 1)
    with pytest.raises(ShapeError, match="1 or 2 dim"):
        vg.multinomial(vg.ones(2, 2, 2), 1)


def test_normal_overloads_statistics_and_gradients():
    g = vg.Generator().manual_seed(1)
    assert vg.normal(2.0, 3.0, size=(2, 3)).shape == (2, 3)
    many = vg.normal(2.0, 3.0, (20000,), generator=g).numpy()
    assert abs(many.mean() - 2.0) < 0.1 and abs(many.std() - 3.0) < 0.1
    mean = vg.zeros(4, 1, requires_grad=True)
    std = vg.tensor([1.0, 2.0, 3.0])
    sample = vg.normal(mean, std, generator=g)
    assert sample.shape == (4, 3) and sample.grad_fn.name() == "NormalBackward3"
    sample.sum().backward()
    close(mean.grad, np.zeros((4, 1)))                     # PyTorch's normal has zero gradients
    assert vg.normal(vg.zeros(3, dtype=vg.float64)).dtype is vg.float64
    assert vg.normal(1.0, vg.ones(2)).shape == (2,)
    with pytest.raises(ValueError, match="std >= 0"):
        vg.normal(vg.zeros(2), -1.0)
    with pytest.raises(TypeError, match="size"):
        vg.normal(0.0, 1.0)


def test_default_device():
    assert vg.get_default_device() == "cpu"
    vg.set_default_device("strict")          # the portable Array API backend stands in for a GPU here
    try:
        made = [vg.zeros(2), vg.tensor([1.0]), vg.randn(2), vg.arange(3), vg.Tensor(2), vg.ones(1).new_zeros(1)]
        assert all(t.device == "strict" for t in made)
        assert repr(vg.zeros(2)) == "tensor([0., 0.])"                  # the default device is not named
        assert repr(vg.zeros(2).cpu()) == "tensor([0., 0.], device='cpu')"
    finally:
        vg.set_default_device(None)
    assert vg.get_default_device() == "cpu" and vg.zeros(1).device == "cpu"
    with pytest.raises(DeviceError, match="unknown device type"):
        vg.set_default_device("tpu")


def test_out_keyword():
    out = vg.empty(2)
    assert vg.add(vg.ones(2), 2, out=out) is out and out.tolist() == [3.0, 3.0]
    grown = vg.empty(0)
    vg.cat([vg.ones(2), vg.zeros(1)], out=grown)
    assert grown.tolist() == [1.0, 1.0, 0.0]
    vg.matmul(vg.ones(2, 3), vg.ones(3, 2), out=out)
    assert out.shape == (2, 2) and out.sum().item() == 12.0
    integers = vg.zeros(2, dtype=vg.int64)
    vg.add(integers, 1, out=integers)
    assert integers.tolist() == [1, 1]
    with pytest.raises(BackwardError, match="out="):
        vg.mul(vg.ones(2, requires_grad=True), 2, out=vg.empty(2))
    with pytest.raises(TypeError, match="can't be cast"):
        vg.add(vg.ones(2), 0.5, out=vg.zeros(2, dtype=vg.int64))


# --- elementwise, reductions, indexing -----------------------------------------------------

def test_log2_log10_against_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([0.5, 1.0, 8.0, 100.0], dtype=np.float32)
    for name in ("log2", "log10"):
        ours, theirs = vg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        getattr(ours, name)().sum().backward()
        getattr(theirs, name)().sum().backward()
        close(getattr(vg, name)(vg.tensor(values)), getattr(torch, name)(torch.tensor(values)).numpy())
        close(ours.grad, theirs.grad.numpy())


def test_numpy_keyword_aliases_on_reductions():
    x = vg.arange(6.0).view(2, 3)
    assert x.sum(axis=1, keepdims=True).tolist() == [[3.0], [12.0]]
    assert vg.mean(x, axis=0).tolist() == [1.5, 2.5, 3.5]
    assert x.max(axis=1).values.tolist() == [2.0, 5.0] and x.argmax(axis=1).tolist() == [2, 2]
    assert x.std(axis=1, keepdims=True).shape == (2, 1) and x.cumsum(axis=1)[1].tolist() == [3.0, 7.0, 12.0]
    with pytest.raises(TypeError, match="alias"):
        x.sum(dim=0, axis=0)


def test_indexing_with_a_range():
    x = vg.arange(10.0, requires_grad=True)
    y = x[range(2, 5)]
    assert y.tolist() == [2.0, 3.0, 4.0] and y.grad_fn.name() == "IndexBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0]
    assert vg.arange(4).view(2, 2)[range(2), range(2)].tolist() == [0, 3]


def test_isclose_allclose_equal_against_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 2.0, np.nan, np.inf, 1e-9, 3.0], dtype=np.float32)
    b = np.array([1.0 + 1e-7, 2.1, np.nan, np.inf, 0.0, 3.0001], dtype=np.float32)
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-3}):
        assert vg.isclose(vg.tensor(a), vg.tensor(b), **kwargs).tolist() == \
            torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs).tolist()
    assert vg.allclose(vg.tensor([1.0, 2.0]), vg.tensor([1.0, 2.0 + 1e-7]))
    assert not vg.tensor([1.0, 2.0]).allclose(vg.tensor([1.0, 2.1]))
    assert vg.equal(vg.tensor([1, 2]), vg.tensor([1, 2])) and not vg.equal(vg.tensor([1]), vg.tensor([1, 1]))
    assert not vg.tensor([float("nan")]).equal(vg.tensor([float("nan")]))
    with pytest.raises(TypeError, match="same dtype"):
        vg.isclose(vg.tensor([1.0]), vg.tensor([1]))


def test_histograms_against_pytorch():
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(0).normal(size=50).astype(np.float32)
    close(vg.histc(vg.tensor(values), bins=7), torch.histc(torch.tensor(values), bins=7).numpy())
    close(vg.histc(vg.tensor(values), bins=4, min=-1, max=1), torch.histc(torch.tensor(values), 4, -1, 1).numpy())
    ours = vg.histogram(vg.tensor(values), bins=5, range=(-2.0, 2.0), density=True)
    theirs = torch.histogram(torch.tensor(values), bins=5, range=(-2.0, 2.0), density=True)
    close(ours.hist, theirs.hist.numpy(), 1e-5)
    close(ours.bin_edges, theirs.bin_edges.numpy())
    hist, edges = vg.tensor(values).histogram(vg.tensor([-3.0, 0.0, 0.5, 3.0]))
    close(hist, torch.histogram(torch.tensor(values), torch.tensor([-3.0, 0.0, 0.5, 3.0])).hist.numpy())
    counts = vg.bincount(vg.tensor([0, 1, 1, 3]), minlength=6)
    assert counts.tolist() == [1, 2, 0, 1, 0, 0] and counts.dtype is vg.int64
    weighted = vg.bincount(vg.tensor([0, 1, 1, 3]), weights=vg.tensor([1.0, 2.0, 3.0, 4.0]))
    assert weighted.tolist() == [1.0, 5.0, 0.0, 4.0] and weighted.dtype is vg.float32
    with pytest.raises(ValueError, match="non-negative"):
        vg.bincount(vg.tensor([-1, 2]))


# --- sorting ---------------------------------------------------------------------------------

def test_sort_topk_argsort_against_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([[3.0, 1.0, 2.0, 1.0, 5.0], [0.5, 0.5, -1.0, 2.0, 0.5]], dtype=np.float32)
    for kwargs in ({}, {"descending": True}, {"dim": 0}, {"dim": 0, "descending": True}):
        ours = vg.sort(vg.tensor(values), stable=True, **kwargs)
        theirs = torch.sort(torch.tensor(values), stable=True, **kwargs)
        assert ours.values.tolist() == theirs.values.tolist() and ours.indices.tolist() == theirs.indices.tolist()
        assert vg.tensor(values).argsort(stable=True, **kwargs).tolist() == \
            torch.tensor(values).argsort(stable=True, **kwargs).tolist()
    distinct = np.array([[3.0, 1.0, 2.0, 4.0], [0.5, 0.7, -1.0, 2.0]], dtype=np.float32)
    for kwargs in ({}, {"largest": False}, {"dim": 0}):
        ours, theirs = vg.tensor(distinct, requires_grad=True), torch.tensor(distinct, requires_grad=True)
        k = 1 if kwargs.get("dim") == 0 else 2
        top, their_top = ours.topk(k, **kwargs), theirs.topk(k, **kwargs)
        assert top.values.tolist() == their_top.values.tolist()
        assert top.indices.tolist() == their_top.indices.tolist()
        (top.values * vg.arange(float(top.values.numel())).view(top.values.shape)).sum().backward()
        (their_top.values * torch.arange(float(their_top.values.numel())).view(their_top.values.shape)).sum() \
            .backward()
        close(ours.grad, theirs.grad.numpy())


def test_sort_gradient_and_named_result():
    x = vg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    result = x.sort()
    values, indices = result
    assert type(result).__name__ == "sort" and values is result.values and indices.tolist() == [1, 2, 0]
    assert values.grad_fn.name() == "SortBackward0" and not indices.requires_grad
    (values * vg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
    with pytest.raises(ShapeError, match="out of range"):
        x.topk(4)


# --- autograd ------------------------------------------------------------------------------

def test_variable_is_a_tensor():
    from vizgrad.autograd import Variable
    x = Variable(vg.ones(2), requires_grad=True)
    assert isinstance(x, vg.Tensor) and isinstance(x, Variable) and x.is_leaf and x.requires_grad
    assert isinstance(vg.zeros(1), Variable) and not isinstance(1.0, Variable)
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1.0])


def test_grad_accepts_only_inputs():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    (dx,) = vg.autograd.grad((x * x).sum(), x, only_inputs=True)
    assert dx.tolist() == [2.0, 4.0]
    with pytest.warns(FutureWarning, match="only_inputs"):
        vg.autograd.grad((x * x).sum(), [x], None, None, False, False)


def _hook_program(lib):
    order = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3 + x * x
    x.register_hook(lambda g: order.append(("x1", g.tolist())))
    x.register_hook(lambda g: (order.append("x2"), g * 2)[1])
    x.register_hook(lambda g: order.append(("x3", g.tolist())))
    x.register_post_accumulate_grad_hook(lambda t: order.append(("post", t.grad.tolist())))
    y.register_hook(lambda g: order.append("y1"))
    y.retain_grad()
    y.register_hook(lambda g: (order.append("y2"), g * 10)[1])
    y.sum().backward()
    return order, x.grad.tolist(), y.grad.tolist()


def test_hook_order_matches_pytorch():
    expected = (["y1", "y2", ("x1", [50.0, 70.0]), "x2", ("x3", [100.0, 140.0]), ("post", [100.0, 140.0])],
                [100.0, 140.0], [10.0, 10.0])
    assert _hook_program(vg) == expected
    torch = pytest.importorskip("torch")
    assert _hook_program(torch) == expected


def test_custom_function_may_return_trailing_nones():
    class Scale(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            ctx.k = k
            return a * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None, None

    a = vg.tensor([1.0], requires_grad=True)
    Scale.apply(a, 2.0).sum().backward()
    assert a.grad.tolist() == [2.0]

    class TooMany(Scale):
        @staticmethod
        def backward(ctx, grad):
            return grad, None, grad

    with pytest.raises(BackwardError, match="returned 3 gradients but forward took 2"):
        TooMany.apply(vg.tensor([1.0], requires_grad=True), 2.0).sum().backward()


def test_single_node_losses_match_pytorch_values_and_gradients():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as torch_F
    rng = np.random.default_rng(3)
    x = rng.uniform(0.1, 0.9, size=(4, 3)).astype(np.float32)
    y = rng.uniform(0.0, 1.0, size=(4, 3)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, size=(3,)).astype(np.float32)
    calls = [("mse_loss", {}), ("mse_loss", {"reduction": "sum"}), ("huber_loss", {"delta": 0.3}),
             ("smooth_l1_loss", {"beta": 0.2, "reduction": "none"}), ("binary_cross_entropy", {}),
             ("binary_cross_entropy_with_logits", {"pos_weight": "w"}), ("binary_cross_entropy", {"weight": "w"})]
    for name, kwargs in calls:
        ours_x, theirs_x = vg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ours = getattr(F, name)(ours_x, vg.tensor(y), **{k: vg.tensor(w) if v == "w" else v
                                                         for k, v in kwargs.items()})
        theirs = getattr(torch_F, name)(theirs_x, torch.tensor(y), **{k: torch.tensor(w) if v == "w" else v
                                                                      for k, v in kwargs.items()})
        close(ours, theirs.detach().numpy(), 1e-5)
        assert ours.grad_fn.name() == theirs.grad_fn.name(), name
        ours.sum().backward()
        theirs.sum().backward()
        close(ours_x.grad, theirs_x.grad.numpy(), 1e-5)


def test_batch_norm_in_evaluation_is_one_node_with_pytorchs_gradients():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as torch_F
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((5, 3, 2)).astype(np.float32), rng.standard_normal(3).astype(np.float32),
              rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32),
              rng.uniform(0.5, 2.0, 3).astype(np.float32)]
    ours = [vg.tensor(a, requires_grad=i < 3) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i < 3) for i, a in enumerate(arrays)]
    out = F.batch_norm(ours[0], ours[3], ours[4], ours[1], ours[2], training=False)
    their_out = torch_F.batch_norm(theirs[0], theirs[3], theirs[4], theirs[1], theirs[2], training=False)
    assert out.grad_fn.name() == their_out.grad_fn.name() == "NativeBatchNormBackward0"
    close(out, their_out.detach().numpy(), 1e-5)
    (out * out).sum().backward()
    (their_out * their_out).sum().backward()
    for mine, their in zip(ours[:3], theirs[:3]):
        close(mine.grad, their.grad.numpy(), 1e-4)


# --- data and checkpoints ------------------------------------------------------------------

def test_utils_data_path_and_loader_options():
    from vizgrad.utils.data import DataLoader, Dataset, Subset, TensorDataset, random_split
    assert DataLoader is vg.data.DataLoader and Dataset is vg.data.Dataset and Subset is vg.data.Subset
    assert vg.utils.data.random_split is random_split
    dataset = TensorDataset(vg.arange(10.0), vg.arange(10))

    def batches(**options):
        loader = DataLoader(dataset, batch_size=3, shuffle=True, generator=vg.Generator().manual_seed(2), **options)
        return [tuple(t.tolist() for t in batch) for batch in loader]
    plain = batches()
    assert batches(num_workers=4, pin_memory=True, persistent_workers=True, prefetch_factor=2) == plain
    assert len(batches(drop_last=True)) == 3
    started = []
    list(DataLoader(dataset, batch_size=5, num_workers=2, worker_init_fn=started.append))
    assert started == [0, 1]
    assert [b[0].tolist() for b in DataLoader(dataset, batch_size=4, sampler=[9, 8, 7, 6, 5])] == \
        [[9.0, 8.0, 7.0, 6.0], [5.0]]
    assert [b[1].tolist() for b in DataLoader(dataset, batch_sampler=[[0, 1], [5]])] == [[0, 1], [5]]
    singles = list(DataLoader(dataset, batch_size=None))
    assert len(singles) == 10 and singles[3][0].shape == ()
    collated = list(DataLoader(dataset, batch_size=5, collate_fn=lambda samples: len(samples)))
    assert collated == [5, 5]
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(dataset, num_workers=-1)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(dataset, sampler=[0], shuffle=True)


def test_load_accepts_pytorchs_keywords(tmp_path):
    path = tmp_path / "model.vzg"
    vg.save({"w": vg.ones(2), "step": 3}, path)
    assert vg.load(path, weights_only=True)["step"] == 3
    assert vg.load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    assert vg.load(path, map_location={"cpu": "cpu"})["w"].device == "cpu"
    seen = []
    loaded = vg.load(path, map_location=lambda tensor, location: (seen.append(location), tensor * 2)[1])
    assert seen == ["cpu"] and loaded["w"].tolist() == [2.0, 2.0]
    assert vg.load(path, encoding="latin1")["step"] == 3           # pickle's arguments, as torch.load takes them
    with pytest.raises(TypeError, match="explicit pickle_module"):
        vg.load(path, pickle_module=__import__("pickle"))


def test_printing_warnings_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        repr(vg.tensor([float("nan"), 0.0, float("inf")]))


# --- more of PyTorch's elementwise, reduction and tensor API -------------------------------

def test_pairs_of_statistics_and_aminmax_match_pytorch_and_print_as_its_return_types():
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], dtype=np.float32)
    for name, kwargs in (("var_mean", {}), ("std_mean", {"dim": 1, "keepdim": True}), ("std_mean", {"correction": 0})):
        ours, theirs = getattr(vg, name)(vg.tensor(data), **kwargs), getattr(torch, name)(torch.tensor(data), **kwargs)
        assert isinstance(ours, tuple) and len(ours) == 2
        for a, b in zip(ours, theirs):
            close(a, b)
    ours, theirs = vg.tensor(data).aminmax(dim=0), torch.tensor(data).aminmax(dim=0)
    close(ours.min, theirs.min)
    close(ours.max, theirs.max)
    assert repr(vg.aminmax(vg.tensor([1.0, 4.0, -2.0]))) == repr(torch.aminmax(torch.tensor([1.0, 4.0, -2.0]))).replace(
        "torch.", "vizgrad.")
    assert repr(vg.tensor([[1.0, 2.0]]).max(dim=1)) == repr(torch.tensor([[1.0, 2.0]]).max(dim=1)).replace(
        "torch.", "vizgrad.")
    assert type(vg.tensor([3.0, 1.0]).sort()) is vg.return_types.sort
    x = vg.tensor(data, requires_grad=True)
    spread, centre = vg.std_mean(x)
    (spread + centre).backward()
    reference = torch.tensor(data, requires_grad=True)
    sum(torch.std_mean(reference)).backward()
    close(x.grad, reference.grad)


def test_inference_mode_records_nothing_as_a_block_and_as_a_decorator():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    assert not vg.is_inference_mode_enabled()
    with vg.inference_mode():
        assert vg.is_inference_mode_enabled() and not vg.is_grad_enabled()
        assert (w * 2).grad_fn is None
    assert not vg.is_inference_mode_enabled() and vg.is_grad_enabled()
    with vg.inference_mode(False):
        assert (w * 2).grad_fn is not None

    @vg.inference_mode()
    def predict(x):
        return x * 3
    assert predict(w).grad_fn is None and vg.is_grad_enabled()


def test_element_size_and_bytes():
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "float64", "int64", "bool", "float16"):
        ours, theirs = vg.zeros(3, 2, dtype=getattr(vg, dtype)), torch.zeros(3, 2, dtype=getattr(torch, dtype))
        assert (ours.element_size(), ours.itemsize, ours.nbytes) == (theirs.element_size(), theirs.itemsize,
                                                                     theirs.nbytes)


def test_in_place_forms_of_the_newer_ops_change_the_tensor_and_keep_the_gradient():
    torch = pytest.importorskip("torch")
    calls = [("trunc_", ()), ("fix_", ()), ("absolute_", ()), ("frac_", ()), ("clamp_min_", (0.25,)),
             ("clamp_max_", (0.25,)), ("nan_to_num_", ()), ("lerp_", ([0.5, -0.5, 2.0], 0.25)),
             ("addcmul_", ([1.0, 2.0, 3.0], [0.5, 0.5, 2.0])), ("addcdiv_", ([1.0, 2.0, 3.0], [0.5, 4.0, 2.0])),
             ("index_put_", (([0, 2],), [10.0, 20.0])), ("round_", ())]
    start = [1.75, -2.5, 0.125]
    for name, arguments in calls:
        def run(library):
            leaf = library.tensor(start, requires_grad=True)
            x = leaf * 1.0
            args = [tuple(library.tensor(a) for a in arg) if isinstance(arg, tuple) else
                    library.tensor(arg) if isinstance(arg, list) else arg for arg in arguments]
            result = getattr(x, name)(*args)
            assert result is x
            x.sum().backward()
            return x.detach(), leaf.grad
        for ours, theirs in zip(run(vg), run(torch)):
            close(ours, theirs)
    accumulated = vg.zeros(4).index_put_((vg.tensor([0, 0, 3]),), vg.tensor([1.0, 2.0, 5.0]), accumulate=True)
    assert accumulated.tolist() == [3.0, 0.0, 0.0, 5.0]


def test_loss_dtypes_of_mixed_float_arguments_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("huber_loss", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss"):
        for first, second in (("float32", "float64"), ("float64", "float32")):
            ours = getattr(F, name)(vg.tensor([0.5, -1.0], dtype=getattr(vg, first)),
                                    vg.tensor([1.0, 0.0], dtype=getattr(vg, second)))
            theirs = getattr(torch.nn.functional, name)(torch.tensor([0.5, -1.0], dtype=getattr(torch, first)),
                                                        torch.tensor([1.0, 0.0], dtype=getattr(torch, second)))
            assert ours.dtype.name == str(theirs.dtype).replace("torch.", ""), (name, first, second)
            close(ours, theirs, atol=1e-6)
    x = vg.tensor([0.5, -1.0], dtype=vg.float32, requires_grad=True)
    F.binary_cross_entropy_with_logits(x, vg.tensor([1.0, 0.0], dtype=vg.float64)).backward()
    assert x.grad.dtype is vg.float32                  # the input's gradient in the input's dtype


def test_the_newer_ops_refuse_what_pytorch_refuses_in_their_words():
    from vizgrad.errors import ArgumentTypeError, DTypeError
    with pytest.raises(DTypeError, match="lerp: end is float64 but input is float32"):
        vg.lerp(vg.zeros(2), vg.ones(2, dtype=vg.float64), 0.5)
    with pytest.raises(DTypeError, match="frac: input must be a floating point tensor, got int64"):
        vg.tensor([1, 2]).frac()
    with pytest.raises(ArgumentTypeError, match="addcmul: tensor2 must be a Tensor, got"):
        vg.addcmul(vg.zeros(2), vg.ones(2), [1.0, 2.0])
    with pytest.raises(ShapeError, match="roll: shifts .* and dims .* must have the same length"):
        vg.roll(vg.zeros(2, 2), (1, 1), 0)


def test_finfo_and_iinfo_are_pytorchs():
    torch = pytest.importorskip("torch")
    from vizgrad.errors import DTypeError
    for name in ("float16", "float32", "float64"):
        ours, theirs = vg.finfo(getattr(vg, name)), torch.finfo(getattr(torch, name))
        assert repr(ours) == repr(theirs)
        assert (ours.bits, ours.eps, ours.max, ours.min, ours.tiny, ours.resolution) == (
            theirs.bits, theirs.eps, theirs.max, theirs.min, theirs.tiny, theirs.resolution)
    assert repr(vg.finfo()) == repr(torch.finfo())
    for name in ("int32", "int64"):
        assert repr(vg.iinfo(getattr(vg, name))) == repr(torch.iinfo(getattr(torch, name)))
        assert vg.iinfo(getattr(vg, name)).max == torch.iinfo(getattr(torch, name)).max
    with pytest.raises(DTypeError, match="finfo: int64 is not a floating point dtype"):
        vg.finfo(vg.int64)


def test_linalg_norms_and_their_gradients_are_pytorchs():
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])
    inf = float("inf")
    calls = [("vector_norm", (), {}), ("vector_norm", (), {"ord": 1}), ("vector_norm", (), {"ord": inf, "dim": 1}),
             ("vector_norm", (), {"ord": 3, "dim": 0, "keepdim": True}), ("matrix_norm", (), {}),
             ("matrix_norm", (1,), {}), ("matrix_norm", (-1,), {}), ("matrix_norm", (inf,), {}),
             ("matrix_norm", (-inf,), {"keepdim": True}), ("matrix_norm", ("nuc",), {}), ("matrix_norm", (2,), {}),
             ("matrix_norm", (-2,), {"keepdim": True}), ("norm", (), {}), ("norm", (1,), {}),
             ("norm", (), {"dim": 1}), ("norm", ("nuc",), {})]
    for name, args, kwargs in calls:
        ours_in, theirs_in = vg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        ours = getattr(vg.linalg, name)(ours_in, *args, **kwargs)
        theirs = getattr(torch.linalg, name)(theirs_in, *args, **kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape), (name, args, kwargs)
        close(ours, theirs)
        ours.sum().backward()
        theirs.sum().backward()
        close(ours_in.grad, theirs_in.grad)
    with pytest.raises(ArgumentError, match="matrix_norm: ord must be 'fro', 'nuc', 2, -2, 1, -1, inf or -inf, got 3"):
        vg.linalg.matrix_norm(vg.ones(2, 2), ord=3)


def test_more_activation_layers_match_pytorch_with_their_gradients():
    torch = pytest.importorskip("torch")
    data = np.array([[-4.0, -1.0, 0.5, 3.5], [2.0, -0.25, 1.0, -2.0]], dtype=np.float32)
    for name, args in (("Hardsigmoid", ()), ("Hardswish", ()), ("LogSigmoid", ()), ("Softsign", ()),
                       ("Tanhshrink", ()), ("GLU", ()), ("GLU", (0,)), ("PReLU", ()), ("PReLU", (4, 0.1)),
                       ("CELU", ()), ("CELU", (0.5,)), ("Threshold", (0.5, -7.0)), ("Hardshrink", ()),
                       ("Hardshrink", (1.0,)), ("Softshrink", ()), ("Softshrink", (1.5,))):
        ours_in, theirs_in = vg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        ours_layer, theirs_layer = getattr(vg.nn, name)(*args), getattr(torch.nn, name)(*args)
        ours, theirs = ours_layer(ours_in), theirs_layer(theirs_in)
        close(ours, theirs)
        assert repr(ours_layer) == repr(theirs_layer)
        ours.sum().backward()
        theirs.sum().backward()
        close(ours_in.grad, theirs_in.grad)
        if name == "PReLU":
            close(ours_layer.weight.grad, theirs_layer.weight.grad)
            assert list(ours_layer.state_dict()) == list(theirs_layer.state_dict()) == ["weight"]
    with pytest.raises(ShapeError, match="glu: dim -1 has size 3; halving it needs an even size"):
        vg.nn.functional.glu(vg.ones(2, 3))


def test_cosine_annealing_with_warm_restarts_follows_pytorchs_rates():
    torch = pytest.importorskip("torch")
    for t_mult in (1, 2):
        ours_param, theirs_param = vg.nn.Parameter(vg.ones(1)), torch.nn.Parameter(torch.ones(1))
        ours_opt, theirs_opt = vg.optim.SGD([ours_param], lr=0.1), torch.optim.SGD([theirs_param], lr=0.1)
        ours = vg.optim.lr_scheduler.CosineAnnealingWarmRestarts(ours_opt, T_0=3, T_mult=t_mult, eta_min=0.01)
        theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs_opt, T_0=3, T_mult=t_mult, eta_min=0.01)
        for _ in range(20):
            ours_opt.step(), theirs_opt.step()
            ours.step(), theirs.step()
            assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), abs=1e-12)


def test_fmod_float_power_xlogy_and_heaviside_are_pytorchs():
    torch = pytest.importorskip("torch")
    assert vg.fmod(vg.tensor([5, -5, 7]), 3).tolist() == torch.fmod(torch.tensor([5, -5, 7]), 3).tolist()
    assert vg.tensor([-3.5, 3.5]).fmod(vg.tensor([-2.0, 2.0])).tolist() == [-1.5, 1.5]
    for base, exponent in (([2, 3], 2), ([1.5, 2.0], [0.5, 3.0])):
        ours = vg.float_power(vg.tensor(base), vg.tensor(exponent) if isinstance(exponent, list) else exponent)
        theirs = torch.float_power(torch.tensor(base), torch.tensor(exponent) if isinstance(exponent, list) else exponent)
        assert ours.dtype is vg.float64
        close(ours, theirs)
    x, y = [0.0, 2.0, 0.0, -1.5, 0.0, 0.0], [0.0, 3.0, float("nan"), 0.5, 2.0, -1.0]
    ours_x, ours_y = vg.tensor(x, requires_grad=True), vg.tensor(y, requires_grad=True)
    theirs_x, theirs_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours, theirs = vg.xlogy(ours_x, ours_y), torch.xlogy(theirs_x, theirs_y)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    assert ours[[0, 4, 5]].tolist() == [0.0, 0.0, 0.0] and not np.signbit(ours[[0, 4, 5]].detach().numpy()).any()
    ours[[0, 1, 3, 4, 5]].sum().backward()
    theirs[[0, 1, 3, 4, 5]].sum().backward()
    # PyTorch's, NaN at y = NaN included (as 0 · NaN), and d/dx = log y at x = 0 where y > 0; but
    # y's at x = y = 0, 0/0 in PyTorch, is 0
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-6)
    assert ours_x.grad[4].item() == pytest.approx(np.log(2.0))
    np.testing.assert_allclose(ours_y.grad.numpy()[1:], theirs_y.grad.numpy()[1:], rtol=1e-6)
    assert np.isnan(theirs_y.grad[0].item()) and ours_y.grad[0].item() == 0.0
    assert vg.heaviside(vg.tensor([-1.0, 0.0, 2.0]), vg.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]


def test_celu_and_threshold_in_place_match_pytorch():
    torch = pytest.importorskip("torch")
    data = np.array([[-4.0, -1.0, 0.5, 3.5], [2.0, -0.25, 1.0, -2.0]], dtype=np.float32)
    for name, args in (("celu", (0.5,)), ("threshold", (0.75, -1.0))):
        ours, theirs = vg.tensor(data) * 1, torch.tensor(data) * 1
        returned = getattr(vg.nn.functional, name)(ours, *args, inplace=True)
        getattr(torch.nn.functional, name)(theirs, *args, inplace=True)
        assert returned is ours
        close(ours, theirs)
    with pytest.raises(ArgumentError, match="celu: alpha must not be 0"):
        vg.nn.functional.celu(vg.ones(2), alpha=0)
    with pytest.raises(ArgumentError, match="softshrink: lambd must be at least 0, got -1"):
        vg.nn.functional.softshrink(vg.ones(2), -1)


def test_stacking_grids_and_block_diagonals_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(shape).astype(np.float32) for shape in ((3,), (2, 3), (2, 3, 2)))
    calls = [("hstack", ([a, a],)), ("hstack", ([b, b[:, :1]],)), ("vstack", ([a, b],)), ("row_stack", ([a, a],)),
             ("dstack", ([b, b],)), ("column_stack", ([a, b.T],)), ("atleast_1d", (a[0],)), ("atleast_2d", (a,)),
             ("atleast_3d", (b,)), ("atleast_3d", (a, b)), ("block_diag", (a, b, c[0, 0, 0])),
             ("broadcast_tensors", (a, b)), ("meshgrid", (a, a[:2])), ("cartesian_prod", (a, a[:2]))]
    for name, args in calls:
        ours_args = [[vg.tensor(x) for x in arg] if isinstance(arg, list) else vg.tensor(arg) for arg in args]
        theirs_args = [[torch.tensor(x) for x in arg] if isinstance(arg, list) else torch.tensor(arg) for arg in args]
        kwargs = {"indexing": "xy"} if name == "meshgrid" else {}
        ours, theirs = getattr(vg, name)(*ours_args, **kwargs), getattr(torch, name)(*theirs_args, **kwargs)
        if not isinstance(ours, tuple):
            ours, theirs = (ours,), (theirs,)
        for got, want in zip(ours, theirs):
            assert tuple(got.shape) == tuple(want.shape), name
            close(got, want)
    with pytest.warns(UserWarning, match="indexing argument"):
        vg.meshgrid(vg.ones(2), vg.ones(3))
    grads = vg.tensor(a, requires_grad=True)
    vg.block_diag(grads, vg.ones(2, 2)).sum().backward()
    np.testing.assert_array_equal(grads.grad.numpy(), np.ones(3, np.float32))


def test_kron_rotations_flips_and_angles_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    m, v = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    calls = [("kron", (m, v)), ("kron", (v, np.ascontiguousarray(m.T))), ("rot90", (m,)), ("rot90", (m, 3)),
             ("rot90", (m, -2, [1, 0])),
             ("fliplr", (m,)), ("flipud", (v,)), ("deg2rad", (m,)), ("rad2deg", (v,)),
             ("deg2rad", (np.array([180, 90]),))]
    for name, args in calls:
        ours = getattr(vg, name)(vg.tensor(args[0]), *args[1:2] if name != "kron" else [vg.tensor(args[1])],
                                 *args[2:])
        theirs = getattr(torch, name)(torch.tensor(args[0]), *args[1:2] if name != "kron" else [torch.tensor(args[1])],
                                      *args[2:])
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype)[6:], name
        close(ours, theirs)
    a, b = vg.tensor(m, requires_grad=True), vg.tensor(v, requires_grad=True)
    ta, tb = torch.tensor(m, requires_grad=True), torch.tensor(v, requires_grad=True)
    (vg.kron(a, b) * vg.tensor(np.arange(18.0).reshape(2, 9))).sum().backward()
    (torch.kron(ta, tb) * torch.arange(18.0).reshape(2, 9)).sum().backward()
    close(a.grad, ta.grad)
    close(b.grad, tb.grad)


def test_nonzero_and_argwhere_match_pytorch():
    torch = pytest.importorskip("torch")
    for data in (np.array([[0.0, 1.5], [2.0, 0.0]]), np.array([0, 3, 0, 4]), np.array(5.0), np.array(0.0),
                 np.zeros((2, 0))):
        ours, theirs = vg.tensor(data), torch.tensor(data)
        for got, want in ((ours.nonzero(), theirs.nonzero()), (vg.argwhere(ours), torch.argwhere(theirs))):
            assert tuple(got.shape) == tuple(want.shape) and got.dtype is vg.int64
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        got, want = vg.nonzero(ours, as_tuple=True), torch.nonzero(theirs, as_tuple=True)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_triangle_indices_inner_and_dist_match_pytorch():
    torch = pytest.importorskip("torch")
    for row, col, offset in ((3, 3, 0), (3, 4, 1), (4, 2, -1), (0, 3, 0), (2, 2, 5)):
        for name in ("tril_indices", "triu_indices"):
            ours, theirs = getattr(vg, name)(row, col, offset), getattr(torch, name)(row, col, offset)
            assert ours.dtype is vg.int64 and tuple(ours.shape) == tuple(theirs.shape), (name, row, col, offset)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(vg.DTypeError, match="tril_indices: dtype must be int32 or int64"):
        vg.tril_indices(2, 2, dtype=vg.float32)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    close(vg.inner(vg.tensor(a), vg.tensor(b)), torch.inner(torch.tensor(a), torch.tensor(b)))
    for p in (1, 2, 3.5, float("inf")):
        close(vg.dist(vg.tensor(a), vg.tensor(b[:2])), torch.dist(torch.tensor(a), torch.tensor(b[:2])))
        close(vg.dist(vg.tensor(a), vg.tensor(b[0]), p=p), torch.dist(torch.tensor(a), torch.tensor(b[0]), p=p))
    with pytest.raises(ShapeError, match=r"inner: the last dims must match; got shapes \(2, 3\) and \(3, 2\)"):
        vg.inner(vg.ones(2, 3), vg.ones(3, 2))


def test_copysign_and_signbit_match_pytorch_with_gradients():
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, -2.0, 0.0], [-0.0, 3.5, -1.0]])
    b = np.array([-1.0, 0.0, -0.0])
    ours_a, ours_b = vg.tensor(a, requires_grad=True), vg.tensor(b, requires_grad=True)
    theirs_a, theirs_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ours, theirs = vg.copysign(ours_a, ours_b), torch.copysign(theirs_a, theirs_b)
    np.testing.assert_array_equal(np.signbit(ours.detach().numpy()), np.signbit(theirs.detach().numpy()))   # -0.0 too
    (ours * vg.arange(6.0).reshape(2, 3)).sum().backward()
    (theirs * torch.arange(6.0, dtype=torch.float64).reshape(2, 3)).sum().backward()
    close(ours_a.grad, theirs_a.grad)
    close(ours_b.grad, theirs_b.grad)                      # zero, not None: b gives only the sign
    assert vg.copysign(vg.tensor([1, -2]), 3).dtype is vg.float32 and vg.tensor([2.0]).copysign(-0.0).tolist() == [-2.0]
    special = [-1.0, -0.0, 0.0, float("nan"), -float("inf"), 3.0]
    assert vg.signbit(vg.tensor(special)).tolist() == torch.signbit(torch.tensor(special)).tolist()
    assert vg.tensor([-3, 0, 2]).signbit().tolist() == [True, False, False]


def test_cross_matches_pytorch_with_gradients_and_errors():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 1, 3)), rng.standard_normal((1, 4, 3))
    ours_a, ours_b = vg.tensor(a, requires_grad=True), vg.tensor(b, requires_grad=True)
    theirs_a, theirs_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ours, theirs = vg.linalg.cross(ours_a, ours_b), torch.linalg.cross(theirs_a, theirs_b)
    close(ours, theirs)
    (ours ** 2).sum().backward()
    (theirs ** 2).sum().backward()
    close(ours_a.grad, theirs_a.grad)
    close(ours_b.grad, theirs_b.grad)
    square = rng.standard_normal((3, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match="cross without dim uses the first dim of size 3"):
        close(vg.cross(vg.tensor(square), vg.ones(3, 3)), torch.cross(torch.tensor(square), torch.ones(3, 3), dim=0))
    close(vg.tensor(square).cross(vg.ones(3, 3), dim=1), torch.tensor(square).cross(torch.ones(3, 3), dim=1))
    with pytest.raises(ShapeError, match=r"linalg.cross: dim -1 must have size 3 \(3-vectors\), got 2"):
        vg.linalg.cross(vg.ones(3, 2), vg.ones(3, 2))
    with pytest.raises(ShapeError, match="cross: input and other must have the same number of dims"):
        vg.cross(vg.ones(3), vg.ones(2, 3), dim=-1)
    with pytest.raises(vg.DTypeError, match="cross: input and other must have one number dtype"):
        vg.cross(vg.ones(3), vg.ones(3, dtype=vg.int64), dim=0)


def test_searchsorted_and_bucketize_match_pytorch():
    torch = pytest.importorskip("torch")
    cases = [([1, 3, 5, 7], [3.5, 6.0], {}), ([1.0, 3, 5, 7], [[3, 5], [7, 0]], {"right": True}),
             ([[1.0, 3, 5], [2, 4, 6]], [[3, 3.5], [4, 7]], {}), ([1.0, 3, 5], [3, 3], {"side": "right"}),
             ([1.0, 3, 5], [3, 3], {"out_int32": True})]
    for sequence, found, options in cases:
        ours = vg.searchsorted(vg.tensor(sequence), vg.tensor(found), **options)
        theirs = torch.searchsorted(torch.tensor(sequence), torch.tensor(found), **options)
        assert ours.tolist() == theirs.tolist() and ours.dtype.name == str(theirs.dtype).split(".")[1], (sequence, options)
    unsorted = [5.0, 1.0, 3.0]
    assert (vg.searchsorted(vg.tensor(unsorted), vg.tensor([2.0, 4.0]), sorter=vg.tensor(unsorted).argsort()).tolist()
            == torch.searchsorted(torch.tensor(unsorted), torch.tensor([2.0, 4.0]),
                                  sorter=torch.tensor(unsorted).argsort()).tolist())
    assert vg.searchsorted(vg.tensor([1.0, 3, 5, 7]), 4).tolist() == 2 and vg.searchsorted(vg.tensor([1.0, 3]), 4).ndim == 0
    for right in (False, True):
        values, boundaries = [-2.0, 0.0, 0.5, 2.0, 9.0], [-1.0, 0.0, 0.5, 2.0]
        assert (vg.bucketize(vg.tensor(values), vg.tensor(boundaries), right=right).tolist()
                == torch.bucketize(torch.tensor(values), torch.tensor(boundaries), right=right).tolist())
    with pytest.raises(ShapeError, match=r"searchsorted: the leading dims of sorted_sequence \(2, 3\) must be those"):
        vg.searchsorted(vg.ones(2, 3), vg.ones(3, 3))
    with pytest.raises(ArgumentError, match="searchsorted: side='left' and right=True disagree"):
        vg.searchsorted(vg.ones(3), vg.ones(2), side="left", right=True)
    with pytest.raises(ShapeError, match=r"bucketize: boundaries must be 1-D, got shape \(2, 2\)"):
        vg.bucketize(vg.ones(2), vg.ones(2, 2))


def _pair(torch, arrays):
    return ([vg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays])


def _same_values_and_gradients(ours, theirs, ours_inputs, theirs_inputs, atol=1e-5):
    """Equal values, and equal gradients of the inputs for one weighted sum of the outputs."""
    close(ours, theirs, atol=atol)
    weights = np.arange(ours.numel(), dtype=np.float32).reshape(tuple(ours.shape)) % 5 - 2
    (ours * vg.tensor(weights)).sum().backward()
    (theirs * theirs.new_tensor(weights)).sum().backward()
    for mine, reference in zip(ours_inputs, theirs_inputs):
        close(mine.grad, reference.grad, atol=atol)


def test_instance_norm_layers_and_batchnorm3d_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    for ours_class, theirs_class, shape in ((vg.nn.InstanceNorm1d, torch.nn.InstanceNorm1d, (2, 3, 7)),
                                            (vg.nn.InstanceNorm2d, torch.nn.InstanceNorm2d, (2, 3, 5, 4)),
                                            (vg.nn.InstanceNorm3d, torch.nn.InstanceNorm3d, (2, 3, 3, 4, 2))):
        ours, theirs = (make(3, affine=True, track_running_stats=True, momentum=0.3) for make in (ours_class, theirs_class))
        assert repr(ours) == repr(theirs)
        for training in (True, False):
            ours.train(training)
            theirs.train(training)
            x = rng.standard_normal(shape).astype(np.float32)
            (mine,), (reference,) = _pair(torch, [x])
            _same_values_and_gradients(ours(mine), theirs(reference), [mine], [reference], atol=1e-4)
            close(ours.running_mean, theirs.running_mean)
            close(ours.running_var, theirs.running_var)
    unbatched = rng.standard_normal((3, 6)).astype(np.float32)
    close(vg.nn.InstanceNorm1d(3)(vg.tensor(unbatched)), torch.nn.InstanceNorm1d(3)(torch.tensor(unbatched)))
    with pytest.raises(ShapeError, match=r"InstanceNorm2d: expected input's size at dim=1 to match num_features \(3\)"):
        vg.nn.InstanceNorm2d(3, affine=True)(vg.ones(2, 4, 4, 4))
    with pytest.warns(UserWarning, match="does not match num_features"):
        vg.nn.InstanceNorm2d(3)(vg.ones(2, 4, 4, 4))
    with pytest.raises(ShapeError, match="instance_norm: expected an input of shape \\(N, C, ...\\) with at least one"):
        F.instance_norm(vg.ones(2, 3))
    x = rng.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)
    ours, theirs = vg.nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3)
    assert repr(ours) == repr(theirs)
    close(ours(vg.tensor(x)), theirs(torch.tensor(x)), atol=1e-5)
    close(ours.running_var, theirs.running_var)


def test_upsampling_and_pixel_shuffle_layers_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 3, 4)).astype(np.float32)
    layers = [(vg.nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.Upsample(scale_factor=2, mode="bilinear")),
              (vg.nn.Upsample(size=(5, 7)), torch.nn.Upsample(size=(5, 7))),
              (vg.nn.UpsamplingNearest2d(scale_factor=2), torch.nn.UpsamplingNearest2d(scale_factor=2)),
              (vg.nn.UpsamplingBilinear2d(size=(6, 5)), torch.nn.UpsamplingBilinear2d(size=(6, 5))),
              (vg.nn.PixelShuffle(2), torch.nn.PixelShuffle(2)), (vg.nn.PixelUnshuffle(1), torch.nn.PixelUnshuffle(1))]
    for ours, theirs in layers:
        assert repr(ours) == repr(theirs)
        (mine,), (reference,) = _pair(torch, [x])
        _same_values_and_gradients(ours(mine), theirs(reference), [mine], [reference])
    y = rng.standard_normal((2, 2, 6, 4)).astype(np.float32)
    close(F.pixel_unshuffle(vg.tensor(y), 2), torch.nn.functional.pixel_unshuffle(torch.tensor(y), 2))
    close(vg.pixel_shuffle(F.pixel_unshuffle(vg.tensor(y), 2), 2), y)          # inverses
    with pytest.raises(ShapeError, match=r"pixel_shuffle: the channels \(6, dim -3 of the input of shape \(1, 6, 2, 2\)\)"):
        F.pixel_shuffle(vg.ones(1, 6, 2, 2), 2)
    with pytest.raises(ShapeError, match="pixel_unshuffle: the height and width \\(3, 4\\)"):
        F.pixel_unshuffle(vg.ones(1, 1, 3, 4), 2)


def test_distances_match_pytorch_with_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    for p in (2.0, 1.0, 3.0, float("inf"), 0.0):
        arrays = [rng.standard_normal((2, 4, 3)).astype(np.float32), rng.standard_normal((2, 5, 3)).astype(np.float32)]
        ours_inputs, theirs_inputs = _pair(torch, arrays)
        _same_values_and_gradients(vg.cdist(*ours_inputs, p=p), torch.cdist(*theirs_inputs, p=p), ours_inputs,
                                   theirs_inputs)
    same = rng.standard_normal((3, 2)).astype(np.float32)
    (mine,), (reference,) = _pair(torch, [same])
    _same_values_and_gradients(vg.cdist(mine, mine), torch.cdist(reference, reference), [mine], [reference])  # zeros
    for shapes, options in ((((4, 3), (4, 3)), {}), (((4, 3), (3,)), {"p": 1.0, "keepdim": True}),
                            (((5,), (5,)), {"p": 3.0})):
        ours_inputs, theirs_inputs = _pair(torch, [rng.standard_normal(s).astype(np.float32) for s in shapes])
        _same_values_and_gradients(F.pairwise_distance(*ours_inputs, **options),
                                   torch.nn.functional.pairwise_distance(*theirs_inputs, **options),
                                   ours_inputs, theirs_inputs)
    assert repr(vg.nn.PairwiseDistance()) == repr(torch.nn.PairwiseDistance())
    with pytest.raises(ShapeError, match=r"cdist: x1 and x2 must have rows of one length, got shapes \(2, 3\) and \(2, 4\)"):
        vg.cdist(vg.ones(2, 3), vg.ones(2, 4))
    with pytest.raises(vg.DTypeError, match="cdist: x1 must be a floating point tensor, got int64"):
        vg.cdist(vg.ones(2, 3, dtype=vg.int64), vg.ones(2, 3, dtype=vg.int64))


def test_scaled_products_match_pytorch_with_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    cases = [("addmm", ((3, 2), (3, 4), (4, 2)), {}), ("addmm", ((2,), (3, 4), (4, 2)), {"beta": 0.5, "alpha": 2}),
             ("addmv", ((3,), (3, 4), (4,)), {"beta": 0}), ("addr", ((3, 4), (3,), (4,)), {"alpha": 3}),
             ("baddbmm", ((3, 1), (2, 3, 4), (2, 4, 2)), {"beta": 0.5}), ("addbmm", ((3, 2), (4, 3, 5), (4, 5, 2)), {})]
    for name, shapes, options in cases:
        ours_inputs, theirs_inputs = _pair(torch, [rng.standard_normal(s).astype(np.float32) for s in shapes])
        _same_values_and_gradients(getattr(vg, name)(*ours_inputs, **options),
                                   getattr(torch, name)(*theirs_inputs, **options), ours_inputs, theirs_inputs)
        assert getattr(ours_inputs[0], name)(*ours_inputs[1:], **options).shape == getattr(vg, name)(
            *ours_inputs, **options).shape
    nan = vg.tensor([[float("nan")]])
    assert vg.addmm(nan, vg.ones(1, 2), vg.ones(2, 1), beta=0).tolist() == [[2.0]]      # beta=0 ignores input's NaN
    with pytest.raises(ShapeError, match=r"addmm: input of shape \(4,\) does not broadcast to the product's shape \(3, 2\)"):
        vg.addmm(vg.ones(4), vg.ones(3, 4), vg.ones(4, 2))


def test_inverses_determinants_and_solves_match_pytorch_to_second_order():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    matrices = rng.standard_normal((2, 3, 3)) + 3.0 * np.eye(3)
    for name, extra in (("inv", ()), ("det", ()), ("solve", (rng.standard_normal((2, 3, 2)),)),
                        ("solve", (rng.standard_normal((2, 3)),)), ("solve", (rng.standard_normal(3),))):
        arrays = [matrices if extra[0].ndim != 1 else matrices[0], *extra] if extra else [matrices]
        ours_inputs, theirs_inputs = _pair(torch, arrays)
        _same_values_and_gradients(getattr(vg.linalg, name)(*ours_inputs), getattr(torch.linalg, name)(*theirs_inputs),
                                   ours_inputs, theirs_inputs, atol=1e-9)
    ours_inputs, theirs_inputs = _pair(torch, [matrices, rng.standard_normal((2, 1, 3))])
    _same_values_and_gradients(vg.linalg.solve(*ours_inputs, left=False),
                               torch.linalg.solve(*theirs_inputs, left=False), ours_inputs, theirs_inputs, atol=1e-9)
    for ours_function, theirs_function in ((vg.det, torch.det), (lambda a: vg.slogdet(a).logabsdet,
                                                                   lambda a: torch.slogdet(a).logabsdet),
                                           (vg.logdet, torch.logdet), (vg.inverse, torch.inverse)):
        (mine,), (reference,) = _pair(torch, [matrices[0]])
        grad, = vg.autograd.grad(ours_function(mine).sum(), mine, create_graph=True)
        theirs_grad, = torch.autograd.grad(theirs_function(reference).sum(), reference, create_graph=True)
        close(grad, theirs_grad, atol=1e-9)
        close(vg.autograd.grad((grad * grad).sum(), mine)[0], torch.autograd.grad((theirs_grad ** 2).sum(), reference)[0],
              atol=1e-8)                                                           # second order
    signs = vg.slogdet(vg.tensor(-matrices, requires_grad=True))
    assert signs.sign.tolist() == torch.slogdet(torch.tensor(-matrices)).sign.tolist()
    assert signs.sign.requires_grad and signs.logabsdet.requires_grad                 # as PyTorch (the sign's gradient is 0)
    assert vg.logdet(vg.tensor([[1.0, 2.0], [3.0, 4.0]])).isnan().item()          # negative determinant
    assert vg.tensor([[2.0, 0.0], [0.0, 4.0]]).inverse().tolist() == [[0.5, 0.0], [0.0, 0.25]]
    singular = vg.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(vg.linalg.LinAlgError, match=r"linalg.inv: A is singular \(its determinant is 0\)"):
        vg.linalg.inv(singular)
    with pytest.raises(RuntimeError, match="linalg.solve: A is singular"):
        vg.linalg.solve(singular, vg.ones(2))
    with pytest.raises(ShapeError, match=r"linalg.inv: A must be a square matrix or a batch of them, got shape \(2, 3\)"):
        vg.linalg.inv(vg.ones(2, 3))
    with pytest.raises(vg.DTypeError, match="det: input must be a floating point tensor, got int64"):
        vg.det(vg.ones(2, 2, dtype=vg.int64))
    with pytest.raises(ShapeError, match=r"linalg.solve: B must have 3 rows to match A of shape \(3, 3\)"):
        vg.linalg.solve(vg.eye(3), vg.ones(2, 2))


def test_cumulative_products_extremes_and_logsumexps_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    with_zeros = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.5, -2.0, 3.0, 0.5]])
    for array, dim in ((with_zeros, 1), (with_zeros, 0), (rng.standard_normal((3, 4, 2)), 1)):
        (mine,), (reference,) = _pair(torch, [array])
        weights = np.arange(array.size, dtype=np.float64).reshape(array.shape)
        grad, = vg.autograd.grad((vg.cumprod(mine, dim) * vg.tensor(weights)).sum(), mine, create_graph=True)
        theirs_grad, = torch.autograd.grad((torch.cumprod(reference, dim) * torch.tensor(weights)).sum(), reference,
                                           create_graph=True)
        close(grad, theirs_grad, atol=1e-9)                                 # exact where inputs are zero
        close(vg.autograd.grad((grad * grad).sum(), mine)[0], torch.autograd.grad((theirs_grad ** 2).sum(), reference)[0],
              atol=1e-9)
    ties = np.array([[1.0, 3.0, 3.0, 2.0, 5.0, 5.0, 0.0], [2.0, np.nan, 5.0, np.nan, 1.0, 7.0, 0.0]])
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(vg, name)(vg.tensor(ties), 1), getattr(torch, name)(torch.tensor(ties), 1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())      # NaN stays, as PyTorch
        assert ours.indices.tolist() == theirs.indices.tolist() and ours.indices.dtype is vg.int64
        assert type(ours).__name__ == name and "values=" in repr(ours)
        (mine,), (reference,) = _pair(torch, [rng.standard_normal((4, 6, 3))])
        _same_values_and_gradients(getattr(vg, name)(mine, 1).values, getattr(torch, name)(reference, 1).values,
                                   [mine], [reference])
    for name in ("cummax", "cummin"):                    # bools too, as PyTorch's kernels take them
        ours, theirs = getattr(vg, name)(vg.tensor([True, False, True]), 0), getattr(torch, name)(torch.tensor([True, False, True]), 0)
        assert ours.values.tolist() == theirs.values.tolist() and ours.values.dtype is vg.bool
        assert ours.indices.tolist() == theirs.indices.tolist()
    for array in (np.array([-1000.0, 0.0, 1000.0, -5.0]), rng.standard_normal((3, 7)), np.array([-np.inf, -np.inf, 0.0])):
        (mine,), (reference,) = _pair(torch, [array])
        _same_values_and_gradients(vg.logcumsumexp(mine, -1), torch.logcumsumexp(reference, -1), [], [], atol=1e-9)
    (mine,), (reference,) = _pair(torch, [rng.standard_normal((3, 5))])
    _same_values_and_gradients(mine.logcumsumexp(0), reference.logcumsumexp(0), [mine], [reference], atol=1e-9)
    with pytest.raises(vg.DTypeError, match="logcumsumexp: input must be a floating point tensor, got int64"):
        vg.logcumsumexp(vg.tensor([1, 2]), 0)


def test_unfold_and_fold_match_pytorch_and_are_adjoint():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    for options in ({"kernel_size": 2}, {"kernel_size": (3, 2), "stride": 2, "padding": 1, "dilation": (1, 2)}):
        (mine,), (reference,) = _pair(torch, [rng.standard_normal((2, 3, 6, 7))])
        _same_values_and_gradients(F.unfold(mine, **options), torch.nn.functional.unfold(reference, **options),
                                   [mine], [reference])
        columns = rng.standard_normal(tuple(torch.nn.functional.unfold(reference, **options).shape))
        (mine,), (reference,) = _pair(torch, [columns])
        _same_values_and_gradients(F.fold(mine, (6, 7), **options), torch.nn.functional.fold(reference, (6, 7), **options),
                                   [mine], [reference])
        x, y = vg.tensor(rng.standard_normal((2, 3, 6, 7))), vg.tensor(columns)
        assert (F.unfold(x, **options) * y).sum().item() == pytest.approx((x * F.fold(y, (6, 7), **options)).sum().item())
    assert repr(vg.nn.Unfold(2, stride=2)) == repr(torch.nn.Unfold(2, stride=2))
    assert repr(vg.nn.Fold((4, 4), 2)) == repr(torch.nn.Fold((4, 4), 2))
    image = vg.randn(1, 2, 4, 4)
    close(vg.nn.Fold((4, 4), 2, stride=2)(vg.nn.Unfold(2, stride=2)(image)), image)       # blocks that tile: identity
    with pytest.raises(ShapeError, match=r"fold: input of shape \(1, 12, 8\) must be \(N, C·4, 9\)"):
        F.fold(vg.ones(1, 12, 8), (4, 4), 2)
    with pytest.raises(ShapeError, match="unfold: the kernel \\(5, 5\\) is larger than the padded input"):
        F.unfold(vg.ones(1, 1, 3, 3), 5)


def test_unique_and_unique_consecutive_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    cases = [(rng.integers(0, 5, size=(3, 4)), {"return_inverse": True, "return_counts": True}),
             (np.array([2.5, -1.0, 2.5, 0.0, -1.0, np.nan, np.nan]), {"return_counts": True}),
             (rng.integers(0, 2, size=(6, 3)), {"dim": 0, "return_inverse": True, "return_counts": True}),
             (rng.integers(0, 2, size=(2, 6)), {"dim": 1, "return_inverse": True}),
             (np.array([], dtype=np.int64), {"return_inverse": True, "return_counts": True}),
             (np.array(3), {"return_inverse": True}), (np.zeros((0, 3)), {"dim": 0, "return_counts": True})]
    for array, options in cases:
        for name in ("unique", "unique_consecutive"):
            ours, theirs = getattr(vg, name)(vg.tensor(array), **options), getattr(torch, name)(torch.tensor(array), **options)
            assert isinstance(ours, tuple) and len(ours) == len(theirs), (name, options)
            for mine, reference in zip(ours, theirs):
                assert tuple(mine.shape) == tuple(reference.shape) and mine.dtype.name == str(reference.dtype)[6:]
                np.testing.assert_array_equal(mine.numpy(), reference.numpy())
    assert vg.tensor([3, 1, 3]).unique().tolist() == [1, 3] and not vg.unique(vg.ones(2, requires_grad=True)).requires_grad
    with pytest.raises(ShapeError, match="unique: dim=0 of a 0-d tensor"):
        vg.unique(vg.tensor(1.0), dim=0)


def test_diagonals_and_index_fill_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    for arguments in ((0, 0, 1), (1, 2, 0), (-1, 1, 2), (5, 0, 1)):
        (mine,), (reference,) = _pair(torch, [rng.standard_normal((2, 3, 4))])
        ours, theirs = vg.diagonal(mine, *arguments), torch.diagonal(reference, *arguments)
        assert tuple(ours.shape) == tuple(theirs.shape)
        if ours.numel():
            _same_values_and_gradients(ours, theirs, [mine], [reference])
    for arguments in ((0,), (1,), (-2,), (2, 0, 2), (1, -1, 0)):
        (mine,), (reference,) = _pair(torch, [rng.standard_normal((2, 3))])
        _same_values_and_gradients(vg.diag_embed(mine, *arguments), torch.diag_embed(reference, *arguments),
                                   [mine], [reference])
    assert vg.diag(vg.tensor([1.0, 2.0]), 1).tolist() == torch.diag(torch.tensor([1.0, 2.0]), 1).tolist()
    assert vg.arange(12.0).reshape(3, 4).diag(-1).tolist() == torch.arange(12.0).reshape(3, 4).diag(-1).tolist()
    assert vg.diagflat(vg.tensor([[1.0, 2.0]]), -1).tolist() == torch.diagflat(torch.tensor([[1.0, 2.0]]), -1).tolist()
    (mine, value), (reference, theirs_value) = _pair(torch, [rng.standard_normal((3, 4)), np.array(2.0)])
    _same_values_and_gradients(mine.index_fill(1, vg.tensor([0, 2, 3]), value),
                               reference.index_fill(1, torch.tensor([0, 2, 3]), theirs_value),
                               [mine, value], [reference, theirs_value])
    assert vg.tensor([[1.0, 2.0], [3.0, 4.0]]).index_fill(1, vg.tensor([-1]), 0.0).tolist() == [[1.0, 0.0], [3.0, 0.0]]
    with pytest.raises(IndexError, match=r"index_fill: index \[3\] is out of range for dim 1 of size 3"):
        vg.zeros(2, 3).index_fill(1, vg.tensor([3]), 1.0)
    with pytest.raises(ArgumentError, match="diagonal: dim1 and dim2 must differ, got 1 and 1"):
        vg.diagonal(vg.ones(2, 2), 0, 1, 1)


def test_exp2_sinc_and_torch_special_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    points = np.concatenate([rng.standard_normal(9) * 2, [0.0, 1.0, -2.0, 0.5, 3.0]])
    for name in ("exp2", "sinc"):
        (mine,), (reference,) = _pair(torch, [points])
        ours, theirs = getattr(vg, name)(mine), getattr(torch, name)(reference)
        grad, = vg.autograd.grad(ours.sum(), mine, create_graph=True)           # first and second order,
        theirs_grad, = torch.autograd.grad(theirs.sum(), reference, create_graph=True)   # sinc's at 0 included
        close(ours, theirs, atol=1e-12)
        close(grad, theirs_grad, atol=1e-12)
        second, theirs_second = vg.autograd.grad(grad.sum(), mine)[0], torch.autograd.grad(theirs_grad.sum(), reference)[0]
        if name == "sinc":      # at 0 PyTorch's is NaN; the true value is -π²/3
            assert np.isnan(theirs_second[9].item()) and second[9].item() == pytest.approx(-np.pi ** 2 / 3)
            second, theirs_second = second[points != 0], theirs_second[points != 0]
        close(second, theirs_second, atol=1e-12)
        assert str(getattr(vg.tensor([0.0, 3.0]), name)()) == str(getattr(torch.tensor([0.0, 3.0]), name)())
    assert vg.exp2(vg.tensor([3])).tolist() == [8.0] and vg.exp2(vg.tensor([3])).dtype is vg.float32
    # torch.special: the same names, the same values and gradients (xlog1py's 0 where x is 0, y = -1 included)
    x, y = np.array([0.0, 2.0, -1.5, 0.0, 3.0]), np.array([-1.0, 3.0, 0.25, 2.0, np.nan])
    (mx, my), (tx, ty) = _pair(torch, [x, y])
    ours, theirs = vg.special.xlog1py(mx, my), torch.special.xlog1py(tx, ty)
    close(ours, theirs)
    (ours[:4] * vg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    (theirs[:4] * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    close(mx.grad, tx.grad)
    close(my.grad[1:], ty.grad[1:])
    assert my.grad[0].item() == 0.0 and np.isnan(ty.grad[0].item())      # x = 0, y = -1: 0/0 in PyTorch, as xlogy
    t = rng.standard_normal((3, 4))
    for name, arguments in (("expit", ()), ("logit", ()), ("erf", ()), ("erfc", ()), ("ndtr", ()), ("exp2", ()),
                            ("expm1", ()), ("sinc", ()),
                            ("softmax", (1,)), ("log_softmax", (0,)), ("logsumexp", (1,)), ("round", ())):
        (mine,), (reference,) = _pair(torch, [np.abs(t) / 4 if name == "logit" else t])
        _same_values_and_gradients(getattr(vg.special, name)(mine, *arguments),
                                   getattr(torch.special, name)(reference, *arguments), [mine], [reference], atol=1e-9)
    tail = np.array([-1.0, 3.0, 10.0, 26.0])
    close(vg.erfc(vg.tensor(tail)), torch.erfc(torch.tensor(tail)), atol=0)      # erfc(26) ≈ 6e-296, to rounding
    assert vg.tensor([0.5]).erfc().tolist() == torch.tensor([0.5]).erfc().tolist()
    # ndtr's left tail: Φ(-10) ≈ 7.6e-24 (PyTorch's float64 ndtr gives 0 there)
    assert vg.special.ndtr(vg.tensor([-10.0], dtype=vg.float64)).item() == pytest.approx(7.619853024160527e-24, rel=1e-13)
    assert set(vg.special.__all__) <= set(dir(torch.special))
    assert not hasattr(vg.special, "zeta")
    with pytest.raises(AttributeError, match="vizgrad.special has no 'zeta': of torch.special, vizgrad computes digamma"):
        vg.special.zeta


def test_lgamma_digamma_and_polygamma_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    points = np.concatenate([rng.uniform(0.05, 30.0, 12), np.floor(rng.uniform(-6, 0, 8)) + rng.uniform(0.1, 0.9, 8),
                             [1.0, 2.0, 0.5, 1e-6, 150.25]])
    (mine,), (reference,) = _pair(torch, [points])
    for ours, theirs in ((vg.lgamma(mine), torch.lgamma(reference)), (vg.special.gammaln(mine), torch.special.gammaln(reference)),
                         (mine.digamma(), reference.digamma()), (vg.special.psi(mine), torch.special.psi(reference)),
                         (vg.polygamma(1, mine), torch.polygamma(1, reference)), (mine.polygamma(3), reference.polygamma(3))):
        close(ours, theirs, atol=1e-9)
        grad, = vg.autograd.grad(ours.sum(), mine, create_graph=True)             # to second order
        theirs_grad, = torch.autograd.grad(theirs.sum(), reference, create_graph=True)
        close(grad, theirs_grad, atol=1e-7)
        close(vg.autograd.grad(grad.sum(), mine)[0], torch.autograd.grad(theirs_grad.sum(), reference)[0], atol=1e-6)
    # the poles and the infinities, as PyTorch
    special = vg.tensor([0.0, -2.0, float("inf")], dtype=vg.float64)
    assert vg.lgamma(special).tolist() == [float("inf")] * 3
    digamma = vg.digamma(special).tolist()
    assert digamma[0] == -float("inf") and np.isnan(digamma[1]) and digamma[2] == float("inf")
    # trigamma: inf at 0, but PyTorch's π²/sin²(πx) is finite at -2 (sin(-2π) rounds to -2.4e-16, not 0)
    assert vg.polygamma(1, special).tolist() == torch.polygamma(1, torch.tensor([0.0, -2.0, float("inf")],
                                                                               dtype=torch.float64)).tolist()
    assert vg.polygamma(1, special).tolist()[0] == float("inf") and vg.polygamma(2, special).tolist()[0] == -float("inf")
    assert str(vg.lgamma(vg.tensor([3]))) == str(torch.lgamma(torch.tensor([3]))) == "tensor([0.6931])"
    x = vg.tensor([0.5, 1.5])
    assert x.clone().lgamma_().tolist() == vg.lgamma(x).tolist() and x.clone().polygamma_(2).tolist() == vg.polygamma(2, x).tolist()
    with pytest.raises(vg.ArgumentError, match="polygamma: n must be a non-negative integer, got -1"):
        vg.polygamma(-1, x)
    with pytest.raises(vg.ArgumentTypeError, match="polygamma: n must be an int"):
        vg.polygamma(1.5, x)
