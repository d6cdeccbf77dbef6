"""Tests of mhanw.comparisons: the configurations the HDI chapters compare (equal HDI, random, matched HDI,
the five kinds of heads of the index table) and the statistics of their paired comparisons."""

import numpy as np
import pytest

from mhanw import comparisons as C
from mhanw import montecarlo
from mhanw.diversity import head_diversity_index, principal_angles


def _result(errors):
    errors = np.asarray(errors, dtype=float)
    return montecarlo.ImseResult(errors=errors, labels=tuple("" for _ in errors))


def test_equal_hdi_configurations():
    cfg = C.equal_hdi_configurations()
    assert list(cfg) == ["P", "Q", "P'"]
    expected_angles = {"P": [0, 90], "Q": [45, 45], "P'": [8, 90]}
    for name, W in cfg.items():
        assert W.shape == (2, 4, 2)
        for w in W:
            np.testing.assert_allclose(w.T @ w, np.eye(2), atol=1e-14)
        np.testing.assert_allclose(np.degrees(principal_angles(W[0], W[1])), expected_angles[name], atol=1e-6)
    assert head_diversity_index(cfg["P"]) == pytest.approx(0.5)
    assert head_diversity_index(cfg["Q"]) == pytest.approx(0.5)
    assert head_diversity_index(cfg["P'"]) == pytest.approx(1 - np.cos(np.radians(8)) ** 2 / 2)
    assert head_diversity_index(C.equal_hdi_configurations(0.0)["P'"]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="^tilt_deg:"):
        C.equal_hdi_configurations(90.0)


def test_random_configurations_structure_and_determinism():
    a = C.random_configurations(6, np.random.default_rng(5))
    b = C.random_configurations(6, np.random.default_rng(5))
    assert len(a.projections) == 7 and a.orthogonal == 6 and a.identical == 0
    for Wa, Wb in zip(a.projections, b.projections):
        np.testing.assert_array_equal(Wa, Wb)
    assert a.hdi[0] == pytest.approx(0.0, abs=1e-12)
    assert a.hdi[-1] == pytest.approx(1.0)
    assert np.isnan(a.t[-1]) and a.t[0] == 0.0 and a.t[-2] == 1.0
    assert np.all((a.hdi >= -1e-12) & (a.hdi <= 1 + 1e-12))
    with pytest.raises(ValueError, match="^n_configs:"):
        C.random_configurations(1, np.random.default_rng(0))


def test_monotonicity_violations_counts_pairs_and_direction():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.01, size=200)
    # IMSE decreasing in HDI for configurations 0..2; configuration 3 breaks it
    base = np.array([1.0, 0.8, 0.6, 0.9])[:, None] + noise[None, :] + rng.normal(0, 1e-3, size=(4, 200))
    hdi = np.array([0.0, 0.3, 0.6, 0.61])
    out = C.monotonicity_violations(hdi, _result(base))
    # ordered pairs with a gap > 0.02: (1,0), (2,0), (2,1), (3,0), (3,1); (3,2) is within the gap
    assert out["n_pairs"] == 5
    assert [(i, j) for i, j, _, _ in out["violations"]] == [(3, 1)]
    assert out["n_violations"] == 1 and out["n_decreases"] == 4
    assert out["expected_by_chance"] == pytest.approx(5 * 0.0013498980316301035)
    assert C.rank_correlation(hdi, _result(base)) == pytest.approx(-0.4)
    with pytest.raises(ValueError, match="^hdi:"):
        C.monotonicity_violations(hdi[:3], _result(base))
    with pytest.raises(ValueError, match="^result:"):
        C.monotonicity_violations(hdi, base)


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8)])
def test_normalization_table_matches_predictions(d, H, d_k):
    table = C.normalization_table(d, H, d_k, np.random.default_rng(d))
    pred = C.normalization_predictions(d, d_k)
    assert list(table) == list(C.HEAD_TYPES) == list(pred)
    for kind in ("identical", "orthogonal", "identical_x2"):  # exact
        for norm, value in pred[kind].items():
            assert table[kind][norm] == pytest.approx(value, abs=1e-12), (kind, norm)
    for kind in ("gaussian_scaled", "gaussian_unit"):
        assert table[kind]["principal_angles"] == pytest.approx(pred[kind]["principal_angles"], abs=0.02)
        assert table[kind]["rv"] == pytest.approx(pred[kind]["rv"], abs=0.02)
        assert table[kind]["rv"] > table[kind]["principal_angles"]  # unequal singular values: RV != PA
    assert table["gaussian_scaled"]["paper"] == pytest.approx(1 - 1 / d, abs=0.1 / d)
    assert table["gaussian_unit"]["paper"] == pytest.approx(1 - d, rel=0.2)
    with pytest.raises(ValueError, match="^d_k:"):
        C.normalization_predictions(4, 8)


def test_family_summary_and_differences_from():
    E = np.array([[3.0, 4.0, 5.0], [2.0, 2.5, 4.5], [2.5, 2.0, 4.0]])
    res = _result(E)
    diff, se = res.differences_from(0)
    assert diff[0] == 0.0 and se[0] == 0.0
    assert (diff[1], se[1]) == pytest.approx(tuple(res.paired_difference(1, 0)))
    s = C.family_summary(res)
    assert np.isnan(s["z"][0])  # the reference against itself: 0/0, never read as "z = 0"
    np.testing.assert_allclose(s["z"][1:], diff[1:] / se[1:])
    np.testing.assert_allclose(s["step"], res.steps().mean)
    assert s["max_step_z"] == pytest.approx(max(s["step_z"]))
    np.testing.assert_allclose(s["imse"], E.mean(axis=1))
    with pytest.raises(ValueError, match="^reference:"):
        res.differences_from(3)


def test_matched_hdi_configurations_are_matched_and_heterogeneity_detects_a_difference():
    rng = np.random.default_rng(1)
    cfgs = C.matched_hdi_configurations([0.3, 0.6], 3, rng)
    for target, configs in cfgs.items():
        assert len(configs) == 3
        for W in configs:
            assert head_diversity_index(W) == pytest.approx(target, abs=1e-9)
    with pytest.raises(ValueError, match="^target:"):
        C.matched_hdi_configuration(1.0, rng)
    noise = rng.normal(0, 1, size=400)
    same = _result(np.stack([noise + rng.normal(0, 0.1, 400) for _ in range(4)]))
    differ = _result(np.stack([noise + rng.normal(0, 0.1, 400) + 0.1 * k for k in range(4)]) + 5)
    assert C.heterogeneity(same, n_boot=20)["p"] > 1e-3
    h = C.heterogeneity(differ, n_boot=20)
    assert h["p"] < 1e-6 and h["tau_pct"] > 0 and h["K"] == 4 and h["R"] == 400


def test_head_covariance_is_the_integrated_covariance_of_two_heads():
    """head_covariance: the unbiased covariance across replicates averaged over points, with its s.e. over
    replicates, and the correlation of the summed covariance; independent heads give about 0."""
    rng = np.random.default_rng(0)
    shared = rng.standard_normal((4000, 1, 5))
    est = np.concatenate(
        [shared + rng.standard_normal((4000, 1, 5)), shared + rng.standard_normal((4000, 1, 5))], axis=1
    )
    cov, corr = C.head_covariance(est)
    expected = np.mean([np.cov(est[:, 0, t], est[:, 1, t])[0, 1] for t in range(5)])
    assert np.isclose(cov.mean, expected) and abs(cov.mean - 1.0) < 4 * cov.se and abs(corr - 0.5) < 0.05
    indep, corr0 = C.head_covariance(rng.standard_normal((4000, 2, 5)))
    assert abs(indep.mean) < 4 * indep.se and abs(corr0) < 0.05
    for bad in (np.zeros((1, 2, 5)), np.zeros((10, 3, 5)), np.zeros((10, 2))):
        with pytest.raises(ValueError, match="^estimates"):
            C.head_covariance(bad)


def test_isotropic_premises_name_what_breaks_the_isotropic_reading():
    from mhanw import data, heads

    ok = C.isotropic_premises([data.data_model("iso_cos")], [heads.pair_heads(0.5, 4, 2)])
    assert ok and all(p.holds for p in ok)
    broken = C.isotropic_premises(
        [data.data_model("aniso")], [heads.HeadConfig(heads.pair_heads(0.5, 4, 2), rule="sum")]
    )
    failed = {p.id for p in broken if not p.holds}
    assert {"isotropic-m", "uniform-averaging"} <= failed
    with pytest.raises(ValueError, match="^models:"):
        C.isotropic_premises([], [heads.pair_heads(0.5, 4, 2)])
