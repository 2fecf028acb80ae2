# Every target creates (or reuses) the virtual environment .venv and installs what it
# needs itself; a stamp file per extra skips the install until pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet
# Two workers suit a 2-core machine; override with `make test PYTEST_ARGS=...`.
PYTEST_ARGS ?= -n 2

.PHONY: demo test bench clean
.NOTPARALLEL:  # the targets share one .venv; never install into it twice at once

demo: $(VENV)/.stamp-base
	$(PY) -m vizgrad demo

test: $(VENV)/.stamp-dev
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: $(VENV)/.stamp-bench
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

$(PY):
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "Could not create $(VENV): on Debian/Ubuntu install python3-venv (apt-get install python3-venv)." >&2; exit 1; }

$(VENV)/.stamp-base: pyproject.toml | $(PY)
	$(PIP) -e .
	touch $@

$(VENV)/.stamp-dev: pyproject.toml | $(PY)
	$(PIP) -e ".[dev]"
	touch $@

$(VENV)/.stamp-bench: pyproject.toml | $(PY)
	$(PIP) -e ".[bench]"
	touch $@
