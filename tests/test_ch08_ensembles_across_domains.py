"""Tests of mhanw.chapters.ch08_ensembles_across_domains: the decisions of the random-forest analogy made in its
steps, each fed synthetic statistics on both sides of its thresholds, and the chapter's parameter checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mhanw.chapters import ch08_ensembles_across_domains as ch
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import Q, Raw, Results
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED


def _decide(claim_id, tree):
    claim = next(c for c in ch.CLAIMS if c.id == claim_id)
    return claim.decide(Results(tree))


def _star(orth, orth_steps=((), ())):
    """A star step's results: 1 - rho_bar at 90 degrees per bandwidth, and the steps of rho_bar across them."""
    return {
        "orth_gap": {ch.hkey(h): Q(v, se) for h, (v, se) in orth.items()},
        "data": Raw({"one_minus_rho": dict.fromkeys(orth), "orth_steps": tuple(map(np.array, orth_steps))}),
    }


def test_hdi_rule():
    no_steps = (np.array([]), np.array([]))
    assert ch._hdi_decision(_star({1.0: (0.969, 0.01)}), *no_steps)["verdict"] == FAILS  # below 1 by 3.1 s.e.
    assert ch._hdi_decision(_star({1.0: (0.971, 0.01)}), *no_steps)["verdict"] == UNDECIDED  # 2.9 s.e.
    rho_moves = ch._hdi_decision(_star({1.0: (0.99, 0.01)}), np.array([0.031]), np.array([0.01]))
    assert rho_moves["verdict"] == FAILS
    still = ch._hdi_decision(_star({1.0: (0.99, 0.01)}), np.array([0.029]), np.array([0.01]))
    assert still["verdict"] == UNDECIDED


def test_closed_form_rule_has_no_allowance():
    tol = ch.CLOSED_FORM_TOLERANCE
    ok = ch._closed_form([("a", 0.01, 0.01), ("b", -0.01, 0.01)])  # |e| + 3 se = 0.04 <= 0.05
    assert ok["verdict"] == HOLDS and ok["detectable"] == pytest.approx(0.03)
    assert ch._closed_form([("a", 0.03, 0.01)])["verdict"] == UNDECIDED  # 0.06 > tol, but |e| < tol
    assert ch._closed_form([("a", tol + 0.01, 0.001)])["verdict"] == FAILS
    assert all(math.isfinite(s.value) for s in ch._closed_form([("a", 0.01, 0.0)])["statistics"])  # no infinite z


def test_closed_form_outside_its_conditions_still_shows_the_comparison():
    from mhanw import data, premises
    from mhanw.infra.verdicts import OUTSIDE

    tol = ch.CLOSED_FORM_TOLERANCE

    def pair(inputs, deviation):
        model = data.data_model("zero", inputs=inputs, noise="gaussian", sigma=1.0)
        return {
            "pair": {
                "closed_form": ch._closed_form([("a", deviation, 0.001)]),
                "premises": (premises.gaussian_inputs(model), premises.homoscedastic_noise(model)),
            }
        }

    assert _decide("rf/closed-form-correlation", pair("gaussian", 0.01)).verdict == HOLDS
    rec = _decide("rf/closed-form-correlation", pair("uniform-cube", tol + 0.01))
    assert rec.verdict == OUTSIDE and rec.shows == FAILS and "uniform-cube" in " ".join(p.why for p in rec.premises)
    assert rec.statistics[0].value == pytest.approx(tol + 0.01)


def test_small_bandwidth_rule():
    gaps = {0.1: (0.31, 0.1), 1.0: (-0.31, 0.1)}
    assert ch._small_bandwidth(gaps, [0.1, 1.0], 20)["verdict"] == HOLDS
    assert ch._small_bandwidth({**gaps, 1.0: (-0.29, 0.1)}, [0.1, 1.0], 20)["verdict"] == UNDECIDED
    assert ch._small_bandwidth({**gaps, 1.0: (0.31, 0.1)}, [0.1, 1.0], 20)["verdict"] == FAILS


def test_monotone_rule():
    up = (np.array([0.31, 0.5]), np.array([0.1, 0.1]))
    assert ch._monotone({0.1: up})["verdict"] == HOLDS_UNDER
    assert ch._monotone({0.1: up, 1.0: (np.array([0.29]), np.array([0.1]))})["verdict"] == UNDECIDED
    assert ch._monotone({0.1: up, 1.0: (np.array([-0.31]), np.array([0.1]))})["verdict"] == FAILS
    assert ch._monotone({0.5: (np.array([0.1, 0.2]), np.array([0.0, 0.0]))})["verdict"] == HOLDS_UNDER
    rec = _decide("rf/monotone-within-family", {"star": {"monotone": ch._monotone({0.1: up})}})
    assert rec.verdict == HOLDS_UNDER and "fixed (h, n" in rec.conditions


def test_ant_colonies_not_checkable():
    rec = _decide("rf/ant-colonies", {})
    assert rec.verdict == NOT_CHECKABLE and "no quantity" in rec.criterion


DEFAULTS = dict(
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m",
    results_path="r",
    n_jobs=2,
    regression="iso_exp",
    inputs="gaussian",
    noise="gaussian",
    sigma=0.5,
    n=500,
    bandwidths=[0.1, 0.2, 0.5, 1.0],
    angles_deg=[0, 20, 40, 60, 75, 90],
)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(angles_deg=[10, 20, 90]), r"^angles_deg: "),
        (dict(bandwidths=[0.5, 0.1]), r"^bandwidths: "),
        (dict(bandwidths=[0.1, -1.0]), r"^bandwidths\[1\]: "),
        (dict(regression="x11"), r"^regression: "),
        (dict(nosie="gaussian"), r"^nosie: unknown parameter \(did you mean 'noise'\?\)"),
        (
            dict(bandwidths=[0.05 * (i + 1) for i in range(11)]),
            r"^bandwidths: expected at most 10 entries \(at most ten bandwidths",
        ),
        (dict(angles_deg=list(range(0, 91, 4)) + [90]), r"^angles_deg: expected at most 19 entries"),
        # the laws are drawn in d = 10 (star family) and d = 2 (two-head check): each must fit both
        (
            dict(noise="heteroscedastic:1+x5^2"),
            r"^noise: .*needs d >= 5, got d = 2 \(the chapter draws from it in d = 10, 2\)",
        ),
        (dict(inputs="gaussian-equicorrelated:-0.2"), r"^inputs: .*d = 10"),  # fits d = 2, not 10
    ],
)
def test_parameters_name_the_bad_one(change, message):
    assert check_parameters(DEFAULTS, ch.PARAMETERS, ch.CONSTRAINTS)["n"] == 500
    with pytest.raises(ParameterError, match=message):
        check_parameters({**DEFAULTS, **change}, ch.PARAMETERS, ch.CONSTRAINTS)
