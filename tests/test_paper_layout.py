"""The paper as a referee reads it: floats by their text, legible figures without
internal names.

On the quick build of the pipeline tests (the session fixture ``quick_build``):

* every figure and table sits on the page of its first reference in the running
  text or on the next one, and no page of floats alone comes before the
  references (``mhanw.pipeline.layout`` reads the pages from the ``.aux`` file
  that ``paper/main.tex`` annotates);
* every figure is at most the text width wide and has no visible text under
  7 pt (``mhanw.infra.figures.legibility_problems``, recorded by
  ``figures.save`` in the executed chapters);
* the text of every figure PDF (``pdftotext``) holds no internal identifier of
  the code (regression or head-family code names, ``snake_case`` words, numpy
  reprs).

The parser of the ``.aux`` marks and the identifier patterns are also tested on
synthetic input, without a build.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from nbtools import NOTEBOOKS

from mhanw.pipeline import layout as paper_layout

#: Internal identifiers that must not appear as text in a figure: (pattern, why).
INTERNAL_NAMES = [
    (r"\bbvc\b", "code name of the bias-variance-covariance chapter"),
    (r"\bblind\b", "code name of a regression function"),
    (r"\biso_(?:cos|exp)\d*\b", "code name of a regression function"),
    # the symbol m_aniso is text too: pdftotext gives its subscript after "m" and a space or a line
    # break when the label is rotated
    (r"(?<!\bm\s)\baniso\b", "code name of a regression function"),
    (r"\bsin13\b", "code name of a regression function"),
    (r"(?m)^\s*additive\s*$", "code name of the combination rule used as a label"),
    (r"[A-Za-z0-9]_[A-Za-z0-9]", "an underscore inside a word (a code identifier)"),
    (r"\bnp\.[a-z]|\bdtype\b|\barray\(", "a numpy repr"),
    (r"\bNone\b|\bnan\b|\bTrue\b|\bFalse\b", "a Python value printed as text"),
]


def internal_names(text: str) -> list[str]:
    """The internal identifiers found in ``text``, each once."""
    found, spans = [], []
    for pattern, why in INTERNAL_NAMES:
        for m in re.finditer(pattern, text):
            if any(m.start() < end and start < m.end() for start, end in spans):
                continue  # part of a name already reported
            spans.append(m.span())
            hit = f"{m.group(0).strip()!r} ({why})"
            if hit not in found:
                found.append(hit)
    return found


def pdf_text(pdf) -> str:
    return subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True).stdout


def pdf_width_pt(pdf) -> float:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^Page size:\s+([0-9.]+) x ([0-9.]+) pts", info, flags=re.M)
    assert m, f"pdfinfo gave no page size for {pdf}"
    return float(m.group(1))


# ---- on the quick build ---------------------------------------------------------------
@pytest.mark.slow
def test_every_float_is_on_the_page_of_its_first_reference_or_the_next(quick_build):
    layout = paper_layout.read_layout(quick_build / "build" / "paper" / "main.aux")
    assert len(layout.floats) >= 10, "the .aux lists fewer floats than the paper has"
    assert layout.references_page, "the .aux does not say where the references start"
    assert not layout.problems, (
        "floats away from their text:\n" + paper_layout.report(layout) + "\n" + "\n".join(layout.problems)
    )


@pytest.mark.slow
def test_no_line_of_the_paper_overflows_its_margin_by_more_than_5pt(quick_build):
    log = (quick_build / "build" / "paper" / "main.log").read_text(errors="replace")
    widths = [float(w) for w in re.findall(r"^Overfull \\hbox \(([0-9.]+)pt too wide\)", log, flags=re.M)]
    assert "Output written on " in log, "the log is not a finished pdflatex run"
    worst = max(widths, default=0.0)
    assert worst <= 5.0, f"an overfull box {worst:.1f} pt wide (of {len(widths)}): see build/paper/main.log"


@pytest.mark.slow
def test_every_figure_is_legible_at_print_size(quick_build):
    copy = quick_build
    problems = []
    for path in NOTEBOOKS:
        nb = json.loads((copy / "build" / "notebooks" / f"{path.stem}.ipynb").read_text())
        for cell in nb["cells"]:
            for out in cell.get("outputs", []):
                meta = out.get("metadata", {}).get("mhanw", {})
                for p in meta.get("legibility", []):
                    problems.append(f"{meta.get('figure')}: {p}")
    for pdf in sorted((copy / "figures").glob("[0-9][0-9]_*.pdf")):
        width = pdf_width_pt(pdf) / 72
        if width > 6.3 + 1e-3:
            problems.append(f"{pdf.stem}: {width:.2f} in wide (text width 6.3 in)")
    assert not problems, "figures not legible at print size:\n" + "\n".join(problems)


@pytest.mark.slow
def test_no_figure_shows_an_internal_identifier(quick_build):
    pdfs = sorted((quick_build / "figures").glob("[0-9][0-9]_*.pdf"))
    assert pdfs
    found = [f"{pdf.stem}: {hit}" for pdf in pdfs for hit in internal_names(pdf_text(pdf))]
    assert not found, "internal identifiers in figures:\n" + "\n".join(found)


# ---- without a build -----------------------------------------------------------------
AUX = r"""\relax
\mhanwref{fig:a}{2}{text}
\newlabel{fig:a}{{1}{2}{Caption with \ref {sec:x}}{figure.1}{}}
\mhanwref{sec:x}{2}{float}
\mhanwref{fig:b}{3}{float}
\mhanwref{fig:b}{4}{text}
\mhanwref{fig:b}{5}{text}
\newlabel{fig:b}{{2}{6}{}{figure.2}{}}
\newlabel{tab:c}{{1}{4}{}{table.1}{}}
\mhanwref{tab:c}{5}{text}
\newlabel{tab:d}{{2}{7}{}{table.2}{}}
\newlabel{sec:x}{{3}{3}{}{section.3}{}}
\mhanwfloatpage{6}
\mhanwfloatpage{9}
\mhanwreferences{8}
"""


def test_layout_reads_pages_of_floats_and_first_text_references(tmp_path):
    aux = tmp_path / "main.aux"
    aux.write_text(AUX)
    layout = paper_layout.read_layout(aux)
    got = {p.label: (p.page, p.first_ref) for p in layout.floats}
    # references inside floats do not count; sections are not floats
    assert got == {"fig:a": (2, 2), "fig:b": (6, 4), "tab:c": (4, 5), "tab:d": (7, None)}
    assert layout.float_pages == [6, 9] and layout.references_page == 8
    problems = "\n".join(layout.problems)
    assert "fig:a" not in problems
    assert "fig:b (2): on page 6, 2 pages after its first reference (page 4)" in problems
    assert "tab:c (1): on page 4, before its first reference (page 5)" in problems
    assert "tab:d (2): no reference in the running text" in problems
    assert "page 6 holds floats only" in problems and "page 9" not in problems
    assert paper_layout.main([str(aux)]) == 1


def test_layout_refuses_an_aux_without_the_marks(tmp_path):
    aux = tmp_path / "main.aux"
    aux.write_text("\\relax\n\\newlabel{fig:a}{{1}{2}{}{figure.1}{}}\n")
    with pytest.raises(ValueError, match="no .mhanwref lines"):
        paper_layout.read_layout(aux)


@pytest.mark.parametrize(
    "text",
    [
        "IMSE, iso_cos",
        "bvc",
        "blind heads",
        "aniso",
        "IMSE\naniso",
        "sin13",
        "np.float64(0.5)",
        "iso_cos8",
        "additive\n",
        "head_weights",
        "nan",
    ],
)
def test_internal_names_are_found(text):
    assert internal_names(text), text


@pytest.mark.parametrize(
    "text",
    [
        "IMSE of m iso",
        "averaged\nadditive rule\n",
        "anisotropic m",
        "sin(1.5 ||x||)",
        "HDIPA",
        "blinding",
        "Nadaraya-Watson",
        "maniso",
        "m\naniso\nHd",
    ],
)
def test_ordinary_figure_text_passes(text):
    assert not internal_names(text), text
