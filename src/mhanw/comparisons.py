"""Comparing the integrated MSE of head configurations (Thm 4.2 and 5.1).

The configurations compared, the experiment on random configurations, and the statistics of their
paired comparisons.

The Monte Carlo itself is :func:`mhanw.montecarlo.integrated_mse` (common random numbers, one stream per
replicate), whose :class:`~mhanw.montecarlo.ImseResult` gives every paired difference, relative change and
z-score as an :class:`mhanw.infra.estimates.Estimate`; this module chooses what to compare and how to
summarise it.

The three normalizations of the index (:func:`mhanw.diversity.head_diversity_index`) on five kinds of heads:
:func:`normalization_table`, with their analytic values :func:`normalization_predictions`.

Configurations (orthonormal coordinate blocks unless stated):

- :func:`equal_hdi_configurations`: ``P`` with principal angles ``(0, 90)`` deg and ``Q = pair(45 deg)``
  with ``(45, 45)`` deg share HDI_PA = 1/2; ``P'`` with angles ``(8, 90)`` deg has a slightly larger
  HDI_PA (Thm 4.2 "equal HDI" and "higher HDI, higher IMSE");
- :func:`random_configurations`: interpolated heads at evenly spaced ``t`` plus the exact orthogonal
  blocks, evaluated by :func:`random_configuration_imse` (Thm 4.2 "random configurations", Thm 5.1);
- :func:`matched_hdi_configurations`: random configurations whose HDI_PA equals a target exactly;
  :func:`heterogeneity` tests whether their IMSE differs (Hotelling's T^2 on paired contrasts).

The premises of the isotropic reading on what ran: :func:`isotropic_premises`.

The IMSE minimised over head subspaces (Thm 5.1): :func:`crn_batch` fixes training samples and test points
(common random numbers), :func:`imse_and_gradient` is the Monte Carlo IMSE of averaged Gaussian NW heads
and its exact gradient in the projections, :func:`minimize_imse` runs Riemannian gradient descent with QR
retraction over free or mutually orthogonal heads, from the starts of :func:`candidate_starts` (a known
candidate and perturbations of it) and Haar starts.

Statistics of an :class:`mhanw.montecarlo.ImseResult` (3-s.e. rule, :data:`mhanw.constants.N_SE`):
:func:`family_summary`, :func:`monotonicity_violations`, :func:`rank_correlation` (and its bootstrap s.e.
:func:`rank_correlation_se`); of two heads' pointwise estimates: :func:`head_covariance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import f as f_dist
from scipy.stats import norm, spearmanr

from . import data as _data
from . import heads as _heads
from . import montecarlo as _mc
from .constants import MAX_REPLICATES, N_SE, RANDOM_CONFIGURATION_BANDWIDTH, SIGMA, check_entries
from .diversity import NORMALIZATIONS, hdi_upper_bound, head_diversity_index, orthonormal_bases, principal_angles
from .infra.estimates import Estimate
from .infra.validate import (
    as_float_array,
    as_seed_sequence,
    boolean,
    brief,
    generator,
    nonnegative_scalar,
    one_of,
    positive_int,
    positive_scalar,
    real_scalar,
    sequence,
)

__all__ = [
    "HEAD_TYPES",
    "CrnBatch",
    "ImseOptimum",
    "RandomConfigurations",
    "equal_hdi_configurations",
    "candidate_starts",
    "crn_batch",
    "family_summary",
    "head_covariance",
    "heterogeneity",
    "imse_and_gradient",
    "isotropic_premises",
    "matched_hdi_configuration",
    "matched_hdi_configurations",
    "minimize_imse",
    "monotonicity_violations",
    "normalization_predictions",
    "normalization_table",
    "random_configuration_imse",
    "random_configurations",
    "rank_correlation",
    "rank_correlation_se",
    "rule_options",
]

# --------------------------------------------------------------------------- the index on five kinds of heads

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
    heads times 2).  One draw from ``rng`` per random kind, in this order.  The table shows which
    normalization of :func:`mhanw.diversity.head_diversity_index` behaves as a diversity index (the
    definition that Thm 4.2 relies on).

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    n_heads : int >= 1
        ``H``, the number of heads of each kind.
    d_k : int >= 1
        The head dimension, at most ``d``.
    rng : numpy.random.Generator
        The source of the Haar frames and Gaussian entries.

    Returns
    -------
    dict of str to dict of str to float
        ``{kind: {normalization: HDI}}`` for every kind of :data:`HEAD_TYPES` and every normalization of
        :data:`mhanw.diversity.NORMALIZATIONS`.

    Raises
    ------
    ValueError
        Naming ``rng`` when it is no Generator, or the size that does not fit (from the head constructors and
        the index).
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

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head dimension.

    Returns
    -------
    dict of str to dict of str to float
        ``{kind: {normalization: value}}`` with the kinds of :data:`HEAD_TYPES` and the normalizations
        ``"paper"``, ``"principal_angles"`` and ``"rv"``.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it exceeds ``d``, or the argument that is not a positive integer.
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
    """Three two-head configurations in ``R^4`` with ``d_k = 2``: Thm 4.2 "equal HDI" and "higher HDI, higher IMSE".

    - ``"P"``: ``(span{e1, e2}, span{e1, e3})``, principal angles (0, 90) deg, HDI_PA = 1/2;
    - ``"Q"``: ``pair(45 deg)``, angles (45, 45) deg, HDI_PA = 1/2;
    - ``"P'"``: ``(span{e1, e2}, span{cos(a) e1 + sin(a) e4, e3})`` with ``a = tilt_deg``,
      angles ``(a, 90)`` deg, HDI_PA = ``1 - cos^2(a)/2`` (0.510 at 8 deg).

    Parameters
    ----------
    tilt_deg : float, 0 <= tilt_deg < 90
        The angle ``a`` in degrees by which the first column of the second head of ``P'`` leaves ``e1``.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{"P", "Q", "P'"}`` in this order, each of shape ``(2, 4, 2)`` (heads, ``d``, ``d_k``).

    Raises
    ------
    ValueError
        Naming ``tilt_deg`` when it is negative or at least 90 degrees.
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
    """Random configurations of Thm 4.2 and their HDIs, as :func:`random_configurations` draws them.

    Parameters
    ----------
    projections : list of numpy.ndarray
        ``C`` configurations, each of shape ``(H, d, d_k)``: the interpolated ones in order of ``t``, then
        the orthogonal blocks (last).
    t : numpy.ndarray, shape (C,)
        The interpolation parameter in ``[0, 1]`` of each configuration (NaN for the orthogonal blocks).
    hdi : numpy.ndarray, shape (C,)
        The HDI_PA of each configuration (:func:`mhanw.diversity.head_diversity_index`).
    """

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
    ``H d_k <= d``).  Reference: ``d = 6, d_k = 2, H = 3``.  These are the random configurations on which
    Thm 4.2's "IMSE non-increasing in HDI" and Thm 5.1 are tested.

    Parameters
    ----------
    n_configs : int >= 2
        The number of interpolated configurations (at most :data:`mhanw.constants.MAX_REPLICATES`).
    rng : numpy.random.Generator
        The source of the Haar frames.
    d : int >= 1
        The input dimension.
    d_k : int >= 1
        The head dimension.
    n_heads : int >= 1
        ``H``, heads per configuration, with ``n_heads * d_k <= d``.

    Returns
    -------
    RandomConfigurations
        ``n_configs + 1`` configurations of shape ``(H, d, d_k)``, their ``t`` and their HDI_PA.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when ``n_heads * d_k > d``, or the argument that is out of range.
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
    """The keyword arguments of a HeadConfig for a combination rule.

    The keyword arguments of :class:`mhanw.heads.HeadConfig` with which the random and matched-HDI
    configurations combine their heads under ``rule``: ``"average"`` and
    ``"sum"`` as named; ``"concat"`` as a transformer does, the shared response through an output
    projection ``W_O`` fitted by least squares on the heads' leave-one-out outputs (as chapter 06).

    Parameters
    ----------
    rule : str
        A combination rule of :data:`mhanw.heads.RULES`.

    Returns
    -------
    dict
        ``{"rule": rule}``, plus ``"output": "fitted"`` for ``"concat"``.

    Raises
    ------
    ValueError
        Naming ``rule`` when it is not a known rule.
    """
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
    """The IMSE of random configurations, one result per ``m`` (Thm 4.2 and Thm 5.1, random configurations).

    ``seed`` spawns two children: the first draws the
    configurations (:func:`random_configurations`), the second the replicates
    of :func:`mhanw.montecarlo.integrated_mse`; every ``m`` uses the same replicate
    streams (same inputs and test points; only ``m(X)`` differs).  Reference
    sizes: ``n = 400, T = 200``, ``m = iso_cos6``, and the bandwidth
    :data:`mhanw.constants.RANDOM_CONFIGURATION_BANDWIDTH` (0.6, deliberately
    wider than the reference 0.5).

    Parameters
    ----------
    regressions : str or sequence of str
        The regression functions ``m`` (catalogue names, or keys of ``data``); at least one.
    n_configs : int >= 2
        Interpolated configurations (:func:`random_configurations`; one more, the orthogonal blocks, is added).
    seed : int or numpy.random.SeedSequence
        The root of the configuration and replicate streams.
    n : int
        Training sample size.
    n_test : int
        ``T``, test points per replicate.
    n_rep : int
        ``R``, Monte Carlo replicates.
    bandwidth : float > 0
        The bandwidth of every head.
    sigma : float
        The noise standard deviation (ignored for the models of ``data``, which carry their own).
    d : int
        The input dimension.
    d_k : int
        The head dimension.
    n_heads : int
        ``H``, heads per configuration (``n_heads * d_k <= d``).
    n_jobs : int
        Worker processes (the results do not depend on it).
    progress : bool
        Whether to show a progress bar.
    data : dict of str to DataModel, optional
        ``{m: DataModel}`` (:func:`mhanw.data.data_model`) used in place of the names (changed inputs or
        noise); the keys stay the names.
    kernel : str
        The kernel of every head (:class:`mhanw.heads.HeadConfig`).
    rule : str
        How the heads are combined (:data:`mhanw.heads.RULES`).
    values : array (H, 1 + d, d_v) or str, optional
        ``"concat"`` only: the value maps ``W_V`` or ``"response"``/``"stream"``
        (:class:`mhanw.heads.HeadConfig`), the same for all configurations.
    output : array (H, d_v) or str, optional
        ``"concat"`` only: ``W_O`` or ``"fitted"`` (e.g. ``rule="concat", output="fitted"`` for
        transformer-style heads; :func:`rule_options`).

    Returns
    -------
    tuple (RandomConfigurations, dict of str to ImseResult)
        ``(configs, {m: result})``: the configurations and, per regression function, the
        :class:`mhanw.montecarlo.ImseResult` of all ``n_configs + 1`` configurations (errors of shape
        ``(n_configs + 1, n_rep)``).

    Raises
    ------
    ValueError
        Naming ``regressions`` when it is empty or names an unknown function (``regressions[i]``), ``data``
        when it is not a dict, or the argument that is out of range.
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
                _data.regression_function(m)
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

    Parameters
    ----------
    result : mhanw.montecarlo.ImseResult
        The IMSE of ``K`` configurations in order of increasing HDI, with at least 2 replicates.
    reference : int
        The index of the configuration the others are compared with (default the first).

    Returns
    -------
    dict
        Keys ``imse``, ``se`` (per configuration, shape ``(K,)``); ``rel``, ``rel_se``
        (:meth:`~mhanw.montecarlo.ImseResult.relative_to` ``reference``); ``diff``,
        ``diff_se``, ``z`` (:meth:`~mhanw.montecarlo.ImseResult.differences_from`
        ``reference``; ``z`` is NaN for the reference itself); ``step``,
        ``step_se``, ``step_z`` (:meth:`~mhanw.montecarlo.ImseResult.steps` in
        stored order, shape ``(K - 1,)``) and ``max_step_z`` (float), the largest step z-score (above
        :data:`mhanw.constants.N_SE` is a significant increase).

    Raises
    ------
    ValueError
        Naming ``result`` when it is no ImseResult or has fewer than 2 replicates.
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

    Parameters
    ----------
    hdi : array_like, shape (K,)
        The HDI of each configuration of ``result``.
    result : mhanw.montecarlo.ImseResult
        The IMSE of the ``K`` configurations (common random numbers), at least 2 replicates.
    gap : float >= 0
        The smallest HDI difference for a pair to be tested.
    n_se : float > 0
        The threshold in paired standard errors (default :data:`mhanw.constants.N_SE`).

    Returns
    -------
    dict
        ``n_pairs`` (pairs tested), ``violations`` (list of
        ``(i, j, diff, se)`` with ``diff > n_se * se``: higher HDI, higher IMSE),
        ``n_violations``, ``n_decreases`` (``diff < -n_se * se``: significant in the
        claimed direction), ``expected_by_chance`` (``n_pairs * P(Z > n_se)``, the
        number of violations expected if no pair differed) and ``max_z`` (the
        largest ``diff / se``; NaN when no pair is tested).

    Raises
    ------
    ValueError
        Naming ``result`` or ``hdi`` when they do not fit, or ``gap`` or ``n_se`` when out of range.
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
        "violations": [
            (int(i[k]), int(j[k]), float(np.asarray(diff.mean)[k]), float(np.asarray(diff.se)[k])) for k in bad
        ],
        "n_violations": int(bad.size),
        "n_decreases": int(np.sum(z < -n_se)),
        "expected_by_chance": float(i.size * norm.sf(n_se)),
        "max_z": float(z.max()) if z.size else float("nan"),
    }


def rank_correlation(hdi, result) -> float:
    """Spearman rank correlation between HDI and IMSE over configurations (Thm 4.2, random configurations).

    Parameters
    ----------
    hdi : array_like, shape (K,)
        The HDI of each configuration of ``result``.
    result : mhanw.montecarlo.ImseResult
        The IMSE of the ``K`` configurations, at least 2 replicates.

    Returns
    -------
    float
        Spearman's rho between ``hdi`` and the mean IMSE per configuration (negative: higher HDI, lower IMSE,
        as Thm 4.2 claims).
    """
    E = _check_result(result)
    hdi = _hdi(hdi, E)
    return float(spearmanr(hdi, E.mean(axis=1)).statistic)


def rank_correlation_se(hdi, result, n_boot: int = 200, seed=0) -> float:
    """Bootstrap s.e. of :func:`rank_correlation`.

    Replicates are resampled with replacement (all configurations together, so the pairing of the common
    random numbers is kept).

    Parameters
    ----------
    hdi : array_like, shape (K,)
        The HDI of each configuration of ``result``.
    result : mhanw.montecarlo.ImseResult
        The IMSE of the ``K`` configurations, at least 2 replicates.
    n_boot : int >= 2
        Bootstrap resamples.
    seed : int or numpy.random.SeedSequence
        The seed of the resampling (an explicit value, so the s.e. is reproducible).

    Returns
    -------
    float
        The standard deviation (ddof = 1) of Spearman's rho over the resamples.
    """
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
    a draw whose largest ``s`` does not reach ``target`` is rejected and redrawn.  Configurations of equal
    HDI test whether the HDI alone determines the IMSE (Thm 4.2 "equal HDI").

    Parameters
    ----------
    target : float, 0 < target < 1
        The HDI_PA, at most the frame bound :func:`mhanw.diversity.hdi_upper_bound`.
    rng : numpy.random.Generator
        The source of the frames and weights.
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head dimension.
    n_heads : int >= 2
        ``H``.
    max_tries : int >= 1
        Draws before giving up.

    Returns
    -------
    numpy.ndarray, shape (n_heads, d, d_k)
        Orthonormal heads whose HDI_PA is ``target``.

    Raises
    ------
    ValueError
        Naming ``target`` when it is outside ``(0, 1)``, above the frame bound, or not reached in
        ``max_tries`` draws; ``d_k`` when it exceeds ``d``; or the argument that is out of range.
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
    """``n_configs`` configurations of :func:`matched_hdi_configuration` for each HDI_PA target (Thm 4.2 "equal HDI").

    Parameters
    ----------
    targets : sequence of float
        The HDI_PA values, each in ``(0, 1)``.
    n_configs : int >= 2
        Configurations per target.
    rng : numpy.random.Generator
        The source of every draw, used target by target in the given order.
    d : int
        The input dimension.
    d_k : int
        The head dimension.
    n_heads : int >= 2
        ``H``.

    Returns
    -------
    dict of float to list of numpy.ndarray
        ``{target: [n_configs arrays of shape (n_heads, d, d_k)]}``, targets in the given order.
    """
    n_configs = positive_int(n_configs, "n_configs", minimum=2, maximum=MAX_REPLICATES, what="configurations")
    targets = [real_scalar(t, "targets") for t in sequence(targets, "targets", "HDI_PA values")]
    return {t: [matched_hdi_configuration(t, rng, d, d_k, n_heads) for _ in range(n_configs)] for t in targets}


def heterogeneity(result, n_boot: int = 200, seed=0) -> dict:
    """Do configurations with equal HDI have equal IMSE?  Hotelling's T^2 on the paired contrasts (Thm 4.2).

    The contrasts ``err_k - err_K`` (``k < K``) of each replicate have mean ``c`` and
    covariance ``S``; ``T^2 = R c^T S^{-1} c`` and, under "all IMSEs equal",
    ``(R - K + 1) / ((R - 1)(K - 1)) T^2 ~ F(K - 1, R - K + 1)``.

    Also the between-configuration standard deviation of the IMSE beyond Monte
    Carlo noise, ``tau``: ``tau^2 = [sum_k (I_k - I.)^2 - tr(C Sigma C)/R] / (K - 1)``
    with ``Sigma`` the covariance of the per-replicate errors and ``C`` the
    centring matrix, in per cent of the mean IMSE, floored at 0, with a
    bootstrap s.e. over replicates.

    Parameters
    ----------
    result : mhanw.montecarlo.ImseResult
        The IMSE of ``K >= 2`` configurations of equal HDI (common random numbers, ``R > K`` replicates).
    n_boot : int >= 2
        Bootstrap resamples for the s.e. of ``tau``.
    seed : int or numpy.random.SeedSequence
        The seed of the bootstrap.

    Returns
    -------
    dict
        ``T2`` (float), ``p`` (its F p-value), ``K``, ``R`` (int), ``tau_pct`` and ``tau_se_pct`` (``tau``
        and its bootstrap s.e., per cent of the mean IMSE) and ``spread_pct`` (largest minus smallest IMSE,
        per cent of the mean).

    Raises
    ------
    ValueError
        Naming ``result`` when it has fewer than 2 configurations or no more replicates than configurations.
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


def head_covariance(estimates) -> tuple:
    """The covariance of two heads' estimates across replicates, integrated over test points.

    The number that refutes the affine bound (S-bound) of Thm 4.2 at HDI = 1, where the bound leaves no room
    for it.

    Parameters
    ----------
    estimates : array_like, shape (R, 2, points)
        The two heads' estimates in ``R >= 2`` replicates at the same test points
        (:func:`mhanw.montecarlo.pointwise_estimates`).

    Returns
    -------
    tuple (Estimate, float)
        ``(covariance, correlation)``: an :class:`mhanw.infra.estimates.Estimate` over replicates of
        the mean over points of the product of the heads' deviations from their means (times ``R/(R - 1)``,
        unbiased), and the summed covariance over the square root of the two summed variances.

    Raises
    ------
    ValueError
        Naming ``estimates`` when it is not of shape ``(R >= 2, 2, points)``.
    """
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


def isotropic_premises(models, configs) -> tuple:
    """The premises of the isotropic reading, evaluated on what the chapter ran (Thm 4.2).

    The premises of the isotropic reading (S-weak and its monotone extensions): the joint law of
    ``(X, Y)`` rotation invariant for every model (:func:`mhanw.premises.rotation_invariant_data`: isotropic
    ``m``, rotation-invariant inputs and noise), orthonormal heads of one ``d_k`` and averaging with weights
    ``1/H`` for every configuration, merged (:func:`mhanw.infra.premises.merge`).

    Parameters
    ----------
    models : sequence
        The data models that ran (anything :func:`mhanw.premises.rotation_invariant_data` accepts); at least one.
    configs : sequence
        The head configurations that ran: :class:`mhanw.heads.HeadConfig`, or projections ``(H, d, d_k)``
        averaged uniformly as :func:`mhanw.montecarlo.integrated_mse` evaluates them; at least one.

    Returns
    -------
    tuple of Premise
        One premise per id, holding when it holds in every model and configuration.

    Raises
    ------
    ValueError
        Naming ``models`` when there is no model or no configuration.
    """
    from . import premises as P
    from .infra.premises import merge

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


# --------------------------------------------------------------------------- the IMSE minimised over head subspaces (Thm 5.1)


@dataclass(frozen=True)
class CrnBatch:
    """Fixed training samples and test points (common random numbers) of a Monte Carlo IMSE (Thm 5.1).

    Parameters
    ----------
    X : array (R, n, d)
        The inputs of ``R`` training samples.
    Y : array (R, n)
        Their responses.
    X_test : array (R, T, d)
        ``T`` test points per replicate.
    m_test : array (R, T)
        The regression function at the test points.
    """

    X: np.ndarray
    Y: np.ndarray
    X_test: np.ndarray
    m_test: np.ndarray


def crn_batch(regression, n: int, n_test: int, n_rep: int, d: int, seed, sigma: float | None = None) -> CrnBatch:
    """Draw ``n_rep`` replicates of :func:`mhanw.data.draw_sample`, one stream each from ``SeedSequence(seed)``.

    Parameters
    ----------
    regression : str, RegressionFunction or DataModel
        Whatever :func:`mhanw.data.draw_sample` accepts (a catalogue name, a
        :class:`~mhanw.data.RegressionFunction` or a data model).
    n : int
        Training points per replicate.
    n_test : int
        Test points per replicate.
    n_rep : int
        Replicates, at most :data:`mhanw.constants.MAX_REPLICATES`.
    d : int
        Input dimension.
    seed : int or numpy.random.SeedSequence
        The seed of the replicates' streams (explicit: ``None`` would differ run to run).
    sigma : float, optional
        The noise level (the data model's when ``None``).

    Returns
    -------
    CrnBatch
        The replicates, stacked.

    Raises
    ------
    ValueError
        Naming ``n``, ``n_test``, ``n_rep``, ``d`` or ``seed`` when it is not of that form, or the product
        ``n_rep x (n + n_test) x d`` when it is too large to allocate.
    """
    # each size is bounded by the stacked inputs X and X_test it sizes, checked before any draw
    n, n_test, n_rep, d = (
        positive_int(v, k, maximum=None) for v, k in ((n, "n"), (n_test, "n_test"), (n_rep, "n_rep"), (d, "d"))
    )
    check_entries("n_rep x (n + n_test) x d", n_rep, n + n_test, d)
    positive_int(n_rep, "n_rep", maximum=MAX_REPLICATES, what="replicates")
    streams = as_seed_sequence(seed).spawn(n_rep)  # an explicit int or SeedSequence; None would differ run to run
    samples = [
        _data.draw_sample(np.random.default_rng(s), regression, n, d, n_test=n_test, sigma=sigma) for s in streams
    ]
    return CrnBatch(
        X=np.stack([s.X for s in samples]),
        Y=np.stack([s.Y for s in samples]),
        X_test=np.stack([s.X_test for s in samples]),
        m_test=np.stack([s.m_test for s in samples]),
    )


def imse_and_gradient(W, batch: CrnBatch, bandwidth: float, gradient: bool = True):
    """The Monte Carlo IMSE of ``H`` averaged Gaussian NW heads on ``batch``, and its gradient in ``W`` (Thm 5.1).

    Head ``j`` at a test point ``x`` is ``sum_i w_i Y_i`` with ``w_i ∝ exp(-|W_j^T (x - X_i)|^2 / (2 h^2))``;
    the ensemble is their mean, and the loss is ``mean_{r,t} (f(x_t) - m(x_t))^2``, the IMSE of
    :func:`mhanw.montecarlo.integrated_mse` on these replicates.  The loss depends on ``W_j`` only through
    ``P_j = W_j W_j^T``; ``dL/dP_j = -(1/(R T H h^2)) sum_{r,t,i} e_t w_ti (Y_i - mhat_jt) u_ti u_ti^T`` with
    ``u_ti = x_t - X_i``, and ``dL/dW_j = 2 (dL/dP_j) W_j``.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads' projections (query and key tied).
    batch : CrnBatch
        The replicates (:func:`crn_batch`).
    bandwidth : float
        The heads' bandwidth ``h`` (``h^2`` a normal double).
    gradient : bool, default True
        Whether to compute the gradient.

    Returns
    -------
    loss : float
        The IMSE on the batch.
    grad : array (H, d, d_k) or None
        Its gradient in ``W`` (``None`` when ``gradient`` is false).

    Raises
    ------
    ValueError
        Naming ``batch``, ``W``, ``bandwidth`` or ``gradient`` when it is not of that form, or
        ``bandwidth`` when the logits overflow a double.
    """
    if not isinstance(batch, CrnBatch):
        raise ValueError(f"batch: expected a CrnBatch (crn_batch), got {type(batch).__name__}")
    gradient = boolean(gradient, "gradient")
    W = as_float_array(W, "W", ndim=3)
    if W.shape[1] != batch.X.shape[2]:
        raise ValueError(f"W: expected shape (H, {batch.X.shape[2]}, d_k), got {W.shape}")
    h = positive_scalar(bandwidth, "bandwidth")
    X, Y, Xt, mt = batch.X, batch.Y, batch.X_test, batch.m_test
    H = W.shape[0]
    R, T = mt.shape
    if h * h < np.finfo(float).tiny:  # 1/h^2 would be inf (or a division by zero) and the weights NaN
        raise ValueError(f"bandwidth: expected h^2 to be a normal double (h > 1.5e-154), got h = {h!r}")
    inv = 1.0 / (h * h)
    weights, est = [], []
    f = np.zeros((R, T))
    for j in range(H):
        K, Q = X @ W[j], Xt @ W[j]
        L = (np.matmul(Q, K.transpose(0, 2, 1)) - 0.5 * np.sum(K * K, axis=-1)[:, None, :]) * inv
        top = L.max(axis=-1, keepdims=True)
        if not np.all(np.isfinite(top)):
            raise ValueError(f"bandwidth: the logits |W^T x|^2 / h^2 overflow a double at h = {h!r}")
        L -= top
        w = np.exp(L)
        w /= w.sum(axis=-1, keepdims=True)
        mhat = np.einsum("rtn,rn->rt", w, Y)
        weights.append(w)
        est.append(mhat)
        f += mhat / H
    e = f - mt
    loss = float(np.mean(e * e))
    if not gradient:
        return loss, None
    A, B = Xt.reshape(-1, Xt.shape[-1]), X.reshape(-1, X.shape[-1])
    grad = np.empty_like(W)
    for j in range(H):
        C = e[:, :, None] * weights[j] * (Y[:, None, :] - est[j][:, :, None])  # (R, T, n)
        M = np.matmul(np.matmul(Xt.transpose(0, 2, 1), C), X).sum(axis=0)
        S = (A.T * C.sum(axis=-1).reshape(-1)) @ A - M - M.T + (B.T * C.sum(axis=1).reshape(-1)) @ B
        grad[j] = 2.0 * (-S / (R * T * H * h * h)) @ W[j]
    return loss, grad


def _tangent(W, G, orthogonal):
    if orthogonal:  # one Stiefel point U = [W_1 ... W_H]: G - U sym(U^T G)
        H, d, k = W.shape
        U, Gc = W.transpose(1, 0, 2).reshape(d, H * k), G.transpose(1, 0, 2).reshape(d, H * k)
        UG = U.T @ Gc
        xi = Gc - U @ (0.5 * (UG + UG.T))
        return xi.reshape(d, H, k).transpose(1, 0, 2)
    return G - np.einsum("hik,hjk,hjl->hil", W, W, G)  # per head: (I - W W^T) G (horizontal, Grassmann)


def _retract(W, orthogonal):
    if orthogonal:
        H, d, k = W.shape
        U = _heads.orthonormalize(W.transpose(1, 0, 2).reshape(d, H * k))
        return U.reshape(d, H, k).transpose(1, 0, 2)
    return orthonormal_bases(W)


@dataclass(frozen=True)
class ImseOptimum:
    """The result of :func:`minimize_imse` (Thm 5.1).

    Parameters
    ----------
    projections : array (H, d, d_k)
        The heads of the best start's end point.
    loss : float
        Its IMSE on the optimisation batch.
    losses : array (n_starts,)
        The final loss of every start.
    trace : array
        The loss along the best start's descent.
    hdi : float
        HDI_PA of the optimum (NaN for one head).
    angles : array (pairs, d_k)
        The principal angles between every pair of heads, in radians.
    """

    projections: np.ndarray
    loss: float
    losses: np.ndarray
    trace: np.ndarray
    hdi: float
    angles: np.ndarray


#: Longest first step of :func:`minimize_imse`: ten times the length of a head's column (1e308 overflowed W).
MAX_FIRST_MOVE = 10.0


def minimize_imse(
    batch: CrnBatch,
    n_heads: int,
    d_k: int,
    bandwidth: float,
    rng,
    n_starts: int = 3,
    n_steps: int = 60,
    orthogonal: bool = False,
    first_move: float = 0.2,
    starts=(),
) -> ImseOptimum:
    """Minimise :func:`imse_and_gradient` over ``H`` head subspaces of dimension ``d_k`` (Thm 5.1).

    Riemannian gradient descent from the given ``starts``, then ``n_starts`` Haar starts drawn from
    ``rng``: the Euclidean gradient is projected on the tangent space, a step is taken and the heads are
    re-orthonormalised by QR (the retraction); the step size is halved until the Armijo condition holds
    and doubled after each accepted step.  Free heads each move on their own Grassmannian; mutually
    orthogonal heads ``[W_1 ... W_H]`` move on one Stiefel manifold (the best orthogonal configuration,
    which matters when ``m`` is not isotropic: for isotropic ``m`` and inputs all orthogonal
    configurations have the same IMSE).

    Parameters
    ----------
    batch : CrnBatch
        The replicates the IMSE is computed on (:func:`crn_batch`).
    n_heads : int
        The number of heads ``H``.
    d_k : int
        The dimension of each head's subspace (at most ``d``; ``H d_k <= d`` for orthogonal heads).
    bandwidth : float
        The heads' bandwidth.
    rng : numpy.random.Generator
        The source of the Haar starts.
    n_starts : int, default 3
        Haar starts.
    n_steps : int, default 60
        Descent steps from each start.
    orthogonal : bool, default False
        Whether the heads stay mutually orthogonal.
    first_move : float, default 0.2
        The length of the first step, at most :data:`MAX_FIRST_MOVE`.
    starts : sequence of arrays (H, d, d_k), default ()
        Starts descended before the Haar starts (e.g. :func:`candidate_starts`).

    Returns
    -------
    ImseOptimum
        The best start's end point, its loss and the loss of every start.

    Raises
    ------
    ValueError
        Naming ``n_heads``, ``d_k``, ``rng``, ``n_starts``, ``n_steps``, ``first_move`` or ``starts`` when it
        is not of that form.
    """
    H = positive_int(n_heads, "n_heads")
    d_k = positive_int(d_k, "d_k")
    d = batch.X.shape[2]
    if d_k > d or (orthogonal and H * d_k > d):
        raise ValueError(
            f"d_k: {H} {'mutually orthogonal ' if orthogonal else ''}heads of d_k = {d_k} do not fit in d = {d}"
        )
    check_entries("n_heads", H, d, d_k)
    generator(rng, "rng")
    n_starts = positive_int(n_starts, "n_starts", maximum=MAX_REPLICATES, what="starts")
    n_steps = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES, what="steps")
    first_move = positive_scalar(first_move, "first_move")
    if first_move > MAX_FIRST_MOVE:
        raise ValueError(
            f"first_move: expected at most {MAX_FIRST_MOVE:g} (a move of the orthonormal heads, whose "
            f"columns have length 1), got {first_move!r}"
        )
    given = [as_float_array(W0, "starts", ndim=3) for W0 in starts]
    if any(W0.shape != (H, d, d_k) for W0 in given):
        raise ValueError(f"starts: expected frames of shape {(H, d, d_k)}, got {[W0.shape for W0 in given]}")
    best: tuple[np.ndarray, float, np.ndarray] | None = None
    losses = np.empty(len(given) + n_starts)
    for s in range(len(given) + n_starts):
        W = _retract(given[s] if s < len(given) else rng.standard_normal((H, d, d_k)), orthogonal)
        loss, G = imse_and_gradient(W, batch, bandwidth)
        trace = [loss]
        xi = _tangent(W, G, orthogonal)
        eta = first_move / max(float(np.linalg.norm(xi)), 1e-300)
        for _ in range(n_steps):
            g2 = float(np.sum(xi * xi))
            if g2 == 0.0:
                break
            while eta * np.sqrt(g2) > 1e-10:
                W_new = _retract(W - eta * xi, orthogonal)
                new, _ = imse_and_gradient(W_new, batch, bandwidth, gradient=False)
                if new <= loss - 1e-4 * eta * g2:
                    break
                eta /= 2.0
            else:
                break
            W = W_new
            loss, G = imse_and_gradient(W, batch, bandwidth)
            xi = _tangent(W, G, orthogonal)
            trace.append(loss)
            eta *= 2.0
        losses[s] = loss
        if best is None or loss < best[1]:
            best = (W, loss, np.array(trace))
    if best is None:  # n_starts >= 1: never
        raise ValueError("n_starts: expected at least one start")
    W, loss, best_trace = best
    pairs = [(a, b) for a in range(H) for b in range(a + 1, H)]
    angles = np.array([principal_angles(W[a], W[b]) for a, b in pairs]) if pairs else np.zeros((0, d_k))
    return ImseOptimum(
        projections=W,
        loss=loss,
        losses=losses,
        trace=best_trace,
        hdi=head_diversity_index(W) if H > 1 else float("nan"),
        angles=angles,
    )


#: The size of the perturbations of the known candidate that :func:`candidate_starts` starts from
#: (entries ``N(0, PERTURBATION^2)`` added to the orthonormal frame before re-orthonormalising).
PERTURBATION = 0.2


def candidate_starts(candidate, rng, n_perturbed: int = 2, scale: float = PERTURBATION) -> list:
    """The starts of an IMSE descent that must reach a known candidate (Thm 5.1's orthogonal heads).

    Parameters
    ----------
    candidate : array (H, d, d_k)
        The known candidate.
    rng : numpy.random.Generator
        The source of the perturbations.
    n_perturbed : int, default 2
        How many perturbations of it.
    scale : float, default :data:`PERTURBATION`
        The s.d. of the Gaussian entries added to the candidate before each head is re-orthonormalised.

    Returns
    -------
    list of arrays (H, d, d_k)
        The candidate itself, then its perturbations.

    Raises
    ------
    ValueError
        Naming ``candidate``, ``n_perturbed``, ``scale`` or ``rng`` when it is not of that form.
    """
    W = as_float_array(candidate, "candidate", ndim=3)
    n_perturbed = positive_int(n_perturbed, "n_perturbed", minimum=0, maximum=MAX_REPLICATES, what="starts")
    scale = positive_scalar(scale, "scale")
    generator(rng, "rng")
    return [W] + [orthonormal_bases(W + scale * rng.standard_normal(W.shape)) for _ in range(n_perturbed)]
