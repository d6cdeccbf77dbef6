"""Helpers every notebook uses: the sizes of a fidelity level.

A notebook's ``parameters`` cell holds only literals (``fidelity``, ``seed``,
output paths).  Everything derived from them is computed in the next cell, e.g.

>>> sizes = by_fidelity("quick", quick=dict(n_rep=20), paper=dict(n_rep=500))
>>> sizes["n_rep"]
20
"""

from __future__ import annotations

from .validate import brief

FIDELITIES = ("quick", "paper")


def by_fidelity(fidelity: str, *, quick: dict, paper: dict) -> dict:
    """Return the settings of ``fidelity`` ("quick" for tests and CI, "paper" for the figures)."""
    if fidelity not in FIDELITIES:
        raise ValueError(f"fidelity: expected 'quick' or 'paper', got {brief(fidelity)}")
    for name, sizes in (("quick", quick), ("paper", paper)):
        if not isinstance(sizes, dict):
            raise ValueError(f"{name}: expected a dict of settings, got {type(sizes).__name__}")
    if set(quick) != set(paper):
        raise ValueError("quick, paper: both fidelity levels must set the same keys")
    return dict(quick if fidelity == "quick" else paper)
