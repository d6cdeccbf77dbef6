"""Tests of mhanw.heads: head families, head outputs, combination rules.

The Monte Carlo over training samples is tested in test_montecarlo.py, the IMSE
checks of Thm 4.2 in test_ch04_head_diversity_index.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw import data, heads, nw
from mhanw.diversity import head_diversity_index

# ---------------------------------------------------------------- families


def _assert_orthonormal(W):
    for w in W:
        np.testing.assert_allclose(w.T @ w, np.eye(w.shape[1]), atol=1e-12)


def test_family_shapes_and_orthonormality():
    rng = np.random.default_rng(0)
    cases = {
        "identical": heads.identical_heads(6, 2, 3),
        "orthogonal": heads.orthogonal_heads(6, 2, 3),
        "pair": heads.pair_heads(0.4, 6, 2),
        "star": heads.star_heads(0.4, 8, 2, 3),
        "haar": heads.haar_heads(6, 2, 3, rng),
        "interpolated": heads.interpolated_heads(0.5, 6, 2, 3, rng),
    }
    for name, W in cases.items():
        assert W.ndim == 3 and W.shape[1:] == (6 if name not in ("star",) else 8, 2), name
        _assert_orthonormal(W)
    assert head_diversity_index(cases["orthogonal"]) == pytest.approx(1.0)
    assert head_diversity_index(cases["identical"]) == pytest.approx(0.0, abs=1e-12)


def test_orthonormalize_sign_convention():
    A = np.random.default_rng(1).standard_normal((5, 3))
    Q = heads.orthonormalize(A)
    R = Q.T @ A
    np.testing.assert_allclose(np.tril(R, -1), 0, atol=1e-12)
    assert np.all(np.diag(R) > 0)
    np.testing.assert_allclose(heads.orthonormalize(Q), Q, atol=1e-14)  # a frame is its own basis


def test_interpolated_endpoints():
    W0 = heads.interpolated_heads(0.0, 6, 2, 3, np.random.default_rng(2))
    assert head_diversity_index(W0) == pytest.approx(0.0, abs=1e-12)
    W1 = heads.interpolated_heads(1.0, 6, 2, 3, np.random.default_rng(2))
    rng = np.random.default_rng(2)
    heads.haar_basis(6, 2, rng)  # U
    np.testing.assert_allclose(W1, heads.haar_heads(6, 2, 3, rng), atol=1e-12)  # the Z_j themselves
    low = np.mean(
        [head_diversity_index(heads.interpolated_heads(0.2, 6, 2, 3, np.random.default_rng(s))) for s in range(10)]
    )
    high = np.mean(
        [head_diversity_index(heads.interpolated_heads(0.8, 6, 2, 3, np.random.default_rng(s))) for s in range(10)]
    )
    assert low < high


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: heads.orthogonal_heads(4, 2, 3), "n_heads"),
        (lambda: heads.star_heads(0.1, 6, 2, 3), "n_heads"),
        (lambda: heads.pair_heads(0.1, 3, 2), "d"),
        (lambda: heads.pair_heads(np.nan, 4, 2), "theta"),
        (lambda: heads.identical_heads(4, 5, 2), "d_k"),
        (lambda: heads.identical_heads(4, 2, 2, basis=np.eye(3)), "basis"),
        (lambda: heads.haar_heads(4, 2, 2, rng=1), "rng"),
        (lambda: heads.interpolated_heads(1.5, 4, 2, 2, np.random.default_rng(0)), "t"),
        (lambda: heads.orthonormalize(np.ones((4, 2))), "A"),
    ],
)
def test_family_bad_input(call, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call()


GRADED_ANGLES = np.radians([0, 20, 35, 50, 65, 80])


def test_graded_heads_geometry():
    W = heads.graded_heads(GRADED_ANGLES, 8)
    assert W.shape == (6, 8, 1)
    np.testing.assert_allclose(np.linalg.norm(W[:, :, 0], axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(W[:, 0, 0], np.cos(GRADED_ANGLES), rtol=1e-15)  # cosine with the signal direction e1
    G = W[:, :, 0] @ W[:, :, 0].T
    np.testing.assert_allclose(
        G, np.outer(np.cos(GRADED_ANGLES), np.cos(GRADED_ANGLES)) + np.diag(np.sin(GRADED_ANGLES) ** 2), atol=1e-15
    )


@pytest.mark.parametrize(
    "angles,d,name",
    [([0.1, 0.2], 2, "d"), ([[0.1]], 4, "angles"), ([], 4, "angles"), ([np.nan], 4, "angles"), ([0.1], 0, "d")],
)
def test_graded_heads_bad_input(angles, d, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        heads.graded_heads(angles, d)


# ---------------------------------------------------------------- head outputs


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    H=st.integers(1, 4),
    d_k=st.integers(1, 3),
    n=st.integers(1, 60),
    T=st.integers(1, 20),
    h=st.floats(0.05, 5.0),
)
def test_head_estimates_equal_nw_and_attention(seed, H, d_k, n, T, h):
    rng = np.random.default_rng(seed)
    d = d_k + 2
    W = rng.standard_normal((H, d, d_k))
    X, Xt = rng.standard_normal((n, d)), rng.standard_normal((T, d))
    Y = rng.standard_normal(n)
    gauss = heads.head_estimates(W, X, Y, Xt, bandwidth=h)
    att = heads.head_estimates(W, X, Y, Xt, kernel="attention")
    att_beta = heads.head_estimates(W, X, Y, Xt, kernel="attention", beta=1 / h)
    assert gauss.shape == (H, T)
    for j, w in enumerate(W):
        np.testing.assert_allclose(gauss[j], nw.nadaraya_watson(Xt @ w, X @ w, Y, h), rtol=0, atol=1e-12)
        np.testing.assert_allclose(att[j], nw.softmax_attention(Xt @ w, X @ w, Y), rtol=0, atol=1e-12)
        np.testing.assert_allclose(att_beta[j], nw.softmax_attention(Xt @ w, X @ w, Y, 1 / h), rtol=0, atol=1e-12)


def test_blocking_and_tiny_bandwidth():
    rng = np.random.default_rng(3)
    W = heads.haar_heads(5, 2, 3, rng)
    X, Xt, Y = rng.standard_normal((80, 5)), rng.standard_normal((33, 5)), rng.standard_normal(80)
    full = heads.head_estimates(W, X, Y, Xt, 0.4)
    blocked = heads._head_estimates(
        W, X, Y, Xt, "gaussian", heads._inv_scale("gaussian", 0.4, None, 2), block_entries=100
    )  # blocks of 32 queries, one head each
    np.testing.assert_allclose(full, blocked, rtol=0, atol=1e-14)  # BLAS may round differently per block
    # h -> 0: every head returns the response of its nearest projected key, never NaN
    tiny = heads.head_estimates(W, X, Y, Xt, 1e-4)
    for j, w in enumerate(W):
        nearest = np.argmin((((Xt @ w)[:, None, :] - (X @ w)[None]) ** 2).sum(axis=2), axis=1)
        np.testing.assert_allclose(tiny[j], Y[nearest], atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(X=np.zeros((5, 3))), "X"),
        (dict(Y=np.zeros(4)), "Y"),
        (dict(Y=np.array([0, 1, np.nan, 0, 0.0])), "Y"),
        (dict(queries=np.zeros((2, 3))), "queries"),
        (dict(projections=np.zeros((4, 2))), "projections"),
        (dict(projections=np.full((2, 4, 2), np.inf)), "projections"),
        (dict(bandwidth=None), "bandwidth"),
        (dict(bandwidth=-0.1), "bandwidth"),
        (dict(kernel="cosine"), "kernel"),
    ],
)
def test_head_estimates_bad_input(kwargs, name):
    args = dict(
        projections=heads.pair_heads(0.3, 4, 2),
        X=np.zeros((5, 4)),
        Y=np.zeros(5),
        queries=np.zeros((2, 4)),
        bandwidth=0.5,
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^{name}:"):
        heads.head_estimates(**args)


def test_combination_rules():
    est = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.0]])
    np.testing.assert_allclose(heads.combine(est), est.mean(axis=0))
    a = np.array([0.5, 0.3, 0.2])
    np.testing.assert_allclose(heads.combine(est, weights=a), a @ est)
    np.testing.assert_allclose(heads.combine(est, "sum", y_mean=1.5), 1.5 + (est - 1.5).sum(axis=0))
    np.testing.assert_allclose(heads.combine(est[:1], "sum", y_mean=7.0), est[0])  # H = 1: both rules agree
    with pytest.raises(ValueError, match="^weights:"):
        heads.combine(est, weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="^weights:"):
        heads.combine(est, weights=[0.8, 0.4, 0.1])  # "average" needs sum 1
    with pytest.raises(ValueError, match="^weights:"):
        heads.combine(est, weights=[0.5, np.nan, 0.5])
    with pytest.raises(ValueError, match="^y_mean:"):
        heads.combine(est, "sum")
    with pytest.raises(ValueError, match="^rule:"):
        heads.combine(est, "stack")


def test_config_and_ensemble_estimate():
    rng = np.random.default_rng(4)
    s = data.draw_sample(rng, "iso_exp", 100, 4, n_test=10)
    one = heads.HeadConfig(heads.identical_heads(4, 2, 1))
    three = heads.HeadConfig(heads.identical_heads(4, 2, 3))
    np.testing.assert_allclose(
        heads.ensemble_estimate(three, s.X, s.Y, s.X_test), heads.ensemble_estimate(one, s.X, s.Y, s.X_test), rtol=1e-14
    )
    summed = heads.HeadConfig(heads.pair_heads(0.5, 4, 2), rule="sum")
    est = heads.head_estimates(summed.projections, s.X, s.Y, s.X_test, 0.5)
    np.testing.assert_allclose(
        heads.ensemble_estimate(summed, s.X, s.Y, s.X_test), s.Y.mean() + (est - s.Y.mean()).sum(axis=0), rtol=1e-14
    )
    with pytest.raises(ValueError, match="^weights:"):
        heads.HeadConfig(heads.pair_heads(0.5, 4, 2), weights=[1.0])
    with pytest.raises(ValueError, match="^rule:"):
        heads.HeadConfig(heads.pair_heads(0.5, 4, 2), rule="max")
    with pytest.raises(ValueError, match="^config:"):
        heads.ensemble_estimate(np.zeros((2, 4, 2)), s.X, s.Y, s.X_test)
