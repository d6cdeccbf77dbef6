"""Bad input to the data-generating process and the locality measures
(`mhanw.data`, `mhanw.locality`): wrong dtypes and shapes, implicit seeds,
extreme values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw import data, locality

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("x,message", [(np.ones((2, 3)) * 1j, "complex"), (np.ones((2, 3), dtype=bool), "booleans"),
                                       (np.array([["a", "b", "c"]]), "strings"), (np.full((1, 3), np.nan), "finite"),
                                       (np.ones((2, 2, 3)), "1-D or 2-D"), (np.ones((2, 2)), "d >= 3")])
def test_regression_function_input(x, message):
    with pytest.raises(ValueError, match=rf"^x: .*{message}"):
        data.regression_function("sin13")(x)


@pytest.mark.parametrize("rng", [None, 0, np.random.SeedSequence(0), np.random.RandomState(0)])
def test_draws_need_a_generator(rng):
    with pytest.raises(ValueError, match=r"^rng: "):
        data.sample_inputs(rng, 3, 2)
    with pytest.raises(ValueError, match=r"^rng: "):
        data.draw_sample(rng, "zero", 3, 2)


@pytest.mark.parametrize("kwargs,name", [
    (dict(n=0), "n"), (dict(n=2.0), "n"), (dict(n=True), "n"), (dict(d=2), "d"),
    (dict(sigma=-1.0), "sigma"), (dict(sigma=np.nan), "sigma"), (dict(n_test=-1), "n_test"),
    (dict(x_test=np.ones((2, 4))), "x_test"), (dict(x_test=np.ones((2, 3)) * 1j), "x_test"),
    (dict(regression="sine"), "regression"),
])
def test_draw_sample_bad_arguments(kwargs, name):
    args = dict(regression="sin13", n=5, d=3) | kwargs
    with pytest.raises(ValueError, match=rf"^{name}: "):
        data.draw_sample(RNG, args.pop("regression"), **args)


def test_lipschitz_dimension():
    with pytest.raises(ValueError, match=r"^d: "):
        data.regression_function("additive").lipschitz_constant(True)
    assert data.regression_function("additive").lipschitz_constant(4) == 2.0


@pytest.mark.parametrize("weights,message", [([[0.5, 0.6]], "sum to 1"), ([[1.5, -0.5]], "non-negative"),
                                             ([[0.5, 0.5j]], "complex"), ([0.5, 0.5], "2-D"),
                                             ([[np.nan, 1.0]], "finite"), ([[True, False]], "booleans")])
def test_effective_sample_size_input(weights, message):
    with pytest.raises(ValueError, match=rf"^weights: .*{message}"):
        locality.effective_sample_size(weights)


@given(st.floats(1e-300, 1e300))
def test_expected_neff_fraction_is_finite_and_between_its_limits(d_k):
    f = float(locality.expected_neff_fraction(d_k))
    assert np.exp(-1.0) - 1e-12 <= f <= 1.0


def test_expected_neff_fraction_at_huge_dimension_is_its_limit():
    assert float(locality.expected_neff_fraction(1e300)) == pytest.approx(np.exp(-1.0), rel=1e-12)
    assert float(locality.expected_neff_fraction(64.0)) == pytest.approx((1 + 2 / 64) ** -32, rel=1e-14)


@pytest.mark.parametrize("call,name", [
    (lambda: locality.expected_neff_fraction(0.0), "d_k"),
    (lambda: locality.expected_neff_fraction([[1.0]]), "d_k"),
    (lambda: locality.neff_fraction_given_query(np.ones(3)), "queries"),
    (lambda: locality.neff_fraction_given_query(np.ones((2, 3)), scale=0.0), "scale"),
    (lambda: locality.tilted_sine_limit(np.nan), "query"),
    (lambda: locality.tilted_sine_limit(1.0, beta=-1.0), "beta"),
    (lambda: locality.tilted_sine_limit("1"), "query"),
])
def test_other_bad_locality_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()


@given(st.floats(-1e300, 1e300), st.floats(1e-300, 1e300))
def test_tilted_sine_limit_is_finite_or_names_beta(q, beta):
    if np.isfinite(q * beta):
        assert np.isfinite(locality.tilted_sine_limit(q, beta))
    else:
        with pytest.raises(ValueError, match=r"^beta: .*overflows"):
            locality.tilted_sine_limit(q, beta)
