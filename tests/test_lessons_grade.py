"""``vizgrad lessons grade``: each learner's notebook runs in its own kernel with a time limit,
and the CSV has one row per learner and exercise (passed, partial or failed, with the
message); a notebook that raises, loops forever or is no notebook is recorded as such."""

import csv

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import nbformat  # noqa: E402

from vizgrad import cli  # noqa: E402

CROSS_ENTROPY = """
import vizgrad.nn.functional as F

def cross_entropy_backward(logits, Yb):
    return (F.softmax(logits, dim=1) - F.one_hot(Yb, logits.shape[1]).double()) / logits.shape[0]
"""
RIGHT_REASONS = ('{"A": "not_leaf", "B": "accumulated", "C": "rebound", "D": "detached", '
                 '"E": "requires_grad_false"}')
TWO_WRONG = '{"A": "not_leaf", "B": "not_leaf", "C": "rebound", "D": "detached", "E": "ok"}'


def notebook(path, *cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# my answers")]
                                  + [nbformat.v4.new_code_cell(cell) for cell in cells])
    nbformat.write(nb, path)
    return str(path)


def answers(reasons):
    return [CROSS_ENTROPY, f"def grad_none_reasons():\n    return {reasons}",
            "from vizgrad.lessons import check\ncheck.exercise_14_1(cross_entropy_backward)",
            "check.exercise_14_3(grad_none_reasons)"]


def test_three_learners_are_graded_into_one_row_per_exercise(tmp_path, capsys):
    ada = notebook(tmp_path / "ada.ipynb", *answers(RIGHT_REASONS))
    ben = notebook(tmp_path / "ben.ipynb", *answers(TWO_WRONG))
    cy = notebook(tmp_path / "cy.ipynb", CROSS_ENTROPY, "from vizgrad.lessons import check",
                  "check.exercise_14_1(cross_entropy_backward)", "while True:\n    pass",
                  "check.exercise_14_3(grad_none_reasons)")
    out = tmp_path / "grades.csv"
    assert cli.main(["lessons", "grade", ada, ben, cy, "--out", str(out), "--timeout", "4"]) == 0
    with open(out, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows == [
        ["learner", "notebook", "exercise", "status", "score", "message"],
        ["ada", ada, "14.1", "passed", "1.00", "Well done."],
        ["ada", ada, "14.3", "passed", "1.00", "Well done."],
        ["ben", ben, "14.1", "passed", "1.00", "Well done."],
        ["ben", ben, "14.3", "partial", "0.60", "Puzzle B: not `not_leaf`."],
        ["cy", cy, "14.1", "passed", "1.00", "Well done."],
        ["cy", cy, "14.3", "failed", "0.00", "never checked: cell 5 was still running after the 4 s time limit"],
    ]
    printed = capsys.readouterr().out
    assert "ben: 14.1 passed, 14.3 partial" in printed and f"6 rows written to {out}" in printed


def test_a_cell_that_raises_is_named_and_the_rest_still_runs(tmp_path):
    dan = notebook(tmp_path / "dan.ipynb", "from vizgrad.lessons import check", "1 / 0",
                   "check.exercise_14_3(grad_none_reasons)", CROSS_ENTROPY,
                   "check.exercise_14_1(cross_entropy_backward)")
    out = tmp_path / "grades.csv"
    assert cli.main(["lessons", "grade", dan, "--out", str(out), "--timeout", "30"]) == 0
    with open(out, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(r["exercise"], r["status"], r["message"]) for r in rows] == [
        ("14.1", "passed", "Well done."),
        ("14.3", "failed", "never checked: cell 4 raised NameError: name 'grad_none_reasons' is not defined "
                           "(after cell 3 raised ZeroDivisionError: division by zero)"),
    ]


def test_a_file_that_is_no_notebook_is_recorded_and_learners_in_folders_are_named_by_folder(tmp_path):
    (tmp_path / "eve").mkdir()
    (tmp_path / "fay").mkdir()
    broken = tmp_path / "eve" / "lesson14.ipynb"
    broken.write_text("{ not json", encoding="utf-8")
    empty = notebook(tmp_path / "fay" / "lesson14.ipynb", "x = 1")
    out = tmp_path / "grades.csv"
    assert cli.main(["lessons", "grade", str(broken), empty, "--out", str(out), "--timeout", "30"]) == 0
    with open(out, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(r["learner"], r["exercise"], r["status"]) for r in rows] == [("eve", "", "failed"), ("fay", "", "failed")]
    assert rows[0]["message"].startswith("the notebook could not be read (")
    assert rows[1]["message"] == "the notebook checks no exercise (no check.exercise_... call)"


def test_a_missing_submission_is_refused_before_any_grading(tmp_path, capsys):
    assert cli.main(["lessons", "grade", str(tmp_path / "nobody.ipynb"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "no such notebook" in capsys.readouterr().err and not (tmp_path / "g.csv").exists()
