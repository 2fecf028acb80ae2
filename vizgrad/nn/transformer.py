"""Transformers with PyTorch's names, built from ``MultiheadAttention``, ``Linear`` and
``LayerNorm``: ``TransformerEncoderLayer``/``TransformerDecoderLayer`` (post-norm or
pre-norm), ``TransformerEncoder``/``TransformerDecoder`` (stacks of copies), the
encoder-decoder ``Transformer`` and its causal-mask helper."""

import copy
import math

from .. import creation
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, check_range, check_size, format_shape
from ..tensor import Tensor
from . import functional as F
from . import init
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


def _activation(activation, owner):
    if not isinstance(activation, str):
        return activation
    if activation not in _ACTIVATIONS:
        raise ArgumentError(f"{owner}: activation should be relu/gelu, not {activation}")
    return _ACTIVATIONS[activation]


def _check_sizes(owner, d_model, nhead, dim_feedforward, dropout):
    """A layer's sizes and dropout, checked in its own name before its sublayers are built."""
    for name, size in (("d_model", d_model), ("nhead", nhead), ("dim_feedforward", dim_feedforward)):
        check_size(owner, name, size, 1)
    check_range(owner, "dropout", dropout, 0, 1)
    if d_model % nhead:
        raise ArgumentError(f"{owner}: d_model must be divisible by nhead, got d_model={d_model} and nhead={nhead}")


def _check_source(owner, src, d_model, dtype):
    """A layer's input, checked in its own name: (S, E) or (N, S, E), E = d_model, in the weights' dtype."""
    if not isinstance(src, Tensor):
        raise ArgumentTypeError(f"{owner}: src must be a Tensor, got {type(src).__name__}")
    if src.ndim not in (2, 3) or src.shape[-1] != d_model:
        raise ShapeError(f"{owner}: src should be unbatched 2D (S, E) or batched 3D with E = d_model = {d_model}, "
                         f"got shape {format_shape(src.shape)}")
    if src.dtype is not dtype:
        raise DTypeError(f"{owner}: src must have the type {dtype.name} of the layer's weights, got "
                         f"{src.dtype.name}; convert one with .to()")


def _stack(layer, num_layers, owner):
    if not isinstance(layer, Module):
        raise ArgumentTypeError(f"{owner}: the layer to stack must be a Module, got {type(layer).__name__}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


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
        _check_sizes("TransformerEncoderLayer", d_model, nhead, dim_feedforward, dropout)
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
        self.activation = _activation(activation, "TransformerEncoderLayer")

    def _attention_block(self, x, mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _feed_forward_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_source("TransformerEncoderLayer", src, self.self_attn.embed_dim, self.linear1.weight.dtype)
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
        self.layers = _stack(encoder_layer, num_layers, "TransformerEncoder")
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


class TransformerDecoderLayer(Module):
    """Masked self-attention, attention over the encoder's output (``memory``), then a
    two-layer MLP, each with a residual connection and LayerNorm (PyTorch's
    ``nn.TransformerDecoderLayer``; ``norm_first=True`` normalises before each block).

    Example::

        layer = nn.TransformerDecoderLayer(d_model=32, nhead=4, batch_first=True)
        layer(vizgrad.randn(2, 5, 32), vizgrad.randn(2, 7, 32)).shape      # (2, 5, 32)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **options)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **options)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **options)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **options)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerDecoderLayer")

    def _self_attention_block(self, x, mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _memory_attention_block(self, x, memory, mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _feed_forward_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._self_attention_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._memory_attention_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                                 memory_is_causal)
            return x + self._feed_forward_block(self.norm3(x))
        x = self.norm1(x + self._self_attention_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._memory_attention_block(x, memory, memory_mask, memory_key_padding_mask,
                                                        memory_is_causal))
        return self.norm3(x + self._feed_forward_block(x))


class TransformerDecoder(Module):
    """``num_layers`` independent copies of ``decoder_layer`` applied in turn to the target,
    each attending to ``memory``, then ``norm`` (optional)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                           memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """The encoder-decoder transformer of "Attention Is All You Need" (PyTorch's
    ``nn.Transformer``): ``encoder`` (a TransformerEncoder with a final LayerNorm) reads
    ``src``; ``decoder`` reads ``tgt`` and attends to the encoder's output. Every weight
    matrix starts Xavier-uniform, as PyTorch.

    Example::

        model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                               dim_feedforward=64, batch_first=True)
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(5)
        model(vizgrad.randn(2, 7, 32), vizgrad.randn(2, 5, 32), tgt_mask=tgt_mask).shape    # (2, 5, 32)
    """

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(device=device, dtype=dtype)
        layer_options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                             layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first,
                             bias=bias, **options)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **layer_options),
                                              num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **layer_options),
                                              num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **options))
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise ShapeError(f"Transformer: the batch number of src and tgt must be equal, got src of shape "
                             f"{format_shape(src.shape)} and tgt of shape {format_shape(tgt.shape)} "
                             f"(batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(f"Transformer: the feature number of src and tgt must be equal to d_model="
                             f"{self.d_model}, got src of shape {format_shape(src.shape)} and tgt of shape "
                             f"{format_shape(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)
