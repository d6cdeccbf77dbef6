"""The random-forest analogy: Breiman's 1 - rho_bar and the HDI (``book/claims.md``, 'The random-forest analogy').

Library: :func:`mhanw.decomposition.breiman_quantities` and
:func:`mhanw.decomposition.jackknife`.  Checks: Breiman's identity (exact),
orthogonal heads keep 1 - rho_bar below 1 (documented), rho(phi) matches
the closed form, and at a fixed angle rho grows with h; at reduced sizes
(the chapter: R = 300 / 4000; here R = 60 / 2000).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw import data, heads, montecarlo
from mhanw.decomposition import breiman_quantities, jackknife
from mhanw.covariance import head_correlation

BANDWIDTHS = (0.05, 0.1, 0.2, 0.5, 1.0)

# --------------------------------------------------------------------------- Breiman's identity and the helpers


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), R=st.integers(2, 50), H=st.integers(2, 7), m=st.integers(1, 5))
def test_breiman_identity_with_empirical_moments(seed, R, H, m):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((H, H))
    est = rng.standard_normal((R, m, H)) @ A.T + rng.standard_normal(H)  # arbitrary covariance and means
    est = est.transpose(0, 2, 1)  # (R, H, m)
    q = breiman_quantities(est, rng.standard_normal(m))
    assert q.breiman_variance == pytest.approx(q.ensemble_variance, rel=1e-12)
    assert q.ensemble_variance == pytest.approx(np.mean(np.var(est.mean(axis=1), axis=0)), rel=1e-13)
    cov = np.mean([np.cov(est[:, :, i].T, ddof=0) for i in range(m)], axis=0)
    assert q.mean_variance == pytest.approx(np.trace(cov) / H, rel=1e-12)
    assert q.mean_covariance == pytest.approx((cov.sum() - np.trace(cov)) / (H * (H - 1)), rel=1e-9, abs=1e-12)
    assert q.rho_bar == pytest.approx(q.mean_covariance / q.mean_variance, rel=1e-12)
    assert q.n_heads == H and q.vector().shape == (6,)


def test_breiman_equicorrelated_draws_recover_the_population_formula():
    """200 000 equicorrelated Gaussian 'heads': rho_bar and Var(avg) within 3 s.e. of V (rho + (1 - rho)/H)."""
    H, V, rho = 4, 2.0, 0.3
    cov = V * ((1 - rho) * np.eye(H) + rho)
    est = np.random.default_rng(12).multivariate_normal(np.zeros(H), cov, size=200_000)
    (r, var), (r_se, var_se) = jackknife(lambda e: (lambda q: [q.rho_bar, q.ensemble_variance])(
        breiman_quantities(e, 0.0)), [est], 20)
    assert abs(r - rho) < 3 * r_se
    assert abs(var - V * (rho + (1 - rho) / H)) < 3 * var_se


def test_breiman_quantities_identical_heads_and_bad_input():
    est = np.repeat(np.random.default_rng(0).standard_normal((30, 1, 4)), 3, axis=1)
    q = breiman_quantities(est, np.zeros(4))
    assert q.rho_bar == pytest.approx(1.0, rel=1e-14)
    assert q.ensemble_variance == pytest.approx(q.mean_variance, rel=1e-14)
    with pytest.raises(ValueError, match="^estimates:"):
        breiman_quantities(est[:, :1], np.zeros(4))
    with pytest.raises(ValueError, match="^target:"):
        breiman_quantities(est, np.zeros(3))


def test_jackknife():
    x = np.random.default_rng(1).standard_normal((40, 3))
    theta, se = jackknife(lambda a: a.mean(axis=0), [x], 40)  # delete-one jackknife of a mean: sd / sqrt(R)
    np.testing.assert_allclose(theta, x.mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(se, x.std(axis=0, ddof=1) / np.sqrt(40), rtol=1e-12)
    # grouped: the s.e. of a mean is the s.d. of the block means / sqrt(B), for equal blocks
    theta, se = jackknife(np.mean, x[:, 0], 8)
    blocks = x[:, 0].reshape(8, 5).mean(axis=1)
    assert se == pytest.approx(blocks.std(ddof=1) / np.sqrt(8), rel=1e-12)
    # several arrays: a paired difference
    y = x[:, 0] + 0.01 * x[:, 1]
    _, se_pair = jackknife(lambda a, b: a.mean() - b.mean(), [x[:, 0], y], 40)
    assert se_pair == pytest.approx((x[:, 0] - y).std(ddof=1) / np.sqrt(40), rel=1e-12)
    for bad, name in ((dict(n_blocks=1), "n_blocks"), (dict(n_blocks=41), "n_blocks"), (dict(n_blocks=2.0), "n_blocks")):
        with pytest.raises(ValueError, match=f"^{name}:"):
            jackknife(np.mean, [x], **bad)
    with pytest.raises(ValueError, match="^arrays:"):
        jackknife(lambda a, b: 0.0, [x, x[:5]], 4)
    with pytest.raises(ValueError, match="^statistic:"):
        jackknife(None, [x], 4)


# --------------------------------------------------------------------------- orthogonal heads


def test_orthogonal_heads_keep_a_correlation():
    """star(90 deg), H = 4, d_k = 2, d = 10, h = 0.5: HDI_PA = 1, yet 1 - rho_bar < 1 by > 3 s.e. (documented)."""
    x = np.random.default_rng(8).standard_normal((100, 10))
    cfgs = [heads.star_heads(t, 10, 2, 4) for t in (0.0, np.pi / 2)]
    ident, orth = montecarlo.pointwise_estimates(cfgs, "iso_exp", x, n=500, n_rep=60, seed=81, bandwidth=0.5, n_jobs=2)
    target = data.regression_function("iso_exp")(x)
    assert breiman_quantities(ident, target).rho_bar == pytest.approx(1.0, rel=1e-12)  # HDI_PA = 0
    gap, se = jackknife(lambda e: 1.0 - breiman_quantities(e, target).rho_bar, [orth], 20)
    assert 0 < gap < 1 - 3 * se


# --------------------------------------------------------------------------- closed form of rho; rho against the bandwidth


@pytest.fixture(scope="module")
def one_dim_correlations():
    """rho of two 1-D heads at x = 0 (m = 0, sigma = 1, d = 2, n = 2000) for phi in {45, 90} deg, R = 2000."""
    phis = np.radians([45.0, 90.0])
    cfgs = [heads.HeadConfig(np.array([[[1.0], [0.0]], [[np.cos(p)], [np.sin(p)]]]), bandwidth=h)
            for p in phis for h in BANDWIDTHS]
    ests = montecarlo.pointwise_estimates(cfgs, "zero", np.zeros(2), n=2000, n_rep=2000, seed=82, sigma=1.0, n_jobs=2)
    rho = lambda *es: np.array([breiman_quantities(e, 0.0).rho_bar for e in es])  # noqa: E731
    return phis, ests, rho


def test_correlation_matches_closed_form(one_dim_correlations):
    phis, ests, rho = one_dim_correlations
    value, se = jackknife(rho, ests, 20)
    closed = np.array([head_correlation(p, h) for p in phis for h in BANDWIDTHS])
    assert np.all(np.abs(value - closed) <= 3 * se + 0.05 * closed), (value, se, closed)


def test_correlation_increases_with_bandwidth(one_dim_correlations):
    _, ests, rho = one_dim_correlations
    k = len(BANDWIDTHS)
    steps, se = jackknife(lambda *es: np.diff(rho(*es)), ests[:k], 20)  # phi = 45 deg, paired over h
    assert np.all(steps > 3 * se), (steps, se)
