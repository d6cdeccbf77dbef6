"""No verdict is typed by hand: verdict words appear only in generated or guarded text.

Scans the paper's sections and ``main.tex``, the chapters' markdown cells,
README.md and the book's pages about the build (Reproduce, Extend a proof,
Performance, Architecture) for the verdict words (holds, fails, not local, undecided, not
checkable), in any markup: a verdict set in italics (``\\emph{holds}``,
``*fails as stated*``) or in quotes is a verdict all the same.  A hit is allowed
only when it is

- generated: the README's table of findings (between its markers), a TeX macro
  definition, a TeX comment line, inline code (```make``` output, ``\\texttt``);
- guarded: the words of the ``text_says`` of a ``guard(...)`` call in a chapter
  module or notebook (the chapter stops when the numbers contradict exactly
  that sentence), starting on the line right after a ``% guarded: <claim-id>``
  (TeX) or ``<!-- guarded: <claim-id> -->`` (Markdown) marker; only those words
  are excused, and they may wrap;
- inside one of the phrases of :data:`ALLOWED`, each a non-verdict sense of a
  verdict word.  A phrase is matched across line breaks (a sentence may wrap)
  and only the words inside the phrase are excused: a verdict elsewhere on the
  same line is still a hit.

The allowed senses, one comment per group in :data:`ALLOWED`:

- the vocabulary itself, where the text defines it or says how a verdict is
  reached (``a "holds" here needs a run that could see ...``);
- mathematics: a statement proved, or an assumption of a derivation, that no
  run decides (``it must also hold exactly for the empirical moments``, "the
  printed law holds for some d > 0 exactly when p -> 2/(4+d)", equality in the
  frame potential for tight fusion frames, a lemma as the hypothesis of a bound);
- the build: a notebook that fails is a program that stops, not a claim.

Every other hit is reported as ``file:line: text``.
"""

from __future__ import annotations

import ast
import re

from nbtools import NOTEBOOKS, ROOT

from mhanw.pipeline import chapters, theorems

#: The book's pages of prose about the build (what the README held before): scanned like the README.
PAGES_FROM_THE_README = ("reproduce", "extend", "performance", "architecture")

WORDS = re.compile(
    r"\b(holds?|holding|fail(?:s|ed|ing)?|not local|undecided|not checkable|"
    r"outside (?:its|their) conditions)\b",
    re.I,
)
GUARDED = re.compile(r"(%|<!--)\s*guarded:\s*[a-z0-9][a-z0-9./-]*")

#: Phrases in which a verdict word is not a verdict (matched case-insensitively, any white space
#: between words).  Each names the sense; adding one needs the same argument.
ALLOWED = (
    # The vocabulary, where it is defined (introduction, README, chapters) or where a criterion says
    # what one of its values needs.
    r"records a verdict with the numbers it rests on: \emph{holds}, \emph{holds only under added "
    r"conditions} (conditions the companion adds, listed with the verdict), \emph{fails as stated}, \emph{undecided at this size} (too little evidence either way), "
    r"\emph{outside its conditions} (a premise of the prediction fails for the parameters run; its numbers are "
    r"still reported), or \emph{not checkable}",
    r"a verdict \emph{outside its conditions} says that a premise of the prediction fails",
    r"every \emph{holds only under added conditions} among them",
    r"is reported \emph{outside its conditions}, with what its numbers show there",
    "a claim that holds because no violation was detected",
    "a failed claim is a result, not a bug",
    "what counts as holding or failing",
    "where a claim fails as stated, we give the counterexample",
    "a ``holds'' here needs a run that could see",
    "a decision that does not stand the correction reads \\emph{undecided at this size}",
    "a claim holds only when the effect's interval ($\\pm 3$ s.e.) lies inside its margin and fails only when it lies outside",
    # Mathematics: statements proved or assumed by a derivation, not decided by a run.
    "so it must also hold \\emph{exactly} for the empirical moments",
    "it then also holds *exactly* for the empirical moments",
    "the frame bound of section~\\ref{sec:hdi}, holds exactly for tight fusion frames",
    "the printed law holds for some $d>0$ exactly when",
    "the covariance bound of lemma 4.1 holds with a common constant",
    "holds for population moments and, with ${\\rm ddof}=0$, for empirical ones",
    # The build: a notebook that fails is a program that stops, not a claim.
    "a notebook that fails stops the build",
    "the failing cell",
)


def _phrase_pattern(phrase: str) -> re.Pattern:
    return re.compile(r"\s+".join(re.escape(w) for w in phrase.split()), re.I)


_ALLOWED_PATTERNS = [_phrase_pattern(a) for a in ALLOWED]


def _guard_texts() -> list[str]:
    """The ``text_says`` strings of every ``guard(...)`` call in the chapters (modules and notebooks)."""
    sources = [p.read_text() for p in (ROOT / "src" / "mhanw" / "chapters").glob("*.py")]
    for nb in NOTEBOOKS:
        cells = chapters.read(nb)["cells"]
        sources += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    out = []
    for src in sources:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "guard":
                args = list(node.args[1:2]) + [k.value for k in node.keywords if k.arg == "text_says"]
                for a in args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str):
                        out.append(a.value.lower())
                    elif isinstance(a, ast.JoinedStr):
                        out.append("".join(v.value for v in a.values if isinstance(v, ast.Constant)).lower())
    return [" ".join(t.split()) for t in out if len(t.strip()) >= 8]


def _documents():
    """``(name, text)`` of every text to scan: TeX files, README (claims block blanked), markdown cells."""
    for tex in [ROOT / "paper" / "main.tex", *sorted((ROOT / "paper" / "sections").glob("*.tex"))]:
        yield str(tex.relative_to(ROOT)), tex.read_text()
    readme = (ROOT / "README.md").read_text().split("\n")
    inside = False
    for i, line in enumerate(readme):
        begin, end = theorems.BEGIN in line, theorems.END in line
        inside = inside or begin
        if inside:
            readme[i] = ""
        inside = inside and not end
    yield "README.md", "\n".join(readme)
    for page in PAGES_FROM_THE_README:  # the pages that took over the README's build, reproduction and recipes
        yield f"book/{page}.md", (ROOT / "book" / f"{page}.md").read_text()
    for nb in NOTEBOOKS:
        for k, cell in enumerate(chapters.read(nb)["cells"]):
            if cell["cell_type"] == "markdown":
                yield f"{nb.relative_to(ROOT)}[cell {k}]", "".join(cell["source"])


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _mask_byverdict(text: str) -> str:
    """``text`` with the branches of every ``\\byverdict{ID}{...}{...}{...}`` blanked: the record chooses
    the branch, so a branch may say what that verdict means."""
    out, k = list(text), 0
    while (k := text.find("\\byverdict{", k)) != -1:
        j, groups = k + len("\\byverdict"), 0
        while groups < 4 and j < len(text) and text[j] == "{":
            depth, start = 0, j
            while j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            if groups:
                out[start:j] = [c if c == "\n" else " " for c in text[start:j]]
            groups += 1
            while j < len(text) and text[j] in " \n" and groups < 4 and text[j:].lstrip().startswith("{"):
                j += 1
        k = j
    return "".join(out)


def _mask(text: str, guards: list[str]) -> str:
    """``text`` with every allowed phrase blanked, the branches of ``\\byverdict``, and every guarded
    sentence: the ``text_says`` of a chapter's guard, starting on the line right after a ``guarded:``
    marker (it may wrap).  Line breaks are kept, so line numbers stay."""
    text = _mask_byverdict(text)
    for pat in _ALLOWED_PATTERNS:
        text = pat.sub(_blank, text)
    for g in guards:

        def guarded(m: re.Match) -> str:
            before = text[: m.start()].split("\n")
            return _blank(m) if len(before) >= 2 and GUARDED.search(before[-2]) else m.group(0)

        text = _phrase_pattern(g).sub(guarded, text)
    return text


def unguarded_verdict_words() -> list[str]:
    guards = _guard_texts()
    hits = []
    for where, text in _documents():
        lines = text.split("\n")
        masked = _mask(text, guards).split("\n")
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith("%") or re.match(r"\\(re)?newcommand|\\def|\\providecommand", stripped):
                continue
            prose = re.sub(r"`[^`]*`|\\texttt\{[^}]*\}", "", masked[i])
            if WORDS.search(prose):
                hits.append(f"{where}:{i + 1}: {stripped[:160]}")
    return hits


def test_no_verdict_words_outside_generated_or_guarded_text():
    hits = unguarded_verdict_words()
    assert not hits, f"{len(hits)} verdict words outside generated or guarded text:\n" + "\n".join(hits)


def _scan(monkeypatch, text, guards=()):
    import test_verdict_words as me

    monkeypatch.setattr(me, "_documents", lambda: [("x.tex", text)])
    monkeypatch.setattr(me, "_guard_texts", lambda: [g.lower() for g in guards])
    return me.unguarded_verdict_words()


def test_scanner_finds_typed_verdicts_in_any_markup(monkeypatch):
    text = (
        "The bound fails as stated.\nThe limit \\emph{holds}.\nThe limit *holds* here.\n"
        "It is ``not checkable''.\n\\newcommand{\\X}{holds}\n% the bound holds\nit prints `check fails`\n"
    )
    assert _scan(monkeypatch, text) == [
        "x.tex:1: The bound fails as stated.",
        "x.tex:2: The limit \\emph{holds}.",
        "x.tex:3: The limit *holds* here.",
        "x.tex:4: It is ``not checkable''.",
    ]


def test_a_guarded_sentence_needs_the_marker_and_the_guards_words(monkeypatch):
    says = "the covariance falls as the angle grows and the bound holds"
    marked = f"% guarded: lemma-4.1/x\nHere {says}.\n"
    assert _scan(monkeypatch, marked, guards=[says]) == []
    wrapped = "% guarded: lemma-4.1/x\nHere the covariance falls as the angle grows\nand the bound holds.\n"
    assert _scan(monkeypatch, wrapped, guards=[says]) == []
    assert _scan(monkeypatch, marked, guards=["some other sentence that holds"]) == [f"x.tex:2: Here {says}."]
    assert _scan(monkeypatch, f"Here {says}.\n", guards=[says]) == [f"x.tex:1: Here {says}."]
    beyond = f"% guarded: lemma-4.1/x\nHere {says}, and the limit holds.\n"
    assert _scan(monkeypatch, beyond, guards=[says]) == [f"x.tex:2: Here {says}, and the limit holds."]


def test_an_allowed_phrase_excuses_only_its_own_words_and_may_wrap(monkeypatch):
    wrapped = "In short, the printed law holds\nfor some $d>0$ exactly when $p\\to2/(4+d)$.\n"
    assert _scan(monkeypatch, wrapped) == []
    extra = "the printed law holds for some $d>0$ exactly when $p\\to2/(4+d)$, and here it holds.\n"
    assert _scan(monkeypatch, extra) == [f"x.tex:1: {extra.strip()}"]


def test_every_allowed_phrase_is_used():
    """A phrase that no longer matches any text would excuse a future verdict that happens to fit it."""
    texts = [t for _, t in _documents()]
    unused = [a for a, pat in zip(ALLOWED, _ALLOWED_PATTERNS) if not any(pat.search(t) for t in texts)]
    assert not unused, f"allowed phrases that match no text (remove them): {unused}"


def test_the_branches_of_byverdict_are_guarded_and_the_rest_is_not():
    text = "A \\byverdict{x/y}{holds here}{fails\nthere}{is undecided} B fails."
    masked = _mask_byverdict(text)
    assert "holds" not in masked and "undecided" not in masked and masked.count("\n") == 1
    assert masked.startswith("A \\byverdict{x/y}") and masked.endswith(" B fails.")
