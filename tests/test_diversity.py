"""Tests of mhanw.diversity: principal angles, the orthonormal-basis helper, the HDI in its three
normalizations (from heads and from Gram matrices), and the frame bound of Thm 5.1."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mhanw import diversity, heads
from mhanw.diversity import (
    NORMALIZATIONS,
    cross_gram,
    frame_tightness,
    haar_expected_hdi,
    hdi_upper_bound,
    head_diversity_index,
    maximize_hdi,
    orthonormal_bases,
    principal_angles,
)

HDI = head_diversity_index


def _haar(seed, H, d, d_k):
    return heads.haar_heads(d, d_k, H, np.random.default_rng(seed))


# ---------------------------------------------------------------- principal angles, cross-Gram


def test_principal_angles_match_svd_and_are_ascending():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 7, 3))
    ang = principal_angles(A, B)
    QA, QB = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    cos = np.linalg.svd(QA.T @ QB, compute_uv=False)
    np.testing.assert_allclose(np.cos(ang), cos, atol=1e-12)
    assert np.all(np.diff(ang) >= 0) and ang.min() >= 0 and ang.max() <= np.pi / 2


@settings(max_examples=30, deadline=None)
@given(theta=st.floats(0.0, np.pi / 2), d_k=st.integers(1, 3), extra=st.integers(0, 2))
def test_pair_family_is_isoclinic(theta, d_k, extra):
    W = heads.pair_heads(theta, 2 * d_k + extra, d_k)
    np.testing.assert_allclose(principal_angles(W[0], W[1]), np.full(d_k, theta), atol=1e-12)
    assert HDI(W) == pytest.approx(np.sin(theta) ** 2, abs=1e-12)
    assert HDI(W, "paper") == pytest.approx(1 - np.cos(theta) ** 2 / d_k, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(np.sin(theta) ** 2, abs=1e-12)


def test_star_family():
    theta = 0.6
    W = heads.star_heads(theta, d=10, d_k=2, n_heads=4)
    for j in range(4):
        for k in range(j + 1, 4):
            np.testing.assert_allclose(principal_angles(W[j], W[k]), np.arccos(np.cos(theta) ** 2), atol=1e-12)
    assert HDI(W) == pytest.approx(1 - np.cos(theta) ** 4, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(2, 7))
def test_principal_angles_see_only_subspaces(seed, d):
    rng = np.random.default_rng(seed)
    k = rng.integers(1, d + 1)
    A, B = rng.standard_normal((2, d, k))
    M, N = rng.standard_normal((2, k, k)) + 3 * np.eye(k)
    assume(np.linalg.cond(M) < 1e3 and np.linalg.cond(N) < 1e3)
    np.testing.assert_allclose(principal_angles(A @ M, B @ N), principal_angles(A, B), atol=1e-6)


def test_cross_gram_as_printed():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 6, 3))
    np.testing.assert_allclose(cross_gram(A, B), A.T @ B / 3, rtol=1e-15)
    W = heads.pair_heads(0.4, 6, 3)
    assert (cross_gram(W[0], W[1]) ** 2).sum() == pytest.approx(np.cos(0.4) ** 2 / 3)


# ---------------------------------------------------------------- HDI checks HDI-a..e


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8), (6, 3, 1)])
def test_hdi_of_identical_orthonormal_heads(d, H, d_k):
    W = heads.identical_heads(d, d_k, H, basis=_haar(d, 1, d, d_k)[0])
    assert HDI(W, "paper") == pytest.approx(1 - 1 / d_k, abs=1e-12)  # documented: not 0
    assert HDI(W, "principal_angles") == pytest.approx(0.0, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("d, H, d_k", [(512, 8, 64), (768, 12, 64), (64, 8, 8)])
def test_hdi_table_of_three_model_shapes(d, H, d_k):
    for norm in ("paper", "principal_angles", "rv"):
        assert HDI(heads.orthogonal_heads(d, d_k, H), norm) == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(d)
    W1 = rng.standard_normal((H, d, d_k)) / np.sqrt(d)  # N(0, 1/d): HDI_paper ~ 1 - 1/d
    W2 = rng.standard_normal((H, d, d_k))  # N(0, 1): HDI_paper ~ 1 - d
    assert HDI(W1, "paper") == pytest.approx(1 - 1 / d, abs=0.1 / d)
    assert HDI(W2, "paper") == pytest.approx(1 - d, rel=0.2)  # one draw: about 2 s.d. wide at d = 64
    assert HDI(W1, "principal_angles") == pytest.approx(1 - d_k / d, abs=0.01)
    assert HDI(heads.identical_heads(d, d_k, H) * 2, "paper") == pytest.approx(1 - 16 / d_k, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), H=st.integers(2, 5), d_k=st.integers(1, 4), extra=st.integers(0, 4))
def test_printed_hdi_is_affine_in_hdi_pa_for_orthonormal_heads(seed, H, d_k, extra):
    W = _haar(seed, H, d_k + extra, d_k)
    assert HDI(W) == pytest.approx(d_k * HDI(W, "paper") - d_k + 1, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(HDI(W), abs=1e-12)  # equal singular values
    for norm in ("principal_angles", "rv"):
        assert -1e-12 <= HDI(W, norm) <= 1 + 1e-12


@pytest.mark.parametrize("c", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("d_k", [1, 4, 64])
def test_hdi_of_rescaled_identical_heads(c, d_k):
    W = c * heads.identical_heads(128, d_k, 4)
    assert HDI(W, "paper") == pytest.approx(1 - c**4 / d_k, abs=1e-12)
    assert HDI(W, "principal_angles") == pytest.approx(0.0, abs=1e-12)
    assert HDI(W, "rv") == pytest.approx(0.0, abs=1e-12)


def _well_conditioned(rng, k):
    A = rng.standard_normal((k, k)) + 2 * np.eye(k)
    return A if np.linalg.cond(A) < 100 else np.eye(k) * rng.uniform(0.5, 2)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    H=st.integers(2, 5),
    d_k=st.integers(1, 3),
    extra=st.integers(0, 4),
    c=st.floats(0.2, 5.0),
)
def test_invariances_of_each_normalization(seed, H, d_k, extra, c):
    rng = np.random.default_rng(seed)
    d = d_k + extra + 1
    W = rng.standard_normal((H, d, d_k))
    pa, rv, paper = HDI(W), HDI(W, "rv"), HDI(W, "paper")
    A = _well_conditioned(rng, d_k)
    perm = rng.permutation(H)
    O = np.linalg.qr(rng.standard_normal((d_k, d_k)))[0]
    # principal angles: W -> W A (invertible A), per-head A_j, and permutations of heads
    assert HDI(W @ A) == pytest.approx(pa, abs=1e-10)
    assert HDI(np.stack([w @ _well_conditioned(rng, d_k) for w in W])) == pytest.approx(pa, abs=1e-10)
    assert HDI(W[perm]) == pytest.approx(pa, abs=1e-10)
    # rv: W -> c W and orthogonal A; permutations
    assert HDI(c * W, "rv") == pytest.approx(rv, abs=1e-10)
    assert HDI(W @ O, "rv") == pytest.approx(rv, abs=1e-10)
    assert HDI(W[perm], "rv") == pytest.approx(rv, abs=1e-10)
    # paper: permutation and orthogonal invariant, but rescaling multiplies 1 - HDI by c^4
    assert HDI(W[perm], "paper") == pytest.approx(paper, abs=1e-10)
    assert HDI(W @ O, "paper") == pytest.approx(paper, abs=1e-10)
    assert HDI(c * W, "paper") == pytest.approx(1 - c**4 * (1 - paper), rel=1e-10, abs=1e-10)
    for v in (pa, rv):
        assert -1e-12 <= v <= 1 + 1e-12


def test_rv_differs_from_pa_for_unequal_singular_values():
    W = heads.pair_heads(np.pi / 4, 4, 2) @ np.diag([1.0, 10.0])
    assert HDI(W) == pytest.approx(0.5)
    W2 = np.stack([np.eye(4)[:, :2], np.eye(4)[:, [0, 2]] @ np.diag([1.0, 10.0])])
    assert HDI(W2) == pytest.approx(0.5)
    assert abs(HDI(W2, "rv") - HDI(W2)) > 0.3


def test_haar_heads_expected_hdi():
    W = _haar(7, 8, 512, 64)
    assert HDI(W) == pytest.approx(haar_expected_hdi(512, 64), abs=0.01)
    assert haar_expected_hdi(512, 64) == 1 - 64 / 512


def test_frame_bound_reached_by_tetrahedral_lines():
    assert hdi_upper_bound(3, 1, 4) == pytest.approx(8 / 9)
    assert hdi_upper_bound(8, 2, 4) == 1.0
    lines = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3)
    assert HDI(lines[:, :, None]) == pytest.approx(8 / 9, abs=1e-12)
    for seed in range(20):
        assert HDI(_haar(seed, 4, 3, 1)) <= 8 / 9 + 1e-12
        assert HDI(_haar(seed, 5, 6, 2)) <= hdi_upper_bound(6, 2, 5) + 1e-12


@pytest.mark.parametrize(
    "W, normalization, name",
    [
        (np.zeros((4, 2)), "principal_angles", "W"),
        (np.zeros((1, 4, 2)) + 1, "principal_angles", "W"),
        (np.full((2, 4, 2), np.nan), "paper", "W"),
        (np.ones((2, 2, 3)), "paper", "W"),
        (heads.pair_heads(0.3, 4, 2), "cosine", "normalization"),
        (np.stack([np.eye(4)[:, :2], np.zeros((4, 2))]), "rv", "W"),
    ],
)
def test_hdi_bad_input(W, normalization, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        HDI(W, normalization)


def test_rank_deficient_head_is_named():
    W = np.stack([np.eye(4)[:, :2], np.ones((4, 2))])
    with pytest.raises(ValueError, match="^W: head 1"):
        HDI(W)
    with pytest.raises(ValueError, match="^W: head 1"):
        orthonormal_bases(W)
    assert np.isfinite(HDI(W, "paper"))  # the printed formula does not need full rank


def test_principal_angles_bad_input():
    with pytest.raises(ValueError, match="^A:"):
        principal_angles(np.ones((4, 2)), np.eye(4)[:, :2])
    with pytest.raises(ValueError, match="^B:"):
        principal_angles(np.eye(4)[:, :2], np.eye(3)[:, :2])
    with pytest.raises(ValueError, match="^A:"):
        principal_angles(np.full((4, 2), np.nan), np.eye(4)[:, :2])
    with pytest.raises(ValueError, match="^B:"):
        cross_gram(np.eye(4)[:, :2], np.eye(4)[:, :3])


def test_frame_bound_reached_by_projected_gradient_ascent():
    out = maximize_hdi(3, 1, 4, np.random.default_rng(20), n_starts=20, n_steps=150)
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
    out = maximize_hdi(d, d_k, H, np.random.default_rng(d + H), n_starts=5, n_steps=300)
    assert out.hdi.max() == pytest.approx(hdi_upper_bound(d, d_k, H), abs=1e-3)
    assert np.all(out.trace <= hdi_upper_bound(d, d_k, H) + 1e-12)


def test_frame_tightness():
    assert frame_tightness(heads.orthogonal_heads(6, 2, 3)) == pytest.approx(0.0, abs=1e-14)
    lines = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3)
    assert frame_tightness(2.0 * lines[:, :, None]) == pytest.approx(0.0, abs=1e-12)  # ranges only
    assert frame_tightness(heads.identical_heads(4, 2, 2)) > 1.0


def test_maximize_hdi_bad_input():
    with pytest.raises(ValueError, match="^n_heads:"):
        maximize_hdi(3, 1, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^d_k:"):
        maximize_hdi(3, 4, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^rng:"):
        maximize_hdi(3, 1, 4, 0)
    with pytest.raises(ValueError, match="^step:"):
        maximize_hdi(3, 1, 4, np.random.default_rng(0), step=0.0)


def test_frame_bound_not_attained_when_no_tight_fusion_frame_exists():
    """Two planes in R^3 share a line: HDI_PA <= 1/2, below the frame bound 2/3."""
    out = maximize_hdi(3, 2, 2, np.random.default_rng(3), n_starts=5, n_steps=100)
    assert hdi_upper_bound(3, 2, 2) == pytest.approx(2 / 3)
    assert out.hdi.max() == pytest.approx(0.5, abs=1e-6)
    assert np.all(out.trace <= 0.5 + 1e-12)
    assert np.all(out.tightness > 0.1)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    H=st.integers(2, 5),
    k=st.integers(1, 4),
    extra=st.integers(0, 5),
    scale=st.floats(0.05, 20.0),
)
def test_all_normalizations_at_once_and_from_the_gram_matrix_equal_each_one(seed, H, k, extra, scale):
    W = scale * np.random.default_rng(seed).standard_normal((H, k + extra, k))
    expected = [head_diversity_index(W, n) for n in NORMALIZATIONS]
    np.testing.assert_allclose(diversity.head_diversity_indices(W), expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(diversity.hdi_from_gram(diversity.block_gram(W)), expected, rtol=1e-9, atol=1e-10)


def test_all_normalizations_of_identical_and_orthogonal_heads():
    ident = np.repeat(np.eye(8)[:, [0, 1]][None], 3, axis=0)
    np.testing.assert_allclose(diversity.head_diversity_indices(ident), [1 - 1 / 2, 0, 0], atol=1e-12)
    orth = np.stack([np.eye(8)[:, [0, 1]], np.eye(8)[:, [2, 3]], np.eye(8)[:, [4, 5]]])
    np.testing.assert_allclose(diversity.head_diversity_indices(orth), [1, 1, 1], atol=1e-12)


def test_all_normalizations_name_a_rank_deficient_or_zero_head():
    W = np.stack([np.eye(5)[:, [0, 1]], np.ones((5, 2)), np.eye(5)[:, [2, 3]]])
    with pytest.raises(ValueError, match="^W: head 1 is rank deficient"):
        diversity.head_diversity_indices(W)
    W[1] = 0.0
    with pytest.raises(ValueError, match="^W: head 1 is zero"):
        diversity.head_diversity_indices(W)
    with pytest.raises(ValueError, match="^W:"):
        diversity.head_diversity_indices(np.ones((1, 4, 2)))
    with pytest.raises(ValueError, match="^W:"):
        diversity.head_diversity_indices(np.ones((2, 2, 3)))


def test_a_zero_head_is_rejected_by_every_normalization():
    W = np.stack([np.eye(4)[:, :2], np.zeros((4, 2))])
    for normalization in NORMALIZATIONS:
        with pytest.raises(ValueError, match="^W: head 1 is zero"):
            head_diversity_index(W, normalization)


@pytest.mark.parametrize("scale", [1e-200, 1e-150, 1e150, 1e200])
def test_scale_free_indices_survive_extreme_scales(scale):
    W = heads.haar_heads(6, 2, 3, np.random.default_rng(7)) @ np.diag([1.0, 0.3])  # unequal singular values
    for normalization in ("principal_angles", "rv"):
        assert head_diversity_index(scale * W, normalization) == pytest.approx(
            head_diversity_index(W, normalization), rel=1e-12
        )
    np.testing.assert_allclose(orthonormal_bases(scale * W), orthonormal_bases(W), atol=1e-14)
    if scale < 1e-100:  # the printed formula is not scale free: c^4 -> 0
        np.testing.assert_allclose(
            diversity.head_diversity_indices(scale * W)[1:], diversity.head_diversity_indices(W)[1:], rtol=1e-12
        )
        assert head_diversity_index(scale * W, "paper") == 1.0
    else:  # 1 - c^4 (...) is beyond a double: an error naming W, never -inf
        for call in (
            lambda: head_diversity_index(scale * W, "paper"),
            lambda: diversity.head_diversity_indices(scale * W),
        ):
            with pytest.raises(ValueError, match="^W: the printed HDI .* beyond the largest double"):
                call()


def test_gram_route_survives_extreme_scales():
    W = heads.haar_heads(6, 2, 3, np.random.default_rng(8))
    for scale in (1e-100, 1e60):
        np.testing.assert_allclose(
            diversity.hdi_from_gram(diversity.block_gram(scale * W))[1:],
            diversity.head_diversity_indices(W)[1:],
            rtol=1e-12,
        )
    with pytest.raises(ValueError, match="^W: the printed HDI"):  # c^4 = 1e400 in the printed index
        diversity.hdi_from_gram(diversity.block_gram(1e100 * W))


def test_rank_test_is_scale_invariant():
    A = np.eye(4)[:, :2] @ np.diag([1.0, 1e-11])  # rank deficient at RANK_RTOL = 1e-10, at every scale
    B = np.eye(4)[:, :2] @ np.diag([1.0, 1e-8])  # full rank at every scale
    for scale in (1e-200, 1.0, 1e200):
        with pytest.raises(ValueError, match="^A:"):
            orthonormal_bases(scale * A, "A")
        np.testing.assert_allclose(orthonormal_bases(scale * B), np.eye(4)[:, :2], atol=1e-14)
    for scale in (1e-100, 1.0, 1e100):  # the Gram matrix squares the scale
        with pytest.raises(ValueError, match="^W: head 1 is rank deficient"):
            diversity.gram_factors(diversity.block_gram(scale * np.stack([B, A])))


def test_orthonormal_bases_is_the_sign_fixed_qr_of_each_head():
    W = np.random.default_rng(9).standard_normal((3, 5, 2))
    Q = orthonormal_bases(W)
    for w, q in zip(W, Q):
        np.testing.assert_allclose(q, heads.orthonormalize(w), atol=0)
        R = q.T @ w
        np.testing.assert_allclose(np.tril(R, -1), 0, atol=1e-12)
        assert np.all(np.diag(R) > 0)
