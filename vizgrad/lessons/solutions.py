"""Running the reference solutions (``lessons/solutions/lessonNN.py``, kept apart from the
learners' notebooks) through every checker: ``python -m vizgrad.lessons check-solutions``.
"""

import importlib.util
import os
import sys
import time

from .framework import EXERCISES, PASSED, ensure_loaded, sort_key

ENV_VARIABLE = "VIZGRAD_SOLUTIONS"


class SolutionMissing(LookupError):
    """A reference solution named by an exercise cannot be found."""


def solutions_dir():
    """Where the reference solutions are: ``$VIZGRAD_SOLUTIONS``, else ``lessons/solutions``
    next to the vizgrad package (a source checkout), else under the current directory."""
    candidates = [os.environ.get(ENV_VARIABLE)]
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates += [os.path.join(package_parent, "lessons", "solutions"),
                   os.path.join(os.getcwd(), "lessons", "solutions")]
    for candidate in candidates:
        if candidate and os.path.isdir(candidate):
            return candidate
    raise SolutionMissing("no lessons/solutions folder found: run from a vizgrad source checkout, or set "
                          f"{ENV_VARIABLE} to the folder")


_MODULES = {}


def load_module(name, directory=None):
    """Import ``<directory>/<name>.py`` (once) under a private module name."""
    directory = directory or solutions_dir()
    path = os.path.join(directory, f"{name}.py")
    key = os.path.abspath(path)
    if key not in _MODULES:
        if not os.path.exists(path):
            raise SolutionMissing(f"no solution module {path}")
        spec = importlib.util.spec_from_file_location(f"vizgrad_lesson_solutions.{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _MODULES[key] = module
    return _MODULES[key]


def load_solution(exercise, directory=None):
    """The reference objects for ``exercise`` (a tuple, one per checker argument)."""
    objects = []
    for spec in exercise.solution:
        module_name, _, attribute = spec.partition(":")
        module = load_module(module_name, directory)
        if not hasattr(module, attribute):
            raise SolutionMissing(f"{module_name}.py has no {attribute} (exercise {exercise.id})")
        objects.append(getattr(module, attribute))
    return tuple(objects)


def check_solutions(directory=None, only=None, out=print):
    """Run every (or ``only`` the given ids') reference solution through its checker.

    Prints one line per exercise and returns the exit status: 0 when all pass.
    """
    ensure_loaded()
    directory = directory or solutions_dir()
    failures = 0
    ids = sorted(EXERCISES, key=sort_key)
    if only:
        unknown = sorted(set(only) - set(ids))
        if unknown:
            out(f"unknown exercise ids: {', '.join(unknown)}")
            return 2
        ids = [i for i in ids if i in set(only)]
    out(f"checking {len(ids)} reference solutions from {directory}")
    started = time.perf_counter()
    for exercise_id in ids:
        exercise = EXERCISES[exercise_id]
        try:
            objects = load_solution(exercise, directory)
        except SolutionMissing as error:
            failures += 1
            out(f"  {exercise_id:>5}  MISSING   {exercise.title}: {error}")
            continue
        result = exercise(*objects)
        status = "ok" if result.status == PASSED else result.status.upper()
        out(f"  {exercise_id:>5}  {status:<8}  {exercise.title} ({result.seconds:.2f} s)")
        if result.status != PASSED:
            failures += 1
            out("         " + str(result).replace("\n", "\n         "))
    out(f"{len(ids) - failures}/{len(ids)} passed in {time.perf_counter() - started:.1f} s")
    return 0 if failures == 0 else 1
