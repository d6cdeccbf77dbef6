"""Scenario and chapter names that would be make or shell syntax never reach make.

A scenario file whose name holds a backtick command, ``$(shell ...)``, a quote with ``;``, ``..``, a
space, ``%``, ``:`` or ``#``, given as ``SCENARIO=`` or lying in ``scenarios/``, is refused by the one gate
(:mod:`mhanw.pipeline.names`) with one line naming ``SCENARIO`` (or the file): nothing it holds runs,
``build/rules.mk`` is left as it was, and ``make all`` works again once the file is gone (at once, for
``SCENARIO=``).  Every payload below writes a file named ``pwned*`` into make's folder if it ever runs.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from nbtools import ROOT, VENV, fresh_copy, make

from mhanw.pipeline import chapters, names, rules, scenarios

#: File names of scenarios from the bad-input sweep: each would run, or break, something in make.
SWEEP_FILE_NAMES = [
    "bt`id>pwned1`.toml",
    "$(shell touch pwned2).toml",
    "q';touch pwned3;'.toml",
    "...toml",
    "with space.toml",
    "per%cent.toml",
    "co:lon.toml",
    "ha#sh.toml",
]
BAD_FILE_NAMES = [*SWEEP_FILE_NAMES, ".toml", "$$(touch pwned4).toml", "${touch pwned5}.toml"]
GOOD = 'description = "Louder noise"\n[chapters.02_bias_variance_covariance]\nsigma = 0.7\n'


def pwned(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("pwned"))


@pytest.mark.parametrize("file_name", BAD_FILE_NAMES)
def test_the_gate_refuses_each_name_in_one_line_naming_scenario(file_name):
    with pytest.raises(names.BadName) as info:
        names.scenario_argument(f"scenarios/{file_name}")
    message = str(info.value)
    assert message.startswith("SCENARIO=") and "\n" not in message and "letters, digits" in message


@pytest.mark.parametrize(
    "value, problem",
    [
        ("", "make scenario needs SCENARIO=scenarios/NAME.toml (shipped: anisotropic, concat"),
        ("my scenarios/louder.toml", "the path of a scenario may contain only"),
        ("-rf/louder.toml", "not starting with '-'"),
        ("scenarios/line\nbreak.toml", "a scenario's name"),
        ("scenarios/" + "x" * (names.LONGEST + 1) + ".toml", f"at most {names.LONGEST} characters"),
        ("scenarios/écrit.toml", "a scenario's name"),  # letters are ASCII: a name is also a target and a folder
    ],
)
def test_the_gate_names_what_is_wrong_with_a_path(value, problem):
    with pytest.raises(names.BadName, match=re.escape(problem)) as info:
        names.scenario_argument(value)
    assert "\n" not in str(info.value)


def test_plain_names_and_paths_pass_unchanged():
    assert names.scenario_argument("scenarios/heavy-tails.toml") == ("heavy-tails", "scenarios/heavy-tails.toml")
    assert names.scenario_argument("../elsewhere/My_run-2.toml") == ("My_run-2", "../elsewhere/My_run-2.toml")
    assert all(names.is_plain(c.name) for c in chapters.discover(ROOT))  # NN_slug is a plain name too


@pytest.mark.parametrize("file_name", BAD_FILE_NAMES)
def test_a_file_in_scenarios_with_such_a_name_stops_the_graph_naming_it(tmp_path, file_name):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "fine.toml").write_text(GOOD)
    (tmp_path / "scenarios" / file_name).write_text(GOOD)
    with pytest.raises(names.BadName) as info:
        names.shipped_scenarios(tmp_path)
    assert str(info.value).startswith(f"scenarios/{names.shown(file_name)}: a scenario's name")
    with pytest.raises(scenarios.ScenarioError, match="a scenario's name"):
        scenarios.load(tmp_path / "scenarios" / file_name, ROOT)


def test_the_graph_lists_only_checked_names():
    text = rules.generate(ROOT)
    shipped = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
    assert f"SCENARIO_NAMES := {' '.join(shipped)}" in text
    makefile = (ROOT / "Makefile").read_text()
    assert "wildcard scenarios" not in makefile and "wildcard notebooks" not in makefile
    # the Makefile reads SCENARIO only unexpanded, and uses only what the gate printed
    assert makefile.count("$(SCENARIO)") == 0 and "$(value SCENARIO)" in makefile


# ---- through make, in a fresh copy ---------------------------------------------------------------
@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    tree = fresh_copy(tmp_path_factory.mktemp("names") / "repo")
    make(tree, "-n", "all")  # writes build/rules.mk (make remakes its makefiles even in a dry run)
    (tree / "mine").mkdir()
    return tree


def snapshot(tree):
    rules_mk = tree / "build" / "rules.mk"
    return rules_mk.read_bytes(), rules_mk.stat().st_mtime_ns


@pytest.mark.parametrize("file_name", SWEEP_FILE_NAMES)
def test_make_scenario_refuses_such_a_file_before_anything_runs(copy, file_name):
    scenario = copy / "mine" / file_name
    scenario.write_text(GOOD)
    before = snapshot(copy)
    for args in (("-n", "scenario"), ("scenario",)):
        proc = make(copy, *args, f"SCENARIO=mine/{file_name}", check=False)
        assert proc.returncode != 0 and proc.stdout == "", proc.stdout[-2000:]
        errors = [line for line in proc.stderr.splitlines() if "***" in line]
        assert len(errors) == 1 and "*** SCENARIO=" in errors[0], proc.stderr
    if file_name in SWEEP_FILE_NAMES[:2]:  # the same value from the environment, where make would expand it too
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "PYTHONPATH"))}
        proc = subprocess.run(
            ["make", "scenario", "FIDELITY=quick", f"VENV={VENV}"],
            cwd=copy,
            env={**env, "SCENARIO": f"mine/{file_name}"},
            capture_output=True,
            text=True,
        )
        assert proc.returncode != 0 and "*** SCENARIO=" in proc.stderr
    assert pwned(copy) == [] and pwned(copy / "mine") == []
    assert snapshot(copy) == before, "build/rules.mk was rewritten"
    scenario.unlink()


def test_make_all_still_plans_after_refusals(copy):
    proc = make(copy, "-n", "all", check=False)
    assert proc.returncode == 0 and "mhanw.pipeline run 01_attention_is_nadaraya_watson" in proc.stdout
    assert pwned(copy) == []


def test_such_a_file_in_scenarios_stops_make_all_in_one_line_until_it_is_gone(tmp_path):
    tree = fresh_copy(tmp_path / "repo")
    make(tree, "-n", "all")
    before = snapshot(tree)
    for file_name in ("bt`id>pwned1`.toml", "$(shell touch pwned2).toml", "...toml"):
        bad = tree / "scenarios" / file_name
        bad.write_text(GOOD)
        for args in (("-n", "all"), ("all",)):
            proc = make(tree, *args, check=False)
            assert proc.returncode != 0 and "mhanw.pipeline run" not in proc.stdout
            errors = [line for line in proc.stderr.splitlines() if line.startswith("***")]
            assert len(errors) == 1, proc.stderr
            assert errors[0].startswith(f"*** scenarios/{names.shown(file_name)}: a scenario's name"), proc.stderr
        assert pwned(tree) == [] and snapshot(tree) == before, file_name
        bad.unlink()
    assert "mhanw.pipeline run 01_attention_is_nadaraya_watson" in make(tree, "-n", "all").stdout
