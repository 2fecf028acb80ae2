"""Attention with PyTorch's names: ``F.scaled_dot_product_attention`` and
``nn.MultiheadAttention``.

Both are built from vizgrad ops (matmul, softmax, masked_fill, dropout), so the graph shows
the scores, the mask, the softmax and the weighted sum: what a learner looks at when
studying attention.

Mask conventions follow PyTorch, and they differ between the two (a classic trap):
``scaled_dot_product_attention`` takes a boolean ``attn_mask`` whose True entries may be
attended to; ``MultiheadAttention`` takes boolean ``attn_mask``/``key_padding_mask`` whose
True entries may NOT. Float masks are added to the scores in both.
"""

import math

from .. import creation
from ..autograd.grad_mode import no_grad
from ..errors import (ArgumentError, ArgumentTypeError, DTypeError, ShapeError, as_int, check_range, check_size,
                      format_shape)
from ..ops.activation import dropout as _dropout
from ..ops.activation import linear as _linear
from ..ops.activation import softmax as _softmax
from ..ops.joins import cat
from ..ops.padding import pad
from ..tensor import Tensor
from . import init
from .linear import Linear
from .module import Module, Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear of ``MultiheadAttention.out_proj``, under PyTorch's name (so reprs match)."""


def _causal_mask(target, source, device):
    """(target, source) booleans, True on and below the diagonal: position i sees 0..i."""
    return creation.ones(target, source, dtype="bool", device=device).tril()


def _attend(query, key, value, mask, dropout_p, scale, owner):
    """softmax(q kᵀ · scale + mask) and its product with v: the output and the weights.

    ``mask`` is None, a float tensor (added to the scores) or a boolean tensor (True where
    attention is allowed). A query that may attend to nothing gets zero weights (and a zero
    output), as PyTorch's ``scaled_dot_product_attention``, rather than NaN."""
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if mask is not None:
        if not isinstance(mask, Tensor):
            raise ArgumentTypeError(f"{owner}: attn_mask must be a Tensor or None, got {type(mask).__name__}")
        try:
            scores = scores.masked_fill(~mask, -math.inf) if mask.dtype.name == "bool" else scores + mask
        except ValueError:
            raise ShapeError(f"{owner}: attn_mask of shape {format_shape(mask.shape)} does not broadcast to the "
                             f"attention scores of shape {format_shape(scores.shape)} (..., L, S)") from None
        with no_grad():
            blocked_rows = (scores == -math.inf).all(-1, keepdim=True)
        if bool(blocked_rows.any()):
            weights = _softmax(scores.masked_fill(blocked_rows, 0.0), -1).masked_fill(blocked_rows, 0.0)
        else:
            weights = _softmax(scores, -1)
    else:
        weights = _softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p, True)
    return weights.matmul(value), weights


def _check_attention_inputs(owner, query, key, value):
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        if not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"{owner}: {name} must be a Tensor, got {type(tensor).__name__}")
        if not tensor.is_floating_point():
            raise DTypeError(f"{owner}: {name} must be floating point, got {tensor.dtype.name}")
        if tensor.ndim < 2:
            raise ShapeError(f"{owner}: {name} must have at least 2 dims (..., length, features), got shape "
                             f"{format_shape(tensor.shape)}")
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(f"{owner}: query and key must have the same last dim (embedding size), got query "
                         f"{format_shape(query.shape)} and key {format_shape(key.shape)}")
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"{owner}: key and value must have the same sequence length (dim -2), got key "
                         f"{format_shape(key.shape)} and value {format_shape(value.shape)}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(Q Kᵀ · scale + mask) V``, scale = 1/√E by default, over the last two dims of
    query (..., L, E), key (..., S, E) and value (..., S, Ev); returns (..., L, Ev).

    ``attn_mask``: boolean (True = may attend) or float (added to the scores), broadcastable
    to (..., L, S). ``is_causal=True`` lets position i attend to 0..i only (no ``attn_mask``
    then). ``dropout_p`` drops attention weights (always, as PyTorch: pass 0.0 in eval).
    ``enable_gqa`` lets key/value have fewer heads (dim -3) than query, each shared by a
    group of query heads.

    Example::

        q = k = v = vizgrad.randn(2, 4, 8, 16)          # (batch, heads, length, head dim)
        F.scaled_dot_product_attention(q, k, v, is_causal=True).shape     # (2, 4, 8, 16)
    """
    owner = "scaled_dot_product_attention"
    _check_attention_inputs(owner, query, key, value)
    if not 0.0 <= dropout_p <= 1.0:
        raise ArgumentError(f"{owner}: dropout_p must be in [0, 1], got {dropout_p}")
    if is_causal:
        if attn_mask is not None:
            raise ArgumentError(f"{owner}: explicit attn_mask should not be set when is_causal=True")
        attn_mask = _causal_mask(query.shape[-2], key.shape[-2], query.device)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if heads % kv_heads:
            raise ShapeError(f"{owner}: with enable_gqa the number of query heads ({heads}) must be a multiple "
                             f"of the key/value heads ({kv_heads})")
        group = heads // kv_heads          # each key/value head repeated for its group of query heads
        key, value = (t.unsqueeze(-3).expand(*t.shape[:-2], group, *t.shape[-2:])
                      .reshape(*t.shape[:-3], heads, *t.shape[-2:]) for t in (key, value))
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    return _attend(query, key, value, attn_mask, dropout_p, scale, owner)[0]


def _additive_mask(mask, name, dtype, owner):
    """A MultiheadAttention mask (boolean True = blocked, or float) as a float mask to add."""
    if mask is None:
        return None
    if mask.dtype.name == "bool":
        return creation.zeros(*mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not mask.is_floating_point():
        raise DTypeError(f"{owner}: only bool and floating types of {name} are supported, got {mask.dtype.name}")
    return mask


class MultiheadAttention(Module):
    """Multi-head attention as PyTorch's ``nn.MultiheadAttention``:
    ``concat(head₁..headₕ) W_outᵀ + b_out``, headᵢ = attention(Q W_qᵢᵀ, K W_kᵢᵀ, V W_vᵢᵀ).

    Parameters by PyTorch's names: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E)
    (``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ
    from E), ``out_proj`` (a Linear), ``bias_k``/``bias_v`` with ``add_bias_kv``.
    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``; inputs are
    (L, N, E), (N, L, E) with ``batch_first``, or unbatched (L, E). Boolean masks: True =
    not allowed.

    Example::

        mha = nn.MultiheadAttention(64, 4, batch_first=True)
        x = vizgrad.randn(2, 10, 64)
        out, weights = mha(x, x, x)       # (2, 10, 64), (2, 10, 10)
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        as_int("MultiheadAttention", "embed_dim", embed_dim)
        as_int("MultiheadAttention", "num_heads", num_heads)
        if embed_dim <= 0 or num_heads <= 0:
            raise ArgumentError(f"MultiheadAttention: embed_dim and num_heads must be greater than 0, got "
                                f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        for name, size in (("kdim", kdim), ("vdim", vdim)):
            if size is not None:
                check_size("MultiheadAttention", name, size, 1)
        check_range("MultiheadAttention", "dropout", dropout, 0, 1)
        if embed_dim % num_heads:
            raise ArgumentError(f"MultiheadAttention: embed_dim must be divisible by num_heads, got embed_dim="
                                f"{embed_dim} and num_heads={num_heads}")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.add_zero_attn = add_zero_attn
        options = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty(3 * embed_dim, embed_dim, **options))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(creation.empty(embed_dim, embed_dim, **options))
            self.k_proj_weight = Parameter(creation.empty(embed_dim, self.kdim, **options))
            self.v_proj_weight = Parameter(creation.empty(embed_dim, self.vdim, **options))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, **options))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **options)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty(1, 1, embed_dim, **options))
            self.bias_v = Parameter(creation.empty(1, 1, embed_dim, **options))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """Xavier-uniform projections, zero biases, Xavier-normal ``bias_k``/``bias_v``, as PyTorch."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self, query, key, value, self_attention):
        if self._qkv_same_embed_dim and self_attention:   # one matrix product for q, k and v
            return _linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, -1)
        biases = (None, None, None) if self.in_proj_bias is None else self.in_proj_bias.chunk(3)
        if self._qkv_same_embed_dim:
            weights = self.in_proj_weight.chunk(3)
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(_linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        owner = "MultiheadAttention"
        for name, tensor, size in (("query", query, self.embed_dim), ("key", key, self.kdim),
                                   ("value", value, self.vdim)):
            if not isinstance(tensor, Tensor):
                raise ArgumentTypeError(f"{owner}: {name} must be a Tensor, got {type(tensor).__name__}")
            if tensor.ndim not in (2, 3):
                raise ShapeError(f"{owner}: {name} should be unbatched 2D or batched 3D, got shape "
                                 f"{format_shape(tensor.shape)}")
            if tensor.shape[-1] != size:
                raise ShapeError(f"{owner}: expected {name} of feature size {size}, got shape "
                                 f"{format_shape(tensor.shape)}")
            if tensor.dtype is not self.out_proj.weight.dtype:
                raise DTypeError(f"{owner}: {name} must have the type {self.out_proj.weight.dtype.name} of the "
                                 f"layer's weights, got {tensor.dtype.name}; convert one with .to()")
        batched = query.ndim == 3
        self_attention = query is key and key is value
        if is_causal and attn_mask is None:
            raise ArgumentError(f"{owner}: need attn_mask if specifying the is_causal hint (e.g. "
                                f"nn.Transformer.generate_square_subsequent_mask(L))")
        if not batched:
            query, key, value = (t.unsqueeze(0) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:       # work batch-first: (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        batch, target, _ = query.shape
        source = key.shape[1]
        if key.shape[0] != batch or value.shape[:2] != key.shape[:2]:
            raise ShapeError(f"{owner}: key and value must have the same batch and sequence sizes as each other "
                             f"and the batch of query; got query {format_shape(query.shape)}, key "
                             f"{format_shape(key.shape)}, value {format_shape(value.shape)} (batch-first)")
        heads, head_dim = self.num_heads, self.head_dim
        dtype = query.dtype
        mask = _additive_mask(attn_mask, "attn_mask", dtype, owner)
        if mask is not None:
            expected = [(target, source), (batch * heads, target, source)]
            if tuple(mask.shape) not in expected:
                raise ShapeError(f"{owner}: attn_mask should have shape {format_shape(expected[0])} or "
                                 f"{format_shape(expected[1])}, got {format_shape(mask.shape)}")
            if mask.ndim == 3:
                mask = mask.reshape(batch, heads, target, source)
        padding = _additive_mask(key_padding_mask, "key_padding_mask", dtype, owner)
        if padding is not None and tuple(padding.shape) != (batch, source):
            raise ShapeError(f"{owner}: key_padding_mask should have shape {format_shape((batch, source))}, got "
                             f"{format_shape(padding.shape)}")
        q, k, v = self._projections(query, key, value, self_attention)
        if self.bias_k is not None:        # one learned key/value appended to every sequence
            k = cat([k, self.bias_k.expand(batch, 1, self.embed_dim)], 1)
            v = cat([v, self.bias_v.expand(batch, 1, self.embed_dim)], 1)
            mask = pad(mask, (0, 1)) if mask is not None else None
            padding = pad(padding, (0, 1)) if padding is not None else None
        if self.add_zero_attn:             # and a zero key/value
            k = cat([k, creation.zeros(batch, 1, self.embed_dim, dtype=k.dtype, device=k.device)], 1)
            v = cat([v, creation.zeros(batch, 1, self.embed_dim, dtype=v.dtype, device=v.device)], 1)
            mask = pad(mask, (0, 1)) if mask is not None else None
            padding = pad(padding, (0, 1)) if padding is not None else None
        if padding is not None:
            padding = padding.reshape(batch, 1, 1, padding.shape[-1])
            mask = padding if mask is None else mask + padding
        # (N, L, E) -> (N, heads, L, head_dim)
        q, k, v = (t.reshape(batch, t.shape[1], heads, head_dim).transpose(1, 2) for t in (q, k, v))
        dropout_p = self.dropout if self.training else 0.0
        output, weights = _attend(q, k, v, mask, dropout_p, 1.0 / math.sqrt(head_dim), owner)
        output = output.transpose(1, 2).reshape(batch, target, self.embed_dim)
        output = self.out_proj(output)
        if batched and not self.batch_first:
            output = output.transpose(0, 1)
        if not need_weights:
            weights = None
        elif average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            output = output.squeeze(0)
            weights = weights.squeeze(0) if weights is not None else None
        return output, weights
