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

import inspect
import math
import threading
import warnings

import numpy as np

from .. import optim
from ..creation import tensor
from ..errors import ArgumentError, ArgumentTypeError, VizgradError, as_number, public
from ..render.html import SERIES_COLOURS
from . import pictures
from .base import VizgradWidget, traitlets
from .checks import check_count, check_point, check_real, check_speed, describe
from .surfaces import MAX_RESOLUTION, SURFACES, check_surface

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
EDITABLE = {"lr": (0.0, math.inf, False), "momentum": (0.0, 1.0, False), "alpha": (0.0, 1.0, True),
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

#: The steps per second the front end's speed control offers (widgets/src/widgets/optimizer-widget.js).
SPEEDS = (25, 50, 100, 200, 500, 1000)

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

    def set(self, key, value, op="OptimizerRace.configure"):
        """Change a hyperparameter now (it applies from the next step) and for later resets;
        a wrong one is refused in the words of ``op``, the function called."""
        if key not in EDITABLE:
            raise ArgumentError(f"{op}: {self.name} can change only {sorted(EDITABLE)}, not {key!r}")
        low, high, closed = EDITABLE[key]
        if key == "betas":
            if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
                raise ArgumentTypeError(f"{op}: betas must be a pair of numbers, got {describe(value)}")
            values = tuple(float(as_number(op, key, v)) for v in value)
        else:
            values = (float(as_number(op, key, value)),)
        for number in values:
            if not (low <= number and (number <= high if closed else number < high)):
                raise ArgumentError(f"{op}: {key} must be in [{low}, {high}{']' if closed else ')'}, "
                                    f"got {value!r}")
        if key != "lr" and key not in self.optimizer.defaults:
            raise ArgumentError(f"{op}: {self.name} ({self.kind}) has no hyperparameter {key!r}")
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


def _optimizer_class(op, kind):
    """The :mod:`vizgrad.optim` class named ``kind`` that the race can step (no closure)."""
    cls = getattr(optim, kind, None) if isinstance(kind, str) else None
    if not (isinstance(cls, type) and issubclass(cls, optim.Optimizer)) or cls is optim.Optimizer:
        known = sorted(name for name in dir(optim) if isinstance(getattr(optim, name), type)
                       and issubclass(getattr(optim, name), optim.Optimizer) and name not in ("Optimizer", "LBFGS"))
        raise ArgumentError(f"{op}: vizgrad.optim has no optimizer {kind!r}; the kinds are {known}")
    if cls is optim.LBFGS:
        raise ArgumentError(f"{op}: LBFGS needs a closure that re-evaluates the function; the race steps without one")
    return cls


def _parse_optimizers(optimizers, surface, lr, op="OptimizerRace"):
    """Normalise the ``optimizers`` argument to (name, kind, hyperparameters) triples; each is
    checked by making its optimizer once, so a wrong hyperparameter is refused here."""
    if isinstance(optimizers, (str, dict)):
        optimizers = (optimizers,)
    if not isinstance(optimizers, (list, tuple)):
        raise ArgumentTypeError(f"{op}: optimizers must be a name, a dict or a list of them, "
                                f"got {describe(optimizers)}")
    if not optimizers:
        raise ArgumentError(f"{op}: optimizers must name at least one optimizer, got {optimizers!r}")
    specs = []
    for entry in optimizers:
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or "name" not in entry and "kind" not in entry:
            raise ArgumentTypeError(f"{op}: each optimizer is a name (e.g. 'Adam') or a dict such as "
                                    "{'name': 'Adam fast', 'kind': 'Adam', 'lr': 0.1, 'betas': (0.8, 0.99)}; "
                                    f"got {describe(entry)}")
        entry = dict(entry)
        name = entry.pop("name", None)
        kind = entry.pop("kind", None)
        for key, value in (("name", name), ("kind", kind)):
            if value is not None and not isinstance(value, str):
                raise ArgumentTypeError(f"{op}: an optimizer's {key} must be a str, got {describe(value)}")
        preset = name if kind is None else kind
        if preset in PRESETS:
            base_kind, family, defaults = PRESETS[preset]
        elif kind is None:
            raise ArgumentError(f"{op}: unknown optimizer {preset!r}; the race knows {sorted(PRESETS)} "
                                "(or give {'name': ..., 'kind': <a vizgrad.optim class name>, ...})")
        else:
            base_kind, family, defaults = kind, "adaptive", {}
        kind = base_kind
        cls = _optimizer_class(op, kind)
        parameters = inspect.signature(cls).parameters
        takes = [key for key in parameters if key != "params"]
        unknown = sorted(set(entry) - set(takes))
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            raise ArgumentError(f"{op}: {kind} has no hyperparameter {unknown[0]!r}; it takes {takes}")
        hyper = dict(defaults)
        if family is not None:
            hyper.setdefault("lr", surface.lr.get(family, 0.01))
        hyper.update(entry)
        specs.append([name or preset, kind, hyper])
    _apply_lr(specs, lr, op)
    seen = {}
    for spec in specs:
        count = seen[spec[0]] = seen.get(spec[0], 0) + 1
        if count > 1:
            spec[0] = f"{spec[0]} {count}"
    for name, kind, hyper in specs:
        try:
            getattr(optim, kind)([tensor([0.0, 0.0], dtype="float64", requires_grad=True)], **hyper)
        except VizgradError as error:           # in the optimizer's words ("SGD: lr must be ..."): say which one
            raise type(error)(f"{op}: optimizer {name!r}: {error}") from None
    return [tuple(spec) for spec in specs]


def _apply_lr(specs, lr, op):
    if lr is None:
        return
    if isinstance(lr, dict):
        unknown = set(lr) - {spec[0] for spec in specs}
        if unknown:
            raise ArgumentError(f"{op}: lr names optimizers that are not racing: {sorted(unknown, key=str)}; "
                                f"they are {[spec[0] for spec in specs]}")
        for spec in specs:
            if spec[0] in lr:
                spec[2]["lr"] = check_real(op, f"lr[{spec[0]!r}]", lr[spec[0]], 0)
    else:
        if isinstance(lr, str) or not hasattr(lr, "__float__"):
            raise ArgumentTypeError(f"{op}: lr must be a number, a dict {{name: lr}} or None, got {describe(lr)}")
        rate = check_real(op, "lr", lr, 0)
        for spec in specs:
            spec[2]["lr"] = rate


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
        max_steps: each optimizer stops after this many steps (an int >= 1).

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it (see docs/errors.md).
    """

    @public("OptimizerRace")
    def __init__(self, function="rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"), start=None,
                 lr=None, max_steps=5000):
        self.surface = check_surface("OptimizerRace", "function", function)
        self.max_steps = check_count("OptimizerRace", "max_steps", max_steps)
        self.start_point = self._check_start(start, "OptimizerRace")
        specs = _parse_optimizers(optimizers, self.surface, lr)
        self.bounds = value_bounds(self.surface)
        self._lr = lr
        self._optimizers = optimizers
        self.runners = [Runner(name, kind, hyper, COLOURS[i % len(COLOURS)])
                        for i, (name, kind, hyper) in enumerate(specs)]
        self.reset()

    def _check_start(self, start, op):
        return check_point(op, "start", self.surface.start if start is None else start)

    @property
    def step_count(self):
        """Steps taken since the last reset (the same for every optimizer still running)."""
        return max((len(r.positions) - 1 for r in self.runners), default=0)

    @property
    def running(self):
        """Whether any optimizer can still step (is neither finished, diverged nor stopped)."""
        return any(r.status == "paused" for r in self.runners)

    @public("OptimizerRace.reset")
    def reset(self, start=None):
        """Put every optimizer back at the start (a new one, if given) with fresh state."""
        if start is not None:
            self.start_point = self._check_start(start, "OptimizerRace.reset")
        for runner in self.runners:
            runner.start(self.surface, self.start_point)

    @public("OptimizerRace.set_function")
    def set_function(self, function, start=None):
        """Race on another surface: its start point (unless given), its suggested learning
        rates (unless ``lr`` was given), then reset. Nothing changes when an argument is refused."""
        op = "OptimizerRace.set_function"
        surface = check_surface(op, "function", function)
        start_point = check_point(op, "start", surface.start if start is None else start)
        specs = _parse_optimizers(self._optimizers, surface, self._lr, op)
        self.surface, self.bounds, self.start_point = surface, value_bounds(surface), start_point
        for runner, (_, _, hyper) in zip(self.runners, specs):
            if "lr" in hyper:
                runner.hyper["lr"] = hyper["lr"]
        self.reset()

    @public("OptimizerRace.step")
    def step(self, n=1):
        """Take ``n`` (an int >= 1) steps with every optimizer still running. Returns the number taken."""
        taken = 0
        for _ in range(check_count("OptimizerRace.step", "n", n)):
            if not self.running:
                break
            for runner in self.runners:
                if runner.status == "paused":
                    runner.step(self.surface, self.bounds)
                    if runner.status == "paused" and len(runner.positions) > self.max_steps:
                        runner.status = "stopped"
            taken += 1
        return taken

    @public("OptimizerRace.runner")
    def runner(self, name):
        """The :class:`Runner` of the optimizer called ``name``."""
        for runner in self.runners:
            if runner.name == name:
                return runner
        raise ArgumentError(f"OptimizerRace.runner: no optimizer named {name!r} is racing; "
                            f"they are {[r.name for r in self.runners]}")

    @public("OptimizerRace.configure")
    def configure(self, name, **hyper):
        """Change hyperparameters of one optimizer from its next step on: ``lr``,
        ``momentum``, ``betas``, ``alpha`` (all checked before any changes)."""
        runner = self.runner(name)
        for key in hyper:
            if key not in EDITABLE:
                raise ArgumentError(f"OptimizerRace.configure: {runner.name} can change only {sorted(EDITABLE)}, "
                                    f"not {key!r}")
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
    _, _, z = check_surface("contour_grid", "surface", surface).grid(resolution)
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
        resolution: the contour grid's points per side (an int in [2, 2000]).
        speed: steps per second while playing, one of :data:`SPEEDS` (the front end's speed
            control; the default, 200, brings Momentum and Adam to Rosenbrock's minimum in about 7 s).

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it, before any comm opens.

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

    @public("OptimizerView")
    def __init__(self, function="rosenbrock", optimizers=("SGD", "Momentum", "Adam", "RMSprop"), start=None,
                 lr=None, max_steps=5000, resolution=120, speed=200):
        resolution = check_count("OptimizerView", "resolution", resolution, minimum=2, maximum=MAX_RESOLUTION)
        speed = check_speed("OptimizerView", speed, SPEEDS)
        race = OptimizerRace(function, optimizers, start, lr, max_steps)
        self.race = race
        self.resolution = resolution
        self._local = threading.local()     # .applying: this thread is setting traits itself
        self._stepping = False              # inside _step: the race is being stepped now
        super().__init__(function=race.surface.name, speed=speed,
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

    @traitlets.validate("speed")
    def _valid_speed(self, proposal):
        return check_speed("OptimizerView.speed", proposal["value"], SPEEDS)

    # --- Python API ---------------------------------------------------------------------
    @public("OptimizerView.step")
    def step(self, n=1):
        """Step every optimizer that can ``n`` (an int >= 1) times; the view follows live
        (throttled), and when this returns its traits hold the final state (no badge says
        running). Returns the number of steps taken."""
        taken = self._step(check_count("OptimizerView.step", "n", n))
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

    @public("OptimizerView.reset")
    def reset(self, start=None):
        """Back to the start point (or a new one), every optimizer with fresh state."""
        with self._updates.lock:
            self.race.reset(start)
        self._updates.request(self._send_progress, "progress")
        if start is not None:
            self._apply(start=list(self.race.start_point))

    @public("OptimizerView.configure")
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

    @public("OptimizerView.function")
    def _on_function(self, change):
        if self._applying_here():
            return
        try:
            with self._updates.lock:
                self.race.set_function(change["new"])
        except VizgradError:
            self._apply(function=change["old"])       # an unknown name: the view keeps its surface
            raise
        self.playing = False
        self._send_surface()
        self._updates.request(self._send_progress, "progress")

    def _on_start(self, change):
        if self._applying_here():
            return
        try:
            self.reset(change["new"])
        except (TypeError, ValueError):
            self._apply(start=list(self.race.start_point))

    def _on_playing(self, _change):
        self._updates.request(self._send_progress, "progress")

    @public("OptimizerView.settings")
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
            warnings.warn(f"{error}; the setting was not changed", RuntimeWarning, stacklevel=2)
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
        grid = np.frombuffer(self.grid, dtype="<f4").reshape(tuple(self.grid_shape)) if self.grid else np.zeros((0, 0))
        with self._updates.lock:            # not while the race steps
            return race_svg(self.race, grid)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


MAP = 360                 # the static picture's contour map, pixels per side
LEVELS = 18               # contour bands, as the live view draws them


def contour_pixels(grid, scale, size=MAP, levels=LEVELS):
    """The contour map the live view paints (widgets/src/widgets/optimizer-core.js' contourImage):
    ``grid`` (row 0 at ymin) normalised (as log(1 + f - min) when ``scale`` is "log"), sampled
    bilinearly at ``size`` × ``size`` pixels (row 0 at the top), in ``levels`` bands of the
    sequential colour map, a darker pixel where the band changes."""
    grid = np.asarray(grid, dtype=np.float64)
    finite = grid[np.isfinite(grid)]
    if not finite.size:
        return np.full((size, size, 3), 244, dtype=np.uint8)
    low, high = float(finite.min()), float(finite.max())
    span = (math.log1p(high - low) if scale == "log" else high - low) or 1.0
    normal = (np.log1p(np.maximum(grid - low, 0)) if scale == "log" else grid - low) / span
    ny, nx = normal.shape
    gx = np.linspace(0, nx - 1, size)
    gy = np.linspace(ny - 1, 0, size)
    i, j = np.minimum(nx - 2, gx.astype(int)), np.minimum(ny - 2, gy.astype(int))
    fx, fy = (gx - i)[None, :], (gy - j)[:, None]
    top = normal[j][:, i] * (1 - fx) + normal[j][:, i + 1] * fx
    bottom = normal[j + 1][:, i] * (1 - fx) + normal[j + 1][:, i + 1] * fx
    values = top * (1 - fy) + bottom * fy
    bands = np.where(np.isfinite(values), np.minimum(levels - 1, np.floor(np.nan_to_num(values) * levels)), -1)
    edge = np.zeros(bands.shape, dtype=bool)
    edge[:, :-1] |= bands[:, :-1] != bands[:, 1:]
    edge[:-1, :] |= bands[:-1, :] != bands[1:, :]
    pixels = pictures.ramp(pictures.SEQUENTIAL, (np.maximum(bands, 0) + 0.5) / levels).astype(np.float64)
    pixels = np.where(edge[..., None], pixels * 0.7, pixels)
    pixels[bands < 0] = 244
    return np.rint(pixels).astype(np.uint8)


def _value_at(t, low, high, scale):
    """The f of the colour bar's position ``t`` in [0, 1]."""
    return low + math.expm1(t * math.log1p(high - low)) if scale == "log" else low + t * (high - low)


def race_svg(race, grid):
    """The race as one static SVG: the contour map of ``grid`` (the live view's) with axes and
    a colour bar, the known minima (×), the start point, each optimizer's path in its race colour
    (over the dark outline and light halo) ending in a marker at its current point (hollow when
    it diverged), and a legend with each one's status, f and position."""
    surface = race.surface
    x0, x1, y0, y1 = surface.describe()["domain"]
    left, top, size = 56, 40, MAP
    heading = f"{surface.title}: f = {surface.formula}, step {race.step_count}"

    def px(x):
        return left + (x - x0) / (x1 - x0) * size

    def py(y):
        return top + size - (y - y0) / (y1 - y0) * size

    clip = pictures.clip_id("race", surface.name, race.step_count, race.start_point,
                            [runner.positions[-1].tolist() for runner in race.runners])
    parts = [pictures.heading(10, 20, heading),
             f"<defs><clipPath id='{clip}'><rect x='{left}' y='{top}' width='{size}' height='{size}'/></clipPath>"
             f"<linearGradient id='{clip}-bar' x1='0' x2='0' y1='0' y2='1'>"
             + "".join(f"<stop offset='{10 * k}%' stop-color='rgb({r},{g},{b})'/>" for k, (r, g, b)
                       in enumerate(pictures.ramp(pictures.SEQUENTIAL, 1 - np.arange(11) / 10).tolist()))
             + "</linearGradient></defs>"]
    if grid.size:
        parts.append(pictures.image(left, top, size, size, contour_pixels(grid, surface.scale),
                                    f"f over x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]", crisp=False,
                                    extra="class='contours'"))
    parts.append(f"<rect x='{left}' y='{top}' width='{size}' height='{size}' fill='none' stroke='{pictures.AXIS}'/>")
    for tick in pictures.nice_ticks(x0, x1, 5):
        parts.append(f"<line x1='{px(tick):.1f}' x2='{px(tick):.1f}' y1='{top + size}' y2='{top + size + 5}' "
                     f"stroke='{pictures.AXIS}'/>" + pictures.text(px(tick), top + size + 18, pictures.tick_text(tick),
                                                                  pictures.SMALL, "middle", pictures.MUTED))
    for tick in pictures.nice_ticks(y0, y1, 5):
        parts.append(f"<line x1='{left - 5}' x2='{left}' y1='{py(tick):.1f}' y2='{py(tick):.1f}' "
                     f"stroke='{pictures.AXIS}'/>" + pictures.text(left - 8, py(tick) + 4, pictures.tick_text(tick),
                                                                  pictures.SMALL, "end", pictures.MUTED))
    parts.append(pictures.text(left + size - 4, top + size + 32, "x", anchor="end", fill=pictures.MUTED))
    parts.append(pictures.text(14, top + 12, "y", fill=pictures.MUTED))
    finite = grid[np.isfinite(grid)]
    bar_x = left + size + 14
    parts.append(f"<rect x='{bar_x}' y='{top}' width='12' height='{size}' fill='url(#{clip}-bar)'>"
                 f"<title>f{', on a log(1 + f - min) scale' if surface.scale == 'log' else ''}</title></rect>")
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        for t in (0, 0.25, 0.5, 0.75, 1):
            parts.append(pictures.text(bar_x + 16, min(top + size - 2, max(top + 9, top + size * (1 - t) + 4)),
                                       pictures.short_number(_value_at(t, low, high, surface.scale)), pictures.SMALL,
                                       fill=pictures.MUTED))
    body = [f"<g clip-path='url(#{clip})'>"]
    for mx, my in surface.minima:
        body.append(f"<path d='M{px(mx) - 6:.1f},{py(my) - 6:.1f}l12,12m0,-12l-12,12' stroke='#111111' "
                    f"stroke-width='2.5'><title>a minimum: ({mx:.4g}, {my:.4g})</title></path>")
    for runner in race.runners:
        positions = np.asarray(runner.positions, dtype=np.float64).reshape(-1, 2)
        keep = np.unique(np.r_[np.linspace(0, len(positions) - 1, min(len(positions), 600)).round().astype(int)])
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in positions[keep].tolist())
        (x, y), value = positions[-1], runner.values[-1]
        hover = (f"<title>{pictures.escape(runner.name)} ({pictures.escape(runner.kind)}): {runner.status} after "
                 f"{len(positions) - 1} steps, f = {pictures.number(value)} at ({x:.4g}, {y:.4g})</title>")
        body.append(f"<g class='path' data-name='{pictures.escape(runner.name)}'>{hover}")
        if len(positions) > 1:
            for width, colour in ((8, HALO), (6, OUTLINE), (3, runner.colour)):
                body.append(f"<polyline points='{points}' fill='none' stroke='{colour}' stroke-width='{width}' "
                            "stroke-linejoin='round' stroke-linecap='round'/>")
        fill, stroke = (OUTLINE, runner.colour) if runner.status == "diverged" else (runner.colour, OUTLINE)
        body.append(f"<circle class='current' cx='{px(x):.1f}' cy='{py(y):.1f}' r='5.5' fill='{fill}' "
                    f"stroke='{stroke}' stroke-width='1.5'/></g>")
    sx, sy = race.start_point
    body.append(f"<circle class='start' cx='{px(sx):.1f}' cy='{py(sy):.1f}' r='4' fill='#ffffff' stroke='{OUTLINE}' "
                f"stroke-width='1.5'><title>start ({sx:.4g}, {sy:.4g})</title></circle></g>")
    parts.extend(body)
    legend_x, y = bar_x + 64, top + 4
    parts.append(pictures.text(legend_x, y + 8, "optimizers", bold=True))
    for runner in race.runners:
        y += 40
        (x, yy), value = runner.positions[-1], runner.values[-1]
        parts.append(f"<rect x='{legend_x}' y='{y - 10}' width='18' height='8' fill='{runner.colour}' "
                     f"stroke='{OUTLINE}' stroke-width='1.5'/>")
        parts.append(pictures.text(legend_x + 24, y - 2, f"{runner.name}: {runner.status}", bold=True))
        parts.append(pictures.text(legend_x + 24, y + 14, f"f = {pictures.number(value)} at ({x:.3g}, {yy:.3g}), "
                                                          f"step {len(runner.positions) - 1}", pictures.SMALL,
                                   fill=pictures.MUTED))
    if race.step_count == 0:
        parts.append(pictures.text(legend_x, y + 44, "no steps yet: press Play, or call view.step(n)",
                                   pictures.SMALL, fill=pictures.MUTED))
    legend_w = max([300] + [8 * (len(runner.name) + 12) for runner in race.runners])
    height = max(top + size + 40, y + 60)
    width = max(legend_x + legend_w, 10 + 8.2 * len(heading))
    return pictures.document(width, height, "".join(parts), heading)


__all__ = ["OptimizerRace", "OptimizerView", "PRESETS", "SURFACES", "contour_grid", "contour_pixels", "race_svg"]
