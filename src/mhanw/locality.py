"""How local is softmax attention?  Effective sample size and the large-n limit
of the exponential-kernel estimator (Theorem 2.1: locality and consistency).

Read as a Nadaraya-Watson estimator, attention with the kernel
``exp(beta q.k)`` is *not* a local smoother:

- with keys ``k_i ~ N(0, I_{d_k})`` the logits ``beta q.k_i`` are
  ``N(0, beta^2 |q|^2)``, so the effective sample size
  ``n_eff = (sum w_i)^2 / sum w_i^2`` is a fixed fraction
  ``exp(-beta^2 |q|^2)`` of ``n`` (:func:`neff_fraction_given_query`); for
  ``beta = 1/sqrt(d_k)`` and ``q ~ N(0, I)`` its mean is
  ``(1 + 2/d_k)^(-d_k/2)`` (:func:`expected_neff_fraction`), which decreases to
  ``exp(-1)`` and never to 0;
- with ``beta`` fixed the estimate converges, as ``n`` grows, to the tilted mean
  ``E[m(Z)], Z ~ N(beta q, I)`` rather than to ``m(q)``; for ``m = sin`` in one
  dimension that is ``sin(beta q) exp(-1/2)`` (:func:`tilted_sine_limit`).
"""

from __future__ import annotations

import numpy as np

from .infra.validate import as_float_array, positive_int, positive_scalar
from .nw import attention_weights


def effective_sample_size(weights) -> np.ndarray:
    """Kish's effective sample size of each row of normalised weights.

    ``weights``: ``(m, n)``, non-negative rows summing to 1.  Returns ``(m,)``
    with ``n_eff = 1 / sum_i w_i^2`` (between 1 and n).
    """
    w = as_float_array(weights, "weights", ndim=2)
    if np.any(w < 0):
        raise ValueError("weights: expected non-negative weights")
    if not np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("weights: expected every row to sum to 1")
    return 1.0 / np.einsum("ij,ij->i", w, w)


def attention_neff_fraction(queries, keys, scale=None) -> np.ndarray:
    """``n_eff / n`` of softmax attention for each query, shape ``(m,)``."""
    w = attention_weights(queries, keys, scale=scale)
    return effective_sample_size(w) / w.shape[1]


def neff_fraction_given_query(queries, scale=None) -> np.ndarray:
    """Large-n limit of ``n_eff/n`` for Gaussian keys: ``exp(-scale^2 |q|^2)``, shape ``(m,)``.

    ``scale`` defaults to ``1/sqrt(d_k)``, so the limit is ``exp(-|q|^2/d_k)``.
    """
    q = as_float_array(queries, "queries", ndim=2)
    beta = 1.0 / np.sqrt(q.shape[1]) if scale is None else positive_scalar(scale, "scale")
    from .data import _norm

    # beta^2 |q|^2 where |q|^2 is safely inside a double; elsewhere (beta |q|)^2 with a scaled norm,
    # whose overflow gives the right limit exp(-inf) = 0
    b = np.float64(beta)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sq = (q * q).sum(axis=1)
        t = b**2 * sq
        odd = ~((sq >= 2.0**-960) & (sq <= 2.0**1000) & np.isfinite(t))
        if odd.any():
            t[odd] = (b * _norm(q[odd])) ** 2
    return np.exp(-t)


def expected_neff_fraction(d_k) -> np.ndarray:
    """Mean of ``exp(-|q|^2/d_k)`` over ``q ~ N(0, I_{d_k})``: ``(1 + 2/d_k)^(-d_k/2)``."""
    d = as_float_array(d_k, "d_k", ndim=(0, 1))
    if np.any(d <= 0):
        raise ValueError("d_k: expected positive dimensions")
    # exp(-d/2 log1p(2/d)): (1 + 2/d) rounds to 1 for d above ~1e16, and the limit is exp(-1);
    # for d below ~1e-300, 2/d overflows and the value is its limit, 1 (d log(2/d) -> 0).
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-0.5 * d * np.log1p(2.0 / d))
    return np.where(np.isfinite(out), out, 1.0)


def tilted_sine_limit(query: float = 1.0, beta: float = 1.0) -> float:
    """Limit of the exp-kernel estimate of ``m = sin`` at ``query`` (d_k = 1): ``sin(beta q) e^{-1/2}``."""
    q = float(as_float_array(query, "query", ndim=0))
    b = positive_scalar(beta, "beta")
    with np.errstate(over="ignore"):
        arg = b * q
    if not np.isfinite(arg):
        raise ValueError(f"beta: beta * query = {b!r} * {q!r} overflows a double")
    return float(np.sin(arg) * np.exp(-0.5))


#: Largest ``|beta q_l|`` of :func:`tilted_mean`: the spacing of doubles there (1.5e-8) stays far
#: below that of the Gauss-Hermite nodes (beyond it ``Z + beta q`` rounds to ``beta q`` and the
#: rule returns ``m(beta q)``, not the tilted mean).
MAX_TILT_CENTRE = 1e8

#: Most Gauss-Hermite nodes per dimension of :func:`tilted_mean`: numpy's rule builds a ``nodes x nodes``
#: matrix and its weights underflow to 0 (then NaN) from 371 nodes on; 256 is far more than a smooth
#: ``m`` needs (the default is 40).
MAX_NODES = 256

#: Most nodes of the tensor rule of :func:`tilted_mean` (``nodes ** d``): one evaluation of ``m`` each.
MAX_TENSOR_NODES = 2**20


def tilted_mean(regression, query, beta: float = 1.0, nodes: int = 40) -> float:
    """Large-n limit of the exp-kernel estimate at ``query`` with keys ``X ~ N(0, I_d)``: ``E m(Z)``, ``Z ~ N(beta q, I)``.

    With weights ``exp(beta q.X_i)`` the estimate ``sum_i w_i Y_i / sum_i w_i``
    tends to ``E[e^{beta q.X} m(X)] / E[e^{beta q.X}]``, and the tilted density
    ``e^{beta q.x} N(x; 0, I) / E e^{beta q.X}`` is ``N(beta q, I)`` (Theorem 2.1,
    consistency).  ``regression``: a spec or function of :mod:`mhanw.data`;
    ``query``: ``(d,)`` or a number (``d = 1``); the expectation is a tensor
    Gauss-Hermite rule with ``nodes`` points per dimension (at most
    :data:`MAX_NODES`, and ``nodes ** d`` at most :data:`MAX_TENSOR_NODES`).  For ``m = sin``, ``d = 1`` it is :func:`tilted_sine_limit`.
    ``|beta q_l|`` must be at most :data:`MAX_TILT_CENTRE`, and a mean that
    is not a finite double (``m`` overflows) raises ``ValueError`` naming ``query``.
    """
    from numpy.polynomial.hermite_e import hermegauss

    from . import data

    q = as_float_array(query, "query", ndim=(0, 1)).reshape(-1)
    b = positive_scalar(beta, "beta")
    d = q.shape[0]
    m = data.regression_function(regression)
    if d < m.min_dim:
        raise ValueError(f"query: {m.name!r} needs d >= {m.min_dim}, got d = {d}")
    # a Python int: nodes ** d in numpy integers wraps (np.int64(2**62) ** 1 passed a check of 2**20)
    nodes = positive_int(
        nodes,
        "nodes",
        minimum=2,
        maximum=MAX_NODES,
        what="Gauss-Hermite nodes per dimension; numpy's weights underflow beyond 370",
    )
    if d > 20 or nodes**d > MAX_TENSOR_NODES:  # nodes >= 2: d > 20 is too many, whatever nodes is
        raise ValueError(
            f"nodes: expected nodes ** d <= 2**20 (the points of the tensor rule), got "
            f"{nodes} ** {d} (d = {d}, the length of query)"
        )
    z, w = hermegauss(nodes)
    w = w / w.sum()
    Z = np.stack(np.meshgrid(*([z] * d), indexing="ij"), axis=-1).reshape(-1, d)
    W = np.prod(np.stack(np.meshgrid(*([w] * d), indexing="ij"), axis=-1).reshape(-1, d), axis=1)
    with np.errstate(over="ignore"):
        centre = b * q
    if not np.all(np.isfinite(centre)):
        raise ValueError(f"beta: beta * query overflows a double (beta = {b!r})")
    if not np.abs(centre).max() <= MAX_TILT_CENTRE:
        # the query's fault when it is far out itself, beta's when it tilts an ordinary query that far
        who = "query" if np.abs(q).max() > MAX_TILT_CENTRE or b <= 1.0 else "beta"
        raise ValueError(
            f"{who}: beta * query has a coordinate of {np.abs(centre).max():.3g}, beyond "
            f"{MAX_TILT_CENTRE:g}: a double there cannot resolve the unit-variance spread of the "
            "quadrature nodes around it"
        )
    with np.errstate(all="ignore"):
        values = np.asarray(m._func(Z + centre), dtype=float)
        mean = float(W @ values)
    if not np.isfinite(mean):
        raise ValueError(
            f"query: E m(Z), Z ~ N(beta q, I), is not a finite double for m = {m.name!r} at "
            f"beta * query = ({', '.join(f'{v:.3g}' for v in centre[:6])}) (m overflows or is "
            "undefined at some node around it)"
        )
    return mean
