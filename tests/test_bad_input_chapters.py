"""Bad input to the chapters' helpers (`mhanw.chapters.chNN_*`) and the theory they call.

A number computed from a NaN, a size that cannot be allocated or a seed that differs run to run is a wrong
result; every helper must instead raise ``ValueError`` naming the argument.  (The chapters' verdict rules
decide from their results, whose quantities refuse NaN and negative standard errors when they are made
(:class:`mhanw.infra.results.Q`); a chapter's parameters are checked by its schema.)
"""

from __future__ import annotations

import numpy as np
import pytest

from mhanw import comparisons, locality, pretrained, weighting
from mhanw import scaling as S
from mhanw.chapters import ch04_figures

# --------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("seed", [None, True, 1.5, "3", -1])
def test_crn_batch_needs_an_explicit_seed(seed):
    with pytest.raises(ValueError, match="^seed: "):
        comparisons.crn_batch("iso_cos", 5, 3, 2, 2, seed)


def test_crn_batch_int_and_seed_sequence_agree():
    a = comparisons.crn_batch("iso_cos", 5, 3, 2, 2, 7)
    b = comparisons.crn_batch("iso_cos", 5, 3, 2, 2, np.random.SeedSequence(7))
    np.testing.assert_array_equal(a.X, b.X)


@pytest.mark.parametrize("seed", [None, True, "0"])
def test_bootstrap_helpers_need_an_explicit_seed(seed):
    from mhanw import montecarlo

    result = montecarlo.ImseResult(errors=np.random.default_rng(0).random((3, 6)), labels=("a", "b", "c"))
    with pytest.raises(ValueError, match="^seed: "):
        comparisons.rank_correlation_se([0.1, 0.5, 0.9], result, n_boot=5, seed=seed)
    with pytest.raises(ValueError, match="^seed: "):
        comparisons.heterogeneity(result, n_boot=5, seed=seed)


def test_the_trained_heads_statistics_refuse_undefined_values():
    with pytest.raises(ValueError, match="^null: .*constant"):
        pretrained.null_summary(1.0, np.ones(5))
    with pytest.raises(ValueError, match="^x: constant"):
        pretrained.r2_bootstrap(np.ones(5), np.arange(5.0), 10, 0)


def test_gaussian_model_neff_needs_token_counts():
    with pytest.raises(ValueError, match="^tokens: "):
        locality.gaussian_model_neff([], 2, 2, 0)


# --- found by the second independent sweep -------------------------------------------------------


def _refused_at_once(call, arg):
    """``call()`` raises a ValueError whose message starts with ``arg:``, within two seconds."""
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        call()
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: locality.neff_by_dimension([2], 10**12, 5, 0), "n_keys"),  # MemoryError (14.6 TiB)
        (lambda: locality.neff_by_dimension([2], 20, 10**12, 0), "n_queries"),
        (lambda: locality.exp_kernel_sine_estimates([50, 100], 10**12, 0), "n_rep"),
        (lambda: locality.exp_kernel_sine_estimates([10**12], 2, 0), "sample_sizes"),
        (lambda: comparisons.random_configurations(10**12, np.random.default_rng(0)), "n_configs"),
        (lambda: pretrained.random_subspace_null(3, 6, 2, 10**12, 0), "n_draw"),
        (lambda: comparisons.crn_batch("sin13", 30, 10, 10**12, 4, 0), r"n_rep x \(n \+ n_test\) x d"),  # hung
        (lambda: S.budget_simulation("sin13", 50, n_tune=10**12), "n_tune"),  # hung, then named n_rep
        (lambda: S.budget_simulation("sin13", 50, n_rep=10**12), "n_rep"),
        (lambda: S.budget_simulation("sin13", 50, n_jobs=10**12), "n_jobs"),  # bare OverflowError
        (lambda: S.budget_simulation("sin13", 50, budget=10**12), "n x budget"),  # named "d"
    ],
)
def test_huge_sizes_are_refused_at_once_naming_the_argument(call, arg):
    _refused_at_once(call, arg)


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        (dict(d_k_values=3), "d_k_values"),
        (dict(bandwidths=None), "bandwidths"),
        (dict(rules=None), "rules"),
        (dict(rules=5), "rules"),  # were bare TypeErrors: not iterable
    ],
)
def test_budget_simulation_rejects_non_sequences_naming_them(kwargs, arg):
    with pytest.raises(ValueError, match=rf"^{arg}: expected a sequence"):
        S.budget_simulation("sin13", 50, **kwargs)


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        (dict(base=None), "base"),
        (dict(base=3), "base"),
        (dict(base=["M1"]), "base"),  # AttributeError
        (dict(exponents=None), "exponents"),
        (dict(exponents=2), "exponents"),  # TypeError: not iterable
    ],
)
def test_bias_reading_models_names_bad_arguments(kwargs, arg):
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        S.bias_reading_models(**kwargs)


def _batch():
    return comparisons.crn_batch("sin13", 30, 10, 3, 4, 0)


@pytest.mark.parametrize("h", [1e-155, 1e-200, 1e-300, 5e-324])
def test_imse_and_gradient_tiny_bandwidth_names_bandwidth(h):
    # h*h underflowed: ZeroDivisionError (1e-300) or inf logits and NaN weights (1e-160)
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]])
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        comparisons.imse_and_gradient(W, _batch(), h)


def test_imse_and_gradient_overflowing_logits_name_bandwidth():
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]]) * 1e150
    with pytest.raises(ValueError, match=r"^bandwidth: the logits"):
        comparisons.imse_and_gradient(W, _batch(), 1e-10)


def test_imse_and_gradient_small_but_normal_bandwidth_is_finite():
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]])
    loss, grad = comparisons.imse_and_gradient(W, _batch(), 1e-100)
    assert np.isfinite(loss) and np.all(np.isfinite(grad))


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        (dict(n_heads=10**12), "n_heads"),  # MemoryError (58 TiB)
        (dict(n_starts=10**12), "n_starts"),  # MemoryError
        (dict(n_steps=10**12), "n_steps"),
        (dict(first_move=None), "first_move"),
        (dict(first_move=np.inf), "first_move"),  # TypeError / named W
    ],
)
def test_minimize_imse_names_bad_sizes(kwargs, arg):
    args = dict(n_heads=2, d_k=2, bandwidth=0.5, rng=np.random.default_rng(0), n_starts=1, n_steps=1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        comparisons.minimize_imse(_batch(), **args)


@pytest.mark.parametrize(
    "call,arg",
    [
        (
            lambda: comparisons.matched_hdi_configuration(0.5, np.random.default_rng(0), n_heads=10**12),
            "n_heads x d x d_k",
        ),  # hung
        (
            lambda: comparisons.matched_hdi_configuration(0.5, np.random.default_rng(0), n_heads=None),
            "n_heads",
        ),  # TypeError
        (lambda: comparisons.matched_hdi_configuration(0.5, np.random.default_rng(0), n_heads=0), "n_heads"),
        (lambda: comparisons.matched_hdi_configuration(None, np.random.default_rng(0)), "target"),  # TypeError
        (lambda: comparisons.matched_hdi_configurations([0.5], 10**12, np.random.default_rng(0)), "n_configs"),  # hung
        (lambda: comparisons.matched_hdi_configurations(None, 2, np.random.default_rng(0)), "targets"),  # TypeError
        (lambda: pretrained.r2_bootstrap(np.arange(10.0), np.arange(10.0) ** 2, 10**12, 0), "n_boot"),  # MemoryError
        (lambda: pretrained.spearman_permutation(np.arange(10.0), np.arange(10.0) ** 2, 10**12, 0), "n_perm"),
        (lambda: weighting.nested_errors(np.eye(3), np.eye(3), schemes=None), "schemes"),  # TypeError: not iterable
        (lambda: pretrained.pick_sentences(None, 3), "records"),  # TypeError: no len()
        (lambda: comparisons.imse_and_gradient("x", _batch(), 0.5), "W"),  # could not convert string to float
        (lambda: ch04_figures.regression_label([1, 2]), "spec"),  # TypeError: unhashable
    ],
)
def test_more_bad_arguments_are_named(call, arg):
    _refused_at_once(call, arg)


@pytest.mark.parametrize(
    "x, mean, se, arg",
    [
        ([1, 2], None, [0.1, 0.1], "mean"),
        ([1, 2], [1, 2], "ab", "se"),
        ([1, 2], [1, 2, 3], [0.1, 0.1], "mean, se"),
        ([1, 2], [1, 2], [0.1, 0.1, 0.1], "mean, se"),
    ],
)
def test_errorbar_names_missing_or_mismatched_series(x, mean, se, arg):
    import matplotlib.pyplot as plt

    from mhanw.infra import figures

    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match=rf"^{arg}: "):
            figures.errorbar(ax, x, mean, se)
    finally:
        plt.close(fig)
