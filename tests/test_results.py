"""Tests of :mod:`mhanw.infra.results`: raw results as deterministic JSON."""

import math

import numpy as np
import pytest

from mhanw.infra.results import json_safe, load_results, save_results


def test_json_safe_replaces_non_finite_numbers(tmp_path):
    raw = {
        "a": math.nan,
        "b": [1.0, math.inf, np.float64(-np.inf)],
        "c": np.array([0.5, np.nan]),
        "d": {"e": np.int64(3), "f": None, "g": "text", "h": True},
    }
    clean = json_safe(raw)
    assert clean == {
        "a": None,
        "b": [1.0, None, None],
        "c": [0.5, None],
        "d": {"e": 3, "f": None, "g": "text", "h": True},
    }
    with pytest.raises(ValueError):
        save_results(tmp_path / "bad.json", raw)  # NaN is rejected as it is
    save_results(tmp_path / "ok.json", clean)
    assert load_results(tmp_path / "ok.json") == clean
