"""The softmax engine on hostile input: no silent NaN, no crash, the exact limit where
a kernel weight is not a float, and a ValueError naming the argument for bad input.

Covers :func:`mhanw.nw.nadaraya_watson`, :func:`mhanw.nw.softmax_attention`, the
weight matrices of :mod:`mhanw.nw` and :func:`mhanw.heads.head_estimates`, which
all run :func:`mhanw.nw.weighted_mean` (Theorem 2.1's estimator and every Monte
Carlo head estimate).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mhanw import heads, nw

Q, K, V = np.array([[0.1, 0.2]]), np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([1.0, 2.0])
# q.k = 0 for key 0 and 0.3 for key 1; |q - k|^2 = 0.05 for key 0 and 1.45 for key 1


@pytest.fixture(autouse=True)
def _no_warnings():
    """A fault must not pass as a RuntimeWarning (overflow, invalid value) either."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- reproducers: the exact limit


@pytest.mark.parametrize("h", [1e-160, 1e-200, 1e-300, 5e-324])
def test_vanishing_bandwidth_gives_the_nearest_key(h):
    assert nw.nadaraya_watson(Q, K, V, h)[0] == 1.0  # key 0 is nearest
    assert nw.nadaraya_watson(Q, K, V, h, kernel="exponential")[0] == 2.0  # key 1 has the larger q.k
    np.testing.assert_array_equal(nw.kernel_weights(Q, K, h), [[1.0, 0.0]])
    np.testing.assert_array_equal(nw.kernel_weights(Q, K, h, kernel="exponential"), [[0.0, 1.0]])


def test_vanishing_bandwidth_ties_split_evenly():
    keys = np.array([[0.0, 0.0], [0.2, 0.4], [1.0, 1.0]])  # keys 0 and 1 both at distance^2 0.05
    assert nw.nadaraya_watson(Q, keys, [1.0, 3.0, 9.0], 1e-200)[0] == 2.0


def test_huge_bandwidth_gives_equal_weights():
    assert nw.nadaraya_watson(Q, K, V, 1e300)[0] == 1.5
    np.testing.assert_array_equal(nw.kernel_weights(Q, K, 1e308), [[0.5, 0.5]])


@pytest.mark.parametrize(
    "call",
    [
        lambda: nw.softmax_attention(Q * 1e200, K * 1e200, V),
        lambda: nw.softmax_attention(30 * Q, 30 * K, V, scale=1e308),
        lambda: nw.softmax_attention(Q, K, V, scale=1e308),
        lambda: nw.nadaraya_watson(Q * 1e200, K * 1e200, V, 1.0, kernel="exponential"),
    ],
)
def test_overflowing_logits_give_the_maximal_key(call):
    assert call()[0] == 2.0


def test_overflowing_negative_scale_gives_the_minimal_logit():
    np.testing.assert_array_equal(nw.attention_weights(Q, K, scale=-1e308), [[1.0, 0.0]])
    assert nw.softmax_attention(Q, K, V, scale=-1e308)[0] == 1.0
    np.testing.assert_array_equal(nw.attention_weights(Q * 1e200, K * 1e200), [[0.0, 1.0]])


def test_huge_gaussian_inputs_give_the_nearest_key():
    # |q - k|^2 of order 1e400: not a float, but the nearest key is key 0
    assert nw.nadaraya_watson(Q * 1e200, K * 1e200, V, 0.5)[0] == 1.0
    np.testing.assert_array_equal(nw.kernel_weights(Q * 1e200, K * 1e200, 0.5), [[1.0, 0.0]])


def test_float32_overflow_gives_the_limit_in_float32():
    q, k, v = (np.asarray(a, np.float32) for a in (Q * 1e30, K * 1e30, V))
    out = nw.softmax_attention(q, k, v)
    assert out.dtype == np.float32 and out[0] == 2.0


@pytest.fixture
def sample():
    rng = np.random.default_rng(7)
    W = heads.haar_heads(4, 2, 3, rng)
    X, Xt, Y = rng.standard_normal((40, 4)), rng.standard_normal((6, 4)), rng.standard_normal(40)
    return W, X, Y, Xt


def _nearest(W, X, Xt, Y):
    """Response of the nearest projected training point, per head and query, ``(H, T)``."""
    d2 = (((Xt @ W)[:, :, None, :] - (X @ W)[:, None, :, :]) ** 2).sum(axis=-1)  # (H, T, n)
    return Y[np.argmin(d2, axis=-1)]


def _best_aligned(W, X, Xt, Y):
    return Y[np.argmax(np.einsum("htk,hnk->htn", Xt @ W, X @ W), axis=-1)]


@pytest.mark.parametrize("h", [1e-160, 1e-200, 1e-300])
def test_head_estimates_vanishing_bandwidth(sample, h):
    W, X, Y, Xt = sample
    np.testing.assert_array_equal(heads.head_estimates(W, X, Y, Xt, bandwidth=h), _nearest(W, X, Xt, Y))


@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_head_estimates_inputs_far_from_one(sample, factor):
    # rescaling inputs and bandwidth together changes nothing (powers of ten: to rounding)
    W, X, Y, Xt = sample
    base = heads.head_estimates(W, X, Y, Xt, bandwidth=0.5)
    scaled = heads.head_estimates(W, X * factor, Y, Xt * factor, bandwidth=0.5 * factor)
    np.testing.assert_allclose(scaled, base, rtol=0, atol=1e-12)
    # a bandwidth of 0.5 next to points 1e200 apart: the nearest key
    if factor > 1:
        np.testing.assert_array_equal(
            heads.head_estimates(W, X * factor, Y, Xt * factor, bandwidth=0.5), _nearest(W, X, Xt, Y)
        )


def test_head_estimates_huge_projections_and_beta(sample):
    W, X, Y, Xt = sample
    np.testing.assert_array_equal(heads.head_estimates(W * 1e200, X, Y, Xt, bandwidth=0.5), _nearest(W, X, Xt, Y))
    best = _best_aligned(W, X, Xt, Y)
    np.testing.assert_array_equal(heads.head_estimates(W, X, Y, Xt, kernel="attention", beta=1e308), best)
    np.testing.assert_array_equal(heads.head_estimates(W, X * 1e200, Y, Xt * 1e200, kernel="attention"), best)


# ---------------------------------------------------------------- property: finite in, convex combination out

# any finite float: 1e+-300, subnormals, zero, both signs
anything = st.floats(allow_nan=False, allow_infinity=False)
magnitude = st.sampled_from([0.0, 5e-324, 1e-300, 1e-150, 1e-5, 1.0, 1e5, 1e150, 1e300])


@st.composite
def problems(draw, d_max=3):
    m, n, d = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, d_max))
    scale = [draw(magnitude) for _ in range(3)]
    q = draw(arrays(np.float64, (m, d), elements=st.floats(-1, 1))) * scale[0]
    k = draw(arrays(np.float64, (n, d), elements=st.floats(-1, 1))) * scale[1]
    v = draw(arrays(np.float64, (n,), elements=st.floats(-1, 1))) * scale[2]
    if draw(st.booleans()):  # also raw draws from the whole float range
        q = draw(arrays(np.float64, (m, d), elements=anything))
        v = draw(arrays(np.float64, (n,), elements=anything))
    return q, k, v


def assert_convex(out, v):
    """Finite, and between the smallest and the largest value (up to rounding)."""
    assert np.all(np.isfinite(out))
    scale = np.abs(v).max()
    if scale > 0:  # compare in units of max|V|, so that nothing overflows near 1.8e308
        out, v = out / scale, v / scale
    assert np.all(out >= v.min() - 1e-12) and np.all(out <= v.max() + 1e-12)


@settings(max_examples=300, deadline=None)
@given(problems(), st.floats(min_value=5e-324, max_value=1.7e308), st.sampled_from(["gaussian", "exponential"]))
def test_nadaraya_watson_finite_and_convex(data, h, kernel):
    q, k, v = data
    assert_convex(nw.nadaraya_watson(q, k, v, h, kernel=kernel), v)


@settings(max_examples=300, deadline=None)
@given(problems(), st.one_of(st.none(), anything))
def test_softmax_attention_finite_and_convex(data, scale):
    q, k, v = data
    assert_convex(nw.softmax_attention(q, k, v, scale=scale), v)


@settings(max_examples=200, deadline=None)
@given(problems(), st.one_of(st.none(), anything))
def test_weights_are_finite_and_sum_to_one(data, scale):
    q, k, _ = data
    w = nw.attention_weights(q, k, scale=scale)
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(problems(d_max=4), st.integers(1, 3), st.data())
def test_head_estimates_finite_and_convex(data, H, draw):
    x, X, Y = data  # queries, training inputs, responses
    d = X.shape[1]
    d_k = draw.draw(st.integers(1, d))
    W = draw.draw(arrays(np.float64, (H, d, d_k), elements=st.floats(-1, 1))) * draw.draw(magnitude)
    if draw.draw(st.booleans()):
        out = heads.head_estimates(W, X, Y, x, bandwidth=draw.draw(st.floats(min_value=5e-324, max_value=1.7e308)))
    else:
        out = heads.head_estimates(W, X, Y, x, kernel="attention", beta=draw.draw(st.one_of(st.none(), anything)))
    assert out.shape == (H, x.shape[0])
    assert_convex(out, Y)


# ---------------------------------------------------------------- bad input names the argument

BAD_DTYPES = {
    "complex": lambda a: np.asarray(a) + 1j,
    "complex64": lambda a: np.asarray(a, np.complex64),
    "bool": lambda a: np.asarray(a) > 0,
    "object": lambda a: np.asarray(a).astype(object),
    "str": lambda a: np.asarray(a).astype(str),
    "none": lambda a: np.full(np.shape(a), None),
}
NW_CALLS = {
    "nadaraya_watson": lambda q, k, v: nw.nadaraya_watson(q, k, v, 0.5),
    "exponential": lambda q, k, v: nw.nadaraya_watson(q, k, v, 0.5, kernel="exponential"),
    "softmax_attention": lambda q, k, v: nw.softmax_attention(q, k, v),
    "kernel_weights": lambda q, k, v: nw.kernel_weights(q, k, 0.5),
    "attention_weights": lambda q, k, v: nw.attention_weights(q, k),
}


def _with(argument, value):
    args = {"queries": Q, "keys": K, "values": V}
    args[argument] = value
    return args["queries"], args["keys"], args["values"]


@pytest.mark.parametrize("dtype", BAD_DTYPES)
@pytest.mark.parametrize(
    "call, argument",
    [(c, a) for c in NW_CALLS for a in ("queries", "keys", "values") if not (a == "values" and c.endswith("weights"))],
)
def test_nw_bad_dtypes(call, argument, dtype):
    bad = BAD_DTYPES[dtype]({"queries": Q, "keys": K, "values": V}[argument])
    with pytest.raises(ValueError, match=rf"^{argument}:"):
        NW_CALLS[call](*_with(argument, bad))


@pytest.mark.parametrize(
    "value, argument",
    [
        (np.float64(0.1), "queries"),  # 0-d
        (np.zeros((0, 2)), "queries"),  # empty
        (np.zeros((1, 0)), "queries"),  # no features
        (np.zeros((1, 1, 1, 2)), "queries"),  # 4-d
        (np.zeros((0, 2)), "keys"),
        (np.zeros((2, 3)), "keys"),  # d_k mismatch
        (np.zeros((1, 2, 2)), "keys"),  # head axis on keys only
        (np.zeros(3), "values"),  # n mismatch
        (np.float64(1.0), "values"),
        (np.zeros((2, 1, 1)), "values"),
        (np.array([[np.nan, 0.2]]), "queries"),
        (np.array([[0.0, 0.0], [np.inf, 1.0]]), "keys"),
        (np.array([1.0, -np.inf]), "values"),
        (np.array([[np.nan, 0.2]], np.float32), "queries"),  # the float32 fast path
        ([[0.1, 0.2], [0.3]], "queries"),  # ragged
    ],
)
def test_nw_bad_arrays(value, argument):
    for call in ("nadaraya_watson", "softmax_attention"):
        with pytest.raises(ValueError, match=rf"^{argument}:"):
            NW_CALLS[call](*_with(argument, value))


@pytest.mark.parametrize("bandwidth", [0.0, -1e-300, np.nan, np.inf, 1j, True, "0.5", None, [0.5]])
def test_nw_bad_bandwidth(bandwidth):
    for kernel in nw.KERNELS:
        with pytest.raises(ValueError, match=r"^bandwidth:"):
            nw.nadaraya_watson(Q, K, V, bandwidth, kernel=kernel)
        with pytest.raises(ValueError, match=r"^bandwidth:"):
            nw.kernel_weights(Q, K, bandwidth, kernel=kernel)


@pytest.mark.parametrize("scale", [np.nan, np.inf, -np.inf, 1j, np.array(True), "1", [1.0, 2.0]])
def test_nw_bad_scale(scale):
    with pytest.raises(ValueError, match=r"^scale:"):
        nw.softmax_attention(Q, K, V, scale=scale)
    with pytest.raises(ValueError, match=r"^scale:"):
        nw.attention_weights(Q, K, scale=scale)


HEADS_ARGS = dict(projections=np.eye(2)[None], X=K, Y=V, queries=Q, bandwidth=0.5)


@pytest.mark.parametrize("dtype", BAD_DTYPES)
@pytest.mark.parametrize("argument", ["projections", "X", "Y", "queries"])
def test_head_estimates_bad_dtypes(argument, dtype):
    args = dict(HEADS_ARGS)
    args[argument] = BAD_DTYPES[dtype](args[argument])
    with pytest.raises(ValueError, match=rf"^{argument}:"):
        heads.head_estimates(**args)


@pytest.mark.parametrize(
    "change, argument",
    [
        (dict(X=np.zeros((0, 2))), "X"),
        (dict(X=np.float64(1.0)), "X"),
        (dict(X=np.zeros((2, 3))), "X"),
        (dict(Y=np.zeros(3)), "Y"),
        (dict(Y=np.float64(1.0)), "Y"),
        (dict(Y=np.array([1.0, np.nan])), "Y"),
        (dict(queries=np.zeros((0, 2))), "queries"),
        (dict(queries=np.zeros((1, 3))), "queries"),
        (dict(queries=np.array([[np.inf, 0.0]])), "queries"),
        (dict(projections=np.zeros((1, 2, 3))), "projections"),  # d_k > d
        (dict(projections=np.eye(2)), "projections"),  # 2-d
        (dict(projections=np.full((1, 2, 2), np.nan)), "projections"),
        (dict(bandwidth=0.0), "bandwidth"),
        (dict(bandwidth=np.inf), "bandwidth"),
        (dict(bandwidth=None), "bandwidth"),
        (dict(bandwidth=1j), "bandwidth"),
        (dict(kernel="attention", beta=np.nan), "beta"),
        (dict(kernel="attention", beta=True), "beta"),
        (dict(kernel="cosine"), "kernel"),
    ],
)
def test_head_estimates_bad_input(change, argument):
    with pytest.raises(ValueError, match=rf"^{argument}:"):
        heads.head_estimates(**{**HEADS_ARGS, **change})
