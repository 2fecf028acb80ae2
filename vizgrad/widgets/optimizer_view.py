"""Optimizers racing on a 2-D surface: real ``vizgrad.optim`` optimizers, gradients from
the engine, each optimizer's internal state after every step.

:class:`OptimizerRace` is the logic, plain Python (usable and testable without Jupyter);
:class:`OptimizerView` is the widget around it::

    from vizgrad.widgets import OptimizerView
    view = OptimizerView("rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"))
    view                      # contours, paths, controls; Play races them live
    view.step(100)            # or from Python
    view.paths["Adam"]        # (101, 2) array: the start point and every step
    view.states["Adam"]       # m, v, m̂, v̂, lr_t, effective step size, gradient, update
"""

import html
import math
import threading
import warnings

import numpy as np

from .. import optim
from ..creation import tensor
from ..render.html import SERIES_COLOURS
from .base import VizgradWidget, traitlets
from .surfaces import SURFACES, get_surface

#: Optimizers by the names the race knows: (class name in vizgrad.optim, learning-rate
#: family for the surface's suggested rate, default hyperparameters).
PRESETS = {
    "SGD": ("SGD", "sgd", {"momentum": 0.0}),
    "Momentum": ("SGD", "sgd", {"momentum": 0.9}),
    "Nesterov": ("SGD", "sgd", {"momentum": 0.9, "nesterov": True}),
    "Adam": ("Adam", "adaptive", {"betas": (0.9, 0.999)}),
    "AdamW": ("AdamW", "adaptive", {"betas": (0.9, 0.999), "weight_decay": 0.01}),
    "RMSprop": ("RMSprop", "adaptive", {"alpha": 0.99}),
    "Adagrad": ("Adagrad", "adaptive", {}),
    "Adadelta": ("Adadelta", None, {"lr": 1.0}),
    "Adamax": ("Adamax", "adaptive", {"betas": (0.9, 0.999)}),
    "NAdam": ("NAdam", "adaptive", {"betas": (0.9, 0.999)}),
    "Rprop": ("Rprop", "adaptive", {}),
}

#: Hyperparameters the front end edits, with their allowed ranges (low, high, high included).
EDITABLE = {"lr": (0.0, math.inf, True), "momentum": (0.0, 1.0, False), "alpha": (0.0, 1.0, True),
            "betas": (0.0, 1.0, False)}

#: How the state panel names each quantity.
LABELS = {
    "grad": "∇f (gradient used)",
    "update": "Δp (this step)",
    "momentum_buffer": "b (momentum buffer)",
    "exp_avg": "m (first moment)",
    "exp_avg_sq": "v (second moment)",
    "max_exp_avg_sq": "max v (AMSGrad)",
    "m_hat": "m̂ = m/(1-β₁ᵗ)",
    "v_hat": "v̂ = v/(1-β₂ᵗ)",
    "lr_t": "lr_t = lr/(1-β₁ᵗ)",
    "square_avg": "v (mean of g²)",
    "grad_avg": "ḡ (mean of g)",
    "sum": "s (sum of g²)",
    "acc_delta": "u (mean of Δ²)",
    "exp_inf": "u (decayed max of |g|)",
    "mu_product": "Πμ (momentum schedule)",
    "prev": "g of the last step (sign)",
    "step_size": "|Δp| per coordinate (Rprop)",
    "effective_lr": "step size per coordinate",
}

#: Trail colours: vizgrad's categorical palette (``SERIES_COLOURS``: class blue and orange, then
#: Okabe and Ito's colours), every pair apart under simulated protanopia and deuteranopia, one
#: per racer (they repeat only past seven racers). Each trail is drawn over a dark outline
#: (:data:`OUTLINE`) edged with a light halo (:data:`HALO`): on every colour of the contour map
#: the outline or the halo has a contrast of at least 3:1.
COLOURS = list(SERIES_COLOURS)
OUTLINE = "#000000"
HALO = "#ffffff"

#: Beyond this distance from the origin an optimizer counts as diverged and stops.
DIVERGED = 1e6
#: An optimizer also diverges when f leaves the range it spans over the drawn domain by more
#: than this many times that range (on a surface unbounded below, f → -inf off the plot).
DIVERGED_SPANS = 100
#: An optimizer within this fraction of the domain's width of a known minimum, or whose
#: gradient norm falls below ``STATIONARY``, has finished.
CONVERGED = 1e-4
STATIONARY = 1e-10


class Runner:
    """One optimizer on the race: its parameter (a float64 tensor of 2), the optimizer,
    the path so far and its status: ``"paused"`` while it can take more steps (the view
    shows ``"running"`` while someone steps the race: :meth:`OptimizerRace.state_rows`),
    else ``"finished"`` (at a minimum or a stationary point), ``"diverged"`` (gone off to
    infinity) or ``"stopped"`` (out of steps before either)."""

    def __init__(self, name, kind, hyper, colour):
        self.name = name
        self.kind = kind
        self.hyper = dict(hyper)
        self.colour = colour
        self.param = None
        self.optimizer = None
        self.positions = []
        self.values = []
        self.status = "paused"
        self.last = None        # the gradient and update of the last step

    def start(self, surface, point):
        self.param = tensor([float(point[0]), float(point[1])], dtype="float64", requires_grad=True)
        self.param.name = "xy"
        self.optimizer = getattr(optim, self.kind)([self.param], **self.hyper)
        self.positions = [np.array(point, dtype=np.float64)]
        self.values = [surface.value(point)]
        self.status = "paused"
        self.last = None

    def step(self, surface, bounds):
        """One optimizer step: f at the current point, backward, ``optimizer.step()``. A step
        to a point that is not finite, beyond :data:`DIVERGED`, or where f leaves ``bounds``
        (low, high) diverges: the path ends at the point before."""
        param = self.param
        self.optimizer.zero_grad()
        surface(param[0], param[1]).backward()
        grad = param.grad.numpy().copy()
        self.optimizer.step()
        position = param.detach().numpy().copy()
        if not np.all(np.isfinite(position)) or np.abs(position).max() > DIVERGED:
            self.status = "diverged"
            return
        value = surface.value(position)
        if not bounds[0] <= value <= bounds[1]:       # NaN fails both comparisons
            self.status = "diverged"
            return
        self.last = {"grad": grad, "update": position - self.positions[-1]}
        self.positions.append(position)
        self.values.append(value)
        if _converged(surface, position, grad):
            self.status = "finished"

    def set(self, key, value):
        """Change a hyperparameter now (it applies from the next step) and for later resets."""
        if key not in EDITABLE:
            raise ValueError(f"{self.name}: can change only {sorted(EDITABLE)}, not {key!r}")
        low, high, closed = EDITABLE[key]
        values = tuple(float(v) for v in value) if key == "betas" else (float(value),)
        for number in values:
            if not (low <= number and (number <= high if closed else number < high)):
                raise ValueError(f"{self.name}: {key} must be in [{low}, {high}{']' if closed else ')'}, "
                                 f"got {value}")
        if key != "lr" and key not in self.optimizer.defaults:
            raise ValueError(f"{self.name} ({self.kind}) has no hyperparameter {key!r}")
        value = values if key == "betas" else values[0]
        self.hyper[key] = value
        for group in self.optimizer.param_groups:
            group[key] = value

    def state(self):
        """The optimizer's state for the parameter after the last step, with derived
        quantities: a dict of floats and float64 arrays of 2."""
        group = self.optimizer.param_groups[0]
        raw = self.optimizer.state.get(self.param, {})
        t = int(raw.get("step", 0))
        record = {"step": t, "status": self.status, "lr": float(group["lr"]),
                  "position": self.positions[-1].copy(), "value": self.values[-1]}
        for key, value in raw.items():
            if key != "step":
                record[key] = np.array(value, dtype=np.float64)
        if self.last is None:
            return record
        record.update({key: value.copy() for key, value in self.last.items()})
        record.update(_derived(self.kind, group, record, t))
        return record

    def setting(self):
        """The hyperparameters as JSON-ready data (for the front end's controls)."""
        hyper = {key: list(value) if isinstance(value, tuple) else value for key, value in self.hyper.items()}
        return {"name": self.name, "kind": self.kind, "colour": self.colour, **hyper}


def _converged(surface, position, grad):
    """Whether ``position`` is at one of the surface's minima (within :data:`CONVERGED` of
    its width) or the gradient vanished there."""
    (x0, x1), _ = surface.domain
    tolerance = CONVERGED * (x1 - x0)
    near = any(math.hypot(position[0] - mx, position[1] - my) < tolerance for mx, my in surface.minima)
    return near or float(np.hypot(*grad)) < STATIONARY


def value_bounds(surface, resolution=64):
    """(low, high): f beyond these has diverged, :data:`DIVERGED_SPANS` times the range f
    spans over the surface's domain below its least and above its greatest value there."""
    _, _, z = surface.grid(resolution)
    finite = z[np.isfinite(z)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    span = max(high - low, 1e-12)
    return low - DIVERGED_SPANS * span, high + DIVERGED_SPANS * span


def _derived(kind, group, record, t):
    """What the update rule computes from the state, for the panel: bias-corrected moments
    and the per-coordinate step size (the factor multiplying m, b or g in the update)."""
    lr, eps = group["lr"], group.get("eps", 0.0)
    if kind in ("Adam", "AdamW"):
        beta1, beta2 = group["betas"]
        v = record.get("max_exp_avg_sq", record["exp_avg_sq"])
        lr_t = lr / (1 - beta1 ** t)
        v_hat = v / (1 - beta2 ** t)
        return {"m_hat": record["exp_avg"] / (1 - beta1 ** t), "v_hat": v_hat, "lr_t": lr_t,
                "effective_lr": lr_t / (np.sqrt(v_hat) + eps)}
    if kind == "RMSprop":
        average = record["square_avg"] - (record["grad_avg"] ** 2 if "grad_avg" in record else 0.0)
        return {"effective_lr": lr / (np.sqrt(average) + eps)}
    if kind == "Adagrad":
        lr_t = lr / (1 + (t - 1) * group["lr_decay"])
        return {"effective_lr": lr_t / (np.sqrt(record["sum"]) + eps)}
    if kind == "SGD":
        return {"effective_lr": np.full(2, lr)}
    grad = record["grad"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"effective_lr": np.where(grad != 0, -record["update"] / grad, 0.0)}


def _parse_optimizers(optimizers, surface, lr):
    """Normalise the ``optimizers`` argument to (name, kind, hyperparameters) triples."""
    if isinstance(optimizers, (str, dict)):
        optimizers = (optimizers,)
    specs = []
    for entry in optimizers:
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or "name" not in entry and "kind" not in entry:
            raise TypeError("each optimizer is a name (e.g. 'Adam') or a dict such as "
                            "{'name': 'Adam fast', 'kind': 'Adam', 'lr': 0.1, 'betas': (0.8, 0.99)}; "
                            f"got {entry!r}")
        entry = dict(entry)
        name = entry.pop("name", None)
        kind = entry.pop("kind", None)
        preset = name if kind is None else kind
        if preset in PRESETS:
            base_kind, family, defaults = PRESETS[preset]
        elif kind is None:
            raise ValueError(f"unknown optimizer {preset!r}; the race knows {sorted(PRESETS)} "
                             "(or give {'name': ..., 'kind': <a vizgrad.optim class name>, ...})")
        else:
            base_kind, family, defaults = kind, "adaptive", {}
        kind = base_kind
        if not hasattr(optim, kind):
            raise ValueError(f"vizgrad.optim has no optimizer {kind!r}")
        hyper = dict(defaults)
        if family is not None:
            hyper.setdefault("lr", surface.lr.get(family, 0.01))
        hyper.update(entry)
        specs.append([name or preset, kind, hyper])
    _apply_lr(specs, lr)
    seen = {}
    for spec in specs:
        count = seen[spec[0]] = seen.get(spec[0], 0) + 1
        if count > 1:
            spec[0] = f"{spec[0]} {count}"
    return [tuple(spec) for spec in specs]


def _apply_lr(specs, lr):
    if lr is None:
        return
    if isinstance(lr, dict):
        unknown = set(lr) - {spec[0] for spec in specs}
        if unknown:
            raise ValueError(f"lr names optimizers that are not racing: {sorted(unknown)}")
        for spec in specs:
            if spec[0] in lr:
                spec[2]["lr"] = float(lr[spec[0]])
    else:
        for spec in specs:
            spec[2]["lr"] = float(lr)


class OptimizerRace:
    """Several optimizers descending one surface from one start point, in lockstep.

    Args:
        function: a name in :data:`~vizgrad.widgets.surfaces.SURFACES` or a ``Surface``.
        optimizers: names of presets (``"SGD"``, ``"Momentum"``, ``"Nesterov"``, ``"Adam"``,
            ``"AdamW"``, ``"RMSprop"``, ``"Adagrad"``, ``"Adadelta"``, ``"Adamax"``, ``"NAdam"``,
            ``"Rprop"``) or dicts
            ``{"name": ..., "kind": <vizgrad.optim class>, **hyperparameters}``.
        start: the start point ``(x, y)``; default: the surface's.
        lr: one learning rate for all, a dict ``{name: lr}``, or None for the surface's
            suggested rates (small for plain gradient descent, larger for adaptive methods).
        max_steps: each optimizer stops after this many steps.
    """

    def __init__(self, function="rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"), start=None,
                 lr=None, max_steps=5000):
        self.surface = get_surface(function)
        self.bounds = value_bounds(self.surface)
        self.max_steps = int(max_steps)
        self._lr = lr
        self._optimizers = optimizers
        self.start_point = self._check_start(start)
        self.runners = [Runner(name, kind, hyper, COLOURS[i % len(COLOURS)])
                        for i, (name, kind, hyper) in enumerate(_parse_optimizers(optimizers, self.surface, lr))]
        self.reset()

    def _check_start(self, start):
        point = self.surface.start if start is None else start
        point = tuple(float(v) for v in point)
        if len(point) != 2 or not all(math.isfinite(v) for v in point):
            raise ValueError(f"start must be a finite point (x, y), got {start!r}")
        return point

    @property
    def step_count(self):
        """Steps taken since the last reset (the same for every optimizer still running)."""
        return max((len(r.positions) - 1 for r in self.runners), default=0)

    @property
    def running(self):
        """Whether any optimizer can still step (is neither finished, diverged nor stopped)."""
        return any(r.status == "paused" for r in self.runners)

    def reset(self, start=None):
        """Put every optimizer back at the start (a new one, if given) with fresh state."""
        if start is not None:
            self.start_point = self._check_start(start)
        for runner in self.runners:
            runner.start(self.surface, self.start_point)

    def set_function(self, function, start=None):
        """Race on another surface: its start point (unless given), its suggested learning
        rates (unless ``lr`` was given), then reset."""
        self.surface = get_surface(function)
        self.bounds = value_bounds(self.surface)
        self.start_point = self._check_start(start)
        specs = _parse_optimizers(self._optimizers, self.surface, self._lr)
        for runner, (_, _, hyper) in zip(self.runners, specs):
            if "lr" in hyper:
                runner.hyper["lr"] = hyper["lr"]
        self.reset()

    def step(self, n=1):
        """Take ``n`` steps with every optimizer still running. Returns the number taken."""
        taken = 0
        for _ in range(int(n)):
            if not self.running:
                break
            for runner in self.runners:
                if runner.status == "paused":
                    runner.step(self.surface, self.bounds)
                    if runner.status == "paused" and len(runner.positions) > self.max_steps:
                        runner.status = "stopped"
            taken += 1
        return taken

    def runner(self, name):
        for runner in self.runners:
            if runner.name == name:
                return runner
        raise KeyError(f"no optimizer named {name!r} is racing; they are {[r.name for r in self.runners]}")

    def configure(self, name, **hyper):
        """Change hyperparameters of one optimizer from its next step on: ``lr``,
        ``momentum``, ``betas``, ``alpha``."""
        runner = self.runner(name)
        for key, value in hyper.items():
            runner.set(key, value)

    @property
    def paths(self):
        """``{name: positions}``: float64 arrays of shape (steps + 1, 2), the start first."""
        return {r.name: np.array(r.positions) for r in self.runners}

    @property
    def values(self):
        """``{name: f at each position}``: float64 arrays of shape (steps + 1,)."""
        return {r.name: np.array(r.values) for r in self.runners}

    @property
    def states(self):
        """``{name: state}``: each optimizer's state after its last step (see :meth:`Runner.state`)."""
        return {r.name: r.state() for r in self.runners}

    # --- what the front end gets ----------------------------------------------------
    def packed_paths(self):
        """All paths as one float32 buffer (x, y pairs, optimizer after optimizer) and the
        number of points in each."""
        lengths = [len(r.positions) for r in self.runners]
        if not sum(lengths):
            return b"", lengths
        stacked = np.concatenate([np.asarray(r.positions, dtype=np.float32).reshape(-1, 2) for r in self.runners])
        return stacked.tobytes(), lengths

    def packed_values(self):
        """f at every point of every path, as one float32 buffer (in :meth:`packed_paths`' order)."""
        if not any(r.values for r in self.runners):
            return b""
        return np.concatenate([np.asarray(r.values, dtype=np.float32) for r in self.runners]).tobytes()

    def state_rows(self, stepping=False):
        """The state panel's data, JSON-ready: per optimizer its scalars and labelled 2-vectors.
        ``stepping``: whether the race is being stepped now; an optimizer that can step is
        ``"running"`` then and ``"paused"`` otherwise."""
        rows = []
        for runner in self.runners:
            state = runner.state()
            if stepping and state["status"] == "paused":
                state["status"] = "running"
            vectors = [{"key": key, "label": LABELS.get(key, key), "value": [float(v) for v in np.ravel(value)]}
                       for key, value in state.items() if isinstance(value, np.ndarray) and key != "position"]
            if "lr_t" in state:
                vectors.insert(0, {"key": "lr_t", "label": LABELS["lr_t"], "value": [float(state["lr_t"])]})
            rows.append({"name": runner.name, "step": state["step"], "status": state["status"],
                         "lr": state["lr"], "position": [float(v) for v in state["position"]],
                         "value": float(state["value"]), "vectors": vectors})
        return rows


def contour_grid(surface, resolution=120):
    """The surface's values over its domain as a float32 buffer (row 0 at ymin) and its shape."""
    _, _, z = get_surface(surface).grid(resolution)
    return np.ascontiguousarray(z, dtype=np.float32).tobytes(), list(z.shape)


class OptimizerView(VizgradWidget):
    """Optimizers racing on a 2-D function, live in a notebook.

    The contours of the function are drawn once per function (its values on a grid,
    sent as one float32 buffer), with axes and a colour bar; each optimizer's path
    (float32 x, y pairs, a light trail over a dark outline), f along it (float32, drawn
    against the step on a log scale beside the surface) and its internal state after the
    last step update at most 20 times a second. An optimizer's status is running (while
    Play is on or :meth:`step` is stepping), paused (it can take more steps), finished (at
    a minimum or a stationary point), diverged (off to infinity, or f far beyond the range
    it spans on the plot) or stopped (out of steps); ``state_rows`` holds them. The front
    end's Step, Play/Pause and Reset ask Python to step (Play sends one request per
    animation frame, the next only after the previous was answered); clicking the plot
    restarts the race from that point; each optimizer's learning rate, momentum, betas
    or alpha can be changed while it runs (from the next step on).

    Args:
        function: a surface name (``"quadratic"``, ``"ill_conditioned"``, ``"rosenbrock"``,
            ``"beale"``, ``"himmelblau"``, ``"saddle"``) or a :class:`~vizgrad.widgets.surfaces.Surface`.
        optimizers, start, lr, max_steps: as :class:`OptimizerRace`.
        resolution: the contour grid's points per side.
        speed: steps per second while playing (the front end's speed control; the default,
            200, brings Momentum and Adam to Rosenbrock's minimum in about 7 s).

    Python API: :meth:`step`, :meth:`reset`, :meth:`configure`, :attr:`paths`,
    :attr:`states`, :attr:`values`, and ``view.function = "beale"`` to change the function.
    """

    _bundle = "optimizer-widget"

    function = traitlets.Unicode("rosenbrock").tag(sync=True)
    functions = traitlets.List().tag(sync=True)
    surface = traitlets.Dict().tag(sync=True)
    grid = traitlets.Bytes(b"").tag(sync=True)
    grid_shape = traitlets.List([0, 0]).tag(sync=True)
    start = traitlets.List().tag(sync=True)
    settings = traitlets.List().tag(sync=True)
    path_data = traitlets.Bytes(b"").tag(sync=True)
    path_lengths = traitlets.List().tag(sync=True)
    value_data = traitlets.Bytes(b"").tag(sync=True)
    outline = traitlets.Unicode(OUTLINE).tag(sync=True)
    halo = traitlets.Unicode(HALO).tag(sync=True)
    state_rows = traitlets.List().tag(sync=True)
    step_count = traitlets.Int(0).tag(sync=True)
    playing = traitlets.Bool(False).tag(sync=True)
    speed = traitlets.Int(200).tag(sync=True)

    def __init__(self, function="rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"), start=None,
                 lr=None, max_steps=5000, resolution=120, speed=200):
        race = OptimizerRace(function, optimizers, start, lr, max_steps)
        self.race = race
        self.resolution = int(resolution)
        self._local = threading.local()     # .applying: this thread is setting traits itself
        self._stepping = False              # inside _step: the race is being stepped now
        super().__init__(function=race.surface.name, speed=int(speed),
                         functions=[{"name": s.name, "title": s.title} for s in SURFACES.values()]
                         + ([] if race.surface.name in SURFACES else
                            [{"name": race.surface.name, "title": race.surface.title}]))
        self._updates = self._coalescer()
        self._send_surface()
        self._send_progress()
        self.observe(self._on_function, "function")
        self.observe(self._on_start, "start")
        self.observe(self._on_settings, "settings")
        self.observe(self._on_playing, "playing")
        self.on_msg(self._on_message)

    # --- Python API ---------------------------------------------------------------------
    def step(self, n=1):
        """Step every optimizer that can ``n`` times; the view follows live (throttled), and
        when this returns its traits hold the final state (no badge says running).
        Returns the number of steps taken."""
        taken = self._step(n)
        self._updates.flush()
        return taken

    def _step(self, n):
        """``n`` steps, the view's badges saying running meanwhile; the last update is
        requested once they are done, so that it shows where they ended."""
        taken = 0
        self._stepping = True
        try:
            for _ in range(int(n)):
                with self._updates.lock:
                    if not self.race.step(1):
                        break
                taken += 1
                self._updates.request(self._send_progress, "progress")
        finally:
            self._stepping = False
        self._updates.request(self._send_progress, "progress")
        if not self.race.running:
            self.playing = False
        return taken

    def reset(self, start=None):
        """Back to the start point (or a new one), every optimizer with fresh state."""
        with self._updates.lock:
            self.race.reset(start)
        self._updates.request(self._send_progress, "progress")
        if start is not None:
            self._apply(start=list(self.race.start_point))

    def configure(self, name, **hyper):
        """Change one optimizer's ``lr``, ``momentum``, ``betas`` or ``alpha`` (from its next step)."""
        with self._updates.lock:
            self.race.configure(name, **hyper)
        self._apply(settings=[r.setting() for r in self.race.runners])

    @property
    def paths(self):
        """``{name: (k, 2) float64 array}``: each optimizer's positions, the start first."""
        return self.race.paths

    @property
    def values(self):
        """``{name: (k,) float64 array}``: f at each position."""
        return self.race.values

    @property
    def states(self):
        """``{name: dict}``: each optimizer's state after its last step (buffers such as
        ``exp_avg``, ``exp_avg_sq``, ``momentum_buffer``; derived ``m_hat``, ``v_hat``,
        ``lr_t``, ``effective_lr``; the ``grad`` and ``update`` of the step)."""
        return self.race.states

    # --- traits and messages ------------------------------------------------------------
    def _applying_here(self):
        """Whether the trait change being observed comes from :meth:`_apply` in this thread
        (thread-local: a delivery in a timer thread must not hide a front-end change)."""
        return getattr(self._local, "applying", False)

    def _apply(self, **traits):
        """Set traits without their observers acting on them (what Python itself changed)."""
        self._local.applying = True
        try:
            with self.hold_sync():
                for name, value in traits.items():
                    setattr(self, name, value)
        finally:
            self._local.applying = False

    def _send_surface(self):
        grid, shape = contour_grid(self.race.surface, self.resolution)
        self._apply(surface=self.race.surface.describe(), grid=grid, grid_shape=shape,
                    start=list(self.race.start_point), settings=[r.setting() for r in self.race.runners])

    def _send_progress(self):
        with self._updates.lock:
            data, lengths = self.race.packed_paths()
            values = self.race.packed_values()
            rows = self.race.state_rows(stepping=self._stepping or self.playing)
            count = self.race.step_count
        self._apply(path_data=data, path_lengths=lengths, value_data=values, state_rows=rows, step_count=count)

    def _on_function(self, change):
        if self._applying_here():
            return
        with self._updates.lock:
            self.race.set_function(change["new"])
        self.playing = False
        self._send_surface()
        self._updates.request(self._send_progress, "progress")

    def _on_start(self, change):
        if self._applying_here():
            return
        try:
            self.reset(change["new"])
        except ValueError:
            self._apply(start=list(self.race.start_point))

    def _on_playing(self, _change):
        self._updates.request(self._send_progress, "progress")

    def _on_settings(self, change):
        if self._applying_here():
            return
        try:
            with self._updates.lock:
                for runner, entry in zip(self.race.runners, change["new"]):
                    for key in EDITABLE:
                        if key in entry and entry[key] != runner.setting().get(key):
                            runner.set(key, entry[key])
        except (TypeError, ValueError) as error:
            warnings.warn(f"OptimizerView: {error}; the setting was not changed", RuntimeWarning, stacklevel=2)
        finally:
            self._apply(settings=[r.setting() for r in self.race.runners])

    def _on_message(self, _widget, content, _buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "step":
            self._step(max(1, min(int(content.get("n", 1)), 2000)))
            self.send({"type": "stepped", "id": content.get("id"), "running": self.race.running,
                       "step": self.race.step_count})
        elif kind == "reset":
            self.playing = False
            self.reset()

    # --- static picture ---------------------------------------------------------------------
    def _fallback_text(self):
        lines = [f"OptimizerView on {self.race.surface.title} after {self.race.step_count} steps:"]
        for name, state in self.race.states.items():
            x, y = state["position"]
            lines.append(f"  {name}: ({x:.4g}, {y:.4g}), f = {state['value']:.4g} [{state['status']}]")
        return "\n".join(lines)

    def _fallback_svg(self):
        size = 320
        x0, x1, y0, y1 = self.race.surface.describe()["domain"]

        def point(x, y):
            return f"{(x - x0) / (x1 - x0) * size:.1f},{size - (y - y0) / (y1 - y0) * size:.1f}"

        parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{size + 150}' height='{size}' "
                 f"font-family='sans-serif' font-size='12'>",
                 f"<rect width='{size}' height='{size}' fill='#f4f6f8' stroke='#9aa5b1'/>"]
        for mx, my in self.race.surface.minima:
            parts.append(f"<text x='{point(mx, my).split(',')[0]}' y='{point(mx, my).split(',')[1]}' "
                         "text-anchor='middle' dominant-baseline='middle' fill='#1f2933'>×</text>")
        for position, runner in enumerate(self.race.runners):
            clipped = np.clip(np.asarray(runner.positions), [x0 - (x1 - x0), y0 - (y1 - y0)],
                              [x1 + (x1 - x0), y1 + (y1 - y0)])
            points = " ".join(point(x, y) for x, y in clipped[:: max(1, len(clipped) // 400)])
            parts.append(f"<polyline points='{points}' fill='none' stroke='{HALO}' stroke-width='7' "
                         "stroke-linejoin='round'/>")
            parts.append(f"<polyline points='{points}' fill='none' stroke='{OUTLINE}' stroke-width='5' "
                         "stroke-linejoin='round'/>")
            parts.append(f"<polyline points='{points}' fill='none' stroke='{runner.colour}' stroke-width='2.5' "
                         "stroke-linejoin='round'/>")
            parts.append(f"<circle cx='{size + 16}' cy='{16 + 18 * position}' r='5' fill='{runner.colour}' "
                         f"stroke='{OUTLINE}' stroke-width='1.5'/>")
            parts.append(f"<text x='{size + 26}' y='{20 + 18 * position}' fill='#1f2933'>"
                         f"{html.escape(runner.name)} ({html.escape(runner.status)})</text>")
        parts.append(f"<text x='{size + 10}' y='{size - 10}' fill='#52606d'>"
                     f"{html.escape(self.race.surface.title)}, step {self.race.step_count}</text></svg>")
        return "".join(parts)


__all__ = ["OptimizerRace", "OptimizerView", "PRESETS", "SURFACES", "contour_grid"]
