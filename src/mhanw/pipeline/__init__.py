"""The build: chapters to figures, macros, ledgers and the paper; one command line, ``python -m mhanw.pipeline``.

It knows nothing of the theory: it finds chapters (:mod:`.chapters`), the
library files they import (:mod:`.deps`), writes the build graph for make
(:mod:`.rules`), runs one chapter in one run (:mod:`.runner`), gathers verdict
records into ledgers (:mod:`.ledger`), checks scenarios (:mod:`.scenarios`),
compares seeds (:mod:`.stability`), reports both for the paper
(:mod:`.robustness`), builds the paper (:mod:`.paper`) and the book
(:mod:`.book`, checked in a browser by :mod:`.browser`).
"""
