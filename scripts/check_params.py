"""Check that a notebook declares the parameters a run would inject.

    python scripts/check_params.py notebooks/NN_slug.ipynb fidelity figures_dir ...

papermill only warns about a parameter that the notebook's ``parameters`` cell
does not assign (a misspelling such as ``fidelty``), and the run then goes on
with the notebook's default.  The pipeline calls this first, so that such a run
stops before it starts.  Exit status 0 when every name is assigned in the cell
tagged ``parameters``; otherwise 1, with one line naming the unknown parameters
and the declared ones.  Standard library only.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path


def declared_parameters(notebook: Path) -> list[str]:
    """Names assigned at the top level of the notebook's ``parameters`` cell, in order."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells = [c for c in nb.get("cells", []) if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ValueError(f"{notebook}: no cell is tagged 'parameters'")
    source = cells[0].get("source", "")
    tree = ast.parse("".join(source) if isinstance(source, list) else source)
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name) and t.id not in names:
                names.append(t.id)
    return names


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    notebook, wanted = Path(argv[0]), argv[1:]
    try:
        declared = declared_parameters(notebook)
    except (OSError, ValueError, SyntaxError) as exc:
        print(f"*** {exc}", file=sys.stderr)
        return 1
    unknown = [w for w in wanted if w not in declared]
    if unknown:
        print(f"*** {notebook}: unknown parameter(s) {', '.join(unknown)}; "
              f"its parameters cell declares {', '.join(declared)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
