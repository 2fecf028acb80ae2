"""Grading a class: ``vizgrad lessons grade SUBMISSIONS... --out grades.csv``.

Each learner's notebook runs headless, top to bottom, in its own fresh kernel (this
interpreter's ipykernel, importing this vizgrad), with a time limit per cell. A first
cell, added to the copy that runs, hands every checker's :class:`Result` to a file; a cell
that raises does not stop the run (as "Run All" with errors kept), a cell past the time
limit or a dead kernel does. Then each exercise the notebook calls
(``check.exercise_14_2(...)`` in its code) gets one row: the last check's grade
(``passed``, ``partial`` with the share of sub-checks passed, or ``failed``) and message, or
``failed`` with why it was never checked (the cell that raised, the cell that timed out).
A notebook that cannot be read or run at all is recorded the same way, and grading goes on.
Cells are numbered from 1 in the learner's notebook, markdown cells included.

Needs ``nbclient`` and ``ipykernel`` (the ``lab`` extra: ``pip install vizgrad[lab]``).
"""

import csv
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass

from .framework import RECORDERS, sort_key

COLUMNS = ("learner", "notebook", "exercise", "status", "score", "message")
KERNEL_NAME = "vizgrad-grading"
_CALL = re.compile(r"check\.exercise_(\d+)_(\d+)\b")


@dataclass
class Run:
    """What running one notebook gave: the last result per exercise (dicts, see
    :func:`record_to`), ``{cell number: its error}`` for the cells that raised, and why the
    run stopped early (None when it ran to the end)."""

    results: dict
    errors: dict
    stopped: str = None


def record_to(path):
    """Append every checker result of this kernel to ``path``, one JSON object a line (the
    grader's first cell calls this)."""
    def record(result):
        row = {"exercise": result.exercise, "status": result.status, "grade": result.grade,
               "score": round(result.score, 3), "message": result.message}
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")
    RECORDERS.append(record)


def exercises_called(notebook):
    """``{exercise id: the number of the first cell that checks it}`` for the notebook's code cells."""
    calls = {}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type == "code":
            for a, b in _CALL.findall(cell.source):
                calls.setdefault(f"{a}.{b}", number)
    return calls


def run_notebook(path, timeout):
    """Run the notebook at ``path`` in a fresh kernel: a :class:`Run`."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="vizgrad-grade-") as folder:
        log = os.path.join(folder, "results.jsonl")
        setup = nbformat.v4.new_code_cell(f"from vizgrad.lessons.grading import record_to\nrecord_to({log!r})")
        notebook.cells.insert(0, setup)
        running = [0]        # the index of the cell running; the learner's cells count from 1

        def on_cell_execute(cell, cell_index):
            running[0] = cell_index
        client = NotebookClient(notebook, timeout=timeout, allow_errors=True, kernel_name=KERNEL_NAME,
                                shutdown_kernel="immediate",
                                kernel_manager_class=_kernel_manager_class(folder), on_cell_execute=on_cell_execute,
                                resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
        stopped = None
        try:
            client.execute()
        except CellTimeoutError:
            stopped = f"cell {running[0]} was still running after the {timeout:g} s time limit"
        except DeadKernelError:
            stopped = f"the kernel died in cell {running[0]}"
        results = {}
        if os.path.exists(log):
            with open(log, encoding="utf-8") as file:
                for line in file:
                    row = json.loads(line)
                    results[row["exercise"]] = row
    errors = {}
    for number, cell in enumerate(notebook.cells[1:], start=1):
        error = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        if error is not None:
            errors[number] = f"cell {number} raised {error['ename']}: {error['evalue']}"
    return Run(results, errors, stopped)


def _kernel_manager_class(folder):
    """A kernel manager that starts this interpreter's ipykernel, with this vizgrad first on
    its path (a kernelspec written into ``folder``)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    spec_dir = os.path.join(folder, "kernels", KERNEL_NAME)
    os.makedirs(spec_dir)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python_path = os.pathsep.join([package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                      if p])
    with open(os.path.join(spec_dir, "kernel.json"), "w", encoding="utf-8") as file:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "vizgrad grading", "language": "python",
                   "env": {"PYTHONPATH": python_path, "MPLBACKEND": "Agg"}}, file)
    specs = KernelSpecManager(kernel_dirs=[os.path.dirname(spec_dir)], ensure_native_kernel=False)

    class GradingKernelManager(AsyncKernelManager):     # async: a cell's time limit needs it
        def __init__(self, **kwargs):
            super().__init__(kernel_spec_manager=specs, **kwargs)
    return GradingKernelManager


def grade_notebook(path, learner, timeout):
    """The rows (dicts of :data:`COLUMNS`) for one learner's notebook."""
    import nbformat

    def row(exercise, status, score, message):
        return {"learner": learner, "notebook": path, "exercise": exercise, "status": status,
                "score": f"{score:.2f}", "message": message}

    try:
        calls = exercises_called(nbformat.read(path, as_version=4))
    except Exception as error:          # not a notebook, or not one nbformat can read
        return [row("", "failed", 0, f"the notebook could not be read ({type(error).__name__}: {error})")]
    try:
        run = run_notebook(path, timeout)
    except Exception as error:          # e.g. the kernel did not start
        return [row(e, "failed", 0, f"the notebook could not be run ({type(error).__name__}: {error})")
                for e in sorted(calls, key=sort_key) or [""]]
    rows = []
    for exercise in sorted(set(calls) | set(run.results), key=sort_key):
        result = run.results.get(exercise)
        if result is not None:
            rows.append(row(exercise, result["grade"], result["score"], _result_message(result)))
        else:
            rows.append(row(exercise, "failed", 0, "never checked: " + _why_unchecked(run, calls[exercise])))
    if not rows:
        rows.append(row("", "failed", 0, run.stopped or "the notebook checks no exercise (no check.exercise_... "
                                                        "call)"))
    return rows


def _result_message(result):
    if result["status"] in ("not done", "error"):
        return f"{result['status']}: {result['message']}"
    return result["message"]


def _why_unchecked(run, cell):
    """Why the check in cell number ``cell`` gave no result: the run stopped before it, the
    cell raised (after the first earlier cell that raised, if any)."""
    if run.stopped:
        return run.stopped
    earlier = next((text for number, text in sorted(run.errors.items()) if number < cell), None)
    if cell in run.errors:
        return run.errors[cell] + (f" (after {earlier})" if earlier else "")
    return earlier or f"the check in cell {cell} did not run"


def learner_names(paths):
    """A name per notebook: the file's name without ``.ipynb``, or, when several notebooks
    share it (one folder per learner), the folder's name."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    return [os.path.basename(os.path.dirname(os.path.abspath(p))) if stems.count(s) > 1 else s
            for p, s in zip(paths, stems)]


def grade(paths, out, timeout=60, echo=print):
    """Grade every notebook in ``paths`` into the CSV file ``out`` (:data:`COLUMNS`); returns
    the rows. ``timeout`` is each cell's time limit in seconds."""
    rows = []
    for path, learner in zip(paths, learner_names(paths)):
        found = grade_notebook(path, learner, timeout)
        rows += found
        summary = ", ".join(f"{r['exercise'] or 'notebook'} {r['status']}" for r in found)
        echo(f"  {learner}: {summary}")
    with open(out, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows
