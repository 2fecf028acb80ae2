"""Modules as functions of their parameters: ``functional_call`` and ``stack_module_state``."""

from ..errors import ArgumentError, ArgumentTypeError, StateDictError, TransformError
from ..ops import joins
from ..tensor import Tensor


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict from names as ``named_parameters`` gives them, or a
    tuple of such dicts): ``functional_call(model, params, (x,))``. The module is left as it
    was. Names not given keep the module's own tensors, unless ``strict=True``, which
    requires every parameter and buffer and nothing else. ``tie_weights``: a tensor the
    module uses under two names (tied weights) is replaced under both when one is given.
    ``args`` is a tuple of positional arguments (a single one is wrapped), ``kwargs`` a dict.

    Example::

        params = {name: p.detach() for name, p in model.named_parameters()}
        grads = vizgrad.func.grad(lambda p, x: functional_call(model, p, (x,)).sum())(params, x)
    """
    replacements = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        replacements = _with_tied(module, replacements)
    if strict:
        _check_strict(module, replacements)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swapped = []
    try:
        for name, value in replacements.items():
            swapped.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, registry, attribute, previous in reversed(swapped):
            if registry is None:
                if previous is _ABSENT:
                    object.__delattr__(owner, attribute)
                else:
                    object.__setattr__(owner, attribute, previous)
            else:
                registry[attribute] = previous


_ABSENT = object()


def _merged(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ArgumentTypeError(f"functional_call: parameter_and_buffer_dicts must be a dict or a tuple of dicts, "
                                f"got {type(dicts).__name__}")
    merged, repeated = {}, []
    for d in dicts:
        for name, value in d.items():
            if name in merged and name not in repeated:
                repeated.append(name)
            merged[name] = value
    if repeated:
        raise ArgumentError(f"functional_call: {repeated} appeared in multiple dictionaries; behavior of functional "
                            "call is ambiguous")
    return merged


def _with_tied(module, replacements):
    """Names that share a tensor with a replaced name get the same replacement."""
    names_of = {}
    for name, tensor in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(tensor), []).append(name)
    tied = dict(replacements)
    for names in names_of.values():
        given = [name for name in names if name in replacements]
        for name in names:
            if given and name not in tied:
                tied[name] = replacements[given[0]]
    return tied


def _check_strict(module, replacements):
    expected = [name for name, _ in module.named_parameters(remove_duplicate=False)] + \
               [name for name, _ in module.named_buffers(remove_duplicate=False)]
    unexpected = [name for name in replacements if name not in expected]
    missing = [name for name in expected if name not in replacements]
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(repr(n) for n in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(repr(n) for n in missing) + ".")
        raise StateDictError("functional_call: " + "\n".join(lines), missing, unexpected)


def _swap(module, name, value):
    """Put ``value`` in the place of ``name``; returns what restores it."""
    owner_name, _, attribute = name.rpartition(".")
    try:
        owner = module.get_submodule(owner_name)
    except AttributeError:
        raise ArgumentError(f"functional_call: {name!r} names no submodule of {type(module).__name__}") from None
    if value is not None and not isinstance(value, Tensor):
        raise ArgumentTypeError(f"functional_call: the value for {name!r} must be a Tensor, got {type(value).__name__}")
    for registry in (owner._parameters, owner._buffers):
        if attribute in registry:
            previous = registry[attribute]
            registry[attribute] = value
            return owner, registry, attribute, previous
    previous = owner.__dict__.get(attribute, _ABSENT)       # not a parameter or buffer: a plain attribute
    object.__setattr__(owner, attribute, value)
    return owner, None, attribute, previous


def stack_module_state(models):
    """The parameters and buffers of ``models`` (modules of one architecture) stacked along a
    new dim 0: ``(params, buffers)``, two dicts by name, ready for
    ``vmap(functional_call-of-one-model)`` over an ensemble. The stacked parameters are new
    leaves (requiring grad where every model's does); the models are not changed.

    Example::

        params, buffers = stack_module_state(models)
        vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(params, buffers, x)
    """
    models = list(models)
    if not models:
        raise TransformError("stack_module_state: Expected at least one model, got 0.")
    if any(m.training != models[0].training for m in models):
        raise TransformError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = _stacked([dict(m.named_parameters()) for m in models], True)
    buffers = _stacked([dict(m.named_buffers()) for m in models], False)
    return params, buffers


def _stacked(states, leaves):
    names = list(states[0])
    for position, state in enumerate(states[1:], 1):
        if list(state) != names:
            raise ArgumentError(f"stack_module_state: model {position} has the tensors {list(state)}, model 0 has "
                                f"{names}: the models must have one architecture")
    stacked = {}
    for name in names:
        tensors = [state[name] for state in states]
        value = joins.stack([t.detach() for t in tensors])
        if leaves:
            value.requires_grad_(all(t.requires_grad for t in tensors))
        stacked[name] = value
    return stacked


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module in ``root`` keep no running statistics (in place; returns
    ``root``), as PyTorch's: under :func:`~vizgrad.func.vmap` a batch norm then normalizes each
    sample's own batch, and writes no running statistics shared by the samples."""
    from ..nn.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
