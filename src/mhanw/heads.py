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
  and concatenation-like (``Ybar`` the training mean of ``Y``).

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

import numpy as np

from . import constants as _constants
from . import diversity as _diversity
from . import nw as _nw
from .constants import check_entries
from .infra.validate import (
    as_float_array,
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
    "combine",
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
RULES = ("average", "sum")


#: Tolerance on ``sum(weights) == 1`` for the ``"average"`` rule (:data:`mhanw.constants.WEIGHT_SUM_TOL`).
WEIGHT_SUM_TOL = _constants.WEIGHT_SUM_TOL


# --------------------------------------------------------------------------- families


def orthonormalize(A) -> np.ndarray:
    """Orthonormal basis of ``range(A)`` by QR with ``diag(R) > 0``; ``A`` ``(d, d_k)``, ``d >= d_k``.

    :func:`mhanw.diversity.orthonormal_bases` of one matrix.  Raises
    ``ValueError`` naming ``A`` if its columns are (numerically) dependent.
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
    """``n_heads`` copies of one projection, shape ``(H, d, d_k)``.

    ``basis`` ``(d, d_k)`` defaults to ``[e_1 ... e_dk]``.  HDI_PA = 0
    (Thm 3.1 check T3.1c; the worst case of S-weak, Thm 4.2).
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
    """Orthogonal coordinate blocks ``W_j = [e_{(j-1)d_k+1} ... e_{j d_k}]``, ``(H, d, d_k)``.

    Needs ``H d_k <= d``.  HDI_PA = HDI_printed = 1 (Thm 5.1's optimum).
    """
    d, d_k, n_heads = _dims(d, d_k, n_heads, lambda d, k, H: H * k > d, "expected n_heads * d_k <= d")
    return np.stack([_eye_block(d, j * d_k, d_k) for j in range(n_heads)])


def pair_heads(theta: float, d: int, d_k: int) -> np.ndarray:
    """The isoclinic pair: ``W_1 = U_0``, ``W_2 = cos(theta) U_0 + sin(theta) E``, ``(2, d, d_k)``.

    ``U_0 = [e_1 ... e_dk]``, ``E = [e_{dk+1} ... e_{2dk}]`` (needs ``2 d_k <= d``);
    ``theta`` in radians.  All ``d_k`` principal angles equal ``theta``;
    HDI_PA = sin^2(theta), HDI_printed = 1 - cos^2(theta)/d_k (Thm 3.1 figure,
    Lemma 4.1, Thm 4.2 (A)).
    """
    theta = real_scalar(theta, "theta")
    d, d_k, _ = _dims(d, d_k, 2, lambda d, k, H: 2 * k > d, "pair(theta) needs 2 d_k <= d", name="d")
    U0, E = _eye_block(d, 0, d_k), _eye_block(d, d_k, d_k)
    return np.stack([U0, np.cos(theta) * U0 + np.sin(theta) * E])


def star_heads(theta: float, d: int, d_k: int, n_heads: int) -> np.ndarray:
    """The star: ``W_j = cos(theta) U_0 + sin(theta) E_j``, ``(H, d, d_k)``.

    ``U_0, E_1, ..., E_H`` are consecutive coordinate blocks (needs
    ``(H + 1) d_k <= d``); ``theta`` in radians.  Every pair has all principal
    angles equal to ``arccos(cos^2 theta)``; HDI_PA = 1 - cos^4(theta).
    """
    theta = real_scalar(theta, "theta")
    d, d_k, n_heads = _dims(d, d_k, n_heads, lambda d, k, H: (H + 1) * k > d,
                            "star(theta) needs (n_heads + 1) * d_k <= d")
    U0 = _eye_block(d, 0, d_k)
    return np.stack([np.cos(theta) * U0 + np.sin(theta) * _eye_block(d, (j + 1) * d_k, d_k)
                     for j in range(n_heads)])


def graded_heads(angles, d: int) -> np.ndarray:
    """One-dimensional heads of graded quality, ``u_j = cos(theta_j) e_1 + sin(theta_j) e_{j+1}``, ``(H, d, 1)``.

    ``angles`` ``(H,)`` in radians.  For a regression function that depends on
    ``x_1`` only (``"blind"``), head ``j`` sees the signal direction at angle
    ``theta_j``: increasing angles give heads of decreasing quality (Thm 7.1,
    graded heads).  Needs ``d >= H + 1``.  Distinct
    ``e_{j+1}`` make the heads pairwise at cosine ``cos(theta_j) cos(theta_j')``.
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
    """A Haar-distributed orthonormal ``(d, d_k)`` frame: QR of a Gaussian matrix, ``diag(R) > 0``."""
    d, d_k, _ = _dims(d, d_k, 1)
    generator(rng, "rng")
    return orthonormalize(rng.standard_normal((d, d_k)))


def haar_heads(d: int, d_k: int, n_heads: int, rng) -> np.ndarray:
    """``n_heads`` independent Haar frames, ``(H, d, d_k)``; E[HDI_PA] = 1 - d_k/d.

    The same draws as ``n_heads`` calls of :func:`haar_basis`.
    """
    d, d_k, n_heads = _dims(d, d_k, n_heads)
    generator(rng, "rng")
    return _diversity.orthonormal_bases(rng.standard_normal((n_heads, d, d_k)))


def interpolated_heads(t: float, d: int, d_k: int, n_heads: int, rng) -> np.ndarray:
    """``W_j = orth((1 - t) U + t Z_j)`` with ``U, Z_1..Z_H`` Haar, ``(H, d, d_k)``.

    ``t = 0`` gives identical heads (HDI_PA = 0), ``t = 1`` independent Haar
    heads; intermediate ``t`` spread HDI_PA upward (Thm 4.2 (D)).  Draws
    ``U`` then ``Z_1, ..., Z_H`` from ``rng``.
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
    """Multiplier of the raw logits as ``(mantissa, exponent)`` (see :func:`mhanw.nw.logit_scale`):
    ``h^-p`` for a kernel with a bandwidth (``1/h^2`` Gaussian), or ``beta`` (attention, default
    ``1/sqrt(d_k)``)."""
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
    """Unchecked core of :func:`head_estimates`; returns ``(H, T)``.

    ``scale`` is the logit multiplier as ``(mantissa, exponent)``, scalars or one
    per head ``(H,)`` (``1/h^2`` for the Gaussian kernel, ``beta`` for
    attention).  Projects queries and keys of every head, then evaluates all
    heads in one call of the engine :func:`mhanw.nw.weighted_mean`, the
    response ``Y`` shared by all heads.
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
    return _nw.weighted_mean(Q, (X, W), Y[None, :, None], nw_kernel, scale, block_entries)[..., 0]


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
        groups = {}
        for i, c in enumerate(configs):
            groups.setdefault((c.kernel, c.d_k), []).append(i)
        self.groups = []
        for (kernel, _), members in groups.items():
            W = np.concatenate([configs[i].projections for i in members])
            parts = [(configs[i]._scale(), configs[i].n_heads) for i in members]
            scale = (np.concatenate([np.full(H, m) for (m, _), H in parts]),
                     np.concatenate([np.full(H, e) for (_, e), H in parts]))
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
        """Head estimates of every configuration, a list of ``(H_c, T)`` arrays."""
        prepared = self._prepared if self._prepared is not None else self._prepare()
        out = [None] * len(self.configs)
        for (kernel, W, scale, slices), (engine, flat, ew, fixed) in zip(self.groups, prepared):
            est = self._group(kernel, W, scale, engine, flat, ew, fixed, X, Y, queries)
            for i, sl in slices.items():
                out[i] = est[sl]
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
    """Estimates ``m_j(x_t)`` of every head at every query, shape ``(H, T)`` (Sec. 3).

    Parameters
    ----------
    projections : array ``(H, d, d_k)``
        Key projections ``W_j`` (used for queries and keys alike).
    X : array ``(n, d)``; Y : array ``(n,)``
        Training sample ``D_n``, one shared response for all heads.
    queries : array ``(T, d)``
        Test points ``x_t``.
    bandwidth : float > 0
        ``h`` of the kernel; required for every kernel but ``"attention"``.
    kernel : one of :data:`KERNELS`
    beta : float, optional
        Inverse temperature of ``kernel="attention"``; default ``1/sqrt(d_k)``.

    Equals ``mhanw.nw.nadaraya_watson(queries @ W_j, X @ W_j, Y, h)`` (gaussian)
    and ``mhanw.nw.softmax_attention(queries @ W_j, X @ W_j, Y, beta)``
    (attention) head by head, to rounding.  Any finite inputs give finite
    estimates within ``[min Y, max Y]``: where a kernel weight is not a float
    (``h`` down to 1e-300, inputs of 1e200, ``beta = 1e308``) the estimate is its
    limit, the mean response of the nearest (resp. best-aligned) keys.
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
    """Combine head estimates ``(H,)`` or ``(H, T)`` into the ensemble, ``()`` or ``(T,)``.

    - ``"average"``: ``sum_j a_j m_j``; ``weights`` must sum to 1 (default 1/H).
    - ``"sum"``: ``y_mean + sum_j a_j (m_j - y_mean)``; ``weights`` default 1;
      ``y_mean`` (the training mean ``Ybar``) is required.
    """
    est = as_float_array(estimates, "estimates", ndim=(1, 2))
    one_of(rule, "rule", RULES)
    a = _check_weights(weights, est.shape[0], rule)
    if rule == "average":
        return np.tensordot(a, est, axes=1)
    if y_mean is None:
        raise ValueError("y_mean: required for rule='sum', got None")
    ybar = real_scalar(y_mean, "y_mean")
    return ybar + np.tensordot(a, est - ybar, axes=1)


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True, eq=False)
class HeadConfig:
    """One ensemble to evaluate: projections, kernel, combination rule.

    Attributes
    ----------
    projections : array ``(H, d, d_k)``
    bandwidth : float > 0 (every kernel but attention), default :data:`mhanw.constants.BANDWIDTH`
        (reference setting)
    kernel : one of :data:`KERNELS`
    beta : float or None (attention only; default ``1/sqrt(d_k)``)
    rule : {"average", "sum"}
    weights : array ``(H,)`` or None (the rule's default)
    label : str, free text for tables and legends
    """

    projections: np.ndarray
    bandwidth: float | None = _constants.BANDWIDTH
    kernel: str = "gaussian"
    beta: float | None = None
    rule: str = "average"
    weights: np.ndarray | None = None
    label: str = ""

    def __post_init__(self):
        W = _check_projections(self.projections)
        kernel, bandwidth, beta = _check_kernel(self.kernel, self.bandwidth, self.beta)
        one_of(self.rule, "rule", RULES)
        object.__setattr__(self, "projections", W)
        object.__setattr__(self, "bandwidth", bandwidth)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "weights", _check_weights(self.weights, W.shape[0], self.rule))

    @property
    def n_heads(self) -> int:
        return self.projections.shape[0]

    @property
    def d(self) -> int:
        return self.projections.shape[1]

    @property
    def d_k(self) -> int:
        return self.projections.shape[2]

    def _scale(self):
        return _inv_scale(self.kernel, self.bandwidth, self.beta, self.d_k)

    def _combine(self, est, ybar):
        if self.rule == "average":
            return self.weights @ est
        return ybar + self.weights @ (est - ybar)


def ensemble_estimate(config: HeadConfig, X, Y, queries) -> np.ndarray:
    """The ensemble ``f(x_t)`` of ``config`` on ``D_n = (X, Y)``, shape ``(T,)``."""
    if not isinstance(config, HeadConfig):
        raise ValueError(f"config: expected a HeadConfig, got {type(config).__name__}")
    Y = as_float_array(Y, "Y", ndim=1)
    est = head_estimates(config.projections, X, Y, queries, config.bandwidth, config.kernel, config.beta)
    return config._combine(est, Y.mean())
