"""The committed chapters are sources: MyST markdown, one literal parameters cell, declared figures."""

import pytest
from nbtools import NOTEBOOKS, ROOT, notebook_meta

from mhanw.pipeline import chapters

IDS = [p.stem for p in NOTEBOOKS]


def test_there_are_chapters_and_no_ipynb_sources():
    assert NOTEBOOKS, "no notebooks/NN_*.md found"
    assert not list((ROOT / "notebooks").glob("*.ipynb")), "chapters are stored as MyST markdown, not .ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_chapter_is_myst_markdown_with_a_kernel(path):
    nb = chapters.read(path)
    assert nb.metadata["jupytext"]["text_representation"]["format_name"] == "myst"
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_the_only_parameters_cell_and_holds_literals(path):
    declared = chapters.declared(path)  # raises ChapterError when it is not so
    assert {"fidelity", "seed", "figures_dir", "macros_path", "results_path"} <= set(declared)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_declares_its_figures(path):
    figs = notebook_meta(path).get("figures")
    assert figs, f"{path.name}: the front matter's mhanw.figures must list the figures it writes"
    assert all(f == path.stem or f.startswith(path.stem + "_") for f in figs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_opens_with_the_claim_and_closes_with_a_verdict(path):
    nb = chapters.read(path)
    assert nb.cells[0].cell_type == "markdown"
    text = "".join(c.source for c in nb.cells if c.cell_type == "markdown").lower()
    assert "claim" in text and ("what we found" in text or "verdict" in text)


def test_a_parameters_cell_that_is_not_literal_is_refused(tmp_path):
    bad = tmp_path / "01_x.md"
    bad.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n# x\n\n"
        "```{code-cell}\n:tags: [parameters]\n\nfidelity = 'paper'\nseed = 1 + 1\n```\n"
    )
    with pytest.raises(chapters.ChapterError, match="seed: its default is not a literal"):
        chapters.declared(bad)
    bad.write_text(bad.read_text().replace(":tags: [parameters]\n", ""))
    with pytest.raises(chapters.ChapterError, match="exactly one code cell tagged 'parameters'"):
        chapters.declared(bad)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_parameters_cell_declares_exactly_the_chapter_modules_parameters(path):
    """One declaration of each parameter's meaning (the module's ``PARAMETERS``) and one of its default
    (the notebook's parameters cell): the two name the same set, and every default passes its check."""
    import importlib

    from mhanw.infra.params import check_parameters

    module = importlib.import_module(f"mhanw.chapters.ch{path.stem}")
    declared = chapters.declared(path)
    assert set(declared) == set(module.PARAMETERS), (
        f"only in the cell: {sorted(set(declared) - set(module.PARAMETERS))}; "
        f"only in the module: {sorted(set(module.PARAMETERS) - set(declared))}"
    )
    check_parameters(declared, module.PARAMETERS, getattr(module, "CONSTRAINTS", ()))


def test_every_error_bar_is_drawn_by_the_one_convention():
    """Error bars and bands reach :data:`mhanw.infra.figures.ERROR_BAR_SE` standard errors, drawn by
    ``figures.errorbar(ax, x, mean, se)`` or sized by ``figures.half_width(se)``: no chapter multiplies a
    standard error by a number of its own for a bar, so a caption's convention is the one drawn."""
    import re

    sources = [*NOTEBOOKS, *sorted((ROOT / "src" / "mhanw" / "chapters").glob("ch[0-9][0-9]_*.py"))]
    bad = []
    for path in sources:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"yerr\s*=\s*(?!figures\.half_width\()", line):
                bad.append(f"{path.name}:{i}: yerr not sized by figures.half_width: {line.strip()[:120]}")
            call = re.search(r"figures\.errorbar\((.*)", line)
            if call and re.search(r"(?<![\w.])(?:2|2e\d|200)\s*\*\s*\w", call.group(1)):
                bad.append(f"{path.name}:{i}: figures.errorbar given a multiple of the s.e.: {line.strip()[:120]}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_a_chapter_imports_its_module_under_one_name(path):
    """Every chapter calls its module ``chapter`` (``from mhanw.chapters import chNN_slug as chapter``)."""
    import re

    code = "\n".join(c.source for c in chapters.read(path).cells if c.cell_type == "code")
    module = f"ch{path.stem[:2]}_{path.stem[3:]}"
    imports = re.findall(rf"^from mhanw\.chapters import {module}(?: as (\w+))?$", code, flags=re.M)
    assert imports == ["chapter"], f"{path.name}: imports {module} as {imports or 'nothing'}"


#: Tags that keep a code cell's source off the page (myst-nb): a name such a cell defines is unseen.
_UNSEEN = {"remove-input", "remove-cell"}


def _names(source: str) -> tuple[set, set]:
    """The names a cell's source defines (assignments, imports, functions, their arguments) and uses."""
    import ast

    tree = ast.parse(source)
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    return defined, used


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_name_a_shown_cell_uses_is_defined_where_a_reader_sees_it(path):
    """A reader of the book sees the parameters cell and every code cell not tagged remove-input (a folded
    cell can be unfolded); a name such a cell uses must not come only from a cell whose source is removed."""
    import builtins

    seen, unseen, bad = set(dir(builtins)), set(), []
    for i, cell in enumerate(chapters.read(path).cells):
        if cell.cell_type != "code":
            continue
        defined, used = _names(cell.source)
        if set(cell.metadata.get("tags", [])) & _UNSEEN:
            unseen |= defined - seen
            continue
        hidden = sorted((used - defined - seen) & unseen)
        if hidden:
            bad.append(f"cell {i}: {', '.join(hidden)}")
        seen |= defined
    assert not bad, f"{path.name}: shown cells use names defined only in removed cells: {'; '.join(bad)}"
