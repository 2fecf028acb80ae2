"""vizgrad's pytest plugin (the ``pytest11`` entry point): vizgrad's floating-point warnings stay
quiet in tests, as they do everywhere else.

vizgrad gives the inf and NaN of domain errors silently, as PyTorch does (``asin(2.)``,
``x / 0``): at import it installs a warnings filter for NumPy's floating-point
``RuntimeWarning``s raised inside its own modules (``vizgrad/backends/numpy_backend.py``). pytest
runs collection and each test inside ``warnings.catch_warnings``, which drops a filter installed
there when it ends, and applies the project's ``filterwarnings`` and ``-W`` options per test; this
plugin adds the same filter inside each test's block, after those, so that ``-W error`` makes the
user's own warnings errors and never vizgrad's NaN of a domain error. The user's own NumPy code
still warns. pytest loads this module at start-up in every run, so it imports nothing of vizgrad.
"""

import warnings

import pytest

# The patterns of vizgrad.backends.numpy_backend.quiet_floating_point_warnings (a test checks).
MESSAGE = r"(invalid value|divide by zero|overflow|underflow) encountered in"
MODULE = r"vizgrad\."


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Inside pytest's per-test ``catch_warnings`` (its own wrapper runs first): the filter goes
    with the test's copy of the filters."""
    warnings.filterwarnings("ignore", message=MESSAGE, category=RuntimeWarning, module=MODULE)
    return (yield)
