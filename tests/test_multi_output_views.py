"""unbind, split and chunk: one node for all the pieces, as PyTorch records them, and
PyTorch's rules for in-place writes into those pieces."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import BackwardError

RNG = np.random.default_rng(14)


def _pieces(T, y):
    return {
        "unbind": y.unbind(0),
        "unbind dim 1": y.unbind(1),
        "split": y.split(2),
        "split with sizes": T.split(y, [1, 3]),
        "chunk": y.chunk(3, 1),
        "iteration": tuple(y),
    }


def test_every_piece_comes_from_one_node_with_pytorchs_name():
    x = vg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    names = {}
    for label, pieces in _pieces(vg, x * 2).items():
        node = pieces[0].grad_fn
        assert all(piece.grad_fn is node for piece in pieces), label
        assert [piece._output_nr for piece in pieces] == list(range(len(pieces))), label
        assert node.next_functions[0][0].name() == "MulBackward0"
        names[label] = node.name()
    assert names == {"unbind": "UnbindBackward0", "unbind dim 1": "UnbindBackward0",
                     "split": "SplitBackward0", "split with sizes": "SplitWithSizesBackward0",
                     "chunk": "SplitBackward0", "iteration": "UnbindBackward0"}
    torch = pytest.importorskip("torch")
    theirs = _pieces(torch, torch.ones(4, 3, requires_grad=True) * 2)
    assert names == {label: type(pieces[0].grad_fn).__name__ for label, pieces in theirs.items()}


def test_gradients_of_some_pieces_reach_their_places_and_zeros_elsewhere(backend):
    x = vg.tensor(np.arange(12.0).reshape(4, 3), device=backend, requires_grad=True)
    rows = x.unbind(0)
    (rows[0] * 2 + rows[3] ** 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3, [0.0] * 3, [0.0] * 3, [18.0, 20.0, 22.0]]
    x.grad = None
    first, _, last = x.split([1, 1, 2])
    (first.sum() * 3 + (last * last).sum()).backward()
    assert x.grad.tolist() == [[3.0] * 3, [0.0] * 3, [12.0, 14.0, 16.0], [18.0, 20.0, 22.0]]


def test_backward_runs_the_node_once_for_all_pieces():
    """T pieces used cost one backward of one node (the gradients are stacked in one op),
    not one full-size padded gradient per piece."""
    x = vg.randn(50, 8, requires_grad=True)
    steps = x.unbind(0)
    calls = []
    steps[0].grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append(len(grad_outputs)))
    h = vg.zeros(8)
    for step in steps:
        h = vg.tanh(h + step)
    h.sum().backward()
    assert calls == [50]
    np.testing.assert_allclose(x.grad[-1].numpy(), 1 - h.detach().numpy() ** 2, rtol=1e-6)


def test_second_derivatives_through_pieces_with_unused_ones():
    def function(x):
        a, _, c = x.unbind(1)
        first, rest = x.split([1, 2])
        return (a * c ** 2).sum() + (first.exp() * rest.sum(0)).sum() + x.chunk(2)[1].tanh().sum()

    x = vg.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    assert vg.autograd.gradcheck(function, (x,))
    assert vg.autograd.gradgradcheck(function, (x,))


def test_pieces_share_the_version_counter_of_their_base():
    y = vg.ones(3, 2)
    pieces = y.unbind(0)
    y.add_(1)
    assert pieces[2]._version == y._version == 1 and pieces[1].tolist() == [2.0, 2.0]


WRITES = {
    "add_": lambda piece: piece.add_(1),
    "setitem": lambda piece: piece.__setitem__(0, 5.0),
    "view of a piece": lambda piece: piece[1:].mul_(2),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
@pytest.mark.parametrize("split", [lambda y: y.unbind(0), lambda y: y.split(1), lambda y: y.chunk(2)],
                         ids=["unbind", "split", "chunk"])
def test_writing_into_a_piece_while_recording_is_refused_as_in_pytorch(write, split):
    x = vg.ones(2, 2, requires_grad=True)
    with pytest.raises(BackwardError, match="returns multiple views") as error:
        write(split(x * 2)[0])
    assert "output 0 of" in str(error.value) and "out-of-place" in str(error.value)
    with pytest.raises(BackwardError, match="returns multiple views"):
        write(split(x)[1])                      # pieces of a leaf
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="returns multiple views"):
        write(split(torch.ones(2, 2, requires_grad=True) * 2)[0])


def test_writes_into_pieces_pytorch_allows():
    y = vg.zeros(3, 2)
    rows = y.unbind(0)
    rows[0].add_(1)                             # nothing records
    rows[1][0] = 5.0
    x = vg.ones(3, 2, requires_grad=True)
    pieces = (x * 2).unbind(0)
    with vg.no_grad():
        pieces[2].add_(1)
    detached = pieces[1].detach()
    detached.add_(vg.ones(2))
    assert y.tolist() == [[1.0, 1.0], [5.0, 0.0], [0.0, 0.0]]
    assert pieces[2].tolist() == [3.0, 3.0] and detached.tolist() == [3.0, 3.0]


def _errors(T):
    """The messages of the refusals PyTorch makes with pieces (None where it allows)."""
    results = []

    def attempt(action):
        try:
            action()
            results.append(None)
        except RuntimeError as error:
            results.append(str(error))

    w = T.ones(2, requires_grad=True)
    attempt(lambda: T.zeros(2, 2).unbind(0)[0].add_(w))          # a piece without history
    y = T.ones(2, 2, requires_grad=True) * 2
    pieces = y.unbind(0)
    y.add_(1)
    attempt(lambda: pieces[1] * 2)                               # its base changed
    y = T.ones(2, 2, requires_grad=True) * 2
    pieces = y.split(1)
    with T.no_grad():
        pieces[0].add_(1)
    attempt(lambda: pieces[0] * 2)                               # written outside recording
    attempt(lambda: pieces[1].sum())
    attempt(lambda: pieces[1].detach() * 2)                      # (not recorded: allowed)
    return results


def test_using_or_writing_pieces_after_changes_follows_pytorch():
    mine = _errors(vg)
    assert mine[-1] is None and all(message is not None for message in mine[:-1])
    assert "created while gradients were not recorded" in mine[0] and mine[0].startswith("add_: output 0 of unbind")
    assert mine[1].startswith("mul: output 1 of unbind is used after its base")
    assert mine[3].startswith("sum: output 1 of split")
    torch = pytest.importorskip("torch")
    assert [message is None for message in _errors(torch)] == [message is None for message in mine]


def test_recurrent_layers_and_attention_match_pytorch_through_the_pieces():
    """The layers that take time steps and q/k/v apart with unbind and chunk keep PyTorch's values."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((5, 2, 3))
    results = []
    for T in (vg, torch):
        T.manual_seed(0)
        lstm = T.nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=T.float64)
        attention = T.nn.MultiheadAttention(6, 2, dtype=T.float64)
        for parameter in (*lstm.parameters(), *attention.parameters()):
            with T.no_grad():
                parameter.copy_(T.tensor(np.linspace(-0.5, 0.5, parameter.numel()).reshape(parameter.shape)))
        inputs = T.tensor(x, requires_grad=True)
        output, (h, c) = lstm(inputs)
        attended, _ = attention(output[..., :6], output[..., 2:], output[..., 1:7])   # q, k, v differ
        (attended.sum() + (h * c).sum()).backward()
        results.append([attended.detach().numpy(), inputs.grad.numpy(),
                        lstm.weight_ih_l0.grad.numpy(), attention.in_proj_weight.grad.numpy()])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
