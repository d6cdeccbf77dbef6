"""Kernels, the Nadaraya-Watson estimator and softmax attention (Theorem 2.1).

Theorem 2.1 of the paper states that single-head softmax attention *is* a
Nadaraya-Watson (NW) kernel regression with the exponential kernel
``K(q, k) = exp(q.k / sqrt(d_k))``.  This module implements both sides of that
identity with one shared, numerically stable core, so that

    softmax_attention(Q, K, V) == nadaraya_watson(Q, K, V, bandwidth=sqrt(d_k),
                                                  kernel="exponential")

holds bit for bit, and the Gaussian-kernel NW estimator that every statistical
check of the companion uses.

Shapes: ``queries`` ``(m, d_k)``, ``keys`` ``(n, d_k)``, ``values`` ``(n,)`` or
``(n, d_v)``; outputs ``(m,)`` or ``(m, d_v)``.  Weights are computed from
max-subtracted logits (log-sum-exp), in float64, so finite inputs never give NaN
or inf, even for logits of order 1e4.  Queries are processed in blocks so that
the ``(block, n)`` weight matrix stays small.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, one_of, positive_scalar

KERNELS = ("gaussian", "exponential")

#: Largest number of entries of one block of the (queries x keys) logit matrix.
BLOCK_ENTRIES = 1 << 22


def _check_qkv(queries, keys, values=None):
    q = as_float_array(queries, "queries", ndim=2)
    k = as_float_array(keys, "keys", ndim=2)
    if q.shape[1] != k.shape[1]:
        raise ValueError(
            f"keys: expected shape (n, {q.shape[1]}) to match queries of shape {q.shape}, got {k.shape}"
        )
    if values is None:
        return q, k, None
    v = as_float_array(values, "values", ndim=(1, 2))
    if v.shape[0] != k.shape[0]:
        raise ValueError(f"values: expected {k.shape[0]} rows (one per key), got shape {v.shape}")
    return q, k, v


def _logits(q: np.ndarray, k: np.ndarray, kernel: str, inv: float) -> np.ndarray:
    """Logits of one block of queries, ``(m, n)``.

    ``exponential``: ``(q.k) * inv``; ``gaussian``: ``-|q-k|^2 * inv`` where the
    caller passes ``inv = 1/(2 h^2)``.
    """
    dots = q @ k.T
    if kernel == "exponential":
        return dots * inv
    sq = (q * q).sum(axis=1)[:, None] + (k * k).sum(axis=1)[None, :] - 2.0 * dots
    np.maximum(sq, 0.0, out=sq)
    return sq * (-inv)


def _normalise(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a logit block, stable for logits of any finite size."""
    w = logits - logits.max(axis=1, keepdims=True)
    np.exp(w, out=w)
    w /= w.sum(axis=1, keepdims=True)
    return w


def _blocks(m: int, n: int):
    step = max(1, BLOCK_ENTRIES // max(n, 1))
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))


def _smooth(q, k, v, kernel, inv):
    out_shape = (q.shape[0],) + v.shape[1:]
    out = np.empty(out_shape)
    for rows in _blocks(q.shape[0], k.shape[0]):
        out[rows] = _normalise(_logits(q[rows], k, kernel, inv)) @ v
    return out


def _inverse_scale(kernel: str, bandwidth: float) -> float:
    if kernel == "exponential":
        return 1.0 / bandwidth
    return 1.0 / (2.0 * bandwidth * bandwidth)


def softmax_attention(queries, keys, values, scale=None) -> np.ndarray:
    """Single-head softmax attention ``softmax(Q K^T * scale) V`` (Theorem 2.1).

    Parameters
    ----------
    queries : array ``(m, d_k)``
    keys : array ``(n, d_k)``
    values : array ``(n,)`` or ``(n, d_v)``
    scale : float, optional
        Multiplier of the logits, the inverse temperature ``beta``; defaults to
        ``1/sqrt(d_k)``.  Any finite real number is accepted.

    Returns
    -------
    array ``(m,)`` or ``(m, d_v)``: each row is the attention-weighted mean of
    the values.
    """
    q, k, v = _check_qkv(queries, keys, values)
    if scale is None:
        inv = 1.0 / np.sqrt(q.shape[1])
    else:
        inv = float(as_float_array(scale, "scale", ndim=0))
    return _smooth(q, k, v, "exponential", inv)


def nadaraya_watson(queries, keys, values, bandwidth, kernel="gaussian") -> np.ndarray:
    """Nadaraya-Watson regression ``sum_i K(q, k_i) v_i / sum_l K(q, k_l)`` (Theorem 2.1).

    Parameters
    ----------
    queries : array ``(m, d_k)``
        Points at which the regression is evaluated.
    keys : array ``(n, d_k)``
        Design points.
    values : array ``(n,)`` or ``(n, d_v)``
        Responses.
    bandwidth : float > 0
        ``h``.  For ``kernel="gaussian"`` the weights are
        ``exp(-|q - k|^2 / (2 h^2))``; for ``kernel="exponential"`` they are
        ``exp(q.k / h)``, so that ``h = sqrt(d_k)`` gives softmax attention.
    kernel : {"gaussian", "exponential"}

    Returns
    -------
    array ``(m,)`` or ``(m, d_v)``.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    q, k, v = _check_qkv(queries, keys, values)
    return _smooth(q, k, v, kernel, _inverse_scale(kernel, h))


def kernel_weights(queries, keys, bandwidth, kernel="gaussian") -> np.ndarray:
    """Normalised NW weights ``w_i(q)``, shape ``(m, n)``, each row summing to 1.

    Same kernels and conventions as :func:`nadaraya_watson`; materialises the
    full weight matrix, so use it for diagnostics on moderate ``m * n``.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    q, k, _ = _check_qkv(queries, keys)
    return _normalise(_logits(q, k, kernel, _inverse_scale(kernel, h)))


def attention_weights(queries, keys, scale=None) -> np.ndarray:
    """Softmax attention weights ``softmax(Q K^T * scale)``, shape ``(m, n)``."""
    q, k, _ = _check_qkv(queries, keys)
    if scale is None:
        inv = 1.0 / np.sqrt(q.shape[1])
    else:
        inv = float(as_float_array(scale, "scale", ndim=0))
    return _normalise(_logits(q, k, "exponential", inv))


def nadaraya_watson_loop(queries, keys, values, kernel_function) -> np.ndarray:
    """Reference NW estimator written as the textbook double loop.

    ``kernel_function(q, k)`` returns the (unnormalised) kernel value for one
    query ``(d_k,)`` and one key ``(d_k,)``.  Slow and not overflow-safe; it
    exists only to check the vectorised estimators against the definition.
    """
    q, k, v = _check_qkv(queries, keys, values)
    out = np.empty((q.shape[0],) + v.shape[1:])
    for a in range(q.shape[0]):
        num = np.zeros(v.shape[1:])
        den = 0.0
        for i in range(k.shape[0]):
            w = kernel_function(q[a], k[i])
            num = num + w * v[i]
            den += w
        out[a] = num / den
    return out
