#!/usr/bin/env bash
# Choose the Python interpreter that builds the project's virtual environment.
#
#   scripts/find_python.sh [PYTHON]
#   scripts/find_python.sh --supported      # the supported versions, oldest first
#
# The supported versions are read from `requires-python` in pyproject.toml
# (">=3.A,<3.B": CPython 3.A up to 3.(B-1)).  The choice:
#   1. PYTHON, when given (a command on PATH or a path): used if supported,
#      otherwise an error naming PYTHON;
#   2. otherwise `python3`, when its version is supported;
#   3. otherwise the newest supported `python3.X` on PATH that runs;
#   4. otherwise an error naming the accepted versions and how to install one.
# Prints one line: "ok <executable> <version>" (the interpreter's real
# executable, e.g. /usr/bin/python3.12, and its full version), or
# "error <message>".  Always exits 0, so that make can show the message once.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

spec=$(sed -nE 's/^requires-python *= *"([^"]*)".*/\1/p' "$here/pyproject.toml")
lo=$(sed -nE 's/.*>= *3\.([0-9]+).*/\1/p' <<<"$spec")
hi=$(sed -nE 's/.*< *3\.([0-9]+).*/\1/p' <<<"$spec")
if [ -z "$lo" ] || [ -z "$hi" ]; then
  echo "error pyproject.toml: requires-python must read \">=3.A,<3.B\", got \"$spec\""
  exit 0
fi
supported=()
for ((m = hi - 1; m >= lo; m--)); do supported+=("3.$m"); done   # newest first
accepted=$(printf '%s\n' "${supported[@]}" | sort -t. -k2n | paste -sd, | sed 's/,/, /g')

if [ "${1:-}" = --supported ]; then
  sed 's/,//g' <<<"$accepted"
  exit 0
fi

# probe CMD -> "CPython 3.12.1 /real/path/python3.12", or nothing if CMD does not run
probe() {
  "$1" -I -c 'import os, platform, sys; print(platform.python_implementation(), platform.python_version(), os.path.realpath(sys.executable))' 2>/dev/null | head -1
}
# is_supported "CPython 3.12.1 ..." -> 0 when CPython of a supported minor version
is_supported() {
  local impl version
  read -r impl version _ <<<"$1"
  [ "$impl" = CPython ] || return 1
  for v in "${supported[@]}"; do
    case $version in "$v" | "$v".*) return 0 ;; esac
  done
  return 1
}
emit() {  # "CPython 3.12.1 /path" -> "ok /path 3.12.1"
  local impl version exe
  read -r impl version exe <<<"$1"
  echo "ok $exe $version"
}

requested=${1:-}
if [ -n "$requested" ]; then
  found=$(probe "$requested")
  if [ -z "$found" ]; then
    echo "error PYTHON=$requested does not run (not on PATH, or not a Python interpreter); mhanw needs CPython $accepted"
  elif ! is_supported "$found"; then
    read -r impl version _ <<<"$found"
    echo "error PYTHON=$requested is $impl $version; mhanw needs CPython $accepted"
  else
    emit "$found"
  fi
  exit 0
fi

found=$(probe python3)
if [ -n "$found" ] && is_supported "$found"; then emit "$found"; exit 0; fi
seen=${found:+python3 is $(cut -d' ' -f1-2 <<<"$found")}
for v in "${supported[@]}"; do
  command -v "python$v" >/dev/null 2>&1 || continue
  cand=$(probe "python$v")
  if [ -n "$cand" ] && is_supported "$cand"; then emit "$cand"; exit 0; fi
done
echo "error no supported Python found (${seen:-no python3 on PATH}): mhanw needs CPython $accepted." \
     "On Debian/Ubuntu, install one your release ships, e.g. sudo apt-get install python3.${lo}-venv" \
     "(or python3-venv when python3 is one of them), then re-run make; or name one: make PYTHON=/path/to/python3.X"
