"""Raw results of a notebook as JSON (``build/results/NN_slug.json``).

numpy scalars and arrays are converted to plain numbers and lists; keys are
sorted and floats written with full precision, so the file is deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .texout import write_atomic


def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
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


def save_results(path, results: dict) -> Path:
    """Write ``results`` (nested dicts, lists, numbers, numpy arrays) to ``path``."""
    if not isinstance(results, dict):
        raise ValueError(f"results: expected a dict, got {type(results).__name__}")
    text = json.dumps(_plain(results), indent=1, sort_keys=True, allow_nan=False)
    return write_atomic(path, text + "\n")


def load_results(path) -> dict:
    """Read a results file written by :func:`save_results`."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
