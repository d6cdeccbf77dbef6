"""Generated text that reads as written text: counts, ranges, lists.

The paper and the chapters state counts and lists computed from results.  These
helpers say them as a writer would: "all four" rather than "4 of the 4",
"layers 1-6" rather than "layers 1, 2, 3, 4, 5, 6", and a list of verdicts
without repeating a verdict that several items share.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

from .texout import printed_integer
from .validate import brief

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


#: Most items :func:`ranges`, :func:`join_list` and :func:`group_by_verdict` say in one sentence: far more
#: than any sentence lists (the chapters list at most a few dozen layers, seeds or verdicts), and few
#: enough to say at once (``ranges(range(10**7))`` took 15 s, ``range(10**8)`` did not finish).
MAX_ITEMS = 10_000


def _items(values, name: str, what: str) -> list:
    """The items of the collection ``values`` as a list, at most :data:`MAX_ITEMS` of them (an iterator
    is read only that far), else ``ValueError`` naming ``name``."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name}: expected {what}, got {type(values).__name__} {brief(values)}")
    items = list(itertools.islice(values, MAX_ITEMS + 1))
    if len(items) > MAX_ITEMS:
        raise ValueError(f"{name}: expected at most {MAX_ITEMS} items (what a sentence can list), got more")
    return items


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {type(value).__name__} {brief(value)}")
    return value


def _integer(value, name: str) -> int:
    """An integer item (an int, a numpy integer, or a float with an integral value) of at most 18 digits
    (:func:`mhanw.infra.texout.printed_integer`), never a bool or a string."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{name}: expected integers, got {type(value).__name__} {brief(value)}")
    if isinstance(value, (numbers.Integral, np.integer)):
        return printed_integer(value, name)
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x) or not x.is_integer():
        raise ValueError(f"{name}: expected integers, got {brief(value)} (not a whole number)")
    return printed_integer(int(x), name)


def _count(value, name: str) -> int:
    """A count a sentence says: a whole number >= 0 of at most 18 digits (:func:`printed_integer`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name}: expected a whole number >= 0, got {brief(value)}")
    return printed_integer(value, name)


def number_word(k) -> str:
    """``k`` in words up to twelve, in digits above (the usual house style)."""
    k = _count(k, "k")
    return _WORDS[k] if k < len(_WORDS) else str(k)


def count_of(k, n, noun: str = "") -> str:
    """ "all four", "none of the four", "3 of 8", "both", "neither" (``k`` of ``n`` items).

    ``noun`` (plural) is appended: ``count_of(4, 4, "layers")`` -> ``"all four layers"``.
    """
    k, n = _count(k, "k"), _count(n, "n")
    noun = _text(noun, "noun")
    if k > n:
        raise ValueError(f"k: expected at most n = {n}, got {k}")
    tail = f" {noun}" if noun else ""
    if n == 0:
        raise ValueError("n: expected at least one item")
    if n == 2 and k == 2:
        return f"both{tail}"
    if n == 2 and k == 0:
        return f"neither{' of the ' + noun if noun else ''}"
    if k == n:
        return f"all {number_word(n)}{tail}"
    if k == 0:
        return f"none of the {number_word(n)}{tail}"
    return f"{number_word(k)} of {number_word(n)}{tail}" if n <= len(_WORDS) - 1 else f"{k} of {n}{tail}"


def count_clause(k, n, noun: str, singular: str, plural: str, one: str = "") -> str:
    """A count as the subject of a clause, with the verb that agrees with it.

    ``noun``: the plural noun, ``one``: its singular (default ``noun`` without its final ``s``);
    ``singular``, ``plural``: the verb phrase for each (``"falls below it"``, ``"fall below it"``).
    ``count_clause(1, 72, "heads", "falls", "fall")`` -> ``"1 of 72 heads falls"``; ``(5, 72)`` ->
    ``"5 of 72 heads fall"``; ``(0, 72)`` -> ``"none of the 72 heads falls"``; ``(2, 2)`` -> ``"both
    heads fall"``; ``(1, 1)`` -> ``"the one head falls"``; ``(0, 1)`` -> ``"no head falls"``.
    """
    k, n = _count(k, "k"), _count(n, "n")
    noun, singular, plural = _text(noun, "noun"), _text(singular, "singular"), _text(plural, "plural")
    one = _text(one, "one") or (noun[:-1] if noun.endswith("s") else noun)
    if n == 1:
        if k > 1:
            raise ValueError(f"k: expected at most n = 1, got {k}")
        return f"{'the one' if k else 'no'} {one} {singular}"
    subject = count_of(k, n, noun)
    return f"{subject} {singular if k in (0, 1) else plural}"


def ranges(values) -> str:
    """Integers as ranges: ``[1, 2, 3, 5, 7, 8]`` -> ``"1-3, 5, 7-8"`` (an en dash in LaTeX is the caller's)."""
    items = sorted({_integer(v, "values") for v in _items(values, "values", "a collection of integers")})
    if not items:
        raise ValueError("values: expected at least one integer")
    out, start, prev = [], items[0], items[0]
    for v in items[1:] + [None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(out)


def join_list(items, conjunction: str = "and") -> str:
    """ "a", "a and b", "a, b and c" (``items``: a list of things to name, not one string)."""
    items = _items(items, "items", "a list of items")
    conjunction = _text(conjunction, "conjunction")
    items = [str(x) for x in items]
    if not items:
        raise ValueError("items: expected at least one item")
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def group_by_verdict(pairs) -> str:
    """Items with their verdicts, each verdict said once.

    ``[("the bound", "fails as stated"), ("the limit", "fails as stated"), ("the identity", "holds")]``
    -> ``"the bound and the limit: fails as stated; the identity: holds"``.
    """
    groups: dict[str, list[str]] = {}
    for pair in _items(pairs, "pairs", "(item, verdict) pairs"):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"pairs: expected (item, verdict) pairs, got {brief(pair)}")
        item, verdict = pair
        groups.setdefault(str(verdict), []).append(str(item))
    if not groups:
        raise ValueError("pairs: expected at least one (item, verdict) pair")
    return "; ".join(f"{join_list(items)}: {verdict}" for verdict, items in groups.items())
