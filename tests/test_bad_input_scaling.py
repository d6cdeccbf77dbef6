"""Bad input to the head-size models (`mhanw.scaling`, `mhanw.derivation`): huge or malformed laws,
laws off their domain, degenerate fits, budgets too large to enumerate.  Every case must end quickly
with a ``ValueError`` naming the argument."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw import derivation as Dv
from mhanw import scaling as S


@pytest.mark.parametrize(
    "law,message",
    [
        ("k*9**9**9", "too large"),
        ("k*9**(9**9)", "too large"),
        ("k**(9**9)", "exponent"),
        ("k**200", "exponent"),
        ("exp(exp(exp(9)))*k", "too large"),
        ("k*10**400", "too large"),
        ("k*1e-400", "too small"),
        ("k*" + "9" * 400, "too large"),
        ("k+" * 600 + "k", "at most"),
    ],
)
def test_huge_laws_are_rejected_before_evaluation(law, message):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"^variance_law: .*{message}"):
        S.parse_law(law, "variance_law")
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(
    "law",
    ["1/(k-2)", "1/(k-2)**2", "k/(k-100.5)", "(k-3)*(k-4)", "log(k-1)", "sqrt(k-300)", "1/(k-512)**2", "c_V*k*(k-2)/n"],
)
def test_laws_not_positive_and_finite_on_the_domain_are_rejected(law):
    with pytest.raises(ValueError, match=r"^variance_law: expected a positive finite law for every k in \[1, 512\]"):
        S.parse_law(law, "variance_law")


@pytest.mark.parametrize(
    "law", ["c_V*k**(k/2)/n", "c_V*exp(tau*k**((4+d)/2))/n", "c_V*exp(exp(k))/n", "c_V*k**2/n", "c_B*exp(-k**3)"]
)
def test_laws_that_only_overflow_a_double_are_accepted(law):
    assert S.parse_law(law).free_symbols


@pytest.mark.parametrize("law", ["k(2)", "k,", "k..2", "(k", "k**", "exp()", "exp(k, n)", "log(k, n, d)"])
def test_malformed_laws_raise_value_error(law):
    with pytest.raises(ValueError, match=r"^bias_law: "):
        S.parse_law(law, "bias_law")


@pytest.mark.parametrize("bias", ["c_B*k", "c_B*exp(k)", "c_B*(k - 256)**2 + 1", "c_B + 0*k"])
def test_a_bias_that_does_not_decrease_is_named(bias):
    with pytest.raises(ValueError, match=r"^bias_law: "):
        S.model(bias_law=bias, variance_law="c_V*k/n")


@pytest.mark.parametrize(
    "variance,combination", [("c_V/(k*n)", "average"), ("c_V*k**(d/2)/n", "sum"), ("c_V/(n*k**2)", "none")]
)
def test_a_variance_term_that_does_not_increase_is_named(variance, combination):
    with pytest.raises(ValueError, match=r"^variance_law: .*must increase"):
        S.model(bias_law="c_B/k**2", variance_law=variance, combination=combination)


def test_changing_constants_rechecks_the_laws():
    with pytest.raises(ValueError, match=r"^variance_law: "):
        S.model(bias_law="c_B/k**2", variance_law="c_V*k**(d-3)/n", combination="none")
    ok = S.model(bias_law="c_B/k**2", variance_law="c_V*k**d/n", combination="none")
    assert S.optimal_head_dim(1000, 64, ok) >= 1


def test_budget_too_large_to_enumerate_is_rejected_quickly():
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^budget: expected at most"):
        S.optimal_head_dim(1000, 10**10)
    with pytest.raises(ValueError, match=r"^budget: "):
        S.optimal_head_dim(1000, 10**13, divisors_only=True)
    assert time.perf_counter() - start < 2.0
    assert S.optimal_head_dim(1000, 10**10, divisors_only=True) in S.divisors(10**10)


def test_head_sizes_of_a_huge_budget_end_quickly():
    start = time.perf_counter()
    sizes = S.divisors(10**12)
    assert time.perf_counter() - start < 5.0
    assert len(sizes) == 169 and sizes[0] == 1 and sizes[-1] == 10**12
    assert all(10**12 % k == 0 for k in sizes) and list(sizes) == sorted(set(sizes))
    with pytest.raises(ValueError, match=r"^budget: "):
        S.divisors(10**13)


@given(st.integers(1, 5000))
def test_divisors_are_exactly_the_divisors(budget):
    assert list(S.divisors(budget)) == [k for k in range(1, budget + 1) if budget % k == 0]


@pytest.mark.parametrize("budget", [0, -1, 2.0, True, "512", None])
def test_bad_budgets(budget):
    with pytest.raises(ValueError, match=r"^budget: "):
        S.divisors(budget)


@pytest.mark.parametrize(
    "n,k,name",
    [
        ([100, 100], [1, 2], "n_values"),
        ([100, 100, 100], [1, 2, 3], "n_values"),
        ([100], [1], "d_k_values"),
        ([100, 1000], [1], "d_k_values"),
        ([1, 1000], [1, 2], "n_values"),
        ([100, 1000], [0, 2], "d_k_values"),
        ([100, np.nan], [1, 2], "n_values"),
        ([100, 1000], [1, 2j], "d_k_values"),
        ("ab", [1, 2], "n_values"),
    ],
)
def test_degenerate_power_law_fits(n, k, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        S.fit_power_law(n, k)


def test_power_law_fit_is_exact_on_a_power_law():
    n = np.array([1e2, 1e4, 1e8])
    a, p = S.fit_power_law(n, 3.0 * np.log(n) ** 0.25)
    assert a == pytest.approx(3.0) and p == pytest.approx(0.25)


@pytest.mark.parametrize("dps", [-5, 0, 14, 10**6, "x", 40.0, True, None])
def test_real_root_mp_checks_dps(dps):
    with pytest.raises(ValueError, match=r"^dps: "):
        Dv.real_root_mp(3, 64, dps=dps)


def test_real_root_mp_at_the_lowest_precision_is_right():
    assert float(Dv.real_root_mp(3, 64, dps=Dv.MIN_DPS)) == pytest.approx(5.4173, abs=1e-4)
    assert float(Dv.real_root_mp(3, 64)) == pytest.approx(float(Dv.real_root_mp(3, 64, dps=Dv.MIN_DPS)), rel=1e-12)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: S.log_mse([1, np.nan], 1000, 64), "d_k"),
        (lambda: S.log_mse([1, 2], 1.0, 64), "n"),
        (lambda: S.log_mse([1, 2], 1000, 0), "budget"),
        (lambda: S.solve_head_size(1000, 64, c_bias=np.inf), "c_bias"),
        (lambda: S.solve_head_size(1000, 64, c_var=0), "c_var"),
        (lambda: S.solve_head_size(np.nan, 64), "n"),
        (lambda: S.real_root(1000, 64, model=3), "model"),
        (lambda: S.n_heads(65, 64), "d_k"),
        (lambda: S.implied_d(0.0), "p"),
        (lambda: S.sample_size_for_head_dim(-1, 64), "d_k"),
    ],
)
def test_other_bad_scaling_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()


@pytest.mark.parametrize("d_k", [[1, 2j], [True, False], "3", [], [0.0, 1.0]])
def test_log_mse_rejects_non_real_head_dimensions(d_k):
    with pytest.raises(ValueError, match=r"^d_k: "):
        S.log_mse(d_k, 1000, 64)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(c_bias=1e300), "c_bias"),
        (dict(c_bias=1e-300), "c_bias"),
        (dict(c_bias=5e-324), "c_bias"),
        (dict(c_var=5e-324), "c_var"),
    ],
)
def test_constants_that_leave_a_double_are_named(kwargs, name):
    # c_bias = 1e300 raised OverflowError, 1e-300 KeyError('ComplexInfinity')
    for call in (
        lambda: S.log_mse([1, 2], 1000, 64, **kwargs),
        lambda: S.solve_head_size(1000, 64, **kwargs),
        lambda: S.real_root(1000, 64, **kwargs),
        lambda: Dv.real_root_mp(3, 64, **kwargs),
    ):
        with pytest.raises(ValueError, match=rf"^{name}: .*positive normal double"):
            call()


def test_extreme_but_representable_constants_still_solve():
    assert S.optimal_head_dim(1000, 64, c_bias=1e100) >= 1
    assert S.optimal_head_dim(1000, 64, c_var=1e-300) >= 1


def test_implied_d_of_a_subnormal_exponent_is_named():
    with pytest.raises(ValueError, match=r"^p: "):  # was inf
        S.implied_d(5e-324)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(models=3.0), "models"),
        (dict(models=None), "models"),
        (dict(n_values=1e3), "n_values"),
        (dict(n_values="1000"), "n_values"),
    ],
)
def test_scaling_table_names_what_is_not_a_list(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):  # was TypeError: not iterable
        S.scaling_table(**({"models": ("M1",), "n_values": (1e3,), "budget": 64} | kwargs))


def test_real_root_mp_names_log10_n_where_the_root_cannot_be_located():
    with pytest.raises(ValueError, match=r"^log10_n: "):  # mpmath's own ValueError, naming nothing
        Dv.real_root_mp(1e300, 64)


@pytest.mark.parametrize("values", [None, 12.0, "12"])
def test_asymptotic_check_names_its_list(values):
    with pytest.raises(ValueError, match=r"^log10_n_values: "):
        Dv.asymptotic_check("M1", values)
