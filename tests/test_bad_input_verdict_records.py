"""Verdict records and the rules that build them refuse bad input with an error naming the argument.

A sweep of the public API found: a record that took an array for its verdict or a claim id with a final
newline; raw ``TypeError``, ``ZeroDivisionError`` and ``IsADirectoryError`` from the records, the shared
rules and the rules of chapters 04 and 09; a standard error of 1e308 reported under ``detectable`` (a name
inside the rule) or returned as an infinite detectable size; a bad label, rule or slug reported as the
record's ``claim``; an empty set of premises reported as the record's ``conditions``; guards that printed
"3 of 0"; and a jackknife whose statistic returned NaN (a silent NaN standard error) or a string.  Each
must be a ``ValueError`` (or ``TypeError``) whose message starts with the caller's argument.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from mhanw import decomposition as D
from mhanw.infra import verdicts as V
from mhanw.infra.premises import premise

NAN, INF = math.nan, math.inf
ISO = (premise("isotropic-m", "m depends on x only through |x|", True),)


def _named(call, arg, error=ValueError):
    """``call()`` raises ``error`` with a one-line message starting with ``arg`` (``arg:``, ``arg[0]:``,
    ``arg (key 1):``)."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert re.match(rf"{re.escape(arg)}(: | \(|\[)", message), message
    assert "\n" not in message, message
    return message


def _record(**changes):
    return V.Verdict(**{"claim": "a/b", "statement": "s", "verdict": V.HOLDS, "criterion": "c", **changes})


# --------------------------------------------------------------------------- the record itself


@pytest.mark.parametrize("bad", [np.array(["holds"]), np.array("holds"), ["holds"], ("holds",), None, 1, b"holds"])
def test_a_verdict_that_is_not_a_word_is_refused(bad):
    _named(lambda: _record(verdict=bad), "verdict")


@pytest.mark.parametrize("bad", ["a/b\n", "a/b\r\n", "\na/b", "a/b ", "A/b", "a//b", "a/b/", "", None, 1])
def test_a_malformed_claim_id_is_refused(bad):
    _named(lambda: _record(claim=bad), "claim")


@pytest.mark.parametrize(
    "field,bad",
    [
        ("statistics", 5),
        ("statistics", None),
        ("statistics", "ab"),
        ("statistics", [1.0]),
        ("statistics", {"a": 1}),
        ("role", np.array(["paper"])),
        ("role", ["paper"]),
        ("role", "Paper"),
        ("statement", None),
        ("statement", np.array("s")),
        ("section", 3),
        ("finding", None),
        ("unit", b"%"),
    ],
)
def test_a_bad_field_of_a_record_is_named(field, bad):
    _named(lambda: _record(**{field: bad}), field)


def test_good_records_are_unchanged():
    r = _record(statistics=[V.stat("x", 1.0, 0.1)], role=V.CONTROL)
    assert r.statistics == (V.stat("x", 1.0, 0.1),) and r.role == V.CONTROL
    assert _record(claim="thm-4.2/equal-hdi.v2/part-1").claim == "thm-4.2/equal-hdi.v2/part-1"


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: V.combine(None), "verdicts"),
        (lambda: V.combine(3), "verdicts"),
        (lambda: V.combine("holds"), "verdicts"),  # a string is not a list of verdicts (its letters were)
        (lambda: V.combine([np.array(["holds"])]), "verdicts"),
        (lambda: V.compatible(np.array(["holds", "holds"]), V.HOLDS), "paper"),  # an ambiguous truth value
        (lambda: V.compatible(V.HOLDS, np.array(["holds"])), "other"),  # accepted, returned an array
        (lambda: V.compatible(V.HOLDS, None), "other"),
        (lambda: V.predicate(np.array(["holds"])), "verdict"),
        (lambda: V.verdict_phrase(["holds"]), "verdict"),
        (lambda: V.power_verdict(np.array(["holds"]), 0.1, 1.0), "verdict"),
        (lambda: V.search_verdict(V.HOLDS, None), "found"),
        (lambda: V.significant_effect(1.0, 0.1, sign=True), "sign"),
        (lambda: V.direction_words(1.0, 0.1, positive=None, negative="n", neither="o"), "positive"),
    ],
)
def test_the_shared_rules_name_their_arguments(call, arg):
    _named(call, arg)


def test_the_shared_rules_decide_as_before():
    assert V.combine([V.HOLDS, V.HOLDS]) == V.HOLDS and V.combine((V.HOLDS, V.FAILS)) == V.FAILS
    assert V.combine(iter([V.OUTSIDE])) == V.OUTSIDE
    assert V.compatible(V.HOLDS, V.HOLDS_UNDER) and not V.compatible(V.HOLDS, V.FAILS)
    assert V.no_violation(0.01, 0.001, 0.1) == (V.HOLDS, 0.003)
    assert V.significant_effect(-1.0, 0.1, sign=-1) == V.HOLDS
    assert V.within_tolerance(0.0, 1e-9) == (V.HOLDS, 1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda tmp: tmp,  # a directory: IsADirectoryError
        lambda tmp: tmp / "missing.json",  # FileNotFoundError
        lambda tmp: (tmp / "latin1.json").write_bytes(b'["\xe9"]') and tmp / "latin1.json",  # UnicodeDecodeError
        lambda tmp: None,  # TypeError from Path(None)
        lambda tmp: 3,
    ],
)
def test_load_records_names_its_path(tmp_path, make):
    _named(lambda: V.load_records(make(tmp_path)), "path")


# --------------------------------------------------------------------------- numbers beyond a double


@pytest.mark.parametrize("se", [1e308, 6e307, np.float64(1e308)])
def test_a_huge_standard_error_names_the_standard_error(se):
    message = _named(lambda: V.no_violation(0.0, se, 1.0), "se")
    assert "beyond a double" in message  # it returned an infinite detectable size before
    _named(lambda: V.no_violation_record(V.stat("e", 0.0, se), 1.0, claim="a/b", statement="s"), "effect.se")


def test_a_non_finite_number_given_directly_keeps_its_own_name():
    for bad in (NAN, INF, -INF):
        _named(lambda: V.power_verdict(V.HOLDS, bad, 1.0), "detectable")
        _named(lambda: V.no_violation(0.0, bad, 1.0), "se")
        _named(lambda: V.no_violation(bad, 0.1, 1.0), "effect")
    _named(lambda: V.no_violation_record(V.stat("e", 0.0), 1.0, claim="a/b", statement="s"), "effect")  # exact
    _named(lambda: V.no_violation_record(V.stat("e", 0.0, 0.1), NAN, claim="a/b", statement="s"), "tolerance")
    _named(lambda: V.no_violation_record(3.0, 1.0, claim="a/b", statement="s"), "effect")


def test_no_violation_record_refuses_fields_it_fills_or_does_not_know():
    eff = V.stat("e", 0.0, 0.1)
    _named(lambda: V.no_violation_record(eff, 1.0, claim="a/b", statement="s", foo=1), "foo", TypeError)
    _named(lambda: V.no_violation_record(eff, 1.0, claim="a/b", statement="s", detectable=0.1), "detectable", TypeError)
    r = V.no_violation_record(eff, 1.0, claim="a/b", statement="s", criterion="the effect")
    assert r.verdict == V.HOLDS and r.detectable == pytest.approx(0.3) and r.criterion.startswith("the effect: ")


# --------------------------------------------------------------------------- what a record is made from


@pytest.mark.parametrize("bad", ["Bad Label", "m\n", "a_b", "-m", "m.", "x y"])
def test_a_bad_label_rule_or_slug_names_itself(bad):
    _named(lambda: V.no_violation_record(V.stat("e", 0.0, 0.1), 1.0, claim=bad, statement="s"), "claim")


@pytest.mark.parametrize("empty", [(), []])
def test_holds_under_without_premises_names_premises(empty):
    _named(lambda: _record(verdict=V.HOLDS_UNDER, premises=empty), "conditions")  # the record's own fields


def test_an_iterator_reaches_the_rule_as_well_as_its_check():
    # the check read the generator, and the rule decided on what was left: nothing ("holds" for all of none)
    assert V.combine(v for v in [V.FAILS, V.HOLDS]) == V.FAILS
    assert V.combine(iter([V.OUTSIDE])) == V.OUTSIDE


# --------------------------------------------------------------------------- the jackknife

X = np.arange(40.0)


@pytest.mark.parametrize(
    "returned", [NAN, INF, np.array([1.0, NAN]), "abc", None, True, 1 + 2j, {"a": 1.0}, np.array(["x"]), object()]
)
def test_a_jackknife_statistic_must_return_finite_numbers(returned):
    message = _named(lambda: D.jackknife(lambda a: returned, (X,), 5), "statistic")  # NaN gave a NaN s.e.
    assert "all replicates" in message


def test_a_jackknife_statistic_that_fails_on_one_block_says_which():
    def stat(a):  # NaN when the first replicates are left out
        return float(np.mean(a)) if a[0] == 0 else NAN

    message = _named(lambda: D.jackknife(stat, (X,), 4), "statistic")
    assert "replicates 0:10 left out" in message
    message = _named(lambda: D.jackknife(lambda a: np.zeros(1 if a[0] == 0 else 2), (X,), 4), "statistic")
    assert "shape" in message


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        (dict(n_blocks=1), "n_blocks"),
        (dict(n_blocks=41), "n_blocks"),
        (dict(n_blocks=True), "n_blocks"),
        (dict(n_blocks=4.0), "n_blocks"),
        (dict(n_blocks=10**400), "n_blocks"),
        (dict(n_blocks="4"), "n_blocks"),
        (dict(arrays=(X, X[:5])), "arrays"),
        (dict(arrays=()), "arrays"),
        (dict(arrays=(np.array([]),)), "arrays"),
        (dict(arrays=(np.float64(1.0),)), "arrays"),
        (dict(arrays=None), "arrays"),
        (dict(statistic=None), "statistic"),
    ],
)
def test_the_jackknife_checks_its_blocks_and_arrays(kwargs, arg):
    _named(lambda: D.jackknife(**{"statistic": np.mean, "arrays": (X,), "n_blocks": 4, **kwargs}), arg)


def test_the_jackknife_of_huge_values_is_finite_and_unchanged_otherwise():
    theta, se = D.jackknife(lambda a: a.mean(), (X,), 40)
    assert se == pytest.approx(X.std(ddof=1) / math.sqrt(40), rel=1e-12)
    big = X * 1e300  # squared deviations beyond a double: the s.e. itself is not
    theta, se = D.jackknife(lambda a: a.mean(), (big,), 40)
    assert math.isfinite(se) and se == pytest.approx(1e300 * X.std(ddof=1) / math.sqrt(40), rel=1e-9)


def test_a_premise_id_with_a_trailing_newline_is_refused():
    """An id pattern ending in ``$`` matches before a final newline; the id checks use ``fullmatch``."""
    from mhanw.infra.premises import Premise

    with pytest.raises(ValueError, match=r"^id: "):
        Premise("isotropic-m\n", "the regression function is isotropic", True)


def test_a_figure_name_with_a_trailing_newline_is_refused(tmp_path):
    from mhanw.infra.figures import save

    with pytest.raises(ValueError, match=r"^name: "):
        save(None, "04_head_diversity_index\n", tmp_path, caption="A figure.")
    assert not any(tmp_path.iterdir())
