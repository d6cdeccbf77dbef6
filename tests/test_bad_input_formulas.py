"""Formulas and exact numbers ask bounded work of sympy, or are refused naming the argument.

Covers the exact numbers of the symbolic derivations (chapter 7's ratio ``q``, Theorem 7.1), the derived
gaps of chapter 2's symbolic rule (Theorem 3.1), the Lipschitz estimate of regression formulas, and the
laws and asymptotic formulas of the head-size models (Theorem 6.1): each bad input is refused at once with
a ``ValueError`` naming it, instead of a hang, a NaN or inf cell, or a raw KeyError/ZeroDivisionError.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from mhanw import data, scaling
from mhanw.chapters import ch07_structured_weighting as ch07
from mhanw.infra import expressions as E
from mhanw.infra.params import ParameterError
from mhanw.pipeline import scenarios

ROOT = Path(__file__).resolve().parents[1]

TEN_ROOTS = "(" + "+".join(f"sqrt({p})" for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29)) + ")/50"

#: Exact ratios in (0, 1) whose symbolic crossover took from ten seconds to hours.
HEAVY_Q = [
    TEN_ROOTS,
    "(pi+1)/(pi+5)",
    "(pi+E)/8",
    "pi/(pi+4)",
    "(2**(1/3)+3**(1/3))/4",
    "(sqrt(2)+sqrt(3))**100/10**78",
    "(sqrt(2)+sqrt(3)+sqrt(5)+sqrt(7))/10",
    "(2**(1/8)+1)/(2**(1/8)+3)",
]
#: Exact ratios the chapter takes as they are.
LIGHT_Q = [
    "(sqrt(5) - 1)/2",
    "2/(1+sqrt(5))",
    "(sqrt(2)+sqrt(3)+sqrt(5))/6",
    "pi/4",
    "E/3",
    "sqrt(2)/2",
    "(sqrt(5)-1)**2/4",
    0.5,
    "0.3",
]


def _fast(f, seconds: float = 5.0):
    start = time.monotonic()
    out = f()
    assert time.monotonic() - start < seconds
    return out


# --------------------------------------------------------------------------- exact numbers (chapter 7)


@pytest.mark.parametrize("q", HEAVY_Q)
def test_heavy_ratio_is_refused_by_the_parameter_check(q):
    start = time.monotonic()
    with pytest.raises(ParameterError, match=r"^q: "):
        ch07.PARAMETERS["q"].check(q, "q")
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("q", LIGHT_Q)
def test_light_ratio_is_accepted(q):
    assert ch07.PARAMETERS["q"].check(q, "q") == q
    assert 0 < float(E.exact_number(q, "q")) < 1


def test_symbolic_crossover_of_three_roots_still_runs():
    """A ratio the parameter check accepts is derived by the chapter's symbolic step in seconds (the error
    model it also reads is given, not computed: its threshold decision is not what this checks)."""
    import pandas as pd

    from mhanw.chapters import base
    from mhanw.infra.results import Q, Raw

    q = "(sqrt(2)+sqrt(3)+sqrt(5))/6"
    values = dict(fidelity="quick", seed=1, figures_dir="f", macros_path="m.tex", results_path="r.json", n_jobs=1)
    values |= dict(H=2, rho=0.0, q=q, weights="geometric", regression="blind", control_regression="iso_exp")
    values |= dict(inputs="gaussian", noise="gaussian", sigma=0.5, n=500, bandwidth=0.3, angles_deg=[0, 20], d=8)
    ctx = base.setup(ch07, render=False, **values)
    model = {
        "data": Raw({"gamma_star": pd.DataFrame({"g": [2.0]})}),
        "oracle_gap_at_one": Q(0.0),
        "uniform_wins_at_one": True,
    }
    out = _fast(lambda: ch07.symbolic(ctx, model), 20.0)
    assert out["gamma_star"].value == pytest.approx(out["gamma_star_scan"], rel=1e-9)


@pytest.mark.parametrize("value", ["1-1e-16", "0.9999999999999999", 0.9999999999999999, "1-1e-15"])
def test_a_ratio_just_below_one_stays_below_one(value):
    assert ch07.PARAMETERS["q"].check(value, "q") == value
    assert E.exact_number(value, "q") < 1


def test_a_ratio_a_double_cannot_tell_from_one_says_so():
    with pytest.raises(ParameterError, match=r"^q: .*as a double"):
        ch07.PARAMETERS["q"].check("1 - 10**-20", "q")


@pytest.mark.parametrize(
    "value, exact",
    [
        (0.6, sp.Rational(3, 5)),
        (0.1, sp.Rational(1, 10)),
        (1 / 3, sp.Rational(1, 3)),
        ("0.25", sp.Rational(1, 4)),
        (2, sp.Integer(2)),
    ],
)
def test_exact_number_of_a_plain_double_is_unchanged(value, exact):
    assert E.exact_number(value, "v") == exact


_HUGE = sp.Pow(10, 10**8, evaluate=False)
HUGE_SYMPY = [
    sp.Pow(9, sp.Pow(9, 9, evaluate=False), evaluate=False),
    sp.Add(_HUGE, sp.Mul(-1, _HUGE, evaluate=False), evaluate=False),
    sp.factorial(10**7, evaluate=False),
    sp.gamma(10**6, evaluate=False),
    sp.sinh(10**5, evaluate=False),
    sp.exp(sp.Symbol("t") * 10**5) * 0 + sp.sinh(sp.Symbol("t") * 10**9),
]


@pytest.mark.parametrize("value", HUGE_SYMPY, ids=range(len(HUGE_SYMPY)))
def test_exact_number_checks_the_size_of_a_sympy_input(value):
    with pytest.raises(ValueError, match=r"^v: "):
        _fast(lambda: E.exact_number(value, "v"), 2.0)


def test_check_size_refuses_a_function_of_unknown_growth():
    i = sp.Symbol("i")
    with pytest.raises(ValueError, match=r"^v: .*cannot be bounded"):
        E.check_size(sp.Sum(i, (i, 1, 10**9)), "v")


@pytest.mark.parametrize(
    "value", [sp.factorial(5), sp.gamma(sp.Rational(1, 2)), sp.pi / 2, sp.Symbol("t", real=True) ** 2 + 1]
)
def test_exact_number_keeps_a_moderate_sympy_input(value):
    assert E.exact_number(value, "v") == value


# --------------------------------------------------------------------------- derived gaps (chapter 2)


# --------------------------------------------------------------------------- regression formulas


_XS = [f"x{i}" for i in range(1, 200)]
HEAVY_REGRESSIONS = [
    "*".join(_XS),
    "tanh(" + "+".join(_XS) + ")",
    "(" + "+".join(_XS[:100]) + ")*sin(" + "+".join(_XS[100:]) + ")",
]


@pytest.mark.parametrize("spec", HEAVY_REGRESSIONS, ids=["product", "tanh_sum", "sum_times_sin"])
def test_regression_whose_lipschitz_estimate_is_too_large_is_refused(spec):
    with pytest.raises(ValueError, match=r"^regression: .*Lipschitz"):
        _fast(lambda: data.regression_function(spec), 5.0)


def test_scenario_with_a_199_factor_regression_is_refused_quickly(tmp_path):
    path = tmp_path / "many.toml"
    path.write_text(f'[all]\nregression = "{"*".join(_XS)}"\n')
    with pytest.raises(ValueError, match="regression"):
        _fast(lambda: scenarios.load(path, ROOT), 10.0)


@pytest.mark.parametrize(
    "spec, source",
    [
        ("*".join(_XS[:30]), "unbounded"),
        ("+".join(f"sin({x})" for x in _XS[:60]), "estimated"),
        ("sin(x1)*x2**2/2 + exp(-r**2/4)", "unbounded"),
    ],
)
def test_moderate_regression_is_still_estimated(spec, source):
    assert data.regression_function(spec).lipschitz_source == source


# --------------------------------------------------------------------------- scaling laws and asymptotics


def _model(asymptotic):
    return scaling.MSEModel(name="x", bias_law="c_B/k**2", variance_law="c_V*k/n", asymptotics={"a": asymptotic})


@pytest.mark.parametrize("formula", ["log(0)*n", "n-n", "-n", "sqrt(-n)", "log(log(n)) - 10", "1/(n-n+0)", "0*n"])
def test_asymptotic_formula_that_is_not_positive_and_finite_is_refused_when_the_model_is_made(formula):
    with pytest.raises(ValueError, match=r"^asymptotics\['a'\]: "):
        _model(formula)


@pytest.mark.parametrize(
    "formula, n_values, at",
    [
        ("log(log(log(n)))", [2.0, 100.0], "n=2"),
        ("sqrt(log(n) - 5)", [10.0], "n=10"),
        ("log(log(n) - 4)", [1e6, 50.0], "n=50"),
    ],
)
def test_asymptotic_formula_undefined_at_a_requested_n_is_refused_naming_it(formula, n_values, at):
    m = _model(formula)
    with pytest.raises(ValueError, match=rf"^asymptotics\['a'\]: .*{at}\b"):
        scaling.scaling_table([m], n_values=n_values, budget=64)


def test_asymptotic_formula_defined_everywhere_gives_its_values():
    rows = scaling.scaling_table([_model("log(n)")], n_values=[100.0, 1e4], budget=64)
    assert [r["asym_a"] for r in rows] == [float(np.log(100.0)), float(np.log(1e4))]
    assert all(np.isfinite(r["ratio_a"]) for r in rows)


_POLE = dict(bias_law="c_B/k**2", variance_law="c_V*k/(600-k)")


def test_log_mse_beyond_the_checked_range_names_the_law():
    m = scaling.model(**_POLE)
    with pytest.raises(ValueError, match=r"^variance_law: .*d_k=700"):
        scaling.log_mse([700.0, 800.0], 1e3, 1024, m)
    with pytest.raises(ValueError, match=r"^variance_law: .*d_k=600"):
        scaling.solve_head_size(1e3, 1024, m)


def test_log_mse_within_the_law_is_unchanged():
    m = scaling.model(**_POLE)
    out = scaling.log_mse([10.0, 100.0], 1e3, 512, m)
    assert np.all(np.isfinite(out))
    assert scaling.solve_head_size(1e3, 512, m).d_k == scaling.optimal_head_dim(1e3, 512, m)


def test_a_small_coefficient_in_an_exponent_does_not_count_as_a_large_one():
    """``exp(-|x|^2/100)`` in 30 dimensions is exp of at most 0.3: accepted (the |log10| of 1/100 made it
    look like exp of 3000); ``exp(1000 x1)`` and ``9**(9**9 + x1 - x1)`` stay refused."""
    from mhanw import data

    data.regression_function("exp(-(" + "+".join(f"x{i}**2" for i in range(1, 31)) + ")/100)")
    for bad in ("exp(1000*x1)", "9**(9**9 + x1 - x1)"):
        with pytest.raises(ValueError, match="^regression: "):
            data.regression_function(bad)


def test_a_scaling_table_of_too_many_sample_sizes_is_refused_at_once():
    """10**5 sample sizes ran for many minutes; the table takes at most MAX_TABLE_ROWS of them."""
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"^n_values, models: "):
        scaling.scaling_table(["M3"], n_values=list(np.geomspace(10, 1e12, scaling.MAX_TABLE_ROWS + 1)), budget=64)
    assert time.perf_counter() - started < 1.0
    assert len(scaling.scaling_table(["M3"], n_values=[1e3, 1e6], budget=64)) == 2
