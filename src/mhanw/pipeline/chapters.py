"""The chapters on disk: ``notebooks/NN_slug.md``, their front matter and their parameters cell.

A chapter is a notebook stored as MyST markdown (jupytext's ``md:myst``
format): prose, code cells, and exactly one code cell tagged ``parameters``,
the first one, holding only literal assignments.  That cell is the one
declaration of a chapter's parameters (names, defaults, comments); the
chapter's module ``mhanw.chapters.chNN_slug`` says what each value may be
(``PARAMETERS``, ``CONSTRAINTS``: :mod:`mhanw.infra.params`).  Everything here
reads files only; nothing of a chapter is executed.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

import jupytext

from .names import shown

#: A chapter's file name: two digits, an underscore and lower-case words.
NAME = re.compile(r"^(\d\d)_[a-z0-9]+(?:_[a-z0-9]+)*$")

#: The parameters the pipeline sets in every run; a scenario may not change them.
RESERVED = ("fidelity", "figures_dir", "macros_path", "results_path")


class ChapterError(ValueError):
    """A chapter file that cannot be used, with a one-line reason naming it."""


@dataclass(frozen=True)
class Chapter:
    """One chapter: ``name`` (``NN_slug``), its source ``path`` and its front matter."""

    name: str
    path: Path
    claim: str = ""
    figures: tuple[str, ...] = field(default=())

    @property
    def number(self) -> int:
        return int(self.name[:2])

    @property
    def module(self) -> str:
        """The chapter's library module, ``mhanw.chapters.chNN_slug``."""
        return f"mhanw.chapters.ch{self.name}"


def discover(root: Path) -> list[Chapter]:
    """Every chapter under ``root/notebooks``, in number order."""
    out = []
    for path in sorted((Path(root) / "notebooks").glob("[0-9][0-9]_*.md")):
        if not NAME.fullmatch(path.stem):  # a plain name (mhanw.pipeline.names), and more
            raise ChapterError(
                f"notebooks/{shown(path.name)}: a chapter's name is NN_slug (two digits, lower-case words)"
            )
        meta = read(path).metadata.get("mhanw", {})
        out.append(Chapter(path.stem, path, str(meta.get("claim", "")), tuple(meta.get("figures", ()))))
    return out


def names(root: Path) -> list[str]:
    return [c.name for c in discover(root)]


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int):
    try:
        return jupytext.read(path, fmt="md:myst")
    except Exception as exc:  # jupytext raises several kinds for a damaged file
        raise ChapterError(f"{path}: not a readable MyST notebook ({type(exc).__name__}: {exc})") from None


def read(path: Path):
    """The chapter as an ``nbformat`` notebook (cached per modification time)."""
    path = Path(path)
    if not path.is_file():
        raise ChapterError(f"{path}: no such chapter file")
    return _read(str(path), path.stat().st_mtime_ns)


def code_sources(path: Path) -> list[str]:
    """The source of every code cell, in order."""
    return [c.source for c in read(path).cells if c.cell_type == "code"]


def parameters_source(path: Path) -> str:
    """The source of the cell tagged ``parameters``; it must be the first code cell."""
    cells = [c for c in read(path).cells if c.cell_type == "code"]
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1:
        raise ChapterError(f"{path}: expected exactly one code cell tagged 'parameters', found {len(tagged)}")
    if tagged[0] != 0:
        raise ChapterError(f"{path}: the cell tagged 'parameters' must be the first code cell")
    return cells[0].source


def declared(path: Path) -> dict[str, object]:
    """``{name: default}`` of the parameters cell, in order; every value must be a literal."""
    source = parameters_source(path)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ChapterError(f"{path}: the parameters cell does not parse ({exc.msg}, line {exc.lineno})") from None
    out: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            raise ChapterError(
                f"{path}: the parameters cell holds only 'name = literal' lines (line {node.lineno} is not one)"
            )
        try:
            out[target] = ast.literal_eval(value)
        except ValueError:
            raise ChapterError(f"{path}: parameter {target}: its default is not a literal") from None
    return out


def check_values(chapter: Chapter, overrides: dict) -> dict:
    """The chapter's parameters with ``overrides`` applied, checked by the chapter's own rules.

    Names are checked against the parameters cell; values and the constraints
    between them by ``PARAMETERS``/``CONSTRAINTS`` of the chapter's module
    (:func:`mhanw.infra.params.check_parameters`), so a scenario's bad value stops
    before any chapter runs.  Raises :class:`ChapterError` (one line).
    """
    from mhanw.infra.params import ParameterError, check_parameters

    defaults = declared(chapter.path)
    unknown = [k for k in overrides if k not in defaults]
    if unknown:
        raise ChapterError(
            f"{chapter.name}: {', '.join(unknown)}: not a parameter of this chapter (it declares {', '.join(defaults)})"
        )
    merged = {**defaults, **overrides}
    if importlib.util.find_spec(chapter.module) is None:  # a chapter without a module of its own: names only
        return merged
    module = importlib.import_module(chapter.module)
    try:
        check_parameters(merged, module.PARAMETERS, getattr(module, "CONSTRAINTS", ()))
    except ParameterError as exc:
        raise ChapterError(f"{chapter.name}: {exc}") from None
    return merged
