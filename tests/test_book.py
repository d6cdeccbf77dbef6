"""The chapters as a reader sees them: executed notebooks and the offline book.

The executed chapters and the book come from the pipeline's quick build in a
fresh copy (the session fixture ``quick_build`` of conftest.py, `make all`, which
builds the book too); the browser test opens every page of that book in
headless Chromium (mhanw.pipeline.browser).  The fast tests at the end check the
front page's sources on small inputs.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from nbtools import NOTEBOOKS, notebook_meta

from mhanw.pipeline import book as build_book
from mhanw.pipeline import browser as check_book


def _outputs(nb: dict):
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            yield i, out


def _text(out: dict) -> str:
    parts = [out.get("text", "")] + [out.get("data", {}).get(k, "") for k in ("text/plain", "text/html", "text/markdown")]
    return "".join("".join(p) if isinstance(p, list) else p for p in parts)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_executed_chapter_shows_its_figures_and_clean_outputs(path, quick_build):
    copy, name = quick_build, path.stem
    nb = json.loads((copy / "build" / "notebooks" / f"{name}.ipynb").read_text())
    shown = [out.get("metadata", {}).get("mhanw", {}).get("figure") for _, out in _outputs(nb)
             if out.get("output_type") == "display_data" and "image/png" in out.get("data", {})]
    assert shown == notebook_meta(path)["figures"], f"{name}: figures shown {shown}, declared {notebook_meta(path)['figures']}"
    for i, out in _outputs(nb):
        assert not (out.get("output_type") == "stream" and out.get("name") == "stderr"), \
            f"{name}, cell {i}: output on stderr: {_text(out)[:200]!r}"
        assert out.get("output_type") != "error", f"{name}, cell {i}: an error output"
        text = _text(out)
        for bad in ("np.float64(", "np.int64(", "PosixPath(", "array(", "Warning", str(copy), "/tmp/"):
            assert bad not in text, f"{name}, cell {i}: {bad!r} in an output: {text[:300]!r}"
    sources = "".join("".join(c["source"]) for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
    assert str(copy) not in sources, f"{name}: the injected parameters name a folder of this machine"
    book_cells = [c for c in nb["cells"] if "macros.write(" in "".join(c["source"])]
    assert book_cells and all("hide-input" in c["metadata"].get("tags", []) for c in book_cells)


@pytest.mark.slow
def test_every_page_of_the_book_renders_offline_in_chromium(quick_build):
    book = quick_build / "build" / "book"
    report = check_book.check(book, screenshots=book / "screenshots")
    assert not report.problems, "\n".join(report.problems)
    chapters = [p for p in report.pages if re.match(r"\d\d_", p)]
    assert len(chapters) == len(NOTEBOOKS) and "index.html" in report.pages
    declared = sum(len(notebook_meta(p)["figures"]) for p in NOTEBOOKS)
    assert report.images >= declared and report.formulas > 100 and report.links > 100
    for shot in ("index.png", "chapter.png"):
        png = (book / "screenshots" / shot).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, shot


@pytest.mark.slow
def test_front_page_has_every_claim_chapter_and_the_paper(quick_build):
    copy = quick_build
    index = (copy / "build" / "book" / "index.html").read_text()
    assert (copy / "build" / "book" / "paper" / "main.pdf").read_bytes()[:5] == b"%PDF-"
    assert 'href="paper/main.pdf"' in index
    claims = build_book.claims_from_json(copy / "build" / "claims.json")
    for c in claims:  # the ledger's records (chapters without records yet are absent)
        assert f'href="{c["chapter"]}.html"' in index, c["chapter"]
        if c["section"].isdigit():
            assert f'nameddest=section.{c["section"]}' in index, c["section"]
        first_words = " ".join(c["verdict"].split()[:3])
        assert build_book.html.escape(first_words, quote=False) in index, first_words
    chapter = (copy / "build" / "book" / f"{NOTEBOOKS[1].stem}.html").read_text()
    assert f'href="{NOTEBOOKS[0].stem}.html"' in chapter and f'href="{NOTEBOOKS[2].stem}.html"' in chapter
    assert 'id="figure-' in chapter and "_static/mathjax/tex-svg.js" in chapter


@pytest.mark.slow
def test_book_takes_claims_json_and_extra_pages_when_they_exist(quick_build, tmp_path):
    src = quick_build
    for rel in ("README.md", "book", "build/notebooks", "figures"):
        if (src / rel).is_dir():
            shutil.copytree(src / rel, tmp_path / rel)
        else:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, tmp_path / rel)
    (tmp_path / "book" / "zz_extra.md").write_text("# An extra page\n\n**HDI.** The head diversity index, $1-\\bar\\rho$.\n")
    first = NOTEBOOKS[0].stem
    (tmp_path / "build" / "claims.json").write_text(json.dumps(
        [{"claim": "Thm 2.1", "chapter": first, "verdict": "a verdict read from claims.json", "section": "2"}]))
    build_book.build(tmp_path, tmp_path / "build" / "book")
    book = tmp_path / "build" / "book"
    index = (book / "index.html").read_text()
    assert "a verdict read from claims.json" in index and "build/claims.json" in index
    assert 'href="glossary.html"' in index and (book / "glossary.html").is_file()
    assert 'href="glossary.html"' in (book / f"{first}.html").read_text()
    assert 'href="zz_extra.html"' in index and (book / "zz_extra.html").is_file()  # any book/*.md becomes a page
    assert "paper/main.pdf" not in index, "no PDF was built here, so none may be linked"
    report = check_book.check(book)
    assert not report.problems, "\n".join(report.problems)


def test_inline_markdown_typesets_math_and_escapes_html():
    out = build_book.inline_md("Breiman's $1-\\bar\\rho$ <b> `code`")
    assert '<span class="math notranslate nohighlight">\\(1-\\bar\\rho\\)</span>' in out
    assert "&lt;b&gt;" in out and "<code>code</code>" in out and "$" not in out


def test_chapter_names_in_markdown_become_links_outside_code():
    chapters = [build_book.Chapter("01_a", "A", []), build_book.Chapter("02_b", "B", [])]
    text = "see `02_b` and `02_b.md`, not `03_c`\n```\n`02_b`\n```"
    out = build_book.link_chapters(text, chapters, here="01_a")
    assert out.count("[`02_b") == 2 and "`03_c`" in out and out.endswith("```\n`02_b`\n```")
