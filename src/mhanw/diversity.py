"""Principal angles, cross-Gram matrices and the Head Diversity Index (Sec. 4; Lemma 4.1, HDI, Thm 4.2, 5.1).

Geometry of a configuration ``W`` of shape ``(H, d, d_k)`` (``book/claims.md``, 'The Head Diversity Index'):

- ``principal_angles(A, B)``: ``cos theta_i`` are the singular values of
  ``Q_A^T Q_B`` (``Q`` orthonormal bases);
- ``cross_gram(A, B) = A^T B / d_k``, as printed in the paper;
- ``head_diversity_index(W, normalization)`` with three normalizations:

  - ``"paper"``, the formula as printed,
    ``1 - 2/(H(H-1)) sum_{j<j'} ||W_j^T W_j' / d_k||_F^2``.  For orthonormal W
    it lies in ``[1 - 1/d_k, 1]`` (identical heads: ``1 - 1/d_k``, not 0);
    identical heads scaled by ``c`` give ``1 - c^4/d_k``.  Invariant to
    permuting heads and to ``W_j -> W_j O_j`` (``O_j`` orthogonal); not to
    scale, not to ``W -> W A``.
  - ``"principal_angles"`` (HDI_PA, recommended),
    ``1 - mean_{j<j'} (1/d_k) sum_i cos^2 theta_i^{(jj')} = 1 - mean tr(P_j P_j')/d_k``
    in ``[0, 1]``: 0 iff all ranges coincide, 1 iff they are mutually
    orthogonal.  Invariant to permutations, to ``W_j -> W_j A_j`` for every
    invertible ``A_j`` (it sees only subspaces) and to rotations
    ``W_j -> O W_j``.  For orthonormal W it equals
    ``d_k HDI_paper - (d_k - 1)``.
  - ``"rv"``, one minus the mean RV coefficient,
    ``1 - mean_{j<j'} ||W_j^T W_j'||_F^2 / (||W_j^T W_j||_F ||W_j'^T W_j'||_F)``
    in ``[0, 1]``.  Invariant to permutations, rotations and
    ``W_j -> c_j W_j O_j``; equals HDI_PA when every ``W_j`` has equal
    singular values, otherwise weights directions by them.

Analytic facts: Haar heads have
``E[HDI_PA] = 1 - d_k/d`` (:func:`haar_expected_hdi`); if ``H d_k > d``,
``HDI_PA <= 1 - max(0, (H d_k/d - 1)/(H - 1))`` (:func:`hdi_upper_bound`).

The covariance theory of Lemma 4.1 built on this geometry is :mod:`mhanw.covariance`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import subspace_angles

from .infra.validate import as_float_array, one_of, positive_int

__all__ = [
    "NORMALIZATIONS",
    "cross_gram",
    "haar_expected_hdi",
    "hdi_upper_bound",
    "head_diversity_index",
    "orthonormal_bases",
    "principal_angles",
]

NORMALIZATIONS = ("paper", "principal_angles", "rv")

#: Relative singular-value threshold below which a projection counts as rank deficient.
RANK_TOL = 1e-10


def _full_rank(A: np.ndarray, what: str) -> None:
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0.0 or s[-1] <= RANK_TOL * s[0]:
        raise ValueError(f"{what}: expected full column rank {A.shape[1]}, got a rank-deficient matrix")


def _matrix(A, name):
    A = as_float_array(A, name, ndim=2)
    if A.shape[1] > A.shape[0]:
        raise ValueError(f"{name}: expected shape (d, k) with k <= d, got {A.shape}")
    return A


def principal_angles(A, B) -> np.ndarray:
    """Principal angles between ``range(A)`` and ``range(B)``, radians, ascending.

    ``A`` ``(d, k1)``, ``B`` ``(d, k2)``, both of full column rank; returns
    ``min(k1, k2)`` angles in ``[0, pi/2]`` (``scipy.linalg.subspace_angles``,
    accurate for small angles).  Invariant to ``A -> A M``, ``B -> B N`` for
    invertible ``M``, ``N``.  Serves Lemma 4.1 and the HDI.
    """
    A = _matrix(A, "A")
    B = _matrix(B, "B")
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"B: expected {A.shape[0]} rows to match A {A.shape}, got {B.shape}")
    _full_rank(A, "A")
    _full_rank(B, "B")
    return np.sort(subspace_angles(A, B))


def cross_gram(A, B) -> np.ndarray:
    """The cross-Gram matrix as printed, ``G = A^T B / d_k``, shape ``(d_k, d_k)`` (Lemma 4.1, HDI).

    ``A``, ``B``: ``(d, d_k)``.  For orthonormal columns ``||G||_F^2 =
    sum_i cos^2 theta_i / d_k^2``.
    """
    A = _matrix(A, "A")
    B = _matrix(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"B: expected the shape of A {A.shape}, got {B.shape}")
    return A.T @ B / A.shape[1]


def _check_W(W, name: str = "W") -> np.ndarray:
    """``W`` as a float array of shape ``(H, d, d_k)`` with ``H >= 2`` and ``d_k <= d``."""
    W = as_float_array(W, name, ndim=3)
    H, d, d_k = W.shape
    if H < 2:
        raise ValueError(f"{name}: expected at least 2 heads (shape (H, d, d_k), H >= 2), got {W.shape}")
    if d_k > d:
        raise ValueError(f"{name}: expected shape (H, d, d_k) with d_k <= d, got {W.shape}")
    return W


def orthonormal_bases(W) -> np.ndarray:
    """Orthonormal bases ``Q_j`` of ``range(W_j)``, shape ``(H, d, d_k)`` (left singular vectors).

    Raises ``ValueError`` naming the head if some ``W_j`` is rank deficient.
    """
    W = as_float_array(W, "W", ndim=3)
    if W.shape[2] > W.shape[1]:
        raise ValueError(f"W: expected shape (H, d, d_k) with d_k <= d, got {W.shape}")
    U, s, _ = np.linalg.svd(W, full_matrices=False)
    for j in range(W.shape[0]):
        if s[j, 0] == 0.0 or s[j, -1] <= RANK_TOL * s[j, 0]:
            raise ValueError(f"W: head {j} is rank deficient (rank < d_k = {W.shape[2]})")
    return U


def _pair_sq_norms(W: np.ndarray) -> np.ndarray:
    """``S[j, j'] = ||W_j^T W_j'||_F^2``, shape ``(H, H)``."""
    H, d, k = W.shape
    A = W.transpose(0, 2, 1).reshape(H * k, d)
    G = (A @ A.T).reshape(H, k, H, k)
    return (G * G).sum(axis=(1, 3))


def _mean_upper(S: np.ndarray) -> float:
    iu = np.triu_indices(S.shape[0], k=1)
    return float(S[iu].mean())


def head_diversity_index(W, normalization: str = "principal_angles") -> float:
    """Head Diversity Index of a configuration ``W`` of shape ``(H, d, d_k)``, ``H >= 2`` (HDI, Thm 4.2, 5.1).

    ``normalization``:

    - ``"paper"``: ``1 - 2/(H(H-1)) sum_{j<j'} ||G_jj'||_F^2`` with
      ``G_jj' = W_j^T W_j' / d_k`` (as printed).  For orthonormal heads it lies
      in ``[1 - 1/d_k, 1]`` (identical heads give ``1 - 1/d_k``, not 0); it
      scales: identical heads times ``c`` give ``1 - c^4/d_k``.  Invariant to
      permuting heads and to ``W_j -> W_j O_j`` with ``O_j`` orthogonal.
    - ``"principal_angles"`` (recommended; HDI_PA):
      ``1 - mean_{j<j'} (1/d_k) sum_i cos^2 theta_i^{(jj')}``, in ``[0, 1]``,
      0 iff every head spans the same subspace, 1 iff the subspaces are
      mutually orthogonal.  Depends only on the subspaces: invariant to
      ``W_j -> W_j A_j`` for invertible ``A_j`` (in particular ``W -> W A``),
      to permuting heads and to rotations ``W_j -> O W_j``.  For orthonormal
      ``W``: ``d_k * HDI_paper - (d_k - 1)``.  Rank-deficient heads raise
      ``ValueError``.
    - ``"rv"``: ``1 - mean_{j<j'} ||W_j^T W_j'||_F^2 / (||W_j^T W_j||_F
      ||W_j'^T W_j'||_F)``, one minus the mean RV coefficient, in ``[0, 1]``.
      Invariant to ``W_j -> c_j W_j O_j`` (scale, orthogonal ``O_j``), to
      permutations and rotations; equals ``"principal_angles"`` when every
      ``W_j`` has equal singular values, otherwise weights directions by them.
    """
    one_of(normalization, "normalization", NORMALIZATIONS)
    W = _check_W(W)
    d_k = W.shape[2]
    if normalization == "paper":
        return 1.0 - _mean_upper(_pair_sq_norms(W)) / d_k**2
    if normalization == "principal_angles":
        return 1.0 - _mean_upper(_pair_sq_norms(orthonormal_bases(W))) / d_k
    S = _pair_sq_norms(W)
    norms = np.sqrt(np.diag(S))
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise ValueError(f"W: head {int(zero[0])} is zero; the RV coefficient is undefined")
    return 1.0 - _mean_upper(S / np.outer(norms, norms))


def haar_expected_hdi(d: int, d_k: int) -> float:
    """``E[HDI_PA] = 1 - d_k/d`` for independent Haar heads (uniform random subspaces)."""
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    return 1.0 - d_k / d


def hdi_upper_bound(d: int, d_k: int, n_heads: int) -> float:
    """Largest HDI_PA of ``H`` subspaces of dimension ``d_k`` in ``R^d`` (frame bound; Thm 5.1).

    ``1 - max(0, (H d_k/d - 1)/(H - 1))``: 1 when ``H d_k <= d`` (orthogonal
    blocks).  When ``H d_k > d`` it is an upper bound, attained exactly when an
    equi-isoclinic tight fusion frame of that shape exists (four lines in R^3:
    8/9, the cube's diagonals); it is not always attained (two planes in R^3
    reach only 1/2, against a bound of 2/3).
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    H = positive_int(n_heads, "n_heads", minimum=2)
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    return 1.0 - max(0.0, (H * d_k / d - 1.0) / (H - 1))
