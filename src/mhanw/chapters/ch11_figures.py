"""Chapter 11's figures, their captions and the takeaways, drawn from the results of its steps
(:mod:`mhanw.chapters.ch11_incontext_attention`): HDI_PA along training with the controls
(:func:`apart_figure`), the test MSE against the head size at two budgets with ``d_k*(n)`` and the laws
(:func:`sizes_figure`), and locality against the context length (:func:`local_figure`).  Every sentence
that says where something moved is generated from the numbers or the records."""

from __future__ import annotations

import numpy as np

from .. import incontext as ic
from ..infra import figures
from ..infra import verdicts as V
from ..infra.prose import join_list
from ..infra.results import Results
from ..infra.rules import decide_all
from . import ch11_incontext_attention as ch
from .base import Context

#: Colour and line style of each configuration of the heads-apart experiment.
STYLES = {
    "free": ("C0", "-", "trained heads"),
    "penalised": ("C1", ":", "with the orthogonality penalty"),
    "tied": ("C2", "--", "tied heads"),
}
#: The line of each law of ``d_k*(n)``.
LAW_STYLES = {"printed": ("k", "--"), "M1": ("C3", ":"), "constant": ("grey", "-.")}


def records_of(step: str, node) -> list:
    """The chapter's records that read the results of ``step`` alone (``node``), decided on them: a figure
    can state its records before the chapter closes."""
    mine = [c for c in ch.CLAIMS if c.rule.path.startswith(f"{step}.")]
    return decide_all(mine, Results({step: node}), chapter="11_incontext_attention", section=ch.SECTION)


def _log_ticks(ax, values) -> None:
    """Ticks at ``values`` of a log x axis, labelled by the whole numbers, no minor ticks."""
    from matplotlib.ticker import NullLocator

    ax.set_xticks(values, [str(int(v)) for v in values])
    ax.xaxis.set_minor_locator(NullLocator())


def _short(record) -> str:
    return record.claim.rsplit("/", 1)[1]


def _by_verdict(records) -> str:
    """``"holds for iso, undecided at this size for aniso"`` from the records."""
    groups: dict = {}
    for r in records:
        groups.setdefault(r.verdict, []).append(_short(r))
    return join_list(f"{V.predicate(v)} for {join_list(names)}" for v, names in groups.items())


def apart_figure(ctx: Context, apart) -> None:
    """The key figure of part 2: HDI_PA of the keys (left pair) and of the query-key circuits (right pair)
    along training, per task family; free heads with 2 s.e. bars over seeds, the penalised and the tied
    heads, the Haar levels grey.  Its caption states the records."""
    fig, axes = figures.panels(4, height=2.5, sharey=True)
    k = 0
    for field, what in (("hdi", "keys"), ("hdi_circuit", "circuits")):
        for name, _ in ch.FAMILIES:
            ax, node = axes[k], apart[name]
            k += 1
            for config, (color, ls, label) in STYLES.items():
                path = node[config]["paths"].get(field)
                if path is None:
                    continue
                figures.errorbar(
                    ax, node["steps"], path["mean"], path["se"], color=color, linestyle=ls, ms=3, label=label
                )
            haar = node["haar" if field == "hdi" else "haar_circuit"].value
            ax.axhline(haar, color="grey", lw=0.8, label="random heads (Haar)")
            ax.set_title(f"{what}, {name}", fontsize=8)
            ax.set_xlabel("Adam step")
    axes[0].set_ylabel(r"HDI$_{\mathrm{PA}}$")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=7)
    figures.save(fig, "11_incontext_attention", ctx.figures_dir, caption=apart_caption(apart), error_bars=True)


def apart_caption(apart) -> str:
    """The key figure's caption: how to read it, then the records."""
    claimed, controls = ch.paper_and_controls(records_of("heads_apart", apart))
    pen = [r for r in controls if "/penalty/" in r.claim]
    tied = [r for r in controls if "/tied/" in r.claim]
    return (
        "HDI$_{\\mathrm{PA}}$ of the keys' column spaces (two left panels) and of the query-key circuits "
        "$W_QW_K^\\top$ (two right panels) along training, mean over seeds: trained heads (solid, with bars), "
        "the same starts with the orthogonality penalty (dotted, the positive control), tied heads (dashed, "
        "the negative control) and random heads (grey). Look at where the solid line ends against the grey "
        f"one. The reading that training moves heads apart {_by_verdict(claimed)}; the positive control "
        f"{_by_verdict(pen)}; the negative control {_by_verdict(tied)}."
    )


def apart_takeaway(apart) -> str:
    """One sentence after the key figure, from the records and the numbers."""
    claimed, _ = ch.paper_and_controls(records_of("heads_apart", apart))
    parts = []
    for r, (name, _) in zip(claimed, ch.FAMILIES):
        c = apart[name]["free"]["hdi_change"]
        parts.append(
            f"on {name} tasks HDI_PA moved by {c.value:+.3f} ± {c.se:.3f} and the reading {V.predicate(r.verdict)}"
        )
    return "Takeaway: " + join_list(parts) + "."


def sizes_figure(ctx: Context, sizes) -> None:
    """Part 3's figure: the test MSE against the head size ``d_k`` at each budget, one line per context length
    (2 s.e. bars over seeds), and ``log2 d_k*(n)`` with 2 bootstrap s.e. per budget beside the fitted laws."""
    fig, axes = figures.panels(3, height=2.7)
    for ax, D in zip(axes[:2], ch.BUDGETS):
        node = sizes[f"d{D}"]
        colors = [f"C{i}" for i in range(len(node["n_values"]))]
        for i, (nv, color) in enumerate(zip(node["n_values"], colors)):
            figures.errorbar(
                ax, node["d_k"], node["mse_mean"][i], node["mse_se"][i], color=color, ms=3, label=f"n = {int(nv)}"
            )
            best = node["best"][i]
            if not best["censored"]:
                ax.axvline(best["d_k"].value, color=color, lw=0.6, alpha=0.6)
        ax.set(xscale="log", yscale="log", xlabel="head size $d_k = D/H$", title=f"budget $D = {D}$")
        _log_ticks(ax, node["d_k"])
    axes[0].set_ylabel("test MSE (fresh tasks)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=7)
    ax = axes[2]
    for j, D in enumerate(ch.BUDGETS):
        node = sizes[f"d{D}"]
        n = np.asarray(node["n_values"], dtype=float)
        y = [b["log2"].value for b in node["best"]]
        se = [b["log2"].se for b in node["best"]]
        figures.errorbar(ax, n * (1 + 0.04 * j), y, se, color=f"C{j}", linestyle="none", ms=4, label=f"$D={D}$")
        for law, fit in node["laws"].items():
            color, ls = LAW_STYLES[law]
            curve = fit["log2_factor"] + np.log2(ic.law_values(law, n, ctx.params.d))
            ax.plot(n, curve, color=color, linestyle=ls, lw=0.8, label=law if j == 0 else None)
    ax.set(xscale="log", xlabel="context length $n$", ylabel=r"$\log_2 d_k^*$", title="best head size")
    _log_ticks(ax, sizes[f"d{ch.BUDGETS[0]}"]["n_values"])
    ax.legend(fontsize=7, loc="lower right")
    figures.save(fig, "11_incontext_attention_sizes", ctx.figures_dir, caption=sizes_caption(sizes), error_bars=True)


def sizes_caption(sizes) -> str:
    """Part 3's caption: how to read it, then the records."""
    records = records_of("head_sizes", sizes)
    grows = [r for r in records if "/head-size-grows/" in r.claim]
    law = [r for r in records if "/head-size-law/" in r.claim]
    return (
        "Test MSE on fresh tasks against the head size $d_k=D/H$ at a fixed budget $D$, one line per context "
        "length $n$ (thin vertical lines: the best head size where it lies inside the grid); right, "
        "$\\log_2 d_k^*(n)$ with bootstrap bars and the three laws fitted with a free factor (dashed: "
        "Theorem 6.1's printed law, dotted: chapter 6's M1 law, dash-dotted: a constant). Look at whether the "
        f"minimum moves right as $n$ grows. That $d_k^*$ grows with $n$ {_by_verdict(grows)}; that the "
        f"printed law fits better than the others {_by_verdict(law)}."
    )


def local_figure(ctx: Context, sizes) -> None:
    """Part 4's figure: each head's ``n_eff/n`` (left) and inverse temperature (right) against ``n``, per
    budget, the head counts averaged (thick) and one thin line per head count."""
    fig, axes = figures.panels(2, height=2.6)
    for j, D in enumerate(ch.BUDGETS):
        node = sizes[f"d{D}"]
        n = np.asarray(node["n_values"], dtype=float)
        for k in range(len(node["d_k"])):
            axes[0].plot(n, node["neff_by_heads"][:, k], color=f"C{j}", lw=0.5, alpha=0.5)
            axes[1].plot(n, node["beta_by_heads"][:, k], color=f"C{j}", lw=0.5, alpha=0.5)
        axes[0].plot(n, node["neff_mean"], color=f"C{j}", lw=2, marker="o", ms=3, label=f"$D={D}$")
        axes[1].plot(n, np.exp(np.log(node["beta_by_heads"]).mean(axis=1)), color=f"C{j}", lw=2, marker="o", ms=3)
    axes[0].set(xscale="log", yscale="log", xlabel="context length $n$", ylabel="$n_{\\mathrm{eff}}/n$ per head")
    axes[1].set(xscale="log", yscale="log", xlabel="context length $n$", ylabel=r"inverse temperature $\beta$")
    for ax in axes:
        _log_ticks(ax, sizes[f"d{ch.BUDGETS[0]}"]["n_values"])
    axes[0].legend(fontsize=7)
    figures.save(fig, "11_incontext_attention_local", ctx.figures_dir, caption=local_caption(sizes))


def local_caption(sizes) -> str:
    """Part 4's caption."""
    records = [r for r in records_of("head_sizes", sizes) if "/local/" in r.claim]
    return (
        "Each head's effective sample size as a share of the context, $n_{\\mathrm{eff}}/n$ (left), and its "
        "inverse temperature $\\beta=\\lVert A\\rVert_F/\\sqrt{\\min(d_k,d)}$ with $A=W_QW_K^\\top/\\sqrt{d_k}$ (right), against the "
        "context length, per budget (thick: the head counts averaged; thin: one head count each). Look at the "
        f"slope of the thick lines: a falling share is a local estimator. Locality {_by_verdict(records)}."
    )


def summary_table(apart) -> dict:
    """The numbers of part 2 for :func:`mhanw.infra.tables.show`, one row per family and configuration:
    HDI_PA of the keys at the start and the end, and the changes of every recorded quantity (mean ± s.e.
    over seeds, paired)."""
    from ..infra import tables

    def pm(q):
        return tables.pm(q.value, q.se)

    rows = {}
    for name, _ in ch.FAMILIES:
        for config in ch.CONFIGS:
            node = apart[name][config]
            rows[f"{name}, {STYLES[config][2]}"] = {
                "HDI_PA start": pm(node["start"]),
                "HDI_PA end": pm(node["end"]),
                **{
                    f"change: {what}": pm(node[f"{field}_change"]) if f"{field}_change" in node else "--"
                    for field, what in (
                        ("hdi_circuit", "circuits' HDI_PA"),
                        ("error_corr", "error correlation"),
                        ("mse", "test MSE"),
                    )
                },
            }
    return rows


def show_text(text: str) -> None:
    """Display generated text as Markdown, the records' named symbols typeset."""
    from IPython.display import Markdown, display

    from ..infra.notation import markdown_text

    display(Markdown(markdown_text(text)))
