"""Checkers for the exercises at the end of each lesson (``lessons/*.ipynb``).

For learners, in a notebook cell::

    from vizgrad.lessons import check
    check.exercise_1_1(grads_by_hand)      # a function you wrote
    check.exercise_3_2(MySigmoid)          # a class you wrote
    check.list()                           # every exercise

Each call answers with a :class:`Result`: a coloured box in the notebook (``print`` gives
the same as text), ``result.passed`` and ``result.status`` (``"passed"``, ``"failed"``,
``"not done"``, ``"error"``), a specific message, a hint, and for a wrong gradient a
picture of the graph with the faulty node highlighted. A stub that still raises
``NotImplementedError`` is reported as "not done yet"; a checker never raises.

:func:`find_wrong_nodes` is the tool behind those pictures, usable directly: it runs a
function, checks every custom ``autograd.Function`` node in its graph against finite
differences, and highlights the first node (going backward) that disagrees.

Reference solutions live apart from the notebooks, in ``lessons/solutions/lessonNN.py``;
``python -m vizgrad.lessons check-solutions`` (or ``vizgrad lessons check-solutions``)
runs every one of them through its checker. ``vizgrad lessons grade NOTEBOOK... --out
grades.csv`` runs learners' notebooks and grades their exercises (:mod:`.grading`).

A checker made of sub-checks (:class:`Parts`) reports all of them, with partial credit
(``result.score``, ``result.grade``); a mistake's hints grow with each attempt
(:mod:`.hints`). Gradient mistakes are named by the tutor (:func:`vizgrad.tutor.diagnose`).

Adding exercises (lessons 05-09 and later)
------------------------------------------
1. Create a module ``vizgrad/lessons/exercises_<anything>.py`` (e.g. ``exercises_late.py``).
   Every ``exercises_*.py`` module in this package is imported on first use of ``check``;
   nothing else needs registering.
2. In it, write one checker per exercise and decorate it::

       from .framework import Mistake, call, exercise, learner_code
       from . import expect
       from .gradients import check_function, diagnose, find_wrong_nodes

       @exercise("5.1", "a title", lesson="05", solution="lesson05:my_answer")
       def exercise_5_1(my_answer):
           value = call(my_answer, 3.0, what="your my_answer(3.0)")   # the learner's code, only via call()
           if value != 9.0:
               raise Mistake("my_answer(3.0) returned ...", hint="...", kind="values")
           return ["what passed", "and what else"]   # or one message string

   * ``call(fn, ...)`` runs learner code: NotImplementedError becomes "not done", other
     exceptions become :class:`LearnerError` (catch it to turn e.g. a ShapeError into a
     hint; uncaught, the runner reports it quoting the learner's line). For code run
     indirectly (``loss.backward()`` through their Function) use ``with learner_code(...)``.
   * Raise :class:`Mistake` with ``kind`` (a stable code tests can match: ``"sign"``,
     ``"missing-broadcast-sum"``, ``"overwrite"``, ``"transposed"``...), a ``hint`` (or a
     list of hints, a nudge first: one more is shown per attempt) and optionally a
     ``figure`` (:class:`GraphFigure`, or anything with ``_repr_html_``).
   * Several independent checks: run each in ``with parts.check(name):`` of a
     :class:`Parts` and ``return parts.done()``, so every one is reported (partial credit).
   * :mod:`vizgrad.lessons.expect` has the usual assertions (a tensor, a shape, close
     values, a Function subclass); :func:`diagnose` names the usual gradient mistakes;
     :func:`check_function` checks a custom Function's backward against finite differences.
   * Several learner arguments: ``solution=("lesson05:model", "lesson05:train")``.
3. Put the reference answer in ``lessons/solutions/lesson05.py`` under the name given in
   ``solution``; ``python -m vizgrad.lessons check-solutions --only 5.1`` runs it.
4. ``tests/test_lessons_checkers.py`` runs every registered exercise's solution; add your
   wrong-answer tests beside it (one test per mistake kind you recognise).
5. In the notebook, end with a cell calling ``check.exercise_5_1(my_answer)`` after a stub
   that raises ``NotImplementedError``, so a fresh notebook runs top to bottom.
"""

from .embedding_map import EmbeddingMap
from .figures import DecisionBoundary, GraphFigure, LossCurve
from .framework import (ERROR, EXERCISES, FAILED, NOT_DONE, PASSED, Checks, Exercise, LearnerError, Mistake,
                        NotDone, Parts, Result, call, exercise, learner_code)
from .gradients import check_function, diagnose, find_wrong_nodes, numerical_vjp
from .handgraph import Scalar

check = Checks()

__all__ = ["check", "Checks", "DecisionBoundary", "EmbeddingMap", "ERROR", "EXERCISES", "Exercise", "FAILED",
           "GraphFigure", "LearnerError", "LossCurve", "Mistake", "NOT_DONE", "NotDone", "PASSED", "Parts", "Result",
           "Scalar", "call", "check_function", "diagnose", "exercise", "find_wrong_nodes", "learner_code", "numerical_vjp"]
