"""Every shipped scenario runs end to end at quick fidelity: its ledger, its executed chapters and its PDF.

``scripts/scenario.py run`` (what `make scenario` calls) runs one scenario per
test, two chapters at a time, in a copy seeded with the pipeline test's quick
build (``builds``): the chapters that receive none of the scenario's parameters
run exactly as in that build (a scenario equal to the defaults gives the
default numbers and verdicts: tests/test_claims_ledger.py), so their outputs
are kept and only the chapters the scenario changes, the ledger and the paper
are made again.  Each test checks that every chapter finished (none stopped on
a guarded sentence), that the ledger has every record of every chapter with a
verdict from the vocabulary, that the PDF has pages, and that the scenario's
values reached the chapters (the executed chapter's injected parameters and,
where a chapter records them, its results' ``parameters``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from nbtools import ROOT, VENV, clone_build

sys.path.insert(0, str(ROOT / "scripts"))

import scenario  # noqa: E402
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED  # noqa: E402

SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
VOCABULARY = {HOLDS, HOLDS_UNDER, FAILS, UNDECIDED, NOT_CHECKABLE}


def _injected(notebook) -> dict:
    """The parameters papermill injected into an executed chapter (its ``injected-parameters`` cell)."""
    cells = json.loads(notebook.read_text())["cells"]
    cell = next((c for c in cells if "injected-parameters" in c["metadata"].get("tags", [])), None)
    assert cell is not None, f"{notebook.name}: no injected-parameters cell"
    tree = ast.parse("".join(cell["source"]))
    return {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}


def _seed_tree(built, tree, changed):
    """``tree``: a copy of the quick build without the outputs of the ``changed`` chapters (so make re-runs
    exactly those); the scenario file it will receive is no newer than the build's outputs."""
    clone_build(built, tree)
    for name in changed:
        for rel in (f"paper/generated/{name}.tex", f"build/notebooks/{name}.ipynb", f"build/results/{name}.json"):
            (tree / rel).unlink(missing_ok=True)


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_shipped_scenario_runs_and_gives_its_ledger_chapters_and_pdf(path, builds, tmp_path):
    built = builds[0]
    spec = scenario.load(path)
    chapters = list(spec["declared"])
    changed = scenario.changed_chapters(spec)
    assert changed, f"{path.name} changes no chapter"
    out = tmp_path / path.stem
    _seed_tree(built, out / "tree", changed)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "scenario.py"), "run", str(path), "--fidelity", "quick",
         "--jobs", "2", "--out", str(out), "--venv", str(VENV), "--compare-with", str(built / "build" / "claims.json")],
        cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
    print(proc.stdout[proc.stdout.find(f"    scenario {path.stem}:"):])  # the verdicts that differ (pytest -s / -rP)
    ran = [line.split()[2] for line in proc.stdout.splitlines() if line.startswith("==> notebook ")]
    assert sorted(ran) == sorted(changed)  # the others were reused, not run again

    run = json.loads((out / "run.json").read_text())
    assert run["fidelity"] == "quick" and run["chapters"] == chapters
    assert run["stopped"] == {}, f"chapters stopped on a guarded sentence: {run['stopped']}"

    # the ledger: every record of every chapter (as in the default build), each with a verdict of the vocabulary
    ledger = json.loads((out / "claims.json").read_text())
    default = json.loads((built / "build" / "claims.json").read_text())
    assert [(r["chapter"], r["claim"]) for r in ledger] == [(r["chapter"], r["claim"]) for r in default]
    bad = [(r["claim"], r["verdict"]) for r in ledger if r["verdict"] not in VOCABULARY]
    assert not bad, f"verdicts outside the vocabulary: {bad}"

    # the executed chapters and the paper
    for name in chapters:
        assert (out / "notebooks" / f"{name}.ipynb").is_file(), f"no executed chapter {name}"
        assert (out / "generated" / f"{name}.tex").is_file(), f"no macros of {name}"
    pdf = out / "main.pdf"
    assert pdf.is_file()
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(next(line.split()[1] for line in info.splitlines() if line.startswith("Pages:")))
    assert pages > 1
    # the paper says, under its abstract, that it was built under this scenario and with what
    text = " ".join(subprocess.run(["pdftotext", "-l", "2", str(pdf), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())
    assert f"Built under the scenario {path.stem}" in text
    for name in chapters:
        for key in scenario.params_for(spec, name):
            # pdftotext reads the typewriter underscore (a rule in OT1 fonts) as a space
            assert key.replace("_", " ") in text.replace("_", " "), f"the note under the abstract does not name {key}"

    # the scenario's values reached the chapters it changes, and only those
    for name in chapters:
        wanted = scenario.params_for(spec, name)
        injected = _injected(out / "notebooks" / f"{name}.ipynb")
        assert {k: injected.get(k) for k in wanted} == wanted, name
        assert set(injected) <= set(wanted) | set(scenario.RESERVED), f"{name}: injected {sorted(injected)}"
        recorded = json.loads((out / "results" / f"{name}.json").read_text()).get("parameters")
        if recorded is not None:
            assert {k: recorded.get(k) for k in wanted} == wanted, name


def test_the_note_of_a_scenario_names_its_parameters_by_chapter(tmp_path):
    """The paragraph under a scenario paper's abstract: each changed parameter once, chapters grouped."""
    p = tmp_path / "s.toml"
    p.write_text('description = "Heavy & wide"\n[all]\ninputs = "student-t:3"\n'
                 '[chapters.01_attention_is_nadaraya_watson]\nneff_inputs = "student-t:3"\n')
    spec = scenario.load(p)
    tex = scenario.scenario_note_tex("my_scenario", spec)
    assert r"\newcommand{\ScenarioNote}" in tex and r"\texttt{my\_scenario}" in tex and r"Heavy \& wide" in tex
    changed = [n for n in spec["declared"] if scenario.params_for(spec, n).get("inputs")]
    assert tex.count("inputs = 'student-t:3'") == 2  # chapters grouped: one line for all that take `inputs`
    assert ("chapters " + f"{int(changed[0][:2])}--{int(changed[-1][:2])}") in tex
    assert r"\item chapter 1: \texttt{neff\_inputs = 'student-t:3'}" in tex
