"""The two nodes that record an in-place write into a view, as PyTorch does.

When ``view.add_(x)`` (or ``base[0] += x``, ``out[0].copy_(y)``) changes a view while
gradients are recorded, the write changes the view's base too. The base's new history
is a :class:`CopySlices` node: the base as it was, with the view's new values written
at the view's positions. The view's old values come from the base through
:class:`AsStrided`, so gradients reach whatever last wrote into the base.

Positions are row-major indices into the base (``Backend.view_positions``), so one
pair of nodes serves every kind of view (slices, reshapes, transposes, selections).
"""

from ..autograd.function import Op


class AsStrided(Op):
    """The elements of ``base`` at ``positions`` (in the shape of ``positions``): the values
    a view of ``base`` shows. d out/d base scatters the gradient back to the positions."""

    @staticmethod
    def forward(ctx, base, positions):
        xp = ctx.xp
        flat_positions = xp.reshape(positions, (-1,))
        ctx.base_shape = tuple(base.shape)
        ctx.save_for_backward(flat_positions)
        return xp.reshape(xp.take(xp.reshape(base, (-1,)), flat_positions), tuple(positions.shape))

    @staticmethod
    def backward(ctx, grad):
        flat_positions, = ctx.saved_tensors
        xp = ctx.xp
        size = 1
        for n in ctx.base_shape:
            size *= n
        flat = xp.put_add(xp.zeros((size,), dtype=grad.dtype, device=grad.device), flat_positions,
                          xp.reshape(grad, (-1,)))
        return xp.reshape(flat, ctx.base_shape)


class CopySlices(Op):
    """``base`` with ``values`` written at ``positions`` (``written`` marks them, in base's
    shape): the history an in-place write into a view gives the view's base.

    d out/d base is 1 where nothing was written and 0 where it was; d out/d values
    reads the gradient at the positions."""

    @staticmethod
    def forward(ctx, base, values, positions, written):
        xp = ctx.xp
        flat_positions = xp.reshape(positions, (-1,))
        ctx.values_shape = tuple(values.shape)
        ctx.save_for_backward(written, flat_positions)
        if values.dtype != base.dtype:
            values = xp.astype(values, base.dtype)
        flat = xp.reshape(base, (-1,))
        scattered = xp.put_add(xp.zeros_like(flat), flat_positions, xp.reshape(values, (-1,)))
        return xp.reshape(xp.where(xp.reshape(written, (-1,)), scattered, flat), tuple(base.shape))

    @staticmethod
    def backward(ctx, grad):
        written, flat_positions = ctx.saved_tensors
        xp = ctx.xp
        needs_base, needs_values = ctx.needs_input_grad
        grad_base = xp.where(written, 0.0, grad) if needs_base else None
        grad_values = (xp.reshape(xp.take(xp.reshape(grad, (-1,)), flat_positions), ctx.values_shape)
                       if needs_values else None)
        return grad_base, grad_values
