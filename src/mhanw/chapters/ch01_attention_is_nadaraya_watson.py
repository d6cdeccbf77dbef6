"""Chapter 01 (Thm 2.1): the Monte Carlo experiments on the locality and the
large-n limit of softmax attention read as a Nadaraya-Watson estimator.

The theory (effective sample size, its Gaussian limit, the tilted-mean limit)
is :mod:`mhanw.locality`; this module draws the samples the chapter needs.
"""

from __future__ import annotations

import numpy as np

from ..constants import SIGMA
from ..infra.validate import as_float_array, as_seed_sequence, positive_int, positive_scalar
from ..locality import (attention_neff_fraction, effective_sample_size, expected_neff_fraction,
                         neff_fraction_given_query)
from ..nw import softmax_attention

__all__ = ["exp_kernel_sine_estimates", "gaussian_model_neff", "neff_by_dimension", "trained_attention_neff"]


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


# --------------------------------------------------------------------------- trained attention


def trained_attention_neff(maps) -> dict:
    """``n_eff/n`` of every head of a trained encoder, per sentence (Theorem 2.1, locality).

    ``maps``: a list over sentences of arrays ``(layers, heads, t, t)``, the
    attention weights of :meth:`mhanw.pretrained.Encoder.attention_maps`.  For
    each sentence, layer and head, Kish's ``n_eff/n`` of every query row
    (``n = t`` keys, special tokens included) averaged over the queries.

    Returns ``"per_sentence"`` ``(sentences, layers, heads)``, ``"tokens"``
    ``(sentences,)`` the token counts, and ``"by_layer"`` / ``"by_layer_se"``
    ``(layers,)``, ``"overall"`` / ``"overall_se"``: means over heads and
    sentences with the standard error over sentences (the sentences are the
    independent units; the heads of one sentence share its tokens).
    """
    if not maps:
        raise ValueError("maps: expected at least one sentence's attention maps")
    per = []
    tokens = []
    for i, a in enumerate(maps):
        a = as_float_array(a, "maps", ndim=4)
        if a.shape[2] != a.shape[3]:
            raise ValueError(f"maps: sentence {i} has shape {a.shape}; expected (layers, heads, t, t)")
        if per and a.shape[:2] != per[0].shape:
            raise ValueError(f"maps: sentence {i} has {a.shape[:2]} (layers, heads), expected {per[0].shape}")
        t = a.shape[-1]
        frac = effective_sample_size(a.reshape(-1, t)).reshape(a.shape[:3]) / t
        per.append(frac.mean(axis=2))
        tokens.append(t)
    per = np.stack(per)
    s = per.shape[0]
    by_sentence_layer = per.mean(axis=2)  # (sentences, layers)
    overall = per.mean(axis=(1, 2))
    sd = lambda v: v.std(axis=0, ddof=1) / np.sqrt(s) if s > 1 else np.full(np.shape(v)[1:], np.nan)  # noqa: E731
    return {
        "per_sentence": per,
        "tokens": np.array(tokens),
        "by_layer": by_sentence_layer.mean(axis=0),
        "by_layer_se": sd(by_sentence_layer),
        "overall": float(overall.mean()),
        "overall_se": float(sd(overall[:, None])[0]),
    }


def gaussian_model_neff(tokens, d_k: int, n_draws: int, seed, scale=None) -> dict:
    """The Gaussian model's ``n_eff/n`` at the token counts of real sentences (Theorem 2.1, locality).

    For each count ``t`` in ``tokens``: ``n_draws`` draws of ``t`` queries and
    ``t`` keys, all ``N(0, I_{d_k})``, inverse temperature ``scale`` (default
    ``1/sqrt(d_k)``), and the mean ``n_eff/n`` of attention over the queries
    and draws: the finite-``n`` value of the model whose limit is
    ``(1 + 2/d_k)^(-d_k/2)``.  Streams: one child of ``SeedSequence(seed)``
    per sentence.

    Returns ``"per_sentence"`` ``(len(tokens),)``, ``"per_sentence_se"``,
    ``"overall"`` (the mean over sentences) and ``"overall_se"`` (its Monte
    Carlo error), ``"limit"`` ``(1 + 2/d_k)^(-d_k/2)``.
    """
    counts = [positive_int(t, "tokens", minimum=2) for t in np.atleast_1d(tokens)]
    d_k = positive_int(d_k, "d_k")
    n_draws = positive_int(n_draws, "n_draws", minimum=2)
    means, ses = [], []
    for t, ss in zip(counts, as_seed_sequence(seed).spawn(len(counts))):
        rng = np.random.default_rng(ss)
        vals = np.array([
            attention_neff_fraction(rng.standard_normal((t, d_k)), rng.standard_normal((t, d_k)), scale=scale).mean()
            for _ in range(n_draws)
        ])
        means.append(vals.mean())
        ses.append(vals.std(ddof=1) / np.sqrt(n_draws))
    means, ses = np.array(means), np.array(ses)
    return {
        "per_sentence": means,
        "per_sentence_se": ses,
        "overall": float(means.mean()),
        "overall_se": float(np.sqrt((ses**2).sum()) / len(ses)),
        "limit": float(expected_neff_fraction(float(d_k))),
    }
