"""Tests of mhanw.heads: head families, head outputs, combination rules, and the
integrated-MSE checks of Thm 4.2 (T4.2a-e of THEORY.md Section 8, at reduced sizes)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from mhanw import data, heads, montecarlo, nw
from mhanw.infra import sweep
from mhanw.diversity import head_diversity_index, principal_angles

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
    low = np.mean([head_diversity_index(heads.interpolated_heads(0.2, 6, 2, 3, np.random.default_rng(s)))
                   for s in range(10)])
    high = np.mean([head_diversity_index(heads.interpolated_heads(0.8, 6, 2, 3, np.random.default_rng(s)))
                    for s in range(10)])
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


# ---------------------------------------------------------------- head outputs


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), H=st.integers(1, 4), d_k=st.integers(1, 3), n=st.integers(1, 60),
       T=st.integers(1, 20), h=st.floats(0.05, 5.0))
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
        np.testing.assert_allclose(att_beta[j], nw.softmax_attention(Xt @ w, X @ w, Y, 1 / h), rtol=0,
                                   atol=1e-12)


def test_blocking_and_tiny_bandwidth():
    rng = np.random.default_rng(3)
    W = heads.haar_heads(5, 2, 3, rng)
    X, Xt, Y = rng.standard_normal((80, 5)), rng.standard_normal((33, 5)), rng.standard_normal(80)
    full = heads.head_estimates(W, X, Y, Xt, 0.4)
    blocked = heads._head_estimates(W, X, Y, Xt, "gaussian", heads._inv_scale("gaussian", 0.4, None, 2),
                                    block_entries=100)  # blocks of 32 queries, one head each
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
        (dict(kernel="laplace"), "kernel"),
    ],
)
def test_head_estimates_bad_input(kwargs, name):
    args = dict(projections=heads.pair_heads(0.3, 4, 2), X=np.zeros((5, 4)), Y=np.zeros(5),
                queries=np.zeros((2, 4)), bandwidth=0.5)
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
        heads.combine(est, "concat")


def test_config_and_ensemble_estimate():
    rng = np.random.default_rng(4)
    s = data.draw_sample(rng, "iso_exp", 100, 4, n_test=10)
    one = heads.HeadConfig(heads.identical_heads(4, 2, 1))
    three = heads.HeadConfig(heads.identical_heads(4, 2, 3))
    np.testing.assert_allclose(heads.ensemble_estimate(three, s.X, s.Y, s.X_test),
                               heads.ensemble_estimate(one, s.X, s.Y, s.X_test), rtol=1e-14)
    summed = heads.HeadConfig(heads.pair_heads(0.5, 4, 2), rule="sum")
    est = heads.head_estimates(summed.projections, s.X, s.Y, s.X_test, 0.5)
    np.testing.assert_allclose(heads.ensemble_estimate(summed, s.X, s.Y, s.X_test),
                               s.Y.mean() + (est - s.Y.mean()).sum(axis=0), rtol=1e-14)
    with pytest.raises(ValueError, match="^weights:"):
        heads.HeadConfig(heads.pair_heads(0.5, 4, 2), weights=[1.0])
    with pytest.raises(ValueError, match="^rule:"):
        heads.HeadConfig(heads.pair_heads(0.5, 4, 2), rule="max")
    with pytest.raises(ValueError, match="^config:"):
        heads.ensemble_estimate(np.zeros((2, 4, 2)), s.X, s.Y, s.X_test)


def test_integrated_mse_definition_and_crn():
    cfgs = [heads.pair_heads(0.3, 4, 2), heads.pair_heads(0.3, 4, 2),
            heads.HeadConfig(heads.pair_heads(1.2, 4, 2), bandwidth=0.8, rule="sum", label="sum")]
    res = montecarlo.integrated_mse(cfgs, "aniso", n=120, n_test=30, n_rep=4, seed=9)
    assert res.errors.shape == (3, 4) and res.labels == ("", "", "sum")
    np.testing.assert_array_equal(res.errors[0], res.errors[1])  # same data for every configuration
    assert res.paired_difference(0, 1) == (0.0, 0.0)
    # replicate 2 recomputed by hand from its stream
    rng = np.random.default_rng(sweep.spawn_streams(9, 4)[2])
    s = data.draw_sample(rng, "aniso", 120, 4, n_test=30)
    for i, c in enumerate(cfgs):
        c = c if isinstance(c, heads.HeadConfig) else heads.HeadConfig(c)
        f = heads.ensemble_estimate(c, s.X, s.Y, s.X_test)
        assert res.errors[i, 2] == pytest.approx(np.mean((f - s.m_test) ** 2), rel=1e-12)
    # pointwise estimates use the same training samples
    x = s.X_test[:2]
    (est,) = montecarlo.pointwise_estimates([cfgs[0]], "aniso", x, n=120, n_rep=4, seed=9)
    assert est.shape == (4, 2, 2)
    np.testing.assert_allclose(est[2], heads.head_estimates(cfgs[0], s.X, s.Y, x, 0.5), rtol=1e-12)


def test_integrated_mse_bad_input():
    W = heads.pair_heads(0.3, 4, 2)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([], "iso_exp", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([W, heads.orthogonal_heads(6, 2, 2)], "iso_exp", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([heads.pair_heads(0.3, 2, 1)], "sin13", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^regression:"):
        montecarlo.integrated_mse([W], "sine", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^sigma:"):
        montecarlo.integrated_mse([W], "iso_exp", 10, 5, 2, 0, sigma=-1.0)
    with pytest.raises(ValueError, match="^n_test:"):
        montecarlo.integrated_mse([W], "iso_exp", 10, 0, 2, 0)
    with pytest.raises(ValueError, match="^x:"):
        montecarlo.pointwise_estimates([W], "iso_exp", np.zeros(3), 10, 2, 0)


# ---------------------------------------------------------------- Thm 4.2 (THEORY.md Section 8)

THETAS = np.radians([0, 30, 60, 90])  # THEORY: 0, 15, ..., 90 degrees


@pytest.fixture(scope="module")
def pair_family_imse():
    """(A) at reduced size: pair(theta), d = 4, d_k = 2, n = 500, h = 0.5, T = 100, R = 100 (THEORY: T = 300, R = 200)."""
    configs = [heads.pair_heads(t, 4, 2) for t in THETAS]
    return {m: montecarlo.integrated_mse(configs, m, n=500, n_test=100, n_rep=100, seed=421, n_jobs=2)
            for m in ("iso_exp", "iso_cos", "aniso")}


@pytest.mark.parametrize("m", ["iso_exp", "iso_cos"])
def test_T42a_isotropic_imse_never_increases_along_pair(pair_family_imse, m):
    res = pair_family_imse[m]
    for i in range(len(THETAS) - 1):
        diff, se = res.paired_difference(i + 1, i)
        assert diff <= 3 * se, (m, i)
    diff, se = res.paired_difference(len(THETAS) - 1, 0)
    assert diff < -3 * se  # and diversity helps overall


def test_T42b_aniso_imse_increases_with_hdi(pair_family_imse):
    diff, se = pair_family_imse["aniso"].paired_difference(len(THETAS) - 1, 0)
    assert diff > 3 * se  # documented failure of S-true


def test_T42c_equal_hdi_different_imse():
    """(B): P = (span{e1,e2}, span{e1,e3}) vs Q = pair(45 deg), HDI_PA 0.5 both; iso_cos.

    R = 1600 (THEORY quick: 800): at R = 800 the paired z-score was 3.2-4.8 over five seeds,
    too close to the 3-s.e. threshold for a verdict that must survive a change of seed."""
    e = np.eye(4)
    P = np.stack([e[:, [0, 1]], e[:, [0, 2]]])
    Q = heads.pair_heads(np.pi / 4, 4, 2)
    assert head_diversity_index(P) == pytest.approx(head_diversity_index(Q)) == pytest.approx(0.5)
    np.testing.assert_allclose(principal_angles(P[0], P[1]), [0, np.pi / 2], atol=1e-12)
    res = montecarlo.integrated_mse([P, Q], "iso_cos", n=500, n_test=100, n_rep=1600, seed=422, n_jobs=2)
    diff, se = res.paired_difference(0, 1)
    assert abs(diff) > 3 * se  # documented failure: the IMSE is not a function of HDI


@pytest.fixture(scope="module")
def random_configurations():
    """(D) at reduced size: H = 3, d = 6, d_k = 2, 12 interpolated configurations plus orthogonal
    blocks, m = iso_cos6, n = 400, h = 0.6, T = 100, R = 100 (THEORY: 24 configurations, T = 200, R = 150)."""
    rng = np.random.default_rng(423)
    configs = [heads.interpolated_heads(t, 6, 2, 3, rng) for t in np.linspace(0, 1, 12)]
    configs.append(heads.orthogonal_heads(6, 2, 3))
    hdi = np.array([head_diversity_index(W) for W in configs])
    res = montecarlo.integrated_mse(configs, "iso_cos6", n=400, n_test=100, n_rep=100, seed=424, bandwidth=0.6,
                               n_jobs=2)
    return hdi, res


def test_T42d_rank_correlation_and_violations(random_configurations):
    hdi, res = random_configurations
    assert spearmanr(hdi, res.mean).statistic <= -0.8
    violations = 0
    for i in range(len(hdi)):
        for j in range(len(hdi)):
            if hdi[i] > hdi[j] + 0.02:
                diff, se = res.paired_difference(i, j)
                violations += diff > 3 * se
    assert violations <= 1


def test_T42e_identical_heads_are_worst_for_isotropic_m(pair_family_imse, random_configurations):
    for m in ("iso_exp", "iso_cos"):
        res = pair_family_imse[m]  # theta = 0 is the identical configuration
        for i in range(1, len(THETAS)):
            diff, se = res.paired_difference(i, 0)
            assert diff <= 3 * se
    hdi, res = random_configurations
    assert hdi[0] == pytest.approx(0.0, abs=1e-12)  # t = 0: identical heads
    for i in range(1, len(hdi)):
        diff, se = res.paired_difference(i, 0)
        assert diff <= 3 * se
