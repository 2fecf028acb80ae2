"""The engine's callbacks to a started :class:`~vizgrad.trace.recorder.Recorder` (see
:func:`vizgrad.events.observe`): ops as they are applied (with the scope they were made in),
module calls, and the gradients of each backward pass, handed over together when the pass
ends. No events are made for them: this is the recorder's fast path.
"""

import sys

from .. import events
from ..autograd.grad_mode import state as _grad_state


class _EngineTap(events.Observer):
    """The engine callbacks of a started :class:`Recorder` (see :func:`vizgrad.events.observe`):
    each becomes the recorder's handling of the matching event, with no event made. The node
    and leaf gradients of a backward pass are handed to the recorder together, when the
    pass ends (or a pass inside it begins)."""

    KINDS = frozenset({"op", "backward_start", "node_backward", "grad_accumulated", "backward_end",
                       "module_forward"})

    def __init__(self, recorder):
        self.recorder = recorder
        self._pass = []                     # (bind, arguments) of the backward pass's gradients so far
        self.roots = None

    def wants(self, kind):
        return kind in self.KINDS

    def op_applied(self, node, op, inputs, outputs, seconds):
        recorder = self.recorder
        with recorder.lock:
            # the frame that applied the op (observers.op_applied's caller): the walk to the
            # op's call site starts there, past the frames of the bus and of this recorder
            recorder._record_op(op.__name__, node.id if node is not None else None, inputs,
                                outputs if type(outputs) is tuple else (outputs,),
                                _grad_state.scope, sys._getframe(2))
        if recorder._untold:
            recorder._changed()

    def module_entered(self, module, args):
        with self.recorder.lock:
            self.recorder._enter_scope(_grad_state.scope)

    def backward_started(self, roots):
        with self.recorder.lock:
            self._hand_over()
            self.roots = roots
            try:
                self.recorder._on_backward_start(self)
            finally:
                self.roots = None

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        self._pass.append((type(self.recorder)._bind_node_backward, (node.id, grad_outputs, grad_inputs)))

    def grad_accumulated(self, tensor, first):
        grad = tensor.grad
        self._pass.append((type(self.recorder)._bind_grad, (tensor.uid, grad._array if grad is not None else None, not first)))

    def backward_finished(self, roots, node_count, seconds):
        with self.recorder.lock:
            self._hand_over()
            self.recorder._on_backward_end(self)
        if self.recorder._untold:
            self.recorder._changed()

    def _hand_over(self):
        gradients, self._pass = self._pass, []
        if gradients:
            self.recorder._backward_ran(gradients)
