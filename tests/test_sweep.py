"""Tests of mhanw.infra.sweep: seeded streams, common random numbers, 1 vs 2 workers (the Monte Carlo rules of the claims page)."""

import os

import numpy as np
import pytest

from mhanw import heads, montecarlo
from mhanw.infra import sweep


def _normal_times(setting, rng):
    return setting * rng.standard_normal(3)


def _blas_env(rng):
    return os.environ.get("OPENBLAS_NUM_THREADS") == "1"


def test_child_streams_do_not_depend_on_n_rep():
    small = sweep.spawn_streams(5, 3)
    large = sweep.spawn_streams(5, 10)
    for a, b in zip(small, large):
        np.testing.assert_array_equal(a.generate_state(4), b.generate_state(4))
    seq = np.random.SeedSequence(5)
    from_seq = sweep.spawn_streams(seq, 3)
    np.testing.assert_array_equal(from_seq[2].generate_state(4), small[2].generate_state(4))
    assert seq.n_children_spawned == 0  # the caller's sequence is not advanced


def test_run_sweep_shape_crn_and_worker_independence():
    settings = [1.0, 2.0, -0.5]
    one = sweep.run_sweep(_normal_times, settings, n_rep=9, seed=11, n_jobs=1)
    two = sweep.run_sweep(_normal_times, settings, n_rep=9, seed=11, n_jobs=2)
    assert one.shape == (3, 9, 3)
    np.testing.assert_array_equal(one, two)
    # common random numbers: every setting sees the same stream in replicate r
    np.testing.assert_array_equal(one[1], 2.0 * one[0])
    np.testing.assert_array_equal(one[2], -0.5 * one[0])
    # replicates differ
    assert not np.allclose(one[0, 0], one[0, 1])
    # progress bar changes nothing
    np.testing.assert_array_equal(one, sweep.run_sweep(_normal_times, settings, 9, 11, progress=True))
    # a longer run extends a shorter one
    np.testing.assert_array_equal(sweep.run_sweep(_normal_times, settings, 12, 11)[:, :9], one)


def test_run_replicates_stacking_and_ragged_results():
    out = sweep.run_replicates(lambda rng: rng.standard_normal(), 5, 0)
    assert out.shape == (5,)
    ragged = sweep.run_replicates(lambda rng: np.arange(rng.integers(1, 4) + 0), 6, 1)
    assert isinstance(ragged, list) and len(ragged) == 6
    mixed = sweep.run_sweep(lambda s, rng: np.zeros(s), [1, 2], 2, 0)
    assert isinstance(mixed, list) and len(mixed) == 2 and len(mixed[0]) == 2


def test_workers_use_one_blas_thread():
    assert all(sweep.run_replicates(_blas_env, 4, 0, n_jobs=2))


def test_integrated_mse_identical_for_one_and_two_workers():
    configs = [heads.pair_heads(t, 4, 2) for t in (0.0, 0.8, np.pi / 2)]
    one = montecarlo.integrated_mse(configs, "iso_exp", n=150, n_test=40, n_rep=12, seed=3, n_jobs=1)
    two = montecarlo.integrated_mse(configs, "iso_exp", n=150, n_test=40, n_rep=12, seed=3, n_jobs=2)
    np.testing.assert_array_equal(one.errors, two.errors)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(seed=-1), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(n_rep=0), "n_rep"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(settings=[]), "settings"),
        (dict(func=3), "func"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(func=_normal_times, settings=[1.0], n_rep=2, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^{name}:"):
        sweep.run_sweep(**args)


def _worker_pids(rng):
    return os.getpid()


def test_the_worker_cap_of_the_environment_bounds_every_sweep(monkeypatch):
    """MHANW_WORKERS=1 (the pipeline's setting) runs a sweep that asks for two workers in this process."""
    monkeypatch.setenv(sweep.WORKERS_ENV, "1")
    pids = sweep.run_replicates(_worker_pids, 8, 3, n_jobs=2)
    assert set(np.ravel(pids)) == {os.getpid()}
    monkeypatch.delenv(sweep.WORKERS_ENV)
    assert set(np.ravel(sweep.run_replicates(_worker_pids, 8, 3, n_jobs=2))) != {os.getpid()}


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_a_bad_worker_cap_is_refused_naming_it(monkeypatch, value):
    monkeypatch.setenv(sweep.WORKERS_ENV, value)
    with pytest.raises(ValueError, match=sweep.WORKERS_ENV):
        sweep.run_replicates(_worker_pids, 2, 3, n_jobs=1)
