"""B1, B1f, B3, B4: one training step of the models learners train on the CPU, against
PyTorch CPU, HIPS autograd, micrograd and hand-written NumPy.

B1f times an MLP's forward and backward, B1 the same with Adam, B3 micrograd's two-moons
demo, B4 a small CNN. The hand-written NumPy references (forward, backward and Adam written
directly on arrays, no autograd) are the practical limit for any NumPy-backed engine on the
same BLAS. Also here: the shared data, the NumPy Adam, and the helpers that load the same
weights into every peer (the watching, transformer and GPU benches use them too).
"""

import numpy as np

from benchmarks.harness import (AUTOGRAD, NUMPY, TORCH, VIZGRAD, benchmark, cpu_torch, require, training_step,
                                vizgrad_and_torch)

MICROGRAD = "micrograd"
ADAM = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)


# --- shared: the data, the same weights in every peer, the MLP in HIPS autograd and NumPy --
def mlp_data(batch=128, sizes=(784, 512, 512, 10), seed=0):
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


def load_linear_layers(layers, params_np, to_array):
    """Copy (weight (in, out), bias) pairs into Linear layers, whose weights are (out, in)."""
    for layer, (weight, bias) in zip(layers, zip(params_np[::2], params_np[1::2])):
        to_array(layer.weight, weight.T)
        to_array(layer.bias, bias)


def vizgrad_copy(param, array):
    """Copy a NumPy array into a vizgrad parameter, outside autograd."""
    import vizgrad as vg
    with vg.no_grad():
        param.copy_(vg.tensor(np.ascontiguousarray(array)))


def torch_copy(param, array):
    """Copy a NumPy array into a PyTorch parameter, outside autograd."""
    import torch
    with torch.no_grad():
        param.copy_(torch.from_numpy(np.ascontiguousarray(array)))


def copier(library):
    """:func:`torch_copy` for PyTorch, :func:`vizgrad_copy` for vizgrad."""
    return torch_copy if library.__name__ == "torch" else vizgrad_copy


def _autograd_mlp_loss(x_np, y_np):
    """The MLP's loss in HIPS autograd, as a function of its (weight, bias) list."""
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp
    rows_np = np.arange(x_np.shape[0])

    def loss(params):
        w1, b1, w2, b2, w3, b3 = params
        hidden = anp.maximum(x_np @ w1 + b1, 0)
        hidden = anp.maximum(hidden @ w2 + b2, 0)
        logits = hidden @ w3 + b3
        return anp.mean(logsumexp(logits, axis=1) - logits[rows_np, y_np])
    return loss


def _numpy_mlp(x_np, y_np, params):
    """The MLP's forward and backward written directly on NumPy: ``gradients()`` returns the
    loss and the gradients, in the order of ``params``."""
    w1, b1, w2, b2, w3, b3 = params
    batch = x_np.shape[0]
    rows_np = np.arange(batch)

    def gradients():
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
        return loss, [g_w1, g_b1, g_w2, g_b2, g_w3, g_b3]
    return gradients


# --- B1f ------------------------------------------------------------------------
@benchmark("B1f", "mlp_fwd_bwd", "ms", 1e3, references=(NUMPY, TORCH))
def mlp_fwd_bwd():
    """MLP 784-512-512-10, ReLU, float32, batch 128, logsumexp cross-entropy; forward + backward."""
    x_np, y_np, params_np = mlp_data()
    batch = x_np.shape[0]

    def library_step(library, tensor):
        x, y, rows = tensor(x_np), tensor(y_np), library.arange(batch)
        params = [library.tensor(p, requires_grad=True) for p in params_np]
        w1, b1, w2, b2, w3, b3 = params

        def step():
            for p in params:
                p.grad = None
            hidden = (x @ w1 + b1).relu()
            hidden = (hidden @ w2 + b2).relu()
            logits = hidden @ w3 + b3
            loss = (library.logsumexp(logits, dim=1) - logits[rows, y]).mean()
            loss.backward()
            return loss
        return step

    def autograd_setup():
        require("autograd")
        from autograd import value_and_grad
        loss_and_grad = value_and_grad(_autograd_mlp_loss(x_np, y_np))
        return lambda: loss_and_grad(params_np)[0]

    def numpy_setup():
        gradients = _numpy_mlp(x_np, y_np, params_np)
        return lambda: gradients()[0]

    return {**vizgrad_and_torch(library_step), AUTOGRAD: autograd_setup, NUMPY: numpy_setup}


# --- B1 -------------------------------------------------------------------------
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


def _adam_training(library, model, x, y):
    """Adam on ``model`` and B1's training step (cross-entropy of ``model(x)`` against ``y``)."""
    optimizer = library.optim.Adam(model.parameters(), **ADAM)
    cross_entropy = library.nn.functional.cross_entropy
    return optimizer, training_step(optimizer, lambda: cross_entropy(model(x), y))


def vizgrad_mlp_training(x_np, y_np, params_np):
    """B1's model, Adam and training step in vizgrad, from the shared data: (model, optimizer, step)."""
    import vizgrad as vg
    model = vg.nn.MLP([784, 512, 512, 10])
    load_linear_layers(model[::2], params_np, vizgrad_copy)
    optimizer, step = _adam_training(vg, model, vg.tensor(x_np), vg.tensor(y_np))
    return model, optimizer, step


@benchmark("B1", "mlp_step", "ms", 1e3, references=(NUMPY, TORCH))
def mlp_step():
    """MLP 784-512-512-10, ReLU, float32, batch 128, softmax cross-entropy; forward + backward + Adam."""
    x_np, y_np, params_np = mlp_data()

    def vizgrad_setup():
        return vizgrad_mlp_training(x_np, y_np, params_np)[2]

    def torch_setup():
        torch = cpu_torch()
        nn = torch.nn
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        load_linear_layers(model[::2], params_np, torch_copy)
        return _adam_training(torch, model, torch.from_numpy(x_np), torch.from_numpy(y_np))[1]

    def with_numpy_adam(gradients, optimizer):
        """A step: ``gradients()`` gives the loss and the gradients of the parameters ``optimizer`` updates."""
        def step():
            value, grads = gradients()
            optimizer.step(grads)
            return value
        return step

    def autograd_setup():
        require("autograd")
        from autograd import value_and_grad
        params = [p.copy() for p in params_np]
        optimizer = NumpyAdam(params, **ADAM)
        loss_and_grad = value_and_grad(_autograd_mlp_loss(x_np, y_np))
        return with_numpy_adam(lambda: loss_and_grad(params), optimizer)

    def numpy_setup():
        params = [p.copy() for p in params_np]
        return with_numpy_adam(_numpy_mlp(x_np, y_np, params), NumpyAdam(params, **ADAM))

    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup, AUTOGRAD: autograd_setup, NUMPY: numpy_setup}


# --- B3 -------------------------------------------------------------------------
B3_ALPHA, B3_LR = 1e-4, 0.05


def _moons():
    """micrograd's demo data: 100 two-moons points (noise 0.1, seed 0), labels -1 and +1."""
    from vizgrad.data import make_moons
    x, y = make_moons(100, noise=0.1, seed=0)
    return x.numpy(), (y.numpy() * 2 - 1).astype(np.float32)


def _svm_training(library, model, relu, x, y):
    """B3's full-batch SGD step on ``model`` (vizgrad or PyTorch): SVM max-margin loss + L2."""
    optimizer = library.optim.SGD(model.parameters(), lr=B3_LR)
    params = list(model.parameters())

    def loss():
        scores = model(x).squeeze(1)
        return relu(1 - y * scores).mean() + B3_ALPHA * sum((p * p).sum() for p in params)
    return training_step(optimizer, loss)


@benchmark("B3", "micrograd_moons", "ms", 1e3, references=(TORCH,))
def micrograd_moons():
    """MLP 2-16-16-1 (ReLU hidden), 100 moons points; SVM max-margin loss + 1e-4 L2; full-batch SGD step."""
    x_np, y_np = _moons()
    _, _, params_np = mlp_data(batch=1, sizes=(2, 16, 16, 1))

    def vizgrad_setup():
        import vizgrad as vg
        import vizgrad.nn.functional as F
        model = vg.nn.MLP([2, 16, 16, 1])
        load_linear_layers(model[::2], params_np, vizgrad_copy)
        return _svm_training(vg, model, F.relu, vg.tensor(x_np), vg.tensor(y_np))

    def torch_setup():
        torch = cpu_torch()
        nn = torch.nn
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
        load_linear_layers(model[::2], params_np, torch_copy)
        return _svm_training(torch, model, torch.relu, torch.from_numpy(x_np), torch.from_numpy(y_np))

    def autograd_setup():
        require("autograd")
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
        require("micrograd")
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


def conv_data(batch=32, seed=0):
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


def conv_net(nn):
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(784, 10))


def load_conv_layers(model, params_np, copy):
    """Copy :func:`conv_data`'s parameters into :func:`conv_net`'s two convolutions and its linear layer."""
    for layer, weight, bias in zip((model[0], model[3], model[7]), params_np[::2], params_np[1::2]):
        copy(layer.weight, weight)
        copy(layer.bias, bias)


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
    x_np, y_np, params_np = conv_data()
    batch = x_np.shape[0]
    rows_np = np.arange(batch)

    def library_step(library, tensor):
        model = conv_net(library.nn)
        load_conv_layers(model, params_np, copier(library))
        optimizer = library.optim.SGD(model.parameters(), lr=B4_LR)
        x, y = tensor(x_np), tensor(y_np)
        cross_entropy = library.nn.functional.cross_entropy
        return training_step(optimizer, lambda: cross_entropy(model(x), y))

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

    return {**vizgrad_and_torch(library_step), NUMPY: numpy_setup}
