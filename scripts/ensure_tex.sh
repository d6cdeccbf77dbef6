#!/usr/bin/env bash
# Make sure latexmk, pdflatex and pdftotext are installed.  As root (or with
# passwordless sudo) on Debian, install the missing packages; otherwise stop
# and print the exact command to run.  Silent when everything is there.
set -euo pipefail
packages="latexmk texlive-latex-base texlive-latex-recommended poppler-utils"
if command -v latexmk >/dev/null && command -v pdflatex >/dev/null && command -v pdftotext >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "*** TeX is missing (latexmk, pdflatex, pdftotext). Install it with:" >&2
  echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends $packages" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "*** TeX is missing and this is not a Debian system: install latexmk, TeX Live (pdflatex, with" >&2
  echo "    the LaTeX base and recommended packages) and poppler's pdftotext, then re-run make." >&2
  exit 1
fi
echo "==> installing TeX from Debian's packages: $packages"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $packages >/dev/null
