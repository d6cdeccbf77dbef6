"""Building a run's paper with latexmk: the default run's, or a scenario's.

One ``paper/main.tex`` serves every run: it inputs its generated macros by name
and includes figures by name, and LaTeX finds them through ``TEXINPUTS``, which
lists the run's ``generated/`` and ``figures/`` folders before ``paper/``.
Before LaTeX runs, the run's environment record and provenance macros are
written (each only when its content changed).  On failure the first LaTeX
errors are printed and the PDF is removed, so that no stale PDF looks current.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from . import environment, provenance

_ERROR = re.compile(r"^[^ ]*\.(tex|sty|cls):[0-9]+: |^! ")


class PaperError(RuntimeError):
    """LaTeX failed; the message holds its first errors."""


def build(root: Path, *, generated: Path, figures: Path, out: Path) -> Path:
    """``out/main.pdf`` from ``paper/main.tex`` with the macros in ``generated`` and the figures in ``figures``."""
    root = Path(root).resolve()
    out.mkdir(parents=True, exist_ok=True)
    environment.write(out / "environment.json", generated / "environment.tex")
    provenance.write(root, generated / "provenance.tex")
    write_chapter_list(root, generated / "chapters.tex")
    paper = root / "paper"
    search = os.pathsep.join(str(p) for p in (generated, figures, paper)) + os.pathsep
    env = {**os.environ, "TEXINPUTS": search, "BIBINPUTS": str(paper) + os.pathsep}
    cmd = [
        "latexmk",
        "-pdf",
        "-silent",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        f"-outdir={out}",
        str(paper / "main.tex"),
    ]
    log = out / "latexmk.log"
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(cmd, cwd=paper, env=env, stdout=fh, stderr=subprocess.STDOUT)
    pdf = out / "main.pdf"
    if proc.returncode:
        main_log = out / "main.log"
        lines = main_log.read_text(encoding="utf-8", errors="replace").splitlines() if main_log.is_file() else []
        first = [i for i, ln in enumerate(lines) if _ERROR.match(ln)][:3]
        text = "\n".join("\n".join(lines[i : i + 5]) for i in first) or log.read_text(errors="replace")[-2000:]
        pdf.unlink(missing_ok=True)
        raise PaperError(f"LaTeX failed; the first errors from {main_log}:\n{text}")
    pdf.touch()  # latexmk leaves an unchanged PDF alone; make compares times
    return pdf


def write_chapter_list(root: Path, path: Path) -> bool:
    """``chapters.tex``: ``\\mhanwchapter{NN_slug}{N}`` per chapter, so that ``paper/main.tex`` marks each
    chapter's section with its chapter number (one numbering in the book and the paper).  Rewritten
    only when it changes; True when written."""
    from mhanw.infra.texout import write_atomic

    from . import chapters

    text = "% Written by mhanw.pipeline.paper from notebooks/; do not edit.\n" + "".join(
        f"\\mhanwchapter{{{c.name}}}{{{c.number}}}\n" for c in chapters.discover(root)
    )
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True


def pages(pdf: Path) -> int | None:
    """The page count (pdfinfo), or None when it cannot be read."""
    try:
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^Pages:\s+(\d+)", info, re.M)
    return int(m.group(1)) if m else None
