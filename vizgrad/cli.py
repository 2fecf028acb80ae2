"""The ``vizgrad`` command line.

``vizgrad demo`` trains a small MLP on a two-moons data set with vizgrad's own
engine (tensors, matmul, autograd, a hand-written SGD step) and prints the loss as
it falls, then the accuracy. ``python -m vizgrad demo`` does the same.
"""

import argparse
import math
import sys
import time

import numpy as np

import vizgrad as vg

LAYER_SIZES = (2, 16, 16, 1)


def two_moons(n, noise, seed):
    """``n`` points on two interleaved half circles plus Gaussian noise, and labels +1/-1.

    Returns float32 arrays ``x`` of shape (n, 2) and ``y`` of shape (n, 1).
    """
    rng = np.random.default_rng(seed)
    upper = n // 2
    angles = rng.uniform(0.0, math.pi, n)
    x = np.where(np.arange(n)[:, None] < upper,
                 np.stack([np.cos(angles), np.sin(angles)], axis=1),            # the upper moon
                 np.stack([1.0 - np.cos(angles), 0.5 - np.sin(angles)], axis=1))  # the lower one
    x = x + noise * rng.standard_normal((n, 2))
    y = np.where(np.arange(n) < upper, 1.0, -1.0)[:, None]
    return x.astype(np.float32), y.astype(np.float32)


def init_mlp(sizes):
    """Weights with variance 1/fan_in and zero biases, as leaf tensors that require grad."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        weight = (vg.randn(fan_in, fan_out) * (1.0 / math.sqrt(fan_in))).requires_grad_()
        bias = vg.zeros(fan_out, requires_grad=True)
        params += [weight, bias]
    return params


def mlp(params, x):
    """2-16-16-1: a ReLU layer, a tanh layer, then one score per point."""
    w1, b1, w2, b2, w3, b3 = params
    hidden = (x @ w1 + b1).relu()
    hidden = (hidden @ w2 + b2).tanh()
    return hidden @ w3 + b3


def softplus(z):
    """log(1 + e^z), written so that large |z| neither overflows nor loses precision."""
    return z.relu() + (-z.abs()).exp().log1p()


def logistic_loss(scores, y):
    """Mean of -log sigmoid(y * score) = softplus(-y * score): small when signs agree."""
    return softplus(-y * scores).mean()


def train(steps=500, seed=0, lr=0.5, points=200, log_every=None, out=print):
    """Train the MLP with full-batch SGD; return the losses (one per step) and the final accuracy."""
    vg.manual_seed(seed)
    x_np, y_np = two_moons(points, noise=0.1, seed=seed)
    x, y = vg.tensor(x_np), vg.tensor(y_np)
    params = init_mlp(LAYER_SIZES)
    log_every = log_every or max(1, steps // 10)

    losses = []
    for step in range(steps):
        loss = logistic_loss(mlp(params, x), y)
        loss.backward()
        with vg.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        losses.append(loss.item())
        if step % log_every == 0 or step == steps - 1:
            out(f"step {step:5d}   loss {losses[-1]:.4f}")

    with vg.no_grad():
        scores = mlp(params, x)
        final_loss = logistic_loss(scores, y).item()
        accuracy = ((scores * y) > 0).float().mean().item()
    return losses, final_loss, accuracy


def demo(args):
    sizes = "-".join(str(n) for n in LAYER_SIZES)
    print(f"vizgrad {vg.__version__} demo: MLP {sizes} (ReLU, tanh) on {args.points} two-moons points, "
          f"seed {args.seed}, full-batch SGD, lr {args.lr}, {args.steps} steps")
    start = time.perf_counter()
    _, final_loss, accuracy = train(args.steps, args.seed, args.lr, args.points)
    seconds = time.perf_counter() - start
    print(f"final loss {final_loss:.4f}, accuracy {accuracy:.1%} "
          f"({round(accuracy * args.points)}/{args.points} points), {seconds:.2f} s")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="vizgrad", description="vizgrad: a visual autograd environment.")
    parser.add_argument("--version", action="version", version=f"vizgrad {vg.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")

    demo_parser = commands.add_parser("demo", help="train a tiny MLP on two moons with vizgrad and print the loss",
                                      description="Train a 2-16-16-1 MLP on two moons with vizgrad's engine.")
    demo_parser.add_argument("--steps", type=_positive, default=500, help="SGD steps (default 500)")
    demo_parser.add_argument("--seed", type=int, default=0, help="seed of the data and the weights (default 0)")
    demo_parser.add_argument("--lr", type=float, default=0.5, help="learning rate (default 0.5)")
    demo_parser.add_argument("--points", type=_positive, default=200, help="data set size (default 200)")
    demo_parser.set_defaults(run=demo)
    return parser


def _positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def main(argv=None):
    """Entry point of the ``vizgrad`` script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
