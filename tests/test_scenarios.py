"""Every shipped scenario runs at quick fidelity and gives its ledger; `make scenario` gives chapters and a PDF.

In a copy of the session's quick build (``quick_build``): for each shipped
scenario, the ledger the paper's section reads (the chapters it changes, records
only) holds every record of those chapters with a verdict of the vocabulary, no
chapter stopped, and the scenario's values reached the chapters.  One scenario is
also run the way a reader runs it, `make scenario SCENARIO=...`: every chapter
executed under it, its PDF saying under the abstract what was changed, and the
verdicts compared with the committed quick reference.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess

import pytest
from nbtools import NOTEBOOKS, ROOT, clone_build, make

from mhanw.infra.verdicts import VOCABULARY
from mhanw.pipeline import scenarios
from mhanw.pipeline.ledger import tex_escape as ledger_tex_escape

SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))


def _injected(notebook) -> dict:
    """The parameters papermill injected into an executed chapter (its ``injected-parameters`` cell)."""
    cells = json.loads(notebook.read_text())["cells"]
    cell = next((c for c in cells if "injected-parameters" in c["metadata"].get("tags", [])), None)
    assert cell is not None, f"{notebook.name}: no injected-parameters cell"
    tree = ast.parse("".join(cell["source"]))
    return {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}


@pytest.fixture(scope="module")
def shared(quick_build, tmp_path_factory):
    return clone_build(quick_build, tmp_path_factory.mktemp("scenarios") / "copy")


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_shipped_scenario_gives_the_ledger_of_the_chapters_it_changes(path, shared):
    spec = scenarios.load(path, ROOT)
    assert spec.changed, f"{path.name} changes no chapter"
    make(shared, f"build/scenarios/{spec.name}/ledger/claims.json")
    folder = shared / "build" / "scenarios" / spec.name / "ledger"
    run = json.loads((folder / "run.json").read_text())
    assert run["fidelity"] == "quick" and run["chapters"] == spec.changed
    assert run["stopped"] == {}, f"chapters stopped on a guarded sentence: {run['stopped']}"
    ledger = json.loads((folder / "claims.json").read_text())
    default = [r for r in json.loads((shared / "build" / "claims.json").read_text()) if r["chapter"] in spec.changed]
    assert [(r["chapter"], r["claim"]) for r in ledger] == [(r["chapter"], r["claim"]) for r in default]
    assert not [(r["claim"], r["verdict"]) for r in ledger if r["verdict"] not in VOCABULARY]
    for name in spec.changed:
        recorded = json.loads((folder / "results" / f"{name}.json").read_text()).get("parameters")
        wanted = spec.params_for(name)
        if recorded is not None:
            assert {k: recorded.get(k) for k in wanted} == wanted, name


@pytest.mark.slow
def test_make_scenario_runs_what_it_changes_reuses_the_rest_and_builds_its_paper(shared):
    """`make scenario` the way a reader runs it, with a scenario of one chapter: that chapter runs under it,
    the others are the default run's (the same job: copied, not run again), and its paper says what changed."""
    (shared / "scenarios" / "louder.toml").write_text(
        'description = "Louder noise"\n[chapters.02_bias_variance_covariance]\nsigma = 0.7\n'
    )
    out = make(shared, "scenario", "SCENARIO=scenarios/louder.toml")
    assert re.findall(r"^    (\S+) \[scenarios/louder/quick\] done", out.stdout, flags=re.M) == [
        "02_bias_variance_covariance"
    ]
    copied = re.findall(r"^    (\S+) \[scenarios/louder/quick\] copied", out.stdout, flags=re.M)
    assert sorted(copied) == sorted(p.stem for p in NOTEBOOKS if p.stem != "02_bias_variance_covariance")
    assert "==> scenario louder" in out.stdout and "reference/claims-quick.json" in out.stdout
    assert "(no record)" not in out.stdout, "a chapter the scenario leaves alone was compared"
    run = shared / "build" / "scenarios" / "louder" / "quick"
    assert _injected(run / "notebooks" / "02_bias_variance_covariance.ipynb")["sigma"] == 0.7
    for name in copied:
        assert (run / "notebooks" / f"{name}.ipynb").read_bytes() == (
            shared / "build" / "notebooks" / f"{name}.ipynb"
        ).read_bytes(), name
    text = " ".join(
        subprocess.run(
            ["pdftotext", "-l", "2", str(run / "paper" / "main.pdf"), "-"], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert "Built under the scenario louder" in text and "sigma = 0.7" in text
    assert not (shared / "paper" / "generated" / "scenario_note.tex").exists(), "the default run's macros changed"
    assert make(shared, "-q", "scenario", "SCENARIO=scenarios/louder.toml", check=False).returncode != 0  # phony


def test_the_note_of_a_scenario_names_its_parameters_by_chapter(tmp_path):
    """The paragraph under a scenario paper's abstract: each changed parameter once, chapters grouped."""
    p = tmp_path / "my_scenario.toml"
    p.write_text(
        'description = "Heavy & wide"\n[all]\ninputs = "student-t:3"\n'
        '[chapters.01_attention_is_nadaraya_watson]\nneff_inputs = "student-t:3"\n'
    )
    spec = scenarios.load(p, ROOT)
    tex = scenarios.note_tex(spec)
    assert r"\newcommand{\ScenarioNote}" in tex and r"\texttt{my\_scenario}" in tex and r"Heavy \& wide" in tex
    changed = sorted(int(n[:2]) for n, q in spec.params.items() if q.get("inputs"))
    assert tex.count("inputs = 'student-t:3'") == 2  # chapters grouped: one line for all that take `inputs`
    runs = []  # runs of consecutive chapter numbers, "2--8, 10" when chapter 9 takes no `inputs`
    for k in changed:
        if runs and k == runs[-1][1] + 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    assert len(changed) >= 7 and len(runs) <= len(changed) - 5
    assert "chapters " + ", ".join(f"{a}--{b}" if b > a else f"{a}" for a, b in runs) in tex
    assert r"\item chapter 1: \texttt{neff\_inputs = 'student-t:3'}" in tex


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.stem)
def test_the_note_of_every_shipped_scenario_is_written(path):
    """A list value (concat's ``rules``) is printed in the note like any other value."""
    spec = scenarios.load(path, ROOT)
    tex = scenarios.note_tex(spec)
    for p in spec.params.values():
        for k, v in p.items():
            assert ledger_tex_escape(f"{k} = {v!r}") in tex, (path.name, k)


def test_make_scenario_with_a_bad_value_stops_at_once_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[all]\nsigma = -0.5\n")
    out = make(ROOT, "-n", "scenario", f"SCENARIO={bad}", check=False)
    assert out.returncode != 0 and out.stdout == ""
    assert "sigma: expected a real number in [0, 100]" in out.stderr


def test_make_scenario_without_scenario_says_what_to_pass():
    out = make(ROOT, "-n", "scenario", check=False)
    assert out.returncode != 0 and "make scenario needs SCENARIO=scenarios/NAME.toml" in out.stderr
