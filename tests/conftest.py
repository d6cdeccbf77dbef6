"""Shared test configuration: a deterministic hypothesis profile and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]

# Hypothesis keeps its example database under build/, never in the source tree,
# and derandomises so that `make test` is repeatable.
settings.register_profile(
    "mhanw",
    derandomize=True,
    deadline=None,
    max_examples=60,
    database=None,  # derandomized runs keep no example database (nothing written to the tree)
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "mhanw"))


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """Two fresh copies of the repository, each built with `make -j2 all FIDELITY=quick`.

    Shared by the notebook tests (every notebook executed at quick fidelity in a
    temporary folder) and the pipeline tests (PDF, byte-identical builds, ...).
    The copies use this virtual environment, so the environment is not rebuilt.
    """
    from nbtools import VENV, fresh_copy, make

    if not (VENV / ".installed").exists():
        pytest.fail(f"run the tests from the project's venv (make test); {VENV} has no .installed stamp")
    copies = []
    for label in ("a", "b"):
        copy = fresh_copy(tmp_path_factory.mktemp(f"build_{label}"))
        make(copy, "all", "-j2")
        copies.append(copy)
    return copies
