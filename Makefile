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
## PARAMS=scenarios/NAME.toml   run the notebooks under a scenario's parameters (in place; `make scenario` runs one in a copy)
PARAMS ?=
export VENV FIDELITY PARAMS
## SCENARIO=scenarios/NAME.toml   the scenario of `make scenario` (SCENARIO_FIDELITY=quick|paper, default quick)
## STABILITY_SEEDS="1 2 3 4 5"     the seeds of `make stability` (STABILITY_CHAPTERS="NN_slug ...": only those chapters)
## ROBUSTNESS=yes|no   `make all` runs the scenarios and the seeds for the paper (default: yes at FIDELITY=paper)
SCENARIO ?=
SCENARIO_FIDELITY ?= quick
STABILITY_SEEDS ?= 1 2 3 4 5
NOT_DIGITS := $(strip $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(STABILITY_SEEDS))))))))))))
ifneq ($(NOT_DIGITS)$(if $(strip $(STABILITY_SEEDS)),,empty),)
$(error STABILITY_SEEDS must be whole numbers, e.g. "1 2 3 4 5"; got '$(STABILITY_SEEDS)')
endif
ROBUSTNESS ?= $(if $(filter paper,$(FIDELITY)),$(if $(strip $(PARAMS)),no,yes),no)
ifneq ($(filter-out yes no,$(ROBUSTNESS))$(words $(ROBUSTNESS)),1)
$(error ROBUSTNESS must be 'yes' or 'no'; got '$(ROBUSTNESS)')
endif
override ROBUSTNESS := $(strip $(ROBUSTNESS))
SCENARIOS := $(sort $(wildcard scenarios/*.toml))
.PHONY: scenario scenarios stability
ifneq ($(filter scenario,$(MAKECMDGOALS)),)
ifeq ($(strip $(SCENARIO)),)
$(error make scenario needs SCENARIO=scenarios/NAME.toml (one of: $(or $(SCENARIOS),none yet)))
endif
ifeq ($(wildcard $(SCENARIO)),)
$(error SCENARIO=$(SCENARIO): no such file (scenarios: $(or $(SCENARIOS),none yet)))
endif
endif

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
PROVENANCE := paper/generated/provenance.tex
VENV_STAMP := $(VENV)/.installed
VENV_MARKER := $(VENV)/.mhanw-venv
VENV_INPUTS := pyproject.toml requirements.lock requirements-nodeps.txt
FIDELITY_STAMP := build/fidelity
LIBRARY_LIST := build/deps/library.list
CLAIMS := build/claims.json
CLAIMS_TEX := paper/generated/claims_table.tex paper/generated/claims_summary.tex
README_STAMP := build/readme-claims.stamp
VERDICTS := build/verdicts.txt
ROBUSTNESS_TEX := paper/generated/scenarios.tex paper/generated/stability.tex
STABILITY_JSON := build/stability.json
# Library code for the scripts that read the ledger (this checkout's src/, whichever checkout the venv came from).
SCRIPT_PY = PYTHONPATH='$(CURDIR)/src' '$(VENV)/bin/python'

.PHONY: all help notebooks paper test test-fast clean distclean lock tex bench FORCE

all: $(PDF) build/timings.json $(ENV_JSON) $(VERDICTS) ## every figure, every number, the claims ledger and the paper PDF (build/paper/main.pdf)

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

# Under a scenario (PARAMS), every notebook is re-run when the scenario changes.
ifneq ($(strip $(PARAMS)),)
$(EXECUTED) $(MACROS): $(PARAMS)
endif

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

# The commit the figures are built from, for their captions (\figsource), with
# "(dirty)" for uncommitted changes and "unknown" outside git; rewritten (and the
# paper remade) only when that changes.  scripts/provenance.py --check writes nothing.
ifneq ($(shell '$(BASE_PYTHON)' scripts/provenance.py --check $(PROVENANCE)),same)
$(PROVENANCE): FORCE
endif
$(PROVENANCE): scripts/provenance.py
	@'$(BASE_PYTHON)' scripts/provenance.py $@ && touch $@

endif  # goals that need Python

# ---- TeX (Debian packages; installed by scripts/ensure_tex.sh when we may) --
# Checked when the environment is first made (so a fresh machine fails early),
# and again before the paper and the tests; never a prerequisite, so that an
# up-to-date tree stays up to date for `make -q`.
tex: ## make sure latexmk, pdflatex and pdftotext are there (installs them as root)
	@scripts/ensure_tex.sh

# ---- the paper --------------------------------------------------------------
$(PDF): $(PAPER_SRC) $(MACROS) $(ENV_TEX) $(CLAIMS_TEX) $(ROBUSTNESS_TEX) $(PROVENANCE) $(filter %.pdf,$(FIGURES))
# (in a scenario's copy of the tree, scripts/scenario.py adds paper/generated/scenario_note.tex)
$(PDF): $(wildcard paper/generated/scenario_note.tex)
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

# ---- the claims ledger --------------------------------------------------------
# Every chapter's verdict records (the `claims` of build/results/NN_slug.json)
# gathered into build/claims.json, with the paper's table of every record and the
# generated sentences of the abstract and the summary.  A chapter without records
# is left out (and named).
$(CLAIMS) $(CLAIMS_TEX) &: $(MACROS) $(PAPER_SRC) scripts/collect_claims.py scripts/claimslib.py $(VENV_STAMP)
	@$(SCRIPT_PY) scripts/collect_claims.py

# README.md's claims table, rewritten from the ledger (only when it changed) at
# FIDELITY=paper; a quick build leaves the committed, paper-fidelity table alone.
$(README_STAMP): $(CLAIMS) scripts/update_readme_claims.py scripts/claimslib.py
	@if [ '$(FIDELITY)' = paper ] && [ -z '$(PARAMS)' ]; then $(SCRIPT_PY) scripts/update_readme_claims.py; \
	 else echo "    README.md: claims table left as committed (FIDELITY=$(FIDELITY)$(if $(PARAMS), PARAMS=$(PARAMS)))"; fi
	@touch $@

# The last step of `make all`: the verdict table on the terminal.
$(VERDICTS): $(CLAIMS) $(PDF) build/timings.json $(README_STAMP)
	@echo "==> verdicts (build/claims.json, FIDELITY=$(FIDELITY)):"
	@$(SCRIPT_PY) -c "import sys; sys.path.insert(0, 'scripts'); import claimslib; \
	  print(claimslib.text_table(claimslib.load_ledger('$(CLAIMS)')))" | tee $@.tmp
	@mv -f $@.tmp $@

# ---- scenarios and seeds ------------------------------------------------------
# The paper's section "Beyond the stated assumptions" compares, claim by claim,
# the verdicts under each scenarios/NAME.toml with the default run's, and its
# subsection on seeds counts how often the verdict under each of STABILITY_SEEDS
# equals the default run's.  Both need only verdict records, at quick fidelity:
#   build/scenarios/NAME/claims.json   the chapters the scenario changes (those that
#                                      receive one of its parameters), run in a copy
#                                      of the sources, build/scenarios/NAME/tree;
#   build/stability/seed-S/claims.json every chapter with seed = S, in build/stability/seed-S/tree;
#   build/stability.json               the seeds' verdicts against build/claims.json.
# Each copy has its own make, which re-runs only the chapters whose notebook or
# library files changed; its log is build/scenarios/NAME/run.log (build/stability/seed-S/run.log).
# Each copy runs two chapters at a time; under `make -j2` two copies run side by side.
# With ROBUSTNESS=yes (the default at FIDELITY=paper) `make all` makes them all;
# with ROBUSTNESS=no (the default at quick) the paper uses whichever ledgers exist
# (or says how to make them).  Cost: a quick run of every chapter per seed, and of
# the chapters a scenario changes per scenario (02-08, and 01 for two of them): about
# 1150 s of one core on an idle machine, some 10 minutes with -j2 (measured times, under
# load, in README.md below "The two commands").
#
# `make scenario SCENARIO=scenarios/NAME.toml` runs every chapter under a scenario
# (SCENARIO_FIDELITY, -j2) and also keeps, in build/scenarios/NAME/, the executed
# chapters, figures, macros, results and the paper PDF under it; it prints the
# verdicts that differ from build/claims.json.  `make scenarios` does so for every
# scenarios/*.toml; `make stability` makes build/stability.json.  A chapter's sweeps
# go to the Dask cluster at MHANW_DASK_SCHEDULER when it is set.
SCENARIO_LEDGER_TARGETS := $(SCENARIOS:scenarios/%.toml=build/scenarios/%/claims.json)
SEED_LEDGERS := $(foreach s,$(STABILITY_SEEDS),build/stability/seed-$(s)/claims.json)
STABILITY_CHAPTERS ?= $(NAMES)
ifneq ($(filter-out $(NAMES),$(STABILITY_CHAPTERS)),)
$(error STABILITY_CHAPTERS: no notebook $(filter-out $(NAMES),$(STABILITY_CHAPTERS)) (chapters: $(NAMES)))
endif
# The seeds and the chapters of the last stability run (rewritten, and the run redone, when they change).
SEEDS_STAMP := build/stability/seeds
SEEDS_WANT := seeds $(strip $(STABILITY_SEEDS)) chapters $(strip $(STABILITY_CHAPTERS))
# What a chapter run in a copy depends on: the notebooks, the library files they
# import (build/deps/*.d), the scripts that run them and the environment.
CHAPTER_LIBRARY = $(sort $(foreach n,$(NAMES),$(patsubst %:,%,$(filter src/%,$(file <build/deps/$(n).d)))))
RUN_INPUTS = $(NOTEBOOKS) $(CHAPTER_LIBRARY) scripts/scenario.py scripts/run_notebook.sh scripts/check_params.py \
  $(VENV_STAMP)
# Two jobs in each copy, also under make -j2 (then up to four notebooks share the two
# cores, but the last copy to finish does not run alone on one of them).
COPY_JOBS := 2
# run_in_copy(what, log, command): the command with its output in the log, a line before and after.
run_in_copy = echo "==> $(1) (quick fidelity; log: $(2))"; mkdir -p $(dir $(2)); start=$$(date +%s); \
  $(3) >$(2) 2>&1 || { echo "*** $(1) failed; the end of $(2):" >&2; tail -n 40 $(2) >&2; exit 1; }; \
  echo "    $(1) done in $$(( $$(date +%s) - start )) s"

ifneq ($(strip $(file <$(SEEDS_STAMP))),$(SEEDS_WANT))
$(SEEDS_STAMP): FORCE
endif
$(SEEDS_STAMP):
	@mkdir -p $(@D) && echo '$(SEEDS_WANT)' > $@.tmp && mv -f $@.tmp $@

$(SCENARIO_LEDGER_TARGETS): build/scenarios/%/claims.json: scenarios/%.toml $(RUN_INPUTS)
	@$(call run_in_copy,scenario $*,build/scenarios/$*/run.log,\
	  $(SCRIPT_PY) scripts/scenario.py ledger $< --jobs $(COPY_JOBS) --venv '$(VENV)')
	@touch $@

$(SEED_LEDGERS): build/stability/seed-%/claims.json: $(RUN_INPUTS) scripts/stability.py $(SEEDS_STAMP)
	@$(call run_in_copy,seed $*,build/stability/seed-$*/run.log,\
	  $(SCRIPT_PY) scripts/stability.py seed $* --chapters $(STABILITY_CHAPTERS) --jobs $(COPY_JOBS) --venv '$(VENV)')
	@touch $@

$(STABILITY_JSON): $(SEED_LEDGERS) $(CLAIMS) $(SEEDS_STAMP) $(FIDELITY_STAMP) scripts/stability.py scripts/claimslib.py
	@$(SCRIPT_PY) scripts/stability.py collect --seeds $(STABILITY_SEEDS) --fidelity $(FIDELITY)

# The paper's section: with ROBUSTNESS=yes from the targets above (and any other
# scenario run by hand); with ROBUSTNESS=no from whatever ledgers exist.
ifeq ($(ROBUSTNESS),yes)
SCENARIO_LEDGERS := $(sort $(SCENARIO_LEDGER_TARGETS) $(wildcard build/scenarios/*/claims.json))
STABILITY_INPUT := $(STABILITY_JSON)
else
SCENARIO_LEDGERS := $(sort $(wildcard build/scenarios/*/claims.json))
STABILITY_INPUT := $(wildcard $(STABILITY_JSON))
endif
ROBUSTNESS_ARGS = --fidelity $(FIDELITY) $(if $(STABILITY_INPUT),--stability $(STABILITY_INPUT))
paper/generated/scenarios.tex: $(CLAIMS) $(SCENARIO_LEDGERS) $(STABILITY_INPUT) scripts/report_robustness.py \
  scripts/claimslib.py
	@$(SCRIPT_PY) scripts/report_robustness.py scenarios --out $@ $(ROBUSTNESS_ARGS) $(SCENARIO_LEDGERS)
paper/generated/stability.tex: $(CLAIMS) $(STABILITY_INPUT) scripts/report_robustness.py scripts/claimslib.py
	@$(SCRIPT_PY) scripts/report_robustness.py stability --out $@ $(ROBUSTNESS_ARGS)

scenario: $(VENV_STAMP) ## run every chapter under SCENARIO=scenarios/NAME.toml into build/scenarios/NAME/ (with its PDF)
	@$(SCRIPT_PY) scripts/scenario.py check '$(SCENARIO)' >/dev/null
	@$(SCRIPT_PY) scripts/scenario.py run '$(SCENARIO)' --fidelity $(SCENARIO_FIDELITY) --jobs 2 --venv '$(VENV)'

scenarios: $(VENV_STAMP) ## `make scenario` for every scenarios/*.toml, one after the other
	@for f in $(SCENARIOS); do $(SCRIPT_PY) scripts/scenario.py check "$$f" >/dev/null || exit 1; done
	@for f in $(SCENARIOS); do $(SCRIPT_PY) scripts/scenario.py run "$$f" --fidelity $(SCENARIO_FIDELITY) --jobs 2 --venv '$(VENV)' || exit 1; done

stability: $(STABILITY_JSON) ## every chapter at quick fidelity under STABILITY_SEEDS; build/stability.json

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
BOOK_SRC := $(sort $(wildcard book/*.py book/*.md book/_static/*)) README.md $(CLAIMS) $(README_STAMP)
LAB_ARGS ?=
.PHONY: book lab

all: $(BOOK)
$(VERDICTS): $(BOOK)  # the verdict table comes last

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
