"""The pipeline end to end, in fresh copies of the repository.

The session's quick build (``quick_build``: `make all FIDELITY=quick` in a fresh
copy, sharing this virtual environment): the PDF holds numbers chapter 01 wrote;
a second `make all` does nothing, fast; what make re-runs after an edit (a
chapter, a library module it imports or not, a deleted figure) is exactly the
jobs the edit touches, in the default run and in every seed and scenario run; a
failing chapter stops the build with its traceback and leaves nothing of its own
behind; the copies import their own `src/`; the two modes of a job (papermill, and
records only) give the same records.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbtools import NOTEBOOKS, ROOT, clone_build, fresh_copy, make, planned_jobs

from mhanw.pipeline import chapters, deps

pytestmark = pytest.mark.slow

ALL = sorted(p.stem for p in NOTEBOOKS)


def _chapter_file(copy: Path, name: str, code: str, parameters: str | None = None, figures=()) -> Path:
    """``notebooks/NAME.md`` in ``copy``: chapter 01's parameters cell (or ``parameters``), then ``code``."""
    params = (
        parameters
        if parameters is not None
        else chapters.parameters_source(copy / "notebooks" / "01_attention_is_nadaraya_watson.md")
    )
    path = copy / "notebooks" / f"{name}.md"
    path.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n"
        f"mhanw:\n  figures: [{', '.join(figures)}]\n---\n\n# A probe\n\n"
        f"```{{code-cell}}\n:tags: [parameters]\n\n{params.strip()}\n```\n\n"
        f"```{{code-cell}}\n{code.strip()}\n```\n"
    )
    return path


def test_pdf_exists_and_holds_numbers_from_chapter_01(quick_build):
    pdf = quick_build / "build" / "paper" / "main.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    macros = (quick_build / "paper" / "generated" / "01_attention_is_nadaraya_watson.tex").read_text()
    est = re.search(r"\\mhvalue\{01\.consistency\.estimate\}\{\\ensuremath\{([0-9.]+) \\pm ([0-9.]+)\}\}", macros)
    assert est, "chapter 01 did not write its value 01.consistency.estimate"
    assert est.group(1) in text and est.group(2) in text
    results = json.loads((quick_build / "build" / "results" / "01_attention_is_nadaraya_watson.json").read_text())
    assert results["fidelity"] == "quick"


def test_second_make_all_does_nothing_and_is_fast(quick_build):
    assert make(quick_build, "-q", "all", check=False).returncode == 0, "make -q says something is out of date"
    start = time.monotonic()
    out = make(quick_build, "all")
    assert time.monotonic() - start < 2.0
    assert "mhanw.pipeline" not in out.stdout and "done in" not in out.stdout


def test_the_build_writes_no_tracked_file(quick_build):
    changed = [
        rel
        for rel in subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        if (quick_build / rel).is_file() and (quick_build / rel).read_bytes() != (ROOT / rel).read_bytes()
    ]
    assert not changed, changed


def test_the_makefile_is_short_and_runs_every_core():
    text = (ROOT / "Makefile").read_text()
    assert len(text.splitlines()) <= 165
    jobs = next(line for line in text.splitlines() if "--jobs=" in line)
    # every core, whatever OMP_NUM_THREADS says (nproc reads it; the pipeline sets it to 1 for its jobs)
    assert "--jobs=$(shell env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc" in jobs


def test_scripts_hold_only_what_runs_before_python():
    assert sorted(p.name for p in (ROOT / "scripts").iterdir() if p.is_file()) == [
        "apt_install.sh",
        "ensure_chromium.sh",
        "ensure_tex.sh",
        "find_python.sh",
        "lock.sh",
        "make_venv.sh",
        "uv.sh",
    ]


def _importers(module: str) -> set[str]:
    """The chapters whose dependencies (found in the code) include ``module``."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        lib = deps.Library()
        return {p.stem for p in NOTEBOOKS if module in deps.notebook_dependencies(p, lib)[0]}
    finally:
        os.chdir(here)


def test_editing_one_chapter_reruns_it_and_the_paper_only(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    os.utime(copy / "notebooks" / "01_attention_is_nadaraya_watson.md", None)
    plan = make(copy, "-n", "all").stdout
    assert planned_jobs(plan) == [("01_attention_is_nadaraya_watson", "default")]
    assert "mhanw.pipeline paper" in plan and "mhanw.pipeline book" in plan


def test_editing_a_library_module_reruns_its_importers_only(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    assert _importers("mhanw.scaling") == {"06_optimal_head_size"}
    os.utime(copy / "src" / "mhanw" / "scaling.py", None)
    plan = make(copy, "-n", "all").stdout
    assert planned_jobs(plan) == [("06_optimal_head_size", "default")] and "mhanw.pipeline paper" in plan
    # a module every chapter imports through others re-runs every chapter
    os.utime(copy / "src" / "mhanw" / "infra" / "validate.py", None)
    assert sorted(c for c, _ in planned_jobs(make(copy, "-n", "all").stdout)) == ALL
    # in every run: the seeds' and the scenarios' jobs of the chapters that import it, and no other
    os.utime(copy / "src" / "mhanw" / "infra" / "validate.py", (1, 1))
    plan = make(
        copy, "-n", "build/stability/seed-3/claims.json", "build/scenarios/heavy-tails/ledger/claims.json"
    ).stdout
    jobs = planned_jobs(plan)
    assert {c for c, f in jobs if f == "build/stability/seed-3"} == set(ALL)


def test_a_module_no_chapter_imports_reruns_nothing(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    assert not _importers("mhanw.bench")
    os.utime(copy / "src" / "mhanw" / "bench.py", None)
    assert planned_jobs(make(copy, "-n", "all").stdout) == []


def test_a_deleted_figure_reruns_its_chapter_and_the_paper_only(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    name = "02_bias_variance_covariance"
    listed = (copy / "build" / "results" / f"{name}.figures").read_text().split()
    assert sorted(listed) == sorted(p.name for p in (copy / "figures").glob(f"{name}*"))
    figure = copy / "figures" / f"{name}.png"
    figure.unlink()
    assert make(copy, "-q", "all", check=False).returncode == 1
    assert planned_jobs(make(copy, "-n", "all").stdout) == [(name, "default")]
    log = make(copy, "all").stdout
    assert re.findall(r"^    (\S+) done in", log, flags=re.M) == [name]
    assert figure.read_bytes() == (quick_build / "figures" / figure.name).read_bytes()
    assert make(copy, "-q", "all", check=False).returncode == 0


def test_a_fidelity_change_reruns_every_chapter_and_a_dry_run_runs_none(quick_build, tmp_path):
    copy = clone_build(quick_build, tmp_path / "copy")
    results = {p.name: p.stat().st_mtime_ns for p in (copy / "build" / "results").glob("*.json")}
    plan = make(copy, "-n", "all", fidelity="paper").stdout
    assert sorted(c for c, f in planned_jobs(plan) if f == "default") == ALL
    assert {p.name: p.stat().st_mtime_ns for p in (copy / "build" / "results").glob("*.json")} == results
    assert (copy / "build" / "fidelity").read_text().strip() == "quick"
    assert make(copy, "-q", "all", check=False).returncode == 0


def test_a_failing_chapter_stops_the_build_with_its_traceback_and_leaves_nothing(tmp_path):
    copy = fresh_copy(tmp_path)
    _chapter_file(
        copy,
        "98_always_fails",
        figures=["98_always_fails"],
        code=(
            "import matplotlib.pyplot as plt\nfrom mhanw.infra import figures\nfig, ax = plt.subplots()\n"
            "figures.save(fig, '98_always_fails', figures_dir)\n"
            "raise RuntimeError('deliberate failure for the pipeline test')\n"
        ),
    )
    (copy / "figures" / "98_always_fails_old.png").write_bytes(b"stale")  # from an earlier, successful run
    proc = make(copy, "build/results/98_always_fails.json", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "98_always_fails (run default) failed" in log
    assert "RuntimeError" in log and "deliberate failure for the pipeline test" in log and "Traceback" in log
    assert "build/logs/default/98_always_fails.log" in log
    assert not list((copy / "figures").glob("98_always_fails*"))
    for rel in (
        "paper/generated/98_always_fails.tex",
        "build/notebooks/98_always_fails.ipynb",
        "build/results/98_always_fails.json",
    ):
        assert not (copy / rel).exists(), rel


def test_make_help_lists_the_targets():
    out = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for target in ("all", "test", "test-fast", "clean", "notebooks", "paper", "scenario", "book", "lab", "reference"):
        assert re.search(rf"^\s+{target}\s", out, flags=re.M), target


def test_clean_removes_generated_files_only(tmp_path):
    copy = fresh_copy(tmp_path)
    (copy / "build" / "x").mkdir(parents=True)
    (copy / "figures" / "01_x.png").write_bytes(b"x")
    (copy / "paper" / "generated" / "01_x.tex").write_text("x")
    sources = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file() and "build" not in p.parts)
    make(copy, "clean")
    left = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
    assert not (copy / "build").exists()
    assert set(left) == {s for s in sources if s.name not in ("01_x.png", "01_x.tex")}


def test_the_environment_is_recorded_beside_the_pdf_and_in_its_metadata(quick_build):
    import importlib.metadata as md
    import platform

    env = json.loads((quick_build / "build" / "paper" / "environment.json").read_text())
    assert env["python"] == {"implementation": "CPython", "version": platform.python_version()}
    assert env["packages"] == {n: md.version(n) for n in ("numpy", "scipy", "sympy", "matplotlib")}
    info = subprocess.run(
        ["pdfinfo", str(quick_build / "build/paper/main.pdf")], capture_output=True, text=True, check=True
    ).stdout
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", info, flags=re.M))
    assert fields["Title"].startswith("Multi-Head Attention as Ensemble Nadaraya")
    assert fields["Author"] == "The mhanw developers"
    assert f"CPython {platform.python_version()}" in fields["Creator"]


def test_a_build_leaves_no_temporary_files(quick_build):
    left = [p for p in quick_build.rglob("*") if p.is_file() and (p.name.endswith(".tmp") or "stage" in p.parts)]
    assert not left, left


def test_every_job_reports_one_line_and_its_cpu_seconds(quick_build):
    timings = json.loads((quick_build / "build" / "timings.json").read_text())
    default = [j for j in timings["jobs"] if j["run"] == "default"]
    assert sorted(j["chapter"] for j in default) == ALL
    assert all(j["cpu_s"] > 0 and j["mode"] == "full" and j["fidelity"] == "quick" for j in default)
    for j in default:
        assert (quick_build / "build" / "logs" / "default" / f"{j['chapter']}.log").is_file()


def test_a_copy_imports_its_own_library(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    _chapter_file(
        copy,
        "97_probe",
        code=(
            "import json, mhanw, mhanw.infra.texout\nfrom pathlib import Path\n"
            "Path(macros_path).write_text('% ' + mhanw.__file__ + '\\n% ' + mhanw.infra.texout.__file__ + '\\n')\n"
            "Path(results_path).write_text(json.dumps({'claims': []}))\n"
        ),
    )
    make(copy, "build/results/97_probe.json")
    files = re.findall(r"^% (.*)$", (copy / "paper" / "generated" / "97_probe.tex").read_text(), flags=re.M)
    assert files == [str(copy / "src" / "mhanw" / "__init__.py"), str(copy / "src" / "mhanw" / "infra" / "texout.py")]
    assert make(copy, "-q", "build/results/97_probe.json", check=False).returncode == 0


def test_a_chapter_without_a_parameter_the_pipeline_sets_stops_before_running(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    _chapter_file(
        copy,
        "96_misspelt",
        "raise SystemExit('the chapter ran')\n",
        parameters='fidelty = "paper"\nseed = 1\nfigures_dir = "."\nmacros_path = "x.tex"\nresults_path = "x.json"\n',
    )
    proc = make(copy, "build/results/96_misspelt.json", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "96_misspelt: its parameters cell does not declare fidelity" in log and "declares fidelty, seed" in log
    assert "the chapter ran" not in log
    assert not (copy / "paper" / "generated" / "96_misspelt.tex").exists()


def test_records_mode_gives_the_records_and_macros_of_the_full_run(quick_build, tmp_path):
    """The seeds and scenario ledgers run chapters without papermill and without rendering figures: for
    three chapters of different kinds, their records and macros equal the papermill run's."""
    copy = clone_build(quick_build, tmp_path / "copy")
    for name in ("02_bias_variance_covariance", "05_decorrelation_optimality", "08_ensembles_across_domains"):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "mhanw.pipeline",
                "run",
                name,
                "--records",
                "--fidelity",
                "quick",
                "--out",
                "build/records-check",
            ],
            cwd=copy,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(copy / "src")},
        )
        assert run.returncode == 0, run.stderr
        full = json.loads((copy / "build" / "results" / f"{name}.json").read_text())
        mine = json.loads((copy / "build" / "records-check" / "results" / f"{name}.json").read_text())
        assert mine["claims"] == full["claims"], name
        assert (copy / "build" / "records-check" / "generated" / f"{name}.tex").read_text() == (
            copy / "paper" / "generated" / f"{name}.tex"
        ).read_text(), name
        assert not (copy / "build" / "records-check" / "figures").exists()


def test_a_seed_that_is_not_a_number_is_refused_in_one_line(quick_build):
    out = make(quick_build, "-s", "build/stability/seed-x/results/02_bias_variance_covariance.json", check=False)
    assert out.returncode != 0 and "seed: expected a whole number (digits 0-9) or 'default', got 'x'" in out.stderr


def test_a_run_outside_build_keeps_its_logs_timings_and_staging_in_its_own_folder(tmp_path):
    """A run into a folder outside build/ writes nothing in the repository, and its staged outputs are
    moved within that folder's file system (a rename across file systems fails); a run inside build/
    keeps them under build/{logs,timings,stage}/LABEL."""
    from mhanw.pipeline.runner import Layout

    out = Layout.under(ROOT, tmp_path / "elsewhere")
    paths = [out.notebooks, out.results, out.figures, out.macros, out.logs, out.stage, out.timings]
    assert all(p.is_relative_to(tmp_path / "elsewhere") for p in paths), paths
    inside = Layout.under(ROOT, Path("build/scenarios/x"))
    assert inside.label == "scenarios/x"
    assert (
        inside.logs == ROOT / "build" / "logs" / "scenarios/x"
        and inside.timings == ROOT / "build" / "timings" / "scenarios/x"
    )
    assert Layout.default(ROOT).timings == ROOT / "build" / "timings" / "default"


def test_a_run_folder_is_refused_where_a_run_would_write_or_remove_what_it_did_not_make(tmp_path):
    from mhanw.pipeline.runner import RUN_MARK, Layout

    theirs = tmp_path / "theirs"
    (theirs / "results").mkdir(parents=True)
    (theirs / "results" / "notes.txt").write_text("mine")
    (tmp_path / "a-file").write_text("x")
    for folder, says in [
        ("", "expected a folder path"),
        (" ", "expected a folder path"),
        ("/", "holds the repository"),
        (".", "holds the repository"),
        ("..", "holds the repository"),
        ("figures", "not under build/"),
        ("src/mhanw", "not under build/"),
        ("build", "build/ itself"),
        (str(tmp_path / "a-file"), "is not a folder"),
        (str(theirs), f"no {RUN_MARK}"),
    ]:
        with pytest.raises(ValueError, match=rf"^--out: .*{re.escape(says)}"):
            Layout.under(ROOT, folder)
    assert (theirs / "results" / "notes.txt").read_text() == "mine"
    new = Layout.under(ROOT, tmp_path / "new")
    new.claim()
    assert (tmp_path / "new" / RUN_MARK).is_file()
    Layout.under(ROOT, tmp_path / "new")  # a folder a run made may be run into again
    Layout.under(ROOT, tmp_path / "empty-but-there")


def test_a_damaged_figure_list_never_reaches_outside_the_figures_folder(tmp_path):
    """The list of a chapter's figures names what the next run removes: only plain names of the chapter's
    own figures are taken from it (a '../../file' in it removed a file outside the run's folder)."""
    from mhanw.pipeline.runner import Layout, _forget

    layout = Layout.under(ROOT, tmp_path / "run")
    layout.claim()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    name = "08_ensembles_across_domains"
    layout.results.mkdir(parents=True)
    layout.figures.mkdir(parents=True)
    (layout.results / f"{name}.figures").write_text(
        f"../../victim.txt {name}.png /etc/hostname {name}_x/../../victim.txt\n"
    )
    (layout.figures / f"{name}.png").write_text("old figure")
    _forget(layout, name)
    assert victim.read_text() == "precious" and not (layout.figures / f"{name}.png").exists()
