"""Tests of mhanw.infra.params: a chapter's papermill parameters checked with one-line errors."""

from __future__ import annotations

import math

import pytest

from mhanw.infra import params as P
from mhanw.infra.params import ParameterError, check_parameters

SPEC = {
    **P.STANDARD,
    "n": P.positive_int(),
    "d": P.positive_int(),
    "d_k": P.positive_int(at_most="d"),
    "H": P.positive_int(),
    "budget": P.positive_int(),
    "bandwidth": P.positive_float(),
    "sigma": P.nonnegative_float(),
    "alpha": P.probability(),
    "rule": P.choice("average", "sum"),
    "regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "weights": P.optional(P.weights(length="H", sum_to_one=lambda p: p["rule"] == "average")),
    "n_values": P.sequence(P.positive_int(2)),
}
CONSTRAINTS = (
    P.product_at_most(("H", "d_k"), "d"),
    P.divides("d_k", "budget"),
    P.require("n", lambda p: p["n"] >= 10 * p["H"], "n >= 10*H"),
)


def good(**changes):
    ns = dict(
        fidelity="quick",
        seed=1,
        figures_dir="../figures",
        macros_path="m.tex",
        results_path="r.json",
        n=500,
        d=8,
        d_k=2,
        H=4,
        budget=8,
        bandwidth=0.5,
        sigma=0.5,
        alpha=0.05,
        rule="average",
        regression="sin13",
        inputs="gaussian",
        noise="gaussian",
        weights=[0.25] * 4,
        n_values=[100, 1000],
    )
    ns.update(changes)
    return ns


def test_good_parameters_come_back_checked():
    p = check_parameters(good(), SPEC, CONSTRAINTS)
    assert p.d == 8 and p["weights"] == (0.25,) * 4 and p.n_values == (100, 1000)
    assert isinstance(p.sigma, float)
    with pytest.raises(AttributeError):
        p.d = 3
    # modules, functions, classes, private names are not parameters
    import numpy

    ns = good(np=numpy, f=lambda: 1, C=int, _hidden=3, In=[], Out={})
    check_parameters(ns, SPEC, CONSTRAINTS)
    assert check_parameters(good(weights=None), SPEC, CONSTRAINTS).weights is None


def message(ns, spec=SPEC, constraints=CONSTRAINTS, **kw):
    with pytest.raises(ParameterError) as info:
        check_parameters(ns, spec, constraints, **kw)
    text = str(info.value)
    assert "\n" not in text and isinstance(info.value, ValueError)
    return text


def test_unknown_and_misspelt_names():
    assert message(good(fidelty="quick")) == "fidelty: unknown parameter (did you mean 'fidelity'?)"
    assert message(good(bandwith=0.4)).startswith("bandwith: unknown parameter (did you mean 'bandwidth'?)")
    assert message(good(zzz=1)).startswith("zzz: unknown parameter (known: fidelity, seed")
    check_parameters(good(zzz=1), SPEC, CONSTRAINTS, ignore=("zzz",))


def test_injected_cell_decides_unknown_names_in_ipython():
    injected = '# Parameters\nfidelty = "quick"\nseed = 3\n'
    ns = good(In=["", 'fidelity = "paper"', injected], fidelty="quick", SOME_CONSTANT=3.0)
    assert message(ns) == "fidelty: unknown parameter (did you mean 'fidelity'?)"
    # names not injected by papermill (a constant imported before the call) are not parameters there
    ns = good(In=["", injected.replace("fidelty", "fidelity")], SOME_CONSTANT=3.0)
    check_parameters(ns, SPEC, CONSTRAINTS)
    assert P.injected_names({"In": ["x = 1"]}) is None and P.injected_names({}) is None


def test_missing_declared_parameter():
    ns = good()
    del ns["sigma"]
    assert message(ns) == "sigma: declared by the chapter but missing from its parameters cell"


# One bad value each: the message starts with the parameter's name (and an index for a list entry).
@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("fidelity", "fast", "expected one of 'quick', 'paper', got 'fast'"),
        ("fidelity", "papr", "expected one of 'quick', 'paper', got 'papr' (did you mean 'paper'?)"),
        ("seed", None, "expected an explicit non-negative integer, got None"),
        ("seed", -1, "expected an integer >= 0"),
        ("seed", 1.5, "expected an integer >= 0"),
        ("macros_path", "", "expected a non-empty path"),
        ("n", 0, "expected an integer >= 1"),
        ("n", True, "expected an integer >= 1"),
        ("n", 500.0, "expected an integer >= 1"),
        ("bandwidth", 0, "expected a real number in (0, inf)"),
        ("bandwidth", math.inf, "expected a real number in (0, inf) (finite)"),
        ("sigma", -0.1, "expected a real number in [0, inf)"),
        ("alpha", 1.5, "expected a real number in [0, 1]"),
        ("rule", "avg", "expected one of 'average', 'sum'"),
        ("regression", "sine", "expected one of 'zero'"),
        ("regression", "__import__('os')", "unknown name '__import__'"),
        ("regression", "x1**1000", "the exponent 1000"),
        ("regression", "x0", "unknown name 'x0'"),
        ("regression", "x9", "'x9' needs d >= 9, got d = 8"),
        ("inputs", "student-t:2", "NU of 'student-t' must exceed 2"),
        ("inputs", "gaussian-equicorrelated:-0.2", "RHO of 'gaussian-equicorrelated' must exceed -1/(d-1)"),
        ("inputs", "gaussian-diagonal:0.1", "COND"),
        ("inputs", "cube", "unknown kind 'cube'"),
        ("noise", "student-t:1", "NU of 'student-t' must exceed 2"),
        ("noise", "heteroscedastic:1 + x9**2", "'heteroscedastic:1 + x9**2' needs d >= 9, got d = 8"),
        ("noise", "heteroscedastic:-1", "the level multiplier '-1' must be positive"),
        ("weights", [0.5, 0.5], "expected H = 4 entries, got 2"),
        ("weights", [0.5, 0.5, 0.5, 0.5], "expected weights summing to 1, got sum 2"),
        ("weights", [-0.5, 0.5, 0.5, 0.5], "[0]: expected a real number in [0, inf)"),
        ("weights", "uniform", "expected a list of"),
        ("n_values", [1, 100], "[0]: expected an integer >= 2"),
        ("n_values", [], "expected at least 1 entries"),
        ("d_k", 16, "expected d_k <= d = 8, got 16"),
        ("n", 20, "expected n >= 10*H (got n = 20, H = 4)"),
    ],
)
def test_bad_values(name, value, expected):
    assert message(good(**{name: value})).startswith(name + (expected if expected.startswith("[") else ": " + expected))


# Values checked against each other: the message names the first parameter of the constraint.
@pytest.mark.parametrize(
    "changes, start",
    [
        (dict(regression="bvc", d=3, d_k=1, H=3, budget=3), "regression: 'bvc' needs d >= 4, got d = 3"),
        (dict(H=8, weights=None), "H: expected H*d_k <= d = 8, got 8 * 2 = 16"),
        (dict(d_k=3, budget=8, H=2, weights=None), "d_k: expected a divisor of budget = 8, got 3"),
    ],
)
def test_bad_values_and_combinations(changes, start):
    assert message(good(**changes)).startswith(start)


def test_weights_need_not_sum_to_one_for_the_sum_rule():
    check_parameters(good(rule="sum", weights=[1.0] * 4), SPEC, CONSTRAINTS)


def test_exact_budget_constraint():
    spec = {"H": P.positive_int(), "d_k": P.positive_int(), "budget": P.positive_int()}
    rule = (P.product_at_most(("H", "d_k"), "budget", equal=True),)
    check_parameters({"H": 4, "d_k": 2, "budget": 8}, spec, rule)
    assert message({"H": 3, "d_k": 2, "budget": 8}, spec, rule) == "H: expected H*d_k = budget = 8, got 3 * 2 = 6"


def test_spec_must_hold_kinds():
    with pytest.raises(TypeError, match="^spec: "):
        check_parameters({}, {"n": int})


def test_papermill_run_with_a_misspelt_parameter_fails_with_one_line(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    papermill = pytest.importorskip("papermill")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('fidelity = "paper"\nseed = 1', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "from mhanw.infra import params as P\n"
            "params = P.check_parameters(globals(), {'fidelity': P.fidelity(), 'seed': P.seed()})"
        ),
        nbformat.v4.new_code_cell("print('ran', params.fidelity)"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out = tmp_path / "tiny.ipynb", tmp_path / "tiny_out.ipynb"
    nbformat.write(nb, src)
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(src),
            str(out),
            parameters={"fidelty": "quick"},
            kernel_name="python3",
            progress_bar=False,
            log_output=False,
        )
    assert info.value.ename == "ParameterError"
    assert info.value.evalue == "fidelty: unknown parameter (did you mean 'fidelity'?)"
    # with the right name the same notebook runs through
    papermill.execute_notebook(
        str(src),
        str(out),
        parameters={"fidelity": "quick"},
        kernel_name="python3",
        progress_bar=False,
        log_output=False,
    )
    ran = nbformat.read(out, as_version=4)
    assert "ran quick" in ran.cells[-1].outputs[0]["text"]
