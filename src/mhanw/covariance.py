"""Covariance of two Nadaraya-Watson heads (Lemma 4.1).

Lemma 4.1 of the paper bounds the covariance of two heads by the cross-Gram
matrix of their key projections.  This module holds:

- :func:`printed_covariance_bound`, the bound as printed;
- closed forms of the covariance factor of two Gaussian-kernel heads at principal
  angle ``phi`` (:func:`kernel_overlap`, :func:`covariance_factor`,
  :func:`head_correlation`, :func:`covariance_factor_symbolic`);
- :func:`first_order_covariance`, the first-order (large ``n``) covariance
  ``n C -> kappa (sigma^2 + D)`` with its signal term by Gauss-Hermite quadrature.

Geometry (principal angles, cross-Gram matrices) is :mod:`mhanw.diversity`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from . import data as _data

from .diversity import _full_rank, _matrix, cross_gram
from .infra.validate import as_float_array, nonnegative_scalar, positive_int, positive_scalar
__all__ = [
    "FirstOrderCovariance",
    "covariance_factor",
    "covariance_factor_symbolic",
    "first_order_covariance",
    "head_correlation",
    "kernel_overlap",
    "printed_covariance_bound",
]


def printed_covariance_bound(W_j, W_jp, x, lipschitz: float, n: int, bandwidth: float) -> float:
    """Lemma 4.1's bound as printed: ``L^2 ||G_jj'||_F^2 / (n h^{d_k} p_K(W_j^T x))``.

    ``W_j``, ``W_jp``: ``(d, d_k)``; ``x``: ``(d,)``; ``G = W_j^T W_jp / d_k``
    (:func:`cross_gram`); ``p_K`` is the density of the projected keys
    ``W_j^T X`` for ``X ~ N(0, I_d)``, i.e. ``N(0, W_j^T W_j)``; ``h`` is the
    kernel bandwidth.  The bound is 0 for constant ``m`` (``L = 0``) and for
    orthogonal heads, while the covariance is not (documented failure).
    """
    Wj = _matrix(W_j, "W_j")
    Wjp = _matrix(W_jp, "W_jp")
    if Wjp.shape != Wj.shape:
        raise ValueError(f"W_jp: expected the shape of W_j {Wj.shape}, got {Wjp.shape}")
    x = as_float_array(x, "x", ndim=1)
    if x.shape[0] != Wj.shape[0]:
        raise ValueError(f"x: expected shape ({Wj.shape[0]},), got {x.shape}")
    L = nonnegative_scalar(lipschitz, "lipschitz")
    n = positive_int(n, "n")
    h = positive_scalar(bandwidth, "bandwidth")
    d_k = Wj.shape[1]
    G = cross_gram(Wj, Wjp)
    S = Wj.T @ Wj
    _full_rank(Wj, "W_j")
    z = Wj.T @ x
    _, logdet = np.linalg.slogdet(S)
    log_p = -0.5 * (d_k * np.log(2 * np.pi) + logdet + z @ np.linalg.solve(S, z))
    return float(L**2 * (G * G).sum() / (n * h**d_k * np.exp(log_p)))


def _log_gauss_kernel_mean(M: np.ndarray, x: np.ndarray) -> float:
    """``log E exp(-(X - x)^T M (X - x) / 2)`` for ``X ~ N(0, I)``, ``M`` psd."""
    I_M = np.eye(M.shape[0]) + M
    _, logdet = np.linalg.slogdet(I_M)
    return -0.5 * logdet - 0.5 * float(x @ M @ np.linalg.solve(I_M, x))


def kernel_overlap(W_j, W_jp, x, bandwidth: float) -> float:
    """``kappa_jj'(x) = E[K_j K_j'] / (E K_j E K_j')`` for Gaussian heads, ``X ~ N(0, I_d)`` (Lemma 4.1, corrected).

    ``K_j = exp(-|W_j^T (x - X)|^2 / (2 h^2))``; ``W_j``, ``W_jp`` ``(d, d_k)``,
    ``x`` ``(d,)``.  To first order in ``1/n`` the noise part of the covariance
    of the two heads is ``sigma^2 kappa_jj'(x) / n`` (the corrected Lemma 4.1);
    ``kappa`` is the single-head variance factor for identical heads and 1 for
    heads on orthogonal coordinates.  Exact Gaussian integrals:
    ``E exp(-(X-x)^T M (X-x)/2) = det(I + M)^{-1/2} exp(-x^T M (I + M)^{-1} x / 2)``.
    """
    Wj = _matrix(W_j, "W_j")
    Wjp = _matrix(W_jp, "W_jp")
    if Wjp.shape[0] != Wj.shape[0]:
        raise ValueError(f"W_jp: expected {Wj.shape[0]} rows to match W_j {Wj.shape}, got {Wjp.shape}")
    x = as_float_array(x, "x", ndim=1)
    if x.shape[0] != Wj.shape[0]:
        raise ValueError(f"x: expected shape ({Wj.shape[0]},), got {x.shape}")
    h = positive_scalar(bandwidth, "bandwidth")
    Mj = Wj @ Wj.T / h**2
    Mjp = Wjp @ Wjp.T / h**2
    log_k = (_log_gauss_kernel_mean(Mj + Mjp, x) - _log_gauss_kernel_mean(Mj, x)
             - _log_gauss_kernel_mean(Mjp, x))
    return float(np.exp(log_k))


def covariance_factor(phi, bandwidth):
    """Closed form ``n C / sigma^2 = (1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)`` (corrected Lemma 4.1).

    First-order covariance of two one-dimensional Gaussian heads ``u``, ``v``
    with ``u . v = cos phi`` at ``x = 0``, ``m = 0``, ``X ~ N(0, I)``.
    ``phi`` (radians) and ``bandwidth`` broadcast.  1 at ``phi = pi/2``;
    ``(1 + h^2)/(h sqrt(2 + h^2)) ~ 1/(sqrt(2) h)`` at ``phi = 0``.
    """
    phi = as_float_array(phi, "phi", ndim=None)
    h = as_float_array(bandwidth, "bandwidth", ndim=None)
    if np.any(h <= 0):
        raise ValueError("bandwidth: expected positive values")
    a = 1.0 + h * h
    return (a / np.sqrt(a * a - np.cos(phi) ** 2))[()]


def head_correlation(phi, bandwidth):
    """Closed-form correlation of the two heads of :func:`covariance_factor`:
    ``rho = sqrt((1 + h^2)^2 - 1) / sqrt((1 + h^2)^2 - cos^2 phi)`` (Lemma 4.1, Sec. 12)."""
    phi = as_float_array(phi, "phi", ndim=None)
    h = as_float_array(bandwidth, "bandwidth", ndim=None)
    if np.any(h <= 0):
        raise ValueError("bandwidth: expected positive values")
    a = 1.0 + h * h
    return (np.sqrt(a * a - 1.0) / np.sqrt(a * a - np.cos(phi) ** 2))[()]


def covariance_factor_symbolic():
    """Sympy derivation of :func:`covariance_factor` (Lemma 4.1, check L4.1d).

    Steps, with normalised kernels
    ``K = exp(-(u^T X)^2/(2 h^2)) / (sqrt(2 pi) h)``:
    ``E[K K'] = 1 / (2 pi h^2 sqrt(det A))``, ``A = I + (u u^T + v v^T)/h^2``;
    ``E K = 1 / sqrt(2 pi (1 + h^2))``.

    Returns ``(ratio, (h, phi))``: the simplified ``E[K K'] / (E K)^2`` and its
    positive symbols.
    """
    import sympy as sp

    h, phi = sp.symbols("h phi", positive=True)
    u = sp.Matrix([1, 0])
    v = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    A = sp.eye(2) + (u * u.T + v * v.T) / h**2
    e_kk = 1 / (2 * sp.pi * h**2 * sp.sqrt(sp.simplify(A.det())))
    e_k = 1 / sp.sqrt(2 * sp.pi * (1 + h**2))
    return sp.simplify(e_kk / e_k**2), (h, phi)



#: Largest number of Gauss-Hermite nodes (``nodes ** d``) :func:`first_order_covariance` accepts.
MAX_QUADRATURE_POINTS = 1 << 21


@dataclass(frozen=True)
class FirstOrderCovariance:
    """The first-order covariance of two Gaussian NW heads at ``x`` (Lemma 4.1, corrected).

    ``covariance = kappa * (sigma^2 + signal) / n`` with

    - ``kappa = E[K_j K_j'] / (E K_j E K_j')`` (:func:`kernel_overlap`);
    - ``signal = D_jj'(x) = E_q[(m(X) - mu_j)(m(X) - mu_j')]``, ``q`` the
      Gaussian density proportional to ``K_j K_j' p_X`` and
      ``mu_j = E[K_j m(X)] / E[K_j]`` the large-sample limit of head ``j``;
    - ``noise = kappa sigma^2 / n``, the part that is left for constant ``m``.
    """

    covariance: float
    noise: float
    signal: float
    kappa: float
    limits: tuple

    @property
    def signal_part(self) -> float:
        """``covariance - noise``: the contribution of ``m`` (zero for constant ``m``)."""
        return self.covariance - self.noise


def _kernel_tilted_gaussian(M: np.ndarray, x: np.ndarray):
    """Mean and covariance of the density proportional to ``exp(-(X-x)^T M (X-x)/2) N(X; 0, I)``."""
    S = np.linalg.inv(np.eye(M.shape[0]) + M)
    S = 0.5 * (S + S.T)
    return S @ M @ x, S


@functools.lru_cache(maxsize=8)
def _standard_gauss_hermite(nodes: int, d: int):
    """Tensor Gauss-Hermite rule for ``N(0, I_d)``: nodes ``(N, d)`` and weights ``(N,)``, read-only."""
    z, w = hermegauss(nodes)
    w = w / w.sum()
    Z = np.stack(np.meshgrid(*([z] * d), indexing="ij"), axis=-1).reshape(-1, d)
    weights = np.prod(np.stack(np.meshgrid(*([w] * d), indexing="ij"), axis=-1).reshape(-1, d), axis=1)
    Z.flags.writeable = False
    weights.flags.writeable = False
    return Z, weights


def _gauss_hermite(mean: np.ndarray, cov: np.ndarray, nodes: int):
    """Tensor Gauss-Hermite nodes ``(N, d)`` and weights ``(N,)`` for ``N(mean, cov)``."""
    Z, weights = _standard_gauss_hermite(nodes, mean.shape[0])
    return mean + Z @ np.linalg.cholesky(cov).T, weights


def first_order_covariance(W_j, W_jp, x, bandwidth: float, n: int, sigma: float = 0.5,
                           regression="zero", nodes: int = 12) -> FirstOrderCovariance:
    """First-order covariance of two Gaussian NW heads at ``x``, ``X ~ N(0, I_d)`` (Lemma 4.1, corrected).

    Linearising ``m_j = sum_i K_ij Y_i / sum_i K_ij`` around its limit
    ``mu_j = E[K_j Y] / E[K_j]`` gives

        n Cov(m_j(x), m_j'(x)) = E[K_j K_j' (Y - mu_j)(Y - mu_j')] / (E K_j E K_j') + o(1)
                               = kappa_jj'(x) (sigma^2 + D_jj'(x)) + o(1),

    with ``kappa`` of :func:`kernel_overlap` and ``D_jj'(x)`` the covariance of
    the two heads' residuals ``m(X) - mu_j`` under the Gaussian density
    proportional to ``K_j K_j' p_X``.  ``D = 0`` for constant ``m``.  All
    Gaussian expectations except those of ``m`` are exact; those of ``m`` use
    a tensor Gauss-Hermite rule with ``nodes`` points per dimension (exact for
    polynomials of degree ``< 2 nodes``; at the default ``nodes = 12`` the
    values for ``sin13`` and ``bvc`` in ``d = 4`` agree with ``nodes = 24`` to
    1e-8, in about 5 ms).

    Parameters
    ----------
    W_j, W_jp : arrays ``(d, d_k)`` and ``(d, d_k')``
    x : array ``(d,)``
    bandwidth : float > 0
    n : int >= 1
    sigma : float >= 0
    regression : str or RegressionFunction (:mod:`mhanw.data`), default ``"zero"``
    nodes : int >= 2, with ``nodes ** d <= MAX_QUADRATURE_POINTS``

    Returns
    -------
    FirstOrderCovariance
        ``covariance`` is the first-order ``C_jj'(x)``; ``limits`` the pair
        ``(mu_j, mu_j')``.
    """

    Wj = _matrix(W_j, "W_j")
    Wjp = _matrix(W_jp, "W_jp")
    if Wjp.shape[0] != Wj.shape[0]:
        raise ValueError(f"W_jp: expected {Wj.shape[0]} rows to match W_j {Wj.shape}, got {Wjp.shape}")
    x = as_float_array(x, "x", ndim=1)
    d = Wj.shape[0]
    if x.shape[0] != d:
        raise ValueError(f"x: expected shape ({d},), got {x.shape}")
    h = positive_scalar(bandwidth, "bandwidth")
    n = positive_int(n, "n")
    sigma = nonnegative_scalar(sigma, "sigma")
    m = _data.regression_function(regression)
    if d < m.min_dim:
        raise ValueError(f"x: {m.name!r} needs d >= {m.min_dim}, got d = {d}")
    nodes = positive_int(nodes, "nodes", minimum=2)
    if nodes**d > MAX_QUADRATURE_POINTS:
        raise ValueError(f"nodes: nodes ** d = {nodes}**{d} exceeds {MAX_QUADRATURE_POINTS} quadrature points")
    kappa = kernel_overlap(Wj, Wjp, x, h)
    Mj, Mjp = Wj @ Wj.T / h**2, Wjp @ Wjp.T / h**2

    def expect(M, f):
        pts, w = _gauss_hermite(*_kernel_tilted_gaussian(M, x), nodes)
        return float(w @ f(pts))

    mu_j = expect(Mj, m._func)
    mu_jp = expect(Mjp, m._func)
    signal = expect(Mj + Mjp, lambda X: (m._func(X) - mu_j) * (m._func(X) - mu_jp))
    return FirstOrderCovariance(
        covariance=kappa * (sigma**2 + signal) / n,
        noise=kappa * sigma**2 / n,
        signal=signal,
        kappa=kappa,
        limits=(mu_j, mu_jp),
    )
