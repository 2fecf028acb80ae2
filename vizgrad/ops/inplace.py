"""The two nodes that record an in-place write into a view, as PyTorch does.

When ``view.add_(x)`` (or ``base[0] += x``, ``out[0].copy_(y)``) changes a view while
gradients are recorded, the write changes the view's base too. The base's new history
is a :class:`CopySlices` node: the base as it was, with the view's new values written
at the view's positions. The view's old values come from the base through
:class:`AsStrided`, so gradients reach whatever last wrote into the base.

A view whose base was written to (through the base or another view) after the view's
history was recorded is stale: the next op that uses it while recording first gives it a
fresh history, :class:`AsStrided` of the base as it is now (:func:`refresh_view`), as
PyTorch regenerates a view's ``grad_fn``.

The pieces of a function that returns several views from one node (``unbind``, ``split``,
``chunk``) cannot be rewritten that way: as in PyTorch, writing into one while recording,
or using one while recording after its base changed, is an error
(:func:`multi_output_view_error`).

Positions are row-major indices into the base (``Backend.view_positions``), so one
pair of nodes serves every kind of view (slices, reshapes, transposes, selections).

:func:`apply_inplace` is the write every in-place method makes (``add_``, ``x[i] = v``,
``F.relu_``): the value computed out of place, stored in the tensor's dtype, its version
bumped, and these nodes recorded when the tensor is a view.
"""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..autograd.grad_mode import no_grad, state
from ..errors import BackwardError, DTypeError, ShapeError, format_shape, public_name_from
from ..tensor import Tensor


class AsStrided(Op):
    """The elements of ``base`` at ``positions`` (in the shape of ``positions``; ``written``
    marks them in base's shape): the values a view of ``base`` shows. d out/d base scatters
    the gradient back to the positions."""

    @staticmethod
    def forward(ctx, base, positions, written):
        xp = ctx.xp
        flat_positions = xp.reshape(positions, (-1,))
        ctx.base_shape = tuple(base.shape)
        ctx.save_for_backward(flat_positions, written)
        return xp.reshape(xp.take(xp.reshape(base, (-1,)), flat_positions), tuple(positions.shape))

    @staticmethod
    def backward(ctx, grad):
        flat_positions, written = ctx.saved_tensors
        xp = ctx.xp
        zeros = xp.reshape(xp.zeros_like(written, dtype=grad.dtype), (-1,))
        return xp.reshape(xp.put_add(zeros, flat_positions, xp.reshape(grad, (-1,))), ctx.base_shape)


class CopySlices(Op):
    """``base`` with ``values`` written at ``positions`` (``written`` marks them, in base's
    shape): the history an in-place write into a view gives the view's base.

    d out/d base is 1 where nothing was written and 0 where it was; d out/d values
    reads the gradient at the positions."""

    @staticmethod
    def forward(ctx, base, values, positions, written):
        xp = ctx.xp
        flat_positions = xp.reshape(positions, (-1,))
        ctx.values_shape = tuple(values.shape)
        ctx.save_for_backward(written, flat_positions)
        if values.dtype != base.dtype:
            values = xp.astype(values, base.dtype)
        flat = xp.reshape(base, (-1,))
        scattered = xp.put_add(xp.zeros_like(flat), flat_positions, xp.reshape(values, (-1,)))
        return xp.reshape(xp.where(xp.reshape(written, (-1,)), scattered, flat), tuple(base.shape))

    @staticmethod
    def backward(ctx, grad):
        written, flat_positions = ctx.saved_tensors
        xp = ctx.xp
        needs_base, needs_values = ctx.needs_input_grad
        grad_base = xp.where(written, 0.0, grad) if needs_base else None
        grad_values = (xp.reshape(xp.take(xp.reshape(grad, (-1,)), flat_positions), ctx.values_shape)
                       if needs_values else None)
        return grad_base, grad_values


def positions_in_base(view, op_name=None):
    """The view's positions in its base as backend arrays ``(positions, written)``: the base's
    row-major index of each element of the view, and a bool mask of those elements in the
    base's shape. None when the view shares no memory with its base (the backend copied).
    With ``op_name`` (a write), a view whose elements share memory (``expand``) is an error."""
    base = view._base
    backend = base._backend()
    host = backend.view_positions(base._array, view._array)
    if host is None:
        return None
    if op_name is not None and np.unique(host).size != host.size:
        raise overlapping_write_error(op_name, view)
    written = np.zeros(base.shape, dtype=bool)
    written.reshape(-1)[host.reshape(-1)] = True
    index = base.device.index or 0
    return backend.asarray(host, None, index), backend.asarray(written, None, index)


def overlapping_write_error(op_name, tensor):
    """The error for writing into a tensor whose elements share memory (an expanded view)."""
    return ShapeError(f"{op_name}: more than one element of the written-to tensor refers to the same "
                      f"memory (an expanded view of shape {format_shape(tensor.shape)}); clone() it "
                      "before writing into it")


def multi_output_view_error(op_name, view, base_modified=False):
    """PyTorch's refusal to let an output of a function that returns several views (or a view of
    one) change in place while gradients are recorded, or (``base_modified``) be used while
    recording after its base changed: one node computed all the pieces, so there is no history
    for one piece alone to take."""
    function, index, of_view = view._multi_output_view
    piece = f"{'a view of ' if of_view else ''}output {index} of {function}"
    if base_modified:
        what = f"{piece} is used after its base (or another view of its base) was modified in place"
    elif view.requires_grad:
        what = f"{piece} is being modified in place"
    else:
        what = (f"{piece} was created while gradients were not recorded (in no_grad mode, or from a tensor "
                "that requires no grad) and is being modified in place with recording on")
    return BackwardError(
        f"{op_name}: {what}. {function} is a function that returns multiple views, and such functions do not "
        "allow their output views to be modified in place. Replace the in-place operation by an "
        "out-of-place one, or clone() the piece first.")


def refresh_view(view, op_name):
    """Make a stale view's history :class:`AsStrided` of its base as it is now (or nothing,
    when neither needs a gradient), before ``op_name`` uses it. A piece of a multi-output view
    op has no history to refresh: an error, as in PyTorch."""
    base = view._base
    if not (base.requires_grad or view.requires_grad):
        view._view_version = view._counter[0]
        return
    if view._multi_output_view is not None:
        raise multi_output_view_error(op_name, view, base_modified=True)
    view._view_version = view._counter[0]
    found = positions_in_base(view)
    if found is None:
        return
    positions, written = found
    fresh = AsStrided.apply(base, positions=positions, written=written)
    view.grad_fn, view._output_nr, view._requires_grad = fresh.grad_fn, fresh._output_nr, fresh.requires_grad


def writes_recorded(target, *others):
    """Whether a write into ``target`` (of ``others``) is recorded: grad mode is on and one of them requires grad."""
    if not state.grad_enabled:
        return False
    return target.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others)


@public_name_from("op_name")
def apply_inplace(target, compute, op_name, *others, cast=False):
    """Make ``target`` hold ``compute(target)``; ``compute`` builds the out-of-place result.

    The result is stored in ``target``'s dtype: any dtype when ``cast`` (``copy_``,
    ``fill_``, ``x[i] = v`` convert, truncating floats into integers), otherwise only what
    :func:`vizgrad.dtypes.can_cast` allows (``x += 1.5`` on an integer tensor is an error).

    While recording, the result's history becomes ``target``'s: the old value (with its
    history) stays available to the new node through a private copy. When ``target`` is a
    view, the write changes its base too, and the base's history becomes a
    :class:`~vizgrad.ops.inplace.CopySlices` node, as in PyTorch.
    """
    if writes_recorded(target, *others):
        if target._multi_output_view is not None:
            raise multi_output_view_error(op_name, target)
        base = target._base
        if target.requires_grad and target.grad_fn is None:
            raise BackwardError(
                f"{op_name}: a leaf tensor that requires grad cannot be modified in place while "
                "gradients are recorded (its .grad would no longer match its value). Do the update "
                "inside `with vizgrad.no_grad():`, or use an out-of-place op.")
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise BackwardError(
                f"{op_name}: this tensor is a view of a leaf tensor that requires grad, which cannot "
                "be modified in place while gradients are recorded. Do the update inside "
                "`with vizgrad.no_grad():`, or clone() the view first.")
        positions = positions_in_base(target, op_name) if base is not None else None
        if positions is None:
            result = compute(_snapshot(target))
            _store(target, result, op_name, cast)
            _adopt_history(target, result)
        else:
            _write_into_view(target, base, positions, compute, op_name, cast)
    else:
        with no_grad():
            result = compute(target)
        _store(target, result, op_name, cast)
    mark_written(target)
    return target


def mark_written(target):
    """Count an in-place change of ``target`` (and of the memory it shares)."""
    target._bump_version()
    if target._base is not None and target._multi_output_view is None:
        # its history (or lack of one) is current; a piece of unbind/split/chunk written
        # outside recording has none for itself alone, and stays stale as in PyTorch
        target._view_version = target._counter[0]


def _snapshot(tensor):
    """A copy of ``tensor``'s values that carries its history (what an in-place op overwrites)."""
    return Tensor._make(tensor._backend().xp.asarray(tensor._array, copy=True),
                        tensor.requires_grad, tensor.grad_fn, tensor._output_nr)


def _adopt_history(target, result):
    if result.requires_grad and not target.is_floating_point():   # integers carry no gradient
        target.grad_fn, target._requires_grad = None, False
        return
    target.grad_fn = result.grad_fn
    target._output_nr = result._output_nr
    target._requires_grad = result.requires_grad


def _write_into_view(view, base, positions, compute, op_name, cast):
    """Record ``view``'s in-place write on its base: the view's old values are read from the
    base as it was (so gradients reach whatever wrote into it before), and the base becomes
    the old base with the new values at the view's positions (CopySlices)."""
    positions, written = positions
    base_before = _snapshot(base)
    result = compute(AsStrided.apply(base_before, positions=positions, written=written))
    _check_storable(view, result, op_name, cast)
    new_base = CopySlices.apply(base_before, result, positions=positions, written=written)
    _store(base, new_base, op_name, cast=True)
    _adopt_history(base, new_base)
    _adopt_history(view, result)   # the view now holds the result's values


def _check_storable(target, result, op_name, cast):
    if result.shape != target.shape:
        raise ShapeError(f"{op_name}: the result has shape {format_shape(result.shape)}, which does not "
                         f"fit in place into a tensor of shape {format_shape(target.shape)}")
    if type(result._array) is not type(target._array):
        raise BackwardError(f"{op_name}: the result is on {result.device}, the tensor on {target.device}")
    if not cast and result._array.dtype != target._array.dtype \
            and not dtypes.can_cast(result.dtype, target.dtype):
        raise DTypeError(
            f"{op_name}: result type {result.dtype.torch_name} can't be cast to the desired output type "
            f"{target.dtype.torch_name}: the result is {result.dtype.name} and an in-place op keeps the "
            f"tensor's dtype {target.dtype.name}. Use the out-of-place op (x = x + ...), or convert "
            "the tensor first (x = x.float()).")


def _store(target, result, op_name, cast):
    """Write ``result``'s values into ``target``'s memory, in ``target``'s dtype."""
    _check_storable(target, result, op_name, cast)
    xp = target._backend().xp
    try:
        target._array[...] = result._array if result._array.dtype == target._array.dtype \
            else xp.astype(result._array, target._array.dtype)
    except ValueError as error:   # NumPy's expanded (broadcast) views are read-only
        if "read-only" not in str(error):
            raise
        raise overlapping_write_error(op_name, target) from None
