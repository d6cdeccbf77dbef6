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
from ..infra.notebook import notebook_helper
from ..infra.validate import brief
from ..infra.verdicts import (
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    NOT_CHECKABLE,
    UNDECIDED,
    Statistic,
    Verdict,
    checked,
    no_violation,
    significant_effect,
)

__all__ = [
    "figure",
    "figure_caption",
    "CLOSED_FORM_TOLERANCE",
    "CONSTRAINTS",
    "IDENTITY_RTOL",
    "PARAMETERS",
    "SIGNIFICANCE",
    "ant_colony_verdict",
    "closed_form_premises",
    "closed_form_verdict",
    "hdi_verdict",
    "identity_verdict",
    "monotone_verdict",
    "small_bandwidth_verdict",
]

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
    return Verdict(
        claim="rf/breiman-identity",
        statement="Breiman's identity Var(average) = Vbar (rho_bar + (1 - rho_bar)/H) holds for any heads, with rho_bar a ratio of means",
        verdict=HOLDS if err <= IDENTITY_RTOL else FAILS,
        criterion=f"largest relative error over every setting at most {IDENTITY_RTOL:g} (algebra; rounding only)",
        statistics=(Statistic("largest relative error", err),),
        section=SECTION,
    )


#: ``{label: (value, s.e.)}``, possibly empty.
_estimates = V.mapping_of(V.estimate, allow_empty=True)


@checked(orthogonal=_estimates, steps=_estimates, n_se=V.nonnegative)
def hdi_verdict(orthogonal: dict, steps: dict, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """ "The HDI is 1 - rho_bar": "fails as stated" when some counterexample is significant.

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
    return Verdict(
        claim="rf/hdi-is-one-minus-rho",
        statement="The HDI is Breiman's 1 - rho_bar of attention heads",
        verdict=FAILS if counter else UNDECIDED,
        criterion=(
            f"a counterexample beyond {n_se:g} standard errors: orthogonal heads (HDI_PA = 1) with "
            "1 - rho_bar < 1, or rho_bar changing with the bandwidth at a fixed geometry"
        ),
        statistics=tuple(stats),
        section=SECTION,
    )


@checked(deviations=V.labelled_estimates, tolerance=V.nonnegative, n_se=V.nonnegative, premises=V.premise_list)
def closed_form_verdict(
    deviations, *, tolerance: float = CLOSED_FORM_TOLERANCE, n_se: float = SIGNIFICANCE, premises=()
) -> Verdict:
    """The first-order closed form of the correlation of two one-dimensional heads against Monte Carlo.

    ``deviations``: ``[(label, rho_mc - rho_closed, se), ...]``.  Each point is judged by
    :func:`mhanw.infra.verdicts.no_violation` with ``tolerance`` (:data:`CLOSED_FORM_TOLERANCE`)
    at ``n_se`` s.e.; "fails as stated" if one point fails, "holds" if all hold, else "undecided
    at this size".  ``premises``: what the closed form rests on (:func:`closed_form_premises`); when one
    fails the record is "outside its conditions" and still shows the comparison.
    """
    statement = (
        "The first-order closed form rho(phi, h) gives the error correlation of two one-dimensional Gaussian heads"
    )
    rows = V.labelled_estimates(deviations, "deviations")
    outcomes = [no_violation(d, s, tolerance, n_se=n_se) for _, d, s in rows]
    verdicts = [v for v, _ in outcomes]
    verdict = V.combine(verdicts)
    worst = max(range(len(rows)), key=lambda i: abs(rows[i][1]))
    label, d, s = rows[worst]
    detectable = max(det for _, det in outcomes) if verdict == HOLDS else None
    return Verdict(
        claim="rf/closed-form-correlation",
        statement=statement,
        verdict=verdict,
        criterion=(
            f"every Monte Carlo deviation within {tolerance:g} (correlation units) with its "
            f"{n_se:g}-s.e. interval, no allowance on top; largest deviation at {label}"
        ),
        statistics=(Statistic(f"largest deviation rho_mc - rho_closed ({label})", d, s),)
        + ((Statistic("its z", d / s),) if s > 0 else ())  # no z-score for an exact (zero s.e.) deviation
        + tuple(
            Statistic("largest |z| over all points", z)
            for z in [max((abs(dd / ss) for _, dd, ss in rows if ss > 0), default=None)]
            if z is not None
        ),
        detectable=detectable,
        premises=premises,
        section=SECTION,
    )


def closed_form_premises(model) -> tuple:
    """The premises of the closed form of :func:`mhanw.covariance.head_correlation` for the data model
    ``model`` of the two-head check: Gaussian inputs (its Gaussian integrals) and a noise variance that
    does not depend on ``x`` (to first order the noise enters only through it)."""
    from .. import premises

    return premises.gaussian_inputs(model), premises.homoscedastic_noise(model)


@checked(gaps=V.estimate_map, small=V.numbers_or_none, large=V.numbers_or_none, angle=V.number, n_se=V.nonnegative)
def small_bandwidth_verdict(gaps: dict, small, large, angle: float, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """ "At a small angle, 1 - rho_bar rises faster than HDI_PA for small bandwidths (and more slowly for large ones)".

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
    return Verdict(
        claim="rf/faster-than-hdi-small-bandwidth",
        statement=(
            f"At {angle:g} deg, 1 - rho_bar exceeds HDI_PA for h in {sorted(small)} and falls below it "
            f"for h in {sorted(large)}"
        ),
        verdict=verdict,
        criterion=f"each difference with its expected sign beyond {n_se:g} jackknife standard errors",
        statistics=tuple(stats),
        section=SECTION,
    )


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
    """ "Within one family at fixed (h, n, p_X, m, sigma), 1 - rho_bar increases with the HDI".

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

    return Verdict(
        claim="rf/monotone-within-family",
        statement="Along the star family, at a fixed bandwidth, 1 - rho_bar increases with HDI_PA",
        verdict=verdict,
        conditions="one family of heads at fixed (h, n, p_X, m, sigma); the curve depends on all of them"
        if verdict == HOLDS_UNDER
        else "",
        criterion=f"every step between consecutive angles an increase beyond {n_se:g} paired standard errors",
        statistics=((Statistic("smallest step / s.e.", min(zs)),) if zs else ()) + (Statistic("steps", n_steps),),
        section=SECTION,
    )


@checked()
def ant_colony_verdict() -> Verdict:
    """The ant-colony part of the analogy: "not checkable" (no quantity to compute)."""
    return Verdict(
        claim="rf/ant-colonies",
        statement="Ant colonies share the decorrelation-variance-reduction principle of attention heads",
        verdict=NOT_CHECKABLE,
        criterion=(
            "the summaries name no quantity of an ant colony (no members' estimates, no error, "
            "no correlation) that could be computed and compared"
        ),
        section=SECTION,
    )


#: The letters that name the star family's bandwidths in the paper's macros (``HA``, ``HB``, ...), one
#: per bandwidth not named otherwise: they bound how many bandwidths a run may take.
BANDWIDTH_LETTERS = "ABCDEFGHIJ"

#: The input dimensions of the star family and of the two-head check (the laws ``inputs`` and
#: ``noise`` are drawn from in both).
STAR_D, PAIR_D = 10, 2

#: The papermill parameters of notebook 08 (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "n_jobs": P.workers(),
    "regression": P.regression(dimension=STAR_D),
    "inputs": P.inputs(dimension=(STAR_D, PAIR_D)),  # the star family and the two-head check draw from both
    "noise": P.noise(dimension=(STAR_D, PAIR_D)),
    "sigma": P.noise_level(),
    "n": P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidths": P.sequence(
        P.bandwidth(),
        min_length=2,
        max_length=len(BANDWIDTH_LETTERS),
        why="the paper's macros name each bandwidth by a letter, A to J",
    ),
    "angles_deg": P.sequence(
        P.real(0.0, 90.0),
        min_length=3,
        max_length=19,
        why="every 5 degrees; each angle is one more Monte Carlo run of the star family",
    ),
}

#: Constraints: the star family runs from identical (0 deg) to orthogonal (90 deg) heads, in order.
CONSTRAINTS = (
    P.require(
        "angles_deg",
        lambda p: (
            p["angles_deg"][0] == 0
            and p["angles_deg"][-1] == 90
            and list(p["angles_deg"]) == sorted(set(p["angles_deg"]))
        ),
        "angles_deg increasing from 0 to 90",
    ),
    P.require("bandwidths", lambda p: list(p["bandwidths"]) == sorted(set(p["bandwidths"])), "bandwidths increasing"),
)


#: The Monte Carlo sizes of each fidelity: synthetic draws of part 1, training samples and test points of the
#: star family, training samples of the two-head check, jackknife groups.
SIZES = dict(
    quick=dict(n_draws=200_000, star_rep=60, star_test=200, pair_rep=2000, n_blocks=20),
    paper=dict(n_draws=200_000, star_rep=300, star_test=400, pair_rep=4000, n_blocks=20),
)


def setup(namespace: dict) -> tuple:
    """The start of notebook 08 whose globals are ``namespace``: ``(params, sizes, streams)``, the checked
    parameters (one line naming a bad one), the :data:`SIZES` of its fidelity and five random streams
    (equicorrelated draws, test points, star samples, pair samples, spare); the figure style is set."""
    from ..infra.notebook import start

    return start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 5)


# --------------------------------------------------------------------------- the key figure


@notebook_helper
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
        figures.errorbar(
            ax_a,
            hdi,
            value,
            se,
            label=f"$h={h:g}$",
            color=f"C{i}",
            ms=3.5,
            marker="os^Dv<>p"[i % 8],
            linestyle=["-", "--", "-.", ":"][i % 4],
        )  # distinct in greyscale
    ax_a.set(
        xlabel=r"$\mathrm{HDI}_{\rm PA}=1-\cos^4\theta$ (star family, $H=4$, $d_k=2$)",
        ylabel=r"$1-\bar\rho$ (Breiman)",
        xlim=(-0.03, 1.03),
        ylim=(-0.03, 1.03),
        title=r"(a) $1-\bar\rho$ vs HDI",
    )
    ax_a.legend(loc="lower right", ncol=2, columnspacing=0.8)
    grid = np.geomspace(0.03, 1.5, 200)
    for i, p in enumerate(phis_deg):
        ax_b.plot(
            grid,
            covariance.head_correlation(np.radians(p), grid),
            color=f"C{i + 4}",
            lw=1,
            label=rf"closed form, $\varphi={p}^\circ$",
        )
        figures.errorbar(
            ax_b,
            pair_h,
            rho_mc[i],
            rho_se[i],
            color=f"C{i + 4}",
            linestyle="none",
            ms=3,
            marker="os"[i % 2],
            label=rf"Monte Carlo, $\varphi={p}^\circ$",
        )
    ax_b.set(
        xscale="log",
        xlabel=r"bandwidth $h$",
        ylabel=r"error correlation $\rho$ of two 1-D heads",
        ylim=(0, 1),
        title=r"(b) same angle, different $h$",
    )
    ax_b.legend(loc="upper left")
    return fig


@notebook_helper
def figure_caption(rec_hdi: Verdict, orth_below_one: bool, rho_grows_with_h: bool, phi_deg: float) -> str:
    """The key figure's caption: how to read it, then what it shows, from the numbers' own tests
    (``orth_below_one``: ``1 - rho_bar`` below 1 by more than 3 s.e. at ``HDI_PA = 1`` for every ``h``;
    ``rho_grows_with_h``: the two heads' correlation at ``phi_deg`` rises with ``h`` by more than 3 paired
    s.e. at every step) and the record ``rec_hdi`` of "the HDI is the 1 - rho_bar of attention"."""
    if not isinstance(rec_hdi, Verdict):
        raise ValueError(f"rec_hdi: expected the record of hdi_verdict, got {type(rec_hdi).__name__}")
    orth = (
        "lies below 1 by more than 3 s.e. for every $h$" if orth_below_one else "is not below 1 by 3 s.e. for every $h$"
    )
    band = (
        f"rises with $h$ at every step by more than 3 paired s.e. at $\\varphi={phi_deg:g}^\\circ$"
        if rho_grows_with_h
        else f"does not rise with $h$ by 3 paired s.e. at every step at $\\varphi={phi_deg:g}^\\circ$"
    )
    return (
        "(a) Breiman's $1-\\bar\\rho$ of the star family against its exact $\\mathrm{HDI_{PA}}$, one line per "
        "bandwidth $h$; on the dashed diagonal the two would agree. At $\\mathrm{HDI_{PA}}=1$ (orthogonal heads) "
        f"$1-\\bar\\rho$ {orth}. (b) The error correlation $\\rho$ of two one-dimensional heads against the "
        f"bandwidth, closed form (lines) and Monte Carlo (points): with the geometry fixed, $\\rho$ {band}. "
        f"The record of the claim that the HDI is the $1-\\bar\\rho$ of attention reads: {rec_hdi.verdict}."
    )


@notebook_helper
def decide(nb):
    """Decide every record of the chapter from the notebook's numbers (the rules above); returns the
    :class:`mhanw.infra.verdicts.Ledger`.  ``nb``: the executed notebook's variables (a mapping; the names
    its cells define: ``orth``, ``deviation``, ``star_step_rho``, ...)."""
    from ..infra.notebook import Namespace
    from ..infra.verdicts import Ledger

    nb = Namespace(nb)
    ledger = Ledger("08_ensembles_across_domains")
    ledger.add(identity_verdict(nb.identity_err))
    ledger.add(
        hdi_verdict(
            {f"h = {h:g}": nb.orth[h] for h in nb.star_h},
            {
                **{
                    f"orthogonal star heads, h = {a:g} -> {b:g}": (v, s_)
                    for a, b, v, s_ in zip(nb.star_h, nb.star_h[1:], nb.orth_steps, nb.orth_steps_se)
                },
                **{
                    f"two heads at 45 deg, h = {a:g} -> {b:g}": (v, s_)
                    for a, b, v, s_ in zip(nb.pair_h, nb.pair_h[1:], nb.steps45, nb.steps45_se)
                },
            },
        )
    )
    ledger.add(
        closed_form_verdict(
            [
                (f"phi = {p} deg, h = {h:g}", nb.deviation[i, j], nb.rho_se[i, j])
                for i, p in enumerate(nb.phis_deg)
                for j, h in enumerate(nb.pair_h)
            ],
            premises=closed_form_premises(nb.model_pair),
        )
    )
    small_h = [h for h in nb.star_h if h <= 0.2] or nb.star_h[:1]
    ledger.add(small_bandwidth_verdict(nb.gaps_small_angle, small_h, [nb.star_h[-1]], nb.thetas_deg[1]))
    ledger.add(monotone_verdict({h: nb.star_step_rho[h] for h in nb.star_h}))
    ledger.add(ant_colony_verdict())

    return ledger


@notebook_helper
def write_outputs(nb, ledger, macros_path, results_path) -> None:
    """Write the chapter's macros for the paper (``macros_path``) and its raw results (``results_path``)
    from the records of :func:`decide` (``ledger``) and the notebook's numbers (``nb``, a mapping)."""
    from ..infra.notebook import Namespace
    from ..infra.results import save_results
    from ..infra.texout import Macros, checked_outputs, regression_tex

    nb = Namespace(nb)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros = Macros("RFor")
    rec_identity, rec_hdi, rec_closed, rec_small, rec_monotone, rec_ants = (
        ledger[c]
        for c in (
            "rf/breiman-identity",
            "rf/hdi-is-one-minus-rho",
            "rf/closed-form-correlation",
            "rf/faster-than-hdi-small-bandwidth",
            "rf/monotone-within-family",
            "rf/ant-colonies",
        )
    )
    orth_words = (
        "holds" if all(1 - v > 3 * s_ for v, s_ in nb.orth.values()) else "not significant at 3 s.e. for every h"
    )
    band_words = "holds" if nb.rho_grows_with_h else "not significant at every step"
    band_star_words = "holds" if nb.rho_grows_with_h_star else "not significant at every step"
    macros.number("IdentityErr", max(nb.identity_err, 1e-17), 2)
    macros.integer("NDraws", nb.sizes["n_draws"])
    macros.mean_se("EquiRho", nb.equi_rho, nb.equi_rho_se)
    macros.mean_se("EquiVar", nb.equi_var, nb.equi_var_se)
    macros.number("EquiVarPop", nb.V * (nb.rho + (1 - nb.rho) / nb.H), 3)
    macros.text("Regression", regression_tex(nb.regression))  # the setting of the star family, as run
    macros.integer("N", nb.n)
    macros.text("Sigma", f"{nb.sigma:g}")
    macros.text("Angles", ",".join(f"{a:g}" for a in nb.thetas_deg))
    macros.text("Bandwidths", ",".join(f"{h:g}" for h in nb.star_h))
    macros.text("RefH", f"{nb.ref_h:g}")
    macros.integer("StarRep", nb.sizes["star_rep"])
    macros.integer("StarTest", nb.sizes["star_test"])
    macros.integer("PairRep", nb.sizes["pair_rep"])
    macros.number("GeometryErr", max(nb.geometry_err, 1e-17), 2)
    names = {0.1: "HTenth", 0.2: "HFifth", 0.5: "HHalf", 1.0: "HOne"}  # macro names of the default bandwidths
    for h in nb.star_h:
        key = names.get(h, "H" + BANDWIDTH_LETTERS[nb.star_h.index(h)])
        macros.mean_se(f"OrthGap{key}", *nb.orth[h])
        macros.mean_se(f"SmallAngleGap{key}", nb.one_minus_rho[h][0][1], nb.one_minus_rho[h][1][1])
        macros.number(f"SmallAngleGapZ{key}", nb.gaps_small_angle[h][0] / nb.gaps_small_angle[h][1], 2)
    macros.number("HDISmallAngle", nb.hdi[1], 3)
    macros.text("SmallAngle", f"{nb.thetas_deg[1]:g}")  # the star family's second angle, where the gaps are read
    macros.mean_se(
        "RefVarOrth",
        nb.star[nb.ref_h][0][-1, nb.col["ensemble_variance"]],
        nb.star[nb.ref_h][1][-1, nb.col["ensemble_variance"]],
    )
    macros.mean_se(
        "RefVbarOrth",
        nb.star[nb.ref_h][0][-1, nb.col["mean_variance"]],
        nb.star[nb.ref_h][1][-1, nb.col["mean_variance"]],
    )
    ref_rho, ref_rho_se = nb.star[nb.ref_h][0][-1, nb.col["rho_bar"]], nb.star[nb.ref_h][1][-1, nb.col["rho_bar"]]
    macros.mean_se("RefVarRatio", ref_rho + (1 - ref_rho) / 4, (1 - 1 / 4) * ref_rho_se)  # Var(avg)/Vbar, H = 4
    macros.mean_se("RefMSEOrth", nb.star[nb.ref_h][0][-1, nb.col["mse"]], nb.star[nb.ref_h][1][-1, nb.col["mse"]])
    macros.mean_se("RefMSEIdent", nb.star[nb.ref_h][0][0, nb.col["mse"]], nb.star[nb.ref_h][1][0, nb.col["mse"]])
    macros.integer("MonotoneViolations", sum(nb.monotone_violations.values()))
    macros.number("OrthStepMinSE", float((nb.orth_steps / nb.orth_steps_se).min()), 3)
    for i, p in enumerate(nb.phis_deg):
        tag = ["FortyFive", "Ninety"][i]
        for j, h in enumerate(nb.pair_h):
            htag = ["HTwentieth", "HTenth", "HFifth", "HHalf", "HOne"][j]
            macros.mean_se(f"Rho{tag}{htag}", nb.rho_mc[i, j], nb.rho_se[i, j])
            macros.number(f"RhoClosed{tag}{htag}", nb.rho_closed[i, j], 3)
    macros.number("MaxDevSE", float((np.abs(nb.deviation) / nb.rho_se).max()), 2)
    macros.number("StepMinSE", float((nb.steps45 / nb.steps45_se).min()), 3)
    for key, rec in [
        ("VerdictIdentity", rec_identity),
        ("VerdictHDI", rec_hdi),
        ("VerdictClosedForm", rec_closed),
        ("VerdictSmallH", rec_small),
        ("VerdictMonotone", rec_monotone),
        ("VerdictAnts", rec_ants),
    ]:
        macros.text(key, rec.verdict)
    macros.text("VerdictOrth", orth_words)
    macros.text("VerdictBandwidth", band_words)
    macros.text("VerdictBandwidthStar", band_star_words)
    imax = np.unravel_index(np.argmax(np.abs(nb.deviation)), nb.deviation.shape)
    macros.mean_se("MaxDev", nb.deviation[imax], nb.rho_se[imax])
    macros.number("MaxDevPhi", nb.phis_deg[imax[0]], 2)
    macros.number("MaxDevH", nb.pair_h[imax[1]], 2)
    macros.number("ClosedTolerance", CLOSED_FORM_TOLERANCE, 2)
    macros.number("MonotoneMinZ", rec_monotone.statistics[0].value, 2)

    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes}
    results.update(
        identity={
            "synthetic_rel_err": nb.synthetic_err,
            "star_rel_err": nb.star_identity_err,
            "equicorrelated": {
                "rho_bar": [nb.equi_rho, nb.equi_rho_se],
                "var_avg": [nb.equi_var, nb.equi_var_se],
                "population": nb.V * (nb.rho + (1 - nb.rho) / nb.H),
            },
        },
        star={
            "theta_deg": nb.thetas_deg,
            "geometry": nb.geometry.to_dict(orient="list"),
            "fields": nb.fields,
            "by_h": {str(h): {"value": nb.star[h][0], "se": nb.star[h][1]} for h in nb.star_h},
            "orth_rho_steps": [nb.orth_steps, nb.orth_steps_se],
            "monotone_violations": {str(h): v for h, v in nb.monotone_violations.items()},
        },
        pair={
            "h": nb.pair_h,
            "phi_deg": nb.phis_deg,
            "rho_mc": nb.rho_mc,
            "rho_se": nb.rho_se,
            "rho_closed": nb.rho_closed,
            "steps45": [nb.steps45, nb.steps45_se],
        },
        pair_deviation=nb.deviation,
        setting={"regression": nb.regression, "inputs": nb.inputs, "noise": nb.noise, "sigma": nb.sigma, "n": nb.n},
        claims=ledger.to_list(),
    )

    macros.write(macros_path, argument="macros_path")
    save_results(results_path, results, argument="results_path")
