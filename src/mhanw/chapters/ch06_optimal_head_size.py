"""Chapter 06: the optimal head size under a fixed budget ``D = H d_k`` (Thm 6.1).

The chapter's bookkeeping and its two experiments, in the order the chapter uses them.

*The law.*  The risk models M1-M5 of :mod:`mhanw.scaling` and the reader's model
(:func:`risk_models`) are derived by :mod:`mhanw.derivation`; :func:`minimiser_table`,
:func:`power_law_fits`, :func:`sensitivity_table`, :func:`practice_table` and
:func:`bias_readings` give the numbers of Theorem 6.1's table at ``D = 512``, and
:func:`law_figure` draws the chapter's key figure.

*Real heads.*  The budget simulation (``book/claims.md``, 'Theorem 6.1'): the input has as many
coordinates as the budget ``D`` (the parameter ``sim_budget``, 8 by default; the ``d`` of the risk
models is a separate constant), and a configuration with head size ``d_k`` has
``H = D / d_k`` Gaussian Nadaraya-Watson heads on orthogonal coordinate blocks
(:func:`mhanw.heads.orthogonal_heads`), so every configuration sees all ``D``
coordinates and only the way they are split into heads changes.  The heads are
combined by ``"average"`` (the paper's convex ensemble) or ``"sum"`` (additive,
concatenation-like; :func:`mhanw.heads.combine`).

The bandwidth ``h`` is tuned for every cell ``(d_k, rule)`` on a grid, by the
integrated MSE over ``n_tune`` *tuning* replicates, and the tuned ensemble is
then evaluated on ``n_rep`` fresh *evaluation* replicates (independent streams),
so the reported IMSE is not biased downward by the tuning.  Within one stage
every configuration shares the training sample and test points of a replicate
(common random numbers), so comparisons carry paired standard errors
(:class:`mhanw.infra.estimates.Estimate`).

All head evaluation is :func:`mhanw.heads.head_estimates`; the data are
:func:`mhanw.data.draw_sample`; the replicates run through
:func:`mhanw.infra.sweep.run_replicates` (one seeded stream per replicate, results
independent of ``n_jobs``).  :func:`simulate` runs one simulation per ``(regression, n)``
and :func:`budget_figure` draws them.

*The records.*  :func:`decide_law` and :func:`decide_heads` apply the verdict rules below;
:func:`law_takeaway` and :func:`heads_takeaway` say each figure's lesson from its numbers (the verdicts
are the findings'), and :func:`close` guards the sentences that state a direction and writes the macros
of the paper's section and the results.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

from .. import data as _data
from .. import derivation as _derivation
from .. import heads as _heads
from .. import scaling as _scaling
from ..constants import MAX_REPLICATES, N_SE, check_entries
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.estimates import Estimate, ReplicatedErrors
from ..infra.notebook import notebook_helper
from ..infra.prose import join_list
from ..infra.sweep import run_replicates
from ..infra.validate import (
    as_float_array,
    as_seed_sequence,
    brief,
    listed,
    mapping_with_keys,
    one_of,
    positive_int,
    positive_scalar,
    sequence,
    table_with_columns,
)
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED, Statistic, Verdict, checked

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BANDWIDTHS",
    "BIAS_EXPONENTS",
    "BUDGET",
    "BudgetResult",
    "CONSTANTS",
    "D_GRID",
    "FAR_LOG10_N",
    "N_GRID",
    "NEARLY_LINEAR_SLOPE",
    "PRACTICAL_LOG10_N",
    "asymptotic_table",
    "bias_reading_models",
    "bias_reading_verdict",
    "bias_readings",
    "budget_caption",
    "budget_figure",
    "budget_simulation",
    "close",
    "decide_heads",
    "decide_law",
    "derivation_table",
    "head_sizes",
    "heads_takeaway",
    "law_caption",
    "law_figure",
    "law_takeaway",
    "linear_heads_verdict",
    "logarithmic_growth_verdict",
    "minimiser_table",
    "power_law_fits",
    "practice_table",
    "practice_verdict",
    "printed_law_models_verdict",
    "printed_law_verdict",
    "reading_tables",
    "risk_models",
    "sensitivity_table",
    "setup",
    "simulate",
    "simulation_tables",
    "small_heads_verdict",
    "takeaway",
    "PARAMETERS",
    "CONSTRAINTS",
]

#: The bandwidth grid, extended down to 0.1: with many one-dimensional heads
#: summed, 0.15 was the tuned value at n = 3000 (the edge of the first grid), so
#: the optimum could have been below it.
BANDWIDTHS = (0.1, 0.15, 0.25, 0.4, 0.6, 0.9, 1.3, 2.0)

#: A paired difference is significant when it exceeds this many standard errors (:data:`mhanw.constants.N_SE`).
SIGNIFICANCE = N_SE


# --------------------------------------------------------------------------- the checks of the chapter's inputs
# The chapter's helpers pass tables (pandas DataFrames) and mappings (the notebook's parameters, sizes, streams,
# laws and simulations) from one cell to the next; each checks them here first, so that a malformed one raises
# ValueError naming the argument and what it lacks, not a KeyError or AttributeError deep inside pandas.


def _rows(value, name: str, keys) -> list:
    """``value`` as a list if it is a non-empty sequence of mappings each holding ``keys`` (the rows of a
    table), else ``ValueError`` naming ``name[i]`` and the missing keys."""
    items = list(sequence(value, name, "rows (mappings)"))
    if not items:
        raise ValueError(f"{name}: expected at least one row, got an empty sequence")
    for i, row in enumerate(items):
        mapping_with_keys(row, f"{name}[{i}]", keys)
    return items


def _risk_model(value, name: str) -> _scaling.MSEModel:
    """``value`` as an :class:`mhanw.scaling.MSEModel` if it is one or a built-in model's name, else
    ``ValueError`` naming ``name``."""
    if not isinstance(value, (str, _scaling.MSEModel)):
        raise ValueError(
            f"{name}: expected a risk model (an MSEModel or a built-in name such as 'M1'), "
            f"got {type(value).__name__} {brief(value)}"
        )
    try:
        return _scaling.model(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _risk_models(values, name: str) -> list:
    """A non-empty list of risk models (:func:`_risk_model`, named ``name[i]``)."""
    items = [_risk_model(m, f"{name}[{i}]") for i, m in enumerate(sequence(values, name, "risk models"))]
    if not items:
        raise ValueError(f"{name}: expected at least one risk model, got an empty sequence")
    return items


def _simulations(value, name: str, rules=()) -> Mapping:
    """``value`` if it is a non-empty mapping ``{(regression, n): BudgetResult}`` whose results have every
    rule of ``rules``, else ``ValueError`` naming ``name`` (or ``name[key]``)."""
    mapping_with_keys(value, name)
    if not value:
        raise ValueError(f"{name}: expected at least one simulation {{(regression, n): BudgetResult}}, got none")
    for key, s in value.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"{name}: expected keys (regression, n), got {brief(key)}")
        if not isinstance(s, BudgetResult):
            raise ValueError(f"{name}[{key!r}]: expected a BudgetResult (budget_simulation), got {type(s).__name__}")
        missing = [r for r in rules if r not in s.rules]
        if missing:
            raise ValueError(
                f"{name}[{key!r}]: the simulation has no rule {listed(missing)} (it has {listed(s.rules)})"
            )
    return value


def _cells(value, name: str) -> list:
    """A non-empty list of simulated cells ``(regression, n)``, else ``ValueError`` naming ``name[i]``."""
    items = list(sequence(value, name, "cells (regression, n)"))
    if not items:
        raise ValueError(f"{name}: expected at least one cell (regression, n), got an empty sequence")
    for i, cell in enumerate(items):
        try:
            ok = isinstance(cell, tuple) and len(cell) == 2 and hash(cell) is not None
        except TypeError:  # a list inside: not a key of the streams
            ok = False
        if not ok:
            raise ValueError(f"{name}[{i}]: expected a cell (regression, n), got {brief(cell)}")
    return items


def _budgets(values, name: str) -> np.ndarray:
    """``values`` as a 1-D non-empty array of budgets ``D``: finite numbers > 0, else ``ValueError``."""
    arr = as_float_array(values, name, ndim=1)
    if np.any(arr <= 0):
        raise ValueError(f"{name}: expected positive budgets D, got {brief(values)}")
    return arr


def head_sizes(budget: int) -> tuple[int, ...]:
    """The head sizes that split ``budget`` exactly: its divisors, ascending.

    ``budget`` is an integer from 1 to :data:`mhanw.scaling.MAX_DIVISOR_BUDGET`
    (:func:`mhanw.scaling.divisors`, trial division up to its square root).
    """
    return tuple(int(k) for k in _scaling.divisors(budget))


def _errors(rng, regression, n, n_test, sigma, budget, d_k_values, cells, rules):
    """One replicate: ``err[i, j, r]`` for head size ``d_k_values[i]``, bandwidth
    ``cells[i][j]`` and rule ``rules[r]`` (NaN where a cell is unused)."""
    s = _data.draw_sample(rng, regression, n, budget, n_test=n_test, sigma=sigma)
    ybar = s.Y.mean()
    width = max(len(c) for c in cells)
    out = np.full((len(d_k_values), width, len(rules)), np.nan)
    for i, d_k in enumerate(d_k_values):
        W = _heads.orthogonal_heads(budget, d_k, budget // d_k)
        for j, h in enumerate(cells[i]):
            est = _heads.head_estimates(W, s.X, s.Y, s.X_test, bandwidth=h)
            for r, rule in enumerate(rules):
                if rule == "concat":  # transformer-style: W_O fitted by least squares (leave-one-out head outputs)
                    cfg = _heads.HeadConfig(W, bandwidth=h, rule="concat", output="fitted")
                    fit = _heads.ensemble_estimate(cfg, s.X, s.Y, s.X_test)
                else:
                    fit = _heads.combine(est, rule, y_mean=ybar)
                out[i, j, r] = np.mean((fit - s.m_test) ** 2)
    return out


@dataclass(frozen=True)
class BudgetResult(ReplicatedErrors):
    """The budget simulation at one ``(regression, n)``.

    Attributes
    ----------
    regression, n, budget, n_test, sigma : the setting
    d_k_values : head sizes, ``H = budget / d_k``
    rules : combination rules
    bandwidths : the tuning grid
    tuning_imse : ``(n_dk, n_h, n_rules)``, mean error over the tuning replicates
    tuning_se : same shape, its standard error
    tuned_bandwidth : ``(n_dk, n_rules)``, the grid value with the smallest tuning IMSE
    errors : ``(n_rules, n_dk, n_rep)``, per-replicate integrated squared errors of
        the tuned ensembles on the evaluation replicates (common random numbers)

    ``mean``, ``se`` and ``estimate``: the evaluation IMSE ``(n_rules, n_dk)``.
    """

    regression: str
    n: int
    budget: int
    n_test: int
    sigma: float
    d_k_values: tuple
    rules: tuple
    bandwidths: tuple
    tuning_imse: np.ndarray
    tuning_se: np.ndarray
    tuned_bandwidth: np.ndarray
    errors: np.ndarray

    @property
    def n_rep(self) -> int:
        return self.errors.shape[2]

    @property
    def n_heads(self) -> tuple:
        return tuple(self.budget // k for k in self.d_k_values)

    def _index(self, rule, d_k):
        return self.rules.index(one_of(rule, "rule", self.rules)), self.d_k_values.index(
            one_of(d_k, "d_k", self.d_k_values)
        )

    def paired_difference(self, a: tuple, b: tuple) -> Estimate:
        """``IMSE_a - IMSE_b`` with its paired s.e. for cells ``a = (rule, d_k)`` and ``b`` (unpacks as ``diff, se``)."""
        return Estimate.paired(self.errors[self._index(*a)], self.errors[self._index(*b)])

    def best_d_k(self, rule) -> int:
        """The head size with the smallest evaluation IMSE under ``rule``."""
        r = self.rules.index(one_of(rule, "rule", self.rules))
        return int(self.d_k_values[int(np.argmin(self.mean[r]))])

    def comparisons(self, rule) -> list[dict]:
        """Under ``rule``: every other head size against the best one, with the paired
        difference, its s.e., ``z = diff/se`` and whether ``diff > 3 se`` (the best is
        significantly better; :meth:`mhanw.infra.estimates.Estimate.exceeds`)."""
        best = self.best_d_k(rule)
        rows = []
        for d_k in self.d_k_values:
            if d_k == best:
                continue
            diff = self.paired_difference((rule, d_k), (rule, best))
            rows.append(
                {
                    "rule": rule,
                    "best_d_k": best,
                    "d_k": d_k,
                    "diff": float(diff.mean),
                    "se": float(diff.se),
                    "z": float(diff.z),
                    "significant": bool(diff.exceeds(SIGNIFICANCE)),
                }
            )
        return rows

    def rows(self) -> list[dict]:
        """One row per ``(rule, d_k)``: IMSE, s.e., tuned bandwidth and whether it sits on the
        edge of the grid (then the grid should be widened)."""
        out = []
        for r, rule in enumerate(self.rules):
            for i, d_k in enumerate(self.d_k_values):
                h = float(self.tuned_bandwidth[i, r])
                out.append(
                    {
                        "regression": self.regression,
                        "n": self.n,
                        "rule": rule,
                        "d_k": d_k,
                        "n_heads": self.budget // d_k,
                        "imse": float(self.mean[r, i]),
                        "se": float(self.se[r, i]),
                        "bandwidth": h,
                        "bandwidth_on_edge": h in (self.bandwidths[0], self.bandwidths[-1]),
                    }
                )
        return out


def budget_simulation(
    regression,
    n: int,
    *,
    budget: int = 8,
    d_k_values=None,
    bandwidths=BANDWIDTHS,
    rules=("average", "sum"),
    n_tune: int = 10,
    n_rep: int = 20,
    n_test: int = 300,
    sigma: float | None = None,
    seed=0,
    n_jobs: int = 1,
) -> BudgetResult:
    """Tune the bandwidth per ``(d_k, rule)`` and evaluate the tuned ensembles (Thm 6.1).

    Parameters
    ----------
    regression : str, RegressionFunction or DataModel
        ``m``, e.g. ``"additive"`` or ``"iso_cos8"``, or a whole
        :class:`mhanw.data.DataModel` (its inputs and noise are used).
    n : int
        Training sample size.
    budget : int
        ``D``, the total head dimension, which is also the number of input coordinates.
    d_k_values : sequence of int, optional
        Head sizes, each a divisor of ``budget`` (default: all divisors).
    bandwidths : sequence of float
        The tuning grid.
    rules : sequence of :data:`mhanw.heads.RULES` (``"concat"``: one response per head, ``W_O``
        fitted by least squares on the training sample's leave-one-out head outputs)
    n_tune, n_rep : int
        Tuning and evaluation replicates (independent streams: children 0 and 1 of ``seed``).
    n_test, sigma : test points per replicate, noise standard deviation (default
        :data:`mhanw.constants.SIGMA`, or the DataModel's level)
    seed : int or numpy.random.SeedSequence
    n_jobs : worker processes (results do not depend on it)
    """
    budget = positive_int(budget, "budget", maximum=None)  # bounded by the keys of one sample, n x budget
    n = positive_int(n, "n", maximum=None)
    check_entries("n x budget", n, budget)
    d_k_values = (
        head_sizes(budget)
        if d_k_values is None
        else tuple(positive_int(k, "d_k_values") for k in sequence(d_k_values, "d_k_values", "head sizes"))
    )
    bad = [k for k in d_k_values if budget % k]
    if bad or not d_k_values or len(set(d_k_values)) != len(d_k_values):
        raise ValueError(f"d_k_values: expected distinct divisors of budget = {budget}, got {d_k_values}")
    bandwidths = tuple(positive_scalar(h, "bandwidths") for h in sequence(bandwidths, "bandwidths", "bandwidths"))
    if not bandwidths:
        raise ValueError("bandwidths: expected at least one bandwidth")
    rules = tuple(one_of(r, "rules", _heads.RULES) for r in sequence(rules, "rules", "combination rules"))
    if not rules or len(set(rules)) != len(rules):
        raise ValueError(f"rules: expected distinct rules among {_heads.RULES}, got {rules}")
    m = _data.as_data_model(regression, sigma)
    positive_int(budget, "budget", minimum=m.min_dim)
    m.inputs.check_dimension(budget, "budget")
    n_tune, n_rep = (
        positive_int(v, name, minimum=2, maximum=MAX_REPLICATES, what="replicates")
        for v, name in ((n_tune, "n_tune"), (n_rep, "n_rep"))
    )
    n_test = positive_int(n_test, "n_test")
    sigma = m.sigma
    root = as_seed_sequence(seed)
    # a copy, so that the children do not depend on what the caller spawned before
    root = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)
    tune_seed, eval_seed = root.spawn(2)
    common = dict(regression=m, n=n, n_test=n_test, sigma=sigma, budget=budget, d_k_values=d_k_values, rules=rules)

    # stage 1: every bandwidth on the tuning replicates
    tune = run_replicates(
        functools.partial(_errors, cells=[bandwidths] * len(d_k_values), **common), n_tune, tune_seed, n_jobs=n_jobs
    )  # (R, n_dk, n_h, n_rules)
    tuning = Estimate.from_samples(tune, axis=0)
    tuning_imse, tuning_se = tuning.mean, tuning.se
    tuned = np.asarray(bandwidths)[np.argmin(tuning_imse, axis=1)]  # (n_dk, n_rules)

    # stage 2: the tuned bandwidths on fresh replicates; each distinct bandwidth evaluated once
    cells = [sorted(set(tuned[i].tolist())) for i in range(len(d_k_values))]
    ev = run_replicates(functools.partial(_errors, cells=cells, **common), n_rep, eval_seed, n_jobs=n_jobs)
    errors = np.empty((len(rules), len(d_k_values), n_rep))
    for i in range(len(d_k_values)):
        for r in range(len(rules)):
            errors[r, i] = ev[:, i, cells[i].index(tuned[i, r]), r]
    return BudgetResult(
        regression=m.name,
        n=n,
        budget=budget,
        n_test=n_test,
        sigma=sigma,
        d_k_values=d_k_values,
        rules=rules,
        bandwidths=bandwidths,
        tuning_imse=tuning_imse,
        tuning_se=tuning_se,
        tuned_bandwidth=tuned,
        errors=errors,
    )


# --------------------------------------------------------------------------- verdict rules

#: "H* grows nearly linearly with D": the slope of ln H* on ln D is at least this
#: (exact proportionality is 1; 0.9 allows the slow ln(nD) drift of d_k* under M1).
NEARLY_LINEAR_SLOPE = 0.9

#: A model "accounts for" a head size used in practice when it chooses it at some
#: n <= 10^PRACTICAL_LOG10_N: the largest training sets have about 10^13 tokens, and
#: 10^20 leaves seven orders of magnitude of margin.
PRACTICAL_LOG10_N = 20.0

#: The squared-bias exponents of the readings of "bias proportional to d_k^-2":
#: 2 (the squared bias, the chapter's reading), 4 (the bias itself, squared), and
#: 1 and 3 around them.
BIAS_EXPONENTS = (1, 2, 3, 4)

SECTION = "sec:thm61"


def _value(expr) -> float:
    """A law's exponent as a number, with the constants at :data:`mhanw.scaling.DEFAULT_CONSTANTS` (NaN if none)."""
    try:
        return float(expr.xreplace({_scaling.SYMBOLS[c]: v for c, v in _scaling.DEFAULT_CONSTANTS.items()}))
    except (AttributeError, TypeError, ValueError):
        return float("nan")


def _law_statistics(law) -> list:
    out = []
    for name, value in (
        ("limit of the local exponent p", law.p_limit),
        ("implied d of that limit, 2/p - 4", law.implied_d),
    ):
        if np.isfinite(_value(value)):
            out.append(Statistic(name, _value(value)))
    return out


def _fitted(values, name: str) -> dict:
    """``{fit name: exponent p}``: finite, nonzero exponents (the implied d is ``2/p - 4``)."""
    fitted = V.number_map(values, name)
    for key, p in fitted.items():
        if p == 0:
            raise ValueError(f"{name}[{key!r}]: expected a nonzero exponent (the implied d is 2/p - 4), got {brief(p)}")
    return fitted


#: A model's growth law (:class:`mhanw.derivation.GrowthLaw`), and a non-empty mapping of them.
_law = V.instance(_derivation.GrowthLaw, "a GrowthLaw (mhanw.derivation.growth_law)")
_laws = V.mapping_of(_law)


@checked(model_name=V.text, fitted=V.optional(_fitted), law=_law, claim=V.text, about=V.note)
def printed_law_verdict(
    model_name: str, law, fitted=None, *, claim: str = "thm-6.1/printed-law", about: str = ""
) -> Verdict:
    """Verdict on "k* grows as the printed law (ln n)^(2/(4+d)) for some d > 0" under one risk model.

    ``law`` is the model's :class:`mhanw.derivation.GrowthLaw` (symbolic, exact):
    "holds" when its exponent tends to ``2/(4+d)`` with ``d > 0``, "fails as stated"
    when sympy finds another law, "not checkable" when sympy finds none.  ``fitted``:
    optional ``{"p (integer)": p, "p (root)": p}`` of the least-squares fits, reported only.
    """

    fitted = {} if fitted is None else fitted
    stats = _law_statistics(law)
    for name, p in fitted.items():
        # a fit over the practical sample sizes of N_GRID, not the limit: its implied d differs from the limit's
        span = f"n = 1e{round(np.log10(N_GRID[0]))} to 1e{round(np.log10(N_GRID[-1]))}"
        stats.append(Statistic(f"exponent fitted over {span}, {name}", float(p)))
        stats.append(Statistic(f"implied d of that fit, {name}", 2.0 / float(p) - 4.0))
    verdict = NOT_CHECKABLE if law.kind == "undetermined" else (HOLDS if law.gives_printed_law else FAILS)
    return Verdict(
        claim=claim,
        statement=f"Under {model_name}{about}, d_k* grows as the printed law (ln n)^(2/(4+d)) for some d > 0",
        verdict=verdict,
        criterion=(
            f"sympy's law for {model_name}: {law.description}; the printed law needs the exponent "
            "p = d ln k*/d ln ln n to tend to 2/(4+d) with d > 0, i.e. 0 < p < 1/2 (exact, symbolic)"
            + ("; sympy finds no law for this model" if verdict == NOT_CHECKABLE else "")
        ),
        statistics=tuple(stats),
        section=SECTION,
    )


#: The risk models built to give the printed law (M2's variance was chosen to produce it; M3 replaces n by
#: an effective sample size ln n): that they give it is true by construction, not evidence for it.
BY_CONSTRUCTION = ("M2", "M3")


@checked(laws=_laws)
def printed_law_models_verdict(laws: dict) -> Verdict:
    """Verdict on "the printed law follows from some risk model", over the models ``{name: GrowthLaw}``.

    A tautology (``role``) when every model that gives the law is one of :data:`BY_CONSTRUCTION`."""
    names = [name for name, law in laws.items() if law.gives_printed_law]
    giving = [f"{name} ({'exactly' if laws[name].exact else 'asymptotically'})" for name in names]
    tautology = bool(names) and all(name in BY_CONSTRUCTION for name in names)
    return Verdict(
        role=V.TAUTOLOGY if tautology else V.PAPER,
        claim="thm-6.1/printed-law/some-model",
        statement="The printed law follows from some explicit risk model",
        verdict=HOLDS_UNDER if giving else FAILS,
        conditions=f"only under {join_list(giving)}" if giving else "",
        criterion=f"the symbolic law of each of {join_list(list(laws))} (exact)",
        section=SECTION,
    )


@checked(model_name=V.text, law=_law)
def logarithmic_growth_verdict(model_name: str, law) -> Verdict:
    """Verdict on the abstract's "d_k* grows logarithmically" under one model.

    "holds" for an exact power ``(ln n)^p``, ``0 < p <= 1``; "holds under the stated
    conditions" (read as ``k* = (ln n)^(p + o(1))``) when the exponent only tends
    to such a ``p``; "fails as stated" for a polynomial law or ``p > 1``.
    """

    stats = _law_statistics(law)
    conditions = ""
    if law.kind == "power of log n" and _value(law.p_limit) <= 1:
        verdict = HOLDS if law.exact else HOLDS_UNDER
        if not law.exact:
            conditions = f"in the weak sense d_k* = (ln n)^({law.p_limit} + o(1)), under {model_name}"
    elif law.kind in ("polynomial", "power of log n"):
        verdict = FAILS
    else:
        verdict = NOT_CHECKABLE
    return Verdict(
        claim="thm-6.1/logarithmic-growth",
        statement=f"Under {model_name}, d_k* grows logarithmically with n",
        verdict=verdict,
        conditions=conditions,
        criterion="sympy's law: an exact power (ln n)^p with 0 < p <= 1 holds; a limit p <= 1 of the "
        "local exponent holds in the weak sense; a polynomial law or p > 1 fails (exact)",
        statistics=tuple(stats),
        section=SECTION,
    )


@checked(model_name=V.text, slope=V.number, budgets=_budgets)
def linear_heads_verdict(model_name: str, slope: float, budgets) -> Verdict:
    """Verdict on "H* = floor(D/d_k*) grows nearly linearly with D": the least-squares
    slope of ln H* on ln D over ``budgets`` (a 1-D list of positive budgets ``D``) is at least
    :data:`NEARLY_LINEAR_SLOPE` (exact numbers)."""
    lo, hi = np.min(budgets), np.max(budgets)
    return Verdict(
        claim="thm-6.1/heads-linear-in-budget",
        statement=f"Under {model_name}, H* = floor(D/d_k*) grows nearly linearly with the budget D",
        verdict=HOLDS if slope >= NEARLY_LINEAR_SLOPE else FAILS,
        criterion=(
            f"slope of ln H* on ln D for D = {lo}..{hi} with the integer "
            f"minimiser d_k* at n = 10^8, at least {NEARLY_LINEAR_SLOPE} (exact)"
        ),
        statistics=(Statistic("slope of ln H* on ln D", slope),),
        section=SECTION,
    )


@checked(model_name=V.text, log10_n=V.number_or_missing)
def practice_verdict(model_name: str, log10_n: float) -> Verdict:
    """Verdict on "the law accounts for BERT's d_k = 64 at D = 768": the model chooses it at
    some n <= 10^PRACTICAL_LOG10_N (``log10_n`` NaN: at no n < 10^300, and the claim fails)."""
    x = V.number_or_missing(log10_n, "log10_n")
    ok = np.isfinite(x) and x <= PRACTICAL_LOG10_N
    return Verdict(
        claim="thm-6.1/practice",
        statement=f"Under {model_name}, the optimal head size accounts for BERT's d_k = 64 at D = 768",
        verdict=HOLDS if ok else FAILS,
        criterion=(
            f"the real root equals 64 at some n <= 10^{PRACTICAL_LOG10_N:g} (the largest training "
            "sets have about 10^13 tokens); exact"
        ),
        statistics=(Statistic("log10 n at which d_k* = 64", x),) if np.isfinite(x) else (),
        section=SECTION,
    )


@checked(rule=V.text, cells=V.labelled_estimates, n_se=V.nonnegative)
def small_heads_verdict(rule: str, cells, *, n_se: float = SIGNIFICANCE) -> Verdict:
    """Verdict on "many small heads beat few big ones" with real NW heads combined by ``rule``.

    ``cells``: ``[(label, diff, se), ...]``, one per simulated setting, with ``diff`` =
    IMSE of the best small configuration minus that of the best big one (paired over
    common random numbers).  "holds" when every ``diff < -n_se se``; "fails as stated"
    when some ``diff > n_se se`` (a setting where few big heads win significantly);
    otherwise "undecided at this size".
    """

    stats, z = [], []
    for label, diff, se in V.labelled_estimates(cells, "cells"):
        stats.append(Statistic(f"IMSE(small) - IMSE(big), {label}", diff, se))
        z.append(diff / se if se > 0 else np.sign(diff) * np.inf)
    z = np.asarray(z)
    verdict = HOLDS if np.all(z < -n_se) else (FAILS if np.any(z > n_se) else UNDECIDED)
    how = {
        "average": "averaged (the theorem's convex ensemble)",
        "sum": "summed (additive, like concatenation)",
        "concat": "concatenated through a fitted output projection (as a transformer combines them)",
    }
    return Verdict(
        claim=f"thm-6.1/small-heads/{rule}",
        statement=f"With real NW heads {how.get(rule, rule)}, many small heads (d_k <= D/4) beat few big ones",
        verdict=verdict,
        criterion=(
            f"paired difference of the best small and the best big configuration in every setting: "
            f"holds when all are below -{n_se:g} s.e., fails when one is above +{n_se:g} s.e"
        ),
        statistics=tuple(stats),
        section=SECTION,
    )


def bias_reading_models(base="M1", exponents=BIAS_EXPONENTS) -> dict:
    """The model ``base`` with the squared bias ``c_B/k^a`` for each ``a`` in ``exponents``,
    ``{a: MSEModel}`` (derived symbolically by :mod:`mhanw.scaling` like any reader's model)."""
    exps = tuple(positive_int(a, "exponents") for a in sequence(exponents, "exponents", "positive integers"))
    if not exps or len(set(exps)) != len(exps):
        raise ValueError(f"exponents: expected distinct positive integers, got {brief(exponents)}")
    try:
        name = _scaling.model(base).name  # a model name or an MSEModel
    except ValueError as exc:
        raise ValueError(f"base: {exc}") from None
    return {a: _scaling.model(base, bias_law=f"c_B/k**{a}", name=f"{name}, B^2 = c_B/k^{a}") for a in exps}


@checked(laws=_laws, base=V.text)
def bias_reading_verdict(laws: dict, base: str = "M1") -> Verdict:
    """Verdict on "the printed law follows from ``base`` under some reading of 'bias ∝ d_k^-2'".

    ``laws``: ``{a: GrowthLaw}`` for the squared-bias exponents ``a``.  "fails as stated"
    when no reading gives the printed law; "holds under the stated conditions" naming
    the readings that do.  Exact (symbolic).
    """
    giving = [a for a, law in laws.items() if law.gives_printed_law]
    stats = []
    for a, law in laws.items():
        if np.isfinite(_value(law.p_limit)):
            stats.append(Statistic(f"limit of p, B^2 = c_B/k^{a}", _value(law.p_limit)))
    return Verdict(
        claim="thm-6.1/printed-law/bias-readings",
        statement=(
            f"Under {base} with some reading of 'bias proportional to d_k^-2' (squared bias "
            f"c_B/k^a, a = {join_list([str(a) for a in laws], 'or')}), d_k* grows as the printed law"
        ),
        verdict=HOLDS_UNDER if giving else FAILS,
        conditions=(f"only for a = {join_list([str(a) for a in giving])}" if giving else ""),
        criterion="sympy's law for each reading, re-derived from the risk model (exact)",
        statistics=tuple(stats),
        section=SECTION,
    )


# --------------------------------------------------------------------------- the chapter's numbers

#: The numerical table of Theorem 6.1: the budget ``D = 512`` and the sample sizes ``n = 1e2, 1e4, ..., 1e12``,
#: with the constants of :data:`mhanw.scaling.DEFAULT_CONSTANTS` (``c_B = c_V = 1``, ``d = tau = c = 1``).
BUDGET = 512
N_GRID = _scaling.DEFAULT_N_VALUES

#: The budgets over which the slope of ``ln H*`` on ``ln D`` is fitted, at ``n = 1e8``.
D_GRID = (256, 512, 1024, 2048, 4096)

#: The constants ``(c_B, c_V)`` of the sensitivity table.
CONSTANTS = ((1, 1), (10, 1), (1, 10), (0.1, 1))

#: The readings of "bias proportional to d_k^-2" by their squared-bias exponent ``a``, in words (tables) and
#: in TeX (the paper's table).
READING = {1: "bias ∝ k^-1/2", 2: "squared bias ∝ k^-2 (our reading)", 3: "bias ∝ k^-3/2", 4: "bias ∝ k^-2"}
READING_TEX = {
    1: r"bias $\propto k^{-1/2}$",
    2: r"squared bias $\propto k^{-2}$ (ours)",
    3: r"bias $\propto k^{-3/2}$",
    4: r"bias $\propto k^{-2}$",
}

#: The macro names of the built-in models (a reader's model is ``Chosen``) and of the default regressions.
MODEL_MACROS = {"M1": "MOne", "M2": "MTwo", "M3": "MThree", "M4a": "MFourA", "M4b": "MFourB", "M5": "MFive"}
REGRESSION_MACROS = {"additive": "Additive", "iso_cos8": "IsoCos"}

#: The verdict macros of the paper's section, by claim.
VERDICT_MACROS = {
    "VerdictPrinted": "thm-6.1/printed-law",
    "VerdictPrintedSome": "thm-6.1/printed-law/some-model",
    "VerdictLog": "thm-6.1/logarithmic-growth",
    "VerdictLinearH": "thm-6.1/heads-linear-in-budget",
    "VerdictBert": "thm-6.1/practice",
    "VerdictReadings": "thm-6.1/printed-law/bias-readings",
    "VerdictSmallAvg": "thm-6.1/small-heads/average",
    "VerdictSmallSum": "thm-6.1/small-heads/sum",
}

#: The rules whose "many small heads beat few big ones" Theorem 6.1 states (the parameter ``rules`` includes both).
STATED_RULES = ("average", "sum")


def setup(fidelity: str, seed: int, params) -> tuple[dict, list, dict]:
    """The chapter's sizes, simulation cells and random streams; also sets the figure style.

    ``params``: the checked parameters (:func:`mhanw.infra.params.check_parameters`).  Returns
    ``(sizes, cells, streams)``: ``sizes`` at ``fidelity`` (``sim_n``, ``n_tune``, ``n_rep``, ``n_test``,
    ``n_jobs``), ``cells`` the simulated ``(regression, n)`` pairs (regressions outer, sample sizes inner)
    and ``streams`` one child of ``SeedSequence(seed)`` per cell (the budget simulation of Thm 6.1)."""
    from ..infra import figures
    from ..infra.notebook import by_fidelity

    mapping_with_keys(params, "params", ("sim_n", "regressions"))
    sequence(params["sim_n"], "params['sim_n']", "sample sizes")
    for i, m in enumerate(sequence(params["regressions"], "params['regressions']", "regression functions")):
        try:
            hash(m)  # a key of the streams and the simulations
        except TypeError:
            raise ValueError(
                f"params['regressions'][{i}]: expected a regression function's name, got {brief(m)}"
            ) from None
    root = as_seed_sequence(seed)
    # a copy, so that the children do not depend on what the caller spawned before (an int seed: the same tree)
    root = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)

    sizes = by_fidelity(
        fidelity,
        quick=dict(sim_n=list(params["sim_n"]), n_tune=6, n_rep=12, n_test=200, n_jobs=2),
        paper=dict(sim_n=list(params["sim_n"]), n_tune=20, n_rep=100, n_test=300, n_jobs=2),
    )
    cells = [(m, n) for m in params["regressions"] for n in sizes["sim_n"]]
    streams = dict(zip(cells, root.spawn(len(cells))))
    figures.use_style()
    return sizes, cells, streams


def risk_models(params) -> tuple:
    """The reader's risk model and every model the chapter derives (Thm 6.1).

    The reader's model is the built-in ``params["model"]`` with each non-empty ``bias_law``,
    ``variance_law`` or ``combination`` replacing that ingredient (:func:`mhanw.scaling.model`).
    Returns ``(chosen, models)``: that :class:`mhanw.scaling.MSEModel`, and M1-M5 with it appended
    when it is none of them."""
    mapping_with_keys(params, "params", ("model", "bias_law", "variance_law", "combination"))
    for key in ("model", "bias_law", "variance_law", "combination"):
        if params[key] is not None and not isinstance(params[key], str):
            raise ValueError(
                f'params[{key!r}]: expected a string ("" or None keeps the model\'s), '
                f"got {type(params[key]).__name__} {brief(params[key])}"
            )
    chosen = _scaling.model(
        params["model"] or None,
        bias_law=params["bias_law"] or None,
        variance_law=params["variance_law"] or None,
        combination=params["combination"] or None,
    )
    models = [_scaling.model(name) for name in _scaling.BUILTIN_MODELS]
    if chosen not in models:
        models.append(chosen)
    return chosen, models


@notebook_helper
def minimiser_table(models) -> pd.DataFrame:
    """The integer minimisers of Thm 6.1's numerical table: one row per ``(model, n)`` for ``n`` in
    :data:`N_GRID` at the budget :data:`BUDGET` (:func:`mhanw.scaling.scaling_table`: ``d_k``, ``n_heads``,
    the real root ``d_k_real``, the ratios to every asymptotic formula, the local exponent)."""
    import pandas as pd

    return pd.DataFrame(_scaling.scaling_table(models, list(N_GRID), BUDGET))


def _fit(rows, column: str, name: str = "table") -> tuple[float, float]:
    """``(A, p)`` of the least-squares fit ``rows[column] = A (ln n)^p`` (:func:`mhanw.scaling.fit_power_law`)
    over the rows of one model.  A column with fewer than two distinct values has no exponent (the fit's
    slope would be rounding, and ``2/p - 4`` astronomically large): ``ValueError`` naming ``name``."""
    for c in ("n", column):
        values = rows[c].unique()
        if values.size < 2:
            raise ValueError(
                f"{name}: the column {c!r} of model {rows['model'].iloc[0]!r} has fewer than two "
                f"distinct values ({brief(values.tolist())}), so d_k* = A (ln n)^p has no exponent p"
            )
    return _scaling.fit_power_law(rows["n"], rows[column])


def power_law_fits(table: pd.DataFrame) -> pd.DataFrame:
    """The fit ``d_k* = A (ln n)^p`` of every model of ``table`` (:func:`minimiser_table`), for the integer
    minimiser (``d_k``) and the real root (``d_k_real``), with the ``d`` that the printed exponent
    ``2/(4+d)`` would need, ``d = 2/p - 4``: one row per model, columns ``A (col)``, ``p (col)``,
    ``implied d (col)``.  Each model needs at least two distinct ``n`` and ``d_k``."""
    import pandas as pd

    table_with_columns(table, "table", ("model", "n", "d_k", "d_k_real"), finite=("n", "d_k", "d_k_real"))
    fits = {}
    for name, rows in table.groupby("model", sort=False):
        fits[name] = {}
        for column in ("d_k", "d_k_real"):
            A, p = _fit(rows, column, "table")
            fits[name].update({f"A ({column})": A, f"p ({column})": p, f"implied d ({column})": 2 / p - 4})
    return pd.DataFrame(fits).T


@notebook_helper
def sensitivity_table(chosen) -> pd.DataFrame:
    """``d_k*`` of M1 and of the reader's model ``chosen`` at :data:`N_GRID` for each ``(c_B, c_V)`` of
    :data:`CONSTANTS`: rows ``(model, "c_B=.., c_V=..")``, one column per ``n``.  The library's ``c_bias``
    scales the bias, so ``c_B`` enters as ``c_bias = sqrt(c_B)``."""
    import pandas as pd

    chosen = _risk_model(chosen, "chosen")
    sens = {
        (m.name, f"c_B={cb}, c_V={cv}"): [
            _scaling.optimal_head_dim(x, BUDGET, m, c_bias=np.sqrt(cb), c_var=cv) for x in N_GRID
        ]
        for m in dict.fromkeys([_scaling.model("M1"), chosen])
        for (cb, cv) in CONSTANTS
    }
    return pd.DataFrame(sens, index=pd.Index(list(N_GRID), name="n")).T


@notebook_helper
def practice_table(models) -> pd.DataFrame:
    """Thm 6.1 against practice, one row per model: ``log10 n`` at which the real root is BERT-base's
    ``d_k = 64`` (``D = 768``) and GPT-3's ``d_k = 128`` (``D = 12288``), NaN when no ``n < 10^300`` gives
    it; and the slope of ``ln H*`` on ``ln D`` over :data:`D_GRID` at ``n = 1e8``, with
    ``H* = floor(D/d_k*)`` of the integer minimiser (1 = exactly linear)."""
    import pandas as pd

    models = _risk_models(models, "models")

    def slope(m):
        heads = [_scaling.n_heads(_scaling.optimal_head_dim(1e8, D, m), D) for D in D_GRID]
        return np.polyfit(np.log(D_GRID), np.log(heads), 1)[0]

    return pd.DataFrame(
        {
            m.name: {
                "log10 n for d_k=64, D=768": _scaling.sample_size_for_head_dim(64, 768, m),
                "log10 n for d_k=128, D=12288": _scaling.sample_size_for_head_dim(128, 12288, m),
                "slope of ln H* on ln D": slope(m),
            }
            for m in models
        }
    ).T


def bias_readings(base="M1") -> tuple[dict, dict, pd.DataFrame]:
    """The law of ``base`` under each reading of "bias proportional to d_k^-2" (Thm 6.1): the squared bias
    ``c_B/k^a`` for ``a`` in :data:`BIAS_EXPONENTS` (:func:`bias_reading_models`), each re-derived by sympy.

    Returns ``(readings, laws, rows)``: ``{a: MSEModel}``, ``{a: GrowthLaw}`` and a table indexed by ``a``
    (the reading, its leading order, whether its derivation is checked, its law, ``d_k*`` at ``n = 1e12``
    and the fitted exponents with their implied ``d``)."""
    import pandas as pd

    readings = bias_reading_models(base)
    laws = {a: _derivation.growth_law(m) for a, m in readings.items()}
    table = minimiser_table(list(readings.values()))
    rows = []
    for a, m in readings.items():
        r = table[table["model"] == m.name]
        p_int, p_root = (_fit(r, c, f"base (the reading c_B/k^{a})")[1] for c in ("d_k", "d_k_real"))
        rows.append(
            {
                "a": a,
                "reading": READING.get(a, f"squared bias ∝ k^-{a}"),
                "squared bias": f"c_B/k^{a}",
                "leading order": sp.sstr(_derivation.formula(m)),
                "derivation checked": all(_derivation.symbolic_checks(m).values()),
                "law": laws[a].description,
                "printed law for some d > 0": laws[a].gives_printed_law,
                "d_k* at n = 1e12": int(r["d_k"].iloc[-1]),
                "p (integer)": p_int,
                "implied d (integer)": 2 / p_int - 4,
                "p (root)": p_root,
                "implied d (root)": 2 / p_root - 4,
            }
        )
    return readings, laws, pd.DataFrame(rows).set_index("a")


def reading_tables(readings: dict, reading_laws: dict, reading_rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table of the bias readings (:func:`bias_readings`) in two narrower ones for the book, both
    indexed by the squared-bias exponent ``a``: the formulas (the reading in words, the squared bias, the
    leading order and the law as maths cells, :func:`mhanw.infra.tables.math_cell`; whether the derivation is
    checked and the law printed) and the numbers (``d_k*`` at ``n = 1e12``, the fitted exponents and their
    implied ``d``).  ``readings``: ``{a: MSEModel}``; ``reading_laws``: ``{a: GrowthLaw}``."""
    import pandas as pd

    from ..infra.tables import math_cell

    mapping_with_keys(readings, "readings")
    mapping_with_keys(_laws(reading_laws, "reading_laws"), "reading_laws", list(readings))
    numbers = ["d_k* at n = 1e12", "p (integer)", "implied d (integer)", "p (root)", "implied d (root)"]
    table_with_columns(reading_rows, "reading_rows", ["derivation checked", *numbers], rows=list(readings))
    formulas = pd.DataFrame(
        {
            a: {
                "reading": READING_TEX.get(a, f"squared bias $\\propto k^{{-{a}}}$"),
                "squared bias": math_cell(_risk_model(m, f"readings[{a!r}]").bias_law),
                "leading order": math_cell(_derivation.formula(m)),
                "law": math_cell(_derivation.law_latex(m)),
                "derivation checked": reading_rows.loc[a, "derivation checked"],
                "printed law for some d > 0": reading_laws[a].gives_printed_law,
            }
            for a, m in readings.items()
        }
    ).T
    return formulas.rename_axis("a"), reading_rows.loc[list(readings), numbers]


@notebook_helper
def derivation_table(checks: dict, laws: dict, models) -> pd.DataFrame:
    """One row per model: its symbolic checks (``{model: {check: bool}}``, :func:`mhanw.derivation.symbolic_checks`),
    its law (``{model: GrowthLaw}``) as a formula (a maths cell, :func:`mhanw.infra.tables.math_cell`, of
    :func:`mhanw.derivation.law_latex`), the ``d = 2/p - 4`` the printed exponent would need (empty for a
    polynomial law) and whether that law is the printed one for some ``d > 0``.  ``models``: the risk
    models, one for every name of ``checks``."""
    import pandas as pd

    from ..infra.tables import math_cell

    checks = V.mapping_of(V.flag_map)(checks, "checks")
    laws = mapping_with_keys(_laws(laws, "laws"), "laws", list(checks))
    by_name = mapping_with_keys({m.name: m for m in _risk_models(models, "models")}, "models", list(checks))
    return pd.DataFrame(
        {
            name: {
                **checks[name],
                "law": math_cell(_derivation.law_latex(by_name[name])),
                "d = 2/p - 4": laws[name].implied_d,
                "printed law for some d > 0": laws[name].gives_printed_law,
            }
            for name in checks
        }
    ).T


@notebook_helper
def asymptotic_table(asym: dict) -> pd.DataFrame:
    """``{model: rows of mhanw.derivation.asymptotic_check}`` as one table indexed by ``(model, log10_n)``:
    the real root of the FOC in arbitrary precision divided by each asymptotic formula, and its local exponent."""
    import pandas as pd

    mapping_with_keys(asym, "asym")
    if not asym:
        raise ValueError("asym: expected at least one model's rows, got an empty mapping")
    for name, rows in asym.items():
        for i, row in enumerate(_rows(rows, f"asym[{name!r}]", ("log10_n",))):
            V.number(row["log10_n"], f"asym[{name!r}][{i}]['log10_n']")
    return pd.concat({name: pd.DataFrame(rows).set_index("log10_n") for name, rows in asym.items()}, names=["model"])


def simulate(params, sizes: dict, cells, streams: dict) -> dict:
    """Real Gaussian NW heads under the fixed budget ``params["sim_budget"]`` (Thm 6.1): one
    :func:`budget_simulation` per ``(regression, n)`` of ``cells`` with its stream, the data model of
    ``params`` (inputs, noise, sigma) and its rules.  Returns ``{(regression, n): BudgetResult}``."""
    mapping_with_keys(params, "params", ("inputs", "noise", "sigma", "sim_budget", "rules"))
    mapping_with_keys(sizes, "sizes", ("n_tune", "n_rep", "n_test", "n_jobs"))
    mapping_with_keys(streams, "streams", _cells(cells, "cells"))
    sequence(params["rules"], "params['rules']", "combination rules")
    return {
        (m, n): budget_simulation(
            _data.data_model(m, inputs=params["inputs"], noise=params["noise"], sigma=params["sigma"]),
            n,
            budget=params["sim_budget"],
            rules=tuple(params["rules"]),
            n_tune=sizes["n_tune"],
            n_rep=sizes["n_rep"],
            n_test=sizes["n_test"],
            seed=streams[m, n],
            n_jobs=sizes["n_jobs"],
        )
        for m, n in cells
    }


def simulation_tables(sims: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tables of the budget simulation ``{(regression, n): BudgetResult}``: ``rows`` (one per
    ``(regression, n, rule, d_k)``: IMSE, s.e., tuned bandwidth, :meth:`BudgetResult.rows`), ``comparisons``
    (under each rule, every head size against the best one, :meth:`BudgetResult.comparisons`) and
    ``rule_gap`` (at each rule's best head size, sum minus average with its paired s.e.)."""
    import pandas as pd

    _simulations(sims, "sims", rules=("average", "sum"))
    rows = pd.DataFrame([row for s in sims.values() for row in s.rows()])
    comparisons = pd.DataFrame(
        [
            {"regression": m, "n": n, **row}
            for (m, n), s in sims.items()
            for rule in s.rules
            for row in s.comparisons(rule)
        ]
    )
    rule_gap = pd.DataFrame(
        [
            {
                "regression": m,
                "n": n,
                "best d_k (average)": s.best_d_k("average"),
                "best d_k (sum)": s.best_d_k("sum"),
                **dict(
                    zip(
                        ["sum - average", "se"],
                        s.paired_difference(("sum", s.best_d_k("sum")), ("average", s.best_d_k("average"))),
                    )
                ),
            }
            for (m, n), s in sims.items()
        ]
    )
    return rows, comparisons, rule_gap


# --------------------------------------------------------------------------- the chapter's records


def decide_law(chosen, laws: dict, fits: pd.DataFrame, practice: pd.DataFrame, reading_laws: dict):
    """The records of the head-size law (Thm 6.1), in a new :class:`mhanw.infra.verdicts.Ledger`: the printed
    law, logarithmic growth, heads linear in the budget and BERT's head size under the reader's model
    ``chosen``; the printed law under some model (``laws``: ``{model: GrowthLaw}``); and under every
    reading of the bias (``reading_laws``, :func:`bias_readings`).  ``fits`` and ``practice`` are the
    tables of :func:`power_law_fits` and :func:`practice_table`."""
    chosen = _risk_model(chosen, "chosen")
    name = chosen.name
    mapping_with_keys(_laws(laws, "laws"), "laws", (name,))
    table_with_columns(fits, "fits", ("p (d_k)", "p (d_k_real)"), finite=("p (d_k)", "p (d_k_real)"), rows=(name,))
    table_with_columns(
        practice,
        "practice",
        ("slope of ln H* on ln D", "log10 n for d_k=64, D=768"),
        finite=("slope of ln H* on ln D",),
        rows=(name,),
    )
    _laws(reading_laws, "reading_laws")
    ledger = V.Ledger("06_optimal_head_size")
    about = " (the summaries' own ingredients)" if name == "M1" else ""
    fitted = {"integer minimiser": fits.loc[name, "p (d_k)"], "real root": fits.loc[name, "p (d_k_real)"]}
    ledger.add(printed_law_verdict(name, laws[name], fitted, about=about))
    ledger.add(printed_law_models_verdict(laws))
    ledger.add(logarithmic_growth_verdict(name, laws[name]))
    ledger.add(linear_heads_verdict(name, practice.loc[name, "slope of ln H* on ln D"], D_GRID))
    ledger.add(practice_verdict(name, practice.loc[name, "log10 n for d_k=64, D=768"]))
    ledger.add(bias_reading_verdict(reading_laws))
    return ledger


def _small_vs_big(s: BudgetResult, rule: str) -> Estimate:
    """Paired IMSE difference: the best small configuration (``d_k <= D/4``) minus the best big one."""
    r = s.rules.index(rule)
    small = [k for k in s.d_k_values if k <= s.budget // 4]
    big = [k for k in s.d_k_values if k > s.budget // 4]

    def best(ks):
        return min(ks, key=lambda k: s.mean[r, s.d_k_values.index(k)])

    return s.paired_difference((rule, best(small)), (rule, best(big)))


def decide_heads(ledger, sims: dict, rules) -> None:
    """Add to ``ledger`` the records "many small heads beat few big ones" with real NW heads (Thm 6.1), one per
    rule of :data:`STATED_RULES` among ``rules``, from the budget simulation ``{(regression, n): BudgetResult}``."""
    V.instance(V.Ledger, "a Ledger (mhanw.infra.verdicts.Ledger)")(ledger, "ledger")
    rules = sequence(rules, "rules", "combination rules")
    _simulations(sims, "sims", rules=[r for r in STATED_RULES if r in rules])
    for rule in [r for r in STATED_RULES if r in rules]:
        ledger.add(
            small_heads_verdict(rule, [(f"{m}, n = {n}", *_small_vs_big(s, rule)) for (m, n), s in sims.items()])
        )


@notebook_helper
def takeaway(sentence: str) -> None:
    """Display a figure's takeaway, ``**Takeaway.** sentence``: one sentence (Markdown, ``$math$`` allowed)
    saying the figure's lesson, as :func:`law_takeaway` and :func:`heads_takeaway` write it."""
    from IPython.display import Markdown, display

    if not isinstance(sentence, str) or not sentence.strip().endswith("."):
        raise ValueError(f"sentence: expected one sentence ending with a full stop, got {brief(sentence)}")
    display(Markdown(f"**Takeaway.** {sentence.strip()}"))


def _printed_law_models(laws) -> tuple[list, list]:
    """The names of the models of ``laws`` (``{name: GrowthLaw}``) that give the printed law, and of the others."""
    laws = _laws(laws, "laws")
    giving = [name for name, law in laws.items() if law.gives_printed_law]
    return giving, [name for name in laws if name not in giving]


@notebook_helper
def law_takeaway(laws: dict) -> str:
    """The lesson of the key figure (:func:`law_figure`) in one sentence, generated from the models' laws
    ``{name: GrowthLaw}``: which models settle in panel (b)'s band of the printed law, whether they were built
    to (:data:`BY_CONSTRUCTION`), and which leave it."""
    giving, others = _printed_law_models(laws)
    if not giving:
        return f"No risk model settles in the band of panel (b): none of {join_list(others)} gives the printed law."
    built = all(name in BY_CONSTRUCTION for name in giving)
    text = f"Only {join_list(giving)} settle in the band of panel (b)" + (
        ", the models whose variance was chosen to put them there" if built else ""
    )
    if others:
        text += f", while {join_list(others)} leave it"
    if built and "M1" in others:
        text += ": the printed law comes from the variance one assumes, not from the summaries' own ingredients"
    return text + "."


#: The largest ``log10 n`` of panel (b) of :func:`law_figure` (``n = 1e300``, below a double's limit).
FAR_LOG10_N = 300


@notebook_helper
def law_caption(laws: dict) -> str:
    """The caption of the key figure (:func:`law_figure`): what each panel draws, that it has no error bars
    (every number is computed from a risk model, nothing is sampled), and its lesson with M1's local exponent
    at ``n = 10^FAR_LOG10_N`` and its symbolic limit (``laws``: ``{name: GrowthLaw}``, M1's among them)."""
    laws = mapping_with_keys(_laws(laws, "laws"), "laws", ("M1",))
    p_far, p_limit = _scaling.local_slope(10.0**FAR_LOG10_N, BUDGET, _scaling.model("M1")), laws["M1"].p_limit
    limit = _value(p_limit)
    where = "inside" if 0 < limit < 0.5 else "outside"
    return (
        f"(a) The integer minimiser $d_k^*$ of each risk model (one colour and marker per model) against "
        f"$n$ under the budget $D={BUDGET}$, with its asymptotic formula dashed. (b) The local exponent "
        "$p(n)=d\\ln k^*/d\\ln\\ln n$ at the real root: the printed law needs $p$ to approach "
        "$2/(4+d)$, inside the shaded band $0<p<1/2$. No error bars: every curve is computed from its risk "
        f"model, nothing is sampled. The lesson: M1, built from the summaries' own ingredients, has "
        f"$p={p_far:.2f}$ at $n=10^{{{FAR_LOG10_N}}}$ and tends to ${sp.latex(p_limit)}$, {where} the band."
    )


#: How each combination rule's heads are named in a sentence.
RULE_WORDS = {"average": "averaged", "sum": "summed", "concat": "concatenated"}


@notebook_helper
def heads_takeaway(sims: dict) -> str:
    """The lesson of the real-heads figure (:func:`budget_figure`) in one sentence, generated from the
    simulation ``{(regression, n): BudgetResult}``: under each rule, in how many settings many small heads
    (``d_k <= D/4``) or few big ones have the lowest IMSE, and whether that depends on the rule."""
    sims = _simulations(sims, "sims")
    first = next(iter(sims.values()))
    rules, total = [r for r in first.rules if all(r in s.rules for s in sims.values())], len(sims)
    clauses, winners = [], set()
    for rule in rules:
        best = [s.best_d_k(rule) for s in sims.values()]
        small = sum(k <= s.budget // 4 for k, s in zip(best, sims.values()))
        values = "best $d_k$ " + join_list([str(k) for k in sorted(set(best))], "or")
        if small in (0, total):
            kind = "many small heads" if small else "few big heads"
            winners.add(kind)
            where = "every setting" if total > 1 else "the one setting"
            clauses.append(f"{RULE_WORDS.get(rule, rule)}, {kind} have the lowest IMSE in {where} ({values})")
        else:
            winners.add("mixed")
            clauses.append(
                f"{RULE_WORDS.get(rule, rule)}, many small heads have the lowest IMSE in {small} of the "
                f"{total} settings and few big heads in the others ({values})"
            )
    lead = (
        "Which head size wins depends on how the heads are combined"
        if len(winners) > 1 or "mixed" in winners
        else "The same kind of head wins however the heads are combined"
    )
    return f"{lead}: {'; '.join(clauses)}."


# --------------------------------------------------------------------------- the chapter's figures

#: The asymptotic formula drawn (dashed) for each model in :func:`law_figure`; other models draw their
#: closed form, or their leading order.
MAIN_FORMULA = {"M1": "log_ratio", "M2": "law", "M5": "log_n"}

#: Markers and line styles of the models of :func:`law_figure`, one each, so that it reads in greyscale.
MARKERS = ["o", "s", "^", "v", "D", "P", "X"]
STYLES = ["-", "--", "-.", ":", (0, (5, 1.5, 1, 1.5, 1, 1.5)), (0, (6, 2)), (0, (1, 1))]


@notebook_helper
def law_figure(models):
    """The key figure of Thm 6.1 (``06_optimal_head_size``), two panels for the risk models ``models``:
    (a) the integer minimiser ``d_k*`` against ``n`` from 1e2 to 1e12 at the budget :data:`BUDGET` (steps),
    with its asymptotic formula (dashed; for M1 also the Lambert leading order, dotted); (b) the local
    exponent ``p(n) = d ln k*/d ln ln n`` at the real root up to ``n = 1e300``, with the band ``0 < p < 1/2``
    where the printed law ``(ln n)^(2/(4+d))`` holds for some ``d > 0``.  Returns the matplotlib figure."""
    import pandas as pd

    from ..infra import figures

    models = _risk_models(models, "models")
    n_dense = 10.0 ** np.arange(2, 12.01, 0.125)
    log10_far = np.geomspace(2, FAR_LOG10_N, 120)
    fig, (ax_a, ax_b) = figures.panels(2, height=3.1)
    for i, m in enumerate(models):
        colour, marker, style = f"C{i}", MARKERS[i % len(MARKERS)], STYLES[i % len(STYLES)]
        dense = pd.DataFrame(_scaling.scaling_table(m, n_dense, BUDGET))
        label = MAIN_FORMULA.get(m.name, "closed_form" if m.closed_form is not None else "leading_order")
        ax_a.step(dense["n"], dense["d_k"], where="mid", color=colour, lw=1.2)
        ax_a.plot(dense["n"][i::12], dense["d_k"][i::12], color=colour, marker=marker, ms=3.5, ls="none", label=m.name)
        if f"asym_{label}" in dense:
            ax_a.plot(dense["n"], dense[f"asym_{label}"], color=colour, ls="--", lw=0.9)
        if m.name == "M1":
            ax_a.plot(dense["n"], dense["asym_leading_order"], color=colour, ls=":", lw=1.1)
        ax_b.plot(
            log10_far,
            [_scaling.local_slope(10.0**x, BUDGET, m) for x in log10_far],
            color=colour,
            ls=style,
            marker=marker,
            ms=3.5,
            markevery=(2 * i, 16),
            label=m.name,
        )
    ax_a.axhline(BUDGET, color="grey", lw=0.6)
    for ls, text in [("-", "integer minimiser"), ("--", "asymptotic formula"), (":", "M1: Lambert leading order")]:
        ax_a.plot([], [], color="k", ls=ls, lw=1, label=text)
    ax_a.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=3, columnspacing=0.8)  # colours, then line styles
    ax_a.set(
        xscale="log",
        yscale="log",
        ylim=(1, 1.6 * BUDGET),
        xlabel="sample size $n$",
        ylabel=rf"$d_k^*$ (budget $D={BUDGET}$)",
        title=r"(a) optimal head size $d_k^*$",
    )
    ax_b.axhspan(0, 0.5, color="grey", alpha=0.15, lw=0)
    ax_b.axhline(0.4, color="k", ls=":", lw=0.8)
    ax_b.text(2.2, 0.08, "printed law for some $d>0$ ($p<1/2$)", fontsize=7)
    ax_b.text(3.2, 1.28, r"M4a, M4b: $p\propto\ln n$, off the scale", fontsize=7, va="top")
    ax_b.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=4, columnspacing=0.8)
    ax_b.set(
        xscale="log",
        xlim=(2, FAR_LOG10_N),
        ylim=(0, 1.8),
        xlabel=r"$\log_{10} n$",
        ylabel=r"$p(n)=d\ln k^*/d\ln\ln n$",
        title=r"(b) local exponent $p(n)$ of the law",
    )
    ax_b.set_xticks([2, 5, 12, 30, 100, 300], ["2", "5", "12", "30", "100", "300"])
    ax_b.minorticks_off()
    return fig


#: The regression functions of the default simulation by their formulas, as the chapter defines them.
REGRESSION_TITLES = {"additive": r"$m(x)=\sum_l\sin x_l$", "iso_cos8": r"$m(x)=3\cos(0.8\Vert x\Vert)$"}

#: Line style and marker of each combination rule in :func:`budget_figure`.
RULE_STYLES = (("average", "-", "o"), ("sum", "--", "s"), ("concat", ":", "^"))

#: The y ticks of :func:`budget_figure` (IMSE, log scale).
Y_TICKS = [0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 3]


def readable_columns(table, ratio_of: str = "d_k*"):
    """``table`` (a pandas DataFrame of :func:`minimiser_table` or :func:`asymptotic_table`) with its
    columns named in words for the book: ``ratio_real_log_ratio`` -> ``root / log ratio``, ``local_slope``
    and ``local_exponent`` -> ``p(n)``, ``k_real`` -> ``real root``, ``n_heads`` -> ``H*``; the data are
    unchanged (a renamed copy).  ``ratio_of``: what a plain ``ratio_*`` column divides (``"d_k*"``, the
    integer minimiser, in :func:`minimiser_table`; ``"root"`` in :func:`asymptotic_table`)."""
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table: expected a pandas DataFrame, got {type(table).__name__}")
    ratio_of = one_of(ratio_of, "ratio_of", ("d_k*", "root"))
    fixed = {
        "log10_n": "log10 n",
        "k_real": "real root",
        "d_k_real": "real root",
        "log10_k_real": "log10 real root",
        "local_exponent": "p(n)",
        "local_slope": "p(n)",
        "n_heads": "H*",
        "d_k": "d_k*",
    }

    def words(column):
        if not isinstance(column, str):
            return column
        if column in fixed:
            return fixed[column]
        for prefix, who in (("ratio_real_", "root"), ("ratio_", ratio_of), ("asym_", "formula")):
            if column.startswith(prefix):
                what = column[len(prefix) :].replace("_", " ")
                return f"{who} / {what}" if who != "formula" else f"formula: {what}"
        return column

    return table.rename(columns=words)


@notebook_helper
def budget_caption(sim_budget: int) -> str:
    """The caption of :func:`budget_figure` for the budget ``sim_budget`` (a positive integer)."""
    sim_budget = positive_int(sim_budget, "sim_budget")
    return (
        f"Integrated MSE of real Nadaraya–Watson heads under the fixed budget $D={sim_budget}$, against the "
        "head size $d_k$ (so $H=D/d_k$ heads), one panel per regression function: the combination rule by "
        "line style, the sample size $n$ by colour; the lowest point of a curve is its best head size. "
        f'"Many small heads" are the points with $d_k\\le {max(sim_budget // 4, 1)}$ ($D/4$), the big ones the rest; '
        "where no bar shows, it is shorter than its marker."
    )


def _regression_title(m) -> str:
    """A panel title for the regression function ``m`` (:class:`mhanw.data.RegressionFunction`): a parsed
    formula typeset from its sympy expression, ``$m(x)=...$``; a catalogue function by its formula's text."""
    if m.expression is not None:
        return f"$m(x)={_tex(m.expression)}$"
    return f"$m$ = {m.formula}"


@notebook_helper
def budget_figure(sims: dict, params):
    """The real-heads figure of Thm 6.1 (``06_optimal_head_size_budget``): one panel per regression of
    ``params``, the evaluation IMSE of the budget simulation ``{(regression, n): BudgetResult}`` against the
    head size ``d_k`` (``H = D/d_k`` heads, log-log), one line per rule (style, marker) and sample size
    (colour; filled markers for the smallest ``n``), bars of 2 s.e. (:func:`mhanw.infra.figures.errorbar`).
    Returns the matplotlib figure."""
    from .. import data
    from ..infra import figures

    mapping_with_keys(params, "params", ("regressions", "sim_n", "sim_budget"))
    regressions = list(sequence(params["regressions"], "params['regressions']", "regression functions"))
    sim_n = list(sequence(params["sim_n"], "params['sim_n']", "sample sizes"))
    sim_budget = positive_int(params["sim_budget"], "params['sim_budget']")
    mapping_with_keys(_simulations(sims, "sims"), "sims", [(m, n) for m in regressions for n in sim_n])
    fig, axes = figures.panels(len(regressions), height=2.9, sharey=True)
    for ax, m in zip(axes, regressions):
        for j, n in enumerate(sim_n):
            s = sims[m, n]
            for rule, ls, marker in [x for x in RULE_STYLES if x[0] in s.rules]:
                figures.errorbar(
                    ax,
                    s.d_k_values,
                    s.mean[s.rules.index(rule)],
                    s.se[s.rules.index(rule)],
                    color=f"C{j}",
                    linestyle=ls,
                    marker=marker,
                    mfc=f"C{j}" if j == 0 else "white",
                    mew=1.0,
                    label=f"{rule}, $n={n}$",
                )
        ks = sims[m, sim_n[0]].d_k_values
        letter = chr(ord("a") + regressions.index(m))
        name = REGRESSION_TITLES.get(m) or _regression_title(data.regression_function(m))
        ax.set(
            xscale="log",
            yscale="log",
            xlabel=rf"head size $d_k$ ($H={sim_budget}/d_k$ heads)",
            ylabel="IMSE",
            title=f"({letter}) {name}",
        )
        ax.set_xticks(ks, [f"{k}\n($H$={sim_budget // k})" for k in ks])
        ax.set_yticks(Y_TICKS, [f"{y:g}" for y in Y_TICKS])
        ax.minorticks_off()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, columnspacing=1.0)  # below the panels, off the data
    return fig


# --------------------------------------------------------------------------- guards, macros and results


def _tex(expr) -> str:
    """A sympy expression (not a string: no parsing here) in LaTeX with the natural log written ``\\ln``."""
    return sp.latex(expr, ln_notation=True)


def _guard_sentences(nb) -> None:
    """Stop when a sentence of the chapter or of the paper's section that states a direction is not what
    the numbers say: M1's local exponent, the accuracy of its two asymptotic formulas, M2 to M5's laws and
    the bias readings (:func:`mhanw.infra.verdicts.guard`)."""
    row, asym, laws, n_big = nb.table.set_index(["model", "n"]), nb.asym, nb.laws, N_GRID[-1]
    m1, readings, reading_rows = _scaling.model("M1"), nb.readings, nb.reading_rows
    slope_small, slope_big, slope_huge = (
        row.loc[("M1", N_GRID[0]), "local_slope"],
        asym["M1"][0]["local_exponent"],
        asym["M1"][-1]["local_exponent"],
    )
    V.guard(
        bool(slope_small < slope_big < slope_huge) and laws["M1"].p_limit == 1,
        "M1's local exponent rises with n towards its symbolic limit 1",
        f"p = {slope_small:.3g}, {slope_big:.3g}, {slope_huge:.3g}, limit {laws['M1'].p_limit}",
    )
    lead_big, lead_huge = row.loc[("M1", n_big), "ratio_real_leading_order"], asym["M1"][-1]["ratio_leading_order"]
    V.guard(
        bool(abs(lead_huge - 1) < 0.05 and abs(lead_huge - 1) < abs(lead_big - 1)),
        "the Lambert leading order is poor at n = 1e12 but within a few per cent at n = 1e10000",
        f"ratios {lead_big:.4g} and {lead_huge:.4g}",
    )
    lr_big, lr_huge = row.loc[("M1", n_big), "ratio_real_log_ratio"], asym["M1"][-1]["ratio_log_ratio"]
    V.guard(
        bool(abs(lr_big - 1) < 0.05 and abs(lr_huge - 1) > abs(lr_big - 1)),
        "2 ln n/ln ln n is within a few per cent at n = 1e12 only by a crossing and further off at n = 1e10000",
        f"ratios {lr_big:.4g} and {lr_huge:.4g}",
    )
    V.guard(
        bool(
            abs(asym["M2"][-1]["ratio_law"] - 1) < 0.01
            and laws["M2"].gives_printed_law
            and not laws["M2"].exact
            and laws["M3"].gives_printed_law
            and laws["M3"].exact
        ),
        "M2 reaches the printed law asymptotically and M3 exactly",
        f"{laws['M2'].description}; {laws['M3'].description}",
    )
    V.guard(
        bool(
            laws["M4a"].kind == laws["M4b"].kind == "polynomial"
            and row.loc[("M4a", n_big), "d_k"] == BUDGET
            and row.loc[("M4b", n_big), "d_k"] == BUDGET
        ),
        "M4a and M4b grow polynomially and reach the cap d_k* = 512 within the table",
        f"{laws['M4a'].kind}, {laws['M4b'].kind}; d_k* = {row.loc[('M4a', n_big), 'd_k']}, {row.loc[('M4b', n_big), 'd_k']}",
    )
    V.guard(
        bool(abs(asym["M5"][-1]["ratio_log_n"] - 1) < abs(asym["M5"][0]["ratio_log_n"] - 1)),
        "M5 tends to ln(nD)/c, slowly",
        f"ratios {asym['M5'][0]['ratio_log_n']:.4g} and {asym['M5'][-1]['ratio_log_n']:.4g}",
    )
    implied = reading_rows[["implied d (integer)", "implied d (root)"]]
    V.guard(
        bool((implied < 0).all().all()),
        "the implied d stays negative under every reading of the bias",
        implied.to_string(),
    )
    V.guard(
        all(sp.simplify(m.dominant_term - m1.dominant_term) == 0 for m in readings.values()),
        "the dominant balance k/2 ln k = Lambda is the same for every reading",
        str([m.dominant_term for m in readings.values()]),
    )
    V.guard(
        all(sp.simplify(_derivation.formula(m) - sp.exp(sp.LambertW(2 * m.log_scale))) == 0 for m in readings.values()),
        "every reading gives the leading order k* ~ exp(W(2 Lambda)) with its own Lambda",
        str([_derivation.formula(m) for m in readings.values()]),
    )


def _formula_macros(macros, nb) -> None:
    """The formulas of the paper's section, typeset from sympy: M1's risk, log-FOC, dominant balance and
    ``Lambda``; every model's formula, law and fits; the reader's model; the printed law."""
    row, fits, laws, asym, n_big, m1 = (
        nb.table.set_index(["model", "n"]),
        nb.fits,
        nb.laws,
        nb.asym,
        N_GRID[-1],
        _scaling.model("M1"),
    )
    steps = _derivation.derivation_steps(m1)
    macros.text(
        "MOneMSE", "\\ensuremath{" + _tex(sp.Eq(sp.Function("MSE")(_scaling.SYMBOLS["k"]), sp.powsimp(m1.mse))) + "}"
    )
    macros.text("MOneLogFOC", "\\ensuremath{" + steps[2].latex() + "}")
    macros.text("MOneDominant", "\\ensuremath{" + steps[3].latex() + "}")
    macros.text("MOneLambda", "\\ensuremath{" + _tex(m1.log_scale) + "}")
    for m in nb.models:
        key = MODEL_MACROS.get(m.name, "Chosen")
        macros.text(f"{key}Formula", "\\ensuremath{" + _tex(_derivation.formula(m)) + "}")
        macros.text(f"{key}Law", "\\ensuremath{" + _derivation.law_latex(m) + "}")
        macros.text(f"{key}Printed", "yes" if laws[m.name].gives_printed_law else "no")
        macros.number(f"{key}FitP", fits.loc[m.name, "p (d_k)"], 2)
        macros.number(f"{key}ImpliedD", fits.loc[m.name, "implied d (d_k)"], 2)
        macros.number(f"{key}FitPRoot", fits.loc[m.name, "p (d_k_real)"], 2)
        macros.number(f"{key}ImpliedDRoot", fits.loc[m.name, "implied d (d_k_real)"], 2)
        macros.integer(f"{key}DkBig", row.loc[(m.name, n_big), "d_k"])
        macros.integer(f"{key}HBig", row.loc[(m.name, n_big), "n_heads"])
        macros.number(f"{key}SlopeBig", asym[m.name][0]["local_exponent"], 2)
        macros.number(f"{key}SlopeHuge", asym[m.name][-1]["local_exponent"], 3)
    chosen = nb.chosen
    if chosen.name in MODEL_MACROS:
        macros.text("ChosenFormula", "\\ensuremath{" + _tex(_derivation.formula(chosen)) + "}")
        macros.text("ChosenLaw", "\\ensuremath{" + _derivation.law_latex(chosen) + "}")
    macros.text("ChosenName", chosen.name)
    macros.text("ChosenMSE", "\\ensuremath{" + _tex(sp.powsimp(chosen.mse)) + "}")
    macros.text("PrintedLaw", "\\ensuremath{" + _tex(_scaling.PRINTED_LAW) + "}")


def _number_macros(macros, nb) -> None:
    """The numbers of the paper's section on the law: the table of minimisers and fits, M1's and M2/M5's
    asymptotic ratios, BERT's and GPT's sample sizes, the sensitivity range and the table of bias readings."""
    row, fits, asym, practice, n_big = nb.table.set_index(["model", "n"]), nb.fits, nb.asym, nb.practice, N_GRID[-1]
    macros.text(
        "Table",
        " \\\\ ".join(
            " & ".join(
                [m.name]
                + [f"{row.loc[(m.name, x), 'd_k']}\\,/\\,{row.loc[(m.name, x), 'n_heads']}" for x in N_GRID]
                + [
                    f"{fits.loc[m.name, c]:.2f}"
                    for c in ("p (d_k)", "implied d (d_k)", "p (d_k_real)", "implied d (d_k_real)")
                ]
            )
            for m in nb.models
        ),
    )
    macros.integer("Budget", BUDGET)
    macros.number("MOneRatioLogRatioBig", row.loc[("M1", n_big), "ratio_real_log_ratio"], 3)
    macros.number("MOneRatioLeadBig", row.loc[("M1", n_big), "ratio_real_leading_order"], 3)
    macros.number("MOneRatioLeadHuge", asym["M1"][-1]["ratio_leading_order"], 4)
    macros.number("MOneRatioLogRatioHuge", asym["M1"][-1]["ratio_log_ratio"], 3)
    macros.number("MTwoRatioHuge", asym["M2"][-1]["ratio_law"], 4)
    macros.number("MFiveRatioBig", asym["M5"][0]["ratio_log_n"], 3)
    macros.number("MFiveRatioHuge", asym["M5"][-1]["ratio_log_n"], 4)
    macros.number("MOneSlopeSmall", row.loc[("M1", N_GRID[0]), "local_slope"], 2)
    macros.number("MOneLogNBert", practice.loc["M1", "log10 n for d_k=64, D=768"], 3)
    macros.number("MOneLogNGpt", practice.loc["M1", "log10 n for d_k=128, D=12288"], 3)
    macros.number("MOneHSlope", practice.loc["M1", "slope of ln H* on ln D"], 3)
    macros.integer("MOneSensMin", nb.sens.loc["M1"][n_big].min())
    macros.integer("MOneSensMax", nb.sens.loc["M1"][n_big].max())
    reading_laws, reading_rows = nb.reading_laws, nb.reading_rows
    macros.text(
        "ReadingTable",
        " \\\\ ".join(
            " & ".join(
                [
                    f"$c_B/k^{{{a}}}$",
                    READING_TEX.get(a, ""),
                    "$" + _tex(m.log_scale) + "$",
                    "$" + _derivation.law_latex(m) + "$",
                    "yes" if reading_laws[a].gives_printed_law else "no",
                    str(reading_rows.loc[a, "d_k* at n = 1e12"]),
                    *(
                        f"{reading_rows.loc[a, c]:.2f}"
                        for c in ("p (integer)", "implied d (integer)", "p (root)", "implied d (root)")
                    ),
                ]
            )
            for a, m in nb.readings.items()
        ),
    )
    macros.integer("ReadingsGiving", sum(law.gives_printed_law for law in reading_laws.values()))
    macros.integer("Readings", len(reading_laws))


def _regression_key(regressions: list, m: str) -> str:
    """The macro name of the regression ``m`` (:data:`REGRESSION_MACROS`; ``RegA``, ``RegB``, ... for a reader's)."""
    return REGRESSION_MACROS.get(m, "Reg" + chr(65 + regressions.index(m)))


def _simulation_macros(macros, nb) -> None:
    """The numbers of the budget simulation at the smallest and the largest ``n``, its sizes and counts,
    the verdicts, the extreme z-scores of the small-heads records and the sum-versus-average words."""
    import pandas as pd

    sims, sizes, sim_rows, ledger, rules = nb.sims, nb.sizes, nb.sim_rows, nb.ledger, nb.rules
    regressions = list(nb.regressions)
    avg_best = {c: s.best_d_k("average") for c, s in sims.items()}
    sum_best = {c: s.best_d_k("sum") for c, s in sims.items()}
    sig = nb.comparisons["significant"]
    n_small, n_large = sizes["sim_n"][0], sizes["sim_n"][-1]
    for m in regressions:
        for size, n in (("Small", n_small), ("Large", n_large)):
            s, key = sims[m, n], f"Sim{_regression_key(regressions, m)}{size}"
            for rule, rkey in (("average", "Avg"), ("sum", "Sum")):
                best = s.best_d_k(rule)
                macros.integer(f"{key}{rkey}Best", best)
                macros.mean_se(
                    f"{key}{rkey}Imse",
                    s.mean[s.rules.index(rule), s.d_k_values.index(best)],
                    s.se[s.rules.index(rule), s.d_k_values.index(best)],
                )
            macros.mean_se(
                f"{key}Gap", *s.paired_difference(("average", s.best_d_k("average")), ("sum", s.best_d_k("sum")))
            )
    macros.integer("SimNSmall", n_small)
    macros.integer("SimNLarge", n_large)
    macros.text("SimNList", ", ".join(f"{n:,}".replace(",", "\\,") for n in sizes["sim_n"]))
    macros.integer("SimNTune", sizes["n_tune"])
    macros.integer("SimNRep", sizes["n_rep"])
    macros.integer("SimNTest", sizes["n_test"])
    macros.integer("SimSignificant", int(sig.sum()))
    macros.integer("SimPairs", len(sig))
    macros.integer("SimCells", len(sims))
    macros.integer("SimAvgLargeCells", sum(v >= 4 for v in avg_best.values()))
    macros.integer("SimSumSmallCells", sum(v <= 2 for v in sum_best.values()))
    macros.integer("SimEdgeCells", int(sim_rows["bandwidth_on_edge"].sum()))
    best_cells = pd.concat(
        [
            sim_rows[
                (sim_rows["regression"] == m)
                & (sim_rows["n"] == n)
                & (sim_rows["rule"] == r)
                & (sim_rows["d_k"] == b[m, n])
            ]
            for r, b in (("average", avg_best), ("sum", sum_best))
            for m, n in nb.cells
        ]
    )
    macros.integer("SimEdgeBest", int(best_cells["bandwidth_on_edge"].sum()))
    for key, claim in VERDICT_MACROS.items():
        if claim in [r.claim for r in ledger]:
            macros.text(key, ledger[claim].verdict)
    macros.text("ConditionsPrintedSome", ledger["thm-6.1/printed-law/some-model"].conditions or "none")
    for rule, key in (("average", "Avg"), ("sum", "Sum")):
        if rule in rules:
            worst = max(ledger[f"thm-6.1/small-heads/{rule}"].statistics, key=lambda st: st.value / st.se)
            best = min(ledger[f"thm-6.1/small-heads/{rule}"].statistics, key=lambda st: st.value / st.se)
            macros.number(f"SmallMinusBig{key}MaxZ", worst.value / worst.se, 2)
            macros.number(f"SmallMinusBig{key}MinZ", best.value / best.se, 2)
    # the sum-versus-average comparison at the largest n, in words generated from its sign and s.e.
    for m in regressions:
        s = sims[m, n_large]
        diff = s.paired_difference(("average", s.best_d_k("average")), ("sum", s.best_d_k("sum")))
        macros.text(
            f"Sim{_regression_key(regressions, m)}SumVersusAvg",
            "beats"
            if diff.mean > 3 * diff.se
            else ("loses to" if diff.mean < -3 * diff.se else "is not distinguishable at 3 s.e. from"),
        )


def close(nb, macros_path, results_path) -> None:
    """Close the chapter (Thm 6.1): guard the sentences that state a direction (:func:`_guard_sentences`),
    write the macros of the paper's section (to ``macros_path``) and the raw results with the records (to
    ``results_path``).  ``nb``: the executed notebook's variables (a mapping: ``chosen``, ``models``,
    ``laws``, ``checks``, ``asym``, ``table``, ``fits``, ``sens``, ``practice``, ``readings``,
    ``reading_laws``, ``reading_rows``, ``sims``, ``sim_rows``, ``comparisons``, ``rule_gap``, ``ledger``,
    ``sizes``, ``cells`` and the parameters)."""
    from ..infra.notebook import Namespace
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs

    nb = Namespace(nb)
    _guard_sentences(nb)
    macros = Macros("HeadSize")
    _formula_macros(macros, nb)
    _number_macros(macros, nb)
    _simulation_macros(macros, nb)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros.write(macros_path, argument="macros_path")
    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes, "chosen": str(nb.chosen)}
    results.update(
        checks=nb.checks,
        laws={k: v.description for k, v in nb.laws.items()},
        asymptotics=nb.asym,
        table=nb.table.to_dict("records"),
        fits=nb.fits.to_dict("index"),
        sensitivity={f"{a} {b}": v for (a, b), v in nb.sens.T.to_dict("list").items()},
        practice=nb.practice.to_dict("index"),
        simulation=nb.sim_rows.to_dict("records"),
        comparisons=nb.comparisons.to_dict("records"),
        rule_gap=nb.rule_gap.to_dict("records"),
        bias_readings=nb.reading_rows.reset_index().to_dict("records"),
        claims=nb.ledger.to_list(),
    )
    save_results(results_path, json_safe(results), argument="results_path")


# --------------------------------------------------------------------------- the chapter's parameters


def _law_text() -> P.Kind:
    """A law string for :func:`mhanw.scaling.model` ("" keeps the named model's ingredient)."""

    def check(value, name):
        if not isinstance(value, str):
            raise P.ParameterError(
                f'{name}: expected a law as a string (or "" to keep the model\'s), got {brief(value)}'
            )
        if value.strip():
            _scaling.parse_law(value, name)
        return value

    return P.Kind('a law in k, n, D, H and the constants, or ""', check)


#: The papermill parameters of notebook 06 (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "model": P.choice(*_scaling.BUILTIN_MODELS, "M4"),
    "bias_law": _law_text(),
    "variance_law": _law_text(),
    "combination": P.choice("", *_scaling.COMBINATIONS),
    "regressions": P.sequence(P.regression(dimension="sim_budget")),
    "inputs": P.inputs(dimension="sim_budget"),
    "noise": P.noise(dimension="sim_budget"),
    "sigma": P.noise_level(),
    "sim_budget": P.positive_int(4, 1024, why="a model dimension, 128 times the default 8"),
    "sim_n": P.sequence(P.positive_int(2, 300_000, why="100 times the default largest n, 3000")),
    "rules": P.sequence(P.choice(*_heads.RULES)),
}

#: Constraints between the parameters: distinct rules, distinct regressions and sample sizes.
CONSTRAINTS = (
    P.require("rules", lambda p: len(set(p["rules"])) == len(p["rules"]), "distinct rules"),
    # the chapter compares summed with averaged heads (Thm 6.1 is stated for both): other rules are extra
    P.require(
        "rules",
        lambda p: {"average", "sum"} <= set(p["rules"]),
        "the rules to include 'average' and 'sum' (the chapter compares them; add others such as 'concat')",
    ),
    P.require("regressions", lambda p: len(set(p["regressions"])) == len(p["regressions"]), "distinct regressions"),
    P.require("sim_n", lambda p: len(set(p["sim_n"])) == len(p["sim_n"]), "distinct sample sizes"),
)
