"""mhanw.pipeline.deps and .rules: the library files a chapter depends on, derived from its imports.

On a small package laid out in subpackages (the shapes the library may take),
and on the real notebooks, checked against what Python itself imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from nbtools import NOTEBOOKS, ROOT

from mhanw.pipeline import chapters, rules
from mhanw.pipeline import deps as D


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def notebook(root: Path, name: str, *cells: str) -> Path:
    """``notebooks/NAME.md``: a parameters cell, then ``cells``, then prose that looks like an import."""
    body = "".join(f"```{{code-cell}}\n{c}\n```\n\n" for c in cells)
    path = root / "notebooks" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n# x\n\n"
        "```{code-cell}\n:tags: [parameters]\n\nfidelity = 'paper'\n```\n\n" + body + "import mhanw.nothing\n"
    )
    return path


def deps(root: Path, nb: Path) -> set[str]:
    """The library files chapter ``nb`` depends on (paths relative to ``root``)."""
    here = os.getcwd()
    os.chdir(root)
    try:
        return {p.as_posix() for p in D.notebook_dependencies(nb, D.Library())[1]}
    finally:
        os.chdir(here)


@pytest.fixture
def tree(tmp_path):
    write(
        tmp_path / "src" / "mhanw",
        {
            "__init__.py": '"""the package"""\n',
            "core.py": "import numpy as np\n",
            "unused.py": "from . import core\n",
            "infra/__init__.py": "from .io import save\n",
            "infra/io.py": "from mhanw import core\n",
            "infra/style.json": "{}\n",
            "chapters/__init__.py": "",
            "chapters/c1.py": """\
            from ..infra import io
            def later():
                from . import c2          # imported inside a function: still a dependency
            """,
            "chapters/c2.py": "import importlib\nimportlib.import_module('mhanw.extra.deep')\n",
            "extra/deep.py": "x = 1\n",  # a namespace package: no __init__.py
            "texts/sentences.json": "{}\n",  # package data of mhanw itself
            "chapters/__pycache__/c1.cpython-311.pyc": "",
        },
    )
    return tmp_path


def test_direct_transitive_relative_and_literal_imports(tree):
    nb = notebook(tree, "01_a", "%matplotlib inline\nfrom mhanw.chapters import c1\n!ls\n")
    assert deps(tree, nb) == {
        "src/mhanw/__init__.py",
        "src/mhanw/texts/sentences.json",  # every import runs __init__
        "src/mhanw/chapters/__init__.py",
        "src/mhanw/chapters/c1.py",
        "src/mhanw/chapters/c2.py",  # from . import c2, in a function
        "src/mhanw/infra/__init__.py",
        "src/mhanw/infra/io.py",  # from ..infra import io
        "src/mhanw/infra/style.json",  # data of the infra package
        "src/mhanw/core.py",  # io: from mhanw import core
        "src/mhanw/extra/deep.py",  # import_module('mhanw.extra.deep')
    }


def test_import_forms_of_the_notebook(tree):
    assert deps(tree, notebook(tree, "02_b", "import mhanw.core as c\n")) == {
        "src/mhanw/__init__.py",
        "src/mhanw/texts/sentences.json",
        "src/mhanw/core.py",
    }
    assert deps(tree, notebook(tree, "03_c", "from mhanw import infra\n")) == {
        "src/mhanw/__init__.py",
        "src/mhanw/texts/sentences.json",
        "src/mhanw/infra/__init__.py",
        "src/mhanw/infra/io.py",
        "src/mhanw/infra/style.json",
        "src/mhanw/core.py",
    }
    assert deps(tree, notebook(tree, "04_d", "import numpy\n")) == set()


def test_a_cell_that_does_not_parse_means_the_whole_library(tree):
    nb = notebook(tree, "05_e", "from mhanw import core\n", "def broken(:\n")
    here = os.getcwd()
    os.chdir(tree)
    try:
        every = {p.as_posix() for p in D.library_files()}
    finally:
        os.chdir(here)
    assert deps(tree, nb) == every
    assert "src/mhanw/chapters/__pycache__/c1.cpython-311.pyc" not in every


def test_the_rules_give_every_run_of_a_chapter_its_library_files_and_every_file_an_empty_rule(tree):
    notebook(tree, "06_f", "import mhanw.core\n")
    (tree / "scenarios").mkdir()
    here = os.getcwd()
    os.chdir(tree)
    try:
        text = rules.generate(tree)
    finally:
        os.chdir(here)
    assert "LIB_06_f := src/mhanw/__init__.py src/mhanw/core.py src/mhanw/texts/sentences.json" in text
    for target in (
        "build/results/06_f.json:",
        "build/stability/seed-%/results/06_f.json:",
        "build/scenarios/%/ledger/results/06_f.json:",
    ):
        assert f"\n{target} notebooks/06_f.md $(LIB_06_f)" in text, target
    assert "\nsrc/mhanw/core.py:\n" in text and "\nsrc/mhanw/__init__.py:\n" in text
    # make scenario: a chapter the scenario changes runs under it; one it leaves alone is the default run's
    (tree / "scenarios" / "t.toml").write_text('description = "nothing"\n')
    os.chdir(tree)
    try:
        alone = rules.scenario_rules(tree, tree / "scenarios" / "t.toml")
    finally:
        os.chdir(here)
    assert "$(SCENARIO_RUN)/results/06_f.json: build/results/06_f.json" in alone
    assert "copy-records 06_f build $(SCENARIO_RUN) --full" in alone


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")  # the notebooks' escapes
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_static_dependencies_cover_what_python_imports(path):
    """Every mhanw module that the notebook's import statements load is among its dependencies."""
    import ast

    code = "\n".join(chapters.code_sources(path))
    imports = [ast.unparse(n) for n in ast.walk(ast.parse(code)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    probe = (
        "\n".join(imports)
        + "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'mhanw')))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT / "notebooks",
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg"},
        ).stdout.split()
    )
    static = set(
        subprocess.run(
            [sys.executable, "-m", "mhanw.pipeline", "deps", path.stem],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    assert "mhanw" in loaded and loaded <= static, loaded - static


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_declared_figures_are_the_ones_the_chapter_saves(nb):
    """The figures a chapter declares (metadata ``mhanw.figures``: make's targets and the book's
    figure list) are those its code saves, in the notebook or through its chapter module and that module's
    companion ``chNN_figures.py``; read from the source, so a renamed or removed figure is caught without
    running the chapter."""
    import re

    from nbtools import ROOT

    folder = ROOT / "src" / "mhanw" / "chapters"
    modules = [folder / f"ch{nb.stem}.py", folder / f"ch{nb.stem[:2]}_figures.py"]
    code = "\n".join(chapters.code_sources(nb) + [m.read_text(encoding="utf-8") for m in modules if m.is_file()])
    saved = re.findall(r"figures\.save\([^\"']{0,300}?[\"']([0-9]{2}_[a-z0-9_]+)[\"']", code)  # the figure's name
    assert saved, f"{nb.name}: no figures.save(fig, 'NN_slug', ...) with a literal name"
    assert len(saved) == len(set(saved)), f"{nb.name}: a figure saved twice: {saved}"
    assert sorted(chapters.read(nb).metadata["mhanw"]["figures"]) == sorted(saved)
