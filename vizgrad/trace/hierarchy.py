"""The module hierarchy of a recording: which box each op made in a module call goes in.

:class:`_ModuleScopes` is the part of the :class:`~vizgrad.trace.recorder.Recorder` that
follows module calls: it names the scope of each call by the dotted path from the outermost
module called (as a graph drawn from a tensor's history names it, :mod:`.scope_groups`),
makes the module and recurrent-step groups of the recorder's :class:`~.groups.Hierarchy` as
calls arrive, and starts a new iteration when a module is called after a finished backward.
It works on the recorder's state (``_hierarchy``, ``_scope_names``, ``_step_modules``,
``_backward_done``, ``_replay``, ``records_forward``) and calls its ``_new_iteration`` and
``_diverge``.
"""

from ..autograd.scopes import child_name, join_path
from .groups import public_type_name
from .scope_groups import owns_directly


class _ModuleScopes:
    """The Recorder's module-call bookkeeping (a mixin: see the module docstring)."""

    def _enter_scope(self, scope):
        if self.records_forward and scope is not None:
            if self._backward_done:
                self._new_iteration()
            self._scope_name(scope)

    def _scope_name(self, scope):
        """The name of the box of the ops made in ``scope`` ('' for none), its groups (and
        its parents') made as needed: the path from the outermost module called, as a graph
        drawn from a tensor's history names it (:mod:`vizgrad.trace.scope_groups`)."""
        if scope is None:
            return ""
        name = self._scope_names.get(scope)
        if name is None:
            name = self._scope_names[scope] = self._name_scope(scope)
        return name

    def _name_scope(self, scope):
        hierarchy = self._hierarchy
        parent = scope.parent
        if parent is None:       # the outermost module: a box when it owns parameters or buffers itself
            if not owns_directly(scope.module):
                return ""
            name = public_type_name(scope.module).lower()
            self._module_entered(scope.module, name)
            return name
        parent_name = self._scope_name(parent)
        if scope.step is None:
            name = join_path(parent_name, child_name(parent.module, scope.module))
            self._module_entered(scope.module, name)
            return name
        name = join_path(parent_name, scope.step[0])
        self._step_modules[name] = self._step_modules.get(parent_name, parent_name)
        if name not in hierarchy.modules:
            hierarchy.modules[name] = hierarchy.step_group(scope, name, parent_name, hierarchy.modules.get(parent_name))
        return name

    def _on_module_forward(self, event):
        if event.phase == "enter" and event.instance is not None:
            self._module_entered(event.instance, event.path)

    def _module_entered(self, module, path):
        if not path or not self.records_forward:
            return
        if self._backward_done:
            self._new_iteration()
        if path in self._hierarchy.modules:
            if self._hierarchy.made_for(path, module):
                return
            # another module under the same name: a group of its own, and the structure
            # from here on is built afresh
            if self._replay is not None:
                self._diverge()
            del self._hierarchy.modules[path]
        self._hierarchy.module_group(module, path)
