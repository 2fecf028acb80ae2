"""vizgrad gives the inf and NaN of domain errors silently, as PyTorch does, in scripts and
notebooks and under pytest (the ``vizgrad_pytest`` plugin): the user's own NumPy code still warns."""

import os
import subprocess
import sys
import textwrap
from importlib import metadata

import vizgrad_pytest
from vizgrad.backends import numpy_backend

DOMAIN_ERRORS = """
import vizgrad as vg
x = vg.tensor([1.0, 0.0, -1.0, 2.0], requires_grad=True)
y = (x.asin() + x.log() + x.sqrt() + x / 0 + vg.floor_divide(x, 0.0) + x.acosh()).sum()
y.backward()
z = vg.tensor([1e38], dtype=vg.float32) * 10
"""


def _run(arguments, cwd):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, *arguments], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_plugin_and_the_backend_filter_the_same_warnings():
    assert vizgrad_pytest.MESSAGE == numpy_backend.FLOATING_POINT_MESSAGE
    points = metadata.entry_points(group="pytest11")
    assert any(point.value == "vizgrad_pytest" for point in points), "the pytest11 entry point is not installed"


def test_a_script_sees_no_floating_point_warnings(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(DOMAIN_ERRORS + "print(y.item(), z.item())\n")
    result = _run(["-W", "error::RuntimeWarning", str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "RuntimeWarning" not in result.stderr
    assert result.stdout.split() == ["nan", "inf"]


def test_pytest_sees_no_floating_point_warnings_from_vizgrad_even_with_W_error(tmp_path):
    """Collection imports vizgrad inside pytest's catch_warnings, which drops the import's filter
    afterwards; the plugin gives each test the filter again, after -W's."""
    (tmp_path / "test_user.py").write_text(
        "import numpy as np\nimport pytest\n\nimport vizgrad as vg  # imported at collection, inside pytest's catch_warnings\n\n\n"
        "def test_domain_errors_are_silent():\n"
        + textwrap.indent(DOMAIN_ERRORS, "    ")
        + "    assert y.item() != y.item() and x.grad is not None\n\n\n"
        "def test_the_users_own_numpy_still_warns():\n"
        "    with pytest.warns(RuntimeWarning, match='invalid value'):\n"
        "        np.arcsin(np.array([2.0]))\n")
    result = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::RuntimeWarning",
                   "test_user.py"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout and "warning" not in result.stdout.lower(), result.stdout
