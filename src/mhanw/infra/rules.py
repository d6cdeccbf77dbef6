"""Decision rules: how a verdict record is decided from a chapter's results, declared once per record.

A chapter declares each of its records as a :class:`Claim`: the claim's id, the statement checked, its role,
and the **rule** that decides it, which names the statistic(s) it reads by their dotted paths in the
chapter's :class:`mhanw.infra.results.Results`.  ``Claim.decide(results)`` reads them, applies the rule and
builds the :class:`mhanw.infra.verdicts.Verdict` (with its premises, its criterion in words, the statistic
that decided it, the detectable size and the tolerance).  The rules, each with its criterion in words:

- :class:`AtMost` -- an exact check or a bound: holds when the statistic is at most a bound (e.g. an
  identity's largest rounding error at most 1e-12), else fails;
- :class:`Above` -- the mirror image: holds when the statistic exceeds a bound, else fails;
- :class:`Effect` -- a directional effect at k s.e.: holds when the effect has the predicted sign by more
  than k standard errors, fails when it has the other sign by as much, undecided otherwise;
- :class:`NoViolation` -- equivalence within a stated tolerance: holds when the whole interval
  ``|effect| + k s.e.`` lies within the tolerance, fails when ``|effect|`` exceeds both k s.e. and the
  tolerance, undecided otherwise;
- :class:`Zero` -- a symbolic identity: holds when sympy simplifies every gap to zero, else fails;
- :class:`All` -- several rules that must all hold (fails when one fails, undecided otherwise);
- :class:`NotCheckable` -- a claim with no quantity to compute, with the reason;
- :class:`Decided` -- a decision made where the numbers are made (a search reaching its optimum, a trend
  along a family): the results hold the verdict word, its criterion and its statistics.

Every rule refuses what it cannot decide from: a NaN or an infinite statistic, a negative s.e. (raised
when the results are built: :class:`mhanw.infra.results.Q`).

Nothing here knows about attention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..constants import N_SE
from .results import Q, Results
from .verdicts import (
    FAILS,
    HOLDS,
    NOT_CHECKABLE,
    PAPER,
    UNDECIDED,
    VOCABULARY,
    Search,
    Statistic,
    Verdict,
    no_violation,
    no_violation_criterion,
    significant_effect,
    stat,
)

__all__ = [
    "Above",
    "All",
    "AtMost",
    "Claim",
    "Decided",
    "Decision",
    "Effect",
    "NoViolation",
    "NotCheckable",
    "Zero",
    "decide_all",
]


@dataclass(frozen=True)
class Decision:
    """What a rule decided: the ``verdict``, its ``criterion`` in words, the ``statistics`` it read (the
    deciding one first), and the ``detectable`` size, ``tolerance`` and ``unit`` of a decision from a
    non-detection (or ``None``)."""

    verdict: str
    criterion: str
    statistics: tuple = ()
    detectable: float | None = None
    tolerance: float | None = None
    unit: str = ""
    search: Search | None = None
    conditions: str = ""


def _quantity(results: Results, path: str) -> Q:
    value = results.at(path)
    if isinstance(value, Q):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Q(value)
    raise ValueError(f"results.{path}: expected a quantity (Q) for a rule to decide from, got {type(value).__name__}")


def _statistic(q: Q, path: str) -> Statistic:
    return stat(q.label or path, q.value, math.nan if q.se is None else q.se, q.unit)


def _bound(results: Results, bound) -> float:
    return _quantity(results, bound).value if isinstance(bound, str) else float(bound)


@dataclass(frozen=True)
class AtMost:
    """Holds when the statistic at ``path`` is at most ``bound`` (a number, or the path of one), else fails;
    a holds can detect a violation of ``bound`` (or of the quantity at ``detectable``, when given)."""

    path: str
    bound: float | str
    why: str = ""
    detectable: str | None = None

    def decide(self, results: Results) -> Decision:
        q, bound = _quantity(results, self.path), _bound(results, self.bound)
        ok = q.value <= bound
        detectable = None if not ok else (_bound(results, self.detectable) if self.detectable else bound)
        return Decision(
            HOLDS if ok else FAILS,
            f"{q.label or self.path} at most {bound:g}{f' ({self.why})' if self.why else ''}",
            (_statistic(q, self.path),),
            detectable,
        )


@dataclass(frozen=True)
class Above:
    """Holds when the statistic at ``path`` exceeds ``bound`` (a number, or the path of one), else fails."""

    path: str
    bound: float | str
    why: str = ""

    def decide(self, results: Results) -> Decision:
        q, bound = _quantity(results, self.path), _bound(results, self.bound)
        return Decision(
            HOLDS if q.value > bound else FAILS,
            f"{q.label or self.path} above {bound:g}{f' ({self.why})' if self.why else ''}",
            (_statistic(q, self.path),),
        )


@dataclass(frozen=True)
class Effect:
    """A directional effect: the quantity at ``path`` (with its s.e.) lies on the side ``sign`` of
    ``reference`` (default 0) by more than ``k`` standard errors (holds), on the other side by as much
    (fails), or neither (undecided)."""

    path: str
    sign: int = 1
    k: float = N_SE
    reference: float = 0.0

    def decide(self, results: Results) -> Decision:
        q = _quantity(results, self.path)
        if q.se is None:
            raise ValueError(f"results.{self.path}: an effect needs a standard error")
        side = ("above", "below") if self.sign > 0 else ("below", "above")
        return Decision(
            significant_effect(q.value - self.reference, q.se, sign=self.sign, n_se=self.k),
            f"{q.label or self.path}: {self.k:g} s.e. {side[0]} {self.reference:g} (holds) or {side[1]} (fails)",
            (_statistic(q, self.path),),
        )


@dataclass(frozen=True)
class NoViolation:
    """Equivalence within ``tolerance`` (in the quantity's unit) at ``k`` s.e.: :func:`mhanw.infra.verdicts.no_violation`."""

    path: str
    tolerance: float
    k: float = N_SE
    what: str = ""

    def decide(self, results: Results) -> Decision:
        q = _quantity(results, self.path)
        if q.se is None:
            raise ValueError(f"results.{self.path}: an equivalence test needs a standard error")
        verdict, detectable = no_violation(q.value, q.se, self.tolerance, n_se=self.k)
        rule = no_violation_criterion(self.tolerance, unit=q.unit, n_se=self.k)
        return Decision(
            verdict,
            f"{self.what}: {rule}" if self.what else rule,
            (_statistic(q, self.path),),
            detectable,
            float(self.tolerance),
            q.unit,
        )


@dataclass(frozen=True)
class Zero:
    """A symbolic identity: every sympy gap at ``paths`` simplifies to zero (holds), else fails."""

    paths: tuple[str, ...]
    what: str = "sympy simplifies every gap to 0"

    def decide(self, results: Results) -> Decision:
        import sympy as sp

        ok = all(sp.simplify(results.at(p)).is_zero is True for p in self.paths)
        return Decision(HOLDS if ok else FAILS, self.what)


@dataclass(frozen=True)
class All:
    """Several rules that must all hold: fails when one fails, holds when all hold, undecided otherwise.
    The statistics are those of the parts, in order; the criterion joins theirs."""

    parts: tuple

    def decide(self, results: Results) -> Decision:
        ds = [p.decide(results) for p in self.parts]
        verdicts = [d.verdict for d in ds]
        verdict = FAILS if FAILS in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else UNDECIDED
        stats = tuple(s for d in ds for s in d.statistics)
        det = [d.detectable for d in ds if d.detectable is not None]
        return Decision(
            verdict,
            "; and ".join(d.criterion for d in ds),
            stats,
            det[-1] if verdict == HOLDS and det else None,
        )


@dataclass(frozen=True)
class Decided:
    """A decision the results already hold, made where the numbers were made (a search, a trend, a
    comparison along a family): at ``path`` a mapping with ``verdict`` (a word of the vocabulary),
    ``criterion`` (its rule in words), ``statistics`` (quantities, the deciding one first) and optionally
    ``detectable``, ``tolerance``, ``unit``, ``search`` and ``conditions`` (for a verdict that holds only
    under conditions)."""

    path: str

    def decide(self, results: Results) -> Decision:
        node = results.at(self.path)
        if not isinstance(node, Mapping) or node.get("verdict") not in VOCABULARY:
            raise ValueError(f"results.{self.path}: expected a decision with a verdict word")
        stats = tuple(
            s if isinstance(s, Statistic) else _statistic(s, f"{self.path}.statistics[{i}]")
            for i, s in enumerate(node.get("statistics", ()))
        )
        return Decision(
            node["verdict"],
            node["criterion"],
            stats,
            node.get("detectable"),
            node.get("tolerance"),
            node.get("unit", ""),
            node.get("search"),
            node.get("conditions", ""),
        )


@dataclass(frozen=True)
class NotCheckable:
    """A claim with no quantity to compute: "not checkable", with the reason as its criterion."""

    reason: str

    def decide(self, results: Results) -> Decision:
        return Decision(NOT_CHECKABLE, self.reason)


@dataclass(frozen=True)
class Claim:
    """One verdict record, declared: ``id`` (``"thm-3.1/identity"``), ``statement`` (the sentence checked,
    or a function of the results that says it), the ``rule`` that decides it, its ``role``, the dotted
    path of its ``premises`` in the results (a tuple of :class:`mhanw.infra.premises.Premise`), ``also``:
    paths of further statistics it reports, ``finding``: a function ``(results, verdict) -> str`` (one
    sentence of what the numbers show), and ``conditions`` (for a verdict that holds under conditions)."""

    id: str
    statement: str | Callable[[Results], str]
    rule: object
    role: str = PAPER
    premises: str | None = None
    also: tuple[str, ...] = ()
    finding: Callable | None = None
    conditions: str = ""
    extra: Mapping = field(default_factory=dict)

    def decide(self, results: Results, *, chapter: str = "", section: str = "") -> Verdict:
        d = self.rule.decide(results)
        statement = self.statement(results) if callable(self.statement) else self.statement
        also = tuple(_statistic(_quantity(results, p), p) for p in self.also)
        premises = tuple(results.at(self.premises)) if self.premises else ()
        finding = self.finding(results, d.verdict) if self.finding else ""
        return Verdict(
            claim=self.id,
            statement=statement,
            verdict=d.verdict,
            criterion=d.criterion,
            statistics=d.statistics + also,
            detectable=d.detectable,
            tolerance=d.tolerance,
            unit=d.unit,
            chapter=chapter,
            section=section,
            premises=premises,
            finding=finding,
            role=self.role,
            search=d.search,
            conditions=d.conditions or self.conditions,
            **dict(self.extra),
        )


def decide_all(claims, results: Results, *, chapter: str = "", section: str = "") -> list[Verdict]:
    """Every declared :class:`Claim` decided on ``results``, in order; two claims with one id raise."""
    seen: set[str] = set()
    out = []
    for c in claims:
        if c.id in seen:
            raise ValueError(f"claims: {c.id!r} is declared twice")
        seen.add(c.id)
        out.append(c.decide(results, chapter=chapter, section=section))
    return out
