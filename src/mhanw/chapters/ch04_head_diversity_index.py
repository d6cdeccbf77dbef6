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

- :func:`equal_hdi_configurations`, Thm 4.2 (B) and (B'): ``P`` with principal
  angles ``(0, 90)`` deg and ``Q = pair(45 deg)`` with ``(45, 45)`` deg share
  HDI_PA = 1/2; ``P'`` with angles ``(8, 90)`` deg has a slightly larger HDI_PA.
- :func:`random_configurations`, Thm 4.2 (D) and Thm 5.1 (i): interpolated
  heads at evenly spaced ``t`` plus the exact orthogonal blocks, evaluated by
  :func:`random_configuration_imse`, the one experiment chapters 04 and 05 run.

Summaries of an :class:`mhanw.montecarlo.ImseResult` (3-s.e. rule,
:data:`mhanw.constants.N_SE`): :func:`family_summary`,
:func:`monotonicity_violations`, :func:`rank_correlation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, spearmanr

from .. import heads as _heads
from .. import montecarlo as _mc
from ..constants import N_SE, RANDOM_CONFIGURATION_BANDWIDTH, SIGMA
from ..diversity import NORMALIZATIONS, head_diversity_index
from ..infra.estimates import Estimate
from ..infra.validate import as_float_array, as_seed_sequence, generator, nonnegative_scalar, positive_int, positive_scalar

__all__ = [
    "HEAD_TYPES",
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
    """Thm 4.2 (B) and (B'): three two-head configurations in ``R^4`` with ``d_k = 2``.

    - ``"P"``: ``(span{e1, e2}, span{e1, e3})``, principal angles (0, 90) deg, HDI_PA = 1/2;
    - ``"Q"``: ``pair(45 deg)``, angles (45, 45) deg, HDI_PA = 1/2;
    - ``"P'"``: ``(span{e1, e2}, span{cos(a) e1 + sin(a) e4, e3})`` with ``a = tilt_deg``,
      angles ``(a, 90)`` deg, HDI_PA = ``1 - cos^2(a)/2`` (0.510 at 8 deg).

    Returns a dict of arrays ``(2, 4, 2)`` in this order.
    """
    a = np.radians(nonnegative_scalar(tilt_deg, "tilt_deg"))
    if a >= np.pi / 2:
        raise ValueError(f"tilt_deg: expected an angle in [0, 90) degrees, got {tilt_deg!r}")
    e = np.eye(4)
    base = _cols(4, e[0], e[1])
    return {
        "P": np.stack([base, _cols(4, e[0], e[2])]),
        "Q": _heads.pair_heads(np.pi / 4, 4, 2),
        "P'": np.stack([base, _cols(4, np.cos(a) * e[0] + np.sin(a) * e[3], e[2])]),
    }


@dataclass(frozen=True)
class RandomConfigurations:
    """Configurations of Thm 4.2 (D): ``projections`` (list of ``(H, d, d_k)``), the
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
    n_configs = positive_int(n_configs, "n_configs", minimum=2)
    generator(rng, "rng")
    t = np.linspace(0.0, 1.0, n_configs)
    projections = [_heads.interpolated_heads(float(ti), d, d_k, n_heads, rng) for ti in t]
    projections.append(_heads.orthogonal_heads(d, d_k, n_heads))
    hdi = np.array([head_diversity_index(W) for W in projections])
    return RandomConfigurations(projections=projections, t=np.append(t, np.nan), hdi=hdi)


def random_configuration_imse(regressions, n_configs: int, seed, n: int, n_test: int, n_rep: int,
                              bandwidth: float = RANDOM_CONFIGURATION_BANDWIDTH, sigma: float = SIGMA,
                              d: int = 6, d_k: int = 2,
                              n_heads: int = 3, n_jobs: int = 1, progress: bool = False) -> tuple:
    """Thm 4.2 (D) and the random configurations of Thm 5.1: the IMSE of random configurations, one result per ``m``.

    ``seed`` (int or SeedSequence) spawns two children: the first draws the
    configurations (:func:`random_configurations`), the second the replicates
    of :func:`mhanw.montecarlo.integrated_mse`; every ``m`` uses the same replicate
    streams (same inputs and test points; only ``m(X)`` differs).  Reference
    sizes: ``n = 400, T = 200``, ``m = iso_cos6``, and the bandwidth
    :data:`mhanw.constants.RANDOM_CONFIGURATION_BANDWIDTH` (0.6, deliberately
    wider than the reference 0.5).

    Returns ``(configs, {m: ImseResult})`` with ``configs`` a
    :class:`RandomConfigurations`.
    """
    if isinstance(regressions, str):
        regressions = [regressions]
    regressions = list(regressions)
    if not regressions:
        raise ValueError("regressions: expected at least one regression function, got none")
    child_configs, child_reps = as_seed_sequence(seed, "seed").spawn(2)
    configs = random_configurations(n_configs, np.random.default_rng(child_configs), d, d_k, n_heads)
    bandwidth = positive_scalar(bandwidth, "bandwidth")
    results = {m: _mc.integrated_mse(configs.projections, m, n=n, n_test=n_test, n_rep=n_rep, seed=child_reps,
                                        sigma=sigma, bandwidth=bandwidth, n_jobs=n_jobs, progress=progress)
               for m in regressions}
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
    """Summary of a family ordered by increasing HDI (pair, star; Thm 4.2 (A)).

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
        "imse": result.mean, "se": result.se, "rel": rel.mean, "rel_se": rel.se,
        "diff": diff.mean, "diff_se": diff.se, "z": diff.z,
        "step": step.mean, "step_se": step.se, "step_z": step.z, "max_step_z": float(np.max(step.z)),
    }


def monotonicity_violations(hdi, result, gap: float = 0.02, n_se: float = N_SE) -> dict:
    """Test "IMSE non-increasing in HDI" on every ordered pair (Thm 4.2 (D)).

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
    """Spearman rank correlation between HDI and IMSE over configurations (Thm 4.2 (D): <= -0.8 expected)."""
    E = _check_result(result)
    hdi = _hdi(hdi, E)
    return float(spearmanr(hdi, E.mean(axis=1)).statistic)
