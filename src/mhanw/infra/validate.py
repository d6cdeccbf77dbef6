"""Input checks shared by every public function of :mod:`mhanw`.

Each helper raises :class:`ValueError` whose message starts with the name of the
offending argument and says what was expected, so that a caller sees at once
which of its inputs is wrong.
"""

from __future__ import annotations

import numbers
from collections.abc import Collection, Mapping
from typing import TypeVar

import numpy as np

from ..constants import MAX_ENTRIES

_T = TypeVar("_T")

#: dtype kinds :func:`as_float_array` accepts: signed and unsigned integers, floats.
_REAL_KINDS = frozenset("iuf")

_KIND_NAMES = {
    "b": "booleans",
    "c": "complex numbers",
    "O": "Python objects",
    "U": "strings",
    "S": "bytes",
    "V": "structured records",
    "M": "datetimes",
    "m": "timedeltas",
}


def as_float_array(value, name: str, *, ndim=None, allow_empty: bool = False) -> np.ndarray:
    """Return ``value`` as a finite float64 array, or raise ``ValueError`` naming ``name``.

    Only integer and real floating dtypes are accepted: booleans, complex
    numbers (whose imaginary part a cast would drop), strings, Python objects
    and other dtypes are rejected, as are NaN and inf (also those produced by
    the cast, e.g. an extended-precision 1e400).  ``ndim`` is an int or a tuple
    of accepted numbers of dimensions.
    """
    if isinstance(value, np.ma.MaskedArray) or (
        isinstance(value, (list, tuple)) and any(isinstance(v, np.ma.MaskedArray) for v in value)
    ):
        raise ValueError(
            f"{name}: expected an array of real numbers, got a masked array (its masked entries "
            f"would be read as numbers)"
        )
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected an array of real numbers, got {type(value).__name__}") from exc
    if raw.dtype.kind not in _REAL_KINDS:
        what = _KIND_NAMES.get(raw.dtype.kind, f"dtype {raw.dtype}")
        raise ValueError(f"{name}: expected an array of real numbers, got {what} (dtype {raw.dtype})")
    with np.errstate(over="ignore"):
        arr = raw.astype(np.float64, copy=False)
    if ndim is not None:
        accepted = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in accepted:
            want = " or ".join(f"{k}-D" for k in accepted)
            raise ValueError(f"{name}: expected a {want} array, got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, found NaN or inf")
    return arr


#: What numpy counts among its numbers but is not one: a masked value (read as 0 by one conversion and
#: NaN by another) and a time span or date (``timedelta64`` subclasses numpy's integers).
_NOT_NUMBERS = (np.ma.MaskedArray, np.timedelta64, np.datetime64)


def _finite_real(value, name: str, what: str) -> float:
    """``value`` as a float if it is a finite real number (not a bool), else ``ValueError``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (numbers.Real, np.floating, np.integer))
        or isinstance(value, _NOT_NUMBERS)
    ):
        raise ValueError(f"{name}: expected {what}, got {brief(value)}")
    try:
        out = float(value)
    except OverflowError:  # an integer beyond a double (10**400)
        raise ValueError(
            f"{name}: expected {what} (within the range of a double, about 1.8e308), got {brief(value)}"
        ) from None
    if not np.isfinite(out):
        raise ValueError(f"{name}: expected {what} (finite), got {brief(value)}")
    return out


def positive_scalar(value, name: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise ``ValueError``."""
    out = _finite_real(value, name, "a positive real number")
    if out <= 0:
        raise ValueError(f"{name}: expected a positive finite number, got {brief(value)}")
    return out


#: The shared maximum of every size, count and budget an argument may give (:func:`positive_int`'s default
#: ``maximum``): the most entries the library allocates in one array (:data:`mhanw.constants.MAX_ENTRIES`), so
#: no single size can ask for more.  Counts of iterations use :data:`mhanw.constants.MAX_REPLICATES`.
MAX_COUNT = MAX_ENTRIES


def positive_int(value, name: str, *, minimum: int = 1, maximum: int | None = MAX_COUNT, what: str = "") -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum`` and <= ``maximum``, else raise
    ``ValueError`` naming ``name``.

    ``maximum`` defaults to the shared :data:`MAX_COUNT`; pass
    :data:`mhanw.constants.MAX_REPLICATES` for a count of iterations (replicates,
    draws, tries, steps), and ``None`` only where the caller bounds the value at
    once by the array it sizes (:func:`mhanw.constants.check_entries`, whose
    message names the product).  ``what`` says why the maximum holds; a size
    bounded here is refused before anything is allocated or looped over."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (numbers.Integral, np.integer))
        or isinstance(value, _NOT_NUMBERS)
    ):
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {brief(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {brief(value)}")
    if maximum is not None and int(value) > maximum:
        if maximum == MAX_COUNT and not what:
            raise ValueError(
                f"{name}: expected at most {MAX_COUNT} (the shared maximum of a size, count or budget: "
                f"the entries of the largest array the library allocates); {brief(value)} exceeds it"
            )
        why = f" ({what})" if what else ""
        raise ValueError(f"{name}: expected an integer <= {maximum}{why}, got {brief(value)}")
    return int(value)


def whole_number_text(text, name: str, *, minimum: int = 0, maximum: int = MAX_COUNT, alternative: str = "") -> int:
    """A whole number written as text (an environment variable, a command-line word): ASCII digits
    only, at most 18 of them (``"²"``, ``"١٢"`` and ``"1e3"`` are not numbers here, whatever
    :meth:`str.isdigit` says), from ``minimum`` to ``maximum``; else ``ValueError`` naming ``name``
    (and ``alternative``, the other words the caller accepts, such as ``"'default'"``)."""
    expected = f"a whole number (digits 0-9){' or ' + alternative if alternative else ''}"
    digits = text.strip() if isinstance(text, str) else ""
    if not (0 < len(digits) <= 18 and all("0" <= c <= "9" for c in digits)):
        raise ValueError(f"{name}: expected {expected}, got {brief(text)}")
    value = int(digits)
    if not minimum <= value <= maximum:
        raise ValueError(f"{name}: expected a whole number from {minimum} to {maximum}, got {value}")
    return value


def digit_count(value: int) -> int:
    """The number of decimal digits of an integer, without writing it out (Python refuses to write an
    integer of more than 4300 digits): exact up to a million digits, from the bit length beyond (then at most
    one too many; an exact count would need a power of ten as large as the integer, slow for 10**10**8)."""
    n = abs(int(value))
    if n < 10**17:
        return len(str(n))
    d = int(n.bit_length() * 0.30102999566398120) + 1  # log10(2): the estimate is d or d - 1
    if d > 1_000_000:
        return d
    return d if n >= 10 ** (d - 1) else d - 1


def brief(value) -> str:
    """``value`` as an error message shows it: its ``repr`` on one line and at most 200 characters; an
    integer of more than 30 digits by its size (10**400 has 401 digits), an array of more than 8 entries
    by its shape (a repr would span lines, and an error is one line)."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool) and abs(int(value)) >= 10**30:
        return f"an integer of {digit_count(int(value))} digits"
    if isinstance(value, np.ndarray) and (value.size > 8 or value.ndim > 1):
        return f"an array of shape {value.shape} ({value.dtype})"
    try:
        text = repr(value) if isinstance(value, (str, bytes)) else " ".join(repr(value).split())
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the message
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 200 else text[:200] + "..."


def positive_ints(values, name: str, *, minimum: int = 1, maximum: int | None = MAX_COUNT) -> list:
    """A non-empty list of integers >= ``minimum`` (each :func:`positive_int`, named ``name``) from one
    integer or a sequence of them (sample sizes, dimensions, token counts); an empty one is refused here,
    where ``max()`` of it would have failed without naming anything."""
    if isinstance(values, (str, bytes, dict)) or (not np.iterable(values) and not isinstance(values, numbers.Number)):
        raise ValueError(f"{name}: expected an integer or a sequence of integers, got {brief(values)}")
    items = [
        positive_int(v, name, minimum=minimum, maximum=maximum) for v in np.atleast_1d(np.asarray(values, dtype=object))
    ]
    if not items:
        raise ValueError(f"{name}: expected at least one integer, got an empty sequence")
    return items


def boolean(value, name: str) -> bool:
    """``value`` as a bool if it is ``True`` or ``False`` (Python or numpy), else ``ValueError`` naming ``name``
    (an array, a string or a number would be read by its truth, which is no answer)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {type(value).__name__} {brief(value)}")
    return bool(value)


def sequence(value, name: str, what: str = "values") -> tuple:
    """Return ``value`` as a tuple if it is a sequence (an iterable that is not a string,
    bytes or a mapping), else raise ``ValueError`` naming ``name``; ``what`` describes
    the expected items.  The items themselves are the caller's to check."""
    if isinstance(value, (str, bytes, dict)) or not np.iterable(value):
        raise ValueError(f"{name}: expected a sequence of {what}, got {brief(value)}")
    return tuple(value)


def one_of(value, name: str, choices: Collection[_T]) -> _T:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError`` listing them (an array or
    another value that does not compare to one answer is refused, not an ambiguous truth value)."""
    if not isinstance(value, (str, bytes, numbers.Number, np.generic, tuple, type(None))) or value not in choices:
        raise ValueError(f"{name}: expected one of {listed(choices)}, got {brief(value)}")
    return value  # type: ignore[return-value]  # equal to one of choices (checked above)


def nonnegative_scalar(value, name: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0, else raise ``ValueError``."""
    out = _finite_real(value, name, "a non-negative real number")
    if out < 0:
        raise ValueError(f"{name}: expected a non-negative finite number, got {brief(value)}")
    return out


def real_scalar(value, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number, else raise ``ValueError``."""
    return _finite_real(value, name, "a finite real number")


def unit_interval(value, name: str) -> float:
    """Return ``value`` as a float if it lies in ``[0, 1]``, else raise ``ValueError``."""
    out = real_scalar(value, name)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name}: expected a number in [0, 1], got {brief(value)}")
    return out


def generator(value, name: str) -> np.random.Generator:
    """Return ``value`` if it is a ``numpy.random.Generator``, else raise ``ValueError``."""
    if not isinstance(value, np.random.Generator):
        raise ValueError(f"{name}: expected a numpy.random.Generator, got {type(value).__name__}")
    return value


def as_seed_sequence(seed, name: str = "seed") -> np.random.SeedSequence:
    """Return ``seed`` as a :class:`numpy.random.SeedSequence`.

    Accepts an explicit non-negative integer (a Python or numpy integer, not a
    bool) or a SeedSequence (returned as is, so that a spawned child keeps its
    place in the tree of streams).  ``None`` is rejected: it would draw fresh
    entropy from the operating system, and two runs would differ.  Anything
    else raises ``ValueError`` naming ``name``.
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        raise ValueError(
            f"{name}: expected an explicit non-negative integer or a numpy SeedSequence, got None "
            "(None would draw fresh entropy, so two runs would differ)"
        )
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (numbers.Integral, np.integer)):
        raise ValueError(
            f"{name}: expected a non-negative integer or a numpy SeedSequence, got {type(seed).__name__} {brief(seed)}"
        )
    if int(seed) < 0:
        raise ValueError(f"{name}: expected a non-negative integer, got {brief(seed)}")
    return np.random.SeedSequence(int(seed))


def listed(items) -> str:
    """``items`` as the list an error message names them by: each ``repr``, comma-separated
    (``listed(["a", 2])`` is ``"'a', 2"``)."""
    return ", ".join(repr(k) for k in items)


def mapping_with_keys(value, name: str, keys=()) -> Mapping:
    """``value`` if it is a mapping holding every key of ``keys``, else ``ValueError`` naming ``name`` and
    the missing keys."""
    if not isinstance(value, Mapping):
        want = f" with the keys {listed(keys)}" if keys else ""
        raise ValueError(f"{name}: expected a mapping{want}, got {type(value).__name__} {brief(value)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{name}: missing the key(s) {listed(missing)}")
    return value


def table_with_columns(value, name: str, columns, *, finite=(), rows=()):
    """``value`` if it is a non-empty pandas DataFrame with the columns ``columns`` and the index labels
    ``rows``, whose columns ``finite`` hold finite real numbers; else ``ValueError`` naming ``name`` and
    the missing columns or rows (or ``name[column]``)."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        raise ValueError(
            f"{name}: expected a table (a pandas DataFrame) with the columns {listed(columns)}, "
            f"got {type(value).__name__} {brief(value)}"
        )
    missing = [c for c in columns if c not in value.columns]
    if missing:
        raise ValueError(f"{name}: missing the column(s) {listed(missing)}")
    if value.empty:
        raise ValueError(f"{name}: expected a non-empty table, got {value.shape[0]} rows")
    missing = [r for r in rows if r not in value.index]
    if missing:
        raise ValueError(f"{name}: missing the row(s) {listed(missing)}")
    for c in finite:
        as_float_array(value[c].to_numpy(), f"{name}[{c!r}]", ndim=1)
    return value
