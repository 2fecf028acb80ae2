"""The event bus: what the engine does, as small immutable events.

Subscribe a callback and it is called, synchronously and in order, in the thread
that did the work::

    with vizgrad.events.subscribe(print, kinds={"op", "node_backward"}):
        loss = model(x).sum(); loss.backward()

Event kinds: ``op``, ``backward_start``, ``node_backward``, ``backward_end``,
``grad_accumulated``, ``hook``, ``module_forward``, ``optimizer_step``, ``zero_grad``
and ``mark`` (:func:`mark`). While nobody subscribes the bus is detached from the
engine, which then pays one truthiness check per op.

Tensor statistics are not computed unless asked for: events carry the tensors
only while being delivered, and :func:`tensor_stats` turns a tensor into
:class:`TensorStats` (copying off the GPU only then). A listener must not keep the
tensors it is given; keeping the event is fine (it holds no tensors).

A listener that raises is detached with one warning naming it, and the user's
computation goes on; under ``strict=True`` (for tests) the exception propagates.
"""

import math
import time
import warnings
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple, Optional

import numpy as np

from .autograd import observers
from .backends.sparse_kernels import CooArray

KINDS = frozenset({"op", "backward_start", "node_backward", "backward_end", "grad_accumulated", "hook",
                   "module_forward", "optimizer_step", "zero_grad", "mark"})


# --- events -----------------------------------------------------------------
@dataclass(frozen=True)
class OpEvent:
    """One op's forward. ``node_id`` is None when nothing was recorded (no_grad, no input
    requiring grad); tensors are named by their ``uid``."""

    op: str
    node_id: Optional[int]
    input_ids: tuple
    output_ids: tuple
    shape: tuple
    dtype: str
    device: str
    module: str
    duration: float
    kind: str = "op"
    inputs: Any = field(default=None, repr=False, compare=False)    # the tensors, during delivery only
    outputs: Any = field(default=None, repr=False, compare=False)
    arguments: Any = field(default=None, repr=False, compare=False)  # every positional argument (numbers too)


@dataclass(frozen=True)
class BackwardStartEvent:
    root_ids: tuple
    kind: str = "backward_start"


@dataclass(frozen=True)
class NodeBackwardEvent:
    """One node's backward, in execution order (``index`` counts from 0 within one pass)."""

    node_id: int
    op: str
    index: int
    grad_shapes: tuple
    duration: float
    kind: str = "node_backward"
    grads: Any = field(default=None, repr=False, compare=False)         # gradients w.r.t. the node's inputs
    grad_outputs: Any = field(default=None, repr=False, compare=False)  # the gradients the node received


@dataclass(frozen=True)
class BackwardEndEvent:
    root_ids: tuple
    node_count: int
    duration: float
    kind: str = "backward_end"


@dataclass(frozen=True)
class GradAccumulatedEvent:
    tensor_id: int
    name: Optional[str]
    first: bool
    kind: str = "grad_accumulated"
    tensor: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class HookEvent:
    target: str          # "tensor", "module" or "optimizer"
    name: str
    kind: str = "hook"


@dataclass(frozen=True)
class ModuleForwardEvent:
    phase: str           # "enter" or "exit"
    path: str
    module_type: str
    input_shapes: tuple
    output_shapes: tuple
    kind: str = "module_forward"
    instance: Any = field(default=None, repr=False, compare=False)  # the module, during delivery only


@dataclass(frozen=True)
class ParamStep:
    """What one optimizer step did to one parameter."""

    name: str
    lr: float
    grad_norm: float
    update_norm: float
    param_norm: float
    update_ratio: float
    state: dict


@dataclass(frozen=True)
class OptimizerStepEvent:
    """One optimizer step; ``params`` holds a :class:`ParamStep` per updated parameter when
    ``summarised`` (see ``summary_rate`` in :func:`subscribe`), else nothing. ``source`` is the
    optimizer itself, during delivery only (so a view can follow one optimizer among several)."""

    optimizer: str
    step: int
    params: tuple
    kind: str = "optimizer_step"
    summarised: bool = True
    source: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ZeroGradEvent:
    optimizer: str
    kind: str = "zero_grad"


@dataclass(frozen=True)
class MarkEvent:
    name: str
    values: dict
    kind: str = "mark"


# --- tensor statistics --------------------------------------------------------
class TensorStats(NamedTuple):
    """Summary numbers of a tensor's values (finite values only for mean/std/min/max/norm);
    immutable, and cheap to make by the thousand (a big graph's parameters)."""

    shape: tuple
    mean: float
    std: float
    min: float
    max: float
    norm: float
    nan_count: int
    inf_count: int
    histogram: tuple          # counts per bin
    bin_edges: tuple

    def to_dict(self):
        return {"shape": list(self.shape), "mean": self.mean, "std": self.std, "min": self.min,
                "max": self.max, "norm": self.norm, "nan_count": self.nan_count, "inf_count": self.inf_count,
                "histogram": list(self.histogram), "bin_edges": list(self.bin_edges)}


HISTOGRAM_SAMPLE = 8192


def tensor_stats(tensor, bins=16):
    """Statistics of ``tensor`` (a Tensor or a backend array), computed on the host: mean,
    std, min, max and norm over the finite values, the NaN and inf counts, and a histogram
    (of an evenly strided sample of at most ``HISTOGRAM_SAMPLE`` values for large tensors).

    Sums run in the tensor's own float32 or float64 (other dtypes as float64) and in float64
    across blocks (see :func:`block_sums`): without a float64 copy of a large tensor."""
    values = host_values(tensor)
    shape = tuple(values.shape)
    finite = float_values(values)
    nan_count = inf_count = 0
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (math.nan, math.nan)
    if not (math.isfinite(low) and math.isfinite(high)):   # min and max propagate NaN; an inf is one of them
        finite, nan_count, inf_count = split_finite(finite)
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
    if not finite.size:
        return TensorStats(shape, *(math.nan,) * 5, nan_count, inf_count, (0,) * bins, (0.0,) * (bins + 1))
    mean, std = _mean_std(finite, max(-low, high))
    norm = math.sqrt(finite.size) * math.hypot(mean, std)
    counts, edges = _histogram(finite[::-(-finite.size // HISTOGRAM_SAMPLE)], bins, low, high)
    return TensorStats(shape, mean, std, low, high, norm, nan_count, inf_count, counts, edges)


_BATCH_VALUES = 1 << 16    # values per pass of the batched statistics (bounds their float64 copies)


def small_blocks(hosts, by_shape=False):
    """``(positions, block)`` for the small float arrays among ``hosts`` (NumPy arrays of at
    most SUM_BLOCK float32 or float64 values), whose statistics :func:`stats_rows` computes
    together (the parameters of a big graph): those of one size and dtype (of one shape, with
    ``by_shape``) stacked into blocks of about _BATCH_VALUES values, one row (or one stacked
    array) each."""
    kinds = {}
    for position, values in enumerate(hosts):
        kind = values.dtype.char                     # (float32 "f", float64 "d")
        if (kind == "f" or kind == "d") and 0 < values.size <= SUM_BLOCK:
            kinds.setdefault((values.shape if by_shape else values.size, kind), []).append(position)
    for positions in kinds.values():
        size = hosts[positions[0]].size
        per_block = max(1, _BATCH_VALUES // size)
        for first in range(0, len(positions), per_block):
            chunk = positions[first:first + per_block]
            yield chunk, np.array([hosts[p] if by_shape else hosts[p].reshape(size) for p in chunk])


def stats_rows(block, bins):
    """The statistics of each row of ``block`` (a float32 or float64 array, one tensor per
    row of at most SUM_BLOCK values) as columns, the way :func:`tensor_stats` computes them
    for one: ``(usable, mean, std, min, max, norm, histogram, bin_edges)``, lists of Python
    numbers (histogram: a list per row) but ``bin_edges``, an array with a row per tensor.
    ``usable`` is False for the rows whose values are not all finite, or whose numbers are
    not (leave those to tensor_stats)."""
    count, size = block.shape[0], block[0].size
    values = block.reshape(count, size)
    low, high = values.min(axis=1), values.max(axis=1)
    wide_low, wide_high = low.astype(np.float64), high.astype(np.float64)
    extent = np.maximum(-wide_low, wide_high)
    usable = np.isfinite(wide_low) & np.isfinite(wide_high)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # in units of the largest size where squares could overflow or underflow, as _mean_std
        rescaled = usable & _rescaled(size, extent)
        unit = np.where(rescaled, extent, 1.0)
        scaled = values / unit.astype(values.dtype)[:, None] if rescaled.any() else values
        # mean and variance from float64 sums; where the mean dwarfs the spread, about the mean
        # rounded to the values' type (the corrected two-pass formula of _mean_std)
        unscaled = values.astype(np.float64)
        wide = unscaled if scaled is values else scaled.astype(np.float64)
        mean = wide.sum(axis=1) / size
        variance = np.einsum("ij,ij->i", wide, wide) / size - mean * mean
        recentre = variance < mean * mean
        if recentre.any():
            shift = mean.astype(values.dtype)
            offsets = (scaled - shift[:, None]).astype(np.float64)
            offset = offsets.sum(axis=1) / size
            mean = np.where(recentre, shift.astype(np.float64) + offset, mean)
            variance = np.where(recentre, np.einsum("ij,ij->i", offsets, offsets) / size - offset * offset,
                                variance)
        std = np.sqrt(np.maximum(variance, 0.0))
        mean, std = mean * unit, std * unit
        norm = math.sqrt(size) * np.hypot(mean, std)
        usable &= np.isfinite(mean) & np.isfinite(std) & np.isfinite(norm)
        # histograms: _histogram's edges for every row at once
        lower = np.where(wide_low == wide_high, wide_low - 0.5, wide_low)
        upper = np.where(wide_low == wide_high, wide_high + 0.5, wide_high)
        width = (upper - lower) / bins
        edges = np.arange(bins + 1) * width[:, None] + lower[:, None]
        edges[:, -1] = upper
        edges = edges.astype(values.dtype)
        estimate = (unscaled - lower[:, None]) / width[:, None]    # (a row with an inf: NaN)
    position = _bin_positions(values, edges, estimate) + (np.arange(count) * bins)[:, None]
    counts = np.bincount(position.reshape(-1), minlength=count * bins).reshape(count, bins)
    return (usable.tolist(), mean.tolist(), std.tolist(), low.tolist(), high.tolist(), norm.tolist(),
            counts.tolist(), edges)


def _bin_positions(values, edges, estimate):
    """The bin of each of ``values`` (a row per array): how many inner edges of its row of
    ``edges`` (in the values' type) lie at or below it. Found from ``estimate`` (the bin as
    arithmetic puts it, off by rounding) and moved until the edges each side agree: a few
    gathers per value rather than a comparison with every edge."""
    bins = edges.shape[1] - 1
    padded = edges.copy()
    padded[:, 0], padded[:, -1] = -np.inf, np.inf             # the outer edges hold everything
    flat = padded.reshape(-1)
    row = (np.arange(len(edges)) * (bins + 1))[:, None]
    with np.errstate(invalid="ignore"):                        # (NaN, in a row with an inf, casts to anything)
        position = np.floor(estimate).astype(np.intp)
    np.clip(position, 0, bins - 1, out=position)
    while True:      # (an inf stays in the last bin: its array's statistics are taken one by one)
        at = row + position
        moved = position + (values >= flat.take(at + 1)) - (values < flat.take(at))
        np.clip(moved, 0, bins - 1, out=moved)
        if np.array_equal(moved, position):
            return position
        position = moved


def host_values(tensor):
    """A Tensor's (or backend array's) values as a NumPy array on the host; a sparse COO
    tensor's are its stored values (a dense copy could be far larger than the tensor)."""
    array = getattr(tensor, "_array", tensor)
    if type(array) is CooArray:
        array = array.values
    if not isinstance(array, (np.ndarray, np.generic)):
        # (NumPy turns 0-d results into scalars, np.float32, so a gradient flowing through
        # the engine may be one; no backend claims those, and none needs to)
        from .backends import backend_of
        array = backend_of(array).to_numpy(array)
    return np.asarray(array)


def float_values(values):
    """``values`` flattened, as float32 or float64 (other dtypes become float64)."""
    flat = values.reshape(-1)
    return flat if flat.dtype == np.float32 or flat.dtype == np.float64 else flat.astype(np.float64)


def split_finite(flat):
    """The finite ones of flat float values, and the counts of NaN and inf left out."""
    nan_count = int(np.isnan(flat).sum())
    finite = flat[np.isfinite(flat)]
    return finite, nan_count, flat.size - finite.size - nan_count


def _rescaled(size, extent):
    """Whether the squares of ``size`` values as large as ``extent`` could overflow or underflow
    (numbers or, elementwise, arrays)."""
    return (extent != 0) & ((extent < 1e-12) | (size * extent * extent > 1e37))


def _small_sums(values):
    """Σx and Σx² of at most SUM_BLOCK float values, in float64 (what :func:`stats_rows`
    computes for many such tensors at once)."""
    wide = values.astype(np.float64)
    return float(np.add.reduce(wide)), float(np.dot(wide, wide))


def _mean_std(values, extent):
    """Mean and standard deviation of finite float values whose largest size is ``extent``;
    in units of ``extent`` where squares could overflow or underflow."""
    if _rescaled(values.size, extent):
        mean, std = _mean_std(values / values.dtype.type(extent), 1.0)
        return mean * extent, std * extent
    sums = _small_sums if values.size <= SUM_BLOCK else block_sums
    total, squares = sums(values)
    mean = total / values.size
    variance = squares / values.size - mean * mean
    if variance < mean * mean:
        # the mean dwarfs the spread, and the difference of squares lost its digits: sum
        # squares about the mean instead (the corrected two-pass formula)
        shift = values.dtype.type(mean)
        total, squares = sums(values - shift)
        offset = total / values.size                    # the mean is shift + offset
        mean, variance = float(shift) + offset, squares / values.size - offset * offset
    return mean, math.sqrt(max(variance, 0.0))


SUM_BLOCK = 4096


def block_sums(values):
    """Σx and Σx² of flat float values: vectorised in their own type (einsum, BLAS) within
    blocks of SUM_BLOCK values, added up across blocks in float64, so that rounding errors
    stay those of one block however large the tensor."""
    if values.size <= SUM_BLOCK:
        return float(np.einsum("i->", values)), float(np.dot(values, values))
    whole = values.size - values.size % SUM_BLOCK
    blocks, rest = values[:whole].reshape(-1, SUM_BLOCK), values[whole:]
    total = float(np.einsum("ij->i", blocks).sum(dtype=np.float64)) + float(np.einsum("i->", rest))
    squares = float(np.vecdot(blocks, blocks).sum(dtype=np.float64)) + float(np.dot(rest, rest))
    return total, squares


def _histogram(values, bins, low, high):
    """What ``np.histogram(values, bins, (low, high))`` counts (``low == high`` widened by 0.5
    each way), without its overhead: edges in the values' float type, bin i holding
    [edges[i], edges[i + 1]) and the last one also its right edge."""
    if low == high:
        low, high = low - 0.5, high + 0.5
    edges = np.arange(bins + 1) * ((high - low) / bins) + low     # np.linspace's arithmetic, without its overhead
    edges[-1] = high
    edges = edges.astype(values.dtype)
    # how many values lie below each inner edge: a binary search per edge in the sorted values
    # (one per value would stall on its unpredictable branches); a bin holds those between
    below = [0, *np.sort(values).searchsorted(edges[1:-1]).tolist(), values.size]
    counts = tuple(upper - lower for lower, upper in zip(below, below[1:]))
    return counts, tuple(edges.tolist())


# --- subscriptions ----------------------------------------------------------------
class SummaryBudget:
    """At most ``rate`` summaries per second, as a budget of one second's worth (at least
    one) that refills at ``rate`` per second and starts full: a short run (the first
    ``rate`` steps) has every step's numbers, a long one ``rate`` a second on average.
    (A minimum interval instead would summarise one step of a fast burst, so a chart of
    the first steps would hold a single point.) ``rate=None``: every step.
    """

    def __init__(self, rate):
        self.rate = rate
        self.capacity = None if rate is None else max(1.0, float(rate))
        self._tokens = self.capacity
        self._at = None

    def take(self, now):
        """Whether a summary is due at time ``now`` (seconds, monotonic); if so, it is spent."""
        if self.rate is None:
            return True
        if self._at is not None:
            self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class Subscription:
    """A subscribed callback; ``close()`` (or leaving the ``with`` block) unsubscribes it."""

    def __init__(self, callback, kinds, strict, summary_rate=None):
        self.callback = callback
        self.kinds = kinds
        self.strict = strict
        self.closed = False
        self.summary_rate = summary_rate
        self._summaries = SummaryBudget(summary_rate)

    def _summary_due(self, now):
        """Whether this listener asks for the costly numbers of the event about to be made
        (see :class:`SummaryBudget`); asking counts as getting them."""
        return self._summaries.take(now)

    def close(self):
        if not self.closed:
            self.closed = True
            _bus.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        name = getattr(self.callback, "__qualname__", repr(self.callback))
        return f"<Subscription {name} kinds={sorted(self.kinds) if self.kinds else 'all'}>"


def subscribe(callback, kinds=None, strict=False, summary_rate=None):
    """Call ``callback(event)`` for every event (or only those whose ``kind`` is in ``kinds``).

    ``summary_rate``: how many times per second at most this listener needs the
    per-parameter numbers of ``optimizer_step`` events (norms of every gradient, update
    and parameter: a pass over each). None, the default, asks for them at every step; with
    a rate (a :class:`SummaryBudget`: the first ``summary_rate`` steps all have them, then
    ``summary_rate`` a second), the other steps' events arrive with ``summarised=False`` and no ``params``,
    unless another listener asked for them. Views that draw at a bounded rate pass it here.

    Returns a :class:`Subscription`, also usable as a context manager.
    """
    if not callable(callback):
        raise TypeError(f"subscribe needs a callable, got {type(callback).__name__}")
    if kinds is not None:
        kinds = frozenset([kinds] if isinstance(kinds, str) else kinds)
        unknown = kinds - KINDS
        if unknown:
            raise ValueError(f"unknown event kinds {sorted(unknown)}; the kinds are {sorted(KINDS)}")
    if summary_rate is not None and not summary_rate > 0:
        raise ValueError(f"subscribe: summary_rate must be a positive number of times per second or None, "
                         f"got {summary_rate!r}")
    subscription = Subscription(callback, kinds, strict, summary_rate)
    _bus.add(subscription)
    return subscription


class _Observation:
    """The handle :func:`observe` returns; ``close()`` detaches the observer."""

    def __init__(self, observer):
        self.observer = observer
        self._detach = observers.attach(observer)

    @property
    def closed(self):
        return self._detach is None

    def close(self):
        if self._detach is not None:
            self._detach()
            self._detach = None


def observe(observer):
    """Attach ``observer`` beside the bus: an object with the engine's callbacks (those of
    :class:`vizgrad.autograd.observers.Observer`, which it may subclass, and ``wants(kind)``),
    called with the engine's own objects during each op and backward step, and no event
    made for it. The fast path of vizgrad's own recorder, which needs the tensors of every
    op: it may keep them only while it records their iteration (the recorder binds a
    repeated training step's tensors when a graph is asked for), and an exception it
    raises reaches the user's code.
    Returns a handle whose ``close()`` detaches it."""
    return _Observation(observer)


Observer = observers.Observer


def mark(name, **values):
    """Record a user event, e.g. ``mark("epoch", epoch=3, loss=0.12)``: dashboards plot these."""
    if _bus.subscriptions:
        clean = {key: (value.item() if hasattr(value, "item") and getattr(value, "ndim", 1) == 0 else value)
                 for key, value in values.items()}
        _bus.emit(MarkEvent(name, clean))


_TENSOR_FIELDS = {"op": ("inputs", "outputs", "arguments"), "node_backward": ("grads", "grad_outputs"),
                  "grad_accumulated": ("tensor",), "module_forward": ("instance",),
                  "optimizer_step": ("source",)}


def _release_tensors(event):
    """Drop the tensors an event carried during delivery, so a listener that keeps the event
    does not keep them (and their memory) alive."""
    names = _TENSOR_FIELDS.get(event.kind)
    if names:
        state = event.__dict__    # the frozen dataclass's own storage: no object.__setattr__ per field
        for name in names:
            state[name] = None


def _shapes(values):
    if hasattr(values, "_array"):
        return (tuple(values.shape),)
    if isinstance(values, (tuple, list)):
        return tuple(tuple(v.shape) for v in values if hasattr(v, "_array"))
    return ()


def _module_path():
    """The innermost running module's path ('' outside any; see ``nn.module.current_module_path``)."""
    global _module_path
    from .nn.module import current_module_path     # imported once: the engine must not import us first
    _module_path = current_module_path
    return current_module_path()


_device_names = {}    # array type -> its device's name, for backends with one device


def _device_name(tensor):
    name = _device_names.get(type(tensor._array))
    if name is None:
        name = str(tensor.device)
        if not tensor._backend().multi_device:
            _device_names[type(tensor._array)] = name
    return name


def _maker(cls):
    """A constructor of the frozen event class ``cls`` from the values of all its fields, in
    order, for the events made at every op: it fills the instance's ``__dict__`` at once,
    where the dataclass's ``__init__`` pays one ``object.__setattr__`` per field (twice the cost)."""
    names = tuple(each.name for each in fields(cls))
    new = object.__new__

    def make(*values):
        event = new(cls)
        event.__dict__.update(zip(names, values))
        return event
    return make


_op_event, _node_backward_event = _maker(OpEvent), _maker(NodeBackwardEvent)
_grad_accumulated_event, _module_forward_event = _maker(GradAccumulatedEvent), _maker(ModuleForwardEvent)


class _Bus(observers.Observer):
    """The one observer the engine sees; it turns engine callbacks into events.

    Each kind's listeners are kept as a tuple, rebuilt when subscriptions change, so that an
    event costs one dictionary look-up and one call per listener that asked for its kind, and
    nothing at all is built for a kind nobody asked for."""

    def __init__(self):
        self.subscriptions = []
        self._detach = None
        self._backward_index = 0
        self._wanted = frozenset()
        self._listeners = {}      # kind -> tuple of the subscriptions that receive it

    def add(self, subscription):
        self.subscriptions.append(subscription)
        self._refresh()

    def remove(self, subscription):
        if subscription in self.subscriptions:
            self.subscriptions.remove(subscription)
        self._refresh()

    def _refresh(self):
        self._listeners = {kind: tuple(s for s in self.subscriptions if s.kinds is None or kind in s.kinds)
                           for kind in KINDS}
        self._wanted = frozenset(kind for kind, listeners in self._listeners.items() if listeners)
        if self.subscriptions and self._detach is None:
            self._detach = observers.attach(self)
        elif not self.subscriptions and self._detach is not None:
            self._detach()
            self._detach = None
        else:
            observers.refresh()        # the kinds wanted changed: route the engine's callbacks again

    def emit(self, event):
        try:
            for subscription in self._listeners.get(event.kind, ()):
                if subscription.closed:       # closed by an earlier listener of this very event
                    continue
                try:
                    subscription.callback(event)
                except Exception as error:
                    if subscription.strict:
                        raise
                    subscription.close()
                    warnings.warn(f"vizgrad.events: listener {subscription.callback!r} raised "
                                  f"{type(error).__name__}: {error}; it was unsubscribed", RuntimeWarning,
                                  stacklevel=2)
        finally:
            _release_tensors(event)

    # --- engine callbacks ---------------------------------------------------------
    def wants(self, kind):
        if kind == "optimizer_summaries":     # asked once per optimizer step, before it is taken
            now = time.monotonic()
            due = False
            for subscription in self._listeners.get("optimizer_step", ()):
                due = subscription._summary_due(now) or due
            return due
        return kind in self._wanted

    def op_applied(self, node, op, inputs, outputs, seconds):
        if "op" not in self._wanted:
            return
        if type(outputs) is tuple:
            output_list, first = outputs, outputs[0]
        else:
            output_list, first = (outputs,), outputs
        tensors = tuple(value for value in inputs if hasattr(value, "_array"))
        self.emit(_op_event(op.__name__, node.id if node is not None else None, tuple(t.uid for t in tensors),
                            tuple(o.uid for o in output_list), first.shape, first.dtype.name, _device_name(first),
                            _module_path(), seconds, "op", tensors, output_list, inputs))

    def backward_started(self, roots):
        self._backward_index = 0
        if "backward_start" in self._wanted:
            self.emit(BackwardStartEvent(tuple(root.uid for root in roots)))

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        index = self._backward_index
        self._backward_index += 1
        if "node_backward" in self._wanted:
            self.emit(_node_backward_event(node.id, node.op.__name__, index,
                                           tuple(tuple(g.shape) if g is not None else None for g in grad_inputs),
                                           seconds, "node_backward", tuple(grad_inputs), tuple(grad_outputs)))

    def grad_accumulated(self, tensor, first):
        if "grad_accumulated" in self._wanted:
            self.emit(_grad_accumulated_event(tensor.uid, tensor.name, first, "grad_accumulated", tensor))

    def backward_finished(self, roots, node_count, seconds):
        if "backward_end" in self._wanted:
            self.emit(BackwardEndEvent(tuple(root.uid for root in roots), node_count, seconds))

    def module_entered(self, module, args):
        self._module_forward(module, "enter", args, None)

    def module_exited(self, module, args, output):
        self._module_forward(module, "exit", args, output)

    def _module_forward(self, module, phase, args, output):
        if "module_forward" in self._wanted:
            self.emit(_module_forward_event(phase, module._qualified_name, type(module).__name__,
                                            _shapes(tuple(args)), _shapes(output) if output is not None else (),
                                            "module_forward", module))

    def optimizer_step(self, optimizer, summaries):
        if "optimizer_step" in self._wanted:
            step = max((s.get("step", 0) for s in optimizer.state.values()), default=0)
            params = () if summaries is None else tuple(ParamStep(**summary) for summary in summaries)
            self.emit(OptimizerStepEvent(type(optimizer).__name__, step, params, summarised=summaries is not None,
                                         source=optimizer))

    def hook_ran(self, target, name):
        if "hook" in self._wanted:
            self.emit(HookEvent(target, name))

    def zero_grad(self, optimizer):
        if "zero_grad" in self._wanted:
            self.emit(ZeroGradEvent(type(optimizer).__name__))


_bus = _Bus()


def listening(kind):
    """Whether someone subscribed to ``kind`` (lets producers skip costly summaries)."""
    return _bus.wants(kind)
