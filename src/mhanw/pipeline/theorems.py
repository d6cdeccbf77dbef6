"""What the paper claims and what the companion found, one row per claim: the README's table and the
book's front page.

The claims in plain words live in one committed file, ``book/theorems.toml`` (one ``[[theorem]]`` per
claim group of the ledger: ``claim``, ``chapter``, ``says``, ``deciding``, ``figure``, and optionally
``panel`` and ``look``); verdicts and
numbers never do.  :func:`findings` joins it with a ledger's records: per claim, the verdict and the
first statistic of its *deciding* record (the part of the claim the plain words state), and the
verdicts of all its parts counted (:func:`mhanw.pipeline.ledger.counts_phrase`).

- :func:`readme_table` renders them as the README's Markdown table, from the committed paper-fidelity
  reference ledger (``reference/claims-paper.json``); :func:`update_readme` rewrites the README's block
  between :data:`BEGIN` and :data:`END` on purpose (``python -m mhanw.pipeline readme``, also run by
  ``make reference``), never ``make all``; a test checks the committed block equals the function's text.
- the book's front page renders the same :class:`Finding` records as cards, from the build's ledger
  (:mod:`mhanw.pipeline.book`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from mhanw.infra import notation
from mhanw.infra.verdicts import COUNTED_ROLES, READING

from . import ledger

#: The committed file of the claims in plain words, relative to the repository's root.
THEOREMS_FILE = Path("book") / "theorems.toml"
#: The markers of the README's generated block.
BEGIN = "<!-- theorems:begin -->"
END = "<!-- theorems:end -->"
_KEYS = ("claim", "chapter", "says", "deciding", "figure")
#: Keys an entry may give: the ``panel`` of the key figure its card shows (a panel's letter or place,
#: :func:`mhanw.infra.figures.panel_boxes`) and ``look``, what to see in it (Markdown, one sentence).
_OPTIONAL = ("panel", "look", "reading")
_PANEL = re.compile(r"[a-z]|[1-9][0-9]?")


class TheoremsError(ValueError):
    """``book/theorems.toml`` or the README cannot be used as they are; the message says which entry and why."""


@dataclass(frozen=True)
class Theorem:
    """One claim of the paper in plain words (an entry of ``book/theorems.toml``)."""

    claim: str  # the ledger's claim group: thm-2.1, hdi-definition, ...
    chapter: str  # NN_slug
    says: str  # Markdown, $math$ allowed
    deciding: str  # the id of the record the front door shows
    figure: str  # the key figure's name
    panel: str = ""  # the panel of the key figure the front page shows ("" : the whole figure)
    look: str = ""  # what to see in it (Markdown)
    reading: str = ""  # the id of the reading record shown beside the statement's ("" : none)

    @property
    def title(self) -> str:
        """``Theorem 2.1``, ``The Head Diversity Index`` (:func:`mhanw.pipeline.ledger.group_name`)."""
        name = ledger.group_name(self.claim)
        return name[:1].upper() + name[1:]


@dataclass(frozen=True)
class Finding:
    """A claim and what the ledger says of it: the deciding record's verdict, conditions and first
    statistic (plain record text), and the verdicts of all the claim's parts counted."""

    theorem: Theorem
    verdict: str
    conditions: str
    number: str  # "name = value ± se" or "" (a record without statistics)
    tally: str  # the counted parts: "four of nine parts hold, five fail as stated" (ledger.claim_tally)
    parts: int  # the counted parts (ledger.counted)
    part: str = ""  # the deciding record's statement: which part of the claim the verdict and number are of
    label: str = ""  # the deciding record's part name ("identity")
    reading_label: str = ""  # the reading record's part name ("locality"), or ""
    reading_verdict: str = ""
    reading_number: str = ""

    @property
    def headline(self) -> str:
        """The claim's headline, its statement and its reading apart: ``identity: holds · locality (reading):
        fails as stated`` (plain record text); without a reading, the statement's verdict alone."""
        if not self.reading_verdict:
            return self.verdict
        return f"{self.label}: {self.verdict} · {self.reading_label} (reading): {self.reading_verdict}"


def load(root) -> list[Theorem]:
    """The entries of ``book/theorems.toml`` under ``root``, in order (:class:`TheoremsError` when malformed)."""
    path = Path(root) / THEOREMS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TheoremsError(f"{THEOREMS_FILE}: cannot be read ({exc})") from None
    entries = data.get("theorem")
    if not isinstance(entries, list) or not entries:
        raise TheoremsError(f"{THEOREMS_FILE}: expected [[theorem]] entries")
    out, seen = [], set()
    for i, e in enumerate(entries):
        where = f"{THEOREMS_FILE}, entry {i + 1}"
        if not isinstance(e, dict):
            raise TheoremsError(f"{where}: expected a table")
        missing = [k for k in _KEYS if not isinstance(e.get(k), str) or not e[k].strip()]
        missing += [k for k in _OPTIONAL if k in e and (not isinstance(e[k], str) or not e[k].strip())]
        extra = sorted(set(e) - set(_KEYS) - set(_OPTIONAL))
        if missing or extra:
            raise TheoremsError(
                f"{where}: "
                + "; ".join(
                    ([f"needs {', '.join(missing)} (non-empty strings)"] if missing else [])
                    + ([f"unknown keys {', '.join(extra)}"] if extra else [])
                )
            )
        t = Theorem(**{k: e[k].strip() for k in (*_KEYS, *_OPTIONAL) if k in e})
        if t.panel and not _PANEL.fullmatch(t.panel):
            raise TheoremsError(f"{where}: panel {t.panel!r}: expected a panel's letter (a-z) or its place (1-99)")
        if t.claim in seen:
            raise TheoremsError(f"{where}: claim {t.claim!r} has an entry already")
        if ledger.group_of(t.deciding) != t.claim:
            raise TheoremsError(f"{where}: deciding record {t.deciding!r} is not a part of claim {t.claim!r}")
        if t.reading and ledger.group_of(t.reading) != t.claim:
            raise TheoremsError(f"{where}: reading record {t.reading!r} is not a part of claim {t.claim!r}")
        seen.add(t.claim)
        out.append(t)
    return out


def findings(theorems: list[Theorem], records: list[dict], *, strict: bool = True) -> list[Finding]:
    """One :class:`Finding` per claim group of ``records``, in the ledger's order.

    ``strict`` (the README): every group with a counted record (:func:`mhanw.pipeline.ledger.counted`)
    needs an entry and every entry's deciding record must be in the ledger, else :class:`TheoremsError`
    naming it.  A headline never rests on a derivation or a control: a deciding record of such a role is
    an error (strict or not), and so is a ``reading`` record whose role is not ``reading``.  Not strict (the book, built from whatever ran):
    a group without an entry is left out, and so is an entry whose deciding record is missing.
    """
    by_claim = {t.claim: t for t in theorems}
    groups = ledger.grouped(records)
    missing = [g for g in groups if g not in by_claim and ledger.counted(groups[g])]
    if strict and missing:
        raise TheoremsError(
            f"{THEOREMS_FILE}: no entry for claim {', '.join(missing)} (chapter "
            f"{groups[missing[0]][0].get('chapter', '?')}): add its plain words"
        )
    out = []
    for g, rs in groups.items():
        t = by_claim.get(g)
        if t is None:
            continue
        rec = next((r for r in rs if r["claim"] == t.deciding), None)
        if rec is None:
            if strict:
                raise TheoremsError(
                    f"{THEOREMS_FILE}: claim {g}: the ledger has no record {t.deciding!r} "
                    f"(its records: {', '.join(r['claim'] for r in rs)})"
                )
            continue
        if ledger.role_of(rec) not in COUNTED_ROLES:
            raise TheoremsError(
                f"{THEOREMS_FILE}: claim {g}: the headline rests on {t.deciding!r}, a {ledger.role_of(rec)} "
                "record; it must rest on a statement or a reading of the paper"
            )
        read = next((r for r in rs if r["claim"] == t.reading), None) if t.reading else None
        if read is not None and ledger.role_of(read) != READING:
            raise TheoremsError(f"{THEOREMS_FILE}: claim {g}: {t.reading!r} is a {ledger.role_of(read)} record")
        out.append(
            Finding(
                t,
                rec["verdict"],
                rec.get("conditions") or "",
                ledger.deciding_statistic(rec),
                ledger.claim_tally(rs),
                len(ledger.counted(rs)),
                rec.get("statement") or "",
                ledger.part_name(rec["claim"]),
                "" if read is None else ledger.part_name(read["claim"]),
                "" if read is None else read["verdict"],
                "" if read is None else ledger.deciding_statistic(read),
            )
        )
    return out


# --------------------------------------------------------------------------- Markdown (the README)

_MATH = re.compile(r"(\$[^$]+\$)")


def markdown_safe(text: str) -> str:
    """Record text as one line of Markdown that renders as written (:func:`mhanw.infra.notation.markdown_safe`:
    the named notation as math, markup characters escaped outside ``$...$``), a vertical bar as U+2223
    (a table's cells split on it)."""
    pieces = _MATH.split(notation.markdown_safe(str(text).replace("\n", " ")))
    return "".join(p if i % 2 else p.replace("|", "\u2223") for i, p in enumerate(pieces))


def readme_table(found: list[Finding]) -> str:
    """The README's table: claim (linked to its chapter), the claim in plain words, the verdict of the
    deciding part with the other parts counted, and the deciding number."""
    lines = ["| claim | in plain words | what we found | the deciding number |", "|---|---|---|---|"]
    for f in found:
        t = f.theorem
        tally = f" ({f.tally})" if f.parts > 1 else ""
        verdicts = (
            f"**{f.verdict}**"
            if not f.reading_verdict
            else markdown_safe(f"{f.label}: ")
            + (f"**{f.verdict}** · {markdown_safe(f.reading_label)} (reading): **{f.reading_verdict}**")
        )
        number = markdown_safe(f.number) or "–"
        if f.reading_number:
            number += " · " + markdown_safe(f.reading_number)
        lines.append(
            f"| [{t.title}](notebooks/{t.chapter}.md) | {t.says.replace('|', chr(0x2223))} | "
            f"{verdicts}{markdown_safe(tally)} | {number} |"
        )
    return "\n".join(lines)


def readme_block(root) -> str:
    """The README's generated block, markers included, from the committed paper-fidelity reference."""
    root = Path(root)
    records = ledger.load_ledger(ledger.reference_path(root, "paper"))
    body = readme_table(findings(load(root), records))
    note = (
        f"<!-- generated from {ledger.reference_path(root, 'paper').relative_to(root).as_posix()} and "
        f"{THEOREMS_FILE.as_posix()} by `python -m mhanw.pipeline readme` (make reference); do not edit -->"
    )
    return "\n".join([BEGIN, note, "", body, "", END])


def _split(text: str) -> tuple[str, str, str]:
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise TheoremsError(f"README.md: expected one {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN)
    block, tail = rest.split(END)
    return head, BEGIN + block + END, tail


def readme_current_block(root) -> str:
    """The block as committed in ``README.md`` (markers included)."""
    return _split((Path(root) / "README.md").read_text(encoding="utf-8"))[1]


def update_readme(root) -> bool:
    """Rewrite the README's block from the reference ledger; True when the file changed."""
    from mhanw.infra.texout import write_atomic

    path = Path(root) / "README.md"
    text = path.read_text(encoding="utf-8")
    head, old, tail = _split(text)
    new = readme_block(root)
    if new == old:
        return False
    write_atomic(path, head + new + tail)
    return True
