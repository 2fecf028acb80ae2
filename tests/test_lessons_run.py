"""Every lesson (``lessons/*.ipynb``) runs top to bottom in a fresh kernel, as a learner
who has not started the exercises would run it: no cell may raise, and each lesson must
finish well inside its time budget. The runtimes are printed (``pytest -s``) and shown
in the terminal summary of a run without xdist.

The kernel is this interpreter (a kernelspec written to a temporary folder), with the
source checkout on its PYTHONPATH, so the lessons use the vizgrad under test.
"""

import glob
import json
import os
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LESSONS_DIR = os.path.join(ROOT, "lessons")
LESSONS = sorted(glob.glob(os.path.join(LESSONS_DIR, "*.ipynb")))
BUDGET_SECONDS = 90          # per lesson, on a 2-core machine; the lessons aim for under 20
CELL_TIMEOUT = 120
KERNEL_NAME = "vizgrad-lessons-test"
SAVED_BYTES = 8_000_000     # a lesson saved with all its outputs (the issue of outputs that last)
RUNTIMES = {}
SIZES = {}


@pytest.fixture(scope="module")
def kernel_manager_factory(tmp_path_factory):
    """Make kernel managers that start this interpreter's ipykernel."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    folder = tmp_path_factory.mktemp("kernels")
    spec_dir = folder / KERNEL_NAME
    spec_dir.mkdir()
    python_path = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "vizgrad lessons (test)", "language": "python",
        "env": {"PYTHONPATH": python_path, "MPLBACKEND": "Agg"}}))
    specs = KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)

    def make():
        return KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    return make


@pytest.fixture(scope="module", autouse=True)
def runtime_summary(request):
    """After the lessons ran, list their runtimes in the terminal summary."""
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is None or capture is None or not RUNTIMES:
        return                          # e.g. in an xdist worker: the printed lines are in each test's output
    with capture.global_and_fixture_disabled():
        reporter.write_sep("-", "lesson runtimes and saved sizes")
        for name, seconds in sorted(RUNTIMES.items()):
            size = f"{SIZES[name] / 1e6:6.2f} MB" if name in SIZES else ""
            reporter.write_line(f"{name:<45} {seconds:6.1f} s {size}")


def _lesson_id(path):
    return os.path.splitext(os.path.basename(path))[0]


def test_there_are_lessons():
    names = [os.path.basename(p) for p in LESSONS]
    assert "00-welcome.ipynb" in names and len(names) >= 5, names


@pytest.mark.parametrize("path", LESSONS, ids=_lesson_id)
def test_lesson_is_stored_without_outputs(path):
    import nbformat
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells and notebook.cells[0].cell_type == "markdown"
    assert "goal" in notebook.cells[0].source.lower(), "a lesson starts by saying what it is for"
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} of {path} has stored outputs: strip them"
            assert cell.execution_count is None, f"cell {index} of {path} has an execution count"


@pytest.mark.parametrize("path", LESSONS, ids=_lesson_id)
def test_lesson_runs_top_to_bottom(path, kernel_manager_factory, record_property):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    manager = kernel_manager_factory()
    client = NotebookClient(notebook, km=manager, timeout=CELL_TIMEOUT, allow_errors=False,
                            resources={"metadata": {"path": LESSONS_DIR}})
    started = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{os.path.basename(path)} failed:\n{error}", pytrace=False)
    finally:
        if manager.has_kernel:          # a kernel manager we pass in is ours to stop, not nbclient's
            manager.shutdown_kernel(now=True)
    seconds = time.perf_counter() - started
    name = os.path.basename(path)
    RUNTIMES[name] = seconds
    record_property("runtime_seconds", round(seconds, 2))
    print(f"\n{name}: {seconds:.1f} s")
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", f"cell {index} of {name} raised {output.get('ename')}"
    assert seconds < BUDGET_SECONDS, f"{name} took {seconds:.0f} s; the budget is {BUDGET_SECONDS} s"
    # saved with every output (graphs, widget snapshots and their pictures), it stays shareable
    size = len(nbformat.writes(notebook).encode("utf-8"))
    SIZES[name] = size
    assert size < SAVED_BYTES, f"{name} saved with its outputs is {size / 1e6:.1f} MB; the budget is {SAVED_BYTES / 1e6:.0f} MB"


def test_lab_command_opens_the_first_lesson():
    from vizgrad.lessons import lab
    argv, root = lab.lab_command()
    assert root == ROOT
    assert argv[:3] == [sys.executable, "-m", "jupyterlab"]
    assert argv[4] == os.path.join("lessons", "00-welcome.ipynb")
    argv, _ = lab.lab_command("03", no_browser=True, port=8899)
    assert argv[4].endswith("03-writing-your-own-op.ipynb") and "--no-browser" in argv and "--port=8899" in argv
    with pytest.raises(LookupError):
        lab.lab_command("no-such-lesson")


def test_vizgrad_lab_dry_run_prints_the_command(capsys):
    from vizgrad import cli
    assert cli.main(["lab", "--dry-run"]) == 0
    output = capsys.readouterr().out
    assert "jupyterlab" in output and "00-welcome.ipynb" in output


def test_vizgrad_lab_serves_the_lessons_address_and_passes_jupyter_options_through(capsys):
    from vizgrad import cli
    assert cli.main(["lab", "03", "--no-browser", "--ServerApp.token=abc", "--ServerApp.ip=0.0.0.0", "--dry-run"]) == 0
    output = capsys.readouterr().out
    assert "--LabApp.default_url=/lab/tree/lessons/03-writing-your-own-op.ipynb" in output
    assert "--ServerApp.token=abc --ServerApp.ip=0.0.0.0" in output
    assert "http://localhost:<port>/lab/tree/lessons/03-writing-your-own-op.ipynb?token=" in output
    with pytest.raises(SystemExit):
        cli.main(["demo", "--ServerApp.token=abc"])           # only `lab` passes options on
