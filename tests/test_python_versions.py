"""Two clean builds give byte-identical figures and numbers, under a second supported Python.

A quick build of the chapters and the paper in a fresh copy, with its own
environment made by a second supported interpreter (the newest one found besides
the one running the tests; this one when there is none), gives byte-identical
figures, macros and raw results to the session's quick build (``quick_build``),
and a PDF with the same text and pages.  The second environment is kept in
build/test-venvs/ between runs (make remakes it when the lock changes).

Compared byte for byte: figures/*.{pdf,png} and paper/generated/NN_slug.tex.
Compared as JSON: build/results/NN_slug.json without its wall-time fields
(``runtime_s``, ``seconds``), which differ between any two runs.  The PDFs are
compared by their text (pdftotext) and page count, and byte for byte when both
builds used the same interpreter: the PDF's metadata names the interpreter.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest
from nbtools import ROOT, fresh_copy, make

pytestmark = pytest.mark.slow

SUPPORTED = subprocess.run(
    [str(ROOT / "scripts" / "find_python.sh"), "--supported"], capture_output=True, text=True, check=True
).stdout.split()


def other_interpreters() -> dict[str, str]:
    """{version: interpreter} of the supported CPython versions other than this one that run here:
    python3.X on PATH, or a pyenv installation; newest first."""
    this = f"{sys.version_info.major}.{sys.version_info.minor}"
    found = {}
    for version in reversed(SUPPORTED):
        if version == this:
            continue
        candidates = [shutil.which(f"python{version}")]
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
        for cand in filter(None, candidates):
            proc = subprocess.run(
                [cand, "-c", "import platform, venv, ensurepip; print(platform.python_version())"],
                capture_output=True,
                text=True,
            )
            if proc.returncode == 0 and proc.stdout.strip().startswith(version + "."):
                found[version] = cand
                break
    return found


#: Fields of the raw results that hold wall times, not results.
WALL_TIME_KEYS = {"runtime_s", "seconds"}


def without_wall_times(obj):
    if isinstance(obj, dict):
        return {k: without_wall_times(v) for k, v in obj.items() if k not in WALL_TIME_KEYS}
    if isinstance(obj, list):
        return [without_wall_times(v) for v in obj]
    return obj


def outputs(tree) -> dict[str, object]:
    files = [*tree.glob("figures/*.pdf"), *tree.glob("figures/*.png"), *tree.glob("paper/generated/[0-9][0-9]_*.tex")]
    out: dict[str, object] = {str(p.relative_to(tree)): p.read_bytes() for p in files}
    for p in tree.glob("build/results/[0-9][0-9]_*.json"):
        out[str(p.relative_to(tree))] = without_wall_times(json.loads(p.read_text()))
    return dict(sorted(out.items()))


def test_a_second_python_gives_byte_identical_figures_and_numbers(quick_build, tmp_path):
    others = other_interpreters()
    copy = fresh_copy(tmp_path / "copy")
    if others:
        version, python = next(iter(others.items()))
        make(copy, "build/paper/main.pdf", venv=ROOT / "build" / "test-venvs" / f"py{version}", python=python)
    else:  # no second interpreter: a second clean build with this one
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        make(copy, "build/paper/main.pdf")
    env = json.loads((copy / "build" / "paper" / "environment.json").read_text())
    assert env["python"]["version"].startswith(version + ".")
    reference = json.loads((quick_build / "build" / "paper" / "environment.json").read_text())
    assert env["packages"] == reference["packages"], "the lock must give the same numerical libraries"

    mine, theirs = outputs(copy), outputs(quick_build)
    assert sorted(mine) == sorted(theirs)
    differ = [name for name in mine if mine[name] != theirs[name]]
    assert not differ, f"Python {version} and {reference['python']['version']} differ in {differ}"
    pdfs = [tree / "build" / "paper" / "main.pdf" for tree in (copy, quick_build)]
    texts = [
        subprocess.run(["pdftotext", "-layout", str(p), "-"], capture_output=True, text=True, check=True).stdout
        for p in pdfs
    ]
    assert texts[0] == texts[1], "the two PDFs differ in their text"
    if env["python"] == reference["python"]:
        assert pdfs[0].read_bytes() == pdfs[1].read_bytes(), "two clean builds with one interpreter differ"
