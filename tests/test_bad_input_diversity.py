"""Bad input to the head geometry and the estimators (`mhanw.diversity`, `mhanw.nw`,
`mhanw.decomposition`): heads at extreme scales, unbounded steps, missing or
overflowing arguments.  A finite input gives the right finite value or a
``ValueError`` naming the argument, never NaN, inf or a raw numpy error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mhanw import decomposition as Dec
from mhanw import diversity as V
from mhanw import heads, nw

IDENTICAL = heads.identical_heads(4, 2, 2)


@pytest.mark.parametrize("scale", [1e100, 1e300])
def test_printed_hdi_beyond_a_double_names_w(scale):
    # identical heads times c: 1 - c^4/d_k, which was -inf
    for call in (
        lambda: V.head_diversity_index(scale * IDENTICAL, "paper"),
        lambda: V.head_diversity_indices(scale * IDENTICAL),
    ):
        with pytest.raises(ValueError, match=r"^W: the printed HDI .*beyond the largest double"):
            call()
    assert V.head_diversity_index(scale * IDENTICAL, "principal_angles") == 0.0


@given(st.integers(-250, 250))
def test_printed_hdi_is_exact_wherever_it_is_a_double(log2_scale):
    c = 2.0**log2_scale
    value = V.head_diversity_index(c * IDENTICAL, "paper")
    assert np.isfinite(value)
    assert value == pytest.approx(1.0 - c**4 / 2, rel=1e-15, abs=1e-15)  # d_k = 2


def test_printed_hdi_whose_pair_terms_overflow_but_whose_mean_does_not():
    # identical orthonormal heads times c = 2^255 in d_k = 1024: the pair term ||W_j^T W_j'||^2 = c^4 d_k
    # = 2^1030 overflows (the index was -inf), the index 1 - c^4/d_k = 1 - 2^1010 does not
    W = heads.identical_heads(1024, 1024, 2) * 2.0**255
    assert V.head_diversity_index(W, "paper") == pytest.approx(1.0 - 2.0**1020 / 1024, rel=1e-12)


def test_block_gram_overflow_names_w():
    with pytest.raises(ValueError, match=r"^W: .*beyond the largest double"):  # was a silent inf
        V.block_gram(1e200 * IDENTICAL)


@pytest.mark.parametrize("step", [1.5, 1e300])
def test_maximize_hdi_bounds_its_step(step):
    # step = 1e300 ran and ended at HDI 0.002 where 8/9 is reachable
    with pytest.raises(ValueError, match=r"^step: .*\(0, 1\]"):
        V.maximize_hdi(3, 1, 4, np.random.default_rng(0), n_starts=1, n_steps=3, step=step)


@pytest.mark.parametrize(
    "kwargs,name", [(dict(n_starts=10**12), "n_starts"), (dict(n_steps=10**12), "n_steps"), (dict(d=10**12), "d")]
)
def test_maximize_hdi_refuses_huge_sizes(kwargs, name):
    args = dict(d=3, d_k=1, n_heads=4, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ValueError, match=rf"^{name}: .*exceeds"):
        V.maximize_hdi(**args)


# ---------------------------------------------------------------- the softmax engine


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(kernel="cosine", bandwidth=1.0), "kernel"),
        (dict(kernel="gaussian", bandwidth=0.0), "bandwidth"),  # gave (inf, 0)
        (dict(kernel="gaussian", bandwidth=np.nan), "bandwidth"),  # gave (nan, 0)
        (dict(kernel="gaussian", bandwidth="1"), "bandwidth"),
        (dict(kernel="gaussian"), "bandwidth"),
        (dict(kernel="exponential", beta=np.inf), "beta"),
        (dict(kernel="exponential", beta=1j), "beta"),
    ],
)
def test_logit_scale_checks_its_arguments(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        nw.logit_scale(**kwargs)


def test_logit_scale_is_unchanged_for_good_arguments():
    mant, expo = nw.logit_scale("gaussian", bandwidth=0.3)
    assert mant * 2.0**expo == 1 / (0.3 * 0.3)
    assert nw.logit_scale("exponential", beta=-2.5) == (-0.625, 2)


@pytest.mark.parametrize(
    "call", [lambda q, k: nw.softmax_attention(q, k, None), lambda q, k: nw.nadaraya_watson(q, k, None, 0.5)]
)
def test_missing_values_are_named(call):
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"^values: "):  # was TypeError: 'NoneType' object is not subscriptable
        call(q, q)


@pytest.mark.parametrize(
    "bad,message",
    [
        (np.ones((2, 3)) * 1j, "complex"),
        (np.ones((2, 3), bool), "booleans"),
        (np.array([["a"] * 3]), "strings"),
        ([[1.0, 2.0], [3.0]], "list"),
    ],
)
def test_dtype_check_is_the_shared_one(bad, message):
    with pytest.raises(ValueError, match=rf"^queries: expected an array of real numbers.*{message}"):
        nw.softmax_attention(bad, np.ones((4, 3)), np.ones(4))


# ---------------------------------------------------------------- the decomposition


EST = np.random.default_rng(5).standard_normal((30, 3, 2))


def test_overflowing_weighted_terms_name_weights():
    with pytest.raises(ValueError, match=r"^weights: .*overflow"):  # were inf and NaN terms
        Dec.bias_variance_covariance(EST, np.zeros(2), [1e300, 1.0, -1e300])


@pytest.mark.parametrize("sx,sy", [(1e300, 1.0), (1e-300, 1e300), (2.0**-1070, 1.0), (1e150, 1e150)])
def test_covariance_with_se_at_extreme_scales(sx, sy):
    x, y = EST[:, 0, 0], EST[:, 0, 0] + EST[:, 1, 0]
    cov, se = Dec.covariance_with_se(x, y)
    got_cov, got_se = Dec.covariance_with_se(sx * x, sy * y)  # the s.e. was inf at 1e300
    assert np.isfinite(got_cov) and np.isfinite(got_se)
    if sx > 1e-300:
        assert got_cov == pytest.approx(cov * sx * sy, rel=1e-12)
        assert got_se == pytest.approx(se * sx * sy, rel=1e-12)


def test_covariance_beyond_a_double_is_named():
    with pytest.raises(ValueError, match=r"^x: .*beyond the largest double"):
        Dec.covariance_with_se(1e300 * EST[:, 0, 0], 1e300 * EST[:, 0, 0])


@pytest.mark.parametrize("estimates", [None, True, 1.0, np.float64(2.0), "abc", np.ones(3)])
def test_breiman_quantities_names_estimates(estimates):
    with pytest.raises(ValueError, match=r"^estimates: "):  # was IndexError
        Dec.breiman_quantities(estimates, 0.0)


@pytest.mark.parametrize("arrays", [None, 3.0, True, "abc", object()])
def test_jackknife_names_arrays(arrays):
    with pytest.raises(ValueError, match=r"^arrays: "):  # was TypeError: not iterable
        Dec.jackknife(np.mean, arrays)


@given(st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_covariance_with_se_scales_exactly_or_names_x(log2_x, log2_y):
    x, y = EST[:, 0, 0], EST[:, 0, 0] + EST[:, 1, 0]
    cov, se = Dec.covariance_with_se(x, y)
    sx, sy = 2.0**log2_x, 2.0**log2_y
    try:
        got_cov, got_se = Dec.covariance_with_se(sx * x, sy * y)
    except ValueError as exc:  # only when the covariance itself is beyond a double
        assert str(exc).startswith("x: ") and log2_x + log2_y > 1000
        return
    assert np.isfinite(got_cov) and np.isfinite(got_se)
    if -1000 < log2_x + log2_y < 1000 and max(log2_x, log2_y) < 1000 and min(log2_x, log2_y) > -1000:
        assert got_cov == pytest.approx(cov * sx * sy, rel=1e-12)
        assert got_se == pytest.approx(se * sx * sy, rel=1e-12)


@pytest.mark.parametrize("kernel", ["gausian", None, "", 3])
def test_engine_rejects_an_unknown_kernel(kernel):
    # any kernel but "gaussian" silently ran the exponential kernel
    q, k, v = np.zeros((1, 1, 2)), np.ones((1, 3, 2)), np.ones((1, 3, 1))
    with pytest.raises(ValueError, match=r"^kernel: expected one of"):
        nw.weighted_mean(q, k, v, kernel, (1.0, 0))
    with pytest.raises(ValueError, match=r"^kernel: expected one of"):
        nw.ProjectedHeads(np.ones((1, 2, 2)), kernel, (1.0, 0))


@pytest.mark.parametrize("arg", ["q", "k", "v"])
@pytest.mark.parametrize("bad", [None, 3, "x", np.ones((3, 2)), np.ones((1, 3, 2), dtype=int)])
def test_engine_rejects_non_arrays_naming_them(arg, bad):
    # were AttributeError: 'NoneType' object has no attribute 'dtype'
    args = dict(q=np.zeros((1, 1, 2)), k=np.ones((1, 3, 2)), v=np.ones((1, 3, 1)))
    args[arg] = bad
    with pytest.raises(ValueError, match=rf"^{arg}: expected a 3-D float array"):
        nw.weighted_mean(args["q"], args["k"], args["v"], "gaussian", (1.0, 0))
