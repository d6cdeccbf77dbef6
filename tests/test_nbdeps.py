"""scripts/nbdeps.py: the library files a notebook depends on, derived from its imports.

On a small package laid out in subpackages (the shapes the library may take),
and on the real notebooks, checked against what Python itself imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nbtools import NOTEBOOKS, ROOT

SCRIPT = ROOT / "scripts" / "nbdeps.py"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def notebook(root: Path, name: str, *cells: str) -> Path:
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c}
                    for c in cells] + [{"cell_type": "markdown", "metadata": {}, "source": "import mhanw.nothing"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = root / "notebooks" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    return path


def nbdeps(root: Path, *args: str) -> str:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def deps(root: Path, nb: Path) -> set[str]:
    """The files of the make rule for ``nb``."""
    rule = nbdeps(root, f"notebooks/{nb.name}")
    head = rule.split("\n\n")[0]
    return {w for w in head.replace("\\", " ").split() if w.startswith("src/")}


@pytest.fixture
def tree(tmp_path):
    write(tmp_path / "src" / "mhanw", {
        "__init__.py": '"""the package"""\n',
        "core.py": "import numpy as np\n",
        "unused.py": "from . import core\n",
        "infra/__init__.py": "from .io import save\n",
        "infra/io.py": "from mhanw import core\n",
        "infra/style.mplstyle": "lines.linewidth: 1\n",
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
    })
    return tmp_path


def test_direct_transitive_relative_and_literal_imports(tree):
    nb = notebook(tree, "01_a", "%matplotlib inline\nfrom mhanw.chapters import c1\n!ls\n")
    assert deps(tree, nb) == {
        "src/mhanw/__init__.py", "src/mhanw/texts/sentences.json",        # every import runs __init__
        "src/mhanw/chapters/__init__.py", "src/mhanw/chapters/c1.py",
        "src/mhanw/chapters/c2.py",                                       # from . import c2, in a function
        "src/mhanw/infra/__init__.py", "src/mhanw/infra/io.py",           # from ..infra import io
        "src/mhanw/infra/style.mplstyle",                                 # data of the infra package
        "src/mhanw/core.py",                                              # io: from mhanw import core
        "src/mhanw/extra/deep.py",                                        # import_module('mhanw.extra.deep')
    }


def test_import_forms_of_the_notebook(tree):
    assert deps(tree, notebook(tree, "02_b", "import mhanw.core as c\n")) == {
        "src/mhanw/__init__.py", "src/mhanw/texts/sentences.json", "src/mhanw/core.py"}
    assert deps(tree, notebook(tree, "03_c", "from mhanw import infra\n")) == {
        "src/mhanw/__init__.py", "src/mhanw/texts/sentences.json", "src/mhanw/infra/__init__.py",
        "src/mhanw/infra/io.py", "src/mhanw/infra/style.mplstyle", "src/mhanw/core.py"}
    assert deps(tree, notebook(tree, "04_d", "import numpy\n")) == set()


def test_a_cell_that_does_not_parse_means_the_whole_library(tree):
    nb = notebook(tree, "05_e", "from mhanw import core\n", "def broken(:\n")
    every = set(nbdeps(tree, "--library").split())
    assert deps(tree, nb) == every
    assert "src/mhanw/chapters/__pycache__/c1.cpython-311.pyc" not in every


def test_the_rule_names_both_targets_and_gives_every_file_an_empty_rule(tree):
    nb = notebook(tree, "06_f", "import mhanw.core\n")
    rule = nbdeps(tree, f"notebooks/{nb.name}")
    assert rule.splitlines()[2].startswith("build/notebooks/06_f.ipynb paper/generated/06_f.tex:")
    assert "src/mhanw/core.py:\n" in rule and "src/mhanw/__init__.py:\n" in rule
    out = tree / "build" / "deps" / "06_f.d"
    nbdeps(tree, f"notebooks/{nb.name}", str(out))
    assert out.read_text() == rule and [p.name for p in out.parent.iterdir()] == ["06_f.d"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")  # the notebooks' escapes
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_static_dependencies_cover_what_python_imports(path):
    """Every mhanw module that the notebook's import statements load is among its dependencies."""
    import ast

    cells = json.loads(path.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    imports = [ast.unparse(n) for n in ast.walk(ast.parse(code)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    probe = "\n".join(imports) + "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'mhanw')))"
    loaded = set(subprocess.run([sys.executable, "-c", probe], cwd=ROOT / "notebooks", capture_output=True, text=True,
                                check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "MPLBACKEND": "Agg"}).stdout.split())
    static = set(nbdeps(ROOT, "--explain", f"notebooks/{path.name}").split())
    assert "mhanw" in loaded and loaded <= static, loaded - static


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_declared_figures_are_the_ones_the_chapter_saves(nb):
    """The figures a chapter declares (metadata ``mhanw.figures``: make's targets and the book's
    figure list) are those its code saves, in order; read from the source, so a renamed or removed
    figure is caught without running the chapter."""
    import re

    doc = json.loads(nb.read_text())
    code = "\n".join("".join(c["source"]) for c in doc["cells"] if c["cell_type"] == "code")
    saved = re.findall(r"figures\.save\(\s*\w+\s*,\s*[\"']([0-9]{2}_[a-z0-9_]+)[\"']", code)
    assert saved, f"{nb.name}: no figures.save(fig, 'NN_slug', ...) with a literal name"
    assert doc["metadata"]["mhanw"]["figures"] == saved
