"""Two-dimensional test functions for watching optimizers: written with vizgrad's ops, so
gradients come from the engine, and evaluated over whole grids at once for contours.

Each :class:`Surface` takes two tensors of one shape (the x and y coordinates) and
returns a tensor of that shape::

    from vizgrad.widgets.surfaces import SURFACES, get_surface
    rosen = get_surface("rosenbrock")
    rosen.value((1.0, 1.0))                 # 0.0, the minimum
    rosen.gradient((-1.2, 1.0))             # array([-215.6,  -88. ]), by backpropagation
    xs, ys, z = rosen.grid(100)             # z[i, j] = f(xs[j], ys[i]), one vectorised call
"""

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..autograd.grad_mode import no_grad
from ..creation import tensor
from ..errors import ArgumentError, ArgumentTypeError
from .checks import check_choice, check_count, check_point, check_real, describe

SCALES = ("linear", "log")
MAX_RESOLUTION = 2000     # grid points per side, at most (4 million evaluations)


def check_domain(op, name, domain):
    """A domain ``((xmin, xmax), (ymin, ymax))`` of finite numbers with min < max, as floats."""
    def pairs():
        for pair in domain:
            if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise ArgumentTypeError(f"{op}: {name} must be ((xmin, xmax), (ymin, ymax)), got {domain!r}")
            yield tuple(check_real(op, name, value) for value in pair)

    if isinstance(domain, (str, bytes)) or not hasattr(domain, "__len__") or len(domain) != 2:
        raise ArgumentTypeError(f"{op}: {name} must be ((xmin, xmax), (ymin, ymax)), got {describe(domain)}")
    ranges = tuple(pairs())
    if not all(low < high for low, high in ranges):
        raise ArgumentError(f"{op}: {name} must be ((xmin, xmax), (ymin, ymax)) with min < max, got {ranges!r}")
    return ranges


@dataclass(frozen=True)
class Surface:
    """A function of two variables with what a plot of it needs.

    Attributes:
        name: the key in :data:`SURFACES` (``"rosenbrock"``).
        title: a human name (``"Rosenbrock"``).
        formula: the function in plain text, for captions.
        fn: ``fn(x, y) -> Tensor``, built from vizgrad ops, elementwise over same-shaped tensors.
        domain: ``((xmin, xmax), (ymin, ymax))``, the region drawn.
        minima: the known global minimizers (an empty tuple when the function is unbounded below).
        start: a default start point that makes the optimizers' differences visible.
        scale: ``"log"`` when the values span orders of magnitude (contours of log(1 + f - min)),
            else ``"linear"``.
        lr: suggested learning rates per optimizer family, ``"sgd"`` (plain and momentum
            gradient descent) and ``"adaptive"`` (Adam, RMSprop, Adagrad).
    """

    name: str
    title: str
    formula: str
    fn: Callable
    domain: tuple
    minima: tuple
    start: tuple
    scale: str = "linear"
    lr: dict = field(default_factory=dict)

    def __post_init__(self):
        op = "Surface"
        for name in ("name", "title", "formula"):
            if not isinstance(getattr(self, name), str):
                raise ArgumentTypeError(f"{op}: {name} must be a str, got {describe(getattr(self, name))}")
        if not callable(self.fn):
            raise ArgumentTypeError(f"{op}: fn must be a function fn(x, y) -> Tensor, got {describe(self.fn)}")
        check_domain(op, "domain", self.domain)
        for point in self.minima:
            check_point(op, "minima", point)
        check_point(op, "start", self.start)
        check_choice(op, "scale", self.scale, SCALES)
        if not isinstance(self.lr, dict):
            raise ArgumentTypeError(f"{op}: lr must be a dict {{'sgd': rate, 'adaptive': rate}}, "
                                    f"got {describe(self.lr)}")

    def __call__(self, x, y):
        return self.fn(x, y)

    def value(self, point):
        """f at one point ``(x, y)``, as a float."""
        point = check_point("Surface.value", "point", point)
        with no_grad():
            x, y = (tensor(v, dtype="float64") for v in point)
            return float(self.fn(x, y).item())

    def gradient(self, point):
        """∇f at one point ``(x, y)``, computed by vizgrad's backward pass (float64 array of 2)."""
        point = check_point("Surface.gradient", "point", point)
        p = tensor(list(point), dtype="float64", requires_grad=True)
        self.fn(p[0], p[1]).backward()
        return p.grad.numpy().copy()

    def grid(self, resolution=100, domain=None):
        """Values on a ``resolution``-by-``resolution`` grid over ``domain`` (default: the surface's).

        Returns ``(xs, ys, z)``: the grid's coordinates along each axis and the float64 array
        ``z`` of shape ``(len(ys), len(xs))`` with ``z[i, j] = f(xs[j], ys[i])`` (row 0 is
        ``ymin``). The whole grid goes through ``fn`` as two tensors: no loop over points.
        """
        (x0, x1), (y0, y1) = self.domain if domain is None else check_domain("Surface.grid", "domain", domain)
        count = check_count("Surface.grid", "resolution", resolution, minimum=2, maximum=MAX_RESOLUTION)
        xs = np.linspace(x0, x1, count)
        ys = np.linspace(y0, y1, count)
        grid_x, grid_y = np.meshgrid(xs, ys)
        with no_grad():
            z = self.fn(tensor(grid_x, dtype="float64"), tensor(grid_y, dtype="float64")).numpy()
        return xs, ys, np.asarray(z, dtype=np.float64)

    def describe(self):
        """The surface as JSON-ready data (what the widget's front end needs, less the grid)."""
        (x0, x1), (y0, y1) = self.domain
        return {"name": self.name, "title": self.title, "formula": self.formula,
                "domain": [x0, x1, y0, y1], "minima": [list(m) for m in self.minima],
                "start": list(self.start), "scale": self.scale,
                "minimum": min((self.value(m) for m in self.minima), default=None)}


def _quadratic(x, y):
    return x * x + y * y


def _ill_conditioned(x, y):
    return 0.5 * x * x + 12.5 * y * y


def _rosenbrock(x, y):
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def _beale(x, y):
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2 + (2.625 - x + x * y ** 3) ** 2


def _himmelblau(x, y):
    return (x * x + y - 11) ** 2 + (x + y * y - 7) ** 2


def _saddle(x, y):
    return x * x - y * y


SURFACES = {surface.name: surface for surface in [
    Surface("quadratic", "Quadratic bowl", "x² + y²", _quadratic,
            ((-2.0, 2.0), (-2.0, 2.0)), ((0.0, 0.0),), (-1.6, 1.3),
            lr={"sgd": 0.1, "adaptive": 0.1}),
    Surface("ill_conditioned", "Ill-conditioned bowl", "x²/2 + 12.5·y²  (condition number 25)",
            _ill_conditioned, ((-3.0, 3.0), (-3.0, 3.0)), ((0.0, 0.0),), (-2.5, 1.2),
            lr={"sgd": 0.05, "adaptive": 0.1}),
    Surface("rosenbrock", "Rosenbrock", "(1 - x)² + 100·(y - x²)²", _rosenbrock,
            ((-2.0, 2.0), (-1.0, 3.0)), ((1.0, 1.0),), (-1.2, 1.0), scale="log",
            lr={"sgd": 1e-3, "adaptive": 0.05}),
    Surface("beale", "Beale", "(1.5 - x + xy)² + (2.25 - x + xy²)² + (2.625 - x + xy³)²", _beale,
            ((-4.5, 4.5), (-4.5, 4.5)), ((3.0, 0.5),), (1.0, 1.5), scale="log",
            lr={"sgd": 1e-3, "adaptive": 0.05}),
    Surface("himmelblau", "Himmelblau", "(x² + y - 11)² + (x + y² - 7)²", _himmelblau,
            ((-5.0, 5.0), (-5.0, 5.0)),
            ((3.0, 2.0), (-2.805118, 3.131312), (-3.779310, -3.283186), (3.584428, -1.848126)),
            (-0.3, -0.9), scale="log", lr={"sgd": 0.01, "adaptive": 0.1}),
    Surface("saddle", "Saddle", "x² - y²  (no minimum: a saddle point at the origin)", _saddle,
            ((-2.0, 2.0), (-2.0, 2.0)), (), (-1.8, 0.02),
            lr={"sgd": 0.05, "adaptive": 0.05}),
]}


def check_surface(op, name, value):
    """The :class:`Surface` ``value`` names (a key of :data:`SURFACES`), or ``value`` itself when
    it is a Surface; anything else is refused in ``op``'s words, naming the argument ``name``."""
    if isinstance(value, Surface):
        return value
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{op}: {name} must be a surface name ({sorted(SURFACES)}) or a Surface, "
                                f"got {describe(value)}")
    if value not in SURFACES:
        raise ArgumentError(f"{op}: {name} {value!r} is not a surface; the surfaces are {sorted(SURFACES)}")
    return SURFACES[value]


def get_surface(name):
    """The :class:`Surface` called ``name`` (a key of :data:`SURFACES`), or ``name`` itself
    when it already is a Surface."""
    return check_surface("get_surface", "name", name)
