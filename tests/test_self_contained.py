"""The repository explains itself: every claim and term a reader meets is defined in it.

- No tracked file cites documents that are not part of the repository (the
  team's internal notes); the claims are stated on ``book/claims.md`` and the
  terms on ``book/glossary.md``.
- Every link from a notebook's (or a book page's) markdown to a book page, and
  to an anchor on it, resolves: the page exists and defines the anchor, as a
  MyST label ``(name)=`` or as the slug of a heading.
- The paper's bibliography has an entry for each of the three public summaries
  from which the claims are reconstructed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nbtools import NOTEBOOKS, ROOT, tracked_files

from mhanw.pipeline import chapters
from mhanw.pipeline.book import GENERATED_PAGES

BOOK = ROOT / "book"
# Built from pieces so that this file does not match its own patterns.
EXTERNAL = re.compile(
    "|".join(
        [
            "THEORY" + r"(\.md|\b)",
            "DESIGN" + r"\.md",
            r"\.\./" + "shared",
        ]
    )
)
SUMMARY_LABELS = re.compile(r"\[[AFG]\](?!\()")  # [A], [F], [G] as citation labels, not links
TICKETS = re.compile(r"\b" + "issue" + r" [0-9]+\b")
BOOK_LINK = re.compile(r"\]\((?:\.\./book/)?([A-Za-z0-9_-]+\.md)(?:#([^)\s]+))?\)")
NOTEBOOK_BOOK_LINK = re.compile(r"\]\(\.\./book/([A-Za-z0-9_-]+\.md)(?:#([^)\s]+))?\)")
SUMMARY_ENTRIES = ("fokoue2026abstract", "forumreview2026", "explainer2026de")


def _text_files() -> list[tuple[str, str]]:
    out = []
    for rel in tracked_files():
        if rel == "tests/test_self_contained.py":
            continue
        try:
            out.append((rel, (ROOT / rel).read_text(encoding="utf-8")))
        except (UnicodeDecodeError, IsADirectoryError):
            continue  # binary files cite nothing
    return out


def _markdown_of_notebook(path: Path) -> str:
    nb = chapters.read(path)
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def heading_slug(text: str) -> str:
    """GitHub/MyST-style slug of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\$[^$]*\$", lambda m: m.group(0).strip("$"), text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """MyST labels ``(name)=`` and heading slugs of a book page."""
    text = page.read_text(encoding="utf-8")
    labels = set(re.findall(r"^\(([A-Za-z0-9_-]+)\)=\s*$", text, flags=re.M))
    slugs = {heading_slug(h) for h in re.findall(r"^#{1,6}\s+(.*)$", text, flags=re.M)}
    return labels | slugs


def test_book_pages_exist():
    assert (BOOK / "claims.md").is_file() and (BOOK / "glossary.md").is_file()


def test_no_tracked_file_cites_documents_outside_the_repository():
    hits = [
        f"{rel}:{i}: {line.strip()[:100]}"
        for rel, text in _text_files()
        for i, line in enumerate(text.splitlines(), 1)
        if EXTERNAL.search(line) or TICKETS.search(line)
    ]
    assert not hits, "cite book/claims.md or book/glossary.md instead:\n" + "\n".join(hits)


def test_summaries_are_cited_by_name_not_by_letter():
    texts = [(p.name, _markdown_of_notebook(p)) for p in NOTEBOOKS]
    texts += [(p.name, p.read_text(encoding="utf-8")) for p in sorted(BOOK.glob("*.md"))]
    hits = [name for name, text in texts if SUMMARY_LABELS.search(text)]
    assert not hits, f"say (arXiv abstract), (forum review), (German explainer) instead of [A], [F], [G]: {hits}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_links_the_glossary_in_its_first_cell(path):
    first = "".join(chapters.read(path)["cells"][0]["source"])
    assert "](../book/glossary.md" in first, f"{path.name}: the first cell should link ../book/glossary.md"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_links_to_book_pages_resolve(path):
    text = _markdown_of_notebook(path)
    links = NOTEBOOK_BOOK_LINK.findall(text)
    broken = [
        f"{page}#{anchor}"
        for page, anchor in links
        if not (BOOK / page).is_file() or (anchor and anchor not in anchors(BOOK / page))
    ]
    assert not broken, f"{path.name}: links to missing book pages or anchors: {broken}"
    assert not re.search(r"\]\((?!\.\./book/)[^)]*book/[^)]*\.md", text), (
        f"{path.name}: link book pages as ../book/NAME.md#anchor, the form the book build rewrites"
    )


@pytest.mark.parametrize("page", sorted(BOOK.glob("*.md")), ids=lambda p: p.name)
def test_book_page_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for target, anchor in BOOK_LINK.findall(text):
        if Path(target).stem in GENERATED_PAGES and not anchor:  # the front page and the ledger: the build writes them
            continue
        if not (BOOK / target).is_file() or (anchor and anchor not in anchors(BOOK / target)):
            broken.append(f"{target}#{anchor}")
    for anchor in re.findall(r"\]\(#([^)\s]+)\)", text):
        if anchor not in anchors(page):
            broken.append(f"#{anchor}")
    assert not broken, f"{page.name}: broken links {broken}"


def test_labels_are_unique_across_the_book():
    seen: dict[str, str] = {}
    dupes = []
    for page in sorted(BOOK.glob("*.md")):
        for label in re.findall(r"^\(([A-Za-z0-9_-]+)\)=\s*$", page.read_text(encoding="utf-8"), flags=re.M):
            if label in seen:
                dupes.append(f"{label} ({seen[label]}, {page.name})")
            seen[label] = page.name
    assert not dupes, f"MyST labels must be unique in a Sphinx build: {dupes}"


def test_claims_page_has_an_anchor_for_every_claim():
    want = {
        "claim-thm-2-1",
        "claim-thm-3-1",
        "claim-lemma-4-1",
        "claim-hdi",
        "claim-thm-4-2",
        "claim-thm-5-1",
        "claim-thm-6-1",
        "claim-thm-7-1",
        "claim-random-forest",
        "claim-pretrained",
        "notation",
        "reference-dgp",
        "head-families",
    }
    assert want <= anchors(BOOK / "claims.md")


def test_bibliography_has_the_three_summaries():
    bib = (ROOT / "paper" / "refs.bib").read_text(encoding="utf-8")
    for key in SUMMARY_ENTRIES:
        entry = re.search(r"@misc\{" + key + r",(.*?)\n\}", bib, flags=re.S)
        assert entry, f"refs.bib lacks the @misc entry {key}"
        assert re.search(r"\bnote\s*=", entry.group(1)), f"{key}: a note should say what the summary is"
    intro = (ROOT / "paper" / "sections" / "00_introduction.tex").read_text(encoding="utf-8")
    assert all(key in intro for key in SUMMARY_ENTRIES), "the introduction should cite the three summaries"


def test_heading_slug():
    assert heading_slug("Principal angles") == "principal-angles"
    assert heading_slug("Theorem 2.1: softmax attention") == "theorem-21-softmax-attention"
