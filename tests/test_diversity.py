"""Tests of mhanw.diversity: principal angles, the HDI (checks HDI-a..e of ``book/claims.md``),
the frame bound (Thm 5.1), and Lemma 4.1 (checks L4.1a-d)."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mhanw import data, heads, montecarlo
from mhanw.decomposition import covariance_with_se
from mhanw.diversity import cross_gram, haar_expected_hdi, hdi_upper_bound, head_diversity_index, orthonormal_bases, principal_angles
from mhanw.covariance import covariance_factor, covariance_factor_symbolic, first_order_covariance, head_correlation, kernel_overlap, printed_covariance_bound

HDI = head_diversity_index


def _haar(seed, H, d, d_k):
    return heads.haar_heads(d, d_k, H, np.random.default_rng(seed))


# ---------------------------------------------------------------- principal angles, cross-Gram


def test_principal_angles_match_svd_and_are_ascending():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 7, 3))
    ang = principal_angles(A, B)
    QA, QB = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    cos = np.linalg.svd(QA.T @ QB, compute_uv=False)
    np.testing.assert_allclose(np.cos(ang), cos, atol=1e-12)
    assert np.all(np.diff(ang) >= 0) and ang.min() >= 0 and ang.max() <= np.pi / 2


@settings(max_examples=30, deadline=None)
@given(theta=st.floats(0.0, np.pi / 2), d_k=st.integers(1, 3), extra=st.integers(0, 2))
def test_pair_family_is_isoclinic(theta, d_k, extra):
    W = heads.pair_heads(theta, 2 * d_k + extra, d_k)
    np.testing.assert_allclose(principal_angles(W[0], W[1]), np.full(d_k, theta), atol=1e-12)
    assert HDI(W) == pytest.approx(np.sin(theta) ** 2, abs=1e-12)
    assert HDI(W, "paper") == pytest.approx(1 - np.cos(theta) ** 2 / d_k, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(np.sin(theta) ** 2, abs=1e-12)


def test_star_family():
    theta = 0.6
    W = heads.star_heads(theta, d=10, d_k=2, n_heads=4)
    for j in range(4):
        for k in range(j + 1, 4):
            np.testing.assert_allclose(principal_angles(W[j], W[k]), np.arccos(np.cos(theta) ** 2), atol=1e-12)
    assert HDI(W) == pytest.approx(1 - np.cos(theta) ** 4, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(2, 7))
def test_principal_angles_see_only_subspaces(seed, d):
    rng = np.random.default_rng(seed)
    k = rng.integers(1, d + 1)
    A, B = rng.standard_normal((2, d, k))
    M, N = rng.standard_normal((2, k, k)) + 3 * np.eye(k)
    assume(np.linalg.cond(M) < 1e3 and np.linalg.cond(N) < 1e3)
    np.testing.assert_allclose(principal_angles(A @ M, B @ N), principal_angles(A, B), atol=1e-6)


def test_cross_gram_as_printed():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 6, 3))
    np.testing.assert_allclose(cross_gram(A, B), A.T @ B / 3, rtol=1e-15)
    W = heads.pair_heads(0.4, 6, 3)
    assert (cross_gram(W[0], W[1]) ** 2).sum() == pytest.approx(np.cos(0.4) ** 2 / 3)


# ---------------------------------------------------------------- HDI checks HDI-a..e


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8), (6, 3, 1)])
def test_HDIa_identical_orthonormal_heads(d, H, d_k):
    W = heads.identical_heads(d, d_k, H, basis=_haar(d, 1, d, d_k)[0])
    assert HDI(W, "paper") == pytest.approx(1 - 1 / d_k, abs=1e-12)  # documented: not 0
    assert HDI(W, "principal_angles") == pytest.approx(0.0, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8)])
def test_table_of_section_7(d, H, d_k):
    for norm in ("paper", "principal_angles", "rv"):
        assert HDI(heads.orthogonal_heads(d, d_k, H), norm) == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(d)
    W1 = rng.standard_normal((H, d, d_k)) / np.sqrt(d)  # N(0, 1/d): HDI_paper ~ 1 - 1/d
    W2 = rng.standard_normal((H, d, d_k))  # N(0, 1): HDI_paper ~ 1 - d
    assert HDI(W1, "paper") == pytest.approx(1 - 1 / d, abs=0.1 / d)
    assert HDI(W2, "paper") == pytest.approx(1 - d, rel=0.2)  # one draw: about 2 s.d. wide at d = 64
    assert HDI(W1, "principal_angles") == pytest.approx(1 - d_k / d, abs=0.01)
    assert HDI(heads.identical_heads(d, d_k, H) * 2, "paper") == pytest.approx(1 - 16 / d_k, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), H=st.integers(2, 5), d_k=st.integers(1, 4), extra=st.integers(0, 4))
def test_HDIb_affine_map_for_orthonormal_heads(seed, H, d_k, extra):
    W = _haar(seed, H, d_k + extra, d_k)
    assert HDI(W) == pytest.approx(d_k * HDI(W, "paper") - d_k + 1, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(HDI(W), abs=1e-12)  # equal singular values
    for norm in ("principal_angles", "rv"):
        assert -1e-12 <= HDI(W, norm) <= 1 + 1e-12


@pytest.mark.parametrize("c", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_HDIc_rescaled_identical_heads(c, d_k):
    W = c * heads.identical_heads(128, d_k, 4)
    assert HDI(W, "paper") == pytest.approx(1 - c**4 / d_k, abs=1e-12)
    assert HDI(W, "principal_angles") == pytest.approx(0.0, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(0.0, abs=1e-12)


def _well_conditioned(rng, k):
    A = rng.standard_normal((k, k)) + 2 * np.eye(k)
    return A if np.linalg.cond(A) < 100 else np.eye(k) * rng.uniform(0.5, 2)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), H=st.integers(2, 5), d_k=st.integers(1, 3), extra=st.integers(0, 4),
       c=st.floats(0.2, 5.0))
def test_HDId_invariances(seed, H, d_k, extra, c):
    rng = np.random.default_rng(seed)
    d = d_k + extra + 1
    W = rng.standard_normal((H, d, d_k))
    pa, rv, paper = HDI(W), HDI(W, "rv"), HDI(W, "paper")
    A = _well_conditioned(rng, d_k)
    perm = rng.permutation(H)
    O = np.linalg.qr(rng.standard_normal((d_k, d_k)))[0]
    # principal angles: W -> W A (invertible A), per-head A_j, and permutations of heads
    assert HDI(W @ A) == pytest.approx(pa, abs=1e-10)
    assert HDI(np.stack([w @ _well_conditioned(rng, d_k) for w in W])) == pytest.approx(pa, abs=1e-10)
    assert HDI(W[perm]) == pytest.approx(pa, abs=1e-10)
    # rv: W -> c W and orthogonal A; permutations
    assert HDI(c * W, "rv") == pytest.approx(rv, abs=1e-10)
    assert HDI(W @ O, "rv") == pytest.approx(rv, abs=1e-10)
    assert HDI(W[perm], "rv") == pytest.approx(rv, abs=1e-10)
    # paper: permutation and orthogonal invariant, but rescaling multiplies 1 - HDI by c^4
    assert HDI(W[perm], "paper") == pytest.approx(paper, abs=1e-10)
    assert HDI(W @ O, "paper") == pytest.approx(paper, abs=1e-10)
    assert HDI(c * W, "paper") == pytest.approx(1 - c**4 * (1 - paper), rel=1e-10, abs=1e-10)
    for v in (pa, rv):
        assert -1e-12 <= v <= 1 + 1e-12


def test_rv_differs_from_pa_for_unequal_singular_values():
    W = heads.pair_heads(np.pi / 4, 4, 2) @ np.diag([1.0, 10.0])
    assert HDI(W) == pytest.approx(0.5)
    W2 = np.stack([np.eye(4)[:, :2], np.eye(4)[:, [0, 2]] @ np.diag([1.0, 10.0])])
    assert HDI(W2) == pytest.approx(0.5)
    assert abs(HDI(W2, "rv") - HDI(W2)) > 0.3


def test_HDIe_haar_heads_expected_value():
    W = _haar(7, 8, 512, 64)
    assert HDI(W) == pytest.approx(haar_expected_hdi(512, 64), abs=0.01)
    assert haar_expected_hdi(512, 64) == 1 - 64 / 512


def test_frame_bound_reached_by_tetrahedral_lines():
    assert hdi_upper_bound(3, 1, 4) == pytest.approx(8 / 9)
    assert hdi_upper_bound(8, 2, 4) == 1.0
    lines = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3)
    assert HDI(lines[:, :, None]) == pytest.approx(8 / 9, abs=1e-12)
    for seed in range(20):
        assert HDI(_haar(seed, 4, 3, 1)) <= 8 / 9 + 1e-12
        assert HDI(_haar(seed, 5, 6, 2)) <= hdi_upper_bound(6, 2, 5) + 1e-12


@pytest.mark.parametrize(
    "W, normalization, name",
    [
        (np.zeros((4, 2)), "principal_angles", "W"),
        (np.zeros((1, 4, 2)) + 1, "principal_angles", "W"),
        (np.full((2, 4, 2), np.nan), "paper", "W"),
        (np.ones((2, 2, 3)), "paper", "W"),
        (heads.pair_heads(0.3, 4, 2), "cosine", "normalization"),
        (np.stack([np.eye(4)[:, :2], np.zeros((4, 2))]), "rv", "W"),
    ],
)
def test_hdi_bad_input(W, normalization, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        HDI(W, normalization)


def test_rank_deficient_head_is_named():
    W = np.stack([np.eye(4)[:, :2], np.ones((4, 2))])
    with pytest.raises(ValueError, match="^W: head 1"):
        HDI(W)
    with pytest.raises(ValueError, match="^W: head 1"):
        orthonormal_bases(W)
    assert np.isfinite(HDI(W, "paper"))  # the printed formula does not need full rank


def test_principal_angles_bad_input():
    with pytest.raises(ValueError, match="^A:"):
        principal_angles(np.ones((4, 2)), np.eye(4)[:, :2])
    with pytest.raises(ValueError, match="^B:"):
        principal_angles(np.eye(4)[:, :2], np.eye(3)[:, :2])
    with pytest.raises(ValueError, match="^A:"):
        principal_angles(np.full((4, 2), np.nan), np.eye(4)[:, :2])
    with pytest.raises(ValueError, match="^B:"):
        cross_gram(np.eye(4)[:, :2], np.eye(4)[:, :3])


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
        ests = montecarlo.pointwise_estimates(configs, m, X_LEMMA, n=500, n_rep=1500, seed=41, bandwidth=0.5,
                                         n_jobs=2)
        L = data.regression_function(m).lipschitz_constant()
        for theta, W, est in zip((0, 90), configs, ests):
            cov, se = covariance_with_se(est[:, 0, 0], est[:, 1, 0])
            out[m, theta] = (cov, se, printed_covariance_bound(W[0], W[1], X_LEMMA, L, 500, 0.5))
    return out


def test_L41a_zero_regression_covariance_positive_bound_zero(lemma_covariances):
    for theta in (0, 90):
        cov, se, bound = lemma_covariances["zero", theta]
        assert bound == 0.0
        assert cov > 3 * se  # documented failure: the noise term is missing from the bound


def test_L41b_sin13_bound_fails_at_90_degrees(lemma_covariances):
    cov, se, bound = lemma_covariances["sin13", 90]
    assert bound < 1e-30  # vanishes to rounding (cos(pi/2) != 0 in floating point)
    assert cov > bound + 3 * se  # documented failure
    cov0, se0, bound0 = lemma_covariances["sin13", 0]
    assert cov0 + 3 * se0 < bound0  # at small angles the printed bound holds


def test_L41_first_order_covariance_matches_kernel_overlap(lemma_covariances):
    for theta, W in ((0, heads.pair_heads(0.0, 4, 2)), (90, heads.pair_heads(np.pi / 2, 4, 2))):
        cov, se, _ = lemma_covariances["zero", theta]
        first_order = 0.25 * kernel_overlap(W[0], W[1], X_LEMMA, 0.5) / 500
        assert abs(cov - first_order) <= 3 * se + 0.1 * first_order


def test_L41c_closed_form_matches_monte_carlo():
    """1-D heads, x = 0, m = 0, sigma = 1, d = 2, n = 2000; R = 1500 (the chapter: 4000)."""
    phis = np.radians([0, 10, 30, 60, 90])
    n = 2000
    configs = []
    for h in (0.1, 0.3):
        for phi in phis:
            W = np.array([[[1.0], [0.0]], [[np.cos(phi)], [np.sin(phi)]]])
            configs.append(heads.HeadConfig(W, bandwidth=h))
    ests = montecarlo.pointwise_estimates(configs, "zero", np.zeros(2), n=n, n_rep=1500, seed=43, sigma=1.0,
                                     n_jobs=2)
    for c, est in zip(configs, ests):
        phi = np.arctan2(c.projections[1, 1, 0], c.projections[1, 0, 0])
        cov, se = covariance_with_se(est[:, 0, 0], est[:, 1, 0])
        closed = covariance_factor(phi, c.bandwidth)
        assert abs(n * cov - closed) <= 3 * n * se + 0.05 * closed, (c.bandwidth, np.degrees(phi))


def test_L41d_symbolic_closed_form():
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
        assert fo.covariance == fo.noise == pytest.approx(0.25 * kernel_overlap(W[0], W[1], X_LEMMA, 0.5) / 500,
                                                          rel=1e-14)
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
    K = [np.exp(-((X - X_LEMMA) @ w) ** 2 @ np.ones(2) / (2 * h * h)) for w in W]
    mu = [np.mean(k * m) / np.mean(k) for k in K]
    direct = np.mean(K[0] * K[1] * (m - mu[0]) * (m - mu[1])) / (K[0].mean() * K[1].mean())
    assert fo.limits == pytest.approx(mu, abs=0.01)  # Monte Carlo s.e. about 0.002
    assert fo.covariance == pytest.approx(direct, rel=0.02)
    # the quadrature has converged
    fine = first_order_covariance(W[0], W[1], X_LEMMA, h, n=1, sigma=0.0, regression="sin13", nodes=24)
    assert fine.covariance == pytest.approx(fo.covariance, rel=1e-8)


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
