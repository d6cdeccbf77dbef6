"""Shared test configuration: a deterministic hypothesis profile, and one quick build for the session.

The build (``quick_build``) is made once per test session, whichever of pytest-xdist's
workers asks first, under a file lock in the folder the workers share; the others wait
and reuse it.  Tests that change a build work on a copy (:func:`nbtools.clone_build`).
"""

from __future__ import annotations

import os
from pathlib import Path

# One BLAS thread per test process, as the pipeline runs its jobs: pytest-xdist runs one process per core.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402  (after the thread settings, which must precede numpy)
from filelock import FileLock  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Derandomised, with no example database, so that `make test` is repeatable and writes nothing to the tree.
settings.register_profile(
    "mhanw",
    derandomize=True,
    deadline=None,
    max_examples=60,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "mhanw"))

from threadpoolctl import threadpool_limits  # noqa: E402  (numpy may already be loaded by a plugin)

threadpool_limits(1)


def _shared(tmp_path_factory, name: str, make_it):
    """``make_it(folder)`` once per session across xdist workers; returns the folder (or fails as it did)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder, failed = base / name, base / f"{name}.failed"
    with FileLock(str(base / f"{name}.lock")):
        if failed.exists():
            pytest.fail(failed.read_text())
        if not (folder / ".made").exists():
            try:
                make_it(folder)
            except BaseException as exc:
                failed.write_text(str(exc)[-8000:])
                raise
            (folder / ".made").write_text("ok\n")
    return folder


@pytest.fixture(scope="session")
def quick_build(tmp_path_factory):
    """A fresh copy of the repository after `make all FIDELITY=quick` (this virtual environment)."""
    from nbtools import VENV, fresh_copy, make

    if not (VENV / ".installed").exists():
        pytest.fail(f"run the tests from the project's venv (make test); {VENV} has no .installed stamp")

    def build(folder):
        fresh_copy(folder)
        make(folder, "all")

    return _shared(tmp_path_factory, "quick-build", build)
