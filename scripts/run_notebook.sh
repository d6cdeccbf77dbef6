#!/usr/bin/env bash
# Execute one notebook with papermill and publish its outputs atomically.
#
#   scripts/run_notebook.sh NN_slug        (environment: VENV, FIDELITY)
#
# The notebook runs with its output paths pointing into build/stage/NN_slug/
# (relative to notebooks/, papermill's --cwd, so that the executed copy names no
# folder of this machine).
# Only when every cell succeeded are its figures moved to figures/, its raw
# results to build/results/, the executed copy to build/notebooks/ and, last,
# its macros to paper/generated/ (the make target).  When a cell fails, the
# traceback is on the terminal (papermill --log-output), and every earlier
# output of this notebook is removed so that nothing stale looks up to date.
set -euo pipefail

name=${1:?usage: run_notebook.sh NN_slug}
: "${VENV:=.venv}" "${FIDELITY:=paper}"
root=$(pwd)
src=notebooks/$name.ipynb
stage=$root/build/stage/$name
[ -f "$src" ] || { echo "*** no notebook $src" >&2; exit 2; }

forget() {  # remove every published output of this notebook
  rm -f figures/"$name".pdf figures/"$name".png figures/"$name"_*.pdf figures/"$name"_*.png \
        "paper/generated/$name.tex" "build/results/$name.json" "build/notebooks/$name.ipynb"
}
fail() { forget; echo "*** notebook $name FAILED: $*" >&2; exit 1; }

rm -rf "$stage"
mkdir -p "$stage/figures" figures build/notebooks build/results paper/generated
echo "==> notebook $name (FIDELITY=$FIDELITY)"
start=$(date +%s)
"$VENV/bin/papermill" "$src" "$stage/$name.ipynb" \
    -k python3 --log-output --no-progress-bar --cwd notebooks \
    -p fidelity "$FIDELITY" \
    -p figures_dir "../build/stage/$name/figures" \
    -p macros_path "../build/stage/$name/$name.tex" \
    -p results_path "../build/stage/$name/$name.json" \
  || fail "the failing cell and its traceback are above; executed copy: build/stage/$name/$name.ipynb"

[ -s "$stage/$name.tex" ] || fail "it wrote no macros (expected the parameter macros_path to be written)"
for f in "$stage"/figures/*; do
  [ -e "$f" ] || continue
  case $(basename "$f") in
    "$name".* | "$name"_*) ;;
    *) fail "figure $(basename "$f") does not start with the notebook's name" ;;
  esac
done

forget
find "$stage/figures" -type f -exec mv -t figures/ {} +
[ -f "$stage/$name.json" ] && mv "$stage/$name.json" build/results/
mv "$stage/$name.ipynb" build/notebooks/
mv "$stage/$name.tex" paper/generated/
rm -rf "$stage"
seconds=$(( $(date +%s) - start ))
mkdir -p build/timings
printf '{"notebook": "%s", "fidelity": "%s", "seconds": %d}\n' "$name" "$FIDELITY" "$seconds" > "build/timings/$name.json"
echo "    $name done in $seconds s"
