"""Tests of the data layer's variations (mhanw.data): formulas, input laws, noise laws, DataModel,
the shared formula parser (mhanw.infra.expressions) and the Gaussian-input predictions under them."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from mhanw import covariance, data, heads, montecarlo, scaling
from mhanw.infra import expressions

# --------------------------------------------------------------------------
# Bit-identity of the reference draws
# --------------------------------------------------------------------------


def test_reference_model_draws_exactly_the_reference_sample():
    for kwargs in (dict(n_test=7), dict(x_test=np.ones((3, 4)))):
        a = data.draw_sample(np.random.default_rng(3), "sin13", 50, 4, sigma=0.5, **kwargs)
        b = data.draw_sample(np.random.default_rng(3), data.data_model("sin13"), 50, 4, **kwargs)
        c = data.data_model("sin13").draw(np.random.default_rng(3), 50, 4, **kwargs)
        for s in (b, c):
            for field in ("X", "Y", "X_test", "m_test"):
                np.testing.assert_array_equal(getattr(a, field), getattr(s, field))
    rng = np.random.default_rng(11)
    X, eps, Xt = rng.standard_normal((20, 3)), rng.standard_normal(20), rng.standard_normal((5, 3))
    s = data.data_model("blind", sigma=0.3).draw(np.random.default_rng(11), 20, 3, n_test=5)
    np.testing.assert_array_equal(s.X, X)
    np.testing.assert_array_equal(s.Y, data.regression_function("blind")(X) + 0.3 * eps)
    np.testing.assert_array_equal(s.X_test, Xt)


def _configs():
    return [heads.orthogonal_heads(4, 2, 2), heads.orthogonal_heads(4, 1, 4)]


def test_montecarlo_drivers_bit_identical_for_the_reference_model():
    model = data.data_model("sin13")
    a = montecarlo.integrated_mse(_configs(), "sin13", 60, 10, 4, seed=5)
    b = montecarlo.integrated_mse(_configs(), model, 60, 10, 4, seed=5)
    np.testing.assert_array_equal(a.errors, b.errors)
    x = np.zeros((2, 4))
    a = montecarlo.pointwise_estimates(_configs(), "sin13", x, 60, 4, seed=5, sigma=0.5)
    b = montecarlo.pointwise_estimates(_configs(), model, x, 60, 4, seed=5)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    a = montecarlo.error_moments(_configs()[0], "sin13", 60, 10, 4, seed=5)
    b = montecarlo.error_moments(_configs()[0], model, 60, 10, 4, seed=5, sigma=0.5)
    np.testing.assert_array_equal(a, b)


def test_montecarlo_uses_the_models_inputs_and_noise():
    base = montecarlo.integrated_mse(_configs(), "sin13", 60, 10, 4, seed=5).errors
    for model in (
        data.data_model("sin13", inputs="uniform-cube"),
        data.data_model("sin13", noise="student-t:4"),
        data.data_model("sin13", sigma=0.1),
    ):
        other = montecarlo.integrated_mse(_configs(), model, 60, 10, 4, seed=5).errors
        assert not np.array_equal(base, other)
    # a formula model runs in worker processes (it is pickled as its text)
    model = data.data_model("sin(x1) + x2**2/2", inputs="student-t:5", noise="heteroscedastic:1 + x1**2/4")
    serial = montecarlo.integrated_mse(_configs(), model, 60, 10, 4, seed=5).errors
    parallel = montecarlo.integrated_mse(_configs(), model, 60, 10, 4, seed=5, n_jobs=2).errors
    np.testing.assert_array_equal(serial, parallel)


def test_sigma_must_agree_with_the_model():
    model = data.data_model("zero", sigma=0.2)
    with pytest.raises(ValueError, match=r"^sigma: the data model has noise level 0.2"):
        data.draw_sample(np.random.default_rng(0), model, 5, 2, sigma=0.5)
    with pytest.raises(ValueError, match=r"^sigma: "):
        montecarlo.integrated_mse(_configs(), model, 60, 10, 2, seed=0, sigma=0.5)
    s = data.draw_sample(np.random.default_rng(0), model, 5, 2, sigma=0.2)
    assert s.Y.shape == (5,)


def test_min_dim_and_dimension_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"^configs: 'x9' needs d >= 9"):
        montecarlo.integrated_mse(_configs(), "x9", 60, 10, 2, seed=0)
    with pytest.raises(ValueError, match=r"^d: "):
        data.data_model("x1 + x9").draw(np.random.default_rng(0), 5, 4)
    with pytest.raises(ValueError, match=r"^d: "):
        data.data_model("x1", noise="heteroscedastic:1 + x5**2").draw(np.random.default_rng(0), 5, 4)
    with pytest.raises(ValueError, match=r"^inputs: RHO .* -1/\(d-1\)"):
        data.data_model("x1", inputs="gaussian-equicorrelated:-0.5").draw(np.random.default_rng(0), 5, 4)


def test_data_model_pickles_and_describes_itself():
    model = data.data_model("2*exp(-r**2/4)", inputs="gaussian-diagonal:10", noise="student-t:5", sigma=0.3)
    again = pickle.loads(pickle.dumps(model))
    x = np.random.default_rng(0).standard_normal((4, 3))
    np.testing.assert_array_equal(model.regression(x), again.regression(x))
    assert again.inputs == model.inputs and again.noise == model.noise
    assert model.spec() == {
        "regression": "2*exp(-r**2/4)",
        "inputs": "gaussian-diagonal:10.0",
        "noise": "student-t:5.0",
        "sigma": 0.3,
    }
    assert data.input_distribution(model.inputs.spec) == model.inputs
    assert data.noise_model(model.noise.spec, 0.3) == model.noise
    assert data.data_model("zero").is_reference and not model.is_reference


# --------------------------------------------------------------------------
# Formulas
# --------------------------------------------------------------------------

X5 = np.random.default_rng(2).standard_normal((30, 5)) * 1.5


@pytest.mark.parametrize(
    "text, expected",
    [
        ("sin(x1) + x2**2/2", lambda x: np.sin(x[:, 0]) + x[:, 1] ** 2 / 2),
        ("sin(x1) + x2^2/2 - 0.3*x3*x4", lambda x: np.sin(x[:, 0]) + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2] * x[:, 3]),
        ("2*exp(-r**2/4)", lambda x: 2 * np.exp(-(x * x).sum(axis=1) / 4)),
        ("cos(1.5*r)", lambda x: np.cos(1.5 * np.linalg.norm(x, axis=1))),
        (
            "tanh(x2) * abs(x3) + sqrt(1 + x1**2) + log(2 + cos(x5))",
            lambda x: np.tanh(x[:, 1]) * np.abs(x[:, 2]) + np.sqrt(1 + x[:, 0] ** 2) + np.log(2 + np.cos(x[:, 4])),
        ),
        ("pi + E", lambda x: np.full(x.shape[0], math.pi + math.e)),
        ("3", lambda x: np.full(x.shape[0], 3.0)),
    ],
)
def test_formulas_match_hand_written_functions(text, expected):
    m = data.regression_function(text)
    np.testing.assert_allclose(m(X5), expected(X5), rtol=1e-14, atol=1e-14)
    assert m(X5[0]) == pytest.approx(expected(X5[:1])[0], rel=1e-14, abs=1e-14)
    assert m.name == text and data.regression_function(text) is m


def test_formula_reproduces_catalogue_functions():
    for name, text in [
        ("bvc", "sin(x1) + x2**2/2 - 0.3*x3*x4"),
        ("iso_exp", "2*exp(-r**2/4)"),
        ("aniso", "sin(2*x1) + 0.5*x2"),
        ("iso_cos8", "3*cos(0.8*r)"),
    ]:
        a, b = data.regression_function(name), data.regression_function(text)
        np.testing.assert_allclose(a(X5), b(X5), rtol=1e-13, atol=1e-14)
        assert (a.min_dim, a.isotropic) == (b.min_dim, b.isotropic)


def test_min_dim_is_the_largest_index_written():
    assert data.regression_function("x7").min_dim == 7
    assert data.regression_function("x1 + 0*x4").min_dim == 4
    assert data.regression_function("cos(r)").min_dim == 1


def test_isotropy_is_decided_by_the_symbols():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 5))
    O, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    for text in ["2*exp(-r**2/4)", "r*sin(r)", "1.5", "sin(x1)", "exp(-(x1**2 + x2**2))", "x1*x2 + r"]:
        m = data.regression_function(text)
        assert np.allclose(m(x), m(x @ O.T), atol=1e-12) == m.isotropic, text


def test_lipschitz_constants_of_formulas():
    linear = data.regression_function("3*x1 - 4*x2")
    assert linear.lipschitz_source == "derived" and linear.lipschitz_constant() == pytest.approx(5.0)
    assert data.regression_function("0.5").lipschitz_constant() == 0.0
    poly = data.regression_function("sin(x1) + x2**2/2 - 0.3*x3*x4")
    assert poly.lipschitz_source == "unbounded" and math.isinf(poly.lipschitz_constant())
    quad = data.regression_function("x2**2")
    assert quad.lipschitz_source == "derived" and math.isinf(quad.lipschitz_constant())
    for text, exact in [
        ("sin(x1) + sin(x3)", math.sqrt(2)),
        ("2*exp(-r**2/4)", math.sqrt(2) * math.exp(-0.5)),
        ("sin(2*x1) + x1", 3.0),
        ("tanh(x2)", 1.0),
        ("cos(1.5*r)", 1.5),
    ]:
        m = data.regression_function(text)
        assert m.lipschitz_source == "estimated"
        L = m.lipschitz_constant(5)
        assert L <= exact * (1 + 1e-9) and L == pytest.approx(exact, rel=1e-3), text
    for text in ["exp(x1)", "sin(x1)*x2", "x1*sqrt(abs(x1))"]:
        m = data.regression_function(text)
        assert m.lipschitz_source == "unbounded" and math.isinf(m.lipschitz_constant()), text


@pytest.mark.parametrize(
    "spec, message",
    [
        ("__import__('os')", "unknown name '__import__'"),
        ("x1.__class__", "operator '.' is not allowed"),
        ("x0 + 1", "unknown name 'x0'"),
        ("x1 + y", "unknown name 'y'"),
        ("sine", "expected one of 'zero'"),
        ("x1**1000", "exponent 1000 is larger than 100"),
        ("9**9**9 + x1", "too large"),
        ("exp(1000) * x1", "too large"),
        ("sin(x1, x2)", "operator ',' is not allowed"),
        ("sin()", "could not parse"),
        ("x1 x2", "could not parse"),
        ("(x1 + 1", "could not parse"),
        ("", "empty string"),
        ("x1 " + "+ x1 " * 400, "at most 1000 characters"),
        ("log(x1)", "not a finite real number"),
        ("sqrt(-1) + x1", "not real and finite"),
        ("1/0 + x1", "not real and finite"),
        ("lambda: 1", "unknown name 'lambda'"),
        ("x1; x2", "operator ';' is not allowed"),
        ("'a'", "unexpected"),
        (3, "expected one of"),
        (None, "expected one of"),
    ],
)
def test_bad_formulas_name_the_parameter(spec, message):
    with pytest.raises(
        ValueError, match=r"^regression: .*" + message.replace("(", r"\(").replace("*", r"\*").replace(".", r"\.")
    ):
        data.regression_function(spec)


def test_bad_noise_formulas_name_noise():
    with pytest.raises(ValueError, match=r"^noise: the level multiplier 'x1' must be positive"):
        data.noise_model("heteroscedastic:x1")
    with pytest.raises(ValueError, match=r"^noise: unknown name 'os'"):
        data.noise_model("heteroscedastic:os.system")
    with pytest.raises(ValueError, match=r"^noise: .*needs its parameter EXPR"):
        data.noise_model("heteroscedastic")


# --------------------------------------------------------------------------
# The shared parser
# --------------------------------------------------------------------------


def test_one_parser_for_laws_and_formulas():
    assert scaling.GRAMMAR.parse.__func__ is data.GRAMMAR.parse.__func__ is expressions.Grammar.parse
    with pytest.raises(ValueError, match=r"^variance_law: unknown name 'x1'"):
        scaling.parse_law("x1 * k", "variance_law")
    with pytest.raises(ValueError, match=r"^law: the exponent 1000 is larger than 100"):
        scaling.parse_law("k**1000")
    assert scaling.parse_law("k^2 + 1") == scaling.SYMBOLS["k"] ** 2 + 1


# --------------------------------------------------------------------------
# Input distributions
# --------------------------------------------------------------------------

INPUTS = [
    "gaussian",
    "gaussian-diagonal:10",
    "gaussian-equicorrelated:0.4",
    "gaussian-equicorrelated:-0.2",
    "student-t:5",
    "uniform-cube",
    "uniform-sphere",
]


@pytest.mark.statistical
@pytest.mark.parametrize("spec", INPUTS)
def test_input_moments_match_their_documentation(spec):
    dist = data.input_distribution(spec)
    d, n = 4, 400_000
    X = dist.sample(np.random.default_rng(np.random.SeedSequence(7)), n, d)
    assert X.shape == (n, d)
    mean, cov = X.mean(axis=0), np.cov(X, rowvar=False)
    # Monte Carlo errors: mean sd/sqrt(n); covariance entries sd(X_i X_j)/sqrt(n) (from the sample itself)
    se_mean = X.std(axis=0) / math.sqrt(n)
    prods = X[:, :, None] * X[:, None, :]
    se_cov = prods.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(mean - dist.mean(d)) < 5 * se_mean), spec
    assert np.all(np.abs(cov - dist.covariance(d)) < 5 * se_cov + 1e-12), spec
    assert np.trace(dist.covariance(d)) == pytest.approx(d)


def test_input_documented_covariances_and_invariance():
    d = 4
    np.testing.assert_allclose(
        data.input_distribution("gaussian-diagonal:10").variances(d),
        [4 * 10 ** (k / 3) / sum(10 ** (j / 3) for j in range(4)) for k in range(4)],
    )
    lam = data.input_distribution("gaussian-diagonal:10").variances(d)
    assert lam.max() / lam.min() == pytest.approx(10) and lam.mean() == pytest.approx(1)
    C = data.input_distribution("gaussian-equicorrelated:0.3").covariance(d)
    assert C[0, 0] == 1 and C[0, 1] == pytest.approx(0.3)
    A = data.input_distribution("gaussian-equicorrelated:0.3").gaussian_factor(d)
    np.testing.assert_allclose(A @ A.T, C, atol=1e-14)
    invariant = {s: data.input_distribution(s).rotation_invariant for s in INPUTS}
    assert invariant == {
        "gaussian": True,
        "gaussian-diagonal:10": False,
        "gaussian-equicorrelated:0.4": False,
        "gaussian-equicorrelated:-0.2": False,
        "student-t:5": True,
        "uniform-cube": False,
        "uniform-sphere": True,
    }
    assert data.input_distribution("gaussian-diagonal:1").rotation_invariant
    X = data.input_distribution("uniform-sphere").sample(np.random.default_rng(0), 100, 6)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), math.sqrt(6))
    X = data.input_distribution("uniform-cube").sample(np.random.default_rng(0), 1000, 3)
    assert np.abs(X).max() <= math.sqrt(3)


def test_reference_gaussian_flags():
    assert data.is_reference_gaussian(data.data_model("sin13"))
    assert data.is_reference_gaussian("gaussian") and data.is_reference_gaussian("gaussian-diagonal:1")
    assert data.is_reference_gaussian("bvc")
    for spec in INPUTS[1:]:
        assert not data.is_reference_gaussian(data.data_model("zero", inputs=spec)), spec
    assert data.input_distribution("gaussian-equicorrelated:0.4").is_gaussian
    assert not data.input_distribution("student-t:5").is_gaussian


@pytest.mark.parametrize(
    "spec, message",
    [
        ("gauss", "unknown kind 'gauss'"),
        ("student-t:2", "NU of 'student-t' must exceed 2"),
        ("student-t:1.5", "must exceed 2"),
        ("student-t", "needs its parameter NU"),
        ("student-t:abc", "expected a number for NU"),
        ("student-t:nan", "expected a finite number"),
        ("gaussian-equicorrelated:1", r"RHO .* expected in \(-1, 1\)"),
        ("gaussian-equicorrelated:-1.5", "correlation"),
        ("gaussian-diagonal:0.5", "COND .* expected >= 1"),
        ("uniform-cube:3", "takes no parameter"),
        (None, "expected a spec string"),
    ],
)
def test_bad_input_specs_name_the_parameter(spec, message):
    with pytest.raises(ValueError, match=r"^inputs: .*" + message):
        data.input_distribution(spec)
    with pytest.raises(ValueError, match=r"^inputs: "):
        data.data_model("zero", inputs=spec)


def test_equicorrelated_lower_bound_depends_on_d():
    dist = data.input_distribution("gaussian-equicorrelated:-0.3")
    dist.check_dimension(4)
    with pytest.raises(ValueError, match=r"^inputs: RHO .* -1/\(d-1\) = -0.25"):
        dist.check_dimension(5)
    with pytest.raises(ValueError, match=r"^inputs: "):
        data.sample_inputs(np.random.default_rng(0), 10, 5, "gaussian-equicorrelated:-0.3")


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------


@pytest.mark.statistical
def test_noise_laws_have_the_documented_scale():
    n = 400_000
    X = np.random.default_rng(1).standard_normal((n, 2))
    for spec in ("gaussian", "student-t:5", "student-t:3.5"):
        e = data.noise_model(spec, 0.5).draw(np.random.default_rng(2), X)
        se = np.std(e * e) / math.sqrt(n)
        assert abs(np.mean(e * e) - 0.25) < 5 * se, spec
        assert abs(e.mean()) < 5 * 0.5 / math.sqrt(n)
    noise = data.noise_model("heteroscedastic:1 + x2**2", 0.5)
    e = noise.draw(np.random.default_rng(2), X)
    np.testing.assert_allclose(noise.sd(X), 0.5 * (1 + X[:, 1] ** 2))
    z = e / noise.sd(X)
    assert abs(np.mean(z * z) - 1) < 5 * np.std(z * z) / math.sqrt(n)


def test_reference_noise_is_sigma_times_standard_normal():
    X = np.zeros((10, 2))
    np.testing.assert_array_equal(
        data.noise_model("gaussian", 0.7).draw(np.random.default_rng(4), X),
        0.7 * np.random.default_rng(4).standard_normal(10),
    )


@pytest.mark.parametrize(
    "spec, sigma, name, message",
    [
        ("student-t:2", 0.5, "noise", "must exceed 2"),
        ("student-t:-1", 0.5, "noise", "must exceed 2"),
        ("cauchy", 0.5, "noise", "unknown kind 'cauchy'"),
        ("gaussian", -0.1, "sigma", "non-negative"),
        ("gaussian", float("nan"), "sigma", ""),
        ("heteroscedastic:x1 - 10", 0.5, "noise", "must be positive"),
        ("heteroscedastic:__import__('os')", 0.5, "noise", "unknown name"),
    ],
)
def test_bad_noise_specs_name_the_parameter(spec, sigma, name, message):
    with pytest.raises(ValueError, match=rf"^{name}: .*{message}"):
        data.noise_model(spec, sigma)
    with pytest.raises(ValueError, match=rf"^{name}: "):
        data.data_model("zero", noise=spec, sigma=sigma)


def test_heteroscedastic_level_checked_at_drawn_points():
    # positive on the probe sample, not far out: a wide input law reaches the non-positive region
    model = data.data_model("zero", inputs="student-t:2.5", noise="heteroscedastic:100 - x1**2")
    with pytest.raises(ValueError, match=r"^noise: the level multiplier .*not positive"):
        model.draw(np.random.default_rng(0), 200_000, 1)


# --------------------------------------------------------------------------
# Predictions under other input laws
# --------------------------------------------------------------------------


def _pair():
    Wj, Wjp = heads.pair_heads(np.radians(40), 4, 2)
    return Wj, Wjp, np.array([0.3, -0.2, 0.5, 0.1])


@pytest.mark.parametrize("inputs", ["gaussian", "gaussian-equicorrelated:0.4", "gaussian-diagonal:5"])
def test_first_order_covariance_closed_form_and_monte_carlo_agree(inputs):
    Wj, Wjp, x = _pair()
    exact = covariance.first_order_covariance(Wj, Wjp, x, 0.5, 100, 0.5, "bvc", inputs=inputs)
    mc = covariance.first_order_covariance_mc(
        Wj, Wjp, x, 0.5, 100, data.data_model("bvc", inputs=inputs), n_samples=1 << 19, seed=1
    )
    assert mc.kappa == pytest.approx(exact.kappa, rel=0.01)
    assert mc.covariance == pytest.approx(exact.covariance, rel=0.02)
    assert mc.noise == pytest.approx(exact.noise, rel=0.01)
    assert covariance.kernel_overlap(Wj, Wjp, x, 0.5, inputs=inputs) == exact.kappa


def test_reference_closed_form_unchanged_by_the_inputs_argument():
    Wj, Wjp, x = _pair()
    a = covariance.first_order_covariance(Wj, Wjp, x, 0.5, 100, 0.5, "bvc")
    b = covariance.first_order_covariance(Wj, Wjp, x, 0.5, 100, 0.5, "bvc", inputs="gaussian-diagonal:1")
    assert a == b
    c = covariance.first_order_covariance(Wj, Wjp, x, 0.5, 100, 0.5, "bvc", inputs="gaussian-equicorrelated:0.4")
    assert c.covariance != a.covariance


def test_closed_forms_refuse_non_gaussian_inputs():
    Wj, Wjp, x = _pair()
    for spec in ("student-t:5", "uniform-cube", "uniform-sphere"):
        with pytest.raises(ValueError, match=r"^inputs: .*not Gaussian.*first_order_covariance_mc"):
            covariance.first_order_covariance(Wj, Wjp, x, 0.5, 100, inputs=spec)
        with pytest.raises(ValueError, match=r"^inputs: "):
            covariance.kernel_overlap(Wj, Wjp, x, 0.5, inputs=spec)
        mc = covariance.first_order_covariance_mc(
            Wj, Wjp, x, 0.5, 100, data.data_model("zero", inputs=spec), n_samples=1 << 16
        )
        assert mc.signal == 0.0 and mc.covariance == pytest.approx(mc.kappa * 0.25 / 100)


def test_monte_carlo_covariance_with_heteroscedastic_noise():
    Wj, Wjp, x = _pair()
    homo = covariance.first_order_covariance_mc(Wj, Wjp, x, 0.5, 100, data.data_model("zero"), n_samples=1 << 16)
    hetero = covariance.first_order_covariance_mc(
        Wj, Wjp, x, 0.5, 100, data.data_model("zero", noise="heteroscedastic:2"), n_samples=1 << 16
    )
    assert hetero.noise == pytest.approx(4 * homo.noise, rel=1e-12)
