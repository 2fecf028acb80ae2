"""Where each op was made: the module call (and the recurrent layer's time step) that was
running when a node was created, kept on the node as ``node.scope``.

The engine knows no modules; it only keeps whatever :data:`state.scope <vizgrad.autograd.grad_mode.state>`
holds when a node is made. ``Module.__call__`` sets it for the length of each call (one
small object per call, whether or not anybody records), and recurrent layers open a
:func:`step_scope` per layer and per time step. The graph builders read the chain of
scopes back from the nodes, so that a graph drawn from a tensor's history alone
(``vizgrad.graph(loss)``, ``vizgrad.show(loss)``) is grouped as a recorded trace is.

A scope is plain data: ``module`` (whose forward, or whose time step), ``parent`` (the
enclosing scope, None at the outermost module called) and, for a step, ``step``: ``(key,
label)`` such as ``("t3", "t=3")`` or ``("layer0", "layer 0")``.
"""

import contextlib

from .grad_mode import state


class Scope:
    __slots__ = ("module", "parent", "step", "_path")

    def __init__(self, module, parent, step=None):
        self.module = module
        self.parent = parent
        self.step = step
        self._path = None

    @property
    def path(self):
        """The dotted path from the outermost module called (PyTorch's ``named_modules``
        names: ``blocks.2.attn.q_proj``; ``""`` for the outermost module itself), a
        step's key appended (``lstm.layer0.t3``); worked out once."""
        path = self._path
        if path is None:
            path = self._path = _path_of(self)
        return path

    @property
    def root(self):
        """The outermost scope of this chain (the module called from user code)."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def __repr__(self):
        return f"<Scope {self.path or type(self.module).__name__}>"


def _path_of(scope):
    parent = scope.parent
    if parent is None:
        return ""
    if scope.step is not None:
        return join_path(parent.path, scope.step[0])
    return join_path(parent.path, child_name(parent.module, scope.module))


def child_name(parent, child):
    """``child``'s name inside ``parent``: the rest of its qualified name after the
    parent's (``blocks.2`` -> ``attn`` for ``blocks.2.attn``), the attribute that holds it,
    or else its type's name (a module called from another that does not own it)."""
    own, inner = parent._qualified_name, child._qualified_name
    if inner and (not own or inner.startswith(own + ".")):
        return inner[len(own) + 1:] if own else inner
    for name, module in parent._modules.items():
        if module is child:
            return name
    return type(child).__name__.lower()


def join_path(prefix, name):
    """``prefix.name``, or ``name`` alone when there is no prefix."""
    return f"{prefix}.{name}" if prefix else name


def current():
    """The scope ops made now belong to (None outside every module)."""
    return state.scope


@contextlib.contextmanager
def step_scope(module, key, label):
    """Ops made inside the block belong to one step of ``module`` (a recurrent layer's
    layer or time step): ``with step_scope(self, "t3", "t=3"): ...``."""
    outer = state.scope
    state.scope = Scope(module, outer, (key, label))
    try:
        yield
    finally:
        state.scope = outer
