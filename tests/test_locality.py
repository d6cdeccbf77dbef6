"""Theorem 2.1 (c), (d): attention is not local (T2.1c) and not consistent (T2.1d)."""

import numpy as np
import pytest

from mhanw import locality
from mhanw.chapters import ch01_attention_is_nadaraya_watson as ch01

DIMS = [1, 2, 4, 8, 16, 64, 256]


def test_neff_fraction_matches_its_limit_and_stays_large():
    # 200 000 keys: the Monte Carlo error of one query's n_eff/n is about 0.006
    # here (it is about 0.02 at 20 000 keys, the size of the quick chapter).
    out = ch01.neff_by_dimension(DIMS, n_keys=200_000, n_queries=20, seed=7)
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
    est = ch01.exp_kernel_sine_estimates([100, 1_000_000], n_rep=8, seed=11)
    limit = locality.tilted_sine_limit(1.0, 1.0)
    assert limit == pytest.approx(np.sin(1) * np.exp(-0.5), rel=1e-15)
    assert abs(est[-1].mean() - limit) <= 0.02  # documented inconsistency
    assert abs(est[-1].mean() - np.sin(1)) > 0.3


def test_estimates_share_random_numbers_across_sizes():
    a = ch01.exp_kernel_sine_estimates([50, 200], n_rep=3, seed=5)
    b = ch01.exp_kernel_sine_estimates([200], n_rep=3, seed=5)
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
        ch01.exp_kernel_sine_estimates(**kwargs)
