"""A Lipschitz estimate never under-estimates silently: a slope narrower than the sample's spacing is
found by the secant search, and one that no double resolves gives ``inf`` (``"unbounded"``), never a
constant far too small for chapter 3's printed bound."""

from __future__ import annotations

import math

import pytest
from timeouts import within

from mhanw import data


@pytest.mark.parametrize(
    "formula, exact",
    [
        ("tanh(1e300*x1)", 1e300),  # the estimate was 0
        ("tanh(1e6*x1)", 1e6),  # the estimate was 8,252
        ("tanh(1e3*x1)*tanh(1e3*x2)", 1e3),
        ("1e-3*tanh(1e6*x1) + x2", math.hypot(1e3, 1.0)),
        ("sin(2*x1) + x1", 3.0),
    ],
)
def test_a_steep_narrow_slope_is_found(formula, exact):
    with within(10.0):
        m = data.regression_function(formula)
        L = m.lipschitz_constant()
    assert m.lipschitz_source == "estimated"
    assert exact * 0.99 <= L <= exact * (1 + 1e-9), (formula, L)


@pytest.mark.parametrize("formula", ["tanh(1e20*(x1 - 1))", "tanh(1e30*(x2 + 3))"])
def test_a_slope_narrower_than_the_spacing_of_doubles_is_not_a_finite_estimate(formula):
    with within(10.0):
        m = data.regression_function(formula)
    assert math.isinf(m.lipschitz_constant()) and m.lipschitz_source == "unbounded"
