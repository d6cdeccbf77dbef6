"""Scenarios: the chapters run under changed assumptions.

A scenario is a TOML file of parameter overrides::

    description = "inputs with heavy tails"
    [all]                                  # every chapter that declares the parameter
    inputs = "student-t:3"
    [chapters.04_head_diversity_index]     # one chapter; it must declare the parameter
    noise = "gaussian"

Subcommands (standard library only, except ``run``'s report):

    python scripts/scenario.py check SCENARIO.toml
        validate the file against the notebooks' parameters cells; print what
        each chapter will receive
    python scripts/scenario.py params SCENARIO.toml NN_slug
        the parameters for one chapter, as one JSON object (papermill -y);
        used by scripts/run_notebook.sh when PARAMS names a scenario
    python scripts/scenario.py run SCENARIO.toml [--fidelity quick] [--jobs 2] [--out DIR]
                                   [--targets paper build/claims.json]
        run every chapter under the scenario in a copy of the tree
        (DIR/tree, default build/scenarios/NAME/tree), collect its executed
        chapters, figures, macros, results, claims.json and paper PDF into DIR,
        and print the verdicts that differ from build/claims.json

A parameter given under ``[all]`` is injected only into the chapters whose
parameters cell declares it (the others run with their default); a parameter
given under ``[chapters.NN_slug]`` that the chapter does not declare is an
error, as is a chapter that does not exist or an output path or fidelity set by
a scenario.  Errors are one line on stderr, exit status 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_params import declared_parameters  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Set by the pipeline itself; a scenario may not change them.
RESERVED = ("fidelity", "figures_dir", "macros_path", "results_path")
_TOP_KEYS = ("description", "all", "chapters")
#: What the scenario runner copies into its tree (the sources of a build, nothing generated).
TREE_FILES = ("Makefile", "pyproject.toml", "requirements.lock", "requirements-nodeps.txt", "README.md")
TREE_DIRS = ("scripts", "src", "notebooks", "paper/sections")
TREE_PAPER = ("paper/main.tex", "paper/refs.bib")


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with a one-line reason."""


def notebooks(root: Path = ROOT) -> dict[str, Path]:
    return {p.stem: p for p in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))}


def load(path, root: Path = ROOT) -> dict:
    """The scenario as ``{"all": {...}, "chapters": {name: {...}}, "description": str}``, validated."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"SCENARIO: no file {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise ScenarioError(f"{path}: unknown table or key {', '.join(unknown)}; "
                            f"expected {', '.join(_TOP_KEYS)}")
    common = data.get("all", {})
    chapters = data.get("chapters", {})
    if not isinstance(common, dict) or not isinstance(chapters, dict):
        raise ScenarioError(f"{path}: [all] and [chapters.NN_slug] must be tables")
    nbs = notebooks(root)
    for name, table in chapters.items():
        if name not in nbs:
            raise ScenarioError(f"{path}: [chapters.{name}]: no notebook notebooks/{name}.ipynb "
                                f"(chapters: {', '.join(nbs)})")
        if not isinstance(table, dict):
            raise ScenarioError(f"{path}: [chapters.{name}] must be a table of parameters")
    for where, table in [("all", common)] + [(f"chapters.{n}", t) for n, t in chapters.items()]:
        for key, value in table.items():
            if key in RESERVED:
                raise ScenarioError(f"{path}: [{where}] {key}: set by the pipeline (FIDELITY, output paths), "
                                    "not by a scenario")
            if not _literal(value):
                raise ScenarioError(f"{path}: [{where}] {key}: expected a string, number, boolean or a list "
                                    f"of them, got {type(value).__name__}")
    declared = {n: declared_parameters(p) for n, p in nbs.items()}
    for name, table in chapters.items():
        missing = [k for k in table if k not in declared[name]]
        if missing:
            raise ScenarioError(f"{path}: [chapters.{name}] {', '.join(missing)}: not a parameter of {name} "
                                f"(it declares {', '.join(declared[name])})")
    return {"description": str(data.get("description", "")), "all": common, "chapters": chapters,
            "declared": declared}


def _literal(v) -> bool:
    if isinstance(v, (str, int, float, bool)):
        return True
    return isinstance(v, list) and all(_literal(x) for x in v)


def params_for(scenario: dict, name: str) -> dict:
    """The parameters a scenario injects into chapter ``name``."""
    declared = scenario["declared"][name]
    out = {k: v for k, v in scenario["all"].items() if k in declared}
    out.update(scenario["chapters"].get(name, {}))
    return out


def unused_common(scenario: dict) -> list[str]:
    """Parameters of ``[all]`` that no chapter declares (ignored, with a warning)."""
    return [k for k in scenario["all"] if not any(k in d for d in scenario["declared"].values())]


def describe(scenario: dict) -> list[str]:
    lines = []
    for name in scenario["declared"]:
        p = params_for(scenario, name)
        lines.append(f"    {name}: " + (", ".join(f"{k}={v!r}" for k, v in p.items()) if p else "defaults"))
    for k in unused_common(scenario):
        lines.append(f"    warning: [all] {k}: declared by no chapter; ignored")
    return lines


# --------------------------------------------------------------------------- the run


def _sync(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` when the contents differ (modification time kept), so make sees real changes only."""
    if dst.is_file() and dst.read_bytes() == src.read_bytes():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def make_tree(root: Path, tree: Path) -> None:
    """The sources of a build (no generated file) under ``tree``; files removed from ``root`` are removed."""
    wanted: set[Path] = set()
    for f in TREE_FILES + TREE_PAPER:
        if (root / f).is_file():
            wanted.add(Path(f))
    for d in TREE_DIRS:
        for p in (root / d).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts \
                    and not p.name.endswith(".egg-info") and ".egg-info" not in str(p):
                wanted.add(p.relative_to(root))
    for rel in sorted(wanted):
        _sync(root / rel, tree / rel)
    for d in TREE_DIRS:
        for p in (tree / d).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and p.relative_to(tree) not in wanted:
                p.unlink()
    for d in ("figures", "paper/generated"):
        (tree / d).mkdir(parents=True, exist_ok=True)


def _copy_outputs(tree: Path, out: Path) -> None:
    for sub, src in (("notebooks", "build/notebooks"), ("results", "build/results"), ("figures", "figures"),
                     ("generated", "paper/generated")):
        dst = out / sub
        if dst.exists():
            shutil.rmtree(dst)
        if (tree / src).is_dir():
            shutil.copytree(tree / src, dst)
    for src, dst in (("build/claims.json", "claims.json"), ("build/paper/main.pdf", "main.pdf")):
        if (tree / src).is_file():
            shutil.copy2(tree / src, out / dst)


def run(path, *, fidelity: str, jobs: int, out: Path | None, targets: list[str], venv: Path,
        root: Path = ROOT, compare_with: Path | None = None) -> int:
    path = Path(path)
    scenario = load(path, root)
    name = path.stem
    out = out or root / "build" / "scenarios" / name
    tree = out / "tree"
    print(f"==> scenario {name} (FIDELITY={fidelity}) in {out.relative_to(root) if out.is_relative_to(root) else out}/"
          + (f": {scenario['description']}" if scenario["description"] else ""))
    for line in describe(scenario):
        print(line)
    make_tree(root, tree)
    _sync(path, tree / "scenario.toml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    cmd = ["make", "-C", str(tree), f"VENV={venv}", f"FIDELITY={fidelity}", "PARAMS=scenario.toml",
           f"-j{jobs}", *targets]
    proc = subprocess.run(cmd, env=env)
    if proc.returncode != 0:
        print(f"*** scenario {name}: the build in {tree} failed (its output is above)", file=sys.stderr)
        return 1
    _copy_outputs(tree, out)
    (out / "scenario.toml").write_bytes(path.read_bytes())
    print(report(out / "claims.json", compare_with or root / "build" / "claims.json", name))
    return 0


def report(ledger: Path, default: Path, name: str) -> str:
    import claimslib  # needs mhanw: only the run reports

    if not ledger.is_file():
        return f"    scenario {name}: no claims.json (no chapter recorded verdicts)"
    mine = claimslib.load_ledger(ledger)
    if not default.is_file():
        return (f"    scenario {name}: {len(mine)} verdicts in {ledger}; no default ledger {default} to compare with "
                "(run make all first)\n" + claimslib.text_table(mine))
    diff = claimslib.differences(claimslib.load_ledger(default), mine)
    if not diff:
        return f"    scenario {name}: all {len(mine)} verdicts equal the default run's ({default})"
    w = max(len(c) for c, _, _ in diff)
    lines = [f"    scenario {name}: {len(diff)} of {len(mine)} verdicts differ from the default run ({default}):"]
    lines += [f"    {c:<{w}}  {a or '(no record)'} -> {b or '(no record)'}" for c, a, b in diff]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("scenario")
    p = sub.add_parser("params")
    p.add_argument("scenario")
    p.add_argument("notebook")
    r = sub.add_parser("run")
    r.add_argument("scenario")
    r.add_argument("--fidelity", default=os.environ.get("FIDELITY", "quick"), choices=("quick", "paper"))
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--out", type=Path)
    r.add_argument("--venv", type=Path, default=Path(os.environ.get("VENV", ".venv")))
    r.add_argument("--targets", nargs="+", default=["paper", "build/claims.json"])
    r.add_argument("--compare-with", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "check":
            scenario = load(args.scenario)
            print(f"    {args.scenario}: ok" + (f" ({scenario['description']})" if scenario["description"] else ""))
            print("\n".join(describe(scenario)))
            return 0
        if args.cmd == "params":
            scenario = load(args.scenario)
            if args.notebook not in scenario["declared"]:
                raise ScenarioError(f"notebook: no notebook notebooks/{args.notebook}.ipynb")
            print(json.dumps(params_for(scenario, args.notebook)))
            return 0
        return run(args.scenario, fidelity=args.fidelity, jobs=args.jobs, out=args.out and args.out.resolve(),
                   targets=args.targets, venv=args.venv.resolve(), compare_with=args.compare_with)
    except ScenarioError as exc:
        print(f"*** {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
