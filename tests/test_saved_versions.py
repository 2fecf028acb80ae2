"""Every value an op saves for backward that is a tensor's memory is version-tracked, as in
PyTorch: writing to it in place afterwards makes backward raise, naming the op, instead of
differentiating with values forward never saw.

* For every registered differentiable op and sample (``OPS``, as tests/test_ops.py), no
  saved value is an untracked view of an input's memory: a reshaped index tensor
  (embedding, max_unpool) or an indexing key's arrays (getitem, take, index_put, ...) count
  as their tensors.
* Integer index tensors written in place after the lookup: backward raises PyTorch's error.
"""

import zlib

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd.function import _views_memory_of
from vizgrad.ops.registry import OPS
from test_ops import _flatten, _is_array, _is_tensor, _leaves, _map


def _tensors(value):
    def make(array):
        tensor = vg.from_numpy(np.array(array))
        return tensor.requires_grad_(True) if array.dtype.kind == "f" else tensor
    return _map(value, _is_array, make)


def _untracked_views(name):
    """(node type, saved position, input shape) of each saved value of op ``name`` that views an
    input's memory without being tracked as that input."""
    info = OPS[name]
    found = []
    for sample in info.samples(np.random.default_rng(zlib.crc32(name.encode()))):
        args, kwargs = _tensors(sample.args), _tensors(sample.kwargs)
        inputs = _leaves((args, kwargs), _is_tensor)
        try:
            result = info.function(*args, **kwargs)
        except vg.errors.VizgradError:
            continue       # a refused sample (tested elsewhere) saves nothing
        for output in _flatten(result):
            node = getattr(output, "grad_fn", None)
            if node is None:
                continue
            tracked = {source[0] for source in getattr(node, "saved_sources", ())}
            for position, value in enumerate(getattr(node, "saved", ()) or ()):
                if position in tracked or not isinstance(value, np.ndarray):
                    continue
                found += [(type(node).__name__, position, tuple(tensor.shape)) for tensor in inputs
                          if value is tensor._array or _views_memory_of(value, tensor._array)
                          or np.shares_memory(value, tensor._array)]
    return found


DIFFERENTIABLE = sorted(name for name, info in OPS.items() if info.differentiable and info.samples is not None)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_no_op_saves_an_inputs_memory_untracked(name):
    assert _untracked_views(name) == []


LOOKUPS = {
    "indexing": lambda w, i: w[i],
    "take": lambda w, i: w.take(i),
    "embedding": lambda w, i: vg.nn.functional.embedding(i, w),
    "index_select": lambda w, i: w.index_select(0, i.flatten()),
    "gather": lambda w, i: w.gather(0, i[:, :1].expand(2, 3)),
}


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
def test_an_index_tensor_written_in_place_after_the_lookup_makes_backward_raise(lookup):
    weight = vg.randn(5, 3, requires_grad=True)
    indices = vg.tensor([[0, 2], [4, 1]])
    loss = LOOKUPS[lookup](weight, indices).sum()
    indices.mul_(1)                      # the same values, a new version: PyTorch refuses too
    with pytest.raises(vg.errors.BackwardError, match=r"modified by an in-place operation: a tensor of shape "
                                                      r"\([\d, ]+\) .* is at version 1; expected version 0"):
        loss.backward()


def test_max_unpool_indices_written_in_place_make_backward_raise():
    x = vg.randn(1, 1, 4, 4, requires_grad=True)
    pooled, indices = vg.nn.functional.max_pool2d(x, 2, return_indices=True)
    out = vg.nn.functional.max_unpool2d(pooled, indices, 2)
    indices.add_(0)
    with pytest.raises(vg.errors.BackwardError, match="MaxUnpool"):
        out.sum().backward()


def test_an_index_tensor_left_alone_differentiates_as_before():
    weight = vg.randn(5, 3, requires_grad=True)
    indices = vg.tensor([0, 2, 2])
    weight[indices].sum().backward()
    assert weight.grad[:, 0].tolist() == [1.0, 0.0, 2.0, 0.0, 0.0]
