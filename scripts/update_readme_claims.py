"""Rewrite the claims table of README.md from the claims ledger.

    python scripts/update_readme_claims.py [--ledger build/claims.json] [--readme README.md] [--check]

Replaces the text between ``<!-- claims:begin -->`` and ``<!-- claims:end -->``
by the table that ``claimslib.markdown_table`` makes from the ledger, through a
temporary file and a rename, and only when it changed (so that make sees no
new README when the verdicts are the same).  ``--check`` writes nothing and
exits 1 when the README's table differs from the ledger's.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claimslib  # noqa: E402
from mhanw.infra.texout import write_atomic  # noqa: E402

ARGUMENTS = {
    "--ledger": dict(default="build/claims.json"),
    "--readme": dict(default="README.md"),
    "--check": dict(action="store_true"),
}


def run(args) -> int:
    readme = Path(args.readme)
    records = claimslib.load_ledger(args.ledger)
    text = readme.read_text(encoding="utf-8")
    new = claimslib.replace_readme_block(text, claimslib.markdown_table(records))
    if new == text:
        print(f"    {readme}: claims table up to date ({len(records)} records)")
        return 0
    if args.check:
        print(f"*** {readme}: claims table differs from {args.ledger}", file=sys.stderr)
        return 1
    write_atomic(readme, new)
    print(f"    {readme}: claims table rewritten from {args.ledger} ({len(records)} records)")
    return 0


def main(argv=None) -> int:
    return claimslib.run_script(__doc__, ARGUMENTS, run, "README claims table", argv)


if __name__ == "__main__":
    sys.exit(main())
