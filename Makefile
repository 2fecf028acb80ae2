# Every target creates (or reuses) the virtual environment .venv and installs what it
# needs itself; a stamp file per extra skips the install until pyproject.toml changes.
# vizgrad goes in editable; the package build's own npm step is skipped (SKIP_JUPYTER_BUILDER):
# this Makefile builds widgets/ itself, only when a source changed.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := SKIP_JUPYTER_BUILDER=1 $(PY) -m pip install --quiet
# Two workers suit a 2-core machine; override with `make test PYTEST_ARGS=...`. loadgroup
# keeps the tests marked with one xdist_group on one worker (the JupyterLab tests share a server).
PYTEST_ARGS ?= -n 2 --dist loadgroup

# The browser bundle (the HTML report's script and styles, package data under
# vizgrad/render/static/) is built from widgets/ with Node.js and npm (`npm run build`):
# `npm ci` reruns only when the lock file changes, the bundle only when a source does.
WIDGETS := widgets
NODE_MODULES := $(WIDGETS)/node_modules/.stamp-ci
# The widgets' bundles (vizgrad/widgets/static/: one ES module per src/widgets/*-widget.js
# and the shared widgets.css) come from the same build.
WIDGET_BUNDLE := $(patsubst $(WIDGETS)/src/widgets/%,vizgrad/widgets/static/%,$(wildcard $(WIDGETS)/src/widgets/*-widget.js)) \
	vizgrad/widgets/static/widgets.css vizgrad/widgets/static/layout-worker.js
# The JupyterLab extension (vizgrad/labextension/, built by the Jupyter builder from
# src/lab/) too. An editable install copies it into .venv/share/jupyter/labextensions, so
# the environments that run JupyterLab (dev, lab) are reinstalled when it changes.
LABEXTENSION := vizgrad/labextension/package.json
BUNDLE := vizgrad/render/static/report.js vizgrad/render/static/report.css vizgrad/render/static/inline-graph.js \
	$(WIDGET_BUNDLE) $(LABEXTENSION)
NEED_NPM = command -v npm >/dev/null || { echo "Building vizgrad's browser bundle needs Node.js 18+ and npm (on Debian: apt-get install nodejs npm)." >&2; exit 1; }

.PHONY: demo lab test fuzz build bench op-profile compat clean
.NOTPARALLEL:  # the targets share one .venv; never install into it twice at once

demo: $(VENV)/.stamp-base $(BUNDLE)
	$(PY) -m vizgrad demo

# The lessons: installs JupyterLab and the widgets (the `lab` extra) and opens
# lessons/00-welcome.ipynb; options pass through, e.g. `make lab LAB_ARGS="03 --no-browser"`
# (which prints the lesson's address), JupyterLab's own as --Name=value.
lab: $(VENV)/.stamp-lab $(BUNDLE)
	$(PY) -m vizgrad lab $(LAB_ARGS)

test: $(VENV)/.stamp-dev $(BUNDLE)
	cd $(WIDGETS) && npm test --silent
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The differential fuzzer against PyTorch (tests/test_differential_fuzz.py) for longer than the
# bounded sample `make test` runs; FUZZ_EXAMPLES per op.
FUZZ_EXAMPLES ?= 200
fuzz: $(VENV)/.stamp-dev
	VIZGRAD_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q $(PYTEST_ARGS) tests/test_differential_fuzz.py

build: $(BUNDLE)
	@:

$(NODE_MODULES): $(WIDGETS)/package.json $(WIDGETS)/package-lock.json
	@$(NEED_NPM)
	cd $(WIDGETS) && npm ci --no-audit --no-fund
	touch $@

$(BUNDLE) &: $(NODE_MODULES) $(VENV)/.stamp-builder $(WIDGETS)/build.mjs $(wildcard $(WIDGETS)/src/*) \
		$(wildcard $(WIDGETS)/src/widgets/*) $(wildcard $(WIDGETS)/src/lab/*) $(wildcard $(WIDGETS)/src/inline/*)
	@cd $(WIDGETS) && PATH="$(abspath $(VENV))/bin:$$PATH" npm run build --silent
	@touch $(BUNDLE)

# B6 writes the HTML report and B5/PG run the widgets: both need the browser bundle. Options
# pass through BENCH_ARGS, e.g. `make bench BENCH_ARGS=--save-baseline` (benchmarks/run.py --help).
bench: $(VENV)/.stamp-bench $(BUNDLE)
	$(PY) benchmarks/run.py $(BENCH_ARGS)

# Every Python frame and allocation of one B2 op (mul, add, tanh), forward and backward: counts,
# not times, so two versions of the engine compare exactly (benchmarks/op_profile.py).
op-profile: $(VENV)/.stamp-base
	$(PY) benchmarks/op_profile.py $(OP_PROFILE_ARGS)

# The compatibility suite (compat/): tutorial-style programs run with vizgrad and with PyTorch
# (installed by the bench extra), compared number by number; prints how many agree.
compat: $(VENV)/.stamp-bench
	$(PY) -m compat

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis test-artifacts $(WIDGETS)/node_modules \
		vizgrad/render/static vizgrad/widgets/static vizgrad/labextension
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

$(PY):
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "Could not create $(VENV): on Debian/Ubuntu install python3-venv (apt-get install python3-venv)." >&2; exit 1; }

$(VENV)/.stamp-base: pyproject.toml | $(PY)
	$(PIP) -e .
	touch $@

$(VENV)/.stamp-dev: pyproject.toml $(LABEXTENSION) | $(PY)
	$(PIP) -e ".[dev]"
	touch $@

$(VENV)/.stamp-lab: pyproject.toml $(LABEXTENSION) | $(PY)
	$(PIP) -e ".[lab]"
	touch $@

$(VENV)/.stamp-bench: pyproject.toml | $(PY)
	$(PIP) -e ".[bench]"
	touch $@

# The Jupyter builder's command line (`jupyter-builder build`), which builds the JupyterLab extension.
$(VENV)/.stamp-builder: | $(PY)
	$(PIP) "jupyter-builder>=1.3"
	touch $@
