"""Shape ops that pad, tile or rearrange entries into new memory: pad, channel_shuffle,
repeat, tile, repeat_interleave, flip, fliplr, flipud, rot90, tril, triu.

Linear as every shape op (:mod:`.shape`): backward slices out the padding, sums the
copies, or moves the gradient back the other way.
"""

import numpy as np

from ..autograd.function import Op
from ..errors import ArgumentError, DTypeError, ShapeError, format_shape, ArgumentTypeError, not_a_tensor, as_int
from ..tensor import Tensor
from .registry import Sample, register
from .samples import non_contiguous, values
from .shape import _dim, _dims, _int_args, _ints, reshape, transpose


# --- repeat ------------------------------------------------------------------------------

class Repeat(Op):
    @staticmethod
    def forward(ctx, a, repeats):
        ctx.input_shape = tuple(a.shape)
        ctx.padded = (1,) * (len(repeats) - a.ndim) + ctx.input_shape
        ctx.repeats = repeats
        return ctx.xp.tile(ctx.xp.reshape(a, ctx.padded), repeats)

    @staticmethod
    def backward(ctx, grad):
        # output dim i is repeats[i] copies of input dim i laid end to end: split it into
        # (copy, position) and add up the copies
        pairs = tuple(n for pair in zip(ctx.repeats, ctx.padded) for n in pair)
        grad = ctx.xp.reshape(grad, pairs)
        if pairs:
            grad = ctx.xp.sum(grad, axis=tuple(range(0, len(pairs), 2)))
        return ctx.xp.reshape(grad, ctx.input_shape)


def _repeat_reference(a, *repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and not isinstance(repeats[0], int) else repeats
    return np.tile(a, repeats)


def _repeat_samples(rng):
    yield Sample((values(rng, (2, 3)), 2, 2))
    yield Sample((values(rng, (2, 3)), (1, 3, 2)), name="new leading dim")
    yield Sample((values(rng, (3,)), 2, 1), name="1-d to 2-d")
    yield Sample((values(rng, ()), 3), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 2))), 2, 1), name="non-contiguous")


@register(_repeat_reference, _repeat_samples)
def repeat(input, *repeats):
    """Tile ``input``: dim ``i`` is repeated ``repeats[i]`` times end to end (PyTorch's
    ``repeat``, NumPy's ``tile``). Extra leading repeats add new dims. A copy.

    Maths: out has ``repeats[i]`` copies of each entry along dim ``i``; the gradient of an
    entry is the sum of the gradients of its copies.

    Example::

        vizgrad.tensor([1.0, 2.0]).repeat(2)       # [1, 2, 1, 2]
        vizgrad.tensor([1.0, 2.0]).repeat(2, 1)    # [[1, 2], [1, 2]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("repeat", "input", input)
    if not repeats:
        raise ArgumentTypeError("repeat: missing the number of repeats")
    repeats = _int_args("repeat", "repeats", repeats[0], repeats[1:])
    if len(repeats) < input.ndim:
        raise ShapeError(f"repeat: repeats {repeats} for a tensor of shape {format_shape(input.shape)}; "
                         f"give at least one per dim ({input.ndim})")
    if any(r < 0 for r in repeats):
        raise ShapeError(f"repeat: repeats must be non-negative, got {repeats}")
    return Repeat.apply(input, repeats=repeats)


# --- flip, fliplr, flipud, rot90, tril, triu ---------------------------------------------

class Flip(Op):
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        flipped = ctx.xp.flip(a, axis=dims) if dims else a
        return ctx.xp.asarray(flipped, copy=True)   # NumPy flips as a view; PyTorch copies

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.flip(grad, axis=ctx.dims) if ctx.dims else grad


def _flip_reference(a, dims, *more):
    dims = (dims,) + more if more or isinstance(dims, int) else tuple(dims)
    return np.flip(a, axis=dims) if dims else a


def _flip_samples(rng):
    yield Sample((values(rng, (3, 4)), (0,)))
    yield Sample((values(rng, (2, 3, 4)), (0, 2)), name="two dims")
    yield Sample((values(rng, (3, 4)), -1), name="int, negative dim")
    yield Sample((values(rng, ()), ()), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), (0, 1)), name="non-contiguous")


@register(_flip_reference, _flip_samples)
def flip(input, dims, *more):
    """Reverse the order of entries along ``dims`` (an int or a tuple; ``x.flip(0, 1)``
    works too). A copy, as in PyTorch.

    Maths: a permutation of entries; the gradient is flipped back.

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0]).flip(0)    # [3, 2, 1]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("flip", "input", input)
    dims = _dims("flip", _int_args("flip", "dims", dims, more), input.ndim)
    return Flip.apply(input, dims=dims)


class Tril(Op):
    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return ctx.xp.tril(a, k=diagonal)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.tril(grad, k=ctx.diagonal)


class Triu(Op):
    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return ctx.xp.triu(a, k=diagonal)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.triu(grad, k=ctx.diagonal)


def _triangle_samples(rng):
    yield Sample((values(rng, (4, 4)),))
    yield Sample((values(rng, (3, 5)),), {"diagonal": 1})
    yield Sample((values(rng, (2, 3, 4)),), {"diagonal": -1}, name="batched, diagonal -1")
    yield Sample((non_contiguous(values(rng, (4, 3))),), name="non-contiguous")


def _triangle_check(op, input):
    if input.ndim < 2:
        raise ShapeError(f"{op}: needs a tensor of at least 2 dims (a matrix or a batch of them), "
                         f"got shape {format_shape(input.shape)}")


@register(lambda a, diagonal=0: np.tril(a, diagonal), _triangle_samples)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims: entries with ``j - i <= diagonal`` kept,
    the others zero.

    Maths: a mask; the gradient is masked the same way (``tril`` of the gradient).

    Example::

        vizgrad.tril(vizgrad.ones(3, 3))   # [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("tril", "input", input)
    _triangle_check("tril", input)
    return Tril.apply(input, diagonal=as_int("tril", "diagonal", diagonal))


@register(lambda a, diagonal=0: np.triu(a, diagonal), _triangle_samples)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims: entries with ``j - i >= diagonal`` kept,
    the others zero.

    Maths: a mask; the gradient is ``triu`` of the gradient.

    Example::

        vizgrad.triu(vizgrad.ones(3, 3), diagonal=1)   # [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("triu", "input", input)
    _triangle_check("triu", input)
    return Triu.apply(input, diagonal=as_int("triu", "diagonal", diagonal))


def _at_least_2d(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must have at least 2 dims, got shape {format_shape(input.shape)}")


def _matrix_samples(rng):
    yield Sample((values(rng, (2, 3)),), name="2-d")
    yield Sample((values(rng, (2, 3, 4)),), name="3-d")


@register(np.fliplr, _matrix_samples)
def fliplr(input):
    """``input`` with dim 1 reversed (left to right); at least 2-d. A copy, as in PyTorch.

    Example::

        vizgrad.tensor([[1, 2, 3]]).fliplr()     # tensor([[3, 2, 1]])
    """
    _at_least_2d("fliplr", input)
    return flip(input, (1,))


@register(np.flipud, lambda rng: iter([Sample((values(rng, (3,)),), name="1-d"),
                                       Sample((values(rng, (3, 2)),), name="2-d")]))
def flipud(input):
    """``input`` with dim 0 reversed (upside down); at least 1-d. A copy, as in PyTorch.

    Example::

        vizgrad.tensor([[1], [2]]).flipud()      # tensor([[2], [1]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("flipud", "input", input)
    if input.ndim < 1:
        raise ShapeError("flipud: input must have at least 1 dim, got a 0-d tensor")
    return flip(input, (0,))


def _rot90_samples(rng):
    yield Sample((values(rng, (2, 3)),), name="once")
    yield Sample((values(rng, (2, 3)), 2), name="twice")
    yield Sample((values(rng, (2, 3, 4)), -1, (1, 2)), name="backwards, other dims")
    yield Sample((values(rng, (2, 3)), 4), name="four times")


@register(lambda a, k=1, dims=(0, 1): np.rot90(a, k, dims), _rot90_samples)
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90° ``k`` times in the plane of ``dims``, from the first dim toward the second
    (negative ``k`` the other way).

    Example::

        vizgrad.arange(6).reshape(2, 3).rot90()    # tensor([[2, 5], [1, 4], [0, 3]])
    """
    _at_least_2d("rot90", input)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else dims
    if not isinstance(dims, tuple) or len(dims) != 2:
        raise ArgumentError(f"rot90: dims must be a pair of dims, got {dims!r}")
    first, second = (_dim("rot90", d, input.ndim) for d in dims)
    if first == second:
        raise ArgumentError(f"rot90: dims must differ, got {dims!r}")
    k = as_int("rot90", "k", k) % 4
    if k == 0:
        return input.clone()
    if k == 2:
        return flip(input, (first, second))
    if k == 1:
        return transpose(flip(input, (second,)), first, second)
    return flip(transpose(input, first, second), (second,))


# --- pad ---------------------------------------------------------------------------------

class Pad(Op):
    @staticmethod
    def forward(ctx, a, widths, value):
        # widths: (before, after) per dim; negative amounts crop, positive ones pad
        ctx.widths = widths
        crop = tuple(slice(max(-before, 0), n - max(-after, 0))
                     for (before, after), n in zip(widths, a.shape))
        grow = tuple((max(before, 0), max(after, 0)) for before, after in widths)
        if any(before or after for before, after in grow):
            return ctx.xp.pad(a[crop], grow, value)
        return ctx.xp.asarray(a[crop], copy=True)   # a copy, as in PyTorch

    @staticmethod
    def backward(ctx, grad):
        widths = ctx.widths
        if any(before > 0 or after > 0 for before, after in widths):
            grad = grad[tuple(slice(max(before, 0), n - max(after, 0))
                              for (before, after), n in zip(widths, grad.shape))]
        if any(before < 0 or after < 0 for before, after in widths):
            grad = ctx.xp.pad(grad, tuple((max(-before, 0), max(-after, 0)) for before, after in widths), 0.0)
        return grad


class _GatherPad(Op):
    """Pad by copying the input's own entries: along each padded dim, output position o holds
    input position ``source[o]``, one gather per dim. Backward adds each output's gradient into
    its source position (``index_add``), so entries copied several times collect every copy's
    gradient; its own backward is the gather again."""

    @staticmethod
    def forward(ctx, a, sources, padded_dims):
        xp = ctx.xp
        ctx.padded_dims = padded_dims              # the name: ReflectionPad2DBackward0, ...
        ctx.axes = tuple(axis for axis, _ in sources)
        ctx.sizes = tuple(a.shape[axis] for axis, _ in sources)
        indices = []
        for axis, source in sources:
            indices.append(xp.asarray(source, dtype=xp.int64, device=a.device))
            a = xp.take(a, indices[-1], axis=axis)
        ctx.save_for_backward(*indices)            # constants: the source positions
        return a if sources else xp.asarray(a, copy=True)

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        shape = list(grad.shape)
        for axis, size, index in reversed(tuple(zip(ctx.axes, ctx.sizes, ctx.saved_tensors))):
            shape[axis] = size
            grad = xp.index_add(xp.zeros(tuple(shape), dtype=grad.dtype, device=grad.device), axis, index, grad)
        return grad


class ReflectionPad(_GatherPad):
    """``mode="reflect"``: the input mirrored about its first and last entries."""


class ReplicationPad(_GatherPad):
    """``mode="replicate"``: the input's edge entries repeated."""


class CircularPad(_GatherPad):
    """``mode="circular"``: the input wrapped around (after any cropping)."""


_GATHER_PADS = {"reflect": ReflectionPad, "replicate": ReplicationPad, "circular": CircularPad}


def _pad_widths(ndim, pad):
    """PyTorch's flat ``pad`` (last dim first) as (before, after) per dim, first dim first."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
    return ((0, 0),) * (ndim - len(pairs)) + tuple(reversed(pairs))


def _pad_sources(mode, size, before, after):
    """The input position each output position copies along one dim of ``size``. Reflect and
    replicate index the whole input (then crop, for negative amounts); circular wraps around
    what remains after cropping, as PyTorch."""
    if mode == "circular":
        kept = list(range(max(-before, 0), size - max(-after, 0)))
        grow = max(before, 0)
        return [kept[(o - grow) % len(kept)] for o in range(len(kept) + grow + max(after, 0))]
    positions = range(-before, size + after)
    if mode == "replicate":
        return [min(max(i, 0), size - 1) for i in positions]
    return [-i if i < 0 else 2 * (size - 1) - i if i >= size else i for i in positions]


def _check_gather_pad(mode, input, pad, widths):
    """PyTorch's rules for the non-constant modes: 1, 2 or 3 trailing dims of an input with one
    or two more dims (a batch dim, maybe empty, and a channel dim), no value, sizes that fit."""
    shape, dims = tuple(input.shape), len(pad) // 2
    if dims not in (1, 2, 3) or input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of an input with one or two more dims "
                         f"(channels, and an optional batch): padding of size 2 for a 2D or 3D input, 4 for 3D or "
                         f"4D, 6 for 4D or 5D; got padding of size {len(pad)} for an input of shape "
                         f"{format_shape(shape)}")
    if mode != "circular" and input.dtype.name == "bool":
        raise DTypeError(f"pad: mode {mode!r} does not support bool tensors (the input's dtype is bool; "
                         "modes 'constant' and 'circular' do); convert the input with .int() or .float()")
    batched = input.ndim == dims + 2
    if mode != "circular" and any(n == 0 for n in shape[1 if batched else 0:]):
        raise ShapeError(f"pad: mode {mode!r} needs a {dims + 1}D or {dims + 2}D (batch mode) input whose dims are "
                         f"not empty (only the batch dim may be 0), got shape {format_shape(shape)}")
    padded = range(input.ndim - dims, input.ndim)
    if mode != "circular" and all(shape[dim] + sum(widths[dim]) < 1 for dim in padded):
        raise ShapeError(f"pad: padding {pad} leaves no entries in any padded dim of the input of shape "
                         f"{format_shape(shape)}: mode {mode!r} needs an output size of at least 1 in one of them")
    for dim in padded:
        (before, after), n = widths[dim], shape[dim]
        if mode == "reflect" and (before >= n or after >= n):
            raise ShapeError(f"pad: mode 'reflect' needs padding smaller than the size it reflects, but got padding "
                             f"({before}, {after}) at dim {dim} of size {n} (input of shape {format_shape(shape)})")
        kept = n - max(-before, 0) - max(-after, 0)
        if mode == "circular" and (before > kept or after > kept):
            raise ShapeError(f"pad: padding ({before}, {after}) of dim {dim} would wrap around more than once: "
                             f"circular padding must be at most the size it wraps, {kept} (input of shape "
                             f"{format_shape(shape)})")


def _pad_reference(a, pad, mode="constant", value=None):
    widths = _pad_widths(a.ndim, pad)
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, a.shape))
    grow = tuple((max(b, 0), max(e, 0)) for b, e in widths)
    if mode == "circular":                      # crop, then wrap what is left
        return np.pad(a[crop], grow, mode="wrap")
    if mode in ("reflect", "replicate"):        # pad the whole input, then crop
        padded = np.pad(a, grow, mode="reflect" if mode == "reflect" else "edge")
        return padded[tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, padded.shape))]
    if not any(b or e for b, e in grow):
        return a[crop].copy()
    return np.pad(a[crop], grow, constant_values=0.0 if value is None else value)


def _pad_samples(rng):
    yield Sample((values(rng, (3, 4)), (1, 2)), name="last dim")
    yield Sample((values(rng, (3, 4)), (1, 0, 2, 1)), {"value": 0.5}, name="two dims, value")
    yield Sample((values(rng, (2, 3, 4)), (0, 0, 1, 1, 2, 0)), name="three dims")
    yield Sample((values(rng, (3, 5)), (-1, 2)), name="negative: crop")
    yield Sample((values(rng, (4, 5)), (-1, -2, 1, -1)), name="crop and pad")
    yield Sample((values(rng, ()), ()), name="0-d, nothing")
    yield Sample((non_contiguous(values(rng, (3, 4))), (2, 1, 0, 1)), name="non-contiguous")
    yield Sample((values(rng, (2, 3, 5)), (3, 2), "reflect"), name="reflect 1d")
    yield Sample((values(rng, (2, 4, 3)), (2, 1, 0, 3), "reflect"), name="reflect 2d unbatched")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), (1, 2, 2, 0, 1, 1), "reflect"), name="reflect 3d")
    yield Sample((values(rng, (2, 6)), (-2, 3), "reflect"), name="reflect crop")
    yield Sample((values(rng, (2, 2, 3)), (4, 1), "replicate"), name="replicate 1d, wider than the input")
    yield Sample((values(rng, (2, 1, 3, 4)), (1, 2, 3, -1), "replicate"), name="replicate 2d crop")
    yield Sample((values(rng, (2, 2, 2, 3)), (1, 0, 2, 2, 1, 1), "replicate"), name="replicate 3d unbatched")
    yield Sample((values(rng, (2, 2, 4)), (4, 2), "circular"), name="circular 1d")
    yield Sample((values(rng, (1, 2, 3, 4)), (1, 3, 2, 0), "circular"), name="circular 2d")
    yield Sample((values(rng, (2, 5)), (3, -2), "circular"), name="circular crop")
    yield Sample((values(rng, (1, 1, 2, 3, 2)), (1, 1, 0, 2, 2, 1), "circular"), name="circular 3d")


@register(_pad_reference, _pad_samples, method=False)
def pad(input, pad, mode="constant", value=None):
    """Pad as ``torch.nn.functional.pad``: ``pad`` is a flat tuple of (before, after)
    amounts, last dim first: ``(left, right, top, bottom, ...)``; negative amounts crop.

    Modes: ``"constant"`` fills with ``value`` (default 0), any dims; ``"reflect"`` mirrors the
    input about its edge entries (``[1, 2, 3]`` padded by 2 → ``[3, 2, 1, 2, 3, 2, 1]``),
    ``"replicate"`` repeats the edge entries (``[1, 1, 1, 2, 3, 3, 3]``) and ``"circular"``
    wraps around (``[2, 3, 1, 2, 3, 1, 2]``): these pad the last 1, 2 or 3 dims of an input
    with one or two more dims (channels, and an optional batch), as PyTorch.

    Maths: every output entry is a constant or a copy of an input entry, so the gradient of an
    input entry is the sum of the incoming gradients of its copies.

    Example::

        vizgrad.pad(vizgrad.ones(2, 2), (1, 1))   # shape (2, 4): [[0, 1, 1, 0], [0, 1, 1, 0]]
        F.pad(vizgrad.arange(3.0).view(1, 3), (2, 2), mode="reflect")   # tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ArgumentError(f"pad: unrecognised padding mode {mode!r}; use 'constant', 'reflect', 'replicate' or "
                            "'circular'")
    if not isinstance(input, Tensor):
        raise not_a_tensor("pad", "input", input)
    pad = _ints("pad", "pad", pad)
    shape = input.shape
    if len(pad) % 2:
        raise ShapeError(f"pad: pad must hold (before, after) pairs, so an even number of sizes; got {pad}")
    if len(pad) // 2 > len(shape):
        raise ShapeError(f"pad: pad {pad} gives {len(pad) // 2} (before, after) pairs for a tensor of shape "
                         f"{format_shape(shape)}, which has only {len(shape)} dims")
    widths = _pad_widths(len(shape), pad)
    for dim, ((before, after), n) in enumerate(zip(widths, shape)):
        if n + before + after < 0:
            raise ShapeError(f"pad: padding ({before}, {after}) of dim {dim} (size {n}) leaves a negative "
                             f"size {n + before + after} (tensor of shape {format_shape(shape)})")
    if mode == "constant":
        return Pad.apply(input, widths=widths, value=0.0 if value is None else value)
    if value is not None and value != 0:
        raise ArgumentError(f"pad: padding mode {mode!r} doesn't take a value argument (got value={value!r}); "
                            "only mode='constant' fills with a value")
    _check_gather_pad(mode, input, pad, widths)
    sources = tuple((dim, _pad_sources(mode, shape[dim], before, after))
                    for dim, (before, after) in enumerate(widths) if before or after)
    return _GATHER_PADS[mode].apply(input, sources=sources, padded_dims=len(pad) // 2)


def _channel_shuffle_reference(x, groups):
    batch, channels = x.shape[:2]
    grouped = x.reshape((batch, groups, channels // groups) + x.shape[2:])
    return np.swapaxes(grouped, 1, 2).reshape(x.shape)


def _channel_shuffle_samples(rng):
    yield Sample((values(rng, (2, 6, 3)), 2), name="(N, C, L)")
    yield Sample((values(rng, (1, 6, 2, 2)), 3), name="(N, C, H, W)")
    yield Sample((values(rng, (2, 4, 1, 2, 1)), 4), name="groups = channels")


@register(_channel_shuffle_reference, _channel_shuffle_samples, method=False)
def channel_shuffle(input, groups):
    """Interleave the channels of (N, C, *) inputs across ``groups`` (ShuffleNet): the channels
    read as (groups, C/groups) are transposed, so channel ``g·(C/groups) + k`` moves to
    ``k·groups + g``. The gradient is shuffled back.

    Example::

        F.channel_shuffle(vizgrad.arange(6.0).view(1, 6, 1), 2).flatten()   # tensor([0., 3., 1., 4., 2., 5.])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("channel_shuffle", "input", input)
    groups = as_int("channel_shuffle", "groups", groups)
    if groups <= 0:
        raise ArgumentError(f"channel_shuffle: the number of groups to divide channels in must be positive, got "
                            f"groups={groups}")
    if input.ndim <= 2:
        raise ShapeError(f"channel_shuffle: expects an input with more than 2 dims (N, C, *), got shape "
                         f"{format_shape(input.shape)}")
    batch, channels = input.shape[:2]
    if channels % groups:
        raise ShapeError(f"channel_shuffle: the number of channels must be divisible by groups: got {channels} "
                         f"channels and {groups} groups (input of shape {format_shape(input.shape)})")
    grouped = reshape(input, (batch, groups, channels // groups) + tuple(input.shape[2:]))
    return reshape(transpose(grouped, 1, 2), tuple(input.shape))


# --- composites: tile, repeat_interleave -------------------------------------------------
# Built from repeat and index_select: their gradients, of every order, are those ops' gradients.

def _tile_reference(a, dims):
    return np.tile(a, dims)


def _tile_samples(rng):
    yield Sample((values(rng, (2, 3)), (2,)), name="fewer dims than the tensor")
    yield Sample((values(rng, (3,)), (2, 2)), name="more dims than the tensor")
    yield Sample((values(rng, ()), (3,)), name="0-d")
    yield Sample((values(rng, (2, 3)), ()), name="no dims")


@register(_tile_reference, _tile_samples)
def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; when ``dims`` has fewer entries
    than ``input`` has dims, ones are put in front (``x.tile((2,))`` repeats the last dim),
    when more, the tensor gains leading dims (as :meth:`repeat`).

    Example::

        vizgrad.tensor([1, 2]).tile((2,))      # tensor([1, 2, 1, 2])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("tile", "input", input)
    dims = _ints("tile", "dims", dims)
    if any(d < 0 for d in dims):
        raise ShapeError(f"tile: dims must be non-negative, got {dims}")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims) if dims else input.clone()


def _repeat_interleave_reference(a, repeats=None, dim=None, output_size=None):
    if repeats is None:
        return np.repeat(np.arange(len(a)), a)
    return np.repeat(a.reshape(-1) if dim is None else a, repeats, axis=0 if dim is None else dim)


def _repeat_interleave_samples(rng):
    yield Sample((values(rng, (2, 3)), 2), name="flattened")
    yield Sample((values(rng, (2, 3)), np.array([1, 0, 2])), {"dim": -1}, name="tensor repeats")
    yield Sample((values(rng, (2, 3)), np.array([3])), {"dim": 0, "output_size": 6}, name="one repeat, output_size")
    yield Sample((np.array([2, 0, 1]),), name="repeats only")


@register(_repeat_interleave_reference, _repeat_interleave_samples)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) of ``input`` repeated ``repeats`` times in place
    (an int, or a 1-D int64 tensor with one count per slice); without ``dim`` the input is
    flattened first. ``vizgrad.repeat_interleave(counts)`` alone gives
    ``arange(len(counts))`` repeated by ``counts``. The gradient sums the copies.

    Example::

        vizgrad.tensor([1, 2]).repeat_interleave(2)                  # tensor([1, 1, 2, 2])
        vizgrad.repeat_interleave(vizgrad.tensor([2, 0, 1]))         # tensor([0, 0, 2])
    """
    from ..creation import arange, tensor as make_tensor
    from .index import index_select  # lazy: ops.index sits above this module (it uses movedim, cat, pad)
    op = "repeat_interleave"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if repeats is None:
        if input.ndim != 1 or input.dtype.name != "int64":
            raise ShapeError(f"{op}: repeats must be a 1-D int64 tensor, got {input.dtype.name} of shape "
                             f"{format_shape(input.shape)}")
        return repeat_interleave(arange(input.shape[0], device=input.device), input, 0, output_size=output_size)
    source = reshape(input, (-1,)) if dim is None else input
    if not source.ndim:
        source = reshape(source, (1,))
    axis = 0 if dim is None else _dim(op, dim, source.ndim)
    size = source.shape[axis]
    if isinstance(repeats, Tensor):
        if repeats.dtype.name not in ("int64", "int32") or repeats.ndim > 1:
            raise ShapeError(f"{op}: repeats must be 0-d or 1-D int64 tensor, got {repeats.dtype.name} of shape "
                             f"{format_shape(repeats.shape)}")
        counts = [int(c) for c in np.asarray(repeats.detach().cpu().numpy()).reshape(-1)]
        if len(counts) == 1:
            counts = counts * size
    else:
        counts = [as_int(op, "repeats", repeats)] * size
    if len(counts) != size:
        raise ShapeError(f"{op}: repeats must have the same size as input along dim {dim if dim is not None else 0}: "
                         f"repeats has {len(counts)} entries, the dim {size}")
    if any(c < 0 for c in counts):
        raise ArgumentError(f"{op}: repeats can not be negative, got {min(counts)}")
    total = sum(counts)
    if output_size is not None and as_int(op, "output_size", output_size) != total:
        raise ShapeError(f"{op}: output_size {output_size} does not match the total of repeats, {total}")
    positions = make_tensor(np.repeat(np.arange(size, dtype=np.int64), counts), device=input.device)
    return index_select(source, axis, positions)
