"""Tests of :mod:`mhanw.weighting` (Theorem 7.1, ``book/claims.md``).

Pass criteria T7.1a-c of the claims page, plus the properties of the weights and the
input checks.  Reference values are computed here independently of the library
(explicit loops, explicit inverses, grid scans, polynomial roots, exhaustive
search over supports), never typed in.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize

from mhanw import weighting as w

H_GRID = (4, 8, 16)
RHO_GRID = (0.0, 0.3, 0.6)
Q_DEFAULT = (np.sqrt(5.0) - 1.0) / 2.0

# --------------------------------------------------------------------------- independent references


def model_matrix(H, gamma, rho):
    """The analytic error model of Thm 7.1 by explicit loops: M_jj = gamma^((j-1)/(H-1)), M_jj' = rho sqrt(v_j v_j')."""
    v = [gamma ** ((j - 1) / (H - 1)) for j in range(1, H + 1)]
    M = np.empty((H, H))
    for i in range(H):
        for k in range(H):
            M[i, k] = v[i] if i == k else rho * np.sqrt(v[i] * v[k])
    return M


def geometric_ref(H, q):
    a = np.array([q ** (j - 1) for j in range(1, H + 1)])
    return a / a.sum()


def gap_on_grid(H, rho, a, log_gamma):
    """mse(a) - mse(uniform) in the model, for every ln gamma of a grid (vectorised)."""
    v = np.exp(np.outer(log_gamma, np.arange(H) / (H - 1)))  # (m, H)
    sd = np.sqrt(v)
    R = np.full((H, H), rho) + (1 - rho) * np.eye(H)
    diff = np.outer(a, a) - 1.0 / H**2
    return np.einsum("mi,ij,mj->m", sd, R * diff, sd)


def grid_scan_threshold(H, rho, a, gamma_max=1e3, n=4001):
    """First sign change of the gap on a dense ln-gamma grid, linearly interpolated."""
    t = np.linspace(0.0, np.log(gamma_max), n)
    g = gap_on_grid(H, rho, a, t)
    k = int(np.flatnonzero(g < 0)[0])
    t0 = t[k - 1] - g[k - 1] * (t[k] - t[k - 1]) / (g[k] - g[k - 1])
    return float(np.exp(t0))


def polynomial_threshold(H, rho, a):
    """Exact gamma*: the gap is a polynomial in s = gamma^(1/(2(H-1))) of degree 2(H-1)."""
    coef = np.zeros(2 * H - 1)
    for i in range(H):
        for k in range(H):
            r = 1.0 if i == k else rho
            coef[i + k] += r * (a[i] * a[k] - 1.0 / H**2)
    roots = np.polynomial.polynomial.polyroots(coef)
    real = roots[np.abs(roots.imag) < 1e-9].real
    s = real[real > 1.0 + 1e-12].min()
    return float(s ** (2 * (H - 1)))


def brute_force_simplex(M):
    """Minimise a'Ma on the simplex by trying every support (explicit inverses)."""
    H = M.shape[0]
    best_val, best = np.inf, None
    for r in range(1, H + 1):
        for S in itertools.combinations(range(H), r):
            S = list(S)
            x = np.linalg.inv(M[np.ix_(S, S)]) @ np.ones(r)
            if np.all(x > 0):
                a = np.zeros(H)
                a[S] = x / x.sum()
                val = a @ M @ a
                if val < best_val:
                    best_val, best = val, a
    return best


@st.composite
def spd_matrices(draw, max_h=8):
    """Random symmetric positive definite M = A A' + 0.1 I, with H in 1..max_h."""
    H = draw(st.integers(1, max_h))
    A = draw(hnp.arrays(np.float64, (H, H + 1), elements=st.floats(-3, 3, allow_subnormal=False)))
    return A @ A.T + 0.1 * np.eye(H)


# --------------------------------------------------------------------------- fixed weights


@settings(max_examples=60, deadline=None)
@given(H=st.integers(1, 300), q=st.floats(1e-3, 1 - 1e-3))
def test_geometric_weights_sum_to_one_and_decrease(H, q):
    a = w.geometric_weights(H, q)
    assert a.shape == (H,)
    assert abs(a.sum() - 1.0) <= 1e-12
    assert np.all(np.diff(a) <= 0)
    assert np.all(a >= 0)
    ref = geometric_ref(H, q)
    np.testing.assert_allclose(a, ref, rtol=1e-9, atol=1e-300)


def test_geometric_default_is_golden_ratio_conjugate():
    assert w.GOLDEN_Q == pytest.approx(Q_DEFAULT, abs=1e-15)
    np.testing.assert_allclose(w.geometric_weights(8), geometric_ref(8, Q_DEFAULT), rtol=1e-13)
    np.testing.assert_allclose(w.geometric_weights(3, 0.5), np.array([4, 2, 1]) / 7, rtol=1e-15)
    a = w.geometric_weights(10, 0.8)
    np.testing.assert_allclose(a[1:] / a[:-1], 0.8, rtol=1e-13)


@settings(max_examples=40, deadline=None)
@given(H=st.integers(1, 400))
def test_fibonacci_weights_sum_to_one_and_are_non_increasing(H):
    a = w.fibonacci_weights(H)
    assert a.shape == (H,)
    assert abs(a.sum() - 1.0) <= 1e-12
    assert np.all(np.diff(a) <= 0)
    assert np.all(a >= 0)
    assert a[0] == a.max()


def test_fibonacci_weights_values():
    np.testing.assert_array_equal(w.fibonacci_weights(1), [1.0])
    np.testing.assert_array_equal(w.fibonacci_weights(2), [0.5, 0.5])
    np.testing.assert_allclose(w.fibonacci_weights(5), np.array([5, 3, 2, 1, 1]) / 12, rtol=1e-15)
    a = w.fibonacci_weights(40)
    np.testing.assert_allclose(a[1:20] / a[:19], Q_DEFAULT, rtol=1e-6)  # asymptotically geometric


@pytest.mark.parametrize("H", [1, 2, 7, 64])
def test_uniform_and_by_name(H):
    np.testing.assert_array_equal(w.uniform_weights(H), np.full(H, 1.0 / H))
    np.testing.assert_array_equal(w.structured_weights("uniform", H), w.uniform_weights(H))
    np.testing.assert_array_equal(w.structured_weights("geometric", H, q=0.5), w.geometric_weights(H, 0.5))
    np.testing.assert_array_equal(w.structured_weights("fibonacci", H), w.fibonacci_weights(H))


# --------------------------------------------------------------------------- MSE and the model


@settings(max_examples=50, deadline=None)
@given(M=spd_matrices(), seed=st.integers(0, 2**32 - 1))
def test_mse_is_the_quadratic_form(M, seed):
    a = np.random.default_rng(seed).normal(size=M.shape[0])  # any weights, any sum
    ref = sum(a[i] * M[i, k] * a[k] for i in range(len(a)) for k in range(len(a)))
    assert w.mse(a, M) == pytest.approx(ref, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("H", [1, 2, 5, 16])
@pytest.mark.parametrize("gamma", [1.0, 3.7, 1000.0])
@pytest.mark.parametrize("rho", [-0.05, 0.0, 0.6])
def test_graded_error_matrix(H, gamma, rho):
    M = w.graded_error_matrix(H, gamma, rho)
    if H == 1:
        np.testing.assert_array_equal(M, [[1.0]])
        return
    np.testing.assert_allclose(M, model_matrix(H, gamma, rho), rtol=1e-13)
    assert M[0, 0] == pytest.approx(1.0, rel=1e-15)
    assert M[-1, -1] == pytest.approx(gamma, rel=1e-13)
    assert np.all(np.diff(np.diag(M)) >= 0)  # ordered by quality, best first
    assert np.all(M == M.T)
    assert np.linalg.eigvalsh(M).min() > 0


# --------------------------------------------------------------------------- T7.1a


@pytest.mark.parametrize("H", H_GRID)
@pytest.mark.parametrize("rho", RHO_GRID)
def test_uniform_is_the_oracle_for_exchangeable_heads(H, rho):
    M = w.graded_error_matrix(H, 1.0, rho)
    u = w.uniform_weights(H)
    np.testing.assert_allclose(w.affine_oracle_weights(M), u, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.simplex_oracle_weights(M), u, rtol=0, atol=1e-12)
    mse_u = w.mse(u, M)
    assert mse_u == pytest.approx((1 + (H - 1) * rho) / H, rel=1e-12)
    assert mse_u == pytest.approx(1.0 / np.linalg.inv(M).sum(), rel=1e-12)
    others = (w.geometric_weights(H), w.geometric_weights(H, 0.5), w.geometric_weights(H, 0.8), w.fibonacci_weights(H))
    for a in others:
        assert w.mse(a, M) > mse_u + 1e-12


def test_geometric_loses_by_a_large_factor_at_H16_rho0():
    """At gamma = 1, H = 16, rho = 0 uniform wins by mse_geo/mse_unif = H (1-q)(1+q^H)/((1+q)(1-q^H))."""
    H, q = 16, Q_DEFAULT
    M = w.graded_error_matrix(H, 1.0, 0.0)
    gain = w.mse(w.geometric_weights(H), M) / w.mse(w.uniform_weights(H), M)
    assert gain == pytest.approx(H * (1 - q) * (1 + q**H) / ((1 + q) * (1 - q**H)), rel=1e-12)
    assert gain > 3


# --------------------------------------------------------------------------- T7.1b


@pytest.fixture(scope="module")
def thresholds():
    return {(H, rho): w.heterogeneity_threshold(H, rho) for H in H_GRID for rho in RHO_GRID}


@pytest.mark.parametrize("H", H_GRID)
@pytest.mark.parametrize("rho", RHO_GRID)
def test_threshold_matches_grid_scan_and_exact_root(thresholds, H, rho):
    k_star = thresholds[(H, rho)]
    a = geometric_ref(H, Q_DEFAULT)
    assert k_star > 1.0
    assert k_star == pytest.approx(grid_scan_threshold(H, rho, a), rel=1e-2)
    assert k_star == pytest.approx(polynomial_threshold(H, rho, a), rel=1e-8)


@pytest.mark.parametrize("H", H_GRID)
@pytest.mark.parametrize("rho", RHO_GRID)
def test_geometric_wins_iff_gamma_above_threshold(thresholds, H, rho):
    k_star = thresholds[(H, rho)]
    a, u = w.geometric_weights(H), w.uniform_weights(H)
    for gamma in np.geomspace(1.0, 1e3, 61):
        if abs(np.log(gamma / k_star)) < 1e-6:
            continue
        M = w.graded_error_matrix(H, gamma, rho)
        assert (w.mse(a, M) < w.mse(u, M)) == (gamma > k_star)


def test_threshold_monotone_in_rho_and_H(thresholds):
    """Expected for Thm 7.1: gamma* falls (non-increasing) with rho and grows with H."""
    for H in H_GRID:
        ks = [thresholds[(H, rho)] for rho in RHO_GRID]
        assert all(x >= y for x, y in zip(ks, ks[1:])), (H, ks)
        fine = [w.heterogeneity_threshold(H, rho) for rho in np.linspace(-0.9 / (H - 1), 0.95, 12)]
        assert all(x >= y for x, y in zip(fine, fine[1:])), (H, fine)
    for rho in RHO_GRID:
        ks = [thresholds[(H, rho)] for H in H_GRID]
        assert all(x < y for x, y in zip(ks, ks[1:])), (rho, ks)


def test_crossover_H8_rho0(thresholds):
    """The crossover for H = 8, rho = 0 (gamma* about 4.22), against two independent computations."""
    k_star = thresholds[(8, 0.0)]
    a = geometric_ref(8, Q_DEFAULT)
    assert k_star == pytest.approx(grid_scan_threshold(8, 0.0, a, n=20001), rel=1e-3)
    assert k_star == pytest.approx(polynomial_threshold(8, 0.0, a), rel=1e-10)
    # on either side of gamma*, the explicit model gives the predicted winner
    for gamma, geo_wins in ((k_star * (1 - 1e-6), False), (k_star * (1 + 1e-6), True)):
        M = model_matrix(8, gamma, 0.0)
        assert (a @ M @ a < np.full(8, 1 / 8) @ M @ np.full(8, 1 / 8)) == geo_wins


@pytest.mark.parametrize("H", H_GRID)
def test_threshold_for_other_weights(H):
    q = 0.8
    assert w.heterogeneity_threshold(H, 0.3, q) == pytest.approx(
        polynomial_threshold(H, 0.3, geometric_ref(H, q)), rel=1e-8
    )
    fib = w.fibonacci_weights(H)
    assert w.heterogeneity_threshold(H, 0.3, weights=fib) == pytest.approx(polynomial_threshold(H, 0.3, fib), rel=1e-8)


# --------------------------------------------------------------------------- T7.1c and the affine oracle


@settings(max_examples=100, deadline=None)
@given(M=spd_matrices(), delta=hnp.arrays(np.float64, 8, elements=st.floats(-10, 10, allow_subnormal=False)))
def test_affine_oracle_is_a_minimum(M, delta):
    H = M.shape[0]
    a = w.affine_oracle_weights(M)
    d = delta[:H] - delta[:H].mean()  # sum d = 0
    base = w.mse(a, M)
    moved = w.mse(a + d, M)
    scale = np.abs(M).max() * (1 + np.abs(a).sum() + np.abs(d).sum()) ** 2
    # a'Ma is minimal on the hyperplane: the change is exactly d'Md >= 0, up to rounding
    assert moved >= base - 1e-13 * scale
    assert moved - base == pytest.approx(d @ M @ d, abs=1e-12 * scale)


@settings(max_examples=60, deadline=None)
@given(M=spd_matrices())
def test_affine_oracle_formula(M):
    a = w.affine_oracle_weights(M)
    x = np.linalg.inv(M) @ np.ones(M.shape[0])
    assert abs(a.sum() - 1.0) <= 1e-12
    np.testing.assert_allclose(a, x / x.sum(), rtol=1e-8, atol=1e-10)
    assert w.mse(a, M) == pytest.approx(1.0 / x.sum(), rel=1e-9)


# --------------------------------------------------------------------------- the simplex oracle


def _assert_simplex_optimal(M, a):
    H = M.shape[0]
    assert np.all(a >= 0)
    assert abs(a.sum() - 1.0) <= 1e-12
    g, lam = M @ a, a @ M @ a
    scale = np.abs(M).max()
    on = a > 0
    np.testing.assert_allclose(g[on], lam, rtol=0, atol=1e-10 * scale)  # KKT, active heads
    assert np.all(g[~on] >= lam - 1e-10 * scale)  # KKT, inactive heads
    val = w.mse(a, M)
    assert val >= w.mse(w.affine_oracle_weights(M), M) - 1e-12 * scale
    for b in (w.uniform_weights(H), w.geometric_weights(H), w.geometric_weights(H, 0.5), w.fibonacci_weights(H)):
        assert val <= w.mse(b, M) + 1e-12 * scale
    for b in np.eye(H):  # vertices: the single heads
        assert val <= w.mse(b, M) + 1e-12 * scale
    return val


@settings(max_examples=80, deadline=None)
@given(M=spd_matrices(max_h=6), seed=st.integers(0, 2**32 - 1))
def test_simplex_oracle_is_feasible_optimal_and_exact(M, seed):
    a = w.simplex_oracle_weights(M)
    val = _assert_simplex_optimal(M, a)
    scale = np.abs(M).max()
    pts = np.random.default_rng(seed).dirichlet(np.full(M.shape[0], 0.5), size=200)
    assert val <= np.einsum("ni,ij,nj->n", pts, M, pts).min() + 1e-12 * scale
    np.testing.assert_allclose(a, brute_force_simplex(M), rtol=0, atol=1e-10)


@pytest.mark.parametrize("H", H_GRID)
@pytest.mark.parametrize("rho", RHO_GRID)
@pytest.mark.parametrize("gamma", [1.0, 5.0, 1000.0])
def test_simplex_oracle_on_the_model_vs_slsqp(H, rho, gamma):
    M = w.graded_error_matrix(H, gamma, rho)
    a = w.simplex_oracle_weights(M)
    _assert_simplex_optimal(M, a)
    res = optimize.minimize(
        lambda x: x @ M @ x,
        np.full(H, 1.0 / H),
        jac=lambda x: 2 * M @ x,
        bounds=[(0, 1)] * H,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(H)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    )
    assert w.mse(a, M) <= res.fun + 1e-12
    np.testing.assert_allclose(a, np.clip(res.x, 0, None), atol=1e-5)
    if np.all(w.affine_oracle_weights(M) >= 0):
        np.testing.assert_allclose(a, w.affine_oracle_weights(M), atol=1e-12)


@pytest.mark.parametrize("start", ["all", "best", "worst"])
def test_simplex_active_set_repairs_a_wrong_start(monkeypatch, start):
    """The active-set refinement reaches the optimum whatever support NNLS hands it."""

    def fake_nnls(A, y):
        H = A.shape[1]
        b = np.ones(H) if start == "all" else np.eye(H)[0 if start == "best" else H - 1]
        return b, 0.0

    rng = np.random.default_rng(7)
    mats = [w.graded_error_matrix(8, 1000.0, 0.6), w.graded_error_matrix(6, 20.0, -0.1)]
    for _ in range(30):
        A = rng.normal(size=(6, 6))
        mats.append(A @ A.T + 0.05 * np.eye(6))
    expected = []
    for M in mats:
        expected.append(w.simplex_oracle_weights(M))
    monkeypatch.setattr(optimize, "nnls", fake_nnls)
    for M, ref in zip(mats, expected):
        a = w.simplex_oracle_weights(M)
        _assert_simplex_optimal(M, a)
        np.testing.assert_allclose(a, ref, atol=1e-12)


def test_simplex_oracle_degenerate_cases():
    np.testing.assert_allclose(w.simplex_oracle_weights([[1.0, 1.0], [1.0, 2.0]]), [1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(w.simplex_oracle_weights(np.eye(3)), np.full(3, 1 / 3), atol=1e-15)
    np.testing.assert_array_equal(w.simplex_oracle_weights([[2.0]]), [1.0])
    M = np.array([[1.0, 1.5], [1.5, 4.0]])  # affine oracle has a negative weight
    assert w.affine_oracle_weights(M)[1] < 0
    np.testing.assert_allclose(w.simplex_oracle_weights(M), [1.0, 0.0], atol=1e-15)


# --------------------------------------------------------------------------- bad input


BAD_M = [
    ("non-square", np.ones((2, 3))),
    ("1-D", np.ones(3)),
    ("non-symmetric", np.array([[2.0, 1.0], [0.0, 2.0]])),
    ("not positive definite", np.array([[1.0, 2.0], [2.0, 1.0]])),
    ("singular", np.ones((3, 3))),
    ("NaN", np.array([[1.0, np.nan], [np.nan, 1.0]])),
    ("empty", np.zeros((0, 0))),
]


@pytest.mark.parametrize("label,M", BAD_M, ids=[b[0] for b in BAD_M])
def test_bad_M(label, M):
    for f in (w.affine_oracle_weights, w.simplex_oracle_weights):
        with pytest.raises(ValueError, match=r"^M: "):
            f(M)
    if label not in ("not positive definite", "singular"):  # mse needs symmetry, not definiteness
        with pytest.raises(ValueError, match=r"^M: "):
            w.mse(np.ones(2), M)


def test_mse_accepts_a_singular_M():
    assert w.mse([0.5, 0.5], np.ones((2, 2))) == pytest.approx(1.0)


@pytest.mark.parametrize("q", [0, 1, -0.2, 1.5, 0.0, 1.0, np.nan, np.inf, "0.5", True, None])
def test_bad_q(q):
    with pytest.raises(ValueError, match=r"^q: "):
        w.geometric_weights(4, q)
    if q is not None:
        with pytest.raises(ValueError, match=r"^q: "):
            w.heterogeneity_threshold(4, 0.0, q)


@pytest.mark.parametrize("weights", [np.ones(3) / 3, np.ones(5) / 5, np.ones((2, 2)), [], [np.nan] * 4])
def test_bad_weights(weights):
    M = w.graded_error_matrix(4, 10.0, 0.3)
    with pytest.raises(ValueError, match=r"^weights: "):
        w.mse(weights, M)
    with pytest.raises(ValueError, match=r"^weights: "):
        w.heterogeneity_threshold(4, 0.3, weights=weights)


@pytest.mark.parametrize("n_heads", [0, -1, 2.5, True, "4", None])
def test_bad_n_heads(n_heads):
    for f in (w.uniform_weights, w.geometric_weights, w.fibonacci_weights):
        with pytest.raises(ValueError, match=r"^n_heads: "):
            f(n_heads)
    with pytest.raises(ValueError, match=r"^n_heads: "):
        w.graded_error_matrix(n_heads, 2.0, 0.0)


def test_bad_model_parameters():
    with pytest.raises(ValueError, match=r"^gamma: "):
        w.graded_error_matrix(4, 0.5, 0.0)
    with pytest.raises(ValueError, match=r"^gamma: "):
        w.graded_error_matrix(4, -1.0, 0.0)
    for rho in (1.0, 1.2, -1 / 3, -0.5, np.nan, "0"):
        with pytest.raises(ValueError, match=r"^rho: "):
            w.graded_error_matrix(4, 2.0, rho)
        with pytest.raises(ValueError, match=r"^rho: "):
            w.heterogeneity_threshold(4, rho)
    with pytest.raises(ValueError, match=r"^scheme: "):
        w.structured_weights("harmonic", 4)


def test_threshold_errors():
    with pytest.raises(ValueError, match=r"^n_heads: "):
        w.heterogeneity_threshold(1, 0.0)
    with pytest.raises(ValueError, match=r"^q: "):  # both q and weights
        w.heterogeneity_threshold(4, 0.0, 0.5, weights=w.fibonacci_weights(4))
    with pytest.raises(ValueError, match=r"^weights: .*no crossover"):  # uniform: g = 0
        w.heterogeneity_threshold(4, 0.0, weights=w.uniform_weights(4))
    with pytest.raises(ValueError, match=r"^weights: .*no crossover"):  # Fibonacci with H = 2 is uniform
        w.heterogeneity_threshold(2, 0.3, weights=w.fibonacci_weights(2))
    with pytest.raises(ValueError, match=r"^gamma_max: .*no crossover"):  # best weight on the worst head
        w.heterogeneity_threshold(4, 0.0, weights=w.geometric_weights(4)[::-1])
    k_star = w.heterogeneity_threshold(8, 0.0)
    with pytest.raises(ValueError, match=r"^gamma_max: .*no crossover"):  # bracket too small
        w.heterogeneity_threshold(8, 0.0, gamma_max=0.9 * k_star)
    for bad in (1.0, 0.5, -3.0, np.inf):
        with pytest.raises(ValueError, match=r"^gamma_max: "):
            w.heterogeneity_threshold(8, 0.0, gamma_max=bad)
    assert w.heterogeneity_threshold(8, 0.0, gamma_max=1.1 * k_star) == pytest.approx(k_star, rel=1e-12)
