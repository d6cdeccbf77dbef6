"""Chapter 02 (Thm 3.1): the verdict rules of the bias-variance-covariance decomposition.

The decomposition itself (from empirical moments, and derived in sympy for any
number of heads and any weights) is :mod:`mhanw.decomposition`; the head
families and the Monte Carlo are :mod:`mhanw.heads` and :mod:`mhanw.montecarlo`.
This module turns the chapter's numbers into :class:`~mhanw.infra.verdicts.Verdict`
records, with its thresholds as named constants.
"""

from __future__ import annotations

import numpy as np

from .. import data
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.verdicts import FAILS, HOLDS, Verdict, checked, significant_effect, within_tolerance
from ..infra.verdicts import stat as _stat

__all__ = [
    "IDENTITY_REL_TOL",
    "PARAMETERS",
    "cross_term_rules",
    "ddof1_verdict",
    "identical_heads_verdict",
    "identity_verdict",
    "mse_rise_verdict",
    "bias_path_words",
    "CONSTRAINTS",
    "symbolic_verdict",
    "printed_bias_rules",
]

#: Largest relative error that counts as rounding for an exact identity of empirical moments: sums of
#: up to 2e4 replicates in double precision stay within about 1e-14; 1e-12 leaves two orders of margin.
IDENTITY_REL_TOL = 1e-12

#: The ddof = 1 gap is "exactly a'C1a/R" when gap/(a'C1a/R) - 1 is within this many times the rounding
#: limit of that ratio (1e-15 MSE / gap per replicate sum; the error of a sum of R terms grows like
#: sqrt(R) ulps, about 1e2 at R = 2e4, and we allow a further factor 10).
DDOF1_ROUNDING_FACTOR = 1e3

SECTION = "sec:thm31"

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "sigma": P.nonnegative_float(),
    "d": P.positive_int(),
    "d_k": P.positive_int(at_most="d"),
    "n_heads": P.positive_int(2),
    "n_train": P.positive_int(2),
    "bandwidth": P.positive_float(),
    "weights_decreasing": P.weights(length="n_heads"),
    "weights_unnormalised": P.weights(length="n_heads", sum_to_one=False, nonnegative=False),
    "points": P.sequence(P.sequence(P.real(), length="d")),
    "n_pair": P.positive_int(2),
    "pair_point": P.sequence(P.real(), length=4),
}
CONSTRAINTS = (
    P.require("regression", lambda p: data.regression_function(p["regression"]).min_dim <= 4,
              "a regression function defined in d = 4 (the pair family of part 5)"),
)


def _exact(claim: str, statement: str, rel_err: float, what: str) -> Verdict:
    verdict, detectable = within_tolerance(rel_err, IDENTITY_REL_TOL)
    return Verdict(
        claim=claim, statement=statement, verdict=verdict,
        criterion=f"largest relative error {what} at most {IDENTITY_REL_TOL:g} (rounding)",
        statistics=(_stat("largest relative error", rel_err),),
        detectable=detectable, section=SECTION,
    )


@checked(max_rel_err=V.nonnegative)
def identity_verdict(max_rel_err: float) -> Verdict:
    """Thm 3.1 with weights summing to 1, empirical moments with divisor R: exact to rounding."""
    return _exact("thm-3.1/identity",
                  "MSE = (sum_j a_j B_j)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' for weights "
                  "summing to 1 (empirical moments with divisor R)",
                  max_rel_err, "over points, weight vectors and angles")


@checked(gap_rel_min=V.nonnegative, match=V.nonnegative, rounding_limit=V.nonnegative, ratio=V.nonnegative)
def ddof1_verdict(gap_rel_min: float, match: float, rounding_limit: float, ratio: float) -> Verdict:
    """With divisor R - 1 the right-hand side exceeds the MSE by exactly a'C^(1)a/R.

    ``gap_rel_min``: the smallest gap as a share of the MSE (above rounding: the
    identity does not hold with ddof = 1); ``match``: the largest
    ``|gap / (a'C1a/R) - 1|``; ``rounding_limit``: the largest rounding limit of
    that ratio; ``ratio``: the largest ``match / rounding limit`` over points.
    Holds when the gap is above :data:`IDENTITY_REL_TOL` and ``ratio <=
    DDOF1_ROUNDING_FACTOR``.
    """
    ok = gap_rel_min > IDENTITY_REL_TOL and ratio <= DDOF1_ROUNDING_FACTOR
    return Verdict(
        claim="thm-3.1/ddof1-offset",
        statement="With divisor R - 1 the identity is off by exactly a'C^(1)a/R, the ensemble's variance over R",
        verdict=HOLDS if ok else FAILS,
        criterion=f"the gap exceeds {IDENTITY_REL_TOL:g} of the MSE at every point and matches a'C^(1)a/R "
                  f"to within {DDOF1_ROUNDING_FACTOR:g} times the rounding limit of the ratio at every point",
        statistics=(_stat("smallest gap / MSE", gap_rel_min), _stat("largest |gap / (a'C1a/R) - 1|", match),
                    _stat("largest rounding limit of the ratio", rounding_limit),
                    _stat("largest deviation / rounding limit", ratio)),
        detectable=DDOF1_ROUNDING_FACTOR * rounding_limit if ok else None,
        section=SECTION,
    )


@checked(weights_sum=V.number, printed_rel_err=V.nonnegatives, corrected_rel_err=V.nonnegatives)
def printed_bias_rules(weights_sum: float, printed_rel_err, corrected_rel_err) -> tuple:
    """Weights not summing to 1: the printed bias term against the corrected one.

    ``printed_rel_err``, ``corrected_rel_err``: relative errors of the two
    right-hand sides at each point.  The printed term fails when its largest
    error exceeds rounding; the corrected one holds when its largest does not.
    When the weights sum to 1 the two terms coincide and the printed one holds.
    """
    p = np.asarray(printed_rel_err, float)
    c = float(np.max(corrected_rel_err))
    printed = _exact("thm-3.1/printed-bias-term",
                     f"The printed bias term (sum_j a_j B_j)^2 holds for weights summing to {weights_sum:.3g}",
                     float(p.max()), "of the printed right-hand side over the points")
    printed = Verdict(**{**printed.__dict__, "statistics": printed.statistics
                         + (_stat("smallest relative error", p.min()),)})
    corrected = _exact("thm-3.1/corrected-bias-term",
                       f"The corrected bias term (sum_j a_j B_j + (sum_j a_j - 1) m(x))^2 holds for weights "
                       f"summing to {weights_sum:.3g}", c, "of the corrected right-hand side over the points")
    return printed, corrected


@checked(max_rel_diff=V.nonnegative)
def identical_heads_verdict(max_rel_diff: float) -> Verdict:
    """Adding identical heads (uniform weights) leaves the variance of one head, exactly."""
    return _exact("thm-3.1/identical-heads",
                  "The uniform average of H identical heads has the variance of one head "
                  "(adding heads need not reduce variance)", max_rel_diff, "against one head's variance")


@checked(cross90=V.number, cross90_se=V.standard_error, drop=V.number, drop_se=V.standard_error)
def cross_term_rules(cross90: float, cross90_se: float, drop: float, drop_se: float) -> tuple:
    """The cross term along the pair family: positive at 90 degrees; smaller at 90 than at 0 degrees.

    ``drop``: cross term at 0 minus at 90 degrees with its paired (jackknife)
    standard error over the shared replicates.
    """
    positive = Verdict(
        claim="thm-3.1/cross-term-at-90",
        statement="The covariance term of two heads with orthogonal key subspaces (90 degrees) is positive",
        verdict=significant_effect(cross90, cross90_se),
        criterion="cross term at 90 degrees 3 s.e. above 0 (holds) or below (fails)",
        statistics=(_stat("cross term at 90 degrees", cross90, cross90_se),),
        section=SECTION,
    )
    falls = Verdict(
        claim="thm-3.1/cross-term-falls",
        statement="The covariance term is smaller for orthogonal heads (90 degrees) than for identical ones (0)",
        verdict=significant_effect(drop, drop_se),
        criterion="cross term at 0 minus at 90 degrees, paired jackknife s.e. over the shared replicates: "
                  "3 s.e. above 0 (holds) or below (fails)",
        statistics=(_stat("cross term at 0 - at 90 degrees", drop, drop_se),),
        section=SECTION,
    )
    return positive, falls


@checked(rise=V.number, rise_se=V.standard_error)
def mse_rise_verdict(rise: float, rise_se: float) -> Verdict:
    """For the non-isotropic m, the MSE at 45 degrees exceeds that at 0 (paired s.e.)."""
    return Verdict(
        claim="thm-3.1/mse-not-monotone",
        statement="For a non-isotropic m, turning the second head to 45 degrees raises the MSE above that "
                  "of identical heads (diversity need not lower the MSE)",
        verdict=significant_effect(rise, rise_se),
        criterion="MSE(45 degrees) - MSE(0), paired s.e. over the shared training samples: 3 s.e. above 0 "
                  "(holds) or below (fails)",
        statistics=(_stat("MSE(45) - MSE(0)", rise, rise_se),),
        section=SECTION,
    )


@checked(corrected_gap=V.expression, printed_gap=V.expression, corrected_gap_symbolic=V.expression,
         n_heads=V.count)
def symbolic_verdict(corrected_gap, printed_gap, corrected_gap_symbolic, n_heads: int) -> Verdict:
    """The decomposition derived in sympy: the corrected right-hand side equals the derived MSE exactly.

    ``corrected_gap``: derived MSE minus the corrected right-hand side for the
    chapter's weights; ``corrected_gap_symbolic``: the same for symbolic
    weights; ``printed_gap``: derived MSE minus the printed right-hand side.
    """
    import sympy as sp

    ok = sp.simplify(corrected_gap) == 0 and sp.simplify(corrected_gap_symbolic) == 0
    return Verdict(
        claim="thm-3.1/symbolic",
        statement=f"For H = {n_heads} heads and any weights, E(sum_j a_j m_j - m)^2 = (sum_j a_j B_j + "
                  "(sum_j a_j - 1) m)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' (derived in sympy)",
        verdict=HOLDS if ok else FAILS,
        criterion="sympy simplifies the derived MSE minus the corrected right-hand side to 0, for the chapter's "
                  f"weights and for symbolic weights; the printed right-hand side leaves {sp.sstr(printed_gap)}",
        section=SECTION,
    )


@checked(rise=V.number, rise_se=V.standard_error, drop=V.number, drop_se=V.standard_error,
         cross_drop=V.number, cross_drop_se=V.standard_error, cross90=V.number, cross90_se=V.standard_error)
def pair_family_words(rise: float, rise_se: float, drop: float, drop_se: float, cross_drop: float,
                      cross_drop_se: float, cross90: float, cross90_se: float) -> dict[str, str]:
    """The section's words on the pair family, each decided by its paired difference at 3 s.e.
    (:func:`mhanw.infra.verdicts.direction_words`), so that the sentence follows the numbers
    under any assumption the chapter is run with.

    ``rise`` = MSE(45) - MSE(0), ``drop`` = MSE(0) - MSE(90), ``cross_drop`` = cross term(0) -
    cross term(90), ``cross90`` = the cross term at 90 degrees; each with its standard error.
    Returns ``{macro name: words}``: ``MSERiseWords`` and ``MSEDropWords`` ("exceeds", "is
    below", "does not differ detectably from" that at 0), ``CrossDropWords`` ("smaller",
    "larger", "not detectably different" at 90 than at 0), ``CrossNinetyWords`` ("above zero",
    "below zero", "indistinguishable from zero").
    """
    same = "does not differ detectably from"
    return {
        "MSERiseWords": V.direction_words(rise, rise_se, positive="exceeds", negative="is below", neither=same),
        "MSEDropWords": V.direction_words(drop, drop_se, positive="is below", negative="exceeds", neither=same),
        "CrossDropWords": V.direction_words(cross_drop, cross_drop_se, positive="smaller", negative="larger",
                                            neither="not detectably different"),
        "CrossNinetyWords": V.direction_words(cross90, cross90_se, positive="above zero", negative="below zero",
                                              neither="indistinguishable from zero"),
    }


@checked(rise=V.number, rise_se=V.standard_error, fall=V.number, fall_se=V.standard_error)
def bias_path_words(rise: float, rise_se: float, fall: float, fall_se: float) -> str:
    """How the squared bias moves from 0 to 45 to 90 degrees, in words, from paired differences.

    ``rise``: bias^2(45) - bias^2(0); ``fall``: bias^2(45) - bias^2(90), each with
    its paired standard error.  Each step is named only when 3 s.e. from 0.
    """
    first = V.direction_words(rise, rise_se, positive="rises from 0 to 45 degrees",
                              negative="falls from 0 to 45 degrees",
                              neither="does not change detectably from 0 to 45 degrees")
    second = V.direction_words(fall, fall_se, positive="falls from 45 to 90 degrees",
                               negative="rises from 45 to 90 degrees",
                               neither="does not change detectably from 45 to 90 degrees")
    return f"{first} and {second}"
