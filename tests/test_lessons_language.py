"""Lesson 10's tools. The checkers (vizgrad/lessons/exercises_language.py): the reference
solutions pass, a fresh stub is "not done", and each classic mistake is caught, named (its
``mistake`` kind), given a hint, and pointed at: the feedback's figure highlights the
learner's node in the graph, and the message names it. The live EmbeddingMap, and the
lesson's place in the index."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import ShapeError
from vizgrad.lessons import EmbeddingMap, check
from vizgrad.lessons.framework import EXERCISES, ensure_loaded
from vizgrad.lessons.solutions import load_solution

F = vg.nn.functional
ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = ["10.1", "10.2"]


def assert_points_at_node(result, kind, class_name):
    """Failed as ``kind``, with a hint, and the figure highlights the learner's Function node,
    which the message names."""
    assert result.status == "failed", str(result)
    assert result.mistake == kind, str(result)
    assert result.hint, str(result)
    figure = result.figure
    assert figure is not None and len(figure.highlight) == 1, str(result)
    node = figure.graph.node(figure.highlight[0])
    assert node.label == class_name, (node.label, class_name)
    assert f"`{node.id}` (`{class_name}`)" in result.message, result.message
    assert "<--" in figure.text() and kind in figure.dot()


@pytest.mark.parametrize("exercise_id", LANGUAGE)
def test_reference_solution_passes(exercise_id):
    ensure_loaded()
    result = EXERCISES[exercise_id](*load_solution(EXERCISES[exercise_id]))
    assert result.passed, str(result)
    assert result.details


def test_the_lesson_calls_both_checks():
    notebook = json.loads(next(ROOT.glob("lessons/10-*.ipynb")).read_text(encoding="utf-8"))
    source = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert sorted(".".join(m) for m in re.findall(r"check\.exercise_(\d+)_(\d+)\(", source)) == LANGUAGE


def function(forward, backward, name):
    """A learner's Function class named ``name``, defined outside vizgrad."""
    return type(name, (vg.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                                "__module__": "learner"})


@pytest.mark.parametrize("exercise_id", LANGUAGE)
def test_a_fresh_stub_is_not_done(exercise_id):
    def stub(ctx, *args):
        raise NotImplementedError
    result = EXERCISES[exercise_id](function(stub, stub, "Stub"))
    assert result.status == "not done", str(result)


# --- 10.1: the cross-entropy backward -----------------------------------------------------------------------
def ce_forward(ctx, logits, targets):
    log_probs = F.log_softmax(logits, dim=1)
    ctx.save_for_backward(log_probs, targets)
    return -log_probs[vg.arange(logits.shape[0]), targets].mean()


def cross_entropy(grad_logits, forward=ce_forward):
    """A CrossEntropy Function whose backward returns ``grad_logits(grad, probs, one_hot, n)``."""
    def backward(ctx, grad):
        log_probs, targets = ctx.saved_tensors
        n, classes = log_probs.shape
        return grad_logits(grad, log_probs.exp(), F.one_hot(targets, classes), n), None
    return function(forward, backward, "CrossEntropy")


@pytest.mark.parametrize("kind, grad_logits", [
    ("no-batch-mean", lambda g, p, y, n: g * (p - y)),
    ("sign", lambda g, p, y, n: g * (y - p) / n),
    ("missing-one-hot", lambda g, p, y, n: g * p / n),
    ("one-everywhere", lambda g, p, y, n: g * (p - 1) / n),
    ("ignored-upstream", lambda g, p, y, n: (p - y) / n),
])
def test_cross_entropy_mistakes_point_at_the_node(kind, grad_logits):
    result = check.exercise_10_1(cross_entropy(grad_logits))
    assert_points_at_node(result, kind, "CrossEntropy")


def test_cross_entropy_wrong_count_and_shape():
    result = check.exercise_10_1(function(ce_forward, lambda ctx, g: g, "CrossEntropy"))
    assert result.mistake == "gradient-count" and "None" in result.hint, str(result)
    result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: (g * (p - y) / n).sum(0)))
    assert result.mistake == "shape" and result.figure is not None, str(result)


def test_cross_entropy_forward_mistakes():
    def summed(ctx, logits, targets):
        return -F.log_softmax(logits, dim=1)[vg.arange(logits.shape[0]), targets].sum()
    result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: g * (p - y) / n, summed))
    assert result.mistake == "forward-sum" and "mean" in result.hint, str(result)

    def naive(ctx, logits, targets):
        probs = logits.exp() / logits.exp().sum(dim=1, keepdim=True)
        return -probs[vg.arange(logits.shape[0]), targets].log().mean()
    with np.errstate(all="ignore"):            # the naive softmax overflows, which is the point
        result = check.exercise_10_1(cross_entropy(lambda g, p, y, n: g * (p - y) / n, naive))
    assert result.mistake == "overflow" and "maximum" in result.hint, str(result)


# --- 10.2: the embedding-lookup backward --------------------------------------------------------------------
def lookup_forward(ctx, weight, index):
    ctx.save_for_backward(index)
    ctx.rows = weight.shape[0]
    return weight[index]


def embedding(grad_weight):
    """An Embedding Function whose backward returns ``grad_weight(grad, index, rows)``."""
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        return grad_weight(grad, index, ctx.rows), None
    return function(lookup_forward, backward, "Embedding")


def assigned(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    table[index.reshape(-1)] = grad.reshape(-1, grad.shape[-1])           # the repeated-index trap
    return table


def added_in_place(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    table[index.reshape(-1)] += grad.reshape(-1, grad.shape[-1])          # the same trap, with +=
    return table


def looped(grad, index, rows):
    table = vg.zeros(rows, grad.shape[-1], dtype=grad.dtype)
    for i, row in zip(index.reshape(-1).tolist(), grad.reshape(-1, grad.shape[-1])):
        table[i] += row
    return table


def one_hot_product(grad, index, rows):
    return F.one_hot(index.reshape(-1), rows).to(grad.dtype).T @ grad.reshape(-1, grad.shape[-1])


@pytest.mark.parametrize("grad_weight", [assigned, added_in_place])
def test_the_repeated_index_trap_points_at_the_node(grad_weight):
    result = check.exercise_10_2(embedding(grad_weight))
    assert_points_at_node(result, "repeated-index", "Embedding")
    assert "index_add_" in result.hint and re.search(r"row \d+ \('.'\) is used \d+ times", result.message)


@pytest.mark.parametrize("grad_weight", [looped, one_hot_product])
def test_every_accumulating_backward_passes(grad_weight):
    result = check.exercise_10_2(embedding(grad_weight))
    assert result.passed, str(result)


def test_embedding_backward_that_does_not_scatter():
    result = check.exercise_10_2(embedding(lambda grad, index, rows: grad))
    assert_points_at_node(result, "not-scattered", "Embedding")


def test_embedding_backward_with_an_unflattened_index():
    def unflattened(grad, index, rows):
        return vg.zeros(rows, grad.shape[-1], dtype=grad.dtype).index_add_(0, index, grad)
    result = check.exercise_10_2(embedding(unflattened))
    assert result.mistake == "index-not-flat" and "reshape(-1)" in result.hint, str(result)
    assert "(16, 3)" in result.message, str(result)


def test_embedding_backward_sign_and_forward():
    result = check.exercise_10_2(embedding(lambda grad, index, rows: -looped(grad, index, rows)))
    assert_points_at_node(result, "sign", "Embedding")

    def transposed_forward(ctx, weight, index):
        ctx.save_for_backward(index)
        return weight[index.T]
    result = check.exercise_10_2(function(transposed_forward, lambda ctx, g: (None, None), "Embedding"))
    assert result.mistake == "shape", str(result)


# --- the live embedding map ---------------------------------------------------------------------------------
LETTERS = ".abcdefghijklmnopqrstuvwxyz"


def test_embedding_map_draws_a_two_dimensional_table_as_it_is():
    table = vg.randn(27, 2, generator=vg.Generator().manual_seed(1))
    picture = EmbeddingMap(table, LETTERS, groups={"a": 1, ".": 2}, title="C", note="step 0")
    np.testing.assert_allclose(picture.points, table.numpy(), rtol=1e-6)
    svg = picture._repr_svg_()
    assert svg.count("<circle") == 27 and ">step 0</text>" in svg and ">C</text>" in svg
    assert '#d62728">a</text>' in svg and '#2ca02c">.</text>' in svg and '#4c72b0">b</text>' in svg
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert min(xs) >= 0 and max(xs) <= picture.size          # every point inside the picture


def test_embedding_map_projects_wider_tables_on_their_principal_plane():
    rng = np.random.default_rng(0)
    plane = rng.standard_normal((27, 2)) * [5.0, 2.0]
    table = np.concatenate([plane, rng.standard_normal((27, 8)) * 1e-3], axis=1)
    picture = EmbeddingMap(vg.tensor(table), LETTERS)
    def distances(points):
        return np.linalg.norm(points[:, None] - points[None], axis=-1)
    np.testing.assert_allclose(distances(picture.points), distances(plane), atol=1e-2)   # the plane, rotated
    spread = picture.points.var(axis=0)
    assert spread[0] >= spread[1]                            # the first axis carries the most variance


def test_embedding_map_keeps_its_orientation_between_updates(monkeypatch):
    table = vg.randn(27, 5, generator=vg.Generator().manual_seed(2))
    picture = EmbeddingMap(table, LETTERS)
    before = picture.points.copy()
    svd = np.linalg.svd
    monkeypatch.setattr(np.linalg, "svd", lambda a, **kw: tuple(-part if i == 2 else part
                                                                for i, part in enumerate(svd(a, **kw))))
    picture.update(table)                                    # the decomposition now flips both axes
    np.testing.assert_allclose(picture.points, before, atol=1e-9)


def test_embedding_map_updates_its_displayed_output(monkeypatch):
    import IPython.display

    class Handle:
        def __init__(self):
            self.shown = []

        def update(self, obj):
            self.shown.append(obj._repr_svg_())
    handle = Handle()
    monkeypatch.setattr(IPython.display, "display", lambda obj, display_id=False: handle if display_id else None)
    C = vg.randn(27, 2, generator=vg.Generator().manual_seed(3))
    picture = EmbeddingMap(C, LETTERS).show()
    picture.update(C * 2, note="step 200")
    assert len(handle.shown) == 1 and "step 200" in handle.shown[0] and picture.updates == 2
    assert "update 2, step 200" in repr(picture)


def test_embedding_map_needs_one_row_per_label():
    with pytest.raises(ShapeError, match=r"EmbeddingMap.update: weight must have shape \(27, D\).*\(26, 2\)"):
        EmbeddingMap(vg.zeros(26, 2), LETTERS)


# --- the lesson is listed -------------------------------------------------------------------------------------
def test_lesson_10_is_in_the_index_with_a_binder_link():
    name = next(ROOT.glob("lessons/10-*.ipynb")).name
    index = (ROOT / "lessons" / "README.md").read_text(encoding="utf-8")
    assert f"]({name})" in index
    assert f"urlpath=lab/tree/lessons/{name}" in index
    assert f"urlpath=lab/tree/lessons/{name}" in (ROOT / "README.md").read_text(encoding="utf-8")
    from vizgrad.lessons import lab
    argv, _ = lab.lab_command("10", no_browser=True)
    assert argv[4].endswith(name)


def test_check_solutions_runs_lesson_10(capsys):
    from vizgrad import cli
    assert cli.main(["lessons", "check-solutions", "--only", *LANGUAGE]) == 0
    output = capsys.readouterr().out
    assert re.search(r"^\s+10\.1\s+ok\b", output, re.M) and re.search(r"^\s+10\.2\s+ok\b", output, re.M), output
