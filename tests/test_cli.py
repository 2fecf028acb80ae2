"""The ``vizgrad`` command line: ``vizgrad demo`` trains, and the entry points work."""

import subprocess
import sys

import numpy as np
import pytest

from vizgrad import cli


def test_demo_training_lowers_the_loss_and_separates_the_moons():
    lines = []
    losses, final_loss, accuracy = cli.train(steps=300, seed=0, out=lines.append)
    assert len(losses) == 300
    assert np.all(np.isfinite(losses))
    assert final_loss < 0.25 * losses[0]
    assert accuracy >= 0.95
    assert lines[0].startswith("step     0") and lines[-1].startswith("step   299")


def test_demo_is_reproducible_for_a_seed():
    first = cli.train(steps=20, seed=3, out=lambda line: None)
    second = cli.train(steps=20, seed=3, out=lambda line: None)
    assert first == second


def test_two_moons_shapes_and_labels():
    x, y = cli.two_moons(11, noise=0.1, seed=0)
    assert x.shape == (11, 2) and y.shape == (11, 1)
    assert x.dtype == np.float32 and set(np.unique(y)) == {-1.0, 1.0}


def test_main_runs_demo_and_returns_zero(capsys, tmp_path):
    assert cli.main(["demo", "--steps", "5", "--seed", "1", "--out", str(tmp_path / "demo.html")]) == 0
    assert (tmp_path / "demo.html").exists()
    output = capsys.readouterr().out
    assert "loss" in output and "accuracy" in output


def test_main_without_a_command_prints_help_and_returns_2(capsys):
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_bad_steps_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "--steps", "0"])
    assert exit_info.value.code == 2


def test_python_dash_m_vizgrad_demo(tmp_path):
    result = subprocess.run([sys.executable, "-m", "vizgrad", "demo", "--steps", "3", "--out",
                             str(tmp_path / "demo.html")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "final loss" in result.stdout
