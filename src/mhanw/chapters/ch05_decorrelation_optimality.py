"""Chapter 05: is decorrelation optimal?  Random configurations, blind heads, the IMSE optimum, the frame bound (Thm 5.1).

Notebook ``05_decorrelation_optimality`` checks Thm 5.1 in four parts:

- random configurations: the experiment of chapter 04,
  :func:`random_configuration_imse` (re-exported from
  :mod:`mhanw.chapters.ch04_head_diversity_index`, with
  :func:`rank_correlation`), here an independent run with the anisotropic ``m``;
- :func:`blind_configurations`: identical, partially shared and orthogonal heads
  in ``R^4`` for a signal along ``e_1`` only, where orthogonality makes one head
  blind;
- the IMSE minimised over head subspaces: :func:`crn_batch` fixes training
  samples and test points (common random numbers), :func:`imse_and_gradient`
  is the Monte Carlo IMSE of averaged Gaussian NW heads and its exact gradient
  in the projections, :func:`minimize_imse` runs Riemannian gradient descent
  with QR retraction, over free heads or over mutually orthogonal heads;
- the frame bound: :func:`mhanw.diversity.maximize_hdi` and
  :func:`mhanw.diversity.frame_tightness` (theory, not chapter code).

The verdict rules (one per claim, thresholds as named constants) are the
``*_record`` functions; they return :class:`mhanw.infra.verdicts.Verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import data as _data
from ..constants import IMSE_RESOLUTION_PCT, MAX_REPLICATES, N_SE, check_entries
from ..diversity import head_diversity_index, orthonormal_bases, principal_angles
from ..heads import orthonormalize
from ..infra import verdicts as V
from ..infra.validate import as_float_array, as_seed_sequence, boolean, generator, positive_int, positive_scalar
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Verdict, checked, significant_effect
from ..infra.verdicts import stat as _stat
from .ch04_head_diversity_index import SHARED_PARAMETERS, random_configuration_imse, rank_correlation

__all__ = [
    "CONSTRAINTS", "CrnBatch", "ImseOptimum", "PARAMETERS", "RESOLUTION_PCT", "blind_configurations", "blind_verdict",
    "comparison_word", "crn_batch", "frame_general_verdict", "frame_verdict", "imse_and_gradient", "minimize_imse",
    "optimum_verdict", "overall_verdict", "random_configuration_imse", "random_records", "rank_correlation",
]

SECTION = "sec:thm51"

#: A "holds" that rests on finding no better configuration needs a run that could see a gain of this
#: size (per cent of the IMSE, 3 paired s.e.): :data:`mhanw.constants.IMSE_RESOLUTION_PCT`.
RESOLUTION_PCT = IMSE_RESOLUTION_PCT

#: The frame bound counts as reached when every start ends within this distance of it: the ascent is
#: deterministic, so the only error is the optimiser's, and 1e-3 is far below any HDI difference we read.
FRAME_TOL = 1e-3


def blind_configurations() -> dict:
    """Thm 5.1, the blind-head counterexample: two heads in ``R^4``, ``d_k = 2``, signal along ``e_1``.

    - ``"identical"``: ``span{e1, e2}`` twice (HDI_PA 0);
    - ``"shared"``: ``(span{e1, e2}, span{e1, e3})``, both heads see ``e_1`` (HDI_PA 1/2);
    - ``"orthogonal"``: ``(span{e1, e2}, span{e3, e4})``, the second head is blind (HDI_PA 1).

    Returns a dict of arrays ``(2, 4, 2)`` in this order.
    """
    e = np.eye(4)  # columns e_1 .. e_4
    first = e[:, [0, 1]]
    return {
        "identical": np.stack([first, first]),
        "shared": np.stack([first, e[:, [0, 2]]]),
        "orthogonal": np.stack([first, e[:, [2, 3]]]),
    }


# --------------------------------------------------------------------------- the IMSE over head subspaces


@dataclass(frozen=True)
class CrnBatch:
    """Fixed training samples and test points (common random numbers) of a Monte Carlo IMSE.

    ``X`` ``(R, n, d)``, ``Y`` ``(R, n)``: ``R`` training samples; ``X_test``
    ``(R, T, d)``, ``m_test`` ``(R, T)``: test points and ``m`` there.
    """

    X: np.ndarray
    Y: np.ndarray
    X_test: np.ndarray
    m_test: np.ndarray


def crn_batch(regression, n: int, n_test: int, n_rep: int, d: int, seed, sigma: float | None = None) -> CrnBatch:
    """Draw ``n_rep`` replicates of :func:`mhanw.data.draw_sample` (one stream each from ``SeedSequence(seed)``).

    ``regression`` is whatever :func:`mhanw.data.draw_sample` accepts (a catalogue
    name, a :class:`~mhanw.data.RegressionFunction`, or a data model).
    """
    # each size is bounded by the stacked inputs X and X_test it sizes, checked before any draw
    n, n_test, n_rep, d = (positive_int(v, k, maximum=None)
                           for v, k in ((n, "n"), (n_test, "n_test"), (n_rep, "n_rep"), (d, "d")))
    check_entries("n_rep x (n + n_test) x d", n_rep, n + n_test, d)
    positive_int(n_rep, "n_rep", maximum=MAX_REPLICATES, what="replicates")
    streams = as_seed_sequence(seed).spawn(n_rep)  # an explicit int or SeedSequence; None would differ run to run
    samples = [_data.draw_sample(np.random.default_rng(s), regression, n, d, n_test=n_test, sigma=sigma) for s in streams]
    return CrnBatch(X=np.stack([s.X for s in samples]), Y=np.stack([s.Y for s in samples]),
                    X_test=np.stack([s.X_test for s in samples]), m_test=np.stack([s.m_test for s in samples]))


def imse_and_gradient(W, batch: CrnBatch, bandwidth: float, gradient: bool = True):
    """The Monte Carlo IMSE of ``H`` averaged Gaussian NW heads on ``batch``, and its gradient in ``W``.

    ``W`` ``(H, d, d_k)``.  Head ``j`` at a test point ``x`` is
    ``sum_i w_i Y_i`` with ``w_i ∝ exp(-|W_j^T (x - X_i)|^2 / (2 h^2))``; the
    ensemble is their mean, and the loss is ``mean_{r,t} (f(x_t) - m(x_t))^2``,
    the IMSE of :func:`mhanw.montecarlo.integrated_mse` on these replicates.
    The loss depends on ``W_j`` only through ``P_j = W_j W_j^T``;
    ``dL/dP_j = -(1/(R T H h^2)) sum_{r,t,i} e_t w_ti (Y_i - mhat_jt) u_ti u_ti^T``
    with ``u_ti = x_t - X_i``, and ``dL/dW_j = 2 (dL/dP_j) W_j``.

    Returns ``(loss, grad)`` with ``grad`` ``(H, d, d_k)`` (``None`` when ``gradient`` is false).
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
        U = orthonormalize(W.transpose(1, 0, 2).reshape(d, H * k))
        return U.reshape(d, H, k).transpose(1, 0, 2)
    return orthonormal_bases(W)


@dataclass(frozen=True)
class ImseOptimum:
    """Result of :func:`minimize_imse`: ``projections`` ``(H, d, d_k)`` of the best start, its
    ``loss`` (the IMSE on the optimisation batch), ``losses`` ``(n_starts,)`` final loss per start,
    ``trace`` (loss along the best start's descent), ``hdi`` (HDI_PA of the optimum) and ``angles``
    (principal angles between every pair of heads, radians, ``(pairs, d_k)``)."""

    projections: np.ndarray
    loss: float
    losses: np.ndarray
    trace: np.ndarray
    hdi: float
    angles: np.ndarray


#: Longest first step of :func:`minimize_imse`: ten times the length of a head's column (1e308 overflowed W).
MAX_FIRST_MOVE = 10.0


def minimize_imse(batch: CrnBatch, n_heads: int, d_k: int, bandwidth: float, rng, n_starts: int = 3,
                  n_steps: int = 60, orthogonal: bool = False, first_move: float = 0.2) -> ImseOptimum:
    """Minimise :func:`imse_and_gradient` over ``H`` head subspaces of dimension ``d_k`` (Thm 5.1).

    Riemannian gradient descent from ``n_starts`` Haar starts drawn from ``rng``:
    the Euclidean gradient is projected on the tangent space, a step is taken
    and the heads are re-orthonormalised by QR (the retraction); the step size
    is halved until the Armijo condition holds and doubled after each accepted
    step.  ``orthogonal=False``: every head moves on its own Grassmannian
    (free heads).  ``orthogonal=True``: ``[W_1 ... W_H]`` moves on one Stiefel
    manifold, so the heads stay mutually orthogonal (needs ``H d_k <= d``):
    the best orthogonal configuration, which matters when ``m`` is not
    isotropic (for isotropic ``m`` and inputs all orthogonal configurations
    have the same IMSE).  ``first_move``: the length of the first step.
    """
    H = positive_int(n_heads, "n_heads")
    d_k = positive_int(d_k, "d_k")
    d = batch.X.shape[2]
    if d_k > d or (orthogonal and H * d_k > d):
        raise ValueError(f"d_k: {H} {'mutually orthogonal ' if orthogonal else ''}heads of d_k = {d_k} "
                         f"do not fit in d = {d}")
    check_entries("n_heads", H, d, d_k)
    generator(rng, "rng")
    n_starts = positive_int(n_starts, "n_starts", maximum=MAX_REPLICATES, what="starts")
    n_steps = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES, what="steps")
    first_move = positive_scalar(first_move, "first_move")
    if first_move > MAX_FIRST_MOVE:
        raise ValueError(f"first_move: expected at most {MAX_FIRST_MOVE:g} (a move of the orthonormal heads, whose "
                         f"columns have length 1), got {first_move!r}")
    best = None
    losses = np.empty(n_starts)
    for s in range(n_starts):
        W = _retract(rng.standard_normal((H, d, d_k)), orthogonal)
        loss, G = imse_and_gradient(W, batch, bandwidth)
        trace = [loss]
        xi = _tangent(W, G, orthogonal)
        eta = first_move / max(np.linalg.norm(xi), 1e-300)
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
    W, loss, trace = best
    pairs = [(a, b) for a in range(H) for b in range(a + 1, H)]
    angles = np.array([principal_angles(W[a], W[b]) for a, b in pairs]) if pairs else np.zeros((0, d_k))
    return ImseOptimum(projections=W, loss=loss, losses=losses, trace=trace,
                       hdi=head_diversity_index(W) if H > 1 else float("nan"), angles=angles)


# --------------------------------------------------------------------------- verdict rules


def _verdict(**kw):
    return Verdict(section=kw.pop("section", SECTION), **kw)


@checked(diff=V.number, se=V.standard_error, lower=V.text, higher=V.text, same=V.text)
def comparison_word(diff: float, se: float, lower: str, higher: str, same: str) -> str:
    """``lower`` when ``diff < -3 se``, ``higher`` when ``diff > 3 se``, ``same`` otherwise: a direction said
    only when the numbers show it (e.g. ``"beat"``, ``"lose to"``, ``"do not differ significantly from"``)."""
    if diff < -N_SE * se:
        return lower
    if diff > N_SE * se:
        return higher
    return same


def _no_better(claim, statement, rel_pct, rel_se_pct, conditions, criterion, extra=()):
    """Fails when a configuration beats the orthogonal one by 3 s.e.; holds (under ``conditions``) when the
    run could have seen a gain of :data:`RESOLUTION_PCT`; undecided otherwise."""
    detectable = N_SE * rel_se_pct
    if rel_pct < -detectable:
        verdict = FAILS
    elif detectable <= RESOLUTION_PCT:
        verdict = HOLDS_UNDER
    else:
        verdict = UNDECIDED
    return _verdict(claim=claim, statement=statement, verdict=verdict,
                    conditions=conditions if verdict == HOLDS_UNDER else "",
                    criterion=criterion + f"; a holds needs 3 s.e. <= {RESOLUTION_PCT:g} % (the run could see such a gain)",
                    statistics=(_stat("best other vs orthogonal", rel_pct, rel_se_pct, "%"),) + tuple(extra),
                    detectable=detectable if verdict == HOLDS_UNDER else None)


@checked(rel_pct=V.number, rel_se_pct=V.standard_error, m_label=V.text, isotropic=V.flag, rho=V.number,
         n_better=V.count, claim=V.text)
def random_records(rel_pct: float, rel_se_pct: float, m_label: str, isotropic: bool, rho: float, n_better: int,
                   claim: str):
    """Thm 5.1 over the random configurations: is any configuration better than the orthogonal blocks?

    ``rel_pct``, ``rel_se_pct``: IMSE of the best other configuration relative
    to the orthogonal blocks (per cent, paired s.e.)."""
    return _no_better(claim, f"The orthogonal blocks have the lowest IMSE among the random configurations ({m_label})",
                      rel_pct, rel_se_pct,
                      "isotropic m and inputs, uniform averaging, H d_k <= d" if isotropic else f"m = {m_label}",
                      "the best other configuration against the orthogonal blocks, 3 paired s.e.",
                      (_stat("Spearman correlation", rho), _stat("configurations significantly better", n_better)))


@checked(diff=V.number, se=V.standard_error)
def blind_verdict(diff: float, se: float):
    """Signal along e_1 only, averaging: orthogonal heads beat heads that share e_1 (Thm 5.1 predicts it)."""
    return _verdict(claim="thm-5.1/blind-head",
                    statement="With the signal along e_1 only, orthogonal heads beat heads that share e_1 (averaging)",
                    verdict=significant_effect(diff, se, sign=-1),
                    criterion="IMSE(orthogonal) - IMSE(shared): below -3 s.e. holds, above +3 s.e. fails",
                    statistics=(_stat("orthogonal minus shared", diff, se),)
                    + ((_stat("z", diff / se),) if se > 0 else ()))  # no z-score for an exact (zero s.e.) difference


@checked(slug=V.text, m_label=V.text, rel_pct=V.number, rel_se_pct=V.standard_error, hdi=V.number,
         isotropic=V.flag)
def optimum_verdict(slug: str, m_label: str, rel_pct: float, rel_se_pct: float, hdi: float, isotropic: bool):
    """The IMSE minimised over free head subspaces against the best mutually orthogonal heads, on fresh
    replicates: fails when the optimum is better by 3 paired s.e."""
    return _no_better(f"thm-5.1/imse-optimum/{slug}",
                      f"No head configuration has a lower IMSE than the best orthogonal one ({m_label})",
                      rel_pct, rel_se_pct,
                      "isotropic m and inputs, uniform averaging, H d_k <= d" if isotropic else f"m = {m_label}",
                      "the optimum over free heads against the best orthogonal heads on fresh replicates, 3 paired s.e.",
                      (_stat("HDI_PA of the optimum", hdi),))


@checked(gap=V.nonnegative, overshoot=V.number, tightness=V.nonnegative)
def frame_verdict(gap: float, overshoot: float, tightness: float):
    """Four lines in R^3 reach the frame bound 8/9 (a tight fusion frame exists)."""
    bad = gap > FRAME_TOL or overshoot > EXACT_TOL_FRAME
    return _verdict(claim="thm-5.1/frame-bound",
                    statement="When H d_k > d the largest HDI_PA is the frame bound (four lines in R^3: 8/9)",
                    verdict=FAILS if bad else HOLDS,
                    criterion=f"every start within {FRAME_TOL:g} of the bound and no step above it",
                    statistics=(_stat("largest distance of a start from the bound", gap),
                                _stat("largest excess over the bound", overshoot),
                                _stat("largest |sum P_j - (4/3) I|", tightness)),
                    detectable=None if bad else FRAME_TOL)


#: An ascent step may exceed the bound only by rounding (the bound is a theorem).
EXACT_TOL_FRAME = 1e-12


@checked(best=V.number, bound=V.number)
def frame_general_verdict(best: float, bound: float):
    """The frame bound is attained for every shape: fails for two planes in R^3 (they share a line)."""
    bad = best < bound - FRAME_TOL
    return _verdict(claim="thm-5.1/frame-bound-every-shape",
                    statement="The frame bound is attained for every shape with H d_k > d",
                    verdict=FAILS if bad else HOLDS,
                    criterion=f"best HDI_PA of two planes in R^3 against the bound {bound:.4f}, tolerance {FRAME_TOL:g}",
                    statistics=(_stat("two planes in R^3: best HDI_PA", best), _stat("frame bound", bound)),
                    detectable=None if bad else FRAME_TOL)


@checked(parts=V.records)
def overall_verdict(parts):
    """Thm 5.1 as stated (orthogonal heads minimise the MSE, unconditionally): fails when any part fails."""
    parts = V.records(parts, "parts")
    failed = [r.claim for r in parts if r.fails]
    return _verdict(claim="thm-5.1/as-stated", statement="Orthogonal heads minimise the MSE of multi-head attention",
                    verdict=FAILS if failed else UNDECIDED,
                    criterion="fails when any of " + ", ".join(r.claim for r in parts) + " fails",
                    statistics=(_stat("parts that fail", len(failed)),))


# --------------------------------------------------------------------------- parameters

from ..infra import params as _P  # noqa: E402  (the declaration below is the module's last part)

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).  The
#: blind-head configurations fix their shape (d = 4, d_k = 2, H = 2); the frame bound needs no data.
PARAMETERS = {
    **_P.STANDARD,
    "n_jobs": _P.positive_int(),
    "isotropic_regression": _P.regression(dimension="random_d"),
    "anisotropic_regression": _P.regression(dimension="random_d"),
    "blind_regression": _P.regression(dimension=4),
    "optimum_regressions": _P.sequence(_P.regression(dimension="optimum_d")),
    **SHARED_PARAMETERS,
    "optimum_d": _P.positive_int(2),
    "optimum_d_k": _P.positive_int(at_most="optimum_d"),
    "optimum_H": _P.positive_int(2),
}
CONSTRAINTS = (_P.product_at_most(("random_H", "random_d_k"), "random_d"),
               _P.product_at_most(("optimum_H", "optimum_d_k"), "optimum_d"))
