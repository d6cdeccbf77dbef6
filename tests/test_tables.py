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


@pytest.mark.parametrize("mean, se, expected", [
    (0.51316, 0.0039, "0.5132 ± 0.0039"),
    (-0.0123, 0.0045, "-0.0123 ± 0.0045"),
    (12345.6, 12.3, "12346 ± 12"),
    (1.23e-5, 4.5e-7, "(1.230 ± 0.045)e-5"),
])
def test_pm_rounds_the_mean_to_the_standard_error(mean, se, expected):
    assert tables.pm(mean, se) == expected


def test_show_merges_estimates_with_their_standard_errors():
    t = tables.show({"d_k": [1, 2], "mean": np.array([0.548, 0.429]), "se": np.array([0.081, 0.065])},
                    se={"mean": "se"})
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
    assert [p.caption for p in parts] == ["m = a", "m = b"] and len(parts[0].rows) == tables.MAX_ROWS + 1  # with the "…" row
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
