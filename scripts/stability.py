"""The verdicts under other seeds: every chapter at quick fidelity, once per seed.

    python scripts/stability.py --seeds 1 2 3 4 5 [--jobs 2] [--venv .venv]

Each seed is a scenario (``[all] seed = S``) run by ``scripts/scenario.py`` in
its own copy of the sources (build/stability/seed-S/, target build/claims.json
only: no paper); chapters run in parallel (make -jJOBS), and a chapter's sweeps
use the Dask cluster at ``MHANW_DASK_SCHEDULER`` when it is set.  Then
build/stability.json records, claim by claim, the verdict under every seed and
how many equal (and are compatible with) the default ledger build/claims.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claimslib  # noqa: E402
import scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", nargs="+", type=int, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--venv", type=Path, default=Path(".venv"))
    ap.add_argument("--default", type=Path, default=ROOT / "build" / "claims.json")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "stability.json")
    args = ap.parse_args(argv)
    if not args.default.is_file():
        print(f"*** stability: no default ledger {args.default}; run make all first", file=sys.stderr)
        return 1
    runs = {}
    for seed in args.seeds:
        folder = ROOT / "build" / "stability" / f"seed-{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        toml = folder.parent / f"seed-{seed}.toml"
        text = f'description = "seed {seed}"\n[all]\nseed = {seed}\n'
        if not toml.is_file() or toml.read_text() != text:
            toml.write_text(text)
        rc = scenario.run(toml, fidelity="quick", jobs=args.jobs, out=folder, targets=["build/claims.json"],
                          venv=args.venv.resolve(), compare_with=args.default)
        if rc:
            return rc
        runs[str(seed)] = claimslib.load_ledger(folder / "claims.json") if (folder / "claims.json").is_file() else []
    stab = claimslib.stability(claimslib.load_ledger(args.default), runs)
    claimslib.write_json(args.out, stab)
    print(f"==> stability across seeds {', '.join(map(str, args.seeds))} ({args.out}):")
    for r in stab["claims"]:
        print(f"    {r['claim']:<44}  {r['default']:<34} equal {r['equal']}/{r['runs']}, "
              f"compatible {r['compatible']}/{r['runs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
