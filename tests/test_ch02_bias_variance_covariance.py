"""Tests of mhanw.chapters.ch02_bias_variance_covariance (verdict rules on each side of their thresholds,
a guard of the chapter) and of the sympy derivation of Thm 3.1 in mhanw.decomposition."""

import numpy as np
import pytest
import sympy as sp

from mhanw.chapters import ch02_bias_variance_covariance as ch02
from mhanw.decomposition import bias_variance_covariance, symbolic_decomposition
from mhanw.infra.verdicts import FAILS, HOLDS, UNDECIDED, VerdictGuardError, guard

TOL = ch02.IDENTITY_REL_TOL


def test_exact_rules_sides():
    for rule in (ch02.identity_verdict, ch02.identical_heads_verdict):
        assert rule(0.5 * TOL).verdict == HOLDS
        assert rule(2 * TOL).verdict == FAILS
    printed, corrected = ch02.printed_bias_rules(1.3, [0.5, 2 * TOL], [0.5 * TOL, 0.1 * TOL])
    assert (printed.verdict, corrected.verdict) == (FAILS, HOLDS)
    printed, corrected = ch02.printed_bias_rules(1.0, [0.5 * TOL], [2 * TOL])
    assert (printed.verdict, corrected.verdict) == (HOLDS, FAILS)


def test_ddof1_rule_sides():
    limit = 1e-10
    assert ch02.ddof1_verdict(1e-6, 3e-10, limit, 3.0).verdict == HOLDS
    assert ch02.ddof1_verdict(1e-6, 1e-6, limit, 2 * ch02.DDOF1_ROUNDING_FACTOR).verdict == FAILS
    assert ch02.ddof1_verdict(0.5 * TOL, 3e-10, limit, 3.0).verdict == FAILS  # no gap at all: not the predicted one


@pytest.mark.parametrize("effect, verdict", [(1.0, HOLDS), (-1.0, FAILS), (0.2, UNDECIDED)])
def test_sign_rules_sides(effect, verdict):
    positive, falls = ch02.cross_term_rules(effect, 0.1, effect, 0.1)
    assert positive.verdict == verdict and falls.verdict == verdict
    assert ch02.mse_rise_verdict(effect, 0.1).verdict == verdict


def test_bias_path_words():
    assert ch02.bias_path_words(1.0, 0.1, 1.0, 0.1) == "rises from 0 to 45 degrees and falls from 45 to 90 degrees"
    assert ch02.bias_path_words(0.1, 0.1, -1.0, 0.1).startswith("does not change detectably")
    assert ch02.bias_path_words(0.1, 0.1, -1.0, 0.1).endswith("rises from 45 to 90 degrees")


@pytest.mark.parametrize(
    "effect, mse, cross",
    [
        (1.0, "exceeds", "smaller"),
        (-1.0, "is below", "larger"),
        (0.2, "does not differ detectably from", "not detectably different"),
    ],
)
def test_pair_family_words_follow_the_sign(effect, mse, cross):
    """The section's sentences on the pair family change with the numbers (3 s.e. either side)."""
    w = ch02.pair_family_words(effect, 0.1, -effect, 0.1, effect, 0.1, effect, 0.1)
    assert w["MSERiseWords"] == mse and w["CrossDropWords"] == cross
    assert w["MSEDropWords"] == mse  # drop = MSE(0) - MSE(90) = -effect: the same words, the other way round
    assert w["CrossNinetyWords"] == {1.0: "above zero", -1.0: "below zero"}.get(effect, "indistinguishable from zero")


def test_symbolic_decomposition_any_weights():
    sym = symbolic_decomposition(3)
    a, B, m = sym.weights, sym.bias, sym.m
    assert sym.corrected_gap == 0
    expected = m * (sum(a) - 1) * (2 * sum(x * y for x, y in zip(a, B)) + (sum(a) - 1) * m)
    assert sp.simplify(sym.printed_gap - expected) == 0
    R = sym.R
    quad = sum(a[j] * a[k] * sym.covariance[j, k] for j in range(3) for k in range(3))
    assert sp.simplify(sym.ddof_offset - quad / (R - 1)) == 0


def test_symbolic_decomposition_given_weights_and_numbers():
    sym = symbolic_decomposition(4, [0.25, 0.25, 0.25, 0.25])
    assert sym.weights_sum == 1 and sym.printed_gap == 0 and sym.corrected_gap == 0
    rng = np.random.default_rng(0)
    est = rng.standard_normal((500, 4)) @ rng.standard_normal((4, 4)) + 0.3
    a = [0.6, 0.4, 0.2, 0.1]
    dec = bias_variance_covariance(est, 0.7, np.array(a))
    sym = symbolic_decomposition(4, a)
    values = {
        sym.m: 0.7,
        **{b: dec.bias[j] for j, b in enumerate(sym.bias)},
        **{sym.covariance[j, k]: dec.covariance[j, k] for j in range(4) for k in range(4)},
    }
    assert float(sym.mse.subs(values)) == pytest.approx(dec.mse, rel=1e-12)
    assert (
        ch02.symbolic_verdict(sym.corrected_gap, sym.printed_gap, symbolic_decomposition(4).corrected_gap, 4).verdict
        == HOLDS
    )
    assert ch02.symbolic_verdict(sp.Symbol("m"), sym.printed_gap, 0, 4).verdict == FAILS


def test_symbolic_decomposition_bad_input():
    with pytest.raises(ValueError, match="^weights:"):
        symbolic_decomposition(3, [0.5, 0.5])
    with pytest.raises(ValueError, match="^n_heads:"):
        symbolic_decomposition(0)


def test_the_chapters_mse_guard_raises_when_the_mse_does_not_fall():
    drop, drop_se = -0.001, 0.0002  # synthetic: the MSE at 90 degrees above that at 0
    with pytest.raises(VerdictGuardError, match="the text says"):
        guard(drop > 3 * drop_se, "the MSE at 90 degrees is below that at 0", f"{drop} ± {drop_se}")
