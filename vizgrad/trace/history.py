"""A graph from a tensor's autograd history alone, with no trace: ``vizgrad.graph(tensor)``.

The walk goes from the tensor's ``grad_fn`` to its leaves; ops are boxed by the module calls
that made them (:mod:`.scope_groups`), and the backward pass shown is the one that ran
through the tensor's own root (``node.last_pass``), with only the gradients that pass left:
a leaf's ``.grad`` from another pass is not presented as this graph's. Made inside a
``forward_ad.dual_level()``, each node whose tensor carried a tangent at that level shows its
statistics (``tangent``), and ``forward_order`` lists those nodes in the order forward AD
computed them.
"""

from ..nn.module import Parameter
from .graph import Graph, GraphEdge, GraphNode, gc_paused
from .groups import Hierarchy
from .scope_groups import ScopeGroups
from .names import _leaf_kind, _leaf_label, module_names, tensors_by_name
from .statistics import stats_dict, stats_dicts


def graph(tensor, values=True, names=None):
    """The :class:`Graph` of ``tensor``'s autograd history, without a trace (as torchviz
    draws it). Inputs that do not require grad are not part of the history and do not
    appear; shapes come from what each op recorded.

    After ``tensor.backward()`` the graph carries that backward pass to replay
    (``backward["source"] == "graph"``): the order in which the engine ran it, derived from
    the graph, with the gradients that were kept (leaves' ``.grad``, retained gradients).
    Inside ``forward_ad.dual_level()``, the tangents of that level: each node's ``tangent``
    statistics and ``forward_order``, to replay forward mode's Jacobian-vector products.

    Args:
        values: record value statistics of the leaves and of ``tensor``.
        names: a namespace (e.g. ``locals()``) whose tensors name the nodes they became and
            whose modules give the groups their types (``Linear(784→512)``); without one,
            groups come from the parameters' qualified names only.
    """
    return _history(tensor, values, names)[0]


@gc_paused()
def _history(tensor, values, names=None):
    """:func:`graph`, which graph node id each autograd node became, and its groups."""
    from ..autograd.engine import run_order
    from ..autograd.forward_ad import current_level, node_tangent
    from ..autograd.function import AccumulateGrad
    result = Graph()
    nodes, ids = result.nodes, {}
    devices = {}    # backend -> its device's name (for backends of one device: worked out once)
    shape_lists = {}    # one list per distinct shape, shared by the nodes and edges of that shape

    def shape_list(shape):
        found = shape_lists.get(shape)
        if found is None:
            found = shape_lists[shape] = list(shape)
        return found

    def add(key, kind, label, shape, dtype, device, op=None, name=None, requires_grad=True, value=None,
            grad=None):
        node_id = ids[key] = f"n{len(nodes)}"
        node = GraphNode(node_id, kind, label, shape, dtype, device, op, name, "", None, requires_grad, value, grad)
        nodes.append(node)
        return node

    pending = []    # (node, "value", "grad" or "tangent", tensor): statistics computed together at the end
    level = current_level()
    tangents = []   # (autograd node id, or -1 for a leaf: the order forward AD made them; graph node)
    tensors, modules = tensors_by_name(names) if names is not None else ([], {})
    variables = {id(value): name for name, value in tensors}
    this_pass = tensor.grad_fn.last_pass if tensor.grad_fn is not None else None

    def add_leaf(key, leaf):
        kind = _leaf_kind(leaf)
        backend = leaf._backend()
        device = devices.get(backend)
        if device is None:
            device = str(leaf.device)
            if not backend.multi_device:
                devices[backend] = device
        node = add(key, kind, _leaf_label(leaf, kind), shape_list(leaf.shape), leaf.dtype.name, device,
                   name=leaf.name, requires_grad=leaf.requires_grad)
        if values or not leaf.ndim:
            pending.append((node, "value", leaf))
        grad = leaf.grad
        if grad is not None:
            note, ours = _leaf_grad_note(variables.get(id(leaf)) or leaf.name or node.label, leaf, this_pass)
            if ours:
                pending.append((node, "grad", grad))
            node.grad_note = note
        if level is not None:
            tangent = leaf_tangent(leaf, level)
            if tangent is not None:
                pending.append((node, "tangent", tangent))
                tangents.append((-1, node))

    def fill_statistics():
        for (node, field, _), data in zip(pending, stats_dicts([tensor for *_, tensor in pending])):
            setattr(node, field, data)

    roots = module_names(names)
    if tensor.grad_fn is None:
        add_leaf(("tensor", id(tensor)), tensor)
        fill_statistics()
        result.forward_order = [node.id for _, node in tangents]
        _name_history(result, ids, tensors)
        return result, ids, _group_history(result, [], ids, modules, roots)
    # post-order depth-first walk with an explicit stack: inputs before the ops that use them
    order, done, stack = [], set(), [(tensor.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if expanded:
            done.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        for edge in reversed(node.next_edges):
            if edge is not None and edge[0] not in done:
                stack.append((edge[0], False))
    shapes, dtype_names = {}, {}      # (str of a NumPy dtype costs microseconds: once per dtype)
    for node in order:
        for edge, meta in zip(node.next_edges, getattr(node, "input_meta", ()) or ()):
            if edge is not None and meta is not None:
                name = dtype_names.get(meta[1])
                if name is None:
                    name = dtype_names[meta[1]] = str(meta[1]).rpartition(".")[2]
                shapes[edge[0]] = (shape_list(meta[0]), name)
    root = tensor.grad_fn
    shapes[root] = (shape_list(tensor.shape), tensor.dtype.name)
    device = str(tensor.device)
    edges = result.edges      # by target in node order, then by input index
    for node in order:
        if type(node) is AccumulateGrad:
            add_leaf(node, node.variable)
            continue
        shape, dtype = shapes.get(node, ([], ""))
        op = node.op.__name__
        if node is root:
            target = add(node, "output", tensor.name or op, shape, dtype, device, op,
                         value=stats_dict(tensor) if values or not tensor.ndim else None,
                         grad=_retained_grad(node, this_pass) or _root_grad(tensor, node, this_pass))
        else:
            target = add(node, "op", op, shape, dtype, device, op,
                         grad=_retained_grad(node, this_pass) if node.retained_grads else None)
        tangent = node_tangent(node, level, tensor._output_nr if node is root else 0) if level is not None else None
        if tangent is not None:
            pending.append((target, "tangent", tangent))
            tangents.append((node.id, target))
        for index, edge in enumerate(node.next_edges):     # (inputs come first: they have their ids)
            if edge is not None:
                edges.append(GraphEdge(ids[edge[0]], target.id, index, shapes.get(edge[0], ([], ""))[0]))
    fill_statistics()
    tangents.sort(key=_first)       # leaves, then ops as they were applied (autograd ids count up)
    result.forward_order = [node.id for _, node in tangents]
    if this_pass is not None:
        result.backward_order = [ids[node] for node in run_order([root])]
        for index, node_id in enumerate(result.backward_order):
            nodes[int(node_id[1:])].backward_index = index       # ids are "n" and the position
        result.backward = {"source": "graph", "note": backward_note(this_pass, tensor, variables)}
    elif any(node.grad_note for node in nodes):
        result.backward = {"source": None, "note": FORWARD_ONLY_NOTE}
    _name_history(result, ids, tensors)
    return result, ids, _group_history(result, order, ids, modules, roots)


def _root_grad(tensor, node, this_pass):
    """Statistics of the gradient ``this_pass`` started from at ``tensor`` (1 for
    ``loss.backward()``), when the pass began there and kept it; else None."""
    if this_pass is None or node.last_pass is not this_pass:
        return None
    for ref, grad in zip(this_pass.roots, this_pass.root_grads):
        if ref() is tensor and grad is not None:
            return stats_dict(grad)
    return None


def _retained_grad(node, this_pass):
    """Statistics of the gradient a tensor made by ``node`` kept with retain_grad() in the
    backward pass ``this_pass``, or None."""
    if this_pass is None or node.last_pass is not this_pass:
        return None
    for ref in (node.retained_grads or {}).values():
        kept = ref()
        if kept is not None and kept.grad is not None:
            return stats_dict(kept.grad)
    return None


def backward_note(this_pass, tensor, variables):
    """What the banner of a history graph says of the backward pass it shows: what ran
    (``loss.backward()``, ``autograd.grad``), named by the user's variable, and what is shown."""
    started = [ref() for ref in this_pass.roots]
    root = started[0] if started else None
    name = variables.get(id(root)) if root is not None else None
    if this_pass.call == "autograd.grad":
        what = f"autograd.grad({name}, ...)" if name else "autograd.grad"
        return (f"{what} ran outside vizgrad.trace(): the order is the one the engine follows; autograd.grad "
                "returns its gradients instead of keeping them, so only tensors that called retain_grad() "
                "show one. Run it inside `with vizgrad.trace() as tr:` to record every gradient.")
    what = f"{name}.backward()" if name else "backward()"
    through = "" if root is tensor or root is None else         f" from {name or 'a tensor computed from this one'}, through this graph"
    return (f"{what} ran outside vizgrad.trace(){through}: the order is the one the engine follows, and only "
            "the gradients that were kept are shown (leaves' .grad, tensors that called retain_grad()). "
            "Run the forward and backward inside `with vizgrad.trace() as tr:` to record every gradient.")


FORWARD_ONLY_NOTE = ("No backward pass ran through this graph: it shows the forward computation only. "
                     "A .grad you see on its leaves came from another backward pass.")


def _leaf_grad_note(name, leaf, this_pass):
    """``(note, ours)`` for a leaf holding a ``.grad``: whether that gradient is the one
    ``this_pass`` left (the engine's ``leaf._grad_record``), and the note that says what it
    is when it is not one pass's alone (None when it is)."""
    record = leaf._grad_record
    if this_pass is None or record is None or record[0] is not this_pass:
        return f"{name}.grad came from another backward pass, not this graph's: it is not shown here", False
    if record[2] is not leaf.grad or leaf.grad._version != record[3]:
        return (f"{name}.grad changed after this graph's backward pass (zero_grad(), an optimizer or an "
                "assignment): it is not shown here"), False
    if record[1] > 1:
        return (f"{name}.grad is the sum of {record[1]} backward passes (.grad accumulates until it is "
                "zeroed: optimizer.zero_grad())"), True
    return None, True


def _name_history(result, ids, tensors):
    """Label the nodes of a history graph after the variables that hold their tensors."""
    from ..autograd.function import AccumulateGrad
    for name, tensor in tensors:
        if tensor.grad_fn is not None:
            key = tensor.grad_fn if tensor._output_nr == 0 else None
        else:
            accumulator = tensor._accumulator() if tensor._accumulator is not None else None
            key = accumulator if type(accumulator) is AccumulateGrad else ("tensor", id(tensor))
        node_id = ids.get(key)
        if node_id is not None:
            node = result.node(node_id)
            if node.name is None and node.label in (node.op, _leaf_label(tensor, node.kind)):
                node.label = name


def _group_history(result, order, ids, modules, root_names=None):
    """Groups of a history graph (applied to it, and returned): the module calls (and
    recurrent steps) its ops were made in (:mod:`vizgrad.trace.scope_groups`); for a graph
    whose ops know no module (functional code), the modules that own its parameters, each
    op placed in the module whose parameters it uses."""
    from ..autograd.function import AccumulateGrad
    scopes = [node.scope for node in order if type(node) is not AccumulateGrad]
    if any(scope is not None for scope in scopes):
        return _group_by_scope(result, order, ids, scopes, root_names)
    hierarchy = Hierarchy()
    owners = {}           # id of a parameter or buffer -> the path of the module that owns it
    for path, module in modules.items():
        for registry in (module._parameters, module._buffers):
            for tensor in registry.values():
                if tensor is not None:
                    owners.setdefault(id(tensor), path)
    parameter_paths = {}  # parameters' autograd nodes -> the path of the module owning them, or None
    for node in order:
        if type(node) is not AccumulateGrad:
            continue
        leaf = node.variable
        parameter = isinstance(leaf, Parameter)
        path = owners.get(id(leaf))
        if path is not None:
            for depth in range(1, path.count(".") + 2):       # parents first
                prefix = ".".join(path.split(".")[:depth])
                if prefix in modules:
                    hierarchy.module_group(modules[prefix], prefix)
        elif parameter and leaf.name and "." in leaf.name:
            path = leaf.name.rpartition(".")[0]
            hierarchy.path_group(path)
        if path is not None:
            hierarchy.members[ids[node]] = hierarchy.modules[path]
        if parameter:
            parameter_paths[node] = path
    for node in order:
        if type(node) is AccumulateGrad:
            continue
        used = {parameter_paths[edge[0]] for edge in node.next_edges if edge is not None and edge[0] in parameter_paths}
        if len(used) == 1 and None not in used:
            hierarchy.members[ids[node]] = hierarchy.modules[used.pop()]
    hierarchy.apply(result)
    return hierarchy


def _group_by_scope(result, order, ids, scopes, root_names):
    from ..autograd.function import AccumulateGrad
    hierarchy = Hierarchy()
    boxes = ScopeGroups(hierarchy, scopes, root_names)
    nodes = result.nodes
    # boxes made in the order the ops ran (a node's id counts up as ops are applied), so
    # that siblings come in call order, as a trace records them
    for node in sorted((node for node in order if type(node) is not AccumulateGrad), key=_by_id):
        key = boxes.of(node.scope)
        if key is not None:
            node_id = ids[node]
            hierarchy.members[node_id] = key
            nodes[int(node_id[1:])].module = boxes.module_names[key]
    for node in order:
        if type(node) is AccumulateGrad:
            key = boxes.owner(node.variable)
            if key is not None:
                node_id = ids[node]
                hierarchy.members[node_id] = key
                nodes[int(node_id[1:])].module = boxes.module_names[key]
    hierarchy.apply(result)
    return hierarchy


def _by_id(node):
    return node.id


def _first(pair):
    return pair[0]


def leaf_tangent(leaf, level):
    """A leaf's tangent at ``level`` (None if it has none, or lost it to an in-place change)."""
    from ..autograd.forward_ad import unpack_dual
    from ..errors import TransformError
    try:
        return unpack_dual(leaf, level=level).tangent
    except TransformError:
        return None
