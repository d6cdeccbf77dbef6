"""The one gate for names that reach make and the file system: scenarios' and chapters' names are plain.

A plain name is ASCII letters, digits, ``-`` and ``_``, starting with a letter or digit, at most
:data:`LONGEST` characters: nothing make or a shell would read as syntax (``$``, backticks, quotes, ``;``,
spaces, ``%``, ``:``, ``#``), and no ``.`` or ``..`` that would climb out of a run's folder.  A scenario's
name is its file's stem (``NAME`` of ``scenarios/NAME.toml``), a plain name; a chapter's name is ``NN_slug``
(:data:`mhanw.pipeline.chapters.NAME`, a plain name too).

The Makefile never expands a scenario's name or path itself.  For ``make scenario``, it writes the
unexpanded value of ``SCENARIO`` to a file (make's ``$(value ...)`` and ``$(file ...)``: nothing runs)
and runs this module as a script with the base interpreter (standard library only, so it works before
the project's environment exists)::

    python -I src/mhanw/pipeline/names.py scenario FILE

which prints ``ok NAME PATH`` (both safe to expand in make and to pass to a shell unquoted) or
``error MESSAGE`` (one line naming ``SCENARIO``), and always exits 0 so that make shows the message once.
The scenarios shipped in ``scenarios/`` reach make only through ``build/rules.mk``, written by
:mod:`mhanw.pipeline.rules` from :func:`shipped_scenarios`, which refuses a file with another name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: Longest plain name (a file name's limit is 255 bytes; a name is also part of folder and target names).
LONGEST = 100
PLAIN = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{LONGEST - 1}}}")
#: A scenario's path given to make (its folders too): the characters of plain names, '.' and '/', not
#: starting with '-' (which a command would read as an option).
PLAIN_PATH = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
CHARACTERS = "letters, digits, '-' and '_'"
RULE = f"{CHARACTERS} (starting with a letter or digit, at most {LONGEST} characters)"


class BadName(ValueError):
    """A name that may not reach make or the file system, with a one-line reason naming it."""


def shown(text: str) -> str:
    """``text`` quoted for a one-line message (control characters escaped)."""
    return repr(text)


def is_plain(name: str) -> bool:
    return isinstance(name, str) and PLAIN.fullmatch(name) is not None


def scenario_name(path, what: str | None = None) -> str:
    """The name of the scenario file ``path``: its stem (``NAME`` of ``scenarios/NAME.toml``), or
    :class:`BadName` naming ``what`` (default: the path)."""
    name = Path(path).stem
    if not is_plain(name):
        raise BadName(
            f"{what or shown(str(path))}: a scenario's name (its file's name without .toml) is made of {RULE}, "
            f"e.g. scenarios/heavy-tails.toml; got {shown(name)}"
        )
    return name


def scenario_argument(text: str) -> tuple[str, str]:
    """``(name, path)`` of ``make scenario SCENARIO=text``, or :class:`BadName` naming ``SCENARIO``."""
    what = f"SCENARIO={shown(text)}"
    if not text:
        raise BadName(f"make scenario needs SCENARIO=scenarios/NAME.toml (shipped: {', '.join(shipped_names())})")
    name = scenario_name(text, what)
    if not PLAIN_PATH.fullmatch(text):
        raise BadName(
            f"{what}: the path of a scenario may contain only {CHARACTERS}, '.' and '/' (not starting with '-'); "
            "copy the file into scenarios/"
        )
    return name, text


def shipped_scenarios(root) -> dict[str, Path]:
    """{name: path} of every ``*.toml`` in ``root/scenarios``, sorted; :class:`BadName` naming the
    first file whose name is not plain (hidden files included: they are scenarios to Python's glob)."""
    out = {}
    for path in sorted((Path(root) / "scenarios").glob("*.toml")):
        out[scenario_name(path, f"scenarios/{shown(path.name)}")] = path
    return out


def shipped_names(root=None) -> list[str]:
    """The shipped scenarios' plain names (those that are not plain are left out)."""
    root = Path(root) if root is not None else Path.cwd()
    return sorted(p.stem for p in (root / "scenarios").glob("*.toml") if is_plain(p.stem))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "scenario":
        print("error usage: python -I src/mhanw/pipeline/names.py scenario FILE (FILE has SCENARIO's value)")
        return 0
    try:
        with open(argv[1], encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
        text = text[:-1] if text.endswith("\n") else text  # make's $(file >...) ends it with a newline
        name, path = scenario_argument(text)
    except (OSError, BadName) as exc:
        print(f"error {exc}".replace("\n", " "))
        return 0
    print(f"ok {name} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
