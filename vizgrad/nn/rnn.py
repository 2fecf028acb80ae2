"""Recurrent layers with PyTorch's names, signatures and parameters: ``RNN``, ``LSTM``, ``GRU``
and their one-step cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

They are built from vizgrad ops (linear maps, sigmoid/tanh, elementwise products), so the
graph of a recurrent layer shows every time step's ops under the module, unrolled, and
replays like any other graph. A layer projects the inputs of all time steps in one matrix
product and takes the steps apart with ``unbind`` (one node, whose backward stacks the
steps' gradients in one op); each time step then projects the previous state and applies
the gates (the gate pieces come from one ``chunk``):

- RNN: ``h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)`` (or relu)
- LSTM: ``i, f, g, o = σ, σ, tanh, σ of the 4 chunks of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh``;
  ``c' = f ⊙ c + i ⊙ g``, ``h' = o ⊙ tanh(c')`` (times ``W_hrᵀ`` with ``proj_size``)
- GRU: ``r, z = σ(...)``, ``n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn))``,
  ``h' = (1 - z) ⊙ n + z ⊙ h``
"""

import math
import numbers
import warnings

from .. import creation
from ..autograd.scopes import step_scope
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, format_shape
from ..ops.joins import cat, stack
from . import functional as F
from . import init
from .module import Module, Parameter
from .utils.rnn import PackedSequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- one time step, shared by the layers and the cells ---------------------------------

def _rnn_step(x_proj, h, w_hh, b_hh, activation):
    return activation(x_proj + F.linear(h, w_hh, b_hh))


def _lstm_step(x_proj, state, w_hh, b_hh, w_hr):
    h, c = state
    i, f, g, o = (x_proj + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    h = F.sigmoid(o) * F.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(x_proj, h, w_hh, b_hh):
    x_r, x_z, x_n = x_proj.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = F.sigmoid(x_r + h_r)
    z = F.sigmoid(x_z + h_z)
    n = F.tanh(x_n + r * h_n)
    return n + z * (h - n)          # (1 - z) n + z h


def _activation(nonlinearity, owner):
    if nonlinearity == "tanh":
        return F.tanh
    if nonlinearity == "relu":
        return F.relu
    raise ArgumentError(f"{owner}: unknown nonlinearity {nonlinearity!r}. Select from 'tanh' or 'relu'.")


def _check_size(owner, name, value, minimum=1):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ArgumentTypeError(f"{owner}: {name} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        raise ArgumentError(f"{owner}: {name} must be at least {minimum}, got {value}")


def _check_input(owner, input, input_size, batched_dims, dtype):
    """The feature size of ``input`` and whether it is batched (``batched_dims`` dims)."""
    if input.ndim not in (batched_dims - 1, batched_dims):
        raise ShapeError(f"{owner}: expected input to be {batched_dims - 1}D or {batched_dims}D, got "
                         f"{input.ndim}D input of shape {format_shape(input.shape)}")
    if input.shape[-1] != input_size:
        raise ShapeError(f"{owner}: input.size(-1) must be equal to input_size. Expected {input_size}, got "
                         f"{input.shape[-1]} (input of shape {format_shape(input.shape)})")
    if not input.is_floating_point():
        raise DTypeError(f"{owner}: expected a floating-point input, got {input.dtype.name}")
    if input.dtype is not dtype:
        raise DTypeError(f"{owner}: input must have the type {dtype.name} of the layer's weights, got "
                         f"{input.dtype.name}; convert one with .to()")
    return input.ndim == batched_dims


def _check_hidden(owner, name, hidden, expected, batched):
    if hidden.ndim != len(expected):
        kind = "batched 3-D" if batched else "unbatched 2-D"
        raise ShapeError(f"{owner}: for {kind} input, {name} should be {len(expected)}-D but got "
                         f"{hidden.ndim}-D tensor of shape {format_shape(hidden.shape)}")
    if tuple(hidden.shape) != tuple(expected):
        raise ShapeError(f"{owner}: expected {name} of shape {format_shape(expected)}, got "
                         f"{format_shape(hidden.shape)}")


# --- packed batches: the state of the sequences still running ---------------------------

def _permute_hidden(hidden, indices):
    """``hidden`` (None or a (layers, batch, features) tensor) with its batch in the order ``indices``."""
    if hidden is None or indices is None:
        return hidden
    return hidden.index_select(1, indices)


def _rows(state, start, stop):
    """Rows ``start:stop`` of a state (a tensor, or an LSTM's (h, c))."""
    if isinstance(state, tuple):
        return tuple(part[start:stop] for part in state)
    return state[start:stop]


def _join(states):
    """The states' rows one after the other."""
    if len(states) == 1:
        return states[0]
    if isinstance(states[0], tuple):
        return tuple(cat(parts, 0) for parts in zip(*states))
    return cat(states, 0)


def _resize(state, batch, initial, finished):
    """``state`` for the ``batch`` sequences running at this step: rows of sequences that have
    ended go to ``finished`` (their final state); sequences that join start from ``initial``."""
    rows = (state[0] if isinstance(state, tuple) else state).shape[0]
    if batch < rows:
        finished.append(_rows(state, batch, rows))
        return _rows(state, 0, batch)
    if batch > rows:
        return _join([state, _rows(initial, rows, batch)])
    return state


# --- the multi-layer sequence models ----------------------------------------------------

class RNNBase(Module):
    """The shared machinery of ``RNN``, ``LSTM`` and ``GRU`` (PyTorch's ``RNNBase``)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        owner = type(self).__name__
        _check_size(owner, "input_size", input_size)
        _check_size(owner, "hidden_size", hidden_size)
        _check_size(owner, "num_layers", num_layers)
        _check_size(owner, "proj_size", proj_size, 0)
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ArgumentError(f"{owner}: dropout should be a number in range [0, 1] representing the probability "
                                f"of an element being zeroed, got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        if proj_size < 0:
            raise ArgumentError(f"{owner}: proj_size should be a positive integer or zero to disable projections, "
                                f"got {proj_size}")
        if proj_size >= hidden_size:
            raise ArgumentError(f"{owner}: proj_size has to be smaller than hidden_size, got proj_size={proj_size} "
                                f"and hidden_size={hidden_size}")
        if proj_size and mode != "LSTM":
            raise ArgumentError(f"{owner}: proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    self.register_parameter(name + suffix,
                                            Parameter(creation.empty(*shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias from U(-1/√hidden_size, 1/√hidden_size), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters grouped per layer and direction, as PyTorch's ``all_weights``."""
        per_group = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        weights = self._flat_weights
        return [weights[i:i + per_group] for i in range(0, len(weights), per_group)]

    def flatten_parameters(self):
        """A no-op kept for PyTorch code (cuDNN's contiguous weight buffer does not exist here)."""

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        return tuple(getattr(self, name + suffix, None)
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _step(self, x_proj, state, w_hh, b_hh, w_hr):
        if self.mode == "LSTM":
            return _lstm_step(x_proj, state, w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return _gru_step(x_proj, state, w_hh, b_hh)
        return _rnn_step(x_proj, state, w_hh, b_hh, F.tanh if self.mode == "RNN_TANH" else F.relu)

    def _run_direction(self, inputs, state, layer, direction, batch_sizes=None):
        """Run one layer in one direction over the time steps ``inputs`` (a (T, N, F) tensor,
        or a packed sequence's (sum of batch_sizes, F) data): the outputs (in time order; packed
        when the input is) and the final state.

        A packed batch shrinks as sequences end: step t runs on the first batch_sizes[t]
        rows, and the rows that left keep the state of their last real step (the reverse
        direction starts each sequence from its initial state when it joins)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        projected = F.linear(inputs, w_ih, b_ih)          # every step's input projection at once
        steps = projected.unbind(0) if batch_sizes is None else projected.split(batch_sizes)
        order = range(len(steps) - 1, -1, -1) if direction else range(len(steps))
        outputs = [None] * len(steps)
        initial, finished = state, []
        if batch_sizes is not None:
            state = _rows(state, 0, batch_sizes[order[0]])
        for t in order:
            if batch_sizes is not None:
                state = _resize(state, batch_sizes[t], initial, finished)
            with step_scope(self, f"t{t}", f"t={t}"):    # each time step is a box of the drawing
                state = self._step(steps[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0] if self.mode == "LSTM" else state
        if batch_sizes is None:
            return stack(outputs, 0), state
        return cat(outputs, 0), _join([state] + finished[::-1])

    def _expected_hidden(self, batch):
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, batch, self.proj_size or self.hidden_size)

    def forward(self, input, hx=None):
        owner = type(self).__name__
        packed = input if isinstance(input, PackedSequence) else None
        batch_sizes = None
        if packed is not None:
            input = packed.data
            if not _check_input(owner, input, self.input_size, 2, self.weight_ih_l0.dtype):
                raise ShapeError(f"{owner}: a packed sequence's data must be 2-D (steps, features), got shape "
                                 f"{format_shape(input.shape)}")
            batched, batch_sizes = True, packed.batch_sizes.tolist()
            batch = batch_sizes[0]
        else:
            batched = _check_input(owner, input, self.input_size, 3, self.weight_ih_l0.dtype)
            if not batched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            if steps == 0:
                raise ShapeError(f"{owner}: expected a sequence of at least one time step, got input of shape "
                                 f"{format_shape(input.shape)}")
        directions = 2 if self.bidirectional else 1
        h_shape = self._expected_hidden(batch)
        c_shape = (h_shape[0], batch, self.hidden_size)
        if hx is None:
            h0 = creation.zeros(*h_shape, dtype=input.dtype, device=input.device)
            c0 = creation.zeros(*c_shape, dtype=input.dtype, device=input.device)
        elif self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ArgumentTypeError(f"{owner}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
            h0, c0 = hx
            for name, tensor, shape in (("h_0", h0, h_shape), ("c_0", c0, c_shape)):
                _check_hidden(owner, name, tensor, shape if batched else (shape[0], shape[2]), batched)
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        else:
            h0 = hx
            _check_hidden(owner, "hx", h0, h_shape if batched else (h_shape[0], h_shape[2]), batched)
            if not batched:
                h0 = h0.unsqueeze(1)
        if packed is not None and hx is not None:          # the initial states in the packed order
            h0 = _permute_hidden(h0, packed.sorted_indices)
            c0 = _permute_hidden(c0, packed.sorted_indices) if self.mode == "LSTM" else None
        layer_input = input
        h0 = h0.unbind(0)
        c0 = c0.unbind(0) if self.mode == "LSTM" else None
        final_h, final_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                state = (h0[index], c0[index]) if self.mode == "LSTM" else h0[index]
                if self.num_layers == 1 and directions == 1:
                    output, state = self._run_direction(layer_input, state, layer, direction, batch_sizes)
                else:
                    with step_scope(self, f"layer{layer}" + ("_reverse" if direction else ""),
                                    f"layer {layer}" + (" (reverse)" if direction else "")):
                        output, state = self._run_direction(layer_input, state, layer, direction, batch_sizes)
                outputs.append(output)
                if self.mode == "LSTM":
                    final_h.append(state[0])
                    final_c.append(state[1])
                else:
                    final_h.append(state)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        h_n = stack(final_h, 0)
        c_n = stack(final_c, 0) if self.mode == "LSTM" else None
        if packed is not None:
            output = PackedSequence(output, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
            h_n, c_n = (_permute_hidden(state, packed.unsorted_indices) for state in (h_n, c_n))
        elif not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """A multi-layer Elman RNN: ``hₜ = tanh(xₜ W_ihᵀ + b_ih + hₜ₋₁ W_hhᵀ + b_hh)`` (or relu).

    Arguments as PyTorch's: ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh',
    bias=True, batch_first=False, dropout=0.0, bidirectional=False)``. Input (L, N, H_in)
    ((N, L, H_in) with ``batch_first``, or unbatched (L, H_in)); returns ``(output, h_n)``,
    output (L, N, D·H_out) with the last layer's hₜ, h_n (D·num_layers, N, H_out).

    Example::

        rnn = nn.RNN(10, 20, num_layers=2)
        output, h_n = rnn(vizgrad.randn(5, 3, 10))    # (5, 3, 20), (2, 3, 20)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        _activation(nonlinearity, "RNN")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A multi-layer long short-term memory network.

    ``i, f, g, o = σ, σ, tanh, σ`` of the four chunks of ``xₜ W_ihᵀ + b_ih + hₜ₋₁ W_hhᵀ + b_hh``;
    ``cₜ = f ⊙ cₜ₋₁ + i ⊙ g``, ``hₜ = o ⊙ tanh(cₜ)`` (projected by ``W_hr`` when ``proj_size > 0``).
    Arguments as PyTorch's (``num_layers``, ``bias``, ``batch_first``, ``dropout``,
    ``bidirectional``, ``proj_size``); returns ``(output, (h_n, c_n))``.

    Example::

        lstm = nn.LSTM(10, 20, batch_first=True)
        output, (h_n, c_n) = lstm(vizgrad.randn(3, 5, 10))   # (3, 5, 20), (1, 3, 20), (1, 3, 20)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit network.

    ``r, z = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr), σ(...)``; ``n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn))``;
    ``hₜ = (1 - z) ⊙ n + z ⊙ hₜ₋₁``. Arguments as PyTorch's; returns ``(output, h_n)``.

    Example::

        gru = nn.GRU(10, 20, bidirectional=True)
        output, h_n = gru(vizgrad.randn(5, 3, 10))    # (5, 3, 40), (2, 3, 20)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


# --- the cells -------------------------------------------------------------------------

class RNNCellBase(Module):
    """One time step: parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    _gates = 1

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        owner = type(self).__name__
        _check_size(owner, "input_size", input_size)
        _check_size(owner, "hidden_size", hidden_size)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate_size = self._gates * hidden_size
        self.weight_ih = Parameter(creation.empty(gate_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(creation.empty(gate_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(gate_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(gate_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _prepare(self, input, hx, count):
        """The input as a batch, ``count`` hidden states (zeros when ``hx`` is None) and
        whether the input was batched."""
        owner = type(self).__name__
        batched = _check_input(owner, input, self.input_size, 2, self.weight_ih.dtype)
        if not batched:
            input = input.unsqueeze(0)
        shape = (input.shape[0], self.hidden_size)
        if hx is None:
            states = [creation.zeros(*shape, dtype=input.dtype, device=input.device) for _ in range(count)]
        else:
            states = list(hx) if count > 1 else [hx]
            names = ("h_0", "c_0") if count > 1 else ("hx",)
            for name, state in zip(names, states):
                _check_hidden(owner, name, state, shape if batched else shape[1:], batched)
            if not batched:
                states = [state.unsqueeze(0) for state in states]
        return input, states, batched

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)`` (or relu).

    Input (N, H_in) or (H_in); ``hx`` (N, H) or (H), zeros when omitted.

    Example::

        cell = nn.RNNCell(10, 20)
        h = cell(vizgrad.randn(3, 10))       # (3, 20)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        activation = _activation(nonlinearity, "RNNCell")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity
        self._activation = activation

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 1)
        h = _rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      self._activation)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``. ``hx`` is a tuple ``(h, c)`` or None (zeros).

    Example::

        cell = nn.LSTMCell(10, 20)
        h, c = cell(vizgrad.randn(3, 10))    # (3, 20), (3, 20)
    """

    _gates = 4

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), (h, c), self.weight_hh, self.bias_hh,
                          None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = (1 - z) ⊙ n + z ⊙ h``.

    Example::

        cell = nn.GRUCell(10, 20)
        h = cell(vizgrad.randn(3, 10))       # (3, 20)
    """

    _gates = 3

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)

