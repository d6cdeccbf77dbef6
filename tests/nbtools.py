"""Helpers for the chapter and pipeline tests: fresh copies of the repository and make in them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mhanw.pipeline import chapters

ROOT = Path(__file__).resolve().parents[1]
#: The chapters' sources, ``notebooks/NN_slug.md``.
NOTEBOOKS = [c.path for c in chapters.discover(ROOT)]
VENV = Path(sys.prefix)


def notebook_meta(path: Path) -> dict:
    return dict(chapters.read(path).metadata.get("mhanw", {}))


def tracked_files() -> list[str]:
    """The files of the repository as a fresh clone has them (tracked and new, not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [f for f in out.split("\0") if f and (ROOT / f).exists()]


def fresh_copy(dest: Path) -> Path:
    """Copy the repository's source files (no build products) to ``dest``, keeping mtimes."""
    for rel in tracked_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    return dest


def make(
    cwd: Path,
    *args: str,
    check: bool = True,
    venv: Path | str = VENV,
    fidelity: str = "quick",
    python: str | None = None,
    path: str | None = None,
    timeout: float = 1800,
) -> subprocess.CompletedProcess:
    """``make VENV=<venv> FIDELITY=<fidelity> [PYTHON=<python>] ARGS`` in ``cwd``; raises with the log on failure.

    ``venv`` defaults to this virtual environment, so the copies do not reinstall it;
    ``path`` replaces PATH (to put a fake interpreter first, for instance).
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MAKE", "MFLAGS", "PYTEST_XDIST", "PYTHONPATH")) and k != "PYTHON"
    }
    if path is not None:
        env["PATH"] = path
    cmd = ["make", f"VENV={venv}", f"FIDELITY={fidelity}", *([f"PYTHON={python}"] if python is not None else []), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"make {' '.join(args)} failed in {cwd}:\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


def clone_build(src: Path, dest: Path) -> Path:
    """A copy of a built tree (sources and build products, modification times kept)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def planned_jobs(plan: str) -> list[tuple[str, str]]:
    """``(chapter, output folder or "default")`` of every chapter job a ``make -n`` plan would run."""
    out = []
    for m in re.finditer(r"mhanw\.pipeline run (\S+)([^\n]*)", plan):
        folder = re.search(r"--out (\S+)", m.group(2))
        out.append((m.group(1), folder.group(1) if folder else "default"))
    return out


def declared_parameters(stem: str, **changes) -> dict:
    """A chapter's parameters as its parameters cell declares them (``NN_slug``), with ``changes``: the
    namespace a test checks against the chapter module's ``PARAMETERS`` (one source of the defaults)."""
    values = chapters.declared(ROOT / "notebooks" / f"{stem}.md")
    unknown = set(changes) - set(values)
    if unknown:
        raise KeyError(f"changes: {sorted(unknown)} are not parameters of {stem}")
    return {**values, **changes}
