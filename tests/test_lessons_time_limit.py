"""A check whose learner code never finishes is stopped at the time limit and says so, and a
learner's ``except Exception`` cannot swallow the stop."""

import signal
import time

import pytest

from vizgrad.lessons import check, framework

# pytest-timeout's own SIGALRM timer would keep the check's from starting (it never takes
# a timer that someone else runs): watch these tests from a thread instead
pytestmark = pytest.mark.timeout(60, method="thread")


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(framework, "TIME_LIMIT", 0.5)


def endless(x, y):
    while True:
        try:
            time.sleep(0.01)
        except Exception:      # a learner's catch-all keeps going: the stop still gets through
            pass


def test_an_endless_answer_is_stopped_and_told_what_to_look_for(short_limit):
    started = time.perf_counter()
    result = check.exercise_1_1(endless)
    assert time.perf_counter() - started < 5
    assert result.status == "error" and result.mistake == "timeout"
    assert result.message == "The check was stopped after 0.5 s: your code did not finish."
    assert "a loop that never ends" in result.hint
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0            # no timer left running
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.default_int_handler, None)


def test_a_right_answer_finishes_under_the_limit_as_before(short_limit):
    import math

    def grads(x, y):
        return -math.sin(x * y) * y + 1, -math.sin(x * y) * x
    assert check.exercise_1_1(grads).passed


def test_a_timer_someone_else_runs_is_left_alone(short_limit):
    def theirs(signum, frame):
        raise AssertionError("their alarm went off")
    previous = signal.signal(signal.SIGALRM, theirs)
    signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        assert check.exercise_1_1(lambda x, y: (0.0, 0.0)).status == "failed"
        assert signal.getsignal(signal.SIGALRM) is theirs
        assert 90 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
