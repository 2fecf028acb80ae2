"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A batch of sequences of different lengths is either *padded* (one (T, B, *) tensor, the
short sequences filled up with ``padding_value``) or *packed*: a :class:`PackedSequence`
holds only the real steps, time step by time step, with the number of sequences still
running at each step (``batch_sizes``, decreasing: the sequences sorted longest first).
``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` take a packed batch and run each step on the
sequences that still have it, so a sequence's final state is that of its last real step.

Packing and unpacking are one indexing op each (a boolean mask of the real steps), so the
gradient reaches the real steps alone and the padding none.

Example::

    from vizgrad.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    padded = vizgrad.randn(4, 3, 8)                       # (T, B, features)
    packed = pack_padded_sequence(padded, [4, 2, 3], enforce_sorted=False)
    output, h_n = nn.GRU(8, 16)(packed)                   # output is packed too
    output, lengths = pad_packed_sequence(output)         # (4, 3, 16), tensor([4, 2, 3])
"""

from collections import namedtuple

from ... import creation, dtypes
from ...errors import ArgumentError, ArgumentTypeError, ShapeError, format_shape, not_a_tensor
from ...ops.index import index_put
from ...ops.joins import cat, stack
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch of sequences: ``data`` (the real steps, time-major: the first step of
    every sequence, then the second of those that have one, ...), ``batch_sizes`` (an int64
    CPU tensor: how many sequences are running at each step), and ``sorted_indices`` /
    ``unsorted_indices`` (the permutation to longest first and back; None when the batch
    came sorted). Made by :func:`pack_padded_sequence` or :func:`pack_sequence`.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:                 # PackedSequence((data, batch_sizes)), as PyTorch allows
            data, batch_sizes = data
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The packed sequence with ``data.to(*args, **kwargs)``; the indices follow the data's
        device, ``batch_sizes`` stays on the CPU. ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (None if index is None else index.to(device=data.device)
                                            for index in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None):
        return self.to(device="cuda" if device is None else device)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _lengths(op, lengths):
    """``lengths`` (a list or a 1-D tensor) as Python ints."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise ShapeError(f"{op}: lengths must be a 1-D tensor, got shape {format_shape(lengths.shape)}")
        lengths = lengths.tolist()
    if not isinstance(lengths, (list, tuple)):
        raise ArgumentTypeError(f"{op}: lengths must be a list or a 1-D tensor, got {type(lengths).__name__}")
    return [int(n) for n in lengths]


def _steps_mask(lengths, steps, device):
    """The (steps, batch) mask of real steps: ``t < lengths[b]``."""
    time = creation.arange(steps, device=device).unsqueeze(1)
    return time < creation.tensor(lengths, device=device).unsqueeze(0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``input`` ((T, B, *), or (B, T, *) with ``batch_first``) whose
    sequence ``b`` has ``lengths[b]`` real steps. With ``enforce_sorted=True`` the lengths
    must be decreasing; otherwise the batch is sorted longest first (ties keep their order)
    and the packed sequence keeps the permutation.

    Example::

        packed = pack_padded_sequence(vizgrad.randn(3, 2, 5), [3, 1])
        packed.batch_sizes          # tensor([2, 1, 1])
    """
    op = "pack_padded_sequence"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    lengths = _lengths(op, lengths)
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must have at least 2 dims (time and batch), got shape "
                         f"{format_shape(input.shape)}")
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_dim]:
        raise ShapeError(f"{op}: Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                         f"(batch_size={input.shape[batch_dim]})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise ArgumentError(f"{op}: `lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                f"is True, got {lengths}. You can pass `enforce_sorted=False` to "
                                "pack_padded_sequence and/or pack_sequence to sidestep this requirement")
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda b: -lengths[b])
        sorted_indices = creation.tensor(order, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
        lengths = [lengths[b] for b in order]
    if batch_first:
        input = input.transpose(0, 1)
    if lengths and lengths[-1] <= 0:
        raise ArgumentError(f"{op}: Length of all samples has to be greater than 0, but found an element in "
                            f"'lengths' that is <= 0: {lengths[-1]}")
    if lengths and lengths[0] > input.shape[0]:
        raise ShapeError(f"{op}: a sequence of length {lengths[0]} does not fit in input of shape "
                         f"{format_shape(input.shape)} ({input.shape[0]} time steps)")
    steps = lengths[0] if lengths else 0
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(steps)]
    data = input[:steps][_steps_mask(lengths, steps, input.device)]   # time-major, longest first
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)``, the batch in its original
    order, padded with ``padding_value`` to the longest sequence (or to ``total_length``
    steps); ``lengths`` is an int64 CPU tensor.

    Example::

        padded, lengths = pad_packed_sequence(packed, batch_first=True)
    """
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise ArgumentTypeError(f"{op}: expected a PackedSequence, got {type(sequence).__name__}")
    data, batch_sizes, sorted_indices, unsorted_indices = sequence
    sizes = batch_sizes.tolist()
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ArgumentError(f"{op}: Expected total_length to be at least the length of the longest sequence "
                                f"in input, but got total_length={total_length} and max sequence length being "
                                f"{steps}")
        steps = total_length
    batch = sizes[0] if sizes else 0
    lengths = [sum(1 for n in sizes if n > b) for b in range(batch)]
    filled = creation.full((steps, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                           device=data.device)
    padded = index_put(filled, _steps_mask(lengths, steps, data.device), data)
    lengths = creation.tensor(lengths, dtype=dtypes.int64)
    if unsorted_indices is not None:
        padded = padded.index_select(1, unsorted_indices)
        lengths = lengths[unsorted_indices.to(device="cpu")]
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into one (max L, B, *) tensor ((B, max L, *) with
    ``batch_first``), each filled up with ``padding_value`` on its ``padding_side``.

    Example::

        pad_sequence([vizgrad.ones(3), vizgrad.ones(1)], batch_first=True)
        # tensor([[1., 1., 1.], [1., 0., 0.]])
    """
    op = "pad_sequence"
    if padding_side not in ("left", "right"):
        raise ArgumentError(f"{op}: Expected padding_side to be one of left or right, but got {padding_side!r}")
    sequences = list(sequences)
    if not sequences:
        raise ArgumentError(f"{op}: received an empty list of sequences")
    for sequence in sequences:
        if not isinstance(sequence, Tensor):
            raise not_a_tensor(op, "sequences", sequence)
        if sequence.ndim == 0 or sequence.shape[1:] != sequences[0].shape[1:]:
            raise ShapeError(f"{op}: every sequence must have shape (L, *) with the same trailing dims; got "
                             f"{format_shape(sequences[0].shape)} and {format_shape(sequence.shape)}")
    longest = max(sequence.shape[0] for sequence in sequences)
    padded = []
    for sequence in sequences:
        missing = longest - sequence.shape[0]
        if missing:
            fill = creation.full((missing,) + tuple(sequence.shape[1:]), padding_value, dtype=sequence.dtype,
                                 device=sequence.device)
            sequence = cat([sequence, fill] if padding_side == "right" else [fill, sequence])
        padded.append(sequence)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``padded[:lengths[b], b]`` (the inverse of :func:`pad_sequence`)."""
    lengths = _lengths("unpad_sequence", lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes (L_i, *): ``pack_padded_sequence(pad_sequence(sequences),
    lengths, enforce_sorted=enforce_sorted)``.

    Example::

        packed = pack_sequence([vizgrad.tensor([1., 2., 3.]), vizgrad.tensor([4., 5.])])
        packed.data                  # tensor([1., 4., 2., 5., 3.])
    """
    sequences = list(sequences)
    lengths = [sequence.shape[0] if isinstance(sequence, Tensor) and sequence.ndim else 0
               for sequence in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a packed batch, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
