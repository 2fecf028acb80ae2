"""Debian's Chromium driven by Playwright for Python, for the browser tests.

    @pytest.fixture(scope="module")
    def browser():
        with chromium.launch(needs=("jupyterlab",)) as browser:
            yield browser

Where the browser is missing the tests are skipped, except under CI (``CI=true``, where
.ci/run installs it): there a missing browser fails them. A missing Python package in
``needs`` (and Playwright itself) always fails: they come with ``pip install -e '.[dev]'``.
"""

import contextlib
import importlib.util
import os

import pytest

EXECUTABLE = "/usr/bin/chromium"
# without the networking flags Chromium keeps trying hosts that a closed network refuses
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def in_ci():
    """True when CI runs the tests (CI=true, as .ci/run's callers set it)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@contextlib.contextmanager
def launch(needs=()):
    """A headless Chromium (Playwright's Browser), closed afterwards."""
    if not os.path.exists(EXECUTABLE):
        message = f"Debian's Chromium is not installed at {EXECUTABLE} (apt-get install -y chromium)"
        if in_ci():
            pytest.fail(message + "; under CI the browser tests must run (.ci/run installs it)")
        pytest.skip(message)
    missing = [name for name in ("playwright", *needs) if importlib.util.find_spec(name) is None]
    if missing:
        pytest.fail(f"the browser tests need {', '.join(missing)}: pip install -e '.[dev]'")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=EXECUTABLE, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
