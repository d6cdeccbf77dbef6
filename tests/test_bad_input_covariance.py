"""Bad input to the covariance of two heads (`mhanw.covariance`): tiny and huge
bandwidths must give the right finite value (or an error naming the bandwidth
when the value is beyond a double), never NaN or inf."""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy as sp
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
    G = W1 + 0.1 * W2
    small = C.printed_covariance_bound(W1, G, x, 1.0, 10, 1e-5)
    assert np.isfinite(small) and small > 0
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        C.printed_covariance_bound(W1, G, x, 1.0, 10, 1e-200)
    assert C.printed_covariance_bound(W1, W2, x, 1.0, 10, 1e-200) == 0.0  # orthogonal heads: G = 0


@pytest.mark.parametrize(
    "call,name",
    [
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
    ],
)
def test_other_bad_covariance_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()


# ---------------------------------------------------------------- the Monte Carlo covariance


@pytest.mark.parametrize("x,h", [(np.full(4, 6.0), 0.05), (np.zeros(4), 1e-3)])
def test_mc_covariance_refuses_too_few_effective_draws(x, h):
    # a point in the far tails or a tiny bandwidth: a handful of draws under both kernels
    # (kappa came out as 1e-133 or 1000 instead of an error)
    with pytest.raises(ValueError, match=r"^bandwidth: .*effective.*n_samples") as info:
        C.first_order_covariance_mc(W1, W1 + 0.1 * W2, x, h, 10, "zero", n_samples=1000)
    assert "n_samples" in str(info.value)


def test_mc_covariance_with_enough_draws_matches_the_closed_form():
    x = np.array([0.3, -0.2, 0.1, 0.4])
    mc = C.first_order_covariance_mc(W1, W1 + 0.3 * W2, x, 0.5, 10, "zero", n_samples=1 << 16)
    exact = C.kernel_overlap(W1, W1 + 0.3 * W2, x, 0.5)
    assert mc.kappa == pytest.approx(exact, rel=0.05)


def test_first_order_covariance_sigma_overflow_names_sigma():
    with pytest.raises(ValueError, match=r"^sigma: .*overflows"):  # was OverflowError from sigma**2
        C.first_order_covariance(W1, W2, np.zeros(4), 0.5, 10, sigma=1e300)
    assert np.isfinite(C.first_order_covariance(W1, W2, np.zeros(4), 0.5, 10, sigma=1e150).covariance)


@pytest.mark.parametrize("c", [1e-300, 5e-324 * 2**60, 1e-200])
def test_printed_bound_of_tiny_heads_is_its_underflowed_value(c):
    # was LinAlgError (W^T W underflows to a singular matrix); the bound scales as c^6 here
    x = np.array([0.3, -0.2, 0.1, 0.4])
    assert C.printed_covariance_bound(c * W1, c * (W1 + 0.1 * W2), x, 1.0, 10, 0.5) == 0.0


def test_printed_bound_of_heads_at_opposite_extreme_scales_is_exact():
    x = np.array([0.3, -0.2, 0.1, 0.4])
    G = W1 + 0.1 * W2
    b = C.printed_covariance_bound(W1, G, x, 1.0, 10, 0.5)
    # G_jj' is scale free here, p_K(W_j^T x)^-1 scales as c^d_k = 2^-500
    assert C.printed_covariance_bound(2.0**-250 * W1, 2.0**250 * G, x, 1.0, 10, 0.5) == pytest.approx(
        b * 2.0**-500, rel=1e-12
    )


# ---------------------------------------------------------------- the symbolic overlap


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(bandwidth=1e-300), "bandwidth"),  # hung in sympy
        (dict(bandwidth=1e300), "bandwidth"),
        (dict(input_variance=1e-300), "input_variance"),
        (dict(angle=1e300), "angle"),
        (dict(point=(1e300, 0)), "point"),
        (dict(angle=1j), "angle"),
        (dict(angle=1 + sp.I), "angle"),
        (dict(angle=sp.Symbol("z")), "angle"),  # not declared real
        (dict(angle="sqrt(-1)"), "angle"),
        (dict(bandwidth=0), "bandwidth"),
        (dict(bandwidth=np.nan), "bandwidth"),
        (dict(input_variance=True), "input_variance"),
        (dict(point=3), "point"),
        (dict(point="12"), "point"),
    ],
)
def test_symbolic_overlap_checks_before_sympy(kwargs, name):
    args = dict(bandwidth=0.7, angle=0.3, input_variance=1, point=(0, 0)) | kwargs
    start = time.monotonic()
    with pytest.raises(ValueError, match=rf"^{name}: "):
        C.kernel_overlap_symbolic(**args)
    assert time.monotonic() - start < 2.0


def test_symbolic_overlap_accepts_real_symbols_and_bounded_numbers():
    t = sp.Symbol("t", real=True)
    ov = C.kernel_overlap_symbolic(bandwidth=1, angle=t, input_variance=1, point=(0, 0))
    assert "t" in ov.symbols
    ov = C.kernel_overlap_symbolic(bandwidth=1e-3, angle=sp.pi / 2, input_variance=1, point=(0, 0))
    assert float(ov.kappa) == pytest.approx(1.0)


@given(st.floats(-1e300, 1e300), st.floats(1e-300, 1e300))
def test_kernel_overlap_is_finite_or_names_bandwidth(shift, h):
    x = np.array([shift, 0.0, 0.0, 0.0])
    try:
        k = C.kernel_overlap(W1, W1 + 0.3 * W2, x, h)
    except ValueError as exc:
        assert str(exc).startswith("bandwidth: ")
        return
    assert np.isfinite(k) and k > 0
