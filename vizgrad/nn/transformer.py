"""Transformer encoder blocks with PyTorch's names: ``TransformerEncoderLayer`` (post-norm
or pre-norm), ``TransformerEncoder`` (a stack of copies) and the causal-mask helper."""

import copy
import math

from .. import creation
from ..errors import ShapeError
from . import functional as F
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The (sz, sz) float causal mask: 0 on and below the diagonal, -inf above it (position i
    may attend to 0..i), to pass as ``attn_mask``/``mask``.

    Example::

        nn.Transformer.generate_square_subsequent_mask(3)
        # tensor([[0., -inf, -inf], [0., 0., -inf], [0., 0., 0.]])
    """
    return creation.full((sz, sz), -math.inf, dtype=dtype, device=device).triu(1)


class Transformer:
    """Only PyTorch's static ``nn.Transformer.generate_square_subsequent_mask`` (the full
    encoder-decoder model is not provided)."""

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("vizgrad has no nn.Transformer encoder-decoder model: build one from "
                                  "nn.TransformerEncoderLayer and nn.MultiheadAttention")


class TransformerEncoderLayer(Module):
    """Self-attention then a two-layer MLP, each with a residual connection and LayerNorm
    (PyTorch's ``nn.TransformerEncoderLayer``):

    post-norm (default): x = norm1(x + SA(x)); x = norm2(x + FF(x))
    pre-norm (``norm_first=True``): x = x + SA(norm1(x)); x = x + FF(norm2(x))

    FF(x) = linear2(dropout(activation(linear1(x)))); ``activation`` is "relu", "gelu" or a
    callable.

    Example::

        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, batch_first=True,
                                           norm_first=True)
        layer(vizgrad.randn(2, 10, 64), is_causal=True,
              src_mask=nn.Transformer.generate_square_subsequent_mask(10)).shape    # (2, 10, 64)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **options)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **options)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **options)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"TransformerEncoderLayer: activation should be relu/gelu, not {activation}")
            activation = _ACTIVATIONS[activation]
        self.activation = activation

    def _attention_block(self, x, mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _feed_forward_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._attention_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward_block(self.norm2(x))
        x = self.norm1(x + self._attention_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward_block(x))


class TransformerEncoder(Module):
    """``num_layers`` independent copies of ``encoder_layer`` applied in turn, then ``norm``
    (optional).

    Example::

        layer = nn.TransformerEncoderLayer(64, 4, batch_first=True)
        encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        encoder(vizgrad.randn(2, 10, 64)).shape      # (2, 10, 64)
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got "
                            f"{type(encoder_layer).__name__}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if mask is not None and mask.ndim not in (2, 3):
            raise ShapeError(f"TransformerEncoder: mask must be 2-D or 3-D, got shape {tuple(mask.shape)}")
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        return self.norm(output) if self.norm is not None else output
