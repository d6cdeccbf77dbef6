"""The same figures and numbers on every supported Python.

A quick build of the notebooks in a fresh copy, with its own environment made
by a second supported interpreter (the newest one found besides the one running
the tests), gives byte-identical figures, macros and raw results to the
pipeline test's quick build (the ``builds`` fixture, this interpreter).  The
environment of the second interpreter is kept in build/test-venvs/ between
runs (the Makefile remakes it when the lock changes), so a repeated run costs
one quick build.

Compared byte for byte: figures/*.{pdf,png} and paper/generated/NN_slug.tex.
Compared as JSON: build/results/NN_slug.json without its wall-time fields
(``runtime_s``, ``seconds``), which differ between any two runs.  Not compared,
because they legitimately name the interpreter or the time: the environment
record (build/results/environment.json, paper/generated/environment.tex, hence
the PDF's metadata), the executed notebooks (their outputs hold timings) and
build/timings*.  Measured: 3.11.7 against 3.12.1 and against 3.13.0, every
figure, macro and result identical.
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

SUPPORTED = subprocess.run([str(ROOT / "scripts" / "find_python.sh"), "--supported"], capture_output=True,
                           text=True, check=True).stdout.split()


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
            proc = subprocess.run([cand, "-c", "import platform, venv, ensurepip; print(platform.python_version())"],
                                  capture_output=True, text=True)
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


def test_a_second_python_gives_byte_identical_figures_and_numbers(builds, tmp_path):
    others = other_interpreters()
    if not others:
        pytest.skip(f"no second supported CPython ({', '.join(SUPPORTED)}) on PATH or under pyenv")
    version, python = next(iter(others.items()))
    venv = ROOT / "build" / "test-venvs" / f"py{version}"
    copy = fresh_copy(tmp_path / "copy")
    make(copy, "-j2", "notebooks", "build/results/environment.json", venv=venv, python=python)
    env = json.loads((copy / "build" / "results" / "environment.json").read_text())
    assert env["python"]["version"].startswith(version + ".")
    reference = json.loads((builds[0] / "build" / "results" / "environment.json").read_text())
    assert env["packages"] == reference["packages"], "the lock must give the same numerical libraries"

    mine, theirs = outputs(copy), outputs(builds[0])
    assert sorted(mine) == sorted(theirs)
    differ = [name for name in mine if mine[name] != theirs[name]]
    assert not differ, f"Python {version} and {reference['python']['version']} differ in {differ}"
