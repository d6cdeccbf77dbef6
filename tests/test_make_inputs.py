"""The Makefile's choice of interpreter, and what it does with bad input.

Every case runs `make` in a fresh copy of the repository, mostly as a dry run
(`make -n`), with fake interpreters first on PATH: small scripts that report a
chosen version to the probe of scripts/find_python.sh and hand every other
command to the real interpreter.  Nothing here touches this checkout's .venv.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from nbtools import VENV, fresh_copy, make

SUPPORTED = ("3.11", "3.12", "3.13")
REAL_PYTHON = os.path.realpath(sys._base_executable)


@pytest.fixture
def copy(tmp_path):
    return fresh_copy(tmp_path / "repo")


def fake_python(folder: Path, name: str, version: str | None) -> Path:
    """``folder/name``: reports CPython ``version`` to the interpreter probe, runs the real
    interpreter otherwise; with ``version=None`` it fails like a pyenv shim without a version."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if version is None:
        body = '#!/bin/sh\necho "pyenv: $0: command not found" >&2\nexit 127\n'
    else:
        body = (
            "#!/bin/sh\n"
            f'case "$*" in *python_implementation*) echo "CPython {version} {path}"; exit 0 ;; esac\n'
            f'exec "{REAL_PYTHON}" "$@"\n'
        )
    path.write_text(body)
    path.chmod(0o755)
    return path


def path_with(folder: Path) -> str:
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


_MAKE_VENV = re.compile(r"^scripts/make_venv\.sh '([^']*)' '([^']*)' '([^']*)'$", flags=re.M)


def planned_venv_python(plan: str) -> str | None:
    """The interpreter the plan would make the environment with (scripts/make_venv.sh VENV PYTHON WANT)."""
    m = _MAKE_VENV.search(plan)
    return m.group(2) if m else None


def test_supported_versions_come_from_requires_python(copy):
    out = os.popen(f"{copy}/scripts/find_python.sh --supported").read().split()
    assert tuple(out) == SUPPORTED


def test_an_unsupported_python3_is_passed_over_for_the_newest_supported_python3_x(copy, tmp_path):
    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", "3.10.14")
    fake_python(fakes, "python3.13", None)  # on PATH but does not run
    chosen = fake_python(fakes, "python3.12", "3.12.9")
    proc = make(copy, "-n", "all", venv=tmp_path / "venv", path=path_with(fakes))
    assert planned_venv_python(proc.stdout) == str(chosen), proc.stdout[:2000]
    assert "python 3.12.9" in proc.stdout


def test_a_python3_outside_the_supported_versions_alone_stops_make_with_one_message(copy, tmp_path):
    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", "3.10.14")
    fake_python(fakes, "python3.11", "3.14.0")  # a liar: the version is checked, not the name
    fake_python(fakes, "python3.12", None)
    fake_python(fakes, "python3.13", None)
    for args in (("-n", "all"), ("all",)):
        proc = make(copy, *args, venv=tmp_path / "venv", path=path_with(fakes), check=False)
        assert proc.returncode != 0
        assert proc.stdout == "", "make did something before stopping"
        errors = [l for l in proc.stderr.splitlines() if "***" in l]
        assert len(errors) == 1, proc.stderr
        assert "3.11, 3.12, 3.13" in errors[0] and "apt-get install python3.11-venv" in errors[0]
        assert "python3 is CPython 3.10.14" in errors[0]
    assert not (tmp_path / "venv").exists() and not (copy / "build").exists()


def test_goals_without_python_work_without_a_supported_python(copy, tmp_path):
    fakes = tmp_path / "bin"
    for name in ("python3", "python3.11", "python3.12", "python3.13"):
        fake_python(fakes, name, "3.10.14")
    (copy / "build").mkdir()
    assert make(copy, "clean", path=path_with(fakes)).returncode == 0
    assert not (copy / "build").exists()
    assert "FIDELITY" in make(copy, "help", path=path_with(fakes)).stdout


def test_python_given_overrides_the_choice(copy, tmp_path):
    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", "3.11.9")
    mine = fake_python(tmp_path / "elsewhere", "python-mine", "3.13.1")
    proc = make(copy, "-n", "all", venv=tmp_path / "venv", python=str(mine), path=path_with(fakes))
    assert planned_venv_python(proc.stdout) == str(mine)


@pytest.mark.parametrize("version", [None, "3.14.0", "3.10.2"])
def test_an_unusable_python_given_stops_make_naming_python(copy, tmp_path, version):
    bad = tmp_path / "python-bad"
    if version is None:
        bad = tmp_path / "no-such-python"
    else:
        fake_python(tmp_path, bad.name, version)
    proc = make(copy, "-n", "all", venv=tmp_path / "venv", python=str(bad), check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    assert f"PYTHON={bad}" in proc.stderr and "3.11, 3.12, 3.13" in proc.stderr


def stamp_line(plan: str, venv: Path) -> str:
    """What the plan would write into VENV/.installed: the interpreter and the inputs' digest."""
    m = _MAKE_VENV.search(plan)
    assert m and m.group(1) == str(venv), plan[:3000]
    return m.group(3)


def test_the_environment_is_remade_when_the_interpreter_changes(copy, tmp_path):
    venv = tmp_path / "venv"
    fakes = tmp_path / "bin"
    fake_python(fakes, "python3", "3.11.9")
    want = stamp_line(make(copy, "-n", "all", venv=venv, path=path_with(fakes)).stdout, venv)
    assert want.startswith(f"python 3.11.9 {fakes}/python3 inputs ")
    # an environment this Makefile made, for this interpreter and these inputs
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{VENV}/bin/python" "$@"\n')  # writes the graph
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".mhanw-venv").write_text("made by the mhanw Makefile\n")
    (venv / ".installed").write_text(want + "\n")
    plan = make(copy, "-n", "all", venv=venv, path=path_with(fakes)).stdout
    assert "make_venv.sh" not in plan
    # another interpreter: the environment is made again
    other = fake_python(tmp_path / "other", "python3.13", "3.13.2")
    plan = make(copy, "-n", "all", venv=venv, python=str(other), path=path_with(fakes)).stdout
    assert planned_venv_python(plan) == str(other)
    # changed inputs: made again too
    with open(copy / "requirements.lock", "a") as f:
        f.write("# a change\n")
    plan = make(copy, "-n", "all", venv=venv, path=path_with(fakes)).stdout
    assert planned_venv_python(plan) == str(fakes / "python3")


def test_a_fresh_checkout_reuses_the_project_environment_it_is_given(copy):
    """New modification times (as a clone has) do not make an environment out of date."""
    for name in ("pyproject.toml", "requirements.lock", "requirements-nodeps.txt"):
        os.utime(copy / name, None)
    plan = make(copy, "-n", "all", venv=VENV).stdout
    assert "make_venv.sh" not in plan and "mhanw.pipeline run" in plan


def test_an_environment_this_makefile_did_not_make_is_never_deleted(copy, tmp_path):
    theirs = tmp_path / "their-env"
    (theirs / "bin").mkdir(parents=True)
    (theirs / "keep").write_text("precious")
    for args in (("-n", "all"), ("all",), ("test-fast",)):
        proc = make(copy, *args, venv=theirs, check=False)
        assert proc.returncode != 0 and proc.stdout == ""
        assert f"VENV={theirs} exists but was not made by this Makefile" in proc.stderr
    proc = make(copy, "distclean", venv=theirs, check=False)
    assert proc.returncode != 0 and f"VENV={theirs}" in proc.stderr
    assert (theirs / "keep").read_text() == "precious" and (theirs / "bin").is_dir()
    assert not (copy / "build").exists()


@pytest.mark.parametrize("value", ["quick paper", "fast", "", "Quick"])
def test_fidelity_must_be_exactly_quick_or_paper(copy, value):
    proc = make(copy, "-n", "all", fidelity=value, check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    assert f"FIDELITY must be one word, 'quick' or 'paper'; got '{value}'" in proc.stderr


def test_venv_must_be_one_directory(copy):
    proc = make(copy, "-n", "all", venv="my env", check=False)
    assert proc.returncode != 0 and "VENV must name one directory" in proc.stderr


def test_goals_that_do_not_build_the_default_run_leave_its_settings_alone(copy):
    """`make all FIDELITY=quick`, `make scenario SCENARIO=...` (FIDELITY left at its default, paper), then
    `make all FIDELITY=quick` again must find the first build up to date: build/fidelity and
    build/robustness are rewritten only when a goal needs them.  Touch mode (-t) runs make for real (the
    graph is written, the scenario's value checked) without running a chapter."""
    build = copy / "build"
    build.mkdir()
    (build / "fidelity").write_text("quick\n")
    (build / "robustness").write_text("no 1 2 3 4 5\n")
    os.utime(build / "fidelity", (1_000_000_000, 1_000_000_000))
    os.utime(build / "robustness", (1_000_000_000, 1_000_000_000))

    def stamps():
        return {p.name: (p.read_text(), p.stat().st_mtime_ns) for p in (build / "fidelity", build / "robustness")}

    before = stamps()
    run = build / "scenarios" / "heteroscedastic" / "quick"
    for folder in ("results", "paper"):
        (run / folder).mkdir(parents=True)  # touch mode makes no folder
    make(copy, "-t", "scenario", "SCENARIO=scenarios/heteroscedastic.toml", fidelity="paper")
    assert (run / "paper" / "main.pdf").exists()  # make went through the scenario's graph
    make(copy, "lint", fidelity="paper")
    assert stamps() == before, "a goal that does not build the default run changed its settings"
    # a goal that builds the default run at another fidelity rewrites the stamp, and runs every chapter
    plan = make(copy, "-n", "all", fidelity="paper").stdout
    assert "echo 'paper' > build/fidelity" in plan and "mhanw.pipeline run 01_attention_is_nadaraya_watson" in plan
    assert stamps() == before  # not in a dry run
