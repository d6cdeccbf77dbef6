"""Heads combined as a transformer does: the "concat" rule (value projections W_V^j, output projection
W_O), its reduction to the sum rule, Thm 3.1's decomposition for it (sympy, checked on simulated
moments to rounding), and every place that names a rule accepting it."""

import numpy as np
import pytest

from mhanw import comparisons, data, decomposition, heads, montecarlo, nw, scaling
from mhanw.chapters import ch06_optimal_head_size as ch06
from mhanw.infra.params import ParameterError, check_parameters


def _sample(seed=0, n=120, d=4, T=9):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)
    return rng, X, Y, rng.standard_normal((T, d))


def test_identity_like_concat_is_the_sum_rule():
    """W_V^j = e_1 (the response) and W_O = a give Ybar + sum_j a_j (m_j - Ybar), the sum rule, for any a."""
    rng, X, Y, T = _sample()
    W = heads.haar_heads(4, 2, 3, rng)
    for a in (np.ones(3), np.array([0.5, -1.0, 2.5])):
        s = heads.ensemble_estimate(heads.HeadConfig(W, rule="sum", weights=a), X, Y, T)
        c = heads.ensemble_estimate(heads.HeadConfig(W, rule="concat", output=a), X, Y, T)
        np.testing.assert_allclose(c, s, rtol=0, atol=1e-13)
        np.testing.assert_allclose(
            heads.combine(heads.head_estimates(W, X, Y, T, 0.5), "concat", a, Y.mean()), s, atol=1e-13
        )
    cfgs = [heads.HeadConfig(W, rule="sum"), heads.HeadConfig(W, rule="concat")]
    res = montecarlo.integrated_mse(cfgs, "iso_cos", n=80, n_test=30, n_rep=4, seed=5)
    np.testing.assert_allclose(res.errors[1], res.errors[0], rtol=1e-12)


def test_contributions_equal_per_head_regressions_of_their_own_targets():
    """Head j with W_V^j, W_O^j is the NW regression of its own target (z_i - zbar) W_V^j W_O^j, plus Ybar."""
    rng, X, Y, T = _sample(1)
    W = heads.haar_heads(4, 2, 2, rng)
    V = rng.standard_normal((2, 5, 3))
    O = heads.output_projection(2, 3, rng, orthogonal=True)
    assert np.isclose(np.linalg.norm(O), np.sqrt(6))
    cfg = heads.HeadConfig(W, bandwidth=0.7, rule="concat", values=V, output=O)
    Z = heads.value_stream(X, Y)
    Zc = Z - Z.mean(axis=0)
    c = heads.concat_contributions(cfg, X, Y, T)
    for j in range(2):
        target = Zc @ V[j] @ O[j]
        np.testing.assert_allclose(c[j], Y.mean() + nw.nadaraya_watson(T @ W[j], X @ W[j], target, 0.7), atol=1e-13)
    np.testing.assert_allclose(heads.ensemble_estimate(cfg, X, Y, T), Y.mean() + (c - Y.mean()).sum(axis=0), atol=1e-13)


@pytest.mark.parametrize("kernel", heads.KERNELS)
def test_fitted_output_is_least_squares_on_leave_one_out_outputs(kernel):
    rng, X, Y, T = _sample(2)
    W = heads.haar_heads(4, 1, 3, rng)
    bw = None if kernel == "attention" else 0.9
    cfg = heads.HeadConfig(W, bandwidth=bw or 0.5, kernel=kernel, rule="concat", values="stream", output="fitted")
    Z = heads.value_stream(X, Y)
    Zc = Z - Z.mean(axis=0)
    eng = "exponential" if kernel == "attention" else kernel
    scale = cfg._scale()
    F = np.concatenate([nw._loo_mean(X @ W[j], Zc, eng, *scale) for j in range(3)], axis=1)  # (n, H (1+d))
    w = np.linalg.lstsq(F, Y - Y.mean(), rcond=None)[0].reshape(3, 5)
    if kernel != "attention":  # the public leave-one-out agrees with the internal one
        np.testing.assert_allclose(nw.leave_one_out(X @ W[0], Zc, bw, eng), F[:, :5], atol=1e-13)
    smooth = [
        np.stack([heads.head_estimates(W[j : j + 1], X, Zc[:, k], T, bw, kernel)[0] for k in range(5)], 1)
        for j in range(3)
    ]  # head j's outputs at T, (T, 1 + d)
    want = Y.mean() + sum(smooth[j] @ w[j] for j in range(3))
    np.testing.assert_allclose(heads.ensemble_estimate(cfg, X, Y, T), want, atol=1e-12)


def test_leave_one_out_excludes_the_point_itself():
    rng = np.random.default_rng(4)
    k, v = rng.standard_normal((30, 2)), rng.standard_normal(30)
    for kernel, h in (("gaussian", 0.4), ("laplace", 0.4), ("epanechnikov", 0.5), ("exponential", 1.0)):
        want = [
            nw.nadaraya_watson(k[i : i + 1], np.delete(k, i, 0), np.delete(v, i), h, kernel=kernel)[0]
            for i in range(30)
        ]
        np.testing.assert_allclose(nw.leave_one_out(k, v, h, kernel), want, atol=1e-13)
    with pytest.raises(ValueError, match="^keys: leave-one-out needs at least 2"):
        nw.leave_one_out([[0.0]], [1.0], 1.0)


def test_ensemble_parts_rebuild_every_rule():
    rng, X, Y, T = _sample(3)
    W = heads.haar_heads(4, 2, 3, rng)
    for cfg in (
        heads.HeadConfig(W),
        heads.HeadConfig(W, rule="sum", weights=[1.0, 0.5, 2.0]),
        heads.HeadConfig(W, rule="concat", values="stream", output=heads.output_projection(3, 5, rng)),
        heads.HeadConfig(W, rule="concat", output="fitted"),
    ):
        parts, w = heads.ensemble_parts(cfg, X, Y, T)
        np.testing.assert_allclose(w @ parts, heads.ensemble_estimate(cfg, X, Y, T), atol=1e-12)
        np.testing.assert_array_equal(w, cfg.part_weights())


@pytest.mark.parametrize("n_heads", [1, 2, 3])
def test_symbolic_concat_decomposition(n_heads):
    dec = decomposition.symbolic_concat_decomposition(n_heads, 1)
    assert dec.gap == 0 and dec.sum_rule_gap == 0
    wide = decomposition.symbolic_concat_decomposition(2, 3)
    assert wide.gap == 0 and wide.sum_rule_gap is None
    # the between-head covariance is the part decorrelated heads remove; it has no same-head terms
    assert all(
        str(c).split("_")[1] != str(c).split("_")[2]
        for c in wide.between_head_covariance.free_symbols
        if str(c).startswith("C_")
    )
    with pytest.raises(ValueError, match="^n_heads, n_columns:"):
        decomposition.symbolic_concat_decomposition(5, 3)


def test_symbolic_concat_equals_the_simulated_decomposition_to_rounding():
    """Empirical moments (ddof 0) of the parts over replicates, put into the sympy terms, sum to the
    empirical MSE of the ensemble to rounding, and equal bias_variance_covariance of the parts."""
    W = heads.haar_heads(3, 1, 2, np.random.default_rng(8))
    V = np.zeros((2, 4, 2))
    V[0, 0, 0], V[0, 1, 1], V[1, 0, 0], V[1, 2, 1] = 1.0, 1.0, 1.0, 1.0  # head j reads Y and x_j
    O = heads.output_projection(2, 2, np.random.default_rng(9))
    cfg = heads.HeadConfig(W, bandwidth=0.8, rule="concat", values=V, output=O)
    x = np.array([[0.3, -0.5, 0.1], [1.0, 0.2, -0.4]])
    parts, w = montecarlo.pointwise_parts(cfg, "iso_cos", x, n=70, n_rep=40, seed=11)
    assert parts.shape == (40, 1 + 2 * 3, 2)  # Ybar, then 3 used columns (Y, x1, x2) per head
    m_x = data.regression_function("iso_cos")(x)
    cols = cfg._value_columns
    dec = decomposition.symbolic_concat_decomposition(2, len(cols))
    u = np.einsum("hud,hd->hu", V[:, cols], O)
    for t in range(2):
        p = parts[:, :, t]
        mu, C = p.mean(axis=0), np.cov(p.T, ddof=0)
        terms = dec.evaluate(mu, C, m_x[t], u)
        mse = float(np.mean((p @ w - m_x[t]) ** 2))
        assert sum(terms[k] for k in dec.TERMS) == pytest.approx(mse, rel=1e-10)
        assert terms["mse"] == pytest.approx(mse, rel=1e-10)
        bvc = decomposition.bias_variance_covariance(p, m_x[t], w)
        assert bvc.bias_squared == pytest.approx(terms["bias_squared"], rel=1e-9)
        assert bvc.variance_term + bvc.covariance_term == pytest.approx(mse - terms["bias_squared"], rel=1e-9)


def test_hdi_check_runs_under_concat():
    cfgs, res = comparisons.random_configuration_imse(
        "iso_cos6", 3, seed=1, n=60, n_test=20, n_rep=3, rule="concat", output="fitted"
    )
    assert np.all(np.isfinite(res["iso_cos6"].errors)) and res["iso_cos6"].errors.shape == (4, 3)


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(rule="average", values="stream"), "values"),
        (dict(rule="sum", output="fitted"), "output"),
        (dict(rule="concat", weights=[1.0, 1.0]), "weights"),
        (dict(rule="concat", values="tokens"), "values"),
        (dict(rule="concat", values=np.zeros((2, 3, 1))), "values"),
        (dict(rule="concat", output="learned"), "output"),
        (dict(rule="concat", output=np.ones(3)), "output"),
        (dict(rule="concat", output=[1.0, np.nan]), "output"),
        (dict(rule="stack"), "rule"),
    ],
)
def test_bad_concat_configurations_name_the_argument(change, name):
    with pytest.raises(ValueError, match=rf"^{name}: ") as info:
        heads.HeadConfig(heads.orthogonal_heads(4, 2, 2), **change)
    assert "\n" not in str(info.value)


def test_rule_parameters_accept_concat():
    assert "concat" in heads.RULES and "concat" in scaling.COMBINATIONS
    m = scaling.model("M1", combination="concat")
    assert m.variance_term == scaling.model("M1", combination="none").variance_term
    defaults = dict(
        fidelity="quick",
        seed=1,
        figures_dir="f",
        macros_path="m",
        results_path="r",
        model="M1",
        bias_law="",
        variance_law="",
        combination="concat",
        regressions=["additive", "iso_cos8"],
        inputs="gaussian",
        noise="gaussian",
        sigma=0.5,
        sim_budget=8,
        sim_n=[300, 3000],
        rules=["average", "sum", "concat"],
    )
    p = check_parameters(defaults, ch06.PARAMETERS, ch06.CONSTRAINTS)
    assert tuple(p["rules"]) == ("average", "sum", "concat")
    with pytest.raises(ParameterError, match="^rules: "):  # the chapter compares average with sum
        check_parameters({**defaults, "rules": ["average", "concat"]}, ch06.PARAMETERS, ch06.CONSTRAINTS)


def test_budget_simulation_takes_concat():
    res = scaling.budget_simulation(
        "additive", 60, budget=4, bandwidths=(0.5, 1.0), rules=("sum", "concat"), n_tune=2, n_rep=3, n_test=20, seed=3
    )
    assert res.errors.shape == (2, 3, 3) and np.all(np.isfinite(res.errors))
