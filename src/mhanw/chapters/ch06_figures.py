"""Chapter 06's figures, captions, takeaways and the words of its tables (Thm 6.1).

:func:`law_figure` draws the risk models' optimal head size and its local exponent from the results of
:func:`mhanw.chapters.ch06_optimal_head_size.models`, :func:`budget_figure` the real heads of
:func:`mhanw.chapters.ch06_optimal_head_size.simulation`; :func:`law_takeaway` and :func:`heads_takeaway` say
each figure's lesson from its numbers (the verdicts are the findings'), and :func:`readable_columns` names
the columns of the law's tables in words for the book.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .. import derivation, scaling
from ..infra.prose import join_list
from .ch06_optimal_head_size import BUDGET, BY_CONSTRUCTION, READING_TEX

__all__ = [
    "budget_caption",
    "budget_figure",
    "heads_takeaway",
    "law_caption",
    "law_figure",
    "law_takeaway",
    "readable_columns",
    "reading_formulas",
    "takeaway",
]

#: The largest ``log10 n`` of panel (b) of :func:`law_figure` (``n = 1e300``, below a double's limit).
FAR_LOG10_N = 300

#: The asymptotic formula drawn (dashed) for each model in :func:`law_figure`; other models draw their
#: closed form, or their leading order.
MAIN_FORMULA = {"M1": "log_ratio", "M2": "law", "M5": "log_n"}

#: Markers and line styles of the models of :func:`law_figure`, one each, so that it reads in greyscale.
MARKERS = ["o", "s", "^", "v", "D", "P", "X"]
STYLES = ["-", "--", "-.", ":", (0, (5, 1.5, 1, 1.5, 1, 1.5)), (0, (6, 2)), (0, (1, 1))]

#: The regression functions of the default simulation by their formulas, as the chapter defines them.
REGRESSION_TITLES = {"additive": r"$m(x)=\sum_l\sin x_l$", "iso_cos8": r"$m(x)=3\cos(0.8\Vert x\Vert)$"}

#: Line style and marker of each combination rule in :func:`budget_figure`.
RULE_STYLES = (("average", "-", "o"), ("sum", "--", "s"), ("concat", ":", "^"))

#: How each combination rule's heads are named in a sentence.
RULE_WORDS = {"average": "averaged", "sum": "summed", "concat": "concatenated"}

#: The y ticks of :func:`budget_figure` (IMSE, log scale).
Y_TICKS = [0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 3]


def takeaway(sentence: str) -> None:
    """Display a figure's takeaway, ``**Takeaway.** sentence`` (one sentence, Markdown, ``$math$`` allowed)."""
    from IPython.display import Markdown, display

    display(Markdown(f"**Takeaway.** {sentence.strip()}"))


# --------------------------------------------------------------------------- the law


def law_takeaway(laws: dict) -> str:
    """The lesson of the key figure in one sentence, from the models' laws ``{name: GrowthLaw}``: which models
    settle in panel (b)'s band of the printed law, whether they were built to (:data:`BY_CONSTRUCTION`), and
    which leave it."""
    giving = [name for name, law in laws.items() if law.gives_printed_law]
    others = [name for name in laws if name not in giving]
    if not giving:
        return f"No risk model settles in the band of panel (b): none of {join_list(others)} gives the printed law."
    built = all(name in BY_CONSTRUCTION for name in giving)
    text = f"Only {join_list(giving)} settle in the band of panel (b)" + (
        ", the models whose variance was chosen to put them there" if built else ""
    )
    if others:
        text += f", while {join_list(others)} leave it"
    if built and "M1" in others:
        text += ": the printed law comes from the variance one assumes, not from the summaries' own ingredients"
    return text + "."


def law_caption(laws: dict) -> str:
    """The caption of the key figure: what each panel draws, that it has no error bars (every number is
    computed from a risk model, nothing is sampled), and its lesson with M1's local exponent at
    ``n = 10^FAR_LOG10_N`` and its symbolic limit (``laws``: ``{name: GrowthLaw}``, M1's among them)."""
    p_far, p_limit = scaling.local_slope(10.0**FAR_LOG10_N, BUDGET, scaling.model("M1")), laws["M1"].p_limit
    where = "inside" if 0 < derivation.numeric(p_limit) < 0.5 else "outside"
    return (
        f"(a) The integer minimiser $d_k^*$ of each risk model (one colour and marker per model) against "
        f"$n$ under the budget $D={BUDGET}$, with its asymptotic formula dashed. (b) The local exponent "
        "$p(n)=d\\ln k^*/d\\ln\\ln n$ at the real root: the printed law needs $p$ to approach "
        "$2/(4+d)$, inside the shaded band $0<p<1/2$. No error bars: every curve is computed from its risk "
        f"model, nothing is sampled. The lesson: M1, built from the summaries' own ingredients, has "
        f"$p={p_far:.2f}$ at $n=10^{{{FAR_LOG10_N}}}$ and tends to ${sp.latex(p_limit)}$, {where} the band."
    )


def law_figure(ctx, models) -> None:
    """The key figure of Thm 6.1 (``06_optimal_head_size``), two panels for the risk models of ``models``
    (the step's results): (a) the integer minimiser ``d_k*`` against ``n`` from 1e2 to 1e12 at the budget
    ``D = 512`` (steps), with its asymptotic formula (dashed; for M1 also the Lambert leading order,
    dotted); (b) the local exponent ``p(n) = d ln k*/d ln ln n`` at the real root up to ``n = 1e300``, with
    the band ``0 < p < 1/2`` where the printed law ``(ln n)^(2/(4+d))`` holds for some ``d > 0``."""
    import pandas as pd

    from ..infra import figures

    data = models["data"].value
    n_dense = 10.0 ** np.arange(2, 12.01, 0.125)
    log10_far = np.geomspace(2, FAR_LOG10_N, 120)
    fig, (ax_a, ax_b) = figures.panels(2, height=3.1)
    for i, m in enumerate(data["models"]):
        colour, marker, style = f"C{i}", MARKERS[i % len(MARKERS)], STYLES[i % len(STYLES)]
        dense = pd.DataFrame(scaling.scaling_table(m, n_dense, BUDGET))
        label = MAIN_FORMULA.get(m.name, "closed_form" if m.closed_form is not None else "leading_order")
        ax_a.step(dense["n"], dense["d_k"], where="mid", color=colour, lw=1.2)
        ax_a.plot(dense["n"][i::12], dense["d_k"][i::12], color=colour, marker=marker, ms=3.5, ls="none", label=m.name)
        if f"asym_{label}" in dense:
            ax_a.plot(dense["n"], dense[f"asym_{label}"], color=colour, ls="--", lw=0.9)
        if m.name == "M1":
            ax_a.plot(dense["n"], dense["asym_leading_order"], color=colour, ls=":", lw=1.1)
        ax_b.plot(
            log10_far,
            [scaling.local_slope(10.0**x, BUDGET, m) for x in log10_far],
            color=colour,
            ls=style,
            marker=marker,
            ms=3.5,
            markevery=(2 * i, 16),
            label=m.name,
        )
    ax_a.axhline(BUDGET, color="grey", lw=0.6)
    for ls, text in [("-", "integer minimiser"), ("--", "asymptotic formula"), (":", "M1: Lambert leading order")]:
        ax_a.plot([], [], color="k", ls=ls, lw=1, label=text)
    ax_a.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=3, columnspacing=0.8)  # colours, then line styles
    ax_a.set(
        xscale="log",
        yscale="log",
        ylim=(1, 1.6 * BUDGET),
        xlabel="sample size $n$",
        ylabel=rf"$d_k^*$ (budget $D={BUDGET}$)",
        title=r"(a) optimal head size $d_k^*$",
    )
    ax_b.axhspan(0, 0.5, color="grey", alpha=0.15, lw=0)
    ax_b.axhline(0.4, color="k", ls=":", lw=0.8)
    ax_b.text(2.2, 0.08, "printed law for some $d>0$ ($p<1/2$)", fontsize=7)
    ax_b.text(3.2, 1.28, r"M4a, M4b: $p\propto\ln n$, off the scale", fontsize=7, va="top")
    ax_b.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=4, columnspacing=0.8)
    ax_b.set(
        xscale="log",
        xlim=(2, FAR_LOG10_N),
        ylim=(0, 1.8),
        xlabel=r"$\log_{10} n$",
        ylabel=r"$p(n)=d\ln k^*/d\ln\ln n$",
        title=r"(b) local exponent $p(n)$ of the law",
    )
    ax_b.set_xticks([2, 5, 12, 30, 100, 300], ["2", "5", "12", "30", "100", "300"])
    ax_b.minorticks_off()
    figures.save(fig, "06_optimal_head_size", ctx.figures_dir, caption=law_caption(data["laws"]))


def reading_formulas(readings):
    """The formulas of the bias readings (the results of
    :func:`mhanw.chapters.ch06_optimal_head_size.readings`) as a table for the book, one row per squared-bias
    exponent ``a``: the reading in words, the squared bias, the leading order and the law as maths cells
    (:func:`mhanw.infra.tables.math_cell`)."""
    import pandas as pd

    from ..infra.tables import math_cell

    return pd.DataFrame(
        {
            a: {
                "reading": READING_TEX.get(a, f"squared bias $\\propto k^{{-{a}}}$"),
                "squared bias": math_cell(m.bias_law),
                "leading order": math_cell(derivation.formula(m)),
                "law": math_cell(derivation.law_latex(m)),
            }
            for a, m in readings["data"].value["models"].items()
        }
    ).T.rename_axis("a")


def readable_columns(table, ratio_of: str = "d_k*"):
    """``table`` (a pandas DataFrame of the minimisers or of the real roots) with its columns named in words
    for the book: ``ratio_real_log_ratio`` -> ``root / log ratio``, ``local_slope`` and ``local_exponent`` ->
    ``p(n)``, ``k_real`` -> ``real root``, ``n_heads`` -> ``H*``; the data are unchanged (a renamed copy).
    ``ratio_of``: what a plain ``ratio_*`` column divides (``"d_k*"``, the integer minimiser, or ``"root"``)."""
    fixed = {
        "log10_n": "log10 n",
        "k_real": "real root",
        "d_k_real": "real root",
        "log10_k_real": "log10 real root",
        "local_exponent": "p(n)",
        "local_slope": "p(n)",
        "n_heads": "H*",
        "d_k": "d_k*",
    }

    def words(column):
        if not isinstance(column, str):
            return column
        if column in fixed:
            return fixed[column]
        for prefix, who in (("ratio_real_", "root"), ("ratio_", ratio_of), ("asym_", "formula")):
            if column.startswith(prefix):
                what = column[len(prefix) :].replace("_", " ")
                return f"{who} / {what}" if who != "formula" else f"formula: {what}"
        return column

    return table.rename(columns=words)


# --------------------------------------------------------------------------- real heads


def heads_takeaway(sims: dict) -> str:
    """The lesson of the real-heads figure in one sentence, from the simulation ``{(regression, n):
    BudgetResult}``: under each rule, in how many settings many small heads (``d_k <= D/4``) or few big ones
    have the lowest IMSE, and whether that depends on the rule."""
    first = next(iter(sims.values()))
    rules, total = [r for r in first.rules if all(r in s.rules for s in sims.values())], len(sims)
    clauses, winners = [], set()
    for rule in rules:
        best = [s.best_d_k(rule) for s in sims.values()]
        small = sum(k <= s.budget // 4 for k, s in zip(best, sims.values()))
        values = "best $d_k$ " + join_list([str(k) for k in sorted(set(best))], "or")
        if small in (0, total):
            kind = "many small heads" if small else "few big heads"
            winners.add(kind)
            where = "every setting" if total > 1 else "the one setting"
            clauses.append(f"{RULE_WORDS.get(rule, rule)}, {kind} have the lowest IMSE in {where} ({values})")
        else:
            winners.add("mixed")
            clauses.append(
                f"{RULE_WORDS.get(rule, rule)}, many small heads have the lowest IMSE in {small} of the "
                f"{total} settings and few big heads in the others ({values})"
            )
    lead = (
        "Which head size wins depends on how the heads are combined"
        if len(winners) > 1 or "mixed" in winners
        else "The same kind of head wins however the heads are combined"
    )
    return f"{lead}: {'; '.join(clauses)}."


def budget_caption(sim_budget: int) -> str:
    """The caption of :func:`budget_figure` for the budget ``sim_budget``."""
    return (
        f"Integrated MSE of real Nadaraya–Watson heads under the fixed budget $D={sim_budget}$, against the "
        "head size $d_k$ (so $H=D/d_k$ heads), one panel per regression function: the combination rule by "
        "line style, the sample size $n$ by colour; the lowest point of a curve is its best head size. "
        f'"Many small heads" are the points with $d_k\\le {max(sim_budget // 4, 1)}$ ($D/4$), the big ones the rest; '
        "where no bar shows, it is shorter than its marker."
    )


def _regression_title(m: str) -> str:
    """A panel title for the regression function ``m``: a catalogue function of the default simulation by
    its formula, a parsed formula typeset from its sympy expression, another catalogue function by its text."""
    from .. import data

    if m in REGRESSION_TITLES:
        return REGRESSION_TITLES[m]
    f = data.regression_function(m)
    return f"$m(x)={sp.latex(f.expression, ln_notation=True)}$" if f.expression is not None else f"$m$ = {f.formula}"


def budget_figure(ctx, simulation) -> None:
    """The real-heads figure of Thm 6.1 (``06_optimal_head_size_budget``): one panel per regression function,
    the evaluation IMSE of the budget simulation (the step's results) against the head size ``d_k``
    (``H = D/d_k`` heads, log-log), one line per rule (style, marker) and sample size (colour; filled markers
    for the smallest ``n``), bars of 2 s.e. (:func:`mhanw.infra.figures.errorbar`)."""
    from ..infra import figures

    p, sims = ctx.params, simulation["data"].value
    regressions, sim_n, sim_budget = list(p.regressions), list(p.sim_n), p.sim_budget
    fig, axes = figures.panels(len(regressions), height=2.9, sharey=True)
    for ax, m in zip(axes, regressions):
        for j, n in enumerate(sim_n):
            s = sims[m, n]
            for rule, ls, marker in [x for x in RULE_STYLES if x[0] in s.rules]:
                figures.errorbar(
                    ax,
                    s.d_k_values,
                    s.mean[s.rules.index(rule)],
                    s.se[s.rules.index(rule)],
                    color=f"C{j}",
                    linestyle=ls,
                    marker=marker,
                    mfc=f"C{j}" if j == 0 else "white",
                    mew=1.0,
                    label=f"{rule}, $n={n}$",
                )
        ks = sims[m, sim_n[0]].d_k_values
        ax.set(
            xscale="log",
            yscale="log",
            xlabel=rf"head size $d_k$ ($H={sim_budget}/d_k$ heads)",
            ylabel="IMSE",
            title=f"({chr(ord('a') + regressions.index(m))}) {_regression_title(m)}",
        )
        ax.set_xticks(ks, [f"{k}\n($H$={sim_budget // k})" for k in ks])
        ax.set_yticks(Y_TICKS, [f"{y:g}" for y in Y_TICKS])
        ax.minorticks_off()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, columnspacing=1.0)  # below the panels, off the data
    figures.save(
        fig, "06_optimal_head_size_budget", ctx.figures_dir, error_bars=True, caption=budget_caption(sim_budget)
    )
