"""The committed notebooks are sources: no outputs, one literal parameters cell."""

import ast
import json

import pytest

from nbtools import NOTEBOOKS, notebook_meta

IDS = [p.stem for p in NOTEBOOKS]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_outputs_or_execution_counts(path):
    nb = json.loads(path.read_text())
    dirty = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_the_only_parameters_cell_and_holds_literals(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    tagged = [i for i, c in enumerate(code) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert tagged == [0], f"{path.name}: expected exactly one 'parameters' cell, the first code cell; got {tagged}"
    tree = ast.parse("".join(code[0]["source"]))
    names = set()
    for node in tree.body:
        assert isinstance(node, ast.Assign), f"{path.name}: parameters cell holds something other than assignments"
        ast.literal_eval(node.value)  # raises if not a literal
        names.update(t.id for t in node.targets)
    assert {"fidelity", "seed", "figures_dir", "macros_path", "results_path"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_declares_its_figures(path):
    figs = notebook_meta(path).get("figures")
    assert figs, f"{path.name}: metadata.mhanw.figures must list the figures it writes"
    assert all(f == path.stem or f.startswith(path.stem + "_") for f in figs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_opens_with_the_claim_and_closes_with_a_verdict(path):
    nb = json.loads(path.read_text())
    assert nb["cells"][0]["cell_type"] == "markdown"
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown").lower()
    assert "claim" in text and ("what we found" in text or "verdict" in text)
