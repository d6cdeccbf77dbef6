"""Bad input to the chapters' verdict rules and helpers (`mhanw.chapters.chNN_*`).

A verdict decided from a NaN statistic, a negative standard error or an empty
input is a wrong result (NaN makes every comparison false, so a rule would
silently answer "undecided" or "holds").  Every rule must instead raise
``ValueError`` naming the argument; the good inputs next to each bad one show
that the rule still decides.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mhanw import comparisons, locality, pretrained, weighting
from mhanw import scaling as S
from mhanw.chapters import ch04_figures
from mhanw.chapters import ch05_decorrelation_optimality as ch05
from mhanw.infra.premises import premise
from mhanw.infra.verdicts import VOCABULARY, Search, Verdict

#: An isotropic premise that holds (the rules of the isotropic reading need their premises).
ISO_PREMISES = (premise("isotropic-m", "m depends on x only through |x|", True),)

NAN, INF = math.nan, math.inf

# (rule, good keyword arguments) for every rule that takes numbers; each case below replaces one argument.
RULES = {
    "ch05.blind_verdict": (ch05.blind_verdict, dict(diff=-0.1, se=0.01)),
    "ch05.optimum_verdict": (
        ch05.optimum_verdict,
        dict(
            slug="iso",
            m_label="m",
            rel_pct=0.1,
            rel_se_pct=0.1,
            hdi=0.9,
            premises=ISO_PREMISES,
            refute_only=False,
            search=Search("IMSE descent", 4, 1, 2, 10, best=0.9, known=1.0),
        ),
    ),
    "ch05.frame_verdict": (ch05.frame_verdict, dict(gap=1e-5, overshoot=0.0, tightness=1e-6)),
    "ch05.comparison_word": (ch05.comparison_word, dict(diff=0.1, se=0.01, lower="a", higher="b", same="c")),
}

# (rule, argument, bad value, whether the value is a standard error) -- NaN, inf, a string, a bool, None,
# negative standard errors and empty input, each naming the argument.
SCALARS = [
    (r, a) for r, (f, kw) in RULES.items() for a, v in kw.items() if isinstance(v, float) and not isinstance(v, bool)
]
SES = [(r, a) for r, a in SCALARS if a == "se" or a.endswith("_se")]
ARRAYS = [(r, a) for r, (f, kw) in RULES.items() for a, v in kw.items() if isinstance(v, list)]
MAPS = [(r, a) for r, (f, kw) in RULES.items() for a, v in kw.items() if isinstance(v, dict)]


def _call(rule, **changes):
    f, kw = RULES[rule]
    return f(**{**kw, **changes})


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_decides_on_good_input(rule):
    out = _call(rule)
    records = out if isinstance(out, tuple) else (out,)
    for r in records:
        assert isinstance(r, (Verdict, str, bool, dict))
        if isinstance(r, Verdict):
            assert r.verdict in VOCABULARY


@pytest.mark.parametrize("rule,arg", SCALARS)
@pytest.mark.parametrize("bad", [NAN, INF, -INF, "0.1", None, True])
def test_rules_reject_bad_numbers_naming_the_argument(rule, arg, bad):
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        _call(rule, **{arg: bad})


@pytest.mark.parametrize("rule,arg", SES)
def test_rules_reject_negative_standard_errors(rule, arg):
    with pytest.raises(ValueError, match=rf"^{arg}: .*>= 0"):
        _call(rule, **{arg: -0.01})


@pytest.mark.parametrize("rule,arg", ARRAYS)
@pytest.mark.parametrize("bad", [[], [NAN, 0.1], [INF], "0.1"])
def test_rules_reject_empty_and_nan_arrays(rule, arg, bad):
    f, kw = RULES[rule]
    if np.ndim(kw[arg]) == 2 and isinstance(bad, list):
        bad = [bad] if bad else [[]]
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        _call(rule, **{arg: bad})


@pytest.mark.parametrize("rule,arg", MAPS)
@pytest.mark.parametrize("bad", [{}, "nan", None])
def test_rules_reject_empty_or_non_mappings(rule, arg, bad):
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        _call(rule, **{arg: bad})


@pytest.mark.parametrize(
    "rule,arg,bad",
    [],
)
def test_rules_reject_nan_inside_mappings_and_pairs(rule, arg, bad):
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        _call(rule, **{arg: bad})


@pytest.mark.parametrize(
    "rule,changes,arg",
    [],
)
def test_rules_reject_mismatched_shapes(rule, changes, arg):
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        _call(rule, **changes)


def test_blind_record_with_a_zero_standard_error_has_no_z():
    record = ch05.blind_verdict(-0.1, 0.0)
    assert record.verdict == "holds" and [s.name for s in record.statistics] == ["orthogonal minus shared"]
    assert [s.name for s in ch05.blind_verdict(-0.1, 0.01).statistics] == ["orthogonal minus shared", "z"]


def test_as_stated_records_need_records():
    with pytest.raises(ValueError, match="^parts: "):
        ch05.overall_verdict([])
    with pytest.raises(ValueError, match="^parts: "):
        ch05.overall_verdict(["thm-4.2/x"])


# --------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("seed", [None, True, 1.5, "3", -1])
def test_crn_batch_needs_an_explicit_seed(seed):
    with pytest.raises(ValueError, match="^seed: "):
        ch05.crn_batch("iso_cos", 5, 3, 2, 2, seed)


def test_crn_batch_int_and_seed_sequence_agree():
    a = ch05.crn_batch("iso_cos", 5, 3, 2, 2, 7)
    b = ch05.crn_batch("iso_cos", 5, 3, 2, 2, np.random.SeedSequence(7))
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


@pytest.mark.parametrize(
    "call",
    [],
)
@pytest.mark.parametrize("n_se", [NAN, -1.0, "3", None])
def test_a_bad_n_se_is_named(call, n_se):
    with pytest.raises(ValueError, match="^n_se: "):
        call(n_se)


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
        (lambda: ch05.crn_batch("sin13", 30, 10, 10**12, 4, 0), r"n_rep x \(n \+ n_test\) x d"),  # hung
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
    return ch05.crn_batch("sin13", 30, 10, 3, 4, 0)


@pytest.mark.parametrize("h", [1e-155, 1e-200, 1e-300, 5e-324])
def test_imse_and_gradient_tiny_bandwidth_names_bandwidth(h):
    # h*h underflowed: ZeroDivisionError (1e-300) or inf logits and NaN weights (1e-160)
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]])
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        ch05.imse_and_gradient(W, _batch(), h)


def test_imse_and_gradient_overflowing_logits_name_bandwidth():
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]]) * 1e150
    with pytest.raises(ValueError, match=r"^bandwidth: the logits"):
        ch05.imse_and_gradient(W, _batch(), 1e-10)


def test_imse_and_gradient_small_but_normal_bandwidth_is_finite():
    W = np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]])
    loss, grad = ch05.imse_and_gradient(W, _batch(), 1e-100)
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
        ch05.minimize_imse(_batch(), **args)


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
        (lambda: ch05.imse_and_gradient("x", _batch(), 0.5), "W"),  # could not convert string to float
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
