"""Premises as data (mhanw.infra.premises) and the one predicate per premise (mhanw.premises).

Each predicate is evaluated on the reference data model and heads (it holds) and on a model or
configuration built to break it (it fails, and says why in the run's own terms); the records that
carry premises convert a failed one into "outside its conditions", keep what the numbers show,
and refuse the inconsistent cases.  A scan of the chapters keeps the checks in one place.
"""

from __future__ import annotations

import json
import re

import pytest
from nbtools import ROOT

from mhanw import data, heads
from mhanw import premises as P
from mhanw.infra import premises as IP
from mhanw.infra import verdicts as V
from mhanw.infra.premises import Premise, premise

REF = data.data_model("iso_cos")


def _model(**kw):
    spec = dict(regression="iso_cos", inputs="gaussian", noise="gaussian")
    spec.update(kw)
    return data.data_model(spec["regression"], spec["inputs"], spec["noise"])


# --------------------------------------------------------------------------- the record


def test_a_premise_is_data_and_says_why_it_fails():
    p = premise("isotropic-m", "m depends on x only through |x|", False, "m = aniso is not isotropic")
    assert not p.holds and str(p) == "m depends on x only through |x|: no, m = aniso is not isotropic"
    assert Premise.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    ok = premise("isotropic-m", "m depends on x only through |x|", True, "ignored when it holds")
    assert ok.holds and ok.why == "" and "why" not in ok.to_dict()
    with pytest.raises(ValueError, match="^why: premise 'x' fails, so it must say why"):
        Premise("x", "a sentence", False)
    with pytest.raises(ValueError, match="^why: premise 'x' holds"):
        Premise("x", "a sentence", True, "a reason")
    with pytest.raises(ValueError, match="^id:"):
        Premise("Isotropic M", "a sentence", True)
    with pytest.raises(ValueError, match="^holds:"):
        Premise("x", "a sentence", "yes")
    with pytest.raises(ValueError, match="^d:"):
        Premise.from_dict({"id": "x"})


def test_one_premise_is_evaluated_one_way():
    a, b = premise("a", "A", True), premise("b", "B", False, "no B")
    assert IP.premises([a, b, a]) == (a, b)
    assert IP.failed([a, b]) == (b,) and IP.holding([a, b]) == (a,) and not IP.all_hold([a, b])
    assert IP.failure_text([a, b]) == "no B" and IP.conditions_text([a, b]) == "A; B"
    with pytest.raises(ValueError, match="evaluated two ways"):
        IP.premises([a, premise("a", "A", False, "not A")])
    with pytest.raises(ValueError, match=r"^premises\[1\]:"):
        IP.premises([a, "b"])
    merged = IP.merge([a, b], [premise("a", "A", False, "not A here")], [premise("b", "B", False, "no B")])
    assert [(p.id, p.holds, p.why) for p in merged] == [("a", False, "not A here"), ("b", False, "no B")]
    with pytest.raises(ValueError, match="different sentences"):
        IP.merge([a], [premise("a", "another A", True)])


# --------------------------------------------------------------------------- the predicates


BREAK = [  # (predicate, the model that breaks it, words of its reason)
    (P.gaussian_inputs, _model(inputs="student-t:5"), "are not iid N(0, I_d)"),
    (
        P.rotation_invariant_inputs,
        _model(inputs="gaussian-equicorrelated:0.5"),
        "inputs gaussian-equicorrelated:0.5 are not rotation invariant",
    ),
    (P.rotation_invariant_inputs, _model(inputs="uniform-cube"), "not rotation invariant"),
    (P.isotropic_m, _model(regression="aniso"), "m = aniso is not isotropic"),
    (P.homoscedastic_noise, _model(noise="heteroscedastic:1 + r"), "is heteroscedastic"),
    (P.rotation_invariant_noise, _model(noise="heteroscedastic:1 + 0.5*abs(x1)"), "depends on the direction of x"),
    (P.iid_samples, _model(inputs="ar1:0.5"), "draw dependent rows"),
    (P.iid_samples, _model(inputs="clustered:4:0.3"), "draw dependent rows"),
]


@pytest.mark.parametrize("predicate, model, why", BREAK, ids=[f"{b[0].__name__}-{i}" for i, b in enumerate(BREAK)])
def test_each_data_premise_holds_for_the_reference_and_fails_when_broken(predicate, model, why):
    ok = predicate(REF)
    assert ok.holds and ok.sentence == P.PREMISES[ok.id]
    bad = predicate(model)
    assert not bad.holds and why in bad.why and bad.id == ok.id


def test_the_predicates_read_the_laws_own_description():
    assert P.rotation_invariant_noise(_model(noise="heteroscedastic:1 + r")).holds  # a level of |x| only
    assert P.iid_samples(_model(inputs="ar1:0")).holds and P.iid_samples(_model(inputs="clustered:3:0")).holds
    assert P.rotation_invariant_inputs(_model(inputs="student-t:5")).holds
    assert P.gaussian_inputs(_model(inputs="gaussian-diagonal:1")).holds
    assert [p.id for p in P.rotation_invariant_data(REF)] == [
        "isotropic-m",
        "rotation-invariant-inputs",
        "rotation-invariant-noise",
    ]
    with pytest.raises(ValueError, match="^model:"):
        P.isotropic_m("iso_cos")


def test_each_head_premise_holds_for_the_reference_heads_and_fails_when_broken():
    W = heads.pair_heads(0.3, 4, 2)
    ref = heads.HeadConfig(W)
    for pred in (P.gaussian_kernel, P.convex_averaging, P.uniform_averaging, P.shared_response, P.orthonormal_heads):
        assert pred(ref).holds, pred.__name__
    assert not P.gaussian_kernel(heads.HeadConfig(W, kernel="attention", bandwidth=None)).holds
    weighted = heads.HeadConfig(W, weights=[0.7, 0.3])
    assert P.convex_averaging(weighted).holds and not P.uniform_averaging(weighted).holds
    summed = heads.HeadConfig(W, rule="sum", weights=[1.0, 1.0])
    assert "rule 'sum'" in P.convex_averaging(summed).why
    assert P.shared_response(heads.HeadConfig(W, rule="concat")).holds
    assert "more than the response" in P.shared_response(heads.HeadConfig(W, rule="concat", values="stream")).why
    assert not P.orthonormal_heads(2.0 * W).holds
    assert P.heads_fit(3, 2, 6).holds and P.heads_fit(4, 2, 6).why == "H d_k = 8 exceeds d = 6"
    assert P.weights_sum_to_one([0.5, 0.5]).holds and P.weights_sum_to_one([0.6, 0.6]).why == "the weights sum to 1.2"


def test_exchangeable_heads_follow_the_symmetries_of_the_data_law():
    W = heads.orthogonal_heads(6, 1, 6)  # the homogeneous control of Thm 7.1
    assert P.exchangeable_heads(W, _model(regression="iso_exp")).holds
    # equal variances and equal correlations: a permutation of the coordinates keeps the law
    assert P.exchangeable_heads(W, _model(regression="iso_exp", inputs="gaussian-equicorrelated:0.5")).holds
    assert P.exchangeable_heads(W, _model(regression="iso_exp", inputs="uniform-cube")).holds
    diagonal = P.exchangeable_heads(W, _model(regression="iso_exp", inputs="gaussian-diagonal:4"))
    assert not diagonal.holds and "inputs gaussian-diagonal:4.0 change under it" in diagonal.why
    assert "m = aniso changes" in P.exchangeable_heads(W, _model(regression="aniso")).why
    assert "noise" in P.exchangeable_heads(W, _model(noise="heteroscedastic:1 + 0.5*abs(x1)")).why
    assert "not mutually orthogonal" in P.exchangeable_heads(heads.pair_heads(0.3, 4, 2), REF).why


def test_every_premise_has_one_sentence_and_one_predicate():
    made = {
        p.id
        for p in (
            *P.rotation_invariant_data(REF),
            P.gaussian_inputs(REF),
            P.homoscedastic_noise(REF),
            P.iid_samples(REF),
            P.heads_fit(1, 1, 1),
            P.weights_sum_to_one([1.0]),
            P.exchangeable_heads(heads.orthogonal_heads(2, 1, 2), REF),
        )
    }
    c = heads.HeadConfig(heads.pair_heads(0.3, 4, 2))
    made |= {
        f(c).id
        for f in (P.gaussian_kernel, P.orthonormal_heads, P.convex_averaging, P.uniform_averaging, P.shared_response)
    }
    assert made == set(P.PREMISES)
    assert P.describe("isotropic-m") == P.PREMISES["isotropic-m"]
    with pytest.raises(ValueError, match="^premise_id:"):
        P.describe("isotropic")


#: Chapter files that still read a premise off the data model by hand; each chapter's engineer removes
#: their file when the chapter calls the predicates of mhanw.premises (chapter 04 does).
PENDING = {
    "notebooks/03_covariance_bound.md",
}
_BY_HAND = re.compile(
    r"\.(isotropic|rotation_invariant|independent|is_standard_gaussian|homoscedastic)\b"
    r"|noise\.law\b|is_reference_gaussian\("
)


def test_chapters_decide_premises_with_the_predicates():
    files = sorted((ROOT / "src/mhanw/chapters").glob("ch*.py")) + sorted((ROOT / "notebooks").glob("[0-9]*.md"))
    by_hand = {str(f.relative_to(ROOT)) for f in files if _BY_HAND.search(f.read_text(encoding="utf-8"))}
    assert by_hand <= PENDING, f"a chapter tests a premise by hand (call mhanw.premises): {sorted(by_hand - PENDING)}"
    assert not any("04_head_diversity_index" in f for f in by_hand)


# --------------------------------------------------------------------------- records that carry premises


def _rec(verdict, premises=(), **kw):
    kw.setdefault("statistics", (V.Statistic("largest step z-score", 36.7),))
    return V.Verdict(
        claim="thm-4.2/isotropic-families",
        statement="the IMSE does not increase",
        verdict=verdict,
        criterion="a step above 3 s.e. fails",
        premises=premises,
        **kw,
    )


BROKEN = P.rotation_invariant_inputs(_model(inputs="gaussian-equicorrelated:0.5"))


@pytest.mark.parametrize("decision", V.DECISIONS)
def test_a_record_whose_premise_fails_is_outside_its_conditions_and_keeps_its_numbers(decision):
    kw = {"conditions": "isotropic m"} if decision == V.HOLDS_UNDER else {}
    r = _rec(decision, (P.isotropic_m(REF), BROKEN), finding="it rises by 36.7 s.e. from 75 to 90 deg", **kw)
    assert r.verdict == V.OUTSIDE and r.shows == decision and r.decision == decision
    assert r.statistics[0].value == 36.7 and r.conditions == "" and r.failed_premises == (BROKEN,)
    assert not (r.holds or r.fails) and r.outside
    words = V.verdict_words(r)
    assert words == f"outside its conditions ({BROKEN.why}; the numbers: {decision})"
    back = V.Verdict.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r
    md = V.findings_markdown([r])
    assert "36.7" in md and BROKEN.why in md and "It rises by 36.7 s.e." in md


def test_the_outside_verdict_needs_a_failed_premise_and_a_decision():
    with pytest.raises(ValueError, match="^verdict: 'outside its conditions' needs a premise that fails"):
        _rec(V.OUTSIDE, (P.isotropic_m(REF),), shows=V.FAILS)
    with pytest.raises(ValueError, match="^shows:"):
        _rec(V.OUTSIDE, (BROKEN,))
    with pytest.raises(ValueError, match="^shows: only an"):
        _rec(V.FAILS, (), shows=V.FAILS)
    nc = _rec(V.NOT_CHECKABLE, (BROKEN,))
    assert nc.verdict == V.NOT_CHECKABLE and nc.shows == ""  # nothing was computed
    held = _rec(V.HOLDS_UNDER, P.rotation_invariant_data(REF))
    assert held.conditions == IP.conditions_text(P.rotation_invariant_data(REF))  # the premises state the conditions


def test_a_ledger_never_holds_a_holds_or_fails_whose_premise_fails(tmp_path):
    led = V.Ledger("04_head_diversity_index")
    added = led.add(_rec(V.FAILS, (BROKEN,)))
    assert added.verdict == V.OUTSIDE and added.chapter == "04_head_diversity_index"
    path = led.write(tmp_path / "04.json")
    assert [(r.verdict, r.shows) for r in V.load_records(path)] == [(V.OUTSIDE, V.FAILS)]
