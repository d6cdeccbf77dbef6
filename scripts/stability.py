"""The verdicts under other seeds: every chapter at quick fidelity, once per seed.

    python scripts/stability.py seed S [--chapters NN_slug ...] [--jobs 1] [--venv .venv]
        every chapter (or those named) at quick fidelity with ``seed = S`` (a scenario
        ``[all] seed = S``, run by ``scripts/scenario.py ledger`` in its own copy
        of the sources, build/stability/seed-S/tree); its verdict records only
        (no figures are kept, no paper) in build/stability/seed-S/claims.json
    python scripts/stability.py collect --seeds 1 2 3 4 5 [--default build/claims.json]
                                        [--fidelity paper] [--out build/stability.json]
        claim by claim, the verdict under every seed against the default
        ledger's: how many seeds give the same verdict, how many a compatible
        one (the same, or undecided at this size), and whether any gives the
        opposite one (a flip); printed, and written to build/stability.json

``make stability`` (and ``make all`` at paper fidelity) runs one ``seed`` per
seed, in parallel under ``make -j2``, then ``collect``.  A chapter's sweeps use
the Dask cluster at ``MHANW_DASK_SCHEDULER`` when it is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claimslib  # noqa: E402
import scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "build" / "stability"


def seed_scenario(seed: int, folder: Path = FOLDER) -> Path:
    """The scenario file of one seed (written only when its text changes)."""
    toml = folder / f"seed-{seed}.toml"
    text = f'description = "seed {seed}"\n[all]\nseed = {seed}\n'
    toml.parent.mkdir(parents=True, exist_ok=True)
    if not toml.is_file() or toml.read_text() != text:
        toml.write_text(text)
    return toml


def run_seed(seed: int, *, jobs: int, venv: Path, chapters: list[str] | None = None, folder: Path = FOLDER) -> int:
    """The verdict records of ``chapters`` (default: every chapter) with ``seed = S``, at quick fidelity."""
    toml = seed_scenario(seed, folder)
    every = list(scenario.notebooks())
    unknown = [c for c in chapters or () if c not in every]
    if unknown:
        print(f"*** stability: chapters: no notebook {', '.join(unknown)} (chapters: {', '.join(every)})",
              file=sys.stderr)
        return 1
    return scenario.ledger(toml, fidelity="quick", jobs=jobs, out=folder / f"seed-{seed}", venv=venv,
                           chapters=chapters or every)


def stability(default: list[dict], runs: dict[str, list[dict]]) -> list[dict]:
    """Claim by claim (in the default ledger's order): the verdict under every seed and the counts.

    ``equal``: seeds whose verdict is the default's; ``compatible``: the same, or
    undecided at this size, or another form of "holds" (``mhanw.infra.verdicts.compatible``);
    ``flips``: seeds whose verdict is neither (the opposite answer).  A seed
    without a record of the claim counts in none (``runs`` is the number with one).
    """
    from mhanw.infra.verdicts import compatible

    rows = []
    for r in default:
        verdicts = {seed: next((x["verdict"] for x in recs if x["claim"] == r["claim"]), None)
                    for seed, recs in runs.items()}
        present = [v for v in verdicts.values() if v is not None]
        ok = sum(compatible(r["verdict"], v) for v in present)
        rows.append({"claim": r["claim"], "chapter": r.get("chapter", ""), "default": r["verdict"],
                     "seeds": verdicts, "runs": len(present), "equal": sum(v == r["verdict"] for v in present),
                     "compatible": ok, "flips": len(present) - ok})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("seed")
    s.add_argument("seed", type=int)
    s.add_argument("--chapters", nargs="+", help="the chapters to run (default: every chapter)")
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--venv", type=Path, default=Path(os.environ.get("VENV", ".venv")))
    c = sub.add_parser("collect")
    c.add_argument("--seeds", nargs="+", type=int, required=True)
    c.add_argument("--default", type=Path, default=ROOT / "build" / "claims.json")
    c.add_argument("--fidelity", default="paper", help="the fidelity of the default ledger")
    c.add_argument("--out", type=Path, default=ROOT / "build" / "stability.json")
    args = ap.parse_args(argv)
    if args.cmd == "seed":
        return run_seed(args.seed, jobs=args.jobs, venv=args.venv.resolve(), chapters=args.chapters)
    if not args.default.is_file():
        print(f"*** stability: no default ledger {args.default} (make build/claims.json)", file=sys.stderr)
        return 1
    runs, chapters, stopped = {}, set(), {}
    for seed in args.seeds:
        ledger = FOLDER / f"seed-{seed}" / "claims.json"
        if not ledger.is_file():
            print(f"*** stability: no ledger {ledger} (make {ledger.relative_to(ROOT)})", file=sys.stderr)
            return 1
        runs[str(seed)] = claimslib.load_ledger(ledger)
        meta = json.loads((ledger.parent / "run.json").read_text(encoding="utf-8")) \
            if (ledger.parent / "run.json").is_file() else {}
        chapters.update(meta.get("chapters") or (r["chapter"] for r in runs[str(seed)]))
        if meta.get("stopped"):
            stopped[str(seed)] = meta["stopped"]
    rows = stability(claimslib.load_ledger(args.default), runs)
    claimslib.write_json(args.out, {"seeds": list(runs), "chapters": sorted(chapters), "fidelity": "quick",
                                    "default_fidelity": args.fidelity, "stopped": stopped, "claims": rows})
    print(f"==> stability across seeds {', '.join(runs)} (quick fidelity) against the {args.fidelity}-fidelity "
          f"verdicts ({args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}):")
    w = max((len(r["claim"]) for r in rows), default=5)
    for r in rows:
        print(f"    {r['claim']:<{w}}  {r['default']:<34} equal {r['equal']}/{r['runs']}"
              + (f", FLIPS under {r['flips']}" if r["flips"] else ""))
    for seed, chs in stopped.items():
        for chapter, message in chs.items():
            print(f"    seed {seed}: {chapter} stops on a guarded sentence: {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
