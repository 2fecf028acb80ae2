"""The engine's seam for outside listeners.

The engine calls these functions only when :data:`active` is non-empty, so with
nobody listening instrumentation costs one truthiness check per op. The event
layer (:mod:`vizgrad.events`) registers one observer here; the engine never
imports it.

An observer is any object with these methods (all optional no-ops in :class:`Observer`):
``op_applied(node, op, inputs, outputs, seconds)`` (node is None when nothing is recorded), ``backward_started(roots)``,
``node_backward(node, grad_outputs, grad_inputs, seconds)``,
``grad_accumulated(tensor, first)``, ``backward_finished(roots, node_count, seconds)``,
``module_entered(module, args)``, ``module_exited(module, args, output)``,
and ``wants(kind)``: whether it wants events of ``kind`` at all (by default every kind).
Each callback reaches only the observers that want its kind: an observer whose wishes
change calls :func:`refresh`. Producers ask ``wanted("optimizer_summaries")`` before an
optimizer step: whether anyone wants that step's per-parameter norms (an
``optimizer_step`` without them costs nothing).
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

#: The event kind behind each callback (``backward_started`` also opens the count of
#: ``node_backward``'s, so it goes to those who want either).
KIND_OF = {"op_applied": ("op",), "backward_started": ("backward_start", "node_backward"),
           "node_backward": ("node_backward",), "grad_accumulated": ("grad_accumulated",),
           "backward_finished": ("backward_end",), "module_entered": ("module_forward",),
           "module_exited": ("module_forward",),
           "optimizer_step": ("optimizer_step",), "zero_grad": ("zero_grad",), "hook_ran": ("hook",)}

_routes = dict.fromkeys(KIND_OF, ())    # callback name -> the callbacks of the observers that want it


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
    refresh()

    def detach():
        if observer in active:
            active.remove(observer)
            refresh()
    return detach


def refresh():
    """Route each callback again to the observers that want its kind (after an observer's
    ``wants`` changed)."""
    routes = {}
    for method, kinds in KIND_OF.items():
        callbacks = []
        for observer in active:
            callback = getattr(observer, method, None)
            wants = getattr(observer, "wants", None)
            if callback is not None and (wants is None or any(wants(kind) for kind in kinds)):
                callbacks.append(callback)
        routes[method] = tuple(callbacks)
    global _routes
    _routes = routes


def wanted(kind):
    """Whether some observer wants events of ``kind``: lets a producer skip the summaries
    that only those events carry (an observer without ``wants`` wants every kind)."""
    for observer in active:
        wants = getattr(observer, "wants", None)
        if wants is None or wants(kind):
            return True
    return False


def notify(method, *args):
    """Tell the observers that want it (e.g. ``optimizer_step(optimizer, summaries)``, ``zero_grad``)."""
    callbacks = _routes.get(method)
    if callbacks is None:          # a callback without a kind: every observer that has it
        callbacks = [c for c in (getattr(observer, method, None) for observer in active) if c is not None]
    for callback in callbacks:
        callback(*args)


def op_applied(node, op, inputs, outputs, seconds):
    if not quiet:
        for callback in _routes["op_applied"]:
            callback(node, op, inputs, outputs, seconds)


def backward_started(roots):
    for callback in _routes["backward_started"]:
        callback(roots)


def node_backward(node, grad_outputs, grad_inputs, seconds):
    for callback in _routes["node_backward"]:
        callback(node, grad_outputs, grad_inputs, seconds)


def grad_accumulated(tensor, first):
    for callback in _routes["grad_accumulated"]:
        callback(tensor, first)


def backward_finished(roots, node_count, seconds):
    for callback in _routes["backward_finished"]:
        callback(roots, node_count, seconds)


def module_entered(module, args):
    for callback in _routes["module_entered"]:
        callback(module, args)


def module_exited(module, args, output):
    for callback in _routes["module_exited"]:
        callback(module, args, output)
