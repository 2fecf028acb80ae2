"""``python -m vizgrad.lessons check-solutions`` (run every reference solution through its
checker), ``python -m vizgrad.lessons list`` (the exercises) and ``python -m vizgrad.lessons
grade SUBMISSIONS... --out grades.csv`` (run each learner's notebook and grade its exercises)."""

import argparse
import importlib.util
import os
import sys


def add_commands(commands):
    """Add ``check-solutions``, ``list`` and ``grade`` to an argparse subparsers object (also
    used by ``vizgrad lessons``)."""
    check = commands.add_parser("check-solutions", help="run every reference solution through its checker",
                                description="Run the reference solutions (lessons/solutions/) through every "
                                            "exercise checker; exit 1 if any fails.")
    check.add_argument("--solutions", metavar="DIR", help="the solutions folder (default: lessons/solutions)")
    check.add_argument("--only", nargs="+", metavar="ID", help="exercise ids to check, e.g. 3.2 4.1")
    check.set_defaults(lessons_run=_check_solutions)
    listing = commands.add_parser("list", help="list the exercises")
    listing.set_defaults(lessons_run=_list)
    grade = commands.add_parser(
        "grade", help="run learners' notebooks and grade their exercises into a CSV file",
        description="Run each learner's notebook headless, in its own kernel, and write one row per learner and "
                    "exercise (passed, partial or failed, with the checker's message). A notebook that raises, "
                    "hangs past the time limit or cannot be read is recorded as such; grading goes on.")
    grade.add_argument("submissions", nargs="+", metavar="NOTEBOOK", help="the learners' .ipynb files")
    grade.add_argument("--out", required=True, metavar="CSV", help="where to write the grades")
    grade.add_argument("--timeout", type=float, default=60, metavar="SECONDS",
                       help="the time limit of each cell (default: 60)")
    grade.set_defaults(lessons_run=_grade)


def _check_solutions(args):
    from .solutions import SolutionMissing, check_solutions
    try:
        return check_solutions(args.solutions, args.only)
    except SolutionMissing as error:
        print(f"vizgrad lessons: {error}", file=sys.stderr)
        return 2


def _grade(args):
    if importlib.util.find_spec("nbclient") is None or importlib.util.find_spec("ipykernel") is None:
        print("vizgrad lessons grade: needs nbclient and ipykernel: pip install 'vizgrad[lab]'", file=sys.stderr)
        return 2
    from .grading import grade
    missing = [path for path in args.submissions if not os.path.isfile(path)]
    if missing:
        print(f"vizgrad lessons grade: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    print(f"grading {len(args.submissions)} notebook{'s' if len(args.submissions) != 1 else ''}")
    rows = grade(args.submissions, args.out, args.timeout)
    print(f"{len(rows)} rows written to {args.out}")
    return 0


def _list(args):
    from . import check
    print(check.list())
    return 0


def main(argv=None, prog="python -m vizgrad.lessons"):
    parser = argparse.ArgumentParser(prog=prog, description="vizgrad's lesson exercises and their checkers.")
    add_commands(parser.add_subparsers(dest="lessons_command", metavar="command"))
    args = parser.parse_args(argv)
    if args.lessons_command is None:
        parser.print_help()
        return 2
    return args.lessons_run(args)


if __name__ == "__main__":
    sys.exit(main())
