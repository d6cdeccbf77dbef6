"""Gather every chapter's verdict records into the claims ledger, and render it.

    python scripts/collect_claims.py [--results build/results] [--out build/claims.json]
                                     [--generated paper/generated] [--paper paper] [--print]

Reads the ``claims`` of every ``NN_slug.json`` in the results folder (a chapter
without records is left out, and named), validates them through
``mhanw.infra.verdicts.gather``, adds each record's section number (from the
paper's ``\\label``s) and writes, atomically:

- the ledger, ``build/claims.json`` (a list of records);
- ``paper/generated/claims_table.tex`` (the table of every record) and
  ``paper/generated/claims_summary.tex`` (generated sentences for the abstract
  and the summary), each with a fallback text when no chapter has records.

``--print`` prints the verdict table (``make all`` ends with it).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claimslib  # noqa: E402
from mhanw.infra.texout import write_atomic  # noqa: E402

ARGUMENTS = {
    "--results": dict(default="build/results"),
    "--out": dict(default="build/claims.json"),
    "--generated": dict(default="paper/generated"),
    "--paper": dict(default="paper"),
    "--print": dict(dest="show", action="store_true", help="print the verdict table"),
}


def run(args) -> int:
    records, chapters, without = claimslib.collect(args.results)
    records = claimslib.with_section_numbers(records, claimslib.section_numbers(args.paper))
    claimslib.write_json(args.out, records)
    gen = Path(args.generated)
    write_atomic(gen / "claims_table.tex", claimslib.latex_table(records))
    write_atomic(gen / "claims_summary.tex", claimslib.latex_summary(records))
    print(f"==> claims ledger: {args.out}: {len(records)} records from "
          f"{', '.join(chapters) if chapters else 'no chapter'}"
          + (f"; no records yet from {', '.join(without)}" if without else ""))
    if args.show:
        print(claimslib.text_table(records))
    return 0


def main(argv=None) -> int:
    return claimslib.run_script(__doc__, ARGUMENTS, run, "claims ledger", argv)


if __name__ == "__main__":
    sys.exit(main())
