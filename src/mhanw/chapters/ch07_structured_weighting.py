"""Chapter 07: structured head weights evaluated out of sample on real NW heads (Thm 7.1).

The exact part of the chapter (the graded error model, the crossover
``gamma*``) is :mod:`mhanw.weighting`.  This module holds the Monte Carlo part:
:func:`nested_errors` evaluates every weighting as heads are added in quality
order, with the quality order and the oracle weights fitted on one set of
replicates (:func:`mhanw.weighting.quality_order`,
:func:`mhanw.weighting.fitted_weights`) and the errors measured on an
independent one (:func:`mhanw.montecarlo.error_moments`), so that no weighting
sees the data it is evaluated on.  Comparisons are paired
(:class:`mhanw.infra.estimates.Estimate`): every weighting and head count is
evaluated on the same replicates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..constants import N_SE
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.estimates import Estimate, ReplicatedErrors
from ..infra.expressions import check_algebraic, exact_number
from ..infra.notation import markdown_safe
from ..infra.notebook import notebook_helper
from ..infra.premises import failure_text
from ..infra.prose import join_list
from ..infra.validate import as_float_array, brief, one_of, positive_int, sequence
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Statistic, Verdict, checked, significant_effect
from ..weighting import (
    GOLDEN_Q,
    MAX_SYMBOLIC_HEADS,
    ORACLES,
    SCHEMES,
    _ratio,
    _symmetric_matrix,
    fitted_weights,
    quality_order,
)

__all__ = [
    "NestedErrors",
    "SIGNIFICANCE",
    "adding_heads_verdict",
    "best_single_head_verdict",
    "compare_words",
    "control_label",
    "control_premises",
    "control_verdict",
    "crossover_verdict",
    "theorem_verdict",
    "graded_verdict",
    "nested_errors",
    "PARAMETERS",
    "CONSTRAINTS",
]

#: A paired difference counts when it exceeds this many standard errors (:data:`mhanw.constants.N_SE`).
SIGNIFICANCE = N_SE

SECTION = "sec:thm71"

_NAMES = {"fibonacci": "Fibonacci"}


@dataclass(frozen=True)
class NestedErrors(ReplicatedErrors):
    """Errors of weightings as heads are added in quality order (Thm 7.1, real heads).

    Attributes
    ----------
    order : ``(H,)`` head indices, best first, from the fitting matrix
    schemes : names of the weightings, in the order of ``errors``
    errors : ``(S, H, R)``; ``errors[s, k - 1, r] = a' M_r a`` for weighting
        ``s`` of the best ``k`` heads on evaluation replicate ``r``
    weights : ``{scheme: [a_1, ..., a_H]}``, ``a_k`` of shape ``(k,)`` in
        quality order (the oracles fitted on the fitting matrix)

    ``mean``, ``se`` and ``estimate`` are the MSE per scheme and number of heads, ``(S, H)``.
    """

    order: np.ndarray
    schemes: tuple
    errors: np.ndarray
    weights: dict

    def samples(self, scheme: str, k: int | None = None) -> np.ndarray:
        """Per-replicate errors ``(R,)`` of ``scheme`` with its best ``k`` heads (default all)."""
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        if k > H:
            raise ValueError(f"k: expected at most {H} heads, got {k}")
        return self.errors[self.schemes.index(one_of(scheme, "scheme", self.schemes)), k - 1]

    def paired_difference(self, a: str, b: str, k: int | None = None, k_b: int | None = None) -> Estimate:
        """``MSE_a - MSE_b`` with its paired s.e., ``k`` heads (default all) for ``a`` and ``k_b`` (default ``k``) for ``b``.

        ``k_b = 1`` compares with the best single head.  Unpacks as ``diff, se``.
        """
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        k_b = k if k_b is None else positive_int(k_b, "k_b")
        for name, kk in (("k", k), ("k_b", k_b)):
            if kk > H:
                raise ValueError(f"{name}: expected at most {H} heads, got {kk}")
        one_of(a, "a", self.schemes)
        one_of(b, "b", self.schemes)
        return Estimate.paired(self.samples(a, k), self.samples(b, k_b))


def nested_errors(M_fit, M_eval, schemes=SCHEMES + ORACLES, *, q: float = GOLDEN_Q) -> NestedErrors:
    """Evaluate weightings out of sample as heads are added in quality order (Thm 7.1, real heads).

    Parameters
    ----------
    M_fit : ``(H, H)``
        Error second-moment matrix estimated on replicates *independent* of
        ``M_eval``.  It alone decides the quality order
        (:func:`mhanw.weighting.quality_order`) and the oracle weights, so that
        no weighting sees the data it is evaluated on.
    M_eval : ``(R, H, H)`` or ``(H, H)``
        Per-replicate matrices (e.g. :func:`mhanw.montecarlo.error_moments`) on
        which every weighting is evaluated: ``a' M_r a``, replicate by
        replicate (common random numbers across weightings and head counts).
    schemes : names from :data:`mhanw.weighting.SCHEMES` and :data:`mhanw.weighting.ORACLES`
    q : ratio of the geometric weights

    For ``k = 1..H`` the best ``k`` heads (by ``M_fit``) are combined with each
    scheme's weights for ``k`` heads (the oracles of ``M_fit[S_k, S_k]``).
    """
    M_fit = _symmetric_matrix(M_fit, "M_fit")
    H = M_fit.shape[0]
    M_eval = as_float_array(M_eval, "M_eval", ndim=(2, 3))
    M_eval = M_eval[None] if M_eval.ndim == 2 else M_eval
    if M_eval.shape[1:] != (H, H):
        raise ValueError(f"M_eval: expected shape (R, {H}, {H}) to match M_fit, got {M_eval.shape}")
    if isinstance(schemes, str):
        schemes = (schemes,)
    schemes = tuple(one_of(s, "schemes", SCHEMES + ORACLES) for s in sequence(schemes, "schemes", "weighting names"))
    if not schemes or len(set(schemes)) != len(schemes):
        raise ValueError(f"schemes: expected distinct scheme names, got {brief(schemes)}")
    q = _ratio(q, "q")
    order = quality_order(M_fit)
    fit = M_fit[np.ix_(order, order)]
    ev = M_eval[:, order][:, :, order]
    errors = np.empty((len(schemes), H, M_eval.shape[0]))
    weights = {s: [] for s in schemes}
    for k in range(1, H + 1):
        sub = ev[:, :k, :k]
        for i, s in enumerate(schemes):
            a = fitted_weights(s, fit[:k, :k], q=q)
            weights[s].append(a)
            errors[i, k - 1] = np.einsum("i,rij,j->r", a, sub, a)
    return NestedErrors(order=order, schemes=schemes, errors=errors, weights=weights)


# --------------------------------------------------------------------------- verdict rules


@checked(diff=V.number, se=V.standard_error, lower=V.text, higher=V.text, n_se=V.nonnegative)
def compare_words(
    diff: float, se: float, lower: str = "lower", higher: str = "higher", *, n_se: float = SIGNIFICANCE
) -> str:
    """``lower`` / ``higher`` when ``diff`` is below / above zero by more than ``n_se`` s.e.,
    else ``"not distinguishable at n_se s.e."`` (for generated sentences)."""
    if diff < -n_se * se:
        return lower
    if diff > n_se * se:
        return higher
    return f"not distinguishable at {n_se:g} s.e."


@checked(checks=V.flag_map, thresholds=V.numbers_or_missing)
def crossover_verdict(checks: dict, thresholds) -> Verdict:
    """Verdict on the error model: "geometric weights beat uniform ones exactly above a
    heterogeneity threshold gamma*(H, rho) > 1" (exact, no Monte Carlo).

    ``checks``: named booleans, each a condition of the statement verified exactly
    (e.g. uniform is the affine oracle at gamma = 1, the threshold found on every grid
    point, the symbolic and the numerical threshold agree); ``thresholds``: every
    gamma* found, NaN where none was (the claim then fails).  "holds" when every check passes and every
    gamma* exceeds 1.
    """
    th = V.numbers_or_missing(thresholds, "thresholds").ravel()
    failed = [name for name, ok in checks.items() if not ok]
    ok = not failed and bool(np.all(np.isfinite(th))) and bool(np.all(th > 1))
    found = th[np.isfinite(th)]
    return Verdict(
        claim="thm-7.1/error-model-threshold",
        statement=(
            "In the graded error model, geometric weights beat uniform ones exactly when the "
            "heterogeneity gamma exceeds a threshold gamma*(H, rho) > 1"
        ),
        verdict=HOLDS if ok else FAILS,
        criterion=(
            "exact quadratic forms a'Ma (no Monte Carlo): "
            + join_list(list(checks))
            + "; every gamma* > 1"
            + (f"; failed: {join_list(failed)}" if failed else "")
        ),
        statistics=(Statistic("smallest gamma*", float(found.min())),) if found.size else (),
        section=SECTION,
    )


@checked(
    scheme=V.text, diff=V.estimate, predicted=V.flag, gamma_hat=V.number, gamma_star_hat=V.number, n_se=V.nonnegative
)
def graded_verdict(
    scheme: str, diff, *, predicted: bool, gamma_hat: float, gamma_star_hat: float, n_se: float = SIGNIFICANCE
) -> Verdict:
    """Verdict on "with real graded NW heads, ``scheme`` weights beat uniform ones".

    ``diff``: (MSE_scheme - MSE_uniform, paired s.e.) with all heads, out of sample;
    ``predicted``: whether the error model predicts a win (``gamma_hat > gamma*``).
    The prediction is tested with :func:`mhanw.infra.verdicts.significant_effect` in
    its predicted direction: "holds under the stated conditions" (the conditions of
    Theorem 7.1 as read here) when the effect has the predicted sign by more than
    ``n_se`` s.e., "fails as stated" when it has the opposite one.
    """
    d, se = V.estimate(diff, "diff")
    v = significant_effect(d, se, sign=-1 if predicted else 1, n_se=n_se)
    conditions = (
        "convex weights, heads ordered by a quality estimated on independent replicates, "
        f"heterogeneity gamma_hat = {gamma_hat:.3g} above the threshold gamma* = {gamma_star_hat:.3g}"
    )
    if not predicted:
        conditions = conditions.replace("above", "below")
    return Verdict(
        claim=f"thm-7.1/graded-heads/{scheme}",
        statement=(
            f"With real NW heads of graded quality, {_NAMES.get(scheme, scheme)} weights "
            f"{'beat' if predicted else 'lose to'} uniform ones, as the error model predicts"
        ),
        verdict=HOLDS_UNDER if v == HOLDS else v,
        conditions=conditions if v == HOLDS else "",
        criterion=f"paired difference of the MSE, out of sample, beyond {n_se:g} standard errors in the predicted direction",
        statistics=(Statistic(f"MSE({scheme}) - MSE(uniform)", d, se),)
        + ((Statistic("z", d / se),) if se > 0 else ()),  # no z-score for an exact (zero s.e.) difference
        section=SECTION,
    )


@checked(diffs=V.estimate_map, n_se=V.nonnegative)
def best_single_head_verdict(diffs: dict, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """Verdict on "fixed structured weights over all heads beat the best single head".

    ``diffs``: ``{scheme: (MSE_scheme(all heads) - MSE(best head), paired s.e.)}``.
    "fails as stated" when some scheme is worse by more than ``n_se`` s.e.; "holds" when
    every scheme is better by more than ``n_se`` s.e.; else "undecided at this size".
    """
    est = V.estimate_map(diffs, "diffs")
    worse = [s for s, (d, se) in est.items() if d > n_se * se]
    better = [s for s, (d, se) in est.items() if d < -n_se * se]
    verdict = FAILS if worse else (HOLDS if len(better) == len(est) else UNDECIDED)
    return Verdict(
        claim="thm-7.1/graded-heads/best-single-head",
        statement=(
            f"With real NW heads of graded quality, fixed weights ({join_list([_NAMES.get(s, s) for s in est])}) "
            "over all heads beat the best single head"
        ),
        verdict=verdict,
        criterion=(
            f"paired difference with the best single head, out of sample: fails when one weighting "
            f"is worse by more than {n_se:g} s.e., holds when all are better by more than {n_se:g} standard errors"
        ),
        statistics=tuple(Statistic(f"MSE({s}) - MSE(best head)", d, se) for s, (d, se) in est.items()),
        section=SECTION,
    )


def _steps(value, name: str) -> list:
    """A list of steps ``k`` (of ``k -> k+1``, whole numbers) at which the MSE of a weighting rose."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise ValueError(f"{name}: expected a list of steps, got {brief(value)}")
    return [V.count(k, f"{name}[{i}]") for i, k in enumerate(value)]


#: ``{scheme: [k, ...]}``, the steps of each weighting at which its MSE rose.
_rising = V.mapping_of(_steps)


@checked(rising=_rising, n_steps=V.count)
def adding_heads_verdict(rising: dict, n_steps: int) -> Verdict:
    """Verdict on "adding heads (in quality order) lowers the MSE of fixed weights".

    ``rising``: ``{scheme: [k, ...]}``, the steps ``k -> k+1`` at which the MSE rose by
    more than 3 paired s.e.  "fails as stated" when every scheme has such a step; "holds"
    is never concluded from the absence of rises (that needs falls), so otherwise
    "undecided at this size".
    """
    every = all(len(v) > 0 for v in rising.values())
    return Verdict(
        claim="thm-7.1/graded-heads/adding-heads",
        statement="With real NW heads of graded quality, each head added in quality order lowers the MSE of fixed weights",
        verdict=FAILS if every else UNDECIDED,
        criterion=(
            f"for every fixed weighting, a step k -> k+1 (of {n_steps}) that raises the MSE by more "
            "than 3 paired s.e. is a counterexample"
        ),
        statistics=tuple(Statistic(f"steps that raise the MSE, {s}", len(v)) for s, v in rising.items()),
        section=SECTION,
    )


def control_premises(projections, model) -> tuple:
    """The premise the homogeneous control rests on, evaluated on its actual heads ``(H, d, d_k)`` and data
    model: :func:`mhanw.premises.exchangeable_heads` (a symmetry of the law of ``(X, Y)`` permutes the heads,
    so that ``M 1`` is proportional to ``1`` and uniform weights are the affine oracle)."""
    from .. import premises as P

    return (P.exchangeable_heads(projections, model),)


def control_label(premises) -> str:
    """The words that name the control in a figure title or caption, from its premise check
    (:func:`control_premises`): ``"exchangeable heads"`` when the premise holds, else
    ``"heads not exchangeable here"`` (a title never states a premise the run does not satisfy)."""
    prem = V.premise_list(premises, "premises")
    return "exchangeable heads" if all(p.holds for p in prem) else "heads not exchangeable here"


@checked(diffs=V.estimate_map, premises=V.premise_list, n_se=V.nonnegative)
def control_verdict(diffs: dict, *, premises=(), n_se: float = SIGNIFICANCE) -> Verdict:
    """Verdict on the homogeneous control: "with exchangeable heads, uniform weights beat
    every structured weighting" (uniform is the affine oracle there).

    ``diffs``: ``{scheme: (MSE_scheme - MSE_uniform, paired s.e.)}``: "holds" when all are
    positive by more than ``n_se`` s.e., "fails as stated" when one is negative by more
    than ``n_se`` s.e., else "undecided at this size".  ``premises``: :func:`control_premises`;
    when the heads are not exchangeable under the run's data law the record is "outside its
    conditions" and keeps the decision on the numbers as what they show.
    """
    est = V.estimate_map(diffs, "diffs")
    verdict = V.combine(significant_effect(d, se, sign=1, n_se=n_se) for d, se in est.values())
    names = join_list([_NAMES.get(s, s) for s in est])
    lowest = min(est.items(), key=lambda kv: kv[1][0] / kv[1][1] if kv[1][1] > 0 else kv[1][0])
    d, se = lowest[1]
    z = f" ({d / se:+.1f} s.e.)" if se > 0 else ""
    finding = (
        f"in the control, {_NAMES.get(lowest[0], lowest[0])} weights have an MSE {'above' if d > 0 else 'below'} "
        f"that of uniform weights by {abs(d):.3g}{z}"
        + (f", the margin least favourable to uniform weights among {names}" if len(est) > 1 else "")
    )
    return Verdict(
        claim="thm-7.1/homogeneous-control",
        statement=f"With exchangeable heads, uniform weights beat {names} weights",
        verdict=verdict,
        premises=premises,
        finding=finding,
        criterion=f"paired difference with uniform weights, out of sample, beyond {n_se:g} standard errors",
        statistics=tuple(Statistic(f"MSE({s}) - MSE(uniform)", d, se) for s, (d, se) in est.items()),
        section=SECTION,
    )


@checked(model=V.record, graded=V.record, control=V.record)
def theorem_verdict(model: Verdict, graded: Verdict, control: Verdict) -> Verdict:
    """Verdict on Theorem 7.1 read as "geometric weights beat uniform ones when head quality is
    heterogeneous (and not otherwise)": the error model's threshold, the graded heads and the
    homogeneous control together.  "holds under the stated conditions" when all three hold;
    "fails as stated" when one fails; else "undecided at this size" -- also when the control lies
    outside its conditions (its heads not exchangeable): the "not otherwise" was then not tested."""
    parts = (model, graded, control)
    if any(p.fails for p in parts):
        verdict = FAILS
    elif all(p.holds for p in parts):
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    outside = [p for p in parts if p.outside]
    return Verdict(
        claim="thm-7.1",
        statement="Geometric weights beat uniform ones when head quality is heterogeneous enough, and not otherwise",
        verdict=verdict,
        conditions=(
            graded.conditions + "; fixed weights keep the worst head's rate in n, so 'faster decay' "
            "means a lower MSE at the same (n, H)"
        )
        if verdict == HOLDS_UNDER
        else "",
        criterion=(
            f"the records {model.claim}, {graded.claim} and {control.claim} together"
            + "".join(f"; {p.claim} lies outside its conditions ({failure_text(p.premises)})" for p in outside)
        ),
        section=SECTION,
    )


# --------------------------------------------------------------------------- the chapter's parameters


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


# --------------------------------------------------------------------------- the chapter's experiments
#
# What the notebook's hidden cells call: each experiment returns a plain dict of its numbers, the
# sentences the chapter prints are generated (or guarded) here, and the records, macros and result
# file are written from those dicts.

#: The grid of the error model: numbers of heads, error correlations, heterogeneities of the gain table.
H_GRID = (4, 8, 16)
RHO_GRID = (0.0, 0.3, 0.6)
GAMMA_COLUMNS = (1, 2, 3, 5, 10, 20, 50, 100, 300, 1000)
#: The fine grid of rho on which gamma* is checked to fall with rho (and to grow with H).
RHO_FINE = np.linspace(0.0, 0.9, 46)
#: The structured weightings of the error model, by name: a function of H giving the weights.
_CURVES = ("geometric q=1/phi", "Fibonacci")


def setup(namespace: dict) -> dict:
    """The run of the notebook whose globals are ``namespace``: its checked parameters ``p``
    (:func:`mhanw.infra.params.check_parameters`, one line naming a bad one), the Monte Carlo sizes of its
    fidelity, four random streams (graded heads: fit, evaluate; control: fit, evaluate), the ratio ``q`` as a
    float; the figure style is set."""
    from ..infra.notebook import start

    p, size, streams = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 4)
    return dict(p=p, size=size, streams=streams, q_value=ratio_value(p["q"]))


#: The Monte Carlo sizes of each fidelity: replicates of the graded heads and of the control (each set:
#: fitting and evaluation), fresh test points per replicate.
SIZES = dict(
    quick=dict(n_rep=200, n_rep_control=200, n_test=200), paper=dict(n_rep=2000, n_rep_control=1000, n_test=200)
)


def sizes(fidelity: str) -> dict:
    """The Monte Carlo sizes of a fidelity (:data:`SIZES`)."""
    from ..infra.notebook import by_fidelity

    return by_fidelity(fidelity, **SIZES)


def ratio_value(q) -> float:
    """The ratio ``q`` (a number or formula) as a float, the library's :data:`mhanw.weighting.GOLDEN_Q` for 1/phi."""
    import sympy as sp

    expr = _exact_ratio(q)
    return GOLDEN_Q if sp.simplify(expr - (sp.sqrt(5) - 1) / 2) == 0 else float(expr)


def _exact_ratio(q):
    """``q`` as an exact number whose algebra the symbolic crossover can do in seconds, a sympy value too
    (:func:`mhanw.infra.expressions.check_algebraic`); ``ValueError`` naming ``q`` otherwise."""
    return check_algebraic(exact_number(q, "q"), "q")


def _fixed():
    from .. import weighting as Wt

    return {
        "geometric q=0.5": lambda H: Wt.geometric_weights(H, 0.5),
        "geometric q=1/phi": Wt.geometric_weights,
        "geometric q=0.8": lambda H: Wt.geometric_weights(H, 0.8),
        "Fibonacci": Wt.fibonacci_weights,
    }


def error_model() -> dict:
    """The exact part (no Monte Carlo) on :data:`H_GRID` x :data:`RHO_GRID`: the crossover ``gamma*`` of each
    fixed weighting (``gamma_star``, a DataFrame indexed by ``(H, rho)``), the checks at ``gamma = 1``
    (``oracle_gap_at_one``, ``uniform_wins_at_one``, ``loss_H16`` = MSE_geo / MSE_unif at H = 16, rho = 0),
    the curves ``gamma*(rho)`` on :data:`RHO_FINE` and their directions, and the gain table
    MSE_unif / MSE_geo (``gains``)."""
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
        for name in _CURVES
    }

    def gain(H, gamma, rho):
        M = Wt.graded_error_matrix(H, gamma, rho)
        return Wt.mse(Wt.uniform_weights(H), M) / Wt.mse(Wt.geometric_weights(H), M)

    gains = pd.DataFrame(
        [[gain(H, k, rho) for k in GAMMA_COLUMNS] for H in H_GRID for rho in RHO_GRID],
        index=[f"H={H}, ρ={rho:g}" for H in H_GRID for rho in RHO_GRID],
        columns=list(GAMMA_COLUMNS),
    )
    return dict(
        gamma_star=gamma_star,
        curves=curves,
        gains=gains,
        gain_max=float(gains.values.max()),
        oracle_gap_at_one=max(v[0] for v in at_one.values()),
        uniform_wins_at_one=all(min(v[1].values()) > 1 for v in at_one.values()),
        loss_H16=at_one[16, 0.0][1]["geometric q=1/phi"],
        falls_with_rho=all(bool(np.all(np.diff(c) <= 0)) for c in curves.values()),
        grows_with_H=all(bool(np.all(np.diff([curves[H, name] for H in H_GRID], axis=0) > 0)) for name in _CURVES),
    )


def symbolic(H: int, rho: float, q, weights, q_value: float) -> dict:
    """The crossover derived by sympy: for ``H = 2`` in closed form (``gamma_star_2``, any ``q``, ``rho = 0``
    branch), and for the run's ``(H, rho, q, weights)`` the polynomial ``a'Ma - u'Mu`` in ``r`` (``gap_poly``)
    and its root ``gamma_star_sym`` against the numerical scan ``gamma_star_num`` (NaN with ``no_crossover``
    saying why when the weights never beat uniform ones)."""
    import sympy as sp

    from .. import weighting as Wt

    H = positive_int(H, "H", minimum=2, maximum=Wt.MAX_SYMBOLIC_HEADS, what="heads in a symbolic weighting")
    q_sym, rho_sym = sp.symbols("q rho", positive=True)
    g2, r = Wt.crossover_gap(2, rho_sym, Wt.weights_expr("geometric", 2, q_sym))
    r_star_2 = [x for x in sp.solve(g2, r) if x.subs({q_sym: sp.Rational(1, 2), rho_sym: 0}) > 0][0]
    gamma_star_2 = sp.simplify(r_star_2**2)
    q_expr = _exact_ratio(q)
    a_sym = Wt.weights_expr(weights if isinstance(weights, str) else list(weights), H, q_expr)
    gap_poly, _ = Wt.crossover_gap(H, rho, a_sym)
    why = ""
    try:
        gamma_star_sym = Wt.symbolic_threshold(H, rho, a_sym)
        gamma_star_num = Wt.heterogeneity_threshold(H, rho, weights=np.array([float(x) for x in a_sym]))
    except ValueError as exc:  # e.g. weights with the largest weight on the worst head: no crossover
        gamma_star_sym = gamma_star_num = float("nan")
        why = str(exc)
    h2 = abs(float(gamma_star_2.subs({q_sym: q_expr, rho_sym: 0})) / Wt.heterogeneity_threshold(2, 0.0, q=q_value) - 1)
    return dict(
        gamma_star_2=gamma_star_2,
        gap_poly=gap_poly,
        gamma_star_sym=gamma_star_sym,
        gamma_star_num=gamma_star_num,
        h2_check=h2,
        no_crossover=why,
        H=H,
        rho=rho,
    )


def _sig(diff) -> bool:
    return bool(Estimate(*diff).exceeds())


def graded_experiment(p: dict, size: dict, streams, q_value: float) -> dict:
    """Real NW heads of graded quality (:func:`mhanw.heads.graded_heads` at ``angles_deg`` in ``R^d``) on
    the run's data model: the fitting matrix ``M_fit``, every weighting evaluated out of sample
    (:func:`nested_errors`, ``graded``; geometric with q = 0.5 and 0.8 in ``graded_q``), the paired
    comparisons ``cmp`` ``{name: (difference, paired s.e.)}``, the steps that raise a fixed weighting's
    MSE (``rising``), the oracle weights, and the heads' heterogeneity ``gamma_hat``, ``rho_hat`` against
    the error model's crossovers."""
    from .. import data, heads, montecarlo
    from .. import weighting as Wt

    angles = np.radians(p["angles_deg"])
    W = heads.graded_heads(angles, p["d"])
    model = data.data_model(p["regression"], inputs=p["inputs"], noise=p["noise"], sigma=p["sigma"])
    setting = dict(n=p["n"], n_test=size["n_test"], n_rep=size["n_rep"], bandwidth=p["bandwidth"], n_jobs=p["n_jobs"])
    M_fit = montecarlo.error_moments(W, model, seed=streams[0], **setting).mean(axis=0)
    M_eval = montecarlo.error_moments(W, model, seed=streams[1], **setting)
    graded = nested_errors(M_fit, M_eval, q=q_value)
    graded_q = {qq: nested_errors(M_fit, M_eval, ("geometric",), q=qq) for qq in (0.5, 0.8)}
    cmp = {
        "geometric - uniform": graded.paired_difference("geometric", "uniform"),
        "fibonacci - uniform": graded.paired_difference("fibonacci", "uniform"),
        "fibonacci - geometric": graded.paired_difference("fibonacci", "geometric"),
        **{
            f"{s} - best": graded.paired_difference(s, "uniform", k_b=1)
            for s in ("uniform", "geometric", "fibonacci", "affine", "simplex")
        },
    }
    for qq, res in graded_q.items():  # same evaluation replicates: a paired difference
        cmp[f"geometric q={qq} - uniform"] = Estimate.paired(res.samples("geometric"), graded.samples("uniform"))
    cmp = {k: tuple(map(float, v)) for k, v in cmp.items()}
    H = len(angles)
    rising = {s: [k for k in range(1, H) if _sig(graded.paired_difference(s, s, k=k + 1, k_b=k))] for s in SCHEMES}
    sd = np.sqrt(np.diag(M_fit))
    corr = M_fit / np.outer(sd, sd)
    gamma_hat = float(np.diag(M_fit).max() / np.diag(M_fit).min())
    rho_hat = float(corr[np.triu_indices(H, 1)].mean())
    return dict(
        angles_deg=list(p["angles_deg"]),
        M_fit=M_fit,
        graded=graded,
        cmp=cmp,
        rising=rising,
        oracle_weights={s: graded.weights[s][-1] for s in ORACLES},
        gamma_hat=gamma_hat,
        rho_hat=rho_hat,
        gamma_star_hat=Wt.heterogeneity_threshold(H, rho_hat, q=q_value),
        gamma_star_fib_hat=Wt.heterogeneity_threshold(H, rho_hat, weights=Wt.fibonacci_weights(H)),
    )


def control_experiment(p: dict, size: dict, streams, q_value: float) -> dict:
    """The homogeneous control: ``H = len(angles_deg)`` one-dimensional heads on ``e_1 .. e_H`` and
    ``control_regression``, on the run's inputs and noise, evaluated as :func:`graded_experiment` does;
    ``premises`` (:func:`control_premises`) says whether these heads are exchangeable under that law."""
    from .. import data, heads, montecarlo

    H = len(p["angles_deg"])
    W = heads.orthogonal_heads(p["d"], 1, H)
    model = data.data_model(p["control_regression"], inputs=p["inputs"], noise=p["noise"], sigma=p["sigma"])
    setting = dict(
        n=p["n"], n_test=size["n_test"], n_rep=size["n_rep_control"], bandwidth=p["bandwidth"], n_jobs=p["n_jobs"]
    )
    M_fit = montecarlo.error_moments(W, model, seed=streams[2], **setting).mean(axis=0)
    control = nested_errors(M_fit, montecarlo.error_moments(W, model, seed=streams[3], **setting), q=q_value)
    cmp = {
        f"{s} - uniform": tuple(map(float, control.paired_difference(s, "uniform")))
        for s in ("geometric", "fibonacci", "affine", "simplex")
    }
    return dict(control=control, cmp=cmp, premises=control_premises(W, model))


def records(model: dict, sym: dict, graded: dict, control: dict):
    """The chapter's ledger (:class:`mhanw.infra.verdicts.Ledger`): the error model's threshold, the graded
    heads (geometric, Fibonacci, against the best head, adding heads), the control and the theorem."""
    L = V.Ledger("07_structured_weighting")
    gs = model["gamma_star"]
    exact = (
        bool(abs(sym["gamma_star_sym"] / sym["gamma_star_num"] - 1) < 1e-9)
        if np.isfinite(sym["gamma_star_num"])
        else False
    )
    rec_model = L.add(
        crossover_verdict(
            {
                "uniform weights are the affine oracle at gamma = 1": model["oracle_gap_at_one"] <= 1e-12,
                "every structured weighting loses at gamma = 1": model["uniform_wins_at_one"],
                "a crossover exists on every grid point": bool(np.all(np.isfinite(gs.values))),
                "the weights under test (H, rho, q, weights) have a crossover, its sympy root equal to the scan": exact,
            },
            [*gs.values.ravel(), sym["gamma_star_num"]],
        )
    )
    g, c = graded, graded["cmp"]
    rec_geo = L.add(
        graded_verdict(
            "geometric",
            c["geometric - uniform"],
            predicted=g["gamma_hat"] > g["gamma_star_hat"],
            gamma_hat=g["gamma_hat"],
            gamma_star_hat=g["gamma_star_hat"],
        )
    )
    L.add(
        graded_verdict(
            "fibonacci",
            c["fibonacci - uniform"],
            predicted=g["gamma_hat"] > g["gamma_star_fib_hat"],
            gamma_hat=g["gamma_hat"],
            gamma_star_hat=g["gamma_star_fib_hat"],
        )
    )
    L.add(best_single_head_verdict({s: c[f"{s} - best"] for s in SCHEMES}))
    L.add(adding_heads_verdict(g["rising"], len(g["angles_deg"]) - 1))
    rec_control = L.add(
        control_verdict(
            {s: control["cmp"][f"{s} - uniform"] for s in ("geometric", "fibonacci")}, premises=control["premises"]
        )
    )
    L.add(theorem_verdict(rec_model, rec_geo, rec_control))
    return L


def check_sentences(model: dict) -> None:
    """Stop when a direction the chapter and the paper state in words is false for the error model
    (:func:`mhanw.infra.verdicts.guard`): gamma* grows with H and falls with rho on the fine grid, every
    crossover exceeds 1, and at gamma = 1 uniform weights are the affine oracle and win."""
    V.guard(
        bool(model["falls_with_rho"] and model["grows_with_H"]),
        "gamma* grows with H and falls with rho on the grid",
        f"falls with rho: {model['falls_with_rho']}, grows with H: {model['grows_with_H']}",
    )
    smallest = (
        float(np.nanmin(model["gamma_star"].values)) if np.isfinite(model["gamma_star"].values).any() else float("nan")
    )
    V.guard(
        bool(np.all(model["gamma_star"].values > 1)), "every crossover exceeds 1", f"smallest gamma* = {smallest:.4g}"
    )
    V.guard(
        bool(model["uniform_wins_at_one"] and model["oracle_gap_at_one"] <= 1e-12),
        "at gamma = 1 uniform weights are the affine oracle and every structured weighting loses",
        f"largest |a* - uniform| = {model['oracle_gap_at_one']:.3g}, uniform wins: {model['uniform_wins_at_one']}",
    )


# --------------------------------------------------------------------------- the sentences the chapter prints


def _pm(d: float, se: float) -> str:
    return f"{d:.3g} ± {se:.2g}" + (f", z = {d / se:+.1f}" if se > 0 else "")


@notebook_helper
def model_takeaway(model: dict) -> str:
    """One sentence after the error model's figure (Markdown), from the numbers; the directions it states
    are those :func:`check_sentences` guards."""
    gs = model["gamma_star"]["geometric q=1/phi"]
    return (
        f"Geometric weights ($q=1/\\varphi$) beat uniform ones only above the crossover $\\gamma^*(H,\\rho)$, "
        f"from {gs.min():.3g} to {gs.max():.3g} on this grid: it grows with the number of heads $H$ and falls "
        f"with the error correlation $\\rho$, and at $\\gamma=1$ uniform weights always win."
    )


@notebook_helper
def graded_takeaway(graded: dict) -> str:
    """One sentence after the graded heads' figure (Markdown): the comparison with uniform weights and
    with the best single head, in words generated from the signs and the 3-s.e. rule."""
    c = graded["cmp"]
    geo = compare_words(*c["geometric - uniform"], lower="lower", higher="higher")
    best = compare_words(*c["uniform - best"], lower="lower", higher="higher")
    return (
        f"With all {len(graded['angles_deg'])} graded heads, geometric weights have an MSE {_than(geo)} uniform "
        f"ones ({_pm(*c['geometric - uniform'])}); uniform weights have an MSE {_than(best)} the best single "
        f"head alone ({_pm(*c['uniform - best'])})."
    )


def _than(words: str) -> str:
    return f"{words} than" if words in ("lower", "higher") else f"{words} from that of"


@notebook_helper
def control_takeaway(rec) -> str:
    """One sentence after the control's panel (Markdown): the record's finding and verdict, with the failed
    premise when the control's heads are not exchangeable."""
    text = f"{rec.finding[0].upper()}{rec.finding[1:]}: that uniform weights win there {V.predicate(rec.verdict)}" + (
        f" ({failure_text(rec.premises)})." if rec.outside else "."
    )
    return markdown_safe(text)


# --------------------------------------------------------------------------- figures


_STYLE = {
    "uniform": ("o", "-", "C0"),
    "geometric": ("s", "-", "C1"),
    "fibonacci": ("^", "--", "C2"),
    "affine": ("D", "-", "k"),
    "simplex": ("v", ":", "C4"),
}
_LABELS = {
    "uniform": "uniform",
    "geometric": r"geometric $q=1/\varphi$",
    "fibonacci": "Fibonacci",
    "affine": "affine oracle (out of sample)",
    "simplex": "simplex oracle (out of sample)",
}


def figure_model(model: dict):
    """The error model (exact): (a) the crossover gamma*(rho) per H, geometric and Fibonacci; (b) the gain
    MSE_unif / MSE_geo as a heat map.  Returns ``(fig, caption)``."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..infra import figures

    fig, ax = plt.subplots(
        1, 2, figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.6), width_ratios=[1, 1.25], layout="constrained"
    )
    for i, H in enumerate(H_GRID):
        ax[0].plot(RHO_FINE, model["curves"][H, "geometric q=1/phi"], color=f"C{i}", label=f"$H={H}$, geometric")
        ax[0].plot(
            RHO_FINE, model["curves"][H, "Fibonacci"], color=f"C{i}", ls=":", lw=1.2, label=f"$H={H}$, Fibonacci"
        )
    ax[0].set(
        yscale="log",
        xlabel=r"error correlation $\rho$",
        ylabel=r"crossover $\gamma^*(H,\rho)$",
        title="(a) structured beats uniform above",
    )
    ax[0].set_yticks([1, 2, 5, 10], ["1", "2", "5", "10"])
    ax[0].minorticks_off()
    ax[0].legend(ncol=1, loc="upper right", fontsize=7)
    g = model["gains"].values
    annot = np.vectorize(
        lambda v: f"{v:.2f}"[1:] if round(v, 2) < 1 else (f"{v:.1f}" if round(v, 1) < 10 else f"{v:.0f}")
    )(g)
    sns.heatmap(
        np.log10(model["gains"]),
        ax=ax[1],
        cmap="vlag_r",
        center=0,
        annot=annot,
        fmt="",
        annot_kws={"fontsize": 7},
        cbar_kws={"label": r"$\log_{10}$ gain", "pad": 0.02},
    )
    ax[1].set(
        xlabel=r"heterogeneity $\gamma$", ylabel="", title=r"(b) gain $\mathrm{MSE}_{\rm unif}/\mathrm{MSE}_{\rm geo}$"
    )
    ax[1].tick_params(axis="both", labelsize=7, length=0)
    ax[1].tick_params(axis="x", rotation=45)
    caption = (
        "The exact error model, no Monte Carlo. (a) Geometric (solid) or Fibonacci (dotted) weights beat "
        "uniform ones exactly above the curve $\\gamma^*(H,\\rho)$, one colour per number of heads $H$. "
        "(b) The gain $\\mathrm{MSE}_{\\rm unif}/\\mathrm{MSE}_{\\rm geo}$ of geometric weights: blue cells "
        "(gain above 1) are where they win."
    )
    return fig, caption


def figure_graded(graded: dict, regression: str):
    """Real graded heads: integrated MSE of each weighting as heads are added in quality order, the best
    single head dashed, bars +-2 s.e.  Returns ``(fig, caption)``; the caption's sentence on the simplex
    oracle is generated from its fitted weights."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    g = graded["graded"]
    k_axis = np.arange(1, g.errors.shape[1] + 1)
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.4), layout="constrained")
    ax.axhline(g.mean[0, 0], color="k", lw=0.8, ls="--", label="best single head")
    for i, s in enumerate(g.schemes):
        m_, ls_, c_ = _STYLE[s]
        figures.errorbar(ax, k_axis, g.mean[i], g.se[i], marker=m_, linestyle=ls_, color=c_, label=_LABELS[s], ms=3)
    m_text = r"$m(x)=\sin(2x_1)+x_1$" if regression == "blind" else f"$m$ = {regression}"
    ax.set(
        yscale="log",
        xlabel="heads (added in quality order)",
        ylabel="integrated MSE",
        title=f"graded Nadaraya-Watson heads, {m_text}",
    )
    ax.minorticks_off()
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)
    simplex_best = float(graded["oracle_weights"]["simplex"][0])
    note = (
        " The simplex oracle puts all its weight on the best head, so it lies on the dashed line."
        if simplex_best > 1 - 1e-6
        else f" The simplex oracle puts weight {simplex_best:.3g} on the best head."
    )
    caption = (
        "Integrated MSE of each weighting as the graded heads are added in quality order, evaluated on "
        "replicates independent of those that fixed the order and the oracle weights; the dashed line is "
        f"the best single head alone: a weighting above it does worse than that one head.{note}"
    )
    return fig, caption


def figure_control(control: dict):
    """The homogeneous control: each structured weighting's MSE minus that of uniform weights, bars +-2
    paired s.e.  The title and the caption name the heads from their premise check (:func:`control_label`).
    Returns ``(fig, caption)``."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    c = control["control"]
    k_axis = np.arange(1, c.errors.shape[1] + 1)
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.2), layout="constrained")
    for i, s in enumerate(c.schemes[1:4], start=1):
        d = Estimate.paired(c.errors[i], c.errors[0])
        m_, ls_, c_ = _STYLE[s]
        figures.errorbar(
            ax,
            k_axis + 0.08 * (i - 2),
            1e3 * d.mean,
            1e3 * d.se,
            marker=m_,
            linestyle=ls_,
            color=c_,
            label=_LABELS[s],
            ms=3,
        )
    ax.axhline(0, color="k", lw=0.8)
    label = control_label(control["premises"])
    ax.set(xlabel="number of heads", ylabel=r"MSE $-$ MSE(uniform), $\times10^{-3}$", title=f"control: {label}")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)
    why = markdown_safe(failure_text(control["premises"]))
    caption = (
        f"The homogeneous control ({label}{': ' + why if why else ''}): each weighting's MSE minus that of "
        "uniform weights, on the same replicates; above zero, uniform weights win."
    )
    return fig, caption


# --------------------------------------------------------------------------- macros and results


_TAGS_H = {4: "Four", 8: "Eight", 16: "Sixteen"}
_TAGS_RHO = {0.0: "Zero", 0.3: "Three", 0.6: "Six"}


@notebook_helper
def write_outputs(
    macros_path, results_path, *, p: dict, size: dict, model: dict, sym: dict, graded: dict, control: dict, ledger
) -> None:
    """Write the paper's macros (prefix ``StructW``) and the result file of the chapter: every number,
    setting and verdict the paper's section prints, its sentences that depend on the parameters generated
    here (the control's heads named from their premise check, the model's prediction for the graded heads)."""
    import sympy as sp

    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs, regression_tex, tex_text

    m = Macros("StructW")
    gs = model["gamma_star"]
    for H in H_GRID:
        for rho in RHO_GRID:
            tag = f"H{_TAGS_H[H]}Rho{_TAGS_RHO[rho]}"
            m.number(f"GammaStar{tag}", gs.loc[(H, rho), "geometric q=1/phi"], 3)
            m.number(f"GammaStarFib{tag}", gs.loc[(H, rho), "Fibonacci"], 3)
    m.number("GammaStarMin", float(np.nanmin(gs.values)), 3)
    m.number("OracleGapAtOne", max(model["oracle_gap_at_one"], 1e-17), 2)
    m.number("LossAtOneHSixteen", model["loss_H16"], 3)
    m.number("GainMax", model["gain_max"], 3)
    m.integer("NRep", size["n_rep"])
    m.integer("NRepControl", size["n_rep_control"])
    m.integer("NTest", size["n_test"])
    # the setting, from the parameters
    H = len(p["angles_deg"])
    m.integer("NHeads", H)
    m.integer("NSteps", H - 1)
    m.integer("Dim", p["d"])
    m.integer("N", p["n"])
    m.text("Sigma", f"{p['sigma']:g}")
    m.text("Bandwidth", f"{p['bandwidth']:g}")
    m.text("Angles", ",".join(f"{a:g}" for a in p["angles_deg"]))
    m.text("Regression", regression_tex(p["regression"]))
    m.text("ControlRegression", regression_tex(p["control_regression"]))
    m.integer("SymH", sym["H"])
    m.text("SymRho", f"{sym['rho']:g}")
    g, c, cc = graded, graded["cmp"], control["cmp"]
    m.number("GammaHat", g["gamma_hat"], 3)
    m.number("RhoHat", g["rho_hat"], 2)
    m.number("GammaStarHat", g["gamma_star_hat"], 3)
    m.number("GammaStarFibHat", g["gamma_star_fib_hat"], 3)
    m.text("GeoPredicted", "win" if g["gamma_hat"] > g["gamma_star_hat"] else "lose")
    m.text("HatVersusStar", "above" if g["gamma_hat"] > g["gamma_star_hat"] else "below")
    res = g["graded"]
    for i, s in enumerate(res.schemes):
        m.mean_se(f"Graded{s.capitalize()}", res.mean[i, -1], res.se[i, -1])
    m.mean_se("GradedBest", res.mean[0, 0], res.se[0, 0])
    for key, name in [
        ("geometric - uniform", "GeoMinusUnif"),
        ("fibonacci - uniform", "FibMinusUnif"),
        ("uniform - best", "UnifMinusBest"),
        ("geometric - best", "GeoMinusBest"),
        ("fibonacci - best", "FibMinusBest"),
        ("affine - best", "AffineMinusBest"),
        ("simplex - best", "SimplexMinusBest"),
        ("geometric q=0.5 - uniform", "GeoHalfMinusUnif"),
        ("geometric q=0.8 - uniform", "GeoEightMinusUnif"),
        ("fibonacci - geometric", "FibMinusGeo"),
    ]:
        m.mean_se(name, *c[key])
    for key, name in [
        ("geometric - uniform", "GeoMinusUnifZ"),
        ("fibonacci - uniform", "FibMinusUnifZ"),
        ("uniform - best", "UnifMinusBestZ"),
        ("geometric - best", "GeoMinusBestZ"),
        ("fibonacci - best", "FibMinusBestZ"),
        ("affine - best", "AffineMinusBestZ"),
        ("fibonacci - geometric", "FibMinusGeoZ"),
    ]:
        m.number(name, c[key][0] / c[key][1], 2)
    m.text("FibVersusGeo", compare_words(*c["fibonacci - geometric"]))
    aw = g["oracle_weights"]["affine"]
    m.number("AffineWeightBest", aw[0], 3)
    m.number("AffineWeightMin", aw[1:].min(), 2)
    m.number("AffineWeightMax", aw[1:].max(), 2)
    m.number("SimplexWeightBest", g["oracle_weights"]["simplex"][0], 3)
    m.integer("RisingStepsUniform", len(g["rising"]["uniform"]))
    m.integer("RisingStepsGeometric", len(g["rising"]["geometric"]))
    # uniform weights as a poor baseline: said only when the best head beats them by 3 s.e.
    m.text("PoorBaseline", "And the gain is relative to a poor baseline: that" if _sig(c["uniform - best"]) else "That")
    simplex_best = float(g["oracle_weights"]["simplex"][0])
    m.text(
        "SimplexNote",
        "the simplex oracle coincides with the best single head (dashed)"
        if simplex_best > 1 - 1e-6
        else f"the simplex oracle puts weight {simplex_best:.3g} on the best head",
    )
    ctl = control["control"]
    m.mean_se("ControlUniform", ctl.mean[0, -1], ctl.se[0, -1])
    for key, name in [
        ("geometric - uniform", "ControlGeoMinusUnif"),
        ("fibonacci - uniform", "ControlFibMinusUnif"),
        ("affine - uniform", "ControlAffineMinusUnif"),
    ]:
        m.mean_se(name, *cc[key])
    for key, name in [
        ("geometric - uniform", "ControlGeoMinusUnifZ"),
        ("fibonacci - uniform", "ControlFibMinusUnifZ"),
        ("affine - uniform", "ControlAffineZ"),
    ]:
        m.number(name, cc[key][0] / cc[key][1], 2)
    m.text("OracleVersusUnif", compare_words(*cc["affine - uniform"]))
    m.number("ControlAffineResolves", SIGNIFICANCE * cc["affine - uniform"][1], 2)
    m.text("ControlLabel", control_label(control["premises"]))
    why = failure_text(control["premises"])
    m.text(
        "ControlExchangeable",
        "by symmetry $M\\mathbf 1\\propto\\mathbf 1$, so uniform weights are the affine oracle"
        if not why
        else tex_text(f"these heads are not exchangeable under the run's data law ({why})"),
    )
    rec = {r.claim: r for r in ledger}
    for name, claim in [
        ("Model", "thm-7.1/error-model-threshold"),
        ("GeoBeatsUnif", "thm-7.1/graded-heads/geometric"),
        ("FibBeatsUnif", "thm-7.1/graded-heads/fibonacci"),
        ("BeatBest", "thm-7.1/graded-heads/best-single-head"),
        ("AddingHeads", "thm-7.1/graded-heads/adding-heads"),
        ("Control", "thm-7.1/homogeneous-control"),
        ("Theorem", "thm-7.1"),
    ]:
        V.verdict_macros(m, name, rec[claim])
    m.text("GammaStarTwo", "\\ensuremath{" + sp.latex(sym["gamma_star_2"]) + "}")
    if np.isfinite(sym["gamma_star_sym"]):
        m.number("GammaStarSym", sym["gamma_star_sym"], 4)
    else:  # the reader's weights never beat uniform ones: no crossover
        m.text("GammaStarSym", "none")
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    m.write(macros_path, argument="macros_path")
    save_results(
        results_path,
        argument="results_path",
        results=json_safe(
            dict(
                fidelity=p["fidelity"],
                seed=p["seed"],
                sizes=size,
                q=p["q"],
                weights=p["weights"],
                gamma_star={
                    f"{name}|H={H_}|rho={rho}": gs.loc[(H_, rho), name]
                    for name in gs.columns
                    for H_ in H_GRID
                    for rho in RHO_GRID
                },
                gamma_star_curves={
                    "rho": RHO_FINE,
                    **{f"{name}|H={H_}": cv for (H_, name), cv in model["curves"].items()},
                },
                gains={
                    "gamma": list(GAMMA_COLUMNS),
                    "rows": list(model["gains"].index),
                    "values": model["gains"].values,
                },
                oracle_gap_at_one=model["oracle_gap_at_one"],
                loss_at_one_H16=model["loss_H16"],
                graded={
                    "angles_deg": g["angles_deg"],
                    "order": res.order,
                    "M_fit": g["M_fit"],
                    "schemes": res.schemes,
                    "mean": res.mean,
                    "se": res.se,
                    "comparisons": c,
                    "rising_steps": g["rising"],
                    "oracle_weights": g["oracle_weights"],
                    "gamma_hat": g["gamma_hat"],
                    "rho_hat": g["rho_hat"],
                    "gamma_star_hat": g["gamma_star_hat"],
                },
                control={
                    "schemes": ctl.schemes,
                    "mean": ctl.mean,
                    "se": ctl.se,
                    "comparisons": cc,
                    "premises": [pr.to_dict() for pr in control["premises"]],
                },
                symbolic={
                    "H": sym["H"],
                    "rho": sym["rho"],
                    "q": p["q"],
                    "weights": p["weights"] if isinstance(p["weights"], str) else list(p["weights"]),
                    "gamma_star_sympy": sym["gamma_star_sym"],
                    "gamma_star_scan": sym["gamma_star_num"],
                    "gamma_star_H2": sp.sstr(sym["gamma_star_2"]),
                },
                claims=ledger.to_list(),
            )
        ),
    )


# --------------------------------------------------------------------------- tables the chapter shows


@notebook_helper
def symbolic_table(sym: dict):
    """The symbolic derivation as the chapter shows it: gamma* for H = 2 in closed form (LaTeX), and the
    run's crossover from sympy's root against the numerical scan (a :func:`mhanw.infra.tables.show` table)."""
    import sympy as sp
    from IPython.display import Math, display

    from ..infra import tables

    display(Math(r"\gamma^*_{H=2} = " + sp.latex(sym["gamma_star_2"])))
    ok = np.isfinite(sym["gamma_star_num"])
    return tables.show(
        {
            f"gamma* for H = {sym['H']}, rho = {sym['rho']:g} (sympy root)": sym["gamma_star_sym"],
            "gamma* (numerical scan)": sym["gamma_star_num"],
            "relative difference": abs(sym["gamma_star_sym"] / sym["gamma_star_num"] - 1) if ok else float("nan"),
            "H = 2 closed form against the scan, relative difference": sym["h2_check"],
            **({"no crossover": sym["no_crossover"]} if sym["no_crossover"] else {}),
        },
        4,
    )


def evidence_tables(model: dict, graded: dict, control: dict):
    """The further evidence, as tables: the crossovers gamma* of every fixed weighting on the grid, the graded
    heads' heterogeneity against the model's crossover, the paired comparisons (difference, paired s.e.) of
    the graded heads and of the control, and the oracle weights fitted out of sample."""
    import pandas as pd
    from IPython.display import display

    from ..infra import tables

    display(
        tables.show(
            model["gamma_star"].round(3), 3, caption="Crossover gamma*(H, rho) of each fixed weighting (exact)."
        )
    )
    g = graded
    display(
        tables.show(
            {
                "gamma_hat": round(g["gamma_hat"], 1),
                "rho_hat": round(g["rho_hat"], 3),
                f"gamma*({len(g['angles_deg'])}, rho_hat)": round(g["gamma_star_hat"], 3),
                "model predicts geometric wins": g["gamma_hat"] > g["gamma_star_hat"],
            },
            caption="The graded heads' heterogeneity and the error model's prediction.",
        )
    )
    for name, cmp in (("graded heads", g["cmp"]), ("control", control["cmp"])):
        display(
            tables.show(
                pd.DataFrame(cmp, index=["difference", "paired s.e."]).T,
                se={"difference": "paired s.e."},
                index="comparison",
                caption=f"Paired MSE differences, {name}, all heads.",
            )
        )
    return tables.show(
        {
            "steps k -> k+1 that raise the MSE (3 s.e.)": g["rising"],
            **{k: np.round(v, 3) for k, v in g["oracle_weights"].items()},
        },
        3,
        caption="Rising steps and the oracle weights (best head first).",
    )
