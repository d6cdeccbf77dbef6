"""A LaTeX document that reads the paper's values as the paper does, for the tests that compile them.

The definitions of ``\\mhvalue`` and ``\\val`` are taken from ``paper/main.tex`` itself, so a test compiles
what :func:`mhanw.infra.results.values_tex` writes under the paper's own macros.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PDFLATEX = shutil.which("pdflatex")
PREAMBLE = (
    "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{amsmath,amssymb}\\usepackage{booktabs}"
    "\\newcommand{\\HDIpa}{\\mathrm{HDI}_{\\mathrm{PA}}}"
)


def value_macros() -> str:
    """The paper's ``\\mhvalue`` and ``\\val`` (``paper/main.tex``), between ``\\makeatletter`` and
    ``\\makeatother``."""
    main = (ROOT / "paper" / "main.tex").read_text()
    found = [
        re.search(r"\\newcommand\*\{\\mhvalue\}[^\n]*\n", main),
        re.search(r"\\newcommand\*\{\\val\}.*?\\fi\}\n", main, re.S),
    ]
    assert all(found), "paper/main.tex no longer defines \\mhvalue and \\val as this test expects"
    return "\\makeatletter " + "".join(m.group(0) for m in found if m) + "\\makeatother "


def pdflatex(folder: Path, body: str, values: str | None = None) -> subprocess.CompletedProcess:
    """Compile ``doc.tex`` in ``folder``: the preamble, the paper's value macros, ``values.tex`` (when
    ``values`` is given) and ``body`` (from ``\\begin{document}`` on, or more preamble before it)."""
    inputs = ""
    if values is not None:
        (folder / "values.tex").write_text(values)
        inputs = value_macros() + "\\input{values.tex}"
    (folder / "doc.tex").write_text(f"{PREAMBLE}{inputs}{body}\n")
    assert PDFLATEX is not None
    return subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )


def pdf_text(folder: Path) -> str | None:
    """The text of ``doc.pdf`` by ``pdftotext``, or ``None`` where it is not installed."""
    if not shutil.which("pdftotext"):
        return None
    return subprocess.run(["pdftotext", "doc.pdf", "-"], cwd=folder, capture_output=True, text=True).stdout
