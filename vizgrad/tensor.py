"""``vizgrad.Tensor``: an array of one backend plus its autograd state."""

import itertools
import operator
import weakref

import numpy as np

from . import dtypes
from .autograd import api as autograd_api
from .autograd.grad_mode import state
from .autograd.hooks import add_hook
from .backends import backend_of
from .backends.base import _by_array_type
from .device import as_device, device
from .errors import ArgumentTypeError, BackwardError, DeviceError, DTypeError, ShapeError, check_dim, format_shape

_next_tensor_id = itertools.count(1)
_dtype_of_native = {}  # a backend's dtype object -> its vizgrad dtype (``Tensor.dtype`` is read often)
_new = object.__new__
_tuple_new = tuple.__new__


_sizes = {}   # a shape tuple -> its Size: shapes repeat, and reading x.shape is frequent


def _size_of(shape):
    if len(_sizes) > 4096:
        _sizes.clear()
    size = _sizes[shape] = _tuple_new(Size, shape)
    return size


class Size(tuple):
    """A tensor's shape, ``x.shape`` or ``x.size()``: a tuple of ints, as ``torch.Size``.

    It prints as ``vizgrad.Size([64, 1, 28, 28])`` (PyTorch: ``torch.Size([...])``; vizgrad
    names its own module, as in ``vizgrad.float32``); slicing and ``+`` give a Size again.

    Example::

        vizgrad.zeros(2, 3).shape               # vizgrad.Size([2, 3])
        vizgrad.zeros(2, 3).shape.numel()       # 6
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for position, n in enumerate(sizes):
            if isinstance(n, bool) or not hasattr(n, "__index__"):
                raise ArgumentTypeError(f"Size: takes an iterable of 'int' (item {position} is "
                                        f"'{type(n).__name__}')")
        return _tuple_new(cls, (n.__index__() for n in sizes))

    def __repr__(self):
        return f"vizgrad.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return _tuple_new(Size, result) if isinstance(key, slice) else result

    def __add__(self, other):
        return _tuple_new(Size, tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return _tuple_new(Size, tuple(other) + tuple(self))

    def __mul__(self, times):
        return _tuple_new(Size, tuple.__mul__(self, times))

    __rmul__ = __mul__

    def numel(self):
        """The number of elements a tensor of this shape holds."""
        count = 1
        for n in self:
            count *= n
        return count

    def __reduce__(self):
        return (Size, (tuple(self),))


class Tensor:
    """A multi-dimensional array that records the ops applied to it for autograd.

    Create tensors with :func:`vizgrad.tensor` or the factories (``zeros``, ``randn``,
    ...). Attributes follow PyTorch: ``shape``, ``dtype``, ``device``,
    ``requires_grad``, ``grad``, ``grad_fn``, ``is_leaf``; ``name`` is vizgrad's own,
    an optional label the visual layers show.

    Example::

        x = vizgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        x.grad          # tensor([2., 4., 6.])
    """

    # ``requires_grad`` and ``grad`` are properties over the ``_requires_grad`` and ``_grad`` slots
    # (defined below the class): reading one is a slot read, assigning one is checked as PyTorch
    # checks it. vizgrad's own code writes the slots.
    __slots__ = ("_array", "_requires_grad", "_grad", "grad_fn", "_output_nr", "__dict__", "__weakref__")
    # Rarely set, so class-level defaults keep tensor creation cheap (a tensor that sets one
    # keeps it in its __dict__).
    name = None
    _base = None            # the tensor whose memory a view shares
    _counter = None         # the version counter, a one-element list shared with views
    _view_version = 0       # a view: the version at which its grad_fn last matched its base
    _multi_output_view = None   # (function, output number, whether a view of it) for a piece of unbind/split/chunk
    _hooks = None           # register_hook on a leaf: {handle id: hook}
    _post_accumulate_hooks = None
    _accumulator = None     # a weak reference to the leaf's AccumulateGrad node
    _grad_record = None     # (backward pass, passes summed, the .grad it left, its version): engine._store_grad
    _uid = None
    __array_priority__ = 1000  # NumPy defers to Tensor's reflected operators
    __array_ufunc__ = None

    def __init__(self, *args, dtype=None, device=None, requires_grad=False, name=None):
        """PyTorch's legacy constructor: ``Tensor(2, 3)`` (or ``Tensor(size)``) is a tensor of
        that shape, ``Tensor([1, 2])`` a copy of the data; both in the default float dtype
        (``Tensor()`` is empty). :func:`vizgrad.tensor` infers the dtype instead."""
        from .creation import _to_array, zeros  # lazy: creation and the ops import Tensor
        dtype = dtypes.default_float if dtype is None else dtype
        if len(args) == 1 and isinstance(args[0], Size) or args and all(_is_size_int(a) for a in args):
            array = zeros(*args, dtype=dtype, device=device)._array
        elif len(args) == 1:
            array = _to_array(args[0], dtype, device)
        elif not args:
            array = zeros(0, dtype=dtype, device=device)._array
        else:
            raise ArgumentTypeError(f"Tensor: pass sizes (Tensor(2, 3)) or one sequence of values (Tensor([1, 2])), "
                                    f"got {', '.join(type(a).__name__ for a in args)}")
        self._array, self._requires_grad, self.grad_fn, self._output_nr, self._grad = array, False, None, 0, None
        if name is not None:
            self.name = name
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(array, requires_grad=False, grad_fn=None, output_nr=0):
        """Wrap a backend array (no copy). Internal: users call :func:`vizgrad.tensor`."""
        tensor = _new(Tensor)       # (every op's output: the slots set here, not in a helper's frame)
        tensor._array = array
        tensor._requires_grad = requires_grad
        tensor.grad_fn = grad_fn
        tensor._output_nr = output_nr
        tensor._grad = None
        return tensor

    # --- metadata ------------------------------------------------------------
    def _backend(self):
        return _by_array_type.get(type(self._array)) or backend_of(self._array)

    @property
    def shape(self):
        """The size of each dimension, a :class:`Size` (a tuple)."""
        shape = self._array.shape
        size = _sizes.get(shape)
        return size if size is not None else _size_of(shape)

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        shape = self._array.shape
        if dim is None:
            size = _sizes.get(shape)
            return size if size is not None else _size_of(shape)
        return shape[_dim_index(dim, len(shape), "size")]

    @property
    def ndim(self):
        return self._array.ndim

    def dim(self):
        return self._array.ndim

    ndimension = dim

    def numel(self):
        """The number of elements."""
        count = 1
        for n in self._array.shape:
            count *= n
        return count

    nelement = numel

    def element_size(self):
        """Bytes per element (4 for float32)."""
        return self.dtype.itemsize

    @property
    def itemsize(self):
        """Bytes per element, as :meth:`element_size`."""
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """Bytes of all the elements (``numel() * element_size()``)."""
        return self.numel() * self.dtype.itemsize

    @property
    def dtype(self):
        native = self._array.dtype
        key = (type(native), native)   # with its type: dtypes of two libraries must not be compared
        found = _dtype_of_native.get(key)
        if found is None:
            found = _dtype_of_native[key] = dtypes.as_dtype(self._backend().dtype_name(self._array))
        return found

    @property
    def device(self):
        backend = self._backend()
        if backend.multi_device:
            return device(backend.device_type, backend.device_index(self._array))
        return device(backend.device_type)

    @property
    def is_cuda(self):
        return self._backend().device_type == "cuda"

    @property
    def is_xpu(self):
        """False: vizgrad's devices are the CPU and CUDA GPUs (PyTorch's ``is_xpu`` is Intel GPUs)."""
        return False

    is_mps = is_meta = is_xpu   # Apple GPUs and meta tensors, which vizgrad does not have either

    def is_floating_point(self):
        return self._backend().is_floating(self._array)

    @property
    def is_leaf(self):
        """True for tensors made by the user (or that do not require grad): only leaves
        get ``.grad`` filled by backward."""
        return self.grad_fn is None

    @property
    def uid(self):
        """A small id, unique in this process and stable for the tensor's life (for the visual layers)."""
        if self._uid is None:
            self._uid = next(_next_tensor_id)
        return self._uid

    @property
    def data(self):
        """The same values without history (shares memory), as in PyTorch."""
        return self.detach()

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise ArgumentTypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._array = value._array

    @property
    def T(self):
        """Dimensions reversed (for 2-D: the transpose)."""
        from .ops.shape import permute  # lazy: creation and the ops import Tensor
        return permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        """The last two dimensions swapped (a batch of matrix transposes)."""
        if self.ndim < 2:
            raise ShapeError(f"mT needs a tensor of at least 2 dimensions, got shape {format_shape(self.shape)}")
        from .ops.shape import transpose  # lazy: creation and the ops import Tensor
        return transpose(self, -2, -1)

    # --- conversion ----------------------------------------------------------
    def numpy(self):
        """A NumPy array of the values (shares memory on the CPU). Fails for tensors that
        require grad, as in PyTorch: call ``.detach().numpy()``."""
        if self.requires_grad and state.grad_enabled:
            raise BackwardError("Can't call numpy() on a tensor that requires grad: "
                                "use tensor.detach().numpy()")
        backend = self._backend()
        if backend.device_type == "cuda":
            raise DeviceError("Can't call numpy() on a cuda tensor: use tensor.cpu().numpy()")
        return backend.to_numpy(self._array)

    def item(self):
        """The single value of a one-element tensor, as a Python number."""
        if self.numel() != 1:
            raise ShapeError(f"item() needs a tensor with one element, got shape {format_shape(self.shape)}")
        return self._backend().to_numpy(self._array).reshape(()).item()

    def tolist(self):
        """Nested Python lists of the values."""
        return self._backend().to_numpy(self._array).tolist()

    def to(self, *args, dtype=None, device=None, copy=False):
        """Move to a device and/or cast to a dtype: ``x.to("cuda")``, ``x.to(vizgrad.float64)``,
        ``x.to(other_tensor)``. Differentiable."""
        for arg in args:
            if isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, dtypes.dtype) or (not isinstance(arg, str) and _is_dtype_like(arg)):
                dtype = arg
            elif isinstance(arg, str) and arg in dtypes._BY_NAME and ":" not in arg:
                dtype = arg
            else:
                device = arg
        from .ops.conversion import to_device, to_dtype  # lazy: creation and the ops import Tensor
        result = self
        if device is not None:
            result = to_device(result, as_device(device))
        if dtype is not None:
            result = to_dtype(result, dtypes.as_dtype(dtype))
        if copy and result is self:
            result = self.clone()
        return result

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def bfloat16(self):
        return self.to(dtypes.bfloat16)

    def long(self):
        return self.to(dtypes.int64)

    def int(self):
        return self.to(dtypes.int32)

    def bool(self):
        return self.to(dtypes.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    def type(self, dtype=None, non_blocking=False):
        """With no argument, the legacy type name (``'vizgrad.FloatTensor'``; PyTorch writes
        ``'torch.FloatTensor'``); with a dtype, a legacy type (``vizgrad.LongTensor``) or such a
        name, this tensor cast to it (itself when the dtype already matches)."""
        if dtype is None:
            return ("vizgrad.cuda." if self.is_cuda else "vizgrad.") + _LEGACY_NAMES[self.dtype]
        if isinstance(dtype, str) and dtype.rpartition(".")[2] in _LEGACY_TYPES:
            dtype = _LEGACY_TYPES[dtype.rpartition(".")[2]]
        if isinstance(dtype, LegacyTensorType):
            dtype = dtype.dtype
        dtype = dtypes.as_dtype(dtype)
        return self if dtype is self.dtype else self.to(dtype)

    # --- new tensors like this one -------------------------------------------
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A tensor holding ``data``, with this tensor's dtype and device unless given."""
        from .creation import tensor  # lazy: creation and the ops import Tensor
        return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype or self.dtype,
                      device=device or self.device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of ``size``, with this tensor's dtype and device unless given."""
        from .creation import zeros  # lazy: creation and the ops import Tensor
        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of ``size``, with this tensor's dtype and device unless given."""
        from .creation import ones  # lazy: creation and the ops import Tensor
        return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` (zero-filled in vizgrad), with this tensor's dtype and device unless given."""
        from .creation import empty  # lazy: creation and the ops import Tensor
        return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        """``fill_value`` everywhere in ``size``, with this tensor's dtype and device unless given."""
        from .creation import full  # lazy: creation and the ops import Tensor
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """:func:`vizgrad.multinomial` of this tensor's weights."""
        from .creation import multinomial  # lazy: creation and the ops import Tensor
        return multinomial(self, num_samples, replacement, generator=generator)

    # --- shapes of other tensors -----------------------------------------------
    def view_as(self, other):
        """``self.view(other.shape)``."""
        from .ops.shape import view  # lazy: creation and the ops import Tensor
        return view(self, other.shape)

    def reshape_as(self, other):
        """``self.reshape(other.shape)``."""
        from .ops.shape import reshape  # lazy: creation and the ops import Tensor
        return reshape(self, other.shape)

    def t(self):
        """The transpose of a matrix; 0-d and 1-d tensors are returned as they are (as views)."""
        from .ops.shape import MatrixTranspose  # lazy: creation and the ops import Tensor
        if self.ndim > 2:
            raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D "
                             f"(shape {format_shape(self.shape)}): use transpose(dim0, dim1) or .mT")
        return MatrixTranspose.apply(self, dim0=0, dim1=self.ndim - 1 if self.ndim else 0)._as_view_of(self)

    def t_(self):
        """:meth:`t` in place: this tensor becomes its own transpose."""
        result = self.t()
        if state.grad_enabled and self.requires_grad:
            if self.grad_fn is None:
                raise BackwardError("t_: a leaf tensor that requires grad cannot be modified in place while "
                                    "gradients are recorded; use t(), or do it under vizgrad.no_grad()")
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
        self._array = result._array
        self._bump_version()
        return self

    # --- autograd ------------------------------------------------------------
    def detach(self):
        """A tensor with the same values and memory, cut from the graph."""
        tensor = Tensor._make(self._array)
        tensor._share_version_counter(self)
        return tensor

    def detach_(self):
        """Cut this tensor from the graph, making it a leaf. Views refuse, as in PyTorch: their
        history is their base's."""
        if self._base is not None:
            raise BackwardError("detach_: can't detach views in-place (this tensor is a view of a tensor of shape "
                                f"{format_shape(self._base.shape)}); use detach() instead")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad=True):
        """Ask backward to fill ``.grad`` for this leaf tensor. Only floating-point tensors can;
        a result (not a leaf) already requires grad and cannot stop."""
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise ArgumentTypeError(f"requires_grad_: requires_grad must be a bool, got {type(requires_grad).__name__} "
                                    f"({requires_grad!r})")
        if not self.is_leaf:
            if requires_grad:
                return self
            raise BackwardError(
                "requires_grad_(False) can only change leaf tensors; this tensor is the result of "
                f"{self.grad_fn.name()}. Use tensor.detach() for a tensor cut from the graph.")
        _set_requires_grad(self, bool(requires_grad), "requires_grad_")
        return self

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward (leaves always keep it)."""
        if not self.requires_grad:
            raise BackwardError("retain_grad() on a tensor that does not require grad")
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node.retained_grads is None:
            node.retained_grads = {}
        node.retained_grads[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        node = self.grad_fn
        return bool(node is not None and node.retained_grads and self._output_nr in node.retained_grads)

    def explain_grad(self, loss=None):
        """Why this tensor's ``.grad`` is what it is: :func:`vizgrad.explain_grad`."""
        import sys
        from .tutor.explain import explain_from  # lazy: the tutor builds on Tensor
        return explain_from(self, loss, sys._getframe(1))

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor with respect to the leaves of its graph and
        add them into their ``.grad``.

        ``gradient`` is required unless this tensor has one element. The graph's saved
        values are freed afterwards unless ``retain_graph=True``; ``create_graph=True``
        records the backward pass itself, for higher-order gradients. ``inputs``
        restricts accumulation to those tensors.
        """
        autograd_api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when the gradient for this tensor is computed; a returned
        Tensor replaces the gradient. Returns a handle with ``.remove()``.

        Hooks run in registration order, before ``retain_grad`` stores the gradient and,
        on leaves, before it is accumulated into ``.grad``.
        """
        if not self.requires_grad:
            raise BackwardError("cannot register a hook on a tensor that does not require grad")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = {}
            return add_hook(self._hooks, hook)
        node = self.grad_fn
        if node.tensor_pre_hooks is None:
            node.tensor_pre_hooks = {}
        return add_hook(node.tensor_pre_hooks.setdefault(self._output_nr, {}), hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after backward has updated this leaf's ``.grad``
        (an optimizer can step right there). Returns a handle with ``.remove()``."""
        if self.grad_fn is not None:
            raise BackwardError("post-accumulate-grad hooks can only be registered on leaf tensors")
        if not self.requires_grad:
            raise BackwardError("cannot register a hook on a tensor that does not require grad")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = {}
        return add_hook(self._post_accumulate_hooks, hook)

    @property
    def _version(self):
        """How many in-place changes this tensor's memory has seen (shared with its views and
        detached copies); backward compares it with the version a saved tensor had."""
        counter = self._counter
        return counter[0] if counter is not None else 0

    def _bump_version(self):
        if self._counter is None:
            self._counter = [1]
        else:
            self._counter[0] += 1

    def _share_version_counter(self, source):
        """Make this tensor count in-place changes together with ``source`` (same memory)."""
        if source._counter is None:
            source._counter = [0]
        self._counter = source._counter

    def _as_view_of(self, source):
        """Mark this tensor as a view of ``source``: shared version counter, and ``_base`` set to
        the tensor that owns the memory. An in-place write into the view records a CopySlices
        node on the base; a view whose base changed since its history was recorded gets a fresh
        history (read from the base) the next time an op uses it, as in PyTorch."""
        self._share_version_counter(source)
        self._base = source._base if source._base is not None else source
        self._view_version = self._counter[0]
        if source._multi_output_view is not None:   # a view of a piece of unbind/split/chunk
            self._multi_output_view = source._multi_output_view[:2] + (True,)
        return self

    # --- Python protocol -----------------------------------------------------
    def __repr__(self):
        from .printing import tensor_repr
        return tensor_repr(self)

    def __len__(self):
        if self.ndim == 0:
            raise ArgumentTypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        """The slices along dim 0, as PyTorch: ``unbind(0)`` (one node for all of them)."""
        if self.ndim == 0:
            raise ArgumentTypeError("iteration over a 0-d tensor")
        from .ops.joins import unbind  # lazy: creation and the ops import Tensor
        return iter(unbind(self, 0))

    def __bool__(self):
        if self.numel() != 1:
            raise ShapeError(f"the truth value of a tensor of shape {format_shape(self.shape)} is ambiguous: "
                             "use .any() or .all()")
        return bool(self.item())

    def __format__(self, spec):
        from .printing import format_tensor
        return format_tensor(self, spec)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._backend().is_floating(self._array) or self.numel() != 1:
            raise ArgumentTypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        array = self.detach().numpy() if self._backend().device_type != "cuda" else None
        if array is None:
            raise DeviceError("a cuda tensor cannot become a NumPy array implicitly: use .cpu().numpy()")
        return array if dtype is None else array.astype(dtype)

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    __hash__ = object.__hash__

    def __deepcopy__(self, memo):
        """A copy with its own memory, of the same class (a Parameter stays a Parameter), as
        ``copy.deepcopy(model)`` needs. Only leaves can be copied: a result's history cannot."""
        if self.grad_fn is not None:
            raise BackwardError("only leaf tensors can be deep-copied; this one is the result of "
                                f"{self.grad_fn.name()}: deep-copy tensor.detach() instead")
        import copy
        copied = Tensor._make(self._backend().xp.asarray(self._array, copy=True))
        copied.__class__ = type(self)
        copied._requires_grad = self._requires_grad
        copied.name = self.name
        memo[id(self)] = copied
        if self.grad is not None:
            copied.grad = copy.deepcopy(self.grad, memo)
        return copied

    def __reduce__(self):
        raise ArgumentTypeError("Tensors are not pickled: use vizgrad.save(obj, path), which never runs code on load")


def _set_requires_grad(tensor, value, name="requires_grad"):
    """``tensor.requires_grad = value``, refused where PyTorch refuses it: not a bool, not a
    leaf, an integer or bool tensor asked to require grad."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name}: requires_grad must be a bool, got {type(value).__name__} ({value!r})")
    if tensor.grad_fn is not None:
        raise BackwardError(f"{name}: you can only change requires_grad flags of leaf tensors; this one is the result "
                            f"of {tensor.grad_fn.name()}. For a tensor that does not require grad, use tensor.detach()")
    if value and not tensor._backend().is_floating(tensor._array):
        raise DTypeError(f"{name}: only floating-point tensors can require gradients, got dtype {tensor.dtype.name}")
    tensor._requires_grad = bool(value)


def _set_grad(tensor, grad):
    """``tensor.grad = grad``: None, or a Tensor of the tensor's shape, dtype and device."""
    if grad is not None:
        if not isinstance(grad, Tensor):
            raise ArgumentTypeError(f"grad: assigned grad expected to be a Tensor or None, but got a "
                                    f"{type(grad).__name__}")
        if tuple(grad.shape) != tuple(tensor.shape):
            raise ShapeError(f"grad: attempting to assign a gradient of shape {format_shape(grad.shape)} to a tensor "
                             f"of shape {format_shape(tensor.shape)}; they must be the same")
        if grad.dtype is not tensor.dtype:
            raise DTypeError(f"grad: attempting to assign a gradient of dtype {grad.dtype.name} to a tensor of dtype "
                             f"{tensor.dtype.name}; they must match")
        if grad.device != tensor.device:
            raise DeviceError(f"grad: attempting to assign a gradient on {grad.device} to a tensor on "
                              f"{tensor.device}; they must be on the same device")
    tensor._grad = grad


# (attrgetter: the cheapest getter a property can call; vizgrad's hot paths read the slots)
Tensor.requires_grad = property(operator.attrgetter("_requires_grad"), _set_requires_grad,
                                doc="Whether backward computes a gradient for this tensor (a bool; only leaves "
                                    "may change it, and only floating-point tensors may require grad).")
Tensor.grad = property(operator.attrgetter("_grad"), _set_grad,
                       doc="The gradient backward accumulated for this tensor (None until then); assign None or "
                           "a Tensor of its shape, dtype and device.")


def _is_size_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class LegacyTensorType(type):
    """The type of ``vizgrad.FloatTensor`` and friends: PyTorch's legacy per-dtype tensor types.
    Calling one builds a CPU tensor of its dtype (``LongTensor(2, 3)`` a shape, ``LongTensor([1, 2])``
    data); ``isinstance(x, FloatTensor)`` asks whether ``x`` is a CPU float32 tensor."""

    def __call__(cls, *args, device=None):
        return Tensor(*args, dtype=cls.dtype, device=device)

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype and not instance.is_cuda

    def __repr__(cls):
        return f"<class 'vizgrad.{cls.__name__}'>"


_LEGACY_NAMES = {dtypes.float16: "HalfTensor", dtypes.bfloat16: "BFloat16Tensor", dtypes.float32: "FloatTensor",
                 dtypes.float64: "DoubleTensor", dtypes.int32: "IntTensor", dtypes.int64: "LongTensor",
                 dtypes.bool_: "BoolTensor"}
_LEGACY_TYPES = {name: LegacyTensorType(name, (), {"dtype": dtype, "__doc__": f"PyTorch's legacy {name}: "
                                                   f"a CPU tensor of dtype {dtype.name}."})
                 for dtype, name in _LEGACY_NAMES.items()}
HalfTensor, BFloat16Tensor, FloatTensor, DoubleTensor, IntTensor, LongTensor, BoolTensor = (
    _LEGACY_TYPES[name] for name in ("HalfTensor", "BFloat16Tensor", "FloatTensor", "DoubleTensor", "IntTensor",
                                      "LongTensor", "BoolTensor"))


def is_tensor(obj):
    """True when ``obj`` is a vizgrad Tensor (a Parameter included)."""
    return isinstance(obj, Tensor)


def _is_dtype_like(value):
    try:
        dtypes.as_dtype(value)
        return True
    except (DTypeError, TypeError):
        return False


def _dim_index(dim, ndim, op):
    """A non-negative dim, or an error that names the op and the valid range."""
    return check_dim(op, dim, ndim)


from .autograd import function as _function  # noqa: E402  (the engine needs the Tensor type)

_function.Tensor = Tensor
