"""The power rule, searches, the verdict "outside its conditions" through every reader, and the
generated sentences under every verdict.

- Power: a "holds" whose detectable size exceeds its tolerance is refused; the criterion of
  ``no_violation_record`` is the rule the code applies; a search that did not reach the known
  configuration cannot support a "holds".
- Every reader of records handles every verdict of the vocabulary, "outside its conditions"
  included: compatible, combine, the ledger's tallies, tables and summary, the scenario and
  stability texts, the book's table, findings_markdown.
- Every template (tallies, counts, findings, the records outside their conditions, the scenario
  and stability sentences, the trained model's sentence, the paper's verdict values) is rendered under
  every verdict word and several counts, and checked for the broken forms the issue found ("it
  undecided at this size", "undecided at this size at these sizes", "1 of 72 heads fall").
"""

from __future__ import annotations

import re

import pytest

from mhanw import data
from mhanw import premises as P
from mhanw.infra import prose
from mhanw.infra import verdicts as V
from mhanw.infra.results import values_tex
from mhanw.infra.texout import tex_text
from mhanw.pipeline import book, stability
from mhanw.pipeline import ledger as L
from mhanw.pipeline import robustness as rr

BROKEN = P.rotation_invariant_inputs(data.data_model("iso_cos", "gaussian-equicorrelated:0.5"))
OK = P.isotropic_m(data.data_model("iso_cos"))


def _record(claim, verdict, shows=V.FAILS, role=V.PAPER, finding=""):
    """A record of ``verdict`` (an "outside its conditions" one built by conversion from ``shows``)."""
    premises = (OK,)
    decision = verdict
    if verdict == V.OUTSIDE:
        premises, decision = (OK, BROKEN), shows
    return V.Verdict(
        claim=claim,
        statement=f"statement of {claim}",
        verdict=decision,
        criterion="the rule",
        statistics=(V.Statistic("z", 36.7),),
        premises=premises,
        role=role,
        finding=finding,
        chapter="04_head_diversity_index",
        section="sec:hdi",
    ).to_dict()


# --------------------------------------------------------------------------- power and searches


def test_a_holds_whose_detectable_size_exceeds_its_tolerance_is_refused():
    base = dict(claim="thm-2.1/neff-limit", statement="s", criterion="c", unit="%")
    assert V.Verdict(verdict=V.HOLDS, detectable=0.5, tolerance=1.0, **base).holds
    for v in (V.HOLDS, V.HOLDS_UNDER):
        with pytest.raises(ValueError, match="^detectable: .* must say 'undecided at this size'"):
            V.Verdict(verdict=v, detectable=1.5, tolerance=1.0, conditions="c", **base)
    assert V.Verdict(verdict=V.FAILS, detectable=1.5, tolerance=1.0, **base).fails  # a detection needs no power
    with pytest.raises(ValueError, match="^detectable:"):  # also when a premise fails: the rule was wrong
        V.Verdict(verdict=V.HOLDS, detectable=1.5, tolerance=1.0, premises=(BROKEN,), **base)
    assert V.power_verdict(V.HOLDS, 1.5, 1.0) == V.UNDECIDED and V.power_verdict(V.HOLDS, 0.5, 1.0) == V.HOLDS
    assert V.power_verdict(V.FAILS, 1.5, 1.0) == V.FAILS


@pytest.mark.parametrize(
    "effect, se, tol", [(0.0028, 0.0005, 0.05), (0.25, 0.1, 0.2), (0.5, 0.1, 0.2), (0.01, 0.02, 0.05)]
)
def test_the_printed_criterion_is_the_rule_applied(effect, se, tol):
    r = V.no_violation_record(
        V.stat("deviation", effect, se),
        tol,
        claim="thm-2.1/neff-limit",
        statement="s",
        criterion="mean deviation from the limit",
    )
    verdict, detectable = V.no_violation(effect, se, tol)
    assert r.verdict == verdict and r.detectable == pytest.approx(detectable) and r.tolerance == tol
    assert r.criterion.startswith("mean deviation from the limit: holds when |effect| + 3 s.e. <= ")
    assert (
        f"<= {V._fmt(tol)} (the interval inside the margin)" in r.criterion and "within 3 s.e. of 0" not in r.criterion
    )
    assert f"|effect| - 3 s.e. > {V._fmt(tol)} (the interval outside it)" in r.criterion  # symmetric


def test_a_holds_on_a_search_that_did_not_reach_the_known_configuration_is_refused():
    short = V.Search(
        "IMSE descent over free heads",
        starts=5,
        known_starts=1,
        perturbed_starts=3,
        steps=60,
        best=0.1705,
        known=0.1682,
    )
    assert not short.reached and short.random_starts == 1
    assert "+1.4 %: it did not reach the known configuration" in short.text()
    base = dict(claim="thm-5.1/imse-optimum/iso-cos", statement="s", criterion="c")
    with pytest.raises(ValueError, match="^search: .* did not reach"):
        V.Verdict(verdict=V.HOLDS_UNDER, conditions="c", search=short, **base)
    assert V.search_verdict(V.HOLDS, short) == V.UNDECIDED and V.search_verdict(V.FAILS, short) == V.FAILS
    reached = V.Search("IMSE descent", 3, 1, 2, 60, 0.1680, 0.1682)
    r = V.Verdict(verdict=V.HOLDS, search=reached, **base)
    assert V.Verdict.from_dict(r.to_dict()) == r and "Search: IMSE descent: 3 starts" in V.findings_markdown([r])
    with pytest.raises(ValueError, match="^starts:"):
        V.Search("x", 2, 2, 1, 10, 0.0, 0.0)


# --------------------------------------------------------------------------- every reader, every verdict


def test_compatible_and_combine_know_the_verdict_outside_its_conditions():
    assert V.compatible(V.OUTSIDE, V.OUTSIDE) and V.compatible(V.OUTSIDE, V.UNDECIDED)
    assert not V.compatible(V.OUTSIDE, V.HOLDS) and not V.compatible(V.HOLDS, V.OUTSIDE)
    assert V.combine([V.OUTSIDE, V.OUTSIDE]) == V.OUTSIDE
    assert V.combine([V.OUTSIDE, V.FAILS]) == V.FAILS and V.combine([V.OUTSIDE, V.HOLDS]) == V.UNDECIDED
    a, b = _record("thm-4.2/a", V.OUTSIDE, V.FAILS), _record("thm-4.2/a", V.OUTSIDE, V.HOLDS)
    assert not stability.agrees(a, b) and stability.agrees(a, a)  # what their numbers show is compared


@pytest.mark.parametrize("verdict", V.VOCABULARY)
def test_every_reader_handles_every_verdict(verdict):
    records = [
        _record("thm-4.2/a", verdict),
        _record("thm-4.2/b", V.HOLDS),
        _record("rf/c", V.FAILS, role=V.CONTROL),
    ]
    table = L.latex_table(records)
    summary = L.latex_summary(records)
    assert f"\\emph{{{verdict}}}" in table and "\\ClaimsOutside" in summary and "\\ClaimsTally" in summary
    assert f"| {L.verdict_text(records[0])} |" in L.markdown_table(records).replace("\u2223", "|")
    assert L.plain_text(L.verdict_text(records[0])) in L.text_table(records)
    assert book.record_verdict_html(records[0]).count(f">{verdict}</a>") == 1
    findings = V.findings_markdown([V.Verdict.from_dict(records[0])])
    assert f"*{verdict}" in findings
    if verdict == V.OUTSIDE:
        assert "Premises that fail, for the verdicts \\emph{outside its conditions}" in table
        assert BROKEN.why in table and "(the numbers: fails as stated)" in table
        assert "One record lies outside its conditions" in summary and "on its numbers it fails as stated" in summary
        assert BROKEN.why in findings
    rows = stability.compare(records, {"1": records, "2": [dict(r, verdict=V.UNDECIDED) for r in records]})
    assert all(r["flips"] == 0 for r in rows)
    tex = rr.stability_latex({"seeds": ["1", "2"], "fidelity": "quick", "claims": rows}, "paper")
    assert "no claim flips" in tex


def test_the_scenario_section_states_what_a_record_outside_its_conditions_shows():
    default = [_record("thm-4.2/a", V.HOLDS_UNDER), _record("thm-4.2/b", V.HOLDS)]
    mine = [
        _record("thm-4.2/a", V.OUTSIDE, V.FAILS, finding="the IMSE rises by 36.7 s.e. from 75 to 90 deg (star family)"),
        default[1],
    ]
    assert rr.classify(default[0], mine[0], None) == rr.OUTSIDE_NOW
    run = {
        "name": "anisotropic",
        "description": "Correlated inputs",
        "fidelity": "quick",
        "chapters": ["04_head_diversity_index"],
        "untouched": [],
        "records": mine,
        "parameters": {"04_head_diversity_index": {"inputs": "gaussian-equicorrelated:0.5"}},
    }
    tex = rr.scenarios_latex(default, [run], None, "quick")
    assert "one falls outside its conditions under it" in tex
    assert (
        "lies outside its conditions (inputs gaussian-equicorrelated:0.5 are not rotation invariant), yet its "
        "numbers are a result: on them it fails as stated (the IMSE rises by 36.7 s.e. from 75 to 90 deg"
    ) in tex
    assert "outside its conditions under it" in tex.split("\\toprule", 1)[1]  # the table's reading too


def test_the_tally_counts_statements_and_readings_and_names_derivations_and_controls_apart():
    records = [
        _record("thm-2.1/a", V.HOLDS),
        _record("thm-2.1/b", V.FAILS),
        _record("thm-4.2/c", V.HOLDS, role=V.CONTROL),
        _record("thm-6.1/printed-law/some-model", V.HOLDS, role=V.DERIVATION),
    ]
    tally = L.tally_sentence(records)
    assert tally == (
        "Of the two parts checked of the paper's one claim (statements and readings), one holds and one fails as "
        "stated; not counted: one control and one derivation of the companion's own"
    )
    table = L.latex_table(records)
    assert "\\emph{ (control)}" in table and "\\emph{ (derivation)}" in table


# --------------------------------------------------------------------------- templates under every verdict

#: Forms of broken generated English: a verdict word where a verb is needed, a size said twice, a count
#: that does not agree with its verb, "all one", doubled punctuation.
BROKEN_FORMS = [
    re.compile(
        r"\b(it|they|which|that|one|none|both|neither|all \w+|\d+|two|three|four|five|parts?|claims?|"
        r"records?|heads?)\s+(undecided|not checkable|outside (its|their) conditions)\b",
        re.I,
    ),
    re.compile(r"undecided at this size at these sizes"),
    re.compile(r"\b(1|one) of (the )?[\w ,()]+? (hold|fail|lie|are|fall|receive|flip)\b"),
    re.compile(r"\bthe one \w+ (hold|fail|lie|are|receive)\b"),
    re.compile(r"\ball one\b"),
    re.compile(r"\b(is|are) (holds?|fails?) \b"),
    re.compile(r"(;\s*;|,\s*,|[a-z]\.\s*\.(?!\.))"),
]


def _grammatical(text: str) -> list[str]:
    plain = re.sub(r"\\[a-zA-Z]+\{?|[{}$]", " ", text)
    plain = re.sub(r"[ \t]+", " ", plain)
    return [m.group(0) for pat in BROKEN_FORMS for m in pat.finditer(plain)]


COUNTS = (1, 2, 5, 13)


@pytest.mark.parametrize("verdict", V.VOCABULARY)
@pytest.mark.parametrize("k", COUNTS)
def test_every_template_reads_under_every_verdict(verdict, k):
    group = [_record(f"thm-4.2/p{i}", verdict, finding="" if i else "") for i in range(k)]
    mixed = group + [_record("thm-2.1/x", V.HOLDS), _record("thm-2.1/y", V.UNDECIDED, role=V.CONTROL)]
    texts = {
        "counts": L.counts_phrase(group),
        "overall": L.overall_sentence(group),
        "tally": L.tally_sentence(mixed),
        "by verdict": L.by_verdict_sentence(mixed),
        "findings": L.findings_sentences(mixed),
        "outside": L.outside_sentence(mixed),
        "summary": L.latex_summary(mixed),
        "predicate": "it " + V.predicate(verdict) + "; they " + V.predicate(verdict, plural=True),
    }
    if verdict == V.OUTSIDE:
        for shows in V.DECISIONS:
            texts[f"outside ({shows})"] = L.outside_sentence([_record("thm-4.2/a", V.OUTSIDE, shows)])
            texts[f"scenario ({shows})"] = rr.outside_text([_record("thm-4.2/a", V.OUTSIDE, shows)])
    default = [_record(f"thm-4.2/p{i}", V.HOLDS) for i in range(k)]
    run = {
        "name": "s",
        "description": "S",
        "fidelity": "quick",
        "chapters": ["04_head_diversity_index"],
        "untouched": [],
        "records": group,
        "parameters": {"04_head_diversity_index": {"inputs": "x"}},
    }
    texts["scenario"] = rr.scenarios_latex(default, [run], None, "quick")
    seeds = {"1": group, "2": default}
    texts["stability"] = rr.stability_latex(
        {"seeds": list(seeds), "fidelity": "quick", "claims": stability.compare(default, seeds)}, "paper"
    )
    for name, text in texts.items():
        bad = _grammatical(text)
        assert not bad, f"{name} under {verdict!r} (k = {k}): {bad}\n{text}"


@pytest.mark.parametrize("k, n", [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (1, 72), (5, 72), (0, 72), (72, 72)])
def test_a_count_agrees_with_its_verb(k, n):
    text = prose.count_clause(k, n, "heads", "falls below it", "fall below it")
    assert not _grammatical(text), text
    assert text.endswith("falls below it") == (k in (0, 1) or n == 1)
    assert prose.count_clause(1, 72, "heads", "falls", "fall") == "1 of 72 heads falls"


@pytest.mark.parametrize("verdict", V.VOCABULARY)
def test_the_verdict_values_give_a_predicate_under_every_verdict(verdict):
    r = V.Verdict.from_dict(_record("thm-4.2/a", verdict))
    tex = values_tex("04", {}, [r])
    assert f"\\mhvalue{{is:thm-4.2/a}}{{{tex_text(V.predicate(r.verdict))}}}" in tex
    words = V.verdict_words(r) if verdict == V.OUTSIDE else verdict
    assert f"\\mhvalue{{verdict:thm-4.2/a}}{{{tex_text(words)}}}" in tex
    if verdict == V.OUTSIDE:  # the failed premise and what the numbers show
        assert "not rotation invariant" in words and "the numbers: fails as stated" in words
    assert not _grammatical("it " + V.predicate(r.verdict) + ".")


@pytest.mark.parametrize("verdict", [V.FAILS, V.HOLDS, V.UNDECIDED, V.OUTSIDE])
def test_the_trained_models_sentence_reads_under_every_verdict(verdict):
    from mhanw.chapters import ch09_pretrained_head_diversity as ha

    less, more = {V.FAILS: (24, 0), V.HOLDS: (0, 24)}.get(verdict, (0, 0))
    text = ha._diversity_sentence(less, more, 24, verdict)
    assert not _grammatical(text) and "training drives" not in text, text


@pytest.mark.parametrize(
    "broken",
    [
        "for the smooth m it undecided at this size",
        "the closed form undecided at this size at these sizes",
        "and 1 of 72 heads fall below it",
        "all one claims hold",
        "the one claim receive the verdict",
        "it is holds here",
        "two parts ; ; three",
    ],
)
def test_the_checker_finds_the_broken_sentences_the_issue_quotes(broken):
    assert _grammatical(broken)


def test_an_exact_whole_number_prints_as_an_integer_and_a_measured_one_keeps_its_digits():
    """A count (no standard error) reads ``parts that fail = 3``, not ``3.00``; an estimate keeps its
    significant digits even when it happens to be whole."""
    from mhanw.infra import verdicts as V

    assert V.statistic_text(V.stat("parts that fail", 3)) == "parts that fail = 3"
    assert V.statistic_text(V.stat("limit of p", 1.0)) == "limit of p = 1"
    assert V.statistic_text(V.stat("ratio", 2.0, 0.1)) == "ratio = 2.00 ± 0.10"
    assert V.statistic_text(V.stat("share", 0.25)) == "share = 0.250"
