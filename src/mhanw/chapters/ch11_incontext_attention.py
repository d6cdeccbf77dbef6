"""Chapter 11 (Thm 5.1's training reading and Thm 6.1's head-size law, on trained attention): softmax
attention layers trained from scratch on in-context regression.

A sequence holds ``n`` context tokens ``(x_i, y_i)`` and query tokens ``x_q``; one multi-head softmax
attention layer with its own ``W_Q``, ``W_K``, ``W_V``, ``W_O`` per head reads the context and predicts
``m(x_q)``.  Each head is then a Nadaraya-Watson estimate with the learned kernel
``exp(x_q^T W_Q W_K^T x_i / sqrt(d_k))`` (:mod:`mhanw.incontext`, whose analytic gradient the steps check
against finite differences), and ``n``, the paper's sample size, is the context length.  Trained by Adam on
many random tasks, the layer learns one regression estimator for a task family.

The experiment, as steps (:mod:`mhanw.chapters.base`): one head written out and its gradient checked
(:func:`head_check`); do trained heads move apart (:func:`heads_apart`: HDI_PA of the keys and of the
query-key circuits along training, free heads against the orthogonality penalty, the positive control,
and tied heads, the negative control, for an isotropic and an anisotropic task family); many small heads or
few big ones (:func:`head_sizes`: test MSE against the head count at the budgets :data:`BUDGETS` for context
lengths over a decade or more, the best head size ``d_k*(n)`` with a bootstrap over seeds, its growth and
the laws of Theorem 6.1, chapter 06's M1 model and a constant); and is trained attention local
(:func:`head_sizes` too: ``n_eff/n`` and the inverse temperatures against ``n``).

The decision rules, fixed before running (:data:`N_SE_RULE` standard errors throughout):

- *heads move apart* (per family): HDI_PA of the keys at the end minus at initialisation, paired over the
  seeds, holds above +3 s.e., fails below -3 s.e., undecided otherwise and with fewer than
  :data:`MIN_SEEDS` seeds (:func:`apart_decision`); the positive control is the same rule on the penalised
  heads (it must hold); the negative control holds when the tied heads' HDI_PA does not move;
- *d_k* grows with n* (per budget): the slope of ``log2 d_k*`` on ``log2 n`` over the uncensored estimates,
  holds above +3 bootstrap s.e., fails below -3, undecided otherwise or with fewer than three uncensored
  estimates (:func:`growth_decision`);
- *the printed law describes d_k*(n)* (per budget): each law fitted with a free factor, rejected when its
  chi-square p-value is below :data:`ALPHA`; holds when the printed law is the one law not rejected, fails
  when it is rejected, undecided ("we cannot tell at this size") when others survive with it
  (:func:`law_decision`);
- *trained attention becomes local* (per budget): the slope of ``log2(n_eff/n)`` (heads averaged over the
  head counts) on ``log2 n``, per seed, holds below -3 s.e. (``n_eff/n`` falls as ``n`` grows), fails above
  +3 s.e., undecided otherwise (:func:`local_decision`).

The figures are in :mod:`mhanw.chapters.ch11_figures`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import incontext as ic
from ..constants import N_SE
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import Claim, Decided
from .base import Context, step

SECTION = "sec:incontext"
#: The record groups: the paper's statements tested on trained attention, and the companion's controls.
GROUP = "incontext"
CONTROL_GROUP = "incontext-control"

#: The decision rules' threshold in standard errors (the companion's 3-s.e. rule).
N_SE_RULE = N_SE
#: Fewest seeds per family for a heads-apart verdict other than "undecided" (as chapter 10).
MIN_SEEDS = 20
#: A law of ``d_k*(n)`` whose chi-square p-value is below this is rejected.
ALPHA = 0.05
#: Largest relative gap between the analytic gradient and central finite differences that counts as agreement.
GRADIENT_TOL = 1e-5
#: The budgets ``D = H d_k`` of the head-size experiment, and the short names of the records.
BUDGETS = (16, 64)
#: The task families, by the name of their records: ``(results key, short name)``.
FAMILIES = (("isotropic", "iso"), ("anisotropic", "aniso"))
#: The configurations of the heads-apart experiment (:data:`mhanw.incontext.APART_CONFIGS`).
CONFIGS = ic.APART_CONFIGS
#: The quantities recorded along training, and what their change is.
FIELDS = {
    "hdi": "HDI_PA of the keys, end minus initialisation",
    "hdi_circuit": "HDI_PA of the query-key circuits, end minus initialisation",
    "error_corr": "heads' error correlation on fresh tasks, end minus initialisation",
    "mse": "test MSE on fresh tasks, end minus initialisation",
}


def _apart_work(p) -> int:
    """Attention weights computed by the heads-apart training (3 configurations, 2 families)."""
    s = SIZES[p["fidelity"]]
    return 2 * 3 * p["n_seeds"] * s["apart_steps"] * s["apart_tasks"] * p["heads"] * s["apart_queries"] * p["n"]


def _size_work(p) -> int:
    """Attention weights computed by the head-size training (every head count of both budgets, every ``n``)."""
    s = SIZES[p["fidelity"]]
    heads = sum(s["heads_16"]) + sum(s["heads_64"])
    return p["size_seeds"] * s["size_steps"] * s["size_tasks"] * s["size_queries"] * heads * sum(s["n_values"])


PARAMETERS = {
    **P.STANDARD,
    "d": P.positive_int(2, 64, why="the head-size budgets' smallest D is 16; 64 gives heads of one input each"),
    "heads": P.positive_int(2, 64, at_most="d", why="the largest d"),
    "n": P.bounded_work(
        P.positive_int(4, 4096, why="64 times the default 64"),
        _apart_work,
        ("n", "heads", "n_seeds"),
        "training the heads-apart configurations",
    ),
    "sigma": P.noise_level(),
    "iso_lengthscale": P.positive_float(0.05, 100.0, why="the inputs lie on the sphere of radius sqrt(d)"),
    "aniso_lengthscale": P.positive_float(0.05, 100.0, why="the inputs lie on the sphere of radius sqrt(d)"),
    "anisotropy": P.positive_float(1.0, 1000.0, why="lengthscales from ell to 1000 ell along the coordinates"),
    "penalty": P.positive_float(1e-6, 1e6, why="six decades either side of the default 1"),
    "lr": P.positive_float(1e-5, 1.0, why="Adam moves every weight by about lr per step"),
    "n_seeds": P.positive_int(2, 500, why="25 times the default 20"),
    "size_seeds": P.bounded_work(
        P.positive_int(2, 200, why="40 times the default 5"),
        _size_work,
        ("size_seeds",),
        "training every head count of both budgets at every context length",
    ),
}
#: The heads-apart layer has the budget ``D = d``, so its head count must divide ``d``.
CONSTRAINTS = (P.divides("heads", "d"),)

#: Monte Carlo sizes by fidelity (the seeds are the parameters ``n_seeds`` and ``size_seeds``).  Heads
#: apart: optimiser steps, tasks and queries per step, the recording interval, fresh test tasks and
#: queries.  Head sizes: the head counts per budget, the context lengths, steps, tasks, queries, test
#: tasks and queries, bootstrap resamples.  At the budget 64 the paper size stops at ``d_k = 2`` (64 heads
#: of size 1 would cost as much again as the rest of the sweep).
SIZES = {
    "quick": dict(
        apart_steps=200,
        apart_tasks=8,
        apart_queries=8,
        record_every=50,
        apart_test_tasks=32,
        apart_test_queries=8,
        heads_16=(1, 2, 4, 8, 16),
        heads_64=(2, 4, 8, 16, 32),
        n_values=(16, 64, 256),
        size_steps=150,
        size_tasks=8,
        size_queries=8,
        size_test_tasks=32,
        size_test_queries=8,
        n_boot=500,
    ),
    "paper": dict(
        apart_steps=400,
        apart_tasks=16,
        apart_queries=8,
        record_every=50,
        apart_test_tasks=64,
        apart_test_queries=8,
        heads_16=(1, 2, 4, 8, 16),
        heads_64=(1, 2, 4, 8, 16, 32),
        n_values=(16, 32, 64, 128, 256, 512),
        size_steps=400,
        size_tasks=12,
        size_queries=8,
        size_test_tasks=64,
        size_test_queries=8,
        n_boot=2000,
    ),
}
#: The random streams: the head and gradient check, the heads-apart runs, the head-size runs.
STREAMS = ("head check", "heads apart", "head sizes")


def families(params) -> dict:
    """The two task families of the checked ``params``, as :class:`mhanw.incontext.TaskFamily` fields: Gaussian
    processes on the sphere of radius ``sqrt d``, isotropic (lengthscale ``iso_lengthscale``) and
    anisotropic (lengthscales from ``aniso_lengthscale`` to ``anisotropy`` times it along the coordinates:
    the first few coordinates matter most), noise sd ``sigma``."""
    return {
        "isotropic": dict(kind="gp", lengthscale=params["iso_lengthscale"], anisotropy=1.0, sigma=params["sigma"]),
        "anisotropic": dict(
            kind="gp", lengthscale=params["aniso_lengthscale"], anisotropy=params["anisotropy"], sigma=params["sigma"]
        ),
    }


# --------------------------------------------------------------------------- the decision rules


def apart_decision(start, end, n_seeds: int | None = None, what: str = "HDI_PA of the keys") -> dict:
    """The heads-apart rule on one family's paths: ``start`` and ``end`` ``(S,)`` (the same seeds), read by
    :class:`mhanw.infra.rules.Decided`.  Holds when the paired change exceeds +:data:`N_SE_RULE` s.e.
    (:func:`mhanw.incontext.trend`), fails below minus as many, undecided otherwise and with fewer than
    :data:`MIN_SEEDS` seeds; the detectable size is the 3-s.e. half-width."""
    word, change = ic.trend(start, end, N_SE_RULE)
    S = np.size(start) if n_seeds is None else n_seeds
    verdict = {"positive": V.HOLDS, "negative": V.FAILS}.get(word, V.UNDECIDED)
    if S < MIN_SEEDS:
        verdict = V.UNDECIDED
    q = Q(float(change.mean), float(change.se), digits=3, label=f"{what}, end minus initialisation")
    return {
        "verdict": verdict,
        "criterion": (
            f"{what} at the end of training minus at initialisation, mean over {S} seeds: holds above "
            f"+{N_SE_RULE:g} paired s.e., fails below -{N_SE_RULE:g} s.e., undecided otherwise (and with "
            f"fewer than {MIN_SEEDS} seeds)"
        ),
        "statistics": (q,),
        "detectable": N_SE_RULE * float(change.se),
        "unit": "HDI_PA",
    }


def tied_decision(start, end) -> dict:
    """The negative control: tied heads are one head, so their HDI_PA must not move.  Holds when the paired
    change of HDI_PA is neither positive nor negative at :data:`N_SE_RULE` s.e. (a change within
    :data:`mhanw.incontext.ROUNDING` is rounding), fails when the measurement reports a move."""
    word, change = ic.trend(start, end, N_SE_RULE)
    q = Q(float(change.mean), float(change.se), digits=3, label="tied heads' HDI_PA, end minus initialisation")
    return {
        "verdict": V.HOLDS if word == "neither" else V.FAILS,
        "criterion": (
            f"tied heads' HDI_PA at the end minus at initialisation: holds when it moves by less than "
            f"{N_SE_RULE:g} paired s.e. (or by rounding only), fails when the measurement reports a move"
        ),
        "statistics": (q,),
        "unit": "HDI_PA",
    }


def growth_decision(estimate: Estimate | None, n_uncensored: int) -> dict:
    """Does ``d_k*`` grow with ``n``: ``estimate`` the slope of ``log2 d_k*`` on ``log2 n`` with its bootstrap
    s.e. (:func:`mhanw.incontext.growth`, ``None`` when nothing could be fitted), ``n_uncensored`` the
    estimates it rests on.  Holds above +:data:`N_SE_RULE` s.e., fails below minus as many, undecided
    otherwise and with fewer than three uncensored estimates."""
    stats: tuple = ()
    verdict, det = V.UNDECIDED, None
    if estimate is not None:
        stats = (Q(float(estimate.mean), float(estimate.se), digits=3, label="slope of log2 d_k* on log2 n"),)
        det = N_SE_RULE * float(estimate.se)
        if n_uncensored >= 3:
            verdict = {"positive": V.HOLDS, "negative": V.FAILS}.get(ic.direction(estimate, N_SE_RULE), V.UNDECIDED)
    return {
        "verdict": verdict,
        "criterion": (
            f"the slope of log2 d_k* on log2 n over the best head sizes not at an end of the grid (bootstrap "
            f"s.e. over seeds): holds above +{N_SE_RULE:g} s.e., fails below -{N_SE_RULE:g} s.e., undecided "
            f"otherwise and with fewer than 3 such estimates ({n_uncensored} here)"
        ),
        "statistics": stats,
        "detectable": det,
        "unit": "log2 d_k* per doubling of n",
    }


def law_decision(fits: dict) -> dict:
    """Does Theorem 6.1's printed law ``(ln n)^(2/(4+d))`` describe ``d_k*(n)``: ``fits`` the
    :func:`mhanw.incontext.compare_laws` of one budget.  Holds when the printed law is the one law of
    :data:`mhanw.incontext.LAWS` not rejected at :data:`ALPHA`, fails when it is rejected, undecided ("we
    cannot tell at this size") when another law survives beside it or nothing could be fitted."""
    word = ic.law_decision(fits, ALPHA)
    stats: tuple = ()
    if fits:
        printed = fits["printed"]
        stats = tuple(
            Q(fits[law].p_value, digits=3, label=f"p-value of the {law} law (chi-square, {fits[law].dof} d.f.)")
            for law in ("printed", "M1", "constant")
        )
        verdict = V.HOLDS if word == "printed" else V.FAILS if printed.p_value < ALPHA else V.UNDECIDED
    else:
        verdict = V.UNDECIDED
    return {
        "verdict": verdict,
        "criterion": (
            f"each law fitted to log2 d_k*(n) with a free factor, weighted by the bootstrap variances, and "
            f"rejected when its chi-square p-value is below {ALPHA:g}: holds when the printed law is the only "
            f"one not rejected, fails when it is rejected, undecided (cannot tell at this size) when another "
            f"law survives beside it (here: {word})"
        ),
        "statistics": stats,
        "unit": "p-value",
    }


def local_decision(estimate: Estimate) -> dict:
    """Does trained attention become local: ``estimate`` the slope of ``log2(n_eff/n)`` on ``log2 n`` with its
    s.e. over seeds (:func:`mhanw.incontext.slope`).  Holds below -:data:`N_SE_RULE` s.e. (the share of the
    context a head averages falls as the context grows), fails above +3 s.e., undecided otherwise."""
    word = ic.direction(estimate, N_SE_RULE)
    q = Q(float(estimate.mean), float(estimate.se), digits=3, label="slope of log2(n_eff/n) on log2 n")
    return {
        "verdict": {"negative": V.HOLDS, "positive": V.FAILS}.get(word, V.UNDECIDED),
        "criterion": (
            f"the slope of log2(n_eff/n) on log2 n, per seed, heads and head counts averaged: holds below "
            f"-{N_SE_RULE:g} s.e. over seeds, fails above +{N_SE_RULE:g} s.e., undecided otherwise"
        ),
        "statistics": (q,),
        "detectable": N_SE_RULE * float(estimate.se),
        "unit": "log2(n_eff/n) per doubling of n",
    }


# --------------------------------------------------------------------------- the steps


@step
def head_check(ctx: Context) -> dict:
    """Part 1: one layer of ``heads`` heads at the budget ``d`` with random weights, eight tasks of the
    isotropic family with ``n`` context points and 4 queries each (the head-check stream); the library's
    per-head NW estimates at the queries (for the formula written out in the chapter), and the relative gap
    between the analytic gradient of the training loss and central finite differences along one random
    direction (double precision)."""
    p = ctx.params
    rng = ctx.rng("head check")
    arch = ic.Architecture(p.d, p.d, p.heads)
    family = ic.TaskFamily(d=p.d, **families(p)["isotropic"])
    params = ic.init_params(arch, [rng])
    tasks = ic.draw_tasks(family, [rng], 8, p.n, 4)
    heads, _ = ic.head_outputs(arch, params, tasks)
    loss, grad = ic.loss_and_grad(arch, params, tasks)
    E = {k: rng.standard_normal(v.shape) for k, v in params.items()}
    eps = 1e-6

    def at(t):
        return ic.loss_and_grad(arch, {k: v + t * E[k] for k, v in params.items()}, tasks, gradient=False)[0][0]

    fd = (at(eps) - at(-eps)) / (2 * eps)
    analytic = float(sum(np.sum(grad[k] * E[k]) for k in params))
    gap = abs(analytic - fd) / abs(fd)
    if gap >= GRADIENT_TOL:
        raise AssertionError(f"the analytic gradient and finite differences disagree: relative gap {gap:.2e}")
    return {
        "loss": float(loss[0]),
        "gradient_gap": Q(gap, digits=2, label="analytic gradient minus finite differences (relative)"),
        "data": Raw(
            {
                "Q": params["Q0"][0],
                "K": params["K0"][0],
                "X": tasks.X[0],
                "Y": tasks.Y[0],
                "Xq": tasks.Xq[0],
                "heads": heads[0],
            }
        ),
    }


def _along(x: np.ndarray) -> dict:
    """Mean and s.e. over seeds of ``x`` ``(K, S)`` at every recorded step."""
    est = Estimate.from_samples(x, axis=1)
    return {"mean": np.asarray(est.mean), "se": np.asarray(est.se)}


def _summary(res: dict) -> dict:
    """One family's heads-apart results: per configuration the paths (mean, s.e.), the start and end of
    HDI_PA, the changes of every field (:class:`Q`), and the rule's decision."""
    S = res["free"]["hdi"].shape[1]
    out = {
        "label": res["family"].label(),
        "steps": res["steps"],
        "haar": Q(res["haar"], digits=3, label="Haar expectation 1 - d_k/d"),
        "haar_circuit": Q(res["haar_circuit"], digits=4, label="Haar expectation of the circuits 1 - 1/d^2"),
    }
    for config in CONFIGS:
        r = res[config]
        node = {"paths": {f: _along(r[f]) for f in FIELDS if np.all(np.isfinite(r[f]))}}
        node["start"] = Q(float(r["hdi"][0].mean()), float(r["hdi"][0].std(ddof=1) / math.sqrt(S)), digits=3)
        node["end"] = Q(float(r["hdi"][-1].mean()), float(r["hdi"][-1].std(ddof=1) / math.sqrt(S)), digits=3)
        for f in FIELDS:
            a, b = r[f][0], r[f][-1]
            if np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
                change = Estimate.paired(b, a)
                node[f"{f}_change"] = Q(float(change.mean), float(change.se), digits=3, label=FIELDS[f])
        if config == "tied":
            node["decision"] = tied_decision(r["hdi"][0], r["hdi"][-1])
        else:
            node["decision"] = apart_decision(r["hdi"][0], r["hdi"][-1])
        out[config] = node
    return out


@step
def heads_apart(ctx: Context) -> dict:
    """Part 2: both task families trained with free heads, with the orthogonality penalty (the positive
    control) and with tied heads (the negative control), ``n_seeds`` seeds in lockstep from the same
    starts on the same tasks (:func:`mhanw.incontext.heads_apart`, budget ``D = d``, ``heads`` heads,
    context length ``n``), measured along training on fresh tasks."""
    p, s = ctx.params, ctx.sizes
    sizes = dict(
        d=p.d,
        budget=p.d,
        heads=p.heads,
        n=p.n,
        seeds=p.n_seeds,
        steps=s["apart_steps"],
        tasks=s["apart_tasks"],
        queries=s["apart_queries"],
        lr=p.lr,
        penalty=p.penalty,
        record_every=s["record_every"],
        test_tasks=s["apart_test_tasks"],
        test_queries=s["apart_test_queries"],
        families=families(p),
    )
    res = ic.heads_apart(sizes, ctx.streams["heads apart"])
    out = {name: _summary(res[name]) for name, _ in FAMILIES}
    return {
        **out,
        "d_k": p.d // p.heads,
        "penalty": Q(p.penalty, digits=2),
    }


def _budget_summary(res: dict, n_values) -> dict:
    """One budget's head-size results: the MSE table (mean, s.e. over seeds per ``n`` and head size), the
    best head sizes, the growth and law decisions, and the locality measures with their decision."""
    n = np.asarray(n_values, dtype=float)
    x = np.log2(n)
    est = res["estimates"]
    uncensored = int(sum(not e.censored for e in est))
    mse = res["mse"]  # (N, K, S)
    S = mse.shape[-1]
    neff = res["neff"]  # (N, K, S), heads averaged
    log_neff = np.log2(neff).mean(axis=1)  # (N, S): head counts averaged in the log
    log_beta = np.log2(res["beta"]).mean(axis=1)
    local = ic.slope(x, log_neff)
    beta_slope = ic.slope(x, log_beta)
    fits = res["laws"]
    return {
        "heads": res["heads"],
        "d_k": res["d_k"],
        "n_values": np.asarray(n_values),
        "mse_mean": mse.mean(axis=-1),
        "mse_se": mse.std(axis=-1, ddof=1) / math.sqrt(S),
        "best": [
            {
                "n": int(nv),
                "d_k": Q(e.best, digits=2, label=f"best head size at n = {int(nv)}"),
                "log2": Q(e.log2_best, e.se_log2, digits=2, label=f"log2 d_k* at n = {int(nv)}"),
                "interval": list(e.interval),
                "at_edge": e.at_edge,
                "censored": e.censored,
            }
            for nv, e in zip(n_values, est)
        ],
        "uncensored": uncensored,
        "growth_decision": growth_decision(res["growth"], uncensored),
        "laws": {
            law: {"log2_factor": f.log2_factor, "p_value": f.p_value, "chi2": f.chi2, "dof": f.dof, "wins": f.wins}
            for law, f in fits.items()
        },
        "law_decision": law_decision(fits),
        "law_word": ic.law_decision(fits, ALPHA),
        "neff_mean": np.exp2(log_neff).mean(axis=1),
        "neff_by_heads": neff.mean(axis=-1),
        "neff_layer": np.nanmean(res["neff_layer"], axis=-1),
        "beta_by_heads": res["beta"].mean(axis=-1),
        "distance_ratio": res["distance_ratio"].mean(axis=(1, 2)),
        "beta_slope": Q(float(beta_slope.mean), float(beta_slope.se), digits=3, label="slope of log2 beta on log2 n"),
        "local_decision": local_decision(local),
    }


@step
def head_sizes(ctx: Context) -> dict:
    """Parts 3 and 4: at each budget of :data:`BUDGETS`, every head count of the sizes trained on the
    anisotropic family at every context length of ``n_values``, ``size_seeds`` seeds each, in lockstep
    (:func:`mhanw.incontext.head_size_sweep`); per budget the test MSE, ``d_k*(n)``, its growth and the
    laws, and the locality measures."""
    p, s = ctx.params, ctx.sizes
    sizes = dict(
        d=p.d,
        budgets=BUDGETS,
        heads={16: s["heads_16"], 64: s["heads_64"]},
        n_values=s["n_values"],
        seeds=p.size_seeds,
        steps=s["size_steps"],
        tasks=s["size_tasks"],
        queries=s["size_queries"],
        lr=p.lr,
        test_tasks=s["size_test_tasks"],
        test_queries=s["size_test_queries"],
        family=families(p)["anisotropic"],
        n_boot=s["n_boot"],
    )
    res = ic.head_size_sweep(sizes, ctx.streams["head sizes"])
    return {
        **{f"d{D}": _budget_summary(res[D], s["n_values"]) for D in BUDGETS},
        "family": res["family"].label(),
        "alpha": Q(ALPHA, digits=2, label="level at which a law is rejected"),
        "n_min": int(min(s["n_values"])),
        "n_max": int(max(s["n_values"])),
        "n_count": len(s["n_values"]),
    }


STEPS = (head_check, heads_apart, head_sizes)

# --------------------------------------------------------------------------- the records


def _apart_finding(path: str):
    """One clause of what the numbers of one configuration show, generated from them."""

    def finding(results: Results, verdict: str) -> str:
        node = results.at(path)
        c = node["hdi_change"]
        start, end = node["start"].value, node["end"].value
        moved = "rose" if c.value > 0 else "fell"
        if verdict in (V.HOLDS, V.FAILS) and abs(c.value) > N_SE_RULE * c.se:
            return f"HDI_PA of the keys {moved} over training by {c.value:+.3f} ± {c.se:.3f} (from {start:.3f} to {end:.3f})"
        return (
            f"HDI_PA of the keys moved by {c.value:+.3f} ± {c.se:.3f} (from {start:.3f} to {end:.3f}), within "
            f"±{N_SE_RULE * c.se:.3f} ({N_SE_RULE:g} s.e.)"
        )

    return finding


def _tied_finding(path: str):
    """What the tied heads' numbers show: their HDI_PA at initialisation and at the end (0 up to rounding
    when the heads are one), and the change."""

    def finding(results: Results, verdict: str) -> str:
        node = results.at(path)
        c = node["hdi_change"]
        return (
            f"the tied heads' HDI_PA was {node['start'].value:.1e} at initialisation and {node['end'].value:.1e} "
            f"at the end (change {c.value:+.1e} ± {c.se:.1e})"
        )

    return finding


def _stat_finding(path: str, what: str):
    """One clause from the first statistic of the decision at ``path``."""

    def finding(results: Results, verdict: str) -> str:
        stats = results.at(path)["statistics"]
        if not stats:
            return f"{what}: nothing to fit (fewer than two best head sizes inside the grid)"
        q = stats[0]
        return f"{what} = {q.value:+.3f} ± {q.se:.3f}" if q.se is not None else f"{what} = {q.value:.3g}"

    return finding


def _law_finding(path: str):
    def finding(results: Results, verdict: str) -> str:
        node = results.at(path)
        if not node["laws"]:
            return "no law could be fitted (fewer than two best head sizes inside the grid)"
        ps = ", ".join(f"{law} p = {f['p_value']:.3f}" for law, f in node["laws"].items())
        return f"{ps}; the rule's reading: {node['law_word']}"

    return finding


CLAIMS = (
    *(
        Claim(
            f"{GROUP}/heads-apart/{short}",
            f"Training drives attention heads towards orthogonal subspaces (one softmax attention layer trained "
            f"by Adam on in-context regression, {name} Gaussian-process tasks)",
            Decided(f"heads_apart.{name}.free.decision"),
            role=V.PAPER,
            also=(
                f"heads_apart.{name}.free.hdi_circuit_change",
                f"heads_apart.{name}.free.error_corr_change",
                f"heads_apart.{name}.free.mse_change",
                f"heads_apart.{name}.haar",
            ),
            finding=_apart_finding(f"heads_apart.{name}.free"),
        )
        for name, short in FAMILIES
    ),
    *(
        Claim(
            f"{CONTROL_GROUP}/penalty/{short}",
            f"With an orthogonality penalty, the same training drives the heads apart ({name} tasks): the "
            "measurement sees a rise when the loss asks for one",
            Decided(f"heads_apart.{name}.penalised.decision"),
            role=V.CONTROL,
            finding=_apart_finding(f"heads_apart.{name}.penalised"),
        )
        for name, short in FAMILIES
    ),
    *(
        Claim(
            f"{CONTROL_GROUP}/tied/{short}",
            f"Heads with tied weights stay one head: their HDI_PA does not move ({name} tasks)",
            Decided(f"heads_apart.{name}.tied.decision"),
            role=V.CONTROL,
            finding=_tied_finding(f"heads_apart.{name}.tied"),
        )
        for name, short in FAMILIES
    ),
    *(
        Claim(
            f"{GROUP}/head-size-grows/d{D}",
            f"The best head size d_k* of trained attention grows with the context length n (budget D = {D})",
            Decided(f"head_sizes.d{D}.growth_decision"),
            role=V.PAPER,
            finding=_stat_finding(f"head_sizes.d{D}.growth_decision", "slope of log2 d_k* on log2 n"),
        )
        for D in BUDGETS
    ),
    *(
        Claim(
            f"{GROUP}/head-size-law/d{D}",
            f"The best head size of trained attention follows Theorem 6.1's printed law (ln n)^(2/(4+d)) "
            f"rather than chapter 06's M1 law or a constant (budget D = {D})",
            Decided(f"head_sizes.d{D}.law_decision"),
            role=V.PAPER,
            finding=_law_finding(f"head_sizes.d{D}"),
        )
        for D in BUDGETS
    ),
    *(
        Claim(
            f"{GROUP}/local/d{D}",
            f"Trained attention becomes local as the context grows: each head's n_eff/n falls with n (budget "
            f"D = {D}), as the bandwidth reading of Theorem 2.1 requires",
            Decided(f"head_sizes.d{D}.local_decision"),
            role=V.READING,
            also=(f"head_sizes.d{D}.beta_slope",),
            finding=_stat_finding(f"head_sizes.d{D}.local_decision", "slope of log2(n_eff/n) on log2 n"),
        )
        for D in BUDGETS
    ),
)


def paper_and_controls(records) -> tuple[list, list]:
    """The records of the paper's statements and the controls, apart."""
    records = list(records)
    return (
        [r for r in records if r.claim.startswith(f"{GROUP}/")],
        [r for r in records if r.claim.startswith(f"{CONTROL_GROUP}/")],
    )


# --------------------------------------------------------------------------- the paper's sentences


def _pm(q: Q) -> str:
    return f"${q.value:+.3f}\\pm{q.se:.3f}$"


def apart_text(results: Results, by_id: dict) -> str:
    """The heads-apart verdicts per family, with the changes and the controls, one LaTeX sentence."""
    ha = results["heads_apart"]
    parts = []
    for name, short in FAMILIES:
        node = ha[name]
        rec = by_id[f"{GROUP}/heads-apart/{short}"]
        pen = by_id[f"{CONTROL_GROUP}/penalty/{short}"]
        tied = by_id[f"{CONTROL_GROUP}/tied/{short}"]
        parts.append(
            f"for {name} tasks $\\HDIpa$ of the keys changed by {_pm(node['free']['hdi_change'])} "
            f"(from {node['free']['start'].value:.3f} to {node['free']['end'].value:.3f}; Haar level "
            f"{node['haar'].value:.3f}), so the reading {V.predicate(rec.verdict)}; the circuits' $\\HDIpa$ "
            f"changed by {_pm(node['free']['hdi_circuit_change'])}; the penalised heads changed by "
            f"{_pm(node['penalised']['hdi_change'])} (the positive control {V.predicate(pen.verdict)}) and the "
            f"tied heads' check {V.predicate(tied.verdict)}"
        )
    return "; ".join(parts)


def sizes_text(results: Results, by_id: dict) -> str:
    """The head-size verdicts per budget, one LaTeX sentence."""
    hs = results["head_sizes"]
    parts = []
    for D in BUDGETS:
        node = hs[f"d{D}"]
        g = by_id[f"{GROUP}/head-size-grows/d{D}"]
        law = by_id[f"{GROUP}/head-size-law/d{D}"]
        stats = node["growth_decision"]["statistics"]
        slope = f"slope {_pm(stats[0])} per doubling of $n$" if stats else "no slope (too few estimates)"
        best = ", ".join(f"{b['d_k'].value:.2g}" for b in node["best"])
        word = "we cannot tell at this size" if node["law_word"] == "cannot tell" else node["law_word"]
        parts.append(
            f"at $D={D}$ the best head sizes were {best} (from the shortest to the longest context), "
            f"{slope}: growth {V.predicate(g.verdict)}; among the laws, {word}, so the printed law "
            f"{V.predicate(law.verdict)}"
        )
    return "; ".join(parts)


def local_text(results: Results, by_id: dict) -> str:
    """The locality verdicts per budget, one LaTeX sentence."""
    hs = results["head_sizes"]
    parts = []
    for D in BUDGETS:
        node = hs[f"d{D}"]
        rec = by_id[f"{GROUP}/local/d{D}"]
        q = node["local_decision"]["statistics"][0]
        parts.append(
            f"at $D={D}$, $\\log_2(n_{{\\mathrm{{eff}}}}/n)$ changed by {_pm(q)} per doubling of $n$ "
            f"(from {node['neff_mean'][0]:.2f} to {node['neff_mean'][-1]:.2f}) and $\\log_2\\beta$ by "
            f"{_pm(node['beta_slope'])}: locality {V.predicate(rec.verdict)}"
        )
    return "; ".join(parts)


def prose(results: Results, records) -> dict:
    """The section's sentences decided by the numbers and the records."""
    by_id = {r.claim: r for r in records}
    return {
        "apart": Tex(apart_text(results, by_id)),
        "sizes": Tex(sizes_text(results, by_id)),
        "local": Tex(local_text(results, by_id)),
    }
