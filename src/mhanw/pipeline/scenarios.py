"""Scenarios: the chapters run under changed assumptions.

A scenario is a TOML file of parameter overrides::

    description = "inputs with heavy tails"
    [all]                                  # every chapter that declares the parameter
    inputs = "student-t:3"
    [chapters.04_head_diversity_index]     # one chapter; it must declare the parameter
    noise = "gaussian"

A parameter under ``[all]`` goes to the chapters whose parameters cell
declares it (the others keep their defaults); one that no chapter declares is
an error, as is a parameter under ``[chapters.NN_slug]`` that the chapter does
not declare, a chapter that does not exist, or a parameter the pipeline sets
(fidelity, output paths).  Values are checked by each chapter's own rules and
constraints on the merged parameters (:func:`mhanw.pipeline.chapters.check_values`),
so a bad value stops before anything runs.  Every problem is one
:class:`ScenarioError` line.

A scenario's run lives in ``build/scenarios/NAME/``: ``ledger/`` (the chapters
it changes, records only: the paper's section on changed assumptions) and, for
``make scenario``, ``notebooks/ results/ figures/ generated/ paper/main.pdf``
(every chapter, with its figures, and the paper built under it).
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from mhanw.infra.validate import brief

from . import chapters as C
from . import names

_TOP_KEYS = ("description", "all", "chapters")

#: The longest description a scenario may have: a sentence or a short paragraph, printed in the paper.
MAX_DESCRIPTION = 1000
#: Deepest nesting of lists in a value (a list of lists is the deepest any chapter takes).
MAX_DEPTH = 3
#: Most entries of one value, counted over every level of its lists (a chapter's longest list, its
#: sentences or angles, holds tens).
MAX_ENTRIES = 10_000
#: Largest scenario file read, bytes.
MAX_BYTES = 1 << 20


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with a one-line reason."""


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: its name (the file's stem, a plain name: :mod:`.names`), description and the parameters of every chapter."""

    name: str
    path: Path
    description: str
    common: dict
    per_chapter: dict
    params: dict = field(default_factory=dict)  # {chapter: {name: value}} for every chapter (empty: defaults)

    def params_for(self, chapter: str) -> dict:
        return dict(self.params.get(chapter, {}))

    @property
    def changed(self) -> list[str]:
        """The chapters that receive at least one parameter (the others run as by default)."""
        return [n for n, p in self.params.items() if p]

    def describe(self) -> list[str]:
        return [
            f"    {n}: " + (", ".join(f"{k}={v!r}" for k, v in p.items()) if p else "defaults")
            for n, p in self.params.items()
        ]


def value_problem(value) -> str | None:
    """What makes ``value`` (one parameter of a scenario) no parameter value, or ``None``: a value is a
    string, number or boolean, or a list of them nested at most :data:`MAX_DEPTH` deep with at most
    :data:`MAX_ENTRIES` entries in all.  Walked without recursion, so that no depth of nesting can
    exhaust the stack, and stopped at the first entry beyond a bound."""
    stack, entries = [(value, 0)], 0
    while stack:
        v, level = stack.pop()
        if isinstance(v, list):
            if level + 1 > MAX_DEPTH:
                return f"lists nested more than {MAX_DEPTH} deep"
            entries += len(v)
            if entries > MAX_ENTRIES:
                return f"more than {MAX_ENTRIES} entries (counting every level of its lists)"
            stack.extend((x, level + 1) for x in v)
        elif not isinstance(v, (str, int, float, bool)):
            return f"expected a string, number, boolean or a list of them, got {type(v).__name__}"
    return None


def _kind_of_file(mode: int) -> str:
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def read_toml(path: Path) -> dict:
    """The file as TOML, or :class:`ScenarioError` naming it (missing, a folder, a FIFO, a device or
    another file that is not a regular one, more than :data:`MAX_BYTES` bytes, not UTF-8, not TOML).

    The file is opened without blocking (a FIFO with no writer would wait forever) and checked on the
    open descriptor, so a path swapped between the checks and the read cannot get around them; at
    most ``MAX_BYTES + 1`` bytes are read."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: is a folder, expected a scenario file (scenarios/NAME.toml)") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot be opened ({exc.strerror or type(exc).__name__})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ScenarioError(f"{path}: is a folder, expected a scenario file (scenarios/NAME.toml)")
        if not stat.S_ISREG(info.st_mode):
            raise ScenarioError(
                f"{path}: is {_kind_of_file(info.st_mode)}, expected a regular scenario file (scenarios/NAME.toml)"
            )
        if info.st_size > MAX_BYTES:
            raise ScenarioError(f"{path}: {info.st_size} bytes; a scenario file is at most {MAX_BYTES}")
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > MAX_BYTES:  # grew after the check
        raise ScenarioError(f"{path}: more than {MAX_BYTES} bytes; a scenario file is at most {MAX_BYTES}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested too deeply to be a scenario") from None


def load(path, root: Path, *, check_values: bool = True) -> Scenario:
    """The scenario at ``path``, checked against the chapters under ``root``."""
    if not isinstance(path, (str, os.PathLike)) or "\0" in os.fspath(path):
        raise ScenarioError(f"path: expected the path of a scenario file (text without NUL), got {brief(path)}")
    path = Path(path)
    try:
        scenario_name = names.scenario_name(path)
    except names.BadName as exc:
        raise ScenarioError(str(exc)) from None
    data = read_toml(path)
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise ScenarioError(f"{path}: unknown table or key {', '.join(unknown)}; expected {', '.join(_TOP_KEYS)}")
    common, per = data.get("all", {}), data.get("chapters", {})
    if not isinstance(common, dict) or not isinstance(per, dict):
        raise ScenarioError(f"{path}: [all] and [chapters.NN_slug] must be tables")
    if not isinstance(data.get("description", ""), str):
        raise ScenarioError(f"{path}: description: expected a string")
    if len(data.get("description", "")) > MAX_DESCRIPTION or "\n\n" in data.get("description", ""):
        raise ScenarioError(
            f"{path}: description: expected one paragraph of at most {MAX_DESCRIPTION} characters "
            f"(the paper and the book print it), got {len(data['description'])} characters"
        )
    chapters = {c.name: c for c in C.discover(root)}
    for name, table in per.items():
        if name not in chapters:
            raise ScenarioError(
                f"{path}: [chapters.{name}]: no chapter notebooks/{name}.md (chapters: {', '.join(chapters)})"
            )
        if not isinstance(table, dict):
            raise ScenarioError(f"{path}: [chapters.{name}] must be a table of parameters")
    for where, table in [("all", common)] + [(f"chapters.{n}", t) for n, t in per.items()]:
        for key, value in table.items():
            if key in C.RESERVED:
                raise ScenarioError(
                    f"{path}: [{where}] {key}: set by the pipeline (FIDELITY, output paths), not by a scenario"
                )
            problem = value_problem(value)
            if problem:
                raise ScenarioError(f"{path}: [{where}] {key}: {problem}")
    declared = {n: C.declared(c.path) for n, c in chapters.items()}
    nobody = [k for k in common if not any(k in d for d in declared.values())]
    if nobody:
        raise ScenarioError(
            f"{path}: [all] {', '.join(nobody)}: no chapter declares "
            f"{'this parameter' if len(nobody) == 1 else 'these parameters'}"
        )
    for name, table in per.items():
        missing = [k for k in table if k not in declared[name]]
        if missing:
            raise ScenarioError(
                f"{path}: [chapters.{name}] {', '.join(missing)}: not a parameter of {name} "
                f"(it declares {', '.join(declared[name])})"
            )
    params = {}
    for name, chapter in chapters.items():
        p = {k: v for k, v in common.items() if k in declared[name]}
        p.update(per.get(name, {}))
        if check_values and p:
            try:
                C.check_values(chapter, p)
            except C.ChapterError as exc:
                raise ScenarioError(f"{path}: {exc}") from None
        params[name] = p
    return Scenario(scenario_name, path, str(data.get("description", "")), common, per, params)


def seed_params(seed: str, root: Path) -> dict[str, dict]:
    """The parameters of a seed run: ``{"seed": S}`` for every chapter (``"default"``: none)."""
    if seed == "default":
        return {n: {} for n in C.names(root)}
    from mhanw.infra.validate import whole_number_text

    try:
        value = whole_number_text(seed, "seed", maximum=2**63 - 1, alternative="'default'")
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
    return {n: {"seed": value} for n in C.names(root)}


def note_tex(scenario: Scenario) -> str:
    """``\\ScenarioNote``: the paragraph the paper built under a scenario prints under its abstract.

    The sections describe the default design; this note says which parameters
    the scenario changed, chapter by chapter, so that a reader of its PDF knows
    that the numbers and verdicts come from another design.
    """
    from mhanw.infra.prose import ranges

    from .ledger import tex_escape

    groups: dict[tuple, list[int]] = {}  # the changes as text (a list value is not hashable) -> chapters
    for chapter, p in scenario.params.items():
        if p:
            groups.setdefault(tuple(f"{k} = {v!r}" for k, v in p.items()), []).append(int(chapter[:2]))
    rows = [
        r"\item "
        + ("chapter " if len(nums) == 1 else "chapters ")
        + ranges(nums).replace("-", "--")
        + ": "
        + ", ".join(r"\texttt{" + tex_escape(change) + "}" for change in changes)
        for changes, nums in groups.items()
    ]
    what = tex_escape(scenario.description) if scenario.description else "no description"
    body = (
        r"\noindent\fbox{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule}{\small"
        r"\textbf{Built under the scenario \texttt{" + tex_escape(scenario.name) + "}} (" + what + r"). "
        r"The sections describe the default design; every number, figure and verdict below comes "
        r"from the chapters run with these parameters instead:"
        + (
            r"\begin{itemize}\setlength{\itemsep}{0pt}" + "".join(rows) + r"\end{itemize}"
            if rows
            else " none (the defaults)."
        )
        + "}}"
    )
    return (
        "% generated by mhanw.pipeline.scenarios for the scenario's build; do not edit\n"
        + r"\newcommand{\ScenarioNote}{"
        + body
        + "}\n"
    )


def run_record(scenario: Scenario, fidelity: str, chapters: list[str], stopped: dict[str, str]) -> str:
    """``run.json``: what ran, at which fidelity, with which parameters, and which chapters a guard stopped."""
    return (
        json.dumps(
            {
                "scenario": scenario.name,
                "description": scenario.description,
                "fidelity": fidelity,
                "chapters": chapters,
                "parameters": scenario.params,
                "stopped": stopped,
            },
            indent=1,
        )
        + "\n"
    )
