"""Tests of :mod:`mhanw.derivation`: the head-size law derived, checked and classified (Thm 6.1).

The symbolic results are those stated in ``book/claims.md`` ('Theorem 6.1'); the numerical ones
compare the arbitrary-precision root with :func:`mhanw.scaling.real_root` and
the asymptotic formulas far beyond a double.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp

from mhanw import derivation as Dv
from mhanw import scaling as S

k, n, Dsym = S.SYMBOLS["k"], S.SYMBOLS["n"], S.SYMBOLS["D"]
c_B, c_V, d = (S.SYMBOLS[s] for s in ("c_B", "c_V", "d"))


# --------------------------------------------------------------------------
# The derivation steps
# --------------------------------------------------------------------------


def test_m1_steps_end_in_lambert_and_the_simplified_law():
    steps = Dv.derivation_steps("M1")
    assert [s.relation for s in steps] == ["=", "=", "=", "=", r"\sim", r"\sim"]
    assert steps[0].rhs == S.model("M1").bias_law + sp.powsimp(S.model("M1").variance_term)
    assert steps[2].lhs == S.model("M1").foc_lhs and steps[2].rhs == S.model("M1").log_scale
    assert steps[3].lhs == k * sp.log(k) / 2  # the dominant balance
    assert steps[4].rhs.has(sp.LambertW)
    assert steps[5].rhs == 2 * sp.log(n) / sp.log(sp.log(n))
    assert "W" in steps[4].latex() and r"\sim" in steps[4].latex()
    assert isinstance(steps[1].equation, sp.Eq)


def test_closed_form_model_has_closed_form_step():
    steps = Dv.derivation_steps("M4b")
    assert "closed form" in steps[3].text
    assert steps[3].rhs == S.model("M4b").closed_form
    assert steps[-1].relation == r"\asymp"  # compared with the printed law


def test_every_builtin_derivation_is_checked_symbolically():
    for name in S.BUILTIN_MODELS:
        checks = Dv.symbolic_checks(name)
        assert len(checks) == 2 and all(checks.values()), (name, checks)


def test_checks_detect_a_wrong_formula(monkeypatch):
    monkeypatch.setitem(Dv.REFERENCE_FORMULAS, "M3", (5 * c_B * sp.log(n) / (c_V * d)) ** (2 / (4 + d)))
    assert Dv.symbolic_checks("M3")["equals the stated formula"] is False


def test_show_derivation_runs(capsys):
    Dv.show_derivation(S.model("M1", variance_law="c_V*k**2/n"))
    out = capsys.readouterr().out
    assert "Markdown" in out  # IPython's display outside a notebook prints the objects


# --------------------------------------------------------------------------
# Which law
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, kind, exact, p, q, printed",
    [
        ("M1", "power of log n", False, 1, 0, False),
        ("M2", "power of log n", False, 2 / (d + 4), 0, True),
        ("M3", "power of log n", True, 2 / (d + 4), 0, True),
        ("M4a", "polynomial", True, None, 2 / (d + 4), False),
        ("M4b", "polynomial", True, None, 2 / (d + 6), False),
        ("M5", "power of log n", False, 1, 0, False),
    ],
)
def test_growth_law_of_builtin_models(name, kind, exact, p, q, printed):
    g = Dv.growth_law(name)
    assert (g.kind, g.exact, g.gives_printed_law) == (kind, exact, printed)
    if p is not None:
        assert sp.simplify(g.p_limit - p) == 0
        assert sp.simplify(g.implied_d - (2 / p - 4)) == 0
    else:
        assert g.p_limit is None and g.implied_d is None
    assert sp.simplify(g.q_limit - q) == 0


def test_m1_law_mentions_lambert_factor_and_negative_d():
    g = Dv.growth_law("M1")
    assert "Lambert" in g.description and g.implied_d == -2
    assert Dv.law_latex("M1") == r"k^*=(\ln n)^{1+o(1)}"
    assert Dv.law_latex("M3") == r"k^*\propto(\ln n)^{\frac{2}{d + 4}}"
    assert Dv.law_latex("M4a") == r"k^*\propto n^{\frac{2}{d + 4}}"


def test_reader_model_standard_nw_without_heads_is_polynomial():
    """An example model: the standard NW trade-off without the 1/H factor."""
    m = S.model(bias_law="c_B/k**2", variance_law="c_V*k**(d/2)/n", combination="none")
    assert Dv.symbolic_checks(m) == {"closed form solves the FOC": True}
    g = Dv.growth_law(m)
    assert g.kind == "polynomial" and g.exact and sp.simplify(g.q_limit - 2 / (d + 4)) == 0


def test_readme_example_polynomial_variance():
    """README 'Extend a proof': M1 with a variance polynomial in k gives k* = (2 c_B n D/(3 c_V))^(1/5)."""
    m = S.model("M1", variance_law="c_V*k**2/n")
    expected = (2 * c_B * n * Dsym / (3 * c_V)) ** sp.Rational(1, 5)
    assert Dv._log_equal(sp.log(Dv.formula(m)), sp.log(expected))
    assert Dv.symbolic_checks(m) == {"closed form solves the FOC": True}  # no stated formula for M1*
    g = Dv.growth_law(m)
    assert (g.kind, g.exact, g.q_limit) == ("polynomial", True, sp.Rational(1, 5))
    assert Dv.law_latex(m) == r"k^*\propto n^{\frac{1}{5}}"


def test_reader_model_with_literal_bias_keeps_lambert_leading_order():
    """Read literally, B^2 ~ k^-4, and M1's leading order is unchanged."""
    m = S.model("M1", bias_law="c_B/k**4")
    assert Dv.symbolic_checks(m) == {"leading order solves the dominant balance": True}
    assert m.dominant_term == k * sp.log(k) / 2
    g = Dv.growth_law(m)
    assert g.kind == "power of log n" and g.p_limit == 1 and not g.gives_printed_law


def test_polylog_and_slow_laws():
    # a variance exp(k^2)/n: k* ~ (ln n)^(1/2), asymptotically; d = 0 is not > 0
    g = Dv.growth_law(S.model(bias_law="c_B/k**2", variance_law="c_V*exp(k**2)/n", combination="none"))
    assert g.kind == "power of log n" and g.p_limit == sp.Rational(1, 2) and not g.gives_printed_law
    # exp(k^3): p -> 1/3 < 1/2, a printed law with d = 2
    g = Dv.growth_law(S.model(bias_law="c_B/k**2", variance_law="c_V*exp(k**3)/n", combination="none"))
    assert g.p_limit == sp.Rational(1, 3) and g.implied_d == 2 and g.gives_printed_law
    # a variance exp(exp(k))/n: k* ~ ln ln n, slower than any power of ln n
    g = Dv.growth_law(S.model(bias_law="c_B/k**2", variance_law="c_V*exp(exp(k))/n", combination="none"))
    assert g.kind in ("slower than any power of log n", "undetermined")


# --------------------------------------------------------------------------
# Arbitrary precision
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", S.BUILTIN_MODELS)
def test_real_root_mp_agrees_with_double_precision(name):
    for x in (4, 8, 12):
        assert float(Dv.real_root_mp(x, 512, name)) == pytest.approx(S.real_root(10.0**x, 512, name), rel=1e-9)


def test_real_root_mp_with_constants():
    got = float(Dv.real_root_mp(8, 768, "M1", c_bias=math.sqrt(10), c_var=2.0))
    assert got == pytest.approx(S.real_root(1e8, 768, "M1", c_bias=math.sqrt(10), c_var=2.0), rel=1e-9)


def test_asymptotic_formulas_tend_to_one():
    rows = {name: Dv.asymptotic_check(name) for name in ("M1", "M2", "M5", "M3", "M4a")}
    lead = [r["ratio_leading_order"] for r in rows["M1"]]
    assert all(a < b for a, b in zip(lead, lead[1:])) and 0.99 < lead[-1] < 1
    # documented: 2 ln n / ln ln n is a poor approximation even at n = 10^10000
    assert rows["M1"][-1]["ratio_log_ratio"] > 1.1
    assert abs(rows["M2"][-1]["ratio_law"] - 1) < 1e-3
    assert abs(rows["M5"][-1]["ratio_log_n"] - 1) < 1e-2
    assert all(abs(r["ratio_closed_form"] - 1) < 1e-9 for r in rows["M3"] + rows["M4a"])
    assert all(r["local_exponent"] == pytest.approx(0.4, abs=1e-9) for r in rows["M3"])
    # the root of M4a at n = 10^1000 is 10^400: beyond a double, reported as None
    big = rows["M4a"][2]
    assert big["k_real"] is None and big["ratio_printed"] is None
    assert big["log10_k_real"] == pytest.approx(400.24082, abs=1e-5)


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize("func", [Dv.derivation_steps, Dv.symbolic_checks, Dv.growth_law, Dv.asymptotic_check])
def test_bad_model(func):
    with pytest.raises(ValueError, match=r"^model: "):
        func("M9")
    with pytest.raises(ValueError, match=r"^model: "):
        func(3)


def test_bad_numbers():
    with pytest.raises(ValueError, match=r"^log10_n: "):
        Dv.real_root_mp(-1, 512)
    with pytest.raises(ValueError, match=r"^budget: "):
        Dv.real_root_mp(5, 0)
    with pytest.raises(ValueError, match=r"^c_var: "):
        Dv.asymptotic_check("M1", c_var=0)
