"""Bad input that asked for unbounded work or overflowed silently: Monte Carlo calls whose sizes are each
bounded but whose product is not, sentences asked to list millions of values, training responses whose
squares overflow, and Gauss-Hermite node counts checked in wrapping numpy integers.

Each call is refused at once (before drawing or allocating) with a one-line ``ValueError`` whose message
starts with the offending argument; good input keeps its numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time

import numpy as np
import pytest

from mhanw import data, heads, locality, montecarlo, training
from mhanw.constants import MAX_WORK
from mhanw.infra import prose


def _refused(arg, call, seconds: float = 2.0):
    """``call()`` raises a one-line ValueError starting with ``arg``, within ``seconds``."""
    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        call()
    assert time.perf_counter() - start < seconds
    msg = str(info.value)
    assert re.match(rf"^{re.escape(arg)}(?!\w)", msg), msg
    assert "\n" not in msg
    return msg


W3 = heads.orthogonal_heads(4, 2, 2)
X0 = np.zeros((1, 4))

# ---------------------------------------------------------------------------------------------
# Monte Carlo: the total work of a call
# ---------------------------------------------------------------------------------------------

#: (n, n_test, n_rep): each within its own maximum, the product far beyond MAX_WORK.
OVERSIZED = [
    (10**5, 10**5, 10**4),  # weeks
    (500, 200, 10**7),  # the reference sizes with MAX_REPLICATES replicates: days
    (10**6, 10**3, 10**3),
    (np.int64(10**5), np.int32(10**5), np.uint64(10**4)),  # numpy integers: the product must not wrap
    (2**26, 1, 10**6),
]

#: The same for the fixed-point drivers, whose ``n_test`` is the number of points in ``x``.
OVERSIZED_POINTWISE = [
    (10**6, 10, 10**6),
    (10**5, 100, 10**5),
    (np.int64(10**6), np.int32(10), np.uint64(10**6)),
    (2**26, 1, 10**6),
]

ENTRY_POINTS = {
    "integrated_mse": lambda n, t, r: montecarlo.integrated_mse([W3], "zero", n, t, r, 0),
    "error_moments": lambda n, t, r: montecarlo.error_moments(W3, "zero", n, t, r, 0),
    "pointwise_estimates": lambda n, t, r: montecarlo.pointwise_estimates([W3], "zero", np.zeros((int(t), 4)), n, r, 0),
    "pointwise_parts": lambda n, t, r: montecarlo.pointwise_parts(W3, "zero", np.zeros((int(t), 4)), n, r, 0),
}


CASES = [(e, s) for e in ("integrated_mse", "error_moments") for s in OVERSIZED] + [
    (e, s) for e in ("pointwise_estimates", "pointwise_parts") for s in OVERSIZED_POINTWISE
]


@pytest.mark.parametrize("entry,sizes", CASES, ids=[f"{e}-{'x'.join(str(int(v)) for v in s)}" for e, s in CASES])
def test_a_monte_carlo_call_beyond_the_total_work_is_refused_at_once(entry, sizes):
    n, t, r = sizes
    msg = _refused("n", lambda: ENTRY_POINTS[entry](n, t, r))
    points = "x" if entry.startswith("pointwise") else "n_test"
    assert msg.startswith(f"n, {points}, n_rep:"), msg
    assert "kernel weights" in msg and f"{MAX_WORK:.0e}" in msg


def test_a_data_model_is_bounded_as_a_name_is():
    model = data.data_model("zero", sigma=0.5)
    _refused("n", lambda: montecarlo.integrated_mse([W3, W3], model, 10**5, 10**4, 10**3, 0))


def test_a_concat_head_with_a_fitted_output_counts_its_leave_one_out_weights():
    plain = heads.HeadConfig(W3)
    fitted = heads.HeadConfig(W3, rule="concat", output="fitted")
    n, t, r = 10**5, 1, 100
    assert montecarlo._work([plain], n, t, r, 4) < MAX_WORK < montecarlo._work([fitted], n, t, r, 4)
    _refused("n", lambda: montecarlo.integrated_mse([fitted], "zero", n, t, r, 0))


#: The largest Monte Carlo calls of the chapters at paper fidelity: (heads per configuration,
#: configurations, n, evaluation points, replicates, d).
PAPER_CALLS = {
    "ch02 Haar heads": (4, 1, 400, 5, 20_000, 6),
    "ch03 closed form, n = 8000": (11, 3, 8000, 1, 10_000, 2),
    "ch04 random configurations": (3, 24, 400, 200, 600, 6),
    "ch04 star family": (4, 7, 500, 300, 200, 10),
    "ch07 graded heads": (7, 1, 500, 200, 2000, 8),
    "ch08 star family": (4, 6, 500, 400, 300, 10),
    "ch08 pair family": (2, 10, 2000, 1, 4000, 2),
}


@pytest.mark.parametrize("call", sorted(PAPER_CALLS))
def test_every_paper_call_is_far_below_the_bound(call):
    H, C, n, t, r, d = PAPER_CALLS[call]
    configs = [
        heads.HeadConfig(heads.orthogonal_heads(max(d, H), 1, H)[:, :d] if H > d else heads.orthogonal_heads(d, 1, H))
    ] * C
    assert montecarlo._work(configs, n, t, r, d) * 100 < MAX_WORK


def test_the_work_is_a_python_int_that_does_not_wrap():
    big = np.int64(2**40)
    total = montecarlo._work([heads.HeadConfig(W3)], big, big, big, 4)
    assert isinstance(total, int) and total > 2**120


def test_good_sizes_still_run_with_the_same_numbers():
    a = montecarlo.integrated_mse([W3], "sin13", 50, 20, 3, 0)
    b = montecarlo.integrated_mse([W3], "sin13", np.int64(50), np.int32(20), np.uint8(3), 0)
    np.testing.assert_array_equal(a.errors, b.errors)


@pytest.mark.parametrize("entry", ["integrated_mse", "error_moments"])
@pytest.mark.parametrize("expr", ["1e300", "1e200*(1 + x1**2)"])
def test_noise_too_large_to_square_names_the_noise_not_the_regression(entry, expr):
    model = data.data_model("zero", noise=f"heteroscedastic:{expr}", sigma=1.0)
    call = getattr(montecarlo, entry)
    first = [W3] if entry == "integrated_mse" else W3
    with np.errstate(all="ignore"):
        msg = _refused("regression", lambda: call(first, model, 50, 10, 2, 0))
    assert "heteroscedastic" in msg and "'zero'" not in msg


@pytest.mark.parametrize("entry", ["integrated_mse", "error_moments"])
def test_a_regression_too_large_to_square_is_still_the_regression(entry):
    call = getattr(montecarlo, entry)
    first = [W3] if entry == "integrated_mse" else W3
    with np.errstate(all="ignore"):
        msg = _refused("regression", lambda: call(first, "1e200*x1", 50, 10, 2, 0))
    assert "'1e200*x1'" in msg and "noise" not in msg


# ---------------------------------------------------------------------------------------------
# prose: what a sentence can list
# ---------------------------------------------------------------------------------------------


def _endless():
    return itertools.count()


HUGE = {
    "range(10**8)": lambda: range(10**8),
    "range(10**12)": lambda: range(10**12),
    "endless iterator": _endless,
    "10001 values": lambda: list(range(prose.MAX_ITEMS + 1)),
}


@pytest.mark.parametrize("values", sorted(HUGE))
def test_ranges_refuses_more_values_than_a_sentence_lists(values):
    _refused("values", lambda: prose.ranges(HUGE[values]()))


@pytest.mark.parametrize("values", sorted(HUGE))
def test_join_list_refuses_more_items_than_a_sentence_lists(values):
    _refused("items", lambda: prose.join_list(HUGE[values]()))


@pytest.mark.parametrize("n", [prose.MAX_ITEMS + 1, 10**8])
def test_group_by_verdict_refuses_more_pairs_than_a_sentence_lists(n):
    _refused("pairs", lambda: prose.group_by_verdict(("a", "holds") for _ in range(n)))
    _refused("pairs", lambda: prose.group_by_verdict(iter(lambda: ("a", "holds"), None)))


def test_lists_up_to_the_bound_are_said():
    assert prose.ranges(range(prose.MAX_ITEMS)) == f"0-{prose.MAX_ITEMS - 1}"
    assert prose.ranges(iter([1, 2, 3, 5, 7, 8])) == "1-3, 5, 7-8"
    assert prose.join_list(str(i) for i in range(3)) == "0, 1 and 2"
    assert prose.group_by_verdict(iter([("a", "holds"), ("b", "holds")])) == "a and b: holds"


@pytest.mark.parametrize("k", [10**18, 10**400, np.uint64(2**64 - 1)])
def test_counts_are_bounded_by_their_digits(k):
    _refused("k", lambda: prose.number_word(k))
    _refused("n", lambda: prose.count_of(1, k))


# ---------------------------------------------------------------------------------------------
# training: responses whose squared errors overflow
# ---------------------------------------------------------------------------------------------

S = data.draw_sample(np.random.default_rng(0), "sin13", 40, 4, n_test=10)
W_TRAIN = heads.orthogonal_heads(4, 2, 2)
LARGE = [1e101, 1e155, 1e160, 1e200, 1e300]


@pytest.mark.parametrize(
    "combination,values", [("average", "response"), ("sum", "response"), ("concat", "response"), ("concat", "stream")]
)
@pytest.mark.parametrize("scale", LARGE)
@pytest.mark.parametrize("gradient", [True, False])
def test_loo_loss_refuses_responses_whose_squares_overflow(scale, combination, values, gradient):
    _refused("Y", lambda: training.loo_loss(W_TRAIN, S.X, S.Y * scale, 0.5, combination, values, gradient=gradient))


@pytest.mark.parametrize("field", ["Y", "m_test"])
@pytest.mark.parametrize("scale", LARGE)
@pytest.mark.parametrize("call", ["fresh_error", "error_correlation", "train_heads"])
def test_a_sample_whose_squares_overflow_is_refused(call, scale, field):
    bad = dataclasses.replace(S, **{field: getattr(S, field) * scale})
    run = {
        "fresh_error": lambda: training.fresh_error(W_TRAIN, bad, 0.5),
        "error_correlation": lambda: training.error_correlation(W_TRAIN, bad, 0.5),
        "train_heads": lambda: training.train_heads(W_TRAIN, bad, 0.5, n_steps=2),
    }[call]
    _refused(f"sample.{field}", run)


@pytest.mark.parametrize("field", ["X", "Y", "X_test", "m_test"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("call", ["fresh_error", "error_correlation", "train_heads"])
def test_a_sample_with_nan_or_inf_is_refused(call, value, field):
    arr = getattr(S, field).copy()
    arr.flat[0] = value
    bad = dataclasses.replace(S, **{field: arr})
    run = {
        "fresh_error": lambda: training.fresh_error(W_TRAIN, bad, 0.5),
        "error_correlation": lambda: training.error_correlation(W_TRAIN, bad, 0.5),
        "train_heads": lambda: training.train_heads(W_TRAIN, bad, 0.5, n_steps=1),
    }[call]
    _refused(f"sample.{field}", run)


def test_a_sample_with_too_few_responses_is_refused():
    bad = dataclasses.replace(S, Y=S.Y[:5])
    _refused("sample.Y", lambda: training.fresh_error(W_TRAIN, bad, 0.5))


@pytest.mark.parametrize(
    "combination,values", [("average", "response"), ("sum", "response"), ("concat", "response"), ("concat", "stream")]
)
def test_a_gradient_that_overflows_names_the_inputs(combination, values):
    # each within its bound, their product beyond a double: inputs near 1e120, responses near 1e90
    with np.errstate(all="ignore"):
        _refused("X", lambda: training.loo_loss(W_TRAIN * 1e-120, S.X * 1e120, S.Y * 1e90, 0.5, combination, values))


def test_tiny_errors_give_their_correlation_not_nan():
    tiny = dataclasses.replace(S, Y=S.Y * 1e-300, m_test=S.m_test * 1e-300)
    got = training.error_correlation(W_TRAIN, tiny, 0.5)
    assert np.isfinite(got)
    assert got == pytest.approx(training.error_correlation(W_TRAIN, S, 0.5), rel=1e-6)


def test_responses_at_ordinary_scales_keep_their_numbers():
    a = training.loo_loss(W_TRAIN, S.X, S.Y * 1e90, 0.5)
    b = training.loo_loss(W_TRAIN, S.X, S.Y, 0.5)
    assert np.isfinite(a.loss) and np.all(np.isfinite(a.grad))
    assert a.loss == pytest.approx(b.loss * 1e180, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# locality: Gauss-Hermite nodes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "nodes",
    [
        np.int32(2**16),
        np.int64(2**62),
        np.uint64(2**64 - 1),
        np.int64(2**32),
        2**16,
        10**400,
        371,
        500,
        locality.MAX_NODES + 1,
    ],
)
def test_too_many_nodes_are_refused_before_allocating(nodes):
    _refused("nodes", lambda: locality.tilted_mean("zero", np.ones(2), nodes=nodes))
    _refused("nodes", lambda: locality.tilted_mean("sin(x1)", 0.5, nodes=nodes))


@pytest.mark.parametrize("nodes,d", [(2, 21), (2, 10**4), (32, 5), (np.uint8(32), 5), (1024, 2)])
def test_a_tensor_rule_beyond_its_points_is_refused(nodes, d):
    _refused("nodes", lambda: locality.tilted_mean("zero", np.full(d, 0.1), nodes=nodes))


@pytest.mark.parametrize("nodes", [True, 2.0, "40", None, 1, 0, -3])
def test_nodes_that_are_no_count_are_refused(nodes):
    _refused("nodes", lambda: locality.tilted_mean("zero", np.ones(2), nodes=nodes))


@pytest.mark.parametrize("nodes", [np.int16(40), np.uint64(40), 40])
def test_good_nodes_keep_their_numbers(nodes):
    assert locality.tilted_mean("sin(x1)", 0.7, nodes=nodes) == locality.tilted_mean("sin(x1)", 0.7)


def test_the_largest_node_count_gives_a_finite_mean():
    got = locality.tilted_mean("sin(x1)", 1.0, nodes=locality.MAX_NODES)
    assert got == pytest.approx(locality.tilted_sine_limit(1.0), abs=1e-12)
    assert locality.tilted_mean("zero", np.full(4, 0.1), nodes=32) == 0.0
