"""Tests of :mod:`mhanw.infra.rules`: every rule decides on each side of its threshold, reads the statistic
it names, and refuses what it cannot decide from."""

import math

import pytest
import sympy as sp

from mhanw.infra.premises import Premise
from mhanw.infra.results import Q, Results
from mhanw.infra.rules import Above, All, AtMost, Claim, Decided, Effect, NoViolation, Zero, decide_all
from mhanw.infra.verdicts import CONTROL, FAILS, HOLDS, OUTSIDE, PAPER, UNDECIDED


def _r(**tree):
    return Results(tree)


@pytest.mark.parametrize("value, verdict", [(0.5e-12, HOLDS), (1e-12, HOLDS), (2e-12, FAILS)])
def test_at_most_decides_on_each_side_and_states_its_detectable_size(value, verdict):
    d = AtMost("a.err", 1e-12, "rounding").decide(_r(a={"err": Q(value, label="largest error")}))
    assert d.verdict == verdict
    assert d.statistics[0].name == "largest error" and d.statistics[0].value == value
    assert d.detectable == (1e-12 if verdict == HOLDS else None)


def test_at_most_reads_its_bound_and_detectable_size_from_the_results():
    r = _r(x=Q(3.0), bound=Q(4.0), det=Q(0.5))
    assert AtMost("x", "bound", "a bound of the test", detectable="det").decide(r).detectable == 0.5
    assert AtMost("x", "bound", "a bound of the test").decide(_r(x=Q(5.0), bound=Q(4.0))).verdict == FAILS


@pytest.mark.parametrize("value, verdict", [(2.0, HOLDS), (1.0, FAILS), (0.5, FAILS)])
def test_above_decides_on_each_side(value, verdict):
    assert Above("x", 1.0, "a bound of the test").decide(_r(x=Q(value))).verdict == verdict


@pytest.mark.parametrize(
    "value, sign, verdict",
    [(0.4, 1, HOLDS), (-0.4, 1, FAILS), (0.2, 1, UNDECIDED), (-0.4, -1, HOLDS), (0.4, -1, FAILS)],
)
def test_effect_is_decided_at_three_standard_errors_both_ways(value, sign, verdict):
    assert Effect("e", sign).decide(_r(e=Q(value, 0.1))).verdict == verdict


def test_effect_and_equivalence_need_a_standard_error():
    with pytest.raises(ValueError, match="standard error"):
        Effect("e").decide(_r(e=Q(1.0)))
    with pytest.raises(ValueError, match="standard error"):
        NoViolation("e", 0.1, why="a tolerance of the test").decide(_r(e=Q(1.0)))


@pytest.mark.parametrize(
    "value, se, verdict",
    [(0.01, 0.01, HOLDS), (0.5, 0.01, FAILS), (0.05, 0.03, UNDECIDED), (0.2, 0.1, UNDECIDED), (0.11, 0.005, UNDECIDED)],
)
def test_no_violation_holds_inside_the_tolerance_fails_outside_and_is_undecided_between(value, se, verdict):
    d = NoViolation("e", 0.1, why="a tolerance of the test").decide(_r(e=Q(value, se, unit="%")))
    assert d.verdict == verdict
    assert d.tolerance == 0.1 and d.unit == "%" and d.detectable == pytest.approx(3 * se)


def test_zero_holds_only_when_every_gap_simplifies_to_zero():
    x = sp.Symbol("x")
    assert Zero(("a", "b")).decide(_r(a=sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1, b=sp.Integer(0))).verdict == HOLDS
    assert Zero(("a", "b")).decide(_r(a=sp.Integer(0), b=x)).verdict == FAILS


def test_all_fails_when_one_part_fails_and_holds_when_all_hold():
    r = _r(a=Q(2.0), b=Q(0.5), e=Q(0.1, 0.1))
    assert (
        All((Above("a", 1.0, "a bound of the test"), AtMost("b", 1.0, "a bound of the test"))).decide(r).verdict
        == HOLDS
    )
    assert (
        All((Above("a", 3.0, "a bound of the test"), AtMost("b", 1.0, "a bound of the test"))).decide(r).verdict
        == FAILS
    )
    assert All((Above("a", 1.0, "a bound of the test"), Effect("e"))).decide(r).verdict == UNDECIDED
    assert [
        s.value
        for s in All((Above("a", 1.0, "a bound of the test"), AtMost("b", 1.0, "a bound of the test")))
        .decide(r)
        .statistics
    ] == [2.0, 0.5]


def test_decided_reads_a_decision_made_with_the_numbers():
    r = _r(opt={"verdict": FAILS, "criterion": "the search beat the candidate", "statistics": (Q(1.0, 0.1),)})
    d = Decided("opt").decide(r)
    assert (d.verdict, d.criterion, d.statistics[0].se) == (FAILS, "the search beat the candidate", 0.1)
    with pytest.raises(ValueError, match="verdict word"):
        Decided("opt").decide(_r(opt={"verdict": "maybe"}))


def test_a_claim_builds_its_record_with_premises_role_and_further_statistics():
    failed = Premise("isotropic-m", "m is isotropic", False, "m is not isotropic")
    r = _r(x=Q(0.1, label="error"), y=Q(2.0, label="other"), p=(failed,))
    claim = Claim(
        "thm-1/part",
        lambda res: f"error below {res.at('y').value:g}",
        AtMost("x", 1.0, "a bound of the test"),
        premises="p",
        also=("y",),
        role=CONTROL,
    )
    rec = claim.decide(r, chapter="01_x", section="sec:x")
    assert rec.verdict == OUTSIDE and rec.shows == HOLDS and rec.role == CONTROL
    assert rec.statement == "error below 2" and [s.name for s in rec.statistics] == ["error", "other"]
    assert (rec.chapter, rec.section) == ("01_x", "sec:x")


def test_claims_are_declared_once_and_read_existing_paths():
    c = Claim("thm-1/a", "s", AtMost("x", 1.0, "a bound of the test"), role=PAPER)
    with pytest.raises(ValueError, match="declared twice"):
        decide_all((c, c), _r(x=Q(0.0)))
    with pytest.raises(KeyError, match="no 'y'"):
        AtMost("y", 1.0, "a bound of the test").decide(_r(x=Q(0.0)))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "1", None, True])
def test_a_quantity_refuses_what_no_rule_can_decide_from(bad):
    with pytest.raises(ValueError, match="^value: "):
        Q(bad)
    with pytest.raises(ValueError, match="^se: "):
        Q(1.0, bad if bad is not None else -1.0)
