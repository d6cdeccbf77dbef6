"""Dependent samples as input laws: AR(1) rows and clustered rows (mhanw.data)."""

import math

import numpy as np
import pytest
from nbtools import declared_parameters

from mhanw import covariance, data, heads, montecarlo
from mhanw.chapters import ch04_head_diversity_index as ch04
from mhanw.infra.params import ParameterError, check_parameters


def _chains(spec, R, n, d, seed=0):
    law = data.input_distribution(spec)
    return np.stack([law.sample(np.random.default_rng(s), n, d) for s in np.random.SeedSequence(seed).spawn(R)])


def test_ar1_rows_follow_the_recursion():
    Z = np.random.default_rng(3).standard_normal((40, 3))
    X = data.input_distribution("ar1:0.7").sample(np.random.default_rng(3), 40, 3)
    np.testing.assert_allclose(X[0], Z[0], rtol=0, atol=0)
    np.testing.assert_allclose(X[1:], 0.7 * X[:-1] + math.sqrt(1 - 0.49) * Z[1:], atol=1e-14)


@pytest.mark.statistical
@pytest.mark.parametrize("phi", [0.9, 0.3, -0.5])
def test_ar1_has_the_stated_autocorrelation(phi):
    """mean_i X_il X_(i+k)l estimates Corr = phi^k without bias (mean 0 and variance 1 are known); its
    standard error is that of the mean over independent chains."""
    X = _chains(f"ar1:{phi}", R=400, n=200, d=2)
    for lag in (1, 2):
        per_chain = (X[:, lag:] * X[:, :-lag]).mean(axis=(1, 2))
        est, se = per_chain.mean(), per_chain.std(ddof=1) / math.sqrt(per_chain.size)
        assert abs(est - phi**lag) < 4 * se, (lag, est, se)
    var = (X * X).mean(axis=(1, 2))
    assert abs(var.mean() - 1.0) < 4 * var.std(ddof=1) / math.sqrt(var.size)  # marginal N(0, 1) per coordinate


@pytest.mark.statistical
def test_clustered_rows_have_the_stated_intraclass_correlation():
    K, icc, n = 5, 0.4, 50
    X = _chains(f"clustered:{K}:{icc}", R=400, n=n, d=2)
    group = np.arange(n) * K // n
    same = (group[:, None] == group[None, :]) & ~np.eye(n, dtype=bool)
    other = group[:, None] != group[None, :]
    prod = np.einsum("rid,rjd->rij", X, X) / 2  # mean over the 2 coordinates of X_il X_jl
    for mask, want in ((same, icc), (other, 0.0)):
        per_rep = prod[:, mask].mean(axis=1)
        est, se = per_rep.mean(), per_rep.std(ddof=1) / math.sqrt(per_rep.size)
        assert abs(est - want) < 4 * se, (want, est, se)


def test_no_dependence_draws_exactly_the_reference():
    for spec in ("ar1:0", "clustered:7:0"):
        a = data.data_model("iso_cos", inputs=spec).draw(np.random.default_rng(5), 30, 3, n_test=8)
        b = data.data_model("iso_cos").draw(np.random.default_rng(5), 30, 3, n_test=8)
        for f in ("X", "Y", "X_test", "m_test"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_flags_say_which_laws_are_iid():
    for spec, iid in (
        ("gaussian", True),
        ("ar1:0.9", False),
        ("ar1:0", True),
        ("clustered:4:0.2", False),
        ("clustered:4:0", True),
        ("student-t:5", True),
    ):
        law = data.input_distribution(spec)
        assert law.independent is iid
        assert law.rotation_invariant
        assert data.input_distribution(law.spec) == law  # the spec round-trips
    assert not data.input_distribution("ar1:0.9").is_standard_gaussian  # the closed forms assume iid rows
    assert data.input_distribution("ar1:0.9").marginal == data.input_distribution("gaussian")
    assert not data.is_reference_gaussian(data.data_model("iso_cos", inputs="clustered:3:0.5"))


@pytest.mark.parametrize(
    "spec, words",
    [
        ("ar1", "needs its parameter PHI"),
        ("ar1:1", "PHI of 'ar1'"),
        ("ar1:-1.5", "PHI of 'ar1'"),
        ("ar1:x", "expected a number for PHI"),
        ("clustered", "needs its parameter K:ICC"),
        ("clustered:4", "takes two parameters K:ICC"),
        ("clustered:4:0.1:2", "takes two parameters K:ICC"),
        ("clustered:0:0.1", "K of 'clustered'"),
        ("clustered:2.5:0.1", "K of 'clustered'"),
        ("clustered:3:1", "ICC of 'clustered'"),
        ("clustered:3:-0.1", "ICC of 'clustered'"),
    ],
)
def test_bad_specs_are_one_line_errors_naming_the_argument(spec, words):
    with pytest.raises(ValueError, match=rf"^inputs: .*{words}") as info:
        data.input_distribution(spec)
    assert "\n" not in str(info.value)
    good = declared_parameters(
        "04_head_diversity_index",
        fidelity="quick",
        seed=1,
        figures_dir="f",
        macros_path="m",
        results_path="r",
        n_jobs=1,
        isotropic_regressions=["iso_exp", "iso_cos"],
        anisotropic_regression="aniso",
        random_regression="iso_cos6",
        inputs="gaussian",
        noise="gaussian",
        sigma=0.5,
        n=500,
        bandwidth=0.5,
        random_n=400,
        random_bandwidth=0.6,
        random_d=6,
        random_d_k=2,
        random_H=3,
        matched_targets=[0.3, 0.6],
        matched_configs=8,
        matched_kernel="gaussian",
    )
    with pytest.raises(ParameterError, match=r"^inputs: "):
        check_parameters({**good, "inputs": spec}, ch04.PARAMETERS, ch04.CONSTRAINTS)
    check_parameters({**good, "inputs": "ar1:0.9"}, ch04.PARAMETERS, ch04.CONSTRAINTS)
    check_parameters({**good, "inputs": "clustered:10:0.3"}, ch04.PARAMETERS, ch04.CONSTRAINTS)


def test_drivers_run_on_dependent_samples():
    W = heads.orthogonal_heads(4, 2, 2)
    for spec in ("ar1:0.9", "clustered:10:0.5"):
        model = data.data_model("iso_cos", inputs=spec)
        res = montecarlo.integrated_mse([W], model, n=80, n_test=30, n_rep=4, seed=3)
        assert res.errors.shape == (1, 4) and np.all(np.isfinite(res.errors))


def test_iid_prediction_is_the_marginal_one():
    """Lemma 4.1's first-order covariance assumes iid rows: under AR(1) rows it is the prediction for
    iid rows of the same law, the same number as under the reference (same seed)."""
    W1, W2 = heads.pair_heads(0.4, 4, 2)
    x = np.zeros(4)
    a = covariance.first_order_covariance_mc(W1, W2, x, 0.8, 200, data.data_model("iso_cos", inputs="ar1:0.9"))
    b = covariance.first_order_covariance_mc(W1, W2, x, 0.8, 200, data.data_model("iso_cos"))
    assert a == b
