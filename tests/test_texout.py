"""The paper's values: formatting of numbers, one line per leaf, atomic writing."""

import re

import pytest
import sympy as sp

from mhanw.infra.results import load_results, save_results
from mhanw.infra.texout import format_mean_se, format_number


@pytest.mark.parametrize(
    "x, digits, expected",
    [
        (280.4, 2, "280"),
        (0.04349, 2, "0.043"),
        (5.6e-16, 2, r"5.6\times 10^{-16}"),
        (1e-4, 2, "10^{-4}"),
        (-0.5, 2, "-0.50"),
        (0.0, 3, "0"),
        (123456.0, 3, r"1.23\times 10^{5}"),
    ],
)
def test_format_number(x, digits, expected):
    assert format_number(x, digits) == expected


def test_format_mean_se_rounds_to_the_place_of_the_se():
    assert format_mean_se(0.51083, 0.00123) == r"0.511 \pm 0.001"
    assert format_mean_se(123.4, 12.0) == r"120 \pm 10"
    with pytest.raises(ValueError, match="^se:"):
        format_mean_se(1.0, -1.0)


def test_the_paper_values_print_each_kind_of_leaf_with_its_formatter(tmp_path):
    """A number, a count, an estimate, trusted LaTeX, plain text and a formula: each leaf's line in the
    paper's values is the one its formatter gives (:func:`mhanw.infra.results.write`)."""
    from mhanw.infra.results import Q, Tex, write
    from mhanw.infra.texout import tex_escape

    tree = {
        "err": Q(3.1e-16, digits=2),
        "n": 20000,
        "est": Q(0.5, 0.01),
        "verdict": Tex("holds"),
        "note": "50% of x_1",
        "law": sp.Symbol("k") ** 2 / 2,
    }
    write("01", tree, [], macros_path=tmp_path / "sub" / "demo.tex", results_path=tmp_path / "r.json")
    text = (tmp_path / "sub" / "demo.tex").read_text()
    assert r"\mhvalue{01.err}{\ensuremath{3.1\times 10^{-16}}}" in text
    assert r"\mhvalue{01.n}{\ensuremath{20\,000}}" in text
    assert r"\mhvalue{01.est}{\ensuremath{" + format_mean_se(0.5, 0.01) + "}}" in text
    assert r"\mhvalue{01.verdict}{holds}" in text
    assert r"\mhvalue{01.note}{" + tex_escape("50% of x_1") + "}" in text
    assert r"\mhvalue{01.law}{\ensuremath{\frac{k^{2}}{2}}}" in text
    assert len(re.findall(r"^\\mhvalue\{01\.(err|n|est|verdict|note|law)\}", text, re.M)) == 6
    assert not list((tmp_path / "sub").glob(".*tmp"))


def test_results_round_trip(tmp_path):
    import numpy as np

    p = save_results(tmp_path / "r.json", {"a": np.arange(3), "b": np.float64(0.5), "c": {"d": (1, 2)}})
    assert load_results(p) == {"a": [0, 1, 2], "b": 0.5, "c": {"d": [1, 2]}}
    with pytest.raises(ValueError, match="^results:"):
        save_results(tmp_path / "x.json", [1, 2])


# ---- atomic writes: the one writer of the paper's values, results and build files -----------------------------


def test_an_atomic_write_gives_an_ordinary_file(tmp_path):
    import os

    from mhanw.infra.texout import new_file_mode, write_atomic

    path = write_atomic(tmp_path / "x.tex", "hi\n")
    assert path.read_text() == "hi\n" and (path.stat().st_mode & 0o777) == new_file_mode()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("target", ["/dev/null", "DIR", "a\x00b", "FILE/below", "n" * 300])
def test_an_atomic_write_refuses_what_is_not_a_file_of_its_own_naming_the_argument(tmp_path, target):
    from mhanw.infra.texout import write_atomic

    (tmp_path / "FILE").write_text("kept\n")
    path = target if target.startswith("/") or "\x00" in target else str(tmp_path / target)
    if target == "DIR":
        path = str(tmp_path)
    with pytest.raises(ValueError, match=r"^macros_path: "):
        write_atomic(path, "x", argument="macros_path")
    assert (tmp_path / "FILE").read_text() == "kept\n"


def test_two_outputs_of_one_run_are_two_files(tmp_path):
    from mhanw.infra.texout import checked_outputs

    with pytest.raises(ValueError, match="results_path: .*same file as macros_path"):
        checked_outputs(macros_path=tmp_path / "a", results_path=tmp_path / "." / "a")
    assert set(checked_outputs(macros_path=tmp_path / "a", results_path=tmp_path / "b")) == {
        "macros_path",
        "results_path",
    }
