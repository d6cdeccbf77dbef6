"""Nadaraya-Watson heads, head families and their ensembles (paper Sec. 3; Thm 3.1 to 7.1).

A *head* is a fixed key projection ``W_j`` of shape ``(d, d_k)``; a
configuration is ``W`` of shape ``(H, d, d_k)``.  All heads regress **one shared
response** ``Y`` (assumption A-common of ``book/claims.md``).

Head estimate at a query ``x``:

- ``kernel="gaussian"`` (every statistical check):
  ``m_j(x) = sum_i w_ij(x) Y_i``, ``w_ij(x) ∝ exp(-|W_j^T (x - X_i)|^2 / (2 h^2))``
  with an explicit bandwidth ``h`` not tied to ``d_k``;
- ``kernel="attention"`` (sensitivity analysis only):
  ``w_ij(x) ∝ exp(beta (W_j^T x) . (W_j^T X_i))``, ``beta = 1/sqrt(d_k)`` by default
  (tied query and key projections);
- ``kernel="laplace"``: ``w_ij(x) ∝ exp(-|W_j^T (x - X_i)| / h)``;
- ``kernel="epanechnikov"``: ``w_ij(x) ∝ (1 - |W_j^T (x - X_i)|^2 / h^2)_+``, a window
  of radius ``h``; a query with no training point in it gets the mean response of its
  nearest points (:data:`mhanw.nw.EMPTY_WINDOW`).

The kernels are those of the engine's registry :data:`mhanw.nw.REGISTRY` (normalisation and
the meaning of ``h`` per kernel), the exponential one called ``"attention"`` here.

Combination rules (convex averaging versus concatenation):

- ``"average"``: ``f = sum_j a_j m_j`` with ``sum_j a_j = 1`` (default
  ``a_j = 1/H``), the rule of Thm 3.1, 4.2 and 7.1;
- ``"sum"``: ``f = Ybar + sum_j a_j (m_j - Ybar)``, default ``a_j = 1``, additive
  and concatenation-like (``Ybar`` the training mean of ``Y``);
- ``"concat"``: as a transformer combines heads.  Every training point carries
  a value vector, the *value stream* ``z_i = (Y_i, X_i)`` in ``R^(1+d)``
  (:func:`value_stream`), centred at its training mean ``zbar``.  Head ``j``
  has its own value projection ``W_V^j`` ``(1+d, d_v)`` and outputs
  ``o_j(x) = sum_i w_ij(x) (z_i - zbar) W_V^j`` in ``R^(d_v)``; the
  concatenation ``(o_1, ..., o_H)`` passes through the output projection
  ``W_O`` ``(H, d_v)`` (one output, the estimate of ``m``):
  ``f(x) = Ybar + sum_j o_j(x) . W_O^j``.  ``W_V^j = e_1`` (the default,
  ``values="response"``) is the one shared response; ``values="stream"``
  (``W_V^j = I``) lets the heads regress the inputs too, and any array
  ``(H, 1+d, d_v)`` gives each head its own targets.  ``W_O`` is fixed (an
  array; the default, all ones, with ``values="response"`` is the sum rule
  exactly; :func:`output_projection` draws a random or orthogonal one) or
  ``"fitted"``: least squares of ``Y - Ybar`` on the heads' leave-one-out
  outputs at the training points (:func:`mhanw.nw.leave_one_out`), so that no
  head is rewarded for matching a point to itself.  Head ``j``'s
  *contribution* ``c_j(x) = Ybar + o_j(x) . W_O^j`` is its estimate of ``m``
  and ``f = Ybar + sum_j (c_j - Ybar)``: the sum rule over the contributions.
  :func:`ensemble_parts` writes every rule as ``f = sum_a w_a p_a`` for Thm 3.1
  (:func:`mhanw.decomposition.symbolic_concat_decomposition`).

Head families (``book/claims.md``, 'Head families'): :func:`identical_heads`,
:func:`orthogonal_heads`, :func:`pair_heads`, :func:`star_heads`,
:func:`haar_heads`, :func:`interpolated_heads`.  Angles are in radians.

Monte Carlo over training samples (IMSE, pointwise estimates, error moments) is
:mod:`mhanw.montecarlo`.

Speed: all heads of all configurations with the same kernel and ``d_k`` are
evaluated in one call of the engine :func:`mhanw.nw.weighted_mean`, the one
blocked softmax-weighted mean of the package, with the kernels and the
bandwidth convention of :func:`mhanw.nw.nadaraya_watson` and
:func:`mhanw.nw.softmax_attention` (tests check equality to 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import constants as _constants
from . import diversity as _diversity
from . import nw as _nw
from .constants import check_entries
from .infra.validate import (
    as_float_array,
    boolean,
    generator,
    one_of,
    positive_int,
    positive_scalar,
    real_scalar,
    unit_interval,
)

__all__ = [
    "HeadConfig",
    "KERNELS",
    "RULES",
    "VALUES",
    "combine",
    "concat_contributions",
    "ensemble_parts",
    "output_projection",
    "value_stream",
    "graded_heads",
    "ensemble_estimate",
    "haar_basis",
    "haar_heads",
    "head_estimates",
    "identical_heads",
    "interpolated_heads",
    "orthogonal_heads",
    "orthonormalize",
    "pair_heads",
    "star_heads",
]

#: The engine's kernels (:data:`mhanw.nw.KERNELS`), the exponential one named ``"attention"``: it is
#: evaluated with tied query and key projections and the inverse temperature ``beta``, not a bandwidth.
KERNELS = tuple("attention" if k == "exponential" else k for k in _nw.KERNELS)
#: The combination rules of an ensemble (see the module docstring).
RULES = ("average", "sum", "concat")
#: Named value projections of the ``"concat"`` rule: ``"response"`` (``W_V^j = e_1``, the shared
#: response, ``d_v = 1``) and ``"stream"`` (``W_V^j = I_(1+d)``, the whole value stream).
VALUES = ("response", "stream")


#: Tolerance on ``sum(weights) == 1`` for the ``"average"`` rule (:data:`mhanw.constants.WEIGHT_SUM_TOL`).
WEIGHT_SUM_TOL = _constants.WEIGHT_SUM_TOL


# --------------------------------------------------------------------------- families


def orthonormalize(A) -> np.ndarray:
    """Orthonormal basis of ``range(A)`` by QR with ``diag(R) > 0``.

    :func:`mhanw.diversity.orthonormal_bases` of one matrix.

    Parameters
    ----------
    A : array (d, d_k)
        Columns spanning the subspace, ``d >= d_k``.

    Returns
    -------
    numpy.ndarray
        ``(d, d_k)`` with orthonormal columns spanning ``range(A)``.

    Raises
    ------
    ValueError
        Naming ``A`` if its columns are (numerically) dependent or it is not a finite 2-D array.
    """
    return _diversity.orthonormal_bases(as_float_array(A, "A", ndim=2), "A")


def _eye_block(d: int, start: int, d_k: int) -> np.ndarray:
    W = np.zeros((d, d_k))
    W[start + np.arange(d_k), np.arange(d_k)] = 1.0
    return W


def _dims(d, d_k, n_heads, need=None, what="", name="n_heads"):
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    n_heads = positive_int(n_heads, "n_heads")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    if need is not None and need(d, d_k, n_heads):
        raise ValueError(f"{name}: {what}, got d = {d}, d_k = {d_k}, n_heads = {n_heads}")
    check_entries("n_heads" if n_heads > d else "d", n_heads, d, d_k)
    return d, d_k, n_heads


def identical_heads(d: int, d_k: int, n_heads: int, basis=None) -> np.ndarray:
    """``n_heads`` copies of one projection: HDI_PA = 0 (Thm 3.1 check; the worst case of S-weak, Thm 4.2).

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
    n_heads : int >= 1
        ``H``.
    basis : array (d, d_k), optional
        The shared projection; defaults to ``[e_1 ... e_dk]``.

    Returns
    -------
    numpy.ndarray
        ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming ``basis`` when its shape is not ``(d, d_k)``, or the size that is out of range.
    """
    d, d_k, n_heads = _dims(d, d_k, n_heads)
    if basis is None:
        W1 = _eye_block(d, 0, d_k)
    else:
        W1 = as_float_array(basis, "basis", ndim=2)
        if W1.shape != (d, d_k):
            raise ValueError(f"basis: expected shape ({d}, {d_k}), got {W1.shape}")
    return np.repeat(W1[None], n_heads, axis=0)


def orthogonal_heads(d: int, d_k: int, n_heads: int) -> np.ndarray:
    """Orthogonal coordinate blocks, one per head: Thm 5.1's optimum.

    ``W_j = [e_((j-1)d_k+1), ..., e_(j d_k)]``; HDI_PA = HDI_printed = 1.

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
    n_heads : int >= 1
        ``H``, with ``H d_k <= d``.

    Returns
    -------
    numpy.ndarray
        ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when ``H d_k > d`` (no ``H`` orthogonal heads fit), or the size that is out of
        range.
    """
    d, d_k, n_heads = _dims(d, d_k, n_heads, lambda d, k, H: H * k > d, "expected n_heads * d_k <= d")
    return np.stack([_eye_block(d, j * d_k, d_k) for j in range(n_heads)])


def pair_heads(theta: float, d: int, d_k: int) -> np.ndarray:
    """The isoclinic pair ``W_1 = U_0``, ``W_2 = cos(theta) U_0 + sin(theta) E``.

    ``U_0 = [e_1 ... e_dk]``, ``E = [e_(dk+1) ... e_(2dk)]``.  All ``d_k`` principal angles equal
    ``theta``; HDI_PA = sin^2(theta), HDI_printed = 1 - cos^2(theta)/d_k (Thm 3.1's figure, Lemma 4.1,
    Thm 4.2 (A)).

    Parameters
    ----------
    theta : float
        The angle, in radians.
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
        Needs ``2 d_k <= d``.

    Returns
    -------
    numpy.ndarray
        ``(2, d, d_k)``.

    Raises
    ------
    ValueError
        Naming ``d`` when ``2 d_k > d``, or the argument that is out of range.
    """
    theta = real_scalar(theta, "theta")
    d, d_k, _ = _dims(d, d_k, 2, lambda d, k, H: 2 * k > d, "pair(theta) needs 2 d_k <= d", name="d")
    U0, E = _eye_block(d, 0, d_k), _eye_block(d, d_k, d_k)
    return np.stack([U0, np.cos(theta) * U0 + np.sin(theta) * E])


def star_heads(theta: float, d: int, d_k: int, n_heads: int) -> np.ndarray:
    """The star ``W_j = cos(theta) U_0 + sin(theta) E_j``: every pair at the same angles.

    ``U_0, E_1, ..., E_H`` are consecutive coordinate blocks.  Every pair has all principal angles
    equal to ``arccos(cos^2 theta)``; HDI_PA = 1 - cos^4(theta).

    Parameters
    ----------
    theta : float
        The angle of each head to the shared block ``U_0``, in radians.
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
    n_heads : int >= 1
        ``H``, with ``(H + 1) d_k <= d``.

    Returns
    -------
    numpy.ndarray
        ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when ``(H + 1) d_k > d``, or the argument that is out of range.
    """
    theta = real_scalar(theta, "theta")
    d, d_k, n_heads = _dims(
        d, d_k, n_heads, lambda d, k, H: (H + 1) * k > d, "star(theta) needs (n_heads + 1) * d_k <= d"
    )
    U0 = _eye_block(d, 0, d_k)
    return np.stack([np.cos(theta) * U0 + np.sin(theta) * _eye_block(d, (j + 1) * d_k, d_k) for j in range(n_heads)])


def graded_heads(angles, d: int) -> np.ndarray:
    """One-dimensional heads of graded quality, ``u_j = cos(theta_j) e_1 + sin(theta_j) e_(j+1)``.

    For a regression function that depends on ``x_1`` only (``"blind"``), head ``j`` sees the signal
    direction at angle ``theta_j``: increasing angles give heads of decreasing quality (Thm 7.1, graded
    heads).  Distinct ``e_(j+1)`` make the heads pairwise at cosine ``cos(theta_j) cos(theta_j')``.

    Parameters
    ----------
    angles : array (H,)
        ``theta_j`` in radians.
    d : int >= H + 1
        The input dimension.

    Returns
    -------
    numpy.ndarray
        ``(H, d, 1)``.

    Raises
    ------
    ValueError
        Naming ``d`` when ``d < H + 1``, or ``angles`` when they are not a finite 1-D array.
    """
    theta = as_float_array(angles, "angles", ndim=1)
    d = positive_int(d, "d")
    H = theta.shape[0]
    if d < H + 1:
        raise ValueError(f"d: graded heads need d >= n_heads + 1 = {H + 1}, got {d}")
    check_entries("d", H, d)
    W = np.zeros((H, d, 1))
    W[:, 0, 0] = np.cos(theta)
    W[np.arange(H), np.arange(1, H + 1), 0] = np.sin(theta)
    return W


def haar_basis(d: int, d_k: int, rng) -> np.ndarray:
    """A Haar-distributed orthonormal frame: QR of a Gaussian matrix, ``diag(R) > 0``.

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The number of columns.
    rng : numpy.random.Generator
        The stream the Gaussian matrix is drawn from.

    Returns
    -------
    numpy.ndarray
        ``(d, d_k)`` with orthonormal columns.

    Raises
    ------
    ValueError
        Naming the size that is out of range, or ``rng`` when it is not a Generator.
    """
    d, d_k, _ = _dims(d, d_k, 1)
    generator(rng, "rng")
    return orthonormalize(rng.standard_normal((d, d_k)))


def haar_heads(d: int, d_k: int, n_heads: int, rng) -> np.ndarray:
    """``n_heads`` independent Haar frames; E[HDI_PA] = 1 - d_k/d.

    The same draws as ``n_heads`` calls of :func:`haar_basis`.

    Parameters
    ----------
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
    n_heads : int >= 1
        ``H``.
    rng : numpy.random.Generator
        The stream the frames are drawn from.

    Returns
    -------
    numpy.ndarray
        ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming the size that is out of range, or ``rng`` when it is not a Generator.
    """
    d, d_k, n_heads = _dims(d, d_k, n_heads)
    generator(rng, "rng")
    return _diversity.orthonormal_bases(rng.standard_normal((n_heads, d, d_k)))


def interpolated_heads(t: float, d: int, d_k: int, n_heads: int, rng) -> np.ndarray:
    """``W_j = orth((1 - t) U + t Z_j)`` with ``U, Z_1..Z_H`` Haar: heads from identical to independent.

    ``t = 0`` gives identical heads (HDI_PA = 0), ``t = 1`` independent Haar heads; intermediate ``t``
    spread HDI_PA upward (Thm 4.2 (D)).  Draws ``U`` then ``Z_1, ..., Z_H`` from ``rng``.

    Parameters
    ----------
    t : float in [0, 1]
        The interpolation.
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head size (key dimension).
    n_heads : int >= 1
        ``H``.
    rng : numpy.random.Generator
        The stream the frames are drawn from.

    Returns
    -------
    numpy.ndarray
        ``(H, d, d_k)``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, or ``rng`` when it is not a Generator.
    """
    t = unit_interval(t, "t")
    d, d_k, n_heads = _dims(d, d_k, n_heads)
    generator(rng, "rng")
    U = haar_basis(d, d_k, rng)
    Z = [haar_basis(d, d_k, rng) for _ in range(n_heads)]
    return np.stack([orthonormalize((1.0 - t) * U + t * Zj) for Zj in Z])


# --------------------------------------------------------------------------- head outputs


def _check_projections(projections, name="projections") -> np.ndarray:
    W = as_float_array(projections, name, ndim=3)
    if W.shape[2] > W.shape[1]:
        raise ValueError(f"{name}: expected shape (H, d, d_k) with d_k <= d, got {W.shape}")
    return W


def _engine_kernel(kernel: str) -> str:
    """The engine's name (:data:`mhanw.nw.KERNELS`) of a head kernel of :data:`KERNELS`."""
    return "exponential" if kernel == "attention" else kernel


def _inv_scale(kernel, bandwidth, beta, d_k):
    """The multiplier of the raw logits of a head configuration.

    Multiplier of the raw logits as ``(mantissa, exponent)`` (see :func:`mhanw.nw.logit_scale`):
    ``h^-p`` for a kernel with a bandwidth (``1/h^2`` Gaussian), or ``beta`` (attention, default
    ``1/sqrt(d_k)``).
    """
    if kernel != "attention":
        return _nw.logit_scale(kernel, bandwidth=bandwidth)
    if beta is None:
        return _nw.logit_scale("exponential", bandwidth=np.sqrt(d_k))
    return _nw.logit_scale("exponential", beta=beta)


#: Inputs or projections whose largest entry is outside ``2^(+-INPUT_EXPONENT_LIMIT)``
#: are rescaled by a power of two before they are multiplied.
INPUT_EXPONENT_LIMIT = 256


def _binary_exponent(x: float) -> int:
    """``e`` with ``x = f 2^e``, ``0.5 <= f < 1`` (0 for x = 0)."""
    return int(np.frexp(x)[1])


def _head_estimates(W, X, Y, queries, kernel, scale, block_entries=None):
    """The unchecked core of :func:`head_estimates`.

    Unchecked core of :func:`head_estimates`; returns ``(H, T)``: :func:`_head_smooths` of the
    one shared response ``Y``.
    """
    return _head_smooths(W, X, Y[:, None], queries, kernel, scale, block_entries)[..., 0]


def _head_smooths(W, X, Z, queries, kernel, scale, block_entries=None):
    """Every head's weighted means of the shared value columns.

    Every head's weighted means of the value columns ``Z`` ``(n, p)`` shared by all heads,
    ``(H, T, p)``.

    ``scale`` is the logit multiplier as ``(mantissa, exponent)``, scalars or one
    per head ``(H,)`` (``1/h^2`` for the Gaussian kernel, ``beta`` for
    attention).  Projects queries and keys of every head, then evaluates all
    heads in one call of the engine :func:`mhanw.nw.weighted_mean`, the
    values ``Z`` shared by all heads.
    """
    H, d, d_k = W.shape
    T = queries.shape[0]
    # inputs far from 1 in size would over- or underflow in the projections:
    # exact power-of-two rescaling, folded into the scale (the kernel's argument
    # is homogeneous of degree Kernel.degree in x and in W)
    nw_kernel = _engine_kernel(kernel)
    ex = _binary_exponent(max(X.max(), -X.min(), queries.max(), -queries.min()))
    ew = _binary_exponent(max(W.max(), -W.min()))
    if abs(ex) > INPUT_EXPONENT_LIMIT or abs(ew) > INPUT_EXPONENT_LIMIT:
        X, queries, W = np.ldexp(X, -ex), np.ldexp(queries, -ex), np.ldexp(W, -ew)
        scale = (scale[0], np.asarray(scale[1]) + _nw.REGISTRY[nw_kernel].degree * (ex + ew))
    Q = (queries @ W.transpose(1, 0, 2).reshape(d, H * d_k)).reshape(T, H, d_k).transpose(1, 0, 2)  # (H, T, d_k)
    # keys X @ W_j are projected by the engine, block by block
    return _nw.weighted_mean(Q, (X, W), Z[None], nw_kernel, scale, block_entries)


class _Plan:
    """All heads of several configurations, grouped by ``(kernel, d_k)`` and evaluated together.

    Built once per Monte Carlo call: per group the stacked projections, their
    scales and a prepared engine (:class:`mhanw.nw.ProjectedHeads`); with
    ``queries`` (fixed evaluation points) also their projections and norms.
    :meth:`heads` is the unchecked per-replicate path: its results equal
    :func:`_head_estimates` on every group bit for bit (the same operations,
    without the per-call preparation); samples outside the plain fast path
    (inputs far from 1 in size, scales that need log space) take
    :func:`_head_estimates` itself.
    """

    #: Largest binary exponent of the inputs and of the projections (together) for
    #: which :meth:`heads` knows that no squared key norm overflows.
    _BOUNDED_EXPONENT = 200

    def __init__(self, configs, queries=None):
        self.configs = configs
        groups: dict[tuple[str, int], list[int]] = {}
        # "concat" configurations smooth their own value columns (and may fit W_O): evaluated one by one
        self.concat = [i for i, c in enumerate(configs) if c.rule == "concat"]
        for i, c in enumerate(configs):
            if c.rule != "concat":
                groups.setdefault((c.kernel, c.d_k), []).append(i)
        self.groups = []
        for (kernel, _), members in groups.items():
            W = np.concatenate([configs[i].projections for i in members])
            parts = [(configs[i]._scale(), configs[i].n_heads) for i in members]
            scale = (
                np.concatenate([np.full(H, m) for (m, _), H in parts]),
                np.concatenate([np.full(H, e) for (_, e), H in parts]),
            )
            edges = np.cumsum([0] + [configs[i].n_heads for i in members])
            slices = {i: slice(a, b) for i, a, b in zip(members, edges[:-1], edges[1:])}
            self.groups.append((kernel, W, scale, slices))
        self.queries = queries
        self._prepared = None

    def __getstate__(self):
        # the prepared engines hold views; a worker process prepares its own
        state = self.__dict__.copy()
        state["_prepared"] = None
        return state

    def _prepare(self):
        prepared = []
        for kernel, W, scale, _ in self.groups:
            H, d, d_k = W.shape
            engine = _nw.ProjectedHeads(W, _engine_kernel(kernel), scale)
            flat = W.transpose(1, 0, 2).reshape(d, H * d_k)
            ew = _binary_exponent(max(W.max(), -W.min()))
            fixed = None
            if self.queries is not None:
                qx = self.queries
                Q = (qx @ flat).reshape(qx.shape[0], H, d_k).transpose(1, 0, 2)
                qsq = engine.query_norms(Q)
                fixed = (max(qx.max(), -qx.min()), Q, qsq, float(qsq.max()))
            prepared.append((engine, flat, ew, fixed))
        self._prepared = prepared
        return prepared

    def heads(self, X, Y, queries) -> list:
        """The head estimates of every configuration.

        Head estimates of every configuration (``"concat"``: the contributions ``c_j``), a list of
        ``(H_c, T)`` arrays.
        """
        prepared = self._prepared if self._prepared is not None else self._prepare()
        out = [None] * len(self.configs)
        for (kernel, W, scale, slices), (engine, flat, ew, fixed) in zip(self.groups, prepared):
            est = self._group(kernel, W, scale, engine, flat, ew, fixed, X, Y, queries)
            for i, sl in slices.items():
                out[i] = est[sl]
        for i in self.concat:
            out[i] = self.configs[i]._contributions(X, Y, queries)
        return out

    def _group(self, kernel, W, scale, engine, flat, ew, fixed, X, Y, queries):
        """:func:`_head_estimates` of one group, bit for bit."""
        fixed = fixed if queries is self.queries else None
        xmax = max(X.max(), -X.min())
        qmax = fixed[0] if fixed is not None else max(queries.max(), -queries.min())
        ex = _binary_exponent(max(xmax, qmax))
        if abs(ex) > INPUT_EXPONENT_LIMIT or abs(ew) > INPUT_EXPONENT_LIMIT:
            return _head_estimates(W, X, Y, queries, kernel, scale)
        bounded = ex + ew <= self._BOUNDED_EXPONENT
        if fixed is not None:
            return engine(fixed[1], X, Y, fixed[2], fixed[3], bounded=bounded)
        H, d, d_k = W.shape
        T = queries.shape[0]
        Q = (queries @ flat).reshape(T, H, d_k).transpose(1, 0, 2)  # (H, T, d_k)
        return engine(Q, X, Y, bounded=bounded)


def head_estimates(projections, X, Y, queries, bandwidth=None, kernel="gaussian", beta=None) -> np.ndarray:
    """Estimates ``m_j(x_t)`` of every head at every query (Section 3).

    Equals ``mhanw.nw.nadaraya_watson(queries @ W_j, X @ W_j, Y, h)`` (gaussian) and
    ``mhanw.nw.softmax_attention(queries @ W_j, X @ W_j, Y, beta)`` (attention) head by head, to
    rounding.  Any finite inputs give finite estimates within ``[min Y, max Y]``: where a kernel weight
    is not a float (``h`` down to 1e-300, inputs of 1e200, ``beta = 1e308``) the estimate is its
    limit, the mean response of the nearest (resp. best-aligned) keys.

    Parameters
    ----------
    projections : array (H, d, d_k)
        Key projections ``W_j`` (used for queries and keys alike).
    X : array (n, d)
        Training inputs of ``D_n``.
    Y : array (n,)
        Training responses, one shared response for all heads.
    queries : array (T, d)
        Test points ``x_t``.
    bandwidth : float > 0
        ``h`` of the kernel; required for every kernel but ``"attention"``.
    kernel : str, default "gaussian"
        One of :data:`KERNELS`.
    beta : float, optional
        Inverse temperature of ``kernel="attention"``; default ``1/sqrt(d_k)``.

    Returns
    -------
    numpy.ndarray
        ``(H, T)``.

    Raises
    ------
    ValueError
        Naming the argument that is missing (``bandwidth``), not finite, of the wrong shape or out of
        range.
    """
    W = _check_projections(projections)
    X = as_float_array(X, "X", ndim=2)
    Y = as_float_array(Y, "Y", ndim=1)
    queries = as_float_array(queries, "queries", ndim=2)
    d = W.shape[1]
    if X.shape[1] != d:
        raise ValueError(f"X: expected shape (n, {d}) to match projections {W.shape}, got {X.shape}")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y: expected {X.shape[0]} values (one per row of X), got shape {Y.shape}")
    if queries.shape[1] != d:
        raise ValueError(f"queries: expected shape (T, {d}), got {queries.shape}")
    kernel, bandwidth, beta = _check_kernel(kernel, bandwidth, beta)
    return _head_estimates(W, X, Y, queries, kernel, _inv_scale(kernel, bandwidth, beta, W.shape[2]))


def _check_kernel(kernel, bandwidth, beta):
    one_of(kernel, "kernel", KERNELS)
    if kernel != "attention":
        if bandwidth is None:
            raise ValueError(f"bandwidth: required for kernel={kernel!r}, got None")
        bandwidth = positive_scalar(bandwidth, "bandwidth")
    if beta is not None:
        beta = real_scalar(beta, "beta")
    return kernel, bandwidth, beta


def _check_weights(weights, n_heads, rule):
    if weights is None:
        return np.full(n_heads, 1.0 / n_heads) if rule == "average" else np.ones(n_heads)
    a = as_float_array(weights, "weights", ndim=1)
    if a.shape[0] != n_heads:
        raise ValueError(f"weights: expected {n_heads} weights (one per head), got shape {a.shape}")
    if rule == "average" and abs(a.sum() - 1.0) > WEIGHT_SUM_TOL:
        raise ValueError(f"weights: rule 'average' needs weights summing to 1, got sum {a.sum()!r}")
    return a


def combine(estimates, rule="average", weights=None, y_mean=None) -> np.ndarray:
    """Combine head estimates into the ensemble.

    - ``"average"``: ``sum_j a_j m_j``; ``weights`` must sum to 1 (default 1/H).
    - ``"sum"``: ``y_mean + sum_j a_j (m_j - y_mean)``; ``weights`` default 1;
      ``y_mean`` (the training mean ``Ybar``) is required.
    - ``"concat"`` of heads that regress the shared response (``values="response"``,
      ``d_v = 1``) through a fixed output projection ``W_O = weights`` (default ones):
      the same formula as ``"sum"``, ``weights`` read as ``W_O``.  Other value
      projections and a fitted ``W_O`` need the sample: :func:`concat_contributions`.

    Parameters
    ----------
    estimates : array (H,) or (H, T)
        Head estimates ``m_j``.
    rule : str, default "average"
        One of :data:`RULES`.
    weights : array (H,), optional
        ``a_j`` (the rule's default when None).
    y_mean : float, optional
        ``Ybar``, required by ``"sum"`` and ``"concat"``.

    Returns
    -------
    numpy.ndarray
        ``()`` or ``(T,)``.

    Raises
    ------
    ValueError
        Naming ``y_mean`` when the rule needs it and it is None, ``weights`` when they do not fit the
        rule (``"average"``: sum to one), or the argument that is not finite or of the wrong shape.
    """
    est = as_float_array(estimates, "estimates", ndim=(1, 2))
    one_of(rule, "rule", RULES)
    a = _check_weights(weights, est.shape[0], rule)
    if rule == "average":
        return np.tensordot(a, est, axes=1)
    if y_mean is None:
        raise ValueError(f"y_mean: required for rule={rule!r}, got None")
    ybar = real_scalar(y_mean, "y_mean")
    return ybar + np.tensordot(a, est - ybar, axes=1)


# --------------------------------------------------------------------------- the concat rule


def value_stream(X, Y) -> np.ndarray:
    """The value vectors of the ``"concat"`` rule, ``z_i = (Y_i, X_i)``.

    Parameters
    ----------
    X : array (n, d)
        Training inputs.
    Y : array (n,)
        Training responses.

    Returns
    -------
    numpy.ndarray
        ``(n, 1 + d)``.

    Raises
    ------
    ValueError
        Naming ``Y`` when its length differs from the rows of ``X``, or the argument that is not a finite
        array of the right dimension.
    """
    X = as_float_array(X, "X", ndim=2)
    Y = as_float_array(Y, "Y", ndim=1)
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y: expected {X.shape[0]} values (one per row of X), got shape {Y.shape}")
    return np.column_stack([Y, X])


def _named_values(values, n_heads: int, d: int) -> np.ndarray:
    """``W_V`` ``(H, 1 + d, d_v)`` of a name of :data:`VALUES` or an array, checked."""
    if isinstance(values, str):
        one_of(values, "values", VALUES)
        if values == "response":
            V = np.zeros((n_heads, 1 + d, 1))
            V[:, 0, 0] = 1.0
            return V
        return np.repeat(np.eye(1 + d)[None], n_heads, axis=0)
    V = as_float_array(values, "values", ndim=3)
    if V.shape[:2] != (n_heads, 1 + d):
        raise ValueError(
            f"values: expected value projections of shape ({n_heads}, {1 + d}, d_v) (one per head, "
            f"rows the value stream (Y, x1..x{d})), got {V.shape}"
        )
    return V


def _named_output(output, n_heads: int, d_v: int):
    """``W_O`` ``(H, d_v)`` (an array; default ones) or the string ``"fitted"``, checked."""
    if output is None:
        return np.ones((n_heads, d_v))
    if isinstance(output, str):
        if output != "fitted":
            raise ValueError(f"output: expected an array (H, d_v) or 'fitted', got {output!r}")
        return output
    O = as_float_array(output, "output", ndim=(1, 2))
    if O.size != n_heads * d_v:
        raise ValueError(
            f"output: expected {n_heads * d_v} entries (H = {n_heads} heads x d_v = {d_v}), got shape {O.shape}"
        )
    return O.reshape(n_heads, d_v)


def output_projection(n_heads: int, d_v: int, rng, orthogonal: bool = False) -> np.ndarray:
    """A fixed random output projection ``W_O`` of the ``"concat"`` rule.

    ``orthogonal=False``: iid ``N(0, 1)`` entries.  ``orthogonal=True``: the first column of a Haar
    orthogonal ``(H d_v, H d_v)`` matrix scaled to norm ``sqrt(H d_v)``, the norm of the all-ones
    ``W_O`` (the sum rule): the Gaussian direction with a fixed length.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    d_v : int >= 1
        The value dimension of each head.
    rng : numpy.random.Generator
        The stream ``W_O`` is drawn from.
    orthogonal : bool, default False
        Which of the two laws above.

    Returns
    -------
    numpy.ndarray
        ``(H, d_v)``.

    Raises
    ------
    ValueError
        Naming the size that is out of range, or ``rng`` when it is not a Generator.
    """
    n_heads = positive_int(n_heads, "n_heads")
    d_v = positive_int(d_v, "d_v")
    check_entries("n_heads", n_heads, d_v)
    generator(rng, "rng")
    orthogonal = boolean(orthogonal, "orthogonal")
    g = rng.standard_normal(n_heads * d_v)
    if orthogonal:
        g *= np.sqrt(n_heads * d_v) / max(np.linalg.norm(g), np.finfo(float).tiny)
    return g.reshape(n_heads, d_v)


def _fitted_output(config, X, Zc, cols, V):
    """The output projection ``W_O`` fitted by least squares.

    ``W_O`` ``(H, d_v)`` by least squares of ``Y - Ybar`` on the heads' leave-one-out outputs at the
    training points (minimum-norm solution when the outputs are collinear).  The solution does not change
    when ``Zc`` is scaled, and scales inversely with ``V``.
    """
    W = config.projections
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X: a fitted output projection needs at least 2 training points, got {n}")
    mant, expo = config._scale()
    kernel = _engine_kernel(config.kernel)
    F = np.concatenate(
        [_nw._loo_mean(X @ W[j], Zc[:, cols], kernel, mant, expo) @ V[j, cols] for j in range(config.n_heads)], axis=1
    )  # (n, H d_v)
    w = np.linalg.lstsq(F, Zc[:, 0], rcond=None)[0]
    return w.reshape(config.n_heads, V.shape[2])


def _scaled_stream(X, Y):
    """The centred value stream divided by a power of two into a safe range.

    The centred value stream ``z_i - zbar`` divided by ``2^e`` (exactly: a power of two) so that its
    entries are of order one, ``(Zc / 2^e, Ybar, e)``: responses or inputs near the largest double
    (``+-1.7e308``) overflow in ``zbar`` and in ``z_i - zbar``, and every product of the concat rule is
    linear in the stream, so it is computed at this scale and scaled back once, at the end.
    """
    Z = np.column_stack([Y, X])
    e = _binary_exponent(float(np.max(np.abs(Z)))) + 1
    Zs = np.ldexp(Z, -e)
    zbar = Zs.mean(axis=0)
    return Zs - zbar, float(np.ldexp(zbar[0], e)), e


def _scaled(A):
    """``(A / 2^e, e)`` with ``e`` the binary exponent of ``A``'s largest entry (0 for zeros)."""
    e = _binary_exponent(float(np.max(np.abs(A))))
    return np.ldexp(A, -e), e


def _overflow(what: str, names: str, value, **sizes):
    """``value`` if finite, else ``ValueError`` naming ``names``: ``what`` exceeds a double."""
    if np.all(np.isfinite(value)):
        return value
    shown = ", ".join(f"max |{k}| = {v:.3g}" for k, v in sizes.items())
    raise ValueError(f"{names}: {what} exceed the largest double ({shown}); rescale {names.replace(', ', ' or ')}")


def _concat_deviations(config, X, Y, queries):
    """The heads' deviations from the training mean of a ``"concat"`` configuration, scaled.

    ``(ybar, D, e)`` of a ``"concat"`` configuration on one sample: the heads' deviations from the
    training mean, ``c_j(x_t) - Ybar = o_j(x_t) . W_O^j`` ``(H, T)``, are ``D * 2^e``.  The stream, ``W_V``
    and a fixed ``W_O`` are each divided by a power of two first (exactly), so that no product of finite
    inputs overflows on the way (values and an output projection of 1e200 gave NaN and inf).
    """
    Zs, ybar, e = _scaled_stream(X, Y)
    V, ev = _scaled(config.values)
    cols = config._value_columns
    S = _head_smooths(
        config.projections, X, np.ascontiguousarray(Zs[:, cols]), queries, config.kernel, config._scale()
    )  # (H, T, used columns)
    outputs = np.einsum("htu,hud->htd", S, V[:, cols])
    if isinstance(config.output, str):  # fitted on the scaled stream and values: it absorbs their scale
        O, eo, ev = _fitted_output(config, X, Zs, cols, V), 0, 0
    else:
        O, eo = _scaled(config.output)
    return ybar, np.einsum("htd,hd->ht", outputs, O), e + ev + eo


def _contributions_of(config, X, Y, queries) -> tuple[np.ndarray, float, np.ndarray]:
    """The contributions and the ensemble of a ``"concat"`` configuration, checked.

    ``(c (H, T), ybar, f (T,))``: the contributions and the ensemble of a ``"concat"`` configuration,
    or ``ValueError`` naming ``values, output`` (or ``Y``) when they exceed a double.
    """
    ybar, D, e = _concat_deviations(config, X, Y, queries)
    with np.errstate(over="ignore", invalid="ignore"):
        c = ybar + np.ldexp(D, e)
        f = ybar + np.ldexp(D.sum(axis=0), e)
    fixed = not isinstance(config.output, str)
    names = "Y, values, output" if fixed else "Y, values"
    sizes = {"Y": float(np.max(np.abs(Y))), "W_V": float(np.max(np.abs(config.values)))}
    if fixed:
        sizes["W_O"] = float(np.max(np.abs(config.output)))
    _overflow("the heads' contributions Ybar + o_j . W_O^j", names, c, **sizes)
    _overflow("the ensemble Ybar + sum_j o_j . W_O^j", names, f, **sizes)
    return c, ybar, f


def concat_contributions(config, X, Y, queries) -> np.ndarray:
    """The heads' contributions to the ensemble of a ``"concat"`` configuration.

    Head ``j``'s contribution is ``c_j(x_t) = Ybar + o_j(x_t) . W_O^j``; the ensemble is
    ``Ybar + sum_j (c_j - Ybar)``.  Computed at a scale where no product of finite inputs overflows.

    Parameters
    ----------
    config : HeadConfig
        A configuration of rule ``"concat"``.
    X : array (n, d)
        Training inputs.
    Y : array (n,)
        Training responses.
    queries : array (T, d)
        Test points.

    Returns
    -------
    numpy.ndarray
        ``(H, T)``.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig of rule ``"concat"``, the sample's array that does
        not fit it, or ``values, output`` when the contributions themselves exceed a double.
    """
    config = _concat_config(config)
    X, Y, queries = _check_sample(config, X, Y, queries)
    return config._contributions(X, Y, queries)


def ensemble_parts(config, X, Y, queries):
    """The ensemble of any rule as ``f(x_t) = sum_a w_a p_a(x_t)``: the input of Thm 3.1's decomposition.

    The parts and weights (:func:`mhanw.decomposition.bias_variance_covariance`, target ``m``):

    - ``"average"``: parts ``m_1..m_H``, weights ``a``;
    - ``"sum"``: parts ``m_1..m_H, Ybar``, weights ``a, 1 - sum a``;
    - ``"concat"``, fixed ``W_O``: parts ``Ybar`` then every head's smooth of every value
      column it reads, ``s_jk(x) = sum_i w_ij(x) (z_ik - zbar_k)``, with weights ``1`` and
      ``u_jk = (W_V^j W_O^j)_k`` (what plays the role of the head weights,
      :func:`mhanw.decomposition.symbolic_concat_decomposition`);
    - ``"concat"``, fitted ``W_O`` (then ``u`` depends on the sample): parts ``c_1..c_H, Ybar``,
      weights ``1, ..., 1, 1 - H``.

    In every case ``weights @ parts`` is :func:`ensemble_estimate` to rounding, and the weights do
    not depend on the sample.

    Parameters
    ----------
    config : HeadConfig
        The ensemble.
    X : array (n, d)
        Training inputs.
    Y : array (n,)
        Training responses.
    queries : array (T, d)
        Test points.

    Returns
    -------
    parts : numpy.ndarray
        ``(P, T)``.
    weights : numpy.ndarray
        ``(P,)``.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig, or the sample's array that does not fit it.
    """
    if not isinstance(config, HeadConfig):
        raise ValueError(f"config: expected a HeadConfig, got {type(config).__name__}")
    X, Y, queries = _check_sample(config, X, Y, queries)
    return config._parts(X, Y, queries)


def _concat_config(config):
    if not isinstance(config, HeadConfig):
        raise ValueError(f"config: expected a HeadConfig, got {type(config).__name__}")
    if config.rule != "concat":
        raise ValueError(f"config: expected a configuration of rule 'concat', got rule {config.rule!r}")
    return config


def _check_sample(config, X, Y, queries):
    X = as_float_array(X, "X", ndim=2)
    Y = as_float_array(Y, "Y", ndim=1)
    queries = as_float_array(queries, "queries", ndim=2)
    if X.shape[1] != config.d:
        raise ValueError(f"X: expected shape (n, {config.d}) to match the configuration, got {X.shape}")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y: expected {X.shape[0]} values (one per row of X), got shape {Y.shape}")
    if queries.shape[1] != config.d:
        raise ValueError(f"queries: expected shape (T, {config.d}), got {queries.shape}")
    return X, Y, queries


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True, eq=False)
class HeadConfig:
    """One ensemble to evaluate: projections, kernel, combination rule (Sections 3-5).

    The arguments are checked when the configuration is made; after that ``bandwidth``, ``beta``,
    ``weights``, ``values`` and ``output`` hold the values used (the rule's defaults filled in).

    Parameters
    ----------
    projections : array (H, d, d_k)
        Key projections ``W_j``.
    bandwidth : float > 0 or None, default :data:`mhanw.constants.BANDWIDTH`
        ``h`` of every kernel but attention (the reference setting).
    kernel : str, default "gaussian"
        One of :data:`KERNELS`.
    beta : float, optional
        Inverse temperature of attention only; default ``1/sqrt(d_k)``.
    rule : str, default "average"
        One of :data:`RULES`.
    weights : array (H,), optional
        Head weights (the rule's default when None); ``"concat"`` takes none (its output projection plays
        their part) and stores ones: the contributions are summed.
    label : str, default ""
        Free text for tables and legends.
    values : array (H, 1 + d, d_v) or str, optional
        ``"concat"`` only: ``W_V``, or ``"response"`` (the default, the shared response) or ``"stream"``
        (:data:`VALUES`).
    output : array (H, d_v) or str, optional
        ``"concat"`` only: ``W_O`` (default ones) or ``"fitted"``.

    Raises
    ------
    ValueError
        Naming the argument that does not fit: ``values`` or ``output`` for a rule other than
        ``"concat"``, ``weights`` for ``"concat"``, or any value that is out of range or of the wrong
        shape.
    """

    projections: np.ndarray
    bandwidth: float | None = _constants.BANDWIDTH
    kernel: str = "gaussian"
    beta: float | None = None
    rule: str = "average"
    weights: Any = None  # after checking, (H,): the rule's default when None
    label: str = ""
    # "concat" only; after checking, values is W_V (H, 1 + d, d_v) and output W_O (H, d_v) or "fitted"
    values: Any = None
    output: Any = None

    def __post_init__(self):
        W = _check_projections(self.projections)
        kernel, bandwidth, beta = _check_kernel(self.kernel, self.bandwidth, self.beta)
        one_of(self.rule, "rule", RULES)
        object.__setattr__(self, "projections", W)
        object.__setattr__(self, "bandwidth", bandwidth)
        object.__setattr__(self, "beta", beta)
        if self.rule != "concat":
            for name in ("values", "output"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"{name}: value and output projections belong to rule 'concat', got rule {self.rule!r}"
                    )
            object.__setattr__(self, "weights", _check_weights(self.weights, W.shape[0], self.rule))
            return
        if self.weights is not None:
            raise ValueError(
                "weights: rule 'concat' combines heads through its output projection (output), not weights"
            )
        V = _named_values("response" if self.values is None else self.values, W.shape[0], W.shape[1])
        object.__setattr__(self, "values", V)
        object.__setattr__(self, "output", _named_output(self.output, W.shape[0], V.shape[2]))
        object.__setattr__(self, "weights", np.ones(W.shape[0]))
        if not isinstance(self.output, str):
            with np.errstate(over="ignore", invalid="ignore"):
                u = np.einsum("hud,hd->hu", V, self.output)
            _overflow(
                "the weights W_V^j W_O^j of the value columns",
                "values, output",
                u,
                W_V=float(np.max(np.abs(V))),
                W_O=float(np.max(np.abs(self.output))),
            )

    @property
    def _value_columns(self) -> np.ndarray:
        """``"concat"``: the columns of the value stream that some head reads (the others are never smoothed)."""
        return np.flatnonzero(np.any(self.values != 0.0, axis=(0, 2)))

    @property
    def n_heads(self) -> int:
        """The number of heads ``H``."""
        return self.projections.shape[0]

    @property
    def d(self) -> int:
        """The input dimension ``d``."""
        return self.projections.shape[1]

    @property
    def d_k(self) -> int:
        """The head size ``d_k``."""
        return self.projections.shape[2]

    def _scale(self):
        return _inv_scale(self.kernel, self.bandwidth, self.beta, self.d_k)

    def _combine(self, est, ybar):
        """The ensemble from the head estimates (``"concat"``: the contributions) ``(H, T)``."""
        if self.rule == "average":
            return self.weights @ est
        return ybar + self.weights @ (est - ybar)

    def _contributions(self, X, Y, queries):
        """``"concat"``: the contributions ``c_j`` ``(H, T)`` on a checked sample."""
        return _contributions_of(self, X, Y, queries)[0]

    def _estimates(self, X, Y, queries):
        """What :meth:`_combine` combines: head estimates, or the contributions of ``"concat"``."""
        if self.rule == "concat":
            return self._contributions(X, Y, queries)
        return _head_estimates(self.projections, X, Y, queries, self.kernel, self._scale())

    def part_weights(self) -> np.ndarray:
        """The weights ``w`` of :func:`ensemble_parts` (they do not depend on the sample).

        Returns
        -------
        numpy.ndarray
            ``(P,)``.
        """
        if self.rule == "concat" and not isinstance(self.output, str):
            cols = self._value_columns
            u = np.einsum("hud,hd->hu", self.values[:, cols], self.output)  # (H, used columns)
            return np.concatenate([[1.0], u.reshape(-1)])
        if self.rule == "average":
            return self.weights.copy()
        return np.concatenate([self.weights, [1.0 - self.weights.sum()]])

    def _parts(self, X, Y, queries):
        """:func:`ensemble_parts` on a checked sample."""
        T = queries.shape[0]
        ybar = _mean(Y)
        if self.rule == "concat" and not isinstance(self.output, str):
            Zs, ybar, e = _scaled_stream(X, Y)
            cols = self._value_columns
            S = _head_smooths(
                self.projections, X, np.ascontiguousarray(Zs[:, cols]), queries, self.kernel, self._scale()
            )  # (H, T, used columns), the smooths of the stream divided by 2^e
            with np.errstate(over="ignore"):
                S = _overflow(
                    "the heads' smooths of the centred value stream z - zbar",
                    "Y, X",
                    np.ldexp(S, e),
                    Y=float(np.max(np.abs(Y))),
                    X=float(np.max(np.abs(X))),
                )
            parts = np.concatenate([np.full((1, T), ybar), S.transpose(0, 2, 1).reshape(-1, T)])
            return parts, self.part_weights()
        est = self._estimates(X, Y, queries)
        if self.rule == "average":
            return est, self.part_weights()
        return np.vstack([est, np.full((1, T), ybar)]), self.part_weights()


def ensemble_estimate(config: HeadConfig, X, Y, queries) -> np.ndarray:
    """The ensemble ``f(x_t)`` of ``config`` on ``D_n = (X, Y)``.

    Parameters
    ----------
    config : HeadConfig
        The ensemble.
    X : array (n, d)
        Training inputs.
    Y : array (n,)
        Training responses.
    queries : array (T, d)
        Test points.

    Returns
    -------
    numpy.ndarray
        ``(T,)``.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig, or the sample's array that does not fit it.
    """
    if not isinstance(config, HeadConfig):
        raise ValueError(f"config: expected a HeadConfig, got {type(config).__name__}")
    X, Y, queries = _check_sample(config, X, Y, queries)
    if config.rule == "concat":
        return _contributions_of(config, X, Y, queries)[2]
    est, ybar = config._estimates(X, Y, queries), _mean(Y)
    with np.errstate(over="ignore", invalid="ignore"):
        f = config._combine(est, ybar)
    if not np.all(np.isfinite(f)):  # m_j - Ybar of responses near the largest double: at a scale of one
        e = _binary_exponent(max(float(np.max(np.abs(est))), abs(ybar))) + 1
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.ldexp(config._combine(np.ldexp(est, -e), np.ldexp(ybar, -e)), e)
    return _overflow(
        "the ensemble", "Y, weights", f, Y=float(np.max(np.abs(Y))), weights=float(np.max(np.abs(config.weights)))
    )


def _mean(Y) -> float:
    """The mean of ``Y`` without overflow of its sum (responses near the largest double)."""
    top = float(np.max(np.abs(Y)))
    if top < 2.0**1000 / max(Y.shape[0], 1):
        return float(Y.mean())
    e = _binary_exponent(top)
    return float(np.ldexp(np.ldexp(Y, -e).mean(), e))
