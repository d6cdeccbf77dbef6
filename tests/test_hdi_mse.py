"""Tests of mhanw.chapters.ch04_head_diversity_index: the configurations and summaries of Thm 4.2 and Thm 5.1, the
checks T5.1a-c of ``book/claims.md`` (reduced sizes) and the strict violation (B') of Thm 4.2.

T4.2a-e themselves are tested in test_heads.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw import heads, montecarlo
from mhanw.chapters import ch04_head_diversity_index as hdi_mse
from mhanw.diversity import hdi_upper_bound, head_diversity_index, principal_angles

# ---------------------------------------------------------------- configurations


def test_equal_hdi_configurations():
    cfg = hdi_mse.equal_hdi_configurations()
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
    assert head_diversity_index(hdi_mse.equal_hdi_configurations(0.0)["P'"]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="^tilt_deg:"):
        hdi_mse.equal_hdi_configurations(90.0)


def test_blind_configurations():
    cfg = hdi_mse.blind_configurations()
    hdi = {k: head_diversity_index(W) for k, W in cfg.items()}
    assert hdi == pytest.approx({"identical": 0.0, "shared": 0.5, "orthogonal": 1.0})
    e1 = np.eye(4)[:, 0]
    # every head of "shared" contains e1; the second orthogonal head is blind to it
    for W in cfg["shared"]:
        assert np.linalg.norm(W @ (W.T @ e1)) == pytest.approx(1.0)
    assert np.linalg.norm(cfg["orthogonal"][1].T @ e1) == 0.0


def test_random_configurations_structure_and_determinism():
    a = hdi_mse.random_configurations(6, np.random.default_rng(5))
    b = hdi_mse.random_configurations(6, np.random.default_rng(5))
    assert len(a.projections) == 7 and a.orthogonal == 6 and a.identical == 0
    for Wa, Wb in zip(a.projections, b.projections):
        np.testing.assert_array_equal(Wa, Wb)
    assert a.hdi[0] == pytest.approx(0.0, abs=1e-12)
    assert a.hdi[-1] == pytest.approx(1.0)
    assert np.isnan(a.t[-1]) and a.t[0] == 0.0 and a.t[-2] == 1.0
    assert np.all((a.hdi >= -1e-12) & (a.hdi <= 1 + 1e-12))
    with pytest.raises(ValueError, match="^n_configs:"):
        hdi_mse.random_configurations(1, np.random.default_rng(0))


# ---------------------------------------------------------------- paired summaries


def _result(errors):
    errors = np.asarray(errors, dtype=float)
    return montecarlo.ImseResult(errors=errors, labels=tuple("" for _ in errors))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), C=st.integers(2, 5), R=st.integers(3, 40))
def test_relative_difference_is_the_delta_method(seed, C, R):
    rng = np.random.default_rng(seed)
    E = rng.gamma(2.0, 1.0, size=(C, R)) + 0.1
    rel, se = hdi_mse.relative_difference(_result(E), reference=1)
    np.testing.assert_allclose(rel, E.mean(axis=1) / E[1].mean() - 1, rtol=1e-12, atol=1e-14)
    assert rel[1] == pytest.approx(0.0, abs=1e-14) and se[1] == pytest.approx(0.0, abs=1e-14)
    for c in range(C):
        r = E[c].mean() / E[1].mean()
        g = (E[c] - r * E[1]) / E[1].mean()  # linearisation of the ratio
        assert se[c] == pytest.approx(g.std(ddof=1) / np.sqrt(R), rel=1e-10, abs=1e-14)


def test_step_differences():
    E = np.array([[3.0, 4.0, 5.0], [2.0, 2.5, 4.5], [2.0, 2.5, 4.5]])
    diff, se = hdi_mse.step_differences(_result(E))
    np.testing.assert_allclose(diff, [-1.0, 0.0])
    np.testing.assert_allclose(se, [np.std([-1, -1.5, -0.5], ddof=1) / np.sqrt(3), 0.0])
    diff2, _ = hdi_mse.step_differences(_result(E), order=[2, 0])
    np.testing.assert_allclose(diff2, [1.0])
    with pytest.raises(ValueError, match="^order:"):
        hdi_mse.step_differences(_result(E), order=[0, 3])


def test_monotonicity_violations_counts_pairs_and_direction():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.01, size=200)
    # IMSE decreasing in HDI for configurations 0..2; configuration 3 breaks it
    base = np.array([1.0, 0.8, 0.6, 0.9])[:, None] + noise[None, :] + rng.normal(0, 1e-3, size=(4, 200))
    hdi = np.array([0.0, 0.3, 0.6, 0.61])
    out = hdi_mse.monotonicity_violations(hdi, _result(base))
    # ordered pairs with a gap > 0.02: (1,0), (2,0), (2,1), (3,0), (3,1); (3,2) is within the gap
    assert out["n_pairs"] == 5
    assert [(i, j) for i, j, _, _ in out["violations"]] == [(3, 1)]
    assert out["n_violations"] == 1 and out["n_decreases"] == 4
    assert out["expected_by_chance"] == pytest.approx(5 * 0.0013498980316301035)
    assert hdi_mse.rank_correlation(hdi, _result(base)) == pytest.approx(-0.4)
    with pytest.raises(ValueError, match="^hdi:"):
        hdi_mse.monotonicity_violations(hdi[:3], _result(base))
    with pytest.raises(ValueError, match="^result:"):
        hdi_mse.monotonicity_violations(hdi, base)


# ---------------------------------------------------------------- Thm 5.1


def test_T51c_frame_bound_reached_by_projected_gradient_ascent():
    out = hdi_mse.maximize_hdi(3, 1, 4, np.random.default_rng(20), n_starts=20, n_steps=150)
    bound = hdi_upper_bound(3, 1, 4)
    assert bound == pytest.approx(8 / 9)
    assert np.all(out.trace <= bound + 1e-12)  # never above the bound
    assert out.hdi.max() == pytest.approx(8 / 9, abs=1e-3)
    assert np.all(np.abs(out.hdi - 8 / 9) < 1e-3)  # every start reaches it: no spurious local maxima here
    assert np.all(out.tightness < 1e-3)  # a tight frame: sum_j P_j = (4/3) I
    lines = out.bases[0][:, :, 0]
    np.testing.assert_allclose(np.abs(lines @ lines.T)[np.triu_indices(4, 1)], 1 / 3, atol=1e-3)  # tetrahedral


@pytest.mark.parametrize("d, d_k, H", [(6, 2, 3), (6, 2, 5), (5, 2, 4)])
def test_maximize_hdi_reaches_the_bound_in_other_dimensions(d, d_k, H):
    out = hdi_mse.maximize_hdi(d, d_k, H, np.random.default_rng(d + H), n_starts=5, n_steps=300)
    assert out.hdi.max() == pytest.approx(hdi_upper_bound(d, d_k, H), abs=1e-3)
    assert np.all(out.trace <= hdi_upper_bound(d, d_k, H) + 1e-12)


def test_frame_tightness():
    assert hdi_mse.frame_tightness(heads.orthogonal_heads(6, 2, 3)) == pytest.approx(0.0, abs=1e-14)
    lines = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3)
    assert hdi_mse.frame_tightness(2.0 * lines[:, :, None]) == pytest.approx(0.0, abs=1e-12)  # ranges only
    assert hdi_mse.frame_tightness(heads.identical_heads(4, 2, 2)) > 1.0


def test_maximize_hdi_bad_input():
    with pytest.raises(ValueError, match="^n_heads:"):
        hdi_mse.maximize_hdi(3, 1, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^d_k:"):
        hdi_mse.maximize_hdi(3, 4, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^rng:"):
        hdi_mse.maximize_hdi(3, 1, 4, 0)
    with pytest.raises(ValueError, match="^step:"):
        hdi_mse.maximize_hdi(3, 1, 4, np.random.default_rng(0), step=0.0)


def test_T51a_orthogonal_best_among_random_isotropic_configurations():
    """Random configurations at reduced size: 8 interpolated configurations plus orthogonal blocks, m = iso_cos6,
    n = 400, h = 0.6, T = 100, R = 150 (the chapter: 24 configurations, T = 200, R = 150 / 600)."""
    configs, res = hdi_mse.random_configuration_imse("iso_cos6", 8, 511, n=400, n_test=100, n_rep=150,
                                                     n_jobs=2)
    r = res["iso_cos6"]
    for c in range(len(configs.projections) - 1):
        diff, se = r.paired_difference(configs.orthogonal, c)
        assert diff <= 3 * se, c


@pytest.fixture(scope="module")
def blind_imse():
    """The blind counterexample at reduced size: reference setting, m = blind, T = 100, R = 100 (the chapter: T = 300, R = 200)."""
    cfg = hdi_mse.blind_configurations()
    return montecarlo.integrated_mse(list(cfg.values()), "blind", n=500, n_test=100, n_rep=100, seed=512, n_jobs=2)


def test_T51b_blind_orthogonal_heads_lose_to_shared_ones(blind_imse):
    identical, shared, orthogonal = range(3)
    diff, se = blind_imse.paired_difference(orthogonal, shared)
    assert diff > 3 * se  # documented failure of Thm 5.1 as stated
    diff, se = blind_imse.paired_difference(orthogonal, identical)
    assert diff > 3 * se  # orthogonal is even worse than identical heads


def test_Bprime_strict_violation_with_isotropic_m():
    """(B') at reduced size: P' (HDI_PA 0.510) vs Q (0.5), m = iso_cos, T = 300, R = 800.
    Higher HDI, higher IMSE: z = 4.1-6.0 over three seeds at these sizes."""
    cfg = hdi_mse.equal_hdi_configurations()
    res = montecarlo.integrated_mse([cfg["P'"], cfg["Q"]], "iso_cos", n=500, n_test=300, n_rep=800, seed=513, n_jobs=2)
    assert head_diversity_index(cfg["P'"]) > head_diversity_index(cfg["Q"]) + 0.005
    diff, se = res.paired_difference(0, 1)
    assert diff > 3 * se  # documented failure of S-true (strict)


# ---------------------------------------------------------------- HDI definitions


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8)])
def test_normalization_table_matches_predictions(d, H, d_k):
    table = hdi_mse.normalization_table(d, H, d_k, np.random.default_rng(d))
    pred = hdi_mse.normalization_predictions(d, d_k)
    assert list(table) == list(hdi_mse.HEAD_TYPES) == list(pred)
    for kind in ("identical", "orthogonal", "identical_x2"):  # exact (HDI-a, HDI-c)
        for norm, value in pred[kind].items():
            assert table[kind][norm] == pytest.approx(value, abs=1e-12), (kind, norm)
    for kind in ("gaussian_scaled", "gaussian_unit"):
        assert table[kind]["principal_angles"] == pytest.approx(pred[kind]["principal_angles"], abs=0.02)
        assert table[kind]["rv"] == pytest.approx(pred[kind]["rv"], abs=0.02)
        assert table[kind]["rv"] > table[kind]["principal_angles"]  # unequal singular values: RV != PA
    assert table["gaussian_scaled"]["paper"] == pytest.approx(1 - 1 / d, abs=0.1 / d)
    assert table["gaussian_unit"]["paper"] == pytest.approx(1 - d, rel=0.2)
    with pytest.raises(ValueError, match="^d_k:"):
        hdi_mse.normalization_predictions(4, 8)


def test_family_summary_and_differences_from():
    E = np.array([[3.0, 4.0, 5.0], [2.0, 2.5, 4.5], [2.5, 2.0, 4.0]])
    res = _result(E)
    diff, se = hdi_mse.differences_from(res, 0)
    assert diff[0] == 0.0 and se[0] == 0.0
    assert (diff[1], se[1]) == pytest.approx(res.paired_difference(1, 0))
    s = hdi_mse.family_summary(res)
    assert s["z"][0] == 0.0  # the reference against itself
    np.testing.assert_allclose(s["z"][1:], diff[1:] / se[1:])
    np.testing.assert_allclose(s["step"], hdi_mse.step_differences(res)[0])
    assert s["max_step_z"] == pytest.approx(max(s["step_z"]))
    np.testing.assert_allclose(s["imse"], E.mean(axis=1))
    with pytest.raises(ValueError, match="^reference:"):
        hdi_mse.differences_from(res, 3)


def test_frame_bound_not_attained_when_no_tight_fusion_frame_exists():
    """Two planes in R^3 share a line: HDI_PA <= 1/2, below the frame bound 2/3."""
    out = hdi_mse.maximize_hdi(3, 2, 2, np.random.default_rng(3), n_starts=5, n_steps=100)
    assert hdi_upper_bound(3, 2, 2) == pytest.approx(2 / 3)
    assert out.hdi.max() == pytest.approx(0.5, abs=1e-6)
    assert np.all(out.trace <= 0.5 + 1e-12)
    assert np.all(out.tightness > 0.1)
