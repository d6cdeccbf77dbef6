"""Tests of mhanw.chapters.ch07_structured_weighting (Thm 7.1) and of the theory it relies on.

The chapter: the decisions made in its steps and read by ``Decided`` (the error model's threshold, the graded
heads' prediction, adding heads, the theorem from its parts) flip on synthetic results; the control lies
outside its conditions when its heads are not exchangeable; the words of its prose and of the sentences after
its figures follow the numbers; the guard on the directions the text states stops on a flipped one; its
parameter schema names a bad parameter.  (Its records decided by ``All``/``Effect`` are flipped by
tests/test_chapter_contract.py.)  The theory: the out-of-sample evaluation
:func:`mhanw.weighting.nested_errors` (exact on the model; on graded heads, :func:`mhanw.heads.graded_heads`
and :func:`mhanw.montecarlo.error_moments`, at reduced sizes: 150 fitting + 150 evaluation replicates) and
the crossover derived in sympy.  The exact model checks are in ``test_weighting.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sympy as sp

from mhanw import data, heads, montecarlo
from mhanw import weighting as w
from mhanw.chapters import base
from mhanw.chapters import ch07_figures as figs
from mhanw.chapters import ch07_structured_weighting as ch07
from mhanw.infra import verdicts as V
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import Q, Raw, Results
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, VerdictGuardError

ANGLES = np.radians([0, 20, 35, 50, 65, 80])
SIZES = dict(n=500, n_test=200, sigma=0.5, bandwidth=0.3)

# --------------------------------------------------------------------------- nested_errors


def test_nested_errors_exact_on_the_model():
    """With M_eval = M_fit = the model matrix, errors are the exact quadratic forms."""
    M = w.graded_error_matrix(6, 50.0, 0.3)
    res = w.nested_errors(M, M)
    assert res.errors.shape == (5, 6, 1) and res.schemes == w.SCHEMES + w.ORACLES
    np.testing.assert_array_equal(res.order, np.arange(6))
    for k in range(1, 7):
        sub = M[:k, :k]
        for i, s in enumerate(res.schemes):
            a = res.weights[s][k - 1]
            assert a.shape == (k,) and abs(a.sum() - 1) <= 1e-12
            assert res.errors[i, k - 1, 0] == pytest.approx(w.mse(a, sub), rel=1e-13)
        aff = res.errors[res.schemes.index("affine"), k - 1, 0]
        assert aff == pytest.approx(1.0 / np.linalg.inv(sub).sum(), rel=1e-10)  # in sample the oracle is best
        assert np.all(res.errors[:, k - 1, 0] >= aff - 1e-12)
    np.testing.assert_allclose(res.errors[:, 0, 0], M[0, 0])  # one head: every weighting is that head
    np.testing.assert_allclose(res.weights["geometric"][-1], w.geometric_weights(6))


def test_nested_errors_order_comes_from_the_fitting_matrix():
    rng = np.random.default_rng(4)
    M = w.graded_error_matrix(5, 20.0, 0.5)
    perm = np.array([3, 0, 4, 1, 2])
    Mp = M[np.ix_(perm, perm)]
    reps = np.stack([M * s for s in rng.uniform(0.5, 1.5, 7)])
    ref = w.nested_errors(M, reps)
    res = w.nested_errors(Mp, reps[:, perm][:, :, perm])
    np.testing.assert_array_equal(perm[res.order], np.arange(5))  # best first, in the original labels
    np.testing.assert_allclose(res.errors, ref.errors, rtol=1e-12)
    # the evaluation matrices never decide the order: reversing their quality changes nothing but the errors
    rev = w.nested_errors(M, reps[:, ::-1][:, :, ::-1])
    np.testing.assert_array_equal(rev.order, np.arange(5))
    diff, se = ref.paired_difference("geometric", "uniform")
    assert diff == pytest.approx((ref.errors[1, -1] - ref.errors[0, -1]).mean()) and se >= 0
    assert ref.paired_difference("uniform", "uniform", k_b=1).mean == pytest.approx(
        (ref.errors[0, -1] - ref.errors[0, 0]).mean()
    )
    assert ref.mean.shape == ref.se.shape == (5, 5)


def test_nested_errors_bad_input():
    M = w.graded_error_matrix(4, 10.0, 0.2)
    with pytest.raises(ValueError, match="^M_eval:"):
        w.nested_errors(M, np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="^M_fit:"):
        w.nested_errors(np.ones((4, 3)), M)
    with pytest.raises(ValueError, match="^schemes:"):
        w.nested_errors(M, M, schemes=("uniform", "harmonic"))
    with pytest.raises(ValueError, match="^schemes:"):
        w.nested_errors(M, M, schemes=("uniform", "uniform"))
    with pytest.raises(ValueError, match="^q:"):
        w.nested_errors(M, M, q=1.0)
    res = w.nested_errors(M, M, schemes="uniform")
    with pytest.raises(ValueError, match="^k:"):
        res.paired_difference("uniform", "uniform", k=5)
    with pytest.raises(ValueError, match="^a:"):
        res.paired_difference("geometric", "uniform")
    with pytest.raises(ValueError, match="^scheme:"):
        w.fitted_weights("oracle", M)
    np.testing.assert_array_equal(w.quality_order(np.diag([3.0, 1.0, 2.0, 1.0])), [1, 3, 2, 0])


# --------------------------------------------------------------------------- real heads and the exchangeable control


@pytest.fixture(scope="module")
def graded_errors():
    W = heads.graded_heads(ANGLES, 8)
    fit = montecarlo.error_moments(W, "blind", n_rep=150, seed=71, n_jobs=2, **SIZES)
    ev = montecarlo.error_moments(W, "blind", n_rep=150, seed=72, n_jobs=2, **SIZES)
    return w.nested_errors(fit.mean(axis=0), ev)


@pytest.mark.statistical
def test_fixed_weights_lose_to_the_best_single_head(graded_errors):
    """Documented: uniform and geometric both exceed the best single head by > 3 paired s.e."""
    res = graded_errors
    np.testing.assert_array_equal(res.order, np.arange(6))  # quality falls with the angle
    for scheme in ("uniform", "geometric", "fibonacci"):
        diff, se = res.paired_difference(scheme, "uniform", k_b=1)
        assert diff > 3 * se, scheme
        # and adding a worse head raises the MSE of every fixed weighting (k >= 2; Fibonacci = uniform at k = 2)
        for k in range(2, 6):
            step, step_se = res.paired_difference(scheme, scheme, k=k + 1, k_b=k)
            assert step > 3 * step_se, (scheme, k)
    diff, se = res.paired_difference("geometric", "uniform")  # but geometric beats uniform
    assert -diff > 3 * se


@pytest.mark.statistical
def test_oracles_out_of_sample(graded_errors):
    """Expected for Thm 7.1: the affine oracle puts a weight above 1 on the best head; the simplex oracle collapses onto it."""
    res = graded_errors
    a = res.weights["affine"][-1]
    assert a[0] > 1 and np.all(a[1:] < 0.05)
    np.testing.assert_allclose(res.weights["simplex"][-1], np.eye(6)[0], atol=1e-12)
    diff, se = res.paired_difference("affine", "uniform", k_b=1)  # out of sample it beats the best head
    assert -diff > 3 * se


@pytest.mark.statistical
def test_uniform_wins_on_exchangeable_heads():
    W = heads.orthogonal_heads(8, 1, 6)
    fit = montecarlo.error_moments(W, "iso_exp", n_rep=150, seed=73, n_jobs=2, **SIZES)
    ev = montecarlo.error_moments(W, "iso_exp", n_rep=150, seed=74, n_jobs=2, **SIZES)
    res = w.nested_errors(fit.mean(axis=0), ev)
    for scheme in ("geometric", "fibonacci"):
        diff, se = res.paired_difference(scheme, "uniform")
        assert diff > 3 * se, scheme


# --------------------------------------------------------------------------- the crossover, symbolically


@pytest.mark.parametrize(
    "H, rho, scheme",
    [
        (2, 0.0, "geometric"),
        (4, 0.3, "fibonacci"),
        (8, 0.0, "geometric"),
        (8, 0.6, "geometric"),
        (16, 0.3, "fibonacci"),
    ],
)
def test_symbolic_threshold_equals_the_scan(H, rho, scheme):
    a = w.weights_expr(scheme, H)
    exact = w.symbolic_threshold(H, rho, a)
    scan = w.heterogeneity_threshold(H, rho, weights=np.array([float(x) for x in a]))
    assert exact == pytest.approx(scan, rel=1e-12)


def test_closed_form_at_two_heads():
    q, rho = sp.symbols("q rho", positive=True)
    g, r = w.crossover_gap(2, rho, w.weights_expr("geometric", 2, q))
    roots = [x for x in sp.solve(g, r) if x.subs({q: sp.Rational(1, 2), rho: 0}) > 0]
    assert len(roots) == 1
    gamma = roots[0] ** 2
    for qv, rv in ((0.5, 0.0), (w.GOLDEN_Q, 0.3), (0.8, 0.6)):
        assert float(gamma.subs({q: qv, rho: rv})) == pytest.approx(w.heterogeneity_threshold(2, rv, q=qv), rel=1e-12)


def test_symbolic_threshold_bad_input():
    with pytest.raises(ValueError, match="^weights: "):
        w.symbolic_threshold(4, 0.0, w.weights_expr("uniform", 4))
    with pytest.raises(ValueError, match="^gamma_max: "):  # largest weight on the worst head: no crossover
        w.symbolic_threshold(4, 0.0, list(reversed(w.weights_expr("geometric", 4))))
    with pytest.raises(ValueError, match="^weights: "):
        w.crossover_gap(4, 0.0, w.weights_expr("geometric", 3))
    with pytest.raises(ValueError, match="^scheme: "):
        w.weights_expr([0.5, 0.6], 2)


# --------------------------------------------------------------------------- the chapter's decisions


def _decide(claim_id: str, tree: dict):
    (record,) = ch07.records_on(Results(tree), (claim_id,))
    return record


#: The check of the run's own weights, as the criterion names it.
OWN = "the weights under test (H, rho, q, weights) have a crossover, its sympy root equal to the scan"


def _model(gap=1e-17, uniform_wins=True, grid=(1.2, 4.0)):
    return {
        "data": Raw({"gamma_star": pd.DataFrame({"geometric q=1/phi": list(grid)})}),
        "oracle_gap_at_one": Q(gap),
        "uniform_wins_at_one": uniform_wins,
    }


@pytest.mark.parametrize(
    "model, exact, scan, verdict, failed",
    [
        (_model(), 4.0, 4.0, HOLDS, None),
        (_model(gap=1e-9), 4.0, 4.0, FAILS, "uniform weights are the affine oracle at gamma = 1"),
        (_model(uniform_wins=False), 4.0, 4.0, FAILS, "every structured weighting loses at gamma = 1"),
        (_model(grid=(0.9, 4.0)), 4.0, 4.0, FAILS, None),  # a crossover at or below 1
        (_model(grid=(np.nan, 4.0)), 4.0, 4.0, FAILS, "a crossover exists on every grid point"),
        (_model(), 4.0, 4.1, FAILS, OWN),  # sympy's root and the scan disagree
        (_model(), np.nan, np.nan, FAILS, OWN),  # the run's weights have no crossover
    ],
)
def test_the_threshold_decision_flips(model, exact, scan, verdict, failed):
    record = _decide(
        "thm-7.1/error-model-threshold", {"symbolic": {"threshold": ch07._threshold_decision(model, exact, scan)}}
    )
    assert record.verdict == verdict
    assert record.statistics[0].value == pytest.approx(
        min(x for x in (*model["data"].value["gamma_star"].iloc[:, 0], scan) if x == x)
    )
    assert ("failed:" in record.criterion) == (failed is not None)
    if failed:
        assert record.criterion.endswith(f"failed: {failed}")


@pytest.mark.parametrize(
    "diff, predicted, verdict",
    [
        (Q(-0.31, 0.1), True, HOLDS_UNDER),
        (Q(-0.29, 0.1), True, UNDECIDED),
        (Q(0.31, 0.1), True, FAILS),
        (Q(0.31, 0.1), False, HOLDS_UNDER),
        (Q(-0.31, 0.1), False, FAILS),
    ],
)
def test_the_graded_heads_decision_follows_the_models_prediction(diff, predicted, verdict):
    star = 1.2 if predicted else 80.0
    diff = Q(diff.value, diff.se, label="MSE(fibonacci) - MSE(uniform)")  # as the step labels it
    decision = ch07._graded_decision("fibonacci", diff, 50.0, star)
    record = _decide("thm-7.1/graded-heads/fibonacci", {"graded": {"decisions": {"fibonacci": decision}}})
    assert record.verdict == verdict
    assert record.statement.startswith(
        f"With real NW heads of graded quality, Fibonacci weights {'beat' if predicted else 'lose to'}"
    )
    assert [s.name for s in record.statistics] == ["MSE(fibonacci) - MSE(uniform)", "z"]
    assert record.statistics[1].value == pytest.approx(diff.value / diff.se)
    if verdict == HOLDS_UNDER:
        assert f"gamma_hat = 50 {'above' if predicted else 'below'} the threshold" in record.conditions
    exact = ch07._graded_decision("geometric", Q(-0.31, 0.0), 50.0, 1.2)  # an exact difference has no z-score
    assert len(exact["statistics"]) == 1 and exact["verdict"] == HOLDS_UNDER


def test_the_adding_heads_decision():
    rising = {"uniform": [2], "geometric": [3, 4], "fibonacci": [1]}
    record = _decide(
        "thm-7.1/graded-heads/adding-heads",
        {"graded": {"decisions": {"adding_heads": ch07._adding_heads_decision(rising, 5)}}},
    )
    assert (
        record.verdict == FAILS and [s.value for s in record.statistics] == [1, 2, 1] and "(of 5)" in record.criterion
    )
    rising["fibonacci"] = []  # one weighting whose MSE never rose: no counterexample for it, and no proof either
    record = _decide(
        "thm-7.1/graded-heads/adding-heads",
        {"graded": {"decisions": {"adding_heads": ch07._adding_heads_decision(rising, 5)}}},
    )
    assert record.verdict == UNDECIDED


def _parts(model_ok=True, geo=(-1.0, 0.1), control=((1.0, 0.1), (1.0, 0.1)), premises=()):
    """The theorem's three records on synthetic results: the error model's threshold (its run's root off the
    scan unless ``model_ok``), the graded heads' difference ``geo`` and the control's two (value, s.e.)."""
    tree = {
        "symbolic": {"threshold": ch07._threshold_decision(_model(), 4.0, 4.0 if model_ok else 5.0)},
        "graded": {"decisions": {"geometric": ch07._graded_decision("geometric", Q(*geo), 50.0, 1.2)}},
        "control": {
            "geometric_minus_uniform": Q(*control[0]),
            "fibonacci_minus_uniform": Q(*control[1]),
            "premises": premises,
        },
    }
    return ch07.records_on(Results(tree), ch07.THEOREM_PARTS)


def _theorem(parts):
    """The theorem's decision read from its parts: a result of the chapter, not a record (an aggregate is
    never a record; the ledger computes a claim's headline from its records)."""
    from mhanw.infra.rules import Claim, Decided

    claim = Claim("thm-7.1", "the theorem as a whole", Decided("theorem.decision"), role="paper")
    return claim.decide(Results({"theorem": {"decision": ch07.theorem_decision(parts)}}))


def test_the_theorem_is_not_a_record():
    assert "thm-7.1" not in {c.id for c in ch07.CLAIMS}


def test_the_theorem_reads_its_three_parts():
    thm = _theorem(_parts())
    assert thm.verdict == HOLDS_UNDER and "gamma_hat = 50 above" in thm.conditions and "faster decay" in thm.conditions
    assert _theorem(_parts(model_ok=False)).verdict == FAILS
    assert _theorem(_parts(geo=(1.0, 0.1))).verdict == FAILS
    assert _theorem(_parts(control=((-1.0, 0.1), (1.0, 0.1)))).verdict == FAILS
    assert _theorem(_parts(control=((0.1, 0.1), (1.0, 0.1)))).verdict == UNDECIDED
    assert _theorem(_parts(geo=(-0.1, 0.1))).verdict == UNDECIDED


def test_the_control_is_outside_its_conditions_when_its_heads_are_not_exchangeable():
    """Under inputs with unequal variances (or noise that depends on x_1) the control's heads are not
    exchangeable: its record is "outside its conditions", keeps what its numbers show and names the premise;
    the theorem is then undecided, not failed; the figure's title and the sentence after it say so."""
    W = heads.orthogonal_heads(8, 1, 6)
    for inputs, noise in (("gaussian-diagonal:4", "gaussian"), ("gaussian", "heteroscedastic:1 + 0.5*abs(x1)")):
        prem = ch07.control_premises(W, data.data_model("iso_exp", inputs=inputs, noise=noise, sigma=0.5))
        assert not prem[0].holds and prem[0].id == "exchangeable-heads"
        assert ch07.control_label(prem) == "heads not exchangeable here"
        parts = _parts(control=((-1.0, 0.1), (-0.5, 0.1)), premises=prem)
        rec = parts[2]
        assert rec.verdict == V.OUTSIDE and rec.shows == FAILS and rec.statistics and "below" in rec.finding
        assert "geometric weights" in rec.finding  # the margin least favourable to uniform weights, in s.e.
        assert "swapping heads 1 and 2" in V.findings_markdown([rec])
        thm = _theorem(parts)
        assert thm.verdict == UNDECIDED and "lies outside its conditions" in thm.criterion
        control = {"geometric_minus_uniform": Q(-1.0, 0.1), "fibonacci_minus_uniform": Q(-0.5, 0.1), "premises": prem}
        assert "outside its conditions" in figs.control_takeaway(control)
        words = ch07.prose(_prose_results(premises=prem), [])["control_exchangeable"]
        assert words.startswith("these heads are not exchangeable under the run")
    same = ch07.control_premises(W, data.data_model("iso_exp", inputs="gaussian-equicorrelated:0.5", sigma=0.5))
    assert same[0].holds and ch07.control_label(same) == "exchangeable heads"
    assert _parts(premises=same)[2].verdict == HOLDS


# --------------------------------------------------------------------------- the words follow the numbers


def _prose_results(fib_geo=(0.5, 0.1), best=(1.0, 0.1), simplex=1.0, affine=(0.0, 0.1), predicted=True, premises=()):
    """Results with what the prose reads: (value, s.e.) of Fibonacci - geometric, uniform - best head and the
    control's affine - uniform, the simplex oracle's weight on the best head, the model's prediction."""
    return Results(
        {
            "graded": {
                "decisions": {"geometric": {"predicted": predicted}},
                "fibonacci_minus_geometric": Q(*fib_geo),
                "uniform_minus_best": Q(*best),
                "simplex_weight_best": Q(simplex),
            },
            "control": {"affine_minus_uniform": Q(*affine), "premises": premises},
        }
    )


def test_the_prose_follows_the_numbers():
    words = ch07.prose(_prose_results(), [])
    assert (words["geo_predicted"], words["hat_versus_star"]) == ("win", "above")
    assert words["fib_versus_geo"] == "higher" and words["oracle_versus_uniform"] == "not distinguishable at 3 s.e."
    assert words["poor_baseline"].startswith("And the gain is relative to a poor baseline")
    assert words["simplex_note"].startswith("the simplex oracle coincides with the best single head")
    assert words["control_exchangeable"].startswith("by symmetry")
    words = ch07.prose(_prose_results((-0.5, 0.1), (0.2, 0.1), 0.8, (-0.5, 0.1), predicted=False), [])
    assert (words["geo_predicted"], words["hat_versus_star"]) == ("lose", "below")
    assert words["fib_versus_geo"] == "lower" and words["oracle_versus_uniform"] == "lower"
    assert (
        words["poor_baseline"] == "That"
        and words["simplex_note"] == "the simplex oracle puts weight 0.8 on the best head"
    )


def test_the_sentence_after_the_graded_figure_follows_the_numbers():
    text = figs.graded_takeaway(
        {"n_heads": 6, "geometric_minus_uniform": Q(-1.0, 0.1), "uniform_minus_best": Q(0.1, 0.1)}
    )
    assert "geometric weights have an MSE lower than uniform ones" in text
    assert "uniform weights have an MSE not distinguishable at 3 s.e. from that of the best single head" in text


def test_the_guard_stops_on_a_flipped_direction():
    """The guard of the error model's step on the directions the text states: fed numbers where one is false, it stops."""
    ok = dict(falls_with_rho=True, grows_with_H=True, uniform_wins=True, gap=1e-17)
    ch07._guard_directions([1.2, 4.0], **ok)
    with pytest.raises(VerdictGuardError, match="the text says gamma\\* grows with H"):
        ch07._guard_directions([1.2, 4.0], **{**ok, "grows_with_H": False})
    with pytest.raises(VerdictGuardError, match="the text says every crossover exceeds 1"):
        ch07._guard_directions([0.9, 2.0], **ok)
    with pytest.raises(VerdictGuardError, match="the text says at gamma = 1 uniform weights"):
        ch07._guard_directions([1.2, 4.0], **{**ok, "uniform_wins": False})
    with pytest.raises(VerdictGuardError, match="the text says at gamma = 1 uniform weights"):
        ch07._guard_directions([1.2, 4.0], **{**ok, "gap": 1e-9})


# --------------------------------------------------------------------------- the exact steps, run


@pytest.fixture(scope="module")
def exact_steps():
    ctx = base.setup(ch07, render=False, **DEFAULTS)
    model = ch07.error_model(ctx)
    return ctx, model, ch07.symbolic(ctx, model)


def test_the_error_model_and_the_crossover_of_the_runs_weights(exact_steps):
    ctx, model, sym = exact_steps
    assert model["falls_with_rho"] and model["grows_with_H"] and model["uniform_wins_at_one"]
    table = model["data"].value["gamma_star"]
    assert model["gamma_star"]["H8"]["rho0"]["geometric"].value == table.loc[(8, 0.0), "geometric q=1/phi"]
    assert model["gamma_star"]["H8"]["rho0"]["geometric"].value == pytest.approx(
        w.heterogeneity_threshold(8, 0.0), rel=1e-12
    )
    assert sym["gamma_star"].value == pytest.approx(w.heterogeneity_threshold(8, 0.0), rel=1e-9)
    assert sym["threshold"]["verdict"] == HOLDS and sym["h2_check"] < 1e-12


def test_weights_favouring_the_worst_head_have_no_crossover(exact_steps):
    """The book's scenario (extend.md): the largest weight on the worst head never beats uniform weights; the
    threshold record fails for these weights and the paper prints "none"."""
    _, model, _ = exact_steps
    ctx = base.setup(ch07, render=False, **{**DEFAULTS, "weights": [0.1] * 7 + [0.3]})
    sym = ch07.symbolic(ctx, model)
    assert sym["gamma_star"] == "none" and "no crossover" in sym["no_crossover"]
    record = _decide("thm-7.1/error-model-threshold", {"symbolic": sym})
    assert record.verdict == FAILS and "failed: the weights under test" in record.criterion


DEFAULTS = dict(
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m",
    results_path="r",
    n_jobs=2,
    H=8,
    rho=0.0,
    q="(sqrt(5) - 1)/2",
    weights="geometric",
    regression="blind",
    control_regression="iso_exp",
    inputs="gaussian",
    noise="gaussian",
    sigma=0.5,
    n=500,
    bandwidth=0.3,
    angles_deg=[0, 20, 35, 50, 65, 80],
    d=8,
)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(q="2"), r"^q: "),
        (dict(q="__import__('os')"), r"^q: "),
        (dict(weights=[0.5, 0.5]), r"^weights: "),
        (dict(weights="harmonic"), r"^weights: "),
        (dict(angles_deg=list(range(0, 80, 10))), r"^angles_deg: "),
        (dict(rho=1.0), r"^rho: "),
        (dict(regression="x9"), r"^regression: "),
        (dict(H=1), r"^H: "),
    ],
)
def test_parameters_name_the_bad_one(change, message):
    assert check_parameters(DEFAULTS, ch07.PARAMETERS, ch07.CONSTRAINTS)["H"] == 8
    with pytest.raises(ParameterError, match=message):
        check_parameters({**DEFAULTS, **change}, ch07.PARAMETERS, ch07.CONSTRAINTS)
