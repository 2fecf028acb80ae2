"""Groups from the scopes the ops were made in (``node.scope``, see
:mod:`vizgrad.autograd.scopes`): the module boxes of a graph drawn from a tensor's history,
with no trace recorded.

Each module call and each recurrent time step left a scope on the nodes it made; the
chain of scopes gives the box of every op, nested as the calls were. Boxes are named by
the dotted path from the outermost module called (``blocks.2.attn.q_proj``); the outermost
module is a box of its own when it owns parameters or buffers itself (an ``nn.LSTM`` called
directly, a hand-written cell) or when several outermost modules made the graph (an encoder
and a decoder), named by the user's variable when it is known (``lstm``), else by its type.
A model called once is the drawing's canvas: its children are the top-level boxes.

Parameters and buffers go in the box of the module that owns them, found by identity, so
no names are needed. Types are public names only (``Linear``, never an internal subclass);
a recurrent layer's steps are boxes of kind ``step`` ("t=3", inside "layer 0" when there
are several layers) with one signature per layer, so that the front ends fold them
("step ×12") as they fold identical blocks.
"""

from ..autograd.scopes import child_name, join_path


def owns_directly(module):
    """Whether ``module`` holds parameters or buffers of its own (not only its children's)."""
    return any(tensor is not None for tensor in module._parameters.values()) or \
        any(tensor is not None for tensor in module._buffers.values())


class ScopeGroups:
    """Group keys (of ``hierarchy``) for scopes: :meth:`of` gives the box an op made in a
    scope belongs to, :meth:`owner` the box of a parameter or buffer."""

    def __init__(self, hierarchy, scopes, root_names=None):
        """``scopes``: every op's scope (None included), to tell whether the graph has one
        outermost module or several; ``root_names``: id of a module -> the user's variable."""
        self.hierarchy = hierarchy
        self.root_names = root_names or {}
        roots = {}
        for scope in scopes:
            if scope is not None:
                root = scope.root.module
                roots[id(root)] = root
        several = len(roots) > 1
        self.boxed = {key for key, root in roots.items() if several or owns_directly(root)}
        self.keys = {}          # scope -> group key (None: the canvas)
        self.groups = {}        # (id of the outermost module, path) -> (group key, display name)
        self.owners = {}        # id of a parameter or buffer -> group key of its module
        self.module_names = {}  # group key -> the display name of its module (a step's: its layer's)

    def of(self, scope):
        """The group key of the ops made in ``scope`` (None: no box)."""
        if scope is None:
            return None
        keys = self.keys
        if scope in keys:
            return keys[scope]
        key = keys[scope] = self._group(scope)[0]
        return key

    def owner(self, tensor):
        return self.owners.get(id(tensor))

    def _group(self, scope):
        """``(key, display name)`` of the box of ``scope``, created with its parents."""
        root = scope.root.module
        ident = (id(root), scope.path)
        found = self.groups.get(ident)
        if found is not None:
            return found
        hierarchy = self.hierarchy
        if scope.parent is None:
            if id(root) in self.boxed:
                name = self.root_names.get(id(root)) or type(root).__name__.lower()
                found = (self._module_group(root, name, None), name)
            else:
                found = (None, "")
        else:
            parent_key, parent_name = self._group(scope.parent)
            if scope.step is not None:
                name = join_path(parent_name, scope.step[0])
                found = (hierarchy.step_group(scope, name, parent_name, parent_key), name)
                self.module_names[found[0]] = self.module_names.get(parent_key, "")
            else:
                name = join_path(parent_name, child_name(scope.parent.module, scope.module))
                found = (self._module_group(scope.module, name, parent_key), name)
        self.groups[ident] = found
        return found

    def _module_group(self, module, name, parent_key):
        key = self.hierarchy.scoped_module_group(module, name, parent_key)
        self.module_names[key] = name
        for registry in (module._parameters, module._buffers):
            for tensor in registry.values():
                if tensor is not None:
                    self.owners.setdefault(id(tensor), key)
        return key
