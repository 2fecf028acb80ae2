"""The hierarchy drawn around a graph's nodes: module and composite-function groups.

A module group is labelled with its type and shape signature (``Linear(784→512)``,
``Conv2d(1→8, 3×3)``, ``BatchNorm2d(16)``) and carries a ``signature``, equal for
structurally identical modules (the same type, parameter and buffer shapes and children),
so that runs of identical siblings (six transformer blocks) get a ``repeat`` and can be
folded into ``Block ×6``. Parameters and buffers belong to the module that owns them
(found from their qualified names).

:class:`Hierarchy` collects groups while a graph is recorded (one group per module, one
per composite call) and :meth:`Hierarchy.apply` writes the finished ``groups`` into a
:class:`~vizgrad.trace.graph.Graph`: empty groups dropped, a composite call that is its
module's whole forward merged into the module, ids numbered parents first, repeats
marked and node ``uses`` counted.
"""

import hashlib
import weakref

from .graph import GraphGroup

# (attributes, how they read) of the shape signature in a module's label, first match wins
_LABEL_FIELDS = (
    (("in_features", "out_features"), lambda a, b: f"{a}→{b}"),
    (("in_channels", "out_channels"), lambda a, b: f"{a}→{b}"),
    (("embed_dim", "num_heads"), lambda d, h: f"{d}, {h} heads"),
    (("num_embeddings", "embedding_dim"), lambda n, d: f"{n}→{d}"),
    (("input_size", "hidden_size"), lambda a, b: f"{a}→{b}"),
    (("num_groups", "num_channels"), lambda g, c: f"{g} groups, {c}"),
    (("num_features",), str),
    (("normalized_shape",), lambda shape: ", ".join(str(n) for n in shape)),
)


def public_type_name(module):
    """The name of the module's type as users know it: a user's own class as it is, one of
    vizgrad's by the public class it derives from (``Linear`` for MultiheadAttention's
    internal ``NonDynamicallyQuantizableLinear``)."""
    from .. import nn
    for cls in type(module).__mro__:
        if not cls.__module__.startswith("vizgrad.") or getattr(nn, cls.__name__, None) is cls:
            return cls.__name__
    return type(module).__name__


def module_label(module):
    """The module's type with its shape signature: ``Linear(784→512)``, ``Conv2d(1→8, 3×3)``,
    ``BatchNorm2d(16)``, ``MultiheadAttention(64, 4 heads)``; the bare type otherwise."""
    kind = public_type_name(module)
    attributes = vars(module)
    for names, text in _LABEL_FIELDS:
        if all(attributes.get(name) is not None for name in names):
            inner = text(*(attributes[name] for name in names))
            kernel = attributes.get("kernel_size") if names[0] == "in_channels" else None
            if kernel:
                inner += ", " + "×".join(str(k) for k in kernel)
            return f"{kind}({inner})"
    return kind


def _digest(structure):
    """A short text equal for equal structures."""
    return hashlib.blake2b(structure.encode(), digest_size=8).hexdigest()


def _structure(module):
    """What makes modules structurally identical, as text: the type, the parameter and
    buffer shapes, the children (recursively). A group's ``signature`` is its digest."""
    parts = [public_type_name(module)]
    for registry in (module._parameters, module._buffers):
        for name, tensor in registry.items():
            parts.append(f"{name}:{_shape_of(tensor)}")
    for name, child in module._modules.items():
        parts.append(f"{name}={_structure(child) if child is not None else None}")
    return "(" + ",".join(parts) + ")"


def _shape_of(tensor):
    try:
        return tuple(tensor.shape) if tensor is not None else None
    except Exception:          # a lazy module's parameter has no shape before its first forward
        return "?"


def owner_path(name, paths):
    """The innermost of ``paths`` (module names) that owns the tensor called ``name``
    (``encoder.0.weight`` -> ``encoder.0``), or None."""
    while name and "." in name:
        name = name.rpartition(".")[0]
        if name in paths:
            return name
    return None


class Hierarchy:
    """Groups collected while a graph is recorded. Group keys are internal (an int per
    group, in creation order: a parent is always created before its children); node
    membership is kept apart from the graph so that :meth:`apply` can run again as the
    graph grows."""

    def __init__(self, described=None):
        self.groups = []          # GraphGroup with provisional ids (their index as text)
        self.modules = {}         # qualified module name -> group key
        self.members = {}         # node id -> group key (op results)
        self.instances = {}       # qualified module name -> weak reference to the module its group was made for
        # module -> (label, signature): shared by the hierarchies of one recorder's iterations
        self.described = described if described is not None else weakref.WeakKeyDictionary()

    def module_group(self, module, path):
        """The group of the module called ``path`` (created at its first call)."""
        key = self.modules.get(path)
        if key is None:
            parent = self.modules.get(owner_path(path, self.modules)) if "." in path else None
            facts = self.facts(module)
            key = self._add("module", path, public_type_name(module), facts[0], parent, facts[1])
            self.modules[path] = key
            self.instances[path] = weakref.ref(module)
        return key

    def facts(self, module):
        """``(label, signature)`` of ``module`` (worked out once per module)."""
        facts = self.described.get(module)
        if facts is None:
            structure = _structure(module)
            facts = (module_label(module), _digest(structure))
            if "?" not in structure:         # a lazy module's shapes come with its first forward
                self.described[module] = facts
        return facts

    def made_for(self, path, module):
        """Whether the group of ``path`` is the group of ``module`` or of one like it (same
        type, label and signature)."""
        made = self.instances.get(path)
        if made is not None and made() is module:
            return True
        group = self.groups[self.modules[path]]
        if group.type == public_type_name(module) and self.facts(module) == (group.label, group.signature):
            self.instances[path] = weakref.ref(module)
            return True
        return False

    def path_group(self, path):
        """The group of the module called ``path``, named but of unknown type (a graph drawn
        from a tensor's history, where only parameter names tell the modules apart)."""
        key = self.modules.get(path)
        if key is None:
            parent = self.path_group(path.rpartition(".")[0]) if "." in path else None
            key = self._add("module", path, "", path, parent, "")
            self.modules[path] = key
        return key

    def scoped_module_group(self, module, name, parent):
        """A new group for ``module``, called ``name``, inside group ``parent`` (a graph
        grouped by the scopes its ops were made in: :mod:`vizgrad.trace.scope_groups`).
        Its parameters are placed by identity, so its name is not registered for placing
        them by theirs."""
        label, signature = self.facts(module)
        return self._add("module", name, public_type_name(module), label, parent, signature)

    def step_group(self, scope, name, parent_name, parent):
        """A new group for one layer or time step of a recurrent layer (``scope.step``), called
        ``name``, inside group ``parent`` (called ``parent_name``). The time steps of one layer
        share a signature, so that they fold ("step ×12"); layers do not."""
        key, label = scope.step
        step = label.startswith("t=")
        signature = f"{self.facts(scope.module)[1]}:{parent_name.rpartition('.')[2] if step else key}"
        return self._add("step", name, "step" if step else "layer", label, parent, signature)

    def function_group(self, name, parent):
        """A new group for one call of the composite function ``name``."""
        return self._add("function", name, name, name, parent, "")

    def _add(self, kind, name, type_name, label, parent, signature):
        key = len(self.groups)
        self.groups.append(GraphGroup(str(key), kind, name, type_name, label,
                                      None if parent is None else str(parent), signature))
        return key

    def apply(self, graph):
        """Write the groups into ``graph`` (its ``groups``, every node's ``group`` and ``uses``)."""
        present = {node.id for node in graph.nodes}
        owned = {node_id: key for node_id, key in self.members.items() if node_id in present}
        for node in graph.nodes:                    # parameters and buffers: inside their module
            if node.op is None and node.kind in ("parameter", "constant", "leaf") and node.name:
                path = owner_path(node.name, self.modules)
                if path is not None:
                    owned[node.id] = self.modules[path]
        groups = {int(group.id): group for group in self.groups}
        parents = {key: (int(group.parent) if group.parent is not None else None) for key, group in groups.items()}
        counts = dict.fromkeys(groups, 0)
        for key in owned.values():
            counts[key] += 1
        direct_ops = dict.fromkeys(groups, 0)
        for node in graph.nodes:
            if node.op is not None and node.id in self.members:
                direct_ops[self.members[node.id]] += 1
        children = {}
        for key, parent in parents.items():
            if parent is not None:
                children.setdefault(parent, []).append(key)
        # a composite call that is the whole of its module's forward says nothing more: its
        # ops belong to the module (BatchNorm2d rather than BatchNorm2d > batch_norm)
        dissolved = {key: parents[key] for key, group in groups.items()
                     if group.kind == "function" and parents[key] is not None
                     and groups[parents[key]].kind == "module" and children[parents[key]] == [key]
                     and not direct_ops[parents[key]]}
        for key, parent in dissolved.items():
            counts[parent] += counts[key]
        # empty groups (a module whose forward ran no op) are left out, deepest first
        kept = {}
        for key in sorted(groups, reverse=True):
            if key in dissolved:
                continue
            if counts[key] or any(child in kept for child in children.get(key, ())):
                kept[key] = None
        order = sorted(kept)
        ids = {key: f"g{index}" for index, key in enumerate(order)}

        def resolve(key):
            while key is not None and key not in ids:
                key = dissolved.get(key, parents.get(key))
            return ids.get(key)

        graph.groups = []
        for key in order:
            group = groups[key]
            graph.groups.append(GraphGroup(ids[key], group.kind, group.name, group.type, group.label,
                                           resolve(parents[key]), group.signature))
        mark_repeats(graph.groups)
        uses = {}
        for edge in graph.edges:
            uses[edge.source] = uses.get(edge.source, 0) + 1
        for node in graph.nodes:
            key = owned.get(node.id)
            node.group = resolve(key) if key is not None else None
            node.uses = uses.get(node.id, 0)


def mark_repeats(groups):
    """Set ``repeat`` on runs of consecutive sibling module groups with equal signatures."""
    siblings = {}
    for group in groups:
        group.repeat = None
        siblings.setdefault(group.parent, []).append(group)
    for members in siblings.values():
        start = 0
        while start < len(members):
            end = start + 1
            signature = members[start].signature
            while (signature and members[start].kind in ("module", "step") and end < len(members)
                   and members[end].signature == signature):
                end += 1
            if end - start > 1:
                for index, group in enumerate(members[start:end]):
                    group.repeat = {"count": end - start, "index": index}
            start = end
