"""A corpus of classic wrong backward passes: each written as a learner would (NumPy on the
forward pass's values), checked with vizgrad.tutor.compare, which must find the tensor where
the mistake is (the first wrong one in backward order) and name its kind."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import tutor
from vizgrad.nn import functional as F

CASES = []


def case(name, kind):
    """Register a corpus case: the function returns compare's report; ``name`` is the
    tensor at fault and ``kind`` the mistake's code."""
    def register(function):
        CASES.append(pytest.param(function, name, kind, id=function.__name__))
        return function
    return register


def leaf(*shape, seed=0, scale=1.0):
    return vg.tensor(np.random.default_rng(seed).standard_normal(shape) * scale, requires_grad=True)


def data(*shape, seed=1):
    return vg.tensor(np.random.default_rng(seed).standard_normal(shape))


def values(tensor):
    return tensor.detach().numpy().astype(np.float64)


def weighted(out, seed=7):
    """A loss that sends a different gradient to every element of ``out``: sum(out * G)."""
    g = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    return (out * vg.tensor(g)).sum(), g


# --- matmul ----------------------------------------------------------------------------
def _matmul(square=False):
    A = leaf(3, 3, seed=1) if square else leaf(4, 3, seed=1)
    B = leaf(3, 3, seed=2) if square else leaf(3, 5, seed=2)
    C = A @ B
    loss, dC = weighted(C)
    return A, B, C, loss, dC


@case("A", "transposed")
def matmul_dA_transposed():
    A, B, C, loss, dC = _matmul()
    return tutor.compare(loss, {"C": dC, "A": values(B) @ dC.T})


@case("B", "transposed")
def matmul_dB_transposed():
    A, B, C, loss, dC = _matmul()
    return tutor.compare(loss, {"C": dC, "B": dC.T @ values(A), "A": dC @ values(B).T})


@case("B", "wrong_sign")
def matmul_dB_sign():
    A, B, C, loss, dC = _matmul()
    return tutor.compare(loss, {"C": dC, "B": -values(A).T @ dC})


@case("A", "transposed")
def matmul_square_dA_untransposed_factor():
    A, B, C, loss, dC = _matmul(square=True)
    return tutor.compare(loss, {"C": dC, "A": dC @ values(B)})


@case("B", "transposed")
def matmul_square_dB_untransposed_factor():
    A, B, C, loss, dC = _matmul(square=True)
    return tutor.compare(loss, {"C": dC, "B": values(A) @ dC})


@case("B", "scaled")
def matmul_dB_divided():
    A, B, C, loss, dC = _matmul()
    return tutor.compare(loss, {"C": dC, "B": values(A).T @ dC / 4})


@case("A", "wrong_shape")
def matmul_dA_wrong_product():
    A, B, C, loss, dC = _matmul()
    return tutor.compare(loss, {"A": values(A).T @ dC})


# --- broadcasting ------------------------------------------------------------------------
@case("b", "missing_broadcast_sum")
def bias_not_summed():
    x, W, b = data(6, 3), leaf(3, 4), leaf(4, seed=3)
    y = x @ W + b
    loss, dy = weighted(y)
    return tutor.compare(loss, {"y": dy, "W": values(x).T @ dy, "b": dy})


@case("b", "wrong_shape")
def bias_row_without_keepdim():
    x, W, b = data(6, 3), leaf(3, 4), leaf(1, 4, seed=3)
    y = x @ W + b
    loss, dy = weighted(y)
    return tutor.compare(loss, {"y": dy, "b": dy.sum(0)})


@case("b", "wrong_shape")
def bias_summed_over_wrong_axis():
    x, W, b = data(6, 3), leaf(3, 4), leaf(4, seed=3)
    y = x @ W + b
    loss, dy = weighted(y)
    return tutor.compare(loss, {"b": dy.sum(1)})


@case("s", "missing_broadcast_sum")
def column_scale_not_summed():
    x, s = data(4, 5), leaf(4, 1, seed=2)
    y = x * s
    loss, dy = weighted(y)
    return tutor.compare(loss, {"s": dy * values(x)})


@case("a", "missing_broadcast_sum")
def scalar_scale_not_summed():
    x, a = data(4, 5), leaf(seed=2)
    y = x * a
    loss, dy = weighted(y)
    return tutor.compare(loss, {"a": dy * values(x)})


@case("b", "missing_broadcast_sum")
def bias_not_summed_and_wrong_sign():
    x, b = data(6, 4), leaf(4, seed=3)
    y = x - b
    loss, dy = weighted(y)
    report = tutor.compare(loss, {"b": dy})
    assert "wrong_sign" in report.message        # summed, it would still have the wrong sign
    return report


# --- softmax and cross-entropy -------------------------------------------------------------
def _softmax():
    z = leaf(4, 5, seed=4)
    p = vg.softmax(z, dim=1)
    loss, dp = weighted(p)
    return z, p, loss, dp, values(p)


@case("z", "other")
def softmax_without_the_subtraction():
    z, p, loss, dp, P = _softmax()
    return tutor.compare(loss, {"p": dp, "z": P * dp})


@case("z", "other")
def softmax_diagonal_only():
    z, p, loss, dp, P = _softmax()
    return tutor.compare(loss, {"z": dp * P * (1 - P)})


@case("z", "wrong_sign")
def softmax_sign():
    z, p, loss, dp, P = _softmax()
    right = P * (dp - (dp * P).sum(1, keepdims=True))
    return tutor.compare(loss, {"p": dp, "z": -right})


def _cross_entropy(scale=1.0):
    logits = leaf(8, 5, seed=5, scale=scale)
    y = vg.tensor(np.array([0, 1, 2, 3, 4, 0, 1, 2]))
    loss = F.cross_entropy(logits, y)
    onehot = np.eye(5)[y.numpy()]
    return logits, loss, onehot


def _softmax_np(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@case("logits", "scaled")
def cross_entropy_missing_mean():
    logits, loss, onehot = _cross_entropy()
    report = tutor.compare(loss, {"logits": _softmax_np(values(logits)) - onehot})
    assert "division by 8 is missing" in report.message
    return report


@case("logits", "wrong_sign")
def cross_entropy_sign():
    logits, loss, onehot = _cross_entropy()
    return tutor.compare(loss, {"logits": (onehot - _softmax_np(values(logits))) / 8})


@case("logits", "other")
def cross_entropy_without_the_target():
    logits, loss, onehot = _cross_entropy()
    return tutor.compare(loss, {"logits": _softmax_np(values(logits)) / 8})


@case("logits", "scaled")
def cross_entropy_divided_twice():
    logits, loss, onehot = _cross_entropy()
    report = tutor.compare(loss, {"logits": (_softmax_np(values(logits)) - onehot) / 64})
    assert "divided by 8 once too often" in report.message
    return report


@case("logits", "nan")
def cross_entropy_naive_softmax_overflows():
    logits, loss, onehot = _cross_entropy(scale=1000.0)
    z = values(logits)
    with np.errstate(all="ignore"):
        naive = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    return tutor.compare(loss, {"logits": (naive - onehot) / 8})


@case("p", "nan")
def log_of_zero_probability():
    p = vg.tensor(np.array([0.5, 0.25, 0.25, 0.0]), requires_grad=True)
    loss = (p * vg.tensor([1.0, 2.0, 3.0, 0.0])).sum()
    with np.errstate(all="ignore"):
        wrong = values(p) * np.array([1.0, 2.0, 3.0, 0.0]) / values(p)   # dividing by p to "simplify"
    return tutor.compare(loss, {"p": wrong})


# --- layer norm and batch norm (the library's ops) ----------------------------------------------
def _layer_norm():
    x, g, b = leaf(4, 6, seed=6), leaf(6, seed=7), leaf(6, seed=8)
    y = F.layer_norm(x, (6,), g, b)
    loss, dy = weighted(y)
    X = values(x)
    xhat = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5)
    return x, g, b, y, loss, dy, xhat


@case("g", "missing_broadcast_sum")
def layer_norm_gain_not_summed():
    x, g, b, y, loss, dy, xhat = _layer_norm()
    return tutor.compare(loss, {"y": dy, "g": dy * xhat, "b": dy.sum(0)})


@case("b", "wrong_shape")
def layer_norm_bias_summed_over_features():
    x, g, b, y, loss, dy, xhat = _layer_norm()
    return tutor.compare(loss, {"b": dy.sum(1)})


@case("x", "other")
def layer_norm_input_without_the_mean_terms():
    x, g, b, y, loss, dy, xhat = _layer_norm()
    sigma = np.sqrt(values(x).var(1, keepdims=True) + 1e-5)
    return tutor.compare(loss, {"g": (dy * xhat).sum(0), "x": dy * values(g) / sigma})


def _batch_norm():
    x, g, b = leaf(8, 3, seed=9), leaf(3, seed=10), leaf(3, seed=11)
    y = F.batch_norm(x, None, None, g, b, training=True)
    loss, dy = weighted(y)
    X = values(x)
    xhat = (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-5)
    return x, g, b, loss, dy, xhat


@case("b", "missing_broadcast_sum")
def batch_norm_bias_not_summed():
    x, g, b, loss, dy, xhat = _batch_norm()
    return tutor.compare(loss, {"g": (dy * xhat).sum(0), "b": dy})


@case("g", "wrong_sign")
def batch_norm_gain_sign():
    x, g, b, loss, dy, xhat = _batch_norm()
    return tutor.compare(loss, {"g": -(dy * xhat).sum(0)})


@case("x", "other")
def batch_norm_input_as_if_statistics_were_constant():
    x, g, b, loss, dy, xhat = _batch_norm()
    return tutor.compare(loss, {"x": dy * values(g) / np.sqrt(values(x).var(0) + 1e-5)})


# --- activations ---------------------------------------------------------------------------
def _activation(function):
    x = leaf(5, 4, seed=12)
    y = function(x)
    loss, dy = weighted(y)
    return x, y, loss, dy, values(x), values(y)


@case("x", "used_output_for_input")
def tanh_with_the_input():
    x, y, loss, dy, X, Y = _activation(vg.tanh)
    return tutor.compare(loss, {"y": dy, "x": (1 - X ** 2) * dy})


@case("x", "other")
def tanh_without_the_upstream_gradient():
    x, y, loss, dy, X, Y = _activation(vg.tanh)
    report = tutor.compare(loss, {"x": 1 - Y ** 2})
    assert "not multiplied by the gradient arriving from above" in report.message
    return report


@case("x", "wrong_sign")
def tanh_sign():
    x, y, loss, dy, X, Y = _activation(vg.tanh)
    return tutor.compare(loss, {"x": (Y ** 2 - 1) * dy})


@case("x", "used_output_for_input")
def sigmoid_with_the_input():
    x, y, loss, dy, X, Y = _activation(vg.sigmoid)
    return tutor.compare(loss, {"x": X * (1 - X) * dy})


@case("x", "other")
def sigmoid_derivative_as_the_output():
    x, y, loss, dy, X, Y = _activation(vg.sigmoid)
    return tutor.compare(loss, {"x": Y * dy})


@case("x", "used_output_for_input")
def exp_with_the_input():
    x, y, loss, dy, X, Y = _activation(vg.exp)
    return tutor.compare(loss, {"x": X * dy})


@case("x", "other")
def relu_mask_from_the_wrong_side():
    x, y, loss, dy, X, Y = _activation(vg.relu)
    return tutor.compare(loss, {"x": dy * (X < 0)})


@case("x", "scaled")
def square_without_the_two():
    x, y, loss, dy, X, Y = _activation(lambda t: t ** 2)
    return tutor.compare(loss, {"x": X * dy})


@case("x", "not_accumulated")
def product_with_itself_one_use():
    x = leaf(5, seed=13)
    y = x * x
    loss, dy = weighted(y)
    return tutor.compare(loss, {"y": dy, "x": values(x) * dy})


# --- embedding, conv, attention, pooling ------------------------------------------------------
@case("C", "not_accumulated")
def embedding_rows_overwritten():
    C = leaf(6, 3, seed=14)
    idx = vg.tensor(np.array([[1, 2, 1], [4, 1, 2]]))
    emb = F.embedding(idx, C)
    loss, demb = weighted(emb)
    dC = np.zeros((6, 3))
    for k, i in enumerate(idx.numpy().reshape(-1)):
        dC[i] = demb.reshape(-1, 3)[k]
    return tutor.compare(loss, {"emb": demb, "C": dC})


@case("C", "wrong_shape")
def embedding_gradient_left_per_lookup():
    C = leaf(6, 3, seed=14)
    idx = vg.tensor(np.array([1, 2, 4]))
    emb = F.embedding(idx, C)
    loss, demb = weighted(emb)
    return tutor.compare(loss, {"C": demb})


def _conv():
    x, w, b = data(2, 1, 6, 6), leaf(3, 1, 3, 3, seed=15), leaf(3, seed=16)
    y = F.conv2d(x, w, b)
    loss, dy = weighted(y)
    X = values(x)
    dw = np.zeros((3, 1, 3, 3))
    for i in range(3):
        for j in range(3):
            dw[:, 0, i, j] = np.einsum("nohw,nhw->o", dy, X[:, 0, i:i + 4, j:j + 4])
    return x, w, b, loss, dy, dw


@case("w", "other")
def conv_kernel_flipped():
    x, w, b, loss, dy, dw = _conv()
    return tutor.compare(loss, {"w": dw[:, :, ::-1, ::-1], "b": dy.sum((0, 2, 3))})


@case("b", "wrong_shape")
def conv_bias_summed_over_batch_only():
    x, w, b, loss, dy, dw = _conv()
    return tutor.compare(loss, {"w": dw, "b": dy.sum(0)})


@case("w", "scaled")
def conv_kernel_averaged_over_batch():
    x, w, b, loss, dy, dw = _conv()
    report = tutor.compare(loss, {"w": dw / 2, "b": dy.sum((0, 2, 3))})
    assert "divided by 2" in report.message
    return report


@case("w", "wrong_sign")
def conv_kernel_sign():
    x, w, b, loss, dy, dw = _conv()
    return tutor.compare(loss, {"w": -dw})


def _attention():
    q, k, v = leaf(4, 3, seed=17), leaf(4, 3, seed=18), leaf(4, 3, seed=19)
    scores = q @ k.T / float(np.sqrt(3))
    p = vg.softmax(scores, dim=-1)
    out = p @ v
    loss, dout = weighted(out)
    P, K, V = values(p), values(k), values(v)
    dp = dout @ V.T
    dscores = P * (dp - (dp * P).sum(1, keepdims=True))
    return q, k, v, scores, p, out, loss, dout, P, K, dscores


@case("v", "transposed")
def attention_values_with_p_untransposed():
    q, k, v, scores, p, out, loss, dout, P, K, dscores = _attention()
    return tutor.compare(loss, {"out": dout, "v": P @ dout})


@case("q", "scaled")
def attention_query_without_the_scale():
    q, k, v, scores, p, out, loss, dout, P, K, dscores = _attention()
    return tutor.compare(loss, {"v": P.T @ dout, "scores": dscores, "q": dscores @ K})


@case("scores", "other")
def attention_softmax_without_the_subtraction():
    q, k, v, scores, p, out, loss, dout, P, K, dscores = _attention()
    return tutor.compare(loss, {"p": dout @ values(v).T, "scores": P * (dout @ values(v).T)})


def _max_pool():
    x = leaf(1, 1, 4, 4, seed=20)
    y = F.max_pool2d(x, 2)
    loss, dy = weighted(y)
    return x, loss, dy, values(x)


@case("x", "other")
def max_pool_spread_evenly():
    x, loss, dy, X = _max_pool()
    return tutor.compare(loss, {"x": np.kron(dy, np.ones((2, 2))) / 4})


@case("x", "other")
def max_pool_to_the_first_of_each_window():
    x, loss, dy, X = _max_pool()
    wrong = np.zeros_like(X)
    wrong[..., ::2, ::2] = dy
    return tutor.compare(loss, {"x": wrong})


@case("s", "missing_broadcast_sum")
def scalar_gradient_not_reduced():
    x = leaf(3, 4, seed=21)
    y = x.mean(1, keepdim=True)
    s = vg.tensor(1.0, requires_grad=True)
    loss = (y * s).sum()
    return tutor.compare(loss, {"s": values(y)})


# --- makemore's "backprop ninja" (a 2-layer MLP with BatchNorm, by hand) --------------------------
def _makemore_forward():
    rng = np.random.default_rng(42)
    vocab, block, n_embd, hidden, n = 7, 3, 4, 10, 8

    def parameter(*shape, scale=1.0):
        return vg.tensor(rng.standard_normal(shape) * scale, requires_grad=True)

    C, W1, b1 = parameter(vocab, n_embd), parameter(n_embd * block, hidden, scale=0.3), parameter(hidden, scale=0.1)
    W2, b2 = parameter(hidden, vocab, scale=0.3), parameter(vocab, scale=0.1)
    bngain, bnbias = parameter(1, hidden, scale=0.1) + 1.0, parameter(1, hidden, scale=0.1)
    bngain, bnbias = bngain.detach().requires_grad_(), bnbias.detach().requires_grad_()
    Xb = vg.tensor(rng.integers(0, vocab, (n, block)))
    Yb = vg.tensor(rng.integers(0, vocab, (n,)))
    emb = F.embedding(Xb, C)
    embcat = emb.view(n, -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = vg.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdim=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    return {name: value for name, value in locals().items() if isinstance(value, vg.Tensor)}, n


def _makemore_backward(t, n, mistake=None):
    """Karpathy's manual backward pass, in NumPy; ``mistake`` swaps one line for a classic wrong one."""
    v = {name: values(tensor) for name, tensor in t.items()}
    Yb, Xb = t["Yb"].numpy(), t["Xb"].numpy()
    g = {}
    g["logprobs"] = np.zeros_like(v["logprobs"])
    g["logprobs"][range(n), Yb] = {"no_mean": -1.0, "sign": 1.0 / n}.get(mistake, -1.0 / n)
    g["probs"] = {"probs_times": v["probs"] * g["logprobs"],
                  "probs_over_output": g["logprobs"] / v["logprobs"]}.get(mistake, g["logprobs"] / v["probs"])
    g["counts_sum_inv"] = (v["counts"] * g["probs"]) if mistake == "csi_unsummed" else \
        (v["counts"] * g["probs"]).sum(1, keepdims=True)
    g["counts"] = v["counts_sum_inv"] * g["probs"]
    g["counts_sum"] = (1 if mistake == "cs_sign" else -1) * v["counts_sum"] ** -2 * g["counts_sum_inv"]
    if mistake != "counts_overwritten":
        g["counts"] = g["counts"] + np.ones_like(v["counts"]) * g["counts_sum"]
    g["norm_logits"] = (v["norm_logits"] if mistake == "exp_input" else v["counts"]) * g["counts"]
    g["logit_maxes"] = (-g["norm_logits"]).sum(1, keepdims=True)
    g["logits"] = g["norm_logits"] + np.eye(v["logits"].shape[1])[v["logits"].argmax(1)] * g["logit_maxes"]
    g["h"] = g["logits"] @ v["W2"].T
    g["W2"] = (g["logits"].T @ v["h"]) if mistake == "dW2_transposed" else v["h"].T @ g["logits"]
    g["b2"] = g["logits"] if mistake == "db2_unsummed" else g["logits"].sum(0)
    g["hpreact"] = {"tanh_input": (1 - v["hpreact"] ** 2) * g["h"],
                    "tanh_local_only": 1 - v["h"] ** 2}.get(mistake, (1 - v["h"] ** 2) * g["h"])
    g["bngain"] = (v["bnraw"] * g["hpreact"]).sum(0, keepdims=mistake != "bngain_keepdim")
    g["bnraw"] = v["bngain"] * g["hpreact"]
    g["bnbias"] = g["hpreact"] if mistake == "bnbias_unsummed" else g["hpreact"].sum(0, keepdims=True)
    g["bndiff"] = v["bnvar_inv"] * g["bnraw"]
    g["bnvar_inv"] = (v["bndiff"] * g["bnraw"]) if mistake == "bnvar_inv_unsummed" else \
        (v["bndiff"] * g["bnraw"]).sum(0, keepdims=True)
    g["bnvar"] = (0.5 if mistake == "bnvar_sign" else -0.5) * (v["bnvar"] + 1e-5) ** -1.5 * g["bnvar_inv"]
    g["bndiff2"] = (1.0 / (n if mistake == "bessel" else n - 1)) * np.ones_like(v["bndiff2"]) * g["bnvar"]
    if mistake != "bndiff_overwritten":
        g["bndiff"] = g["bndiff"] + 2 * v["bndiff"] * g["bndiff2"]
    g["hprebn"] = g["bndiff"].copy()
    g["bnmeani"] = (-g["bndiff"]).sum(0, keepdims=True)
    if mistake != "mean_path_forgotten":
        g["hprebn"] = g["hprebn"] + 1.0 / n * (np.ones_like(v["hprebn"]) * g["bnmeani"])
    g["embcat"] = g["hprebn"] @ v["W1"].T
    g["W1"] = (g["hprebn"].T @ v["embcat"]) if mistake == "dW1_transposed" else v["embcat"].T @ g["hprebn"]
    g["b1"] = g["hprebn"].sum(1 if mistake == "db1_axis" else 0)
    if mistake == "dh_transposed":            # computed as W2 @ dlogits.T (the rest from the right one)
        g["h"] = v["W2"] @ g["logits"].T
    g["emb"] = g["embcat"].reshape(v["emb"].shape)
    g["C"] = np.zeros_like(v["C"])
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            if mistake == "dC_overwritten":
                g["C"][Xb[k, j]] = g["emb"][k, j]
            else:
                g["C"][Xb[k, j]] += g["emb"][k, j]
    return g


MAKEMORE = [("no_mean", "logprobs", "scaled"), ("sign", "logprobs", "wrong_sign"),
            ("probs_times", "probs", "other"), ("probs_over_output", "probs", "used_output_for_input"),
            ("csi_unsummed", "counts_sum_inv", "missing_broadcast_sum"), ("cs_sign", "counts_sum", "wrong_sign"),
            ("counts_overwritten", "counts", "not_accumulated"), ("exp_input", "norm_logits", "used_output_for_input"),
            ("dh_transposed", "h", "transposed"), ("dW2_transposed", "W2", "transposed"),
            ("db2_unsummed", "b2", "missing_broadcast_sum"), ("tanh_input", "hpreact", "used_output_for_input"),
            ("tanh_local_only", "hpreact", "other"), ("bngain_keepdim", "bngain", "wrong_shape"),
            ("bnbias_unsummed", "bnbias", "missing_broadcast_sum"),
            ("bnvar_inv_unsummed", "bnvar_inv", "missing_broadcast_sum"), ("bnvar_sign", "bnvar", "wrong_sign"),
            ("bessel", "bndiff2", "scaled"), ("bndiff_overwritten", "bndiff", "not_accumulated"),
            ("mean_path_forgotten", "hprebn", "not_accumulated"), ("dW1_transposed", "W1", "transposed"),
            ("db1_axis", "b1", "wrong_shape"), ("dC_overwritten", "C", "not_accumulated")]


@pytest.fixture(scope="module")
def makemore():
    return _makemore_forward()


def test_makemore_reference_backward_is_right(makemore):
    tensors, n = makemore
    grads = _makemore_backward(tensors, n)
    report = tutor.compare(tensors["loss"], {tensors[name]: grad for name, grad in grads.items()}, names=tensors)
    assert report.ok, str(report)
    assert len(report.rows) == len(grads)


@pytest.mark.parametrize("mistake, name, kind", MAKEMORE, ids=[m for m, _, _ in MAKEMORE])
def test_makemore_backprop_ninja(makemore, mistake, name, kind):
    tensors, n = makemore
    grads = _makemore_backward(tensors, n, mistake)
    report = tutor.compare(tensors["loss"], {tensors[key]: grad for key, grad in grads.items()}, names=tensors)
    assert not report.ok
    assert (report.first_wrong, report.kind) == (name, kind), str(report)
    assert report.highlight is not None and report.graph.node(report.highlight).label == name


@pytest.mark.parametrize("build, name, kind", CASES)
def test_corpus(build, name, kind):
    report = build()
    assert not report.ok
    assert (report.first_wrong, report.kind) == (name, kind), str(report)
    assert report.kind in tutor.KINDS


def test_the_corpus_has_at_least_fifty_mistakes():
    assert len(CASES) + len(MAKEMORE) >= 50
    covered = {kind for *_, kind in MAKEMORE} | {param.values[2] for param in CASES}
    assert covered == set(tutor.KINDS)
