"""Bad input to the infrastructure (`mhanw.infra`): input checks, seeds, macros,
results and figures.  Each bad input must raise the expected error naming the
argument, never give a silent NaN, a wrong number or lost data."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw.infra import figures, results, sweep, texout, validate

# --------------------------------------------------------------------------- as_float_array


@pytest.mark.parametrize(
    "value,what",
    [
        (np.array([1 + 2j, 3.0]), "complex"),
        ([1.0, 2j], "complex"),
        (np.array([True, False]), "booleans"),
        ([True, False], "booleans"),
        (np.array([1.0, None], dtype=object), "objects"),
        (np.array(["1", "2"]), "strings"),
        ("3.0", "strings"),
        (np.array([b"1"]), "bytes"),
        ([10**400], "objects"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "datetimes"),
        ([[1.0, 2.0], [3.0]], "real numbers"),
        ([1.0, np.nan], "finite"),
        ([np.inf], "finite"),
        (np.array([1e400], dtype=np.longdouble) if np.finfo(np.longdouble).max > 1e400 else [np.inf], "finite"),
    ],
)
def test_as_float_array_rejects_non_real_input_naming_the_argument(value, what):
    with pytest.raises(ValueError, match=rf"^the_arg: .*{what}"):
        validate.as_float_array(value, "the_arg")


@pytest.mark.parametrize("value", [[1, 2], np.arange(3, dtype=np.uint8), np.float32([0.5]), 3, 1e-310, -1e308])
def test_as_float_array_keeps_integers_and_floats(value):
    out = validate.as_float_array(value, "x", ndim=None)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.asarray(value, dtype=np.float64))


def test_as_float_array_empty_and_ndim():
    with pytest.raises(ValueError, match=r"^x: expected a non-empty"):
        validate.as_float_array([], "x")
    assert validate.as_float_array([], "x", allow_empty=True).shape == (0,)
    with pytest.raises(ValueError, match=r"^x: expected a 2-D"):
        validate.as_float_array(1.0, "x", ndim=2)


# --------------------------------------------------------------------------- seeds


@pytest.mark.parametrize("seed", [None, True, False, np.bool_(True), 1.0, 1.5, -1, "1", [1, 2], (3,),
                                  np.random.default_rng(0)])
def test_as_seed_sequence_accepts_only_explicit_integers(seed):
    with pytest.raises(ValueError, match=r"^seed: "):
        validate.as_seed_sequence(seed)


@pytest.mark.parametrize("seed", [0, 7, np.int64(7), np.uint32(7), 2**70])
def test_as_seed_sequence_integers(seed):
    ss = validate.as_seed_sequence(seed)
    assert ss.entropy == int(seed)
    seq = np.random.SeedSequence(5)
    assert validate.as_seed_sequence(seq) is seq


@pytest.mark.parametrize("seed", [None, True, -3, 2.0])
def test_every_sweep_entry_point_rejects_implicit_seeds(seed):
    with pytest.raises(ValueError, match=r"^seed: "):
        sweep.spawn_streams(seed, 2)
    with pytest.raises(ValueError, match=r"^seed: "):
        sweep.run_replicates(lambda rng: rng.random(), 2, seed)
    with pytest.raises(ValueError, match=r"^seed: "):
        sweep.run_sweep(lambda s, rng: rng.random(), [1], 2, seed)


def test_two_runs_with_one_seed_agree():
    a = sweep.run_replicates(lambda rng: rng.random(), 3, 11)
    b = sweep.run_replicates(lambda rng: rng.random(), 3, 11)
    assert np.array_equal(np.asarray(a), np.asarray(b))


# --------------------------------------------------------------------------- texout


@pytest.mark.parametrize("digits", [0, -3, 18, 2.0, True, "3", None])
def test_format_number_rejects_bad_digits(digits):
    with pytest.raises(ValueError, match=r"^digits: "):
        texout.format_number(1.234, digits=digits)


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf, "1.5", None, True, 1j])
def test_format_number_rejects_bad_x(x):
    with pytest.raises(ValueError, match=r"^x: "):
        texout.format_number(x)


@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(1, 17))
def test_format_number_keeps_the_value(x, digits):
    text = texout.format_number(x, digits)
    plain = text.replace("\\times 10^{", "e").replace("10^{", "1e").replace("}", "")
    value = Decimal(plain)  # exact, also when rounding goes past the largest double
    assert abs(value - Decimal(x)) <= abs(Decimal(x)) * Decimal(10) ** (1 - digits)


@pytest.mark.parametrize("mean,se,name", [(math.nan, 0.1, "mean"), (math.inf, 0.1, "mean"), ("1", 0.1, "mean"),
                                          (1.0, math.nan, "se"), (1.0, -0.1, "se"), (1.0, math.inf, "se")])
def test_format_mean_se_blames_the_right_argument(mean, se, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        texout.format_mean_se(mean, se)


def test_format_mean_se_bad_se_digits():
    with pytest.raises(ValueError, match=r"^se_digits: "):
        texout.format_mean_se(1.0, 0.1, se_digits=0)


@pytest.mark.parametrize("text", ["a { b", "a } b", "}{", "\\textbf{x", "{{}", "\\{ {"])
def test_macro_text_rejects_unbalanced_braces(text):
    m = texout.Macros("Test")
    with pytest.raises(ValueError, match=r"^value: unbalanced braces"):
        m.text("Verdict", text)
    assert len(m) == 0


@pytest.mark.parametrize("text", ["holds", "\\emph{fails}", "a \\{ b \\}", "50\\%", "{}"])
def test_macro_text_accepts_balanced_braces(text):
    m = texout.Macros("Test")
    m.text("Verdict", text)
    assert f"{{{text}}}" in m.render()


@pytest.mark.parametrize("value", [3, None, b"x"])
def test_macro_text_rejects_non_strings(value):
    with pytest.raises(ValueError, match=r"^value: "):
        texout.Macros("Test").text("Verdict", value)


@pytest.mark.parametrize("value", [math.nan, math.inf, 2.5, True, "7", None])
def test_macro_integer_rejects_non_integers(value):
    with pytest.raises(ValueError, match=r"^value: "):
        texout.Macros("Test").integer("N", value)


def test_macro_integer_accepts_integral_floats_and_numpy():
    m = texout.Macros("Test")
    m.integer("A", 1e6)
    m.integer("B", np.int64(12345))
    assert "1\\,000\\,000" in m.render() and "12\\,345" in m.render()


def test_macros_write_to_an_unwritable_path_raises_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    m = texout.Macros("Test")
    m.number("X", 1.0)
    with pytest.raises(OSError):
        m.write(blocker / "sub" / "out.tex")
    assert blocker.read_text() == "x"


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize("data,key", [({1: "a", "1": "b"}, "'1'"), ({True: 1, "True": 2}, "'True'"),
                                      ({"outer": {1.5: 0, "1.5": 1}}, "'1.5'"), ({None: 1, "None": 2}, "'None'")])
def test_save_results_rejects_colliding_keys(tmp_path, data, key):
    path = tmp_path / "r.json"
    with pytest.raises(ValueError, match=rf"^results.*{key}.*collide"):
        results.save_results(path, data)
    assert not path.exists()


def test_save_results_keeps_distinct_non_string_keys(tmp_path):
    path = results.save_results(tmp_path / "r.json", {1: "a", 2: {"x": np.float64(0.5)}})
    assert results.load_results(path) == {"1": "a", "2": {"x": 0.5}}


@pytest.mark.parametrize("value,where", [(math.nan, "\\['a'\\]"), ([1.0, math.inf], "\\['a'\\]\\[1\\]"),
                                         (np.array([1 + 1j]), "\\['a'\\]\\[0\\]"), ({1, 2}, "\\['a'\\]"),
                                         (object(), "\\['a'\\]")])
def test_save_results_names_where_an_unwritable_value_is(tmp_path, value, where):
    with pytest.raises(ValueError, match=rf"^results{where}: "):
        results.save_results(tmp_path / "r.json", {"a": value})


def test_save_results_rejects_a_non_dict(tmp_path):
    with pytest.raises(ValueError, match=r"^results: expected a dict"):
        results.save_results(tmp_path / "r.json", [1, 2])


def test_json_safe_then_save_round_trips(tmp_path):
    path = results.save_results(tmp_path / "r.json", results.json_safe({"a": [1.0, math.nan], "b": np.inf}))
    assert json.loads(path.read_text()) == {"a": [1.0, None], "b": None}


# --------------------------------------------------------------------------- figures


def _figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    return fig


def test_save_writes_both_files_and_no_temporaries(tmp_path):
    paths = figures.save(_figure(), "01_test", tmp_path)
    assert [p.name for p in paths] == ["01_test.pdf", "01_test.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01_test.pdf", "01_test.png"]
    assert paths[0].read_bytes().startswith(b"%PDF") and paths[1].read_bytes().startswith(b"\x89PNG")


def test_failing_png_leaves_the_previous_pair_untouched(tmp_path, monkeypatch):
    figures.save(_figure(), "01_test", tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    fig = _figure()
    fig.axes[0].set_title("changed")
    real = fig.savefig

    def failing(target, *args, **kwargs):
        if kwargs.get("format") == "png":
            with open(target, "wb") as fh:
                fh.write(b"\x89PNG truncated")
            raise OSError("disk full")
        return real(target, *args, **kwargs)

    monkeypatch.setattr(fig, "savefig", failing)
    with pytest.raises(OSError, match="disk full"):
        figures.save(fig, "01_test", tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before


def test_failing_pdf_leaves_nothing_behind(tmp_path, monkeypatch):
    fig = _figure()

    def failing(target, *args, **kwargs):
        with open(target, "wb") as fh:
            fh.write(b"%PDF-1.4 trunc")
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(fig, "savefig", failing)
    with pytest.raises(RuntimeError):
        figures.save(fig, "01_test", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["1_test", "01-Test", "01_", 1, None, "../01_x"])
def test_save_rejects_bad_names(tmp_path, name):
    with pytest.raises(ValueError, match=r"^name: "):
        figures.save(_figure(), name, tmp_path)
