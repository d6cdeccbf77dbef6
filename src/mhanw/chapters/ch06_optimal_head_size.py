"""Chapter 06: many small heads or few big ones?  A fixed budget ``D = H d_k`` with real NW heads (Thm 6.1).

The budget simulation of Theorem 6.1 (``book/claims.md``, 'Theorem 6.1').  The input dimension is the budget,
``d = D`` (8 by default), and a configuration with head size ``d_k`` has
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
independent of ``n_jobs``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import data as _data
from .. import heads as _heads
from .. import scaling as _scaling
from ..constants import N_SE
from ..infra.estimates import Estimate, ReplicatedErrors
from ..infra.validate import as_seed_sequence, one_of, positive_int, positive_scalar
from ..infra.sweep import run_replicates

__all__ = ["BANDWIDTHS", "BudgetResult", "budget_simulation", "head_sizes"]

#: The bandwidth grid, extended down to 0.1: with many one-dimensional heads
#: summed, 0.15 was the tuned value at n = 3000 (the edge of the first grid), so
#: the optimum could have been below it.
BANDWIDTHS = (0.1, 0.15, 0.25, 0.4, 0.6, 0.9, 1.3, 2.0)

#: A paired difference is significant when it exceeds this many standard errors (:data:`mhanw.constants.N_SE`).
SIGNIFICANCE = N_SE


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
            one_of(d_k, "d_k", self.d_k_values))

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
            rows.append({"rule": rule, "best_d_k": best, "d_k": d_k, "diff": float(diff.mean),
                         "se": float(diff.se), "z": float(diff.z), "significant": bool(diff.exceeds(SIGNIFICANCE))})
        return rows

    def rows(self) -> list[dict]:
        """One row per ``(rule, d_k)``: IMSE, s.e., tuned bandwidth and whether it sits on the
        edge of the grid (then the grid should be widened)."""
        out = []
        for r, rule in enumerate(self.rules):
            for i, d_k in enumerate(self.d_k_values):
                h = float(self.tuned_bandwidth[i, r])
                out.append({"regression": self.regression, "n": self.n, "rule": rule, "d_k": d_k,
                            "n_heads": self.budget // d_k, "imse": float(self.mean[r, i]),
                            "se": float(self.se[r, i]), "bandwidth": h,
                            "bandwidth_on_edge": h in (self.bandwidths[0], self.bandwidths[-1])})
        return out


def budget_simulation(regression, n: int, *, budget: int = 8, d_k_values=None, bandwidths=BANDWIDTHS,
                      rules=("average", "sum"), n_tune: int = 10, n_rep: int = 20, n_test: int = 300,
                      sigma: float | None = None, seed=0, n_jobs: int = 1) -> BudgetResult:
    """Tune the bandwidth per ``(d_k, rule)`` and evaluate the tuned ensembles (Thm 6.1).

    Parameters
    ----------
    regression : str, RegressionFunction or DataModel
        ``m``, e.g. ``"additive"`` or ``"iso_cos8"``, or a whole
        :class:`mhanw.data.DataModel` (its inputs and noise are used).
    n : int
        Training sample size.
    budget : int
        ``D = d``, the input dimension and the total head dimension.
    d_k_values : sequence of int, optional
        Head sizes, each a divisor of ``budget`` (default: all divisors).
    bandwidths : sequence of float
        The tuning grid.
    rules : sequence of ``"average"``, ``"sum"``
    n_tune, n_rep : int
        Tuning and evaluation replicates (independent streams: children 0 and 1 of ``seed``).
    n_test, sigma : test points per replicate, noise standard deviation (default
        :data:`mhanw.constants.SIGMA`, or the DataModel's level)
    seed : int or numpy.random.SeedSequence
    n_jobs : worker processes (results do not depend on it)
    """
    budget = positive_int(budget, "budget")
    n = positive_int(n, "n")
    d_k_values = head_sizes(budget) if d_k_values is None else tuple(
        positive_int(k, "d_k_values") for k in d_k_values)
    bad = [k for k in d_k_values if budget % k]
    if bad or not d_k_values or len(set(d_k_values)) != len(d_k_values):
        raise ValueError(f"d_k_values: expected distinct divisors of budget = {budget}, got {d_k_values}")
    bandwidths = tuple(positive_scalar(h, "bandwidths") for h in bandwidths)
    if not bandwidths:
        raise ValueError("bandwidths: expected at least one bandwidth")
    rules = tuple(one_of(r, "rules", _heads.RULES) for r in rules)
    if not rules or len(set(rules)) != len(rules):
        raise ValueError(f"rules: expected distinct rules among {_heads.RULES}, got {rules}")
    m = _data.as_data_model(regression, sigma)
    positive_int(budget, "budget", minimum=m.min_dim)
    m.inputs.check_dimension(budget, "budget")
    n_tune, n_rep = positive_int(n_tune, "n_tune", minimum=2), positive_int(n_rep, "n_rep", minimum=2)
    n_test = positive_int(n_test, "n_test")
    sigma = m.sigma
    root = as_seed_sequence(seed)
    # a copy, so that the children do not depend on what the caller spawned before
    root = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)
    tune_seed, eval_seed = root.spawn(2)
    common = dict(regression=m, n=n, n_test=n_test, sigma=sigma, budget=budget, d_k_values=d_k_values,
                  rules=rules)

    # stage 1: every bandwidth on the tuning replicates
    tune = run_replicates(functools.partial(_errors, cells=[bandwidths] * len(d_k_values), **common),
                          n_tune, tune_seed, n_jobs=n_jobs)  # (R, n_dk, n_h, n_rules)
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
    return BudgetResult(regression=m.name, n=n, budget=budget, n_test=n_test, sigma=sigma,
                        d_k_values=d_k_values, rules=rules, bandwidths=bandwidths,
                        tuning_imse=tuning_imse, tuning_se=tuning_se, tuned_bandwidth=tuned, errors=errors)
