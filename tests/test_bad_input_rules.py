"""Every verdict rule of every chapter checks every argument, through one mechanism.

A rule of a chapter (a public function of ``mhanw.chapters.chNN_*`` named
``*_rule(s)``, ``*_record(s)``, ``*_verdict``, ``*_word(s)``, ``*_sentence``,
``guard_*``, ...) must be decorated with :func:`mhanw.infra.verdicts.checked`,
which names a check for each of its arguments.  This module walks the chapter
modules, finds every rule, and proves for each argument of each rule that NaN
and a string (a number where a label is expected) are refused with a
``ValueError`` naming the argument -- so that no verdict is decided by NaN
(every comparison false) or by the truth of a non-empty string such as
``'False'``.  The only NaN a rule accepts is one documented as "none found"
(:func:`mhanw.infra.verdicts.number_or_missing`), which must then decide
against the claim.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mhanw.chapters
from mhanw import derivation
from mhanw.infra import verdicts as V
from mhanw.infra.premises import premise
from mhanw.infra.verdicts import HOLDS, HOLDS_UNDER, VOCABULARY, Verdict, VerdictGuardError

#: An isotropic premise that holds (the rules of the isotropic reading need their premises).
ISO_PREMISES = (premise("isotropic-m", "m depends on x only through |x|", True),)

NAN = math.nan

#: The names of a chapter's verdict rules.
RULE_NAME = re.compile(r"(_rules?|_records?|_verdict|_words?|_sentence)$|^guard_|^not_checkable$")


def _modules():
    for info in pkgutil.iter_modules(mhanw.chapters.__path__):
        if re.match(r"ch\d\d_", info.name):
            yield importlib.import_module(f"mhanw.chapters.{info.name}")


def _rules():
    out = {}
    for mod in _modules():
        for name, f in vars(mod).items():
            if (
                not name.startswith("_")
                and inspect.isfunction(f)
                and f.__module__ == mod.__name__
                and RULE_NAME.search(name)
            ):
                out[f"{mod.__name__.rsplit('.', 1)[1][:4]}.{name}"] = f
    return out


RULES = _rules()


def _record(claim="a/b", verdict=HOLDS):
    return Verdict(claim=claim, statement="s", verdict=verdict, criterion="c")


LAW = derivation.GrowthLaw("power of log n", False, sp.Rational(1, 3), sp.Integer(0), sp.Integer(2), True, "law")

#: Good arguments of every rule (each decides on them); every argument is then replaced, one at a time.
GOOD = {}

#: The checks that read text (a string is their good value), and NaN as "none found".
TEXT_CHECKS = (V.text, V.note)
MISSING_CHECKS = (V.number_or_missing, V.numbers_or_missing)

ARGUMENTS = sorted((rule, arg) for rule, f in RULES.items() for arg in inspect.signature(f).parameters)


def _call(rule, /, **changes):
    return RULES[rule](**{**GOOD[rule], **changes})


def _check(rule, arg):
    return RULES[rule].checks[arg]


def _decides_against(out):
    records = out if isinstance(out, tuple) else (out,)
    return all(isinstance(r, Verdict) and not r.holds for r in records)


def test_every_rule_of_every_chapter_goes_through_checked():
    unchecked = sorted(r for r, f in RULES.items() if not hasattr(f, "checks"))
    assert not unchecked, f"rules without @checked: {unchecked}"
    for rule, f in RULES.items():
        assert set(f.checks) == set(inspect.signature(f).parameters), rule


def test_every_rule_has_good_arguments_here():
    assert sorted(RULES) == sorted(GOOD), "a new rule needs its good arguments in GOOD"


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_decides_on_good_input(rule):
    out = _call(rule)
    for r in out if isinstance(out, tuple) else (out,):
        assert r is None or isinstance(r, (Verdict, str, bool, list, dict))
        if isinstance(r, Verdict):
            assert r.verdict in VOCABULARY


@pytest.mark.parametrize("rule,arg", ARGUMENTS)
def test_nan_is_refused_naming_the_argument(rule, arg):
    if _check(rule, arg) in MISSING_CHECKS:
        assert _decides_against(_call(rule, **{arg: NAN}))  # "none found": never a verdict for the claim
        return
    with pytest.raises(ValueError, match=rf"^{re.escape(arg)}\b"):
        _call(rule, **{arg: NAN})


@pytest.mark.parametrize("rule,arg", [(r, a) for r, a in ARGUMENTS if RULES[r].checks[a] not in TEXT_CHECKS])
@pytest.mark.parametrize("bad", ["0.1", "False", "nan"])
def test_a_string_is_refused_naming_the_argument(rule, arg, bad):
    with pytest.raises(ValueError, match=rf"^{re.escape(arg)}\b"):
        _call(rule, **{arg: bad})


@pytest.mark.parametrize("rule,arg", [(r, a) for r, a in ARGUMENTS if RULES[r].checks[a] in TEXT_CHECKS])
@pytest.mark.parametrize("bad", [None, 3, 0.5, ["a"]])
def test_a_label_that_is_not_text_is_refused(rule, arg, bad):
    with pytest.raises(ValueError, match=rf"^{re.escape(arg)}: "):
        _call(rule, **{arg: bad})


#: Values that are a number for no rule and text for no rule.
NOT_NUMBERS = st.one_of(
    st.sampled_from([NAN, math.inf, -math.inf, None, object(), 1 + 2j, b"0.1", np.nan, np.float64("inf")]),
    st.text(max_size=8),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), min_size=1, max_size=2),
)


@pytest.mark.skipif(not ARGUMENTS, reason="no chapter declares a rule function (their records are declared Claims)")
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(ARGUMENTS or [("", "")]), bad=NOT_NUMBERS)
def test_any_non_number_through_any_argument_of_any_rule(case, bad):
    """Property: whatever replaces one argument of a rule is refused naming it, unless it is a
    valid value of that argument's kind (text for a label, NaN read as "none found")."""
    rule, arg = case
    check = _check(rule, arg)
    if check in TEXT_CHECKS and isinstance(bad, str) and (check is V.note or bad.strip()):
        return
    if bad is None and check.__name__.startswith("optional("):
        return
    if check in MISSING_CHECKS and isinstance(bad, float) and math.isnan(bad):
        assert _decides_against(_call(rule, **{arg: bad}))
        return
    with pytest.raises(ValueError, match=rf"^{re.escape(arg)}\b"):
        _call(rule, **{arg: bad})


# --------------------------------------------------------------------------- the cases that were wrong


def test_guards_still_stop_on_numbers_that_disagree():
    from mhanw.chapters import ch04_head_diversity_index as ch04

    with pytest.raises(VerdictGuardError):
        ch04.projection_bias_guard(1.0)


def test_checked_insists_on_a_check_for_every_argument():
    with pytest.raises(TypeError, match=r"^checks: rule does not check its argument\(s\) \['label'\]"):

        @V.checked(x=V.number)
        def rule(x, label):
            return x

    @V.checked(x=V.number, label=V.text)
    def rule2(x, label):
        return x

    assert dict(rule2.checks) == {"x": V.number, "label": V.text}
    with pytest.raises(TypeError, match="^rule2: "):
        rule2(1.0)


def test_holds_under_is_not_reachable_from_bad_premises():
    from mhanw.chapters import ch04_head_diversity_index as ch04
    from mhanw.infra.results import Results

    claim = next(c for c in ch04.CLAIMS if c.id == "thm-4.2/isotropic-families")
    decision = ch04.families_decision(1.0, 0.01, -5.0, -20.0, "w")
    for bad in ("True", [True]):
        with pytest.raises(ValueError, match="^premises"):
            claim.decide(Results({"verdicts": {"families": decision, "iso_premises": bad}}))
    good = Results({"verdicts": {"families": decision, "iso_premises": ISO_PREMISES}})
    assert claim.decide(good).verdict == HOLDS_UNDER
