"""The framework's hint levels and sub-checks (vizgrad/lessons/framework.py, hints.py): a
mistake's hints are shown one more per attempt, the tutor's kinds of mistake get a second
hint in every lesson, and :class:`Parts` reports every sub-check."""

import pytest

from vizgrad.lessons import check
from vizgrad.lessons.framework import ATTEMPTS, Exercise, Mistake, NotDone, Parts, run
from vizgrad.lessons.gradients import diagnose
from vizgrad.lessons.hints import FURTHER, LESSON_CODES, levels, tutor_kind
from vizgrad.tutor import KINDS


def test_every_tutor_kind_has_a_lesson_code_and_a_further_hint():
    assert set(LESSON_CODES) == set(KINDS) == set(FURTHER)
    assert all(tutor_kind(code) == kind for kind, code in LESSON_CODES.items())
    assert tutor_kind("missing-tanh-derivative") == "other"


def test_the_lessons_diagnose_is_the_tutors_under_the_lessons_codes():
    import numpy as np
    problem = diagnose(-np.ones(3), np.ones(3), "b")
    assert problem.kind == "sign" and problem.tutor_kind == "wrong_sign"
    assert "The gradient for `b` has the wrong sign" in problem.message
    assert diagnose(np.ones((4, 3)), np.full(3, 4.0), "b").kind == "missing-broadcast-sum"
    assert "The value for `f` is 2 times" in diagnose(np.full(2, 2.0), np.ones(2), "f", what="value").message
    assert diagnose(np.full(2, 8.0), np.ones(2), "x", sizes=(8,)).message.endswith("a division by 8 is missing.")


def test_an_existing_checkers_single_hint_gets_the_kinds_further_hint_at_the_second_attempt():
    ATTEMPTS.pop("13.1", None)
    wrong_sign = lambda g, h, W: -(g * (1 - h ** 2)) @ W      # noqa: E731
    first, second = check.exercise_13_1(wrong_sign), check.exercise_13_1(wrong_sign)
    assert first.mistake == second.mistake == "sign" and first.hint == second.hint
    assert first.more_hints == [] and first.hints_left == 1
    assert second.more_hints == [FURTHER["wrong_sign"]] and second.hints_left == 0 and second.attempt == 2
    assert "Hint 2: Go through your backward pass" in str(second)
    assert "<b>Hint 2:</b>" in second._repr_html_() and "*Hint 2:*" in second._repr_markdown_()


def test_levels_keep_an_exercises_own_hints_and_skip_empty_ones():
    assert levels(["a", None, "b"], "sign") == ["a", "b"]
    assert levels("only", "t-from-zero") == ["only"]
    assert levels(None, "sign") == []


def checker_with_parts(answer):
    parts = Parts()
    for name in ("one", "two", "three"):
        with parts.check(name, passed=f"{name} is right"):
            if answer.get(name) is NotDone:
                raise NotDone()
            if not answer.get(name):
                raise Mistake(f"{name} is wrong.", [f"nudge {name}", f"more {name}"], kind="values")
    return parts.done()


EXERCISE = Exercise("99.1", "three parts", "99", checker_with_parts, ())


def test_parts_report_every_sub_check_with_partial_credit():
    ATTEMPTS.pop("99.1", None)
    result = run(EXERCISE, ({"one": True, "two": False, "three": False},))
    assert result.status == "failed" and result.grade == "partial" and result.score == pytest.approx(1 / 3)
    assert result.message == "two is wrong." and result.hint == "nudge two"
    assert [(p.name, p.passed, p.message) for p in result.parts] == [
        ("one", True, "one is right"), ("two", False, "two is wrong."), ("three", False, "three is wrong.")]
    text = str(result)
    assert "1 of 3 checks passed:" in text and "✔ one" in text and "✘ three: three is wrong." in text
    assert "✘ two:" not in text          # the first failure is the message already
    passed = run(EXERCISE, ({"one": True, "two": True, "three": True},))
    assert passed.passed and passed.details == ["one is right", "two is right", "three is right"]
    assert run(EXERCISE, ({},)).grade == "failed"


def test_an_unfinished_part_ends_the_whole_check_as_not_done():
    assert run(EXERCISE, ({"one": True, "two": NotDone},)).status == "not done"


def test_recorders_get_every_result():
    from vizgrad.lessons.framework import RECORDERS
    seen = []
    RECORDERS.append(seen.append)
    try:
        run(EXERCISE, ({"one": True},))
    finally:
        RECORDERS.remove(seen.append)
    assert [(r.exercise, r.grade) for r in seen] == [("99.1", "partial")]
