#!/usr/bin/env bash
# Execute one notebook with papermill and publish its outputs atomically.
#
#   scripts/run_notebook.sh NN_slug        (environment: VENV, FIDELITY)
#
# The notebook runs with its output paths pointing into build/stage/NN_slug/
# (given relative to notebooks/, papermill's --cwd, so that the executed copy
# names no folder of this machine), with the parameters below only (each checked
# first against the notebook's parameters cell, by scripts/check_params.py), and
# imports the library from this checkout's src/ (PYTHONPATH), whichever checkout
# the environment was installed from.  Only when every cell succeeded are its
# figures moved to figures/, its raw results to build/results/, the executed copy
# to build/notebooks/, the list of its figures to build/figures/NN_slug.list and,
# last, its macros to paper/generated/ (the make target).  When a cell fails,
# the traceback is on the terminal (papermill --log-output), and every earlier
# output of this notebook is removed so that nothing stale looks up to date.
set -euo pipefail

name=${1:?usage: run_notebook.sh NN_slug}
: "${VENV:=.venv}" "${FIDELITY:=paper}"
root=$(pwd)
src=notebooks/$name.ipynb
stage=$root/build/stage/$name
[ -f "$src" ] || { echo "*** no notebook $src" >&2; exit 2; }
case $FIDELITY in
  quick | paper) ;;
  *) echo "*** FIDELITY must be 'quick' or 'paper', got '$FIDELITY'" >&2; exit 2 ;;
esac

# The parameters this pipeline injects, name and value.
params=(
  fidelity "$FIDELITY"
  figures_dir "../build/stage/$name/figures"
  macros_path "../build/stage/$name/$name.tex"
  results_path "../build/stage/$name/$name.json"
)
names=()
papermill_args=()
for ((i = 0; i < ${#params[@]}; i += 2)); do
  names+=("${params[i]}")
  papermill_args+=(-p "${params[i]}" "${params[i + 1]}")
done

forget() {  # remove every published output of this notebook
  local listed=()
  if [ -f "build/figures/$name.list" ]; then read -r -a listed < "build/figures/$name.list" || true; fi
  rm -f figures/"$name".pdf figures/"$name".png figures/"$name"_*.pdf figures/"$name"_*.png \
        "${listed[@]/#/figures/}" "build/figures/$name.list" \
        "paper/generated/$name.tex" "build/results/$name.json" "build/notebooks/$name.ipynb"
}
fail() { forget; echo "*** notebook $name FAILED: $*" >&2; exit 1; }

"$VENV/bin/python" scripts/check_params.py "$src" "${names[@]}" \
  || fail "the pipeline's parameters do not match the notebook's parameters cell"

rm -rf "$stage"
mkdir -p "$stage/figures" figures build/notebooks build/results build/figures build/timings paper/generated
# The caches the Makefile points IPython and matplotlib to (they warn when missing).
for dir in "${IPYTHONDIR:-}" "${MPLCONFIGDIR:-}"; do [ -z "$dir" ] || mkdir -p "$dir"; done
echo "==> notebook $name (FIDELITY=$FIDELITY)"
start=$(date +%s)
PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" \
"$VENV/bin/papermill" "$src" "$stage/$name.ipynb" \
    -k python3 --log-output --no-progress-bar --cwd notebooks "${papermill_args[@]}" \
  || fail "the failing cell and its traceback are above; executed copy: build/stage/$name/$name.ipynb"

[ -s "$stage/$name.tex" ] || fail "it wrote no macros (expected the parameter macros_path to be written)"
figures=()
for f in "$stage"/figures/*; do
  [ -e "$f" ] || continue
  case $(basename "$f") in
    "$name".* | "$name"_*) figures+=("$(basename "$f")") ;;
    *) fail "figure $(basename "$f") does not start with the notebook's name" ;;
  esac
done

# The executed notebook and the macros (the make targets) must be newer than the
# figures (their prerequisites once listed), whichever cell wrote what first.
touch "$stage/$name.ipynb" "$stage/$name.tex"
forget
find "$stage/figures" -type f -exec mv -t figures/ {} +
[ -f "$stage/$name.json" ] && mv "$stage/$name.json" build/results/
mv "$stage/$name.ipynb" build/notebooks/
echo "${figures[*]}" > "$stage/$name.list" && mv "$stage/$name.list" build/figures/
mv "$stage/$name.tex" paper/generated/
rm -rf "$stage"
seconds=$(( $(date +%s) - start ))
printf '{"notebook": "%s", "fidelity": "%s", "seconds": %d}\n' "$name" "$FIDELITY" "$seconds" > "build/timings/.$name.json.tmp"
mv -f "build/timings/.$name.json.tmp" "build/timings/$name.json"
echo "    $name done in $seconds s"
