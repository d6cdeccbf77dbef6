"""Chapter 01 (Thm 2.1): the Monte Carlo experiments on the locality and the
large-n limit of softmax attention read as a Nadaraya-Watson estimator.

The theory (effective sample size, its Gaussian limit, the tilted-mean limit)
is :mod:`mhanw.locality`; this module draws the samples the chapter needs.
"""

from __future__ import annotations

import numpy as np

from ..constants import SIGMA
from ..infra.validate import as_float_array, as_seed_sequence, positive_int, positive_scalar
from ..locality import attention_neff_fraction, expected_neff_fraction, neff_fraction_given_query
from ..nw import softmax_attention

__all__ = ["exp_kernel_sine_estimates", "neff_by_dimension"]


def neff_by_dimension(dims, n_keys: int, n_queries: int, seed) -> dict:
    """Monte Carlo ``n_eff/n`` of attention with Gaussian queries and keys, per ``d_k``.

    For each ``d_k`` in ``dims``: ``n_queries`` queries ``q ~ N(0, I)`` and
    ``n_keys`` keys ``k ~ N(0, I)``, default scale ``1/sqrt(d_k)``.  Streams
    come from ``SeedSequence(seed)``, one child per dimension.

    Returns a dict of arrays over ``dims``: ``"d_k"``; ``"mean"`` and ``"se"``
    (over queries) of the measured fraction; ``"per_query"`` ``(len(dims),
    n_queries)``; ``"predicted"`` ``(len(dims), n_queries)`` the per-query limit
    ``exp(-|q|^2/d_k)``; ``"expected"`` the mean limit.
    """
    dims = [positive_int(d, "dims") for d in np.atleast_1d(dims)]
    n_keys = positive_int(n_keys, "n_keys", minimum=2)
    n_queries = positive_int(n_queries, "n_queries", minimum=2)
    children = as_seed_sequence(seed).spawn(len(dims))
    measured = np.empty((len(dims), n_queries))
    predicted = np.empty_like(measured)
    for i, (d, ss) in enumerate(zip(dims, children)):
        rng = np.random.default_rng(ss)
        q = rng.standard_normal((n_queries, d))
        k = rng.standard_normal((n_keys, d))
        measured[i] = attention_neff_fraction(q, k)
        predicted[i] = neff_fraction_given_query(q)
    return {
        "d_k": np.array(dims),
        "mean": measured.mean(axis=1),
        "se": measured.std(axis=1, ddof=1) / np.sqrt(n_queries),
        "per_query": measured,
        "predicted": predicted,
        "expected": expected_neff_fraction(np.array(dims, dtype=float)),
    }


def exp_kernel_sine_estimates(
    sample_sizes, n_rep: int, seed, *, query: float = 1.0, beta: float = 1.0, sigma: float = SIGMA
) -> np.ndarray:
    """Exp-kernel (attention) estimates of ``m = sin`` at ``query``, d_k = 1.

    Replicate ``r`` draws one sample of ``max(sample_sizes)`` keys
    ``X ~ N(0, 1)`` and responses ``Y = sin X + sigma * eps`` from the ``r``-th
    child of ``SeedSequence(seed)``; the estimate at size ``n`` uses its first
    ``n`` points, so the sizes are compared under common random numbers.

    Returns ``(len(sample_sizes), n_rep)``.
    """
    sizes = [positive_int(n, "sample_sizes") for n in np.atleast_1d(sample_sizes)]
    n_rep = positive_int(n_rep, "n_rep")
    sigma = float(as_float_array(sigma, "sigma", ndim=0))
    if sigma < 0:
        raise ValueError(f"sigma: expected a non-negative noise level, got {sigma!r}")
    b = positive_scalar(beta, "beta")
    qv = np.array([[float(as_float_array(query, "query", ndim=0))]])
    out = np.empty((len(sizes), n_rep))
    for r, ss in enumerate(as_seed_sequence(seed).spawn(n_rep)):
        rng = np.random.default_rng(ss)
        x = rng.standard_normal((max(sizes), 1))
        y = np.sin(x[:, 0]) + sigma * rng.standard_normal(max(sizes))
        for i, n in enumerate(sizes):
            out[i, r] = softmax_attention(qv, x[:n], y[:n], scale=b)[0]
    return out
