"""Forward-mode AD with dual tensors, as ``torch.autograd.forward_ad``.

A dual tensor carries a tangent beside its value (``make_dual(x, t)``, inside a
``dual_level()`` block). Every op applied to dual tensors gives its outputs tangents: the
Jacobian-vector products ``J·t`` of that op, op by op, as the values flow forward;
``unpack_dual(y)`` reads ``(primal, tangent)``::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 0.0]))
        y = (x.sin() * 2).sum()
        forward_ad.unpack_dual(y).tangent        # 2·cos(1): ∂y/∂x₀

How an op's tangent is computed: an op defines its vector-Jacobian product (its backward),
``g(u) = Jᵀu``, which is linear in ``u``; the vector-Jacobian product of ``g`` with the
tangent ``t`` is then ``J t`` (exact, not a finite difference). So every registered op has
a forward-mode rule derived from its backward; the cost per op is a second forward and two
small backward passes, where a hand-written JVP would cost about one forward. A custom
:class:`~vizgrad.autograd.Function` may define PyTorch's ``jvp(ctx, *tangents)`` staticmethod
instead (with ``ctx.save_for_forward`` in its forward).

Each tangent is also kept on the autograd node that made its tensor (when there is one), so
that ``vizgrad.graph(y)`` or ``vizgrad.show(y)`` inside the level shows every node's tangent
after the intermediate tensors are gone (``vizgrad.trace.history``); it lives as long as the
graph does, as the node's saved values do.

Not supported: in-place ops on a dual tensor (their result carries no tangent; reading the
tangent afterwards raises), nested dual levels holding tangents of tangents, and the few ops
whose backward cannot yet be recorded as a graph (``ctc_loss``; ``frexp`` of a 0-d tensor),
for which a :class:`~vizgrad.errors.TransformError` says so.
"""

import collections

from ..errors import ArgumentError, DTypeError, TransformError
from . import function, transform_hooks
from .grad_mode import enable_grad, no_grad

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What :func:`unpack_dual` returns: the ``primal`` (a view) and its ``tangent`` (or None)."

_levels = []
_busy = [False]      # computing an op's tangent: the ops that takes are not dual themselves


def enter_dual_level():
    """Start a new level of forward AD (what ``with dual_level():`` does); returns its index."""
    _levels.append(len(_levels))
    if len(_levels) == 1:
        transform_hooks.add(_propagate)
    return _levels[-1]


def exit_dual_level(*, level=None):
    """End the innermost level (``level`` must name it); its tangents are no longer seen."""
    if not _levels or (level is not None and level != _levels[-1]):
        raise TransformError(f"exit_dual_level: level {level} is not the innermost active level "
                             f"(active: {_levels})")
    _levels.pop()
    if not _levels:
        transform_hooks.remove(_propagate)


class dual_level:
    """``with dual_level():``: a block in which dual tensors carry tangents; ``as`` gives the level."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)
        return False


def _current(level, op):
    if level is None:
        if not _levels:
            raise TransformError(f"{op}: Trying to create a dual Tensor for forward AD but no level exists, make sure "
                                 "to enter_dual_level() first (with vizgrad.autograd.forward_ad.dual_level(): ...)")
        return _levels[-1]
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` (same values, same autograd history) carrying ``tangent``, a
    tensor of the same shape and dtype, at ``level`` (the innermost by default)."""
    level = _current(level, "make_dual")
    Tensor = function.Tensor
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise ArgumentError(f"make_dual: expected two Tensors, got {type(tensor).__name__} and "
                            f"{type(tangent).__name__}")
    if not tensor.is_floating_point():
        raise DTypeError(f"make_dual: Expected primal to be floating point or complex, but got: {tensor.dtype.name}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise TransformError(f"make_dual: Trying to set a forward gradient that has a different size than that of "
                             f"the original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
                             f"while the given forward gradient is of size {list(tangent.shape)}.")
    if tangent.dtype is not tensor.dtype:
        raise DTypeError(f"make_dual: the tangent is {tangent.dtype.name} but the primal is {tensor.dtype.name}; "
                         "convert the tangent with .to(primal.dtype)")
    _busy[0] = True
    try:
        dual = tensor.view_as(tensor)
    finally:
        _busy[0] = False
    _attach(dual, level, tangent)
    return dual


def _attach(tensor, level, tangent):
    tangents = dict(tensor.__dict__.get("_tangents", {}))
    tangents[level] = (tangent, tensor._version)
    tensor._tangents = tangents
    node = tensor.grad_fn
    if node is not None:     # kept on its node too: a graph of the history shows it (vizgrad.trace.history)
        kept = dict(node.__dict__.get("_tangents", {}))
        kept[(level, tensor._output_nr)] = tangent
        node._tangents = kept


def current_level():
    """The innermost active dual level, or None outside every level."""
    return _levels[-1] if _levels else None


def node_tangent(node, level, output_nr=0):
    """The tangent that output ``output_nr`` of autograd node ``node`` carried at ``level``
    when forward AD computed it (None if it had none), even once that tensor is gone."""
    return node.__dict__.get("_tangents", {}).get((level, output_nr))


def _tangent(tensor, level):
    entry = tensor.__dict__.get("_tangents", {}).get(level) if isinstance(tensor, function.Tensor) else None
    if entry is None:
        return None
    tangent, version = entry
    if tensor._version != version:
        raise TransformError("forward AD: a dual tensor was modified by an in-place operation after its tangent was "
                             "set, and vizgrad's in-place ops do not carry tangents: use the out-of-place op "
                             "(y = x * 2 rather than x.mul_(2)) on dual tensors")
    return tangent


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: a view of its value and its tangent at ``level``
    (None for a tensor without one, or outside every level)."""
    if level is None and not _levels:
        return UnpackedDualTensor(tensor, None)
    level = _current(level, "unpack_dual")
    tangent = _tangent(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    _busy[0] = True
    try:
        primal = tensor.view_as(tensor)
    finally:
        _busy[0] = False
    return UnpackedDualTensor(primal, tangent)


def _propagate(op, args, params):
    """The transform hook: an op applied to dual tensors runs as usual, then its outputs get
    their tangents (NotImplemented when no argument is dual, or while a tangent is computed)."""
    if _busy[0]:
        return NotImplemented
    level = _levels[-1]
    tangents = [_tangent(arg, level) for arg in args]
    if all(t is None for t in tangents):
        return NotImplemented
    _busy[0] = True
    try:
        outputs = op.apply(*args, **params)
        results = outputs if type(outputs) is tuple else (outputs,)
        if isinstance(op, type) and issubclass(op, function.Function) and getattr(op, "jvp", None) is not None:
            found = _function_jvp(op, args, params, tangents)
        else:
            found = _derived_jvp(op, args, params, tangents)
    finally:
        _busy[0] = False
    for result, tangent in zip(results, found):
        if tangent is not None and result.is_floating_point():
            _attach(result, level, tangent)
    return outputs


def _derived_jvp(op, args, params, tangents):
    """The output tangents ``J t`` of one op from its backward (module docstring)."""
    from .api import grad
    Tensor = function.Tensor
    with enable_grad():
        inputs = [arg.detach().requires_grad_() if t is not None and arg.is_floating_point()
                  else (arg.detach() if isinstance(arg, Tensor) else arg) for arg, t in zip(args, tangents)]
        duals = [position for position, t in enumerate(tangents) if t is not None and inputs[position].requires_grad]
        outputs = op.apply(*inputs, **params)
        outputs = outputs if type(outputs) is tuple else (outputs,)
        differentiable = [position for position, o in enumerate(outputs) if o.requires_grad]
        found = [None] * len(outputs)
        if not duals or not differentiable:
            return found
        # g(u) = Jᵀu is linear in u, so its derivative does not depend on u's value: ones, not zeros
        # (a backward may skip the work for a cotangent that is all zeros, losing the dependence)
        free = [outputs[i].detach().new_ones(outputs[i].shape).requires_grad_() for i in differentiable]
        try:
            transposed = grad([outputs[i] for i in differentiable], [inputs[i] for i in duals], grad_outputs=free,
                              create_graph=True, allow_unused=True)
        except (AttributeError, TypeError) as error:     # a backward written with more than it may use
            raise TransformError(f"forward AD: the tangent of {op.__name__} comes from its backward recorded as a "
                                 f"graph (create_graph=True), which failed: {error}") from error
        pairs = [(g, tangents[i]) for g, i in zip(transposed, duals) if g is not None and g.requires_grad]
        if not pairs:
            return [None if i not in differentiable else outputs[i].new_zeros(outputs[i].shape)
                    for i in range(len(outputs))]
        record = any(t.requires_grad for _, t in pairs)
        products = grad([g for g, _ in pairs], free, grad_outputs=[t for _, t in pairs], create_graph=record,
                        allow_unused=True, materialize_grads=True)
    for position, product in zip(differentiable, products):
        found[position] = product if record else product.detach()
    return found


class _ForwardContext:
    """The ctx a custom Function's forward and jvp see under forward AD."""

    def __init__(self, args):
        self.needs_input_grad = tuple(isinstance(a, function.Tensor) and a.requires_grad for a in args)
        self.saved_tensors = ()
        self.non_differentiable = ()

    def save_for_forward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *outputs):
        self.non_differentiable = outputs

    def set_materialize_grads(self, value):
        pass


def _function_jvp(op, args, params, tangents):
    """A custom Function's own ``jvp(ctx, *tangents)``: after a forward on this ctx, one tangent
    per input (zeros for tensors without one, None for other arguments), one back per output."""
    Tensor = function.Tensor
    ctx = _ForwardContext(args)
    with no_grad():
        op.forward(ctx, *args, **params)
        given = [t if t is not None else (a.new_zeros(a.shape) if isinstance(a, Tensor) else None)
                 for a, t in zip(args, tangents)]
        found = op.jvp(ctx, *given)
    found = found if type(found) is tuple else (found,)
    for position, tangent in enumerate(found):
        if tangent is not None and not isinstance(tangent, Tensor):
            raise ArgumentError(f"{op.__name__}.jvp must return Tensors (or None), got a {type(tangent).__name__} "
                                f"for output {position}")
    return found


__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]
