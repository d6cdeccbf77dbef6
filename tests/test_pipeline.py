"""The pipeline end to end, in fresh copies of the repository.

`make all FIDELITY=quick` in two fresh copies (sharing this checkout's virtual
environment, so the test does not reinstall it): the PDF exists and its text
holds numbers that notebook 01 wrote; the two builds give byte-identical
figures and PDF; a second `make all` does nothing; touching one notebook
re-runs that notebook and the paper only; a failing notebook stops the build
with its name and traceback and leaves none of its outputs behind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from nbtools import ROOT, fresh_copy, make

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
         "source": "import matplotlib.pyplot as plt\nfrom mhanw import figures\nfig, ax = plt.subplots()\n"
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
