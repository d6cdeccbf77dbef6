"""The pipeline end to end, in fresh copies of the repository.

`make all FIDELITY=quick` in two fresh copies (sharing this checkout's virtual
environment, so the test does not reinstall it): the PDF exists and its text
holds numbers that notebook 01 wrote; the two builds give byte-identical
figures and PDF; a second `make all` does nothing; touching one notebook
re-runs that notebook and the paper only; a failing notebook stops the build
with its name and traceback and leaves none of its outputs behind.  And what
make rebuilds after a change: a notebook re-runs when a library module it
imports (directly or not) changes, or when one of its figures has gone, and not
otherwise; a dry run writes nothing; the copies import their own `src/`.
"""

from __future__ import annotations

import json
import os
import sys
import re
import subprocess
import time

import pytest

from nbtools import NOTEBOOKS, ROOT, VENV, clone_build, fresh_copy, make, planned_notebooks

pytestmark = pytest.mark.slow


def test_pdf_exists_and_holds_numbers_from_notebook_01(builds):
    copy = builds[0]
    pdf = copy / "build" / "paper" / "main.pdf"
    assert pdf.is_file()
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    macros = (copy / "paper" / "generated" / "01_attention_is_nadaraya_watson.tex").read_text()
    est = re.search(r"\\AttnNWEstimateAtNMax\}\{\\ensuremath\{([0-9.]+) \\pm ([0-9.]+)\}\}", macros)
    assert est, "notebook 01 did not write \\AttnNWEstimateAtNMax"
    assert est.group(1) in text and est.group(2) in text
    results = json.loads((copy / "build" / "results" / "01_attention_is_nadaraya_watson.json").read_text())
    assert results["fidelity"] == "quick"


def test_two_clean_builds_are_byte_identical(builds):
    a, b = builds
    figs_a = sorted(p.name for p in (a / "figures").iterdir() if p.suffix in (".pdf", ".png"))
    figs_b = sorted(p.name for p in (b / "figures").iterdir() if p.suffix in (".pdf", ".png"))
    assert figs_a and figs_a == figs_b
    for name in figs_a:
        assert (a / "figures" / name).read_bytes() == (b / "figures" / name).read_bytes(), name
    assert (a / "build/paper/main.pdf").read_bytes() == (b / "build/paper/main.pdf").read_bytes()


def test_second_make_all_does_nothing_and_is_fast(builds):
    copy = builds[0]
    assert make(copy, "-q", "all", check=False).returncode == 0, "make -q says something is out of date"
    start = time.monotonic()
    out = make(copy, "all")
    assert time.monotonic() - start < 2.0
    assert "==>" not in out.stdout + out.stderr


def test_editing_one_notebook_reruns_it_and_the_paper_only(builds):
    copy = builds[1]
    nb = copy / "notebooks" / "01_attention_is_nadaraya_watson.ipynb"
    os.utime(nb, None)
    plan = make(copy, "-n", "all").stdout
    assert "run_notebook.sh 01_attention_is_nadaraya_watson" in plan
    assert len(re.findall(r"run_notebook\.sh", plan)) == 1
    assert "latexmk" in plan


def test_a_failing_notebook_stops_the_build_and_leaves_nothing(tmp_path):
    copy = fresh_copy(tmp_path)
    src = copy / "notebooks" / "01_attention_is_nadaraya_watson.ipynb"
    nb = json.loads(src.read_text())
    bad = copy / "notebooks" / "98_always_fails.ipynb"
    nb["metadata"]["mhanw"] = {"figures": ["98_always_fails"]}
    nb["cells"] = [nb["cells"][1]] + [  # the parameters cell, then a figure, then an error
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "id": "x1",
         "source": "import matplotlib.pyplot as plt\nfrom mhanw.infra import figures\nfig, ax = plt.subplots()\n"
                   "figures.save(fig, '98_always_fails', figures_dir)\n"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "id": "x2",
         "source": "raise RuntimeError('deliberate failure for the pipeline test')\n"},
    ]
    bad.write_text(json.dumps(nb))
    # a stale output from an earlier successful run must not survive either
    (copy / "figures" / "98_always_fails_old.png").write_bytes(b"stale")
    proc = make(copy, "paper/generated/98_always_fails.tex", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "98_always_fails" in log and "FAILED" in log
    assert "RuntimeError" in log and "deliberate failure for the pipeline test" in log
    assert not list((copy / "figures").glob("98_always_fails*"))
    assert not (copy / "paper" / "generated" / "98_always_fails.tex").exists()
    assert not (copy / "build" / "notebooks" / "98_always_fails.ipynb").exists()


def test_make_help_lists_the_targets():
    out = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for target in ("all", "test", "clean", "notebooks", "paper"):
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
    assert all((copy / "notebooks" / p.name).exists() for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_the_environment_is_recorded_in_results_and_in_the_pdf_metadata(builds):
    import importlib.metadata as md
    import platform

    copy = builds[0]
    env = json.loads((copy / "build" / "results" / "environment.json").read_text())
    assert env["python"] == {"implementation": "CPython", "version": platform.python_version()}
    assert env["packages"] == {n: md.version(n) for n in ("numpy", "scipy", "sympy", "matplotlib")}
    info = subprocess.run(["pdfinfo", str(copy / "build/paper/main.pdf")], capture_output=True, text=True,
                          check=True).stdout
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", info, flags=re.M))
    assert fields["Title"].startswith("Multi-Head Attention as Ensemble Nadaraya")
    assert "reproducible companion" in fields["Title"] and "\\" not in fields["Title"]
    assert fields["Author"] == "The mhanw developers"
    assert "arXiv:2605.20271" in fields["Subject"] and "Nadaraya-Watson" in fields["Keywords"]
    assert f"CPython {platform.python_version()}" in fields["Creator"]
    assert f"numpy {md.version('numpy')}" in fields["Creator"]
    # the dates are the fixed build date (SOURCE_DATE_EPOCH), not the time of the build
    for key in ("CreationDate", "ModDate"):
        if key in fields:
            assert "2026" in fields[key] and "May 21" in fields[key], fields[key]


def test_a_build_leaves_no_temporary_files(builds):
    for copy in builds:
        left = [p for p in copy.rglob("*") if p.is_file() and (p.name.endswith(".tmp") or "stage" in p.parts)]
        assert not left, left


def test_a_dry_run_writes_nothing_and_a_fidelity_change_reruns_every_notebook(builds, tmp_path):
    copy = clone_build(builds[0], tmp_path / "copy")

    def snapshot():
        return {p.relative_to(copy): (p.stat().st_mtime_ns, p.read_bytes())
                for p in copy.rglob("*") if p.is_file()}

    assert make(copy, "-q", "all", check=False).returncode == 0, "the clone must start up to date"
    before = snapshot()
    plan = make(copy, "-n", "all", fidelity="paper").stdout
    assert sorted(planned_notebooks(plan)) == [p.stem for p in NOTEBOOKS]
    assert make(copy, "-q", "all", fidelity="paper", check=False).returncode == 1
    assert snapshot() == before, "a dry run wrote files"
    assert (copy / "build" / "fidelity").read_text().strip() == "quick"
    assert make(copy, "-q", "all", check=False).returncode == 0


def _importers(copy, module: str) -> set[str]:
    """The notebooks whose dependencies (scripts/nbdeps.py --explain) include ``module``."""
    out = set()
    for nb in NOTEBOOKS:
        mods = subprocess.run([sys.executable, "scripts/nbdeps.py", "--explain", f"notebooks/{nb.name}"], cwd=copy,
                              capture_output=True, text=True, check=True).stdout.split()
        if module in mods:
            out.add(nb.stem)
    return out


def test_editing_a_library_module_reruns_the_notebooks_that_import_it_only(builds, tmp_path):
    copy = clone_build(builds[0], tmp_path / "copy")
    assert make(copy, "-q", "all", check=False).returncode == 0, "the clone must start up to date"
    importers = _importers(copy, "mhanw.scaling")
    # scaling is imported by notebook 06 (directly, and through derivation), by no other
    assert importers == {"06_optimal_head_size"}
    os.utime(copy / "src" / "mhanw" / "scaling.py", None)
    plan = make(copy, "-n", "all").stdout
    assert sorted(planned_notebooks(plan)) == sorted(importers)
    assert "latexmk" in plan
    # a module every notebook imports through others (infra/validate) re-runs every notebook
    os.utime(copy / "src" / "mhanw" / "infra" / "validate.py", None)
    assert sorted(planned_notebooks(make(copy, "-n", "all").stdout)) == [p.stem for p in NOTEBOOKS]


def test_a_module_no_notebook_imports_reruns_nothing(builds, tmp_path):
    copy = clone_build(builds[0], tmp_path / "copy")
    assert make(copy, "-q", "all", check=False).returncode == 0, "the clone must start up to date"
    assert not _importers(copy, "mhanw.bench")
    os.utime(copy / "src" / "mhanw" / "bench.py", None)
    assert make(copy, "-q", "all", check=False).returncode == 0
    assert planned_notebooks(make(copy, "-n", "all").stdout) == []


def test_a_deleted_figure_reruns_its_notebook_and_the_paper_only(builds, tmp_path):
    copy = clone_build(builds[0], tmp_path / "copy")
    assert make(copy, "-q", "all", check=False).returncode == 0, "the clone must start up to date"
    name = "01_attention_is_nadaraya_watson"
    listed = (copy / "build" / "figures" / f"{name}.list").read_text().split()
    assert sorted(listed) == sorted(p.name for p in (copy / "figures").glob(f"{name}*"))
    figure = copy / "figures" / f"{name}.png"
    figure.unlink()
    assert make(copy, "-q", "all", check=False).returncode == 1
    plan = make(copy, "-n", "all").stdout
    assert planned_notebooks(plan) == [name] and "latexmk" in plan
    log = make(copy, "all").stdout
    assert re.findall(r"==> notebook (\S+)", log) == [name]
    assert "==> paper" in log
    assert figure.read_bytes() == (builds[0] / "figures" / figure.name).read_bytes()
    assert make(copy, "-q", "all", check=False).returncode == 0


def _probe_notebook(copy, name: str, code: str, parameters: str | None = None) -> None:
    """notebooks/<name>.ipynb in ``copy``: notebook 01's parameters cell (or ``parameters``), then ``code``."""
    nb = json.loads((copy / "notebooks" / "01_attention_is_nadaraya_watson.ipynb").read_text())
    params = nb["cells"][1]
    assert "parameters" in params["metadata"]["tags"]
    if parameters is not None:
        params = {**params, "source": parameters}
    nb["metadata"]["mhanw"] = {"figures": []}
    nb["cells"] = [params, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                            "id": "probe", "source": code}]
    (copy / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb))


def test_a_copy_imports_its_own_library(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    _probe_notebook(copy, "97_probe", (
        "import mhanw, mhanw.infra.texout\n"
        "from pathlib import Path\n"
        "Path(macros_path).write_text('% ' + mhanw.__file__ + '\\n% ' + mhanw.infra.texout.__file__ + '\\n')\n"))
    make(copy, "paper/generated/97_probe.tex")
    files = re.findall(r"^% (.*)$", (copy / "paper" / "generated" / "97_probe.tex").read_text(), flags=re.M)
    assert files == [str(copy / "src" / "mhanw" / "__init__.py"), str(copy / "src" / "mhanw" / "infra" / "texout.py")]
    assert (copy / "build" / "figures" / "97_probe.list").read_text().split() == []
    assert make(copy, "-q", "paper/generated/97_probe.tex", check=False).returncode == 0


def test_a_notebook_without_a_parameter_the_pipeline_injects_stops_before_running(tmp_path):
    copy = fresh_copy(tmp_path / "copy")
    _probe_notebook(copy, "96_misspelt", "raise SystemExit('the notebook ran')\n",
                    parameters='fidelty = "paper"\nseed = 1\nfigures_dir = "."\nmacros_path = "x.tex"\n'
                               'results_path = "x.json"\n')
    proc = make(copy, "paper/generated/96_misspelt.tex", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "96_misspelt FAILED" in log
    assert "unknown parameter(s) fidelity" in log and "declares fidelty, seed" in log
    assert "the notebook ran" not in log and "==> notebook" not in log
    assert not (copy / "paper" / "generated" / "96_misspelt.tex").exists()
