"""Roles, the statistic that decided, symmetric tolerances, Holm's correction within a claim, and the one
tally every output prints (issue: claims a referee accepts)."""

from __future__ import annotations

import math

import pytest

from mhanw.chapters import base
from mhanw.infra.results import Q, Results
from mhanw.infra.rules import ALPHA, All, AtMost, Claim, Effect, NoViolation, correct, holm
from mhanw.infra.verdicts import (
    CONTROL,
    COUNTED_ROLES,
    DERIVATION,
    FAILS,
    HOLDS,
    NO_ROLE,
    PAPER,
    READING,
    ROLES,
    UNDECIDED,
    Verdict,
    stat,
)
from mhanw.pipeline import book, ledger, theorems

CONTRACT = [
    "01_attention_is_nadaraya_watson",
    "02_bias_variance_covariance",
    "03_covariance_bound",
    "04_head_diversity_index",
    "06_optimal_head_size",
    "07_structured_weighting",
    "08_ensembles_across_domains",
    "09_pretrained_head_diversity",
]


# ---------------------------------------------------------------- Holm


def test_holm_on_a_hand_made_family_gives_the_textbook_answer():
    # p values 0.01, 0.04, 0.03, 0.005 at alpha 0.05: sorted 0.005 <= 0.0125, 0.01 <= 0.01667,
    # 0.03 > 0.025 stops; so 0.005 and 0.01 pass, 0.03 and 0.04 do not
    ps = [0.01, 0.04, 0.03, 0.005]
    zs = [-_ppf(p) for p in ps]
    out = holm(zs, alpha=0.05)
    assert [c["passed"] for c in out] == [True, False, False, True]
    assert [c["rank"] for c in out] == [2, 4, 3, 1]
    assert [c["threshold"] for c in out] == pytest.approx([0.05 / 3, 0.05 / 1, 0.05 / 2, 0.05 / 4])
    assert [c["p"] for c in out] == pytest.approx(ps)


def test_holm_leaves_exact_numbers_out_of_the_family_and_refuses_bad_input():
    out = holm([None, 10.0, None])
    assert out[0] is None and out[2] is None and out[1]["size"] == 1 and out[1]["passed"]
    assert ALPHA == pytest.approx(0.0013499, rel=1e-4)
    with pytest.raises(ValueError, match="alpha"):
        holm([3.0], alpha=1.5)
    with pytest.raises(ValueError, match=r"zs\[0\]"):
        holm([math.nan])


def test_one_record_at_three_se_passes_alone_and_two_of_them_do_not():
    assert holm([3.05])[0]["passed"]  # the one-record 3-s.e. convention
    assert not any(c["passed"] for c in holm([3.05, 3.05]))  # each p = 0.0011 > alpha / 2
    assert all(c["passed"] for c in holm([3.05, 10.0]))  # step-down: the clear one first, then alpha / 1


def _rec(claim, verdict, z, role=PAPER):
    deciding = None if z is None else {"path": "x", "value": 1.0, "se": 0.1, "z": z, "threshold": 0.0}
    return Verdict(claim=claim, statement="s", verdict=verdict, criterion="c", role=role, deciding=deciding)


def test_correct_demotes_within_a_claim_only_what_holm_does_not_keep():
    records = [
        _rec("thm-1/a", FAILS, 3.2),
        _rec("thm-1/b", HOLDS, 12.0),
        _rec("thm-1/c", HOLDS, None),  # exact: not a test
        _rec("thm-1/d", FAILS, 3.2, role=CONTROL),  # not counted: not in the family
        _rec("thm-2/a", FAILS, 3.2),  # a family of its own
        _rec("thm-1/e", HOLDS, 3.2),
    ]
    out = correct(records)
    # thm-1: z 12 passes at alpha/3; the two at z 3.2 (p = 0.00069) do not pass alpha/2 = 0.00067
    assert [r.verdict for r in out] == [UNDECIDED, HOLDS, HOLDS, FAILS, FAILS, UNDECIDED]
    assert out[0].correction["before"] == FAILS and out[0].correction["family"] == "thm-1"
    assert out[0].correction["size"] == 3 and out[2].correction is None and out[3].correction is None
    assert out[4].correction["size"] == 1 and out[4].correction["passed"]


# ---------------------------------------------------------------- symmetric thresholds


WHY = "a synthetic margin"


@pytest.mark.parametrize(
    "value, se, verdict",
    [
        (0.5, 0.1, FAILS),  # 0.5 - 0.3 > 0.1: wholly outside
        (0.35, 0.1, UNDECIDED),  # 0.35 - 0.3 < 0.1: straddles (the old rule said fails: |e| > 3 s.e. and > tol)
        (0.05, 0.01, HOLDS),  # 0.05 + 0.03 <= 0.1: wholly inside
        (0.08, 0.01, UNDECIDED),  # 0.08 + 0.03 > 0.1: straddles
    ],
)
def test_a_tolerance_decides_symmetrically_around_its_margin(value, se, verdict):
    d = NoViolation("e", 0.1, why=WHY).decide(Results({"e": Q(value, se)}))
    assert d.verdict == verdict
    assert d.deciding["threshold"] == 0.1 and d.deciding["z"] == pytest.approx(abs(abs(value) - 0.1) / se)


@pytest.mark.parametrize("value, verdict", [(0.5, HOLDS), (0.9, UNDECIDED), (1.5, FAILS), (1.1, UNDECIDED)])
def test_a_bound_with_a_standard_error_flips_both_ways(value, verdict):
    assert AtMost("x", 1.0, WHY).decide(Results({"x": Q(value, 0.1)})).verdict == verdict


def test_every_threshold_states_why():
    with pytest.raises(ValueError, match="why"):
        NoViolation("e", 0.1)
    with pytest.raises(ValueError, match="why"):
        AtMost("x", 1.0)
    with pytest.raises(ValueError, match="why"):
        Effect("e", reference=0.05)


# ---------------------------------------------------------------- the statistic that decided


def test_the_deciding_statistic_is_the_one_that_triggered_the_verdict_not_the_first():
    r = Results({"a": Q(0.3, 0.13, label="weak"), "b": Q(-2.0, 0.1, label="clear")})
    d = All((Effect("a"), Effect("b"))).decide(r)
    assert d.verdict == FAILS and d.deciding["path"] == "clear" and d.statistics[0].name == "clear"
    rec = Claim("thm-1/x", "s", All((Effect("a"), Effect("b"))), role=PAPER).decide(r).to_dict()
    assert ledger.deciding_statistic(rec).startswith("clear = -2.00 ± 0.10")


# ---------------------------------------------------------------- roles


def test_every_record_of_a_contract_chapter_has_a_role():
    for name in CONTRACT:
        for c in base.load(name).CLAIMS:
            assert c.role in ROLES, (name, c.id)
    with pytest.raises(ValueError, match="role"):
        Claim("thm-1/x", "s", AtMost("x", 1.0, WHY), role=NO_ROLE)


def test_the_named_derivations_and_controls_are_not_counted():
    roles = {c.id: c.role for name in CONTRACT for c in base.load(name).CLAIMS}
    for claim in (
        "thm-2.1/trained-vs-gaussian-model",
        "thm-7.1/graded-heads/best-single-head",
        "lemma-4.1/first-order",
        "lemma-4.1/closed-form",
        "thm-3.1/ddof1-offset",
    ):
        assert roles[claim] == DERIVATION
    assert roles["thm-7.1/homogeneous-control"] == CONTROL
    assert roles["thm-2.1/locality"] == READING and roles["thm-2.1/identity"] == PAPER
    assert "thm-4.2/as-stated" not in roles and "thm-7.1" not in roles


def test_a_contract_chapter_closing_refuses_a_record_without_a_role():
    ctx = base.Context(base.load("01_attention_is_nadaraya_watson"), {}, {}, {})
    with pytest.raises(ValueError, match="state no role"):
        base.corrected(ctx, Results({}), [_rec("thm-1/a", HOLDS, None, role=NO_ROLE)])


# ---------------------------------------------------------------- one tally


def _ledger():
    def r(claim, verdict, role, chapter="01_attention_is_nadaraya_watson", stats=((1.0, 0.1),)):
        return Verdict(
            claim=claim,
            statement=f"statement of {claim}",
            verdict=verdict,
            criterion="c",
            role=role,
            chapter=chapter,
            statistics=tuple(stat("x", v, s) for v, s in stats),
        ).to_dict()

    return [
        r("thm-2.1/identity", HOLDS, PAPER),
        r("thm-2.1/locality", FAILS, READING),
        r("thm-2.1/neff-limit", FAILS, DERIVATION),
        r("thm-3.1/identity", HOLDS, PAPER, "02_bias_variance_covariance"),
        r("thm-3.1/ddof1-offset", HOLDS, DERIVATION, "02_bias_variance_covariance"),
        r("thm-3.1/cross-term-at-90", UNDECIDED, READING, "02_bias_variance_covariance"),
        r("interp-control/x", HOLDS, CONTROL, "10_training_heads"),
    ]


def test_the_tally_counts_statements_and_readings_only_and_every_output_agrees():
    records = _ledger()
    t = ledger.tally(records)
    assert t["parts"] == 4 and t["claims"] == 2 and set(COUNTED_ROLES) == {PAPER, READING}
    assert t["verdicts"] == {HOLDS: 2, FAILS: 1, UNDECIDED: 1} and t["not_counted"] == {DERIVATION: 2, CONTROL: 1}
    sentence = ledger.tally_sentence(records)
    assert "four parts checked of the paper's two claims" in sentence.lower()
    # the PDF's summary, the ledger page, the front page and the scenario report print this sentence
    assert ledger.tex_text(sentence) in ledger.latex_summary(records)
    assert book.html.escape(sentence) in book.ledger_page(records, [], [], False)
    # the README's and the cards' per-claim counts are the ledger's per-claim tally
    thms = [
        theorems.Theorem(
            "thm-2.1", "01_attention_is_nadaraya_watson", "says", "thm-2.1/identity", "f", reading="thm-2.1/locality"
        ),
        theorems.Theorem("thm-3.1", "02_bias_variance_covariance", "says", "thm-3.1/identity", "f"),
    ]
    found = theorems.findings(thms, records)
    groups = ledger.grouped(records)
    for f in found:
        assert f.tally == ledger.claim_tally(groups[f.theorem.claim])
        assert f.parts == len(ledger.counted(groups[f.theorem.claim]))
    assert sum(f.parts for f in found) == t["parts"]
    assert book.html.escape(sentence) in book.front_page([], found, records, [], False, set())
    assert sentence in ledger.text_table(records)  # the table at the end of make all
    table = theorems.readme_table(found)
    assert "identity: **holds** · locality (reading): **fails as stated**" in table


def test_no_headline_rests_on_a_derivation_or_a_control():
    records = _ledger()
    bad = [theorems.Theorem("thm-2.1", "01_attention_is_nadaraya_watson", "says", "thm-2.1/neff-limit", "f")]
    with pytest.raises(theorems.TheoremsError, match="derivation"):
        theorems.findings(bad, records, strict=False)


def test_a_claims_headline_is_computed_from_its_counted_records():
    groups = ledger.grouped(_ledger())
    assert ledger.headline_verdict(groups["thm-2.1"]) == HOLDS  # the statement; its reading fails apart
    assert ledger.headline_verdict([r for r in groups["thm-2.1"] if r["role"] != PAPER]) == FAILS  # readings only
    assert ledger.headline_verdict(groups["thm-3.1"]) == HOLDS
    assert ledger.headline_verdict(groups["interp-control"]) == UNDECIDED  # nothing counted


def _ppf(p: float) -> float:
    """The standard normal quantile (bisection on erfc; enough for a test)."""
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
