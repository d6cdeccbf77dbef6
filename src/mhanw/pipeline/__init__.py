"""The build: chapters to figures, macros, ledgers and the paper; one command line, ``python -m mhanw.pipeline``.

It knows nothing of the theory: it finds chapters (:mod:`.chapters`), the
library files they import (:mod:`.deps`), writes the build graph for make
(:mod:`.rules`), runs one chapter in one run (:mod:`.runner`), gathers verdict
records into ledgers (:mod:`.ledger`), checks scenarios (:mod:`.scenarios`),
compares seeds (:mod:`.stability`), reports both for the paper
(:mod:`.robustness`), builds the paper (:mod:`.paper`) and the book
(:mod:`.book`, checked in a browser by :mod:`.browser`).
"""

import sys as _sys

# jupytext and papermill import nbformat, which imports jsonschema, which imports rfc3987_syntax (a Lark
# grammar built at import: about 2.5 CPU-s) to check IRI formats that no notebook schema uses.  A None entry
# makes that optional import fail at once, and jsonschema skips the format.  Measured on this kind of
# machine: `import jupytext` 3.5 CPU-s -> 0.7; every pipeline command that reads a chapter pays it once.
_sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: Python's "no such module"
