"""Verdict records and the rules every chapter shares (mhanw.infra.verdicts)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mhanw.infra import verdicts as V


def record(claim="thm-3.1/identity", verdict=V.HOLDS, **kw):
    base = dict(
        claim=claim,
        statement="the decomposition adds up",
        verdict=verdict,
        criterion="|residual| < 1e-12",
        statistics=(V.Statistic("residual", 1e-15),),
    )
    base.update(kw)
    return V.Verdict(**base)


@pytest.mark.parametrize(
    "effect, se, tol, expected",
    [
        (0.6, 0.1, 0.2, V.FAILS),  # the interval 0.6 +- 0.3 lies wholly outside the margin 0.2
        (0.5, 0.1, 0.2, V.UNDECIDED),  # 5 s.e. from zero, but the interval reaches the margin (symmetric rule)
        (0.25, 0.1, 0.2, V.UNDECIDED),  # larger than the tolerance but only 2.5 s.e.
        (0.01, 0.01, 0.05, V.HOLDS),  # |effect| + 3 s.e. = 0.04 <= 0.05
        (0.01, 0.02, 0.05, V.UNDECIDED),  # 0.07 > 0.05: the run could not have told
        (-0.6, 0.1, 0.2, V.FAILS),  # two-sided
        (0.18, 0.01, 0.2, V.UNDECIDED),  # significant, within tolerance, but the interval reaches past it
        (0.1, 0.01, 0.2, V.HOLDS),  # significant yet practically zero: within tolerance
    ],
)
def test_no_violation_on_each_side_of_its_thresholds(effect, se, tol, expected):
    verdict, detectable = V.no_violation(effect, se, tol)
    assert verdict == expected
    assert detectable == pytest.approx(3 * se)


def test_no_violation_is_exactly_at_the_boundary_inclusive():
    assert V.no_violation(0.02, 0.01, 0.05)[0] == V.HOLDS  # 0.02 + 0.03 == 0.05
    assert V.no_violation(0.0200001, 0.01, 0.05)[0] == V.UNDECIDED


@pytest.mark.parametrize(
    "effect, sign, expected",
    [
        (0.31, 1, V.HOLDS),
        (0.29, 1, V.UNDECIDED),
        (-0.31, 1, V.FAILS),
        (-0.31, -1, V.HOLDS),
        (0.31, -1, V.FAILS),
        (0.0, -1, V.UNDECIDED),
    ],
)
def test_significant_effect_at_three_standard_errors(effect, sign, expected):
    assert V.significant_effect(effect, 0.1, sign=sign) == expected


@pytest.mark.parametrize(
    "args, name",
    [
        ((math.nan, 0.1, 0.2), "effect"),
        ((0.1, math.nan, 0.2), "se"),
        ((0.1, -1.0, 0.2), "se"),
        ((0.1, 0.1, math.inf), "tolerance"),
        (("x", 0.1, 0.2), "effect"),
    ],
)
def test_rules_reject_non_finite_statistics_naming_them(args, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        V.no_violation(*args)


def test_a_nan_standard_error_is_never_read_as_not_significant():
    with pytest.raises(ValueError, match="^se:"):
        V.significant_effect(1.0, math.nan)


def test_guard_stops_with_both_sides_named():
    V.guard(True, "X", "Y")
    V.guard(np.bool_(True), "X", "Y")
    with pytest.raises(
        V.VerdictGuardError, match="the text says attention is not local; the numbers say n_eff/n = 0.01"
    ):
        V.guard(False, "attention is not local", "n_eff/n = 0.01")
    with pytest.raises(ValueError, match="^condition:"):
        V.guard(1, "X", "Y")


@pytest.mark.parametrize(
    "paper, other, ok",
    [
        (V.HOLDS, V.HOLDS, True),
        (V.HOLDS, V.UNDECIDED, True),
        (V.HOLDS, V.FAILS, False),
        (V.FAILS, V.HOLDS, False),
        (V.FAILS, V.HOLDS_UNDER, False),
        (V.HOLDS, V.HOLDS_UNDER, True),
        (V.NOT_CHECKABLE, V.HOLDS, False),
        (V.FAILS, V.UNDECIDED, True),
    ],
)
def test_compatible_verdicts_never_cross_to_the_opposite(paper, other, ok):
    assert V.compatible(paper, other) is ok


def test_verdict_record_checks_its_fields():
    with pytest.raises(ValueError, match="^verdict:"):
        record(verdict="mostly holds")
    with pytest.raises(ValueError, match="^claim:"):
        record(claim="Thm 3.1")
    with pytest.raises(ValueError, match="^conditions:"):
        record(verdict=V.HOLDS_UNDER)
    with pytest.raises(ValueError, match="^statement:"):
        record(statement=" ")
    assert record(verdict=V.HOLDS_UNDER, conditions="isotropic m").holds


def test_ledger_round_trip_and_duplicate_claims(tmp_path):
    led = V.Ledger("03_covariance_bound")
    led.add(record("lemma-4.1/printed-bound", V.FAILS, detectable=None))
    led.add(record("lemma-4.1/first-order", V.HOLDS, detectable=0.03))
    with pytest.raises(ValueError, match="already in the ledger"):
        led.add(record("lemma-4.1/first-order"))
    path = led.write(tmp_path / "03.json")
    back = V.load_records(path)
    assert [r.claim for r in back] == ["lemma-4.1/printed-bound", "lemma-4.1/first-order"]
    assert back[0].chapter == "03_covariance_bound" and back[1].detectable == 0.03
    assert back[0].statistics[0].value == pytest.approx(1e-15)
    assert json.loads(path.read_text())[0]["verdict"] == V.FAILS
    assert led["lemma-4.1/printed-bound"].fails
    with pytest.raises(KeyError):
        led["lemma-4.1/nothing"]


def test_gather_rejects_the_same_claim_in_two_chapters(tmp_path):
    for name in ("01", "02"):
        led = V.Ledger(name)
        led.add(record("thm-2.1/identity"))
        led.write(tmp_path / f"{name}.json")
    with pytest.raises(ValueError, match="thm-2.1/identity"):
        V.gather(tmp_path.glob("*.json"))


def test_findings_are_rendered_from_the_records():
    recs = [
        record("lemma-4.1/printed-bound", V.FAILS, statistics=(V.Statistic("z at 90 deg", 12.3456, math.nan),)),
        record(
            "lemma-4.1/first-order",
            V.HOLDS,
            detectable=0.031,
            statistics=(V.Statistic("max deviation", 0.012, 0.0101, "%"),),
        ),
    ]
    text = V.findings_markdown(recs)
    assert "*fails as stated*" in text and "*holds*" in text
    assert "z at 90 deg = 12.3" in text and "max deviation = 0.0120 ± 0.010 %" in text
    assert "larger than 0.031" in text
    flipped = [V.Verdict(**{**recs[0].__dict__, "verdict": V.HOLDS, "detectable": 0.5})] + recs[1:]
    assert V.findings_markdown(flipped) != text
    with pytest.raises(ValueError, match="^records:"):
        V.findings_markdown([])


def test_findings_write_the_named_indices_as_math():
    """A chapter's "What we found" shows HDI_PA as the chapters write it, not as a code name."""
    from mhanw.infra.notation import markdown_text

    r = V.Verdict(
        claim="hdi-definition/range",
        statement="HDI_PA lies in [0, 1]",
        verdict=V.HOLDS,
        criterion="HDI_PA within 1e-13 of $[0, 1]$",
        statistics=(V.Statistic("HDI_RV", 0.5, 0.01),),
        section="04_head_diversity_index",
    )
    md = V.findings_markdown([r])
    assert "HDI_PA" not in md and "HDI_RV" not in md
    assert r"$\mathrm{HDI}_{\mathrm{PA}}$ lies in" in md and r"$\mathrm{HDI}_{\mathrm{RV}}$ = 0.500" in md
    assert markdown_text("$HDI_PA$ and HDI_PA") == r"$HDI_PA$ and $\mathrm{HDI}_{\mathrm{PA}}$"
    with pytest.raises(TypeError, match="text"):
        markdown_text(None)


def test_findings_keep_markdown_characters_of_record_text():
    """A star or an underscore of a record ("gamma*(H, rho) > 1", "budget D**") is printed, not read as
    emphasis: outside math every markup character is escaped, math is kept as written."""
    import markdown_it

    from mhanw.infra.notation import markdown_safe

    r = V.Verdict(
        claim="thm-7.1/error-model-threshold",
        statement="a threshold gamma*(H, rho) > 1 for d_k* at budget D**",
        verdict=V.HOLDS,
        criterion="every gamma* > 1 and $a^*$ kept",
        section="sec:thm71",
    )
    md = V.findings_markdown([r])
    html = markdown_it.MarkdownIt().render(md)
    assert "$\\gamma^{\\ast}$(H, $\\rho$) &gt; 1 for $d_{k}^{\\ast}$ at budget D**" in html  # the optima typeset
    assert "every $\\gamma^{\\ast}$ &gt; 1 and $a^*$ kept" in html
    assert markdown_safe("2*3 [x] $a_*$ HDI_PA") == r"2\*3 \[x\] $a_*$ $\mathrm{HDI}_{\mathrm{PA}}$"
