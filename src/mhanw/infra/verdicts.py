"""Verdict records: a claim's verdict as data, decided from numbers by a rule.

A chapter checks claims of the paper.  Each check ends in a :class:`Verdict`:
the claim's id, the statement checked, one verdict from :data:`VOCABULARY`,
the deciding statistics with their standard errors, the criterion in words, the
premises the prediction rests on (:mod:`mhanw.infra.premises`), the tolerance
that matters and the smallest violation the run could detect (with their unit),
and, for a claim that rests on a search, its budget and convergence
(:class:`Search`).  Chapters render their "What we found" cells, the paper's
verdict sentences and the claims ledger from these records, never from typed text.

How a chapter uses it (the manual)
----------------------------------

1. **Premises.**  Evaluate the premises of the claim on the run's own data model and
   heads with the predicates of :mod:`mhanw.premises` (``P.rotation_invariant_data(model)``,
   ``P.iid_samples(model)``, ``P.exchangeable_heads(W, model)``, ...) and pass them to the
   record: ``Verdict(..., verdict=<the rule's decision on the numbers>, premises=prem)``.
   When a premise fails, the record's verdict is :data:`OUTSIDE` ("outside its conditions"),
   its ``shows`` keeps the rule's decision on the numbers ("fails as stated"), its
   statistics are kept, and every reader names the failed premise.  **The constructor
   converts** (a rule never has to test its premises itself, and no record whose premise
   fails can say "holds" or "fails"); ``verdict=OUTSIDE`` given directly needs a failed
   premise and a ``shows``.  A "holds only under added conditions" with premises and no
   ``conditions`` states its premises' sentences as its conditions.  A ``not checkable``
   record stays so (nothing was computed).
2. **Power.**  A "holds" from a non-detection states the ``tolerance`` that matters for the
   claim and the ``detectable`` size, both in ``unit``; **the constructor refuses** a holds
   whose detectable size exceeds its tolerance (that rule must say "undecided at this size":
   :func:`power_verdict` does it).  :func:`no_violation_record` fills both and writes its
   criterion from the rule it applies (:func:`no_violation_criterion`).
3. **Searches.**  A claim that rests on a search or an optimum ("nothing beats the orthogonal
   heads", "the IMSE optimum") records it as a :class:`Search` (budget: starts at the known
   candidate, at perturbations of it and at random, steps; convergence: the best value found
   against the known candidate's on the same objective).  **The constructor refuses** a holds
   whose search did not reach the known candidate (:func:`search_verdict` says "undecided at
   this size" instead).
4. **Role.**  ``role`` is :data:`PAPER` (a statement the summaries make), :data:`READING` (an
   interpretation the summaries imply), :data:`DERIVATION` (the companion's own model, closed form or
   construction, e.g. a law that a model was built to give) or :data:`CONTROL` (a positive or negative
   control); the ledger counts only the first two (:data:`COUNTED_ROLES`), and no headline rests on
   the others.  A record of a legacy chapter may state none (:data:`NO_ROLE`, read as the paper's).
5. **Finding.**  ``finding`` is one sentence of what the numbers show, with its number, written
   by the rule from the numbers so that it is true under any parameters ("the IMSE rises by
   36.7 s.e. from 75 to 90 degrees"); the abstract and the summary are made of findings, and an
   "outside its conditions" record prints its finding as what it shows.  Write it with
   :func:`predicate` for a verdict in a sentence (``"it " + predicate(v)`` is grammatical under
   every verdict).
6. **The paper.**  :func:`mhanw.infra.results.write` gives every record two values: ``\\verdictword{ID}``
   (the verdict's words, with the failed premise for "outside its conditions": :func:`verdict_words`)
   and ``\\verdictis{ID}`` (the verdict as a predicate): a paper sentence "it \\verdictis{ID}" reads
   under every verdict; never put a bare verdict word after a subject.

An end-to-end example of a rule is in :mod:`mhanw.premises`.

The rules that turn statistics into verdicts live in the chapter modules (with
their thresholds as named constants); this module holds what every rule shares:

- :func:`no_violation` -- a claim holds when an effect expected to be zero is
  within ``k`` standard errors of it *and* the run could have seen a violation
  of a stated size; otherwise "fails as stated" or "undecided at this size";
- :func:`no_violation_record` -- the record of a claim decided by :func:`no_violation`;
- :func:`significant_effect` -- the mirror image: a claim that predicts an
  effect of a given sign holds when the effect is ``k`` s.e. away from 0;
- :func:`power_verdict`, :func:`search_verdict` -- a holds demoted to "undecided at this
  size" when the run lacked the power or the search did not converge;
- :func:`combine` -- one verdict for a claim checked at several settings;
- :func:`within_tolerance` -- an exact check (an identity up to rounding);
- :func:`compatible` -- whether two verdicts of one claim (another seed, another size) agree;
- :func:`predicate` -- a verdict as the predicate of a sentence ("is undecided at this size");
- :func:`verdict_key` -- a verdict's direction (``holds``, ``fails``, ``other``) for ``\\byverdict``;
- :func:`checked` -- the argument checks of a rule: a rule decorated with it
  rejects NaN, inf, negative standard errors, empty input and non-numbers with a
  ``ValueError`` naming the argument, so that no verdict comes from bad numbers.
  It must name a check for *every* argument of the rule (a forgotten one is a
  ``TypeError`` when the module is imported), and keeps them as ``rule.checks``.
  The checks (each ``check(value, name)``): :func:`number`, :func:`nonnegative`,
  :func:`standard_error`, :func:`flag`, :func:`numbers`, :func:`numbers_or_none`, :func:`nonnegatives`,
  :func:`standard_errors`, :func:`count`, :func:`positive_count`, :func:`verdict_word`, :func:`number_map`,
  :func:`numbers_map`, :func:`flag_map`, :func:`estimate`, :func:`estimate_map`, :func:`labelled_estimates`,
  :func:`number_or_missing`, :func:`numbers_or_missing` (NaN read as "none found"),
  :func:`expression` (a sympy expression, never a string), :func:`record`,
  :func:`records`, :func:`text`, :func:`note`, :func:`premise_list` (premises, possibly none),
  :func:`search`; and the makers :func:`optional`, :func:`mapping_of`, :func:`named` (keys that are
  names), :func:`instance`.  Errors of what a rule builds are addressed to the rule's own arguments (a
  number beyond a double, a malformed claim id, a holds-under without premises: :func:`checked`);
- :func:`stat` -- the checked constructor of a :class:`Statistic`;
- :func:`guard` -- a sentence of the text states a condition; the chapter stops
  when the numbers disagree;
- :class:`Ledger` -- the records of one chapter, written as JSON next to its
  results, and gathered into ``build/claims.json`` by the pipeline.

Nothing here knows about attention.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from . import notation
from . import premises as _premises
from .premises import Premise
from .texout import write_atomic
from .validate import as_float_array, boolean, brief, positive_int, real_scalar

HOLDS = "holds"
HOLDS_UNDER = "holds only under added conditions"
FAILS = "fails as stated"
UNDECIDED = "undecided at this size"
NOT_CHECKABLE = "not checkable"
#: A premise of the prediction fails for the run's parameters: the record keeps what the numbers
#: show (``Verdict.shows``) and names the failed premise.
OUTSIDE = "outside its conditions"

#: The one vocabulary of verdicts, from strongest support to none.
VOCABULARY = (HOLDS, HOLDS_UNDER, FAILS, UNDECIDED, OUTSIDE, NOT_CHECKABLE)
#: The decisions a rule makes on the numbers (what an "outside its conditions" record ``shows``).
DECISIONS = (HOLDS, HOLDS_UNDER, FAILS, UNDECIDED)

#: Each verdict as the predicate of a sentence, singular and plural (:func:`predicate`).
PREDICATES = {
    HOLDS: ("holds", "hold"),
    HOLDS_UNDER: ("holds only under added conditions", "hold only under added conditions"),
    FAILS: ("fails as stated", "fail as stated"),
    UNDECIDED: ("is undecided at this size", "are undecided at this size"),
    OUTSIDE: ("lies outside its conditions", "lie outside their conditions"),
    NOT_CHECKABLE: ("is not checkable", "are not checkable"),
}

#: What a record checks (``Verdict.role``): ``paper``, a statement the summaries make; ``reading``, an
#: interpretation the summaries imply ("1/sqrt(d_k) is a bandwidth, so attention is local");
#: ``derivation``, the companion's own model, closed form or construction; ``control``, a positive or
#: negative control.  Only the first two are counted (:data:`COUNTED_ROLES`): a derivation or a control
#: is evidence about the companion's machinery, never a verdict on the paper.
PAPER, READING, DERIVATION, CONTROL = "paper", "reading", "derivation", "control"
ROLES = (PAPER, READING, DERIVATION, CONTROL)
#: The roles the tallies and headlines count.
COUNTED_ROLES = (PAPER, READING)
#: The role of a record of a legacy chapter (one not yet on the chapter contract) that states none: it
#: is read as the paper's (what every record was before roles); a contract chapter must state its roles.
NO_ROLE = ""

#: Default number of standard errors that separate an effect from zero.  Three
#: keeps the chance of a false alarm per comparison near 0.3% for a normal statistic.
N_SE = 3.0

#: A claim id: lower-case words of letters and digits joined by ``-`` or ``.``, parts separated by ``/``
#: (matched with ``fullmatch``: ``$`` would let a final newline through).
_CLAIM_ID = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*(?:/[a-z0-9]+(?:[.-][a-z0-9]+)*)*")


class VerdictGuardError(AssertionError):
    """A sentence of the text states something the numbers do not support."""


class StatisticError(ValueError):
    """A deciding number of a record is not a finite double (e.g. ``3 * se`` or a z-score overflowed);
    :func:`checked` re-addresses it to the rule's arguments that produced it.  ``root``: the message of
    the number that was not finite (kept when a rule called by a rule re-addresses it again)."""

    def __init__(self, message: str, root: str | None = None):
        super().__init__(message)
        self.root = message if root is None else root


class ClaimIdError(ValueError):
    """A record's claim id is malformed; ``claim`` is the id.  :func:`checked` names the rule's argument
    the id was made from (a label, a rule, a slug)."""

    def __init__(self, message: str, claim):
        super().__init__(message)
        self.claim = claim


class ConditionsError(ValueError):
    """A "holds only under added conditions" record that states neither conditions nor premises;
    :func:`checked` names the rule's ``premises`` argument (the caller's), not the record's field."""


# --------------------------------------------------------------------------- argument checks


def number(value, name: str) -> float:
    """``value`` as a float if it is a finite real number (int, float, numpy scalar or 0-d array; not a
    bool or a string), else ``ValueError`` naming ``name``."""
    if isinstance(value, np.ndarray):
        return float(as_float_array(value, name, ndim=0))
    return real_scalar(value, name)


def _at_least_zero(x, value, name: str, what: str):
    if np.any(np.asarray(x) < 0):
        got = f"{value!r}" if np.ndim(x) == 0 else "a negative one"
        raise ValueError(f"{name}: expected {what} >= 0, got {got}")
    return x


def standard_error(value, name: str) -> float:
    """``value`` as a float if it is a finite standard error (a real number >= 0), else ``ValueError``."""
    return _at_least_zero(number(value, name), value, name, "a standard error")


def nonnegative(value, name: str) -> float:
    """``value`` as a float if it is a finite real number >= 0 (an error size, a distance), else ``ValueError``."""
    return _at_least_zero(number(value, name), value, name, "a number")


def flag(value, name: str) -> bool:
    """``value`` if it is a bool (Python or numpy), else ``ValueError`` naming ``name`` (:func:`boolean`)."""
    return boolean(value, name)


def numbers(values, name: str) -> np.ndarray:
    """``values`` as a non-empty float array of finite numbers, else ``ValueError`` naming ``name``."""
    return as_float_array(values, name)


def numbers_or_none(values, name: str) -> np.ndarray:
    """``values`` as a float array of finite numbers, possibly empty (a list of settings that may have none)."""
    if isinstance(values, (str, bytes, Mapping)):
        raise ValueError(f"{name}: expected a list of numbers, got {type(values).__name__} {brief(values)}")
    return as_float_array(values, name, allow_empty=True)


def standard_errors(values, name: str) -> np.ndarray:
    """``values`` as a non-empty float array of finite standard errors (>= 0), else ``ValueError``."""
    return _at_least_zero(as_float_array(values, name), values, name, "standard errors")


def nonnegatives(values, name: str) -> np.ndarray:
    """``values`` as a non-empty float array of finite numbers >= 0 (error sizes), else ``ValueError``."""
    return _at_least_zero(as_float_array(values, name), values, name, "numbers")


def count(value, name: str) -> int:
    """``value`` as an int if it is a whole number >= 0 (not a bool), else ``ValueError`` naming ``name``."""
    return positive_int(value, name, minimum=0)


def positive_count(value, name: str) -> int:
    """``value`` as an int if it is a whole number >= 1 (a dimension such as ``d_k``, a number of layers;
    not a bool), else ``ValueError`` naming ``name``: a rule that divides by it, or counts out of it, needs one."""
    return positive_int(value, name)


def verdict_word(value, name: str, choices: tuple = VOCABULARY) -> str:
    """``value`` if it is a string among ``choices`` (default: a verdict of :data:`VOCABULARY`), else
    ``ValueError`` naming ``name``: an array or another object that merely compares equal to a word is refused,
    as ``value in choices`` alone would take ``np.array(["holds"])`` for ``"holds"``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}: expected one of {choices}, got {type(value).__name__} {brief(value)}")
    return value


def _mapping(values, name: str) -> Mapping:
    if not isinstance(values, Mapping):
        raise ValueError(f"{name}: expected a mapping (dict), got {type(values).__name__}")
    if not values:
        raise ValueError(f"{name}: expected at least one entry, got an empty mapping")
    return values


def number_map(values, name: str) -> dict:
    """A non-empty mapping whose values are finite real numbers, else ``ValueError`` naming ``name[key]``."""
    return {k: number(v, f"{name}[{k!r}]") for k, v in _mapping(values, name).items()}


def estimate(pair, name: str) -> tuple[float, float]:
    """``(value, standard error)``: a finite number and a finite standard error >= 0."""
    items = None if isinstance(pair, (str, bytes, Mapping)) or not hasattr(pair, "__iter__") else list(pair)
    if items is None or len(items) != 2:
        raise ValueError(f"{name}: expected a pair (value, standard error), got {brief(pair)}")
    return number(items[0], f"{name}[0]"), standard_error(items[1], f"{name}[1]")


def estimate_map(values, name: str) -> dict:
    """A non-empty mapping of ``(value, standard error)`` pairs (:func:`estimate`)."""
    return {k: estimate(v, f"{name}[{k!r}]") for k, v in _mapping(values, name).items()}


def records(values, name: str) -> list:
    """``values`` as a non-empty list of :class:`Verdict` records (the parts a summary record combines)."""
    items = None if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__") else list(values)
    if not items or not all(isinstance(r, Verdict) for r in items):
        raise ValueError(f"{name}: expected a non-empty list of Verdict records, got {brief(values)}")
    return items


def text(value, name: str) -> str:
    """``value`` if it is a non-empty string (a label, a claim id, words of a sentence), else ``ValueError``."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name}: expected a non-empty string, got {type(value).__name__} {brief(value)}")
    return value


def note(value, name: str) -> str:
    """``value`` if it is a string, possibly empty (an optional reason or remark), else ``ValueError``."""
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {type(value).__name__} {brief(value)}")
    return value


def _is_nan(value) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def number_or_missing(value, name: str) -> float:
    """A finite real number, or NaN read as "none found" (e.g. no sample size at which a law reaches a
    value): the rule must then decide against the claim.  inf, strings, bools and None raise ``ValueError``."""
    return math.nan if _is_nan(value) else number(value, name)


def number_or_not_estimable(value, name: str) -> float:
    """A finite real number, or NaN read as "not estimable" (e.g. a ratio whose denominator is not positive
    in every jackknife replicate): the rule must then decide from other arguments it names, and refuse
    the NaN without them.  inf, strings, bools and None raise ``ValueError``."""
    return math.nan if _is_nan(value) else number(value, name)


def numbers_or_missing(values, name: str) -> np.ndarray:
    """A non-empty float array of finite numbers and NaN (NaN: "none found", e.g. no crossover at a grid
    point; the rule must then decide against the claim).  inf and non-numbers raise ``ValueError``."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected an array of real numbers, got {type(values).__name__}") from exc
    if raw.dtype.kind != "f":
        return numbers(values, name)
    arr = raw.astype(np.float64, copy=False)
    if arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if np.any(np.isinf(arr)):
        raise ValueError(f"{name}: expected finite values or NaN (none found), found inf")
    return arr


def expression(value, name: str):
    """``value`` if it is a finite sympy expression or a finite real number (a derived quantity; never a
    string, which sympy would run as Python), else ``ValueError`` naming ``name``.  NaN, zoo and
    infinities are refused."""
    import sympy as sp

    if isinstance(value, (str, bytes)):
        raise ValueError(
            f"{name}: expected a sympy expression or a number, got the string {value!r} (sympy would run it as Python)"[
                :300
            ]
        )
    if not isinstance(value, sp.Basic):
        number(value, name)
        return value
    if not isinstance(value, sp.Expr):
        raise ValueError(f"{name}: expected a sympy expression, got {type(value).__name__} {brief(value)}"[:300])
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{name}: expected a finite sympy expression, got {sp.sstr(value)[:80]}")
    if value.has(sp.I) or value.is_extended_real is False:
        raise ValueError(f"{name}: expected a real expression (a gap of real quantities), got {sp.sstr(value)[:80]}")
    ops = sp.count_ops(value)
    if ops > MAX_EXPRESSION_OPS:
        raise ValueError(
            f"{name}: expected an expression of at most {MAX_EXPRESSION_OPS} operations (a rule "
            f"simplifies it, and simplification grows with its size), got {ops}"
        )
    return value


#: Largest size (``sympy.count_ops``) of an expression a rule decides from: a rule simplifies it, which takes
#: about a second at 650 operations and grows with the size; the chapters' gaps have at most about 50.
MAX_EXPRESSION_OPS = 1000


def record(value, name: str) -> Verdict:
    """``value`` if it is a :class:`Verdict` record, else ``ValueError`` naming ``name``."""
    if not isinstance(value, Verdict):
        raise ValueError(f"{name}: expected a Verdict record, got {type(value).__name__}")
    return value


def statistics(values, name: str) -> tuple:
    """A possibly empty sequence of :class:`Statistic` records (further numbers a record reports), as a tuple."""
    items = None if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__") else tuple(values)
    if items is None or not all(isinstance(s, Statistic) for s in items):
        raise ValueError(f"{name}: expected a sequence of Statistic records, got {brief(values)}")
    return items


def premise_list(values, name: str) -> tuple:
    """A possibly empty sequence of :class:`mhanw.infra.premises.Premise` records, each id once
    (:func:`mhanw.infra.premises.premises`), as a tuple."""
    return _premises.premises(values, name)


def search(value, name: str) -> Search:
    """``value`` if it is a :class:`Search` record (the budget and convergence of a search), else ``ValueError``."""
    if not isinstance(value, Search):
        raise ValueError(f"{name}: expected a Search record, got {type(value).__name__}")
    return value


def labelled_estimates(values, name: str) -> list:
    """A non-empty sequence of ``(label, value, standard error)`` triples (one per setting), as a list of
    ``(str, float, float)``; a malformed triple raises ``ValueError`` naming ``name[i]``."""
    items = None if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__") else list(values)
    if not items:
        raise ValueError(f"{name}: expected a non-empty list of (label, value, standard error), got {brief(values)}")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, (str, bytes, Mapping)) or not hasattr(item, "__len__") or len(item) != 3:
            raise ValueError(f"{name}[{i}]: expected (label, value, standard error), got {brief(item)}")
        label = item[0]
        if isinstance(label, (bool, np.bool_)) or not isinstance(label, (str, int, float, np.integer, np.floating)):
            raise ValueError(f"{name}[{i}][0]: expected a label (a string or a number), got {brief(label)}")
        out.append((label, *estimate(item[1:], f"{name}[{i}]")))
    return out


def optional(check: Callable) -> Callable:
    """The check ``check`` that also accepts ``None`` (an argument that may be left out)."""

    def optional_check(value, name):
        return None if value is None else check(value, name)

    optional_check.__name__ = f"optional({getattr(check, '__name__', 'check')})"
    return optional_check


def mapping_of(check: Callable, *, allow_empty: bool = False, keys: Callable | None = None) -> Callable:
    """A check of a mapping (non-empty unless ``allow_empty``) whose every value passes ``check``
    (named ``name[key]``) and, with ``keys``, whose every key passes ``keys`` (named ``name (key ...)``)."""

    def mapping_check(values, name):
        if allow_empty and isinstance(values, Mapping) and not values:
            return {}
        items = _mapping(values, name).items()
        if keys is not None:
            for k, _ in items:
                keys(k, f"{name} (key {brief(k)})")
        return {k: check(v, f"{name}[{k!r}]") for k, v in items}

    key_name = "" if keys is None else f", keys={getattr(keys, '__name__', 'check')}"
    mapping_check.__name__ = f"mapping_of({getattr(check, '__name__', 'check')}{key_name})"
    return mapping_check


def named(check: Callable) -> Callable:
    """A check of a non-empty mapping from names (non-empty strings: a head kind, a regression function, a
    null) to values that pass ``check``: a rule prints its keys in its criterion and statistics, so a key
    that is not text would reach ``str.join`` or a label as a bare ``TypeError``."""
    named_check = mapping_of(check, keys=text)
    named_check.__name__ = f"named({getattr(check, '__name__', 'check')})"
    return named_check


def instance(cls, what: str) -> Callable:
    """A check that the value is an instance of ``cls`` (described as ``what`` in the message)."""

    def instance_check(value, name):
        if not isinstance(value, cls):
            raise ValueError(f"{name}: expected {what}, got {type(value).__name__}")
        return value

    instance_check.__name__ = f"instance({cls.__name__})"
    return instance_check


#: A non-empty mapping of bools (named conditions, each verified), :func:`mapping_of` :func:`flag`.
flag_map = mapping_of(flag)
#: A non-empty mapping of non-empty arrays of finite numbers (e.g. z-scores per null).
numbers_map = mapping_of(numbers)


def _magnitudes(value) -> list:
    """The absolute values of the finite nonzero numbers in ``value`` (a number, an array, a pair, a mapping)."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        return []
    if isinstance(value, Mapping):
        return [m for v in value.values() for m in _magnitudes(v)]
    if isinstance(value, (list, tuple)):
        return [m for v in value for m in _magnitudes(v)]
    if isinstance(value, Statistic):
        return _magnitudes((value.value, value.se))
    try:
        arr = np.abs(np.asarray(value, dtype=float)).ravel()
    except (TypeError, ValueError, OverflowError):
        return []
    return [float(v) for v in arr if np.isfinite(v) and v > 0]


def _numeric_parts(name: str, value) -> list:
    """``[(name, value)]``, or for a :class:`Statistic` its value and its s.e. apart (``effect.se``), so that
    a message names the number that is out of range."""
    if isinstance(value, Statistic):
        return [(f"{name}.value", value.value), (f"{name}.se", value.se)]
    return [(name, value)]


def _blame(arguments: Mapping, exc: Exception) -> str:
    """The message of a record that could not be built from finite arguments: it names the arguments of
    extreme magnitude (beyond 1e150 or below 1e-150), or every numeric argument if none is extreme, and
    ends with the first message of the number that was not finite (:attr:`StatisticError.root`)."""
    parts = [p for a, v in arguments.items() for p in _numeric_parts(a, v)]
    mags = {a: _magnitudes(v) for a, v in parts}
    values = dict(parts)
    extreme = [a for a, m in mags.items() if m and (max(m) > 1e150 or min(m) < 1e-150)]
    named_ = extreme or [a for a, m in mags.items() if m]
    shown = "; ".join(f"{a} = {brief(values[a])}" for a in named_)
    root = getattr(exc, "root", str(exc))
    return f"{', '.join(named_) or 'arguments'}: these values give a deciding number beyond a double ({shown}): {root}"


def _not_finite(value) -> bool:
    """Whether ``value`` is a float, a float array or a pair holding NaN or inf: what a rule computes from
    finite arguments when a product or a sum leaves the range of a double (``3 * 1e308``)."""
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" and not bool(np.all(np.isfinite(value)))
    if isinstance(value, (list, tuple)):
        return any(_not_finite(v) for v in value)
    return False


def _claim_source(arguments: Mapping, exc: ClaimIdError) -> ClaimIdError:
    """The error of a malformed claim id, addressed to the rule's text arguments the id was made from (a
    label, a rule, a slug: those that appear in it and are no part of an id themselves), else ``exc``."""
    claim = exc.claim
    if not isinstance(claim, str):
        return exc
    found = [
        a
        for a, v in arguments.items()
        if isinstance(v, str) and v.strip() and v in claim and not _CLAIM_ID.fullmatch(v)
    ]
    if not found or found == ["claim"]:
        return exc
    shown = "; ".join(f"{a} = {brief(arguments[a])}" for a in found)
    return ClaimIdError(
        f"{', '.join(found)}: expected lower-case words of letters and digits joined by '-' or '.' "
        f"(it makes the claim id {brief(claim)}), got {shown}",
        claim,
    )


def checked(**checks: Callable) -> Callable:
    """Decorate a verdict rule so that every argument is checked before it decides.

    ``checks``: ``argument name -> check(value, name)`` (:func:`number`,
    :func:`standard_error`, :func:`numbers`, :func:`text`, ...), one for *every*
    argument of the rule: a rule that forgets one raises ``TypeError`` when it is
    defined, so no argument reaches a decision unchecked.  A rule fed NaN, inf, a
    negative standard error, empty input, a string for a number or a number for
    a label then raises ``ValueError`` naming the argument, instead of returning
    a verdict decided by comparisons that NaN makes false (or by the truth of a
    non-empty string).  The rule receives its arguments unchanged, except that an
    iterator (a generator of verdicts) is read once into a list, which both the
    check and the rule then read; the checks are kept as ``rule.checks`` (read-only).

    The errors of what the rule builds name the rule's arguments, not the names inside: a deciding number
    that is not a double (:class:`StatisticError`, also a NaN or inf that the rule passes to another
    checked rule, e.g. ``power_verdict(v, 3 * se, tol)`` with ``se = 1e308``) names the arguments of
    extreme magnitude (``se``, or ``effect.se`` of a :class:`Statistic`); a malformed claim id
    (:class:`ClaimIdError`) names the text argument it was made from (``label``, ``slug``); a "holds only under
    added conditions" without premises (:class:`ConditionsError`) names ``premises``.  Each is re-raised
    as its own class, so that a rule called by a rule is re-addressed to the outer rule's arguments.
    """

    def wrap(rule):
        sig = inspect.signature(rule)
        unknown = sorted(set(checks) - set(sig.parameters))
        if unknown:
            raise TypeError(f"checks: {rule.__name__} has no argument(s) {unknown}")
        unchecked = [p for p in sig.parameters if p not in checks]
        if unchecked:
            raise TypeError(f"checks: {rule.__name__} does not check its argument(s) {unchecked}")
        for arg, check in checks.items():
            if not callable(check):
                raise TypeError(f"checks: the check of {arg!r} of {rule.__name__} is not callable")

        @functools.wraps(rule)
        def inner(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:  # a missing or unexpected argument: say which rule
                raise TypeError(f"{rule.__name__}: {exc}") from None
            bound.apply_defaults()
            arguments = bound.arguments
            for arg, value in arguments.items():
                if isinstance(value, Iterator):  # read once: the check would leave the rule an empty iterator
                    arguments[arg] = list(value)
            for arg, check in checks.items():
                try:
                    check(arguments[arg], arg)
                except StatisticError:
                    raise
                except ValueError as exc:
                    if _not_finite(arguments[arg]):  # possibly a number its calling rule computed: re-addressable
                        raise StatisticError(str(exc)) from None
                    raise
            try:
                return rule(*bound.args, **bound.kwargs)
            except StatisticError as exc:  # finite arguments whose result is not: name the arguments
                raise StatisticError(_blame(arguments, exc), root=exc.root) from None
            except ClaimIdError as exc:
                raise _claim_source(arguments, exc) from None
            except ConditionsError:
                if "premises" not in arguments or "conditions" in arguments:
                    raise
                raise ConditionsError(
                    f"premises: a verdict {HOLDS_UNDER!r} states its premises as its conditions, "
                    f"and none were given (got {brief(arguments['premises'])})"
                ) from None

        inner.checks = MappingProxyType(dict(checks))
        return inner

    return wrap


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Statistic:
    """A deciding number: its value and standard error (``nan`` when exact).

    ``value`` must be a finite real number and ``se`` NaN (exact) or a finite
    number >= 0: a verdict decided from a NaN or infinite statistic would be a
    wrong result, and JSON could not hold it.
    """

    name: str
    value: float
    se: float = math.nan
    unit: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name: expected a non-empty string naming the statistic, got {brief(self.name)}")
        if not isinstance(self.unit, str):
            raise ValueError(f"unit: expected a string, got {brief(self.unit)} (statistic {self.name!r})")
        try:
            number(self.value, "value")
            se = self.se
            if not (isinstance(se, (float, np.floating)) and math.isnan(se)):
                standard_error(se, "se")
        except ValueError as exc:
            raise StatisticError(f"{exc} (statistic {self.name!r})") from None

    def to_dict(self) -> dict:
        out = {"name": self.name, "value": _plain(self.value), "se": _plain(self.se)}
        if self.unit:
            out["unit"] = self.unit
        return out


def stat(name: str, value, se=math.nan, unit: str = "") -> Statistic:
    """A checked :class:`Statistic` with ``value`` and ``se`` as plain floats (numpy scalars and 0-d
    arrays converted): the one constructor the chapters' rules use."""
    checked_stat = Statistic(name, value, se, unit)
    return Statistic(checked_stat.name, float(np.asarray(value)), float(np.asarray(se)), unit)


def _plain(x: float):
    x = float(x)
    return x if math.isfinite(x) else None


def _optional_number(value, name: str):
    """``None``, or ``value`` as a finite float >= 0 (a tolerance, a detectable size)."""
    if value is None:
        return None
    try:
        return float(standard_error(value, name))
    except ValueError as exc:
        raise StatisticError(str(exc)) from None


@dataclass(frozen=True)
class Search:
    """What a search or an optimisation did, for a claim that rests on its result.

    ``what``: what was searched (``"IMSE descent over free heads"``); ``starts``: the starts in all,
    of which ``known_starts`` at the known candidate (e.g. the orthogonal heads) and
    ``perturbed_starts`` at perturbations of it (the rest are random); ``steps``: the step budget of
    each start; ``best``: the best objective value found (lower is better); ``known``: the known
    candidate's value on the same objective (the same batch); ``unit``: their unit; ``slack``:
    rounding allowed when comparing them (default 0).

    The search *reached* the known candidate when ``best <= known + slack``: a claim may rest on the
    optimum only then (a descent that starts at the known candidate reaches it by construction).
    """

    what: str
    starts: int
    known_starts: int
    perturbed_starts: int
    steps: int
    best: float
    known: float
    unit: str = ""
    slack: float = 0.0

    def __post_init__(self):
        text(self.what, "what")
        for name in ("starts", "known_starts", "perturbed_starts", "steps"):
            object.__setattr__(self, name, count(getattr(self, name), name))
        if self.starts < 1:
            raise ValueError(f"starts: expected at least one start, got {self.starts}")
        if self.known_starts + self.perturbed_starts > self.starts:
            raise ValueError(
                f"starts: {self.known_starts} known and {self.perturbed_starts} perturbed starts "
                f"exceed the {self.starts} starts"
            )
        object.__setattr__(self, "best", number(self.best, "best"))
        object.__setattr__(self, "known", number(self.known, "known"))
        object.__setattr__(self, "slack", nonnegative(self.slack, "slack"))
        note(self.unit, "unit")

    @property
    def reached(self) -> bool:
        """Whether the best value found is at least as good as the known candidate's (within ``slack``)."""
        return self.best <= self.known + self.slack

    @property
    def random_starts(self) -> int:
        return self.starts - self.known_starts - self.perturbed_starts

    def text(self) -> str:
        """The budget and the convergence in words (plain text)."""
        parts = [
            f"{k} {w}"
            for k, w in (
                (self.known_starts, "at the known configuration"),
                (self.perturbed_starts, "at perturbations of it"),
                (self.random_starts, "random"),
            )
            if k
        ]
        unit = f" {self.unit}" if self.unit else ""
        gap = "" if self.known == 0 else f", {100 * (self.best - self.known) / abs(self.known):+.1f} %"
        outcome = "it reached the known configuration" if self.reached else "it did not reach the known configuration"
        return (
            f"{self.what}: {self.starts} start{'s' if self.starts != 1 else ''} ({', '.join(parts)}), "
            f"{self.steps} steps each; best {_fmt(self.best)}{unit} against the known configuration's "
            f"{_fmt(self.known)}{unit}{gap}: {outcome}"
        )

    def to_dict(self) -> dict:
        return {
            "what": self.what,
            "starts": self.starts,
            "known_starts": self.known_starts,
            "perturbed_starts": self.perturbed_starts,
            "steps": self.steps,
            "best": self.best,
            "known": self.known,
            "unit": self.unit,
            "slack": self.slack,
            "reached": self.reached,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Search:
        if not isinstance(d, Mapping):
            raise ValueError(f"search: expected a mapping, got {brief(d)}")
        keys = ("what", "starts", "known_starts", "perturbed_starts", "steps", "best", "known")
        missing = [k for k in keys if k not in d]
        if missing:
            raise ValueError(f"search: the record has no {', '.join(missing)}")
        return cls(*(d[k] for k in keys), unit=d.get("unit", ""), slack=d.get("slack", 0.0))


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim, with what decided it and what it rests on.

    ``claim``: a stable id such as ``"lemma-4.1/printed-bound"`` (lower case,
    ``/`` separating a claim from its parts); ``statement``: the sentence checked;
    ``verdict``: one of :data:`VOCABULARY`; ``criterion``: the rule in words (the
    rule the code applies, with its thresholds); ``statistics``: the deciding
    numbers, the deciding one first; ``detectable``: the smallest violation the
    run could have detected, in ``unit`` (required for a holds from a
    non-detection); ``tolerance``: the size of violation that matters for the
    claim, in ``unit``; ``chapter`` and ``section``: where the claim is checked
    and reported; ``conditions``: the conditions the companion adds, under which a
    "holds only under added conditions" holds (its premises' sentences when left empty).

    ``premises``: the :class:`~mhanw.infra.premises.Premise` records the prediction
    rests on (:mod:`mhanw.premises`).  **When one fails, the constructor converts**
    the rule's decision (``verdict``) into :data:`OUTSIDE` and keeps it as
    ``shows``, with the statistics; ``shows`` is empty otherwise.  ``finding``: one
    sentence of what the numbers show, with its number (the abstract's words);
    ``role``: one of :data:`ROLES` (:data:`NO_ROLE` only for a legacy chapter's record); ``search``: the
    :class:`Search` a claim on an optimum rests on; ``deciding``: the statistic that triggered the
    verdict (:func:`deciding_entry`: its ``path``/name, ``value``, ``se``, ``z`` -- its distance from the
    ``threshold`` in s.e., positive on the side the verdict went -- and ``threshold``), or ``None``;
    ``correction``: the multiple-testing correction applied when the chapter closed (Holm's, within the
    claim: :func:`mhanw.infra.rules.holm`), or ``None``.

    Refused (``ValueError`` naming the field): a holds whose ``detectable`` exceeds
    its ``tolerance``, and a holds on a ``search`` that did not reach the known
    candidate -- the rule must say "undecided at this size" (:func:`power_verdict`,
    :func:`search_verdict`).
    """

    claim: str
    statement: str
    verdict: str
    criterion: str
    statistics: tuple = ()
    detectable: float | None = None
    chapter: str = ""
    section: str = ""
    conditions: str = ""
    premises: tuple = ()
    shows: str = ""
    finding: str = ""
    tolerance: float | None = None
    unit: str = ""
    role: str = NO_ROLE
    search: Search | None = None
    deciding: Mapping | None = None
    correction: Mapping | None = None

    def __post_init__(self):
        if not isinstance(self.claim, str) or not _CLAIM_ID.fullmatch(self.claim):
            raise ClaimIdError(
                f"claim: expected an id like 'thm-4.2/equal-hdi' (lower-case words of letters and "
                f"digits joined by '-' or '.', parts separated by '/'), got {brief(self.claim)}",
                self.claim,
            )
        verdict_word(self.verdict, "verdict")
        for name in ("statement", "criterion"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name}: expected a non-empty sentence, got {brief(getattr(self, name))}")
        for name in ("chapter", "section", "conditions", "shows", "finding", "unit"):
            note(getattr(self, name), name)
        object.__setattr__(self, "statistics", statistics(self.statistics, "statistics"))
        object.__setattr__(self, "detectable", _optional_number(self.detectable, "detectable"))
        object.__setattr__(self, "tolerance", _optional_number(self.tolerance, "tolerance"))
        verdict_word(self.role, "role", (*ROLES, NO_ROLE))
        for name in ("deciding", "correction"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Mapping):
                raise ValueError(f"{name}: expected a mapping or None, got {brief(value)}")
            if value is not None:
                object.__setattr__(self, name, MappingProxyType(dict(value)))
        if self.search is not None and not isinstance(self.search, Search):
            raise ValueError(f"search: expected a Search record, got {type(self.search).__name__}")
        prem = _premises.premises(self.premises, "premises")
        object.__setattr__(self, "premises", prem)
        self._apply_premises(prem)
        decision = self.decision
        if decision in (HOLDS, HOLDS_UNDER):
            self._check_power()
        if self.verdict == HOLDS_UNDER and not self.conditions.strip():
            if not prem:
                raise ConditionsError(
                    f"conditions: a verdict {HOLDS_UNDER!r} must state them (or rest on premises; none were given)"
                )
            object.__setattr__(self, "conditions", _premises.conditions_text(prem))

    def _apply_premises(self, prem: tuple) -> None:
        failed = _premises.failed(prem)
        if self.verdict == OUTSIDE:
            if not failed:
                raise ValueError(f"verdict: {OUTSIDE!r} needs a premise that fails (claim {self.claim!r})")
            if self.shows not in DECISIONS:
                raise ValueError(
                    f"shows: an {OUTSIDE!r} record keeps the rule's decision on the numbers, one of "
                    f"{DECISIONS}, got {brief(self.shows)}"
                )
            object.__setattr__(self, "conditions", "")
            return
        if self.shows:
            raise ValueError(f"shows: only an {OUTSIDE!r} record has one (verdict {self.verdict!r})")
        if failed and self.verdict in DECISIONS:  # the conversion: the decision is kept as what it shows
            object.__setattr__(self, "shows", self.verdict)
            object.__setattr__(self, "verdict", OUTSIDE)
            object.__setattr__(self, "conditions", "")

    def _check_power(self) -> None:
        if self.detectable is not None and self.tolerance is not None and self.detectable > self.tolerance:
            raise ValueError(
                f"detectable: claim {self.claim!r} says {self.decision!r} from a non-detection, but the run could "
                f"only detect a violation of {_fmt(self.detectable)}{_unit(self.unit)}, above the tolerance "
                f"{_fmt(self.tolerance)}{_unit(self.unit)} that matters: its rule must say {UNDECIDED!r} "
                "(power_verdict)"
            )
        if self.search is not None and not self.search.reached:
            raise ValueError(
                f"search: claim {self.claim!r} says {self.decision!r} from a search that did not reach "
                f"the known configuration ({self.search.text()}): its rule must say {UNDECIDED!r} "
                "(search_verdict)"
            )

    @property
    def decision(self) -> str:
        """The rule's decision on the numbers: ``shows`` for an "outside its conditions" record, else the verdict."""
        return self.shows if self.verdict == OUTSIDE else self.verdict

    @property
    def holds(self) -> bool:
        return self.verdict in (HOLDS, HOLDS_UNDER)

    @property
    def fails(self) -> bool:
        return self.verdict == FAILS

    @property
    def outside(self) -> bool:
        return self.verdict == OUTSIDE

    @property
    def failed_premises(self) -> tuple:
        return _premises.failed(self.premises)

    def to_dict(self) -> dict:
        return {
            "claim": self.claim,
            "chapter": self.chapter,
            "section": self.section,
            "statement": self.statement,
            "verdict": self.verdict,
            "shows": self.shows,
            "conditions": self.conditions,
            "criterion": self.criterion,
            "statistics": [s.to_dict() for s in self.statistics],
            "detectable": None if self.detectable is None else _plain(self.detectable),
            "tolerance": None if self.tolerance is None else _plain(self.tolerance),
            "unit": self.unit,
            "premises": [p.to_dict() for p in self.premises],
            "finding": self.finding,
            "role": self.role,
            "search": None if self.search is None else self.search.to_dict(),
            "deciding": None if self.deciding is None else dict(self.deciding),
            "correction": None if self.correction is None else dict(self.correction),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Verdict:
        """The record :meth:`to_dict` wrote; a malformed one raises ``ValueError`` naming ``d`` and the claim."""
        if not isinstance(d, Mapping):
            raise ValueError(f"d: expected a verdict record (a mapping), got {type(d).__name__}")
        missing = [k for k in ("claim", "statement", "verdict", "criterion") if k not in d]
        if missing:
            raise ValueError(f"d: the record of claim {d.get('claim')!r} has no {', '.join(missing)}")
        try:
            raw = d.get("statistics") or ()
            if not isinstance(raw, (list, tuple)):
                raise ValueError(f"statistics: expected a list, got {type(raw).__name__}")
            stats = []
            for i, s in enumerate(raw):
                if not isinstance(s, Mapping) or "name" not in s or "value" not in s:
                    raise ValueError(f"statistics[{i}]: expected a mapping with 'name' and 'value', got {brief(s)}")
                stats.append(
                    Statistic(s["name"], s["value"], math.nan if s.get("se") is None else s["se"], s.get("unit", ""))
                )
            raw_prem = d.get("premises") or ()
            if not isinstance(raw_prem, (list, tuple)):
                raise ValueError(f"premises: expected a list, got {type(raw_prem).__name__}")
            prem = tuple(Premise.from_dict(p) for p in raw_prem)
            found = d.get("search")
            return cls(
                claim=d["claim"],
                statement=d["statement"],
                verdict=d["verdict"],
                criterion=d["criterion"],
                statistics=tuple(stats),
                detectable=d.get("detectable"),
                chapter=d.get("chapter", ""),
                section=d.get("section", ""),
                conditions=d.get("conditions", "") or "",
                premises=prem,
                shows=d.get("shows", "") or "",
                finding=d.get("finding", "") or "",
                tolerance=d.get("tolerance"),
                unit=d.get("unit", "") or "",
                role=d.get("role") or NO_ROLE,
                search=None if found is None else Search.from_dict(found),
                deciding=d.get("deciding"),
                correction=d.get("correction"),
            )
        except ValueError as exc:
            raise ValueError(f"d: the record of claim {d.get('claim')!r}: {exc}") from None


def _unit(unit: str) -> str:
    return "" if not unit else (unit if unit.startswith("%") else f" {unit}")


def predicate(verdict: str, plural: bool = False) -> str:
    """A verdict as the predicate of a sentence: ``"it " + predicate(v)`` reads under every verdict
    (``holds``, ``fails as stated``, ``is undecided at this size``, ``lies outside its conditions``,
    ``is not checkable``); ``plural``: for a plural subject (``are undecided at this size``)."""
    verdict_word(verdict, "verdict")
    flag(plural, "plural")
    return PREDICATES[verdict][1 if plural else 0]


def verdict_key(verdict: str) -> str:
    """A verdict's direction, for prose that depends on it (``\\byverdict`` in the paper): ``"holds"``
    (every form of holds), ``"fails"`` or ``"other"`` (undecided, outside its conditions, not checkable)."""
    verdict_word(verdict, "verdict")
    return "holds" if verdict in (HOLDS, HOLDS_UNDER) else "fails" if verdict == FAILS else "other"


@checked(paper=verdict_word, other=verdict_word)
def compatible(paper: str, other: str) -> bool:
    """Whether verdict ``other`` (another seed or size) agrees with ``paper``: equal,
    ``"undecided at this size"``, or both a form of "holds"; never the opposite one.  Compare the
    ``shows`` of two "outside its conditions" records the same way (what their numbers show)."""
    return other == paper or other == UNDECIDED or {paper, other} <= {HOLDS, HOLDS_UNDER}


# --------------------------------------------------------------------------- rules


def _finite_result(value: float, name: str) -> float:
    """``value`` if it is a finite double, else :class:`StatisticError` (a rule's own number overflowed:
    :func:`checked` names the arguments that produced it)."""
    if not math.isfinite(value):
        raise StatisticError(f"{name}: expected a finite number, got {value!r}")
    return value


@checked(effect=number, se=standard_error, tolerance=standard_error, n_se=standard_error)
def no_violation(effect: float, se: float, tolerance: float, *, n_se: float = N_SE) -> tuple[str, float]:
    """Verdict on "this effect is (practically) zero", within the equivalence margin ``tolerance``, and the
    detectable violation.

    ``effect`` is an estimated violation (e.g. a deviation from a predicted value) with standard error
    ``se``; ``tolerance`` is the size of violation that would matter.  The rule is symmetric around the
    margin: the interval ``|effect| +- n_se * se`` decides,

    - ``|effect| + n_se * se <= tolerance``: ``"holds"`` (the whole interval inside the margin);
    - ``|effect| - n_se * se > tolerance``: ``"fails as stated"`` (the whole interval outside it);
    - otherwise ``"undecided at this size"`` (the interval straddles the margin).

    Returns ``(verdict, detectable)`` with ``detectable = n_se * se``.
    """
    e, s, tol, k = float(effect), float(se), float(tolerance), float(n_se)
    detectable = _finite_result(k * s, "detectable (n_se * se)")
    if abs(e) - detectable > tol:
        return FAILS, detectable
    if abs(e) + detectable <= tol:
        return HOLDS, detectable
    return UNDECIDED, detectable


def no_violation_criterion(tolerance: float, *, unit: str = "", n_se: float = N_SE) -> str:
    """The words of the rule :func:`no_violation` applies with ``tolerance`` (in ``unit``): what the record's
    criterion must say, so that the printed criterion is the rule the code applies."""
    tol = standard_error(tolerance, "tolerance")
    k = standard_error(n_se, "n_se")
    t = f"{_fmt(tol)}{_unit(note(unit, 'unit'))}"
    return (
        f"holds when |effect| + {k:g} s.e. <= {t} (the interval inside the margin), fails when "
        f"|effect| - {k:g} s.e. > {t} (the interval outside it), undecided otherwise"
    )


def deciding_entry(name: str, value: float, se: float | None, threshold: float, z: float | None) -> dict:
    """The statistic that triggered a verdict, as a record stores it (``Verdict.deciding``): ``path`` (its
    name or dotted path), ``value``, ``se`` (``None`` when exact), ``threshold`` (the number the rule
    compared it with) and ``z``, the distance ``|value - threshold| / se`` on the side the verdict went
    (``None`` for an exact number: no sampling error, no multiple-testing correction)."""
    se = None if se is None or not math.isfinite(float(se)) else float(se)
    z = None if z is None or not math.isfinite(float(z)) else float(z)
    return {"path": str(name), "value": float(value), "se": se, "z": z, "threshold": float(threshold)}


def _measured(value, name: str) -> Statistic:
    """``value`` if it is a :class:`Statistic` with a standard error (not an exact number, whose s.e. is NaN)."""
    if not isinstance(value, Statistic):
        raise ValueError(f"{name}: expected a Statistic, got {type(value).__name__}")
    if math.isnan(value.se):
        raise ValueError(
            f"{name}: expected a Statistic with a standard error (the rule decides from it), got {brief(value)}"
        )
    return value


#: The fields of a record :func:`no_violation_record` fills itself (from the rule and the statistic).
_RULE_FIELDS = ("verdict", "statistics", "detectable", "tolerance", "unit")


def _record_fields(values, name: str) -> dict:
    """The further fields of a record (``claim``, ``statement``, ``criterion``, ``premises``...): names of
    :class:`Verdict` fields other than those the rule fills; each value is checked by the record."""
    fields = {f.name for f in Verdict.__dataclass_fields__.values()} - set(_RULE_FIELDS)
    for k in values:
        if k not in fields:
            why = "the rule fills it" if k in _RULE_FIELDS else "not a field of a verdict record"
            raise TypeError(f"{k}: no_violation_record takes the record's fields {sorted(fields)}, not {k!r} ({why})")
    return values


@checked(effect=_measured, tolerance=standard_error, n_se=standard_error, extra=statistics, fields=_record_fields)
def no_violation_record(
    effect: Statistic, tolerance: float, *, n_se: float = N_SE, extra: tuple = (), **fields
) -> Verdict:
    """The record of a claim decided by :func:`no_violation` on the statistic ``effect`` (its value and s.e.).

    ``fields``: the record's ``claim``, ``statement``, ``criterion`` (what the effect is; the rule's
    words, :func:`no_violation_criterion`, are appended), ``section``, ``premises``...;
    ``extra``: further statistics, reported after ``effect``.  The record carries the tolerance and
    the detectable size ``n_se * se``, both in the unit of ``effect``.
    """
    verdict, detectable = no_violation(effect.value, effect.se, tolerance, n_se=n_se)
    what = fields.pop("criterion", "")
    rule = no_violation_criterion(tolerance, unit=effect.unit, n_se=n_se)
    return Verdict(
        verdict=verdict,
        statistics=(effect, *extra),
        detectable=detectable,
        tolerance=float(tolerance),
        unit=effect.unit,
        criterion=f"{what}: {rule}" if what else rule,
        **fields,
    )


@checked(verdict=verdict_word, detectable=standard_error, tolerance=standard_error)
def power_verdict(verdict: str, detectable: float, tolerance: float) -> str:
    """``verdict``, or "undecided at this size" when it is a holds from a non-detection whose detectable
    size exceeds the tolerance that matters (the power rule every holds obeys)."""
    det, tol = float(detectable), float(tolerance)
    return UNDECIDED if verdict in (HOLDS, HOLDS_UNDER) and det > tol else verdict


@checked(verdict=verdict_word, found=search)
def search_verdict(verdict: str, found: Search) -> str:
    """``verdict``, or "undecided at this size" when it is a holds resting on a search that did not reach
    the known configuration (:attr:`Search.reached`)."""
    return UNDECIDED if verdict in (HOLDS, HOLDS_UNDER) and not found.reached else verdict


def _sign(value, name: str) -> int:
    """``value`` if it is +1 or -1 (an int, not a bool), else ``ValueError`` naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value not in (1, -1):
        raise ValueError(f"{name}: expected +1 or -1, got {brief(value)}")
    return int(value)


@checked(effect=number, se=standard_error, sign=_sign, n_se=standard_error)
def significant_effect(effect: float, se: float, *, sign: int = 1, n_se: float = N_SE) -> str:
    """Verdict on "the effect has sign ``sign``" (+1: positive, -1: negative).

    ``"holds"`` when ``sign * effect > n_se * se``; ``"fails as stated"`` when the
    effect is ``n_se`` s.e. on the other side; ``"undecided at this size"`` otherwise.
    """
    e, s, k, sign = float(effect), float(se), float(n_se), int(sign)
    if sign * e > k * s:
        return HOLDS
    if -sign * e > k * s:
        return FAILS
    return UNDECIDED


@checked(effect=number, se=standard_error, positive=text, negative=text, neither=text, n_se=standard_error)
def direction_words(effect: float, se: float, *, positive: str, negative: str, neither: str, n_se: float = N_SE) -> str:
    """Words for the sign of an effect, decided as :func:`significant_effect` decides it.

    ``positive`` when ``effect > n_se * se``, ``negative`` when ``effect < -n_se * se``,
    ``neither`` otherwise: a sentence built from them says what the numbers resolve,
    under any assumption a reader runs the chapter with (e.g. ``positive="below"``,
    ``negative="above"``, ``neither="indistinguishable from"`` for MSE(0) - MSE(90)).
    """
    return {HOLDS: positive, FAILS: negative}.get(significant_effect(effect, se, n_se=n_se), neither)


def _verdict_list(values, name: str) -> list:
    """A non-empty sequence of verdicts of :data:`VOCABULARY` (:func:`verdict_word`), as a list."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: expected a list of verdicts, got {type(values).__name__} {brief(values)}")
    items = list(values)
    if not items:
        raise ValueError(f"{name}: expected at least one verdict")
    return [verdict_word(v, name) for v in items]


@checked(verdicts=_verdict_list)
def combine(verdicts) -> str:
    """One verdict for a claim checked at several settings: fails if any fails, holds if all hold,
    outside its conditions if all are, undecided otherwise (also when some setting is not checkable
    or outside its conditions: the claim was not seen to hold at that setting).  A record given the
    combined :data:`OUTSIDE` needs the failed premises of its parts."""
    verdicts = list(verdicts)
    if FAILS in verdicts:
        return FAILS
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    if all(v == OUTSIDE for v in verdicts):
        return OUTSIDE
    return UNDECIDED


@checked(error=standard_error, tolerance=standard_error)
def within_tolerance(error: float, tolerance: float) -> tuple[str, float | None]:
    """An exact check: ``"holds"`` when the error (>= 0, e.g. a largest rounding difference) is at most
    ``tolerance``, else ``"fails as stated"``.  Returns ``(verdict, detectable)``, ``detectable =
    tolerance`` when it holds, else ``None``."""
    err, tol = float(error), float(tolerance)
    return (HOLDS, tol) if err <= tol else (FAILS, None)


def guard(condition: bool, text_says: str, numbers_say: str) -> None:
    """Stop when a sentence's condition is false: ``the text says X; the numbers say Y``."""
    if not isinstance(condition, (bool, np.bool_)):
        raise ValueError(f"condition: expected a bool, got {type(condition).__name__}")
    if not condition:
        raise VerdictGuardError(f"the text says {text_says}; the numbers say {numbers_say}")


# --------------------------------------------------------------------------- ledger


@dataclass
class Ledger:
    """The verdict records of one chapter, in the order they were decided.

    A record is checked when it is built (:class:`Verdict`: a failed premise is already converted to
    "outside its conditions", a holds without power or on an unconverged search already refused), so
    no ledger can hold a "holds" or a "fails" whose premise fails."""

    chapter: str
    records: list = field(default_factory=list)

    def add(self, record: Verdict) -> Verdict:
        if not isinstance(record, Verdict):
            raise ValueError(f"record: expected a Verdict, got {type(record).__name__}")
        if any(r.claim == record.claim for r in self.records):
            raise ValueError(f"record: claim {record.claim!r} is already in the ledger of {self.chapter}")
        if not record.chapter:
            record = Verdict(**{**record.__dict__, "chapter": self.chapter})
        self.records.append(record)
        return record

    def __getitem__(self, claim: str) -> Verdict:
        for r in self.records:
            if r.claim == claim:
                return r
        raise KeyError(f"claim: no record {claim!r} in the ledger of {self.chapter}")

    def __iter__(self):
        return iter(self.records)

    def __len__(self):
        return len(self.records)

    def to_list(self) -> list[dict]:
        return [r.to_dict() for r in self.records]

    def write(self, path) -> Path:
        """Write the records as JSON (atomically)."""
        return write_atomic(path, json.dumps(self.to_list(), indent=1, ensure_ascii=False) + "\n")


def load_records(path) -> list[Verdict]:
    """Read the records a :class:`Ledger` wrote, or the ``claims`` of a chapter's results JSON."""
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise ValueError(f"path: expected the path of a JSON file, got {type(path).__name__} {brief(path)}")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"path: {path} is not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"path: {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:  # missing, a directory, unreadable
        raise ValueError(
            f"path: cannot read {path} as a file of records ({exc.strerror or type(exc).__name__})"
        ) from None
    if isinstance(data, dict) and "claims" in data:
        data = data["claims"]
    if not isinstance(data, list):
        raise ValueError(f"path: {path} holds neither a list of verdict records nor results with 'claims'")
    out = []
    for i, d in enumerate(data):
        try:
            out.append(Verdict.from_dict(d))
        except ValueError as exc:
            raise ValueError(f"path: {path}, record {i}: {exc}") from None
    return out


def gather(paths: Iterable) -> list[dict]:
    """The records of several chapters, in chapter order, as plain dicts (``build/claims.json``)."""
    out = []
    for p in sorted(Path(x) for x in paths):
        out.extend(r.to_dict() for r in load_records(p))
    claims = [r["claim"] for r in out]
    dup = sorted({c for c in claims if claims.count(c) > 1})
    if dup:
        raise ValueError(f"paths: claim ids appear in more than one record: {dup}")
    return out


# --------------------------------------------------------------------------- rendering


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        if abs(x) >= 10 ** (digits - 1):
            return f"{x:.0f}"
        return f"{x:#.{digits}g}".rstrip(".")
    return f"{x:.{digits - 1}e}"


def statistic_text(s: Statistic) -> str:
    """``name = value ± se unit`` for reading (significant digits, no reprs); an exact whole number (no
    standard error: a count, an exact limit) as an integer, ``parts that fail = 3``."""
    unit = f" {s.unit}" if s.unit else ""
    if math.isfinite(s.se):
        return f"{s.name} = {_fmt(s.value)} ± {_fmt(s.se, 2)}{unit}"
    if math.isfinite(s.value) and s.value == int(s.value) and abs(s.value) < 1e15:
        return f"{s.name} = {int(s.value)}{unit}"
    return f"{s.name} = {_fmt(s.value)}{unit}"


def verdict_phrase(verdict: str, conditions: str = "", failure: str = "", shows: str = "") -> str:
    """The words the ledger prints for a verdict: the word, with its ``conditions`` ("holds only under
    added conditions (isotropic m)"), or, for "outside its conditions", the ``failure`` of its premises
    and what the numbers ``shows`` ("outside its conditions (m = aniso is not isotropic; the numbers:
    fails as stated)").  Plain text with the text's ``$...$``."""
    verdict_word(verdict, "verdict")
    if verdict == OUTSIDE:
        inner = "; ".join(x for x in (failure, f"the numbers: {shows}" if shows else "") if x)
        return f"{OUTSIDE} ({inner})" if inner else OUTSIDE
    return verdict + (f" ({conditions})" if conditions else "")


def verdict_words(r: Verdict) -> str:
    """:func:`verdict_phrase` of a record."""
    record(r, "r")
    return verdict_phrase(r.verdict, r.conditions, _premises.failure_text(r.premises), r.shows)


def power_text(r: Verdict) -> str:
    """``"the run could detect a violation larger than 0.031 % (tolerance 1 %)"`` for a record with a
    detectable size, else an empty string."""
    record(r, "r")
    if r.detectable is None or not math.isfinite(r.detectable):
        return ""
    tol = "" if r.tolerance is None else f" (tolerance {_fmt(r.tolerance, 2)}{_unit(r.unit)})"
    return f"the run could detect a violation larger than {_fmt(r.detectable, 2)}{_unit(r.unit)}{tol}"


_ROLE_NOTES = {
    DERIVATION: "A derivation of the companion (its own model, closed form or construction): not counted.",
    CONTROL: "A control of the companion's measurement: not counted.",
    READING: "A reading: an interpretation the summaries imply, counted apart from what they state.",
}


def findings_markdown(records: Iterable[Verdict]) -> str:
    """The "What we found" text of a chapter, rendered from its records (Markdown).

    One entry per record: the statement checked, the verdict in bold (with its
    conditions, or with the premise that failed and what the numbers show), the
    finding, the deciding statistics with standard errors, the criterion, the
    power of a holds (detectable size and tolerance), the search a claim rests on,
    and whether it is a reading, a derivation or a control.
    """
    if isinstance(records, (str, bytes, Mapping)) or not hasattr(records, "__iter__"):
        raise ValueError(f"records: expected Verdict records (a list or a Ledger), got {type(records).__name__}")
    lines = []
    for r in records:
        if not isinstance(r, Verdict):
            raise ValueError(f"records: expected Verdict records, got {type(r).__name__}")
        md = notation.markdown_safe
        lines.append(f"- **{md(r.statement)}** — *{md(verdict_words(r))}*.")
        if r.finding:
            lines.append(f"  {md(_sentence(r.finding))}")
        if r.statistics:
            lines.append("  " + "; ".join(md(statistic_text(s)) for s in r.statistics) + ".")
        lines.append(f"  Criterion: {md(r.criterion)}.")
        power = power_text(r)
        if power and r.decision in (HOLDS, HOLDS_UNDER):
            lines.append(f"  {_sentence(md(power))}")
        if r.search is not None:
            lines.append(f"  Search: {md(r.search.text())}.")
        if r.role in _ROLE_NOTES:
            lines.append(f"  {_ROLE_NOTES[r.role]}")
    if not lines:
        raise ValueError("records: expected at least one verdict record")
    return "\n".join(lines)


def _sentence(text: str) -> str:
    """``text`` with a capital first letter and a final full stop."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def show_findings(records: Iterable[Verdict]) -> None:
    """Display :func:`findings_markdown` in a notebook, once (it returns nothing, so a cell ending with
    it does not print the findings a second time as its value)."""
    from IPython.display import Markdown, display

    display(Markdown(findings_markdown(records)))
