# mhanw: the chapters -> figures, numbers, verdicts, the paper and the book.  `make help` lists targets.
# The graph of chapter jobs is build/rules.mk, written by `python -m mhanw.pipeline rules` from the
# chapters and the imports of the library; logic lives in src/mhanw/pipeline/, not here.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS)))
# (nproc would read OMP_NUM_THREADS, which the pipeline sets to 1 for its jobs: not a limit on make's)
MAKEFLAGS += --no-builtin-rules --jobs=$(shell env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 2)

## FIDELITY=paper|quick      Monte Carlo sizes of the default run (quick: tests and CI)
FIDELITY ?= paper
## VENV=.venv                 the virtual environment (made, and remade when its inputs change)
VENV ?= .venv
## PYTHON=python3.X          the interpreter that makes VENV (default: python3 if supported)
PYTHON ?=
## SCENARIO=scenarios/X.toml  the scenario of `make scenario` (SCENARIO_FIDELITY=quick|paper)
# never expanded (a file name may hold make or shell syntax): make uses only the name and path names.py checked
override SCENARIO := $(value SCENARIO)
unexport SCENARIO
SCENARIO_FIDELITY ?= quick
## STABILITY_SEEDS="1 2 3 4 5"  the seeds compared with the default seed, at quick fidelity
STABILITY_SEEDS ?= 1 2 3 4 5
## ROBUSTNESS=yes|no          the scenarios and seeds in the paper (default: yes at paper fidelity)
ROBUSTNESS ?= $(if $(filter paper,$(FIDELITY)),yes,no)
one_of = $(if $(filter-out 1,$(words $(2)))$(filter-out $(3),$(2)),$(error $(1) must be one word, \
  $(patsubst %,'%',$(firstword $(3))) or $(patsubst %,'%',$(lastword $(3))); got '$(2)'))
$(call one_of,FIDELITY,$(FIDELITY),quick paper)$(call one_of,SCENARIO_FIDELITY,$(SCENARIO_FIDELITY),quick paper)
$(call one_of,ROBUSTNESS,$(ROBUSTNESS),yes no)
$(if $(filter-out 1,$(words $(VENV))),$(error VENV must name one directory (no spaces); got '$(VENV)'))
$(if $(shell [[ '$(STABILITY_SEEDS)' =~ ^\ *[0-9]+(\ +[0-9]+)*\ *$$ ]] || echo bad),\
  $(error STABILITY_SEEDS must be whole numbers, e.g. "1 2 3 4 5"; got '$(STABILITY_SEEDS)'))

# One hash seed for every process (the pipeline sets the other reproducibility settings: mhanw.pipeline.__main__).
export PYTHONHASHSEED := 0

PIPE := PYTHONPATH='$(CURDIR)/src' '$(VENV)/bin/python' -m mhanw.pipeline
ENV_STAMP := $(VENV)/.installed
ENV_INPUTS := pyproject.toml requirements.lock requirements-nodeps.txt
PIPELINE_PY := $(wildcard src/mhanw/pipeline/*.py)
PAPER_SRC := paper/main.tex paper/refs.bib $(wildcard paper/sections/*.tex)
# stamp(file, value): build/FILE is out of date unless it holds VALUE; rewritten only if a goal needs it (below)
stamp = $(if $(filter-out $(strip $(2)),$(strip $(file <build/$(1))))$(if $(wildcard build/$(1)),,new),$(eval \
  build/$(1): FORCE))

.PHONY: all help notebooks paper book scenario stability reference test test-fast lint lab bench lock clean \
  distclean tex FORCE
all: build/verdicts.txt ## every chapter, figure, number and verdict; the paper and the book
build/verdicts.txt: build/paper/main.pdf build/book/index.html
	@$(PIPE) verdicts --timings > $@.tmp && mv $@.tmp $@ && cat $@

help: ## this list
	@echo "usage: make [target] [VARIABLE=value ...]   (jobs run in parallel on every core)"
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([^:]+):.*## (.*)/  \1\t\2/' | expand -t 14
	@grep -hE '^## ' Makefile | sed -E 's/^## /  /'

# ---- the environment and the graph (every goal but these needs Python) ------------------------------
ifneq ($(filter-out help clean distclean tex lock FORCE,$(or $(MAKECMDGOALS),all)),)
FOUND := $(shell scripts/find_python.sh '$(PYTHON)')
$(if $(filter ok,$(firstword $(FOUND))),,$(error $(or $(patsubst error %,%,$(FOUND)),find_python.sh said nothing)))
ENV_WANT := python $(word 3,$(FOUND)) $(word 2,$(FOUND)) inputs $(firstword $(shell cat $(ENV_INPUTS) | sha256sum))
ifneq ($(strip $(file <$(ENV_STAMP))),$(ENV_WANT))
$(ENV_STAMP): FORCE
$(if $(wildcard $(VENV)/.),$(if $(wildcard $(VENV)/.mhanw-venv),,$(error VENV=$(VENV) exists but was not made by \
  this Makefile (it has no .mhanw-venv), so make will neither change nor delete it. Name a new directory with \
  VENV=, or remove $(VENV) yourself)))
ENV_STALE := yes
endif
$(call stamp,fidelity,$(FIDELITY))$(call stamp,robustness,$(ROBUSTNESS) $(STABILITY_SEEDS))
build/rules.mk: notebooks/. scenarios/. $(shell find src/mhanw -name '*.py' -o -type d \
  ! -name __pycache__) $(ENV_STAMP)
	@$(PIPE) rules --out $@
ifeq ($(and $(DRY_RUN),$(ENV_STALE)),)
include build/rules.mk
else
override ROBUSTNESS := no
endif
endif
$(ENV_STAMP):
	@scripts/make_venv.sh '$(VENV)' '$(word 2,$(FOUND))' '$(ENV_WANT)'
FORCE:
build/fidelity: ; @mkdir -p build && echo '$(FIDELITY)' > $@
build/robustness: ; @mkdir -p build && echo '$(strip $(ROBUSTNESS) $(STABILITY_SEEDS))' > $@

DEFAULT := $(CHAPTERS:%=build/results/%.json)
notebooks: $(DEFAULT) ## execute every chapter (build/notebooks/), with its figures and macros

# ---- ledgers: the default run's, each seed's and each shipped scenario's -----------------------------
build/claims.json paper/generated/claims_table.tex paper/generated/claims_summary.tex &: $(DEFAULT) $(ENV_STAMP) \
  $(PAPER_SRC) $(PIPELINE_PY)
	@$(PIPE) claims
.SECONDEXPANSION:
SEED_RESULTS := $(foreach s,default $(STABILITY_SEEDS),$(CHAPTERS:%=build/stability/seed-$(s)/results/%.json))
.SECONDARY: $(SEED_RESULTS)
build/stability/seed-%/claims.json: $$(foreach c,$$(CHAPTERS),build/stability/seed-$$*/results/$$(c).json)
	@$(PIPE) gather build/stability/seed-$* --seed $*
build/stability.json: $(patsubst %,build/stability/seed-%/claims.json,default $(STABILITY_SEEDS)) build/claims.json
	@$(PIPE) stability $(STABILITY_SEEDS)
stability: build/stability.json ## every chapter under the default seed and STABILITY_SEEDS, at quick fidelity
ROBUSTNESS_IN := $(if $(filter yes,$(ROBUSTNESS)),$(SCENARIO_NAMES:%=build/scenarios/%/ledger/claims.json) \
  build/stability.json)
paper/generated/scenarios.tex paper/generated/stability.tex &: $(ROBUSTNESS_IN) build/robustness $(PIPELINE_PY)
	@$(PIPE) robustness $(if $(ROBUSTNESS_IN),--stability $(SCENARIO_NAMES))

# ---- the paper and the book --------------------------------------------------------------------------
build/paper/main.pdf: $(DEFAULT) build/claims.json paper/generated/scenarios.tex $(PAPER_SRC) $(PIPELINE_PY)
	@scripts/ensure_tex.sh
	@$(PIPE) paper
paper: build/paper/main.pdf ## the paper PDF (build/paper/main.pdf)
build/book/index.html: $(DEFAULT) build/paper/main.pdf $(wildcard book/*.md book/*.py book/*.toml book/_static/*) \
  build/claims.json $(PIPELINE_PY)
	@$(PIPE) book
book: build/book/index.html ## the chapters as an offline website: open build/book/index.html
reference: build/claims.json ## renew reference/claims-$(FIDELITY).json (tests compare with it; paper: the README's table)
	@$(PIPE) reference --fidelity $(FIDELITY)

# ---- a scenario: every chapter under SCENARIO, its paper, and what changed against the reference -------
ifneq ($(filter scenario,$(MAKECMDGOALS)),)
# SCENARIO, unexpanded, goes to a file that names.py (base Python, standard library) checks
GATE := $(shell mkdir -p build)$(file >build/scenario-given,$(value SCENARIO))$(shell '$(word 2,$(FOUND))' -I \
  src/mhanw/pipeline/names.py scenario build/scenario-given)
$(if $(filter ok,$(firstword $(GATE))),,$(error $(or $(wordlist 2,999,$(GATE)),names.py said nothing)))
SCENARIO_NAME := $(word 2,$(GATE))
SCENARIO_FILE := $(word 3,$(GATE))
SCENARIO_RUN := build/scenarios/$(SCENARIO_NAME)/$(SCENARIO_FIDELITY)
SCENARIO_PROBLEM := $(if $(wildcard $(ENV_STAMP)),$(shell $(PIPE) scenario-check $(SCENARIO_FILE) 2>&1 >/dev/null))
$(if $(SCENARIO_PROBLEM),$(error $(SCENARIO_PROBLEM)))
build/scenarios/$(SCENARIO_NAME)/rules.mk: $(SCENARIO_FILE) build/rules.mk
	@$(PIPE) rules --scenario $(SCENARIO_FILE) --out $@
$(if $(and $(DRY_RUN),$(ENV_STALE)),,$(eval include build/scenarios/$(SCENARIO_NAME)/rules.mk))
scenario: $(SCENARIO_RUN)/paper/main.pdf ## every chapter and the paper under SCENARIO=scenarios/NAME.toml
	@$(PIPE) scenario-report $(SCENARIO_FILE) --run $(SCENARIO_RUN) --fidelity $(SCENARIO_FIDELITY)
$(SCENARIO_RUN)/paper/main.pdf: $(CHAPTERS:%=$(SCENARIO_RUN)/results/%.json) $(PAPER_SRC) $(PIPELINE_PY)
	@$(PIPE) paper --run $(SCENARIO_RUN) --scenario $(SCENARIO_FILE)
endif

# ---- checks, reading, housekeeping --------------------------------------------------------------------
lint: $(ENV_STAMP) ## ruff's rules and format check on the tree, mypy on src/ (pyproject.toml says which)
	@'$(VENV)/bin/ruff' check --quiet .
	@'$(VENV)/bin/ruff' format --check --quiet .
	@'$(VENV)/bin/mypy' --no-error-summary
test: $(ENV_STAMP) lint ## every test: library, chapters (quick), the pipeline end to end, the book in a browser
	@scripts/ensure_tex.sh && scripts/ensure_chromium.sh
	PYTHONPATH='$(CURDIR)/src' '$(VENV)/bin/python' -m pytest -n auto
test-fast: $(ENV_STAMP) lint ## the fast tests only (no Monte Carlo checks, no builds)
	PYTHONPATH='$(CURDIR)/src' '$(VENV)/bin/python' -m pytest -n auto -m "not slow and not statistical"
lab: $(ENV_STAMP) ## JupyterLab on the chapters (LAB_ARGS="--no-browser --port 8890")
	@mkdir -p build/scratch
	'$(VENV)/bin/jupyter' lab --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)
bench: $(ENV_STAMP) ## benchmark the head evaluation against torch (pip installs torch's CPU build: Reproduce page)
	'$(VENV)/bin/python' -m mhanw.bench --install-torch --out build/bench
lock: ## renew requirements.lock and requirements-nodeps.txt with uv, for every supported Python (PyPI)
	@PYTHON='$(PYTHON)' scripts/lock.sh
tex: ## make sure latexmk, pdflatex and pdftotext are there (installs them as root)
	@scripts/ensure_tex.sh
clean: ## remove generated files (build/, figures, macros); keeps the environment
	rm -rf build
	find figures paper/generated -type f ! -name .gitkeep -delete
distclean: clean ## clean, and remove VENV too (only if this Makefile made it)
	@if [ -e '$(VENV)' ] && [ ! -f '$(VENV)/.mhanw-venv' ]; then \
	  echo "*** VENV=$(VENV) was not made by this Makefile (no .mhanw-venv); not deleting it" >&2; exit 1; fi
	rm -rf '$(VENV)'
