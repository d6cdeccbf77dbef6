"""Chapter 01 (Thm 2.1): the Monte Carlo experiments on the locality and the
large-n limit of softmax attention read as a Nadaraya-Watson estimator.

The theory (effective sample size, its Gaussian limit, the tilted-mean limit)
is :mod:`mhanw.locality`; this module draws the samples the chapter needs.
"""

from __future__ import annotations

import math

import numpy as np

from .. import data
from ..constants import MAX_REPLICATES, SIGMA, check_entries
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.notebook import notebook_helper
from ..infra.validate import as_float_array, as_seed_sequence, brief, positive_int, positive_ints, positive_scalar
from ..infra.verdicts import (
    FAILS,
    HOLDS,
    N_SE,
    NOT_CHECKABLE,
    Verdict,
    checked,
    combine,
    no_violation,
    no_violation_record,
    significant_effect,
    within_tolerance,
)
from ..infra.verdicts import stat as _stat
from ..locality import attention_neff_fraction, effective_sample_size, expected_neff_fraction, neff_fraction_given_query
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
    "neff_premises",
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
    n_queries)``; ``"predicted"`` ``(len(dims), n_queries)`` the per-query
    limit ``exp(-|q|^2/d_k)`` that Gaussian ``N(0, I)`` keys would give, computed
    for every law (the record's premise :func:`mhanw.premises.gaussian_inputs`
    says whether it applies); ``"expected"`` the mean limit
    ``(1 + 2/d_k)^(-d_k/2)`` (``nan`` for a law that is not ``N(0, I)``, where
    the mean of the queries' limit is not this curve).
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
    predicted = np.empty_like(measured)
    for i, (d, ss) in enumerate(zip(dims, children)):
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
    return exp_kernel_estimates(
        sample_sizes, n_rep, seed, data.data_model("sin(x1)", sigma=sigma), query=query, beta=beta
    )


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
    scale = None if scale is None else positive_scalar(scale, "scale")  # an inverse temperature
    seed = as_seed_sequence(seed, "seed")
    check_entries("tokens", max(counts), max(counts))  # the attention weights of one draw, t x t
    check_entries("tokens x d_k", max(counts), d_k)
    if n_draws * len(counts) > MAX_REPLICATES:
        raise ValueError(
            f"n_draws x tokens: {n_draws} draws for each of {len(counts)} sentences exceed the "
            f"{MAX_REPLICATES} draws a driver runs"
        )
    means, ses = [], []
    for t, ss in zip(counts, as_seed_sequence(seed).spawn(len(counts))):
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
#: The unit of the n_eff comparisons (the n_eff limit, trained attention against the model): per cent of
#: the keys, i.e. 100 x a difference of n_eff/n; their tolerance :data:`MODEL_TOL` in that unit.
NEFF_UNIT = "% of the keys"
NEFF_TOL_PCT = 100 * MODEL_TOL

#: The unit of the consistency checks: the response's own (the estimate and m(q) are values of m).
LIMIT_UNIT = "units of y"

SECTION = "sec:thm21"

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **P.STANDARD,
    "identity_dims": P.sequence(
        P.positive_int(1, 1024, why="4 times the paper's largest d_k, 256")
    ),  # d_k of the identity and the Gaussian form
    "neff_dims": P.sequence(
        P.positive_int(1, 1024, why="4 times the paper's largest d_k, 256")
    ),  # d_k of the locality check
    "neff_inputs": P.inputs(),  # law of the queries and keys of the locality check
    "consistency_regression": P.regression(dimension=1),  # m of the consistency check, in x1
    "consistency_inputs": P.inputs(dimension=1),  # law of the keys X of the consistency check
    "consistency_query": P.coordinate(),  # the query q of the consistency check
    "beta": P.positive_float(
        1e-3, 1e3, why="a thousandth to a thousand times the default 1"
    ),  # inverse temperature of the consistency check
    "sigma": P.noise_level(),  # noise level of the consistency check
    "sample_sizes": P.optional(
        P.sequence(P.positive_int(2, 10**7, why="10 times the paper's largest n, 10^6"))
    ),  # n of the consistency check; None: by fidelity
    "trained_sentences": P.positive_int(
        2, 50, why="the 50 shipped sentences"
    ),  # shipped sentences used for trained attention
}
CONSTRAINTS = ()


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
    # The deciding statistics: when it fails, the differences at the d_k where it is off (largest first);
    # when it holds, the largest difference of all (below the threshold).
    shown = sorted(off or literal_err, key=lambda d: -literal_err[d])[: len(off) or 1]
    same = [d for d in literal_err if d == 1]
    note = (
        " (at d_k = 1 the bandwidths d_k^(-1/2) and d_k^(1/4) coincide, so d_k = 1 cannot separate them)"
        if same
        else ""
    )
    return Verdict(
        claim="thm-2.1/literal-bandwidth",
        statement="Attention is Gaussian NW with bandwidth h = 1/sqrt(d_k)",
        verdict=FAILS if off else HOLDS,
        criterion=f"fails at a d_k where attention and Gaussian NW at h = d_k^(-1/2) differ by at least "
        f"{LITERAL_OFF:g} (values of order 1): the d_k where it is off are {off}{note}",
        statistics=tuple(_stat(f"largest difference (d_k = {d})", literal_err[d]) for d in shown),
        detectable=None if off else LITERAL_OFF,
        section=SECTION,
    )


@checked(literal_err=V.number_map)
def literal_off_dims(literal_err: dict) -> list:
    """The d_k at which the literal bandwidth is off by at least :data:`LITERAL_OFF`."""
    return sorted(d for d, e in literal_err.items() if e >= LITERAL_OFF)


@checked(mean=V.number, se=V.standard_error, d_k=V.positive_count, claim=V.text, statement=V.text, where=V.text)
def locality_verdict(
    mean: float,
    se: float,
    d_k: int,
    claim: str = "thm-2.1/locality",
    statement: str = "Softmax attention with beta = 1/sqrt(d_k) is a local smoother "
    "(a vanishing share of the keys carries the weight)",
    where: str = "the smallest mean over d_k",
) -> Verdict:
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


@checked(per_query=V.numbers, predicted=V.numbers, dims=V.optional(positive_ints), premises=V.premise_list)
def neff_prediction_verdict(per_query, predicted, dims=None, premises=()) -> Verdict:
    """Locality, the Gaussian theory: each query's n_eff/n against its limit exp(-|q|^2/d_k), at every d_k.

    ``per_query``, ``predicted``: ``(dims, queries)``, shares of the keys; ``dims``: the ``d_k`` of
    the rows (named in the record); ``premises``: what the limit rests on
    (:func:`neff_premises`: Gaussian queries and keys).  The paired difference (measured minus
    limit, same query) is averaged over the queries, with its standard error, in per cent of the
    keys.  A tolerance claim: at every d_k, :func:`no_violation` with the tolerance
    :data:`NEFF_TOL_PCT` (holds when |deviation| + 3 s.e. is within it, fails when the deviation
    exceeds both 3 s.e. and the tolerance); the claim holds when it holds at every d_k.  The record
    carries the detectable size (3 s.e. at the least precise d_k) and the tolerance, both in
    ``NEFF_UNIT``, and a finding that says how far from zero the worst deviation is.
    """
    measured = as_float_array(per_query, "per_query", ndim=2)
    limit = as_float_array(predicted, "predicted", ndim=2)
    if limit.shape != measured.shape:
        raise ValueError(f"predicted: expected the shape of per_query {measured.shape}, got {limit.shape}")
    if measured.shape[1] < 2:
        raise ValueError(f"per_query: expected at least 2 queries (a standard error), got shape {measured.shape}")
    if dims is not None and len(dims) != measured.shape[0]:
        raise ValueError(f"dims: expected one d_k per row of per_query ({measured.shape[0]}), got {len(dims)}")
    diff = 100.0 * (measured - limit)  # per cent of the keys
    dev = diff.mean(axis=1)
    se = diff.std(axis=1, ddof=1) / np.sqrt(diff.shape[1])
    worst = int(np.argmax(np.abs(dev)))
    at = "" if dims is None else f" (d_k = {int(dims[worst])})"
    verdict = combine(no_violation(e, s, NEFF_TOL_PCT)[0] for e, s in zip(dev, se))
    z = abs(dev[worst]) / se[worst] if se[worst] > 0 else math.inf
    resolved = (
        f"{z:.1f} s.e. from zero, so the run resolves it"
        if z > N_SE
        else f"{z:.1f} s.e. from zero, not resolved by the run"
    )
    finding = (
        f"the largest mean deviation of n_eff/n from its limit{at} is {dev[worst]:+.2f} ± {se[worst]:.2f}"
        f"{_unit_words(NEFF_UNIT)}: {resolved}; the tolerance is {NEFF_TOL_PCT:g}{_unit_words(NEFF_UNIT)}"
    )
    return Verdict(
        claim="thm-2.1/neff-limit",
        statement="With Gaussian queries and keys, n_eff/n of attention is exp(-|q|^2/d_k) at each query, "
        "with mean (1 + 2/d_k)^(-d_k/2), which decreases to e^-1 and not to 0",
        verdict=verdict,
        criterion=f"at every d_k, the mean over queries of (measured - limit at that query), in {NEFF_UNIT}: "
        f"{V.no_violation_criterion(NEFF_TOL_PCT, unit=NEFF_UNIT)}; the claim holds when it holds at "
        "every d_k and fails when it fails at one",
        statistics=(_stat(f"largest mean deviation (measured - limit){at}", dev[worst], se[worst], NEFF_UNIT),),
        detectable=float(np.max(N_SE * se)),
        tolerance=NEFF_TOL_PCT,
        unit=NEFF_UNIT,
        premises=premises,
        finding=finding,
        section=SECTION,
    )


def _unit_words(unit: str) -> str:
    return "" if not unit else (unit if unit.startswith("%") else f" {unit}")


@checked(inputs=V.text)
def neff_premises(inputs) -> tuple:
    """The premises of the n_eff limit and of the tilted-mean limit: queries and keys iid ``N(0, I)``
    (:func:`mhanw.premises.gaussian_inputs` on the law ``inputs``, a spec of :mod:`mhanw.data`)."""
    from .. import premises as P

    return (P.gaussian_inputs(data.data_model("0", inputs=inputs)),)


@checked(estimate=V.number, se=V.standard_error, tilted=V.number, target=V.number, premises=V.premise_list)
def consistency_rules(estimate: float, se: float, tilted: float, target: float, premises=()) -> tuple:
    """Consistency: the large-n estimate against the tilted mean (limit record) and against m(q).

    ``premises``: what the tilted-mean limit rests on (:func:`neff_premises` of the keys' law:
    Gaussian keys); "consistent for m(q)" rests on none (a local smoother would reach m(q) under
    any law of the keys).
    Returns ``(limit_record, consistency_record)``: the tilted mean is the limit
    when the estimate is within :data:`LIMIT_SHARE` of the gap between the
    candidates (``no_violation``); "consistent for m(q)" fails when the
    estimate is more than 3 s.e. and more than that share away from m(q).
    """
    tol = LIMIT_SHARE * abs(target - tilted)
    limit = no_violation_record(
        _stat("estimate - tilted mean", estimate - tilted, se, LIMIT_UNIT),
        tol,
        claim="thm-2.1/tilted-limit",
        statement="With beta fixed, the exponential-kernel estimate converges to the tilted mean "
        "E m(Z), Z ~ N(beta q, I)",
        criterion=f"estimate at the largest n minus the tilted mean, the tolerance {LIMIT_SHARE:g} of the gap "
        "between the tilted mean and m(q)",
        premises=premises,
        section=SECTION,
    )
    consistent = no_violation_record(
        _stat("estimate - m(q)", estimate - target, se, LIMIT_UNIT),
        tol,
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
        _stat("trained - model", 100 * (measured - model), 100 * float(np.hypot(measured_se, model_se)), NEFF_UNIT),
        NEFF_TOL_PCT,
        extra=(_stat("trained n_eff/n", measured, measured_se), _stat("model n_eff/n", model, model_se)),
        claim="thm-2.1/trained-vs-gaussian-model",
        statement="The Gaussian model (q, k ~ N(0, I), beta = 1/sqrt(d_k)) predicts how far trained "
        "attention spreads its weight (n_eff/n at the sentences' token counts)",
        criterion=f"mean n_eff/n of all-MiniLM-L6-v2 over sentences, layers, heads and queries minus the model's, "
        f"in {NEFF_UNIT}",
        section=SECTION,
    )


@checked(claim=V.text, reason=V.text)
def not_checkable(claim: str, reason: str) -> Verdict:
    """A record for a check whose prediction does not apply under the chosen assumptions."""
    return Verdict(
        claim=claim,
        statement=f"{claim}: the prediction compared here",
        verdict=NOT_CHECKABLE,
        criterion=f"not checked: {reason}",
        section=SECTION,
    )


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


# --------------------------------------------------------------------------- the notebook's bookkeeping

#: Monte Carlo sizes by fidelity: ``n_draws`` random draws of the identity, ``neff_keys`` keys and
#: ``neff_queries`` queries of the locality check, ``sample_sizes`` and ``n_rep`` replicates of the
#: consistency check, ``model_draws`` Gaussian-model draws per sentence (trained attention).
SIZES = {
    "quick": dict(
        n_draws=3,
        neff_keys=20_000,
        neff_queries=20,
        sample_sizes=[10**2, 10**3, 10**4, 10**5],
        n_rep=10,
        model_draws=50,
    ),
    "paper": dict(
        n_draws=20,
        neff_keys=200_000,
        neff_queries=40,
        sample_sizes=[10**2, 10**3, 10**4, 10**5, 10**6],
        n_rep=40,
        model_draws=400,
    ),
}


def setup(namespace) -> tuple[dict, dict, list]:
    """The run of the notebook whose globals are ``namespace``: its checked parameters
    (:func:`mhanw.infra.params.check_parameters`, one line naming a bad one), the chapter's sizes
    (:data:`SIZES` at the run's fidelity, ``sample_sizes`` from the parameters when given) and its
    random streams: children 0-2 of ``SeedSequence(seed)`` for the identity, the locality and the
    consistency checks, child 3 for the warm-up, child 4 for the Gaussian model of trained attention.
    Also sets the figure style.  Returns ``(params, sizes, streams)``."""
    from ..infra.notebook import start

    params, sizes, streams = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 5)
    if params["sample_sizes"] is not None:
        sizes["sample_sizes"] = sorted(params["sample_sizes"])
    return params, sizes, streams


def trained_attention(n_sentences: int, model_draws: int, stream) -> dict:
    """Section 5 of the chapter: ``n_eff/n`` of every head of all-MiniLM-L6-v2 on the first
    ``n_sentences`` shipped sentences (:func:`trained_attention_neff`) and the Gaussian model at the
    same token counts (:func:`gaussian_model_neff`, ``model_draws`` draws per sentence, seeded by
    ``stream``).  Returns the statistics of :func:`trained_attention_neff` with ``"model"``,
    ``"head_means"`` / ``"head_se"`` ``(layers, heads)``, ``"local_heads"`` (heads whose mean is 3 s.e.
    below :data:`LOCAL_MAX_FRACTION`), ``"d_k"``, ``"n_layers"``, ``"n_heads"``, ``"sentences"``."""
    from .. import pretrained

    shipped = pretrained.load_ablation_sentences()
    n_sentences = positive_int(n_sentences, "n_sentences", minimum=2, maximum=len(shipped), what="sentences")
    model_draws = positive_int(model_draws, "model_draws", minimum=2, maximum=MAX_REPLICATES, what="draws")
    stream = as_seed_sequence(stream, "stream")
    encoder = pretrained.get_encoder()
    sentences = [rec["text"] for rec in shipped][:n_sentences]
    out = trained_attention_neff(encoder.attention_maps(sentences))
    out["model"] = gaussian_model_neff(out["tokens"], encoder.d_k, model_draws, stream)
    out["head_means"] = out["per_sentence"].mean(axis=0)
    out["head_se"] = out["per_sentence"].std(axis=0, ddof=1) / np.sqrt(len(sentences))
    out["local_heads"] = int(np.sum(out["head_means"] + N_SE * out["head_se"] < LOCAL_MAX_FRACTION))
    out.update(d_k=encoder.d_k, n_layers=encoder.n_layers, n_heads=encoder.n_heads, sentences=len(sentences))
    return out


@notebook_helper
def trained_table(trained: dict):
    """The table of section 5: ``n_eff/n`` per layer with its s.e., the lowest and highest head."""
    from ..infra import tables

    m = trained["model"]
    return tables.show(
        {
            "layer": np.arange(1, trained["n_layers"] + 1),
            "n_eff/n": trained["by_layer"],
            "s.e.": trained["by_layer_se"],
            "lowest head": trained["head_means"].min(axis=1),
            "highest head": trained["head_means"].max(axis=1),
        },
        3,
        se={"n_eff/n": "s.e."},
        note=f"all layers: {tables.pm(trained['overall'], trained['overall_se'])}; Gaussian model at the same token "
        f"counts: {tables.pm(m['overall'], m['overall_se'])} (limit {m['limit']:.3f}); "
        f"mean 1/n = {np.mean(1 / trained['tokens']):.3f}",
    )


@notebook_helper
def trained_figure(trained: dict, figures_dir):
    """The figure of section 5: ``n_eff/n`` per head and per layer against the Gaussian model."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    m = trained["model"]
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, 2.5))
    layers = np.arange(1, trained["n_layers"] + 1)
    offsets = np.linspace(-0.3, 0.3, trained["n_heads"])
    for layer in range(trained["n_layers"]):
        ax.errorbar(
            layers[layer] + offsets,
            trained["head_means"][layer],
            yerr=figures.half_width(trained["head_se"][layer]),
            fmt=".",
            color="0.6",
            ms=3,
            lw=0.6,
            label="one head" if layer == 0 else None,
        )
    ax.errorbar(
        layers,
        trained["by_layer"],
        yerr=figures.half_width(trained["by_layer_se"]),
        fmt="o",
        color="C0",
        ms=5,
        label="layer mean (over sentences)",
    )
    ax.axhspan(
        m["overall"] - figures.half_width(m["overall_se"]),
        m["overall"] + figures.half_width(m["overall_se"]),
        color="C1",
        alpha=0.3,
    )
    ax.axhline(m["overall"], color="C1", ls="--", lw=1.2, label="Gaussian model, same token counts")
    ax.axhline(m["limit"], color="C1", ls=":", lw=1, label=r"Gaussian model, $n\to\infty$")
    ax.axhline(LOCAL_MAX_FRACTION, color="k", ls="-.", lw=0.8, label=rf"locality threshold ${LOCAL_MAX_FRACTION:g}$")
    ax.axhline(np.mean(1 / trained["tokens"]), color="C3", ls=(0, (1, 1)), lw=1, label=r"floor $1/n$ (one token)")
    ax.set(
        xlabel="layer of all-MiniLM-L6-v2",
        ylabel=r"$n_{\mathrm{eff}}/n$",
        xticks=layers,
        ylim=(0, 1),
        title=f"trained attention on {trained['sentences']} sentences: effective share of the tokens per query",
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    caption = (
        "Each grey point is one head of the trained encoder, each blue point a layer's mean: the share of the "
        "tokens that carries a query's weight; bars are 2 standard errors over the sentences. Compare them with "
        "the orange dashed line (the Gaussian model of section 3 at the same sentence lengths; its shaded "
        "±2 s.e. band is narrower than the line), the orange dotted line (the same model as n grows) and "
        "the black dash-dotted locality threshold."
    )
    return figures.save(fig, "01_attention_is_nadaraya_watson_trained", figures_dir, caption=caption, error_bars=True)


@notebook_helper
def summary_figure(identity: dict, neff: dict, consistency: dict, figures_dir):
    """The chapter's key figure (three panels): (a) the identity and the Gaussian form, (b) ``n_eff/n``
    against ``d_k``, (c) the large-``n`` limit of the estimate."""
    from ..infra import figures

    floor = 1e-17  # an error of exactly 0 is drawn at this floor on the log scale
    dims = identity["dims"]
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=3.3)
    for label, errs, marker in [
        ("attention vs NW loop", identity["err"], "o"),
        (r"equal norms, Gauss $h=d_k^{1/4}$", identity["gauss"], "s"),
        (r"equal norms, Gauss $h=d_k^{-1/2}$", identity["literal"], "^"),
        (r"unequal norms, Gauss $h=d_k^{1/4}$", identity["unequal"], "v"),
    ]:
        ax_a.plot(dims, [max(errs[d], floor) for d in dims], marker=marker, label=label)
    ax_a.set(
        xscale="log", yscale="log", xlabel=r"$d_k$", ylabel="max abs difference", title="(a) identity, Gaussian form"
    )
    ax_a.set_xticks(dims, [str(d) for d in dims])
    ax_a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    grid = np.geomspace(1, 256, 200)
    ax_b.plot(grid, expected_neff_fraction(grid), color="k", lw=1, label=r"$(1+2/d_k)^{-d_k/2}$")
    ax_b.axhline(np.exp(-1), color="grey", ls="--", lw=0.8, label=r"$e^{-1}$")
    ax_b.errorbar(
        neff["d_k"], neff["mean"], yerr=figures.half_width(neff["se"]), marker="o", linestyle="none", label="measured"
    )
    ax_b.set(
        xscale="log", ylim=(0, 1), xlabel=r"$d_k$", ylabel=r"$n_{\mathrm{eff}}/n$", title="(b) effective sample size"
    )
    ax_b.set_xticks(list(neff["d_k"]), [str(d) for d in neff["d_k"]])
    ax_b.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    c = consistency
    ax_c.errorbar(c["n"], c["mean"], yerr=figures.half_width(c["se"]), marker="o", label="estimate at $q$")
    ax_c.axhline(c["tilted"], color="C1", ls="--", lw=1, label=r"tilted mean $\mathbb{E}\,m(Z)$")
    ax_c.axhline(c["target"], color="C2", ls=":", lw=1, label=r"$m(q)$")
    span = [
        c["tilted"],
        c["target"],
        *(c["mean"] - figures.half_width(c["se"])),
        *(c["mean"] + figures.half_width(c["se"])),
    ]
    pad = 0.15 * (max(span) - min(span))
    ax_c.set(
        xscale="log",
        xlabel=r"sample size $n$",
        ylabel="estimate",
        ylim=(min(span) - pad, max(span) + pad),
        title="(c) the large-$n$ limit",
    )
    ax_c.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)
    caption = (
        "(a) Compare the four curves with rounding error ($10^{-16}$): attention against the NW double loop, "
        "and attention with equal-norm keys against Gaussian NW at the two candidate bandwidths (at $d_k=1$ "
        "they coincide; an exact 0 is drawn at $10^{-17}$). (b) The share of the keys that carries a query's "
        "weight, against the Gaussian theory's curve and its floor $e^{-1}$. (c) The estimate as $n$ grows, "
        "against the two candidate limits, the tilted mean and $m(q)$."
    )
    return figures.save(fig, "01_attention_is_nadaraya_watson", figures_dir, caption=caption, error_bars=True)


@notebook_helper
def decide(identity: dict, neff: dict, consistency: dict, params):
    """The records of parts 1-4 of the chapter, in a new :class:`mhanw.infra.verdicts.Ledger`, decided from
    the sections' numbers (``identity``: ``err``, ``bitwise``, ``gauss``, ``literal``, ``unequal``;
    ``neff``: :func:`neff_by_dimension`; ``consistency``: ``mean``, ``se``, ``tilted``, ``target``), with
    the premises of the two Gaussian limits evaluated on the laws in ``params`` (:func:`neff_premises`).
    :func:`decide_trained` adds part 5."""
    from ..infra.verdicts import Ledger

    ledger = Ledger("01_attention_is_nadaraya_watson")
    ledger.add(identity_verdict(max(identity["err"].values()), identity["bitwise"]))
    ledger.add(gaussian_form_verdict(max(identity["gauss"].values())))
    ledger.add(literal_bandwidth_verdict(identity["literal"]))
    i_min = int(np.argmin(neff["mean"]))
    ledger.add(locality_verdict(neff["mean"][i_min], neff["se"][i_min], int(neff["d_k"][i_min])))
    ledger.add(
        neff_prediction_verdict(
            neff["per_query"], neff["predicted"], neff["d_k"], premises=neff_premises(params["neff_inputs"])
        )
    )
    c = consistency
    for rec in consistency_rules(
        c["mean"][-1], c["se"][-1], c["tilted"], c["target"], premises=neff_premises(params["consistency_inputs"])
    ):
        ledger.add(rec)
    return ledger


def decide_trained(ledger, trained: dict):
    """Add the records of part 5 (``trained``: :func:`trained_attention`) to ``ledger`` and run the guard
    of the paper's sentence on the trained layers (every layer's mean above the locality threshold)."""
    from ..infra.verdicts import guard

    ledger.add(
        trained_model_verdict(
            trained["overall"], trained["overall_se"], trained["model"]["overall"], trained["model"]["overall_se"]
        )
    )
    ledger.add(
        locality_verdict(
            trained["overall"],
            trained["overall_se"],
            trained["d_k"],
            claim="thm-2.1/trained-locality",
            statement="The attention of a trained encoder (all-MiniLM-L6-v2, shipped sentences) is local",
            where="mean over sentences, layers, heads and queries",
        )
    )
    guard(
        layers_above_threshold(trained["by_layer"], trained["by_layer_se"]),
        f"every layer's mean n_eff/n lies more than 3 s.e. above the locality threshold {LOCAL_MAX_FRACTION:g}",
        f"layer means {np.round(trained['by_layer'], 3).tolist()} ± {np.round(trained['by_layer_se'], 3).tolist()}",
    )
    return ledger


def _agreement(err: float) -> str:
    """How close two computations came, in words decided by :data:`IDENTITY_TOL`."""
    return (
        f"to rounding error ({err:.0e})"
        if err <= IDENTITY_TOL
        else f"only to {err:.3g}, more than rounding error ({IDENTITY_TOL:g})"
    )


@notebook_helper
def panel_takeaways(identity: dict, neff: dict, consistency: dict) -> dict[str, str]:
    """What each panel of the summary figure shows, one sentence each, from the sections' numbers
    (arguments as :func:`decide`): ``{"(a)": ..., "(b)": ..., "(c)": ...}`` (Markdown).  The verdicts are
    said in "What we found"; a takeaway says what to read off the panel."""
    from ..infra import tables

    lit = identity["literal"]
    d_lit = max(lit, key=lambda d: lit[d])
    a = (
        f"Attention reproduces the textbook NW loop {_agreement(max(identity['err'].values()))}, and, with keys "
        f"of equal norm, Gaussian NW at $h=d_k^{{1/4}}$ {_agreement(max(identity['gauss'].values()))}; at the "
        f"literal $h=1/\\sqrt{{d_k}}$ it is off by up to {lit[d_lit]:.3g} ($d_k={d_lit}$)."
    )
    k = int(np.argmax(neff["d_k"]))
    low = int(np.argmin(neff["mean"]))
    above = bool(np.all(neff["mean"] - N_SE * neff["se"] > LOCAL_MAX_FRACTION))
    d_range = f"$d_k$ from {int(np.min(neff['d_k']))} to {int(neff['d_k'][k])}"
    b = (
        f"For {d_range}, a query's weight is carried by {np.min(neff['mean']):.2f} to {np.max(neff['mean']):.2f} "
        f"of the keys (at $d_k={int(neff['d_k'][k])}$: {tables.pm(neff['mean'][k], neff['se'][k])}; the theory's "
        f"mean there {neff['expected'][k]:.3f}, its floor $e^{{-1}}\\approx{np.exp(-1):.3f}$): "
        + (
            "every one more than a tenth of the sample by 3 standard errors, nowhere near a vanishing share."
            if above
            else f"at $d_k={int(neff['d_k'][low])}$ it is not more than a tenth of the sample by 3 standard errors."
        )
    )
    c_ = consistency
    mean, se = float(c_["mean"][-1]), float(c_["se"][-1])
    z_tilt, z_m = abs(mean - c_["tilted"]) / se, abs(mean - c_["target"]) / se
    c = (
        f"At $n={int(c_['n'][-1])}$ the estimate is {tables.pm(mean, se)}: {z_tilt:.1f} standard errors from "
        f"the tilted mean {c_['tilted']:.4f} and {z_m:.0f} from $m(q)={c_['target']:.4f}$."
    )
    return {"(a)": a, "(b)": b, "(c)": c}


@notebook_helper
def trained_takeaway(trained: dict) -> str:
    """What the trained-attention figure shows, one sentence (Markdown), from :func:`trained_attention`."""
    from ..infra import tables

    m = trained["model"]
    heads = trained["n_layers"] * trained["n_heads"]
    return (
        f"Trained heads spread a query's weight over {tables.pm(trained['overall'], trained['overall_se'])} of "
        f"the tokens on average, against {tables.pm(m['overall'], m['overall_se'])} for the Gaussian model at "
        f"the same sentence lengths; {trained['local_heads']} of the {heads} heads "
        f"{'lies' if trained['local_heads'] == 1 else 'lie'} below a tenth of the tokens by 3 standard errors."
    )


@notebook_helper
def takeaway(text: str, panel: str = "") -> None:
    """Display one figure's takeaway (of its ``panel``, e.g. ``"(a)"``): ``text``, Markdown, from
    :func:`panel_takeaways` or :func:`trained_takeaway`."""
    from IPython.display import Markdown, display

    head = f"Takeaway {panel}".strip()
    display(Markdown(f"**{head}.** {text}"))


@notebook_helper
def write_outputs(
    ledger, identity: dict, neff: dict, consistency: dict, trained: dict, sizes: dict, params, macros_path, results_path
) -> None:
    """Write the chapter's macros for the paper (``macros_path``) and its raw results (``results_path``)
    from the records of :func:`decide` and the sections' numbers (arguments as there)."""
    from ..infra import prose
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs

    rec = {r.claim.split("/", 1)[1]: r for r in ledger.records}
    macros = Macros("AttnNW")
    for claim, name in [
        ("identity", "Identity"),
        ("gaussian-form", "GaussForm"),
        ("literal-bandwidth", "Literal"),
        ("locality", "Local"),
        ("neff-limit", "NeffLimit"),
        ("tilted-limit", "Tilted"),
        ("consistency", "Consistent"),
        ("trained-vs-gaussian-model", "TrainedModel"),
        ("trained-locality", "TrainedLocal"),
    ]:
        V.verdict_macros(macros, name, rec[claim])
    dims, err = identity["dims"], identity
    off_dims = literal_off_dims(err["literal"])
    macros.number("IdentityMaxErr", max(err["err"].values()), 2)
    macros.number("IdentityTol", IDENTITY_TOL, 1)
    macros.number("GaussMaxErr", max(err["gauss"].values()), 2)
    macros.text("IdentityDims", ", ".join(str(d) for d in dims))
    macros.text("LiteralOffDims", ", ".join(str(d) for d in off_dims) if off_dims else "none")
    macros.number(
        "LiteralMinErr", min(err["literal"][d] for d in off_dims) if off_dims else max(err["literal"].values()), 2
    )
    macros.number("LiteralOff", LITERAL_OFF, 1)
    macros.number("UnequalMinErr", min(err["unequal"].values()), 2)
    macros.integer("NDraws", sizes["n_draws"])
    macros.integer("NeffKeys", sizes["neff_keys"])
    macros.integer("NeffQueries", sizes["neff_queries"])
    i_min = int(np.argmin(neff["mean"]))
    macros.mean_se("NeffDkOne", neff["mean"][0], neff["se"][0])
    macros.integer("NeffDkFirstValue", int(neff["d_k"][0]))
    macros.mean_se("NeffDkMax", neff["mean"][-1], neff["se"][-1])
    macros.integer("NeffDkMaxValue", int(neff["d_k"][-1]))
    macros.mean_se("NeffMin", neff["mean"][i_min], neff["se"][i_min])
    macros.integer("NeffMinDk", int(neff["d_k"][i_min]))
    macros.number("EInverse", np.exp(-1), 3)
    macros.number("LocalMax", LOCAL_MAX_FRACTION, 1)
    limit_rec = rec["neff-limit"]
    dev = limit_rec.statistics[0]
    macros.mean_se("NeffLimitDev", dev.value, dev.se)
    macros.number("NeffLimitTol", limit_rec.tolerance, 2)
    macros.number("NeffLimitDetectable", limit_rec.detectable, 2)
    law = params["neff_inputs"]
    macros.text(
        "NeffLaw",
        "Gaussian queries and keys" if not limit_rec.outside else f"queries and keys drawn from \\texttt{{{law}}}",
    )
    verdict_clause = (
        r"the predicted limit \AttnNWIsNeffLimit{} (\AttnNWVerdictNeffLimit)"
        if limit_rec.outside
        else r"the predicted limit \AttnNWIsNeffLimit"
    )
    macros.text(
        "NeffLimitCheck",
        r"mean deviation of each query from its limit $\exp(-\lVert q\rVert^2/d_k)$ at the "
        r"worst $d_k$: \AttnNWNeffLimitDev{} per cent of the keys; the run detects a deviation above "
        r"\AttnNWNeffLimitDetectable{} and the tolerance is \AttnNWNeffLimitTol{} per cent of the keys; "
        + verdict_clause,
    )
    c = consistency
    macros.number("TiltedLimit", c["tilted"], 4)
    macros.mean_se("GapTilted", c["mean"][-1] - c["tilted"], c["se"][-1])
    macros.number("GapTiltedZ", (c["mean"][-1] - c["tilted"]) / c["se"][-1], 2)
    macros.number("LimitTol", LIMIT_SHARE * abs(c["target"] - c["tilted"]), 2)
    macros.text(
        "TiltedCheck",
        r"it differs from the tilted mean $\AttnNWTiltedLimit$ by \AttnNWGapTilted{} "
        r"($z=\AttnNWGapTiltedZ$; \AttnNWVerdictTilted) and",
    )
    macros.number("SinOne", c["target"], 4)
    macros.integer("NMax", sizes["sample_sizes"][-1])
    macros.integer("NRep", sizes["n_rep"])
    macros.mean_se("EstimateAtNMax", c["mean"][-1], c["se"][-1])
    macros.mean_se("GapTarget", c["mean"][-1] - c["target"], c["se"][-1])
    macros.number("GapTargetSE", abs(c["mean"][-1] - c["target"]) / c["se"][-1], 2)
    t, m = trained, trained["model"]
    gap, gap_se = t["overall"] - m["overall"], float(np.hypot(t["overall_se"], m["overall_se"]))
    macros.integer("TrainedSentences", t["sentences"])
    macros.integer("TrainedTokensMin", int(t["tokens"].min()))
    macros.integer("TrainedTokensMax", int(t["tokens"].max()))
    macros.integer("TrainedDk", t["d_k"])
    macros.mean_se("TrainedNeff", t["overall"], t["overall_se"])
    macros.mean_se("TrainedModelNeff", m["overall"], m["overall_se"])
    macros.number("TrainedModelLimit", m["limit"], 3)
    macros.mean_se("TrainedGap", gap, gap_se)
    macros.number("TrainedGapZ", gap / gap_se, 2)
    macros.text(
        "TrainedDirection",
        direction_word(
            gap, gap_se, below="more concentrated than", above="more spread out than", neither="as spread out as"
        ),
    )
    lo, hi = int(np.argmin(t["by_layer"])), int(np.argmax(t["by_layer"]))
    macros.mean_se("TrainedLayerMin", t["by_layer"][lo], t["by_layer_se"][lo])
    macros.integer("TrainedLayerMinIndex", lo + 1)
    macros.mean_se("TrainedLayerMax", t["by_layer"][hi], t["by_layer_se"][hi])
    macros.integer("TrainedLayerMaxIndex", hi + 1)
    macros.number("TrainedHeadMin", t["head_means"].min(), 2)
    macros.number("TrainedHeadMax", t["head_means"].max(), 2)
    macros.text(
        "TrainedLocalHeads", prose.count_clause(t["local_heads"], t["head_means"].size, "heads", "falls", "fall")
    )
    macros.number("TrainedFloor", np.mean(1 / t["tokens"]), 2)
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros.write(macros_path, argument="macros_path")
    results = {
        "fidelity": params["fidelity"],
        "seed": params["seed"],
        "sizes": sizes,
        "parameters": dict(params),
        "claims": ledger.to_list(),
        "identity_err": err["err"],
        "bitwise_equal": err["bitwise"],
        "gauss_err": err["gauss"],
        "literal_err": err["literal"],
        "unequal_err": err["unequal"],
        "literal_off_dims": off_dims,
        "neff": neff,
        "estimates": {"n": c["n"], "mean": c["mean"], "se": c["se"]},
        "tilted_limit": c["tilted"],
        "m_at_query": c["target"],
        "trained": {
            k: t[k] for k in ("per_sentence", "tokens", "by_layer", "by_layer_se", "overall", "overall_se", "model")
        },
    }
    save_results(results_path, json_safe(results), argument="results_path")
