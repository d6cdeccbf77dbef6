"""Record the interpreter and library versions that ran the notebooks.

Run with the project environment's interpreter (``python -m mhanw.pipeline paper`` calls
:func:`write`).  Writes

- a JSON record: the Python implementation and version, the versions of the
  numerical libraries that every figure and number goes through (numpy, scipy,
  sympy, matplotlib), and every installed distribution with its version;
- LaTeX macros for the paper, ``\\BuildPython`` and ``\\BuildEnvironment``,
  which paper/main.tex puts into the PDF's metadata (its Creator field).

Nothing machine-specific (host, paths, dates) is recorded, so that two builds
with the same interpreter and lock give identical files.  Both files are
written to a temporary name and renamed.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
from pathlib import Path

from mhanw.infra.texout import write_atomic

#: The libraries whose versions decide the figures and numbers.
NUMERICAL = ("numpy", "scipy", "sympy", "matplotlib")


def environment() -> dict:
    installed = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            installed[name.lower().replace("_", "-")] = dist.version
    return {
        "python": {"implementation": platform.python_implementation(), "version": platform.python_version()},
        "packages": {name: md.version(name) for name in NUMERICAL},
        "installed": dict(sorted(installed.items())),
    }


def latex(env: dict) -> str:
    py = env["python"]
    parts = [f"{py['implementation']} {py['version']}"] + [f"{k} {v}" for k, v in env["packages"].items()]
    return (
        "% The interpreter and library versions of this build (mhanw.pipeline.environment).\n"
        f"\\newcommand{{\\BuildPython}}{{{py['implementation']} {py['version']}}}\n"
        f"\\newcommand{{\\BuildEnvironment}}{{{', '.join(parts)}}}\n"
    )


def write(json_path: Path, tex_path: Path) -> None:
    """Both records, each rewritten only when its content changes."""
    env = environment()
    for path, text in ((Path(json_path), json.dumps(env, indent=1) + "\n"), (Path(tex_path), latex(env))):
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
