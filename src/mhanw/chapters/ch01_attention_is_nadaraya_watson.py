"""Chapter 01 (Thm 2.1): the Monte Carlo experiments on the locality and the
large-n limit of softmax attention read as a Nadaraya-Watson estimator.

The theory (effective sample size, its Gaussian limit, the tilted-mean limit)
is :mod:`mhanw.locality`; this module draws the samples the chapter needs.
"""

from __future__ import annotations

import numpy as np

from .. import data
from ..constants import MAX_REPLICATES, SIGMA, check_entries
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.verdicts import (FAILS, HOLDS, N_SE, NOT_CHECKABLE, Verdict, checked, combine, no_violation,
                              no_violation_record, significant_effect, within_tolerance)
from ..infra.verdicts import stat as _stat
from ..infra.validate import as_float_array, as_seed_sequence, brief, positive_int, positive_ints, positive_scalar
from ..locality import (attention_neff_fraction, effective_sample_size, expected_neff_fraction,
                         neff_fraction_given_query)
from ..nw import softmax_attention

__all__ = [
    "CONSTRAINTS",
    "PARAMETERS",
    "consistency_rules",
    "direction_word",
    "layers_above_threshold",
    "not_checkable",
    "exp_kernel_estimates",
    "exp_kernel_sine_estimates",
    "gaussian_form_verdict",
    "gaussian_model_neff",
    "identity_verdict",
    "literal_bandwidth_verdict",
    "literal_off_dims",
    "locality_verdict",
    "neff_by_dimension",
    "neff_prediction_verdict",
    "trained_attention_neff",
    "trained_model_verdict",
]


def neff_by_dimension(dims, n_keys: int, n_queries: int, seed, inputs="gaussian") -> dict:
    """Monte Carlo ``n_eff/n`` of attention with random queries and keys, per ``d_k``.

    For each ``d_k`` in ``dims``: ``n_queries`` queries and ``n_keys`` keys
    drawn from ``inputs`` (an input law of :mod:`mhanw.data`; default
    ``N(0, I)``), default scale ``1/sqrt(d_k)``.  Streams come from
    ``SeedSequence(seed)``, one child per dimension.

    Returns a dict of arrays over ``dims``: ``"d_k"``; ``"mean"`` and ``"se"``
    (over queries) of the measured fraction; ``"per_query"`` ``(len(dims),
    n_queries)``; for Gaussian ``N(0, I)`` keys ``"predicted"`` ``(len(dims),
    n_queries)`` the per-query limit ``exp(-|q|^2/d_k)`` and ``"expected"``
    the mean limit ``(1 + 2/d_k)^(-d_k/2)`` (``nan`` for other laws, where
    these limits do not apply).
    """
    dims = positive_ints(dims, "dims")
    n_keys = positive_int(n_keys, "n_keys", minimum=2)
    n_queries = positive_int(n_queries, "n_queries", minimum=2)
    check_entries("n_keys", n_keys, max(dims))
    check_entries("n_queries", n_queries, max(dims))
    law = data.input_distribution(inputs)
    for d in dims:
        law.check_dimension(d, "dims")
    children = as_seed_sequence(seed).spawn(len(dims))
    measured = np.empty((len(dims), n_queries))
    predicted = np.full_like(measured, np.nan)
    for i, (d, ss) in enumerate(zip(dims, children)):
        rng = np.random.default_rng(ss)
        q = law.sample(rng, n_queries, d)
        k = law.sample(rng, n_keys, d)
        measured[i] = attention_neff_fraction(q, k)
        if law.is_standard_gaussian:
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


def exp_kernel_estimates(sample_sizes, n_rep: int, seed, model, *, query: float = 1.0, beta: float = 1.0
                         ) -> np.ndarray:
    """Exp-kernel (attention) estimates at ``query`` in one dimension (d_k = 1), for growing ``n``.

    ``model``: a :class:`mhanw.data.DataModel` or a regression spec (reference
    inputs and noise).  Replicate ``r`` draws one sample of
    ``max(sample_sizes)`` keys and responses from the ``r``-th child of
    ``SeedSequence(seed)`` (:meth:`DataModel.draw`: keys, then noise); the
    estimate at size ``n`` uses its first ``n`` points, so the sizes are
    compared under common random numbers.

    Returns ``(len(sample_sizes), n_rep)``.
    """
    sizes = positive_ints(sample_sizes, "sample_sizes")
    check_entries("sample_sizes", max(sizes))
    n_rep = positive_int(n_rep, "n_rep", maximum=MAX_REPLICATES, what="replicates")
    check_entries("n_rep", len(sizes), n_rep)
    model = data.as_data_model(model, name="model")
    model.check_dimension(1, "model")
    b = positive_scalar(beta, "beta")
    qv = np.array([[float(as_float_array(query, "query", ndim=0))]])
    out = np.empty((len(sizes), n_rep))
    for r, ss in enumerate(as_seed_sequence(seed).spawn(n_rep)):
        sample = model.draw(np.random.default_rng(ss), max(sizes), 1)
        for i, n in enumerate(sizes):
            out[i, r] = softmax_attention(qv, sample.X[:n], sample.Y[:n], scale=b)[0]
    return out


def exp_kernel_sine_estimates(
    sample_sizes, n_rep: int, seed, *, query: float = 1.0, beta: float = 1.0, sigma: float = SIGMA
) -> np.ndarray:
    """:func:`exp_kernel_estimates` for ``m = sin``, ``X ~ N(0, 1)``, Gaussian noise of level ``sigma``."""
    sigma = float(as_float_array(sigma, "sigma", ndim=0))
    if sigma < 0:
        raise ValueError(f"sigma: expected a non-negative noise level, got {brief(sigma)}")
    return exp_kernel_estimates(sample_sizes, n_rep, seed, data.data_model("sin(x1)", sigma=sigma),
                                query=query, beta=beta)


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
    counts = positive_ints(tokens, "tokens", minimum=2)
    d_k = positive_int(d_k, "d_k")
    n_draws = positive_int(n_draws, "n_draws", minimum=2, maximum=MAX_REPLICATES, what="draws")
    check_entries("tokens", max(counts), max(counts))  # the attention weights of one draw, t x t
    check_entries("tokens x d_k", max(counts), d_k)
    if n_draws * len(counts) > MAX_REPLICATES:
        raise ValueError(f"n_draws x tokens: {n_draws} draws for each of {len(counts)} sentences exceed the "
                         f"{MAX_REPLICATES} draws a driver runs")
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


# --------------------------------------------------------------------------- verdict rules

#: Largest difference that counts as rounding for the identity: values of order 1, sums over 50 keys
#: in double precision (a few hundred ulps of 1).
IDENTITY_TOL = 1e-13

#: A difference of a tenth on values of order 1 is an O(1) disagreement, not rounding: the literal
#: bandwidth is "off" at a d_k where attention and Gaussian NW at h = d_k^(-1/2) differ by at least this.
LITERAL_OFF = 0.1

#: A smoother is local when a vanishing share of the sample carries the weight at a query; we call
#: the weight "spread" when n_eff/n exceeds a tenth (a tenth of all keys is a global average, not a
#: neighbourhood).  The Gaussian theory predicts at least e^-1 ~ 0.37 at every d_k.
LOCAL_MAX_FRACTION = 0.1

#: The large-n limit is identified when the estimate lies within this share of the distance between
#: the two candidate limits (the tilted mean and m(q)): 5 % of the gap leaves no doubt which one it is.
LIMIT_SHARE = 0.05

#: The Gaussian model describes trained attention when their mean n_eff/n differ by less than this
#: (a twentieth of the sample: below it the two spread their weight alike for every practical purpose).
MODEL_TOL = 0.05

SECTION = "sec:thm21"

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "identity_dims": P.sequence(P.positive_int()),  # d_k of the identity and the Gaussian form
    "neff_dims": P.sequence(P.positive_int()),  # d_k of the locality check
    "neff_inputs": P.inputs(),  # law of the queries and keys of the locality check
    "consistency_regression": P.regression(dimension=1),  # m of the consistency check, in x1
    "consistency_inputs": P.inputs(dimension=1),  # law of the keys X of the consistency check
    "consistency_query": P.real(),  # the query q of the consistency check
    "beta": P.positive_float(),  # inverse temperature of the consistency check
    "sigma": P.nonnegative_float(),  # noise level of the consistency check
    "sample_sizes": P.optional(P.sequence(P.positive_int(2))),  # n of the consistency check; None: by fidelity
    "trained_sentences": P.positive_int(2),  # shipped sentences used for trained attention (at most 50)
}
CONSTRAINTS = (P.require("trained_sentences", lambda p: p["trained_sentences"] <= 50,
                         "trained_sentences <= 50 (the shipped sentences)"),)


@checked(max_error=V.nonnegative, bitwise=V.flag)
def identity_verdict(max_error: float, bitwise: bool) -> Verdict:
    """Thm 2.1, the identity: attention equals exponential-kernel NW to rounding (no assumption)."""
    verdict, detectable = within_tolerance(max_error, IDENTITY_TOL) if bitwise else (FAILS, None)
    return Verdict(
        claim="thm-2.1/identity",
        statement="Softmax attention equals Nadaraya-Watson regression with the kernel exp(q.k/sqrt(d_k))",
        verdict=verdict,
        criterion=f"largest difference from the NW double loop at most {IDENTITY_TOL:g} (rounding) and "
                  "the library's exponential-kernel NW bit-identical to its attention",
        statistics=(_stat("largest |attention - NW loop|", max_error),),
        detectable=detectable,
        section=SECTION,
    )


@checked(max_error=V.nonnegative)
def gaussian_form_verdict(max_error: float) -> Verdict:
    """Thm 2.1, the Gaussian form: equal-norm keys make attention Gaussian NW at h = d_k^(1/4)."""
    verdict, detectable = within_tolerance(max_error, IDENTITY_TOL)
    return Verdict(
        claim="thm-2.1/gaussian-form",
        statement="With keys of equal norm, attention is Gaussian-kernel NW with bandwidth d_k^(1/4)",
        verdict=verdict,
        criterion=f"largest difference at most {IDENTITY_TOL:g} (rounding) at every d_k tried",
        statistics=(_stat("largest |attention - Gaussian NW|", max_error),),
        detectable=detectable,
        section=SECTION,
    )


@checked(literal_err=V.number_map)
def literal_bandwidth_verdict(literal_err: dict) -> Verdict:
    """Thm 2.1, "bandwidth 1/sqrt(d_k)": attention with equal-norm keys against Gaussian NW at h = d_k^(-1/2).

    ``literal_err``: ``{d_k: largest |difference|}``.  Fails when the difference is
    O(1) (at least :data:`LITERAL_OFF`) at some d_k; the record names those d_k.
    """
    off = literal_off_dims(literal_err)
    return Verdict(
        claim="thm-2.1/literal-bandwidth",
        statement="Attention is Gaussian NW with bandwidth h = 1/sqrt(d_k)",
        verdict=FAILS if off else HOLDS,
        criterion=f"fails at a d_k where attention and Gaussian NW at h = d_k^(-1/2) differ by at least "
                  f"{LITERAL_OFF:g} (values of order 1): the d_k where it is off are {off}",
        statistics=tuple(_stat(f"largest difference at d_k = {d}", literal_err[d])  # the deciding one first
                         for d in sorted(literal_err, key=lambda d: -literal_err[d])),
        detectable=None if off else LITERAL_OFF,
        section=SECTION,
    )


@checked(literal_err=V.number_map)
def literal_off_dims(literal_err: dict) -> list:
    """The d_k at which the literal bandwidth is off by at least :data:`LITERAL_OFF`."""
    return sorted(d for d, e in literal_err.items() if e >= LITERAL_OFF)


@checked(mean=V.number, se=V.standard_error, d_k=V.count, claim=V.text, statement=V.text, where=V.text)
def locality_verdict(mean: float, se: float, d_k: int, claim: str = "thm-2.1/locality",
                  statement: str = "Softmax attention with beta = 1/sqrt(d_k) is a local smoother "
                                   "(a vanishing share of the keys carries the weight)",
                  where: str = "the smallest mean over d_k") -> Verdict:
    """Locality: fails when n_eff/n is :data:`LOCAL_MAX_FRACTION` or more by 3 s.e.; holds when below by 3 s.e."""
    verdict = significant_effect(mean - LOCAL_MAX_FRACTION, se, sign=-1)  # holds when 3 s.e. below
    return Verdict(
        claim=claim,
        statement=statement,
        verdict=verdict,
        criterion=f"{where} of n_eff/n against {LOCAL_MAX_FRACTION:g} (a tenth of the keys is not a "
                  f"neighbourhood): fails when 3 s.e. above it, holds when 3 s.e. below",
        statistics=(_stat(f"n_eff/n ({where}, d_k = {d_k})", mean, se),),
        section=SECTION,
    )


@checked(per_query=V.numbers, predicted=V.numbers)
def neff_prediction_verdict(per_query, predicted) -> Verdict:
    """Locality, the Gaussian theory: each query's n_eff/n against its limit exp(-|q|^2/d_k), at every d_k.

    ``per_query``, ``predicted``: ``(dims, queries)``.  The paired difference
    (measured minus limit, same query) is averaged over the queries, with its
    standard error; the claim holds when at every d_k it lies within 3 s.e.
    of 0 and within :data:`MODEL_TOL` (:func:`no_violation`).
    """
    measured = as_float_array(per_query, "per_query", ndim=2)
    limit = as_float_array(predicted, "predicted", ndim=2)
    if limit.shape != measured.shape:
        raise ValueError(f"predicted: expected the shape of per_query {measured.shape}, got {limit.shape}")
    if measured.shape[1] < 2:
        raise ValueError(f"per_query: expected at least 2 queries (a standard error), got shape {measured.shape}")
    diff = measured - limit
    dev = diff.mean(axis=1)
    se = diff.std(axis=1, ddof=1) / np.sqrt(diff.shape[1])
    worst = int(np.argmax(np.abs(dev)))
    verdict = combine(no_violation(e, s, MODEL_TOL)[0] for e, s in zip(dev, se))
    return Verdict(
        claim="thm-2.1/neff-limit",
        statement="With Gaussian queries and keys, n_eff/n of attention is exp(-|q|^2/d_k) at each query, "
                  "with mean (1 + 2/d_k)^(-d_k/2), which decreases to e^-1 and not to 0",
        verdict=verdict,
        criterion=f"at every d_k, the mean over queries of (measured - limit at that query): "
                  f"{V.no_violation_criterion(MODEL_TOL)}; the claim holds when it holds at every d_k",
        statistics=(_stat("largest mean deviation (measured - limit)", dev[worst], se[worst]),),
        detectable=float(np.max(N_SE * se)), tolerance=MODEL_TOL,
        section=SECTION,
    )


@checked(estimate=V.number, se=V.standard_error, tilted=V.number, target=V.number)
def consistency_rules(estimate: float, se: float, tilted: float, target: float) -> tuple:
    """Consistency: the large-n estimate against the tilted mean (limit record) and against m(q).

    Returns ``(limit_record, consistency_record)``: the tilted mean is the limit
    when the estimate is within :data:`LIMIT_SHARE` of the gap between the
    candidates (``no_violation``); "consistent for m(q)" fails when the
    estimate is more than 3 s.e. and more than that share away from m(q).
    """
    tol = LIMIT_SHARE * abs(target - tilted)
    limit = no_violation_record(
        _stat("estimate - tilted mean", estimate - tilted, se), tol,
        claim="thm-2.1/tilted-limit",
        statement="With beta fixed, the exponential-kernel estimate converges to the tilted mean "
                  "E m(Z), Z ~ N(beta q, I)",
        criterion=f"estimate at the largest n minus the tilted mean, the tolerance {LIMIT_SHARE:g} of the gap "
                  "between the tilted mean and m(q)",
        section=SECTION,
    )
    consistent = no_violation_record(
        _stat("estimate - m(q)", estimate - target, se), tol,
        claim="thm-2.1/consistency",
        statement="With beta fixed, the exponential-kernel estimate is consistent for m(q)",
        criterion=f"estimate at the largest n minus m(q), the tolerance {LIMIT_SHARE:g} of the gap between the "
                  "candidate limits",
        section=SECTION,
    )
    return limit, consistent


@checked(measured=V.number, measured_se=V.standard_error, model=V.number, model_se=V.standard_error)
def trained_model_verdict(measured: float, measured_se: float, model: float, model_se: float) -> Verdict:
    """Trained attention against the Gaussian model at the same token counts (n_eff/n, mean over sentences)."""
    return no_violation_record(
        _stat("trained - model", measured - model, float(np.hypot(measured_se, model_se))), MODEL_TOL,
        extra=(_stat("trained", measured, measured_se), _stat("model", model, model_se)),
        claim="thm-2.1/trained-vs-gaussian-model",
        statement="The Gaussian model (q, k ~ N(0, I), beta = 1/sqrt(d_k)) predicts how far trained "
                  "attention spreads its weight (n_eff/n at the sentences' token counts)",
        criterion="mean n_eff/n of all-MiniLM-L6-v2 over sentences, layers, heads and queries minus the model's",
        section=SECTION,
    )


@checked(claim=V.text, reason=V.text)
def not_checkable(claim: str, reason: str) -> Verdict:
    """A record for a check whose prediction does not apply under the chosen assumptions."""
    return Verdict(claim=claim, statement=f"{claim}: the prediction compared here", verdict=NOT_CHECKABLE,
                   criterion=f"not checked: {reason}", section=SECTION)


@checked(effect=V.number, se=V.standard_error, below=V.text, above=V.text, neither=V.text)
def direction_word(effect: float, se: float, *, below: str, above: str, neither: str) -> str:
    """The words for the sign of ``effect``: ``below``/``above`` when 3 s.e. from 0, else ``neither``."""
    v = significant_effect(effect, se)
    return above if v == HOLDS else below if v == FAILS else neither


@checked(by_layer=V.numbers, by_layer_se=V.standard_errors)
def layers_above_threshold(by_layer, by_layer_se) -> bool:
    """Whether every layer's mean n_eff/n lies 3 s.e. above :data:`LOCAL_MAX_FRACTION`."""
    m, s = np.asarray(by_layer, float), np.asarray(by_layer_se, float)
    if m.shape != s.shape:
        raise ValueError(f"by_layer_se: expected the shape of by_layer {m.shape}, got {s.shape}")
    return bool(np.all(m - N_SE * s > LOCAL_MAX_FRACTION))
