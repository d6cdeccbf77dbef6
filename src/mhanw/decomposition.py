"""Monte Carlo bias-variance-covariance decomposition of a weighted ensemble (Thm 3.1).

For head estimates ``m_j(x)`` over replicates of ``D_n`` and weights ``a``,
with ``B_j`` the bias, ``C`` the covariance matrix of the heads (``V_j = C_jj``)
and ``S = sum_j a_j`` (Thm 3.1 with the bias term corrected for ``S != 1``):

    MSE(x) = E (sum_j a_j m_j(x) - m(x))^2
           = (sum_j a_j B_j + (S - 1) m(x))^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj'

With ``S = 1`` the first term is the paper's ``(sum_j a_j B_j)^2``; otherwise
the paper's term is wrong and the corrected one holds.  With empirical moments
over ``R`` replicates (``ddof = 0``) the identity is exact to rounding; with
``ddof = 1`` it is off by ``O(1/R)``.

The same moments give Breiman's quantities (the random-forest analogy):
``Vbar = mean_j V_j``, ``Cbar = mean_{j != j'} C_jj'``, ``rho_bar = Cbar / Vbar``
and, for uniform weights, ``Var(avg) = Vbar (rho_bar + (1 - rho_bar)/H)``.

The rule ``"sum"`` of :mod:`mhanw.heads`, ``Ybar + sum_j (m_j - Ybar)``, is the
weighted ensemble of ``H + 1`` "heads" ``(m_1, ..., m_H, Ybar)`` with weights
``(1, ..., 1, 1 - H)``, which sum to 1; decompose it that way.  The rule
``"concat"`` (value projections ``W_V^j``, output projection ``W_O``) is the
ensemble of the parts of :func:`mhanw.heads.ensemble_parts`;
:func:`symbolic_concat_decomposition` derives what plays the role of the
weights, bias, variance and covariance there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .constants import WEIGHT_SUM_TOL
from .infra.validate import as_float_array, brief, positive_int

__all__ = [
    "BVCDecomposition",
    "BreimanQuantities",
    "bias_variance_covariance",
    "breiman_quantities",
    "covariance_with_se",
    "jackknife",
    "ConcatDecomposition",
    "SymbolicDecomposition",
    "symbolic_concat_decomposition",
    "symbolic_decomposition",
    "FORMULAS",
    "MAX_SYMBOLIC_HEADS",
    "MAX_SYMBOLIC_PARTS",
]

#: The two forms of Thm 3.1's bias term, in words (:attr:`BVCDecomposition.formula` names one).
FORMULAS = {
    "sum_to_one": "(sum_j a_j B_j)^2 + sum_j a_j^2 V_j + sum_{j!=j'} a_j a_j' C_jj' (Thm 3.1 as printed; sum a = 1)",
    "corrected": "(sum_j a_j B_j + (sum_j a_j - 1) m(x))^2 + sum_j a_j^2 V_j + sum_{j!=j'} a_j a_j' C_jj' "
    "(corrected bias term; sum a != 1)",
}


@dataclass(frozen=True)
class BVCDecomposition:
    """Terms of Thm 3.1 from empirical moments (``ddof = 0``).

    Each term has shape ``()`` for estimates ``(R, H)`` and ``(m,)`` for estimates ``(R, H, m)`` (one
    value per test point).  Made by :func:`bias_variance_covariance`.

    Parameters
    ----------
    bias_squared : float or numpy.ndarray
        Squared bias of the ensemble (the corrected form if ``sum a != 1``).
    variance_term : float or numpy.ndarray
        ``sum_j a_j^2 V_j``.
    covariance_term : float or numpy.ndarray
        ``sum_{j != j'} a_j a_j' C_jj'``.
    mse : float or numpy.ndarray
        Monte Carlo MSE ``mean_r (sum_j a_j m_jr - m)^2``;
        ``bias_squared + variance_term + covariance_term == mse`` to rounding.
    mse_se : float or numpy.ndarray
        Standard error of ``mse`` (``sd/sqrt(R)`` of the squared errors, ddof = 1).
    mse_se_integrated : float
        Standard error of ``mean(mse)`` over the test points (``sd_r`` of the per-replicate mean squared
        error ``/ sqrt(R)``).
    printed_bias_squared : float or numpy.ndarray
        The paper's ``(sum_j a_j B_j)^2`` whatever ``sum a``.
    formula : str
        ``"sum_to_one"`` or ``"corrected"`` (text in :data:`FORMULAS`).
    weights_sum : float
        ``sum_j a_j``.
    weights : numpy.ndarray
        ``(H,)``.
    bias : numpy.ndarray
        Per-head bias ``B_j``, ``(H,)`` or ``(H, m)``.
    covariance : numpy.ndarray
        Head covariance matrix ``C``, ``(H, H)`` or ``(H, H, m)``.
    n_rep : int
        ``R``.
    """

    bias_squared: np.ndarray | float
    variance_term: np.ndarray | float
    covariance_term: np.ndarray | float
    mse: np.ndarray | float
    mse_se: np.ndarray | float
    mse_se_integrated: float
    printed_bias_squared: np.ndarray | float
    formula: str
    weights_sum: float
    weights: np.ndarray
    bias: np.ndarray
    covariance: np.ndarray
    n_rep: int

    @property
    def formula_text(self) -> str:
        """The formula used, in words."""
        return FORMULAS[self.formula]

    @property
    def mean_variance(self):
        """Breiman's ``Vbar = mean_j V_j``."""
        return np.einsum("jj...->j...", self.covariance).mean(axis=0)

    @property
    def mean_covariance(self):
        """Breiman's ``Cbar = mean_{j != j'} C_jj'`` (``nan`` for one head)."""
        H = self.covariance.shape[0]
        if H < 2:
            return np.full(self.covariance.shape[2:], np.nan)[()]
        total = self.covariance.sum(axis=(0, 1)) - np.einsum("jj...->j...", self.covariance).sum(axis=0)
        return total / (H * (H - 1))

    @property
    def rho_bar(self):
        """Breiman's mean correlation ``rho_bar = Cbar / Vbar`` (a ratio of means)."""
        return self.mean_covariance / self.mean_variance

    def averaged(self) -> BVCDecomposition:
        """The decomposition averaged over test points (integrated over ``x``).

        Every term is linear in the per-point moments, so the identity still holds; ``mse_se`` becomes
        ``mse_se_integrated``.

        Returns
        -------
        BVCDecomposition
            With every term a float.
        """
        if np.ndim(self.mse) == 0:
            return self
        mean = lambda v: float(np.mean(v))  # noqa: E731
        return BVCDecomposition(
            bias_squared=mean(self.bias_squared),
            variance_term=mean(self.variance_term),
            covariance_term=mean(self.covariance_term),
            mse=mean(self.mse),
            mse_se=self.mse_se_integrated,
            mse_se_integrated=self.mse_se_integrated,
            printed_bias_squared=mean(self.printed_bias_squared),
            formula=self.formula,
            weights_sum=self.weights_sum,
            weights=self.weights,
            bias=self.bias.mean(axis=-1),
            covariance=self.covariance.mean(axis=-1),
            n_rep=self.n_rep,
        )


def _check(estimates, target, weights):
    est = as_float_array(estimates, "estimates", ndim=(2, 3))
    R, H = est.shape[:2]
    point_shape = est.shape[2:]
    tgt = as_float_array(target, "target", ndim=(0, 1))
    if tgt.ndim == 1:
        if est.ndim == 2 or tgt.shape != point_shape:
            raise ValueError(
                f"target: expected a scalar or shape {point_shape} (one value per test point), got {tgt.shape}"
            )
    a = as_float_array(weights, "weights", ndim=1)
    if a.shape[0] != H:
        raise ValueError(f"weights: expected {H} weights (one per head of estimates {est.shape}), got {a.shape}")
    return est, tgt, a


def bias_variance_covariance(estimates, target, weights) -> BVCDecomposition:
    """Bias-variance-covariance decomposition of ``sum_j a_j m_j(x)`` (Thm 3.1).

    Parameters
    ----------
    estimates : array (R, H) or (R, H, m)
        Head estimates over ``R`` replicates of ``D_n``, ``H`` heads and ``m`` test points.
    target : float or array (m,)
        The true ``m(x)``.
    weights : array (H,)
        Head weights ``a``; any real numbers.

    Returns
    -------
    BVCDecomposition
        With empirical moments (``ddof = 0``), ``bias_squared + variance_term + covariance_term == mse``
        to rounding (relative error of order 1e-15) for any weights; ``formula`` says whether the
        paper's bias term (``sum a = 1``) or the corrected one was needed.

    Raises
    ------
    ValueError
        Naming ``estimates`` when a squared term does not fit in float64 (the moments themselves are
        computed on rescaled values), or the argument whose shape does not fit the others.
    """
    est, tgt, a = _check(estimates, target, weights)
    # Work on estimates and target divided by a power of two (exact): no square overflows on the way.
    e = int(np.frexp(max(np.abs(est).max(), np.abs(tgt).max()))[1])
    est, tgt = np.ldexp(est, -e), np.ldexp(tgt, -e)
    R = est.shape[0]
    tail = (slice(None),) + (None,) * (est.ndim - 2)  # broadcast a over test points
    err = est - tgt  # (R, H[, m])
    bias = err.mean(axis=0)  # (H[, m])
    centred = err - bias
    cov = np.einsum("rj...,rk...->jk...", centred, centred) / R  # (H, H[, m])
    s = float(a.sum())
    weighted_bias = (a[tail] * bias).sum(axis=0)
    bias_sq = (weighted_bias + (s - 1.0) * tgt) ** 2
    diag = np.einsum("jj...->j...", cov)
    variance_term = ((a * a)[tail] * diag).sum(axis=0)
    aa = np.multiply.outer(a, a)
    total = np.einsum("jk,jk...->...", aa, cov)
    covariance_term = total - variance_term
    sq = (np.einsum("j,rj...->r...", a, est) - tgt) ** 2
    mse = sq.mean(axis=0)
    sq_int = sq.reshape(R, -1).mean(axis=1)
    if R > 1:
        mse_se = sq.std(axis=0, ddof=1) / np.sqrt(R)
        mse_se_int = float(sq_int.std(ddof=1) / np.sqrt(R))
    else:
        mse_se, mse_se_int = np.full(np.shape(mse), np.nan), float("nan")
    # the same test of "sum a = 1" as the "average" rule of mhanw.heads
    formula = "sum_to_one" if abs(s - 1.0) <= WEIGHT_SUM_TOL else "corrected"

    def second(v):  # a second moment back on the scale of the estimates
        with np.errstate(over="ignore"):
            out = np.ldexp(v, 2 * e)
        if np.any(np.isinf(out) & np.isfinite(v)):
            raise ValueError(
                f"estimates: the squared errors overflow float64 (|estimates - target| up to "
                f"about 2^{e}); rescale the estimates and the target"
            )
        return out

    as_out = (lambda v: float(second(v))) if est.ndim == 2 else (lambda v: np.asarray(second(v), dtype=float))
    terms = [as_out(v) for v in (bias_sq, variance_term, covariance_term, mse)]
    if not all(np.all(np.isfinite(t)) for t in terms):
        raise ValueError(
            f"weights: the weighted terms overflow float64 (weights up to {np.abs(a).max():.3g}); rescale the weights"
        )
    return BVCDecomposition(
        bias_squared=terms[0],
        variance_term=terms[1],
        covariance_term=terms[2],
        mse=terms[3],
        mse_se=as_out(mse_se),
        mse_se_integrated=float(second(mse_se_int)),
        printed_bias_squared=as_out(weighted_bias**2),
        formula=formula,
        weights_sum=s,
        weights=a,
        bias=np.ldexp(bias, e),
        covariance=second(cov),
        n_rep=R,
    )


def covariance_with_se(x, y) -> tuple:
    """Empirical covariance (ddof = 0) of paired samples and its standard error (Lemma 4.1).

    Parameters
    ----------
    x : array (R,) or (R, m)
        One sample, replicates first, ``R >= 2``.
    y : array (R,) or (R, m)
        The paired sample, of the shape of ``x``.

    Returns
    -------
    cov : float or numpy.ndarray
        ``mean_r (x_r - xbar)(y_r - ybar)``, ``()`` or ``(m,)``.
    se : float or numpy.ndarray
        ``sd_r((x_r - xbar)(y_r - ybar)) / sqrt(R)``, of the shape of ``cov``.

    Raises
    ------
    ValueError
        Naming ``y`` when its shape differs from ``x``'s, ``x`` for fewer than 2 replicates or a
        covariance beyond the largest double.
    """
    x = as_float_array(x, "x", ndim=(1, 2))
    y = as_float_array(y, "y", ndim=(1, 2))
    if x.shape != y.shape:
        raise ValueError(f"y: expected the shape of x {x.shape}, got {y.shape}")
    R = x.shape[0]
    if R < 2:
        raise ValueError(f"x: expected at least 2 replicates, got shape {x.shape}")
    # x and y divided by powers of two (exact) so that no product or square overflows; scaled back last
    ex, ey = (int(np.frexp(np.abs(v).max())[1]) for v in (x, y))
    xs, ys = np.ldexp(x, -ex), np.ldexp(y, -ey)
    p = (xs - xs.mean(axis=0)) * (ys - ys.mean(axis=0))
    with np.errstate(over="ignore"):
        cov, se = np.ldexp(p.mean(axis=0), ex + ey), np.ldexp(p.std(axis=0, ddof=1) / np.sqrt(R), ex + ey)
    if not (np.all(np.isfinite(cov)) and np.all(np.isfinite(se))):
        raise ValueError(f"x: the covariance of x and y is beyond the largest double (x up to 2^{ex}, y up to 2^{ey})")
    return cov[()], se[()]


@dataclass(frozen=True)
class BreimanQuantities:
    """Breiman's quantities of the uniform average of ``H`` heads, integrated over the test points.

    Moments over replicates use ``ddof = 0`` and are averaged over the test points before any ratio is
    taken, so that Breiman's identity is exact.  Made by :func:`breiman_quantities`.

    Parameters
    ----------
    mean_variance : float
        ``Vbar = mean_x mean_j V_j(x)``.
    mean_covariance : float
        ``Cbar = mean_x mean_{j != j'} C_jj'(x)``.
    rho_bar : float
        ``Cbar / Vbar``.
    ensemble_variance : float
        ``mean_x Var(mean_j m_j(x))``, computed directly from the averaged estimates.
    breiman_variance : float
        ``Vbar (rho_bar + (1 - rho_bar)/H)``, equal to ``ensemble_variance`` to rounding (the identity
        is exact).
    mse : float
        ``mean_x E(mean_j m_j(x) - m(x))^2``.
    n_heads : int
        ``H``.
    """

    mean_variance: float
    mean_covariance: float
    rho_bar: float
    ensemble_variance: float
    breiman_variance: float
    mse: float
    n_heads: int

    #: Fields returned by :meth:`vector`, in order.
    FIELDS = ("mean_variance", "mean_covariance", "rho_bar", "ensemble_variance", "breiman_variance", "mse")

    def vector(self) -> np.ndarray:
        """The quantities of :attr:`FIELDS` as one array (e.g. for :func:`jackknife`).

        Returns
        -------
        numpy.ndarray
            ``(6,)``.
        """
        return np.array([getattr(self, f) for f in self.FIELDS])


def breiman_quantities(estimates, target) -> BreimanQuantities:
    """Breiman's ``Vbar``, ``Cbar``, ``rho_bar`` and ``Var(avg)`` of uniformly averaged heads (Section 12).

    Parameters
    ----------
    estimates : array (R, H) or (R, H, m)
        Head estimates over ``R`` replicates of ``D_n`` at ``m`` fixed points, ``H >= 2``.
    target : float or array (m,)
        ``m(x)`` at the points (enters only ``mse``).

    Returns
    -------
    BreimanQuantities
        The quantities, integrated over the points.

    Raises
    ------
    ValueError
        Naming ``estimates`` when every head has zero variance (``Vbar = 0``), where ``rho_bar`` is
        undefined, for fewer than two heads, or the argument whose shape does not fit.
    """
    est = as_float_array(estimates, "estimates", ndim=(2, 3))
    est, tgt, _ = _check(est, target, np.ones(est.shape[1]))
    H = est.shape[1]
    if H < 2:
        raise ValueError(f"estimates: expected at least 2 heads (axis 1), got shape {est.shape}")
    dec = bias_variance_covariance(est, tgt, np.full(H, 1.0 / H)).averaged()
    vbar, cbar = float(dec.mean_variance), float(dec.mean_covariance)
    if vbar == 0.0:
        raise ValueError(
            "estimates: the heads have zero variance over the replicates; rho_bar = Cbar/Vbar is undefined"
        )
    rho = cbar / vbar
    avg = est.mean(axis=1)  # (R[, m])
    return BreimanQuantities(
        mean_variance=vbar,
        mean_covariance=cbar,
        rho_bar=rho,
        ensemble_variance=float(np.mean(avg.var(axis=0))),
        breiman_variance=vbar * (rho + (1.0 - rho) / H),
        mse=float(dec.mse),
        n_heads=H,
    )


def jackknife(statistic, arrays, n_blocks: int = 20):
    """Delete-a-group jackknife over replicates: ``(estimate, standard error)``.

    For the mean and ``n_blocks = R`` the standard error is ``sd / sqrt(R)`` exactly.

    Parameters
    ----------
    statistic : callable
        ``(*arrays) -> float or array``, computed on the full data and with each group of replicates
        left out.
    arrays : sequence of numpy.ndarray
        Arrays sharing the replicate axis 0 (length ``R``); several arrays give paired standard errors
        (e.g. a difference of two settings computed on the same replicates, common random numbers).
    n_blocks : int, default 20
        Number of contiguous groups of (nearly) equal size, ``2 <= n_blocks <= R``; ``n_blocks = R`` is
        the delete-one jackknife.

    Returns
    -------
    theta : float or numpy.ndarray
        ``statistic(*arrays)``.
    se : float or numpy.ndarray
        ``sqrt((B - 1)/B sum_b (theta_(b) - mean_b theta_(b))^2)``, of the statistic's shape.

    Raises
    ------
    ValueError
        Naming ``arrays`` when they do not share the replicate axis, ``n_blocks`` when it is out of
        range, or ``statistic`` when it is not callable or gives a value that is not finite or changes
        shape.
    """
    if not callable(statistic):
        raise ValueError(f"statistic: expected a callable, got {type(statistic).__name__}")
    if isinstance(arrays, np.ndarray):
        arrays = (arrays,)
    if isinstance(arrays, (str, bytes)) or not isinstance(arrays, (list, tuple)):
        raise ValueError(f"arrays: expected a list or tuple of arrays (or one array), got {type(arrays).__name__}")
    arrays = [np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("arrays: expected at least one array, got none")
    R = arrays[0].shape[0] if arrays[0].ndim else 0
    for i, a in enumerate(arrays):
        if a.ndim == 0 or a.shape[0] != R:
            raise ValueError(f"arrays: array {i} has shape {a.shape}; expected {R} replicates on axis 0")
    if R < 2:
        raise ValueError(f"arrays: expected at least 2 replicates on axis 0 (a jackknife), got {R}")
    if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)) or not 2 <= n_blocks <= R:
        raise ValueError(f"n_blocks: expected an integer in [2, {R}] (the number of replicates), got {brief(n_blocks)}")
    theta = _statistic_value(statistic(*arrays), "on all replicates", None)
    edges = np.linspace(0, R, int(n_blocks) + 1).round().astype(int)
    keep = np.ones(R, dtype=bool)
    leave_out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        keep[lo:hi] = False
        leave_out.append(
            _statistic_value(statistic(*[a[keep] for a in arrays]), f"with replicates {lo}:{hi} left out", theta.shape)
        )
        keep[lo:hi] = True
    left_out = np.stack(leave_out)
    B = left_out.shape[0]
    dev = left_out - left_out.mean(axis=0)
    with np.errstate(over="ignore"):
        se = np.sqrt((B - 1) / B * (dev**2).sum(axis=0))
    if not np.all(np.isfinite(se)):  # squares beyond a double: the same sum, scaled by the largest deviation
        scale = np.max(np.abs(dev), axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        se = scale * np.sqrt((B - 1) / B * ((dev / scale) ** 2).sum(axis=0))
        if not np.all(np.isfinite(se)):
            raise ValueError(
                "statistic: its values left out block by block spread beyond a double; the jackknife "
                "standard error is not a number"
            )
    return theta[()], se[()]


def _statistic_value(value, where: str, shape) -> np.ndarray:
    """A jackknife statistic's value as a finite float array, checked.

    What :func:`jackknife`'s statistic returned ``where`` as a finite float array of ``shape`` (the shape of
    its value on all replicates), else ``ValueError`` naming ``statistic``: a NaN, inf, string or boolean would
    give a NaN or meaningless standard error, and a change of shape an error without a name.
    """
    try:
        out = as_float_array(value, "statistic", allow_empty=True)
    except ValueError as exc:
        raise ValueError(
            f"statistic: expected a finite number or array of real numbers {where}, got "
            f"{type(value).__name__} {brief(value)} ({str(exc).partition(': ')[2]})"
        ) from None
    if shape is not None and out.shape != shape:
        raise ValueError(f"statistic: returned shape {out.shape} {where}, but shape {shape} on all replicates")
    return out


# --------------------------------------------------------------------------- symbolic derivation


def _expectation(expr, e, C):
    """The expectation of a quadratic polynomial in centred errors.

    ``E expr`` for a polynomial of degree at most 2 in centred errors ``e`` with covariances ``C``
    (``E e_a = 0``, ``E e_a e_b = C_ab``): expand in ``e``, keep the constant, map each product.
    """
    import sympy as sp

    out = sp.Integer(0)
    for powers, coeff in sp.Poly(sp.expand(expr), *e).terms():
        idx = [a for a, q in enumerate(powers) for _ in range(q)]
        if not idx:
            out += coeff
        elif len(idx) == 2:
            out += coeff * C[idx[0], idx[1]]
        elif len(idx) > 2:
            raise ValueError(f"expr: expected a polynomial of degree at most 2 in the errors, got degree {len(idx)}")
        # a single e_a has mean 0
    return out


@dataclass(frozen=True)
class SymbolicDecomposition:
    """Thm 3.1 derived in sympy for ``H`` heads and symbolic or given weights.

    Write each head as ``m_j = m + B_j + e_j`` with ``E e_j = 0`` and ``E e_j e_k = C_jk`` (``C``
    symmetric, ``V_j = C_jj``).  :func:`symbolic_decomposition` expands ``(sum_j a_j m_j - m)^2`` as a
    polynomial in the ``e_j`` and takes its expectation term by term (linear terms vanish,
    ``e_j e_k -> C_jk``): that is :attr:`mse`, derived, not assumed.

    Parameters
    ----------
    mse : sympy.Expr
        The derived ``E (sum_j a_j m_j - m)^2``.
    printed : sympy.Expr
        The printed right-hand side ``(sum a_j B_j)^2 + sum a_j^2 V_j + sum_{j != k} a_j a_k C_jk``.
    corrected : sympy.Expr
        The same with the bias term ``(sum a_j B_j + (sum a_j - 1) m)^2``.
    printed_gap : sympy.Expr
        ``mse - printed``, factored (zero exactly when the weights sum to 1 or ``m = 0``).
    corrected_gap : sympy.Expr
        ``mse - corrected``, simplified (zero for every ``H`` and weights).
    ddof_offset : sympy.Expr
        ``a' C^(1) a - a' C^(0) a`` with ``C^(1) = R/(R - 1) C^(0)`` (empirical moments with divisor
        ``R - 1`` against ``R``): ``a' C^(0) a / (R - 1)``.
    weights : tuple
        ``a_1..a_H`` (symbols or numbers).
    bias : tuple
        The symbols ``B_1..B_H``.
    covariance : sympy.Matrix
        The symmetric ``C``.
    m : sympy.Symbol
        The target.
    R : sympy.Symbol
        The number of replicates.
    """

    mse: Any
    printed: Any
    corrected: Any
    printed_gap: Any
    corrected_gap: Any
    ddof_offset: Any
    weights: tuple
    bias: tuple
    covariance: Any
    m: Any
    R: Any

    @property
    def weights_sum(self):
        """``sum_j a_j`` (a sympy expression)."""
        import sympy as sp

        return sp.nsimplify(sum(self.weights))


#: Largest number of heads the symbolic decomposition is derived for (H = 12 already takes seconds).
MAX_SYMBOLIC_HEADS = 8


def symbolic_decomposition(n_heads: int, weights=None) -> SymbolicDecomposition:
    """Derive the bias-variance-covariance decomposition of ``sum_j a_j m_j(x)`` in sympy (Thm 3.1).

    The derivation assumes only finite second moments; see :class:`SymbolicDecomposition`.

    Parameters
    ----------
    n_heads : int
        ``H``, from 1 to :data:`MAX_SYMBOLIC_HEADS`.
    weights : sequence, optional
        ``None`` (symbols ``a_1..a_H``) or ``H`` numbers or sympy expressions (numbers are made exact
        with :func:`sympy.nsimplify`, so ``0.6`` is ``3/5``).

    Returns
    -------
    SymbolicDecomposition
        The derived and printed forms and their gaps.

    Raises
    ------
    ValueError
        Naming ``n_heads`` when it is out of range, or ``weights`` when they are not ``H`` numbers or
        expressions.
    """
    import sympy as sp

    H = positive_int(n_heads, "n_heads")
    if H > MAX_SYMBOLIC_HEADS:
        raise ValueError(
            f"n_heads: the symbolic decomposition is derived for at most {MAX_SYMBOLIC_HEADS} heads "
            f"(its size grows as H^2 terms), got {H}"
        )
    if weights is None:
        a = sp.symbols(f"a_1:{H + 1}", real=True)
    else:
        w = list(np.atleast_1d(np.asarray(weights, dtype=object)))
        if len(w) != H:
            raise ValueError(f"weights: expected {H} weights (one per head), got {len(w)}")
        from .covariance import _symbolic_argument

        a = tuple(_symbolic_argument(v, "weights", positive=False) for v in w)
    m = sp.Symbol("m", real=True)
    B = sp.symbols(f"B_1:{H + 1}", real=True)
    e = sp.symbols(f"e_1:{H + 1}", real=True)
    C = sp.Matrix(H, H, lambda j, k: sp.Symbol(f"C_{min(j, k) + 1}{max(j, k) + 1}", real=True))
    R = sp.Symbol("R", positive=True)

    # E[(sum_j a_j (m + B_j + e_j) - m)^2]: expand in e, then E e_j = 0, E e_j e_k = C_jk.
    mse = _expectation((sum(a[j] * (m + B[j] + e[j]) for j in range(H)) - m) ** 2, e, C)
    variance = sum(a[j] ** 2 * C[j, j] for j in range(H))
    cross = sum(a[j] * a[k] * C[j, k] for j in range(H) for k in range(H) if j != k)
    weighted_bias = sum(a[j] * B[j] for j in range(H))
    printed = weighted_bias**2 + variance + cross
    corrected = (weighted_bias + (sum(a) - 1) * m) ** 2 + variance + cross
    quad = sum(a[j] * a[k] * C[j, k] for j in range(H) for k in range(H))
    return SymbolicDecomposition(
        mse=sp.expand(mse),
        printed=printed,
        corrected=corrected,
        printed_gap=sp.factor(sp.expand(mse - printed)),
        corrected_gap=sp.simplify(sp.expand(mse - corrected)),
        ddof_offset=sp.simplify(R / (R - 1) * quad - quad),
        weights=tuple(a),
        bias=tuple(B),
        covariance=C,
        m=m,
        R=R,
    )


# --------------------------------------------------------------------------- the concat rule


@dataclass(frozen=True)
class ConcatDecomposition:
    """Thm 3.1 for heads combined as a transformer does (rule ``"concat"`` of :mod:`mhanw.heads`), in sympy.

    The ensemble is ``f = Ybar + sum_{j,k} u_jk s_jk``: ``s_jk`` is head ``j``'s smooth of the
    centred value column ``k`` (``k = 0`` the response, ``k >= 1`` the inputs), ``u_jk =
    (W_V^j W_O^j)_k`` the product of the value and output projections.  Write ``Ybar = mu_0 +
    e_0``, ``s_jk = mu_jk + e_jk`` (``E e = 0``, covariances ``C``); :func:`symbolic_concat_decomposition`
    expands ``E (f - m)^2`` in the ``e`` and takes expectations term by term, so :attr:`mse` is
    derived.  :attr:`gap` (``mse`` minus the sum of the terms) simplifies to 0.  With one response
    column (``u_j0 = a_j``) this is the sum rule's decomposition; :attr:`sum_rule_gap` is the difference
    from Thm 3.1 for the ``H + 1`` heads ``(Ybar + s_10, ..., Ybar + s_H0, Ybar)`` with weights
    ``(a, 1 - sum a)``, also 0.  :meth:`evaluate` puts numbers (empirical moments) in.

    Parameters
    ----------
    mse : sympy.Expr
        The derived ``E (f - m)^2``.
    bias_squared : sympy.Expr
        ``(mu_0 - m + sum u_jk mu_jk)^2``, the ensemble's bias (no head has one of its own: the heads
        regress their own centred targets).
    variance_term : sympy.Expr
        ``sum u_jk^2 V_jk``.
    intercept_variance : sympy.Expr
        ``V_0 = Var Ybar``.
    within_head_covariance : sympy.Expr
        ``sum_j sum_{k != k'} u_jk u_jk' C_(jk)(jk')``, the columns of one head.
    between_head_covariance : sympy.Expr
        ``sum_{j != j'} sum_{k, k'} u_jk u_j'k' C_(jk)(j'k')``, the term that decorrelated heads remove
        (Thm 3.1's covariance term).
    intercept_covariance : sympy.Expr
        ``2 sum u_jk C_0(jk)``.
    gap : sympy.Expr
        ``mse`` minus the sum of the terms, simplified (0).
    sum_rule_gap : sympy.Expr
        The difference from Thm 3.1's sum-rule form (0 with one column).
    weights : sympy.Matrix
        The weights ``u`` (symbols), ``(H, p)``: what plays the role of Thm 3.1's ``a_j`` (they need not
        sum to anything; the intercept ``Ybar`` takes the level).
    means : tuple
        The symbols ``mu_0, mu_10, ..., mu_H(p-1)``.
    covariance : sympy.Matrix
        The symmetric covariance of the parts.
    m : sympy.Symbol
        The target.
    n_heads : int
        ``H``.
    n_columns : int
        ``p``.
    """

    mse: Any
    bias_squared: Any
    variance_term: Any
    intercept_variance: Any
    within_head_covariance: Any
    between_head_covariance: Any
    intercept_covariance: Any
    gap: Any
    sum_rule_gap: Any
    weights: Any
    means: tuple
    covariance: Any
    m: Any
    n_heads: int
    n_columns: int

    #: The terms of :attr:`mse`, in order (their sum is ``mse``).
    TERMS = (
        "bias_squared",
        "variance_term",
        "intercept_variance",
        "within_head_covariance",
        "between_head_covariance",
        "intercept_covariance",
    )

    def evaluate(self, means, covariance, target, weights) -> dict:
        """The terms at numbers (empirical moments).

        Parameters
        ----------
        means : array (P,)
            Means of the parts ``(Ybar, s_10, s_11, ..., s_H(p-1))`` (``P = 1 + H p``, the order of
            :func:`mhanw.heads.ensemble_parts`).
        covariance : array (P, P)
            Their covariance.
        target : float
            ``m``.
        weights : array (H, p)
            ``u``.

        Returns
        -------
        dict
            ``{term: float}`` for :attr:`TERMS` and ``"mse"``.

        Raises
        ------
        ValueError
            Naming ``means`` when the shapes do not fit the decomposition, or the argument that is not
            finite.
        """
        import sympy as sp

        P = 1 + self.n_heads * self.n_columns
        mu = as_float_array(means, "means", ndim=1)
        C = as_float_array(covariance, "covariance", ndim=2)
        u = as_float_array(weights, "weights", ndim=(1, 2)).reshape(-1)
        if mu.shape != (P,) or C.shape != (P, P) or u.shape != (P - 1,):
            raise ValueError(
                f"means: expected means ({P},), covariance ({P}, {P}) and weights "
                f"({self.n_heads}, {self.n_columns}), got {mu.shape}, {C.shape}, {u.shape}"
            )
        subs = {self.m: float(as_float_array(target, "target", ndim=0))}
        subs.update({s: float(v) for s, v in zip(self.means, mu)})
        subs.update({s: float(v) for s, v in zip(self.weights, u)})
        for a in range(P):
            for b in range(a, P):
                subs[self.covariance[a, b]] = float(C[a, b])

        def at(expr):  # a derived sympy expression, or a plain 0 where a term vanishes identically
            return float(expr.xreplace(subs) if isinstance(expr, sp.Basic) else expr)

        out = {t: at(getattr(self, t)) for t in self.TERMS}
        out["mse"] = at(self.mse)
        return out


#: Largest number of parts ``1 + H p`` the concat decomposition is derived for.
MAX_SYMBOLIC_PARTS = 13


def symbolic_concat_decomposition(n_heads: int, n_columns: int = 1) -> ConcatDecomposition:
    """Derive Thm 3.1's decomposition for ``f = Ybar + sum_{j,k} u_jk s_jk`` in sympy (rule ``"concat"``).

    Assumes only finite second moments and weights ``u`` that do not depend on the sample (a fixed
    ``W_O``; for a fitted one decompose the contributions with :func:`bias_variance_covariance`, see
    :func:`mhanw.heads.ensemble_parts`).  See :class:`ConcatDecomposition`.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    n_columns : int >= 1, default 1
        ``p``, the value columns each head smooths (``values="response"``: 1; ``"stream"``: ``1 + d``).

    Returns
    -------
    ConcatDecomposition
        The derived terms and gaps.

    Raises
    ------
    ValueError
        Naming ``n_heads`` or ``n_columns`` when the decomposition would be too large or the value is out
        of range.
    """
    import sympy as sp

    H = positive_int(n_heads, "n_heads")
    p = positive_int(n_columns, "n_columns")
    P = 1 + H * p
    if P > MAX_SYMBOLIC_PARTS:
        raise ValueError(
            f"n_heads, n_columns: the concat decomposition is derived for at most {MAX_SYMBOLIC_PARTS} parts "
            f"1 + H p, got 1 + {H} x {p} = {P}"
        )
    m = sp.Symbol("m", real=True)
    u = sp.symbols(f"u_1:{H + 1}_0:{p}", real=True)  # u_jk, j = 1..H, k = 0..p-1, head-major
    mu = sp.symbols(f"mu_0:{P}", real=True)  # mu_0 the intercept, then mu of s_jk head-major
    e = sp.symbols(f"e_0:{P}", real=True)
    C = sp.Matrix(P, P, lambda a, b: sp.Symbol(f"C_{min(a, b)}_{max(a, b)}", real=True))
    w = (sp.Integer(1),) + tuple(u)
    head = [None] + [j for j in range(H) for _ in range(p)]  # the head of each part (None: the intercept)

    f = sum(w[a] * (mu[a] + e[a]) for a in range(P))
    mse = _expectation((f - m) ** 2, e, C)

    bias_sq = (mu[0] - m + sum(w[a] * mu[a] for a in range(1, P))) ** 2
    variance = sum(w[a] ** 2 * C[a, a] for a in range(1, P))
    within = sum(w[a] * w[b] * C[a, b] for a in range(1, P) for b in range(1, P) if a != b and head[a] == head[b])
    between = sum(w[a] * w[b] * C[a, b] for a in range(1, P) for b in range(1, P) if head[a] != head[b])
    intercept_cov = 2 * sum(w[a] * C[0, a] for a in range(1, P))
    terms = bias_sq + variance + C[0, 0] + within + between + intercept_cov

    # one response column: Thm 3.1 (corrected form) for the heads c_j = Ybar + s_j0 and Ybar
    if p == 1:
        a = u
        comp_mu = [mu[0] + mu[1 + j] for j in range(H)] + [mu[0]]
        comp_e = [e[0] + e[1 + j] for j in range(H)] + [e[0]]
        weights = list(a) + [1 - sum(a)]
        sym = symbolic_decomposition(H + 1, weights)

        subs = {sym.m: m}
        subs.update({sym.bias[i]: comp_mu[i] - m for i in range(H + 1)})
        for i in range(H + 1):
            for k in range(i, H + 1):
                subs[sym.covariance[i, k]] = _expectation(comp_e[i] * comp_e[k], e, C)
        sum_rule_gap = sp.simplify(sp.expand(sym.corrected.xreplace(subs) - mse))
    else:
        sum_rule_gap = None
    return ConcatDecomposition(
        mse=sp.expand(mse),
        bias_squared=bias_sq,
        variance_term=variance,
        intercept_variance=C[0, 0],
        within_head_covariance=within,
        between_head_covariance=between,
        intercept_covariance=intercept_cov,
        gap=sp.simplify(sp.expand(mse - terms)),
        sum_rule_gap=sum_rule_gap,
        weights=tuple(u),
        means=tuple(mu),
        covariance=C,
        m=m,
        n_heads=H,
        n_columns=p,
    )
