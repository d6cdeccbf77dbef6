"""Chapter 09 (beyond the paper): the head diversity of a trained transformer.

The paper proposes the head diversity index (HDI) as a diagnostic computable from trained weights and
reports it for no model.  The experiment, as steps (:mod:`mhanw.chapters.base`): the model and the sizes
of the run (:func:`setting`), the HDI of each layer (:func:`layers`), independent Haar heads
(:func:`haar`), the row-reassignment null (:func:`row_null`), the two spectrum-matched nulls and the
count of cases beyond chance (:func:`spectral_nulls`), the principal-cosine spectrum of head pairs
against the nulls (:func:`spectra`), what the printed formula measures (:func:`printed`) and the
ablation of single heads (:func:`ablation`).  The computations on the weights are
:mod:`mhanw.pretrained`; the HDI itself is :mod:`mhanw.diversity`; the figures and the appendix's table
are :mod:`mhanw.chapters.ch09_figures`.  Its records are declared in :data:`CLAIMS`.
"""

from __future__ import annotations

import numpy as np

from .. import diversity, pretrained
from ..diversity import NORMALIZATIONS
from ..infra import params as P
from ..infra.prose import count_of, join_list, ranges
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import AtMost, Claim, Decided
from ..infra.validate import brief
from ..infra.verdicts import (
    DERIVATION,
    FAILS,
    HOLDS,
    N_SE,
    PAPER,
    READING,
    UNDECIDED,
    deciding_entry,
    guard,
    predicate,
    significant_effect,
)
from ..pretrained import OBJECTS
from .base import Context, step

SECTION = "sec:pretrained"

#: The column of the principal-angle HDI in every table of :data:`mhanw.diversity.NORMALIZATIONS` order.
PA = NORMALIZATIONS.index("principal_angles")

#: A case is "more" ("less") diverse than chance at z >= Z_CALL (z <= -Z_CALL) against a null:
#: the project's 3-s.e. rule (a two-sided false alarm near 0.3% per case for a normal null).
Z_CALL = 3.0
#: The specialisation reading fails when MORE than this share of the (layer, object) cases is
#: significantly less diverse than chance (and holds when more than this share is more diverse and
#: none less): the claim speaks of trained heads in general, so a majority decides.
MAJORITY = 0.5
#: "Mostly the weights' scale": log S explains more than half of the variance of
#: ln(1 - HDI_printed) across the cases, by more than N_SE bootstrap standard errors.
R2_MOSTLY = 0.5
#: A model-preserving rescaling may move an index by rounding only: float64 on values of order 1.
INVARIANCE_TOL = 1e-9
#: The pruning reading needs a within-layer Spearman correlation of at least this size (negative):
#: Cohen's "large" correlation, the least at which one score orders a layer's heads usefully
#: (it explains a quarter of the variance of the ranks).  The reading fails when the data exclude it.
RHO_USEFUL = -0.5
#: "A few shared directions": the leading 4 of the d_k = 32 principal angles (one eighth).
N_LEADING = 4
#: The rescalings ``W_Q -> c W_Q``, ``W_K -> W_K / c`` along which the printed HDI is evaluated.
C_GRID = np.geomspace(0.5, 2.0, 25)
#: Bootstrap resamples of the (layer, object) cases for the R^2 of the scale.
N_BOOT = 2000
#: The claim of the diversity record: a measurement of this one trained model (its heads against
#: chance), not the training claim itself, which chapter 10 decides per setting by training heads.
DIVERSITY_CLAIM = "pretrained/heads-more-diverse-than-chance"

#: The null models, by their key in the results and the words the text gives them.
NULLS = {"row": "row reassignment", "layer_spectrum": "layer spectrum", "head_spectrum": "head spectrum"}

# --------------------------------------------------------------------------- the chapter's parameters

#: The most sentences of one run: ten times the 50 shipped (the ablation takes about 0.6 s per sentence).
MAX_SENTENCES = 500


def _sentences_kind() -> P.Kind:
    """``None`` (the shipped sentences) or a list of 3 to :data:`MAX_SENTENCES` distinct non-empty strings
    (a repeated sentence would count as independent evidence in the standard errors over sentences)."""

    def check(value, name):
        if value is None:
            return None
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise P.ParameterError(f"{name}: expected None or a list of sentences, got {brief(value)}")
        if len(value) < 3 or not all(isinstance(v, str) and v.strip() for v in value):
            raise P.ParameterError(f"{name}: expected at least 3 non-empty sentences (strings)")
        if len(value) > MAX_SENTENCES:
            raise P.ParameterError(
                f"{name}: expected at most {MAX_SENTENCES} sentences (ten times the 50 shipped; "
                f"the ablation encodes each once per head), got {len(value)}"
            )
        if len({v.strip() for v in value}) < len(value):
            raise P.ParameterError(
                f"{name}: expected distinct sentences (a repeat would count twice in the "
                f"standard errors over sentences)"
            )
        return tuple(value)

    return P.Kind("None (the shipped sentences) or a list of >= 3 sentences", check)


PARAMETERS = {
    **P.STANDARD,
    "model": P.choice(*sorted(pretrained.MODELS)),
    "n_perm": P.optional(P.positive_int(2, 50_000, why="100 times the paper's 500")),
    "n_spectral": P.optional(P.positive_int(2, 5_000, why="100 times the paper's 50")),
    "n_haar": P.optional(P.positive_int(2, 20_000, why="100 times the paper's 200")),
    "n_sentences": P.optional(P.positive_int(3, 50, why="the 50 shipped sentences")),
    "n_perm_spearman": P.optional(P.positive_int(2, 2_000_000, why="100 times the paper's 20000")),
    "sentences": _sentences_kind(),
}
#: The sentences are either the shipped ones (how many: ``n_sentences``) or the user's own, not both.
CONSTRAINTS = (
    P.require(
        "n_sentences",
        lambda p: p["n_sentences"] is None or p["sentences"] is None,
        "n_sentences left as None when sentences are given (their number is len(sentences))",
    ),
)

#: The size parameters that override :data:`SIZES` when not ``None``.
SIZE_PARAMETERS = ("n_perm", "n_spectral", "n_haar", "n_sentences", "n_perm_spearman")

#: Sizes by fidelity: permutations of the row null per layer, draws of the layer-spectrum null per
#: layer, Haar draws, how many of the shipped sentences, permutations of the Spearman test, and the
#: number of null draws whose principal-cosine spectra are kept.
SIZES = {
    "quick": dict(n_perm=20, n_spectrum=20, n_haar=10, n_sentences=10, n_perm_spearman=2000, n_spectral=20),
    "paper": dict(n_perm=500, n_spectrum=100, n_haar=200, n_sentences=50, n_perm_spearman=20000, n_spectral=50),
}
#: The random streams: Haar baseline, row null, Spearman tests, layer-spectrum null, head-spectrum null,
#: R^2 bootstrap.
STREAMS = ("haar", "row_null", "spearman", "layer_null", "head_null", "bootstrap")


def _spawn(ctx: Context, stream: str, n: int) -> list:
    """``n`` children of the named stream, the same at every call (spawned from a fresh copy)."""
    s = ctx.streams[stream]
    return np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key, pool_size=s.pool_size).spawn(n)


def _call(z: float) -> str:
    """A case against one null: ``"more"`` (diverse than chance) at ``z >= Z_CALL``, ``"less"`` at
    ``z <= -Z_CALL``, else ``"indistinguishable"``."""
    return "more" if z >= Z_CALL else "less" if z <= -Z_CALL else "indistinguishable"


def _pm(value: float, se: float, digits: int = 2) -> dict:
    """A value and its standard error as the text prints them: ``value`` to ``digits`` digits, ``se`` to
    one; a share that is not estimable (NaN, :func:`mhanw.pretrained.excess_spectrum_summary`) in words."""
    if np.isnan(value):
        return {"value": Tex(r"\mbox{not estimable}"), "se": Tex(r"\mbox{--}")}
    return {"value": Q(float(value), digits=digits), "se": Q(float(se), digits=1)}


def _run_sizes(params, sizes) -> dict:
    """The sizes of a run: the fidelity's ``sizes`` with the size parameters that are not ``None``
    applied (with the user's own sentences, their number); at most ``n_perm`` null spectra are kept."""
    out = dict(sizes)
    out.update({k: params[k] for k in SIZE_PARAMETERS if params[k] is not None})
    if params["sentences"] is not None:
        out["n_sentences"] = len(params["sentences"])
    out["n_spectrum"] = min(out["n_spectrum"], out["n_perm"])
    return out


# --------------------------------------------------------------------------- the steps


@step
def setting(ctx: Context) -> dict:
    """The model's attention weights (:func:`mhanw.pretrained.load_attention_weights`) and shape, each
    layer's per-head objects (:func:`mhanw.pretrained.layer_objects`), and the sizes of this run: those of
    the fidelity with the size parameters applied (with the user's sentences, their number)."""
    weights = pretrained.load_attention_weights(ctx.params.model)
    L = weights["n_layers"]
    return {
        "model": weights["model"],
        "hub_id": weights["hub_id"],
        "package": weights["package"],
        "n_layers": L,
        "n_heads": weights["n_heads"],
        "d_model": weights["d_model"],
        "d_k": weights["d_k"],
        "n_heads_total": L * weights["n_heads"],
        "n_cases": L * len(OBJECTS),
        "sizes": _run_sizes(ctx.params, ctx.sizes),
        "weights": Raw(weights),
        "objects": Raw([pretrained.layer_objects(weights, l) for l in range(L)]),
    }


@step
def layers(ctx: Context, setting) -> dict:
    """Part 1: the HDI of every layer and object (``{object: (layers, normalizations)}``) and its range."""
    observed = pretrained.layer_hdi(setting["weights"].value)
    pa = np.array([observed[o][:, PA] for o in OBJECTS])
    printed = np.array([observed[o][:, NORMALIZATIONS.index("paper")] for o in OBJECTS])
    return {
        "observed": observed,
        "pa_min": Q(pa.min(), digits=3),
        "pa_max": Q(pa.max(), digits=3),
        "printed_min": Q(printed.min(), digits=3),
        "printed_max": Q(printed.max(), digits=3),
        "key_mean_cos": Q(1 - observed["key"][:, PA].mean(), digits=2),
    }


@step
def haar(ctx: Context, setting, layers) -> dict:
    """Part 2: independent Haar heads of the model's shape (projections, and circuits of two Haar
    projections), their mean HDI, the expected principal-angle HDI, and how many (layer, object) cases lie
    below the Haar mean by more than three standard deviations of its draws."""
    s = setting
    seeds = _spawn(ctx, "haar", 2)
    n = s["sizes"]["n_haar"]
    draws = {
        "projection": pretrained.random_subspace_null(s["n_heads"], s["d_model"], s["d_k"], n, seeds[0]),
        "circuit": pretrained.random_subspace_null(s["n_heads"], s["d_model"], s["d_k"], n, seeds[1], circuit=True),
    }

    def of(o):
        return draws["circuit" if o == "qk_circuit" else "projection"]

    mean = {o: of(o).mean(axis=0) for o in OBJECTS}
    sd = {o: of(o)[:, PA].std(ddof=1) for o in OBJECTS}
    observed = layers["observed"]
    below = sum(bool(observed[o][l, PA] < mean[o][PA] - 3 * sd[o]) for o in OBJECTS for l in range(s["n_layers"]))
    return {
        "draws": draws,
        "mean": mean,
        "expected_pa": Q(diversity.haar_expected_hdi(s["d_model"], s["d_k"]), digits=3),
        "expected_pa_circuit": Q(diversity.haar_expected_hdi(2 * s["d_model"], s["d_k"]), digits=3),
        "below": below,
    }


@step
def row_null(ctx: Context, setting, layers, haar) -> dict:
    """Part 2: each layer's rows dealt to heads at random (:func:`mhanw.pretrained.row_permutation_null`):
    z-scores, permutation p-values and the call of every case, with the appendix's table."""
    from .ch09_figures import hdi_table

    s, observed, L = setting, layers["observed"], setting["n_layers"]
    weights, sizes = s["weights"].value, s["sizes"]
    draws = [
        pretrained.row_permutation_null(weights, l, sizes["n_perm"], seed, n_spectrum=sizes["n_spectrum"])
        for l, seed in enumerate(_spawn(ctx, "row_null", L))
    ]
    summary = {o: [pretrained.null_summary(observed[o][l], draws[l][o]) for l in range(L)] for o in OBJECTS}
    z, p, null_mean, null_sd = (
        {o: np.array([x[k] for x in summary[o]]) for o in OBJECTS} for k in ("z", "p", "null_mean", "null_sd")
    )
    calls = {o: [[_call(z[o][l, n]) for n in range(len(NORMALIZATIONS))] for l in range(L)] for o in OBJECTS}
    by_norm = {n: [calls[o][l][n] for o in OBJECTS for l in range(L)] for n in (PA, NORMALIZATIONS.index("rv"))}
    spectra = {o: np.array([draws[l][f"{o}_spectrum"] for l in range(L)]) for o in OBJECTS}  # (L, n, d_k)
    return {
        "z": z,
        "p": p,
        "null_mean": null_mean,
        "null_sd": null_sd,
        "calls": calls,
        "key_z_min": Q(z["key"][:, PA].min(), digits=2),
        "key_z_max": Q(z["key"][:, PA].max(), digits=2),
        "value_z_max": Q(z["value"][:, PA].max(), digits=2),
        "pa_less": by_norm[PA].count("less"),
        "pa_more": by_norm[PA].count("more"),
        "rv_less": by_norm[NORMALIZATIONS.index("rv")].count("less"),
        "rv_more": by_norm[NORMALIZATIONS.index("rv")].count("more"),
        "p_min": Q(1 / (sizes["n_perm"] + 1), digits=2),
        "spectrum_mean": {o: v.mean(axis=1) for o, v in spectra.items()},
        "table": Tex(hdi_table(observed, z, haar["mean"])),
        "spectra": Raw(spectra),
    }


@step
def spectral_nulls(ctx: Context, setting, layers, row_null) -> dict:
    """Part 2: the layer-spectrum and head-spectrum nulls, the z-scores of every case against the three
    nulls, the calls, and the decision on "more diverse than chance" (a case is less (more) diverse than
    chance when its principal-angle z is at most -Z_CALL (at least Z_CALL) against every null)."""
    s, observed, L = setting, layers["observed"], setting["n_layers"]
    weights, objects, n = s["weights"].value, s["objects"].value, s["sizes"]["n_spectral"]
    layer_draws = [
        pretrained.layer_spectrum_null(weights, l, n, seed, n_spectrum=s["sizes"]["n_spectrum"])
        for l, seed in enumerate(_spawn(ctx, "layer_null", L))
    ]
    head_draws = [
        pretrained.head_spectrum_null(objects[l], n, seed) for l, seed in enumerate(_spawn(ctx, "head_null", L))
    ]
    z = {"row": row_null["z"]}
    for key, draws in (("layer_spectrum", layer_draws), ("head_spectrum", head_draws)):
        z[key] = {
            o: np.array([pretrained.null_summary(observed[o][l], draws[l][o])["z"] for l in range(L)]) for o in OBJECTS
        }
    calls = {key: {o: [_call(v) for v in zz[o][:, PA]] for o in OBJECTS} for key, zz in z.items()}
    Z = np.stack([np.array([zz[o][:, PA] for o in OBJECTS]).ravel() for zz in z.values()])
    return {
        "z": z,
        "calls": calls,
        "counts": {key: {w: sum(c[o].count(w) for o in OBJECTS) for w in ("less", "more")} for key, c in calls.items()},
        "diversity": _diversity_decision(Z),
        "layer_spectra": Raw({o: np.array([layer_draws[l][f"{o}_spectrum"] for l in range(L)]) for o in OBJECTS}),
    }


def _excess(e: dict) -> dict:
    """An :func:`mhanw.pretrained.excess_spectrum_summary` as results: the curves, and each comparison as
    the text prints it (:func:`_pm`); the leading cosine's difference with its z."""
    out = {k: e[k] for k in ("trained", "trained_se", "null", "null_se", "null_sd")}
    for k in ("top", "top_trained", "top_null", "total", "beyond_even", "share"):
        out[k] = _pm(e[k]["value"], e[k]["se"])
    out["top"]["z"] = Q(e["top"]["value"] / e["top"]["se"], digits=2)
    return out


@step
def spectra(ctx: Context, setting, row_null, spectral_nulls) -> dict:
    """Part 2: the principal-cosine spectrum of head pairs (largest first, mean over pairs and layers)
    against the row and layer-spectrum nulls (:func:`mhanw.pretrained.excess_spectrum_summary`), and the
    decision on where the keys' excess overlap sits."""
    objects, L = setting["objects"].value, setting["n_layers"]
    pair_spectra = {o: np.array([diversity.pair_cos2(objects[l][o]) for l in range(L)]) for o in OBJECTS}
    row, layer = row_null["spectra"].value, spectral_nulls["layer_spectra"].value
    excess = {o: pretrained.excess_spectrum_summary(pair_spectra[o], row[o], N_LEADING) for o in OBJECTS}
    excess_layer = {o: pretrained.excess_spectrum_summary(pair_spectra[o], layer[o], N_LEADING) for o in OBJECTS}
    return {
        "row": {o: _excess(e) for o, e in excess.items()},
        "layer_spectrum": {o: _excess(e) for o, e in excess_layer.items()},
        "spectrum": {o: np.array([diversity.cos2_spectrum(objects[l][o]) for l in range(L)]) for o in OBJECTS},
        "n_leading": N_LEADING,
        "even_share": Q(N_LEADING / setting["d_k"], digits=3),
        "null_band_max": Q(2 * excess["key"]["null_sd"].max(), digits=1),
        "shared": _shared_decision(excess["key"], setting["d_k"]),
    }


@step
def printed(ctx: Context, setting) -> dict:
    """Part 3: the printed HDI of the keys and queries along ``W_Q -> c W_Q``, ``W_K -> W_K / c`` (which
    leaves the model unchanged), the scale decomposition ``1 - HDI_printed = S G`` of every case
    (:func:`mhanw.pretrained.paper_scale_decomposition`) and how much of it ``ln S`` explains."""
    objects, L = setting["objects"].value, setting["n_layers"]
    rescaled = {
        o: np.array(
            [
                [diversity.head_diversity_indices(objects[l][o] * (c if o == "query" else 1 / c)) for c in C_GRID]
                for l in range(L)
            ]
        )
        for o in ("query", "key")
    }  # (L, c, normalizations)
    decomp = {o: [pretrained.paper_scale_decomposition(objects[l][o]) for l in range(L)] for o in OBJECTS}
    logs = {k: np.log([dc[k] for o in OBJECTS for dc in decomp[o]]) for k in ("one_minus_paper", "scale", "geometry")}
    r2 = pretrained.r2_bootstrap(logs["scale"], logs["one_minus_paper"], N_BOOT, ctx.streams["bootstrap"])
    paper = NORMALIZATIONS.index("paper")
    key_at = {c: rescaled["key"][0, np.argmin(np.abs(C_GRID - c)), paper] for c in (0.5, 1.0, 2.0)}
    change = {
        norm: float(max(np.ptp(rescaled[o][:, :, n], axis=1).max() for o in rescaled))
        for n, norm in enumerate(NORMALIZATIONS)
    }
    return {
        "c": C_GRID,
        "rescaled": rescaled,
        "decomposition": decomp,
        "logs": logs,
        "r2": Q(r2["r2"], digits=2),
        "r2_se": Q(r2["se"], digits=1),
        "n_boot": r2["n_boot"],
        "spread": {k: Q(float(np.exp(v.max() - v.min())), digits=2) for k, v in logs.items()},
        "key_layer1": {f"c{c:g}".replace(".", "_"): Q(v, digits=3) for c, v in key_at.items()},
        "change": {
            norm: Q(v, label=f"largest change of HDI_{label}")
            for (norm, v), label in zip(change.items(), ("printed", "PA", "RV"))
        },
        "scale": _scale_decision(r2["r2"], r2["se"]),
    }


@step
def ablation(ctx: Context, setting) -> dict:
    """Part 4: one head removed at a time (:meth:`mhanw.pretrained.Encoder.ablate_each_head`), the change
    ``1 - cos`` of the sentence embeddings, each head's redundancy, their within-layer and pooled Spearman
    correlations, and the decision on the pruning reading (keys, within layers: the pre-declared test)."""
    p, L, H = ctx.params, setting["n_layers"], setting["n_heads"]
    shipped = pretrained.load_ablation_sentences()
    texts = (
        list(p.sentences)
        if p.sentences is not None
        else pretrained.pick_sentences(shipped, setting["sizes"]["n_sentences"])
    )
    out = pretrained.get_encoder(p.model).ablate_each_head(texts)
    effects = pretrained.ablation_effects(out["baseline"], out["ablated"])
    last = pretrained.layer_contrast(effects["per_sentence"], -1)
    objects = setting["objects"].value
    red = {o: np.array([pretrained.redundancy(objects[l][o]) for l in range(L)]) for o in OBJECTS}
    seeds = dict(zip(OBJECTS, _spawn(ctx, "spearman", len(OBJECTS))))
    n_perm, x = setting["sizes"]["n_perm_spearman"], effects["mean"].ravel()
    strata = np.repeat(np.arange(L), H)
    within = {o: pretrained.spearman_permutation(red[o].ravel(), x, n_perm, seeds[o], strata=strata) for o in OBJECTS}
    pooled = {o: pretrained.spearman_permutation(red[o].ravel(), x, n_perm, seeds[o]) for o in OBJECTS}
    layer_means = effects["mean"].mean(axis=1)
    rho, se = within["key"]["rho"], within["key"]["null_sd"]
    return {
        "sentences": texts,
        "n_sentences": len(texts),
        "mean": effects["mean"],
        "se": effects["se"],
        "first_layers": Q(layer_means[:-1].mean(), digits=2),
        "last_layer": Q(layer_means[-1], digits=2),
        "last_minus_rest": _pm(float(last.mean), float(last.se)),
        "max": Q(effects["mean"].max(), digits=2),
        "min": Q(effects["mean"].min(), digits=2),
        "redundancy": red,
        "within": {
            o: {
                "rho": Q(w["rho"], digits=2),
                "p": Q(w["p"], digits=2),
                "se": Q(w["null_sd"], digits=1),
                "per_layer": [w["per_stratum"][l] for l in range(L)],
            }
            for o, w in within.items()
        },
        "pooled": {o: {"rho": Q(w["rho"], digits=2), "p": Q(w["p"], digits=2)} for o, w in pooled.items()},
        "rho_useful": Q(RHO_USEFUL, digits=2),
        "key_rho_lowest": Q(rho - N_SE * se, digits=2),
        "key_positive_layers": sum(bool(within["key"]["per_stratum"][l] > 0) for l in range(L)),
        "pruning": _pruning_decision(within["key"]["rho"], within["key"]["null_sd"], within["key"]["p"]),
    }


STEPS = (setting, layers, haar, row_null, spectral_nulls, spectra, printed, ablation)

# --------------------------------------------------------------------------- the decisions of the records


def _diversity_decision(Z: np.ndarray) -> dict:
    """ "More diverse than chance", from the principal-angle z-scores ``Z`` (``(nulls, cases)``): a case is
    less (more) diverse than chance at z <= -Z_CALL (>= Z_CALL) against every null; fails when more than
    MAJORITY of the cases are less diverse, holds when more than MAJORITY are more diverse and none less."""
    less, more, cases = int(np.all(Z <= -Z_CALL, axis=0).sum()), int(np.all(Z >= Z_CALL, axis=0).sum()), Z.shape[1]
    verdict = FAILS if less > MAJORITY * cases else HOLDS if more > MAJORITY * cases and less == 0 else UNDECIDED
    unit = "(layer, object) cases"
    return {
        "verdict": verdict,
        "criterion": (
            f"a (layer, object) case is less (more) diverse than chance when the z-score of its principal-angle "
            f"HDI is at most -{Z_CALL:g} (at least +{Z_CALL:g}) against every null "
            f"({join_list(list(NULLS.values()))}); the reading fails when more than {MAJORITY:.0%} of the "
            f"cases are less diverse, holds when more than {MAJORITY:.0%} are more diverse and none less"
        ),
        "statistics": (
            Q(less, label=f"{unit} less diverse than chance"),
            Q(more, label=f"{unit} more diverse than chance"),
            Q(cases, label=unit),
        ),
        "less": less,
        "more": more,
        "cases": cases,
    }


def _scale_decision(r2: float, se: float) -> dict:
    """ "The printed HDI measures geometry, not scale": fails when the R^2 of ln(1 - HDI_printed) on ln S
    exceeds R2_MOSTLY by more than N_SE bootstrap s.e., holds when it is below by as much."""
    return {
        "verdict": significant_effect(r2 - R2_MOSTLY, se, sign=-1),  # holds: the scale explains LESS
        "criterion": (
            f"R^2 of ln(1 - HDI_printed) on the log scale factor ln S across the (layer, object) cases; "
            f"fails when R^2 exceeds {R2_MOSTLY:g} by more than {N_SE:g} bootstrap s.e. (the scale explains "
            f"most of it), holds when it is below {R2_MOSTLY:g} by as much"
        ),
        "statistics": (Q(r2, se, label="R^2 of ln(1 - HDI_printed) on ln S"),),
    }


def _pruning_decision(rho: float, se: float, p: float) -> dict:
    """ "Redundancy picks pruning candidates", from the keys' mean within-layer Spearman ``rho`` (``se``: the
    spread of its permutation null, ``p`` its p-value): holds at rho <= -N_SE se; fails at rho >= N_SE se or
    when rho - N_SE se > RHO_USEFUL (a useful correlation is excluded); undecided otherwise."""
    verdict = HOLDS if rho <= -N_SE * se else FAILS if rho >= N_SE * se or rho - N_SE * se > RHO_USEFUL else UNDECIDED
    return {
        "verdict": verdict,
        "criterion": (
            f"mean within-layer Spearman correlation rho of the key projections' redundancy and the ablation "
            f"effect, s.e. from the within-layer permutation null; holds when rho <= -{N_SE:g} s.e.; fails "
            f"when rho >= +{N_SE:g} s.e. or when rho - {N_SE:g} s.e. > {RHO_USEFUL:g} (a correlation large "
            f"enough to pick pruning candidates is excluded)"
        ),
        "statistics": (Q(rho, se, label="within-layer Spearman rho"), Q(p, label="permutation p")),
        "detectable": N_SE * se,
        "deciding": _pruning_deciding(rho, se, verdict),
    }


def _pruning_deciding(rho: float, se: float, verdict: str) -> dict:
    """The threshold that decided the pruning reading: 0 for a holds or a fails on the sign (rho 3 s.e. from
    0), RHO_USEFUL for a fails that excludes a useful correlation; the nearer of the two otherwise."""
    name = "within-layer Spearman rho"
    on_sign = abs(rho) >= N_SE * se
    threshold = 0.0 if (verdict != FAILS and on_sign) or (verdict == FAILS and rho >= N_SE * se) else RHO_USEFUL
    if verdict == UNDECIDED:
        threshold = 0.0 if abs(rho) <= abs(rho - RHO_USEFUL) else RHO_USEFUL
    z = abs(rho - threshold) / se if se > 0 else None
    return deciding_entry(name, rho, se, threshold, z)


def _shared_decision(e: dict, d_k: int) -> dict:
    """The decision on "the keys' excess overlap sits in the leading N_LEADING angles": decided on the
    leading angles' excess beyond their even part of the total (its sign is that of share minus even
    share, and its s.e. stays valid when the total is small); a total at or below zero leaves no share
    (undecided, fails when it is N_SE s.e. below zero)."""
    even = N_LEADING / d_k
    leading = f"the leading {N_LEADING} of {d_k} angles"
    share, total, beyond = e["share"], e["total"], e["beyond_even"]
    share_stats = (
        [] if np.isnan(share["value"]) else [Q(share["value"], share["se"], label=f"share of the excess in {leading}")]
    )
    share_stats.append(Q(even, label="share under an even spread"))
    total_stat = Q(total["value"], total["se"], label="total excess over all angles")
    if total["value"] <= 0:
        verdict = FAILS if significant_effect(total["value"], total["se"]) == FAILS else UNDECIDED
        stats = [total_stat, *share_stats]
    else:
        verdict = significant_effect(beyond["value"], beyond["se"], sign=1)
        beyond_stat = Q(beyond["value"], beyond["se"], label=f"excess in {leading} beyond their even part of the total")
        stats = [beyond_stat, *share_stats, total_stat]
    stats += [
        Q(e["top_trained"]["value"], e["top_trained"]["se"], label="leading squared cosine, trained"),
        Q(e["top_null"]["value"], e["top_null"]["se"], label="leading squared cosine, row-reassignment null"),
    ]
    return {
        "verdict": verdict,
        "criterion": (
            f"share of the excess spectrum (trained minus null, mean over head pairs and layers) in the leading "
            f"{N_LEADING} angles, against the even share {N_LEADING}/{d_k}; holds (fails) when it is above "
            f"(below) it by more than {N_SE:g} s.e. (jackknife over heads within layers, and over null draws), "
            f"decided on the excess in the leading angles beyond their even part of the total, which has the sign "
            f"of share minus even share and a jackknife s.e. that stays valid when the total is small; a total at "
            f"or below zero leaves no share (undecided, fails when {N_SE:g} s.e. below)"
        ),
        "statistics": tuple(stats),
    }


# --------------------------------------------------------------------------- the records

CLAIMS = (
    Claim(
        DIVERSITY_CLAIM,
        "the heads of each layer of this trained encoder (one distilled, fine-tuned model) are more "
        "diverse than chance (a measurement of this model; whether training drives heads apart is "
        "decided where heads are trained, chapter 10)",
        Decided("spectral_nulls.diversity"),
        role=PAPER,
    ),
    Claim(
        "pretrained/shared-directions",
        lambda r: (
            "the excess overlap of the trained key heads over the row-reassignment null sits in a few shared "
            f"directions (the leading principal angles), not spread over all {r.at('setting.d_k')}"
        ),
        Decided("spectra.shared"),
        role=DERIVATION,
    ),
    Claim(
        "pretrained/printed-hdi-invariance",
        "the printed HDI is a property of the model: a rescaling W_Q -> c W_Q, W_K -> W_K / c, "
        "which leaves every attention logit unchanged, leaves it unchanged",
        AtMost(
            "printed.change.paper",
            INVARIANCE_TOL,
            "rounding; largest change over c in [1/2, 2] of the printed HDI of the keys and queries, the "
            "principal-angle and RV indices shown for comparison",
        ),
        role=READING,
        also=("printed.change.principal_angles", "printed.change.rv"),
    ),
    Claim(
        "pretrained/printed-hdi-geometry",
        "in a trained model the printed HDI measures the geometry of the heads, not the scale of the weights",
        Decided("printed.scale"),
        role=READING,
    ),
    Claim(
        "pretrained/redundancy-predicts-ablation",
        "within a layer, a head that overlaps more with the other heads matters less when removed, "
        "so that redundancy picks pruning candidates",
        Decided("ablation.pruning"),
        role=PAPER,
    ),
)

# --------------------------------------------------------------------------- the sentences of the text


def _layers_phrase(calls, which: str, L: int) -> str:
    """'in all six layers', 'in layers 1--5', 'in layer 3', 'in no layer' (LaTeX): where ``calls`` (one
    per layer) is ``which``."""
    hit = [l + 1 for l, c in enumerate(calls) if c == which]
    if len(hit) == L:
        return f"in {count_of(L, L, 'layers')}"
    if not hit:
        return "in no layer"
    return ("in layer " if len(hit) == 1 else "in layers ") + ranges(hit).replace("-", "--")


def _diversity_sentence(less: int, more: int, n: int, verdict: str) -> str:
    """The diversity record as one clause for the abstract and the summary: it describes the one model
    measured (whether training drives heads apart is decided where heads are trained, chapter 10)."""
    if verdict == FAILS:
        return (
            f"its heads are less diverse than chance in {count_of(less, n, '(layer, object) cases')}, "
            "against every null, so this trained model's heads are not more diverse than chance"
        )
    if verdict == HOLDS:
        return (
            f"its heads are more diverse than chance in {count_of(more, n, '(layer, object) cases')}, "
            "against every null, so this trained model's heads are more diverse than chance"
        )
    return (
        f"whether its heads are more diverse than chance {predicate(verdict)} (less diverse than chance "
        f"against every null: {count_of(less, n)})"
    )


def _check_text(results: Results) -> None:
    """Stop (:class:`mhanw.infra.verdicts.VerdictGuardError`) when the numbers contradict a sentence of
    the chapter or its section that states a direction."""
    r = results.at
    m, se = r("ablation.last_minus_rest.value").value, r("ablation.last_minus_rest.se").value
    guard(
        m > N_SE * se,
        "removing a head of the last layer changes the embeddings more than removing a head of another layer",
        f"the difference is {m:.2g} ± {se:.2g}",
    )
    k, L = r("ablation.key_positive_layers"), r("setting.n_layers")
    guard(0 < k < L, "the within-layer correlations of the keys have no consistent sign", f"{k} of {L} are positive")
    pa, rv = r("printed.change.principal_angles").value, r("printed.change.rv").value
    guard(
        pa < INVARIANCE_TOL and rv < INVARIANCE_TOL,
        "the principal-angle and RV indices do not move under the rescaling",
        f"they move by {pa:.2g} and {rv:.2g}",
    )
    top = r("spectra.row.key.top")
    guard(
        top["value"].value > N_SE * top["se"].value,
        "the leading squared cosine of trained key heads exceeds that of the row null",
        f"the difference is {top['value'].value:.3g} ± {top['se'].value:.2g}",
    )


def prose(results: Results, records) -> dict:
    """The section's sentences decided by the counts (which layers, how many cases, the diversity
    record's clause), after the check of its sentences that state a direction."""
    from .ch09_figures import NAMES

    _check_text(results)
    r = results.at
    L, n = r("setting.n_layers"), r("setting.n_cases")
    calls, nulls = r("row_null.calls"), r("spectral_nulls.calls")
    words = {"key": "the keys", "query": "the queries", "qk_circuit": "the circuits", "value": "the values"}
    groups: dict = {}
    for o in words:
        groups.setdefault(_layers_phrase([c[PA] for c in calls[o]], "less", L), []).append(words[o])
    row_less = ", ".join(
        f"{join_list(objs)} {'is' if len(objs) == 1 else 'are'} less diverse than chance {phrase}"
        if i == 0
        else f"{join_list(objs)} {phrase}"
        for i, (phrase, objs) in enumerate(groups.items())
    )
    more = [
        f"{NAMES[o]} {_layers_phrase(nulls['layer_spectrum'][o], 'more', L)}"
        for o in OBJECTS
        if "more" in nulls["layer_spectrum"][o]
    ]
    d, verdict = r("spectral_nulls.diversity"), {x.claim: x.verdict for x in records}[DIVERSITY_CLAIM]
    return {
        "row_less_sentence": Tex(row_less),
        "row_less_cases": Tex(count_of(r("row_null.pa_less"), n, "(layer, object) cases")),
        "row_more_cases": Tex(count_of(r("row_null.pa_more"), n, "")),
        "below_haar_cases": Tex(count_of(r("haar.below"), n, "(layer, object) cases")),
        "less_cases": Tex(count_of(d["less"], n, "(layer, object) cases")),
        "more_cases": Tex(count_of(d["more"], n, "")),
        "layer_spectrum_more": Tex(join_list(more) if more else "none"),
        "key_rho_positive": Tex(count_of(r("ablation.key_positive_layers"), L, "layers")),
        "diversity_sentence": Tex(_diversity_sentence(d["less"], d["more"], d["cases"], verdict)),
    }
