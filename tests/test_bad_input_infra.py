"""Bad input to the infrastructure (`mhanw.infra`): input checks, seeds, the paper's values,
results and figures.  Each bad input must raise the expected error naming the
argument, never give a silent NaN, a wrong number or lost data."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

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


@pytest.mark.parametrize(
    "seed", [None, True, False, np.bool_(True), 1.0, 1.5, -1, "1", [1, 2], (3,), np.random.default_rng(0)]
)
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


@pytest.mark.parametrize(
    "mean,se,name",
    [
        (math.nan, 0.1, "mean"),
        (math.inf, 0.1, "mean"),
        ("1", 0.1, "mean"),
        (1.0, math.nan, "se"),
        (1.0, -0.1, "se"),
        (1.0, math.inf, "se"),
    ],
)
def test_format_mean_se_blames_the_right_argument(mean, se, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        texout.format_mean_se(mean, se)


def test_format_mean_se_bad_se_digits():
    with pytest.raises(ValueError, match=r"^se_digits: "):
        texout.format_mean_se(1.0, 0.1, se_digits=0)


@pytest.mark.parametrize("text", ["a { b", "a } b", "}{", "\\textbf{x", "{{}", "\\{ {"])
def test_tex_with_unbalanced_braces_is_refused(text):
    with pytest.raises(ValueError, match=r"^value: unbalanced braces"):
        texout.check_tex(text, "value")


@pytest.mark.parametrize("text", ["holds", "\\emph{fails}", "a \\{ b \\}", "50\\%", "{}"])
def test_tex_with_balanced_braces_is_kept(text):
    assert texout.check_tex(text, "value") == text
    assert f"\\mhvalue{{01.verdict}}{{{text}}}" in results.values_tex("01", {"verdict": results.Tex(text)})


@pytest.mark.parametrize("value", [3, None, b"x"])
def test_tex_that_is_not_a_string_is_refused(value):
    with pytest.raises(ValueError, match=r"^value: expected a string"):
        texout.check_tex(value, "value")


@pytest.mark.parametrize("value", [math.nan, math.inf, 2.5, True, "7", None])
def test_a_printed_count_refuses_non_integers(value):
    with pytest.raises(ValueError, match=r"^value: expected an integer"):
        texout.printed_integer(value, "value")


def test_a_count_of_the_paper_may_be_a_numpy_integer():
    assert texout.printed_integer(np.int64(12345), "value") == 12345
    tex = results.values_tex("01", {"a": 1_000_000, "b": np.int64(12345)})
    assert "{01.a}{\\ensuremath{1\\,000\\,000}}" in tex and "{01.b}{\\ensuremath{12\\,345}}" in tex


def test_the_paper_values_to_an_unwritable_path_raise_and_leave_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="^macros_path: cannot write"):  # one line naming the argument
        results.write(
            "01", {"x": results.Q(1.0)}, [], macros_path=blocker / "sub" / "out.tex", results_path=tmp_path / "r.json"
        )
    assert blocker.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize(
    "data,key",
    [
        ({1: "a", "1": "b"}, "'1'"),
        ({True: 1, "True": 2}, "'True'"),
        ({"outer": {1.5: 0, "1.5": 1}}, "'1.5'"),
        ({None: 1, "None": 2}, "'None'"),
    ],
)
def test_save_results_rejects_colliding_keys(tmp_path, data, key):
    path = tmp_path / "r.json"
    with pytest.raises(ValueError, match=rf"^results.*{key}.*collide"):
        results.save_results(path, data)
    assert not path.exists()


def test_save_results_keeps_distinct_non_string_keys(tmp_path):
    path = results.save_results(tmp_path / "r.json", {1: "a", 2: {"x": np.float64(0.5)}})
    assert results.load_results(path) == {"1": "a", "2": {"x": 0.5}}


@pytest.mark.parametrize(
    "value,where",
    [
        (math.nan, "\\['a'\\]"),
        ([1.0, math.inf], "\\['a'\\]\\[1\\]"),
        (np.array([1 + 1j]), "\\['a'\\]\\[0\\]"),
        ({1, 2}, "\\['a'\\]"),
        (object(), "\\['a'\\]"),
    ],
)
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


@pytest.mark.parametrize("first_time", [False, True])
def test_failing_second_rename_puts_the_first_file_back(tmp_path, monkeypatch, first_time):
    """The PNG and the PDF are replaced as a pair: if renaming the PDF fails after the PNG was
    renamed, the previous PNG is restored (or the new one removed), never a mixed pair."""
    if not first_time:
        figures.save(_figure(), "01_test", tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = figures.os.replace

    def failing(src, dst):
        if str(dst).endswith(".pdf"):
            raise OSError("rename failed")
        return real(src, dst)

    monkeypatch.setattr(figures.os, "replace", failing)
    fig = _figure()
    fig.axes[0].set_title("changed")
    with pytest.raises(OSError, match="rename failed"):
        figures.save(fig, "01_test", tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


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


# --------------------------------------------------------------------------- estimates


def test_estimate_does_not_overflow_near_the_largest_double():
    from mhanw.infra.estimates import Estimate

    e = Estimate.from_samples([1e308, 1e308, 1.2e308])
    assert math.isfinite(e.mean) and math.isfinite(e.se)
    assert e.mean == pytest.approx(1.0666666666666667e308) and e.se == pytest.approx(0.0666666666666667e308)
    e = Estimate.from_samples([1e308, -1e308])
    assert e.mean == 0.0 and e.se == pytest.approx(1e308)
    # ordinary samples keep the plain sums bit for bit
    x = np.random.default_rng(0).standard_normal(50)
    assert Estimate.from_samples(x).mean == x.mean() and Estimate.from_samples(x).se == x.std(ddof=1) / np.sqrt(50)


def test_paired_differences_beyond_the_double_range_raise():
    from mhanw.infra.estimates import Estimate

    with pytest.raises(ValueError, match="^b: "):
        Estimate.paired([1e308, 1.5e308], [-1e308, -1.5e308])


@pytest.mark.parametrize(
    "mean,se,name",
    [
        (math.nan, 1.0, "mean"),
        (math.inf, 1.0, "mean"),
        ("a", 0.1, "mean"),
        (None, 0.1, "mean"),
        (1.0, -1.0, "se"),
        (1.0, math.inf, "se"),
        (1.0, "b", "se"),
        (True, 0.1, "mean"),
        ([1.0, 2.0], [0.1, -0.1], "se"),
    ],
)
def test_estimate_constructor_checks_its_numbers(mean, se, name):
    from mhanw.infra.estimates import Estimate

    with pytest.raises(ValueError, match=rf"^{name}: "):
        Estimate(mean, se)


def test_estimate_keeps_a_nan_se_for_one_replicate():
    from mhanw.infra.estimates import Estimate

    e = Estimate.from_samples([1.0])
    assert e.mean == 1.0 and math.isnan(e.se)
    with pytest.raises(ValueError, match="^se: "):
        e.exceeds()


def test_relative_change_against_a_zero_base_raises():
    from mhanw.infra.estimates import Estimate

    with pytest.raises(ValueError, match="^b: .*0"):
        Estimate.relative([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="^b: "):
        Estimate.relative([1.0, 2.0], [-1.0, 1.0])  # mean 0 as well


def test_relative_change_of_a_negative_base_has_a_positive_se():
    from mhanw.infra.estimates import Estimate

    e = Estimate.relative([-2.0, -2.2, -1.9], [-1.0, -1.05, -1.0])
    assert e.se > 0


@pytest.mark.parametrize("n_se", [math.nan, -1.0, "3", None, True])
def test_exceeds_rejects_a_bad_n_se(n_se):
    from mhanw.infra.estimates import Estimate

    with pytest.raises(ValueError, match="^n_se: "):
        Estimate(1.0, 0.1).exceeds(n_se)


# --------------------------------------------------------------------------- params


def _check(ns, spec, constraints=()):
    from mhanw.infra.params import check_parameters

    return check_parameters(ns, spec, constraints)


def test_constraints_that_cannot_be_evaluated_name_the_parameter():
    from mhanw.infra import params as P

    with pytest.raises(P.ParameterError, match="^a: the constraint 'b > 0' refers to parameter 'b'"):
        _check({"a": 1}, {"a": P.positive_int()}, (P.require("a", lambda p: p["b"] > 0, "b > 0"),))
    with pytest.raises(P.ParameterError, match="^a: cannot check 'a != 1'.*ZeroDivisionError"):
        _check({"a": 1.0}, {"a": P.real()}, (P.require("a", lambda p: 1 / (p["a"] - 1) > 0, "a != 1"),))
    with pytest.raises(P.ParameterError, match="^a: cannot check.*OverflowError"):
        _check({"a": 1e3}, {"a": P.real()}, (P.require("a", lambda p: math.exp(p["a"]) > 0, "exp(a) > 0"),))
    with pytest.raises(P.ParameterError, match="^a: expected a divisor of b = 4.0, got 0.0"):
        _check({"a": 0.0, "b": 4.0}, {"a": P.real(), "b": P.real()}, (P.divides("a", "b"),))
    with pytest.raises(P.ParameterError, match="^a: the constraint 'a <= c' refers to parameter 'c'"):
        _check({"a": 1}, {"a": P.positive_int()}, (P.at_most("a", "c"),))
    with pytest.raises(P.ParameterError, match="^H: the constraint 'H\\*d_k <= d' refers to parameter 'd_k'"):
        _check(
            {"H": 1, "d": 2}, {"H": P.positive_int(), "d": P.positive_int()}, (P.product_at_most(("H", "d_k"), "d"),)
        )


def test_a_hand_written_constraint_that_breaks_is_named():
    from mhanw.infra import params as P

    def broken(p):
        return p["missing"]

    with pytest.raises(P.ParameterError, match=r"^constraints\[0\]: could not be checked \(KeyError"):
        _check({"a": 1}, {"a": P.positive_int()}, (broken,))
    with pytest.raises(TypeError, match="^constraints: "):
        _check({"a": 1}, {"a": P.positive_int()}, ("a > 0",))


@pytest.mark.parametrize("namespace", [None, 3, "globals", [("a", 1)]])
def test_check_parameters_needs_a_namespace_mapping(namespace):
    from mhanw.infra import params as P

    with pytest.raises(TypeError, match="^namespace: "):
        _check(namespace, {"a": P.positive_int()})


# --------------------------------------------------------------------------- expressions


@pytest.mark.parametrize("text", ["1j", "2 + 3J", "x1*1j"])
def test_imaginary_numbers_are_rejected_by_name(text):
    from mhanw import data
    from mhanw.infra.expressions import NUMBER_GRAMMAR

    with pytest.raises(ValueError, match=r"^q: imaginary number"):
        NUMBER_GRAMMAR.parse(text.replace("x1*", ""), "q")
    with pytest.raises(ValueError, match=r"^regression: imaginary number"):
        data.GRAMMAR.parse(text, "regression")


def test_undefined_sympy_functions_are_rejected_by_name():
    import sympy as sp

    from mhanw import data

    x1 = sp.Symbol("x1")
    with pytest.raises(ValueError, match=r"^regression: undefined function\(s\) f"):
        data.GRAMMAR.parse(sp.Function("f")(x1) + 1, "regression")
    assert data.GRAMMAR.parse(sp.sin(x1), "regression") == sp.sin(data.GRAMMAR.symbol("x1"))


# --------------------------------------------------------------------------- verdicts


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(name="a", value="x"), "value"),
        (dict(name="a", value=None), "value"),
        (dict(name="a", value=True), "value"),
        (dict(name="a", value=math.nan), "value"),
        (dict(name="a", value=math.inf), "value"),
        (dict(name="a", value=1.0, se=-1.0), "se"),
        (dict(name="a", value=1.0, se=math.inf), "se"),
        (dict(name="a", value=1.0, se="0.1"), "se"),
        (dict(name="", value=1.0), "name"),
        (dict(name=3, value=1.0), "name"),
        (dict(name="a", value=1.0, unit=None), "unit"),
    ],
)
def test_statistic_checks_its_fields(kwargs, name):
    from mhanw.infra.verdicts import Statistic

    with pytest.raises(ValueError, match=rf"^{name}: "):
        Statistic(**kwargs)


def test_statistic_accepts_numpy_and_exact_values():
    from mhanw.infra.verdicts import Statistic, stat

    assert Statistic("a", np.float64(1.0), np.nan).value == 1.0
    s = stat("a", np.array(2.0), np.float64(0.5))
    assert type(s.value) is float and s.value == 2.0 and s.se == 0.5
    assert Statistic("count", 3).to_dict() == {"name": "count", "value": 3.0, "se": None}


def _verdict(**changes):
    from mhanw.infra.verdicts import HOLDS, Verdict

    return Verdict(**{**dict(claim="a/b", statement="s", verdict=HOLDS, criterion="c"), **changes})


@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf, "0.1", True])
def test_detectable_must_be_a_size(value):
    with pytest.raises(ValueError, match="^detectable: "):
        _verdict(detectable=value)


@pytest.mark.parametrize("field", ["conditions", "chapter", "section"])
def test_verdict_text_fields_are_strings(field):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        _verdict(**{field: None})


@pytest.mark.parametrize(
    "record,what",
    [
        ({"claim": "a/b"}, "has no statement, verdict, criterion"),
        (
            {"claim": "a/b", "statement": "s", "verdict": "holds", "criterion": "c", "statistics": [{"value": 1.0}]},
            r"statistics\[0\]",
        ),
        (
            {
                "claim": "a/b",
                "statement": "s",
                "verdict": "holds",
                "criterion": "c",
                "statistics": [{"name": "x", "value": None}],
            },
            "value",
        ),
        ({"claim": "a/b", "statement": "s", "verdict": "holds", "criterion": "c", "statistics": "x"}, "statistics"),
        ([1, 2], "mapping"),
    ],
)
def test_from_dict_names_what_is_wrong(record, what):
    from mhanw.infra.verdicts import Verdict

    with pytest.raises(ValueError, match=rf"^d: .*{what}"):
        Verdict.from_dict(record)


def test_load_records_names_the_file_and_record(tmp_path):
    from mhanw.infra.verdicts import load_records

    good = _verdict().to_dict()
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([good, {"claim": "c/d"}]))
    with pytest.raises(ValueError, match=r"^path: .*claims.json, record 1: d: "):
        load_records(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"^path: .*not valid JSON"):
        load_records(path)
    path.write_text(json.dumps([good]))
    assert load_records(path)[0] == _verdict()


@pytest.mark.parametrize(
    "args,name",
    [
        (("1", 0.1, 0.5), "effect"),
        ((True, 0.1, 0.5), "effect"),
        ((0.1, "0.1", 0.5), "se"),
        ((0.1, np.bool_(True), 0.5), "se"),
        ((0.1, 0.1, None), "tolerance"),
        ((np.array([0.1, 0.2]), 0.1, 0.5), "effect"),
    ],
)
def test_no_violation_rejects_strings_and_bools(args, name):
    from mhanw.infra.verdicts import no_violation

    with pytest.raises(ValueError, match=rf"^{name}: "):
        no_violation(*args)


def test_no_violation_accepts_numpy_scalars_and_0d_arrays():
    from mhanw.infra.verdicts import no_violation

    assert no_violation(np.float64(0.01), np.array(0.01), 0.5) == no_violation(0.01, 0.01, 0.5)


@pytest.mark.parametrize("sign", [True, 1.0 + 0j, 0, 2])
def test_significant_effect_sign_is_plus_or_minus_one(sign):
    from mhanw.infra.verdicts import significant_effect

    with pytest.raises(ValueError, match="^sign: "):
        significant_effect(1.0, 0.1, sign=sign)


def test_combine_and_within_tolerance():
    from mhanw.infra.verdicts import FAILS, HOLDS, UNDECIDED, combine, within_tolerance

    assert combine([HOLDS, HOLDS]) == HOLDS and combine([HOLDS, UNDECIDED]) == UNDECIDED
    assert combine([UNDECIDED, FAILS]) == FAILS
    with pytest.raises(ValueError, match="^verdicts: "):
        combine([])
    with pytest.raises(ValueError, match="^verdicts: "):
        combine(["ok"])
    assert within_tolerance(1e-15, 1e-12) == (HOLDS, 1e-12) and within_tolerance(1e-3, 1e-12) == (FAILS, None)
    with pytest.raises(ValueError, match="^error: "):
        within_tolerance(math.nan, 1e-12)


def test_checked_rejects_a_check_of_an_unknown_argument():
    from mhanw.infra.verdicts import checked, number

    with pytest.raises(TypeError, match="^checks: "):

        @checked(y=number)
        def rule(x):
            return x


# --------------------------------------------------------------------------- prose


@pytest.mark.parametrize("values", [[1.5, 2.7], ["1", "2"], [True, 2], "12", 3, [math.nan], [None]])
def test_ranges_rejects_non_integers(values):
    from mhanw.infra import prose

    with pytest.raises(ValueError, match="^values: "):
        prose.ranges(values)


def test_ranges_accepts_integral_numbers():
    from mhanw.infra import prose

    assert prose.ranges([np.int64(3), 1.0, 2, 5]) == "1-3, 5"


@pytest.mark.parametrize("items", ["abc", b"ab", 3, None])
def test_join_list_needs_a_list(items):
    from mhanw.infra import prose

    with pytest.raises(ValueError, match="^items: "):
        prose.join_list(items)


@pytest.mark.parametrize("noun", [3, None, ["layers"]])
def test_count_of_noun_is_text(noun):
    from mhanw.infra import prose

    with pytest.raises(ValueError, match="^noun: "):
        prose.count_of(1, 2, noun)


def test_group_by_verdict_needs_pairs():
    from mhanw.infra import prose

    with pytest.raises(ValueError, match="^pairs: "):
        prose.group_by_verdict(["ab"])
    with pytest.raises(ValueError, match="^pairs: "):
        prose.group_by_verdict("ab")


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize(
    "args,name",
    [
        ((1.0, math.inf), "se"),
        ((1.0, -0.1), "se"),
        ((math.inf, 0.1), "mean"),
        (("1", 0.1), "mean"),
        ((1.0, None), "se"),
        ((1.0, 0.1, 0), "digits"),
        ((1.0, 0.1, 2.0), "digits"),
        ((1.0, 0.1, True), "digits"),
        ((True, 0.1), "mean"),
    ],
)
def test_pm_rejects_bad_numbers(args, name):
    from mhanw.infra import tables

    with pytest.raises(ValueError, match=rf"^{name}: "):
        tables.pm(*args)


def test_pm_keeps_missing_and_exact_values():
    from mhanw.infra import tables

    assert tables.pm(math.nan, 0.1) == "–"
    assert tables.pm(1.5, math.nan) == "1.5 ± –" and tables.pm(1.5, 0.0) == "1.5 ± 0"
    assert tables.pm(0.51316, 0.0039) == "0.5132 ± 0.0039"


@pytest.mark.parametrize("max_rows", [0, 2, -1, 3.5, True, None])
def test_show_checks_max_rows(max_rows):
    from mhanw.infra import tables

    with pytest.raises(ValueError, match="^max_rows: "):
        tables.show([{"a": i} for i in range(20)], max_rows=max_rows)


def test_show_checks_its_se_mapping():
    from mhanw.infra import tables

    with pytest.raises(ValueError, match="^se: expected a dict"):
        tables.show([{"a": 1.0, "b": 0.1}], se=["a"])
    with pytest.raises(ValueError, match=r"^se: row 0, columns 'a' and 'b': se: "):
        tables.show([{"a": 1.0, "b": -0.1}], se={"a": "b"})
    t = tables.show([{"a": 1.0, "b": 0.1}, {"c": 2}], se={"a": "b"})
    assert t.rows[1][0] == "" and t.rows[0][0] == "1.00 ± 0.10"


def test_table_rows_must_match_the_columns():
    from mhanw.infra import tables

    with pytest.raises(ValueError, match="^rows: row 0 has 2 cells, expected 1"):
        tables.Table(["a"], [["1", "2"]])
    with pytest.raises(ValueError, match="^rows: row 1 has 1 cells"):
        tables.Table(["a", "b"], [["1", "2"], ["3"]])
    with pytest.raises(ValueError, match="^columns: "):
        tables.Table("ab", [["1", "2"]])


# --------------------------------------------------------------------------- writers


@pytest.mark.parametrize("path", [None, 3, ""])
def test_writers_name_a_bad_path(path, tmp_path):
    with pytest.raises(ValueError, match="^path: "):
        results.save_results(path, {"a": 1})
    with pytest.raises(ValueError, match="^macros_path: "):
        results.write("01", {"x": results.Q(1.0)}, [], macros_path=path, results_path=tmp_path / "r.json")
    assert not list(tmp_path.iterdir())


def test_save_results_to_a_directory_leaves_nothing(tmp_path):
    target = tmp_path / "r.json"
    target.mkdir()
    with pytest.raises(ValueError, match=r"^path: "):  # was a bare OSError about the temporary file
        results.save_results(target, {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"] and target.is_dir()


def test_save_results_failing_midway_keeps_the_previous_file(tmp_path):
    path = results.save_results(tmp_path / "r.json", {"a": 1})
    with pytest.raises(ValueError):
        results.save_results(path, {"a": math.nan})
    assert json.loads(path.read_text()) == {"a": 1} and [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize("fig,name", [(None, "fig"), ("figure", "fig")])
def test_figures_save_names_a_non_figure(tmp_path, fig, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        figures.save(fig, "01_test", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_figures_save_to_an_unwritable_folder_leaves_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="^figures_dir: cannot make the folder .*Not a directory"):
        figures.save(_figure(), "01_test", blocker / "sub")  # was a raw FileExistsError / NotADirectoryError
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
    with pytest.raises(ValueError, match="^figures_dir: "):
        figures.save(_figure(), "01_test", None)


@pytest.mark.parametrize("ncols", [0, -1, 1.5, None])
def test_panels_checks_ncols(ncols):
    with pytest.raises(ValueError, match="^ncols: "):
        figures.panels(ncols)


def test_by_fidelity_checks_its_settings():
    from mhanw.infra.notebook import by_fidelity

    with pytest.raises(ValueError, match="^quick: "):
        by_fidelity("quick", quick=["n"], paper={"n": 1})


def test_no_violation_record_and_records():
    from mhanw.infra.verdicts import FAILS, HOLDS, Statistic, no_violation_record, records

    fields = dict(claim="a/b", statement="s", criterion="c")
    held = no_violation_record(Statistic("d", 0.01, 0.01), 0.1, **fields)
    assert held.verdict == HOLDS and held.detectable == pytest.approx(0.03)
    failed = no_violation_record(Statistic("d", 0.5, 0.01), 0.1, extra=(Statistic("n", 3),), **fields)
    assert (
        failed.verdict == FAILS
        and failed.detectable == pytest.approx(0.03)
        and failed.tolerance == 0.1
        and len(failed.statistics) == 2
    )
    with pytest.raises(ValueError, match="^effect: "):
        no_violation_record(0.5, 0.1, **fields)
    with pytest.raises(ValueError, match="^tolerance: "):
        no_violation_record(Statistic("d", 0.5, 0.01), math.nan, **fields)
    assert records((held, failed), "parts") == [held, failed]
    for bad in ([], "ab", [held, "x"], None):
        with pytest.raises(ValueError, match="^parts: "):
            records(bad, "parts")


def test_sweep_settings_and_formulas_and_fmt_digits():
    from mhanw.infra import tables

    with pytest.raises(ValueError, match="^settings: "):
        sweep.run_sweep(lambda s, rng: 1.0, "ab", 2, 1)
    with pytest.raises(ValueError, match="^expression: "):
        texout.latex_of("x", "expression")
    for digits in (0, "a", 2.5, True):
        with pytest.raises(ValueError, match="^digits: "):
            tables.fmt(1.5, digits)


# --- found by the second independent sweep -------------------------------------------------------


def _fast(call, seconds=2.0):
    import time

    start = time.perf_counter()
    try:
        call()
    finally:
        assert time.perf_counter() - start < seconds


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: sweep.spawn_streams(0, 10**12), "n_rep"),  # spawned 10**12 streams: hung
        (lambda: sweep.run_replicates(lambda g: 0.0, 10**12, 0), "n_rep"),
        (lambda: sweep.run_sweep(lambda s, g: 0.0, [1], 10**12, 0), "n_rep"),
        (lambda: sweep.run_replicates(lambda g: 0.0, 3, 0, n_jobs=10**12), "n_jobs"),  # bare OverflowError
        (lambda: figures.panels(10**12), "ncols"),  # MemoryError
    ],
)
def test_huge_sizes_are_refused_at_once_naming_the_argument(call, arg):
    with pytest.raises(ValueError, match=rf"^{arg}: expected an integer <= "):
        _fast(call)


@pytest.mark.parametrize("write", [lambda p: texout.write_atomic(p, "x"), lambda p: results.save_results(p, {"a": 1})])
def test_writing_onto_a_directory_names_path(tmp_path, write):
    # os.replace failed with a bare OSError about the temporary file
    with pytest.raises(ValueError, match=r"^path: expected a file path, got the directory"):
        write(tmp_path)
    assert list(tmp_path.iterdir()) == []  # no temporary left behind


@pytest.mark.parametrize("bad", [None, 3, "abc", {"a": 1}, b"ab"])
def test_validate_sequence_names_the_argument(bad):
    with pytest.raises(ValueError, match=r"^widths: expected a sequence of numbers"):
        validate.sequence(bad, "widths", "numbers")
    assert validate.sequence([1, 2], "widths") == (1, 2)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null"])
def test_load_results_of_a_damaged_file_names_path_and_file(tmp_path, text):
    # was a bare JSONDecodeError naming neither (or a list returned as if it were results)
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"^path: .*r\.json.* results file"):
        results.load_results(path)


@pytest.mark.parametrize("bad", [None, 3])
def test_load_results_names_a_path_that_is_not_one(bad):
    with pytest.raises(ValueError, match=r"^path: expected a file path"):
        results.load_results(bad)


@pytest.mark.parametrize("value", ["²", "١٢", "𝟚", "9" * 5000, "0", "-1", "1e3", "abc", "2000"])
def test_worker_cap_takes_ascii_digits_only_and_names_the_variable(value, monkeypatch):
    """``str.isdigit`` accepts superscripts and other scripts' digits; the cap reads 0-9 only."""
    from mhanw.infra import sweep

    monkeypatch.setenv(sweep.WORKERS_ENV, value)
    with pytest.raises(ValueError, match=rf"^{sweep.WORKERS_ENV}: expected a whole number") as exc:
        sweep._worker_cap()
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize("value", ["abc", "nan", "-5", "inf", "0", "1e9"])
def test_progress_interval_is_a_finite_number_of_seconds(value, monkeypatch):
    from mhanw.infra import sweep

    monkeypatch.setenv(sweep.PROGRESS_INTERVAL_ENV, value)
    with pytest.raises(ValueError, match=rf"^{sweep.PROGRESS_INTERVAL_ENV}: expected seconds"):
        sweep._progress_interval()


@pytest.mark.parametrize("seed", ["²", "١٢", "-1", "x", "9" * 30, ""])
def test_a_seed_run_takes_ascii_digits_only(seed):
    from mhanw.pipeline import scenarios

    with pytest.raises(scenarios.ScenarioError, match=r"^seed: expected a whole number"):
        scenarios.seed_params(seed, Path("."))


def test_an_integer_beyond_python_s_digit_limit_is_shown_by_its_size():
    """``brief`` shows 10**5000 by its number of digits (``str`` refuses integers of more than 4300)."""
    from mhanw.infra.validate import brief

    assert brief(10**5000) == "an integer of 5001 digits"
    assert brief(-(10**4299)) == "an integer of 4300 digits"


def test_an_integer_of_millions_of_digits_is_described_at_once():
    """``brief`` of 2**(10**8) (30 million digits) returns in well under a second: the digits are counted
    from the bit length, not from a power of ten as large as the integer."""
    import time

    from mhanw.infra.validate import brief, digit_count

    started = time.perf_counter()
    assert brief(1 << 10**8) == "an integer of 30103000 digits"
    assert time.perf_counter() - started < 2.0
    assert (
        digit_count(10**29999) == 30000 and digit_count(10**29999 - 1) == 29999
    )  # exact below the cut (a million digits)


def test_writers_and_formatters_name_what_they_cannot_take(tmp_path):
    """A sweep's raw exceptions: a lone surrogate in a file's text (UnicodeEncodeError), an s.e. of NaN
    or inf and digits = 0 in se_place (an unnamed ValueError, an OverflowError, silently taken), an
    integer beyond a double as an error-bar size (OverflowError)."""
    from mhanw.infra import texout

    with pytest.raises(ValueError, match="^text: not writable as UTF-8"):
        texout.write_atomic(tmp_path / "a.txt", "a\udcff")
    assert not list(tmp_path.iterdir())
    for args, name in [
        ((1.0, float("nan"), 2), "se"),
        ((1.0, float("inf"), 2), "se"),
        ((1.0, 0.1, 0), "digits"),
        ((1.0, -0.1, 2), "se"),
        ((float("nan"), 0.1, 2), "mean"),
        ((1.0, 0.1, True), "digits"),
    ]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            texout.se_place(*args)
    with pytest.raises(ValueError, match="^se: "):
        figures.half_width(10**400)
