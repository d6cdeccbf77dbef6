"""The records' plain notation, written as the paper and the chapters write it.

Verdict records (:mod:`mhanw.infra.verdicts`) are plain text: the indices are
named ``HDI_PA``, ``HDI_printed``, ``HDI_RV``, an average correlation
``rho_bar``, and ``$...$`` holds a symbol the text defines (``$m_{\\cos,1.5}$``).
Readers see them typeset: in the paper through the macros of ``paper/main.tex``
(``$\\HDIpa$``), in the chapters, the book and the README as Markdown math
(``$\\mathrm{HDI}_{\\mathrm{PA}}$``).  This table is the one place that maps one to
the other: the paper's LaTeX (:mod:`mhanw.infra.texout`), the ledger's and the README's claims
tables (:mod:`mhanw.pipeline.ledger`, :mod:`mhanw.pipeline.theorems`), the book
(:mod:`mhanw.pipeline.book`) and a chapter's "What we found"
(:func:`mhanw.infra.verdicts.findings_markdown`) all use it.
"""

from __future__ import annotations

import re

#: Plain name in a record -> the paper's symbol (math mode; ``\HDIpa`` etc. are defined in paper/main.tex).
TEX = {
    "HDI_PA": r"\HDIpa",
    "HDI_printed": r"\HDIpr",
    "HDI_paper": r"\HDIpr",
    "HDI_RV": r"\HDIrv",
    "rho_bar": r"\bar\rho",
    "gamma_hat": r"\hat\gamma",
    "n_eff": r"n_{\mathrm{eff}}",
    "rho_mc": r"\rho_{\mathrm{MC}}",
    "rho_closed": r"\rho_{\mathrm{closed}}",
}

#: Plain name -> Markdown math (no paper macros outside the paper).
MARKDOWN = {
    **TEX,
    "HDI_PA": r"\mathrm{HDI}_{\mathrm{PA}}",
    "HDI_printed": r"\mathrm{HDI}_{\mathrm{printed}}",
    "HDI_paper": r"\mathrm{HDI}_{\mathrm{printed}}",
    "HDI_RV": r"\mathrm{HDI}_{\mathrm{RV}}",
}

_MATH = re.compile(r"(\$[^$]+\$)")
#: The characters Markdown reads as markup outside math (``\\ ` * _ [ ] < > #``).
_SPECIAL = re.compile(r"([\\`*_\[\]<>#])")


def _markdown(text: str, escape) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    out = []
    for i, piece in enumerate(_MATH.split(text)):
        if i % 2:
            out.append(piece)
            continue
        out += [f"${t}$" if is_math else escape(t) for is_math, t in plain_math(piece, MARKDOWN) if t]
    return join_maths("".join(out))


def markdown_text(text: str) -> str:
    """Record text as Markdown: its plain notation as inline math (:func:`plain_math`: ``HDI_PA = 0.5``
    -> ``$\\mathrm{HDI}_{\\mathrm{PA}}$ = 0.5``, ``d_k*`` -> ``$d_{k}^{*}$``); math already in ``$...$``
    is kept; nothing else changes."""
    return _markdown(text, lambda t: t)


def markdown_safe(text: str) -> str:
    """Record text as Markdown that renders as written: the notation as math (:func:`markdown_text`),
    and outside ``$...$`` every character Markdown would read as markup (``\\ ` * _ [ ] < > #``)
    escaped, so that a star left in the text keeps its star inside ``**...**``."""
    return _markdown(text, lambda t: _SPECIAL.sub(r"\\\1", t))


# --------------------------------------------------------------------------- plain maths in record text

#: Unicode Greek letter -> its name (``ρ`` -> ``rho``); a name standing alone is typeset as the letter.
GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "τ": "tau",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
    "Γ": "Gamma",
    "Δ": "Delta",
    "Θ": "Theta",
    "Λ": "Lambda",
    "Σ": "Sigma",
    "Φ": "Phi",
    "Ω": "Omega",
}
_GREEK_WORDS = "|".join(sorted(set(GREEK.values()), key=len, reverse=True))
#: ``HDI_PA``, ``rho_bar``, and a letter or Greek name with a subscript (``d_k``, ``kappa_jj'``, ``e_1``).
_PLAIN_SYMBOL = re.compile(
    "(?<![A-Za-z0-9\\\\])("
    + "|".join(map(re.escape, TEX))
    + "|(?:"
    + _GREEK_WORDS
    + r"|[A-Za-z])_(?:[A-Za-z0-9]{1,3}'?)(?![A-Za-z0-9_]))"
)
#: An optimum written with a star: ``d_k*``, ``H*``, ``gamma*(H, rho)`` (never ``x**2`` or ``a*b``).
_STARRED = re.compile(
    "(?<![A-Za-z0-9\\\\*])((?:" + _GREEK_WORDS + r"|[A-Za-z])(?:_[A-Za-z0-9]{1,3})?)\*(?![*A-Za-z0-9_])"
)
#: Plain relations as the paper's symbols.
RELATIONS = {"<=": r"\le", ">=": r"\ge", "!=": r"\ne", "->": r"\to", "~": r"\sim"}
#: A braced subscript written in plain text: ``m_{\cos,1.2}``, ``m_{\mathrm{aniso}}``, ``sum_{j != j'}``.
_BRACED_SUB = re.compile(r"(?<![A-Za-z0-9\\])(sum|[A-Za-z])_\{((?:[^{}$]|\{[^{}$]*\})+)\}")
_EXPONENT_BODY = r"\^(\(((?:[^()$]|\([^()$]*\))*)\)|-?(?:[A-Za-z]+_[A-Za-z0-9]{1,3}'?|[A-Za-z0-9.]+))"
#: A plain exponent after ``^``: ``^(-d_k/2)``, ``^(2/(4+d))``, ``^(1/4)``, ``^-1``, ``^2``, ``^d_k``.
_EXPONENT = re.compile(_EXPONENT_BODY)
#: A power of a group in parentheses: ``(ln n)^(2/(4+d))``, ``(1 + 2/d_k)^(-d_k/2)``.
_GROUP_POWER = re.compile(r"\(([^()$]+)\)" + _EXPONENT_BODY)
#: A square root of a plain argument: ``sqrt(d_k)``.
_SQRT = re.compile(r"(?<![A-Za-z0-9\\])sqrt\(([^()$]+)\)")
#: ``ln`` and ``log`` as functions (``ln n``, ``log(n)``), not inside a word or before a digit.
_FUNCTION = re.compile(r"(?<![A-Za-z0-9\\])(ln|log)(?=[ (])")
#: What may stand in an exponent or a subscript typeset as maths (anything else stays text).
_MATH_SAFE = re.compile(r"[A-Za-z0-9_+\-/.,' =!<>~\\{}()*|]*")
#: A Greek letter written as its name, standing alone (``beta = 1``, ``sigma^2``, ``angle phi``).
_GREEK_NAME = re.compile("(?<![A-Za-z0-9\\\\])(" + _GREEK_WORDS + ")(?![A-Za-z0-9_])")
#: A norm written with bars: ``||G||_F`` -> ``\lVert G\rVert_{F}``.
_PLAIN_NORM = re.compile(r"\|\|([A-Za-z])\|\|(?:_([A-Za-z0-9]))?")
#: ``sum_j`` (a plain sum over one index) as ``\sum_{j}``.
_PLAIN_SUM = re.compile(r"(?<![A-Za-z0-9\\])sum_([A-Za-z0-9]{1,3}'?)(?![A-Za-z0-9_])")


def _symbol(token: str, names: dict) -> str:
    """A named symbol (``HDI_PA``) or a letter with a subscript (``d_k``, ``kappa_jj'``) as maths."""
    if token in names:
        return names[token]
    base, sub = token.split("_", 1)
    base = f"\\{base}" if base in GREEK.values() else base
    return f"{base}_{{{sub}}}"


def _letter(token: str, names: dict) -> str:
    """A letter, a Greek name or a subscripted letter (the base of a star) as maths."""
    if "_" in token:
        return _symbol(token, names)
    return f"\\{token}" if token in GREEK.values() else token


def _balanced(text: str) -> bool:
    """Whether the braces of ``text`` open before they close and all close (``{)`` would leave maths open)."""
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _around(before: str, inner: str | None, after: str) -> str | None:
    """``before + inner + after``, or ``None`` when ``inner`` is (not plain notation)."""
    return None if inner is None else before + inner + after


def _math_inner(text: str, names: dict) -> str | None:
    """Plain text inside an exponent, a group or a subscript as maths (``-d_k/2`` -> ``-d_{k}/2``,
    ``ln n`` -> ``\\ln n``, ``sum_j a_j`` -> ``\\sum_{j} a_{j}``), or ``None`` when it holds something
    that is not plain notation (a ``*`` that is not a star of an optimum, a ``^`` or ``_`` left without its
    symbol, unbalanced braces, a backslash before no command, a ``$``, a ``%``)."""
    if not _MATH_SAFE.fullmatch(text) or not _balanced(text) or re.search(r"\\(?![A-Za-z])", text):
        return None
    if re.fullmatch(r"\(\d+\)", text):  # an index in parentheses (``C^(1)``) keeps them
        return text
    out = ""
    for is_math, t in plain_math(text, names):  # the text is shorter than the piece it came from
        if not is_math and re.search(r"[*^_]", t):  # a star, or a script left without its symbol (``^(_)``)
            return None
        gap = " " if re.search(r"\\[A-Za-z]+$", out) and t[:1].isalpha() else ""  # ``\ne`` + ``j``: ``\ne j``
        out += gap + t
    return out


def _exponent_body(m: re.Match, at: int = 1) -> str:
    """The exponent of an exponent match (groups ``at``, ``at + 1``): ``(1/4)`` -> ``1/4``, ``(1)`` whole."""
    inner = m.group(at + 1)
    return m.group(at) if inner is None or re.fullmatch(r"\d+", inner) else inner


def _group_power(m: re.Match, names: dict) -> str | None:
    base, power = _math_inner(m.group(1), names), _math_inner(_exponent_body(m, 2), names)
    return None if base is None or power is None else f"({base})^{{{power}}}"


def plain_math(piece: str, names: dict = TEX) -> list[tuple[bool, str]]:
    """A piece of plain record text (no ``$``) split into ``(is_math, text)``: square roots
    (``sqrt(d_k)``), powers of groups (``(ln n)^(2/(4+d))``), braced subscripts (``m_{\\cos,1.2}``),
    exponents (``^(1/4)``), sums (``sum_j``), relations (``<=``), norms (``||G||_F``), starred optima
    (``d_k*``), the named symbols and subscripted letters (``HDI_PA``, ``d_k``), ``ln`` and Greek names
    (``beta``) as maths, written with ``names`` (:data:`TEX` for the paper, :data:`MARKDOWN` elsewhere);
    the rest as text, still to escape.  The paper (:func:`mhanw.infra.texout.tex_text`) and the chapters
    and the book (:func:`markdown_text`) typeset record text with this one function."""
    found: list[tuple[int, int, str]] = []
    for pattern, render in (
        (_SQRT, lambda m: _around("\\sqrt{", _math_inner(m.group(1), names), "}")),
        (_GROUP_POWER, lambda m: _group_power(m, names)),
        (
            _BRACED_SUB,
            lambda m: _around(
                (r"\sum" if m.group(1) == "sum" else m.group(1)) + "_{", _math_inner(m.group(2), names), "}"
            ),
        ),
        (
            _EXPONENT,
            lambda m: _around("^{", _math_inner(_exponent_body(m), names), "}"),
        ),
        (_PLAIN_SUM, lambda m: f"\\sum_{{{m.group(1)}}}"),
        (re.compile("|".join(map(re.escape, RELATIONS))), lambda m: RELATIONS[m.group(0)]),
        (_PLAIN_NORM, lambda m: f"\\lVert {m.group(1)}\\rVert" + (f"_{{{m.group(2)}}}" if m.group(2) else "")),
        (_STARRED, lambda m: _letter(m.group(1), names) + "^{\\ast}"),
        (_PLAIN_SYMBOL, lambda m: _symbol(m.group(1), names)),
        (_FUNCTION, lambda m: "\\" + m.group(1)),
        (_GREEK_NAME, lambda m: f"\\{m.group(1)}"),
    ):
        for m in pattern.finditer(piece):
            if any(m.start() < e and s < m.end() for s, e, _ in found):
                continue
            tex = render(m)
            if tex is not None:
                found.append((m.start(), m.end(), tex))
    out, last = [], 0
    for s, e, tex in sorted(found):
        out += [(False, piece[last:s]), (True, tex)]
        last = e
    return out + [(False, piece[last:])]


def join_maths(text: str) -> str:
    """Adjacent inline maths as one (``$a$$b$`` -> ``$ab$``; Markdown would read ``$$`` as display
    maths), with an empty group before a super- or subscript that would otherwise follow another
    (``$^{2}$$^{2}$`` -> ``$^{2}{}^{2}$``, not the "Double superscript" that pdflatex and mathtext refuse),
    and a space after a command before a letter (``$\\le$$d$`` -> ``$\\le d$``, not the undefined ``\\led``)."""
    for mark in ("^", "_"):
        m = re.escape(mark)
        text = re.sub(rf"({m}(?:\{{[^{{}}]*\}}|\\?\w))\$\$(?={m})", r"\1{}", text)
    text = re.sub(r"(\\[A-Za-z]+)\$\$(?=[A-Za-z])", r"\1 $$", text)  # ``$\le$$d$``: ``\le d``, not ``\led``
    return re.sub(r"(?<!\\)\$\$", "", text)  # never the "$" of an escaped "\$" and the next maths
