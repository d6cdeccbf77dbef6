"""Merge build/timings/NN_slug.json (one per executed notebook) into build/timings.json.

    python scripts/collect_timings.py build/timings build/timings.json
"""

import json
import sys
from pathlib import Path


def main(folder: str, out: str) -> None:
    rows = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    total = sum(r["seconds"] for r in rows)
    fidelities = sorted({r["fidelity"] for r in rows})
    report = {"notebooks": rows, "total_seconds": total, "fidelity": fidelities}
    Path(out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"    notebook wall time: {total} s in total ({', '.join(fidelities)}), see {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
