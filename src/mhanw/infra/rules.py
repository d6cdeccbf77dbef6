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
    COUNTED_ROLES,
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    NO_ROLE,
    NOT_CHECKABLE,
    ROLES,
    UNDECIDED,
    VOCABULARY,
    Search,
    Statistic,
    Verdict,
    deciding_entry,
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
    "correct",
    "decide_all",
    "holm",
]


@dataclass(frozen=True)
class Decision:
    """What a rule decided: the ``verdict``, its ``criterion`` in words, the ``statistics`` it read (the
    deciding one first), the ``detectable`` size, ``tolerance`` and ``unit`` of a decision from a
    non-detection (or ``None``), and ``deciding``: the statistic that triggered the verdict
    (:func:`mhanw.infra.verdicts.deciding_entry`) or ``None`` (a symbolic identity, a claim not checkable)."""

    verdict: str
    criterion: str
    statistics: tuple = ()
    detectable: float | None = None
    tolerance: float | None = None
    unit: str = ""
    search: Search | None = None
    conditions: str = ""
    deciding: Mapping | None = None


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


def _why(rule: str, why: str) -> None:
    """A tolerance or a bound is declared with the sentence that justifies it (what size matters, and why)."""
    if not isinstance(why, str) or not why.strip():
        raise ValueError(
            f"{rule}.why: a threshold is declared with one sentence saying why it is the size that matters"
        )


def _z(distance: float, se: float | None) -> float | None:
    """The distance to a threshold in standard errors (``None`` for an exact number, no s.e.)."""
    if se is None or not math.isfinite(se):
        return None
    return math.inf if se == 0 else abs(distance) / se


def _one_sided(q: Q, bound: float, k: float, below: bool) -> str:
    """Symmetric decision on "the quantity is at most (``below``) / above the bound": with an s.e., the
    interval ``value +- k s.e.`` wholly on the stated side holds, wholly on the other side fails, else
    undecided; an exact number (no s.e.) is compared as it is (at most: ``<=``; above: ``>``)."""
    m = 0.0 if q.se is None else k * q.se
    v = q.value
    if below:
        return HOLDS if v + m <= bound else FAILS if v - m > bound else UNDECIDED
    if q.se is None:
        return HOLDS if v > bound else FAILS
    return HOLDS if v - m > bound else FAILS if v + m <= bound else UNDECIDED


@dataclass(frozen=True)
class AtMost:
    """Holds when the statistic at ``path`` is at most ``bound`` (a number, or the path of one), fails when
    it exceeds it; with a standard error the rule is symmetric: holds when ``value + k s.e. <= bound``, fails
    when ``value - k s.e. > bound``, undecided in between.  ``why``: one sentence justifying the bound.  A
    holds can detect a violation of ``bound`` (or of the quantity at ``detectable``, when given)."""

    path: str
    bound: float | str
    why: str = ""
    detectable: str | None = None
    k: float = N_SE

    def __post_init__(self):
        _why("AtMost", self.why)

    def decide(self, results: Results) -> Decision:
        q, bound = _quantity(results, self.path), _bound(results, self.bound)
        verdict = _one_sided(q, bound, self.k, below=True)
        ok = verdict == HOLDS
        detectable = None if not ok else (_bound(results, self.detectable) if self.detectable else bound)
        band = "" if q.se is None else f" by {self.k:g} s.e. (above by as much: fails; else undecided)"
        return Decision(
            verdict,
            f"{q.label or self.path} at most {bound:g}{band} ({self.why})",
            (_statistic(q, self.path),),
            detectable,
            deciding=deciding_entry(q.label or self.path, q.value, q.se, bound, _z(q.value - bound, q.se)),
        )


@dataclass(frozen=True)
class Above:
    """Holds when the statistic at ``path`` exceeds ``bound`` (a number, or the path of one), else fails;
    with a standard error, symmetric as :class:`AtMost`.  ``why``: one sentence justifying the bound."""

    path: str
    bound: float | str
    why: str = ""
    k: float = N_SE

    def __post_init__(self):
        _why("Above", self.why)

    def decide(self, results: Results) -> Decision:
        q, bound = _quantity(results, self.path), _bound(results, self.bound)
        verdict = _one_sided(q, bound, self.k, below=False)
        band = "" if q.se is None else f" by {self.k:g} s.e. (below by as much: fails; else undecided)"
        return Decision(
            verdict,
            f"{q.label or self.path} above {bound:g}{band} ({self.why})",
            (_statistic(q, self.path),),
            deciding=deciding_entry(q.label or self.path, q.value, q.se, bound, _z(q.value - bound, q.se)),
        )


@dataclass(frozen=True)
class Effect:
    """A directional effect: the quantity at ``path`` (with its s.e.) lies on the side ``sign`` of
    ``reference`` (default 0) by more than ``k`` standard errors (holds), on the other side by as much
    (fails), or neither (undecided).  A ``reference`` other than 0 is a threshold: ``why`` justifies it."""

    path: str
    sign: int = 1
    k: float = N_SE
    reference: float = 0.0
    why: str = ""

    def __post_init__(self):
        if self.reference != 0:
            _why("Effect", self.why)

    def decide(self, results: Results) -> Decision:
        q = _quantity(results, self.path)
        if q.se is None:
            raise ValueError(f"results.{self.path}: an effect needs a standard error")
        side = ("above", "below") if self.sign > 0 else ("below", "above")
        why = f" ({self.why})" if self.why else ""
        return Decision(
            significant_effect(q.value - self.reference, q.se, sign=self.sign, n_se=self.k),
            f"{q.label or self.path}: {self.k:g} s.e. {side[0]} {self.reference:g} (holds) or {side[1]} (fails){why}",
            (_statistic(q, self.path),),
            deciding=deciding_entry(
                q.label or self.path, q.value, q.se, self.reference, _z(q.value - self.reference, q.se)
            ),
        )


@dataclass(frozen=True)
class NoViolation:
    """Equivalence within ``tolerance`` (in the quantity's unit) at ``k`` s.e., symmetric around the margin:
    :func:`mhanw.infra.verdicts.no_violation`.  ``why``: one sentence saying why the tolerance is the size
    of effect that matters."""

    path: str
    tolerance: float
    k: float = N_SE
    what: str = ""
    why: str = ""

    def __post_init__(self):
        _why("NoViolation", self.why)

    def decide(self, results: Results) -> Decision:
        q = _quantity(results, self.path)
        if q.se is None:
            raise ValueError(f"results.{self.path}: an equivalence test needs a standard error")
        verdict, detectable = no_violation(q.value, q.se, self.tolerance, n_se=self.k)
        rule = no_violation_criterion(self.tolerance, unit=q.unit, n_se=self.k)
        rule = f"{rule} (tolerance: {self.why})"
        return Decision(
            verdict,
            f"{self.what}: {rule}" if self.what else rule,
            (_statistic(q, self.path),),
            detectable,
            float(self.tolerance),
            q.unit,
            deciding=deciding_entry(
                q.label or self.path, abs(q.value), q.se, self.tolerance, _z(abs(q.value) - self.tolerance, q.se)
            ),
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
    The part that decided (:func:`deciding_part`) comes first: its statistics, then the other parts'; the
    criterion joins theirs."""

    parts: tuple

    def decide(self, results: Results) -> Decision:
        ds = [p.decide(results) for p in self.parts]
        verdicts = [d.verdict for d in ds]
        verdict = FAILS if FAILS in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else UNDECIDED
        first = deciding_part(ds, verdict)
        order = [first] + [i for i in range(len(ds)) if i != first]
        stats = tuple(s for i in order for s in ds[i].statistics)
        det = [d.detectable for d in ds if d.detectable is not None]
        return Decision(
            verdict,
            "; and ".join(d.criterion for d in ds),
            stats,
            det[-1] if verdict == HOLDS and det else None,
            deciding=ds[first].deciding,
        )


def _strength(d: Decision) -> float:
    z = None if d.deciding is None else d.deciding.get("z")
    return math.inf if z is None else float(z)


def deciding_part(decisions, verdict: str) -> int:
    """The index of the part that triggered an any-part verdict: for a fails, the failing part with the
    largest z (the clearest failure); for a holds, the part with the smallest z (the weakest link that
    still held); otherwise the first part with that verdict (else the first part)."""
    same = [i for i, d in enumerate(decisions) if d.verdict == verdict]
    if not same:
        return 0
    if verdict == FAILS:
        return max(same, key=lambda i: _strength(decisions[i]) if _strength(decisions[i]) < math.inf else 1e300)
    if verdict == HOLDS:
        return min(same, key=lambda i: _strength(decisions[i]))
    return same[0]


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
        deciding = node.get("deciding")
        if deciding is None:
            deciding = inferred_deciding(stats, node["verdict"], node.get("tolerance"))
        elif isinstance(deciding, int) and not isinstance(deciding, bool):
            deciding = inferred_deciding(stats[deciding : deciding + 1], node["verdict"], node.get("tolerance"))
        if deciding is not None and not deciding.get("inferred"):  # a named deciding statistic first
            stats = tuple(sorted(stats, key=lambda s: s.name != deciding["path"]))
        return Decision(
            node["verdict"],
            node["criterion"],
            stats,
            node.get("detectable"),
            node.get("tolerance"),
            node.get("unit", ""),
            node.get("search"),
            node.get("conditions", ""),
            deciding,
        )


def inferred_deciding(stats, verdict: str, tolerance: float | None = None) -> dict | None:
    """The deciding statistic of a decision made in a chapter's step that did not name it: among the
    statistics with a standard error, its distance in s.e. from the tolerance (``|value| - tolerance``) or,
    without one, from zero; a fails is decided by the farthest one, a holds by the nearest (its weakest
    link); otherwise the first statistic.  ``None`` when there is no statistic.  The entry says
    ``inferred``: its threshold is a guess, so :func:`correct` leaves the record out of the family (a step
    that wants its decision corrected names its deciding statistic, ``deciding``, in the decision)."""
    if not stats:
        return None
    thr = 0.0 if tolerance is None else float(tolerance)

    def z(s) -> float | None:
        dist = abs(s.value) - thr if tolerance is not None else s.value
        return _z(dist, None if math.isnan(s.se) else s.se)

    measured = [s for s in stats if z(s) is not None]
    if verdict == FAILS and measured:
        pick = max(measured, key=lambda s: min(z(s), 1e300))
    elif verdict in (HOLDS, HOLDS_UNDER) and measured:
        pick = min(measured, key=lambda s: z(s))
    else:
        pick = stats[0]
    value = abs(pick.value) if tolerance is not None else pick.value
    return {
        **deciding_entry(pick.name, value, None if math.isnan(pick.se) else pick.se, thr, z(pick)),
        "inferred": True,
    }


@dataclass(frozen=True)
class NotCheckable:
    """A claim with no quantity to compute: "not checkable", with the reason as its criterion."""

    reason: str

    def decide(self, results: Results) -> Decision:
        return Decision(NOT_CHECKABLE, self.reason)


@dataclass(frozen=True)
class Claim:
    """One verdict record, declared: ``id`` (``"thm-3.1/identity"``), ``statement`` (the sentence checked,
    or a function of the results that says it), the ``rule`` that decides it, its ``role`` (one of
    :data:`mhanw.infra.verdicts.ROLES`: every record of a contract chapter states it), the dotted
    path of its ``premises`` in the results (a tuple of :class:`mhanw.infra.premises.Premise`), ``also``:
    paths of further statistics it reports, ``finding``: a function ``(results, verdict) -> str`` (one
    sentence of what the numbers show), and ``conditions`` (the conditions the companion adds, for a
    verdict that holds only under them)."""

    id: str
    statement: str | Callable[[Results], str]
    rule: object
    role: str
    premises: str | None = None
    also: tuple[str, ...] = ()
    finding: Callable | None = None
    conditions: str = ""
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role: claim {self.id!r} must state its role, one of {ROLES}; got {self.role!r}")

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
            deciding=d.deciding,
            **dict(self.extra),
        )


#: The family-wise error rate of the multiple-testing correction: the one-sided tail beyond N_SE (3) s.e.,
#: the rate one record decided at 3 s.e. already has (about 0.00135), kept for the family as a whole.
ALPHA = 0.5 * math.erfc(N_SE / math.sqrt(2.0))


def holm(zs, alpha: float = ALPHA) -> list[dict | None]:
    """Holm's step-down correction of a family of one-sided tests, given their z values (distances from
    their thresholds in s.e., on the side their verdicts went; ``None``: an exact number, not a test, left
    out of the family).

    The p value of a test is ``Phi(-z)``; sorted ascending, the test of rank i (1-based) of m passes when
    its p value and those of every smaller rank are at most ``alpha / (m - i + 1)``; the family-wise rate
    of a false decision is then at most ``alpha``.  Returns, in the input's order, for each test
    ``{"method": "holm", "alpha", "size": m, "rank", "p", "threshold", "passed"}`` and ``None`` for each
    left out.  Raises ``ValueError`` for a NaN z or an ``alpha`` outside (0, 1)."""
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a family-wise rate in (0, 1), got {alpha!r}")
    zs = list(zs)
    for i, z in enumerate(zs):
        if z is not None and (not isinstance(z, (int, float)) or math.isnan(z)):
            raise ValueError(f"zs[{i}]: expected a z value (a number, inf allowed) or None, got {z!r}")
    tests = [i for i, z in enumerate(zs) if z is not None]
    m = len(tests)
    p = {i: 0.5 * math.erfc(float(zs[i]) / math.sqrt(2.0)) for i in tests}
    out: list[dict | None] = [None] * len(zs)
    passing = True
    for rank, i in enumerate(sorted(tests, key=lambda j: (p[j], j)), start=1):
        threshold = alpha / (m - rank + 1)
        passing = passing and p[i] <= threshold
        out[i] = {
            "method": "holm",
            "alpha": alpha,
            "size": m,
            "rank": rank,
            "p": p[i],
            "threshold": threshold,
            "passed": passing,
        }
    return out


def correct(records, counted: tuple = (*COUNTED_ROLES, NO_ROLE)) -> list[Verdict]:
    """The records with Holm's correction (:func:`holm`, at :data:`ALPHA`) applied within each claim: the
    family of a claim is its records (ids sharing the part before the first ``/``) of a counted role whose
    verdict is a decision on the numbers (not "outside its conditions", not "not checkable") and whose
    deciding statistic has a standard error and was named by its rule (not inferred: :func:`inferred_deciding`).  A holds or a fails whose test does not pass the correction
    becomes "undecided at this size"; every record of a family stores its ``correction`` (with the
    ``before`` verdict), the others none.  Order kept."""
    records = list(records)
    families: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        z = None if r.deciding is None or r.deciding.get("inferred") else r.deciding.get("z")
        if r.role in counted and r.verdict in (HOLDS, HOLDS_UNDER, FAILS, UNDECIDED) and z is not None:
            families.setdefault(r.claim.split("/", 1)[0], []).append(i)
    out = list(records)
    for family, members in families.items():
        zs = [float(records[i].deciding["z"]) for i in members]
        for i, c in zip(members, holm(zs)):
            r = records[i]
            verdict = r.verdict if c["passed"] or r.verdict == UNDECIDED else UNDECIDED
            fields = {**r.__dict__, "correction": {**c, "family": family, "before": r.verdict}, "verdict": verdict}
            if verdict != r.verdict:
                fields["conditions"] = ""
            out[i] = Verdict(**fields)
    return out


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
