"""vmap's batching rules: how each op runs once on a whole batch.

A rule is ``rule(op, level, args, params)``: ``args`` and ``params`` as the op's ``apply``
got them, some arguments batched at ``level`` (:mod:`vizgrad.func.batched`). It applies the
op to the arguments' values (the batch dim first) and wraps the results at ``level``.

The ops that batch, by rule:

* elementwise (broadcasting): every op of ``ops.unary``, ``ops.hyperbolic``,
  ``ops.special_functions``, ``ops.binary``, ``ops.division``, ``ops.representation``,
  ``ops.bitwise`` and ``ops.compare`` (none takes a dim), the activations (``leaky_relu``,
  ``elu``, ``gelu``, ``silu``, ``softplus``, ``mish``, ``hardtanh``), the conversions (``to``,
  ``clone``, ``contiguous``), ``masked_fill``, ``tril``/``triu``, the incomplete gamma
  functions; ``dropout`` as ``randomness`` says.
* reductions and ops along dims (the dims shifted past the batch dim): ``sum``, ``mean``,
  ``prod``, ``var``, ``std``, ``amax``/``amin``/``max``/``min`` (with a dim or all dims),
  ``argmax``/``argmin``/``all``/``any`` along a dim, ``logsumexp``, ``norm``,
  ``count_nonzero``, ``cumsum``, ``cumprod``, ``cummax``/``cummin``, ``softmax``,
  ``log_softmax``, ``sort``, ``topk``, ``median``/``kthvalue``/``mode`` along a dim;
  ``squeeze``, ``unsqueeze``, ``transpose``, ``permute``, ``movedim``, ``reshape``,
  ``view``, ``flatten``, ``expand``, ``repeat``, ``flip``, ``narrow``, ``split``, ``chunk``,
  ``unbind``, ``Tensor.unfold``, ``cat``, ``stack``, ``gather``, ``scatter``,
  ``scatter_add``, ``index_select`` and ``index_add`` (an index shared by the samples),
  indexing ``x[key]`` (with a key shared by the samples);
* ``matmul`` (``@``, ``mm``, ``bmm``, ``mv``, ...), ``einsum`` and ``linear`` (batched weights
  too: the per-sample gradients of ``vmap(grad(f))``), ``embedding`` (a shared weight);
* losses: ``mse_loss``, ``huber_loss``, ``smooth_l1_loss``, ``binary_cross_entropy``
  (``_with_logits``), ``soft_margin_loss``, ``nll_loss`` and so ``cross_entropy``, each
  reduced per sample;
* ops whose first dim is the batch of images (convolutions, pooling, ``interpolate``,
  ``unfold``/``fold``, batch norm in eval mode): the vmap batch is folded into it, with
  shared weights; ``conv1d``/``2d``/``3d`` with per-sample weights too (one grouped convolution);
* custom :class:`~vizgrad.autograd.Function` classes that define PyTorch's ``vmap`` staticmethod.

* ``layer_norm``, ``group_norm``, ``instance_norm`` and ``batch_norm`` over each sample's batch (shared
  or per-sample parameters);

Every other op (linear algebra factorisations, ``pad``,
custom Functions without ``vmap``, indexing with a per-sample index, ...) runs once per
sample in a Python loop and its results are stacked, with a :class:`PerSampleWarning`
saying so: correct, only slower. Random ops other than dropout (``rand``, ``randn`` inside
the function) follow ``randomness`` too (``batched.random_draws``).
"""

import functools
import inspect
import string

from .. import creation
from ..autograd.function import Function, Op
from ..backends.base import _by_array_type
from ..errors import TransformError
from ..ops import (activation, binary, bitwise, compare, conv, conversion, division, gamma, index, linalg, loss,
                   normalization, pooling, reduce, shape, sorting, statistics, unary)
from ..ops import adaptive_pooling, contractions, resampling
from ..ops import joins, padding
from ..ops import cumulative, hyperbolic, representation, special_functions, truth
from ..ops import classification, gather_scatter, margin
from ..ops.index import _Key
from ..tensor import Tensor
from .batched import RANDOM_IN_ERROR_MODE, BatchedTensor, broadcast_batch, value_at, warn_per_sample, wrap


@functools.lru_cache(maxsize=None)
def _names(op):
    """The names of ``op.forward``'s parameters after ctx."""
    return tuple(inspect.signature(op.forward).parameters)[1:]


def _get(op, args, params, name):
    if name in params:
        return params[name]
    position = _names(op).index(name)
    return args[position] if position < len(args) else None


def _with(op, args, params, **changes):
    """``args`` and ``params`` with the named arguments of ``op.forward`` replaced."""
    args, params = list(args), dict(params)
    for name, value in changes.items():
        position = _names(op).index(name) if name not in params else len(args)
        if position < len(args):
            args[position] = value
        else:
            params[name] = value
    return args, params


def _wrap_all(out, level):
    if type(out) is tuple:
        return tuple(wrap(o, level) for o in out)
    return wrap(out, level)


def _padded(value, ndim):
    """A value (batch dim first) with size-1 dims after the batch dim, up to ``ndim`` dims per sample."""
    missing = ndim - (value.ndim - 1)
    if missing <= 0:
        return value
    return shape.reshape(value, (value.shape[0],) + (1,) * missing + tuple(value.shape[1:]))


def _value_or_broadcast(tensor, level):
    if type(tensor) in _by_array_type:      # an index array, as some public functions pass it to their op
        xp = _by_array_type[type(tensor)].xp
        return xp.broadcast_to(xp.expand_dims(tensor, axis=0), (level.size,) + tuple(tensor.shape))
    value = value_at(tensor, level)
    return broadcast_batch(tensor, level.size) if value is None else value


# --- the per-sample loop (every op without a rule) ----------------------------------------

def per_sample(function, *args, name):
    """``function`` applied to each sample of ``args`` (those batched at the innermost level
    among them), the results stacked at that level: vmap's slow path, with a warning."""
    level = max((arg._level for arg in args if type(arg) is BatchedTensor), key=lambda lv: lv.depth)
    if level.size == 0:
        raise TransformError(f"vmap: {name} has no batching rule and runs once per sample, but the batch is empty")
    warn_per_sample(name)
    pieces = [joins.unbind(value_at(arg, level), 0) if value_at(arg, level) is not None else None for arg in args]
    results = [function(*(piece[b] if piece is not None else arg for piece, arg in zip(pieces, args)))
               for b in range(level.size)]
    if type(results[0]) is tuple:
        return tuple(wrap(joins.stack([r[i] for r in results]), level) for i in range(len(results[0])))
    return wrap(joins.stack(results), level)


def fallback(op, level, args, params):
    """No rule: the op once per sample (batched keyword arguments too)."""
    batched = [position for position, arg in enumerate(args) if value_at(arg, level) is not None]
    keywords = [key for key, value in params.items() if value_at(value, level) is not None]

    def one(*samples):
        full, named = list(args), dict(params)
        for position, sample in zip(batched, samples):
            full[position] = sample
        for key, sample in zip(keywords, samples[len(batched):]):
            named[key] = sample
        return op.apply(*full, **named)

    return per_sample(one, *[args[p] for p in batched], *[params[k] for k in keywords], name=_op_name(op))


def _op_name(op):
    return f"{op.__name__} ({op.__module__.rsplit('.', 1)[-1]})"


# --- elementwise ------------------------------------------------------------------------

def elementwise(op, level, args, params):
    """Broadcasting ops: batched values get size-1 dims after the batch dim, so that every
    sample's dims line up with the unbatched arguments' from the right."""
    ndim = max(arg.ndim for arg in args if isinstance(arg, Tensor))
    values = [arg if value_at(arg, level) is None else _padded(value_at(arg, level), ndim) for arg in args]
    return _wrap_all(op.apply(*values, **params), level)


def dropout(op, level, args, params):
    if level.randomness == "error":
        raise TransformError(RANDOM_IN_ERROR_MODE)
    input, uniform = args[0], args[1]
    if level.randomness == "different" and value_at(uniform, level) is None:
        value = _value_or_broadcast(input, level)
        uniform = wrap(creation.rand(tuple(value.shape), dtype=input.dtype, device=input.device), level)
    return elementwise(op, level, (input, uniform) + tuple(args[2:]), params)


# --- ops along dims -----------------------------------------------------------------------

def _shift(dim):
    if dim is None or isinstance(dim, int):
        return dim + 1 if dim is not None and dim >= 0 else dim
    return tuple(d + 1 if d >= 0 else d for d in dim)


def along(*names, lifted=(0,)):
    """A rule for ops with dim arguments ``names``: they are shifted past the batch dim. The
    tensor arguments at ``lifted`` ("all": every one) are batched (an unbatched one is
    broadcast over the batch); the others must be shared by the samples."""
    def rule(op, level, args, params):
        positions = range(len(args)) if lifted == "all" else lifted
        values = list(args)
        for position, arg in enumerate(args):
            if position in positions and (isinstance(arg, Tensor) or type(arg) in _by_array_type):
                values[position] = _value_or_broadcast(arg, level)
            elif value_at(arg, level) is not None:
                return fallback(op, level, args, params)
        changes = {name: _get(op, args, params, name) for name in names}
        if any(value is None for value in changes.values()):     # over all dims (argmax()): no dim to shift
            return fallback(op, level, args, params)
        values, params = _with(op, values, params, **{name: _shift(value) for name, value in changes.items()})
        return _wrap_all(op.apply(*values, **params), level)
    return rule


def _shape_rule(op, level, args, params):
    """reshape, view, expand: the batch size first in the target shape."""
    target = tuple(_get(op, args, params, "shape"))
    value = _padded(value_at(args[0], level), len(target)) if op is shape.Expand else value_at(args[0], level)
    values, params = _with(op, [value], params, shape=(level.size,) + target)
    return wrap(op.apply(*values, **params), level)


def _permute(op, level, args, params):
    dims = _get(op, args, params, "dims")
    ndim = args[0].ndim
    values, params = _with(op, [value_at(args[0], level)], params,
                           dims=(0,) + tuple(d % ndim + 1 for d in dims) if ndim else (0,))
    return wrap(op.apply(*values, **params), level)


def _repeat(op, level, args, params):
    repeats = tuple(_get(op, args, params, "repeats"))
    values, params = _with(op, [_padded(value_at(args[0], level), len(repeats))], params, repeats=(1,) + repeats)
    return wrap(op.apply(*values, **params), level)


def _getitem(op, level, args, params):
    """``x[key]`` with a key shared by the samples: a full slice for the batch dim in a basic
    key; in an advanced key, an index array over the batch that broadcasts with the others."""
    key = _get(op, args, params, "key")
    value = value_at(args[0], level)
    if key and key[-1] is Ellipsis:
        batched_key = _Key((slice(None),) + tuple(key))
    else:
        depth = max((entry.ndim for entry in key if not isinstance(entry, int)), default=0)
        xp = value._backend().xp
        batch_index = xp.reshape(xp.arange(level.size), (level.size,) + (1,) * depth)
        batched_key = _Key((batch_index,) + tuple(key))
    values, params = _with(op, [value], params, key=batched_key)
    return wrap(op.apply(*values, **params), level)


# --- matmul, linear, embedding ------------------------------------------------------------

def _matmul(op, level, args, params):
    """A batched 1-D operand becomes a matrix (a row for the left, a column for the right)
    whose extra dim is squeezed off the result; batched operands get size-1 batch dims up
    to the other operand's, so that the batch dim leads the broadcast."""
    a, b = args
    va, vb = value_at(a, level), value_at(b, level)
    row = va is not None and a.ndim == 1
    column = vb is not None and b.ndim == 1
    if row:
        va = shape.unsqueeze(va, 1)
    if column:
        vb = shape.unsqueeze(vb, 2)
    rank = max(2 if row else a.ndim, 2 if column else b.ndim)
    out = op.apply(a if va is None else _padded(va, rank), b if vb is None else _padded(vb, rank), **params)
    if column:
        out = shape.squeeze(out, -1)
    if row:     # its dim is last when the right operand was a vector (then no column dim follows it)
        out = shape.squeeze(out, -1 if column or b.ndim == 1 else -2)
    return wrap(out, level)


def _linear(op, level, args, params):
    x, weight, bias = args
    if value_at(weight, level) is None and (bias is None or value_at(bias, level) is None):
        return wrap(op.apply(value_at(x, level), weight, bias, **params), level)
    values, weights = _value_or_broadcast(x, level), _value_or_broadcast(weight, level)
    if type(values) is BatchedTensor or type(weights) is BatchedTensor:     # batched at outer levels too
        out = shape.squeeze(linalg.matmul(weight, shape.unsqueeze(x, -1)), -1)
    else:
        out = wrap(PerSampleLinear.apply(values, weights), level)
    return out if bias is None else binary.add(out, bias)


class PerSampleLinear(Op):
    """``x Wᵀ`` with one weight per sample, the per-sample gradients' linear layer: x of shape
    (B, ..., in), weight (B, out, in). Forward: one batched matrix product. Backward:
    dL/dx = G W; dL/dW = Gᵀ x, which for one row per sample is the outer product of two
    vectors, computed elementwise (a batched matrix product over an inner dim of 1 is
    several times slower)."""

    @staticmethod
    def forward(ctx, x, weight):
        xp = ctx.xp
        ctx.save_for_backward(x, weight)
        rows = xp.reshape(x, (x.shape[0], -1, x.shape[-1]))
        out = xp.matmul(rows, xp.matrix_transpose(weight))
        return xp.reshape(out, tuple(x.shape[:-1]) + (weight.shape[-2],))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_weight = ctx.needs_input_grad
        rows = xp.reshape(x, (x.shape[0], -1, x.shape[-1]))
        grads = xp.reshape(grad, (x.shape[0], -1, weight.shape[-2]))
        grad_x = xp.reshape(xp.matmul(grads, weight), tuple(x.shape)) if needs_x else None
        grad_weight = None
        if needs_weight:
            if rows.shape[1] == 1:
                grad_weight = xp.reshape(grads, (x.shape[0], -1, 1)) * rows
            else:
                grad_weight = xp.matmul(xp.matrix_transpose(grads), rows)
        return grad_x, grad_weight


def _einsum(op, level, args, params):
    """A new letter for the batch dim, on the batched operands and first in the output."""
    terms, output, sizes = params["terms"], params["output"], params["sizes"]
    used = set("".join(terms) + output)
    letter = next(c for c in string.ascii_letters if c not in used)
    values = [arg if value_at(arg, level) is None else value_at(arg, level) for arg in args]
    terms = [term if value_at(arg, level) is None else letter + term for term, arg in zip(terms, args)]
    sizes = dict(sizes, **{letter: level.size})
    out = op.apply(*values, **dict(params, terms=terms, output=letter + output, sizes=sizes))
    return wrap(out, level)


def _embedding(op, level, args, params):
    weight, indices = args[0], args[1]
    if value_at(weight, level) is not None:
        return fallback(op, level, args, params)
    return wrap(op.apply(weight, value_at(indices, level), *args[2:], **params), level)


def _normalize(op, level, args, params):
    """Layer, group and batch norm over a sample's dims: the statistics' axes shifted past the
    batch dim. Shared parameters get their gradients summed over the batch too; per-sample ones
    (per-sample gradients) are viewed with the batch dim first and keep one gradient per sample."""
    x, weight, bias = args[:3]
    get = functools.partial(_get, op, args, params)
    param_shape, param_view = tuple(get("param_shape")), tuple(get("param_view"))
    stats_shape = get("stats_shape")
    changes = {"axes": _shift(tuple(get("axes"))),
               "stats_shape": None if stats_shape is None else (level.size,) + tuple(stats_shape)}
    per_sample_parameters = any(p is not None and value_at(p, level) is not None for p in (weight, bias))
    if per_sample_parameters:
        weight, bias = (None if p is None else _value_or_broadcast(p, level) for p in (weight, bias))
        lead = x.ndim - len(param_view)
        changes.update(param_shape=(level.size,) + param_shape, param_view=(level.size,) + (1,) * lead + param_view,
                       param_axes=_shift(tuple(get("param_axes"))))
    else:
        changes["param_axes"] = (0,) + _shift(tuple(get("param_axes")))
    values, params = _with(op, [_value_or_broadcast(x, level), weight, bias] + list(args[3:]), params, **changes)
    return wrap(op.apply(*values, **params), level)


# --- losses -------------------------------------------------------------------------------

def _reduced_per_sample(losses, reduction):
    if reduction == "none":
        return losses
    return reduce.mean(losses) if reduction == "mean" else reduce.sum(losses)


def _elementwise_loss(op, level, args, params):
    """An elementwise loss computed unreduced for the whole batch, then reduced per sample."""
    reduction = _get(op, args, params, "reduction")
    args, params = _with(op, args, params, reduction="none")
    return _reduced_per_sample(elementwise(op, level, args, params), reduction)


def _nll_loss(op, level, args, params):
    """The batch folded into the loss's own batch dim N, unreduced; then reduced per sample
    ('mean' divides each sample's sum by its own total weight)."""
    input, target, weight = args[0], args[1], args[2]
    if weight is not None and value_at(weight, level) is not None:
        return fallback(op, level, args, params)
    values, targets = _value_or_broadcast(input, level), _value_or_broadcast(target, level)
    size = level.size
    folded = shape.reshape(values, (size * values.shape[1],) + tuple(values.shape[2:]))
    folded_targets = shape.reshape(targets, (size * targets.shape[1],) + tuple(targets.shape[2:]))
    reduction = _get(op, args, params, "reduction")
    folded_args, folded_params = _with(op, [folded, folded_targets] + list(args[2:]), params, reduction="none")
    losses = wrap(shape.reshape(op.apply(*folded_args, **folded_params), tuple(targets.shape)), level)
    if reduction != "mean":
        return _reduced_per_sample(losses, reduction)
    kept = compare.ne(targets, _get(op, args, params, "ignore_index"))
    counts = kept.to(input.dtype)
    if weight is not None:
        picked = index.index_select(weight, 0, shape.reshape(binary.where(kept, targets, 0), (-1,)))
        counts = counts * shape.reshape(picked, tuple(targets.shape))
    return division.div(reduce.sum(losses), reduce.sum(wrap(counts, level)))


# --- ops whose first dim is a batch (images) ----------------------------------------------

def _folded_into_first_dim(op, level, args, params):
    value = value_at(args[0], level)
    if value is None or any(value_at(arg, level) is not None for arg in args[1:]):
        return fallback(op, level, args, params)
    size, first = value.shape[0], value.shape[1]
    out = op.apply(shape.reshape(value, (size * first,) + tuple(value.shape[2:])), *args[1:], **params)
    outputs = out if type(out) is tuple else (out,)
    unfolded = tuple(wrap(shape.reshape(o, (size, first) + tuple(o.shape[1:])), level) for o in outputs)
    return unfolded if type(out) is tuple else unfolded[0]


def _conv(op, level, args, params):
    """A convolution: with shared weights, the vmap batch folded into the images' batch; with
    per-sample weights (per-sample gradients), one grouped convolution: sample b's channels
    become group b of B·groups, each with its own weights."""
    x, weight, bias = args[0], args[1], args[2]
    if value_at(weight, level) is None and (bias is None or value_at(bias, level) is None):
        return _folded_into_first_dim(op, level, args, params)
    size = level.size
    images, weights = _value_or_broadcast(x, level), _value_or_broadcast(weight, level)
    if type(images) is BatchedTensor or type(weights) is BatchedTensor:     # batched at outer levels too
        return fallback(op, level, args, params)
    count, channels = images.shape[1], images.shape[2]
    grouped = shape.reshape(shape.movedim(images, 0, 1), (count, size * channels) + tuple(images.shape[3:]))
    kernels = shape.reshape(weights, (size * weights.shape[1],) + tuple(weights.shape[2:]))
    biases = None if bias is None else shape.reshape(_value_or_broadcast(bias, level), (-1,))
    call, call_params = _with(op, [grouped, kernels, biases] + list(args[3:]), params,
                              groups=size * _get(op, args, params, "groups"))
    out = op.apply(*call, **call_params)
    out = shape.reshape(out, (count, size, weights.shape[1]) + tuple(out.shape[2:]))
    return wrap(shape.movedim(out, 1, 0), level)


# --- custom Functions ----------------------------------------------------------------------

class VmapInfo:
    """What a custom Function's ``vmap`` staticmethod is told: ``batch_size``, ``randomness``."""

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness


def _function(op, level, args, params):
    """A custom Function: its own ``vmap(info, in_dims, *args)`` when it has one (returning the
    outputs and their batch dims, as in PyTorch), else once per sample."""
    user_rule = getattr(op, "vmap", None)
    if user_rule is None:
        return fallback(op, level, args, params)
    in_dims = tuple(0 if value_at(arg, level) is not None else None for arg in args)
    values = [arg if value_at(arg, level) is None else value_at(arg, level) for arg in args]
    out, out_dims = user_rule(VmapInfo(level.size, level.randomness), in_dims, *values, **params)
    outputs, dims = (out, out_dims) if type(out) is tuple else ((out,), (out_dims,))
    if type(dims) is not tuple or len(dims) != len(outputs):
        raise TransformError(f"{op.__name__}.vmap must return (outputs, out_dims) with one out_dim per output, "
                             f"got out_dims={out_dims!r} for {len(outputs)} output(s)")
    moved = tuple(wrap(broadcast_batch(o, level.size) if d is None else shape.movedim(o, d, 0), level)
                  for o, d in zip(outputs, dims))
    return moved if type(out) is tuple else moved[0]


# --- the table -----------------------------------------------------------------------------

_DIM_PARAMETERS = {"axis", "axes", "dim", "dims", "shape", "sizes", "key", "windows", "repeats"}


def _elementwise_ops():
    """The ops of the elementwise families (checked: none takes a dim, a shape or a key)."""
    for module in (unary, hyperbolic, special_functions, binary, division, representation, bitwise, compare):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Op) and value.__module__ == module.__name__ \
                    and not _DIM_PARAMETERS.intersection(_names(value)):
                yield value


RULES = {op: elementwise for op in _elementwise_ops()}
RULES.update({op: elementwise for op in (
    activation.LeakyRelu, activation.Elu, activation.Gelu, activation.Silu, activation.Softplus, activation.Mish,
    activation.Hardtanh, conversion.ToDtype, conversion.ToDevice, conversion.Clone, conversion.Contiguous,
    index.MaskedFill, padding.Tril, padding.Triu, gamma.Igamma, gamma.Igammac)})
RULES.update({op: along("axes") for op in (
    reduce.Sum, reduce.Mean, reduce.Prod, reduce.Var, reduce.Std, reduce.Amax, reduce.Amin, reduce.Max,
    reduce.Min, reduce.Logsumexp, reduce.Norm, truth.CountNonzero)})
RULES.update({op: along("axis") for op in (
    reduce.MaxDim, reduce.MinDim, reduce.Argmax, reduce.Argmin, truth.All, truth.Any, cumulative.Cumsum,
    cumulative.Cumprod, cumulative.RunningExtremum, activation.Softmax, activation.LogSoftmax, sorting.Sort,
    sorting.Topk, statistics.MedianDim, statistics.Kthvalue, statistics.Mode, statistics.NanmedianDim,
    shape.Unfold)})
RULES.update({op: along("dim") for op in (shape.Unsqueeze, shape.Narrow, joins.Split, joins.SplitWithSizes,
                                          joins.Unbind, index.IndexSelect)})
RULES.update({op: along("dims") for op in (shape.Squeeze, padding.Flip)})
RULES.update({op: along("dim0", "dim1") for op in (shape.Transpose, shape.MatrixTranspose)})
RULES.update({op: along("dim", lifted="all") for op in (joins.Cat, joins.Stack)})
RULES.update({op: along("dim", lifted=(0, 1)) for op in (gather_scatter.Gather,)})
RULES.update({op: along("dim", lifted=(0, 1, 2)) for op in (gather_scatter.Scatter, gather_scatter.ScatterAdd)})
RULES[index.IndexAdd] = along("dim", lifted=(0, 2))
RULES.update({op: _shape_rule for op in (shape.Reshape, shape.View, shape.Expand)})
RULES.update({shape.Permute: _permute, padding.Repeat: _repeat, index.GetItem: _getitem,
              linalg.MatMul: _matmul, contractions.Einsum: _einsum, activation.Linear: _linear,
              activation.Embedding: _embedding, normalization.Normalize: _normalize,
              activation.Dropout: dropout, classification.NllLoss: _nll_loss, conv.Conv: _conv})
RULES.update({op: _elementwise_loss for op in (
    loss.MseLoss, loss.Huber, loss.SmoothL1, classification.BinaryCrossEntropy,
    classification.BinaryCrossEntropyWithLogits, margin.SoftMarginLoss)})
RULES.update({op: _folded_into_first_dim for op in (
    conv.ConvTranspose, conv.Unfold, conv.Fold, pooling.MaxPool, pooling.AvgPool,
    adaptive_pooling.AdaptiveAvgPool, adaptive_pooling.AdaptiveMaxPool, resampling.Interpolate,
    normalization.NormalizeWithStatistics)})


def rule_for(op):
    """The batching rule of ``op``: its entry in :data:`RULES`, a custom Function's own, or the loop."""
    rule = RULES.get(op)
    if rule is not None:
        return rule
    return _function if isinstance(op, type) and issubclass(op, Function) else fallback
