"""Clear outputs and execution counts of notebooks, in place, before committing.

    .venv/bin/python scripts/strip_notebooks.py notebooks/*.ipynb
"""

import sys

import nbformat


def strip(path: str) -> bool:
    nb = nbformat.read(path, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            cell.outputs, cell.execution_count = [], None
            changed = True
    if changed:
        nbformat.write(nb, path)
    return changed


if __name__ == "__main__":
    for p in sys.argv[1:]:
        if strip(p):
            print(f"stripped {p}")
