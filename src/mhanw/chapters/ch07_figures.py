"""Chapter 07's figures, their captions, the sentences after them and the further evidence's tables, drawn
from the results of its steps (:mod:`mhanw.chapters.ch07_structured_weighting`): the exact error model
(:func:`model_figure`), the graded heads (:func:`graded_figure`) and the homogeneous control
(:func:`control_figure`).  Every sentence that states a direction is generated from the numbers (the 3-s.e.
rule) or from the records."""

from __future__ import annotations

import numpy as np

from ..constants import N_SE
from ..infra import figures
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.notation import markdown_safe
from ..infra.premises import failure_text
from ..infra.results import Results
from . import ch07_structured_weighting as ch
from .base import Context

#: The lines of the figures: marker, line style and colour per weighting.
STYLE = {
    "uniform": ("o", "-", "C0"),
    "geometric": ("s", "-", "C1"),
    "fibonacci": ("^", "--", "C2"),
    "affine": ("D", "-", "k"),
    "simplex": ("v", ":", "C4"),
}
LABELS = {
    "uniform": "uniform",
    "geometric": r"geometric $q=1/\varphi$",
    "fibonacci": "Fibonacci",
    "affine": "affine oracle (out of sample)",
    "simplex": "simplex oracle (out of sample)",
}


def show_text(text: str) -> None:
    """Display a generated sentence (Markdown) as the cell's output."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def model_figure(ctx: Context, error_model) -> None:
    """The error model (exact): (a) the crossover gamma*(rho) per H, geometric and Fibonacci; (b) the gain
    MSE_unif / MSE_geo as a heat map."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    raw = error_model["data"].value
    curves, gains = raw["curves"], raw["gains"]
    fig, ax = plt.subplots(
        1, 2, figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.6), width_ratios=[1, 1.25], layout="constrained"
    )
    for i, H in enumerate(ch.H_GRID):
        ax[0].plot(ch.RHO_FINE, curves[H, "geometric q=1/phi"], color=f"C{i}", label=f"$H={H}$, geometric")
        ax[0].plot(ch.RHO_FINE, curves[H, "Fibonacci"], color=f"C{i}", ls=":", lw=1.2, label=f"$H={H}$, Fibonacci")
    ax[0].set(
        yscale="log",
        xlabel=r"error correlation $\rho$",
        ylabel=r"crossover $\gamma^*(H,\rho)$",
        title="(a) structured beats uniform above",
    )
    ax[0].set_yticks([1, 2, 5, 10], ["1", "2", "5", "10"])
    ax[0].minorticks_off()
    ax[0].legend(ncol=1, loc="upper right", fontsize=7)
    annot = np.vectorize(
        lambda v: f"{v:.2f}"[1:] if round(v, 2) < 1 else (f"{v:.1f}" if round(v, 1) < 10 else f"{v:.0f}")
    )(gains.values)
    sns.heatmap(
        np.log10(gains),
        ax=ax[1],
        cmap="vlag_r",
        center=0,
        annot=annot,
        fmt="",
        annot_kws={"fontsize": 7},
        cbar_kws={"label": r"$\log_{10}$ gain", "pad": 0.02},
    )
    ax[1].set(
        xlabel=r"heterogeneity $\gamma$", ylabel="", title=r"(b) gain $\mathrm{MSE}_{\rm unif}/\mathrm{MSE}_{\rm geo}$"
    )
    ax[1].tick_params(axis="both", labelsize=7, length=0)
    ax[1].tick_params(axis="x", rotation=45)
    figures.save(
        fig,
        "07_structured_weighting_model",
        ctx.figures_dir,
        caption="The exact error model, no Monte Carlo. (a) Geometric (solid) or Fibonacci (dotted) weights beat "
        "uniform ones exactly above the curve $\\gamma^*(H,\\rho)$, one colour per number of heads $H$. "
        "(b) The gain $\\mathrm{MSE}_{\\rm unif}/\\mathrm{MSE}_{\\rm geo}$ of geometric weights: blue cells "
        "(gain above 1) are where they win.",
    )


def graded_figure(ctx: Context, graded) -> None:
    """Real graded heads: integrated MSE of each weighting as heads are added in quality order, the best
    single head dashed, bars +-2 s.e.; the caption's sentence on the simplex oracle is generated from its
    fitted weights."""
    import matplotlib.pyplot as plt

    g = graded["data"].value
    k_axis = np.arange(1, g.errors.shape[1] + 1)
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.4), layout="constrained")
    ax.axhline(g.mean[0, 0], color="k", lw=0.8, ls="--", label="best single head")
    for i, s in enumerate(g.schemes):
        m_, ls_, c_ = STYLE[s]
        figures.errorbar(ax, k_axis, g.mean[i], g.se[i], marker=m_, linestyle=ls_, color=c_, label=LABELS[s], ms=3)
    regression = ctx.params.regression
    m_text = r"$m(x)=\sin(2x_1)+x_1$" if regression == "blind" else f"$m$ = {regression}"
    ax.set(
        yscale="log",
        xlabel="heads (added in quality order)",
        ylabel="integrated MSE",
        title=f"graded Nadaraya-Watson heads, {m_text}",
    )
    ax.minorticks_off()
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)
    simplex_best = float(graded["oracle_weights"]["simplex"][0])
    note = (
        " The simplex oracle puts all its weight on the best head, so it lies on the dashed line."
        if simplex_best > 1 - 1e-6
        else f" The simplex oracle puts weight {simplex_best:.3g} on the best head."
    )
    figures.save(
        fig,
        "07_structured_weighting",
        ctx.figures_dir,
        error_bars=True,
        caption="Integrated MSE of each weighting as the graded heads are added in quality order, evaluated on "
        "replicates independent of those that fixed the order and the oracle weights; the dashed line is "
        f"the best single head alone: a weighting above it does worse than that one head.{note}",
    )


def control_figure(ctx: Context, control) -> None:
    """The homogeneous control: each structured weighting's MSE minus that of uniform weights, bars +-2
    paired s.e.  The title and the caption name the heads from their premise check
    (:func:`mhanw.chapters.ch07_structured_weighting.control_label`)."""
    import matplotlib.pyplot as plt

    c = control["data"].value
    k_axis = np.arange(1, c.errors.shape[1] + 1)
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, figures.ROW_HEIGHT + 0.2), layout="constrained")
    for i, s in enumerate(c.schemes[1:4], start=1):
        d = Estimate.paired(c.errors[i], c.errors[0])
        m_, ls_, c_ = STYLE[s]
        figures.errorbar(
            ax,
            k_axis + 0.08 * (i - 2),
            1e3 * d.mean,
            1e3 * d.se,
            marker=m_,
            linestyle=ls_,
            color=c_,
            label=LABELS[s],
            ms=3,
        )
    ax.axhline(0, color="k", lw=0.8)
    label = control["label"]
    ax.set(xlabel="number of heads", ylabel=r"MSE $-$ MSE(uniform), $\times10^{-3}$", title=f"control: {label}")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)
    why = markdown_safe(failure_text(control["premises"]))
    figures.save(
        fig,
        "07_structured_weighting_control",
        ctx.figures_dir,
        error_bars=True,
        caption=f"The homogeneous control ({label}{': ' + why if why else ''}): each weighting's MSE minus that of "
        "uniform weights, on the same replicates; above zero, uniform weights win.",
    )


# --------------------------------------------------------------------------- the sentences after the figures


def _pm(q) -> str:
    return f"{q.value:.3g} ± {q.se:.2g}" + (f", z = {q.value / q.se:+.1f}" if q.se > 0 else "")


def _than(q) -> str:
    """``lower than`` / ``higher than`` when ``q`` is below / above zero by more than 3 s.e., else
    ``not distinguishable at 3 s.e. from that of``."""
    neither = f"not distinguishable at {N_SE:g} s.e."
    words = V.direction_words(q.value, q.se, positive="higher", negative="lower", neither=neither)
    return f"{words} than" if words in ("lower", "higher") else f"{words} from that of"


def model_takeaway(error_model) -> str:
    """One sentence after the error model's figure (Markdown), from the numbers; the directions it states
    are those the step guards."""
    gs = error_model["data"].value["gamma_star"]["geometric q=1/phi"]
    return (
        f"Geometric weights ($q=1/\\varphi$) beat uniform ones only above the crossover $\\gamma^*(H,\\rho)$, "
        f"from {gs.min():.3g} to {gs.max():.3g} on this grid: it grows with the number of heads $H$ and falls "
        f"with the error correlation $\\rho$, and at $\\gamma=1$ uniform weights always win."
    )


def graded_takeaway(graded) -> str:
    """One sentence after the graded heads' figure (Markdown): the comparison with uniform weights and with
    the best single head, in words generated from the signs and the 3-s.e. rule."""
    geo, best = graded["geometric_minus_uniform"], graded["uniform_minus_best"]
    return (
        f"With all {graded['n_heads']} graded heads, geometric weights have an MSE {_than(geo)} uniform "
        f"ones ({_pm(geo)}); uniform weights have an MSE {_than(best)} the best single head alone ({_pm(best)})."
    )


def control_takeaway(control) -> str:
    """One sentence after the control's figure (Markdown): its record's finding and verdict, with the failed
    premise when the control's heads are not exchangeable."""
    (rec,) = ch.records_on(Results({"control": control}), ("thm-7.1/homogeneous-control",))
    text = f"{rec.finding[0].upper()}{rec.finding[1:]}: that uniform weights win there {V.predicate(rec.verdict)}" + (
        f" ({failure_text(rec.premises)})." if rec.outside else "."
    )
    return markdown_safe(text)


# --------------------------------------------------------------------------- the further evidence


def evidence_tables(error_model, graded, control) -> None:
    """The further evidence, as tables: the crossovers gamma* of every fixed weighting on the grid, the graded
    heads' heterogeneity against the model's crossover, the paired comparisons (difference, paired s.e.) of
    the graded heads and of the control, the rising steps and the oracle weights fitted out of sample."""
    from IPython.display import display

    from ..infra import tables

    display(
        tables.show(
            error_model["data"].value["gamma_star"].round(3),
            3,
            caption="Crossover gamma*(H, rho) of each fixed weighting (exact).",
        )
    )
    g = graded
    display(
        tables.show(
            {
                "gamma_hat": round(g["gamma_hat"].value, 1),
                "rho_hat": round(g["rho_hat"].value, 3),
                f"gamma*({g['n_heads']}, rho_hat)": round(g["gamma_star_hat"].value, 3),
                "model predicts geometric wins": g["decisions"]["geometric"]["predicted"],
            },
            caption="The graded heads' heterogeneity and the error model's prediction.",
        )
    )
    for name, node in (("graded heads", g), ("control", control)):
        rows = {
            k.replace("_minus_", " - ").replace("_q0_", " q=0.").replace("_", " "): q
            for k, q in node.items()
            if "_minus_" in k
        }
        display(
            tables.show(
                {k: {"difference": q.value, "paired s.e.": q.se} for k, q in rows.items()},
                se={"difference": "paired s.e."},
                index="comparison",
                caption=f"Paired MSE differences, {name}, all heads.",
            )
        )
    display(
        tables.show(
            {
                "steps k -> k+1 that raise the MSE (3 s.e.)": {s: list(v) for s, v in g["rising_steps"].items()},
                **{k: np.round(v, 3) for k, v in g["oracle_weights"].items()},
            },
            3,
            caption="Rising steps and the oracle weights (best head first).",
        )
    )
