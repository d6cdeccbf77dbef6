"""Where the paper's figures come from: the commit of the tree that built them.

Writes two LaTeX macros that ``paper/main.tex`` uses in ``\\figsource{NN_slug}``,
the provenance line that ends every figure caption:

* ``\\BuildCommit``: the short hash of the checked-out commit, followed by
  "(dirty)" when tracked files differ from it (uncommitted changes, staged or
  not); "unknown" outside a git work tree (a copy of the sources, an unpacked
  archive) or when git is missing.  Two builds of the same clean commit write
  the same file, so the PDF stays byte-identical.
* ``\\BookChapterBase``: the path from the PDF's copy in the offline book
  (``build/book/paper/main.pdf``, see :mod:`mhanw.pipeline.book`) to the book's
  chapter pages (``build/book/NN_slug.html``), i.e. ``../``.

:func:`write` rewrites the file only when its content changes; the paper's
build (:mod:`mhanw.pipeline.paper`) calls it before LaTeX runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mhanw.infra.texout import write_atomic

#: Relative path from build/book/paper/main.pdf to build/book/NN_slug.html.
BOOK_CHAPTER_BASE = "../"
#: Digits of the abbreviated commit hash (fixed, so that the text does not depend on git's configuration).
SHORT = 7


def _git(root: Path, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str] | None:
    """``(status, stdout)`` of ``git -C ROOT ARGS``, or None when git fails or is missing.

    GIT_OPTIONAL_LOCKS=0: git must not refresh and rewrite the index on the side
    (the Makefile asks at parse time, and ``make -n``/``make -q`` write nothing).
    """
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return (proc.returncode, proc.stdout.strip()) if proc.returncode in ok else None


def build_commit(root: Path) -> str:
    """ "abc1234", "abc1234 (dirty)" or "unknown" (see the module's docstring)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if (
        top is None or Path(top[1]).resolve() != Path(root).resolve()
    ):  # no git, or a repository that merely encloses this copy
        return "unknown"
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    if head is None or not head[1]:
        return "unknown"
    # `git diff` compares contents, so a touched but unchanged file is not a change
    diff = _git(root, "diff", "--no-ext-diff", "--quiet", "HEAD", "--", ok=(0, 1))
    dirty = diff is None or diff[0] == 1
    return head[1][:SHORT] + (" (dirty)" if dirty else "")


def content(root: Path) -> str:
    commit = build_commit(root)
    return (
        "% Written by mhanw.pipeline.provenance at build time; do not edit.\n"
        f"\\newcommand{{\\BuildCommit}}{{{commit}}}\n"
        f"\\newcommand{{\\BookChapterBase}}{{{BOOK_CHAPTER_BASE}}}\n"
    )


def write(root: Path, path: Path) -> bool:
    """Write the macros to ``path`` when they differ from its content; True when written."""
    text = content(root)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True
