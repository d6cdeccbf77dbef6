"""Record the interpreter and library versions that ran the notebooks.

    .venv/bin/python scripts/record_environment.py build/results/environment.json paper/generated/environment.tex

Run with the project environment's interpreter.  Writes

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
import os
import platform
import sys
from pathlib import Path

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
        "% The interpreter and library versions of this build (scripts/record_environment.py).\n"
        f"\\newcommand{{\\BuildPython}}{{{py['implementation']} {py['version']}}}\n"
        f"\\newcommand{{\\BuildEnvironment}}{{{', '.join(parts)}}}\n"
    )


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(json_path: str, tex_path: str) -> None:
    env = environment()
    write_atomic(Path(json_path), json.dumps(env, indent=1) + "\n")
    write_atomic(Path(tex_path), latex(env))
    print(f"    environment: {latex(env).splitlines()[-1].split('{')[-1].rstrip('}')}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: record_environment.py ENVIRONMENT.json ENVIRONMENT.tex")
    main(sys.argv[1], sys.argv[2])
