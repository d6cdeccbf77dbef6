"""Covariance of two Nadaraya-Watson heads (Lemma 4.1).

Lemma 4.1 of the paper bounds the covariance of two heads by the cross-Gram
matrix of their key projections.  This module holds:

- :func:`printed_covariance_bound`, the bound as printed;
- closed forms of the covariance factor of two Gaussian-kernel heads at principal
  angle ``phi`` (:func:`kernel_overlap`, :func:`covariance_factor`,
  :func:`head_correlation`, :func:`covariance_factor_symbolic`);
- :func:`first_order_covariance`, the first-order (large ``n``) covariance
  ``n C -> kappa (sigma^2 + D)`` with its signal term by Gauss-Hermite quadrature;
- :func:`first_order_covariance_mc`, the same prediction by a large seeded
  Monte Carlo sample of ``X`` under any :class:`mhanw.data.DataModel`.

Assumption on the inputs: the closed forms (:func:`kernel_overlap`,
:func:`covariance_factor`, :func:`head_correlation`, the density ``p_K`` of
:func:`printed_covariance_bound`) assume ``X ~ N(0, I_d)``;
:func:`kernel_overlap` and :func:`first_order_covariance` are exact for any
Gaussian input law of :mod:`mhanw.data` through their ``inputs`` argument
(``X = A Z`` with ``Z ~ N(0, I)``: the heads become ``A W`` and the point
``A^{-1} x``).  For other laws (:func:`mhanw.data.is_reference_gaussian` is
``False`` and the law is not Gaussian) use :func:`first_order_covariance_mc`.

Geometry (principal angles, cross-Gram matrices) is :mod:`mhanw.diversity`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit

from . import data as _data
from .constants import check_entries
from .diversity import _full_rank, _matrix, cross_gram
from .infra.expressions import exact_number
from .infra.validate import as_float_array, as_seed_sequence, brief, nonnegative_scalar, positive_int, positive_scalar

__all__ = [
    "FirstOrderCovariance",
    "covariance_factor",
    "covariance_factor_symbolic",
    "first_order_covariance",
    "first_order_covariance_mc",
    "first_order_covariance_model",
    "head_correlation",
    "kernel_overlap",
    "kernel_overlap_symbolic",
    "SymbolicOverlap",
    "printed_covariance_bound",
    "MC_SAMPLES",
    "MIN_EFFECTIVE_DRAWS",
    "MAX_QUADRATURE_POINTS",
    "MAX_SYMBOLIC_LOG10",
]


def printed_covariance_bound(W_j, W_jp, x, lipschitz: float, n: int, bandwidth: float) -> float:
    """Lemma 4.1's bound as printed: ``L^2 ||G_jj'||_F^2 / (n h^(d_k) p_K(W_j^T x))``.

    ``G = W_j^T W_jp / d_k`` (:func:`mhanw.diversity.cross_gram`); ``p_K`` is the density of the
    projected keys ``W_j^T X`` for ``X ~ N(0, I_d)``, i.e. ``N(0, W_j^T W_j)``.  The bound is 0 for
    constant ``m`` (``L = 0``) and for orthogonal heads, while the covariance is not (a documented
    failure).  Assumes ``X ~ N(0, I_d)`` (through ``p_K``).

    Parameters
    ----------
    W_j : array (d, d_k)
        Head ``j``'s projection.
    W_jp : array (d, d_k)
        Head ``j'``'s projection, of the same shape.
    x : array (d,)
        The point.
    lipschitz : float >= 0
        ``L``, the Lipschitz constant of ``m``.
    n : int >= 1
        The sample size.
    bandwidth : float > 0
        ``h``.

    Returns
    -------
    float
        The bound (``inf`` where the density underflows).

    Raises
    ------
    ValueError
        Naming ``W_jp`` or ``x`` when its shape does not fit ``W_j``, or the argument that is out of
        range.
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
    _full_rank(Wj, "W_j")
    # Heads far from unit scale (1e-300, 1e200) are divided by powers of two 2^e, e_j' (exact), and
    # the scales enter in logs: ||G||^2 ~ 2^(2 e + 2 e_j'), det S ~ 2^(2 d_k e), z^T S^-1 z unchanged.
    tops = np.array([np.abs(Wj).max(), np.abs(Wjp).max()])
    e, ep = np.frexp(tops)[1] if np.any((tops < 2.0**-200) | (tops > 2.0**200)) else (0, 0)
    Wj, Wjp = np.ldexp(Wj, -e), np.ldexp(Wjp, -ep)
    G = cross_gram(Wj, Wjp)
    S = Wj.T @ Wj
    z = Wj.T @ x
    _, logdet = np.linalg.slogdet(S)
    log_p = -0.5 * (d_k * np.log(2 * np.pi) + logdet + 2 * d_k * e * np.log(2.0) + z @ np.linalg.solve(S, z))
    g2 = float((G * G).sum())
    if L == 0.0 or g2 == 0.0:
        return 0.0
    # In logs: h**d_k and p_K underflow for tiny bandwidths or far-out x.
    log_bound = 2.0 * np.log(L) + np.log(g2) + 2 * (e + ep) * np.log(2.0) - np.log(n) - d_k * np.log(h) - log_p
    return _finite_exp(log_bound, "bandwidth", "the printed bound")


def _finite_exp(log_value: float, name: str, what: str) -> float:
    """``exp(log_value)``, or ``ValueError`` naming ``name`` when it overflows a double."""
    if not np.isfinite(log_value) or log_value > _LOG_MAX:
        raise ValueError(
            f"{name}: {what} is exp({float(log_value):.6g}), beyond the largest double; use a larger bandwidth"
        )
    return float(np.exp(log_value))


#: ``log`` of the largest double.
_LOG_MAX = float(np.log(np.finfo(np.float64).max))


def _scaled_svd(B: np.ndarray, h: float):
    """``U``, ``log(s / h)`` of the numerically non-zero singular values ``s`` of ``B``.

    ``M = B B^T / h^2 = U diag(exp(2 r)) U^T`` with ``r = log(s / h)``: the
    kernel's matrix in a form that neither overflows for tiny ``h`` nor keeps
    rounding noise as a direction (singular values below the usual rank
    tolerance ``max(s) max(B.shape) eps`` are zero).
    """
    U, sv, _ = np.linalg.svd(B, full_matrices=False)
    keep = sv > (sv[0] if sv.size else 0.0) * max(B.shape) * np.finfo(np.float64).eps
    return U[:, keep], np.log(sv[keep]) - np.log(h)


def _log_gauss_kernel_mean(B: np.ndarray, h: float, x: np.ndarray) -> float:
    """``log E exp(-|B^T (X - x)|^2 / (2 h^2))`` for ``X ~ N(0, I)``.

    With ``M = B B^T / h^2 = U diag(exp(2 r)) U^T`` (:func:`_scaled_svd`):
    ``log det(I + M) = sum log(1 + exp(2 r))`` and
    ``x^T M (I + M)^{-1} x = sum (U^T x)^2 / (1 + exp(-2 r))``, both finite for
    any ``h > 0``.
    """
    U, r = _scaled_svd(B, h)
    logdet = float(np.sum(np.logaddexp(0.0, 2.0 * r)))
    ux = U.T @ x
    quad = float(np.sum(ux * ux * expit(2.0 * r)))
    return -0.5 * logdet - 0.5 * quad


def _pair_and_point(W_j, W_jp, x):
    """The two heads and the point, checked.

    ``W_j`` ``(d, d_k)``, ``W_jp`` ``(d, d_k')`` and ``x`` ``(d,)`` as checked float arrays
    (``ValueError`` naming the first argument that is wrong).
    """
    Wj = _matrix(W_j, "W_j")
    Wjp = _matrix(W_jp, "W_jp")
    if Wjp.shape[0] != Wj.shape[0]:
        raise ValueError(f"W_jp: expected {Wj.shape[0]} rows to match W_j {Wj.shape}, got {Wjp.shape}")
    x = as_float_array(x, "x", ndim=1)
    if x.shape[0] != Wj.shape[0]:
        raise ValueError(f"x: expected shape ({Wj.shape[0]},), got {x.shape}")
    return Wj, Wjp, x


def kernel_overlap(W_j, W_jp, x, bandwidth: float, inputs="gaussian") -> float:
    """``kappa_jj'(x) = E[K_j K_j'] / (E K_j E K_j')`` for Gaussian heads (Lemma 4.1, corrected).

    ``K_j = exp(-|W_j^T (x - X)|^2 / (2 h^2))``.  To first order in ``1/n`` the noise part of the
    covariance of the two heads is ``sigma^2 kappa_jj'(x) / n`` (the corrected Lemma 4.1); ``kappa`` is
    the single-head variance factor for identical heads and 1 for heads on orthogonal coordinates.
    Exact Gaussian integrals:
    ``E exp(-(X-x)^T M (X-x)/2) = det(I + M)^(-1/2) exp(-x^T M (I + M)^(-1) x / 2)``.

    Parameters
    ----------
    W_j : array (d, d_k)
        Head ``j``'s projection.
    W_jp : array (d, d_k')
        Head ``j'``'s projection.
    x : array (d,)
        The point.
    bandwidth : float > 0
        ``h``.
    inputs : str or mhanw.data.InputDistribution, default "gaussian"
        The input law (the reference ``N(0, I_d)``); any Gaussian law of :mod:`mhanw.data` (exact, by
        the change of variables ``X = A Z``).

    Returns
    -------
    float
        ``kappa``.

    Raises
    ------
    ValueError
        Naming ``inputs`` for a law that is not Gaussian (use :func:`first_order_covariance_mc`), or the
        argument that is out of range or of the wrong shape.
    """
    Wj, Wjp, x = _pair_and_point(W_j, W_jp, x)
    h = positive_scalar(bandwidth, "bandwidth")
    A = _whitening(inputs, Wj.shape[0])
    if A is not None:
        Wj, Wjp, x = A @ Wj, A @ Wjp, np.linalg.solve(A, x)
    # M_j + M_j' = [W_j W_j'] [W_j W_j']^T / h^2.
    log_k = (
        _log_gauss_kernel_mean(np.hstack([Wj, Wjp]), h, x)
        - _log_gauss_kernel_mean(Wj, h, x)
        - _log_gauss_kernel_mean(Wjp, h, x)
    )
    return _finite_exp(log_k, "bandwidth", "the kernel overlap")


def covariance_factor(phi, bandwidth):
    """Closed form ``n C / sigma^2 = (1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)`` (corrected Lemma 4.1).

    First-order covariance of two one-dimensional Gaussian heads ``u``, ``v`` with ``u . v = cos phi``
    at ``x = 0``, ``m = 0``, ``X ~ N(0, I)``.  1 at ``phi = pi/2``;
    ``(1 + h^2)/(h sqrt(2 + h^2)) ~ 1/(sqrt(2) h)`` at ``phi = 0``.

    Parameters
    ----------
    phi : float or array
        The angle between the heads, in radians.
    bandwidth : float or array
        ``h > 0``; broadcasts with ``phi``.

    Returns
    -------
    float or numpy.ndarray
        The factor, of the broadcast shape.

    Raises
    ------
    ValueError
        Naming ``bandwidth`` when the factor overflows a double (``h`` too small), or the argument that is
        not finite or out of range.
    """
    phi, h = _angle_and_bandwidth(phi, bandwidth)
    num, sin_part, t = _factor_terms(phi, h)
    with np.errstate(over="ignore"):
        out = num / np.hypot(sin_part, t)
    if not np.all(np.isfinite(out)):
        raise ValueError("bandwidth: the covariance factor ~ 1/(sqrt(2) h) overflows a double; use a larger bandwidth")
    return out[()]


def _angle_and_bandwidth(phi, bandwidth):
    phi = as_float_array(phi, "phi", ndim=None)
    h = as_float_array(bandwidth, "bandwidth", ndim=None)
    if np.any(h <= 0):
        raise ValueError("bandwidth: expected positive values")
    try:
        return np.broadcast_arrays(phi, h)
    except ValueError:
        raise ValueError(f"bandwidth: shape {h.shape} does not broadcast with phi's {phi.shape}") from None


def _factor_terms(phi: np.ndarray, h: np.ndarray):
    """The terms of the covariance factor, scaled to avoid overflow.

    ``(a, sin phi, t) / c`` with ``a = 1 + h^2``, ``t = sqrt(a^2 - 1) = h sqrt(2 + h^2)``
    and a common factor ``c`` (1 for ``h <= 1``, ``h^2`` above) that keeps all three
    finite for every ``h > 0``: ``a^2 - cos^2 phi = sin^2 phi + t^2`` exactly, so
    ``hypot`` gives the square root without cancellation or underflow.
    """
    small = h <= 1.0
    hs = np.where(small, h, 1.0)
    u = 1.0 / np.where(small, 1.0, h)  # 1/h for h > 1
    sin_phi = np.abs(np.sin(phi))
    num = np.where(small, 1.0 + hs * hs, 1.0 + u * u)
    sin_part = np.where(small, sin_phi, sin_phi * u * u)
    t = np.where(small, hs * np.sqrt(2.0 + hs * hs), np.sqrt(1.0 + 2.0 * u * u))
    return num, sin_part, t


def head_correlation(phi, bandwidth):
    """Closed-form correlation of the two heads of :func:`covariance_factor` (Lemma 4.1, Section 12).

    ``rho = sqrt((1 + h^2)^2 - 1) / sqrt((1 + h^2)^2 - cos^2 phi)``.

    Parameters
    ----------
    phi : float or array
        The angle between the heads, in radians.
    bandwidth : float or array
        ``h > 0``; broadcasts with ``phi``.

    Returns
    -------
    float or numpy.ndarray
        ``rho``, of the broadcast shape.

    Raises
    ------
    ValueError
        Naming the argument that is not finite or out of range.
    """
    phi, h = _angle_and_bandwidth(phi, bandwidth)
    _, sin_part, t = _factor_terms(phi, h)
    return (t / np.hypot(sin_part, t))[()]


def covariance_factor_symbolic():
    """Sympy derivation of :func:`covariance_factor` (Lemma 4.1).

    With normalised kernels ``K = exp(-(u^T X)^2/(2 h^2)) / (sqrt(2 pi) h)``:
    ``E[K K'] = 1 / (2 pi h^2 sqrt(det A))``, ``A = I + (u u^T + v v^T)/h^2``;
    ``E K = 1 / sqrt(2 pi (1 + h^2))``.

    Returns
    -------
    ratio : sympy.Expr
        The simplified ``E[K K'] / (E K)^2``.
    symbols : tuple of sympy.Symbol
        Its positive symbols ``(h, phi)``.
    """
    import sympy as sp

    h, phi = sp.symbols("h phi", positive=True)
    u = sp.Matrix([1, 0])
    v = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    A = sp.eye(2) + (u * u.T + v * v.T) / h**2
    e_kk = 1 / (2 * sp.pi * h**2 * sp.sqrt(sp.simplify(A.det())))
    e_k = 1 / sp.sqrt(2 * sp.pi * (1 + h**2))
    return sp.simplify(e_kk / e_k**2), (h, phi)


@dataclass(frozen=True)
class SymbolicOverlap:
    """``kappa`` of two one-dimensional Gaussian heads, derived in sympy (Lemma 4.1, corrected).

    Made by :func:`kernel_overlap_symbolic`.

    Parameters
    ----------
    kappa : sympy.Expr
        The simplified ``E[K_u K_v] / (E K_u E K_v)``.
    e_kk : sympy.Expr
        ``E[K_u K_v]``.
    e_ku : sympy.Expr
        ``E[K_u]``.
    e_kv : sympy.Expr
        ``E[K_v]``.
    symbols : dict
        The symbols left free, by name (``"h"``, ``"phi"``, ``"s"``, ``"x1"``, ``"x2"``).
    """

    kappa: object
    e_kk: object
    e_ku: object
    e_kv: object
    symbols: dict


def kernel_overlap_symbolic(bandwidth=None, angle=None, input_variance=None, point=None) -> SymbolicOverlap:
    """Derive ``kappa_uv(x) = E[K_u K_v] / (E K_u E K_v)`` in sympy for two 1-D heads (Lemma 4.1, corrected).

    Heads ``u = (1, 0)`` and ``v = (cos phi, sin phi)`` in ``d = 2``, kernels
    ``K_w = exp(-(w^T (X - x))^2 / (2 h^2))`` (a normalising constant cancels in ``kappa``), inputs
    ``X ~ N(0, s^2 I_2)``.  Every expectation is the Gaussian integral
    ``E exp(-(X - x)^T M (X - x) / 2) = det(I + S M)^(-1/2) exp(-x^T M (I + S M)^(-1) x / 2)``,
    with ``S = s^2 I`` the input covariance and ``M = w w^T / h^2`` (one head) or
    ``(u u^T + v v^T) / h^2`` (the product of two kernels).  The first-order covariance of the two heads
    is then ``kappa (sigma^2 + Delta) / n``.  Each argument left at ``None`` stays a symbol; a number or
    sympy expression substitutes it before the derivation, so a changed assumption is re-derived, not
    re-simulated.  With ``s = 1`` and ``x = 0``, ``kappa`` is :func:`covariance_factor`'s
    ``(1 + h^2) / sqrt((1 + h^2)^2 - cos^2 phi)``.

    Parameters
    ----------
    bandwidth : float or sympy.Expr, optional
        ``h`` (default: the symbol).
    angle : float or sympy.Expr, optional
        ``phi`` (default: the symbol).
    input_variance : float or sympy.Expr, optional
        ``s^2`` (default: the symbol ``s``).
    point : pair, optional
        ``x = (x1, x2)`` (default: the symbols).

    Returns
    -------
    SymbolicOverlap
        ``kappa`` and the expectations it is made of.

    Raises
    ------
    ValueError
        Naming the argument that is not real, or a number that is not finite and zero or of magnitude in
        ``[1e-15, 1e15]`` (:data:`MAX_SYMBOLIC_LOG10`).
    """
    import sympy as sp

    def value(v, name, positive=False):
        if v is None:
            return sp.Symbol(name, positive=True) if positive else sp.Symbol(name, real=True)
        return _symbolic_argument(
            v, {"h": "bandwidth", "phi": "angle", "s": "input_variance"}.get(name, "point"), positive
        )

    h = value(bandwidth, "h", positive=True)
    phi = sp.Symbol("phi", positive=True) if angle is None else value(angle, "phi")
    s2 = sp.Symbol("s", positive=True) ** 2 if input_variance is None else value(input_variance, "s", positive=True)
    if point is None:
        x = sp.Matrix(sp.symbols("x1 x2", real=True))
    else:
        try:
            pts = None if isinstance(point, (str, bytes, dict)) else list(point)
        except TypeError:
            pts = None
        if pts is None or len(pts) != 2:
            raise ValueError(f"point: expected a pair (x1, x2), got {brief(point)}")
        x = sp.Matrix([value(p, "x") for p in pts])
    u = sp.Matrix([1, 0])
    v = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    S = s2 * sp.eye(2)

    def gauss(M):
        """(det(I + S M), x^T M (I + S M)^(-1) x): the expectation is det^(-1/2) exp(-quad/2)."""
        A = sp.eye(2) + S * M
        return sp.factor(sp.trigsimp(A.det())), sp.factor(sp.trigsimp(sp.together((x.T * M * A.inv() * x)[0])))

    (det_u, q_u), (det_v, q_v) = gauss(u * u.T / h**2), gauss(v * v.T / h**2)
    det_uv, q_uv = gauss((u * u.T + v * v.T) / h**2)
    expectation = lambda det, quad: sp.exp(-quad / 2) / sp.sqrt(det)  # noqa: E731
    e_ku, e_kv, e_kk = expectation(det_u, q_u), expectation(det_v, q_v), expectation(det_uv, q_uv)
    prefactor = sp.simplify(sp.sqrt(det_u) * sp.sqrt(det_v) / sp.sqrt(det_uv))
    exponent = sp.factor(sp.trigsimp(sp.together(-(q_uv - q_u - q_v) / 2)))
    kappa = prefactor * sp.exp(exponent) if exponent != 0 else prefactor
    free = {str(sym): sym for sym in kappa.free_symbols}
    return SymbolicOverlap(kappa=kappa, e_kk=e_kk, e_ku=e_ku, e_kv=e_kv, symbols=free)


#: Largest ``|log10|`` of a number given to :func:`kernel_overlap_symbolic` (non-zero numbers lie in
#: ``[1e-15, 1e15]``): sympy's simplification of the derivation slows with the size of the exact
#: rationals, from seconds at 1e15 to minutes at 1e-40 and 1e300 (measured).
MAX_SYMBOLIC_LOG10 = 15


def _symbolic_argument(v, name: str, positive: bool):
    """``v`` as an exact sympy value for :func:`kernel_overlap_symbolic`, checked before any derivation.

    A number must be real, finite, positive if ``positive``, and zero or of
    magnitude within ``10**+-MAX_SYMBOLIC_LOG10``; an expression with symbols must
    use real symbols only (``sympy.Symbol("t", real=True)``).  ``ValueError``
    naming ``name`` otherwise.
    """
    import sympy as sp

    out = exact_number(v, name)
    if out.free_symbols:
        loose = sorted(str(sym) for sym in out.free_symbols if sym.is_real is not True)
        if loose:
            raise ValueError(
                f"{name}: expected a real value; declare its symbols real "
                f"(sympy.Symbol({loose[0]!r}, real=True)), got {brief(v)}"
            )
        if positive and out.is_positive is False:
            raise ValueError(f"{name}: expected a positive value, got {brief(v)}")
        return out
    try:
        z = complex(sp.N(out, 30))
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected a finite real number, got {brief(v)}") from None
    if z.imag != 0.0 or not np.isfinite(z.real):
        raise ValueError(f"{name}: expected a finite real number, got {brief(v)}")
    if positive and not z.real > 0.0:
        raise ValueError(f"{name}: expected a positive value, got {brief(v)}")
    if z.real != 0.0 and not abs(np.log10(abs(z.real))) <= MAX_SYMBOLIC_LOG10:
        raise ValueError(
            f"{name}: expected zero or a magnitude in [1e-{MAX_SYMBOLIC_LOG10}, 1e{MAX_SYMBOLIC_LOG10}] "
            f"(the exact derivation slows without bound beyond), got {brief(v)}"
        )
    return out


#: Largest number of Gauss-Hermite nodes (``nodes ** d``) :func:`first_order_covariance` accepts.
MAX_QUADRATURE_POINTS = 1 << 21


@dataclass(frozen=True)
class FirstOrderCovariance:
    """The first-order covariance of two Gaussian NW heads at ``x`` (Lemma 4.1, corrected).

    ``covariance = kappa * (sigma^2 + signal) / n``.

    Parameters
    ----------
    covariance : float
        The first-order ``C_jj'(x)``.
    noise : float
        ``kappa sigma^2 / n``, the part that is left for constant ``m``.
    signal : float
        ``D_jj'(x) = E_q[(m(X) - mu_j)(m(X) - mu_j')]``, ``q`` the Gaussian density proportional to
        ``K_j K_j' p_X`` and ``mu_j = E[K_j m(X)] / E[K_j]`` the large-sample limit of head ``j``.
    kappa : float
        ``E[K_j K_j'] / (E K_j E K_j')`` (:func:`kernel_overlap`).
    limits : tuple of float
        ``(mu_j, mu_j')``.
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


def _kernel_tilted_gaussian(B: np.ndarray, h: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Gaussian density tilted by one head's kernel: its mean and a root of its covariance.

    Mean and a square root of the covariance of the density proportional to
    ``exp(-|B^T (X-x)|^2 / (2 h^2)) N(X; 0, I)``.

    With ``M = B B^T / h^2 = U diag(e^{2r}) U^T`` (:func:`_scaled_svd`) the
    covariance is ``S = (I + M)^{-1} = I - U diag(expit(2r)) U^T`` and the mean
    ``S M x = U diag(expit(2r)) U^T x``, finite for every ``h > 0``.  The square
    root is the Cholesky factor of ``S`` when ``S`` is numerically positive
    definite, else (tiny ``h``: ``S`` is singular in double precision) the
    symmetric root ``I - U diag(1 - expit(-2r)^(1/2)) U^T``.
    """
    U, r = _scaled_svd(B, h)
    p = expit(2.0 * r)
    mean = U @ (p * (U.T @ x))
    S = np.eye(B.shape[0]) - (U * p) @ U.T
    S = 0.5 * (S + S.T)
    try:
        root = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        root = np.eye(B.shape[0]) - (U * (1.0 - np.sqrt(expit(-2.0 * r)))) @ U.T
    return mean, root


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


def _gauss_hermite(mean: np.ndarray, root: np.ndarray, nodes: int):
    """Tensor Gauss-Hermite nodes ``(N, d)`` and weights ``(N,)`` for ``N(mean, root root^T)``."""
    Z, weights = _standard_gauss_hermite(nodes, mean.shape[0])
    return mean + Z @ root.T, weights


def _whitening(inputs, d: int):
    """The factor of a Gaussian input law, or None for the reference.

    ``None`` for ``N(0, I_d)`` inputs, else the factor ``A`` with ``X = A Z`` of a Gaussian law;
    ``ValueError`` naming ``inputs`` for a non-Gaussian law.
    """
    dist = _data.input_distribution(inputs)
    if dist.is_standard_gaussian:
        return None
    if not dist.is_gaussian:
        raise ValueError(
            f"inputs: this closed form assumes Gaussian inputs and {dist.spec!r} is not Gaussian; "
            "use mhanw.covariance.first_order_covariance_mc"
        )
    return dist.gaussian_factor(d)


def first_order_covariance(
    W_j, W_jp, x, bandwidth: float, n: int, sigma: float = 0.5, regression="zero", nodes: int = 12, inputs="gaussian"
) -> FirstOrderCovariance:
    """First-order covariance of two Gaussian NW heads at ``x``, ``X ~ N(0, I_d)`` (Lemma 4.1, corrected).

    Linearising ``m_j = sum_i K_ij Y_i / sum_i K_ij`` around its limit ``mu_j = E[K_j Y] / E[K_j]``
    gives ``n Cov(m_j(x), m_j'(x)) = kappa_jj'(x) (sigma^2 + D_jj'(x)) + o(1)``, with ``kappa`` of
    :func:`kernel_overlap` and ``D_jj'(x)`` the covariance of the two heads' residuals
    ``m(X) - mu_j`` under the Gaussian density proportional to ``K_j K_j' p_X``.  ``D = 0`` for
    constant ``m``.  All Gaussian expectations except those of ``m`` are exact; those of ``m`` use a
    tensor Gauss-Hermite rule with ``nodes`` points per dimension (exact for polynomials of degree
    ``< 2 nodes``; at the default ``nodes = 12`` the values for ``sin13`` and ``bvc`` in ``d = 4`` agree
    with ``nodes = 24`` to 1e-8, in about 5 ms).

    Parameters
    ----------
    W_j : array (d, d_k)
        Head ``j``'s projection.
    W_jp : array (d, d_k')
        Head ``j'``'s projection.
    x : array (d,)
        The point.
    bandwidth : float > 0
        ``h``.
    n : int >= 1
        The sample size.
    sigma : float >= 0, default 0.5
        The noise sd; the noise is homoscedastic (its law does not matter to first order).
    regression : str or mhanw.data.RegressionFunction, default "zero"
        ``m``.
    nodes : int >= 2, default 12
        Gauss-Hermite points per dimension, with ``nodes ** d <=`` :data:`MAX_QUADRATURE_POINTS`.
    inputs : str or mhanw.data.InputDistribution, default "gaussian"
        Any Gaussian law of :mod:`mhanw.data` (exact by the change of variables ``X = A Z``).

    Returns
    -------
    FirstOrderCovariance
        ``covariance`` is the first-order ``C_jj'(x)``; ``limits`` the pair ``(mu_j, mu_j')``.

    Raises
    ------
    ValueError
        Naming ``inputs`` for a law that is not Gaussian (use :func:`first_order_covariance_mc`),
        ``nodes`` for too many quadrature points, or the argument that is out of range, of the wrong
        shape or where ``m`` is not finite.
    """
    Wj, Wjp, x = _pair_and_point(W_j, W_jp, x)
    d = Wj.shape[0]
    h = positive_scalar(bandwidth, "bandwidth")
    n = positive_int(n, "n")
    sigma = nonnegative_scalar(sigma, "sigma")
    m = _data.regression_function(regression)
    if d < m.min_dim:
        raise ValueError(f"x: {m.name!r} needs d >= {m.min_dim}, got d = {d}")
    nodes = positive_int(nodes, "nodes", minimum=2)
    if nodes**d > MAX_QUADRATURE_POINTS:
        raise ValueError(f"nodes: nodes ** d = {nodes}**{d} exceeds {MAX_QUADRATURE_POINTS} quadrature points")
    A = _whitening(inputs, d)
    if A is None:
        func = m._func
    else:  # X = A Z, Z ~ N(0, I): heads A W, point A^{-1} x, regression m(A z)
        Wj, Wjp, x = A @ Wj, A @ Wjp, np.linalg.solve(A, x)
        func = lambda Z: m._func(Z @ A.T)  # noqa: E731
    kappa = kernel_overlap(Wj, Wjp, x, h)

    def expect(B, f):
        pts, w = _gauss_hermite(*_kernel_tilted_gaussian(B, h, x), nodes)
        return float(w @ f(pts))

    mu_j = expect(Wj, func)
    mu_jp = expect(Wjp, func)
    signal = expect(np.hstack([Wj, Wjp]), lambda X: (func(X) - mu_j) * (func(X) - mu_jp))
    s2 = np.float64(sigma) ** 2  # as sigma**2, but inf instead of OverflowError
    with np.errstate(over="ignore"):
        covariance = float(kappa * (s2 + signal) / n)
        noise = float(kappa * s2 / n)
    if not (np.isfinite(covariance) and np.isfinite(noise)):
        name = "sigma" if not np.isfinite(s2) else "bandwidth"
        raise ValueError(
            f"{name}: the first-order covariance kappa (sigma^2 + Delta) / n overflows a double "
            f"(kappa = {kappa:.3g}, sigma = {sigma:.3g}); use a larger bandwidth or a smaller sigma"
        )
    return FirstOrderCovariance(
        covariance=covariance,
        noise=noise,
        signal=signal,
        kappa=kappa,
        limits=(mu_j, mu_jp),
    )


#: Default size of the Monte Carlo sample of :func:`first_order_covariance_mc`.
MC_SAMPLES = 1 << 18
#: Fewest effective draws (Kish's ``(sum K)^2 / sum K^2`` of each kernel and of their product)
#: :func:`first_order_covariance_mc` accepts: a ratio of means of ``N_eff`` effective draws has a
#: relative error of about ``1/sqrt(N_eff)``, 10% here; below it the estimate is noise (a point in
#: the far tails or a tiny bandwidth gave kappa ~ 1e-133 from a handful of draws).
MIN_EFFECTIVE_DRAWS = 100


def _effective_draws(K: np.ndarray) -> float:
    """Kish's effective sample size ``(sum K)^2 / sum K^2`` of non-negative weights ``K`` (max 1)."""
    total = float(K.sum())
    return total * total / float(np.dot(K, K)) if total > 0 else 0.0


def first_order_covariance_mc(
    W_j, W_jp, x, bandwidth: float, n: int, model, n_samples: int = MC_SAMPLES, seed=0
) -> FirstOrderCovariance:
    """First-order covariance of two Gaussian NW heads at ``x`` under any data model, by Monte Carlo (Lemma 4.1).

    The same linearisation as :func:`first_order_covariance`, without assuming Gaussian inputs or
    constant noise: with ``K_j = exp(-|W_j^T (x - X)|^2 / (2 h^2))`` and ``s(X)`` the noise standard
    deviation of ``model`` (:meth:`mhanw.data.NoiseModel.sd`),
    ``n Cov(m_j(x), m_j'(x)) -> E[K_j K_j' (s(X)^2 + (m(X) - mu_j)(m(X) - mu_j'))] / (E K_j E K_j')``,
    every expectation a mean over ``n_samples`` iid draws of ``X`` from the rows' law
    ``model.inputs.marginal`` (stream ``SeedSequence(seed)``).  The linearisation assumes an iid sample
    ``D_n``: under dependent rows (:data:`mhanw.data.DEPENDENT_KINDS`) this is the prediction for iid
    rows of the same law, which the dependent sample's covariance is then compared with.  Under the
    reference model it agrees with the closed form to Monte Carlo error, relative
    ``~ 1/sqrt(n_samples * q)`` with ``q`` the fraction of draws where both kernels are not negligible
    (small for a small bandwidth or a point far in the tails).

    Parameters
    ----------
    W_j : array (d, d_k)
        Head ``j``'s projection.
    W_jp : array (d, d_k')
        Head ``j'``'s projection.
    x : array (d,)
        The point.
    bandwidth : float > 0
        ``h``.
    n : int >= 1
        The sample size.
    model : mhanw.data.DataModel or str
        A data model or a regression spec (:func:`mhanw.data.as_data_model`).
    n_samples : int >= 1000, default :data:`MC_SAMPLES`
        Draws of ``X``.
    seed : int or numpy.random.SeedSequence, default 0
        The stream.

    Returns
    -------
    FirstOrderCovariance
        ``kappa`` and ``signal`` as there, ``noise = E[K_j K_j' s^2] / (E K_j E K_j') / n``
        (``kappa sigma^2 / n`` for homoscedastic noise) and ``covariance = noise + kappa signal / n``.

    Raises
    ------
    ValueError
        Naming ``bandwidth`` (and ``n_samples``) when fewer than :data:`MIN_EFFECTIVE_DRAWS` effective
        draws fall under the kernels (Kish's effective sample size of ``K_j``, ``K_j'`` and
        ``K_j K_j'``): the value could not be estimated from this sample; or the argument that is out of
        range or of the wrong shape.
    """
    Wj, Wjp, x = _pair_and_point(W_j, W_jp, x)
    d = Wj.shape[0]
    h = positive_scalar(bandwidth, "bandwidth")
    n = positive_int(n, "n")
    model = _data.as_data_model(model, name="model")
    if d < model.min_dim:
        raise ValueError(f"x: {model.name!r} needs d >= {model.min_dim}, got d = {d}")
    model.inputs.check_dimension(d, "x")
    n_samples = positive_int(n_samples, "n_samples", minimum=1000)
    check_entries("n_samples", n_samples, d)
    rng = np.random.default_rng(as_seed_sequence(seed))
    X = model.inputs.marginal.sample(rng, n_samples, d)

    def log_kernel(B):
        z = (x - X) @ B
        return -0.5 * (z * z).sum(axis=1) / (h * h)

    lj, ljp = log_kernel(Wj), log_kernel(Wjp)
    Kj, Kjp = np.exp(lj - lj.max()), np.exp(ljp - ljp.max())  # ratios do not depend on the scale
    KK = Kj * Kjp
    e_j, e_jp, e_kk = Kj.mean(), Kjp.mean(), KK.mean()
    ess = min(_effective_draws(K) for K in (Kj, Kjp, KK))
    if not ess >= MIN_EFFECTIVE_DRAWS:
        raise ValueError(
            f"bandwidth: only {ess:.3g} of n_samples = {n_samples} draws are effectively under the kernels "
            f"(Kish's effective sample size of the kernel weights; at least {MIN_EFFECTIVE_DRAWS} are needed for a "
            "relative Monte Carlo error near 10%); use a larger bandwidth, a point nearer the inputs' bulk, or "
            "more samples (n_samples)"
        )
    mX = model.regression._func(X)
    s2 = model.noise.sd(X) ** 2
    mu_j, mu_jp = float((Kj * mX).mean() / e_j), float((Kjp * mX).mean() / e_jp)
    kappa = float(e_kk / (e_j * e_jp))
    noise = float((KK * s2).mean() / (e_j * e_jp)) / n
    signal = float((KK * (mX - mu_j) * (mX - mu_jp)).mean() / e_kk)
    return FirstOrderCovariance(
        covariance=noise + kappa * signal / n, noise=noise, signal=signal, kappa=kappa, limits=(mu_j, mu_jp)
    )


def first_order_covariance_model(W_j, W_jp, x, bandwidth: float, n: int, model) -> FirstOrderCovariance:
    """Lemma 4.1's first-order covariance of two heads under a data model, by the right method.

    Gauss-Hermite quadrature (:func:`first_order_covariance`, exact in the Gaussian integrals) when the
    inputs and the noise are Gaussian; otherwise :func:`first_order_covariance_mc` (seed 0), so that a
    changed input or noise law is never compared with the prediction for the reference one.  Both
    assume iid rows; for dependent ones (``ar1``, ``clustered``) the result is the iid prediction for
    rows of the same law.

    Parameters
    ----------
    W_j : array (d, d_k)
        Head ``j``'s projection.
    W_jp : array (d, d_k')
        Head ``j'``'s projection.
    x : array (d,)
        The point.
    bandwidth : float > 0
        ``h``.
    n : int >= 1
        The sample size.
    model : mhanw.data.DataModel or str
        A data model or a regression spec.

    Returns
    -------
    FirstOrderCovariance
        The prediction.

    Raises
    ------
    ValueError
        Naming the argument that is out of range or of the wrong shape (see the two methods).
    """
    model = _data.as_data_model(model, name="model")
    if model.inputs.is_gaussian and model.noise.is_gaussian:
        return first_order_covariance(W_j, W_jp, x, bandwidth, n, model.sigma, model.regression, inputs=model.inputs)
    return first_order_covariance_mc(W_j, W_jp, x, bandwidth, n, model)
