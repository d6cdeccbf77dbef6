"""Tests of mhanw.decomposition: Thm 3.1 (checks T3.1a-c of ``book/claims.md``) and Breiman's identity."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw import data, heads, montecarlo
from mhanw.decomposition import bias_variance_covariance, covariance_with_se

# The check of Thm 3.1 at quick fidelity: d = 6, d_k = 2, H = 3 Haar heads,
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


@pytest.mark.parametrize("weights", [np.full(3, 1 / 3), np.array([0.5, 0.3, 0.2])])
def test_T31a_identity_exact_with_ddof0(bvc_estimates, weights):
    est, target = bvc_estimates
    assert abs(target) > 1.0
    dec = bias_variance_covariance(est, target, weights)
    assert dec.formula == "sum_to_one"
    assert abs(_rhs(dec) - dec.mse) <= 1e-12 * dec.mse
    # the MSE is the Monte Carlo MSE of the weighted ensemble
    assert dec.mse == pytest.approx(np.mean((est @ weights - target) ** 2), rel=1e-14)
    assert dec.printed_bias_squared == pytest.approx(dec.bias_squared, rel=1e-12)


def test_T31a_ddof1_is_off_by_order_one_over_R(bvc_estimates):
    est, target = bvc_estimates
    a = np.array([0.5, 0.3, 0.2])
    dec = bias_variance_covariance(est, target, a)
    R = est.shape[0]
    C1 = np.cov(est, rowvar=False, ddof=1)
    rhs1 = dec.bias_squared + a @ C1 @ a
    gap = rhs1 - dec.mse
    assert gap == pytest.approx((a @ C1 @ a) / R, rel=1e-10)  # exactly Var/(R - 1) with ddof = 0 moments
    assert gap / dec.mse > 1e-9  # far above the 1e-12 of the ddof = 0 identity


def test_T31b_weights_not_summing_to_one(bvc_estimates):
    est, target = bvc_estimates
    a = np.array([0.8, 0.4, 0.1])
    dec = bias_variance_covariance(est, target, a)
    assert dec.formula == "corrected" and dec.weights_sum == pytest.approx(1.3)
    printed = dec.printed_bias_squared + dec.variance_term + dec.covariance_term
    assert abs(printed - dec.mse) / dec.mse >= 0.1  # documented failure of the printed formula
    assert abs(_rhs(dec) - dec.mse) <= 1e-12 * dec.mse
    assert "sum_j a_j - 1" in dec.formula_text


def test_T31c_identical_heads_do_not_reduce_variance():
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
@given(seed=st.integers(0, 2**32 - 1), R=st.integers(2, 60), H=st.integers(1, 6), m=st.integers(1, 4),
       weight_sum=st.sampled_from([1.0, None]))
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
def test_breiman_identity(seed, R, H):
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
