"""Chapter 04's figures, tables, captions and takeaways, and the names the text gives its regression functions
and head kinds (:mod:`mhanw.chapters.ch04_head_diversity_index` computes the numbers; this module only shows
them).  Every function takes the run's context and the results of the steps it shows."""

from __future__ import annotations

import re

import numpy as np

from ..constants import N_SE
from ..infra.validate import brief
from ..infra.verdicts import FAILS

__all__ = [
    "HEAD_TYPE_NAMES",
    "MSE_CAPTION",
    "REGRESSION_LABELS",
    "attention_tables",
    "equal_hdi_table",
    "anisotropic_finding",
    "equal_hdi_finding",
    "families_finding",
    "family_profile",
    "printed_identical_finding",
    "family_table",
    "index_caption",
    "index_curves",
    "index_figure",
    "kernel_label",
    "mse_figure",
    "normalization_rows",
    "record_now",
    "regression_label",
    "takeaway",
]

#: How the text names the head kinds of :data:`mhanw.comparisons.HEAD_TYPES` (the rows of the table of the
#: three indices).
HEAD_TYPE_NAMES = {
    "identical": "identical, orthonormal",
    "orthogonal": "orthogonal blocks",
    "gaussian_scaled": "random, N(0, 1/d)",
    "gaussian_unit": "random, N(0, 1)",
    "identical_x2": "identical ×2",
}

#: How the figures and tables name the catalogue's regression functions (defined in the chapter's text).
REGRESSION_LABELS = {
    "iso_exp": r"$m_{\exp}$",
    "iso_cos": r"$m_{\cos,1.5}$",
    "iso_cos6": r"$m_{\cos,1.2}$",
    "aniso": r"$m_{\mathrm{aniso}}$",
    "blind": r"$m_{e_1}$",
}


def regression_label(spec) -> str:
    """The name a figure (and the paper) gives the regression function ``spec``: the text's symbol for a
    catalogue function, else ``m = `` its formula rendered by :func:`mhanw.infra.texout.tex_math` (the same
    in LaTeX and in matplotlib's mathtext: ``x1^2^2`` is ``m = x_{1}^{4}``, not two superscripts)."""
    from .. import data
    from ..infra.texout import tex_math

    try:
        hash(spec)
    except TypeError:
        raise ValueError(f"spec: expected a catalogue name or a formula, got {brief(spec)}") from None
    if spec in REGRESSION_LABELS:
        return REGRESSION_LABELS[spec]
    if not isinstance(spec, str):
        return "$m$"
    if (
        re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", spec)
        and not data.GRAMMAR.symbol(spec)
        and spec not in data.EXPRESSION_FUNCTIONS
    ):
        # a catalogue function the text gives no symbol, or a name the caller chose
        return r"$m = \mathrm{" + spec.replace("_", r"\_") + "}$"
    try:
        f = data.regression_function(spec)
    except ValueError as exc:
        raise ValueError(f"spec: {str(exc).partition(': ')[2]}") from None
    return f"$m = {tex_math(f.expression)}$"


def kernel_label(kind: str) -> str:
    r"""The name the figure and the tables of the plain-attention part give a head kind: a closing
    ``beta = VALUE`` or ``h = VALUE`` is set as maths, with ``1/sqrt(d_k)`` as a root (``"attention, beta =
    1/sqrt(d_k)"`` is ``"attention, $\beta=1/\sqrt{d_k}$"``); any other name is returned as it is."""

    def maths(match):
        symbol = r"\beta" if match[1] == "beta" else "h"
        value = match[2].replace("1/sqrt(d_k)", r"1/\sqrt{d_k}")
        return f"${symbol}={value}$"

    return re.sub(r"\b(beta|h) = (\S+)$", maths, kind)


#: The names of the equal-HDI configurations (their keys in the results: ``P``, ``Q``, ``Pp``).
_CONFIG_NAMES = {"P": "P", "Q": "Q", "Pp": "P'"}


def _roles(ctx) -> dict:
    """``{role: regression}`` of the families: the two isotropic m and the anisotropic one."""
    p = ctx.params
    return {"iso1": p.isotropic_regressions[0], "iso2": p.isotropic_regressions[1], "aniso": p.anisotropic_regression}


# --------------------------------------------------------------------------- takeaways and findings


def takeaway(record) -> None:
    """Display one sentence under a figure: the finding of ``record`` (a :class:`mhanw.infra.verdicts.Verdict`),
    generated from its numbers, with its verdict word."""
    from IPython.display import Markdown, display

    from ..infra import notation
    from ..infra.verdicts import verdict_words

    said = record.finding or record.statement
    display(
        Markdown(
            f"**Takeaway.** {notation.markdown_text(said[:1].upper() + said[1:])} "
            f"(*{notation.markdown_text(verdict_words(record))}*)."
        )
    )


def family_profile(summary, deg, every: float = 30.0) -> str:
    """The IMSE along one isoclinic family in words: its change against identical heads at every multiple
    of ``every`` degrees of ``deg`` and the z-scores of the steps that raise it by more than 3 paired s.e.
    ``summary``: :func:`mhanw.comparisons.family_summary` of the family."""
    deg = np.asarray(deg, float)
    at = [i for i in range(1, deg.size) if abs(deg[i] / every - round(deg[i] / every)) < 1e-9] or [deg.size - 1]
    change = ", ".join(f"{100 * summary['rel'][i]:+.1f} % at {deg[i]:g} deg" for i in at)
    rises = [
        f"{deg[i]:g} to {deg[i + 1]:g} deg (z {summary['step_z'][i]:+.1f})"
        for i in range(deg.size - 1)
        if summary["step_z"][i] > N_SE
    ]
    return f"IMSE change against identical heads {change}" + (
        f"; steps that rise by 3 s.e.: {', '.join(rises)}" if rises else "; no step rises by 3 s.e."
    )


def printed_identical_finding(results, verdict: str) -> str:
    """The finding of "the printed HDI equals 0 for identical heads"."""
    from .ch04_head_diversity_index import EXACT_TOL

    v, d_k = results.at("index.printed_identical").value, results.at("index.d_k").value
    if verdict != FAILS:
        return f"the printed HDI of identical orthonormal heads is 0 at d_k = {d_k}"
    formula = ", which is 1 - 1/d_k" if abs(v - (1.0 - 1.0 / d_k)) <= EXACT_TOL else ""
    return f"the printed HDI of identical orthonormal heads is {v:.3f} at d_k = {d_k}{formula}, not 0"


def families_finding(results, verdict: str) -> str:
    """The finding of "non-increasing along the isoclinic families": where it rises most and the end-to-end
    change, with the family in words (:func:`family_profile`) when a step rises."""
    d = results.at("verdicts.families")
    max_step_z, end_z, end_rel = (q.value for q in d["statistics"])
    end = f"falls by at least {-end_rel:.1f} %" if end_rel < 0 else f"changes by {end_rel:+.1f} %"
    if verdict == FAILS:  # the family in words, for the isotropic m with the largest rising step
        fams = {"pair": results.at("pair"), "star": results.at("star")}
        role = max(("iso1", "iso2"), key=lambda r: max(float(np.max(f[r]["summary"]["step_z"])) for f in fams.values()))
        profile = "; ".join(
            f"{fam} family, {regression_label(f[role]['m'])}: {family_profile(f[role]['summary'], f['deg'])}"
            for fam, f in fams.items()
        )
        return (
            f"the IMSE is not monotone in HDI_PA along the isoclinic families: it rises by {max_step_z:.1f} "
            f"s.e. ({d['where']}), although from identical to orthogonal heads it {end} (z {end_z:.1f}); {profile}"
        )
    return (
        f"no step along the isoclinic families raises the IMSE by 3 s.e. (largest z {max_step_z:.1f}, "
        f"{d['where']}), and from identical to orthogonal heads it {end} (z {end_z:.1f})"
    )


def anisotropic_finding(results, verdict: str) -> str:
    """The finding of "non-increasing for an anisotropic m"."""
    q, z = results.at("verdicts.anisotropic.statistics")
    z = z.value
    change = f"{q.value:+.1f} ± {q.se:.1f} % (z {z:.1f})"
    if z > N_SE:
        return (
            "for an anisotropic m the IMSE rises with HDI_PA: orthogonal heads are worse than identical ones by "
            f"{change}, so Theorem 4.2 needs an isotropic m"
        )
    return f"for an anisotropic m orthogonal heads and identical ones differ by {change}"


def equal_hdi_finding(results, verdict: str) -> str:
    """The finding of "equal HDI, equal IMSE": the largest paired difference of P and Q over the isotropic m."""
    pq = {results.at(f"equal.{r}.m"): results.at(f"equal.{r}.pq") for r in ("iso1", "iso2")}  # one per distinct m
    top = max(pq, key=lambda m: abs(pq[m]["z"].value))
    q, z = pq[top]["rel"], pq[top]["z"].value
    gap = f"{q.value:+.1f} ± {q.se:.1f} % for {regression_label(top)} (z {z:.1f})"
    if any(abs(v["z"].value) > N_SE for v in pq.values()):
        return (
            f"two configurations with the same HDI_PA = 1/2 have different IMSEs: P against Q {gap}, so the IMSE "
            "is not a function of HDI_PA alone"
        )
    return f"the two configurations with HDI_PA = 1/2 do not differ by 3 paired s.e. (P against Q {gap})"


def record_now(ctx, claim_id: str):
    """The record ``claim_id`` decided on the results of the steps run so far (for a takeaway under a figure,
    before the chapter closes; :func:`mhanw.chapters.base.close` decides it again, on the same numbers)."""
    from ..infra.results import Results

    claim = next(c for c in ctx.chapter.CLAIMS if c.id == claim_id)
    return claim.decide(Results(dict(ctx.parts)), chapter=ctx.name, section=ctx.chapter.SECTION)


# --------------------------------------------------------------------------- tables


def normalization_rows(index):
    """The three indices at every shape next to their predictions (in brackets), one row per shape and head
    kind."""
    from ..infra import tables

    names = {
        "paper": r"HDI$_{\mathrm{printed}}$",
        "principal_angles": r"HDI$_{\mathrm{PA}}$",
        "rv": r"HDI$_{\mathrm{RV}}$",
    }

    def show(x):  # three decimals; a value that rounds to zero prints as 0, not -0.000
        return f"{x:.3f}" if round(x, 3) != 0 else "0"

    rows = {
        f"{tuple(t['shape'])}, {HEAD_TYPE_NAMES[kind]}": {
            names[k]: f"{show(t['values'][kind][k])} ({show(t['predicted'][kind][k])})" for k in names
        }
        for t in index["all"]
        for kind in t["values"]
    }
    return tables.show(rows, index="(d, H, d_k), heads")


def family_table(ctx, family):
    """The table of an isoclinic family: one row per regression function, with the IMSE of identical heads,
    the change from identical to orthogonal heads (% ± s.e.) and the largest z-score of a step (above 3: a
    rise)."""
    from ..infra import tables

    rows = {}
    for role, m in _roles(ctx).items():
        s = family[role]["summary"]
        rows[regression_label(m)] = {
            "IMSE at 0°": round(s["imse"][0], 4),
            "change at 90° (%)": f"{100 * s['rel'][-1]:+.1f} ± {100 * s['rel_se'][-1]:.1f}",
            "largest step z (above 3: a rise)": round(s["max_step_z"], 1),
        }
    return tables.show(rows, index="$m$")


def equal_hdi_table(ctx, equal):
    """The table of the equal-HDI test: one row per isotropic m, the paired differences ``P - Q`` and
    ``P' - Q`` of the IMSE, each ± its s.e. and its z-score; the HDI_PA of the three configurations below."""
    from ..infra import tables

    rows = {}
    for role, m in tuple(_roles(ctx).items())[:2]:
        e, row = equal[role], {}
        for name, key in (("$P-Q$", "P_minus_Q"), ("$P'-Q$", "Pp_minus_Q")):
            d, se = e[key], e[f"{key}_se"]
            row |= {name: f"{d:.5f} ± {se:.5f}", f"z of {name}": round(d / se, 1)}
        rows[regression_label(m)] = row
    hdi = ", ".join(f"{_CONFIG_NAMES[k]} {v:.3f}" for k, v in equal["hdi"].items())
    return tables.show(rows, index="$m$", note=f"HDI$_{{\\mathrm{{PA}}}}$: {hdi}")


def attention_tables(attention):
    """The two tables of plain attention, one row per angle of the pair family and one column per head kind:
    the IMSE ± s.e., and the IMSE minus that of the training mean in paired s.e."""
    from ..infra import tables

    angle = {"angle": [f"{a:g}°" for a in attention["deg"]]}
    kinds = attention["kinds"].values()
    mean = attention["mean"]
    imse = tables.show(
        angle | {kernel_label(v["label"]): [tables.pm(m, s) for m, s in zip(v["imse"], v["se"])] for v in kinds},
        caption="IMSE ± s.e., by angle of the pair family",
        note=f"training mean: IMSE {tables.pm(mean.value, mean.se)}",
    )
    z = tables.show(
        angle | {kernel_label(v["label"]): [f"{z:.1f}" for z in v["z_vs_mean"]] for v in kinds},
        caption="IMSE minus the training mean's, in paired s.e.",
    )
    return tables.Tables([imse, z])


# --------------------------------------------------------------------------- the index figure


def index_caption(haar_excess: float) -> str:
    """The caption of the index figure; its clause on panel (c) is said from ``haar_excess``, the largest Haar
    draw minus the frame bound (at most rounding when the bound holds)."""
    from .ch04_head_diversity_index import EXACT_TOL

    below = (
        "the Haar mean stays at $1-d_k/d$ (dotted) for every $H$, and no draw exceeds the frame bound "
        "(black), which is 1 up to $Hd_k=d$ (grey line) and falls beyond it"
        if haar_excess <= EXACT_TOL
        else f"a draw exceeds the frame bound by {haar_excess:.2g}"
    )
    return (
        r"(a) Along the pair family, $\mathrm{HDI}_{\mathrm{PA}}=\sin^2\theta$ (solid) runs from 0 to 1 for every "
        r"$d_k$, while the printed index (dashed) is squeezed into $[1-1/d_k,1]$; (b) rescaling identical heads "
        r"moves the printed index but not $\mathrm{HDI}_{\mathrm{PA}}$ or $\mathrm{HDI}_{\mathrm{RV}}$; "
        rf"(c) Haar-random heads in $\mathbb{{R}}^{{64}}$ with $d_k=8$: {below}."
    )


def index_curves() -> dict:
    """The curves of panels (a) and (b) of the index figure, each checked against its closed form: along
    pair(theta) (``d = 2 d_k``, ``d_k`` in 1, 4, 64; 31 angles from 0 to 90 degrees) the printed index,
    ``1 - cos^2(theta)/d_k``, and ``HDI_PA = sin^2(theta)``; identical heads ``cW`` rescaled by ``c`` in
    ``[0.25, 2]``."""
    from .. import heads
    from ..diversity import head_diversity_index

    theta = np.radians(np.linspace(0, 90, 31))
    curves = {}
    for k in (1, 4, 64):
        cfgs = [heads.pair_heads(t, 2 * k, k) for t in theta]
        curves[k] = {n: np.array([head_diversity_index(W, n) for W in cfgs]) for n in ("paper", "principal_angles")}
        if not (
            np.allclose(curves[k]["paper"], 1 - np.cos(theta) ** 2 / k, atol=1e-12)
            and np.allclose(curves[k]["principal_angles"], np.sin(theta) ** 2, atol=1e-12)
        ):
            raise AssertionError(f"the indices of pair(theta) at d_k = {k} left their closed forms")
    scales = np.linspace(0.25, 2.0, 36)
    scaled = {
        k: np.array([head_diversity_index(c * heads.identical_heads(2 * k, k, 4), "paper") for c in scales])
        for k in (4, 64)
    }
    scaled_pa = np.array([head_diversity_index(c * heads.identical_heads(8, 4, 4)) for c in scales])
    return dict(theta=theta, curves=curves, scales=scales, scaled=scaled, scaled_pa=scaled_pa)


def index_figure(ctx, index) -> None:
    """The index figure (``04_head_diversity_index``), three panels: (a) the printed index and HDI_PA along
    pair(theta), (b) rescaled identical heads (:func:`index_curves`), (c) the Haar means of the step ``index``
    (bars: 2 s.e.) against the frame bound when ``H d_k > d``."""
    from ..diversity import haar_expected_hdi
    from ..infra import figures

    ix, haar = index_curves(), index["haar"]
    fig, (ax_a, ax_b, ax_c) = figures.panels(3)
    deg = np.degrees(ix["theta"])
    ax_a.plot(deg, ix["curves"][1]["principal_angles"], color="k", lw=1.6, label=r"HDI$_{\mathrm{PA}}$, all $d_k$")
    for d_k, color in zip((1, 4, 64), ("C0", "C1", "C2")):
        ax_a.plot(
            deg, ix["curves"][d_k]["paper"], color=color, ls="--", label=rf"HDI$_{{\mathrm{{printed}}}}$, $d_k={d_k}$"
        )
    ax_a.set(
        xlabel=r"principal angle $\theta$ (deg)",
        ylabel="index",
        title=r"(a) pair$(\theta)$, $H=2$",
        xticks=[0, 30, 60, 90],
    )
    ax_a.legend(loc="center left", fontsize=7)
    for d_k, color in zip((4, 64), ("C1", "C2")):
        ax_b.plot(
            ix["scales"], ix["scaled"][d_k], color=color, ls="--", label=rf"HDI$_{{\mathrm{{printed}}}}$, $d_k={d_k}$"
        )
    ax_b.plot(ix["scales"], ix["scaled_pa"], color="k", lw=1.6, label=r"HDI$_{\mathrm{PA}}$ and HDI$_{\mathrm{RV}}$")
    ax_b.set(
        xlabel=r"scale $c$ of identical heads $cW$",
        ylabel="index",
        ylim=(-0.6, 1.05),
        title="(b) rescaled identical heads",
    )
    ax_b.legend(loc="lower left")
    ax_c.plot(haar["H"], haar["bound"], color="k", lw=1.6, label="frame bound")
    ax_c.axhline(haar_expected_hdi(haar["d"], haar["d_k"]), color="C0", ls=":", lw=1, label=r"$1-d_k/d$")
    figures.errorbar(
        ax_c, haar["H"], haar["mean"], haar["se"], color="C0", linestyle="none", ms=3, label=r"Haar heads, $\pm2$ s.e."
    )
    ax_c.axvline(haar["d"] / haar["d_k"], color="grey", lw=0.6)
    ax_c.set(
        xlabel=rf"heads $H$ ($d={haar['d']}$, $d_k={haar['d_k']}$)",
        ylabel=r"HDI$_{\mathrm{PA}}$",
        ylim=(0.8, 1.01),
        title=r"(c) the bound when $Hd_k>d$",
    )
    ax_c.legend(loc="lower left")
    figures.save(
        fig, "04_head_diversity_index", ctx.figures_dir, caption=index_caption(index["haar_excess"]), error_bars=True
    )


# --------------------------------------------------------------------------- the figure of Theorem 4.2

#: The caption of :func:`mse_figure`: what each panel shows and what to compare (no direction: the
#: directions are the records' findings, printed under the figure and in "What we found").
MSE_CAPTION = (
    r"Top row: (a) the isotropic $m$ along the pair ($H=2$, solid) and star ($H=4$, dashed) families, IMSE "
    r"change against identical heads, where a curve that rises anywhere breaks monotonicity; (b) the "
    r"anisotropic $m$, IMSE over IMSE(identical) on a log scale. Middle row: (c) plain softmax attention along "
    r"the pair family against the Gaussian head and the training mean $\bar Y$; (d) $P$ and $Q$, of equal "
    r"$\mathrm{HDI}_{\mathrm{PA}}=1/2$, and $P'$, of higher HDI, relative to $Q$. Bottom row: (e) random "
    r"configurations relative to the orthogonal blocks (star); (f) random configurations at matched "
    r"$\mathrm{HDI}_{\mathrm{PA}}$, relative to the best of their bin, where a spread beyond the bars means the IMSE "
    r"is not a function of HDI."
)


def mse_figure(ctx, pair, star, attention, equal, random, matched) -> None:
    """The figure of Thm 4.2 (``04_head_diversity_index_mse``), a 3 x 2 grid of panels: top row (a) the
    isotropic m along the pair and star families, IMSE change against identical heads, and (b) the
    anisotropic m as a ratio (log scale); middle row (c) plain softmax attention along the pair family and
    (d) the equal-HDI configurations against Q; bottom row (e) the random configurations against the
    orthogonal blocks and (f) the matched-HDI bins against the best of their bin.  Bars: 2 paired s.e."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    roles = _roles(ctx)
    fig, ax = plt.subplot_mosaic([["a", "b"], ["c", "d"], ["e", "f"]], figsize=(figures.TEXT_WIDTH, 3 * 1.7 + 0.4))
    for fam, f, ls, mk in [("pair, $H=2$", pair, "-", "o"), ("star, $H=4$", star, "--", "s")]:
        for role, color in zip(("iso1", "iso2"), ("C0", "C1")):
            s = f[role]["summary"]
            figures.errorbar(
                ax["a"],
                f["hdi"],
                100 * s["rel"],
                100 * s["rel_se"],
                color=color,
                linestyle=ls,
                marker=mk,
                ms=3,
                label=f"{regression_label(roles[role])}, {fam}",
            )
        s = f["aniso"]["summary"]
        figures.errorbar(
            ax["b"],
            f["hdi"],
            1 + s["rel"],
            s["rel_se"],
            color="C2",
            linestyle=ls,
            marker=mk,
            ms=3,
            label=f"{regression_label(roles['aniso'])}, {fam}",
        )
    ax["a"].axhline(0, color="grey", lw=0.6)
    ax["a"].set(xlabel=r"HDI$_{\mathrm{PA}}$", ylabel="IMSE change vs identical (%)", title="(a) isotropic $m$")
    ax["a"].legend(loc="lower left", fontsize=7)
    ax["b"].set(
        yscale="log", xlabel=r"HDI$_{\mathrm{PA}}$", ylabel="IMSE / IMSE(identical)", title="(b) anisotropic $m$"
    )
    ax["b"].set_yticks([1, 1.5, 2, 3, 4, 6], ["1", "1.5", "2", "3", "4", "6"])
    ax["b"].minorticks_off()
    ax["b"].legend(loc="upper left")

    for v, color, mk in zip(attention["kinds"].values(), ("C3", "C4", "C0"), ("v", "^", "o")):
        figures.errorbar(
            ax["c"],
            np.sin(np.radians(attention["deg"])) ** 2,
            v["imse"],
            v["se"],
            color=color,
            marker=mk,
            ms=3,
            label=kernel_label(v["label"]),
        )
    # the training mean's +-2 s.e. is narrower than a line at this scale: drawn as a dashed line, its s.e. in the legend
    mean = attention["mean"]
    ax["c"].axhline(
        mean.value, color="grey", lw=1.0, ls="--", label=rf"training mean $\bar Y$ ($\pm${2 * mean.se:.3f})"
    )
    ax["c"].set(
        yscale="log",
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel=f"IMSE, {regression_label(roles['iso2'])}",
        title="(c) plain attention",
    )
    ax["c"].set_yticks([0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0], ["0.15", "0.2", "0.3", "0.5", "0.7", "1", "2"])
    ax["c"].minorticks_off()
    ax["c"].set_ylim(0.12, 4.0)
    ax["c"].legend(loc="upper center", ncol=2, fontsize=7)

    names = [
        f"{_CONFIG_NAMES[k]}\n{ang} deg\nHDI {h:.3f}"
        for (k, h), ang in zip(equal["hdi"].items(), ["(0, 90)", "(45, 45)", "(8, 90)"])
    ]
    for off, role, color, mk in zip((-0.08, 0.08), ("iso1", "iso2"), ("C0", "C1"), ("o", "s")):
        e = equal[role]
        figures.errorbar(
            ax["d"],
            np.arange(3) + off,
            100 * e["rel"],
            100 * e["rel_se"],
            color=color,
            linestyle="none",
            marker=mk,
            label=regression_label(roles[role]),
        )
    ax["d"].axhline(0, color="grey", lw=0.6)
    ax["d"].set_xticks(range(3), names)
    ax["d"].set(xlim=(-0.5, 2.5), ylabel="IMSE change vs Q (%)", title="(d) equal HDI and a higher HDI")
    ax["d"].legend(loc="upper center", fontsize=7)

    hdi, o = random["hdi"], random["data"].value["configs"].orthogonal
    others = np.arange(len(hdi)) != o
    figures.errorbar(
        ax["e"],
        hdi[others],
        100 * random["rel"][others],
        100 * random["rel_se"][others],
        color="C1",
        linestyle="none",
        ms=3,
        label=f"interpolated (Spearman {random['rho'].value:.2f})".replace("-", "\u2212"),
    )
    ax["e"].plot(hdi[o], 0.0, marker="*", color="k", ms=9, linestyle="none", label="orthogonal blocks")
    ax["e"].axhline(0, color="grey", lw=0.6)
    ax["e"].set(
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel="IMSE change vs orthogonal (%)",
        title=rf"(e) random configurations, {regression_label(ctx.params.random_regression)}",
    )
    lo, hi = ax["e"].get_ylim()
    ax["e"].set_ylim(lo, hi + 0.3 * (hi - lo))  # headroom for the legend
    ax["e"].legend(loc="best", fontsize=7, markerscale=0.7)  # short labels: the legend fits where no point is

    for k, (v, color, mk) in enumerate(zip(matched["bins"].values(), ("C0", "C3", "C2", "C4"), ("o", "s", "^", "D"))):
        order = np.argsort(v["imse"])
        figures.errorbar(
            ax["f"],
            np.arange(v["K"]) + 0.15 * k,
            100 * v["rel"][order],
            100 * v["rel_se"][order],
            color=color,
            marker=mk,
            linestyle="none",
            ms=3,
            label=rf"HDI$_{{\mathrm{{PA}}}}$ {v['target'].value:g}, Hotelling p {v['hotelling_p'].value:.2g}",
        )
    ax["f"].axhline(0, color="grey", lw=0.6)
    ax["f"].set(
        xlabel="configuration (sorted by IMSE)", ylabel="IMSE change vs best of bin (%)", title="(f) matched HDI"
    )
    lo, hi = ax["f"].get_ylim()
    ax["f"].set_ylim(lo, hi + 0.35 * (hi - lo))  # headroom for the legend
    ax["f"].legend(loc="upper left", fontsize=7)
    figures.save(fig, "04_head_diversity_index_mse", ctx.figures_dir, caption=MSE_CAPTION, error_bars=True)
