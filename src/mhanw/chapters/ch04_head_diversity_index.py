"""The integrated MSE against the Head Diversity Index (Thm 4.2, Thm 5.1).

Configurations, the shared random-configuration experiment, paired summaries
and the frame-potential optimisation used by notebooks ``04`` and ``05``.  The
Monte Carlo itself is :func:`mhanw.montecarlo.integrated_mse` (common random
numbers, one stream per replicate); this module only chooses what to compare
and summarises the paired differences.

HDI definitions (the three versions of the index): :func:`normalization_table` evaluates the
three normalizations of :func:`mhanw.diversity.head_diversity_index` on five
kinds of heads, :func:`normalization_predictions` gives their analytic values.

Configurations (orthonormal coordinate blocks unless stated):

- :func:`equal_hdi_configurations`, Thm 4.2 (B) and (B'): ``P`` with principal
  angles ``(0, 90)`` deg and ``Q = pair(45 deg)`` with ``(45, 45)`` deg share
  HDI_PA = 1/2; ``P'`` with angles ``(8, 90)`` deg has a slightly larger HDI_PA.
- :func:`blind_configurations`, the ``blind`` counterexample of Thm 5.1: identical, partially shared and
  orthogonal heads in ``R^4``, for ``m = blind`` (signal along ``e_1`` only).
- :func:`random_configurations`, Thm 4.2 (D) and the random configurations of Thm 5.1: interpolated
  heads at evenly spaced ``t`` plus the exact orthogonal blocks, evaluated by
  :func:`random_configuration_imse`, the one experiment both notebooks run.

Summaries of an :class:`mhanw.montecarlo.ImseResult` (the 3-s.e. rule of
the claims page): :func:`differences_from`, :func:`relative_difference`,
:func:`step_differences`, :func:`family_summary`, :func:`monotonicity_violations`,
:func:`rank_correlation`, :func:`z_score`.

Frame bound (Thm 5.1, check T5.1c): :func:`maximize_hdi` maximises HDI_PA over ``H``
subspaces of dimension ``d_k`` in ``R^d`` by projected gradient ascent;
:func:`frame_tightness` measures the distance of ``sum_j P_j`` from
``(H d_k/d) I``, zero exactly for tight fusion frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, spearmanr

from .. import heads as _heads
from .. import montecarlo as _mc
from ..infra.validate import as_float_array, as_seed_sequence, generator, nonnegative_scalar, positive_int, positive_scalar
from ..diversity import head_diversity_index, orthonormal_bases

__all__ = [
    "HEAD_TYPES",
    "FrameAscent",
    "RandomConfigurations",
    "blind_configurations",
    "differences_from",
    "equal_hdi_configurations",
    "family_summary",
    "frame_tightness",
    "maximize_hdi",
    "monotonicity_violations",
    "normalization_predictions",
    "normalization_table",
    "random_configuration_imse",
    "random_configurations",
    "rank_correlation",
    "relative_difference",
    "step_differences",
    "z_score",
]


# --------------------------------------------------------------------------- HDI definitions

#: Kinds of heads of the normalization table (HDI checks HDI-a..e).
HEAD_TYPES = ("identical", "orthogonal", "gaussian_scaled", "gaussian_unit", "identical_x2")

_NORMS = ("paper", "principal_angles", "rv")


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
        out[kind] = {norm: head_diversity_index(W, norm) for norm in _NORMS}
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


def blind_configurations() -> dict:
    """The ``blind`` counterexample of Thm 5.1: two heads in ``R^4``, ``d_k = 2``, for ``m = blind`` (signal along ``e_1``).

    - ``"identical"``: ``span{e1, e2}`` twice (HDI_PA 0);
    - ``"shared"``: ``(span{e1, e2}, span{e1, e3})``, both heads see ``e_1`` (HDI_PA 1/2);
    - ``"orthogonal"``: ``(span{e1, e2}, span{e3, e4})``, the second head is blind (HDI_PA 1).
    """
    e = np.eye(4)
    first = _cols(4, e[0], e[1])
    return {
        "identical": np.stack([first, first]),
        "shared": np.stack([first, _cols(4, e[0], e[2])]),
        "orthogonal": np.stack([first, _cols(4, e[2], e[3])]),
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
    ``H d_k <= d``).  Reference: ``d = 6, d_k = 2, H = 3`` (experiment (D) of Thm 4.2).
    """
    n_configs = positive_int(n_configs, "n_configs", minimum=2)
    generator(rng, "rng")
    t = np.linspace(0.0, 1.0, n_configs)
    projections = [_heads.interpolated_heads(float(ti), d, d_k, n_heads, rng) for ti in t]
    projections.append(_heads.orthogonal_heads(d, d_k, n_heads))
    hdi = np.array([head_diversity_index(W) for W in projections])
    return RandomConfigurations(projections=projections, t=np.append(t, np.nan), hdi=hdi)


def random_configuration_imse(regressions, n_configs: int, seed, n: int, n_test: int, n_rep: int,
                              bandwidth: float = 0.6, sigma: float = 0.5, d: int = 6, d_k: int = 2,
                              n_heads: int = 3, n_jobs: int = 1, progress: bool = False) -> tuple:
    """Thm 4.2 (D) and the random configurations of Thm 5.1: the IMSE of random configurations, one result per ``m``.

    ``seed`` (int or SeedSequence) spawns two children: the first draws the
    configurations (:func:`random_configurations`), the second the replicates
    of :func:`mhanw.montecarlo.integrated_mse`; every ``m`` uses the same replicate
    streams (same inputs and test points; only ``m(X)`` differs).  Reference
    sizes: ``n = 400, h = 0.6, T = 200``, ``m = iso_cos6``.

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


# --------------------------------------------------------------------------- paired summaries


def _check_result(result):
    if not isinstance(result, _mc.ImseResult):
        raise ValueError(f"result: expected an ImseResult, got {type(result).__name__}")
    if result.errors.shape[1] < 2:
        raise ValueError(f"result: expected at least 2 replicates, got {result.errors.shape[1]}")
    return result.errors


def _index(i, C, name):
    i = positive_int(i, name, minimum=0)
    if i >= C:
        raise ValueError(f"{name}: expected a configuration index below {C}, got {i}")
    return i


def relative_difference(result, reference: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``IMSE_c / IMSE_ref - 1`` for every configuration ``c``, with its paired s.e., ``(C,)`` each.

    Delta method under CRN: with ``r = mean(err_c) / mean(err_ref)`` the s.e. is
    ``sd(err_c - r err_ref) / (sqrt(R) mean(err_ref))`` (ddof = 1); 0 for the reference.
    """
    E = _check_result(result)
    ref = _index(reference, E.shape[0], "reference")
    R = E.shape[1]
    base = E[ref].mean()
    ratio = E.mean(axis=1) / base
    resid = E - ratio[:, None] * E[ref][None, :]
    se = resid.std(axis=1, ddof=1) / (np.sqrt(R) * base)
    return ratio - 1.0, se


def differences_from(result, reference: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Paired differences ``IMSE_c - IMSE_ref`` and their s.e. ``sd(err_c - err_ref)/sqrt(R)``, ``(C,)`` each."""
    E = _check_result(result)
    ref = _index(reference, E.shape[0], "reference")
    diff = E - E[ref][None, :]
    return diff.mean(axis=1), diff.std(axis=1, ddof=1) / np.sqrt(E.shape[1])


def z_score(diff, se) -> np.ndarray:
    """``diff / se`` elementwise, 0 where ``se`` is 0 (a configuration compared with itself)."""
    diff = np.asarray(diff, dtype=float)
    se = np.asarray(se, dtype=float)
    return np.divide(diff, se, out=np.zeros(np.broadcast(diff, se).shape), where=se > 0)


def step_differences(result, order=None) -> tuple[np.ndarray, np.ndarray]:
    """Paired differences ``IMSE_{order[k+1]} - IMSE_{order[k]}`` and their s.e., ``(len(order) - 1,)`` each.

    ``order`` (default: the stored order) lists configurations by increasing
    HDI; a step is a violation of "non-increasing" when it exceeds 3 s.e. (T4.2a).
    """
    E = _check_result(result)
    order = np.arange(E.shape[0]) if order is None else np.asarray(order, dtype=int)
    if order.ndim != 1 or order.size < 2 or order.min() < 0 or order.max() >= E.shape[0]:
        raise ValueError(f"order: expected at least 2 configuration indices below {E.shape[0]}, got {order!r}")
    diff = E[order[1:]] - E[order[:-1]]
    return diff.mean(axis=1), diff.std(axis=1, ddof=1) / np.sqrt(E.shape[1])


def family_summary(result, reference: int = 0) -> dict:
    """Summary of a family ordered by increasing HDI (pair, star; Thm 4.2 (A)).

    Keys: ``imse``, ``se`` (per configuration); ``rel``, ``rel_se``
    (:func:`relative_difference` to ``reference``); ``diff``, ``diff_se``, ``z``
    (:func:`differences_from` ``reference``); ``step``, ``step_se``, ``step_z``
    (:func:`step_differences` in stored order) and ``max_step_z``, the largest
    step z-score (> 3 is a significant increase, T4.2a).
    """
    rel, rel_se = relative_difference(result, reference)
    diff, diff_se = differences_from(result, reference)
    step, step_se = step_differences(result)
    step_z = z_score(step, step_se)
    return {
        "imse": result.mean, "se": result.se, "rel": rel, "rel_se": rel_se,
        "diff": diff, "diff_se": diff_se, "z": z_score(diff, diff_se),
        "step": step, "step_se": step_se, "step_z": step_z, "max_step_z": float(step_z.max()),
    }


def monotonicity_violations(hdi, result, gap: float = 0.02, n_se: float = 3.0) -> dict:
    """Test "IMSE non-increasing in HDI" on every ordered pair (Thm 4.2, check T4.2d).

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
    hdi = as_float_array(hdi, "hdi", ndim=1)
    if hdi.shape[0] != E.shape[0]:
        raise ValueError(f"hdi: expected {E.shape[0]} values (one per configuration), got {hdi.shape[0]}")
    gap = nonnegative_scalar(gap, "gap")
    n_se = positive_scalar(n_se, "n_se")
    i, j = np.nonzero(hdi[:, None] > hdi[None, :] + gap)
    diff = E[i] - E[j]
    mean = diff.mean(axis=1)
    se = diff.std(axis=1, ddof=1) / np.sqrt(E.shape[1])
    z = mean / se
    bad = np.flatnonzero(z > n_se)
    return {
        "n_pairs": int(i.size),
        "violations": [(int(i[k]), int(j[k]), float(mean[k]), float(se[k])) for k in bad],
        "n_violations": int(bad.size),
        "n_decreases": int(np.sum(z < -n_se)),
        "expected_by_chance": float(i.size * norm.sf(n_se)),
        "max_z": float(z.max()) if z.size else float("nan"),
    }


def rank_correlation(hdi, result) -> float:
    """Spearman rank correlation between HDI and IMSE over configurations (T4.2d: <= -0.8 expected)."""
    E = _check_result(result)
    hdi = as_float_array(hdi, "hdi", ndim=1)
    if hdi.shape[0] != E.shape[0]:
        raise ValueError(f"hdi: expected {E.shape[0]} values (one per configuration), got {hdi.shape[0]}")
    return float(spearmanr(hdi, E.mean(axis=1)).statistic)


# --------------------------------------------------------------------------- frame bound


@dataclass(frozen=True)
class FrameAscent:
    """Result of :func:`maximize_hdi`: ``bases`` ``(n_starts, H, d, d_k)`` at the end,
    ``hdi`` ``(n_starts,)`` final HDI_PA, ``trace`` ``(n_starts, n_steps + 1)`` HDI_PA
    along the ascent, ``tightness`` ``(n_starts,)`` (:func:`frame_tightness`)."""

    bases: np.ndarray
    hdi: np.ndarray
    trace: np.ndarray
    tightness: np.ndarray


def frame_tightness(W) -> float:
    """``|| sum_j P_j - (H d_k / d) I ||_F``: 0 iff the subspaces form a tight fusion frame.

    ``W`` ``(H, d, d_k)``, any full-rank heads (their ranges are used).  When
    ``H d_k > d`` the HDI_PA bound of Section 7 is attained iff this is 0.
    """
    Q = orthonormal_bases(W)
    H, d, d_k = Q.shape
    S = np.einsum("hik,hjk->ij", Q, Q)
    return float(np.linalg.norm(S - (H * d_k / d) * np.eye(d)))


def _hdi_of_bases(Q):
    H, _, d_k = Q.shape
    G = np.einsum("aik,bil->abkl", Q, Q)
    S = (G * G).sum(axis=(2, 3))
    iu = np.triu_indices(H, k=1)
    return 1.0 - S[iu].mean() / d_k


def _batched_qr(A):
    """Orthonormal bases of a stack ``(H, d, d_k)`` by QR with ``diag(R) > 0`` (as
    :func:`mhanw.heads.orthonormalize`, without its per-head checks)."""
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]


def maximize_hdi(d: int, d_k: int, n_heads: int, rng, n_starts: int = 20, n_steps: int = 300,
                 step: float = 0.5) -> FrameAscent:
    """Maximise HDI_PA over ``H`` subspaces of dimension ``d_k`` in ``R^d`` (the frame bound of Thm 5.1).

    Projected gradient ascent from ``n_starts`` Haar starts.  With orthonormal
    bases ``Q_j``, ``1 - HDI_PA = c sum_{j<j'} ||Q_j^T Q_j'||_F^2`` with
    ``c = 2/(H (H - 1) d_k)``, whose gradient in ``Q_j`` is
    ``2 c sum_{j' != j} P_j' Q_j``; each step moves every ``Q_j`` against it by
    ``step / (2 c (H - 1))`` times the gradient (so the update is at most ``step``
    in operator norm) and re-orthonormalises by QR (the projection onto the
    Stiefel manifold).  Maximising HDI_PA is minimising the fusion-frame
    potential ``||sum_j P_j||_F^2 >= (H d_k)^2 / d``.  When ``H d_k <= d`` the
    optimum is mutually orthogonal subspaces (HDI_PA 1); when ``H d_k > d`` the
    bound :func:`mhanw.diversity.hdi_upper_bound` is attained iff a tight fusion
    frame ``sum_j P_j = (H d_k/d) I`` with these dimensions exists: four lines in
    ``R^3`` reach 8/9, but two planes in ``R^3`` always share a line and reach
    only 1/2 < 2/3.  The ascent finds a local maximum; use several starts.
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    H = positive_int(n_heads, "n_heads", minimum=2)
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    generator(rng, "rng")
    n_starts = positive_int(n_starts, "n_starts")
    n_steps = positive_int(n_steps, "n_steps")
    step = positive_scalar(step, "step")
    eta = step / (H - 1)  # = step / (2c (H-1)) times the constant 2c absorbed in the gradient below
    bases = np.empty((n_starts, H, d, d_k))
    trace = np.empty((n_starts, n_steps + 1))
    for s in range(n_starts):
        Q = _heads.haar_heads(d, d_k, H, rng)
        trace[s, 0] = _hdi_of_bases(Q)
        for k in range(n_steps):
            P_sum = np.einsum("hik,hjk->ij", Q, Q)
            # sum_{j' != j} P_j' Q_j = (sum_j' P_j') Q_j - Q_j, up to the constant 2c
            grad = np.einsum("ij,hjk->hik", P_sum, Q) - Q
            Q = _batched_qr(Q - eta * grad)
            trace[s, k + 1] = _hdi_of_bases(Q)
        bases[s] = Q
    return FrameAscent(bases=bases, hdi=trace[:, -1].copy(), trace=trace,
                       tightness=np.array([frame_tightness(b) for b in bases]))
