"""The transformer's parts: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer``/``TransformerEncoder``, and PyTorch cross-checks of ``GELU``,
``Embedding``, ``LayerNorm`` and ``one_hot`` (whose values and gradchecks run from the op
registry). Values against a NumPy formula and gradcheck run without torch; PyTorch with
copied weights is the oracle when importable."""

import math

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.autograd.gradcheck import gradcheck
from vizgrad.errors import DTypeError, ShapeError

RNG = np.random.default_rng(18)


def t(array, requires_grad=False):
    return vg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def numpy_attention(q, k, v, mask=None, scale=None):
    scores = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    scores = scores - scores.max(-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(-1, keepdims=True)) @ v


def copy_weights(torch_module, module):
    ours = dict(module.named_parameters())
    assert list(ours) == [name for name, _ in torch_module.named_parameters()]
    with vg.no_grad():
        for name, p in torch_module.named_parameters():
            assert tuple(ours[name].shape) == tuple(p.shape), name
            ours[name].copy_(vg.tensor(p.detach().numpy()))


# --- scaled_dot_product_attention --------------------------------------------------------

Q, K, V = RNG.standard_normal((2, 3, 4, 6)), RNG.standard_normal((2, 3, 5, 6)), RNG.standard_normal((2, 3, 5, 2))
BOOL_MASK = RNG.random((4, 5)) > 0.3
BOOL_MASK[:, 0] = True
FLOAT_MASK = RNG.standard_normal((4, 5))


@pytest.mark.parametrize("mask, scale", [(None, None), (BOOL_MASK, None), (FLOAT_MASK, 0.25)],
                         ids=["plain", "bool mask", "float mask, scale"])
def test_sdpa_values_match_the_formula_and_pass_gradcheck(mask, scale):
    out = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=None if mask is None else vg.tensor(mask),
                                         scale=scale)
    np.testing.assert_allclose(out.numpy(), numpy_attention(Q, K, V, mask, scale), rtol=1e-12, atol=1e-14)
    small = [t(a[:1, :2, :3, :3], True) for a in (Q, K, V)]
    small_mask = None if mask is None else vg.tensor(mask[:3, :3])
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=small_mask, scale=scale),
                     small)


def test_sdpa_causal_equals_the_lower_triangular_bool_mask():
    q, k, v = t(Q), t(K[:, :, :4]), t(V[:, :, :4])
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    lower = np.tril(np.ones((4, 4), dtype=bool))
    np.testing.assert_allclose(causal.numpy(), numpy_attention(Q, K[:, :, :4], V[:, :, :4], lower), rtol=1e-12)
    np.testing.assert_allclose(causal.numpy()[..., 0, :], V[:, :, 0], rtol=1e-12)      # the first query sees one key


def test_sdpa_fully_masked_query_gets_zero_output_and_finite_gradients():
    mask = np.ones((4, 5), dtype=bool)
    mask[2] = False
    q = t(Q, True)
    out = F.scaled_dot_product_attention(q, t(K), t(V), attn_mask=vg.tensor(mask))
    assert (out.detach().numpy()[..., 2, :] == 0).all()
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and (q.grad.numpy()[..., 2, :] == 0).all()


def test_sdpa_dropout_and_grouped_query_heads():
    vg.manual_seed(0)
    ones = vg.ones(1, 1, 4, 4, dtype=vg.float64)
    dropped = F.scaled_dot_product_attention(ones, ones, vg.eye(4, dtype=vg.float64).reshape(1, 1, 4, 4),
                                             dropout_p=0.5)
    values = set(np.round(dropped.numpy().ravel(), 12))
    assert values <= {0.0, 0.5} and values == {0.0, 0.5}            # weights 1/4 dropped or scaled to 1/2
    grouped = F.scaled_dot_product_attention(t(Q), t(K[:, :1]), t(V[:, :1]), enable_gqa=True)
    np.testing.assert_allclose(grouped.numpy(), numpy_attention(Q, np.repeat(K[:, :1], 3, 1),
                                                                np.repeat(V[:, :1], 3, 1)), rtol=1e-12)


def test_sdpa_errors():
    q = vg.randn(2, 4, 6)
    with pytest.raises(ValueError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=vg.ones(4, 4, dtype=vg.bool), is_causal=True)
    with pytest.raises(ShapeError, match=r"same last dim.*query \(2, 4, 6\) and key \(2, 4, 5\)"):
        F.scaled_dot_product_attention(q, vg.randn(2, 4, 5), q)
    with pytest.raises(ShapeError, match=r"attn_mask of shape \(3, 3\) does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=vg.ones(3, 3, dtype=vg.bool))
    with pytest.raises(DTypeError, match="query must be floating point"):
        F.scaled_dot_product_attention(vg.ones(2, 2, dtype=vg.int64), q, q)


@pytest.mark.parametrize("options", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float", "scale": 0.3},
                                     {"enable_gqa": True}], ids=str)
def test_sdpa_matches_pytorch(options):
    torch = pytest.importorskip("torch")
    options = dict(options)
    mask = options.pop("mask", None)
    kv_heads = 1 if options.get("enable_gqa") else 3
    arrays = (Q, K[:, :kv_heads, :4], V[:, :kv_heads, :4])
    if mask is not None:
        options["attn_mask"] = (BOOL_MASK if mask == "bool" else FLOAT_MASK)[:, :4]
    ours = [t(a, True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*ours, **{k: vg.tensor(v) if isinstance(v, np.ndarray) else v
                                                   for k, v in options.items()})
    ref = torch.nn.functional.scaled_dot_product_attention(
        *theirs, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()})
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    (out ** 2).sum().backward()
    (ref ** 2).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


# --- MultiheadAttention ----------------------------------------------------------------

def test_mha_parameters_init_and_shapes():
    mha = nn.MultiheadAttention(8, 2)
    shapes = [(name, tuple(p.shape)) for name, p in mha.named_parameters()]
    assert shapes == [("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)),
                      ("out_proj.bias", (8,))]
    bound = math.sqrt(6 / (24 + 8))                                  # xavier_uniform over (3E, E)
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= bound
    assert (mha.in_proj_bias.detach().numpy() == 0).all() and (mha.out_proj.bias.detach().numpy() == 0).all()
    x = vg.randn(5, 3, 8)                                            # (L, N, E)
    out, weights = mha(x, x, x)
    assert tuple(out.shape) == (5, 3, 8) and tuple(weights.shape) == (3, 5, 5)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-5)
    out, per_head = mha(x[:, 0], x[:, 0], x[:, 0], average_attn_weights=False)      # unbatched
    assert tuple(out.shape) == (5, 8) and tuple(per_head.shape) == (2, 5, 5)
    separate = nn.MultiheadAttention(8, 2, kdim=3, vdim=4, bias=False, add_bias_kv=True)
    assert [n for n, _ in separate.named_parameters()] == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                            "bias_k", "bias_v", "out_proj.weight"]


def test_mha_matches_the_per_head_formula_and_passes_gradcheck():
    mha = nn.MultiheadAttention(4, 2, batch_first=True, dtype=vg.float64)
    x = RNG.standard_normal((1, 3, 4))
    w = mha.in_proj_weight.detach().numpy()
    out_w = mha.out_proj.weight.detach().numpy()
    q, k, v = (x @ w[i * 4:(i + 1) * 4].T for i in range(3))
    heads = [numpy_attention(q[..., h * 2:(h + 1) * 2], k[..., h * 2:(h + 1) * 2], v[..., h * 2:(h + 1) * 2])
             for h in range(2)]
    expected = np.concatenate(heads, -1) @ out_w.T
    out, _ = mha(t(x), t(x), t(x))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=vg.float64)
    assert gradcheck(lambda x, *p: mha(x, x, x, attn_mask=causal)[0], (t(x, True), *mha.parameters()))


MHA_CASES = [
    ({}, {}),
    ({"batch_first": True}, {"average_attn_weights": False}),
    ({}, {"need_weights": False, "key_padding_mask": "bool"}),
    ({"bias": False, "add_bias_kv": True, "add_zero_attn": True}, {"attn_mask": "float", "key_padding_mask": "float"}),
    ({"kdim": 3, "vdim": 5}, {"attn_mask": "bool per head"}),
    ({}, {"attn_mask": "causal", "is_causal": True}),
]


@pytest.mark.parametrize("options, call", MHA_CASES, ids=str)
def test_mha_matches_pytorch(options, call):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.MultiheadAttention(8, 2, **options).double()
    ours = nn.MultiheadAttention(8, 2, dtype=vg.float64, **options)
    copy_weights(theirs, ours)
    assert repr(ours) == repr(theirs)
    batch_first = options.get("batch_first", False)
    shapes = [(5, 2, 8), (6, 2, options.get("kdim", 8)), (6, 2, options.get("vdim", 8))]
    if call.get("is_causal"):
        shapes = [(5, 2, 8)] * 3
    if batch_first:
        shapes = [(s[1], s[0], s[2]) for s in shapes]
    arrays = [RNG.standard_normal(s) for s in shapes]
    source = shapes[1][1 if batch_first else 0]
    masks = {"bool": RNG.random((2, source)) > 0.7, "float": RNG.standard_normal((2, source)),
             "causal": np.triu(np.ones((5, 5), dtype=bool), 1), "bool per head": RNG.random((4, 5, source)) > 0.8}
    kwargs = {k: masks[v] if isinstance(v, str) else v for k, v in call.items()}
    if kwargs.get("attn_mask") is not None and call["attn_mask"] == "float":
        kwargs["attn_mask"] = RNG.standard_normal((5, source))
    mine = [t(a, True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    if call.get("is_causal"):
        mine, ref = [mine[0]] * 3, [ref[0]] * 3
    out, weights = ours(*mine, **{k: vg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    ref_out, ref_weights = theirs(*ref, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                                           for k, v in kwargs.items()})
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-12)
    assert (weights is None) == (ref_weights is None)
    loss, ref_loss = (out ** 2).sum(), (ref_out ** 2).sum()
    if weights is not None:
        np.testing.assert_allclose(weights.detach().numpy(), ref_weights.detach().numpy(), atol=1e-12)
        loss, ref_loss = loss + (weights ** 2).sum() * 3, ref_loss + (ref_weights ** 2).sum() * 3
    loss.backward()
    ref_loss.backward()
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-11)
    params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(params[name].grad.numpy(), p.grad.numpy(), atol=1e-11, err_msg=name)


def test_mha_errors():
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads, got embed_dim=10"):
        nn.MultiheadAttention(10, 3)
    mha = nn.MultiheadAttention(8, 2)
    x = vg.randn(5, 2, 8)
    with pytest.raises(ShapeError, match=r"attn_mask should have shape \(5, 5\) or \(4, 5, 5\), got \(5, 4\)"):
        mha(x, x, x, attn_mask=vg.zeros(5, 4))
    with pytest.raises(ShapeError, match=r"key_padding_mask should have shape \(2, 5\), got \(5, 2\)"):
        mha(x, x, x, key_padding_mask=vg.zeros(5, 2, dtype=vg.bool))
    with pytest.raises(ShapeError, match=r"expected key of feature size 8, got shape \(5, 2, 7\)"):
        mha(x, vg.randn(5, 2, 7), x)
    with pytest.raises(ValueError, match="need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(DTypeError, match="only bool and floating types of attn_mask"):
        mha(x, x, x, attn_mask=vg.zeros(5, 5, dtype=vg.int64))


# --- Transformer encoder ---------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"norm_first": True, "activation": "gelu", "batch_first": True}], ids=str)
def test_transformer_encoder_matches_pytorch(options):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **options).double(),
                                         2, enable_nested_tensor=False)
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=vg.float64, **options), 2)
    copy_weights(theirs, ours)
    assert repr(ours.layers[0]) == repr(theirs.layers[0])
    x = RNG.standard_normal((3, 5, 8) if options.get("batch_first") else (5, 3, 8))
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    mine, ref = t(x, True), torch.tensor(x, requires_grad=True)
    out = ours(mine, mask=vg.tensor(mask), is_causal=True)
    ref_out = theirs(ref, mask=torch.tensor(mask), is_causal=True)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-12)
    (out ** 3).sum().backward()
    (ref_out ** 3).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), atol=1e-10)


def test_encoder_layer_residual_structure_and_graph():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    for p in list(layer.self_attn.parameters()) + list(layer.linear2.parameters()):
        with vg.no_grad():
            p.zero_()
    x = vg.randn(2, 3, 8)
    np.testing.assert_allclose(layer(x).detach().numpy(), x.numpy(), atol=1e-6)    # both branches add zero
    with vg.trace() as tr:
        layer(x, src_mask=nn.Transformer.generate_square_subsequent_mask(3), is_causal=True).sum().backward()
    modules = {n.module for n in tr.graph.nodes if n.kind == "op"}
    assert {"self_attn", "self_attn.out_proj", "linear1", "linear2", "norm1", "norm2"} <= modules
    assert any(n.label == "Softmax" and n.module == "self_attn" for n in tr.graph.nodes)
    with pytest.raises(ValueError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


# --- GELU, Embedding, LayerNorm, one_hot against PyTorch -------------------------------

def test_gelu_embedding_layernorm_one_hot_match_pytorch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 4)) * 3
    for approximate in ("none", "tanh"):
        mine, ref = t(x, True), torch.tensor(x, requires_grad=True)
        out, ref_out = nn.GELU(approximate)(mine), torch.nn.GELU(approximate)(ref)
        np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-14)
        (out ** 2).sum().backward()
        (ref_out ** 2).sum().backward()
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), atol=1e-13)
    table = RNG.standard_normal((6, 3)) * 2
    index = np.array([[0, 2, 2], [5, 1, 0]])
    for options in ({"padding_idx": 2}, {"max_norm": 1.0}):
        ours = nn.Embedding.from_pretrained(t(table), freeze=False, **options)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=False, **options)
        out, ref_out = ours(vg.tensor(index)), theirs(torch.tensor(index))
        np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-14)
        (out * t(np.arange(18).reshape(2, 3, 3))).sum().backward()
        (ref_out * torch.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-14)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-14)
    norm, ref_norm = nn.LayerNorm(4, dtype=vg.float64), torch.nn.LayerNorm(4).double()
    copy_weights(ref_norm, norm)
    mine, ref = t(x, True), torch.tensor(x, requires_grad=True)
    out, ref_out = norm(mine), ref_norm(ref)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-12)
    (out ** 3).sum().backward()
    (ref_out ** 3).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), atol=1e-11)
    labels = np.array([[0, 3], [2, 1]])
    assert F.one_hot(vg.tensor(labels), 5).tolist() == torch.nn.functional.one_hot(torch.tensor(labels), 5).tolist()
    assert F.one_hot(vg.tensor(labels)).dtype == vg.int64


def test_attention_runs_on_every_backend_with_the_cpu_values(backend):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=vg.float64)
    x = RNG.standard_normal((2, 5, 8))
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, 3:] = True
    results = []
    for device in ("cpu", backend):
        layer.to(device)
        inputs = vg.tensor(x, device=device, requires_grad=True)
        out = layer(inputs, src_mask=nn.Transformer.generate_square_subsequent_mask(5, device=device,
                                                                                    dtype=vg.float64),
                    src_key_padding_mask=vg.tensor(padding, device=device))
        sdpa = F.scaled_dot_product_attention(inputs, inputs, inputs, is_causal=True)
        (out.sum() + sdpa.sum()).backward()
        results.append([out.detach().cpu().numpy(), sdpa.detach().cpu().numpy(), inputs.grad.cpu().numpy()])
    for ours, reference in zip(*results):
        np.testing.assert_allclose(ours, reference, rtol=1e-8, atol=1e-12)


def test_mha_drops_attention_weights_only_in_training():
    vg.manual_seed(3)
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True, dtype=vg.float64)
    x = t(RNG.standard_normal((2, 6, 8)))
    _, first = mha(x, x, x, average_attn_weights=False)
    _, second = mha(x, x, x, average_attn_weights=False)
    kept = first.detach().numpy()
    assert (kept == 0).any() and not np.allclose(kept, second.detach().numpy())
    assert np.allclose(kept.sum(-1).mean(), 1.0, atol=0.3)         # kept weights are scaled by 1/(1-p)
    mha.eval()
    _, weights = mha(x, x, x)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")      # PyTorch's fast-path notice
@pytest.mark.parametrize("options", [{}, {"norm_first": True, "batch_first": True, "activation": "gelu"}], ids=str)
def test_encoder_decoder_transformer_matches_pytorch(options):
    torch = pytest.importorskip("torch")
    sizes = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=12, dropout=0.0)
    theirs = torch.nn.Transformer(**sizes, **options).double()
    ours = nn.Transformer(**sizes, dtype=vg.float64, **options)
    copy_weights(theirs, ours)
    batch_first = options.get("batch_first", False)
    src = RNG.standard_normal((2, 6, 8) if batch_first else (6, 2, 8))
    tgt = RNG.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    padding = np.zeros((2, 6), dtype=bool)
    padding[0, 4:] = True
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    mine = [t(src, True), t(tgt, True)]
    ref = [torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True)]
    out = ours(*mine, tgt_mask=vg.tensor(causal), src_key_padding_mask=vg.tensor(padding),
               memory_key_padding_mask=vg.tensor(padding), tgt_is_causal=True)
    ref_out = theirs(*ref, tgt_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(padding),
                     memory_key_padding_mask=torch.tensor(padding), tgt_is_causal=True)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), atol=1e-12)
    (out ** 3).sum().backward()
    (ref_out ** 3).sum().backward()
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


def test_transformer_init_shapes_and_errors():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12,
                           batch_first=True)
    bound = math.sqrt(6 / (12 + 8))                          # xavier_uniform of linear1's (12, 8) weight
    weight = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.8 * bound
    assert [type(m).__name__ for m in (model.encoder.norm, model.decoder.norm)] == ["LayerNorm", "LayerNorm"]
    out = model(vg.randn(2, 6, 8), vg.randn(2, 3, 8), tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
    assert tuple(out.shape) == (2, 3, 8)
    with pytest.raises(ShapeError, match="batch number of src and tgt must be equal"):
        model(vg.randn(2, 6, 8), vg.randn(3, 3, 8))
    with pytest.raises(ShapeError, match="feature number of src and tgt must be equal to d_model=8"):
        model(vg.randn(2, 6, 8), vg.randn(2, 3, 4))
    np.testing.assert_array_equal(nn.Transformer.generate_square_subsequent_mask(3).numpy(),
                                  [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
