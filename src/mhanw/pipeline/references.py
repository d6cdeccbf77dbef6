"""References that cannot go stale: chapter prose cites the paper and the ledger by label, the book
build writes the numbers.

The syntax, in any Markdown cell of a chapter or any ``book/*.md`` page (a Markdown link whose target
names what it cites)::

    [](paper:sec:hdi)            -> "Section 6", a link to that section of the paper's PDF
    [](paper:fig:hdi-mse)        -> "Figure 3"         (any \\label of the paper: sections, figures,
    [](paper:tab:claims)         -> "Table 2"           tables, equations, appendices)
    [the HDI's section](paper:sec:hdi)   -> the text as written, linked
    [](claim:thm-4.2/equal-hdi)  -> "Theorem 4.2: equal HDI", a link to its record on the ledger page
    [](claim:thm-4.2)            -> "Theorem 4.2", a link to the claim's group on the ledger page

The numbers come from the paper's ``.aux`` file (``build/paper/main.aux``: LaTeX's own numbering,
so the book and the PDF cannot disagree) and the names from the ledger
(:func:`mhanw.pipeline.ledger.claim_title`).  A reference that does not resolve stops the book
(:class:`ReferenceError`, naming the page and the label); ``tests/test_book.py`` reads every
reference of every chapter and checks it against the ``.aux`` and the ledger.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from . import ledger

#: A reference: ``[text](paper:LABEL)`` or ``[text](claim:ID)`` (text may be empty).
REFERENCE = re.compile(r"\[([^\]\n]*)\]\((paper|claim):([^)\s]+)\)")
#: The words of a number by the kind of LaTeX counter its hyperref anchor names.
_KINDS = {
    "section": "Section",
    "subsection": "Section",
    "subsubsection": "Section",
    "appendix": "Appendix",
    "figure": "Figure",
    "table": "Table",
    "equation": "Equation",
    "AMS": "Equation",
    "paragraph": "Section",
}
_LABEL_KINDS = {
    "sec": "Section",
    "subsec": "Section",
    "fig": "Figure",
    "tab": "Table",
    "eq": "Equation",
    "app": "Appendix",
}


class ReferenceError(ValueError):  # noqa: A001 - the book's own error for a reference; shadows no caller's
    """A reference in the prose that names no label of the paper or no claim of the ledger."""


@dataclass(frozen=True)
class PaperLabel:
    """One ``\\newlabel`` of the paper's ``.aux``: the number LaTeX printed, its page, title and anchor."""

    label: str
    number: str
    page: str
    title: str
    anchor: str

    @property
    def kind(self) -> str:
        """``Section``, ``Figure``, ``Table``, ``Equation`` or ``Appendix`` (from the anchor, else the label)."""
        counter = self.anchor.split(".", 1)[0]
        if counter in _KINDS:
            return "Appendix" if counter == "section" and re.fullmatch(r"[A-Z]", self.number) else _KINDS[counter]
        return _LABEL_KINDS.get(self.label.split(":", 1)[0], "Section")

    @property
    def text(self) -> str:
        """``Section 6``, ``Figure 3``, ``Equation (4)``."""
        return f"{self.kind} ({self.number})" if self.kind == "Equation" else f"{self.kind} {self.number}"


def _groups(text: str, start: int, count: int) -> tuple[list[str], int]:
    """``count`` brace groups of ``text`` from ``start`` (nesting kept), and where they end."""
    out, i = [], start
    for _ in range(count):
        while i < len(text) and text[i] in " \t":
            i += 1
        if i >= len(text) or text[i] != "{":
            break
        depth, j = 0, i
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        out.append(text[i + 1 : j])
        i = j + 1
    return out, i


def read_aux(path) -> dict[str, PaperLabel]:
    """``{label: PaperLabel}`` of every ``\\newlabel`` in a LaTeX ``.aux`` file (hyperref's five fields)."""
    return read_aux_text(Path(path).read_text(encoding="utf-8", errors="replace"))


def read_aux_text(text: str) -> dict[str, PaperLabel]:
    """:func:`read_aux` of the text of an ``.aux`` file."""
    out = {}
    for m in re.finditer(r"\\newlabel\{([^}]+)\}", text):
        label = m.group(1)
        outer, _ = _groups(text, m.end(), 1)
        if not outer:
            continue
        parts, _ = _groups(outer[0], 0, 5)
        if len(parts) < 2 or label.endswith("@cref"):
            continue
        parts += [""] * (5 - len(parts))
        number = re.sub(r"\\[A-Za-z@]+\s*|[{}]", "", parts[0]).strip()
        out[label] = PaperLabel(label, number, parts[1], parts[2], parts[3])
    return out


def _outside_code(text: str):
    """``(start, end)`` spans of ``text`` outside fenced code blocks and inline code."""
    spans, pos, fence = [], 0, None
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence is None and marker in ("```", "~~~"):
            fence = marker
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None:
            last = pos
            for m in re.finditer(r"`[^`\n]*`", line):
                spans.append((last, pos + m.start()))
                last = pos + m.end()
            spans.append((last, pos + len(line)))
        pos += len(line)
    return spans


def find(text: str) -> list[re.Match]:
    """Every reference in Markdown ``text`` (not inside code)."""
    return [m for a, b in _outside_code(text) for m in REFERENCE.finditer(text, a, b)]


@dataclass
class Resolver:
    """Turns references into link text and targets from the paper's labels and the ledger's records."""

    labels: dict[str, PaperLabel]
    records: list[dict]
    pdf: str | None = "paper/main.pdf"  # the PDF's path in the site; None: no PDF to link
    ledger_page: str = "ledger.html"

    def resolve(self, kind: str, target: str, text: str = "") -> tuple[str, str | None]:
        """``(text, href)`` of one reference (``href`` None when there is no PDF to link);
        :class:`ReferenceError` when it names nothing."""
        if kind == "paper":
            lab = self.labels.get(target)
            if lab is None:
                raise ReferenceError(
                    f"paper:{target}: no such label in the paper's .aux"
                    + ("" if self.labels else " (the paper has not been built)")
                )
            href = f"{self.pdf}#nameddest={lab.anchor}" if self.pdf and lab.anchor else self.pdf
            return text or lab.text, href
        if kind == "claim":
            ids = {r["claim"] for r in self.records}
            groups = {ledger.group_of(c) for c in ids}
            if target not in ids and target not in groups:
                raise ReferenceError(f"claim:{target}: no record or claim of that id in the ledger")
            where = anchor(target) if target in groups else record_anchor(target)
            return text or ledger.plain_text(ledger.claim_title(target)), f"{self.ledger_page}#{where}"
        raise ReferenceError(f"{kind}:{target}: a reference is paper:LABEL or claim:ID")

    def markdown(self, text: str, where: str) -> str:
        """``text`` with every reference replaced by an HTML link (:class:`ReferenceError` names ``where``)."""
        out, last = [], 0
        for m in find(text):
            try:
                label, href = self.resolve(m.group(2), m.group(3), m.group(1).strip())
            except ReferenceError as exc:
                raise ReferenceError(f"{where}: {exc}") from None
            out.append(text[last : m.start()])
            body = html.escape(label, quote=False)
            out.append(f'<a class="mhanw-ref" href="{html.escape(href)}">{body}</a>' if href else body)
            last = m.end()
        return "".join(out) + text[last:]


def _slug(claim: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", claim.lower()).strip("-")


def anchor(group: str) -> str:
    """The ledger page's anchor of a claim group (``thm-4.2`` -> ``ledger-thm-4-2``)."""
    return "ledger-" + _slug(group)


def record_anchor(claim: str) -> str:
    """The ledger page's anchor of one record (``thm-4.2/equal-hdi`` -> ``record-thm-4-2-equal-hdi``); a
    record whose id is its group's (``thm-7.1``) has its own, since one page cannot hold an id twice."""
    return "record-" + _slug(claim)


def chapter_section(chapter: str, records: list[dict], labels: dict[str, PaperLabel]) -> PaperLabel | None:
    """The paper's section that reports ``chapter`` (the section label its records name, read from the
    ``.aux``), or None."""
    for r in records:
        if r.get("chapter") == chapter and r.get("section") in labels:
            return labels[r["section"]]
    return None
