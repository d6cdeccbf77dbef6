"""Chapter 02 (Thm 3.1): the bias-variance-covariance decomposition of an ensemble of heads.

The experiment, as steps (:mod:`mhanw.chapters.base`): the identity with empirical moments at Haar heads
(:func:`identity`), what divisor ``R - 1`` does (:func:`ddof1`), weights that do not sum to one
(:func:`unnormalised`), identical heads (:func:`copies`), the three terms along the pair family of two heads
(:func:`pairs`) and the decomposition derived in sympy (:func:`symbolic`).  The decomposition itself is
:mod:`mhanw.decomposition`; the heads and the Monte Carlo are :mod:`mhanw.heads` and :mod:`mhanw.montecarlo`.
Its records are declared in :data:`CLAIMS`.
"""

from __future__ import annotations

import numpy as np

from .. import data
from ..decomposition import MAX_SYMBOLIC_HEADS
from ..infra import params as P
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import Above, All, AtMost, Claim, Effect, Zero
from ..infra.verdicts import DERIVATION, PAPER, READING, direction_words
from .base import Context, step

SECTION = "sec:thm31"

#: Largest relative error that counts as rounding for an exact identity of empirical moments: sums of
#: up to 2e4 replicates in double precision stay within about 1e-14; 1e-12 leaves two orders of margin.
IDENTITY_REL_TOL = 1e-12

#: The ddof = 1 gap is "exactly a'C1a/R" when gap/(a'C1a/R) - 1 is within this many times the rounding
#: limit of that ratio (1e-15 MSE / gap per replicate sum; the error of a sum of R terms grows like
#: sqrt(R) ulps, about 1e2 at R = 2e4, and we allow a further factor 10).
DDOF1_ROUNDING_FACTOR = 1e3

PARAMETERS = {
    **P.STANDARD,
    "regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "sigma": P.noise_level(),
    "d": P.positive_int(1, 1024, why="a model dimension, 170 times the default 6"),
    "d_k": P.positive_int(1, 1024, at_most="d", why="a model dimension"),
    "n_heads": P.positive_int(2, MAX_SYMBOLIC_HEADS, why="the heads the symbolic decomposition of part 6 expands"),
    "n_train": P.positive_int(2, 40_000, why="100 times the default 400"),
    "bandwidth": P.bandwidth(),
    "weights_decreasing": P.weights(length="n_heads", maximum=1.0),
    "weights_unnormalised": P.weights(
        length="n_heads",
        sum_to_one=False,
        nonnegative=False,
        maximum=100.0,
        why="100 times the largest default weight, 0.6",
    ),
    "points": P.sequence(P.sequence(P.coordinate(), length="d")),
    "n_pair": P.positive_int(2, 50_000, why="100 times the default 500"),
    "pair_point": P.sequence(P.coordinate(), length=4),
}
CONSTRAINTS = (
    P.require(
        "regression",
        lambda p: data.regression_function(p["regression"]).min_dim <= 4,
        "a regression function defined in d = 4 (the pair family of part 5)",
    ),
)

#: Monte Carlo sizes by fidelity: replicates of part 1, of the identical heads (part 4) and of the pair
#: family (part 5), and the number of worker processes.
SIZES = {
    "quick": dict(n_rep_identity=2_000, n_rep_copies=1_000, n_rep_pairs=2_000, n_jobs=1),
    "paper": dict(n_rep_identity=20_000, n_rep_copies=2_000, n_rep_pairs=20_000, n_jobs=2),
}
#: The random streams: the Haar heads, the replicates of parts 1 and 4, those of the pair family.
STREAMS = ("haar", "replicates", "pairs")

#: The pair family's angles (degrees) and its head dimensions.
PAIR_ANGLES = np.arange(0, 91, 15)


def model_of(ctx: Context):
    """The run's data model: m, the law of X and the noise of the parameters."""
    p = ctx.params
    return data.data_model(p.regression, inputs=p.inputs, noise=p.noise, sigma=p.sigma)


def _rel(a, b):
    return np.abs(a - b) / b


# --------------------------------------------------------------------------- the steps


@step
def identity(ctx: Context) -> dict:
    """Part 1: Haar heads at the test points, the three terms and the Monte Carlo MSE for uniform and
    decreasing weights, and the identity's relative error at every point."""
    import pandas as pd

    from .. import heads, montecarlo
    from ..decomposition import bias_variance_covariance

    p, model = ctx.params, model_of(ctx)
    points = np.array(p.points, dtype=float)
    target = model.regression(points)
    W = heads.haar_heads(p.d, p.d_k, p.n_heads, ctx.rng("haar"))
    (est,) = montecarlo.pointwise_estimates(
        [W],
        model,
        points,
        n=p.n_train,
        n_rep=ctx.sizes["n_rep_identity"],
        seed=ctx.streams["replicates"],
        bandwidth=p.bandwidth,
        n_jobs=ctx.sizes["n_jobs"],
    )
    weights = {"uniform": np.full(p.n_heads, 1 / p.n_heads), "decreasing": np.array(p.weights_decreasing)}
    decs = {k: bias_variance_covariance(est, target, a) for k, a in weights.items()}
    table = pd.concat(
        [
            pd.DataFrame(
                {
                    "weights": k,
                    "point": np.arange(1, len(points) + 1),
                    "m(x)": target,
                    "bias^2": dec.bias_squared,
                    "sum a^2 V": dec.variance_term,
                    "cross term": dec.covariance_term,
                    "MSE (MC)": dec.mse,
                    "s.e.": dec.mse_se,
                    "rel. error": _rel(dec.bias_squared + dec.variance_term + dec.covariance_term, dec.mse),
                }
            )
            for k, dec in decs.items()
        ],
        ignore_index=True,
    )
    share = (table["bias^2"] / table["MSE (MC)"]).to_numpy()
    return {
        "table": table,
        "formula": decs["uniform"].formula,
        "max_rel_err": float(table["rel. error"].max()),
        "n_points": len(points),
        "n_rep": est.shape[0],
        "bias_share": {
            "median": Q(100 * np.median(share), digits=3, unit="%"),
            "min": Q(100 * share.min(), digits=2, unit="%"),
            "max": Q(100 * share.max(), digits=2, unit="%"),
        },
        "data": Raw({"estimates": est, "target": target, "W": W, "weights": weights, "decs": decs}),
    }


@step
def ddof1(ctx: Context, identity) -> dict:
    """Part 2: the gap of the right-hand side with divisor ``R - 1`` against the predicted ``a'C1a/R``,
    and how close the two are in units of the rounding limit of their difference."""
    import pandas as pd

    raw = identity["data"].value
    est, R = raw["estimates"], identity["n_rep"]
    rows = []
    for label, a in raw["weights"].items():
        dec = raw["decs"][label]
        for t in range(est.shape[2]):
            C1 = np.cov(est[:, :, t], rowvar=False, ddof=1)
            gap = dec.bias_squared[t] + a @ C1 @ a - dec.mse[t]
            predicted = a @ C1 @ a / R
            rows.append(
                {
                    "weights": label,
                    "point": t + 1,
                    "gap (ddof=1) / MSE": gap / dec.mse[t],
                    "a'C1a / (R MSE)": predicted / dec.mse[t],
                    "gap / (a'C1a/R) - 1": gap / predicted - 1,
                    "rounding limit": 1e-15 * dec.mse[t] / predicted,
                }
            )
    table = pd.DataFrame(rows)
    deviation = table["gap / (a'C1a/R) - 1"].abs()
    limit = float(table["rounding limit"].max())
    return {
        "table": table,
        "gap_rel_min": Q(float(table["gap (ddof=1) / MSE"].min()), digits=2, label="smallest gap / MSE"),
        "gap_rel_max": Q(float(table["gap (ddof=1) / MSE"].max()), digits=2),
        "match": Q(float(deviation.max()), digits=1, label="largest |gap / (a'C1a/R) - 1|"),
        "rounding_limit": Q(limit, label="largest rounding limit of the ratio"),
        "ratio": Q(
            float((deviation / table["rounding limit"]).max()), digits=2, label="largest deviation / rounding limit"
        ),
        "detectable": Q(DDOF1_ROUNDING_FACTOR * limit),
    }


@step
def unnormalised(ctx: Context, identity) -> dict:
    """Part 3: weights that do not sum to one, the printed squared-bias term against the corrected one."""
    import pandas as pd

    from ..decomposition import bias_variance_covariance

    raw = identity["data"].value
    target = raw["target"]
    dec = bias_variance_covariance(raw["estimates"], target, np.array(ctx.params.weights_unnormalised))
    rest = dec.variance_term + dec.covariance_term
    table = pd.DataFrame(
        {
            "point": np.arange(1, len(target) + 1),
            "m(x)": target,
            "printed bias^2": dec.printed_bias_squared,
            "corrected bias^2": dec.bias_squared,
            "MSE (MC)": dec.mse,
            "printed: rel. error": _rel(dec.printed_bias_squared + rest, dec.mse),
            "corrected: rel. error": _rel(dec.bias_squared + rest, dec.mse),
        }
    )
    printed, corrected = table["printed: rel. error"], table["corrected: rel. error"]
    return {
        "table": table,
        "formula": dec.formula,
        "formula_text": dec.formula_text,
        "weights_sum": Q(dec.weights_sum, digits=3),
        "printed_rel_err_max": Q(float(printed.max()), digits=2, label="largest relative error"),
        "printed_rel_err_min": Q(float(printed.min()), digits=2, label="smallest relative error"),
        "corrected_rel_err_max": Q(float(corrected.max()), digits=2, label="largest relative error"),
        "printed_bias_point1": Q(dec.printed_bias_squared[0], digits=3),
        "corrected_bias_point1": Q(dec.bias_squared[0], digits=3),
        "mse_point1": Q(dec.mse[0], digits=3),
        "data": Raw(dec),
    }


@step
def copies(ctx: Context, identity) -> dict:
    """Part 4: one to four identical copies of the first Haar head, uniform weights: the variance of the
    average against that of one head."""
    import pandas as pd

    from .. import heads, montecarlo
    from ..decomposition import bias_variance_covariance

    p, raw = ctx.params, identity["data"].value
    configs = [heads.identical_heads(p.d, p.d_k, k, basis=raw["W"][0]) for k in (1, 2, 3, 4)]
    est = montecarlo.pointwise_estimates(
        configs,
        model_of(ctx),
        np.array(p.points, dtype=float),
        n=p.n_train,
        n_rep=ctx.sizes["n_rep_copies"],
        seed=ctx.streams["replicates"],
        bandwidth=p.bandwidth,
        n_jobs=1,
    )
    v_one = np.var(est[0][:, 0, :], axis=0)
    rows = []
    for k, e in zip((1, 2, 3, 4), est):
        dec = bias_variance_covariance(e, raw["target"], np.full(k, 1 / k))
        ens_var = dec.variance_term + dec.covariance_term
        rows.append(
            {
                "H": k,
                "sum a^2 V": dec.variance_term.mean(),
                "cross term": dec.covariance_term.mean(),
                "Var(average)": ens_var.mean(),
                "max rel. diff. to one head": np.max(np.abs(ens_var / v_one - 1)),
            }
        )
    table = pd.DataFrame(rows)
    return {"table": table, "max_rel_err": float(table["max rel. diff. to one head"].max()), "n_rep": est[0].shape[0]}


def first_order_terms(W, x, bandwidth: float, n: int, model, a, m_x: float) -> tuple:
    """The three terms of Theorem 3.1 (bias^2, sum a^2 V, cross term) predicted to first order in 1/n
    (:func:`mhanw.covariance.first_order_covariance_model`) for two heads ``W`` (``(2, d, d_k)``) with
    weights ``a`` (length 2) at the point ``x`` (``(d,)``) where the regression function is ``m_x``."""
    from .. import covariance

    def fo(A, B):
        return covariance.first_order_covariance_model(A, B, x, bandwidth, n, model)

    cross = fo(W[0], W[1])
    bias = a @ np.array(cross.limits) - m_x
    var = a**2 @ np.array([fo(W[0], W[0]).covariance, fo(W[1], W[1]).covariance])
    return bias**2, var, 2 * a[0] * a[1] * cross.covariance


@step
def pairs(ctx: Context) -> dict:
    """Part 5: the pair family of two heads at principal angles 0 to 90 degrees, uniform weights: the three
    terms from empirical moments with the Monte Carlo MSE, their first-order prediction, and the paired
    comparisons between 0, 45 and 90 degrees (every angle on the same training samples)."""
    import pandas as pd

    from .. import heads, montecarlo
    from ..decomposition import bias_variance_covariance, covariance_with_se, jackknife
    from ..infra.estimates import Estimate

    p, model = ctx.params, model_of(ctx)
    x = np.array(p.pair_point, dtype=float)
    configs = [heads.pair_heads(np.radians(t), 4, 2) for t in PAIR_ANGLES]
    est = montecarlo.pointwise_estimates(
        configs,
        model,
        x,
        n=p.n_pair,
        n_rep=ctx.sizes["n_rep_pairs"],
        seed=ctx.streams["pairs"],
        bandwidth=p.bandwidth,
        n_jobs=ctx.sizes["n_jobs"],
    )
    a = np.array([0.5, 0.5])
    m_x = float(model.regression(x[None, :])[0])
    rows = []
    for theta, W, e in zip(PAIR_ANGLES, configs, est):
        dec = bias_variance_covariance(e[:, :, 0], m_x, a)
        _, c12_se = covariance_with_se(e[:, 0, 0], e[:, 1, 0])
        fb, fv, fc = first_order_terms(W, x, p.bandwidth, p.n_pair, model, a, m_x)
        rows.append(
            {
                "theta": theta,
                "bias^2": dec.bias_squared,
                "sum a^2 V": dec.variance_term,
                "cross term": dec.covariance_term,
                "cross s.e.": 2 * a[0] * a[1] * c12_se,
                "MSE (MC)": dec.mse,
                "MSE s.e.": dec.mse_se,
                "rel. error": abs(dec.bias_squared + dec.variance_term + dec.covariance_term - dec.mse) / dec.mse,
                "1st-order bias^2": fb,
                "1st-order sum a^2 V": fv,
                "1st-order cross": fc,
            }
        )
    table = pd.DataFrame(rows)
    terms = {"bias^2": "1st-order bias^2", "sum a^2 V": "1st-order sum a^2 V", "cross term": "1st-order cross"}
    dev = {t: float((table[f] / table[t] - 1).abs().max()) for t, f in terms.items()}
    shares = table[list(terms)].div(table["MSE (MC)"], axis=0)

    # paired comparisons between angles (common random numbers): MSE differences with paired s.e.,
    # differences of cross terms and squared biases with jackknife s.e.
    angles = [float(t) for t in PAIR_ANGLES]
    i0, i45, i90 = 0, angles.index(45.0), len(angles) - 1
    sq_err = np.stack([(e[:, :, 0] @ a - m_x) ** 2 for e in est])
    e2 = [e[:, :, 0] for e in est]

    def cross_term(u):  # 2 a_1 a_2 C_12 from empirical moments (divisor R)
        return 2 * a[0] * a[1] * np.mean((u[:, 0] - u[:, 0].mean()) * (u[:, 1] - u[:, 1].mean()))

    def bias_sq(u):
        return float((u @ a).mean() - m_x) ** 2

    def at(column, i, digits=2, se=None):
        return Q(table[column].iloc[i], None if se is None else table[se].iloc[i], digits=digits)

    by_angle = {
        name: {
            "mse": at("MSE (MC)", i, se="MSE s.e."),
            "bias_sq": at("bias^2", i),
            "var": at("sum a^2 V", i),
            "cross": at("cross term", i, se="cross s.e."),
        }
        for name, i in (("at0", i0), ("at45", i45), ("at90", i90))
    }
    return {
        "table": table,
        "max_rel_err": float(table["rel. error"].max()),
        "n_rep": est[0].shape[0],
        "point": x,
        "m_x": m_x,
        **by_angle,
        "cross90": Q(table["cross term"].iloc[-1], table["cross s.e."].iloc[-1], label="cross term at 90 degrees"),
        "rise": Q.of(Estimate.paired(sq_err[i45], sq_err[i0]), label="MSE(45) - MSE(0)"),
        "drop": Q.of(Estimate.paired(sq_err[i0], sq_err[i90]), label="MSE(0) - MSE(90)"),
        "cross_drop": Q.of(
            jackknife(lambda u, v: cross_term(u) - cross_term(v), (e2[i0], e2[i90])),
            label="cross term at 0 - at 90 degrees",
        ),
        "bias_rise": Q.of(jackknife(lambda u, v: bias_sq(u) - bias_sq(v), (e2[i45], e2[i0]))),
        "bias_fall": Q.of(jackknife(lambda u, v: bias_sq(u) - bias_sq(v), (e2[i45], e2[i90]))),
        "min_share": {
            t: Q(100 * shares[c].min(), digits=2, unit="%")
            for t, c in (("bias", "bias^2"), ("var", "sum a^2 V"), ("cross", "cross term"))
        },
        "first_order_dev": {
            t: Q(100 * dev[c], digits=2, unit="%")
            for t, c in (("bias", "bias^2"), ("var", "sum a^2 V"), ("cross", "cross term"))
        },
        "first_order_dev_cross_se": Q(
            float(((table["1st-order cross"] - table["cross term"]) / table["cross s.e."]).abs().max()), digits=2
        ),
        "data": Raw({"configs": configs, "weights": a, "model": model}),
    }


@step
def symbolic(ctx: Context, unnormalised) -> dict:
    """Part 6: the decomposition derived in sympy for ``n_heads`` heads, with the chapter's weights (exact
    rationals) and with symbolic weights, and the derived MSE at part 3's Monte Carlo moments."""
    from ..decomposition import symbolic_decomposition

    p, dec = ctx.params, unnormalised["data"].value
    sym = symbolic_decomposition(p.n_heads, list(p.weights_unnormalised))
    general = symbolic_decomposition(p.n_heads)  # symbolic weights a_1..a_H
    values = {
        sym.m: unnormalised["table"]["m(x)"].iloc[0],
        **{b: dec.bias[j, 0] for j, b in enumerate(sym.bias)},
        **{sym.covariance[j, k]: dec.covariance[j, k, 0] for j in range(p.n_heads) for k in range(p.n_heads)},
    }
    derived = float(sym.mse.subs(values))
    return {
        "printed_gap": sym.printed_gap,
        "corrected_gap": sym.corrected_gap,
        "printed_gap_general": general.printed_gap,
        "corrected_gap_general": general.corrected_gap,
        "ddof_offset": sym.ddof_offset,
        "derived_mse_point1": derived,
        "rel_diff": Q(max(abs(derived - dec.mse[0]) / dec.mse[0], 1e-17), digits=1),
        "n_heads": p.n_heads,
    }


@step
def checks(ctx: Context, identity, pairs, copies) -> dict:
    """The numbers the exact checks decide on: the identity's largest relative error over parts 1 and 5,
    and the identical heads' (floored at 1e-17 for printing)."""
    return {
        "identity_rel_err": Q(
            max(identity["max_rel_err"], pairs["max_rel_err"]),
            digits=2,
            label="largest relative error over points, weight vectors and angles",
        ),
        "identity_tol": Q(IDENTITY_REL_TOL, digits=1),
        "copies_rel_err": Q(
            max(copies["max_rel_err"], 1e-17), digits=1, label="largest relative error against one head's variance"
        ),
    }


STEPS = (identity, ddof1, unnormalised, copies, pairs, symbolic, checks)

# --------------------------------------------------------------------------- the records


CLAIMS = (
    Claim(
        "thm-3.1/identity",
        "MSE = (sum_j a_j B_j)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' for weights "
        "summing to 1 (empirical moments with divisor R)",
        AtMost("checks.identity_rel_err", IDENTITY_REL_TOL, "rounding"),
        role=PAPER,
    ),
    Claim(
        "thm-3.1/ddof1-offset",
        "With divisor R - 1 the identity is off by exactly a'C^(1)a/R, the ensemble's variance over R",
        All(
            (
                Above("ddof1.gap_rel_min", IDENTITY_REL_TOL, "above rounding at every point"),
                AtMost("ddof1.ratio", DDOF1_ROUNDING_FACTOR, "times the rounding limit", detectable="ddof1.detectable"),
            )
        ),
        role=DERIVATION,
        also=("ddof1.match", "ddof1.rounding_limit"),
    ),
    Claim(
        "thm-3.1/printed-bias-term",
        lambda r: (
            "The printed bias term (sum_j a_j B_j)^2 holds for weights summing to "
            f"{r.at('unnormalised.weights_sum').value:.3g}"
        ),
        AtMost("unnormalised.printed_rel_err_max", IDENTITY_REL_TOL, "rounding"),
        role=PAPER,
        also=("unnormalised.printed_rel_err_min",),
    ),
    Claim(
        "thm-3.1/corrected-bias-term",
        lambda r: (
            "The corrected bias term (sum_j a_j B_j + (sum_j a_j - 1) m(x))^2 holds for weights summing to "
            f"{r.at('unnormalised.weights_sum').value:.3g}"
        ),
        AtMost("unnormalised.corrected_rel_err_max", IDENTITY_REL_TOL, "rounding"),
        role=DERIVATION,
    ),
    Claim(
        "thm-3.1/symbolic",
        lambda r: (
            f"For H = {r.at('symbolic.n_heads')} heads and any weights, E(sum_j a_j m_j - m)^2 = "
            "(sum_j a_j B_j + (sum_j a_j - 1) m)^2 + sum_j a_j^2 V_j + sum_{j != j'} a_j a_j' C_jj' (derived in sympy)"
        ),
        Zero(
            ("symbolic.corrected_gap", "symbolic.corrected_gap_general"),
            "sympy simplifies the derived MSE minus the corrected right-hand side to 0, for the chapter's "
            "weights and for symbolic weights",
        ),
        role=DERIVATION,
    ),
    Claim(
        "thm-3.1/identical-heads",
        "The uniform average of H identical heads has the variance of one head (adding heads need not reduce variance)",
        AtMost("checks.copies_rel_err", IDENTITY_REL_TOL, "rounding"),
        role=READING,
    ),
    Claim(
        "thm-3.1/cross-term-at-90",
        "The covariance term of two heads with orthogonal key subspaces (90 degrees) is positive",
        Effect("pairs.cross90"),
        role=READING,
    ),
    Claim(
        "thm-3.1/cross-term-falls",
        "The covariance term is smaller for orthogonal heads (90 degrees) than for identical ones (0)",
        Effect("pairs.cross_drop"),
        role=READING,
    ),
    Claim(
        "thm-3.1/mse-not-monotone",
        "For a non-isotropic m, turning the second head to 45 degrees raises the MSE above that "
        "of identical heads (diversity need not lower the MSE)",
        Effect("pairs.rise"),
        role=READING,
    ),
)


def prose(results: Results, records) -> dict:
    """The section's words on the pair family, each decided by its paired difference at 3 s.e., so that
    the sentences follow the numbers under any parameters."""
    same = "does not differ detectably from"

    def words(path, positive, negative, neither):
        q = results.at(path)
        return Tex(direction_words(q.value, q.se, positive=positive, negative=negative, neither=neither))

    return {
        "mse_rise": words("pairs.rise", "exceeds", "is below", same),
        "mse_drop": words("pairs.drop", "is below", "exceeds", same),
        "cross_drop": words("pairs.cross_drop", "smaller", "larger", "not detectably different"),
        "cross90": words("pairs.cross90", "above zero", "below zero", "indistinguishable from zero"),
        "bias_path": Tex(
            words(
                "pairs.bias_rise",
                "rises from 0 to 45 degrees",
                "falls from 0 to 45 degrees",
                "does not change detectably from 0 to 45 degrees",
            )
            + " and "
            + words(
                "pairs.bias_fall",
                "falls from 45 to 90 degrees",
                "rises from 45 to 90 degrees",
                "does not change detectably from 45 to 90 degrees",
            )
        ),
    }


# --------------------------------------------------------------------------- the figure


def pair_figure(ctx: Context, pairs) -> None:
    """The chapter's figure: (a) the three terms stacked at each angle of the pair family, the Monte Carlo
    MSE with its error bars and the first-order MSE on 31 angles; (b) the cross term with its error bars,
    its first-order value and its noise part."""
    from .. import covariance, heads
    from ..infra import figures

    p, table, raw = ctx.params, pairs["table"], pairs["data"].value
    x, a, m_x, model = pairs["point"], raw["weights"], pairs["m_x"], raw["model"]
    fine = np.linspace(0, 90, 31)
    fine_terms = np.array(
        [
            first_order_terms(heads.pair_heads(np.radians(t), 4, 2), x, p.bandwidth, p.n_pair, model, a, m_x)
            for t in fine
        ]
    )
    noise_only = np.array(
        [
            2
            * a[0]
            * a[1]
            * covariance.first_order_covariance_model(
                *heads.pair_heads(np.radians(t), 4, 2), x, p.bandwidth, p.n_pair, model
            ).noise
            for t in fine
        ]
    )
    fig, (ax_a, ax_b) = figures.panels(2, gridspec_kw={"width_ratios": [1.55, 1]})
    labels = {
        "bias^2": r"bias$^2$",
        "sum a^2 V": r"$\Sigma_j a_j^2V_j$",
        "cross term": r"$\Sigma_{j\neq j'}a_ja_{j'}C_{jj'}$",
    }
    bottom = np.zeros(len(table))
    for i, (col, lab) in enumerate(labels.items()):
        ax_a.bar(table["theta"], 1e2 * table[col], width=10, bottom=bottom, color=f"C{i}", label=lab, alpha=0.85)
        bottom += 1e2 * table[col].to_numpy()
    ax_a.errorbar(
        table["theta"],
        1e2 * table["MSE (MC)"],
        yerr=figures.half_width(1e2 * table["MSE s.e."]),
        fmt="o",
        color="k",
        markersize=3,
        label=r"MC MSE, $\pm2$ s.e.",
        zorder=3,
    )
    ax_a.plot(fine, 1e2 * fine_terms.sum(axis=1), color="k", lw=0.8, ls="--", label="first-order MSE")
    ax_a.set(
        xlabel=r"principal angle $\theta$ (degrees)",
        ylabel=r"MSE at $x$ ($\times10^{-2}$)",
        xticks=PAIR_ANGLES,
        title=r"(a) the three terms along the pair family",
    )
    ax_a.legend(loc="upper center", ncol=3, fontsize=7)
    ax_a.set_ylim(0, 1.45e2 * table["MSE (MC)"].max())
    ax_b.errorbar(
        table["theta"],
        1e3 * table["cross term"],
        yerr=figures.half_width(1e3 * table["cross s.e."]),
        fmt="o",
        color="C2",
        markersize=3,
        label=r"MC, $\pm2$ s.e.",
    )
    ax_b.plot(fine, 1e3 * fine_terms[:, 2], color="C2", lw=1, label=r"first order $\kappa(\sigma^2+\Delta)/n$")
    ax_b.plot(fine, 1e3 * noise_only, color="grey", lw=1, ls=":", label=r"noise part $\kappa\sigma^2/n$")
    ax_b.axhline(0, color="k", lw=0.6)
    ax_b.set(
        xlabel=r"principal angle $\theta$ (degrees)",
        ylabel=r"cross term ($\times10^{-3}$)",
        xticks=PAIR_ANGLES[::2],
        title="(b) the cross term",
    )
    ax_b.set_ylim(bottom=0)
    ax_b.legend(loc="upper right", fontsize=7)
    figures.save(
        fig,
        "02_bias_variance_covariance",
        ctx.figures_dir,
        error_bars=True,
        caption="(a) The stacked bars are the three terms of the decomposition at each principal angle; "
        "compare their total with the Monte Carlo MSE (black points) and the first-order MSE "
        "(dashed). (b) The cross term alone, against its first-order value and its noise part.",
    )
