"""Where the paper's figures come from: the commit of the tree that built them.

    python scripts/provenance.py paper/generated/provenance.tex   # write (only if changed)
    python scripts/provenance.py --print                            # the content, on stdout
    python scripts/provenance.py --check paper/generated/provenance.tex  # "same" or "differs"

Writes two LaTeX macros that ``paper/main.tex`` uses in ``\\figsource{NN_slug}``,
the provenance line that ends every figure caption:

* ``\\BuildCommit``: the short hash of the checked-out commit, followed by
  "(dirty)" when tracked files differ from it (uncommitted changes, staged or
  not); "unknown" outside a git work tree (a copy of the sources, an unpacked
  archive) or when git is missing.  Two builds of the same clean commit write
  the same file, so the PDF stays byte-identical.
* ``\\BookChapterBase``: the path from the PDF's copy in the offline book
  (``build/book/paper/main.pdf``, see ``book/build_book.py``) to the book's
  chapter pages (``build/book/NN_slug.html``), i.e. ``../``.

The file is rewritten only when its content changes, so that an unchanged tree
stays up to date for ``make -q``; the Makefile asks ``--check`` (which writes
nothing) whether it must be rewritten.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Relative path from build/book/paper/main.pdf to build/book/NN_slug.html.
BOOK_CHAPTER_BASE = "../"
#: Digits of the abbreviated commit hash (fixed, so that the text does not depend on git's configuration).
SHORT = 7


def _git(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str] | None:
    """``(status, stdout)`` of ``git -C ROOT ARGS``, or None when git fails or is missing.

    GIT_OPTIONAL_LOCKS=0: git must not refresh and rewrite the index on the side
    (the Makefile asks at parse time, and ``make -n``/``make -q`` write nothing).
    """
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return (proc.returncode, proc.stdout.strip()) if proc.returncode in ok else None


def build_commit() -> str:
    """"abc1234", "abc1234 (dirty)" or "unknown" (see the module's docstring)."""
    top = _git("rev-parse", "--show-toplevel")
    if top is None or Path(top[1]).resolve() != ROOT:  # no git, or a repository that merely encloses this copy
        return "unknown"
    head = _git("rev-parse", "--verify", "--quiet", "HEAD")
    if head is None or not head[1]:
        return "unknown"
    # `git diff` compares contents, so a touched but unchanged file is not a change
    diff = _git("diff", "--no-ext-diff", "--quiet", "HEAD", "--", ok=(0, 1))
    dirty = diff is None or diff[0] == 1
    return head[1][:SHORT] + (" (dirty)" if dirty else "")


def content() -> str:
    commit = build_commit()
    return (
        "% Written by scripts/provenance.py at build time; do not edit.\n"
        f"\\newcommand{{\\BuildCommit}}{{{commit}}}\n"
        f"\\newcommand{{\\BookChapterBase}}{{{BOOK_CHAPTER_BASE}}}\n"
    )


def main(argv: list[str]) -> int:
    if argv == ["--print"]:
        sys.stdout.write(content())
        return 0
    if len(argv) == 2 and argv[0] == "--check":
        out = Path(argv[1])
        print("same" if out.is_file() and out.read_text(encoding="utf-8") == content() else "differs")
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: provenance.py OUT.tex | --print | --check OUT.tex", file=sys.stderr)
        return 2
    out = Path(argv[0])
    text = content()
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
