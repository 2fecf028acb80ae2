"""Every public constructor and method of the widgets refuses a wrong argument with a
vizgrad.errors exception in the words of the function called, naming the argument and its
value (docs/errors.md), before it opens a comm or an event subscription; a constructor that
fails leaves nothing behind (no listener, no open widget, no "Exception ignored in __del__").

One table: the call, the exact exception class, the text its message holds (it starts with
the name before the first ": ").

Needs anywidget (``pip install 'vizgrad[widgets]'``).
"""

import ast
import gc
import math
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import ipywidgets.widgets.widget as ipywidget  # noqa: E402

import vizgrad as vg  # noqa: E402
from vizgrad import nn, optim  # noqa: E402
from vizgrad.errors import (ArgumentError, ArgumentTypeError, DTypeError, IndexingError, ShapeError,  # noqa: E402
                            VizgradError)
from vizgrad.widgets import (AttentionView, ConvExplorer, Dashboard, DashboardState, GradFlowView,  # noqa: E402
                             OptimizerView, Playground, dashboard)
from vizgrad.widgets.attention_view import AttentionWeightsMissing, as_weights  # noqa: E402
from vizgrad.widgets.base import VizgradWidget  # noqa: E402
from vizgrad.widgets.conv_explorer import ConvExplorerError  # noqa: E402
from vizgrad.widgets.optimizer_view import OptimizerRace, contour_grid  # noqa: E402
from vizgrad.widgets.playground import PlaygroundTrainer, make_dataset  # noqa: E402
from vizgrad.widgets.surfaces import Surface, get_surface  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_listener_leaks")


def mlp():
    vg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def cnn():
    vg.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(72, 3))


class TwoOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)

    def forward(self, x):
        y = self.conv(x)
        return y, y


def image(*shape, dtype=None):
    return vg.ones(*(shape or (1, 1, 8, 8)), dtype=dtype)


def uniform(*shape):
    return np.full(shape, 1.0 / shape[-1])


def made(widgets, widget):
    """``widget``, kept to be closed after the call (a method row makes its widget first)."""
    widgets.append(widget)
    return widget


def other_optimizer():
    return optim.SGD(mlp().parameters(), lr=0.1)


def race():
    return OptimizerRace("quadratic", optimizers=("SGD", "Adam"))


def trainer():
    return PlaygroundTrainer(n_samples=40, hidden=(3,), resolution=4)


def playground(widgets):
    return made(widgets, Playground(n_samples=40, hidden=(3,), resolution=4))


def explorer(widgets):
    return made(widgets, ConvExplorer(cnn(), image()))


def attention(widgets, weights=True):
    return made(widgets, AttentionView(uniform(2, 3, 3) if weights else None))


def surface(**changes):
    fields = dict(name="s", title="S", formula="x + y", fn=lambda x, y: x + y, domain=((0.0, 1.0), (0.0, 1.0)),
                  minima=(), start=(0.5, 0.5))
    fields.update(changes)
    return Surface(**fields)


def row(text, call, cls, message):
    return pytest.param(call, cls, message, id=text)


CASES = [
    # --- GradFlowView --------------------------------------------------------------------------------------
    row("GradFlowView('model')", lambda w: GradFlowView("model"), ArgumentTypeError,
        "GradFlowView: model must be a vizgrad.nn.Module with parameters, got a str ('model')"),
    row("GradFlowView(nn.ReLU())", lambda w: GradFlowView(nn.ReLU()), ArgumentError,
        "GradFlowView: model must be a vizgrad.nn.Module with parameters, got a ReLU, which has no parameters"),
    row("GradFlowView(every=0)", lambda w: GradFlowView(mlp(), every=0), ArgumentError,
        "GradFlowView: every must be an int >= 1, got 0"),
    row("GradFlowView(every=1.5)", lambda w: GradFlowView(mlp(), every=1.5), ArgumentTypeError,
        "GradFlowView: every must be an int, got a float (1.5)"),
    row("GradFlowView(every=True)", lambda w: GradFlowView(mlp(), every=True), ArgumentTypeError,
        "GradFlowView: every must be an int, got a bool (True)"),
    row("GradFlowView(max_rate=0)", lambda w: GradFlowView(mlp(), max_rate=0), ArgumentError,
        "GradFlowView: max_rate must be > 0, got 0"),
    row("GradFlowView(max_rate='fast')", lambda w: GradFlowView(mlp(), max_rate="fast"), ArgumentTypeError,
        "GradFlowView: max_rate must be a number, got a str ('fast')"),
    row("GradFlowView(max_points=1)", lambda w: GradFlowView(mlp(), max_points=1), ArgumentError,
        "GradFlowView: max_points must be an int >= 2, got 1"),
    row("GradFlowView(vanishing=0)", lambda w: GradFlowView(mlp(), vanishing=0), ArgumentError,
        "GradFlowView: vanishing must be > 0, got 0"),
    row("GradFlowView(vanishing>exploding)", lambda w: GradFlowView(mlp(), vanishing=1e4), ArgumentError,
        "GradFlowView: vanishing (10000.0) must be below exploding (1000.0)"),
    row("GradFlowView(exploding=inf)", lambda w: GradFlowView(mlp(), exploding=math.inf), ArgumentError,
        "GradFlowView: exploding must be a finite number, got inf"),
    row("GradFlowView(relative=1)", lambda w: GradFlowView(mlp(), relative=1), ArgumentError,
        "GradFlowView: relative must be in [0, 1), got 1"),
    row("GradFlowView(evry=2)", lambda w: GradFlowView(mlp(), evry=2), ArgumentTypeError,
        "GradFlowView: got an unexpected keyword argument 'evry'"),
    # --- dashboard, Dashboard, DashboardState ------------------------------------------------------------------
    row("dashboard('m')", lambda w: dashboard("m"), ArgumentTypeError,
        "dashboard: model must be a vizgrad.nn.Module with parameters, got a str ('m')"),
    row("dashboard(nn.Tanh())", lambda w: dashboard(nn.Tanh()), ArgumentError,
        "dashboard: model must be a vizgrad.nn.Module with parameters, got a Tanh, which has no parameters"),
    row("dashboard(m, 'opt')", lambda w: dashboard(mlp(), "opt"), ArgumentTypeError,
        "dashboard: optimizer must be a vizgrad.optim.Optimizer or None, got a str ('opt')"),
    row("dashboard(m, other model's optimizer)", lambda w: dashboard(mlp(), other_optimizer()), ArgumentError,
        "dashboard: optimizer (SGD) updates none of the model's parameters"),
    row("dashboard(display='no')", lambda w: dashboard(mlp(), display="no"), ArgumentTypeError,
        "dashboard: display must be a bool, got a str ('no')"),
    row("dashboard(max_rate=-1)", lambda w: dashboard(mlp(), max_rate=-1), ArgumentError,
        "dashboard: max_rate must be > 0, got -1"),
    row("dashboard(histogram_rate=0)", lambda w: dashboard(mlp(), histogram_rate=0), ArgumentError,
        "dashboard: histogram_rate must be > 0, got 0"),
    row("dashboard(summary_rate=0)", lambda w: dashboard(mlp(), summary_rate=0), ArgumentError,
        "dashboard: summary_rate must be > 0, got 0"),
    row("dashboard(bins=0)", lambda w: dashboard(mlp(), bins=0), ArgumentError,
        "dashboard: bins must be an int >= 1, got 0"),
    row("dashboard(max_points=1.0)", lambda w: dashboard(mlp(), max_points=1.0), ArgumentTypeError,
        "dashboard: max_points must be an int, got a float (1.0)"),
    row("dashboard(colour='red')", lambda w: dashboard(mlp(), colour="red"), ArgumentTypeError,
        "dashboard: got an unexpected keyword argument 'colour'"),
    row("dashboard(display=False, title='x')", lambda w: dashboard(mlp(), display=False, title="x"),
        ArgumentTypeError, "dashboard: got an unexpected keyword argument 'title'"),
    row("Dashboard(nn.ReLU())", lambda w: Dashboard(nn.ReLU()), ArgumentError,
        "Dashboard: model must be a vizgrad.nn.Module with parameters, got a ReLU"),
    row("DashboardState(m, apply=3)", lambda w: DashboardState(mlp(), apply=3), ArgumentTypeError,
        "DashboardState: apply must be callable or None, got an int (3)"),
    row("DashboardState(m, max_points=1)", lambda w: DashboardState(mlp(), max_points=1), ArgumentError,
        "DashboardState: max_points must be an int >= 2, got 1"),
    # --- OptimizerView, OptimizerRace, surfaces ------------------------------------------------------------------
    row("OptimizerView('nosuch')", lambda w: OptimizerView("nosuch"), ArgumentError,
        "OptimizerView: function 'nosuch' is not a surface; the surfaces are ['beale', 'himmelblau', "
        "'ill_conditioned', 'quadratic', 'rosenbrock', 'saddle']"),
    row("OptimizerView(3)", lambda w: OptimizerView(3), ArgumentTypeError,
        "OptimizerView: function must be a surface name (['beale', "),
    row("OptimizerView(max_steps=0)", lambda w: OptimizerView(max_steps=0), ArgumentError,
        "OptimizerView: max_steps must be an int >= 1, got 0"),
    row("OptimizerView(resolution=1)", lambda w: OptimizerView(resolution=1), ArgumentError,
        "OptimizerView: resolution must be an int in [2, 2000], got 1"),
    row("OptimizerView(speed=0)", lambda w: OptimizerView(speed=0), ArgumentError,
        "OptimizerView: speed must be one of [25, 50, 100, 200, 500, 1000], got 0"),
    row("OptimizerView.speed = 7", lambda w: setattr(made(w, OptimizerView(resolution=8)), "speed", 7), ArgumentError,
        "OptimizerView.speed: speed must be one of [25, 50, 100, 200, 500, 1000], got 7"),
    row("OptimizerView(optimizers=())", lambda w: OptimizerView(optimizers=()), ArgumentError,
        "OptimizerView: optimizers must name at least one optimizer, got ()"),
    row("OptimizerView(optimizers=3)", lambda w: OptimizerView(optimizers=3), ArgumentTypeError,
        "OptimizerView: optimizers must be a name, a dict or a list of them, got an int (3)"),
    row("OptimizerView(optimizers=('Lion',))", lambda w: OptimizerView(optimizers=("Lion",)), ArgumentError,
        "OptimizerView: unknown optimizer 'Lion'; the race knows ['Adadelta', "),
    row("OptimizerView(optimizers=(3,))", lambda w: OptimizerView(optimizers=(3,)), ArgumentTypeError,
        "OptimizerView: each optimizer is a name (e.g. 'Adam') or a dict"),
    row("OptimizerView(kind='Module')", lambda w: OptimizerView(optimizers=({"kind": "Module"},)), ArgumentError,
        "OptimizerView: vizgrad.optim has no optimizer 'Module'; the kinds are ['ASGD', "),
    row("OptimizerView(kind='LBFGS')", lambda w: OptimizerView(optimizers=({"kind": "LBFGS"},)), ArgumentError,
        "OptimizerView: LBFGS needs a closure"),
    row("OptimizerView(Adam beta=0.9)", lambda w: OptimizerView(optimizers=({"kind": "Adam", "beta": 0.9},)),
        ArgumentError, "OptimizerView: Adam has no hyperparameter 'beta'; it takes ['lr', 'betas', "),
    row("OptimizerView(SGD lr=-1)", lambda w: OptimizerView(optimizers=({"kind": "SGD", "lr": -1},)), ArgumentError,
        "OptimizerView: optimizer 'SGD': SGD: lr must be >= 0.0, got -1"),
    row("OptimizerView(lr='fast')", lambda w: OptimizerView(lr="fast"), ArgumentTypeError,
        "OptimizerView: lr must be a number, a dict {name: lr} or None, got a str ('fast')"),
    row("OptimizerView(lr=nan)", lambda w: OptimizerView(lr=math.nan), ArgumentError,
        "OptimizerView: lr must be >= 0, got nan"),
    row("OptimizerView(lr={'Adam': ...}) racing SGD", lambda w: OptimizerView(optimizers=("SGD",), lr={"Adam": 0.1}),
        ArgumentError, "OptimizerView: lr names optimizers that are not racing: ['Adam']; they are ['SGD']"),
    row("OptimizerView(lr={'SGD': -1})", lambda w: OptimizerView(optimizers=("SGD",), lr={"SGD": -1}),
        ArgumentError, "OptimizerView: lr['SGD'] must be >= 0, got -1"),
    row("OptimizerView(start=(0, nan))", lambda w: OptimizerView(start=(0.0, math.nan)), ArgumentError,
        "OptimizerView: start must be a finite point (x, y), got (0.0, nan)"),
    row("OptimizerView(start='ab')", lambda w: OptimizerView(start="ab"), ArgumentTypeError,
        "OptimizerView: start must be a point (x, y) of two numbers, got a str ('ab')"),
    row("OptimizerRace('nosuch')", lambda w: OptimizerRace("nosuch"), ArgumentError,
        "OptimizerRace: function 'nosuch' is not a surface"),
    row("OptimizerRace.step(0)", lambda w: race().step(0), ArgumentError,
        "OptimizerRace.step: n must be an int >= 1, got 0"),
    row("OptimizerRace.reset(start=(1,))", lambda w: race().reset(start=(1.0,)), ArgumentTypeError,
        "OptimizerRace.reset: start must be a point (x, y) of two numbers, got a tuple ((1.0,))"),
    row("OptimizerRace.set_function('x')", lambda w: race().set_function("x"), ArgumentError,
        "OptimizerRace.set_function: function 'x' is not a surface"),
    row("OptimizerRace.configure('Nobody')", lambda w: race().configure("Nobody", lr=0.1), ArgumentError,
        "OptimizerRace.configure: no optimizer named 'Nobody' is racing; they are ['SGD', 'Adam']"),
    row("OptimizerRace.configure(lr='fast')", lambda w: race().configure("SGD", lr="fast"), ArgumentTypeError,
        "OptimizerRace.configure: lr must be a number, got a str ('fast')"),
    row("OptimizerRace.configure(lr=inf)", lambda w: race().configure("SGD", lr=math.inf), ArgumentError,
        "OptimizerRace.configure: lr must be in [0.0, inf), got inf"),
    row("OptimizerRace.configure(speed=3)", lambda w: race().configure("SGD", speed=3), ArgumentError,
        "OptimizerRace.configure: SGD can change only ['alpha', 'betas', 'lr', 'momentum'], not 'speed'"),
    row("OptimizerRace.configure(Adam momentum)", lambda w: race().configure("Adam", momentum=0.5), ArgumentError,
        "OptimizerRace.configure: Adam (Adam) has no hyperparameter 'momentum'"),
    row("OptimizerView.step(0)", lambda w: made(w, OptimizerView(resolution=8)).step(0), ArgumentError,
        "OptimizerView.step: n must be an int >= 1, got 0"),
    row("OptimizerView.reset(start=(1, 'a'))", lambda w: made(w, OptimizerView(resolution=8)).reset(start=(1, "a")),
        ArgumentTypeError, "OptimizerView.reset: start must be a number, got a str ('a')"),
    row("OptimizerView.configure(betas=0.9)",
        lambda w: made(w, OptimizerView(resolution=8, optimizers=("Adam",))).configure("Adam", betas=0.9),
        ArgumentTypeError, "OptimizerView.configure: betas must be a pair of numbers, got a float (0.9)"),
    row("OptimizerView.configure(betas=(1, 0.9))",
        lambda w: made(w, OptimizerView(resolution=8, optimizers=("Adam",))).configure("Adam", betas=(1, 0.9)),
        ArgumentError, "OptimizerView.configure: betas must be in [0.0, 1.0), got (1, 0.9)"),
    row("get_surface('nope')", lambda w: get_surface("nope"), ArgumentError,
        "get_surface: name 'nope' is not a surface; the surfaces are ['beale', "),
    row("get_surface(None)", lambda w: get_surface(None), ArgumentTypeError,
        "get_surface: name must be a surface name (['beale', "),
    row("contour_grid('nope')", lambda w: contour_grid("nope"), ArgumentError,
        "contour_grid: surface 'nope' is not a surface"),
    row("contour_grid(resolution=10**5)", lambda w: contour_grid("quadratic", 10 ** 5), ArgumentError,
        "Surface.grid: resolution must be an int in [2, 2000], got 100000"),
    row("Surface.grid(1)", lambda w: get_surface("rosenbrock").grid(1), ArgumentError,
        "Surface.grid: resolution must be an int in [2, 2000], got 1"),
    row("Surface.grid(domain reversed)", lambda w: get_surface("rosenbrock").grid(4, domain=((1, 0), (0, 1))),
        ArgumentError, "Surface.grid: domain must be ((xmin, xmax), (ymin, ymax)) with min < max, got "
                       "((1, 0), (0, 1))"),
    row("Surface.value('ab')", lambda w: get_surface("quadratic").value("ab"), ArgumentTypeError,
        "Surface.value: point must be a point (x, y) of two numbers, got a str ('ab')"),
    row("Surface.gradient((inf, 0))", lambda w: get_surface("quadratic").gradient((math.inf, 0)), ArgumentError,
        "Surface.gradient: point must be a finite point (x, y), got (inf, 0)"),
    row("Surface(scale='cubic')", lambda w: surface(scale="cubic"), ArgumentError,
        "Surface: unknown scale 'cubic'; the scale must be one of ['linear', 'log']"),
    row("Surface(fn=3)", lambda w: surface(fn=3), ArgumentTypeError,
        "Surface: fn must be a function fn(x, y) -> Tensor, got an int (3)"),
    row("Surface(domain=((0, 1),))", lambda w: surface(domain=((0, 1),)), ArgumentTypeError,
        "Surface: domain must be ((xmin, xmax), (ymin, ymax)), got a tuple (((0, 1),))"),
    # --- Playground, PlaygroundTrainer, make_dataset ---------------------------------------------------------
    row("Playground(dataset='nosuch')", lambda w: Playground(dataset="nosuch"), ArgumentError,
        "Playground: unknown dataset 'nosuch'; the dataset must be one of ['moons', 'circles', 'spirals', 'xor', "
        "'blobs']"),
    row("Playground(dataset=3)", lambda w: Playground(dataset=3), ArgumentTypeError,
        "Playground: dataset must be one of ['moons', "),
    row("Playground(n_samples=1)", lambda w: Playground(n_samples=1), ArgumentError,
        "Playground: n_samples must be an int >= 10, got 1"),
    row("Playground(n_samples=10, test_fraction=0.99)", lambda w: Playground(n_samples=10, test_fraction=0.99),
        ArgumentError, "Playground: test_fraction 0.99 of 10 samples leaves 0 for training and 10 for the test"),
    row("Playground(test_fraction=1)", lambda w: Playground(test_fraction=1), ArgumentError,
        "Playground: test_fraction must be in (0, 1), got 1"),
    row("Playground(hidden=8)", lambda w: Playground(hidden=8), ArgumentTypeError,
        "Playground: hidden must be a list or tuple, got an int (8)"),
    row("Playground(hidden='88')", lambda w: Playground(hidden="88"), ArgumentTypeError,
        "Playground: hidden must be a list or tuple, got a str ('88')"),
    row("Playground(hidden=(8, 0))", lambda w: Playground(hidden=(8, 0)), ArgumentError,
        "Playground: hidden must be an int in [1, 16], got 0"),
    row("Playground(hidden=(4.5,))", lambda w: Playground(hidden=(4.5,)), ArgumentTypeError,
        "Playground: hidden must be an int, got a float (4.5)"),
    row("Playground(hidden=(4,)*7)", lambda w: Playground(hidden=(4,) * 7), ArgumentError,
        "Playground: hidden must be at most 6 layers of 1 to 16 units each, got [4, 4, 4, 4, 4, 4, 4]"),
    row("Playground(features='xy')", lambda w: Playground(features="xy"), ArgumentTypeError,
        "Playground: features must be a list or tuple, got a str ('xy')"),
    row("Playground(features=('x', 'z'))", lambda w: Playground(features=("x", "z")), ArgumentError,
        "Playground: features must be one or more distinct names of ['x', 'y', "),
    row("Playground(activation='swish2')", lambda w: Playground(activation="swish2"), ArgumentError,
        "Playground: unknown activation 'swish2'; the activation must be one of ['relu', 'tanh', "),
    row("Playground(optimizer='lion')", lambda w: Playground(optimizer="lion"), ArgumentError,
        "Playground: unknown optimizer 'lion'; the optimizer must be one of ['sgd', 'momentum', 'adam', 'rmsprop']"),
    row("Playground(regularization='L3')", lambda w: Playground(regularization="L3"), ArgumentError,
        "Playground: unknown regularization 'L3'; the regularization must be one of ['L2', 'L1']"),
    row("Playground(learning_rate=-0.1)", lambda w: Playground(learning_rate=-0.1), ArgumentError,
        "Playground: learning_rate must be >= 0, got -0.1"),
    row("Playground(learning_rate=inf)", lambda w: Playground(learning_rate=math.inf), ArgumentError,
        "Playground: learning_rate must be a finite number, got inf"),
    row("Playground(weight_decay='a')", lambda w: Playground(weight_decay="a"), ArgumentTypeError,
        "Playground: weight_decay must be a number, got a str ('a')"),
    row("Playground(noise=-1)", lambda w: Playground(noise=-1), ArgumentError,
        "Playground: noise must be >= 0, got -1"),
    row("Playground(batch_size=0)", lambda w: Playground(batch_size=0), ArgumentError,
        "Playground: batch_size must be an int >= 1, got 0"),
    row("Playground(seed=-1)", lambda w: Playground(seed=-1), ArgumentError,
        "Playground: seed must be an int >= 0, got -1"),
    row("Playground(resolution=1000)", lambda w: Playground(resolution=1000), ArgumentError,
        "Playground: resolution must be an int in [2, 200], got 1000"),
    row("Playground(speed=0)", lambda w: Playground(speed=0), ArgumentError,
        "Playground: speed must be one of [1, 2, 5, 10, 25], got 0"),
    row("Playground.speed = 3", lambda w: setattr(playground(w), "speed", 3), ArgumentError,
        "Playground.speed: speed must be one of [1, 2, 5, 10, 25], got 3"),
    row("Playground.resolution = 8", lambda w: setattr(playground(w), "resolution", 8), ArgumentError,
        "Playground.resolution: the grids' resolution is fixed when the Playground is made (4); "
        "make a new Playground(resolution=8)"),
    row("PlaygroundTrainer(dataset=3)", lambda w: PlaygroundTrainer(dataset=3), ArgumentTypeError,
        "PlaygroundTrainer: dataset must be one of ['moons', "),
    row("PlaygroundTrainer.step(0)", lambda w: trainer().step(0), ArgumentError,
        "PlaygroundTrainer.step: n must be an int >= 1, got 0"),
    row("PlaygroundTrainer.accuracy('val')", lambda w: trainer().accuracy("val"), ArgumentError,
        "PlaygroundTrainer.accuracy: unknown split 'val'; the split must be one of ['test', 'train']"),
    row("PlaygroundTrainer.predict_proba((3, 3))", lambda w: trainer().predict_proba(np.ones((3, 3))), ShapeError,
        "PlaygroundTrainer.predict_proba: points must have shape (n, 2), got shape (3, 3)"),
    row("PlaygroundTrainer.predict_proba('a')", lambda w: trainer().predict_proba("a"), ArgumentTypeError,
        "PlaygroundTrainer.predict_proba: points must be an (n, 2) array of numbers, got a str ('a')"),
    row("PlaygroundTrainer.set_hyperparameters(batch_size=0)", lambda w: trainer().set_hyperparameters(batch_size=0),
        ArgumentError, "PlaygroundTrainer.set_hyperparameters: batch_size must be an int >= 1, got 0"),
    row("PlaygroundTrainer.set_hyperparameters(regularization=1)",
        lambda w: trainer().set_hyperparameters(regularization=1), ArgumentTypeError,
        "PlaygroundTrainer.set_hyperparameters: regularization must be one of ['L2', 'L1'], got an int (1)"),
    row("Playground.step(0)", lambda w: playground(w).step(0), ArgumentError,
        "Playground.step: n must be an int >= 1, got 0"),
    row("Playground.train(1.5)", lambda w: playground(w).train(1.5), ArgumentTypeError,
        "Playground.train: steps must be an int, got a float (1.5)"),
    row("Playground.start(0)", lambda w: playground(w).start(0), ArgumentError,
        "Playground.start: steps must be an int >= 1, got 0"),
    row("Playground.stop(timeout=-1)", lambda w: playground(w).stop(timeout=-1), ArgumentError,
        "Playground.stop: timeout must be >= 0, got -1"),
    row("Playground.accuracy('val')", lambda w: playground(w).accuracy("val"), ArgumentError,
        "Playground.accuracy: unknown split 'val'"),
    row("make_dataset('mnist')", lambda w: make_dataset("mnist"), ArgumentError,
        "make_dataset: unknown dataset 'mnist'; the dataset must be one of ['moons', "),
    row("make_dataset(n_samples=0)", lambda w: make_dataset("moons", 0), ArgumentError,
        "make_dataset: n_samples must be an int >= 1, got 0"),
    # --- ConvExplorer ------------------------------------------------------------------------------------------
    row("ConvExplorer(nn.Linear(2, 2))", lambda w: ConvExplorer(nn.Linear(2, 2)), ConvExplorerError,
        "ConvExplorer: Linear has no Conv2d layer to explore"),
    row("ConvExplorer('cnn', x)", lambda w: ConvExplorer("cnn", image()), ArgumentTypeError,
        "ConvExplorer: model must be a vizgrad.nn.Module with a Conv2d layer, got a str ('cnn')"),
    row("ConvExplorer(cnn)", lambda w: ConvExplorer(cnn()), ArgumentTypeError,
        "ConvExplorer: input must be a Tensor, got None"),
    row("ConvExplorer(cnn, ndarray)", lambda w: ConvExplorer(cnn(), np.ones((1, 1, 8, 8))), ArgumentTypeError,
        "ConvExplorer: input must be a Tensor, got a ndarray"),
    row("ConvExplorer(cnn, int64 image)", lambda w: ConvExplorer(cnn(), image(1, 1, 8, 8, dtype=vg.int64)),
        DTypeError, "ConvExplorer: input must be a floating-point Tensor (its gradient is shown), got vizgrad.int64"),
    row("ConvExplorer(cnn, batch of 2)", lambda w: ConvExplorer(cnn(), image(2, 1, 8, 8)), ConvExplorerError,
        "ConvExplorer: input must be one image of shape (1, C, H, W) or (C, H, W), got shape (2, 1, 8, 8)"),
    row("ConvExplorer(cnn, 3 channels)", lambda w: ConvExplorer(cnn(), image(1, 3, 8, 8)), ShapeError,
        "ConvExplorer: Sequential cannot run on the input of shape (1, 3, 8, 8): conv2d: the input has 3 channels"),
    row("ConvExplorer(max_channels=0)", lambda w: ConvExplorer(cnn(), image(), max_channels=0), ArgumentError,
        "ConvExplorer: max_channels must be an int >= 1, got 0"),
    row("ConvExplorer(colour='red')", lambda w: ConvExplorer(cnn(), image(), colour="red"), ArgumentTypeError,
        "ConvExplorer: got an unexpected keyword argument 'colour'"),
    row("ConvExplorer(model returning a tuple)", lambda w: ConvExplorer(TwoOutputs(), image()), ConvExplorerError,
        "ConvExplorer: the model must return a Tensor of class scores, got a tuple"),
    row("ConvExplorer.update((8, 8))", lambda w: explorer(w).update(image(8, 8)), ConvExplorerError,
        "ConvExplorer.update: input must be one image of shape (1, C, H, W) or (C, H, W), got shape (8, 8)"),
    row("ConvExplorer.select(0.5, ...)", lambda w: explorer(w).select(0.5, 0, 0, 0), ArgumentTypeError,
        "ConvExplorer.select: layer must be an int, got a float (0.5)"),
    row("ConvExplorer.select(layer=5)", lambda w: explorer(w).select(5, 0, 0, 0), ConvExplorerError,
        "ConvExplorer.select: layer must be in 0..0, got 5"),
    row("ConvExplorer.select(j='a')", lambda w: explorer(w).select(0, 0, 0, "a"), ArgumentTypeError,
        "ConvExplorer.select: j must be an int, got a str ('a')"),
    row("ConvExplorer.backward('cat')", lambda w: explorer(w).backward("cat"), ArgumentTypeError,
        "ConvExplorer.backward: target must be an int, got a str ('cat')"),
    row("ConvExplorer.backward(3)", lambda w: explorer(w).backward(3), ConvExplorerError,
        "ConvExplorer.backward: target must be a class in 0..2, got 3"),
    # --- AttentionView ------------------------------------------------------------------------------------------
    row("AttentionView('x')", lambda w: AttentionView("x"), ArgumentTypeError,
        "AttentionView: weights must be a Tensor or an array of attention weights, got a str ('x')"),
    row("AttentionView(strings)", lambda w: AttentionView(np.array([["a"]])), ArgumentTypeError,
        "AttentionView: weights must hold real numbers, got an array of <U1"),
    row("AttentionView(ones(5))", lambda w: AttentionView(np.ones(5)), ShapeError,
        "AttentionView: weights must have shape (T, S), (heads, T, S) or (batch, heads, T, S), none of them 0, "
        "got shape (5,)"),
    row("AttentionView(zeros(2, 0, 0))", lambda w: AttentionView(np.zeros((2, 0, 0))), ShapeError,
        "AttentionView: weights must have shape (T, S), (heads, T, S) or (batch, heads, T, S), none of them 0, "
        "got shape (2, 0, 0)"),
    row("AttentionView(scores)", lambda w: AttentionView(np.full((2, 2), -1.5)), ArgumentError,
        "AttentionView: weights must be attention weights (softmax outputs, >= 0), got a minimum of -1.5"),
    row("AttentionView(sample=4)", lambda w: AttentionView(uniform(2, 1, 3, 3), sample=4), IndexingError,
        "AttentionView: sample=4 is out of range for weights of shape (2, 1, 3, 3) (batch of 2)"),
    row("AttentionView(sample=-1)", lambda w: AttentionView(sample=-1), ArgumentError,
        "AttentionView: sample must be an int >= 0, got -1"),
    row("AttentionView(max_rate=0)", lambda w: AttentionView(max_rate=0), ArgumentError,
        "AttentionView: max_rate must be > 0, got 0"),
    row("AttentionView(3x3, tokens='ab')", lambda w: AttentionView(uniform(3, 3), tokens="ab"), ShapeError,
        "AttentionView: tokens has 2 tokens for weights of 3 positions"),
    row("AttentionView(tokens=5)", lambda w: AttentionView(tokens=5), ArgumentTypeError,
        "AttentionView: tokens must be a sequence of tokens (or a str of characters), got an int (5)"),
    row("AttentionView(colour='red')", lambda w: AttentionView(colour="red"), ArgumentTypeError,
        "AttentionView: got an unexpected keyword argument 'colour'"),
    row("AttentionView.update('x')", lambda w: attention(w).update("x"), ArgumentTypeError,
        "AttentionView.update: weights must be a Tensor or an array of attention weights, got a str ('x')"),
    row("AttentionView.update(key_tokens='ab')", lambda w: attention(w).update(uniform(2, 3), key_tokens="ab"),
        ShapeError, "AttentionView.update: key_tokens has 2 tokens for weights of 3 positions"),
    row("AttentionView.update(step=-1)", lambda w: attention(w).update(uniform(3, 3), step=-1), ArgumentError,
        "AttentionView.update: step must be an int >= 0, got -1"),
    row("AttentionView.watch('layer')", lambda w: attention(w).watch("layer"), ArgumentTypeError,
        "AttentionView.watch: module must be a vizgrad.nn.Module, got a str ('layer')"),
    row("AttentionView.watch(attribute=3)", lambda w: attention(w).watch(nn.Linear(2, 2), attribute=3),
        ArgumentTypeError, "AttentionView.watch: attribute must be an attribute name, got an int (3)"),
    row("AttentionView.attended() before weights", lambda w: attention(w, weights=False).attended(), ArgumentError,
        "AttentionView.attended: no attention weights yet: call update(weights) or watch(module) first"),
    row("AttentionView.attended(head=5)", lambda w: attention(w).attended(head=5), IndexingError,
        "AttentionView.attended: head 5 is out of range for 2 heads"),
    row("AttentionView.attended(query=1.0)", lambda w: attention(w).attended(query=1.0), ArgumentTypeError,
        "AttentionView.attended: query must be an int, got a float (1.0)"),
    row("AttentionView.head = 5", lambda w: setattr(attention(w), "head", 5), IndexingError,
        "AttentionView.head: head 5 is out of range for 2 heads"),
    row("AttentionView.selected = head 2", lambda w: setattr(attention(w), "selected", {"head": 2, "query": 0}),
        IndexingError, "AttentionView.head: head 2 is out of range for 2 heads"),
    row("as_weights(None)", lambda w: as_weights(None), ArgumentTypeError,
        "as_weights: weights must be a Tensor or an array of attention weights, got None"),
]


def _our_open_widgets():
    return [widget for widget in ipywidget._instances.values() if isinstance(widget, VizgradWidget)]


@pytest.mark.parametrize("call, cls, message", CASES)
def test_a_wrong_argument_raises_a_vizgrad_error_naming_it(call, cls, message):
    opened = len(_our_open_widgets())
    unraisable = []
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    widgets = []
    try:
        with pytest.raises(VizgradError) as caught:
            call(widgets)
        error = caught.value
        del caught
        cause = error
        while cause is not None:            # tracebacks hold the frames, and their frames the half-built widget
            cause.__traceback__ = None
            cause = cause.__cause__ or cause.__context__
        gc.collect()                        # a half-built widget's __del__ runs close() here
    finally:
        sys.unraisablehook = previous_hook
        for widget in widgets:
            widget.close()
    assert type(error) is cls, f"{type(error).__name__}: {error}"
    assert message in str(error)
    assert str(error).startswith(message.split(": ")[0] + ": "), str(error)
    assert [str(item.exc_value) for item in unraisable] == [], "a failed constructor left a broken object behind"
    assert len(_our_open_widgets()) == opened, "a failed call left a widget open"


def test_each_class_is_also_the_builtin_a_python_user_catches():
    with pytest.raises(TypeError):
        GradFlowView("model")
    with pytest.raises(ValueError):
        GradFlowView(nn.ReLU())
    with pytest.raises(ValueError):
        ConvExplorer(nn.Linear(2, 2))
    with pytest.raises(IndexError):
        AttentionView(uniform(2, 1, 3, 3), sample=2)
    assert issubclass(AttentionWeightsMissing, AttributeError) and issubclass(AttentionWeightsMissing, VizgradError)


def test_right_arguments_are_still_taken_as_given(closing):
    model = mlp()
    view = GradFlowView(model, every=2, max_points=2, max_rate=math.inf, vanishing=1e-6, exploding=10, relative=0,
                        title="flow")
    closing.append(view)
    assert view.every == 2 and view.title == "flow" and view.tracker.thresholds["exploding"] == 10
    board = dashboard(model, optim.SGD(model.parameters(), lr=0.1), summary_rate=None, bins=np.int64(5),
                      title="run", tab="flow")
    closing.append(board)
    assert board.tab == "flow" and board.state.bins == 5
    words = AttentionView(uniform(2, 4, 3), tokens="abcd")        # a str is its characters; they label the keys too
    closing.append(words)
    assert words.tokens == list("abcd")
    cross = AttentionView(uniform(2, 3), tokens="ab", key_tokens="xyz")
    closing.append(cross)
    assert cross.tokens == ["a", "b"] and cross.key_tokens == ["x", "y", "z"]
    assert PlaygroundTrainer(n_samples=10, hidden=[], seed=np.int64(3), features=["y", "x"]).features == ["x", "y"]
    assert OptimizerRace("quadratic", optimizers="Adam", lr=np.float32(0.5), start=[0, 1]).runner("Adam").hyper["lr"] \
        == 0.5


def test_an_unknown_function_set_from_python_is_refused_and_the_surface_kept(closing):
    view = OptimizerView("quadratic", resolution=8)
    closing.append(view)
    with pytest.raises(ArgumentError, match=r"^OptimizerView\.function: function 'nosuch' is not a surface"):
        view.function = "nosuch"
    assert view.function == "quadratic" and view.race.surface.name == "quadratic"
    view.function = "beale"
    assert view.race.surface.name == "beale"


def test_a_setting_from_the_front_end_that_is_out_of_range_is_warned_and_undone(closing):
    view = OptimizerView("quadratic", optimizers=("SGD",), resolution=8)
    closing.append(view)
    settings = [dict(entry) for entry in view.settings]
    settings[0]["lr"] = -1
    with pytest.warns(RuntimeWarning, match=r"OptimizerView\.settings: lr must be in \[0\.0, inf\), got -1; "
                                            "the setting was not changed"):
        view.settings = settings
    assert view.settings[0]["lr"] == view.race.runner("SGD").hyper["lr"] > 0


def test_an_input_the_model_cannot_run_on_leaves_the_explorer_as_it_was(closing):
    view = ConvExplorer(cnn(), vg.randn(1, 1, 8, 8))
    closing.append(view)
    before = view.feature_maps["0"].copy()
    with pytest.raises(ShapeError, match=r"^ConvExplorer: Sequential cannot run on the input of shape \(1, 3, 8, 8\)"):
        view.update(vg.randn(1, 3, 8, 8))
    assert view.image["channels"] == 1 and tuple(view._input.shape) == (1, 1, 8, 8)
    view.update()
    np.testing.assert_array_equal(view.feature_maps["0"], before)


def test_a_watched_module_without_weights_is_named_when_it_runs(closing):
    view = AttentionView()
    closing.append(view)
    layer = nn.Linear(2, 2)
    view.watch(layer)
    with pytest.raises(AttentionWeightsMissing, match="^AttentionView.watch: Linear returned no attention weights"):
        layer(vg.randn(1, 2))


@pytest.mark.parametrize("name, source, pattern", [
    ("optimizer_view", "optimizer-widget.js", r"const SPEEDS = \[([\d, ]+)\]"),
    ("playground", "playground-widget.js", r"select\(\"playground-speed\", \"steps/frame\", \[([\d, ]+)\]")])
def test_the_speeds_checked_are_those_the_front_end_offers(name, source, pattern):
    import importlib
    import re
    speeds = importlib.import_module(f"vizgrad.widgets.{name}").SPEEDS
    text = (pathlib.Path(__file__).parents[1] / "widgets" / "src" / "widgets" / source).read_text()
    offered = re.search(pattern, text)
    assert offered and tuple(int(n) for n in offered.group(1).split(", ")) == speeds


OWNED = ["grad_flow.py", "dashboard.py", "optimizer_view.py", "surfaces.py", "playground.py", "conv_explorer.py",
         "attention_view.py", "checks.py"]
BARE = {"ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "AttributeError", "Exception"}


@pytest.mark.parametrize("name", OWNED)
def test_the_widget_modules_raise_only_vizgrad_errors(name):
    path = pathlib.Path(vg.__file__).parent / "widgets" / name
    bare = [f"{name}:{node.lineno}: raise {node.exc.func.id}(...)" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name)
            and node.exc.func.id in BARE]
    assert bare == []


# --- what every widget shares (base.py) -------------------------------------------------------
def test_a_trait_given_the_wrong_kind_of_value_is_a_vizgrad_error_naming_the_widget():
    with pytest.raises(ArgumentTypeError, match=r"^GradFlowView: The 'title' trait of a GradFlowView instance "):
        GradFlowView(mlp(), title=5)


def test_the_update_rate_and_history_length_are_checked_where_they_are_kept():
    from vizgrad.widgets.base import Coalescer, SeriesBuffer
    with pytest.raises(ArgumentError, match=r"^max_rate must be positive, got 0$"):
        Coalescer(max_rate=0)
    with pytest.raises(ArgumentError, match=r"^max_points must be at least 2, got 1$"):
        SeriesBuffer(3, max_points=1)


GRAPH_VIEW_CASES = [
    (dict(source="x"), ArgumentTypeError,
     "GraphView: source must be a Tensor, a vizgrad.trace, a Recorder, a Graph or None, got a str ('x')"),
    (dict(max_nodes=-5), ArgumentError, "GraphView: max_nodes must be an int >= 1, got -5"),
    (dict(max_rate=0), ArgumentError, "GraphView: max_rate must be > 0, got 0"),
    (dict(live="yes"), ArgumentTypeError, "GraphView: live must be a bool, got a str ('yes')"),
    (dict(collapse=3), ArgumentTypeError, "GraphView: collapse must be a module name, a list of them or None, got an int (3)"),
    (dict(colapse=["0"]), ArgumentTypeError, "GraphView: got an unexpected keyword argument 'colapse'"),
    (dict(predict="yes"), ArgumentTypeError, "GraphView: predict must be True or False, got str 'yes'"),
]


@pytest.mark.parametrize("options, error, message", GRAPH_VIEW_CASES, ids=[str(sorted(o)) for o, _, _ in GRAPH_VIEW_CASES])
def test_graph_view_checks_its_arguments_before_it_opens(options, error, message):
    from vizgrad.widgets import GraphView
    options = {"source": mlp()(vg.randn(2, 3)).sum(), **options}
    opened = len(ipywidget._instances)
    with pytest.raises(error) as raised:
        GraphView(**options)
    assert str(raised.value).startswith(message)
    assert len(ipywidget._instances) == opened               # nothing was opened for the refused view
