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

from dataclasses import dataclass

import numpy as np

from ..constants import N_SE
from ..infra import params as P
from ..infra.estimates import Estimate, ReplicatedErrors
from ..infra.expressions import exact_number
from ..infra.prose import join_list
from ..infra import verdicts as V
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Statistic, Verdict, checked, significant_effect
from ..infra.validate import as_float_array, brief, one_of, positive_int, sequence
from ..weighting import GOLDEN_Q, ORACLES, SCHEMES, _ratio, _symmetric_matrix, fitted_weights, quality_order

__all__ = ["NestedErrors", "SIGNIFICANCE", "adding_heads_verdict", "best_single_head_verdict", "compare_words",
           "control_verdict", "crossover_verdict", "theorem_verdict", "graded_verdict", "nested_errors", "PARAMETERS", "CONSTRAINTS"]

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
def compare_words(diff: float, se: float, lower: str = "lower", higher: str = "higher",
                  *, n_se: float = SIGNIFICANCE) -> str:
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
    return Verdict(claim="thm-7.1/error-model-threshold",
                   statement=("In the graded error model, geometric weights beat uniform ones exactly when the "
                              "heterogeneity gamma exceeds a threshold gamma*(H, rho) > 1"),
                   verdict=HOLDS if ok else FAILS,
                   criterion=("exact quadratic forms a'Ma (no Monte Carlo): " + join_list(list(checks))
                              + "; every gamma* > 1" + (f"; failed: {join_list(failed)}" if failed else "")),
                   statistics=(Statistic("smallest gamma*", float(found.min())),) if found.size else (),
                   section=SECTION)


@checked(scheme=V.text, diff=V.estimate, predicted=V.flag, gamma_hat=V.number, gamma_star_hat=V.number,
         n_se=V.nonnegative)
def graded_verdict(scheme: str, diff, *, predicted: bool, gamma_hat: float, gamma_star_hat: float,
                   n_se: float = SIGNIFICANCE) -> Verdict:
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
    conditions = ("convex weights, heads ordered by a quality estimated on independent replicates, "
                  f"heterogeneity gamma_hat = {gamma_hat:.3g} above the threshold gamma* = {gamma_star_hat:.3g}")
    if not predicted:
        conditions = conditions.replace("above", "below")
    return Verdict(claim=f"thm-7.1/graded-heads/{scheme}",
                   statement=(f"With real NW heads of graded quality, {_NAMES.get(scheme, scheme)} weights "
                              f"{'beat' if predicted else 'lose to'} uniform ones, as the error model predicts"),
                   verdict=HOLDS_UNDER if v == HOLDS else v, conditions=conditions if v == HOLDS else "",
                   criterion=f"paired difference of the MSE, out of sample, beyond {n_se:g} standard errors in the predicted direction",
                   statistics=(Statistic(f"MSE({scheme}) - MSE(uniform)", d, se),)
                   + ((Statistic("z", d / se),) if se > 0 else ()),  # no z-score for an exact (zero s.e.) difference
                   section=SECTION)


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
    return Verdict(claim="thm-7.1/graded-heads/best-single-head",
                   statement=(f"With real NW heads of graded quality, fixed weights ({join_list([_NAMES.get(s, s) for s in est])}) "
                              "over all heads beat the best single head"),
                   verdict=verdict,
                   criterion=(f"paired difference with the best single head, out of sample: fails when one weighting "
                              f"is worse by more than {n_se:g} s.e., holds when all are better by more than {n_se:g} standard errors"),
                   statistics=tuple(Statistic(f"MSE({s}) - MSE(best head)", d, se) for s, (d, se) in est.items()),
                   section=SECTION)


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
    return Verdict(claim="thm-7.1/graded-heads/adding-heads",
                   statement="With real NW heads of graded quality, each head added in quality order lowers the MSE of fixed weights",
                   verdict=FAILS if every else UNDECIDED,
                   criterion=(f"for every fixed weighting, a step k -> k+1 (of {n_steps}) that raises the MSE by more "
                              "than 3 paired s.e. is a counterexample"),
                   statistics=tuple(Statistic(f"steps that raise the MSE, {s}", len(v)) for s, v in rising.items()),
                   section=SECTION)


@checked(diffs=V.estimate_map, n_se=V.nonnegative)
def control_verdict(diffs: dict, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """Verdict on the homogeneous control: "with exchangeable heads, uniform weights beat
    every structured weighting" (uniform is the affine oracle there).

    ``diffs``: ``{scheme: (MSE_scheme - MSE_uniform, paired s.e.)}``: "holds" when all are
    positive by more than ``n_se`` s.e., "fails as stated" when one is negative by more
    than ``n_se`` s.e., else "undecided at this size".
    """
    est = V.estimate_map(diffs, "diffs")
    verdict = V.combine(significant_effect(d, se, sign=1, n_se=n_se) for d, se in est.values())
    return Verdict(claim="thm-7.1/homogeneous-control",
                   statement=f"With exchangeable heads, uniform weights beat {join_list([_NAMES.get(s, s) for s in est])} weights",
                   verdict=verdict,
                   criterion=f"paired difference with uniform weights, out of sample, beyond {n_se:g} standard errors",
                   statistics=tuple(Statistic(f"MSE({s}) - MSE(uniform)", d, se) for s, (d, se) in est.items()),
                   section=SECTION)


@checked(model=V.record, graded=V.record, control=V.record)
def theorem_verdict(model: Verdict, graded: Verdict, control: Verdict) -> Verdict:
    """Verdict on Theorem 7.1 read as "geometric weights beat uniform ones when head quality is
    heterogeneous (and not otherwise)": the error model's threshold, the graded heads and the
    homogeneous control together.  "holds under the stated conditions" when all three hold;
    "fails as stated" when one fails; else "undecided at this size"."""
    parts = (model, graded, control)
    if any(p.fails for p in parts):
        verdict = FAILS
    elif all(p.holds for p in parts):
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    return Verdict(claim="thm-7.1",
                   statement="Geometric weights beat uniform ones when head quality is heterogeneous enough, and not otherwise",
                   verdict=verdict,
                   conditions=(graded.conditions + "; fixed weights keep the worst head's rate in n, so 'faster decay' "
                               "means a lower MSE at the same (n, H)") if verdict == HOLDS_UNDER else "",
                   criterion=f"the records {model.claim}, {graded.claim} and {control.claim} together",
                   section=SECTION)


# --------------------------------------------------------------------------- the chapter's parameters


def _ratio_expression() -> P.Kind:
    """The ratio ``q`` of the geometric weights: a number or a formula of numbers (``"(sqrt(5) - 1)/2"``) in
    (0, 1), read by the one safe parser (:func:`mhanw.infra.expressions.exact_number`: numbers, ``+ - * / **``,
    parentheses, ``sqrt``, ``pi`` and ``E``, sizes bounded before anything is evaluated)."""

    def check(value, name):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise P.ParameterError(f"{name}: expected a number or an expression such as '(sqrt(5) - 1)/2', got {brief(value)}")
        expr = exact_number(value, name)
        if not expr.is_number or expr.free_symbols or not (0 < float(expr) < 1):
            raise P.ParameterError(f"{name}: expected a number in the open interval (0, 1), got {brief(value)}")
        return value

    return P.Kind("a number or expression in (0, 1)", check)


def _weighting() -> P.Kind:
    """``"geometric"``, ``"fibonacci"`` or a list of non-negative weights summing to 1 (one per head, ``H``)."""
    listed = P.weights(length="H")

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
    "n_jobs": P.positive_int(),
    "H": P.positive_int(2),
    "rho": P.real(0.0, 1.0, open_max=True),
    "q": _ratio_expression(),
    "weights": _weighting(),
    "regression": P.regression(dimension="d"),
    "control_regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "sigma": P.nonnegative_float(),
    "n": P.positive_int(2),
    "bandwidth": P.positive_float(),
    "angles_deg": P.sequence(P.real(0.0, 90.0), min_length=2),
    "d": P.positive_int(2),
}

#: Constraints: the graded heads use the coordinates e_1 ... e_(H+1), the control e_1 ... e_H.
CONSTRAINTS = (
    P.require("angles_deg", lambda p: len(p["angles_deg"]) + 1 <= p["d"], "len(angles_deg) + 1 <= d"),
    P.require("angles_deg", lambda p: list(p["angles_deg"]) == sorted(p["angles_deg"]), "angles_deg in increasing order"),
)
