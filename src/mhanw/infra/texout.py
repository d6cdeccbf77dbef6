"""Numbers, formulas and text as LaTeX for the paper, and the checks of what reaches it.

The paper prints no number typed by hand: a chapter's results tree is rendered by
:func:`mhanw.infra.results.write`, one ``\\mhvalue{NN.path}{LaTeX}`` line per printable leaf, with the
formatters of this module (:func:`format_number`, :func:`format_mean_se`, :func:`printed_integer`,
:func:`latex_of`), each number wrapped in ``\\ensuremath`` so that it works in text and in formulas.

This module is also the one place that turns text into LaTeX or matplotlib
mathtext: :func:`tex_escape` (plain text), :func:`tex_text` (record text with
the records' plain notation, ``HDI_PA``, ``d_k^(1/4)``), :func:`tex_math` (a
sympy formula, valid in LaTeX and in mathtext alike); :func:`check_tex` says
whether a piece of LaTeX can stand in running text of the paper (or as the rows
of a table), :func:`check_mathtext` whether matplotlib can draw a label, and
:func:`check_verbatim` whether a user value can be printed as is (in
``\\texttt{}``), so that a chapter parameter that could not be rendered is
refused when the parameters are checked, naming it.  :func:`write_atomic` is the
one writer of the generated files.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
import stat
import tempfile
from decimal import Decimal
from pathlib import Path

import numpy as np

from . import notation
from .validate import brief, digit_count, real_scalar

#: Largest number of significant digits :func:`format_number` writes (a double holds 17).
MAX_DIGITS = 17


def _digits(value, name: str) -> int:
    """A number of significant digits, an int in ``1..MAX_DIGITS``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (numbers.Integral, np.integer))
        or not 1 <= int(value) <= MAX_DIGITS
    ):
        raise ValueError(f"{name}: expected an integer from 1 to {MAX_DIGITS} (significant digits), got {brief(value)}")
    return int(value)


def _brace_depth(text: str) -> int | None:
    """The deepest nesting of the unescaped braces of ``text`` (``\\{`` and ``\\}`` are literal), or ``None``
    when they do not balance."""
    depth = deepest = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2  # a control symbol such as \{ or \%: never a group delimiter
            continue
        if ch == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return None
        i += 1
    return deepest if depth == 0 else None


def _braces_balanced(text: str) -> bool:
    """Whether the unescaped braces of ``text`` are balanced (``\\{`` and ``\\}`` are literal)."""
    return _brace_depth(text) is not None


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


#: The most digits an integer is printed with in full, a count: every size the library allows has at most
#: nine (:data:`mhanw.infra.validate.MAX_COUNT`), and 18 is what :func:`mhanw.infra.validate.whole_number_text`
#: reads.  A larger number is no count a reader reads digit by digit: a table prints it in scientific form
#: (:func:`mhanw.infra.tables.fmt`), a sentence or a count macro refuses it (:func:`printed_integer`).
MAX_INTEGER_DIGITS = 18
#: The most characters a number takes in plain notation in a table, a sentence or a macro; a longer one is
#: written in scientific form (``1.2\times 10^{-21}``, ``1.2e-21``).
MAX_NUMBER_CHARS = 20
#: Below this magnitude a double has lost digits (its normal range ends at 2.2e-308): a mean or a
#: standard error this small is printed on its own, to its own significant digits (:func:`se_place`).
TINY = 1e-300


def printed_integer(value, name: str) -> int:
    """An integer a sentence or a macro prints digit by digit (a count): an int or a numpy integer (not a
    bool) of at most :data:`MAX_INTEGER_DIGITS` digits, else ``ValueError`` naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise ValueError(f"{name}: expected an integer, got {type(value).__name__} {brief(value)}")
    v = int(value)
    if abs(v) >= 10**MAX_INTEGER_DIGITS:
        raise ValueError(
            f"{name}: expected an integer of at most {MAX_INTEGER_DIGITS} digits (a count the paper "
            f"or a table prints in full), got one of {digit_count(v)} digits"
        )
    return v


def se_place(mean: float, se: float, digits: int) -> int | None:
    """The decimal place ``p`` (a unit of ``10**-p``) to which ``mean ± se`` is printed: that of the
    ``digits``-th significant digit of ``se`` (finite, > 0), the one rule of :func:`format_mean_se` and
    :func:`mhanw.infra.tables.pm`.  ``None`` when that place would give the mean more than
    :data:`MAX_DIGITS` significant digits (an s.e. below the precision of the mean as a double, e.g.
    ``1 ± 1e-300``) or either number is below :data:`TINY` (a double there has lost digits): then the
    mean and the s.e. are each printed on its own, to their own significant digits.  A mean that is
    not a finite real, an s.e. that is not a finite real >= 0 and ``digits`` that is not a whole number
    from 1 to :data:`MAX_DIGITS` raise ``ValueError`` naming the argument."""
    mean, se = real_scalar(mean, "mean"), real_scalar(se, "se")
    if se < 0:
        raise ValueError(f"se: expected a standard error >= 0, got {brief(se)}")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= MAX_DIGITS:
        raise ValueError(
            f"digits: expected a whole number of significant digits from 1 to {MAX_DIGITS}, got {brief(digits)}"
        )
    if se < TINY or 0 < abs(mean) < TINY:
        return None
    place = digits - 1 - int(math.floor(math.log10(se)))
    if mean != 0 and int(math.floor(math.log10(abs(mean)))) + place + 1 > MAX_DIGITS:
        return None
    return place


def format_mean_se(mean: float, se: float, se_digits: int = 1) -> str:
    """``mean \\pm se``, the mean rounded to the decimal place of the s.e. (:func:`se_place`), in
    scientific form ``(m \\pm s)\\times 10^{p}`` when plain notation would take more than
    :data:`MAX_NUMBER_CHARS` characters; an s.e. below the mean's precision or a number below
    :data:`TINY`: each on its own (``1.00 \\pm 5\\times 10^{-324}``)."""
    mean = real_scalar(mean, "mean")
    se = real_scalar(se, "se")
    if se < 0:
        raise ValueError(f"se: expected a finite non-negative standard error, got {brief(se)}")
    se_digits = _digits(se_digits, "se_digits")
    if se == 0:
        return f"{format_number(mean)} \\pm 0"
    place = se_place(mean, se, se_digits)
    if place is None:
        return f"{format_number(mean)} \\pm {format_number(se, se_digits)}"
    power = int(math.floor(math.log10(max(abs(mean), se))))
    if power < MAX_NUMBER_CHARS:  # else plain notation has more digits than that (and round() may overflow)
        if place <= 0:
            m, s = f"{round(mean, place):.0f}", f"{round(se, place):.0f}"
        else:
            m, s = f"{mean:.{place}f}", f"{se:.{place}f}"
        if max(len(m), len(s)) <= MAX_NUMBER_CHARS:
            return f"{m} \\pm {s}"
    decimals = max(place + power, 0)
    m, s = (f"{Decimal(x).scaleb(-power):.{decimals}f}" for x in (mean, se))
    return f"({m} \\pm {s})\\times 10^{{{power}}}"


# --------------------------------------------------------------------------- text for LaTeX and mathtext


_TEX_CHARS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_TEX_UNICODE = {
    "±": r"$\pm$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "≈": r"$\approx$",
    "≠": r"$\ne$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "√": r"$\surd$",
    "∞": r"$\infty$",
    "→": r"$\to$",
    "−": "-",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "’": "'",
    "‘": "`",
    "“": "``",
    "”": "''",
    "∝": r"$\propto$",
    "≍": r"$\asymp$",
    "∑": r"$\sum$",
    "⊥": r"$\perp$",
    "‖": r"$\|$",
    "°": r"$^\circ$",
    "²": r"$^2$",
    "³": r"$^3$",
    "ρ̄": r"$\bar\rho$",
    "\u0304": "",
    "é": r"\'e",
    "è": r"\`e",
    "ü": r"\"u",
    "ö": r"\"o",
    "ä": r"\"a",
    "ℓ": r"$\ell$",
    "∈": r"$\in$",
    "⟨": r"$\langle$",
    "⟩": r"$\rangle$",
    "∗": "*",
    "ε": r"$\varepsilon$",
}
_GREEK = notation.GREEK  # Unicode Greek letter -> its name


def _string(text, name: str = "text") -> str:
    """``text`` if it is a string, else ``ValueError`` naming ``name`` (``None`` is no text to typeset)."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string of text, got {type(text).__name__} {brief(text)}")
    return text


def tex_escape(text: str) -> str:
    """Plain text (no math) as LaTeX text for pdflatex: specials escaped, Unicode spelled out."""
    text = _string(text)
    out = []
    i = 0
    while i < len(text):
        two = text[i : i + 2]
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
    text = _string(text)
    out = []
    for i, piece in enumerate(re.split(r"(\$[^$]+\$)", text)):
        if i % 2:
            out.append(_record_maths(piece[1:-1]))
            continue
        out += [f"${t}$" if is_math else tex_escape(t) for is_math, t in notation.plain_math(piece, notation.TEX) if t]
    return check_tex(notation.join_maths("".join(out)), "text", alignment=False)  # adjacent inline maths become one


#: Unicode symbols inside maths as their LaTeX commands (``≤`` -> ``\le``; Greek letters by name).
_MATH_UNICODE = {
    ch: tex[1:-1] for ch, tex in _TEX_UNICODE.items() if len(ch) == 1 and tex.startswith("$") and tex.endswith("$")
} | {"−": "-", "∗": "*"}


def _record_maths(inner: str) -> str:
    """The ``$...$`` of record text (``inner`` without its ``$``) as LaTeX maths: a ``%``, ``#`` or ``&``
    escaped (in maths they would start a comment, a macro parameter, a table cell), Greek letters and
    the symbols of :data:`_TEX_UNICODE` as their commands; what still could not stand in a macro
    (unbalanced braces, a trailing backslash, a command outside :data:`TEX_COMMANDS`) raises
    ``ValueError`` naming ``text`` (:func:`check_tex`)."""
    out, i = [], 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\":
            out.append(inner[i : i + 2])
            i += 2
            continue
        if ch in "%#&":
            out.append("\\" + ch)
        elif ch in _GREEK:
            out.append(f"{{\\{_GREEK[ch]}}}")
        elif ch in _MATH_UNICODE:
            out.append(f"{{{_MATH_UNICODE[ch]}}}")
        else:
            out.append(ch)
        i += 1
    return check_tex(f"${''.join(out)}$", "text", alignment=False)


def latex_of(expr, name: str = "expr") -> str:
    """:func:`sympy.latex` of a sympy expression whose symbols (and undefined functions) have names that
    typeset: each name's LaTeX must pass :func:`check_tex` as a formula (``d_k``, ``k^{*}``,
    ``\\text{numerical}`` do; ``x%``, ``a&b``, ``\\input{f}`` or ``}`` are refused, naming the symbol and
    ``name``), since :func:`sympy.latex` prints a name as it is; and the whole formula must pass it as
    well, so that what this returns can stand in the paper (a sympy leaf of :func:`mhanw.infra.results.write`) as it is."""
    import sympy
    from sympy.core.function import AppliedUndef

    if not isinstance(expr, sympy.Basic):
        raise ValueError(f"{name}: expected a sympy expression, got {type(expr).__name__} {brief(expr)}"[:200])
    names = {s.name for s in expr.atoms(sympy.Symbol)} | {f.func.__name__ for f in expr.atoms(AppliedUndef)}
    for symbol in sorted(names):
        try:
            check_tex(f"${sympy.latex(sympy.Symbol(symbol))}$", name, alignment=False)
        except ValueError as exc:
            reason = str(exc).split(": ", 1)[1]
            raise ValueError(f"{name}: the symbol {symbol[:40]!r} cannot be typeset ({reason})") from None
    latex = sympy.latex(expr)  # a name of another kind (a MatrixSymbol's) prints as it is too: check it all
    try:
        return check_tex(f"${latex}$", name, alignment=False)[1:-1]
    except ValueError as exc:
        reason = str(exc).split(": ", 1)[1].rsplit(" in LaTeX text ", 1)[0]
        raise ValueError(f"{name}: the expression cannot be typeset ({reason}): {latex[:80]!r}") from None


def tex_math(expr) -> str:
    """A sympy expression as LaTeX math (no ``$``), the same in the paper and in matplotlib's mathtext:
    ``x1^2^2`` parsed is ``x_{1}^{4}`` (a string formula would be two superscripts, which both refuse).
    Coordinates ``x1`` become ``x_{1}``; every symbol's name is checked (:func:`latex_of`)."""
    import sympy

    if not isinstance(expr, sympy.Basic):
        raise ValueError(f"expr: expected a sympy expression, got {type(expr).__name__} {brief(expr)}"[:200])
    names = {s: sympy.Symbol(re.sub(r"\A([A-Za-z]+)([0-9]+)\Z", r"\1_{\2}", s.name)) for s in expr.free_symbols}
    return latex_of(expr.xreplace(names), "expr")


#: How the paper writes the regression functions of :data:`mhanw.data.REGRESSION_FUNCTIONS` it names.
REGRESSION_TEX = {
    "iso_exp": r"the isotropic $m(x)=2\exp(-\lVert x\rVert^2/4)$",
    "blind": r"$m(x)=\sin(2x_1)+x_1$, which depends on $x_1$ only",
}


def regression_tex(spec: str) -> str:
    """The regression function ``spec`` (a spec of :func:`mhanw.data.regression_function`) as LaTeX text
    for a paper's setting: the words of :data:`REGRESSION_TEX` for a function it names, ``m(x) = `` the
    formula for an expression (:func:`tex_math`), else the catalogue name in typewriter."""
    from mhanw import data

    f = data.regression_function(spec)
    if spec in REGRESSION_TEX:
        return REGRESSION_TEX[spec]
    if f.expression is not None:
        return f"$m(x)={tex_math(f.expression)}$"
    return f"$m$ = \\texttt{{{tex_escape(spec)}}}"


#: TeX specials that end a macro's argument or the file early when unescaped: a comment (%), a macro
#: parameter (#).  A trailing backslash escapes the macro's closing brace ("File ended while scanning").
_UNESCAPED = {"%": "a comment sign % (write \\%)", "#": "a parameter sign # (write \\#)"}

#: The control words a macro's LaTeX may hold, and nothing else: what the chapters write into their
#: macros (booktabs tables, ``\texttt``, ``\ensuremath``), what :func:`tex_escape` and :func:`tex_text`
#: emit (with :mod:`mhanw.infra.notation`'s symbols), what :func:`sympy.latex` prints for a formula
#: (functions, Greek letters, accents, delimiters) and the paper's own symbols (``\HDIpa``, defined in
#: ``paper/main.tex``).  A command outside it could read or write a file (``\input``, ``\openout``,
#: ``\write``), redefine the paper (``\def``, ``\catcode``, ``\makeatletter``, ``\csname``), hide the rest
#: of it (``\iffalse``, ``\verb``) or end it (``\end{document}``): the paper is built from these macros,
#: so a macro's value must never be able to take it over.
TEX_COMMANDS = (
    frozenset(
        """
    ensuremath emph textbf textit textrm textsf texttt textsc textnormal textup mbox text
    textasciicircum textasciitilde textbackslash textbar textgreater textless textsuperscript textsubscript
    ldots dots cdots vdots ddots quad qquad enspace thinspace small footnotesize scriptsize tiny normalsize
    rm it bf sf tt
    begin end begingroup endgroup setlength tabcolsep arraycolsep toprule midrule bottomrule cmidrule
    addlinespace multicolumn hline cline
    frac dfrac tfrac binom sqrt left right middle limits nolimits
    displaystyle textstyle scriptstyle operatorname mathrm mathbf mathit mathsf mathtt mathcal mathbb
    mathfrak boldsymbol mathring mathrel overline underline widehat widetilde hat bar tilde vec dot
    ddot dddot ddddot acute grave breve check prime nobreak nonumber not substack
    arccos arcsin arctan arg cos cosh cot coth csc sec sin sinh tan tanh exp ln log lim min max sup inf det
    Im Re bmod
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu nu xi
    pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega
    Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
    aleph beth daleth ell eth gimel hbar hslash mho wp
    le leq ge geq ne neq approx asymp propto sim simeq equiv perp parallel mid pm mp times cdot circ
    ast star bullet surd infty partial nabla emptyset setminus cap cup in notin ni subset subseteq supset
    supseteq otimes oplus wedge vee veebar neg forall exists to mapsto rightarrow leftarrow Rightarrow
    Leftarrow Leftrightarrow Longrightarrow iff implies dagger triangle sum prod int
    langle rangle lceil rceil lfloor rfloor lVert rVert Vert vert lvert rvert
    top bot HDIpa HDIpr HDIrv
""".split()
    )
    | frozenset(notation.GREEK.values())
    | frozenset(re.findall(r"\\([A-Za-z]+)", " ".join([*notation.TEX.values(), *notation.RELATIONS.values()])))
)

#: The environments a macro's ``\begin{...}`` may open (a table's, a formula's): never ``document``.
TEX_ENVIRONMENTS = frozenset(
    "tabular array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered".split()
)
#: The environments of maths (``\begin{array}`` in running text: "Missing $ inserted"); ``tabular`` stands in
#: either, and its cells are text.
_MATH_ENVIRONMENTS = TEX_ENVIRONMENTS - {"tabular"}
#: The environments whose rows an ``&`` divides into cells.
_ALIGNING = TEX_ENVIRONMENTS - {"gathered"}
#: The environments whose rows a rule (``\midrule``) or ``\multicolumn`` may stand in.
_TABLES = frozenset({"tabular", "array"})

#: The commands of :data:`TEX_COMMANDS` that typeset in running text as well as in maths; every other one
#: is maths only (``\frac``, ``\alpha``, ``\mathrm``, ``\HDIpa``: "Missing $ inserted" in text).
_TEXT_COMMANDS = frozenset(
    """
    ensuremath emph textbf textit textrm textsf texttt textsc textnormal textup mbox text
    textasciicircum textasciitilde textbackslash textbar textgreater textless textsuperscript textsubscript
    ldots dots vdots quad qquad enspace thinspace small footnotesize scriptsize tiny normalsize rm it bf sf tt
    begin end begingroup endgroup setlength tabcolsep arraycolsep toprule midrule bottomrule cmidrule addlinespace multicolumn hline
    cline underline nobreak nonumber
""".split()
)
#: Commands whose braced argument is text, in maths too (``$\text{a $x$ b}$``), and the one whose argument
#: is maths in text too.
_TEXT_ARGUMENT = frozenset(
    "text mbox textbf textit textrm textsf texttt textsc textnormal textup emph textsuperscript textsubscript".split()
)
_MATH_ARGUMENT = frozenset({"ensuremath"})
#: Font and spacing declarations: they hold to the end of the group they stand in, so outside any group
#: they would change the rest of the paper.
_DECLARATIONS = frozenset("small footnotesize scriptsize tiny normalsize rm it bf sf tt setlength".split())
#: The rules and spans of a table: only between the rows of a ``tabular`` or ``array``.
_TABLE_COMMANDS = frozenset("toprule midrule bottomrule cmidrule addlinespace hline cline multicolumn".split())
#: Commands of maths and the number of arguments they must have (``\sqrt}``: "Missing { inserted").
_ARITY = {"frac": 2, "dfrac": 2, "tfrac": 2, "binom": 2} | dict.fromkeys(
    "sqrt operatorname mathrm mathbf mathit mathsf mathtt mathcal mathbb mathfrak mathscr boldsymbol mathring "
    "mathrel overline underline widehat widetilde hat bar tilde vec dot ddot dddot ddddot acute grave breve check "
    "substack not".split(),
    1,
)
#: The operators ``\limits`` and ``\nolimits`` may follow ("Limit controls must follow a math operator").
_OPERATORS = frozenset("sum prod int lim max min sup inf det".split())
#: What may follow ``\left``, ``\middle`` and ``\right`` ("Missing delimiter" otherwise).
_DELIMITER_CHARS = frozenset("()[].|/<>")
_DELIMITER_WORDS = frozenset("langle rangle lceil rceil lfloor rfloor lVert rVert Vert vert lvert rvert".split())

#: The control symbols (a backslash and one non-letter) LaTeX text may hold: escaped specials, spaces,
#: accents, a line break, inline and display maths delimiters.
_CONTROL_SYMBOLS = frozenset("\\,;:! \n{}%$&#_'`\"^~-/()[]|.=")
#: Control symbols that are text accents: never in maths ("Please use \mathaccent"), always with an argument.
_TEXT_ACCENTS = frozenset("^~=.")
_ACCENTS = _TEXT_ACCENTS | frozenset("'`\"")

#: A table's column specification (``{llc}``, ``{@{}l|c@{}}``, ``{p{2cm}c}``), a length, and the arguments of
#: the commands that take them: a malformed one stops pdflatex ("Illegal character in array arg",
#: "Missing number").
_DIMENSION = r"-?\d{1,4}(?:\.\d{1,4})?(?:pt|em|ex|mm|cm|in|bp)"
_COLUMNS = re.compile(r"\{(?:[lcr| ]|@\{[A-Za-z0-9 .,:;()\-]*\}|[pmb]\{" + _DIMENSION + r"\})+\}")
_ARGUMENTS = {
    "setlength": re.compile(r"\{\\(?:tabcolsep|arraycolsep)\}\{" + _DIMENSION + r"\}"),
    "multicolumn": re.compile(r"\{[1-9][0-9]{0,2}\}" + _COLUMNS.pattern + r"(?=\s*\{)"),
    "cmidrule": re.compile(r"(?:\((?:l|r|lr|rl)\))?\{[1-9][0-9]{0,2}-[1-9][0-9]{0,2}\}"),
    "cline": re.compile(r"\{[1-9][0-9]{0,2}-[1-9][0-9]{0,2}\}"),
    "addlinespace": re.compile(r"(?:\[" + _DIMENSION + r"\])?"),
}
#: How each kind of opening reads in a message when it is left open, and when a brace closes inside it.
_OPENED = {
    "$": "an unpaired $",
    "(": "\\( without its \\)",
    "[": "\\[ without its \\]",
    "begingroup": "\\begingroup without its \\endgroup",
    "left": "\\left without its \\right",
}
_INSIDE = {
    "$": "maths $...$",
    "(": "maths \\(...\\)",
    "[": "maths \\[...\\]",
    "begingroup": "\\begingroup",
    "left": "\\left...\\right",
}


def _argument_end(text: str, k: int) -> int:
    """The end of the argument of a super- or subscript starting at ``k`` (spaces skipped by the caller):
    a braced group, a control word or symbol, or one character."""
    if text[k] == "{":
        depth = 0
        while k < len(text):
            if text[k] == "\\":
                k += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                return k
        return k
    if text[k] == "\\":
        j = k + 1
        while j < len(text) and text[j].isascii() and text[j].isalpha():
            j += 1
        return max(j, k + 2)
    return k + 1


def _skip_spaces(text: str, k: int) -> int:
    while k < len(text) and text[k] in " \n\t":
        k += 1
    return k


#: Commands that cannot stand as the argument of a super- or subscript (``x_\\tiny``: "Missing { inserted"),
#: besides those that take arguments themselves (``x_\\operatorname{x}``: write ``x_{\\operatorname{x}}``).
_NO_SCRIPT = frozenset(
    "small footnotesize scriptsize tiny normalsize rm it bf sf tt setlength begin end begingroup "
    "endgroup left middle right limits nolimits displaystyle textstyle scriptstyle".split()
)


def _script_problem(text: str, i: int) -> str | None:
    """What is wrong with the super- or subscript at ``text[i]`` (``^`` or ``_``), or ``None``: a script
    without its argument (``$x^$``: "Missing { inserted") or a second one of the same kind (``x^2^3``:
    "Double superscript")."""
    seen = set()
    while i < len(text) and text[i] in "^_":
        mark = text[i]
        if mark in seen:
            return f"a double {'super' if mark == '^' else 'sub'}script {mark!r} (write {{}}{mark} or one group)"
        seen.add(mark)
        k = _skip_spaces(text, i + 1)
        command = re.match(r"\\([A-Za-z]+)", text[k:])
        if (
            k == len(text)
            or text[k] in "$}^_&#%"
            or text.startswith(("\\)", "\\]", "\\\\"), k)
            or (
                command
                and (
                    command.group(1) in _NO_SCRIPT
                    or command.group(1) in _ARITY
                    or command.group(1) in _TEXT_ARGUMENT
                    or command.group(1) in _MATH_ARGUMENT
                )
            )
        ):
            return f"{mark!r} without its argument"
        i = _skip_spaces(text, _argument_end(text, k))
    return None


def _delimiter_end(text: str, k: int) -> int | None:
    """The end of the delimiter of ``\\left``, ``\\middle`` or ``\\right`` starting at ``k`` (spaces
    skipped), or ``None`` if none stands there."""
    k = _skip_spaces(text, k)
    if k < len(text) and text[k] in _DELIMITER_CHARS:
        return k + 1
    if text.startswith(("\\{", "\\}", "\\|"), k):
        return k + 2
    word = re.match(r"\\([A-Za-z]+)", text[k:])
    if word and word.group(1) in _DELIMITER_WORDS:
        return k + word.end()
    return None


#: The most characters a macro's LaTeX may hold, and the longest line (the paper's longest macro, a
#: table, is a few thousand; pdflatex stops at a line of 200,000).
MAX_TEX_CHARS, MAX_TEX_LINE = 100_000, 10_000


def check_tex(text, name: str, *, alignment: bool = True) -> str:
    """``text`` if it can stand in the paper's running text (a value of ``\\val``, a verdict's words), else
    ``ValueError`` naming ``name``.

    No ``^^`` anywhere: TeX reads ``^^69`` as ``i`` and ``^^5c`` as a backslash even inside a command's
    name (``\\^^69nput`` is ``\\input``), so it would hide any command from this check.  Braces must
    balance (``\\{`` and ``\\}`` are literal), and every opening closes where it opens, in the order
    opened: ``$...$``, ``\\(...\\)``, a group, an environment of :data:`TEX_ENVIRONMENTS`,
    ``\\begingroup``, ``\\left``.  There may be no unescaped ``%`` or ``#``, no trailing backslash, no
    character outside printable ASCII, no script without its argument: each would make pdflatex stop
    ("File ended while scanning", "Illegal parameter number", "Unicode character not set up") and lose
    every later value of the paper.  Every command must be one of :data:`TEX_COMMANDS`, and stand where it
    typesets: ``^``, ``_`` and the
    maths-only commands (``\\frac``, ``\\alpha``, ``\\mathrm``, math environments) only in maths (``$...$``,
    ``\\(...\\)``, ``\\ensuremath{...}``), text accents (``\\^{}``) only in text, ``\\middle`` between
    ``\\left`` and ``\\right``, ``\\limits`` after an operator, an ``&`` (a cell) and a rule or
    ``\\multicolumn`` only in a table, a font or spacing declaration (``\\tiny``, ``\\setlength``) only in a
    group.  With ``alignment=True`` the text may also be the rows of a table, which the paper puts inside
    its own ``tabular``: a text with a row end ``\\\\`` outside every group, where ``&``, rules and
    declarations stand between the rows.  Plain text goes through :func:`tex_escape` first.
    """
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string of LaTeX text, got {type(text).__name__}")
    shown = repr(text[:80])

    def refuse(what: str):
        raise ValueError(f"{name}: {what} in LaTeX text {shown}")

    if len(text) > MAX_TEX_CHARS or max(map(len, text.split("\n"))) > MAX_TEX_LINE:
        refuse(
            f"more than {MAX_TEX_CHARS:,} characters or a line of more than {MAX_TEX_LINE:,} (pdflatex reads a "
            f"line into a buffer of 200,000: 'Unable to read an entire line')"
        )
    if re.search(r"\n[ \t]*\n", text):
        refuse("a blank line (a paragraph break: 'Missing $ inserted' in maths, 'Runaway argument' in a command's)")

    odd = sorted({c for c in text if not (32 <= ord(c) < 127 or c in "\n\t")})
    if odd:
        refuse(
            f"the character {odd[0]!r} is not printable ASCII (pass plain text through tex_escape, which spells it out)"
        )
    if "^^" in text:
        refuse(
            "'^^' (TeX reads ^^69 as the letter i and ^^5c as a backslash, even inside a command's name: a "
            "command hidden in characters)"
        )
    if not _braces_balanced(text):
        refuse("unbalanced braces")
    # frames: what is open, innermost last, as (kind, mode inside, environment); kind "$", "(", "[", "{",
    # "env", "begingroup" or "left"; mode "text" or "math"
    frames: list[tuple[str, str, str | None]] = []
    outside: list[str] = []  # what stands outside every frame that only the rows of a table may hold
    row_end = False  # a \\ outside every frame: the text is the rows of a table
    last_word = None  # the control word just before, for \limits
    row_start = cell_start = True  # where a row of a table (a rule may stand) or a cell (\multicolumn) begins
    i = 0

    def mode() -> str:
        return frames[-1][1] if frames else "text"

    def unclosed(frame) -> str:
        kind, _, env = frame
        return f"\\begin{{{env}}} without its \\end" if kind == "env" else _OPENED[kind]

    def missing_argument(k: int) -> bool:
        k = _skip_spaces(text, k)
        return k == len(text) or text[k] in "}$&^_" or text.startswith(("\\\\", "\\)", "\\]"), k)

    def in_table(kinds) -> bool:
        return bool(frames) and frames[-1][0] == "env" and frames[-1][2] in kinds

    while i < len(text):
        ch = text[i]
        if ch in " \n\t":
            i += 1
            continue
        word_before, last_word = last_word, None
        at_row, at_cell, row_start, cell_start = row_start, cell_start, False, False
        if ch == "\\":
            if i + 1 == len(text):
                raise ValueError(
                    f"{name}: a trailing backslash in LaTeX text {text[-80:]!r} (it would escape the "
                    "macro's closing brace)"
                )
            j = i + 1
            while j < len(text) and text[j].isascii() and text[j].isalpha():
                j += 1
            if j == i + 1:  # a control symbol
                sym = text[j]
                if sym not in _CONTROL_SYMBOLS:
                    refuse(f"the control symbol \\{sym} is not one a macro may use")
                if sym == "|" and mode() == "text":
                    refuse("the control symbol \\| outside maths (it typesets only in maths: put it in $...$)")
                if sym in _TEXT_ACCENTS and mode() == "math":
                    refuse(f'the text accent \\{sym} inside maths (pdflatex: "Please use \\mathaccent")')
                if sym in _ACCENTS and (j + 1 == len(text) or text[j + 1] in "}$&\\ \n\t"):
                    refuse(f"the accent \\{sym} without its argument (write \\{sym}{{}} or \\{sym}{{e}})")
                if sym in "([":
                    if mode() == "math":
                        refuse(f"\\{sym} inside maths")
                    frames.append((sym, "math", None))
                elif sym in ")]":
                    if not frames or frames[-1][0] != {")": "(", "]": "["}[sym]:
                        refuse(f"\\{sym} without its opening \\{'(' if sym == ')' else '['}")
                    frames.pop()
                elif sym == "\\":
                    if frames and frames[-1][0] in "$([":
                        refuse("a row end \\\\ inside maths (outside an environment of rows)")
                    row_end = row_end or not frames
                    row_start = cell_start = True
                i = j + 1
                continue
            word = text[i + 1 : j]
            if text.startswith("@", j):  # where @ is a letter (\makeatletter), \frac@x names a LaTeX internal
                refuse(
                    f"the command \\{word}@ is not one a macro may use (an @ after a command names a LaTeX internal)"
                )
            if word not in TEX_COMMANDS:
                refuse(
                    f"the command \\{word} is not one a macro may use (it could read or write files, redefine "
                    "or hide the rest of the paper); pass plain text through tex_escape"
                )
            if word not in _TEXT_COMMANDS and mode() == "text":
                refuse(f"the command \\{word} outside maths (it typesets only in maths: put it in $...$)")
            last_word = word
            if word in ("limits", "nolimits") and word_before not in _OPERATORS:
                refuse(
                    f'\\{word} not after an operator such as \\sum (pdflatex: "Limit controls must follow a '
                    'math operator")'
                )
            arguments_at = j
            if word == "sqrt" and re.match(r"\s*\[[0-9]\]", text[j:]):
                arguments_at = j + re.match(r"\s*\[[0-9]\]", text[j:]).end()
            for n in range(_ARITY.get(word, 0)):
                if missing_argument(arguments_at):
                    refuse(f"\\{word} without its {'second ' if n else ''}argument")
                arguments_at = _argument_end(text, _skip_spaces(text, arguments_at))
            if word in _TEXT_ARGUMENT or word in _MATH_ARGUMENT:
                k = _skip_spaces(text, j)
                if not text.startswith("{", k):
                    refuse(f"\\{word} without its argument in braces (write \\{word}{{...}})")
                frames.append(("{", "math" if word in _MATH_ARGUMENT else "text", None))
                j = k + 1
            elif word in ("begin", "end"):
                env = re.match(r"\{([A-Za-z]+)\}", text[j:])
                if env is None or env.group(1) not in TEX_ENVIRONMENTS:
                    got = env.group(1) if env else text[j : j + 20]
                    refuse(
                        f"the environment {got!r} of \\{word} is not one a macro may use (only "
                        f"{', '.join(sorted(TEX_ENVIRONMENTS))})"
                    )
                kind = env.group(1)
                j += env.end()
                if word == "end":
                    if not frames or frames[-1] != ("env", frames[-1][1], kind):
                        refuse(f"\\end{{{kind}}} without its \\begin")
                    frames.pop()
                else:
                    if kind in _MATH_ENVIRONMENTS and mode() == "text":
                        refuse(f"the environment {kind!r} outside maths (it typesets only in maths: put it in $...$)")
                    position = re.match(r"\[[tcb]\]", text[j:]) if kind in ("tabular", "array", "aligned") else None
                    if position:
                        j += position.end()
                    if kind in _TABLES:
                        columns = _COLUMNS.match(text[j:])
                        if columns is None:
                            refuse(
                                f"the column specification {text[j : j + 20]!r} of \\begin{{{kind}}} is not one of "
                                "l, c, r, |, @{...}, p{length}"
                            )
                        j += columns.end()
                    frames.append(("env", "text" if kind == "tabular" else "math", kind))
                    row_start = cell_start = True
            elif word == "begingroup":
                frames.append(("begingroup", mode(), None))
            elif word == "endgroup":
                if not frames or frames[-1][0] != "begingroup":
                    refuse("\\endgroup without its opening command")
                frames.pop()
            elif word in ("left", "middle", "right"):
                end = _delimiter_end(text, j)
                if end is None:
                    refuse(f"\\{word} without its delimiter (write \\{word}( or \\{word}.)")
                if word != "left" and (not frames or frames[-1][0] != "left"):
                    refuse(f"\\{word} without its opening command \\left")
                if word == "left":
                    frames.append(("left", "math", None))
                elif word == "right":
                    frames.pop()
                j = end
            elif word in ("tabcolsep", "arraycolsep"):
                refuse(f"\\{word} outside \\setlength{{\\{word}}}{{...}}")
            if word in _ARGUMENTS:
                arguments = _ARGUMENTS[word].match(text[j:])
                if arguments is None:
                    refuse(f"the arguments {text[j : j + 30]!r} of \\{word} are not ones it takes")
                j += arguments.end()
            if word in _TABLE_COMMANDS:
                if not in_table(_TABLES):
                    if frames:
                        refuse(f"the table command \\{word} outside the rows of a tabular or array")
                    outside.append(f"the table command \\{word} outside a table")
                if word == "multicolumn" and not at_cell:
                    refuse('\\multicolumn not at the start of a cell (pdflatex: "Misplaced \\omit")')
                if word != "multicolumn":
                    if not at_row:
                        refuse(f'the rule \\{word} not at the start of a row (pdflatex: "Misplaced \\noalign")')
                    row_start = cell_start = True
            if word in _DECLARATIONS and not frames:
                outside.append(
                    f"the declaration \\{word} outside a group (it would hold for the rest of the "
                    "paper: put it inside {...} or \\begingroup...\\endgroup)"
                )
            i = j
            continue
        if ch in _UNESCAPED:
            refuse(_UNESCAPED[ch])
        if ch == "&":
            if not in_table(_ALIGNING):
                if frames or not alignment:
                    refuse("an alignment sign & outside a table (write \\&)")
                outside.append("an alignment sign & outside a table (write \\&; the rows of a table end with \\\\)")
            cell_start = True
        elif ch == "{":
            frames.append(("{", mode(), None))
        elif ch == "}":
            if frames[-1][0] != "{":  # braces balance, so some frame is open
                kind, _, env = frames[-1]
                refuse(
                    f"a closing brace inside {f'the environment {env}' if kind == 'env' else _INSIDE[kind]}, "
                    "which opened after its {"
                )
            frames.pop()
        elif ch == "$":
            if frames and frames[-1][0] == "$":
                frames.pop()
            elif mode() == "math":
                if frames[-1][0] != "{" and any(kind == "$" for kind, _, _ in frames):
                    refuse(unclosed(frames[-1]))  # $\left( x$: what opened inside the maths is still open
                refuse("a $ inside maths")
            elif text.startswith("$", i + 1):
                refuse("$$ (display maths, or empty maths)")
            else:
                frames.append(("$", "math", None))
        elif ch in "^_":
            if mode() == "text":
                refuse(
                    f"{ch!r} outside maths (put the formula in $...$, or pass plain text through tex_escape, "
                    "which escapes it)"
                )
            problem = _script_problem(text, i)
            if problem:
                refuse(problem)
        i += 1
    if frames:
        refuse(unclosed(frames[-1]))
    if outside and not (alignment and row_end):
        refuse(outside[0])
    return text


#: The deepest nesting of ``{...}`` groups a figure label may have: matplotlib's mathtext parses 15
#: nested ``\sin{\left(...\right)}`` (16 groups) and then overflows Python's stack drawing them.
MAX_MATHTEXT_DEPTH = 12


def check_mathtext(text, name: str) -> str:
    """``text`` if matplotlib can draw it (a label with ``$...$`` maths), else ``ValueError`` naming
    ``name`` with matplotlib's reason on one line (matplotlib would fail at drawing, naming nothing)."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string label, got {type(text).__name__}")
    deepest = _brace_depth(text) or 0
    if deepest > MAX_MATHTEXT_DEPTH:
        raise ValueError(
            f"{name}: the label {text[:80]!r} nests {deepest} groups deep; matplotlib draws at most "
            f"{MAX_MATHTEXT_DEPTH} (deeper, its layout recursion overflows)"
        )
    parser = _mathtext_parser()
    for piece in re.findall(r"(?<!\\)\$(.*?)(?<!\\)\$", text):
        try:
            parser.parse(f"${piece}$")
        except RecursionError:
            raise ValueError(f"{name}: the label {text[:80]!r} is nested too deeply for matplotlib to draw") from None
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
        raise ValueError(
            f"{name}: {text[:80]!r} cannot be printed as is in the paper (it holds "
            f"{' '.join(repr(c) for c in bad[:6])}; write powers as ** and numbers as plain decimals)"
        )
    return text


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
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: refused before any file is made
        raise ValueError(f"text: not writable as UTF-8 ({exc.reason} at position {exc.start})") from None
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
