"""Tests of mhanw.chapters.ch01_attention_is_nadaraya_watson: the verdict rules on each side of their
thresholds, the trained-attention statistics and a guard of the chapter."""

import numpy as np
import pytest

from mhanw.chapters import ch01_attention_is_nadaraya_watson as ch01
from mhanw.infra.verdicts import FAILS, HOLDS, NOT_CHECKABLE, OUTSIDE, UNDECIDED, VerdictGuardError, guard


def test_identity_rule_threshold():
    assert ch01.identity_verdict(0.5 * ch01.IDENTITY_TOL, True).verdict == HOLDS
    assert ch01.identity_verdict(0.5 * ch01.IDENTITY_TOL, True).detectable == ch01.IDENTITY_TOL
    assert ch01.identity_verdict(2 * ch01.IDENTITY_TOL, True).verdict == FAILS
    assert ch01.identity_verdict(0.0, False).verdict == FAILS


def test_gaussian_form_rule_threshold():
    assert ch01.gaussian_form_verdict(0.5 * ch01.IDENTITY_TOL).verdict == HOLDS
    assert ch01.gaussian_form_verdict(2 * ch01.IDENTITY_TOL).verdict == FAILS


def test_literal_bandwidth_names_the_dims_where_it_is_off():
    below, above = 0.5 * ch01.LITERAL_OFF, 2 * ch01.LITERAL_OFF
    rec = ch01.literal_bandwidth_verdict({1: 0.0, 4: above, 16: below, 64: above})
    assert rec.verdict == FAILS and "[4, 64]" in rec.criterion
    assert ch01.literal_off_dims({1: 0.0, 4: above, 16: below, 64: above}) == [4, 64]
    assert ch01.literal_bandwidth_verdict({1: 0.0, 4: below}).verdict == HOLDS


@pytest.mark.parametrize(
    "mean, verdict",
    [
        (ch01.LOCAL_MAX_FRACTION + 0.05, FAILS),
        (ch01.LOCAL_MAX_FRACTION - 0.05, HOLDS),
        (ch01.LOCAL_MAX_FRACTION + 0.005, UNDECIDED),
    ],
)
def test_locality_rule_sides(mean, verdict):
    assert ch01.locality_verdict(mean, 0.01, 8).verdict == verdict


def test_neff_prediction_rule_sides():
    rng = np.random.default_rng(1)
    pred = rng.uniform(0.3, 0.6, (2, 400))
    noise = 0.01 * rng.standard_normal((2, 400))
    assert ch01.neff_prediction_verdict(pred + noise, pred).verdict == HOLDS
    assert ch01.neff_prediction_verdict(pred + noise + 2 * ch01.MODEL_TOL, pred).verdict == FAILS
    wide = 0.5 * rng.standard_normal((2, 400))  # s.e. 0.025: 3 s.e. exceed the tolerance
    assert ch01.neff_prediction_verdict(pred + wide, pred).verdict == UNDECIDED


def test_consistency_rules_sides():
    tilted, target = 0.51, 0.84
    tol = ch01.LIMIT_SHARE * (target - tilted)
    limit, consistent = ch01.consistency_rules(tilted + 0.1 * tol, 0.1 * tol, tilted, target)
    assert (limit.verdict, consistent.verdict) == (HOLDS, FAILS)
    limit, consistent = ch01.consistency_rules(target, 0.1 * tol, tilted, target)
    assert (limit.verdict, consistent.verdict) == (FAILS, HOLDS)
    limit, _ = ch01.consistency_rules(tilted + 0.5 * tol, tol, tilted, target)
    assert limit.verdict == UNDECIDED


def test_trained_model_rule_sides():
    assert ch01.trained_model_verdict(0.30, 0.002, 0.30 + 0.96 * ch01.MODEL_TOL, 0.001).verdict == UNDECIDED
    assert ch01.trained_model_verdict(0.30, 0.002, 0.30 + 0.1 * ch01.MODEL_TOL, 0.001).verdict == HOLDS
    assert ch01.trained_model_verdict(0.30, 0.002, 0.30 + 3 * ch01.MODEL_TOL, 0.001).verdict == FAILS


def test_not_checkable_and_direction_words():
    assert ch01.not_checkable("thm-2.1/neff-limit", "student-t keys").verdict == NOT_CHECKABLE
    words = dict(below="less", above="more", neither="same")
    assert ch01.direction_word(-1.0, 0.1, **words) == "less"
    assert ch01.direction_word(1.0, 0.1, **words) == "more"
    assert ch01.direction_word(0.1, 0.1, **words) == "same"


def test_trained_attention_neff_of_uniform_and_one_hot_maps():
    t = 5
    uniform = np.full((2, 3, t, t), 1.0 / t)
    one_hot = np.broadcast_to(np.eye(t), (2, 3, t, t)).copy()
    out = ch01.trained_attention_neff([uniform, one_hot, uniform])
    assert out["per_sentence"].shape == (3, 2, 3)
    assert out["per_sentence"][0] == pytest.approx(1.0)
    assert out["per_sentence"][1] == pytest.approx(1.0 / t)
    assert out["overall"] == pytest.approx((2 + 1 / t) / 3)
    with pytest.raises(ValueError, match="^maps:"):
        ch01.trained_attention_neff([uniform, np.full((1, 3, t, t), 1.0 / t)])


def test_gaussian_model_neff_tends_to_its_limit():
    out = ch01.gaussian_model_neff([2000], 4, 3, seed=3)
    assert out["limit"] == pytest.approx((1 + 2 / 4) ** (-2))
    assert abs(out["overall"] - out["limit"]) < 0.05


def test_exp_kernel_estimates_take_a_data_model():
    from mhanw import data

    a = ch01.exp_kernel_estimates([50, 200], 3, 5, data.data_model("sin(x1)", sigma=0.5))
    assert np.array_equal(a, ch01.exp_kernel_sine_estimates([50, 200], n_rep=3, seed=5))


def test_the_chapters_layer_guard_raises_when_a_layer_is_below_the_threshold():
    by_layer = np.array([0.3, ch01.LOCAL_MAX_FRACTION - 0.02, 0.3])
    with pytest.raises(VerdictGuardError, match="the text says"):
        guard(
            ch01.layers_above_threshold(by_layer, np.full(3, 0.002)),
            "every layer's mean n_eff/n lies more than 3 s.e. above the locality threshold",
            "a layer below",
        )
    assert ch01.layers_above_threshold(np.full(3, 0.3), np.full(3, 0.002))


def test_encoder_attention_maps_are_row_stochastic_per_sentence():
    from mhanw import pretrained

    try:
        enc = pretrained.get_encoder()
    except pretrained.ModelNotInstalledError:
        pytest.skip("all-MiniLM-L6-v2 is not installed")
    maps = enc.attention_maps(["A short sentence.", "A somewhat longer sentence with more tokens in it."])
    lengths = enc.tokenize(["A short sentence.", "A somewhat longer sentence with more tokens in it."])[
        "attention_mask"
    ].sum(1)
    assert [m.shape for m in maps] == [(enc.n_layers, enc.n_heads, t, t) for t in lengths]
    for m in maps:
        assert np.allclose(m.sum(axis=-1), 1.0) and np.all(m >= 0)
    # the same sentence alone or in a batch gets the same maps (no padding enters attention)
    assert np.allclose(enc.attention_maps(["A short sentence."])[0], maps[0], atol=1e-12)


def test_neff_limit_is_a_tolerance_claim_with_its_unit_and_printed_rule():
    rng = np.random.default_rng(2)
    pred = rng.uniform(0.3, 0.6, (3, 400))
    resolved = pred + 0.003 + 0.001 * rng.standard_normal((3, 400))  # 0.3 % of the keys, many s.e. from 0
    rec = ch01.neff_prediction_verdict(resolved, pred, [1, 4, 16])
    assert rec.verdict == HOLDS  # resolved, but far inside the tolerance
    assert rec.unit == ch01.NEFF_UNIT and rec.tolerance == ch01.NEFF_TOL_PCT
    assert rec.detectable is not None and rec.detectable < rec.tolerance
    assert rec.statistics[0].unit == ch01.NEFF_UNIT and abs(rec.statistics[0].value - 0.3) < 0.05
    assert "|effect| + 3 s.e. <=" in rec.criterion and "% of the keys" in rec.criterion  # the rule applied
    assert "so the run resolves it" in rec.finding and "d_k = " in rec.finding


def test_neff_and_tilted_limits_rest_on_gaussian_inputs():
    rng = np.random.default_rng(3)
    pred = rng.uniform(0.3, 0.6, (2, 50))
    rec = ch01.neff_prediction_verdict(pred + 0.2, pred, premises=ch01.neff_premises("student-t:5"))
    assert rec.verdict == OUTSIDE and rec.shows == FAILS and rec.statistics  # the statistic is kept
    assert [p.id for p in rec.failed_premises] == ["gaussian-inputs"]
    assert ch01.neff_prediction_verdict(pred, pred, premises=ch01.neff_premises("gaussian")).verdict == HOLDS
    limit, consistent = ch01.consistency_rules(0.5, 0.001, 0.51, 0.84, premises=ch01.neff_premises("uniform-cube"))
    assert limit.verdict == OUTSIDE and limit.shows == HOLDS
    assert consistent.verdict == FAILS  # "consistent for m(q)" rests on no Gaussian premise


def test_literal_bandwidth_prints_only_the_deciding_differences():
    rec = ch01.literal_bandwidth_verdict({1: 1e-16, 4: 0.9, 16: 2.4, 64: 2.2})
    assert rec.verdict == FAILS
    assert [s.name for s in rec.statistics] == [
        "largest difference (d_k = 16)",
        "largest difference (d_k = 64)",
        "largest difference (d_k = 4)",
    ]
    assert "coincide" in rec.criterion
    held = ch01.literal_bandwidth_verdict({1: 1e-16, 4: 0.01})
    assert held.verdict == HOLDS and [s.value for s in held.statistics] == [0.01]


def test_the_chapter_states_the_tolerances_the_rules_use():
    """The dropdown on tolerance claims names the two tolerances in per cent; they are the module's."""
    from nbtools import ROOT

    prose = (ROOT / "notebooks" / "01_attention_is_nadaraya_watson.md").read_text()
    assert f"tolerance of {100 * ch01.MODEL_TOL:g} % of the keys" in prose
    assert f"tolerance of {100 * ch01.LIMIT_SHARE:g} % of the gap between the two candidate limits" in prose


def test_the_figure_takeaways_follow_the_numbers():
    identity = {"err": {1: 1e-16, 4: 2e-16}, "gauss": {1: 1e-16, 4: 3e-16}, "literal": {1: 0.0, 4: 1.5}}
    neff = {
        "d_k": np.array([1, 4]),
        "mean": np.array([0.5, 0.4]),
        "se": np.array([0.01, 0.01]),
        "expected": np.array([0.58, 0.44]),
    }
    consistency = {
        "n": [100, 1000],
        "mean": np.array([0.6, 0.52]),
        "se": np.array([0.05, 0.01]),
        "tilted": 0.51,
        "target": 0.84,
    }
    t = ch01.panel_takeaways(identity, neff, consistency)
    assert "to rounding error" in t["(a)"] and "off by up to 1.5 ($d_k=4$)" in t["(a)"]
    assert "every one more than a tenth" in t["(b)"]
    assert "1.0 standard errors from the tilted mean" in t["(c)"] and "32 from $m(q)=0.8400$" in t["(c)"]
    identity["gauss"][4] = 1e-6  # a Gaussian form that does not agree
    neff["mean"][1] = 0.11  # a share within 3 s.e. of a tenth
    t = ch01.panel_takeaways(identity, neff, consistency)
    assert "only to 1e-06, more than rounding error" in t["(a)"]
    assert "at $d_k=4$ it is not more than a tenth" in t["(b)"]
