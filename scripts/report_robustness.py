"""The paper's section on changed assumptions and seeds, from the ledgers.

    python scripts/report_robustness.py scenarios --out paper/generated/scenarios.tex [build/scenarios/NAME/claims.json ...]
    python scripts/report_robustness.py stability --out paper/generated/stability.tex [--stability build/stability.json]

Compares each scenario's ledger with the default one (build/claims.json) and
writes the section "Beyond the stated assumptions"; or renders the seeds'
agreement table.  Without scenario ledgers (or build/stability.json), the text
says how to produce them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claimslib  # noqa: E402
from mhanw.infra.texout import write_atomic  # noqa: E402


def _params_words(toml_path: Path) -> tuple[str, str]:
    if not toml_path.is_file():
        return "", ""
    data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    parts = [f"{k} = {v}" for k, v in data.get("all", {}).items()]
    for ch, table in data.get("chapters", {}).items():
        parts += [f"{k} = {v} (chapter {ch[:2]})" for k, v in table.items()]
    return str(data.get("description", "")), "; ".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("scenarios", "stability"))
    ap.add_argument("ledgers", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--default", type=Path, default=Path("build/claims.json"))
    ap.add_argument("--stability", type=Path, default=Path("build/stability.json"))
    args = ap.parse_args(argv)
    default = claimslib.load_ledger(args.default) if args.default.is_file() else []
    if args.what == "scenarios":
        scenarios = []
        for ledger in args.ledgers:
            description, params = _params_words(ledger.parent / "scenario.toml")
            scenarios.append((ledger.parent.name, description, params, claimslib.load_ledger(ledger)))
        write_atomic(args.out, claimslib.scenarios_latex(default, scenarios))
    else:
        stab = json.loads(args.stability.read_text(encoding="utf-8")) if args.stability.is_file() else None
        write_atomic(args.out, claimslib.stability_latex(stab))
    return 0


if __name__ == "__main__":
    sys.exit(main())
