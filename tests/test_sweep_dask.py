"""Sweeps on a Dask cluster give bit-identical results to local runs (same seeds, same streams)."""

import numpy as np
import pytest

from mhanw import montecarlo
from mhanw.infra import sweep

distributed = pytest.importorskip("distributed")


def _draw(setting, rng):
    return setting * rng.standard_normal(3)


def _replicate(rng):
    return rng.standard_normal(2)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=40
    ) as c:
        yield c


def test_dask_run_equals_local_run(cluster):
    local = sweep.run_sweep(_draw, [1.0, 2.0], n_rep=9, seed=5)
    remote = sweep.run_sweep(_draw, [1.0, 2.0], n_rep=9, seed=5, scheduler=cluster.scheduler_address)
    assert np.array_equal(local, remote)


def test_environment_variable_selects_the_cluster(cluster, monkeypatch):
    local = sweep.run_replicates(_replicate, n_rep=7, seed=3)
    monkeypatch.setenv(sweep.SCHEDULER_ENV, cluster.scheduler_address)
    assert np.array_equal(local, sweep.run_replicates(_replicate, n_rep=7, seed=3))


def test_integrated_mse_on_dask_equals_local(cluster, monkeypatch):
    from mhanw import heads

    configs = [heads.HeadConfig(heads.pair_heads(t, 4, 2), bandwidth=0.5) for t in (0.0, np.pi / 2)]
    local = montecarlo.integrated_mse(configs, "iso_exp", n=60, n_test=20, n_rep=6, seed=1)
    monkeypatch.setenv(sweep.SCHEDULER_ENV, cluster.scheduler_address)
    remote = montecarlo.integrated_mse(configs, "iso_exp", n=60, n_test=20, n_rep=6, seed=1)
    assert np.array_equal(local.errors, remote.errors)


def test_bad_scheduler_names_the_argument():
    with pytest.raises(ValueError, match="^scheduler:"):
        sweep.run_replicates(_replicate, n_rep=2, seed=1, scheduler="  ")


@pytest.mark.parametrize("via_environment", [False, True])
def test_a_scheduler_that_does_not_answer_is_one_line_within_seconds(via_environment, monkeypatch):
    import socket
    import time

    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
        kwargs = {} if via_environment else {"scheduler": address}
        if via_environment:
            monkeypatch.setenv(sweep.SCHEDULER_ENV, address)
        start = time.monotonic()
        with pytest.raises(ConnectionError) as caught:
            sweep.run_replicates(_replicate, n_rep=2, seed=1, **kwargs)
        elapsed = time.monotonic() - start
    message = str(caught.value)
    assert elapsed < 3 * sweep.CONNECT_TIMEOUT_S, f"took {elapsed:.1f} s"
    assert "\n" not in message and address in message
    assert (sweep.SCHEDULER_ENV in message) == via_environment
