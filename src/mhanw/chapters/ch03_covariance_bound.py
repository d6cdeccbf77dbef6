"""Chapter 03 (Lemma 4.1): the verdict rules on the covariance of two heads.

The theory (the printed bound, the kernel overlap ``kappa``, the first-order
covariance ``n C -> kappa (sigma^2 + Delta)`` and its closed form and sympy
derivation) is :mod:`mhanw.covariance`.  This module holds the chapter's
statistics that need more than one library call (paired jackknife errors along
the angles) and its verdict rules, with their thresholds as named constants.
"""

from __future__ import annotations

import math

import numpy as np

from ..decomposition import jackknife
from ..infra.verdicts import FAILS, HOLDS, N_SE, UNDECIDED, Statistic, Verdict, no_violation, significant_effect

__all__ = [
    "CLOSED_FORM_REL_TOL",
    "FIRST_ORDER_REL_TOL",
    "NEAR_ZERO_CORRELATION",
    "bound_rule",
    "closed_form_rule",
    "correlation_with_se",
    "covariance_steps",
    "falls_with_angle_rule",
    "first_order_rule",
    "orthogonal_rule",
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

NOISE_FLOOR_NOTE = "noise term sigma^2 kappa / n"
SECTION = "sec:lemma41"


def _stat(name, value, se=math.nan, unit=""):
    return Statistic(name, float(value), float(se), unit)


def _combine(verdicts) -> str:
    """One verdict for a claim checked at several settings: fails if any fails, holds if all hold."""
    verdicts = list(verdicts)
    if FAILS in verdicts:
        return FAILS
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    return UNDECIDED


# --------------------------------------------------------------------------- statistics


def correlation_with_se(x, y, n_blocks: int = 20) -> tuple:
    """Correlation of two heads' estimates over replicates, with its jackknife standard error."""
    return jackknife(lambda a, b: np.corrcoef(a, b)[0, 1], (np.asarray(x, float), np.asarray(y, float)), n_blocks)


def covariance_steps(estimates, n_blocks: int = 20) -> dict:
    """The covariance of two heads at successive angles and its paired changes.

    ``estimates``: ``(angles, R, 2)`` head estimates at one point, every angle
    on the same replicates (common random numbers).  Returns ``"steps"`` and
    ``"steps_se"`` ``(angles - 1,)``: ``C(theta_k) - C(theta_{k+1})`` with
    paired jackknife standard errors; ``"drop"`` and ``"drop_se"``: the first
    angle's covariance minus the last's.
    """
    est = np.asarray(estimates, float)
    if est.ndim != 3 or est.shape[2] != 2 or est.shape[0] < 2:
        raise ValueError(f"estimates: expected shape (angles >= 2, R, 2), got {est.shape}")

    def covs(*per_angle):
        return np.array([np.mean((e[:, 0] - e[:, 0].mean()) * (e[:, 1] - e[:, 1].mean())) for e in per_angle])

    values, se = jackknife(lambda *a: -np.diff(covs(*a)), tuple(est), n_blocks)
    drop, drop_se = jackknife(lambda a, b: covs(a, b)[0] - covs(a, b)[1], (est[0], est[-1]), n_blocks)
    return {"steps": np.atleast_1d(values), "steps_se": np.atleast_1d(se), "drop": float(drop),
            "drop_se": float(drop_se)}


# --------------------------------------------------------------------------- rules


def bound_rule(claim: str, statement: str, covariance, se, bound, angles) -> Verdict:
    """An upper bound against measured covariances at several angles.

    Fails when the covariance exceeds the bound by more than 3 s.e. at some
    angle; holds when it lies 3 s.e. below the bound at every angle
    (``detectable``: the largest 3 s.e.); undecided otherwise.
    """
    c, s, b = (np.asarray(v, float) for v in (covariance, se, bound))
    excess = c - b
    z = excess / s
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
        section=SECTION,
    )


def orthogonal_rule(rho: float, rho_se: float) -> Verdict:
    """Orthogonal heads have near-zero covariance: their correlation against :data:`NEAR_ZERO_CORRELATION`."""
    above = significant_effect(rho - NEAR_ZERO_CORRELATION, rho_se)
    verdict = {HOLDS: FAILS, FAILS: HOLDS}.get(above, UNDECIDED)
    return Verdict(
        claim="lemma-4.1/orthogonal-near-zero",
        statement="Heads with orthogonal key subspaces have near-zero covariance",
        verdict=verdict,
        criterion=f"correlation of the two heads at 90 degrees (constant m) against {NEAR_ZERO_CORRELATION:g}: "
                  "fails when 3 s.e. above it, holds when 3 s.e. below",
        statistics=(_stat("correlation at 90 degrees", rho, rho_se),),
        section=SECTION,
    )


def first_order_rule(measured, se, predicted) -> Verdict:
    """n C -> kappa (sigma^2 + Delta): the measured covariance against the first-order value, setting by setting.

    Relative deviation ``measured / predicted - 1`` (s.e. ``se / predicted``)
    at every setting through :func:`no_violation` with tolerance
    :data:`FIRST_ORDER_REL_TOL`; fails if any setting fails, holds if all hold.
    """
    c, s, p = (np.asarray(v, float) for v in (measured, se, predicted))
    rel, rel_se = c / p - 1, s / p
    verdicts = [no_violation(r, e, FIRST_ORDER_REL_TOL)[0] for r, e in zip(rel, rel_se)]
    worst = int(np.argmax(np.abs(rel)))
    verdict = _combine(verdicts)
    return Verdict(
        claim="lemma-4.1/first-order",
        statement="To first order in 1/n, n C_jj'(x) = kappa_jj'(x) (sigma^2 + Delta_jj'(x))",
        verdict=verdict,
        criterion=f"relative deviation of the measured covariance from the first-order value within 3 s.e. "
                  f"and within {FIRST_ORDER_REL_TOL:g} (neglected terms of relative order 1/(n h^d_k)) at every "
                  "regression function and angle",
        statistics=(_stat("largest relative deviation", rel[worst], rel_se[worst]),
                    _stat("largest |deviation| in s.e.", float(np.max(np.abs(c - p) / s)))),
        detectable=float(N_SE * rel_se.max()) if verdict == HOLDS else None,
        section=SECTION,
    )


def closed_form_rule(rel_dev, rel_se, n: int) -> Verdict:
    """The closed form for two 1-D heads at the largest n: relative deviations through :func:`no_violation`."""
    r, s = np.asarray(rel_dev, float), np.asarray(rel_se, float)
    verdicts = [no_violation(a, b, CLOSED_FORM_REL_TOL)[0] for a, b in zip(r, s)]
    worst = int(np.argmax(np.abs(r)))
    verdict = _combine(verdicts)
    return Verdict(
        claim="lemma-4.1/closed-form",
        statement="For two one-dimensional heads at angle phi (x = 0, m constant, X ~ N(0, I_2)), "
                  "n C / sigma^2 -> (1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)",
        verdict=verdict,
        criterion=f"at n = {n}, relative deviation of Monte Carlo from the closed form within 3 s.e. and within "
                  f"{CLOSED_FORM_REL_TOL:g} (a limit in n) at every bandwidth and angle",
        statistics=(_stat("largest relative deviation", r[worst], s[worst]),
                    _stat("largest |deviation| in s.e.", float(np.max(np.abs(r) / s)))),
        detectable=float(N_SE * s.max()) if verdict == HOLDS else None,
        section=SECTION,
    )


def falls_with_angle_rule(steps, steps_se, drop, drop_se, label: str) -> Verdict:
    """"The covariance falls as the principal angles grow": paired changes between successive angles.

    Holds when the first angle's covariance exceeds the last's by 3 s.e. and no
    step rises by 3 s.e.; fails when some step rises by 3 s.e. or the
    covariance at the last angle is 3 s.e. above the first; undecided otherwise.
    """
    steps, steps_se = np.asarray(steps, float), np.asarray(steps_se, float)
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
