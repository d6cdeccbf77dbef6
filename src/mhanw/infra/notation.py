"""The records' plain notation, written as the paper and the chapters write it.

Verdict records (:mod:`mhanw.infra.verdicts`) are plain text: the indices are
named ``HDI_PA``, ``HDI_printed``, ``HDI_RV``, an average correlation
``rho_bar``, and ``$...$`` holds a symbol the text defines (``$m_{\\cos,1.5}$``).
Readers see them typeset: in the paper through the macros of ``paper/main.tex``
(``$\\HDIpa$``), in the chapters, the book and the README as Markdown math
(``$\\mathrm{HDI}_{\\mathrm{PA}}$``).  This table is the one place that maps one to
the other; ``scripts/claimslib.py`` (the paper's and README's claims tables)
and :func:`mhanw.infra.verdicts.findings_markdown` (a chapter's "What we found")
both use it.
"""

from __future__ import annotations

import re

#: Plain name in a record -> the paper's symbol (math mode; ``\HDIpa`` etc. are defined in paper/main.tex).
TEX = {
    "HDI_PA": r"\HDIpa", "HDI_printed": r"\HDIpr", "HDI_paper": r"\HDIpr", "HDI_RV": r"\HDIrv",
    "rho_bar": r"\bar\rho", "gamma_hat": r"\hat\gamma", "n_eff": r"n_{\mathrm{eff}}", "rho_mc": r"\rho_{\mathrm{MC}}",
    "rho_closed": r"\rho_{\mathrm{closed}}",
}

#: Plain name -> Markdown math (no paper macros outside the paper).
MARKDOWN = {**TEX, "HDI_PA": r"\mathrm{HDI}_{\mathrm{PA}}", "HDI_printed": r"\mathrm{HDI}_{\mathrm{printed}}",
            "HDI_paper": r"\mathrm{HDI}_{\mathrm{printed}}", "HDI_RV": r"\mathrm{HDI}_{\mathrm{RV}}"}

_NAMED = re.compile("(?<![A-Za-z0-9\\\\])(" + "|".join(map(re.escape, MARKDOWN)) + ")(?![A-Za-z0-9_])")
_MATH = re.compile(r"(\$[^$]+\$)")
#: The characters Markdown reads as markup outside math (``\\ ` * _ [ ] < > #``).
_SPECIAL = re.compile(r"([\\`*_\[\]<>#])")


def markdown_text(text: str) -> str:
    """Record text as Markdown: each named symbol outside ``$...$`` becomes inline math
    (``HDI_PA = 0.5`` -> ``$\\mathrm{HDI}_{\\mathrm{PA}}$ = 0.5``); math already in ``$...$`` is kept."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    pieces = _MATH.split(text)
    return "".join(p if i % 2 else _NAMED.sub(lambda m: f"${MARKDOWN[m.group(1)]}$", p)
                   for i, p in enumerate(pieces))


def markdown_safe(text: str) -> str:
    """Record text as Markdown that renders as written: the named notation as math
    (:func:`markdown_text`), and outside ``$...$`` every character Markdown would read as markup
    (``\\ ` * _ [ ] < > #``) escaped, so that ``gamma*(H, rho) > 1`` inside ``**...**`` keeps its star."""
    pieces = _MATH.split(markdown_text(text))
    return "".join(p if i % 2 else _SPECIAL.sub(r"\\\1", p) for i, p in enumerate(pieces))
