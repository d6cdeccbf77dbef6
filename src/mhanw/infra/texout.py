"""Numbers and sympy expressions as LaTeX macros for the paper.

A notebook collects what it computed in a :class:`Macros` object and writes it
once, at its end, to ``paper/generated/NN_slug.tex``.  The paper uses only
these macros for computed numbers, so no number is ever typed by hand.

Macro names are letters only (a TeX control word) and carry a per-notebook
prefix, e.g. ``\\NWoneIdentityMaxErr``.  Every macro is wrapped in
``\\ensuremath`` where it is math, so it works in text and in formulas.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import tempfile
from pathlib import Path

import numpy as np

from .validate import real_scalar

_LETTERS = re.compile(r"^[A-Za-z]+$")

#: Largest number of significant digits :func:`format_number` writes (a double holds 17).
MAX_DIGITS = 17


def _digits(value, name: str) -> int:
    """A number of significant digits, an int in ``1..MAX_DIGITS``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) \
            or not 1 <= int(value) <= MAX_DIGITS:
        raise ValueError(f"{name}: expected an integer from 1 to {MAX_DIGITS} (significant digits), got {value!r}")
    return int(value)


def _braces_balanced(text: str) -> bool:
    """Whether the unescaped braces of ``text`` are balanced (``\\{`` and ``\\}`` are literal)."""
    depth = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2  # a control symbol such as \{ or \%: never a group delimiter
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def format_number(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits, in LaTeX math (no ``$``).

    Uses plain notation for ``1e-3 <= |x| < 1e5`` and ``a \\times 10^{b}``
    otherwise; integers-valued floats keep their significant digits.
    """
    x = real_scalar(x, "x")
    digits = _digits(digits, "digits")
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        place = digits - 1 - int(math.floor(math.log10(abs(x))))
        rounded = round(x, place)
        if abs(rounded) < 1e5:
            return f"{rounded:.{max(place, 0)}f}"
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    exp_i = int(exp)
    if mant.rstrip("0").rstrip(".") in ("1", "-1"):
        sign = "-" if mant.startswith("-") else ""
        return f"{sign}10^{{{exp_i}}}"
    return f"{mant}\\times 10^{{{exp_i}}}"


def format_mean_se(mean: float, se: float, se_digits: int = 1) -> str:
    """``mean \\pm se``, the mean rounded to the decimal place of the s.e."""
    mean = real_scalar(mean, "mean")
    se = real_scalar(se, "se")
    if se < 0:
        raise ValueError(f"se: expected a finite non-negative standard error, got {se!r}")
    se_digits = _digits(se_digits, "se_digits")
    if se == 0:
        return f"{format_number(mean)} \\pm 0"
    place = se_digits - 1 - int(math.floor(math.log10(se)))
    if place <= 0:
        return f"{round(mean, place):.0f} \\pm {round(se, place):.0f}"
    return f"{mean:.{place}f} \\pm {se:.{place}f}"


class Macros:
    """A set of LaTeX macros with a common prefix, written atomically.

    >>> m = Macros("NWone")
    >>> m.number("MaxErr", 3.1e-16)
    >>> m.write("paper/generated/01_attention_is_nadaraya_watson.tex")  # doctest: +SKIP
    """

    def __init__(self, prefix: str):
        if not isinstance(prefix, str) or not _LETTERS.match(prefix):
            raise ValueError(f"prefix: expected letters only (a TeX control word), got {prefix!r}")
        self.prefix = prefix
        self._defs: dict[str, str] = {}

    def _add(self, name: str, body: str) -> None:
        if not isinstance(name, str) or not _LETTERS.match(name):
            raise ValueError(f"name: expected letters only (a TeX control word), got {name!r}")
        if name in self._defs:
            raise ValueError(f"name: macro {self.prefix}{name} is defined twice")
        self._defs[name] = body

    def number(self, name: str, value: float, digits: int = 3) -> None:
        """A real number with ``digits`` significant digits."""
        self._add(name, f"\\ensuremath{{{format_number(value, digits)}}}")

    def integer(self, name: str, value: int) -> None:
        """An integer (an int, or a float with an integer value), with thin spaces as thousands separators."""
        if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
            v = int(value)
        else:
            x = real_scalar(value, "value")
            if not x.is_integer():
                raise ValueError(f"value: expected an integer, got {value!r}")
            v = int(x)
        s = f"{v:,}".replace(",", "\\,")
        self._add(name, f"\\ensuremath{{{s}}}")

    def mean_se(self, name: str, mean: float, se: float) -> None:
        """A Monte Carlo estimate with its standard error, ``mean \\pm se``."""
        self._add(name, f"\\ensuremath{{{format_mean_se(mean, se)}}}")

    def text(self, name: str, value: str) -> None:
        """A piece of LaTeX text, e.g. a verdict word.

        ``value`` must be a string whose braces balance (``\\{`` and ``\\}``
        are literal braces): an unbalanced one would break every later macro
        of the paper.
        """
        if not isinstance(value, str):
            raise ValueError(f"value: expected a string of LaTeX text, got {type(value).__name__}")
        if not _braces_balanced(value):
            raise ValueError(f"value: unbalanced braces in LaTeX text {value!r}")
        self._add(name, value)

    def expr(self, name: str, expression) -> None:
        """A sympy expression, typeset with :func:`sympy.latex`."""
        import sympy

        if not isinstance(expression, sympy.Basic):
            raise ValueError(f"expression: expected a sympy expression, got {type(expression).__name__} {expression!r}")
        self._add(name, f"\\ensuremath{{{sympy.latex(expression)}}}")

    def __len__(self) -> int:
        return len(self._defs)

    def render(self) -> str:
        lines = ["% Generated by mhanw.infra.texout: do not edit; re-run the notebook instead."]
        for name, body in self._defs.items():
            lines.append(f"\\newcommand{{\\{self.prefix}{name}}}{{{body}}}")
        return "\n".join(lines) + "\n"

    def write(self, path) -> Path:
        """Write all macros to ``path`` atomically (a partial file never appears)."""
        if not self._defs:
            raise ValueError("macros: nothing to write; add at least one macro")
        return write_atomic(path, self.render())


def write_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (a reader never sees a partial file;
    a failure leaves the previous file, or none, and no temporary)."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"path: expected a file path, got {path!r}")
    if not isinstance(text, str):
        raise ValueError(f"text: expected a string, got {type(text).__name__}")
    path = Path(path)
    if path.is_dir():  # os.replace would fail with a bare OSError about the temporary file
        raise ValueError(f"path: expected a file path, got the directory {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
