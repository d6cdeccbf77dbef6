"""The one softmax engine, :func:`mhanw.nw.weighted_mean` (Theorem 2.1's estimator and
every Monte Carlo head estimate): equal to the materialising reference whichever
of its paths runs, blocked equal to unblocked, matrix-matrix products at every
shape, float32 kept, and the benchmark runs."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mhanw import bench, heads, nw


def reference(q, k, v, kernel, h):
    """The full weight matrix from the logits, max-subtracted, normalised, then applied:
    no blocking, no fusion, no shift bound, no floor.  Gaussian distances are
    expanded as ``|q|^2 + |k|^2 - 2 q.k`` (the engine's cancellation, so that
    1e-12 is a test of the engine, not of the expansion, at 1e3-sized queries)."""
    if kernel == "gaussian":
        sq = (q * q).sum(axis=1)[:, None] + (k * k).sum(axis=1)[None, :] - 2 * q @ k.T
        L = -np.maximum(sq, 0.0) / (2 * h * h)
    else:
        L = (q @ k.T) / h
    w = np.exp(L - L.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


@st.composite
def batched(draw):
    H, m, n, d = (draw(st.integers(1, b)) for b in (3, 6, 40, 8))
    big = draw(st.sampled_from([1.0, 30.0, 1e3]))  # up to extreme logits
    el = st.floats(-1, 1, allow_nan=False)
    q = draw(arrays(np.float64, (H, m, d), elements=el)) * big
    k = draw(arrays(np.float64, (H, n, d), elements=el))
    v = draw(arrays(np.float64, (H, n, 2), elements=el))
    return q, k, v


@given(batched(), st.sampled_from(["gaussian", "exponential"]), st.floats(0.05, 5))
def test_fast_path_equals_reference(data, kernel, h):
    q, k, v = data
    fast = nw.nadaraya_watson(q, k, v, h, kernel=kernel)
    ref = np.stack([reference(q[i], k[i], v[i], kernel, h) for i in range(q.shape[0])])
    assert np.all(np.isfinite(fast))
    assert np.max(np.abs(fast - ref)) <= 1e-12


@given(batched())
def test_batched_heads_equal_one_head_at_a_time(data):
    q, k, v = data
    together = nw.softmax_attention(q, k, v)
    apart = np.stack([nw.softmax_attention(q[i], k[i], v[i]) for i in range(q.shape[0])])
    assert np.max(np.abs(together - apart)) <= 1e-13


def test_blocked_equals_unblocked(monkeypatch):
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 50, 4)), rng.standard_normal((3, 70, 4)), rng.standard_normal((3, 70))
    whole = nw.nadaraya_watson(q, k, v, 0.6)
    monkeypatch.setattr(nw, "BLOCK_ENTRIES", 3 * 70 * 3)  # blocks of 3 queries
    assert np.max(np.abs(whole - nw.nadaraya_watson(q, k, v, 0.6))) <= 1e-15


def test_float32_stays_float32_and_close():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(s) for s in ((20, 8), (300, 8), (300, 3)))
    out32 = nw.softmax_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    assert out32.dtype == np.float32
    assert np.max(np.abs(out32 - nw.softmax_attention(q, k, v))) <= 1e-5


def test_float32_with_nan_is_rejected():
    q = np.zeros((2, 3), np.float32)
    q[0, 0] = np.nan
    with pytest.raises(ValueError, match="^queries:"):
        nw.softmax_attention(q, np.zeros((4, 3), np.float32), np.zeros(4, np.float32))


def test_benchmark_runs_in_a_tiny_configuration(tmp_path):
    result = bench.main(["--tiny", "--no-torch", "--out", str(tmp_path)])
    rows = json.loads((tmp_path / "bench.json").read_text())["rows"]
    assert len(rows) == len(bench.TINY)
    for row in rows:
        assert set(row["results"]) == {"mhanw", "numpy_full", "bound"}
        assert row["results"]["mhanw"]["ratio"] == 1.0
        assert all(r["seconds"] > 0 for r in row["results"].values())
        bound = row["results"]["bound"]
        assert bound["seconds"] == pytest.approx(bound["products_seconds"] + bound["exp_seconds"])
    assert any(row["case"]["path"] == "heads" for row in rows)  # the simulations' path is measured
    assert "mhanw / bound" in (tmp_path / "bench.md").read_text()
    assert result["targets"]["n_cases"] == len(bench.TINY)


def test_heads_and_nw_share_the_engine(monkeypatch):
    calls = []
    engine = nw.weighted_mean
    monkeypatch.setattr(nw, "weighted_mean", lambda *a, **k: calls.append(a[0].shape) or engine(*a, **k))
    rng = np.random.default_rng(6)
    W, X, Y, Xt = (
        heads.haar_heads(4, 2, 3, rng),
        rng.standard_normal((50, 4)),
        rng.standard_normal(50),
        rng.standard_normal((7, 4)),
    )
    heads.head_estimates(W, X, Y, Xt, bandwidth=0.5)
    nw.softmax_attention(Xt, X, Y)
    assert calls == [(3, 7, 2), (1, 7, 4)]  # all heads in one call


@pytest.mark.parametrize("H, n", [(8, 3000), (30, 8000), (1, 10**6)])
def test_blocks_keep_at_least_32_queries(H, n):
    # one query per block would make Q K^T a matrix-vector product
    heads_per_block, rows = nw._block_shape(H, 500, n, nw.BLOCK_ENTRIES)
    assert rows >= nw.MIN_BLOCK_ROWS and heads_per_block >= 1


def _problem(seed, H=2, m=40, n=60, d=3, far=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((H, m, d)) * far, rng.standard_normal((H, n, d)), rng.standard_normal((H, n, 2)))


@pytest.mark.parametrize("kernel", ["gaussian", "exponential"])
def test_paths_agree(monkeypatch, kernel):
    """Shifted 3-pass path, exact-maximum rows, plain (in-place keys) layout, values
    without the column of ones, with and without the Gaussian shift column: the
    same numbers to rounding."""
    q, k, v = _problem(8, d=4, far=3.0)
    ref = np.stack([reference(q[i], k[i], v[i], kernel, 0.3) for i in range(2)])
    base = nw.nadaraya_watson(q, k, v, 0.3, kernel=kernel)
    np.testing.assert_allclose(base, ref, rtol=0, atol=1e-12)
    for name, value in [
        ("PLAIN_MIN_DK", 1),
        ("ONES_MAX_DV", 0),
        ("SHIFT_FREE", {np.dtype(np.float64): -np.inf}),
        ("SHIFT_SLACK", {np.dtype(np.float64): 0.0}),
    ]:  # 0: every row takes the exact maximum
        with monkeypatch.context() as mp:
            mp.setattr(nw, name, value)
            np.testing.assert_allclose(nw.nadaraya_watson(q, k, v, 0.3, kernel=kernel), base, rtol=0, atol=1e-12)


def test_far_queries_take_the_exact_maximum():
    # logits about -5000: all shifted weights underflow, the rows are recomputed exactly
    q, k, v = _problem(9, far=100.0)
    ref = np.stack([reference(q[i], k[i], v[i], "gaussian", 1.0) for i in range(2)])
    np.testing.assert_allclose(nw.nadaraya_watson(q, k, v, 1.0), ref, rtol=0, atol=1e-9)
