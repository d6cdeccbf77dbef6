"""Uniform, geometric, Fibonacci and optimal head weights (Theorem 7.1).

Theorem 7.1 of the paper says that when heads are ordered by quality,
structured non-uniform weights (geometric, Fibonacci) can beat the uniform
average, especially when head quality is heterogeneous.  The companion checks
this exactly, without Monte Carlo, on an error second-moment matrix ``M``
(``M[j, j'] = E int (m_j - m)(m_j' - m) dp_X``), for which the integrated MSE
of the combination ``sum_j a_j m_j`` is the quadratic form ``a' M a``
(``book/claims.md``, 'Theorem 7.1').

Conventions.  Heads are indexed ``j = 1..H`` (array index ``j - 1``) and ordered
by quality, best first: ``M[0, 0] <= ... <= M[H-1, H-1]``.  Every structured
weighting therefore puts its largest weight on index 0.

- :func:`uniform_weights`, :func:`geometric_weights`, :func:`fibonacci_weights`
  and :func:`structured_weights` (by name): fixed weights, summing to 1,
  non-increasing.
- :func:`affine_oracle_weights`: ``M^{-1} 1 / (1' M^{-1} 1)``, the minimiser of
  ``a' M a`` subject to ``sum a = 1`` (weights may be negative).
- :func:`simplex_oracle_weights`: the minimiser subject to ``a >= 0`` and
  ``sum a = 1`` (a small quadratic program, solved exactly by an active set).
- :func:`mse`: the exact ``a' M a`` of any weights.
- :func:`graded_error_matrix`: the equicorrelated graded error model of
  the analytic check of Thm 7.1, ``M_jj = v_j = gamma^((j-1)/(H-1))``,
  ``M_jj' = rho sqrt(v_j v_j')``.
- :func:`heterogeneity_threshold`: the heterogeneity ``gamma*`` of that model at
  which geometric (or any given fixed) weights start to beat uniform ones.
- :func:`nested_errors` (with :func:`quality_order`, :func:`fitted_weights`):
  every weighting evaluated out of sample on Monte Carlo matrices of real
  heads, as heads are added in quality order (the graded-heads check of Thm 7.1).

Matrices are never inverted explicitly: the oracles use a Cholesky
factorisation (:func:`scipy.linalg.cho_factor`), which also checks that ``M``
is positive definite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from .constants import MAX_ENTRIES, MAX_REPLICATES
from .heads import WEIGHT_SUM_TOL
from .infra.estimates import Estimate, ReplicatedErrors
from .infra.expressions import exact_number
from .infra.validate import as_float_array, brief, one_of, positive_int, positive_scalar, real_scalar, sequence

__all__ = [
    "uniform_weights",
    "geometric_weights",
    "fibonacci_weights",
    "structured_weights",
    "mse",
    "affine_oracle_weights",
    "simplex_oracle_weights",
    "graded_error_matrix",
    "heterogeneity_threshold",
    "quality_order",
    "fitted_weights",
    "NestedErrors",
    "nested_errors",
    "weights_expr",
    "crossover_gap",
    "symbolic_threshold",
    "GOLDEN_Q",
    "SCHEMES",
    "ORACLES",
    "SYMMETRY_RTOL",
    "KKT_RTOL",
    "MAX_SYMBOLIC_HEADS",
    "MAX_MATRIX_HEADS",
    "ROOT_DIGITS",
]

#: Default ratio of geometric weights: the golden-ratio conjugate 1/phi = (sqrt(5) - 1)/2.
GOLDEN_Q = (np.sqrt(5.0) - 1.0) / 2.0

#: Names accepted by :func:`structured_weights`.
SCHEMES = ("uniform", "geometric", "fibonacci")

#: Relative tolerance of the symmetry check of ``M``.
SYMMETRY_RTOL = 1e-10

#: Relative tolerance (to max_j M_jj) of the KKT check of :func:`simplex_oracle_weights`.
KKT_RTOL = 1e-12


# --------------------------------------------------------------------------- checks


#: Most heads of the symbolic weightings (:func:`weights_expr`, :func:`crossover_gap`): the gap is a
#: polynomial of degree ``2(H - 1)`` whose coefficients sympy expands exactly.
MAX_SYMBOLIC_HEADS = 32

#: Most heads of a function whose work grows as ``H^3`` (dense H x H factorisations, an active-set search,
#: a scan that solves at each point): 2048 takes about 4 CPU-s here, 10 000 took minutes and gigabytes;
#: the chapters use at most 16.
MAX_MATRIX_HEADS = 2048


def _n_heads(n_heads, minimum: int = 1, maximum: int = MAX_ENTRIES, what: str = "heads") -> int:
    """``n_heads`` checked: an integer in ``[minimum, maximum]`` (``ValueError`` naming it)."""
    H = positive_int(n_heads, "n_heads", minimum=minimum)
    if H > maximum:
        raise ValueError(f"n_heads: expected at most {maximum} {what}, got {H}")
    return H


def _ratio(q, name: str = "q") -> float:
    """Return ``q`` as a float in the open interval (0, 1), else raise ``ValueError``."""
    out = real_scalar(q, name)
    if not (0.0 < out < 1.0):
        raise ValueError(f"{name}: expected a real number in the open interval (0, 1), got {brief(q)}")
    return out


def _symmetric_matrix(M, name: str = "M") -> np.ndarray:
    """Return ``M`` as a square, symmetric float array (exactly symmetrised)."""
    arr = as_float_array(M, name, ndim=2)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name}: expected a square (H, H) matrix, got shape {arr.shape}")
    scale = float(np.max(np.abs(arr)))
    with np.errstate(over="ignore"):
        asym = float(np.max(np.abs(arr - arr.T)))
    if asym > SYMMETRY_RTOL * scale:
        raise ValueError(f"{name}: expected a symmetric matrix, got max |M - M'| = {asym:.3g}")
    # arr + (arr' - arr)/2, not (arr + arr')/2: the sum overflows for entries near 1e308.
    return arr + 0.5 * (arr.T - arr)


def _unit_scale(M: np.ndarray, name: str = "M") -> tuple[np.ndarray, int]:
    """``(M * 2**-e, e)`` with ``e`` even and ``2**e`` within a factor 4 of the largest ``|M_jj'|``.

    Weights are invariant to the scale of ``M``; dividing by a power of four is
    exact and commutes with the square roots of a Cholesky factorisation, so a
    matrix of ``1e-310`` (subnormal) or ``1e308`` entries gives the same weights
    as the identity, and an ordinary matrix exactly the same weights as
    without scaling.
    """
    top = float(np.max(np.abs(M))) if M.size else 0.0
    if top == 0.0:
        raise ValueError(f"{name}: expected a positive definite matrix, got all zeros")
    e = int(np.frexp(top)[1])
    e -= e % 2  # a power of 4: its square root is exact, so Cholesky sees the same digits
    return np.ldexp(M, -e), e


def _cholesky(M: np.ndarray, name: str = "M"):
    try:
        return linalg.cho_factor(M, lower=False, check_finite=False)
    except linalg.LinAlgError as exc:
        raise ValueError(f"{name}: expected a positive definite matrix (Cholesky factorisation failed)") from exc


def _weights(weights, n_heads: int | None = None, name: str = "weights") -> np.ndarray:
    a = as_float_array(weights, name, ndim=1)
    if n_heads is not None and a.shape[0] != n_heads:
        raise ValueError(f"{name}: expected {n_heads} weights (one per head), got {a.shape[0]}")
    return a


# --------------------------------------------------------------------------- fixed weights


def uniform_weights(n_heads: int) -> np.ndarray:
    """Uniform weights ``a_j = 1/H``.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when it is not a positive integer within bounds.
    """
    H = _n_heads(n_heads)
    return np.full(H, 1.0 / H)


def geometric_weights(n_heads: int, q: float = GOLDEN_Q) -> np.ndarray:
    """Geometric weights ``a_j = (1 - q) q^(j-1) / (1 - q^H)``, ``j = 1..H`` (Thm 7.1).

    The largest weight is on the best head (index 0); the weights sum to 1 and strictly decrease.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    q : float, default :data:`GOLDEN_Q`
        The ratio, in the open interval (0, 1); the default is the golden-ratio conjugate
        ``0.618...``.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``n_heads`` or ``q`` for a value out of range.
    """
    H = _n_heads(n_heads)
    q = _ratio(q, "q")
    log_q = np.log(q)
    j = np.arange(H, dtype=np.float64)
    # (1 - q) / (1 - q^H), computed without cancellation for q close to 1.
    scale = np.expm1(log_q) / np.expm1(H * log_q)
    return scale * np.exp(j * log_q)


def fibonacci_weights(n_heads: int) -> np.ndarray:
    """Fibonacci weights, the largest on the best head (Thm 7.1).

    ``a_j = F_(H+1-j) / (F_1 + ... + F_H)`` with ``F_1 = F_2 = 1``; the best head (index 0) gets ``F_H``, the worst gets ``F_1``.  This definition is
    the companion's assumption (the summaries give none); for large ``H`` the weights are asymptotically
    geometric with ratio ``1/phi``.  For ``H = 2`` they are uniform.  Each weight is the correctly
    rounded value of an exact integer ratio.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when it is not a positive integer within bounds.
    """
    H = _n_heads(n_heads, maximum=10**4, what="heads (the exact integers F_j have up to 0.7 H bits)")
    fib = [1, 1]
    while len(fib) < H:
        fib.append(fib[-1] + fib[-2])
    fib = fib[:H]
    total = sum(fib)  # = F_{H+2} - 1
    return np.array([f / total for f in reversed(fib)], dtype=np.float64)


def structured_weights(scheme: str, n_heads: int, *, q: float = GOLDEN_Q) -> np.ndarray:
    """Fixed weights by name: ``"uniform"``, ``"geometric"`` (ratio ``q``) or ``"fibonacci"``.

    Parameters
    ----------
    scheme : str
        One of :data:`SCHEMES`.
    n_heads : int >= 1
        ``H``.
    q : float, default :data:`GOLDEN_Q`
        The ratio of ``"geometric"``.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``scheme`` for an unknown one, or the argument that is out of range.
    """
    one_of(scheme, "scheme", SCHEMES)
    if scheme == "uniform":
        return uniform_weights(n_heads)
    if scheme == "geometric":
        return geometric_weights(n_heads, q)
    return fibonacci_weights(n_heads)


# --------------------------------------------------------------------------- MSE and oracles


def mse(weights, M) -> float:
    """Exact integrated MSE ``a' M a`` of the combination with weights ``a`` (Thm 7.1).

    Positive definiteness is not required here (an estimated ``M`` may be singular).

    Parameters
    ----------
    weights : array (H,)
        Any real weights (the sum is not constrained).
    M : array (H, H)
        Symmetric error second-moment matrix.

    Returns
    -------
    float
        ``a' M a``.

    Raises
    ------
    ValueError
        Naming ``weights`` when its length does not match ``M``, ``M`` when it is not square, symmetric
        or finite, or either when the product is beyond a double.
    """
    M = _symmetric_matrix(M, "M")
    a = _weights(weights, M.shape[0])
    if not np.any(M):
        return 0.0
    scaled, e = _unit_scale(M, "M")
    top = float(np.max(np.abs(a)))
    if top == 0.0:
        return 0.0
    f = int(np.frexp(top)[1])
    b = np.ldexp(a, -f)
    with np.errstate(over="ignore"):
        value = float(np.ldexp(b @ scaled @ b, e + 2 * f))
    if not np.isfinite(value):
        raise ValueError("weights: a' M a overflows a double (weights or M too large)")
    return value


def affine_oracle_weights(M) -> np.ndarray:
    """Affine oracle ``a* = M^(-1) 1 / (1' M^(-1) 1)`` (Thm 7.1).

    The unique minimiser of ``a' M a`` subject to ``sum a = 1``; its MSE is ``1 / (1' M^(-1) 1)``.
    Weights may be negative.  ``M`` is factorised (Cholesky), never inverted.

    Parameters
    ----------
    M : array (H, H)
        The heads' error second-moment matrix, symmetric positive definite.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``M`` when it is not square, symmetric (to :data:`SYMMETRY_RTOL`), finite or positive
        definite, or larger than :data:`MAX_MATRIX_HEADS` heads.
    """
    M, _ = _unit_scale(_symmetric_matrix(M, "M"), "M")
    factor = _cholesky(M, "M")
    x = linalg.cho_solve(factor, np.ones(M.shape[0]), check_finite=False)
    return _normalised(x, "M")


def _normalised(x: np.ndarray, name: str) -> np.ndarray:
    """A vector divided by its sum, checked.

    ``x / sum(x)``, or ``ValueError`` naming ``name`` when that is not finite
    (``M`` positive definite in name only: numerically singular).
    """
    total = x.sum()
    out = x / total if np.isfinite(total) and total > 0 else np.full_like(x, np.nan)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: expected a positive definite matrix; it is numerically singular")
    return out


def _restricted_oracle(M: np.ndarray, support: np.ndarray) -> np.ndarray:
    """Affine oracle of ``M[support, support]``, embedded in a length-H vector."""
    sub = M[np.ix_(support, support)]
    x = linalg.cho_solve(_cholesky(sub, "M"), np.ones(support.size), check_finite=False)
    a = np.zeros(M.shape[0])
    a[support] = _normalised(x, "M")
    return a


def simplex_oracle_weights(M, *, max_iter: int | None = None) -> np.ndarray:
    """Simplex oracle: the minimiser of ``a' M a`` subject to ``a >= 0``, ``sum a = 1`` (Thm 7.1).

    With ``M`` positive definite the minimiser is unique.  Method (exact up to rounding):

    1. With ``M = R' R`` (Cholesky), solve the non-negative least-squares problem
       ``min_(b >= 0) |R b - R^(-T) 1|^2 = b' M b - 2 1'b + const`` (:func:`scipy.optimize.nnls`,
       Lawson-Hanson active set).  Its KKT conditions make ``a = b / sum(b)`` the simplex minimiser.
    2. Polish on the support ``S`` of ``b``: ``a_S`` is the affine oracle of ``M[S, S]`` (one Cholesky
       solve), which is exact when ``S`` is right.
    3. Verify the KKT conditions of the simplex problem, ``(M a)_j = a'Ma`` on ``S`` and
       ``(M a)_j >= a'Ma`` off ``S``, and repair the support with primal active-set steps (add the most
       violating head; step back to the boundary and drop a head when a weight turns negative) until
       they hold.

    The KKT check allows a violation of ``KKT_RTOL * max_j M_jj``.  On small, well-conditioned ``H`` the
    result agrees with an exhaustive search over supports to about 1e-15 (tested to 1e-10).

    Parameters
    ----------
    M : array (H, H)
        The heads' error second-moment matrix, symmetric positive definite.
    max_iter : int, optional
        Most active-set steps of the repair (default: a bound that grows with ``H``).

    Returns
    -------
    numpy.ndarray
        ``(H,)``, non-negative, summing to 1.

    Raises
    ------
    ValueError
        Naming ``M`` when it is not square, symmetric, finite or positive definite, or ``max_iter`` when
        it is not a positive integer.
    RuntimeError
        When the active-set repair does not converge within ``max_iter`` steps.
    """
    M, _ = _unit_scale(_symmetric_matrix(M, "M"), "M")
    H = M.shape[0]
    if H > MAX_MATRIX_HEADS:
        raise ValueError(f"M: expected at most {MAX_MATRIX_HEADS} heads (an active-set search of H^3 work), got {H}")
    R, _ = _cholesky(M, "M")
    R = np.triu(R)
    y = linalg.solve_triangular(R, np.ones(H), trans="T", lower=False, check_finite=False)
    b, _ = optimize.nnls(R, y)
    if not np.any(b > 0):  # cannot happen for positive definite M; start at the best vertex
        b = np.zeros(H)
        b[int(np.argmin(np.diag(M)))] = 1.0
    support = np.flatnonzero(b > 0)
    current = np.zeros(H)
    current[support] = b[support] / b[support].sum()

    max_iter = (
        10 * H + 10
        if max_iter is None
        else positive_int(max_iter, "max_iter", maximum=MAX_REPLICATES, what="active-set steps")
    )
    diag_scale = float(np.max(np.diag(M)))
    added = -1
    for _ in range(max_iter):
        candidate = _restricted_oracle(M, support)
        drop = support[candidate[support] <= 0.0]
        if drop.size:
            # Primal active-set step: move from the feasible `current` towards
            # `candidate` until the first weight reaches zero, then drop it.
            cur, cand = current[drop], candidate[drop]
            steps = np.where(cur > 0.0, cur / np.maximum(cur - cand, np.finfo(float).tiny), 0.0)
            k = int(np.argmin(steps))
            t = float(np.clip(steps[k], 0.0, 1.0))
            if drop[k] == added and t == 0.0:
                # The head just added cannot enter: its KKT violation was rounding.
                return current
            current = current + t * (candidate - current)
            current[drop[k]] = 0.0
            current = np.maximum(current, 0.0)
            current = current / current.sum()
            support = np.flatnonzero(current > 0)
            added = -1
            continue
        current = candidate
        grad = M @ current
        lam = float(current @ grad)
        outside = np.setdiff1d(np.arange(H), support)
        if outside.size == 0:
            return current
        slack = grad[outside] - lam
        worst = int(np.argmin(slack))
        if slack[worst] >= -KKT_RTOL * diag_scale:
            return current
        added = int(outside[worst])
        support = np.union1d(support, [added])
    raise RuntimeError("simplex_oracle_weights: the active-set refinement did not converge")


# --------------------------------------------------------------------------- error model


def graded_error_matrix(n_heads: int, gamma: float, rho: float) -> np.ndarray:
    """Equicorrelated graded error model of the analytic check of Thm 7.1.

    ``M_jj = v_j = gamma^((j-1)/(H-1))`` (head 1 has MSE 1, head H has MSE ``gamma``; ``v_1 = 1`` when
    ``H = 1``) and ``M_jj' = rho sqrt(v_j v_j')``.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    gamma : float >= 1
        The ratio of the worst head's MSE to the best's; it keeps the heads ordered by quality, best
        first.
    rho : float
        The error correlation, in ``(-1/(H-1), 1)``, where ``M`` is positive definite.

    Returns
    -------
    numpy.ndarray
        ``(H, H)``.

    Raises
    ------
    ValueError
        Naming ``gamma`` or ``rho`` for a value out of range, or ``n_heads`` when it is not a positive
        integer within bounds.
    """
    H = _n_heads(n_heads, maximum=int(MAX_ENTRIES**0.5), what="heads (an H x H matrix)")
    gamma = positive_scalar(gamma, "gamma")
    if gamma < 1.0:
        raise ValueError(f"gamma: expected a number >= 1 (heads ordered best first), got {brief(gamma)}")
    rho = real_scalar(rho, "rho")
    lower = -1.0 / (H - 1) if H > 1 else -np.inf
    if not (lower < rho < 1.0):
        raise ValueError(f"rho: expected a correlation in ({lower:.6g}, 1) for {H} heads, got {brief(rho)}")
    t = np.arange(H, dtype=np.float64) / (H - 1) if H > 1 else np.zeros(1)
    sd = np.exp(0.5 * t * np.log(gamma))
    M = rho * np.outer(sd, sd)
    np.fill_diagonal(M, sd * sd)
    return M


def heterogeneity_threshold(
    n_heads: int,
    rho: float,
    q: float | None = None,
    *,
    weights=None,
    gamma_max: float = 1e6,
    n_scan: int = 256,
) -> float:
    """Heterogeneity ``gamma*`` above which geometric weights beat uniform ones (Thm 7.1).

    In the graded error model (:func:`graded_error_matrix`) let
    ``g(gamma) = mse(a, M(gamma)) - mse(uniform, M(gamma))``, with ``a`` the geometric weights of ratio
    ``q``, or any fixed ``weights`` of length ``n_heads`` (e.g. :func:`fibonacci_weights`).  At
    ``gamma = 1`` the heads are exchangeable and uniform weights are the affine oracle, so ``g(1) > 0``
    unless ``a`` is uniform.  ``gamma*`` is the first sign change of ``g`` in ``[1, gamma_max]``:
    ``ln gamma`` is scanned on ``n_scan`` points and the root refined by :func:`scipy.optimize.brentq`
    on ``ln gamma`` (to machine precision).

    Parameters
    ----------
    n_heads : int >= 2
        ``H``.
    rho : float
        The error correlation of the model.
    q : float, optional
        The ratio of the geometric weights (default :data:`GOLDEN_Q`); not with ``weights``.
    weights : array (H,), optional
        Fixed weights to compare with uniform ones instead of geometric ones.
    gamma_max : float, default 1e6
        The end of the search.
    n_scan : int, default 256
        Points of the scan of ``ln gamma``.

    Returns
    -------
    float
        ``gamma*``.

    Raises
    ------
    ValueError
        Naming ``gamma_max`` when ``a`` does not beat uniform anywhere in ``[1, gamma_max]``, naming
        ``weights`` (or ``q``) when ``a`` is the uniform weighting itself (then ``g = 0`` and there is no
        crossover), or the argument that is out of range.
    """
    H = _n_heads(n_heads, minimum=2, maximum=MAX_MATRIX_HEADS, what="heads (a scan of H x H solves)")
    rho = real_scalar(rho, "rho")
    graded_error_matrix(H, 1.0, rho)  # validates rho for this H
    gamma_max = positive_scalar(gamma_max, "gamma_max")
    if gamma_max <= 1.0:
        raise ValueError(f"gamma_max: expected a number > 1, got {brief(gamma_max)}")
    n_scan = positive_int(n_scan, "n_scan", minimum=2)
    if n_scan > min(MAX_ENTRIES // H, MAX_REPLICATES):
        raise ValueError(
            f"n_scan: expected at most {min(MAX_ENTRIES // H, MAX_REPLICATES)} scan points for {H} heads, got {n_scan}"
        )
    if weights is not None and q is not None:
        raise ValueError("q: give either q (geometric weights) or weights, not both")
    if weights is None:
        a = geometric_weights(H, GOLDEN_Q if q is None else q)
        label = "geometric weights"
        name = "q"
    else:
        a = _weights(weights, H)
        if abs(a.sum() - 1.0) > WEIGHT_SUM_TOL:
            raise ValueError(
                f"weights: expected weights summing to 1 (within {WEIGHT_SUM_TOL:g}), got a sum of {a.sum():.17g}"
            )
        label = "weights"
        name = "weights"
    u = uniform_weights(H)

    # In the model, a' M a = sum_jj' a_j a_j' R_jj' s_j s_j' with s_j = gamma^(t_j/2):
    # evaluate the difference for many gamma at once.
    t = np.arange(H, dtype=np.float64) / (H - 1)
    corr = np.full((H, H), rho)
    np.fill_diagonal(corr, 1.0)
    coef = corr * (np.outer(a, a) - np.outer(u, u))
    scale = corr * np.outer(u, u)

    def gap(log_gamma):
        s = np.exp(0.5 * np.multiply.outer(np.atleast_1d(log_gamma), t))  # (m, H)
        diff = np.einsum("mi,ij,mj->m", s, coef, s)
        ref = np.einsum("mi,ij,mj->m", s, scale, s)
        return diff, ref

    grid = np.linspace(0.0, np.log(gamma_max), n_scan)
    diff, ref = gap(grid)
    zero_tol = 1e-12 * ref
    if abs(diff[0]) <= zero_tol[0]:
        raise ValueError(f"{name}: {label} equal uniform ones at gamma = 1; there is no crossover")
    if diff[0] < 0:  # cannot happen in the model: uniform is the affine oracle at gamma = 1
        raise ValueError(f"{name}: {label} already beat uniform ones at gamma = 1")
    below = np.flatnonzero(diff < -zero_tol)
    if below.size == 0:
        raise ValueError(
            f"gamma_max: {label} do not beat uniform ones anywhere in [1, {gamma_max:g}] "
            f"(n_heads={H}, rho={rho:g}); no crossover in the bracket"
        )
    k = int(below[0])
    i = int(np.flatnonzero(diff[:k] > 0)[-1])  # last scan point where uniform still wins
    lo, hi = grid[i], grid[k]
    root = optimize.brentq(lambda x: float(gap(x)[0][0]), lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return float(np.exp(root))


# --------------------------------------------------------------------------- out-of-sample evaluation

#: Data-driven weightings of :func:`fitted_weights`, next to the fixed :data:`SCHEMES`.
ORACLES = ("affine", "simplex")


def quality_order(M) -> np.ndarray:
    """Head indices sorted by quality, best first: ``argsort`` of ``diag(M)`` (stable).

    Parameters
    ----------
    M : array (H, H)
        The heads' error second-moment matrix.

    Returns
    -------
    numpy.ndarray of int
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``M`` when it is not a finite square matrix.
    """
    M = _symmetric_matrix(M, "M")
    return np.argsort(np.diag(M), kind="stable")


def fitted_weights(scheme: str, M, *, q: float = GOLDEN_Q) -> np.ndarray:
    """Weights of ``scheme`` for heads already ordered best first.

    Parameters
    ----------
    scheme : str
        One of :data:`SCHEMES` (fixed weights; ``M`` only gives ``H``) or :data:`ORACLES` (``"affine"``:
        :func:`affine_oracle_weights`, ``"simplex"``: :func:`simplex_oracle_weights` of ``M``).
    M : array (H, H)
        The heads' error second-moment matrix, symmetric positive definite.
    q : float, default :data:`GOLDEN_Q`
        The ratio of ``"geometric"``.

    Returns
    -------
    numpy.ndarray
        ``(H,)``.

    Raises
    ------
    ValueError
        Naming ``scheme`` for an unknown one, or ``M`` when it does not fit the scheme.
    """
    one_of(scheme, "scheme", SCHEMES + ORACLES)
    M = _symmetric_matrix(M, "M")
    if scheme == "affine":
        return affine_oracle_weights(M)
    if scheme == "simplex":
        return simplex_oracle_weights(M)
    return structured_weights(scheme, M.shape[0], q=q)


@dataclass(frozen=True)
class NestedErrors(ReplicatedErrors):
    """Errors of weightings as heads are added in quality order (Thm 7.1, real heads).

    ``mean``, ``se`` and ``estimate`` are the MSE per weighting and number of heads, ``(S, H)``; every
    weighting and head count is scored on the same replicates, so comparisons are paired
    (:meth:`paired_difference`).  Made by :func:`nested_errors`.

    Parameters
    ----------
    order : numpy.ndarray of int
        ``(H,)`` head indices, best first, from the fitting matrix.
    schemes : tuple of str
        The names of the weightings, in the order of ``errors``.
    errors : numpy.ndarray
        ``(S, H, R)``: ``errors[s, k - 1, r] = a' M_r a`` for weighting ``s`` of the best ``k`` heads on
        evaluation replicate ``r``.
    weights : dict
        ``{scheme: [a_1, ..., a_H]}``, ``a_k`` of shape ``(k,)`` in quality order (the oracles fitted on the
        fitting matrix).
    """

    order: np.ndarray
    schemes: tuple
    errors: np.ndarray
    weights: dict

    def samples(self, scheme: str, k: int | None = None) -> np.ndarray:
        """Per-replicate errors of one weighting with its best ``k`` heads.

        Parameters
        ----------
        scheme : str
            One of :attr:`schemes`.
        k : int, optional
            The number of heads, best first (default all).

        Returns
        -------
        numpy.ndarray
            ``(R,)``.

        Raises
        ------
        ValueError
            Naming ``k`` outside ``1..H`` or ``scheme`` for a weighting that was not scored.
        """
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        if k > H:
            raise ValueError(f"k: expected at most {H} heads, got {k}")
        return self.errors[self.schemes.index(one_of(scheme, "scheme", self.schemes)), k - 1]

    def paired_difference(self, a: str, b: str, k: int | None = None, k_b: int | None = None) -> Estimate:
        """``MSE_a - MSE_b`` with its paired s.e.; ``k_b = 1`` compares with the best single head.

        Parameters
        ----------
        a : str
            A weighting of :attr:`schemes`.
        b : str
            The weighting it is compared with.
        k : int, optional
            The heads of ``a``, best first (default all).
        k_b : int, optional
            The heads of ``b`` (default ``k``).

        Returns
        -------
        mhanw.infra.estimates.Estimate
            The difference over the evaluation replicates (unpacks as ``diff, se``).

        Raises
        ------
        ValueError
            Naming ``k`` or ``k_b`` outside ``1..H``, or ``a`` or ``b`` for a weighting that was not scored.
        """
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        k_b = k if k_b is None else positive_int(k_b, "k_b")
        for name, kk in (("k", k), ("k_b", k_b)):
            if kk > H:
                raise ValueError(f"{name}: expected at most {H} heads, got {kk}")
        one_of(a, "a", self.schemes)
        one_of(b, "b", self.schemes)
        return Estimate.paired(self.samples(a, k), self.samples(b, k_b))


def nested_errors(M_fit, M_eval, schemes=SCHEMES + ORACLES, *, q: float = GOLDEN_Q) -> NestedErrors:
    """Score weightings out of sample as heads are added in quality order (Thm 7.1, real heads).

    For ``k = 1..H`` the best ``k`` heads (by ``M_fit``) are combined with each scheme's weights for ``k``
    heads (the oracles of ``M_fit[S_k, S_k]``) and scored on every evaluation matrix, replicate by
    replicate (common random numbers across weightings and head counts).

    Parameters
    ----------
    M_fit : array (H, H)
        Error second-moment matrix estimated on replicates *independent* of ``M_eval``.  It alone decides
        the quality order (:func:`quality_order`) and the oracle weights, so that no weighting sees the
        data it is scored on.
    M_eval : array (R, H, H) or (H, H)
        Per-replicate matrices (e.g. :func:`mhanw.montecarlo.error_moments`) on which every weighting is
        scored: ``a' M_r a``.
    schemes : sequence of str or str, default all of :data:`SCHEMES` and :data:`ORACLES`
        Distinct names of the weightings.
    q : float, default :data:`GOLDEN_Q`
        The ratio of the geometric weights, in (0, 1).

    Returns
    -------
    NestedErrors
        The errors ``(S, H, R)``, the quality order and the weights used.

    Raises
    ------
    ValueError
        Naming ``M_fit``, ``M_eval``, ``schemes`` or ``q`` when it is not of that form.
    """
    M_fit = _symmetric_matrix(M_fit, "M_fit")
    H = M_fit.shape[0]
    M_eval = as_float_array(M_eval, "M_eval", ndim=(2, 3))
    M_eval = M_eval[None] if M_eval.ndim == 2 else M_eval
    if M_eval.shape[1:] != (H, H):
        raise ValueError(f"M_eval: expected shape (R, {H}, {H}) to match M_fit, got {M_eval.shape}")
    if isinstance(schemes, str):
        schemes = (schemes,)
    schemes = tuple(one_of(s, "schemes", SCHEMES + ORACLES) for s in sequence(schemes, "schemes", "weighting names"))
    if not schemes or len(set(schemes)) != len(schemes):
        raise ValueError(f"schemes: expected distinct scheme names, got {brief(schemes)}")
    q = _ratio(q, "q")
    order = quality_order(M_fit)
    fit = M_fit[np.ix_(order, order)]
    ev = M_eval[:, order][:, :, order]
    errors = np.empty((len(schemes), H, M_eval.shape[0]))
    weights: dict[str, list[np.ndarray]] = {s: [] for s in schemes}
    for k in range(1, H + 1):
        sub = ev[:, :k, :k]
        for i, s in enumerate(schemes):
            a = fitted_weights(s, fit[:k, :k], q=q)
            weights[s].append(a)
            errors[i, k - 1] = np.einsum("i,rij,j->r", a, sub, a)
    return NestedErrors(order=order, schemes=schemes, errors=errors, weights=weights)


# --------------------------------------------------------------------------- the crossover, symbolically

#: Precision (decimal digits) of the roots of the crossover polynomial (:func:`symbolic_threshold`).
ROOT_DIGITS = 30


def weights_expr(scheme, n_heads: int, q=None) -> list:
    """Weights as sympy expressions, ``[a_1, ..., a_H]`` (best head first), for :func:`crossover_gap`.

    Parameters
    ----------
    scheme : str or sequence
        ``"uniform"``, ``"geometric"`` (``a_j = (1-q) q^(j-1)/(1-q^H)``), ``"fibonacci"`` (exact
        rationals ``F_(H+1-j)/sum F``), or a sequence of ``n_heads`` numbers summing to 1 (made exact
        rationals with :func:`sympy.nsimplify`).
    n_heads : int
        ``H``, from 1 to :data:`MAX_SYMBOLIC_HEADS`.
    q : float, sympy.Expr or sympy.Symbol, optional
        The ratio of ``"geometric"`` (default ``(sqrt(5)-1)/2``).

    Returns
    -------
    list of sympy.Expr
        The ``H`` weights.

    Raises
    ------
    ValueError
        Naming ``scheme`` for an unknown name or a sequence of the wrong length or sum, ``q`` for a ratio
        outside (0, 1), or ``n_heads`` when it is out of range.
    """
    import sympy as sp

    H = _n_heads(n_heads, maximum=MAX_SYMBOLIC_HEADS, what="heads in a symbolic weighting")
    if isinstance(scheme, str):
        one_of(scheme, "scheme", SCHEMES)
        if scheme == "uniform":
            return [sp.Rational(1, H)] * H
        if scheme == "fibonacci":
            fib = [1, 1]
            while len(fib) < H:
                fib.append(fib[-1] + fib[-2])
            fib = fib[:H]
            return [sp.Rational(f, sum(fib)) for f in reversed(fib)]
        q = (sp.sqrt(5) - 1) / 2 if q is None else exact_number(q, "q")
        if q.is_number:
            _ratio(float(q), "q")
        return [sp.simplify((1 - q) * q**j / (1 - q**H)) for j in range(H)]
    a = _weights(scheme, H, "scheme")
    if abs(a.sum() - 1.0) > WEIGHT_SUM_TOL:
        raise ValueError(f"scheme: expected weights summing to 1 (within {WEIGHT_SUM_TOL:g}), got {a.sum():.17g}")
    exact = [sp.nsimplify(float(x), rational=True) for x in a]
    return [x / sum(exact) for x in exact]


def crossover_gap(n_heads: int, rho, weights):
    """``g = a'M a - u'M u`` in the graded error model, symbolically, and its variable ``r`` (Thm 7.1).

    With ``r = gamma^(1/(2(H-1)))`` the heads' error standard deviations are ``sqrt(v_j) = r^(j-1)`` and
    ``M = rho s s' + (1 - rho) diag(s^2)``, so
    ``a'Ma = rho (sum_j a_j r^(j-1))^2 + (1 - rho) sum_j a_j^2 r^(2(j-1))``: ``g`` is a polynomial in
    ``r`` of degree ``2(H-1)``.  Geometric weights beat uniform ones exactly where ``g < 0``.

    Parameters
    ----------
    n_heads : int >= 2
        ``H``, at most :data:`MAX_SYMBOLIC_HEADS`.
    rho : float or sympy.Symbol
        The error correlation (a number is made an exact rational).
    weights : list of sympy.Expr
        ``a``, from :func:`weights_expr`.

    Returns
    -------
    g : sympy.Expr
        The gap.
    r : sympy.Symbol
        Its variable.

    Raises
    ------
    ValueError
        Naming ``weights`` when there are not ``H`` of them, ``rho`` for a number out of range, or
        ``n_heads`` when it is out of range.
    """
    import sympy as sp

    H = _n_heads(n_heads, minimum=2, maximum=MAX_SYMBOLIC_HEADS, what="heads in a symbolic weighting")
    if isinstance(weights, (str, bytes)) or not isinstance(weights, (list, tuple, np.ndarray)):
        raise ValueError(
            f"weights: expected a list of {H} weights (numbers or sympy expressions), got {type(weights).__name__}"
        )
    weights = (
        [exact_number(w, "weights") for w in np.asarray(weights, dtype=object).reshape(-1)]
        if np.ndim(weights) <= 1
        else None
    )
    if weights is None:
        raise ValueError(f"weights: expected a flat list of {H} weights")
    if len(weights) != H:
        raise ValueError(f"weights: expected {H} weights (one per head), got {len(weights)}")
    rho = exact_number(rho, "rho")
    if rho.is_number:
        graded_error_matrix(H, 1.0, float(rho))  # validates rho for this H
    r = sp.Symbol("r", positive=True)
    s = [r**j for j in range(H)]
    u = [sp.Rational(1, H)] * H

    def quad(a):
        return rho * sp.Add(*[x * y for x, y in zip(a, s)]) ** 2 + (1 - rho) * sp.Add(
            *[(x * y) ** 2 for x, y in zip(a, s)]
        )

    return sp.expand(quad(list(weights)) - quad(u)), r


def symbolic_threshold(n_heads: int, rho, weights, *, gamma_max: float = 1e6) -> float:
    """The crossover ``gamma*`` from the roots of :func:`crossover_gap` (sympy), as a float (Thm 7.1).

    The smallest root ``r* > 1`` at which ``g`` changes sign from positive (uniform wins) to negative
    gives ``gamma* = r*^(2(H-1))``.  Roots are found by :func:`sympy.Poly.nroots` at
    :data:`ROOT_DIGITS` digits.  It agrees with :func:`heterogeneity_threshold` (a scan and Brent's
    method on the matrices) to about 1e-12.

    Parameters
    ----------
    n_heads : int >= 2
        ``H``.
    rho : float
        The error correlation (a number here).
    weights : list
        ``a`` (numbers here), from :func:`weights_expr`.
    gamma_max : float, default 1e6
        The end of the search.

    Returns
    -------
    float
        ``gamma*``.

    Raises
    ------
    ValueError
        Naming ``gamma_max`` when ``g`` does not turn negative for ``gamma <= gamma_max``, or the
        argument that is not a number or out of range.
    """
    import sympy as sp

    H = positive_int(n_heads, "n_heads", minimum=2)
    g, r = crossover_gap(H, rho, weights)
    if g.free_symbols - {r}:
        raise ValueError(f"rho: expected numbers for rho and the weights, got symbols {g.free_symbols - {r}}")
    gamma_max = positive_scalar(gamma_max, "gamma_max")
    poly = sp.Poly(g, r)
    if poly.is_zero:
        raise ValueError("weights: the weights equal uniform ones; there is no crossover")
    r_max = gamma_max ** (1.0 / (2 * (H - 1)))
    roots = sorted(
        float(sp.re(x))
        for x in poly.nroots(n=ROOT_DIGITS, maxsteps=500)
        if abs(sp.im(x)) < 1e-20 and 1.0 < float(sp.re(x)) <= r_max
    )
    f = sp.lambdify(r, g, "mpmath")
    for x in roots:
        below, above = f(x * (1 - 1e-9)), f(x * (1 + 1e-9))
        if below > 0 and above < 0:
            return float(x ** (2 * (H - 1)))
    raise ValueError(
        f"gamma_max: the weights do not beat uniform ones anywhere in [1, {gamma_max:g}] "
        f"(n_heads={H}, rho={float(rho) if not hasattr(rho, 'free_symbols') else rho}); no crossover"
    )
