"""The losses and layers added after the first ``vizgrad.nn``: margin, ranking and likelihood
losses, the pad modes and padding layers, ``rms_norm``/``RMSNorm``, channel-wise dropout,
``Softmax2d``, ``ChannelShuffle`` and the parameter containers.

Values and gradients are compared with PyTorch (the oracle, skipped where it is missing) over
several shapes and options; gradcheck and gradgradcheck run in float64; reprs are compared
with what PyTorch prints; wrong arguments must raise vizgrad errors that name the function and
the argument. (The op registry, tests/test_ops.py, also checks each functional against NumPy
on every backend.)
"""

import warnings
from collections import OrderedDict

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.autograd import gradcheck, gradgradcheck
from vizgrad.errors import (ArgumentError, ArgumentTypeError, DTypeError, IndexingError, ShapeError, StateDictError,
                            VizgradError)

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def signs(shape):
    return np.where(RNG.uniform(size=shape) < 0.5, -1.0, 1.0)


def compare(torch, name, args, kwargs=None, grad=(0,), atol=1e-10):
    """Call ``F.<name>`` in both libraries on the same float64 arrays; compare the value (dtype
    and shape too) and the gradient of every argument in ``grad`` for one random upstream
    gradient. Returns vizgrad's value."""
    kwargs = kwargs or {}

    def make(module, tensor):
        made = [tensor(a, requires_grad=i in grad) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
        return made, getattr(module, name)(*made, **kwargs)

    ours_in, ours = make(F, vg.tensor)
    theirs_in, theirs = make(torch.nn.functional, torch.tensor)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol, rtol=1e-9)
    upstream = RNG.standard_normal(tuple(theirs.shape))
    ours.backward(vg.tensor(upstream))
    theirs.backward(torch.tensor(upstream))
    for i in grad:
        np.testing.assert_allclose(ours_in[i].grad.numpy(), theirs_in[i].grad.numpy(), atol=atol, rtol=1e-9,
                                   err_msg=f"{name}: gradient of argument {i}")
    return ours


def tensors(*arrays):
    return tuple(vg.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) and a.dtype == np.float64 else
                 vg.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays)


REDUCTIONS = ("mean", "sum", "none")


# === losses against PyTorch ===============================================================

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes, margin", [(((5,), (5,), (5,)), 0.0), (((3, 4), (3, 4), (3, 4)), 0.5),
                                            (((4, 1), (1, 3), (4, 3)), -0.2), (((), (), ()), 1.0)])
def test_margin_ranking_loss(torch, shapes, margin, reduction):
    x1, x2 = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    compare(torch, "margin_ranking_loss", (x1, x2, signs(shapes[2])), dict(margin=margin, reduction=reduction),
            grad=(0, 1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, target, margin", [((6,), np.array([1.0, -1, 1, -1, 0, 2]), 1.0),
                                                   ((3, 4), np.array([1.0, -1, -1, 1]), 2.5),
                                                   ((2, 3, 2), np.array([[1.0], [-1.0], [1.0]]), 0.3)])
def test_hinge_embedding_loss(torch, shape, target, margin, reduction):
    compare(torch, "hinge_embedding_loss", (np.abs(RNG.standard_normal(shape)) * 2, target),
            dict(margin=margin, reduction=reduction), grad=(0,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, target_shape", [((7,), (7,)), ((3, 4), (3, 4)), ((2, 3, 4), (4,))])
def test_soft_margin_loss(torch, shape, target_shape, reduction):
    out = compare(torch, "soft_margin_loss", (RNG.standard_normal(shape) * 3, signs(target_shape)),
                  dict(reduction=reduction))
    assert out.grad_fn.name() == "SoftMarginLossBackward0"


def test_soft_margin_loss_is_finite_for_large_inputs_and_keeps_the_input_dtype(torch):
    x = vg.tensor([-800.0, 800.0, 30.0], dtype=vg.float64, requires_grad=True)
    loss = F.soft_margin_loss(x, vg.tensor([1.0, 1.0, -1.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [800.0, 0.0, 30.0], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, 0.0, 1.0], atol=1e-12)
    mixed = F.soft_margin_loss(vg.ones(3), vg.ones(3, dtype=vg.float64))
    assert mixed.dtype is vg.float32                # the input's dtype, as in PyTorch
    assert F.soft_margin_loss(vg.ones(3), vg.tensor([1, -1, 1])).dtype is vg.float32


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, weighted", [((4, 3), False), ((4, 3), True), ((5,), True), ((2, 4, 3), False)])
def test_multilabel_soft_margin_loss(torch, shape, weighted, reduction):
    args = (RNG.standard_normal(shape) * 2, (RNG.uniform(size=shape) < 0.5) * 1.0)
    if weighted:
        args += (RNG.uniform(0.5, 2.0, size=shape[-1:]),)
    compare(torch, "multilabel_soft_margin_loss", args, dict(reduction=reduction), grad=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, weighted", [(1, 1.0, False), (2, 1.0, False), (1, 0.4, True), (2, 2.0, True)])
def test_multi_margin_loss(torch, p, margin, weighted, reduction):
    x = RNG.standard_normal((6, 4))
    target = np.array([0, 3, 1, 1, 2, 3])
    weight = RNG.uniform(0.5, 2.0, size=4) if weighted else None
    compare(torch, "multi_margin_loss", (x, target, p, margin, weight), dict(reduction=reduction))


@pytest.mark.parametrize("target", [np.asarray(2), np.array([2])])
def test_multi_margin_loss_unbatched_keeps_the_targets_shape(torch, target):
    out = compare(torch, "multi_margin_loss", (RNG.standard_normal(5), target), dict(p=2, reduction="none"))
    assert out.shape == target.shape


def test_multi_margin_loss_by_hand():
    # one sample, target 3: the margins 1 - 0.8 + x_i over the classes i = 0, 1, 2, averaged over C = 4
    loss = F.multi_margin_loss(vg.tensor([[0.1, 0.2, 0.4, 0.8]]), vg.tensor([3]))
    assert loss.item() == pytest.approx((0.3 + 0.4 + 0.6) / 4)
    weighted = F.multi_margin_loss(vg.tensor([[0.1, 0.2, 0.3]]), vg.tensor([2]), p=2, weight=vg.tensor([1.0, 2, 3]))
    assert weighted.item() == pytest.approx((0.8 ** 2 + 0.9 ** 2) * 3 / 3)   # the weight multiplies after the power


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("x, target", [
    (RNG.standard_normal((4, 3)), np.array([[0, -1, 2], [2, 1, 0], [1, 1, -1], [-1, 0, 1]])),
    (RNG.standard_normal((2, 5)), np.array([[4, 3, 2, 1, 0], [0, 4, -1, 3, 3]])),
    (RNG.standard_normal(4), np.array([3, 0, -1, 2])),
    (np.asarray(0.3), np.asarray(0)),
])
def test_multilabel_margin_loss(torch, x, target, reduction):
    compare(torch, "multilabel_margin_loss", (x, target), dict(reduction=reduction))


def test_multilabel_margin_loss_by_hand():
    # targets 3 and 0 (the -1 ends the list): pairs with the classes 1 and 2, over C = 4
    loss = F.multilabel_margin_loss(vg.tensor([[0.1, 0.2, 0.4, 0.8]]), vg.tensor([[3, 0, -1, 1]]))
    expected = ((1 - (0.8 - 0.2)) + (1 - (0.8 - 0.4)) + (1 - (0.1 - 0.2)) + (1 - (0.1 - 0.4))) / 4
    assert loss.item() == pytest.approx(expected)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("batched, margin", [(True, 0.0), (True, 0.4), (True, -0.5), (False, 0.2)])
def test_cosine_embedding_loss(torch, batched, margin, reduction):
    shape = (5, 3) if batched else (4,)
    target = np.array([1.0, -1.0, -1.0, 1.0, 0.0]) if batched else np.asarray(-1.0)
    compare(torch, "cosine_embedding_loss", (RNG.standard_normal(shape), RNG.standard_normal(shape), target),
            dict(margin=margin, reduction=reduction), grad=(0, 1))


def test_cosine_embedding_loss_accepts_integer_inputs_as_pytorch(torch):
    a, b, y = np.array([[1, 2], [3, -1]]), np.array([[2, 2], [1, 1]]), np.array([1, -1])
    ours = F.cosine_embedding_loss(vg.tensor(a), vg.tensor(b), vg.tensor(y))
    theirs = torch.nn.functional.cosine_embedding_loss(torch.tensor(a), torch.tensor(b), torch.tensor(y))
    assert ours.dtype is vg.float32
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, options", [((5, 3), {}), ((4, 3), {"p": 1, "swap": True, "margin": 0.5}),
                                            ((2, 3, 4), {"p": 3, "eps": 1e-3, "margin": 2.0}),
                                            ((4,), {"swap": True}), ((), {})])
def test_triplet_margin_loss(torch, shape, options, reduction):
    anchor, positive, negative = (RNG.standard_normal(shape) for _ in range(3))
    compare(torch, "triplet_margin_loss", (anchor, positive, negative), dict(options, reduction=reduction),
            grad=(0, 1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(torch, swap, reduction):
    anchor, positive, negative = (RNG.standard_normal((5, 3)) for _ in range(3))
    compare(torch, "triplet_margin_with_distance_loss", (anchor, positive, negative),
            dict(swap=swap, margin=0.7, reduction=reduction), grad=(0, 1, 2))
    # a distance of one's own: the cosine distance
    tensors_ = [vg.tensor(a, requires_grad=True) for a in (anchor, positive, negative)]
    twins = [torch.tensor(a, requires_grad=True) for a in (anchor, positive, negative)]
    ours = F.triplet_margin_with_distance_loss(*tensors_, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y),
                                               swap=swap, reduction=reduction)
    theirs = torch.nn.functional.triplet_margin_with_distance_loss(
        *twins, distance_function=lambda x, y: 1 - torch.nn.functional.cosine_similarity(x, y), swap=swap,
        reduction=reduction)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    for mine, twin in zip(tensors_, twins):
        np.testing.assert_allclose(mine.grad.numpy(), twin.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input, full, eps", [(True, False, 1e-8), (True, True, 1e-8), (False, False, 1e-8),
                                                  (False, True, 1e-3)])
def test_poisson_nll_loss(torch, log_input, full, eps, reduction):
    counts = np.array([[0.5, 1.5, 2.0, 3.0], [4.0, 7.0, 0.3, 2.5], [1.2, 5.0, 9.0, 0.8]])
    x = RNG.standard_normal((3, 4)) if log_input else RNG.uniform(0.1, 3.0, size=(3, 4))
    compare(torch, "poisson_nll_loss", (x, counts), dict(log_input=log_input, full=full, eps=eps,
                                                         reduction=reduction), grad=(0, 1))


def test_poisson_nll_loss_target_gradient_is_finite_at_zero(torch):
    # PyTorch's is NaN there (0 · log 0 in the dropped Stirling term); the value is the same
    x, counts = vg.zeros(3, requires_grad=True), vg.tensor([0.0, 1.0, 3.0], requires_grad=True)
    loss = F.poisson_nll_loss(x, counts, full=True, reduction="sum")
    theirs = torch.nn.functional.poisson_nll_loss(torch.zeros(3), torch.tensor([0.0, 1.0, 3.0]), full=True,
                                                  reduction="sum")
    assert loss.item() == pytest.approx(theirs.item())
    loss.backward()
    assert np.isfinite(counts.grad.numpy()).all()
    np.testing.assert_allclose(counts.grad.numpy()[:2], [0.0, 0.0])      # d(-y x)/dy = -x = 0; no Stirling term


VARIANCES = {"same shape": (4, 3), "one per sample": (4,), "per column": (1, 3), "per row": (4, 1)}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", list(VARIANCES.values()), ids=list(VARIANCES))
def test_gaussian_nll_loss(torch, var_shape, full, reduction):
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    compare(torch, "gaussian_nll_loss", (x, y, RNG.uniform(0.2, 2.0, size=var_shape)),
            dict(full=full, reduction=reduction), grad=(0, 1, 2))


def test_gaussian_nll_loss_float_var_broadcast_target_and_4d_var(torch):
    compare(torch, "gaussian_nll_loss", (RNG.standard_normal((4, 3)), RNG.standard_normal(3), 0.7), grad=(0, 1))
    compare(torch, "gaussian_nll_loss", (RNG.standard_normal((2, 3, 4, 4)), RNG.standard_normal((2, 3, 4, 4)),
                                         RNG.uniform(0.5, 1.5, size=(2, 1, 4, 4))), grad=(0, 1, 2))


def test_gaussian_nll_loss_clamps_var_but_passes_its_gradient(torch):
    # var below eps is eps in the loss, and its gradient is the derivative at eps, as PyTorch's
    # clamp without recording: not the zero of a recorded clamp
    compare(torch, "gaussian_nll_loss", (np.array([1.0, 2.0, 0.5]), np.zeros(3), np.array([0.0, 1e-9, 0.3])),
            dict(reduction="sum"), grad=(0, 2), atol=1e-3)
    var = vg.tensor([0.0, 1e-9], requires_grad=True)
    F.gaussian_nll_loss(vg.tensor([1.0, 2.0]), vg.zeros(2), var, reduction="sum").backward()
    eps = 1e-6
    np.testing.assert_allclose(var.grad.numpy(), 0.5 * (1 / eps - np.array([1.0, 4.0]) / eps ** 2), rtol=1e-5)


LEGACY = [({"size_average": False}, "sum"), ({"reduce": False}, "none"), ({"size_average": True, "reduce": True},
                                                                          "mean")]


@pytest.mark.parametrize("legacy, reduction", LEGACY)
def test_legacy_size_average_and_reduce(legacy, reduction):
    x1, x2, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), signs((3, 4))
    calls = {
        "margin_ranking_loss": (x1, x2, y), "hinge_embedding_loss": (np.abs(x1), y), "soft_margin_loss": (x1, y),
        "multilabel_soft_margin_loss": (x1, (y > 0) * 1.0), "multi_margin_loss": (x1, np.array([0, 3, 1])),
        "multilabel_margin_loss": (x1, np.array([[0, 1, -1, 2]] * 3)), "cosine_embedding_loss": (x1, x2, y[:, 0]),
        "triplet_margin_loss": (x1, x2, y), "poisson_nll_loss": (x1, np.abs(x2)),
    }
    for name, args in calls.items():
        with pytest.warns(UserWarning, match=f"reduction='{reduction}'"):
            old = getattr(F, name)(*tensors(*args), **legacy)
        new = getattr(F, name)(*tensors(*args), reduction=reduction)
        np.testing.assert_allclose(old.detach().numpy(), new.detach().numpy(), err_msg=name)


# --- the loss modules -----------------------------------------------------------------------

def test_loss_modules_match_their_functionals_and_pytorchs_modules(torch):
    x1, x2, x3 = (RNG.standard_normal((4, 3)) for _ in range(3))
    y, labels = signs(4), np.array([2, 0, 1, 1])
    weight = RNG.uniform(0.5, 2.0, size=3)
    cases = [
        ("MarginRankingLoss", {"margin": 0.3}, (x1[:, 0], x2[:, 0], y)),
        ("HingeEmbeddingLoss", {"margin": 2.0, "reduction": "sum"}, (np.abs(x1), signs((4, 3)))),
        ("SoftMarginLoss", {}, (x1, signs((4, 3)))),
        ("MultiLabelSoftMarginLoss", {"weight": weight}, (x1, (x2 > 0) * 1.0)),
        ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": weight}, (x1, labels)),
        ("MultiLabelMarginLoss", {"reduction": "none"}, (x1, np.array([[2, -1, 0]] * 4))),
        ("CosineEmbeddingLoss", {"margin": 0.1}, (x1, x2, y)),
        ("TripletMarginLoss", {"p": 1.0, "swap": True}, (x1, x2, x3)),
        ("TripletMarginWithDistanceLoss", {"swap": True, "margin": 2.0}, (x1, x2, x3)),
        ("PoissonNLLLoss", {"log_input": False, "full": True}, (np.abs(x1) + 0.1, np.abs(x2) * 3)),
        ("GaussianNLLLoss", {"full": True, "eps": 1e-3}, (x1, x2, np.abs(x3[:, 0]) + 0.1)),
    ]
    for name, options, args in cases:
        ours_options = {k: vg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
        theirs_options = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
        ours = getattr(nn, name)(**ours_options)(*[vg.tensor(a) for a in args])
        theirs = getattr(torch.nn, name)(**theirs_options)(*[torch.tensor(a) for a in args])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-10, err_msg=name)


def test_loss_modules_keep_their_options_and_print_as_pytorch(torch):
    for name in ("MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
                 "MultiMarginLoss", "MultiLabelMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
                 "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss"):
        ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
        assert repr(ours) == repr(theirs)
        public = {k: v for k, v in vars(theirs).items() if not k.startswith("_") and k != "training"}
        for key, value in public.items():
            assert getattr(ours, key) == value, f"{name}.{key}"
    assert repr(nn.TripletMarginWithDistanceLoss()) == ("TripletMarginWithDistanceLoss(\n"
                                                         "  (distance_function): PairwiseDistance()\n)")
    weighted = nn.MultiMarginLoss(weight=vg.ones(3))
    assert [name for name, _ in weighted.named_buffers()] == ["weight"]
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.SoftMarginLoss(reduce=False).reduction == "none"


def test_loss_module_argument_errors():
    with pytest.raises(ArgumentError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ArgumentError, match="MultiMarginLoss: expected weight to be None or 1D tensor, got 2D"):
        nn.MultiMarginLoss(weight=vg.ones(2, 3))
    with pytest.raises(ArgumentError, match="TripletMarginLoss: expected margin to be greater than 0, got 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(ArgumentError, match="TripletMarginWithDistanceLoss: .* greater than 0, got -1"):
        nn.TripletMarginWithDistanceLoss(margin=-1)


# --- gradients of every order ---------------------------------------------------------------

def _away(array, kink=0.0, gap=0.15):
    side = np.where(array >= kink, 1.0, -1.0)
    return np.where(np.abs(array - kink) < gap, kink + gap * side * 1.5, array)


GRADCHECKS = {
    "margin_ranking_loss": lambda: ((RNG.standard_normal(5), RNG.standard_normal(5), signs(5)), {"margin": 0.1}),
    "hinge_embedding_loss": lambda: ((_away(np.abs(RNG.standard_normal(6)) * 2, 1.0), signs(6)), {}),
    "soft_margin_loss": lambda: ((RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))), {"reduction": "sum"}),
    "multilabel_soft_margin_loss": lambda: ((RNG.standard_normal((3, 4)), RNG.uniform(size=(3, 4)),
                                             RNG.uniform(0.5, 2, size=4)), {}),
    "multi_margin_loss": lambda: ((np.array([[0.1, 1.3, 2.5], [2.0, 0.2, 1.1]]), np.array([0, 2]), 2, 1.0,
                                   np.array([0.5, 1.0, 2.0])), {"reduction": "none"}),
    "multilabel_margin_loss": lambda: ((np.array([[0.1, 1.3, 2.5, 0.65]]), np.array([[1, 3, -1, 0]])), {}),
    "cosine_embedding_loss": lambda: ((RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3)),
                                       np.array([1.0, 1.0, 1.0, 1.0])), {}),
    "triplet_margin_loss": lambda: ((RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3)) * 0.1,
                                     RNG.standard_normal((4, 3)) * 0.1 + 3), {"margin": 5.0, "swap": True}),
    "poisson_nll_loss": lambda: ((RNG.uniform(0.5, 2, size=(3, 2)), RNG.uniform(1.5, 4, size=(3, 2))),
                                 {"log_input": False, "full": True}),
    "gaussian_nll_loss": lambda: ((RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)),
                                   RNG.uniform(0.5, 2, size=(3,))), {"full": True}),
    "rms_norm": lambda: ((RNG.standard_normal((3, 4)), (4,), RNG.standard_normal(4)), {"eps": 1e-4}),
    "channel_shuffle": lambda: ((RNG.standard_normal((2, 6, 2)), 3), {}),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_and_gradgradcheck_in_float64(name):
    args, kwargs = GRADCHECKS[name]()
    inputs = tensors(*args)

    def fn(*values):
        return getattr(F, name)(*values, **kwargs)

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("mode, shape, padding", [("reflect", (1, 2, 5), (3, -1)),
                                                  ("replicate", (2, 3, 4), (2, 3, -1, 2)),
                                                  ("circular", (1, 1, 2, 3, 3), (1, 2, 0, 1, 2, 1)),
                                                  ("reflect", (2, 4, 3), (1, 2, 2, 0))])
def test_pad_modes_gradcheck_and_gradgradcheck(mode, shape, padding):
    x = vg.tensor(RNG.standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda t: F.pad(t, padding, mode), (x,))
    assert gradgradcheck(lambda t: F.pad(t, padding, mode) ** 2, (x,))


# --- the dtypes PyTorch refuses, vizgrad refuses --------------------------------------------

DTYPE_CASES = {
    "margin_ranking_loss": (RNG.standard_normal(4), RNG.standard_normal(4), signs(4)),
    "hinge_embedding_loss": (RNG.standard_normal(4), signs(4)),
    "soft_margin_loss": (RNG.standard_normal(4), signs(4)),
    "multilabel_soft_margin_loss": (RNG.standard_normal((2, 3)), np.ones((2, 3))),
    "multi_margin_loss": (RNG.standard_normal((2, 3)), np.array([0, 2])),
    "multilabel_margin_loss": (RNG.standard_normal((2, 3)), np.array([[0, -1, 1], [2, 1, -1]])),
    "cosine_embedding_loss": (RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), signs(2)),
    "triplet_margin_loss": (RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))),
    "poisson_nll_loss": (RNG.standard_normal(4), np.array([0.0, 1.0, 2.0, 3.0])),
    "gaussian_nll_loss": (RNG.standard_normal(4), RNG.standard_normal(4), np.ones(4)),
    "rms_norm": (RNG.standard_normal((2, 3)), (3,), np.ones(3)),
    "channel_shuffle": (RNG.standard_normal((1, 4, 2)), 2),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
def test_arguments_of_another_dtype_fail_where_pytorch_fails(torch, name, dtype):
    """Each tensor argument in turn in another dtype: where PyTorch raises, vizgrad raises a
    vizgrad error naming the function (it may refuse more, never less)."""
    args = DTYPE_CASES[name]
    for position, arg in enumerate(args):
        if not isinstance(arg, np.ndarray):
            continue
        changed = list(args)
        changed[position] = arg.astype(dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(torch.nn.functional, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                                     for a in changed])
            torch_raises = False
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            torch_raises = True
        try:
            getattr(F, name)(*[vg.tensor(a) if isinstance(a, np.ndarray) else a for a in changed])
        except VizgradError as error:
            assert name in str(error)
            continue
        assert not torch_raises, f"{name} with argument {position} as {dtype}: PyTorch raises, vizgrad returned"


# --- helpful errors --------------------------------------------------------------------------

def test_loss_errors_name_the_function_and_the_argument():
    x, y = vg.randn(4, 3), vg.randn(4, 3)
    with pytest.raises(ShapeError, match=r"margin_ranking_loss: input1, input2 and target must have the same number "
                                         r"of dims, got shapes input1 \(4, 3\), input2 \(4, 3\), target \(4,\)"):
        F.margin_ranking_loss(x, y, vg.ones(4))
    with pytest.raises(ArgumentTypeError, match="margin_ranking_loss: margin must be a number, got a str"):
        F.margin_ranking_loss(x, y, vg.ones(4, 3), margin="1")
    with pytest.raises(ArgumentError, match="hinge_embedding_loss: 'avg' is not a valid value for reduction"):
        F.hinge_embedding_loss(x, vg.ones(4, 3), reduction="avg")
    with pytest.raises(ArgumentTypeError, match="soft_margin_loss: target must be a Tensor, got list"):
        F.soft_margin_loss(x, [1.0, -1.0])
    with pytest.raises(ShapeError, match=r"soft_margin_loss: target of shape \(2, 4, 3\) must broadcast to the "
                                         r"input's shape \(4, 3\)"):
        F.soft_margin_loss(x, vg.ones(2, 4, 3))
    with pytest.raises(DTypeError, match="soft_margin_loss: input must be floating point, got int64"):
        F.soft_margin_loss(vg.ones(3, dtype=vg.int64), vg.ones(3))
    with pytest.raises(ShapeError, match="multilabel_soft_margin_loss: input must have a class dim"):
        F.multilabel_soft_margin_loss(vg.tensor(1.0), vg.tensor(1.0))
    with pytest.raises(ArgumentError, match="multi_margin_loss: only p == 1 and p == 2 are supported, got p=3"):
        F.multi_margin_loss(x, vg.tensor([0, 1, 2, 0]), p=3)
    with pytest.raises(ShapeError, match=r"multi_margin_loss: target must be 1-D .* needs a target of shape \(4,\), "
                                         r"got \(2,\)"):
        F.multi_margin_loss(x, vg.tensor([0, 1]))
    with pytest.raises(IndexingError, match=r"multi_margin_loss: target 3 is out of range: class indices must be in "
                                            r"\[0, 3\)"):
        F.multi_margin_loss(x, vg.tensor([0, 3, 1, 0]))
    with pytest.raises(DTypeError, match="multi_margin_loss: target must hold class indices as int64"):
        F.multi_margin_loss(x, vg.tensor([0.0, 1.0, 1.0, 0.0]))
    with pytest.raises(ShapeError, match=r"multi_margin_loss: weight must have one entry per class, 3, got shape "
                                         r"\(4,\)"):
        F.multi_margin_loss(x, vg.tensor([0, 1, 1, 0]), weight=vg.ones(4))
    with pytest.raises(ArgumentError, match="multi_margin_loss: weight must be one-dimensional"):
        F.multi_margin_loss(x, vg.tensor([0, 1, 1, 0]), weight=vg.ones(1, 3))
    with pytest.raises(ShapeError, match=r"multi_margin_loss: input must be a non-empty vector .* got shape "
                                         r"\(2, 2, 3\)"):
        F.multi_margin_loss(vg.randn(2, 2, 3), vg.tensor([0, 1]))
    with pytest.raises(ShapeError, match=r"multilabel_margin_loss: target must have the input's shape \(4, 3\)"):
        F.multilabel_margin_loss(x, vg.tensor([0, 1, 1, 0]))
    with pytest.raises(IndexingError, match=r"multilabel_margin_loss: target -2 is out of range: class indices must "
                                            r"be in \[-1, 3\)"):
        F.multilabel_margin_loss(x[:1], vg.tensor([[0, -2, 1]]))
    with pytest.raises(IndexingError, match="multilabel_margin_loss: target 7 is out of range"):
        F.multilabel_margin_loss(x[:1], vg.tensor([[0, -1, 7]]))       # checked after the -1 too, as PyTorch
    with pytest.raises(ShapeError, match="cosine_embedding_loss: target must be 0-D or 1-D"):
        F.cosine_embedding_loss(x, y, vg.ones(4, 1))
    with pytest.raises(ShapeError, match=r"cosine_embedding_loss: a 1-D target expects 2-D inputs, got input1 of "
                                         r"shape \(3,\)"):
        F.cosine_embedding_loss(x[0], y[0], vg.ones(1))
    with pytest.raises(ArgumentError, match="triplet_margin_loss: margin must be greater than 0, got 0.0"):
        F.triplet_margin_loss(x, y, y, margin=0)
    with pytest.raises(ShapeError, match="triplet_margin_loss: the anchor, positive, and negative tensors are "
                                         "expected to have the same number of dimensions, but got: anchor 2D, "
                                         "positive 1D, and negative 2D inputs"):
        F.triplet_margin_loss(x, y[0], y)
    with pytest.raises(ArgumentTypeError, match="triplet_margin_with_distance_loss: distance_function must be a "
                                                "callable"):
        F.triplet_margin_with_distance_loss(x, y, y, distance_function=2.0)
    with pytest.raises(ArgumentError, match="triplet_margin_with_distance_loss: 'x' is not a valid value"):
        F.triplet_margin_with_distance_loss(x, y, y, reduction="x")
    with pytest.raises(DTypeError, match="poisson_nll_loss: target is bool"):
        F.poisson_nll_loss(x, x > 0, full=True)


def test_gaussian_nll_loss_errors_as_pytorch():
    x, y = vg.randn(4, 3), vg.randn(4, 3)
    with pytest.raises(ArgumentError, match="gaussian_nll_loss: var has negative entry/entries"):
        F.gaussian_nll_loss(x, y, -vg.ones(4, 3))
    with pytest.raises(ArgumentError, match="gaussian_nll_loss: var has negative entry/entries"):
        F.gaussian_nll_loss(x, y, -2.0)
    for bad in (vg.ones(3), vg.ones(1, 1), vg.ones(2, 4, 3)):
        with pytest.raises(ShapeError, match=r"gaussian_nll_loss: var is of incorrect size: input of shape \(4, 3\)"):
            F.gaussian_nll_loss(x, y, bad)
    with pytest.raises(ArgumentError, match="gaussian_nll_loss: 'avg' is not valid"):
        F.gaussian_nll_loss(x, y, vg.ones(4, 3), reduction="avg")
    with pytest.raises(DTypeError, match="gaussian_nll_loss: var must be floating point, got int64"):
        F.gaussian_nll_loss(x, y, vg.ones(4, 3, dtype=vg.int64))
    with pytest.raises(ArgumentTypeError, match="gaussian_nll_loss: var must be a number, got a str"):
        F.gaussian_nll_loss(x, y, "1")


# === pad modes and padding layers =========================================================

PAD_SHAPES = [(2, 5), (1, 2, 5), (2, 3, 4), (1, 2, 3, 4), (2, 3, 4, 5), (1, 1, 3, 4, 5)]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape", PAD_SHAPES, ids=str)
def test_pad_modes_match_pytorch(torch, mode, shape):
    """Random paddings (negative ones crop) for every number of padded dims the shape allows:
    the same values, gradients and node names as PyTorch's, or an error where PyTorch's refuses."""
    rng = np.random.default_rng(len(shape) * 10 + ["reflect", "replicate", "circular"].index(mode))
    compared = 0
    for dims in (1, 2, 3):
        if len(shape) not in (dims + 1, dims + 2):
            continue
        for _ in range(30):
            padding = tuple(int(p) for p in rng.integers(-2, 4, size=2 * dims))
            x = rng.standard_normal(shape)
            try:
                theirs_in = torch.tensor(x, requires_grad=True)
                theirs = torch.nn.functional.pad(theirs_in, padding, mode=mode)
            except RuntimeError:
                with pytest.raises(ShapeError, match="pad: "):
                    F.pad(vg.tensor(x), padding, mode=mode)
                continue
            ours_in = vg.tensor(x, requires_grad=True)
            if mode == "circular" and not _wraps_once(shape, padding):
                # PyTorch checks against the uncropped size and then reads memory it should not
                # (garbage values or an overlap error); vizgrad refuses
                with pytest.raises(ShapeError, match="would wrap around more than once"):
                    F.pad(ours_in, padding, mode=mode)
                continue
            ours = F.pad(ours_in, padding, mode=mode)
            np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
            upstream = rng.standard_normal(tuple(theirs.shape))
            ours.backward(vg.tensor(upstream))
            if ours.numel() == 0:         # PyTorch's gradient is then uninitialized memory
                assert not ours_in.grad.numpy().any()
                continue
            theirs.backward(torch.tensor(upstream))
            np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), atol=1e-12)
            if mode != "circular":        # PyTorch's circular padding is a composite (CopySlices)
                assert ours.grad_fn.name() == theirs.grad_fn.name()
            compared += 1
    assert compared >= 6


def _wraps_once(shape, padding):
    """Whether circular ``padding`` wraps each dim at most once around what is left after cropping."""
    for dim, (before, after) in enumerate(zip(padding[::2], padding[1::2])):
        kept = shape[len(shape) - 1 - dim] - max(-before, 0) - max(-after, 0)
        if before > kept or after > kept:
            return False
    return True


def test_pad_modes_by_hand():
    row = vg.arange(4.0).view(1, 4)
    assert F.pad(row, (2, 3), mode="reflect").tolist() == [[2, 1, 0, 1, 2, 3, 2, 1, 0]]
    assert F.pad(row, (2, 3), mode="replicate").tolist() == [[0, 0, 0, 1, 2, 3, 3, 3, 3]]
    assert F.pad(row, (2, 3), mode="circular").tolist() == [[2, 3, 0, 1, 2, 3, 0, 1, 2]]
    assert F.pad(row, (-1, 2), mode="reflect").tolist() == [[1, 2, 3, 2, 1]]      # reflects the whole input
    assert F.pad(row, (-1, 2), mode="circular").tolist() == [[1, 2, 3, 1, 2]]     # wraps what is left
    x = vg.arange(3.0, requires_grad=True)
    F.pad(x.view(1, 3), (2, 2), mode="replicate").sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 3.0]                  # each edge entry copied twice more
    assert F.pad(vg.arange(4).view(1, 4), (1, 1), mode="reflect").dtype is vg.int64
    assert F.pad(row, (1, 1), mode="reflect", value=0).shape == (1, 6)


def test_pad_mode_errors():
    x = vg.randn(1, 2, 4)
    with pytest.raises(ArgumentError, match="pad: unrecognised padding mode 'mirror'"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ArgumentError, match="pad: padding mode 'reflect' doesn't take a value argument"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(ShapeError, match=r"pad: mode 'replicate' pads the last 1, 2 or 3 dims .* got padding of "
                                         r"size 2 for an input of shape \(4,\)"):
        F.pad(vg.randn(4), (1, 1), mode="replicate")
    with pytest.raises(ShapeError, match="padding of size 8"):
        F.pad(vg.randn(1, 1, 1, 1, 2, 3), (1,) * 8, mode="circular")
    with pytest.raises(ShapeError, match=r"pad: mode 'reflect' needs padding smaller than the size it reflects, but "
                                         r"got padding \(4, 0\) at dim 2 of size 4"):
        F.pad(x, (4, 0), mode="reflect")
    with pytest.raises(ShapeError, match="would wrap around more than once"):
        F.pad(x, (5, 0), mode="circular")
    with pytest.raises(ShapeError, match="leaves no entries in any padded dim"):
        F.pad(x, (-2, -2), mode="replicate")
    with pytest.raises(ShapeError, match="whose dims are not empty"):
        F.pad(vg.randn(1, 0, 4), (1, 1), mode="reflect")
    with pytest.raises(DTypeError, match="pad: mode 'reflect' does not support bool"):
        F.pad(vg.ones(1, 4, dtype=vg.bool), (1, 1), mode="reflect")
    assert F.pad(vg.randn(1, 0, 4), (1, 1), mode="circular").shape == (1, 0, 6)      # as PyTorch


PAD_LAYERS = [("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad2d", ((1, 2, 3, 4),), (2, 3, 4)),
              ("ZeroPad3d", (1,), (1, 2, 2, 3)), ("ConstantPad1d", (2, 3.5), (2, 3, 4)),
              ("ConstantPad2d", ((1, 0, 2, 0), 0), (1, 3, 4)), ("ConstantPad3d", (1, -1.0), (1, 2, 2, 2, 3)),
              ("ReflectionPad1d", (2,), (2, 3, 4)), ("ReflectionPad2d", ((1, 1, 2, 0),), (2, 3, 4)),
              ("ReflectionPad3d", (1,), (1, 2, 2, 3, 3)), ("ReplicationPad1d", ((1, 2),), (3, 4)),
              ("ReplicationPad2d", (1,), (1, 2, 3, 4)), ("ReplicationPad3d", (2,), (2, 2, 3, 3)),
              ("CircularPad1d", (1,), (2, 3, 4)), ("CircularPad2d", ((1, 1, 0, 2),), (1, 2, 3, 4)),
              ("CircularPad3d", (1,), (1, 1, 2, 3, 3))]


@pytest.mark.parametrize("name, args, shape", PAD_LAYERS, ids=[case[0] for case in PAD_LAYERS])
def test_padding_layers_match_pytorch(torch, name, args, shape):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert ours.padding == theirs.padding and getattr(ours, "value", None) == getattr(theirs, "value", None)
    x = RNG.standard_normal(shape)
    ours_in, theirs_in = vg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours(ours_in), theirs(theirs_in)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), atol=1e-12)
    assert list(ours.parameters()) == [] and ours.state_dict() == OrderedDict()


def test_padding_layer_reprs_and_arguments():
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"
    assert repr(nn.ReflectionPad3d(1)) == "ReflectionPad3d((1, 1, 1, 1, 1, 1))"
    assert nn.CircularPad2d([1, 2, 3, 4]).padding == (1, 2, 3, 4)
    with pytest.raises(ArgumentTypeError, match=r"ReflectionPad1d: padding must be an int or a tuple of 2 ints, got "
                                                r"\(1.5, 2\)"):
        nn.ReflectionPad1d((1.5, 2))
    with pytest.raises(ShapeError, match="pad: mode 'reflect' pads the last 1, 2 or 3 dims"):
        nn.ReflectionPad2d(1)(vg.randn(4, 4))


# === rms_norm and RMSNorm ==================================================================

@pytest.mark.parametrize("shape, normalized, weighted, eps", [((4, 5), (5,), False, None),
                                                              ((2, 3, 4), (3, 4), True, None),
                                                              ((3, 6), (6,), True, 1e-3), ((6,), (6,), False, 0.5)])
def test_rms_norm_matches_pytorch(torch, shape, normalized, weighted, eps):
    args = (RNG.standard_normal(shape), normalized) + ((RNG.standard_normal(normalized),) if weighted else ())
    compare(torch, "rms_norm", args, {"eps": eps}, grad=(0, 2) if weighted else (0,))


def test_rms_norm_eps_follows_the_dtype_and_the_result_keeps_the_input_dtype(torch):
    x = np.array([[1e-4, -2e-4, 3e-4]])
    for dtype in ("float32", "float64"):
        ours = F.rms_norm(vg.tensor(x.astype(dtype)), (3,))
        theirs = torch.nn.functional.rms_norm(torch.tensor(x.astype(dtype)), (3,))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)
    expected = x / np.sqrt((x ** 2).mean() + np.finfo(np.float32).eps)
    np.testing.assert_allclose(F.rms_norm(vg.tensor(x, dtype=vg.float32), (3,)).numpy(), expected, rtol=1e-5)
    assert F.rms_norm(vg.ones(2, 3), (3,), vg.ones(3, dtype=vg.float64)).dtype is vg.float32
    assert F.rms_norm(vg.ones(2, 3, dtype=vg.float64), (3,), vg.ones(3)).dtype is vg.float64


def test_rms_norm_errors():
    with pytest.raises(ShapeError, match=r"rms_norm: given normalized_shape=\[4\], expected an input of shape "
                                         r"\[\*, 4\], but got an input of shape \(2, 3\)"):
        F.rms_norm(vg.randn(2, 3), (4,))
    with pytest.raises(ShapeError, match=r"rms_norm: weight has shape \(2,\) but must have normalized_shape \(3,\)"):
        F.rms_norm(vg.randn(2, 3), (3,), vg.ones(2))
    with pytest.raises(ShapeError, match="rms_norm: normalized_shape must hold at least one size"):
        F.rms_norm(vg.randn(2, 3), ())
    with pytest.raises(DTypeError, match="rms_norm: expected a floating-point input, got int64"):
        F.rms_norm(vg.ones(2, 3, dtype=vg.int64), (3,))
    with pytest.raises(ArgumentError, match="RMSNorm: normalized_shape must be non-negative"):
        nn.RMSNorm(-1)


def test_rms_norm_layer(torch):
    layer = nn.RMSNorm([2, 3]).double()
    assert repr(layer) == repr(torch.nn.RMSNorm([2, 3])) == "RMSNorm((2, 3), eps=None, elementwise_affine=True)"
    assert [name for name, _ in layer.named_parameters()] == ["weight"] and list(layer.state_dict()) == ["weight"]
    assert layer.weight.tolist() == [[1.0] * 3] * 2
    with vg.no_grad():
        layer.weight.mul_(vg.tensor([[1.0, 2.0, 3.0], [0.5, 1.0, -1.0]], dtype=vg.float64))
    x = RNG.standard_normal((4, 2, 3))
    twin = torch.nn.RMSNorm([2, 3], eps=None).double()
    with torch.no_grad():
        twin.weight.copy_(torch.tensor(layer.weight.detach().numpy()))
    np.testing.assert_allclose(layer(vg.tensor(x)).detach().numpy(), twin(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)
    plain = nn.RMSNorm(3, eps=1e-5, elementwise_affine=False)
    assert plain.weight is None and list(plain.parameters()) == [] and list(plain.state_dict()) == []
    assert repr(plain) == "RMSNorm((3,), eps=1e-05, elementwise_affine=False)"
    assert not hasattr(plain, "bias")
    layer.reset_parameters()
    assert layer.weight.tolist() == [[1.0] * 3] * 2


# === channel-wise dropout =================================================================

@pytest.mark.parametrize("function, shape, channels", [(F.dropout1d, (4, 6, 5), (4, 6)), (F.dropout1d, (6, 5), (6,)),
                                                       (F.dropout2d, (3, 5, 4, 4), (3, 5)),
                                                       (F.dropout3d, (2, 5, 2, 3, 3), (2, 5)),
                                                       (F.dropout3d, (5, 2, 3, 3), (5,))])
def test_channel_dropout_zeroes_whole_channels(function, shape, channels):
    vg.manual_seed(3)
    x = vg.ones(*shape, dtype=vg.float64, requires_grad=True)
    out = function(x, p=0.4)
    per_channel = out.detach().numpy().reshape(channels + (-1,))
    assert set(np.unique(per_channel)) <= {0.0, 1 / 0.6}
    assert (per_channel.min(axis=-1) == per_channel.max(axis=-1)).all()      # one draw per channel
    dropped = (per_channel[..., 0] == 0).mean()
    assert 0.0 < dropped < 1.0
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy())          # the gradient is the mask
    assert out.grad_fn.name() == "MulBackward0"


def test_channel_dropout_rate_and_modes():
    vg.manual_seed(0)
    kept = (F.dropout2d(vg.ones(200, 50, 1, 1), p=0.3) != 0).float().mean().item()
    assert kept == pytest.approx(0.7, abs=0.02)
    x = vg.randn(2, 3, 4)
    assert F.dropout1d(x, training=False) is x and F.dropout1d(x, p=0.0) is x
    assert F.dropout1d(x, p=1.0).abs().sum().item() == 0.0
    y = vg.ones(2, 3, 4)
    assert F.dropout1d(y, 0.5, inplace=True) is y and set(np.unique(y.numpy())) <= {0.0, 2.0}
    z = vg.ones(3, 4)
    assert F.dropout1d(z, 0.5, inplace=True) is z and z.shape == (3, 4)


def test_channel_dropout_warnings_and_errors():
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                                         "1D dropout behavior is desired"):
        assert F.dropout2d(vg.ones(2, 3, 4)).shape == (2, 3, 4)
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d, which is deprecated"):
        F.dropout2d(vg.ones(2, 3))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d"):
        F.dropout3d(vg.ones(2, 3, 4))
    with pytest.raises(ShapeError, match=r"dropout1d: expected a 2D \(C, L\) or 3D \(N, C, L\) input, but received a "
                                         r"4D input"):
        F.dropout1d(vg.ones(1, 2, 3, 4))
    with pytest.raises(ArgumentError, match="dropout2d: dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout2d(vg.ones(1, 2, 3, 4), p=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ShapeError, match="dropout2d: channel-wise dropout needs at least 2 dims"):
            F.dropout2d(vg.ones(3))
    with pytest.raises(DTypeError, match="dropout3d: expected a floating-point input"):
        F.dropout3d(vg.ones(1, 2, 2, 2, 2, dtype=vg.int64))
    with pytest.raises(ArgumentError, match="Dropout1d: dropout probability has to be between 0 and 1, but got 2"):
        nn.Dropout1d(2)


def test_dropout_layers(torch):
    for name in ("Dropout1d", "Dropout2d", "Dropout3d"):
        assert repr(getattr(nn, name)(0.2, inplace=True)) == repr(getattr(torch.nn, name)(0.2, inplace=True))
    layer = nn.Dropout2d(0.5)
    x = vg.ones(4, 6, 2, 2)
    vg.manual_seed(1)
    out = layer(x).numpy().reshape(4, 6, 4)
    assert (out.min(axis=-1) == out.max(axis=-1)).all() and set(np.unique(out)) == {0.0, 2.0}
    assert layer.eval()(x) is x


# === Softmax2d and channel_shuffle =========================================================

def test_softmax2d(torch):
    for shape in ((2, 3, 4, 5), (3, 4, 5)):
        x = RNG.standard_normal(shape)
        ours_in, theirs_in = vg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, expected = nn.Softmax2d()(ours_in), torch.nn.Softmax2d()(theirs_in)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(out.sum(dim=-3).detach().numpy(), 1.0)
        (out[..., 0, :, :] * 3).sum().backward()
        (expected[..., 0, :, :] * 3).sum().backward()
        np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), atol=1e-12)
    assert repr(nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(ShapeError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(vg.randn(2, 3))


@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((2, 4, 1, 2, 1), 4), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_pytorch(torch, shape, groups):
    compare(torch, "channel_shuffle", (RNG.standard_normal(shape), groups))
    layer = nn.ChannelShuffle(groups)
    assert repr(layer) == repr(torch.nn.ChannelShuffle(groups)) == f"ChannelShuffle(groups={groups})"
    x = RNG.standard_normal(shape)
    np.testing.assert_array_equal(layer(vg.tensor(x)).numpy(), torch.nn.ChannelShuffle(groups)(torch.tensor(x)).numpy())


def test_channel_shuffle_by_hand_and_errors():
    assert F.channel_shuffle(vg.arange(6.0).view(1, 6, 1), 2).flatten().tolist() == [0, 3, 1, 4, 2, 5]
    assert F.channel_shuffle(vg.arange(8).view(1, 4, 2), 2).dtype is vg.int64
    with pytest.raises(ShapeError, match=r"channel_shuffle: expects an input with more than 2 dims \(N, C, \*\), got "
                                         r"shape \(2, 4\)"):
        F.channel_shuffle(vg.randn(2, 4), 2)
    with pytest.raises(ShapeError, match="channel_shuffle: the number of channels must be divisible by groups: got 5 "
                                         "channels and 2 groups"):
        F.channel_shuffle(vg.randn(1, 5, 2), 2)
    with pytest.raises(ArgumentError, match="channel_shuffle: the number of groups to divide channels in must be "
                                            "positive, got groups=0"):
        F.channel_shuffle(vg.randn(1, 4, 2), 0)
    with pytest.raises(ArgumentTypeError, match="channel_shuffle: groups must be an int, got a float"):
        F.channel_shuffle(vg.randn(1, 4, 2), 2.0)
    with pytest.raises(ArgumentError, match="channel_shuffle: .* positive, got groups=0"):
        nn.ChannelShuffle(0)(vg.randn(1, 4, 2))          # as PyTorch: checked when called


# === ParameterList and ParameterDict =======================================================

def test_parameter_list_registers_its_parameters():
    first, second = nn.Parameter(vg.randn(3, 4)), nn.Parameter(vg.randn(2, dtype=vg.float64))
    params = nn.ParameterList([first, second, vg.zeros(2)])
    assert len(params) == 3 and params[0] is first and params[-2] is second
    assert isinstance(params[2], nn.Parameter) and params[2].requires_grad          # a tensor becomes a Parameter
    assert list(params.parameters()) == [first, second, params[2]]
    assert [name for name, _ in params.named_parameters()] == ["0", "1", "2"]
    assert list(params.state_dict()) == ["0", "1", "2"]
    params.append(vg.ones(1)).extend([vg.ones(2), vg.ones(3)])
    params += [vg.ones(4)]
    assert [p.shape[0] for p in params[3:]] == [1, 2, 3, 4]
    assert isinstance(params[3:], nn.ParameterList) and params[3:][0] is params[3]
    params[0] = vg.zeros(5)
    assert params[0].shape == (5,) and isinstance(params[0], nn.Parameter)
    with pytest.raises(IndexingError, match="index 7 is out of range for ParameterList of length 7"):
        params[7]
    with pytest.raises(ArgumentTypeError, match="ParameterList.extend should be called with an iterable, but got int"):
        params.extend(3)
    with pytest.raises(VizgradError, match="ParameterList should not be called"):
        params(vg.ones(1))


def test_parameter_list_inside_a_module_and_its_state_dict():
    class Scales(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([nn.Parameter(vg.ones(2)) for _ in range(2)])
            self.linear = nn.Linear(2, 2)

        def forward(self, x):
            for scale in self.scales:
                x = x * scale
            return self.linear(x)

    model = Scales()
    assert [name for name, _ in model.named_parameters()] == ["scales.0", "scales.1", "linear.weight", "linear.bias"]
    assert model.scales[1].name == "scales.1"
    model(vg.ones(3, 2)).sum().backward()
    assert model.scales[0].grad is not None and model.scales[0].grad.shape == (2,)
    other = Scales()
    with vg.no_grad():
        other.scales[1].fill_(3.0)
    model.load_state_dict(other.state_dict())
    assert model.scales[1].tolist() == [3.0, 3.0]
    with pytest.raises(StateDictError, match='Missing key\\(s\\) in state_dict: "scales.1"'):
        model.load_state_dict({k: v for k, v in other.state_dict().items() if k != "scales.1"})
    assert repr(model) == ("Scales(\n"
                           "  (scales): ParameterList(\n"
                           "      (0): Parameter containing: [vizgrad.float32 of size 2]\n"
                           "      (1): Parameter containing: [vizgrad.float32 of size 2]\n"
                           "  )\n"
                           "  (linear): Linear(in_features=2, out_features=2, bias=True)\n"
                           ")")


def test_parameter_list_prints_as_pytorch(torch):
    ours = nn.ParameterList([nn.Parameter(vg.zeros(3, 4)), nn.Parameter(vg.zeros(2, dtype=vg.float64)),
                             nn.Parameter(vg.zeros(())), 1, "a", nn.Linear(1, 1)])
    theirs = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(3, 4)),
                                     torch.nn.Parameter(torch.zeros(2, dtype=torch.float64)),
                                     torch.nn.Parameter(torch.zeros(())), 1, "a", torch.nn.Linear(1, 1)])
    assert repr(ours) == repr(theirs).replace("torch.", "vizgrad.")
    assert repr(nn.ParameterList()) == "ParameterList()"
    assert repr(nn.ParameterList([vg.zeros(2)])) == ("ParameterList(  (0): Parameter containing: "
                                                     "[vizgrad.float32 of size 2])")
    assert [name for name, _ in ours.named_children()] == ["5"]


def test_parameter_dict_registers_its_parameters_and_orders_keys_as_pytorch():
    params = nn.ParameterDict({"b": nn.Parameter(vg.randn(3)), "a": vg.ones(2, 2)})
    assert list(params) == ["a", "b"]                            # a plain dict is added in sorted order
    assert list(nn.ParameterDict(OrderedDict([("b", vg.ones(1)), ("a", vg.ones(1))]))) == ["b", "a"]
    assert list(nn.ParameterDict([("y", vg.ones(1)), ("x", vg.ones(1))])) == ["y", "x"]
    assert isinstance(params["a"], nn.Parameter) and params["a"].name == "a"
    assert [name for name, _ in params.named_parameters()] == ["a", "b"] and list(params.state_dict()) == ["a", "b"]
    params["c"] = vg.zeros(4)
    assert "c" in params and len(params) == 3 and list(params.keys()) == ["a", "b", "c"]
    assert [v.shape for v in params.values()] == [(2, 2), (3,), (4,)]
    assert params.get("missing", 5) == 5 and params.setdefault("c") is params["c"]
    assert params.pop("b").shape == (3,) and list(params) == ["a", "c"]
    assert params.popitem()[0] == "c" and list(params) == ["a"]
    merged = params | nn.ParameterDict({"z": vg.ones(1)})
    assert list(merged) == ["a", "z"] and merged["a"] is params["a"]
    copied = params.copy()
    assert list(copied) == ["a"] and copied["a"] is params["a"]
    params.update([("d", vg.ones(3))])
    assert list(reversed(params)) == ["d", "a"]
    assert list(params.fromkeys(["p", "q"], None).keys()) == ["p", "q"]
    params.clear()
    assert len(params) == 0 and list(params.parameters()) == []
    with pytest.raises(ArgumentTypeError, match="ParameterDict: keys must be strings, got int"):
        params[1] = vg.ones(1)
    with pytest.raises(ArgumentError, match="ParameterDict update sequence element #0 has length 3; 2 is required"):
        params.update([("a", vg.ones(1), 3)])
    with pytest.raises(ArgumentTypeError, match="should be called with an iterable of key/value pairs, but got int"):
        params.update(3)
    with pytest.raises(VizgradError, match="ParameterDict should not be called"):
        params()


def test_parameter_dict_prints_as_pytorch_and_moves_with_its_module(torch):
    ours = nn.ParameterDict({"w": nn.Parameter(vg.zeros(2, 3)), "b": vg.zeros(3, dtype=vg.float64)})
    ours["n"] = 3
    theirs = torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.zeros(2, 3)),
                                     "b": torch.zeros(3, dtype=torch.float64)})
    theirs["n"] = 3
    assert repr(ours) == repr(theirs).replace("torch.", "vizgrad.")
    assert repr(ours) == ("ParameterDict(\n"
                          "    (b): Parameter containing: [vizgrad.DoubleTensor of size 3]\n"
                          "    (w): Parameter containing: [vizgrad.FloatTensor of size 2x3]\n"
                          "    (n): Object of type: int\n"
                          ")")
    ours.double()
    assert ours["w"].dtype is vg.float64
