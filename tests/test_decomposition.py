"""Tests of mhanw.decomposition: the bias-variance-covariance identity of Thm 3.1, Breiman's quantities
(the random-forest analogy) and the jackknife."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw import data, heads, montecarlo
from mhanw.decomposition import bias_variance_covariance, breiman_quantities, covariance_with_se, jackknife

# Check design (quick): d = 6, d_k = 2, H = 3 Haar heads,
# n = 400, h = 0.5, sigma = 0.5, m = bvc, one test point with m(x) != 0, R = 2000.
X_POINT = np.array([[1.0, 1.0, 0.5, -0.4, 0.0, 0.2]])


@pytest.fixture(scope="module")
def bvc_estimates():
    W = heads.haar_heads(6, 2, 3, np.random.default_rng(2026))
    (est,) = montecarlo.pointwise_estimates([W], "bvc", X_POINT, n=400, n_rep=2000, seed=31, bandwidth=0.5)
    target = data.regression_function("bvc")(X_POINT)
    return est[:, :, 0], float(target[0])


def _rhs(dec):
    return dec.bias_squared + dec.variance_term + dec.covariance_term


@pytest.mark.statistical
@pytest.mark.parametrize("weights", [np.full(3, 1 / 3), np.array([0.5, 0.3, 0.2])])
def test_bvc_identity_is_exact_with_empirical_moments(bvc_estimates, weights):
    est, target = bvc_estimates
    assert abs(target) > 1.0
    dec = bias_variance_covariance(est, target, weights)
    assert dec.formula == "sum_to_one"
    assert abs(_rhs(dec) - dec.mse) <= 1e-12 * dec.mse
    # the MSE is the Monte Carlo MSE of the weighted ensemble
    assert dec.mse == pytest.approx(np.mean((est @ weights - target) ** 2), rel=1e-14)
    assert dec.printed_bias_squared == pytest.approx(dec.bias_squared, rel=1e-12)


@pytest.mark.statistical
def test_bvc_identity_with_ddof1_is_off_by_order_one_over_R(bvc_estimates):
    est, target = bvc_estimates
    a = np.array([0.5, 0.3, 0.2])
    dec = bias_variance_covariance(est, target, a)
    R = est.shape[0]
    C1 = np.cov(est, rowvar=False, ddof=1)
    rhs1 = dec.bias_squared + a @ C1 @ a
    gap = rhs1 - dec.mse
    assert gap == pytest.approx((a @ C1 @ a) / R, rel=1e-10)  # exactly Var/(R - 1) with ddof = 0 moments
    assert gap / dec.mse > 1e-9  # far above the 1e-12 of the ddof = 0 identity


@pytest.mark.statistical
def test_printed_bias_term_fails_when_weights_do_not_sum_to_one(bvc_estimates):
    est, target = bvc_estimates
    a = np.array([0.8, 0.4, 0.1])
    dec = bias_variance_covariance(est, target, a)
    assert dec.formula == "corrected" and dec.weights_sum == pytest.approx(1.3)
    printed = dec.printed_bias_squared + dec.variance_term + dec.covariance_term
    assert abs(printed - dec.mse) / dec.mse >= 0.1  # documented failure of the printed formula
    assert abs(_rhs(dec) - dec.mse) <= 1e-12 * dec.mse
    assert "sum_j a_j - 1" in dec.formula_text


def test_identical_heads_do_not_reduce_variance():
    x = X_POINT[:, :4]
    configs = [heads.identical_heads(4, 2, H) for H in (1, 2, 3, 4)]
    ests = montecarlo.pointwise_estimates(configs, "bvc", x, n=300, n_rep=300, seed=5)
    v1 = np.var(ests[0][:, 0, 0])
    target = data.regression_function("bvc")(x)
    for H, est in zip((1, 2, 3, 4), ests):
        avg = est.mean(axis=1)[:, 0]
        assert np.var(avg) == pytest.approx(v1, rel=1e-12)
        dec = bias_variance_covariance(est, target, np.full(H, 1 / H))
        assert (dec.variance_term + dec.covariance_term).item() == pytest.approx(v1, rel=1e-12)


def _random_problem(seed, R, H, m, weight_sum):
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((H, H))
    est = rng.standard_normal((R, m, H)) @ mix + rng.standard_normal(H) + 0.3
    est = est.transpose(0, 2, 1)  # (R, H, m)
    target = rng.standard_normal(m)
    a = rng.standard_normal(H)
    if weight_sum is not None:
        a = a + (weight_sum - a.sum()) / H
    return est, target, a


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    R=st.integers(2, 60),
    H=st.integers(1, 6),
    m=st.integers(1, 4),
    weight_sum=st.sampled_from([1.0, None]),
)
def test_identity_holds_for_any_input(seed, R, H, m, weight_sum):
    est, target, a = _random_problem(seed, R, H, m, weight_sum)
    dec = bias_variance_covariance(est, target, a)
    scale = dec.mse + dec.bias_squared + dec.variance_term + np.abs(dec.covariance_term)
    np.testing.assert_array_less(np.abs(_rhs(dec) - dec.mse), 1e-12 * scale + 1e-300)
    assert dec.mse.shape == (m,)
    # integrated over the test points, the identity still holds
    avg = dec.averaged()
    assert abs(avg.bias_squared + avg.variance_term + avg.covariance_term - avg.mse) <= 1e-12 * float(np.mean(scale))
    assert avg.mse == pytest.approx(float(np.mean(dec.mse)), rel=1e-14)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), R=st.integers(2, 60), H=st.integers(2, 6))
def test_breiman_identity_for_any_estimates(seed, R, H):
    est, target, _ = _random_problem(seed, R, H, 1, None)
    est = est[:, :, 0]
    dec = bias_variance_covariance(est, float(target[0]), np.full(H, 1 / H))
    var_avg = np.var(est.mean(axis=1))
    breiman = dec.mean_variance * (dec.rho_bar + (1 - dec.rho_bar) / H)
    assert breiman == pytest.approx(var_avg, rel=1e-12)
    assert dec.variance_term + dec.covariance_term == pytest.approx(var_avg, rel=1e-12)


def test_scalar_shapes_and_mse_se():
    est, target, a = _random_problem(1, 50, 3, 1, 1.0)
    dec = bias_variance_covariance(est[:, :, 0], float(target[0]), a)
    assert isinstance(dec.mse, float) and dec.bias.shape == (3,) and dec.covariance.shape == (3, 3)
    sq = (est[:, :, 0] @ a - target[0]) ** 2
    assert dec.mse_se == pytest.approx(sq.std(ddof=1) / np.sqrt(50))
    assert dec.averaged() is dec


def test_covariance_with_se():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 100, 3))
    cov, se = covariance_with_se(x, y)
    ref = [np.cov(x[:, i], y[:, i], ddof=0)[0, 1] for i in range(3)]
    np.testing.assert_allclose(cov, ref, rtol=1e-12)
    assert se.shape == (3,) and np.all(se > 0)
    with pytest.raises(ValueError, match="^y:"):
        covariance_with_se(x, y[:, :2])


@pytest.mark.parametrize(
    "estimates, target, weights, name",
    [
        (np.zeros(5), 0.0, np.ones(1), "estimates"),
        (np.zeros((5, 2, 3, 1)), 0.0, np.ones(2), "estimates"),
        (np.full((5, 2), np.nan), 0.0, np.ones(2) / 2, "estimates"),
        (np.zeros((5, 2)), np.zeros(2), np.ones(2) / 2, "target"),
        (np.zeros((5, 2, 3)), np.zeros(2), np.ones(2) / 2, "target"),
        (np.zeros((5, 2, 3)), np.nan, np.ones(2) / 2, "target"),
        (np.zeros((5, 2)), 0.0, np.ones(3) / 3, "weights"),
        (np.zeros((5, 2)), 0.0, np.array([0.5, np.nan]), "weights"),
        (np.zeros((5, 2)), 0.0, np.ones((2, 1)), "weights"),
    ],
)
def test_bad_input(estimates, target, weights, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        bias_variance_covariance(estimates, target, weights)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), R=st.integers(2, 50), H=st.integers(2, 7), m=st.integers(1, 5))
def test_breiman_identity_with_empirical_moments_of_correlated_heads(seed, R, H, m):
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


def test_equicorrelated_draws_recover_breimans_population_formula():
    """200 000 equicorrelated Gaussian 'heads': rho_bar and Var(avg) within 3 s.e. of V (rho + (1 - rho)/H)."""
    H, V, rho = 4, 2.0, 0.3
    cov = V * ((1 - rho) * np.eye(H) + rho)
    est = np.random.default_rng(12).multivariate_normal(np.zeros(H), cov, size=200_000)
    (r, var), (r_se, var_se) = jackknife(
        lambda e: (lambda q: [q.rho_bar, q.ensemble_variance])(breiman_quantities(e, 0.0)), [est], 20
    )
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
    for bad, name in (
        (dict(n_blocks=1), "n_blocks"),
        (dict(n_blocks=41), "n_blocks"),
        (dict(n_blocks=2.0), "n_blocks"),
    ):
        with pytest.raises(ValueError, match=f"^{name}:"):
            jackknife(np.mean, [x], **bad)
    with pytest.raises(ValueError, match="^arrays:"):
        jackknife(lambda a, b: 0.0, [x, x[:5]], 4)
    with pytest.raises(ValueError, match="^statistic:"):
        jackknife(None, [x], 4)


@pytest.mark.statistical
def test_orthogonal_heads_keep_a_positive_error_correlation():
    """star(90 deg), H = 4, d_k = 2, d = 10, h = 0.5: HDI_PA = 1, yet 1 - rho_bar < 1 by > 3 s.e. (documented)."""
    x = np.random.default_rng(8).standard_normal((100, 10))
    cfgs = [heads.star_heads(t, 10, 2, 4) for t in (0.0, np.pi / 2)]
    ident, orth = montecarlo.pointwise_estimates(cfgs, "iso_exp", x, n=500, n_rep=60, seed=81, bandwidth=0.5, n_jobs=2)
    target = data.regression_function("iso_exp")(x)
    assert breiman_quantities(ident, target).rho_bar == pytest.approx(1.0, rel=1e-12)  # HDI_PA = 0
    gap, se = jackknife(lambda e: 1.0 - breiman_quantities(e, target).rho_bar, [orth], 20)
    assert 0 < gap < 1 - 3 * se


def test_decomposition_of_huge_estimates_is_rescaled_or_refused():
    rng = np.random.default_rng(3)
    est, target, a = rng.standard_normal((40, 3, 2)), rng.standard_normal(2), np.array([0.5, 0.3, 0.2])
    ref = bias_variance_covariance(est, target, a)
    big = bias_variance_covariance(est * 2.0**400, target * 2.0**400, a)  # squares near 1e240: representable
    np.testing.assert_allclose(big.mse, ref.mse * 2.0**800, rtol=1e-14)
    np.testing.assert_allclose(big.bias_squared + big.variance_term + big.covariance_term, big.mse, rtol=1e-12)
    with pytest.raises(ValueError, match="^estimates: the squared errors overflow"):
        bias_variance_covariance(est * 1e200, target * 1e200, a)


def test_breiman_quantities_of_heads_without_variance_is_refused():
    with pytest.raises(ValueError, match="^estimates: the heads have zero variance"):
        breiman_quantities(np.ones((5, 3, 2)), 0.0)
