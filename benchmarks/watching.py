"""B5, B5s, PG: what watching training costs. One vizgrad training step bare, with a no-op
event listener, inside a trace, with a GraphView following that trace, and with the
dashboard attached (headless): B5 on B1's MLP, B5s on the small model learners train live;
PG the Playground's training rate alone and with its widget."""

import numpy as np

from benchmarks.harness import (BARE, DASHBOARD, FOLLOWING, NOOP, RECORDER, Skipped, benchmark,
                                training_step)
from benchmarks.training import mlp_data, vizgrad_mlp_training

_b5_attached = {"key": None, "detach": None}


def _b5_attach(key, attach):
    """Give the engine ``key``'s listeners alone. The peers run in interleaved rounds, so a
    peer's listeners must be off while the others are timed: the first step of a round
    detaches the previous peer's and attaches its own (``attach()`` returns the detach)."""
    if _b5_attached["key"] is key:
        return
    if _b5_attached["detach"] is not None:
        _b5_attached["detach"]()
    _b5_attached.update(key=None, detach=None)
    if key is not None:
        _b5_attached.update(key=key, detach=attach())


def _b5_detach():
    _b5_attach(None, None)


def _observed(make_training):
    """The five B5 settings of one training step: ``make_training()`` returns (model,
    optimizer, step) with fresh weights; each setting times its own copy."""
    def setting(attach):
        def setup():
            model, optimizer, train_step = make_training()
            key = object()

            def step():
                _b5_attach(key, lambda: attach(model, optimizer))
                return train_step()
            return step
        return setup

    def bare(model, optimizer):
        return None

    def noop(model, optimizer):
        import vizgrad as vg
        return vg.events.subscribe(lambda event: None).close

    def recorder(model, optimizer):
        import vizgrad as vg
        tracing = vg.trace().__enter__()
        return lambda: tracing.__exit__(None, None, None)

    def following(model, optimizer):
        import vizgrad as vg
        GraphView = _widget("GraphView")
        tracing = vg.trace().__enter__()
        view = GraphView(tracing)

        def detach():
            view.close()
            tracing.__exit__(None, None, None)
        return detach

    def board(model, optimizer):
        return _widget("dashboard")(model, optimizer, display=False).close

    # The Recorder goes last in each round: under glibc's default malloc its temporaries
    # leave the heap in a state that slows whichever peer is timed right after it.
    return {BARE: setting(bare), NOOP: setting(noop), DASHBOARD: setting(board), FOLLOWING: setting(following),
            RECORDER: setting(recorder)}


def _widget(name):
    try:
        import vizgrad.widgets as widgets
    except ImportError:
        raise Skipped("anywidget not installed (pip install 'vizgrad[widgets]')") from None
    return getattr(widgets, name)


@benchmark("B5", "observed_step", "ms", 1e3, references=(BARE,), teardown=_b5_detach)
def observed_step():
    """B1 (MLP 784-512-512-10, Adam): bare, a no-op listener, a trace, a GraphView following it, the dashboard."""
    x_np, y_np, params_np = mlp_data()

    return _observed(lambda: vizgrad_mlp_training(x_np, y_np, params_np))


B5S_POINTS, B5S_LR = 200, 0.1


@benchmark("B5s", "observed_small_step", "ms", 1e3, references=(BARE,), teardown=_b5_detach)
def observed_small_step():
    """MLP 2-16-16-1 (ReLU, tanh), 200 moons points, BCE with logits, SGD: the five B5 settings."""
    def make_training():
        import vizgrad as vg
        import vizgrad.nn.functional as F
        from vizgrad.data import make_moons
        x, y = make_moons(B5S_POINTS, noise=0.1, seed=0)
        x, y = vg.tensor(x.numpy()), vg.tensor(y.numpy().astype(np.float32))
        vg.manual_seed(0)
        nn = vg.nn
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
        optimizer = vg.optim.SGD(model.parameters(), lr=B5S_LR)
        step = training_step(optimizer, lambda: F.binary_cross_entropy_with_logits(model(x).squeeze(1), y))
        return model, optimizer, step

    return _observed(make_training)


PLAYGROUND_BARE, PLAYGROUND_VIEW = "trainer alone", "Playground widget"
_playgrounds = []


def _close_playgrounds():
    while _playgrounds:
        _playgrounds.pop().close()


@benchmark("PG", "playground_rate", "steps/s", None, references=(PLAYGROUND_BARE,), teardown=_close_playgrounds)
def playground_rate():
    """The Playground's default network and data, one training step: its trainer alone, and the widget (view updates at 20 Hz)."""
    def bare_setup():
        from vizgrad.widgets.playground import PlaygroundTrainer
        trainer = PlaygroundTrainer()
        return lambda: trainer.step(1)

    def view_setup():
        Playground = _widget("Playground")
        playground = Playground()
        _playgrounds.append(playground)
        return lambda: playground.step(1)

    return {PLAYGROUND_BARE: bare_setup, PLAYGROUND_VIEW: view_setup}
