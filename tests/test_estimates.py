"""Tests of mhanw.infra.estimates: the estimate with its standard error and the paired comparisons."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mhanw.infra.estimates import Estimate


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), C=st.integers(2, 5), R=st.integers(3, 40))
def test_relative_change_se_is_the_delta_method(seed, C, R):
    rng = np.random.default_rng(seed)
    E = rng.gamma(2.0, 1.0, size=(C, R)) + 0.1
    rel, se = Estimate.relative(E, E[1])
    np.testing.assert_allclose(rel, E.mean(axis=1) / E[1].mean() - 1, rtol=1e-12, atol=1e-14)
    assert rel[1] == pytest.approx(0.0, abs=1e-14) and se[1] == pytest.approx(0.0, abs=1e-14)
    for c in range(C):
        r = E[c].mean() / E[1].mean()
        g = (E[c] - r * E[1]) / E[1].mean()  # linearisation of the ratio
        assert se[c] == pytest.approx(g.std(ddof=1) / np.sqrt(R), rel=1e-10, abs=1e-14)


def test_from_samples_mean_and_standard_error():
    x = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 1.0, 1.0]])
    e = Estimate.from_samples(x)
    np.testing.assert_allclose(e.mean, [3.0, 0.5])
    np.testing.assert_allclose(e.se, x.std(axis=1, ddof=1) / 2)
    t = Estimate.from_samples(x.T, axis=0)
    np.testing.assert_array_equal(t.mean, e.mean)
    np.testing.assert_array_equal(t.se, e.se)
    m, s = e[1]  # indexing and unpacking
    assert (m, s) == (0.5, pytest.approx(np.std([0, 0, 1, 1], ddof=1) / 2))


def test_paired_difference_and_z():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(50)
    b = a - 0.5 + 0.01 * rng.standard_normal(50)
    d = Estimate.paired(a, b)
    assert d.mean == pytest.approx(np.mean(a - b))
    assert d.se == pytest.approx(np.std(a - b, ddof=1) / np.sqrt(50))
    assert d.z == pytest.approx(d.mean / d.se)
    assert d.exceeds(3.0) and not Estimate.paired(b, a).exceeds(3.0)
    with pytest.raises(ValueError, match="^b:"):
        Estimate.paired(a, b[:10])


def test_a_nan_standard_error_never_reads_as_not_significant():
    one = Estimate.from_samples(np.array([[3.0], [1.0]]))  # one replicate: the s.e. is undefined
    assert np.all(np.isnan(one.se))
    assert np.all(np.isnan(one.z))  # NaN, never 0
    with pytest.raises(ValueError, match="^se:"):
        one.exceeds()
    assert np.isnan(Estimate(1.0, float("nan")).z)
    with pytest.raises(ValueError, match="^se:"):
        Estimate(0.0, float("nan")).exceeds()


def test_zero_standard_error():
    same = np.array([1.0, 2.0, 4.0])
    assert np.isnan(Estimate.paired(same, same).z)  # 0/0: a configuration against itself
    assert Estimate.paired(same + 1, same).z == np.inf
    assert Estimate.relative(same, same).se == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="^samples:"):
        Estimate.from_samples(3.0)
    with pytest.raises(ValueError, match="^samples:"):
        Estimate.from_samples(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="^se:"):
        Estimate(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="^axis:"):
        Estimate.from_samples(np.zeros((2, 3)), axis=2)
