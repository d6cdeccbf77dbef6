"""Tests of mhanw.chapters.ch03_covariance_bound (the decisions made in its steps on each side of their
thresholds, the paired statistics, premises, a guard of the chapter) and of the sympy derivation of kappa in mhanw.covariance."""

import numpy as np
import pytest
import sympy as sp

from mhanw import covariance
from mhanw.chapters import ch03_covariance_bound as ch03
from mhanw.infra.results import Q, Results
from mhanw.infra.verdicts import FAILS, HOLDS, UNDECIDED, VerdictGuardError, guard

ANGLES = [0, 45, 90]


def _rows(cov, se, bound):
    import pandas as pd

    return pd.DataFrame({"C (MC)": cov, "s.e.": se, "bound": bound})


def test_bound_rule_sides():
    se = [0.1, 0.1, 0.1]
    assert ch03._bound_decision(_rows([0.0, 0.0, 0.5], se, [1.0, 1.0, 0.0]), ANGLES)["verdict"] == FAILS
    assert ch03._bound_decision(_rows([0.0, 0.0, 0.0], se, [1.0, 1.0, 1.0]), ANGLES)["verdict"] == HOLDS
    assert ch03._bound_decision(_rows([0.0, 0.0, 0.99], se, [1.0, 1.0, 1.0]), ANGLES)["verdict"] == UNDECIDED
    # a zero standard error is an exact value: an excess above the bound fails, one below holds
    assert ch03._bound_decision(_rows([0.6], [0.0], [0.5]), [0])["verdict"] == FAILS
    assert ch03._bound_decision(_rows([0.4], [0.0], [0.5]), [0])["verdict"] == HOLDS


def _claim(claim_id):
    return next(c for c in ch03.CLAIMS if c.id == claim_id)


@pytest.mark.parametrize(
    "rho, verdict",
    [
        (ch03.NEAR_ZERO_CORRELATION + 0.1, FAILS),
        (ch03.NEAR_ZERO_CORRELATION - 0.04, HOLDS),
        (ch03.NEAR_ZERO_CORRELATION + 0.01, UNDECIDED),
    ],
)
def test_orthogonal_rule_sides(rho, verdict):
    tree = {"first_order": {"rho90": Q(rho, 0.01)}, "measured": {"premises": {"zero": ()}}}
    rec = _claim("lemma-4.1/orthogonal-near-zero").decide(Results(tree))
    assert rec.verdict == verdict and rec.statistics[0].value == rho


def test_falls_with_angle_rule_sides():
    se = np.array([0.1, 0.1, 0.1])

    def decide(steps, drop):
        return ch03._falls_decision({"steps": np.array(steps), "steps_se": se, "drop": drop, "drop_se": 0.1})["verdict"]

    assert decide([1.0, 1.0, 0.1], 2.0) == HOLDS
    assert decide([1.0, 1.0, -1.0], 2.0) == FAILS
    assert decide([0.1, 0.1, 0.1], 0.2) == UNDECIDED


def test_paired_statistics():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((4000, 3))
    near = np.stack([z[:, 0], z[:, 0] + 0.1 * z[:, 1]], axis=1)  # covariance 1
    far = np.stack([z[:, 0], 0.1 * z[:, 0] + z[:, 2]], axis=1)  # covariance 0.1
    out = ch03._steps(np.stack([near, far]))
    assert out["steps"][0] == pytest.approx(0.9, abs=0.1) and out["drop"] == pytest.approx(out["steps"][0])
    assert out["steps_se"][0] > 0
    dev, se = ch03._pooled_relative_deviation([near, far], [1.0, 0.1])
    assert abs(dev) < 4 * se + 0.05


def test_kernel_overlap_symbolic_matches_closed_form_and_numbers():
    ov = covariance.kernel_overlap_symbolic(input_variance=1, point=(0, 0))
    h, phi = ov.symbols["h"], ov.symbols["phi"]
    assert sp.simplify(ov.kappa - (1 + h**2) / sp.sqrt((1 + h**2) ** 2 - sp.cos(phi) ** 2)) == 0
    ov = covariance.kernel_overlap_symbolic(bandwidth=0.4, input_variance=2.25, point=(0.3, -0.5))
    val = float(ov.kappa.subs(ov.symbols["phi"], 0.7))
    u, v = np.array([[1.0], [0.0]]), np.array([[np.cos(0.7)], [np.sin(0.7)]])
    assert val == pytest.approx(
        covariance.kernel_overlap(1.5 * u, 1.5 * v, np.array([0.3, -0.5]) / 1.5, 0.4), rel=1e-12
    )
    with pytest.raises(ValueError, match="^bandwidth:"):
        covariance.kernel_overlap_symbolic(bandwidth=-1)
    with pytest.raises(ValueError, match="^point:"):
        covariance.kernel_overlap_symbolic(point=(1, 2, 3))


def test_the_chapters_positivity_guard_raises_on_a_zero_covariance():
    cov, se = np.array([1e-3, 1e-5]), np.array([1e-5, 1e-5])  # synthetic: the second angle is not positive
    with pytest.raises(VerdictGuardError, match="the text says"):
        guard(bool(np.all(cov > 3 * se)), "the covariance is positive at every angle for constant m", "z = 1")


def test_covariance_formulas_rest_on_independent_rows_and_the_bound_on_gaussian_inputs():
    from mhanw import data
    from mhanw.infra.verdicts import OUTSIDE

    iid, ar1 = data.data_model("zero"), data.data_model("zero", inputs="ar1:0.9")
    from mhanw import premises

    pooled = {"zero": Q(1.0, 0.5, unit="%"), "smooth": Q(-2.0, 0.6, unit="%")}
    decision = {
        "verdict": HOLDS,
        "criterion": "c",
        "statistics": tuple(pooled.values()),
        "tolerance": 10.0,
        "unit": "%",
        "detectable": 1.8,
    }

    def first_order(model):
        tree = {
            "first_order": {"decision": decision},
            "measured": {"premises": {"smooth_sample": (premises.iid_samples(model),)}},
        }
        return _claim("lemma-4.1/first-order").decide(Results(tree))

    assert first_order(iid).verdict == HOLDS
    rec = first_order(ar1)
    assert rec.verdict == OUTSIDE and rec.shows == HOLDS and rec.statistics[0].unit == "%"
    smooth_t = data.data_model("sin13", inputs="student-t:5")
    tree = {
        "measured": {
            "smooth": {
                "name": "sin13",
                "decision": ch03._bound_decision(_rows([0.5, 0.2], [0.01, 0.01], [0.1, 0.0]), [0, 90]),
            },
            "premises": {"smooth": (premises.gaussian_inputs(smooth_t), premises.iid_samples(smooth_t))},
        },
        "bound": {"lipschitz": Q(1.0)},
    }
    bound = _claim("lemma-4.1/printed-bound/smooth-m").decide(Results(tree))
    assert bound.verdict == OUTSIDE and bound.shows == FAILS and bound.statistics
    assert [p.id for p in bound.premises if not p.holds] == ["gaussian-inputs"]


@pytest.mark.parametrize(
    "regression, lipschitz, refused",
    [("sqrt(abs(x1))", None, True), ("x1^2", None, True), ("sqrt(abs(x1))", 10.0, False), ("sin(x1)", None, False)],
)
def test_a_regression_without_a_finite_lipschitz_constant_needs_one_given(tmp_path, regression, lipschitz, refused):
    """The printed bound is linear in L: sqrt(|x1|) ran on a sampled L of 284 (its gradient has no bound
    at 0) and x1^2 stopped the chapter on L = inf; both are refused at the check unless lipschitz is given."""
    from pathlib import Path

    from mhanw.pipeline import scenarios

    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "s.toml"
    extra = "" if lipschitz is None else f"lipschitz = {lipschitz}\n"
    path.write_text(f'[chapters.03_covariance_bound]\nregression = "{regression}"\n{extra}')
    if refused:
        with pytest.raises(scenarios.ScenarioError, match="regression: expected a regression with a finite Lipschitz"):
            scenarios.load(path, root)
    else:
        scenarios.load(path, root)
