# mhanw: the pipeline from notebooks to figures, macros and the paper PDF.
# `make help` lists the targets.  Everything generated lands in build/,
# figures/ and paper/generated/ (all ignored by git).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

## FIDELITY=quick|paper   sizes of every Monte Carlo run (default: paper)
FIDELITY ?= paper
ifeq ($(filter $(FIDELITY),quick paper),)
$(error FIDELITY must be 'quick' or 'paper', got '$(FIDELITY)')
endif
PYTHON ?= python3
VENV ?= .venv
export VENV FIDELITY

# Reproducibility: a fixed build date (the paper's announcement day), one BLAS
# thread per process, caches under build/ instead of $HOME.
export SOURCE_DATE_EPOCH := 1779321600
export PYTHONHASHSEED := 0
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1
export MPLBACKEND := Agg
CACHE := $(CURDIR)/build/cache
export MPLCONFIGDIR := $(CACHE)/matplotlib
export IPYTHONDIR := $(CACHE)/ipython
export JUPYTER_CONFIG_DIR := $(CACHE)/jupyter/config
export JUPYTER_DATA_DIR := $(CACHE)/jupyter/data
export JUPYTER_RUNTIME_DIR := $(CACHE)/jupyter/runtime
export JUPYTER_PLATFORM_DIRS := 1
export XDG_CACHE_HOME := $(CACHE)/xdg
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# Progress bars of long sweeps on the terminal (mhanw.infra.sweep); hidden when CI is set.
export MHANW_PROGRESS := 1

# Every target below is derived from the notebooks on disk, never from a list.
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
NAMES := $(patsubst notebooks/%.ipynb,%,$(NOTEBOOKS))
MACROS := $(NAMES:%=paper/generated/%.tex)
EXECUTED := $(NAMES:%=build/notebooks/%.ipynb)
LIB := $(shell find src/mhanw -type f -not -path '*/__pycache__/*' -not -name '*.pyc' | sort)
PAPER_SRC := paper/main.tex paper/refs.bib $(sort $(wildcard paper/sections/*.tex))
PDF := build/paper/main.pdf
VENV_STAMP := $(VENV)/.installed
FIDELITY_STAMP := build/fidelity

.PHONY: all help notebooks paper test test-fast clean distclean lock tex bench

all: $(PDF) build/timings.json ## every figure, every number and the paper PDF (build/paper/main.pdf)

notebooks: $(MACROS) ## execute every notebook (into build/notebooks/), figures and macros only

paper: $(PDF) ## the paper PDF from the current macros and figures

help: ## list the targets
	@echo "usage: make [target] [FIDELITY=quick|paper] [-j2]"
	@grep -hE '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([^:]+):.*## (.*)/  \1\t\2/' | expand -t 16
	@echo "  build/notebooks/NN_slug.ipynb    one notebook (and its figures and macros)"
	@echo "variables: FIDELITY=quick|paper (default paper), VENV=.venv, PYTHON=python3"

# ---- the Python environment ------------------------------------------------
$(VENV_STAMP): pyproject.toml requirements.lock requirements-nodeps.txt
	@scripts/ensure_tex.sh
	@echo "==> creating $(VENV) from pyproject.toml and requirements.lock"
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV) || { echo "*** '$(PYTHON) -m venv' failed; on Debian: apt-get install python3-venv" >&2; exit 1; }
	$(VENV)/bin/python -m pip install -qq --constraint requirements.lock --editable '.[test]'
	$(VENV)/bin/python -m pip install -qq --no-deps -r requirements-nodeps.txt
	touch $@

lock: ## renew requirements.lock from a fresh resolution of pyproject.toml
	rm -rf build/lockenv && $(PYTHON) -m venv build/lockenv
	build/lockenv/bin/python -m pip install -qq '.[test]'
	build/lockenv/bin/python -m pip freeze --exclude mhanw | LC_ALL=C sort > requirements.lock
	rm -rf build/lockenv

# ---- TeX (Debian packages; installed by scripts/ensure_tex.sh when we may) --
# Checked when the environment is first made (so a fresh machine fails early),
# and again before the paper and the tests; never a prerequisite, so that an
# up-to-date tree stays up to date for `make -q`.
tex: ## make sure latexmk, pdflatex and pdftotext are there (installs them as root)
	@scripts/ensure_tex.sh

# ---- notebooks -> figures/, paper/generated/, build/results/ ----------------
# A notebook is re-run when it, the library, the environment or FIDELITY changes.
# The stamp is rewritten (at parse time) only when FIDELITY differs from the last build's.
$(shell mkdir -p build && [ "$$(cat $(FIDELITY_STAMP) 2>/dev/null)" = "$(FIDELITY)" ] || echo "$(FIDELITY)" > $(FIDELITY_STAMP))

build/notebooks/%.ipynb paper/generated/%.tex: notebooks/%.ipynb $(LIB) $(VENV_STAMP) $(FIDELITY_STAMP)
	@scripts/run_notebook.sh $*

# ---- the paper --------------------------------------------------------------
$(PDF): $(PAPER_SRC) $(MACROS)
	@scripts/ensure_tex.sh
	@echo "==> paper: $@"
	@mkdir -p $(@D)
	@latexmk -pdf -silent -interaction=nonstopmode -halt-on-error -file-line-error \
	  -cd -outdir=$(CURDIR)/build/paper paper/main.tex >build/paper/latexmk.log 2>&1 \
	  || { echo "*** LaTeX failed; the first errors from build/paper/main.log:" >&2; \
	       grep -m5 -A4 -E '^[^ ]*\.(tex|sty|cls):[0-9]+: |^! ' build/paper/main.log >&2 || tail -30 build/paper/latexmk.log >&2; exit 1; }
	@echo "    $@ ($$(pdfinfo $@ 2>/dev/null | awk '/^Pages/{print $$2}') pages)"

# Wall time of every notebook's last run, and the total.
build/timings.json: $(MACROS)
	@$(VENV)/bin/python scripts/collect_timings.py build/timings $@

# ---- speed ------------------------------------------------------------------
bench: $(VENV_STAMP) ## benchmark the head evaluation (installs the torch CPU build for comparison)
	@$(VENV)/bin/python -c "import torch" 2>/dev/null || $(VENV)/bin/python -m pip install -qq torch==2.13.0
	$(VENV)/bin/python -m mhanw.bench --out build/bench

# ---- reading the chapters: the offline book and JupyterLab ------------------
# `make book` renders the executed chapters (never re-executed) with the figures,
# the claims table and the paper PDF into a static site that needs no network;
# `make all` builds it too.  `make lab` opens the chapters in JupyterLab: run by
# hand they write to build/scratch/, only the pipeline passes the paper's paths.
BOOK := build/book/index.html
BOOK_SRC := $(sort $(wildcard book/*.py book/*.md book/_static/*)) README.md $(wildcard build/claims.json)
LAB_ARGS ?=
.PHONY: book lab

all: $(BOOK)

book: $(BOOK) ## the chapters as an offline website: open build/book/index.html

$(BOOK): $(EXECUTED) $(PDF) $(BOOK_SRC) $(VENV_STAMP)
	@echo "==> book: build/book/"
	@$(VENV)/bin/python book/build_book.py

lab: $(VENV_STAMP) ## JupyterLab on the chapters (LAB_ARGS="--no-browser --port 8890" to change)
	mkdir -p build/scratch
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# ---- checks and housekeeping -----------------------------------------------
test: $(VENV_STAMP) ## run every test: library, notebooks (quick), pipeline end to end
	@scripts/ensure_tex.sh
	$(VENV)/bin/python -m pytest

test-fast: $(VENV_STAMP) ## the library tests only (seconds)
	$(VENV)/bin/python -m pytest -m "not slow"

clean: ## remove generated files (figures, macros, build/); keeps .venv and all sources
	rm -rf build
	find figures paper/generated -type f ! -name .gitkeep -delete

distclean: clean ## clean, and remove .venv too
	rm -rf $(VENV)

