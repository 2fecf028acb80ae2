"""What the lesson checkers' tests share: run a lesson's checker by exercise id, and assert
that a wrong answer was caught as the mistake it is."""

from vizgrad.lessons import check


def run(exercise_id, *answer):
    """``check.exercise_<id>(*answer)``, e.g. ``run("15.1", Dual)``."""
    return getattr(check, "exercise_" + exercise_id.replace(".", "_"))(*answer)


def assert_caught(result, kind, *words):
    """The answer failed, was recognised as ``kind`` and came with a hint (mentioning ``words``)."""
    assert result.status == "failed", str(result)
    assert result.mistake == kind, str(result)
    assert result.hint, str(result)
    for word in words:
        assert word in result.hint or word in result.message, str(result)
