"""The paper's section on changed assumptions and other seeds, and the targets that make it.

Fast tests run the generators on synthetic ledgers (a verdict kept, changed, made
undecided, not checkable, or changed as other seeds alone also change it; a flip
across seeds; a chapter a guarded sentence stops), the script on a folder laid out
as the pipeline lays it out, and `make -n` on a fresh copy: at paper fidelity
`make all` plans every scenario's ledger and every seed's, and the paper's section
is made from them.  Slow ones
reuse the pipeline test's quick build (``quick_build``), reduced to two chapters:
with a one-chapter scenario and one seed, the paper's section runs exactly those
jobs, is then up to date, and re-runs only the scenario's job when its file changes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from nbtools import ROOT, clone_build, fresh_copy, make, planned_jobs

from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED, Ledger, Statistic, Verdict
from mhanw.pipeline import robustness as rr
from mhanw.pipeline import stability

SCENARIO_NAMES = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))


def _records(chapter, verdicts, value=1.0):
    led = Ledger(chapter)
    for i, v in enumerate(verdicts):
        led.add(
            Verdict(
                claim=f"thm-{int(chapter[:2])}.{i}/part",
                verdict=v,
                statement=f"statement {i}",
                criterion="the criterion in words",
                statistics=(Statistic("effect", value + i, 0.125, "%"),),
                conditions="isotropic m" if v == HOLDS_UNDER else "",
            )
        )
    return led.to_list()


DEFAULT = _records("01_a", [HOLDS, HOLDS]) + _records("02_b", [HOLDS, FAILS, HOLDS, FAILS, HOLDS])


def _scenario_run(records, chapters=("02_b",), untouched=("01_a",)):
    return {
        "name": "heavy-tails",
        "description": "Heavy tails",
        "fidelity": "quick",
        "chapters": list(chapters),
        "untouched": list(untouched),
        "parameters": {c: {"inputs": "student-t:3"} for c in chapters},
        "records": records,
    }


def _stab(default, seeds):
    return {
        "seeds": list(seeds),
        "fidelity": "quick",
        "default_fidelity": "paper",
        "claims": stability.compare(default, seeds),
    }


# --------------------------------------------------------------------------- generators


def test_classify_tells_a_change_of_assumption_from_a_change_of_seed():
    d = {"claim": "c", "verdict": HOLDS}
    seeds_same = {"seeds": {"1": HOLDS, "2": HOLDS}}
    seeds_vary = {"seeds": {"1": HOLDS, "2": FAILS}}
    assert rr.classify(d, {"verdict": HOLDS}, seeds_same) == rr.KEPT
    assert rr.classify(d, {"verdict": FAILS}, seeds_same) == rr.CHANGED
    assert rr.classify(d, {"verdict": FAILS}, seeds_vary) == rr.AS_SEEDS
    assert rr.classify(d, {"verdict": UNDECIDED}, seeds_same) == rr.UNDECIDED_NOW
    assert rr.classify(d, {"verdict": NOT_CHECKABLE}, seeds_same) == rr.NOT_CHECKABLE_NOW
    assert rr.classify(d, {"verdict": FAILS}, None) == rr.UNATTRIBUTED


def test_stability_counts_equal_compatible_and_flips():
    default = _records("02_b", [HOLDS, FAILS, HOLDS])
    s1 = [dict(r) for r in default]
    s2 = [dict(r) for r in default]
    s2[0]["verdict"] = UNDECIDED  # compatible, not equal
    s2[1]["verdict"] = HOLDS  # the opposite answer: a flip
    s3 = s2[:2]  # no record of the third claim
    rows = stability.compare(default, {"1": s1, "2": s2, "3": s3})
    got = [(r["equal"], r["compatible"], r["flips"], r["runs"]) for r in rows]
    assert got == [(1, 3, 0, 3), (1, 1, 2, 3), (2, 2, 0, 2)]


def test_scenarios_section_states_each_change_with_its_numbers():
    # default: holds, fails, holds, fails, holds.  Under the scenario: kept; changed (both seeds keep
    # "fails"); undecided; "holds" as seed 2 also gives; not checkable.
    mine = _records("02_b", [HOLDS, HOLDS, UNDECIDED, HOLDS, NOT_CHECKABLE], value=7.0)
    seeds = {"1": DEFAULT, "2": [dict(r, verdict=HOLDS) if r["claim"] == "thm-2.3/part" else r for r in DEFAULT]}
    tex = rr.scenarios_latex(DEFAULT, [_scenario_run(mine)], _stab(DEFAULT, seeds), "paper")
    assert "\\section{Beyond the stated assumptions}" in tex and "No scenario has been run" not in tex
    assert "Changed: inputs = student-t:3 in chapter 2; chapter 1 takes none of its parameters" in tex
    assert (
        "Of the five claims of these chapters (run at quick fidelity), one keeps the default run's verdict; "
        "one changes with the assumption, one becomes undecided at this size, one is not checkable under it "
        "and one differs as other seeds alone also make it differ"
    ) in tex
    row = next(line for line in tex.splitlines() if line.startswith("Theorem 2.1: part"))
    assert "\\emph{fails as stated} (effect = 2.00 $\\pm$ 0.12 \\%)" in row  # the default run's record
    assert "\\emph{holds} (effect = 8.00 $\\pm$ 0.12 \\%)" in row  # the scenario's
    assert "same under both seeds: \\emph{changed by the assumption}" in row
    nc = next(line for line in tex.splitlines() if line.startswith("Theorem 2.4: part"))
    assert "not checkable} (effect = 11.0" in nc
    assert all(ord(c) < 128 for c in tex)


def test_scenarios_section_without_seeds_says_differences_are_unattributed():
    mine = _records("02_b", [FAILS, FAILS, HOLDS, FAILS, HOLDS])
    tex = rr.scenarios_latex(DEFAULT, [_scenario_run(mine)], None, "paper")
    assert "one differs (no seed run tells whether the seed alone would do so)" in tex
    assert "no such run is part of this build" in tex


def test_scenario_keeping_every_verdict_says_so_without_a_table():
    tex = rr.scenarios_latex(
        DEFAULT, [_scenario_run(_records("02_b", [HOLDS, FAILS, HOLDS, FAILS, HOLDS]))], None, "paper"
    )
    assert "All five claims of these chapters (run at quick fidelity) keep their verdict." in tex
    assert "longtable" not in tex


def test_stability_section_reports_flips_as_such():
    default = _records("02_b", [HOLDS, FAILS])
    flipped = [dict(default[0]), dict(default[1], verdict=HOLDS)]
    und = [dict(default[0], verdict=UNDECIDED), dict(default[1])]
    tex = rr.stability_latex(_stab(default, {"1": default, "2": flipped, "3": und}), "paper")
    assert "for one more claim some seeds are undecided at this size" in tex
    assert "one of two claims flips (some seed gives the opposite decision at the same size)" in tex
    assert "fails as stated under the default seed, holds under seed 2" in tex
    assert "\\textbf{flips}: same under two of three seeds; holds under one" in tex
    assert "None of the two claims receive" not in tex and "seeds (1-3)" in tex
    assert "all at the same quick sizes" in tex and "a difference between them is the seed's alone" in tex


def test_fallbacks_say_how_to_make_the_ledgers():
    assert "No scenario has been run for this build" in rr.scenarios_latex(DEFAULT, [], None, "paper")
    assert "it has not been run for this build" in rr.stability_latex(None, "paper")


def _lay_out(folder, default, scenario_records, seeds):
    """Ledgers where the pipeline writes them: the default seed's, a scenario's, build/stability.json."""
    ref = folder / "build" / "stability" / "seed-default"
    ref.mkdir(parents=True)
    (ref / "claims.json").write_text(json.dumps(default))
    sdir = folder / "build" / "scenarios" / "heavy-tails" / "ledger"
    sdir.mkdir(parents=True)
    (sdir / "claims.json").write_text(json.dumps(scenario_records))
    (sdir / "run.json").write_text(
        json.dumps(
            {
                "scenario": "heavy-tails",
                "description": "Heavy tails",
                "fidelity": "quick",
                "chapters": ["02_b"],
                "parameters": {"01_a": {}, "02_b": {"inputs": "student-t:3"}},
            }
        )
    )
    (folder / "build" / "stability.json").write_text(json.dumps(_stab(default, seeds)))


def test_the_command_reports_from_the_ledgers_on_disk(tmp_path):
    mine = _records("02_b", [HOLDS, HOLDS, HOLDS, FAILS, HOLDS])
    _lay_out(tmp_path, DEFAULT, mine, {"1": DEFAULT})
    out = subprocess.run(
        [sys.executable, "-m", "mhanw.pipeline", "robustness", "--stability", "heavy-tails"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    scen = (tmp_path / "paper" / "generated" / "scenarios.tex").read_text()
    assert "Scenario \\texttt{heavy-tails}: Heavy tails." in scen and "one changes with the assumption" in scen
    stab = (tmp_path / "paper" / "generated" / "stability.tex").read_text()
    assert "All seven claims receive the default seed's verdict under the other seed; no claim flips" in stab


# --------------------------------------------------------------------------- make plans


def _plan(copy, *args, fidelity="paper"):
    return make(copy, "-n", "all", *args, fidelity=fidelity).stdout


def test_make_all_at_paper_fidelity_plans_the_scenarios_and_the_seeds_at_equal_size(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    plan = _plan(copy)
    jobs = planned_jobs(plan)
    chapters = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.md"))
    for seed in ("default", "1", "2", "3", "4", "5"):
        assert sorted(c for c, f in jobs if f == f"build/stability/seed-{seed}") == chapters, seed
    assert re.search(r"run \S+ --records --seed default", plan)  # the default seed at the seeds' size
    for name in SCENARIO_NAMES:
        assert any(f == f"build/scenarios/{name}/ledger" for _, f in jobs), name
        assert f"gather build/scenarios/{name}/ledger --scenario scenarios/{name}.toml" in plan
    assert "mhanw.pipeline stability 1 2 3 4 5" in plan
    report = next(line for line in plan.splitlines() if "mhanw.pipeline robustness" in line)
    assert report.endswith("--stability " + " ".join(SCENARIO_NAMES))
    assert plan.index("mhanw.pipeline robustness") < plan.index("mhanw.pipeline paper")
    assert not (copy / "build" / "scenarios").exists() and not (copy / "build" / "stability").exists()


def test_a_quick_build_runs_them_only_when_asked_and_reuses_its_own_run_as_the_default_seed(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    plan = _plan(copy, fidelity="quick")
    assert all(f == "default" for _, f in planned_jobs(plan))
    assert "mhanw.pipeline robustness" in plan and "--stability" not in plan
    plan = _plan(copy, "ROBUSTNESS=yes", "STABILITY_SEEDS=7", fidelity="quick")
    runs = {f for _, f in planned_jobs(plan)}
    assert "build/stability/seed-7" in runs and "build/stability/seed-1" not in runs
    assert "build/stability/seed-default" not in runs and "copy-records" in plan


@pytest.mark.parametrize(
    "args, message",
    [
        (["ROBUSTNESS=maybe"], "ROBUSTNESS must be one word, 'yes' or 'no'"),
        (["STABILITY_SEEDS=1 x"], "STABILITY_SEEDS must be whole numbers"),
        (["SCENARIO_FIDELITY=slow"], "SCENARIO_FIDELITY must be one word, 'quick' or 'paper'"),
    ],
)
def test_bad_settings_stop_make_with_one_line(args, message):
    out = make(ROOT, "-n", "stability", *args, check=False)
    assert out.returncode != 0 and message in out.stderr and out.stdout == ""


# --------------------------------------------------------------------------- slow: with the quick build


@pytest.mark.slow
def test_the_section_runs_exactly_its_jobs_then_is_up_to_date(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    keep = ("02_bias_variance_covariance", "07_structured_weighting")
    for f in (copy / "notebooks").glob("[0-9][0-9]_*.md"):
        if f.stem not in keep:
            f.unlink()
    for f in (copy / "scenarios").glob("*.toml"):
        f.unlink()
    (copy / "scenarios" / "louder.toml").write_text(
        f'description = "Louder noise"\n[chapters.{keep[0]}]\nsigma = 0.7\n'
    )
    args = ("ROBUSTNESS=yes", "STABILITY_SEEDS=11")
    target = "paper/generated/scenarios.tex"
    log = make(copy, target, *args).stdout
    ran = sorted(re.findall(r"^    (\S+) \[([^\]]+)\] done", log, flags=re.M))
    assert ran == [(keep[0], "scenarios/louder/ledger"), (keep[0], "stability/seed-11"), (keep[1], "stability/seed-11")]
    assert json.loads((copy / "build/scenarios/louder/ledger/run.json").read_text())["chapters"] == [keep[0]]
    scen = (copy / target).read_text()
    assert "Louder noise" in scen and "Changed: sigma = 0.7 in chapter 2; chapter 7 takes none" in scen
    stab = (copy / "paper/generated/stability.tex").read_text()
    assert "under one other seed (11)" in stab and "tab:stability" in stab
    assert make(copy, "-q", target, *args, check=False).returncode == 0
    (copy / "scenarios" / "louder.toml").write_text(
        f'description = "Louder noise"\n[chapters.{keep[0]}]\nsigma = 0.8\n'
    )
    assert planned_jobs(make(copy, "-n", target, *args).stdout) == [(keep[0], "build/scenarios/louder/ledger")]


def test_a_chapter_stopped_by_a_guard_is_reported_not_compared():
    run = dict(
        _scenario_run(_records("01_a", [FAILS, HOLDS]), chapters=("01_a", "02_b"), untouched=()),
        stopped={"02_b": "the text says A; the numbers say B"},
    )
    tex = rr.scenarios_latex(DEFAULT, [run], None, "paper")
    assert (
        "Chapter 2 stops under this scenario on a sentence of its text (the text says A; the numbers say B), "
        "so its five claims are not compared."
    ) in tex
    assert "Of the two claims of these chapters (run at quick fidelity), one keeps" in tex
    stab = dict(_stab(DEFAULT, {"1": DEFAULT}), stopped={"1": {"02_b": "the text says A; the numbers say B"}})
    assert "Under seed 1, chapter 2 stops on a sentence of its text" in rr.stability_latex(stab, "paper")
