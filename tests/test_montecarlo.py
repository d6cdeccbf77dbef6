"""Tests of mhanw.montecarlo: integrated MSE, pointwise estimates and error moments under common random
numbers, and the paired comparisons of ImseResult."""

import numpy as np
import pytest

from mhanw import data, heads, montecarlo
from mhanw import weighting as w
from mhanw.infra import sweep

ANGLES = np.radians([0, 20, 35, 50, 65, 80])


def _result(errors):
    errors = np.asarray(errors, dtype=float)
    return montecarlo.ImseResult(errors=errors, labels=tuple("" for _ in errors))


def test_step_differences():
    E = np.array([[3.0, 4.0, 5.0], [2.0, 2.5, 4.5], [2.0, 2.5, 4.5]])
    diff, se = _result(E).steps()
    np.testing.assert_allclose(diff, [-1.0, 0.0])
    np.testing.assert_allclose(se, [np.std([-1, -1.5, -0.5], ddof=1) / np.sqrt(3), 0.0])
    diff2, _ = _result(E).steps(order=[2, 0])
    np.testing.assert_allclose(diff2, [1.0])
    with pytest.raises(ValueError, match="^order:"):
        _result(E).steps(order=[0, 3])


def test_integrated_mse_definition_and_crn():
    cfgs = [
        heads.pair_heads(0.3, 4, 2),
        heads.pair_heads(0.3, 4, 2),
        heads.HeadConfig(heads.pair_heads(1.2, 4, 2), bandwidth=0.8, rule="sum", label="sum"),
    ]
    res = montecarlo.integrated_mse(cfgs, "aniso", n=120, n_test=30, n_rep=4, seed=9)
    assert res.errors.shape == (3, 4) and res.labels == ("", "", "sum")
    np.testing.assert_array_equal(res.errors[0], res.errors[1])  # same data for every configuration
    assert tuple(res.paired_difference(0, 1)) == (0.0, 0.0)
    # replicate 2 recomputed by hand from its stream
    rng = np.random.default_rng(sweep.spawn_streams(9, 4)[2])
    s = data.draw_sample(rng, "aniso", 120, 4, n_test=30)
    for i, c in enumerate(cfgs):
        c = c if isinstance(c, heads.HeadConfig) else heads.HeadConfig(c)
        f = heads.ensemble_estimate(c, s.X, s.Y, s.X_test)
        assert res.errors[i, 2] == pytest.approx(np.mean((f - s.m_test) ** 2), rel=1e-12)
    # pointwise estimates use the same training samples
    x = s.X_test[:2]
    (est,) = montecarlo.pointwise_estimates([cfgs[0]], "aniso", x, n=120, n_rep=4, seed=9)
    assert est.shape == (4, 2, 2)
    np.testing.assert_allclose(est[2], heads.head_estimates(cfgs[0], s.X, s.Y, x, 0.5), rtol=1e-12)


def test_integrated_mse_bad_input():
    W = heads.pair_heads(0.3, 4, 2)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([], "iso_exp", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([W, heads.orthogonal_heads(6, 2, 2)], "iso_exp", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^configs:"):
        montecarlo.integrated_mse([heads.pair_heads(0.3, 2, 1)], "sin13", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^regression:"):
        montecarlo.integrated_mse([W], "sine", 10, 5, 2, 0)
    with pytest.raises(ValueError, match="^sigma:"):
        montecarlo.integrated_mse([W], "iso_exp", 10, 5, 2, 0, sigma=-1.0)
    with pytest.raises(ValueError, match="^n_test:"):
        montecarlo.integrated_mse([W], "iso_exp", 10, 0, 2, 0)
    with pytest.raises(ValueError, match="^x:"):
        montecarlo.pointwise_estimates([W], "iso_exp", np.zeros(3), 10, 2, 0)


def test_error_moments_match_integrated_mse():
    """a' M_r a is the replicate's integrated squared error of the average, on the same draws."""
    W = heads.graded_heads(ANGLES[:4], 6)
    M = montecarlo.error_moments(W, "blind", n=80, n_test=25, n_rep=5, seed=3, bandwidth=0.4)
    assert M.shape == (5, 4, 4)
    np.testing.assert_allclose(M, M.transpose(0, 2, 1), rtol=0, atol=0)
    assert np.all(np.linalg.eigvalsh(M) > -1e-12)
    weights = [w.uniform_weights(4), w.geometric_weights(4), np.array([1.3, -0.1, -0.1, -0.1])]
    configs = [heads.HeadConfig(W, bandwidth=0.4, weights=a) for a in weights]
    res = montecarlo.integrated_mse(configs, "blind", n=80, n_test=25, n_rep=5, seed=3)
    for a, errs in zip(weights, res.errors):
        np.testing.assert_allclose(np.einsum("i,rij,j->r", a, M, a), errs, rtol=1e-12)
    # replicate 1 by hand, from its stream
    rng = np.random.default_rng(sweep.spawn_streams(3, 5)[1])
    s = data.draw_sample(rng, "blind", 80, 6, n_test=25)
    e = heads.head_estimates(W, s.X, s.Y, s.X_test, 0.4) - s.m_test
    np.testing.assert_allclose(M[1], e @ e.T / 25, rtol=1e-12)


def test_error_moments_bad_input():
    W = heads.graded_heads(ANGLES[:2], 4)
    with pytest.raises(ValueError, match="^config:"):
        montecarlo.error_moments([W, W], "blind", 50, 10, 2, 0)
    with pytest.raises(ValueError, match="^config:"):
        montecarlo.error_moments(np.zeros((2, 1, 1)) + 1.0, "aniso", 50, 10, 2, 0)
    for kwargs, name in (
        (dict(n=0), "n"),
        (dict(n_test=0), "n_test"),
        (dict(n_rep=0), "n_rep"),
        (dict(sigma=-1.0), "sigma"),
    ):
        args = dict(n=50, n_test=10, n_rep=2, seed=0) | kwargs
        with pytest.raises(ValueError, match=f"^{name}:"):
            montecarlo.error_moments(W, "blind", **args)


def test_small_call_path_equals_public_path():
    """The per-replicate path of the drivers (prepared plan, unchecked draws) gives bit for bit
    what the public functions give on the same draws, also for scales that need log space."""
    from mhanw.heads import _Plan

    x = np.random.default_rng(0).standard_normal((3, 4))
    configs = [
        heads.HeadConfig(heads.pair_heads(0.5, 4, 2)),
        heads.HeadConfig(heads.pair_heads(0.9, 4, 1), kernel="attention"),
        heads.HeadConfig(heads.pair_heads(0.2, 4, 2), bandwidth=1e-200),
        heads.HeadConfig(heads.pair_heads(0.2, 4, 2), bandwidth=1e-3),
    ]
    model = data.data_model("bvc")
    for queries in (x, None):
        plan = _Plan(configs, queries=queries)
        for seed in range(3):
            s = model.draw(np.random.default_rng(seed), 400, 4, x_test=x)
            fast = model._draw(np.random.default_rng(seed), 400, 4, x_test=x, m_test=model._regression_at(x))
            np.testing.assert_array_equal(fast.Y, s.Y)
            got = plan.heads(fast.X, fast.Y, x)
            for c, est in zip(configs, got):
                want = heads.head_estimates(c.projections, s.X, s.Y, x, c.bandwidth, c.kernel, c.beta)
                np.testing.assert_array_equal(est, want)
    est = montecarlo.pointwise_estimates(configs, "bvc", x, n=400, n_rep=3, seed=2)
    for c, e in zip(configs, est):
        for r, child in enumerate(np.random.SeedSequence(2).spawn(3)):
            s = data.draw_sample(np.random.default_rng(child), "bvc", 400, 4, x_test=x)
            np.testing.assert_array_equal(
                e[r], heads.head_estimates(c.projections, s.X, s.Y, x, c.bandwidth, c.kernel, c.beta)
            )
