"""Premises as data: what a prediction rests on, evaluated on the run's own parameters.

A claim of the paper predicts something *under conditions* (isotropic ``m``, rotation-invariant
inputs, iid samples, weights summing to one, ...), and every simulation of the companion rests on
modelling choices (Gaussian kernel heads with a free bandwidth, one shared response, ...).  Each
such condition is a :class:`Premise`: a stable id (``"isotropic-m"``), the sentence it asserts
(``"m depends on x only through |x|"``), whether it holds for the parameters the chapter actually
ran with, and -- when it does not -- why (``"inputs gaussian-equicorrelated:0.5 are not rotation
invariant"``).

A verdict record (:class:`mhanw.infra.verdicts.Verdict`) carries the premises its prediction rests
on.  When one of them fails, the record's verdict is ``"outside its conditions"`` and it keeps the
statistics and the decision its rule made on the numbers (what the run *shows* there): a result
outside a claim's conditions is still a result.

This module is the mechanism only; it knows nothing of attention.  The predicates that evaluate
the premises of the paper on data models and heads -- one named function per premise, the same in
every chapter -- live in :mod:`mhanw.premises`.

- :class:`Premise` -- one evaluated premise (JSON: :meth:`Premise.to_dict`, :meth:`Premise.from_dict`);
- :func:`premise` -- the checked constructor the predicates use;
- :func:`premises` -- a check for verdict rules (:func:`mhanw.infra.verdicts.checked`): a sequence
  of premises, de-duplicated by id (the same id with two different evaluations is an error);
- :func:`failed`, :func:`holding`, :func:`all_hold` -- which premises fail / hold;
- :func:`failure_text` -- why the failed ones fail, one clause each (the words a record prints);
- :func:`merge` -- the premises of several settings checked together (each holds when it holds in all);
- :func:`conditions_text` -- the sentences of the premises, the conditions a "holds only under added
  conditions" names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .validate import brief

#: A premise id: lower-case words joined by ``-`` or ``.`` (``"isotropic-m"``, ``"h-dk-at-most-d"``).
_PREMISE_ID = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")


@dataclass(frozen=True)
class Premise:
    """One premise of a prediction, evaluated.

    ``id``: a stable name (``"isotropic-m"``), the same for the same premise in every chapter;
    ``sentence``: what it asserts, a clause in plain text with ``$...$`` for the text's symbols
    (``"m depends on x only through |x|"``); ``holds``: whether it holds for the run's parameters;
    ``why``: when it fails, the reason in the run's own terms (``"m = aniso is not isotropic"``),
    required then and empty when it holds.
    """

    id: str
    sentence: str
    holds: bool
    why: str = ""

    def __post_init__(self):
        if not isinstance(self.id, str) or not _PREMISE_ID.fullmatch(self.id):
            raise ValueError(f"id: expected a premise id like 'isotropic-m', got {brief(self.id)}")
        if not isinstance(self.sentence, str) or not self.sentence.strip():
            raise ValueError(f"sentence: expected the clause premise {self.id!r} asserts, got {brief(self.sentence)}")
        if not isinstance(self.holds, (bool, np.bool_)):
            raise ValueError(f"holds: expected a bool (premise {self.id!r}), got {type(self.holds).__name__}")
        object.__setattr__(self, "holds", bool(self.holds))
        if not isinstance(self.why, str):
            raise ValueError(f"why: expected a string (premise {self.id!r}), got {brief(self.why)}")
        if not self.holds and not self.why.strip():
            raise ValueError(f"why: premise {self.id!r} fails, so it must say why")
        if self.holds and self.why.strip():
            raise ValueError(f"why: premise {self.id!r} holds, so it has no reason to fail (got {self.why!r})")

    def __str__(self) -> str:
        return self.sentence if self.holds else f"{self.sentence}: no, {self.why}"

    def to_dict(self) -> dict:
        out = {"id": self.id, "sentence": self.sentence, "holds": self.holds}
        if self.why:
            out["why"] = self.why
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> Premise:
        """The premise :meth:`to_dict` wrote; ``ValueError`` naming ``d`` for a malformed one."""
        if not isinstance(d, Mapping) or not {"id", "sentence", "holds"} <= set(d):
            raise ValueError(f"d: expected a premise (a mapping with 'id', 'sentence', 'holds'), got {brief(d)}")
        return cls(d["id"], d["sentence"], d["holds"], d.get("why", ""))


def premise(id: str, sentence: str, holds, why: str = "") -> Premise:
    """A checked :class:`Premise` (``why`` is dropped when it holds, so a predicate can always pass it)."""
    if isinstance(holds, (bool, np.bool_)) and holds:
        why = ""
    return Premise(id, sentence, holds, why)


def premises(values, name: str = "premises") -> tuple[Premise, ...]:
    """``values`` (a premise or a sequence of premises, possibly empty) as a tuple, in order, each id once.

    The same premise given twice is kept once; the same id evaluated two different ways is a
    ``ValueError`` naming ``name`` (one premise, one rule)."""
    if isinstance(values, Premise):
        values = (values,)
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name}: expected a sequence of Premise records, got {brief(values)}")
    out: dict[str, Premise] = {}
    for i, p in enumerate(values):
        if not isinstance(p, Premise):
            raise ValueError(f"{name}[{i}]: expected a Premise, got {type(p).__name__} {brief(p)}")
        seen = out.get(p.id)
        if seen is not None and seen != p:
            raise ValueError(f"{name}: premise {p.id!r} is evaluated two ways ({seen} / {p})")
        out.setdefault(p.id, p)
    return tuple(out.values())


def failed(values: Iterable[Premise]) -> tuple[Premise, ...]:
    """The premises that fail, in order."""
    return tuple(p for p in premises(values) if not p.holds)


def holding(values: Iterable[Premise]) -> tuple[Premise, ...]:
    """The premises that hold, in order."""
    return tuple(p for p in premises(values) if p.holds)


def all_hold(values: Iterable[Premise]) -> bool:
    """Whether every premise holds (true for none)."""
    return not failed(values)


def failure_text(values: Iterable[Premise]) -> str:
    """Why the failed premises fail, ``"; "``-joined (``"inputs X are not rotation invariant"``); empty
    when all hold."""
    return "; ".join(p.why for p in failed(values))


def conditions_text(values: Iterable[Premise]) -> str:
    """The sentences of the premises, ``"; "``-joined: the conditions a "holds only under added
    conditions" names (``"m depends on x only through |x|; the inputs' law is rotation invariant"``)."""
    return "; ".join(p.sentence for p in premises(values))


def merge(*groups) -> tuple[Premise, ...]:
    """The premises of several settings checked together (two regression functions, every configuration of
    a family): one premise per id, in order of first appearance, holding when it holds in every setting;
    a failure gathers the distinct reasons of the settings where it fails."""
    out: dict[str, list[Premise]] = {}
    for i, g in enumerate(groups):
        for p in premises(g, f"groups[{i}]"):
            out.setdefault(p.id, []).append(p)
    merged = []
    for pid, ps in out.items():
        sentences = {p.sentence for p in ps}
        if len(sentences) > 1:
            raise ValueError(f"groups: premise {pid!r} asserts different sentences: {sorted(sentences)}")
        whys = list(dict.fromkeys(p.why for p in ps if not p.holds))
        merged.append(Premise(pid, ps[0].sentence, not whys, "; ".join(whys)))
    return tuple(merged)
