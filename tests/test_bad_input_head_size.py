"""Bad input to the optimal head size (Thm 6.1) and the helpers it rests on: the tables and mappings
of chapter 6, fits with nothing to fit, captions and budgets of the wrong kind, and sizes that would
run for hours or exhaust memory (the frame ascent, the risk grid), entries at the ends of the double
range (orthonormal bases) and head sizes beyond the budget.  Every case ends at once with a
``ValueError`` naming the argument; good input gives the numbers it gave before."""

from __future__ import annotations

import re

import numpy as np
import pytest
from timeouts import within

from mhanw import diversity as Dv
from mhanw import heads
from mhanw import scaling as S


def _named(call, name: str, seconds: float = 5.0):
    """``call()`` raises, within ``seconds``, a one-line ``ValueError`` whose message starts with ``name:``
    (or, for a name of plain words such as ``n_starts x n_steps``, whose head names it)."""
    with within(seconds), pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    head = message.split(": ", 1)[0]
    assert head == name or (re.fullmatch(r"[\w ]+", name) and re.search(rf"\b{re.escape(name)}\b", head)), message
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------- sizes: the frame ascent


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(n_steps=10**6), "n_steps"),  # 20 starts of 10**6 steps ran for hours
        (dict(n_steps=Dv.MAX_ASCENT_STEPS + 1, n_starts=1), "n_steps"),
        (dict(n_starts=1000, n_steps=1000), "n_starts x n_steps"),
        (dict(n_starts=Dv.MAX_ASCENT_STEPS // 10 + 1, n_steps=10), "n_starts x n_steps"),
    ],
)
def test_maximize_hdi_refuses_an_ascent_of_hours(kwargs, name):
    _named(lambda: Dv.maximize_hdi(3, 1, 4, np.random.default_rng(0), **kwargs), name, seconds=2.0)


def test_maximize_hdi_refuses_too_much_work_on_large_shapes():
    # 1000 steps of 64 heads in R^512 are within the count of steps, not of the work
    _named(
        lambda: Dv.maximize_hdi(512, 8, 64, np.random.default_rng(0), n_starts=1, n_steps=1000),
        "n_starts x n_steps",
        seconds=2.0,
    )


def test_maximize_hdi_keeps_its_answer_within_the_bounds():
    out = Dv.maximize_hdi(3, 1, 4, np.random.default_rng(20), n_starts=4, n_steps=150)
    assert out.trace.shape == (4, 151) and out.hdi.max() == pytest.approx(8 / 9, abs=1e-6)


# --------------------------------------------------------------------------- orthonormal bases


@pytest.mark.parametrize("scale", [1e308, 2.0**1000, 1e-300, 2.0**-1000])
def test_orthonormalize_has_the_same_basis_at_any_scale(scale):
    A = np.array([[1.0, 0.5], [0.25, -1.0], [0.5, 0.75]])
    Q = heads.orthonormalize(A)
    Q_scaled = heads.orthonormalize(A * scale)  # was LinAlgError 'SVD did not converge' at 1e308
    np.testing.assert_allclose(Q_scaled, Q, atol=1e-12)
    assert np.allclose(Q_scaled.T @ Q_scaled, np.eye(2))


def test_orthonormalize_of_a_power_of_two_multiple_is_exact():
    A = np.random.default_rng(1).standard_normal((5, 3))
    assert np.array_equal(heads.orthonormalize(A * 2.0**900), heads.orthonormalize(A))
    assert np.array_equal(heads.orthonormalize(A * 2.0**-900), heads.orthonormalize(A))


@pytest.mark.parametrize(
    "A",
    [
        np.full((3, 2), 1e308),
        np.full((3, 2), -1e308),
        np.zeros((3, 2)),
        np.array([[1e308, 1e-308], [1e308, 1e-308], [0.0, 1e-308]]),
        np.array([[1e308, 1e-300], [0.0, 0.0], [0.0, 0.0]]),
    ],
)
def test_orthonormalize_names_a_rank_deficient_matrix(A):
    _named(lambda: heads.orthonormalize(A), "A")


@pytest.mark.parametrize(
    "bad",
    [
        np.array([[np.inf, 0.0], [0.0, 1.0], [0.0, 0.0]]),
        np.full((3, 2), np.nan),
        [[1e400, 0.0], [0.0, 1.0], [0.0, 0.0]],
        "A",
        None,
        np.ones((2, 3)),
        np.ones(3),
    ],
)
def test_orthonormalize_names_a_non_finite_or_malformed_matrix(bad):
    _named(lambda: heads.orthonormalize(bad), "A")


def test_orthonormal_bases_names_the_head_at_the_end_of_the_range():
    W = np.stack([np.eye(4)[:, :2], np.full((4, 2), 1e308)])
    assert "head 1" in _named(lambda: Dv.orthonormal_bases(W), "W")
    W = np.stack([np.eye(4)[:, :2] * 1e308, np.eye(4)[:, 2:] * 1e-300])
    np.testing.assert_allclose(Dv.orthonormal_bases(W), np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]]), atol=0)


# --------------------------------------------------------------------------- sizes: the risk grid


@pytest.mark.parametrize("size", [S.MAX_GRID + 1, 10**8])
def test_log_mse_refuses_a_grid_beyond_its_maximum_before_allocating(size):
    # 10**8 head dimensions raised MemoryError after 20 s; a view of one entry costs nothing to pass
    grid = np.broadcast_to(np.float64(2.0), (size,))
    _named(lambda: S.log_mse(grid, 1e6, 512), "d_k", seconds=2.0)


def test_log_mse_refuses_a_long_list():
    _named(lambda: S.log_mse([2.0] * (S.MAX_GRID + 1), 1e6, 512), "d_k", seconds=2.0)


def test_log_mse_keeps_the_largest_exhaustive_search():
    assert S.MAX_GRID >= S.MAX_BUDGET
    values = S.log_mse(np.arange(1, 513), 1e6, 512)
    assert values.shape == (512,) and int(np.argmin(values)) + 1 == S.optimal_head_dim(1e6, 512)


# --------------------------------------------------------------------------- head sizes beyond the budget


@pytest.mark.parametrize("d_k,budget", [(600, 512), (513, 512), (9, 8), (1e300, 512), (2.5, 2)])
@pytest.mark.parametrize("model", ["M1", "M4a", "M5"])
def test_sample_size_for_a_head_beyond_the_budget_names_d_k(d_k, budget, model):
    # 600 > 512 gave NaN under M1 (read as "no n below 1e300") and a number under M4a: fewer than one head
    _named(lambda: S.sample_size_for_head_dim(d_k, budget, model), "d_k")


def test_sample_size_within_the_budget_is_unchanged():
    assert S.sample_size_for_head_dim(64, 512) == pytest.approx(62.42632760511637, rel=1e-12)
    assert S.sample_size_for_head_dim(512, 512, "M4a") == pytest.approx(6.171114911111615, rel=1e-12)
    assert np.isnan(S.sample_size_for_head_dim(300, 512))  # n of about 1e379: beyond 1e300, documented NaN


# --------------------------------------------------------------------------- chapter 6: tables and mappings

from mhanw.chapters import ch06_optimal_head_size as ch06  # noqa: E402

MODEL = dict(model="M1", bias_law="", variance_law="", combination="")
NOT_MAPPINGS = [None, 3, "params", ["model"], np.ones(3)]


@pytest.fixture(scope="module")
def law():
    """The chapter's law at the defaults: the reader's model, its laws, the tables and the readings."""
    from mhanw import derivation

    chosen, models = ch06.risk_models(MODEL)
    laws = {m.name: derivation.growth_law(m) for m in models}
    table = ch06.minimiser_table(models)
    return dict(
        chosen=chosen,
        models=models,
        laws=laws,
        table=table,
        fits=ch06.power_law_fits(table),
        practice=ch06.practice_table(models),
        reading_laws=ch06.bias_readings("M1")[1],
        checks={m.name: derivation.symbolic_checks(m) for m in models[:2]},
    )


@pytest.mark.parametrize("bad", NOT_MAPPINGS + [{}, {"model": "M1"}])
def test_risk_models_names_params(bad):
    message = _named(lambda: ch06.risk_models(bad), "params")  # {} was KeyError 'model'
    if isinstance(bad, dict):
        assert "'variance_law'" in message


@pytest.mark.parametrize("key,bad", [("model", 5), ("bias_law", np.ones(2)), ("combination", ["average"])])
def test_risk_models_names_a_parameter_of_the_wrong_kind(key, bad):
    _named(lambda: ch06.risk_models({**MODEL, key: bad}), f"params['{key}']")  # an array: ambiguous truth value


def test_risk_models_keep_their_models():
    chosen, models = ch06.risk_models(MODEL)
    assert chosen.name == "M1" and [m.name for m in models] == ["M1", "M2", "M3", "M4a", "M4b", "M5"]


SETUP = dict(sim_n=[300, 3000], regressions=["additive", "iso_cos8"])


@pytest.mark.parametrize(
    "params,name",
    [
        ({}, "params"),
        (None, "params"),
        ({"sim_n": [300]}, "params"),
        ({**SETUP, "sim_n": 300}, "params['sim_n']"),
        ({**SETUP, "regressions": "additive"}, "params['regressions']"),
        ({**SETUP, "regressions": [["additive"]]}, "params['regressions'][0]"),
    ],
)
def test_setup_names_its_parameters(params, name):
    _named(lambda: ch06.setup("quick", 0, params), name)  # {} was KeyError 'sim_n'


@pytest.mark.parametrize("seed", [-1, 1.5, None, "0", True])
def test_setup_names_the_seed(seed):
    _named(lambda: ch06.setup("quick", seed, SETUP), "seed")


def test_setup_keeps_its_streams():
    sizes, cells, streams = ch06.setup("quick", 5, SETUP)
    assert cells == [("additive", 300), ("additive", 3000), ("iso_cos8", 300), ("iso_cos8", 3000)]
    expected = np.random.SeedSequence(5).spawn(4)
    assert all(np.array_equal(streams[c].generate_state(4), e.generate_state(4)) for c, e in zip(cells, expected))
    assert sizes["sim_n"] == [300, 3000]


@pytest.mark.parametrize("bad", [None, 3, ["M1"], object()])
def test_sensitivity_table_names_chosen(bad):
    _named(lambda: ch06.sensitivity_table(bad), "chosen")  # None was AttributeError 'name'


@pytest.mark.parametrize(
    "bad,name",
    [
        (None, "models"),
        ("M1", "models"),
        ([], "models"),
        ([1], "models[0]"),
        (["M1", None], "models[1]"),
        (["M9"], "models[0]"),
    ],
)
def test_practice_table_names_its_models(bad, name):
    _named(lambda: ch06.practice_table(bad), name)  # [1] was AttributeError 'name'; [] an empty table


def _table(**columns):
    import pandas as pd

    base = dict(model=["M1", "M1", "M1"], n=[1e2, 1e4, 1e6], d_k=[4, 6, 8], d_k_real=[4.1, 6.2, 8.3])
    return pd.DataFrame({**base, **columns})


@pytest.mark.parametrize(
    "bad,name,says",
    [
        ("empty", "table", "'model', 'n', 'd_k', 'd_k_real'"),  # was KeyError 'model'
        (None, "table", "DataFrame"),
        ({"model": ["M1"]}, "table", "DataFrame"),
        ("no d_k_real", "table", "'d_k_real'"),
        ("no rows", "table", "non-empty"),
        (dict(d_k_real=[4.1, np.nan, 8.3]), "table['d_k_real']", "finite"),
        (dict(n=[1e2, np.inf, 1e6]), "table['n']", "finite"),
        (dict(d_k=["4", "6", "8"]), "table['d_k']", "real numbers"),
        (dict(d_k=[512, 512, 512]), "table", "fewer than two distinct"),  # implied d was -3.9e15
        (dict(d_k_real=[7.5, 7.5, 7.5]), "table", "fewer than two distinct"),
        (dict(n=[1e6, 1e6, 1e6]), "table", "fewer than two distinct"),
    ],
)
def test_power_law_fits_names_its_table(bad, name, says):
    import pandas as pd

    table = (
        {"empty": pd.DataFrame(), "no d_k_real": _table().drop(columns="d_k_real"), "no rows": _table().iloc[:0]}.get(
            bad, None
        )
        if isinstance(bad, str)
        else (_table(**bad) if isinstance(bad, dict) and "model" not in bad else bad)
    )
    assert says in _named(lambda: ch06.power_law_fits(table), name)


def test_power_law_fits_keep_their_numbers(law):
    from mhanw import scaling

    table, fits = law["table"], law["fits"]
    m1 = table[table["model"] == "M1"]
    A, p = scaling.fit_power_law(m1["n"], m1["d_k_real"])
    assert (fits.loc["M1", "A (d_k_real)"], fits.loc["M1", "p (d_k_real)"]) == (A, p)
    assert np.all(np.isfinite(fits.to_numpy(dtype=float)))


@pytest.mark.parametrize(
    "bad,name",
    [
        ({}, "asym"),
        (None, "asym"),
        ({"M1": []}, "asym['M1']"),
        ({"M1": None}, "asym['M1']"),
        ({"M1": [{}]}, "asym['M1'][0]"),
        ({"M1": [3]}, "asym['M1'][0]"),
        ({"M1": [{"log10_n": "12"}]}, "asym['M1'][0]['log10_n']"),
    ],
)
def test_asymptotic_table_names_its_rows(bad, name):
    _named(lambda: ch06.asymptotic_table(bad), name)  # {} was pandas' 'No objects to concatenate'


def test_asymptotic_table_keeps_its_rows():
    t = ch06.asymptotic_table({"M1": [{"log10_n": 12, "ratio": 1.5}, {"log10_n": 100, "ratio": 1.1}]})
    assert list(t.index) == [("M1", 12), ("M1", 100)] and list(t["ratio"]) == [1.5, 1.1]


@pytest.mark.parametrize(
    "which,bad,name",
    [
        ("checks", {}, "checks"),
        ("checks", None, "checks"),
        ("checks", {"M1": {"x": 1}}, "checks['M1']['x']"),
        ("laws", {}, "laws"),
        ("laws", {"M1": 1}, "laws['M1']"),
        ("laws", "drop M2", "laws"),
    ],
)
def test_derivation_table_names_checks_and_laws(law, which, bad, name):
    args = dict(checks=law["checks"], laws=law["laws"], models=law["models"])
    args[which] = {k: v for k, v in law["laws"].items() if k != "M2"} if bad == "drop M2" else bad
    message = _named(lambda: ch06.derivation_table(**args), name)  # a missing law was KeyError 'M1'
    if bad == "drop M2":
        assert "'M2'" in message


def test_derivation_table_keeps_its_rows(law):
    from mhanw import derivation

    t = ch06.derivation_table(law["checks"], law["laws"], law["models"])
    assert list(t.index) == ["M1", "M2"] and t.loc["M1", "law"] == f"${derivation.law_latex(law['models'][0])}$"


SIM = dict(inputs="gaussian", noise="gaussian", sigma=0.5, sim_budget=4, rules=["average", "sum"])
SIZES = dict(n_tune=2, n_rep=2, n_test=20, n_jobs=1)
CELLS = [("additive", 60)]


@pytest.mark.parametrize(
    "args,name",
    [
        (dict(params={}), "params"),
        (dict(params=None), "params"),
        (dict(params={**SIM, "rules": None}), "params['rules']"),
        (dict(sizes={"n_tune": 2}), "sizes"),
        (dict(sizes=[2, 2]), "sizes"),
        (dict(cells=None), "cells"),
        (dict(cells=[]), "cells"),
        (dict(cells=["additive"]), "cells[0]"),
        (dict(cells=[(["additive"], 60)]), "cells[0]"),
        (dict(streams={}), "streams"),
        (dict(streams={("iso_cos8", 60): np.random.SeedSequence(0)}), "streams"),
    ],
)
def test_simulate_names_its_mappings(args, name):
    kwargs = dict(params=SIM, sizes=SIZES, cells=CELLS, streams={CELLS[0]: np.random.SeedSequence(0)}) | args
    _named(lambda: ch06.simulate(**kwargs), name)  # {} was KeyError 'inputs'


@pytest.fixture(scope="module")
def sims():
    return ch06.simulate(SIM, SIZES, CELLS, {CELLS[0]: np.random.SeedSequence(3)})


def test_simulate_keeps_its_simulation(sims):
    s = sims[CELLS[0]]
    direct = ch06.budget_simulation(
        "additive", 60, budget=4, n_tune=2, n_rep=2, n_test=20, sigma=0.5, seed=np.random.SeedSequence(3)
    )
    np.testing.assert_array_equal(s.errors, direct.errors)


@pytest.mark.parametrize(
    "bad,name",
    [(None, "sims"), ({}, "sims"), ({1: 2}, "sims"), ([1], "sims"), ({("additive", 60): 2}, "sims[('additive', 60)]")],
)
def test_simulation_tables_name_sims(bad, name):
    _named(lambda: ch06.simulation_tables(bad), name)  # None was AttributeError 'values'


def test_simulation_tables_need_both_stated_rules(sims):
    only_average = ch06.simulate({**SIM, "rules": ["average"]}, SIZES, CELLS, {CELLS[0]: np.random.SeedSequence(3)})
    assert "'sum'" in _named(lambda: ch06.simulation_tables(only_average), "sims[('additive', 60)]")
    rows, comparisons, gap = ch06.simulation_tables(sims)
    assert len(rows) == 6 and len(gap) == 1


def test_decide_heads_and_budget_figure_name_their_inputs(sims):
    import matplotlib.pyplot as plt

    from mhanw.infra.verdicts import Ledger

    _named(lambda: ch06.decide_heads(None, sims, ["average"]), "ledger")
    _named(lambda: ch06.decide_heads(Ledger("06"), None, ["average"]), "sims")
    _named(lambda: ch06.decide_heads(Ledger("06"), sims, None), "rules")
    params = dict(regressions=["additive"], sim_n=[60], sim_budget=4)
    _named(lambda: ch06.budget_figure(sims, {}), "params")
    _named(lambda: ch06.budget_figure(sims, {**params, "sim_n": [60, 120]}), "sims")  # was KeyError
    plt.close(ch06.budget_figure(sims, params))


@pytest.mark.parametrize(
    "change,name",
    [
        (dict(chosen=None), "chosen"),
        (dict(laws={}), "laws"),
        (dict(laws={"M2": "law"}), "laws['M2']"),
        (dict(fits="fits"), "fits"),
        (dict(fits="no M1"), "fits"),
        (dict(fits="no p"), "fits"),
        (dict(practice=None), "practice"),
        (dict(practice="no M1"), "practice"),
        (dict(reading_laws=[]), "reading_laws"),
    ],
)
def test_decide_law_names_its_inputs(law, change, name):
    args = dict(
        chosen=law["chosen"],
        laws=law["laws"],
        fits=law["fits"],
        practice=law["practice"],
        reading_laws=law["reading_laws"],
    )
    for key, value in change.items():
        if value == "no M1":
            value = args[key].drop(index="M1")
        elif value == "no p":
            value = args[key].drop(columns="p (d_k)")
        args[key] = value
    _named(lambda: ch06.decide_law(**args), name)  # None was AttributeError 'name'; a missing row KeyError


def test_decide_law_with_a_missing_law_names_it(law):
    laws = {k: v for k, v in law["laws"].items() if k != "M1"}
    assert "'M1'" in _named(
        lambda: ch06.decide_law(law["chosen"], laws, law["fits"], law["practice"], law["reading_laws"]), "laws"
    )


# --------------------------------------------------------------------------- chapter 6: captions and budgets


@pytest.mark.parametrize("bad", [None, 0, -8, 8.0, "8", True, 10**400, np.nan])
def test_budget_caption_names_sim_budget(bad):
    _named(lambda: ch06.budget_caption(bad), "sim_budget")  # None printed "$D=None$"


def test_budget_caption_keeps_its_text():
    assert "budget $D=8$" in ch06.budget_caption(8) and "budget $D=8$" in ch06.budget_caption(np.int64(8))


@pytest.mark.parametrize(
    "bad",
    [
        [[64, 128], [256, 768]],
        [],
        [[]],
        512,
        [64, -1],
        [0, 512],
        [64, np.nan],
        [64, np.inf],
        ["64"],
        None,
        [True, False],
        [1e400],
    ],
)
def test_linear_heads_verdict_names_budgets(bad):
    _named(lambda: ch06.linear_heads_verdict("M1", 0.95, bad), "budgets")  # 2-D and negative gave a verdict


def test_linear_heads_verdict_keeps_its_verdict():
    r = ch06.linear_heads_verdict("M1", 0.95, ch06.D_GRID)
    assert r.verdict == "holds" and "D = 256..4096" in r.criterion


@pytest.mark.parametrize("scale", [1e308, 1e-300])
def test_principal_angles_are_the_same_at_any_scale(scale):
    A, B = np.array([[1.0, -1.0], [1.0, 1.0], [1.0, 1.0]]), np.eye(3)[:, :2]  # angles 0 and pi/4
    # 1e308 returned no angles at all (scipy's subspace_angles overflowed); an angle 0 comes out of
    # subspace_angles to about sqrt(eps) at any scale
    for angles in (Dv.principal_angles(A * scale, B), Dv.principal_angles(B, A * scale)):
        np.testing.assert_allclose(angles, [0.0, np.pi / 4], atol=1e-7)
