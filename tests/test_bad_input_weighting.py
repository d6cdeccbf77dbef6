"""Bad input to the head weightings (`mhanw.weighting`): extreme scales of the
error matrix, weights that do not sum to 1, wrong shapes and dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw import weighting as w

ORACLES = (w.affine_oracle_weights, w.simplex_oracle_weights)


@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("scale", [1e308, 1e-310, 1e-320, 5e-324, 1e-300, 1e300])
def test_oracles_are_scale_invariant_at_extreme_scales(oracle, scale):
    a = oracle(scale * np.eye(3))
    assert np.all(np.isfinite(a))
    np.testing.assert_allclose(a, np.full(3, 1 / 3), rtol=1e-12)


@given(st.integers(-1000, 1000), st.floats(0.05, 0.9))
def test_oracle_weights_do_not_depend_on_the_scale_of_M(log2_scale, rho):
    M = w.graded_error_matrix(4, 8.0, rho)
    scaled = np.ldexp(M, log2_scale)
    if not np.all(np.isfinite(scaled)) or np.min(np.abs(scaled)) == 0.0:
        return
    for oracle in ORACLES:
        np.testing.assert_allclose(oracle(scaled), oracle(M), rtol=1e-9, atol=1e-12)


def test_mse_at_extreme_scales():
    assert w.mse([1, 0, 0], 1e-310 * np.eye(3)) == 1e-310
    assert w.mse([0.5, 0.5], 1e308 * np.eye(2)) == 5e307
    with pytest.raises(ValueError, match=r"^weights: .*overflows"):
        w.mse([1e200, 0], np.eye(2))
    assert w.mse([0, 0], np.eye(2)) == 0.0


@pytest.mark.parametrize("weights", [[0.6, 0.3, 0.0], [0.5, 0.5, 0.5], [1.0, 0.0, 1e-9]])
def test_threshold_rejects_weights_that_do_not_sum_to_1(weights):
    with pytest.raises(ValueError, match=r"^weights: expected weights summing to 1"):
        w.heterogeneity_threshold(3, 0.1, weights=weights)


def test_threshold_accepts_weights_summing_to_1_up_to_rounding():
    assert w.heterogeneity_threshold(3, 0.1, weights=w.fibonacci_weights(3)) > 1


@pytest.mark.parametrize(
    "M,message",
    [
        (np.ones((3, 3)), "positive definite"),
        (np.zeros((2, 2)), "all zeros"),
        (-np.eye(2), "positive definite"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
        (np.eye(2) * (1 + 1j), "complex"),
        (np.eye(2, dtype=bool), "booleans"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "finite"),
        (np.ones((2, 3)), "square"),
        (np.ones(3), "2-D"),
        (np.array([[1e308, -1e308], [1e308, 1e308]]), "symmetric"),
    ],
)
def test_bad_matrices_name_M(M, message):
    for oracle in ORACLES:
        with pytest.raises(ValueError, match=rf"^M: .*{message}"):
            oracle(M)


@pytest.mark.parametrize(
    "weights,message",
    [
        ([1, 2j], "complex"),
        ([True, False], "booleans"),
        ([1.0], "2 weights"),
        ([[0.5, 0.5]], "1-D"),
        (["a", "b"], "strings"),
    ],
)
def test_bad_weights_name_weights(weights, message):
    with pytest.raises(ValueError, match=rf"^weights: .*{message}"):
        w.mse(weights, np.eye(2))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: w.geometric_weights(3, 1.0), "q"),
        (lambda: w.geometric_weights(3, np.nan), "q"),
        (lambda: w.geometric_weights(0), "n_heads"),
        (lambda: w.uniform_weights(2.0), "n_heads"),
        (lambda: w.structured_weights("golden", 3), "scheme"),
        (lambda: w.graded_error_matrix(3, 0.5, 0.1), "gamma"),
        (lambda: w.graded_error_matrix(3, 2.0, -0.6), "rho"),
        (lambda: w.heterogeneity_threshold(3, 0.1, gamma_max=np.inf), "gamma_max"),
        (lambda: w.heterogeneity_threshold(3, 0.1, n_scan=1), "n_scan"),
        (lambda: w.simplex_oracle_weights(np.eye(2), max_iter=0), "max_iter"),
    ],
)
def test_other_bad_weighting_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()


@given(st.integers(1, 60), st.floats(1e-6, 1 - 1e-6))
def test_geometric_weights_are_finite_and_sum_to_1(n_heads, q):
    a = w.geometric_weights(n_heads, q)
    assert np.all(np.isfinite(a)) and np.all(a > 0)
    assert a.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: w.uniform_weights(10**12), "n_heads"),  # MemoryError
        (lambda: w.geometric_weights(10**12), "n_heads"),
        (lambda: w.fibonacci_weights(10**12), "n_heads"),
        (lambda: w.structured_weights("fibonacci", 10**6), "n_heads"),
        (lambda: w.graded_error_matrix(10**6, 2.0, 0.1), "n_heads"),
        (lambda: w.heterogeneity_threshold(10**6, 0.1), "n_heads"),
        (lambda: w.heterogeneity_threshold(3, 0.1, n_scan=10**12), "n_scan"),
    ],
)
def test_huge_head_counts_are_refused_before_allocation(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: expected at most"):
        call()


def test_fibonacci_weights_of_many_heads_are_finite_and_sum_to_1():
    a = w.fibonacci_weights(2000)  # F_2000 is far beyond a double; the ratios are not
    assert np.all(np.isfinite(a)) and a.sum() == pytest.approx(1.0) and a[0] == pytest.approx(1 - 1 / 1.618033988749895)
