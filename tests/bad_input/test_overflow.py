"""Products and scales of finite inputs never give NaN or inf: each is computed in a rescaled form (by
powers of two, exact) or refused with one line naming the arguments whose product overflows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from timeouts import within

from mhanw import data, heads, nw, training


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(3)
    X, Y, Q = rng.standard_normal((30, 4)), rng.standard_normal(30), rng.standard_normal((5, 4))
    return X, Y, Q, heads.orthogonal_heads(4, 2, 2)


def _concat(W, values, output):
    return heads.HeadConfig(W, rule="concat", values=values, output=output)


@pytest.mark.parametrize("call", [heads.ensemble_estimate, heads.ensemble_parts, heads.concat_contributions])
def test_value_and_output_projections_of_1e200_are_refused_by_name(sample, call):
    """The concat rule with values and an output projection of 1e200 returned [nan nan nan inf]."""
    X, Y, Q, W = sample
    with within(5.0), pytest.raises(ValueError, match=r"^values, output: .*exceed the largest double"):
        call(_concat(W, np.full((2, 5, 1), 1e200), np.full((2, 1), 1e200)), X, Y, Q)


@pytest.mark.parametrize("scale", [1e150, 1e300])
def test_large_values_with_a_small_output_projection_give_the_unscaled_estimate(sample, scale):
    """A product of order one is computed whatever the size of its factors."""
    X, Y, Q, W = sample
    V, O = np.ones((2, 5, 1)), np.ones((2, 1))
    want = heads.ensemble_estimate(_concat(W, V, O), X, Y, Q)
    got = heads.ensemble_estimate(_concat(W, V * scale, O / scale), X, Y, Q)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    c = heads.concat_contributions(_concat(W, V * scale, O / scale), X, Y, Q)
    np.testing.assert_allclose(c, heads.concat_contributions(_concat(W, V, O), X, Y, Q), rtol=1e-12)


@pytest.mark.parametrize("values", ["response", "stream"])
@pytest.mark.parametrize("output", ["fitted", None])
def test_responses_near_the_largest_double_give_finite_estimates(sample, values, output):
    """A fitted W_O on responses of +-1.7e308 gave NaN (the mean and Y - Ybar overflowed)."""
    X, Y, Q, W = sample
    big = np.where(Y > 0, 1.7e308, -1.7e308)
    cfg = _concat(W, values, output)
    with within(5.0), np.errstate(over="raise", invalid="raise"):
        try:
            f = heads.ensemble_estimate(cfg, X, big, Q)
        except ValueError as exc:  # the sum of two heads' contributions of 1.7e308 is beyond a double
            assert output is None and str(exc).startswith("Y, values, output: "), exc
            return
    assert np.all(np.isfinite(f))
    if values == "response":  # the same estimate as on the responses divided by 2^1000, scaled back
        small = heads.ensemble_estimate(cfg, X, np.ldexp(big, -1000), Q)
        np.testing.assert_allclose(np.ldexp(f, -1000), small, rtol=1e-9)
    # (with the whole stream, inputs of order one beside responses of 1e308 are below the resolution of
    # the stream's common scale: their columns then weigh nothing in the estimate)


@pytest.mark.parametrize("rule", ["average", "sum"])
def test_averaged_and_summed_heads_of_responses_near_the_largest_double_are_finite(sample, rule):
    X, Y, Q, W = sample
    big = np.where(Y > 0, 1.7e308, -1.7e308)
    try:
        f = heads.ensemble_estimate(heads.HeadConfig(W, rule=rule), X, big, Q)
    except ValueError as exc:  # Ybar + the sum of two deviations of 1.7e308 may be beyond a double
        assert rule == "sum" and str(exc).startswith("Y, weights: "), exc
    else:
        assert np.all(np.isfinite(f))
    small = heads.ensemble_estimate(heads.HeadConfig(W, rule=rule), X, big / 4, Q)
    assert np.all(np.isfinite(small))


def test_the_sum_of_many_huge_contributions_is_refused_naming_its_factors(sample):
    X, Y, Q, W = sample
    big = np.where(Y > 0, 1.7e308, -1.7e308)
    with pytest.raises(ValueError, match=r"^Y, values, output: .*exceed the largest double"):
        heads.ensemble_estimate(_concat(W, np.full((2, 5, 1), 1e10), np.full((2, 1), 1e10)), X, big, Q)


@pytest.mark.parametrize("scale", [1e160, 1e-160, 1e300, 1e-300])
def test_the_orthogonality_penalty_does_not_depend_on_the_heads_scale(scale):
    """The penalty of heads scaled by 1e+-160 was NaN (W^T W over- or underflowed)."""
    W = heads.haar_heads(5, 2, 3, np.random.default_rng(1))
    value, grad = training.orthogonality_penalty(W)
    v, g = training.orthogonality_penalty(W * scale)
    assert v == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(g * scale, grad, rtol=1e-9, atol=1e-12)


def test_training_tiny_or_huge_heads_never_returns_a_nan_path():
    """train_heads on heads scaled by 1e+-160 returned a path whose loss was NaN at every step."""
    rng = np.random.default_rng(2)
    s = data.data_model("aniso", "gaussian", "gaussian", 0.5).draw(rng, 40, 4, n_test=20)
    W = heads.haar_heads(4, 2, 3, rng)
    with within(20.0):
        path = training.train_heads(W * 1e-160, s, 0.6, penalty=1.0, n_steps=4, record_every=2)
    for field in ("loss", "fit", "hdi", "imse"):
        assert np.all(np.isfinite(getattr(path, field))), field
    with within(20.0), pytest.raises(ValueError, match=r"^W0: .*overflow"):
        training.train_heads(W * 1e160, s, 0.6, penalty=1.0, n_steps=4)


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "epanechnikov"])
@pytest.mark.parametrize("d", [200, 400, 1000, 100_000])
def test_a_density_constant_beyond_a_double_is_refused_and_its_log_is_finite(kernel, d):
    """density_constant at large d raised a raw OverflowError (and the Laplace constant became 0)."""
    spec = nw.REGISTRY[kernel]
    log_c = spec.log_density_constant(d, 0.5)
    assert math.isfinite(log_c)
    try:
        c = spec.density_constant(d, 0.5)
    except ValueError as exc:
        assert str(exc).startswith("d, bandwidth: ") and "log_density_constant" in str(exc)
        assert not -708 < log_c < 709
    else:
        assert 0 < c < math.inf and math.log(c) == pytest.approx(log_c, rel=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "epanechnikov"])
@pytest.mark.parametrize("d", [1, 2, 5, 20])
def test_the_log_density_constant_is_the_log_of_the_closed_form(kernel, d):
    h = 0.7
    closed = {
        "gaussian": (2 * math.pi * h * h) ** (-d / 2),
        "laplace": math.gamma(d / 2) / (2 * math.pi ** (d / 2) * math.gamma(d) * h**d),
        "epanechnikov": (d + 2) * math.gamma(d / 2 + 1) / (2 * math.pi ** (d / 2) * h**d),
    }[kernel]
    assert nw.REGISTRY[kernel].density_constant(d, h) == pytest.approx(closed, rel=1e-12)
