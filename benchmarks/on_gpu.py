"""B7: the CPU benches' models on a GPU, vizgrad on CuPy against PyTorch CUDA: B1's MLP at
batch 1024 (and at width 4096), B4's CNN at batch 1024, B10's transformer, and B2's small
ops. Skipped where no GPU is usable; ``benchmarks/gpu.py`` records them with the CUDA tests.
GPU work is asynchronous, so every step ends by waiting for the device (both peers alike)."""

import numpy as np

from benchmarks.harness import TORCH, VIZGRAD, Skipped, benchmark, cpu_torch, require, training_step
from benchmarks.small_ops import B2_OPS, b2_step
from benchmarks.training import ADAM, B4_LR, conv_data, conv_net, copier, load_conv_layers, load_linear_layers, mlp_data
from benchmarks.transformer import B10_LR, load_weights, tiny_transformer, transformer_tokens, transformer_weights

GPU = "cuda"    # where B7 runs (its test runs the same workloads on the CPU)


def _gpu_library(name):
    """vizgrad or PyTorch, when it can use a GPU here."""
    library = cpu_torch() if name == TORCH else require("vizgrad")
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
    make_optimizer, x, y)`` built on the CPU from the shared data; the loss is cross-entropy."""
    def make_step(library):
        model, make_optimizer, x, y = make(library)
        model.to(GPU)
        optimizer = make_optimizer(model.parameters())
        x, y = x.to(GPU), y.to(GPU)
        cross_entropy = library.nn.functional.cross_entropy

        def loss():
            logits = model(x)
            return cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        return training_step(optimizer, loss)
    return _gpu_peers(make_step)


def _gpu_mlp(sizes, batch=1024):
    x_np, y_np, params_np = mlp_data(batch, sizes)

    def make(library):
        nn = library.nn
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
        load_linear_layers(model[::2], params_np, copier(library))
        return (model, lambda params: library.optim.Adam(params, **ADAM),
                library.tensor(x_np), library.tensor(y_np))
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
    x_np, y_np, params_np = conv_data(batch=1024)

    def make(library):
        model = conv_net(library.nn)
        load_conv_layers(model, params_np, copier(library))
        return (model, lambda params: library.optim.SGD(params, lr=B4_LR),
                library.tensor(x_np), library.tensor(y_np))
    return _gpu_step(make)


@benchmark("B7-transformer", "gpu_transformer_step", "ms", 1e3, references=(TORCH,))
def gpu_transformer_step():
    """On a GPU: lesson 12's tiny transformer (B10), batch 32, AdamW; vizgrad (CuPy) against PyTorch CUDA."""
    x_np, y_np = transformer_tokens()
    weights = transformer_weights()

    def make(library):
        model = tiny_transformer(library)
        load_weights(library, model, weights)
        return (model, lambda params: library.optim.AdamW(params, lr=B10_LR),
                library.tensor(x_np), library.tensor(y_np))
    return _gpu_step(make)


@benchmark("B7-small-ops", "gpu_small_op_overhead", "us/op", 1e6 / B2_OPS, references=(TORCH,))
def gpu_small_op_overhead():
    """On a GPU: B2's 1,000 chained elementwise ops on 10 numbers, sum, backward; time per op."""
    x_np = np.random.default_rng(0).uniform(-1, 1, 10).astype(np.float32)
    return _gpu_peers(lambda library: b2_step(library, library.tensor(x_np, device=GPU, requires_grad=True)))
