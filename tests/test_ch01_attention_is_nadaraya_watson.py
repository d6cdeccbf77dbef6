"""Tests of mhanw.chapters.ch01_attention_is_nadaraya_watson: the records its ``decisions`` step decides (each
on both sides of its threshold, on synthetic step results), the words its prose decides, the takeaways of
its figures, the identity and warm-up steps at a small size, and the encoder's attention maps it reads.
Its declared records decided by a rule with a threshold are flipped by tests/test_chapter_contract.py."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from nbtools import ROOT, declared_parameters

from mhanw.chapters import base
from mhanw.chapters import ch01_attention_is_nadaraya_watson as ch01
from mhanw.chapters import ch01_figures as figs
from mhanw.infra.results import Q, Results
from mhanw.infra.rules import decide_all
from mhanw.infra.verdicts import FAILS, HOLDS, OUTSIDE, UNDECIDED, VerdictGuardError

TOL, OFF, LOCAL = ch01.IDENTITY_TOL, ch01.LITERAL_OFF, ch01.LOCAL_MAX_FRACTION


def _parts(
    *,
    max_err=1e-16,
    bitwise=True,
    literal=None,
    neff_min=0.4,
    deviation=(0.3, 0.2),
    deviation_se=(0.05, 0.05),
    estimate=0.51,
    se=0.001,
    neff_inputs="gaussian",
    consistency_inputs="gaussian",
    trained=0.28,
):
    """Synthetic results of the steps the decisions read: by default, the identity holds, the literal
    bandwidth is off at d_k = 4, locality fails, the n_eff limit holds, the estimate sits at the tilted
    mean 0.51 and far from m(q) = 0.84."""
    literal = literal if literal is not None else {1: 0.0, 4: 1.5}
    dims = list(literal)
    dev, dev_se = np.array(deviation, float), np.array(deviation_se, float)
    worst = int(np.argmax(np.abs(dev)))
    tilted, target = 0.51, 0.84
    table = pd.DataFrame({"d_k": dims, ch01.IDENTITY_COLUMNS[2]: [literal[d] for d in dims]})
    return {
        "identity": {
            "table": table,
            "dims": dims,
            "bitwise": bitwise,
            "max_err": Q(max_err, label="largest |attention - NW loop|"),
            "literal_off_dims": sorted(d for d in dims if literal[d] >= OFF),
        },
        "locality": {
            "min": {"neff": Q(neff_min, 0.01), "d_k": 256},
            "deviation": dev,
            "deviation_se": dev_se,
            "worst": Q(dev[worst], dev_se[worst], unit=ch01.NEFF_UNIT, label="largest mean deviation"),
            "worst_d_k": 256,
            "detectable": Q(float(np.max(3 * dev_se))),
            "premises": ch01._premises(neff_inputs),
        },
        "consistency": {
            "tolerance": Q(ch01.LIMIT_SHARE * (target - tilted)),
            "gap_tilted": Q(estimate - tilted, se, unit=ch01.LIMIT_UNIT, label="estimate - tilted mean"),
            "gap_target": Q(estimate - target, se, unit=ch01.LIMIT_UNIT, label="estimate - m(q)"),
            "premises": ch01._premises(consistency_inputs),
        },
        "trained": {"overall": Q(trained, 0.002, label="trained n_eff/n"), "d_k": 32},
    }


def _records(**kwargs) -> dict:
    """The records of the claims that :class:`mhanw.infra.rules.Decided` reads, on synthetic results."""
    parts = _parts(**kwargs)
    decisions = ch01.decisions(SimpleNamespace(parts={}), **parts)
    results = Results({**parts, "decisions": decisions})
    claims = [c for c in ch01.CLAIMS if type(c.rule).__name__ == "Decided"]
    return {r.claim.split("/", 1)[1]: r for r in decide_all(claims, results, section=ch01.SECTION)}


def test_the_identity_needs_rounding_error_and_bit_identical_nw():
    rec = _records()["identity"]
    assert rec.verdict == HOLDS and rec.detectable == TOL and rec.statistics[0].value == 1e-16
    assert _records(max_err=2 * TOL)["identity"].verdict == FAILS
    assert _records(bitwise=False)["identity"].verdict == FAILS


def test_the_literal_bandwidth_names_the_dims_where_it_is_off_and_prints_only_those():
    rec = _records(literal={1: 1e-16, 4: 0.9, 16: 0.5 * OFF, 64: 2.2})["literal-bandwidth"]
    assert rec.verdict == FAILS and rec.detectable is None
    assert "[4, 64]" in rec.criterion and "coincide" in rec.criterion
    assert [s.name for s in rec.statistics] == ["largest difference (d_k = 64)", "largest difference (d_k = 4)"]
    held = _records(literal={4: 0.01, 16: 0.5 * OFF})["literal-bandwidth"]
    assert held.verdict == HOLDS and held.detectable == OFF and "coincide" not in held.criterion
    assert [s.value for s in held.statistics] == [0.5 * OFF]


@pytest.mark.parametrize("mean, verdict", [(LOCAL + 0.05, FAILS), (LOCAL - 0.05, HOLDS), (LOCAL + 0.005, UNDECIDED)])
def test_locality_against_a_tenth_of_the_keys(mean, verdict):
    rec = _records(neff_min=mean, trained=mean)
    assert rec["locality"].verdict == verdict and rec["trained-locality"].verdict == verdict
    assert rec["locality"].statistics[0].value == mean  # the share itself, not its distance to the threshold
    assert (
        "d_k = 256" in rec["locality"].statistics[0].name and "d_k = 32" in rec["trained-locality"].statistics[0].name
    )


def test_the_neff_limit_holds_at_every_d_k_or_not_at_all():
    rec = _records()["neff-limit"]
    assert rec.verdict == HOLDS and rec.unit == ch01.NEFF_UNIT and rec.tolerance == ch01.NEFF_TOL_PCT
    assert rec.detectable == pytest.approx(0.15) and rec.statistics[0].value == 0.3
    assert "so the run resolves it" in rec.finding and "(d_k = 256)" in rec.finding
    assert "|effect| + 3 s.e. <=" in rec.criterion and "% of the keys" in rec.criterion
    assert _records(deviation=(0.3, 2 * ch01.NEFF_TOL_PCT))["neff-limit"].verdict == FAILS
    wide = _records(deviation=(0.1, 1.0), deviation_se=(0.05, 2.0))["neff-limit"]  # 3 s.e. exceed the tolerance
    assert wide.verdict == UNDECIDED and "not resolved by the run" in wide.finding


def test_the_two_limits_of_the_estimate_and_their_premises():
    tol = ch01.LIMIT_SHARE * (0.84 - 0.51)
    rec = _records()
    assert (rec["tilted-limit"].verdict, rec["consistency"].verdict) == (HOLDS, FAILS)
    assert rec["tilted-limit"].tolerance == pytest.approx(tol) and rec["tilted-limit"].detectable == 0.003
    rec = _records(estimate=0.84)
    assert (rec["tilted-limit"].verdict, rec["consistency"].verdict) == (FAILS, HOLDS)
    assert _records(estimate=0.51 + 0.5 * tol, se=tol)["tilted-limit"].verdict == UNDECIDED
    outside = _records(consistency_inputs="uniform-cube", neff_inputs="student-t:5")
    assert outside["tilted-limit"].verdict == OUTSIDE and outside["tilted-limit"].shows == HOLDS
    assert [p.id for p in outside["neff-limit"].failed_premises] == ["gaussian-inputs"]
    assert outside["consistency"].verdict == FAILS  # "consistent for m(q)" rests on no Gaussian premise


# --------------------------------------------------------------------------- prose


def _prose(*, gap=-0.25, gap_se=0.002, by_layer=(0.46, 0.19, 0.2), local_heads=1, neff_inputs="gaussian"):
    results = Results(
        {
            "params": {"neff_inputs": neff_inputs},
            "trained": {
                "gap": Q(gap, gap_se),
                "by_layer": np.array(by_layer),
                "by_layer_se": np.full(len(by_layer), 0.002),
                "layers_above": bool(np.all(np.array(by_layer) - 3 * 0.002 > LOCAL)),
                "local_heads": local_heads,
                "head_means": np.full((6, 12), 0.3),
            },
        }
    )
    records = _records(neff_inputs=neff_inputs)
    return ch01.prose(results, [records["neff-limit"]])


@pytest.mark.parametrize(
    "gap, words", [(-0.25, "more concentrated than"), (0.25, "more spread out than"), (0.001, "as spread out as")]
)
def test_the_direction_of_trained_attention_follows_the_gap(gap, words):
    assert _prose(gap=gap)["trained_direction"] == words


def test_the_neff_law_and_verdict_words_name_a_broken_premise():
    words = _prose()
    assert words["neff_law"] == "Gaussian queries and keys" and words["neff_limit"] == "holds"
    words = _prose(neff_inputs="student-t:5")
    assert words["neff_law"] == r"queries and keys drawn from \texttt{student-t:5}"
    assert words["neff_limit"].startswith("lies outside its conditions (") and "N(0" in words["neff_limit"]
    assert _prose(local_heads=0)["trained_local_heads"] == "none of the 72 heads falls"
    assert _prose(local_heads=5)["trained_local_heads"] == "5 of 72 heads fall"


def test_the_section_stops_when_a_layer_is_not_above_the_threshold():
    with pytest.raises(VerdictGuardError, match="the text says every layer's mean"):
        _prose(by_layer=(0.3, LOCAL - 0.02, 0.3))


def test_the_chapter_states_the_tolerances_the_rules_use():
    """The dropdown on tolerance claims names the two tolerances in per cent; they are the module's."""
    text = (ROOT / "notebooks" / "01_attention_is_nadaraya_watson.md").read_text()
    assert f"tolerance of {100 * ch01.MODEL_TOL:g} % of the keys" in text
    assert f"tolerance of {100 * ch01.LIMIT_SHARE:g} % of the gap between the two candidate limits" in text


# --------------------------------------------------------------------------- the figures' takeaways


def test_the_figure_takeaways_follow_the_numbers():
    identity = {
        "dims": [1, 4],
        "table": pd.DataFrame({"d_k": [1, 4], ch01.IDENTITY_COLUMNS[2]: [0.0, 1.5]}),
        "max_err": Q(2e-16),
        "gauss_max_err": Q(3e-16),
    }
    neff = {"d_k": np.array([1, 4]), "mean": np.array([0.5, 0.4]), "se": np.array([0.01, 0.01])}
    locality = {"neff": {**neff, "expected": np.array([0.58, 0.44])}}
    consistency = {"n_max": 1000, "estimate": Q(0.52, 0.01), "tilted": Q(0.51), "target": Q(0.84)}
    t = figs.panel_takeaways(identity, locality, consistency)
    assert "to rounding error" in t["(a)"] and "off by up to 1.5 ($d_k=4$)" in t["(a)"]
    assert "every one more than a tenth" in t["(b)"]
    assert "1.0 standard errors from the tilted mean" in t["(c)"] and "32 from $m(q)=0.8400$" in t["(c)"]
    identity["gauss_max_err"] = Q(1e-6)  # a Gaussian form that does not agree
    locality["neff"]["mean"] = np.array([0.5, 0.11])  # a share within 3 s.e. of a tenth
    t = figs.panel_takeaways(identity, locality, consistency)
    assert "only to 1e-06, more than rounding error" in t["(a)"]
    assert "at $d_k=4$ it is not more than a tenth" in t["(b)"]


def test_the_trained_takeaway_agrees_in_number():
    trained = {"overall": Q(0.28, 0.002), "model": {"overall": Q(0.53, 0.001)}, "n_layers": 6, "n_heads": 12}
    assert "1 of the 72 heads lies below" in figs.trained_takeaway({**trained, "local_heads": 1})
    assert "3 of the 72 heads lie below" in figs.trained_takeaway({**trained, "local_heads": 3})


# --------------------------------------------------------------------------- steps at a small size


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    out = tmp_path_factory.mktemp("ch01")
    values = declared_parameters(
        "01_attention_is_nadaraya_watson",
        fidelity="quick",
        identity_dims=[1, 4],
        figures_dir=str(out),
        macros_path=str(out / "values.tex"),
        results_path=str(out / "results.json"),
    )
    return base.setup(ch01, render=False, **values)


def test_the_identity_and_the_gaussian_form_hold_and_the_literal_bandwidth_is_off(ctx):
    identity = ch01.identity(ctx)
    assert identity["bitwise"] and identity["max_err"].value <= TOL and identity["gauss_max_err"].value <= TOL
    assert identity["literal_off_dims"] == [4] and identity["literal_off_text"] == "4"
    assert identity["literal_min_err"].value >= OFF and identity["unequal_min_err"].value > OFF
    assert identity["n_draws"] == ctx.sizes["n_draws"] == len(identity["data"].value["draws"])
    assert ch01.identity(ctx)["table"].equals(identity["table"])  # its stream gives the same draws again


def test_gaussian_nw_is_attention_with_a_per_key_bias(ctx):
    warmup = ch01.warmup(ctx)
    assert warmup["attention_gap"] <= 1e-12
    fits = warmup["data"].value["fits"]
    assert fits.shape == (len(ch01.WARMUP_BANDWIDTHS), 241) and np.all(np.isfinite(fits))


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
