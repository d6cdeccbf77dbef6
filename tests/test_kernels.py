"""The kernel registry of the engine: every kernel against the textbook double loop, its
normalisation, its limits, and every place that names a kernel accepting each of them."""

import math

import numpy as np
import pytest
from nbtools import declared_parameters
from scipy.integrate import quad

from mhanw import heads, montecarlo, nw
from mhanw.chapters import ch04_head_diversity_index as ch04
from mhanw.infra.params import ParameterError, check_parameters

H_BW = 0.8

#: K(q, k) for bandwidth h, written from the definitions (not from the library).
DEFINITIONS = {
    "gaussian": lambda h: lambda q, k: math.exp(-np.sum((q - k) ** 2) / (2 * h * h)),
    "exponential": lambda h: lambda q, k: math.exp(q @ k / h),
    "laplace": lambda h: lambda q, k: math.exp(-math.sqrt(np.sum((q - k) ** 2)) / h),
    "epanechnikov": lambda h: lambda q, k: max(0.0, 1.0 - np.sum((q - k) ** 2) / (h * h)),
}


def test_registry_is_the_engine_and_heads_kernels():
    assert set(DEFINITIONS) == set(nw.KERNELS) == set(nw.REGISTRY)
    assert heads.KERNELS == tuple("attention" if k == "exponential" else k for k in nw.KERNELS)
    for name, k in nw.REGISTRY.items():
        assert k.name == name and k.formula and k.bandwidth and k.normalisation


@pytest.mark.parametrize("kernel", nw.KERNELS)
@pytest.mark.parametrize("d_k", [1, 3])
def test_each_kernel_equals_the_direct_loop(kernel, d_k):
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((9, d_k)), rng.standard_normal((60, d_k)), rng.standard_normal(60)
    h = 1.6 if kernel == "epanechnikov" else H_BW  # every query has keys in its window (checked)
    assert not nw.empty_windows(q, k, h, kernel).any()
    loop = nw.nadaraya_watson_loop(q, k, v, DEFINITIONS[kernel](h))
    np.testing.assert_allclose(nw.nadaraya_watson(q, k, v, h, kernel=kernel), loop, rtol=0, atol=1e-13)
    w = nw.kernel_weights(q, k, h, kernel)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(w @ v, loop, atol=1e-13)


@pytest.mark.parametrize("kernel", ["laplace", "epanechnikov"])
def test_distance_kernels_batched_blocked_and_float32(kernel):
    """A head axis, values of several columns, blocks of a few rows and float32 give the per-head result."""
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 70, 2)), rng.standard_normal((3, 40, 2)), rng.standard_normal((3, 40, 12))
    h = 2.0
    one = np.stack([nw.nadaraya_watson_loop(q[i], k[i], v[i], DEFINITIONS[kernel](h)) for i in range(3)])
    np.testing.assert_allclose(nw.nadaraya_watson(q, k, v, h, kernel=kernel), one, atol=1e-12)
    small = nw.weighted_mean(q, k, v, kernel, nw.logit_scale(kernel, bandwidth=h), block_entries=64)
    np.testing.assert_allclose(small, one, atol=1e-12)
    f32 = nw.nadaraya_watson(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), h, kernel=kernel)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, one, atol=1e-5)


def test_coincident_points_keep_their_precision():
    """A query equal to a key (the self-match): the expansion |q|^2 + |k|^2 - 2 q.k cancels; the
    distance path recomputes such pairs, so Laplace weights still match the loop to rounding."""
    rng = np.random.default_rng(5)
    k = 30.0 + rng.standard_normal((25, 2))  # far from 0: |k|^2 ~ 1800, cancellation of 1e-13 relative
    v = rng.standard_normal(25)
    loop = nw.nadaraya_watson_loop(k, k, v, DEFINITIONS["laplace"](0.05))
    np.testing.assert_allclose(nw.nadaraya_watson(k, k, v, 0.05, kernel="laplace"), loop, atol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "epanechnikov"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_normalisation_integrates_to_one(kernel, d):
    """c_d(h) K integrates to 1 over R^d (radially: the sphere's area times the profile)."""
    h = 0.7
    spec = nw.REGISTRY[kernel]
    area = 2 * math.pi ** (d / 2) / math.gamma(d / 2)
    profile = {
        "gaussian": lambda r: math.exp(-r * r / (2 * h * h)),
        "laplace": lambda r: math.exp(-r / h),
        "epanechnikov": lambda r: max(0.0, 1 - r * r / (h * h)),
    }[kernel]
    upper = h if kernel == "epanechnikov" else 60 * h
    total = quad(lambda r: profile(r) * area * r ** (d - 1), 0, upper)[0]
    assert spec.density_constant(d, h) * total == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(ValueError, match="^kernel:"):
        nw.REGISTRY["exponential"].density_constant(d, h)


def test_empty_window_is_the_nearest_keys_mean():
    """Epanechnikov queries with no key in the window get the mean value of their nearest keys."""
    rng = np.random.default_rng(11)
    k, v = rng.standard_normal((30, 2)), rng.standard_normal(30)
    q = np.vstack([k[:3] + 0.01, [[8.0, 8.0], [-9.0, 0.5]]])  # three inside, two far outside
    empty = nw.empty_windows(q, k, 0.2)
    np.testing.assert_array_equal(empty, [False, False, False, True, True])
    est = nw.nadaraya_watson(q, k, v, 0.2, kernel="epanechnikov")
    d2 = ((q[:, None] - k[None]) ** 2).sum(-1)
    np.testing.assert_allclose(est[3:], v[d2[3:].argmin(axis=1)], atol=0)
    assert np.all(np.isfinite(est))
    # ties: two keys at the same distance share the estimate
    kt = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 5.0]])
    np.testing.assert_allclose(
        nw.nadaraya_watson([[0.0, 0.0]], kt, [1.0, 3.0, 10.0], 0.5, kernel="epanechnikov"), [2.0]
    )
    assert not nw.empty_windows(q, k, 0.2, "laplace").any()


@pytest.mark.parametrize("kernel", ["laplace", "epanechnikov"])
def test_limits_never_nan(kernel):
    """Bandwidths down to 1e-300 give the nearest key's value; inputs of 1e200 the same as of 1."""
    rng = np.random.default_rng(2)
    k, v = rng.standard_normal((20, 3)), rng.standard_normal(20)
    np.testing.assert_array_equal(nw.nadaraya_watson(k, k, v, 1e-300, kernel=kernel), v)
    big = nw.nadaraya_watson(k * 1e200, k * 1e200, v, 1e200, kernel=kernel)
    np.testing.assert_allclose(big, nw.nadaraya_watson(k, k, v, 1.0, kernel=kernel), atol=1e-12)
    tiny = nw.nadaraya_watson(k * 1e-200, k * 1e-200, v, 1e-200, kernel=kernel)
    np.testing.assert_allclose(tiny, nw.nadaraya_watson(k, k, v, 1.0, kernel=kernel), atol=1e-12)


@pytest.mark.parametrize("kernel", heads.KERNELS)
def test_head_estimates_and_monte_carlo_take_every_kernel(kernel):
    """Projection heads per kernel equal nadaraya_watson on the projected points, and the Monte Carlo
    drivers (their prepared per-replicate path) give what head_estimates gives."""
    rng = np.random.default_rng(4)
    W = heads.haar_heads(4, 2, 3, rng)
    X, Y, T = rng.standard_normal((80, 4)), rng.standard_normal(80), rng.standard_normal((6, 4))
    bw = None if kernel == "attention" else 1.2
    est = heads.head_estimates(W, X, Y, T, bandwidth=bw, kernel=kernel)
    for j in range(3):
        if kernel == "attention":
            ref = nw.softmax_attention(T @ W[j], X @ W[j], Y)
        else:
            ref = nw.nadaraya_watson(T @ W[j], X @ W[j], Y, bw, kernel=kernel)
        np.testing.assert_allclose(est[j], ref, atol=1e-13)
    cfg = heads.HeadConfig(W, bandwidth=bw if bw else 0.5, kernel=kernel)
    x = rng.standard_normal((5, 4))
    per = montecarlo.pointwise_estimates([cfg], "iso_cos", x, n=60, n_rep=3, seed=1)[0]
    from mhanw import data

    for r, ss in enumerate(np.random.SeedSequence(1).spawn(3)):
        s = data.draw_sample(np.random.default_rng(ss), "iso_cos", 60, 4, x_test=x)
        np.testing.assert_allclose(per[r], heads.head_estimates(W, s.X, s.Y, x, cfg.bandwidth, kernel), atol=1e-13)
    res = montecarlo.integrated_mse([cfg], "iso_cos", n=60, n_test=20, n_rep=3, seed=2)
    assert np.all(np.isfinite(res.errors)) and res.errors.shape == (1, 3)


@pytest.mark.parametrize("kernel", ["laplace", "epanechnikov"])
def test_far_inputs_rescaled_by_the_kernel_degree(kernel):
    """Inputs of 1e300 are rescaled by a power of two folded into the scale with the kernel's degree."""
    rng = np.random.default_rng(9)
    W = heads.haar_heads(3, 1, 2, rng)
    X, Y, T = rng.standard_normal((40, 3)), rng.standard_normal(40), rng.standard_normal((4, 3))
    ref = heads.head_estimates(W, X, Y, T, 1.5, kernel)
    far = heads.head_estimates(W, X * 2.0**900, Y, T * 2.0**900, 1.5 * 2.0**900, kernel)
    np.testing.assert_allclose(far, ref, atol=1e-12)


def test_unknown_kernels_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^kernel: expected one of .*'epanechnikov', got 'cosine'$"):
        nw.nadaraya_watson([[0.0]], [[1.0]], [1.0], 1.0, kernel="cosine")
    with pytest.raises(ValueError, match=r"^kernel:"):
        heads.HeadConfig(np.eye(2)[None], kernel="exponential")  # the heads call it "attention"
    with pytest.raises(ValueError, match=r"^bandwidth: required for kernel='laplace'"):
        heads.HeadConfig(np.eye(2)[None], kernel="laplace", bandwidth=None)


CH04_GOOD = declared_parameters(
    "04_head_diversity_index",
    fidelity="quick",
    seed=1,
    figures_dir="f",
    macros_path="m",
    results_path="r",
    n_jobs=1,
    isotropic_regressions=["iso_exp", "iso_cos"],
    anisotropic_regression="aniso",
    random_regression="iso_cos6",
    inputs="gaussian",
    noise="gaussian",
    sigma=0.5,
    n=500,
    bandwidth=0.5,
    random_n=400,
    random_bandwidth=0.6,
    random_d=6,
    random_d_k=2,
    random_H=3,
    matched_targets=[0.3, 0.6],
    matched_configs=8,
    matched_kernel="gaussian",
)


@pytest.mark.parametrize("kernel", heads.KERNELS)
def test_chapter_kernel_parameter_takes_every_kernel(kernel):
    p = check_parameters({**CH04_GOOD, "matched_kernel": kernel}, ch04.PARAMETERS, ch04.CONSTRAINTS)
    assert p["matched_kernel"] == kernel
    with pytest.raises(ParameterError, match="^matched_kernel:"):
        check_parameters({**CH04_GOOD, "matched_kernel": "cosine"}, ch04.PARAMETERS, ch04.CONSTRAINTS)
