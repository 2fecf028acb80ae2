"""What the recorder keeps of tensors' values and gradients: statistics (``stats_dict``: mean, norm,
histogram, a few values and a heatmap's cells), computed in blocks for many small tensors
(``stats_dicts``), and :class:`_Frame`, the references to one iteration's arrays from which
they are computed when a graph is read.
"""

import functools
import math

import numpy as np

from .. import events

SAMPLE_SIZE = 6      # values kept of every tensor (the first ones, flattened)
SUMMARY_KEYS = ("shape", "mean", "norm", "min", "max", "nan_count", "inf_count", "sample")   # of summary_dict
MATRIX_SIZE = 16     # a 2-D tensor keeps at most this many of its rows and columns


def stats_dict(tensor, bins=16, detail=True):
    """:func:`vizgrad.events.tensor_stats` as JSON-ready data (non-finite numbers become None).

    With ``detail``, also ``sample`` (the first :data:`SAMPLE_SIZE` values, flattened) and,
    for 2-D tensors, ``matrix``: at most :data:`MATRIX_SIZE` evenly spaced rows and columns
    of the values (``matrix_rows`` / ``matrix_cols`` say which), for heatmaps.
    """
    host = events.host_values(tensor)
    data = _json_stats(events.tensor_stats(host, bins))
    if detail:
        data["sample"] = _finite_lists(host.reshape(-1)[:SAMPLE_SIZE])
        if host.ndim == 2 and host.size:
            data.update(_heatmap_fields(host[None])[0])
    return data


def stats_dicts(tensors, bins=16):
    """:func:`stats_dict` of each of ``tensors``, the small float ones of one shape and dtype
    computed together (:func:`vizgrad.events.stats_rows`, the many small parameters of a big
    graph): statistics, samples and heatmaps in a few NumPy passes per shape, and each dict
    made once from those columns. The others, and any with a value that is not finite, one by one."""
    hosts = [array if type(array) is np.ndarray else events.host_values(array)
             for array in (getattr(tensor, "_array", tensor) for tensor in tensors)]
    dicts = [None] * len(hosts)
    for positions, block in events.small_blocks(hosts, by_shape=True):
        shape = list(block.shape[1:])
        flat = block.reshape(len(positions), -1)
        samples = flat[:, :SAMPLE_SIZE].astype(np.float64).tolist()
        heatmap = _heatmap_fields(block) if block.ndim == 3 else None
        columns = zip(positions, *events.stats_rows(flat, bins)[:-1], samples, heatmap or samples)
        for position, usable, mean, std, low, high, norm, counts, sample, matrix in columns:
            if usable:
                data = dicts[position] = {
                    "shape": shape, "mean": mean, "std": std, "min": low, "max": high, "norm": norm,
                    "nan_count": 0, "inf_count": 0, "histogram": counts, "sample": sample}
                if heatmap is not None:
                    data.update(matrix)
    return [data if data is not None else stats_dict(host, bins) for data, host in zip(dicts, hosts)]


def _json_stats(stats):
    """TensorStats as Graph JSON: non-finite numbers None, and no bin edges (the histogram's
    bins divide [min, max] evenly, see ``graph.schema.json``)."""
    numbers = [value if math.isfinite(value) else None
               for value in (stats.mean, stats.std, stats.min, stats.max, stats.norm)]
    return {"shape": list(stats.shape), **dict(zip(("mean", "std", "min", "max", "norm"), numbers)),
            "nan_count": stats.nan_count, "inf_count": stats.inf_count, "histogram": list(stats.histogram)}


def _heatmap_fields(matrices):
    """The heatmap fields of each of ``matrices`` (an array of 2-D tensors of one shape):
    ``matrix``, at most MATRIX_SIZE evenly spaced rows and columns of its values, row by row
    in one flat list (rounded, see :func:`_heatmaps`), and ``matrix_rows`` / ``matrix_cols``,
    which ones (absent when it shows them all)."""
    rows, cols = _spaced(matrices.shape[1]), _spaced(matrices.shape[2])
    if len(rows) == matrices.shape[1] and len(cols) == matrices.shape[2]:
        return [{"matrix": matrix} for matrix in _heatmaps(matrices)]
    rows, cols = rows.tolist(), cols.tolist()
    return [{"matrix": matrix, "matrix_rows": list(rows), "matrix_cols": list(cols)}
            for matrix in _heatmaps(matrices.take(rows, axis=1).take(cols, axis=2))]


def summary_dict(tensor):
    """Cheap statistics of a gradient (what an edge of the graph records): shape, mean, norm,
    min, max, NaN/inf counts and ``sample``; no histogram, and vectorised sums instead of
    a float64 copy when every value is finite. Non-finite statistics become None."""
    values = events.host_values(tensor)
    flat = events.float_values(values)
    with np.errstate(over="ignore", invalid="ignore"):   # overflow is handled below
        total, squares = events.block_sums(flat)
    nan_count = inf_count = 0
    finite = flat
    if not math.isfinite(squares):
        finite, nan_count, inf_count = events.split_finite(flat)
        finite = finite.astype(np.float64)           # float64: finite values whose squares overflowed float32
        total, squares = events.block_sums(finite)
    if finite.size:
        summary = [total / finite.size, math.sqrt(squares), float(finite.min()), float(finite.max())]
    else:
        summary = [math.nan] * 4
    mean, norm, low, high = (value if math.isfinite(value) else None for value in summary)
    return {"shape": list(values.shape), "mean": mean, "norm": norm, "min": low, "max": high,
            "nan_count": nan_count, "inf_count": inf_count, "sample": _finite_lists(flat[:SAMPLE_SIZE])}


def _raw(value):
    """A Tensor's backend array (or the array itself)."""
    return getattr(value, "_array", value)


@functools.lru_cache(maxsize=256)
def _spaced(length):
    """At most MATRIX_SIZE evenly spaced indices of ``range(length)``, first and last included."""
    indices = np.unique(np.linspace(0, length - 1, min(length, MATRIX_SIZE)).round().astype(np.int64))
    indices.flags.writeable = False     # shared by every caller
    return indices


def _heatmaps(cells):
    """Matrices ``cells[i]`` as flat lists of floats, row by row, each rounded to about four
    significant digits of its largest size (short JSON; a heatmap shows no more), None where
    not finite."""
    cells = np.asarray(cells, dtype=np.float64).reshape(len(cells), -1)
    finite = np.isfinite(cells)
    every = finite.all()
    largest = np.abs(cells if every else np.where(finite, cells, 0.0)).max(axis=1, keepdims=True)
    # np.round(x, d) per matrix: rint(x * 10**d) / 10**d, or rint(x / 10**-d) * 10**-d when d < 0;
    # left alone when zero or subnormal (10**d would overflow)
    tiny = largest <= 1e-300
    decimals = 3 - np.floor(np.log10(np.where(tiny, 1.0, largest)))
    with np.errstate(over="ignore", invalid="ignore"):
        if (decimals >= 0).all():                    # (no value of 10,000 or more: one way suffices)
            scale = 10.0 ** decimals
            rounded = np.rint(cells * scale) / scale
        else:
            scale = 10.0 ** np.abs(decimals)
            rounded = np.where(decimals >= 0, np.rint(cells * scale) / scale, np.rint(cells / scale) * scale)
    if tiny.any():
        rounded = np.where(tiny, cells, rounded)
    return rounded.tolist() if every else np.where(finite, rounded, None).tolist()


def _finite_lists(values):
    """``values`` (an array) as (nested) lists of floats, None where not finite."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    return values.tolist() if finite.all() else np.where(finite, values, None).tolist()


class _Frame:
    """What one iteration recorded for the statistics: references to arrays, never statistics.

    Statistics are computed from these when the graph is materialised (:meth:`Recorder.result`),
    once per array (cached here), so a training loop pays for them at the rate views draw,
    not at every op of every step. Only two frames live: the iteration being recorded and the
    last finished one."""

    __slots__ = ("values", "numbers", "grads", "edge_grads", "order", "roots", "mutable", "frozen", "stats",
                 "revision", "earlier")

    def __init__(self):
        self.values = {}       # node id -> the array of its value (as the op produced it)
        self.numbers = {}      # constant node id -> the Python number an op was given this iteration
        self.grads = {}        # node id -> the array of its gradient
        self.earlier = set()   # node ids of leaves whose .grad also holds earlier backward passes' gradients
        self.edge_grads = {}   # id(edge) -> the array of the gradient that flowed back along it
        self.order = {}        # node id -> its backward index (insertion order is the backward order)
        self.roots = set()     # node ids of backward roots (drawn as outputs)
        self.mutable = []      # node ids whose value array may change in place later (leaves, views)
        self.frozen = {}       # id(array) -> (array, its copy) for logged ops' arrays (see Recorder._freeze_log)
        self.stats = {}        # (kind, id(array)) -> (array, statistics): each computed once
        self.revision = 0      # counts changes, so a materialised graph is reused while none happened

    def freeze_values(self, copy):
        """Copy the value arrays that the program may still change in place (leaves that an
        optimizer updates, views of them): what is kept is what the ops saw."""
        for node_id in self.mutable:
            array = self.values.get(node_id)
            if array is not None:
                self.values[node_id] = copy(array)
        self.mutable = []

    def statistics(self, array, kind):
        key = (kind, id(array))
        cached = self.stats.get(key)
        if cached is None:
            cached = self.stats[key] = (array, stats_dict(array) if kind == "full" else summary_dict(array))
        return cached[1]

    def number_statistics(self, number):
        key = ("number", type(number), number)
        cached = self.stats.get(key)
        if cached is None:
            cached = self.stats[key] = (number, stats_dict(np.asarray(number, dtype=np.float64)))
        return cached[1]

    def forget_backward(self):
        """Drop a backward pass (a view of one tensor shows its latest)."""
        self.grads, self.edge_grads, self.order, self.roots = {}, {}, {}, set()
        self.revision += 1


def _copy_array(array):
    """A copy on the array's own device."""
    if type(array) is np.ndarray:
        return array.copy()
    from ..backends import backend_of
    return backend_of(array).xp.asarray(array, copy=True)
