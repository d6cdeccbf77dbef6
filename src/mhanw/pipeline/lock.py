"""Renew requirements.lock: pip's resolution of pyproject.toml for every supported Python.

    python -m mhanw.pipeline lock [--out requirements.lock] [--constraint FILE]

The direct dependencies (``[project] dependencies`` and the ``test`` extra) are
resolved by pip (``install --dry-run --report``, wheels only, nothing
installed) once for each CPython version that ``scripts/find_python.sh
--supported`` lists (from ``requires-python``).  The pins are merged into one
file: a package with the same version everywhere gets a plain ``name==version``;
one whose version differs, or that only some versions need, gets one line per
version with a ``python_version`` marker.  ``--constraint`` passes a
constraints file to every resolution (e.g. the current lock, to check that it
is complete).  Needs the network (PyPI).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path.cwd()
HEADER = """\
# Every package pip installs for pyproject.toml's dependencies and [test] extra, pinned;
# one file for CPython {versions} (a pin that must differ carries a
# python_version marker). `make lock` renews it (mhanw.pipeline.lock).
"""


def supported_versions() -> list[str]:
    out = subprocess.run(
        [str(ROOT / "scripts" / "find_python.sh"), "--supported"], check=True, capture_output=True, text=True
    ).stdout
    return out.split()


def direct_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["test"]


def resolve(version: str, requirements: list[str], constraint: str | None = None) -> dict[str, str]:
    """{distribution name: version} that pip would install for CPython ``version``."""
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp, "requirements.txt")
        req.write_text("\n".join(requirements) + "\n")
        report = Path(tmp, "report.json")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--only-binary=:all:",
            "--python-version",
            version,
            "--implementation",
            "cp",
            "--target",
            str(Path(tmp, "target")),
            "--report",
            str(report),
            "-r",
            str(req),
        ]
        if constraint:
            cmd += ["--constraint", constraint]
        subprocess.run(cmd, check=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        items = json.loads(report.read_text())["install"]
    return {i["metadata"]["name"]: i["metadata"]["version"] for i in items}


def merge(resolutions: dict[str, dict[str, str]]) -> list[str]:
    """One pin per package, with python_version markers where the versions differ."""
    versions = list(resolutions)
    names = sorted({n for r in resolutions.values() for n in r})
    lines = []
    for name in names:
        by_version: dict[str, list[str]] = {}
        for py in versions:
            if name in resolutions[py]:
                by_version.setdefault(resolutions[py][name], []).append(py)
        if len(by_version) == 1 and len(next(iter(by_version.values()))) == len(versions):
            lines.append(f"{name}=={next(iter(by_version))}")
            continue
        for pin, pys in by_version.items():
            marker = " or ".join(f'python_version == "{py}"' for py in pys)
            lines.append(f"{name}=={pin}; {marker}")
    return sorted(lines, key=lambda s: s.encode())  # C-locale order, as `LC_ALL=C sort`


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="-", help="file to write (default: standard output)")
    ap.add_argument("--constraint", help="a constraints file for every resolution")
    args = ap.parse_args(argv)
    versions = supported_versions()
    resolutions = {v: resolve(v, direct_requirements(), args.constraint) for v in versions}
    text = (
        HEADER.format(versions=", ".join(versions[:-1]) + " and " + versions[-1]) + "\n".join(merge(resolutions)) + "\n"
    )
    if args.out == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.out)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
        print(f"wrote {out} for CPython {', '.join(versions)}", file=sys.stderr)
    return 0
