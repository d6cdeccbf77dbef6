"""A chapter's results: an immutable tree of quantities, and its two renderings (JSON and LaTeX values).

A chapter's ``run`` returns one tree (:class:`Results`): nested mappings whose leaves are

- :class:`Q` -- a quantity: a value, its Monte Carlo standard error (or none), the digits it is printed
  with, its unit and a label (the words a record uses for it);
- :class:`Tex` -- LaTeX made by the library's own formatters (a verdict's words, a formula), printed as it is;
- ``str`` -- plain text (escaped for LaTeX by :func:`mhanw.infra.texout.tex_escape`);
- ``int`` -- a count (printed in full with thin spaces);
- a sympy expression -- typeset by :func:`mhanw.infra.texout.latex_of`;
- anything else JSON can hold (floats, lists, arrays, tables, premises): kept in the results file only;
- :class:`Raw` -- data that later steps and figures need (every replicate's estimates): kept in memory only.

Every number is named once, where it is made: the tree's dotted paths are its names.  One writer
(:func:`write`) renders the tree twice:

- the results file (``build/results/NN_slug.json``): the whole tree as JSON, with the chapter's
  parameters, sizes and verdict records;
- the paper's values (``paper/generated/NN_slug.tex``): one ``\\mhvalue{NN.path}{LaTeX}`` line per printable
  leaf (each passing :func:`mhanw.infra.texout.check_tex`: no value can stop or take over the paper), read by
  ``\\val{NN.path}`` in the paper (``paper/main.tex``: an unknown path stops pdflatex), and one
  ``\\mhvalue{verdict:ID}{...}`` and ``\\mhvalue{is:ID}{...}`` per verdict record (``\\verdictword{ID}``,
  ``\\verdictis{ID}``: "it \\verdictis{ID}" reads under every verdict).

A quantity with a standard error also gets ``NN.path.value``, ``NN.path.se`` and ``NN.path.z`` (the value
alone, the s.e. alone to two digits, and value / s.e. to two digits where it is finite: not for an s.e. of 0
or one so small that the ratio overflows).

Nothing here knows about attention.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .texout import check_tex, format_mean_se, format_number, latex_of, printed_integer, tex_escape, write_atomic
from .validate import brief

__all__ = [
    "KEY",
    "Q",
    "Raw",
    "Results",
    "Tex",
    "freeze",
    "json_safe",
    "leaves",
    "load_results",
    "save_results",
    "values_tex",
    "write",
]

#: A key of the results tree: letters, digits, ``_`` and ``-``, starting with a letter or a digit (a
#: dotted path of keys names a value in the paper: ``\\val{02.pairs.cross_drop}``).
KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Q:
    """A quantity: ``value`` (a finite real number), its standard error ``se`` (``None``: exact or not a
    Monte Carlo number; else finite and >= 0), the significant ``digits`` it is printed with when it has no
    s.e. (with one, the s.e.'s first significant digit sets the place: :func:`mhanw.infra.texout.format_mean_se`),
    its ``unit`` (words: ``"%"``, ``"degrees"``; kept in the results file, not printed) and its ``label``
    (the words a verdict record names it by: "cross term at 90 degrees")."""

    value: float
    se: float | None = None
    digits: int = 3
    unit: str = ""
    label: str = ""

    def __post_init__(self):
        value = _finite(self.value, "value")
        object.__setattr__(self, "value", value)
        if self.se is not None:
            se = _finite(self.se, "se")
            if se < 0:
                raise ValueError(f"se: expected a standard error >= 0, got {brief(self.se)}")
            object.__setattr__(self, "se", se)
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= 17:
            raise ValueError(
                f"digits: expected a whole number of significant digits from 1 to 17, got {brief(self.digits)}"
            )
        for name in ("unit", "label"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name}: expected a string, got {brief(getattr(self, name))}")

    @classmethod
    def of(cls, estimate, *, digits: int = 3, unit: str = "", label: str = "") -> Q:
        """The quantity of a ``(value, se)`` pair (an :class:`mhanw.infra.estimates.Estimate` unpacks as one)."""
        value, se = estimate
        return cls(value, se, digits, unit, label)

    @property
    def z(self) -> float:
        """``value / se`` (``nan`` without a positive s.e.)."""
        return self.value / self.se if self.se else math.nan

    def tex(self) -> str:
        """The quantity in LaTeX: ``value \\pm se`` or the value to :attr:`digits` significant digits."""
        if self.se is None:
            return f"\\ensuremath{{{format_number(self.value, self.digits)}}}"
        return f"\\ensuremath{{{format_mean_se(self.value, self.se)}}}"

    def to_json(self) -> dict:
        out: dict = {"value": self.value}
        if self.se is not None:
            out["se"] = self.se
        if self.unit:
            out["unit"] = self.unit
        if self.label:
            out["label"] = self.label
        return out


def _finite(value, name: str):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            return _finite(value.item(), name)
        raise ValueError(f"{name}: expected a real number, got {type(value).__name__} {brief(value)}")
    out = int(value) if isinstance(value, (numbers.Integral, np.integer)) else float(value)
    if isinstance(out, float) and not math.isfinite(out):
        raise ValueError(f"{name}: expected a finite number, got {out!r}")
    return out


class Raw:
    """Data a later step or a figure needs but the results file does not keep (Monte Carlo estimates
    of every replicate, a data model): ``Raw(value).value``.  Written nowhere."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Raw({type(self.value).__name__})"


class Tex(str):
    """LaTeX made by the library's formatters (a formula from :func:`mhanw.infra.texout.tex_math`, words
    from :func:`mhanw.infra.texout.tex_text`): written into the paper as it is, once it passes
    :func:`mhanw.infra.texout.check_tex` (as every value does).  Text from a user or a
    parameter is never a :class:`Tex`; as a plain ``str`` it is escaped."""

    __slots__ = ()


def _is_expression(value) -> bool:
    """Whether ``value`` is a sympy expression, without importing sympy for a leaf of another kind.  The
    class of an applied undefined function (``sympy.Function("f")(x)``) is made at run time, with no
    ``__module__``: its bases say whether it is sympy's."""
    if not any((getattr(c, "__module__", None) or "").startswith("sympy") for c in type(value).__mro__):
        return False
    import sympy

    return isinstance(value, sympy.Expr)


def freeze(value, where: str = "results"):
    """``value`` made immutable: mappings become read-only mappings with checked keys (:data:`KEY`),
    lists and tuples tuples, arrays read-only copies; other leaves are kept (a pandas table is copied)."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str) or not KEY.fullmatch(k):
                raise ValueError(f"{where}: key {k!r} is not a name (letters, digits, '_' and '-')")
            out[k] = freeze(v, f"{where}.{k}")
        return MappingProxyType(out)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return tuple(freeze(v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, np.ndarray):
        out = np.array(value, copy=True)
        out.flags.writeable = False
        return out
    if type(value).__name__ == "DataFrame":
        return value.copy()
    return value


class Results(Mapping):
    """A chapter's results: an immutable tree (:func:`freeze`) with dotted-path access.

    >>> r = Results({"pairs": {"cross90": Q(0.012, 0.001)}})
    >>> r.at("pairs.cross90").value
    0.012
    """

    def __init__(self, tree: Mapping):
        if not isinstance(tree, Mapping):
            raise ValueError(f"tree: expected a mapping of the chapter's results, got {brief(tree)}")
        self._tree = freeze(tree)

    def __getitem__(self, key):
        return self._tree[key]

    def __iter__(self):
        return iter(self._tree)

    def __len__(self):
        return len(self._tree)

    def at(self, path: str):
        """The value at the dotted ``path`` (``"pairs.cross90"``); ``KeyError`` naming the path if absent."""
        node = self._tree
        for i, key in enumerate(path.split(".")):
            if not isinstance(node, Mapping) or key not in node:
                raise KeyError(f"results: no {'.'.join(path.split('.')[: i + 1])!r} (path {path!r})")
            node = node[key]
        return node

    def __repr__(self):
        return f"Results({', '.join(self._tree)})"


def leaves(tree: Mapping, prefix: str = "") -> Iterator[tuple[str, object]]:
    """Every leaf of ``tree`` as ``(dotted path, value)``, depth first in insertion order."""
    for key, value in tree.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            yield from leaves(value, path)
        else:
            yield path, value


def _printable(value) -> str | None:
    """The LaTeX of a leaf the paper may print, or ``None`` for a leaf that only the results file holds."""
    if isinstance(value, Q):
        return value.tex()
    if isinstance(value, Tex):
        return str(value)
    if isinstance(value, str):
        return tex_escape(value)
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (numbers.Integral, np.integer)):
        return "\\ensuremath{" + f"{printed_integer(value, 'value'):,}".replace(",", "\\,") + "}"
    if _is_expression(value):
        return f"\\ensuremath{{{latex_of(value, 'value')}}}"
    return None


def _values(namespace: str, tree: Mapping) -> dict[str, str]:
    """The LaTeX of every printable leaf of ``tree`` by its name ``NAMESPACE.path``; each passes
    :func:`mhanw.infra.texout.check_tex` (a :class:`Tex` too: whatever made it, no value can stop or take
    over the paper), and a refusal names the leaf's path."""
    out: dict[str, str] = {}
    for path, value in leaves(tree):
        try:
            body = _printable(value)
            if body is None:
                continue
            out[f"{namespace}.{path}"] = check_tex(body, "value")
            if isinstance(value, Q) and value.se is not None:
                parts = {"value": format_number(value.value, value.digits), "se": format_number(value.se, 2)}
                if math.isfinite(value.z):  # none for an s.e. of 0, or one so small that value / se overflows
                    parts["z"] = format_number(value.z, 2)
                for part, tex in parts.items():
                    out[f"{namespace}.{path}.{part}"] = check_tex(f"\\ensuremath{{{tex}}}", "value")
        except ValueError as exc:
            raise ValueError(f"results.{path}: {exc}") from None
    return out


def values_tex(namespace: str, tree: Mapping, records=()) -> str:
    """The paper's values of one chapter: ``\\mhvalue{NAMESPACE.path}{LaTeX}`` for every printable leaf of
    ``tree`` and ``\\mhvalue{verdict:ID}``/``\\mhvalue{is:ID}``/``\\mhvalue{key:ID}`` for every record (its
    verdict's words, with the failed premise for "outside its conditions", the verdict as a predicate, and
    its direction ``holds``/``fails``/``other`` for ``\\byverdict``)."""
    from .texout import tex_text
    from .verdicts import predicate, verdict_key, verdict_words

    lines = ["% Generated by mhanw.infra.results from the chapter's results; do not edit."]
    lines += [f"\\mhvalue{{{k}}}{{{v}}}" for k, v in _values(namespace, tree).items()]
    for r in records:
        words = verdict_words(r) if r.outside else r.verdict
        lines.append(f"\\mhvalue{{verdict:{r.claim}}}{{{tex_text(words)}}}")
        lines.append(f"\\mhvalue{{is:{r.claim}}}{{{tex_text(predicate(r.verdict))}}}")
        lines.append(f"\\mhvalue{{key:{r.claim}}}{{{verdict_key(r.verdict)}}}")
    return "\n".join(lines) + "\n"


def _json(value, where: str):
    if isinstance(value, Mapping):
        return {str(k): _json(v, f"{where}.{k}") for k, v in value.items() if not isinstance(v, Raw)}
    if isinstance(value, Q):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "to_dict") and type(value).__name__ == "DataFrame":
        return _json(value.to_dict(orient="list"), where)
    if hasattr(value, "to_dict"):  # a premise, a record, a search
        return _json(value.to_dict(), where)
    if isinstance(value, np.ndarray):
        return _json(value.tolist(), where)
    if isinstance(value, np.generic):
        return _json(value.item(), where)
    if _is_expression(value):
        import sympy

        return sympy.sstr(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise ValueError(f"{where}: a value JSON cannot hold ({type(value).__name__} {brief(value)})")


def write(namespace: str, tree: Mapping, records, *, macros_path, results_path, header: Mapping | None = None) -> None:
    """Write a chapter's two outputs from one tree: the paper's values (:func:`values_tex`, to
    ``macros_path``) and the results file (to ``results_path``: ``header``, then ``results`` (the tree) and
    ``claims`` (the records)).  Both are rendered before either is written; each write is atomic."""
    from .texout import checked_outputs

    checked_outputs(macros_path=macros_path, results_path=results_path)
    tex = values_tex(namespace, tree, records)
    doc = {**dict(header or {}), "results": _json(tree, "results"), "claims": [r.to_dict() for r in records]}
    text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False)
    write_atomic(macros_path, tex, argument="macros_path")
    write_atomic(results_path, text + "\n", argument="results_path")


# --------------------------------------------------------------------------- plain results files


def _plain(obj, where: str = "results", *, strict: bool = False):
    """``obj`` with numpy converted to plain Python and dict keys made strings.

    Two keys that become the same string (``1`` and ``"1"``, ``True`` and
    ``"True"``) raise ``ValueError`` naming the key at ``where``: one of the two
    values would otherwise be lost.  With ``strict``, anything JSON cannot hold
    exactly (NaN, inf, complex numbers, other objects) raises ``ValueError``
    naming its place too.
    """
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = str(k)
            if key in out:
                raise ValueError(
                    f"{where}: keys {k!r} and {key!r} collide (both are written as the JSON key {key!r}); "
                    "rename one of them"
                )
            out[key] = _plain(v, f"{where}[{key!r}]", strict=strict)
        return out
    if isinstance(obj, (list, tuple)):
        return [_plain(v, f"{where}[{i}]", strict=strict) for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist(), where, strict=strict)
    if isinstance(obj, np.generic):
        return _plain(obj.item(), where, strict=strict)
    if strict:
        if isinstance(obj, float) and not math.isfinite(obj):
            raise ValueError(
                f"{where}: {obj!r} is not valid JSON; pass the results through json_safe() to write it as null"
            )
        if obj is not None and not isinstance(obj, (bool, int, float, str)):
            raise ValueError(
                f"{where}: expected numbers, strings, lists or dicts, got {type(obj).__name__} {brief(obj)}"
            )
    return obj


def json_safe(obj):
    """``obj`` with every non-finite float (NaN, inf) replaced by ``None``, numpy
    converted to plain Python: ready for :func:`save_results`, which rejects NaN."""
    obj = _plain(obj)
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def save_results(path, results: dict, *, argument: str = "path") -> Path:
    """Write ``results`` (nested dicts, lists, numbers, numpy arrays) to ``path``.

    Keys are written as strings; two keys that would be written as the same
    string (``1`` and ``"1"``) raise ``ValueError`` naming the key, as do NaN,
    inf and values JSON cannot hold, naming where they are; a refused path is
    reported under the name ``argument`` (:func:`mhanw.infra.texout.write_atomic`).
    """
    if not isinstance(results, dict):
        raise ValueError(f"results: expected a dict, got {type(results).__name__}")
    text = json.dumps(_plain(results, strict=True), indent=1, sort_keys=True, allow_nan=False)
    return write_atomic(path, text + "\n", argument=argument)


def load_results(path) -> dict:
    """Read a results file written by :func:`save_results` or :func:`write`.

    A file that is not a JSON object (truncated, empty, edited by hand) raises
    ``ValueError`` naming ``path`` and the file, instead of a bare JSON error."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a file path, got {brief(path)}")
    text = Path(path).read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"path: {str(path)!r} is not a valid results file ({exc}); rebuild it") from exc
    if not isinstance(doc, dict):
        raise ValueError(f"path: {str(path)!r} is not a results file (a JSON {type(doc).__name__}, expected an object)")
    return doc
