"""Macros for the paper: formatting, names, atomic writing."""

import re

import pytest
import sympy as sp

from mhanw.infra.results import load_results, save_results
from mhanw.infra.texout import Macros, format_mean_se, format_number


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


def test_macros_render_and_write(tmp_path):
    m = Macros("Demo")
    m.number("Err", 3.1e-16, 2)
    m.integer("N", 20000)
    m.mean_se("Est", 0.5, 0.01)
    m.text("Verdict", "holds")
    m.expr("Law", sp.Symbol("k") ** 2 / 2)
    path = m.write(tmp_path / "sub" / "demo.tex")
    text = path.read_text()
    assert r"\newcommand{\DemoErr}{\ensuremath{3.1\times 10^{-16}}}" in text
    assert r"\newcommand{\DemoN}{\ensuremath{20\,000}}" in text
    assert r"\newcommand{\DemoLaw}{\ensuremath{\frac{k^{2}}{2}}}" in text
    assert len(re.findall(r"\\newcommand", text)) == 5
    assert not list(path.parent.glob(".*tmp"))


@pytest.mark.parametrize("bad", ["With1Digit", "under_score", "", 3])
def test_macro_names_are_letters_only(bad):
    with pytest.raises(ValueError, match="^(name|prefix):"):
        Macros("Ok").number(bad, 1.0)
    with pytest.raises(ValueError, match="^prefix:"):
        Macros(bad)


def test_duplicate_and_empty():
    m = Macros("Ok")
    m.number("A", 1.0)
    with pytest.raises(ValueError, match="defined twice"):
        m.number("A", 2.0)
    with pytest.raises(ValueError, match="^macros:"):
        Macros("Empty").write("/nonexistent/never.tex")


def test_results_round_trip(tmp_path):
    import numpy as np

    p = save_results(tmp_path / "r.json", {"a": np.arange(3), "b": np.float64(0.5), "c": {"d": (1, 2)}})
    assert load_results(p) == {"a": [0, 1, 2], "b": 0.5, "c": {"d": [1, 2]}}
    with pytest.raises(ValueError, match="^results:"):
        save_results(tmp_path / "x.json", [1, 2])


# ---- atomic writes: the one writer of macros, results and build files -----------------------------


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
