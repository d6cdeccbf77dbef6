"""Every repository path that the code, the docstrings, the book, the chapters and the environment's
files cite exists: a renamed or removed file cannot leave a reference to it behind.

A cited path is a word that starts with one of the repository's top-level folders (``src/``,
``tests/``, ``book/``, ``scripts/``, ...), e.g. ``tests/test_pipeline.py``. Not checked: a template
(``notebooks/NN_slug.md``, ``scenarios/{name}.toml``, ``reference/claims-$(FIDELITY).json``), and a
path git ignores (``build/``, ``figures/``, ``paper/generated/``: what the build writes). In the tests,
only comments and docstrings are read: their string literals are fixtures of made-up repositories.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize

from nbtools import ROOT, tracked_files

#: The repository's top-level folders, the start of a cited path.
TOP = ("src", "tests", "book", "scripts", "notebooks", "reference", "paper", "scenarios", "figures", ".ci")
_PATH = re.compile(r"(?<![\w./$-])((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w./-]*)(.?)")
#: A path component that stands for any name in the prose (``NN_slug``, ``NAME``, ``X``, ``FIDELITY``).
_PLACEHOLDER = re.compile(r"(?<![A-Z])(NN|NAME|X|FIDELITY|F|S|NEW)(?![a-z])")
#: Examples a reader is told to create, cited as such (the README's and Extend a proof's scenario).
EXAMPLES = {"scenarios/mine.toml"}


def _python_prose(text: str) -> str:
    """The comments and docstrings of a Python source (every string that is a statement on its own)."""
    out = []
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            out.append(tok.string)
        elif tok.type == tokenize.STRING:
            before = next((t for t in reversed(tokens[:i]) if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                out.append(tok.string)
    return "\n".join(out)


def _sources() -> dict[str, str]:
    """``{file: the text in which it cites paths}``: every tracked text file but test data."""
    out = {}
    for rel in tracked_files():
        path = ROOT / rel
        if rel.startswith("tests/data/") and not rel.endswith(".py"):
            continue  # data a test reads: its provenance fields record where it was made
        if path.suffix in (".json", ".png", ".pdf", ".bib") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        out[rel] = _python_prose(text) if rel.startswith("tests/") and rel.endswith(".py") else text
    return out


def _ignored(paths: set[str]) -> set[str]:
    """The paths git ignores (what the build writes)."""
    if not paths:
        return set()
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ROOT,
        input="\n".join(sorted(paths)) + "\n",
        capture_output=True,
        text=True,
    )
    return set(proc.stdout.split())


def cited_paths(text: str) -> set[str]:
    """The repository paths ``text`` cites, templates left out."""
    out = set()
    for m in _PATH.finditer(text):
        path, after = m.group(1), m.group(2)
        if after in ("{", "<", "*", "$", "[", "%") or _PLACEHOLDER.search(path) or path in EXAMPLES:
            continue
        path = path.rstrip("./")  # a sentence's full stop, a folder's slash
        if path.count("/"):
            out.add(path)
    return out


def test_cited_paths_are_found_in_prose_and_not_in_templates():
    text = """See `tests/test_pipeline.py`, ``src/mhanw/nw.py``. The chapters are notebooks/NN_slug.md and
    scenarios/{name}.toml, reference/claims-$(FIDELITY).json and figures/*.png; paper/main.tex."""
    assert cited_paths(text) == {"tests/test_pipeline.py", "src/mhanw/nw.py", "paper/main.tex"}
    prose = _python_prose('"""Docstring citing book/a.md."""\nx = "scripts/fixture.sh"  # see tests/b.py\n')
    assert cited_paths(prose) == {"book/a.md", "tests/b.py"}


def test_every_cited_repository_path_exists():
    cited: dict[str, list[str]] = {}
    for rel, text in _sources().items():
        for path in cited_paths(text):
            cited.setdefault(path, []).append(rel)
    assert len(cited) > 50, f"found only {len(cited)} cited paths: is the pattern still right?"
    candidates = {p for p in cited if not (ROOT / p).exists()}
    missing = sorted(candidates - _ignored(candidates))
    assert not missing, "cited but not in the repository:\n" + "\n".join(
        f"  {p}  (cited in {', '.join(sorted(cited[p]))})" for p in missing
    )


# ---- dotted names -------------------------------------------------------------------------------
_DOTTED = re.compile(r"(?<![\w.])mhanw(?:\.\w+)+")
#: Words of the form mhanw.x that are not names of the library, each with what it is.
NOT_NAMES = {
    "mhanw.caption": "a key of a figure output's metadata",
    "mhanw.caption_of": "a key of a caption output's metadata",
    "mhanw.css": "the book's stylesheet",
    "mhanw.a.b": "an example import in mhanw.pipeline.deps's docstring",
    "mhanw.sub": "an example import in mhanw.pipeline.deps's docstring",
    "mhanw.x": "an example import in mhanw.pipeline.deps's docstring",
}


def _resolves(name: str) -> bool:
    """Whether ``name`` is a module of the library or an attribute of one."""
    import importlib

    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            if not hasattr(obj, p):
                return p in getattr(obj, "__dataclass_fields__", {}) and p == parts[-1]  # a field without default
            obj = getattr(obj, p)
        return True
    return False


def test_every_cited_library_name_exists():
    """A module, function or class named ``mhanw.<...>`` in the code's prose, the book or the chapters
    exists (``mhanw.chapters.chNN_slug`` and the like are templates)."""
    cited: dict[str, list[str]] = {}
    for rel, text in _sources().items():
        for m in _DOTTED.finditer(text):
            name = m.group(0).rstrip(".")
            template = text[m.end() : m.end() + 1] == "{"  # f"mhanw.chapters.ch{name}"
            if rel.startswith("tests/") or template or name in NOT_NAMES or _PLACEHOLDER.search(name):
                continue
            cited.setdefault(name, []).append(rel)
    assert len(cited) > 100, f"found only {len(cited)} cited names: is the pattern still right?"
    missing = sorted(n for n in cited if not _resolves(n))
    assert not missing, "cited but not in the library:\n" + "\n".join(
        f"  {n}  (cited in {', '.join(sorted(set(cited[n])))})" for n in missing
    )
