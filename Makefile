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
ifneq ($(words $(FIDELITY)) $(filter quick paper,$(FIDELITY)),1 $(strip $(FIDELITY)))
$(error FIDELITY must be one word, 'quick' or 'paper'; got '$(FIDELITY)')
endif
override FIDELITY := $(strip $(FIDELITY))
## VENV=.venv   the project's virtual environment (made, and remade, by this Makefile)
VENV ?= .venv
ifneq ($(words $(VENV)),1)
$(error VENV must name one directory (no spaces); got '$(VENV)')
endif
override VENV := $(strip $(VENV))
## PYTHON=python3.X   the interpreter that builds VENV (default: python3 if supported, else the newest python3.X)
PYTHON ?=
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
DEPFILES := $(NAMES:%=build/deps/%.d)
PAPER_SRC := paper/main.tex paper/refs.bib $(sort $(wildcard paper/sections/*.tex))
PDF := build/paper/main.pdf
ENV_JSON := build/results/environment.json
ENV_TEX := paper/generated/environment.tex
VENV_STAMP := $(VENV)/.installed
VENV_MARKER := $(VENV)/.mhanw-venv
VENV_INPUTS := pyproject.toml requirements.lock requirements-nodeps.txt
FIDELITY_STAMP := build/fidelity
LIBRARY_LIST := build/deps/library.list

.PHONY: all help notebooks paper test test-fast clean distclean lock tex bench FORCE

all: $(PDF) build/timings.json $(ENV_JSON) ## every figure, every number and the paper PDF (build/paper/main.pdf)

notebooks: $(MACROS) ## execute every notebook (into build/notebooks/), figures and macros only

paper: $(PDF) ## the paper PDF from the current macros and figures

help: ## list the targets
	@echo "usage: make [target] [FIDELITY=quick|paper] [-j2]"
	@grep -hE '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([^:]+):.*## (.*)/  \1\t\2/' | expand -t 16
	@echo "  build/notebooks/NN_slug.ipynb    one notebook (and its figures and macros)"
	@echo "variables:"
	@grep -hE '^## ' $(firstword $(MAKEFILE_LIST)) | sed -E 's/^## /  /'

FORCE:

# Stamps that record a value (the fidelity, the interpreter and the inputs of
# the environment, the list of library files) are compared with the wanted value
# here, by reading only; a stamp that differs gets FORCE as a prerequisite and
# is rewritten by its recipe.  So `make -n` and `make -q` write nothing, and an
# up-to-date tree stays up to date for `make -q`.

# Goals that need neither Python nor the library; every other goal needs both.
NO_PYTHON_GOALS := help clean distclean tex FORCE
ifneq ($(filter-out $(NO_PYTHON_GOALS),$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)

# ---- the interpreter (scripts/find_python.sh: PYTHON, else python3, else python3.X)
FOUND_PYTHON := $(shell scripts/find_python.sh '$(PYTHON)')
ifneq ($(firstword $(FOUND_PYTHON)),ok)
$(error $(or $(patsubst error %,%,$(FOUND_PYTHON)),scripts/find_python.sh gave no answer))
endif
BASE_PYTHON := $(word 2,$(FOUND_PYTHON))
BASE_PYTHON_VERSION := $(word 3,$(FOUND_PYTHON))

# ---- the Python environment ------------------------------------------------
# $(VENV_STAMP) holds the interpreter and a digest of the files the environment
# is made from; when either differs, the environment is made again.  Only a
# directory that carries $(VENV_MARKER) (written when this Makefile created it)
# is ever deleted.
VENV_WANT := python $(BASE_PYTHON_VERSION) $(BASE_PYTHON) inputs $(firstword $(shell cat $(VENV_INPUTS) | sha256sum))
ifneq ($(strip $(file <$(VENV_STAMP))),$(VENV_WANT))
ifneq ($(wildcard $(VENV)/.),)
ifeq ($(wildcard $(VENV_MARKER)),)
$(error VENV=$(VENV) exists but was not made by this Makefile (it has no $(notdir $(VENV_MARKER))), so make will neither change nor delete it. Name a new directory with VENV=, or remove $(VENV) yourself)
endif
endif
$(VENV_STAMP): FORCE
endif

$(VENV_STAMP):
	@scripts/ensure_tex.sh
	@echo "==> creating $(VENV) with Python $(BASE_PYTHON_VERSION) ($(BASE_PYTHON)) from pyproject.toml and requirements.lock"
	if [ -e '$(VENV)' ]; then [ -f '$(VENV_MARKER)' ] || { echo "*** VENV=$(VENV) was not made by this Makefile; not deleting it" >&2; exit 1; }; rm -rf '$(VENV)'; fi
	'$(BASE_PYTHON)' -m venv '$(VENV)' || { echo "*** '$(BASE_PYTHON) -m venv' failed; on Debian: apt-get install python$(basename $(BASE_PYTHON_VERSION))-venv" >&2; exit 1; }
	@echo "made by the mhanw Makefile, which may delete and remake this directory" > '$(VENV_MARKER)'
	'$(VENV)/bin/python' -m pip install -qq --constraint requirements.lock --editable '.[test]'
	'$(VENV)/bin/python' -m pip install -qq --no-deps -r requirements-nodeps.txt
	@echo '$(VENV_WANT)' > $@

# The interpreter and the versions of the numerical libraries, for the record
# (build/results/) and for the PDF's metadata (paper/generated/).
$(ENV_JSON) $(ENV_TEX) &: $(VENV_STAMP) scripts/record_environment.py
	@'$(VENV)/bin/python' scripts/record_environment.py $(ENV_JSON) $(ENV_TEX)

lock: $(VENV_STAMP) ## renew requirements.lock: a fresh resolution of pyproject.toml for every supported Python
	'$(VENV)/bin/python' scripts/lock.py --out requirements.lock

# ---- notebooks -> figures/, paper/generated/, build/results/ ----------------
# A notebook is re-run when it, a library file it imports (directly or not), the
# environment or FIDELITY changes, or when a figure it made has gone.
ifneq ($(strip $(file <$(FIDELITY_STAMP))),$(FIDELITY))
$(FIDELITY_STAMP): FORCE
endif
$(FIDELITY_STAMP):
	@mkdir -p $(@D) && echo '$(FIDELITY)' > $@.tmp && mv -f $@.tmp $@

build/notebooks/%.ipynb paper/generated/%.tex: notebooks/%.ipynb $(VENV_STAMP) $(FIDELITY_STAMP)
	@scripts/run_notebook.sh $*

# The library files each notebook imports: build/deps/NN_slug.d, computed from
# the code (scripts/nbdeps.py), remade when the notebook, a library file or the
# set of library files changes.
LIB := $(shell '$(BASE_PYTHON)' scripts/nbdeps.py --library)
ifneq ($(strip $(file <$(LIBRARY_LIST))),$(strip $(LIB)))
$(LIBRARY_LIST): FORCE
endif
$(LIBRARY_LIST):
	@mkdir -p $(@D) && echo '$(strip $(LIB))' > $@.tmp && mv -f $@.tmp $@

build/deps/%.d: notebooks/%.ipynb $(LIB) $(LIBRARY_LIST) scripts/nbdeps.py
	@'$(BASE_PYTHON)' scripts/nbdeps.py $< $@

include $(DEPFILES)

# The figures each notebook made on its last run (build/figures/NN_slug.list,
# written by scripts/run_notebook.sh): a missing one makes the notebook out of
# date, and the paper depends on them.
FIGURES_OF = $(addprefix figures/,$(strip $(file <build/figures/$(1).list)))
$(foreach n,$(NAMES),$(eval build/notebooks/$(n).ipynb paper/generated/$(n).tex: $(call FIGURES_OF,$(n))))
FIGURES := $(foreach n,$(NAMES),$(call FIGURES_OF,$(n)))
ifneq ($(FIGURES),)
$(FIGURES):
endif

endif  # goals that need Python

# ---- TeX (Debian packages; installed by scripts/ensure_tex.sh when we may) --
# Checked when the environment is first made (so a fresh machine fails early),
# and again before the paper and the tests; never a prerequisite, so that an
# up-to-date tree stays up to date for `make -q`.
tex: ## make sure latexmk, pdflatex and pdftotext are there (installs them as root)
	@scripts/ensure_tex.sh

# ---- the paper --------------------------------------------------------------
$(PDF): $(PAPER_SRC) $(MACROS) $(ENV_TEX) $(filter %.pdf,$(FIGURES))
	@scripts/ensure_tex.sh
	@echo "==> paper: $@"
	@mkdir -p $(@D)
	@latexmk -pdf -silent -interaction=nonstopmode -halt-on-error -file-line-error \
	  -cd -outdir=$(CURDIR)/build/paper paper/main.tex >build/paper/latexmk.log 2>&1 \
	  || { echo "*** LaTeX failed; the first errors from build/paper/main.log:" >&2; \
	       grep -m5 -A4 -E '^[^ ]*\.(tex|sty|cls):[0-9]+: |^! ' build/paper/main.log >&2 || tail -30 build/paper/latexmk.log >&2; exit 1; }
	@touch $@  # latexmk leaves the PDF alone when no input's content changed; make compares times
	@echo "    $@ ($$(pdfinfo $@ 2>/dev/null | awk '/^Pages/{print $$2}') pages)"

# Wall time of every notebook's last run, and the total.
build/timings.json: $(MACROS)
	@'$(VENV)/bin/python' scripts/collect_timings.py build/timings $@

# ---- speed ------------------------------------------------------------------
bench: $(VENV_STAMP) ## benchmark the head evaluation (installs the torch CPU build for comparison)
	@'$(VENV)/bin/python' -c "import torch" 2>/dev/null || '$(VENV)/bin/python' -m pip install -qq torch==2.13.0
	'$(VENV)/bin/python' -m mhanw.bench --out build/bench

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
	@'$(VENV)/bin/python' book/build_book.py

lab: $(VENV_STAMP) ## JupyterLab on the chapters (LAB_ARGS="--no-browser --port 8890" to change)
	mkdir -p build/scratch
	'$(VENV)/bin/jupyter' lab --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# ---- checks and housekeeping -----------------------------------------------
test: $(VENV_STAMP) ## run every test: library, notebooks (quick), pipeline end to end, the book in a browser
	@scripts/ensure_tex.sh
	@scripts/ensure_chromium.sh
	'$(VENV)/bin/python' -m pytest

test-fast: $(VENV_STAMP) ## the fast unit tests only (no Monte Carlo checks, no builds)
	'$(VENV)/bin/python' -m pytest -m "not slow and not statistical"

clean: ## remove generated files (figures, macros, build/); keeps .venv and all sources
	rm -rf build
	find figures paper/generated -type f ! -name .gitkeep -delete

distclean: clean ## clean, and remove the environment VENV too (only if this Makefile made it)
	@if [ -e '$(VENV)' ] && [ ! -f '$(VENV_MARKER)' ]; then \
	  echo "*** VENV=$(VENV) was not made by this Makefile (no $(notdir $(VENV_MARKER))); not deleting it" >&2; exit 1; fi
	rm -rf '$(VENV)'
