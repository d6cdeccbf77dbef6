"""Tests of mhanw.data: the reference DGP and the catalogue of regression functions (``book/claims.md``, 'The reference data-generating process')."""

import math

import numpy as np
import pytest

from mhanw import data

X5 = np.array([[0.5, -1.0, 2.0, 0.3, -0.7], [0.0, 0.0, 0.0, 0.0, 0.0]])


def test_catalogue_names_in_theory_order():
    assert data.REGRESSION_FUNCTIONS == (
        "zero",
        "sin13",
        "bvc",
        "iso_exp",
        "iso_cos",
        "iso_cos6",
        "aniso",
        "blind",
        "additive",
        "iso_cos8",
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        ("zero", lambda x: 0.0 * x[0]),
        ("sin13", lambda x: np.sin(x[0]) + np.sin(x[2])),
        ("bvc", lambda x: np.sin(x[0]) + x[1] ** 2 / 2 - 0.3 * x[2] * x[3]),
        ("iso_exp", lambda x: 2 * np.exp(-(x @ x) / 4)),
        ("iso_cos", lambda x: np.cos(1.5 * np.sqrt(x @ x))),
        ("iso_cos6", lambda x: np.cos(1.2 * np.sqrt(x @ x))),
        ("aniso", lambda x: np.sin(2 * x[0]) + 0.5 * x[1]),
        ("blind", lambda x: np.sin(2 * x[0]) + x[0]),
        ("additive", lambda x: np.sin(x).sum()),
        ("iso_cos8", lambda x: 3 * np.cos(0.8 * np.sqrt(x @ x))),
    ],
)
def test_formulas(name, expected):
    m = data.regression_function(name)
    out = m(X5)
    assert out.shape == (2,)
    np.testing.assert_allclose(out, [expected(x) for x in X5], rtol=0, atol=1e-15)
    assert m(X5[0]) == pytest.approx(expected(X5[0]), abs=1e-15)


def test_isotropic_flag_means_rotation_invariance():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 5))
    O, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    for name in data.REGRESSION_FUNCTIONS:
        m = data.regression_function(name)
        same = np.allclose(m(x), m(x @ O.T), atol=1e-12)
        assert same == m.isotropic, name


def test_lipschitz_constants_from_theory():
    assert data.regression_function("zero").lipschitz_constant() == 0.0
    assert data.regression_function("sin13").lipschitz_constant() == math.sqrt(2.0)
    assert data.regression_function("zero").lipschitz_source == "stated"
    assert data.regression_function("sin13").lipschitz_source == "stated"
    assert math.isinf(data.regression_function("bvc").lipschitz_constant())


# A point where |grad m| attains its supremum, for each function with finite L > 0.
ARGMAX = {
    "sin13": [0, 0, 0, 0, 0],
    "iso_exp": [math.sqrt(2.0), 0, 0, 0, 0],
    "iso_cos": [math.pi / 3, 0, 0, 0, 0],  # |sin(1.5 r)| = 1
    "iso_cos6": [math.pi / 2.4, 0, 0, 0, 0],
    "aniso": [0, 0, 0, 0, 0],
    "blind": [0, 0, 0, 0, 0],
    "additive": [0, 0, 0, 0, 0],
    "iso_cos8": [math.pi / 1.6, 0, 0, 0, 0],
}


@pytest.mark.parametrize("name", sorted(ARGMAX))
def test_lipschitz_constants_are_sharp(name):
    m = data.regression_function(name)
    L = m.lipschitz_constant(5)
    # no pair of points beats L ...
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 4000, 5)) * 2
    ratio = np.abs(m(a) - m(b)) / np.linalg.norm(a - b, axis=1)
    assert ratio.max() <= L * (1 + 1e-12)
    # ... and the gradient norm reaches it
    x0 = np.array(ARGMAX[name], dtype=float)
    eps = 1e-6
    grad = [(m(x0 + eps * e) - m(x0 - eps * e)) / (2 * eps) for e in np.eye(5)]
    assert np.linalg.norm(grad) == pytest.approx(L, rel=1e-6)


def test_additive_lipschitz_depends_on_d():
    m = data.regression_function("additive")
    assert m.lipschitz_constant(8) == pytest.approx(math.sqrt(8))


def test_draw_sample_shapes_and_order_of_draws():
    s = data.draw_sample(np.random.default_rng(3), "sin13", n=50, d=4, n_test=7, sigma=0.5)
    assert s.X.shape == (50, 4) and s.Y.shape == (50,) and s.X_test.shape == (7, 4) and s.m_test.shape == (7,)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 4))
    eps = rng.standard_normal(50)
    Xt = rng.standard_normal((7, 4))
    m = data.regression_function("sin13")
    np.testing.assert_array_equal(s.X, X)
    np.testing.assert_array_equal(s.X_test, Xt)
    np.testing.assert_allclose(s.Y, m(X) + 0.5 * eps, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(s.m_test, m(Xt))


def test_common_random_numbers_across_regression_functions():
    a = data.draw_sample(np.random.default_rng(9), "iso_exp", 30, 4, n_test=5)
    b = data.draw_sample(np.random.default_rng(9), "aniso", 30, 4, n_test=5)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    m_a, m_b = data.regression_function("iso_exp"), data.regression_function("aniso")
    np.testing.assert_allclose(a.Y - m_a(a.X), b.Y - m_b(b.X), atol=1e-14)


def test_noise_law_and_sigma_zero():
    s = data.draw_sample(np.random.default_rng(4), "zero", 20000, 2, sigma=0.5)
    assert abs(s.Y.mean()) < 0.02 and abs(s.Y.std() - 0.5) < 0.01
    assert abs(s.X.mean()) < 0.02 and abs(s.X.std() - 1.0) < 0.02
    s0 = data.draw_sample(np.random.default_rng(4), "blind", 10, 3, sigma=0.0)
    np.testing.assert_array_equal(s0.Y, data.regression_function("blind")(s0.X))


def test_fixed_test_points_are_not_drawn():
    x = np.array([[0.3, -0.2, 0.1, 0.4]])
    s = data.draw_sample(np.random.default_rng(5), "sin13", 20, 4, x_test=x)
    np.testing.assert_array_equal(s.X_test, x)
    assert s.m_test[0] == pytest.approx(np.sin(0.3) + np.sin(0.1))
    # the training sample is the same draw as with fresh test points
    t = data.draw_sample(np.random.default_rng(5), "sin13", 20, 4, n_test=3)
    np.testing.assert_array_equal(s.X, t.X)
    np.testing.assert_array_equal(s.Y, t.Y)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(regression="nope", n=5, d=4), "regression"),
        (dict(regression="bvc", n=5, d=3), "d"),
        (dict(regression="sin13", n=0, d=4), "n"),
        (dict(regression="sin13", n=5, d=4, sigma=-1.0), "sigma"),
        (dict(regression="sin13", n=5, d=4, sigma=float("nan")), "sigma"),
        (dict(regression="sin13", n=5, d=4, n_test=-1), "n_test"),
        (dict(regression="sin13", n=5, d=4, x_test=np.zeros((2, 3))), "x_test"),
        (dict(regression="sin13", n=5, d=4, x_test=np.full((2, 4), np.nan)), "x_test"),
    ],
)
def test_draw_sample_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        data.draw_sample(np.random.default_rng(0), **kwargs)


def test_bad_rng_and_bad_points():
    with pytest.raises(ValueError, match="^rng:"):
        data.draw_sample(0, "zero", 5, 2)
    m = data.regression_function("sin13")
    with pytest.raises(ValueError, match="^x:"):
        m(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="^x:"):
        m(np.array([[np.nan, 0, 0]]))
    with pytest.raises(ValueError, match="^regression:"):
        data.regression_function("Zero")


@pytest.mark.parametrize(
    "formula", ["sqrt(abs(x1))", "abs(x1)**0.9", "sqrt(abs(x1 - 1)) + x2", "sin(x1) + sqrt(abs(x2))", "sqrt(r)"]
)
def test_a_gradient_without_a_bound_at_a_point_has_no_lipschitz_constant(formula):
    """sqrt(|x1|) has no finite Lipschitz constant (its gradient grows without bound at 0); the sampled
    estimate read 284 and chapter 3 built its printed bound on it. The local search finds the growth."""
    rf = data.regression_function(formula)
    assert rf.lipschitz_constant() == float("inf") and rf.lipschitz_source == "unbounded"


@pytest.mark.parametrize(
    "formula, L",
    [
        ("abs(x1)", 1.0),
        ("tanh(100*x1)", 100.0),
        ("sin(2*x1) + x1", 3.0),
        ("sqrt(x1**2 + 1e-8)", 1.0),
        ("abs(x1) + abs(x2)", 2**0.5),
    ],
)
def test_a_steep_or_kinked_but_lipschitz_function_keeps_its_constant(formula, L):
    rf = data.regression_function(formula)
    assert rf.lipschitz_source == "estimated" and rf.lipschitz_constant() == pytest.approx(L, rel=1e-6)
