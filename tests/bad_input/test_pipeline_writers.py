"""Every subcommand that writes into a folder a user names goes through one guard
(:func:`mhanw.pipeline.runner.run_folder`): a folder a run made (marked) or a new or empty one, under
``build/`` unless named explicitly, never a folder of the default run; a copy never has the same source
and target; a scenario's or a seed's outputs never land in the default run's folders; the reference
ledger is never renewed from a smaller ledger without a reason.  Each refusal is one line naming the
argument, and it comes before anything is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from nbtools import ROOT
from timeouts import within

from mhanw.pipeline import __main__ as cli
from mhanw.pipeline.runner import RUN_MARK, Layout

CHAPTER = "05_decorrelation_optimality"


def _call(monkeypatch, capsys, root: Path, *argv: str) -> tuple[int, str]:
    """``python -m mhanw.pipeline ARGV`` in the repository ``root``: (exit status, what it printed on stderr)."""
    monkeypatch.setattr(cli, "ROOT", root)
    with within(20.0):
        status = cli.main(list(argv))
    return status, capsys.readouterr().err


def _refused(status: int, err: str, *words: str) -> None:
    assert status == 1, err
    line = err.strip()
    assert line.startswith("*** ") and "\n" not in line, err
    for w in words:
        assert w in line, (w, line)


def _run_folder(folder: Path, chapter: str = CHAPTER, figures=()) -> Path:
    """A folder as a run leaves it: marked, with the chapter's results, macros, notebook and figures."""
    for sub in ("results", "generated", "notebooks", "figures"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / RUN_MARK).write_text("a run\n")
    (folder / "results" / f"{chapter}.json").write_text(json.dumps({"chapter": chapter, "claims": []}))
    (folder / "generated" / f"{chapter}.tex").write_text("% macros\n")
    (folder / "notebooks" / f"{chapter}.ipynb").write_text("{}")
    (folder / "results" / f"{chapter}.figures").write_text(" ".join(figures) + "\n")
    for f in figures:
        if "/" not in f:
            (folder / "figures" / f).write_text("figure")
    return folder


@pytest.fixture
def repo(tmp_path):
    """A repository's skeleton: the default run's folders, the committed reference ledgers."""
    root = tmp_path / "repo"
    for sub in ("build/results", "figures", "paper/generated", "reference", "notebooks"):
        (root / sub).mkdir(parents=True)
    for f in ("claims-quick.json", "claims-paper.json"):
        shutil.copyfile(ROOT / "reference" / f, root / "reference" / f)
    return root


# --------------------------------------------------------------------------- copy-records


@pytest.mark.parametrize(
    "target", ["build/scenarios/a/quick", "build/scenarios/a/quick/", "build/scenarios/a/../a/quick"]
)
def test_a_copy_onto_itself_is_refused_and_deletes_nothing(repo, monkeypatch, capsys, target):
    """copy-records with the same source and target deleted that chapter's results and macros."""
    run = _run_folder(repo / "build/scenarios/a/quick")
    status, err = _call(monkeypatch, capsys, repo, "copy-records", CHAPTER, "build/scenarios/a/quick", target)
    _refused(status, err, "one run")
    assert (run / "results" / f"{CHAPTER}.json").is_file() and (run / "generated" / f"{CHAPTER}.tex").is_file()


def test_a_damaged_figure_list_never_copies_beside_the_target(repo, monkeypatch, capsys):
    """A figure list naming ``../...`` overwrote a file beside the target; only the chapter's own
    plain figure names are copied."""
    _run_folder(repo / "build/stability/seed-default", figures=(f"{CHAPTER}.png", f"../../{CHAPTER}.png"))
    (repo / "build/stability" / f"{CHAPTER}.png").write_text("precious")
    (repo / "build/scenarios/b").mkdir(parents=True)
    victim = repo / "build/scenarios" / f"{CHAPTER}.png"
    victim.write_text("precious")
    status, err = _call(
        monkeypatch,
        capsys,
        repo,
        "copy-records",
        CHAPTER,
        "build/stability/seed-default",
        "build/scenarios/b/quick",
        "--full",
    )
    assert status == 0, err
    assert victim.read_text() == "precious"
    assert (repo / "build/scenarios/b/quick/figures" / f"{CHAPTER}.png").read_text() == "figure"
    assert (repo / "build/scenarios/b/quick/results" / f"{CHAPTER}.figures").read_text().split() == [f"{CHAPTER}.png"]


def test_a_copy_into_the_default_run_is_refused(repo, monkeypatch, capsys):
    _run_folder(repo / "build/scenarios/a/quick")
    (repo / "build/results" / f"{CHAPTER}.json").write_text('{"mine": 1}')
    status, err = _call(monkeypatch, capsys, repo, "copy-records", CHAPTER, "build/scenarios/a/quick", "build")
    _refused(status, err, "default run")
    assert (repo / "build/results" / f"{CHAPTER}.json").read_text() == '{"mine": 1}'


def test_a_copy_into_a_folder_no_run_made_is_refused_naming_to(repo, monkeypatch, capsys, tmp_path):
    _run_folder(repo / "build/scenarios/a/quick")
    theirs = tmp_path / "theirs"
    (theirs / "results").mkdir(parents=True)
    (theirs / "results" / f"{CHAPTER}.json").write_text("mine")
    status, err = _call(monkeypatch, capsys, repo, "copy-records", CHAPTER, "build/scenarios/a/quick", str(theirs))
    _refused(status, err, "TO:", RUN_MARK)
    assert (theirs / "results" / f"{CHAPTER}.json").read_text() == "mine"


# --------------------------------------------------------------------------- gather and paper --run


@pytest.mark.parametrize("inside", [True, False])
def test_gather_never_overwrites_a_folder_no_run_made(repo, monkeypatch, capsys, tmp_path, inside):
    """gather DIR overwrote a user's claims.json and run.json in a folder no run made."""
    folder = repo / "build" / "mine" if inside else tmp_path / "mine"
    (folder / "results").mkdir(parents=True)
    for f in ("claims.json", "run.json"):
        (folder / f).write_text("my own notes")
    status, err = _call(monkeypatch, capsys, repo, "gather", str(folder))
    _refused(status, err, "FOLDER:", RUN_MARK)
    assert all((folder / f).read_text() == "my own notes" for f in ("claims.json", "run.json"))


def test_gather_into_a_run_folder_writes_its_ledger(repo, monkeypatch, capsys):
    folder = _run_folder(repo / "build/stability/seed-3")
    status, err = _call(monkeypatch, capsys, repo, "gather", "build/stability/seed-3", "--seed", "3")
    assert status == 0, err
    assert json.loads((folder / "claims.json").read_text()) == []
    assert json.loads((folder / "run.json").read_text())["seed"] == "3"


@pytest.mark.parametrize("folder", ["build", "build/results", "build/paper", "figures", "paper"])
def test_gather_into_the_default_runs_folders_is_refused(repo, monkeypatch, capsys, folder):
    status, err = _call(monkeypatch, capsys, repo, "gather", folder)
    _refused(status, err, "FOLDER:")
    assert not (repo / folder / "claims.json").exists()


def test_paper_of_a_run_never_overwrites_a_folder_no_run_made(repo, monkeypatch, capsys, tmp_path):
    """paper --run DIR overwrote generated/*.tex and claims.json in a folder no run made."""
    folder = tmp_path / "mine"
    (folder / "generated").mkdir(parents=True)
    (folder / "generated" / "claims_table.tex").write_text("my table")
    (folder / "claims.json").write_text("my notes")
    status, err = _call(monkeypatch, capsys, repo, "paper", "--run", str(folder))
    _refused(status, err, "--run:", RUN_MARK)
    assert (folder / "generated" / "claims_table.tex").read_text() == "my table"
    assert (folder / "claims.json").read_text() == "my notes"


def test_paper_with_a_scenario_but_no_run_is_refused(repo, monkeypatch, capsys):
    status, err = _call(monkeypatch, capsys, repo, "paper", "--scenario", "scenarios/concat.toml")
    _refused(status, err, "--scenario:", "--run")


# --------------------------------------------------------------------------- run


@pytest.mark.parametrize(
    "extra",
    [
        ["--scenario", "scenarios/concat.toml"],
        ["--scenario", "scenarios/concat.toml", "--out", "build"],
        ["--seed", "3"],
        ["--seed", "3", "--out", "build"],
    ],
)
def test_a_scenario_or_seed_run_never_publishes_into_the_default_run(monkeypatch, capsys, extra):
    """``run ... --records --scenario S`` without --out published the scenario's numbers as the default
    run's (and make -q then called the default job up to date)."""
    before = (
        {p: p.stat().st_mtime_ns for p in (ROOT / "build" / "results").glob("*")} if (ROOT / "build").is_dir() else {}
    )
    status, err = _call(monkeypatch, capsys, ROOT, "run", "06_optimal_head_size", "--records", *extra)
    _refused(status, err, "--out:", "default run")
    after = (
        {p: p.stat().st_mtime_ns for p in (ROOT / "build" / "results").glob("*")} if (ROOT / "build").is_dir() else {}
    )
    assert after == before


@pytest.mark.parametrize("folder", ["build/results", "build/results/x", "build/logs/y", "build/book"])
def test_a_run_into_a_folder_of_the_default_run_is_refused(folder):
    with pytest.raises(ValueError, match=r"^--out: .*default run"):
        Layout.under(ROOT, folder)


def test_an_unmarked_folder_under_build_with_files_is_refused(tmp_path):
    folder = tmp_path / "build" / "mine"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=rf"^--out: .*no {RUN_MARK}"):
        Layout.under(tmp_path, "build/mine")
    Layout.under(tmp_path, "build/new").claim()
    assert (tmp_path / "build/new" / RUN_MARK).is_file()
    Layout.under(tmp_path, "build/new")


def test_rules_are_written_only_under_build(repo, monkeypatch, capsys):
    (repo / "README.md").write_text("mine")
    status, err = _call(monkeypatch, capsys, repo, "rules", "--out", "README.md")
    _refused(status, err, "--out:", "under build/")
    assert (repo / "README.md").read_text() == "mine"


# --------------------------------------------------------------------------- reference


def _ledger(root: Path, records) -> None:
    (root / "build" / "claims.json").write_text(json.dumps(records))


def test_reference_refuses_an_empty_ledger(repo, monkeypatch, capsys):
    """``reference --fidelity quick`` renewed the committed ledger from an empty build/claims.json."""
    committed = (repo / "reference/claims-quick.json").read_text()
    _ledger(repo, [])
    status, err = _call(monkeypatch, capsys, repo, "reference", "--fidelity", "quick", "--reason", "why not")
    _refused(status, err, "0 records")
    assert (repo / "reference/claims-quick.json").read_text() == committed


def test_reference_refuses_fewer_records_unless_told_why(repo, monkeypatch, capsys):
    records = json.loads((repo / "reference/claims-quick.json").read_text())
    _ledger(repo, records[:-3])
    status, err = _call(monkeypatch, capsys, repo, "reference", "--fidelity", "quick")
    _refused(status, err, f"{len(records) - 3} records", "--reason", records[-1]["claim"])
    assert len(json.loads((repo / "reference/claims-quick.json").read_text())) == len(records)
    status, err = _call(
        monkeypatch, capsys, repo, "reference", "--fidelity", "quick", "--reason", "a claim was retired"
    )
    assert status == 0, err
    assert len(json.loads((repo / "reference/claims-quick.json").read_text())) == len(records) - 3


def test_reference_refuses_a_ledger_of_another_fidelity(repo, monkeypatch, capsys):
    records = json.loads((repo / "reference/claims-quick.json").read_text())
    _ledger(repo, records)
    timings = repo / "build/timings/default"
    timings.mkdir(parents=True)
    (timings / f"{records[0]['chapter']}.json").write_text(json.dumps({"run": "default", "fidelity": "quick"}))
    committed = (repo / "reference/claims-paper.json").read_text()
    status, err = _call(monkeypatch, capsys, repo, "reference", "--fidelity", "paper")
    _refused(status, err, "fidelity 'quick'")
    assert (repo / "reference/claims-paper.json").read_text() == committed
