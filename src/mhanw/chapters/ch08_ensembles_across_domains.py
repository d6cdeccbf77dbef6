"""Chapter 08: the random-forest analogy -- Breiman's identity, the HDI against 1 - rho_bar, the closed-form correlation.

The chapter's computations are :mod:`mhanw.decomposition` (Breiman's quantities,
the jackknife), :mod:`mhanw.montecarlo` and :mod:`mhanw.covariance` (the
first-order correlation of two one-dimensional heads).  This module holds the
chapter's verdict rules, with their thresholds as named constants, and the
declaration of its papermill parameters.
"""

from __future__ import annotations

import numpy as np

from ..constants import N_SE
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.verdicts import (FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED, Statistic, Verdict, checked,
                              no_violation, significant_effect)
from ..infra.validate import brief

__all__ = ["figure", "figure_caption", "CLOSED_FORM_TOLERANCE", "CONSTRAINTS", "IDENTITY_RTOL", "PARAMETERS", "SIGNIFICANCE", "ant_colony_verdict",
           "closed_form_verdict", "hdi_verdict", "identity_verdict", "monotone_verdict", "small_bandwidth_verdict"]

#: A Monte Carlo effect counts when it exceeds this many standard errors (:data:`mhanw.constants.N_SE`).
SIGNIFICANCE = N_SE

#: Breiman's identity is algebra: with empirical moments it must hold to rounding.  1e-12
#: relative leaves room for the float64 rounding of sums of 10^5 terms (about 1e-16 each).
IDENTITY_RTOL = 1e-12

#: The deviation of the Monte Carlo correlation from the first-order closed form that would
#: matter: 0.05 in correlation units, a sixteenth of the 0.8 by which rho moves with the
#: bandwidth (the effect the closed form is used to explain).  No allowance is added to the
#: standard errors: the check is :func:`mhanw.infra.verdicts.no_violation` at 3 s.e.
CLOSED_FORM_TOLERANCE = 0.05

SECTION = "sec:rf"


@checked(relative_error=V.nonnegative)
def identity_verdict(relative_error: float) -> Verdict:
    """Breiman's identity ``Var(avg) = Vbar (rho_bar + (1 - rho_bar)/H)`` with empirical moments:
    "holds" when the largest relative error is at most :data:`IDENTITY_RTOL` (exact algebra)."""
    err = V.nonnegative(relative_error, "relative_error")
    return Verdict(claim="rf/breiman-identity",
                   statement="Breiman's identity Var(average) = Vbar (rho_bar + (1 - rho_bar)/H) holds for any heads, with rho_bar a ratio of means",
                   verdict=HOLDS if err <= IDENTITY_RTOL else FAILS,
                   criterion=f"largest relative error over every setting at most {IDENTITY_RTOL:g} (algebra; rounding only)",
                   statistics=(Statistic("largest relative error", err),), section=SECTION)


#: ``{label: (value, s.e.)}``, possibly empty.
_estimates = V.mapping_of(V.estimate, allow_empty=True)


@checked(orthogonal=_estimates, steps=_estimates, n_se=V.nonnegative)
def hdi_verdict(orthogonal: dict, steps: dict, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """"The HDI is 1 - rho_bar": "fails as stated" when some counterexample is significant.

    ``orthogonal``: ``{label: (1 - rho_bar, se)}`` for heads whose HDI_PA is 1 (a value below 1
    by more than ``n_se`` s.e. is a counterexample); ``steps``: ``{label: (step, se)}``, changes
    of rho_bar with the bandwidth at a fixed geometry (a nonzero step beyond ``n_se`` s.e. is a
    counterexample: the HDI did not change).  Agreement is never concluded from the absence of
    counterexamples: otherwise "undecided at this size".
    """
    if not orthogonal and not steps:
        raise ValueError("orthogonal: expected at least one statistic")
    stats, counter = [], False
    for label, value in orthogonal.items():
        v, se = V.estimate(value, f"orthogonal[{label!r}]")
        stats.append(Statistic(f"1 - rho_bar at HDI_PA = 1, {label}", v, se))
        counter |= significant_effect(1.0 - v, se, sign=1, n_se=n_se) == HOLDS
    for label, value in steps.items():
        v, se = V.estimate(value, f"steps[{label!r}]")
        stats.append(Statistic(f"change of rho_bar with h at a fixed angle, {label}", v, se))
        counter |= abs(v) > n_se * se
    return Verdict(claim="rf/hdi-is-one-minus-rho",
                   statement="The HDI is Breiman's 1 - rho_bar of attention heads",
                   verdict=FAILS if counter else UNDECIDED,
                   criterion=(f"a counterexample beyond {n_se:g} standard errors: orthogonal heads (HDI_PA = 1) with "
                              "1 - rho_bar < 1, or rho_bar changing with the bandwidth at a fixed geometry"),
                   statistics=tuple(stats), section=SECTION)


@checked(deviations=V.labelled_estimates, checkable=V.flag, reason=V.note, tolerance=V.nonnegative,
         n_se=V.nonnegative)
def closed_form_verdict(deviations, *, checkable: bool = True, reason: str = "",
                        tolerance: float = CLOSED_FORM_TOLERANCE, n_se: float = SIGNIFICANCE) -> Verdict:
    """The first-order closed form of the correlation of two one-dimensional heads against Monte Carlo.

    ``deviations``: ``[(label, rho_mc - rho_closed, se), ...]``.  Each point is judged by
    :func:`mhanw.infra.verdicts.no_violation` with ``tolerance`` (:data:`CLOSED_FORM_TOLERANCE`)
    at ``n_se`` s.e.; "fails as stated" if one point fails, "holds" if all hold, else "undecided
    at this size".  ``checkable=False`` (the closed form assumes Gaussian inputs and noise):
    "not checkable" with ``reason``.
    """
    statement = "The first-order closed form rho(phi, h) gives the error correlation of two one-dimensional Gaussian heads"
    if not checkable:
        return Verdict(claim="rf/closed-form-correlation", statement=statement, verdict=NOT_CHECKABLE,
                       criterion=f"not compared: {reason}", section=SECTION)
    rows = V.labelled_estimates(deviations, "deviations")
    outcomes = [no_violation(d, s, tolerance, n_se=n_se) for _, d, s in rows]
    verdicts = [v for v, _ in outcomes]
    verdict = V.combine(verdicts)
    worst = max(range(len(rows)), key=lambda i: abs(rows[i][1]))
    label, d, s = rows[worst]
    detectable = max(det for _, det in outcomes) if verdict == HOLDS else None
    return Verdict(claim="rf/closed-form-correlation", statement=statement, verdict=verdict,
                   criterion=(f"every Monte Carlo deviation within {tolerance:g} (correlation units) with its "
                              f"{n_se:g}-s.e. interval, no allowance on top; largest deviation at {label}"),
                   statistics=(Statistic(f"largest deviation rho_mc - rho_closed ({label})", d, s),)
                   + ((Statistic("its z", d / s),) if s > 0 else ())  # no z-score for an exact (zero s.e.) deviation
                   + tuple(Statistic("largest |z| over all points", z) for z in
                           [max((abs(dd / ss) for _, dd, ss in rows if ss > 0), default=None)] if z is not None),
                   detectable=detectable, section=SECTION)


@checked(gaps=V.estimate_map, small=V.numbers_or_none, large=V.numbers_or_none, angle=V.number, n_se=V.nonnegative)
def small_bandwidth_verdict(gaps: dict, small, large, angle: float, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """"At a small angle, 1 - rho_bar rises faster than HDI_PA for small bandwidths (and more slowly for large ones)".

    ``gaps``: ``{h: ((1 - rho_bar) - HDI_PA, se)}`` at the angle ``angle``; ``small``/``large``:
    the bandwidths expected above/below.  "holds" when each gap has its expected sign by more
    than ``n_se`` s.e., "fails as stated" when one has the opposite sign by more than ``n_se``
    s.e., else "undecided at this size".
    """
    outcomes = []
    stats = []
    small, large = (np.atleast_1d(np.asarray(v, dtype=float)).tolist() for v in (small, large))
    for h, (v, se) in V.estimate_map(gaps, "gaps").items():
        V.number(h, f"gaps: the bandwidth {h!r}")
        if h in small or h in large:
            outcomes.append(significant_effect(v, se, sign=1 if h in small else -1, n_se=n_se))
        stats.append(Statistic(f"(1 - rho_bar) - HDI_PA at {angle:g} deg, h = {h:g}", v, se))
    if not outcomes:
        raise ValueError("small: expected bandwidths among those of gaps")
    verdict = V.combine(outcomes)
    return Verdict(claim="rf/faster-than-hdi-small-bandwidth",
                   statement=(f"At {angle:g} deg, 1 - rho_bar exceeds HDI_PA for h in {sorted(small)} and falls below it "
                              f"for h in {sorted(large)}"),
                   verdict=verdict,
                   criterion=f"each difference with its expected sign beyond {n_se:g} jackknife standard errors",
                   statistics=tuple(stats), section=SECTION)


def _increases(pair, name: str) -> tuple:
    """``(increases, se)``: two arrays of one shape, finite increases and finite standard errors."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"{name}: expected a pair (increases, se), got {brief(pair)}")
    v, se = V.numbers(pair[0], f"{name}[0]"), V.standard_errors(pair[1], f"{name}[1]")
    if se.shape != v.shape:
        raise ValueError(f"{name}[1]: expected the shape of the increases {v.shape}, got {se.shape}")
    return v, se


@checked(steps=V.mapping_of(_increases), n_se=V.nonnegative)
def monotone_verdict(steps: dict, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """"Within one family at fixed (h, n, p_X, m, sigma), 1 - rho_bar increases with the HDI".

    ``steps``: ``{h: (increases, se)}``, arrays of the paired increases of 1 - rho_bar between
    consecutive angles.  "holds under the stated conditions" when every increase exceeds
    ``n_se`` s.e.; "fails as stated" when one is negative beyond ``n_se`` s.e.; else
    "undecided at this size".
    """
    inc, neg, n_steps, zs = True, False, 0, []
    for h, (v, se) in V.mapping_of(_increases)(steps, "steps").items():
        zs += [float(a / b) for a, b in zip(v.ravel(), se.ravel()) if b > 0]
        inc &= bool(np.all(v > n_se * se))
        neg |= bool(np.any(-v > n_se * se))
        n_steps += v.size
    if not n_steps:
        raise ValueError("steps: expected at least one step")
    verdict = FAILS if neg else (HOLDS_UNDER if inc else UNDECIDED)

    return Verdict(claim="rf/monotone-within-family",
                   statement="Along the star family, at a fixed bandwidth, 1 - rho_bar increases with HDI_PA",
                   verdict=verdict,
                   conditions="one family of heads at fixed (h, n, p_X, m, sigma); the curve depends on all of them" if verdict == HOLDS_UNDER else "",
                   criterion=f"every step between consecutive angles an increase beyond {n_se:g} paired standard errors",
                   statistics=((Statistic("smallest step / s.e.", min(zs)),) if zs else ())
                   + (Statistic("steps", n_steps),), section=SECTION)


@checked()
def ant_colony_verdict() -> Verdict:
    """The ant-colony part of the analogy: "not checkable" (no quantity to compute)."""
    return Verdict(claim="rf/ant-colonies",
                   statement="Ant colonies share the decorrelation-variance-reduction principle of attention heads",
                   verdict=NOT_CHECKABLE,
                   criterion=("the summaries name no quantity of an ant colony (no members' estimates, no error, "
                              "no correlation) that could be computed and compared"),
                   section=SECTION)


#: The papermill parameters of notebook 08 (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "n_jobs": P.workers(),
    "regression": P.regression(dimension=10),
    "inputs": P.inputs(dimension=10),
    "noise": P.noise(dimension=10),
    "sigma": P.noise_level(),
    "n": P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidths": P.sequence(P.bandwidth(), min_length=2),
    "angles_deg": P.sequence(P.real(0.0, 90.0), min_length=3),
}

#: Constraints: the star family runs from identical (0 deg) to orthogonal (90 deg) heads, in order.
CONSTRAINTS = (
    P.require("angles_deg", lambda p: p["angles_deg"][0] == 0 and p["angles_deg"][-1] == 90
              and list(p["angles_deg"]) == sorted(set(p["angles_deg"])), "angles_deg increasing from 0 to 90"),
    P.require("bandwidths", lambda p: list(p["bandwidths"]) == sorted(set(p["bandwidths"])), "bandwidths increasing"),
)


# --------------------------------------------------------------------------- the key figure


def figure(hdi, one_minus_rho: dict, star_h, phis_deg, pair_h, rho_mc, rho_se):
    """The chapter's key figure.  (a) ``1 - rho_bar`` of the star family against its exact ``HDI_PA``
    (``hdi``, one per angle), one line per bandwidth ``h`` of ``star_h`` (``one_minus_rho[h]`` = (values,
    s.e.) per angle), against the diagonal where the two would agree; (b) the error correlation of two
    one-dimensional heads at the angles ``phis_deg`` against the bandwidths ``pair_h``: the closed form of
    :func:`mhanw.covariance.head_correlation` (lines) and Monte Carlo ``rho_mc`` ± 2 ``rho_se`` (points),
    both ``(len(phis_deg), len(pair_h))``.  Returns the figure."""
    from .. import covariance
    from ..infra import figures

    fig, (ax_a, ax_b) = figures.panels(2, height=figures.ROW_HEIGHT + 0.2)
    ax_a.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8, label=r"$1-\bar\rho=\mathrm{HDI}_{\rm PA}$")
    for i, h in enumerate(star_h):
        value, se = one_minus_rho[h]
        figures.errorbar(ax_a, hdi, value, se, label=f"$h={h:g}$", color=f"C{i}", ms=3.5,
                         marker="os^Dv<>p"[i % 8], linestyle=["-", "--", "-.", ":"][i % 4])  # distinct in greyscale
    ax_a.set(xlabel=r"$\mathrm{HDI}_{\rm PA}=1-\cos^4\theta$ (star family, $H=4$, $d_k=2$)",
             ylabel=r"$1-\bar\rho$ (Breiman)", xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), title=r"(a) $1-\bar\rho$ vs HDI")
    ax_a.legend(loc="lower right", ncol=2, columnspacing=0.8)
    grid = np.geomspace(0.03, 1.5, 200)
    for i, p in enumerate(phis_deg):
        ax_b.plot(grid, covariance.head_correlation(np.radians(p), grid), color=f"C{i + 4}", lw=1,
                  label=rf"closed form, $\varphi={p}^\circ$")
        figures.errorbar(ax_b, pair_h, rho_mc[i], rho_se[i], color=f"C{i + 4}", linestyle="none",
                         ms=3, marker="os"[i % 2], label=rf"Monte Carlo, $\varphi={p}^\circ$")
    ax_b.set(xscale="log", xlabel=r"bandwidth $h$", ylabel=r"error correlation $\rho$ of two 1-D heads", ylim=(0, 1),
             title=r"(b) same angle, different $h$")
    ax_b.legend(loc="upper left")
    return fig


def figure_caption(rec_hdi: Verdict, orth_below_one: bool, rho_grows_with_h: bool, phi_deg: float) -> str:
    """The key figure's caption: how to read it, then what it shows, from the numbers' own tests
    (``orth_below_one``: ``1 - rho_bar`` below 1 by more than 3 s.e. at ``HDI_PA = 1`` for every ``h``;
    ``rho_grows_with_h``: the two heads' correlation at ``phi_deg`` rises with ``h`` by more than 3 paired
    s.e. at every step) and the record ``rec_hdi`` of "the HDI is the 1 - rho_bar of attention"."""
    if not isinstance(rec_hdi, Verdict):
        raise ValueError(f"rec_hdi: expected the record of hdi_verdict, got {type(rec_hdi).__name__}")
    orth = ("lies below 1 by more than 3 s.e. for every $h$" if orth_below_one
            else "is not below 1 by 3 s.e. for every $h$")
    band = (f"rises with $h$ at every step by more than 3 paired s.e. at $\\varphi={phi_deg:g}^\\circ$" if rho_grows_with_h
            else f"does not rise with $h$ by 3 paired s.e. at every step at $\\varphi={phi_deg:g}^\\circ$")
    return ("(a) Breiman's $1-\\bar\\rho$ of the star family against its exact $\\mathrm{HDI_{PA}}$, one line per "
            "bandwidth $h$; on the dashed diagonal the two would agree. At $\\mathrm{HDI_{PA}}=1$ (orthogonal heads) "
            f"$1-\\bar\\rho$ {orth}. (b) The error correlation $\\rho$ of two one-dimensional heads against the "
            f"bandwidth, closed form (lines) and Monte Carlo (points): with the geometry fixed, $\\rho$ {band}. "
            f"The record of the claim that the HDI is the $1-\\bar\\rho$ of attention reads: {rec_hdi.verdict}.")
