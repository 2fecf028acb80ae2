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
Producers ask ``wanted("optimizer_summaries")`` before an optimizer step: whether anyone
wants that step's per-parameter norms (an ``optimizer_step`` without them costs nothing).
"""

active = []


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
    if len(active) == 1:          # the usual case: the event layer alone
        getattr(active[0], method)(*args)
        return
    for observer in list(active):
        getattr(observer, method)(*args)


def notify(method, *args):
    """Tell observers that have a ``method`` (e.g. ``optimizer_step(optimizer)``, ``zero_grad``)."""
    for observer in list(active):
        callback = getattr(observer, method, None)
        if callback is not None:
            callback(*args)


def op_applied(node, op, inputs, outputs, seconds):
    _notify("op_applied", node, op, inputs, outputs, seconds)


def backward_started(roots):
    _notify("backward_started", roots)


def node_backward(node, grad_outputs, grad_inputs, seconds):
    _notify("node_backward", node, grad_outputs, grad_inputs, seconds)


def grad_accumulated(tensor, first):
    _notify("grad_accumulated", tensor, first)


def backward_finished(roots, node_count, seconds):
    _notify("backward_finished", roots, node_count, seconds)
