"""Bad input to the symbolic derivations: strings are parsed safely (never run as
Python), sizes are bounded, and every error names its argument."""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy as sp

from mhanw import covariance, data, decomposition, weighting
from mhanw.infra.expressions import exact_number

RUNS_CODE = "__import__('pathlib').Path('{}').touch() or 1"


def test_strings_are_never_run_as_python(tmp_path):
    target = tmp_path / "ran"
    code = RUNS_CODE.format(target)
    calls = [
        (
            lambda: covariance.kernel_overlap_symbolic(bandwidth=code, angle=0, input_variance=1, point=(0, 0)),
            "bandwidth",
        ),
        (lambda: covariance.kernel_overlap_symbolic(bandwidth=1, angle=code, input_variance=1, point=(0, 0)), "angle"),
        (lambda: decomposition.symbolic_decomposition(1, [code]), "weights"),
        (lambda: weighting.crossover_gap(2, code, [sp.Rational(1, 2)] * 2), "rho"),
    ]
    for call, name in calls:
        with pytest.raises(ValueError, match=f"^{name}:"):
            call()
    assert not target.exists()


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.6, sp.Rational(3, 5)),
        (2, sp.Integer(2)),
        ("(sqrt(5) - 1)/2", (sp.sqrt(5) - 1) / 2),
        ("1/2", sp.Rational(1, 2)),
        (sp.Symbol("h"), sp.Symbol("h")),
    ],
)
def test_exact_number_reads_numbers_formulas_and_symbols(value, expected):
    assert sp.simplify(exact_number(value, "x") - expected) == 0


@pytest.mark.parametrize("value", [True, None, 1 + 2j, float("nan"), float("inf"), "x1", "1/0", [1], "sqrt(-1)"])
def test_exact_number_rejects_what_is_not_a_finite_real_number(value):
    with pytest.raises(ValueError, match="^x:"):
        exact_number(value, "x")


def test_symbolic_sizes_are_bounded():
    with pytest.raises(ValueError, match="^n_heads:"):
        decomposition.symbolic_decomposition(decomposition.MAX_SYMBOLIC_HEADS + 1)
    start = time.monotonic()
    m = data.regression_function("(x1+x2+x3+x4+x5)**100")  # not expanded to find its Lipschitz constant
    assert time.monotonic() - start < 10
    assert m.lipschitz_source != "derived"
    assert data.regression_function("2*x1 - x2").lipschitz_constant() == pytest.approx(5**0.5)


@pytest.mark.parametrize(
    "weights",
    [
        [float("nan"), 0.5],
        [np.complex128(1j), 0.5],
        [sp.nan, 1],
        [sp.zoo, 1],
        [np.inf, 0],
        [True, False],
        [None, 1],
        [sp.I, 0],
        [sp.Symbol("z"), 1],
        [5e-324, 1.0],
        [1e300, -1e300],
    ],
)
def test_symbolic_decomposition_rejects_weights_that_are_not_bounded_reals(weights):
    start = time.monotonic()
    with pytest.raises(ValueError, match="^weights:"):  # a subnormal weight hung in sympy
        decomposition.symbolic_decomposition(2, weights)
    assert time.monotonic() - start < 2.0


def test_symbolic_decomposition_accepts_real_symbols():
    t = sp.Symbol("t", real=True)
    sym = decomposition.symbolic_decomposition(2, [t, 1 - t])
    assert sp.simplify(sym.printed_gap) == 0


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: weighting.weights_expr("geometric", 10**12), "n_heads"),  # hung
        (lambda: weighting.crossover_gap(weighting.MAX_SYMBOLIC_HEADS + 1, 0.3, [0.5, 0.5]), "n_heads"),
        (lambda: weighting.crossover_gap(2, 0.3, None), "weights"),  # was TypeError: no len()
        (lambda: weighting.crossover_gap(2, 0.3, 0.5), "weights"),
        (lambda: weighting.crossover_gap(2, 0.3, [True, False]), "weights"),
        (lambda: weighting.crossover_gap(2, 0.3, [[0.5, 0.5]]), "weights"),
    ],
)
def test_symbolic_weightings_bound_their_sizes_and_check_weights(call, name):
    start = time.monotonic()
    with pytest.raises(ValueError, match=f"^{name}:"):
        call()
    assert time.monotonic() - start < 2.0
