"""Tests of :mod:`mhanw.chapters.ch06_optimal_head_size`: real NW heads under a fixed budget (Thm 6.1, the budget simulation).

The simulation must be the one of :mod:`mhanw.heads` (same draws, same head
estimates): its per-replicate errors are reproduced exactly by
:func:`mhanw.montecarlo.integrated_mse` on the same streams.
"""

from __future__ import annotations

import numpy as np
import pytest

from mhanw import heads as Hd
from mhanw import montecarlo
from mhanw.chapters import ch06_optimal_head_size as B

SMALL = dict(budget=4, bandwidths=(0.3, 0.6, 1.2), n_tune=3, n_rep=4, n_test=40, seed=7)


@pytest.fixture(scope="module")
def result():
    return B.budget_simulation("additive", 150, **SMALL)


def test_head_sizes():
    assert B.head_sizes(8) == (1, 2, 4, 8)
    assert B.head_sizes(12) == (1, 2, 3, 4, 6, 12)
    with pytest.raises(ValueError, match=r"^budget: "):
        B.head_sizes(0)


def test_shapes_and_tuning(result):
    r = result
    assert r.d_k_values == (1, 2, 4) and r.n_heads == (4, 2, 1) and r.rules == ("average", "sum")
    assert r.tuning_imse.shape == r.tuning_se.shape == (3, 3, 2)
    assert r.tuned_bandwidth.shape == (3, 2) and r.errors.shape == (2, 3, 4) and r.n_rep == 4
    best = np.asarray(r.bandwidths)[np.argmin(r.tuning_imse, axis=1)]
    np.testing.assert_array_equal(r.tuned_bandwidth, best)
    assert np.all(r.tuning_se > 0) and np.all(np.isfinite(r.errors))
    np.testing.assert_allclose(r.se, r.errors.std(axis=2, ddof=1) / 2)


def test_one_head_is_the_same_under_both_rules(result):
    """d_k = budget: one head, so 'average' and 'sum' are the same estimator."""
    i = result.d_k_values.index(4)
    np.testing.assert_allclose(result.tuning_imse[i, :, 0], result.tuning_imse[i, :, 1], rtol=1e-12)
    np.testing.assert_allclose(result.errors[0, i], result.errors[1, i], rtol=1e-12)


def test_reproduced_by_heads_integrated_mse(result):
    """Evaluation and tuning replicates are exactly montecarlo.integrated_mse on the same streams."""
    tune_seed, eval_seed = np.random.SeedSequence(SMALL["seed"]).spawn(2)
    for i, d_k in enumerate(result.d_k_values):
        W = Hd.orthogonal_heads(4, d_k, 4 // d_k)
        for r, rule in enumerate(result.rules):
            h = float(result.tuned_bandwidth[i, r])
            ev = montecarlo.integrated_mse(
                [Hd.HeadConfig(W, bandwidth=h, rule=rule)], "additive", 150, 40, 4, eval_seed
            )
            np.testing.assert_allclose(result.errors[r, i], ev.errors[0], rtol=1e-12)
        configs = [Hd.HeadConfig(W, bandwidth=h, rule="sum") for h in result.bandwidths]
        tune = montecarlo.integrated_mse(configs, "additive", 150, 40, 3, tune_seed)
        np.testing.assert_allclose(result.tuning_imse[i, :, 1], tune.mean, rtol=1e-12)


def test_comparisons_and_rows(result):
    for rule in result.rules:
        best = result.best_d_k(rule)
        rows = result.comparisons(rule)
        assert len(rows) == 2 and all(row["d_k"] != best for row in rows)
        for row in rows:
            diff, se = result.paired_difference((rule, row["d_k"]), (rule, best))
            assert (row["diff"], row["se"]) == (diff, se) and diff >= 0
            assert row["z"] == pytest.approx(diff / se) and row["significant"] == (diff / se > 3)
    rows = result.rows()
    assert len(rows) == 6 and {r["rule"] for r in rows} == {"average", "sum"}
    for row in rows:
        assert row["bandwidth_on_edge"] == (row["bandwidth"] in (0.3, 1.2))


def test_deterministic_whatever_the_caller_spawned_before(result):
    """Independence of n_jobs is a property of mhanw.infra.sweep.run_replicates (test_sweep.py)."""
    seq = np.random.SeedSequence(SMALL["seed"])
    again = B.budget_simulation("additive", 150, **{**SMALL, "seed": seq})
    np.testing.assert_array_equal(again.errors, result.errors)
    seq.spawn(3)  # what the caller spawned before does not matter
    later = B.budget_simulation("additive", 150, **{**SMALL, "seed": seq})
    np.testing.assert_array_equal(later.errors, result.errors)
    np.testing.assert_array_equal(later.tuning_imse, result.tuning_imse)


def test_small_heads_win_when_summed_on_an_additive_function():
    """The budget simulation's expected outcome at a glance (d = D = 8, n = 1000)."""
    r = B.budget_simulation(
        "additive", 1000, d_k_values=(1, 8), bandwidths=(0.25, 0.4, 0.6), n_tune=3, n_rep=6, n_test=100, seed=3
    )
    assert r.best_d_k("sum") == 1 and r.best_d_k("average") == 8
    diff, se = r.paired_difference(("sum", 1), ("sum", 8))
    assert diff < -3 * se


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(d_k_values=(3,)), r"^d_k_values: "),
        (dict(d_k_values=(1, 1)), r"^d_k_values: "),
        (dict(d_k_values=()), r"^d_k_values: "),
        (dict(rules=("mean",)), r"^rules: "),
        (dict(rules=("sum", "sum")), r"^rules: "),
        (dict(bandwidths=()), r"^bandwidths: "),
        (dict(bandwidths=(0.5, -1)), r"^bandwidths: "),
        (dict(n_tune=1), r"^n_tune: "),
        (dict(n_rep=1), r"^n_rep: "),
        (dict(n_test=0), r"^n_test: "),
        (dict(sigma=-1.0), r"^sigma: "),
        (dict(budget=0), r"^budget: "),
        (dict(seed=-3), r"^seed: "),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        B.budget_simulation("additive", 50, **{**SMALL, **kwargs})


def test_bad_regression_and_n():
    with pytest.raises(ValueError, match=r"^regression: "):
        B.budget_simulation("nope", 50, **SMALL)
    with pytest.raises(ValueError, match=r"^budget: "):
        B.budget_simulation("bvc", 50, **{**SMALL, "budget": 2})  # bvc needs d >= 4
    with pytest.raises(ValueError, match=r"^n: "):
        B.budget_simulation("additive", 0, **SMALL)


def test_bad_cell_queries(result):
    with pytest.raises(ValueError, match=r"^rule: "):
        result.best_d_k("median")
    with pytest.raises(ValueError, match=r"^d_k: "):
        result.paired_difference(("sum", 3), ("sum", 1))


# --------------------------------------------------------------------------- verdict rules (synthetic statistics)

from mhanw import derivation  # noqa: E402
from mhanw.infra.params import ParameterError, check_parameters  # noqa: E402
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED  # noqa: E402


def test_printed_law_rule_on_the_builtin_models():
    assert B.printed_law_verdict("M1", derivation.growth_law("M1")).verdict == FAILS
    assert B.printed_law_verdict("M3", derivation.growth_law("M3")).verdict == HOLDS
    und = derivation.GrowthLaw("undetermined", False, None, None, None, False, "no law")
    assert B.printed_law_verdict("X", und).verdict == NOT_CHECKABLE
    laws = {name: derivation.growth_law(name) for name in ("M1", "M2", "M3", "M5")}
    rec = B.printed_law_models_verdict(laws)
    assert rec.verdict == HOLDS_UNDER and "M2" in rec.conditions and "M3" in rec.conditions
    assert B.printed_law_models_verdict({"M1": laws["M1"]}).verdict == FAILS


def test_logarithmic_growth_rule():
    assert B.logarithmic_growth_verdict("M1", derivation.growth_law("M1")).verdict == HOLDS_UNDER
    assert B.logarithmic_growth_verdict("M3", derivation.growth_law("M3")).verdict == HOLDS
    assert B.logarithmic_growth_verdict("M4a", derivation.growth_law("M4a")).verdict == FAILS


@pytest.mark.parametrize(
    "slope, verdict", [(B.NEARLY_LINEAR_SLOPE + 1e-9, HOLDS), (B.NEARLY_LINEAR_SLOPE - 1e-9, FAILS)]
)
def test_linear_heads_threshold(slope, verdict):
    assert B.linear_heads_verdict("M1", slope, [256, 4096]).verdict == verdict


@pytest.mark.parametrize(
    "log10_n, verdict", [(B.PRACTICAL_LOG10_N, HOLDS), (B.PRACTICAL_LOG10_N + 0.1, FAILS), (float("nan"), FAILS)]
)
def test_practice_threshold(log10_n, verdict):
    assert B.practice_verdict("M1", log10_n).verdict == verdict


@pytest.mark.parametrize(
    "cells, verdict",
    [
        ([("a", -0.31, 0.1), ("b", -1.0, 0.1)], HOLDS),  # every setting: small heads better by > 3 s.e.
        ([("a", -0.29, 0.1), ("b", -1.0, 0.1)], UNDECIDED),  # one only 2.9 s.e.
        ([("a", 0.31, 0.1), ("b", -1.0, 0.1)], FAILS),  # one setting where big heads win by > 3 s.e.
    ],
)
def test_small_heads_thresholds(cells, verdict):
    assert B.small_heads_verdict("sum", cells).verdict == verdict


def test_bias_readings_are_rederived_and_all_fail():
    models = B.bias_reading_models("M1", (2, 4))
    laws = {a: derivation.growth_law(m) for a, m in models.items()}
    assert all(not law.gives_printed_law for law in laws.values())
    assert B.bias_reading_verdict(laws).verdict == FAILS
    giving = {**laws, 9: derivation.growth_law("M3")}
    rec = B.bias_reading_verdict(giving)
    assert rec.verdict == HOLDS_UNDER and "9" in rec.conditions
    with pytest.raises(ValueError, match="^exponents: "):
        B.bias_reading_models("M1", (2, 2))


DEFAULTS = dict(
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m",
    results_path="r",
    model="M1",
    bias_law="",
    variance_law="",
    combination="",
    regressions=["additive", "iso_cos8"],
    inputs="gaussian",
    noise="gaussian",
    sigma=0.5,
    sim_budget=8,
    sim_n=[300, 3000],
    rules=["average", "sum"],
)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(bias_law="c_B/n"), r"^bias_law: "),
        (dict(regressions=["x9"]), r"^regressions\[0\]: "),
        (dict(sim_budget=2), r"^sim_budget: "),
        (dict(rules=["sum", "sum"]), r"^rules: "),
        (dict(inputs="student-t:1.5x"), r"^inputs: "),
        (dict(sigma=-1.0), r"^sigma: "),
    ],
)
def test_parameters_name_the_bad_one(change, message):
    assert check_parameters(DEFAULTS, B.PARAMETERS, B.CONSTRAINTS)["sim_budget"] == 8
    with pytest.raises(ParameterError, match=message):
        check_parameters({**DEFAULTS, **change}, B.PARAMETERS, B.CONSTRAINTS)


# --------------------------------------------------------------------------- the chapter's numbers, records and figures

DEFAULT_MODEL = dict(model="M1", bias_law="", variance_law="", combination="")


@pytest.fixture(scope="module")
def law_records():
    chosen, models = B.risk_models(DEFAULT_MODEL)
    laws = {m.name: derivation.growth_law(m) for m in models}
    table = B.minimiser_table(models)
    fits = B.power_law_fits(table)
    practice = B.practice_table(models)
    _, reading_laws, reading_rows = B.bias_readings("M1")
    return dict(
        models=models,
        table=table,
        fits=fits,
        practice=practice,
        reading_rows=reading_rows,
        ledger=B.decide_law(chosen, laws, fits, practice, reading_laws),
    )


def test_risk_models_add_the_readers_model_only_when_it_is_new():
    from mhanw import scaling

    chosen, models = B.risk_models(DEFAULT_MODEL)
    assert chosen == scaling.model("M1") and [m.name for m in models] == list(scaling.BUILTIN_MODELS)
    chosen, models = B.risk_models({**DEFAULT_MODEL, "variance_law": "c_V*k**2/n"})
    assert chosen.name == "M1*" and models[-1] == chosen and len(models) == len(scaling.BUILTIN_MODELS) + 1


def test_numerical_table_of_the_law(law_records):
    """M1 at D = 512, n = 1e12: d_k* = 16 and H* = 32 (the numbers the paper's table prints); the fits and
    the implied d are those of mhanw.scaling.fit_power_law."""
    from mhanw import scaling

    table, fits = law_records["table"], law_records["fits"]
    row = table.set_index(["model", "n"]).loc[("M1", 1e12)]
    assert (row["d_k"], row["n_heads"]) == (16, 32)
    m1 = table[table["model"] == "M1"]
    A, p = scaling.fit_power_law(m1["n"], m1["d_k"])
    assert fits.loc["M1", "A (d_k)"] == A and fits.loc["M1", "p (d_k)"] == p
    assert fits.loc["M1", "implied d (d_k)"] == pytest.approx(2 / p - 4)
    assert list(law_records["reading_rows"].index) == list(B.BIAS_EXPONENTS)
    assert law_records["practice"].loc["M1", "slope of ln H* on ln D"] >= B.NEARLY_LINEAR_SLOPE


def test_law_records_are_decided_in_order(law_records):
    ledger = law_records["ledger"]
    assert [r.claim for r in ledger] == [
        "thm-6.1/printed-law",
        "thm-6.1/printed-law/some-model",
        "thm-6.1/logarithmic-growth",
        "thm-6.1/heads-linear-in-budget",
        "thm-6.1/practice",
        "thm-6.1/printed-law/bias-readings",
    ]
    assert ledger["thm-6.1/printed-law"].verdict == FAILS


def test_heads_records_follow_the_law_records(law_records, result):
    from mhanw.infra.verdicts import Ledger

    ledger = Ledger("06_optimal_head_size")
    B.decide_heads(ledger, {("additive", 150): result}, ["average", "sum", "concat"])
    assert [r.claim for r in ledger] == ["thm-6.1/small-heads/average", "thm-6.1/small-heads/sum"]
    assert all(len(r.statistics) == 1 for r in ledger)


@pytest.fixture(scope="module")
def laws(law_records):
    return {m.name: derivation.growth_law(m) for m in law_records["models"]}


def test_takeaway_shows_one_sentence(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    B.takeaway("Only M2 and M3 settle in the band.")
    assert shown == ["**Takeaway.** Only M2 and M3 settle in the band."]
    for bad in (None, "", "no full stop", ["a."]):
        with pytest.raises(ValueError, match="^sentence: "):
            B.takeaway(bad)


def test_law_takeaway_says_the_figures_lesson_not_the_verdicts(laws, law_records):
    """The key figure's takeaway names the models inside the band and why, in other words than the findings
    (no verdict words, no record statement)."""
    text = B.law_takeaway(laws)
    assert text == (
        "Only M2 and M3 settle in the band of panel (b), the models whose variance was chosen to put "
        "them there, while M1, M4a, M4b and M5 leave it: the printed law comes from the variance one "
        "assumes, not from the summaries' own ingredients."
    )
    for record in law_records["ledger"]:
        assert record.statement not in text and record.verdict not in text
    assert B.law_takeaway({"M1": laws["M1"]}) == (
        "No risk model settles in the band of panel (b): none of M1 gives the printed law."
    )
    assert B.law_takeaway({"M3": laws["M3"], "M5": laws["M5"]}).endswith("while M5 leave it.")


def test_law_caption_carries_its_lesson_from_the_numbers(laws):
    """The caption says what each panel draws, that there are no error bars, and M1's local exponent at
    n = 1e300 (computed, not typed) with its symbolic limit."""
    from mhanw import scaling

    caption = B.law_caption(laws)
    p_far = scaling.local_slope(10.0**B.FAR_LOG10_N, B.BUDGET, scaling.model("M1"))
    assert f"$p={p_far:.2f}$ at $n=10^{{{B.FAR_LOG10_N}}}$ and tends to $1$, outside the band." in caption
    assert "No error bars" in caption and caption.startswith("(a) ") and "$D=512$" in caption
    with pytest.raises(ValueError, match="^laws"):
        B.law_caption({"M2": laws["M2"]})


def test_heads_takeaway_counts_the_winning_head_sizes(result):
    """Under each rule: in how many settings small (d_k <= D/4) or big heads have the lowest IMSE."""
    text = B.heads_takeaway({("additive", 150): result})
    best = {rule: result.best_d_k(rule) for rule in ("average", "sum")}
    for rule, words in (("average", "averaged"), ("sum", "summed")):
        kind = "many small heads" if best[rule] <= result.budget // 4 else "few big heads"
        assert f"{words}, {kind} have the lowest IMSE in the one setting (best $d_k$ {best[rule]})" in text
    assert text.endswith(".") and text.count(". ") == 0
    with pytest.raises(ValueError, match="^sims"):
        B.heads_takeaway({})


def test_figures_draw_every_model_and_rule(law_records, result):
    import matplotlib.pyplot as plt

    fig = B.law_figure(law_records["models"][:2])
    assert len(fig.axes) == 2 and [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["M1", "M2"]
    plt.close(fig)
    params = dict(regressions=["additive"], sim_n=[150], sim_budget=4)
    fig = B.budget_figure({("additive", 150): result}, params)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["average, $n=150$", "sum, $n=150$"]
    plt.close(fig)
    assert "$D=4$" in B.budget_caption(4)


def test_readable_columns_name_each_ratio_by_what_it_divides():
    """The book's tables of minimisers and roots name their columns in words, the data unchanged."""
    import pandas as pd

    df = pd.DataFrame(
        {
            "log10_n": [12.0],
            "k_real": [16.3],
            "ratio_leading_order": [0.73],
            "ratio_real_log_ratio": [0.98],
            "local_exponent": [0.79],
            "model": ["M1"],
        }
    )
    assert list(B.readable_columns(df, ratio_of="root").columns) == [
        "log10 n",
        "real root",
        "root / leading order",
        "root / log ratio",
        "p(n)",
        "model",
    ]
    assert list(B.readable_columns(df).columns)[2] == "d_k* / leading order"
    assert B.readable_columns(df).to_numpy().tolist() == df.to_numpy().tolist()
    with pytest.raises(ValueError, match="^ratio_of"):
        B.readable_columns(df, ratio_of="x")


def test_derivation_table_shows_each_law_as_a_formula(law_records, laws):
    """The law column is a maths cell typeset from sympy (not the law's description in words)."""
    from mhanw.infra import tables

    models = law_records["models"]
    checks = {m.name: derivation.symbolic_checks(m) for m in models[:3]}
    t = B.derivation_table(checks, laws, models)
    assert list(t.index) == ["M1", "M2", "M3"]
    assert t.loc["M1", "law"] == "$" + derivation.law_latex(models[0]) + "$"
    assert tables.fmt(t.loc["M2", "d = 2/p - 4"]) == "$d$" and t.loc["M1", "d = 2/p - 4"] == -2
    with pytest.raises(ValueError, match="^models"):
        B.derivation_table(checks, laws, models[1:])


def test_reading_tables_split_formulas_from_numbers(law_records):
    """The bias readings as two narrower tables: formulas as maths cells, numbers as in the results."""
    readings, reading_laws, rows = B.bias_readings("M1")
    formulas, numbers = B.reading_tables(readings, reading_laws, rows)
    assert list(formulas.index) == list(numbers.index) == list(B.BIAS_EXPONENTS)
    assert formulas.loc[2, "squared bias"] == r"$\frac{c_{B}}{k^{2}}$"
    assert formulas.loc[2, "leading order"].startswith("$e^{W") and formulas.loc[2, "law"] == "$k^*=(\\ln n)^{1+o(1)}$"
    assert all(v.startswith("$") and v.endswith("$") for v in formulas["leading order"])
    assert numbers.equals(
        rows[["d_k* at n = 1e12", "p (integer)", "implied d (integer)", "p (root)", "implied d (root)"]]
    )
    assert len(formulas.columns) + 1 <= 7 and len(numbers.columns) + 1 <= 7  # narrow enough for the book's column
    with pytest.raises(ValueError, match="^reading_laws"):
        B.reading_tables(readings, {1: reading_laws[1]}, rows)
