#!/usr/bin/env bash
# Run the project's pinned uv, installing it from PyPI first when it is missing.
#
#   scripts/uv.sh ARGS...        # e.g. scripts/uv.sh pip compile ...
#
# The version is the one pinned in pyproject.toml ([tool.uv] required-version = "==X.Y.Z"),
# which uv itself also enforces.  Used, in this order:
#   1. `uv` on PATH when it is exactly that version;
#   2. the copy installed by an earlier run, in ${XDG_CACHE_HOME:-~/.cache}/mhanw/uv-X.Y.Z/uv;
#   3. otherwise that copy is made: the wheel uv==X.Y.Z from PyPI, installed by pip into a
#      throw-away venv of the interpreter scripts/find_python.sh picks (PYTHON= is honoured),
#      and its uv binary kept; nothing else is downloaded and no installer script is run.
# uv never downloads an interpreter here (UV_PYTHON_DOWNLOADS=never): the environment is made
# with the interpreter make chose.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -nE 's/^required-version *= *"==([0-9]+\.[0-9]+\.[0-9]+)".*/\1/p' "$here/pyproject.toml")
if [ -z "$version" ]; then
  echo "*** pyproject.toml: [tool.uv] required-version must read \"==X.Y.Z\" (the pinned uv)" >&2
  exit 1
fi
export UV_PYTHON_DOWNLOADS=never

if command -v uv >/dev/null 2>&1 && [ "$(uv --version 2>/dev/null | cut -d' ' -f2)" = "$version" ]; then
  exec uv "$@"
fi
home=${XDG_CACHE_HOME:-$HOME/.cache}/mhanw/uv-$version
if [ ! -x "$home/uv" ]; then
  found=$("$here/scripts/find_python.sh" "${PYTHON:-}")
  case $found in ok\ *) ;; *) echo "*** ${found#error }" >&2; exit 1 ;; esac
  base=$(cut -d' ' -f2 <<<"$found")
  echo "==> installing uv $version (the wheel from PyPI) into $home" >&2
  mkdir -p "$(dirname "$home")"
  tmp=$(mktemp -d "$home.part.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "$base" -m venv "$tmp/venv" ||
    { echo "*** '$base -m venv' failed; on Debian: apt-get install python3-venv (or python3.X-venv)" >&2; exit 1; }
  "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$version" ||
    { echo "*** pip could not install uv==$version from PyPI (see above)" >&2; exit 1; }
  mkdir "$tmp/keep" && cp "$tmp/venv/bin/uv" "$tmp/keep/uv"
  # another make may have finished first: then its copy is kept and ours is dropped
  mv -T "$tmp/keep" "$home" 2>/dev/null || [ -x "$home/uv" ] ||
    { echo "*** could not put uv into $home (a folder without uv is in the way: remove it)" >&2; exit 1; }
  rm -rf "$tmp"
  trap - EXIT
fi
exec "$home/uv" "$@"
