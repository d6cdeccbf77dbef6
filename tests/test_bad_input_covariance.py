"""Bad input to the covariance of two heads (`mhanw.covariance`): tiny and huge
bandwidths must give the right finite value (or an error naming the bandwidth
when the value is beyond a double), never NaN or inf."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw import covariance as C

E = np.eye(4)
W1, W2 = E[:, :2], E[:, 2:]


def _factor_reference(phi, h):
    a = 1.0 + h * h
    return a / np.sqrt(a * a - np.cos(phi) ** 2)


@pytest.mark.parametrize("h", [1e-200, 1e-300, 1e-308])
def test_tiny_bandwidth_limits(h):
    # At phi = 0: (1 + h^2)/(h sqrt(2 + h^2)) ~ 1/(sqrt(2) h); correlation 1.
    assert C.covariance_factor(0.0, h) == pytest.approx(1 / (np.sqrt(2) * h), rel=1e-12)
    assert C.head_correlation(0.0, h) == 1.0
    # At any other angle the factor tends to 1/|sin phi| and the correlation to 0.
    assert C.covariance_factor(np.pi / 6, h) == pytest.approx(2.0, rel=1e-12)
    assert C.head_correlation(np.pi / 2, h) == pytest.approx(np.sqrt(2) * h, rel=1e-12)


def test_subnormal_bandwidth_beyond_a_double_names_bandwidth():
    with pytest.raises(ValueError, match=r"^bandwidth: .*overflows"):
        C.covariance_factor(0.0, 5e-324)
    assert C.head_correlation(0.0, 5e-324) == 1.0


@pytest.mark.parametrize("h", [1e154, 1e200, 1e308])
def test_huge_bandwidth_limits(h):
    assert C.covariance_factor(0.3, h) == 1.0
    assert C.head_correlation(0.3, h) == 1.0


@given(st.floats(-10, 10), st.floats(1e-3, 1e3))
def test_closed_forms_agree_with_the_direct_formula_in_range(phi, h):
    assert C.covariance_factor(phi, h) == pytest.approx(_factor_reference(phi, h), rel=1e-9)


@given(st.floats(-1e6, 1e6), st.floats(1e-300, 1e300))
def test_finite_inputs_give_finite_outputs(phi, h):
    f = C.covariance_factor(phi, h)
    rho = C.head_correlation(phi, h)
    assert np.isfinite(f) and f >= 1.0 - 1e-12
    assert np.isfinite(rho) and 0.0 <= rho <= 1.0 + 1e-12


@pytest.mark.parametrize("h", [1e-200, 1e-300, 1e-30, 1e30, 1e300])
def test_kernel_overlap_of_orthogonal_heads_is_1_at_every_bandwidth(h):
    x = np.array([0.3, -1.0, 2.0, 0.5])
    assert C.kernel_overlap(W1, W2, x, h) == pytest.approx(1.0, rel=1e-12)


def test_kernel_overlap_matches_the_closed_form_for_one_dimensional_heads():
    u = np.array([[1.0], [0.0]])
    for phi in (0.2, 1.0):
        v = np.array([[np.cos(phi)], [np.sin(phi)]])
        for h in (1e-3, 0.5, 3.0):
            assert C.kernel_overlap(u, v, np.zeros(2), h) == pytest.approx(C.covariance_factor(phi, h), rel=1e-10)


def test_kernel_overlap_beyond_a_double_names_bandwidth():
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        C.kernel_overlap(W1, W1, np.ones(4), 1e-200)
    # Identical heads: (1 + h^2)^2 / (h^2 (2 + h^2)) per dimension at x = 0, finite while it fits.
    h = 1e-100
    assert C.kernel_overlap(W1, W1, np.zeros(4), h) == pytest.approx(1 / (2 * h * h), rel=1e-10)


def test_first_order_covariance_at_a_tiny_bandwidth():
    # h -> 0: head j averages m over X3, X4 with X1, X2 fixed at x, and vice versa.
    x = np.array([1.0, 1.0, 0.5, -0.5])
    res = C.first_order_covariance(W1, W2, x, 1e-200, 10, regression="bvc")
    assert np.isfinite(res.covariance) and res.kappa == pytest.approx(1.0)
    assert res.limits[0] == pytest.approx(np.sin(1.0) + 0.5, rel=1e-10)
    # Head j': X3, X4 fixed at x, X1, X2 ~ N(0, 1): E sin X1 + E X2^2 / 2 - 0.3 x3 x4.
    assert res.limits[1] == pytest.approx(0.5 - 0.3 * x[2] * x[3], rel=1e-10)


def test_first_order_covariance_is_unchanged_at_ordinary_bandwidths():
    x = np.array([0.2, -0.3, 0.4, 0.1])
    a = C.first_order_covariance(W1, W2, x, 0.7, 10, regression="bvc")
    b = C.first_order_covariance(W1, W2, x, 0.7 * (1 + 1e-12), 10, regression="bvc")
    assert a.covariance == pytest.approx(b.covariance, rel=1e-9)


def test_printed_bound_in_logs():
    x = np.array([0.2, -0.3, 0.4, 0.1])
    G = (W1 + 0.1 * W2)
    small = C.printed_covariance_bound(W1, G, x, 1.0, 10, 1e-5)
    assert np.isfinite(small) and small > 0
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        C.printed_covariance_bound(W1, G, x, 1.0, 10, 1e-200)
    assert C.printed_covariance_bound(W1, W2, x, 1.0, 10, 1e-200) == 0.0  # orthogonal heads: G = 0


@pytest.mark.parametrize("call,name", [
    (lambda: C.covariance_factor(0.0, 0.0), "bandwidth"),
    (lambda: C.covariance_factor(0.0, -1.0), "bandwidth"),
    (lambda: C.covariance_factor(np.nan, 1.0), "phi"),
    (lambda: C.covariance_factor(1j, 1.0), "phi"),
    (lambda: C.covariance_factor([0.1, 0.2], [1.0, 2.0, 3.0]), "bandwidth"),
    (lambda: C.head_correlation(0.0, True), "bandwidth"),
    (lambda: C.kernel_overlap(W1, W2, np.ones(3), 1.0), "x"),
    (lambda: C.kernel_overlap(W1, W2, np.ones(4), np.inf), "bandwidth"),
    (lambda: C.kernel_overlap(W1.astype(complex), W2, np.ones(4), 1.0), "W_j"),
    (lambda: C.first_order_covariance(W1, W2, np.ones(4), 1.0, 0), "n"),
    (lambda: C.first_order_covariance(W1, W2, np.ones(4), 1.0, 10, sigma=-1), "sigma"),
    (lambda: C.first_order_covariance(W1, W2, np.ones(4), 1.0, 10, nodes=1), "nodes"),
])
def test_other_bad_covariance_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()
