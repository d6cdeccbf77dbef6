"""Tests of mhanw.chapters.ch02_bias_variance_covariance (the words its prose decides, the symbolic record,
a guard of the chapter; its declared records are flipped by tests/test_chapter_contract.py) and of the sympy derivation of Thm 3.1 in mhanw.decomposition."""

import numpy as np
import pytest
import sympy as sp

from mhanw.chapters import ch02_bias_variance_covariance as ch02
from mhanw.decomposition import bias_variance_covariance, symbolic_decomposition
from mhanw.infra.results import Q, Results
from mhanw.infra.verdicts import FAILS, HOLDS, VerdictGuardError, guard

TOL = ch02.IDENTITY_REL_TOL


def _pairs(rise, drop, cross_drop, cross90, bias_rise=1.0, bias_fall=1.0, se=0.1):
    q = lambda v: Q(v, se)  # noqa: E731
    return Results(
        {
            "pairs": {
                "rise": q(rise),
                "drop": q(drop),
                "cross_drop": q(cross_drop),
                "cross90": q(cross90),
                "bias_rise": q(bias_rise),
                "bias_fall": q(bias_fall),
            }
        }
    )


def test_bias_path_words():
    assert ch02.prose(_pairs(1, 1, 1, 1, 1.0, 1.0), [])["bias_path"] == (
        "rises from 0 to 45 degrees and falls from 45 to 90 degrees"
    )
    words = ch02.prose(_pairs(1, 1, 1, 1, 0.1, -1.0), [])["bias_path"]
    assert words.startswith("does not change detectably") and words.endswith("rises from 45 to 90 degrees")


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
    w = ch02.prose(_pairs(effect, -effect, effect, effect), [])
    assert w["mse_rise"] == mse and w["cross_drop"] == cross
    assert w["mse_drop"] == mse  # drop = MSE(0) - MSE(90) = -effect: the same words, the other way round
    assert w["cross90"] == {1.0: "above zero", -1.0: "below zero"}.get(effect, "indistinguishable from zero")


def _symbolic_record(corrected, general):
    claim = next(c for c in ch02.CLAIMS if c.id == "thm-3.1/symbolic")
    return claim.decide(
        Results({"symbolic": {"corrected_gap": corrected, "corrected_gap_general": general, "n_heads": 4}})
    )


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
    assert _symbolic_record(sym.corrected_gap, symbolic_decomposition(4).corrected_gap).verdict == HOLDS
    assert _symbolic_record(sp.Symbol("m"), sp.Integer(0)).verdict == FAILS


def test_symbolic_decomposition_bad_input():
    with pytest.raises(ValueError, match="^weights:"):
        symbolic_decomposition(3, [0.5, 0.5])
    with pytest.raises(ValueError, match="^n_heads:"):
        symbolic_decomposition(0)


def test_the_chapters_mse_guard_raises_when_the_mse_does_not_fall():
    drop, drop_se = -0.001, 0.0002  # synthetic: the MSE at 90 degrees above that at 0
    with pytest.raises(VerdictGuardError, match="the text says"):
        guard(drop > 3 * drop_se, "the MSE at 90 degrees is below that at 0", f"{drop} ± {drop_se}")
