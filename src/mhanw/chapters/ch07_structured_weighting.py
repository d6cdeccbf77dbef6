"""Chapter 07 (Thm 7.1): structured head weights, exactly in an error model and out of sample on real heads.

The experiment, as steps (:mod:`mhanw.chapters.base`): the exact error model and its crossovers gamma*
(:func:`error_model`), the crossover of the run's own weights derived in sympy (:func:`symbolic`), real
Nadaraya-Watson heads of graded quality (:func:`graded`), the homogeneous control with exchangeable heads
(:func:`control`) and the theorem read from the three (:func:`theorem`).  The weights, the error model, the
crossover and the out-of-sample evaluation (:func:`mhanw.weighting.nested_errors`: the quality order and the
oracle weights fitted on one set of replicates, every weighting scored on an independent one, paired across
weightings) are :mod:`mhanw.weighting`; the heads and the Monte Carlo are :mod:`mhanw.heads` and
:mod:`mhanw.montecarlo`.  Its records are declared in :data:`CLAIMS`; its figures and the sentences after
them are :mod:`mhanw.chapters.ch07_figures`.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import N_SE
from ..infra import params as P
from ..infra.expressions import check_algebraic, exact_number
from ..infra.premises import failure_text
from ..infra.prose import join_list
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import All, Claim, Decided, Effect
from ..infra.texout import regression_tex, tex_text
from ..infra.validate import brief
from ..infra.verdicts import (
    CONTROL,
    DERIVATION,
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    PAPER,
    READING,
    UNDECIDED,
    direction_words,
    guard,
    significant_effect,
)
from ..weighting import GOLDEN_Q, MAX_SYMBOLIC_HEADS, ORACLES, SCHEMES
from .base import Context, step

SECTION = "sec:thm71"

#: How the chapter names a weighting in a sentence.
NAMES = {"uniform": "uniform", "geometric": "geometric", "fibonacci": "Fibonacci"}

# --------------------------------------------------------------------------- the parameters


def _ratio_expression() -> P.Kind:
    """The ratio ``q`` of the geometric weights: a number or a formula of numbers (``"(sqrt(5) - 1)/2"``) in
    (0, 1), read by the one safe parser (:func:`mhanw.infra.expressions.exact_number`: numbers, ``+ - * / **``,
    parentheses, ``sqrt``, ``pi`` and ``E``, sizes bounded before anything is evaluated, and the exact algebra
    it asks of the symbolic crossover bounded: :func:`mhanw.infra.expressions.check_algebraic`).  It lies in
    (0, 1) exactly and as a double (the numerical weights use the double; ``1 - 10**-20`` is 1.0 there)."""

    def check(value, name):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise P.ParameterError(
                f"{name}: expected a number or an expression such as '(sqrt(5) - 1)/2', got {brief(value)}"
            )
        try:
            expr = exact_number(value, name)
        except ValueError as exc:
            raise P.ParameterError(str(exc)) from None
        if not expr.is_number or expr.free_symbols or not _inside_unit_interval(expr):
            raise P.ParameterError(f"{name}: expected a number in the open interval (0, 1), got {brief(value)}")
        if not 0 < float(expr) < 1:
            raise P.ParameterError(
                f"{name}: {brief(value)} lies in (0, 1) but is {float(expr)!r} as a double, the "
                "precision the numerical weights use; expected a number a double tells apart from "
                "0 and 1"
            )
        return value

    def relate(value, name, params):
        # the smallest geometric weight is about q**(H-1): the exact algebra refuses constants beyond
        # 10**-MAX_CONSTANT_LOG10 (q = 1e-50 with H = 8 passed here and stopped the symbolic cell)
        from ..infra.expressions import MAX_CONSTANT_LOG10

        H = params.get("H")
        if isinstance(H, int) and H >= 2:
            size = -math.log10(float(exact_number(value, name))) * (H - 1)
            if size > MAX_CONSTANT_LOG10:
                raise P.ParameterError(
                    f"{name}: q**(H-1) = 10**-{size:.0f} for H = {H}, below the 10**-"
                    f"{MAX_CONSTANT_LOG10:g} the exact weights can hold; expected q >= "
                    f"{10 ** (-MAX_CONSTANT_LOG10 / (H - 1)):.3g}"
                )

    return P.Kind("a number or expression in (0, 1)", check, relate)


def _inside_unit_interval(expr) -> bool:
    """``0 < expr < 1`` for a constant: exactly for a rational, at 30 digits otherwise."""
    import sympy as sp

    if expr.is_Rational:
        return bool(0 < expr < 1)
    value = sp.N(expr, 30)
    return bool(value.is_real and 0 < value < 1)


def _weighting() -> P.Kind:
    """``"geometric"``, ``"fibonacci"`` or a list of non-negative weights summing to 1 (one per head, ``H``)."""
    listed = P.weights(length="H", maximum=1.0)

    def check(value, name):
        if isinstance(value, str):
            return P.choice("geometric", "fibonacci").check(value, name)
        return listed.check(value, name)

    def relate(value, name, params):
        if not isinstance(value, str):
            listed.relate(value, name, params)

    return P.Kind("'geometric', 'fibonacci' or a list of H weights summing to 1", check, relate)


#: The papermill parameters of notebook 07 (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "n_jobs": P.workers(),
    "H": P.positive_int(2, MAX_SYMBOLIC_HEADS, why="the heads of a symbolic weighting"),
    "rho": P.real(0.0, 1.0, open_max=True),
    "q": _ratio_expression(),
    "weights": _weighting(),
    "regression": P.regression(dimension="d"),
    "control_regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "sigma": P.noise_level(),
    "n": P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidth": P.bandwidth(),
    "angles_deg": P.sequence(P.real(0.0, 90.0), min_length=2),
    "d": P.positive_int(2, 1024, why="a model dimension, 128 times the default 8"),
}

#: Constraints: the graded heads use the coordinates e_1 ... e_(H+1), the control e_1 ... e_H.
CONSTRAINTS = (
    P.require("angles_deg", lambda p: len(p["angles_deg"]) + 1 <= p["d"], "len(angles_deg) + 1 <= d"),
    P.require(
        "angles_deg", lambda p: list(p["angles_deg"]) == sorted(p["angles_deg"]), "angles_deg in increasing order"
    ),
)


#: The Monte Carlo sizes of each fidelity: replicates of the graded heads and of the control (each set:
#: fitting and evaluation), fresh test points per replicate.
SIZES = {
    "quick": dict(n_rep=200, n_rep_control=200, n_test=200),
    "paper": dict(n_rep=2000, n_rep_control=1000, n_test=200),
}
#: The random streams: the graded heads' fitting and evaluation replicates, the control's.
STREAMS = ("graded fit", "graded evaluation", "control fit", "control evaluation")

#: The grid of the error model: numbers of heads, error correlations, heterogeneities of the gain table.
H_GRID = (4, 8, 16)
RHO_GRID = (0.0, 0.3, 0.6)
GAMMA_COLUMNS = (1, 2, 3, 5, 10, 20, 50, 100, 300, 1000)
#: The fine grid of rho on which gamma* is checked to fall with rho (and to grow with H).
RHO_FINE = np.linspace(0.0, 0.9, 46)
#: The fixed weightings of the error model: their names in the tables, their keys in the results.
FIXED = {
    "geometric q=0.5": "geometric_q0_5",
    "geometric q=1/phi": "geometric",
    "geometric q=0.8": "geometric_q0_8",
    "Fibonacci": "fibonacci",
}
#: The weightings whose curves gamma*(rho) the figure draws.
CURVES = ("geometric q=1/phi", "Fibonacci")
#: Largest |affine oracle - uniform| at gamma = 1 that counts as rounding (the two are equal there).
ORACLE_GAP_TOL = 1e-12
#: Largest relative difference between sympy's crossover and the numerical scan that counts as equal.
ROOT_MATCH_TOL = 1e-9


def ratio_value(q) -> float:
    """The ratio ``q`` (a number or formula) as a float, the library's :data:`mhanw.weighting.GOLDEN_Q` for 1/phi."""
    import sympy as sp

    expr = _exact_ratio(q)
    return GOLDEN_Q if sp.simplify(expr - (sp.sqrt(5) - 1) / 2) == 0 else float(expr)


def _exact_ratio(q):
    """``q`` as an exact number whose algebra the symbolic crossover can do in seconds
    (:func:`mhanw.infra.expressions.check_algebraic`)."""
    return check_algebraic(exact_number(q, "q"), "q")


def _rho_key(rho: float) -> str:
    return "rho" + f"{rho:g}".replace(".", "_")


def _fixed() -> dict:
    from .. import weighting as Wt

    return {
        "geometric q=0.5": lambda H: Wt.geometric_weights(H, 0.5),
        "geometric q=1/phi": Wt.geometric_weights,
        "geometric q=0.8": lambda H: Wt.geometric_weights(H, 0.8),
        "Fibonacci": Wt.fibonacci_weights,
    }


# --------------------------------------------------------------------------- the steps


def _guard_directions(gamma_star, falls_with_rho: bool, grows_with_H: bool, uniform_wins: bool, gap: float) -> None:
    """Stop when a direction the chapter and the paper state in words is false for the error model
    (:func:`mhanw.infra.verdicts.guard`): gamma* grows with H and falls with rho on the fine grid, every
    crossover exceeds 1, and at gamma = 1 uniform weights are the affine oracle and win."""
    values = np.asarray(gamma_star, dtype=float)
    guard(
        bool(falls_with_rho and grows_with_H),
        "gamma* grows with H and falls with rho on the grid",
        f"falls with rho: {falls_with_rho}, grows with H: {grows_with_H}",
    )
    smallest = float(np.nanmin(values)) if np.isfinite(values).any() else float("nan")
    guard(bool(np.all(values > 1)), "every crossover exceeds 1", f"smallest gamma* = {smallest:.4g}")
    guard(
        bool(uniform_wins and gap <= ORACLE_GAP_TOL),
        "at gamma = 1 uniform weights are the affine oracle and every structured weighting loses",
        f"largest |a* - uniform| = {gap:.3g}, uniform wins: {uniform_wins}",
    )


@step
def error_model(ctx: Context) -> dict:
    """Part 1, exact (no Monte Carlo), on :data:`H_GRID` x :data:`RHO_GRID`: the crossover gamma* of each
    fixed weighting, the checks at gamma = 1 (the affine oracle against uniform weights, every structured
    weighting losing, the loss of geometric weights at H = 16, rho = 0), the curves gamma*(rho) on
    :data:`RHO_FINE` and their directions (guarded: :func:`_guard_directions`), and the gain table
    MSE_unif / MSE_geo."""
    import pandas as pd

    from .. import weighting as Wt

    fixed = _fixed()
    gamma_star = pd.DataFrame(
        {
            name: [Wt.heterogeneity_threshold(H, rho, weights=f(H)) for H in H_GRID for rho in RHO_GRID]
            for name, f in fixed.items()
        },
        index=pd.MultiIndex.from_product([H_GRID, RHO_GRID], names=["H", "rho"]),
    )
    at_one = {}
    for H in H_GRID:
        for rho in RHO_GRID:
            M = Wt.graded_error_matrix(H, 1.0, rho)
            u = Wt.uniform_weights(H)
            at_one[H, rho] = (
                float(np.abs(Wt.affine_oracle_weights(M) - u).max()),
                {name: Wt.mse(f(H), M) / Wt.mse(u, M) for name, f in fixed.items()},
            )
    curves = {
        (H, name): np.array([Wt.heterogeneity_threshold(H, r, weights=fixed[name](H)) for r in RHO_FINE])
        for H in H_GRID
        for name in CURVES
    }

    def gain(H, gamma, rho):
        M = Wt.graded_error_matrix(H, gamma, rho)
        return Wt.mse(Wt.uniform_weights(H), M) / Wt.mse(Wt.geometric_weights(H), M)

    gains = pd.DataFrame(
        [[gain(H, k, rho) for k in GAMMA_COLUMNS] for H in H_GRID for rho in RHO_GRID],
        index=[f"H={H}, ρ={rho:g}" for H in H_GRID for rho in RHO_GRID],
        columns=list(GAMMA_COLUMNS),
    )
    gap = max(v[0] for v in at_one.values())
    uniform_wins = all(min(v[1].values()) > 1 for v in at_one.values())
    falls = all(bool(np.all(np.diff(c) <= 0)) for c in curves.values())
    grows = all(bool(np.all(np.diff([curves[H, name] for H in H_GRID], axis=0) > 0)) for name in CURVES)
    _guard_directions(gamma_star.values, falls, grows, uniform_wins, gap)
    return {
        "gamma_star": {
            f"H{H}": {
                _rho_key(rho): {key: Q(gamma_star.loc[(H, rho), name], digits=3) for name, key in FIXED.items()}
                for rho in RHO_GRID
            }
            for H in H_GRID
        },
        "gamma_star_min": Q(float(np.nanmin(gamma_star.values)), digits=3, label="smallest gamma* on the grid"),
        "oracle_gap_at_one": Q(max(gap, 1e-17), digits=2, label="largest |affine oracle - uniform| at gamma = 1"),
        "uniform_wins_at_one": uniform_wins,
        "loss_at_one_H16": Q(at_one[16, 0.0][1]["geometric q=1/phi"], digits=3),
        "gain_max": Q(float(gains.values.max()), digits=3),
        "falls_with_rho": falls,
        "grows_with_H": grows,
        "curves": {"rho": RHO_FINE, **{f"H{H}": {FIXED[n]: curves[H, n] for n in CURVES} for H in H_GRID}},
        "gains": {"gamma": list(GAMMA_COLUMNS), "rows": list(gains.index), "values": gains.values},
        "data": Raw({"gamma_star": gamma_star, "gains": gains, "curves": curves}),
    }


@step
def symbolic(ctx: Context, error_model) -> dict:
    """Part 1, derived by sympy: the crossover for ``H = 2`` in closed form (any ``q``, the ``rho = 0``
    branch), and for the run's ``H``, ``rho``, ``q`` and ``weights`` the polynomial ``a'Ma - u'Mu`` in ``r``
    and its root against the numerical scan ("none" when the weights never beat uniform ones, with the
    reason); and the decision on the error model's threshold, from these and :func:`error_model`."""
    import sympy as sp

    from .. import weighting as Wt

    p = ctx.params
    q_sym, rho_sym = sp.symbols("q rho", positive=True)
    g2, r = Wt.crossover_gap(2, rho_sym, Wt.weights_expr("geometric", 2, q_sym))
    r_star_2 = [x for x in sp.solve(g2, r) if x.subs({q_sym: sp.Rational(1, 2), rho_sym: 0}) > 0][0]
    gamma_star_2 = sp.simplify(r_star_2**2)
    q_expr = _exact_ratio(p.q)
    a_sym = Wt.weights_expr(p.weights if isinstance(p.weights, str) else list(p.weights), p.H, q_expr)
    gap_poly, _ = Wt.crossover_gap(p.H, p.rho, a_sym)
    why = ""
    try:
        exact = Wt.symbolic_threshold(p.H, p.rho, a_sym)
        scan = Wt.heterogeneity_threshold(p.H, p.rho, weights=np.array([float(x) for x in a_sym]))
    except ValueError as exc:  # e.g. weights with the largest weight on the worst head: no crossover
        exact = scan = float("nan")
        why = str(exc)
    h2 = abs(
        float(gamma_star_2.subs({q_sym: q_expr, rho_sym: 0})) / Wt.heterogeneity_threshold(2, 0.0, q=ratio_value(p.q))
        - 1
    )
    found = math.isfinite(scan)
    return {
        "gamma_star_2": gamma_star_2,
        "rho": f"{p.rho:g}",
        "gamma_star": Q(exact, digits=4, label="gamma* (sympy root)") if found else "none",
        "gamma_star_scan": scan,
        "relative_difference": abs(exact / scan - 1) if found else float("nan"),
        "h2_check": h2,
        "no_crossover": why,
        "threshold": _threshold_decision(error_model, exact, scan),
        "data": Raw({"gap_poly": gap_poly}),
    }


def _threshold_decision(error_model, exact: float, scan: float) -> dict:
    """The error model's threshold (read by :class:`mhanw.infra.rules.Decided`): holds when every exact
    check passes and every crossover found (the grid's and the run's weights') is finite and above 1."""
    gs = error_model["data"].value["gamma_star"]
    checks = {
        "uniform weights are the affine oracle at gamma = 1": error_model["oracle_gap_at_one"].value <= ORACLE_GAP_TOL,
        "every structured weighting loses at gamma = 1": error_model["uniform_wins_at_one"],
        "a crossover exists on every grid point": bool(np.all(np.isfinite(gs.values))),
        "the weights under test (H, rho, q, weights) have a crossover, its sympy root equal to the scan": (
            bool(abs(exact / scan - 1) < ROOT_MATCH_TOL) if math.isfinite(scan) else False
        ),
    }
    th = np.array([*gs.values.ravel(), scan], dtype=float)
    failed = [name for name, ok in checks.items() if not ok]
    ok = not failed and bool(np.all(np.isfinite(th))) and bool(np.all(th > 1))
    found = th[np.isfinite(th)]
    return {
        "verdict": HOLDS if ok else FAILS,
        "criterion": (
            "exact quadratic forms a'Ma (no Monte Carlo): "
            + join_list(list(checks))
            + "; every gamma* > 1"
            + (f"; failed: {join_list(failed)}" if failed else "")
        ),
        "statistics": (Q(float(found.min()), label="smallest gamma*"),) if found.size else (),
    }


def _graded_decision(scheme: str, diff: Q, gamma_hat: float, gamma_star_hat: float) -> dict:
    """ "With real graded heads, ``scheme`` weights beat uniform ones" when the error model predicts a win
    (``gamma_hat > gamma_star_hat``), "lose to" otherwise: the paired difference ``diff`` in the predicted
    direction by more than :data:`mhanw.constants.N_SE` s.e. holds only under added conditions (those of
    Theorem 7.1 as read here), in the other direction fails as stated, else undecided."""
    predicted = gamma_hat > gamma_star_hat
    v = significant_effect(diff.value, diff.se, sign=-1 if predicted else 1, n_se=N_SE)
    conditions = (
        "convex weights, heads ordered by a quality estimated on independent replicates, "
        f"heterogeneity gamma_hat = {gamma_hat:.3g} {'above' if predicted else 'below'} the threshold "
        f"gamma* = {gamma_star_hat:.3g}"
    )
    return {
        "verdict": HOLDS_UNDER if v == HOLDS else v,
        "conditions": conditions if v == HOLDS else "",
        "criterion": f"paired difference of the MSE, out of sample, beyond {N_SE:g} standard errors in the "
        "predicted direction",
        # no z-score for an exact (zero s.e.) difference
        "statistics": (diff,) + ((Q(diff.value / diff.se, label="z"),) if diff.se > 0 else ()),
        "predicted": predicted,
    }


def _adding_heads_decision(rising: dict, n_steps: int) -> dict:
    """ "Adding heads in quality order lowers the MSE of fixed weights", from ``rising`` (``{scheme: [k, ...]}``,
    the steps ``k -> k+1`` at which the MSE rose by more than 3 paired s.e.): fails as stated when every
    weighting has such a step; a holds is never concluded from the absence of rises (that needs falls), so
    otherwise undecided."""
    return {
        "verdict": FAILS if all(len(v) > 0 for v in rising.values()) else UNDECIDED,
        "criterion": f"for every fixed weighting, a step k -> k+1 (of {n_steps}) that raises the MSE by more than "
        "3 paired s.e. is a counterexample",
        "statistics": tuple(Q(len(v), label=f"steps that raise the MSE, {s}") for s, v in rising.items()),
    }


def _evaluate(ctx: Context, W, regression: str, n_rep: int, streams: tuple):
    """Heads ``W`` on the run's inputs and noise with ``regression``: the error second moments on ``n_rep``
    fitting replicates (their mean fixes the quality order and the oracle weights) and every weighting scored
    on ``n_rep`` independent ones (:func:`mhanw.weighting.nested_errors`).  Returns ``(M_fit, M_eval, result,
    model)``."""
    from .. import data, montecarlo
    from .. import weighting as Wt

    p = ctx.params
    model = data.data_model(regression, inputs=p.inputs, noise=p.noise, sigma=p.sigma)
    setting = dict(n=p.n, n_test=ctx.sizes["n_test"], n_rep=n_rep, bandwidth=p.bandwidth, n_jobs=p.n_jobs)
    M_fit = montecarlo.error_moments(W, model, seed=ctx.streams[streams[0]], **setting).mean(axis=0)
    M_eval = montecarlo.error_moments(W, model, seed=ctx.streams[streams[1]], **setting)
    return M_fit, M_eval, Wt.nested_errors(M_fit, M_eval, q=ratio_value(p.q)), model


def _difference(res, a: str, b: str) -> Q:
    """``MSE(a) - MSE(b)`` with all heads, its paired s.e."""
    return Q.of(res.paired_difference(a, b), label=f"MSE({a}) - MSE({b})")


def _minus_best(res, a: str) -> Q:
    """``MSE(a)`` with all heads minus that of the best head alone, its paired s.e."""
    return Q.of(res.paired_difference(a, "uniform", k_b=1), label=f"MSE({a}) - MSE(best head)")


@step
def graded(ctx: Context) -> dict:
    """Part 2: real NW heads of graded quality (:func:`mhanw.heads.graded_heads` at ``angles_deg`` in
    ``R^d``) on the run's data model, every weighting scored out of sample: the MSE of each with all heads
    and of the best head alone, the paired differences (geometric with q = 0.5 and 0.8 too, on the same
    evaluation replicates), the steps at which adding the next head raises a fixed weighting's MSE, the
    oracle weights, the heads' heterogeneity ``gamma_hat``, ``rho_hat`` against the error model's crossover,
    and the decisions on the graded-heads records."""
    from .. import heads
    from .. import weighting as Wt
    from ..infra.estimates import Estimate

    p = ctx.params
    angles = np.radians(p.angles_deg)
    W = heads.graded_heads(angles, p.d)
    M_fit, M_eval, res, _ = _evaluate(ctx, W, p.regression, ctx.sizes["n_rep"], STREAMS[:2])
    H = len(angles)
    cmp = {
        "geometric_minus_uniform": _difference(res, "geometric", "uniform"),
        "fibonacci_minus_uniform": _difference(res, "fibonacci", "uniform"),
        "fibonacci_minus_geometric": _difference(res, "fibonacci", "geometric"),
        **{f"{s}_minus_best": _minus_best(res, s) for s in SCHEMES + ORACLES},
    }
    for q, key in ((0.5, "q0_5"), (0.8, "q0_8")):  # the same evaluation replicates: a paired difference
        other = Wt.nested_errors(M_fit, M_eval, ("geometric",), q=q)
        cmp[f"geometric_{key}_minus_uniform"] = Q.of(
            Estimate.paired(other.samples("geometric"), res.samples("uniform"))
        )
    rising = {s: [k for k in range(1, H) if res.paired_difference(s, s, k=k + 1, k_b=k).exceeds()] for s in SCHEMES}
    sd = np.sqrt(np.diag(M_fit))
    corr = M_fit / np.outer(sd, sd)
    gamma_hat = float(np.diag(M_fit).max() / np.diag(M_fit).min())
    rho_hat = float(corr[np.triu_indices(H, 1)].mean())
    star = {
        "geometric": Wt.heterogeneity_threshold(H, rho_hat, q=ratio_value(p.q)),
        "fibonacci": Wt.heterogeneity_threshold(H, rho_hat, weights=Wt.fibonacci_weights(H)),
    }
    oracle = {s: res.weights[s][-1] for s in ORACLES}
    mse = {s: Q(res.mean[i, -1], res.se[i, -1]) for i, s in enumerate(res.schemes)}
    return {
        "n_heads": H,
        "n_steps": H - 1,
        "angles": ",".join(f"{a:g}" for a in p.angles_deg),
        "sigma": f"{p.sigma:g}",
        "bandwidth": f"{p.bandwidth:g}",
        "regression": Tex(regression_tex(p.regression)),
        "M_fit": M_fit,
        "order": res.order,
        "schemes": res.schemes,
        "mean": res.mean,
        "se": res.se,
        "mse": {**mse, "best": Q(res.mean[0, 0], res.se[0, 0])},
        **cmp,
        "rising_steps": rising,
        "rising": {s: len(v) for s, v in rising.items()},
        "oracle_weights": oracle,
        "affine_weight_best": Q(oracle["affine"][0], digits=3),
        "affine_weight_min": Q(oracle["affine"][1:].min(), digits=2),
        "affine_weight_max": Q(oracle["affine"][1:].max(), digits=2),
        "simplex_weight_best": Q(oracle["simplex"][0], digits=3),
        "gamma_hat": Q(gamma_hat, digits=3),
        "rho_hat": Q(rho_hat, digits=2),
        "gamma_star_hat": Q(star["geometric"], digits=3),
        "gamma_star_fib_hat": Q(star["fibonacci"], digits=3),
        "decisions": {
            **{s: _graded_decision(s, cmp[f"{s}_minus_uniform"], gamma_hat, star[s]) for s in star},
            "adding_heads": _adding_heads_decision(rising, H - 1),
        },
        "data": Raw(res),
    }


def control_premises(projections, model) -> tuple:
    """The premise the homogeneous control rests on, evaluated on its actual heads ``(H, d, d_k)`` and data
    model: :func:`mhanw.premises.exchangeable_heads` (a symmetry of the law of ``(X, Y)`` permutes the heads,
    so that ``M 1`` is proportional to ``1`` and uniform weights are the affine oracle)."""
    from .. import premises

    return (premises.exchangeable_heads(projections, model),)


def control_label(premises) -> str:
    """The words that name the control in a figure title or caption, from its premise check
    (:func:`control_premises`): ``"exchangeable heads"`` when the premise holds, else
    ``"heads not exchangeable here"`` (a title never states a premise the run does not satisfy)."""
    return "exchangeable heads" if all(p.holds for p in premises) else "heads not exchangeable here"


@step
def control(ctx: Context) -> dict:
    """Part 3, the homogeneous control: ``H = len(angles_deg)`` one-dimensional heads on ``e_1 .. e_H`` and
    ``control_regression``, on the run's inputs and noise, scored as :func:`graded` scores its heads; the
    premise that these heads are exchangeable under that law (:func:`control_premises`)."""
    from .. import heads

    p = ctx.params
    W = heads.orthogonal_heads(p.d, 1, len(p.angles_deg))
    _, _, res, model = _evaluate(ctx, W, p.control_regression, ctx.sizes["n_rep_control"], STREAMS[2:])
    premises = control_premises(W, model)
    cmp = {
        f"{s}_minus_uniform": _difference(res, s, "uniform") for s in ("geometric", "fibonacci", "affine", "simplex")
    }
    return {
        "regression": Tex(regression_tex(p.control_regression)),
        "schemes": res.schemes,
        "mean": res.mean,
        "se": res.se,
        "uniform": Q(res.mean[0, -1], res.se[0, -1]),
        **cmp,
        "affine_resolves": Q(N_SE * cmp["affine_minus_uniform"].se, digits=2),
        "premises": premises,
        "label": control_label(premises),
        "data": Raw(res),
    }


#: The records the theorem reads, in this order: the error model, the graded heads (geometric), the control.
THEOREM_PARTS = ("thm-7.1/error-model-threshold", "thm-7.1/graded-heads/geometric", "thm-7.1/homogeneous-control")


def records_on(results: Results, ids) -> list:
    """The declared records ``ids`` decided on ``results`` (which need hold only the steps they read), in
    the order of ``ids``: the theorem's parts, or one record a figure or a sentence states before the
    chapter closes."""
    by_id = {c.id: c for c in CLAIMS}
    return [by_id[i].decide(results, chapter=__name__.rsplit(".", 1)[1][2:], section=SECTION) for i in ids]


@step
def theorem(ctx: Context, error_model, symbolic, graded, control) -> dict:
    """Theorem 7.1 read as "geometric weights beat uniform ones when head quality is heterogeneous (and not
    otherwise)": the error model's threshold, the graded heads and the homogeneous control together (their
    records, :data:`THEOREM_PARTS`).  Holds only under added conditions when all three hold, fails as stated
    when one fails, undecided otherwise -- also when the control lies outside its conditions (its heads not
    exchangeable): the "not otherwise" was then not tested."""
    results = Results({"error_model": error_model, "symbolic": symbolic, "graded": graded, "control": control})
    return {"decision": theorem_decision(records_on(results, THEOREM_PARTS))}


def theorem_decision(parts) -> dict:
    """The theorem's decision from the records of its ``parts`` (:data:`THEOREM_PARTS`, in that order), read
    by :class:`mhanw.infra.rules.Decided`; its conditions are the graded heads' and the reading of "faster"."""
    model, geo, ctl = parts
    if any(r.fails for r in parts):
        verdict = FAILS
    elif all(r.holds for r in parts):
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    return {
        "verdict": verdict,
        "conditions": (
            geo.conditions + "; fixed weights keep the worst head's rate in n, so 'faster decay' "
            "means a lower MSE at the same (n, H)"
        )
        if verdict == HOLDS_UNDER
        else "",
        "criterion": (
            f"the records {model.claim}, {geo.claim} and {ctl.claim} together"
            + "".join(
                f"; {r.claim} lies outside its conditions ({failure_text(r.premises)})" for r in parts if r.outside
            )
        ),
    }


STEPS = (error_model, symbolic, graded, control, theorem)

# --------------------------------------------------------------------------- the records


def _graded_statement(scheme: str):
    def statement(results: Results) -> str:
        d = results.at(f"graded.decisions.{scheme}")
        return (
            f"With real NW heads of graded quality, {NAMES[scheme]} weights "
            f"{'beat' if d['predicted'] else 'lose to'} uniform ones, as the error model predicts"
        )

    return statement


def _control_finding(results: Results, verdict: str) -> str:
    """What the control's numbers show: the weighting whose margin over uniform weights is least favourable
    to them (in s.e.), with its difference."""
    c = results["control"]
    est = {s: c[f"{s}_minus_uniform"] for s in ("geometric", "fibonacci")}
    s, q = min(est.items(), key=lambda kv: kv[1].value / kv[1].se if kv[1].se > 0 else kv[1].value)
    z = f" ({q.value / q.se:+.1f} s.e.)" if q.se > 0 else ""
    return (
        f"in the control, {NAMES[s]} weights have an MSE {'above' if q.value > 0 else 'below'} "
        f"that of uniform weights by {abs(q.value):.3g}{z}, the margin least favourable to uniform weights "
        f"among {join_list([NAMES[k] for k in est])}"
    )


CLAIMS = (
    Claim(
        "thm-7.1/error-model-threshold",
        "In the graded error model, geometric weights beat uniform ones exactly when the heterogeneity gamma "
        "exceeds a threshold gamma*(H, rho) > 1",
        Decided("symbolic.threshold"),
        role=PAPER,
    ),
    Claim(
        "thm-7.1/graded-heads/geometric",
        _graded_statement("geometric"),
        Decided("graded.decisions.geometric"),
        role=PAPER,
    ),
    Claim(
        "thm-7.1/graded-heads/fibonacci",
        _graded_statement("fibonacci"),
        Decided("graded.decisions.fibonacci"),
        role=PAPER,
    ),
    Claim(
        "thm-7.1/graded-heads/best-single-head",
        "With real NW heads of graded quality, fixed weights "
        f"({join_list([NAMES[s] for s in SCHEMES])}) over all heads beat the best single head",
        All(tuple(Effect(f"graded.{s}_minus_best", sign=-1) for s in SCHEMES)),
        role=DERIVATION,
    ),
    Claim(
        "thm-7.1/graded-heads/adding-heads",
        "With real NW heads of graded quality, each head added in quality order lowers the MSE of fixed weights",
        Decided("graded.decisions.adding_heads"),
        role=READING,
    ),
    Claim(
        "thm-7.1/homogeneous-control",
        "With exchangeable heads, uniform weights beat geometric and Fibonacci weights",
        All((Effect("control.geometric_minus_uniform"), Effect("control.fibonacci_minus_uniform"))),
        role=CONTROL,
        premises="control.premises",
        finding=_control_finding,
    ),
)


def prose(results: Results, records) -> dict:
    """The section's words decided by the numbers: the model's prediction for the graded heads, the
    comparisons at 3 s.e., the simplex oracle's weight and the control's premise."""
    g, c = results["graded"], results["control"]
    predicted = g["decisions"]["geometric"]["predicted"]
    neither = f"not distinguishable at {N_SE:g} s.e."

    def words(q: Q) -> str:
        return direction_words(q.value, q.se, positive="higher", negative="lower", neither=neither)

    best = g["uniform_minus_best"]
    simplex_best = g["simplex_weight_best"].value
    why = failure_text(c["premises"])
    return {
        "geo_predicted": "win" if predicted else "lose",
        "hat_versus_star": "above" if predicted else "below",
        "fib_versus_geo": words(g["fibonacci_minus_geometric"]),
        "oracle_versus_uniform": words(c["affine_minus_uniform"]),
        "poor_baseline": "And the gain is relative to a poor baseline: that" if best.value > N_SE * best.se else "That",
        "simplex_note": "the simplex oracle coincides with the best single head (dashed)"
        if simplex_best > 1 - 1e-6
        else f"the simplex oracle puts weight {simplex_best:.3g} on the best head",
        "control_exchangeable": Tex(
            "by symmetry $M\\mathbf 1\\propto\\mathbf 1$, so uniform weights are the affine oracle"
            if not why
            else tex_text(f"these heads are not exchangeable under the run's data law ({why})")
        ),
    }
