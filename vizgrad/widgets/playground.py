"""A neural-network playground on vizgrad's engine: a small MLP learns a 2-D toy dataset
while the decision boundary, every hidden unit's response and the loss curves update live.

:class:`PlaygroundTrainer` is the logic, plain Python; :class:`Playground` is the widget::

    from vizgrad.widgets import Playground
    pg = Playground(dataset="spirals", hidden=(8, 8), activation="tanh", features=("x", "y", "sin x", "sin y"))
    pg                        # the network as a diagram; Train / Pause / Step in the notebook
    pg.train(200)             # or from Python (the view follows, throttled)
    pg.loss_history["test"][-1], pg.accuracy()
"""

import threading
import warnings

import numpy as np

from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..creation import default_generator, manual_seed, tensor
from ..data import toy
from ..errors import ArgumentError, ArgumentTypeError, ShapeError, public
from ..nn import functional as F
from ..render.html import CLASS_COLOURS, SERIES_COLOURS
from . import pictures
from .base import SeriesBuffer, VizgradWidget, float32_bytes, traitlets
from .checks import check_choice, check_count, check_real, check_speed, describe

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "leaky_relu": nn.LeakyReLU,
               "elu": nn.ELU, "gelu": nn.GELU, "silu": nn.SiLU, "linear": nn.Identity}
OPTIMIZERS = {"sgd": (optim.SGD, {}), "momentum": (optim.SGD, {"momentum": 0.9}), "adam": (optim.Adam, {}),
              "rmsprop": (optim.RMSprop, {})}
DATASETS = ("moons", "circles", "spirals", "xor", "blobs")
#: Input features, as functions of the standardised coordinates (x, y), TF Playground's set.
FEATURES = {"x": lambda x, y: x, "y": lambda x, y: y, "x²": lambda x, y: x * x, "y²": lambda x, y: y * y,
            "xy": lambda x, y: x * y, "sin x": lambda x, y: np.sin(x), "sin y": lambda x, y: np.sin(y)}
REGULARIZATIONS = ("L2", "L1")
#: Noise is given relative to each dataset's scale: the spirals' arms lie a third as far
#: apart as the moons, so their noise is a third (0.1 keeps the arms clearly apart).
NOISE_SCALE = {"spirals": 1 / 3}
#: Class colours, vizgrad's one palette (the report's and the lessons' figures': blue,
#: orange, then bluish green), as (r, g, b).
CLASS_PALETTE = CLASS_COLOURS
MAX_LAYERS = 6
MAX_WIDTH = 16
MAX_REQUEST = 500         # steps one front-end request may ask for
#: The steps per request the front end's speed control offers (widgets/src/widgets/playground-widget.js).
SPEEDS = (1, 2, 5, 10, 25)
MIN_SAMPLES = 10          # a dataset smaller than this has no meaningful train/test split
MAX_RESOLUTION = 200      # the grids' points per side: each progress update evaluates r² points per unit
_BLOB_CENTRES = ((-1.0, -0.6), (1.0, -0.6), (0.0, 1.0))


@public("make_dataset")
def make_dataset(name, n_samples=300, noise=0.1, seed=0):
    """``(points, labels)`` as NumPy arrays (float64 (n, 2), int64 (n,)) for a dataset name
    (one of :data:`DATASETS`), ``n_samples`` >= 1 points, ``noise`` >= 0 and a ``seed`` >= 0."""
    name = check_choice("make_dataset", "dataset", name, DATASETS)
    n_samples = check_count("make_dataset", "n_samples", n_samples)
    noise = check_real("make_dataset", "noise", noise, 0)
    seed = check_count("make_dataset", "seed", seed, minimum=0)
    if name == "moons":
        x, y = toy.make_moons(n_samples, noise=noise, seed=seed)
    elif name == "circles":
        x, y = toy.make_circles(n_samples, noise=noise, factor=0.5, seed=seed)
    elif name == "spirals":
        x, y = toy.make_spirals(n_samples, noise=noise * NOISE_SCALE["spirals"], classes=2, seed=seed)
    elif name == "xor":
        x, y = toy.make_xor(n_samples, noise=noise, seed=seed)
    else:
        x, y = toy.make_blobs(n_samples, centers=_BLOB_CENTRES, cluster_std=0.25 + noise, seed=seed)
    return x.numpy().astype(np.float64), y.numpy().astype(np.int64)


def _square_domain(points, margin=0.15):
    """A square [xmin, xmax, ymin, ymax] around the points, with a margin."""
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2
    half = max(float((high - low).max()) / 2, 1e-3) * (1 + margin)
    return [float(centre[0] - half), float(centre[0] + half), float(centre[1] - half), float(centre[1] + half)]


def _names(op, name, value):
    """A sequence argument as a list (a str or a number is not one: ``"xy"`` is not ["x", "y"])."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(f"{op}: {name} must be a list or tuple, got {describe(value)}")
    return list(value)


def _check_features(features, op="PlaygroundTrainer"):
    features = _names(op, "features", features)
    unknown = [name for name in features if not isinstance(name, str) or name not in FEATURES]
    if unknown or not features or len(set(features)) != len(features):
        raise ArgumentError(f"{op}: features must be one or more distinct names of {list(FEATURES)}, got {features}")
    return [name for name in FEATURES if name in features]        # in the canonical order


def _check_hidden(hidden, op="PlaygroundTrainer"):
    hidden = [check_count(op, "hidden", width, maximum=MAX_WIDTH) for width in _names(op, "hidden", hidden)]
    if len(hidden) > MAX_LAYERS:
        raise ArgumentError(f"{op}: hidden must be at most {MAX_LAYERS} layers of 1 to {MAX_WIDTH} units each, "
                            f"got {hidden}")
    return hidden


def _float64(tensor, like=None):
    """A tensor's values as a float64 array (zeros shaped like ``like`` when it is None)."""
    if tensor is None:
        return np.zeros(tuple(like.shape))
    return tensor.detach().numpy().astype(np.float64)


class PlaygroundTrainer:
    """Data, network, optimizer and history of one playground run.

    Args:
        dataset: ``"moons"``, ``"circles"``, ``"spirals"``, ``"xor"`` or ``"blobs"`` (3 classes).
        noise: the dataset's noise (Gaussian standard deviation; blobs add it to their spread).
        hidden: widths of the hidden layers (at most 6 layers of at most 16 units).
        activation: a key of :data:`ACTIVATIONS`.
        learning_rate: the optimizer's rate.
        weight_decay, regularization: the regularisation rate and kind on the weights (not the
            biases): ``"L2"`` (the optimizer's weight decay, i.e. rate/2·Σw² added to the loss)
            or ``"L1"`` (rate·Σ|w| added to the loss).
        features: the network's inputs, names from :data:`FEATURES` (``"x"``, ``"y"``, ``"x²"``,
            ``"y²"``, ``"xy"``, ``"sin x"``, ``"sin y"``) of the standardised coordinates.
        batch_size: examples per step (the whole training set when larger).
        optimizer: ``"sgd"``, ``"momentum"``, ``"adam"`` or ``"rmsprop"``.
        n_samples, test_fraction: dataset size and the share held out for the test loss.
        seed: data, split, initial weights and batches all follow from it.
        resolution: the boundary and unit grids' points per side.
    """

    @public("PlaygroundTrainer")
    def __init__(self, dataset="moons", noise=0.1, hidden=(8, 8), activation="tanh", learning_rate=0.03,
                 weight_decay=0.0, batch_size=32, optimizer="adam", n_samples=300, test_fraction=0.3, seed=0,
                 resolution=40, features=("x", "y"), regularization="L2"):
        op = "PlaygroundTrainer"
        self.dataset = check_choice(op, "dataset", dataset, DATASETS)
        self.features = _check_features(features)
        self.regularization = check_choice(op, "regularization", regularization, REGULARIZATIONS)
        self.noise = check_real(op, "noise", noise, 0)
        self.hidden = _check_hidden(hidden)
        self.activation = check_choice(op, "activation", activation, list(ACTIVATIONS))
        self.learning_rate = check_real(op, "learning_rate", learning_rate, 0)
        self.weight_decay = check_real(op, "weight_decay", weight_decay, 0)
        self.batch_size = check_count(op, "batch_size", batch_size)
        self.optimizer_name = check_choice(op, "optimizer", optimizer, list(OPTIMIZERS))
        self.n_samples = check_count(op, "n_samples", n_samples, minimum=MIN_SAMPLES)
        self.test_fraction = check_real(op, "test_fraction", test_fraction, 0, 1, low_open=True, high_open=True)
        self.seed = check_count(op, "seed", seed, minimum=0)
        self.resolution = check_count(op, "resolution", resolution, minimum=2, maximum=MAX_RESOLUTION)
        test_count = self._test_count()
        if not 1 <= test_count < self.n_samples:
            raise ArgumentError(f"{op}: test_fraction {self.test_fraction!r} of {self.n_samples} samples leaves "
                                f"{self.n_samples - test_count} for training and {test_count} for the test")
        self.reset()

    def _test_count(self):
        return max(1, int(round(self.n_samples * self.test_fraction)))

    # --- building --------------------------------------------------------------------------
    def reset(self):
        """New data (from the dataset, noise and seed), a freshly initialised network, empty history."""
        points, labels = make_dataset(self.dataset, self.n_samples, self.noise, self.seed)
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(len(points))
        test_count = self._test_count()
        self.is_test = np.zeros(len(points), dtype=bool)
        self.is_test[order[:test_count]] = True
        self.points, self.labels = points, labels
        self.classes = int(labels.max()) + 1
        self.domain = _square_domain(points)
        train = points[~self.is_test]
        self.mean, self.std = train.mean(axis=0), train.std(axis=0) + 1e-8
        self.x_train = tensor(self._inputs(train), dtype="float32")
        self.y_train = tensor(labels[~self.is_test])
        self.x_test = tensor(self._inputs(points[self.is_test]), dtype="float32")
        self.y_test = tensor(labels[self.is_test])
        self._rng = np.random.default_rng(self.seed + 1)
        self._order = np.zeros(0, dtype=np.int64)
        self.rebuild()

    def rebuild(self):
        """A freshly initialised network and optimizer on the same data; history cleared."""
        saved = default_generator.get_state()
        try:
            manual_seed(self.seed)
            self.model = nn.MLP([len(self.features), *self.hidden, self.classes],
                                activation=ACTIVATIONS[self.activation])
        finally:
            default_generator.set_state(saved)
        self.optimizer = self._make_optimizer()
        self.step_count = 0
        self.examples_seen = 0
        self.loss_history = {"step": [], "train": [], "test": []}
        self._record()

    def _make_optimizer(self):
        cls, extra = OPTIMIZERS[self.optimizer_name]
        weights = [p for name, p in self.model.named_parameters() if name.endswith("weight")]
        biases = [p for name, p in self.model.named_parameters() if not name.endswith("weight")]
        groups = [{"params": weights, "weight_decay": self.weight_decay if self.regularization == "L2" else 0.0}]
        if biases:
            groups.append({"params": biases, "weight_decay": 0.0})
        return cls(groups, lr=self.learning_rate, **extra)

    @public("PlaygroundTrainer.set_hyperparameters")
    def set_hyperparameters(self, learning_rate=None, weight_decay=None, batch_size=None, regularization=None):
        """Change the rate, the regularisation rate or kind, or the batch size from the next step on
        (None keeps one; rates are finite and >= 0, ``batch_size`` an int >= 1)."""
        op = "PlaygroundTrainer.set_hyperparameters"
        rate = self.learning_rate if learning_rate is None else check_real(op, "learning_rate", learning_rate, 0)
        decay = self.weight_decay if weight_decay is None else check_real(op, "weight_decay", weight_decay, 0)
        batch = self.batch_size if batch_size is None else check_count(op, "batch_size", batch_size)
        kind = (self.regularization if regularization is None else
                check_choice(op, "regularization", regularization, REGULARIZATIONS))
        self.learning_rate, self.weight_decay, self.batch_size, self.regularization = rate, decay, batch, kind
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        self.optimizer.param_groups[0]["weight_decay"] = decay if kind == "L2" else 0.0

    def _standardise(self, points):
        return (np.asarray(points, dtype=np.float64) - self.mean) / self.std

    def _inputs(self, points):
        """The network's inputs at ``points`` (data coordinates): the chosen features of the
        standardised coordinates, shape (n, features)."""
        standard = self._standardise(points)
        x, y = standard[:, 0], standard[:, 1]
        return np.stack([FEATURES[name](x, y) for name in self.features], axis=1)

    def penalty(self):
        """The L1 term added to the loss (rate·Σ|w| over the weights), or None for L2 (which the
        optimizer applies as weight decay)."""
        if self.regularization != "L1" or not self.weight_decay:
            return None
        weights = [p for name, p in self.model.named_parameters() if name.endswith("weight")]
        total = weights[0].abs().sum()
        for weight in weights[1:]:
            total = total + weight.abs().sum()
        return self.weight_decay * total

    # --- training ----------------------------------------------------------------------------
    def _batch(self):
        count = self.x_train.shape[0]
        size = min(self.batch_size, count)
        if len(self._order) < size:
            self._order = np.concatenate([self._order, self._rng.permutation(count)])
        indices, self._order = self._order[:size], self._order[size:]
        return indices

    @public("PlaygroundTrainer.step")
    def step(self, n=1):
        """``n`` (an int >= 1) optimizer steps on minibatches (epochs reshuffle). Returns the last batch loss."""
        loss = None
        for _ in range(check_count("PlaygroundTrainer.step", "n", n)):
            indices = tensor(self._batch())
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(self.x_train[indices]), self.y_train[indices])
            penalty = self.penalty()
            (loss if penalty is None else loss + penalty).backward()
            self.optimizer.step()
            self.step_count += 1
            self.examples_seen += int(indices.shape[0])
            self._record()
        return None if loss is None else float(loss.item())

    def _record(self):
        with no_grad():
            train = float(F.cross_entropy(self.model(self.x_train), self.y_train).item())
            test = float(F.cross_entropy(self.model(self.x_test), self.y_test).item())
        self.loss_history["step"].append(self.step_count)
        self.loss_history["train"].append(train)
        self.loss_history["test"].append(test)

    @property
    def epoch(self):
        """Passes over the training set so far (fractional)."""
        return self.examples_seen / self.x_train.shape[0]

    @public("PlaygroundTrainer.accuracy")
    def accuracy(self, split="test"):
        """The share of ``"test"`` (or ``"train"``) points whose predicted class is right."""
        check_choice("PlaygroundTrainer.accuracy", "split", split, ("test", "train"))
        x, y = (self.x_test, self.y_test) if split == "test" else (self.x_train, self.y_train)
        with no_grad():
            predicted = self.model(x).numpy().argmax(axis=1)
        return float((predicted == y.numpy()).mean())

    @public("PlaygroundTrainer.predict_proba")
    def predict_proba(self, points):
        """Class probabilities (n, classes) for ``points`` in data coordinates (an (n, 2) array of numbers)."""
        op = "PlaygroundTrainer.predict_proba"
        try:
            array = np.asarray(points.detach().numpy() if hasattr(points, "detach") else points, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{op}: points must be an (n, 2) array of numbers, "
                                    f"got {describe(points)}") from None
        if array.ndim != 2 or array.shape[1] != 2:
            raise ShapeError(f"{op}: points must have shape (n, 2), got shape {tuple(array.shape)}")
        points = array
        with no_grad():
            logits = self.model(tensor(self._inputs(points), dtype="float32"))
            return F.softmax(logits, dim=1).numpy().astype(np.float64)

    # --- what the front end draws ------------------------------------------------------------
    def grid_points(self):
        """The boundary grid's points, row-major with row 0 at ymin: (resolution², 2)."""
        x0, x1, y0, y1 = self.domain
        xs = np.linspace(x0, x1, self.resolution)
        ys = np.linspace(y0, y1, self.resolution)
        grid_x, grid_y = np.meshgrid(xs, ys)
        return np.stack([grid_x.ravel(), grid_y.ravel()], axis=1)

    def responses(self):
        """One forward pass of the grid: the class probabilities, shape (classes, r, r), and
        every hidden unit's activation, shape (units, r, r), layer after layer."""
        r = self.resolution
        hidden = []
        with no_grad():
            value = tensor(self._inputs(self.grid_points()), dtype="float32")
            layers = list(self.model.children())
            for position, layer in enumerate(layers):
                value = layer(value)
                following = layers[position + 1] if position + 1 < len(layers) else None
                if not isinstance(layer, nn.Linear) and isinstance(following, nn.Linear):
                    hidden.append(value.numpy().T.reshape(-1, r, r))
            probabilities = F.softmax(value, dim=1).numpy().T.reshape(self.classes, r, r)
        units = np.concatenate(hidden) if hidden else np.zeros((0, r, r))
        return probabilities, units

    def feature_maps(self):
        """Each input feature over the grid: shape (features, r, r)."""
        r = self.resolution
        return self._inputs(self.grid_points()).T.reshape(len(self.features), r, r)

    def network(self):
        """The network as the diagram draws it: ``sizes`` (inputs, hidden widths, classes) and,
        layer after layer, each Linear's weights (out, in), biases and the gradients of the
        last step (zeros before the first), all float64 arrays."""
        layers = [{"weight": _float64(layer.weight), "bias": _float64(layer.bias),
                   "weight_grad": _float64(layer.weight.grad, like=layer.weight),
                   "bias_grad": _float64(layer.bias.grad, like=layer.bias)}
                  for layer in self.model.children() if isinstance(layer, nn.Linear)]
        return {"sizes": [len(self.features), *self.hidden, self.classes], "layers": layers}

    def metrics(self):
        history = self.loss_history
        return {"step": self.step_count, "epoch": round(self.epoch, 3), "train_loss": history["train"][-1],
                "test_loss": history["test"][-1], "train_accuracy": self.accuracy("train"),
                "test_accuracy": self.accuracy("test")}


class Playground(VizgradWidget):
    """A neural-network playground, live in a notebook, on vizgrad's engine.

    Choose a dataset and its noise, the network's hidden layers, activation, optimizer,
    learning rate, L2 weight decay and batch size; Train, Pause, Step. The decision
    boundary (class probabilities on a grid) and every hidden unit's response (its
    activation on the same grid) are sent as float32 buffers and drawn on canvases, with
    the train and test loss curves; updates are throttled to 20 a second.

    Training runs where it is asked for: Train in the front end sends one step request
    per animation frame (after the previous one was answered); :meth:`train` and
    :meth:`step` step from Python; :meth:`start` trains in a background thread until
    :meth:`stop` (or ``close()``).

    Arguments: as :class:`PlaygroundTrainer`, plus ``speed`` (steps per front-end request, one
    of :data:`SPEEDS`); ``resolution`` is fixed once made. A wrong argument raises a
    :mod:`vizgrad.errors` exception naming it, before any comm opens.
    """

    _bundle = "playground-widget"

    dataset = traitlets.Unicode("moons").tag(sync=True)
    noise = traitlets.Float(0.1).tag(sync=True)
    hidden = traitlets.List(traitlets.Int()).tag(sync=True)
    activation = traitlets.Unicode("tanh").tag(sync=True)
    optimizer = traitlets.Unicode("adam").tag(sync=True)
    learning_rate = traitlets.Float(0.03).tag(sync=True)
    weight_decay = traitlets.Float(0.0).tag(sync=True)
    regularization = traitlets.Unicode("L2").tag(sync=True)
    features = traitlets.List(traitlets.Unicode()).tag(sync=True)
    batch_size = traitlets.Int(32).tag(sync=True)
    seed = traitlets.Int(0).tag(sync=True)
    options = traitlets.Dict().tag(sync=True)

    points = traitlets.Bytes(b"").tag(sync=True)
    labels = traitlets.Bytes(b"").tag(sync=True)
    is_test = traitlets.Bytes(b"").tag(sync=True)
    classes = traitlets.Int(2).tag(sync=True)
    domain = traitlets.List([0.0, 1.0, 0.0, 1.0]).tag(sync=True)
    resolution = traitlets.Int(40).tag(sync=True)
    boundary = traitlets.Bytes(b"").tag(sync=True)
    units = traitlets.Bytes(b"").tag(sync=True)
    unit_layers = traitlets.List().tag(sync=True)
    feature_maps = traitlets.Bytes(b"").tag(sync=True)
    layer_sizes = traitlets.List().tag(sync=True)
    weights = traitlets.Bytes(b"").tag(sync=True)
    weight_grads = traitlets.Bytes(b"").tag(sync=True)
    biases = traitlets.Bytes(b"").tag(sync=True)
    losses = traitlets.Dict().tag(sync=True)
    metrics = traitlets.Dict().tag(sync=True)
    step_count = traitlets.Int(0).tag(sync=True)
    playing = traitlets.Bool(False).tag(sync=True)
    speed = traitlets.Int(1).tag(sync=True)

    _REBUILD = ("dataset", "noise", "hidden", "activation", "optimizer", "seed", "features")
    _LIVE = ("learning_rate", "weight_decay", "batch_size", "regularization")

    @public("Playground")
    def __init__(self, dataset="moons", noise=0.1, hidden=(8, 8), activation="tanh", learning_rate=0.03,
                 weight_decay=0.0, batch_size=32, optimizer="adam", n_samples=300, test_fraction=0.3, seed=0,
                 resolution=40, speed=1, features=("x", "y"), regularization="L2"):
        speed = check_speed("Playground", speed, SPEEDS)
        self.trainer = PlaygroundTrainer(dataset, noise, hidden, activation, learning_rate, weight_decay, batch_size,
                                         optimizer, n_samples, test_fraction, seed, resolution, features,
                                         regularization)
        trainer = self.trainer
        self._local = threading.local()     # .applying: this thread is setting traits itself
        self._thread = None
        self._stop_flag = threading.Event()
        self._series = SeriesBuffer(2)
        super().__init__(dataset=trainer.dataset, noise=trainer.noise, hidden=list(trainer.hidden),
                         activation=trainer.activation, optimizer=trainer.optimizer_name,
                         learning_rate=trainer.learning_rate, weight_decay=trainer.weight_decay,
                         batch_size=trainer.batch_size, seed=trainer.seed, resolution=trainer.resolution, speed=speed,
                         features=list(trainer.features), regularization=trainer.regularization,
                         options={"datasets": list(DATASETS), "activations": list(ACTIVATIONS),
                                  "optimizers": list(OPTIMIZERS), "max_layers": MAX_LAYERS, "max_width": MAX_WIDTH,
                                  "features": list(FEATURES), "regularizations": list(REGULARIZATIONS)})
        self._updates = self._coalescer()
        self._lock = self._updates.lock
        self._refill_series()
        self._send_data()
        self._send_progress()
        self.observe(self._on_rebuild, list(self._REBUILD))
        self.observe(self._on_live, list(self._LIVE))
        self.observe(self._on_playing, "playing")
        self.on_msg(self._on_message)

    @traitlets.validate("speed")
    def _valid_speed(self, proposal):
        return check_speed("Playground.speed", proposal["value"], SPEEDS)

    @traitlets.validate("resolution")
    def _fixed_resolution(self, proposal):
        if proposal["value"] != self.trainer.resolution:
            raise ArgumentError(f"Playground.resolution: the grids' resolution is fixed when the Playground is made "
                                f"({self.trainer.resolution}); make a new Playground(resolution={proposal['value']!r})")
        return proposal["value"]

    # --- Python API -----------------------------------------------------------------------
    @public("Playground.step")
    def step(self, n=1):
        """``n`` (an int >= 1) training steps; the view follows (throttled). Returns the last batch loss."""
        loss = None
        for _ in range(check_count("Playground.step", "n", n)):
            with self._lock:
                loss = self.trainer.step(1)
                self._series.append(self.trainer.step_count, [self.trainer.loss_history["train"][-1],
                                                              self.trainer.loss_history["test"][-1]])
            self._updates.request(self._send_progress, "progress")
        return loss

    @public("Playground.train")
    def train(self, steps=100):
        """Train for ``steps`` (an int >= 1) steps here and now (blocking); returns the final test loss."""
        self.step(check_count("Playground.train", "steps", steps))
        return self.trainer.loss_history["test"][-1]

    def start(self, steps=None):
        """Train in a background thread, for ``steps`` steps (an int >= 1) or until :meth:`stop`."""
        steps = check_count("Playground.start", "steps", steps, allow_none=True)
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop_flag.clear()
        self._thread = threading.Thread(target=self._run, args=(steps,), name="vizgrad-playground", daemon=True)
        self._thread.start()
        self.playing = True

    def stop(self, timeout=5.0):
        """Stop the background thread (and the front end's Train) and wait for it, ``timeout``
        seconds at most (None: as long as it takes). Safe on a widget whose constructor failed."""
        timeout = None if timeout is None else check_real("Playground.stop", "timeout", timeout, 0)
        if not hasattr(self, "_stop_flag"):         # the constructor failed before the thread's state
            return
        self._stop_flag.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None
        if getattr(self, "comm", None) is not None:
            self._apply(playing=False)

    @property
    def running(self):
        """Whether the background thread is training."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self, steps):
        taken = 0
        while not self._stop_flag.is_set() and (steps is None or taken < steps):
            self.step(1)
            taken += 1
        if not self._stop_flag.is_set() and getattr(self, "comm", None) is not None:
            self._apply(playing=False)

    def reset(self):
        """Fresh weights and history (same data)."""
        with self._lock:
            self.trainer.rebuild()
            self._refill_series()
        self._updates.request(self._send_progress, "progress")

    @property
    def loss_history(self):
        """``{"step": [...], "train": [...], "test": [...]}``: full-set losses after each step (step 0 first)."""
        return self.trainer.loss_history

    @public("Playground.accuracy")
    def accuracy(self, split="test"):
        """The share of the ``"test"`` (or ``"train"``) points classified right."""
        with self._lock:
            return self.trainer.accuracy(split)

    @property
    def model(self):
        """The network being trained (a :class:`vizgrad.nn.MLP`)."""
        return self.trainer.model

    def close(self):
        self.stop()
        super().close()

    # --- traits and messages ---------------------------------------------------------------------
    def _applying_here(self):
        """Whether the trait change being observed comes from :meth:`_apply` in this thread
        (thread-local: a delivery in a timer thread must not hide a front-end change)."""
        return getattr(self._local, "applying", False)

    def _apply(self, **traits):
        self._local.applying = True
        try:
            with self.hold_sync():
                for name, value in traits.items():
                    setattr(self, name, value)
        finally:
            self._local.applying = False

    def _refill_series(self):
        self._series = SeriesBuffer(2)
        history = self.trainer.loss_history
        for step, train, test in zip(history["step"], history["train"], history["test"]):
            self._series.append(step, [train, test])

    def _send_data(self):
        with self._lock:
            trainer = self.trainer
            traits = {"points": float32_bytes(trainer.points), "labels": trainer.labels.astype(np.uint8).tobytes(),
                      "is_test": trainer.is_test.astype(np.uint8).tobytes(), "classes": trainer.classes,
                      "domain": trainer.domain, "feature_maps": float32_bytes(trainer.feature_maps())}
        self._apply(**traits)

    def _send_progress(self):
        with self._lock:
            probabilities, units = self.trainer.responses()
            network = self.trainer.network()
            layers = network["layers"]

            def packed(key):
                return float32_bytes(np.concatenate([layer[key].ravel() for layer in layers]))
            traits = {"boundary": float32_bytes(probabilities), "units": float32_bytes(units),
                      "layer_sizes": network["sizes"], "weights": packed("weight"),
                      "weight_grads": packed("weight_grad"), "biases": packed("bias"),
                      "unit_layers": list(self.trainer.hidden), "losses": self._series.payload(),
                      "metrics": self.trainer.metrics(), "step_count": self.trainer.step_count}
        self._apply(**traits)

    def _on_rebuild(self, change):
        if self._applying_here():
            return
        with self._lock:
            trainer = self.trainer
            previous = {name: getattr(trainer, name) for name in
                        ("dataset", "noise", "hidden", "activation", "optimizer_name", "seed", "features")}
            try:
                trainer.dataset = check_choice("Playground", "dataset", self.dataset, DATASETS)
                trainer.noise = check_real("Playground", "noise", self.noise, 0)
                trainer.hidden = _check_hidden(self.hidden, "Playground")
                trainer.features = _check_features(self.features, "Playground")
                trainer.activation = check_choice("Playground", "activation", self.activation, list(ACTIVATIONS))
                trainer.optimizer_name = check_choice("Playground", "optimizer", self.optimizer, list(OPTIMIZERS))
                trainer.seed = check_count("Playground", "seed", self.seed, minimum=0)
                trainer.reset()
            except (TypeError, ValueError) as error:
                for name, value in previous.items():
                    setattr(trainer, name, value)
                warnings.warn(f"Playground: {error}; nothing changed", RuntimeWarning, stacklevel=2)
            self._refill_series()
            self._apply(dataset=trainer.dataset, noise=trainer.noise, hidden=list(trainer.hidden),
                        activation=trainer.activation, optimizer=trainer.optimizer_name, seed=trainer.seed,
                        features=list(trainer.features))
            self._send_data()
        self._updates.request(self._send_progress, "progress")

    def _on_playing(self, change):
        if not change["new"] and not self._applying_here() and self.running:
            self._stop_flag.set()

    def _on_live(self, change):
        if self._applying_here():
            return
        with self._lock:
            trainer = self.trainer
            try:
                trainer.set_hyperparameters(**{change["name"]: change["new"]})
            except (TypeError, ValueError) as error:
                warnings.warn(f"Playground: {error}; nothing changed", RuntimeWarning, stacklevel=2)
                self._apply(**{change["name"]: change["old"]})

    def _on_message(self, _widget, content, _buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "step":
            if not self.running:
                self.step(max(1, min(int(content.get("n", 1)), MAX_REQUEST)))
            self.send({"type": "stepped", "id": content.get("id"), "step": self.trainer.step_count})
        elif kind == "reset":
            self.stop()
            self.reset()
        elif kind == "stop":
            self.stop()

    # --- static picture -------------------------------------------------------------------------
    def _fallback_text(self):
        m = self.trainer.metrics()
        return (f"Playground: {self.trainer.dataset}, hidden {self.trainer.hidden}, {self.trainer.activation}; "
                f"step {m['step']}, train loss {m['train_loss']:.4g}, test loss {m['test_loss']:.4g}, "
                f"test accuracy {m['test_accuracy']:.1%}")

    def _fallback_svg(self):
        with self._lock:                    # not while a training thread steps
            return playground_svg(self.trainer)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


NODE_PIXELS = 20          # the static picture's unit maps: pixels per side, at most


def boundary_pixels(probabilities, colours=CLASS_PALETTE):
    """The decision boundary as the live view paints it (widgets/src/widgets/playground-core.js'
    boundaryImage): the class colours mixed by probability, fading to white where the network
    is unsure; ``probabilities`` (classes, r, r) with row 0 at ymin, the image's row 0 at the top."""
    classes = len(probabilities)
    palette = np.array([colours[k % len(colours)] for k in range(classes)], dtype=np.float64)
    mixed = np.tensordot(np.moveaxis(probabilities, 0, -1), palette, axes=1)
    best = probabilities.max(axis=0)
    uniform = 1 / classes
    certainty = np.maximum(0, (best - uniform) / (1 - uniform)) if classes > 1 else np.ones_like(best)
    strength = (0.15 + 0.6 * certainty)[..., None]
    return np.rint(255 * (1 - strength) + mixed * strength)[::-1].astype(np.uint8)


def _node_map(values, stride):
    """A unit's response (r, r), row 0 at ymin, as the diagram's small map (row 0 at the top)."""
    return pictures.diverging_pixels(values[::-1][::stride, ::stride])


def playground_svg(trainer):
    """The playground as one static SVG: the network diagram (input features, hidden units and
    classes as small maps over the data's square; an edge per weight, blue positive, orange
    negative, as thick as its size) beside the decision boundary with the data (train points
    edged white, test points dark), the train and test loss under them."""
    probabilities, units = trainer.responses()
    network = trainer.network()
    sizes = network["sizes"]
    m = trainer.metrics()
    heading = (f"Playground: {trainer.dataset}, hidden {list(trainer.hidden)}, {trainer.activation}, "
               f"step {m['step']}")
    node, column_gap, row_gap, top, left = 36, 96, 44, 62, 52
    diagram_width = left + (len(sizes) - 1) * column_gap + node + 16
    diagram_bottom = top + (max(sizes) - 1) * row_gap + node
    size, stride = 240, max(1, trainer.resolution // NODE_PIXELS)
    maps = [[(_node_map(array, stride), f"feature {name}") for array, name in zip(trainer.feature_maps(),
                                                                                   trainer.features)]]
    offset = 0
    for layer, width in enumerate(trainer.hidden):
        maps.append([(_node_map(units[offset + k], stride), f"layer {layer + 1}, unit {k}") for k in range(width)])
        offset += width
    maps.append([(np.rint(255 - (255 - np.array(CLASS_PALETTE[k % len(CLASS_PALETTE)], dtype=np.float64))
                          * np.clip(probabilities[k], 0, 1)[::-1][::stride, ::stride][..., None]).astype(np.uint8),
                  f"class {k}: its probability over the plane") for k in range(trainer.classes)])
    position = [[(left + c * column_gap, top + j * row_gap) for j in range(count)] for c, count in enumerate(sizes)]
    parts = [pictures.heading(10, 20, heading)]
    titles = ["features", *[f"layer {k + 1}" for k in range(len(trainer.hidden))], "classes"]
    for c, title in enumerate(titles):
        parts.append(pictures.text(left + c * column_gap + node / 2, top - 12, title, anchor="middle"))
    largest = max((float(np.abs(layer["weight"]).max()) for layer in network["layers"]), default=0.0) or 1.0
    from ..lessons.figures import DIVERGING
    for c, layer in enumerate(network["layers"]):
        for (to, source), weight in np.ndenumerate(layer["weight"]):
            share = min(1.0, abs(float(weight)) / largest)
            colour = "rgb({},{},{})".format(*DIVERGING[0 if weight < 0 else -1])
            (x1, y1), (x2, y2) = position[c][source], position[c + 1][to]
            parts.append(f"<line class='edge' data-layer='{c}' data-from='{source}' data-to='{to}' "
                         f"x1='{x1 + node}' y1='{y1 + node / 2}' x2='{x2}' y2='{y2 + node / 2}' stroke='{colour}' "
                         f"stroke-width='{0.75 + 5.25 * share:.2f}' stroke-opacity='{0.3 + 0.7 * share:.2f}'>"
                         f"<title>weight {weight:.3g}</title></line>")
    for c, column in enumerate(maps):
        for j, (pixels, hover) in enumerate(column):
            x, y = position[c][j]
            parts.append(pictures.image(x, y, node, node, pixels, hover, crisp=False, extra="class='node'")
                         + f"<rect x='{x}' y='{y}' width='{node}' height='{node}' fill='none' "
                           f"stroke='{pictures.AXIS}'/>")
    for j, name in enumerate(trainer.features):
        x, y = position[0][j]
        parts.append(pictures.text(x - 4, y + node / 2 + 4, name, anchor="end"))
    right = diagram_width + 8
    parts.append(pictures.text(right, top - 12, "decision boundary"))
    parts.append(f"<g transform='translate({right},{top - 4})'>")
    parts.append(pictures.image(0, 0, size, size, boundary_pixels(probabilities), crisp=False,
                                hover=f"the predicted class over the plane, step {m['step']}")
                 + f"<rect width='{size}' height='{size}' fill='none' stroke='{pictures.AXIS}'/>")
    x0, x1, y0, y1 = trainer.domain
    for test in (False, True):
        for k in range(trainer.classes):
            chosen = (trainer.labels == k) & (trainer.is_test == test)
            red, green, blue = CLASS_PALETTE[k % len(CLASS_PALETTE)]
            parts.append(f"<g fill='rgb({red},{green},{blue})' stroke='{pictures.TEXT if test else '#ffffff'}'>"
                         + "".join(f"<circle cx='{(px - x0) / (x1 - x0) * size:.1f}' "
                                   f"cy='{size - (py - y0) / (y1 - y0) * size:.1f}' r='3.2'/>"
                                   for px, py in trainer.points[chosen].tolist())
                         + f"<title>{'test' if test else 'train'} points of class {k}</title></g>")
    parts.append("</g>")
    summary_y = top - 4 + size + 18
    parts.append(pictures.text(right, summary_y, f"train loss {m['train_loss']:.4g}, test loss {m['test_loss']:.4g}"))
    parts.append(pictures.text(right, summary_y + 16, f"test accuracy {m['test_accuracy']:.1%}, "
                                                      f"epoch {m['epoch']:.3g}"))
    if not m["step"]:
        summary_y += 16
        parts.append(pictures.text(right, summary_y + 16, "not trained yet: press Train, or call pg.train(100)",
                                   pictures.SMALL, fill=pictures.MUTED))
    width = right + size + 12
    chart_top = max(diagram_bottom, summary_y + 16) + 16
    history = trainer.loss_history
    steps = np.asarray(history["step"], dtype=np.float64)
    chart, used = pictures.line_chart(10, chart_top, min(width - 20, 640), 170,
                                      [pictures.Line("train", steps, history["train"], pictures.TEXT),
                                       pictures.Line("test", steps, history["test"], SERIES_COLOURS[2])],
                                      "loss (cross-entropy)", y_label="loss")
    parts.append(chart)
    footer_y = chart_top + used + 14
    parts.append(pictures.text(10, footer_y, "edges: blue positive, orange negative, thicker is larger; "
                                             "points: white edge train, dark edge test", pictures.SMALL,
                               fill=pictures.MUTED))
    return pictures.document(width, footer_y + 10, "".join(parts), heading)


__all__ = ["ACTIVATIONS", "DATASETS", "FEATURES", "OPTIMIZERS", "REGULARIZATIONS", "Playground", "PlaygroundTrainer", "make_dataset"]
