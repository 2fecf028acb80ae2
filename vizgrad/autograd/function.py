"""Graph nodes and the two ways to define a differentiable operation.

* :class:`Op` is how vizgrad's own ops are written: ``forward(ctx, *arrays)``
  works on backend arrays through ``ctx.xp``; ``backward(ctx, *grads)`` is written
  once against ``ctx.xp`` too. The engine passes arrays and the backend namespace
  normally, and Tensors with :mod:`vizgrad.ops.tensor_namespace` under
  ``create_graph=True``, so the same backward records its own graph and
  higher-order gradients come for free.
* :class:`Function` is PyTorch's custom-function API for users: ``forward`` and
  ``backward`` see Tensors.

Applying either creates a :class:`Node` (the ``grad_fn`` of its outputs): plain
data with a stable counter id, the op, its ordered input edges and what it saved.
"""

import functools
import itertools
import re
import time
import traceback
import weakref

from .. import dtypes
from ..backends import backend_of
from ..backends.base import _by_array_type
from ..backends.sparse_kernels import CooArray
from ..errors import (ArgumentError, ArgumentTypeError, BackwardError, DeviceError, DTypeError, IndexingError,
                      ShapeError, UnsupportedError, VizgradError, format_shape, public_caller)
from . import observers
from .names import grad_fn_name, static_name
from .grad_mode import no_grad, state

_next_node_id = itertools.count(1)
Tensor = None  # vizgrad.tensor sets this (the two modules need each other)
transform = None  # while vmap or forward AD runs: their dispatcher (autograd/transform_hooks.py), else None


class Node:
    """The backward half of one op application: ``tensor.grad_fn``.

    Attributes:
        id: a counter, increasing in creation order (stable across runs of one program).
        op: the :class:`Op` or :class:`Function` subclass that was applied.
        next_edges: per positional input, ``(node, output_nr)`` of the producer of that
            input's gradient, or None when the input needs no gradient.
        input_meta: per positional input, ``(shape, dtype)`` of inputs that need a gradient.
        saved: the values passed to ``save_for_backward`` (arrays and constants), None once freed.
        saved_sources: for each saved value that belongs to a tensor, ``(index, tensor,
            output_ref, output_nr, version)``: an input (or a tensor a Function saved) is kept
            as its Tensor; an output as a weak reference (a strong one would make a cycle
            through ``grad_fn``) and its output number. ``version`` is the tensor's version
            counter when saved; ``saved_tensors`` checks it did not move. An output number of
            ``VERSION_ONLY`` marks a value that is not the tensor itself but lives in its memory
            (a reshape of an index tensor): its version is checked, the value stays a constant.
        needs_input_grad: per positional input, whether it needs a gradient.
    """

    __slots__ = ("id", "op", "next_edges", "input_meta", "needs_input_grad", "xp", "backend", "saved",
                 "saved_sources", "scope", "last_pass", "__dict__", "__weakref__")

    # Rarely set, so class-level defaults keep node creation cheap.
    output_meta = None          # per output (shape, dtype), for nodes with several outputs
    non_differentiable = ()     # outputs marked with mark_non_differentiable
    created_at = None           # the stack where the node was made (anomaly mode)
    tensor_pre_hooks = None     # output_nr -> {handle id: hook}, from Tensor.register_hook
    retained_grads = None       # output_nr -> weakref of a tensor that called retain_grad()
    pre_hooks = None
    post_hooks = None
    _to_save = ()
    _unpack_tensors = False

    def __init__(self, op, backend):
        self.id = next(_next_node_id)
        self.op = op
        self.backend = backend
        self.xp = backend.xp
        self.saved = self.saved_sources = ()
        self.scope = state.scope      # the module call that made it (autograd/scopes.py)
        self.last_pass = None         # the latest backward pass that ran it (engine.BackwardPass)

    # --- the ctx interface -------------------------------------------------
    def save_for_backward(self, *values):
        """Declare what backward needs: inputs, outputs or constants such as masks."""
        self._to_save = values

    @property
    def saved_tensors(self):
        """The saved values, checked against in-place changes since they were saved."""
        saved = self.saved
        if saved is None:
            raise BackwardError(
                f"{self.name()} is asked for its saved values a second time, but they were freed "
                "after the first backward through this graph. Pass retain_graph=True to the first "
                ".backward() or autograd.grad() call if you need to go backward twice.")
        for _, tensor, output_ref, _, version in self.saved_sources:
            current = tensor if tensor is not None else output_ref()   # an output: while it lives
            if current is not None:
                counter = current._counter       # (current._version, without the property's call)
                if (counter[0] if counter is not None else 0) != version:
                    raise self._modified_since_saved(current, tensor is None, version)
        return self._saved_as_tensors(saved) if self._unpack_tensors else saved

    def mark_non_differentiable(self, *outputs):
        """Declare outputs (e.g. argmax indices) that have no gradient."""
        self.non_differentiable = outputs

    def save_for_forward(self, *tensors):
        """A custom Function's values for its ``jvp`` (read there as ``ctx.saved_tensors``,
        see :mod:`vizgrad.autograd.forward_ad`); nothing to keep outside forward AD."""

    def _saved_as_tensors(self, saved):
        """The saved values as Tensors (for a backward that records its own graph): inputs as
        they were, outputs as they are (rebuilt if they died), constant arrays wrapped."""
        values = [Tensor._make(value) if type(value) is self.backend.array_type else value for value in saved]
        for index, tensor, output_ref, output_nr, _ in self.saved_sources:
            if output_nr == VERSION_ONLY:
                continue
            if tensor is None:
                tensor = output_ref()
                if tensor is None:
                    tensor = Tensor._make(saved[index], True, self, output_nr)
            values[index] = tensor
        return tuple(values)

    def _modified_since_saved(self, tensor, is_output, version):
        if is_output:
            return BackwardError(
                f"the output of {self.name()}, saved for its backward, was modified by an in-place "
                f"operation: it is at version {tensor._version}; expected version {version}. "
                "Make the in-place op out-of-place, or clone() the output before modifying it.")
        return BackwardError(
            f"one of the values {self.name()} saved for backward was modified by an in-place "
            f"operation: a tensor of shape {format_shape(tensor.shape)} (input of {self.name()}) "
            f"is at version {tensor._version}; expected version {version}. Find the in-place "
            "op (add_, mul_, x[i] = ..., ...) applied after this op and make it out-of-place, "
            "or clone() the tensor before modifying it.")

    # --- hooks -------------------------------------------------------------
    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs)`` runs after this node's backward; it may
        return replacement ``grad_inputs``."""
        from .hooks import add_hook
        if self.post_hooks is None:
            self.post_hooks = {}
        return add_hook(self.post_hooks, hook)

    def register_prehook(self, hook):
        """``hook(grad_outputs)`` runs before this node's backward; it may return
        replacement ``grad_outputs``."""
        from .hooks import add_hook
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return add_hook(self.pre_hooks, hook)

    # --- presentation ------------------------------------------------------
    def name(self):
        """PyTorch's name for this node: ``MulBackward0``, ``AddmmBackward0``; a custom
        Function's is its class name and ``Backward`` (see :mod:`vizgrad.autograd.names`)."""
        name = grad_fn_name(self)
        if type(self).__name__ != name:
            self.__class__ = _named_type(name)
        return name

    @property
    def next_functions(self):
        """PyTorch's view of the edges: ``((node, output_nr), ...)``, None for absent ones."""
        return tuple(edge if edge is not None else (None, 0) for edge in self.next_edges)

    def __repr__(self):
        return f"<{self.name()}>"


class AccumulateGrad(Node):
    """The node at a leaf tensor: it adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)
    takes_tensors = False

    def __init__(self, variable):
        self.id = next(_next_node_id)
        self.op = AccumulateGrad
        self.variable = variable
        self.next_edges = ()
        self.saved = self.saved_sources = ()
        self.backend = None
        self.scope = None
        self.last_pass = None       # the latest backward pass that wrote into the leaf's .grad

    def name(self):
        return "AccumulateGrad"


_types_by_op = {}      # op class -> the Node subclass its nodes are made as
_types_by_name = {}    # a PyTorch node name -> its Node subclass


def _node_type(op):
    """The Node subclass ``op``'s nodes are made as, named as PyTorch names them
    (``type(y.grad_fn).__name__`` is ``MulBackward0``); where the name depends on the node,
    :meth:`Node.name` settles the class once it is known."""
    kind = _types_by_op[op] = _named_type(static_name(op) or f"{op.__name__}Backward0")
    return kind


def _named_type(name):
    """The Node subclass named ``name`` (no state of its own: nodes may move between them)."""
    kind = _types_by_name.get(name)
    if kind is None:
        kind = _types_by_name[name] = type(name, (Node,), {"__slots__": (), "__module__": "vizgrad.autograd"})
    return kind


def accumulator_of(leaf):
    """The AccumulateGrad node of ``leaf``, created on first use and shared while alive."""
    ref = leaf._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        leaf._accumulator = weakref.ref(node)
    return node


def _edge(tensor):
    """Where the gradient for ``tensor`` goes: its producer, or its leaf accumulator."""
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        return (grad_fn, tensor._output_nr)
    return (accumulator_of(tensor), 0)


class Op:
    """Base of vizgrad's own ops: subclasses define static ``forward(ctx, *args, **params)``
    over arrays and ``backward(ctx, *grads)`` returning one gradient (or None) per
    positional argument.

    Class attributes:
        differentiable: False for ops whose outputs never have gradients (comparisons).
        broadcasts: True when gradients may come back in the broadcast shape; the
            engine sums them down to each input's shape (one helper does this).
        promotes: the positions of the arguments whose dtypes combine by PyTorch's type
            promotion (:func:`vizgrad.dtypes.result_type_of`): forward sees them cast to
            the result dtype, and the engine casts each gradient back to its input's dtype.
        int_to_float: True when an integer or bool result becomes the default float dtype
            (true division, exp, ...).
        on_bools: the op that computes this one when every promoted operand is bool
            (PyTorch's bool + bool is a logical or, which the Array API spells differently).
    """

    differentiable = True
    broadcasts = False
    promotes = None
    int_to_float = False
    on_bools = None
    takes_tensors = False  # forward and backward see arrays
    sparse = False         # True: forward takes sparse COO arrays (ops/sparse.py); others go to SPARSE_RULES

    @classmethod
    def apply(cls, *args, **params):
        if transform is not None:   # vmap's batched tensors, forward AD's dual tensors
            out = transform(cls, args, params)
            if out is not NotImplemented:
                return out
        arrays = list(args)   # each Tensor replaced by its array below
        backend = None
        needs = None
        recording = cls.differentiable and state.grad_enabled
        for position, arg in enumerate(args):
            if isinstance(arg, Tensor):
                if arg._base is not None and recording and arg._view_version != arg._counter[0]:
                    _refresh_view(arg, cls.__name__.lower())
                array = arrays[position] = arg._array
                if backend is None:
                    # (a dict lookup first: backend_of is a call, and raises for unknown types)
                    backend = _by_array_type.get(type(array))
                    if backend is None:
                        if type(array) is CooArray and not cls.sparse:
                            return _sparse_rule(cls, args, params)
                        backend = backend_of(array)
                    first = array
                elif type(array) is not type(first) or (
                        backend.multi_device and array.device != first.device):
                    if CooArray not in (type(array), type(first)) or array.device != first.device:
                        raise _device_mismatch(cls, args)
                    if not cls.sparse:
                        return _sparse_rule(cls, args, params)
                if recording and arg._requires_grad:   # an input edge of the node to come (the slot: no property call)
                    if needs is None:
                        count = len(args)
                        if count == 2:     # (most ops: literals build faster than [None] * 2)
                            needs, edges, meta = [False, False], [None, None], [None, None]
                        else:
                            needs, edges, meta = [False] * count, [None] * count, [None] * count
                    needs[position] = True
                    grad_fn = arg.grad_fn
                    edges[position] = (grad_fn, arg._output_nr) if grad_fn is not None else (accumulator_of(arg), 0)
                    meta[position] = (array.shape, array.dtype)
        if backend is None:
            name = public_caller(cls.__name__.lower())
            raise ArgumentTypeError(f"{name}: expected a Tensor argument, got {_describe_args(args) or 'none'}")
        if cls.promotes is not None:
            cls = _promote(cls, arrays, backend)

        started = time.perf_counter() if observers.active else 0.0
        if needs is None:
            try:
                out = cls.forward(backend.no_grad_context, *arrays, **params)
            except (ValueError, TypeError, IndexError, ArithmeticError) as error:
                if isinstance(error, VizgradError):
                    raise
                raise _reworded(cls, args, params, error) from None
            outputs = _wrap_outputs(out, backend, None)
            if observers.active:
                observers.op_applied(None, cls, args, outputs, time.perf_counter() - started)
            return outputs

        node = (_types_by_op.get(cls) or _node_type(cls))(cls, backend)    # MulBackward0 and the like
        node.needs_input_grad = needs
        node.next_edges = edges
        node.input_meta = meta
        try:
            out = cls.forward(node, *arrays, **params)
        except (ValueError, TypeError, IndexError, ArithmeticError) as error:
            if isinstance(error, VizgradError):
                raise
            raise _reworded(cls, args, params, error) from None
        if type(out) is backend.array_type:
            outputs = Tensor._make(out, True, node, 0)
        else:
            outputs = _wrap_outputs(out, backend, node)
        if node._to_save:
            _resolve_saved(node, args, arrays, outputs, params=params)
        if state.anomaly_enabled:
            node.created_at = traceback.extract_stack()[:-2]
        if observers.active:
            observers.op_applied(node, cls, args, outputs, time.perf_counter() - started)
        return outputs


class Function:
    """Base class for custom differentiable functions, as in PyTorch.

    Example::

        class Cube(vizgrad.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return grad * 3 * x ** 2

        y = Cube.apply(x)

    ``forward`` runs without recording and sees Tensors; ``backward`` returns one
    gradient (or None) per argument of ``forward``. With ``create_graph=True`` the
    backward is recorded, so write it with vizgrad ops for higher-order gradients.
    """

    differentiable = True
    broadcasts = False
    takes_tensors = True  # forward and backward see Tensors

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define a static backward(ctx, *grads)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """PyTorch 2's other style: ``forward(*args)`` without ctx, then ``setup_context(ctx,
        inputs, output)`` saves what backward (or ``jvp``) needs; a subclass defining both has
        its forward called that way (see ``__init_subclass__``)."""
        raise NotImplementedError("setup_context is defined by Function subclasses whose forward takes no ctx")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = vars(cls).get("forward")
        if forward is None or cls.setup_context is Function.setup_context:
            return
        forward = forward.__func__ if isinstance(forward, staticmethod) else forward

        def forward_then_setup_context(ctx, *args, **kwargs):
            output = forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
            return output
        cls.forward = staticmethod(forward_then_setup_context)

    @classmethod
    def apply(cls, *args, **kwargs):
        if transform is not None:   # vmap's batched tensors, forward AD's dual tensors
            out = transform(cls, args, kwargs)
            if out is not NotImplemented:
                return out
        tensors = [arg for arg in args if isinstance(arg, Tensor)]
        if state.grad_enabled:
            for tensor in tensors:
                if tensor._base is not None and tensor._view_version != tensor._counter[0]:
                    _refresh_view(tensor, f"{cls.__name__}.apply")
        if not tensors:
            raise ArgumentTypeError(f"{cls.__name__}.apply needs at least one Tensor argument")
        backend = tensors[0]._backend()
        for tensor in tensors[1:]:
            if type(tensor._array) is not type(tensors[0]._array):
                raise _device_mismatch(cls, args)
        needs = tuple(isinstance(arg, Tensor) and arg.requires_grad and state.grad_enabled
                      for arg in args)
        node = (_types_by_op.get(cls) or _node_type(cls))(cls, backend)    # MulBackward0 and the like
        node.needs_input_grad = needs
        started = time.perf_counter() if observers.active else 0.0
        with no_grad(), observers.quiet_ops:      # what forward does stays inside this node
            out = cls.forward(node, *args, **kwargs)
        single = not isinstance(out, tuple)
        results = (out,) if single else out
        for position, result in enumerate(results):
            if not isinstance(result, Tensor):
                raise ArgumentTypeError(f"{cls.__name__}.forward must return Tensors; output {position} "
                                        f"is a {type(result).__name__}")
        if not any(needs):
            outputs = tuple(Tensor._make(result._array) for result in results)
            if observers.active:
                observers.op_applied(None, cls, args, outputs[0] if single else outputs,
                                     time.perf_counter() - started)
            return outputs[0] if single else outputs
        node.next_edges = tuple(_edge(arg) if need else None for arg, need in zip(args, needs))
        node.input_meta = tuple((arg._array.shape, arg._array.dtype) if need else None
                                for arg, need in zip(args, needs))
        node.tensor_inputs = tuple(isinstance(arg, Tensor) for arg in args)   # backward's gradients are checked
        non_differentiable = {id(t) for t in node.non_differentiable}
        outputs = []
        for position, result in enumerate(results):
            # an input returned as is becomes a new tensor with this node's history
            differentiable = id(result) not in non_differentiable and backend.is_floating(result._array)
            outputs.append(Tensor._make(result._array, differentiable, node if differentiable else None,
                                        position))
        outputs = tuple(outputs)
        if not single:
            node.output_meta = tuple((o._array.shape, o._array.dtype) for o in outputs)
        node.non_differentiable = tuple(id(o._array) for o, r in zip(outputs, results)
                                        if id(r) in non_differentiable)
        saved_tensors = node._to_save
        if saved_tensors:
            node._to_save = tuple(t._array if isinstance(t, Tensor) else t for t in saved_tensors)
            _resolve_saved(node, args, [a._array if isinstance(a, Tensor) else a for a in args],
                           outputs[0] if single else outputs, saved_tensors)
        if state.anomaly_enabled:
            node.created_at = traceback.extract_stack()[:-2]
        if observers.active:
            observers.op_applied(node, cls, args, outputs[0] if single else outputs,
                                 time.perf_counter() - started)
        return outputs[0] if single else outputs


def _refresh_view(view, op_name):
    """Give a view whose base was written to since its history was recorded a history read
    from the base as it is now, before ``op_name`` uses it (see :mod:`vizgrad.ops.inplace`)."""
    from ..ops.inplace import refresh_view  # lazy: the ops and creation build on autograd
    refresh_view(view, op_name)


def _promote(cls, arrays, backend):
    """Cast the arguments at ``cls.promotes`` to their result dtype, in place in ``arrays``;
    returns the op to apply (``cls``, or ``cls.on_bools`` for bool operands).

    The plan (the target dtype and what to convert) is cached by the operands' native dtypes,
    whether each is zero-dim, and the types of the Python numbers among them, so the per-op
    cost is one tuple and one dictionary lookup; most plans convert nothing. The commonest
    case, a floating array with a Python number or an array of its own dtype, returns first."""
    array_type = backend.array_type
    promotes = cls.promotes
    first = arrays[promotes[0]]
    if type(first) is array_type and first.dtype in backend.floating_dtypes:
        if len(promotes) == 1:
            return cls
        if len(promotes) == 2:
            second = arrays[promotes[1]]
            kind = type(second)
            if kind is float or kind is int or (kind is array_type and second.dtype is first.dtype):
                return cls
    # (the array type keeps dtypes of two libraries apart; zero-dim matters only between arrays)
    if len(promotes) == 1:
        key = (cls, array_type, first.dtype)
    elif len(promotes) == 2:
        second = arrays[promotes[1]]
        if type(first) is not array_type:
            key = (cls, array_type, type(first),
                   second.dtype if type(second) is array_type else type(second))
        elif type(second) is not array_type:
            key = (cls, array_type, first.dtype, type(second))
        else:
            key = (cls, array_type, first.dtype, second.dtype, first.ndim == 0, second.ndim == 0)
    else:
        key = [cls, array_type]
        for position in promotes:
            value = arrays[position]
            key += (value.dtype, value.ndim == 0) if type(value) is array_type else (type(value), None)
        key = tuple(key)
    plan = dtypes.promotion_cache.get(key)
    if plan is None:
        plan = dtypes.promotion_cache[key] = _promotion_plan(cls, arrays, backend)
    if plan:
        target, conversions, op = plan
        for position, convert in conversions:
            value = arrays[position]
            arrays[position] = backend.xp.astype(value, target) if convert is None else convert(value)
        return op
    return cls


def _promotion_plan(cls, arrays, backend):
    """``(native target dtype, ((position, conversion), ...), op to apply)``, or ``()`` when
    nothing needs converting and ``cls`` applies. A conversion is None for an array (cast to
    the target) or the Python type a number becomes (bool and NumPy numbers take the
    target's kind; int and float are left to the backend, whose weak-scalar rules then give
    the target dtype); when only numbers meet, the first becomes an array of the target."""
    array_type = backend.array_type
    operands, positions = [], []
    for position in cls.promotes:
        value = arrays[position]
        if type(value) is array_type:
            operands.append((dtypes.as_dtype(backend.dtype_name(value)), value.ndim == 0))
            positions.append(position)
        elif value is not None:
            operands.append(value)
            positions.append(position)
    target = dtypes.result_type_of(operands)   # its errors take the public caller's name (VizgradError)
    if cls.int_to_float and not target.is_floating_point:
        target = dtypes.default_float
    native = backend.native_dtype(target)
    python_type = (bool, int, float)[target.category]
    conversions = []
    for operand, position in zip(operands, positions):
        if type(operand) is tuple:
            if operand[0] is not target:
                conversions.append((position, None))
        elif type(operand) not in (int, float):
            conversions.append((position, python_type))
    if not any(type(operand) is tuple for operand in operands):   # numbers only (where(c, 1.0, 0.0))
        conversions = [(positions[0], functools.partial(backend.xp.asarray, dtype=native))]
    op = cls.on_bools if target is dtypes.bool_ and cls.on_bools is not None else cls
    return (native, tuple(conversions), op) if conversions or op is not cls else ()


def _wrap_outputs(out, backend, node):
    """Tensors around the arrays a forward returned; they record ``node`` when it exists."""
    array_type = backend.array_type
    if type(out) is not tuple:
        if type(out) is not array_type:
            out = _as_output_array(out, backend, node)
        return Tensor._make(out, node is not None, node, 0)
    outputs = []
    non_differentiable = node.non_differentiable if node is not None else ()
    for position, array in enumerate(out):
        if type(array) is not array_type:
            array = _as_output_array(array, backend, node)
        differentiable = node is not None and not (non_differentiable and any(array is nd for nd in non_differentiable))
        outputs.append(Tensor._make(array, differentiable, node if differentiable else None, position))
    if node is not None:
        node.output_meta = tuple((o._array.shape, o._array.dtype) for o in outputs)
    return tuple(outputs)


def _as_output_array(value, backend, node):
    """An output as an array: NumPy returns scalars from some 0-d computations, which become
    0-d arrays again (arrays of another backend, a device transfer's output, pass through).
    When forward also saved the scalar, the saved value follows the conversion, so it is still
    recognised as the output (and differentiated as one under ``create_graph``) rather than
    taken for a constant."""
    if type(value) in _by_array_type or type(value) is CooArray:
        return value
    array = backend.xp.asarray(value)
    if node is not None and node._to_save:
        node._to_save = tuple(array if saved is value else saved for saved in node._to_save)
    return array


def _resolve_saved(node, args, arrays, outputs, saved_tensors=None, params=None):
    """Keep what forward passed to ``save_for_backward`` as ``node.saved``, and find which of
    those values belong to a tensor (``node.saved_sources``): an input (its array, or a view
    of its memory such as a reshape of an index tensor), an output, or a Tensor a
    :class:`Function` saved (``saved_tensors``: what it saved, before its Tensors were
    replaced by their arrays). A parameter may name the Tensors its arrays came from in
    ``sources`` (an indexing key holds its index tensors' arrays). Anything else is a
    constant. Writing in place to a tensor a saved value belongs to makes backward raise."""
    keys = ()      # the Tensors parameters name as their arrays' sources
    if params:
        keys = [tensor for value in params.values() for tensor in getattr(value, "sources", ())]
    sources = []
    index = -1
    for value in node._to_save:      # (every op that records runs this: written for speed)
        index += 1
        if type(value) in _CONSTANT_TYPES:      # a Python number (x * 2.0 saves the 2.0): a constant
            continue
        position = 0
        for array in arrays:
            if value is array:
                arg = args[position]
                if array is not arg and isinstance(arg, Tensor):     # an input's array
                    counter = arg._counter           # (arg._version, without the property's call)
                    sources.append((index, arg, None, 0, counter[0] if counter is not None else 0))
                    break
            position += 1
        else:   # not an input: an output, or a Tensor a Function saved
            if type(outputs) is Tensor and value is outputs._array:    # (the commonest: tanh, exp, sigmoid)
                sources.append((index, None, weakref.ref(outputs), 0, 0))
                continue
            source = _output_or_saved_tensor(index, value, outputs, saved_tensors)
            if source is None and (keys or getattr(value, "base", None) is not None):
                # a constant, unless it is a key's array or views an input's memory: then its version counts
                source = _tensor_behind(index, value, args, arrays, keys)
            if source is not None:
                sources.append(source)
    node.saved = node._to_save
    node.saved_sources = sources
    node._to_save = ()


_CONSTANT_TYPES = frozenset((float, int, bool, complex, type(None)))

#: ``saved_sources``' output number for a value whose tensor's version is checked but which
#: stays what forward saved (a view of the tensor's memory, not the tensor).
VERSION_ONLY = -1


def _tensor_behind(index, value, args, arrays, keys):
    """The version-only source of saved value ``index`` when it is the array of a Tensor a
    parameter names (``keys``) or views the memory of an input or of such a Tensor."""
    for tensor in keys:
        if value is tensor._array or _views_memory_of(value, tensor._array):
            return index, tensor, None, VERSION_ONLY, tensor._version
    if getattr(value, "base", None) is not None:
        for arg, array in zip(args, arrays):
            if array is not arg and isinstance(arg, Tensor) and _views_memory_of(value, array):
                return index, arg, None, VERSION_ONLY, arg._version
    return None


def _views_memory_of(value, array):
    """Whether ``value`` is a view of ``array``'s memory (NumPy and CuPy arrays name the
    array that owns their memory in ``base``; a backend without it has no views to find)."""
    base = getattr(value, "base", None)
    if base is None:
        return False
    while getattr(base, "base", None) is not None:
        base = base.base
    owner = getattr(array, "base", None)
    if owner is None:
        return base is array
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    return base is owner


def _output_or_saved_tensor(index, value, outputs, saved_tensors):
    """The source of a saved value that is no input of the op, or None for a constant."""
    for output_nr, output in enumerate(outputs if type(outputs) is tuple else (outputs,)):
        if value is output._array:
            return index, None, weakref.ref(output), output_nr, 0
    if saved_tensors is not None and isinstance(saved_tensors[index], Tensor):
        tensor = saved_tensors[index]   # a Function saved an intermediate Tensor
        return index, tensor, None, 0, tensor._version
    return None


_BROADCAST_FAILURES = ("could not be broadcast together with shapes", "cannot be broadcast to a single shape",
                       "cannot be broadcast together", "Cannot broadcast")


_BACKEND_OUT_OF_RANGE = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")


def _reworded(op, args, params, error):
    """The vizgrad error for an error a backend raised inside ``op``'s forward: the failure
    path of :meth:`Op.apply` (the success path pays nothing). The public function the user
    called is found on the call stack; an op may define ``explain(name, *args, **params)``
    returning the error in its own words when it recognises the mistake; broadcasting,
    dtype and index failures are reworded here; anything else keeps the backend's text
    after the public name."""
    name = public_caller(op.__name__.lower(), depth=2)
    explain = getattr(op, "explain", None)
    if explain is not None:
        explained = explain(name, *args, **params)
        if explained is not None:
            return explained
    if isinstance(error, ValueError) and any(text in str(error) for text in _BROADCAST_FAILURES):
        shapes = [tuple(arg.shape) for arg in args if isinstance(arg, Tensor)]
        for first, left in enumerate(shapes):
            for right in shapes[first + 1:]:
                for dim in range(-1, -min(len(left), len(right)) - 1, -1):
                    if left[dim] != right[dim] and 1 not in (left[dim], right[dim]):
                        return ShapeError(
                            f"{name}: shapes {format_shape(left)} and {format_shape(right)} cannot be "
                            f"broadcast together: dim {dim} is {left[dim]} vs {right[dim]}")
        return ShapeError(f"{name}: the shapes of {_describe_args(args)} cannot be broadcast together")
    if isinstance(error, TypeError) or "could not convert" in str(error):
        return DTypeError(f"{name}: unsupported argument types: {_describe_args(args)}")
    if isinstance(error, IndexError):
        found = _BACKEND_OUT_OF_RANGE.search(str(error))
        if found is not None:
            index, dim, size = found.groups()
            return IndexingError(f"{name}: index {index} is out of range for dim {dim} of size {size}")
        return IndexingError(f"{name}: index out of range for {_describe_args(args)}")
    if isinstance(error, ArithmeticError):
        return ArgumentError(f"{name}: {_describe_args(args)}: {_plain(error)}")
    return ArgumentError(f"{name}: invalid arguments {_describe_args(args)}: {_plain(error)}")


def _plain(error):
    """A backend's message, trimmed of the backend's own vocabulary."""
    text = str(error).rstrip(".")
    for word, plain in (("ufunc ", "function "), ("numpy.", ""), ("NumPy ", ""), ("numpy ", ""),
                        ("ndarray", "tensor")):
        text = text.replace(word, plain)
    return text


#: A dense op -> the op that computes it when an argument is a sparse COO tensor (ops/sparse.py
#: fills it: ``MatMul`` -> ``SparseMatMul``, ``Add`` -> ``SparseAdd``, ...).
SPARSE_RULES = {}


def _sparse_rule(op, args, params):
    """Apply ``op``'s sparse COO counterpart, or say that ``op`` has none."""
    rule = SPARSE_RULES.get(op)
    if rule is None:
        name = public_caller(op.__name__.lower())
        raise UnsupportedError(f"{name}: not implemented for sparse COO tensors (layout=vizgrad.sparse_coo); "
                               "call .to_dense() first")
    return rule.apply(*args, **params)


def _describe_args(args):
    """``a Tensor of shape (2,) and dtype float32 and a str ('a')``: the arguments of an op."""
    parts = []
    for arg in args:
        if isinstance(arg, Tensor):
            parts.append(f"a Tensor of shape {format_shape(arg.shape)}, dtype {arg.dtype.name} on {arg.device}")
        else:
            text = repr(arg)
            parts.append(f"a {type(arg).__name__}" + (f" ({text})" if len(text) <= 40 else ""))
    return " and ".join(parts)


def _device_mismatch(op, args):
    devices = []
    for arg in args:
        if isinstance(arg, Tensor) and str(arg.device) not in devices:
            devices.append(str(arg.device))
    return DeviceError(f"{public_caller(op.__name__.lower())} got tensors on different devices: "
                       f"{' and '.join(devices)}. Move them to one device first, e.g. with .to('{devices[0]}').")
