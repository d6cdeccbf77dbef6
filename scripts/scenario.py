"""Scenarios: the chapters run under changed assumptions.

A scenario is a TOML file of parameter overrides::

    description = "inputs with heavy tails"
    [all]                                  # every chapter that declares the parameter
    inputs = "student-t:3"
    [chapters.04_head_diversity_index]     # one chapter; it must declare the parameter
    noise = "gaussian"

Subcommands (standard library only, except ``run``'s report and ``ledger``'s records):

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
        and print the verdicts that differ from build/claims.json (``make scenario``)
    python scripts/scenario.py ledger SCENARIO.toml [--fidelity quick] [--jobs 1] [--out DIR]
        run, in the same copy, only the chapters the scenario changes (those
        that receive a parameter) and write their verdict records to
        DIR/claims.json, nothing else (``make all``: the paper's section on
        changed assumptions needs only the ledgers)

Both write DIR/run.json: the fidelity, the chapters run and the parameters each
received (an empty table: the chapter does not take the scenario's parameters).

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


def scenario_note_tex(name: str, scenario: dict) -> str:
    """``\\ScenarioNote``: the paragraph the paper of a scenario prints under its abstract.

    The sections describe the default design ("X ~ N(0, I)", "Gaussian noise"); this note says
    which parameters the scenario changed, chapter by chapter, so a reader of its PDF knows that
    the numbers and verdicts come from another design.  The default build has no note
    (``paper/main.tex`` inputs the file only when it exists)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from claimslib import tex_escape

    from mhanw.infra.prose import ranges

    groups: dict[tuple, list[int]] = {}  # the same parameters in several chapters: one line
    for chapter in scenario["declared"]:
        p = params_for(scenario, chapter)
        if p:
            groups.setdefault(tuple(p.items()), []).append(int(chapter[:2]))
    rows = []
    for items, numbers in groups.items():
        rows.append(r"\item " + ("chapter " if len(numbers) == 1 else "chapters ") + ranges(numbers).replace("-", "--") + ": "
                    + ", ".join(r"\texttt{" + tex_escape(f"{k} = {v!r}") + "}" for k, v in items))
    what = tex_escape(scenario["description"]) if scenario["description"] else "no description"
    body = (r"\noindent\fbox{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule}{\small"
            r"\textbf{Built under the scenario \texttt{" + tex_escape(name) + "}} (" + what + r"). "
            r"The sections describe the default design; every number, figure and verdict below comes "
            r"from the chapters run with these parameters instead:"
            + (r"\begin{itemize}\setlength{\itemsep}{0pt}" + "".join(rows) + r"\end{itemize}" if rows
               else " none (the defaults).")
            + "}}")
    return "% generated by scripts/scenario.py for the scenario's build; do not edit\n" \
           + r"\newcommand{\ScenarioNote}{" + body + "}\n"


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


def changed_chapters(scenario: dict) -> list[str]:
    """The chapters that receive at least one parameter from the scenario (the others run as by default)."""
    return [n for n in scenario["declared"] if params_for(scenario, n)]


#: The error a chapter raises when a sentence of its text no longer matches its numbers
#: (``mhanw.infra.verdicts.guard``): under a scenario, a finding, not a failure of the run.
GUARD_ERROR = "VerdictGuardError"


def stopped_on_guard(tree: Path, chapters: list[str]) -> tuple[dict[str, str], list[str]]:
    """``({chapter: "the text says ...; the numbers say ..."}, [chapters that failed otherwise])``.

    A chapter whose macros are missing after the build in ``tree`` failed; its
    executed copy stays in ``tree/build/stage/NN_slug/`` (scripts/run_notebook.sh),
    where the error of the failing cell says whether a guard stopped it.
    """
    stopped, failed = {}, []
    for name in chapters:
        if (tree / "paper" / "generated" / f"{name}.tex").is_file():
            continue
        staged = tree / "build" / "stage" / name / f"{name}.ipynb"
        errors = []
        if staged.is_file():
            nb = json.loads(staged.read_text(encoding="utf-8"))
            errors = [o for c in nb.get("cells", []) for o in c.get("outputs", []) if o.get("output_type") == "error"]
        if errors and errors[-1].get("ename") == GUARD_ERROR:
            stopped[name] = errors[-1].get("evalue", "").strip()
        else:
            failed.append(name)
    return stopped, failed


def _build(path: Path, scenario: dict, *, fidelity: str, jobs: int, out: Path, targets: list[str], venv: Path,
           root: Path, what: str, chapters: list[str]) -> tuple[int, dict[str, str]]:
    """Copy the sources to ``out/tree`` and make ``targets`` there under the scenario.

    Returns ``(status, stopped)``: ``stopped`` names the chapters that a guarded
    sentence stopped (with its message); those are findings, and the build goes
    on without them (``make -k``); any other failure gives status 1.
    """
    name = path.stem
    tree = out / "tree"
    print(f"==> scenario {name} (FIDELITY={fidelity}, {what}) in "
          f"{out.relative_to(root) if out.is_relative_to(root) else out}/"
          + (f": {scenario['description']}" if scenario["description"] else ""))
    for line in describe(scenario):
        print(line)
    make_tree(root, tree)
    _sync(path, tree / "scenario.toml")
    note = tree / "paper" / "generated" / "scenario_note.tex"
    text = scenario_note_tex(name, scenario)
    if not note.is_file() or note.read_text(encoding="utf-8") != text:
        tmp = note.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(note)
    # A make of its own (no MAKEFLAGS: the caller's variables must not reach the copy).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    cmd = ["make", "-C", str(tree), f"VENV={venv}", f"FIDELITY={fidelity}", "PARAMS=scenario.toml",
           f"-j{jobs}", "-k", *targets]
    if subprocess.run(cmd, env=env).returncode == 0:
        return 0, {}
    stopped, failed = stopped_on_guard(tree, chapters)
    if failed or not stopped:
        print(f"*** scenario {name}: the build in {tree} failed"
              + (f" in {', '.join(failed)}" if failed else "") + " (its output is above)", file=sys.stderr)
        return 1, stopped
    for chapter, message in stopped.items():
        print(f"    scenario {name}: {chapter} stops on a guarded sentence: {message}")
    return 0, stopped


def _write_run(out: Path, path: Path, scenario: dict, fidelity: str, chapters: list[str],
               stopped: dict[str, str]) -> None:
    """``out/scenario.toml`` and ``out/run.json`` (what ran, at which fidelity, with which parameters,
    and which chapters a guarded sentence stopped)."""
    (out / "scenario.toml").write_bytes(path.read_bytes())
    meta = {"scenario": path.stem, "description": scenario["description"], "fidelity": fidelity,
            "chapters": chapters, "parameters": {n: params_for(scenario, n) for n in scenario["declared"]},
            "stopped": stopped}
    (out / "run.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def run(path, *, fidelity: str, jobs: int, out: Path | None, targets: list[str], venv: Path,
        root: Path = ROOT, compare_with: Path | None = None) -> int:
    """Every chapter (and ``targets``, by default the paper) under the scenario; outputs collected in ``out``."""
    path = Path(path)
    scenario = load(path, root)
    name = path.stem
    out = out or root / "build" / "scenarios" / name
    every = list(scenario["declared"])
    status, stopped = _build(path, scenario, fidelity=fidelity, jobs=jobs, out=out, targets=targets, venv=venv,
                             root=root, what="every chapter", chapters=every)
    if status:
        return 1
    _copy_outputs(out / "tree", out)
    if stopped:  # no ledger or paper of the whole tree: write the ledger of the chapters that finished
        for stale in ("claims.json", "main.pdf"):
            (out / stale).unlink(missing_ok=True)
        _write_ledger(out, [n for n in every if n not in stopped])
        print(f"    scenario {name}: no paper under it ({', '.join(stopped)} stopped; its macros are missing)")
    _write_run(out, path, scenario, fidelity, every, stopped)
    print(report(out / "claims.json", compare_with or root / "build" / "claims.json", name, stopped))
    return 0


def _write_ledger(out: Path, chapters: list[str]) -> list[dict]:
    """``out/claims.json``: the records of ``chapters`` (their results in ``out/tree``), rewritten every time."""
    from mhanw.infra.verdicts import gather

    records = gather(out / "tree" / "build" / "results" / f"{n}.json" for n in chapters)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".claims.json.tmp"
    tmp.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out / "claims.json")
    return records


def ledger(path, *, fidelity: str, jobs: int, out: Path | None, venv: Path, root: Path = ROOT,
           chapters: list[str] | None = None) -> int:
    """Only the verdict records of ``chapters`` (default: those the scenario changes), in ``out/claims.json``.

    The chapters run in the same copy as :func:`run` (``out/tree``), so either
    reuses what the other has built.  ``out/claims.json`` is rewritten on every
    call (make compares its time with the sources').
    """
    path = Path(path)
    scenario = load(path, root)
    out = out or root / "build" / "scenarios" / path.stem
    chosen = changed_chapters(scenario) if chapters is None else chapters
    targets = [f"paper/generated/{n}.tex" for n in chosen]
    stopped: dict[str, str] = {}
    if targets:
        status, stopped = _build(path, scenario, fidelity=fidelity, jobs=jobs, out=out, targets=targets, venv=venv,
                                 root=root, what=f"{len(chosen)} chapters, ledger only", chapters=chosen)
        if status:
            return 1
    records = _write_ledger(out, [n for n in chosen if n not in stopped])
    _write_run(out, path, scenario, fidelity, chosen, stopped)
    print(f"    scenario {path.stem}: {len(records)} verdict records from {len(chosen) - len(stopped)} chapters"
          + (f" ({len(stopped)} stopped on a guarded sentence)" if stopped else "")
          + f" in {(out / 'claims.json').relative_to(root) if out.is_relative_to(root) else out / 'claims.json'}")
    return 0


def report(ledger: Path, default: Path, name: str, stopped: dict[str, str] | None = None) -> str:
    """The verdicts of ``ledger`` that differ from ``default``'s (a claim of a ``stopped`` chapter says so)."""
    import claimslib  # needs mhanw: only the run reports

    if not ledger.is_file():
        return f"    scenario {name}: no claims.json (no chapter recorded verdicts)"
    mine = claimslib.load_ledger(ledger)
    if not default.is_file():
        return (f"    scenario {name}: {len(mine)} verdicts in {ledger}; no default ledger {default} to compare with "
                "(run make all first)\n" + claimslib.text_table(mine))
    base = claimslib.load_ledger(default)
    halted = {r["claim"] for r in base if r.get("chapter") in (stopped or {})}
    diff = claimslib.differences(base, mine)
    if not diff:
        return f"    scenario {name}: all {len(mine)} verdicts equal the default run's ({default})"
    w = max(len(c) for c, _, _ in diff)
    lines = [f"    scenario {name}: {len(diff)} of {len(mine)} verdicts differ from the default run ({default}):"]
    lines += [f"    {c:<{w}}  {a or '(no record)'} -> "
              f"{b or ('(chapter stopped on a guarded sentence)' if c in halted else '(no record)')}"
              for c, a, b in diff]
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
    g = sub.add_parser("ledger")
    g.add_argument("scenario")
    g.add_argument("--fidelity", default="quick", choices=("quick", "paper"))
    g.add_argument("--jobs", type=int, default=1)
    g.add_argument("--out", type=Path)
    g.add_argument("--venv", type=Path, default=Path(os.environ.get("VENV", ".venv")))
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
        if args.cmd == "ledger":
            return ledger(args.scenario, fidelity=args.fidelity, jobs=args.jobs,
                          out=args.out and args.out.resolve(), venv=args.venv.resolve())
        return run(args.scenario, fidelity=args.fidelity, jobs=args.jobs, out=args.out and args.out.resolve(),
                   targets=args.targets, venv=args.venv.resolve(), compare_with=args.compare_with)
    except ScenarioError as exc:
        print(f"*** {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
