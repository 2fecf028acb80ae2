"""``nn.utils.rnn``: padding and packing variable-length sequences, and RNN, LSTM and GRU
run on a packed batch; values and gradients against PyTorch."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.nn.utils import rnn

torch = pytest.importorskip("torch")
import torch.nn.utils.rnn as torch_rnn  # noqa: E402


def _pair(array):
    return vg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def _close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 2, 1], True), ([2, 4, 3], False), ([2, 4, 2], False)])
@pytest.mark.parametrize("total_length", [None, 6])
def test_pack_and_pad_packed_agree_with_pytorch(batch_first, lengths, enforce_sorted, total_length):
    array = np.random.default_rng(0).normal(size=(3, 4, 2) if batch_first else (4, 3, 2))
    x, tx = _pair(array)
    packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    theirs = torch_rnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    _close(packed.data, theirs.data)
    assert packed.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert packed.batch_sizes.dtype is vg.int64
    for index, their_index in ((packed.sorted_indices, theirs.sorted_indices),
                               (packed.unsorted_indices, theirs.unsorted_indices)):
        assert (index is None) == (their_index is None)
        if index is not None:
            assert index.tolist() == their_index.tolist()
    padded, out_lengths = rnn.pad_packed_sequence(packed, batch_first, -1.5, total_length)
    their_padded, their_lengths = torch_rnn.pad_packed_sequence(theirs, batch_first, -1.5, total_length)
    _close(padded, their_padded)
    assert out_lengths.tolist() == their_lengths.tolist() == lengths
    weights = np.random.default_rng(1).normal(size=padded.shape)
    (padded * vg.tensor(weights)).sum().backward()
    (their_padded * torch.tensor(weights)).sum().backward()
    _close(x.grad, tx.grad)
    grad = x.grad.numpy() if not batch_first else x.grad.numpy().transpose(1, 0, 2)
    for b, n in enumerate(lengths):
        assert np.all(grad[n:, b] == 0) and np.all(grad[:n, b] != 0)     # the padding gets no gradient


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_and_pack_sequence(batch_first, padding_side):
    rng = np.random.default_rng(2)
    arrays = [rng.normal(size=(n, 2)) for n in (3, 5, 1)]
    ours, theirs = zip(*(_pair(a) for a in arrays))
    padded = rnn.pad_sequence(ours, batch_first, 0.5, padding_side)
    their_padded = torch_rnn.pad_sequence(theirs, batch_first, 0.5, padding_side)
    _close(padded, their_padded)
    weights = rng.normal(size=padded.shape)
    (padded * vg.tensor(weights)).sum().backward()
    (their_padded * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        _close(a.grad, b.grad)
    packed = rnn.pack_sequence(ours, enforce_sorted=False)
    their_packed = torch_rnn.pack_sequence(theirs, enforce_sorted=False)
    _close(packed.data, their_packed.data)
    assert packed.sorted_indices.tolist() == their_packed.sorted_indices.tolist() == [1, 0, 2]
    for a, b in zip(rnn.unpack_sequence(packed), torch_rnn.unpack_sequence(their_packed)):
        _close(a, b)
    lengths = [3, 5, 1]
    padded = rnn.pad_sequence(ours)
    for a, b in zip(rnn.unpad_sequence(padded, lengths), ours):
        _close(a, b)


def test_packed_sequence_is_a_tuple_and_moves_with_to():
    packed = rnn.pack_sequence([vg.tensor([1.0, 2.0, 3.0]), vg.tensor([4.0, 5.0])])
    assert packed.data.tolist() == [1.0, 4.0, 2.0, 5.0, 3.0]
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [2, 2, 1] and sorted_indices is None and unsorted_indices is None
    assert packed.to(vg.float32) is packed
    doubled = packed.to(vg.float64)
    assert doubled.data.dtype is vg.float64 and doubled.batch_sizes is packed.batch_sizes
    assert packed.double().data.dtype is vg.float64 and not packed.is_cuda
    unsorted = rnn.pack_sequence([vg.ones(1), vg.ones(3)], enforce_sorted=False).to(vg.float64)
    assert unsorted.sorted_indices.tolist() == [1, 0] and unsorted.unsorted_indices.tolist() == [1, 0]
    assert rnn.PackedSequence(data, batch_sizes, vg.tensor([1, 2, 0])).unsorted_indices.tolist() == [2, 0, 1]
    assert vg.nn.utils.rnn is rnn


def test_mistakes_are_refused_clearly():
    x = vg.randn(4, 3, 2)
    with pytest.raises(vg.errors.ArgumentError, match="pack_padded_sequence: `lengths` array must be sorted"):
        rnn.pack_padded_sequence(x, [2, 3, 1])
    with pytest.raises(vg.errors.ShapeError, match=r"len\(lengths\)` to be equal to batch_size, but got 2"):
        rnn.pack_padded_sequence(x, [3, 1])
    with pytest.raises(vg.errors.ArgumentError, match="greater than 0"):
        rnn.pack_padded_sequence(x, [3, 1, 0])
    with pytest.raises(vg.errors.ShapeError, match="length 5 does not fit"):
        rnn.pack_padded_sequence(x, [5, 3, 1])
    with pytest.raises(vg.errors.ArgumentError, match="total_length=2 and max sequence length being 3"):
        rnn.pad_packed_sequence(rnn.pack_padded_sequence(x, [3, 2, 1]), total_length=2)
    with pytest.raises(vg.errors.ShapeError, match=r"pad_sequence: .*\(2, 3\) and \(3, 2\)"):
        rnn.pad_sequence([vg.ones(2, 3), vg.ones(3, 2)])
    with pytest.raises(vg.errors.ArgumentError, match="padding_side"):
        rnn.pad_sequence([vg.ones(2)], padding_side="middle")


def _copy_weights(ours, theirs):
    for (name, mine), (their_name, their) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == their_name
        mine.data = vg.tensor(their.detach().numpy())


LAYERS = [("RNN", {}), ("LSTM", {}), ("GRU", {}), ("RNN", {"num_layers": 2, "nonlinearity": "relu"}),
          ("LSTM", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bidirectional": True, "batch_first": True}),
          ("LSTM", {"proj_size": 2})]


@pytest.mark.parametrize("kind, options", LAYERS, ids=[f"{k}-{o}" for k, o in LAYERS])
@pytest.mark.parametrize("lengths, enforce_sorted", [([5, 3, 3, 1], True), ([2, 5, 1, 3], False)])
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layers_on_packed_batches_agree_with_pytorch(kind, options, lengths, enforce_sorted, with_state):
    rng = np.random.default_rng(3)
    theirs = getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **options)
    ours = getattr(vg.nn, kind)(3, 4, dtype=vg.float64, **options)
    _copy_weights(ours, theirs)
    batch_first = options.get("batch_first", False)
    x, tx = _pair(rng.normal(size=(4, 5, 3) if batch_first else (5, 4, 3)))
    packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    their_packed = torch_rnn.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                                  enforce_sorted=enforce_sorted)
    state = their_state = None
    leaves = []
    if with_state:
        layers = (2 if options.get("bidirectional") else 1) * options.get("num_layers", 1)
        h, th = _pair(rng.normal(size=(layers, 4, options.get("proj_size") or 4)))
        leaves.append((h, th))
        state, their_state = h, th
        if kind == "LSTM":
            c, tc = _pair(rng.normal(size=(layers, 4, 4)))
            leaves.append((c, tc))
            state, their_state = (h, c), (th, tc)
    output, final = ours(packed, state)
    their_output, their_final = theirs(their_packed, their_state)
    assert isinstance(output, rnn.PackedSequence)
    assert output.batch_sizes is packed.batch_sizes and output.sorted_indices is packed.sorted_indices
    _close(output.data, their_output.data)
    finals = final if kind == "LSTM" else (final,)
    their_finals = their_final if kind == "LSTM" else (their_final,)
    for a, b in zip(finals, their_finals):          # each sequence's last real step, in the input's order
        _close(a, b)
    weights = rng.normal(size=output.data.shape)
    loss = (output.data * vg.tensor(weights)).sum() + sum((f ** 2).sum() for f in finals)
    their_loss = (their_output.data * torch.tensor(weights)).sum() + sum((f ** 2).sum() for f in their_finals)
    loss.backward()
    their_loss.backward()
    _close(x.grad, tx.grad)
    for a, b in leaves:
        _close(a.grad, b.grad)
    for (name, mine), (_, their) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(mine.grad, their.grad)


def test_packed_steps_keep_their_scopes_and_padded_output_matches():
    lstm = vg.nn.LSTM(2, 3)
    packed = rnn.pack_sequence([vg.randn(3, 2), vg.randn(1, 2)])
    output, (h_n, c_n) = lstm(packed)
    scopes = set()
    node = h_n.grad_fn
    stack, seen = [node], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "scope", None) is not None and node.scope.step is not None:
            scopes.add(node.scope.step[0])
        stack.extend(next_node for next_node, _ in node.next_functions)
    assert {"t0", "t1", "t2"} <= scopes
    padded, lengths = rnn.pad_packed_sequence(output)
    assert lengths.tolist() == [3, 1]
    assert vg.allclose(padded[2, 0], h_n[0, 0]) and vg.allclose(padded[0, 1], h_n[0, 1])
    assert padded[1:, 1].abs().sum().item() == 0
