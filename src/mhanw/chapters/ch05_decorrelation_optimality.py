"""Chapter 05 (Thm 5.1): are orthogonal heads optimal?  Random configurations, a blind head, the IMSE optimum
over head subspaces and the frame bound.

The experiment, as steps (:mod:`mhanw.chapters.base`): random configurations against the orthogonal blocks for
an isotropic and an anisotropic ``m`` (:func:`random`, chapter 04's experiment,
:func:`mhanw.comparisons.random_configuration_imse`, run with this chapter's seed); identical, shared and
orthogonal heads for a signal along ``e_1`` only, where orthogonality makes one head blind (:func:`blind`);
the Monte Carlo IMSE minimised over head subspaces against the best mutually orthogonal heads
(:func:`optimum`); the frame bound reached by projected gradient ascent (:func:`frame`,
:func:`mhanw.diversity.maximize_hdi`).  The theorem as a whole is not a record: the ledger computes its
headline from these records.  The IMSE over head subspaces and its descent are :mod:`mhanw.comparisons`
(:func:`~mhanw.comparisons.crn_batch`, :func:`~mhanw.comparisons.imse_and_gradient`,
:func:`~mhanw.comparisons.minimize_imse`).  The records are declared by
:func:`declared` (one per optimum regression) and decided in the steps (the ``*_decision`` functions, read
with ``Decided``); the figure, its caption and the sentence under it are
:mod:`mhanw.chapters.ch05_figures`.
"""

from __future__ import annotations

import numpy as np

from .. import comparisons as C
from .. import data as _data
from ..comparisons import ImseOptimum, candidate_starts, crn_batch, imse_and_gradient, minimize_imse
from ..constants import IMSE_RESOLUTION_PCT, MAX_REPLICATES, N_SE
from ..diversity import hdi_upper_bound, head_diversity_index
from ..heads import HeadConfig
from ..infra import params as _P
from ..infra import verdicts as V
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import Claim, Decided, decide_all
from ..infra.texout import tex_text
from ..infra.validate import positive_int
from ..infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, direction_words, significant_effect, verdict_words
from .base import Context, step
from .ch04_head_diversity_index import REGRESSION_LABELS, SHARED_PARAMETERS, regression_label

__all__ = [
    "CONSTRAINTS",
    "PARAMETERS",
    "RESOLUTION_PCT",
    "SECTION",
    "SIZES",
    "STEPS",
    "STREAMS",
    "blind",
    "blind_configurations",
    "blind_decision",
    "claims",
    "declared",
    "frame",
    "frame_decision",
    "frame_shapes_decision",
    "model_of",
    "no_better_decision",
    "optimum",
    "optimum_search",
    "optimum_slug",
    "prose",
    "random",
    "reading_premises",
    "records_on",
]

SECTION = "sec:thm51"

#: A "holds" that rests on finding no better configuration needs a run that could see a gain of this
#: size (per cent of the IMSE, 3 paired s.e.): :data:`mhanw.constants.IMSE_RESOLUTION_PCT`.
RESOLUTION_PCT = IMSE_RESOLUTION_PCT

#: The frame bound counts as reached when every start ends within this distance of it: the ascent is
#: deterministic, so the only error is the optimiser's, and 1e-3 is far below any HDI difference we read.
FRAME_TOL = 1e-3

#: An ascent step may exceed the bound only by rounding (the bound is a theorem).
EXACT_TOL_FRAME = 1e-12


def blind_configurations() -> dict:
    """Thm 5.1, the blind-head counterexample: two heads in ``R^4``, ``d_k = 2``, signal along ``e_1``.

    - ``"identical"``: ``span{e1, e2}`` twice (HDI_PA 0);
    - ``"shared"``: ``(span{e1, e2}, span{e1, e3})``, both heads see ``e_1`` (HDI_PA 1/2);
    - ``"orthogonal"``: ``(span{e1, e2}, span{e3, e4})``, the second head is blind (HDI_PA 1).

    Returns a dict of arrays ``(2, 4, 2)`` in this order.
    """
    e = np.eye(4)  # columns e_1 .. e_4
    first = e[:, [0, 1]]
    return {
        "identical": np.stack([first, first]),
        "shared": np.stack([first, e[:, [0, 2]]]),
        "orthogonal": np.stack([first, e[:, [2, 3]]]),
    }


def optimum_search(free: ImseOptimum, candidate_loss: float, n_given: int, n_steps: int) -> V.Search:
    """The budget and convergence of the descent ``free`` (:func:`minimize_imse` with the
    ``n_given`` starts of :func:`candidate_starts` first) against the known candidate's IMSE on the
    same batch, ``candidate_loss``; ``n_steps`` is the step budget of each start."""
    n_steps = positive_int(n_steps, "n_steps", minimum=0, maximum=MAX_REPLICATES, what="steps")
    return V.Search(
        what="IMSE descent over free heads",
        starts=len(free.losses),
        known_starts=min(1, n_given),
        perturbed_starts=max(0, n_given - 1),
        steps=n_steps,
        best=free.loss,
        known=candidate_loss,
        unit="IMSE on the optimisation batch",
    )


def reading_premises(model, configs) -> tuple[tuple, bool]:
    """The premises a no-better-than-orthogonal record rests on, and whether it can only refute.

    For an isotropic ``m`` (:func:`mhanw.premises.isotropic_m`) the record is the isotropic reading
    of Thm 5.1 and rests on the same premises as chapter 4's (:func:`isotropic_premises
    <mhanw.comparisons.isotropic_premises>`: rotation-invariant inputs and noise,
    orthonormal heads averaged uniformly): ``(premises, False)``.  For any other ``m`` it tests the
    unconditional statement, which a counterexample refutes and no finite search proves:
    ``(heads premises, True)``."""
    from .. import premises as P

    if P.isotropic_m(model).holds:
        return C.isotropic_premises([model], configs), False
    hc = [c if isinstance(c, HeadConfig) else HeadConfig(c) for c in configs]
    return tuple(p for c in hc for p in (P.orthonormal_heads(c), P.uniform_averaging(c))), True


# --------------------------------------------------------------------------- the parameters

#: The chapter's parameters (checked by :func:`mhanw.infra.params.check_parameters`).  The blind-head
#: configurations fix their shape (d = 4, d_k = 2, H = 2); the frame bound needs no data.
PARAMETERS = {
    **_P.STANDARD,
    "n_jobs": _P.workers(),
    "isotropic_regression": _P.regression(dimension="random_d"),
    "anisotropic_regression": _P.regression(dimension="random_d"),
    "blind_regression": _P.regression(dimension=4),
    "optimum_regressions": _P.sequence(_P.regression(dimension="optimum_d")),
    **SHARED_PARAMETERS,
    "optimum_d": _P.positive_int(2, 256, why="64 times the default 4: the optimiser searches d x d_k heads"),
    "optimum_d_k": _P.positive_int(1, 256, at_most="optimum_d", why="the largest optimum_d"),
    "optimum_H": _P.positive_int(2, 256, why="the largest optimum_d"),
}
CONSTRAINTS = (
    _P.product_at_most(("random_H", "random_d_k"), "random_d"),
    _P.product_at_most(("optimum_H", "optimum_d_k"), "optimum_d"),
)

#: The Monte Carlo sizes at each fidelity: random configurations and their replicates, replicates of the
#: blind heads, starts and steps of the frame ascent (and starts for the other shapes), the IMSE optimum's
#: batch (replicates, test points), starts, perturbed candidates and descent steps, and the fresh replicates
#: and test points that evaluate it.
SIZES = dict(
    quick=dict(
        n_configs=12,
        random_rep=150,
        blind_rep=200,
        frame_starts=20,
        frame_steps=150,
        other_starts=3,
        opt_rep=6,
        opt_test=60,
        opt_starts=1,
        opt_perturbed=2,
        opt_steps=10,
        eval_rep=100,
        eval_test=200,
    ),
    paper=dict(
        n_configs=24,
        random_rep=400,
        blind_rep=400,
        frame_starts=20,
        frame_steps=300,
        other_starts=10,
        opt_rep=16,
        opt_test=100,
        opt_starts=2,
        opt_perturbed=2,
        opt_steps=30,
        eval_rep=300,
        eval_test=200,
    ),
)

#: The experiments fed by the children of ``SeedSequence(seed)``, in spawn order.
STREAMS = ("random configurations", "blind heads", "frame ascent", "IMSE optimum")

#: Test points per replicate of the random configurations and of the blind heads.
RANDOM_TEST, BLIND_TEST = 200, 300

#: The shapes ``(d, d_k, H)`` of the frame ascent besides four lines in R^3 (one with ``H d_k <= d``), their
#: steps, and two planes in R^3, for which no tight fusion frame exists.
OTHER_SHAPES = ((5, 2, 4), (6, 2, 5), (6, 2, 3))
OTHER_STEPS = 300
PLANES = (3, 2, 2)


def model_of(ctx: Context, regression):
    """The data model of the regression function ``regression`` with the run's inputs, noise and sigma."""
    p = ctx.params
    return _data.data_model(regression, p.inputs, p.noise, p.sigma)


def _fresh(ctx: Context, stream: str) -> np.random.SeedSequence:
    """The named stream as it was spawned (a copy: what spawns from it does not advance the run's)."""
    s = ctx.streams[stream]
    return np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key, pool_size=s.pool_size)


# --------------------------------------------------------------------------- the decisions


def no_better_decision(rel: Q, refute_only: bool, criterion: str, extra=(), search=None) -> dict:
    """Thm 5.1 against one comparison: ``rel`` is the IMSE of the best other configuration relative to the
    orthogonal one (per cent, paired s.e.).  Fails when it is lower by 3 s.e.; otherwise, for the isotropic
    reading (``refute_only`` false), holds under them when the run could have seen a
    gain of :data:`RESOLUTION_PCT` and, for an optimum, the ``search`` reached the orthogonal heads
    (:func:`mhanw.infra.verdicts.search_verdict`); undecided otherwise, and always for an ``m`` outside the
    isotropic reading (``refute_only``: a finite search refutes, never proves).  ``extra``: further
    statistics (quantities) the record reports.  Read by :class:`mhanw.infra.rules.Decided`; the record's
    premises (:func:`reading_premises`) are in the results next to it."""
    detectable = N_SE * rel.se
    if rel.value < -detectable:
        verdict = FAILS
    elif refute_only:
        verdict = UNDECIDED
    else:
        verdict = V.power_verdict(HOLDS_UNDER, detectable, RESOLUTION_PCT)
    if search is not None:
        verdict = V.search_verdict(verdict, search)
    rule = (
        "below -3 s.e. fails; otherwise undecided (an anisotropic m: only a counterexample decides)"
        if refute_only
        else f"below -3 s.e. fails; otherwise holds when 3 s.e. <= {RESOLUTION_PCT:g} % (the run could see such "
        "a gain)"
        + (" and the descent reached the orthogonal heads on its batch" if search is not None else "")
        + ", else undecided"
    )
    return {
        "verdict": verdict,
        "criterion": f"{criterion}: {rule}",
        "statistics": (rel, *extra),
        "detectable": None if refute_only else detectable,
        "tolerance": None if refute_only else RESOLUTION_PCT,
        "unit": "" if refute_only else "%",
        "search": search,
    }


def blind_decision(difference: Q) -> dict:
    """Signal along e_1 only, averaging: orthogonal heads beat heads that share e_1 (Thm 5.1 predicts it),
    from ``difference`` = IMSE(orthogonal) - IMSE(shared) with its paired s.e., at 3 s.e."""
    d, se = difference.value, difference.se
    return {
        "verdict": significant_effect(d, se, sign=-1),
        "criterion": "IMSE(orthogonal) - IMSE(shared): below -3 s.e. holds, above +3 s.e. fails",
        # no z-score for an exact (zero s.e.) difference
        "statistics": (difference,) + ((Q(d / se, label="z"),) if se > 0 else ()),
    }


def frame_decision(gap: Q, overshoot: Q, tightness: Q) -> dict:
    """Four lines in R^3 reach the frame bound 8/9 (a tight fusion frame exists): holds when every start ends
    within :data:`FRAME_TOL` of the bound (``gap``) and no step exceeds it by more than rounding
    (``overshoot`` at most :data:`EXACT_TOL_FRAME`), else fails."""
    bad = gap.value > FRAME_TOL or overshoot.value > EXACT_TOL_FRAME
    return {
        "verdict": FAILS if bad else HOLDS,
        "criterion": f"every start within {FRAME_TOL:g} of the bound and no step above it",
        "statistics": (gap, overshoot, tightness),
        "detectable": None if bad else FRAME_TOL,
    }


def frame_shapes_decision(best: Q, bound: Q) -> dict:
    """The frame bound is attained for every shape: fails when the best HDI_PA of two planes in R^3 stays
    below the bound by more than :data:`FRAME_TOL` (they share a line), else holds."""
    bad = best.value < bound.value - FRAME_TOL
    return {
        "verdict": FAILS if bad else HOLDS,
        "criterion": f"best HDI_PA of two planes in R^3 against the bound {bound.value:.4f}, tolerance {FRAME_TOL:g}",
        "statistics": (best, bound),
        "detectable": None if bad else FRAME_TOL,
    }


# --------------------------------------------------------------------------- the steps


def _random_part(result, cfg, premises, refute_only: bool) -> dict:
    """One regression function over the random configurations: each configuration's IMSE against the
    orthogonal blocks (relative, z-score of the paired difference), the best other one, the counts of
    configurations significantly better and worse, the blocks' rank, the Spearman correlation of HDI_PA and
    IMSE, and the decision."""
    o = cfg.orthogonal
    others = np.arange(len(cfg.hdi)) != o
    rel, rel_se = result.relative_to(o)  # IMSE(c) / IMSE(orthogonal) - 1
    z = result.differences_from(o).z  # IMSE(c) - IMSE(orthogonal), in paired s.e. (NaN for o itself)
    best = int(np.flatnonzero(others)[np.argmin(rel[others])])
    n_better = int(np.sum(z[others] < -N_SE))
    rho = C.rank_correlation(cfg.hdi, result)
    best_rel = Q(100 * rel[best], 100 * rel_se[best], unit="%", label="best other vs orthogonal")
    spearman = Q(rho, digits=2, label="Spearman correlation")
    better = Q(n_better, label="configurations significantly better")
    return {
        **dict(imse=result.mean, se=result.se, rel=rel, rel_se=rel_se, z=z, best_index=best),
        "rho": spearman,
        "best_rel": best_rel,
        "best_hdi": Q(cfg.hdi[best], digits=2),
        "min_z": Q(float(z[others].min()), digits=2),
        "n_better": n_better,
        "n_worse": int(np.sum(z[others] > N_SE)),
        "orth_rank": int(np.sum(result.mean < result.mean[o])) + 1,
        "premises": premises,
        "decision": no_better_decision(
            best_rel,
            refute_only,
            "the best other configuration against the orthogonal blocks, 3 paired s.e.",
            (spearman, better),
        ),
    }


@step
def random(ctx: Context) -> dict:
    """Part 2: random configurations (interpolated heads and the orthogonal blocks, chapter 04's experiment:
    :func:`mhanw.comparisons.random_configuration_imse`) for the isotropic and the anisotropic ``m`` on the
    same replicates; for each, the comparison with the orthogonal blocks and its decision, resting on the
    premises of :func:`reading_premises`."""
    p, s = ctx.params, ctx.sizes
    iso, aniso = p.isotropic_regression, p.anisotropic_regression
    models = {iso: model_of(ctx, iso), aniso: model_of(ctx, aniso)}
    rule = C.rule_options(p.random_rule)
    cfg, res = C.random_configuration_imse(
        [iso, aniso],
        s["n_configs"],
        _fresh(ctx, "random configurations"),
        n=p.random_n,
        n_test=RANDOM_TEST,
        n_rep=s["random_rep"],
        bandwidth=p.random_bandwidth,
        d=p.random_d,
        d_k=p.random_d_k,
        n_heads=p.random_H,
        n_jobs=p.n_jobs,
        data=models,
        **rule,
    )
    heads = [HeadConfig(W, bandwidth=p.random_bandwidth, **rule) for W in cfg.projections]
    parts = {
        role: _random_part(res[m], cfg, *reading_premises(models[m], heads))
        for role, m in (("iso", iso), ("aniso", aniso))
    }
    for role, m in (("iso", iso), ("aniso", aniso)):
        parts[role]["m"] = m
        parts[role]["label"] = Tex(regression_label(m))
    return {
        "n_configs": len(cfg.hdi),
        "n_others": len(cfg.hdi) - 1,
        "hdi": cfg.hdi,
        "t": cfg.t,
        "orthogonal": cfg.orthogonal,
        **parts,
        "data": Raw({"configs": cfg, "results": res}),
    }


@step
def blind(ctx: Context) -> dict:
    """Part 3, the counterexample: identical, shared and orthogonal heads (:func:`blind_configurations`) for
    ``blind_regression``, a signal along e_1 only, each combined by averaging and by the additive rule; their
    IMSE, the paired differences the text reads and the decision on "orthogonal beats shared heads"."""
    from .. import montecarlo

    p = ctx.params
    cfgs = blind_configurations()
    hdi = {k: head_diversity_index(W) for k, W in cfgs.items()}
    configs = [
        HeadConfig(W, rule=rule, label=f"{k}, {rule}", bandwidth=p.bandwidth)
        for rule in ("average", "sum")
        for k, W in cfgs.items()
    ]
    res = montecarlo.integrated_mse(
        configs,
        model_of(ctx, p.blind_regression),
        n=p.n,
        n_test=BLIND_TEST,
        n_rep=ctx.sizes["blind_rep"],
        seed=_fresh(ctx, "blind heads"),
        n_jobs=p.n_jobs,
    )
    idx = {c.label: i for i, c in enumerate(configs)}

    def diff(a: str, b: str, rule: str, label: str) -> Q:
        return Q.of(res.paired_difference(idx[f"{a}, {rule}"], idx[f"{b}, {rule}"]), label=label)

    imse = {
        rule: {k: Q(res.mean[idx[f"{k}, {rule}"]], res.se[idx[f"{k}, {rule}"]]) for k in cfgs}
        for rule in ("average", "sum")
    }
    d_os = diff("orthogonal", "shared", "average", "orthogonal minus shared")
    d_oi = diff("orthogonal", "identical", "average", "orthogonal minus identical")
    d_si = diff("shared", "identical", "average", "shared minus identical")
    d_sum = diff("orthogonal", "shared", "sum", "orthogonal minus shared, additive rule")
    return {
        "regression": Tex(regression_label(p.blind_regression)),
        "hdi": hdi,
        "labels": [c.label for c in configs],
        "imse": imse,
        "orth_minus_shared": d_os,
        "orth_minus_shared_z": Q(d_os.value / d_os.se, digits=3),
        "orth_minus_identical": d_oi,
        "orth_minus_identical_z": Q(d_oi.value / d_oi.se, digits=3),
        "shared_minus_identical": d_si,
        "shared_minus_identical_z": Q(d_si.value / d_si.se, digits=2),
        "sum_orth_minus_shared": d_sum,
        "sum_orth_minus_shared_z": Q(d_sum.value / d_sum.se, digits=3),
        "decision": blind_decision(d_os),
        "data": Raw({"result": res, "index": idx}),
    }


def optimum_slug(m, k: int) -> str:
    """The claim id's last part for the ``k``-th optimum regression ``m``: its catalogue name with ``-`` for
    ``_``, or ``m1``, ``m2``, ... for a formula."""
    return m.replace("_", "-") if m in REGRESSION_LABELS else f"m{k + 1}"


@step
def optimum(ctx: Context) -> dict:
    """Part 4: for each of ``optimum_regressions`` (keys ``m1``, ``m2``, ... in order), the IMSE minimised over
    free head subspaces (:func:`mhanw.comparisons.minimize_imse` from the best orthogonal heads, perturbations
    of them (:func:`mhanw.comparisons.candidate_starts`) and Haar starts) against the best mutually orthogonal heads (the coordinate
    blocks when the data law is rotation invariant, else found by a descent that keeps the heads mutually
    orthogonal), both evaluated on fresh replicates; the descent's budget and convergence
    (:func:`optimum_search`) and the decision.  Each regression replays the streams of the chapter's first
    runs: child ``k (K + 1)`` of each of the three children of the stream (batch, starts, evaluation)."""
    from .. import heads, montecarlo, premises

    p, s = ctx.params, ctx.sizes
    K = len(p.optimum_regressions)
    batches, starts, evals = (child.spawn(K * K) for child in _fresh(ctx, "IMSE optimum").spawn(3))
    out: dict = {}
    for k, m in enumerate(p.optimum_regressions):
        model, j = model_of(ctx, m), k * (K + 1)
        batch = crn_batch(model, p.n, s["opt_test"], s["opt_rep"], p.optimum_d, batches[j])
        rng = np.random.default_rng(starts[j])
        if all(q.holds for q in premises.rotation_invariant_data(model)):  # all orthogonal heads: one IMSE
            orth_W = heads.orthogonal_heads(p.optimum_d, p.optimum_d_k, p.optimum_H)
        else:  # the best mutually orthogonal heads, by descent on one Stiefel manifold
            orth_W = minimize_imse(
                batch, p.optimum_H, p.optimum_d_k, p.bandwidth, rng, n_starts=1, n_steps=s["opt_steps"], orthogonal=True
            ).projections
        given = candidate_starts(orth_W, rng, s["opt_perturbed"])
        free = minimize_imse(
            batch,
            p.optimum_H,
            p.optimum_d_k,
            p.bandwidth,
            rng,
            n_starts=s["opt_starts"],
            n_steps=s["opt_steps"],
            starts=given,
        )
        known = imse_and_gradient(orth_W, batch, p.bandwidth, gradient=False)[0]
        search = optimum_search(free, known, len(given), s["opt_steps"])
        fresh = montecarlo.integrated_mse(
            [free.projections, orth_W],
            model,
            n=p.n,
            n_test=s["eval_test"],
            n_rep=s["eval_rep"],
            seed=evals[j],
            bandwidth=p.bandwidth,
            n_jobs=p.n_jobs,
        )
        rel = fresh.relative_to(1)
        rel_q = Q(100 * float(rel.mean[0]), 100 * float(rel.se[0]), unit="%", label="best other vs orthogonal")
        hdi = Q(free.hdi, digits=2, label="HDI_PA of the optimum")
        on_batch = Q(
            100 * (search.best - search.known) / abs(search.known) if search.known else 0.0,
            unit="%",
            label="descent's best against the orthogonal heads, on its batch",
        )
        prem, refute_only = reading_premises(model, [free.projections, orth_W])
        difference = Q.of(fresh.paired_difference(0, 1), label="IMSE(optimum) - IMSE(best orthogonal)")
        out[f"m{k + 1}"] = {
            "m": m,
            "slug": optimum_slug(m, k),
            "label": Tex(regression_label(m)),
            "rel": rel_q,
            "difference": difference,
            "z": Q(difference.z, digits=2),
            "hdi": hdi,
            "angles": ", ".join(f"{a:.0f}" for a in np.degrees(free.angles).ravel()),
            "projections": free.projections,
            "angles_rad": free.angles,
            "losses": free.losses,
            "trace": free.trace,
            "orthogonal": orth_W,
            "imse": fresh.mean,
            "se": fresh.se,
            "premises": prem,
            "search": search,
            "decision": no_better_decision(
                rel_q,
                refute_only,
                "the optimum over free heads against the best orthogonal heads on fresh replicates, 3 paired s.e.",
                (hdi, on_batch),
                search=search,
            ),
        }
    return {"n": K, **out}


@step
def frame(ctx: Context) -> dict:
    """Part 5: projected gradient ascent of HDI_PA (:func:`mhanw.diversity.maximize_hdi`) for four lines in
    R^3 from ``frame_starts`` Haar starts against the frame bound 8/9, for :data:`OTHER_SHAPES` against theirs,
    and for two planes in R^3, where no tight fusion frame exists; the decisions on the bound."""
    from ..diversity import maximize_hdi

    s = ctx.sizes
    rng = ctx.rng("frame ascent")
    lines = maximize_hdi(3, 1, 4, rng, n_starts=s["frame_starts"], n_steps=s["frame_steps"])
    bound = hdi_upper_bound(3, 1, 4)
    other = {sh: maximize_hdi(*sh, rng, n_starts=s["other_starts"], n_steps=OTHER_STEPS) for sh in OTHER_SHAPES}
    other_gap = {sh: float(hdi_upper_bound(*sh) - r.hdi.max()) for sh, r in other.items()}
    planes = maximize_hdi(*PLANES, rng, n_starts=s["other_starts"], n_steps=OTHER_STEPS)
    gap = Q(float(np.abs(lines.hdi - bound).max()), digits=2, label="largest distance of a start from the bound")
    overshoot = Q(float(lines.trace.max() - bound), label="largest excess over the bound")
    tight = Q(float(lines.tightness.max()), digits=2, label="largest |sum P_j - (4/3) I|")
    planes_best = Q(float(planes.hdi.max()), digits=4, label="two planes in R^3: best HDI_PA")
    planes_bound = Q(hdi_upper_bound(*PLANES), digits=4, label="frame bound")
    return {
        "bound": Q(bound, digits=6),
        "hdi": lines.hdi,
        "tightness": lines.tightness,
        "gap": gap,
        "overshoot": overshoot,
        "tight": tight,
        "other": {
            "x".join(map(str, sh)): {"bound": hdi_upper_bound(*sh), "best": float(r.hdi.max())}
            for sh, r in (*other.items(), (PLANES, planes))
        },
        "other_gap": Q(max(other_gap.values()), digits=2),
        "planes_best": planes_best,
        "planes_bound": planes_bound,
        "decision": frame_decision(gap, overshoot, tight),
        "shapes_decision": frame_shapes_decision(planes_best, planes_bound),
        "data": Raw({"lines": lines, "trace": lines.trace}),
    }


STEPS = (random, blind, optimum, frame)

# --------------------------------------------------------------------------- the records


def _no_better_finding(path: str):
    """What the numbers show for a no-better-than-orthogonal record whose comparison is at ``path``."""

    def finding(results: Results, verdict: str) -> str:
        q = results.at(path)
        if verdict == FAILS:
            return (
                f"a configuration beats the orthogonal heads: its IMSE is {q.value:+.1f} ± {q.se:.1f} % against theirs"
            )
        return f"no configuration beats the orthogonal heads by 3 paired s.e. (the best other {q.value:+.1f} ± {q.se:.1f} %)"

    return finding


def _blind_finding(results: Results, verdict: str) -> str:
    q = results.at("blind.orth_minus_shared")
    word = direction_words(
        q.value, q.se, positive="higher than", negative="lower than", neither="not significantly different from"
    )
    return (
        f"with the signal along e_1 only and averaging, orthogonal heads, one of them blind to the signal, "
        f"have an IMSE {word} that of heads that share e_1 (orthogonal minus shared {q.value:+.3g} ± {q.se:.2g})"
    )


def declared(results: Results, only=None) -> list:
    """The chapter's records as :class:`mhanw.infra.rules.Claim` declarations, one per optimum regression of
    ``results`` (``results["optimum"]``), in the order of the ledger (``only``: those ids alone)."""
    out = [
        Claim(
            f"thm-5.1/random-{name}",
            lambda r, role=role: (
                "The orthogonal blocks have the lowest IMSE among the random configurations "
                f"({r.at(f'random.{role}.label')})"
            ),
            Decided(f"random.{role}.decision"),
            role=V.PAPER,
            premises=f"random.{role}.premises",
            finding=_no_better_finding(f"random.{role}.best_rel"),
        )
        for role, name in (("iso", "isotropic"), ("aniso", "anisotropic"))
    ]
    out.append(
        Claim(
            "thm-5.1/blind-head",
            "With the signal along e_1 only, orthogonal heads beat heads that share e_1 (averaging)",
            Decided("blind.decision"),
            role=V.PAPER,
            finding=_blind_finding,
        )
    )
    opt = results["optimum"] if "optimum" in results else {"n": 0}
    for k in range(opt["n"]):
        at = f"optimum.m{k + 1}"
        out.append(
            Claim(
                f"thm-5.1/imse-optimum/{opt[f'm{k + 1}']['slug']}",
                f"No head configuration has a lower IMSE than the best orthogonal one ({opt[f'm{k + 1}']['label']})",
                Decided(f"{at}.decision"),
                role=V.PAPER,
                premises=f"{at}.premises",
                finding=_no_better_finding(f"{at}.rel"),
            )
        )
    out += [
        Claim(
            "thm-5.1/frame-bound",
            "When H d_k > d the largest HDI_PA is the frame bound (four lines in R^3: 8/9)",
            Decided("frame.decision"),
            role=V.DERIVATION,
        ),
        Claim(
            "thm-5.1/frame-bound-every-shape",
            "The frame bound is attained for every shape with H d_k > d",
            Decided("frame.shapes_decision"),
            role=V.DERIVATION,
        ),
    ]
    return out if only is None else [c for c in out if c.id in only]


def claims(results: Results) -> list:
    """The chapter's records decided on ``results`` (:func:`declared`)."""
    return decide_all(declared(results), results, chapter="05_decorrelation_optimality", section=SECTION)


def records_on(results: Results, ids) -> list:
    """The declared records ``ids`` decided on ``results`` (which need hold only the steps they read), in the
    order of ``ids``: the theorem's parts, or one record a sentence states before the chapter closes."""
    by_id = {c.id: c for c in declared(results, only=ids)}
    return [by_id[i].decide(results, chapter="05_decorrelation_optimality", section=SECTION) for i in ids]


def prose(results: Results, records) -> dict:
    """The section's words decided by the numbers: how many random configurations beat the orthogonal blocks
    (isotropic ``m``), the directions of the blind heads' and the optima's paired comparisons at 3 s.e., and the
    verdict of each optimum's record by its position in ``optimum_regressions`` (``verdict_m1``, ...: the words
    ``\\verdictword`` prints for it)."""
    n_better = results.at("random.iso.n_better")
    b = results["blind"]

    def words(q: Q, lower: str, higher: str, same: str) -> str:
        return direction_words(q.value, q.se, positive=higher, negative=lower, neither=same)

    out = {
        "iso_better": "no random configuration is"
        if n_better == 0
        else "one random configuration is"
        if n_better == 1
        else f"{n_better} random configurations are",
        "shared_vs_identical": words(
            b["shared_minus_identical"], "beat", "lose to", "do not differ significantly from"
        ),
        "sum_orth_vs_shared": words(b["sum_orth_minus_shared"], "lower", "higher", "not significantly different"),
    }
    opt = results["optimum"]
    by_id = {r.claim: r for r in records}
    for k in range(opt["n"]):
        o = opt[f"m{k + 1}"]
        out[f"direction_m{k + 1}"] = words(
            o["difference"], "lower than", "higher than", "not significantly different from"
        )
        record = by_id.get(f"thm-5.1/imse-optimum/{o['slug']}")
        if record is not None:  # the paper names the optima by position: m1, m2, ... of optimum_regressions
            out[f"verdict_m{k + 1}"] = Tex(tex_text(verdict_words(record) if record.outside else record.verdict))
    return out
