"""Chapter 04: the integrated MSE against the Head Diversity Index (Thm 4.2).

Configurations, the random-configuration experiment (shared with chapter 05,
:mod:`mhanw.chapters.ch05_decorrelation_optimality`) and the chapter's
summaries of paired differences.  The Monte Carlo itself is
:func:`mhanw.montecarlo.integrated_mse` (common random numbers, one stream per
replicate), whose :class:`~mhanw.montecarlo.ImseResult` gives every paired
difference, relative change and z-score as an
:class:`mhanw.infra.estimates.Estimate`; this module only chooses what to
compare and how to summarise it.

HDI definitions: :func:`normalization_table` evaluates the three
normalizations of :func:`mhanw.diversity.head_diversity_index` on five kinds of
heads, :func:`normalization_predictions` gives their analytic values.

Configurations (orthonormal coordinate blocks unless stated):

- :func:`equal_hdi_configurations`, Thm 4.2 "equal HDI" and "higher HDI,
  higher IMSE": ``P`` with principal angles ``(0, 90)`` deg and
  ``Q = pair(45 deg)`` with ``(45, 45)`` deg share HDI_PA = 1/2; ``P'`` with
  angles ``(8, 90)`` deg has a slightly larger HDI_PA.
- :func:`random_configurations`, Thm 4.2 "random configurations" and Thm 5.1:
  interpolated heads at evenly spaced ``t`` plus the exact orthogonal blocks,
  evaluated by :func:`random_configuration_imse`, the one experiment chapters
  04 and 05 run.
- :func:`matched_hdi_configurations`, Thm 4.2 "matched HDI": random
  configurations whose HDI_PA equals a target exactly; :func:`heterogeneity`
  tests whether their IMSE differs (Hotelling's T^2 on paired contrasts).

Verdict rules (thresholds as named constants): the ``*_record`` functions,
each returning a :class:`mhanw.infra.verdicts.Verdict`.

Summaries of an :class:`mhanw.montecarlo.ImseResult` (3-s.e. rule,
:data:`mhanw.constants.N_SE`): :func:`family_summary`,
:func:`monotonicity_violations`, :func:`rank_correlation`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy.stats import f as f_dist
from scipy.stats import norm, poisson, spearmanr

from .. import heads as _heads
from .. import montecarlo as _mc
from ..constants import IMSE_RESOLUTION_PCT, MAX_REPLICATES, N_SE, RANDOM_CONFIGURATION_BANDWIDTH, SIGMA, check_entries
from ..diversity import NORMALIZATIONS, hdi_upper_bound, head_diversity_index
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.notebook import Namespace, notebook_helper
from ..infra.validate import (
    as_float_array,
    as_seed_sequence,
    brief,
    generator,
    nonnegative_scalar,
    one_of,
    positive_int,
    positive_scalar,
    real_scalar,
    sequence,
)
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Verdict, checked, significant_effect
from ..infra.verdicts import stat as _stat

__all__ = [
    "HEAD_TYPES",
    "HEAD_TYPE_NAMES",
    "RandomConfigurations",
    "equal_hdi_configurations",
    "family_summary",
    "monotonicity_violations",
    "normalization_predictions",
    "normalization_table",
    "random_configuration_imse",
    "random_configurations",
    "rank_correlation",
]


# --------------------------------------------------------------------------- HDI definitions

#: Kinds of heads of the normalization table.
HEAD_TYPES = ("identical", "orthogonal", "gaussian_scaled", "gaussian_unit", "identical_x2")
#: How the text names the head kinds of :data:`HEAD_TYPES` (the rows of the paper's table of the three indices).
HEAD_TYPE_NAMES = {
    "identical": "identical, orthonormal",
    "orthogonal": "orthogonal blocks",
    "gaussian_scaled": "random, N(0, 1/d)",
    "gaussian_unit": "random, N(0, 1)",
    "identical_x2": "identical ×2",
}


def _table_heads(kind, d, n_heads, d_k, rng):
    if kind == "identical":
        return _heads.identical_heads(d, d_k, n_heads, basis=_heads.haar_basis(d, d_k, rng))
    if kind == "orthogonal":
        return _heads.orthogonal_heads(d, d_k, n_heads)
    if kind == "gaussian_scaled":
        return rng.standard_normal((n_heads, d, d_k)) / np.sqrt(d)
    if kind == "gaussian_unit":
        return rng.standard_normal((n_heads, d, d_k))
    return 2.0 * _heads.identical_heads(d, d_k, n_heads, basis=_heads.haar_basis(d, d_k, rng))


@notebook_helper
def normalization_table(d: int, n_heads: int, d_k: int, rng) -> dict:
    """The three HDI normalizations on the heads of :data:`HEAD_TYPES`, ``{kind: {normalization: value}}``.

    Kinds: ``identical`` (one Haar frame repeated), ``orthogonal`` (coordinate
    blocks, needs ``H d_k <= d``), ``gaussian_scaled`` (iid ``N(0, 1/d)``
    entries), ``gaussian_unit`` (iid ``N(0, 1)``), ``identical_x2`` (identical
    heads times 2).  One draw from ``rng`` per random kind, in this order.
    """
    generator(rng, "rng")
    out = {}
    for kind in HEAD_TYPES:
        W = _table_heads(kind, d, n_heads, d_k, rng)
        out[kind] = {norm: head_diversity_index(W, norm) for norm in NORMALIZATIONS}
    return out


def normalization_predictions(d: int, d_k: int) -> dict:
    """Analytic values of :func:`normalization_table`, ``{kind: {normalization: value}}``.

    Exact for ``identical``, ``orthogonal`` and ``identical_x2`` (``1 - 1/d_k``,
    ``1``, ``1 - 16/d_k`` for ``"paper"``).  For Gaussian heads they are
    expectations or ratio-of-expectation approximations: ``"paper"``
    ``1 - 1/d`` (``N(0, 1/d)``) and ``1 - d`` (``N(0, 1)``), HDI_PA
    ``1 - d_k/d`` (Haar subspaces), HDI_RV ``~ 1 - d_k/(d + d_k + 1)`` (from
    ``E||A^T B||_F^2 = d_k^2/d`` and ``E||A^T A||_F^2 = d_k (d + d_k + 1)/d``).
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    pa, rv = 1.0 - d_k / d, 1.0 - d_k / (d + d_k + 1)
    return {
        "identical": {"paper": 1.0 - 1.0 / d_k, "principal_angles": 0.0, "rv": 0.0},
        "orthogonal": {"paper": 1.0, "principal_angles": 1.0, "rv": 1.0},
        "gaussian_scaled": {"paper": 1.0 - 1.0 / d, "principal_angles": pa, "rv": rv},
        "gaussian_unit": {"paper": 1.0 - d, "principal_angles": pa, "rv": rv},
        "identical_x2": {"paper": 1.0 - 16.0 / d_k, "principal_angles": 0.0, "rv": 0.0},
    }


# --------------------------------------------------------------------------- configurations


def _cols(d, *vectors):
    return np.stack(vectors, axis=1) if vectors else np.zeros((d, 0))


def equal_hdi_configurations(tilt_deg: float = 8.0) -> dict:
    """Thm 4.2 "equal HDI" and "higher HDI, higher IMSE": three two-head configurations in ``R^4`` with ``d_k = 2``.

    - ``"P"``: ``(span{e1, e2}, span{e1, e3})``, principal angles (0, 90) deg, HDI_PA = 1/2;
    - ``"Q"``: ``pair(45 deg)``, angles (45, 45) deg, HDI_PA = 1/2;
    - ``"P'"``: ``(span{e1, e2}, span{cos(a) e1 + sin(a) e4, e3})`` with ``a = tilt_deg``,
      angles ``(a, 90)`` deg, HDI_PA = ``1 - cos^2(a)/2`` (0.510 at 8 deg).

    Returns a dict of arrays ``(2, 4, 2)`` in this order.
    """
    a = np.radians(nonnegative_scalar(tilt_deg, "tilt_deg"))
    if a >= np.pi / 2:
        raise ValueError(f"tilt_deg: expected an angle in [0, 90) degrees, got {brief(tilt_deg)}")
    e = np.eye(4)
    base = _cols(4, e[0], e[1])
    return {
        "P": np.stack([base, _cols(4, e[0], e[2])]),
        "Q": _heads.pair_heads(np.pi / 4, 4, 2),
        "P'": np.stack([base, _cols(4, np.cos(a) * e[0] + np.sin(a) * e[3], e[2])]),
    }


@dataclass(frozen=True)
class RandomConfigurations:
    """Random configurations of Thm 4.2: ``projections`` (list of ``(H, d, d_k)``), the
    interpolation parameter ``t`` (NaN for the orthogonal blocks, which come last)
    and ``hdi`` (HDI_PA, ``(C,)``)."""

    projections: list
    t: np.ndarray
    hdi: np.ndarray

    @property
    def orthogonal(self) -> int:
        """Index of the orthogonal-block configuration (the last one)."""
        return len(self.projections) - 1

    @property
    def identical(self) -> int:
        """Index of the ``t = 0`` configuration (identical heads, HDI_PA 0)."""
        return 0


def random_configurations(n_configs: int, rng, d: int = 6, d_k: int = 2, n_heads: int = 3) -> RandomConfigurations:
    """``n_configs`` interpolated configurations at ``t = linspace(0, 1, n_configs)``, then orthogonal blocks.

    Each interpolated configuration draws its own ``U, Z_1..Z_H`` from ``rng``
    (:func:`mhanw.heads.interpolated_heads`), so ``t = 0`` gives identical heads
    and ``t = 1`` independent Haar heads (E[HDI_PA] = 1 - d_k/d); the last
    configuration is :func:`mhanw.heads.orthogonal_heads` (HDI_PA 1, needs
    ``H d_k <= d``).  Reference: ``d = 6, d_k = 2, H = 3``.
    """
    n_configs = positive_int(n_configs, "n_configs", minimum=2, maximum=MAX_REPLICATES, what="configurations")
    generator(rng, "rng")
    d, d_k, n_heads = positive_int(d, "d"), positive_int(d_k, "d_k"), positive_int(n_heads, "n_heads")
    if n_heads * d_k > d:
        raise ValueError(
            f"n_heads: the last configuration is {n_heads} orthogonal heads of d_k = {d_k}, which "
            f"need n_heads * d_k <= d = {d}, got {n_heads * d_k}"
        )
    t = np.linspace(0.0, 1.0, n_configs)
    projections = [_heads.interpolated_heads(float(ti), d, d_k, n_heads, rng) for ti in t]
    projections.append(_heads.orthogonal_heads(d, d_k, n_heads))
    hdi = np.array([head_diversity_index(W) for W in projections])
    return RandomConfigurations(projections=projections, t=np.append(t, np.nan), hdi=hdi)


def rule_options(rule: str) -> dict:
    """The keyword arguments of :class:`mhanw.heads.HeadConfig` with which the random and matched-HDI
    configurations combine their heads under ``rule`` (:data:`mhanw.heads.RULES`): ``"average"`` and
    ``"sum"`` as named; ``"concat"`` as a transformer does, the shared response through an output
    projection ``W_O`` fitted by least squares on the heads' leave-one-out outputs (as chapter 06)."""
    one_of(rule, "rule", _heads.RULES)
    return dict(rule=rule, output="fitted") if rule == "concat" else dict(rule=rule)


def random_configuration_imse(
    regressions,
    n_configs: int,
    seed,
    n: int,
    n_test: int,
    n_rep: int,
    bandwidth: float = RANDOM_CONFIGURATION_BANDWIDTH,
    sigma: float = SIGMA,
    d: int = 6,
    d_k: int = 2,
    n_heads: int = 3,
    n_jobs: int = 1,
    progress: bool = False,
    data=None,
    kernel: str = "gaussian",
    rule: str = "average",
    values=None,
    output=None,
) -> tuple:
    """Thm 4.2 and Thm 5.1, random configurations: the IMSE of random configurations, one result per ``m``.

    ``seed`` (int or SeedSequence) spawns two children: the first draws the
    configurations (:func:`random_configurations`), the second the replicates
    of :func:`mhanw.montecarlo.integrated_mse`; every ``m`` uses the same replicate
    streams (same inputs and test points; only ``m(X)`` differs).  Reference
    sizes: ``n = 400, T = 200``, ``m = iso_cos6``, and the bandwidth
    :data:`mhanw.constants.RANDOM_CONFIGURATION_BANDWIDTH` (0.6, deliberately
    wider than the reference 0.5).

    ``data``: optional ``{m: DataModel}`` (:func:`mhanw.data.data_model`) used in
    place of the names (changed inputs or noise); the keys stay the names.
    ``kernel``, ``rule``, ``values``, ``output``: how every configuration's heads are
    evaluated and combined (:class:`mhanw.heads.HeadConfig`; e.g. ``rule="concat",
    output="fitted"`` for transformer-style heads), the same for all configurations.

    Returns ``(configs, {m: ImseResult})`` with ``configs`` a
    :class:`RandomConfigurations`.
    """
    if isinstance(regressions, str):
        regressions = [regressions]
    regressions = list(sequence(regressions, "regressions", "regression functions"))
    if not regressions:
        raise ValueError("regressions: expected at least one regression function, got none")
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ValueError(f"data: expected None or a dict {{m: DataModel}}, got {type(data).__name__}")
    for i, m in enumerate(regressions):
        try:
            hash(m)
            if m not in data:
                _mc._data.regression_function(m)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"regressions[{i}]: {str(exc).partition(': ')[2] or exc}") from None
    child_configs, child_reps = as_seed_sequence(seed, "seed").spawn(2)
    configs = random_configurations(n_configs, np.random.default_rng(child_configs), d, d_k, n_heads)
    bandwidth = positive_scalar(bandwidth, "bandwidth")
    heads = [
        _heads.HeadConfig(W, bandwidth=bandwidth, kernel=kernel, rule=rule, values=values, output=output)
        for W in configs.projections
    ]
    results = {
        m: _mc.integrated_mse(
            heads,
            data.get(m, m),
            n=n,
            n_test=n_test,
            n_rep=n_rep,
            seed=child_reps,
            sigma=None if m in data else sigma,
            bandwidth=bandwidth,
            n_jobs=n_jobs,
            progress=progress,
        )
        for m in regressions
    }
    return configs, results


# --------------------------------------------------------------------------- summaries


def _check_result(result):
    if not isinstance(result, _mc.ImseResult):
        raise ValueError(f"result: expected an ImseResult, got {type(result).__name__}")
    if result.errors.shape[1] < 2:
        raise ValueError(f"result: expected at least 2 replicates, got {result.errors.shape[1]}")
    return result.errors


def _hdi(hdi, E):
    hdi = as_float_array(hdi, "hdi", ndim=1)
    if hdi.shape[0] != E.shape[0]:
        raise ValueError(f"hdi: expected {E.shape[0]} values (one per configuration), got {hdi.shape[0]}")
    return hdi


def family_summary(result, reference: int = 0) -> dict:
    """Summary of a family ordered by increasing HDI (the isoclinic pair and star families of Thm 4.2).

    Keys: ``imse``, ``se`` (per configuration); ``rel``, ``rel_se``
    (:meth:`~mhanw.montecarlo.ImseResult.relative_to` ``reference``); ``diff``,
    ``diff_se``, ``z`` (:meth:`~mhanw.montecarlo.ImseResult.differences_from`
    ``reference``; ``z`` is NaN for the reference itself); ``step``,
    ``step_se``, ``step_z`` (:meth:`~mhanw.montecarlo.ImseResult.steps` in
    stored order) and ``max_step_z``, the largest step z-score (above
    :data:`mhanw.constants.N_SE` is a significant increase).
    """
    _check_result(result)
    rel = result.relative_to(reference)
    diff = result.differences_from(reference)
    step = result.steps()
    return {
        "imse": result.mean,
        "se": result.se,
        "rel": rel.mean,
        "rel_se": rel.se,
        "diff": diff.mean,
        "diff_se": diff.se,
        "z": diff.z,
        "step": step.mean,
        "step_se": step.se,
        "step_z": step.z,
        "max_step_z": float(np.max(step.z)),
    }


def monotonicity_violations(hdi, result, gap: float = 0.02, n_se: float = N_SE) -> dict:
    """Test "IMSE non-increasing in HDI" on every ordered pair (Thm 4.2, random configurations).

    For every pair with ``hdi[i] > hdi[j] + gap`` the paired difference
    ``IMSE_i - IMSE_j`` is compared with ``n_se`` paired s.e.

    Returns a dict with ``n_pairs`` (pairs tested), ``violations`` (list of
    ``(i, j, diff, se)`` with ``diff > n_se * se``: higher HDI, higher IMSE),
    ``n_violations``, ``n_decreases`` (``diff < -n_se * se``: significant in the
    claimed direction), ``expected_by_chance`` (``n_pairs * P(Z > n_se)``, the
    number of violations expected if no pair differed) and ``max_z`` (the
    largest ``diff / se``).
    """
    E = _check_result(result)
    hdi = _hdi(hdi, E)
    gap = nonnegative_scalar(gap, "gap")
    n_se = positive_scalar(n_se, "n_se")
    i, j = np.nonzero(hdi[:, None] > hdi[None, :] + gap)
    diff = Estimate.paired(E[i], E[j])
    bad = np.flatnonzero(diff.exceeds(n_se))
    z = diff.z
    return {
        "n_pairs": int(i.size),
        "violations": [(int(i[k]), int(j[k]), float(diff.mean[k]), float(diff.se[k])) for k in bad],
        "n_violations": int(bad.size),
        "n_decreases": int(np.sum(z < -n_se)),
        "expected_by_chance": float(i.size * norm.sf(n_se)),
        "max_z": float(z.max()) if z.size else float("nan"),
    }


def rank_correlation(hdi, result) -> float:
    """Spearman rank correlation between HDI and IMSE over configurations (Thm 4.2, random configurations)."""
    E = _check_result(result)
    hdi = _hdi(hdi, E)
    return float(spearmanr(hdi, E.mean(axis=1)).statistic)


def rank_correlation_se(hdi, result, n_boot: int = 200, seed=0) -> float:
    """Bootstrap s.e. of :func:`rank_correlation`: replicates resampled with replacement (all
    configurations together, so the CRN pairing is kept), ``n_boot`` resamples from ``seed``."""
    E = _check_result(result)
    hdi = _hdi(hdi, E)
    rng = np.random.default_rng(as_seed_sequence(seed))  # an explicit int (None would differ run to run)
    R = E.shape[1]
    rho = [
        spearmanr(hdi, E[:, rng.integers(0, R, R)].mean(axis=1)).statistic
        for _ in range(positive_int(n_boot, "n_boot", minimum=2, maximum=MAX_REPLICATES, what="resamples"))
    ]
    return float(np.std(rho, ddof=1))


# --------------------------------------------------------------------------- matched HDI


def matched_hdi_configuration(
    target: float, rng, d: int = 6, d_k: int = 2, n_heads: int = 3, max_tries: int = 1000
) -> np.ndarray:
    """One random configuration whose HDI_PA equals ``target`` (to 1e-12), ``(H, d, d_k)``.

    Draws a shared Haar frame ``U``, Haar frames ``Z_j`` and mixing weights
    ``D_j ~ U(0, 1)^{d_k}`` (one per column), and sets
    ``W_j(s) = orth(U (I - s D_j) + Z_j s D_j)``: ``s = 0`` gives identical heads,
    and each column of each head leaves ``U`` at its own rate, so the
    configurations differ in their principal-angle profiles, not only in HDI.
    ``s`` in ``[0, 1/max D]`` is found by bisection so that HDI_PA = ``target``;
    a draw whose largest ``s`` does not reach ``target`` is rejected and redrawn.
    """
    target = real_scalar(target, "target")
    if not 0.0 < target < 1.0:
        raise ValueError(f"target: expected an HDI_PA in (0, 1), got {brief(target)}")
    n_heads = positive_int(n_heads, "n_heads", minimum=2, maximum=None)  # bounded by the configuration's size
    d, d_k = positive_int(d, "d", maximum=None), positive_int(d_k, "d_k", maximum=None)
    check_entries("n_heads x d x d_k", n_heads, d, d_k)
    generator(rng, "rng")
    max_tries = positive_int(max_tries, "max_tries", maximum=MAX_REPLICATES, what="draws")
    if d_k > d:
        raise ValueError(f"d_k: expected at most d = {d}, got {d_k}")
    bound = hdi_upper_bound(d, d_k, n_heads)
    if target > bound:
        raise ValueError(
            f"target: {target} is above the largest HDI_PA of {n_heads} heads of d_k = {d_k} in d = {d} "
            f"(the frame bound {bound:.6g}); no configuration reaches it"
        )
    for _ in range(max_tries):
        U = _heads.haar_basis(d, d_k, rng)
        Z = [_heads.haar_basis(d, d_k, rng) for _ in range(n_heads)]
        D = rng.uniform(0.0, 1.0, (n_heads, d_k))

        def config(s):
            return np.stack([_heads.orthonormalize(U * (1.0 - s * D[j]) + Z[j] * (s * D[j])) for j in range(n_heads)])

        hi = 1.0 / D.max()
        if head_diversity_index(config(hi)) < target:
            continue
        lo = 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if head_diversity_index(config(mid)) < target else (lo, mid)
        return config(hi)
    raise ValueError(
        f"target: no configuration reached HDI_PA {target} in {max_tries} draws (d = {d}, d_k = {d_k}, "
        f"H = {n_heads}); choose a smaller target"
    )


def matched_hdi_configurations(targets, n_configs: int, rng, d: int = 6, d_k: int = 2, n_heads: int = 3) -> dict:
    """``{target: [n_configs configurations]}`` of :func:`matched_hdi_configuration`, targets in the given order."""
    n_configs = positive_int(n_configs, "n_configs", minimum=2, maximum=MAX_REPLICATES, what="configurations")
    targets = [real_scalar(t, "targets") for t in sequence(targets, "targets", "HDI_PA values")]
    return {t: [matched_hdi_configuration(t, rng, d, d_k, n_heads) for _ in range(n_configs)] for t in targets}


def heterogeneity(result, n_boot: int = 200, seed=0) -> dict:
    """Do configurations with equal HDI have equal IMSE?  Hotelling's T^2 on the paired contrasts.

    ``result``: an :class:`~mhanw.montecarlo.ImseResult` of ``K`` configurations
    (common random numbers, ``R > K`` replicates).  The contrasts
    ``err_k - err_K`` (``k < K``) of each replicate have mean ``c`` and
    covariance ``S``; ``T^2 = R c^T S^{-1} c`` and, under "all IMSEs equal",
    ``(R - K + 1) / ((R - 1)(K - 1)) T^2 ~ F(K - 1, R - K + 1)``.

    Also the between-configuration standard deviation of the IMSE beyond Monte
    Carlo noise, ``tau``: ``tau^2 = [sum_k (I_k - I.)^2 - tr(C Sigma C)/R] / (K - 1)``
    with ``Sigma`` the covariance of the per-replicate errors and ``C`` the
    centring matrix, in per cent of the mean IMSE, floored at 0, with a
    bootstrap s.e. over replicates (``n_boot`` resamples).

    Returns ``{"T2", "p", "K", "R", "tau_pct", "tau_se_pct", "spread_pct"}``
    (``spread_pct``: largest minus smallest IMSE, per cent of the mean).
    """
    E = _check_result(result)
    K, R = E.shape
    if K < 2 or R <= K:
        raise ValueError(
            f"result: expected at least 2 configurations and more replicates than configurations, got {K} and {R}"
        )
    contrasts = E[:-1] - E[-1]
    c = contrasts.mean(axis=1)
    S = np.atleast_2d(np.cov(contrasts))
    T2 = float(R * c @ np.linalg.solve(S, c))
    F = (R - K + 1) / ((R - 1) * (K - 1)) * T2
    p = float(f_dist.sf(F, K - 1, R - K + 1))

    def tau_pct(E):
        means = E.mean(axis=1)
        centred = E - E.mean(axis=0, keepdims=True)  # C err_r, the centring across configurations
        noise = np.sum(np.var(centred, axis=1, ddof=1)) / E.shape[1]
        tau2 = (np.sum((means - means.mean()) ** 2) - noise) / (K - 1)
        return 100.0 * np.sqrt(max(tau2, 0.0)) / means.mean()

    rng = np.random.default_rng(as_seed_sequence(seed))  # an explicit int (None would differ run to run)
    boot = [
        tau_pct(E[:, rng.integers(0, R, R)])
        for _ in range(positive_int(n_boot, "n_boot", minimum=2, maximum=MAX_REPLICATES, what="resamples"))
    ]
    means = E.mean(axis=1)
    return {
        "T2": T2,
        "p": p,
        "K": K,
        "R": R,
        "tau_pct": tau_pct(E),
        "tau_se_pct": float(np.std(boot, ddof=1)),
        "spread_pct": float(100.0 * (means.max() - means.min()) / means.mean()),
    }


# --------------------------------------------------------------------------- verdict rules

SECTION = "sec:hdi"

#: Exact quantities (an index of fixed matrices) differ from their formula by rounding only: a few
#: hundred ulps of 1 at the matrix sizes used (d up to 768), far below any difference the text reads.
EXACT_TOL = 1e-9

#: Two-sided tail probability of the 3-s.e. rule (N_SE = 3): the size of every test of this chapter.
P_3SE = float(2.0 * norm.sf(N_SE))


def _same_keys(z: dict, **others: dict) -> None:
    """Every mapping of ``others`` has the keys of ``z`` (one entry per regression function)."""
    for name, m in others.items():
        if set(m) != set(z):
            raise ValueError(f"{name}: expected the keys of z {sorted(map(str, z))}, got {sorted(map(str, m))}")


def _verdict(**kw):
    return Verdict(section=kw.pop("section", SECTION), **kw)


@checked(identical_value=V.number, d_k=V.positive_count)
def printed_identical_verdict(identical_value: float, d_k: int):
    """The printed index is 0 for identical heads: fails when identical orthonormal heads score away from 0."""
    bad = abs(identical_value) > EXACT_TOL
    formula = ", which is 1 - 1/d_k" if abs(identical_value - (1.0 - 1.0 / d_k)) <= EXACT_TOL else ""
    finding = (
        f"the printed HDI of identical orthonormal heads is {identical_value:.3f} at d_k = {d_k}{formula}, not 0"
        if bad
        else f"the printed HDI of identical orthonormal heads is 0 at d_k = {d_k}"
    )
    return _verdict(
        claim="hdi-definition/printed-identical-zero",
        finding=finding,
        statement="The printed HDI equals 0 for identical heads",
        verdict=FAILS if bad else HOLDS,
        criterion=f"exact value for identical orthonormal heads (d_k = {d_k}) against 0, rounding "
        f"tolerance {EXACT_TOL:g}",
        statistics=(_stat("printed HDI of identical heads", identical_value),),
        detectable=None if bad else EXACT_TOL,
    )


@checked(values=V.named(V.number))
def printed_range_verdict(values: dict):
    """The printed index lies in [0, 1]: fails when some head kind scores outside."""
    low_kind = min(values, key=values.get)
    high_kind = max(values, key=values.get)
    bad = values[low_kind] < -EXACT_TOL or values[high_kind] > 1 + EXACT_TOL
    return _verdict(
        claim="hdi-definition/printed-unit-range",
        statement="The printed HDI lies in [0, 1]",
        verdict=FAILS if bad else HOLDS,
        criterion=f"smallest and largest value over the head kinds and shapes of the table against [0, 1], rounding "
        f"tolerance {EXACT_TOL:g}",
        statistics=(
            _stat(f"smallest ({HEAD_TYPE_NAMES.get(low_kind, low_kind)})", values[low_kind]),
            _stat(f"largest ({HEAD_TYPE_NAMES.get(high_kind, high_kind)})", values[high_kind]),
        ),
        detectable=None if bad else EXACT_TOL,
    )


@checked(unit_value=V.number, doubled_value=V.number)
def printed_scale_verdict(unit_value: float, doubled_value: float):
    """The printed index describes the subspaces, so rescaling the heads leaves it unchanged."""
    diff = doubled_value - unit_value
    bad = abs(diff) > EXACT_TOL
    return _verdict(
        claim="hdi-definition/printed-scale-free",
        statement="The printed HDI does not change when the heads are rescaled",
        verdict=FAILS if bad else HOLDS,
        criterion=f"identical heads times 2 against identical heads, rounding tolerance {EXACT_TOL:g}",
        statistics=(_stat("change when the heads are doubled", diff),),
        detectable=None if bad else EXACT_TOL,
    )


@checked(deviations=V.named(V.nonnegative))
def pa_properties_verdict(deviations: dict):
    """HDI_PA: 0 for identical heads, 1 for orthogonal ones, in [0, 1] and scale free (exact checks).

    ``deviations``: ``{what: |value - required|}`` (0 where a value lies inside [0, 1])."""
    worst = max(deviations, key=deviations.get)
    bad = deviations[worst] > EXACT_TOL
    return _verdict(
        claim="hdi-definition/pa-properties",
        role=V.SIDE_CHECK,
        statement="HDI_PA is 0 for identical heads, 1 for orthogonal heads, lies in [0, 1] and is scale free",
        verdict=FAILS if bad else HOLDS,
        criterion=f"largest deviation over the checks ({', '.join(deviations)}), rounding tolerance {EXACT_TOL:g}",
        statistics=(_stat(f"largest deviation ({worst})", deviations[worst]),),
        detectable=None if bad else EXACT_TOL,
    )


@checked(covariance=V.number, se=V.standard_error, correlation=V.number)
def affine_bound_verdict(covariance: float, se: float, correlation: float):
    """The affine bound ``MSE <= B^2 + V/H + (1 - 1/H) K (1 - HDI)`` at HDI = 1 leaves no room for a positive
    covariance between heads: fails when orthogonal heads covary positively beyond 3 s.e.  The check can
    only refute the bound (it reads one point of it); otherwise "undecided"."""
    bad = covariance > N_SE * se
    return _verdict(
        claim="thm-4.2/affine-bound",
        statement="MSE <= B^2 + V/H + (1 - 1/H) K (1 - HDI) with the constant K of Lemma 4.1",
        verdict=FAILS if bad else UNDECIDED,
        criterion="at HDI = 1 the bound equals B^2 + V/H, so it needs the integrated covariance of "
        "orthogonal heads to be <= 0; a covariance above 3 s.e. refutes it",
        statistics=(
            _stat("integrated covariance of orthogonal heads", covariance, se),
            _stat("as a correlation", correlation),
        ),
    )


def isotropic_premises(models, configs) -> tuple:
    """The premises of the isotropic reading (S-weak and its monotone extensions), evaluated on what the
    chapter ran: the joint law of ``(X, Y)`` rotation invariant for every model of ``models``
    (:func:`mhanw.premises.rotation_invariant_data`: isotropic ``m``, rotation-invariant inputs and noise),
    orthonormal heads of one ``d_k`` and averaging with weights ``1/H`` for every configuration of
    ``configs`` (:class:`mhanw.heads.HeadConfig`, or projections averaged uniformly as
    :func:`mhanw.montecarlo.integrated_mse` evaluates them), merged (:func:`mhanw.infra.premises.merge`)."""
    from .. import premises as P
    from ..infra.premises import merge

    models = list(sequence(models, "models", "data models"))
    configs = [
        c if isinstance(c, _heads.HeadConfig) else _heads.HeadConfig(c)
        for c in sequence(configs, "configs", "head configurations")
    ]
    if not models or not configs:
        raise ValueError("models: expected at least one data model and one head configuration")
    return merge(
        *(P.rotation_invariant_data(m) for m in models),
        *((P.orthonormal_heads(c), P.uniform_averaging(c)) for c in configs),
    )


#: The size of a rise of the IMSE that matters for the monotonicity claims, in per cent of the IMSE it
#: rises from (:data:`mhanw.constants.IMSE_RESOLUTION_PCT`): a "holds" from "no significant rise" needs
#: the run to see a rise this large (3 s.e. below it).
RISE_TOL_PCT = IMSE_RESOLUTION_PCT


def _rise_power(verdict: str, max_se_pct: float) -> tuple[str, float]:
    """A holds from "no significant rise" kept only when ``3 s.e.`` of the rise is below :data:`RISE_TOL_PCT`."""
    detectable = N_SE * max_se_pct
    return V.power_verdict(verdict, detectable, RISE_TOL_PCT), detectable


@checked(max_z=V.number, max_se_pct=V.standard_error, where=V.text, premises=V.premise_list)
def identical_worst_verdict(max_z: float, max_se_pct: float, where: str, premises):
    """S-weak: no configuration is worse than identical heads (isotropic m and inputs).

    ``max_z``: the largest z-score of IMSE(c) - IMSE(identical) over the configurations, found at
    ``where``; ``max_se_pct``: the largest s.e. of those differences, per cent of IMSE(identical);
    ``premises``: :func:`isotropic_premises`.  Fails when some configuration is worse by 3 s.e.; holds
    (under the premises) when none is and the run could see an excess of :data:`RISE_TOL_PCT`;
    undecided otherwise."""
    verdict, detectable = _rise_power(FAILS if max_z > N_SE else HOLDS_UNDER, max_se_pct)
    return _verdict(
        claim="thm-4.2/identical-worst",
        statement="Identical heads have the largest IMSE (isotropic m and inputs)",
        verdict=verdict,
        premises=premises,
        criterion=f"largest z-score of IMSE(c) - IMSE(identical) over every configuration of the isoclinic "
        f"families and the random configurations: above 3 fails; otherwise holds when 3 s.e. is "
        f"below {RISE_TOL_PCT:g} % of IMSE(identical), else undecided",
        statistics=(_stat(f"largest z-score ({where})", max_z),),
        detectable=detectable,
        tolerance=RISE_TOL_PCT,
        unit="%",
    )


@checked(
    max_step_z=V.number,
    max_step_se_pct=V.standard_error,
    end_z=V.number,
    end_rel_pct=V.number,
    where=V.text,
    premises=V.premise_list,
    profile=V.note,
)
def families_verdict(
    max_step_z: float, max_step_se_pct: float, end_z: float, end_rel_pct: float, where: str, premises, profile: str = ""
):
    """IMSE non-increasing along the isoclinic pair and star families (the isotropic reading).

    ``max_step_z``: the largest z-score of a step (more diverse minus less diverse) over the families and
    isotropic ``m``, at the step ``where`` (``"star family, m = ..., 60 to 90 deg"``);
    ``max_step_se_pct``: the largest s.e. of a step, per cent of the IMSE it starts from; ``end_z``,
    ``end_rel_pct``: the least favourable identical-to-orthogonal z-score and change (%).  Fails when
    some step rises by 3 s.e.; holds (under the premises) when none does, the end-to-end fall is seen
    (z below -3) and the run could see a rise of :data:`RISE_TOL_PCT`; undecided otherwise.  When a
    premise fails the decision is kept as what the numbers show (the constructor converts).  ``profile``:
    the IMSE along the family of ``where`` (:func:`family_profile`), appended to the finding of a rise."""
    if max_step_z > N_SE:
        verdict = FAILS
    elif end_z < -N_SE:
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    verdict, detectable = _rise_power(verdict, max_step_se_pct)
    end = f"falls by at least {-end_rel_pct:.1f} %" if end_rel_pct < 0 else f"changes by {end_rel_pct:+.1f} %"
    if verdict == FAILS:
        finding = (
            f"the IMSE is not monotone in HDI_PA along the isoclinic families: it rises by {max_step_z:.1f} "
            f"s.e. ({where}), although from identical to orthogonal heads it {end} (z {end_z:.1f})"
            + (f"; {profile}" if profile else "")
        )
    else:
        finding = (
            f"no step along the isoclinic families raises the IMSE by 3 s.e. (largest z {max_step_z:.1f}, "
            f"{where}), and from identical to orthogonal heads it {end} (z {end_z:.1f})"
        )
    return _verdict(
        claim="thm-4.2/isotropic-families",
        statement="The IMSE does not increase with HDI_PA along the isoclinic families (isotropic m)",
        verdict=verdict,
        premises=premises,
        criterion=f"largest z-score of a step (more diverse minus less diverse) above 3 fails; otherwise "
        f"holds when the most positive identical-to-orthogonal z-score is below -3 and 3 s.e. of a "
        f"step is below {RISE_TOL_PCT:g} % of the IMSE, else undecided",
        statistics=(
            _stat("largest step z-score", max_step_z),
            _stat("identical-to-orthogonal z-score", end_z),
            _stat("identical-to-orthogonal change, least favourable", end_rel_pct, unit="%"),
        ),
        detectable=detectable,
        tolerance=RISE_TOL_PCT,
        unit="%",
        finding=finding,
    )


def family_profile(summary: dict, deg, every: float = 30.0) -> str:
    """The IMSE along one isoclinic family in words: its change against identical heads at every
    multiple of ``every`` degrees of ``deg`` (the family's angles, increasing) and the z-scores of the
    steps that raise it by more than 3 paired s.e.  ``summary``: :func:`family_summary` of the family.
    E.g. ``"IMSE change against identical heads -20.7 % at 30 deg, -25.1 % at 60 deg, -7.9 % at 90 deg;
    steps that rise by 3 s.e.: 60 to 75 deg (z +25.8), 75 to 90 deg (z +36.7)"``."""
    deg = as_float_array(deg, "deg", ndim=1)
    every = positive_scalar(every, "every")
    if len(summary.get("rel", ())) != deg.size or deg.size < 2:
        raise ValueError(f"deg: expected one angle per configuration of the family ({len(summary.get('rel', ()))})")
    at = [i for i in range(1, deg.size) if abs(deg[i] / every - round(deg[i] / every)) < 1e-9] or [deg.size - 1]
    change = ", ".join(f"{100 * summary['rel'][i]:+.1f} % at {deg[i]:g} deg" for i in at)
    rises = [
        f"{deg[i]:g} to {deg[i + 1]:g} deg (z {summary['step_z'][i]:+.1f})"
        for i in range(deg.size - 1)
        if summary["step_z"][i] > N_SE
    ]
    return f"IMSE change against identical heads {change}" + (
        f"; steps that rise by 3 s.e.: {', '.join(rises)}" if rises else "; no step rises by 3 s.e."
    )


@checked(rel_pct=V.number, rel_se_pct=V.standard_error, z=V.number)
def anisotropic_verdict(rel_pct: float, rel_se_pct: float, z: float):
    """IMSE non-increasing in HDI for anisotropic m: fails when orthogonal heads are worse than identical
    ones by more than 3 s.e.; the check can only refute."""
    finding = (
        f"for an anisotropic m the IMSE rises with HDI_PA: orthogonal heads are worse than identical ones by "
        f"{rel_pct:+.1f} ± {rel_se_pct:.1f} % (z {z:.1f}), so Theorem 4.2 needs an isotropic m"
        if z > N_SE
        else f"for an anisotropic m orthogonal heads and identical ones differ by {rel_pct:+.1f} ± {rel_se_pct:.1f} % "
        f"(z {z:.1f})"
    )
    return _verdict(
        claim="thm-4.2/anisotropic",
        finding=finding,
        statement="The IMSE does not increase with HDI_PA for an anisotropic m",
        verdict=FAILS if z > N_SE else UNDECIDED,
        criterion="z-score of IMSE(orthogonal) - IMSE(identical) along the isoclinic families (the "
        "smaller of the two) against 3",
        statistics=(_stat("IMSE change identical to orthogonal", rel_pct, rel_se_pct, "%"), _stat("z", z)),
    )


@checked(rel_pct=V.named(V.number), rel_se_pct=V.named(V.standard_error), z=V.named(V.number))
def equal_hdi_verdict(rel_pct: dict, rel_se_pct: dict, z: dict):
    """IMSE a function of HDI: two configurations with equal HDI_PA must have equal IMSE; fails when
    some isotropic m separates them by more than 3 paired s.e., otherwise "undecided" (equality cannot be
    shown by one pair)."""
    _same_keys(z, rel_pct=rel_pct, rel_se_pct=rel_se_pct)
    bad = any(abs(v) > N_SE for v in z.values())
    stats = tuple(
        s
        for m in z
        for s in (
            _stat(f"P vs Q, {regression_label(m)}", rel_pct[m], rel_se_pct[m], "%"),
            _stat(f"z, {regression_label(m)}", z[m]),
        )
    )
    top = max(z, key=lambda m: abs(z[m]))
    gap = f"{rel_pct[top]:+.1f} ± {rel_se_pct[top]:.1f} % for {regression_label(top)} (z {z[top]:.1f})"
    finding = (
        f"two configurations with the same HDI_PA = 1/2 have different IMSEs: P against Q {gap}, so the IMSE "
        "is not a function of HDI_PA alone"
        if bad
        else f"the two configurations with HDI_PA = 1/2 do not differ by 3 paired s.e. (P against Q {gap})"
    )
    return _verdict(
        claim="thm-4.2/equal-hdi",
        statement="Configurations with equal HDI_PA have equal IMSE",
        finding=finding,
        verdict=FAILS if bad else UNDECIDED,
        criterion="|z| of IMSE(P) - IMSE(Q) (both HDI_PA = 1/2) against 3, for each isotropic m",
        statistics=stats,
    )


@checked(rel_pct=V.named(V.number), rel_se_pct=V.named(V.standard_error), z=V.named(V.number), hdi_gap=V.number)
def higher_hdi_verdict(rel_pct: dict, rel_se_pct: dict, z: dict, hdi_gap: float):
    """Monotone in HDI: a configuration with higher HDI_PA must not have a higher IMSE; fails when P'
    (higher HDI) is worse than Q by more than 3 paired s.e. for some isotropic m."""
    _same_keys(z, rel_pct=rel_pct, rel_se_pct=rel_se_pct)
    bad = any(v > N_SE for v in z.values())
    stats = tuple(
        s
        for m in z
        for s in (
            _stat(f"P' vs Q, {regression_label(m)}", rel_pct[m], rel_se_pct[m], "%"),
            _stat(f"z, {regression_label(m)}", z[m]),
        )
    )
    return _verdict(
        claim="thm-4.2/higher-hdi-higher-imse",
        statement="A configuration with higher HDI_PA never has a higher IMSE (isotropic m)",
        verdict=FAILS if bad else UNDECIDED,
        criterion=f"z of IMSE(P') - IMSE(Q) against 3 for each isotropic m; P' has HDI_PA higher by {hdi_gap:.3f}",
        statistics=stats,
    )


@checked(
    rho=V.number,
    rho_se=V.standard_error,
    n_violations=V.count,
    expected=V.nonnegative,
    n_pairs=V.count,
    max_se_pct=V.standard_error,
    premises=V.premise_list,
)
def random_verdict(
    rho: float, rho_se: float, n_violations: int, expected: float, n_pairs: int, max_se_pct: float, premises
):
    """IMSE non-increasing in HDI over random configurations (the isotropic reading).

    Fails when the significant violations (higher HDI, IMSE higher by 3 paired
    s.e.) are more than chance allows: above the 99.9 % Poisson quantile of the
    number expected if no pair differed.  Holds (under the premises,
    :func:`isotropic_premises`) when they are not, the rank correlation is
    negative by more than 3 bootstrap s.e. and the run could see a violation of
    :data:`RISE_TOL_PCT` (``max_se_pct``: the largest paired s.e. of a pair, per cent
    of the IMSE); undecided otherwise.
    """
    if n_violations > n_pairs:
        raise ValueError(f"n_violations: at most n_pairs = {n_pairs} pairs can violate, got {brief(n_violations)}")
    if expected > n_pairs:
        raise ValueError(
            f"expected: at most n_pairs = {n_pairs} violations can be expected by chance, got {brief(expected)}"
        )
    allowed = int(poisson.ppf(1 - CHANCE_LEVEL, expected))
    if n_violations > allowed:
        verdict = FAILS
    elif rho + N_SE * rho_se < 0:
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    verdict, detectable = _rise_power(verdict, max_se_pct)
    return _verdict(
        claim="thm-4.2/random-configurations",
        statement="Over random configurations the IMSE does not increase with HDI_PA (isotropic m)",
        verdict=verdict,
        premises=premises,
        criterion=f"significant violations among {n_pairs} ordered pairs with an HDI gap above 0.02 against "
        f"{allowed} (99.9 % Poisson quantile of the {expected:.2f} expected by chance): more fails; "
        "otherwise holds when the Spearman correlation is below 0 by 3 bootstrap s.e. and 3 paired "
        f"s.e. is below {RISE_TOL_PCT:g} % of the IMSE, else undecided",
        statistics=(
            _stat("Spearman correlation", rho, rho_se),
            _stat("significant violations", n_violations),
            _stat("expected by chance", expected),
        ),
        detectable=detectable,
        tolerance=RISE_TOL_PCT,
        unit="%",
    )


#: The Poisson tail beyond which a count of violations is more than chance (0.1 %: a false alarm of the
#: whole family of pairs about as rare as one 3-s.e. false alarm).
CHANCE_LEVEL = 1e-3


def _bins(bins, name: str) -> dict:
    """``{target HDI_PA: heterogeneity(...) dict}`` with a p-value in [0, 1], ``tau_pct`` and its s.e."""
    if not isinstance(bins, dict) or not bins:
        raise ValueError(f"{name}: expected a non-empty dict {{target: heterogeneity(...)}}, got {brief(bins)}")
    for t, b in bins.items():
        V.number(t, f"{name}: the target HDI_PA {t!r}")
        if not isinstance(b, dict) or not {"p", "tau_pct", "tau_se_pct"} <= set(b):
            raise ValueError(f"{name}[{t!r}]: expected a dict with 'p', 'tau_pct' and 'tau_se_pct'")
        if not 0.0 <= V.number(b["p"], f"{name}[{t!r}]['p']") <= 1.0:
            raise ValueError(f"{name}[{t!r}]['p']: expected a p-value in [0, 1], got {brief(b['p'])}")
        V.number(b["tau_pct"], f"{name}[{t!r}]['tau_pct']")
        V.standard_error(b["tau_se_pct"], f"{name}[{t!r}]['tau_se_pct']")
    return bins


@checked(bins=_bins)
def matched_hdi_verdict(bins: dict):
    """IMSE a function of HDI, tested on random configurations at matched HDI_PA.

    ``bins``: ``{target: heterogeneity(...) dict}``.  Fails when the smallest
    Hotelling p-value, times the number of bins (Bonferroni), is below the size
    of the 3-s.e. rule; undecided otherwise (equality cannot be shown).
    """
    p_adj = min(1.0, min(b["p"] for b in bins.values()) * len(bins))
    stats = tuple(
        s
        for t, b in bins.items()
        for s in (
            _stat(f"between-configuration sd at HDI_PA {t:g}", b["tau_pct"], b["tau_se_pct"], "%"),
            _stat(f"Hotelling p at HDI_PA {t:g}", b["p"]),
        )
    )
    return _verdict(
        claim="thm-4.2/matched-hdi",
        statement="Random configurations with the same HDI_PA have the same IMSE",
        verdict=FAILS if p_adj < P_3SE else UNDECIDED,
        criterion=f"Hotelling's T^2 on the paired contrasts within each HDI bin; the smallest p-value times "
        f"{len(bins)} bins against {P_3SE:.4f} (the size of the 3-s.e. rule)",
        statistics=stats + (_stat("Bonferroni-adjusted p", p_adj),),
    )


@checked(parts=V.records)
def as_stated_verdict(parts):
    """Thm 4.2 as stated (the IMSE is a non-increasing function of HDI): fails when any part that tests
    it fails; undecided otherwise (such a statement cannot be confirmed by finitely many checks)."""
    parts = V.records(parts, "parts")
    failed = [r.claim for r in parts if r.fails]
    return _verdict(
        claim="thm-4.2/as-stated",
        statement="The MSE of multi-head attention is a non-increasing function of the HDI",
        verdict=FAILS if failed else UNDECIDED,
        criterion=f"fails when any of the {len(parts)} parts that test it fails, else undecided",
        statistics=(_stat("parts that fail", len(failed)),),
    )


@checked(min_diff=V.number, se=V.standard_error, min_z=V.number)
def attention_verdict(min_diff: float, se: float, min_z: float):
    """Sensitivity: plain softmax attention at beta = 1/sqrt(d_k) improves on the training mean at some HDI."""
    return _verdict(
        claim="thm-4.2/plain-attention-benefit",
        role=V.SIDE_CHECK,
        statement="Plain softmax attention (beta = 1/sqrt(d_k)) beats the training mean at some HDI_PA",
        verdict=significant_effect(min_diff, se, sign=-1),
        criterion="the smallest IMSE(attention) - IMSE(training mean) over the angles: below -3 s.e. holds, "
        "above +3 s.e. fails",
        statistics=(_stat("smallest difference", min_diff, se), _stat("z", min_z)),
    )


# --------------------------------------------------------------------------- parameters and names

from ..infra import params as _P  # noqa: E402  (the declaration below is the module's last part)

#: The data and random-configuration parameters that chapters 04 and 05 share (the same experiment).
SHARED_PARAMETERS = {
    "inputs": _P.inputs(),
    "noise": _P.noise(),
    "sigma": _P.noise_level(),
    "n": _P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidth": _P.bandwidth(),
    "random_n": _P.positive_int(2, 40_000, why="100 times the default 400"),
    "random_bandwidth": _P.bandwidth(),
    "random_d": _P.positive_int(2, 1024, why="a model dimension, 170 times the default 6"),
    "random_d_k": _P.positive_int(1, 1024, at_most="random_d", why="a model dimension"),
    "random_H": _P.positive_int(2, 1024, why="a model dimension's worth of heads"),
    "random_rule": _P.choice(*_heads.RULES),
}

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).  The
#: isoclinic families fix their own shapes (pair: d = 4, d_k = 2, H = 2; star: d = 10, d_k = 2, H = 4).
PARAMETERS = {
    **_P.STANDARD,
    "n_jobs": _P.workers(),
    "isotropic_regressions": _P.sequence(_P.regression(dimension=4), length=2),
    "anisotropic_regression": _P.regression(dimension=4),
    "random_regression": _P.regression(dimension="random_d"),
    **SHARED_PARAMETERS,
    "matched_targets": _P.sequence(_P.probability(open_ends=True)),
    "matched_configs": _P.positive_int(2, 800, why="100 times the default 8"),
    "matched_kernel": _P.choice(*_heads.KERNELS),
}
CONSTRAINTS = (_P.product_at_most(("random_H", "random_d_k"), "random_d"),)

#: The Monte Carlo sizes at each fidelity (:func:`setup`): angle steps (deg) and replicates of the pair,
#: star and plain-attention families, replicates of the equal-HDI, random, matched-HDI and covariance
#: experiments, random configurations, Haar draws per H, test points per replicate.
SIZES = dict(
    quick=dict(
        step_deg=15,
        pair_rep=80,
        star_deg=30,
        star_rep=50,
        equal_rep=500,
        n_configs=12,
        random_rep=100,
        attn_deg=30,
        attn_rep=60,
        haar_draws=10,
        n_test=200,
        cov_rep=100,
        cov_points=40,
        matched_rep=150,
    ),
    paper=dict(
        step_deg=7.5,
        pair_rep=400,
        star_deg=15,
        star_rep=200,
        equal_rep=1600,
        n_configs=24,
        random_rep=600,
        attn_deg=15,
        attn_rep=200,
        haar_draws=40,
        n_test=300,
        cov_rep=400,
        cov_points=40,
        matched_rep=500,
    ),
)

#: The experiments fed by the children of ``SeedSequence(seed)``, in spawn order (:func:`setup`).
STREAMS = ("table", "Haar draws", "pair", "star", "equal HDI", "random", "attention", "affine bound", "matched HDI")


def setup(nb) -> tuple:
    """The chapter's set-up, from ``nb``, the notebook's variables right after its parameters cell (a
    mapping: ``globals()``).  Checks the parameters (:data:`PARAMETERS`, :data:`CONSTRAINTS`; the first bad
    one raises :class:`mhanw.infra.params.ParameterError` naming it) and sets the figure style.

    Returns ``(params, model, sizes, streams)``: the checked parameters; ``{name: DataModel}`` for every
    regression function of the chapter (:func:`mhanw.data.data_model` with the parameters' inputs, noise
    and sigma); :data:`SIZES` at ``fidelity``; the ``len(STREAMS)`` children of ``SeedSequence(seed)``,
    one per experiment of :data:`STREAMS`."""
    from .. import data
    from ..infra.notebook import start

    params, sizes, streams = start(nb, PARAMETERS, CONSTRAINTS, SIZES, len(STREAMS))
    model = {
        m: data.data_model(m, params["inputs"], params["noise"], params["sigma"])
        for m in (*params["isotropic_regressions"], params["anisotropic_regression"], params["random_regression"])
    }
    return params, model, sizes, streams


#: How the figures and tables name the catalogue's regression functions (defined in the chapter's text).
REGRESSION_LABELS = {
    "iso_exp": r"$m_{\exp}$",
    "iso_cos": r"$m_{\cos,1.5}$",
    "iso_cos6": r"$m_{\cos,1.2}$",
    "aniso": r"$m_{\mathrm{aniso}}$",
    "blind": r"$m_{e_1}$",
}


def regression_label(spec) -> str:
    """The name a figure (and the paper) gives the regression function ``spec``: the text's symbol for a
    catalogue function, else ``m = `` its formula rendered by :func:`mhanw.infra.texout.tex_math` (the same
    in LaTeX and in matplotlib's mathtext: ``x1^2^2`` is ``m = x_{1}^{4}``, not two superscripts)."""
    from .. import data
    from ..infra.texout import tex_math

    try:
        hash(spec)
    except TypeError:
        raise ValueError(f"spec: expected a catalogue name or a formula, got {brief(spec)}") from None
    if spec in REGRESSION_LABELS:
        return REGRESSION_LABELS[spec]
    if not isinstance(spec, str):
        return "$m$"
    if (
        re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", spec)
        and not data.GRAMMAR.symbol(spec)
        and spec not in data.EXPRESSION_FUNCTIONS
    ):
        # a catalogue function the text gives no symbol, or a name the caller chose
        return r"$m = \mathrm{" + spec.replace("_", r"\_") + "}$"
    try:
        f = data.regression_function(spec)
    except ValueError as exc:
        raise ValueError(f"spec: {str(exc).partition(': ')[2]}") from None
    return f"$m = {tex_math(f.expression)}$"


def head_covariance(estimates) -> tuple:
    """The covariance of two heads' estimates across replicates, integrated over fixed test points: the
    number that refutes the affine bound (S-bound) of Thm 4.2 at HDI = 1, where the bound leaves no room
    for it.  ``estimates``: ``(R, 2, points)``, the two heads' estimates in ``R`` replicates at the same
    test points (:func:`mhanw.montecarlo.pointwise_estimates`).

    Returns ``(covariance, correlation)``: an :class:`mhanw.infra.estimates.Estimate` over replicates of
    the mean over points of the product of the heads' deviations from their means (times ``R/(R - 1)``,
    unbiased), and the summed covariance over the square root of the two summed variances."""
    est = as_float_array(estimates, "estimates", ndim=3)
    if est.shape[0] < 2 or est.shape[1] != 2:
        raise ValueError(f"estimates: expected shape (R >= 2 replicates, 2 heads, points), got {est.shape}")
    dev = est - est.mean(axis=0)
    R = dev.shape[0]
    u = (dev[:, 0] * dev[:, 1]).mean(axis=1) * R / (R - 1)  # per replicate: integrated product of deviations
    corr = float(
        np.mean(np.sum(dev[:, 0] * dev[:, 1], 0))
        / np.sqrt(np.mean(np.sum(dev[:, 0] ** 2, 0)) * np.mean(np.sum(dev[:, 1] ** 2, 0)))
    )
    return Estimate.from_samples(u), corr


def kernel_label(kind: str) -> str:
    r"""The name the figure and the tables of the plain-attention section give the head kind ``kind`` (a key
    of the notebook's ``attn_kinds``): a closing ``beta = VALUE`` or ``h = VALUE`` is set as maths, with
    ``1/sqrt(d_k)`` as a root (``"attention, beta = 1/sqrt(d_k)"`` is ``"attention, $\beta=1/\sqrt{d_k}$"``);
    any other name is returned as it is."""
    if not isinstance(kind, str):
        raise ValueError(f"kind: expected a head kind's name (a string), got {brief(kind)}")

    def maths(match):
        symbol = r"\beta" if match[1] == "beta" else "h"
        value = match[2].replace("1/sqrt(d_k)", r"1/\sqrt{d_k}")
        return f"${symbol}={value}$"

    return re.sub(r"\b(beta|h) = (\S+)$", maths, kind)


@notebook_helper
def family_table(summaries: dict):
    """The table of an isoclinic family (pair or star, Thm 4.2): one row per regression function, named by
    :func:`regression_label`, with the IMSE of identical heads, the change from identical to orthogonal
    heads (% ± s.e.) and the largest z-score of a step (above 3: a rise).  ``summaries``: ``{m: summary}``
    of :func:`family_summary`.  Returns a :class:`mhanw.infra.tables.Table`."""
    from ..infra import tables

    if not isinstance(summaries, dict) or not summaries:
        raise ValueError(f"summaries: expected a non-empty dict {{m: family_summary(...)}}, got {brief(summaries)}")
    return tables.show(
        {
            regression_label(m): {
                "IMSE at 0°": round(s["imse"][0], 4),
                "change at 90° (%)": f"{100 * s['rel'][-1]:+.1f} ± {100 * s['rel_se'][-1]:.1f}",
                "largest step z (above 3: a rise)": round(s["max_step_z"], 1),
            }
            for m, s in summaries.items()
        },
        index="$m$",
    )


@notebook_helper
def equal_hdi_table(equal: dict, equal_hdi: dict):
    """The table of the equal-HDI test (Thm 4.2): one row per regression function (:func:`regression_label`),
    the paired differences ``P - Q`` and ``P' - Q`` of the IMSE, each ± its s.e. and, in a column of its own,
    its z-score; the HDI_PA of ``P``, ``Q``, ``P'`` in the note.  ``equal``: ``{m: {"P_minus_Q",
    "P_minus_Q_se", "Pp_minus_Q", "Pp_minus_Q_se", ...}}``; ``equal_hdi``: ``{name: HDI_PA}`` of the three
    configurations.  Returns a :class:`mhanw.infra.tables.Table`."""
    from ..infra import tables

    if not isinstance(equal, dict) or not equal or not isinstance(equal_hdi, dict):
        raise ValueError(
            f"equal, equal_hdi: expected the notebook's dicts of the equal-HDI test, got {brief(equal)}, "
            f"{brief(equal_hdi)}"
        )
    rows = {}
    for m, e in equal.items():
        rows[regression_label(m)] = {}
        for name, key in (("$P-Q$", "P_minus_Q"), ("$P'-Q$", "Pp_minus_Q")):
            d, se = e[key], e[f"{key}_se"]
            rows[regression_label(m)] |= {name: f"{d:.5f} ± {se:.5f}", f"z of {name}": round(d / se, 1)}
    hdi = ", ".join(f"{k} {v:.3f}" for k, v in equal_hdi.items())
    return tables.show(rows, index="$m$", note=f"HDI$_{{\\mathrm{{PA}}}}$: {hdi}")


def attention_tables(attn: dict, deg, mean: tuple):
    """The two tables of the plain-attention section (Thm 4.2), one row per angle of the pair family and one
    column per head kind (:func:`kernel_label`): the IMSE ± s.e., and the IMSE minus that of the training
    mean in paired s.e.  ``attn``: ``{kind: {"imse", "se", "z_vs_mean"}}`` (arrays over ``deg``, the angles
    in degrees); ``mean``: the training mean's ``(IMSE, s.e.)``.  Returns a :class:`mhanw.infra.tables.Tables`."""
    from ..infra import tables

    deg = as_float_array(deg, "deg", ndim=1)
    if not isinstance(attn, dict) or not attn:
        raise ValueError(f"attn: expected a non-empty dict {{kind: {{'imse', 'se', 'z_vs_mean'}}}}, got {brief(attn)}")
    for k, v in attn.items():
        if any(len(v[key]) != len(deg) for key in ("imse", "se", "z_vs_mean")):
            raise ValueError(f"attn[{k!r}]: expected one value per angle ({len(deg)}) in 'imse', 'se' and 'z_vs_mean'")
    angle = {"angle": [f"{a:g}°" for a in deg]}
    imse = tables.show(
        angle | {kernel_label(k): [tables.pm(m, s) for m, s in zip(v["imse"], v["se"])] for k, v in attn.items()},
        caption="IMSE ± s.e., by angle of the pair family",
        note=f"training mean: IMSE {tables.pm(*mean)}",
    )
    z = tables.show(
        angle | {kernel_label(k): [f"{z:.1f}" for z in v["z_vs_mean"]] for k, v in attn.items()},
        caption="IMSE minus the training mean's, in paired s.e.",
    )
    return tables.Tables([imse, z])


@checked(z_aniso=V.number)
def guard_projection_bias(z_aniso: float) -> None:
    """Guard of the sentence "the diverse heads turn away from the directions that carry the signal and,
    averaged, add their projection bias" (chapter and Section 5): it explains a rise of the IMSE with HDI
    for the anisotropic m, so that rise must be significant (z > 3)."""
    from ..infra.verdicts import guard

    guard(
        bool(z_aniso > N_SE),
        "the IMSE of the anisotropic m rises with HDI (projection bias of the diverse heads)",
        f"the identical-to-orthogonal z-score is {z_aniso:.1f}, not above {N_SE:g}",
    )


# --------------------------------------------------------------------------- the notebook's figure and records


@notebook_helper
def mse_figure(nb):
    """The figure of Thm 4.2 (``04_head_diversity_index_mse``), a 3 x 2 grid of panels: top row (a) the
    isotropic ``m`` along the pair and star families, IMSE change against identical heads, and (b) the
    anisotropic ``m`` as a ratio (log scale); middle row (c) plain softmax attention along the pair family
    and (d) the equal-HDI configurations against ``Q``; bottom row (e) the random configurations against
    the orthogonal blocks and (f) the matched-HDI bins against the best of their bin.  Bars: 2 paired s.e.

    ``nb``: the executed notebook's variables (a mapping; the names its cells define: ``pair``, ``star``,
    ``attn``, ``equal``, ``rand_cfg``, ``matched``, ...).  Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    nb = Namespace(nb)
    fig, ax = plt.subplot_mosaic([["a", "b"], ["c", "d"], ["e", "f"]], figsize=(figures.TEXT_WIDTH, 3 * 1.7 + 0.4))
    for fam, hdi, summ, ls, mk in [
        ("pair, $H=2$", nb.pair_hdi, nb.pair, "-", "o"),
        ("star, $H=4$", nb.star_hdi, nb.star, "--", "s"),
    ]:
        for m, color in zip(nb.ISO, ("C0", "C1")):
            figures.errorbar(
                ax["a"],
                hdi,
                100 * summ[m]["rel"],
                100 * summ[m]["rel_se"],
                color=color,
                linestyle=ls,
                marker=mk,
                ms=3,
                label=f"{regression_label(m)}, {fam}",
            )
        figures.errorbar(
            ax["b"],
            hdi,
            1 + summ[nb.ANISO]["rel"],
            summ[nb.ANISO]["rel_se"],
            color="C2",
            linestyle=ls,
            marker=mk,
            ms=3,
            label=f"{regression_label(nb.ANISO)}, {fam}",
        )
    ax["a"].axhline(0, color="grey", lw=0.6)
    ax["a"].set(xlabel=r"HDI$_{\mathrm{PA}}$", ylabel="IMSE change vs identical (%)", title="(a) isotropic $m$")
    ax["a"].legend(loc="lower left", fontsize=7)
    ax["b"].set(
        yscale="log", xlabel=r"HDI$_{\mathrm{PA}}$", ylabel="IMSE / IMSE(identical)", title="(b) anisotropic $m$"
    )
    ax["b"].set_yticks([1, 1.5, 2, 3, 4, 6], ["1", "1.5", "2", "3", "4", "6"])
    ax["b"].minorticks_off()
    ax["b"].legend(loc="upper left")

    for (k, v), color, mk in zip(nb.attn.items(), ("C3", "C4", "C0"), ("v", "^", "o")):
        figures.errorbar(
            ax["c"],
            np.sin(np.radians(nb.attn_deg)) ** 2,
            v["imse"],
            v["se"],
            color=color,
            marker=mk,
            ms=3,
            label=kernel_label(k),
        )
    # the training mean's +-2 s.e. is narrower than a line at this scale: drawn as a dashed line, its s.e. in the legend
    ax["c"].axhline(
        nb.attn_mean[0],
        color="grey",
        lw=1.0,
        ls="--",
        label=rf"training mean $\bar Y$ ($\pm${2 * nb.attn_mean[1]:.3f})",
    )
    ax["c"].set(
        yscale="log",
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel=f"IMSE, {regression_label(nb.ISO[1])}",
        title="(c) plain attention",
    )
    ax["c"].set_yticks([0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0], ["0.15", "0.2", "0.3", "0.5", "0.7", "1", "2"])
    ax["c"].minorticks_off()
    ax["c"].set_ylim(0.12, 4.0)
    ax["c"].legend(loc="upper center", ncol=2, fontsize=7)

    names = [
        f"{k}\n{tuple(int(round(a)) for a in ang)} deg\nHDI {nb.equal_hdi[k]:.3f}"
        for k, ang in zip(nb.equal_cfgs, [(0, 90), (45, 45), (8, 90)])
    ]
    for off, m, color, mk in zip((-0.08, 0.08), nb.ISO, ("C0", "C1"), ("o", "s")):
        figures.errorbar(
            ax["d"],
            np.arange(3) + off,
            100 * nb.equal[m]["rel"],
            100 * nb.equal[m]["rel_se"],
            color=color,
            linestyle="none",
            marker=mk,
            label=regression_label(m),
        )
    ax["d"].axhline(0, color="grey", lw=0.6)
    ax["d"].set_xticks(range(3), names)
    ax["d"].set(xlim=(-0.5, 2.5), ylabel="IMSE change vs Q (%)", title="(d) equal HDI and a higher HDI")
    ax["d"].legend(loc="upper center", fontsize=7)

    o = nb.rand_cfg.orthogonal
    figures.errorbar(
        ax["e"],
        nb.rand_cfg.hdi[nb.others],
        100 * nb.rand_rel[nb.others],
        100 * nb.rand_rel_se[nb.others],
        color="C1",
        linestyle="none",
        ms=3,
        label=f"interpolated (Spearman {nb.rand_rho:.2f})".replace("-", "\u2212"),
    )
    ax["e"].plot(nb.rand_cfg.hdi[o], 0.0, marker="*", color="k", ms=9, linestyle="none", label="orthogonal blocks")
    ax["e"].axhline(0, color="grey", lw=0.6)
    ax["e"].set(
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel="IMSE change vs orthogonal (%)",
        title=rf"(e) random configurations, {regression_label(nb.random_regression)}",
    )
    lo, hi = ax["e"].get_ylim()
    ax["e"].set_ylim(lo, hi + 0.3 * (hi - lo))  # headroom for the legend
    ax["e"].legend(loc="best", fontsize=7, markerscale=0.7)  # short labels: the legend fits where no point is

    for k, ((target, v), color, mk) in enumerate(
        zip(nb.matched.items(), ("C0", "C3", "C2", "C4"), ("o", "s", "^", "D"))
    ):
        order = np.argsort(v["imse"])
        figures.errorbar(
            ax["f"],
            np.arange(v["K"]) + 0.15 * k,
            100 * v["rel"][order],
            100 * v["rel_se"][order],
            color=color,
            marker=mk,
            linestyle="none",
            ms=3,
            label=rf"HDI$_{{\mathrm{{PA}}}}$ {target:g}, Hotelling p {v['p']:.2g}",
        )
    ax["f"].axhline(0, color="grey", lw=0.6)
    ax["f"].set(
        xlabel="configuration (sorted by IMSE)", ylabel="IMSE change vs best of bin (%)", title="(f) matched HDI"
    )
    lo, hi = ax["f"].get_ylim()
    ax["f"].set_ylim(lo, hi + 0.35 * (hi - lo))  # headroom for the legend
    ax["f"].legend(loc="upper left", fontsize=7)
    return fig


def close(nb, macros_path, results_path):
    """Decide every record of the chapter from the notebook's numbers (the rules above, premises from
    :func:`isotropic_premises`), guard the sentences that state a direction, write the macros (prefix
    ``DivIndex``, to ``macros_path``) and the raw results (fidelity, seed, sizes, the records and every
    experiment's numbers, to ``results_path``); returns the :class:`mhanw.infra.verdicts.Ledger`.
    ``nb``: the executed notebook's variables (a mapping: the parameters, ``params``, ``model`` and
    ``sizes`` of :func:`setup`, and the names the chapter's cells define)."""
    from ..infra.premises import merge
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs, tex_text
    from ..infra.verdicts import Ledger, verdict_macros

    nb = Namespace(nb)
    macros = Macros("DivIndex")
    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes}
    t0 = nb.table[nb.shapes[0]]
    # The premises of the isotropic reading, evaluated on the models and heads that ran (mhanw.premises)
    iso_prem = isotropic_premises([nb.model[m] for m in nb.ISO], nb.pair_cfgs + nb.star_cfgs)
    rand_prem = isotropic_premises(
        [nb.model[nb.random_regression]],
        [_heads.HeadConfig(W, **rule_options(nb.random_rule)) for W in nb.rand_cfg.projections],
    )
    fams = {"pair": (nb.pair, nb.pair_deg), "star": (nb.star, nb.star_deg)}
    # the largest step z-score of the isotropic m, and where it is
    step_max_iso, where_step = max(
        (float(fs[m]["step_z"][i]), f"{fam} family, {regression_label(m)}, {deg[i]:g} to {deg[i + 1]:g} deg")
        for fam, (fs, deg) in fams.items()
        for m in nb.ISO
        for i in range(len(deg) - 1)
    )
    step_se_pct_iso = max(
        float(np.max(100 * fs[m]["step_se"] / fs[m]["imse"][:-1])) for fs, _ in fams.values() for m in nb.ISO
    )
    end_z_iso = max(
        max(nb.pair[m]["z"][-1], nb.star[m]["z"][-1]) for m in nb.ISO
    )  # most positive end-to-end z (should be < -3)
    end_rel_iso = max(max(100 * nb.pair[m]["rel"][-1], 100 * nb.star[m]["rel"][-1]) for m in nb.ISO)
    # S-weak: largest z-score of IMSE(c) - IMSE(identical) over every other configuration of the families and the random ones
    rand_rel_identical = nb.rand.relative_to(nb.rand_cfg.identical)
    sweak_z, sweak_where = max(
        [
            (float(fs[m]["z"][i]), f"{fam} family, {regression_label(m)}, {deg[i]:g} deg")
            for fam, (fs, deg) in fams.items()
            for m in nb.ISO
            for i in range(1, len(deg))
        ]
        + [
            (float(nb.rand_vs_identical.z[i]), f"random configuration of HDI_PA {nb.rand_cfg.hdi[i]:.2f}")
            for i in range(len(nb.rand_cfg.hdi))
            if i != nb.rand_cfg.identical
        ]
    )
    sweak_se_pct = max(
        max(100 * fs[m]["rel_se"][1:].max() for fs, _ in fams.values() for m in nb.ISO),
        100 * float(np.delete(rand_rel_identical.se, nb.rand_cfg.identical).max()),
    )
    z_B = {m: nb.equal[m]["P_minus_Q"] / nb.equal[m]["P_minus_Q_se"] for m in nb.ISO}
    z_Bp = {m: nb.equal[m]["Pp_minus_Q"] / nb.equal[m]["Pp_minus_Q_se"] for m in nb.ISO}
    aniso_fam = min(("Pair", nb.pair), ("Star", nb.star), key=lambda fs: fs[1][nb.ANISO]["z"][-1])[1][nb.ANISO]
    z_aniso = aniso_fam["z"][-1]
    canon, four = nb.attn["attention, beta = 1/sqrt(d_k)"], nb.attn["attention, beta = 4"]
    canon_diff = nb.attn_res.differences_from(nb.k_mean)
    i_best = int(np.argmin(nb.block(canon_diff.mean, 0)))

    ledger = Ledger("04_head_diversity_index")
    add = ledger.add
    rec_identical = add(printed_identical_verdict(t0["identical"]["paper"], nb.shapes[0][2]))
    add(
        printed_range_verdict(
            {
                f"{HEAD_TYPE_NAMES.get(k, k)}, (d, H, d_k) = {shape}": v["paper"]  # every shape shown
                for shape in nb.shapes
                for k, v in nb.table[shape].items()
            }
        )
    )
    add(printed_scale_verdict(t0["identical"]["paper"], t0["identical_x2"]["paper"]))
    pa_dev = {
        "identical": abs(t0["identical"]["principal_angles"]),
        "orthogonal": abs(t0["orthogonal"]["principal_angles"] - 1),
        "range": max(max(-v["principal_angles"], v["principal_angles"] - 1, 0.0) for v in t0.values()),
        "scale": abs(t0["identical_x2"]["principal_angles"] - t0["identical"]["principal_angles"]),
    }
    rec_pa = add(pa_properties_verdict(pa_dev))
    rec_bound = add(affine_bound_verdict(nb.cov_orth.mean, nb.cov_orth.se, nb.cov_corr))
    rec_sweak = add(identical_worst_verdict(sweak_z, sweak_se_pct, sweak_where, merge(iso_prem, rand_prem)))
    m_step = max(nb.ISO, key=lambda m: max(float(np.max(fs[m]["step_z"])) for fs, _ in fams.values()))
    profile = "; ".join(
        f"{fam} family, {regression_label(m_step)}: {family_profile(fs[m_step], deg)}"
        for fam, (fs, deg) in fams.items()
    )
    rec_iso = add(
        families_verdict(step_max_iso, step_se_pct_iso, end_z_iso, end_rel_iso, where_step, iso_prem, profile)
    )
    rec_aniso = add(anisotropic_verdict(100 * aniso_fam["rel"][-1], 100 * aniso_fam["rel_se"][-1], z_aniso))
    rec_equal = add(
        equal_hdi_verdict(
            {m: 100 * nb.equal[m]["rel"][0] for m in nb.ISO}, {m: 100 * nb.equal[m]["rel_se"][0] for m in nb.ISO}, z_B
        )
    )
    rec_strict = add(
        higher_hdi_verdict(
            {m: 100 * nb.equal[m]["rel"][2] for m in nb.ISO},
            {m: 100 * nb.equal[m]["rel_se"][2] for m in nb.ISO},
            z_Bp,
            nb.equal_hdi["P'"] - nb.equal_hdi["Q"],
        )
    )
    rand_max_se = float(
        max(d for *_, d in nb.rand_viol["violations"])
        if nb.rand_viol["violations"]
        else nb.rand.paired_difference(nb.rand_cfg.orthogonal, nb.rand_cfg.identical).se
    )
    rec_random = add(
        random_verdict(
            nb.rand_rho,
            nb.rand_rho_se,
            nb.rand_viol["n_violations"],
            nb.rand_viol["expected_by_chance"],
            nb.rand_viol["n_pairs"],
            100 * rand_max_se / float(nb.rand.mean.min()),
            rand_prem,
        )
    )
    rec_matched = add(matched_hdi_verdict(nb.matched))
    rec_strue = add(as_stated_verdict([rec_aniso, rec_equal, rec_strict, rec_matched]))
    rec_attn = add(
        attention_verdict(
            nb.block(canon_diff.mean, 0)[i_best], nb.block(canon_diff.se, 0)[i_best], canon["z_vs_mean"].min()
        )
    )
    results["claims"] = ledger.to_list()

    # Guards: sentences of the chapter and of the paper's Section 5 that state a direction.
    rel60 = {}
    for fam, res_f, deg in (("Pair", nb.pair_res, nb.pair_deg), ("Star", nb.star_res, nb.star_deg)):
        i60 = int(np.flatnonzero(deg == 60)[0])
        first = res_f[nb.ISO[1]].relative_to(0)  # 0 to 60 degrees
        last = res_f[nb.ISO[1]].relative_to(i60)  # 60 to 90 degrees
        rel60[fam] = (100 * last.mean[-1], 100 * last.se[-1], 100 * first.mean[i60], 100 * first.se[i60])
    saturates = all(abs(a) + 3 * s < abs(b) - 3 * t for a, s, b, t in rel60.values())
    most_gain_by_60 = "most of the change" if saturates else "part of the change"
    guard_projection_bias(z_aniso)  # the sentence on projection bias (here and in Section 5)
    # Part 1: the table at (512, 8, 64), the Haar draws and the bound
    camel = {
        "identical": "Identical",
        "orthogonal": "Orthogonal",
        "gaussian_scaled": "GaussScaled",
        "gaussian_unit": "GaussUnit",
        "identical_x2": "IdenticalTwo",
    }
    for kind, name in camel.items():
        for normalization, short in (("paper", "Paper"), ("principal_angles", "PA"), ("rv", "RV")):
            macros.number(
                f"Tab{name}{short}", round(t0[kind][normalization], 12) + 0.0, 4
            )  # rounding noise (1e-16) shown as 0
            macros.number(f"Pred{name}{short}", nb.predicted[nb.shapes[0]][kind][normalization], 4)
    macros.number("HaarMaxZ", nb.index["haar_max_z"], 2)
    macros.integer("HaarDraws", nb.sizes["haar_draws"])
    macros.number("BoundSixteen", nb.index["bound"][nb.index["H"] == 16][0], 3)
    macros.mean_se(
        "HaarSixteen", nb.index["haar_mean"][nb.index["H"] == 16][0], nb.index["haar_se"][nb.index["H"] == 16][0]
    )
    # Part 2: sizes
    for name, size in (
        ("PairRep", "pair_rep"),
        ("StarRep", "star_rep"),
        ("EqualRep", "equal_rep"),
        ("RandomRep", "random_rep"),
        ("AttnRep", "attn_rep"),
        ("NTest", "n_test"),
    ):
        macros.integer(name, nb.sizes[size])
    macros.number("StepDeg", nb.sizes["step_deg"], 2)
    macros.number("StarDeg", nb.sizes["star_deg"], 2)
    macros.integer("NConfigs", len(nb.rand_cfg.hdi))
    # isoclinic families: changes at 90 degrees in %, step z
    for fam, summ in (("Pair", nb.pair), ("Star", nb.star)):
        for m, name in ((nb.ISO[0], "IsoExp"), (nb.ISO[1], "IsoCos"), (nb.ANISO, "Aniso")):
            macros.mean_se(f"{fam}{name}Rel", 100 * summ[m]["rel"][-1], 100 * summ[m]["rel_se"][-1])
        macros.number(f"{fam}AnisoZ", summ[nb.ANISO]["z"][-1], 3)
        macros.mean_se(f"{fam}IsoCosSixty", rel60[fam][0], rel60[fam][1])
        macros.mean_se(f"{fam}IsoCosToSixty", rel60[fam][2], rel60[fam][3])
    macros.number("IsoMaxStepZ", step_max_iso, 2)
    macros.text("IsoMaxStepWhere", tex_text(where_step))
    macros.number("SweakMaxZ", sweak_z, 2)
    # equal HDI; higher HDI, higher IMSE
    for m, name in zip(nb.ISO, ("IsoExp", "IsoCos")):
        macros.mean_se(f"B{name}Rel", 100 * nb.equal[m]["rel"][0], 100 * nb.equal[m]["rel_se"][0])
        macros.number(f"B{name}Z", z_B[m], 2)
        macros.mean_se(f"Bp{name}Rel", 100 * nb.equal[m]["rel"][2], 100 * nb.equal[m]["rel_se"][2])
        macros.number(f"Bp{name}Z", z_Bp[m], 2)
    macros.number("BpHDI", nb.equal_hdi["P'"], 3)
    # random configurations
    macros.number("Rho", nb.rand_rho, 2)
    macros.integer("NPairs", nb.rand_viol["n_pairs"])
    macros.integer("NViolations", nb.rand_viol["n_violations"])
    macros.integer("NDecreases", nb.rand_viol["n_decreases"])
    macros.number("ExpectedChance", nb.rand_viol["expected_by_chance"], 2)
    macros.mean_se("ClosestRel", 100 * nb.rand_rel[nb.closest], 100 * nb.rand_rel_se[nb.closest])
    macros.number("ClosestHDI", nb.rand_cfg.hdi[nb.closest], 2)
    macros.number("RandomMaxHDI", nb.rand_cfg.hdi[nb.others].max(), 2)
    # plain attention
    macros.mean_se("MeanIMSE", *nb.attn_mean)
    macros.number("AttnCanonMin", canon["imse"].min(), 3)
    macros.number("AttnCanonMax", canon["imse"].max(), 3)
    macros.number("AttnCanonMinZ", canon["z_vs_mean"].min(), 2)
    macros.number("AttnFourMin", four["imse"].min(), 3)
    macros.number("GaussIsoCosMin", nb.attn["Gaussian, h = 0.5"]["imse"].min(), 3)
    macros.mean_se("RhoSE", nb.rand_rho, nb.rand_rho_se)
    macros.mean_se("CovOrth", nb.cov_orth.mean, nb.cov_orth.se)
    macros.number("CovOrthZ", nb.cov_orth.z, 2)
    macros.number("CovOrthCorr", nb.cov_corr, 2)
    macros.integer("CovRep", nb.sizes["cov_rep"])
    macros.integer("MatchedRep", nb.sizes["matched_rep"])
    macros.integer("MatchedConfigs", nb.matched_configs)
    for k, (t, v) in enumerate(nb.matched.items()):
        name = "Matched" + "ABCD"[k]
        macros.number(f"{name}Target", t, 2)
        macros.mean_se(f"{name}Tau", v["tau_pct"], v["tau_se_pct"])
        macros.number(f"{name}Spread", v["spread_pct"], 2)
        macros.text(f"{name}P", f"{v['p']:.2g}")
    macros.text("MostGain", most_gain_by_60)
    for rec, name in [
        (rec_identical, "Printed"),
        (rec_sweak, "Sweak"),
        (rec_iso, "Iso"),
        (rec_aniso, "Aniso"),
        (rec_equal, "Equal"),
        (rec_strict, "Strict"),
        (rec_random, "Random"),
        (rec_strue, "Strue"),
        (rec_pa, "PA"),
        (rec_bound, "Bound"),
        (rec_matched, "Matched"),
        (rec_attn, "Attn"),
    ]:
        verdict_macros(macros, name, rec)
    for rec, name in [(rec_sweak, "Sweak"), (rec_iso, "Iso"), (rec_random, "Random")]:
        if rec.detectable is not None:
            macros.number(f"Detectable{name}", rec.detectable, 2)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros.write(macros_path, argument="macros_path")

    results.update(
        json_safe(
            dict(
                table={str(s): nb.table[s] for s in nb.shapes},
                predicted={str(s): nb.predicted[s] for s in nb.shapes},
                haar_vs_H=dict(
                    d=nb.index["d"],
                    d_k=nb.index["d_k"],
                    H=nb.index["H"],
                    mean=nb.index["haar_mean"],
                    se=nb.index["haar_se"],
                    bound=nb.index["bound"],
                ),
                pair=dict(deg=nb.pair_deg, hdi=nb.pair_hdi, **nb.pair),
                star=dict(deg=nb.star_deg, hdi=nb.star_hdi, **nb.star),
                equal=dict(hdi=nb.equal_hdi, **nb.equal),
                random=dict(
                    hdi=nb.rand_cfg.hdi,
                    t=nb.rand_cfg.t,
                    imse=nb.rand.mean,
                    se=nb.rand.se,
                    rel=nb.rand_rel,
                    rel_se=nb.rand_rel_se,
                    spearman=nb.rand_rho,
                    **nb.rand_viol,
                ),
                attention=dict(deg=nb.attn_deg, training_mean=nb.attn_mean, **nb.attn),
                affine_bound=dict(covariance=nb.cov_orth.mean, se=nb.cov_orth.se, correlation=nb.cov_corr),
                matched_hdi={str(t): v for t, v in nb.matched.items()},
                spearman_se=nb.rand_rho_se,
                parameters={
                    k: nb.params[k] for k in nb.params if k not in ("figures_dir", "macros_path", "results_path")
                },
                data_models={m: v.spec() for m, v in nb.model.items()},
            )
        )
    )
    save_results(results_path, results, argument="results_path")
    return ledger


def normalization_rows(table: dict, predicted: dict) -> dict:
    """The three indices of :func:`normalization_table` next to their predictions
    (:func:`normalization_predictions`), one row per shape and head kind, as a table for
    :func:`mhanw.infra.tables.show`: ``{"(d, H, d_k), kind": {"printed": "value (prediction)", ...}}``.
    ``table``, ``predicted``: ``{(d, H, d_k): {kind: {normalization: value}}}``."""
    names = {
        "paper": r"HDI$_{\mathrm{printed}}$",
        "principal_angles": r"HDI$_{\mathrm{PA}}$",
        "rv": r"HDI$_{\mathrm{RV}}$",
    }
    if set(table) != set(predicted):
        raise ValueError(f"predicted: expected the shapes of table {sorted(table)}, got {sorted(predicted)}")

    def show(x):  # three decimals; a value that rounds to zero prints as 0, not -0.000
        return f"{x:.3f}" if round(x, 3) != 0 else "0"

    return {
        f"{shape}, {HEAD_TYPE_NAMES[kind]}": {
            names[k]: f"{show(table[shape][kind][k])} ({show(predicted[shape][kind][k])})" for k in names
        }
        for shape in table
        for kind in HEAD_TYPES
    }


def index_curves(rng, haar_draws: int) -> dict:
    """The numbers of the index figure (``04_head_diversity_index``), each checked against its closed form.

    (a) along ``pair(theta)`` (``d = 2 d_k``, ``d_k`` in 1, 4, 64, 31 angles from 0 to 90 degrees) the
    printed index, ``1 - cos^2(theta)/d_k``, and ``HDI_PA = sin^2(theta)``; (b) identical heads ``cW``
    rescaled by ``c`` in ``[0.25, 2]``; (c) ``haar_draws`` Haar-random configurations for ``d = 64``,
    ``d_k = 8`` and ``H`` from 2 to 24 against the frame bound of :func:`mhanw.diversity.hdi_upper_bound`.
    ``rng``: a ``numpy.random.Generator``.  Returns a dict of arrays (``theta``, ``curves``,
    ``scales``, ``scaled``, ``scaled_pa``, ``d``, ``d_k``, ``H``, ``haar_mean``, ``haar_se``, ``bound``)
    and two numbers: ``haar_max_z``, the largest ``|Haar mean - (1 - d_k/d)|`` in standard errors, and
    ``haar_excess``, the largest draw minus the bound (at most rounding when the bound holds)."""
    from ..diversity import haar_expected_hdi

    rng = generator(rng, "rng")
    haar_draws = positive_int(haar_draws, "haar_draws", minimum=2, maximum=MAX_REPLICATES)
    theta = np.radians(np.linspace(0, 90, 31))
    curves = {}
    for d_k in (1, 4, 64):
        cfgs = [_heads.pair_heads(t, 2 * d_k, d_k) for t in theta]
        curves[d_k] = {n: np.array([head_diversity_index(W, n) for W in cfgs]) for n in ("paper", "principal_angles")}
        if not (
            np.allclose(curves[d_k]["paper"], 1 - np.cos(theta) ** 2 / d_k, atol=1e-12)
            and np.allclose(curves[d_k]["principal_angles"], np.sin(theta) ** 2, atol=1e-12)
        ):
            raise AssertionError(f"the indices of pair(theta) at d_k = {d_k} left their closed forms")
    scales = np.linspace(0.25, 2.0, 36)
    scaled = {
        d_k: np.array([head_diversity_index(c * _heads.identical_heads(2 * d_k, d_k, 4), "paper") for c in scales])
        for d_k in (4, 64)
    }
    scaled_pa = np.array([head_diversity_index(c * _heads.identical_heads(8, 4, 4)) for c in scales])
    d, d_k, H = 64, 8, np.arange(2, 25)
    draws = np.array([[head_diversity_index(_heads.haar_heads(d, d_k, h, rng)) for _ in range(haar_draws)] for h in H])
    haar_mean, haar_se = Estimate.from_samples(draws)
    bound = np.array([hdi_upper_bound(d, d_k, h) for h in H])
    return dict(
        theta=theta,
        curves=curves,
        scales=scales,
        scaled=scaled,
        scaled_pa=scaled_pa,
        d=d,
        d_k=d_k,
        H=H,
        haar_mean=haar_mean,
        haar_se=haar_se,
        bound=bound,
        haar_max_z=float(np.max(np.abs(haar_mean - haar_expected_hdi(d, d_k)) / haar_se)),
        haar_excess=float((draws - bound[:, None]).max()),
    )


@notebook_helper
def index_figure(ix: dict):
    """The index figure (``04_head_diversity_index``), three panels drawn from :func:`index_curves`:
    (a) the printed index and ``HDI_PA`` along ``pair(theta)``, (b) rescaled identical heads, (c) the
    Haar means (bars: 2 s.e.) against the frame bound when ``H d_k > d``.  Returns the figure."""
    from ..diversity import haar_expected_hdi
    from ..infra import figures

    fig, (ax_a, ax_b, ax_c) = figures.panels(3)
    deg = np.degrees(ix["theta"])
    ax_a.plot(deg, ix["curves"][1]["principal_angles"], color="k", lw=1.6, label=r"HDI$_{\mathrm{PA}}$, all $d_k$")
    for d_k, color in zip((1, 4, 64), ("C0", "C1", "C2")):
        ax_a.plot(
            deg, ix["curves"][d_k]["paper"], color=color, ls="--", label=rf"HDI$_{{\mathrm{{printed}}}}$, $d_k={d_k}$"
        )
    ax_a.set(
        xlabel=r"principal angle $\theta$ (deg)",
        ylabel="index",
        title=r"(a) pair$(\theta)$, $H=2$",
        xticks=[0, 30, 60, 90],
    )
    ax_a.legend(loc="center left", fontsize=7)
    for d_k, color in zip((4, 64), ("C1", "C2")):
        ax_b.plot(
            ix["scales"], ix["scaled"][d_k], color=color, ls="--", label=rf"HDI$_{{\mathrm{{printed}}}}$, $d_k={d_k}$"
        )
    ax_b.plot(ix["scales"], ix["scaled_pa"], color="k", lw=1.6, label=r"HDI$_{\mathrm{PA}}$ and HDI$_{\mathrm{RV}}$")
    ax_b.set(
        xlabel=r"scale $c$ of identical heads $cW$",
        ylabel="index",
        ylim=(-0.6, 1.05),
        title="(b) rescaled identical heads",
    )
    ax_b.legend(loc="lower left")
    ax_c.plot(ix["H"], ix["bound"], color="k", lw=1.6, label="frame bound")
    ax_c.axhline(haar_expected_hdi(ix["d"], ix["d_k"]), color="C0", ls=":", lw=1, label=r"$1-d_k/d$")
    figures.errorbar(
        ax_c,
        ix["H"],
        ix["haar_mean"],
        ix["haar_se"],
        color="C0",
        linestyle="none",
        ms=3,
        label=r"Haar heads, $\pm2$ s.e.",
    )
    ax_c.axvline(ix["d"] / ix["d_k"], color="grey", lw=0.6)
    ax_c.set(
        xlabel=rf"heads $H$ ($d={ix['d']}$, $d_k={ix['d_k']}$)",
        ylabel=r"HDI$_{\mathrm{PA}}$",
        ylim=(0.8, 1.01),
        title=r"(c) the bound when $Hd_k>d$",
    )
    ax_c.legend(loc="lower left")
    return fig


@checked(haar_excess=V.number)
@notebook_helper
def index_caption(haar_excess: float) -> str:
    """The caption of the index figure (``04_head_diversity_index``); its clause on panel (c) is said from
    ``haar_excess``, the largest Haar draw minus the frame bound (at most rounding when the bound holds)."""
    below = (
        "the Haar mean stays at $1-d_k/d$ (dotted) for every $H$, and no draw exceeds the frame bound "
        "(black), which is 1 up to $Hd_k=d$ (grey line) and falls beyond it"
        if haar_excess <= EXACT_TOL
        else f"a draw exceeds the frame bound by {haar_excess:.2g}"
    )
    return (
        r"(a) Along the pair family, $\mathrm{HDI}_{\mathrm{PA}}=\sin^2\theta$ (solid) runs from 0 to 1 for every "
        r"$d_k$, while the printed index (dashed) is squeezed into $[1-1/d_k,1]$; (b) rescaling identical heads "
        r"moves the printed index but not $\mathrm{HDI}_{\mathrm{PA}}$ or $\mathrm{HDI}_{\mathrm{RV}}$; "
        rf"(c) Haar-random heads in $\mathbb{{R}}^{{64}}$ with $d_k=8$: {below}."
    )


@notebook_helper
def takeaway(record) -> None:
    """Display one sentence under a figure: the finding of ``record`` (a
    :class:`mhanw.infra.verdicts.Verdict`), generated from its numbers, with its verdict word."""
    from IPython.display import Markdown, display

    from ..infra import notation
    from ..infra.verdicts import verdict_words

    r = V.record(record, "record")
    said = r.finding or r.statement
    display(
        Markdown(
            f"**Takeaway.** {notation.markdown_text(said[:1].upper() + said[1:])} "
            f"(*{notation.markdown_text(verdict_words(r))}*)."
        )
    )


#: The caption of :func:`mse_figure`: what each panel shows and what to compare (no direction: the
#: directions are the records' findings, printed under the figure and in "What we found").
MSE_CAPTION = (
    r"Top row: (a) the isotropic $m$ along the pair ($H=2$, solid) and star ($H=4$, dashed) families, IMSE "
    r"change against identical heads, where a curve that rises anywhere breaks monotonicity; (b) the "
    r"anisotropic $m$, IMSE over IMSE(identical) on a log scale. Middle row: (c) plain softmax attention along "
    r"the pair family against the Gaussian head and the training mean $\bar Y$; (d) $P$ and $Q$, of equal "
    r"$\mathrm{HDI}_{\mathrm{PA}}=1/2$, and $P'$, of higher HDI, relative to $Q$. Bottom row: (e) random "
    r"configurations relative to the orthogonal blocks (star); (f) random configurations at matched "
    r"$\mathrm{HDI}_{\mathrm{PA}}$, relative to the best of their bin, where a spread beyond the bars means the IMSE "
    r"is not a function of HDI."
)
