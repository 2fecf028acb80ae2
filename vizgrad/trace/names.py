"""Names and labels of graph nodes: a leaf's kind and label, and the user's variables found in a
namespace (a frame's locals) that name tensors and modules.
"""

from ..nn.module import Parameter
from .graph import shape_text


def _leaf_kind(tensor):
    """parameter, leaf (requires grad) or constant (neither)."""
    if isinstance(tensor, Parameter):
        return "parameter"
    return "leaf" if tensor.requires_grad else "constant"


def _leaf_label(tensor, kind):
    """A leaf's label: its name, a scalar constant's value, else "input" and its shape (data the
    graph reads, whether or not it requires grad: the node's kind says which)."""
    if tensor.name:
        return tensor.name
    if kind == "constant" and tensor.ndim == 0:
        return _number_text(tensor.item())
    return f"input {shape_text(tensor.shape)}"


def _number_text(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def tensors_by_name(namespace):
    """``(name, tensor)`` for the tensors among a namespace's values (a frame's locals),
    private names (``_``, ``_3``) left out, and the modules found there by qualified name
    (every submodule; a top-level module that owns parameters itself under its variable's
    name, as ``rnn_cell``)."""
    from ..nn.module import Module
    from ..tensor import Tensor
    tensors, modules = [], {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, Tensor):
            tensors.append((name, value))
        elif isinstance(value, Module):
            for _, module in value.named_modules():
                path = module._qualified_name or (name if module._parameters or module._buffers else "")
                if path:
                    modules.setdefault(path, module)
    return tensors, modules


def module_names(namespace):
    """id of each module among a namespace's values -> the variable that holds it."""
    from ..nn.module import Module
    return {id(value): name for name, value in namespace.items()
            if isinstance(value, Module) and not name.startswith("_")} if namespace else {}
