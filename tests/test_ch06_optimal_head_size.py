"""Tests of :mod:`mhanw.chapters.ch06_optimal_head_size` and its figures (Thm 6.1): the numbers of the law's
steps, the records decided where their numbers are made (:class:`mhanw.infra.rules.Decided`, with their
conditions and role) flipping on synthetic results, the words the prose and the takeaways choose, and the
simulation step against :func:`mhanw.scaling.budget_simulation` on the same streams.  The record decided by
a threshold rule is flipped by tests/test_chapter_contract.py; the budget simulation itself is tested with
:mod:`mhanw.scaling` (tests/test_scaling.py)."""

from __future__ import annotations

import numpy as np
import pytest

from mhanw import derivation, scaling
from mhanw.chapters import base
from mhanw.chapters import ch06_figures as figs
from mhanw.chapters import ch06_optimal_head_size as ch06
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import Q, Raw, Results
from mhanw.infra.verdicts import DERIVATION, FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, PAPER, UNDECIDED

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


def _ctx(**change):
    return base.setup(ch06, render=False, **{**DEFAULTS, **change})


@pytest.fixture(scope="module")
def law():
    """The law's steps at the defaults (no simulation, no arbitrary-precision roots)."""
    ctx = _ctx()
    models = ch06.models(ctx)
    return dict(
        ctx=ctx,
        models=models,
        minimisers=ch06.minimisers(ctx, models),
        practice=ch06.practice(ctx, models),
        readings=ch06.readings(ctx),
    )


def _laws(*names):
    return {name: derivation.growth_law(name) for name in names}


def _record(claim_id: str, tree: dict):
    claim = next(c for c in ch06.CLAIMS if c.id == claim_id)
    return claim.decide(Results({"models": {"chosen_name": "M1"}, **tree}))


# --------------------------------------------------------------------------- the parameters


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(bias_law="c_B/n"), r"^bias_law: "),
        (dict(regressions=["x9"]), r"^regressions\[0\]: "),
        (dict(sim_budget=2), r"^sim_budget: "),
        (dict(rules=["sum", "sum"]), r"^rules: "),
        (dict(rules=["average", "concat"]), r"^rules: "),
        (dict(inputs="student-t:1.5x"), r"^inputs: "),
        (dict(sigma=-1.0), r"^sigma: "),
    ],
)
def test_parameters_name_the_bad_one(change, message):
    assert check_parameters(DEFAULTS, ch06.PARAMETERS, ch06.CONSTRAINTS)["sim_budget"] == 8
    with pytest.raises(ParameterError, match=message):
        check_parameters({**DEFAULTS, **change}, ch06.PARAMETERS, ch06.CONSTRAINTS)


# --------------------------------------------------------------------------- the law's numbers


def test_the_readers_model_is_added_only_when_it_is_new():
    models = ch06.models(_ctx(variance_law="c_V*k**2/n"))
    assert (models["chosen_name"], models["chosen_key"]) == ("M1*", "chosen")
    assert [m.name for m in models["data"].value["models"]] == [*scaling.BUILTIN_MODELS, "M1*"]
    assert models["chosen"]["law_words"] == "polynomial in n: k* ~ n^(1/5)"
    assert models["logarithmic"]["verdict"] == FAILS  # a polynomial law is not logarithmic growth


def test_numerical_table_of_the_law(law):
    """M1 at D = 512, n = 1e12: d_k* = 16 and H* = 32 (the numbers the paper's table prints); the fits and
    the implied d are those of mhanw.scaling.fit_power_law."""
    models, minimisers = law["models"], law["minimisers"]
    assert models["chosen_key"] == "M1" and list(models)[: len(scaling.BUILTIN_MODELS)] == list(scaling.BUILTIN_MODELS)
    assert (minimisers["M1"]["dk_big"], minimisers["M1"]["h_big"]) == (16, 32)
    table = minimisers["table"]
    m1 = table[table["model"] == "M1"]
    _, p = scaling.fit_power_law(m1["n"], m1["d_k"])
    assert minimisers["M1"]["fit_p"].value == p and minimisers["M1"]["implied_d"].value == pytest.approx(2 / p - 4)
    assert minimisers["table_rows"].startswith("M1 & 5\\,/\\,102 & ") and minimisers["table_rows"].count("\\\\") == 5
    assert minimisers["sens_min"] <= 16 <= minimisers["sens_max"]
    assert law["practice"]["M1"]["h_slope"].value == scaling.heads_slope(1e8, ch06.D_GRID, "M1")
    assert list(law["readings"]["rows"]["a"]) == list(scaling.BIAS_EXPONENTS)


def test_the_law_records_at_the_defaults(law):
    results = Results({k: law[k] for k in ("models", "minimisers", "practice", "readings")})
    decided = {c.id: c.decide(results) for c in ch06.CLAIMS if not c.id.startswith("thm-6.1/small-heads")}
    assert {k: r.verdict for k, r in decided.items()} == {
        "thm-6.1/printed-law": FAILS,
        "thm-6.1/printed-law/some-model": HOLDS_UNDER,
        "thm-6.1/logarithmic-growth": HOLDS_UNDER,
        "thm-6.1/heads-linear-in-budget": HOLDS,
        "thm-6.1/practice": FAILS,
        "thm-6.1/printed-law/bias-readings": FAILS,
    }
    some = decided["thm-6.1/printed-law/some-model"]
    assert some.conditions == "only under M2 (asymptotically) and M3 (exactly)" and some.role == DERIVATION
    assert decided["thm-6.1/printed-law"].statement.startswith("Under M1 (the summaries' own ingredients), ")


# --------------------------------------------------------------------------- records decided where their numbers are made


def test_printed_law_follows_sympys_law():
    fits = {"p (integer)": 0.66, "p (root)": 0.63}
    assert ch06._printed_law("M1", derivation.growth_law("M1"), fits)["verdict"] == FAILS
    assert ch06._printed_law("M3", derivation.growth_law("M3"), fits)["verdict"] == HOLDS
    none = derivation.GrowthLaw("undetermined", False, None, None, None, False, "no law")
    node = ch06._printed_law("X", none, fits)
    assert node["verdict"] == NOT_CHECKABLE and [s.name for s in node["statistics"]][0].startswith("exponent fitted")
    record = _record("thm-6.1/printed-law", {"minimisers": {"printed_law": node}})
    assert record.verdict == NOT_CHECKABLE and len(record.statistics) == 4


def test_some_model_names_its_models_and_is_a_tautology_only_by_construction():
    node = ch06._some_model(_laws("M1", "M2", "M3", "M5"))
    record = _record("thm-6.1/printed-law/some-model", {"models": {"chosen_name": "M1", "some_model": node}})
    assert (record.verdict, record.role) == (HOLDS_UNDER, DERIVATION)
    assert record.conditions == "only under M2 (asymptotically) and M3 (exactly)"
    readers = {**_laws("M1"), "M1*": derivation.growth_law(scaling.model("M1", variance_law="c_V*k**(d/2)/log(n)"))}
    record = _record("thm-6.1/printed-law/some-model", {"models": {"some_model": ch06._some_model(readers)}})
    assert (record.verdict, record.role, record.conditions) == (HOLDS_UNDER, PAPER, "only under M1* (exactly)")
    record = _record("thm-6.1/printed-law/some-model", {"models": {"some_model": ch06._some_model(_laws("M1"))}})
    assert (record.verdict, record.conditions) == (FAILS, "")


def test_logarithmic_growth_holds_in_the_weak_sense_only_for_a_limit():
    node = ch06._logarithmic("M1", derivation.growth_law("M1"))
    record = _record("thm-6.1/logarithmic-growth", {"models": {"chosen_name": "M1", "logarithmic": node}})
    assert record.verdict == HOLDS_UNDER and record.conditions.startswith("in the weak sense d_k* = (ln n)^(1 + o(1))")
    assert ch06._logarithmic("M3", derivation.growth_law("M3"))["verdict"] == HOLDS
    assert ch06._logarithmic("M4a", derivation.growth_law("M4a"))["verdict"] == FAILS


@pytest.mark.parametrize(
    "log10_n, verdict", [(ch06.PRACTICAL_LOG10_N, HOLDS), (ch06.PRACTICAL_LOG10_N + 0.1, FAILS), (np.nan, FAILS)]
)
def test_practice_needs_a_practical_sample_size(log10_n, verdict):
    record = _record("thm-6.1/practice", {"practice": {"bert": ch06._bert(log10_n)}})
    assert record.verdict == verdict and len(record.statistics) == (0 if np.isnan(log10_n) else 1)


def test_bias_readings_name_the_readings_that_give_the_law():
    readings = scaling.bias_reading_models("M1", (2, 4))
    laws = {a: derivation.growth_law(m) for a, m in readings.items()}
    assert (
        _record("thm-6.1/printed-law/bias-readings", {"readings": {"decision": ch06._some_reading(laws)}}).verdict
        == FAILS
    )
    node = ch06._some_reading({**laws, 9: derivation.growth_law("M3")})
    record = _record("thm-6.1/printed-law/bias-readings", {"readings": {"decision": node}})
    assert (record.verdict, record.conditions) == (HOLDS_UNDER, "only for a = 9")


def _budget_result(small_minus_big: float, noise: float = 0.01, n_rep: int = 20):
    """A synthetic simulation at D = 4: head sizes 1, 2, 4 with per-replicate errors whose best small
    configuration (d_k <= 1) differs from the best big one by ``small_minus_big``."""
    rng = np.random.default_rng(0)
    base_err = 1.0 + noise * rng.standard_normal(n_rep)
    errors = np.stack([base_err + small_minus_big, base_err + 0.5, base_err])  # d_k = 1, 2, 4
    return scaling.BudgetResult(
        regression="additive",
        n=100,
        budget=4,
        n_test=10,
        sigma=0.5,
        d_k_values=(1, 2, 4),
        rules=("average", "sum"),
        bandwidths=(0.5,),
        tuning_imse=np.ones((3, 1, 2)),
        tuning_se=np.ones((3, 1, 2)),
        tuned_bandwidth=np.full((3, 2), 0.5),
        errors=np.stack([errors, errors]) + 1e-3 * rng.standard_normal((2, 3, n_rep)),
    )


@pytest.mark.parametrize("rule", ["average", "sum"])
@pytest.mark.parametrize(
    "effects, verdict", [((-0.2, -0.3), HOLDS), ((-0.2, 0.3), FAILS), ((-0.2, -0.0001), UNDECIDED)]
)
def test_small_heads_flip_with_the_paired_differences(rule, effects, verdict):
    sims = {("additive", 100 + i): _budget_result(e) for i, e in enumerate(effects)}
    node = ch06._small_heads(sims, rule)
    record = _record(f"thm-6.1/small-heads/{rule}", {"simulation": {"small_heads": {rule: node}}})
    assert record.verdict == verdict and len(record.statistics) == 2
    assert record.statistics[0].name == "IMSE(small) - IMSE(big), additive, n = 100"
    assert node["min_z"].value <= node["max_z"].value


# --------------------------------------------------------------------------- the prose


@pytest.mark.parametrize(
    "gap, words", [(1.0, "beats"), (-1.0, "loses to"), (0.1, "is not distinguishable at 3 s.e. from")]
)
def test_sum_versus_average_words_follow_the_paired_gap(gap, words):
    from mhanw.infra.verdicts import Verdict

    some = Verdict(claim="thm-6.1/printed-law/some-model", statement="s", verdict=FAILS, criterion="c")
    results = Results(
        {
            "params": {"regressions": ["additive", "sin(x1)"]},
            "simulation": {k: {"large": {"gap": Q(gap, 0.1)}} for k in ("additive", "regression2")},
        }
    )
    prose = ch06.prose(results, [some])
    assert prose["sum_versus_average"] == {"additive": words, "regression2": words}
    assert prose["some_model_conditions"] == "none"


# --------------------------------------------------------------------------- the simulation step


def test_the_simulation_step_is_the_budget_simulation_on_the_seeds_children():
    ctx = _ctx(regressions=["additive"], sim_n=[60, 80], sim_budget=4, seed=5)
    ctx.sizes = dict(n_tune=2, n_rep=3, n_test=20, n_jobs=1)
    out = ch06.simulation(ctx)
    sims = out["data"].value
    children = np.random.SeedSequence(5).spawn(2)
    for child, n in zip(children, (60, 80)):
        direct = scaling.budget_simulation("additive", n, budget=4, n_tune=2, n_rep=3, n_test=20, sigma=0.5, seed=child)
        np.testing.assert_array_equal(sims["additive", n].errors, direct.errors)
    assert out["cells"] == 2 and out["pairs"] == len(out["comparisons"]) == 8 and out["n_list"] == "60, 80"
    best = sims["additive", 80].best_d_k("sum")
    assert out["additive"]["large"]["sum"]["best"] == best


# --------------------------------------------------------------------------- figures, captions, takeaways


def test_law_takeaway_says_the_figures_lesson_not_the_verdicts():
    laws = _laws(*scaling.BUILTIN_MODELS)
    assert figs.law_takeaway(laws) == (
        "Only M2 and M3 settle in the band of panel (b), the models whose variance was chosen to put "
        "them there, while M1, M4a, M4b and M5 leave it: the printed law comes from the variance one "
        "assumes, not from the summaries' own ingredients."
    )
    assert figs.law_takeaway(_laws("M1")) == (
        "No risk model settles in the band of panel (b): none of M1 gives the printed law."
    )
    assert figs.law_takeaway(_laws("M3", "M5")).endswith("while M5 leave it.")


def test_law_caption_carries_its_lesson_from_the_numbers():
    caption = figs.law_caption(_laws("M1"))
    p_far = scaling.local_slope(10.0**figs.FAR_LOG10_N, ch06.BUDGET, scaling.model("M1"))
    assert f"$p={p_far:.2f}$ at $n=10^{{{figs.FAR_LOG10_N}}}$ and tends to $1$, outside the band." in caption
    assert "No error bars" in caption and caption.startswith("(a) ") and "$D=512$" in caption


def test_heads_takeaway_counts_the_winning_head_sizes():
    sims = {("additive", 100): _budget_result(-0.2), ("additive", 200): _budget_result(0.3)}
    text = figs.heads_takeaway(sims)
    assert text.startswith("Which head size wins depends on how the heads are combined: averaged, many small heads")
    assert "in 1 of the 2 settings and few big heads in the others (best $d_k$ 1 or 4)" in text
    one = figs.heads_takeaway({("additive", 100): _budget_result(-0.2)})
    assert one.startswith("The same kind of head wins however the heads are combined: averaged, many small heads")
    assert "in the one setting (best $d_k$ 1)" in one and one.endswith(".")


def test_figures_draw_every_model_and_rule(law, tmp_path):
    import matplotlib.pyplot as plt

    ctx = _ctx(figures_dir=str(tmp_path), regressions=["additive"], sim_n=[100], sim_budget=4)
    ctx.render = True
    data = law["models"]["data"].value
    figs.law_figure(ctx, {"data": Raw({**data, "models": data["models"][:2]})})
    figs.budget_figure(ctx, {"data": Raw({("additive", 100): _budget_result(-0.2)})})
    assert {p.name for p in tmp_path.iterdir()} >= {"06_optimal_head_size.pdf", "06_optimal_head_size_budget.pdf"}
    assert "$D=4$" in figs.budget_caption(4)
    plt.close("all")


def test_readable_columns_name_each_ratio_by_what_it_divides():
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
    assert list(figs.readable_columns(df, ratio_of="root").columns) == [
        "log10 n",
        "real root",
        "root / leading order",
        "root / log ratio",
        "p(n)",
        "model",
    ]
    assert list(figs.readable_columns(df).columns)[2] == "d_k* / leading order"
    assert figs.readable_columns(df).to_numpy().tolist() == df.to_numpy().tolist()
