"""Theorem 2.1 (c), (d): attention is not local (T2.1c) and not consistent (T2.1d)."""

import numpy as np
import pytest

from mhanw import locality

DIMS = [1, 2, 4, 8, 16, 64, 256]


def test_neff_fraction_matches_its_limit_and_stays_large():
    # 200 000 keys: the Monte Carlo error of one query's n_eff/n is about 0.006
    # here (it is about 0.02 at 20 000 keys, the size of the quick chapter).
    out = locality.neff_by_dimension(DIMS, n_keys=200_000, n_queries=20, seed=7)
    assert np.max(np.abs(out["per_query"] - out["predicted"])) <= 0.05
    assert np.all(out["mean"] >= 0.25)  # documented: non-local at every d_k
    assert np.all(np.abs(out["mean"] - out["expected"]) <= 4 * out["se"] + 0.02)


def test_expected_fraction_decreases_to_exp_minus_one():
    d = np.array([1.0, 2, 4, 16, 256, 1e6])
    f = locality.expected_neff_fraction(d)
    assert np.all(np.diff(f) < 0)
    assert f[0] == pytest.approx(3**-0.5, abs=1e-15)
    assert f[-1] == pytest.approx(np.exp(-1), abs=1e-5)


def test_effective_sample_size_bounds():
    w = np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]])
    assert np.allclose(locality.effective_sample_size(w), [1.0, 4.0])
    with pytest.raises(ValueError, match="^weights:"):
        locality.effective_sample_size(np.array([[0.5, 0.6]]))
    with pytest.raises(ValueError, match="^weights:"):
        locality.effective_sample_size(np.array([[1.5, -0.5]]))


def test_exp_kernel_converges_to_the_tilted_mean_not_to_m():
    est = locality.exp_kernel_sine_estimates([100, 1_000_000], n_rep=8, seed=11)
    limit = locality.tilted_sine_limit(1.0, 1.0)
    assert limit == pytest.approx(np.sin(1) * np.exp(-0.5), rel=1e-15)
    assert abs(est[-1].mean() - limit) <= 0.02  # documented inconsistency
    assert abs(est[-1].mean() - np.sin(1)) > 0.3


def test_estimates_share_random_numbers_across_sizes():
    a = locality.exp_kernel_sine_estimates([50, 200], n_rep=3, seed=5)
    b = locality.exp_kernel_sine_estimates([200], n_rep=3, seed=5)
    assert np.array_equal(a[1], b[0])


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(sample_sizes=[0], n_rep=2, seed=1), "sample_sizes"),
        (dict(sample_sizes=[10], n_rep=0, seed=1), "n_rep"),
        (dict(sample_sizes=[10], n_rep=2, seed=-1), "seed"),
        (dict(sample_sizes=[10], n_rep=2, seed=1, sigma=-1.0), "sigma"),
        (dict(sample_sizes=[10], n_rep=2, seed=1, beta=0.0), "beta"),
    ],
)
def test_bad_input_names_the_argument(kwargs, argument):
    with pytest.raises(ValueError, match=rf"^{argument}:"):
        locality.exp_kernel_sine_estimates(**kwargs)


def test_exp_kernel_estimates_take_a_data_model():
    from mhanw import data

    a = locality.exp_kernel_estimates([50, 200], 3, 5, data.data_model("sin(x1)", sigma=0.5))
    assert np.array_equal(a, locality.exp_kernel_sine_estimates([50, 200], n_rep=3, seed=5))


def test_a_seed_sequence_gives_the_same_estimates_every_time():
    """The drivers spawn from a copy of a SeedSequence: calling one twice on one stream repeats its numbers."""
    stream = np.random.SeedSequence(5)
    first = locality.exp_kernel_sine_estimates([50], n_rep=3, seed=stream)
    assert np.array_equal(first, locality.exp_kernel_sine_estimates([50], n_rep=3, seed=stream))
    assert np.array_equal(first, locality.exp_kernel_sine_estimates([50], n_rep=3, seed=5))
    a = locality.neff_by_dimension([2], 50, 3, stream)
    assert np.array_equal(a["per_query"], locality.neff_by_dimension([2], 50, 3, stream)["per_query"])


def test_trained_attention_neff_of_uniform_and_one_hot_maps():
    t = 5
    uniform = np.full((2, 3, t, t), 1.0 / t)
    one_hot = np.broadcast_to(np.eye(t), (2, 3, t, t)).copy()
    out = locality.trained_attention_neff([uniform, one_hot, uniform])
    assert out["per_sentence"].shape == (3, 2, 3)
    assert out["per_sentence"][0] == pytest.approx(1.0)
    assert out["per_sentence"][1] == pytest.approx(1.0 / t)
    assert out["overall"] == pytest.approx((2 + 1 / t) / 3)
    with pytest.raises(ValueError, match="^maps:"):
        locality.trained_attention_neff([uniform, np.full((1, 3, t, t), 1.0 / t)])


def test_gaussian_model_neff_tends_to_its_limit():
    out = locality.gaussian_model_neff([2000], 4, 3, seed=3)
    assert out["limit"] == pytest.approx((1 + 2 / 4) ** (-2))
    assert abs(out["overall"] - out["limit"]) < 0.05
