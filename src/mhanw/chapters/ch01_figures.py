"""The figures of chapter 01 (Thm 2.1) and what to read off them.

Each figure function takes the run's :class:`mhanw.chapters.base.Context` and the results of the steps of
:mod:`mhanw.chapters.ch01_attention_is_nadaraya_watson` it draws; each takeaway is one sentence (Markdown)
decided by the same numbers.  Figures are drawn in a notebook run only (a records run calls no figure).
"""

from __future__ import annotations

import numpy as np

from ..infra.verdicts import N_SE
from .base import Context
from .ch01_attention_is_nadaraya_watson import IDENTITY_COLUMNS, IDENTITY_TOL, LOCAL_MAX_FRACTION


def warmup_figure(ctx: Context, warmup) -> None:
    """The warm-up: the Nadaraya-Watson fits at four bandwidths over the data, and the weight matrix of
    each bandwidth (row a: the weights of the prediction at the a-th data point)."""
    import matplotlib.pyplot as plt

    from .. import nw
    from ..infra import figures

    raw, bandwidths = warmup["data"].value, warmup["bandwidths"]
    x, y, grid = raw["x"], raw["y"], raw["grid"]
    n = len(x)
    fig = plt.figure(figsize=(figures.TEXT_WIDTH, 4.6))
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.1, 1])
    ax_fit = top.subplots()
    ax_fit.plot(x, y, "o", color="0.45", ms=3, label="data $(x_i, y_i)$")
    ax_fit.plot(grid, np.sin(2 * grid), color="k", lw=0.8, ls=":", label=r"$m(x)=\sin 2x$")
    for h, fit in zip(bandwidths, raw["fits"]):
        ax_fit.plot(grid, fit, lw=1.2, label=f"NW fit, $h={h}$")
    ax_fit.set(xlabel="$x$", ylabel="$y$", title="Nadaraya–Watson fits for four bandwidths")
    ax_fit.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    axes_w = bottom.subplots(1, len(bandwidths), sharey=True)
    for ax, h in zip(axes_w, bandwidths):
        # queries are the data points themselves, sorted by x: row a, column i is w_i(x_a), as in a matrix
        weights = nw.kernel_weights(x[:, None], x[:, None], bandwidth=h)
        image = ax.imshow(weights, cmap="viridis", interpolation="nearest", extent=(0.5, n + 0.5, n + 0.5, 0.5))
        bottom.colorbar(image, ax=ax, location="bottom", shrink=0.9, aspect=15, label="weight $w_i(x_a)$")
        ax.set(title=f"$h={h}$", xlabel="key $i$ (sorted by $x_i$)", xticks=[1, n // 2, n])
        ax.grid(False)
    bottom.suptitle("weight matrices: row $a$ = the weights of one prediction", fontsize=8.5)
    axes_w[0].set(ylabel="query $a$ (sorted by $x_a$)", yticks=[1, n // 2, n])
    figures.save(
        fig,
        "01_attention_is_nadaraya_watson_warmup",
        ctx.figures_dir,
        caption="Top: a small bandwidth $h$ chases the noise, a large one flattens $\\sin 2x$. Bottom: each row "
        "of a weight matrix is the recipe of one prediction; the smaller $h$, the fewer keys it uses.",
    )


def summary_figure(ctx: Context, identity, locality, consistency) -> None:
    """The chapter's key figure (three panels): (a) the identity and the Gaussian form, (b) ``n_eff/n``
    against ``d_k``, (c) the large-``n`` limit of the estimate."""
    from ..infra import figures
    from ..locality import expected_neff_fraction

    floor = 1e-17  # an error of exactly 0 is drawn at this floor on the log scale
    dims, table = identity["dims"], identity["table"]
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=3.3)
    labels = (
        "attention vs NW loop",
        r"equal norms, Gauss $h=d_k^{1/4}$",
        r"equal norms, Gauss $h=d_k^{-1/2}$",
        r"unequal norms, Gauss $h=d_k^{1/4}$",
    )
    for column, label, marker in zip(IDENTITY_COLUMNS, labels, "os^v"):
        ax_a.plot(dims, np.maximum(table[column], floor), marker=marker, label=label)
    ax_a.set(
        xscale="log", yscale="log", xlabel=r"$d_k$", ylabel="max abs difference", title="(a) identity, Gaussian form"
    )
    ax_a.set_xticks(dims, [str(d) for d in dims])
    ax_a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    neff = locality["neff"]
    grid = np.geomspace(1, 256, 200)
    ax_b.plot(grid, expected_neff_fraction(grid), color="k", lw=1, label=r"$(1+2/d_k)^{-d_k/2}$")
    ax_b.axhline(np.exp(-1), color="grey", ls="--", lw=0.8, label=r"$e^{-1}$")
    ax_b.errorbar(
        neff["d_k"], neff["mean"], yerr=figures.half_width(neff["se"]), marker="o", linestyle="none", label="measured"
    )
    ax_b.set(
        xscale="log", ylim=(0, 1), xlabel=r"$d_k$", ylabel=r"$n_{\mathrm{eff}}/n$", title="(b) effective sample size"
    )
    ax_b.set_xticks(list(neff["d_k"]), [str(d) for d in neff["d_k"]])
    ax_b.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)

    c = consistency
    tilted, target = c["tilted"].value, c["target"].value
    ax_c.errorbar(c["n"], c["mean"], yerr=figures.half_width(c["se"]), marker="o", label="estimate at $q$")
    ax_c.axhline(tilted, color="C1", ls="--", lw=1, label=r"tilted mean $\mathbb{E}\,m(Z)$")
    ax_c.axhline(target, color="C2", ls=":", lw=1, label=r"$m(q)$")
    bar = figures.half_width(c["se"])
    span = [tilted, target, *(c["mean"] - bar), *(c["mean"] + bar)]
    pad = 0.15 * (max(span) - min(span))
    ax_c.set(
        xscale="log",
        xlabel=r"sample size $n$",
        ylabel="estimate",
        ylim=(min(span) - pad, max(span) + pad),
        title="(c) the large-$n$ limit",
    )
    ax_c.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7)
    caption = (
        "(a) Compare the four curves with rounding error ($10^{-16}$): attention against the NW double loop, "
        "and attention with equal-norm keys against Gaussian NW at the two candidate bandwidths (at $d_k=1$ "
        "they coincide; an exact 0 is drawn at $10^{-17}$). (b) The share of the keys that carries a query's "
        "weight, against the Gaussian theory's curve and its floor $e^{-1}$. (c) The estimate as $n$ grows, "
        "against the two candidate limits, the tilted mean and $m(q)$."
    )
    figures.save(fig, "01_attention_is_nadaraya_watson", ctx.figures_dir, caption=caption, error_bars=True)


def trained_figure(ctx: Context, trained) -> None:
    """The figure of part 5: ``n_eff/n`` per head and per layer against the Gaussian model."""
    import matplotlib.pyplot as plt

    from ..infra import figures

    t, m = trained, trained["model"]
    model, model_se = m["overall"].value, m["overall"].se
    fig, ax = plt.subplots(figsize=(figures.TEXT_WIDTH, 2.5))
    layers = np.arange(1, t["n_layers"] + 1)
    offsets = np.linspace(-0.3, 0.3, t["n_heads"])
    for layer in range(t["n_layers"]):
        ax.errorbar(
            layers[layer] + offsets,
            t["head_means"][layer],
            yerr=figures.half_width(t["head_se"][layer]),
            fmt=".",
            color="0.6",
            ms=3,
            lw=0.6,
            label="one head" if layer == 0 else None,
        )
    ax.errorbar(
        layers,
        t["by_layer"],
        yerr=figures.half_width(t["by_layer_se"]),
        fmt="o",
        color="C0",
        ms=5,
        label="layer mean (over sentences)",
    )
    band = figures.half_width(model_se)
    ax.axhspan(model - band, model + band, color="C1", alpha=0.3)
    ax.axhline(model, color="C1", ls="--", lw=1.2, label="Gaussian model, same token counts")
    ax.axhline(m["limit"].value, color="C1", ls=":", lw=1, label=r"Gaussian model, $n\to\infty$")
    ax.axhline(LOCAL_MAX_FRACTION, color="k", ls="-.", lw=0.8, label=rf"locality threshold ${LOCAL_MAX_FRACTION:g}$")
    ax.axhline(t["floor"].value, color="C3", ls=(0, (1, 1)), lw=1, label=r"floor $1/n$ (one token)")
    ax.set(
        xlabel="layer of all-MiniLM-L6-v2",
        ylabel=r"$n_{\mathrm{eff}}/n$",
        xticks=layers,
        ylim=(0, 1),
        title=f"trained attention on {t['sentences']} sentences: effective share of the tokens per query",
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    caption = (
        "Each grey point is one head of the trained encoder, each blue point a layer's mean: the share of the "
        "tokens that carries a query's weight; bars are 2 standard errors over the sentences. Compare them with "
        "the orange dashed line (the Gaussian model of section 3 at the same sentence lengths; its shaded "
        "±2 s.e. band is narrower than the line), the orange dotted line (the same model as n grows) and "
        "the black dash-dotted locality threshold."
    )
    figures.save(fig, "01_attention_is_nadaraya_watson_trained", ctx.figures_dir, caption=caption, error_bars=True)


# --------------------------------------------------------------------------- takeaways


def _agreement(err: float) -> str:
    """How close two computations came, in words decided by the identity's tolerance."""
    if err <= IDENTITY_TOL:
        return f"to rounding error ({err:.0e})"
    return f"only to {err:.3g}, more than rounding error ({IDENTITY_TOL:g})"


def panel_takeaways(identity, locality, consistency) -> dict[str, str]:
    """What each panel of the summary figure shows, one sentence each (Markdown), from the steps' results:
    ``{"(a)": ..., "(b)": ..., "(c)": ...}``.  The verdicts are said in "What we found"; a takeaway says
    what to read off the panel."""
    from ..infra import tables

    literal = dict(zip(identity["dims"], identity["table"][IDENTITY_COLUMNS[2]]))
    d_lit = max(literal, key=lambda d: literal[d])
    a = (
        f"Attention reproduces the textbook NW loop {_agreement(identity['max_err'].value)}, and, with keys of "
        f"equal norm, Gaussian NW at $h=d_k^{{1/4}}$ {_agreement(identity['gauss_max_err'].value)}; at the "
        f"literal $h=1/\\sqrt{{d_k}}$ it is off by up to {literal[d_lit]:.3g} ($d_k={d_lit}$)."
    )
    neff = locality["neff"]
    k, low = int(np.argmax(neff["d_k"])), int(np.argmin(neff["mean"]))
    above = bool(np.all(neff["mean"] - N_SE * neff["se"] > LOCAL_MAX_FRACTION))
    b = (
        f"For $d_k$ from {int(np.min(neff['d_k']))} to {int(neff['d_k'][k])}, a query's weight is carried by "
        f"{np.min(neff['mean']):.2f} to {np.max(neff['mean']):.2f} of the keys (at $d_k={int(neff['d_k'][k])}$: "
        f"{tables.pm(neff['mean'][k], neff['se'][k])}; the theory's mean there {neff['expected'][k]:.3f}, its "
        f"floor $e^{{-1}}\\approx{np.exp(-1):.3f}$): "
        + (
            "every one more than a tenth of the sample by 3 standard errors, nowhere near a vanishing share."
            if above
            else f"at $d_k={int(neff['d_k'][low])}$ it is not more than a tenth of the sample by 3 standard errors."
        )
    )
    est, tilted, target = consistency["estimate"], consistency["tilted"].value, consistency["target"].value
    c = (
        f"At $n={consistency['n_max']}$ the estimate is {tables.pm(est.value, est.se)}: "
        f"{abs(est.value - tilted) / est.se:.1f} standard errors from the tilted mean {tilted:.4f} and "
        f"{abs(est.value - target) / est.se:.0f} from $m(q)={target:.4f}$."
    )
    return {"(a)": a, "(b)": b, "(c)": c}


def trained_takeaway(trained) -> str:
    """What the trained-attention figure shows, one sentence (Markdown), from the step's results."""
    from ..infra import tables

    t, m = trained["overall"], trained["model"]["overall"]
    k, heads = trained["local_heads"], trained["n_layers"] * trained["n_heads"]
    return (
        f"Trained heads spread a query's weight over {tables.pm(t.value, t.se)} of the tokens on average, against "
        f"{tables.pm(m.value, m.se)} for the Gaussian model at the same sentence lengths; {k} of the {heads} "
        f"heads {'lies' if k == 1 else 'lie'} below a tenth of the tokens by 3 standard errors."
    )
