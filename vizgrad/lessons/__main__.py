"""``python -m vizgrad.lessons check-solutions`` (run every reference solution through its
checker) and ``python -m vizgrad.lessons list`` (the exercises)."""

import argparse
import sys


def add_commands(commands):
    """Add ``check-solutions`` and ``list`` to an argparse subparsers object (also used by
    ``vizgrad lessons``)."""
    check = commands.add_parser("check-solutions", help="run every reference solution through its checker",
                                description="Run the reference solutions (lessons/solutions/) through every "
                                            "exercise checker; exit 1 if any fails.")
    check.add_argument("--solutions", metavar="DIR", help="the solutions folder (default: lessons/solutions)")
    check.add_argument("--only", nargs="+", metavar="ID", help="exercise ids to check, e.g. 3.2 4.1")
    check.set_defaults(lessons_run=_check_solutions)
    listing = commands.add_parser("list", help="list the exercises")
    listing.set_defaults(lessons_run=_list)


def _check_solutions(args):
    from .solutions import SolutionMissing, check_solutions
    try:
        return check_solutions(args.solutions, args.only)
    except SolutionMissing as error:
        print(f"vizgrad lessons: {error}", file=sys.stderr)
        return 2


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
