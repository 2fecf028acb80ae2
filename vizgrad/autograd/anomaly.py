"""Anomaly detection: remember where each node was created, and stop at the first
backward that produces NaN or inf, naming the op and the user's line that made it."""

import os

from .grad_mode import state

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class detect_anomaly:
    """Context manager (and decorator) that turns on anomaly detection.

    Example::

        with vizgrad.autograd.detect_anomaly():
            loss = (x.log() * 0).sum()     # log(0) * 0 gives nan in backward
            loss.backward()                # BackwardError: MulBackward returned nan ... created at your_file.py:2
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._previous = (state.anomaly_enabled, state.anomaly_check_nan)
        state.anomaly_enabled = True
        state.anomaly_check_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        state.anomaly_enabled, state.anomaly_check_nan = self._previous
        return False

    def __call__(self, function):
        import functools

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return function(*args, **kwargs)
        return wrapper


def is_anomaly_enabled():
    return state.anomaly_enabled


def user_frames(stack):
    """The frames of ``stack`` outside vizgrad itself: the user's code."""
    return [frame for frame in stack if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)]


def format_creation(node):
    """'It was created at: File "x.py", line 3, in f: y = a * b' for a node recorded under anomaly mode."""
    frames = user_frames(node.created_at) or list(node.created_at)
    if not frames:
        return ""
    lines = [f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}' +
             (f"\n    {frame.line}" if frame.line else "") for frame in frames[-3:]]
    return "The op was created at (most recent call last):\n" + "\n".join(lines)
