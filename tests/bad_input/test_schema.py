"""Every parameter of every chapter, refused when bad, from the schema's own constraints.

A chapter's parameters are checked at one boundary, its schema (``PARAMETERS`` and ``CONSTRAINTS`` of
its module, :mod:`mhanw.infra.params`), before anything runs: by ``base.setup`` in a notebook and by the
scenario check (:func:`mhanw.pipeline.chapters.check_values`) for a scenario or a seed. This test derives
invalid values from each parameter's kind -- its declared range (just below its minimum, just above its
maximum, far beyond it), values of the wrong type, non-finite numbers -- and checks that each one is
refused in one line that starts with the parameter's name, whichever chapter declares it.
"""

from __future__ import annotations

import math

import pytest
from nbtools import ROOT

from mhanw.pipeline import chapters

RESERVED = set(chapters.RESERVED)
CHAPTERS = chapters.discover(ROOT)


def _module(chapter):
    import importlib

    return importlib.import_module(chapter.module)


def _bad_values(kind, default):
    """Values this kind must refuse: outside its declared range, of another type, not finite."""
    bad = [object(), {"a": 1}]
    lo, hi = kind.bounds if kind.bounds is not None else (None, None)
    integer = isinstance(default, int) and not isinstance(default, bool)
    if kind.bounds is not None:
        bad += ["1", math.nan, math.inf, -math.inf, True]
        if lo is not None:
            bad.append(lo - 1 if integer else lo - abs(lo) - 1.0)
        if hi is not None:
            bad.append(hi + 1 if integer else hi + abs(hi) + 1.0)
        bad.append(10**400 if integer else 1e308 * 10)
    return bad


CASES = [
    (c.name, name, i)
    for c in CHAPTERS
    for name, kind in _module(c).PARAMETERS.items()
    if name not in RESERVED and name != "seed"
    for i in range(len(_bad_values(kind, chapters.declared(c.path).get(name))))
]


def test_every_chapter_declares_a_schema_for_every_parameter_of_its_cell():
    for c in CHAPTERS:
        declared = set(chapters.declared(c.path))
        assert declared == set(_module(c).PARAMETERS), f"{c.name}: the parameters cell and PARAMETERS differ"


@pytest.mark.parametrize("chapter, name, i", CASES, ids=[f"{c[:2]}-{n}-{i}" for c, n, i in CASES])
def test_a_bad_value_is_refused_in_one_line_naming_the_parameter(chapter, name, i):
    c = next(x for x in CHAPTERS if x.name == chapter)
    kind = _module(c).PARAMETERS[name]
    bad = _bad_values(kind, chapters.declared(c.path).get(name))[i]
    with pytest.raises(chapters.ChapterError) as refused:
        chapters.check_values(c, {name: bad})
    message = str(refused.value)
    assert message.startswith(f"{chapter}: {name}"), message
    assert "\n" not in message and len(message) < 600
