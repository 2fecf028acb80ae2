"""The ``vizgrad`` command line.

``vizgrad demo`` trains a small MLP (``vizgrad.nn``) on two moons
(``vizgrad.data.make_moons``) with SGD while a recorder (``vizgrad.trace``) watches,
then writes one self-contained HTML report: the computation graph of the last
training step with its backward pass to replay, the loss curve, the gradient flow
per layer over training and the decision boundary. ``python -m vizgrad demo`` does
the same.

``vizgrad lab`` opens JupyterLab on the lessons (``vizgrad.lessons.lab``);
``vizgrad lessons check-solutions`` runs the lessons' reference solutions through
their checkers, ``vizgrad lessons grade`` grades learners' notebooks (``vizgrad.lessons``).
"""

import argparse
import math
import os
import sys
import time

import numpy as np

import vizgrad as vg
from vizgrad import diagnostics, nn

LAYER_SIZES = (2, 16, 16, 1)
DEFAULT_REPORT = "vizgrad-demo.html"
GRAD_FLOW_SAMPLES = 25      # how many times training samples the gradient flow
BOUNDARY_CELLS = 72         # the decision-boundary picture is BOUNDARY_CELLS² cells


def two_moons(n, noise, seed):
    """``vizgrad.data.make_moons`` as NumPy arrays, with labels +1 (class 1) and -1 (class 0)
    as the margin loss below wants them.

    Returns float32 arrays ``x`` of shape (n, 2) and ``y`` of shape (n, 1).
    """
    points, labels = vg.data.make_moons(n, noise=noise, seed=seed)
    signs = np.where(labels.numpy() == 1, 1.0, -1.0)
    return points.numpy().astype(np.float32), signs[:, None].astype(np.float32)


def make_mlp(sizes=LAYER_SIZES):
    """2-16-16-1: a ReLU layer, a tanh layer, then one score per point."""
    first, hidden, second, out = sizes
    return nn.Sequential(nn.Linear(first, hidden), nn.ReLU(), nn.Linear(hidden, second), nn.Tanh(),
                         nn.Linear(second, out))


def softplus(z):
    """log(1 + e^z), written so that large |z| neither overflows nor loses precision."""
    return z.relu() + (-z.abs()).exp().log1p()


def logistic_loss(scores, y):
    """Mean of -log sigmoid(y * score) = softplus(-y * score): small when signs agree."""
    return softplus(-y * scores).mean()


def fit(model, x, y, steps, lr, on_step=None):
    """Full-batch SGD on the logistic loss; ``on_step(step, loss)`` runs after each backward
    pass (gradients in place) and before the update. Returns the losses, one per step."""
    optimizer = vg.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = logistic_loss(model(x), y)
        loss.backward()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
        optimizer.step()
    return losses


def evaluate(model, x, y):
    """(loss, accuracy) of ``model`` on the points ``x`` with ±1 labels ``y``."""
    with vg.no_grad():
        scores = model(x)
        return logistic_loss(scores, y).item(), ((scores * y) > 0).float().mean().item()


def train(steps=500, seed=0, lr=0.5, points=200, log_every=None, out=print):
    """Train the MLP; print the loss every ``log_every`` steps through ``out``; return the
    losses (one per step), the final loss and the accuracy."""
    vg.manual_seed(seed)
    x_np, y_np = two_moons(points, noise=0.1, seed=seed)
    x, y = vg.tensor(x_np), vg.tensor(y_np)
    model = make_mlp()
    log_every = log_every or max(1, steps // 10)

    def log(step, loss):
        if step % log_every == 0 or step == steps - 1:
            out(f"step {step:5d}   loss {loss:.4f}")

    losses = fit(model, x, y, steps, lr, log)
    final_loss, accuracy = evaluate(model, x, y)
    return losses, final_loss, accuracy


class ProgressBar:
    """A one-line progress bar, redrawn in place with a carriage return on a terminal;
    elsewhere (logs, pipes) only its final state is written."""

    def __init__(self, total, label="", width=30, stream=None):
        self.total, self.label, self.width = max(1, total), label, width
        self.stream = stream if stream is not None else sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done, self.note, self._drawn = 0, "", None

    def line(self):
        filled = self.width * self.done // self.total
        return (f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done}/{self.total} {self.note}").rstrip()

    def update(self, done, note=""):
        self.done, self.note = min(done, self.total), note
        percent = 100 * self.done // self.total
        if self.live and percent != self._drawn:
            self._drawn = percent
            self.stream.write("\r" + self.line())
            self.stream.flush()

    def close(self):
        self.stream.write(("\r" if self.live else "") + self.line() + "\n")
        self.stream.flush()


def decision_boundary(model, x_np, y_np, cells=BOUNDARY_CELLS):
    """The report's decision-boundary panel: P(class 1) on a grid around the points."""
    from .render.html import decision_boundary_panel
    (xmin, ymin), (xmax, ymax) = x_np.min(axis=0) - 0.5, x_np.max(axis=0) + 0.5
    gx, gy = np.meshgrid(np.linspace(xmin, xmax, cells), np.linspace(ymin, ymax, cells))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
    with vg.no_grad():
        scores = model(vg.tensor(grid)).numpy().reshape(cells, cells)
    probabilities = 1.0 / (1.0 + np.exp(-scores.astype(np.float64)))
    return decision_boundary_panel(probabilities, (xmin, xmax, ymin, ymax), x_np, (y_np[:, 0] > 0).astype(int),
                                   classes=("class 0", "class 1"), caption="shade: the model's confidence")


def demo(args):
    from .render.html import BundleMissing, build_report
    sizes = "-".join(str(n) for n in LAYER_SIZES)
    print(f"vizgrad {vg.__version__} demo: MLP {sizes} (ReLU, tanh) on {args.points} two-moons points, "
          f"seed {args.seed}, full-batch SGD, lr {args.lr}, {args.steps} steps")
    vg.manual_seed(args.seed)
    x_np, y_np = two_moons(args.points, noise=0.1, seed=args.seed)
    x, y = vg.tensor(x_np), vg.tensor(y_np)
    model = make_mlp()
    sample_every = max(1, args.steps // GRAD_FLOW_SAMPLES)
    grad_history = []
    bar = ProgressBar(args.steps, "training")

    def on_step(step, loss):
        vg.events.mark("train", step=step, loss=loss)
        if step % sample_every == 0 or step == args.steps - 1:
            grad_history.append((step, diagnostics.grad_flow(model)))
        bar.update(step + 1, f"loss {loss:.4f}")

    start = time.perf_counter()
    # the whole run: marks and optimizer steps only (cheap); no per-tensor statistics
    with vg.trace(values=False, grads=False, source=False, max_steps=2 * args.steps) as training:
        fit(model, x, y, args.steps, args.lr, on_step)
    seconds = time.perf_counter() - start
    bar.close()
    final_loss, accuracy = evaluate(model, x, y)
    print(f"final loss {final_loss:.4f}, accuracy {accuracy:.1%} "
          f"({round(accuracy * args.points)}/{args.points} points), {seconds:.2f} s")
    # one more forward and backward on the trained model, recorded in full, for the graph panel
    with vg.trace() as recorded:
        logistic_loss(model(x), y).backward()
    marks = [entry["values"] for entry in training.steps if entry["kind"] == "mark" and entry["name"] == "train"]
    try:
        path = build_report(
            args.out, recorded.graph, title="vizgrad demo: an MLP learns two moons",
            subtitle="One forward and backward pass of the trained model, as a graph whose backward pass "
                     "you can replay; then how training went.",
            loss_curve=([m["step"] for m in marks], [m["loss"] for m in marks]), grad_flow=grad_history,
            decision_boundary=decision_boundary(model, x_np, y_np),
            summary={"model": f"MLP {sizes}", "data": f"{args.points} points", "optimizer": f"SGD, lr {args.lr}",
                     "steps": args.steps, "final loss": f"{final_loss:.4f}", "accuracy": f"{accuracy:.1%}"})
    except BundleMissing as error:
        print(f"vizgrad demo: no report written: {error}", file=sys.stderr)
        return 1
    print(f"report: {os.path.abspath(path)}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="vizgrad", description="vizgrad: a visual autograd environment.")
    parser.add_argument("--version", action="version", version=f"vizgrad {vg.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")

    demo_parser = commands.add_parser(
        "demo", help="train a tiny MLP on two moons and write an HTML report of it",
        description="Train a 2-16-16-1 MLP on two moons with vizgrad and write a self-contained HTML report: "
                    "the computation graph with its backward replay, the loss curve, the gradient flow and "
                    "the decision boundary.")
    demo_parser.add_argument("--out", type=_report_path, default=DEFAULT_REPORT, metavar="PATH",
                             help=f"where to write the report (default {DEFAULT_REPORT})")
    demo_parser.add_argument("--steps", type=_positive, default=500, help="SGD steps (default 500)")
    demo_parser.add_argument("--seed", type=int, default=0, help="seed of the data and the weights (default 0)")
    demo_parser.add_argument("--lr", type=_learning_rate, default=0.5, help="learning rate (default 0.5)")
    demo_parser.add_argument("--points", type=_positive, default=200, help="data set size (default 200)")
    demo_parser.set_defaults(run=demo)

    from .lessons import lab
    from .lessons.__main__ import add_commands as add_lessons_commands
    lab.add_parser(commands)
    lessons_parser = commands.add_parser(
        "lessons", help="the lessons' exercises: check-solutions, list, grade",
        description="The exercises of the lessons (lessons/*.ipynb) and their checkers.")
    add_lessons_commands(lessons_parser.add_subparsers(dest="lessons_command", metavar="command"))
    lessons_parser.set_defaults(run=_lessons, lessons_help=lessons_parser.print_help)
    return parser


def _lessons(args):
    if args.lessons_command is None:
        args.lessons_help()
        return 2
    return args.lessons_run(args)


def _positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _learning_rate(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def _report_path(text):
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file path such as "
                                         f"{os.path.join(text, DEFAULT_REPORT)!r}")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder {folder!r} does not exist")
    return text


def main(argv=None):
    """Entry point of the ``vizgrad`` script; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if args.command != "lab" or not all(item.startswith("--") for item in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.jupyter_args = extra       # `vizgrad lab` passes JupyterLab's own options through
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
