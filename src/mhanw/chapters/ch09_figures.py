"""Chapter 09's figures and the appendix's table, drawn from the results of its steps
(:mod:`mhanw.chapters.ch09_pretrained_head_diversity`): the z-scores against the three nulls
(:func:`nulls_figure`), where the heads' overlap sits and what the printed formula measures
(:func:`geometry_figure`), the ablation of single heads (:func:`ablation_figure`), and the per-layer
HDIs with their z-scores (:func:`hdi_table`)."""

from __future__ import annotations

import functools

import numpy as np

from ..diversity import NORMALIZATIONS
from ..pretrained import OBJECTS

#: The objects as the text and the figures name them (LaTeX).
NAMES = {"query": "$W_Q$", "key": "$W_K$", "value": "$W_V$", "qk_circuit": r"$W_QW_K^\top$"}
#: The names of the normalizations in the tables and figures.
NORM_LABEL = {"paper": "printed", "principal_angles": "PA", "rv": "RV"}
#: The names of the objects in the notebook's tables.
OBJ_LABEL = {"query": "W_Q", "key": "W_K", "value": "W_V", "qk_circuit": "W_Q W_K^T"}
#: How the appendix's table names the objects.
TABLE_LABELS = {"query": r"$W_Q^h$", "key": r"$W_K^h$", "value": r"$W_V^h$", "qk_circuit": r"$W_Q^h W_K^{h\top}$"}
#: A legend below its panel.
BELOW = dict(loc="upper center", bbox_to_anchor=(0.5, -0.22), columnspacing=0.8, handletextpad=0.4)
PA = NORMALIZATIONS.index("principal_angles")


def _small_legends(fn):
    """Draw ``fn``'s figure with 7 pt legends (nothing under 7 pt at print size)."""

    @functools.wraps(fn)
    def draw(*args, **kwargs):
        import matplotlib.pyplot as plt

        with plt.rc_context({"legend.fontsize": 7}):
            return fn(*args, **kwargs)

    return draw


def _style():
    import seaborn as sns

    colors = dict(zip(OBJECTS, sns.color_palette("colorblind", 4)))
    return colors, dict(zip(OBJECTS, ("o", "s", "^", "D")))


def pm(pair) -> str:
    """A ``{"value", "se"}`` pair of the results as ``value ± se`` for the notebook's tables ("–" for a
    share that is not estimable)."""
    from ..infra.tables import pm as plus_minus

    value, se = (getattr(pair[k], "value", float("nan")) for k in ("value", "se"))
    return plus_minus(value, se)


# --------------------------------------------------------------------------- the appendix's table


def _z_text(z: float) -> str:
    if not np.isfinite(z):
        return r"\text{n/a}"
    return f"{z:+.0f}" if abs(z) >= 9.95 else f"{z:+.1f}"


def hdi_table(observed, z, random) -> str:
    """A booktabs ``tabular`` of the per-layer HDIs: one row per object and normalization, one column per
    layer (numbered from 1), each cell ``value (z)``, and a last column for the mean of Haar heads.
    ``observed`` and ``z``: ``{object: (layers, 3)}`` (normalizations in :data:`NORMALIZATIONS` order);
    ``random``: ``{object: (3,)}``."""
    L = len(observed["key"])
    lines = [
        r"\begingroup\small\setlength{\tabcolsep}{3pt}",
        r"\begin{tabular}{ll" + "c" * L + "c}",
        r"\toprule",
        r" & & \multicolumn{" + str(L) + r"}{c}{layer} & random \\",
        r"\cmidrule(lr){3-" + str(L + 2) + r"}\cmidrule(lr){" + str(L + 3) + "-" + str(L + 3) + "}",
        r"heads & HDI & " + " & ".join(str(l + 1) for l in range(L)) + r" & Haar \\",
        r"\midrule",
    ]
    for i, o in enumerate(OBJECTS):
        if i:
            lines.append(r"\addlinespace")
        for n, norm in enumerate(NORMALIZATIONS):
            cells = [f"${observed[o][l][n]:.3f}$\\,{{\\scriptsize$({_z_text(float(z[o][l][n]))})$}}" for l in range(L)]
            label = TABLE_LABELS[o] if n == 0 else ""
            lines.append(
                f"{label} & {NORM_LABEL[norm]} & " + " & ".join(cells) + f" & ${float(random[o][n]):.3f}$ \\\\"
            )
    lines += [r"\bottomrule", r"\end{tabular}", r"\endgroup"]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the figures


@_small_legends
def nulls_figure(ctx, setting, spectral_nulls) -> None:
    """``09_pretrained_head_diversity_nulls``: one heat map per null model, a row per object and
    normalization, a column per layer, each cell annotated with its z-score (clipped to +-30 for the
    colour)."""
    import seaborn as sns

    from ..infra import figures
    from .ch09_pretrained_head_diversity import NULLS

    layers = np.arange(1, setting["n_layers"] + 1)
    fig, axes = figures.panels(3, height=2.4, gridspec_kw={"width_ratios": [1.45, 1.0, 1.0]})
    ylabels = [f"{NAMES[o]} {NORM_LABEL[norm]}" for o in OBJECTS for norm in NORMALIZATIONS]
    for i, (ax, (key, zz)) in enumerate(zip(axes, spectral_nulls["z"].items())):
        zmat = np.array([zz[o][:, n] for o in OBJECTS for n in range(len(NORMALIZATIONS))])
        annot = np.vectorize(lambda v: f"{round(v)}" if abs(v) < 999.5 else f"{round(v / 1000)}k")(zmat)
        sns.heatmap(
            np.clip(zmat, -30, 30),
            ax=ax,
            cmap="RdBu_r",
            center=0,
            vmin=-30,
            vmax=30,
            cbar=False,
            annot=annot,
            fmt="",
            annot_kws={"fontsize": 7},
            linewidths=0.4,
            linecolor="white",
            xticklabels=layers,
            yticklabels=ylabels if i == 0 else False,
        )
        ax.tick_params(axis="both", labelsize=7, length=2, left=i == 0, bottom=True)
        ax.tick_params(axis="y", rotation=0)
        ax.set(xlabel="layer", title=f"({'abc'[i]}) {NULLS[key]}")
    figures.save(
        fig,
        "09_pretrained_head_diversity_nulls",
        ctx.figures_dir,
        caption="Each cell is the $z$-score of one layer's HDI (a column) for one object and normalization "
        "(a row) against one null model (a panel): red is more diverse than that chance model, blue "
        "less, and a case counts as beyond chance only where $|z|\\ge 3$ under every null.",
    )


@_small_legends
def geometry_figure(ctx, setting, spectra, printed) -> None:
    """``09_pretrained_head_diversity``: (a) the mean squared cosine of each principal angle of head pairs
    against the row and layer nulls, (b) the printed HDI of one model along the rescaling, (c) the scale
    decomposition of ``1 - HDI_printed``."""
    from ..infra import figures

    colors, markers = _style()
    d_k, L = setting["d_k"], setting["n_layers"]
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=2.65)
    k = np.arange(1, d_k + 1)
    for name, mk in (("key", "o"), ("value", "^")):
        e = spectra["row"][name]
        ax_a.plot(
            k,
            e["trained"],
            color=colors[name],
            marker=mk,
            ms=2.5,
            markevery=[i for i in (0, 1, 3, 7, 15, 31) if i < d_k],
            label=f"{NAMES[name]} trained",
        )
        band = figures.half_width(e["trained_se"])
        ax_a.fill_between(k, e["trained"] - band, e["trained"] + band, color=colors[name], alpha=0.25, lw=0)
        ax_a.errorbar(
            k,
            e["null"],
            yerr=figures.half_width(e["null_sd"]),
            color=colors[name],
            ls="--",
            lw=1.0,
            label=f"{NAMES[name]} row null",
        )
    layer_null = spectra["layer_spectrum"]["key"]["null"]
    ax_a.plot(k, layer_null, color=colors["key"], ls=":", lw=1.2, label=f"{NAMES['key']} layer null")
    ax_a.set(
        xlabel=r"principal angle $i$ (largest first)",
        ylabel=r"mean $\cos^2\theta_i$ over head pairs",
        title="(a) shared directions",
        xscale="log",
    )
    ticks = [t for t in (1, 2, 4, 8, 16, 32) if t <= d_k]
    ax_a.set_xticks(ticks, [str(t) for t in ticks])
    ax_a.set_xticks([], minor=True)
    ax_a.legend(**{**BELOW, "columnspacing": 0.5}, ncol=2, handlelength=1.6)

    c_grid, rescaled = printed["c"], printed["rescaled"]
    for name, ls in (("key", "-"), ("query", "--")):
        for l in range(L):
            ax_b.plot(
                c_grid,
                rescaled[name][l, :, NORMALIZATIONS.index("paper")],
                color=colors[name],
                ls=ls,
                lw=0.9,
                label=f"{NAMES[name]}, printed" if l == 0 else None,
            )
        ax_b.plot(c_grid, rescaled[name][:, :, PA].T, color=colors[name], ls=ls, lw=0.6, alpha=0.5)
    ax_b.plot([], [], color="grey", lw=0.6, label="PA (flat)")
    ax_b.set(
        xscale="log",
        xlabel=r"$c$ in $W_Q\to cW_Q$, $W_K\to W_K/c$",
        ylabel="HDI (one line per layer)",
        title="(b) one model, many printed HDIs",
    )
    ax_b.set_xticks([0.5, 1, 2], ["1/2", "1", "2"])
    ax_b.set_xticks([], minor=True)
    ax_b.legend(**BELOW, ncol=1)

    decomp, logs = printed["decomposition"], printed["logs"]
    for name in OBJECTS:
        s = [dc["scale"] for dc in decomp[name]]
        y = [dc["one_minus_paper"] for dc in decomp[name]]
        ax_c.scatter(s, y, color=colors[name], marker=markers[name], label=NAMES[name], s=14, zorder=3)
    log_s, log_g = logs["scale"], logs["geometry"]
    grid = np.geomspace(np.exp(log_s.min()) / 1.5, np.exp(log_s.max()) * 1.5, 10)
    ax_c.fill_between(
        grid,
        grid * np.exp(log_g.min()),
        grid * np.exp(log_g.max()),
        color="grey",
        alpha=0.2,
        lw=0,
        label=r"$S\cdot G$, $G$ in its range",
    )
    r2 = printed["scale"]["statistics"][0]
    ax_c.set(
        xscale="log",
        yscale="log",
        xlabel=r"scale $S=\mathrm{mean}\, n_jn_{j'}/d_k^2$",
        ylabel=r"$1-\mathrm{HDI}_{\mathrm{printed}}$",
        title=f"(c) scale: $R^2={r2.value:.2f}\\pm{r2.se:.2f}$",
    )
    ax_c.legend(**BELOW, ncol=2)
    figures.save(
        fig,
        "09_pretrained_head_diversity",
        ctx.figures_dir,
        caption="(a) The mean squared cosine of each principal angle between head pairs, trained (solid, with "
        "its band) against the row null (dashed, $\\pm2$ null s.d.) and the layer null (dotted): where the "
        "solid line lies above the nulls, heads share more directions than chance. (b) The printed HDI of "
        "one and the same model as $W_Q\\to cW_Q$, $W_K\\to W_K/c$, against the flat principal-angle HDI. "
        "(c) How much of $1-\\mathrm{HDI}_{\\mathrm{printed}}$ the weights' scale $S$ explains.",
        error_bars=True,
    )


@_small_legends
def ablation_figure(ctx, setting, ablation) -> None:
    """``09_pretrained_head_diversity_ablation``: (a) the effect of removing each head, (b) that effect
    against the key redundancy, ±2 s.e., (c) the within-layer Spearman correlations per object."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..infra import figures

    colors, markers = _style()
    L, H = setting["n_layers"], setting["n_heads"]
    layers = np.arange(1, L + 1)
    mean, se = ablation["mean"], ablation["se"]
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=2.55, gridspec_kw={"width_ratios": [1.2, 1.0, 0.85]})
    sns.heatmap(
        mean,
        ax=ax_a,
        cmap="viridis",
        norm=plt.matplotlib.colors.LogNorm(),
        xticklabels=np.arange(1, H + 1),
        yticklabels=layers,
        cbar_kws={"label": r"mean $1-\cos$", "pad": 0.02},
    )
    ax_a.tick_params(axis="both", labelsize=7, length=2, rotation=0)
    ax_a.set_xticks(np.arange(H)[::2] + 0.5, np.arange(1, H + 1)[::2])
    ax_a.set(xlabel="head", ylabel="layer", title="(a) effect of removing one head")

    layer_colors = sns.color_palette("colorblind", L)
    layer_markers = ("o", "s", "^", "v", "D", "P")
    red = ablation["redundancy"]["key"]
    for l in range(L):
        ax_b.errorbar(
            red[l],
            mean[l],
            yerr=figures.half_width(se[l]),
            marker=layer_markers[l],
            ms=3.5,
            linestyle="none",
            color=layer_colors[l],
            mfc="white" if l % 2 else layer_colors[l],
            label=f"{l + 1}",
        )
    lo, hi = (mean - 2 * se).min(), (mean + 2 * se).max()
    ax_b.set(
        yscale="log",
        xlabel=r"redundancy of $W_{K,j}$",
        ylabel=r"mean $1-\cos$",
        title="(b) redundancy vs effect",
        ylim=(max(lo, 1e-6) / 1.5, hi * 1.5),
    )
    ax_b.legend(
        title="layer",
        title_fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=6,
        columnspacing=0.3,
        handletextpad=0.05,
    )

    for i, name in enumerate(OBJECTS):
        w = ablation["within"][name]
        ax_c.plot(
            layers + (i - 1.5) * 0.12,
            w["per_layer"],
            marker=markers[name],
            linestyle="none",
            ms=3.5,
            color=colors[name],
            label=f"{NAMES[name]}: {w['rho'].value:+.2f}",
        )
    ax_c.axhline(0, color="k", lw=0.6)
    ax_c.set(
        xlabel="layer",
        ylabel=r"Spearman $\rho$ within the layer",
        ylim=(-1.05, 1.05),
        xticks=layers,
        yticks=[-1, -0.5, 0, 0.5, 1],
        title="(c) within layers",
    )
    ax_c.legend(
        title="mean over layers",
        title_fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=2,
        columnspacing=0.4,
        handletextpad=0.1,
    )
    figures.save(
        fig,
        "09_pretrained_head_diversity_ablation",
        ctx.figures_dir,
        caption="(a) How much the sentence embeddings change ($1-\\cos$ to the intact model) when one head "
        "is removed, per layer and head. (b) That effect against the head's redundancy, one colour per "
        "layer: a redundant head that matters little sits to the right and low. (c) The Spearman "
        "correlation of redundancy and effect within each layer, per object; the pre-declared test "
        "is the keys' mean over layers.",
        error_bars=True,
    )
