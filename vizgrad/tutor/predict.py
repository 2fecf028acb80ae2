"""The wrong answers a graph predicts for one tensor's gradient, each with its kind: the
gradient of one use alone (the others not accumulated), a local derivative with the op's
input and output swapped, a matrix product by a factor that needed transposing, rows of an
embedding written with ``=`` where a repeated index needs ``+=``."""

from itertools import combinations

import numpy as np

from .diagnose import Alternative
from .numeric import as_numpy


def predicted_mistakes(name, tensor, uses, label):
    """:class:`Alternative` answers for ``tensor`` (the learner calls it ``name``; ``uses``
    are its :class:`vizgrad.tutor.graph_facts.Use` list; ``label(node, fallback)`` names the
    tensor an autograd node made, or its ``AccumulateGrad``'s leaf)."""
    found = []
    sent = [use.sent for use in uses if use.sent is not None]
    if len(uses) > 1 and len(sent) == len(uses):
        found += _partial_sums(name, uses)
    if len(uses) == 1 and uses[0].upstream and uses[0].upstream[0] is not None:
        use = uses[0]
        found += _swapped_local(name, tensor, use, label)
        if use.op == "MatMul":
            found += _untransposed_factor(name, use, label)
        if use.op == "Embedding" and use.position == 0:
            found += _overwritten_rows(name, use)
    return found


def _partial_sums(name, uses):
    labels = [f"{use.op}" + (f" (input {use.position})" if sum(u.node is use.node for u in uses) > 1 else "")
              for use in uses]
    subsets = [s for size in range(1, len(uses)) for s in combinations(range(len(uses)), size)] \
        if len(uses) <= 5 else [(i,) for i in range(len(uses))]
    found = []
    for subset in subsets:
        part = sum(uses[i].sent for i in subset)
        which = " and ".join(f"`{labels[i]}`" for i in subset)
        found.append(Alternative(
            "not_accumulated", part,
            f"`{name}` is used {len(uses)} times in the forward pass (by {', '.join(f'`{lb}`' for lb in labels)}), "
            f"so its gradient is the sum of what each use sends back. Yours is the part from {which} alone: the "
            "rest was overwritten or never added.",
            f"Accumulate: `d{name} = ...` for the first use, then `d{name} += ...` for each further use "
            "(or zero it first and use `+=` throughout)."))
    return found


# The local derivative of elementwise ops, as a function of the input x and the output y;
# swapping x and y gives the mistake (tanh's 1 - y² written 1 - x²; log's 1/x written 1/y).
_LOCAL = {
    "Tanh": (np.tanh, lambda x, y: 1 - y ** 2, "1 - y²"),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x, y: y * (1 - y), "y·(1 - y)"),
    "Exp": (np.exp, lambda x, y: y, "y"),
    "Sqrt": (np.sqrt, lambda x, y: 0.5 / y, "1 / (2y)"),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), lambda x, y: -0.5 * y ** 3, "-y³ / 2"),
    "Reciprocal": (lambda x: 1 / x, lambda x, y: -y ** 2, "-y²"),
    "Log": (np.log, lambda x, y: 1 / x, "1 / x"),
    "Sin": (np.sin, lambda x, y: np.cos(x), "cos(x)"),
    "Cos": (np.cos, lambda x, y: -np.sin(x), "-sin(x)"),
}


def _swapped_local(name, tensor, use, label):
    local = _LOCAL.get(use.op)
    if local is None:
        return []
    function, derivative, formula = local
    x = as_numpy(tensor)
    with np.errstate(all="ignore"):
        y = function(x)
        swapped = use.upstream[0] * derivative(y, x)
        alone = derivative(x, y)
    op = use.op.lower()
    output = label(use.node, f"the output of {op}")
    if "y" in formula:
        how = f"written with {op}'s output y (`{output}`); yours puts its input x (`{name}`) in the place of y"
    else:
        how = f"written with {op}'s input x (`{name}`); yours puts its output y (`{output}`) in the place of x"
    return [Alternative(
        "used_output_for_input", swapped,
        f"The gradient for `{name}` uses the wrong tensor in {op}'s local derivative {formula}: it is {how}.",
        f"For y = {op}(x): dx = dy · {formula}. Check which tensor each symbol stands for."),
        Alternative(
        "other", alone,
        f"The gradient for `{name}` is {op}'s local derivative alone: it is not multiplied by the "
        f"gradient arriving from above (d`{output}`).",
        "Chain rule: the gradient of an op's input is the gradient of its output times the local derivative.")]


def _saved(use):
    """The values ``use``'s op saved for backward, as float64 arrays (None once freed)."""
    from ..tensor import Tensor
    saved = use.node.saved
    if not saved:
        return None
    return [as_numpy(Tensor._make(value)) if hasattr(value, "shape") else value for value in saved]


def _untransposed_factor(name, use, label):
    """For ``C = A @ B`` (2-d): ``dC @ B`` where ``dC @ B.T`` belongs, or ``A @ dC`` for ``A.T @ dC``."""
    saved = _saved(use)
    if saved is None or len(saved) != 2 or any(np.ndim(v) != 2 for v in saved):
        return []
    a, b = saved
    upstream = use.upstream[0]
    output = label(use.node, "C")
    other = use.node.next_edges[1 - use.position]
    factor = label(other[0], "B" if use.position == 0 else "A") if other is not None else None
    if use.position == 0 and b.shape[0] == b.shape[1]:
        factor = factor or "B"
        wrong, right = upstream @ b, f"d{output} @ {factor}.T"
    elif use.position == 1 and a.shape[0] == a.shape[1]:
        factor = factor or "A"
        wrong, right = a @ upstream, f"{factor}.T @ d{output}"
    else:
        return []
    return [Alternative(
        "transposed", wrong,
        f"The gradient for `{name}` multiplies by `{factor}` where `{factor}.T` belongs: it is `{right}` (`{factor}` "
        "is square here, so the shapes could not tell).", _MATMUL_HINT)]


_MATMUL_HINT = ("For `C = A @ B`: `dA = dC @ B.T` and `dB = A.T @ dC`: each factor is transposed and sits on the "
                "side it sat in the product.")


def _overwritten_rows(name, use):
    """``dW[i] = demb[k]`` for each position k of index i: the last write wins where an index repeats."""
    saved = _saved(use)
    if saved is None or len(saved) != 2:
        return []
    indices = np.asarray(saved[1]).astype(np.int64).reshape(-1)
    if len(set(indices.tolist())) == len(indices):
        return []
    rows = use.upstream[0].reshape(len(indices), -1)
    wrong = np.zeros((saved[0].shape[0], rows.shape[1]))
    wrong[indices] = rows            # NumPy's fancy assignment: the last write of a repeated index wins
    return [Alternative(
        "not_accumulated", wrong.reshape(saved[0].shape),
        f"The gradient for `{name}` keeps one row per index where an index repeats: each lookup of row i sends "
        "its gradient back to row i, and they add up. Yours writes them with `=`, so the last one wins.",
        f"Accumulate: `d{name}[i] += ...` for each lookup (or `d{name}.index_add_(0, indices, rows)`).")]
