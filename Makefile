# Every target creates (or reuses) the virtual environment .venv and installs what it
# needs itself; a stamp file per extra skips the install until pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet
# Two workers suit a 2-core machine; override with `make test PYTEST_ARGS=...`.
PYTEST_ARGS ?= -n 2

# The browser bundle (the HTML report's script and styles, package data under
# vizgrad/render/static/) is built from widgets/ with Node.js and npm: `npm ci` reruns
# only when the lock file changes, the bundle only when a source does.
WIDGETS := widgets
NODE_MODULES := $(WIDGETS)/node_modules/.stamp-ci
BUNDLE := vizgrad/render/static/report.js vizgrad/render/static/report.css
NEED_NPM = command -v npm >/dev/null || { echo "Building vizgrad's browser bundle needs Node.js 18+ and npm (on Debian: apt-get install nodejs npm)." >&2; exit 1; }

.PHONY: demo test build bench clean
.NOTPARALLEL:  # the targets share one .venv; never install into it twice at once

demo: $(VENV)/.stamp-base $(BUNDLE)
	$(PY) -m vizgrad demo

test: $(VENV)/.stamp-dev $(BUNDLE)
	cd $(WIDGETS) && npm test --silent
	$(PY) -m pytest -q $(PYTEST_ARGS)

build: $(BUNDLE)

$(NODE_MODULES): $(WIDGETS)/package.json $(WIDGETS)/package-lock.json
	@$(NEED_NPM)
	cd $(WIDGETS) && npm ci --no-audit --no-fund
	touch $@

$(BUNDLE) &: $(NODE_MODULES) $(WIDGETS)/build.mjs $(wildcard $(WIDGETS)/src/*)
	cd $(WIDGETS) && node build.mjs
	touch $(BUNDLE)

bench: $(VENV)/.stamp-bench
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis test-artifacts $(WIDGETS)/node_modules vizgrad/render/static
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
