"""Every notebook runs at fidelity="quick" and writes what it declares.

The notebooks are executed by the pipeline in a fresh copy of the repository
(the session fixture ``quick_build`` of conftest.py, a temporary folder), exactly
as `make all FIDELITY=quick` runs them; here we check each one's outputs.
"""

import json
import re

import pytest
from nbtools import NOTEBOOKS, notebook_meta

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_ran_quick_and_wrote_its_outputs(path, quick_build):
    copy, name = quick_build, path.stem
    declared = notebook_meta(path)["figures"]
    for fig in declared:
        for ext in ("pdf", "png"):
            f = copy / "figures" / f"{fig}.{ext}"
            assert f.is_file() and f.stat().st_size > 1000, f"{name} did not write {f.name}"
    written = {p.stem for p in (copy / "figures").glob(f"{name}*.pdf")}
    assert written == set(declared), f"{name} wrote {written}, declared {declared}"
    text = (copy / "paper" / "generated" / f"{name}.tex").read_text()
    bodies = re.findall(r"^\\mhvalue\{[^}]+\}\{(.*)\}$", text, flags=re.M)  # the contract's paper values
    assert bodies, f"{name} wrote no paper values"
    assert sum(bool(re.search(r"\d", b)) for b in bodies) >= 3, f"{name}: fewer than three values hold numbers"
    executed = json.loads((copy / "build" / "notebooks" / f"{name}.ipynb").read_text())
    params = [c for c in executed["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    assert params and 'fidelity = "quick"' in "".join(params[0]["source"])
    assert (copy / "build" / "results" / f"{name}.json").is_file()
    timing = json.loads((copy / "build" / "timings" / "default" / f"{name}.json").read_text())
    assert timing["fidelity"] == "quick" and timing["mode"] == "full" and timing["cpu_s"] > 0
