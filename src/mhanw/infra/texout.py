"""Numbers and sympy expressions as LaTeX macros for the paper.

A notebook collects what it computed in a :class:`Macros` object and writes it
once, at its end, to ``paper/generated/NN_slug.tex``.  The paper uses only
these macros for computed numbers, so no number is ever typed by hand.

Macro names are letters only (a TeX control word) and carry a per-notebook
prefix, e.g. ``\\NWoneIdentityMaxErr``.  Every macro is wrapped in
``\\ensuremath`` where it is math, so it works in text and in formulas.

This module is also the one place that turns text into LaTeX or matplotlib
mathtext: :func:`tex_escape` (plain text), :func:`tex_text` (record text with
the records' plain notation, ``HDI_PA``, ``d_k^(1/4)``), :func:`tex_math` (a
sympy formula, valid in LaTeX and in mathtext alike); :func:`check_tex` says
whether a piece of LaTeX can stand in a macro (what :meth:`Macros.text`
accepts), :func:`check_mathtext` whether matplotlib can draw a label, and
:func:`check_verbatim` whether a user value can be printed as is (in
``\\texttt{}``), so that a chapter parameter that could not be rendered is
refused when the parameters are checked, naming it.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import stat
import re
import tempfile
from pathlib import Path

import numpy as np

from . import notation
from .validate import brief, real_scalar

_LETTERS = re.compile(r"^[A-Za-z]+$")

#: Largest number of significant digits :func:`format_number` writes (a double holds 17).
MAX_DIGITS = 17


def _digits(value, name: str) -> int:
    """A number of significant digits, an int in ``1..MAX_DIGITS``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) \
            or not 1 <= int(value) <= MAX_DIGITS:
        raise ValueError(f"{name}: expected an integer from 1 to {MAX_DIGITS} (significant digits), got {brief(value)}")
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
        raise ValueError(f"se: expected a finite non-negative standard error, got {brief(se)}")
    se_digits = _digits(se_digits, "se_digits")
    if se == 0:
        return f"{format_number(mean)} \\pm 0"
    place = se_digits - 1 - int(math.floor(math.log10(se)))
    if place <= 0:
        return f"{round(mean, place):.0f} \\pm {round(se, place):.0f}"
    return f"{mean:.{place}f} \\pm {se:.{place}f}"


# --------------------------------------------------------------------------- text for LaTeX and mathtext


_TEX_CHARS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
              "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
              "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_TEX_UNICODE = {
    "±": r"$\pm$", "≤": r"$\le$", "≥": r"$\ge$", "≈": r"$\approx$", "≠": r"$\ne$", "×": r"$\times$",
    "·": r"$\cdot$", "√": r"$\surd$", "∞": r"$\infty$", "→": r"$\to$", "−": "-", "–": "--", "—": "---",
    "…": r"\ldots{}", "’": "'", "‘": "`", "“": "``", "”": "''", "∝": r"$\propto$", "≍": r"$\asymp$",
    "∑": r"$\sum$", "⊥": r"$\perp$", "‖": r"$\|$", "°": r"$^\circ$", "²": r"$^2$", "³": r"$^3$",
    "ρ̄": r"$\bar\rho$", "\u0304": "", "é": r"\'e", "è": r"\`e", "ü": r"\"u", "ö": r"\"o", "ä": r"\"a",
    "ℓ": r"$\ell$", "∈": r"$\in$", "⟨": r"$\langle$", "⟩": r"$\rangle$", "∗": "*", "ε": r"$\varepsilon$",
}
_GREEK = notation.GREEK  # Unicode Greek letter -> its name


def tex_escape(text: str) -> str:
    """Plain text (no math) as LaTeX text for pdflatex: specials escaped, Unicode spelled out."""
    out = []
    i = 0
    while i < len(text):
        two = text[i:i + 2]
        if two in _TEX_UNICODE:
            out.append(_TEX_UNICODE[two])
            i += 2
            continue
        ch = text[i]
        if ch in _TEX_CHARS:
            out.append(_TEX_CHARS[ch])
        elif ch in _TEX_UNICODE:
            out.append(_TEX_UNICODE[ch])
        elif ch in _GREEK:
            out.append(f"$\\{_GREEK[ch]}$")
        elif 32 <= ord(ch) < 127 or ch in "\n\t":  # printable ASCII (a control character prints nothing)
            out.append(ch)
        else:
            out.append("?")
        i += 1
    return notation.join_maths("".join(out))


def tex_text(text: str) -> str:
    """Record text as LaTeX: ``$...$`` (the text's symbols, e.g. ``$m_{\\cos,1.5}$``) passes through,
    the records' plain notation becomes the paper's (:func:`mhanw.infra.notation.plain_math`:
    ``HDI_PA`` -> ``$\\HDIpa$``, ``d_k`` -> ``$d_{k}$``, ``d_k*`` -> ``$d_{k}^{*}$``, ``d_k^(1/4)`` ->
    ``$d_{k}^{1/4}$``, ``(ln n)^(2/(4+d))`` -> ``$(\\ln n)^{2/(4+d)}$``, ``sqrt(d_k)`` -> ``$\\sqrt{d_{k}}$``,
    ``m_{\\cos,1.2}`` -> ``$m_{\\cos,1.2}$``, ``sum_j`` -> ``$\\sum_{j}$``, ``<=`` -> ``$\\le$``,
    ``Z ~ N(0, I)`` -> ``Z $\\sim$ N(0, I)``) and the rest is escaped (:func:`tex_escape`)."""
    out = []
    for i, piece in enumerate(re.split(r"(\$[^$]+\$)", text)):
        if i % 2:
            out.append(piece)
            continue
        out += [f"${t}$" if is_math else tex_escape(t) for is_math, t in notation.plain_math(piece, notation.TEX) if t]
    return notation.join_maths("".join(out))  # adjacent inline maths become one


def tex_math(expr) -> str:
    """A sympy expression as LaTeX math (no ``$``), the same in the paper and in matplotlib's mathtext:
    ``x1^2^2`` parsed is ``x_{1}^{4}`` (a string formula would be two superscripts, which both refuse).
    Coordinates ``x1`` become ``x_{1}``."""
    import sympy

    if not isinstance(expr, sympy.Basic):
        raise ValueError(f"expr: expected a sympy expression, got {type(expr).__name__} {brief(expr)}"[:200])
    names = {s: sympy.Symbol(re.sub(r"^([A-Za-z]+)([0-9]+)$", r"\1_{\2}", s.name)) for s in expr.free_symbols}
    return sympy.latex(expr.xreplace(names))


#: TeX specials that end a macro's argument or the file early when unescaped: a comment (%), a macro
#: parameter (#).  A trailing backslash escapes the macro's closing brace ("File ended while scanning").
_UNESCAPED = {"%": "a comment sign % (write \\%)", "#": "a parameter sign # (write \\#)"}


def check_tex(text, name: str) -> str:
    """``text`` if it can stand as the body of a macro, else ``ValueError`` naming ``name``.

    Braces must balance (``\\{`` and ``\\}`` are literal), ``$`` must pair, and
    there may be no unescaped ``%`` or ``#``, no trailing backslash, no ``^`` or
    ``_`` outside maths (``$...$``, ``\\(...\\)``, ``\\ensuremath{...}``) and no
    character outside printable ASCII: each would make pdflatex stop ("File
    ended while scanning", "Illegal parameter number", "Missing $ inserted",
    "Unicode character not set up") and lose every later macro of the paper.
    Plain text goes through :func:`tex_escape` first (:meth:`Macros.plain`).
    """
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string of LaTeX text, got {type(text).__name__}")
    odd = sorted({c for c in text if not (32 <= ord(c) < 127 or c in "\n\t")})
    if odd:
        raise ValueError(f"{name}: the character {odd[0]!r} in LaTeX text {text[:80]!r} is not printable ASCII "
                         "(pass plain text through Macros.plain, which spells it out)")
    if not _braces_balanced(text):
        raise ValueError(f"{name}: unbalanced braces in LaTeX text {text[:80]!r}")
    math, depth, groups, i = False, 0, [], 0  # groups: the brace depths at which \ensuremath{ opened
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 == len(text):
                raise ValueError(f"{name}: a trailing backslash in LaTeX text {text[-80:]!r} (it would escape the "
                                 "macro's closing brace)")
            if text.startswith("\\ensuremath{", i):
                groups.append(depth)
                depth += 1
                i += len("\\ensuremath{")
                continue
            if text[i + 1] in "([":
                math = True
            elif text[i + 1] in ")]":
                math = False
            i += 2
            continue
        if ch in _UNESCAPED:
            raise ValueError(f"{name}: {_UNESCAPED[ch]} in LaTeX text {text[:80]!r}")
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if groups and depth == groups[-1]:
                groups.pop()
        elif ch == "$":
            math = not math
        elif ch in "^_" and not math and not groups:
            raise ValueError(f"{name}: {ch!r} outside maths in LaTeX text {text[:80]!r} (put the formula in "
                             "$...$, or pass plain text through Macros.plain, which escapes it)")
        i += 1
    if math:
        raise ValueError(f"{name}: an unpaired $ in LaTeX text {text[:80]!r}")
    return text


def check_mathtext(text, name: str) -> str:
    """``text`` if matplotlib can draw it (a label with ``$...$`` maths), else ``ValueError`` naming
    ``name`` with matplotlib's reason on one line (matplotlib would fail at drawing, naming nothing)."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string label, got {type(text).__name__}")
    parser = _mathtext_parser()
    for piece in re.findall(r"(?<!\\)\$(.*?)(?<!\\)\$", text):
        try:
            parser.parse(f"${piece}$")
        except ValueError as exc:
            reason = " ".join(str(exc).split())
            raise ValueError(f"{name}: matplotlib cannot draw the label {text[:80]!r} ({reason[:160]})") from None
    if text.count("$") - text.count("\\$") & 1:
        raise ValueError(f"{name}: an unpaired $ in the label {text[:80]!r}")
    return text


@functools.lru_cache(maxsize=1)
def _mathtext_parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


#: Characters a user value may hold to be printed as is in the paper (``\\texttt{...}``): no TeX special.
_VERBATIM = re.compile(r"[A-Za-z0-9 .,:;+*/()=<>!?'\-]*")


def check_verbatim(text, name: str) -> str:
    """``text`` if it can be printed as is in LaTeX text (``\\texttt{text}``), else ``ValueError`` naming
    ``name``: the characters ``_ ^ % # & $ ~ \\ { }`` (and any outside printable ASCII) would stop pdflatex
    or print something else."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string, got {type(text).__name__}")
    bad = sorted(set(ch for ch in text if not _VERBATIM.fullmatch(ch)))
    if bad:
        raise ValueError(f"{name}: {text[:80]!r} cannot be printed as is in the paper (it holds "
                         f"{' '.join(repr(c) for c in bad[:6])}; write powers as ** and numbers as plain decimals)")
    return text


class Macros:
    """A set of LaTeX macros with a common prefix, written atomically.

    >>> m = Macros("NWone")
    >>> m.number("MaxErr", 3.1e-16)
    >>> m.write("paper/generated/01_attention_is_nadaraya_watson.tex")  # doctest: +SKIP
    """

    def __init__(self, prefix: str):
        if not isinstance(prefix, str) or not _LETTERS.match(prefix):
            raise ValueError(f"prefix: expected letters only (a TeX control word), got {brief(prefix)}")
        self.prefix = prefix
        self._defs: dict[str, str] = {}

    def _add(self, name: str, body: str) -> None:
        if not isinstance(name, str) or not _LETTERS.match(name):
            raise ValueError(f"name: expected letters only (a TeX control word), got {brief(name)}")
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
                raise ValueError(f"value: expected an integer, got {brief(value)}")
            v = int(x)
        s = f"{v:,}".replace(",", "\\,")
        self._add(name, f"\\ensuremath{{{s}}}")

    def mean_se(self, name: str, mean: float, se: float) -> None:
        """A Monte Carlo estimate with its standard error, ``mean \\pm se``."""
        self._add(name, f"\\ensuremath{{{format_mean_se(mean, se)}}}")

    def text(self, name: str, value: str) -> None:
        """A piece of LaTeX text, e.g. a verdict word or ``\\ensuremath{...}`` of :func:`tex_math`.

        ``value`` must pass :func:`check_tex`: balanced braces (``\\{`` and
        ``\\}`` are literal), paired ``$``, no unescaped ``%`` or ``#``, no
        trailing backslash; each would break every later macro of the paper.
        Plain text that may hold such characters goes through :meth:`plain`.
        """
        self._add(name, check_tex(value, "value"))

    def plain(self, name: str, value: str) -> None:
        """Plain text (no LaTeX in it), escaped by :func:`tex_escape`: ``50% of x_1`` prints as written."""
        if not isinstance(value, str):
            raise ValueError(f"value: expected a string of plain text, got {type(value).__name__}")
        self._add(name, tex_escape(value))

    def expr(self, name: str, expression) -> None:
        """A sympy expression, typeset with :func:`sympy.latex`."""
        import sympy

        if not isinstance(expression, sympy.Basic):
            raise ValueError(f"expression: expected a sympy expression, got {type(expression).__name__} {brief(expression)}")
        self._add(name, f"\\ensuremath{{{sympy.latex(expression)}}}")

    def __len__(self) -> int:
        return len(self._defs)

    def render(self) -> str:
        lines = ["% Generated by mhanw.infra.texout: do not edit; re-run the notebook instead."]
        for name, body in self._defs.items():
            lines.append(f"\\newcommand{{\\{self.prefix}{name}}}{{{body}}}")
        return "\n".join(lines) + "\n"

    def write(self, path, *, argument: str = "path") -> Path:
        """Write all macros to ``path`` atomically (a partial file never appears); ``argument`` is the
        name a refused path is reported under (see :func:`write_atomic`)."""
        if not self._defs:
            raise ValueError("macros: nothing to write; add at least one macro")
        return write_atomic(path, self.render(), argument=argument)


def new_file_mode() -> int:
    """The permission bits a newly created file gets here (``0o666`` less the process's umask): what an
    atomic write gives its temporary file, which ``mkstemp`` creates private (``0o600``)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def checked_target(path, argument: str = "path") -> Path:
    """``path`` as a file an atomic write may replace: a path (not empty, no NUL), not a directory and,
    when it exists, a regular file (never a device such as ``/dev/null`` or a pipe); ``ValueError``
    naming ``argument`` otherwise."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip() or "\x00" in str(path):
        raise ValueError(f"{argument}: expected a file path, got {brief(path)}")
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:  # a name too long, a parent that is a file, ...
        raise ValueError(f"{argument}: cannot write {str(path)!r}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):  # os.replace would fail with a bare OSError about the temporary file
        raise ValueError(f"{argument}: expected a file path, got the directory {str(path)!r}")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{argument}: expected a regular file to write, got {str(path)!r}, which is not one")
    return path


def checked_outputs(**paths) -> dict[str, Path]:
    """The output files of one run, ``name=path`` each, checked before anything is written: each a
    :func:`checked_target` under its name, and no two the same file (one would replace the other)."""
    out = {name: checked_target(path, name) for name, path in paths.items()}
    seen: dict[Path, str] = {}
    for name, path in out.items():
        key = path.resolve()
        if key in seen:
            raise ValueError(f"{name}: expected a file of its own, got the same file as {seen[key]} ({str(path)!r})")
        seen[key] = name
    return out


def write_atomic(path, text: str, *, argument: str = "path") -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (a reader never sees a partial file;
    a failure leaves the previous file, or none, and no temporary).  The file gets the permissions of a
    newly created file (:func:`new_file_mode`).  A refused path (:func:`checked_target`, or one the system
    cannot create) raises ``ValueError`` naming ``argument``."""
    path = checked_target(path, argument)
    if not isinstance(text, str):
        raise ValueError(f"text: expected a string, got {type(text).__name__}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ValueError(f"{argument}: cannot write {str(path)!r}: {exc.strerror or exc}") from None
    try:
        os.chmod(tmp, new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
