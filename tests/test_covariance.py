"""Tests of mhanw.covariance: the covariance of two heads, the printed bound of Lemma 4.1 and its
first-order form, against Monte Carlo."""

import math

import numpy as np
import pytest
import sympy as sp

from mhanw import data, heads, montecarlo
from mhanw.covariance import (
    covariance_factor,
    covariance_factor_symbolic,
    first_order_covariance,
    head_correlation,
    kernel_overlap,
    printed_covariance_bound,
)
from mhanw.decomposition import breiman_quantities, covariance_with_se, jackknife

# ---------------------------------------------------------------- Lemma 4.1

X_LEMMA = np.array([0.3, -0.2, 0.1, 0.4])


def test_printed_bound_value():
    theta, n, h = 0.5, 500, 0.5
    W = heads.pair_heads(theta, 4, 2)
    L = data.regression_function("sin13").lipschitz_constant()
    p = np.exp(-0.5 * (0.3**2 + 0.2**2)) / (2 * np.pi)
    expected = L**2 * (2 * np.cos(theta) ** 2 / 4) / (n * h**2 * p)
    assert printed_covariance_bound(W[0], W[1], X_LEMMA, L, n, h) == pytest.approx(expected, rel=1e-12)
    assert printed_covariance_bound(W[0], W[1], X_LEMMA, 0.0, n, h) == 0.0
    with pytest.raises(ValueError, match="^lipschitz:"):
        printed_covariance_bound(W[0], W[1], X_LEMMA, -1.0, n, h)
    with pytest.raises(ValueError, match="^x:"):
        printed_covariance_bound(W[0], W[1], X_LEMMA[:3], 1.0, n, h)


@pytest.fixture(scope="module")
def lemma_covariances():
    """The check of the printed bound at theta in {0, 90} degrees, R = 1500 (the chapter: 6000)."""
    configs = [heads.pair_heads(t, 4, 2) for t in (0.0, np.pi / 2)]
    out = {}
    for m in ("zero", "sin13"):
        ests = montecarlo.pointwise_estimates(configs, m, X_LEMMA, n=500, n_rep=1500, seed=41, bandwidth=0.5, n_jobs=2)
        L = data.regression_function(m).lipschitz_constant()
        for theta, W, est in zip((0, 90), configs, ests):
            cov, se = covariance_with_se(est[:, 0, 0], est[:, 1, 0])
            out[m, theta] = (cov, se, printed_covariance_bound(W[0], W[1], X_LEMMA, L, 500, 0.5))
    return out


@pytest.mark.statistical
def test_covariance_is_positive_where_the_printed_bound_is_zero(lemma_covariances):
    for theta in (0, 90):
        cov, se, bound = lemma_covariances["zero", theta]
        assert bound == 0.0
        assert cov > 3 * se  # documented failure: the noise term is missing from the bound


@pytest.mark.statistical
def test_printed_bound_fails_at_90_degrees_for_sin13(lemma_covariances):
    cov, se, bound = lemma_covariances["sin13", 90]
    assert bound < 1e-30  # vanishes to rounding (cos(pi/2) != 0 in floating point)
    assert cov > bound + 3 * se  # documented failure
    cov0, se0, bound0 = lemma_covariances["sin13", 0]
    assert cov0 + 3 * se0 < bound0  # at small angles the printed bound holds


@pytest.mark.statistical
def test_first_order_covariance_matches_the_kernel_overlap(lemma_covariances):
    for theta, W in ((0, heads.pair_heads(0.0, 4, 2)), (90, heads.pair_heads(np.pi / 2, 4, 2))):
        cov, se, _ = lemma_covariances["zero", theta]
        first_order = 0.25 * kernel_overlap(W[0], W[1], X_LEMMA, 0.5) / 500
        assert abs(cov - first_order) <= 3 * se + 0.1 * first_order


@pytest.mark.statistical
def test_closed_form_covariance_factor_matches_monte_carlo():
    """1-D heads, x = 0, m = 0, sigma = 1, d = 2, n = 2000; R = 1500 (the chapter: 4000)."""
    phis = np.radians([0, 10, 30, 60, 90])
    n = 2000
    configs = []
    for h in (0.1, 0.3):
        for phi in phis:
            W = np.array([[[1.0], [0.0]], [[np.cos(phi)], [np.sin(phi)]]])
            configs.append(heads.HeadConfig(W, bandwidth=h))
    ests = montecarlo.pointwise_estimates(configs, "zero", np.zeros(2), n=n, n_rep=1500, seed=43, sigma=1.0, n_jobs=2)
    for c, est in zip(configs, ests):
        phi = np.arctan2(c.projections[1, 1, 0], c.projections[1, 0, 0])
        cov, se = covariance_with_se(est[:, 0, 0], est[:, 1, 0])
        closed = covariance_factor(phi, c.bandwidth)
        assert abs(n * cov - closed) <= 3 * n * se + 0.05 * closed, (c.bandwidth, np.degrees(phi))


def test_symbolic_covariance_factor_matches_the_closed_form():
    ratio, (h, phi) = covariance_factor_symbolic()
    closed = (1 + h**2) / sp.sqrt((1 + h**2) ** 2 - sp.cos(phi) ** 2)
    assert sp.simplify(ratio - closed) == 0
    assert sp.simplify(ratio.subs(phi, sp.pi / 2) ** 2) == 1  # and the ratio is positive
    assert sp.limit(ratio.subs(phi, 0) * sp.sqrt(2) * h, h, 0) == 1


def test_closed_form_helpers_agree():
    for h in (0.1, 0.3, 1.0):
        for phi in (0.0, 0.3, np.pi / 2):
            u = np.array([[1.0], [0.0]])
            v = np.array([[np.cos(phi)], [np.sin(phi)]])
            assert kernel_overlap(u, v, np.zeros(2), h) == pytest.approx(covariance_factor(phi, h), rel=1e-12)
            rho = covariance_factor(phi, h) / covariance_factor(0.0, h)
            assert head_correlation(phi, h) == pytest.approx(rho, rel=1e-12)
        assert covariance_factor(0.0, h) == pytest.approx((1 + h**2) / (h * math.sqrt(2 + h**2)))
    assert covariance_factor(np.pi / 2, 0.3) == pytest.approx(1.0)
    # orthogonal coordinate heads: kappa = 1 at every x (no correlation floor beyond 1/n)
    W = heads.orthogonal_heads(4, 2, 2)
    assert kernel_overlap(W[0], W[1], X_LEMMA, 0.5) == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="^bandwidth:"):
        covariance_factor(0.1, -1.0)


# ---------------------------------------------------------------- Lemma 4.1, corrected first-order statement


def test_first_order_covariance_zero_m_is_the_kernel_overlap():
    for theta in (0.0, 0.7, np.pi / 2):
        W = heads.pair_heads(theta, 4, 2)
        fo = first_order_covariance(W[0], W[1], X_LEMMA, 0.5, n=500, sigma=0.5, regression="zero")
        assert fo.signal == 0.0 and fo.limits == (0.0, 0.0)
        assert (
            fo.covariance == fo.noise == pytest.approx(0.25 * kernel_overlap(W[0], W[1], X_LEMMA, 0.5) / 500, rel=1e-14)
        )
    # one head with itself: the first-order variance, kappa = single-head variance factor
    u = np.array([[1.0], [0.0]])
    fo = first_order_covariance(u, u, np.zeros(2), 0.3, n=1, sigma=1.0)
    assert fo.covariance == pytest.approx(covariance_factor(0.0, 0.3), rel=1e-12)


def test_first_order_signal_term_matches_monte_carlo_integration():
    """kappa * D against a direct Monte Carlo integral of E[K K' (m - mu)(m - mu')] / (E K E K')."""
    W = heads.pair_heads(np.radians(60), 4, 2)
    h = 0.5
    fo = first_order_covariance(W[0], W[1], X_LEMMA, h, n=1, sigma=0.0, regression="sin13")
    X = np.random.default_rng(7).standard_normal((400_000, 4))
    m = data.regression_function("sin13")(X)
    K = [np.exp(-(((X - X_LEMMA) @ w) ** 2) @ np.ones(2) / (2 * h * h)) for w in W]
    mu = [np.mean(k * m) / np.mean(k) for k in K]
    direct = np.mean(K[0] * K[1] * (m - mu[0]) * (m - mu[1])) / (K[0].mean() * K[1].mean())
    assert fo.limits == pytest.approx(mu, abs=0.01)  # Monte Carlo s.e. about 0.002
    assert fo.covariance == pytest.approx(direct, rel=0.02)
    # the quadrature has converged
    fine = first_order_covariance(W[0], W[1], X_LEMMA, h, n=1, sigma=0.0, regression="sin13", nodes=24)
    assert fine.covariance == pytest.approx(fo.covariance, rel=1e-8)


@pytest.mark.statistical
def test_first_order_covariance_matches_sin13_monte_carlo(lemma_covariances):
    """Corrected Lemma 4.1: the signal term accounts for the covariance the noise term misses."""
    for theta, W in ((0, heads.pair_heads(0.0, 4, 2)), (90, heads.pair_heads(np.pi / 2, 4, 2))):
        cov, se, _ = lemma_covariances["sin13", theta]
        fo = first_order_covariance(W[0], W[1], X_LEMMA, 0.5, n=500, sigma=0.5, regression="sin13")
        assert abs(cov - fo.covariance) <= 3 * se + 0.1 * fo.covariance, theta
        assert cov > fo.noise + 3 * se  # the noise term alone is not enough for a non-constant m


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(x=np.zeros(3)), "x"),
        (dict(bandwidth=0.0), "bandwidth"),
        (dict(n=0), "n"),
        (dict(sigma=-1.0), "sigma"),
        (dict(regression="nope"), "regression"),
        (dict(nodes=1), "nodes"),
        (dict(nodes=10**3), "nodes"),
        (dict(W_jp=np.eye(5)[:, :2]), "W_jp"),
    ],
)
def test_first_order_covariance_bad_input(kwargs, name):
    W = heads.pair_heads(0.3, 4, 2)
    args = dict(W_j=W[0], W_jp=W[1], x=X_LEMMA, bandwidth=0.5, n=500)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^{name}:"):
        first_order_covariance(**args)


BANDWIDTHS = (0.05, 0.1, 0.2, 0.5, 1.0)


@pytest.fixture(scope="module")
def one_dim_correlations():
    """rho of two 1-D heads at x = 0 (m = 0, sigma = 1, d = 2, n = 2000) for phi in {45, 90} deg, R = 2000."""
    phis = np.radians([45.0, 90.0])
    cfgs = [
        heads.HeadConfig(np.array([[[1.0], [0.0]], [[np.cos(p)], [np.sin(p)]]]), bandwidth=h)
        for p in phis
        for h in BANDWIDTHS
    ]
    ests = montecarlo.pointwise_estimates(cfgs, "zero", np.zeros(2), n=2000, n_rep=2000, seed=82, sigma=1.0, n_jobs=2)
    rho = lambda *es: np.array([breiman_quantities(e, 0.0).rho_bar for e in es])  # noqa: E731
    return phis, ests, rho


@pytest.mark.statistical
def test_head_correlation_matches_its_closed_form(one_dim_correlations):
    phis, ests, rho = one_dim_correlations
    value, se = jackknife(rho, ests, 20)
    closed = np.array([head_correlation(p, h) for p in phis for h in BANDWIDTHS])
    assert np.all(np.abs(value - closed) <= 3 * se + 0.05 * closed), (value, se, closed)


@pytest.mark.statistical
def test_head_correlation_increases_with_bandwidth(one_dim_correlations):
    _, ests, rho = one_dim_correlations
    k = len(BANDWIDTHS)
    steps, se = jackknife(lambda *es: np.diff(rho(*es)), ests[:k], 20)  # phi = 45 deg, paired over h
    assert np.all(steps > 3 * se), (steps, se)
