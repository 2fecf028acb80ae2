"""``vizgrad.tutor.check_function(FunctionClass, *inputs)``: a learner's custom
:class:`vizgrad.autograd.Function` checked against finite differences of its own forward,
the input whose gradient is wrong named and its mistake classified (:data:`KINDS`)."""

import sys

import numpy as np

from ..autograd import BackwardError, Function, grad as autograd_grad
from ..creation import tensor as make_tensor
from ..errors import ArgumentTypeError, public
from ..tensor import Tensor
from .compare import name_of
from .diagnose import Alternative, Finding, diagnose
from .numeric import as_numpy, numerical_vjp
from .report import Report, Row, row

NAME = "tutor.check_function"


@public(NAME)
def check_function(function, *inputs, names=None, seed=0):
    """Check ``function.backward`` at ``inputs`` against finite differences of ``function.forward``.

    Args:
        function: a :class:`vizgrad.autograd.Function` subclass.
        inputs: its arguments: tensors or arrays (each gets a gradient, in float64) and
            constants (passed as they are).
        names: how the learner calls each input (default: the caller's variables holding
            them, else ``input 0``, ``input 1``...).
        seed: the random upstream gradient's seed.

    Returns:
        a :class:`vizgrad.tutor.Report` with one row per input; ``first_wrong`` names the
        input whose gradient is wrong.
    """
    if not (isinstance(function, type) and issubclass(function, Function)):
        raise ArgumentTypeError(f"{NAME}: expected a vizgrad.autograd.Function subclass, got "
                                f"{type(function).__name__} {function!r}")
    namespace = sys._getframe(1).f_locals
    names = list(names) if names is not None else [
        name_of(a, namespace, i) if isinstance(a, Tensor) else f"input {i}" for i, a in enumerate(inputs)]
    arrays = [as_numpy(a) if isinstance(a, (np.ndarray, Tensor)) else a for a in inputs]
    wrt = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray)]
    title = f"vizgrad.tutor.check_function({function.__name__})"
    returned, out, tensors, v, failure = _run_backward(function, arrays, wrt, names, seed)
    if failure is not None:
        return Report(title, [Row(function.__name__, np.zeros(0), np.zeros(0), "wrong", None, failure)], "",
                      heading="The function:")
    expected = numerical_vjp(lambda *values: function.apply(*values), arrays, wrt, v)
    with_ones = numerical_vjp(lambda *values: function.apply(*values), arrays, wrt, np.ones_like(v))
    rows = []
    for position, want, ones in zip(wrt, expected, with_ones):
        got = returned[position]
        name = names[position]
        if got is None or not isinstance(got, Tensor):
            what = "None" if got is None else f"a {type(got).__name__}"
            finding = Finding("other", f"`{function.__name__}.backward` returned {what} for `{name}`, which needs a "
                                       "gradient.", "Return a Tensor of the same shape as that input.")
            rows.append(Row(name, np.zeros(0), want, "wrong", None, finding))
            continue
        # a backward that ignores grad_output answers what is right for an upstream of ones
        upstream_ignored = Alternative(
            "other", None if np.allclose(ones, want) else ones,
            f"The gradient for `{name}` is the local derivative alone: it is not multiplied by the gradient "
            "arriving from above (`grad_output`).",
            "Chain rule: what backward returns is `grad_output` times the local derivative.")
        finding = diagnose(as_numpy(got), want, name, [upstream_ignored], sizes=out.shape)
        rows.append(row(name, as_numpy(got), want, finding))
    from ..trace import graph
    drawn = graph(out, values=False, names=dict(zip(names, tensors)))
    for r in rows:
        r.node_id = next((n.id for n in drawn.nodes if n.label == r.name), None)
    passed = (f"`{function.__name__}.backward` agrees with finite differences of its forward for "
              f"{', '.join(f'`{names[i]}`' for i in wrt)}.")
    return Report(title, rows, passed, drawn, heading="Each input's gradient:")


def _run_backward(function, arrays, wrt, names, seed):
    """Apply ``function`` once in float64 and run its backward with a random upstream gradient:
    ``(what backward returned, per input; the output; the inputs; the upstream gradient; a
    Finding when it cannot be checked)``. The returned gradients are caught before the engine
    checks them, so a gradient of the wrong shape is still diagnosed."""
    returned = []

    def capture(ctx, *grads):
        result = function.backward(ctx, *grads)
        returned.append(result)
        return result

    probe = type(function.__name__, (function,), {"backward": staticmethod(capture),
                                                  "__module__": function.__module__})
    tensors = [make_tensor(a, requires_grad=True) if i in wrt else a for i, a in enumerate(arrays)]
    out = probe.apply(*tensors)
    if not isinstance(out, Tensor) or not out.requires_grad:
        problem = ("returned " + type(out).__name__ + ", not one Tensor" if not isinstance(out, Tensor)
                   else "returned a tensor that does not require grad, so backward can never run")
        return None, None, tensors, None, Finding("other", f"`{function.__name__}.forward` {problem}.",
                                                  "Return one floating-point Tensor computed from the inputs.")
    v = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    try:
        autograd_grad(out, [tensors[i] for i in wrt], make_tensor(v), allow_unused=True)
    except BackwardError:
        if not returned:
            raise
    raw = returned[0]
    raw = tuple(raw) if isinstance(raw, (tuple, list)) else (raw,)
    if len(raw) != len(arrays):
        return None, None, tensors, None, Finding(
            "other", f"`{function.__name__}.backward` returned {len(raw)} gradient{'s' if len(raw) != 1 else ''}, "
                     f"but forward takes {len(arrays)} input{'s' if len(arrays) != 1 else ''} ({', '.join(names)}).",
            "Return one gradient per forward input, in the same order (None for an input that needs none).")
    return raw, out, tensors, v, None
