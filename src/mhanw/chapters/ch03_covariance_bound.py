"""Chapter 03 (Lemma 4.1): the verdict rules on the covariance of two heads.

The theory (the printed bound, the kernel overlap ``kappa``, the first-order
covariance ``n C -> kappa (sigma^2 + Delta)`` and its closed form and sympy
derivation) is :mod:`mhanw.covariance`.  This module holds the chapter's
statistics that need more than one library call (paired jackknife errors along
the angles) and its verdict rules, with their thresholds as named constants.
"""

from __future__ import annotations

import numpy as np

from ..decomposition import jackknife
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.validate import as_float_array, sequence
from ..infra.verdicts import (FAILS, HOLDS, N_SE, NOT_CHECKABLE, UNDECIDED, Verdict, checked, combine, no_violation,
                              no_violation_record, significant_effect)
from ..infra.verdicts import stat as _stat

__all__ = [
    "bound_premises",
    "sample_premises",
    "CLOSED_FORM_REL_TOL",
    "FIRST_ORDER_REL_TOL",
    "NEAR_ZERO_CORRELATION",
    "CONSTRAINTS",
    "PARAMETERS",
    "bound_verdict",
    "derivation_verdict",
    "not_checkable",
    "closed_form_verdict",
    "correlation_with_se",
    "covariance_steps",
    "falls_with_angle_verdict",
    "first_order_verdict",
    "orthogonal_verdict",
    "pooled_relative_deviation",
]

#: "Near-zero covariance" read as a correlation below 0.05: the average of two such heads keeps at most
#: 5 % more variance than the average of two independent heads (Var = V (1 + rho) / 2).
NEAR_ZERO_CORRELATION = 0.05

#: The first-order covariance is a limit in n; its neglected terms are of relative order 1/(n h^{d_k})
#: (2 % at n = 500, h = 0.5, d_k = 2) times constants of order a few: a prediction within 10 % is
#: first-order accurate.
FIRST_ORDER_REL_TOL = 0.10

#: The closed form is the n -> infinity limit; at the largest n tried (n h >= 200 for h >= 0.1 at
#: n = 2000) the neglected terms of relative order 1/(n h) are below 1 % times constants of order a
#: few: agreement within 5 % is agreement with the limit.
CLOSED_FORM_REL_TOL = 0.05

#: The sympy derivation of kappa agrees with the numerical kernel_overlap when their relative difference
#: is at most this (double-precision evaluation of the same closed expression).
DERIVATION_REL_TOL = 1e-10

SECTION = "sec:lemma41"

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "regression": P.regression(dimension=4),
    "lipschitz": P.optional(P.nonnegative_float()),
    "inputs": P.inputs(dimension=4),
    "noise": P.noise(dimension=4),
    "sigma": P.nonnegative_float(),
    "n": P.positive_int(2),
    "bandwidth": P.positive_float(),
    "angles": P.sequence(P.real(0.0, 90.0), min_length=3),
    "x": P.sequence(P.real(), length=4),
    "symbolic_bandwidth": P.optional(P.positive_float()),
    "symbolic_angle_deg": P.optional(P.real(0.0, 90.0)),
    "symbolic_input_variance": P.optional(P.positive_float()),
    "symbolic_point": P.optional(P.sequence(P.real(), length=2)),
}
CONSTRAINTS = (
    P.require("angles", lambda p: p["angles"][0] == 0 and p["angles"][-1] == 90
              and all(a < b for a, b in zip(p["angles"], p["angles"][1:])),
              "increasing angles from 0 to 90 degrees"),
)


# --------------------------------------------------------------------------- statistics


def correlation_with_se(x, y, n_blocks: int = 20) -> tuple:
    """Correlation of two heads' estimates over replicates, with its jackknife standard error.

    ``x``, ``y``: ``(R,)`` finite, ``R >= 2``, neither constant (a correlation with a constant is undefined)."""
    a = as_float_array(x, "x", ndim=1)
    b = as_float_array(y, "y", ndim=1)
    if b.shape != a.shape or a.size < 2:
        raise ValueError(f"y: expected the shape of x {a.shape} with at least 2 replicates, got {b.shape}")
    for name, v in (("x", a), ("y", b)):
        if np.all(v == v[0]):
            raise ValueError(f"{name}: constant over the replicates; its correlation is undefined")
    return jackknife(lambda a, b: np.corrcoef(a, b)[0, 1], (a, b), n_blocks)


def covariance_steps(estimates, n_blocks: int = 20) -> dict:
    """The covariance of two heads at successive angles and its paired changes.

    ``estimates``: ``(angles, R, 2)`` head estimates at one point, every angle
    on the same replicates (common random numbers).  Returns ``"steps"`` and
    ``"steps_se"`` ``(angles - 1,)``: ``C(theta_k) - C(theta_{k+1})`` with
    paired jackknife standard errors; ``"drop"`` and ``"drop_se"``: the first
    angle's covariance minus the last's.
    """
    est = as_float_array(estimates, "estimates", ndim=3)
    if est.ndim != 3 or est.shape[2] != 2 or est.shape[0] < 2:
        raise ValueError(f"estimates: expected shape (angles >= 2, R, 2), got {est.shape}")

    def covs(*per_angle):
        return np.array([np.mean((e[:, 0] - e[:, 0].mean()) * (e[:, 1] - e[:, 1].mean())) for e in per_angle])

    values, se = jackknife(lambda *a: -np.diff(covs(*a)), tuple(est), n_blocks)
    drop, drop_se = jackknife(lambda a, b: covs(a, b)[0] - covs(a, b)[1], (est[0], est[-1]), n_blocks)
    return {"steps": np.atleast_1d(values), "steps_se": np.atleast_1d(se), "drop": float(drop),
            "drop_se": float(drop_se)}


# --------------------------------------------------------------------------- rules


@checked(claim=V.text, statement=V.text, covariance=V.numbers, se=V.standard_errors, bound=V.numbers,
         angles=V.numbers, premises=V.premise_list)
def bound_verdict(claim: str, statement: str, covariance, se, bound, angles, premises=()) -> Verdict:
    """An upper bound against measured covariances at several angles.

    Fails when the covariance exceeds the bound by more than 3 s.e. at some
    angle; holds when it lies 3 s.e. below the bound at every angle
    (``detectable``: the largest 3 s.e.); undecided otherwise.  ``covariance``,
    ``se``, ``bound``, ``angles``: one value per angle; ``premises``: what the bound as evaluated
    rests on (:func:`bound_premises`), so that a bound evaluated outside them is reported as such.
    """
    c, s, b = (np.asarray(v, float) for v in (covariance, se, bound))
    for name, v in (("se", s), ("bound", b), ("angles", np.asarray(angles))):
        if v.shape != c.shape:
            raise ValueError(f"{name}: expected one value per angle, the shape of covariance {c.shape}, got {v.shape}")
    excess = c - b
    with np.errstate(divide="ignore", invalid="ignore"):  # an exact (zero s.e.) excess is infinitely many s.e.
        z = np.where(s > 0, excess / np.where(s > 0, s, 1.0), np.sign(excess) * np.inf)
    worst = int(np.argmax(z))
    violated = [int(a) for a, e, sd in zip(angles, excess, s) if e > N_SE * sd]
    if violated:
        verdict = FAILS
    elif np.all(excess + N_SE * s <= 0):
        verdict = HOLDS
    else:
        verdict = UNDECIDED
    return Verdict(
        claim=claim, statement=statement, verdict=verdict,
        criterion="covariance minus the bound at each angle: fails when 3 s.e. above 0 at some angle "
                  f"(here at {violated or 'none'} degrees), holds when 3 s.e. below at every angle",
        statistics=(_stat(f"largest excess over the bound (at {int(angles[worst])} degrees)", excess[worst], s[worst]),),
        detectable=float(N_SE * s.max()) if verdict == HOLDS else None,
        premises=premises, section=SECTION,
    )


def bound_premises(model) -> tuple:
    """The premises of the printed bound as the chapter evaluates it for a smooth ``m``: ``p_K`` is the
    density of the projected keys under iid ``N(0, I)`` inputs (:func:`mhanw.premises.gaussian_inputs`),
    and the bound is a variance bound for independent rows (:func:`mhanw.premises.iid_samples`).  For a
    constant ``m`` the bound is 0 whatever ``p_K``, so only the second applies (:func:`sample_premises`)."""
    from .. import premises as P

    return (P.gaussian_inputs(model), P.iid_samples(model))


def sample_premises(model) -> tuple:
    """The premise of every ``1/n`` covariance formula of the chapter (the printed bound for a constant
    ``m``, the first-order covariance, the correlation of orthogonal heads): the rows of a training sample
    are independent (:func:`mhanw.premises.iid_samples` on ``model``)."""
    from .. import premises as P

    return (P.iid_samples(model),)


@checked(rho=V.number, rho_se=V.standard_error, premises=V.premise_list)
def orthogonal_verdict(rho: float, rho_se: float, premises=()) -> Verdict:
    """Orthogonal heads have near-zero covariance: their correlation against :data:`NEAR_ZERO_CORRELATION`."""
    verdict = significant_effect(rho - NEAR_ZERO_CORRELATION, rho_se, sign=-1)  # holds when 3 s.e. below
    return Verdict(
        claim="lemma-4.1/orthogonal-near-zero",
        statement="Heads with orthogonal key subspaces have near-zero covariance",
        verdict=verdict,
        criterion=f"correlation of the two heads at 90 degrees (constant m) against {NEAR_ZERO_CORRELATION:g}: "
                  "fails when 3 s.e. above it, holds when 3 s.e. below",
        statistics=(_stat("correlation at 90 degrees", rho, rho_se),),
        premises=premises, section=SECTION,
    )


def pooled_relative_deviation(pairs, predicted, n_blocks: int = 20) -> tuple:
    """Mean over settings of ``C_s / predicted_s - 1``, with a jackknife s.e. over the shared replicates.

    ``pairs``: a list over settings of arrays ``(R, 2)`` (the two heads'
    estimates at one point), all on the same ``R`` replicates (common random
    numbers); ``predicted``: the predicted covariance of each setting.
    Returns ``(mean deviation, standard error)``.
    """
    est = [as_float_array(e, f"pairs[{i}]", ndim=2) for i, e in enumerate(sequence(pairs, "pairs", "(R, 2) arrays"))]
    pred = as_float_array(predicted, "predicted", ndim=1)
    if len(est) != pred.shape[0] or not est:
        raise ValueError(f"predicted: expected one value per setting ({len(est)}), got {pred.shape}")
    if np.any(pred == 0):
        raise ValueError("predicted: a predicted covariance is 0; a deviation relative to it is undefined")

    def stat(*e):
        covs = np.array([np.mean((a[:, 0] - a[:, 0].mean()) * (a[:, 1] - a[:, 1].mean())) for a in e])
        return float(np.mean(covs / pred - 1.0))

    return jackknife(stat, tuple(est), n_blocks)


@checked(pooled=V.estimate_map, worst_rel=V.nonnegative, worst_z=V.nonnegative, premises=V.premise_list)
def first_order_verdict(pooled: dict, worst_rel: float, worst_z: float, premises=()) -> Verdict:
    """n C -> kappa (sigma^2 + Delta): for each regression function, the mean relative deviation of the
    measured covariance from the first-order value over the angles, through :func:`no_violation` with
    tolerance :data:`FIRST_ORDER_REL_TOL`; fails if one fails, holds if all hold.

    ``pooled``: ``{label: (mean relative deviation, s.e.)}``; ``worst_rel``,
    ``worst_z``: the largest relative deviation and |deviation|/s.e. of a single setting (reported);
    ``premises``: :func:`sample_premises` (a ``1/n`` formula for independent rows).  The record carries the
    tolerance and the detectable size (3 s.e. of the least precise regression function), in per cent.
    """
    decided = {k: no_violation(100 * v, 100 * e, 100 * FIRST_ORDER_REL_TOL) for k, (v, e) in pooled.items()}
    verdict = combine(v for v, _ in decided.values())
    return Verdict(
        claim="lemma-4.1/first-order",
        statement="To first order in 1/n, n C_jj'(x) = kappa_jj'(x) (sigma^2 + Delta_jj'(x))",
        verdict=verdict,
        criterion="for each regression function, the mean over the angles of (measured / first-order - 1), in %, "
                  "jackknife s.e. over the shared replicates (the tolerance: neglected terms of relative order "
                  f"1/(n h^d_k)): {V.no_violation_criterion(100 * FIRST_ORDER_REL_TOL, unit='%')}; the claim holds "
                  "when it holds for every regression function and fails when it fails for one",
        statistics=tuple(_stat(f"mean relative deviation, m = {k}", 100 * v, 100 * e, "%") for k, (v, e) in pooled.items())
        + (_stat("largest relative deviation at one angle", 100 * worst_rel, unit="%"),
           _stat("largest |deviation| in s.e.", worst_z)),
        detectable=max(d for _, d in decided.values()), tolerance=100 * FIRST_ORDER_REL_TOL, unit="%",
        premises=premises, section=SECTION,
    )


@checked(pooled_dev=V.number, pooled_se=V.standard_error, n=V.count, worst_rel=V.nonnegative,
         worst_z=V.nonnegative)
def closed_form_verdict(pooled_dev: float, pooled_se: float, n: int, worst_rel: float, worst_z: float) -> Verdict:
    """The closed form for two 1-D heads at the largest n: the mean relative deviation over bandwidths and
    angles (jackknife s.e.) through :func:`no_violation` with tolerance :data:`CLOSED_FORM_REL_TOL`."""
    return no_violation_record(
        _stat("mean relative deviation", 100 * pooled_dev, 100 * pooled_se, "%"), 100 * CLOSED_FORM_REL_TOL,
        extra=(_stat("largest relative deviation at one setting", 100 * worst_rel, unit="%"),
               _stat("largest |deviation| in s.e.", worst_z)),
        claim="lemma-4.1/closed-form",
        statement="For two one-dimensional heads at angle phi (x = 0, m constant, X ~ N(0, I_2)), "
                  "n C / sigma^2 -> (1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)",
        criterion=f"at n = {n}, the mean over bandwidths and angles of (Monte Carlo / closed form - 1), in %, "
                  "jackknife s.e. over the shared replicates (a limit in n; no further allowance)",
        section=SECTION,
    )


@checked(steps=V.numbers, steps_se=V.standard_errors, drop=V.number, drop_se=V.standard_error, label=V.text)
def falls_with_angle_verdict(steps, steps_se, drop, drop_se, label: str) -> Verdict:
    """"The covariance falls as the principal angles grow": paired changes between successive angles.

    Holds when the first angle's covariance exceeds the last's by 3 s.e. and no
    step rises by 3 s.e.; fails when some step rises by 3 s.e. or the
    covariance at the last angle is 3 s.e. above the first; undecided otherwise.
    """
    steps, steps_se = np.asarray(steps, float), np.asarray(steps_se, float)
    if steps_se.shape != steps.shape:
        raise ValueError(f"steps_se: expected the shape of steps {steps.shape}, got {steps_se.shape}")
    rises = int(np.sum(steps < -N_SE * steps_se))
    falls = int(np.sum(steps > N_SE * steps_se))
    end = significant_effect(drop, drop_se)
    if rises or end == FAILS:
        verdict = FAILS
    elif end == HOLDS:
        verdict = HOLDS
    else:
        verdict = UNDECIDED
    return Verdict(
        claim=f"lemma-4.1/falls-with-angle/{label}",
        statement=f"The covariance of the two heads falls as their principal angles grow ({label})",
        verdict=verdict,
        criterion="paired (jackknife) changes over the shared replicates: the covariance at 0 degrees 3 s.e. "
                  "above that at 90 and no step between successive angles rising by 3 s.e.",
        statistics=(_stat("C(0) - C(90)", drop, drop_se), _stat("steps falling by 3 s.e.", falls),
                    _stat("steps rising by 3 s.e.", rises), _stat("steps", len(steps))),
        section=SECTION,
    )


@checked(claim=V.text, reason=V.text)
def not_checkable(claim: str, reason: str) -> Verdict:
    """The record of a check whose prediction does not apply under the chosen assumptions."""
    return Verdict(claim=claim, statement=f"{claim} (prediction for N(0, I) inputs)", verdict=NOT_CHECKABLE,
                   criterion=f"not checked: {reason}", section=SECTION)


@checked(rel_diff=V.nonnegative, matches_closed=V.optional(V.flag))
def derivation_verdict(rel_diff: float, matches_closed) -> Verdict:
    """The sympy derivation of kappa against the numerical kernel overlap (and the closed form, when it applies:
    ``matches_closed`` True or False; ``None`` where it does not apply)."""
    ok = rel_diff <= DERIVATION_REL_TOL and matches_closed is not False
    return Verdict(
        claim="lemma-4.1/kappa-derivation",
        statement="kappa of two one-dimensional heads, derived in sympy for the chosen bandwidth, angle, input "
                  "variance and point, equals the numerical kernel overlap (and the closed form at s = 1, x = 0)",
        verdict=HOLDS if ok else FAILS,
        criterion=f"relative difference at most {DERIVATION_REL_TOL:g}; sympy simplifies the difference to the "
                  "closed form to 0 where the closed form applies",
        statistics=(_stat("relative difference", rel_diff),),
        detectable=DERIVATION_REL_TOL if ok else None,
        section=SECTION,
    )
