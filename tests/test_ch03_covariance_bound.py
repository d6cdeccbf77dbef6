"""Tests of mhanw.chapters.ch03_covariance_bound (verdict rules on each side of their thresholds, the paired
statistics, a guard of the chapter) and of the sympy derivation of kappa in mhanw.covariance."""

import numpy as np
import pytest
import sympy as sp

from mhanw import covariance
from mhanw.chapters import ch03_covariance_bound as ch03
from mhanw.infra.verdicts import FAILS, HOLDS, NOT_CHECKABLE, UNDECIDED, VerdictGuardError, guard

ANGLES = [0, 45, 90]


def test_bound_rule_sides():
    se = np.full(3, 0.01)
    assert ch03.bound_verdict("lemma-4.1/x", "s", [0.0, 0.0, 0.5], se, [1.0, 1.0, 0.0], ANGLES).verdict == FAILS
    assert ch03.bound_verdict("lemma-4.1/x", "s", [0.0, 0.0, 0.0], se, [1.0, 1.0, 1.0], ANGLES).verdict == HOLDS
    assert ch03.bound_verdict("lemma-4.1/x", "s", [0.0, 0.0, 0.99], se, [1.0, 1.0, 1.0], ANGLES).verdict == UNDECIDED


@pytest.mark.parametrize(
    "rho, verdict",
    [
        (ch03.NEAR_ZERO_CORRELATION + 0.1, FAILS),
        (ch03.NEAR_ZERO_CORRELATION - 0.04, HOLDS),
        (ch03.NEAR_ZERO_CORRELATION + 0.01, UNDECIDED),
    ],
)
def test_orthogonal_rule_sides(rho, verdict):
    assert ch03.orthogonal_verdict(rho, 0.01).verdict == verdict


def test_first_order_and_closed_form_rules_sides():
    tol = ch03.FIRST_ORDER_REL_TOL
    assert ch03.first_order_verdict({"a": (0.01, 0.01), "b": (-0.02, 0.01)}, 0.05, 2.0).verdict == HOLDS
    assert ch03.first_order_verdict({"a": (0.01, 0.01), "b": (2 * tol, 0.01)}, 0.3, 20.0).verdict == FAILS
    assert ch03.first_order_verdict({"a": (0.01, 0.01), "b": (0.9 * tol, 0.02)}, 0.1, 4.0).verdict == UNDECIDED
    tol = ch03.CLOSED_FORM_REL_TOL
    assert ch03.closed_form_verdict(0.0, 0.1 * tol, 8000, 0.1, 1.0).verdict == HOLDS
    assert ch03.closed_form_verdict(3 * tol, 0.1 * tol, 8000, 0.1, 1.0).verdict == FAILS
    assert ch03.closed_form_verdict(0.0, tol, 8000, 0.1, 1.0).verdict == UNDECIDED


def test_falls_with_angle_rule_sides():
    se = np.full(3, 0.1)
    assert ch03.falls_with_angle_verdict([1.0, 1.0, 0.1], se, 2.0, 0.1, "m").verdict == HOLDS
    assert ch03.falls_with_angle_verdict([1.0, 1.0, -1.0], se, 2.0, 0.1, "m").verdict == FAILS
    assert ch03.falls_with_angle_verdict([0.1, 0.1, 0.1], se, 0.2, 0.1, "m").verdict == UNDECIDED


def test_paired_statistics():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((4000, 3))
    near = np.stack([z[:, 0], z[:, 0] + 0.1 * z[:, 1]], axis=1)  # covariance 1
    far = np.stack([z[:, 0], 0.1 * z[:, 0] + z[:, 2]], axis=1)  # covariance 0.1
    out = ch03.covariance_steps(np.stack([near, far]))
    assert out["steps"][0] == pytest.approx(0.9, abs=0.1) and out["drop"] == pytest.approx(out["steps"][0])
    assert out["steps_se"][0] > 0
    dev, se = ch03.pooled_relative_deviation([near, far], [1.0, 0.1])
    assert abs(dev) < 4 * se + 0.05
    rho, rho_se = ch03.correlation_with_se(far[:, 0], far[:, 1])
    assert rho == pytest.approx(0.1 / np.sqrt(1.01), abs=4 * rho_se)
    with pytest.raises(ValueError, match="^estimates:"):
        ch03.covariance_steps(np.zeros((1, 10, 2)))


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
    assert ch03.derivation_verdict(1e-15, True).verdict == HOLDS
    assert ch03.derivation_verdict(1e-3, True).verdict == FAILS
    assert ch03.derivation_verdict(1e-15, False).verdict == FAILS
    with pytest.raises(ValueError, match="^bandwidth:"):
        covariance.kernel_overlap_symbolic(bandwidth=-1)
    with pytest.raises(ValueError, match="^point:"):
        covariance.kernel_overlap_symbolic(point=(1, 2, 3))


def test_not_checkable_record():
    assert ch03.not_checkable("lemma-4.1/printed-bound/constant-m", "student-t inputs").verdict == NOT_CHECKABLE


def test_the_chapters_positivity_guard_raises_on_a_zero_covariance():
    cov, se = np.array([1e-3, 1e-5]), np.array([1e-5, 1e-5])  # synthetic: the second angle is not positive
    with pytest.raises(VerdictGuardError, match="the text says"):
        guard(bool(np.all(cov > 3 * se)), "the covariance is positive at every angle for constant m", "z = 1")


def test_covariance_formulas_rest_on_independent_rows_and_the_bound_on_gaussian_inputs():
    from mhanw import data
    from mhanw.infra.verdicts import OUTSIDE

    iid, ar1 = data.data_model("zero"), data.data_model("zero", inputs="ar1:0.9")
    pooled = {"zero": (0.01, 0.005), "smooth": (-0.02, 0.006)}
    assert ch03.first_order_verdict(pooled, 0.05, 2.0, premises=ch03.sample_premises(iid)).verdict == "holds"
    rec = ch03.first_order_verdict(pooled, 0.05, 2.0, premises=ch03.sample_premises(ar1))
    assert rec.verdict == OUTSIDE and rec.shows == "holds" and rec.statistics[0].unit == "%"
    assert rec.tolerance == 100 * ch03.FIRST_ORDER_REL_TOL and "|effect| + 3 s.e. <=" in rec.criterion
    smooth_t = data.data_model("sin13", inputs="student-t:5")
    assert [p.id for p in ch03.bound_premises(smooth_t) if not p.holds] == ["gaussian-inputs"]
    bound = ch03.bound_verdict(
        "lemma-4.1/printed-bound/smooth-m",
        "The printed bound holds",
        [0.5, 0.2],
        [0.01, 0.01],
        [0.1, 0.0],
        [0, 90],
        premises=ch03.bound_premises(smooth_t),
    )
    assert bound.verdict == OUTSIDE and bound.shows == "fails as stated" and bound.statistics
    assert ch03.orthogonal_verdict(0.4, 0.01, premises=ch03.sample_premises(ar1)).verdict == OUTSIDE


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
