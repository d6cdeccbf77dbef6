"""Chapter 04: the Head Diversity Index, and the integrated MSE against it (the index; Thm 4.2).

The experiment, as steps (:mod:`mhanw.chapters.base`): the three normalizations of the index on five kinds of
heads and the numbers of the index figure (:func:`index`); the IMSE along the isoclinic pair and star families
(:func:`pair`, :func:`star`); the covariance of two orthogonal heads, where the affine bound leaves it no room
(:func:`affine`); two configurations of equal HDI and one of a higher HDI (:func:`equal`); random configurations
(:func:`random`) and random configurations at matched HDI (:func:`matched`); plain softmax attention along the
pair family (:func:`attention`); and the decisions that read several experiments at once (:func:`verdicts`).

The configurations and the statistics of their comparisons are :mod:`mhanw.comparisons`; the figures, tables,
captions, findings and the names the text gives things :mod:`mhanw.chapters.ch04_figures`.  The records are
declared in :data:`CLAIMS`; those that can only be refuted, and those whose rule reads a power condition, are
decided in the steps (the ``*_decision`` functions) and read with ``Decided``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm, poisson

from .. import comparisons as C
from .. import data, heads, montecarlo
from ..comparisons import isotropic_premises, random_configuration_imse, rank_correlation, rule_options  # noqa: F401
from ..constants import IMSE_RESOLUTION_PCT, N_SE
from ..diversity import haar_expected_hdi, hdi_upper_bound, head_diversity_index
from ..infra import params as P
from ..infra.estimates import Estimate
from ..infra.premises import merge
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import Above, All, AtMost, Claim, Decided, Effect
from ..infra.texout import tex_text
from ..infra.verdicts import (
    CONTROL,
    DERIVATION,
    FAILS,
    HOLDS_UNDER,
    PAPER,
    READING,
    UNDECIDED,
    combine,
    deciding_entry,
    guard,
    power_verdict,
    within_tolerance,
)
from . import ch04_figures as figs
from .base import Context, step

# the names the text gives things (also read here by chapters 05 and 10 and by the ledger)
from .ch04_figures import HEAD_TYPE_NAMES, REGRESSION_LABELS, regression_label, takeaway  # noqa: F401

SECTION = "sec:hdi"

#: Exact quantities (an index of fixed matrices) differ from their formula by rounding only: a few
#: hundred ulps of 1 at the matrix sizes used (d up to 768), far below any difference the text reads.
EXACT_TOL = 1e-9

#: Two-sided tail probability of the 3-s.e. rule (N_SE = 3): the size of every test of this chapter.
P_3SE = float(2.0 * norm.sf(N_SE))

#: The size of a rise of the IMSE that matters for the monotonicity claims, in per cent of the IMSE it
#: rises from (:data:`mhanw.constants.IMSE_RESOLUTION_PCT`): a "holds" from "no significant rise" needs
#: the run to see a rise this large (3 s.e. below it).
RISE_TOL_PCT = IMSE_RESOLUTION_PCT

#: The Poisson tail beyond which a count of violations is more than chance (0.1 %: a false alarm of the
#: whole family of pairs about as rare as one 3-s.e. false alarm).
CHANCE_LEVEL = 1e-3

#: (d, H, d_k) of three real layers, for the table of the three indices (the first is the paper's table).
SHAPES = ((512, 8, 64), (768, 12, 64), (64, 8, 8))

#: The data and random-configuration parameters that chapters 04 and 05 share (the same experiment).
SHARED_PARAMETERS = {
    "inputs": P.inputs(),
    "noise": P.noise(),
    "sigma": P.noise_level(),
    "n": P.positive_int(2, 50_000, why="100 times the default 500"),
    "bandwidth": P.bandwidth(),
    "random_n": P.positive_int(2, 40_000, why="100 times the default 400"),
    "random_bandwidth": P.bandwidth(),
    "random_d": P.positive_int(2, 1024, why="a model dimension, 170 times the default 6"),
    "random_d_k": P.positive_int(1, 1024, at_most="random_d", why="a model dimension"),
    "random_H": P.positive_int(2, 1024, why="a model dimension's worth of heads"),
    "random_rule": P.choice(*heads.RULES),
}

#: The chapter's parameters.  The isoclinic families fix their own shapes (pair: d = 4, d_k = 2, H = 2;
#: star: d = 10, d_k = 2, H = 4).
PARAMETERS = {
    **P.STANDARD,
    "n_jobs": P.workers(),
    "isotropic_regressions": P.sequence(P.regression(dimension=4), length=2),
    "anisotropic_regression": P.regression(dimension=4),
    "random_regression": P.regression(dimension="random_d"),
    **SHARED_PARAMETERS,
    "matched_targets": P.sequence(P.probability(open_ends=True)),
    "matched_configs": P.positive_int(2, 800, why="100 times the default 8"),
    "matched_kernel": P.choice(*heads.KERNELS),
}
CONSTRAINTS = (P.product_at_most(("random_H", "random_d_k"), "random_d"),)

#: The Monte Carlo sizes at each fidelity: angle steps (deg) and replicates of the pair, star and
#: plain-attention families, replicates of the equal-HDI, random, matched-HDI and covariance experiments,
#: random configurations, Haar draws per H, test points per replicate, fixed points of the covariance.
_SIZE_NAMES = (
    *("step_deg", "pair_rep", "star_deg", "star_rep", "equal_rep", "n_configs", "random_rep"),
    *("attn_deg", "attn_rep", "haar_draws", "n_test", "cov_rep", "cov_points", "matched_rep"),
)
SIZES = {
    "quick": dict(zip(_SIZE_NAMES, (15, 80, 30, 50, 500, 12, 100, 30, 60, 10, 200, 100, 40, 150))),
    "paper": dict(zip(_SIZE_NAMES, (7.5, 400, 15, 200, 1600, 24, 600, 15, 200, 40, 300, 400, 40, 500))),
}

#: The random streams, one per experiment, in spawn order: the table's random heads, the Haar draws of
#: the index figure, the pair and star families, the equal-HDI configurations, the random configurations,
#: plain attention, the covariance of the affine bound, the matched-HDI configurations.
STREAMS = ("table", "haar", "pair", "star", "equal", "random", "attention", "affine", "matched")


def model_of(ctx: Context, regression):
    """The data model of the regression function ``regression`` with the run's inputs, noise and sigma."""
    p = ctx.params
    return data.data_model(regression, p.inputs, p.noise, p.sigma)


def _fresh(ctx: Context, stream: str) -> np.random.SeedSequence:
    """The named stream as it was spawned (a copy: spawning children from it does not advance the run's)."""
    s = ctx.streams[stream]
    return np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key, pool_size=s.pool_size)


def _imse(ctx: Context, configs, model, seed, n_rep: int, n_test: int, n: int | None = None, **kw):
    """:func:`mhanw.montecarlo.integrated_mse` with the run's workers (and the run's ``n`` unless given)."""
    p = ctx.params
    return montecarlo.integrated_mse(
        configs, model, n=n or p.n, n_test=n_test, n_rep=n_rep, seed=seed, n_jobs=p.n_jobs, **kw
    )


def _iso(ctx: Context) -> dict:
    """``{role: regression}`` of the two isotropic m (``iso1``, ``iso2``)."""
    return dict(zip(("iso1", "iso2"), ctx.params.isotropic_regressions))


def _decision(criterion: str, *statistics, **fields) -> dict:
    """A decision made in a step (``fields``: its ``verdict``, ...), read by :class:`mhanw.infra.rules.Decided`."""
    return {"criterion": criterion, "statistics": statistics, **fields}


def _rise(verdict: str, max_se_pct: float) -> dict:
    """A holds from "no significant rise" kept only when 3 s.e. of the rise is below :data:`RISE_TOL_PCT`."""
    detectable = N_SE * max_se_pct
    return dict(
        verdict=power_verdict(verdict, detectable, RISE_TOL_PCT),
        detectable=detectable,
        tolerance=RISE_TOL_PCT,
        unit="%",
    )


# --------------------------------------------------------------------------- the index


@step
def index(ctx: Context) -> dict:
    """Parts 1-2: the three normalizations on the five kinds of heads at :data:`SHAPES` with their analytic
    values, the exact checks of the printed index and of HDI_PA, and Haar-random heads in R^64 against the
    frame bound (panel (c) of the index figure)."""
    rng = ctx.rng("table")
    table = {s: C.normalization_table(*s, rng) for s in SHAPES}
    t0, d_k = table[SHAPES[0]], SHAPES[0][2]
    printed = {f"{HEAD_TYPE_NAMES[k]}, (d, H, d_k) = {s}": v["paper"] for s in SHAPES for k, v in table[s].items()}
    low, high = min(printed, key=printed.get), max(printed, key=printed.get)
    doubled = t0["identical_x2"]["paper"] - t0["identical"]["paper"]
    pa = {k: v["principal_angles"] for k, v in t0.items()}
    deviation = {
        "identical": abs(pa["identical"]),
        "orthogonal": abs(pa["orthogonal"] - 1),
        "range": max(max(-v, v - 1, 0.0) for v in pa.values()),
        "scale": abs(pa["identical_x2"] - pa["identical"]),
    }
    worst = max(deviation, key=deviation.get)

    d, dk, H, rng = 64, 8, np.arange(2, 25), ctx.rng("haar")
    draws = np.array(
        [[head_diversity_index(heads.haar_heads(d, dk, h, rng)) for _ in range(ctx.sizes["haar_draws"])] for h in H]
    )
    haar = Estimate.from_samples(draws)
    bound = np.array([hdi_upper_bound(d, dk, h) for h in H])
    at16 = int(np.flatnonzero(H == 16)[0])
    return {
        "all": [
            {"shape": list(s), "values": table[s], "predicted": C.normalization_predictions(s[0], s[2])} for s in SHAPES
        ],
        "table": {k: {n: Q(round(x, 12) + 0.0, digits=4) for n, x in v.items()} for k, v in t0.items()},
        "predicted": {
            k: {n: Q(x, digits=4) for n, x in v.items()}
            for k, v in C.normalization_predictions(SHAPES[0][0], d_k).items()
        },
        "d_k": Q(d_k, digits=2),
        "exact_tol": Q(EXACT_TOL, digits=1),
        "printed_identical": Q(t0["identical"]["paper"], label="printed HDI of identical heads"),
        "printed_min": Q(printed[low], label=f"smallest ({low})"),
        "printed_max": Q(printed[high], label=f"largest ({high})"),
        "printed_scale": scale_decision(doubled),
        "pa_deviation": Q(deviation[worst], label=f"largest deviation ({worst})"),
        "haar": {"d": d, "d_k": dk, "H": H, "mean": haar.mean, "se": haar.se, "bound": bound},
        "haar_max_z": Q(float(np.max(np.abs(haar.mean - haar_expected_hdi(d, dk)) / haar.se)), digits=2),
        "haar_excess": float((draws - bound[:, None]).max()),
        "bound16": Q(bound[at16], digits=3),
        "haar16": Q(haar.mean[at16], haar.se[at16]),
    }


# --------------------------------------------------------------------------- the isoclinic families


def _family(ctx: Context, stream: str, cfgs: list, deg, n_rep: int, step_deg) -> dict:
    """The IMSE along one isoclinic family for the two isotropic m and the anisotropic one (the same
    replicates for all three), each summarised (:func:`mhanw.comparisons.family_summary`); for the second
    isotropic m also the changes from 0 to 60 degrees and from 60 to 90."""
    p = ctx.params
    roles = {**_iso(ctx), "aniso": p.anisotropic_regression}
    out: dict = {
        "deg": deg,
        "hdi": np.array([head_diversity_index(W) for W in cfgs]),
        "step_deg": Q(step_deg, digits=2),
    }
    results = {}
    for role, m in roles.items():
        model, n_test = model_of(ctx, m), ctx.sizes["n_test"]
        res = results[role] = _imse(ctx, cfgs, model, ctx.streams[stream], n_rep, n_test, bandwidth=p.bandwidth)
        s = C.family_summary(res)
        out[role] = {"m": m, "summary": s, "change": Q(100 * s["rel"][-1], 100 * s["rel_se"][-1], unit="%")}
    out["aniso"]["z"] = Q(out["aniso"]["summary"]["z"][-1], digits=3)
    i60 = int(np.flatnonzero(deg == 60)[0])
    first, last = results["iso2"].relative_to(0), results["iso2"].relative_to(i60)
    out["iso2"]["to60"] = Q(100 * first.mean[i60], 100 * first.se[i60], unit="%")
    out["iso2"]["after60"] = Q(100 * last.mean[-1], 100 * last.se[-1], unit="%")
    out["data"] = Raw({"configs": cfgs, "results": results, "models": {r: model_of(ctx, m) for r, m in roles.items()}})
    return out


@step
def pair(ctx: Context) -> dict:
    """Part 3: the pair family pair(theta) (H = 2, d = 4, d_k = 2), HDI_PA = sin^2(theta)."""
    deg = np.arange(0, 90 + 1e-9, ctx.sizes["step_deg"])
    cfgs = [heads.pair_heads(np.radians(t), 4, 2) for t in deg]
    return _family(ctx, "pair", cfgs, deg, ctx.sizes["pair_rep"], ctx.sizes["step_deg"])


@step
def star(ctx: Context) -> dict:
    """Part 3: the star family (H = 4, d = 10, d_k = 2), HDI_PA = 1 - cos^4(theta)."""
    deg = np.arange(0, 90 + 1e-9, ctx.sizes["star_deg"])
    cfgs = [heads.star_heads(np.radians(t), 10, 2, 4) for t in deg]
    return _family(ctx, "star", cfgs, deg, ctx.sizes["star_rep"], ctx.sizes["star_deg"])


@step
def affine(ctx: Context) -> dict:
    """Part 3: the covariance of the two orthogonal heads of pair(90 deg) for the first isotropic m, integrated
    over fixed test points from the input law (the affine bound leaves it no room at HDI = 1)."""
    p = ctx.params
    model = model_of(ctx, p.isotropic_regressions[0])
    points, replicates = _fresh(ctx, "affine").spawn(2)
    x = model.inputs.sample(np.random.default_rng(points), ctx.sizes["cov_points"], 4)
    kw = dict(n=p.n, n_rep=ctx.sizes["cov_rep"], seed=replicates, n_jobs=p.n_jobs, bandwidth=p.bandwidth)
    (est,) = montecarlo.pointwise_estimates([heads.pair_heads(np.pi / 2, 4, 2)], model, x, **kw)
    cov, corr = C.head_covariance(est)
    covariance = Q(cov.mean, cov.se, label="integrated covariance of orthogonal heads")
    return {
        "covariance": covariance,
        "z": Q(cov.z, digits=2),
        "correlation": Q(corr, digits=2, label="as a correlation"),
        "decision": affine_decision(covariance, corr),
    }


# --------------------------------------------------------------------------- equal HDI; random configurations


@step
def equal(ctx: Context) -> dict:
    """Part 4: P (angles 0 and 90 deg) and Q = pair(45 deg) share HDI_PA = 1/2; P' (angles 8 and 90 deg) has a
    higher HDI_PA.  The IMSE of each against Q for the two isotropic m (paired differences)."""
    p = ctx.params
    cfgs = C.equal_hdi_configurations()
    out: dict = {"hdi": {k.replace("'", "p"): head_diversity_index(W) for k, W in cfgs.items()}}
    out["hdi_pp"] = Q(out["hdi"]["Pp"], digits=3)
    for role, m in _iso(ctx).items():
        model, seed = model_of(ctx, m), ctx.streams["equal"]
        res = _imse(ctx, list(cfgs.values()), model, seed, ctx.sizes["equal_rep"], 300, bandwidth=p.bandwidth)
        rel, rel_se = res.relative_to(1)  # relative to Q
        (dP, sP), (dPp, sPp) = res.paired_difference(0, 1), res.paired_difference(2, 1)
        out[role] = {
            "m": m,
            **dict(imse=res.mean, se=res.se, rel=rel, rel_se=rel_se),
            **dict(P_minus_Q=dP, P_minus_Q_se=sP, Pp_minus_Q=dPp, Pp_minus_Q_se=sPp),
            **{
                key: {
                    "rel": Q(100 * rel[i], 100 * rel_se[i], unit="%", label=f"{name} vs Q, {regression_label(m)}"),
                    "z": Q(d / se, digits=2, label=f"z, {regression_label(m)}"),
                }
                for key, name, i, d, se in (("pq", "P", 0, dP, sP), ("ppq", "P'", 2, dPp, sPp))
            },
        }
    return out


@step
def random(ctx: Context) -> dict:
    """Part 5: random configurations (interpolated heads and the orthogonal blocks): the rank correlation of
    HDI_PA and IMSE, and every pair with an HDI gap above 0.02 tested for a violation."""
    p, s = ctx.params, ctx.sizes
    model = model_of(ctx, p.random_regression)
    kw = dict(n=p.random_n, n_test=200, n_rep=s["random_rep"], bandwidth=p.random_bandwidth, n_jobs=p.n_jobs)
    kw |= dict(d=p.random_d, d_k=p.random_d_k, n_heads=p.random_H, data={p.random_regression: model})
    stream, rule = _fresh(ctx, "random"), C.rule_options(p.random_rule)
    cfg, res = C.random_configuration_imse(p.random_regression, s["n_configs"], stream, **kw, **rule)
    r = res[p.random_regression]
    rho = Q(C.rank_correlation(cfg.hdi, r), C.rank_correlation_se(cfg.hdi, r), label="Spearman correlation")
    viol = C.monotonicity_violations(cfg.hdi, r)
    rel, rel_se = r.relative_to(cfg.orthogonal)
    others = np.arange(len(cfg.hdi)) != cfg.orthogonal
    closest = int(np.flatnonzero(others)[np.argmin(rel[others])])
    premises = isotropic_premises([model], [heads.HeadConfig(W, **rule) for W in cfg.projections])
    max_se = float(
        max(se for *_, se in viol["violations"])
        if viol["violations"]
        else r.paired_difference(cfg.orthogonal, cfg.identical).se
    )
    expected = viol["expected_by_chance"]
    return {
        "n_configs": len(cfg.hdi),
        **dict(hdi=cfg.hdi, t=cfg.t, imse=r.mean, se=r.se, rel=rel, rel_se=rel_se),
        "rho": rho,
        **{k: viol[k] for k in ("n_pairs", "n_violations", "n_decreases", "violations", "max_z")},
        "expected_by_chance": Q(expected, digits=2, label="expected by chance"),
        "closest_rel": Q(100 * rel[closest], 100 * rel_se[closest], unit="%"),
        "closest_hdi": Q(cfg.hdi[closest], digits=2),
        "max_hdi": Q(cfg.hdi[others].max(), digits=2),
        "premises": premises,
        "decision": random_decision(
            rho, viol["n_violations"], expected, viol["n_pairs"], 100 * max_se / float(r.mean.min())
        ),
        "data": Raw({"configs": cfg, "result": r, "vs_identical": r.differences_from(cfg.identical)}),
    }


@step
def matched(ctx: Context) -> dict:
    """Part 6: random configurations whose HDI_PA equals each target exactly: Hotelling's T^2 on the paired
    contrasts of each bin and the between-configuration sd beyond Monte Carlo noise."""
    p = ctx.params
    stream = _fresh(ctx, "matched")
    cfgs = C.matched_hdi_configurations(
        p.matched_targets, p.matched_configs, np.random.default_rng(stream), p.random_d, p.random_d_k, p.random_H
    )
    K, model = len(cfgs), model_of(ctx, p.random_regression)
    children = stream.spawn(K * K)  # bin k replays child k (K + 1): the spawn order of the chapter's first runs
    bandwidth = p.random_bandwidth if p.matched_kernel != "attention" else None
    bins = {}
    for k, (target, ws) in enumerate(cfgs.items()):
        hc = [
            heads.HeadConfig(W, kernel=p.matched_kernel, bandwidth=bandwidth, **C.rule_options(p.random_rule))
            for W in ws
        ]
        res = _imse(ctx, hc, model, children[k * (K + 1)], ctx.sizes["matched_rep"], 200, n=p.random_n)
        rel, h = res.relative_to(int(np.argmin(res.mean))), C.heterogeneity(res)
        tau = Q(h["tau_pct"], h["tau_se_pct"], unit="%", label=f"between-configuration sd at HDI_PA {target:g}")
        hotelling = Q(h["p"], label=f"Hotelling p at HDI_PA {target:g}")
        bins[f"bin{k + 1}"] = {
            "target": Q(target, digits=2),
            "hdi": [head_diversity_index(W) for W in ws],
            **dict(imse=res.mean, se=res.se, rel=rel.mean, rel_se=rel.se, T2=h["T2"], K=h["K"], R=h["R"]),
            "tau": tau,
            "spread": Q(h["spread_pct"], digits=2, unit="%"),
            "p": f"{h['p']:.2g}",
            "hotelling_p": hotelling,
        }
    return {"bins": bins, "decision": matched_decision([(b["tau"], b["hotelling_p"]) for b in bins.values()])}


@step
def attention(ctx: Context) -> dict:
    """Part 7 (sensitivity): the pair family with plain softmax attention at beta = 1/sqrt(d_k) and 4, the
    Gaussian head and the training mean, for the second isotropic m."""
    p, s = ctx.params, ctx.sizes
    deg = np.arange(0, 90 + 1e-9, s["attn_deg"])
    kinds = {
        "canonical": ("attention, beta = 1/sqrt(d_k)", dict(kernel="attention")),
        "beta4": ("attention, beta = 4", dict(kernel="attention", beta=4.0)),
        "gaussian": (f"Gaussian, h = {p.bandwidth:g}", dict(bandwidth=p.bandwidth)),
    }
    cfgs = [
        heads.HeadConfig(heads.pair_heads(np.radians(t), 4, 2), label=label, **kw)
        for label, kw in kinds.values()
        for t in deg
    ]
    cfgs.append(heads.HeadConfig(heads.pair_heads(0.0, 4, 2), rule="sum", weights=[0.0, 0.0], label="training mean"))
    model = model_of(ctx, p.isotropic_regressions[1])
    res = _imse(ctx, cfgs, model, ctx.streams["attention"], s["attn_rep"], s["n_test"])
    mean = len(cfgs) - 1
    diff = res.differences_from(mean)  # IMSE minus IMSE of the training mean, paired

    def block(a, i):  # kind i's angles
        return a[i * len(deg) : (i + 1) * len(deg)]

    out = {
        k: dict(label=label, imse=block(res.mean, i), se=block(res.se, i), z_vs_mean=block(diff.z, i))
        for i, (k, (label, _)) in enumerate(kinds.items())
    }
    best = int(np.argmin(block(diff.mean, 0)))
    return {
        "deg": deg,
        "kinds": out,
        "mean": Q(res.mean[mean], res.se[mean]),
        "canonical_min": Q(out["canonical"]["imse"].min(), digits=3),
        "canonical_max": Q(out["canonical"]["imse"].max(), digits=3),
        "canonical_min_z": Q(out["canonical"]["z_vs_mean"].min(), digits=2, label="z"),
        "beta4_min": Q(out["beta4"]["imse"].min(), digits=3),
        "gaussian_min": Q(out["gaussian"]["imse"].min(), digits=3),
        "benefit": Q(
            block(diff.mean, 0)[best],
            block(diff.se, 0)[best],
            label="smallest IMSE(attention) - IMSE(training mean) over the angles",
        ),
    }


# --------------------------------------------------------------------------- the decisions


def scale_decision(doubled: float) -> dict:
    """The claim "the printed index is scale free": the change when identical heads are doubled is 0 up to rounding."""
    verdict, detectable = within_tolerance(abs(doubled), EXACT_TOL)
    return _decision(
        f"identical heads times 2 against identical heads, rounding tolerance {EXACT_TOL:g}",
        Q(doubled, label="change when the heads are doubled"),
        verdict=verdict,
        detectable=detectable,
    )


def affine_decision(covariance: Q, correlation: float) -> dict:
    """The affine bound at HDI = 1 needs the covariance of orthogonal heads to be <= 0: a covariance above
    3 s.e. refutes it; nothing here can confirm it (it reads one point of the bound)."""
    return _decision(
        "at HDI = 1 the bound equals B^2 + V/H, so it needs the integrated covariance of orthogonal heads to be "
        "<= 0; a covariance above 3 s.e. refutes it",
        covariance,
        Q(correlation, label="as a correlation"),
        verdict=FAILS if covariance.value > N_SE * covariance.se else UNDECIDED,
    )


def random_decision(rho: Q, n_violations: int, expected: float, n_pairs: int, max_se_pct: float) -> dict:
    """The claim "non-increasing over random configurations": fails when the significant violations (higher
    HDI, IMSE higher by 3 paired s.e.) exceed the 99.9 % Poisson quantile of the number ``expected`` by
    chance; holds (under the premises) when they do not, the rank correlation ``rho`` is below 0 by 3
    bootstrap s.e. and the run could see a violation of :data:`RISE_TOL_PCT` (``max_se_pct``: the largest
    paired s.e., % of the IMSE); undecided otherwise."""
    allowed = int(poisson.ppf(1 - CHANCE_LEVEL, expected))
    verdict = FAILS if n_violations > allowed else HOLDS_UNDER if rho.value + N_SE * rho.se < 0 else UNDECIDED
    return _decision(
        f"significant violations among {n_pairs} ordered pairs with an HDI gap above 0.02 against {allowed} "
        f"(99.9 % Poisson quantile of the {expected:.2f} expected by chance): more fails; otherwise holds when "
        "the Spearman correlation is below 0 by 3 bootstrap s.e. and 3 paired s.e. is below "
        f"{RISE_TOL_PCT:g} % of the IMSE, else undecided",
        rho,
        Q(n_violations, label="significant violations"),
        Q(expected, label="expected by chance"),
        **_rise(verdict, max_se_pct),
    )


def matched_decision(bins: list) -> dict:
    """The claim "same HDI, same IMSE" over random configurations: fails when the smallest Hotelling p-value
    of the bins (``(tau, p)`` quantities per bin), times their number (Bonferroni), is below the size of the
    3-s.e. rule; undecided otherwise."""
    p_adj = min(1.0, min(p.value for _, p in bins) * len(bins))
    return _decision(
        f"Hotelling's T^2 on the paired contrasts within each HDI bin; the smallest p-value times {len(bins)} "
        f"bins against {P_3SE:.4f} (the size of the 3-s.e. rule)",
        *(q for b in bins for q in b),
        Q(p_adj, label="Bonferroni-adjusted p"),
        verdict=FAILS if p_adj < P_3SE else UNDECIDED,
    )


def families_decision(max_step_z, max_step_se_pct, end_z, end_rel_pct, where) -> dict:
    """The claim "non-increasing along the isoclinic families": fails when some step rises by 3 s.e. (the
    largest at ``where``); holds (under the premises) when none does, the end-to-end fall is seen (z below -3)
    and the run could see a rise of :data:`RISE_TOL_PCT`; undecided otherwise."""
    verdict = FAILS if max_step_z > N_SE else HOLDS_UNDER if end_z < -N_SE else UNDECIDED
    return _decision(
        "largest z-score of a step (more diverse minus less diverse) above 3 fails; otherwise holds when the most "
        "positive identical-to-orthogonal z-score is below -3 and 3 s.e. of a step is below "
        f"{RISE_TOL_PCT:g} % of the IMSE, else undecided",
        Q(max_step_z, label="largest step z-score"),
        Q(end_z, label="identical-to-orthogonal z-score"),
        Q(end_rel_pct, unit="%", label="identical-to-orthogonal change, least favourable"),
        where=where,
        **_rise(verdict, max_step_se_pct),
    )


def identical_worst_decision(max_z, max_se_pct, where) -> dict:
    """S-weak, "identical heads are the worst": fails when some configuration is worse by 3 s.e.; holds
    (under the premises) when none is and the run could see an excess of :data:`RISE_TOL_PCT`."""
    return _decision(
        "largest z-score of IMSE(c) - IMSE(identical) over every configuration of the isoclinic families and the "
        f"random configurations: above 3 fails; otherwise holds when 3 s.e. is below {RISE_TOL_PCT:g} % of "
        "IMSE(identical), else undecided",
        Q(max_z, label=f"largest z-score ({where})"),
        **_rise(FAILS if max_z > N_SE else HOLDS_UNDER, max_se_pct),
    )


def anisotropic_decision(rel_pct, rel_se_pct, z) -> dict:
    """The claim "non-increasing for an anisotropic m": fails when orthogonal heads are worse than identical
    ones by more than 3 s.e.; it can only be refuted."""
    return _decision(
        "z-score of IMSE(orthogonal) - IMSE(identical) along the isoclinic families (the smaller of the two) against 3",
        Q(rel_pct, rel_se_pct, unit="%", label="IMSE change identical to orthogonal"),
        Q(z, label="z"),
        verdict=FAILS if z > N_SE else UNDECIDED,
    )


def equal_decisions(pairs: dict, hdi_gap: float) -> tuple[dict, dict]:
    """The claims "equal HDI, equal IMSE" (fails when some isotropic m separates P and Q by 3 paired s.e.) and
    "a higher HDI never has a higher IMSE" (fails when P' is worse than Q by 3 paired s.e.); neither can be
    confirmed.  ``pairs``: ``{m: equal[role]}`` of the step :func:`equal`, one entry per distinct isotropic m."""
    equal = _decision(
        "|z| of IMSE(P) - IMSE(Q) (both HDI_PA = 1/2) against 3, for each isotropic m",
        *(s for e in pairs.values() for s in (e["pq"]["rel"], e["pq"]["z"])),
        verdict=FAILS if any(abs(e["pq"]["z"].value) > N_SE for e in pairs.values()) else UNDECIDED,
        deciding=_largest_z(pairs, "pq", two_sided=True),
    )
    higher = _decision(
        f"z of IMSE(P') - IMSE(Q) against 3 for each isotropic m; P' has HDI_PA higher by {hdi_gap:.3f}",
        *(s for e in pairs.values() for s in (e["ppq"]["rel"], e["ppq"]["z"])),
        verdict=FAILS if any(e["ppq"]["z"].value > N_SE for e in pairs.values()) else UNDECIDED,
        deciding=_largest_z(pairs, "ppq", two_sided=False),
    )
    return equal, higher


def _largest_z(pairs: dict, which: str, *, two_sided: bool) -> dict:
    """The statistic that decides an any-m comparison: the relative IMSE difference of the isotropic m with
    the largest z (by size when ``two_sided``), with its z against 0 (:func:`mhanw.infra.verdicts.deciding_entry`)."""
    e = max(pairs.values(), key=lambda e: abs(e[which]["z"].value) if two_sided else e[which]["z"].value)
    rel, z = e[which]["rel"], e[which]["z"].value
    return deciding_entry(rel.label or which, rel.value, rel.se, 0.0, abs(z) if two_sided else z)


def as_stated_decision(parts: list) -> dict:
    """Thm 4.2 as stated (a non-increasing function of HDI): fails when one of the decisions ``parts`` that
    test it fails; else undecided (such a statement cannot be confirmed by finitely many checks)."""
    return _decision(
        f"fails when any of the {len(parts)} parts that test it fails, else undecided",
        Q(sum(d["verdict"] == FAILS for d in parts), label="parts that fail"),
        verdict=combine([d["verdict"] for d in parts]),
    )


def projection_bias_guard(z_aniso: float) -> None:
    """The sentence "the diverse heads turn away from the directions that carry the signal and, averaged, add
    their projection bias" (chapter and paper) explains a rise of the IMSE with HDI for the anisotropic m:
    the rise must be significant (z > 3), or the chapter stops."""
    guard(
        bool(z_aniso > N_SE),
        "the IMSE of the anisotropic m rises with HDI (projection bias of the diverse heads)",
        f"the identical-to-orthogonal z-score is {z_aniso:.1f}, not above {N_SE:g}",
    )


@step
def verdicts(ctx: Context, pair, star, equal, random, matched) -> dict:
    """The decisions that read several experiments, with the premises of the isotropic reading evaluated on
    the models and heads that ran, and the numbers the paper quotes from them."""
    fams = {"pair": pair, "star": star}
    roles = tuple(_iso(ctx))
    steps = [
        (
            float(f[r]["summary"]["step_z"][i]),
            f"{fam} family, {regression_label(m)}, {f['deg'][i]:g} to {f['deg'][i + 1]:g} deg",
        )
        for fam, f in fams.items()
        for r, m in _iso(ctx).items()
        for i in range(len(f["deg"]) - 1)
    ]
    max_step_z, where = max(steps)
    step_se_pct = max(
        float(np.max(100 * f[r]["summary"]["step_se"] / f[r]["summary"]["imse"][:-1]))
        for f in fams.values()
        for r in roles
    )
    end_z = max(max(pair[r]["summary"]["z"][-1], star[r]["summary"]["z"][-1]) for r in roles)
    end_rel = max(max(pair[r]["change"].value, star[r]["change"].value) for r in roles)
    raw = random["data"].value
    cfg, vs_identical = raw["configs"], raw["vs_identical"]
    weak = [
        (float(f[r]["summary"]["z"][i]), f"{fam} family, {regression_label(m)}, {f['deg'][i]:g} deg")
        for fam, f in fams.items()
        for r, m in _iso(ctx).items()
        for i in range(1, len(f["deg"]))
    ] + [
        (float(vs_identical.z[i]), f"random configuration of HDI_PA {cfg.hdi[i]:.2f}")
        for i in range(len(cfg.hdi))
        if i != cfg.identical
    ]
    weak_z, weak_where = max(weak)
    weak_se_pct = max(
        max(100 * f[r]["summary"]["rel_se"][1:].max() for f in fams.values() for r in roles),
        100 * float(np.delete(raw["result"].relative_to(cfg.identical).se, cfg.identical).max()),
    )
    aniso = min(pair["aniso"], star["aniso"], key=lambda a: a["summary"]["z"][-1])  # pair first on a tie
    aniso_decision = anisotropic_decision(aniso["change"].value, aniso["change"].se, aniso["summary"]["z"][-1])
    equal_decision, higher_decision = equal_decisions(
        {m: equal[r] for r, m in _iso(ctx).items()}, equal["hdi"]["Pp"] - equal["hdi"]["Q"]
    )
    parts = [aniso_decision, equal_decision, higher_decision, matched["decision"]]
    iso_premises = isotropic_premises(
        [pair["data"].value["models"][r] for r in roles], pair["data"].value["configs"] + star["data"].value["configs"]
    )
    projection_bias_guard(aniso["summary"]["z"][-1])
    return {
        "iso_premises": iso_premises,
        "weak_premises": merge(iso_premises, random["premises"]),
        "families": families_decision(max_step_z, step_se_pct, end_z, end_rel, where),
        "identical_worst": identical_worst_decision(weak_z, weak_se_pct, weak_where),
        "anisotropic": aniso_decision,
        "equal_hdi": equal_decision,
        "higher_hdi": higher_decision,
        "as_stated": as_stated_decision(parts),
        "max_step_z": Q(max_step_z, digits=2),
        "max_step_where": Tex(tex_text(where)),
        "weak_max_z": Q(weak_z, digits=2),
    }


STEPS = (index, pair, star, affine, equal, random, matched, attention, verdicts)

# --------------------------------------------------------------------------- the records


CLAIMS = (
    Claim(
        "hdi-definition/printed-identical-zero",
        "The printed HDI equals 0 for identical heads",
        AtMost("index.printed_identical", EXACT_TOL, "0 for identical orthonormal heads, up to rounding"),
        role=PAPER,
        finding=figs.printed_identical_finding,
    ),
    Claim(
        "hdi-definition/printed-unit-range",
        "The printed HDI lies in [0, 1]",
        All(
            (
                Above("index.printed_min", -EXACT_TOL, "0 up to rounding, over the head kinds and shapes of the table"),
                AtMost(
                    "index.printed_max", 1 + EXACT_TOL, f"1 up to rounding, {EXACT_TOL:g}", detectable="index.exact_tol"
                ),
            )
        ),
        role=PAPER,
    ),
    Claim(
        "hdi-definition/printed-scale-free",
        "The printed HDI does not change when the heads are rescaled",
        Decided("index.printed_scale"),
        role=PAPER,
    ),
    Claim(
        "hdi-definition/pa-properties",
        "HDI_PA is 0 for identical heads, 1 for orthogonal heads, lies in [0, 1] and is scale free",
        AtMost("index.pa_deviation", EXACT_TOL, "over identical, orthogonal, range and scale; rounding"),
        role=DERIVATION,
    ),
    Claim(
        "thm-4.2/affine-bound",
        "MSE <= B^2 + V/H + (1 - 1/H) K (1 - HDI) with the constant K of Lemma 4.1",
        Decided("affine.decision"),
        role=PAPER,
    ),
    Claim(
        "thm-4.2/identical-worst",
        "Identical heads have the largest IMSE (isotropic m and inputs)",
        Decided("verdicts.identical_worst"),
        role=READING,
        premises="verdicts.weak_premises",
    ),
    Claim(
        "thm-4.2/isotropic-families",
        "The IMSE does not increase with HDI_PA along the isoclinic families (isotropic m)",
        Decided("verdicts.families"),
        role=PAPER,
        premises="verdicts.iso_premises",
        finding=figs.families_finding,
    ),
    Claim(
        "thm-4.2/anisotropic",
        "The IMSE does not increase with HDI_PA for an anisotropic m",
        Decided("verdicts.anisotropic"),
        role=PAPER,
        finding=figs.anisotropic_finding,
    ),
    Claim(
        "thm-4.2/equal-hdi",
        "Configurations with equal HDI_PA have equal IMSE",
        Decided("verdicts.equal_hdi"),
        role=READING,
        finding=figs.equal_hdi_finding,
    ),
    Claim(
        "thm-4.2/higher-hdi-higher-imse",
        "A configuration with higher HDI_PA never has a higher IMSE (isotropic m)",
        Decided("verdicts.higher_hdi"),
        role=PAPER,
    ),
    Claim(
        "thm-4.2/random-configurations",
        "Over random configurations the IMSE does not increase with HDI_PA (isotropic m)",
        Decided("random.decision"),
        role=PAPER,
        premises="random.premises",
    ),
    Claim(
        "thm-4.2/matched-hdi",
        "Random configurations with the same HDI_PA have the same IMSE",
        Decided("matched.decision"),
        role=READING,
    ),
    Claim(
        "thm-4.2/plain-attention-benefit",
        "Plain softmax attention (beta = 1/sqrt(d_k)) beats the training mean at some HDI_PA",
        Effect("attention.benefit", sign=-1),
        role=CONTROL,
        also=("attention.canonical_min_z",),
    ),
)


def prose(results: Results, records) -> dict:
    """Whether most of the IMSE's change along the families (second isotropic m) is reached by 60 degrees:
    on both families the change from 60 to 90 degrees is smaller than that from 0 to 60 by more than their
    3-s.e. margins."""

    def saturates(fam):
        a, b = results.at(f"{fam}.iso2.after60"), results.at(f"{fam}.iso2.to60")
        return abs(a.value) + N_SE * a.se < abs(b.value) - N_SE * b.se

    return {"most_gain": "most of the change" if saturates("pair") and saturates("star") else "part of the change"}
