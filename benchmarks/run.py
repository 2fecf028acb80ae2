"""vizgrad against its peers, side by side in one run: ``make bench``.

Each benchmark is a function registered with :func:`benchmark`. It returns, for each
peer, a *setup* function; a setup builds the peer's inputs and returns a ``step()``
that runs one repetition and returns the loss (used only to check that the peers
computed the same thing). A setup raises :class:`Skipped` when its peer is not
installed. To add a benchmark (B1 with Adam, B3, B4, ...), write one more such function.

Timing: every step is warmed up, then the peers are timed in interleaved rounds (so a
slow phase of the machine hits them all) for at least ``--min-reps`` repetitions each;
the table shows medians and their ratios to the bench's reference peers.

The allocator changes NumPy-based results a lot, so the whole table runs twice, each
time in a fresh subprocess: once with glibc's default malloc and once with
``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` raised, which keeps large
temporaries mapped between steps. Compare figures only within one setting.

Benchmarks are not tests: nothing here fails because a machine is slow. The exit
status is 1 only when a peer raised an error (a bug, not a slow machine).
"""

import argparse
import datetime
import gc
from importlib import metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "latest.json"

SETTINGS = {
    "default": ("glibc malloc as vizgrad leaves it (its thresholds raised at import)", {}),
    "malloc_tuned": ("MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=64 MiB",
                     {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "67108864"}),
}

VIZGRAD, TORCH, AUTOGRAD, NUMPY = "vizgrad", "PyTorch", "HIPS autograd", "hand-written NumPy"


class Skipped(Exception):
    """A peer that cannot run here (not installed); the reason goes in the table."""


class Elapsed(float):
    """What a step returns when it times itself (seconds): measured where the work happens,
    e.g. a browser's frames, not by the harness around the call."""


@dataclass
class Benchmark:
    key: str                 # "B2"
    name: str                # "small_op_overhead"
    unit: str                # what the table shows: "us/op", "ms", "steps/s"
    scale: float             # seconds per step -> unit (None: the unit is steps per second)
    references: tuple        # the peers the ratios are relative to
    setups: callable         # () -> {peer: setup}
    description: str = ""
    teardown: callable = None  # run after the bench (e.g. to detach listeners its steps attached)
    target: float = None       # a bench without peers: its target in its unit (prefer the TARGETS table)


BENCHMARKS = {}


def benchmark(key, name, unit, scale, references, teardown=None, target=None):
    """Register a benchmark: ``function()`` returns ``{peer: setup}``, setup() returns step()."""
    def register(function):
        BENCHMARKS[key] = Benchmark(key, name, unit, scale, tuple(references), function,
                                    (function.__doc__ or "").strip().splitlines()[0], teardown, target)
        return function
    return register


def _require(module):
    try:
        return __import__(module)
    except ImportError:
        raise Skipped("not installed") from None


def _torch():
    torch = _require("torch")
    torch.set_num_threads(2)
    return torch


# --- B2 -------------------------------------------------------------------------
B2_OPS = 1000


def _b2_chain(h, tanh):
    """The same 1,000 ops for every peer: x*1.0001, x+0.001, tanh, repeated."""
    for i in range(B2_OPS):
        if i % 3 == 0:
            h = h * 1.0001
        elif i % 3 == 1:
            h = h + 0.001
        else:
            h = tanh(h)
    return h


@benchmark("B2", "small_op_overhead", "us/op", 1e6 / B2_OPS, references=(TORCH,))
def small_op_overhead():
    """x of shape (10,) float32; 1,000 chained elementwise ops; sum, backward. Time per op."""
    x_np = np.random.default_rng(0).uniform(-1, 1, 10).astype(np.float32)

    def vizgrad_setup():
        import vizgrad as vg
        x = vg.tensor(x_np, requires_grad=True)

        def step():
            x.grad = None
            loss = _b2_chain(x, vg.tanh).sum()
            loss.backward()
            return loss
        return step

    def torch_setup():
        torch = _torch()
        x = torch.tensor(x_np, requires_grad=True)

        def step():
            x.grad = None
            loss = _b2_chain(x, torch.tanh).sum()
            loss.backward()
            return loss
        return step

    def autograd_setup():
        _require("autograd")
        import autograd.numpy as anp
        from autograd import value_and_grad
        loss_and_grad = value_and_grad(lambda x: anp.sum(_b2_chain(x, anp.tanh)))
        return lambda: loss_and_grad(x_np)[0]

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, AUTOGRAD: autograd_setup}


# --- B1f ------------------------------------------------------------------------
def _mlp_data(batch=128, sizes=(784, 512, 512, 10), seed=0):
    """Inputs, integer labels and (weight, bias) pairs in float32, the same for every peer."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, y, params


@benchmark("B1f", "mlp_fwd_bwd", "ms", 1e3, references=(NUMPY, TORCH))
def mlp_fwd_bwd():
    """MLP 784-512-512-10, ReLU, float32, batch 128, logsumexp cross-entropy; forward + backward."""
    x_np, y_np, params_np = _mlp_data()
    batch = x_np.shape[0]
    rows_np = np.arange(batch)

    def vizgrad_setup():
        import vizgrad as vg
        x, y, rows = vg.tensor(x_np), vg.tensor(y_np), vg.arange(batch)
        params = [vg.tensor(p, requires_grad=True) for p in params_np]
        w1, b1, w2, b2, w3, b3 = params

        def step():
            for p in params:
                p.grad = None
            hidden = (x @ w1 + b1).relu()
            hidden = (hidden @ w2 + b2).relu()
            logits = hidden @ w3 + b3
            loss = (vg.logsumexp(logits, dim=1) - logits[rows, y]).mean()
            loss.backward()
            return loss
        return step

    def torch_setup():
        torch = _torch()
        x, y, rows = torch.from_numpy(x_np), torch.from_numpy(y_np), torch.arange(batch)
        params = [torch.tensor(p, requires_grad=True) for p in params_np]
        w1, b1, w2, b2, w3, b3 = params

        def step():
            for p in params:
                p.grad = None
            hidden = (x @ w1 + b1).relu()
            hidden = (hidden @ w2 + b2).relu()
            logits = hidden @ w3 + b3
            loss = (torch.logsumexp(logits, dim=1) - logits[rows, y]).mean()
            loss.backward()
            return loss
        return step

    def autograd_setup():
        _require("autograd")
        import autograd.numpy as anp
        from autograd import value_and_grad
        from autograd.scipy.special import logsumexp

        def loss(params):
            w1, b1, w2, b2, w3, b3 = params
            hidden = anp.maximum(x_np @ w1 + b1, 0)
            hidden = anp.maximum(hidden @ w2 + b2, 0)
            logits = hidden @ w3 + b3
            return anp.mean(logsumexp(logits, axis=1) - logits[rows_np, y_np])
        loss_and_grad = value_and_grad(loss)
        return lambda: loss_and_grad(params_np)[0]

    def numpy_setup():
        w1, b1, w2, b2, w3, b3 = params_np
        grads = {}

        def step():
            # forward; a1 and a2 are the ReLU outputs, computed in place
            a1 = x_np @ w1
            a1 += b1
            np.maximum(a1, 0, out=a1)
            a2 = a1 @ w2
            a2 += b2
            np.maximum(a2, 0, out=a2)
            logits = a2 @ w3
            logits += b3
            top = logits.max(axis=1, keepdims=True)
            exp = np.exp(logits - top)
            total = exp.sum(axis=1, keepdims=True)
            loss = np.mean(np.log(total[:, 0]) + top[:, 0] - logits[rows_np, y_np])
            # backward: d loss / d logits = (softmax - one_hot) / batch
            g = exp
            g /= total
            g[rows_np, y_np] -= 1
            g /= batch
            grads["w3"], grads["b3"] = a2.T @ g, g.sum(axis=0)
            g = g @ w3.T
            g *= a2 > 0
            grads["w2"], grads["b2"] = a1.T @ g, g.sum(axis=0)
            g = g @ w2.T
            g *= a1 > 0
            grads["w1"], grads["b1"] = x_np.T @ g, g.sum(axis=0)
            return loss
        return step

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, AUTOGRAD: autograd_setup, NUMPY: numpy_setup}


# --- shared by B1, B3, B4 ---------------------------------------------------------
MICROGRAD = "micrograd"
ADAM = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)


class NumpyAdam:
    """Adam written directly on NumPy arrays, in place with one scratch buffer per
    parameter: the update a NumPy-backed engine cannot beat (no temporaries)."""

    def __init__(self, params, lr, betas, eps):
        self.params, self.lr, (self.b1, self.b2), self.eps, self.t = params, lr, betas, eps, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.scratch = [np.empty_like(p) for p in params]

    def step(self, grads):
        self.t += 1
        step_size = self.lr / (1 - self.b1 ** self.t)
        root_correction = 1 / np.sqrt(1 - self.b2 ** self.t)
        for p, g, m, v, tmp in zip(self.params, grads, self.m, self.v, self.scratch):
            m *= self.b1                                   # m <- b1 m + (1 - b1) g
            np.multiply(g, 1 - self.b1, out=tmp)
            m += tmp
            v *= self.b2                                   # v <- b2 v + (1 - b2) g^2
            np.multiply(g, g, out=tmp)
            tmp *= 1 - self.b2
            v += tmp
            np.sqrt(v, out=tmp)                            # p <- p - lr_t m / (sqrt(v_t) + eps)
            tmp *= root_correction
            tmp += self.eps
            np.divide(m, tmp, out=tmp)
            tmp *= step_size
            p -= tmp


def _load_linear_layers(layers, params_np, to_array):
    """Copy (weight (in, out), bias) pairs into Linear layers, whose weights are (out, in)."""
    for layer, (weight, bias) in zip(layers, zip(params_np[::2], params_np[1::2])):
        to_array(layer.weight, weight.T)
        to_array(layer.bias, bias)


def _vizgrad_copy(param, array):
    import vizgrad as vg
    with vg.no_grad():
        param.copy_(vg.tensor(np.ascontiguousarray(array)))


def _torch_copy(param, array):
    import torch
    with torch.no_grad():
        param.copy_(torch.from_numpy(np.ascontiguousarray(array)))


def _vizgrad_mlp_training(x_np, y_np, params_np):
    """B1's model, Adam and training step in vizgrad, from the shared data: (model, optimizer, step)."""
    import vizgrad as vg
    import vizgrad.nn.functional as F
    model = vg.nn.MLP([784, 512, 512, 10])
    _load_linear_layers(model[::2], params_np, _vizgrad_copy)
    optimizer = vg.optim.Adam(model.parameters(), **ADAM)
    x, y = vg.tensor(x_np), vg.tensor(y_np)

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return model, optimizer, step


# --- B1 -------------------------------------------------------------------------
@benchmark("B1", "mlp_step", "ms", 1e3, references=(NUMPY, TORCH))
def mlp_step():
    """MLP 784-512-512-10, ReLU, float32, batch 128, softmax cross-entropy; forward + backward + Adam."""
    x_np, y_np, params_np = _mlp_data()
    batch = x_np.shape[0]
    rows_np = np.arange(batch)

    def vizgrad_setup():
        return _vizgrad_mlp_training(x_np, y_np, params_np)[2]

    def torch_setup():
        torch = _torch()
        nn = torch.nn
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        _load_linear_layers(model[::2], params_np, _torch_copy)
        optimizer = torch.optim.Adam(model.parameters(), **ADAM)
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def step():
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            return loss
        return step

    def autograd_setup():
        _require("autograd")
        import autograd.numpy as anp
        from autograd import value_and_grad
        from autograd.scipy.special import logsumexp
        params = [p.copy() for p in params_np]
        optimizer = NumpyAdam(params, **ADAM)

        def loss(params):
            w1, b1, w2, b2, w3, b3 = params
            hidden = anp.maximum(x_np @ w1 + b1, 0)
            hidden = anp.maximum(hidden @ w2 + b2, 0)
            logits = hidden @ w3 + b3
            return anp.mean(logsumexp(logits, axis=1) - logits[rows_np, y_np])
        loss_and_grad = value_and_grad(loss)

        def step():
            value, grads = loss_and_grad(params)
            optimizer.step(grads)
            return value
        return step

    def numpy_setup():
        params = [p.copy() for p in params_np]
        w1, b1, w2, b2, w3, b3 = params
        optimizer = NumpyAdam(params, **ADAM)

        def step():
            # forward; a1 and a2 are the ReLU outputs, computed in place
            a1 = x_np @ w1
            a1 += b1
            np.maximum(a1, 0, out=a1)
            a2 = a1 @ w2
            a2 += b2
            np.maximum(a2, 0, out=a2)
            logits = a2 @ w3
            logits += b3
            top = logits.max(axis=1, keepdims=True)
            exp = np.exp(logits - top)
            total = exp.sum(axis=1, keepdims=True)
            loss = np.mean(np.log(total[:, 0]) + top[:, 0] - logits[rows_np, y_np])
            # backward: d loss / d logits = (softmax - one_hot) / batch
            g = exp
            g /= total
            g[rows_np, y_np] -= 1
            g /= batch
            g_w3, g_b3 = a2.T @ g, g.sum(axis=0)
            g = g @ w3.T
            g *= a2 > 0
            g_w2, g_b2 = a1.T @ g, g.sum(axis=0)
            g = g @ w2.T
            g *= a1 > 0
            g_w1, g_b1 = x_np.T @ g, g.sum(axis=0)
            optimizer.step([g_w1, g_b1, g_w2, g_b2, g_w3, g_b3])
            return loss
        return step

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, AUTOGRAD: autograd_setup, NUMPY: numpy_setup}


# --- B3 -------------------------------------------------------------------------
B3_ALPHA, B3_LR = 1e-4, 0.05


def _moons():
    """micrograd's demo data: 100 two-moons points (noise 0.1, seed 0), labels -1 and +1."""
    from vizgrad.data import make_moons
    x, y = make_moons(100, noise=0.1, seed=0)
    return x.numpy(), (y.numpy() * 2 - 1).astype(np.float32)


@benchmark("B3", "micrograd_moons", "ms", 1e3, references=(TORCH,))
def micrograd_moons():
    """MLP 2-16-16-1 (ReLU hidden), 100 moons points; SVM max-margin loss + 1e-4 L2; full-batch SGD step."""
    x_np, y_np = _moons()
    _, _, params_np = _mlp_data(batch=1, sizes=(2, 16, 16, 1))

    def vizgrad_setup():
        import vizgrad as vg
        import vizgrad.nn.functional as F
        model = vg.nn.MLP([2, 16, 16, 1])
        _load_linear_layers(model[::2], params_np, _vizgrad_copy)
        optimizer = vg.optim.SGD(model.parameters(), lr=B3_LR)
        params = list(model.parameters())
        x, y = vg.tensor(x_np), vg.tensor(y_np)

        def step():
            optimizer.zero_grad()
            scores = model(x).squeeze(1)
            loss = F.relu(1 - y * scores).mean() + B3_ALPHA * sum((p * p).sum() for p in params)
            loss.backward()
            optimizer.step()
            return loss
        return step

    def torch_setup():
        torch = _torch()
        nn = torch.nn
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
        _load_linear_layers(model[::2], params_np, _torch_copy)
        optimizer = torch.optim.SGD(model.parameters(), lr=B3_LR)
        params = list(model.parameters())
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def step():
            optimizer.zero_grad()
            scores = model(x).squeeze(1)
            loss = torch.relu(1 - y * scores).mean() + B3_ALPHA * sum((p * p).sum() for p in params)
            loss.backward()
            optimizer.step()
            return loss
        return step

    def autograd_setup():
        _require("autograd")
        import autograd.numpy as anp
        from autograd import value_and_grad
        params = [p.copy() for p in params_np]

        def loss(params):
            w1, b1, w2, b2, w3, b3 = params
            hidden = anp.maximum(x_np @ w1 + b1, 0)
            hidden = anp.maximum(hidden @ w2 + b2, 0)
            scores = (hidden @ w3 + b3)[:, 0]
            return anp.mean(anp.maximum(1 - y_np * scores, 0)) + B3_ALPHA * sum(anp.sum(p * p) for p in params)
        loss_and_grad = value_and_grad(loss)

        def step():
            value, grads = loss_and_grad(params)
            for p, g in zip(params, grads):
                p -= B3_LR * g
            return value
        return step

    def micrograd_setup():
        _require("micrograd")
        from micrograd.engine import Value
        from micrograd.nn import MLP
        model = MLP(2, [16, 16, 1])
        for layer, weight, bias in zip(model.layers, params_np[::2], params_np[1::2]):
            for out, neuron in enumerate(layer.neurons):
                for i, w in enumerate(neuron.w):
                    w.data = float(weight[i, out])
                neuron.b.data = float(bias[out])
        inputs = [[Value(float(v)) for v in row] for row in x_np]
        labels = [float(v) for v in y_np]

        def step():
            # micrograd's demo loop, one step (its loss and update written as in its notebook)
            scores = [model(row) for row in inputs]
            losses = [(1 + -label * score).relu() for label, score in zip(labels, scores)]
            data_loss = sum(losses) * (1.0 / len(losses))
            reg_loss = B3_ALPHA * sum(p * p for p in model.parameters())
            total = data_loss + reg_loss
            model.zero_grad()
            total.backward()
            for p in model.parameters():
                p.data -= B3_LR * p.grad
            return total.data
        return step

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, AUTOGRAD: autograd_setup, MICROGRAD: micrograd_setup}


# --- B4 -------------------------------------------------------------------------
B4_LR = 0.01


def _conv_data(batch=32, seed=0):
    """Images, labels and the parameters of conv(1->8), conv(8->16), linear(784->10), PyTorch's layouts."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    params = []
    for shape in ((8, 1, 3, 3), (16, 8, 3, 3), (10, 784)):
        bound = 1 / np.sqrt(np.prod(shape[1:]))
        params.append(rng.uniform(-bound, bound, shape).astype(np.float32))
        params.append(rng.uniform(-bound, bound, shape[0]).astype(np.float32))
    return x, y, params


def _conv_net(nn):
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(784, 10))


def _np_conv3x3(x, w, b):
    """3x3 convolution, padding 1, by im2col on channels-last images: (N, H, W, C) -> (N, H, W, O),
    plus the columns (N·H·W, C·9) for backward."""
    n, h, wd, c = x.shape
    padded = np.zeros((n, h + 2, wd + 2, c), dtype=x.dtype)
    padded[:, 1:-1, 1:-1] = x
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))   # (N, H, W, C, 3, 3)
    columns = windows.reshape(n * h * wd, c * 9)                                      # one copy
    out = columns @ w.reshape(w.shape[0], -1).T
    out += b
    return out.reshape(n, h, wd, -1), columns


def _np_conv3x3_backward(g, columns, w, need_input):
    """Gradients of the weight, bias and (if asked) input of :func:`_np_conv3x3` (col2im by 9 shifted adds)."""
    n, h, wd, o = g.shape
    c = w.shape[1]
    rows = g.reshape(-1, o)
    g_w = (rows.T @ columns).reshape(w.shape)
    g_b = rows.sum(axis=0)
    if not need_input:
        return g_w, g_b, None
    g_columns = (rows @ w.reshape(o, -1)).reshape(n, h, wd, c, 3, 3)
    g_padded = np.zeros((n, h + 2, wd + 2, c), dtype=g.dtype)
    for i in range(3):
        for j in range(3):
            g_padded[:, i:i + h, j:j + wd] += g_columns[..., i, j]
    return g_w, g_b, g_padded[:, 1:-1, 1:-1]


_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _np_pool2(x):
    """2x2 max pooling of channels-last images: the maximum of the four strided corners."""
    corners = [x[:, i::2, j::2] for i, j in _CORNERS]
    out = np.maximum(corners[0], corners[1])
    np.maximum(out, corners[2], out=out)
    np.maximum(out, corners[3], out=out)
    return out


def _np_pool2_backward(g, x, out):
    # each window's gradient goes where x equals its maximum; ties occur only among ReLU
    # zeros, whose gradient the ReLU backward drops anyway
    g_x = np.zeros_like(x)
    for i, j in _CORNERS:
        np.multiply(g, x[:, i::2, j::2] == out, out=g_x[:, i::2, j::2])
    return g_x


@benchmark("B4", "conv_step", "ms", 1e3, references=(TORCH, NUMPY))
def conv_step():
    """32x1x28x28: conv 1->8, ReLU, maxpool 2, conv 8->16, ReLU, maxpool 2, linear 784->10; CE, backward, SGD."""
    x_np, y_np, params_np = _conv_data()
    batch = x_np.shape[0]
    rows_np = np.arange(batch)

    def load(model, copy):
        for layer, weight, bias in zip((model[0], model[3], model[7]), params_np[::2], params_np[1::2]):
            copy(layer.weight, weight)
            copy(layer.bias, bias)

    def vizgrad_setup():
        import vizgrad as vg
        import vizgrad.nn.functional as F
        model = _conv_net(vg.nn)
        load(model, _vizgrad_copy)
        optimizer = vg.optim.SGD(model.parameters(), lr=B4_LR)
        x, y = vg.tensor(x_np), vg.tensor(y_np)

        def step():
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            return loss
        return step

    def torch_setup():
        torch = _torch()
        model = _conv_net(torch.nn)
        load(model, _torch_copy)
        optimizer = torch.optim.SGD(model.parameters(), lr=B4_LR)
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def step():
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            return loss
        return step

    def numpy_setup():
        # channels last throughout; the linear weight keeps its inputs in that (H, W, C) order
        k1, c1, k2, c2, w3, b3 = (p.copy() for p in params_np)
        w3 = np.ascontiguousarray(w3.reshape(10, 16, 7, 7).transpose(0, 2, 3, 1).reshape(10, 784))
        params = [k1, c1, k2, c2, w3, b3]
        x = x_np.reshape(batch, 28, 28, 1)            # one channel: the same numbers as NCHW

        def step():
            a1, cols1 = _np_conv3x3(x, k1, c1)
            np.maximum(a1, 0, out=a1)                 # ReLU in place: a > 0 exactly where z > 0
            p1 = _np_pool2(a1)
            a2, cols2 = _np_conv3x3(p1, k2, c2)
            np.maximum(a2, 0, out=a2)
            p2 = _np_pool2(a2)
            flat = p2.reshape(batch, -1)
            logits = flat @ w3.T
            logits += b3
            top = logits.max(axis=1, keepdims=True)
            exp = np.exp(logits - top)
            total = exp.sum(axis=1, keepdims=True)
            loss = np.mean(np.log(total[:, 0]) + top[:, 0] - logits[rows_np, y_np])
            g = exp                                   # d loss / d logits = (softmax - one_hot) / batch
            g /= total
            g[rows_np, y_np] -= 1
            g /= batch
            g_w3, g_b3 = g.T @ flat, g.sum(axis=0)
            g = (g @ w3).reshape(p2.shape)
            g = _np_pool2_backward(g, a2, p2)
            g *= a2 > 0
            g_k2, g_c2, g = _np_conv3x3_backward(g, cols2, k2, need_input=True)
            g = _np_pool2_backward(g, a1, p1)
            g *= a1 > 0
            g_k1, g_c1, _ = _np_conv3x3_backward(g, cols1, k1, need_input=False)
            for p, grad in zip(params, (g_k1, g_c1, g_k2, g_c2, g_w3, g_b3)):
                p -= B4_LR * grad
            return loss
        return step

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, NUMPY: numpy_setup}


# --- B5, B5s, PG: watching training ------------------------------------------------
BARE, NOOP, RECORDER, FOLLOWING, DASHBOARD = ("bare", "no-op listener", "trace Recorder", "GraphView of the trace",
                                              "dashboard (headless)")
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
    x_np, y_np, params_np = _mlp_data()

    return _observed(lambda: _vizgrad_mlp_training(x_np, y_np, params_np))


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

        def step():
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
            return loss
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


# --- B6 -------------------------------------------------------------------------
B6_BLOCKS = 250            # Linear + Tanh blocks: about 1,000 graph nodes with the parameters


@benchmark("B6", "report", "ms", 1e3, references=())
def report():
    """Build and write the HTML report (DOT, JSON, the bundled page) of a recorded 1,000-node graph."""
    def vizgrad_setup():
        import vizgrad as vg
        vg.manual_seed(0)
        model = vg.nn.Sequential(*[layer for _ in range(B6_BLOCKS) for layer in (vg.nn.Linear(8, 8), vg.nn.Tanh())])
        with vg.trace() as recording:
            model(vg.randn(16, 8)).square().mean().backward()
        graph = recording.graph
        folder = tempfile.mkdtemp(prefix="vizgrad-b6-")

        def step():
            graph.to_html(os.path.join(folder, "report.html"))
            return float(len(graph.nodes))
        return step

    return {VIZGRAD: vizgrad_setup}


# --- B8, B9: graphs displayed ------------------------------------------------------
def _display_models():
    """The graphs of B8 and B9, as tensors (with their backward pass run): an unrolled RNN
    (40 steps, one cell's weights shared by every step, ~250 nodes), a CNN with BatchNorm,
    and a Sequential of Linear + Tanh blocks of about ``blocks * 4`` nodes."""
    import vizgrad as vg
    from vizgrad import nn
    import vizgrad.nn.functional as F

    def rnn():
        vg.manual_seed(0)
        ih, hh, out = nn.Linear(4, 16), nn.Linear(16, 16), nn.Linear(16, 1)
        xs, h = vg.randn(3, 40, 4), vg.zeros(3, 16)
        for t in range(40):
            h = (ih(xs[:, t]) + hh(h)).tanh()
        loss = out(h).pow(2).mean()
        loss.backward()
        return loss

    def cnn():
        vg.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
        loss = F.cross_entropy(model(vg.randn(8, 1, 28, 28)), vg.tensor([0, 1, 2, 3, 4, 5, 6, 7]))
        loss.backward()
        return loss

    def blocks(count):
        vg.manual_seed(0)
        model = nn.Sequential(*[layer for _ in range(count) for layer in (nn.Linear(8, 8), nn.Tanh())])
        loss = model(vg.randn(16, 8)).square().mean()
        loss.backward()
        return loss

    return {"RNN, 40 steps, shared weights": rnn, "CNN with BatchNorm": cnn, "5,000 nodes": lambda: blocks(1250)}


class _KernelComm:
    """What a Jupyter kernel does with a widget's messages, and with display()'s output,
    before the call returns: pack them as its session does (jupyter_client's packer, which
    uses orjson where installed), to be sent nowhere. B8 installs it for its views' comms."""
    pack = None
    original = None

    @classmethod
    def install(cls):
        try:
            import comm
            from comm import DummyComm
            from jupyter_client.session import Session
        except ImportError:
            raise Skipped("jupyter_client or comm is not installed (pip install -e '.[dev]')") from None
        if cls.original is None:
            cls.pack, cls.original = Session().pack, comm.create_comm

            class PackingComm(DummyComm):
                def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
                    cls.pack({"comm_id": self.comm_id, "data": data or {}, "metadata": metadata or {}, **keys})
            comm.create_comm = PackingComm
        return cls.pack

    @classmethod
    def uninstall(cls):
        if cls.original is not None:
            import comm
            comm.create_comm, cls.original = cls.original, None


@benchmark("B8", "graph_display", "ms", 1e3, references=(), teardown=_KernelComm.uninstall, target=100)
def graph_display():
    """In the kernel: GraphView(tensor) or vg.show(tensor) until the display call returns."""
    def view_setup(make):
        def setup():
            from vizgrad.widgets import GraphView
            pack = _KernelComm.install()
            loss = make()

            def step():                                  # the comm packs the view's state as it opens
                view = GraphView(loss)
                data, metadata = view._repr_mimebundle_()       # what IPython's display() asks for, then packs
                pack({"data": data, "metadata": metadata})
                view.close()
            return step
        return setup

    def show_setup(make):
        def setup():
            from vizgrad.render import notebook
            pack = _KernelComm.install()
            loss = make()

            def display(data, metadata, raw):            # IPython's display(): the output, packed
                pack({"data": data, "metadata": metadata})

            def step():                                  # vg.show in a notebook
                notebook.display_graph(loss, display)
            return step
        return setup

    setups = {}
    for name, make in _display_models().items():
        setups[f"GraphView: {name}"] = view_setup(make)
        setups[f"vg.show: {name}"] = show_setup(make)
    return setups


B9_FRAMES = 120


class _Chromium:
    """Debian's Chromium driven by Playwright, started once for B9 and closed by its teardown."""
    playwright = browser = None

    @classmethod
    def page(cls):
        executable = "/usr/bin/chromium"
        if not os.path.exists(executable):
            raise Skipped(f"no Chromium at {executable}")
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise Skipped("Playwright is not installed (pip install -e '.[dev]')") from None
        if cls.browser is None:
            cls.playwright = sync_playwright().start()
            cls.browser = cls.playwright.chromium.launch(executable_path=executable, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"])
        return cls.browser.new_page(viewport={"width": 1280, "height": 720})

    @classmethod
    def close(cls):
        if cls.browser is not None:
            cls.browser.close()
            cls.playwright.stop()
        cls.playwright = cls.browser = None


def _chains(count=13, length=25):
    """``count`` modules, each a chain of ``length`` (x @ w).tanh() * 1.01 steps: ~1,000 nodes in 13 groups."""
    import vizgrad as vg

    class Chain(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = vg.nn.Parameter(vg.randn(8, 8) * 0.3)

        def forward(self, x):
            for _ in range(length):
                x = (x @ self.w).tanh() * 1.01
            return x

    return vg.nn.Sequential(*[Chain() for _ in range(count)])


def _report_of(blocks=None):
    """A report page (file URI) and node count: Linear + Tanh blocks (about ``blocks * 4``
    nodes), or with no ``blocks`` the ~1,000-node graph of :func:`_chains`."""
    import vizgrad as vg
    vg.manual_seed(0)
    if blocks is None:
        model = _chains()
    else:
        model = vg.nn.Sequential(*[layer for _ in range(blocks) for layer in (vg.nn.Linear(8, 8), vg.nn.Tanh())])
    with vg.trace() as recording:
        model(vg.randn(16, 8)).square().mean().backward()
    path = os.path.join(tempfile.mkdtemp(prefix="vizgrad-b9-"), "graph.html")
    recording.graph.to_html(path)
    return Path(path).as_uri(), len(recording.graph.nodes)


_FIRST_PAINT = "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def _paint_setup(blocks):
    def setup():
        uri, nodes = _report_of(blocks)
        page = _Chromium.page()

        def step():                                      # the page opens: data in, layout, first complete paint
            page.goto(uri, wait_until="commit")
            page.wait_for_selector("#vizgrad-report[data-ready], #vizgrad-report[data-error]", timeout=60_000)
            error = page.get_attribute("#vizgrad-report", "data-error")
            if error:
                raise RuntimeError(f"the report could not draw its graph: {error}")
            page.evaluate(_FIRST_PAINT)
            return float(nodes)
        return step
    return setup


@benchmark("B9", "graph_paint_1000", "ms", 1e3, references=(), teardown=_Chromium.close, target=1000)
def graph_paint_1000():
    """In Chromium: a 1,000-node graph's page, from the data arriving to the first complete paint."""
    return {"report (Chromium, Playwright)": _paint_setup(250)}


@benchmark("B9L", "graph_paint_5000", "ms", 1e3, references=(), teardown=_Chromium.close, target=3000)
def graph_paint_5000():
    """In Chromium: a 5,000-node graph's page, from the data arriving to the first complete paint."""
    return {"report (Chromium, Playwright)": _paint_setup(1250)}


# Pans (drags) or zooms (wheel) the drawn graph once per animation frame, as a person would;
# returns the seconds from the first frame of the gesture to its last (``frames`` frames):
# the frame rate while it lasts (the repaint once it ends is one frame of its own).
_PAN_ZOOM = """async ([frames, zoom]) => {
  const svg = document.querySelector("svg.vg-graph");
  const box = svg.getBoundingClientRect();
  const at = (i) => ({ clientX: box.left + box.width / 2 + 200 * Math.sin(i / 15), clientY: box.top + box.height / 2 + 120 * Math.cos(i / 19) });
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  let first = null;
  let last = null;
  for (let i = 0; i <= frames; i++) {
    if (zoom) svg.dispatchEvent(new WheelEvent("wheel", { ...at(i), deltaY: i % 60 < 30 ? 30 : -30, bubbles: true, cancelable: true }));
    else svg.dispatchEvent(new PointerEvent("pointermove", { ...at(i), pointerId: 1, buttons: 1, bubbles: true }));
    last = await frame();
    if (first === null) first = last;
  }
  return (last - first) / 1000;
}"""


@benchmark("B9F", "graph_pan_zoom_1000", "ms/frame", 1e3 / B9_FRAMES, references=(), teardown=_Chromium.close,
           target=1000 / 60)
def graph_pan_zoom():
    """In Chromium: frame time while panning and zooming a 1,000-node graph drawn whole (60 fps = 16.7 ms)."""
    def setup(zoom):
        uri, nodes = _report_of()
        page = _Chromium.page()
        page.goto(uri)
        page.wait_for_selector("#vizgrad-report[data-ready]", timeout=60_000)
        drawing = "svg.vg-graph > g"                     # each new drawing has a new id
        while page.locator("g.vg-group").count():        # open every group (a folded run first): all nodes drawn
            before = page.get_attribute(drawing, "id")
            page.locator("g.vg-group").first.dispatch_event("pointerdown", {"button": 0})
            page.locator("g.vg-group").first.dispatch_event("pointerup", {"button": 0})
            page.wait_for_function("([selector, before]) => document.querySelector(selector)?.id !== before",
                                   arg=[drawing, before], timeout=60_000)
        drawn = page.locator("g.vg-node").count()
        if drawn < 900:
            raise RuntimeError(f"only {drawn} nodes drawn")
        box = page.locator("svg.vg-graph").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.get_by_role("button", name="zoom in").click()   # part of the graph in view, its labels readable
        page.get_by_role("button", name="zoom in").click()

        def step():
            if not zoom:
                page.mouse.down()                        # a real press: the moves that follow drag
            seconds = page.evaluate(_PAN_ZOOM, [B9_FRAMES, zoom])
            if not zoom:
                page.mouse.up()
            return Elapsed(seconds)
        return step
    return {"pan (drag)": lambda: setup(False), "zoom (wheel)": lambda: setup(True)}


# --- targets ---------------------------------------------------------------------
# From /work/shared/BENCHMARKS.md, in one place: (bench, peer) -> (limit, reference). With a
# reference peer the limit is the ratio of the medians of time to that peer's; without
# one, the median itself in the bench's unit. The table marks every row above its target.
TARGETS = {
    ("B1", VIZGRAD): (1.1, NUMPY),
    ("B2", VIZGRAD): (1.5, TORCH),
    ("B3", VIZGRAD): (1.5, TORCH),
    ("B4", VIZGRAD): (1.5, TORCH),
    ("B5", NOOP): (1.1, BARE),
    ("B5", RECORDER): (1.3, BARE),
    ("B5", FOLLOWING): (1.3, BARE),
    ("B5", DASHBOARD): (1.2, BARE),
    ("B5s", RECORDER): (1.5, BARE),
    ("B5s", FOLLOWING): (1.5, BARE),
    ("B5s", DASHBOARD): (1.5, BARE),
    ("B6", VIZGRAD): (500.0, None),
    ("B10", VIZGRAD): (1.2, TORCH),
    ("B7-mlp", VIZGRAD): (1.3, TORCH),
    ("B7-mlp4096", VIZGRAD): (1.3, TORCH),
    ("B7-conv", VIZGRAD): (1.5, TORCH),
    ("B7-transformer", VIZGRAD): (1.3, TORCH),
}


def target_of(bench, peer):
    """``(limit, reference)`` of a row, or None when it has no target."""
    found = TARGETS.get((bench.key, peer))
    if found is None and bench.target is not None and not bench.references:
        found = (bench.target, None)
    return found


def check_target(bench, entry):
    """``{"limit", "reference", "value", "met"}`` for a measured row with a target, else None."""
    found = target_of(bench, entry["peer"])
    if found is None or "median" not in entry:
        return None
    limit, reference = found
    value = entry["median"] if reference is None else entry["ratios"].get(reference)
    if value is None:
        return None
    return {"limit": limit, "reference": reference, "value": value, "met": value <= limit}


def _target_text(bench, target):
    if target["reference"] is None:
        wanted = f"under {target['limit']:g} {bench.unit}"
    else:
        wanted = f"at most {target['limit']:g}x {_short(target['reference'])}"
    return f"target {wanted}" if target["met"] else f"ABOVE TARGET ({wanted})"


# --- B10 ------------------------------------------------------------------------
B10_VOCAB, B10_WIDTH, B10_HEADS, B10_LAYERS, B10_CONTEXT, B10_BATCH, B10_LR = 74, 64, 4, 2, 32, 32, 3e-3


def _tiny_transformer(torch):
    """Lesson 12's model (pre-norm blocks: causal self-attention and a GELU MLP, each in a
    residual branch) built from ``torch``'s names: vizgrad or PyTorch."""
    nn = torch.nn

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(B10_WIDTH, 3 * B10_WIDTH)
            self.proj = nn.Linear(B10_WIDTH, B10_WIDTH)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=-1)
            q, k, v = (t.view(B, T, B10_HEADS, C // B10_HEADS).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / (C // B10_HEADS) ** 0.5
            causal = torch.tril(torch.ones(T, T, device=x.device)) == 0
            weights = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
            return self.proj((weights @ v).transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attention, self.ln2 = nn.LayerNorm(B10_WIDTH), CausalSelfAttention(), nn.LayerNorm(B10_WIDTH)
            self.mlp = nn.Sequential(nn.Linear(B10_WIDTH, 4 * B10_WIDTH), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * B10_WIDTH, B10_WIDTH))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class TinyTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.token = nn.Embedding(B10_VOCAB, B10_WIDTH)
            self.position = nn.Embedding(B10_CONTEXT, B10_WIDTH)
            self.blocks = nn.Sequential(*[Block() for _ in range(B10_LAYERS)])
            self.ln = nn.LayerNorm(B10_WIDTH)
            self.head = nn.Linear(B10_WIDTH, B10_VOCAB)

        def forward(self, idx):
            x = self.token(idx) + self.position(torch.arange(idx.shape[1], device=idx.device))
            return self.head(self.ln(self.blocks(x)))

    return TinyTransformer()


@benchmark("B10", "transformer_step", "ms", 1e3, references=(TORCH,))
def transformer_step():
    """Lesson 12's tiny transformer (2 layers, 4 heads, width 64, context 32), batch 32: CE, backward, AdamW."""
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, B10_VOCAB, (B10_BATCH, B10_CONTEXT + 1))
    x_np, y_np = tokens[:, :-1], tokens[:, 1:]
    import vizgrad as vg
    vg.manual_seed(0)
    weights = {name: value.numpy().copy() for name, value in _tiny_transformer(vg).state_dict().items()}

    def make(torch, copy, tensor):
        def setup():
            model = _tiny_transformer(torch)
            for name, param in model.named_parameters():
                copy(param, weights[name])
            optimizer = torch.optim.AdamW(model.parameters(), lr=B10_LR)
            x, y = tensor(x_np), tensor(y_np.reshape(-1))

            def step():
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x).view(-1, B10_VOCAB), y)
                loss.backward()
                optimizer.step()
                return loss
            return step
        return setup

    def torch_setup():
        torch = _torch()
        return make(torch, _torch_copy, torch.from_numpy)()

    return {VIZGRAD: make(vg, _vizgrad_copy, vg.tensor), TORCH: torch_setup}


# --- B7: on a GPU ----------------------------------------------------------------
# The same models as B1, B4, B10 and B2, on CuPy against PyTorch CUDA; skipped without a GPU.
# GPU work is asynchronous, so every step ends by waiting for the device (both peers alike).
GPU = "cuda"    # where B7 runs (its test runs the same workloads on the CPU)


def _gpu_library(name):
    """vizgrad or PyTorch, when it can use a GPU here."""
    library = _torch() if name == TORCH else _require("vizgrad")
    if not library.cuda.is_available():
        raise Skipped("no GPU here")
    return library


def _gpu_peers(make_step):
    """``{peer: setup}`` for vizgrad and PyTorch on the GPU: ``make_step(library)`` builds a
    step, and each step then waits for the device (GPU work is asynchronous)."""
    def setup(name):
        def build():
            library = _gpu_library(name)
            step = make_step(library)

            def synchronized():
                loss = step()
                library.cuda.synchronize()
                return loss
            return synchronized
        return build
    return {VIZGRAD: setup(VIZGRAD), TORCH: setup(TORCH)}


def _gpu_step(make):
    """A training step on the GPU for both peers; ``make(library)`` returns ``(model,
    make_optimizer, x, y, loss_of)`` built on the CPU from the shared data."""
    def make_step(library):
        model, make_optimizer, x, y, loss_of = make(library)
        model.to(GPU)
        optimizer = make_optimizer(model.parameters())
        x, y = x.to(GPU), y.to(GPU)

        def step():
            optimizer.zero_grad()
            loss = loss_of(library, model(x), y)
            loss.backward()
            optimizer.step()
            return loss
        return step
    return _gpu_peers(make_step)


def _cross_entropy(library, logits, y):
    return library.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def _gpu_mlp(sizes, batch=1024):
    x_np, y_np, params_np = _mlp_data(batch, sizes)

    def make(library):
        nn = library.nn
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
        copy = _torch_copy if library.__name__ == "torch" else _vizgrad_copy
        _load_linear_layers(model[::2], params_np, copy)
        return (model, lambda params: library.optim.Adam(params, **ADAM),
                library.tensor(x_np), library.tensor(y_np), _cross_entropy)
    return _gpu_step(make)


@benchmark("B7-mlp", "gpu_mlp_step", "ms", 1e3, references=(TORCH,))
def gpu_mlp_step():
    """On a GPU: B1's MLP 784-512-512-10 at batch 1024, Adam; vizgrad (CuPy) against PyTorch CUDA."""
    return _gpu_mlp((784, 512, 512, 10))


@benchmark("B7-mlp4096", "gpu_wide_mlp_step", "ms", 1e3, references=(TORCH,))
def gpu_wide_mlp_step():
    """On a GPU: MLP 784-4096-4096-10 at batch 1024, Adam; vizgrad (CuPy) against PyTorch CUDA."""
    return _gpu_mlp((784, 4096, 4096, 10))


@benchmark("B7-conv", "gpu_conv_step", "ms", 1e3, references=(TORCH,))
def gpu_conv_step():
    """On a GPU: B4's CNN at batch 1024, SGD; vizgrad (CuPy) against PyTorch CUDA."""
    x_np, y_np, params_np = _conv_data(batch=1024)

    def make(library):
        model = _conv_net(library.nn)
        copy = _torch_copy if library.__name__ == "torch" else _vizgrad_copy
        for layer, weight, bias in zip((model[0], model[3], model[7]), params_np[::2], params_np[1::2]):
            copy(layer.weight, weight)
            copy(layer.bias, bias)
        return (model, lambda params: library.optim.SGD(params, lr=B4_LR),
                library.tensor(x_np), library.tensor(y_np), _cross_entropy)
    return _gpu_step(make)


@benchmark("B7-transformer", "gpu_transformer_step", "ms", 1e3, references=(TORCH,))
def gpu_transformer_step():
    """On a GPU: lesson 12's tiny transformer (B10), batch 32, AdamW; vizgrad (CuPy) against PyTorch CUDA."""
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, B10_VOCAB, (B10_BATCH, B10_CONTEXT + 1))
    import vizgrad as vg
    vg.manual_seed(0)
    weights = {name: value.numpy().copy() for name, value in _tiny_transformer(vg).state_dict().items()}

    def make(library):
        model = _tiny_transformer(library)
        copy = _torch_copy if library.__name__ == "torch" else _vizgrad_copy
        for name, param in model.named_parameters():
            copy(param, weights[name])
        return (model, lambda params: library.optim.AdamW(params, lr=B10_LR),
                library.tensor(tokens[:, :-1]), library.tensor(tokens[:, 1:]), _cross_entropy)
    return _gpu_step(make)


@benchmark("B7-small-ops", "gpu_small_op_overhead", "us/op", 1e6 / B2_OPS, references=(TORCH,))
def gpu_small_op_overhead():
    """On a GPU: B2's 1,000 chained elementwise ops on 10 numbers, sum, backward; time per op."""
    x_np = np.random.default_rng(0).uniform(-1, 1, 10).astype(np.float32)

    def make_step(library):
        x = library.tensor(x_np, device=GPU, requires_grad=True)

        def step():
            x.grad = None
            loss = _b2_chain(x, library.tanh).sum()
            loss.backward()
            return loss
        return step
    return _gpu_peers(make_step)


# --- measuring (in the worker process) -----------------------------------------
@dataclass
class Result:
    peer: str
    times: list = field(default_factory=list)   # seconds per step
    value: float = None                          # the loss, to check that peers agree
    skipped: str = None
    error: str = None


def _value(loss):
    """A step's result as a number to cross-check between peers (None: nothing to compare)."""
    return None if loss is None else float(loss.item() if hasattr(loss, "item") else loss)


def measure(bench, min_reps, budget, warmup, log):
    """Warm every peer up, then time them in interleaved rounds; return one Result per peer."""
    results, steps = [], {}
    for peer, setup in bench.setups().items():
        result = Result(peer)
        results.append(result)
        try:
            step = setup()
            estimate = float("inf")          # the fastest warm-up step (the first ones import, attach)
            for _ in range(warmup):
                start = time.perf_counter()
                result.value = _value(step())
                estimate = min(estimate, time.perf_counter() - start)
            steps[peer] = (step, estimate)
        except Skipped as reason:
            result.skipped = str(reason)
        except Exception as error:  # a bug in a peer's code: report it, measure the others
            result.error = f"{type(error).__name__}: {error}"
            log(f"  {bench.key} {peer}: {result.error}")

    rounds = max(1, min(5, min_reps))
    by_peer = {r.peer: r for r in results}
    for _ in range(rounds):
        for peer, (step, estimate) in steps.items():
            reps = max(-(-min_reps // rounds), int(budget / rounds / max(estimate, 1e-9)))
            result = by_peer[peer]
            if result.error:
                continue
            gc.collect()
            try:
                step()        # untimed: a round's first step may switch listeners (B5)
                for _ in range(min(reps, 1000)):
                    start = time.perf_counter()
                    out = step()
                    seconds = time.perf_counter() - start
                    result.times.append(out if isinstance(out, Elapsed) else seconds)
            except Exception as error:
                result.error, result.times = f"{type(error).__name__}: {error}", []
                log(f"  {bench.key} {peer}: {result.error}")
    for result in results:
        if result.times:
            log(f"  {bench.key} {result.peer}: {_shown(bench, statistics.median(result.times)):.2f} {bench.unit}"
                f" ({len(result.times)} reps)")
    return results


def _versions():
    versions = {"python": platform.python_version()}
    for package in ("numpy", "vizgrad", "torch", "autograd"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        versions["blas"] = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:
        pass
    import vizgrad
    if vizgrad.cuda.is_available():
        versions["gpu"] = vizgrad.cuda.get_device_name()
        versions["cupy"] = metadata.version(next(d for d in ("cupy-cuda13x", "cupy-cuda12x", "cupy")
                                                 if _installed(d)))
    return versions


def _installed(distribution):
    try:
        metadata.version(distribution)
        return True
    except metadata.PackageNotFoundError:
        return False


def worker(args):
    """Run the benchmarks in this process (under whatever allocator settings it got)."""
    def log(line):
        print(line, file=sys.stderr, flush=True)

    output = {"versions": _versions(), "benchmarks": {}}
    for key in args.only:
        bench = BENCHMARKS[key]
        results = measure(bench, args.min_reps, args.budget, args.warmup, log)
        if bench.teardown is not None:
            bench.teardown()
        output["benchmarks"][key] = [vars(r) for r in results]
    Path(args.worker_out).write_text(json.dumps(output))


# --- the driver: one subprocess per allocator setting, then the table ----------
def run_setting(setting, args):
    label, extra = SETTINGS[setting]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(extra)
    print(f"[{setting}] {label}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "worker.json"
        command = [sys.executable, __file__, "--worker-out", str(out), "--only", ",".join(args.only),
                   "--min-reps", str(args.min_reps), "--budget", str(args.budget), "--warmup", str(args.warmup)]
        load_before = os.getloadavg()[0]
        subprocess.run(command, env=env, check=True)
        measured = json.loads(out.read_text())
    # Other processes on the machine skew every figure; the load average tells afterwards.
    measured["load_average"] = {"before": load_before, "after": os.getloadavg()[0]}
    if max(measured["load_average"].values()) > 0.5 * (os.cpu_count() or 1):
        print(f"  note: load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after: "
              "other processes were busy, figures are noisy", flush=True)
    return measured


def summarize(bench, rows):
    """Median, reps and ratios to the reference peers for each peer of one bench."""
    medians = {r["peer"]: statistics.median(r["times"]) for r in rows if r["times"]}
    check = next((r["value"] for r in rows if r["value"] is not None), None)
    summary = []
    for r in rows:
        entry = {"peer": r["peer"], "unit": bench.unit}
        if r["times"]:
            # ratios are of times (how many times slower than the reference), whatever the unit
            entry.update(median=_shown(bench, medians[r["peer"]]), reps=len(r["times"]),
                         best=_shown(bench, min(r["times"])), value=r["value"],
                         ratios={ref: medians[r["peer"]] / medians[ref] for ref in bench.references
                                 if ref in medians and ref != r["peer"]})
            if check is not None and r["value"] is not None and abs(r["value"] - check) > 1e-3 * max(1.0, abs(check)):
                entry["warning"] = f"loss {r['value']:.6g} differs from {check:.6g}"
            target = check_target(bench, entry)
            if target is not None:
                entry["target"] = target
        else:
            entry["skipped" if r["skipped"] else "error"] = r["skipped"] or r["error"]
        summary.append(entry)
    return summary


def format_table(report, args):
    settings = list(report["settings"])
    header = ["bench", "peer"]
    for setting in settings:
        header += [f"median ({setting})", f"ratio ({setting})"]
    lines = [header]
    for key in args.only:
        bench = BENCHMARKS[key]
        peers = [e["peer"] for e in report["settings"][settings[0]]["benchmarks"][key]]
        for i, peer in enumerate(peers):
            line = [f"{bench.key} {bench.name}" if i == 0 else "", peer]
            for setting in settings:
                entry = report["settings"][setting]["benchmarks"][key][i]
                if "median" in entry:
                    ratios = ", ".join(f"{v:.2f}x {_short(ref)}" for ref, v in entry["ratios"].items())
                    line += [f"{entry['median']:.2f} {bench.unit}", ratios or ("(reference)" if bench.references else "")]
                    if "target" in entry:
                        line[-1] = f"{line[-1]}  {_target_text(bench, entry['target'])}".lstrip()
                    if "warning" in entry:
                        line[-1] += f"  [{entry['warning']}]"
                else:
                    line += [entry.get("skipped") or "error (see above)", ""]
            lines.append(line)
    widths = [max(len(row[c]) for row in lines) for c in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(text)


def _shown(bench, seconds):
    """A time per step in the bench's unit (a rate for steps/s)."""
    return 1.0 / seconds if bench.scale is None else seconds * bench.scale


def _short(peer):
    return {NUMPY: "NumPy", TORCH: "torch", AUTOGRAD: "autograd"}.get(peer, peer)


def main(argv=None):
    parser = argparse.ArgumentParser(description="vizgrad benchmarks against its peers.")
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(BENCHMARKS),
                        help=f"comma-separated keys (default: all of {','.join(BENCHMARKS)})")
    parser.add_argument("--settings", type=lambda s: s.split(","), default=list(SETTINGS),
                        help=f"allocator settings (default: {','.join(SETTINGS)})")
    parser.add_argument("--min-reps", type=int, default=10, help="timed repetitions per peer, at least (default 10)")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timing per peer (default 2)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON output (default {RESULTS.relative_to(HERE.parent)})")
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.min_reps = max(args.min_reps, 5)
    args.warmup = max(args.warmup, 1)
    unknown = [k for k in args.only if k not in BENCHMARKS] + [s for s in args.settings if s not in SETTINGS]
    if unknown:
        parser.error(f"unknown benchmark or setting: {', '.join(unknown)}")
    if args.worker_out:
        worker(args)
        return 0

    report = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "timing": {"statistic": "median", "min_reps": args.min_reps, "budget_s": args.budget,
                         "warmup": args.warmup},
              "definitions": {k: {"name": BENCHMARKS[k].name, "unit": BENCHMARKS[k].unit,
                                  "description": BENCHMARKS[k].description,
                                  "references": list(BENCHMARKS[k].references),
                                  "target": BENCHMARKS[k].target} for k in args.only},
              "settings": {}}
    for setting in args.settings:
        measured = run_setting(setting, args)
        report["versions"] = measured["versions"]
        report["settings"][setting] = {
            "label": SETTINGS[setting][0], "env": SETTINGS[setting][1],
            "load_average": measured["load_average"],
            "benchmarks": {k: summarize(BENCHMARKS[k], rows) for k, rows in measured["benchmarks"].items()}}

    print()
    print(format_table(report, args))
    print()
    print("settings: " + "; ".join(f"{s} = {SETTINGS[s][0]}" for s in args.settings))
    print("versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    errors = any("error" in e for s in report["settings"].values() for rows in s["benchmarks"].values() for e in rows)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
