"""Principal angles, cross-Gram matrices, the Head Diversity Index and its maximisation (Sec. 4; Lemma 4.1, HDI, Thm 4.2, 5.1).

Geometry of a configuration ``W`` of shape ``(H, d, d_k)`` (``book/claims.md``, 'The Head Diversity Index'):

- ``principal_angles(A, B)``: ``cos theta_i`` are the singular values of
  ``Q_A^T Q_B`` (``Q`` orthonormal bases);
- ``cross_gram(A, B) = A^T B / d_k``, as printed in the paper;
- :func:`orthonormal_bases`: the one orthonormal-basis helper of the library,
  QR with ``diag(R) > 0`` and a scale-invariant rank test;
- ``head_diversity_index(W, normalization)`` with three normalizations
  (:func:`head_diversity_indices` gives all three at once,
  :func:`hdi_from_gram` the same from the block Gram matrix alone):

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
    ``d_k HDI_printed - (d_k - 1)``.
  - ``"rv"``, one minus the mean RV coefficient,
    ``1 - mean_{j<j'} ||W_j^T W_j'||_F^2 / (||W_j^T W_j||_F ||W_j'^T W_j'||_F)``
    in ``[0, 1]``.  Invariant to permutations, rotations and
    ``W_j -> c_j W_j O_j``; equals HDI_PA when every ``W_j`` has equal
    singular values, otherwise weights directions by them.

  Every normalization rejects a zero head (``ValueError`` naming ``W``).
  Heads are rescaled by powers of two before any product is squared, so
  HDI_PA and HDI_RV are finite and exact for any representable scale.

Pairwise forms: :func:`pair_overlaps` (``tr(P_j P_j')/d_k``),
:func:`cos2_spectrum` (mean squared principal cosines, largest first).

Analytic facts: Haar heads have ``E[HDI_PA] = 1 - d_k/d``
(:func:`haar_expected_hdi`); if ``H d_k > d``,
``HDI_PA <= 1 - max(0, (H d_k/d - 1)/(H - 1))`` (:func:`hdi_upper_bound`, the
frame bound of Thm 5.1), attained iff the subspaces form a tight fusion
frame (:func:`frame_tightness`); :func:`maximize_hdi` reaches it by projected
gradient ascent when it exists.

The covariance theory of Lemma 4.1 built on this geometry is :mod:`mhanw.covariance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import subspace_angles

from .constants import MAX_REPLICATES, RANK_RTOL, check_entries
from .infra.validate import as_float_array, brief, generator, one_of, positive_int, positive_scalar

__all__ = [
    "NORMALIZATIONS",
    "FrameAscent",
    "block_gram",
    "check_heads",
    "cos2_spectrum",
    "cross_gram",
    "frame_tightness",
    "gram_factors",
    "haar_expected_hdi",
    "hdi_from_gram",
    "hdi_upper_bound",
    "head_diversity_index",
    "head_diversity_indices",
    "maximize_hdi",
    "orthonormal_bases",
    "pair_cos2",
    "pair_overlaps",
    "principal_angles",
    "MAX_STEP",
    "MAX_ASCENT_STEPS",
    "MAX_ASCENT_WORK",
]

#: The normalizations of the HDI (:func:`head_diversity_index`): as printed, by principal angles
#: (HDI_PA) and by RV coefficients (HDI_RV).
NORMALIZATIONS = ("paper", "principal_angles", "rv")


# --------------------------------------------------------------------------- rank and bases


def _rank_deficient(A: np.ndarray) -> np.ndarray:
    """Per matrix of a stack ``(..., m, k)``: True when ``s_min <= RANK_RTOL * s_max`` (or the matrix is 0).

    Each matrix is divided by its largest entry first, so the test is
    invariant to scale and free of overflow.
    """
    top = np.abs(A).max(axis=(-2, -1), keepdims=True)
    s = np.linalg.svd(A / np.where(top > 0, top, 1.0), compute_uv=False)
    return (top[..., 0, 0] == 0.0) | (s[..., -1] <= RANK_RTOL * s[..., 0])


def _full_rank(A: np.ndarray, what: str) -> None:
    if A.size == 0 or _rank_deficient(A):
        raise ValueError(f"{what}: expected full column rank {A.shape[1]}, got a rank-deficient matrix")


def _matrix(A, name):
    A = as_float_array(A, name, ndim=2)
    if A.shape[1] > A.shape[0]:
        raise ValueError(f"{name}: expected shape (d, k) with k <= d, got {A.shape}")
    return A


def _check_factors(R: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` naming the first head whose triangular factor ``R_j`` ``(k, k)`` is rank deficient."""
    bad = np.flatnonzero(_rank_deficient(R))
    if bad.size:
        raise ValueError(f"{name}: head {int(bad[0])} is rank deficient (rank < d_k = {R.shape[-1]})")


def orthonormal_bases(W, name: str = "W") -> np.ndarray:
    """Orthonormal bases of the ranges: QR with ``diag(R) > 0``, the one basis helper of the library.

    ``W_j = Q_j R_j`` with ``R_j`` upper triangular with a positive diagonal (unique, so an orthonormal
    ``W_j`` is returned unchanged to rounding).  A matrix with entries near the ends of the double range
    (``1e308``, ``1e-300``) is first scaled by a power of two (exact, and its ``Q`` is the same), so that
    the factorisation neither overflows nor underflows.

    Parameters
    ----------
    W : array (d, k) or (H, d, k)
        One matrix or a stack, ``k <= d``.
    name : str, default "W"
        The caller's argument that holds ``W``, named by an error.

    Returns
    -------
    numpy.ndarray
        ``Q``, of the shape of ``W``.

    Raises
    ------
    ValueError
        Naming ``name`` (and the head) for a matrix whose singular values satisfy
        ``s_min <= RANK_RTOL s_max`` (:data:`mhanw.constants.RANK_RTOL`, scale invariant), ``k > d``, or
        an array that is not finite.
    """
    A = _safe_scale(as_float_array(W, name, ndim=(2, 3)))
    d, k = A.shape[-2:]
    if k > d:
        raise ValueError(f"{name}: expected shape (..., d, k) with k <= d, got {A.shape}")
    Q, R = np.linalg.qr(A)
    if A.ndim == 2:
        if _rank_deficient(R):
            raise ValueError(f"{name}: expected linearly independent columns, got rank < {k}")
    else:
        _check_factors(R, name)
    return Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[..., None, :]


#: Largest entries (in absolute value) a matrix may have, from ``2**-SAFE_EXPONENT`` to ``2**SAFE_EXPONENT``,
#: before :func:`orthonormal_bases` scales it: sums of squares of such entries stay far inside the range
#: of a double, so matrices of ordinary size are factorised unchanged.
SAFE_EXPONENT = 256


def _safe_scale(A: np.ndarray) -> np.ndarray:
    """The matrices of a stack scaled by powers of two into a safe range.

    Each matrix of the stack ``A`` ``(..., m, k)`` whose largest entry lies outside
    ``[2**-SAFE_EXPONENT, 2**SAFE_EXPONENT]`` divided by the power of two nearest it (exact: ``Q`` and
    the rank are unchanged); others, and zero matrices, as they are.
    """
    top = np.abs(A).max(axis=(-2, -1), keepdims=True) if A.size else np.zeros(A.shape[:-2] + (1, 1))
    _, exponent = np.frexp(top)
    outside = (top > 0) & ((exponent > SAFE_EXPONENT) | (exponent < -SAFE_EXPONENT))
    if not np.any(outside):
        return A
    return np.ldexp(A, np.where(outside, -exponent, 0))


def principal_angles(A, B) -> np.ndarray:
    """Principal angles between ``range(A)`` and ``range(B)``, in radians, ascending (Lemma 4.1, the HDI).

    Computed by ``scipy.linalg.subspace_angles`` (accurate for small angles); invariant to ``A -> A M``,
    ``B -> B N`` for invertible ``M``, ``N``.  Matrices with entries near the ends of the double range
    are scaled by a power of two first (:func:`orthonormal_bases`; the angles are the same).

    Parameters
    ----------
    A : array (d, k1)
        Of full column rank.
    B : array (d, k2)
        Of full column rank, the same ``d``.

    Returns
    -------
    numpy.ndarray
        ``(min(k1, k2),)`` angles in ``[0, pi/2]``.

    Raises
    ------
    ValueError
        Naming ``A`` or ``B`` for a matrix of deficient rank, of another ``d``, or not finite.
    """
    A = _safe_scale(_matrix(A, "A"))
    B = _safe_scale(_matrix(B, "B"))
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"B: expected {A.shape[0]} rows to match A {A.shape}, got {B.shape}")
    _full_rank(A, "A")
    _full_rank(B, "B")
    return np.sort(subspace_angles(A, B))


def cross_gram(A, B) -> np.ndarray:
    """The cross-Gram matrix as printed, ``G = A^T B / d_k`` (Lemma 4.1, the HDI).

    For orthonormal columns ``||G||_F^2 = sum_i cos^2 theta_i / d_k^2``.

    Parameters
    ----------
    A : array (d, d_k)
        One head.
    B : array (d, d_k)
        The other, of the same shape.

    Returns
    -------
    numpy.ndarray
        ``(d_k, d_k)``.

    Raises
    ------
    ValueError
        Naming ``B`` when its shape differs from ``A``'s, or the array that is not finite.
    """
    A = _matrix(A, "A")
    B = _matrix(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"B: expected the shape of A {A.shape}, got {B.shape}")
    return A.T @ B / A.shape[1]


def check_heads(W, name: str = "W") -> np.ndarray:
    """``W`` as a finite float array of heads, checked.

    Parameters
    ----------
    W : array_like (H, d, d_k)
        The heads: ``H >= 2`` and ``d_k <= d``.
    name : str, default "W"
        The caller's argument that holds ``W``, named by an error.

    Returns
    -------
    numpy.ndarray
        ``W`` as float64, ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming ``name`` for fewer than two heads, ``d_k > d``, or an array that is not finite or not 3-D.
    """
    W = as_float_array(W, name, ndim=3)
    H, d, d_k = W.shape
    if H < 2:
        raise ValueError(f"{name}: expected at least 2 heads (shape (H, d, d_k), H >= 2), got {W.shape}")
    if d_k > d:
        raise ValueError(f"{name}: expected shape (H, d, d_k) with d_k <= d, got {W.shape}")
    return W


# --------------------------------------------------------------------------- the HDI


def _power_of_two(top: np.ndarray, name: str) -> np.ndarray:
    """Exponents ``e_j`` with ``top_j / 2^e_j`` in ``[0.5, 1)``; a zero head raises ``ValueError``."""
    zero = np.flatnonzero(top == 0.0)
    if zero.size:
        raise ValueError(f"{name}: head {int(zero[0])} is zero; the HDI is undefined")
    return np.frexp(top)[1]


def _scaled_heads(W: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``W_j 2^-e_j`` (largest entry in ``[0.5, 1)``, exact) and the exponents ``e`` ``(H,)``."""
    e = _power_of_two(np.abs(W).max(axis=(1, 2)), name)
    return np.ldexp(W, -e[:, None, None]), e


def _sq_norms(W: np.ndarray) -> np.ndarray:
    """``S[j, j'] = ||W_j^T W_j'||_F^2`` for ``W`` ``(H, d, k)``, shape ``(H, H)``."""
    H, d, k = W.shape
    A = W.transpose(0, 2, 1).reshape(H * k, d)
    G = (A @ A.T).reshape(H, k, H, k)
    return (G * G).sum(axis=(1, 3))


def _mean_upper(S: np.ndarray) -> float:
    iu = np.triu_indices(S.shape[0], k=1)
    return float(S[iu].mean())


def _printed_hdi(S: np.ndarray, e: np.ndarray, d_k: int) -> float:
    """``1 - mean_{j<j'} S[j, j'] 2^(2(e_j + e_j')) / d_k^2``, the printed HDI of heads scaled by ``2^-e_j``.

    The printed formula is not scale free (identical heads times ``c``: ``1 - c^4/d_k``), so the
    mean is taken with its largest power of two factored out and applied last: the value is
    exact whenever it is a double, and a value beyond the largest double raises ``ValueError``
    naming ``W`` (heads scaled by 1e300 gave -inf).
    """
    iu = np.triu_indices(S.shape[0], k=1)
    powers = 2 * (e[:, None] + e[None, :])[iu]
    top = int(powers.max())
    mean = float(np.ldexp(S[iu], powers - top).mean()) / d_k**2
    with np.errstate(over="ignore"):
        value = 1.0 - np.ldexp(mean, top)
    if not np.isfinite(value):
        raise ValueError(
            f"W: the printed HDI is 1 - {mean:.6g} * 2**{top}, beyond the largest double (the printed "
            "formula grows as the fourth power of the heads' scale); the principal-angle and RV "
            "indices are scale free"
        )
    return float(value)


def _hdi_value(normalization: str, d_k: int, S=None, e=None, S_orth=None) -> float:
    """The HDI of one normalization from the pair matrices.

    The HDI from pair matrices: ``S`` ``(H, H)`` of heads scaled by ``2^-e_j`` (paper, RV) or
    ``S_orth`` of orthonormal bases (PA).  The one place where the three formulas are written.
    """
    if normalization == "paper":
        return _printed_hdi(S, e, d_k)
    if normalization == "principal_angles":
        return 1.0 - _mean_upper(S_orth) / d_k
    norms = np.sqrt(np.diag(S))
    return 1.0 - _mean_upper(S / np.outer(norms, norms))


def head_diversity_index(W, normalization: str = "principal_angles") -> float:
    """Head Diversity Index of a configuration of heads (HDI, Thm 4.2, 5.1).

    The normalizations:

    - ``"paper"``: ``1 - 2/(H(H-1)) sum_(j<j') ||G_jj'||_F^2`` with
      ``G_jj' = W_j^T W_j' / d_k`` (as printed).  For orthonormal heads it lies
      in ``[1 - 1/d_k, 1]`` (identical heads give ``1 - 1/d_k``, not 0); it
      scales: identical heads times ``c`` give ``1 - c^4/d_k``.  Invariant to permuting heads and to
      ``W_j -> W_j O_j`` with ``O_j`` orthogonal.
    - ``"principal_angles"`` (recommended, HDI_PA):
      ``1 - mean_(j<j') (1/d_k) sum_i cos^2 theta_i^(jj')``, in ``[0, 1]``,
      0 iff every head spans the same subspace, 1 iff the subspaces are
      mutually orthogonal.  Depends only on the subspaces: invariant to
      ``W_j -> W_j A_j`` for invertible ``A_j`` (in particular ``W -> W A``),
      to permuting heads and to rotations ``W_j -> O W_j``.  For orthonormal
      ``W``: ``d_k * HDI_printed - (d_k - 1)``.
    - ``"rv"``: ``1 - mean_(j<j') ||W_j^T W_j'||_F^2 / (||W_j^T W_j||_F ||W_j'^T W_j'||_F)``, one minus
      the mean RV coefficient, in ``[0, 1]``.  Invariant to ``W_j -> c_j W_j O_j`` (scale, orthogonal
      ``O_j``), to permutations and rotations; equals ``"principal_angles"`` when every ``W_j`` has
      equal singular values, otherwise weights directions by them.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, ``H >= 2``.
    normalization : str, default "principal_angles"
        One of :data:`NORMALIZATIONS`.

    Returns
    -------
    float
        The index.

    Raises
    ------
    ValueError
        Naming ``W`` for a zero head (every normalization), a rank-deficient head
        (``"principal_angles"``), a printed index beyond a double, or an array that is not finite or of
        the wrong shape; naming ``normalization`` for an unknown one.
    """
    one_of(normalization, "normalization", NORMALIZATIONS)
    W = check_heads(W)
    d_k = W.shape[2]
    if normalization == "principal_angles":
        _power_of_two(np.abs(W).max(axis=(1, 2)), "W")
        return _hdi_value(normalization, d_k, S_orth=_sq_norms(orthonormal_bases(W)))
    Ws, e = _scaled_heads(W, "W")
    return _hdi_value(normalization, d_k, S=_sq_norms(Ws), e=e)


def head_diversity_indices(W) -> np.ndarray:
    """``[HDI_printed, HDI_PA, HDI_RV]`` of ``W`` in one pass (:data:`NORMALIZATIONS` order).

    The values of :func:`head_diversity_index` under each normalization.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, ``H >= 2``, every head of full rank.

    Returns
    -------
    numpy.ndarray
        ``(3,)``.

    Raises
    ------
    ValueError
        Naming ``W`` (and the head) for a zero or rank-deficient head, fewer than two heads, or an array
        that is not finite or of the wrong shape.
    """
    W = check_heads(W)
    Ws, e = _scaled_heads(W, "W")
    S, S_orth = _sq_norms(Ws), _sq_norms(orthonormal_bases(W))
    return np.array([_hdi_value(n, W.shape[2], S=S, e=e, S_orth=S_orth) for n in NORMALIZATIONS])


def block_gram(W) -> np.ndarray:
    """The block Gram matrix ``B[j, j'] = W_j^T W_j'``.

    Every HDI depends on ``W`` only through ``B`` (:func:`hdi_from_gram`).

    Parameters
    ----------
    W : array (H, d, k)
        The heads.

    Returns
    -------
    numpy.ndarray
        ``(H, H, k, k)``.

    Raises
    ------
    ValueError
        Naming ``W`` when a product is beyond a double, or for an array that is not finite or not 3-D.
    """
    B = _cross_blocks(check_heads(W))
    if not np.all(np.isfinite(B)):
        raise ValueError(
            "W: an entry of W_j^T W_j' is beyond the largest double; rescale the heads (every HDI "
            "but the printed one is scale free)"
        )
    return B


def _gram(B, name: str) -> np.ndarray:
    B = as_float_array(B, name, ndim=4)
    H, H2, k, k2 = B.shape
    if H != H2 or k != k2 or H < 2:
        raise ValueError(f"{name}: expected a block Gram matrix of shape (H, H, k, k) with H >= 2, got {B.shape}")
    return B


def _scaled_gram(B: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``B[j, j'] 2^-(e_j + e_j')`` (exact) with ``2^(2 e_j)`` about the largest entry of ``B[j, j]``."""
    H = B.shape[0]
    diag = np.abs(B[np.arange(H), np.arange(H)]).max(axis=(1, 2))
    e = (_power_of_two(diag, name) + 1) // 2
    return np.ldexp(B, -(e[:, None, None, None] + e[None, :, None, None])), e


def gram_factors(B, name: str = "W") -> np.ndarray:
    """Lower Cholesky factors ``L_j`` of the diagonal blocks ``B[j, j] = W_j^T W_j = L_j L_j^T``.

    ``L_j^T`` is the triangular factor ``R_j`` of :func:`orthonormal_bases` (``W_j = Q_j R_j``), so
    ``Q_j = W_j L_j^(-T)`` is the same basis.

    Parameters
    ----------
    B : array (H, H, k, k)
        A block Gram matrix (:func:`block_gram`).
    name : str, default "W"
        The argument the heads came from, named by an error.

    Returns
    -------
    numpy.ndarray
        ``(H, k, k)``.

    Raises
    ------
    ValueError
        Naming ``name`` and the head whose ``L_j`` fails the rank test of :func:`orthonormal_bases`, or
        for a ``B`` of the wrong shape.
    """
    B = _gram(B, name)
    H, _, k, _ = B.shape
    C = B[np.arange(H), np.arange(H)]
    # scale each block by a power of 4 (exact) so that its largest entry is about 1
    f = (np.frexp(np.abs(C).max(axis=(1, 2)))[1] + 1) // 2
    Cs = np.ldexp(C, -2 * f[:, None, None])
    try:
        L = np.linalg.cholesky(Cs)
    except np.linalg.LinAlgError:
        for j in range(H):  # name the first head that is not positive definite
            try:
                np.linalg.cholesky(Cs[j])
            except np.linalg.LinAlgError:
                raise ValueError(f"{name}: head {j} is rank deficient (rank < d_k = {k})") from None
        raise
    L = np.ldexp(L, f[:, None, None])
    _check_factors(L, name)
    return L


def _orthonormal_blocks(B: np.ndarray, name: str) -> np.ndarray:
    """``Q_j^T Q_j' = L_j^{-1} B[j, j'] L_j'^{-T}`` ``(H, H, k, k)`` from a block Gram matrix (``Q_j = W_j L_j^{-T}``)."""
    Linv = np.linalg.inv(gram_factors(B, name))
    return Linv[:, None] @ B @ Linv.transpose(0, 2, 1)[None]


def _cross_blocks(Q: np.ndarray) -> np.ndarray:
    """``Q_j^T Q_j'`` ``(H, H, k, k)`` for a stack ``Q`` ``(H, d, k)`` (one matrix product)."""
    H, d, k = Q.shape
    A = Q.transpose(0, 2, 1).reshape(H * k, d)
    return (A @ A.T).reshape(H, k, H, k).transpose(0, 2, 1, 3)


def _cos2(O: np.ndarray) -> np.ndarray:
    """Mean over pairs ``j < j'`` of the squared principal cosines, largest first, from blocks ``O`` ``(H, H, k, k)``."""
    P = O[np.triu_indices(O.shape[0], k=1)]
    cos2 = np.clip(np.linalg.eigvalsh(P @ P.transpose(0, 2, 1))[:, ::-1], 0.0, 1.0)
    return cos2.mean(axis=0)


def hdi_from_gram(B, name: str = "W", spectrum: bool = False):
    """``[HDI_printed, HDI_PA, HDI_RV]`` from the block Gram matrix alone.

    The same values as :func:`head_diversity_indices` of ``W`` (to rounding; the orthonormal bases come
    from Cholesky factors, :func:`gram_factors`), for callers that only hold Gram matrices (the
    row-permutation null of a trained model).

    Parameters
    ----------
    B : array (H, H, k, k)
        ``B[j, j'] = W_j^T W_j'`` (:func:`block_gram`).
    name : str, default "W"
        The argument the heads came from, named by an error.
    spectrum : bool, default False
        Also return :func:`cos2_spectrum`.

    Returns
    -------
    numpy.ndarray or tuple of numpy.ndarray
        ``(3,)``, or with ``spectrum`` the pair of it and the spectrum ``(k,)``.

    Raises
    ------
    ValueError
        Naming ``name`` for a zero or rank-deficient head, or a ``B`` of the wrong shape.
    """
    B = _gram(B, name)
    Bs, e = _scaled_gram(B, name)
    k = B.shape[2]
    S = np.einsum("ijab,ijab->ij", Bs, Bs)
    O = _orthonormal_blocks(Bs, name)
    S_orth = np.einsum("ijab,ijab->ij", O, O)
    hdi = np.array([_hdi_value(n, k, S=S, e=e, S_orth=S_orth) for n in NORMALIZATIONS])
    return (hdi, _cos2(O)) if spectrum else hdi


def pair_overlaps(W) -> np.ndarray:
    """Principal-angle overlaps ``O[j, j'] = tr(P_j P_j')/d_k = mean_i cos^2 theta_i^(jj')``.

    The diagonal is 1; ``HDI_PA = 1 - mean_(j<j') O[j, j']``.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, ``H >= 2``, every head of full rank.

    Returns
    -------
    numpy.ndarray
        ``(H, H)``.

    Raises
    ------
    ValueError
        Naming ``W`` (and the head) for a zero or rank-deficient head, fewer than two heads, or an array
        that is not finite or of the wrong shape.
    """
    W = check_heads(W)
    return _sq_norms(orthonormal_bases(W)) / W.shape[2]


def pair_cos2(W) -> np.ndarray:
    """Squared cosines of the principal angles of every pair of heads, largest first.

    Entry ``[j, j']`` is the spectrum of the pair ``(j, j')`` (symmetric in ``j, j'``; the diagonal is
    all ones).  Its mean over ``j < j'`` is :func:`cos2_spectrum`; a leave-one-head-out mean over the
    remaining pairs gives a jackknife over heads.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, ``H >= 2``, every head of full rank.

    Returns
    -------
    numpy.ndarray
        ``(H, H, d_k)``.

    Raises
    ------
    ValueError
        Naming ``W`` (and the head) for a zero or rank-deficient head, fewer than two heads, or an array
        that is not finite or of the wrong shape.
    """
    O = _cross_blocks(orthonormal_bases(check_heads(W)))
    return np.clip(np.linalg.eigvalsh(O @ O.transpose(0, 1, 3, 2))[..., ::-1], 0.0, 1.0)


def cos2_spectrum(W) -> np.ndarray:
    """Mean over head pairs of the squared cosines of the principal angles, largest first.

    Entry ``i`` is ``mean_(j<j') cos^2 theta_i^(jj')`` with the angles of each pair ascending; the mean
    of the spectrum is ``1 - HDI_PA``.  It shows whether an overlap comes from a few shared directions
    or is spread out.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, ``H >= 2``, every head of full rank.

    Returns
    -------
    numpy.ndarray
        ``(d_k,)``.

    Raises
    ------
    ValueError
        Naming ``W`` (and the head) for a zero or rank-deficient head, fewer than two heads, or an array
        that is not finite or of the wrong shape.
    """
    return _cos2(_cross_blocks(orthonormal_bases(check_heads(W))))


def haar_expected_hdi(d: int, d_k: int) -> float:
    """``E[HDI_PA] = 1 - d_k/d`` for independent Haar heads (uniform random subspaces).

    Geometry only: it does not depend on the data-generating process (inputs, noise, regression
    function) of :mod:`mhanw.data`.

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size.

    Returns
    -------
    float
        The expectation.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it exceeds ``d``, or the size that is not a positive integer.
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    return 1.0 - d_k / d


def hdi_upper_bound(d: int, d_k: int, n_heads: int) -> float:
    """Largest HDI_PA of ``H`` subspaces of dimension ``d_k`` in ``R^d`` (the frame bound; Thm 5.1).

    ``1 - max(0, (H d_k/d - 1)/(H - 1))``: 1 when ``H d_k <= d`` (orthogonal blocks).  When
    ``H d_k > d`` it is an upper bound, attained exactly when an equi-isoclinic tight fusion frame of
    that shape exists (four lines in R^3: 8/9, the cube's diagonals); it is not always attained (two
    planes in R^3 reach only 1/2, against a bound of 2/3).

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size.
    n_heads : int >= 2
        ``H``.

    Returns
    -------
    float
        The bound.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it exceeds ``d``, ``n_heads`` for fewer than two heads, or the size that is
        not a positive integer.
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    H = positive_int(n_heads, "n_heads", minimum=2)
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    return 1.0 - max(0.0, (H * d_k / d - 1.0) / (H - 1))


# --------------------------------------------------------------------------- the frame bound (Thm 5.1)


def _check_ascent(n_starts: int, n_steps: int, H: int, d: int, d_k: int) -> None:
    """Refuse an ascent of :func:`maximize_hdi` that would take too long.

    ``ValueError`` naming ``n_steps`` or ``n_starts x n_steps`` when the ascent of :func:`maximize_hdi`
    would take more than :data:`MAX_ASCENT_STEPS` steps or :data:`MAX_ASCENT_WORK` work (it would run for
    hours, not fail).
    """
    if n_steps > MAX_ASCENT_STEPS:
        raise ValueError(
            f"n_steps: expected at most {MAX_ASCENT_STEPS} ascent steps (about 0.2 ms each), got {brief(n_steps)}"
        )
    if n_starts * n_steps > MAX_ASCENT_STEPS:
        raise ValueError(
            f"n_starts x n_steps: {n_starts} starts of {n_steps} steps are {n_starts * n_steps} "
            f"ascent steps, more than the {MAX_ASCENT_STEPS} one call takes (about 0.2 ms each)"
        )
    work = n_starts * n_steps * H * d * d * d_k
    if work > MAX_ASCENT_WORK:
        raise ValueError(
            f"n_starts x n_steps: {n_starts} starts of {n_steps} steps with H = {H} heads of "
            f"{d} x {d_k} are {work} multiplications (n_starts n_steps H d^2 d_k), more than the "
            f"{MAX_ASCENT_WORK} one call does (about a minute)"
        )


@dataclass(frozen=True)
class FrameAscent:
    """Result of :func:`maximize_hdi`.

    Parameters
    ----------
    bases : numpy.ndarray
        ``(n_starts, H, d, d_k)``: the orthonormal bases at the end.
    hdi : numpy.ndarray
        ``(n_starts,)``: the final HDI_PA of each start.
    trace : numpy.ndarray
        ``(n_starts, n_steps + 1)``: HDI_PA along the ascent.
    tightness : numpy.ndarray
        ``(n_starts,)``: :func:`frame_tightness` at the end.
    """

    bases: np.ndarray
    hdi: np.ndarray
    trace: np.ndarray
    tightness: np.ndarray


def frame_tightness(W) -> float:
    """``|| sum_j P_j - (H d_k / d) I ||_F``: 0 iff the subspaces form a tight fusion frame.

    When ``H d_k > d`` the bound :func:`hdi_upper_bound` is attained iff this is 0.

    Parameters
    ----------
    W : array (H, d, d_k)
        Any full-rank heads (their ranges are used).

    Returns
    -------
    float
        The distance from tightness.

    Raises
    ------
    ValueError
        Naming ``W`` for a rank-deficient head or an array that is not finite or of the wrong shape.
    """
    Q = orthonormal_bases(W)
    H, d, d_k = Q.shape
    S = np.einsum("hik,hjk->ij", Q, Q)
    return float(np.linalg.norm(S - (H * d_k / d) * np.eye(d)))


#: Largest step of :func:`maximize_hdi`: a move of operator norm ``step`` against bases of norm 1;
#: beyond 1 the update is dominated by the gradient itself and re-orthonormalisation returns
#: its range, not an ascent (``step = 1e300`` ended at HDI 0.002 where 8/9 is reachable).
MAX_STEP = 1.0

#: Most ascent steps one call of :func:`maximize_hdi` takes over all its starts (``n_starts x n_steps``): a
#: step costs at least about 0.2 ms (two einsums and a QR of the stack), so 10**5 steps are well under a
#: minute at the smallest shapes; the chapters take at most 20 starts of 300 steps.
MAX_ASCENT_STEPS = 10**5

#: Most work of one call of :func:`maximize_hdi`, counted as ``n_starts x n_steps x H d^2 d_k`` (the
#: multiplications of the frame operator's two einsums per step): about 0.02-0.05 microseconds each, so
#: 10**9 of them are under a minute as well.
MAX_ASCENT_WORK = 10**9


def maximize_hdi(
    d: int, d_k: int, n_heads: int, rng, n_starts: int = 20, n_steps: int = 300, step: float = 0.5
) -> FrameAscent:
    """Maximise HDI_PA over ``H`` subspaces of dimension ``d_k`` in ``R^d`` (the frame bound of Thm 5.1).

    Projected gradient ascent from ``n_starts`` Haar starts (each drawn as :func:`orthonormal_bases` of
    a standard Gaussian ``(H, d, d_k)`` from ``rng``).  With orthonormal bases ``Q_j``,
    ``1 - HDI_PA = c sum_(j<j') ||Q_j^T Q_j'||_F^2`` with ``c = 2/(H (H - 1) d_k)``, whose gradient in
    ``Q_j`` is ``2 c sum_(j' != j) P_j' Q_j``; each step moves every ``Q_j`` against it by
    ``step / (2 c (H - 1))`` times the gradient (so the update is at most ``step`` in operator norm)
    and re-orthonormalises (:func:`orthonormal_bases`, the projection onto the Stiefel manifold).
    Maximising HDI_PA is minimising the fusion-frame potential ``||sum_j P_j||_F^2 >= (H d_k)^2 / d``.
    When ``H d_k <= d`` the optimum is mutually orthogonal subspaces (HDI_PA 1); when ``H d_k > d`` the
    bound :func:`hdi_upper_bound` is attained iff a tight fusion frame ``sum_j P_j = (H d_k/d) I`` with
    these dimensions exists: four lines in ``R^3`` reach 8/9, but two planes in ``R^3`` always share a
    line and reach only 1/2 < 2/3.  The ascent finds a local maximum; use several starts.

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size.
    n_heads : int >= 2
        ``H``.
    rng : numpy.random.Generator
        The stream the starts are drawn from.
    n_starts : int >= 1, default 20
        Independent starts.
    n_steps : int >= 0, default 300
        Steps of each ascent.
    step : float, default 0.5
        ``0 < step <=`` :data:`MAX_STEP`.

    Returns
    -------
    FrameAscent
        The bases, HDI and tightness of every start, and the traces.

    Raises
    ------
    ValueError
        Naming ``n_steps`` or ``n_starts x n_steps`` when one call would take more than
        :data:`MAX_ASCENT_STEPS` steps over all starts or :data:`MAX_ASCENT_WORK` work (before the
        ascent starts), or the argument that is out of range.
    """
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    H = positive_int(n_heads, "n_heads", minimum=2)
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    generator(rng, "rng")
    n_starts = positive_int(n_starts, "n_starts", maximum=None)  # bounded by the arrays they size, below
    n_steps = positive_int(n_steps, "n_steps", maximum=None)
    check_entries("d" if d >= H else "n_heads", H, d, d_k)
    check_entries("n_starts", n_starts, H, d, d_k)
    check_entries("n_steps", n_steps + 1)
    n_starts = positive_int(n_starts, "n_starts", maximum=MAX_REPLICATES, what="starts")
    n_steps = positive_int(n_steps, "n_steps", maximum=MAX_REPLICATES, what="ascent steps")
    check_entries("n_starts x (n_steps + 1)", n_starts, n_steps + 1)  # the trace
    _check_ascent(n_starts, n_steps, H, d, d_k)
    step = positive_scalar(step, "step")
    if step > MAX_STEP:
        raise ValueError(
            f"step: expected a step in (0, {MAX_STEP:g}] (a move of at most the size of an orthonormal "
            f"basis, so that the gradient still describes it), got {brief(step)}"
        )
    eta = step / (H - 1)  # = step / (2c (H-1)) times the constant 2c absorbed in the gradient below
    bases = np.empty((n_starts, H, d, d_k))
    trace = np.empty((n_starts, n_steps + 1))
    for s in range(n_starts):
        Q = orthonormal_bases(rng.standard_normal((H, d, d_k)))
        trace[s, 0] = _hdi_value("principal_angles", d_k, S_orth=_sq_norms(Q))
        for k in range(n_steps):
            P_sum = np.einsum("hik,hjk->ij", Q, Q)
            # sum_{j' != j} P_j' Q_j = (sum_j' P_j') Q_j - Q_j, up to the constant 2c
            grad = np.einsum("ij,hjk->hik", P_sum, Q) - Q
            Q = orthonormal_bases(Q - eta * grad)
            trace[s, k + 1] = _hdi_value("principal_angles", d_k, S_orth=_sq_norms(Q))
        bases[s] = Q
    return FrameAscent(
        bases=bases, hdi=trace[:, -1].copy(), trace=trace, tightness=np.array([frame_tightness(b) for b in bases])
    )
