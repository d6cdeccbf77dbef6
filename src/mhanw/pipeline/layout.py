"""Where the paper's floats landed: the page of every figure and table against the
page of its first reference in the running text, and the pages made of floats only.

    python -m mhanw.pipeline layout [build/paper/main.aux]

Reads what ``paper/main.tex`` writes to the ``.aux`` file while LaTeX ships the
pages out: ``\\newlabel{fig:x}{{3}{12}...}`` (the float's number and page, from its
``\\label``), ``\\mhanwref{fig:x}{11}{text}`` (one line per ``\\ref``; ``text`` for
the running text, ``float`` for a reference inside a caption or table) and
``\\mhanwfloatpage{14}`` (a page assembled from floats alone).  Prints one line per
float and exits with status 1 when a float lands before its first reference or more
than one page after it, has no reference in the text, or when a page of floats only
comes before the references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: A float may sit on the page of its first reference or on the next one.
MAX_PAGES_AFTER = 1
#: Labels of floats, by their prefix.
FLOAT_PREFIXES = ("fig:", "tab:")

_NEWLABEL = re.compile(r"^\\newlabel\{([^}]*)\}\{\{([^}]*)\}\{(\d+)\}")
_REF = re.compile(r"^\\mhanwref\{([^}]*)\}\{(\d+)\}\{(text|float)\}")
_FLOATPAGE = re.compile(r"^\\mhanwfloatpage\{(\d+)\}")
_BIB = re.compile(r"^\\bibdata\{|^\\newlabel\{sec:references\}")


@dataclass(frozen=True)
class Placement:
    label: str
    number: str
    page: int  # the page of the float (of its \label)
    first_ref: int | None  # the page of its first reference in the running text

    @property
    def distance(self) -> int | None:
        return None if self.first_ref is None else self.page - self.first_ref

    @property
    def problem(self) -> str | None:
        """Why this placement is not acceptable, or None."""
        distance = self.distance
        if distance is None:
            return "no reference in the running text"
        if distance < 0:
            return f"on page {self.page}, before its first reference (page {self.first_ref})"
        if distance > MAX_PAGES_AFTER:
            return f"on page {self.page}, {distance} pages after its first reference (page {self.first_ref})"
        return None


@dataclass(frozen=True)
class Layout:
    floats: list[Placement]
    float_pages: list[int]  # pages of floats only, in order
    references_page: int | None  # the page where the bibliography starts, if known

    @property
    def problems(self) -> list[str]:
        out = [f"{p.label} ({p.number}): {p.problem}" for p in self.floats if p.problem]
        last_text = self.references_page
        for page in self.float_pages:
            if last_text is None or page < last_text:
                out.append(f"page {page} holds floats only")
        return out


def read_layout(aux: Path) -> Layout:
    """The placements recorded in ``aux`` (LaTeX's .aux of ``paper/main.tex``)."""
    text = Path(aux).read_text(encoding="utf-8", errors="replace")
    labels: dict[str, tuple[str, int]] = {}
    first_ref: dict[str, int] = {}
    float_pages: list[int] = []
    refs_page = None
    seen_marks = False
    for line in text.splitlines():
        if m := _NEWLABEL.match(line):
            labels[m.group(1)] = (m.group(2), int(m.group(3)))
        elif m := _REF.match(line):
            seen_marks = True
            if m.group(3) == "text":
                page = int(m.group(2))
                first_ref[m.group(1)] = min(page, first_ref.get(m.group(1), page))
        elif m := _FLOATPAGE.match(line):
            float_pages.append(int(m.group(1)))
        elif line.startswith("\\mhanwreferences{"):
            refs_page = int(line[len("\\mhanwreferences{") :].rstrip("}"))
    if not seen_marks:
        raise ValueError(f"{aux}: no \\mhanwref lines; was it written by paper/main.tex with the layout marks?")
    floats = [
        Placement(label, number, page, first_ref.get(label))
        for label, (number, page) in labels.items()
        if label.startswith(FLOAT_PREFIXES)
    ]
    floats.sort(key=lambda p: (p.page, p.label))
    return Layout(floats, sorted(set(float_pages)), refs_page)


def report(layout: Layout) -> str:
    lines = [f"{'float':<26} {'no.':>4} {'page':>5} {'1st ref':>8} {'after':>6}"]
    for p in layout.floats:
        lines.append(
            f"{p.label:<26} {p.number:>4} {p.page:>5} {p.first_ref if p.first_ref is not None else '-':>8} "
            f"{p.distance if p.distance is not None else '-':>6}"
        )
    lines.append(
        f"pages of floats only: {', '.join(map(str, layout.float_pages)) or 'none'}"
        f" (references start on page {layout.references_page})"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    aux = Path(argv[0] if argv else "build/paper/main.aux")
    layout = read_layout(aux)
    print(report(layout))
    for problem in layout.problems:
        print(f"*** {problem}")
    return 1 if layout.problems else 0
