"""Tensors, shapes and grad_fn nodes print as PyTorch prints them (PyTorch as the oracle when
installed; fixed strings otherwise). vizgrad names its own module where PyTorch writes
``torch.``: ``dtype=vizgrad.float64``, ``vizgrad.Size([2, 3])``."""

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F


@pytest.fixture(autouse=True)
def default_print_options():
    yield
    vg.set_printoptions(profile="default")


def _arrays():
    rng = np.random.default_rng(0)
    yield rng.standard_normal((3, 4)).astype(np.float32)
    yield np.array([4.5, 0.01], dtype=np.float32)
    yield np.array([1e-5, 1.0, 250.0], dtype=np.float32)          # scientific: small values
    yield np.array([1.0, 2.0, 3000.0], dtype=np.float32)          # scientific: spread in int mode
    yield np.array([1.0, -2.0, 30.0], dtype=np.float32)           # int mode
    yield np.array([np.nan, np.inf, -np.inf, 1.5], dtype=np.float32)
    yield np.array([0.0, 0.0], dtype=np.float32)
    yield np.array(3.25, dtype=np.float32)
    yield np.array(-7, dtype=np.int64)
    yield rng.standard_normal((2, 3, 4)).astype(np.float64)
    yield rng.standard_normal((5, 30)).astype(np.float32)         # wraps at 80 characters
    yield np.arange(2000, dtype=np.int64)                          # summarised
    yield rng.standard_normal((40, 40)).astype(np.float32)         # summarised in 2-d
    yield rng.integers(-1000, 1000, size=(3, 5)).astype(np.int32)
    yield np.array([True, False, True])
    yield np.zeros((0,), dtype=np.float32)
    yield np.zeros((0, 3), dtype=np.float32)
    yield np.zeros((2, 0), dtype=np.int64)
    yield (rng.standard_normal((3, 3)) * 1e9).astype(np.float32)
    yield np.array([1.0, 2.5], dtype=np.float16)
    yield np.array([5e-319, 2.0])                                  # subnormal: no overflow in the choice of format
    yield np.array([1e-320, 1e300])


def _as_vizgrad_text(text):
    return text.replace("torch.", "vizgrad.")


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("index", range(len(list(_arrays()))))
def test_repr_matches_pytorch(index):
    torch = pytest.importorskip("torch")
    array = list(_arrays())[index]
    assert repr(vg.tensor(array)) == _as_vizgrad_text(repr(torch.tensor(array)))


def test_repr_with_autograd_state_and_print_options_matches_pytorch():
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    ours, theirs = vg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    assert repr(ours) == repr(theirs)
    assert repr(ours * 2) == repr(theirs * 2)
    for options in ({"precision": 2}, {"sci_mode": True}, {"linewidth": 40}, {"profile": "short"},
                    {"threshold": 5, "edgeitems": 1}):
        vg.set_printoptions(**options)
        torch.set_printoptions(**options)
        try:
            assert repr(vg.tensor(values)) == repr(torch.tensor(values)), options
        finally:
            torch.set_printoptions(profile="default")
            vg.set_printoptions(profile="default")


def test_repr_fixed_strings():
    assert repr(vg.tensor([4.5, 0.01])) == "tensor([4.5000, 0.0100])"
    assert repr(vg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(vg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(vg.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(vg.tensor([1.0], dtype=vg.float64)) == "tensor([1.], dtype=vizgrad.float64)"
    assert repr(vg.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(vg.zeros(0, dtype=vg.int64)) == "tensor([], dtype=vizgrad.int64)"
    assert repr(vg.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    assert str(x) == repr(x)


def test_size_is_a_tuple_that_prints_like_pytorchs():
    shape = vg.zeros(64, 1, 28, 28).shape
    assert isinstance(shape, tuple) and isinstance(shape, vg.Size)
    assert repr(shape) == str(shape) == "vizgrad.Size([64, 1, 28, 28])"
    assert shape == (64, 1, 28, 28) and shape[1:] == (1, 28, 28) and isinstance(shape[1:], vg.Size)
    assert shape[0] == 64 and shape.numel() == 64 * 28 * 28
    assert isinstance(shape + (2,), vg.Size) and isinstance((2,) + shape, vg.Size)
    assert vg.zeros(2, 3).size() == vg.Size([2, 3]) and vg.zeros(2, 3).size(-1) == 3
    assert repr(vg.Size()) == "vizgrad.Size([])"
    with pytest.raises(TypeError, match="item 0 is 'float'"):
        vg.Size([2.5])


def test_0d_tensors_format_as_numbers():
    loss = vg.tensor(0.123456)
    assert f"{loss:.4f}" == "0.1235" and format(loss, ".2e") == "1.23e-01"
    assert f"{loss}" == str(float(np.float32(0.123456)))     # the Python float, as PyTorch
    assert f"{vg.tensor(3)}" == "3"
    assert f"{vg.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{vg.tensor([1.0, 2.0]):.2f}"


# --- grad_fn names ----------------------------------------------------------------------

def _graph_programs(lib, F_):
    """(name, function of (x, w, v, y)) pairs run alike in vizgrad and PyTorch."""
    return {
        "add": lambda x, w, v, y: x + x, "mul": lambda x, w, v, y: x * 2, "div": lambda x, w, v, y: x / x,
        "pow": lambda x, w, v, y: x ** x, "neg": lambda x, w, v, y: -x, "exp": lambda x, w, v, y: x.exp(),
        "log1p": lambda x, w, v, y: x.abs().log1p(), "sum": lambda x, w, v, y: x.sum(),
        "sum_dim": lambda x, w, v, y: x.sum(0), "mean": lambda x, w, v, y: x.mean(),
        "mean_dim": lambda x, w, v, y: x.mean(1), "max": lambda x, w, v, y: x.max(),
        "max_dim": lambda x, w, v, y: x.max(0).values, "view": lambda x, w, v, y: x.view(12),
        "select": lambda x, w, v, y: x[0], "slice": lambda x, w, v, y: x[1:], "index": lambda x, w, v, y: x[[0, 1]],
        "transpose": lambda x, w, v, y: x.transpose(0, 1), "mm": lambda x, w, v, y: x @ w,
        "mv": lambda x, w, v, y: x @ v, "dot": lambda x, w, v, y: v @ v,
        "linear": lambda x, w, v, y: F_.linear(x, w, v), "relu": lambda x, w, v, y: F_.relu(x),
        "softmax": lambda x, w, v, y: F_.softmax(x, 1), "log_softmax": lambda x, w, v, y: F_.log_softmax(x, 1),
        "mse": lambda x, w, v, y: F_.mse_loss(x, x.detach() * 0.5),
        "mse_sum": lambda x, w, v, y: F_.mse_loss(x, x.detach() * 0.5, reduction="sum"),
        "l1": lambda x, w, v, y: F_.l1_loss(x, x.detach() * 0.5),
        "huber": lambda x, w, v, y: F_.huber_loss(x, x.detach() * 0.5),
        "smooth_l1": lambda x, w, v, y: F_.smooth_l1_loss(x, x.detach() * 0.5),
        "nll": lambda x, w, v, y: F_.nll_loss(x, y), "cross_entropy": lambda x, w, v, y: F_.cross_entropy(x, y),
        "bce": lambda x, w, v, y: F_.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid()),
        "bce_logits": lambda x, w, v, y: F_.binary_cross_entropy_with_logits(x, x.detach().sigmoid()),
        "layer_norm": lambda x, w, v, y: F_.layer_norm(x, (4,), v, v),
        "batch_norm": lambda x, w, v, y: F_.batch_norm(x, None, None, v, v, training=True),
        "sort": lambda x, w, v, y: x.sort(1).values, "topk": lambda x, w, v, y: x.topk(2).values,
        "clone": lambda x, w, v, y: x.clone(), "to": lambda x, w, v, y: x.double(),
        "t": lambda x, w, v, y: x.t(), "t_1d": lambda x, w, v, y: (v * 1).t(), "T": lambda x, w, v, y: x.T,
        "rsub": lambda x, w, v, y: 1 - x, "rsub_tensor": lambda x, w, v, y: lib.rsub(x, v),
        "rdiv": lambda x, w, v, y: 2 / x, "squeeze": lambda x, w, v, y: x.unsqueeze(0).squeeze(),
        "squeeze_dim": lambda x, w, v, y: x.unsqueeze(0).squeeze(0),
        "squeeze_dims": lambda x, w, v, y: x.unsqueeze(0).squeeze((0, 1)),
        "outer": lambda x, w, v, y: lib.outer(v, v * 2),
        "reshape_view": lambda x, w, v, y: x.reshape(4, 3),
        "reshape_alias": lambda x, w, v, y: x[:, :2].reshape(3, 2, 1),
        "reshape_copy": lambda x, w, v, y: x.t().reshape(-1), "flatten_copy": lambda x, w, v, y: x.t().flatten(),
        "expand_reshape": lambda x, w, v, y: v.unsqueeze(1).expand(4, 3).reshape(12),
        "unbind": lambda x, w, v, y: x.unbind(1)[2], "iterate": lambda x, w, v, y: list(x)[1],
        "split": lambda x, w, v, y: x.split(2)[1], "split_sizes": lambda x, w, v, y: x.split([1, 2])[0],
        "chunk": lambda x, w, v, y: x.chunk(2, 1)[1],
        "einsum_matmul": lambda x, w, v, y: lib.einsum("ij,jk->ik", x, w),
        "einsum_sum": lambda x, w, v, y: lib.einsum("ij->j", x),
        "einsum_permute": lambda x, w, v, y: lib.einsum("ij->ji", x),
        "einsum_product": lambda x, w, v, y: lib.einsum("i,j->ij", v, v),
        "einsum_dot": lambda x, w, v, y: lib.einsum("i,i->", v, v),
        "einsum_trace": lambda x, w, v, y: lib.einsum("ii", w),
        "einsum_three": lambda x, w, v, y: lib.einsum("ij,jk,k->i", x, w, v),
    }


# compared by the node alone: PyTorch's einsum reaches its result through permutes, views and
# bmm; its Addmm takes (bias, input, weight.t())
TOP_NODE_ONLY = ("linear", "einsum_")


def _chain(tensor, depth=2):
    """grad_fn's name and its next_functions' names, ``depth`` levels down (inputs without a
    gradient left out: PyTorch lists None for some, e.g. a float target, and nothing for others,
    e.g. an integer target)."""
    def names(node, level):
        if node is None:
            return None
        name = node.name().rsplit("::", 1)[-1]
        if level == 0:
            return name
        return (name, tuple(names(next_node, level - 1) for next_node, _ in node.next_functions
                            if next_node is not None))
    return names(tensor.grad_fn, depth)


def test_grad_fn_chains_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as torch_F
    values = np.random.default_rng(2).uniform(0.2, 1.0, size=(3, 4)).astype(np.float32)
    weights = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    vector = np.random.default_rng(4).standard_normal(4).astype(np.float32)
    ours = [vg.tensor(values, requires_grad=True), vg.tensor(weights, requires_grad=True),
            vg.tensor(vector, requires_grad=True), vg.tensor([0, 1, 2])]
    theirs = [torch.tensor(values, requires_grad=True), torch.tensor(weights, requires_grad=True),
              torch.tensor(vector, requires_grad=True), torch.tensor([0, 1, 2])]
    our_programs, their_programs = _graph_programs(vg, F), _graph_programs(torch, torch_F)
    for name, program in our_programs.items():
        ours_chain, theirs_chain = _chain(program(*ours)), _chain(their_programs[name](*theirs))
        if name.startswith(TOP_NODE_ONLY):
            ours_chain, theirs_chain = ours_chain[0], theirs_chain[0]
        assert ours_chain == theirs_chain, name


def test_grad_fn_names_fixed():
    x = vg.tensor([[1.0, 2.0]], requires_grad=True)
    loss = F.mse_loss(x, vg.zeros(1, 2))
    assert repr(loss) == "tensor(2.5000, grad_fn=<MseLossBackward0>)"
    assert [n.name() if n else None for n, _ in loss.grad_fn.next_functions] == ["AccumulateGrad", None]
    assert (x @ x.T).grad_fn.name() == "MmBackward0"

    class Cube(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a ** 3

        @staticmethod
        def backward(ctx, grad):
            return grad

    assert Cube.apply(x).grad_fn.name() == "CubeBackward"   # custom Functions: no number, as PyTorch


def test_grad_fn_names_of_pytorchs_own_compositions_fixed():
    """Where PyTorch computes one expression by another (``2 / x`` as ``x.reciprocal() * 2``,
    ``outer`` as a reshape times a vector), its names and chains; these strings are PyTorch's."""
    x = vg.ones(2, 3, requires_grad=True) * 2
    v = vg.ones(3, requires_grad=True)
    names = {
        "x.t()": x.t(), "1 - x": 1 - x, "2 / x": 2 / x, "x.squeeze()": x.squeeze(), "x.squeeze(0)": x.squeeze(0),
        "x.squeeze((0, 1))": x.squeeze((0, 1)), "outer": vg.outer(v, v),
        "einsum ij,jk->ik": vg.einsum("ij,jk->ik", x, x.t()), "einsum ij->": vg.einsum("ij->", x),
        "einsum i,j->ij": vg.einsum("i,j->ij", v, v),
        "x.t().reshape(-1)": x.t().reshape(-1), "x[:, :2].reshape(2, 2, 1)": x[:, :2].reshape(2, 2, 1),
        "x.unbind()": x.unbind()[0], "x.split(1)": x.split(1)[0], "x.split([1, 1])": x.split([1, 1])[0],
    }
    assert {label: repr(t.grad_fn) for label, t in names.items()} == {
        "x.t()": "<TBackward0>", "1 - x": "<RsubBackward1>", "2 / x": "<MulBackward0>",
        "x.squeeze()": "<SqueezeBackward0>", "x.squeeze(0)": "<SqueezeBackward1>",
        "x.squeeze((0, 1))": "<SqueezeBackward2>", "outer": "<MulBackward0>",
        "einsum ij,jk->ik": "<ViewBackward0>", "einsum ij->": "<SumBackward1>", "einsum i,j->ij": "<MulBackward0>",
        "x.t().reshape(-1)": "<UnsafeViewBackward0>", "x[:, :2].reshape(2, 2, 1)": "<ReshapeAliasBackward0>",
        "x.unbind()": "<UnbindBackward0>", "x.split(1)": "<SplitBackward0>",
        "x.split([1, 1])": "<SplitWithSizesBackward0>",
    }
    assert _chain(2 / x, 1) == ("MulBackward0", ("ReciprocalBackward0",))
    assert _chain(vg.outer(v, v), 1) == ("MulBackward0", ("ViewBackward0", "AccumulateGrad"))
    assert _chain(x.t().reshape(-1), 1) == ("UnsafeViewBackward0", ("CloneBackward0",))
    copied = x.t().reshape(-1)
    assert copied._base is None and x[:, :2].reshape(2, 2, 1)._base is x     # a copy is no view, as in PyTorch
    copied.add_(1)
    assert x._version == 0


def test_grad_fn_names_survive_backward():
    x = vg.ones(2, 3, requires_grad=True)
    product, power = x @ vg.ones(3, 2), x ** x
    names = (product.grad_fn.name(), power.grad_fn.name())
    (product.sum() + power.sum()).backward()                # frees the saved values the names were read from
    assert (product.grad_fn.name(), power.grad_fn.name()) == names == ("MmBackward0", "PowBackward1")
