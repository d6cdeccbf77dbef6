"""Seeded, parallel Monte Carlo sweeps (one random stream per replicate, common random numbers).

Every Monte Carlo number of the companion comes from here, so two rules hold
everywhere:

- **One stream per replicate.**  ``numpy.random.SeedSequence(seed).spawn``
  gives child ``r`` to replicate ``r``.  The child depends only on ``(seed, r)``,
  not on the number of replicates, workers or settings, so results are
  identical with 1 or 2 workers and a larger run extends a smaller one.
- **Common random numbers (CRN).**  In :func:`run_sweep`, setting ``s`` and
  replicate ``r`` get a fresh ``Generator`` built from child ``r``, the same for
  every ``s``: a difference between settings is the settings', not the noise's,
  and its paired standard error is small.

Work is split into blocks of replicates run by joblib (loky backend).  Each
worker has one BLAS thread (``OPENBLAS_NUM_THREADS=1`` and friends via joblib's
``inner_max_num_threads``, plus threadpoolctl when it is installed); the main
process does the same when threadpoolctl is available.  On the 2-core machines
the companion targets, use ``n_jobs`` of 1 or 2.

**On a Dask cluster.**  Give a scheduler address, either as ``scheduler=``
(``"tcp://host:8786"``) or in the environment variable
:data:`SCHEDULER_ENV` (``MHANW_DASK_SCHEDULER``), and the same blocks of
replicates run as Dask tasks on that cluster (``pip install
dask[distributed]``, the ``dask`` extra).  The streams are the same, so the
results are bit-identical to a local run with the same seed.  Local runs
import nothing of Dask.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..constants import MAX_REPLICATES
from .validate import as_seed_sequence, boolean, brief, positive_int, whole_number_text

#: Most worker processes a sweep starts: more than the cores of any machine this runs on (joblib
#: takes a C int, so 10**12 raised a bare OverflowError).
MAX_JOBS = 1024

__all__ = ["run_replicates", "run_sweep", "spawn_streams"]

#: Blocks per worker: enough for load balance and a smooth progress bar.
BLOCKS_PER_JOB = 4

#: Environment variable holding a Dask scheduler address; when set (and no
#: ``scheduler=`` is given) every sweep runs on that cluster.
SCHEDULER_ENV = "MHANW_DASK_SCHEDULER"
#: Seconds a Dask scheduler has to answer before a run is refused (:func:`run_sweep`, :func:`run_replicates`).
CONNECT_TIMEOUT_S = 5.0


def spawn_streams(seed, n_rep: int) -> list[np.random.SeedSequence]:
    """The ``n_rep`` child seed sequences of ``seed``, one per replicate.

    ``seed`` is a non-negative int (or a sequence of them) or a
    ``numpy.random.SeedSequence`` (its children are spawned afresh from 0).  Child
    ``r`` is the same for every ``n_rep > r``.
    """
    n_rep = positive_int(n_rep, "n_rep", maximum=MAX_REPLICATES, what="replicates")
    return _root(seed).spawn(n_rep)


def _root(seed) -> np.random.SeedSequence:
    seq = as_seed_sequence(seed, "seed")
    # A copy, so that spawning neither advances the caller's sequence nor
    # depends on how many children it has already spawned.
    return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key, pool_size=seq.pool_size)


def _single_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the env variables set by joblib cover the workers
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _run_block(func, settings, streams, pass_setting):
    """Results of one block of replicates: a list over replicates of lists over settings."""
    out = []
    with _single_blas_thread():
        for child in streams:
            if pass_setting:
                out.append([func(s, np.random.default_rng(child)) for s in settings])
            else:
                out.append(func(np.random.default_rng(child)))
    return out


def _blocks(n_rep: int, n_jobs: int):
    n_blocks = 1 if n_jobs == 1 else min(n_rep, BLOCKS_PER_JOB * n_jobs)
    edges = np.linspace(0, n_rep, n_blocks + 1).round().astype(int)
    return [range(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


#: ``MHANW_PROGRESS=1`` (the Makefile sets it) shows a bar on every sweep;
#: ``CI`` set to anything hides them all, so CI logs are not flooded.
PROGRESS_ENV = "MHANW_PROGRESS"


def _terminal():
    """A text stream on the terminal's stderr, and whether the caller must close it.

    In a Jupyter kernel ``sys.stderr`` is the cell's output, and even file
    descriptor 2 is piped into the notebook; ``sys.stderr.fileno()`` is then
    ipykernel's copy of the original descriptor, i.e. the terminal that started
    the kernel (papermill's, or JupyterLab's).  Elsewhere it is descriptor 2.
    When ``sys.stderr`` has no descriptor (a kernel that does not pipe the
    descriptors, as under pytest, or a captured stream), ``sys.__stderr__``:
    the process's own stderr, again not the notebook."""
    import sys

    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return (sys.__stderr__ if sys.__stderr__ is not None else sys.stderr), False
    return open(fd, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False), True


#: ``MHANW_PROGRESS_INTERVAL=S``: the least number of seconds between two refreshes of a progress bar.
PROGRESS_INTERVAL_ENV = "MHANW_PROGRESS_INTERVAL"


def _progress_interval() -> float:
    """The seconds of :data:`PROGRESS_INTERVAL_ENV` (default 5), a finite number from 0.1 to 3600."""
    text = os.environ.get(PROGRESS_INTERVAL_ENV, "5")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.1 <= value <= 3600:  # also NaN
        raise ValueError(f"{PROGRESS_INTERVAL_ENV}: expected seconds from 0.1 to 3600, got {brief(text)}")
    return value


def _progress_bar(progress, total, desc):
    """A plain-text tqdm bar on the terminal (see :func:`_terminal`), never in a
    notebook's output, refreshed at most every few seconds."""
    show = boolean(progress, "progress") or os.environ.get(PROGRESS_ENV) == "1"
    if not show or os.environ.get("CI"):
        return None
    from tqdm.std import tqdm

    stream, owned = _terminal()
    interval = _progress_interval()
    bar = tqdm(
        total=total,
        desc=desc or "replicates",
        file=stream,
        mininterval=interval,
        maxinterval=max(interval, 10.0),
        ascii=True,
        dynamic_ncols=False,
        ncols=80,
    )
    bar.terminal = stream if owned else None
    return bar


#: ``MHANW_WORKERS=N`` caps the worker processes of every local sweep at N, whatever ``n_jobs`` a caller
#: asks for (the pipeline sets 1: make already runs one job per core, and workers would compete with
#: them). Results do not depend on it: every replicate has its own seeded stream.
WORKERS_ENV = "MHANW_WORKERS"


def _worker_cap() -> int | None:
    """The cap of :data:`WORKERS_ENV` (``None`` when unset); ``ValueError`` naming it when not a count."""
    value = os.environ.get(WORKERS_ENV)
    if value is None or value == "":
        return None
    return whole_number_text(value, WORKERS_ENV, minimum=1, maximum=MAX_JOBS)


def _scheduler_address(scheduler):
    address = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV) or None
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ValueError(
            f"scheduler: expected a Dask scheduler address such as 'tcp://host:8786', got {brief(address)}"
        )
    return address


def _run_on_dask(address, func, settings, block_streams, pass_setting, bar, from_argument=False):
    """Run the blocks as tasks on the Dask cluster at ``address``; results in block order."""
    try:
        from distributed import Client, as_completed
    except ImportError as exc:
        raise ImportError(
            f"a Dask scheduler was given ({address}) but dask.distributed is not installed: "
            "pip install 'dask[distributed]==2026.8.0'"
        ) from exc
    try:  # an address that does not answer is one line within CONNECT_TIMEOUT_S, not a minute of retries
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError):
        given, local = (
            ("the scheduler argument", "leave the argument out")
            if from_argument
            else (SCHEDULER_ENV, f"unset {SCHEDULER_ENV}")
        )
        raise ConnectionError(
            f"scheduler: no Dask scheduler answered at {address!r} within {CONNECT_TIMEOUT_S:g} s "
            f"(given by {given}); start one there, or {local} to run locally"
        ) from None
    with client:
        futures = [
            client.submit(_run_block, func, settings, streams, pass_setting, pure=False) for streams in block_streams
        ]
        for future in as_completed(futures):
            if bar is not None:
                bar.update(len(block_streams[futures.index(future)]))
        return client.gather(futures)


def _execute(func, settings, n_rep, seed, n_jobs, progress, desc, pass_setting, scheduler=None):
    n_jobs = positive_int(n_jobs, "n_jobs", maximum=MAX_JOBS, what="worker processes")
    if not callable(func):
        raise ValueError(f"func: expected a callable, got {type(func).__name__}")
    try:  # a function that cannot take (setting, rng) / (rng) would fail in every worker with a bare TypeError
        inspect.signature(func).bind(*((None, None) if pass_setting else (None,)))
    except TypeError:
        want = "(setting, rng)" if pass_setting else "(rng)"
        raise ValueError(
            f"func: expected a function of {want}, got {getattr(func, '__name__', func)!s} {inspect.signature(func)}"
        ) from None
    except ValueError:  # a builtin without a signature: it is called as it is
        pass
    cap = _worker_cap()
    n_jobs = n_jobs if cap is None else min(n_jobs, cap)
    address = _scheduler_address(scheduler)
    streams = spawn_streams(seed, n_rep)
    blocks = _blocks(n_rep, max(n_jobs, 4) if address else n_jobs)
    bar = _progress_bar(progress, n_rep, desc)
    results = []
    try:
        if address:
            for res in _run_on_dask(
                address,
                func,
                settings,
                [[streams[r] for r in b] for b in blocks],
                pass_setting,
                bar,
                from_argument=scheduler is not None,
            ):
                results.extend(res)
        elif n_jobs == 1:
            for block in blocks:
                results.extend(_run_block(func, settings, [streams[r] for r in block], pass_setting))
                if bar is not None:
                    bar.update(len(block))
        else:
            from joblib import Parallel, delayed, parallel_config

            with parallel_config(backend="loky", inner_max_num_threads=1):
                parallel = Parallel(n_jobs=n_jobs, return_as="generator")
                outputs = parallel(
                    delayed(_run_block)(func, settings, [streams[r] for r in block], pass_setting) for block in blocks
                )
                for block, res in zip(blocks, outputs):
                    results.extend(res)
                    if bar is not None:
                        bar.update(len(block))
    finally:
        if bar is not None:
            bar.close()
            if bar.terminal is not None:
                bar.terminal.close()
    return results


def _stack(items: list) -> Any:
    """``np.stack(items)`` if every item is numeric with one common shape, else ``items``."""
    arrays = []
    for it in items:
        try:
            a = np.asarray(it)
        except (ValueError, TypeError):
            return items
        if a.dtype == object or a.dtype.kind not in "biufc":
            return items
        arrays.append(a)
    if arrays and all(a.shape == arrays[0].shape for a in arrays):
        return np.stack(arrays)
    return items


def run_replicates(
    func: Callable[[np.random.Generator], Any],
    n_rep: int,
    seed,
    n_jobs: int = 1,
    progress: bool = False,
    desc: str | None = None,
    scheduler: str | None = None,
):
    """Run ``func(rng)`` for ``n_rep`` replicates, replicate ``r`` on stream ``r``.

    Use it when one replicate evaluates every configuration itself on one draw
    of the data (the cheapest way to get CRN, e.g.
    :func:`mhanw.montecarlo.integrated_mse`).

    Parameters
    ----------
    func : callable ``(numpy.random.Generator) -> result``
        Must be picklable by cloudpickle when ``n_jobs > 1``.
    n_rep : int >= 1
    seed : int >= 0 or numpy.random.SeedSequence
    n_jobs : int >= 1
        Worker processes (loky); 1 runs in this process.  Results do not
        depend on it.
    progress : bool
        Show a tqdm bar over replicates (off by default).
    scheduler : str, optional
        Address of a Dask scheduler; defaults to the environment variable
        ``MHANW_DASK_SCHEDULER``; when neither is set the run is local.  An address
        that does not answer within :data:`CONNECT_TIMEOUT_S` seconds raises
        ``ConnectionError``, one line naming where the address came from.

    Returns
    -------
    array ``(n_rep, ...)`` when every result is numeric with one shape, else a
    list of ``n_rep`` results.
    """
    return _stack(_execute(func, None, n_rep, seed, n_jobs, progress, desc, pass_setting=False, scheduler=scheduler))


def run_sweep(
    func: Callable[[Any, np.random.Generator], Any],
    settings: Sequence,
    n_rep: int,
    seed,
    n_jobs: int = 1,
    progress: bool = False,
    desc: str | None = None,
    scheduler: str | None = None,
):
    """Run ``func(setting, rng)`` on a grid of settings x replicates.

    Setting ``s`` and replicate ``r`` get ``numpy.random.default_rng(child_r)``,
    a fresh generator from the same child for every ``s``: common random
    numbers across settings.

    Parameters
    ----------
    func : callable ``(setting, numpy.random.Generator) -> result``
        Must be picklable by cloudpickle when ``n_jobs > 1``.
    settings : sequence
        The settings compared (any picklable objects).
    n_rep, seed, n_jobs, progress, scheduler :
        As in :func:`run_replicates`.

    Returns
    -------
    array ``(n_settings, n_rep, ...)`` when every result is numeric with one
    shape, else a list over settings of lists over replicates.
    """
    if isinstance(settings, (str, bytes)):
        raise ValueError(f"settings: expected a sequence of settings, got the string {settings!r}")
    try:
        settings = list(settings)
    except TypeError as exc:
        raise ValueError(f"settings: expected a sequence, got {type(settings).__name__}") from exc
    if not settings:
        raise ValueError("settings: expected at least one setting, got none")
    per_rep = _execute(func, settings, n_rep, seed, n_jobs, progress, desc, pass_setting=True, scheduler=scheduler)
    by_setting = [[per_rep[r][s] for r in range(len(per_rep))] for s in range(len(settings))]
    stacked = [_stack(row) for row in by_setting]
    if all(isinstance(a, np.ndarray) for a in stacked) and all(a.shape == stacked[0].shape for a in stacked):
        return np.stack(stacked)
    return by_setting
