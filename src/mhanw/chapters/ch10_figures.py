"""Chapter 10's figures, their captions and the takeaway after the key figure, drawn from the results of
its steps (:mod:`mhanw.chapters.ch10_training_heads`): the HDI_PA paths of training
(:func:`trajectory_figure`), the leave-one-out illustration (:func:`loss_figure`) and what else moves over
training (:func:`moves_figure`).  Every sentence that says where something moved is generated from the
numbers or the records."""

from __future__ import annotations

import numpy as np

from ..infra import figures
from ..infra import verdicts as V
from ..infra.prose import count_of, join_list, number_word
from ..infra.results import Results
from . import ch10_training_heads as ch
from .base import Context
from .ch04_head_diversity_index import regression_label

#: The lines of the figures: colour, line style and marker per combination rule.
STYLES = {"average": ("C0", "-", "o"), "sum": ("C2", "-.", "^"), "concat": ("C3", "--", "s")}
#: The four panels of the key figure: (kind of m, shape).
PANELS = tuple((kind, shape) for kind in ("isotropic", "anisotropic") for shape in ("equal", "over"))
_OP = {"equal": "=", "over": ">", "under": "<"}


def _nodes(training) -> list:
    return [training[s] for s in training["settings"]]


def records_of(training) -> list:
    """The chapter's records on the results of its training step alone (:func:`ch.claims`)."""
    return ch.claims(Results({"training": training}))


def trajectory_figure(ctx: Context, training) -> None:
    """The key figure: HDI_PA of the keys along gradient descent, one panel per (kind of m, shape), a line
    per combination rule (2 s.e. bars across initialisations), the penalised control dotted, the Haar
    level grey, chapter 05's IMSE optimum a star; its caption states the records."""
    nodes = _nodes(training)
    panels = [(k, sh) for k, sh in PANELS if any(n["kind"] == k and n["shape"] == sh for n in nodes)]
    fig, axes = figures.panels(len(panels), height=2.7, sharey=True)
    for ax, (kind, shape) in zip(axes, panels):
        here = [n for n in nodes if n["kind"] == kind and n["shape"] == shape]
        for n in here:
            color, ls, mk = STYLES[n["combination"]]
            hdi = n["paths"]["hdi"]
            figures.errorbar(
                ax,
                n["steps"],
                hdi["mean"],
                hdi["se"],
                color=color,
                linestyle=ls,
                marker=mk,
                ms=3,
                label=f"trained, {n['combination']}",
            )
            if "control" in n:
                ax.plot(
                    n["steps"],
                    n["control"]["paths"]["hdi"]["mean"],
                    color=color,
                    linestyle=":",
                    lw=1,
                    label=f"with penalty, {n['combination']}",
                )
        first = here[0]
        ax.axhline(first["haar"].value, color="grey", lw=0.8, label=r"Haar $1-d_k/d$")
        if "optimum_hdi" in first:
            ax.plot(
                first["steps"][-1],
                first["optimum_hdi"].value,
                marker="*",
                color="k",
                ms=9,
                linestyle="none",
                label="IMSE optimum (ch. 5)",
            )
        ax.set(
            xlabel="descent step",
            title=f"{regression_label(first['regression'])}, $H={first['n_heads']}$, $Hd_k{_OP[shape]}d$",
        )
    axes[0].set_ylabel(r"HDI$_{\mathrm{PA}}$ of the keys")
    handles, labels = axes[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=7)
    figures.save(
        fig, "10_training_heads", ctx.figures_dir, caption=trajectory_caption(records_of(training)), error_bars=True
    )


def _slugs(records) -> str:
    return join_list([r.claim.rsplit("/", 1)[1] for r in records])


def _verdict_counts(records) -> str:
    """ "moved apart ... in none of the eight settings, moved closer ... in two (aniso-equal-average and ...),
    ..." from the records."""
    n = len(records)
    groups = (
        ("moved apart (rose by more than 3 s.e.)", [r for r in records if r.holds]),
        ("moved closer (fell by more than 3 s.e.)", [r for r in records if r.fails]),
        ("did not move detectably", [r for r in records if r.verdict == V.UNDECIDED]),
        ("lie outside the conditions of the measurement", [r for r in records if r.outside]),
    )
    parts = [
        f"{what} in {ch.settings_count(len(rs), n) if i == 0 else number_word(len(rs))}"
        + (f" ({_slugs(rs)})" if rs and len(rs) < n else "")
        for i, (what, rs) in enumerate(groups)
        if rs or i == 0
    ]
    return join_list(parts)


def trajectory_caption(records) -> str:
    """The key figure's caption: how to read it, then what it shows, generated from the records."""
    claimed, controls = ch.paper_and_controls(records)
    text = (
        "Each panel is one $m$ and one shape; a line is the mean $\\mathrm{HDI_{PA}}$ of the keys over the "
        "initialisations along gradient descent (solid: averaged heads, dashed: concat), the dotted line the "
        "same starts trained with the orthogonality penalty, the grey line random heads, the star chapter 5's "
        f"IMSE optimum. Trained heads {_verdict_counts(claimed)}"
    )
    if controls:
        text += f"; with the penalty they moved apart in {count_of(sum(r.holds for r in controls), len(controls))}"
    return text + "."


def takeaway(records) -> str:
    """One sentence after the key figure, generated from the records: whether training on the
    leave-one-out loss pushed heads apart, where it pulled them together, the smallest move the undecided
    settings could detect against the positive control's rise, and whether the control held."""
    claimed, _ = ch.paper_and_controls(records)
    up = [r for r in claimed if r.holds]
    down = [r for r in claimed if r.fails]
    said = [
        f"training pushed the heads apart in {ch.settings_count(len(up), len(claimed))}"
        + (f" ({_slugs(up)})" if up and len(up) < len(claimed) else "")
    ]
    if down:
        said.append(
            "pulled them together in "
            + join_list(
                f"{r.claim.rsplit('/', 1)[1]} ({r.statistics[0].value:+.3f} ± {r.statistics[0].se:.3f})" for r in down
            )
        )
    text = "Takeaway: " + join_list(said) + "."
    power = ch.power_text(records)
    return text + (" " + power if power else "")


def show_text(text: str) -> None:
    """Display generated record text (the takeaway) as Markdown, the records' named symbols typeset
    (:func:`mhanw.infra.notation.markdown_text`)."""
    from IPython.display import Markdown, display

    from ..infra.notation import markdown_text

    display(Markdown(markdown_text(text)))


def loss_figure(ctx: Context, self_match) -> None:
    """The leave-one-out illustration (:func:`ch.self_match`): in-sample and LOO error of one head ``cW``
    against the scale ``c``, mean and 2 s.e. over samples; its caption reads the directions off the curves."""
    p, scales = ctx.params, self_match["scales"]
    fig, axes = figures.panels(1, height=2.6, width=4.2)
    ax = axes[0]
    for key, label, ls, mk in (
        ("in_sample", "in-sample error (the point among the keys)", "--", "s"),
        ("loo", "leave-one-out error (the training loss)", "-", "o"),
    ):
        est = self_match[key]
        figures.errorbar(ax, scales, est["mean"], est["se"], label=label, linestyle=ls, marker=mk, ms=3)
    ax.set(
        xscale="log",
        xlabel=r"scale $c$ of the head $cW$ (an inverse bandwidth)",
        ylabel="mean squared error",
        title=f"one head, m = {regression_label(p.anisotropic_regression)}, n = {p.n}, h = {p.bandwidth:g}",
    )
    ax.legend(loc="upper left", fontsize=7)
    figures.save(fig, "10_training_heads_loss", ctx.figures_dir, caption=loss_caption(self_match), error_bars=True)


def loss_caption(self_match) -> str:
    """The illustration's caption, its directions read from the curves: where the in-sample and the
    leave-one-out error go as the head grows from the smallest to the largest scale."""
    scales, ins, loo = self_match["scales"], self_match["in_sample"]["mean"], self_match["loo"]["mean"]
    k = int(np.argmin(loo))

    def word(a, b):
        return "falls" if b < a else "rises"

    return (
        f"As the head $cW$ grows from $c={scales[0]:g}$ to $c={scales[-1]:g}$, its in-sample "
        f"error (dashed, the point among its own keys) {word(ins[0], ins[-1])} from {ins[0]:.3f} to {ins[-1]:.3f}, "
        f"while its leave-one-out error (solid) is smallest at $c={scales[k]:.2g}$ and "
        f"{word(loo[k], loo[-1])} to {loo[-1]:.3f} at the largest scale: only the leave-one-out error is a loss "
        "a head cannot win by matching a point to itself."
    )


def tick_label(node) -> str:
    """A setting's data and shape as a figure's tick label: its regression's symbol and its shape, never a
    code name (the combination rule is told by colour and marker)."""
    return f"{regression_label(node['regression'])}\n$Hd_k{_OP[node['shape']]}d$"


def moves_figure(ctx: Context, training) -> None:
    """What else moves: per setting, end minus start of the heads' error correlation (left) and of the
    fresh-data IMSE (right), 2 paired s.e. across initialisations; one tick per regression and shape, the
    combination rules side by side at it.  Its caption says where each moved by more than 3 paired s.e."""
    nodes = _nodes(training)
    fig, axes = figures.panels(2, height=2.6)
    groups = list(dict.fromkeys((n["regression"], n["shape"]) for n in nodes))
    rules = sorted({n["combination"] for n in nodes})
    offset = {c: 0.3 * (i - (len(rules) - 1) / 2) for i, c in enumerate(rules)}
    first = {g: next(n for n in nodes if (n["regression"], n["shape"]) == g) for g in groups}
    for ax, field, ylabel in (
        (axes[0], "error_corr_change", "change of error correlation"),
        (axes[1], "imse_change", "change of IMSE (fresh data)"),
    ):
        for n in nodes:
            color, _, mk = STYLES[n["combination"]]
            c = n[field]
            xi = groups.index((n["regression"], n["shape"])) + offset[n["combination"]]
            figures.errorbar(ax, [xi], [c.value], [c.se], color=color, marker=mk, linestyle="none")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xticks(np.arange(len(groups)), [tick_label(first[g]) for g in groups], fontsize=7)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set(ylabel=ylabel)
    for comb in rules:
        color, _, mk = STYLES[comb]
        axes[0].plot([], [], color=color, marker=mk, linestyle="none", label=comb)
    axes[0].legend(loc="lower left", fontsize=7)
    caption = (
        "Per setting, end minus start of training of the heads' error correlation on fresh test points (left) "
        "and of the ensemble's IMSE on fresh data (right); a point below zero is a fall. "
        + ch.changes_text(training)
        + "."
    )
    figures.save(fig, "10_training_heads_moves", ctx.figures_dir, caption=caption, error_bars=True)


def summary_table(training) -> dict:
    """The numbers of every setting for :func:`mhanw.infra.tables.show`: HDI_PA at start and end, its change,
    the circuits' (HDI_RV) change, the control's change, the IMSE optimum's HDI_PA and the Haar level."""
    from ..infra import tables

    def pm(q):
        return tables.pm(q.value, q.se)

    return {
        slug: {
            "HDI_PA start": pm(n["start"]),
            "HDI_PA end": pm(n["end"]),
            "change": pm(n["hdi_change"]),
            "circuits (HDI_RV) change": pm(n["hdi_circuit_change"]),
            "control change": pm(n["control"]["change"]) if "control" in n else "--",
            "IMSE optimum HDI_PA": n["optimum_hdi"].value if "optimum_hdi" in n else float("nan"),
            "Haar": n["haar"].value,
        }
        for slug, n in zip(training["settings"], _nodes(training))
    }
