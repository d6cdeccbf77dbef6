"""Training the head projections by gradient descent on a loss the model can see (Thm 5.1's interpretation).

The paper reads Thm 5.1 as a statement about training: gradient descent makes
decorrelation "an implicit training objective" and pushes heads towards
orthogonal subspaces.  This module trains Gaussian Nadaraya-Watson heads and
measures where they go.

The model: heads ``W_j`` ``(d, d_k)`` (``W`` ``(H, d, d_k)``, unconstrained: their
scale is an inverse bandwidth, their column spaces are what HDI_PA measures), a
bandwidth ``h``, tied query and key projections, and a combination rule of
:mod:`mhanw.heads`:

- ``"average"``: ``f = (1/H) sum_j m_j``;
- ``"sum"``: ``f = Ybar + sum_j (m_j - Ybar)`` (the additive rule; ``"concat"`` with the shared
  response and ``W_O`` fixed at ones);
- ``"concat"``: the value stream ``z = (Y, X)`` centred, value projections
  ``W_V^j`` (``values="response"`` or ``"stream"``), and the output projection
  ``W_O`` fitted by least squares at every step (the inner problem solved
  exactly): ``f = Ybar + sum_j o_j . W_O^j``.

The loss is the **leave-one-out** error on the training sample,
``L(W) = (1/n) sum_i (f^(-i)(X_i) - Y_i)^2``, each head's estimate at ``X_i``
computed without the point ``i`` (:func:`mhanw.nw.leave_one_out`), so that no
head lowers the loss by matching a point to itself: the in-sample error of a
Gaussian head tends to 0 as its projection grows (the self weight dominates),
the leave-one-out error does not.

The gradient is analytic.  With LOO weights ``w_il`` of head ``j``
(``w_ii = 0``), logits ``l_il = -|W_j^T u_il|^2 / (2 h^2)``, ``u_il = X_i - X_l``,
head ``j``'s estimate of its target ``t^j`` (``Y`` for averaging,
``Zc W_V^j W_O^j`` for concat) ``that_ij = sum_l w_il t_l`` and
``g_i = 2 (f_i - Y_i) / n``:

    dL/dW_j = -(c_j / h^2) S_j W_j,   S_j = sum_{i,l} g_i w_il (t_l - that_ij) u_il u_il^T,

``c_j = 1/H`` (average), 1 (sum) or 1 (concat, where ``W_O`` is at its least-squares
optimum, so its own dependence on ``W`` drops out: the envelope theorem).
:func:`loo_loss` returns both; the tests compare the gradient with finite
differences.  An optional orthogonality penalty
``lambda sum_{j<k} tr(P_j P_k) / d_k`` (``P_j`` the projector on the column space of
``W_j``: the number of pairs times ``1 - HDI_PA``) is the
positive control: training that is told to orthogonalise must be seen to.

:func:`train_heads` runs gradient descent with Armijo backtracking from given
projections and records, along the path, HDI_PA of the keys (the column
spaces of the ``W_j``), the diversity of the query-key circuits ``W_j W_j^T``
(tied projections: the circuit has the column space of ``W_j``, but once the
heads are trained their singular values differ, so the circuits' index,
HDI_RV, one minus the mean cosine ``tr(M_j M_k)/(|M_j| |M_k|)``, can move
apart from HDI_PA), the heads' error correlation on fresh data, the training
loss and the IMSE on fresh data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import heads as _heads
from .constants import MAX_REPLICATES, check_entries, check_work
from .data import Sample
from .diversity import head_diversity_index
from .infra.validate import as_float_array, boolean, nonnegative_scalar, one_of, positive_int, positive_scalar

__all__ = [
    "COMBINATIONS",
    "LooLoss",
    "TrainingPath",
    "error_correlation",
    "fresh_error",
    "loo_loss",
    "orthogonality_penalty",
    "train_heads",
    "training_work",
]

#: The combination rules training supports: every rule of :data:`mhanw.heads.RULES`.
COMBINATIONS = _heads.RULES


@dataclass(frozen=True)
class LooLoss:
    """The leave-one-out loss of :func:`loo_loss`.

    Parameters
    ----------
    loss : float
        The loss with the penalty.
    fit : float
        The LOO mean squared error alone.
    penalty : float
        The penalty's value times ``lambda``.
    grad : numpy.ndarray or None
        The gradient ``(H, d, d_k)``, or None when it was not asked for.
    output : numpy.ndarray or None
        ``W_O`` ``(H, d_v)`` fitted for ``"concat"``, else None.
    """

    loss: float
    fit: float
    penalty: float
    grad: np.ndarray | None
    output: np.ndarray | None


#: Largest ``|Y|`` (and ``|m|`` at the test points) training accepts: the squared errors of a combination
#: of up to millions of heads, summed over the sample, stay far inside a double (``Y`` scaled by 1e155
#: gave a loss of inf and NaN gradients); the same level as :data:`mhanw.montecarlo.MAX_SIGMA`.
MAX_RESPONSE = 1e100


def _responses(Y, name: str, n: int | None = None) -> np.ndarray:
    """The responses as a checked finite array.

    ``Y`` as a finite 1-D float array (of ``n`` values) with ``max |Y| <= MAX_RESPONSE``, else
    ``ValueError`` naming ``name``.
    """
    Y = as_float_array(Y, name, ndim=1)
    if n is not None and Y.shape[0] != n:
        raise ValueError(f"{name}: expected {n} values (one per row of X), got shape {Y.shape}")
    big = float(np.max(np.abs(Y)))
    if not big <= MAX_RESPONSE:
        raise ValueError(
            f"{name}: expected values of magnitude at most {MAX_RESPONSE:g} (their squared errors "
            f"must stay inside a double), got max |{name.rpartition('.')[2]}| = {big:.3g}"
        )
    return Y


def _finite_result(value, what: str, X, Y, name: str = "") -> None:
    """Refuse a loss or gradient that is not finite.

    ``ValueError`` naming the inputs ``X`` and responses ``Y`` (fields of ``name`` when given) when
    ``value`` is not finite: an overflow the bounds on each alone did not exclude.
    """
    if np.all(np.isfinite(value)):
        return
    x, y = (f"{name}.X", f"{name}.Y") if name else ("X", "Y")
    raise ValueError(
        f"{x}, {y}: {what} overflows a double (max |X| = {float(np.max(np.abs(X))):.3g}, "
        f"max |Y| = {float(np.max(np.abs(Y))):.3g}); rescale the inputs or the responses"
    )


def _check(W, X, Y, bandwidth, combination, values):
    W = as_float_array(W, "W", ndim=3)
    X = as_float_array(X, "X", ndim=2)
    Y = _responses(Y, "Y")
    if W.shape[1] != X.shape[1] or W.shape[2] > W.shape[1]:
        raise ValueError(f"W: expected shape (H, {X.shape[1]}, d_k) with d_k <= {X.shape[1]}, got {W.shape}")
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y: expected {X.shape[0]} values (one per row of X), got shape {Y.shape}")
    if X.shape[0] < 3:
        raise ValueError(f"X: leave-one-out training needs at least 3 points, got {X.shape[0]}")
    check_entries("W", W.shape[0], X.shape[0], X.shape[0])  # one (n, n) weight matrix per head
    h = positive_scalar(bandwidth, "bandwidth")
    if h * h < np.finfo(float).tiny:
        raise ValueError(f"bandwidth: expected h^2 to be a normal double (h > 1.5e-154), got h = {h!r}")
    one_of(combination, "combination", COMBINATIONS)
    V = _heads._named_values(values, W.shape[0], X.shape[1]) if combination == "concat" else None
    return W, X, Y, h, V


def _check_sample(sample, W, name: str = "sample") -> Sample:
    """A training sample with fresh test points, checked.

    ``sample`` if it is a :class:`mhanw.data.Sample` of the heads' dimension with fresh test points
    (``X_test``, ``m_test``: the IMSE and the error correlation are measured there), else ``ValueError``.
    """
    if not isinstance(sample, Sample):
        raise ValueError(
            f"{name}: expected a mhanw.data.Sample (training X, Y and fresh X_test, m_test), "
            f"got {type(sample).__name__}"
        )
    T = np.shape(sample.X_test)[0] if np.ndim(sample.X_test) == 2 else 0
    if np.shape(sample.X)[1:] != (W.shape[1],) or T == 0 or np.shape(sample.m_test) != (T,):
        raise ValueError(
            f"{name}: expected inputs X (n, {W.shape[1]}) and at least one fresh test point "
            f"(X_test (T, {W.shape[1]}), m_test (T,)), got X {np.shape(sample.X)}, X_test "
            f"{np.shape(sample.X_test)}, m_test {np.shape(sample.m_test)}"
        )
    X = as_float_array(sample.X, f"{name}.X", ndim=2)
    _responses(sample.Y, f"{name}.Y", X.shape[0])
    as_float_array(sample.X_test, f"{name}.X_test", ndim=2)
    _responses(sample.m_test, f"{name}.m_test")
    return sample


def _frames(W, name: str = "W") -> np.ndarray:
    """Heads of full rank, checked.

    ``W`` ``(H, d, d_k)`` if every head has rank ``d_k`` (a column space of dimension ``d_k``), else
    ``ValueError`` naming ``name`` and the head.
    """
    W = as_float_array(W, name, ndim=3)
    s = np.linalg.svd(W, compute_uv=False)  # (H, d_k)
    for j in range(W.shape[0]):
        if not s[j, -1] > s[j, 0] * W.shape[1] * np.finfo(float).eps:
            raise ValueError(
                f"{name}: head {j} has rank below d_k = {W.shape[2]} (its columns are dependent), "
                "so it spans no d_k-dimensional subspace"
            )
    return W


def _loo_weights(K, h):
    """Leave-one-out Gaussian weights ``(n, n)`` (zero diagonal, rows summing to 1) of keys ``K`` ``(n, d_k)``."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is caught below, naming W
        sq = np.einsum("ik,ik->i", K, K)
        D2 = sq[:, None] + sq[None, :] - 2.0 * (K @ K.T)
        np.maximum(D2, 0.0, out=D2)
        L = D2 * (-0.5 / (h * h))
        np.fill_diagonal(L, -np.inf)
        L -= L.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(L[~np.eye(L.shape[0], dtype=bool)])):
        raise ValueError("W: the logits |W^T (x - x')|^2 / h^2 overflow a double; the projections are too large")
    w = np.exp(L)
    w /= w.sum(axis=1, keepdims=True)
    return w


def orthogonality_penalty(W, gradient: bool = True):
    """``sum_(j<k) tr(P_j P_k) / d_k``: the number of pairs times ``1 - HDI_PA``, and its gradient.

    ``P_j`` is the orthogonal projector on the column space of ``W_j``.  The penalty is 0 exactly when
    the heads' column spaces are mutually orthogonal; it sees only the subspaces (not a head's scale,
    its inverse bandwidth, nor its singular values, so it never rewards a head for losing rank).  With
    ``G_j = W_j^T W_j`` and ``A_j = sum_(k != j) P_k``, the gradient in ``W_j`` is
    ``(2/d_k) (I - P_j) A_j W_j G_j^-1``.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads, each of full rank.
    gradient : bool, default True
        Whether to compute the gradient.

    Returns
    -------
    value : float
        The penalty.
    grad : numpy.ndarray or None
        ``(H, d, d_k)``, or None without ``gradient``.

    Raises
    ------
    ValueError
        Naming ``W`` for a rank-deficient head or an array that is not finite or of the wrong shape, or
        ``gradient`` when it is not a bool.
    """
    W = _frames(W)
    gradient = boolean(gradient, "gradient")
    H, d, d_k = W.shape
    # each head divided by a power of two to entries of order one (exact): P_j does not depend on the
    # scale, and the gradient, of degree -1 in W_j, is scaled back at the end (heads of 1e+-160 made
    # W_j^T W_j overflow or underflow, and the penalty NaN)
    e = np.frexp(np.max(np.abs(W), axis=(1, 2)))[1]  # (H,)
    W = np.ldexp(W, -e[:, None, None])
    Ginv = np.linalg.inv(np.einsum("hdk,hdl->hkl", W, W))
    P = np.einsum("hdk,hkl,hel->hde", W, Ginv, W)  # (H, d, d)
    total = P.sum(axis=0)
    value = float((np.einsum("de,ed->", total, total) - np.einsum("hde,hed->", P, P)) / (2 * d_k))
    if not gradient:
        return value, None
    grad = np.empty_like(W)
    for j in range(H):
        A = total - P[j]
        grad[j] = (2.0 / d_k) * ((np.eye(d) - P[j]) @ A @ W[j] @ Ginv[j])
    grad = np.ldexp(grad, -e[:, None, None])
    if not np.all(np.isfinite(grad)):  # a head below about 1e-300: its gradient, ~1/|W_j|, overflows
        raise ValueError(
            f"W: the penalty's gradient (of size 1/|W_j|) overflows a double for heads as small as "
            f"{float(np.min(np.ldexp(1.0, e))):.3g}; rescale the heads"
        )
    return value, grad


def loo_loss(
    W,
    X,
    Y,
    bandwidth: float,
    combination: str = "average",
    values="response",
    penalty: float = 0.0,
    gradient: bool = True,
) -> LooLoss:
    """The leave-one-out training loss of Gaussian NW heads on ``(X, Y)`` and its gradient (Thm 5.1).

    See the module docstring for the formulas.  For ``"concat"`` the output projection ``W_O`` is
    fitted by least squares on the LOO outputs and returned as ``output``.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads.
    X : array (n, d)
        Training inputs.
    Y : array (n,)
        Training responses.
    bandwidth : float > 0
        ``h``.
    combination : str, default "average"
        One of :data:`COMBINATIONS`.
    values : str or array, default "response"
        The value projections of ``"concat"``, as in :class:`mhanw.heads.HeadConfig`.
    penalty : float >= 0, default 0.0
        ``lambda`` of :func:`orthogonality_penalty`.
    gradient : bool, default True
        Whether to compute the gradient.

    Returns
    -------
    LooLoss
        The loss, its parts and (with ``gradient``) its gradient.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, not finite or of a shape that does not fit the others
        (a rank-deficient head, a combination outside :data:`COMBINATIONS`), or a sample whose loss or
        gradient is not finite.
    """
    W, X, Y, h, V = _check(W, X, Y, bandwidth, combination, values)
    lam = nonnegative_scalar(penalty, "penalty")
    gradient = boolean(gradient, "gradient")
    H, d, _ = W.shape
    n = X.shape[0]
    weights = [_loo_weights(X @ W[j], h) for j in range(H)]
    O = None
    if combination in ("average", "sum"):
        est = np.stack([w @ Y for w in weights])  # (H, n)
        f = est.mean(axis=0) if combination == "average" else Y.mean() + (est - Y.mean()).sum(axis=0)
        targets = [Y] * H
        coef = 1.0 / H if combination == "average" else 1.0
    else:
        Zc = np.column_stack([Y, X])
        Zc -= Zc.mean(axis=0)
        cols = np.flatnonzero(np.any(V != 0.0, axis=(0, 2)))
        F = np.concatenate([(w @ Zc[:, cols]) @ V[j, cols] for j, w in enumerate(weights)], axis=1)  # (n, H d_v)
        o = np.linalg.lstsq(F, Zc[:, 0], rcond=None)[0]
        O = o.reshape(H, V.shape[2])
        f = Y.mean() + F @ o
        targets = [Zc[:, cols] @ (V[j, cols] @ O[j]) for j in range(H)]
        coef = 1.0
    r = f - Y
    fit = float(np.mean(r * r))
    _finite_result(fit, "the leave-one-out loss", X, Y)
    if O is not None:
        _finite_result(O, "the fitted output projection W_O", X, Y)
    pen, pen_grad = orthogonality_penalty(W, gradient) if lam > 0 else (0.0, None)
    if not gradient:
        return LooLoss(loss=fit + lam * pen, fit=fit, penalty=lam * pen, grad=None, output=O)
    g = 2.0 * r / n
    grad = np.empty_like(W)
    for j, (w, t) in enumerate(zip(weights, targets)):
        that = w @ t
        C = (g * coef)[:, None] * w * (t[None, :] - that[:, None])  # (n, n), dL/dl_il
        M = X.T @ C @ X
        S = (X.T * C.sum(axis=1)) @ X - M - M.T + (X.T * C.sum(axis=0)) @ X
        grad[j] = -(S @ W[j]) / (h * h)
    _finite_result(grad, "the gradient of the leave-one-out loss", X, Y)
    if pen_grad is not None:
        grad += lam * pen_grad
    return LooLoss(loss=fit + lam * pen, fit=fit, penalty=lam * pen, grad=grad, output=O)


def _gradient(state: LooLoss) -> np.ndarray:
    """The gradient ``(H, d, d_k)`` of a loss evaluated with ``gradient=True`` (never None there)."""
    assert state.grad is not None
    return state.grad


def _config(W, bandwidth, combination, values):
    """The heads ``W`` as a HeadConfig of ``combination``.

    The heads ``W`` as a :class:`mhanw.heads.HeadConfig` of ``combination``; a refusal of the array
    names ``W``.
    """
    try:
        if combination in ("average", "sum"):
            return _heads.HeadConfig(W, bandwidth=bandwidth, rule=combination)
        return _heads.HeadConfig(W, bandwidth=bandwidth, rule="concat", values=values, output="fitted")
    except ValueError as exc:
        head, sep, rest = str(exc).partition(": ")
        if head == "projections":
            raise ValueError(f"W: {rest}") from None
        raise


def fresh_error(W, sample, bandwidth: float, combination: str = "average", values="response") -> float:
    """The integrated squared error on fresh data, ``mean_t (f(x_t) - m(x_t))^2``, of heads ``W``.

    For ``"concat"`` ``W_O`` is refitted on the training sample as in :func:`loo_loss`.

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads.
    sample : mhanw.data.Sample
        ``X``, ``Y`` the training sample, ``X_test``, ``m_test`` fresh points.
    bandwidth : float > 0
        ``h``.
    combination : str, default "average"
        One of :data:`COMBINATIONS`.
    values : str or array, default "response"
        The value projections of ``"concat"``, as in :class:`mhanw.heads.HeadConfig`.

    Returns
    -------
    float
        The error.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, not finite or of a shape that does not fit the others
        (a rank-deficient head, a combination outside :data:`COMBINATIONS`), or a sample whose loss or
        gradient is not finite.
    """
    one_of(combination, "combination", COMBINATIONS)
    cfg = _config(W, bandwidth, combination, values)
    sample = _check_sample(sample, cfg.projections)
    f = _heads.ensemble_estimate(cfg, sample.X, sample.Y, sample.X_test)
    out = float(np.mean((f - sample.m_test) ** 2))
    _finite_result(out, "the squared error on fresh data", sample.X, sample.Y, "sample")
    return out


def error_correlation(W, sample, bandwidth: float) -> float:
    """The heads' error correlation on fresh data.

    The mean over pairs ``j < k`` of the correlation over the test points of ``m_j(x) - m(x)`` and
    ``m_k(x) - m(x)``, ``m_j`` head ``j``'s NW regression of the response (what every head computes,
    whatever the combination).

    Parameters
    ----------
    W : array (H, d, d_k)
        The heads.
    sample : mhanw.data.Sample
        The training sample and fresh test points.
    bandwidth : float > 0
        ``h``.

    Returns
    -------
    float
        The mean correlation; NaN for one head, and where a head's errors are the same at every test
        point (their correlation is undefined: one test point, or heads and ``m`` that agree everywhere).

    Raises
    ------
    ValueError
        Naming the argument that is out of range, not finite or of a shape that does not fit the others
        (a rank-deficient head, a combination outside :data:`COMBINATIONS`), or a sample whose loss or
        gradient is not finite.
    """
    W = as_float_array(W, "W", ndim=3)
    sample = _check_sample(sample, W)
    if W.shape[0] < 2:
        return float("nan")
    err = _heads.head_estimates(W, sample.X, sample.Y, sample.X_test, bandwidth) - sample.m_test
    _finite_result(err, "the heads' errors on fresh data", sample.X, sample.Y, "sample")
    pairs = np.triu_indices(W.shape[0], 1)
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        R = np.corrcoef(err)[pairs]
        if not np.all(np.isfinite(R)):
            # tiny errors (responses near 1e-300) whose variances underflow: the correlation is the same
            # for each head's errors scaled by a power of two to order one, which is exact
            top = np.max(np.abs(err), axis=1, keepdims=True)
            scale = np.where(top > 0, -np.frexp(np.where(top > 0, top, 1.0))[1], 0)
            R = np.corrcoef(np.ldexp(err, scale))[pairs]
    return float(R.mean())


def _renamed(evaluate):
    """A loss evaluation whose refusals name the caller's arguments.

    ``evaluate()`` (a :func:`loo_loss` of :func:`train_heads`), with a refusal that blames the heads
    ``W`` (or the inputs ``X``, ``Y``) re-addressed to the caller's arguments ``W0`` (``sample.X``,
    ``sample.Y``).
    """
    try:
        return evaluate()
    except ValueError as exc:
        head, sep, rest = str(exc).partition(": ")
        names = {"W": "W0", "X": "sample.X", "Y": "sample.Y", "X, Y": "sample.X, sample.Y"}
        if sep and head in names:
            raise ValueError(f"{names[head]}: {rest}") from None
        raise


@dataclass(frozen=True)
class TrainingPath:
    """One gradient-descent path of :func:`train_heads`.

    Parameters
    ----------
    steps : numpy.ndarray
        ``(K,)`` the recorded steps (0 the initialisation).
    loss : numpy.ndarray
        ``(K,)`` the LOO training loss with the penalty.
    fit : numpy.ndarray
        ``(K,)`` the loss without it.
    hdi : numpy.ndarray
        ``(K,)`` HDI_PA of the keys' column spaces.
    hdi_circuit : numpy.ndarray
        ``(K,)`` one minus the mean cosine of the query-key circuits ``W_j W_j^T``, HDI_RV: with
        unconstrained heads it weights directions by their singular values.
    error_corr : numpy.ndarray
        ``(K,)`` the heads' error correlation on fresh data.
    imse : numpy.ndarray
        ``(K,)`` the integrated squared error on fresh data.
    initial : numpy.ndarray
        ``(H, d, d_k)`` the projections at the start.
    final : numpy.ndarray
        ``(H, d, d_k)`` the projections at the end.
    accepted : int
        The number of steps taken (the descent stops early when no step decreases the loss).
    """

    steps: np.ndarray
    loss: np.ndarray
    fit: np.ndarray
    hdi: np.ndarray
    hdi_circuit: np.ndarray
    error_corr: np.ndarray
    imse: np.ndarray
    initial: np.ndarray
    final: np.ndarray
    accepted: int


#: The longest first step of :func:`train_heads` (``first_move``), relative to ``|W0|_F``, and the longest
#: step the doubling after an accepted step may reach (relative to ``|W|_F``): a step a million times the
#: heads' size is halved back about 20 times before it is tried, so a longer one is a typo, and a bound on
#: the step keeps the backtracking of every step finite (about 60 halvings at most; ``first_move = 1e308``
#: made the step inf, and halving inf never ends).
MAX_MOVE = 1e6

#: Work units (:data:`mhanw.constants.MAX_WORK`'s kernel weights, about 4.5 ns each) of one descent step
#: per head and pair of training points: the leave-one-out weights, the loss, the gradient and about one
#: tried step (measured on one core: 100-200 ns per step, head and pair at d = 4 to 256); the gradient's
#: ``X^T C X`` adds ``d / 8`` units per pair.
_STEP_UNITS = 30


def training_work(
    n_heads: int,
    n: int,
    d: int,
    n_steps: int,
    n_test: int,
    record_every: int,
    combination: str = "average",
    penalty: bool = False,
) -> int:
    """The work of one :func:`train_heads` call in kernel weights (:data:`mhanw.constants.MAX_WORK`'s unit).

    ``n_steps + 1`` loss and gradient evaluations of ``n_heads`` heads on ``n`` points in ``R^d``
    (``n^2`` pairs each, ``_STEP_UNITS`` plus ``d/8`` units a pair; with a ``penalty``, the projectors'
    products, ``d^3 / 4`` units a head), and at every record the heads' estimates at the ``n_test``
    fresh points twice (the IMSE and the error correlation; a fitted ``W_O`` refits on the ``n``
    training points).

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    n : int >= 1
        Training points.
    d : int >= 1
        The input dimension.
    n_steps : int >= 0
        Steps of the descent.
    n_test : int >= 1
        Fresh test points.
    record_every : int >= 1
        Steps between records.
    combination : str, default "average"
        One of :data:`COMBINATIONS`.
    penalty : bool, default False
        Whether the orthogonality penalty is on.

    Returns
    -------
    int
        The work, a Python int (never wraps).

    Raises
    ------
    ValueError
        Naming the count that is not an integer within its bounds.
    """
    H, n, d, T = (positive_int(v, k) for v, k in ((n_heads, "n_heads"), (n, "n"), (d, "d"), (n_test, "n_test")))
    K = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES)
    records = K // positive_int(record_every, "record_every") + 2
    per_head = n * n * (_STEP_UNITS + d // 8) + (d * d * d // 4 if penalty else 0)
    return (K + 1) * H * per_head + records * H * n * (2 * T + (n if combination == "concat" else 0))


def _norm(A) -> float:
    """``|A|_F``, without overflow.

    ``|A|_F`` (numpy's), recomputed with ``A`` scaled by its largest entry where its square over- or
    underflows (entries of 1e160 or 1e-160).
    """
    with np.errstate(over="ignore", under="ignore"):
        norm = float(np.linalg.norm(A))
    if 1e-150 < norm < 1e150:
        return norm
    top = float(np.max(np.abs(A)))
    return 0.0 if top == 0.0 else top * float(np.linalg.norm(A / top))


def _squared_norm(G) -> tuple[float, float]:
    """``(|G|_F^2, |G|_F)`` of a gradient: the square as a sum (inf when it overflows), the norm finite."""
    with np.errstate(over="ignore"):
        sq = float(np.sum(G**2))
    return sq, (float(np.sqrt(sq)) if 1e-300 < sq < np.inf else _norm(G))


def train_heads(
    W0,
    sample,
    bandwidth: float,
    combination: str = "average",
    values="response",
    penalty: float = 0.0,
    n_steps: int = 50,
    record_every: int = 5,
    first_move: float = 0.2,
) -> TrainingPath:
    """Gradient descent on :func:`loo_loss` from ``W0``, recording the path (Thm 5.1's training reading).

    Each step moves along the negative gradient; the step length is halved until the Armijo condition
    ``L(W - eta G) <= L(W) - 1e-4 eta |G|^2`` holds and doubled after an accepted step, up to
    :data:`MAX_MOVE` times ``|W|_F``; the first step has length ``first_move`` (relative to ``|W0|_F``).
    Recorded every ``record_every`` steps and at the end.  Deterministic.

    Parameters
    ----------
    W0 : array (H, d, d_k)
        The initial heads.
    sample : mhanw.data.Sample
        Training ``X``, ``Y``; fresh ``X_test``, ``m_test`` for the IMSE and the error correlation.
    bandwidth : float > 0
        ``h``.
    combination : str, default "average"
        One of :data:`COMBINATIONS`.
    values : str or array, default "response"
        The value projections of ``"concat"``, as in :class:`mhanw.heads.HeadConfig`.
    penalty : float >= 0, default 0.0
        ``lambda`` of :func:`orthogonality_penalty`.
    n_steps : int >= 0, default 50
        Most steps.
    record_every : int >= 1, default 5
        Steps between records.
    first_move : float > 0, default 0.2
        The first step's length relative to ``|W0|_F``, at most :data:`MAX_MOVE`.

    Returns
    -------
    TrainingPath
        The recorded path.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, not finite or of a shape that does not fit the others
        (a rank-deficient head, a combination outside :data:`COMBINATIONS`, a ``first_move`` beyond
        :data:`MAX_MOVE`), a call whose work (:func:`training_work`) exceeds
        :data:`mhanw.constants.MAX_WORK` (refused before the first step, naming the sizes that set it),
        or a sample whose loss or gradient is not finite.
    """
    W = as_float_array(W0, "W0", ndim=3).copy()
    sample = _check_sample(sample, W)
    n_steps = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES, what="steps")
    record_every = positive_int(record_every, "record_every")
    first_move = positive_scalar(first_move, "first_move")
    if first_move > MAX_MOVE:
        raise ValueError(
            f"first_move: expected at most {MAX_MOVE:g} (the first step's length relative to |W0|; a longer "
            f"one is only halved back), got {first_move:g}"
        )
    one_of(combination, "combination", COMBINATIONS)
    lam = nonnegative_scalar(penalty, "penalty")
    H, n, d = W.shape[0], np.shape(sample.X)[0], W.shape[1]
    T = np.shape(sample.X_test)[0]
    check_work(
        "n_steps, W0, sample",
        training_work(H, n, d, n_steps, T, record_every, combination, penalty=lam > 0),
        f"training (n_steps = {n_steps} steps x {H} heads x n = {n} training points squared, d = {d}, {T} test points)",
        "use fewer steps, heads or training points",
    )
    X, Y = sample.X, sample.Y
    cur = _renamed(lambda: loo_loss(W, X, Y, bandwidth, combination, values, penalty))
    rec: dict[str, list] = {k: [] for k in ("steps", "loss", "fit", "hdi", "hdi_circuit", "error_corr", "imse")}

    def record(step, state):
        try:
            measured = _measure(state)
        except ValueError as exc:  # a state the descent reached, not an argument: blame what led there
            raise ValueError(
                f"W0, bandwidth: the descent from W0 reached heads at step {step} that cannot be measured "
                f"({exc}); use another start or bandwidth"
            ) from None
        rec["steps"].append(step)
        for key, value in measured.items():
            rec[key].append(value)

    def _measure(state):
        return {
            "loss": state.loss,
            "fit": state.fit,
            "hdi": head_diversity_index(W) if W.shape[0] > 1 else float("nan"),
            "hdi_circuit": head_diversity_index(W, "rv") if W.shape[0] > 1 else float("nan"),
            "error_corr": error_correlation(W, sample, bandwidth),
            "imse": fresh_error(W, sample, bandwidth, combination, values),
        }

    grid = sorted(set(range(0, n_steps + 1, record_every)) | {n_steps})
    record(0, cur)
    g2, gnorm = _squared_norm(_gradient(cur))
    eta = first_move * _norm(W) / max(gnorm, 1e-300)
    accepted = 0
    for step in range(1, n_steps + 1):
        if gnorm == 0.0:
            break
        while eta * gnorm > 1e-12 * max(_norm(W), 1.0):
            W_new = W - eta * _gradient(cur)
            try:
                trial = loo_loss(W_new, X, Y, bandwidth, combination, values, penalty, gradient=False)
            except ValueError:  # logits overflow: a step far too long
                trial = None
            if trial is not None and trial.loss <= cur.loss - 1e-4 * eta * g2:
                break
            eta /= 2.0
        else:
            break  # no step decreases the loss: converged to rounding
        W = W_new
        cur = _renamed(lambda: loo_loss(W, X, Y, bandwidth, combination, values, penalty))
        g2, gnorm = _squared_norm(_gradient(cur))
        # doubled, but never to a step longer than MAX_MOVE |W| (the backtracking then stays finite)
        eta = min(2.0 * eta, MAX_MOVE * _norm(W) / max(gnorm, 1e-300))
        accepted = step
        if step in grid:
            record(step, cur)
    # a path that stopped early stays where it is: the remaining grid points carry its last state
    remaining = [k for k in grid if k > accepted]
    if remaining and accepted not in grid:
        record(remaining.pop(0), cur)
    for k in remaining:
        for key in rec:
            rec[key].append(k if key == "steps" else rec[key][-1])
    arr = {k: np.asarray(v, dtype=float) for k, v in rec.items()}
    return TrainingPath(
        steps=arr["steps"].astype(int),
        loss=arr["loss"],
        fit=arr["fit"],
        hdi=arr["hdi"],
        hdi_circuit=arr["hdi_circuit"],
        error_corr=arr["error_corr"],
        imse=arr["imse"],
        initial=np.asarray(W0, dtype=float),
        final=W,
        accepted=accepted,
    )
