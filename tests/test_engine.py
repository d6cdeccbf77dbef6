"""The fast evaluation path (issue 7): equal to the materialising reference,
blocked equal to unblocked, float32 kept, and the benchmark runs."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mhanw import bench, nw


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
