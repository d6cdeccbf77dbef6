"""Tests of mhanw.chapters.ch08_ensembles_across_domains: the verdict rules of the random-forest analogy,
each fed synthetic statistics on both sides of its thresholds, and the chapter's parameter checks."""

from __future__ import annotations

import numpy as np
import pytest

from mhanw.chapters import ch08_ensembles_across_domains as ch
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, NOT_CHECKABLE, UNDECIDED


@pytest.mark.parametrize("err, verdict", [(ch.IDENTITY_RTOL, HOLDS), (10 * ch.IDENTITY_RTOL, FAILS)])
def test_identity_threshold(err, verdict):
    assert ch.identity_verdict(err).verdict == verdict


def test_hdi_rule():
    assert ch.hdi_verdict({"h": (0.969, 0.01)}, {}).verdict == FAILS  # below 1 by 3.1 s.e.
    assert ch.hdi_verdict({"h": (0.971, 0.01)}, {}).verdict == UNDECIDED  # 2.9 s.e.: no counterexample
    assert ch.hdi_verdict({"h": (0.99, 0.01)}, {"s": (0.031, 0.01)}).verdict == FAILS  # rho moves with h
    assert ch.hdi_verdict({"h": (0.99, 0.01)}, {"s": (0.029, 0.01)}).verdict == UNDECIDED


def test_closed_form_rule_has_no_allowance():
    tol = ch.CLOSED_FORM_TOLERANCE
    ok = ch.closed_form_verdict([("a", 0.01, 0.01), ("b", -0.01, 0.01)])  # |e| + 3 se = 0.04 <= 0.05
    assert ok.verdict == HOLDS and ok.detectable == pytest.approx(0.03)
    assert ch.closed_form_verdict([("a", 0.03, 0.01)]).verdict == UNDECIDED  # 0.06 > tol, but |e| < tol
    assert ch.closed_form_verdict([("a", tol + 0.01, 0.001)]).verdict == FAILS


def test_closed_form_outside_its_conditions_still_shows_the_comparison():
    from mhanw import data
    from mhanw.infra.verdicts import OUTSIDE

    tol = ch.CLOSED_FORM_TOLERANCE
    gaussian = ch.closed_form_premises(data.data_model("zero", inputs="gaussian", noise="gaussian", sigma=1.0))
    assert ch.closed_form_verdict([("a", 0.01, 0.001)], premises=gaussian).verdict == HOLDS
    cube = ch.closed_form_premises(data.data_model("zero", inputs="uniform-cube", noise="gaussian", sigma=1.0))
    rec = ch.closed_form_verdict([("a", tol + 0.01, 0.001)], premises=cube)
    assert rec.verdict == OUTSIDE and rec.shows == FAILS and "uniform-cube" in " ".join(p.why for p in rec.premises)
    assert rec.statistics[0].value == pytest.approx(tol + 0.01)


def test_small_bandwidth_rule():
    gaps = {0.1: (0.31, 0.1), 1.0: (-0.31, 0.1)}
    assert ch.small_bandwidth_verdict(gaps, [0.1], [1.0], 20).verdict == HOLDS
    assert ch.small_bandwidth_verdict({**gaps, 1.0: (-0.29, 0.1)}, [0.1], [1.0], 20).verdict == UNDECIDED
    assert ch.small_bandwidth_verdict({**gaps, 1.0: (0.31, 0.1)}, [0.1], [1.0], 20).verdict == FAILS


def test_monotone_rule():
    up = (np.array([0.31, 0.5]), np.array([0.1, 0.1]))
    assert ch.monotone_verdict({0.1: up}).verdict == HOLDS_UNDER
    assert ch.monotone_verdict({0.1: up, 1.0: (np.array([0.29]), np.array([0.1]))}).verdict == UNDECIDED
    assert ch.monotone_verdict({0.1: up, 1.0: (np.array([-0.31]), np.array([0.1]))}).verdict == FAILS


def test_ant_colonies_not_checkable():
    rec = ch.ant_colony_verdict()
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
            r"^bandwidths: expected at most 10 entries \(the paper's macros",
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


@pytest.mark.parametrize("orth_below_one, grows", [(True, True), (False, False), (True, False)])
def test_figure_caption_says_what_the_numbers_show(orth_below_one, grows):
    rec = ch.ant_colony_verdict()
    text = ch.figure_caption(rec, orth_below_one, grows, 45)
    assert text.endswith(".") and rec.verdict in text
    assert ("lies below 1 by more than 3 s.e." in text) == orth_below_one
    assert ("rises with $h$ at every step" in text) == grows and ("does not rise" in text) == (not grows)
    with pytest.raises(ValueError, match="^rec_hdi: "):
        ch.figure_caption("holds", True, True, 45)


def test_figure_draws_both_panels():
    import matplotlib

    matplotlib.use("Agg")
    hdi = np.array([0.0, 0.5, 1.0])
    omr = {0.5: (np.array([0.0, 0.3, 0.6]), np.array([0.01, 0.02, 0.03]))}
    fig = ch.figure(hdi, omr, [0.5], [45, 90], [0.1, 1.0], np.array([[0.2, 0.5], [0.1, 0.4]]), np.full((2, 2), 0.01))
    assert len(fig.axes) == 2 and fig.axes[0].get_legend() is not None
