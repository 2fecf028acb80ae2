"""Jacobians, Hessians and their products with vectors, as in ``torch.autograd.functional``.

Every function calls ``func(*inputs)``. ``inputs`` is a Tensor or a tuple of Tensors
and ``func`` returns a Tensor or a tuple of Tensors; results follow the same
convention (a tuple where the inputs or outputs were a tuple, a bare Tensor
otherwise).

For ``y = f(x)`` with Jacobian ``J = ∂y/∂x`` and, for scalar ``f``, Hessian ``H``:

=========  ===================  ============================================
function   returns              computed as
=========  ===================  ============================================
vjp        ``(f(x), vᵀJ)``      one reverse pass
jvp        ``(f(x), J v)``      the double-vjp trick (below)
jacobian   ``J``                one reverse pass per output element
hessian    ``H``                the Jacobian of the gradient
vhp        ``(f(x), vᵀH)``      the vjp of the gradient
hvp        ``(f(x), H v)``      the double-vjp trick on the gradient
=========  ===================  ============================================

The double-vjp trick gives forward-mode products from reverse mode only: for a
dummy ``u``, ``g(u) = Jᵀu`` is linear in ``u``, so the vjp of ``g`` with ``v`` is
``(Jᵀ)ᵀv = J v``.

Everything is built on :func:`vizgrad.autograd.grad` and runs with recording on,
also inside ``no_grad``. With ``create_graph=True`` the results stay in the graph
(they can be differentiated again, also with respect to the caller's tensors);
otherwise they are detached. With ``strict=True`` an output that does not depend
on an input raises :class:`~vizgrad.errors.BackwardError`; by default its part of
the result is zeros.
"""

from ..errors import BackwardError, DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError
from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``vᵀJ`` of ``func`` at ``inputs``: ``(outputs, vjp)``.

    ``v`` has the shape of the outputs (a tuple for tuple outputs); it may be omitted
    when ``func`` returns one Tensor with a single element. ``vjp`` has the structure
    of ``inputs``: ``vjp[j] = Σᵢ vᵢᵀ ∂yᵢ/∂xⱼ``.

    Example::

        x = vizgrad.tensor([1.0, 2.0])
        y, g = vjp(lambda x: x ** 2, x, vizgrad.tensor([1.0, 10.0]))   # g == [2., 40.]
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "vjp")
        outputs_tuple, outputs = _call(func, inputs, "vjp")
        _check_outputs(outputs, strict, "vjp")
        v = _vectors(v, outputs, "vjp", "output")
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _fill(grads, inputs, strict, "vjp", _independent)
        return _pack(_finish(outputs, create_graph), outputs_tuple), _pack(_finish(grads, create_graph),
                                                                           inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``: ``(outputs, jvp)``.

    ``v`` has the shape of the inputs; it may be omitted when ``inputs`` is one
    Tensor with a single element. ``jvp`` has the structure of the outputs:
    ``jvp[i] = Σⱼ ∂yᵢ/∂xⱼ vⱼ`` (the directional derivative along ``v``). Computed with
    the double-vjp trick, so it costs two reverse passes.

    Example::

        x = vizgrad.tensor([1.0, 2.0])
        y, d = jvp(lambda x: x ** 3, x, vizgrad.tensor([1.0, 1.0]))    # d == 3x² == [3., 12.]
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "jvp")
        v = _vectors(v, inputs, "jvp", "input")
        outputs_tuple, outputs = _call(func, inputs, "jvp")
        _check_outputs(outputs, strict, "jvp")
        products = _forward_product(outputs, inputs, v, create_graph, strict, "jvp", _independent)
        return _pack(_finish(outputs, create_graph), outputs_tuple), _pack(_finish(products, create_graph),
                                                                           outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j][a, b] = ∂yᵢ[a] / ∂xⱼ[b]``.

    Each block has shape ``yᵢ.shape + xⱼ.shape``. One input and one output give a
    Tensor; a tuple of inputs gives a tuple over inputs, a tuple of outputs a tuple
    over outputs, and both give ``J[i][j]`` (output ``i``, input ``j``).

    Rows are computed one reverse pass per output element. ``vectorize`` is accepted
    for PyTorch compatibility and changes nothing: vizgrad has no ``vmap``.

    Example::

        x = vizgrad.tensor([1.0, 2.0, 3.0])
        jacobian(lambda x: x ** 2, x)        # diag([2., 4., 6.]), shape (3, 3)
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "jacobian")
        outputs_tuple, outputs = _call(func, inputs, "jacobian")
        _check_outputs(outputs, strict, "jacobian")
        blocks = _jacobian(outputs, inputs, create_graph, strict, "jacobian", _independent)
        return _pack_blocks(blocks, outputs_tuple, inputs_tuple)


def hessian(func, inputs, create_graph=False, strict=False):
    """The Hessian of a scalar ``func`` at ``inputs``: ``H[i][j][a, b] = ∂²f / ∂xᵢ[a] ∂xⱼ[b]``.

    ``func`` must return one Tensor with a single element. One input gives a Tensor
    of shape ``x.shape + x.shape``; a tuple of inputs gives a tuple of tuples,
    block ``H[i][j]`` of shape ``xᵢ.shape + xⱼ.shape``.

    Example::

        x = vizgrad.tensor([1.0, 2.0])
        hessian(lambda x: (x ** 3).sum(), x)    # diag(6x) == [[6., 0.], [0., 12.]]
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "hessian")
        output = _scalar_output(func, inputs, strict, "hessian")
        gradient = _fill(_grad((output,), inputs, (None,), True), inputs, strict, "hessian", _independent)
        blocks = _jacobian(gradient, inputs, create_graph, strict, "hessian", _linear)
        return _pack_blocks(blocks, inputs_tuple, inputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``vᵀH`` of a scalar ``func``: ``(output, vhp)``.

    ``v`` has the shape of the inputs (it may be omitted for one single-element
    input); ``vhp`` too. Computed as the vjp of the gradient: two reverse passes.

    Example::

        x = vizgrad.tensor([1.0, 2.0])
        f, p = vhp(lambda x: (x ** 3).sum(), x, vizgrad.tensor([1.0, 1.0]))   # p == 6x == [6., 12.]
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "vhp")
        v = _vectors(v, inputs, "vhp", "input")
        output = _scalar_output(func, inputs, strict, "vhp")
        gradient = _grad((output,), inputs, (None,), True)
        if strict:
            _fill(gradient, inputs, strict, "vhp", _independent)
        products = _fill(_grad(gradient, inputs, v, create_graph), inputs, strict, "vhp", _linear)
        return _finish((output,), create_graph)[0], _pack(_finish(products, create_graph), inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar ``func``: ``(output, hvp)``.

    ``v`` has the shape of the inputs (it may be omitted for one single-element
    input); ``hvp`` too. For twice continuously differentiable ``func`` the Hessian
    is symmetric and ``hvp`` equals :func:`vhp`; this one is the jvp of the gradient
    (double-vjp trick, three reverse passes), so it is exact also where ``H`` is not
    symmetric, but slower.

    Example::

        x = vizgrad.tensor([1.0, 2.0])
        f, p = hvp(lambda x: (x ** 3).sum(), x, vizgrad.tensor([1.0, 0.0]))   # p == [6., 0.]
    """
    with enable_grad():
        inputs_tuple, inputs = _prepare(inputs, create_graph, "hvp")
        v = _vectors(v, inputs, "hvp", "input")
        output = _scalar_output(func, inputs, strict, "hvp")
        gradient = _fill(_grad((output,), inputs, (None,), True), inputs, strict, "hvp", _independent)
        products = _forward_product(gradient, inputs, v, create_graph, strict, "hvp", _linear)
        return _finish((output,), create_graph)[0], _pack(_finish(products, create_graph), inputs_tuple)


# --- the shared steps ---------------------------------------------------------
def _as_tuple(value, caller, what):
    """``(was_a_tuple, tuple_of_tensors)``; ``what`` names the value in errors."""
    from ..tensor import Tensor
    is_tuple = isinstance(value, tuple)
    values = tuple(value) if is_tuple else (value,)
    for position, item in enumerate(values):
        if not isinstance(item, Tensor):
            where = f"{what}[{position}]" if is_tuple else what
            raise ArgumentTypeError(f"{caller}: {what} must be a Tensor or a tuple of Tensors, "
                                    f"but {where} is a {type(item).__name__}")
    return is_tuple, values


def _prepare(inputs, create_graph, caller):
    """Tensors to differentiate with respect to: fresh leaves cut from any history, or,
    under ``create_graph``, a recorded copy of inputs that require grad (so results
    can be differentiated with respect to the caller's tensors)."""
    from ..ops.conversion import clone  # lazy: the ops and creation build on autograd
    from ..tensor import Tensor
    is_tuple, inputs = _as_tuple(inputs, caller, "inputs")
    prepared = []
    for position, tensor in enumerate(inputs):
        if not tensor.is_floating_point():
            raise DTypeError(f"{caller}: inputs[{position}] has dtype {tensor.dtype.name}; only "
                             "floating-point inputs can be differentiated")
        if create_graph and tensor.requires_grad:
            prepared.append(clone(tensor))
        else:
            prepared.append(Tensor._make(tensor._array, True))
    return is_tuple, tuple(prepared)


def _call(func, inputs, caller):
    out = func(*inputs)
    return _as_tuple(out, caller, "the function's output")


def _scalar_output(func, inputs, strict, caller):
    """``func(*inputs)``, checked to be one Tensor with a single element."""
    from ..tensor import Tensor
    output = func(*inputs)
    if not isinstance(output, Tensor):
        raise ArgumentTypeError(f"{caller}: the function must return a single Tensor, got a {type(output).__name__}")
    if output.numel() != 1:
        raise ShapeError(f"{caller}: the function must return a Tensor with a single element, got shape "
                         f"{format_shape(output.shape)}; reduce it first (.sum(), .mean())")
    _check_outputs((output,), strict, caller)
    return output


def _check_outputs(outputs, strict, caller):
    if not strict:
        return
    for position, output in enumerate(outputs):
        if not output.requires_grad:
            raise BackwardError(
                f"{caller} (strict=True): output {position} of the function does not require grad, so it "
                "does not depend differentiably on the inputs. Compute it from the inputs with vizgrad "
                "ops, or pass strict=False to get zeros for it.")


def _vectors(v, like, caller, what):
    """The ``v`` of a product, checked against ``like`` (the outputs or the inputs)."""
    from ..creation import ones_like  # lazy: the ops and creation build on autograd
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise ArgumentError(f"{caller}: v may be omitted only when the {what} is one Tensor with a single "
                                f"element; pass v with the {what}'s shape")
        return (ones_like(like[0]),)
    _, v = _as_tuple(v, caller, "v")
    if len(v) != len(like):
        raise ArgumentError(f"{caller}: v has {len(v)} entries but there {'is' if len(like) == 1 else 'are'} "
                            f"{len(like)} {what}{'s' if len(like) != 1 else ''}")
    for position, (vector, tensor) in enumerate(zip(v, like)):
        if vector.shape != tensor.shape:
            raise ShapeError(f"{caller}: v[{position}] has shape {format_shape(vector.shape)} but {what} "
                             f"{position} has shape {format_shape(tensor.shape)}; they must be equal")
    return v


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """:func:`vizgrad.autograd.grad` over the outputs that require grad; None for each
    input no output reaches (for every input when no output requires grad)."""
    from .api import grad
    pairs = [(output, seed) for output, seed in zip(outputs, grad_outputs)
             if output is not None and output.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([output for output, _ in pairs], list(inputs), [seed for _, seed in pairs],
                retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


def _independent(caller, position):
    return (f"{caller} (strict=True): the output does not depend on input {position}; pass strict=False "
            "to get zeros for it")


def _linear(caller, position):
    return (f"{caller} (strict=True): the gradient does not depend on input {position} (the function is "
            "at most linear in it), so its second derivatives are zero; pass strict=False to get zeros")


def _fill(grads, like, strict, caller, reason):
    """Zeros (shaped like ``like``) where a gradient is None; an error under ``strict``."""
    from ..creation import zeros_like  # lazy: the ops and creation build on autograd
    filled = []
    for position, (value, tensor) in enumerate(zip(grads, like)):
        if value is None:
            if strict:
                raise BackwardError(reason(caller, position))
            value = zeros_like(tensor)
        filled.append(value)
    return tuple(filled)


def _forward_product(outputs, inputs, v, create_graph, strict, caller, reason):
    """``J v`` for the Jacobian of ``outputs`` with respect to ``inputs``, by the
    double-vjp trick: ``g(u) = Jᵀu`` is linear in a dummy ``u``; its vjp with ``v`` is ``J v``."""
    from ..creation import zeros_like  # lazy: the ops and creation build on autograd
    dummies = tuple(zeros_like(output, requires_grad=True) if output.requires_grad else None
                    for output in outputs)
    transposed = _grad(outputs, inputs, dummies, True)
    if strict:
        _fill(transposed, inputs, strict, caller, reason)
    used = [u for u in dummies if u is not None]
    products = iter(_grad(transposed, used, v, create_graph) if used else ())
    results = [next(products) if u is not None else None for u in dummies]
    return _fill(results, outputs, strict, caller, reason)


def _jacobian(outputs, inputs, create_graph, strict, caller, reason):
    """``blocks[i][j]`` of shape ``outputs[i].shape + inputs[j].shape``: one reverse pass
    per output element, seeded with a row of the identity."""
    from .api import grad
    from ..creation import eye  # lazy: the ops and creation build on autograd
    from ..tensor import Tensor
    blocks = []
    for output in outputs:
        count = output.numel()
        rows = [[] for _ in inputs]
        if output.requires_grad and count:
            identity = eye(count, dtype=output.dtype, device=output.device)._array
            xp = output._backend().xp
            for element in range(count):
                seed = Tensor._make(xp.reshape(identity[element, ...], output.shape))
                grads = grad(output, list(inputs), seed, retain_graph=True, create_graph=create_graph,
                             allow_unused=True)
                for position, value in enumerate(grads):
                    rows[position].append(value)
        blocks.append(tuple(_assemble(column, output, tensor, create_graph, strict, caller, position, reason)
                            for position, (column, tensor) in enumerate(zip(rows, inputs))))
    return blocks


def _assemble(rows, output, tensor, create_graph, strict, caller, position, reason):
    """Stack the rows of one Jacobian block into shape ``output.shape + tensor.shape``."""
    from ..creation import zeros  # lazy: the ops and creation build on autograd
    from ..tensor import Tensor
    shape = tuple(output.shape) + tuple(tensor.shape)
    if not rows or all(row is None for row in rows):
        if strict and output.numel():
            raise BackwardError(reason(caller, position))
        return zeros(shape, dtype=tensor.dtype, device=tensor.device)
    rows = _fill(rows, (tensor,) * len(rows), False, caller, _independent)
    if create_graph:
        from ..ops import tensor_namespace as tx  # lazy: the ops and creation build on autograd
        return tx.reshape(tx.stack(list(rows)), shape)
    xp = tensor._backend().xp
    return Tensor._make(xp.reshape(xp.stack([row._array for row in rows]), shape))


def _finish(values, create_graph):
    """Results as returned: detached (without keeping the graph alive) unless ``create_graph``."""
    from ..tensor import Tensor
    if create_graph:
        return tuple(values)
    return tuple(Tensor._make(value._array) if value.requires_grad else value for value in values)


def _pack(values, as_tuple):
    return tuple(values) if as_tuple else values[0]


def _pack_blocks(blocks, outputs_tuple, inputs_tuple):
    if outputs_tuple and inputs_tuple:
        return tuple(tuple(row) for row in blocks)
    if outputs_tuple:
        return tuple(row[0] for row in blocks)
    if inputs_tuple:
        return tuple(blocks[0])
    return blocks[0][0]
