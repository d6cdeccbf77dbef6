#!/usr/bin/env bash
# Make sure latexmk, pdflatex and pdftotext are installed (from Debian's packages
# when we may, scripts/apt_install.sh).  Silent when everything is there.
set -euo pipefail
if command -v latexmk >/dev/null && command -v pdflatex >/dev/null && command -v pdftotext >/dev/null; then
  exit 0
fi
exec "$(dirname "$0")/apt_install.sh" "TeX (latexmk, pdflatex, pdftotext)" \
  "latexmk texlive-latex-base texlive-latex-recommended poppler-utils" \
  "install latexmk, TeX Live (pdflatex, with the LaTeX base and recommended packages) and poppler's pdftotext, then re-run make."
