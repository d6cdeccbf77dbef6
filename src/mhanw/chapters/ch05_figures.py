"""Chapter 05's figure, its caption, the sentence under it and the tables of its notebook, drawn from the
results of its steps (:mod:`mhanw.chapters.ch05_decorrelation_optimality`): the IMSE optimum, the descent,
the random configurations with the anisotropic ``m``, the blind head and the frame ascent in one figure
(:func:`optimality_figure`).  Every sentence that states a direction is generated from the numbers (the 3-s.e.
rule) or from the records."""

from __future__ import annotations

import numpy as np

from ..infra import figures
from ..infra.results import Q
from .base import Context
from .ch04_figures import regression_label, takeaway

__all__ = ["CAPTION", "blind_table", "frame_table", "optimality_figure", "optimum_table", "random_table", "takeaway"]

#: The caption of :func:`optimality_figure`: what each panel shows and what to compare (the directions are
#: the records' findings, printed under the figure and in "What we found").
CAPTION = (
    r"Top row: (a) the IMSE minimised over free head subspaces, over the IMSE of the best orthogonal heads, on "
    r"fresh replicates (log scale; a point below the dashed line is a configuration that beats orthogonal "
    r"heads), with the $\mathrm{HDI}_{\mathrm{PA}}$ of the minimiser beside it (a minimiser of the IMSE on its optimisation batch, called so because it is validated only by this fresh-data comparison); (b) the descent of the best start on "
    r"its optimisation batch; (c) random configurations with the anisotropic $m$, IMSE change against the "
    r"orthogonal blocks (star). Bottom row: (d) the signal along $e_1$ only, identical, shared and orthogonal "
    r"heads under averaging and under the additive rule; (e) the ascent of $\mathrm{HDI}_{\mathrm{PA}}$ for four "
    r"lines in $\mathbb{R}^3$ from every start, against the frame bound $8/9$."
)


def _optima(optimum) -> list:
    return [optimum[f"m{k + 1}"] for k in range(optimum["n"])]


def optimality_figure(ctx: Context, random, blind, optimum, frame) -> None:
    """The figure of Thm 5.1 (``05_decorrelation_optimality``), saved with :data:`CAPTION`: top row (a) the IMSE
    optimum over free heads relative to the best orthogonal heads on fresh replicates, (b) the descent of the
    best start on its batch, (c) the random configurations with the anisotropic ``m`` relative to the
    orthogonal blocks; bottom row (d) the signal along ``e_1`` under both combination rules and (e) the ascent
    of HDI_PA for four lines in R^3.  Bars: 2 (paired) s.e."""
    import matplotlib.pyplot as plt

    from ..diversity import haar_expected_hdi

    fig, ax = plt.subplot_mosaic(
        [["a", "a", "b", "b", "c", "c"], ["d", "d", "d", "e", "e", "e"]],
        figsize=(figures.TEXT_WIDTH, 2 * figures.ROW_HEIGHT + 0.5),
    )
    opt = _optima(optimum)
    ratio = np.array([1 + o["rel"].value / 100 for o in opt])
    ratio_se = np.array([o["rel"].se / 100 for o in opt])
    figures.errorbar(
        ax["a"],
        np.arange(len(opt)),
        ratio,
        ratio_se,
        color="C0",
        marker="o",
        linestyle="none",
        label="optimum, free heads",
    )
    ax["a"].axhline(1, color="k", lw=0.8, ls="--", label="best orthogonal heads")
    for i, o in enumerate(opt):
        ax["a"].annotate(
            rf"HDI$_{{\mathrm{{PA}}}}$ {o['hdi'].value:.2f}",
            (i, ratio[i]),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=7,
        )
    ax["a"].set(
        yscale="log",
        xlim=(-0.5, len(opt) - 0.5),
        ylim=(0.1, 2.0),
        ylabel="IMSE / IMSE(best orthogonal)",
        title="(a) batch minimiser, fresh data",
    )
    ax["a"].set_xticks(range(len(opt)), [regression_label(o["m"]) for o in opt])
    ax["a"].set_yticks([0.1, 0.2, 0.5, 1.0, 2.0], ["0.1", "0.2", "0.5", "1", "2"])
    ax["a"].minorticks_off()
    ax["a"].legend(loc="lower left", fontsize=7)

    for o, color, ls in zip(opt, ("C0", "C3", "C2", "C4"), ("-", "--", ":", "-.")):
        tr = np.asarray(o["trace"])
        ax["b"].plot(np.arange(tr.size), tr / tr[0], color=color, ls=ls, label=regression_label(o["m"]))
    ax["b"].set(xlabel="descent step", ylabel="IMSE / IMSE(start), batch", title="(b) descent, best start")
    ax["b"].legend(loc="center right", fontsize=7)

    v, hdi = random["aniso"], np.asarray(random["hdi"])
    o = random["orthogonal"]
    others = np.arange(hdi.size) != o
    figures.errorbar(
        ax["c"],
        hdi[others],
        100 * np.asarray(v["rel"])[others],
        100 * np.asarray(v["rel_se"])[others],
        color="C2",
        linestyle="none",
        ms=3,
        label="interpolated",
    )
    ax["c"].plot(hdi[o], 0.0, marker="*", color="k", ms=9, linestyle="none", label="orthogonal")
    ax["c"].axhline(0, color="grey", lw=0.6)
    ax["c"].set(
        xlabel=r"HDI$_{\mathrm{PA}}$",
        ylabel="IMSE change vs orthogonal (%)",
        title=f"(c) {regression_label(v['m'])}, Spearman {v['rho'].value:.2f}".replace("-", "\u2212"),
    )
    lo, hi = ax["c"].get_ylim()
    ax["c"].set_ylim(lo, hi + 0.6 * (hi - lo))  # headroom for the legend
    ax["c"].legend(loc="upper right", fontsize=7)

    labels = list(blind["hdi"])
    for off, rule, color, mk in ((-0.1, "average", "C0", "o"), (0.1, "sum", "C3", "s")):
        qs = [blind["imse"][rule][k] for k in labels]
        figures.errorbar(
            ax["d"],
            np.arange(3) + off,
            np.array([q.value for q in qs]),
            np.array([q.se for q in qs]),
            color=color,
            marker=mk,
            linestyle="none",
            label=rule,
        )
    ax["d"].set_xticks(range(3), [f"{k}\nHDI {blind['hdi'][k]:.1f}" for k in labels])
    ax["d"].set(
        yscale="log",
        ylabel=f"IMSE, {regression_label(ctx.params.blind_regression)}",
        xlim=(-0.5, 2.5),
        title="(d) signal along $e_1$ only",
    )
    ax["d"].set_yticks([0.1, 0.2, 0.5, 1.0], ["0.1", "0.2", "0.5", "1"])
    ax["d"].minorticks_off()
    ax["d"].legend(loc="center", title="combination rule", fontsize=7, title_fontsize=7)

    trace, bound = frame["data"].value["trace"], frame["bound"].value
    steps = np.arange(trace.shape[1])
    for tr in trace:
        ax["e"].plot(steps + 1, tr, color="C0", lw=0.6, alpha=0.6)
    ax["e"].axhline(bound, color="k", lw=1.2, label=r"frame bound $8/9$")
    ax["e"].axhline(haar_expected_hdi(3, 1), color="grey", ls=":", lw=1, label=r"Haar mean $1-d_k/d$")
    ax["e"].set(
        xscale="log",
        xlabel="ascent step + 1",
        ylabel=r"HDI$_{\mathrm{PA}}$",
        ylim=(0.2, 0.95),
        xlim=(1, steps[-1] + 1),
        title=rf"(e) 4 lines in $\mathbb{{R}}^3$, {ctx.sizes['frame_starts']} starts",
    )
    ax["e"].legend(loc="lower right", fontsize=7)
    figures.save(fig, "05_decorrelation_optimality", ctx.figures_dir, caption=CAPTION, error_bars=True)


# --------------------------------------------------------------------------- the notebook's tables


def _pm(q: Q, digits: int = 2) -> str:
    return f"{q.value:+.{digits}f} ± {q.se:.{digits}f}"


def random_table(random):
    """The random configurations, one row per regression function: the Spearman correlation of HDI_PA and
    IMSE, the best other configuration (its HDI_PA and IMSE change against the orthogonal blocks), the counts
    significantly better and worse, and the blocks' rank."""
    from ..infra import tables

    return tables.show(
        {
            regression_label(v["m"]): {
                "Spearman": round(v["rho"].value, 3),
                "best other: its HDI$_{\\mathrm{PA}}$": round(v["best_hdi"].value, 2),
                "best other: IMSE change (%)": _pm(v["best_rel"]),
                "significantly better than orthogonal": v["n_better"],
                "significantly worse": v["n_worse"],
                "rank of orthogonal": v["orth_rank"],
            }
            for v in (random["iso"], random["aniso"])
        },
        index="$m$",
    )


def blind_table(blind):
    """The blind heads: the IMSE of each configuration under each rule and the paired differences the text
    reads, with their z-scores."""
    from ..infra import tables

    rows = {f"{k}, {rule}": f"{q.value:.4f} ± {q.se:.4f}" for rule, qs in blind["imse"].items() for k, q in qs.items()}
    for key in ("orth_minus_shared", "orth_minus_identical", "shared_minus_identical", "sum_orth_minus_shared"):
        q = blind[key]
        rows[q.label] = f"{q.value:+.4f} ± {q.se:.4f} (z = {q.value / q.se:.1f})"
    return tables.show(rows)


def optimum_table(optimum):
    """The IMSE optimum, one row per regression function: against the best orthogonal heads on fresh
    replicates, its HDI_PA and principal angles, and the descent's budget and convergence."""
    from ..infra import tables

    return tables.show(
        {
            regression_label(o["m"]): {
                "optimum vs best orthogonal, fresh (%)": tables.pm(o["rel"].value, o["rel"].se),
                "HDI$_{\\mathrm{PA}}$ of the optimum": round(o["hdi"].value, 3),
                "principal angles (deg)": np.round(np.degrees(np.asarray(o["angles_rad"])), 1).tolist(),
                "descent": o["search"].text(),
            }
            for o in _optima(optimum)
        },
        index="$m$",
    )


def frame_table(frame):
    """The frame ascent: the bound, the best and worst start, the tightness of the end points, the lines'
    |cos| for four lines in R^3, and bound minus best for the other shapes and two planes in R^3."""
    from ..infra import tables

    lines = frame["data"].value["lines"]
    best = lines.bases[int(np.argmax(lines.hdi))][:, :, 0]
    return tables.show(
        {
            "bound": round(frame["bound"].value, 6),
            "best": round(float(lines.hdi.max()), 6),
            "worst start": round(float(lines.hdi.min()), 6),
            "largest |sum P_j - (4/3) I|": frame["tight"].value,
            "|cos| between lines": np.round(np.abs(best @ best.T), 3)[np.triu_indices(4, 1)],
            "other shapes and two planes: bound, best": {k: (v["bound"], v["best"]) for k, v in frame["other"].items()},
        },
        6,
    )
