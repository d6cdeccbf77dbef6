"""Shared test configuration: a deterministic hypothesis profile and paths."""

from __future__ import annotations

import os
from pathlib import Path

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
