"""Tests of mhanw.chapters.ch05_decorrelation_optimality: the blind configurations and the Monte Carlo
checks of Thm 5.1 (i) and (ii) at reduced sizes."""

import numpy as np
import pytest

from mhanw import montecarlo
from mhanw.chapters import ch05_decorrelation_optimality as ch05
from mhanw.diversity import head_diversity_index
from mhanw.infra.premises import premise


def test_blind_configurations():
    cfg = ch05.blind_configurations()
    hdi = {k: head_diversity_index(W) for k, W in cfg.items()}
    assert hdi == pytest.approx({"identical": 0.0, "shared": 0.5, "orthogonal": 1.0})
    e1 = np.eye(4)[:, 0]
    # every head of "shared" contains e1; the second orthogonal head is blind to it
    for W in cfg["shared"]:
        assert np.linalg.norm(W @ (W.T @ e1)) == pytest.approx(1.0)
    assert np.linalg.norm(cfg["orthogonal"][1].T @ e1) == 0.0


@pytest.mark.statistical
def test_orthogonal_heads_best_among_random_isotropic_configurations():
    """(i) at reduced size: 8 interpolated configurations plus orthogonal blocks, m = iso_cos6,
    n = 400, h = 0.6, T = 100, R = 150 (the chapter: 24 configurations, T = 200, R = 150 / 600)."""
    configs, res = ch05.random_configuration_imse("iso_cos6", 8, 511, n=400, n_test=100, n_rep=150, n_jobs=2)
    r = res["iso_cos6"]
    for c in range(len(configs.projections) - 1):
        diff, se = r.paired_difference(configs.orthogonal, c)
        assert diff <= 3 * se, c


@pytest.fixture(scope="module")
def blind_imse():
    """(ii) at reduced size: reference setting, m = blind, T = 100, R = 100 (the chapter: T = 300, R = 200)."""
    cfg = ch05.blind_configurations()
    return montecarlo.integrated_mse(list(cfg.values()), "blind", n=500, n_test=100, n_rep=100, seed=512, n_jobs=2)


@pytest.mark.statistical
def test_blind_orthogonal_heads_lose_to_shared_ones(blind_imse):
    identical, shared, orthogonal = range(3)
    diff, se = blind_imse.paired_difference(orthogonal, shared)
    assert diff > 3 * se  # documented failure of Thm 5.1 as stated
    diff, se = blind_imse.paired_difference(orthogonal, identical)
    assert diff > 3 * se  # orthogonal is even worse than identical heads


# ---------------------------------------------------------------- the IMSE optimum

from mhanw import heads  # noqa: E402
from mhanw.infra import verdicts as V  # noqa: E402


def test_imse_gradient_matches_finite_differences_and_integrated_mse():
    batch = ch05.crn_batch("iso_cos", 60, 20, 3, 4, seed=5)
    rng = np.random.default_rng(0)
    W = heads.haar_heads(4, 2, 2, rng)
    loss, G = ch05.imse_and_gradient(W, batch, 0.5)
    D = rng.standard_normal(W.shape)
    eps = 1e-6
    up = ch05.imse_and_gradient(W + eps * D, batch, 0.5, gradient=False)[0]
    down = ch05.imse_and_gradient(W - eps * D, batch, 0.5, gradient=False)[0]
    assert (up - down) / (2 * eps) == pytest.approx(np.sum(G * D), rel=1e-5)
    # the same replicates through the library's Monte Carlo give the same IMSE
    res = montecarlo.integrated_mse([W], "iso_cos", n=60, n_test=20, n_rep=3, seed=5, bandwidth=0.5)
    assert loss == pytest.approx(res.mean[0], rel=1e-10)


def test_minimize_imse_descends_and_keeps_orthogonality():
    batch = ch05.crn_batch("blind", 80, 30, 2, 4, seed=6)
    free = ch05.minimize_imse(batch, 2, 2, 0.5, np.random.default_rng(1), n_starts=1, n_steps=5)
    assert free.trace[-1] <= free.trace[0] and np.all(np.diff(free.trace) <= 0)
    orth = ch05.minimize_imse(batch, 2, 2, 0.5, np.random.default_rng(1), n_starts=1, n_steps=5, orthogonal=True)
    U = np.concatenate(list(orth.projections), axis=1)
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-10)
    assert orth.hdi == pytest.approx(1.0)
    with pytest.raises(ValueError, match="^d_k:"):
        ch05.minimize_imse(batch, 3, 2, 0.5, np.random.default_rng(1), orthogonal=True)


def test_rules_on_each_side_of_their_thresholds():
    res = ch05.RESOLUTION_PCT
    se_ok = res / 3 * 0.99  # 3 s.e. just below the resolution
    iso = (premise("isotropic-m", "m depends on x only through |x|", True),)
    reached = V.Search("IMSE descent", starts=4, known_starts=1, perturbed_starts=2, steps=10, best=0.9, known=1.0)
    missed = V.Search("IMSE descent", starts=4, known_starts=1, perturbed_starts=2, steps=10, best=1.013, known=1.0)
    assert ch05.optimum_verdict("iso", "m", 0.0, se_ok, 0.9, iso, False, reached).verdict == V.HOLDS_UNDER
    assert ch05.optimum_verdict("iso", "m", 0.0, res / 3 * 1.01, 0.9, iso, False, reached).verdict == V.UNDECIDED
    assert ch05.optimum_verdict("iso", "m", -3.1 * se_ok, se_ok, 0.2, iso, False, reached).verdict == V.FAILS
    assert ch05.optimum_verdict("iso", "m", -2.9 * se_ok, se_ok, 0.2, iso, False, reached).verdict == V.HOLDS_UNDER
    # a claim rests on an optimum only when the descent reached the orthogonal heads on its batch
    assert ch05.optimum_verdict("iso", "m", 0.0, se_ok, 0.9, iso, False, missed).verdict == V.UNDECIDED
    # an anisotropic m tests the unconditional statement: a counterexample refutes it, a non-detection decides nothing
    assert ch05.optimum_verdict("aniso", "m", 0.0, se_ok, 0.9, (), True, reached).verdict == V.UNDECIDED
    assert ch05.optimum_verdict("aniso", "m", -3.1 * se_ok, se_ok, 0.2, (), True, reached).verdict == V.FAILS
    assert ch05.random_records(-2.9 * se_ok, se_ok, "m", iso, False, -0.9, 0, "thm-5.1/x").verdict == V.HOLDS_UNDER
    assert ch05.random_records(-2.9 * se_ok, se_ok, "m", (), True, -0.9, 0, "thm-5.1/x").verdict == V.UNDECIDED
    # a broken premise: outside its conditions, the decision kept as what the numbers show
    broken = (premise("rotation-invariant-inputs", "the law of the inputs is rotation invariant", False, "correlated"),)
    r = ch05.random_records(-17.5, 0.3, "m", broken, False, -0.9, 3, "thm-5.1/x")
    assert (r.verdict, r.shows) == (V.OUTSIDE, V.FAILS) and r.statistics[0].value == -17.5
    assert ch05.blind_verdict(0.31, 0.1).verdict == V.FAILS
    assert ch05.blind_verdict(-0.31, 0.1).verdict == V.HOLDS
    assert ch05.blind_verdict(0.29, 0.1).verdict == V.UNDECIDED
    assert ch05.frame_verdict(0.5 * ch05.FRAME_TOL, 0.0, 1e-8).verdict == V.HOLDS
    assert ch05.frame_verdict(2 * ch05.FRAME_TOL, 0.0, 1e-8).verdict == V.FAILS
    assert ch05.frame_general_verdict(0.5, 2 / 3).verdict == V.FAILS
    assert ch05.frame_general_verdict(2 / 3 - 0.5 * ch05.FRAME_TOL, 2 / 3).verdict == V.HOLDS
    assert not hasattr(ch05, "training_record")  # the training claim is decided by chapter 10 alone
    assert ch05.overall_verdict([ch05.blind_verdict(0.31, 0.1)]).verdict == V.FAILS
    assert ch05.overall_verdict([ch05.blind_verdict(0.29, 0.1)]).verdict == V.UNDECIDED
    assert ch05.comparison_word(-0.31, 0.1, "a", "b", "c") == "a"
    assert ch05.comparison_word(0.31, 0.1, "a", "b", "c") == "b"
    assert ch05.comparison_word(0.29, 0.1, "a", "b", "c") == "c"


def test_setup_checks_the_parameters_and_gives_models_sizes_and_streams():
    """setup: the checked parameters, one data law per regression function (each once), the sizes of the
    fidelity and the four children of SeedSequence(seed), as spawning by hand gives them."""
    from nbtools import declared_parameters

    params, model, sizes, streams = ch05.setup(
        declared_parameters("05_decorrelation_optimality", fidelity="quick", seed=3)
    )
    assert sizes == ch05.SIZES["quick"] and params["fidelity"] == "quick"
    assert list(model) == ["iso_cos6", "aniso", "blind", "iso_cos"]
    by_hand = np.random.SeedSequence(3).spawn(len(ch05.STREAMS))
    assert len(streams) == 4 and all(
        np.array_equal(a.generate_state(4), b.generate_state(4)) for a, b in zip(streams, by_hand)
    )
    with pytest.raises(ValueError, match="optimum_d_k"):
        ch05.setup(declared_parameters("05_decorrelation_optimality", optimum_d_k=5))
