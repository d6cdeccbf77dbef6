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


# --------------------------------------------------------------------------- the results tree and its writer


def test_the_tree_is_immutable_and_read_by_dotted_paths():
    from mhanw.infra.results import Q, Results

    r = Results({"a": {"b": Q(1.5, 0.1)}, "xs": [1, 2], "arr": np.arange(3.0)})
    assert r.at("a.b").se == 0.1 and r["xs"] == (1, 2)
    with pytest.raises(TypeError):
        r["a"]["c"] = 1
    with pytest.raises(ValueError):
        r["arr"][0] = 5.0
    with pytest.raises(KeyError, match="no 'a.c'"):
        r.at("a.c")
    with pytest.raises(ValueError, match="key 'a b'"):
        Results({"a b": 1})


def test_one_writer_names_every_number_once_in_the_paper_and_the_results_file(tmp_path):
    import json

    import sympy as sp

    from mhanw.infra.results import Q, Raw, Tex, write
    from mhanw.infra.verdicts import HOLDS, Verdict

    tree = {
        "part": {"effect": Q(0.0123, 0.0011, label="effect"), "count": 20000, "ratio": Q(3.14159, digits=2)},
        "text": "50% of x_1",
        "formula": Tex("\\ensuremath{a^2}"),
        "gap": sp.Symbol("m") * (sp.Symbol("a") - 1),
        "raw": Raw(np.zeros(10**6)),
        "table": [1.0, float("nan")],
    }
    rec = Verdict(claim="thm-1/x", statement="s", verdict=HOLDS, criterion="c")
    write("07", tree, [rec], macros_path=tmp_path / "v.tex", results_path=tmp_path / "r.json", header={"seed": 1})
    tex = (tmp_path / "v.tex").read_text()
    assert "\\mhvalue{07.part.effect}{\\ensuremath{0.012 \\pm 0.001}}" in tex
    assert "\\mhvalue{07.part.effect.z}{\\ensuremath{11}}" in tex
    assert "\\mhvalue{07.part.count}{\\ensuremath{20\\,000}}" in tex
    assert "\\mhvalue{07.part.ratio}{\\ensuremath{3.1}}" in tex
    assert "\\mhvalue{07.text}{50\\% of x\\_1}" in tex
    assert "\\mhvalue{07.formula}{\\ensuremath{a^2}}" in tex
    assert "\\mhvalue{verdict:thm-1/x}{holds}" in tex and "\\mhvalue{is:thm-1/x}{holds}" in tex
    assert "\\mhvalue{key:thm-1/x}{holds}" in tex
    assert "07.raw" not in tex and "07.table" not in tex
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["seed"] == 1 and doc["claims"][0]["claim"] == "thm-1/x"
    assert doc["results"]["part"]["effect"] == {"value": 0.0123, "se": 0.0011, "label": "effect"}
    assert doc["results"]["table"] == [1.0, None] and "raw" not in doc["results"]


def test_the_direction_of_a_verdict_is_holds_fails_or_other():
    from mhanw.infra import verdicts as V

    assert V.verdict_key(V.HOLDS) == V.verdict_key(V.HOLDS_UNDER) == "holds"
    assert V.verdict_key(V.FAILS) == "fails"
    assert {V.verdict_key(v) for v in (V.UNDECIDED, V.OUTSIDE, V.NOT_CHECKABLE)} == {"other"}
    with pytest.raises(ValueError, match="verdict"):
        V.verdict_key("holds probably")


def test_a_sympy_function_of_a_symbol_is_a_formula_of_the_paper_and_of_the_results_file():
    """The class of ``sympy.Function("f")(x)`` has no ``__module__``: it is still a formula (it was an
    ``AttributeError`` in the writer)."""
    import sympy as sp

    from mhanw.infra.results import _json, values_tex

    law = sp.Function("f")(sp.Symbol("x"))
    assert "\\mhvalue{01.law}{\\ensuremath{f{\\left(x \\right)}}}" in values_tex("01", {"law": law})
    assert _json({"law": law}, "results") == {"law": "f(x)"}


@pytest.mark.parametrize("key", ["a\n", "a\n\n", "\na", " a", "a ", "", "á", "a\t", "a\x00", "a.b", "-a"])
def test_a_key_of_the_tree_with_anything_but_letters_digits_and_dashes_is_refused(key):
    """A key is a part of a value's name in the paper (``\\val{NN.a.b}``): a newline, a space or a dot in
    it would name another value or none."""
    from mhanw.infra.results import Results

    with pytest.raises(ValueError, match="^results: key "):
        Results({key: 1})
    with pytest.raises(ValueError, match="^results.part: key "):
        Results({"part": {key: 1}})
    assert Results({"a1": {"b-c_2": 1}}).at("a1.b-c_2") == 1


def test_a_z_is_printed_only_where_value_over_se_is_finite():
    """``Q(1, 5e-324)`` is a quantity (its s.e. is tiny, not 0), but 1 / 5e-324 overflows: the writer
    printed no value at all (a ``ValueError`` about ``x``, naming no path); it now leaves out its z, as it
    does for an s.e. of 0."""
    from mhanw.infra.results import Q, values_tex

    tex = values_tex("01", {"e": Q(1.0, 5e-324), "f": Q(1.0, 0.0), "g": Q(1.0, 0.5)})
    assert "01.e.z" not in tex and "01.f.z" not in tex
    assert "\\mhvalue{01.g.z}{\\ensuremath{2.0}}" in tex
    assert "\\mhvalue{01.e}{" in tex and "\\mhvalue{01.e.se}{" in tex and "\\mhvalue{01.f.se}{" in tex
