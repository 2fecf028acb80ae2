"""How tensors print: PyTorch's layout and number formatting, then what autograd knows.

The text is PyTorch's (``torch/_tensor_str.py`` describes the same rules): one width for
every element, chosen from the non-zero finite values; floats print with ``precision``
decimals, as integers with a trailing ``.`` when all are whole, or in scientific notation
when their magnitudes span more than 1000x (or exceed 1e8, or go below 1e-4); lines wrap
at ``linewidth`` characters; over ``threshold`` elements, only ``edgeitems`` at each edge
of every dimension print, with ``...`` between. Objects name the module they come from:
``dtype=vizgrad.float64`` and ``vizgrad.Size([2, 3])``, where PyTorch writes ``torch.``.

Example::

    vizgrad.tensor([4.5, 0.01])          # tensor([4.5000, 0.0100])
    vizgrad.set_printoptions(precision=2)
"""

import math
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .errors import ShapeError, format_shape


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: above this many elements, print a summary (default 1000).
        edgeitems: items printed at each edge of a summarised dimension (default 3).
        linewidth: characters per line (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` (never summarise); the other
            arguments override it.
        sci_mode: True or False forces scientific notation on or off; None (the default)
            chooses per tensor.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {', '.join(map(repr, _PROFILES))}, "
                             f"got {profile!r}")
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                       ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, key, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as a dict (``torch._tensor_str.get_printoptions``)."""
    return dict(vars(PRINT_OPTS))


class _Formatter:
    """One width and style for every element of a (summarised) array of values."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        precision = PRINT_OPTS.precision
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
        else:
            shown = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if shown.size:
                magnitudes = np.abs(shown)
                smallest, largest = magnitudes.min(), magnitudes.max()
                self.int_mode = bool(np.all(shown == np.ceil(shown)))
                # (largest > 1000 · smallest: largest / smallest overflows for subnormal smallest)
                self.sci_mode = bool(largest > 1000.0 * smallest or largest > 1.0e8 or smallest < 1.0e-4) \
                    if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
                if self.sci_mode:
                    pattern, extra = f"{{:.{precision}e}}", 0
                elif self.int_mode:       # whole numbers print with a trailing "."
                    pattern, extra = "{:.0f}", 1
                else:
                    pattern, extra = f"{{:.{precision}f}}", 0
                for value in shown.tolist():
                    self.max_width = max(self.max_width, len(pattern.format(value)) + extra)

    def format(self, value):
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(values):
    """Only the edge items of every dimension (what a summary prints)."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        return np.concatenate((values[:edge], values[-edge:])) if values.shape[0] > 2 * edge else values
    if not edge:
        return values[tuple(slice(0, 0) for _ in values.shape)]
    rows = list(range(edge)) + list(range(values.shape[0] - edge, values.shape[0])) \
        if values.shape[0] > 2 * edge else range(values.shape[0])
    return np.stack([_summarized(values[i]) for i in rows])


def _vector(values, indent, summarize, formatter):
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in values[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in values[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, formatter):
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    if summarize and values.shape[0] > 2 * edge:
        slices = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(edge)] + ["..."]
                  + [_nested(values[i], indent + 1, summarize, formatter)
                     for i in range(values.shape[0] - edge, values.shape[0])])
    else:
        slices = [_nested(values[i], indent + 1, summarize, formatter) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_values(values, floating, indent):
    """The bracketed values of a NumPy array as PyTorch prints them (no ``tensor(`` around)."""
    if values.size == 0:
        return "[]"
    if floating and values.dtype.itemsize == 2:     # float16 and bfloat16 print through float32, as in PyTorch
        values = values.astype(np.float32)
    summarize = values.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized(values) if summarize else values, floating)
    return _nested(values, indent, summarize, formatter)


def _with_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(tensor, prefix="tensor("):
    """``tensor([1., 2.], requires_grad=True)`` or ``tensor(3., grad_fn=<MulBackward0>)``."""
    from .device import get_default_device
    if tensor.is_sparse:     # indices, values, size and nnz (ops/sparse.py)
        from .ops.sparse import sparse_repr  # lazy: the ops import Tensor, which prints through this module
        return sparse_repr(tensor)
    values = np.asarray(tensor._backend().to_numpy(tensor._array))
    indent = len(prefix)
    suffixes = []
    device = tensor.device
    if device.type != get_default_device().type or (device.type == "cuda" and (device.index or 0) != 0):
        suffixes.append(f"device='{device}'")
    dtype = tensor.dtype
    default_float = dtypes.default_float
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not default_float:
            suffixes.append(f"dtype={dtype!r}")
    elif dtype not in (default_float, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={dtype!r}")
    body = format_values(values, dtype.is_floating_point, indent)
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    if tensor.name:
        suffixes.append(f"name={tensor.name!r}")
    return _with_suffixes(prefix + body, suffixes, indent)


class FormatShapeError(ShapeError, TypeError):
    """A number format applied to a tensor with more than one value (PyTorch raises TypeError)."""


def format_tensor(tensor, spec):
    """``format(t, ".4f")``: a 0-d tensor formats as its Python number, as in PyTorch; any
    other tensor formats only with the empty spec (its repr)."""
    if tensor.ndim == 0:
        return format(tensor.item(), spec)
    if spec:
        raise FormatShapeError(
            f"unsupported format string {spec!r} for a tensor of shape {format_shape(tensor.shape)}: only "
            "0-d tensors format as a number (format tensor.item(), or each element of tensor.tolist())")
    return repr(tensor)
