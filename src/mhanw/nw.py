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
``(n, d_v)``; outputs ``(m,)`` or ``(m, d_v)``.  A leading head axis ``H`` on
all three (``(H, m, d_k)`` ...) evaluates H heads at once.  float32 inputs are
computed in float32 (for speed), everything else in float64.  Weights are computed from
max-subtracted logits (log-sum-exp), in float64, so finite inputs never give NaN
or inf, even for logits of order 1e4.  Queries are processed in blocks so that
the ``(block, n)`` weight matrix stays small.
"""

from __future__ import annotations

import numpy as np

from .infra.validate import as_float_array, one_of, positive_scalar

KERNELS = ("gaussian", "exponential")

#: Largest number of entries of one block of the (queries x keys) logit matrix
#: (2 MiB in float64: the block stays in cache between the passes over it).
BLOCK_ENTRIES = 1 << 18
#: Fewest queries in one block, whatever ``n``: 32 x 1e6 keys is 256 MB in float64.
MIN_BLOCK_ROWS = 32


def _real_array(value, name, ndim):
    """Finite float array; float32 input stays float32, anything else becomes float64."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        if value.ndim not in ((ndim,) if isinstance(ndim, int) else ndim):
            as_float_array(value, name, ndim=ndim)  # raises the standard message
        if value.size == 0 or not np.all(np.isfinite(value)):
            as_float_array(value, name, ndim=ndim)
        return value
    return as_float_array(value, name, ndim=ndim)


def _check_qkv(queries, keys, values=None):
    """Validate shapes ``(m, d_k)``, ``(n, d_k)``, ``(n,)|(n, d_v)``, or the same
    with a leading batch (head) axis ``H``: ``(H, m, d_k)``, ``(H, n, d_k)``,
    ``(H, n)|(H, n, d_v)``."""
    q = _real_array(queries, "queries", (2, 3))
    k = _real_array(keys, "keys", q.ndim)
    if q.shape[-1] != k.shape[-1] or q.shape[:-2] != k.shape[:-2]:
        want = q.shape[:-2] + ("n", q.shape[-1])
        raise ValueError(f"keys: expected shape {want} to match queries of shape {q.shape}, got {k.shape}")
    if values is None:
        return q, k, None
    v = _real_array(values, "values", (q.ndim - 1, q.ndim))
    if v.shape[: q.ndim - 1] != k.shape[:-1]:
        raise ValueError(f"values: expected leading shape {k.shape[:-1]} (one row per key), got shape {v.shape}")
    return q, k, v


def _logits(q: np.ndarray, k: np.ndarray, kernel: str, inv: float) -> np.ndarray:
    """Exact logits of one block of queries, ``(..., m, n)``.

    ``exponential``: ``(q.k) * inv``; ``gaussian``: ``-|q-k|^2 * inv`` where the
    caller passes ``inv = 1/(2 h^2)``.
    """
    dots = q @ np.swapaxes(k, -1, -2)
    if kernel == "exponential":
        return dots * inv
    sq = (q * q).sum(axis=-1)[..., :, None] + (k * k).sum(axis=-1)[..., None, :] - 2.0 * dots
    np.maximum(sq, 0.0, out=sq)
    return sq * (-inv)


def _normalise(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a logit block, stable for logits of any finite size."""
    w = logits - logits.max(axis=-1, keepdims=True)
    np.exp(w, out=w)
    w /= w.sum(axis=-1, keepdims=True)
    return w


#: After max subtraction, logits are floored here before ``exp``: a weight below
#: ``exp(-floor)`` next to the maximal weight 1 cannot change the sum, and ``exp``
#: of numbers whose result is subnormal takes a slow path on x86.
LOGIT_FLOOR = {np.dtype(np.float64): -300.0, np.dtype(np.float32): -80.0}


def softmax_mean(logits: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``softmax(logits) @ values`` fused, overwriting ``logits``.

    ``logits`` ``(..., b, n)``, ``values`` ``(..., n, d_v)``; returns
    ``(..., b, d_v)``.  Max-subtracted, floored at :data:`LOGIT_FLOOR`,
    exponentiated in place, then ``(w @ v) / sum(w)``: the weight matrix is
    never normalised, which saves a pass over it.
    """
    logits -= logits.max(axis=-1, keepdims=True)
    np.maximum(logits, LOGIT_FLOOR[logits.dtype], out=logits)
    np.exp(logits, out=logits)
    return (logits @ values) / logits.sum(axis=-1)[..., None]


def _blocks(m: int, n: int, batch: int = 1):
    # At least MIN_BLOCK_ROWS queries per block, so that Q K^T stays a
    # matrix-matrix product (one query at a time is a matrix-vector product,
    # several times slower per flop).
    step = max(MIN_BLOCK_ROWS, BLOCK_ENTRIES // max(n * batch, 1))
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))


def _smooth(q, k, v, kernel, inv):
    """Blocked evaluation of the NW/attention mean; shapes as in :func:`_check_qkv`."""
    dtype = np.result_type(q, k, v)
    batched = q.ndim == 3
    if not batched:
        q, k, v = q[None], k[None], v[None]
    vec = v.ndim == 2
    if vec:
        v = v[..., None]
    q, k, v = (np.asarray(a, dtype=dtype) for a in (q, k, v))
    kt = np.swapaxes(k, -1, -2)  # (B, d_k, n), a view: BLAS reads K transposed, no copy
    if kernel == "gaussian":
        # -|q-k|^2/(2h^2) = (q.k - |k|^2/2)/h^2 - |q|^2/(2h^2); the last term is
        # constant in a row and cancels in the softmax.
        half_sq = (0.5 * np.einsum("bnd,bnd->bn", k, k))[:, None, :]
        factor = dtype.type(2.0 * inv)
    else:
        factor = dtype.type(inv)
    B, m, n = q.shape[0], q.shape[1], k.shape[1]
    out = np.empty((B, m, v.shape[-1]), dtype=dtype)
    for rows in _blocks(m, n, B):
        L = q[:, rows] @ kt
        if kernel == "gaussian":
            L -= half_sq
        L *= factor
        out[:, rows] = softmax_mean(L, v)
    if vec:
        out = out[..., 0]
    return out if batched else out[0]


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
        inv = 1.0 / np.sqrt(q.shape[-1])
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
        inv = 1.0 / np.sqrt(q.shape[-1])
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
