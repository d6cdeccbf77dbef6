"""Render the executed chapters into a static, offline book: ``build/book/``.

Reads what the pipeline made — ``build/notebooks/NN_slug.ipynb`` (executed,
never run again here), ``figures/``, ``build/paper/main.pdf`` — and the
claims ledger (``build/claims.json``), assembles Sphinx sources in ``build/book-src/``
(``book/conf.py``, ``book/_static/``, a generated front page, the chapters
with a navigation block and figure anchors, every ``book/*.md`` page) and
runs Sphinx.  The new site replaces ``build/book/`` only once it is complete.
"""

from __future__ import annotations

import copy
import html
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

PAPER_PDF = "paper/main.pdf"  # where the PDF sits inside the site


class BookError(RuntimeError):
    """The book cannot be built; the message says why."""


@dataclass
class Chapter:
    name: str  # NN_slug
    title: str
    figures: list[str]
    claim: dict = field(default_factory=dict)

    @property
    def number(self) -> str:
        return self.name[:2]

    @property
    def label(self) -> str:
        """The title as HTML (math typeset), numbered once."""
        title = self.title if re.match(r"\d+\.\s", self.title) else f"{int(self.number)}. {self.title}"
        return inline_md(title)


# ---- the claims table ---------------------------------------------------------------
def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def claims_from_json(path: Path) -> list[dict]:
    """Records of ``build/claims.json`` (keys claim, chapter, verdict, section; a few aliases)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("claims", list(data.values()))
    rows = []
    for rec in data:
        chapter = rec.get("chapter", rec.get("notebook", ""))
        rows.append({
            "claim": str(rec.get("claim", "")),
            "chapter": str(chapter) if not isinstance(chapter, int) else f"{chapter:02d}",
            "section": str(rec.get("section_number") or rec.get("section", rec.get("paper_section",
                                                                              rec.get("paper section", "")))),
            "verdict": _verdict_words(rec),
        })
    return rows


def _verdict_words(rec: dict) -> str:
    """The verdict, with the failed premise and what the numbers show for one outside its conditions."""
    from .ledger import verdict_text
    from mhanw.infra.verdicts import OUTSIDE

    verdict = str(rec.get("verdict", ""))
    return verdict_text(rec) if verdict == OUTSIDE else verdict


def load_claims(root: Path) -> tuple[list[dict], str]:
    """The claims and where they were read from."""
    js = root / "build" / "claims.json"
    return (claims_from_json(js), "build/claims.json") if js.is_file() else ([], "no ledger yet")


def _match_chapter(value: str, chapters: list[Chapter]) -> Chapter | None:
    value = value.strip().strip("`")
    for ch in chapters:
        if value == ch.name or value.startswith(ch.name) or (re.fullmatch(r"\d{1,2}", value) and int(value) == int(ch.number)):
            return ch
    m = re.match(r"(\d\d)_", value)
    return next((ch for ch in chapters if m and ch.number == m.group(1)), None)


# ---- inline markup --------------------------------------------------------------------
MATH = '<span class="math notranslate nohighlight">\\({}\\)</span>'


def inline_md(text: str) -> str:
    """Markdown of one line (``code``, *em*, **strong**, $math$) as escaped HTML;
    math goes to a span that the book's MathJax typesets."""
    parts = re.split(r"(?<!\\)\$([^$]+)\$", text)
    if len(parts) > 1:
        return "".join(MATH.format(html.escape(p, quote=False)) if i % 2 else inline_md(p) for i, p in enumerate(parts))
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![\w*])\*([^*]+)\*(?!\w)", r"<em>\1</em>", out)
    return out


def section_link(section: str, has_pdf: bool = True) -> str:
    """Paper section ``N`` as a link into the PDF (hyperref's named destination)."""
    section = section.strip()
    if has_pdf and re.fullmatch(r"\d+", section):
        return f'<a href="{PAPER_PDF}#nameddest=section.{section}">Section {section}</a>'
    return html.escape(section)


def figure_links(ch: Chapter, here: str = "") -> str:
    page = "" if here == ch.name else f"{ch.name}.html"
    return ", ".join(f'<a href="{page}#figure-{f}">{html.escape(f[len(ch.name):].lstrip("_") or "main")}</a>'
                     for f in ch.figures)


# ---- the pages ------------------------------------------------------------------------
def chapter_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, flags=re.M)
            if m:
                return m.group(1).strip()
    return ""


def extra_pages(root: Path) -> list[tuple[str, str]]:
    """``(stem, title)`` of every ``book/*.md`` page."""
    pages = []
    for md in sorted((root / "book").glob("*.md")):
        if md.stem in ("index", "README"):
            continue
        m = re.search(r"^#\s+(.+)$", md.read_text(encoding="utf-8"), flags=re.M)
        pages.append((md.stem, m.group(1).strip() if m else md.stem.replace("_", " ").capitalize()))
    return pages


def front_page(chapters: list[Chapter], claims: list[dict], source: str, pages, readme: Path, has_pdf: bool) -> str:
    intro = ""
    text = readme.read_text(encoding="utf-8").split("\n## ")[0]
    paras = [p for p in text.split("\n\n")[1:] if p.strip()]
    if paras:
        intro = paras[0].strip()
    rows = []
    for c in claims:
        ch = _match_chapter(c["chapter"], chapters)
        chapter = (f'<a href="{ch.name}.html">{ch.label}</a>' if ch
                   else html.escape(c["chapter"]))
        figs = figure_links(ch) if ch else ""
        rows.append(f"<tr><td>{inline_md(c['claim'])}</td><td>{chapter}</td><td>{inline_md(c['verdict'])}</td>"
                    f"<td>{section_link(c['section'], has_pdf)}</td><td>{figs}</td></tr>")
    pdf = (f'<p><strong>The paper</strong> that collects these checks: <a href="{PAPER_PDF}">PDF</a>.</p>'
           if has_pdf else "")
    extra = "".join(f'<li><a href="{stem}.html">{html.escape(title)}</a></li>' for stem, title in pages)
    parts = [
        "# Multi-head attention as ensemble Nadaraya–Watson estimation: the chapters",
        "",
        intro,
        "",
        '<div class="mhanw-front">',
        pdf,
        f"<ul>{extra}</ul>" if extra else "",
        "<h2>Claims and verdicts</h2>",
        f'<p class="mhanw-table-note">From {html.escape(source)}; each chapter decides its verdicts from its own numbers.</p>',
        '<table class="mhanw-claims"><thead><tr><th>claim</th><th>chapter</th><th>verdict</th>'
        "<th>paper</th><th>figures</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
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


def nav_block(ch: Chapter, prev: Chapter | None, nxt: Chapter | None, pages, has_pdf: bool, top: bool) -> str:
    items = ['<a href="index.html">Contents and claims</a>']
    if top:
        if ch.claim:
            items.append(f"<strong>Claim:</strong> {inline_md(ch.claim.get('claim', ''))}")
            if ch.claim.get("section") and has_pdf:
                items.append(f"<strong>Paper:</strong> {section_link(ch.claim['section'])}")
        if ch.figures:
            items.append(f"<strong>Figures:</strong> {figure_links(ch, here=ch.name)}")
        items += [f'<a href="{stem}.html">{html.escape(title)}</a>' for stem, title in pages]
    if prev:
        items.append(f'← previous: <a href="{prev.name}.html">{prev.label}</a>')
    if nxt:
        items.append(f'next: <a href="{nxt.name}.html">{nxt.label}</a> →')
    return '<div class="mhanw-chapter-nav">\n' + " · ".join(items) + "\n</div>\n"


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
        return "".join(html.escape(p) if i % 2 == 0 else
                       f'<span class="math notranslate nohighlight">\\\\({html.escape(p, quote=False)}\\\\)</span>'
                       for i, p in enumerate(parts))

    def repl(m):
        return f'<a href="{m.group(2)}.html{m.group(3) or ""}">{label(m.group(1))}</a>'

    return re.sub(r"\[([^\]]+)\]\(\.\./book/([A-Za-z0-9_-]+)\.md(#[^)\s]*)?\)", repl, text)


def merge_parameters(nb) -> None:
    """One parameters cell with the values the chapter ran with: papermill's injected
    assignments replace the defaults' lines, and the injected cell goes."""
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    injected = next((i for i, t in enumerate(tags) if "injected-parameters" in t), None)
    default = next((i for i, t in enumerate(tags) if "parameters" in t and "injected-parameters" not in t), None)
    if injected is None or default is None:
        return
    values = dict(re.findall(r"^(\w+)\s*=\s*(.+)$", nb.cells[injected].source, flags=re.M))
    lines = []
    for line in nb.cells[default].source.splitlines():
        m = re.match(r"^(\w+)\s*=", line)
        lines.append(f"{m.group(1)} = {values.pop(m.group(1))}" if m and m.group(1) in values else line)
    lines += [f"{k} = {v}" for k, v in values.items()]
    nb.cells[default].source = "\n".join(lines)
    del nb.cells[injected]


def prepare_chapter(nb, ch: Chapter, prev, nxt, chapters, pages, has_pdf: bool):
    """A copy of the executed chapter with navigation, figure anchors and captions, and links."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = link_book_pages(link_chapters(cell.source, chapters, ch.name))
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            fig = out.get("metadata", {}).get("mhanw", {}).get("figure") if out.get("output_type") == "display_data" else None
            if fig:
                outputs.append(nbformat.v4.new_output("display_data", data={
                    "text/html": f'<div id="figure-{fig}" class="mhanw-figure-anchor"></div>'}))
            outputs.append(out)
            if fig:
                outputs.append(nbformat.v4.new_output("display_data", data={"text/html": (
                    f'<p class="mhanw-figcaption">Figure <code>{fig}</code>: '
                    f'<a href="_static/figures/{fig}.pdf">PDF</a> · <a href="_static/figures/{fig}.png">PNG</a></p>')}))
        cell.outputs = outputs
    merge_parameters(nb)
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    nb.cells.insert(first + 1, nbformat.v4.new_markdown_cell(nav_block(ch, prev, nxt, pages, has_pdf, top=True)))
    nb.cells.append(nbformat.v4.new_markdown_cell(nav_block(ch, prev, nxt, pages, has_pdf, top=False)))
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat_minor = 4
    return nb


# ---- the build ------------------------------------------------------------------------
def assemble(root: Path, src: Path) -> dict:
    """Write the Sphinx sources to ``src``; returns counts for the log."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    shutil.copy2(root / "book" / "conf.py", src / "conf.py")
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
    claims, source = load_claims(root)
    chapters = [Chapter(name, chapter_title(nb) or name, list(nb.metadata.get("mhanw", {}).get("figures", [])))
                for name, nb in notebooks.items()]
    for c in claims:
        ch = _match_chapter(c["chapter"], chapters)
        if ch and not ch.claim:
            ch.claim = c
    pages = extra_pages(root)
    for stem, _ in pages:
        shutil.copy2(root / "book" / f"{stem}.md", src / f"{stem}.md")
    for i, ch in enumerate(chapters):
        prev = chapters[i - 1] if i > 0 else None
        nxt = chapters[i + 1] if i + 1 < len(chapters) else None
        nbformat.write(prepare_chapter(notebooks[ch.name], ch, prev, nxt, chapters, pages, has_pdf),
                       src / f"{ch.name}.ipynb")
        for fig in ch.figures:
            for ext in ("pdf", "png"):
                f = root / "figures" / f"{fig}.{ext}"
                if f.is_file():
                    shutil.copy2(f, src / "_static" / "figures" / f.name)
    (src / "index.md").write_text(front_page(chapters, claims, source, pages, root / "README.md", has_pdf),
                                  encoding="utf-8")
    return {"chapters": len(chapters), "pages": len(pages), "claims": len(claims), "claims_source": source}


def build(root: Path, out: Path) -> None:
    start = time.monotonic()
    src = root / "build" / "book-src"
    info = assemble(root, src)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E",
           "-d", str(root / "build" / "book-doctrees"), str(src), str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    warnings = [l for l in proc.stderr.splitlines() if l.strip()]
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
    print(f"    {out}/index.html: {info['chapters']} chapters, {info['pages']} extra pages, {n_pages} HTML pages, "
          f"claims from {info['claims_source']} ({time.monotonic() - start:.0f} s)")
