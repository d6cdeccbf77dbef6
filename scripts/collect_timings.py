"""Merge build/timings/NN_slug.json (one per executed notebook) into build/timings.json.

    python scripts/collect_timings.py build/timings build/timings.json

The file is written to a temporary name next to it and renamed, so that an
interrupted run never leaves a partial build/timings.json.
"""

import json
import os
import sys
from pathlib import Path


def main(folder: str, out: str) -> None:
    rows = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    total = sum(r["seconds"] for r in rows)
    fidelities = sorted({r["fidelity"] for r in rows})
    report = {"notebooks": rows, "total_seconds": total, "fidelity": fidelities}
    target = Path(out)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(tmp, target)
    print(f"    notebook wall time: {total} s in total ({', '.join(fidelities)}), see {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
