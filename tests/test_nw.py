"""Theorem 2.1 at the library level: attention equals NW (T2.1a, T2.1b), stability, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mhanw import nw

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@st.composite
def qkv(draw):
    d_k = draw(st.integers(1, 8))
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 12))
    d_v = draw(st.integers(1, 3))
    q = draw(arrays(np.float64, (m, d_k), elements=finite))
    k = draw(arrays(np.float64, (n, d_k), elements=finite))
    v = draw(arrays(np.float64, (n, d_v), elements=finite))
    return q, k, v


@given(qkv(), st.floats(0.05, 20))
def test_attention_is_exponential_nw_for_any_shapes_and_scales(data, scale):
    q, k, v = data
    att = nw.softmax_attention(q, k, v, scale=scale)
    loop = nw.nadaraya_watson_loop(q, k, v, lambda a, b: np.exp(scale * (a @ b)))
    assert np.max(np.abs(att - loop)) <= 1e-12 * max(1.0, np.abs(v).max())


@given(qkv())
def test_default_scale_is_nw_with_bandwidth_sqrt_dk_bit_for_bit(data):
    q, k, v = data
    d_k = q.shape[1]
    assert np.array_equal(
        nw.softmax_attention(q, k, v), nw.nadaraya_watson(q, k, v, bandwidth=np.sqrt(d_k), kernel="exponential")
    )


@given(qkv())
def test_equal_norm_keys_give_gaussian_nw_with_bandwidth_dk_to_quarter(data):
    q, k, v = data
    d_k = q.shape[1]
    norms = np.linalg.norm(k, axis=1, keepdims=True)
    k = np.where(norms > 1e-3, k / np.maximum(norms, 1e-3), 1.0)  # tiny keys -> (1, ..., 1)
    k = k / np.linalg.norm(k, axis=1, keepdims=True) * np.sqrt(d_k)
    att = nw.softmax_attention(q, k, v)
    gauss = nw.nadaraya_watson(q, k, v, bandwidth=d_k**0.25, kernel="gaussian")
    assert np.max(np.abs(att - gauss)) <= 1e-12 * max(1.0, np.abs(v).max())


@pytest.mark.parametrize("d_k", [1, 4, 16, 64])
def test_T21a_identity_against_the_loop(d_k):
    rng = np.random.default_rng(d_k)
    q, k, v = rng.standard_normal((7, d_k)), rng.standard_normal((50, d_k)), rng.standard_normal((50, 3))
    loop = nw.nadaraya_watson_loop(q, k, v, lambda a, b: np.exp(a @ b / np.sqrt(d_k)))
    assert np.max(np.abs(nw.softmax_attention(q, k, v) - loop)) <= 1e-13


@pytest.mark.parametrize("d_k", [4, 16])
def test_T21b_literal_bandwidth_is_not_attention(d_k):
    rng = np.random.default_rng(100 + d_k)
    q, k, v = rng.standard_normal((7, d_k)), rng.standard_normal((50, d_k)), rng.standard_normal((50, 3))
    k = k / np.linalg.norm(k, axis=1, keepdims=True) * np.sqrt(d_k)
    att = nw.softmax_attention(q, k, v)
    assert np.max(np.abs(att - nw.nadaraya_watson(q, k, v, d_k**0.25))) <= 1e-13
    assert np.max(np.abs(att - nw.nadaraya_watson(q, k, v, d_k**-0.5))) >= 0.1


def test_values_may_be_one_dimensional():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 2)), rng.standard_normal((9, 2)), rng.standard_normal(9)
    out = nw.nadaraya_watson(q, k, v, 0.7)
    assert out.shape == (3,)
    assert np.allclose(out, nw.nadaraya_watson(q, k, v[:, None], 0.7)[:, 0], rtol=0, atol=1e-15)


@pytest.mark.parametrize("magnitude", [1e2, 1e4, 1e6])
def test_huge_logits_stay_finite(magnitude):
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((5, 3)) * magnitude, rng.standard_normal((40, 3)), rng.standard_normal((40, 2))
    for out in (
        nw.softmax_attention(q, k, v),
        nw.nadaraya_watson(q, k, v, 1e-3),
        nw.nadaraya_watson(q, k, v, 1e-3, kernel="exponential"),
    ):
        assert np.all(np.isfinite(out))
        assert np.all(out <= v.max(axis=0) + 1e-12) and np.all(out >= v.min(axis=0) - 1e-12)


def test_logits_of_1e4_select_the_best_key():
    k = np.array([[1.0], [0.0]])
    out = nw.softmax_attention(np.array([[1e4]]), k, np.array([3.0, -1.0]), scale=1.0)
    assert out[0] == 3.0


def test_blocking_does_not_change_results(monkeypatch):
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((37, 3)), rng.standard_normal((101, 3)), rng.standard_normal(101)
    whole = nw.nadaraya_watson(q, k, v, 0.8)
    monkeypatch.setattr(nw, "BLOCK_ENTRIES", 500)  # blocks of 4 queries
    assert np.allclose(whole, nw.nadaraya_watson(q, k, v, 0.8), rtol=0, atol=1e-14)


def test_weights_rows_sum_to_one():
    rng = np.random.default_rng(3)
    w = nw.kernel_weights(rng.standard_normal((4, 2)), rng.standard_normal((30, 2)), 0.5)
    assert w.shape == (4, 30) and np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    a = nw.attention_weights(rng.standard_normal((4, 2)), rng.standard_normal((30, 2)))
    assert np.allclose(a.sum(axis=1), 1.0, rtol=0, atol=1e-14)


GOOD = dict(queries=np.zeros((2, 3)), keys=np.zeros((4, 3)), values=np.zeros(4))


@pytest.mark.parametrize(
    "change, argument",
    [
        (dict(queries=np.zeros(3)), "queries"),
        (dict(queries=np.zeros((0, 3))), "queries"),
        (dict(keys=np.zeros((4, 2))), "keys"),
        (dict(keys=np.zeros((0, 3))), "keys"),
        (dict(values=np.zeros(5)), "values"),
        (dict(values=np.zeros((4, 2, 2))), "values"),
        (dict(queries=np.array([[np.nan, 0, 0], [0, 0, 0]])), "queries"),
        (dict(keys=np.full((4, 3), np.inf)), "keys"),
        (dict(values=np.array([0, 0, np.nan, 0])), "values"),
        (dict(values="abc"), "values"),
    ],
)
def test_bad_arrays_name_the_argument(change, argument):
    args = {**GOOD, **change}
    for call in (
        lambda: nw.softmax_attention(**args),
        lambda: nw.nadaraya_watson(**args, bandwidth=1.0),
    ):
        with pytest.raises(ValueError, match=rf"^{argument}:"):
            call()


@pytest.mark.parametrize("bandwidth", [0.0, -1.0, np.nan, np.inf, "1", None, True])
def test_bad_bandwidth(bandwidth):
    with pytest.raises(ValueError, match=r"^bandwidth:"):
        nw.nadaraya_watson(**GOOD, bandwidth=bandwidth)


def test_unknown_kernel():
    with pytest.raises(ValueError, match=r"^kernel: expected one of 'gaussian', 'exponential', 'laplace'"):
        nw.nadaraya_watson(**GOOD, bandwidth=1.0, kernel="cosine")


@pytest.mark.parametrize("scale", [np.nan, np.inf, [1.0, 2.0], "x"])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match=r"^scale:"):
        nw.softmax_attention(**GOOD, scale=scale)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 7.0])
@pytest.mark.parametrize("kernel,bandwidth", [("gaussian", 0.5), ("gaussian", 0.05), ("exponential", 0.8)])
def test_direct_logits_are_the_rescaled_ones_bit_for_bit(monkeypatch, kernel, bandwidth, scale):
    """Moderate inputs skip the powers of two of the log-space logits; rescaling by powers of two
    changes no rounding, so leave-one-out means are identical with and without the shortcut."""
    rng = np.random.default_rng(11)
    k, v = rng.standard_normal((120, 3)) * scale, rng.standard_normal((120, 2))
    direct = (
        nw.leave_one_out(k, v, bandwidth, kernel)
        if kernel != "exponential"
        else nw._loo_mean(k, v, kernel, *nw.logit_scale(kernel, beta=bandwidth))
    )
    monkeypatch.setattr(nw, "MODERATE_EXPONENT", -1)  # every input takes the rescaled path
    rescaled = (
        nw.leave_one_out(k, v, bandwidth, kernel)
        if kernel != "exponential"
        else nw._loo_mean(k, v, kernel, *nw.logit_scale(kernel, beta=bandwidth))
    )
    assert np.array_equal(direct, rescaled)


def test_extreme_inputs_still_take_the_rescaled_path():
    assert nw._moderate(np.array([0, 3]), 2, 1.0, 0, 4)
    assert not nw._moderate(np.array([0, 200]), 2, 1.0, 0, 4)  # a query row of 2**200
    assert not nw._moderate(np.array([0]), 0, 1.0, 2000, 4)  # a scale beyond a double
    assert not nw._moderate(np.array([60]), 60, 1.0, 900, 4)  # scale x logits would overflow


@pytest.mark.parametrize(
    "keys,values,bandwidth,expected",
    [
        ([[0.0], [1.0]], [1.0, 2.0], 1e-300, [2.0, 1.0]),  # every other weight underflows next to the self weight
        ([[0.0], [1e200]], [1.0, 2.0], 1.0, [2.0, 1.0]),  # a far key: the only other key gets the weight
        ([[0.0], [1.0], [3.0]], [1.0, 2.0, 4.0], 1e-300, [2.0, 1.0, 2.0]),  # the nearest other key
    ],
)
def test_leave_one_out_in_the_limit_takes_the_nearest_other_key(keys, values, bandwidth, expected):
    np.testing.assert_array_equal(nw.leave_one_out(keys, values, bandwidth), expected)


@pytest.mark.parametrize("kernel", ["gaussian", "laplace"])
def test_leave_one_out_of_values_near_overflow_is_finite(kernel):
    np.testing.assert_array_equal(nw.leave_one_out([[0.0], [1.0], [2.0]], [1e308] * 3, 1.0, kernel), [1e308] * 3)


@pytest.mark.parametrize("kernel", ["laplace", "epanechnikov"])
def test_a_far_key_leaves_the_distances_of_the_others_intact(kernel):
    """A key of 1e200 beside keys of order 1: the others' leave-one-out estimates are those without it."""
    keys, values = [[0.0], [0.5], [3.0]], [1.0, 2.0, 3.0]
    near = nw.leave_one_out(keys, values, 1.0, kernel)
    far = nw.leave_one_out(keys + [[1e200]], values + [4.0], 1.0, kernel)
    np.testing.assert_allclose(far[:3], near, rtol=1e-14)
