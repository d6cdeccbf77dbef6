"""Chapter 05: is decorrelation optimal?  Random configurations, blind heads, the IMSE optimum, the frame bound (Thm 5.1).

Notebook ``05_decorrelation_optimality`` checks Thm 5.1 in four parts:

- random configurations: the experiment of chapter 04,
  :func:`random_configuration_imse` (re-exported from
  :mod:`mhanw.chapters.ch04_head_diversity_index`, with :func:`rank_correlation`,
  :func:`rule_options` and the names of the regression functions,
  :func:`regression_label`), here an independent run with the anisotropic ``m``;
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
from ..heads import HeadConfig, orthonormalize
from ..infra import verdicts as V
from ..infra.notebook import notebook_helper
from ..infra.validate import as_float_array, as_seed_sequence, boolean, generator, positive_int, positive_scalar
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Verdict, checked, significant_effect
from ..infra.verdicts import stat as _stat
from .ch04_head_diversity_index import (
    SHARED_PARAMETERS,
    random_configuration_imse,
    rank_correlation,
    regression_label,
    rule_options,
)

__all__ = [
    "CONSTRAINTS",
    "CrnBatch",
    "ImseOptimum",
    "PARAMETERS",
    "RESOLUTION_PCT",
    "blind_configurations",
    "blind_verdict",
    "candidate_starts",
    "comparison_word",
    "crn_batch",
    "frame_general_verdict",
    "frame_verdict",
    "imse_and_gradient",
    "minimize_imse",
    "optimum_search",
    "optimum_verdict",
    "overall_verdict",
    "random_configuration_imse",
    "random_records",
    "rank_correlation",
    "reading_premises",
    "regression_label",
    "rule_options",
    "setup",
    "SIZES",
    "STREAMS",
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
    best = None
    losses = np.empty(len(given) + n_starts)
    for s in range(len(given) + n_starts):
        W = _retract(given[s] if s < len(given) else rng.standard_normal((H, d, d_k)), orthogonal)
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
    return ImseOptimum(
        projections=W,
        loss=loss,
        losses=losses,
        trace=trace,
        hdi=head_diversity_index(W) if H > 1 else float("nan"),
        angles=angles,
    )


#: The size of the perturbations of the known candidate that :func:`candidate_starts` starts from
#: (entries ``N(0, PERTURBATION^2)`` added to the orthonormal frame before re-orthonormalising).
PERTURBATION = 0.2


def candidate_starts(candidate, rng, n_perturbed: int = 2, scale: float = PERTURBATION) -> list:
    """The starts of an IMSE descent that must reach a known candidate (Thm 5.1's orthogonal heads): the
    candidate ``(H, d, d_k)`` itself and ``n_perturbed`` perturbations of it (Gaussian entries of s.d.
    ``scale``, re-orthonormalised per head)."""
    W = as_float_array(candidate, "candidate", ndim=3)
    n_perturbed = positive_int(n_perturbed, "n_perturbed", minimum=0, maximum=MAX_REPLICATES, what="starts")
    scale = positive_scalar(scale, "scale")
    generator(rng, "rng")
    return [W] + [orthonormal_bases(W + scale * rng.standard_normal(W.shape)) for _ in range(n_perturbed)]


def optimum_search(free: ImseOptimum, candidate_loss: float, n_given: int, n_steps: int) -> V.Search:
    """The budget and convergence of the descent ``free`` (:func:`minimize_imse` with the
    ``n_given`` starts of :func:`candidate_starts` first) against the known candidate's IMSE on the
    same batch, ``candidate_loss``; ``n_steps`` is the step budget of each start."""
    n_steps = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES, what="steps")
    return V.Search(
        what="IMSE descent over free heads",
        starts=len(free.losses),
        known_starts=min(1, n_given),
        perturbed_starts=max(0, n_given - 1),
        steps=n_steps,
        best=free.loss,
        known=candidate_loss,
        unit="IMSE on the optimisation batch",
    )


def reading_premises(model, configs) -> tuple[tuple, bool]:
    """The premises a no-better-than-orthogonal record rests on, and whether it can only refute.

    For an isotropic ``m`` (:func:`mhanw.premises.isotropic_m`) the record is the isotropic reading
    of Thm 5.1 and rests on the same premises as chapter 4's (:func:`isotropic_premises
    <mhanw.chapters.ch04_head_diversity_index.isotropic_premises>`: rotation-invariant inputs and noise,
    orthonormal heads averaged uniformly): ``(premises, False)``.  For any other ``m`` it tests the
    unconditional statement, which a counterexample refutes and no finite search proves:
    ``(heads premises, True)``."""
    from .. import premises as P
    from .ch04_head_diversity_index import isotropic_premises

    if P.isotropic_m(model).holds:
        return isotropic_premises([model], configs), False
    hc = [c if isinstance(c, HeadConfig) else HeadConfig(c) for c in configs]
    return tuple(p for c in hc for p in (P.orthonormal_heads(c), P.uniform_averaging(c))), True


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


def _no_better(claim, statement, rel_pct, rel_se_pct, premises, refute_only, criterion, extra=(), search=None):
    """Fails when a configuration beats the orthogonal one by 3 s.e.; otherwise, for the isotropic
    reading (``refute_only`` false), holds (under ``premises``) when the run could have seen a gain of
    :data:`RESOLUTION_PCT` and, for an optimum, the ``search`` reached the orthogonal heads
    (:func:`mhanw.infra.verdicts.search_verdict`); undecided otherwise, and always for an ``m`` outside the
    isotropic reading (``refute_only``: a finite search refutes, never proves)."""
    detectable = N_SE * rel_se_pct
    if rel_pct < -detectable:
        verdict = FAILS
    elif refute_only:
        verdict = UNDECIDED
    else:
        verdict = V.power_verdict(HOLDS_UNDER, detectable, RESOLUTION_PCT)
    if search is not None:
        verdict = V.search_verdict(verdict, search)
    rule = (
        "below -3 s.e. fails; otherwise undecided (an anisotropic m: only a counterexample decides)"
        if refute_only
        else f"below -3 s.e. fails; otherwise holds when 3 s.e. <= {RESOLUTION_PCT:g} % (the run could see such "
        "a gain)"
        + (" and the descent reached the orthogonal heads on its batch" if search is not None else "")
        + ", else undecided"
    )
    found = (
        f"a configuration beats the orthogonal heads: its IMSE is {rel_pct:+.1f} ± {rel_se_pct:.1f} % against theirs"
        if verdict == FAILS
        else f"no configuration beats the orthogonal heads by 3 paired s.e. (the best other {rel_pct:+.1f} ± "
        f"{rel_se_pct:.1f} %)"
    )
    return _verdict(
        claim=claim,
        statement=statement,
        verdict=verdict,
        premises=premises,
        finding=found,
        criterion=f"{criterion}: {rule}",
        statistics=(_stat("best other vs orthogonal", rel_pct, rel_se_pct, "%"),) + tuple(extra),
        detectable=None if refute_only else detectable,
        tolerance=None if refute_only else RESOLUTION_PCT,
        unit="" if refute_only else "%",
        search=search,
    )


@checked(
    rel_pct=V.number,
    rel_se_pct=V.standard_error,
    m_label=V.text,
    premises=V.premise_list,
    refute_only=V.flag,
    rho=V.number,
    n_better=V.count,
    claim=V.text,
)
def random_records(
    rel_pct: float, rel_se_pct: float, m_label: str, premises, refute_only: bool, rho: float, n_better: int, claim: str
):
    """Thm 5.1 over the random configurations: is any configuration better than the orthogonal blocks?

    ``rel_pct``, ``rel_se_pct``: IMSE of the best other configuration relative
    to the orthogonal blocks (per cent, paired s.e.); ``premises``, ``refute_only``:
    :func:`reading_premises`."""
    return _no_better(
        claim,
        f"The orthogonal blocks have the lowest IMSE among the random configurations ({m_label})",
        rel_pct,
        rel_se_pct,
        premises,
        refute_only,
        "the best other configuration against the orthogonal blocks, 3 paired s.e.",
        (_stat("Spearman correlation", rho), _stat("configurations significantly better", n_better)),
    )


@checked(diff=V.number, se=V.standard_error)
def blind_verdict(diff: float, se: float):
    """Signal along e_1 only, averaging: orthogonal heads beat heads that share e_1 (Thm 5.1 predicts it)."""
    word = comparison_word(diff, se, "lower than", "higher than", "not significantly different from")
    finding = (
        f"with the signal along e_1 only and averaging, orthogonal heads, one of them blind to the signal, "
        f"have an IMSE {word} that of heads that share e_1 (orthogonal minus shared {diff:+.3g} ± {se:.2g})"
    )
    return _verdict(
        claim="thm-5.1/blind-head",
        finding=finding,
        statement="With the signal along e_1 only, orthogonal heads beat heads that share e_1 (averaging)",
        verdict=significant_effect(diff, se, sign=-1),
        criterion="IMSE(orthogonal) - IMSE(shared): below -3 s.e. holds, above +3 s.e. fails",
        statistics=(_stat("orthogonal minus shared", diff, se),) + ((_stat("z", diff / se),) if se > 0 else ()),
    )  # no z-score for an exact (zero s.e.) difference


@checked(
    slug=V.text,
    m_label=V.text,
    rel_pct=V.number,
    rel_se_pct=V.standard_error,
    hdi=V.number,
    premises=V.premise_list,
    refute_only=V.flag,
    search=V.search,
)
def optimum_verdict(
    slug: str, m_label: str, rel_pct: float, rel_se_pct: float, hdi: float, premises, refute_only: bool, search
):
    """The IMSE minimised over free head subspaces against the best mutually orthogonal heads, on fresh
    replicates: fails when the optimum is better by 3 paired s.e.; a holds also needs the descent
    (``search``, :func:`optimum_search`) to have reached the orthogonal heads on its own batch."""
    return _no_better(
        f"thm-5.1/imse-optimum/{slug}",
        f"No head configuration has a lower IMSE than the best orthogonal one ({m_label})",
        rel_pct,
        rel_se_pct,
        premises,
        refute_only,
        "the optimum over free heads against the best orthogonal heads on fresh replicates, 3 paired s.e.",
        (
            _stat("HDI_PA of the optimum", hdi),
            _stat(
                "descent's best against the orthogonal heads, on its batch",
                100 * (search.best - search.known) / abs(search.known) if search.known else 0.0,
                unit="%",
            ),
        ),
        search=search,
    )


@checked(gap=V.nonnegative, overshoot=V.number, tightness=V.nonnegative)
def frame_verdict(gap: float, overshoot: float, tightness: float):
    """Four lines in R^3 reach the frame bound 8/9 (a tight fusion frame exists)."""
    bad = gap > FRAME_TOL or overshoot > EXACT_TOL_FRAME
    return _verdict(
        claim="thm-5.1/frame-bound",
        statement="When H d_k > d the largest HDI_PA is the frame bound (four lines in R^3: 8/9)",
        verdict=FAILS if bad else HOLDS,
        criterion=f"every start within {FRAME_TOL:g} of the bound and no step above it",
        statistics=(
            _stat("largest distance of a start from the bound", gap),
            _stat("largest excess over the bound", overshoot),
            _stat("largest |sum P_j - (4/3) I|", tightness),
        ),
        detectable=None if bad else FRAME_TOL,
    )


#: An ascent step may exceed the bound only by rounding (the bound is a theorem).
EXACT_TOL_FRAME = 1e-12


@checked(best=V.number, bound=V.number)
def frame_general_verdict(best: float, bound: float):
    """The frame bound is attained for every shape: fails for two planes in R^3 (they share a line)."""
    bad = best < bound - FRAME_TOL
    return _verdict(
        claim="thm-5.1/frame-bound-every-shape",
        statement="The frame bound is attained for every shape with H d_k > d",
        verdict=FAILS if bad else HOLDS,
        criterion=f"best HDI_PA of two planes in R^3 against the bound {bound:.4f}, tolerance {FRAME_TOL:g}",
        statistics=(_stat("two planes in R^3: best HDI_PA", best), _stat("frame bound", bound)),
        detectable=None if bad else FRAME_TOL,
    )


@checked(parts=V.records)
def overall_verdict(parts):
    """Thm 5.1 as stated (orthogonal heads minimise the MSE, unconditionally): fails when any part fails."""
    parts = V.records(parts, "parts")
    failed = [r.claim for r in parts if r.fails]
    return _verdict(
        claim="thm-5.1/as-stated",
        statement="Orthogonal heads minimise the MSE of multi-head attention",
        verdict=FAILS if failed else UNDECIDED,
        criterion=f"fails when any of the {len(parts)} parts that test it fails, else undecided",
        statistics=(_stat("parts that fail", len(failed)),),
    )


# --------------------------------------------------------------------------- the notebook's figure and records


@notebook_helper
def optimality_figure(nb):
    """The figure of Thm 5.1 (``05_decorrelation_optimality``): top row (a) the IMSE optimum over free
    heads relative to the best orthogonal heads on fresh replicates, (b) the descent of the best start on
    its batch, (c) the random configurations with the anisotropic ``m`` relative to the orthogonal
    blocks; bottom row (d) the signal along ``e_1`` under both combination rules and (e) the ascent of
    HDI_PA for four lines in R^3.  Bars: 2 (paired) s.e.  ``nb``: the executed notebook's variables (a
    mapping).  Returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    from ..diversity import haar_expected_hdi
    from ..infra import figures
    from ..infra.notebook import Namespace

    nb = Namespace(nb)
    fig, ax = plt.subplot_mosaic(
        [["a", "a", "b", "b", "c", "c"], ["d", "d", "d", "e", "e", "e"]],
        figsize=(figures.TEXT_WIDTH, 2 * figures.ROW_HEIGHT + 0.5),
    )
    ms = list(nb.optimum)
    ratio = np.array([1 + nb.optimum[m]["rel"] for m in ms])
    ratio_se = np.array([nb.optimum[m]["rel_se"] for m in ms])
    figures.errorbar(
        ax["a"],
        np.arange(len(ms)),
        ratio,
        ratio_se,
        color="C0",
        marker="o",
        linestyle="none",
        label="optimum, free heads",
    )
    ax["a"].axhline(1, color="k", lw=0.8, ls="--", label="best orthogonal heads")
    for i, m in enumerate(ms):
        ax["a"].annotate(
            rf"HDI$_{{\mathrm{{PA}}}}$ {nb.optimum[m]['free'].hdi:.2f}",
            (i, ratio[i]),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=7,
        )
    ax["a"].set(
        yscale="log",
        xlim=(-0.5, len(ms) - 0.5),
        ylim=(0.1, 2.0),
        ylabel="IMSE / IMSE(best orthogonal)",
        title="(a) IMSE optimum",
    )
    ax["a"].set_xticks(range(len(ms)), [regression_label(m) for m in ms])
    ax["a"].set_yticks([0.1, 0.2, 0.5, 1.0, 2.0], ["0.1", "0.2", "0.5", "1", "2"])
    ax["a"].minorticks_off()
    ax["a"].legend(loc="lower left", fontsize=7)

    for m, color, ls in zip(ms, ("C0", "C3", "C2", "C4"), ("-", "--", ":", "-.")):
        tr = nb.optimum[m]["free"].trace
        ax["b"].plot(np.arange(tr.size), tr / tr[0], color=color, ls=ls, label=regression_label(m))
    ax["b"].set(xlabel="descent step", ylabel="IMSE / IMSE(start), batch", title="(b) descent, best start")
    ax["b"].legend(loc="center right", fontsize=7)

    v = nb.rand[nb.ANISO]
    figures.errorbar(
        ax["c"],
        nb.cfg.hdi[nb.others],
        100 * v["rel"][nb.others],
        100 * v["rel_se"][nb.others],
        color="C2",
        linestyle="none",
        ms=3,
        label="interpolated",
    )
    ax["c"].plot(nb.cfg.hdi[nb.o], 0.0, marker="*", color="k", ms=9, linestyle="none", label="orthogonal")
    ax["c"].axhline(0, color="grey", lw=0.6)
    ax["c"].set(
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel="IMSE change vs orthogonal (%)",
        title=f"(c) {regression_label(nb.ANISO)}, Spearman {v['rho']:.2f}".replace("-", "\u2212"),
    )
    lo, hi = ax["c"].get_ylim()
    ax["c"].set_ylim(lo, hi + 0.6 * (hi - lo))  # headroom for the legend
    ax["c"].legend(loc="upper right", fontsize=7)

    labels = list(nb.blind_cfgs)
    for off, rule, color, mk in ((-0.1, "average", "C0", "o"), (0.1, "sum", "C3", "s")):
        ii = [nb.idx[f"{k}, {rule}"] for k in labels]
        figures.errorbar(
            ax["d"],
            np.arange(3) + off,
            nb.blind.mean[ii],
            nb.blind.se[ii],
            color=color,
            marker=mk,
            linestyle="none",
            label=rule,
        )
    ax["d"].set_xticks(range(3), [f"{k}\nHDI {nb.blind_hdi[k]:.1f}" for k in labels])
    ax["d"].set(
        yscale="log",
        ylabel=f"IMSE, {regression_label(nb.blind_regression)}",
        xlim=(-0.5, 2.5),
        title="(d) signal along $e_1$ only",
    )
    ax["d"].set_yticks([0.1, 0.2, 0.5, 1.0], ["0.1", "0.2", "0.5", "1"])
    ax["d"].minorticks_off()
    ax["d"].legend(loc="center", title="combination rule", fontsize=7, title_fontsize=7)

    steps = np.arange(nb.frame.trace.shape[1])
    for tr in nb.frame.trace:
        ax["e"].plot(steps + 1, tr, color="C0", lw=0.6, alpha=0.6)
    ax["e"].axhline(nb.frame_bound, color="k", lw=1.2, label=r"frame bound $8/9$")
    ax["e"].axhline(haar_expected_hdi(3, 1), color="grey", ls=":", lw=1, label=r"Haar mean $1-d_k/d$")
    ax["e"].set(
        xscale="log",
        xlabel="ascent step + 1",
        ylabel=r"HDI$_{\mathrm{PA}}$",
        ylim=(0.2, 0.95),
        xlim=(1, steps[-1] + 1),
        title=rf"(e) 4 lines in $\mathbb{{R}}^3$, {nb.sizes['frame_starts']} starts",
    )
    ax["e"].legend(loc="lower right", fontsize=7)
    return fig


def close(nb, macros_path, results_path):
    """Decide every record of the chapter from the notebook's numbers (the rules above; premises from
    :func:`reading_premises`, the descent's convergence from :func:`optimum_search`), write the macros
    (to ``macros_path``) and the raw results (to ``results_path``); returns the
    :class:`mhanw.infra.verdicts.Ledger`.  Macros have the prefix ``DecorOpt``; the results hold the
    fidelity, seed, sizes, the records and every experiment's numbers.  ``nb``: the executed notebook's
    variables (a mapping: the parameters, ``params``, ``model`` and ``sizes`` of :func:`setup`, and the
    names the chapter's cells define)."""
    from ..diversity import hdi_upper_bound
    from ..infra.notebook import Namespace
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs
    from ..infra.verdicts import Ledger
    from . import ch04_head_diversity_index as ch04

    nb = Namespace(nb)
    macros = Macros("DecorOpt")
    results = {"fidelity": nb.fidelity, "seed": nb.seed, "sizes": nb.sizes}
    iso, an = nb.rand[nb.ISO], nb.rand[nb.ANISO]
    iso_min_z = float(
        iso["z"][nb.others].min()
    )  # IMSE(c) - IMSE(orthogonal) in paired s.e.: below -3 some c beats orthogonal
    d_os, s_os = nb.blind_diff["orthogonal - shared, average"]
    d_oi, s_oi = nb.blind_diff["orthogonal - identical, average"]
    d_si, s_si = nb.blind_diff["shared - identical, average"]
    d_sum, s_sum = nb.blind_diff["orthogonal - shared, sum"]
    frame_gap = float(np.abs(nb.frame.hdi - nb.frame_bound).max())

    ledger = Ledger("05_decorrelation_optimality")
    add = ledger.add
    rand_heads = [
        HeadConfig(W, bandwidth=nb.random_bandwidth, **ch04.rule_options(nb.random_rule)) for W in nb.cfg.projections
    ]
    rec_iso = add(
        random_records(
            100 * iso["rel"][iso["best"]],
            100 * iso["rel_se"][iso["best"]],
            regression_label(nb.ISO),
            *reading_premises(nb.model[nb.ISO], rand_heads),
            iso["rho"],
            iso["n_better_than_orth"],
            "thm-5.1/random-isotropic",
        )
    )
    rec_aniso = add(
        random_records(
            100 * an["rel"][an["best"]],
            100 * an["rel_se"][an["best"]],
            regression_label(nb.ANISO),
            *reading_premises(nb.model[nb.ANISO], rand_heads),
            an["rho"],
            an["n_better_than_orth"],
            "thm-5.1/random-anisotropic",
        )
    )
    rec_blind = add(blind_verdict(d_os, s_os))
    rec_opt = {
        m: add(
            optimum_verdict(
                m.replace("_", "-") if m in ch04.REGRESSION_LABELS else f"m{k + 1}",
                regression_label(m),
                100 * v["rel"],
                100 * v["rel_se"],
                v["free"].hdi,
                *reading_premises(nb.model[m], [v["free"].projections, v["orth"]]),
                v["search"],
            )
        )
        for k, (m, v) in enumerate(nb.optimum.items())
    }
    rec_frame = add(
        frame_verdict(frame_gap, float(nb.frame.trace.max() - nb.frame_bound), float(nb.frame.tightness.max()))
    )
    rec_planes = add(frame_general_verdict(nb.planes.hdi.max(), hdi_upper_bound(3, 2, 2)))
    rec_overall = add(overall_verdict([rec_aniso, rec_blind, *rec_opt.values()]))
    results["claims"] = ledger.to_list()

    macros.integer("NConfigs", len(nb.cfg.hdi))

    macros.integer("NOthers", int(nb.others.sum()))

    macros.integer("RandomRep", nb.sizes["random_rep"])

    macros.integer("BlindRep", nb.sizes["blind_rep"])
    macros.number("IsoRho", iso["rho"], 2)
    macros.number("AnisoRho", an["rho"], 2)
    macros.mean_se("IsoClosestRel", 100 * iso["rel"][iso["best"]], 100 * iso["rel_se"][iso["best"]])
    macros.number("IsoClosestHDI", nb.cfg.hdi[iso["best"]], 2)
    macros.number("IsoMinZ", iso_min_z, 2)
    n_better = iso["n_better_than_orth"]  # the paper's sentence on the isotropic m, said from the count
    macros.text(
        "IsoBetter",
        "no random configuration is"
        if n_better == 0
        else "one random configuration is"
        if n_better == 1
        else f"{n_better} random configurations are",
    )
    macros.integer("OptPerturbed", nb.sizes["opt_perturbed"])
    macros.integer("IsoNWorse", iso["n_worse_than_orth"])
    macros.mean_se("AnisoBestRel", 100 * an["rel"][an["best"]], 100 * an["rel_se"][an["best"]])
    macros.number("AnisoBestHDI", nb.cfg.hdi[an["best"]], 2)
    macros.integer("AnisoNBetter", an["n_better_than_orth"])
    macros.integer("AnisoOrthRank", an["orth_rank"])
    for k, name in (("identical", "Identical"), ("shared", "Shared"), ("orthogonal", "Orthogonal")):
        for rule, r in (("average", "Avg"), ("sum", "Sum")):
            i = nb.idx[f"{k}, {rule}"]
            macros.mean_se(f"Blind{r}{name}", nb.blind.mean[i], nb.blind.se[i])
    macros.mean_se("BlindOrthMinusShared", d_os, s_os)
    macros.number("BlindOrthMinusSharedZ", d_os / s_os, 3)
    macros.mean_se("BlindSharedMinusIdentical", d_si, s_si)
    macros.number("BlindSharedMinusIdenticalZ", d_si / s_si, 2)
    macros.mean_se("BlindSumOrthMinusShared", d_sum, s_sum)
    macros.number("BlindSumOrthMinusSharedZ", d_sum / s_sum, 3)
    macros.integer("FrameStarts", nb.sizes["frame_starts"])
    macros.integer("FrameSteps", nb.sizes["frame_steps"])
    macros.number("FrameBound", nb.frame_bound, 6)
    macros.number("FrameMin", nb.frame.hdi.min(), 6)
    macros.number("FrameMax", nb.frame.hdi.max(), 6)
    macros.number("FrameGap", max(frame_gap, 1e-16), 2)
    macros.number("FrameTight", max(nb.frame.tightness.max(), 1e-16), 2)
    macros.number("FrameOtherGap", max(max(nb.other_gap.values()), 1e-16), 2)
    macros.number("FramePlanesBest", nb.planes.hdi.max(), 4)
    macros.number("FramePlanesBound", hdi_upper_bound(3, 2, 2), 4)
    # directions said in the text, generated from the paired comparisons (never typed)
    macros.text(
        "BlindSharedVsIdentical", comparison_word(d_si, s_si, "beat", "lose to", "do not differ significantly from")
    )
    macros.text("BlindOrthVsShared", comparison_word(d_os, s_os, "lower", "higher", "not significantly different"))
    macros.text("BlindOrthVsIdentical", comparison_word(d_oi, s_oi, "lower", "higher", "not significantly different"))
    macros.mean_se("BlindOrthMinusIdentical", d_oi, s_oi)
    macros.number("BlindOrthMinusIdenticalZ", d_oi / s_oi, 3)
    macros.text("BlindSumOrthVsShared", comparison_word(d_sum, s_sum, "lower", "higher", "not significantly different"))
    for name, size in (
        ("OptRep", "opt_rep"),
        ("OptTest", "opt_test"),
        ("OptStarts", "opt_starts"),
        ("OptSteps", "opt_steps"),
        ("EvalRep", "eval_rep"),
        ("EvalTest", "eval_test"),
    ):
        macros.integer(name, nb.sizes[size])
    for k, (m, v) in enumerate(nb.optimum.items()):
        name = "Opt" + "ABCD"[k]
        macros.mean_se(f"{name}Rel", 100 * v["rel"], 100 * v["rel_se"])
        macros.number(f"{name}Z", v["diff"].z, 2)
        macros.number(f"{name}HDI", v["free"].hdi, 2)
        macros.text(
            f"{name}Direction",
            comparison_word(*v["diff"], "lower than", "higher than", "not significantly different from"),
        )
        macros.text(f"{name}Angles", ", ".join(f"{a:.0f}" for a in np.degrees(v["free"].angles).ravel()))
        macros.text(f"{name}Label", regression_label(m))
        macros.text(f"Verdict{name}", rec_opt[m].verdict)
        if rec_opt[m].detectable is not None:
            macros.number(f"Detectable{name}", rec_opt[m].detectable, 2)
    for rec, name in [
        (rec_iso, "Iso"),
        (rec_aniso, "Aniso"),
        (rec_blind, "Blind"),
        (rec_frame, "Frame"),
        (rec_planes, "FramePlanes"),
        (rec_overall, "Overall"),
    ]:
        macros.text(f"Verdict{name}", rec.verdict)
    if rec_iso.detectable is not None:
        macros.number("DetectableIso", rec_iso.detectable, 2)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros.write(macros_path, argument="macros_path")

    results.update(
        json_safe(
            dict(
                random=dict(hdi=nb.cfg.hdi, t=nb.cfg.t, orthogonal=nb.o, **nb.rand),
                blind=dict(
                    hdi=nb.blind_hdi,
                    labels=[c.label for c in nb.configs],
                    imse=nb.blind.mean,
                    se=nb.blind.se,
                    differences={k: dict(diff=d, se=s) for k, (d, s) in nb.blind_diff.items()},
                ),
                frame=dict(
                    bound=nb.frame_bound,
                    hdi=nb.frame.hdi,
                    tightness=nb.frame.tightness,
                    other={
                        str(s): dict(bound=hdi_upper_bound(*s), best=r.hdi.max())
                        for s, r in (*nb.other.items(), ((3, 2, 2), nb.planes))
                    },
                ),
                optimum={
                    m: dict(
                        projections=v["free"].projections,
                        hdi=v["free"].hdi,
                        angles=v["free"].angles,
                        losses=v["free"].losses,
                        trace=v["free"].trace,
                        orthogonal=v["orth"],
                        imse=v["imse"],
                        se=v["se"],
                        rel=v["rel"],
                        rel_se=v["rel_se"],
                    )
                    for m, v in nb.optimum.items()
                },
                parameters={
                    k: nb.params[k] for k in nb.params if k not in ("figures_dir", "macros_path", "results_path")
                },
                data_models={m: v.spec() for m, v in nb.model.items()},
            )
        )
    )
    save_results(results_path, results, argument="results_path")
    return ledger


#: The caption of :func:`optimality_figure`: what each panel shows and what to compare (the directions
#: are the records' findings, printed under the figure and in "What we found").
CAPTION = (
    r"Top row: (a) the IMSE minimised over free head subspaces, over the IMSE of the best orthogonal heads, on "
    r"fresh replicates (log scale; a point below the dashed line is a configuration that beats orthogonal "
    r"heads), with the $\mathrm{HDI}_{\mathrm{PA}}$ of the optimum beside it; (b) the descent of the best start on "
    r"its optimisation batch; (c) random configurations with the anisotropic $m$, IMSE change against the "
    r"orthogonal blocks (star). Bottom row: (d) the signal along $e_1$ only, identical, shared and orthogonal "
    r"heads under averaging and under the additive rule; (e) the ascent of $\mathrm{HDI}_{\mathrm{PA}}$ for four "
    r"lines in $\mathbb{R}^3$ from every start, against the frame bound $8/9$."
)


@notebook_helper
def takeaway(record) -> None:
    """One sentence under a figure from ``record`` (:func:`mhanw.chapters.ch04_head_diversity_index.takeaway`)."""
    from .ch04_head_diversity_index import takeaway as _takeaway

    _takeaway(record)


# --------------------------------------------------------------------------- parameters

from ..infra import params as _P  # noqa: E402  (the declaration below is the module's last part)

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).  The
#: blind-head configurations fix their shape (d = 4, d_k = 2, H = 2); the frame bound needs no data.
PARAMETERS = {
    **_P.STANDARD,
    "n_jobs": _P.workers(),
    "isotropic_regression": _P.regression(dimension="random_d"),
    "anisotropic_regression": _P.regression(dimension="random_d"),
    "blind_regression": _P.regression(dimension=4),
    "optimum_regressions": _P.sequence(_P.regression(dimension="optimum_d")),
    **SHARED_PARAMETERS,
    "optimum_d": _P.positive_int(2, 256, why="64 times the default 4: the optimiser searches d x d_k heads"),
    "optimum_d_k": _P.positive_int(1, 256, at_most="optimum_d", why="the largest optimum_d"),
    "optimum_H": _P.positive_int(2, 256, why="the largest optimum_d"),
}
CONSTRAINTS = (
    _P.product_at_most(("random_H", "random_d_k"), "random_d"),
    _P.product_at_most(("optimum_H", "optimum_d_k"), "optimum_d"),
)

#: The Monte Carlo sizes at each fidelity (:func:`setup`): random configurations and their replicates,
#: replicates of the blind heads, starts and steps of the frame ascent (and starts for the other shapes),
#: the IMSE optimum's batch (replicates, test points), starts, perturbed candidates and descent steps, and
#: the fresh replicates and test points that evaluate it.
SIZES = dict(
    quick=dict(
        n_configs=12,
        random_rep=150,
        blind_rep=200,
        frame_starts=20,
        frame_steps=150,
        other_starts=3,
        opt_rep=6,
        opt_test=60,
        opt_starts=1,
        opt_perturbed=2,
        opt_steps=10,
        eval_rep=100,
        eval_test=200,
    ),
    paper=dict(
        n_configs=24,
        random_rep=400,
        blind_rep=400,
        frame_starts=20,
        frame_steps=300,
        other_starts=10,
        opt_rep=16,
        opt_test=100,
        opt_starts=2,
        opt_perturbed=2,
        opt_steps=30,
        eval_rep=300,
        eval_test=200,
    ),
)

#: The experiments fed by the children of ``SeedSequence(seed)``, in spawn order (:func:`setup`).
STREAMS = ("random configurations", "blind heads", "frame ascent", "IMSE optimum")


def setup(nb) -> tuple:
    """``(params, model, sizes, streams)`` of the notebook whose variables are ``nb`` (``globals()``):
    the parameters checked (:func:`mhanw.infra.notebook.start`), ``{name: DataModel}`` for the chapter's
    isotropic, anisotropic, blind and optimum regression functions, :data:`SIZES` at the run's fidelity
    and one child of ``SeedSequence(seed)`` per experiment of :data:`STREAMS`."""
    from ..infra.notebook import start

    params, sizes, streams = start(nb, PARAMETERS, CONSTRAINTS, SIZES, len(STREAMS))
    names = (
        params["isotropic_regression"],
        params["anisotropic_regression"],
        params["blind_regression"],
        *params["optimum_regressions"],
    )
    model = {m: _data.data_model(m, params["inputs"], params["noise"], params["sigma"]) for m in names}
    return params, model, sizes, streams
