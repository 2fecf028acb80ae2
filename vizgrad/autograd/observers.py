"""The engine's seam for outside listeners.

The engine calls these functions only when :data:`active` is non-empty, so with
nobody listening instrumentation costs one truthiness check per op. The event
layer (:mod:`vizgrad.events`) registers one observer here; the engine never
imports it.

An observer is any object with these methods (all optional no-ops in :class:`Observer`):
``op_applied(node, op, inputs, outputs, seconds)`` (node is None when nothing is recorded), ``backward_started(roots)``,
``node_backward(node, grad_outputs, grad_inputs, seconds)``,
``grad_accumulated(tensor, first)``, ``backward_finished(roots, node_count, seconds)``,
and ``wants(kind)``: whether it wants events of ``kind`` at all (by default every kind).
"""

active = []
quiet = 0   # above 0 while the engine does work that is no part of the user's graph (see quiet_ops)


class _QuietOps:
    """``with quiet_ops:``: ops applied inside are not reported, for work that belongs to
    something else's node: a custom Function's forward (its node is the op), the running
    statistics a batch norm updates (buffer updates, not differentiable history)."""

    def __enter__(self):
        global quiet
        quiet += 1

    def __exit__(self, *exc):
        global quiet
        quiet -= 1
        return False


quiet_ops = _QuietOps()


class Observer:
    def wants(self, kind):
        return True

    def op_applied(self, node, op, inputs, outputs, seconds):
        pass

    def backward_started(self, roots):
        pass

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        pass

    def grad_accumulated(self, tensor, first):
        pass

    def backward_finished(self, roots, node_count, seconds):
        pass


def attach(observer):
    """Start notifying ``observer``; returns a function that detaches it."""
    active.append(observer)

    def detach():
        if observer in active:
            active.remove(observer)
    return detach


def wanted(kind):
    """Whether some observer wants events of ``kind``: lets a producer skip the summaries
    that only those events carry (an observer without ``wants`` wants every kind)."""
    for observer in active:
        wants = getattr(observer, "wants", None)
        if wants is None or wants(kind):
            return True
    return False


def _notify(method, *args):
    for observer in list(active):
        getattr(observer, method)(*args)


def notify(method, *args):
    """Tell observers that have a ``method`` (e.g. ``optimizer_step(optimizer)``, ``zero_grad``)."""
    for observer in list(active):
        callback = getattr(observer, method, None)
        if callback is not None:
            callback(*args)


def op_applied(node, op, inputs, outputs, seconds):
    if not quiet:
        _notify("op_applied", node, op, inputs, outputs, seconds)


def backward_started(roots):
    _notify("backward_started", roots)


def node_backward(node, grad_outputs, grad_inputs, seconds):
    _notify("node_backward", node, grad_outputs, grad_inputs, seconds)


def grad_accumulated(tensor, first):
    _notify("grad_accumulated", tensor, first)


def backward_finished(roots, node_count, seconds):
    _notify("backward_finished", roots, node_count, seconds)
