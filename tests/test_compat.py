"""The compatibility suite (compat/): every program runs on vizgrad and keeps its own
invariants; with PyTorch importable, it also runs on PyTorch and the two agree number by
number. Programs that wait for a feature are xfail (strict): XPASS means the feature landed
and the mark can go."""

import functools
import importlib

import numpy as np
import pytest

import vizgrad
from compat import PROGRAMS, compare, run
from compat.__main__ import main


def _marks(entry):
    return [pytest.mark.xfail(strict=True, reason=f"needs {entry.needs}")] if entry.needs else []


ENTRIES = [pytest.param(entry, id=name, marks=_marks(entry)) for name, entry in PROGRAMS.items()]


@functools.lru_cache(maxsize=None)
def results_of(name, library):
    """A program's results with ``library`` ("vizgrad" or "torch"), computed once per session."""
    return run(PROGRAMS[name], vizgrad if library == "vizgrad" else importlib.import_module(library))


@pytest.mark.parametrize("entry", ENTRIES)
def test_program_runs_on_vizgrad_and_keeps_its_invariants(entry):
    results = results_of(entry.name, "vizgrad")
    assert results
    if entry.expect is not None:
        entry.expect(results)


@pytest.mark.parametrize("entry", PROGRAMS.values(), ids=list(PROGRAMS))
def test_program_runs_on_pytorch_and_keeps_its_invariants(entry):
    """Not xfail even for programs waiting for a feature: the programs themselves are right."""
    pytest.importorskip("torch")
    results = results_of(entry.name, "torch")
    if entry.expect is not None:
        entry.expect(results)


@pytest.mark.parametrize("entry", ENTRIES)
def test_program_agrees_with_pytorch(entry):
    pytest.importorskip("torch")
    assert compare(results_of(entry.name, "vizgrad"), results_of(entry.name, "torch")) == []


def test_compare_reports_each_kind_of_difference():
    ours = {"loss": 1.0, "shape": np.zeros((2, 3)), "ids": np.array([1, 2]), "text": "a", "extra": 1}
    theirs = {"loss": 1.0 + 1e-3, "shape": np.zeros((3, 2)), "ids": np.array([1, 3]), "text": "b"}
    differences = compare(ours, theirs)
    assert len(differences) == 5
    assert any(d.startswith("loss: differs by up to 0.001") for d in differences)
    assert "shape: shape (2, 3) (vizgrad) != (3, 2) (PyTorch)" in differences
    assert "ids: [1, 2] (vizgrad) != [1, 3] (PyTorch)" in differences
    assert "extra: only in vizgrad's results" in differences
    assert compare({"x": np.float32(1.0)}, {"x": 1.0 + 1e-6}) == []      # float32 rounding is tolerated


def test_every_program_is_seeded_and_runs_the_same_twice():
    entry = PROGRAMS["d2l_mlp"]
    assert compare(run(entry, vizgrad), run(entry, vizgrad), rtol=0, atol=0) == []
    assert len({entry.seed for entry in PROGRAMS.values()}) == len(PROGRAMS)


def test_main_prints_one_line_per_program_and_the_summary(monkeypatch, capsys):
    chosen = {name: PROGRAMS[name] for name in ("micrograd_scalars", "inplace_slices")}
    monkeypatch.setattr("compat.__main__.PROGRAMS", chosen)
    assert main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("micrograd_scalars") and lines[1].startswith("inplace_slices")
    try:
        import torch  # noqa: F401
    except ImportError:
        assert lines[-1].startswith("compat: PyTorch is not installed")
    else:
        assert lines[0].split()[1] == "agrees"
        expected = 1 if "fails" in lines[1] else 2
        assert lines[-1].startswith(f"compat: {expected} of 2 programs agree with PyTorch")
