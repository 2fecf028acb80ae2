"""The exercise framework: a registry of checkers, the :class:`Result` they answer with,
and the one runner that turns a learner's mistake, unfinished stub or crash into
friendly feedback instead of a traceback.

A checker is a function decorated with :func:`exercise`. It receives what the learner
passed (a function, a class, a tensor...), calls the learner's code only through
:func:`call` (or inside :func:`learner_code`), and either

* returns a short message (the exercise passed; a list of strings becomes the list of
  checks that passed),
* raises :class:`Mistake` (a wrong answer, with a hint and, where it helps, a graph
  figure that highlights the node at fault), or
* lets :class:`NotDone` escape (the learner's stub still raises ``NotImplementedError``).

A checker with several independent checks runs each inside :class:`Parts`, so that every
one is reported, not just the first failure: the result then carries ``parts`` and a
``score`` (partial credit). A mistake may carry several hints, from a nudge to nearly the
answer: each attempt at an exercise (counted per exercise in the kernel, :data:`ATTEMPTS`)
shows one more (:mod:`vizgrad.lessons.hints`).

The runner catches everything else too: an exception from the learner's code becomes
an ``error`` result that quotes the learner's line; an exception from the checker
itself becomes an ``error`` result that says so. A check that runs longer than
:data:`TIME_LIMIT` seconds (a loop that never ends in the learner's code) is stopped and
answers so, where the platform can interrupt it (a SIGALRM timer, in the main thread: a
notebook's kernel or a script, not Windows). A checker never raises into a notebook.
"""

import contextlib
import html
import re
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from . import hints as hint_levels

PASSED, FAILED, NOT_DONE, ERROR = "passed", "failed", "not done", "error"

_SYMBOLS = {PASSED: "✔", FAILED: "✘", NOT_DONE: "✎", ERROR: "⚠"}
_COLOURS = {PASSED: "#2e7d32", FAILED: "#c62828", NOT_DONE: "#b26a00", ERROR: "#616161"}
_BACKGROUNDS = {PASSED: "#f1f8f1", FAILED: "#fdf1f0", NOT_DONE: "#fff8e6", ERROR: "#f5f5f5"}


# --- what checkers raise ---------------------------------------------------------
class NotDone(Exception):
    """The learner has not written this part yet (their stub raised NotImplementedError)."""


class Mistake(Exception):
    """A wrong answer.

    Args:
        message: what is wrong, specifically (values, shapes, the input concerned).
        hint: how to fix it, without giving the answer away; or a list of hints, from a
            nudge to nearly the answer, one more shown at each attempt.
        kind: a short code for the kind of mistake (``"sign"``, ``"missing-broadcast-sum"``,
            ``"overwrite"``, ``"transposed"``, ...); tests and teachers can match on it.
        figure: something with ``_repr_html_`` shown under the feedback, e.g. a
            :class:`vizgrad.lessons.figures.GraphFigure` highlighting the node at fault.
        details: more lines (expected and actual values side by side, ...).
    """

    def __init__(self, message, hint=None, kind=None, figure=None, details=()):
        super().__init__(message)
        self.message, self.hint, self.kind, self.figure = message, hint, kind, figure
        self.details = list(details)
        self.parts = []


@dataclass
class Part:
    """One sub-check of an exercise: ``name``, ``passed`` and its ``message`` (what passed,
    or what is wrong)."""

    name: str
    passed: bool
    message: str
    mistake: Optional[Mistake] = None


class Parts:
    """The sub-checks of one exercise, each run and reported even when an earlier one failed::

        parts = Parts()
        with parts.check("dlogits", passed="dlogits is right"):
            ...                      # raise Mistake(...) when it is wrong
        with parts.check("dW2"):
            ...
        return parts.done()          # the passed messages, or the first Mistake, carrying every part

    Only a :class:`Mistake` is caught: an unfinished stub or the learner's exception still
    ends the whole check.
    """

    def __init__(self):
        self.items = []

    def check(self, name, passed=None):
        return _PartCheck(self, name, passed or name)

    def add(self, name, mistake=None, passed=None):
        """Record a sub-check done elsewhere: passed when ``mistake`` is None."""
        message = passed or name if mistake is None else mistake.message
        self.items.append(Part(name, mistake is None, message, mistake))

    def done(self):
        failed = [part for part in self.items if not part.passed]
        if not failed:
            return [part.message for part in self.items]
        first = failed[0].mistake
        first.parts = list(self.items)
        raise first


class _PartCheck:
    def __init__(self, parts, name, passed):
        self.parts, self.name, self.passed = parts, name, passed

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if error is None:
            self.parts.add(self.name, passed=self.passed)
            return False
        if isinstance(error, Mistake):
            self.parts.add(self.name, error)
            return True
        return False


class LearnerError(Exception):
    """The learner's code raised ``error`` (anything but NotImplementedError)."""

    def __init__(self, error, what=None):
        super().__init__(str(error))
        self.error, self.what = error, what


# --- calling the learner's code ----------------------------------------------------
def call(function, *args, what=None, **kwargs):
    """``function(*args, **kwargs)`` where ``function`` is the learner's code.

    NotImplementedError becomes :class:`NotDone`; any other exception becomes
    :class:`LearnerError` (which the checker may inspect, e.g. for a ShapeError, or let
    the runner report). ``what`` names the call in feedback ("your backward").
    """
    if not callable(function):
        raise Mistake(f"Expected something callable{f' for {what}' if what else ''}, got "
                      f"{_describe(function)}.", hint="Pass the function itself, without calling it: "
                                                      "`check.exercise_1_1(my_function)`.", kind="not-callable")
    with learner_code(what):
        return function(*args, **kwargs)


class learner_code:
    """``with learner_code("your backward"): ...``: like :func:`call`, for a block that runs
    the learner's code indirectly (e.g. ``loss.backward()`` through their Function)."""

    def __init__(self, what=None):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if error is None or isinstance(error, (NotDone, Mistake, LearnerError)):
            return False
        if isinstance(error, NotImplementedError):
            raise NotDone(str(error)) from error
        if isinstance(error, Exception):
            raise LearnerError(error, self.what) from error
        return False


def _describe(value):
    if isinstance(value, type):
        return f"the class {value.__name__}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 60 else text[:57] + '...'}"


# --- results --------------------------------------------------------------------------
@dataclass
class Result:
    """What a checker answers: ``.passed``, ``.status`` and friendly text.

    It renders as a coloured box in notebooks (``_repr_html_``, ``_repr_markdown_``) and
    as plain text with ``print`` or ``str``. ``bool(result)`` is ``result.passed``.
    """

    exercise: str
    title: str
    status: str
    message: str
    hint: Optional[str] = None
    mistake: Optional[str] = None
    details: list = field(default_factory=list)
    figure: Any = None
    seconds: float = 0.0
    more_hints: list = field(default_factory=list)
    hints_left: int = 0
    attempt: int = 1
    parts: list = field(default_factory=list)

    @property
    def passed(self):
        return self.status == PASSED

    def __bool__(self):
        return self.passed

    @property
    def score(self):
        """The share of sub-checks passed: 1.0 when passed, 0.0 when failed without parts."""
        if self.passed:
            return 1.0
        return sum(part.passed for part in self.parts) / len(self.parts) if self.parts else 0.0

    @property
    def grade(self):
        """``"passed"``, ``"partial"`` (some sub-checks passed) or ``"failed"``."""
        return PASSED if self.passed else "partial" if self.score > 0 else FAILED

    def _hint_lines(self):
        lines = [("Hint" if i == 0 else f"Hint {i + 1}", h) for i, h in enumerate([self.hint] + self.more_hints)
                 if h]
        if self.hints_left:
            lines.append(("", "Another hint comes with your next attempt."))
        return lines

    def _part_lines(self):
        """``(symbol, name, message or None)`` per sub-check, when there are several."""
        if not self.parts:
            return []
        return [(_SYMBOLS[PASSED if p.passed else FAILED], p.name,
                 None if p.passed or p.message == self.message else p.message) for p in self.parts]

    def headline(self):
        words = {PASSED: "passed", FAILED: "not quite", NOT_DONE: "not done yet", ERROR: "your code raised an error"}
        word = {"checker-bug": "the checker failed", "usage": "check how it is called"}.get(self.mistake,
                                                                                          words[self.status])
        return f"Exercise {self.exercise} ({self.title}): {word}"

    def __str__(self):
        lines = [f"{_SYMBOLS[self.status]} {self.headline()}", _plain(self.message)]
        lines += ["  - " + _plain(d) for d in self.details]
        if self.parts:
            lines.append(f"{sum(p.passed for p in self.parts)} of {len(self.parts)} checks passed:")
            lines += [f"  {symbol} {name}" + (f": {_plain(text)}" if text else "")
                      for symbol, name, text in self._part_lines()]
        lines += [(f"{label}: " if label else "") + _plain(text) for label, text in self._hint_lines()]
        figure_text = getattr(self.figure, "text", None)
        if callable(figure_text):
            lines.append(figure_text())
        return "\n".join(line for line in lines if line)

    def __repr__(self):
        return str(self)

    def _repr_markdown_(self):
        lines = [f"**{_SYMBOLS[self.status]} {self.headline()}**", "", self.message]
        if self.details:
            lines += [""] + [f"- {d}" for d in self.details]
        if self.parts:
            lines += ["", f"{sum(p.passed for p in self.parts)} of {len(self.parts)} checks passed:", ""]
            lines += [f"- {symbol} `{name}`" + (f": {text}" if text else "")
                      for symbol, name, text in self._part_lines()]
        for label, text in self._hint_lines():
            lines += ["", (f"*{label}:* " if label else "") + text]
        return "\n".join(lines)

    def _repr_html_(self):
        colour, background = _COLOURS[self.status], _BACKGROUNDS[self.status]
        parts = [f'<div class="vizgrad-check vizgrad-check-{self.status.replace(" ", "-")}" '
                 f'style="border-left:5px solid {colour};background:{background};color:#212121;padding:8px 12px;'
                 f'margin:4px 0;border-radius:4px;font-family:system-ui,sans-serif;line-height:1.45">',
                 f'<div style="font-weight:600;color:{colour}">{_SYMBOLS[self.status]} '
                 f'{html.escape(self.headline())}</div>',
                 f"<div>{inline_markup(self.message)}</div>"]
        if self.details:
            parts.append('<ul style="margin:4px 0 4px 18px;padding:0">'
                         + "".join(f"<li>{inline_markup(d)}</li>" for d in self.details) + "</ul>")
        if self.parts:
            parts.append(f'<div style="margin-top:4px">{sum(p.passed for p in self.parts)} of {len(self.parts)} '
                         'checks passed:</div><ul style="margin:2px 0 4px 18px;padding:0;list-style:none">'
                         + "".join(f"<li>{symbol} <code>{html.escape(name)}</code>"
                                   + (f": {inline_markup(text)}" if text else "") + "</li>"
                                   for symbol, name, text in self._part_lines()) + "</ul>")
        for label, text in self._hint_lines():
            parts.append(f'<div style="margin-top:4px">{f"<b>{label}:</b> " if label else ""}'
                         f"{inline_markup(text)}</div>")
        figure_html = None
        if self.figure is not None and hasattr(self.figure, "_repr_html_"):
            try:
                figure_html = self.figure._repr_html_()
            except Exception:                      # a figure must never hide the feedback
                figure_html = None
        if figure_html:
            parts.append(f'<div style="margin-top:6px">{figure_html}</div>')
        parts.append("</div>")
        return "".join(parts)


_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline_markup(text):
    """Escape ``text`` and turn its `code` and **bold** spans into HTML."""
    escaped = html.escape(str(text))
    escaped = _CODE.sub(r'<code style="background:rgba(0,0,0,.06);padding:0 3px;border-radius:3px">\1</code>',
                        escaped)
    return _BOLD.sub(r"<b>\1</b>", escaped).replace("\n", "<br>")


def _plain(text):
    return str(text).replace("**", "")


# --- the registry --------------------------------------------------------------------
@dataclass
class Exercise:
    """One registered exercise: ``id`` like ``"3.2"``, called as ``check.exercise_3_2(...)``.

    ``solution`` names the reference answer(s) in ``lessons/solutions/``:
    ``"lesson03:MySigmoid"`` (module ``lesson03.py``, attribute ``MySigmoid``), or a tuple
    of such names when the exercise takes several arguments.
    """

    id: str
    title: str
    lesson: str
    checker: Any
    solution: tuple

    @property
    def attribute(self):
        return "exercise_" + self.id.replace(".", "_")

    def __call__(self, *learner, **options):
        return run(self, learner, options)

    def __repr__(self):
        return f"<exercise {self.id}: {self.title} (lesson {self.lesson})>"


EXERCISES = {}


def exercise(id, title, lesson, solution):
    """Register the decorated checker as exercise ``id`` (see :class:`Exercise`)."""
    if not re.fullmatch(r"\d+\.\d+", id):
        raise ValueError(f"exercise ids look like '3.2', got {id!r}")
    solution = (solution,) if isinstance(solution, str) else tuple(solution)

    def register(checker):
        if id in EXERCISES and EXERCISES[id].checker.__module__ != checker.__module__:
            raise ValueError(f"exercise {id} is already registered by {EXERCISES[id].checker.__module__}")
        EXERCISES[id] = Exercise(id, title, lesson, checker, solution)
        return checker
    return register


#: Seconds a check may run before it is stopped as endless (set it higher for a slow machine).
TIME_LIMIT = 60.0


class TimeLimitExceeded(BaseException):
    """Raised inside the learner's code when a check runs past :data:`TIME_LIMIT` (a
    BaseException, so that the learner's own ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds):
    """Interrupt the block with :class:`TimeLimitExceeded` after ``seconds``, where a real-time
    timer can (the main thread of a Unix process, no timer of someone else's running)."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and seconds and seconds > 0 and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
    if not usable:
        yield
        return

    def stop(signum, frame):
        raise TimeLimitExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: How many times each exercise was checked in this kernel (the hint level of the next failure).
ATTEMPTS = Counter()
#: Called with every :class:`Result` (the grader records them: :mod:`vizgrad.lessons.grading`).
RECORDERS = []


def run(exercise, learner, options=None):
    """Run ``exercise``'s checker on the learner's arguments; always returns a :class:`Result`
    (counted as one attempt, and handed to every recorder)."""
    ATTEMPTS[exercise.id] += 1
    outcome = _outcome(exercise, learner, options, ATTEMPTS[exercise.id])
    for record in RECORDERS:
        record(outcome)
    return outcome


def _outcome(exercise, learner, options, attempt):
    started = time.perf_counter()

    def result(status, message, **extra):
        return Result(exercise.id, exercise.title, status, message, seconds=time.perf_counter() - started,
                      attempt=attempt, **extra)

    try:
        with _time_limit(TIME_LIMIT):
            outcome = exercise.checker(*learner, **(options or {}))
    except TimeLimitExceeded:
        return result(ERROR, f"The check was stopped after {TIME_LIMIT:g} s: your code did not finish.",
                      mistake="timeout", hint="Look for a loop that never ends (a `while` whose condition "
                                              "never becomes false, or a recursion without a base case), then "
                                              "run the check again.")
    except NotDone:
        return result(NOT_DONE, "Replace `raise NotImplementedError` with your code, run the cell, then run "
                                "this check again.")
    except Mistake as mistake:
        levels = hint_levels.levels(mistake.hint, mistake.kind)
        shown = levels[:attempt]
        return result(FAILED, mistake.message, hint=shown[0] if shown else None, more_hints=shown[1:],
                      hints_left=len(levels) - len(shown), mistake=mistake.kind, details=mistake.details,
                      figure=mistake.figure, parts=mistake.parts)
    except LearnerError as error:
        return result(ERROR, learner_error_message(error.error, error.what), mistake="exception",
                      hint=error_hint(error.error))
    except TypeError as error:
        if _is_signature_error(error):
            return result(ERROR, f"This check takes {_arguments(exercise)}; it was called with "
                                 f"{len(learner)} argument{'s' if len(learner) != 1 else ''}.",
                          mistake="usage")
        return _checker_failure(result, exercise, error)
    except Exception as error:  # the checker itself failed: say so, never raise into the notebook
        return _checker_failure(result, exercise, error)
    if isinstance(outcome, (list, tuple)):
        return result(PASSED, "Well done.", details=list(outcome))
    return result(PASSED, outcome or "Well done.")


def _checker_failure(result, exercise, error):
    where = traceback.extract_tb(error.__traceback__)[-1]
    return result(ERROR, f"The checker of exercise {exercise.id} itself failed ({type(error).__name__}: {error}, "
                         f"at {where.filename}:{where.lineno}). This is a bug in vizgrad's lessons, not in "
                         "your code: please report it.", mistake="checker-bug")


def _is_signature_error(error):
    """A TypeError raised by calling the checker itself (the wrong number of arguments)."""
    frames = traceback.extract_tb(error.__traceback__)
    return len(frames) == 1 and ("positional argument" in str(error) or "keyword argument" in str(error))


def _arguments(exercise):
    import inspect
    names = [p.name for p in inspect.signature(exercise.checker).parameters.values()
             if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    return ", ".join(f"`{n}`" for n in names) or "no arguments"


def learner_error_message(error, what=None):
    """'Your code raised ...', quoting the learner's own line (the innermost frame outside
    vizgrad and the standard library) when there is one."""
    frame = learner_frame(error)
    where = ""
    if frame is not None:
        where = f" in `{frame.name}`" + (f", at the line `{frame.line.strip()}`" if frame.line else "")
    subject = f"{what[0].upper()}{what[1:]}" if what else "Your code"
    return f"{subject} raised `{type(error).__name__}`{where}: {error}"


def learner_frame(error):
    """The innermost traceback frame of ``error`` that is not in vizgrad's own package."""
    import os
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stdlib = os.path.dirname(os.__file__)
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not os.path.abspath(f.filename).startswith(package + os.sep)
              and not os.path.abspath(f.filename).startswith(stdlib + os.sep)]
    return frames[-1] if frames else None


def error_hint(error):
    """A hint for the usual exceptions learners meet."""
    from ..errors import ShapeError
    text = str(error)
    if isinstance(error, ShapeError) or "broadcast" in text:
        return ("A shape problem: print the `.shape` of each tensor involved and check it against the maths "
                "(lesson 02 has the broadcasting rules).")
    if isinstance(error, AttributeError) and "NoneType" in text:
        return "Something is None: a function without `return`, or a `.grad` read before `.backward()`?"
    if isinstance(error, (NameError, UnboundLocalError)):
        return "Run the cells above this one first (Run > Run All Above Selected Cell)."
    return None


# --- the learner's namespace ---------------------------------------------------------
class Checks:
    """``check.exercise_3_2(MySigmoid)``: every registered exercise as a method.

    ``check.list()`` shows them all; ``check.exercise_3_2`` is the :class:`Exercise`
    itself (call it to check).
    """

    def __getattr__(self, name):
        if name.startswith("exercise_"):
            ensure_loaded()
            for item in EXERCISES.values():
                if item.attribute == name:
                    return item
            known = ", ".join(sorted(EXERCISES, key=sort_key))
            raise AttributeError(f"there is no {name}; the exercises are {known}")
        raise AttributeError(name)

    def __dir__(self):
        ensure_loaded()
        return sorted(["list"] + [item.attribute for item in EXERCISES.values()])

    def list(self):
        """The exercises as a table (a :class:`ExerciseList`)."""
        ensure_loaded()
        return ExerciseList([EXERCISES[key] for key in sorted(EXERCISES, key=sort_key)])

    def __repr__(self):
        return "<vizgrad.lessons.check: call check.exercise_1_1(...) and so on; check.list() shows all>"


class ExerciseList(list):
    def __str__(self):
        return "\n".join(f"{e.id:>5}  check.{e.attribute:<14} lesson {e.lesson}: {e.title}" for e in self)

    __repr__ = __str__

    def _repr_markdown_(self):
        rows = ["| exercise | call | lesson | what |", "| --- | --- | --- | --- |"]
        rows += [f"| {e.id} | `check.{e.attribute}(...)` | {e.lesson} | {e.title} |" for e in self]
        return "\n".join(rows)


def sort_key(exercise_id):
    return tuple(int(part) for part in exercise_id.split("."))


_LOADED = []


def ensure_loaded():
    """Import every ``vizgrad/lessons/exercises_*.py`` module, which registers its exercises."""
    if _LOADED:
        return
    import importlib
    import pkgutil
    package = sys.modules[__name__.rpartition(".")[0]]
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("exercises_"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    _LOADED.append(True)
