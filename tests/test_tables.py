"""mhanw.infra.tables: tables for reading, and figures.save's quiet return value."""

import numpy as np
import pandas as pd
import pytest

from mhanw.infra import tables


def test_fmt_gives_significant_digits_and_no_numpy_reprs():
    assert tables.fmt(np.float64(0.129912345)) == "0.1299"
    assert tables.fmt(2.220446049250313e-16) == "2.22e-16"
    assert tables.fmt(np.int64(20000)) == "20000"
    assert tables.fmt(np.bool_(True)) == "yes"
    assert tables.fmt(float("nan")) == "–"
    assert tables.fmt(np.array([0.548, 0.429])) == "0.548, 0.429"
    assert "np." not in tables.fmt({"a": np.float64(1.5)})
    assert tables.fmt(list(range(20))).count(",") < 10  # long arrays are shortened


@pytest.mark.parametrize(
    "mean, se, expected",
    [
        (0.51316, 0.0039, "0.5132 ± 0.0039"),
        (-0.0123, 0.0045, "-0.0123 ± 0.0045"),
        (12345.6, 12.3, "12346 ± 12"),
        (1.23e-5, 4.5e-7, "(1.230 ± 0.045)e-5"),
    ],
)
def test_pm_rounds_the_mean_to_the_standard_error(mean, se, expected):
    assert tables.pm(mean, se) == expected


def test_show_merges_estimates_with_their_standard_errors():
    t = tables.show(
        {"d_k": [1, 2], "mean": np.array([0.548, 0.429]), "se": np.array([0.081, 0.065])}, se={"mean": "se"}
    )
    assert t.columns == ["d_k", "mean ± s.e."] and t.rows == [["1", "0.548 ± 0.081"], ["2", "0.429 ± 0.065"]]
    html = t._repr_html_()
    assert "<table" in html and "0.548 ± 0.081" in html


def test_show_reads_dicts_of_dicts_and_dataframes_with_an_index():
    t = tables.show({"a": {"x": np.float64(1.5), "y": "holds"}, "b": {"x": 2, "y": "fails"}}, index="case")
    assert t.columns == ["case", "x", "y"] and t.rows[0] == ["a", "1.5", "holds"]
    df = pd.DataFrame({"v": [0.1, 0.2]}, index=pd.Index([10, 20], name="n"))
    assert tables.show(df).rows == [["10", "0.1"], ["20", "0.2"]]


def test_long_tables_are_split_or_shortened_with_a_note():
    df = pd.DataFrame({"m": ["a"] * 20 + ["b"] * 20, "x": np.arange(40.0)})
    parts = tables.show(df, split="m")
    assert [p.caption for p in parts] == ["m = a", "m = b"] and len(
        parts[0].rows
    ) == tables.MAX_ROWS + 1  # with the "…" row
    short = tables.show(df)
    assert len(short.rows) == tables.MAX_ROWS + 1 and "24 of 40 rows not shown" in short.note
    with pytest.raises(ValueError):
        tables.show(df, se={"x": "missing"})


def test_figures_save_outside_a_kernel_returns_the_paths_and_displays_nothing(tmp_path):
    import matplotlib.pyplot as plt

    from mhanw.infra import figures

    fig, _ = plt.subplots()
    paths = figures.save(fig, "99_check", tmp_path)
    assert paths == [tmp_path / "99_check.pdf", tmp_path / "99_check.png"]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert paths._ipython_display_() is None


def test_formulas_are_maths_cells_typeset_from_sympy():
    """A sympy expression in a table is inline maths, $...$ (HTML: a MathJax span), not sympy's str;
    sympy numbers and true/false stay numbers and booleans."""
    import sympy as sp

    n, c = sp.symbols("n c_B", positive=True)
    leading = sp.exp(sp.LambertW(2 * sp.log(c * n)))
    assert tables.math_cell(leading) == "$" + sp.latex(leading, ln_notation=True) + "$"
    assert tables.fmt(leading) == tables.math_cell(leading) and tables.fmt(sp.sqrt(c)) == r"$\sqrt{c_{B}}$"
    assert tables.math_cell(r" k^*\propto n^{2/5} ") == r"$k^*\propto n^{2/5}$"
    assert tables.math_cell(sp.Rational(2, 5)) == r"$\frac{2}{5}$"
    assert (tables.fmt(sp.Integer(-2)), tables.fmt(sp.Rational(2, 5)), tables.fmt(sp.true)) == ("-2", "0.4", "True")
    for bad in ("", "$x$", 3, None):
        with pytest.raises(ValueError, match="^value: "):
            tables.math_cell(bad)
    html = tables.show([{"model": "M1", "leading order": leading}])._repr_html_()
    assert r'<span class="math notranslate nohighlight">\(e^{W' in html and "LambertW" not in html


def test_split_tables_can_drop_the_columns_a_part_leaves_empty():
    df = pd.DataFrame(
        {"model": ["M1", "M1", "M2"], "a": [1.0, 2.0, np.nan], "b": [np.nan, np.nan, 3.0], "c": [None, None, None]}
    )
    m1, m2 = tables.show(df, split="model", drop_empty=True)
    assert (m1.columns, m2.columns) == (["a"], ["b"])
    assert tables.show(df, split="model")[0].columns == ["a", "b", "c"]
    assert tables.show(df, drop_empty=True).columns == ["model", "a", "b"]
    with pytest.raises(ValueError, match="^drop_empty: "):
        tables.show(df, drop_empty="yes")
