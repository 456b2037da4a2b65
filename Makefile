# Two commands: `make book` builds the book, `make test` runs every test.
# Both set up what is missing first (a virtual environment in .venv, npm assets, Chromium).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(shell find book -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort)
CHROMIUM ?= /usr/bin/chromium

.PHONY: setup book pdf test unit nbval browser live execute clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

book/_vendor/versions.json: node_modules/.installed $(STAMP) scripts/vendor_assets.py
	$(PY) scripts/vendor_assets.py

setup: $(STAMP) book/_vendor/versions.json

$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	 else echo "make: Chromium is missing: run 'sudo apt-get install chromium' (Debian) or set CHROMIUM=/path/to/chromium" >&2; exit 2; fi

# Build the book from the notebooks' saved outputs (no execution: `make execute` refreshes them,
# and `make nbval` proves them current): _build/html/index.html
book: setup
	$(VENV)/bin/jupyter-book build . --warningiserror --nitpick --keep-going

# The PDF edition, for readers who print: every chapter in one page (Jupyter Book's singlehtml
# builder, _build/singlehtml), printed by Chromium once every formula is typeset and every chart
# drawn (scripts/build_pdf.py): _build/pdf/book.pdf. tests/browser/test_pdf.py checks it.
pdf: setup $(CHROMIUM)
	$(VENV)/bin/jupyter-book build . --builder singlehtml --warningiserror --nitpick --keep-going
	mkdir -p _build/pdf
	CHROMIUM=$(CHROMIUM) $(PY) scripts/build_pdf.py _build/singlehtml _build/pdf/book.pdf

# Re-execute every notebook in place (outputs and widget state are committed; nbval compares them),
# and store the results of the prose's inline expressions ({eval}) in their markdown cells, which
# the book and JupyterLab show (scripts/execute_notebooks.py; nbconvert would leave them stale).
execute: setup
	$(PY) scripts/execute_notebooks.py $(NOTEBOOKS)

# Two workers (pytest-xdist), one test file each at a time: the suite is mostly XLA compiles
# and subprocesses, which leave a core idle when run one after another.
unit: setup
	$(PY) -m pytest tests --ignore=tests/browser --ignore=tests/live -n 2 --dist loadfile --durations=15

# Two notebooks at a time (one kernel each, pytest-xdist): a kernel waits on its own imports and
# compilations, which leaves the other core idle when notebooks run one after another.
nbval: setup
	$(PY) -m pytest --nbval $(NOTEBOOKS) --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider -n 2 --dist loadfile

browser: book pdf $(CHROMIUM)
	CHROMIUM=$(CHROMIUM) $(PY) -m pytest tests/browser

# Every chapter in a real JupyterLab (offline): opened, Run All, every control moved. Where it
# can (root and iproute2, as on CI), the whole test runs in a network namespace of its own with
# only loopback, so that nothing (page, server or kernels) can reach past localhost; elsewhere
# only the page's requests are checked, and the test says so.
LIVE_NETNS := $(shell unshare -n true 2>/dev/null && command -v ip >/dev/null && echo yes)
live: setup $(CHROMIUM)
ifeq ($(LIVE_NETNS),yes)
	unshare -n bash -c 'ip link set lo up && DWLIB_LIVE_NETNS=1 CHROMIUM=$(CHROMIUM) $(PY) -m pytest tests/live -p no:cacheprovider -s'
else
	CHROMIUM=$(CHROMIUM) $(PY) -m pytest tests/live -p no:cacheprovider -s
endif

test: unit nbval browser live wheel

# The wheel, installed as a user gets it: built from the files git would commit, a fresh
# environment per Python (3.11, 3.12) with the newest dependency versions pyproject.toml allows,
# and a subset of the unit tests run against the installed package (scripts/check_wheel.py).
# Needs a package index. PYTHONS="3.12 /path/to/python3.13" picks other interpreters.
.PHONY: wheel colab-sync
PYTHONS ?= 3.11 3.12
wheel: $(STAMP)
	$(PY) scripts/check_wheel.py $(addprefix --python ,$(PYTHONS))

# After editing repository.url in _config.yml: rewrite every chapter's Colab install cell from it.
colab-sync: $(STAMP)
	$(PY) scripts/new_notebook.py sync

clean:
	rm -rf _build .jupyter_cache book/_vendor
