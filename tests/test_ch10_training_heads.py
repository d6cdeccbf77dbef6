"""Chapter 10's module: the settings grid, the drivers, the decision rule (flipped on synthetic paths) and
the bookkeeping."""

import json

import numpy as np
import pytest
from nbtools import declared_parameters

from mhanw.chapters import ch10_training_heads as ch
from mhanw.infra import verdicts as V
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import json_safe, save_results
from mhanw.infra.texout import Macros

GOOD = declared_parameters(
    "10_training_heads",
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m",
    results_path="r",
    isotropic_regression="iso_cos",
    anisotropic_regression="aniso",
    inputs="gaussian",
    noise="gaussian",
    sigma=0.5,
    d=4,
    d_k=2,
    heads_equal=2,
    heads_over=4,
    n=150,
    bandwidth=0.6,
    combinations=["average", "concat"],
    values="stream",
    penalty=1.0,
    n_seeds=20,
)


def _synthetic(direction, S=20, seed=0):
    """HDI_PA at initialisation (Haar-like, around 0.5) and at the end, built to rise, fall or stay."""
    rng = np.random.default_rng(seed)
    init = 0.5 + 0.05 * rng.standard_normal(S)
    return init, init + {"rise": 0.1, "fall": -0.1, "flat": 0.0}[direction] + 0.02 * rng.standard_normal(S)


@pytest.mark.parametrize("direction, verdict", [("rise", V.HOLDS), ("fall", V.FAILS), ("flat", V.UNDECIDED)])
def test_decision_rule_flips_with_the_direction_of_the_paths(direction, verdict):
    init, end = _synthetic(direction)
    rec = ch.training_orthogonal_verdict("iso-equal-average", "a setting", init, end, 0.5)
    assert rec.verdict == verdict
    assert rec.claim == "interp/training-orthogonal/iso-equal-average"
    diff = rec.statistics[0]
    assert diff.value == pytest.approx(np.mean(end - init))
    assert diff.se == pytest.approx(np.std(end - init, ddof=1) / np.sqrt(20))
    ctrl = ch.penalty_control_verdict("iso-equal-average", "a setting", init, end, 0.5, 1.0)
    assert ctrl.verdict == verdict and ctrl.claim.startswith("interp-control/penalty/")


def test_decision_rule_thresholds_are_three_se_and_twenty_starts():
    assert ch.N_SE_TRAINING == 3.0 and ch.MIN_SEEDS == 20
    d = np.tile([-1.0, 1.0], 10)  # sd exactly sqrt(20/19), se = 1/sqrt(19)
    se = 1.0 / np.sqrt(19)
    for shift, verdict in ((3.01 * se, V.HOLDS), (2.99 * se, V.UNDECIDED), (-3.01 * se, V.FAILS)):
        init = np.full(20, 0.5)
        assert ch.training_orthogonal_verdict("s", "s", init, init + d + shift, 0.5).verdict == verdict
    init, end = _synthetic("rise", S=10)
    assert ch.training_orthogonal_verdict("s", "s", init, end, 0.5).verdict == V.UNDECIDED  # too few starts


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(init=[0.5, np.nan]), "init"),
        (dict(end=[0.1]), "end"),
        (dict(haar=np.inf), "haar"),
        (dict(n_se=-1.0), "n_se"),
    ],
)
def test_rule_refuses_bad_numbers(change, name):
    args = dict(slug="s", label="s", init=[0.5, 0.6], end=[0.7, 0.8], haar=0.5)
    args.update(change)
    with pytest.raises(ValueError, match=rf"^{name}: "):
        ch.training_orthogonal_verdict(**args)


def test_settings_grid():
    grid = ch.settings("iso_cos", "aniso", 4, 2, 2, 4)
    assert len(grid) == 8 and len({s.slug for s in grid}) == 8 and len({s.macro for s in grid}) == 8
    assert {s.shape for s in grid} == {"equal", "over"} and {s.combination for s in grid} == {"average", "concat"}
    assert all(s.haar == 0.5 for s in grid)
    with pytest.raises(ValueError, match="^heads_equal:"):
        ch.settings("iso_cos", "aniso", 4, 2, 3, 4)
    with pytest.raises(ValueError, match="^heads_over:"):
        ch.settings("iso_cos", "aniso", 4, 2, 2, 2)
    with pytest.raises(ValueError, match="^combinations:"):
        ch.settings("iso_cos", "aniso", 4, 2, 2, 4, combinations=("max",))


def test_parameters():
    p = check_parameters(GOOD, ch.PARAMETERS, ch.CONSTRAINTS)
    assert p["heads_over"] == 4
    for change, name in (
        (dict(heads_equal=3), "heads_equal"),
        (dict(heads_over=2), "heads_over"),
        (dict(combinations=["average", "average"]), "combinations"),
        (dict(combinations=["max"]), r"combinations\[0\]"),
        (dict(values="all"), "values"),
        (dict(inputs="ar1:2"), "inputs"),
        (dict(anisotropic_regression="x9"), "anisotropic_regression"),
    ):
        with pytest.raises(ParameterError, match=rf"^{name}: "):
            check_parameters({**GOOD, **change}, ch.PARAMETERS, ch.CONSTRAINTS)
    check_parameters({**GOOD, "inputs": "ar1:0.9"}, ch.PARAMETERS, ch.CONSTRAINTS)


SIZES = dict(n_seeds=3, n_test=30, n_steps=4, record_every=2, opt_rep=2, opt_test=20, opt_starts=1, opt_steps=2)


def test_drivers_and_bookkeeping(tmp_path):
    grid = ch.settings("iso_cos", "aniso", 4, 2, 2, 4)[:2] + ch.settings("iso_cos", "aniso", 4, 2, 2, 4)[4:5]
    res = ch.run_all(grid, SIZES, 5, 40, 0.6, 1.0)
    assert [r.setting for r in res] == grid
    r = res[0]
    assert r.series("hdi").shape == (3, 3) and len(r.penalised) == 3
    np.testing.assert_array_equal(r.steps, [0, 2, 4])
    assert np.isfinite(r.optimum_hdi) and res[1].optimum_hdi == r.optimum_hdi  # shared by the combinations
    # common random numbers: the settings of one m share their samples and starts
    np.testing.assert_array_equal(res[0].paths[1].initial, res[1].paths[1].initial)
    assert res[0].paths[0].imse[0] != res[2].paths[0].imse[0]
    book = ch.ledger(res, 1.0)
    assert len(book.records) == 6
    assert all(rec.verdict == V.UNDECIDED for rec in book)  # 3 starts < MIN_SEEDS
    macros = Macros("TrainHeads")
    ch.write_macros(macros, res, book, SIZES)
    text = macros.render()
    assert "\\TrainHeadsIsoEqualAverageChange" in text and "\\TrainHeadsSettingsUndecided" in text
    payload = json_safe(ch.results_payload(res))
    save_results(tmp_path / "r.json", {"paths": payload, "claims": book.to_list()})
    back = json.loads((tmp_path / "r.json").read_text())
    assert set(back["paths"]) == {s.slug for s in grid}
    assert len(back["paths"]["iso-equal-average"]["hdi"]["mean"]) == 3


@pytest.mark.statistical
def test_positive_control_is_seen_at_quick_size():
    """The measurement sees a rise when the loss asks for one: the penalised paths hold at 20 starts."""
    sizes = dict(SIZES, n_seeds=20, n_steps=8, record_every=4, opt_starts=0)
    grid = ch.settings("iso_cos", "aniso", 4, 2, 2, 4, combinations=("average",))[:1]
    res = ch.run_all(grid, sizes, 7, 80, 0.6, 1.0)
    book = ch.ledger(res, 1.0)
    control = [rec for rec in book if "control" in rec.claim]
    assert control and control[0].verdict == V.HOLDS


def _book(directions, control="rise"):
    """A ledger of synthetic records: one training record per direction, and one control per setting."""
    book = V.Ledger("10_training_heads")
    for i, direction in enumerate(directions):
        init, end = _synthetic(direction, seed=i)
        book.add(ch.training_orthogonal_verdict(f"s{i}", "a setting", init, end, 0.5))
    for i, _ in enumerate(directions):
        init, end = _synthetic(control, seed=10 + i)
        book.add(ch.penalty_control_verdict(f"s{i}", "a setting", init, end, 0.5, 1.0))
    return book


def test_positive_control_is_a_side_check_apart_from_the_claim_and_undecided_records_carry_their_power():
    book = _book(["rise", "fall", "flat"])
    claims = [r for r in book if r.claim.startswith(ch.CLAIM + "/")]
    controls = [r for r in book if r.claim.startswith(ch.CONTROL_CLAIM + "/")]
    assert all(r.role == V.PAPER for r in claims) and all(r.role == V.SIDE_CHECK for r in controls)
    for r in claims + controls:
        assert r.unit == ch.UNIT and r.detectable == pytest.approx(3 * r.statistics[0].se)
    flat = claims[2]
    assert flat.verdict == V.UNDECIDED and f"{flat.detectable:.3f}" in flat.finding
    assert "rose" in claims[0].finding and "fell" in claims[1].finding


@pytest.mark.parametrize(
    "directions, words",
    [
        (["rise", "rise"], ["pushed the heads apart in both settings"]),
        (["fall", "flat"], ["pushed the heads apart in neither", "pulled them together in s0"]),
        (["flat", "flat"], ["pushed the heads apart in neither", "the measurement sees a rise"]),
    ],
)
def test_takeaway_and_caption_state_the_directions_the_records_show(directions, words):
    book = _book(directions)
    text = ch.takeaway(book)
    for w in words:
        assert w in text
    caption = ch.trajectory_caption(book)
    assert caption.endswith(".") and "moved apart in both" in caption  # the two controls rose
    if "fall" in directions:
        assert "moved closer (fell by more than 3 s.e.) in one (s0)" in caption


def test_takeaway_doubts_the_power_when_the_control_does_not_rise():
    book = _book(["flat", "flat"], control="flat")
    assert "power is in doubt" in ch.takeaway(book)
    assert "moved apart in neither" in ch.trajectory_caption(book)


def test_dependent_rows_put_the_training_records_outside_their_conditions_with_their_numbers():
    sizes = dict(SIZES, opt_starts=0)
    grid = ch.settings("iso_cos", "aniso", 4, 2, 2, 4, combinations=("average",))[:1]
    res = ch.run_all(grid, sizes, 5, 30, 0.6, 1.0, inputs="ar1:0.9")
    assert [p.id for p in res[0].premises] == ["iid-samples"] and not res[0].premises[0].holds
    book = ch.ledger(res, 1.0)
    rec = next(r for r in book if r.claim.startswith(ch.CLAIM + "/"))
    assert rec.verdict == V.OUTSIDE and rec.shows == V.UNDECIDED and rec.statistics
    assert "HDI_PA moved by" in rec.finding
    control = next(r for r in book if r.claim.startswith(ch.CONTROL_CLAIM + "/"))
    assert control.verdict != V.OUTSIDE
    assert "lie outside the conditions of the measurement in one" in ch.trajectory_caption(book)
    iid = ch.run_all(grid, sizes, 5, 30, 0.6, 1.0)
    assert iid[0].premises[0].holds and ch.ledger(iid, 1.0).records[0].verdict == V.UNDECIDED


def test_check_by_hand_refuses_a_wrong_formula():
    p = check_parameters(GOOD, ch.PARAMETERS, ch.CONSTRAINTS)

    def wrong(W, X, Y, h):
        from mhanw import training

        lib = training.loo_loss(W, X, Y, h)
        return lib.loss, 2 * lib.grad

    with pytest.raises(AssertionError, match="disagree"):
        ch.check_by_hand(wrong, p, 3)

    def right(W, X, Y, h):
        from mhanw import training

        lib = training.loo_loss(W, X, Y, h)
        return lib.loss, lib.grad

    assert max(ch.check_by_hand(right, p, 3).values()) < 1e-5


def test_findings_set_aside_the_records_whose_premise_fails():
    sizes = dict(SIZES, opt_starts=0)
    grid = ch.settings("iso_cos", "aniso", 4, 2, 2, 4, combinations=("average",))[:1]
    book = ch.ledger(ch.run_all(grid, sizes, 5, 30, 0.6, 1.0, inputs="ar1:0.9"), 1.0)
    text = ch.findings(book)
    assert "did not change significantly in 0 of 1" in text and "1 of 1 settings are set aside" in text
