"""Tables for reading: numbers to a few significant digits, estimates as "mean ± s.e.".

The notebooks end their table cells with :func:`show`, which turns a pandas
DataFrame, a list of row dicts or a dict into a :class:`Table`: an HTML table
in Jupyter and in the book, aligned plain text elsewhere.  Every cell is
formatted by :func:`fmt` (significant digits, no ``np.float64(...)`` reprs,
arrays as short comma-separated lists); ``se={"mean": "s.e."}`` merges an
estimate and its standard error into one "mean ± s.e." column (:func:`pm`);
long tables are split by a column's values (``split=``, dropping the columns a part
leaves empty with ``drop_empty=True``) or shortened to their first and last rows with a
note saying how many were left out.

A formula is a cell of inline maths, ``$...$``, typeset by MathJax in the HTML table:
:func:`math_cell` makes one from a sympy expression (``sympy.latex``, logs as ``\\ln``) or
from LaTeX text, and :func:`fmt` turns any sympy expression in a cell (not a sympy number) into one.

>>> fmt(0.129912345), fmt(2.220446049250313e-16), fmt(123456.7), fmt(True)
('0.1299', '2.22e-16', '123457', 'yes')
>>> pm(0.51316, 0.0039)
'0.5132 ± 0.0039'
>>> import sympy
>>> print(math_cell(sympy.exp(sympy.LambertW(2 * sympy.log(sympy.Symbol("n"))))))
$e^{W\\left(2 \\ln{\\left(n \\right)}\\right)}$
"""

from __future__ import annotations

import html
import math
import numbers
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from .texout import MAX_INTEGER_DIGITS, se_place
from .validate import MAX_COUNT, brief

__all__ = ["fmt", "math_cell", "pm", "show", "Table", "Tables"]

#: Rows shown before a table is shortened (first rows, "…", last rows).
MAX_ROWS = 16
#: Items of an array shown inside one cell before it is shortened.
MAX_ITEMS = 8


def _is_float(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral)


#: How deep :func:`fmt` follows lists and dicts inside one cell (a deeper value, or one that contains
#: itself, is not a table cell).
MAX_CELL_DEPTH = 4


def _is_sympy(x) -> bool:
    """Whether ``x`` is a sympy object (sympy is imported only when ``x`` comes from it)."""
    if not type(x).__module__.startswith("sympy"):
        return False
    import sympy

    return isinstance(x, sympy.Basic)


def _is_formula(x) -> bool:
    """Whether ``x`` is a sympy expression other than a number or ``true``/``false``, which :func:`fmt`
    writes as it writes numbers and booleans."""
    if not _is_sympy(x) or isinstance(x, numbers.Number):
        return False
    import sympy

    return not isinstance(x, sympy.logic.boolalg.BooleanAtom)


def math_cell(value) -> str:
    """A table cell of inline maths, ``$...$``, shown typeset in the HTML table (MathJax) and as its
    LaTeX in plain text.  ``value``: a sympy expression or number (written by ``sympy.latex``, natural logs as
    ``\\ln``) or a LaTeX string without dollars (``r"k^*\\propto n^{2/5}"``); anything else, an empty
    string or a string holding ``$`` raises ``ValueError`` naming ``value``."""
    if _is_sympy(value):
        import sympy

        return f"${sympy.latex(value, ln_notation=True)}$"
    if not isinstance(value, str):
        raise ValueError(
            f"value: expected a sympy expression or a LaTeX string, got {type(value).__name__} {brief(value)}"
        )
    if not value.strip() or "$" in value:
        raise ValueError(f"value: expected LaTeX without dollars (the cell adds them), got {brief(value)}")
    return f"${value.strip()}$"


def fmt(x: Any, digits: int = 4) -> str:
    """One value as text: floats to ``digits`` significant digits, ints exactly (up to
    :data:`~mhanw.infra.texout.MAX_INTEGER_DIGITS` digits; a larger one, ``10**400``, as ``1e+400``),
    sympy expressions (not numbers) as inline maths (:func:`math_cell`),
    booleans as yes/no, NaN as "–", sequences and arrays as short comma lists,
    dicts as ``key: value`` lists, at most :data:`MAX_CELL_DEPTH` levels deep (else ``ValueError``
    naming ``x``; so is an iterator, which has no value to show until it is consumed)."""
    return _cell(x, digits, 0)


def _cell(x: Any, digits: int, depth: int) -> str:
    """:func:`fmt` at nesting ``depth``."""
    if depth > MAX_CELL_DEPTH:
        raise ValueError(f"x: nested more than {MAX_CELL_DEPTH} levels deep (or it contains itself): not a table cell")
    if isinstance(x, Iterator):
        raise ValueError(f"x: an iterator ({type(x).__name__}) has no value to show; pass a list")
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if _is_formula(x):
        return math_cell(x)
    digits = _digits(digits, "digits")
    if isinstance(x, (bool,)) or type(x).__name__ == "bool_":
        return "yes" if bool(x) else "no"
    if isinstance(x, numbers.Integral):
        return _integer_text(int(x), digits)
    if _is_float(x):
        try:
            v = float(x)
        except OverflowError:  # a Fraction or Decimal beyond a double: its integer part is what shows
            return _integer_text(int(x), digits)
        if math.isnan(v):
            return "–"
        if math.isinf(v):
            if getattr(getattr(x, "dtype", None), "itemsize", 8) > 8:  # a long double beyond a double
                import numpy as np

                if np.isfinite(x):  # finite: shown as it is, not as infinity
                    return np.format_float_scientific(x, precision=digits - 1, trim="-")
            return "∞" if v > 0 else "−∞"
        if v == 0:
            return "0"
        if 10**digits <= abs(v) < 1e15:
            return f"{v:.0f}"
        return f"{v:.{digits}g}"
    if isinstance(x, numbers.Complex):
        return f"{complex(x):.{digits}g}"
    if isinstance(x, Mapping):
        return ", ".join(f"{_cell(k, digits, depth + 1)}: {_cell(v, digits, depth + 1)}" for k, v in x.items())
    if hasattr(x, "tolist") and not isinstance(x, (list, tuple)):  # numpy arrays and scalars
        return _cell(x.tolist(), digits, depth)
    if isinstance(x, (list, tuple, set, frozenset)):
        items = list(x)
        if len(items) > MAX_ITEMS:
            shown = [_cell(v, digits, depth + 1) for v in items[: MAX_ITEMS - 2]] + [
                "…",
                _cell(items[-1], digits, depth + 1),
            ]
        else:
            shown = [_cell(v, digits, depth + 1) for v in items]
        text = ", ".join(shown)
        return f"[{text}]" if any(isinstance(v, (list, tuple)) for v in items) else text
    return str(x)


def _integer_text(v: int, digits: int) -> str:
    """An integer exactly, or beyond :data:`~mhanw.infra.texout.MAX_INTEGER_DIGITS` digits to ``digits``
    significant digits as a float would be (``1e+400``), computed exactly (no double holds 10**400)."""
    if abs(v) < 10**MAX_INTEGER_DIGITS:
        return str(v)
    mant, exp = format(Decimal(v), f".{digits - 1}e").split("e")
    mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    return f"{mant}e{int(exp):+03d}"


def _real_or_nan(value, name: str) -> float:
    """A real number as a float (NaN allowed: a missing value); bools, strings, None and others raise,
    and so does a number beyond a double (``10**400``), naming ``name``."""
    if isinstance(value, (bool, str, bytes)) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a real number, got {type(value).__name__} {brief(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{name}: expected a real number within the range of a double (about 1.8e308), "
            f"got {type(value).__name__} {brief(value)}"
        ) from None


def _digits(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= int(value) <= 17:
        raise ValueError(f"{name}: expected an integer from 1 to 17 (significant digits), got {brief(value)}")
    return int(value)


def pm(mean, se, digits: int = 2) -> str:
    """``mean ± se``: the standard error to ``digits`` significant digits and the
    mean to the same decimal place (scientific notation for tiny or huge values).

    A NaN mean reads "–" and a NaN s.e. (an exact value) "–" after the ``±``; an
    s.e. below the mean's precision or a number below 1e-300 (:func:`mhanw.infra.texout.se_place`)
    prints each on its own (``1 ± 4.9e-324``); an infinite mean or s.e., one beyond a double, a negative
    s.e. or bad ``digits`` raise ``ValueError`` naming the argument."""
    mean, se = _real_or_nan(mean, "mean"), _real_or_nan(se, "se")
    digits = _digits(digits, "digits")
    if math.isinf(mean):
        raise ValueError(f"mean: expected a finite estimate, got {brief(mean)}")
    if math.isinf(se) or se < 0:
        raise ValueError(f"se: expected a finite standard error >= 0, got {brief(se)}")
    if math.isnan(mean):
        return "–"
    if math.isnan(se) or se == 0 or se_place(mean, se, digits) is None:
        return f"{fmt(mean, 4)} ± {fmt(se, digits)}"  # no s.e., or one below the mean's precision: each alone
    exponent = math.floor(math.log10(se))
    decimals = digits - 1 - exponent
    if 0 <= decimals <= 5 and abs(mean) < 1e7:
        return f"{mean:.{decimals}f} ± {se:.{decimals}f}"
    scale = 10.0 ** math.floor(math.log10(max(abs(mean), se)))
    d = max(digits - 1 + int(round(math.log10(scale))) - exponent, 0)
    power = int(round(math.log10(scale)))
    return f"({mean / scale:.{d}f} ± {se / scale:.{d}f})e{power:+d}"


_NUMBER = re.compile(r"[\s\d.eE+\-−±()∞%,]*\d[\s\d.eE+\-−±()∞%,]*|–|∞|−∞")


def _numeric(text: str) -> bool:
    """True for a cell that reads as a number (right-aligned)."""
    return bool(_NUMBER.fullmatch(text))


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


def _escape_with_math(text: str) -> str:
    """HTML-escaped text whose ``$...$`` spans become MathJax inline math (``\\(...\\)`` in a
    ``math`` span: what JupyterLab and the book's MathJax typeset inside HTML output)."""
    parts, last = [], 0
    for m in _INLINE_MATH.finditer(text):
        parts.append(html.escape(text[last : m.start()]))
        parts.append(f'<span class="math notranslate nohighlight">\\({html.escape(m.group(1), quote=False)}\\)</span>')
        last = m.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


class Table:
    """A formatted table: ``columns`` (header strings) and ``rows`` (lists of strings).

    Shown as HTML in Jupyter (``_repr_html_``) and as aligned text otherwise."""

    def __init__(
        self, columns: Sequence[str], rows: Sequence[Sequence[str]], caption: str | None = None, note: str | None = None
    ):
        if isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
            raise ValueError(f"columns: expected a list of headers, got {type(columns).__name__}")
        self.columns = [str(c) for c in columns]
        self.rows = []
        for i, r in enumerate(rows):
            if isinstance(r, (str, bytes)) or not isinstance(r, Sequence):
                raise ValueError(f"rows: expected lists of cells, got {type(r).__name__} at row {i}")
            if len(r) != len(self.columns):
                raise ValueError(f"rows: row {i} has {len(r)} cells, expected {len(self.columns)} (one per column)")
            self.rows.append([str(v) for v in r])
        self.caption = caption
        self.note = note

    def _repr_html_(self) -> str:
        esc = _escape_with_math
        out = ['<div class="mhanw-table">', '<table style="border-collapse:collapse">']
        if self.caption:
            out.append(f'<caption style="text-align:left;font-weight:bold">{esc(self.caption)}</caption>')
        out.append(
            "<thead><tr>"
            + "".join(f'<th style="text-align:left">{esc(c)}</th>' for c in self.columns)
            + "</tr></thead>"
        )
        out.append("<tbody>")
        for row in self.rows:
            cells = []
            for v in row:
                align = "right" if _numeric(v) else "left"
                cells.append(f'<td style="text-align:{align};white-space:nowrap">{esc(v)}</td>')
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
        if self.note:
            out.append(f'<p class="mhanw-table-note"><em>{esc(self.note)}</em></p>')
        out.append("</div>")
        return "\n".join(out)

    def __repr__(self) -> str:
        widths = [max([len(c)] + [len(r[i]) for r in self.rows]) for i, c in enumerate(self.columns)]
        lines = [self.caption] if self.caption else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for r in self.rows:
            lines.append("  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(r, widths)).rstrip())
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


class Tables(list):
    """Several :class:`Table` shown one after the other (a table split by a column)."""

    def _repr_html_(self) -> str:
        return "\n".join(t._repr_html_() for t in self)

    def __repr__(self) -> str:
        return "\n\n".join(repr(t) for t in self)


def _records(data, index: str | None) -> tuple[list[str], list[dict]]:
    """``data`` as (column names, list of row dicts)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency of seaborn
        pd = None
    if pd is not None and isinstance(data, pd.Series):
        data = data.to_frame()
    if pd is not None and isinstance(data, pd.DataFrame):
        df = data.copy()
        if isinstance(df.columns, pd.MultiIndex):
            df.columns = [" / ".join(fmt(p) for p in c if str(p) != "") for c in df.columns]
        df.columns = [fmt(c) for c in df.columns]
        if not isinstance(df.index, pd.RangeIndex) or df.index.name is not None:
            names = [n if n is not None else (index or "") for n in df.index.names]
            if isinstance(df.index, pd.MultiIndex):
                names = [n or f"level {i}" for i, n in enumerate(names)]
            df.index = df.index.set_names(names)
            df = df.reset_index()
        return [str(c) for c in df.columns], df.to_dict("records")
    if isinstance(data, Mapping):
        values = list(data.values())
        if values and all(isinstance(v, Mapping) for v in values):
            cols: list[str] = []
            for v in values:
                cols += [str(k) for k in v if str(k) not in cols]
            first = index or ""
            rows = [{first: fmt(k), **{str(kk): vv for kk, vv in v.items()}} for k, v in data.items()]
            return [first] + cols, rows
        lengths = {len(v) if _is_column(v) else -1 for v in values}
        if values and len(lengths) == 1 and lengths != {-1} and min(lengths) > 1:
            n = lengths.pop()
            cols = [str(k) for k in data]
            return cols, [{str(k): _item(v, i) for k, v in data.items()} for i in range(n)]
        first = index or ""
        return [first, "value"], [{first: fmt(k), "value": v} for k, v in data.items()]
    if isinstance(data, Sequence) and not isinstance(data, str) and all(isinstance(r, Mapping) for r in data):
        cols = []
        for r in data:
            cols += [str(k) for k in r if str(k) not in cols]
        return cols, [{str(k): v for k, v in r.items()} for r in data]
    raise ValueError(f"data: expected a DataFrame, a dict or a list of dicts, got {type(data).__name__}")


def _is_column(v) -> bool:
    if isinstance(v, (str, Mapping)):
        return False
    shape = getattr(v, "shape", None)
    if shape is not None:
        return len(shape) == 1
    return isinstance(v, (list, tuple)) and all(not isinstance(x, (list, tuple, Mapping)) for x in v)


def _item(v, i):
    return v[i]


def show(
    data,
    digits: int = 4,
    *,
    se: Mapping[str, str] | None = None,
    split: str | None = None,
    max_rows: int = MAX_ROWS,
    caption: str | None = None,
    note: str | None = None,
    index: str | None = None,
    drop_empty: bool = False,
) -> Table | Tables:
    """Format ``data`` as a table for reading.

    Parameters
    ----------
    data : DataFrame, Series, dict or list of dicts
        A dict of dicts gives one row per key; a dict of equal-length 1-D
        sequences gives one column per key; any other dict gives key/value rows.
        A DataFrame's index (unless a plain range) becomes its first columns.
    digits : int
        Significant digits of every float.
    se : dict ``{estimate column: s.e. column}``
        Merge each pair into one column "estimate ± s.e." (:func:`pm`).
    split : str, optional
        A column whose values split the table into one table each.
    drop_empty : bool
        Leave out of each table (of each part, with ``split``) the columns whose every cell is empty
        (missing or NaN, shown as "–"): a narrower table for values that only some rows have.
    max_rows : int
        Longer tables keep their first ``max_rows - 2`` and last 2 rows.
    caption, note : str, optional
        A title above, a remark below.
    index : str, optional
        The header of the first column when it comes from dict keys or an unnamed index.
    """
    digits = _digits(digits, "digits")
    if isinstance(max_rows, bool) or not isinstance(max_rows, numbers.Integral) or not 3 <= max_rows <= MAX_COUNT:
        raise ValueError(
            f"max_rows: expected an integer from 3 to {MAX_COUNT} (first rows, '…', last 2 rows), got {brief(max_rows)}"
        )
    if se is not None and not isinstance(se, Mapping):
        raise ValueError(f"se: expected a dict {{estimate column: s.e. column}}, got {type(se).__name__} {brief(se)}")
    for name, text in (("index", index), ("caption", caption), ("note", note)):
        if text is not None and not isinstance(text, str):
            raise ValueError(f"{name}: expected None or a string, got {type(text).__name__} {brief(text)}")
    columns, records = _records(data, index)
    if se:
        for est, err in se.items():
            if est not in columns or err not in columns:
                raise ValueError(f"se: columns {est!r} and {err!r} must both be in the table, got {columns}")
            for i, r in enumerate(records):
                if r.get(est) is None and r.get(err) is None:
                    r[est] = None  # a row without this estimate: an empty cell, as for any missing value
                    continue
                try:
                    r[est] = pm(r.get(est), r.get(err))
                except ValueError as exc:
                    raise ValueError(f"se: row {i}, columns {est!r} and {err!r}: {exc}") from None
            columns = [c for c in columns if c != err]
            columns[columns.index(est)] = f"{est} ± s.e."
            for r in records:
                r[f"{est} ± s.e."] = r.pop(est)
    if split is not None:
        if not isinstance(split, str):
            raise ValueError(f"split: expected None or a column name, got {type(split).__name__} {brief(split)}")
        if split not in columns:
            raise ValueError(f"split: no column {split!r} in {columns}")
        groups: dict[str, list[dict]] = {}
        for r in records:
            groups.setdefault(fmt(r[split], digits), []).append(r)
        rest = [c for c in columns if c != split]
        return Tables(
            _make(_kept(rest, g, digits, drop_empty), g, digits, max_rows, f"{split} = {k}", None)
            for k, g in groups.items()
        )
    return _make(_kept(columns, records, digits, drop_empty), records, digits, max_rows, caption, note)


#: The text of an empty cell: a missing value or NaN (:func:`fmt`).
_EMPTY = ("", "–")


def _kept(columns, records, digits, drop_empty) -> list:
    """``columns`` without those whose every cell in ``records`` is empty, when ``drop_empty`` is true."""
    if not isinstance(drop_empty, bool):
        raise ValueError(f"drop_empty: expected True or False, got {brief(drop_empty)}")
    if not drop_empty:
        return list(columns)
    return [c for c in columns if any(fmt(r.get(c), digits) not in _EMPTY for r in records)]


def _make(columns, records, digits, max_rows, caption, note) -> Table:
    rows = [[fmt(r.get(c), digits) for c in columns] for r in records]
    if len(rows) > max_rows:
        head, tail = rows[: max_rows - 2], rows[-2:]
        left_out = len(rows) - len(head) - len(tail)
        rows = head + [["…"] * len(columns)] + tail
        extra = f"{left_out} of {len(records)} rows not shown; every row is in the notebook's results file."
        note = f"{note} {extra}" if note else extra
    return Table(columns, rows, caption=caption, note=note)
