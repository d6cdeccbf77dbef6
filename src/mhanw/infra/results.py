"""Raw results of a notebook as JSON (``build/results/NN_slug.json``).

numpy scalars and arrays are converted to plain numbers and lists; keys are
sorted and floats written with full precision, so the file is deterministic.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from .texout import write_atomic
from .validate import brief


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
    """Read a results file written by :func:`save_results`.

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
