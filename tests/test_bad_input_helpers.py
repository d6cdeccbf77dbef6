"""Chapter helpers and writers turn bad input into one-line errors naming the argument.

Raw exceptions reached callers from helpers and writers: ``TypeError`` and
``AttributeError`` for an argument of the wrong type, an ambiguous truth value
for an array where a flag or a name was expected, ``max()`` of an empty list,
``OverflowError`` for an integer beyond a double, error messages spanning
several lines (an array's repr), and errors that blamed another argument
(``draw_sample(sigma=1e308)`` blamed the regression function for the noise's
overflow).  Each case below was found by a sweep of the public API; each must
now be a ``ValueError`` whose single line starts with the argument's name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mhanw import comparisons, data, locality, montecarlo, pretrained, scaling
from mhanw.decomposition import jackknife
from mhanw.infra import sweep, tables, texout, validate, verdicts
from mhanw.weighting import structured_weights

RNG = np.random.default_rng


def _named(call, arg):
    """``call()`` raises a one-line ValueError starting with ``arg:``."""
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{arg}: "), message
    assert "\n" not in message, message
    return message


def test_noise_beyond_a_double_blames_sigma_not_the_regression():
    message = _named(lambda: data.draw_sample(RNG(0), "sin13", 1000, 3, sigma=1e308), "sigma")
    assert "noise" in message and "sin13" not in message.split("(")[0]
    _named(lambda: data.draw_sample(RNG(0), "exp(800*x1)", 1000, 1), "regression")  # m itself overflows


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: comparisons.random_configuration_imse(5, 3, 0, 30, 5, 2), "regressions"),  # TypeError: not iterable
        (lambda: comparisons.random_configuration_imse([1 + 1j], 3, 0, 30, 5, 2), "regressions[0]"),
        (
            lambda: comparisons.random_configuration_imse(["sin13x"], 3, 0, 30, 5, 2),
            "regressions[0]",
        ),  # named regression
        (lambda: comparisons.random_configuration_imse(["iso_cos"], 3, 0, 30, 5, 2, data=[]), "data"),  # AttributeError
        (lambda: comparisons.random_configuration_imse(["iso_cos"], 3, 0, 30, 5, 2, progress=np.ones(3)), "progress"),
        (lambda: __import__("mhanw.premises").premises.rotation_invariant_data({}), "model"),  # no .regression
        (lambda: comparisons.imse_and_gradient(np.ones((2, 4, 2)), "batch", 0.5), "batch"),  # AttributeError: no .X
        (lambda: pretrained.layer_contrast(np.ones((3, 2, 4)), layer=["a"]), "layer"),  # TypeError: '<=' not supported
        (
            lambda: pretrained.random_subspace_null(3, 6, 2, 3, 0, circuit=np.ones(3)),
            "circuit",
        ),  # ambiguous truth value
        (lambda: montecarlo.error_moments("x", "zero", 10, 5, 2, 0), "config"),  # named configs
        (lambda: data.is_reference_gaussian(""), "model"),  # named regression
        (lambda: locality.exp_kernel_estimates([20, 40], 2, 0, "sin13x"), "model"),  # named regression
        (lambda: locality.exp_kernel_sine_estimates([], 2, 0), "sample_sizes"),  # max() of an empty list
        (lambda: locality.neff_by_dimension([], 5, 5, 0), "dims"),  # max() of an empty list
        (
            lambda: comparisons.minimize_imse(
                comparisons.crn_batch("sin13", 30, 10, 3, 4, 0), 2, 2, 0.5, RNG(0), first_move=1e308
            ),
            "first_move",
        ),  # W overflowed and was blamed
        (lambda: jackknife(lambda a: float(np.mean(a)), (np.array([]),)), "arrays"),  # "n_blocks ... in [2, 0]"
        (lambda: scaling.optimal_head_dim(1000, 8, divisors_only=np.ones(3)), "divisors_only"),  # truth value
        (lambda: structured_weights(np.ones((3, 3)), 3), "scheme"),  # ambiguous truth value
        (lambda: sweep.run_sweep(lambda: 0, [1], 2, 0), "func"),  # TypeError in every worker
        (lambda: sweep.run_replicates(lambda a, b: 0, 2, 0), "func"),
        (lambda: tables.show(3), "data"),  # was a TypeError
        (lambda: tables.show({"a": [1.0]}, index=["a"]), "index"),  # TypeError: unhashable
        (lambda: tables.show({"a": [1.0]}, split=np.ones(3)), "split"),  # ambiguous truth value
        (lambda: verdicts.show_findings(3), "records"),  # TypeError: not iterable
    ],
)
def test_a_bad_argument_is_named_in_one_line(call, arg):
    _named(call, arg)


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: texout.format_number(10**400), "x"),  # OverflowError: int too large to convert to float
        (lambda: texout.format_mean_se(1.0, 10**400), "se"),
        (lambda: validate.real_scalar(-(10**400), "value"), "value"),
        (lambda: tables.show({"a": [1.0]}, max_rows=10**400), "max_rows"),
        (lambda: __import__("mhanw.covariance").covariance.kernel_overlap_symbolic(angle=10**400), "angle"),
    ],
)
def test_integers_beyond_a_double_are_named(call, arg):
    assert "digits" in _named(call, arg)  # shown by their size, not 400 digits


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: comparisons.crn_batch("sin13", 30, 10, 3, 4, np.zeros((3, 3))), "seed"),
        (lambda: data.regression_function(np.zeros((3, 3))), "regression"),
        (lambda: scaling.solve_head_size(1000, 8, c_bias=np.ones((2, 3))), "c_bias"),
    ],
)
def test_an_array_in_a_message_is_one_line(call, arg):
    assert "array of shape" in _named(call, arg)


def test_brief_shows_values_on_one_line():
    assert validate.brief(np.ones((2, 3))) == "an array of shape (2, 3) (float64)"
    assert validate.brief(np.ones(3)) == "array([1., 1., 1.])"
    assert validate.brief(10**400) == "an integer of 401 digits"
    assert validate.brief("a  b") == "'a  b'"
    assert "\n" not in validate.brief({"a": np.eye(3)})
    assert len(validate.brief("x" * 1000)) == 203


def test_a_kernel_that_is_an_array_is_named():
    from mhanw import nw

    q, k, v = np.zeros((1, 2, 2)), np.zeros((1, 5, 2)), np.ones((1, 5, 1))
    _named(lambda: nw.weighted_mean(q, k, v, np.ones(3), (1.0, 0)), "kernel")  # was an ambiguous truth value
    assert np.all(np.isfinite(nw.weighted_mean(q, k, v, "gaussian", (1.0, 0))))


def test_validate_boolean_and_positive_ints():
    assert validate.boolean(np.bool_(True), "flag") is True
    for bad in (1, "True", np.ones(2), None):
        _named(lambda bad=bad: validate.boolean(bad, "flag"), "flag")
    assert validate.positive_ints(3, "dims") == [3] and validate.positive_ints([1, np.int64(2)], "dims") == [1, 2]
    for bad in ([], "12", {1: 2}, [1.5], [0], None):
        _named(lambda bad=bad: validate.positive_ints(bad, "dims"), "dims")
    assert math.isfinite(validate.real_scalar(10**300, "value"))


def test_the_right_argument_is_blamed_and_impossible_sizes_are_refused():
    """A sweep found the wrong name blamed (n_draws for model_draws, seed for stream, 'A' for n_heads)
    and impossible values taken (a negative inverse temperature, d_k = 0, H = 0, n = 0)."""
    import numpy as np

    with pytest.raises(ValueError, match="^n_heads: "):
        comparisons.random_configurations(5, np.random.default_rng(1), d=2, d_k=2, n_heads=3)
    with pytest.raises(ValueError, match="^scale: "):
        locality.gaussian_model_neff([5], 2, 3, 1, scale=-1.0)
