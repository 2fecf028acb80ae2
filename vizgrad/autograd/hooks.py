"""Removable handles for hooks."""

import itertools

from ..errors import ArgumentTypeError

_next_handle_id = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*_hook``: ``handle.remove()`` unregisters the hook.

    Also a context manager: the hook is registered inside the ``with`` block only.
    """

    __slots__ = ("id", "_registry")

    def __init__(self, registry):
        self.id = next(_next_handle_id)
        self._registry = registry

    def remove(self):
        self._registry.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def add_hook(registry, hook):
    """Put ``hook`` into ``registry`` (an ordered dict) and return its handle."""
    if not callable(hook):
        raise ArgumentTypeError(f"a hook must be callable, got {type(hook).__name__}")
    handle = RemovableHandle(registry)
    registry[handle.id] = hook
    return handle
