"""Tests of mhanw.chapters.ch09_pretrained_head_diversity (the records decided in its steps flip on synthetic
numbers, the sentences of its prose follow the counts, the checks of its directional sentences stop the run,
its parameters and the sizes of a run) and of its companion mhanw.chapters.ch09_figures (the appendix's
table).  The invariance record (AtMost) is flipped by tests/test_chapter_contract.py; the computations on
the weights are tested in tests/test_pretrained_heads.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mhanw.chapters import ch09_figures as figs
from mhanw.chapters import ch09_pretrained_head_diversity as ch09
from mhanw.infra import verdicts as V
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import Q, Results

NAN = math.nan


def _claim(claim_id):
    return next(c for c in ch09.CLAIMS if c.id == claim_id)


def _decide(claim_id, tree):
    return _claim(claim_id).decide(Results({"setting": {"d_k": 32}, **tree}), section=ch09.SECTION)


# --------------------------------------------------------------------------- the records decided in steps


def _diversity(less, more, n=24, nulls=2, other=None):
    """z-scores of ``n`` cases against ``nulls`` nulls: ``less`` cases at -Z_CALL and ``more`` at +Z_CALL
    against every null (the last null's row replaced by ``other`` when given)."""
    z = np.r_[np.full(less, -ch09.Z_CALL), np.full(more, ch09.Z_CALL), np.zeros(n - less - more)]
    Z = np.tile(z, (nulls, 1))
    if other is not None:
        Z[-1] = other
    return _decide(ch09.DIVERSITY_CLAIM, {"spectral_nulls": {"diversity": ch09._diversity_decision(Z)}})


def test_the_diversity_record_is_decided_by_a_majority_of_cases_against_every_null():
    rec = _diversity(13, 0)
    assert rec.verdict == V.FAILS and [s.value for s in rec.statistics] == [13, 0, 24]
    assert "every null (row reassignment, layer spectrum and head spectrum)" in rec.criterion
    assert _diversity(12, 0).verdict == V.UNDECIDED  # exactly half is not a majority
    assert _diversity(13, 0, other=np.zeros(24)).verdict == V.UNDECIDED  # less against one null only
    assert _diversity(0, 13).verdict == V.HOLDS
    assert _diversity(1, 13).verdict == V.UNDECIDED  # more diverse in most, but one case less


def _scale(r2, se):
    return _decide("pretrained/printed-hdi-geometry", {"printed": {"scale": ch09._scale_decision(r2, se)}})


def test_the_scale_record_fails_when_the_scale_explains_most_of_the_printed_index():
    se = 0.01
    assert _scale(ch09.R2_MOSTLY + 3.01 * se, se).verdict == V.FAILS
    assert _scale(ch09.R2_MOSTLY + 2.99 * se, se).verdict == V.UNDECIDED
    assert _scale(ch09.R2_MOSTLY - 3.01 * se, se).verdict == V.HOLDS
    assert _scale(0.94, 0.03).statistics[0].value == 0.94  # the R^2 itself, not its distance to the bound


def _pruning(rho, se, p=0.5):
    return _decide(
        "pretrained/redundancy-predicts-ablation", {"ablation": {"pruning": ch09._pruning_decision(rho, se, p)}}
    )


def test_the_pruning_record_fails_when_a_useful_correlation_is_excluded():
    se = 0.1
    assert _pruning(-3.01 * se, se).verdict == V.HOLDS
    assert _pruning(3.01 * se, se).verdict == V.FAILS  # the opposite sign
    assert _pruning(ch09.RHO_USEFUL + 3 * se + 0.01, se).verdict == V.FAILS  # a useful correlation excluded
    assert _pruning(ch09.RHO_USEFUL + 3 * se - 0.01, se).verdict == V.UNDECIDED
    rec = _pruning(0.015, 0.122, 0.91)
    assert rec.detectable == pytest.approx(3 * 0.122) and [s.value for s in rec.statistics] == [0.015, 0.91]


def _excess(beyond, total, share=(0.6, 0.1)):
    pair = lambda v: {"value": v[0], "se": v[1]}  # noqa: E731
    return {
        "share": pair(share),
        "total": pair(total),
        "beyond_even": pair(beyond),
        "top_trained": pair((0.7, 0.03)),
        "top_null": pair((0.55, 0.001)),
    }


def _shared(*args, **kwargs):
    decision = ch09._shared_decision(_excess(*args, **kwargs), 32)
    return _decide("pretrained/shared-directions", {"spectra": {"shared": decision}})


def test_the_shared_directions_record_decides_on_the_linear_contrast_given_the_total():
    """The leading angles' excess beyond their even part decides (the share's own s.e. may say otherwise),
    and a total at or below zero leaves no share: undecided, or fails when it is 3 s.e. below zero."""
    assert _shared((0.2, 0.1), (0.8, 0.35)).verdict == V.UNDECIDED  # the share looks decisive, the contrast not
    assert _shared((0.31, 0.1), (0.8, 0.35)).verdict == V.HOLDS
    assert _shared((-0.31, 0.1), (0.8, 0.35)).verdict == V.FAILS
    rec = _shared((0.5, 0.01), (-0.1, 0.2), share=(NAN, NAN))
    assert rec.verdict == V.UNDECIDED and rec.statistics[0].name == "total excess over all angles"
    assert all(not s.name.startswith("share of the excess") for s in rec.statistics)  # not estimable: left out
    assert _shared((0.5, 0.01), (-0.7, 0.2), share=(NAN, NAN)).verdict == V.FAILS
    assert len(_shared((0.31, 0.1), (0.8, 0.35)).statistics) == 6
    assert "all 32" in _shared((0.31, 0.1), (0.8, 0.35)).statement


def test_a_share_that_is_not_estimable_is_printed_in_words():
    assert ch09._pm(NAN, NAN) == {"value": r"\mbox{not estimable}", "se": r"\mbox{--}"}
    pair = ch09._pm(0.6330867, 0.1120777)
    assert pair["value"].tex() == r"\ensuremath{0.63}" and pair["se"].tex() == r"\ensuremath{0.1}"


def test_a_case_is_called_by_the_three_se_rule():
    assert [ch09._call(z) for z in (3.0, 2.99, -2.99, -3.0)] == [
        "more",
        "indistinguishable",
        "indistinguishable",
        "less",
    ]


# --------------------------------------------------------------------------- the prose and the text's checks


def _calls(less_layers, L=6):
    """Principal-angle calls of one object per layer ("less" in ``less_layers``, 1-based)."""
    return [["indistinguishable", "less" if l + 1 in less_layers else "indistinguishable", "more"] for l in range(L)]


def _results(**changes):
    """The results the prose reads, at the chapter's quick numbers unless changed."""
    r = {
        "setting": {"n_layers": 6, "n_cases": 24},
        "haar": {"below": 24},
        "row_null": {
            "calls": {o: _calls(range(1, 7)) for o in ("query", "key", "qk_circuit")} | {"value": _calls(range(1, 6))},
            "pa_less": 23,
            "pa_more": 0,
        },
        "spectral_nulls": {
            "calls": {
                "layer_spectrum": {
                    "query": ["more"] + ["less"] * 5,
                    "key": ["less"] * 6,
                    "value": ["less"] * 3 + ["more"] * 3,
                    "qk_circuit": ["more"] + ["indistinguishable"] * 5,
                }
            },
            "diversity": {"less": 17, "more": 0, "cases": 24},
        },
        "ablation": {
            "key_positive_layers": 2,
            "last_minus_rest": {"value": Q(0.024, digits=2), "se": Q(0.002, digits=1)},
        },
        "printed": {"change": {"principal_angles": Q(1.1e-16), "rv": Q(5.6e-16)}},
        "spectra": {"row": {"key": {"top": {"value": Q(0.15), "se": Q(0.03)}}}},
    }
    for path, value in changes.items():
        node = r
        *head, last = path.split("__")
        for k in head:
            node = node[k]
        node[last] = value
    return Results(r)


def _record(verdict):
    return V.Verdict(claim=ch09.DIVERSITY_CLAIM, statement="s", verdict=verdict, criterion="c")


def test_the_prose_reads_as_the_paper_printed_it_at_the_chapters_numbers():
    words = ch09.prose(_results(), [_record(V.FAILS)])
    assert words["row_less_sentence"] == (
        "the keys, the queries and the circuits are less diverse than chance in all six layers, "
        "the values in layers 1--5"
    )
    assert words["row_less_cases"] == "23 of 24 (layer, object) cases" and words["row_more_cases"] == "none of the 24"
    assert words["below_haar_cases"] == "all 24 (layer, object) cases"
    assert words["less_cases"] == "17 of 24 (layer, object) cases" and words["more_cases"] == "none of the 24"
    assert words["layer_spectrum_more"] == "$W_Q$ in layer 1, $W_V$ in layers 4--6 and $W_QW_K^\\top$ in layer 1"
    assert words["key_rho_positive"] == "two of six layers"
    assert words["diversity_sentence"] == (
        "its heads are less diverse than chance in 17 of 24 (layer, object) cases, against every null, "
        "so this trained model's heads are not more diverse than chance"
    )


def test_the_prose_follows_the_counts():
    calls = {"query": _calls([2]), "key": _calls([]), "qk_circuit": _calls([]), "value": _calls([1, 3, 4])}
    layer = {o: ["less"] * 6 for o in ("query", "key", "value", "qk_circuit")}
    words = ch09.prose(
        _results(row_null__calls=calls, spectral_nulls__calls={"layer_spectrum": layer}), [_record(V.FAILS)]
    )
    assert words["row_less_sentence"] == (
        "the keys and the circuits are less diverse than chance in no layer, the queries in layer 2, "
        "the values in layers 1, 3--4"
    )
    assert words["layer_spectrum_more"] == "none"
    more = _results(spectral_nulls__diversity={"less": 0, "more": 24, "cases": 24})
    assert (
        "more diverse than chance in all 24 (layer, object) cases"
        in ch09.prose(more, [_record(V.HOLDS)])["diversity_sentence"]
    )
    neither = ch09.prose(_results(), [_record(V.UNDECIDED)])["diversity_sentence"]
    assert neither.endswith("is undecided at this size (less diverse than chance against every null: 17 of 24)")
    assert "training" not in neither  # one model: the training claim is decided by chapter 10


@pytest.mark.parametrize(
    "changes",
    [
        dict(ablation__last_minus_rest={"value": Q(0.002), "se": Q(0.001)}),  # the last layer does not stand out
        dict(ablation__key_positive_layers=0),  # a consistent sign
        dict(ablation__key_positive_layers=6),
        dict(printed__change={"principal_angles": Q(1e-3), "rv": Q(0.0)}),  # PA moves under the rescaling
        dict(spectra__row={"key": {"top": {"value": Q(0.05), "se": Q(0.03)}}}),  # no excess in the leading cosine
    ],
)
def test_a_sentence_the_numbers_contradict_stops_the_run(changes):
    with pytest.raises(V.VerdictGuardError, match="the text says"):
        ch09.prose(_results(**changes), [_record(V.FAILS)])


# --------------------------------------------------------------------------- parameters and sizes

PARAMS = dict(
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m.tex",
    results_path="r.json",
    model="all-MiniLM-L6-v2",
    n_perm=None,
    n_spectral=None,
    n_haar=None,
    n_sentences=None,
    n_perm_spearman=None,
    sentences=None,
)


def test_the_sizes_of_a_run_apply_the_size_parameters_and_count_own_sentences():
    params = check_parameters(PARAMS, ch09.PARAMETERS, ch09.CONSTRAINTS)
    quick = ch09.SIZES["quick"]
    assert ch09._run_sizes(params, quick) == quick
    assert ch09._run_sizes({**params, "n_perm": 7}, quick)["n_spectrum"] == 7  # at most n_perm spectra kept
    own = ["One sentence here.", "Another one there.", "A third to end."]
    assert ch09._run_sizes({**params, "sentences": own}, quick)["n_sentences"] == 3


def test_the_parameters_refuse_what_the_chapter_cannot_run():
    with pytest.raises(ParameterError, match="^model:"):
        check_parameters({**PARAMS, "model": "bert-base"}, ch09.PARAMETERS)
    with pytest.raises(ParameterError, match="^sentences:"):
        check_parameters({**PARAMS, "sentences": ["one", ""]}, ch09.PARAMETERS)
    with pytest.raises(ParameterError, match="^n_perm:"):
        check_parameters({**PARAMS, "n_perm": 1}, ch09.PARAMETERS)
    with pytest.raises(ParameterError, match="^n_sentences:"):  # both the shipped ones and the user's
        check_parameters({**PARAMS, "n_sentences": 5, "sentences": ["a", "b", "c"]}, ch09.PARAMETERS, ch09.CONSTRAINTS)


@pytest.mark.parametrize(
    "sentences, says",
    [
        (["same", "same", "other"], "distinct"),
        ([f"sentence {i}" for i in range(501)], "at most 500"),
    ],
)
def test_own_sentences_are_distinct_and_bounded(sentences, says):
    with pytest.raises(ParameterError, match=f"^sentences: .*{says}"):
        check_parameters({**PARAMS, "sentences": sentences}, ch09.PARAMETERS, ch09.CONSTRAINTS)


def test_the_streams_give_the_same_children_at_every_call():
    """A step run twice (a notebook cell re-run) draws the same numbers: the children are spawned from a
    fresh copy of the stream, the same as the first spawn of the stream itself."""
    from types import SimpleNamespace

    streams = dict(zip(ch09.STREAMS, np.random.SeedSequence(5).spawn(len(ch09.STREAMS))))
    ctx = SimpleNamespace(streams=streams)
    first = [s.generate_state(2).tolist() for s in ch09._spawn(ctx, "row_null", 3)]
    assert [s.generate_state(2).tolist() for s in ch09._spawn(ctx, "row_null", 3)] == first
    own = np.random.SeedSequence(5).spawn(len(ch09.STREAMS))[ch09.STREAMS.index("row_null")].spawn(3)
    assert [s.generate_state(2).tolist() for s in own] == first


# --------------------------------------------------------------------------- the appendix's table


def test_the_table_of_per_layer_hdis():
    obs = {name: np.full((2, 3), 0.5) + 0.1 * i for i, name in enumerate(ch09.OBJECTS)}
    z = {name: np.array([[-112.3, 2.04, 9.96], [-0.04, np.nan, 3.0]]) for name in ch09.OBJECTS}
    rnd = {name: np.array([0.997, 0.917, 0.917]) for name in ch09.OBJECTS}
    tex = figs.hdi_table(obs, z, rnd)
    lines = tex.splitlines()
    assert lines[1] == r"\begin{tabular}{llccc}" and lines[-2] == r"\end{tabular}"
    rows = [line for line in lines if line.endswith(r"\\") and "&" in line][2:]  # skip the two header rows
    assert len(rows) == 12
    assert rows[0].startswith(r"$W_Q^h$ & printed & $0.500$\,{\scriptsize$(-112)$} & $0.500$\,{\scriptsize$(-0.0)$}")
    assert rows[1].startswith(" & PA & $0.500$\\,{\\scriptsize$(+2.0)$}") and r"\text{n/a}" in rows[1]
    assert "(+10)" in rows[2] and rows[2].endswith(r"& $0.917$ \\")
    assert rows[9].startswith(r"$W_Q^h W_K^{h\top}$ & printed & $0.800$")
    assert tex.count(r"\addlinespace") == 3 and "\n\n" not in tex
