"""Tests of mhanw.chapters.ch07_structured_weighting: Thm 7.1 with real Nadaraya-Watson heads.

The out-of-sample evaluation :func:`~mhanw.chapters.ch07_structured_weighting.nested_errors`
on graded heads (:func:`mhanw.heads.graded_heads`, :func:`mhanw.montecarlo.error_moments`):
exactness on the model, the documented loss to the best single head and the
homogeneous control, at reduced sizes (150 fitting + 150 evaluation replicates).
The exact model checks are in ``test_weighting.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from mhanw import heads, montecarlo
from mhanw import weighting as w
from mhanw.chapters import ch07_structured_weighting as ch07

ANGLES = np.radians([0, 20, 35, 50, 65, 80])
SIZES = dict(n=500, n_test=200, sigma=0.5, bandwidth=0.3)

# --------------------------------------------------------------------------- nested_errors


def test_nested_errors_exact_on_the_model():
    """With M_eval = M_fit = the model matrix, errors are the exact quadratic forms."""
    M = w.graded_error_matrix(6, 50.0, 0.3)
    res = ch07.nested_errors(M, M)
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
    ref = ch07.nested_errors(M, reps)
    res = ch07.nested_errors(Mp, reps[:, perm][:, :, perm])
    np.testing.assert_array_equal(perm[res.order], np.arange(5))  # best first, in the original labels
    np.testing.assert_allclose(res.errors, ref.errors, rtol=1e-12)
    # the evaluation matrices never decide the order: reversing their quality changes nothing but the errors
    rev = ch07.nested_errors(M, reps[:, ::-1][:, :, ::-1])
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
        ch07.nested_errors(M, np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="^M_fit:"):
        ch07.nested_errors(np.ones((4, 3)), M)
    with pytest.raises(ValueError, match="^schemes:"):
        ch07.nested_errors(M, M, schemes=("uniform", "harmonic"))
    with pytest.raises(ValueError, match="^schemes:"):
        ch07.nested_errors(M, M, schemes=("uniform", "uniform"))
    with pytest.raises(ValueError, match="^q:"):
        ch07.nested_errors(M, M, q=1.0)
    res = ch07.nested_errors(M, M, schemes="uniform")
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
    return ch07.nested_errors(fit.mean(axis=0), ev)


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
    res = ch07.nested_errors(fit.mean(axis=0), ev)
    for scheme in ("geometric", "fibonacci"):
        diff, se = res.paired_difference(scheme, "uniform")
        assert diff > 3 * se, scheme


# --------------------------------------------------------------------------- the crossover, symbolically


import sympy as sp  # noqa: E402

from mhanw.infra import verdicts as V  # noqa: E402
from mhanw.infra.params import ParameterError, check_parameters  # noqa: E402
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Statistic, Verdict, VerdictGuardError, guard  # noqa: E402,F401


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


# --------------------------------------------------------------------------- verdict rules (synthetic statistics)


@pytest.mark.parametrize("diff, words", [(-0.31, "lower"), (0.31, "higher"), (0.29, "not distinguishable at 3 s.e.")])
def test_compare_words(diff, words):
    assert ch07.compare_words(diff, 0.1) == words


@pytest.mark.parametrize(
    "diff, predicted, verdict",
    [
        ((-0.31, 0.1), True, HOLDS_UNDER),
        ((-0.29, 0.1), True, UNDECIDED),
        ((0.31, 0.1), True, FAILS),
        ((0.31, 0.1), False, HOLDS_UNDER),
    ],
)
def test_graded_rule(diff, predicted, verdict):
    assert (
        ch07.graded_verdict("geometric", diff, predicted=predicted, gamma_hat=50, gamma_star_hat=1.2).verdict == verdict
    )


@pytest.mark.parametrize(
    "diffs, verdict",
    [
        ({"uniform": (0.31, 0.1), "geometric": (-1.0, 0.1)}, FAILS),
        ({"uniform": (-0.31, 0.1), "geometric": (-1.0, 0.1)}, HOLDS),
        ({"uniform": (-0.29, 0.1), "geometric": (-1.0, 0.1)}, UNDECIDED),
    ],
)
def test_best_single_head_rule(diffs, verdict):
    assert ch07.best_single_head_verdict(diffs).verdict == verdict


def test_adding_heads_and_control_rules():
    assert ch07.adding_heads_verdict({"uniform": [2], "geometric": [3]}, 5).verdict == FAILS
    assert ch07.adding_heads_verdict({"uniform": [2], "geometric": []}, 5).verdict == UNDECIDED
    assert ch07.control_verdict({"geometric": (0.31, 0.1)}).verdict == HOLDS
    assert ch07.control_verdict({"geometric": (0.29, 0.1)}).verdict == UNDECIDED
    assert ch07.control_verdict({"geometric": (-0.31, 0.1)}).verdict == FAILS


def test_crossover_and_theorem_rules():
    ok = ch07.crossover_verdict({"a": True}, [1.2, 4.0])
    assert ok.verdict == HOLDS
    assert ch07.crossover_verdict({"a": True}, [1.0, 4.0]).verdict == FAILS
    assert ch07.crossover_verdict({"a": False}, [1.2]).verdict == FAILS
    geo = ch07.graded_verdict("geometric", (-1.0, 0.1), predicted=True, gamma_hat=50, gamma_star_hat=1.2)
    ctl = ch07.control_verdict({"geometric": (1.0, 0.1)})
    assert ch07.theorem_verdict(ok, geo, ctl).verdict == HOLDS_UNDER
    bad = ch07.control_verdict({"geometric": (-1.0, 0.1)})
    assert ch07.theorem_verdict(ok, geo, bad).verdict == FAILS


def test_the_chapters_guard_stops_on_a_flipped_direction():
    """The chapter's guard on 'gamma* grows with H and falls with rho': fed a grid where it falls with H, it stops."""
    import pandas as pd

    model = ch07.error_model()
    ch07.check_sentences(model)  # the true directions pass
    with pytest.raises(VerdictGuardError, match="the text says gamma\\* grows with H"):
        ch07.check_sentences({**model, "grows_with_H": False})
    with pytest.raises(VerdictGuardError, match="the text says every crossover exceeds 1"):
        ch07.check_sentences({**model, "gamma_star": pd.DataFrame({"x": [0.9, 2.0]})})
    with pytest.raises(VerdictGuardError, match="the text says at gamma = 1 uniform weights"):
        ch07.check_sentences({**model, "uniform_wins_at_one": False})


def test_the_control_is_outside_its_conditions_when_its_heads_are_not_exchangeable():
    """Under inputs with unequal variances (or noise that depends on x_1) the control's heads are not
    exchangeable: its record is "outside its conditions", keeps what its numbers show and names the premise;
    the theorem is then undecided, not failed; the figure's title and the paper's macros say so."""
    from mhanw import data, heads

    W = heads.orthogonal_heads(8, 1, 6)
    for inputs, noise in (("gaussian-diagonal:4", "gaussian"), ("gaussian", "heteroscedastic:1 + 0.5*abs(x1)")):
        prem = ch07.control_premises(W, data.data_model("iso_exp", inputs=inputs, noise=noise, sigma=0.5))
        assert not prem[0].holds and prem[0].id == "exchangeable-heads"
        assert ch07.control_label(prem) == "heads not exchangeable here"
        rec = ch07.control_verdict({"geometric": (-1.0, 0.1)}, premises=prem)
        assert rec.verdict == V.OUTSIDE and rec.shows == FAILS and rec.statistics and "below" in rec.finding
        assert "swapping heads 1 and 2" in V.findings_markdown([rec])
        ok = ch07.crossover_verdict({"a": True}, [1.2, 4.0])
        geo = ch07.graded_verdict("geometric", (-1.0, 0.1), predicted=True, gamma_hat=50, gamma_star_hat=1.2)
        thm = ch07.theorem_verdict(ok, geo, rec)
        assert thm.verdict == UNDECIDED and "lies outside its conditions" in thm.criterion
        assert "not exchangeable" in ch07.control_takeaway(rec) or "outside its conditions" in ch07.control_takeaway(
            rec
        )
    same = ch07.control_premises(W, data.data_model("iso_exp", inputs="gaussian-equicorrelated:0.5", sigma=0.5))
    assert same[0].holds and ch07.control_label(same) == "exchangeable heads"
    assert ch07.control_verdict({"geometric": (1.0, 0.1)}, premises=same).verdict == HOLDS


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
