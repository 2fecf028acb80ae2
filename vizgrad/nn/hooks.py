"""Full backward hooks of modules (``Module.register_full_backward_hook``).

When a module with such hooks is called, its tensor inputs that require grad pass
through one identity node, and each tensor output through an identity node of its
own. Backward reaches the output nodes first: they record ``grad_output``. The
input node runs once every gradient with respect to the inputs is complete: it
calls each ``hook(module, grad_input, grad_output)`` and passes on what the hooks
return. The tuples have one entry per positional argument / output, None where
that is no tensor, needs no gradient or (an output) got none. If no input needs a
gradient, one node holds all the outputs and runs the hooks itself, with
``grad_input`` all None (as in PyTorch).
"""

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..errors import BackwardError
from ..tensor import Tensor


class _HookCall:
    """What one call of the module needs to run its hooks during backward."""

    def __init__(self, module, argument_count, input_positions, output_positions, output_count):
        self.module = module
        self.argument_count = argument_count
        self.input_positions = input_positions      # argument positions that pass through the input node
        self.output_positions = output_positions    # output positions that pass through the output node
        self.output_count = output_count
        self.grad_output = (None,) * output_count

    def run_hooks(self, grads):
        """Call the hooks with ``grads`` (of the inputs at ``input_positions``); the
        gradients to pass on, in the same order."""
        grad_input = [None] * self.argument_count
        for position, grad in zip(self.input_positions, grads):
            grad_input[position] = grad
        grad_input = tuple(grad_input)
        for hook in list(self.module._backward_hooks.values()):
            result = hook(self.module, grad_input, self.grad_output)
            if result is None:
                continue
            if not isinstance(result, (tuple, list)) or len(result) != len(grad_input):
                got = len(result) if isinstance(result, (tuple, list)) else type(result).__name__
                raise BackwardError(
                    f"backward hook {getattr(hook, '__name__', hook)!r} of {type(self.module).__name__} returned "
                    f"an invalid grad_input: expected a tuple of {len(grad_input)} entries (one per positional "
                    f"argument) or None, got {got}")
            for position, (old, new) in enumerate(zip(grad_input, result)):
                if old is None and new is not None:
                    raise BackwardError(
                        f"backward hook of {type(self.module).__name__} returned a gradient for argument "
                        f"{position}, which is not a tensor that requires grad; return None there")
                if new is not None and (not isinstance(new, Tensor) or new.shape != old.shape):
                    raise BackwardError(
                        f"backward hook of {type(self.module).__name__} returned, for argument {position}, "
                        f"{_describe(new)} in place of a gradient of shape {tuple(old.shape)}")
            grad_input = tuple(result)
        self.grad_output = (None,) * self.output_count      # ready for the next backward through this graph
        return tuple(grad_input[position] for position in self.input_positions)


def _describe(value):
    return f"a tensor of shape {tuple(value.shape)}" if isinstance(value, Tensor) else f"a {type(value).__name__}"


class BackwardHookInputs(Function):
    """Identity on the module's inputs; its backward runs the module's backward hooks."""

    @staticmethod
    def forward(ctx, *tensors, call):
        ctx.call = call
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return ctx.call.run_hooks(grads)


class BackwardHookOutput(Function):
    """Identity on one output of the module; its backward records that entry of ``grad_output``
    (outputs that backward never reaches keep None)."""

    @staticmethod
    def forward(ctx, tensor, call, position):
        ctx.call, ctx.position = call, position
        return tensor

    @staticmethod
    def backward(ctx, grad):
        grad_output = list(ctx.call.grad_output)
        grad_output[ctx.position] = grad
        ctx.call.grad_output = tuple(grad_output)
        return grad


class BackwardHookOutputs(Function):
    """Identity on all the outputs of a module none of whose inputs needs a gradient:
    its backward records ``grad_output`` and runs the hooks right away."""

    @staticmethod
    def forward(ctx, *tensors, call):
        ctx.call = call
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        call = ctx.call
        grad_output = [None] * call.output_count
        for position, grad in zip(call.output_positions, grads):
            grad_output[position] = grad
        call.grad_output = tuple(grad_output)
        call.run_hooks(())
        return grads


def call_with_backward_hooks(module, args, kwargs):
    """Run ``module.forward(*args, **kwargs)`` so that its full backward hooks fire."""
    if not _grad_state.grad_enabled:
        return module.forward(*args, **kwargs)
    input_positions = tuple(i for i, arg in enumerate(args) if isinstance(arg, Tensor) and arg.requires_grad)
    call = _HookCall(module, len(args), input_positions, (), 0)
    if input_positions:
        wrapped = BackwardHookInputs.apply(*(args[i] for i in input_positions), call=call)
        args = list(args)
        for position, tensor in zip(input_positions, wrapped):
            args[position] = tensor
        args = tuple(args)
    output = module.forward(*args, **kwargs)

    single = isinstance(output, Tensor)
    outputs = (output,) if single else tuple(output) if isinstance(output, (tuple, list)) else None
    if outputs is None:
        return output
    call.output_count = len(outputs)
    call.grad_output = (None,) * len(outputs)
    call.output_positions = tuple(i for i, out in enumerate(outputs) if isinstance(out, Tensor) and out.requires_grad)
    if not call.output_positions:
        return output
    if call.input_positions:
        wrapped = [BackwardHookOutput.apply(outputs[i], call=call, position=i) for i in call.output_positions]
    else:
        wrapped = BackwardHookOutputs.apply(*(outputs[i] for i in call.output_positions), call=call)
    outputs = list(outputs)
    for position, tensor in zip(call.output_positions, wrapped):
        outputs[position] = tensor
    if single:
        return outputs[0]
    return type(output)(*outputs) if hasattr(output, "_fields") else type(output)(outputs)
