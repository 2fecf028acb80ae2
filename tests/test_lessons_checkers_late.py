"""The checkers of lessons 05-09 (vizgrad/lessons/exercises_late.py): every reference
solution passes, and a typical wrong answer to each exercise is caught, named (its
``mistake`` kind) and given a hint."""

import json
import math
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.lessons import exercises_late
from vizgrad.lessons.exercises_late import synthetic_digits
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_module, load_solution
from checker_helpers import assert_caught, run

ROOT = Path(__file__).resolve().parent.parent
LATE = ["5.1", "5.2", "5.3", "5.4", "6.1", "6.2", "6.3", "7.1", "7.2", "7.3", "7.4", "8.1", "8.2", "9.1", "9.2",
        "9.3"]


def solution(name):
    module, _, attribute = name.partition(":")
    return getattr(load_module(module), attribute)


@pytest.mark.parametrize("exercise_id", LATE)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    exercise = EXERCISES[exercise_id]
    result = exercise(*load_solution(exercise))
    assert result.passed, str(result)
    assert result.details or result.message


def test_every_late_exercise_is_tested_here():
    ensure_loaded()
    late = sorted((i for i, e in EXERCISES.items() if 5 <= int(e.lesson) <= 9),
                  key=lambda i: tuple(map(int, i.split("."))))
    assert late == LATE


@pytest.mark.parametrize("exercise_id", LATE)
def test_a_fresh_stub_is_not_done(exercise_id):
    def stub(*args, **kwargs):
        raise NotImplementedError
    result = run(exercise_id, stub)
    assert result.status == "not done", str(result)


def test_each_late_exercise_is_called_by_its_lesson():
    called = {}
    for path in sorted(ROOT.glob("lessons/0[5-9]-*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
        for attribute in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source):
            called[".".join(attribute)] = path.name
    assert sorted(called, key=lambda i: tuple(map(int, i.split(".")))) == LATE
    for exercise_id, name in called.items():
        assert name.startswith(f"{int(exercise_id.split('.')[0]):02d}-"), (exercise_id, name)


# --- lesson 05 ------------------------------------------------------------------------------------
def test_5_1_plain_sgd_is_caught():
    assert_caught(run("5.1", lambda p, g, b, lr, mu: (p - lr * g, b)), "no-momentum", "buffer")


def test_5_1_dampened_buffer_is_caught():
    def dampened(p, g, b, lr, mu):
        b = mu * b + (1 - mu) * g
        return p - lr * b, b
    assert_caught(run("5.1", dampened), "dampened", "momentum * b + grad")


def test_5_1_lr_inside_the_buffer_is_accepted():
    def other_convention(p, g, b, lr, mu):
        b = mu * b + lr * g
        return p - b, b
    assert run("5.1", other_convention).passed


def test_5_1_returning_one_value_is_a_usage_mistake():
    assert_caught(run("5.1", lambda p, g, b, lr, mu: p - lr * g), "usage", "return")


def test_5_2_missing_bias_correction_is_caught():
    def no_correction(p, g, m, v, t, lr, b1, b2, eps):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return p - lr * m / (v.sqrt() + eps), m, v
    assert_caught(run("5.2", no_correction), "no-bias-correction", "1 - beta1 ** t")


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_5_2_t_from_zero_is_caught():
    def from_zero(p, g, m, v, t, lr, b1, b2, eps):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** (t - 1)), v / (1 - b2 ** (t - 1))
        return p - lr * m_hat / (v_hat.sqrt() + eps), m, v
    assert_caught(run("5.2", from_zero), "not-finite", "counts from 1")


def test_5_3_one_over_lambda_is_caught():
    assert_caught(run("5.3", lambda curvatures: 1 / max(curvatures)), "one-over-lambda", "1 - η·λ")


def test_5_3_flattest_direction_is_caught():
    assert_caught(run("5.3", lambda curvatures: 2 / min(curvatures)), "smallest-curvature", "largest curvature")


def test_5_4_unshifted_cosine_is_caught():
    def unshifted(step, total, warmup, base):
        if step < warmup:
            return base * step / warmup
        return base * 0.5 * (1 + math.cos(math.pi * step / total))
    assert_caught(run("5.4", unshifted), "unshifted", "warmup_steps")


def test_5_4_missing_half_is_caught():
    def no_half(step, total, warmup, base):
        if step < warmup:
            return base * step / warmup
        return base * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))
    assert_caught(run("5.4", no_half), "no-half", "½")


# --- lesson 06 ------------------------------------------------------------------------------------
def test_6_1_lecun_std_is_caught():
    assert_caught(run("6.1", lambda n: 1 / math.sqrt(n)), "lecun", "ReLU")


def test_6_1_variance_instead_of_std_is_caught():
    assert_caught(run("6.1", lambda n: 2 / n), "variance", "square root")


def test_6_2_batch_statistics_are_caught():
    def over_the_batch(x, eps=1e-5):
        mean = x.mean(dim=0, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=0, keepdim=True)
        return (x - mean) / (var + eps).sqrt()
    assert_caught(run("6.2", over_the_batch), "batch-norm", "dim=-1")


def test_6_2_unbiased_variance_is_caught():
    def unbiased(x, eps=1e-5):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1)
        return (x - mean) / (var + eps).sqrt()
    assert_caught(run("6.2", unbiased), "unbiased", "divides by d")


def test_6_2_numpy_is_caught():
    def with_numpy(x, eps=1e-5):
        values = x.detach().numpy()
        return (values - values.mean(-1, keepdims=True)) / np.sqrt(values.var(-1, keepdims=True) + eps)
    assert_caught(run("6.2", with_numpy), "not-a-tensor", "vizgrad")


def test_6_3_deep_sigmoid_net_is_caught_as_vanishing():
    def sigmoid_net(depth):
        return nn.MLP([2] + [32] * depth + [2], activation=nn.Sigmoid)
    result = run("6.3", sigmoid_net)
    assert_caught(result, "vanishing", "He initialisation")
    assert any("vanishing" in line for line in result.details)


def test_6_3_shallow_net_is_caught():
    assert_caught(run("6.3", lambda depth: nn.MLP([2, 32, 2])), "too-shallow", "depth")


# --- lesson 07 ------------------------------------------------------------------------------------
def test_7_1_missing_plus_one_is_caught():
    assert_caught(run("7.1", lambda n, k, s, p: (n + 2 * p - k) // s), "missing-one", "+ 1")


def test_7_1_one_sided_padding_is_caught():
    assert_caught(run("7.1", lambda n, k, s, p: (n + p - k) // s + 1), "one-side-padding", "each")


def test_7_2_unflipped_kernel_is_caught():
    def unflipped(grad_out, weight):
        kh, kw = weight.shape[2:]
        return F.conv2d(grad_out, weight.transpose(0, 1), padding=(kh - 1, kw - 1))
    assert_caught(run("7.2", unflipped), "no-flip", "flip")


def test_7_2_channels_not_swapped_is_caught():
    def same_channels(grad_out, weight):
        kh, kw = weight.shape[2:]
        return F.conv2d(grad_out, weight.flip((2, 3)), padding=(kh - 1, kw - 1))
    assert_caught(run("7.2", same_channels), "channels", "transpose(0, 1)")


def test_7_2_conv_transpose_is_accepted():
    assert run("7.2", lambda grad_out, weight: F.conv_transpose2d(grad_out, weight)).passed


def test_7_3_flipped_weight_gradient_is_caught():
    def flipped(x, grad_out):
        return F.conv2d(x.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1).flip((2, 3))
    assert_caught(run("7.3", flipped), "flipped", "no flip")


def test_7_4_model_without_convolution_is_caught():
    assert_caught(run("7.4", lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 10))), "no-conv", "Conv2d")


def test_7_4_wrong_output_size_is_caught():
    def nine_classes():
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Flatten(), nn.Linear(4 * 8 * 8, 9))
    assert_caught(run("7.4", nine_classes), "shape", "Linear(..., 10)")


def test_7_4_runs_on_synthetic_digits_without_scikit_learn():
    with mock.patch.dict(sys.modules, {"sklearn": None, "sklearn.datasets": None}):
        from vizgrad.lessons.exercises_late import lesson_digits
        X, y, source = lesson_digits()
        assert "scikit-learn is not installed" in source
        assert run("7.4", solution("lesson07:make_cnn")).passed


def test_synthetic_digits_look_like_load_digits():
    X, y = synthetic_digits(50, seed=1)
    assert tuple(X.shape) == (50, 1, 8, 8) and X.dtype == vg.float32 and y.dtype == vg.int64
    values = X.numpy()
    assert values.min() >= 0.0 and values.max() <= 1.0
    assert set(y.numpy().tolist()) <= set(range(10))


# --- lesson 08 ------------------------------------------------------------------------------------
def test_8_1_gpu_is_not_a_device_name():
    assert_caught(run("8.1", lambda: "gpu"), "name", "cuda")


def test_8_1_hard_coded_wrong_device_is_caught():
    wrong = "cpu" if vg.cuda.is_available() else "cuda"
    assert_caught(run("8.1", lambda: wrong), "wrong-device", "vg.cuda.is_available()")


def test_8_2_n_cubed_is_caught():
    assert_caught(run("8.2", lambda n, seconds: n ** 3 / seconds / 1e9), "half", "2n³")


# --- lesson 09 ------------------------------------------------------------------------------------
def test_9_1_missing_create_graph_is_caught():
    def no_create_graph(f, x0):
        x = vg.tensor(x0, dtype=vg.float64, requires_grad=True)
        (dy,) = vg.autograd.grad(f(x), x)
        (d2y,) = vg.autograd.grad(dy, x)
        return d2y.item()
    assert_caught(run("9.1", no_create_graph), "create-graph", "create_graph=True")


def test_9_1_first_derivative_is_caught():
    def first(f, x0):
        x = vg.tensor(x0, dtype=vg.float64, requires_grad=True)
        (dy,) = vg.autograd.grad(f(x), x)
        return dy.item()
    assert_caught(run("9.1", first), "first-derivative", "once more")


def test_9_2_gradient_times_v_is_caught():
    def grad_times_v(f, x, v):
        (g,) = vg.autograd.grad(f(x), x)
        return g * v
    assert_caught(run("9.2", grad_times_v), "grad-times-v", "differentiate")


def test_9_2_a_slow_answer_is_caught():
    """A correct H·v that takes seconds for a vector of 4000 must have formed the Hessian."""
    clock = iter([0.0, 0.001, 0.001, 20.0])    # the reference takes 1 ms, the answer 20 s
    with mock.patch.object(exercises_late, "time", SimpleNamespace(perf_counter=lambda: next(clock))):
        result = run("9.2", solution("lesson09:hvp"))
    assert_caught(result, "slow", "never form H")


def test_9_3_returning_the_vector_is_caught():
    def vector(f, x, steps=100):
        hvp = solution("lesson09:hvp")
        v = vg.ones(*x.shape, dtype=x.dtype)
        for _ in range(steps):
            w = hvp(f, x, v)
            v = w / w.norm()
        return v
    assert_caught(run("9.3", vector), "vector", "Rayleigh")


def test_9_3_without_normalising_is_caught():
    def norm_only(f, x, steps=100):
        hvp = solution("lesson09:hvp")
        v = vg.ones(*x.shape, dtype=x.dtype)
        return float(np.linalg.norm(hvp(f, x, v).numpy()))
    assert_caught(run("9.3", norm_only), "values", "unit vector")
