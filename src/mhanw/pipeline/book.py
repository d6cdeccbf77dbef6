"""Render the executed chapters into a static, offline book: ``build/book/``.

Reads what the pipeline made — ``build/notebooks/NN_slug.ipynb`` (executed, never run again here),
``figures/``, ``build/paper/main.pdf`` and its ``main.aux`` (the paper's numbering), the claims ledger
``build/claims.json`` — and the committed pages: ``book/theorems.toml`` (the claims in plain words,
:mod:`mhanw.pipeline.theorems`) and every ``book/*.md``.  It assembles Sphinx sources in
``build/book-src/`` and runs Sphinx (``book/conf.py``; the book's own directives and title handling are
:mod:`mhanw.pipeline.sphinxext`).  The new site replaces ``build/book/`` only once it is complete.

The pages:

- the front page (``index``): one card per claim — the claim in plain words, what we found (the
  deciding record's verdict and number ± s.e., all its parts counted), a thumbnail of its key figure,
  a link to its chapter — then the chapters and the reference pages;
- the ledger page (``ledger``): every verdict record, grouped by claim under its human name
  (:func:`mhanw.pipeline.ledger.claim_title`), with its statement, statistics and criterion;
- one page per chapter: a header with the chapter's number and the paper section that reports it
  (from the ``.aux``: chapter 4 = Section 6, and the paper's margin says "chapter 4" back), an on-page
  contents for long chapters, every figure with its caption (the ``mhanw.caption`` of its output), and
  references to the paper and the ledger resolved (:mod:`mhanw.pipeline.references`);
- one appendix page per chapter (``NN_slug-appendix``, :func:`split_appendix`), linked from the chapter's
  header and footer: the cells the chapter tags ``appendix`` (a tagged ``##`` heading takes its whole
  section) and every verdict record of the chapter with the rule that decided it, so that the lesson
  page keeps the claim, the idea in code, the key figures, one sentence per finding and "Try it";
- on every page, one line saying what the book is (:func:`build_info`): the build's size (quick or
  paper; a quick book says its numbers are small-sample) and the git commit it was built from;
- every ``book/*.md`` page, with its references resolved; the Performance page gets this build's job
  times where it says ``<!-- timings of this build -->``;
- the API reference: where ``book/api.md`` says ``<!-- the API of the theory modules -->``, one table
  per theory module (:data:`mhanw.THEORY_MODULES`: the names of its ``__all__`` with their summaries,
  Sphinx's autosummary), and one page per module, ``api/mhanw.NAME``, with its docstring and every
  public name's (autodoc, numpy-style sections rendered by numpydoc). Each chapter's "Try it" section
  ends with links to the modules the chapter imports.
"""

from __future__ import annotations

import copy
import html
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import nbformat

from mhanw.infra import notation, prose
from mhanw.infra.verdicts import VOCABULARY

from . import ledger, references, theorems
from .chapters import RESERVED

PAPER_PDF = "paper/main.pdf"  # where the PDF sits inside the site
#: The reference pages in the order of the front page and the sidebar (any other book/*.md follows).
PAGE_ORDER = ("claims", "ledger", "glossary", "reproduce", "extend", "performance", "architecture", "api")
#: Where a page of book/ asks for the table of this build's job times.
TIMINGS_MARK = "<!-- timings of this build -->"
#: Where the Performance page shows the committed measurements (reference/performance.json).
MEASURED_MARK = "<!-- measured build times -->"
#: The pages the build writes (not in book/): the front page and the ledger page.
GENERATED_PAGES = ("index", "ledger")
#: Where the API page (``book/api.md``) asks for the tables of the theory modules.
API_MARK = "<!-- the API of the theory modules -->"
#: The API page, and the folder of its module pages (``api/mhanw.NAME``) in the book's sources.
API_PAGE = "api"
#: The heading of a chapter's exercises, where the links to the modules it calls go.
TRY_IT = re.compile(r"^##\s+Try it\s*$", flags=re.M)
#: Chapters with at least this many second-level headings get an on-page contents.
CONTENTS_FROM = 3
#: The cell tag that moves a cell (or, on a ``##`` heading, its whole section) to the chapter's appendix page.
APPENDIX_TAG = "appendix"
#: The suffix of a chapter's appendix page: ``NN_slug-appendix``.
APPENDIX_SUFFIX = "-appendix"
#: The file of the book's sources that holds :func:`build_info` (``book/conf.py`` puts its line on every page).
BUILD_INFO = "build_info.json"


class BookError(RuntimeError):
    """The book cannot be built; the message says why."""


@dataclass
class Chapter:
    name: str  # NN_slug
    title: str
    figures: list[str]
    records: list[dict] = field(default_factory=list)
    section: references.PaperLabel | None = None
    beyond: bool = False  # a chapter beyond the paper (front matter ``mhanw: beyond_paper: true``)

    @property
    def number(self) -> int:
        return int(self.name[:2])

    @property
    def appendix(self) -> str:
        """The page name of the chapter's appendix."""
        return self.name + APPENDIX_SUFFIX

    @property
    def label(self) -> str:
        """The title as HTML (math typeset), numbered once."""
        title = self.title if re.match(r"\d+\.\s", self.title) else f"{self.number}. {self.title}"
        return inline_md(title)


# ---- inline markup --------------------------------------------------------------------
MATH = '<span class="math notranslate nohighlight">\\({}\\)</span>'
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def _href(target: str) -> str:
    """A chapter's link target as the book's: ``../book/NAME.md#a`` -> ``NAME.html#a``, ``NN_slug.md`` -> ``.html``."""
    m = re.fullmatch(r"(?:\.\./book/|\.\./notebooks/)?([A-Za-z0-9_-]+)\.(?:md|ipynb)(#.*)?", target)
    return f"{m.group(1)}.html{m.group(2) or ''}" if m else target


def inline_md(text: str) -> str:
    """Markdown of one line (``code``, *em*, **strong**, $math$, [links](target)) as escaped HTML;
    math goes to a span that the book's MathJax typesets."""
    parts = re.split(r"(?<!\\)\$([^$]+)\$", text)
    if len(parts) > 1:
        return "".join(MATH.format(html.escape(p, quote=False)) if i % 2 else inline_md(p) for i, p in enumerate(parts))
    links = _LINK.split(text)
    if len(links) > 1:
        pieces = []
        for i in range(0, len(links), 3):
            pieces.append(inline_md(links[i]) if links[i] else "")
            if i + 2 < len(links):
                pieces.append(f'<a href="{html.escape(_href(links[i + 2]))}">{inline_md(links[i + 1])}</a>')
        return "".join(pieces)
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![\w*])\*([^*]+)\*(?!\w)", r"<em>\1</em>", out)
    return out


def record_html(text: str) -> str:
    """Record text (plain, named notation, ``$...$``) as HTML: the notation typeset, nothing read as markup."""
    parts = re.split(r"\$([^$]+)\$", notation.markdown_text(str(text)))
    return "".join(
        MATH.format(html.escape(p, quote=False)) if i % 2 else html.escape(p, quote=False) for i, p in enumerate(parts)
    )


def verdict_class(verdict: str) -> str:
    """The CSS class of a verdict word (``fails as stated`` -> ``mhanw-v-fails-as-stated``)."""
    return "mhanw-v-" + re.sub(r"[^a-z]+", "-", verdict.lower()).strip("-")


def verdict_anchor(verdict: str) -> str:
    """The glossary's anchor of a verdict word (``fails as stated`` -> ``verdict-fails-as-stated``)."""
    return "verdict-" + re.sub(r"[^a-z]+", "-", verdict.lower()).strip("-")


def verdict_html(verdict: str, conditions: str = "") -> str:
    badge = (
        f'<a class="mhanw-verdict {verdict_class(verdict)}" href="glossary.html#{verdict_anchor(verdict)}">'
        f"{html.escape(verdict)}</a>"
    )
    return badge + (f' <span class="mhanw-conditions">({record_html(conditions)})</span>' if conditions else "")


def record_verdict_html(r: dict) -> str:
    """A record's verdict badge with the words :func:`mhanw.pipeline.ledger.verdict_text` prints after it:
    its conditions, or, outside its conditions, the failed premise and what the numbers show."""
    words = ledger.verdict_text(r)
    rest = words[len(r["verdict"]) :].strip()
    return verdict_html(r["verdict"], rest[1:-1] if rest.startswith("(") and rest.endswith(")") else rest)


# ---- what the build made ----------------------------------------------------------------
def chapter_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if m:
                return m.group(1).strip()
    return ""


def extra_pages(root: Path) -> list[tuple[str, str]]:
    """``(stem, title)`` of every ``book/*.md`` page, in :data:`PAGE_ORDER` and then by name."""
    pages = []
    for md in (root / "book").glob("*.md"):
        if md.stem in (*GENERATED_PAGES, "README"):
            continue
        m = re.search(r"^#\s+(.+)$", md.read_text(encoding="utf-8"), flags=re.M)
        pages.append((md.stem, m.group(1).strip() if m else md.stem.replace("_", " ").capitalize()))
    rank = {s: i for i, s in enumerate(PAGE_ORDER)}
    return sorted(pages, key=lambda p: (rank.get(p[0], len(rank)), p[0]))


def load_records(root: Path) -> list[dict]:
    path = root / "build" / "claims.json"
    return ledger.load_ledger(path) if path.is_file() else []


def load_labels(root: Path) -> dict[str, references.PaperLabel]:
    aux = root / "build" / "paper" / "main.aux"
    return references.read_aux(aux) if aux.is_file() else {}


def _figure_outputs(nb) -> list[str]:
    return [
        out["metadata"]["mhanw"]["figure"]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("metadata", {}).get("mhanw", {}).get("figure")
    ]


def _figure_panels(nb) -> dict[str, dict]:
    """``{figure: its panels}`` of an executed chapter (:func:`mhanw.infra.figures.panel_boxes`, kept in
    each figure output's metadata)."""
    return {
        meta["figure"]: meta.get("panels") or {}
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if (meta := out.get("metadata", {}).get("mhanw", {})).get("figure")
    }


#: Where the front page's panel thumbnails go, under the book's sources.
THUMBS = Path("_static") / "thumbs"
#: The margin around a cropped panel, as a fraction of the figure's width and height.
THUMB_MARGIN = 0.01


def panel_thumbnail(png: Path, box, out: Path) -> None:
    """Crop the panel ``box`` (``[left, top, right, bottom]`` fractions of the image, from its top-left
    corner) out of the figure ``png`` into ``out``, with :data:`THUMB_MARGIN` around it."""
    from PIL import Image

    left, top, right, bottom = (float(v) for v in box)
    if not (0 <= left < right <= 1 and 0 <= top < bottom <= 1):
        raise BookError(f"{png.name}: panel box {box} is not inside the image")
    with Image.open(png) as im:
        w, h = im.size
        m = THUMB_MARGIN
        crop = im.crop(
            (
                int(max(0, left - m) * w),
                int(max(0, top - m) * h),
                int(min(1, right + m) * w + 0.5),
                int(min(1, bottom + m) * h + 0.5),
            )
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        crop.save(out, format="png")


def thumbnails(thms, panels: dict[str, dict], src: Path) -> dict[str, str]:
    """The front page's image of each claim whose entry names a ``panel``: ``{claim: path}`` under the
    book's sources, the panel cropped from its key figure (already in the folder ``_static/figures`` of
    ``src``).  A panel the figure does not have stops the book, naming the entry and the panels it has."""
    out = {}
    for t in thms:
        png = src / "_static" / "figures" / f"{t.figure}.png"
        if not t.panel or not png.is_file():
            continue
        have = panels.get(t.figure, {})
        if t.panel not in have:
            raise BookError(
                f"{theorems.THEOREMS_FILE}: claim {t.claim}: figure {t.figure} has no panel "
                f"{t.panel!r} (its panels: {', '.join(sorted(have)) or 'none recorded'})"
            )
        rel = THUMBS / f"{t.figure}-{t.panel}.png"
        panel_thumbnail(png, have[t.panel], src / rel)
        out[t.claim] = rel.as_posix()
    return out


# ---- what the book is: its size and its commit ------------------------------------------
#: What a build's size means, in words, for the line on every page.
SIZE_WORDS = {
    "quick": (
        "at <strong>quick</strong> size: small Monte Carlo samples, for checking the pipeline, so its numbers "
        "are small-sample (standard errors are wide and a verdict may read undecided); the paper size's "
        "numbers are the ones to quote"
    ),
    "paper": "at <strong>paper</strong> size: the Monte Carlo sizes the paper reports",
}


def build_size(root: Path) -> str:
    """The build's size, ``quick`` or ``paper``: ``build/fidelity`` (the Makefile's stamp), else the one
    fidelity every chapter's results file names, else ``unknown``."""
    stamp = root / "build" / "fidelity"
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() in SIZE_WORDS:
        return stamp.read_text(encoding="utf-8").strip()
    seen = set()
    for path in (root / "build" / "results").glob("[0-9][0-9]_*.json"):
        try:
            seen.add(json.loads(path.read_text(encoding="utf-8")).get("fidelity"))
        except (ValueError, OSError):
            continue
    return seen.pop() if len(seen) == 1 and next(iter(seen)) in SIZE_WORDS else "unknown"


def build_commit(root: Path) -> tuple[str, bool]:
    """``(short hash, dirty)`` of the git checkout ``root`` (dirty: a tracked or new source file differs
    from the commit; build products are ignored by ``.gitignore``); ``("", False)`` outside a checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=30
        )
        if head.returncode != 0 or not head.stdout.strip():
            return "", False
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return "", False
    return head.stdout.strip(), bool(status.stdout.strip()) or status.returncode != 0


def build_info(root: Path) -> dict:
    """What the book is: ``size`` (:func:`build_size`), ``commit`` and ``dirty`` (:func:`build_commit`) and
    ``html``, the line every page shows (``book/conf.py`` puts it above the page's text)."""
    size = build_size(root)
    commit, dirty = build_commit(root)
    words = SIZE_WORDS.get(size, "at an unknown size (no <code>build/fidelity</code>)")
    if commit:
        made = f"from commit <code>{html.escape(commit)}</code>" + (
            " with <strong>uncommitted changes</strong>" if dirty else ""
        )
    else:
        made = "from a tree that is not a git checkout (commit unknown)"
    line = (
        f'<div class="mhanw-build mhanw-build-{html.escape(size)}" data-size="{html.escape(size)}" '
        f'data-commit="{html.escape(commit or "unknown")}{"+dirty" if dirty else ""}">'
        f"This book was built {words}, {made}.</div>"
    )
    return {"size": size, "commit": commit, "dirty": dirty, "html": line}


# ---- how long a page reads ------------------------------------------------------------
class _MainText(HTMLParser):
    """The text of a rendered page's main part (``div.body``) without its navigation, contents, the
    build line and scripts; a formula (``span.math``, ``div.math``) counts as one word."""

    SKIP = ("mhanw-chapter-nav", "mhanw-build", "contents", "headerlink")
    VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "source", "col", "area", "base", "embed"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []  # per open element: "body", "skip", "math" or ""
        self.words: list[str] = []

    def _inside(self, kind: str) -> bool:
        return kind in self.stack

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        cls = dict(attrs).get("class") or ""
        kind = ""
        if tag == "div" and "body" in cls.split() and not self._inside("body"):
            kind = "body"
        elif tag in ("script", "style") or any(c in cls.split() for c in self.SKIP):
            kind = "skip"
        elif "math" in cls.split() and self._inside("body") and not self._inside("math"):
            kind = "math"
            if not self._inside("skip"):
                self.words.append("(formula)")
        self.stack.append(kind)

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if self._inside("body") and not self._inside("skip") and not self._inside("math"):
            self.words += data.split()


def page_words(page: Path) -> int:
    """How many words a reader meets in the main text of a rendered page (:class:`_MainText`): prose,
    visible code, tables, captions and folded blocks, each formula one word."""
    parser = _MainText()
    parser.feed(Path(page).read_text(encoding="utf-8"))
    return sum(1 for w in parser.words if re.search(r"\w", w))


# ---- a chapter's appendix -------------------------------------------------------------
def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def split_appendix(nb) -> tuple[list, list]:
    """The cells of a chapter as ``(lesson, appendix)``: a cell tagged :data:`APPENDIX_TAG` goes to the
    appendix; a tagged Markdown cell that opens with a ``##`` heading takes its whole section with it (every
    cell up to the next ``##`` heading). The title cell and the parameters cells always stay."""
    lesson: list = []
    appendix: list = []
    moving = False
    for cell in nb.cells:
        tagged = APPENDIX_TAG in _tags(cell)
        if cell.cell_type == "markdown" and re.match(r"\s*##\s", cell.source):
            moving = tagged
        keep = "parameters" in _tags(cell) or "injected-parameters" in _tags(cell)
        if cell.cell_type == "markdown" and re.match(r"\s*#\s", cell.source):
            keep, moving = True, False
        (appendix if (tagged or moving) and not keep else lesson).append(cell)
    return lesson, appendix


#: The call of a chapter's cell that prints its findings in full (:func:`mhanw.infra.verdicts.show_findings`).
FULL_FINDINGS = re.compile(r"\bshow_findings\(")
#: The heading of a chapter's findings.
FINDINGS_HEADING = re.compile(r"^##\s+What we found\s*$", flags=re.M)
#: The roles whose records the lesson states, one sentence each (the others are counted, and shown in full
#: on the appendix page): a claim of the paper, or our reading of one.
LESSON_ROLES = ("paper", "reading")


def _sentence_piece(text: str) -> str:
    text = str(text).strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def finding_sentence(r: dict) -> str:
    """One record in one sentence (HTML): its name, its verdict, what the numbers show (the record's
    finding, else its deciding number ± s.e.)."""
    detail = r.get("finding") or next(iter(ledger.statistic_texts(r)), "")
    said = f": {record_html(_sentence_piece(detail))}" if detail else ""
    return f"<strong>{record_html(ledger.claim_title(r['claim']))}</strong> {record_verdict_html(r)}{said}."


def lesson_findings(ch: Chapter) -> str:
    """What the lesson says under "What we found": one sentence per record of the paper or of a reading
    (:func:`finding_sentence`), the other records counted, and the way to the appendix that shows them all
    with their numbers and criteria."""
    stated = [r for r in ch.records if ledger.role_of(r) in LESSON_ROLES]
    others = [r for r in ch.records if ledger.role_of(r) not in LESSON_ROLES]
    items = "".join(f"<li>{finding_sentence(r)}</li>" for r in stated)
    rest = (
        f" The chapter also records {prose.number_word(len(others))} {'check' if len(others) == 1 else 'checks'} "
        "of our own "
        f"(controls and tautologies: {html.escape(ledger.counts_phrase(others, 'records'))})."
        if others
        else ""
    )
    return (
        f'<ul class="mhanw-findings">{items}</ul>\n'
        f'<p class="mhanw-findings-more">Numbers are ± one Monte Carlo standard error; the '
        f'<a href="glossary.html#verdicts">glossary</a> says what each verdict word means.{rest} '
        f'The <a href="{ch.appendix}.html">appendix</a> shows every record with all its numbers and the rule '
        "that decided it.</p>\n"
    )


def shorten_findings(nb, ch: Chapter) -> None:
    """In the lesson, "What we found" becomes :func:`lesson_findings`: the cell that prints the findings
    in full is tagged for the appendix, and the short list goes right under the heading."""
    if not ch.records:
        return
    head = next(
        (i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and FINDINGS_HEADING.search(c.source)),
        None,
    )
    full = [c for c in nb.cells if c.cell_type == "code" and FULL_FINDINGS.search(c.source)]
    if head is None or not full:
        return
    for c in full:
        c.setdefault("metadata", {}).setdefault("tags", [])
        if APPENDIX_TAG not in c.metadata["tags"]:
            c.metadata["tags"] = [*c.metadata["tags"], APPENDIX_TAG, "findings-in-full"]
    nb.cells.insert(head + 1, nbformat.v4.new_markdown_cell(lesson_findings(ch)))


def appendix_header(ch: Chapter) -> str:
    """The head of a chapter's appendix page: what it holds, and the way back to the lesson."""
    return (
        '<div class="mhanw-chapter-nav">\n'
        f"<p><strong>Appendix to chapter {ch.number}</strong> · back to the lesson: "
        f'<a href="{ch.name}.html">{ch.label}</a> · <a href="index.html">all claims</a> · '
        '<a href="glossary.html">glossary</a></p>\n'
        "<p>What the lesson leaves out: further evidence, controls, derivations and sensitivity analyses, "
        "then every verdict of the chapter with the rule that decided it.</p>\n</div>\n"
    )


def appendix_records(ch: Chapter) -> str:
    """Every verdict record of a chapter with its statistics and criterion (the ledger's blocks)."""
    if not ch.records:
        return "## Every verdict of this chapter\n\nThis chapter has recorded no verdict in this build.\n"
    return "\n".join(
        [
            "## Every verdict of this chapter, with its criterion",
            "",
            "<p>Each record: the statement checked, its verdict, the deciding numbers ± one Monte Carlo standard "
            "error and the rule that decided it, in words (the "
            '<a href="ledger.html">ledger</a> lists every chapter\'s).</p>',
            "",
            '<div class="mhanw-records">',
            *[_record_block(r) for r in ch.records],
            "</div>",
            "",
        ]
    )


def appendix_notebook(nb, cells: list, ch: Chapter):
    """The appendix page of a chapter: its title, :func:`appendix_header`, the moved ``cells`` and
    :func:`appendix_records`."""
    out = nbformat.v4.new_notebook()
    out.metadata = copy.deepcopy(nb.metadata)
    # in no table of contents: reached from its lesson, and not between two chapters in "previous/next"
    out.metadata["orphan"] = True
    moved = []
    for cell in cells:
        if "findings-in-full" in _tags(cell):
            moved.append(nbformat.v4.new_markdown_cell("## The findings in full"))
        moved.append(cell)
    cells = moved
    out.cells = [
        nbformat.v4.new_markdown_cell(
            f"# Appendix to chapter {ch.number}: {_bare_title(ch.title)}\n\n" + appendix_header(ch)
        ),
        *cells,
        nbformat.v4.new_markdown_cell(appendix_records(ch)),
        nbformat.v4.new_markdown_cell(
            '<div class="mhanw-chapter-nav">\n<p>Back to <a href="'
            f'{ch.name}.html">{ch.label}</a> · <a href="index.html">all claims</a></p>\n</div>\n'
        ),
    ]
    for cell in out.cells:
        cell.pop("id", None)
    out.nbformat_minor = 4
    return out


def _bare_title(title: str) -> str:
    """A chapter's title without its leading number (``4. The HDI`` -> ``The HDI``)."""
    return re.sub(r"^\d+\.\s+", "", title)


# ---- the front page -------------------------------------------------------------------
def _section_text(lab: references.PaperLabel | None, has_pdf: bool) -> str:
    if lab is None:
        return ""
    text = html.escape(lab.text)
    return f'<a href="{PAPER_PDF}#nameddest={html.escape(lab.anchor)}">{text}</a>' if has_pdf and lab.anchor else text


def card(
    f: theorems.Finding, ch: Chapter | None, has_pdf: bool, figures_here: set[str], thumbs: dict[str, str] | None = None
) -> str:
    """One claim as a card of the front page (HTML): its key figure (or the panel ``thumbs`` holds for
    it, with a line saying which panel and what to see), the claim, what we found."""
    t = f.theorem
    page = f"{t.chapter}.html"
    thumb = ""
    if t.figure in figures_here:
        src = (thumbs or {}).get(t.claim)
        which = (f"Panel ({t.panel})" if t.panel.isalpha() else "One panel") if src else ""
        alt = f"{which} of the key figure of {t.title}" if src else f"The key figure of {t.title}"
        thumb = (
            f'<a class="mhanw-thumb" href="{page}#figure-{t.figure}">'
            f'<img src="{src or f"_static/figures/{t.figure}.png"}" alt="{html.escape(alt)}" '
            f'loading="lazy"></a>'
        )
        said = ([f'{which} of the <a href="{page}#figure-{t.figure}">chapter\'s figure</a>.'] if src else []) + (
            [inline_md(t.look)] if t.look else []
        )
        if said:
            thumb += f'<p class="mhanw-look">{" ".join(said)}</p>'

    where = [f'<a href="{page}">chapter {ch.number if ch else int(t.chapter[:2])}</a>']
    if ch and ch.beyond:
        where.append("beyond the paper")
    if ch and ch.section:
        where.append(f"paper {_section_text(ch.section, has_pdf)}")
    number = f": {record_html(f.number)}" if f.number else ""
    if f.parts > 1 and f.part:  # say which part the verdict and the number are of
        number += f" (the part: {record_html(f.part[:1].lower() + f.part[1:] if f.part[1:2].islower() else f.part)})"
    tally = f'<p class="mhanw-tally">All its parts: {record_html(f.tally)}.</p>' if f.parts > 1 else ""
    return "\n".join(
        [
            f'<article class="mhanw-card" id="{references.anchor(t.claim)}">',
            thumb,
            '<div class="mhanw-card-body">',
            f'<p class="mhanw-card-title"><a href="{page}">{html.escape(t.title)}</a>'
            f' <span class="mhanw-where">{" · ".join(where)}</span></p>',
            f'<p class="mhanw-says"><strong>The claim.</strong> {inline_md(t.says)}</p>',
            f'<p class="mhanw-found"><strong>What we found.</strong> {_found_html(f, number)}.</p>',
            tally,
            f'<p class="mhanw-more"><a href="{page}">Read chapter {int(t.chapter[:2])}</a> · '
            f'<a href="ledger.html#{references.anchor(t.claim)}">its verdicts</a></p>',
            "</div>",
            "</article>",
        ]
    )


def _found_html(f: theorems.Finding, number: str) -> str:
    """The headline of a card: the statement's verdict and number, and the reading's apart when the claim
    has one ("identity: holds · locality (reading): fails as stated")."""
    if not f.reading_verdict:
        return f"{verdict_html(f.verdict)}{number}"
    reading = f": {record_html(f.reading_number)}" if f.reading_number else ""
    return (
        f"{record_html(f.label)}: {verdict_html(f.verdict)}{number} · {record_html(f.reading_label)} (reading): "
        f"{verdict_html(f.reading_verdict)}{reading}"
    )


def front_page(
    chapters: list[Chapter],
    found: list[theorems.Finding],
    records: list[dict],
    pages,
    has_pdf: bool,
    figures_here: set[str],
    thumbs: dict[str, str] | None = None,
) -> str:
    """The front page (Markdown with HTML blocks): the cards of the paper's claims, then,
    counted apart, the cards of the chapters beyond the paper (:attr:`Chapter.beyond`), and the contents."""
    by_name = {ch.name: ch for ch in chapters}
    beyond = {ch.name for ch in chapters if ch.beyond}
    cards = [card(f, by_name.get(f.theorem.chapter), has_pdf, figures_here, thumbs) for f in found]
    mine = [c for c, f in zip(cards, found, strict=True) if f.theorem.chapter not in beyond]
    theirs = [c for c, f in zip(cards, found, strict=True) if f.theorem.chapter in beyond]
    pdf = f' The <a href="{PAPER_PDF}">paper (PDF)</a> reports the same checks section by section.' if has_pdf else ""
    on_paper = [r for r in records if r.get("chapter") not in beyond]
    off_paper = [r for r in records if r.get("chapter") in beyond]
    overall = f" {html.escape(ledger.tally_sentence(on_paper))}." if on_paper else ""
    if off_paper:
        k = len({ledger.group_of(r["claim"]) for r in off_paper})
        nums = " and ".join(str(by_name[n].number) for n in sorted(beyond) if n in by_name)
        overall += (
            f" Counted apart, the chapters beyond the paper ({'chapter' if len(beyond) == 1 else 'chapters'} "
            f"{nums}): {k} {'claim' if k == 1 else 'claims'}, {html.escape(ledger.counts_phrase(off_paper))}."
        )
    parts = [
        "# Multi-head attention as ensemble Nadaraya–Watson estimation, checked",
        "",
        '<div class="mhanw-front">',
        "<p>Fokoué's paper (arXiv:2605.20271, 2026) reads softmax attention as a kernel regression and "
        "multi-head attention as an ensemble of such regressions, and it reports no experiment. Each chapter "
        "of this book checks one of its claims with sympy derivations and seeded Monte Carlo simulations. "
        "The claims are taken from three public summaries of the paper (its arXiv abstract, a forum review "
        "and a German explainer), not from its full text"
        + (': the <a href="claims.html">claims page</a> quotes them.' if "claims" in dict(pages) else ".")
        + f"{pdf}</p>",
        "<p>Each card gives a claim in plain words and what we found: the verdict on the part of the claim "
        "the words state, with its deciding number ± one Monte Carlo standard error, and the verdicts of "
        'all its parts. The <a href="glossary.html#verdicts">glossary</a> explains the verdict words. The '
        f'<a href="ledger.html">ledger</a> lists every verdict.{overall}'
        + (
            f' The <a href="{API_PAGE}.html">API reference</a> documents the library the chapters are written on.'
            if API_PAGE in dict(pages)
            else ""
        )
        + "</p>",
        "<h2>The paper's claims</h2>" if theirs else "",
        '<div class="mhanw-cards">',
        *mine,
        "</div>",
        *(
            [
                '<h2 id="beyond-the-paper">Beyond the paper</h2>',
                "<p>These chapters go beyond the paper's theorems (a trained model, training itself); their "
                "claims are counted apart from the paper's.</p>",
                '<div class="mhanw-cards">',
                *theirs,
                "</div>",
            ]
            if theirs
            else []
        ),
        "</div>",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        ":caption: Chapters",
        "",
        *[ch.name for ch in chapters],
        "```",
        "",
    ]
    if pages:
        parts += ["```{toctree}", ":maxdepth: 1", ":caption: Reference", "", *[s for s, _ in pages], "```", ""]
    return "\n".join(parts)


# ---- the ledger page ------------------------------------------------------------------
def _record_block(r: dict) -> str:
    stats = ledger.statistic_texts(r)
    detectable = r.get("detectable")
    lines = [
        f'<div class="mhanw-record" id="{references.record_anchor(r["claim"])}">',
        f'<p class="mhanw-record-head"><strong>{record_html(ledger.part_name(r["claim"]))}</strong> '
        f"<code>{html.escape(r['claim'])}</code> {record_verdict_html(r)}</p>",
        f'<p class="mhanw-record-statement">{record_html(r["statement"])}</p>',
    ]
    if stats:
        lines.append('<ul class="mhanw-record-stats">' + "".join(f"<li>{record_html(s)}</li>" for s in stats) + "</ul>")
    lines.append(
        f'<p class="mhanw-record-criterion"><em>Criterion:</em> {record_html(r["criterion"])}'
        + (
            f' <a href="glossary.html#detectable-size">Detectable size</a>: {detectable:.3g}'
            + (f" {html.escape(r['unit'])}" if r.get("unit") else "")
            + (f" (tolerance {r['tolerance']:.3g})" if isinstance(r.get("tolerance"), (int, float)) else "")
            + "."
            if isinstance(detectable, (int, float))
            else ""
        )
        + "</p>"
    )
    lines.append("</div>")
    return "\n".join(lines)


def ledger_page(records: list[dict], chapters: list[Chapter], thms: list[theorems.Theorem], has_pdf: bool) -> str:
    """Every record of the ledger, grouped by claim under its human name (Markdown with HTML blocks)."""
    says = {t.claim: t.says for t in thms}
    by_name = {ch.name: ch for ch in chapters}
    words = ", ".join(f'<a href="glossary.html#{verdict_anchor(v)}">{html.escape(v)}</a>' for v in VOCABULARY)
    first = (
        html.escape(ledger.tally_sentence(records)) + "."
        if records
        else "No chapter has recorded its verdicts yet: run <code>make all</code>."
    )
    out = [
        "# Every verdict",
        "",
        f"<p>{first} One entry per verdict record of the claims ledger (<code>build/claims.json</code>), "
        f"grouped by claim. The verdict words are {words}; deciding numbers are given ± one Monte Carlo "
        "standard error (none for exact computations).</p>",
        "",
    ]
    for g, rs in ledger.grouped(records).items():
        ch = by_name.get(rs[0].get("chapter", ""))
        title = ledger.group_name(g)
        out += [f"({references.anchor(g)})=", f"## {title[:1].upper() + title[1:]}", ""]
        where = []
        if ch:
            where.append(f'<a href="{ch.name}.html">chapter {ch.number}</a>')
            if ch.section:
                where.append(f"paper {_section_text(ch.section, has_pdf)}")
        intro = f"<strong>The claim.</strong> {inline_md(says[g])} " if g in says else ""
        out += [
            f'<p class="mhanw-group-head">{intro}<span class="mhanw-where">{" · ".join(where)}</span>. '
            f"{html.escape(ledger.claim_tally(rs)[:1].upper() + ledger.claim_tally(rs)[1:])}.</p>",
            "",
        ]
        out += ['<div class="mhanw-records">', *[_record_block(r) for r in rs], "</div>", ""]
    return "\n".join(out)


# ---- a chapter ------------------------------------------------------------------------
def header_block(ch: Chapter, prev: Chapter | None, nxt: Chapter | None, has_pdf: bool) -> str:
    """The chapter's numbering (chapter N = the paper's Section M) and the ways out of the page."""
    first = [f"<strong>Chapter {ch.number}</strong>"]
    if ch.beyond:
        first.append('<strong class="mhanw-beyond">beyond the paper</strong> (counted apart from its claims)')
    if ch.section:
        title = ""
        if ch.section.title:
            from .sphinxext import plain_tex

            title = f" (“{html.escape(plain_tex(ch.section.title))}”)"
        first.append(f"reported in the paper's {_section_text(ch.section, has_pdf)}{title}")
    groups = list(dict.fromkeys(ledger.group_of(r["claim"]) for r in ch.records))
    if groups:
        first.append(
            "its verdicts: "
            + ", ".join(
                f'<a href="ledger.html#{references.anchor(g)}">{html.escape(ledger.group_name(g))}</a>' for g in groups
            )
        )
    ways = [
        '<a href="index.html">all claims</a>',
        f'<a class="mhanw-appendix-link" href="{ch.appendix}.html">appendix: further evidence and every criterion</a>',
        '<a href="glossary.html">glossary</a>',
    ]
    if prev:
        ways.append(f'← <a href="{prev.name}.html">{prev.label}</a>')
    if nxt:
        ways.append(f'<a href="{nxt.name}.html">{nxt.label}</a> →')
    return (
        '<div class="mhanw-chapter-nav">\n<p>' + " · ".join(first) + "</p>\n<p>" + " · ".join(ways) + "</p>\n</div>\n"
    )


def footer_block(prev: Chapter | None, nxt: Chapter | None, ch: Chapter | None = None) -> str:
    items = ['<a href="index.html">all claims</a>']
    if ch is not None:
        items.append(f'<a class="mhanw-appendix-link" href="{ch.appendix}.html">this chapter\'s appendix</a>')
    if prev:
        items.append(f'← previous: <a href="{prev.name}.html">{prev.label}</a>')
    if nxt:
        items.append(f'next: <a href="{nxt.name}.html">{nxt.label}</a> →')
    return '<div class="mhanw-chapter-nav">\n<p>' + " · ".join(items) + "</p>\n</div>\n"


def link_chapters(text: str, chapters: list[Chapter], here: str) -> str:
    """Backticked chapter names (`` `NN_slug` `` or `` `NN_slug.ipynb` ``) become links."""
    names = {ch.name for ch in chapters if ch.name != here}

    def repl(m):
        name = m.group(2)
        if name not in names or m.group(0).startswith("["):
            return m.group(0)
        return f"[`{name}{m.group(3) or ''}`]({name}.ipynb)"

    out, fence = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        out.append(line if fence else re.sub(r"(\[?)`(\d\d_[a-z0-9_]+)(\.ipynb|\.md)?`", repl, line))
    return "\n".join(out)


def link_book_pages(text: str) -> str:
    """Links from a chapter to the book's own pages, written ``[text](../book/NAME.md#anchor)``
    so that they also work in JupyterLab, become links to the rendered pages
    (``NAME.html#anchor``; raw HTML, since Sphinx resolves a Markdown link's anchor only
    against headings, not against the pages' labels)."""

    def label(text):  # $...$ becomes inline math that MathJax typesets inside raw HTML (\\( escaped for Markdown)
        parts = re.split(r"\$([^$]+)\$", text.replace("`", ""))
        return "".join(
            html.escape(p)
            if i % 2 == 0
            else f'<span class="math notranslate nohighlight">\\\\({html.escape(p, quote=False)}\\\\)</span>'
            for i, p in enumerate(parts)
        )

    def repl(m):
        return f'<a href="{m.group(2)}.html{m.group(3) or ""}">{label(m.group(1))}</a>'

    return re.sub(r"\[([^\]]+)\]\(\.\./book/([A-Za-z0-9_-]+)\.md(#[^)\s]*)?\)", repl, text)


#: The parameters that name where a run writes (:data:`mhanw.pipeline.chapters.RESERVED` but ``fidelity``).
OUTPUT_PARAMETERS = tuple(p for p in RESERVED if p != "fidelity")


#: The line that stands in the book for the output parameters' lines of a parameters cell.
OUTPUT_NOTE = f"# ({', '.join(OUTPUT_PARAMETERS)}: where a run writes; the pipeline sets them)"


def merge_parameters(nb) -> None:
    """One parameters cell with the values the chapter ran with: papermill's injected
    assignments replace the defaults' lines, and the injected cell goes. The output
    parameters (staging folders, meaningless to a reader) are not shown: one comment
    (:data:`OUTPUT_NOTE`) names them where the first of them stood."""
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    injected = next((i for i, t in enumerate(tags) if "injected-parameters" in t), None)
    default = next((i for i, t in enumerate(tags) if "parameters" in t and "injected-parameters" not in t), None)
    if default is None:
        return
    values = {} if injected is None else dict(re.findall(r"^(\w+)\s*=\s*(.+)$", nb.cells[injected].source, flags=re.M))
    for name in OUTPUT_PARAMETERS:
        values.pop(name, None)
    lines, noted = [], False
    for line in nb.cells[default].source.splitlines():
        m = re.match(r"^(\w+)\s*=", line)
        if m and m.group(1) in OUTPUT_PARAMETERS:
            if not noted:
                lines.append(OUTPUT_NOTE)
                noted = True
            continue
        lines.append(f"{m.group(1)} = {values.pop(m.group(1))}" if m and m.group(1) in values else line)
    lines += [f"{k} = {v}" for k, v in values.items()]
    nb.cells[default].source = "\n".join(lines)
    if injected is not None:
        del nb.cells[injected]


def figure_html(name: str, caption: str) -> str:
    """A figure of a chapter: the image, its caption (Markdown with $math$, as the chapter wrote it) and
    links to the PDF and PNG files; ``id="figure-NAME"`` is where the paper and the front page link."""
    files = f'<a href="_static/figures/{name}.pdf">PDF</a> · <a href="_static/figures/{name}.png">PNG</a>'
    text = (
        f'<span class="mhanw-caption-text">{inline_md(caption)}</span> '
        if caption
        else '<span class="mhanw-nocaption">(no caption)</span> '
    )
    alt = html.escape(re.sub(r"[$*`]", "", caption.split(". ")[0]) if caption else f"figure {name}")
    return (
        f'<figure class="mhanw-figure" id="figure-{name}">'
        f'<img src="_static/figures/{name}.png" alt="{alt}">'
        f'<figcaption>{text}<span class="mhanw-figfiles">({files})</span></figcaption></figure>'
    )


def _figures_with_captions(cell) -> None:
    """Each figure output of ``cell`` becomes one HTML figure with its caption; the caption's own
    Markdown output (``mhanw.caption_of``) goes, since the figure now carries it."""
    outputs = []
    for out in cell.get("outputs", []):
        meta = out.get("metadata", {}).get("mhanw", {})
        if meta.get("caption_of"):
            continue
        if meta.get("figure") and out.get("output_type") == "display_data":
            outputs.append(
                nbformat.v4.new_output(
                    "display_data", data={"text/html": figure_html(meta["figure"], meta.get("caption", ""))}
                )
            )
            continue
        outputs.append(out)
    cell.outputs = outputs


def _contents_cell(nb):
    n = sum(len(re.findall(r"^##\s", c.source, flags=re.M)) for c in nb.cells if c.cell_type == "markdown")
    if n < CONTENTS_FROM:
        return None
    return nbformat.v4.new_markdown_cell(
        "```{contents} On this page\n:local:\n:depth: 1\n:backlinks: none\n:class: mhanw-contents\n```"
    )


def prepare_chapter(
    nb, ch: Chapter, prev, nxt, chapters, has_pdf: bool, resolver: references.Resolver, api: list[str] | None = None
):
    """The lesson page and the appendix page of an executed chapter, ``(lesson, appendix)``, as two new
    notebooks: the lesson with its header, figures with captions, references and links; the appendix with
    the cells :func:`split_appendix` moves and the chapter's verdict records. With ``api`` (the modules of
    the API reference), the lesson's "Try it" section ends with :func:`api_note`."""
    nb = copy.deepcopy(nb)
    if api is not None:
        mine = _imported_theory(nb, tuple(api))
        for cell in nb.cells:
            if cell.cell_type == "markdown" and TRY_IT.search(cell.source):
                cell.source = cell.source.rstrip("\n") + "\n\n" + api_note(mine) + "\n"
                break
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            text = resolver.markdown(cell.source, f"{ch.name}, cell {i}")
            cell.source = link_book_pages(link_chapters(text, chapters, ch.name))
        elif cell.cell_type == "code":
            _figures_with_captions(cell)
            for out in cell.get("outputs", []):  # references in generated Markdown (findings, takeaways)
                data = out.get("data", {})
                if "text/markdown" in data:
                    md = (
                        "".join(data["text/markdown"])
                        if isinstance(data["text/markdown"], list)
                        else data["text/markdown"]
                    )
                    data["text/markdown"] = link_book_pages(resolver.markdown(md, f"{ch.name}, output of cell {i}"))
    merge_parameters(nb)
    shorten_findings(nb, ch)
    nb.cells, moved = split_appendix(nb)
    appendix = appendix_notebook(nb, moved, ch)
    header = header_block(ch, prev, nxt, has_pdf)
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), None)
    title = re.search(r"^#\s+.+$", nb.cells[first].source, flags=re.M) if first is not None else None
    if title:  # right under the chapter's title
        assert first is not None
        src = nb.cells[first].source
        nb.cells[first].source = src[: title.end()] + "\n\n" + header + "\n" + src[title.end() :]
    else:
        nb.cells.insert(0 if first is None else first + 1, nbformat.v4.new_markdown_cell(header))
        first = 0 if first is None else first + 1
    contents = _contents_cell(nb)
    if contents is not None:
        nb.cells.insert(first + 1, contents)
    nb.cells.append(nbformat.v4.new_markdown_cell(footer_block(prev, nxt, ch)))
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat_minor = 4
    return nb, appendix


# ---- the API reference ----------------------------------------------------------------
@dataclass
class ApiModule:
    """One theory module as the API reference shows it: its summary and its public names by kind."""

    name: str  # mhanw.NAME
    summary: str
    functions: list[str]
    classes: list[str]
    data: list[str]

    @property
    def page(self) -> str:
        return f"{API_PAGE}/{self.name}"


def api_modules() -> list[ApiModule]:
    """The theory modules (:data:`mhanw.THEORY_MODULES`, in that order) and their public names (``__all__``,
    in its order); a module without ``__all__`` stops the book."""
    import mhanw

    out = []
    for short in mhanw.THEORY_MODULES:
        mod = importlib.import_module(f"mhanw.{short}")
        names = getattr(mod, "__all__", None)
        if names is None:
            raise BookError(f"mhanw.{short} has no __all__: the API reference lists the names it declares public")
        kinds: dict[str, list[str]] = {"functions": [], "classes": [], "data": []}
        for n in names:
            obj = getattr(mod, n)
            kind = "classes" if inspect.isclass(obj) else "functions" if callable(obj) else "data"
            kinds[kind].append(n)
        summary = (inspect.getdoc(mod) or "").split("\n\n")[0].replace("\n", " ").strip()
        out.append(ApiModule(mod.__name__, summary, **kinds))
    return out


def _rst(lines: list[str]) -> list[str]:
    return ["```{eval-rst}", *lines, "```", ""]


def api_index(modules: list[ApiModule]) -> str:
    """What replaces :data:`API_MARK`: per module, a heading linking its page, its summary and a table of its
    public names (autosummary: each name's first docstring line), and the module pages' (hidden) toctree."""
    out = []
    for m in modules:
        out += [f"## [`{m.name}`]({m.page}.md)", "", m.summary, ""]
        names = [f"   {n}" for n in m.classes + m.functions + m.data]
        out += _rst([f".. currentmodule:: {m.name}", "", ".. autosummary::", "   :nosignatures:", "", *names])
    out += ["```{toctree}", ":hidden:", "", *[m.page for m in modules], "```", ""]
    return "\n".join(out)


def api_page(m: ApiModule) -> str:
    """The page of one theory module: its docstring, a table of its public names, then each one documented
    (classes with their public methods and properties, data with their ``#:`` comment)."""
    rst = [f".. automodule:: {m.name}", "   :no-members:", "", ".. rubric:: Contents", "", ".. autosummary::"]
    rst += ["   :nosignatures:", "", *[f"   {n}" for n in m.classes + m.functions + m.data], ""]
    mod = importlib.import_module(m.name)
    for n in m.classes:
        bases = getattr(mod, n).__bases__ != (object,)  # "Bases: object" says nothing
        rst += [f".. autoclass:: {n}", "   :members:", *(["   :show-inheritance:"] if bases else []), ""]
    for n in m.functions:
        rst += [f".. autofunction:: {n}", ""]
    for n in m.data:
        rst += [f".. autodata:: {n}", "   :no-value:", ""]
    return "\n".join([f"# `{m.name}`", "", *_rst(rst)])


def write_api_pages(src: Path, modules: list[ApiModule]) -> None:
    (src / API_PAGE).mkdir(exist_ok=True)
    for m in modules:
        (src / f"{m.page}.md").write_text(api_page(m), encoding="utf-8")


def _imported_theory(nb, theory: tuple[str, ...]) -> list[str]:
    """The theory modules a chapter's code imports (``from mhanw import NAME, ...``, ``from mhanw.NAME import
    f``, ``import mhanw.NAME``), in :data:`mhanw.THEORY_MODULES` order."""
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    found = set(re.findall(r"^\s*(?:from|import)\s+mhanw\.(\w+)", code, flags=re.M))
    for names in re.findall(r"^\s*from\s+mhanw\s+import\s+\(?([\w\s,]+)\)?", code, flags=re.M):
        found.update(n.split(" as ")[0].strip() for n in names.split(","))
    return [t for t in theory if t in found]


def api_note(modules: list[str]) -> str:
    """The paragraph a chapter's "Try it" ends with: the theory modules it calls, linked to their API pages."""
    links = ", ".join(f'<a href="{API_PAGE}/mhanw.{m}.html"><code>mhanw.{m}</code></a>' for m in modules)
    calls = f"The library this chapter calls, {links}, is" if modules else "The library the chapters call is"
    return (
        f'<p class="mhanw-api-note">{calls} documented in the <a href="{API_PAGE}.html">API reference</a>: '
        "every public function's parameters, shapes, results and errors.</p>"
    )


# ---- the pages of book/ ----------------------------------------------------------------
def timings_table(root: Path) -> str:
    """This build's chapter jobs of the default run as a Markdown table (from ``build/timings/default/``)."""
    rows = []
    for p in sorted((root / "build" / "timings" / "default").glob("*.json")):
        try:
            t = json.loads(p.read_text(encoding="utf-8"))
            rows.append(
                f"| `{t['chapter']}` | {t['mode']} | {t['fidelity']} | {float(t['wall_s']):.0f} | "
                f"{float(t['cpu_s']):.0f} |"
            )
        except (ValueError, KeyError, TypeError):
            continue
    if not rows:
        return "*(No job of the default run has been timed in this build.)*"
    return "\n".join(["| chapter | mode | fidelity | wall (s) | CPU (s) |", "|---|---|---|---:|---:|", *rows])


def prepare_page(text: str, stem: str, root: Path, resolver: references.Resolver) -> str:
    text = resolver.markdown(text, f"book/{stem}.md")
    if TIMINGS_MARK in text:
        text = text.replace(TIMINGS_MARK, timings_table(root))
    if MEASURED_MARK in text:
        from . import measure

        text = text.replace(MEASURED_MARK, measure.table(root / measure.DEFAULT_FILE))
    return text


# ---- the build ------------------------------------------------------------------------
def assemble(root: Path, src: Path) -> dict:
    """Write the Sphinx sources to ``src``; returns counts for the log."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    shutil.copy2(root / "book" / "conf.py", src / "conf.py")
    info = build_info(root)
    (src / BUILD_INFO).write_text(json.dumps(info, indent=1), encoding="utf-8")
    shutil.copytree(root / "book" / "_static", src / "_static")
    (src / "_static" / "figures").mkdir(exist_ok=True)
    extra = src / "extra"
    extra.mkdir()
    pdf = root / "build" / "paper" / "main.pdf"
    has_pdf = pdf.is_file()
    if has_pdf:
        (extra / "paper").mkdir()
        shutil.copy2(pdf, extra / PAPER_PDF)

    executed = sorted((root / "build" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if not executed:
        raise BookError("no executed chapters in build/notebooks/: run `make notebooks` first")
    notebooks = {p.stem: nbformat.read(p, as_version=4) for p in executed}
    records = load_records(root)
    labels = load_labels(root)
    try:
        thms = theorems.load(root)
    except theorems.TheoremsError as exc:
        raise BookError(str(exc)) from None
    found = theorems.findings(thms, records, strict=False)
    chapters = []
    for name, nb in notebooks.items():
        ch = Chapter(
            name,
            chapter_title(nb) or name,
            list(nb.metadata.get("mhanw", {}).get("figures", [])),
            [r for r in records if r.get("chapter") == name],
        )
        ch.section = references.chapter_section(name, records, labels)
        ch.beyond = bool(nb.metadata.get("mhanw", {}).get("beyond_paper", False))
        chapters.append(ch)
    resolver = references.Resolver(labels, records, PAPER_PDF if has_pdf else None)
    pages = extra_pages(root)
    api = None
    for stem, _ in pages:
        text = (root / "book" / f"{stem}.md").read_text(encoding="utf-8")
        text = prepare_page(text, stem, root, resolver)
        if API_MARK in text:
            modules = api_modules()
            write_api_pages(src, modules)
            text = text.replace(API_MARK, api_index(modules))
            api = [m.name.split(".", 1)[1] for m in modules]
        (src / f"{stem}.md").write_text(text, encoding="utf-8")
    pages.insert(min(1, len(pages)), ("ledger", "Every verdict"))
    (src / "ledger.md").write_text(ledger_page(records, chapters, thms, has_pdf), encoding="utf-8")
    figures_here, panels = set(), {}
    for i, ch in enumerate(chapters):
        prev = chapters[i - 1] if i > 0 else None
        nxt = chapters[i + 1] if i + 1 < len(chapters) else None
        try:
            prepared, appendix = prepare_chapter(notebooks[ch.name], ch, prev, nxt, chapters, has_pdf, resolver, api)
        except references.ReferenceError as exc:
            raise BookError(str(exc)) from None
        nbformat.write(prepared, src / f"{ch.name}.ipynb")
        nbformat.write(appendix, src / f"{ch.appendix}.ipynb")
        for fig in dict.fromkeys(ch.figures + _figure_outputs(notebooks[ch.name])):
            for ext in ("pdf", "png"):
                f = root / "figures" / f"{fig}.{ext}"
                if f.is_file():
                    shutil.copy2(f, src / "_static" / "figures" / f.name)
                    if ext == "png":
                        figures_here.add(fig)
        panels.update(_figure_panels(notebooks[ch.name]))
    thumbs = thumbnails([f.theorem for f in found], panels, src)
    (src / "index.md").write_text(
        front_page(chapters, found, records, pages, has_pdf, figures_here, thumbs), encoding="utf-8"
    )
    return {"chapters": len(chapters), "pages": len(pages), "claims": len(records), "cards": len(found)}


def build(root: Path, out: Path) -> None:
    start = time.monotonic()
    src = root / "build" / "book-src"
    try:
        info = assemble(root, src)
    except references.ReferenceError as exc:
        raise BookError(str(exc)) from None
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-q",
        "-E",
        "-d",
        str(root / "build" / "book-doctrees"),
        str(src),
        str(tmp),
    ]
    # conf.py loads mhanw.pipeline.sphinxext: the same library as this process
    library = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (library, os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-6000:])
        raise BookError(f"sphinx failed (exit {proc.returncode}); sources in {src}")
    for w in warnings:
        print(f"    sphinx: {w}", file=sys.stderr)
    (tmp / ".buildinfo").unlink(missing_ok=True)
    old = out.with_name(out.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    if old.exists():
        shutil.rmtree(old)
    n_pages = len(list(out.glob("*.html")))
    print(
        f"    {out}/index.html: {info['chapters']} chapters, {info['cards']} claims on the front page, "
        f"{info['pages']} reference pages, {n_pages} HTML pages, {info['claims']} verdict records "
        f"({time.monotonic() - start:.0f} s)"
    )
