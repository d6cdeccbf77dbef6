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
from ..decomposition import MAX_SYMBOLIC_HEADS
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.notebook import notebook_helper
from ..infra.validate import as_float_array, brief, positive_int
from ..infra.verdicts import FAILS, HOLDS, Verdict, checked, significant_effect, within_tolerance
from ..infra.verdicts import stat as _stat

__all__ = [
    "SIZES",
    "first_order_terms",
    "pair_contrasts",
    "pair_table",
    "plot_pair_family",
    "setup",
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
    "sigma": P.noise_level(),
    "d": P.positive_int(1, 1024, why="a model dimension, 170 times the default 6"),
    "d_k": P.positive_int(1, 1024, at_most="d", why="a model dimension"),
    "n_heads": P.positive_int(2, MAX_SYMBOLIC_HEADS, why="the heads the symbolic decomposition of part 6 expands"),
    "n_train": P.positive_int(2, 40_000, why="100 times the default 400"),
    "bandwidth": P.bandwidth(),
    "weights_decreasing": P.weights(length="n_heads", maximum=1.0),
    "weights_unnormalised": P.weights(
        length="n_heads",
        sum_to_one=False,
        nonnegative=False,
        maximum=100.0,
        why="100 times the largest default weight, 0.6",
    ),
    "points": P.sequence(P.sequence(P.coordinate(), length="d")),
    "n_pair": P.positive_int(2, 50_000, why="100 times the default 500"),
    "pair_point": P.sequence(P.coordinate(), length=4),
}
CONSTRAINTS = (
    P.require(
        "regression",
        lambda p: data.regression_function(p["regression"]).min_dim <= 4,
        "a regression function defined in d = 4 (the pair family of part 5)",
    ),
)


def _exact(claim: str, statement: str, rel_err: float, what: str) -> Verdict:
    verdict, detectable = within_tolerance(rel_err, IDENTITY_REL_TOL)
    return Verdict(
        claim=claim,
        statement=statement,
        verdict=verdict,
        criterion=f"largest relative error {what} at most {IDENTITY_REL_TOL:g} (rounding)",
        statistics=(_stat("largest relative error", rel_err),),
        detectable=detectable,
        section=SECTION,
    )


@checked(max_rel_err=V.nonnegative)
def identity_verdict(max_rel_err: float) -> Verdict:
    """Thm 3.1 with weights summing to 1, empirical moments with divisor R: exact to rounding."""
    return _exact(
        "thm-3.1/identity",
        "MSE = (sum_j a_j B_j)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' for weights "
        "summing to 1 (empirical moments with divisor R)",
        max_rel_err,
        "over points, weight vectors and angles",
    )


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
        statistics=(
            _stat("smallest gap / MSE", gap_rel_min),
            _stat("largest |gap / (a'C1a/R) - 1|", match),
            _stat("largest rounding limit of the ratio", rounding_limit),
            _stat("largest deviation / rounding limit", ratio),
        ),
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
    printed = _exact(
        "thm-3.1/printed-bias-term",
        f"The printed bias term (sum_j a_j B_j)^2 holds for weights summing to {weights_sum:.3g}",
        float(p.max()),
        "of the printed right-hand side over the points",
    )
    printed = Verdict(
        **{**printed.__dict__, "statistics": printed.statistics + (_stat("smallest relative error", p.min()),)}
    )
    corrected = _exact(
        "thm-3.1/corrected-bias-term",
        f"The corrected bias term (sum_j a_j B_j + (sum_j a_j - 1) m(x))^2 holds for weights "
        f"summing to {weights_sum:.3g}",
        c,
        "of the corrected right-hand side over the points",
    )
    return printed, corrected


@checked(max_rel_diff=V.nonnegative)
def identical_heads_verdict(max_rel_diff: float) -> Verdict:
    """Adding identical heads (uniform weights) leaves the variance of one head, exactly."""
    return _exact(
        "thm-3.1/identical-heads",
        "The uniform average of H identical heads has the variance of one head (adding heads need not reduce variance)",
        max_rel_diff,
        "against one head's variance",
    )


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


def _gap(value, name: str):
    """``value`` if it is a derived gap the rule can simplify in bounded time: a finite sympy expression of
    bounded size (:func:`mhanw.infra.verdicts.expression`) whose constants and powers are bounded as a parsed
    formula's are (:func:`mhanw.infra.expressions.check_size`: ``9**(9**9)``, ``10**(10**8)`` and
    ``factorial(10**7)`` would make ``simplify`` compute numbers of millions of digits), or a finite real
    number (also a 0-d array); else ``ValueError`` naming ``name``."""
    import sympy as sp

    from ..infra.expressions import check_size

    V.expression(value, name)
    if isinstance(value, sp.Basic):
        check_size(value, name)
    return value


def _plain(value):
    """A gap as sympy reads it: a 0-d array becomes its number (sympy cannot simplify an array)."""
    return value.item() if isinstance(value, np.ndarray) else value


@checked(corrected_gap=_gap, printed_gap=_gap, corrected_gap_symbolic=_gap, n_heads=V.positive_count)
def symbolic_verdict(corrected_gap, printed_gap, corrected_gap_symbolic, n_heads: int) -> Verdict:
    """The decomposition derived in sympy: the corrected right-hand side equals the derived MSE exactly.

    ``corrected_gap``: derived MSE minus the corrected right-hand side for the
    chapter's weights; ``corrected_gap_symbolic``: the same for symbolic
    weights; ``printed_gap``: derived MSE minus the printed right-hand side.
    """
    import sympy as sp

    corrected_gap, printed_gap, corrected_gap_symbolic = map(
        _plain, (corrected_gap, printed_gap, corrected_gap_symbolic)
    )
    # is_zero: a float gap 0.0 is zero too (sympy's Float(0.0) == 0 is False)
    ok = sp.simplify(corrected_gap).is_zero is True and sp.simplify(corrected_gap_symbolic).is_zero is True
    return Verdict(
        claim="thm-3.1/symbolic",
        statement=f"For H = {n_heads} heads and any weights, E(sum_j a_j m_j - m)^2 = (sum_j a_j B_j + "
        "(sum_j a_j - 1) m)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' (derived in sympy)",
        verdict=HOLDS if ok else FAILS,
        criterion="sympy simplifies the derived MSE minus the corrected right-hand side to 0, for the chapter's "
        f"weights and for symbolic weights; the printed right-hand side leaves {sp.sstr(printed_gap)}",
        section=SECTION,
    )


@checked(
    rise=V.number,
    rise_se=V.standard_error,
    drop=V.number,
    drop_se=V.standard_error,
    cross_drop=V.number,
    cross_drop_se=V.standard_error,
    cross90=V.number,
    cross90_se=V.standard_error,
)
def pair_family_words(
    rise: float,
    rise_se: float,
    drop: float,
    drop_se: float,
    cross_drop: float,
    cross_drop_se: float,
    cross90: float,
    cross90_se: float,
) -> dict[str, str]:
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
        "CrossDropWords": V.direction_words(
            cross_drop, cross_drop_se, positive="smaller", negative="larger", neither="not detectably different"
        ),
        "CrossNinetyWords": V.direction_words(
            cross90, cross90_se, positive="above zero", negative="below zero", neither="indistinguishable from zero"
        ),
    }


@checked(rise=V.number, rise_se=V.standard_error, fall=V.number, fall_se=V.standard_error)
def bias_path_words(rise: float, rise_se: float, fall: float, fall_se: float) -> str:
    """How the squared bias moves from 0 to 45 to 90 degrees, in words, from paired differences.

    ``rise``: bias^2(45) - bias^2(0); ``fall``: bias^2(45) - bias^2(90), each with
    its paired standard error.  Each step is named only when 3 s.e. from 0.
    """
    first = V.direction_words(
        rise,
        rise_se,
        positive="rises from 0 to 45 degrees",
        negative="falls from 0 to 45 degrees",
        neither="does not change detectably from 0 to 45 degrees",
    )
    second = V.direction_words(
        fall,
        fall_se,
        positive="falls from 45 to 90 degrees",
        negative="rises from 45 to 90 degrees",
        neither="does not change detectably from 45 to 90 degrees",
    )
    return f"{first} and {second}"


# --- The chapter's computations and bookkeeping, called from the notebook ------------------------------

#: Monte Carlo sizes by fidelity: replicates of part 1, of the identical heads (part 4) and of the pair
#: family (part 5), and the number of worker processes.
SIZES = {
    "quick": dict(n_rep_identity=2_000, n_rep_copies=1_000, n_rep_pairs=2_000, n_jobs=1),
    "paper": dict(n_rep_identity=20_000, n_rep_copies=2_000, n_rep_pairs=20_000, n_jobs=2),
}


def setup(namespace) -> tuple[dict, dict, list]:
    """The run of the notebook whose globals are ``namespace``: its checked parameters
    (:func:`mhanw.infra.params.check_parameters`, one line naming a bad one), the chapter's sizes
    (:data:`SIZES` at the run's fidelity) and its random streams: children of
    ``SeedSequence(seed)``, 0 for the Haar heads, 1 for the replicates of parts 1 and 4, 2 for the
    replicates of the pair family.  Also sets the figure style and pandas' display precision (4 digits) for the
    chapter's tables.  Returns ``(params, sizes, streams)``."""
    import pandas as pd

    from ..infra.notebook import start

    params, sizes, streams = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 3)
    pd.set_option("display.precision", 4)
    return params, sizes, streams


def first_order_terms(W, x, bandwidth: float, n: int, model, a, m_x: float) -> tuple:
    """The three terms of Theorem 3.1 (bias^2, sum a^2 V, cross term) predicted to first order in 1/n
    (:func:`mhanw.covariance.first_order_covariance_model`) for two heads ``W`` (each ``(d, d_k)``) with
    weights ``a`` (length 2) at the point ``x`` (``(d,)``) where the regression function is ``m_x``."""
    from .. import covariance

    n = positive_int(n, "n", minimum=2)
    W = as_float_array(W, "W", ndim=3)
    x = as_float_array(x, "x", ndim=1)
    a = as_float_array(a, "a", ndim=1)
    if W.shape[0] != 2 or W.shape[1] != x.shape[0]:
        raise ValueError(f"W: expected two heads (2, d, d_k) with d = len(x) = {x.shape[0]}, got shape {W.shape}")
    if a.shape != (2,):
        raise ValueError(f"a: expected the two heads' weights, shape (2,), got {a.shape}")

    def fo(A, B):
        return covariance.first_order_covariance_model(A, B, x, bandwidth, n, model)

    cross = fo(W[0], W[1])
    bias = a @ np.array(cross.limits) - m_x
    var = a**2 @ np.array([fo(W[0], W[0]).covariance, fo(W[1], W[1]).covariance])
    return bias**2, var, 2 * a[0] * a[1] * cross.covariance


@notebook_helper
def pair_table(angles_deg, pair_configs, est_pairs, x, bandwidth: float, n: int, model, a, m_x: float):
    """Part 5's table, one row per angle: the three terms of Theorem 3.1 from empirical moments, the
    cross term's standard error, the Monte Carlo MSE and its s.e., the identity's relative error, and
    the first-order prediction of each term (:func:`first_order_terms`).  ``est_pairs[i]`` is
    ``(R, 2, 1)``, the estimates of the two heads of ``pair_configs[i]`` at ``x``."""
    import pandas as pd

    from ..decomposition import bias_variance_covariance, covariance_with_se

    n = positive_int(n, "n", minimum=2)
    rows = []
    for theta, W, est in zip(angles_deg, pair_configs, est_pairs):
        dec = bias_variance_covariance(est[:, :, 0], m_x, a)
        c12, c12_se = covariance_with_se(est[:, 0, 0], est[:, 1, 0])
        fb, fv, fc = first_order_terms(W, x, bandwidth, n, model, a, m_x)
        rows.append(
            {
                "theta": theta,
                "bias^2": dec.bias_squared,
                "sum a^2 V": dec.variance_term,
                "cross term": dec.covariance_term,
                "cross s.e.": 2 * a[0] * a[1] * c12_se,
                "MSE (MC)": dec.mse,
                "MSE s.e.": dec.mse_se,
                "rel. error": abs(dec.bias_squared + dec.variance_term + dec.covariance_term - dec.mse) / dec.mse,
                "1st-order bias^2": fb,
                "1st-order sum a^2 V": fv,
                "1st-order cross": fc,
            }
        )
    return pd.DataFrame(rows)


def pair_contrasts(est_pairs, angles_deg, a, m_x: float) -> dict:
    """The paired comparisons of part 5 between the angles 0, 45 and 90 degrees, all evaluated on the same
    training samples (common random numbers): MSE(45) - MSE(0) and MSE(0) - MSE(90) with paired standard
    errors (``rise``, ``drop``), and with jackknife standard errors the fall of the cross term from 0 to 90
    degrees (``cross_drop``) and the change of the squared bias from 0 and from 90 to 45 degrees
    (``bias_rise``, ``bias_fall``); each with its ``*_se``.  Also the angle indices ``i0``, ``i45``, ``i90``.
    ``est_pairs[i]`` is ``(R, 2, 1)``."""
    from ..decomposition import jackknife
    from ..infra.estimates import Estimate

    a = as_float_array(a, "a", ndim=1)
    angles = [float(t) for t in as_float_array(angles_deg, "angles_deg", ndim=1)]
    if a.shape != (2,):
        raise ValueError(f"a: expected the two heads' weights, shape (2,), got {a.shape}")
    if 45.0 not in angles or angles[0] != 0 or angles[-1] != 90:
        raise ValueError(
            f"angles_deg: expected angles from 0 to 90 degrees with 45 among them, got {brief(angles_deg)}"
        )
    if isinstance(est_pairs, (str, bytes)) or len(est_pairs) != len(angles):
        raise ValueError(f"est_pairs: expected one (R, 2, 1) array per angle ({len(angles)}), got {brief(est_pairs)}")
    est_pairs = [as_float_array(e, f"est_pairs[{i}]", ndim=3) for i, e in enumerate(est_pairs)]
    if any(e.shape[1:] != (2, 1) or e.shape != est_pairs[0].shape for e in est_pairs):
        raise ValueError(f"est_pairs: expected arrays of one shape (R, 2, 1), got {[e.shape for e in est_pairs][:4]}")
    sq_err = np.stack([(est[:, :, 0] @ a - m_x) ** 2 for est in est_pairs])  # (angles, R)
    i0, i45, i90 = 0, angles.index(45.0), len(angles) - 1
    rise, rise_se = Estimate.paired(sq_err[i45], sq_err[i0])
    drop, drop_se = Estimate.paired(sq_err[i0], sq_err[i90])

    def cross_term(e):  # 2 a_1 a_2 C_12 from empirical moments (divisor R)
        return 2 * a[0] * a[1] * np.mean((e[:, 0] - e[:, 0].mean()) * (e[:, 1] - e[:, 1].mean()))

    def bias_sq(e):
        return float((e @ a).mean() - m_x) ** 2

    e = [est[:, :, 0] for est in est_pairs]
    cross_drop, cross_drop_se = jackknife(lambda u, v: cross_term(u) - cross_term(v), (e[i0], e[i90]))
    bias_rise, bias_rise_se = jackknife(lambda u, v: bias_sq(u) - bias_sq(v), (e[i45], e[i0]))
    bias_fall, bias_fall_se = jackknife(lambda u, v: bias_sq(u) - bias_sq(v), (e[i45], e[i90]))
    return dict(
        i0=i0,
        i45=i45,
        i90=i90,
        rise=rise,
        rise_se=rise_se,
        drop=drop,
        drop_se=drop_se,
        cross_drop=cross_drop,
        cross_drop_se=cross_drop_se,
        bias_rise=bias_rise,
        bias_rise_se=bias_rise_se,
        bias_fall=bias_fall,
        bias_fall_se=bias_fall_se,
    )


def plot_pair_family(pairs, angles_deg, x, bandwidth: float, n: int, model, a, m_x: float, figures_dir):
    """The chapter's figure ``02_bias_variance_covariance``: (a) the three terms of Theorem 3.1 stacked at
    each angle of the pair family (``pairs`` from :func:`pair_table`), the Monte Carlo MSE with ±2 s.e. and
    the first-order MSE on 31 angles; (b) the cross term with ±2 s.e., its first-order value and its
    noise part.  Saves, shows and closes it; returns the saved paths (:func:`mhanw.infra.figures.save`)."""
    from .. import covariance, heads
    from ..infra import figures

    n = positive_int(n, "n", minimum=2)
    fine = np.linspace(0, 90, 31)
    fine_terms = np.array(
        [first_order_terms(heads.pair_heads(np.radians(t), 4, 2), x, bandwidth, n, model, a, m_x) for t in fine]
    )
    noise_only = np.array(
        [
            2
            * a[0]
            * a[1]
            * covariance.first_order_covariance_model(
                *heads.pair_heads(np.radians(t), 4, 2), x, bandwidth, n, model
            ).noise
            for t in fine
        ]
    )

    fig, (ax_a, ax_b) = figures.panels(2, gridspec_kw={"width_ratios": [1.55, 1]})
    labels = {
        "bias^2": r"bias$^2$",
        "sum a^2 V": r"$\Sigma_j a_j^2V_j$",
        "cross term": r"$\Sigma_{j\neq j'}a_ja_{j'}C_{jj'}$",
    }
    bottom = np.zeros(len(pairs))
    for i, (col, lab) in enumerate(labels.items()):
        ax_a.bar(pairs["theta"], 1e2 * pairs[col], width=10, bottom=bottom, color=f"C{i}", label=lab, alpha=0.85)
        bottom += 1e2 * pairs[col].to_numpy()
    ax_a.errorbar(
        pairs["theta"],
        1e2 * pairs["MSE (MC)"],
        yerr=figures.half_width(1e2 * pairs["MSE s.e."]),
        fmt="o",
        color="k",
        markersize=3,
        label=r"MC MSE, $\pm2$ s.e.",
        zorder=3,
    )
    ax_a.plot(fine, 1e2 * fine_terms.sum(axis=1), color="k", lw=0.8, ls="--", label="first-order MSE")
    ax_a.set(
        xlabel=r"principal angle $\theta$ (degrees)",
        ylabel=r"MSE at $x$ ($\times10^{-2}$)",
        xticks=angles_deg,
        title=r"(a) the three terms along the pair family",
    )
    ax_a.legend(loc="upper center", ncol=3, fontsize=7)
    ax_a.set_ylim(0, 1.45e2 * pairs["MSE (MC)"].max())

    ax_b.errorbar(
        pairs["theta"],
        1e3 * pairs["cross term"],
        yerr=figures.half_width(1e3 * pairs["cross s.e."]),
        fmt="o",
        color="C2",
        markersize=3,
        label=r"MC, $\pm2$ s.e.",
    )
    ax_b.plot(fine, 1e3 * fine_terms[:, 2], color="C2", lw=1, label=r"first order $\kappa(\sigma^2+\Delta)/n$")
    ax_b.plot(fine, 1e3 * noise_only, color="grey", lw=1, ls=":", label=r"noise part $\kappa\sigma^2/n$")
    ax_b.axhline(0, color="k", lw=0.6)
    ax_b.set(
        xlabel=r"principal angle $\theta$ (degrees)",
        ylabel=r"cross term ($\times10^{-3}$)",
        xticks=angles_deg[::2],
        title="(b) the cross term",
    )
    ax_b.set_ylim(bottom=0)
    ax_b.legend(loc="upper right", fontsize=7)
    return figures.save(
        fig,
        "02_bias_variance_covariance",
        figures_dir,
        error_bars=True,
        caption="(a) The stacked bars are the three terms of the decomposition at each principal angle; "
        "compare their total with the Monte Carlo MSE (black points) and the first-order MSE "
        "(dashed). (b) The cross term alone, against its first-order value and its noise part.",
    )


def close(nb, macros_path, results_path):
    """Decide every record of the chapter from the notebook's numbers (the rules above), say the
    section's sentences on the pair family in words decided by the same paired differences, write the
    macros (to ``macros_path``) and the raw results (to ``results_path``); returns the
    :class:`mhanw.infra.verdicts.Ledger`.  ``nb``: the executed notebook's variables (a mapping; the
    names its cells define: ``dec13``, ``pairs``, ``sym``, ``rise``, ...)."""
    from ..infra.notebook import Namespace
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs
    from ..infra.verdicts import Ledger

    nb = Namespace(nb)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros = Macros("BVC")
    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes, "parameters": dict(nb.params)}
    ledger = Ledger("02_bias_variance_covariance")
    rec_identity = ledger.add(identity_verdict(max(nb.identity_max_rel, nb.pairs_max_rel)))
    rec_ddof1 = ledger.add(
        ddof1_verdict(nb.ddof1_rel_min, nb.ddof1_match, float(nb.ddof1["rounding limit"].max()), nb.ddof1_ratio)
    )
    rec_printed, rec_corrected = printed_bias_rules(
        nb.dec13.weights_sum, nb.sum13["printed: rel. error"], nb.sum13["corrected: rel. error"]
    )
    ledger.add(rec_printed)
    ledger.add(rec_corrected)
    rec_symbolic = ledger.add(
        symbolic_verdict(nb.sym.corrected_gap, nb.sym.printed_gap, nb.sym_general.corrected_gap, nb.n_heads)
    )
    rec_copies = ledger.add(identical_heads_verdict(nb.copies_max_rel))
    rec_cross90, rec_cross_falls = cross_term_rules(nb.cross90, nb.cross90_se, nb.cross_drop, nb.cross_drop_se)
    ledger.add(rec_cross90)
    ledger.add(rec_cross_falls)
    rec_rise = ledger.add(mse_rise_verdict(nb.rise, nb.rise_se))
    results["claims"] = ledger.to_list()

    bias_path = bias_path_words(nb.bias_rise, nb.bias_rise_se, nb.bias_fall, nb.bias_fall_se)
    # The section's sentences on the MSE and the cross term along the angles, in words decided by
    # the same paired differences (3 s.e.), so they follow the numbers under any assumption.
    pair_words = pair_family_words(
        nb.rise, nb.rise_se, nb.drop, nb.drop_se, nb.cross_drop, nb.cross_drop_se, nb.cross90, nb.cross90_se
    )

    for rec, name in [
        (rec_identity, "Identity"),
        (rec_ddof1, "DdofOne"),
        (rec_printed, "Printed"),
        (rec_corrected, "Corrected"),
        (rec_symbolic, "Symbolic"),
        (rec_copies, "Copies"),
        (rec_cross90, "CrossNinety"),
        (rec_cross_falls, "CrossFalls"),
        (rec_rise, "MSERise"),
    ]:
        macros.text(f"Verdict{name}", rec.verdict)
    macros.integer("NRepIdentity", nb.R)
    macros.integer("NRepPairs", nb.est_pairs[0].shape[0])
    macros.integer("NRepCopies", nb.est_copies[0].shape[0])
    macros.integer("NPoints", len(nb.points))
    macros.number("IdentityMaxRelErr", max(nb.identity_max_rel, nb.pairs_max_rel), 2)
    macros.number("IdentityTol", IDENTITY_REL_TOL, 1)
    macros.number("BiasShareMedian", 100 * np.median(nb.bias_share), 3)
    macros.number("BiasShareMin", 100 * nb.bias_share.min(), 2)
    macros.number("DdofOneRelMin", nb.ddof1_rel_min, 2)
    macros.number("DdofOneRelMax", nb.ddof1_rel_max, 2)
    macros.number("DdofOneMatch", nb.ddof1_match, 1)
    macros.number("DdofOneRatio", nb.ddof1_ratio, 2)
    macros.number("WeightsSum", nb.dec13.weights_sum, 3)
    macros.number("PrintedRelErrMin", nb.printed13_min, 2)
    macros.number("PrintedRelErrMax", float(nb.sum13["printed: rel. error"].max()), 2)
    macros.number("CorrectedRelErrMax", nb.corrected13_max, 2)
    macros.number("PrintedBiasPointOne", nb.dec13.printed_bias_squared[0], 3)
    macros.number("CorrectedBiasPointOne", nb.dec13.bias_squared[0], 3)
    macros.number("MSEPointOne", nb.dec13.mse[0], 3)
    macros.number("SymbolicRelDiff", max(nb.sym_rel, 1e-17), 1)
    macros.expr("SymbolicPrintedGap", nb.sym_general.printed_gap)
    macros.integer("SymbolicH", nb.n_heads)
    macros.number("CopiesMaxRelErr", max(nb.copies_max_rel, 1e-17), 1)
    for name, i in (("Zero", nb.i0), ("FortyFive", nb.i45), ("Ninety", nb.i90)):
        macros.mean_se(f"MSE{name}", nb.pairs["MSE (MC)"].iloc[i], nb.pairs["MSE s.e."].iloc[i])
        macros.number(f"BiasSq{name}", nb.pairs["bias^2"].iloc[i], 2)
        macros.number(f"Var{name}", nb.pairs["sum a^2 V"].iloc[i], 2)
        macros.mean_se(f"Cross{name}", nb.pairs["cross term"].iloc[i], nb.pairs["cross s.e."].iloc[i])
    macros.number("CrossNinetyZ", nb.cross_z.iloc[-1], 2)
    macros.mean_se("CrossDrop", nb.cross_drop, nb.cross_drop_se)
    macros.number("CrossDropZ", nb.cross_drop / nb.cross_drop_se, 2)
    macros.mean_se("BiasRise", nb.bias_rise, nb.bias_rise_se)
    macros.number("BiasRiseZ", nb.bias_rise / nb.bias_rise_se, 2)
    macros.mean_se("BiasFall", nb.bias_fall, nb.bias_fall_se)
    macros.number("BiasFallZ", nb.bias_fall / nb.bias_fall_se, 2)
    macros.text("BiasPath", bias_path)
    for name, words in pair_words.items():
        macros.text(name, words)
    macros.mean_se("RiseFortyFive", nb.rise, nb.rise_se)
    macros.number("RiseFortyFiveZ", nb.rise / nb.rise_se, 2)
    macros.mean_se("DropNinety", nb.drop, nb.drop_se)
    macros.number("DropNinetyZ", nb.drop / nb.drop_se, 2)
    macros.number("MinShareBias", 100 * nb.shares["bias^2"].min(), 2)
    macros.number("MinShareVar", 100 * nb.shares["sum a^2 V"].min(), 2)
    macros.number("MinShareCross", 100 * nb.shares["cross term"].min(), 2)
    macros.number("FirstOrderDevBias", 100 * nb.dev["bias^2"], 2)
    macros.number("FirstOrderDevVar", 100 * nb.dev["sum a^2 V"], 2)
    macros.number("FirstOrderDevCross", 100 * nb.dev["cross term"], 2)
    macros.number("FirstOrderDevCrossSE", nb.cross_dev_se, 2)

    results.update(
        identity=nb.identity.to_dict(orient="list"),
        bias_share=nb.bias_share,
        ddof1=nb.ddof1.to_dict(orient="list"),
        weights_unnormalised=nb.sum13.to_dict(orient="list"),
        identical_heads=nb.copies_table.to_dict(orient="list"),
        pairs=nb.pairs.to_dict(orient="list"),
        first_order_max_rel_dev=nb.dev,
        symbolic={
            "printed_gap": str(nb.sym.printed_gap),
            "corrected_gap": str(nb.sym.corrected_gap),
            "printed_gap_symbolic_weights": str(nb.sym_general.printed_gap),
            "ddof_offset": str(nb.sym.ddof_offset),
        },
        x_pair=nb.x_pair,
        points=nb.points,
    )
    macros.write(macros_path, argument="macros_path")
    save_results(results_path, json_safe(results), argument="results_path")
    return ledger
