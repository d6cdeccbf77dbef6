"""``environment.yml`` (the conda and Binder route to the environment), generated from ``pyproject.toml``.

    python -m mhanw.pipeline environment-yml [--check]

The file carries the interpreter range of ``requires-python`` and, for pip, every pin of the
project's ``dependencies`` and of its ``test`` extra, in their order, then the project itself
(editable).  ``--check`` compares the committed file with what would be written (a test does the
same), so the two files cannot drift apart.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

#: The file's fixed opening: what it is and how it is used.
HEADER = """\
# Generated from pyproject.toml by `python -m mhanw.pipeline environment-yml`: do not edit by hand.
# The same environment as pyproject.toml, for conda or Binder:
#   conda env create -f environment.yml && conda activate mhanw && ./postBuild
# (postBuild installs requirements-nodeps.txt with pip --no-deps, which a conda
# pip section cannot express; Binder runs it by itself.)
# The pins are pyproject.toml's dependencies and [test] extra; pip resolves the packages they need.
# requirements.lock (make's environment, by uv) pins those too, with hashes and environment markers,
# which a conda pip section cannot take beside the editable project.
# TeX (latexmk, pdflatex) and pdftotext come from the system (see README).
"""


def text(root: Path) -> str:
    """The content of ``environment.yml`` for the repository at ``root``."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    lines = [
        "name: mhanw",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python{project['requires-python']}  # the versions of requires-python in pyproject.toml",
        "  - make",
        "  - pip",
        "  - pip:",
        *(f"      - {pin}" for pin in pins),
        "      - -e .",
    ]
    return HEADER + "\n".join(lines) + "\n"
