"""``optim.LBFGS``: the closure API, history, stopping rules and the strong-Wolfe line search,
against PyTorch's trajectory (when torch is importable) and against closed-form answers."""

import numpy as np
import pytest

import vizgrad as vg

RNG = np.random.default_rng(7)
A = RNG.standard_normal((12, 3))
B = RNG.standard_normal((12, 2))


def rosenbrock_trajectory(module, steps=3, **options):
    x = module.tensor([-1.5, 2.0], dtype=module.float64, requires_grad=True)
    opt = module.optim.LBFGS([x], **options)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    points, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure).detach()))
        points.append(x.detach().numpy().copy())
    state = opt.state[x]
    return np.array(points), losses, (state["func_evals"], state["n_iter"])


def least_squares(module, steps=3, **options):
    """Fit a Linear layer (two parameters) to B from A by mean squared error."""
    layer = module.nn.Linear(3, 2).double()
    with module.no_grad():
        layer.weight.copy_(module.tensor(np.full((2, 3), 0.1)))
        layer.bias.zero_()
    inputs, targets = module.tensor(A), module.tensor(B)
    opt = module.optim.LBFGS(layer.parameters(), **options)

    def closure():
        opt.zero_grad()
        loss = ((layer(inputs) - targets) ** 2).mean()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return layer.weight.detach().numpy(), layer.bias.detach().numpy(), losses


OPTIONS = [dict(), dict(history_size=3, max_iter=10), dict(line_search_fn="strong_wolfe"),
           dict(line_search_fn="strong_wolfe", history_size=2, max_iter=7, lr=0.5)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_rosenbrock_follows_pytorchs_trajectory(options):
    torch = pytest.importorskip("torch")
    points, losses, counts = rosenbrock_trajectory(vg, **options)
    their_points, their_losses, their_counts = rosenbrock_trajectory(torch, **options)
    assert counts == their_counts                      # the same evaluations and iterations
    np.testing.assert_allclose(points, their_points, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(losses, their_losses, rtol=1e-6)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_least_squares_follows_pytorch(options):
    torch = pytest.importorskip("torch")
    ours, theirs = least_squares(vg, **options), least_squares(torch, **options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_least_squares_reaches_the_normal_equations_solution(line_search_fn):
    weight, bias, losses = least_squares(vg, steps=3, line_search_fn=line_search_fn, tolerance_change=1e-15)
    design = np.hstack([A, np.ones((len(A), 1))])
    solution = np.linalg.lstsq(design, B, rcond=None)[0]
    np.testing.assert_allclose(weight, solution[:3].T, atol=1e-6)
    np.testing.assert_allclose(bias, solution[3], atol=1e-6)
    assert losses[0] > losses[-1]


def test_strong_wolfe_solves_rosenbrock_and_state_counts_evaluations():
    points, losses, (evaluations, iterations) = rosenbrock_trajectory(vg, steps=5, line_search_fn="strong_wolfe")
    np.testing.assert_allclose(points[-1], [1.0, 1.0], atol=1e-4)
    assert losses[0] > losses[-1] and evaluations >= iterations >= 5


def test_stops_at_once_when_the_gradient_is_below_tolerance_grad():
    x = vg.tensor([1.0, 1.0], dtype=vg.float64, requires_grad=True)
    opt = vg.optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 0.0
    assert len(calls) == 1 and x.tolist() == [1.0, 1.0]


def test_history_size_bounds_the_stored_pairs_and_max_iter_the_iterations():
    x = vg.tensor([-1.5, 2.0], dtype=vg.float64, requires_grad=True)
    opt = vg.optim.LBFGS([x], history_size=2, max_iter=6)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    opt.step(closure)
    state = opt.state[x]
    assert len(state["old_dirs"]) == 2 and state["n_iter"] == 6 and state["func_evals"] == 6


def test_errors():
    x = vg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        vg.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="per-parameter options"):
        vg.optim.LBFGS([{"params": [x]}, {"params": [vg.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError, match="needs a closure"):
        vg.optim.LBFGS([x]).step()


def test_runs_on_every_backend(backend):
    x = vg.tensor([-1.5, 2.0], dtype=vg.float64, device=backend, requires_grad=True)
    opt = vg.optim.LBFGS([x], line_search_fn="strong_wolfe", history_size=4)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    cpu_points = rosenbrock_trajectory(vg, steps=3, line_search_fn="strong_wolfe", history_size=4)[0]
    np.testing.assert_allclose(x.detach().cpu().numpy(), cpu_points[-1], rtol=1e-8, atol=1e-10)


def test_state_dict_round_trips_through_save_and_continues_the_same_trajectory(tmp_path):
    def make():
        x = vg.tensor([-1.5, 2.0], dtype=vg.float64, requires_grad=True)
        opt = vg.optim.LBFGS([x], history_size=3, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss
        return x, opt, closure

    x, opt, closure = make()
    opt.step(closure)
    vg.save(opt.state_dict(), tmp_path / "lbfgs.pt")
    y, restored, restored_closure = make()
    with vg.no_grad():
        y.copy_(x)
    restored.load_state_dict(vg.load(tmp_path / "lbfgs.pt"))
    opt.step(closure)
    restored.step(restored_closure)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert len(restored.state[y]["old_dirs"]) == 3
