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

from .. import data
from ..decomposition import jackknife
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.notebook import notebook_helper
from ..infra.validate import as_float_array, positive_int, sequence
from ..infra.verdicts import (
    FAILS,
    HOLDS,
    N_SE,
    NOT_CHECKABLE,
    UNDECIDED,
    Verdict,
    checked,
    combine,
    no_violation,
    no_violation_record,
    significant_effect,
)
from ..infra.verdicts import stat as _stat

__all__ = [
    "SIZES",
    "closed_form_study",
    "kappa_derivation_check",
    "plot_figure",
    "setup",
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
    "lipschitz": P.optional(P.nonnegative_float(1e3, why="a Lipschitz constant of a regression of order 1")),
    "inputs": P.inputs(dimension=4),
    "noise": P.noise(dimension=4),
    "sigma": P.noise_level(),
    "n": P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidth": P.bandwidth(),
    "angles": P.sequence(P.real(0.0, 90.0), min_length=3),
    "x": P.sequence(P.coordinate(), length=4),
    "symbolic_bandwidth": P.optional(P.bandwidth()),
    "symbolic_angle_deg": P.optional(P.real(0.0, 90.0)),
    "symbolic_input_variance": P.optional(
        P.positive_float(1e-3, 1e3, why="a thousandth to a thousand times the unit variance")
    ),
    "symbolic_point": P.optional(P.sequence(P.coordinate(), length=2)),
}
CONSTRAINTS = (
    P.require(
        "angles",
        lambda p: (
            p["angles"][0] == 0 and p["angles"][-1] == 90 and all(a < b for a, b in zip(p["angles"], p["angles"][1:]))
        ),
        "increasing angles from 0 to 90 degrees",
    ),
    # the printed bound is linear in L: a regression without a finite Lipschitz constant (x1^2, sqrt(|x1|))
    # has no bound to check unless the reader bounds it on the data's region
    P.require(
        "regression",
        lambda p: (
            p["lipschitz"] is not None or math.isfinite(data.regression_function(p["regression"]).lipschitz_constant(4))
        ),
        "a regression with a finite Lipschitz constant on R^4, or lipschitz given (the bound is linear in it)",
    ),
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
    return {
        "steps": np.atleast_1d(values),
        "steps_se": np.atleast_1d(se),
        "drop": float(drop),
        "drop_se": float(drop_se),
    }


# --------------------------------------------------------------------------- rules


@checked(
    claim=V.text,
    statement=V.text,
    covariance=V.numbers,
    se=V.standard_errors,
    bound=V.numbers,
    angles=V.numbers,
    premises=V.premise_list,
)
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
        claim=claim,
        statement=statement,
        verdict=verdict,
        criterion="covariance minus the bound at each angle: fails when 3 s.e. above 0 at some angle "
        f"(here at {violated or 'none'} degrees), holds when 3 s.e. below at every angle",
        statistics=(
            _stat(f"largest excess over the bound (at {int(angles[worst])} degrees)", excess[worst], s[worst]),
        ),
        detectable=float(N_SE * s.max()) if verdict == HOLDS else None,
        premises=premises,
        section=SECTION,
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
        premises=premises,
        section=SECTION,
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
        statistics=tuple(
            _stat(f"mean relative deviation, m = {k}", 100 * v, 100 * e, "%") for k, (v, e) in pooled.items()
        )
        + (
            _stat("largest relative deviation at one angle", 100 * worst_rel, unit="%"),
            _stat("largest |deviation| in s.e.", worst_z),
        ),
        detectable=max(d for _, d in decided.values()),
        tolerance=100 * FIRST_ORDER_REL_TOL,
        unit="%",
        premises=premises,
        section=SECTION,
    )


@checked(
    pooled_dev=V.number, pooled_se=V.standard_error, n=V.positive_count, worst_rel=V.nonnegative, worst_z=V.nonnegative
)
def closed_form_verdict(pooled_dev: float, pooled_se: float, n: int, worst_rel: float, worst_z: float) -> Verdict:
    """The closed form for two 1-D heads at the largest n: the mean relative deviation over bandwidths and
    angles (jackknife s.e.) through :func:`no_violation` with tolerance :data:`CLOSED_FORM_REL_TOL`."""
    return no_violation_record(
        _stat("mean relative deviation", 100 * pooled_dev, 100 * pooled_se, "%"),
        100 * CLOSED_FORM_REL_TOL,
        extra=(
            _stat("largest relative deviation at one setting", 100 * worst_rel, unit="%"),
            _stat("largest |deviation| in s.e.", worst_z),
        ),
        claim="lemma-4.1/closed-form",
        statement="For two one-dimensional heads at angle phi (x = 0, m constant, X ~ N(0, I_2)), "
        "n C / sigma^2 -> (1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)",
        criterion=f"at n = {n}, the mean over bandwidths and angles of (Monte Carlo / closed form - 1), in %, "
        "jackknife s.e. over the shared replicates (a limit in n; no further allowance)",
        section=SECTION,
    )


@checked(steps=V.numbers, steps_se=V.standard_errors, drop=V.number, drop_se=V.standard_error, label=V.text)
def falls_with_angle_verdict(steps, steps_se, drop, drop_se, label: str) -> Verdict:
    """ "The covariance falls as the principal angles grow": paired changes between successive angles.

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
        statistics=(
            _stat("C(0) - C(90)", drop, drop_se),
            _stat("steps falling by 3 s.e.", falls),
            _stat("steps rising by 3 s.e.", rises),
            _stat("steps", len(steps)),
        ),
        section=SECTION,
    )


@checked(claim=V.text, reason=V.text)
def not_checkable(claim: str, reason: str) -> Verdict:
    """The record of a check whose prediction does not apply under the chosen assumptions."""
    return Verdict(
        claim=claim,
        statement=f"{claim} (prediction for N(0, I) inputs)",
        verdict=NOT_CHECKABLE,
        criterion=f"not checked: {reason}",
        section=SECTION,
    )


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


# --- The chapter's computations and bookkeeping, called from the notebook ------------------------------

#: Monte Carlo sizes by fidelity: replicates of the pair family and of the closed-form study, and the
#: sample sizes, bandwidths and angles (degrees) of the closed-form study of part 4.
SIZES = {
    "quick": dict(
        n_rep_pair=3_000,
        n_rep_closed=4_000,
        closed_n=[2000],
        closed_h=[0.1, 0.3],
        closed_phi=[0, 10, 30, 60, 90],
        n_jobs=1,
    ),
    "paper": dict(
        n_rep_pair=20_000,
        n_rep_closed=10_000,
        closed_n=[500, 2000, 8000],
        closed_h=[0.1, 0.3, 0.5],
        closed_phi=[0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
        n_jobs=2,
    ),
}


def setup(namespace) -> tuple[dict, dict, list]:
    """The run of the notebook whose globals are ``namespace``: its checked parameters
    (:func:`mhanw.infra.params.check_parameters`, one line naming a bad one), the chapter's sizes
    (:data:`SIZES` at the run's fidelity) and its random streams: children of
    ``SeedSequence(seed)``, 0 for the pair family (both regression functions share it), 1 for the closed
    form of part 4.  Also sets the figure style and pandas' display precision (4 digits) for the
    chapter's tables.  Returns ``(params, sizes, streams)``."""
    import pandas as pd

    from ..infra.notebook import start

    params, sizes, streams = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 2)
    pd.set_option("display.precision", 4)
    return params, sizes, streams


def kappa_derivation_check(
    overlap, closed, h_, phi_, bandwidth=None, angle_deg=None, input_variance=None, point=None
) -> dict:
    """Checks the sympy derivation ``overlap`` (from :func:`mhanw.covariance.kernel_overlap_symbolic`) of
    the kernel overlap kappa of two one-dimensional heads (Lemma 4.1, corrected first-order statement):
    at numbers (h = 0.3, phi = 40 degrees, x = (0.2, -0.1), s^2 = 1 where the derivation left symbols)
    against the numerical :func:`mhanw.covariance.kernel_overlap`, and, when ``input_variance`` is 1 and
    ``point`` is the origin, symbolically against the closed form ``closed`` in the symbols ``h_``,
    ``phi_``.  Returns ``h_num``, ``phi_num`` (radians), ``x_num`` ``(2,)``, ``s2_num``, ``kappa_sym``,
    ``kappa_num``, ``kappa_rel`` (their relative difference) and ``matches_closed`` (None if not tested)."""
    import sympy as sp

    from .. import covariance

    h_num = 0.3 if bandwidth is None else float(bandwidth)
    phi_num = np.radians(40.0 if angle_deg is None else float(angle_deg))
    x_num = np.array([0.2, -0.1]) if point is None else np.array(point, dtype=float)
    s2_num = 1.0 if input_variance is None else float(input_variance)
    subs = {
        k: v
        for k, v in {"h": h_num, "phi": phi_num, "x1": x_num[0], "x2": x_num[1], "s": np.sqrt(s2_num)}.items()
        if k in overlap.symbols
    }
    kappa_sym = float(overlap.kappa.subs({overlap.symbols[k]: v for k, v in subs.items()}))
    u, v = np.array([[1.0], [0.0]]), np.array([[np.cos(phi_num)], [np.sin(phi_num)]])
    kappa_num = covariance.kernel_overlap(np.sqrt(s2_num) * u, np.sqrt(s2_num) * v, x_num / np.sqrt(s2_num), h_num)
    matches_closed = None
    if input_variance == 1.0 and list(point or [1]) == [0.0, 0.0]:
        closed_at = closed.subs({h_: overlap.symbols.get("h", h_), phi_: overlap.symbols.get("phi", phi_)})
        if bandwidth is not None:
            closed_at = closed_at.subs(h_, sp.nsimplify(bandwidth))
        if angle_deg is not None:
            closed_at = closed_at.subs(phi_, sp.pi * sp.Rational(str(angle_deg)) / 180)
        matches_closed = sp.simplify(overlap.kappa - closed_at) == 0
    return dict(
        h_num=h_num,
        phi_num=phi_num,
        x_num=x_num,
        s2_num=s2_num,
        kappa_sym=kappa_sym,
        kappa_num=kappa_num,
        kappa_rel=abs(kappa_sym / kappa_num - 1),
        matches_closed=matches_closed,
    )


def closed_form_study(sizes: dict, stream) -> tuple:
    """Part 4: the covariance of two one-dimensional heads u = (1, 0), v = (cos phi, sin phi) at x = 0 for
    m = 0, sigma = 1, against the closed form :func:`mhanw.covariance.covariance_factor`, for every
    sample size ``sizes["closed_n"]`` (one child of ``stream`` each), bandwidth ``sizes["closed_h"]`` and
    angle ``sizes["closed_phi"]`` (degrees).  One configuration per bandwidth holds u and one head per
    angle, so the angles share u's estimate.  Returns ``(closed_table, by_n, closed_pooled)``: one row per
    (n, h, phi); per n the largest |z| and relative deviation and the mean relative deviation; and the
    pooled relative deviation at the largest n with its jackknife s.e.
    (:func:`pooled_relative_deviation`)."""
    import pandas as pd

    from .. import covariance, heads, montecarlo
    from ..decomposition import covariance_with_se

    phis = np.radians(sizes["closed_phi"])
    closed_configs = [
        heads.HeadConfig(np.concatenate([[[[1.0], [0.0]]], [[[np.cos(p)], [np.sin(p)]] for p in phis]]), bandwidth=h)
        for h in sizes["closed_h"]
    ]
    n_streams = stream.spawn(len(sizes["closed_n"]))  # one stream per sample size
    rows = []
    for n_c, n_stream in zip(sizes["closed_n"], n_streams):
        ests = montecarlo.pointwise_estimates(
            closed_configs,
            "zero",
            np.zeros(2),
            n=n_c,
            n_rep=sizes["n_rep_closed"],
            seed=n_stream,
            sigma=1.0,
            n_jobs=sizes["n_jobs"],
        )
        for cfg, est in zip(closed_configs, ests):
            for k, phi in enumerate(phis):
                cov, se = covariance_with_se(est[:, 0, 0], est[:, k + 1, 0])
                value = float(covariance.covariance_factor(phi, cfg.bandwidth))
                rows.append(
                    {
                        "n": n_c,
                        "h": cfg.bandwidth,
                        "phi": round(float(np.degrees(phi))),
                        "nC/sigma^2 (MC)": n_c * cov,
                        "s.e.": n_c * se,
                        "closed form": value,
                        "(MC - closed)/s.e.": (n_c * cov - value) / (n_c * se),
                        "rel. deviation": n_c * cov / value - 1,
                    }
                )
        if n_c == max(sizes["closed_n"]):  # the pooled deviation at the largest n, over bandwidths and angles
            closed_pairs = [est[:, [0, k + 1], 0] for est in ests for k in range(len(phis))]
            closed_pred = [
                float(covariance.covariance_factor(phi, cfg.bandwidth)) / n_c for cfg in closed_configs for phi in phis
            ]
            closed_pooled = pooled_relative_deviation(closed_pairs, closed_pred)
    closed_table = pd.DataFrame(rows)
    by_n = closed_table.groupby("n").agg(
        max_abs_z=("(MC - closed)/s.e.", lambda z: float(np.abs(z).max())),
        max_rel_dev=("rel. deviation", lambda r: float(np.abs(r).max())),
        mean_rel_dev=("rel. deviation", "mean"),
    )
    return closed_table, by_n, closed_pooled


@notebook_helper
def plot_figure(
    zero,
    sin13,
    closed_table,
    sizes: dict,
    x,
    bandwidth: float,
    n: int,
    zero_m,
    smooth_m,
    printed_bound,
    theta_star: float,
    L_smooth: float,
    figures_dir,
):
    """The chapter's figure ``03_covariance_bound`` (Lemma 4.1): the measured covariance of the pair
    family (``zero``, ``sin13``: the rows of the measured table for the constant and the smooth m, with
    ``theta``, ``C (MC)``, ``s.e.``, ``violated``) with ±2 s.e. against the printed bound
    (``printed_bound(W, m)``) and the first-order covariance on 31 angles, for (a) the constant m
    ``zero_m`` and (b) the smooth ``smooth_m``; (c) the closed form of two one-dimensional heads against
    ``closed_table`` (:func:`closed_form_study`) at the largest n.  ``x`` is ``(4,)``.  Saves, shows and
    closes it; returns the saved paths (:func:`mhanw.infra.figures.save`)."""
    from .. import covariance, heads
    from ..infra import figures

    n = positive_int(n, "n", minimum=2)
    fine = np.linspace(0, 90, 31)
    fine_pairs = [heads.pair_heads(np.radians(t), 4, 2) for t in fine]
    fo_zero = np.array(
        [covariance.first_order_covariance_model(W[0], W[1], x, bandwidth, n, zero_m).covariance for W in fine_pairs]
    )
    fo_sin = np.array(
        [covariance.first_order_covariance_model(W[0], W[1], x, bandwidth, n, smooth_m).covariance for W in fine_pairs]
    )
    bound_sin = np.array([printed_bound(W, smooth_m) for W in fine_pairs])

    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=3.4)
    ax_a.errorbar(
        zero["theta"],
        1e3 * zero["C (MC)"],
        yerr=figures.half_width(1e3 * zero["s.e."]),
        fmt="o",
        color="C0",
        label=r"MC $\hat C_{12}$, $\pm2$ s.e.",
    )
    ax_a.plot(fine, 1e3 * fo_zero, color="C0", lw=1, label=r"first order $\kappa\sigma^2/n$")
    ax_a.axhline(0, color="C3", lw=1.5, label="printed bound ($=0$)")
    ax_a.set(
        xlabel=r"principal angle $\theta$ (deg)",
        ylabel=r"$C_{12}(x)$ ($\times10^{-3}$)",
        xticks=[0, 30, 60, 90],
        title=r"(a) $m$ constant ($L=0$)",
    )
    ax_a.set_ylim(-0.05e3 * zero["C (MC)"].max(), 1.2e3 * zero["C (MC)"].max())
    ax_a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    floor_b = 1e-4
    ok, bad = sin13[~sin13["violated"]], sin13[sin13["violated"]]
    ax_b.errorbar(
        ok["theta"],
        ok["C (MC)"],
        yerr=figures.half_width(ok["s.e."]),
        fmt="o",
        color="C0",
        label="MC, no violation detected",
    )
    ax_b.errorbar(
        bad["theta"],
        bad["C (MC)"],
        yerr=figures.half_width(bad["s.e."]),
        fmt="o",
        mfc="white",
        color="C3",
        label="MC, bound violated",
    )
    ax_b.plot(fine, fo_sin, color="C0", lw=1, label=r"first order $\kappa(\sigma^2+\Delta)/n$")
    ax_b.plot(fine, np.maximum(bound_sin, floor_b), color="C3", lw=1.2, ls="--", label="printed bound")
    ax_b.plot([90], [floor_b], marker="v", color="C3", ls="none", markersize=5)
    ax_b.annotate(
        "bound = 0",
        (90, floor_b),
        xytext=(-8, 0),
        textcoords="offset points",
        ha="right",
        va="center",
        fontsize=7,
        color="C3",
    )
    if np.isfinite(theta_star):
        ax_b.axvline(theta_star, color="grey", lw=0.6, ls=":")
    ax_b.set(
        yscale="log",
        xlabel=r"principal angle $\theta$ (deg)",
        ylabel=r"$C_{12}(x)$",
        xticks=[0, 30, 60, 90],
        ylim=(floor_b * 0.8, 2.0),
        title=rf"(b) smooth $m$ ($L={L_smooth:.3g}$)",
    )
    ax_b.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    grid = np.linspace(0, 90, 91)
    n_fig = max(sizes["closed_n"])
    lowest = np.inf
    for i, (h, ls, mk) in enumerate(zip(sizes["closed_h"], ("-", "--", ":", "-."), ("o", "s", "^", "D"))):
        ax_c.plot(grid, covariance.covariance_factor(np.radians(grid), h), color=f"C{i}", lw=1, ls=ls)
        sel = closed_table[(closed_table["n"] == n_fig) & (closed_table["h"] == h)]
        ax_c.errorbar(
            sel["phi"],
            sel["nC/sigma^2 (MC)"],
            yerr=figures.half_width(sel["s.e."]),
            fmt=mk,
            color=f"C{i}",
            markersize=3,
            label=rf"$h={h}$",
        )
        lowest = min(lowest, float((sel["nC/sigma^2 (MC)"] - 2 * sel["s.e."]).min()))
    # The printed bound is 0 here, which a log axis cannot show: a mark on the bottom edge at each angle, and words.
    ax_c.plot(
        sizes["closed_phi"],
        np.full(len(sizes["closed_phi"]), 0.035),
        marker="v",
        ls="none",
        color="k",
        markersize=5,
        transform=ax_c.get_xaxis_transform(),
    )
    ax_c.text(
        0.5,
        0.08,
        "printed bound = 0\n(off the log axis)",
        transform=ax_c.transAxes,
        ha="center",
        va="bottom",
        fontsize=7,
        color="k",
    )
    ax_c.set(
        yscale="log",
        xlabel=r"angle $\varphi$ (deg)",
        ylabel=r"$nC/\sigma^2$",
        xticks=[0, 30, 60, 90],
        ylim=(min(0.5, lowest) / 3, 12),
        title=rf"(c) 1-D heads, $n={n_fig}$",
    )
    ax_c.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7, ncol=2)
    return figures.save(
        fig,
        "03_covariance_bound",
        figures_dir,
        error_bars=True,
        caption="Compare the measured covariance of the two heads (points) with the printed bound "
        "(red) and with the first-order covariance (blue line): (a) for a constant $m$, where "
        "the bound is 0; (b) for the smooth $m$, against the principal angle; (c) for two "
        "one-dimensional heads, against the closed form for each bandwidth.",
    )


def close(nb, macros_path, results_path):
    """Decide every record of the chapter from the notebook's numbers (the rules above), check the
    sentences of the paper's section that state a direction (:func:`mhanw.infra.verdicts.guard`), write
    the macros (to ``macros_path``) and the raw results (to ``results_path``); returns the
    :class:`mhanw.infra.verdicts.Ledger`.  ``nb``: the executed notebook's variables (a mapping; the
    names its cells define: ``zero``, ``sin13``, ``pooled``, ``steps``, ...)."""
    from .. import data
    from ..infra.notebook import Namespace
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs
    from ..infra.verdicts import Ledger, guard, verdict_macros

    nb = Namespace(nb)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros = Macros("CovBound")
    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes, "parameters": dict(nb.params)}
    ledger = Ledger("03_covariance_bound")
    rec_zero = ledger.add(
        bound_verdict(
            "lemma-4.1/printed-bound/constant-m",
            "The printed bound L^2 ||G||_F^2 / (n h^d_k p_K) holds for a constant m (L = 0, bound 0)",
            nb.zero["C (MC)"],
            nb.zero["s.e."],
            nb.zero["bound"],
            nb.angles,
            premises=sample_premises(nb.regressions["zero"]),
        )
    )
    rec_sin = ledger.add(
        bound_verdict(
            "lemma-4.1/printed-bound/smooth-m",
            f"The printed bound holds for the smooth m = {nb.sin13_m.name} (L = {nb.L_smooth:.3g})",
            nb.sin13["C (MC)"],
            nb.sin13["s.e."],
            nb.sin13["bound"],
            nb.angles,
            premises=bound_premises(nb.sin13_m),
        )
    )
    rec_orth = ledger.add(orthogonal_verdict(nb.rho90, nb.rho90_se, premises=sample_premises(nb.regressions["zero"])))
    rec_first = ledger.add(first_order_verdict(nb.pooled, nb.dev_rel, nb.dev_se, premises=sample_premises(nb.sin13_m)))
    rec_closed = ledger.add(
        closed_form_verdict(
            *nb.closed_pooled,
            max(nb.sizes["closed_n"]),
            float(nb.by_n["max_rel_dev"].iloc[-1]),
            float(nb.by_n["max_abs_z"].iloc[-1]),
        )
    )
    rec_falls = {
        name: ledger.add(
            falls_with_angle_verdict(
                st["steps"],
                st["steps_se"],
                st["drop"],
                st["drop_se"],
                {"zero": "constant-m", "smooth": "smooth-m"}[name],
            )
        )
        for name, st in nb.steps.items()
    }
    rec_kappa = ledger.add(derivation_verdict(nb.kappa_rel, nb.matches_closed))
    fo_smooth_rises = nb.sin13["first order"].iloc[-1] > nb.sin13["first order"].min()
    results["claims"] = ledger.to_list()

    # Sentences of the section that state a direction, checked here.
    guard(
        bool(np.all(nb.zero["C (MC)"] > 3 * nb.zero["s.e."])),
        "the covariance is positive at every angle for constant m",
        f"z = C/s.e. from {nb.zero_z.min():.1f} to {nb.zero_z.max():.1f}",
    )
    guard(
        bool(abs(nb.rho90 - 1 / nb.kappa_self) <= 3 * nb.rho90_se)
        or not data.data_model("zero", nb.inputs, nb.noise).is_reference,
        "the correlation of orthogonal heads is about 1/kappa_jj",
        f"{nb.rho90:.3f} ± {nb.rho90_se:.3f} against {1 / nb.kappa_self:.3f}",
    )
    if not rec_sin.outside and nb.first_fail is not None:
        after = nb.sin13[nb.sin13["theta"] >= nb.first_fail]
        guard(
            bool(after["violated"].all()),
            f"the bound is exceeded at every angle from {nb.first_fail} degrees on",
            f"violated at {nb.fails.tolist()} degrees",
        )
    if rec_falls["smooth"].fails:
        guard(
            bool(fo_smooth_rises),
            "the first-order covariance of the smooth m grows again near orthogonality",
            f"first-order covariance at {nb.angles.tolist()} degrees: {np.round(nb.sin13['first order'].to_numpy(), 6).tolist()}",
        )

    for rec, name in [
        (rec_zero, "Zero"),
        (rec_sin, "SinBound"),
        (rec_orth, "Orthogonal"),
        (rec_first, "FirstOrder"),
        (rec_closed, "Closed"),
        (rec_falls["zero"], "FallsZero"),
        (rec_falls["smooth"], "FallsSin"),
        (rec_kappa, "Derivation"),
    ]:
        verdict_macros(macros, name, rec)  # Verdict<name> and Is<name>, the predicate the text uses
    i90 = len(nb.angles) - 1
    macros.integer("NRep", nb.sizes["n_rep_pair"])
    macros.integer("NRepClosed", nb.sizes["n_rep_closed"])
    macros.mean_se("ZeroCovZero", nb.zero["C (MC)"].iloc[0], nb.zero["s.e."].iloc[0])
    macros.mean_se("ZeroCovNinety", nb.zero["C (MC)"].iloc[i90], nb.zero["s.e."].iloc[i90])
    macros.number("ZeroZMin", nb.zero_z.min(), 2)
    macros.number("ZeroZMax", nb.zero_z.max(), 2)
    macros.number("ZeroFirstOrderNinety", nb.zero["first order"].iloc[i90], 3)
    macros.mean_se("SinCovZero", nb.sin13["C (MC)"].iloc[0], nb.sin13["s.e."].iloc[0])
    macros.number("SinBoundZero", nb.sin13["bound"].iloc[0], 2)
    macros.number("SinLooseness", nb.sin13["bound"].iloc[0] / nb.sin13["C (MC)"].iloc[0], 2)
    macros.mean_se("SinCovNinety", nb.sin13["C (MC)"].iloc[i90], nb.sin13["s.e."].iloc[i90])
    macros.number("SinBoundNinety", nb.sin13["bound"].iloc[i90], 2)
    macros.number("SinZNinety", nb.z90, 2)
    macros.integer("SinLastHold", nb.last_hold if nb.last_hold is not None else 0)
    macros.integer("SinFirstFail", nb.first_fail if nb.first_fail is not None else 0)
    macros.number("SinLipschitz", nb.L_smooth, 3)
    if np.isfinite(nb.theta_star):
        macros.number("ThetaStar", nb.theta_star, 3)
    macros.number("FirstOrderMaxDevSE", nb.dev_se, 2)
    macros.number("FirstOrderMaxDevPct", 100 * nb.dev_rel, 2)
    macros.mean_se("FirstOrderPooledZero", 100 * nb.pooled["zero"][0], 100 * nb.pooled["zero"][1])
    macros.mean_se("FirstOrderPooledSin", 100 * nb.pooled["smooth"][0], 100 * nb.pooled["smooth"][1])
    macros.number("FirstOrderTol", 100 * FIRST_ORDER_REL_TOL, 2)
    macros.number("RhoNinety", nb.rho90, 2)
    macros.mean_se("RhoNinetySE", nb.rho90, nb.rho90_se)
    macros.number("NearZeroRho", NEAR_ZERO_CORRELATION, 2)
    macros.number("InvKappaSelf", 1 / nb.kappa_self, 2)
    macros.number("KappaSelf", nb.kappa_self, 3)
    for name, key in (("Zero", "zero"), ("Sin", "smooth")):
        st = nb.steps[key]
        macros.mean_se(f"Drop{name}", st["drop"], st["drop_se"])
        macros.number(f"Drop{name}Z", st["drop"] / st["drop_se"], 2)
        macros.integer(f"StepsFall{name}", int(np.sum(st["steps"] > 3 * st["steps_se"])))
        macros.integer(f"StepsRise{name}", int(np.sum(st["steps"] < -3 * st["steps_se"])))
    macros.integer("Steps", len(nb.angles) - 1)
    macros.text("ClosedN", ", ".join(str(v) for v in nb.sizes["closed_n"]))
    macros.text("ClosedH", ", ".join(str(v) for v in nb.sizes["closed_h"]))
    macros.integer("ClosedNPhi", len(nb.sizes["closed_phi"]))
    macros.number("ClosedMaxZ", float(nb.by_n["max_abs_z"].max()), 2)
    macros.number("ClosedMaxRelDev", 100 * float(nb.by_n["max_rel_dev"].max()), 2)
    macros.number("ClosedMaxZLargestN", float(nb.by_n["max_abs_z"].iloc[-1]), 2)
    macros.number("ClosedMaxRelDevLargestN", 100 * float(nb.by_n["max_rel_dev"].iloc[-1]), 2)
    macros.mean_se("ClosedPooled", 100 * nb.closed_pooled[0], 100 * nb.closed_pooled[1])
    macros.number("ClosedTol", 100 * CLOSED_FORM_REL_TOL, 2)
    macros.integer("ClosedLargestN", max(nb.sizes["closed_n"]))
    macros.expr("KappaFreeS", nb.overlap_free_s.kappa)
    macros.number("KappaRelDiff", max(nb.kappa_rel, 1e-17), 1)

    results.update(
        x=nb.x,
        angles_deg=nb.angles,
        bound_table=nb.bound_table.to_dict(orient="list"),
        measured=nb.measured.to_dict(orient="list"),
        theta_star_deg=nb.theta_star,
        closed_form=nb.closed_table.to_dict(orient="list"),
        pooled_first_order=nb.pooled,
        closed_pooled=nb.closed_pooled,
        correlation_ninety=(nb.rho90, nb.rho90_se),
        steps=nb.steps,
        kappa_symbolic=str(nb.overlap.kappa),
        kappa_symbolic_free_s=str(nb.overlap_free_s.kappa),
    )
    macros.write(macros_path, argument="macros_path")
    save_results(results_path, json_safe(results), argument="results_path")
    return ledger
