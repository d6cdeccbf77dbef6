"""How local is softmax attention?  Effective sample sizes and large-n limits (Theorem 2.1).

The effective sample size and the large-n limit of the exponential-kernel estimator check
Theorem 2.1's locality and consistency.

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

The Monte Carlo drivers of chapter 01 measure both: :func:`neff_by_dimension` (``n_eff/n`` against its
limit, per ``d_k``), :func:`exp_kernel_estimates` (the estimate as ``n`` grows, under common random
numbers), :func:`trained_attention_neff` (``n_eff/n`` of a trained encoder's heads) and
:func:`gaussian_model_neff` (the Gaussian model at the same token counts).
"""

from __future__ import annotations

import numpy as np

from .constants import MAX_REPLICATES, SIGMA, check_entries
from .infra.sweep import spawn_streams
from .infra.validate import as_float_array, brief, positive_int, positive_ints, positive_scalar
from .nw import attention_weights, softmax_attention

__all__ = [
    "effective_sample_size",
    "attention_neff_fraction",
    "neff_fraction_given_query",
    "expected_neff_fraction",
    "tilted_sine_limit",
    "tilted_mean",
    "MAX_TILT_CENTRE",
    "MAX_NODES",
    "MAX_TENSOR_NODES",
]


def effective_sample_size(weights) -> np.ndarray:
    """Kish's effective sample size of each row of normalised weights (Theorem 2.1, locality).

    Parameters
    ----------
    weights : array (m, n)
        Non-negative rows summing to 1 (within 1e-9).

    Returns
    -------
    numpy.ndarray
        ``(m,)``: ``n_eff = 1 / sum_i w_i^2``, between 1 and ``n``.

    Raises
    ------
    ValueError
        Naming ``weights`` for a negative weight, a row that does not sum to 1, or an array that is not
        2-D and finite.
    """
    w = as_float_array(weights, "weights", ndim=2)
    if np.any(w < 0):
        raise ValueError("weights: expected non-negative weights")
    if not np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("weights: expected every row to sum to 1")
    return 1.0 / np.einsum("ij,ij->i", w, w)


def attention_neff_fraction(queries, keys, scale=None) -> np.ndarray:
    """``n_eff / n`` of softmax attention for each query (Theorem 2.1, locality).

    Parameters
    ----------
    queries : array (m, d_k)
        The queries.
    keys : array (n, d_k)
        The keys.
    scale : float, optional
        The inverse temperature; defaults to ``1/sqrt(d_k)``.

    Returns
    -------
    numpy.ndarray
        ``(m,)`` fractions in ``[1/n, 1]``.

    Raises
    ------
    ValueError
        Naming the argument that is not finite or whose shape does not match.
    """
    w = attention_weights(queries, keys, scale=scale)
    return effective_sample_size(w) / w.shape[1]


def neff_fraction_given_query(queries, scale=None) -> np.ndarray:
    """Large-n limit of ``n_eff/n`` for Gaussian keys ``N(0, I_{d_k})``: ``exp(-scale^2 |q|^2)``.

    Parameters
    ----------
    queries : array (m, d_k)
        The queries ``q``.
    scale : float > 0, optional
        The inverse temperature ``beta``; defaults to ``1/sqrt(d_k)``, so the limit is
        ``exp(-|q|^2/d_k)``.

    Returns
    -------
    numpy.ndarray
        ``(m,)`` fractions in ``[0, 1]``.

    Raises
    ------
    ValueError
        Naming ``queries`` or ``scale`` for a value that is not finite, of the wrong shape or out of
        range.
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
    """Mean of ``exp(-|q|^2/d_k)`` over ``q ~ N(0, I_{d_k})``: ``(1 + 2/d_k)^(-d_k/2)`` (Theorem 2.1).

    It decreases to ``exp(-1)`` as ``d_k`` grows: attention keeps a fixed fraction of the sample.

    Parameters
    ----------
    d_k : float or array (k,)
        Positive dimensions (any positive real: the formula is continuous in ``d_k``).

    Returns
    -------
    numpy.ndarray
        The fractions, of the shape of ``d_k``.

    Raises
    ------
    ValueError
        Naming ``d_k`` for a dimension that is not positive or not finite.
    """
    d = as_float_array(d_k, "d_k", ndim=(0, 1))
    if np.any(d <= 0):
        raise ValueError("d_k: expected positive dimensions")
    # exp(-d/2 log1p(2/d)): (1 + 2/d) rounds to 1 for d above ~1e16, and the limit is exp(-1);
    # for d below ~1e-300, 2/d overflows and the value is its limit, 1 (d log(2/d) -> 0).
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-0.5 * d * np.log1p(2.0 / d))
    return np.where(np.isfinite(out), out, 1.0)


def tilted_sine_limit(query: float = 1.0, beta: float = 1.0) -> float:
    """Limit of the exp-kernel estimate of ``m = sin`` at ``query`` (d_k = 1): ``sin(beta q) e^{-1/2}``.

    Parameters
    ----------
    query : float, default 1.0
        The query ``q``.
    beta : float > 0, default 1.0
        The inverse temperature.

    Returns
    -------
    float
        The limit (Theorem 2.1, consistency: not ``sin(q)``).

    Raises
    ------
    ValueError
        Naming ``beta`` when ``beta * query`` overflows a double, or the argument that is not finite or
        not positive.
    """
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
    consistency).  The expectation is a tensor Gauss-Hermite rule.  For ``m = sin``, ``d = 1`` it is
    :func:`tilted_sine_limit`.

    Parameters
    ----------
    regression : str, callable or mhanw.data.RegressionFunction
        A regression spec or function of :mod:`mhanw.data`.
    query : float or array (d,)
        The query ``q`` (a number: ``d = 1``); ``|beta q_l|`` at most :data:`MAX_TILT_CENTRE`.
    beta : float > 0, default 1.0
        The inverse temperature.
    nodes : int, default 40
        Gauss-Hermite points per dimension, at most :data:`MAX_NODES`, with ``nodes ** d`` at most
        :data:`MAX_TENSOR_NODES`.

    Returns
    -------
    float
        ``E m(Z)``.

    Raises
    ------
    ValueError
        Naming ``query`` when ``m`` needs more dimensions than it has or when the mean is not a finite
        double (``m`` overflows); naming ``query`` or ``beta`` (whichever is at fault) when
        ``|beta q_l|`` is too large, ``beta`` when ``beta * query`` overflows; naming ``nodes`` for too
        many nodes.
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


# --------------------------------------------------------------------------- Monte Carlo drivers


def neff_by_dimension(dims, n_keys: int, n_queries: int, seed, inputs="gaussian") -> dict:
    """Monte Carlo ``n_eff/n`` of attention with random queries and keys, per ``d_k``.

    For each ``d_k`` in ``dims``: ``n_queries`` queries and ``n_keys`` keys
    drawn from ``inputs`` (an input law of :mod:`mhanw.data`; default
    ``N(0, I)``), default scale ``1/sqrt(d_k)``.  Streams: one child of
    ``SeedSequence(seed)`` per dimension (:func:`mhanw.infra.sweep.spawn_streams`).

    Returns a dict of arrays over ``dims``: ``"d_k"``; ``"mean"`` and ``"se"``
    (over queries) of the measured fraction; ``"per_query"`` ``(len(dims),
    n_queries)``; ``"predicted"`` ``(len(dims), n_queries)`` the per-query
    limit ``exp(-|q|^2/d_k)`` that Gaussian ``N(0, I)`` keys would give, computed
    for every law (the premise :func:`mhanw.premises.gaussian_inputs`
    says whether it applies); ``"expected"`` the mean limit
    ``(1 + 2/d_k)^(-d_k/2)`` (``nan`` for a law that is not ``N(0, I)``, where
    the mean of the queries' limit is not this curve).
    """
    from . import data

    dims = positive_ints(dims, "dims")
    n_keys = positive_int(n_keys, "n_keys", minimum=2)
    n_queries = positive_int(n_queries, "n_queries", minimum=2)
    check_entries("n_keys", n_keys, max(dims))
    check_entries("n_queries", n_queries, max(dims))
    law = data.input_distribution(inputs)
    for d in dims:
        law.check_dimension(d, "dims")
    measured = np.empty((len(dims), n_queries))
    predicted = np.empty_like(measured)
    for i, (d, ss) in enumerate(zip(dims, spawn_streams(seed, len(dims)))):
        rng = np.random.default_rng(ss)
        q = law.sample(rng, n_queries, d)
        k = law.sample(rng, n_keys, d)
        measured[i] = attention_neff_fraction(q, k)
        predicted[i] = neff_fraction_given_query(q)
    expected = expected_neff_fraction(np.array(dims, dtype=float))
    return {
        "d_k": np.array(dims),
        "mean": measured.mean(axis=1),
        "se": measured.std(axis=1, ddof=1) / np.sqrt(n_queries),
        "per_query": measured,
        "predicted": predicted,
        "expected": expected if law.is_standard_gaussian else np.full(len(dims), np.nan),
    }


def exp_kernel_estimates(sample_sizes, n_rep: int, seed, model, *, query: float = 1.0, beta: float = 1.0) -> np.ndarray:
    """Exp-kernel (attention) estimates at ``query`` in one dimension (d_k = 1), for growing ``n``.

    ``model``: a :class:`mhanw.data.DataModel` or a regression spec (reference
    inputs and noise).  Replicate ``r`` draws one sample of
    ``max(sample_sizes)`` keys and responses from the ``r``-th child of
    ``SeedSequence(seed)`` (:meth:`DataModel.draw`: keys, then noise); the
    estimate at size ``n`` uses its first ``n`` points, so the sizes are
    compared under common random numbers.

    Returns ``(len(sample_sizes), n_rep)``.
    """
    from . import data

    sizes = positive_ints(sample_sizes, "sample_sizes")
    check_entries("sample_sizes", max(sizes))
    n_rep = positive_int(n_rep, "n_rep", maximum=MAX_REPLICATES, what="replicates")
    check_entries("n_rep", len(sizes), n_rep)
    model = data.as_data_model(model, name="model")
    model.check_dimension(1, "model")
    b = positive_scalar(beta, "beta")
    qv = np.array([[float(as_float_array(query, "query", ndim=0))]])
    out = np.empty((len(sizes), n_rep))
    for r, ss in enumerate(spawn_streams(seed, n_rep)):
        sample = model.draw(np.random.default_rng(ss), max(sizes), 1)
        for i, n in enumerate(sizes):
            out[i, r] = softmax_attention(qv, sample.X[:n], sample.Y[:n], scale=b)[0]
    return out


def exp_kernel_sine_estimates(
    sample_sizes, n_rep: int, seed, *, query: float = 1.0, beta: float = 1.0, sigma: float = SIGMA
) -> np.ndarray:
    """:func:`exp_kernel_estimates` for ``m = sin``, ``X ~ N(0, 1)``, Gaussian noise of level ``sigma``."""
    from . import data

    sigma = float(as_float_array(sigma, "sigma", ndim=0))
    if sigma < 0:
        raise ValueError(f"sigma: expected a non-negative noise level, got {brief(sigma)}")
    return exp_kernel_estimates(
        sample_sizes, n_rep, seed, data.data_model("sin(x1)", sigma=sigma), query=query, beta=beta
    )


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
    rows: list[np.ndarray] = []
    tokens = []
    for i, a in enumerate(maps):
        a = as_float_array(a, "maps", ndim=4)
        if a.shape[2] != a.shape[3]:
            raise ValueError(f"maps: sentence {i} has shape {a.shape}; expected (layers, heads, t, t)")
        if rows and a.shape[:2] != rows[0].shape:
            raise ValueError(f"maps: sentence {i} has {a.shape[:2]} (layers, heads), expected {rows[0].shape}")
        t = a.shape[-1]
        frac = effective_sample_size(a.reshape(-1, t)).reshape(a.shape[:3]) / t
        rows.append(frac.mean(axis=2))
        tokens.append(t)
    per = np.stack(rows)
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
    counts = positive_ints(tokens, "tokens", minimum=2)
    d_k = positive_int(d_k, "d_k")
    n_draws = positive_int(n_draws, "n_draws", minimum=2, maximum=MAX_REPLICATES, what="draws")
    scale = None if scale is None else positive_scalar(scale, "scale")  # an inverse temperature
    check_entries("tokens", max(counts), max(counts))  # the attention weights of one draw, t x t
    check_entries("tokens x d_k", max(counts), d_k)
    if n_draws * len(counts) > MAX_REPLICATES:
        raise ValueError(
            f"n_draws x tokens: {n_draws} draws for each of {len(counts)} sentences exceed the "
            f"{MAX_REPLICATES} draws a driver runs"
        )
    means, ses = [], []
    for t, ss in zip(counts, spawn_streams(seed, len(counts))):
        rng = np.random.default_rng(ss)
        vals = np.array(
            [
                attention_neff_fraction(
                    rng.standard_normal((t, d_k)), rng.standard_normal((t, d_k)), scale=scale
                ).mean()
                for _ in range(n_draws)
            ]
        )
        means.append(vals.mean())
        ses.append(vals.std(ddof=1) / np.sqrt(n_draws))
    mean, se = np.array(means), np.array(ses)
    return {
        "per_sentence": mean,
        "per_sentence_se": se,
        "overall": float(mean.mean()),
        "overall_se": float(np.sqrt((se**2).sum()) / len(se)),
        "limit": float(expected_neff_fraction(float(d_k))),
    }
