"""Every notebook runs at fidelity="quick" and writes what it declares."""

import re

import papermill as pm
import pytest

from nbtools import NOTEBOOKS, ROOT, notebook_meta

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_quick_and_writes_its_outputs(path, tmp_path):
    name = path.stem
    figures_dir, macros, results = tmp_path / "figures", tmp_path / f"{name}.tex", tmp_path / f"{name}.json"
    pm.execute_notebook(
        str(path),
        str(tmp_path / f"{name}.ipynb"),
        parameters=dict(fidelity="quick", figures_dir=str(figures_dir), macros_path=str(macros), results_path=str(results)),
        kernel_name="python3",
        cwd=str(ROOT / "notebooks"),
        progress_bar=False,
    )
    for fig in notebook_meta(path)["figures"]:
        for ext in ("pdf", "png"):
            f = figures_dir / f"{fig}.{ext}"
            assert f.is_file() and f.stat().st_size > 1000, f"{name} did not write {f.name}"
    unexpected = {p.stem for p in figures_dir.iterdir()} - set(notebook_meta(path)["figures"])
    assert not unexpected, f"{name} wrote undeclared figures {unexpected}"
    text = macros.read_text()
    bodies = re.findall(r"\\newcommand\{\\[A-Za-z]+\}\{(.*)\}$", text, flags=re.M)
    assert bodies, f"{name} wrote no macros"
    assert sum(bool(re.search(r"\d", b)) for b in bodies) >= 3, f"{name}: fewer than three macros hold numbers"
    assert results.is_file()
