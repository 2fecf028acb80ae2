"""A neural-network playground on vizgrad's engine: a small MLP learns a 2-D toy dataset
while the decision boundary, every hidden unit's response and the loss curves update live.

:class:`PlaygroundTrainer` is the logic, plain Python; :class:`Playground` is the widget::

    from vizgrad.widgets import Playground
    pg = Playground(dataset="spirals", hidden=(8, 8), activation="tanh", features=("x", "y", "sin x", "sin y"))
    pg                        # the network as a diagram; Train / Pause / Step in the notebook
    pg.train(200)             # or from Python (the view follows, throttled)
    pg.loss_history["test"][-1], pg.accuracy()
"""

import html
import threading
import warnings

import numpy as np

from .. import nn, optim
from ..autograd.grad_mode import no_grad
from ..creation import default_generator, manual_seed, tensor
from ..data import toy
from ..nn import functional as F
from ..render.html import CLASS_COLOURS
from .base import SeriesBuffer, VizgradWidget, float32_bytes, traitlets

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
_BLOB_CENTRES = ((-1.0, -0.6), (1.0, -0.6), (0.0, 1.0))


def make_dataset(name, n_samples=300, noise=0.1, seed=0):
    """``(points, labels)`` as NumPy arrays (float64 (n, 2), int64 (n,)) for a dataset name."""
    if name == "moons":
        x, y = toy.make_moons(n_samples, noise=noise, seed=seed)
    elif name == "circles":
        x, y = toy.make_circles(n_samples, noise=noise, factor=0.5, seed=seed)
    elif name == "spirals":
        x, y = toy.make_spirals(n_samples, noise=noise * NOISE_SCALE["spirals"], classes=2, seed=seed)
    elif name == "xor":
        x, y = toy.make_xor(n_samples, noise=noise, seed=seed)
    elif name == "blobs":
        x, y = toy.make_blobs(n_samples, centers=_BLOB_CENTRES, cluster_std=0.25 + noise, seed=seed)
    else:
        raise ValueError(f"unknown dataset {name!r}; the datasets are {list(DATASETS)}")
    return x.numpy().astype(np.float64), y.numpy().astype(np.int64)


def _square_domain(points, margin=0.15):
    """A square [xmin, xmax, ymin, ymax] around the points, with a margin."""
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2
    half = max(float((high - low).max()) / 2, 1e-3) * (1 + margin)
    return [float(centre[0] - half), float(centre[0] + half), float(centre[1] - half), float(centre[1] + half)]


def _check_features(features):
    features = [str(name) for name in features]
    unknown = [name for name in features if name not in FEATURES]
    if unknown or not features or len(set(features)) != len(features):
        raise ValueError(f"features: one or more distinct names of {list(FEATURES)}, got {features}")
    return [name for name in FEATURES if name in features]        # in the canonical order


def _check_hidden(hidden):
    hidden = [int(width) for width in hidden]
    if len(hidden) > MAX_LAYERS or any(not 1 <= width <= MAX_WIDTH for width in hidden):
        raise ValueError(f"hidden: at most {MAX_LAYERS} layers of 1 to {MAX_WIDTH} units each, got {hidden}")
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

    def __init__(self, dataset="moons", noise=0.1, hidden=(8, 8), activation="tanh", learning_rate=0.03,
                 weight_decay=0.0, batch_size=32, optimizer="adam", n_samples=300, test_fraction=0.3, seed=0,
                 resolution=40, features=("x", "y"), regularization="L2"):
        self.dataset = dataset
        self.features = _check_features(features)
        self.regularization = regularization
        self.noise = float(noise)
        self.hidden = _check_hidden(hidden)
        self.activation = activation
        self.learning_rate = float(learning_rate)
        self.weight_decay = float(weight_decay)
        self.batch_size = int(batch_size)
        self.optimizer_name = optimizer
        self.n_samples = int(n_samples)
        self.test_fraction = float(test_fraction)
        self.seed = int(seed)
        self.resolution = int(resolution)
        self._check()
        self.reset()

    def _check(self):
        if self.dataset not in DATASETS:
            raise ValueError(f"unknown dataset {self.dataset!r}; the datasets are {list(DATASETS)}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.activation!r}; the activations are {sorted(ACTIVATIONS)}")
        if self.optimizer_name not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer_name!r}; the optimizers are {sorted(OPTIMIZERS)}")
        if not 0 < self.test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {self.test_fraction}")
        if self.regularization not in REGULARIZATIONS:
            raise ValueError(f"regularization must be one of {list(REGULARIZATIONS)}, got {self.regularization!r}")
        if self.batch_size < 1 or self.learning_rate < 0 or self.weight_decay < 0 or self.noise < 0:
            raise ValueError("batch_size must be positive; learning_rate, weight_decay and noise non-negative")

    # --- building --------------------------------------------------------------------------
    def reset(self):
        """New data (from the dataset, noise and seed), a freshly initialised network, empty history."""
        self._check()
        points, labels = make_dataset(self.dataset, self.n_samples, self.noise, self.seed)
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(len(points))
        test_count = max(1, int(round(len(points) * self.test_fraction)))
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

    def set_hyperparameters(self, learning_rate=None, weight_decay=None, batch_size=None, regularization=None):
        """Change the rate, the regularisation rate or kind, or the batch size from the next step on."""
        rate = self.learning_rate if learning_rate is None else float(learning_rate)
        decay = self.weight_decay if weight_decay is None else float(weight_decay)
        batch = self.batch_size if batch_size is None else int(batch_size)
        kind = self.regularization if regularization is None else regularization
        if not (rate >= 0 and decay >= 0 and batch >= 1):
            raise ValueError(f"learning_rate and weight_decay must be >= 0 and batch_size >= 1, got "
                             f"{rate}, {decay} and {batch}")
        if kind not in REGULARIZATIONS:
            raise ValueError(f"regularization must be one of {list(REGULARIZATIONS)}, got {kind!r}")
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

    def step(self, n=1):
        """``n`` optimizer steps on minibatches (epochs reshuffle). Returns the last batch loss."""
        loss = None
        for _ in range(int(n)):
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

    def accuracy(self, split="test"):
        """The share of ``"test"`` (or ``"train"``) points whose predicted class is right."""
        if split not in ("test", "train"):
            raise ValueError(f"split must be 'test' or 'train', got {split!r}")
        x, y = (self.x_test, self.y_test) if split == "test" else (self.x_train, self.y_train)
        with no_grad():
            predicted = self.model(x).numpy().argmax(axis=1)
        return float((predicted == y.numpy()).mean())

    def predict_proba(self, points):
        """Class probabilities (n, classes) for points in data coordinates."""
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

    Arguments: as :class:`PlaygroundTrainer`, plus ``speed`` (steps per front-end request).
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

    def __init__(self, dataset="moons", noise=0.1, hidden=(8, 8), activation="tanh", learning_rate=0.03,
                 weight_decay=0.0, batch_size=32, optimizer="adam", n_samples=300, test_fraction=0.3, seed=0,
                 resolution=40, speed=1, features=("x", "y"), regularization="L2"):
        self.trainer = PlaygroundTrainer(dataset, noise, hidden, activation, learning_rate, weight_decay, batch_size,
                                         optimizer, n_samples, test_fraction, seed, resolution, features,
                                         regularization)
        self._local = threading.local()     # .applying: this thread is setting traits itself
        self._thread = None
        self._stop_flag = threading.Event()
        self._series = SeriesBuffer(2)
        super().__init__(dataset=dataset, noise=float(noise), hidden=list(self.trainer.hidden), activation=activation,
                         optimizer=optimizer, learning_rate=float(learning_rate), weight_decay=float(weight_decay),
                         batch_size=int(batch_size), seed=int(seed), resolution=int(resolution), speed=int(speed),
                         features=list(self.trainer.features), regularization=regularization,
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

    # --- Python API -----------------------------------------------------------------------
    def step(self, n=1):
        """``n`` training steps; the view follows (throttled). Returns the last batch loss."""
        loss = None
        for _ in range(int(n)):
            with self._lock:
                loss = self.trainer.step(1)
                self._series.append(self.trainer.step_count, [self.trainer.loss_history["train"][-1],
                                                              self.trainer.loss_history["test"][-1]])
            self._updates.request(self._send_progress, "progress")
        return loss

    def train(self, steps=100):
        """Train for ``steps`` steps here and now (blocking); returns the final test loss."""
        self.step(steps)
        return self.trainer.loss_history["test"][-1]

    def start(self, steps=None):
        """Train in a background thread, for ``steps`` steps or until :meth:`stop`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop_flag.clear()
        self._thread = threading.Thread(target=self._run, args=(steps,), name="vizgrad-playground", daemon=True)
        self._thread.start()
        self.playing = True

    def stop(self, timeout=5.0):
        """Stop the background thread (and the front end's Train) and wait for it."""
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
                trainer.dataset, trainer.noise = self.dataset, float(self.noise)
                trainer.hidden = _check_hidden(self.hidden)
                trainer.features = _check_features(self.features)
                trainer.activation, trainer.optimizer_name, trainer.seed = self.activation, self.optimizer, self.seed
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
                self.step(max(1, min(int(content.get("n", 1)), 500)))
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
        """The network diagram (input features, hidden units and classes as small maps over the
        data's square, edges coloured by the weight's sign and as thick as its size) beside the
        decision boundary with the data, as the widget draws them."""
        from ..lessons.figures import DIVERGING
        from ..render.html import png_data_uri
        trainer = self.trainer
        probabilities, units = trainer.responses()
        network = trainer.network()
        sizes = network["sizes"]
        node, column_gap, row_gap, top, left = 36, 96, 44, 30, 52
        diagram_width = left + (len(sizes) - 1) * column_gap + node + 16
        diagram_height = top + (max(sizes) - 1) * row_gap + node
        size = 240
        height = max(diagram_height, top - 10 + size) + 24
        stops = np.array(DIVERGING, dtype=np.float64)

        def signed_map(values):                      # (r, r), row 0 at ymin, on the diverging scale
            scaled = 0.5 + values / (np.abs(values).max() or 1.0) / 2
            position = np.clip(scaled, 0, 1)[::-1] * (len(stops) - 1)
            low = np.minimum(position.astype(int), len(stops) - 2)
            share = (position - low)[..., None]
            return png_data_uri(np.rint(stops[low] * (1 - share) + stops[low + 1] * share))

        def class_map(probability, colour):          # white to the class colour with its probability
            share = np.clip(probability, 0, 1)[::-1][..., None]
            return png_data_uri(np.rint(255 * (1 - share) + np.array(colour, dtype=np.float64) * share))

        maps = [[signed_map(array) for array in trainer.feature_maps()]]
        offset = 0
        for width in trainer.hidden:
            maps.append([signed_map(units[offset + k]) for k in range(width)])
            offset += width
        maps.append([class_map(probabilities[k], CLASS_PALETTE[k % len(CLASS_PALETTE)]) for k in range(trainer.classes)])
        position = [[(left + c * column_gap, top + j * row_gap) for j in range(count)] for c, count in enumerate(sizes)]
        parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{diagram_width + size + 8}' height='{height}' "
                 "font-family='sans-serif' font-size='12'>",
                 "<rect width='100%' height='100%' fill='#ffffff'/>"]
        titles = ["features", *[f"layer {k + 1}" for k in range(len(trainer.hidden))], "classes"]
        for c, title in enumerate(titles):
            parts.append(f"<text x='{left + c * column_gap + node / 2}' y='16' text-anchor='middle' fill='#1f2933'>"
                         f"{title}</text>")
        largest = max((float(np.abs(layer["weight"]).max()) for layer in network["layers"]), default=0.0) or 1.0
        for c, layer in enumerate(network["layers"]):
            for (to, source), weight in np.ndenumerate(layer["weight"]):
                share = min(1.0, abs(float(weight)) / largest)
                colour = "rgb({},{},{})".format(*DIVERGING[0 if weight < 0 else -1])
                (x1, y1), (x2, y2) = position[c][source], position[c + 1][to]
                parts.append(f"<line class='edge' data-layer='{c}' data-from='{source}' data-to='{to}' "
                             f"x1='{x1 + node}' y1='{y1 + node / 2}' x2='{x2}' y2='{y2 + node / 2}' stroke='{colour}' "
                             f"stroke-width='{0.75 + 5.25 * share:.2f}' stroke-opacity='{0.3 + 0.7 * share:.2f}'/>")
        for c, column in enumerate(maps):
            for j, uri in enumerate(column):
                x, y = position[c][j]
                parts.append(f"<image class='node' x='{x}' y='{y}' width='{node}' height='{node}' href='{uri}' "
                             "preserveAspectRatio='none' style='image-rendering:pixelated'/>"
                             f"<rect x='{x}' y='{y}' width='{node}' height='{node}' fill='none' stroke='#9aa5b1'/>")
        for j, name in enumerate(trainer.features):
            x, y = position[0][j]
            parts.append(f"<text x='{x - 4}' y='{y + node / 2 + 4}' text-anchor='end' fill='#1f2933'>"
                         f"{html.escape(name)}</text>")
        parts.append(f"<g transform='translate({diagram_width},{top - 10})'>")
        palette = np.array(CLASS_PALETTE, dtype=np.float64)
        winners = palette[probabilities.argmax(axis=0) % len(palette)][::-1]      # the predicted class, a third as strong
        parts.append(f"<image x='0' y='0' width='{size}' height='{size}' preserveAspectRatio='none' "
                     f"href='{png_data_uri(np.rint(255 * 0.7 + winners * 0.3))}'/>"
                     f"<rect width='{size}' height='{size}' fill='none' stroke='#9aa5b1'/>")
        x0, x1, y0, y1 = trainer.domain
        for (px, py), label in zip(trainer.points, trainer.labels):
            red, green, blue = CLASS_PALETTE[label % len(CLASS_PALETTE)]
            parts.append(f"<circle cx='{(px - x0) / (x1 - x0) * size:.1f}' cy='{size - (py - y0) / (y1 - y0) * size:.1f}' "
                         f"r='2.5' fill='rgb({red},{green},{blue})'/>")
        parts.append("</g>")
        m = trainer.metrics()
        parts.append(f"<text x='4' y='{height - 6}' fill='#1f2933'>{html.escape(trainer.dataset)}, step {m['step']}, "
                     f"test accuracy {m['test_accuracy']:.1%}; edges: blue positive, orange negative, "
                     "thicker is larger</text></svg>")
        return "".join(parts)

__all__ = ["ACTIVATIONS", "DATASETS", "FEATURES", "OPTIMIZERS", "REGULARIZATIONS", "Playground", "PlaygroundTrainer", "make_dataset"]
