"""Chapter 01 (Thm 2.1): softmax attention read as a Nadaraya-Watson estimator.

The experiment, as steps (:mod:`mhanw.chapters.base`): a Gaussian NW fit and its weights (:func:`warmup`),
the identity and its Gaussian form against the textbook NW loop (:func:`identity`), the effective sample
size of attention against its Gaussian limit (:func:`locality`), the large-n limit of the estimate
(:func:`consistency`), trained attention against the Gaussian model (:func:`trained`), and the decisions
that no rule of :mod:`mhanw.infra.rules` makes as such (:func:`decisions`).  The theory and the Monte Carlo
drivers are :mod:`mhanw.locality`, the estimators :mod:`mhanw.nw`; the figures and their takeaways are
:mod:`mhanw.chapters.ch01_figures`.  Its records are declared in :data:`CLAIMS`.
"""

from __future__ import annotations

import numpy as np

from ..infra import params as P
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import AtMost, Claim, Decided, NoViolation
from ..infra.verdicts import (
    DERIVATION,
    FAILS,
    HOLDS,
    N_SE,
    PAPER,
    READING,
    combine,
    direction_words,
    guard,
    no_violation,
    no_violation_criterion,
    significant_effect,
    stat,
    within_tolerance,
)
from .base import Context, step

SECTION = "sec:thm21"

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

#: The bandwidths of the warm-up's Nadaraya-Watson fits.
WARMUP_BANDWIDTHS = (0.05, 0.2, 0.5, 1.5)

#: The columns of the identity's table: attention against the NW loop, and attention with equal-norm keys
#: against Gaussian NW at the two candidate bandwidths, and with the keys' norms as drawn.
IDENTITY_COLUMNS = (
    "attention - NW loop",
    "Gaussian h = d_k^(1/4)",
    "literal h = d_k^(-1/2)",
    "unequal norms, h = d_k^(1/4)",
)

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

#: Monte Carlo sizes by fidelity: ``n_draws`` random draws of the identity, ``neff_keys`` keys and
#: ``neff_queries`` queries of the locality check, ``sample_sizes`` (unless the parameter sets them) and
#: ``n_rep`` replicates of the consistency check, ``model_draws`` Gaussian-model draws per sentence.
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
#: The random streams: the identity's draws, the locality check, the consistency check, the warm-up's
#: sample, the Gaussian model of trained attention.
STREAMS = ("identity", "locality", "consistency", "warmup", "trained")


def _premises(inputs: str) -> tuple:
    """What the n_eff limit and the tilted-mean limit rest on: queries and keys iid ``N(0, I)``."""
    from .. import data, premises

    return (premises.gaussian_inputs(data.data_model("0", inputs=inputs)),)


# --------------------------------------------------------------------------- the steps


@step
def warmup(ctx: Context) -> dict:
    """Part 0: 60 noisy points of ``sin 2x``, their Gaussian NW fits on a grid at the bandwidths
    :data:`WARMUP_BANDWIDTHS`, and the largest difference between the fits and softmax attention with a
    per-key bias (query ``[q, 1]``, key ``[k, -k^2/2]``, inverse temperature ``1/h^2``)."""
    from .. import nw

    rng = ctx.rng("warmup")
    x = np.sort(rng.uniform(-3, 3, 60))
    y = np.sin(2 * x) + 0.3 * rng.standard_normal(60)
    grid = np.linspace(-3, 3, 241)
    fits = np.array([nw.nadaraya_watson(grid[:, None], x[:, None], y, bandwidth=h) for h in WARMUP_BANDWIDTHS])
    q_aug, k_aug = np.c_[grid, np.ones_like(grid)], np.c_[x, -(x**2) / 2]
    biased = np.array([nw.softmax_attention(q_aug, k_aug, y, scale=1 / h**2) for h in WARMUP_BANDWIDTHS])
    return {
        "bandwidths": list(WARMUP_BANDWIDTHS),
        "attention_gap": float(np.abs(biased - fits).max()),
        "data": Raw({"x": x, "y": y, "grid": grid, "fits": fits}),
    }


@step
def identity(ctx: Context) -> dict:
    """Parts 1-2: ``n_draws`` draws of 7 queries, 50 keys (``d_k`` of ``identity_dims``) and 50 values of
    dimension 3; the largest difference over the draws, per ``d_k``, between attention and the NW double
    loop, and between attention with keys of norm ``sqrt(d_k)`` and Gaussian NW at ``h = d_k^(1/4)``, at
    the literal ``h = d_k^(-1/2)``, and with the keys as drawn; whether exponential-kernel NW is
    bit-identical to attention."""
    import pandas as pd

    from .. import nw

    dims = list(ctx.params.identity_dims)
    rng = ctx.rng("identity")
    draws = [
        {d: (rng.standard_normal((7, d)), rng.standard_normal((50, d)), rng.standard_normal((50, 3))) for d in dims}
        for _ in range(ctx.sizes["n_draws"])
    ]

    def largest(left, right):
        return [max(float(np.abs(left(*dr[d], d) - right(*dr[d], d)).max()) for dr in draws) for d in dims]

    def equal_norm(K, d):
        return K / np.linalg.norm(K, axis=1, keepdims=True) * np.sqrt(d)

    def attention(Q, K, V, d):
        return nw.softmax_attention(Q, K, V)

    def attention_equal(Q, K, V, d):
        return nw.softmax_attention(Q, equal_norm(K, d), V)

    def gauss_equal(power):
        return lambda Q, K, V, d: nw.nadaraya_watson(Q, equal_norm(K, d), V, bandwidth=d**power)

    loop = largest(
        attention, lambda Q, K, V, d: nw.nadaraya_watson_loop(Q, K, V, lambda q, k: np.exp(q @ k / np.sqrt(d)))
    )
    gauss = largest(attention_equal, gauss_equal(0.25))
    literal = largest(attention_equal, gauss_equal(-0.5))
    unequal = largest(attention, lambda Q, K, V, d: nw.nadaraya_watson(Q, K, V, bandwidth=d**0.25))
    bitwise = all(
        np.array_equal(
            nw.softmax_attention(*dr[d]), nw.nadaraya_watson(*dr[d], bandwidth=np.sqrt(d), kernel="exponential")
        )
        for dr in draws
        for d in dims
    )
    table = pd.DataFrame({"d_k": dims, **dict(zip(IDENTITY_COLUMNS, (loop, gauss, literal, unequal)))})
    off = sorted(d for d, e in zip(dims, literal) if e >= LITERAL_OFF)
    return {
        "table": table,
        "dims": dims,
        "dims_text": ", ".join(str(d) for d in dims),
        "n_draws": ctx.sizes["n_draws"],
        "bitwise": bitwise,
        "max_err": Q(max(loop), digits=2, label="largest |attention - NW loop|"),
        "tol": Q(IDENTITY_TOL, digits=1),
        "gauss_max_err": Q(max(gauss), digits=2, label="largest |attention - Gaussian NW|"),
        "literal_off": Q(LITERAL_OFF, digits=1),
        "literal_off_dims": off,
        "literal_off_text": ", ".join(str(d) for d in off) if off else "none",
        "literal_min_err": Q(min(e for d, e in zip(dims, literal) if d in off) if off else max(literal), digits=2),
        "unequal_min_err": Q(min(unequal), digits=2),
        "data": Raw({"draws": draws}),
    }


@step
def locality(ctx: Context) -> dict:
    """Part 3: ``n_eff/n`` of attention with queries and keys from ``neff_inputs`` at every ``d_k`` of
    ``neff_dims`` (:func:`mhanw.locality.neff_by_dimension`), each query against its own limit
    ``exp(-|q|^2/d_k)``: the paired deviation in per cent of the keys, with its s.e. over the queries."""
    import pandas as pd

    from ..locality import neff_by_dimension

    p, sizes = ctx.params, ctx.sizes
    neff = neff_by_dimension(
        p.neff_dims, sizes["neff_keys"], sizes["neff_queries"], ctx.streams["locality"], inputs=p.neff_inputs
    )
    diff = 100.0 * (neff["per_query"] - neff["predicted"])  # per cent of the keys, paired by query
    dev, dev_se = diff.mean(axis=1), diff.std(axis=1, ddof=1) / np.sqrt(diff.shape[1])
    worst, low = int(np.argmax(np.abs(dev))), int(np.argmin(neff["mean"]))
    d_k = [int(d) for d in neff["d_k"]]
    table = pd.DataFrame(
        {
            "d_k": d_k,
            "n_eff/n": neff["mean"],
            "s.e.": neff["se"],
            "its limit, same queries": neff["predicted"].mean(axis=1),
            "n_eff/n - limit (% of keys)": dev,
            "paired s.e.": dev_se,
            "limit, all queries (1+2/d_k)^(-d_k/2)": neff["expected"],
        }
    )

    def at(i):
        return {"neff": Q(neff["mean"][i], neff["se"][i]), "d_k": d_k[i]}

    return {
        "table": table,
        "neff": neff,
        "n_keys": sizes["neff_keys"],
        "n_queries": sizes["neff_queries"],
        "first": at(0),
        "last": at(-1),
        "min": at(low),
        "e_inverse": Q(np.exp(-1), digits=3),
        "local_max": Q(LOCAL_MAX_FRACTION, digits=1),
        "deviation": dev,
        "deviation_se": dev_se,
        "worst": Q(
            dev[worst],
            dev_se[worst],
            unit=NEFF_UNIT,
            label=f"largest mean deviation (measured - limit) (d_k = {d_k[worst]})",
        ),
        "worst_d_k": d_k[worst],
        "detectable": Q(float(np.max(N_SE * dev_se)), digits=2),
        "tolerance": Q(NEFF_TOL_PCT, digits=2),
        "premises": _premises(p.neff_inputs),
    }


@step
def consistency(ctx: Context) -> dict:
    """Part 4: the attention estimate at ``consistency_query`` with inverse temperature ``beta`` for growing
    ``n`` (:func:`mhanw.locality.exp_kernel_estimates`, common random numbers across sizes), against the
    two candidate limits: the tilted mean ``E m(Z)``, ``Z ~ N(beta q, 1)``, and ``m(q)``."""
    import pandas as pd

    from .. import data
    from ..infra.estimates import Estimate
    from ..locality import exp_kernel_estimates, tilted_mean

    p = ctx.params
    sizes = sorted(p.sample_sizes) if p.sample_sizes is not None else list(ctx.sizes["sample_sizes"])
    model = data.data_model(p.consistency_regression, inputs=p.consistency_inputs, sigma=p.sigma)
    est = exp_kernel_estimates(
        sizes, ctx.sizes["n_rep"], ctx.streams["consistency"], model, query=p.consistency_query, beta=p.beta
    )
    mean, se = Estimate.from_samples(est)  # over replicates, per sample size
    tilted = tilted_mean(model.regression, p.consistency_query, p.beta)
    target = float(model.regression(np.array([[p.consistency_query]]))[0])
    gap = mean[-1] - target
    return {
        "table": pd.DataFrame({"n": sizes, "estimate at q": mean, "s.e.": se}),
        "n": sizes,
        "mean": mean,
        "se": se,
        "n_max": int(sizes[-1]),
        "n_rep": ctx.sizes["n_rep"],
        "tilted": Q(tilted, digits=4),
        "target": Q(target, digits=4),
        "estimate": Q(mean[-1], se[-1]),
        "gap_tilted": Q(mean[-1] - tilted, se[-1], unit=LIMIT_UNIT, label="estimate - tilted mean"),
        "gap_target": Q(gap, se[-1], unit=LIMIT_UNIT, label="estimate - m(q)"),
        "gap_target_se": Q(abs(gap) / se[-1], digits=2),
        "tolerance": Q(LIMIT_SHARE * abs(target - tilted), digits=2),
        "premises": _premises(p.consistency_inputs),
    }


@step
def trained(ctx: Context) -> dict:
    """Part 5: ``n_eff/n`` of every head of all-MiniLM-L6-v2 on the first ``trained_sentences`` shipped
    sentences (:func:`mhanw.locality.trained_attention_neff`; standard errors over sentences) and the
    Gaussian model at the same token counts (:func:`mhanw.locality.gaussian_model_neff`)."""
    import pandas as pd

    from .. import pretrained
    from ..locality import gaussian_model_neff, trained_attention_neff

    encoder = pretrained.get_encoder()
    sentences = [rec["text"] for rec in pretrained.load_ablation_sentences()][: ctx.params.trained_sentences]
    t = trained_attention_neff(encoder.attention_maps(sentences))
    model = gaussian_model_neff(t["tokens"], encoder.d_k, ctx.sizes["model_draws"], ctx.streams["trained"])
    heads = t["per_sentence"].mean(axis=0)
    heads_se = t["per_sentence"].std(axis=0, ddof=1) / np.sqrt(len(sentences))
    by_layer, by_layer_se = t["by_layer"], t["by_layer_se"]
    gap, gap_se = t["overall"] - model["overall"], float(np.hypot(t["overall_se"], model["overall_se"]))
    lo, hi = int(np.argmin(by_layer)), int(np.argmax(by_layer))
    return {
        "table": pd.DataFrame(
            {
                "layer": np.arange(1, encoder.n_layers + 1),
                "n_eff/n": by_layer,
                "s.e.": by_layer_se,
                "lowest head": heads.min(axis=1),
                "highest head": heads.max(axis=1),
            }
        ),
        "per_sentence": t["per_sentence"],
        "tokens": t["tokens"],
        "by_layer": by_layer,
        "by_layer_se": by_layer_se,
        "head_means": heads,
        "head_se": heads_se,
        "sentences": len(sentences),
        "tokens_min": int(t["tokens"].min()),
        "tokens_max": int(t["tokens"].max()),
        "d_k": encoder.d_k,
        "n_layers": encoder.n_layers,
        "n_heads": encoder.n_heads,
        "overall": Q(t["overall"], t["overall_se"], label="trained n_eff/n"),
        "model": {
            "overall": Q(model["overall"], model["overall_se"], label="model n_eff/n"),
            "limit": Q(model["limit"], digits=3),
            "per_sentence": model["per_sentence"],
            "per_sentence_se": model["per_sentence_se"],
        },
        "gap": Q(gap, gap_se),
        "gap_pct": Q(100 * gap, 100 * gap_se, unit=NEFF_UNIT, label="trained - model"),
        "layer_min": {"neff": Q(by_layer[lo], by_layer_se[lo]), "index": lo + 1},
        "layer_max": {"neff": Q(by_layer[hi], by_layer_se[hi]), "index": hi + 1},
        "head_min": Q(heads.min(), digits=2),
        "head_max": Q(heads.max(), digits=2),
        "local_heads": int(np.sum(heads + N_SE * heads_se < LOCAL_MAX_FRACTION)),
        "layers_above": bool(np.all(by_layer - N_SE * by_layer_se > LOCAL_MAX_FRACTION)),
        "floor": Q(np.mean(1 / t["tokens"]), digits=2),
    }


def _decision(verdict: str, criterion: str, *statistics, detectable=None, tolerance=None, unit="") -> dict:
    """A decision for :class:`mhanw.infra.rules.Decided`: the verdict, its rule in words and its statistics."""
    return {
        "verdict": verdict,
        "criterion": criterion,
        "statistics": statistics,
        "detectable": detectable,
        "tolerance": tolerance,
        "unit": unit,
    }


def _local(q: Q, where: str, d_k: int) -> dict:
    """Locality: n_eff/n (``q``, the ``where`` at ``d_k``) 3 s.e. below :data:`LOCAL_MAX_FRACTION` holds,
    3 s.e. above it fails."""
    return _decision(
        significant_effect(q.value - LOCAL_MAX_FRACTION, q.se, sign=-1),
        f"{where} of n_eff/n against {LOCAL_MAX_FRACTION:g} (a tenth of the keys is not a neighbourhood): "
        "fails when 3 s.e. above it, holds when 3 s.e. below",
        stat(f"n_eff/n ({where}, d_k = {d_k})", q.value, q.se),
    )


@step
def decisions(ctx: Context, identity, locality, consistency, trained) -> dict:
    """The decisions of the records that no rule of :mod:`mhanw.infra.rules` makes as such: the identity
    (to rounding *and* bit-identical), the literal bandwidth (off at some d_k, naming them), locality
    against a threshold, the n_eff limit at every d_k, and the two limits of the estimate, whose tolerance
    is a share of the gap between the candidates."""
    verdict, detectable = (
        within_tolerance(identity["max_err"].value, IDENTITY_TOL) if identity["bitwise"] else (FAILS, None)
    )
    dims, off = identity["dims"], list(identity["literal_off_dims"])
    literal = dict(zip(dims, identity["table"][IDENTITY_COLUMNS[2]]))
    shown = sorted(off or literal, key=lambda d: -literal[d])[: len(off) or 1]
    note = " (at d_k = 1 the bandwidths d_k^(-1/2) and d_k^(1/4) coincide, so d_k = 1 cannot separate them)"
    tol, dev, dev_se = consistency["tolerance"].value, locality["deviation"], locality["deviation_se"]
    limits = {}
    for key, q, what in (
        (
            "tilted_limit",
            consistency["gap_tilted"],
            "the tilted mean, the tolerance {:g} of the gap between the tilted mean and m(q)",
        ),
        ("consistency", consistency["gap_target"], "m(q), the tolerance {:g} of the gap between the candidate limits"),
    ):
        v, det = no_violation(q.value, q.se, tol)
        criterion = f"estimate at the largest n minus {what.format(LIMIT_SHARE)}: {no_violation_criterion(tol, unit=LIMIT_UNIT)}"
        limits[key] = _decision(v, criterion, q, detectable=det, tolerance=tol, unit=LIMIT_UNIT)
    return {
        "identity": _decision(
            verdict,
            f"largest difference from the NW double loop at most {IDENTITY_TOL:g} (rounding) and the library's "
            "exponential-kernel NW bit-identical to its attention",
            identity["max_err"],
            detectable=detectable,
        ),
        "literal": _decision(
            FAILS if off else HOLDS,
            f"fails at a d_k where attention and Gaussian NW at h = d_k^(-1/2) differ by at least {LITERAL_OFF:g} "
            f"(values of order 1): the d_k where it is off are {off}{note if 1 in dims else ''}",
            *(Q(literal[d], label=f"largest difference (d_k = {d})") for d in shown),
            detectable=None if off else LITERAL_OFF,
        ),
        "locality": _local(locality["min"]["neff"], "the smallest mean over d_k", locality["min"]["d_k"]),
        "neff_limit": _decision(
            combine(no_violation(e, s, NEFF_TOL_PCT)[0] for e, s in zip(dev, dev_se)),
            f"at every d_k, the mean over queries of (measured - limit at that query), in {NEFF_UNIT}: "
            f"{no_violation_criterion(NEFF_TOL_PCT, unit=NEFF_UNIT)}; the claim holds when it holds at every d_k "
            "and fails when it fails at one",
            locality["worst"],
            detectable=locality["detectable"].value,
            tolerance=NEFF_TOL_PCT,
            unit=NEFF_UNIT,
        ),
        **limits,
        "trained_locality": _local(
            trained["overall"], "mean over sentences, layers, heads and queries", trained["d_k"]
        ),
    }


STEPS = (warmup, identity, locality, consistency, trained, decisions)

# --------------------------------------------------------------------------- the records


def _neff_finding(results: Results, verdict: str) -> str:
    """How far from zero the worst mean deviation of n_eff/n from its limit is, against the tolerance."""
    q, d = results.at("locality.worst"), results.at("locality.worst_d_k")
    z = abs(q.value) / q.se if q.se > 0 else np.inf
    resolved = "so the run resolves it" if z > N_SE else "not resolved by the run"
    return (
        f"the largest mean deviation of n_eff/n from its limit (d_k = {d}) is {q.value:+.2f} ± {q.se:.2f}"
        f"{NEFF_UNIT}: {z:.1f} s.e. from zero, {resolved}; the tolerance is {NEFF_TOL_PCT:g}{NEFF_UNIT}"
    )


CLAIMS = (
    Claim(
        "thm-2.1/identity",
        "Softmax attention equals Nadaraya-Watson regression with the kernel exp(q.k/sqrt(d_k))",
        Decided("decisions.identity"),
        role=PAPER,
    ),
    Claim(
        "thm-2.1/gaussian-form",
        "With keys of equal norm, attention is Gaussian-kernel NW with bandwidth d_k^(1/4)",
        AtMost("identity.gauss_max_err", IDENTITY_TOL, "rounding, at every d_k tried"),
        role=DERIVATION,
    ),
    Claim(
        "thm-2.1/literal-bandwidth",
        "Attention is Gaussian NW with bandwidth h = 1/sqrt(d_k)",
        Decided("decisions.literal"),
        role=READING,
    ),
    Claim(
        "thm-2.1/locality",
        "Softmax attention with beta = 1/sqrt(d_k) is a local smoother (a vanishing share of the keys carries "
        "the weight)",
        Decided("decisions.locality"),
        role=READING,
    ),
    Claim(
        "thm-2.1/neff-limit",
        "With Gaussian queries and keys, n_eff/n of attention is exp(-|q|^2/d_k) at each query, with mean "
        "(1 + 2/d_k)^(-d_k/2), which decreases to e^-1 and not to 0",
        Decided("decisions.neff_limit"),
        role=DERIVATION,
        premises="locality.premises",
        finding=_neff_finding,
    ),
    Claim(
        "thm-2.1/tilted-limit",
        "With beta fixed, the exponential-kernel estimate converges to the tilted mean E m(Z), Z ~ N(beta q, I)",
        Decided("decisions.tilted_limit"),
        role=DERIVATION,
        premises="consistency.premises",
    ),
    Claim(
        "thm-2.1/consistency",
        "With beta fixed, the exponential-kernel estimate is consistent for m(q)",
        Decided("decisions.consistency"),
        role=READING,
    ),
    Claim(
        "thm-2.1/trained-vs-gaussian-model",
        "The Gaussian model (q, k ~ N(0, I), beta = 1/sqrt(d_k)) predicts how far trained attention spreads "
        "its weight (n_eff/n at the sentences' token counts)",
        NoViolation(
            "trained.gap_pct",
            NEFF_TOL_PCT,
            what="mean n_eff/n of all-MiniLM-L6-v2 over sentences, layers, heads and queries minus the model's, "
            f"in {NEFF_UNIT}",
            why="below a twentieth of the keys the model and trained attention spread their weight alike for "
            "every practical purpose",
        ),
        role=DERIVATION,
        also=("trained.overall", "trained.model.overall"),
    ),
    Claim(
        "thm-2.1/trained-locality",
        "The attention of a trained encoder (all-MiniLM-L6-v2, shipped sentences) is local",
        Decided("decisions.trained_locality"),
        role=READING,
    ),
)


def prose(results: Results, records) -> dict:
    """The section's words decided by the numbers: the law of the locality check and the n_eff limit's
    verdict (with its failed premise when outside its conditions), the direction of trained attention
    against the model (3 s.e.), and how many heads fall below the locality threshold.  Stops
    (:func:`mhanw.infra.verdicts.guard`) when a layer's mean does not lie 3 s.e. above the threshold, which
    the section says."""
    from ..infra.prose import count_clause
    from ..infra.texout import tex_escape, tex_text
    from ..infra.verdicts import predicate, verdict_words

    limit = next(r for r in records if r.claim == "thm-2.1/neff-limit")
    t = results["trained"]
    guard(
        t["layers_above"],
        f"every layer's mean n_eff/n lies more than 3 s.e. above the locality threshold {LOCAL_MAX_FRACTION:g}",
        f"layer means {np.round(t['by_layer'], 3).tolist()} ± {np.round(t['by_layer_se'], 3).tolist()}",
    )
    law = results.at("params.neff_inputs")
    words = tex_text(predicate(limit.verdict))
    return {
        "neff_law": Tex(f"queries and keys drawn from \\texttt{{{tex_escape(law)}}}")
        if limit.outside
        else "Gaussian queries and keys",
        "neff_limit": Tex(f"{words} ({tex_text(verdict_words(limit))})" if limit.outside else words),
        "trained_direction": Tex(
            direction_words(
                t["gap"].value,
                t["gap"].se,
                positive="more spread out than",
                negative="more concentrated than",
                neither="as spread out as",
            )
        ),
        "trained_local_heads": count_clause(t["local_heads"], t["head_means"].size, "heads", "falls", "fall"),
    }
