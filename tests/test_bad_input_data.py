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


@pytest.mark.parametrize(
    "x,message",
    [
        (np.ones((2, 3)) * 1j, "complex"),
        (np.ones((2, 3), dtype=bool), "booleans"),
        (np.array([["a", "b", "c"]]), "strings"),
        (np.full((1, 3), np.nan), "finite"),
        (np.ones((2, 2, 3)), "1-D or 2-D"),
        (np.ones((2, 2)), "d >= 3"),
    ],
)
def test_regression_function_input(x, message):
    with pytest.raises(ValueError, match=rf"^x: .*{message}"):
        data.regression_function("sin13")(x)


@pytest.mark.parametrize("rng", [None, 0, np.random.SeedSequence(0), np.random.RandomState(0)])
def test_draws_need_a_generator(rng):
    with pytest.raises(ValueError, match=r"^rng: "):
        data.sample_inputs(rng, 3, 2)
    with pytest.raises(ValueError, match=r"^rng: "):
        data.draw_sample(rng, "zero", 3, 2)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(n=0), "n"),
        (dict(n=2.0), "n"),
        (dict(n=True), "n"),
        (dict(d=2), "d"),
        (dict(sigma=-1.0), "sigma"),
        (dict(sigma=np.nan), "sigma"),
        (dict(n_test=-1), "n_test"),
        (dict(x_test=np.ones((2, 4))), "x_test"),
        (dict(x_test=np.ones((2, 3)) * 1j), "x_test"),
        (dict(regression="sine"), "regression"),
    ],
)
def test_draw_sample_bad_arguments(kwargs, name):
    args = dict(regression="sin13", n=5, d=3) | kwargs
    with pytest.raises(ValueError, match=rf"^{name}: "):
        data.draw_sample(RNG, args.pop("regression"), **args)


def test_lipschitz_dimension():
    with pytest.raises(ValueError, match=r"^d: "):
        data.regression_function("additive").lipschitz_constant(True)
    assert data.regression_function("additive").lipschitz_constant(4) == 2.0


@pytest.mark.parametrize(
    "weights,message",
    [
        ([[0.5, 0.6]], "sum to 1"),
        ([[1.5, -0.5]], "non-negative"),
        ([[0.5, 0.5j]], "complex"),
        ([0.5, 0.5], "2-D"),
        ([[np.nan, 1.0]], "finite"),
        ([[True, False]], "booleans"),
    ],
)
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


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: locality.expected_neff_fraction(0.0), "d_k"),
        (lambda: locality.expected_neff_fraction([[1.0]]), "d_k"),
        (lambda: locality.neff_fraction_given_query(np.ones(3)), "queries"),
        (lambda: locality.neff_fraction_given_query(np.ones((2, 3)), scale=0.0), "scale"),
        (lambda: locality.tilted_sine_limit(np.nan), "query"),
        (lambda: locality.tilted_sine_limit(1.0, beta=-1.0), "beta"),
        (lambda: locality.tilted_sine_limit("1"), "query"),
    ],
)
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


# ---------------------------------------------------------------- extreme inputs of m


@pytest.mark.parametrize("scale", [1e200, 1e300, 1e-200, 1e-300, 5e-324])
def test_norm_based_regressions_are_finite_and_right_at_extreme_scales(scale):
    x = np.array([[3.0, -4.0, 12.0]]) * scale  # |x| = 13 scale
    r = data.regression_function("r")(x)
    assert np.isfinite(r[0]) and r[0] == pytest.approx(13.0 * scale, rel=1e-15)  # was inf, and 0 below 1e-154
    value = data.regression_function("iso_cos")(x)[0]  # was NaN at 1e200
    assert np.isfinite(value) and -1.0 <= value <= 1.0
    if scale < 1.0:
        assert value == 1.0


@given(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=6))
def test_bounded_regressions_give_finite_values_at_every_finite_input(coords):
    x = np.array([coords])
    for name in ("iso_cos", "iso_cos6", "iso_cos8", "iso_exp", "zero", "additive", "r/(1 + r)", "cos(r)"):
        assert np.isfinite(data.regression_function(name)(x)[0])


@pytest.mark.parametrize("name,x", [("bvc", [0.0, 1e200, 0.0, 0.0]), ("exp(x1)", [800.0]), ("1/(x1 - 50)", [50.0])])
def test_values_beyond_a_double_or_undefined_name_x(name, x):
    with pytest.raises(ValueError, match=r"^x: .*not a finite double"):
        data.regression_function(name)(np.array([x]))


# ---------------------------------------------------------------- specs of the input and noise laws


def test_condition_number_is_bounded():
    with pytest.raises(ValueError, match=r"^inputs: COND .*<= 1e\+12"):  # 1e308 gave zero variances
        data.input_distribution("gaussian-diagonal:1e308")
    v = data.input_distribution(f"gaussian-diagonal:{data.MAX_CONDITION}").variances(64)
    assert np.all(np.isfinite(v)) and np.all(v > 0) and v.max() / v.min() == pytest.approx(data.MAX_CONDITION)


@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: data.InputDistribution("student-t", True), "inputs"),
        (lambda: data.InputDistribution("gaussian-diagonal", True), "inputs"),
        (lambda: data.InputDistribution("gaussian-equicorrelated", np.bool_(False)), "inputs"),
        (lambda: data.NoiseModel(0.5, "student-t", parameter=True), "noise"),
        (lambda: data.NoiseModel(True), "sigma"),
    ],
)
def test_bool_parameters_are_rejected(make, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        make()


@pytest.mark.parametrize(
    "spec,value",
    [
        ("student-t:pi", np.pi),
        ("gaussian-diagonal:E", np.e),
        ("gaussian-equicorrelated:1/pi", 1 / np.pi),
        ("student-t:2+sqrt(2)", 2 + 2**0.5),
    ],
)
def test_spec_parameters_may_be_numbers_written_with_pi_and_e(spec, value):
    assert data.input_distribution(spec).parameter == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("formula,value", [("pi", np.pi), ("E", np.e), ("pi*x1", np.pi), ("E**x1", np.e)])
def test_pi_and_e_are_numbers_in_formulas(formula, value):
    # "pi" and "E" alone were rejected as unknown regression names
    assert data.regression_function(formula)(np.ones((1, 2)))[0] == pytest.approx(value)
    if formula != "pi*x1":  # a noise level multiplier must be positive everywhere
        assert data.noise_model(f"heteroscedastic:{formula}").sd(np.ones((1, 2)))[0] == pytest.approx(0.5 * value)


@pytest.mark.parametrize(
    "rng,X,name",
    [
        (np.random.default_rng(0), np.ones(3), "X"),  # was IndexError
        (np.random.default_rng(0), np.ones((3, 2)) * 1j, "X"),
        (np.random.default_rng(0), np.full((3, 2), np.nan), "X"),
        (np.random.default_rng(0), [["a", "b"]], "X"),
        (None, np.ones((3, 2)), "rng"),  # was AttributeError
        (0, np.ones((3, 2)), "rng"),
    ],
)
def test_noise_draw_checks_its_arguments(rng, X, name):
    for spec in ("gaussian", "student-t:5", "heteroscedastic:1 + x2**2"):
        with pytest.raises(ValueError, match=rf"^{name}: "):
            data.noise_model(spec).draw(rng, X)


def test_noise_draw_needs_the_columns_of_its_formula():
    with pytest.raises(ValueError, match=r"^X: .*d >= 2"):
        data.noise_model("heteroscedastic:1 + x2**2").draw(np.random.default_rng(0), np.ones((3, 1)))
    # a list is read as an array; the draw is the model's
    a = data.noise_model("heteroscedastic:1 + x2**2").draw(np.random.default_rng(0), [[0.0, 1.0]])
    b = 0.5 * 2.0 * np.random.default_rng(0).standard_normal(1)
    assert a == pytest.approx(b)


def test_infinite_noise_level_multiplier_is_named():
    with pytest.raises(ValueError, match=r"^noise: the level multiplier .*not finite"):
        data.noise_model("heteroscedastic:exp(x1)").sd(np.array([[1000.0]]))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: data.sample_inputs(RNG, 10**12, 3), "n"),  # was MemoryError
        (lambda: data.sample_inputs(RNG, 5, 10**12), "d"),
        (lambda: data.draw_sample(RNG, "zero", 10**12, 3), "n"),
        (lambda: data.draw_sample(RNG, "zero", 5, 3, n_test=10**12), "n_test"),
        (lambda: data.input_distribution("gaussian").covariance(10**6), "d"),
    ],
)
def test_huge_sizes_are_refused_before_allocation(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: .*exceeds"):
        call()


# ---------------------------------------------------------------- locality at extreme scales


@pytest.mark.parametrize("regression,query", [("exp(x1)", [800.0]), ("x1**2", [1e200]), ("iso_cos", [1e200])])
def test_tilted_mean_names_query_when_not_computable(regression, query):
    # was inf (exp, x1**2) and cos(1.5|q|) without the tilt's spread (iso_cos: Z + q rounds to q)
    with pytest.raises(ValueError, match=r"^query: "):
        locality.tilted_mean(regression, np.array(query))


def test_tilted_mean_far_out_but_resolvable_is_its_value():
    # E exp(-(Z + c)^2/4) * 2 for Z ~ N(0, 1): 2 sqrt(2/3) exp(-c^2/6)
    c = 30.0
    assert locality.tilted_mean("iso_exp", np.array([c])) == pytest.approx(
        2 * np.sqrt(2 / 3) * np.exp(-c * c / 6), rel=1e-9
    )


@pytest.mark.parametrize(
    "scale,queries",
    [
        (1e300, [[1.0, 2.0]]),
        (1e300, [[0.0, 0.0]]),
        (1e300, [[1e-300, 0.0]]),
        (1e-300, [[1e300, 0.0]]),
        (1.0, [[1e-200, 1e-200]]),
    ],
)
def test_neff_fraction_limit_at_extreme_scales(scale, queries):
    q = np.array(queries)
    with np.errstate(over="ignore"):
        t = scale * np.linalg.norm(q / np.abs(q).max()) * np.abs(q).max() if np.any(q) else 0.0
        expected = np.exp(-t * t)
    got = locality.neff_fraction_given_query(q, scale)  # was OverflowError at scale 1e300
    assert np.all(np.isfinite(got)) and got[0] == pytest.approx(expected, rel=1e-12)


def test_expected_neff_fraction_at_subnormal_dimension_is_its_limit():
    assert float(locality.expected_neff_fraction(5e-324)) == 1.0  # was NaN
