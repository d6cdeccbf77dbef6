"""The claims ledger: every chapter's verdict records, and the texts made from them.

Each chapter stores its verdict records (``mhanw.infra.verdicts.Verdict.to_dict``)
under the key ``claims`` of its results, ``build/results/NN_slug.json``.  This
module gathers them (through ``mhanw.infra.verdicts.gather``, which validates
every record and refuses a claim id that two records share) and renders them:

- :func:`latex_table` -- the table of every record for the paper;
- :func:`latex_summary` -- macros with generated sentences for the abstract and
  the summary: the records' findings as sentences (:func:`findings_sentences`), the tally
  (:func:`tally`, :func:`tally_sentence`: the paper's statements and readings counted, the companion's
  derivations and controls named apart and never counted), the records outside their conditions
  (:func:`outside_sentence`), each verdict said once, counts in words;
- :func:`markdown_table` -- the table of every record for the book;
- :func:`text_table` -- the verdict table printed at the end of ``make all``;
- :func:`differences` -- the verdicts of two ledgers that differ;
- :func:`reference_verdicts` and :func:`contradictions` -- the committed reference
  ledger of a fidelity (``reference/claims-FIDELITY.json``), and the verdicts of a
  smaller run that contradict it.

Records are plain text in which ``$...$`` holds the text's symbols (``$m_{\\cos,1.5}$``);
the generated text names claims as the paper does (:func:`claim_title`: "Theorem
2.1: identity", "the random-forest analogy") and writes the records' plain notation
as the paper's (:func:`tex_text`: ``HDI_PA`` -> ``$\\HDIpa$``).

``python -m mhanw.pipeline claims`` writes the ledger and its LaTeX; the book,
the scenario and stability reports and the tests read it through this module.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from mhanw.infra import notation, prose
from mhanw.infra.texout import format_number, tex_escape, tex_text, write_atomic
from mhanw.infra.verdicts import (
    CONTROL,
    COUNTED_ROLES,
    DERIVATION,
    FAILS,
    HOLDS,
    HOLDS_UNDER,
    OUTSIDE,
    PAPER,
    PREDICATES,
    READING,
    UNDECIDED,
    VOCABULARY,
    Statistic,
    Verdict,
    gather,
    statistic_text,
    verdict_phrase,
)

#: The LaTeX label of the generated claims table (paper/generated/claims_table.tex): chapters cite it as
#: ``[](paper:tab:claims)``.
CLAIMS_TABLE_LABEL = "tab:claims"
TABLE_HEADER = "| claim of the paper | statement | chapter | paper section | verdict |"

# --------------------------------------------------------------------------- collection


def chapters_with_claims(results_dir) -> tuple[list[Path], list[str]]:
    """The results files that hold a ``claims`` list, and the chapters that have none (yet)."""
    with_claims, without = [], []
    for path in sorted(Path(results_dir).glob("[0-9][0-9]_*.json")):
        data = read_json(path, dict)
        if isinstance(data, dict) and isinstance(data.get("claims"), list) and data["claims"]:
            with_claims.append(path)
        else:
            without.append(path.stem)
    return with_claims, without


def collect(results_dir) -> tuple[list[dict], list[str], list[str]]:
    """``(records, contributing chapters, chapters without records)`` of a results folder.

    The records are validated and ordered by ``mhanw.infra.verdicts.gather``.
    """
    paths, without = chapters_with_claims(results_dir)
    records = gather(paths)
    chapters = []
    for r in records:
        if r["chapter"] not in chapters:
            chapters.append(r["chapter"])
    return records, chapters, without


def section_numbers(paper_dir) -> dict[str, str]:
    """``{label: section number}`` for every ``\\label`` of a ``\\section`` of the paper.

    Follows ``\\input{sections/...}`` of ``main.tex`` in order and counts the
    ``\\section`` commands (not ``\\section*``), as LaTeX numbers them.
    """
    paper_dir = Path(paper_dir)
    main = paper_dir / "main.tex"
    if not main.is_file():
        return {}
    numbers: dict[str, str] = {}
    count = 0
    text = _strip_comments(main.read_text(encoding="utf-8"))
    for m in re.finditer(r"\\input\{([^}]+)\}", text):
        f = paper_dir / m.group(1)
        if f.suffix != ".tex":
            f = f.with_suffix(".tex")
        if not f.is_file():
            continue
        body = _strip_comments(f.read_text(encoding="utf-8"))
        for tok in re.finditer(r"\\section(\*?)\{|\\label\{([^}]+)\}", body):
            if tok.group(2) is None:
                if not tok.group(1):
                    count += 1
            elif count:
                numbers.setdefault(tok.group(2), str(count))
    return numbers


def _strip_comments(tex: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", tex)


def with_section_numbers(records: list[dict], numbers: dict[str, str]) -> list[dict]:
    """The records with ``section_number`` added where the section label is known."""
    out = []
    for r in records:
        r = dict(r)
        sec = r.get("section", "")
        r["section_number"] = numbers.get(sec, sec if re.fullmatch(r"\d+", sec or "") else "")
        out.append(r)
    return out


def read_json(path, kind: type = dict):
    """The JSON document of the file ``path``, of type ``kind`` (``dict`` or ``list``), or ``ValueError``
    whose one line names the file: missing, unreadable, not UTF-8, not JSON or not of that kind (a
    damaged or truncated file, or one of an older layout)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable JSON file ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, kind):
        want = "an object {...}" if kind is dict else "a list [...]"
        raise ValueError(f"{path}: expected {want}, got {type(data).__name__} (damaged, or of an older layout?)")
    return data


def load_ledger(path) -> list[dict]:
    """The records of a ``claims.json`` (validated); ``ValueError`` naming the file when it is damaged."""
    data = read_json(path, list)
    for i, d in enumerate(data):
        try:
            Verdict.from_dict(d)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: record {i} is not a verdict record ({type(exc).__name__}: {exc})") from None
    return data


def write_json(path, data) -> Path:
    return write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- names


_GROUP_NAMES = {
    "thm": "Theorem",
    "lemma": "Lemma",
    "prop": "Proposition",
    "cor": "Corollary",
    "def": "Definition",
    "eq": "Equation",
}

#: The titles the paper gives the claims that carry no number (its section titles, shortened).
GROUP_TITLES = {
    "hdi-definition": "the Head Diversity Index",
    "rf": "the random-forest analogy",
    "pretrained": "the trained transformer",
    "interp": "the training reading of Theorem 5.1",
    "interp-control": "the positive control of the training reading",
}

#: Whole parts of claim ids named by a phrase (a word-by-word reading would be wrong or ambiguous):
#: the training claim, its positive control, and their settings ``<m>-<shape>-<combination>``.
_PART_PHRASES = {
    "training-orthogonal": "training pushes heads apart",
    "penalty": "with an orthogonality penalty",
    **{
        f"{m}-{shape}-{comb}": f"{m_words}, {shape_words}, {comb_words}"
        for m, m_words in (("iso", "isotropic $m$"), ("aniso", "anisotropic $m$"))
        for shape, shape_words in (("equal", "$Hd_k=d$"), ("over", "$Hd_k>d$"), ("under", "$Hd_k<d$"))
        for comb, comb_words in (
            ("average", "averaged heads"),
            ("sum", "summed heads"),
            ("concat", "heads through $W_V$ and $W_O$"),
        )
    },
}

#: Words of claim ids as the text writes them (acronyms, notation, the regression functions' names).
_PART_WORDS = {
    "imse": "IMSE",
    "mse": "MSE",
    "hdi": "HDI",
    "pa": "HDI_PA",
    "nw": "NW",
    "bert": "BERT",
    "neff": "n_eff",
    "ddof1": "divisor R - 1",
    "gaussian": "Gaussian",
    "kappa": "κ",
    "breiman": "Breiman",
    "rho": "rho_bar",
    "fibonacci": "Fibonacci",
}


def _regression_names() -> dict[str, str]:
    """``{catalogue name: the text's symbol}`` of the regression functions (``iso_cos`` -> ``$m_{\\cos,1.5}$``)."""
    try:
        from mhanw.chapters.ch04_figures import REGRESSION_LABELS
    except ImportError:  # the library without its chapters: the plain words
        return {}
    return {k.replace("_", "-"): v for k, v in REGRESSION_LABELS.items()}


def group_of(claim: str) -> str:
    """The claim a record belongs to: the part of its id before the first ``/``."""
    return claim.split("/", 1)[0]


def group_name(group: str) -> str:
    """``thm-4.2`` -> ``Theorem 4.2``; ``hdi-definition`` -> ``the Head Diversity Index`` (:data:`GROUP_TITLES`)."""
    m = re.fullmatch(r"([a-z]+)-(\d+(?:\.\d+)*)", group)
    if m and m.group(1) in _GROUP_NAMES:
        return f"{_GROUP_NAMES[m.group(1)]} {m.group(2)}"
    return GROUP_TITLES.get(group, group.replace("-", " "))


def _part_words(part: str) -> str:
    if part in _PART_PHRASES:
        return _PART_PHRASES[part]
    names = _regression_names()
    if part in names:
        return names[part]
    return " ".join(_PART_WORDS.get(w, w) for w in part.split("-"))


def part_name(claim: str) -> str:
    """``thm-5.1/imse-optimum/iso-cos`` -> ``IMSE optimum ($m_{\\cos,1.5}$)``; the whole claim -> ``as a whole``.

    Record text (plain, with ``$...$`` for the text's symbols): a sub-part goes in parentheses, so that
    a list of parts stays unambiguous."""
    parts = [_part_words(p) for p in claim.split("/")[1:]]
    if not parts:
        return "as a whole"
    return parts[0] + "".join(f" ({p})" for p in parts[1:])


def claim_title(claim: str) -> str:
    """``thm-2.1/identity`` -> ``Theorem 2.1: identity``; ``thm-7.1`` -> ``Theorem 7.1`` (record text)."""
    title = group_name(group_of(claim))
    title = title[:1].upper() + title[1:]
    return title if "/" not in claim else f"{title}: {part_name(claim)}"


#: Each verdict as a predicate, (one, several): the one table of :mod:`mhanw.infra.verdicts`.
_VERBS = PREDICATES


def counts(records: Iterable[dict]) -> dict[str, int]:
    """Number of records per verdict, in the order of the vocabulary (absent verdicts left out)."""
    c = {v: 0 for v in VOCABULARY}
    for r in records:
        c[r["verdict"]] += 1
    return {v: k for v, k in c.items() if k}


def counts_phrase(records: list[dict], noun: str = "parts") -> str:
    """ "all four parts hold" / "two of five parts hold, three fail as stated" (each verdict once)."""
    c = counts(records)
    n = sum(c.values())
    if n == 0:
        raise ValueError("records: expected at least one record")
    out = []
    for i, (v, k) in enumerate(c.items()):
        verb = _VERBS[v][0 if k == 1 else 1]
        if i == 0:
            head = prose.count_of(k, n, noun if n > 1 else noun.rstrip("s"))
            if n == 1:
                head = f"its one {noun.rstrip('s')}" if noun else "it"
            out.append(f"{head} {verb}")
        else:
            out.append(f"{prose.number_word(k)} {verb}")
    return prose.join_list(out)


def overall_sentence(records: list[dict], what: tuple[str, str] = ("statement checked", "statements checked")) -> str:
    """ "Of the 52 statements checked, 20 hold, 18 fail as stated and ..." (each verdict once); ``what``:
    the noun phrase, (one, several)."""
    c = counts(records)
    n = sum(c.values())
    if n == 0:
        raise ValueError("records: expected at least one record")
    one, several = what
    if n == 1:
        (v,) = c
        return f"The one {one} {_VERBS[v][0]}"
    if len(c) == 1:
        (v,) = c
        return f"{_capital(prose.count_of(n, n, several))} {_VERBS[v][1]}"
    parts = [f"{prose.number_word(k)} {_VERBS[v][0 if k == 1 else 1]}" for v, k in c.items()]
    return f"Of the {prose.number_word(n)} {several}, {prose.join_list(parts)}"


def role_of(r: dict) -> str:
    """A record's role: ``paper``, ``reading``, ``derivation`` or ``control``; a legacy chapter's record
    that states none is read as the paper's (:data:`mhanw.infra.verdicts.NO_ROLE`)."""
    return r.get("role") or PAPER


def counted(records: Iterable[dict]) -> list[dict]:
    """The records the tallies and headlines count: the paper's statements and readings
    (:data:`mhanw.infra.verdicts.COUNTED_ROLES`), never a derivation or a control of the companion's own."""
    return [r for r in records if role_of(r) in COUNTED_ROLES]


def tally(records: list[dict]) -> dict:
    """The one tally of a ledger, which every output prints (the README, the book's front page and ledger
    page, the paper's summary, the scenario report): ``parts`` (the counted records), ``claims`` (their
    claim groups), ``verdicts`` (counted records per verdict, :func:`counts`), ``by_role`` (counted records
    per counted role) and ``not_counted`` (the other records per role)."""
    c = counted(records)
    others: dict[str, int] = {}
    for r in records:
        if role_of(r) not in COUNTED_ROLES:
            others[role_of(r)] = others.get(role_of(r), 0) + 1
    return {
        "parts": len(c),
        "claims": len({group_of(r["claim"]) for r in c}),
        "verdicts": counts(c),
        "by_role": {role: sum(role_of(r) == role for r in c) for role in COUNTED_ROLES},
        "not_counted": others,
    }


_ROLE_NOUNS = {DERIVATION: ("derivation", "derivations"), CONTROL: ("control", "controls")}


def tally_sentence(records: list[dict]) -> str:
    """The tally (:func:`tally`) in one sentence: the counted parts (the paper's statements and readings) by
    verdict, then the companion's derivations and controls, named and not counted: "Of the 40 parts
    checked of the paper's 11 claims (statements and readings), ...; not counted: six derivations and two
    controls of the companion's own". A claim is a record's group (:func:`group_of`), a part one record."""
    if not records:
        raise ValueError("records: expected at least one record")
    t = tally(records)
    out = []
    if t["parts"]:
        k = t["claims"]
        claims = "one claim" if k == 1 else f"{prose.number_word(k)} claims"
        out.append(
            overall_sentence(
                counted(records),
                (
                    f"part checked of the paper's {claims} (statements and readings)",
                    f"parts checked of the paper's {claims} (statements and readings)",
                ),
            )
        )
    if t["not_counted"]:
        said = [
            f"{prose.number_word(k)} {_ROLE_NOUNS.get(role, (role, role + 's'))[0 if k == 1 else 1]}"
            for role, k in t["not_counted"].items()
        ]
        s = f"not counted: {prose.join_list(said)} of the companion's own"
        out.append(s if out else _capital(s))
    return "; ".join(out)


def claim_tally(records: list[dict]) -> str:
    """One claim's counted parts by verdict (:func:`counts_phrase` of :func:`counted`): "two of five parts
    hold, three fail as stated"; the phrase every output prints beside a claim's headline."""
    c = counted(records)
    return counts_phrase(c) if c else "no part of the paper's counted"


def headline_verdict(records: list[dict]) -> str:
    """A claim's verdict as a whole, computed from its records (never stored as a record): from its
    statements (role ``paper``), its readings apart (they are the headline only of a claim that has no
    statement): fails when one fails; holds when all hold (only under added conditions when one does);
    lies outside its conditions when all do; undecided otherwise (also with no counted record)."""
    statements = [r for r in records if role_of(r) == PAPER]
    records = statements or [r for r in records if role_of(r) == READING]
    vs = [r["verdict"] for r in records]
    if not vs:
        return UNDECIDED
    if FAILS in vs:
        return FAILS
    if all(v in (HOLDS, HOLDS_UNDER) for v in vs):
        return HOLDS_UNDER if HOLDS_UNDER in vs else HOLDS
    if all(v == OUTSIDE for v in vs):
        return OUTSIDE
    return UNDECIDED


def findings_sentences(records: list[dict], roles: tuple = COUNTED_ROLES, fallback: bool = True) -> str:
    """The findings of the records of ``roles``, one sentence each, in chapter order.  With ``fallback``,
    a claim none of whose records of those roles states a finding is said by its counts
    (:func:`counts_phrase`), so that no claim drops out (the summary); without, it is left to the tally
    (the abstract).  Empty when there is nothing to say."""
    out: list[str] = []
    for g, rs in grouped([r for r in records if role_of(r) in roles]).items():
        found = [r["finding"] for r in rs if r.get("finding")]
        if found:
            out.extend(_sentence(f) for f in found)
        elif fallback:
            out.append(_sentence(f"{_capital(group_name(g))}: {claim_tally(rs)}"))
    return " ".join(out)


def failure_of(r: dict) -> str:
    """Why the failed premises of a record fail (``"; "``-joined), or an empty string."""
    return "; ".join(p.get("why", "") for p in r.get("premises") or () if not p.get("holds", True))


def numbers_predicate(shows: str) -> str:
    """What the numbers of an "outside its conditions" record show, as a predicate ("fails as stated",
    "is undecided at this size"; a rule's "holds only under added conditions" is said "holds": the
    conditions are the ones that fail)."""
    return PREDICATES[HOLDS if shows == HOLDS_UNDER else shows][0]


def outside_sentence(records: list[dict]) -> str:
    """The records outside their conditions, each with the premise that failed and what its numbers
    show (the finding, else the deciding statistic); a sentence saying there is none otherwise."""
    out = [r for r in records if r["verdict"] == OUTSIDE]
    if not out:
        return "No record lies outside its conditions under these parameters."
    said = []
    for r in out:
        detail = r.get("finding") or deciding_statistic(r)
        said.append(
            f"{claim_title(r['claim'])} ({failure_of(r)}): on its numbers it {numbers_predicate(r['shows'])}"
            + (f", {detail[:1].lower() + detail[1:]}" if detail else "")
        )
    k = len(out)
    head = (
        "One record lies outside its conditions"
        if k == 1
        else f"{_capital(prose.number_word(k))} records lie outside their conditions"
    )
    return _sentence(f"{head} under these parameters: {'; '.join(said)}")


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def grouped(records: list[dict]) -> dict[str, list[dict]]:
    g: dict[str, list[dict]] = {}
    for r in records:
        g.setdefault(group_of(r["claim"]), []).append(r)
    return g


def by_verdict_sentence(records: list[dict]) -> str:
    """Each verdict once, with the claims (and their parts) that received it."""
    pairs = []
    for v in VOCABULARY:
        per_group: dict[str, list[str]] = {}
        for r in records:
            if r["verdict"] == v:
                per_group.setdefault(group_of(r["claim"]), []).append(part_name(r["claim"]))
        for g, parts in per_group.items():
            pairs.append((f"{group_name(g)} ({prose.join_list(parts)})", v))
    return prose.group_by_verdict(pairs) if pairs else ""


# --------------------------------------------------------------------------- LaTeX


def claim_tex(claim: str) -> str:
    """A claim's title as LaTeX (``Theorem 2.1: identity``)."""
    return tex_text(claim_title(claim))


def _statistics(r: dict) -> list[Statistic]:
    return [
        Statistic(
            s["name"],
            math.nan if s["value"] is None else s["value"],
            math.nan if s.get("se") is None else s["se"],
            s.get("unit", ""),
        )
        for s in r.get("statistics", ())
    ]


def statistic_texts(r: dict) -> list[str]:
    """Every statistic of a record as ``name = value ± se unit`` (plain text), in order."""
    return [statistic_text(s) for s in _statistics(r)]


def deciding_statistic(r: dict) -> str:
    """The statistic that decided the record (its ``deciding``: ``name = value ± se unit (z = 4.1 s.e. from
    the threshold 1)``), else its first statistic, as plain text; an empty string when it has none.  The
    one place every output takes a record's deciding number from."""
    d = r.get("deciding")
    stats = _statistics(r)
    if d:
        unit = next((s.unit for s in stats if s.name == d["path"]), "")
        s = Statistic(d["path"], d["value"], math.nan if d.get("se") is None else d["se"], unit)
        z = d.get("z")
        where = "" if z is None else f" ({z:.1f} s.e. from {_thr(d['threshold'])})"
        return statistic_text(s) + where
    return statistic_text(stats[0]) + (f" (+{len(stats) - 1} more)" if len(stats) > 1 else "") if stats else ""


def _thr(x: float) -> str:
    return f"{x:.3g}"


def verdict_text(r: dict) -> str:
    """A record's verdict as printed: with its conditions, or with its failed premise and what the numbers
    show (:func:`mhanw.infra.verdicts.verdict_phrase`)."""
    return verdict_phrase(r["verdict"], r.get("conditions") or "", failure_of(r), r.get("shows") or "")


def power_tex(r: dict) -> str:
    """The detectable size and the tolerance of a record, ``$0.03$ / $0.05$`` (either may be missing)."""
    d, t = r.get("detectable"), r.get("tolerance")
    det = "" if d is None or not math.isfinite(d) else f"${format_number(d, 2)}$"
    tol = "" if t is None or not math.isfinite(t) else f"${format_number(t, 2)}$"
    unit = r.get("unit") or ""
    if not (det or tol):
        return ""
    text = f"{det or '--'} / {tol}" if tol else det
    return text + (f" {tex_text(unit)}" if unit else "")  # a breakable space: a unit may be long


def _section_ref(r: dict) -> str:
    sec = r.get("section", "")
    if re.fullmatch(r"[A-Za-z]+:[A-Za-z0-9:.-]+", sec or ""):
        return f"\\ref{{{sec}}}"
    return tex_escape(sec or "")


def _letters(k: int) -> str:
    return (chr(ord("a") + k // 26 - 1) if k >= 26 else "") + chr(ord("a") + k % 26)


def _note_of(r: dict) -> str:
    """What a record's note under the table says: its conditions, or why its premises fail."""
    if r.get("verdict") == OUTSIDE:
        return failure_of(r)
    return r.get("conditions") or ""


def condition_marks(records: list[dict]) -> dict[str, str]:
    """``{note: mark}`` of the records that hold only under added conditions or lie outside them, in order of
    first appearance: ``a``, ``b``, ... (``aa``, ``ab``, ... after ``z``); records with the same note
    share a mark, so the paper's table states each set of conditions (each failed premise) once, as a note."""
    marks: dict[str, str] = {}
    for r in records:
        note = _note_of(r)
        if note and note not in marks:
            marks[note] = _letters(len(marks))
    return marks


def _verdict_cell(r: dict, marks: dict[str, str]) -> str:
    """The verdict of the vocabulary, in italics; conditions (or the failed premise, and what the numbers
    show) as a note mark (the note under the table)."""
    note = _note_of(r)
    cell = f"\\emph{{{tex_text(r['verdict'])}}}" + (f"\\textsuperscript{{{marks[note]}}}" if note else "")
    if r.get("verdict") == OUTSIDE and r.get("shows"):
        cell += f" (the numbers: {tex_text(r['shows'])})"
    return cell


_ROLE_MARK = {READING: " (reading)", DERIVATION: " (derivation)", CONTROL: " (control)"}


def latex_table(records: list[dict]) -> str:
    """Every record as a row of a long table (claim, statement, verdict, statistic, detectable / tolerance,
    section).

    The conditions of "holds only under added conditions" and the failed premises of "outside its
    conditions" are notes under the table (one per distinct text, :func:`condition_marks`), so the
    verdict column stays one or two lines high; readings, derivations and controls are marked after the claim."""
    head = "% Generated by mhanw.pipeline.ledger from build/claims.json; do not edit.\n"
    if not records:
        return head + (
            "\\paragraph{Claims ledger.} No chapter has recorded its verdicts yet "
            "(\\texttt{build/claims.json} is empty), so no table of verdicts can be printed.\n"
        )
    marks = condition_marks(records)
    rows = []
    for r in records:
        rows.append(
            " & ".join(
                [
                    claim_tex(r["claim"]) + (f"\\emph{{{_ROLE_MARK[role_of(r)]}}}" if role_of(r) in _ROLE_MARK else ""),
                    tex_text(r["statement"]),
                    _verdict_cell(r, marks),
                    tex_text(deciding_statistic(r)),
                    power_tex(r),
                    _section_ref(r),
                ]
            )
            + " \\\\"
        )
    cond = {n: m for n, m in marks.items() if any(_note_of(r) == n and r["verdict"] != OUTSIDE for r in records)}
    fail = {n: m for n, m in marks.items() if n not in cond}
    notes = []
    if cond:
        notes.append(
            f"Conditions of the verdicts \\emph{{{tex_text(HOLDS_UNDER)}}}: "
            + "; ".join(f"\\textsuperscript{{{m}}}\\,{tex_text(c)}" for c, m in cond.items())
            + "."
        )
    if fail:
        notes.append(
            f"Premises that fail, for the verdicts \\emph{{{tex_text(OUTSIDE)}}}: "
            + "; ".join(f"\\textsuperscript{{{m}}}\\,{tex_text(c)}" for c, m in fail.items())
            + "."
        )
    notes_row = (
        ("\\multicolumn{6}{@{}p{\\linewidth}@{}}{\\rule{0pt}{2.6ex}" + " ".join(notes) + "} \\\\") if notes else ""
    )
    return head + "\n".join(
        [
            "{\\footnotesize",
            "\\setlength{\\tabcolsep}{3pt}",
            "\\begin{longtable}{@{}>{\\raggedright\\arraybackslash}p{0.15\\linewidth}"
            ">{\\raggedright\\arraybackslash}p{0.29\\linewidth}>{\\raggedright\\arraybackslash}p{0.12\\linewidth}"
            ">{\\raggedright\\arraybackslash}p{0.23\\linewidth}>{\\raggedright\\arraybackslash}p{0.1\\linewidth}r@{}}",
            "\\caption{Every verdict of the companion, one row per record of the claims ledger "
            "(\\texttt{build/claims.json}): the statement checked, its verdict, the deciding statistic "
            "$\\pm$ its standard error, and the smallest violation the run could have detected with the "
            "tolerance that matters for the claim (a claim holds from a non-detection only when the first is "
            "below the second). A claim outside its conditions keeps what its numbers show; readings are "
            "marked after the claim, and the companion's derivations and controls are marked and never counted."
            + (
                " A letter after a verdict refers to its conditions, or to the premise that fails, listed under the "
                "table."
                if marks
                else ""
            )
            + "}\\label{"
            + CLAIMS_TABLE_LABEL
            + "}\\\\",
            "\\toprule",
            "claim & statement & verdict & deciding statistic & detect.\\,/\\,tol. & sec. \\\\",
            "\\midrule\\endfirsthead",
            "\\toprule claim & statement & verdict & deciding statistic & detect.\\,/\\,tol. & sec. \\\\ "
            "\\midrule\\endhead",
            "\\bottomrule\\endfoot",
            "\\bottomrule" + (f"\n{notes_row}" if notes_row else "") + "\\endlastfoot",
            *rows,
            "\\end{longtable}}",
            "",
        ]
    )


def _csdef(prefix: str, key: str, value: str) -> str:
    return f"\\expandafter\\def\\csname {prefix}@{key}\\endcsname{{{value}}}"


def latex_summary(records: list[dict]) -> str:
    """Macros with generated sentences, for the abstract and the summary.

    - ``\\ClaimsFindings``: "What the checks find: " and the findings of the paper's claims, one
      sentence each (:func:`findings_sentences`), or nothing when no record states one (the abstract);
      ``\\ClaimsFindingsByClaim``: the same with every claim without a finding said by its counts (the
      summary); ``\\ClaimsSideFindings``: those of the derivations and controls (not counted);
    - ``\\ClaimsTally``: the tally (:func:`tally_sentence`): the paper's statements and readings counted,
      the companion's derivations and controls named; ``\\ClaimsOverall``: the same (kept for old texts);
    - ``\\ClaimsOutside``: the records outside their conditions, with the failed premise and
      what the numbers show (:func:`outside_sentence`);
    - ``\\ClaimsTotal``: the number of records;
    - ``\\ClaimsByVerdict``: each verdict once with the counted claims and parts that received it;
    - ``\\ClaimsOf{thm-4.2}``: that claim's counted parts by verdict (:func:`claim_tally`);
    - ``\\ClaimHeadline{thm-4.2}``: that claim's verdict as a whole, computed from its counted records
      (:func:`headline_verdict`; no aggregate is a record), as a predicate ("it \\ClaimHeadline{...}");
    - ``\\ClaimVerdict{thm-2.1/identity}``: one record's verdict (the word, with its conditions);
      ``\\ClaimIs{thm-2.1/identity}``: the same as a predicate, for "it \\ClaimIs{...}"
      (:func:`mhanw.infra.verdicts.predicate`).

    A claim id without a record prints a bold "(not recorded)" and a LaTeX warning,
    never a verdict.
    """
    lines = [
        "% Generated by mhanw.pipeline.ledger from build/claims.json; do not edit.",
        "\\makeatletter",
        "\\newcommand{\\mhanw@missing}[1]{\\textbf{(#1: not recorded)}"
        "\\PackageWarning{mhanw}{no verdict record for claim #1}}",
        "\\newcommand{\\ClaimVerdict}[1]{\\ifcsname mhanw@verdict@#1\\endcsname"
        "\\csname mhanw@verdict@#1\\endcsname\\else\\mhanw@missing{#1}\\fi}",
        "\\newcommand{\\ClaimIs}[1]{\\ifcsname mhanw@is@#1\\endcsname"
        "\\csname mhanw@is@#1\\endcsname\\else\\mhanw@missing{#1}\\fi}",
        "\\newcommand{\\ClaimsOf}[1]{\\ifcsname mhanw@group@#1\\endcsname"
        "\\csname mhanw@group@#1\\endcsname\\else\\mhanw@missing{#1}\\fi}",
        "\\newcommand{\\ClaimHeadline}[1]{\\ifcsname mhanw@headline@#1\\endcsname"
        "\\csname mhanw@headline@#1\\endcsname\\else\\mhanw@missing{#1}\\fi}",
    ]
    if records:
        n = len(records)
        tally = tally_sentence(records)
        lines.append(f"\\newcommand{{\\ClaimsTotal}}{{{n}}}")
        lines.append(f"\\newcommand{{\\ClaimsTally}}{{{tex_text(tally)}}}")
        lines.append(f"\\newcommand{{\\ClaimsOverall}}{{{tex_text(tally)}}}")
        found = findings_sentences(records, fallback=False)
        lines.append(
            f"\\newcommand{{\\ClaimsFindings}}{{{tex_text(f'What the checks find: {found}' if found else '')}}}"
        )
        lines.append(f"\\newcommand{{\\ClaimsFindingsByClaim}}{{{tex_text(findings_sentences(records))}}}")
        side = findings_sentences(records, (DERIVATION, CONTROL))
        lines.append(f"\\newcommand{{\\ClaimsSideFindings}}{{{tex_text(side)}}}")
        lines.append(f"\\newcommand{{\\ClaimsOutside}}{{{tex_text(outside_sentence(records))}}}")
        lines.append(f"\\newcommand{{\\ClaimsByVerdict}}{{{tex_text(by_verdict_sentence(counted(records)))}}}")
        for r in records:
            lines.append(_csdef("mhanw@verdict", r["claim"], tex_text(verdict_text(r))))
            lines.append(_csdef("mhanw@is", r["claim"], tex_text(_VERBS[r["verdict"]][0])))
        for g, rs in grouped(records).items():
            lines.append(_csdef("mhanw@group", g, tex_text(claim_tally(rs))))
            lines.append(_csdef("mhanw@headline", g, tex_text(_VERBS[headline_verdict(rs)][0])))
        groups = [f"{group_name(g)}: {claim_tally(rs)}" for g, rs in grouped(records).items() if counted(rs)]
        lines.append(f"\\newcommand{{\\ClaimsByClaim}}{{{tex_text('; '.join(groups))}}}")
    else:
        none = "no chapter has recorded its verdicts yet"
        lines += [
            "\\newcommand{\\ClaimsTotal}{0}",
            f"\\newcommand{{\\ClaimsTally}}{{{_capital(none)}}}",
            f"\\newcommand{{\\ClaimsOverall}}{{{_capital(none)}}}",
            "\\newcommand{\\ClaimsFindings}{}",
            f"\\newcommand{{\\ClaimsFindingsByClaim}}{{{_capital(none)}.}}",
            "\\newcommand{\\ClaimsSideFindings}{}",
            f"\\newcommand{{\\ClaimsOutside}}{{{_capital(none)}.}}",
            f"\\newcommand{{\\ClaimsByVerdict}}{{{none}}}",
            f"\\newcommand{{\\ClaimsByClaim}}{{{none}}}",
        ]
    lines += ["\\makeatother", ""]
    return "\n".join(lines)


def _capital(s: str) -> str:
    return s[:1].upper() + s[1:]


# --------------------------------------------------------------------------- Markdown and terminal


def _md(text: str) -> str:
    """Record text for a table cell: the named notation as math (:func:`mhanw.infra.notation.markdown_text`),
    and a vertical bar as U+2223 (readers split rows on "|")."""
    return notation.markdown_text(str(text)).replace("|", "\u2223").replace("\n", " ")


def markdown_table(records: list[dict]) -> str:
    """Every record as a Markdown table (the book's ledger page)."""
    if not records:
        return "No chapter has recorded its verdicts yet: run `make all`."
    lines = [TABLE_HEADER, "|---|---|---|---|---|"]
    for r in records:
        stat = deciding_statistic(r)
        lines.append(
            "| "
            + " | ".join(
                [
                    f"`{r['claim']}`",
                    _md(r["statement"]) + (f" ({_md(stat)})" if stat else ""),
                    f"`{r['chapter']}`",
                    _md(r.get("section_number") or r.get("section", "")),
                    _md(verdict_text(r)),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def reference_path(root, fidelity: str) -> Path:
    """The committed reference ledger of a fidelity: ``reference/claims-FIDELITY.json``.

    It is renewed on purpose (``make reference``), never by ``make all``; tests and
    ``make scenario`` compare a run's verdicts with the reference of the same fidelity
    (:func:`contradictions`, :func:`differences`)."""
    return Path(root) / "reference" / f"claims-{fidelity}.json"


def check_renewal(root, records: list[dict], reference: Path, fidelity: str, reason: str | None = None) -> None:
    """``ValueError`` when ``records`` (the default run's ledger) may not replace the committed reference
    ledger ``reference`` of ``fidelity``: an empty ledger (a build that ran no chapter); one with fewer
    records than the committed one unless ``reason`` says why (a claim removed on purpose); one whose
    chapters ran at another fidelity (their timings in ``build/timings/default/``)."""
    if not records:
        raise ValueError(
            "build/claims.json: 0 records; a reference ledger is renewed from a build that ran every "
            f"chapter (make all FIDELITY={fidelity})"
        )
    # read as plain JSON: the committed reference may be of an older layout (its verdict words, its roles)
    before = read_json(reference, list) if Path(reference).is_file() else []
    if len(records) < len(before) and not (reason and reason.strip()):
        lost = sorted({r["claim"] for r in before} - {r["claim"] for r in records})
        raise ValueError(
            f"build/claims.json: {len(records)} records, fewer than the {len(before)} of "
            f"{Path(reference).name} (missing: {', '.join(lost[:5])}{', ...' if len(lost) > 5 else ''}); "
            "give --reason TEXT to renew it all the same"
        )
    timings = Path(root) / "build" / "timings" / "default"
    for chapter in sorted({r["chapter"] for r in records}):
        path = timings / f"{chapter}.json"
        if path.is_file():
            ran = read_json(path, dict).get("fidelity")
            if ran != fidelity:
                raise ValueError(
                    f"build/claims.json: chapter {chapter} ran at fidelity {ran!r} ({path.name} of "
                    f"build/timings/default), not {fidelity!r}; make all FIDELITY={fidelity} first"
                )


def reference_verdicts(root, fidelity: str) -> dict[str, str]:
    """``{claim id: verdict}`` of the reference ledger of ``fidelity`` (``ValueError`` when it is missing)."""
    path = reference_path(root, fidelity)
    if not path.is_file():
        raise ValueError(f"{path}: no reference ledger (make reference FIDELITY={fidelity})")
    return {r["claim"]: r["verdict"] for r in load_ledger(path)}


def contradictions(reference: dict[str, str], records: list[dict]) -> list[tuple[str, str | None, str]]:
    """``(claim, reference verdict, verdict)`` for every record whose verdict is neither the reference's nor
    ``undecided at this size`` (a smaller run may lack the evidence, never reach the opposite), and for
    every record the reference lacks (``None``: nothing to compare with)."""
    out = []
    for r in records:
        ref = reference.get(r["claim"])
        if ref is None or r["verdict"] not in (ref, UNDECIDED):
            out.append((r["claim"], ref, r["verdict"]))
    return out


def plain_text(text: str) -> str:
    """Record text for a terminal: the text's symbols without their TeX (``$m_{\\cos,1.5}$`` -> ``m_cos,1.5``)."""
    return re.sub(r"\$([^$]+)\$", lambda m: re.sub(r"\\mathrm|\\|[{}]", "", m.group(1)), text)


def text_table(records: list[dict], width: int = 44) -> str:
    """The verdicts as a fixed-width table for the terminal: one line per claim under its title."""
    if not records:
        return "    (no verdict records)"
    w = min(max(len(r["claim"]) for r in records), width)
    out = [f"    {'claim':<{w + 2}}  verdict"]
    for g, rs in grouped(records).items():
        name = group_name(g)
        out.append(f"    {name[:1].upper() + name[1:]}")
        for r in rs:
            out.append(f"      {r['claim']:<{w}}  {plain_text(verdict_text(r))}")
    out.append("    " + (tally_sentence(records) if records else ""))
    return "\n".join(out)


def differences(default: list[dict], other: list[dict]) -> list[tuple[str, str | None, str | None]]:
    """``(claim, default verdict, other verdict)`` for every claim whose verdict differs (or is in one only)."""
    a = {r["claim"]: r["verdict"] for r in default}
    b = {r["claim"]: r["verdict"] for r in other}
    out = []
    for claim in list(a) + [c for c in b if c not in a]:
        if a.get(claim) != b.get(claim):
            out.append((claim, a.get(claim), b.get(claim)))
    return out


# --------------------------------------------------------------------------- one run's ledger


def stopped_chapters(results_dir) -> dict[str, str]:
    """``{chapter: message}`` of the chapters of a run that a guarded sentence stopped
    (their results file says ``stopped``: :mod:`mhanw.pipeline.runner`)."""
    out = {}
    for path in sorted(Path(results_dir).glob("[0-9][0-9]_*.json")):
        data = read_json(path, dict)
        if data.get("stopped"):
            out[path.stem] = str(data["stopped"])
    return out


def write_run_ledger(folder, meta: dict) -> list[dict]:
    """``FOLDER/claims.json`` from ``FOLDER/results/*.json`` and ``FOLDER/run.json`` (``meta`` and the
    chapters that stopped); returns the records."""
    folder = Path(folder)
    records, chapters, _ = collect(folder / "results")
    stopped = stopped_chapters(folder / "results")
    write_json(folder / "run.json", {**meta, "chapters": sorted(set(chapters) | set(stopped)), "stopped": stopped})
    write_json(folder / "claims.json", records)
    return records


def write_default_ledger(root) -> list[dict]:
    """The default run's ledger ``build/claims.json`` and the paper's ``claims_table.tex`` and
    ``claims_summary.tex`` (generated sentences for the abstract and the summary)."""
    root = Path(root)
    records, chapters, without = collect(root / "build" / "results")
    records = with_section_numbers(records, section_numbers(root / "paper"))
    write_json(root / "build" / "claims.json", records)
    gen = root / "paper" / "generated"
    write_atomic(gen / "claims_table.tex", latex_table(records))
    write_atomic(gen / "claims_summary.tex", latex_summary(records))
    print(
        f"    claims ledger: build/claims.json, {len(records)} records from {len(chapters)} chapters"
        + (f"; no records yet from {', '.join(without)}" if without else "")
    )
    return records
