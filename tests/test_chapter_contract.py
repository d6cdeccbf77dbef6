"""The chapter contract (:mod:`mhanw.chapters.base`), checked on every chapter that follows it: its notebook
passes every parameter to ``base.setup`` by name, its steps take only earlier steps' results, and each of
its declared records flips when the statistic its rule reads crosses the rule's threshold."""

from __future__ import annotations

import ast
import math

import pytest
from nbtools import ROOT

from mhanw.chapters import base
from mhanw.infra.results import Q, Results
from mhanw.infra.rules import Above, All, AtMost, Effect, NoViolation
from mhanw.infra.verdicts import FAILS, HOLDS
from mhanw.pipeline import chapters

CONTRACT = chapters.discover(ROOT)
IDS = [c.name[:2] for c in CONTRACT]


def test_every_chapter_follows_the_contract():
    """The pipeline's records run and the book know one way to run a chapter: its module declares STEPS."""
    assert len(CONTRACT) >= 11
    stray = [c.name for c in CONTRACT if not base.follows_contract(base.load(c.name))]
    assert not stray, f"chapters without STEPS: {stray}"


def _setup_call(path):
    for src in chapters.code_sources(path):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setup":
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "base":
                    return node
    return None


@pytest.mark.parametrize("chapter", CONTRACT, ids=IDS)
def test_the_notebook_passes_every_parameter_to_setup_by_its_own_name(chapter):
    call = _setup_call(chapter.path)
    assert call is not None, f"{chapter.name}: no cell calls base.setup(chapter, ...)"
    given = {k.arg: k.value for k in call.keywords}
    declared = list(chapters.declared(chapter.path))
    assert sorted(given) == sorted(declared), f"{chapter.name}: setup names {sorted(given)}, the cell {declared}"
    wrong = [k for k, v in given.items() if not (isinstance(v, ast.Name) and v.id == k)]
    assert not wrong, f"{chapter.name}: setup passes {wrong} as something other than the parameter of that name"
    assert sorted(declared) == sorted(base.load(chapter.name).PARAMETERS)


@pytest.mark.parametrize("chapter", CONTRACT, ids=IDS)
def test_steps_take_only_the_results_of_earlier_steps(chapter):
    import inspect

    module = base.load(chapter.name)
    done = set()
    for fn in module.STEPS:
        assert getattr(fn, "is_step", False), f"{fn.__name__} is not decorated with base.step"
        needs = list(inspect.signature(fn).parameters)[1:]
        assert set(needs) <= done, f"{fn.__name__} takes {set(needs) - done}, which no earlier step makes"
        done.add(fn.__name__)
    assert "params" not in done and "sizes" not in done and "prose" not in done


class _AnyResults(Results):
    """Results that answer a path nobody set with a neutral quantity (for statements that quote numbers)."""

    def at(self, path):
        try:
            return super().at(path)
        except KeyError:
            return () if "premises" in path.split(".") else Q(1.0)


def _sides(rule):
    """``{path: (a value on the holds side, one on the fails side)}`` for a rule with a threshold."""
    if isinstance(rule, AtMost) and not isinstance(rule.bound, str):
        return {rule.path: (Q(rule.bound * 0.5 if rule.bound else 0.0), Q(rule.bound * 2 + 1))}
    if isinstance(rule, Above) and not isinstance(rule.bound, str):
        return {rule.path: (Q(rule.bound * 2 + 1), Q(rule.bound * 0.5 if rule.bound > 0 else rule.bound - 1))}
    if isinstance(rule, Effect):
        r = rule.reference
        return {rule.path: (Q(r + rule.sign * 10.0, 1.0), Q(r - rule.sign * 10.0, 1.0))}
    if isinstance(rule, NoViolation):
        t = rule.tolerance
        return {rule.path: (Q(0.0, t / (10 * rule.k)), Q(10 * t + 1, t / (10 * rule.k)))}
    if isinstance(rule, All):
        out = {}
        for part in rule.parts:
            sides = _sides(part)
            if sides is None:
                return None
            out.update(sides)
        return out
    return None


def _tree(values: dict) -> dict:
    tree: dict = {}
    for path, q in values.items():
        node = tree
        *head, last = path.split(".")
        for key in head:
            node = node.setdefault(key, {})
        node[last] = q
    return tree


CLAIMS = [(c, claim) for c in CONTRACT for claim in getattr(base.load(c.name), "CLAIMS", ())]


@pytest.mark.parametrize("chapter, claim", CLAIMS, ids=[claim.id for _, claim in CLAIMS])
def test_every_declared_record_flips_when_its_statistic_crosses_the_threshold(chapter, claim):
    sides = _sides(claim.rule)
    if sides is None:
        pytest.skip(f"{claim.id}: decided by {type(claim.rule).__name__}, tested with its chapter")
    for i, verdict in ((0, HOLDS), (1, FAILS)):
        others = {p: s[0] for p, s in sides.items()}
        if i:  # one statistic on the failing side is enough to fail
            first = next(iter(sides))
            others[first] = sides[first][1]
        record = claim.decide(_AnyResults(_tree(others)))
        assert record.decision == verdict, f"{claim.id}: {record.decision} where {verdict} was expected"
        assert all(math.isfinite(s.value) for s in record.statistics)
