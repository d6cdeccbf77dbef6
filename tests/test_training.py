"""Training heads on the leave-one-out loss (mhanw.training): the loss, its analytic gradient against
finite differences, the penalty, and the descent."""

import numpy as np
import pytest

from mhanw import data, diversity, heads, nw, training


def _sample(seed=0, n=60, d=4, regression="aniso"):
    return data.draw_sample(np.random.default_rng(seed), regression, n, d, n_test=50)


@pytest.mark.parametrize(
    "combination, values", [("average", "response"), ("sum", "response"), ("concat", "response"), ("concat", "stream")]
)
@pytest.mark.parametrize("penalty", [0.0, 0.7])
def test_gradient_matches_finite_differences(combination, values, penalty):
    s = _sample()
    rng = np.random.default_rng(1)
    W = 0.8 * rng.standard_normal((3, 4, 2))
    res = training.loo_loss(W, s.X, s.Y, 0.6, combination, values, penalty)
    for _ in range(3):
        E = rng.standard_normal(W.shape)
        eps = 1e-6
        up = training.loo_loss(W + eps * E, s.X, s.Y, 0.6, combination, values, penalty, gradient=False).loss
        down = training.loo_loss(W - eps * E, s.X, s.Y, 0.6, combination, values, penalty, gradient=False).loss
        fd = (up - down) / (2 * eps)
        assert np.sum(res.grad * E) == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_loss_is_the_leave_one_out_error():
    """Average: (1/n) sum_i (mean_j m_j^(-i)(X_i) - Y_i)^2 with the library's leave-one-out NW; concat:
    the least-squares fit of the centred response on the heads' leave-one-out outputs."""
    s = _sample(2)
    W = heads.haar_heads(4, 2, 2, np.random.default_rng(3))
    loo = np.stack([nw.leave_one_out(s.X @ W[j], s.Y, 0.6) for j in range(2)])
    res = training.loo_loss(W, s.X, s.Y, 0.6)
    assert res.loss == pytest.approx(np.mean((loo.mean(axis=0) - s.Y) ** 2), rel=1e-12)
    assert res.fit == res.loss and res.penalty == 0.0 and res.output is None
    c = training.loo_loss(W, s.X, s.Y, 0.6, "concat", "response")
    Yc = s.Y - s.Y.mean()
    F = loo.T - s.Y.mean()
    a = np.linalg.lstsq(F, Yc, rcond=None)[0]
    assert c.loss == pytest.approx(np.mean((F @ a - Yc) ** 2), rel=1e-10)
    np.testing.assert_allclose(c.output[:, 0], a, rtol=1e-10)
    # the sum rule, Ybar + sum_j (m_j - Ybar): concat of the shared response with W_O fixed at ones
    total = training.loo_loss(W, s.X, s.Y, 0.6, "sum")
    assert total.loss == pytest.approx(np.mean((s.Y.mean() + (loo - s.Y.mean()).sum(axis=0) - s.Y) ** 2), rel=1e-12)
    fixed = heads.HeadConfig(W, bandwidth=0.6, rule="concat")  # W_O = ones
    np.testing.assert_allclose(
        training.fresh_error(W, s, 0.6, "sum"),
        np.mean((heads.ensemble_estimate(fixed, s.X, s.Y, s.X_test) - s.m_test) ** 2),
        rtol=1e-10,
    )


def test_self_matching_does_not_pay():
    """Scaling a head up makes its in-sample error vanish (the self weight dominates), not its LOO error."""
    s = _sample(4, n=80)
    W = heads.haar_heads(4, 2, 1, np.random.default_rng(5))
    big = 50.0 * W
    in_sample = np.mean((heads.head_estimates(big, s.X, s.Y, s.X, 0.6)[0] - s.Y) ** 2)
    assert in_sample < 1e-6
    assert training.loo_loss(big, s.X, s.Y, 0.6).loss > 0.5 * np.var(s.Y)


def test_penalty_is_pairs_times_one_minus_hdi():
    rng = np.random.default_rng(6)
    W = rng.standard_normal((4, 5, 2))
    value, grad = training.orthogonality_penalty(W)
    assert value == pytest.approx(6 * (1 - diversity.head_diversity_index(W)), rel=1e-12)
    assert training.orthogonality_penalty(heads.orthogonal_heads(4, 2, 2))[0] == pytest.approx(0.0, abs=1e-15)
    # scale free: the gradient is orthogonal to each head
    assert np.allclose(np.einsum("hdk,hdk->h", grad, W), 0.0, atol=1e-12)


def test_descent_lowers_the_loss_and_records_the_path():
    s = _sample(7)
    W0 = heads.haar_heads(4, 2, 2, np.random.default_rng(8))
    p = training.train_heads(W0, s, 0.6, n_steps=12, record_every=4)
    np.testing.assert_array_equal(p.steps, [0, 4, 8, 12])
    assert np.all(np.diff(p.loss) <= 1e-12) and p.loss[-1] < p.loss[0]
    assert p.hdi[0] == pytest.approx(diversity.head_diversity_index(W0))
    assert p.hdi[-1] == pytest.approx(diversity.head_diversity_index(p.final))
    assert p.imse[0] == pytest.approx(training.fresh_error(W0, s, 0.6))
    assert p.error_corr[0] == pytest.approx(training.error_correlation(W0, s, 0.6))
    assert p.hdi_circuit[0] == pytest.approx(p.hdi[0])  # orthonormal starts: circuits and keys agree
    np.testing.assert_array_equal(p.initial, W0)
    again = training.train_heads(W0, s, 0.6, n_steps=12, record_every=4)
    np.testing.assert_array_equal(again.final, p.final)  # deterministic


def test_a_converged_path_keeps_its_grid():
    """A path that stops descending repeats its last state at the remaining recorded steps.  A zero
    response makes the loss and its gradient exactly 0 (a constant 2.0 leaves rounding noise, whose
    descent steps depend on the machine's exp), so the path stops at once."""
    s = _sample(9)
    s0 = data.Sample(X=s.X, Y=np.zeros_like(s.Y), X_test=s.X_test, m_test=s.m_test)  # zero response
    W0 = heads.haar_heads(4, 2, 2, np.random.default_rng(10))
    p = training.train_heads(W0, s0, 0.6, n_steps=6, record_every=2)
    np.testing.assert_array_equal(p.steps, [0, 2, 4, 6])
    assert p.accepted == 0 and p.loss.max() == 0.0
    np.testing.assert_array_equal(p.final, W0)
    assert np.all(p.hdi == p.hdi[0]) and np.all(p.imse == p.imse[0])


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(W=np.zeros((2, 3, 2))), "W"),
        (dict(bandwidth=0.0), "bandwidth"),
        (dict(combination="max"), "combination"),
        (dict(values="tokens", combination="concat"), "values"),
        (dict(penalty=-1.0), "penalty"),
        (dict(Y=np.zeros(5)), "Y"),
    ],
)
def test_bad_input_names_the_argument(change, name):
    s = _sample()
    args = dict(W=heads.orthogonal_heads(4, 2, 2), X=s.X, Y=s.Y, bandwidth=0.6)
    args.update(change)
    with pytest.raises(ValueError, match=rf"^{name}: "):
        training.loo_loss(**args)
