"""Contractions: Einstein summation, and tensordot and inner, its special cases.

einsum parses its equation once into one subscript string per operand (``...`` replaced by
fresh letters) and computes the result with the backend's einsum; its backward is an einsum
per operand, the gradient contracted with the other operands. Bool, int32 and mixed-dtype
operands follow PyTorch's pairwise steps instead, which decide the result's dtype.
"""

import string

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (ArgumentError, ArgumentTypeError, DTypeNotImplementedError, ShapeError, check_dim, format_shape,
                      not_a_tensor)
from ..tensor import Tensor
from .binary import mul
from .linalg import _tensors
from .registry import Sample, register
from .samples import non_contiguous, values


def _parse_einsum(equation, shapes):
    """``(terms, output, sizes)``: one subscript string per operand and for the output,
    with ``...`` replaced by fresh letters, and the size of every letter."""
    if not isinstance(equation, str):
        raise ArgumentTypeError(f"einsum: the equation must be a string, got a {type(equation).__name__}")
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ArgumentError(f"einsum: {equation!r} names {len(terms)} operand{'s' if len(terms) != 1 else ''} "
                            f"but {len(shapes)} were given")
    for term in terms + ([output] if arrow else []):
        if any(c not in string.ascii_letters for c in term.replace("...", "")):
            raise ArgumentError(f"einsum: {equation!r}: subscripts must be letters (and at most one ... per operand)")
    used = set(text)
    fresh = [c for c in string.ascii_letters if c not in used]
    spans = []
    for position, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        span = len(shape) - named if "..." in term else 0
        if span < 0 or ("..." not in term and named != len(shape)):
            raise ShapeError(f"einsum: operand {position} has shape {format_shape(shape)} but its subscripts "
                             f"{term!r} name {named} dimension{'s' if named != 1 else ''}")
        spans.append(span)
    broadcast = fresh[:max(spans, default=0)]
    terms = [term.replace("...", "".join(broadcast[len(broadcast) - span:])) for term, span in zip(terms, spans)]
    if arrow:
        output = output.replace("...", "".join(broadcast))
    else:
        letters = "".join(terms)
        output = "".join(broadcast) + "".join(sorted(c for c in set(letters)
                                                     if letters.count(c) == 1 and c not in broadcast))
    sizes = {}
    for position, (term, shape) in enumerate(zip(terms, shapes)):
        for letter, size in zip(term, shape):
            if sizes.setdefault(letter, size) != size:
                raise ShapeError(f"einsum: {equation!r}: subscript {letter!r} has size {sizes[letter]} in one "
                                 f"place but {size} in operand {position} (shape {format_shape(shape)})")
    for letter in output:
        if letter not in sizes:
            raise ArgumentError(f"einsum: {equation!r}: output subscript {letter!r} appears in no operand")
        if output.count(letter) > 1:
            raise ArgumentError(f"einsum: {equation!r}: output subscript {letter!r} appears more than once")
    return terms, output, sizes


class Einsum(Op):
    @staticmethod
    def forward(ctx, *operands, terms, output, sizes):
        xp = ctx.xp
        ctx.terms, ctx.output, ctx.sizes = terms, output, sizes
        # identity matrices put the gradient on the diagonal of operands like 'ii' (constants)
        ctx.diagonals = sorted({c for term in terms for c in term if term.count(c) > 1})
        eyes = [xp.eye(sizes[c], dtype=operands[0].dtype, device=operands[0].device) for c in ctx.diagonals]
        ctx.save_for_backward(*operands, *eyes)
        return xp.einsum(",".join(terms) + "->" + output, *operands)

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        count = len(ctx.terms)
        operands, eyes = saved[:count], dict(zip(ctx.diagonals, saved[count:]))
        return tuple(_einsum_grad(ctx, grad, k, operands, eyes) if need else None
                     for k, need in enumerate(ctx.needs_input_grad))


def _einsum_grad(ctx, grad, k, operands, eyes):
    """The gradient of operand ``k``: grad contracted with every other operand onto
    operand k's subscripts. Letters only operand k has are broadcast (a ones vector);
    a repeated letter ('ii') puts the result on the diagonal (an identity matrix)."""
    xp = ctx.xp
    terms, sizes = ctx.terms, ctx.sizes
    term = terms[k]
    unique = "".join(dict.fromkeys(term))
    others = [j for j in range(len(terms)) if j != k]
    present = set(ctx.output).union(*(terms[j] for j in others))
    missing = [c for c in unique if c not in present]
    subscripts = [ctx.output] + [terms[j] for j in others] + missing
    arrays = ([grad] + [operands[j] for j in others]
              + [xp.ones((sizes[c],), dtype=grad.dtype, device=grad.device) for c in missing])
    result = xp.asarray(xp.einsum(",".join(subscripts) + "->" + unique, *arrays))  # NumPy: 0-d gives a scalar
    if len(unique) == len(term):
        return result
    fresh = iter(c for c in string.ascii_letters if c not in sizes)
    target, factors, seen = "", [], set()
    for letter in term:
        if letter in seen:  # a second occurrence: a new letter tied to the first by an identity
            renamed = next(fresh)
            target += renamed
            factors.append(letter + renamed)
        else:
            seen.add(letter)
            target += letter
    return xp.einsum(",".join([unique] + factors) + "->" + target, result, *(eyes[f[0]] for f in factors))


def _einsum_samples(rng):
    square = values(rng, (3, 3))
    for equation, shapes in (("ij,jk->ik", ((3, 4), (4, 2))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))),
                             ("ij,jk", ((3, 4), (4, 2))), ("ij->", ((3, 4),)), ("ij->ji", ((3, 4),)),
                             ("i,j->ij", ((3,), (4,))), ("i,i", ((4,), (4,))), ("ij,ij->i", ((3, 4), (3, 4))),
                             ("...ij,...jk->...ik", ((2, 3, 4), (4, 2))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
                             (",i->i", ((), (3,))), ("ijk->ki", ((2, 3, 4),))):
        yield Sample((equation,) + tuple(values(rng, s) for s in shapes), name=equation)
    yield Sample(("ii->i", square), name="diagonal")
    yield Sample(("ii", square), name="trace")
    yield Sample(("iij,j->i", values(rng, (3, 3, 2)), values(rng, (2,))), name="diagonal and contraction")
    yield Sample(("ij,jk->ik", non_contiguous(values(rng, (3, 4))), values(rng, (4, 2))), name="non-contiguous")


@register(np.einsum, _einsum_samples, method=False)
def einsum(equation, *operands):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is a @ b. Letters shared by
    operands are multiplied along; letters missing from the output are summed. Without
    ``->`` the output is the letters used once, in alphabetical order; ``...`` stands
    for the same leading dims in every operand; a repeated letter ('ii') takes a diagonal.

    The gradient of each operand is an einsum of the output gradient with the other
    operands, onto that operand's subscripts.

    Example::

        vizgrad.einsum('bij,bjk->bik', a, b)      # batched matmul
        vizgrad.einsum('ii', m)                   # trace
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ArgumentError("einsum: at least one operand is needed")
    for position, operand in enumerate(operands):
        if not isinstance(operand, Tensor):
            raise not_a_tensor("einsum", f"operand {position}", operand)
    terms, output, sizes = _parse_einsum(equation, [operand.shape for operand in operands])
    first = operands[0].dtype
    if first is dtypes.bool_ or first is dtypes.int32 or any(operand.dtype is not first for operand in operands):
        return _einsum_pairwise(equation, terms, output, sizes, operands)
    return Einsum.apply(*operands, terms=terms, output=output, sizes=sizes)


def _einsum_pairwise(equation, terms, output, sizes, operands):
    """einsum of bool, int32 or mixed dtypes, in PyTorch's steps, which decide the dtype: one
    operand's summed letters are summed (bools and integers to int64); of several, taken left to
    right in pairs, a summed letter that one side alone has (of size > 1) is summed first, letters
    both have go through bmm (no bool kernel, one dtype; when bmm's output or sum is empty, zeros
    of the right side's dtype) and without them the two are multiplied, promoting."""
    def contract(letters, out, *tensors):
        return Einsum.apply(*tensors, terms=letters, output=out, sizes=sizes) if letters != [out] else tensors[0]

    def sum_away(term, tensor, letters):
        if not letters:
            return term, tensor
        return "".join(c for c in term if c not in letters), tensor.sum(dim=[term.index(c) for c in letters])

    summed = [c for c in sizes if c not in output]
    uniques = ["".join(dict.fromkeys(term)) for term in terms]     # a repeated letter: the diagonal
    steps = [(unique, contract([term], unique, operand)) for unique, term, operand in zip(uniques, terms, operands)]
    term, result = steps[0]
    if len(steps) == 1:
        term, result = sum_away(term, result, [c for c in summed if c in term])
    counts = {c: sum(c in t for t, _ in steps) if sizes[c] != 1 else 0 for c in summed}
    for position, (other_term, other) in enumerate(steps[1:], 1):
        shared, alone, other_alone = [], [], []
        for c in summed:
            mine, theirs = sizes[c] != 1 and c in term, sizes[c] != 1 and c in other_term
            if mine and theirs:
                counts[c] -= 1
            if counts[c] == 1 and (mine or theirs):
                (shared if mine and theirs else alone if mine else other_alone).append(c)
                counts[c] = 0
        term, result = sum_away(term, result, alone)
        other_term, other = sum_away(other_term, other, other_alone)
        letters = "".join(c for c in dict.fromkeys(term + other_term) if c not in shared)
        if not shared:
            common = dtypes.promote_types(result.dtype, other.dtype)
            result, other = result.to(common), other.to(common)
        elif any(sizes[c] == 0 for c in letters + "".join(shared)):
            result = result.to(other.dtype)
        elif result.dtype is not other.dtype or result.dtype is dtypes.bool_:
            found = ('"bmm" not implemented for \'Bool\'' if result.dtype is dtypes.bool_ else
                     f"expected scalar type {result.dtype.torch_name} but found {other.dtype.torch_name}")
            before = "operand 0" if position == 1 else f"the product of operands 0 to {position - 1}"
            needs = "has no bool kernel" if dtypes.bool_ in (result.dtype, other.dtype) else "needs one dtype"
            raise DTypeNotImplementedError(
                f"einsum: {equation!r}: the subscripts {''.join(shared)!r} of {before} ({result.dtype.name}) and "
                f"operand {position} ({other.dtype.name}) are summed by a matrix product, which {needs} (PyTorch: "
                f"{found}); convert the operands first, e.g. with .double()")
        term, result = letters, contract([term, other_term], letters, result, other)
    return contract([term], output, result)


def _tensordot_samples(rng):
    yield Sample((values(rng, (3, 4, 5)), values(rng, (4, 5, 2))), name="dims=2")
    yield Sample((values(rng, (3, 4)), values(rng, (4, 2))), {"dims": 1}, name="dims=1")
    yield Sample((values(rng, (3, 4, 5)), values(rng, (5, 2, 3))), {"dims": ([0, 2], [2, 0])}, name="pairs")
    yield Sample((values(rng, (3,)), values(rng, (2,))), {"dims": 0}, name="outer")


@register(lambda a, b, dims=2: np.tensordot(a, b, axes=dims), _tensordot_samples, method=False)
def tensordot(a, b, dims=2):
    """Contract ``dims`` dims: an int (the last ``dims`` of a with the first of b) or a pair
    of lists of dims. Computed as an :func:`einsum`.

    Example::

        vizgrad.tensordot(a, b, dims=([1], [0]))      # a @ b for matrices
    """
    _tensors("tensordot", ("a", "b"), a, b)
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.ndim, b.ndim):
            raise ArgumentError(f"tensordot: dims must be between 0 and {min(a.ndim, b.ndim)}, got {dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(dims_a) != len(dims_b):
            raise ArgumentError(f"tensordot: dims pairs {dims_a} of a with {dims_b} of b: give as many of each")
    dims_a = [check_dim("tensordot", d, a.ndim) for d in dims_a]
    dims_b = [check_dim("tensordot", d, b.ndim) for d in dims_b]
    letters = iter(string.ascii_letters)
    left = [next(letters) for _ in range(a.ndim)]
    right = [next(letters) for _ in range(b.ndim)]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise ShapeError(f"tensordot: dim {da} of a {format_shape(a.shape)} has size {a.shape[da]} but dim "
                             f"{db} of b {format_shape(b.shape)} has size {b.shape[db]}")
        right[db] = left[da]
    output = [c for d, c in enumerate(left) if d not in dims_a] + [c for d, c in enumerate(right) if d not in dims_b]
    return einsum("".join(left) + "," + "".join(right) + "->" + "".join(output), a, b)


def _inner_samples(rng):
    yield Sample((values(rng, (3,)), values(rng, (3,))), name="vectors")
    yield Sample((values(rng, (2, 3)), values(rng, (4, 3))), name="matrices")
    yield Sample((values(rng, (2, 1, 3)), values(rng, (3,))), name="3-d and 1-d")
    yield Sample((values(rng, ()), values(rng, (2, 2))), name="0-d")


@register(np.inner, _inner_samples)
def inner(input, other):
    """Sums of products over the last dim of both: out[..., ...'] = Σₖ a[..., k] b[..., k]
    (shape a.shape[:-1] + b.shape[:-1]); with a 0-d operand, the product.

    Example::

        vizgrad.inner(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([3.0, 4.0]))   # tensor(11.)
    """
    for name, operand in (("input", input), ("other", other)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor("inner", name, operand)
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner: the last dims must match; got shapes {format_shape(input.shape)} and "
                         f"{format_shape(other.shape)}")
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))
