"""Issue 34: what PyTorch refuses, vizgrad refuses (with a vizgrad error of the builtin class
PyTorch raises); where PyTorch answers, vizgrad answers the same. Grad modes and collation
compared with PyTorch too."""

import collections

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

Pair = collections.namedtuple("Pair", "left right")


def _outcome(call, lib):
    try:
        return "ok", call(lib)
    except (RuntimeError, TypeError, ValueError) as error:
        return "error", error


def _refused_alike(call):
    """Both refuse, with vizgrad's error also an instance of the builtin class PyTorch raised
    (where PyTorch raises a RuntimeError for a bad value, vizgrad's value errors, ArgumentError
    and ShapeError, are ValueErrors, as everywhere in vizgrad)."""
    (ours, our_error), (theirs, their_error) = _outcome(call, vg), _outcome(call, torch)
    assert theirs == "error", f"PyTorch accepts this: {their_error}"
    assert ours == "error", f"vizgrad accepted what PyTorch refuses ({their_error})"
    assert isinstance(our_error, vg.VizgradError), f"{type(our_error).__name__}: {our_error}"
    builtin = next(k for k in (ValueError, TypeError, RuntimeError) if isinstance(their_error, k))
    if builtin is RuntimeError and isinstance(our_error, (vg.errors.ArgumentError, vg.errors.ShapeError)):
        builtin = ValueError
    assert isinstance(our_error, builtin), f"{type(our_error).__name__} is no {builtin.__name__}"
    return our_error


def _sgd(lib):
    return lib.optim.SGD([lib.nn.Parameter(lib.randn(2))], lr=0.1, momentum=0.9)


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Geometric(probs=L.tensor(0.0)),
    lambda L: L.distributions.Geometric(probs=0.0),
    lambda L: L.distributions.Geometric(probs=L.tensor([0.5, 0.0])),
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor([0.5]), L.tensor([1.5])),
    lambda L: L.nn.functional.binary_cross_entropy(L.tensor([0.5]), L.tensor([-0.5])),
    lambda L: L.nn.BCELoss()(L.tensor([0.5, 0.2]), L.tensor([1.0, 2.0])),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, total_steps=0),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, total_steps=-3),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, total_steps=2.5),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, epochs=0, steps_per_epoch=5),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, epochs=2, steps_per_epoch=-1),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=1.0, total_steps=10, pct_start=1.5),
    lambda L: L.optim.lr_scheduler.OneCycleLR(_sgd(L), max_lr=[1.0, 2.0], total_steps=10),
    lambda L: L.nn.Linear(2, 2).train("yes"),
    lambda L: L.nn.Linear(2, 2).train(1),
    lambda L: L.utils.data.default_collate([(1, 2), (3,)]),
    lambda L: L.utils.data.default_collate([[1.0, 2.0], [3.0]]),
    lambda L: L.set_grad_enabled("no"),
    lambda L: L.set_grad_enabled(1),
], ids=["Geometric(0-d 0)", "Geometric(0.)", "Geometric([.5, 0])", "bce target 1.5", "bce target -0.5",
        "BCELoss target 2", "OneCycleLR 0 steps", "OneCycleLR -3 steps", "OneCycleLR 2.5 steps", "OneCycleLR 0 epochs",
        "OneCycleLR -1 steps per epoch", "OneCycleLR pct_start 1.5", "OneCycleLR max_lr per group",
        "train('yes')", "train(1)", "collate tuples", "collate lists", "set_grad_enabled('no')",
        "set_grad_enabled(1)"])
def test_refused_as_pytorch_refuses(call):
    try:
        _refused_alike(call)
    finally:
        vg.set_grad_enabled(True)
        torch.set_grad_enabled(True)


def test_what_pytorch_accepts_still_works():
    for lib in (vg, torch):
        assert float(lib.distributions.Geometric(probs=lib.tensor(1.0)).mean) == 0.0
        loss = lib.nn.functional.binary_cross_entropy(lib.tensor([0.5, 0.25]), lib.tensor([1.0, 0.0]))
        assert abs(loss.item() - 0.4904) < 1e-4
        scheduler = lib.optim.lr_scheduler.OneCycleLR(_sgd(lib), max_lr=1.0, epochs=2, steps_per_epoch=3)
        assert scheduler.total_steps == 6
        assert lib.nn.Linear(2, 2).train(False).training is False


def test_collate_as_pytorch_collates():
    samples = [(1.5, 2, True, "a", np.float32(0.5)), (2.5, 3, False, "b", np.float32(1.5))]
    ours, theirs = vg.utils.data.default_collate(samples), torch.utils.data.default_collate(samples)
    assert type(ours) is list and type(theirs) is list and len(ours) == len(theirs)
    for a, b in zip(ours[:3] + ours[4:], theirs[:3] + theirs[4:]):
        assert a.dtype.name == str(b.dtype).split(".")[-1].replace("double", "float64") and a.tolist() == b.tolist()
    assert ours[3] == theirs[3] == ("a", "b")
    assert vg.utils.data.default_collate(["a", "b"]) == torch.utils.data.default_collate(["a", "b"]) == ["a", "b"]
    pairs = vg.utils.data.default_collate([Pair(1.0, 2), Pair(3.0, 4)])
    assert type(pairs) is Pair and pairs.left.dtype is vg.float64 and pairs.right.tolist() == [2, 4]


def _modes(lib):
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def test_grad_modes_nest_as_in_pytorch():
    for lib in (vg, torch):
        seen = []
        with lib.inference_mode():
            with lib.enable_grad():
                x = lib.ones(2, requires_grad=True)
                seen.append((_modes(lib), (x * 2).requires_grad))          # grad mode on, nothing recorded
        with lib.no_grad():
            with lib.inference_mode(False):
                x = lib.ones(2, requires_grad=True)
                seen.append((_modes(lib), (x * 2).requires_grad))
        with lib.inference_mode():
            with lib.inference_mode(False):
                seen.append((_modes(lib), None))
            seen.append((_modes(lib), None))
        seen.append((_modes(lib), None))
        if lib is vg:
            ours = seen
    assert ours == seen


def test_a_decorated_generator_runs_each_step_in_the_decorators_mode():
    results = []
    for lib in (vg, torch):
        @lib.no_grad()
        def without():
            yield lib.is_grad_enabled()
            received = yield lib.is_grad_enabled()
            yield received, lib.is_grad_enabled()

        @lib.inference_mode()
        def inferring():
            yield _modes(lib)

        @lib.enable_grad()
        def with_grad():
            yield lib.is_grad_enabled()

        steps = without()
        seen = [next(steps), lib.is_grad_enabled(), next(steps), steps.send("hi"), next(inferring()),
                lib.is_grad_enabled()]
        with lib.no_grad():
            seen.append(next(with_grad()))
        results.append(seen)
    assert results[0] == results[1] == [[False, True, False, ("hi", False), (False, True), True, True]][0]


def test_inference_mode_decorates_without_parentheses():
    @vg.inference_mode
    def inside():
        return vg.is_inference_mode_enabled()
    assert inside() and not vg.is_inference_mode_enabled()
