"""Every size, count, budget and iteration limit of every public function has the shared maximum.

A size that allocates (``n``, ``d``, ``n_heads``, ...) is bounded by
:data:`mhanw.constants.MAX_ENTRIES` (through :func:`mhanw.infra.validate.positive_int`'s
``maximum`` or :func:`mhanw.constants.check_entries` on the array it sizes); a count
of iterations (replicates, draws, permutations, tries, steps, scan points) by
:data:`mhanw.constants.MAX_REPLICATES`.  This module walks the public API
(every public function and method of :mod:`mhanw`, its chapters and its
infrastructure), finds every argument that is such a size, and proves that a
value just above its maximum, and a huge one, are refused at once (within two
seconds) with a ``ValueError`` naming the argument -- never a hang, a
``MemoryError`` or an ``OverflowError``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import tempfile
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timeouts import within

import mhanw
from mhanw.constants import MAX_ENTRIES, MAX_REPLICATES

#: Arguments that are sizes of arrays (bounded by MAX_ENTRIES) ...
SIZES = {
    "n",
    "d",
    "d_k",
    "n_heads",
    "H",
    "budget",
    "n_test",
    "n_keys",
    "n_queries",
    "nodes",
    "n_samples",
    "n_blocks",
    "n_spectrum",
    "n_leading",
    "batch_size",
    "ncols",
    "max_rows",
    "n_jobs",
    "dims",
    "tokens",
    "sample_sizes",
    "min_dim",
    "d_v",
    "n_columns",
}
#: ... and counts of iterations (bounded by MAX_REPLICATES).
ITERATIONS = {
    "n_rep",
    "n_tune",
    "n_configs",
    "n_draw",
    "n_draws",
    "n_perm",
    "n_boot",
    "n_starts",
    "n_steps",
    "max_tries",
    "max_iter",
    "n_scan",
    "dps",
    "repeat",
    "n_seeds",
}
#: Sequences of sizes (a list whose entries are sizes).
SEQUENCES = {"dims", "tokens", "sample_sizes"}

#: Modules whose functions are not part of the public API walked here (and why).
NOT_WALKED = {
    "mhanw.bench": "the benchmark harness: its sizes are fixed cases, not user input",
    "mhanw.infra.params": "declares parameter kinds; their sizes are checked by the library they reach",
    "mhanw.infra.prose": "number words: k and n are counts of things already computed",
}

RNG = np.random.default_rng


def _W(H=2, d=4, d_k=2):
    return np.stack([np.eye(d)[:, j * d_k : (j + 1) * d_k] for j in range(H)])


def _weights():
    from mhanw import pretrained

    try:
        return pretrained.load_attention_weights()
    except ImportError:
        pytest.skip("the model package is not installed")


#: A good value of each required argument, by name (a function may override it below).
GOOD = {
    "n": 30,
    "d": 4,
    "d_k": 2,
    "n_heads": 2,
    "H": 2,
    "budget": 8,
    "budgets": (256, 512),
    "n_test": 5,
    "n_rep": 3,
    "n_keys": 10,
    "n_queries": 4,
    "dims": [2],
    "tokens": [5],
    "sample_sizes": [20, 40],
    "n_draws": 3,
    "n_draw": 3,
    "n_perm": 5,
    "n_boot": 5,
    "n_configs": 3,
    "seed": 0,
    "rng": None,
    "regression": "sin13",
    "model": "sin13",
    "x": np.zeros(4),
    "W": None,
    "W_j": np.eye(4)[:, :2],
    "W_jp": np.eye(4)[:, 2:],
    "lipschitz": 1.0,
    "bandwidth": 0.5,
    "theta": 0.3,
    "t": 0.5,
    "target": 0.5,
    "targets": [0.5],
    "angles": [0.0, 0.5],
    "weight": np.ones((4, 6)),
    "values": [1, 2, 3],
    "estimates": [np.zeros((20, 2))],
    "x_values": np.arange(10.0),
    "y": np.arange(10.0) ** 2,
    "trained": np.ones(8),
    "null": np.ones((5, 8)),
    "per_sentence": np.ones((6, 3, 2)),
    "records": [{"text": f"sentence {i}"} for i in range(10)],
    "d_k_values": [1, 2],
    "phi": 0.5,
    "log10_n": 8.0,
    "M": np.eye(3),
    "rho": 0.2,
    "weights": None,
    "scheme": "geometric",
    "batch": None,
    "point": [0.0, 0.0],
    "W_Q": None,
}


def _result():
    from mhanw import montecarlo

    return montecarlo.ImseResult(errors=RNG(0).random((3, 6)), labels=("a", "b", "c"))


def _config():
    from mhanw.heads import HeadConfig

    return HeadConfig(_W(), bandwidth=0.5)


def _pair_cos2():
    from mhanw import diversity, heads

    return diversity.pair_cos2(heads.haar_heads(6, 2, 3, RNG(0)))


def _sample():
    from mhanw import data

    return data.data_model("aniso").draw(RNG(0), 30, 4, n_test=5)


#: Where a figure function called with good arguments would save its figure (never this repository's figures/).
FIGURES_DIR = tempfile.gettempdir()


@functools.cache
def _free_descent():
    """The free-head descent of chapter 5 (:func:`mhanw.comparisons.minimize_imse`) on a tiny batch: one start,
    one step."""
    from mhanw import comparisons

    return comparisons.minimize_imse(
        comparisons.crn_batch("sin13", 30, 10, 3, 4, 0), 2, 2, 0.5, RNG(0), n_starts=1, n_steps=1
    )


def _overrides():
    """Required arguments that differ from :data:`GOOD` for one function."""
    from mhanw import comparisons

    batch = lambda: comparisons.crn_batch("sin13", 30, 10, 3, 4, 0)  # noqa: E731
    return {
        "mhanw.heads.graded_heads": dict(angles=[0.0, 0.5]),
        "mhanw.diversity.maximize_hdi": dict(rng=RNG(0)),
        "mhanw.heads.haar_basis": dict(rng=RNG(0)),
        "mhanw.heads.haar_heads": dict(rng=RNG(0)),
        "mhanw.heads.interpolated_heads": dict(rng=RNG(0)),
        "mhanw.data.sample_inputs": dict(rng=RNG(0)),
        "mhanw.data.draw_sample": dict(rng=RNG(0)),
        "mhanw.comparisons.random_configurations": dict(rng=RNG(0)),
        "mhanw.comparisons.matched_hdi_configuration": dict(rng=RNG(0)),
        "mhanw.comparisons.matched_hdi_configurations": dict(rng=RNG(0)),
        "mhanw.comparisons.normalization_table": dict(rng=RNG(0)),
        "mhanw.comparisons.minimize_imse": dict(batch=batch(), rng=RNG(0), bandwidth=0.5),
        "mhanw.pretrained.random_subspace_null": dict(n_heads=3, d=6, d_k=2),
        "mhanw.pretrained.r2_bootstrap": dict(x=np.arange(10.0), y=np.arange(10.0) ** 2),
        "mhanw.pretrained.spearman_permutation": dict(x=np.arange(10.0), y=np.arange(10.0) ** 2),
        "mhanw.pretrained.pick_sentences": dict(records=[f"s {i}" for i in range(10)]),
        "mhanw.weighting.heterogeneity_threshold": dict(n_heads=3, rho=0.0),
        "mhanw.weighting.simplex_oracle_weights": dict(M=np.eye(3)),
        "mhanw.weighting.structured_weights": dict(scheme="geometric"),
        "mhanw.weighting.crossover_gap": dict(rho=0.0, weights=["1/2", "1/2"]),
        "mhanw.weighting.symbolic_threshold": dict(rho=0.0, weights=[0.7, 0.3]),
        "mhanw.weighting.weights_expr": dict(scheme="geometric"),
        "mhanw.weighting.graded_error_matrix": dict(gamma=2.0, rho=0.0),
        "mhanw.covariance.first_order_covariance": dict(
            W_j=np.eye(2)[:, :1], W_jp=np.eye(2)[:, 1:], x=np.zeros(2), bandwidth=0.5
        ),
        "mhanw.covariance.first_order_covariance_model": dict(
            W_j=np.eye(2)[:, :1], W_jp=np.eye(2)[:, 1:], x=np.zeros(2), bandwidth=0.5
        ),
        "mhanw.covariance.printed_covariance_bound": dict(W_j=np.eye(2)[:, :1], W_jp=np.eye(2)[:, 1:], x=np.zeros(2)),
        "mhanw.infra.sweep.spawn_streams": dict(seed=0),
        "mhanw.infra.sweep.run_replicates": dict(func=lambda g: 0.0, seed=0),
        "mhanw.infra.sweep.run_sweep": dict(func=lambda s, g: 0.0, settings=[1], seed=0),
        "mhanw.infra.tables.show": dict(data={"a": [1.0]}),
        "mhanw.scaling.divisors": dict(),
        "mhanw.comparisons.random_configuration_imse": dict(regressions=["iso_cos"]),
        "mhanw.comparisons.rank_correlation_se": dict(hdi=[0.1, 0.5, 0.9], result=_result()),
        "mhanw.comparisons.heterogeneity": dict(result=_result()),
        "mhanw.montecarlo.integrated_mse": dict(configs=[_config()]),
        "mhanw.montecarlo.pointwise_estimates": dict(configs=[_config()], x=np.zeros((1, 4))),
        "mhanw.montecarlo.error_moments": dict(config=_config()),
        "mhanw.nw.weighted_mean": dict(
            q=np.zeros((2, 2)), v=np.ones(5), kernel="gaussian", scale=1.0, k=np.zeros((5, 2))
        ),
        "mhanw.locality.tilted_mean": dict(query=0.5, regression="sin(x1)"),
        "mhanw.infra.figures.panels": dict(ncols=2),
        "mhanw.derivation.asymptotic_check": dict(spec="M1"),
        "mhanw.decomposition.jackknife": dict(statistic=lambda a: float(np.mean(a)), arrays=(np.arange(40.0),)),
        "mhanw.pretrained.row_permutation_null": dict(weights=_weights(), layer=0, n_perm=3),
        "mhanw.pretrained.layer_spectrum_null": dict(weights=_weights(), layer=0),
        "mhanw.pretrained.head_spectrum_null": dict(objects={"key": _W(3, 6, 2)}),
        "mhanw.pretrained.excess_spectrum_summary": dict(
            pair_spectra=[_pair_cos2()], null_spectra=np.ones((1, 3, 2)) * 0.1, n_leading=1
        ),
        "mhanw.pretrained.leading_share": dict(trained=np.ones(8), null=np.zeros(8), n_leading=2),
        "mhanw.covariance.first_order_covariance_mc": dict(
            W_j=np.eye(2)[:, :1], W_jp=np.eye(2)[:, 1:], x=np.zeros(2), bandwidth=0.5, model="zero"
        ),
        "mhanw.montecarlo.pointwise_parts": dict(config=_config(), x=np.zeros((1, 4))),
        "mhanw.heads.output_projection": dict(d_v=2),
        "mhanw.training.train_heads": dict(W0=_W(), sample=_sample(), bandwidth=0.5),
        "mhanw.training.training_work": dict(n_heads=2, n=20, d=4, n_steps=3, n_test=5, record_every=1),
        "mhanw.chapters.ch05_decorrelation_optimality.optimum_search": dict(
            free=_free_descent(), candidate_loss=0.5, n_given=1, n_steps=1
        ),
        **_incontext_overrides(),
    }


def _incontext_overrides():
    """Good arguments of :mod:`mhanw.incontext`: a GP family on R^4, one tiny configuration."""
    from mhanw import incontext as ic

    family = ic.TaskFamily("gp", 4)
    small = dict(family=family, tasks=2, queries=2)
    return {
        "mhanw.incontext.draw_tasks": dict(rngs=[RNG(0)], **small),
        "mhanw.incontext.fresh_tasks": dict(seeds=2, **small),
        "mhanw.incontext.train": dict(archs=[ic.Architecture(4, 4, 2)], seeds=2, steps=1, lr=0.01, **small),
        "mhanw.incontext.law_values": dict(law="M1", n_values=[16.0]),
        "mhanw.incontext.best_head_size": dict(d_k_values=[1, 2, 4], mse=np.ones((3, 4))),
        "mhanw.incontext.compare_laws": dict(n_values=[16.0, 64.0]),
    }


def _public_functions():
    """``{qualified name: function}`` of every public function and method of the package."""
    names = [m.name for m in pkgutil.walk_packages(mhanw.__path__, "mhanw.")]
    out = {}
    for modname in names:
        if modname in NOT_WALKED:
            continue
        mod = importlib.import_module(modname)
        if hasattr(mod, "STEPS"):  # a chapter on the chapter contract: its parameter schema is the boundary
            continue
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != modname:
                continue
            if inspect.isfunction(obj):
                out[f"{modname}.{name}"] = obj
    return out


def _size_arguments():
    cases = []
    for qual, f in sorted(_public_functions().items()):
        for p in inspect.signature(f).parameters.values():
            if p.name in SIZES | ITERATIONS:
                cases.append((qual, p.name))
    return cases


CASES = _size_arguments()


def _rule_arguments(qual):
    """The good arguments of a chapter's rule (``test_bad_input_rules.GOOD``), or ``None``."""
    import test_bad_input_rules as rules

    mod, name = qual.rsplit(".", 1)
    return rules.GOOD.get(f"{mod.rsplit('.', 1)[1][:4]}.{name}")


def _required(qual, f):
    if hasattr(f, "checks"):
        return dict(_rule_arguments(qual))
    over = _overrides().get(qual, {})
    kwargs = {}
    for p in inspect.signature(f).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in over:
            kwargs[p.name] = over[p.name]
        elif p.default is inspect.Parameter.empty:
            value = GOOD.get(p.name, KeyError)
            if value is KeyError:
                pytest.fail(f"{qual}: no good value for its required argument {p.name!r} (add it to GOOD)")
            kwargs[p.name] = RNG(0) if p.name == "rng" else (_W() if p.name == "W" and value is None else value)
    return kwargs


#: Arguments with a maximum of their own (a budget is arithmetic until it is enumerated) or none (a real
#: sample size in the asymptotics of Thm 6.1 may be 1e300: only a value beyond a double is refused).
OWN_LIMITS = {
    ("mhanw.scaling", "budget"): "MAX_DIVISOR_BUDGET",
    ("mhanw.scaling", "d_k"): "MAX_DIVISOR_BUDGET",
    ("mhanw.derivation", "budget"): "MAX_DIVISOR_BUDGET",
    ("mhanw.scaling", "n"): None,
    ("mhanw.scaling.log_mse", "d_k"): None,
    ("mhanw.scaling.sample_size_for_head_dim", "d_k"): None,
    ("mhanw.locality", "d_k"): None,
}


def _limit(qual, arg):
    """The maximum of ``arg`` of ``qual``, or ``None`` for an argument read as a real number (a sample size
    or a dimension in a formula).  The counts a verdict rule reports are sizes, not iterations."""
    from mhanw import scaling

    found = [
        (len(prefix), limit)
        for (prefix, name), limit in OWN_LIMITS.items()
        if arg == name and (qual == prefix or qual.startswith(prefix + "."))
    ]
    if found:
        limit = max(found)[1]
        return None if limit is None else getattr(scaling, limit)
    f = _public_functions()[qual]
    return MAX_REPLICATES if arg in ITERATIONS and not hasattr(f, "checks") else MAX_ENTRIES


def _refused_at_once(qual, arg, bad):
    f = _public_functions()[qual]
    kwargs = _required(qual, f)
    kwargs[arg] = [bad] if arg in SEQUENCES else bad
    start = time.perf_counter()
    with within(10.0), pytest.raises(ValueError) as info:
        f(**kwargs)
    took = time.perf_counter() - start
    head = str(info.value).split(": ", 1)[0]
    assert re.search(rf"\b{re.escape(arg)}\b", head), f"{qual}({arg}={bad}): {str(info.value)[:200]!r}"
    assert "\n" not in str(info.value)
    assert took < 2.0, f"{qual}({arg}={bad}) took {took:.1f} s to refuse"


def test_the_walk_finds_the_size_arguments():
    assert len(CASES) >= 100
    found = {a for _, a in CASES}
    assert {"n", "d", "n_rep", "n_draws", "max_tries", "n_steps", "budget"} <= found


@pytest.mark.parametrize("qual,arg", [(q, a) for q, a in CASES if _limit(q, a) is not None])
def test_a_size_above_its_maximum_is_refused_at_once(qual, arg):
    _refused_at_once(qual, arg, _limit(qual, arg) + 1)


@pytest.mark.parametrize("qual,arg", CASES)
def test_a_huge_size_is_refused_at_once(qual, arg):
    _refused_at_once(qual, arg, 10**400)  # beyond a double: an OverflowError anywhere would escape


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), excess=st.integers(min_value=1, max_value=10**30))
def test_any_size_over_the_maximum_through_any_public_function(case, excess):
    """Property: any size above its maximum, through any public function, is refused at once naming it."""
    qual, arg = case
    limit = _limit(qual, arg)
    _refused_at_once(qual, arg, (2 * 10**308 if limit is None else limit) + excess)


# --------------------------------------------------------------------------- the cases that hung


def test_gaussian_model_neff_draws_are_bounded():
    from mhanw import locality

    with pytest.raises(ValueError, match=r"^n_draws: expected an integer <= 10000000"):
        locality.gaussian_model_neff([5], 2, 10**9, 0)  # hung
    with pytest.raises(ValueError, match=r"^n_draws x tokens: "):
        locality.gaussian_model_neff([5] * 1000, 2, 10**5, 0)  # 10**8 draws in all
    with pytest.raises(ValueError, match=r"^tokens: "):
        locality.gaussian_model_neff([10**6], 2, 2, 0)  # a 10**6 x 10**6 attention matrix


def test_matched_hdi_configuration_with_an_unreachable_target():
    from mhanw.comparisons import matched_hdi_configuration
    from mhanw.diversity import hdi_upper_bound

    bound = hdi_upper_bound(4, 2, 3)  # three planes in R^4 overlap: at most 3/4
    assert bound == 0.75
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^target: .* above the largest HDI_PA"):
        matched_hdi_configuration(0.8, RNG(0), d=4, d_k=2, n_heads=3, max_tries=10**6)  # drew 10**6 times
    with pytest.raises(ValueError, match=r"^max_tries: expected an integer <= 10000000"):
        matched_hdi_configuration(0.5, RNG(0), max_tries=10**9)  # looped for weeks
    assert time.perf_counter() - start < 2.0
    W = matched_hdi_configuration(0.5, RNG(0))
    assert W.shape == (3, 6, 2)


def test_a_notebook_parameter_above_the_shared_maximum_is_refused():
    from mhanw.chapters import ch05_decorrelation_optimality as ch05
    from mhanw.infra import params as P

    for bad in (MAX_ENTRIES + 1, 10**400):
        with pytest.raises(P.ParameterError, match=r"^random_n: expected an integer <= 40000"):
            ch05.PARAMETERS["random_n"].check(bad, "random_n")
    with pytest.raises(P.ParameterError, match=r"^bandwidth: .*within the range of a double"):
        ch05.PARAMETERS["bandwidth"].check(10**400, "bandwidth")  # was an OverflowError
    assert ch05.PARAMETERS["random_n"].check(400, "random_n") == 400


def test_the_second_sweeps_work_bounds_hold():
    """Each of these ran for minutes or exhausted memory within the limits each factor had alone: an
    H^3 search of 10 000 heads, 10**5 high-precision root searches, a Lipschitz estimate in d = 20 000
    (32 768 x d doubles, several times), a table of 1000 models x 1000 sizes, a sympy sum of 20 000
    terms (a string is bounded by its length, an expression was not)."""
    import sympy as sp

    from mhanw import data, derivation, scaling, weighting

    x1 = sp.Symbol("x1")
    big = sp.Add(*[sp.sin(k * x1) for k in range(1, 1501)])  # built outside the time limit: sympy takes seconds
    with within(5.0):
        with pytest.raises(ValueError, match="^n_heads: "):
            weighting.heterogeneity_threshold(10**4, 0.5)
        with pytest.raises(ValueError, match="^M: expected at most"):
            weighting.simplex_oracle_weights(np.eye(weighting.MAX_MATRIX_HEADS + 1))
        with pytest.raises(ValueError, match="^log10_n_values: expected at most"):
            derivation.asymptotic_check("M1", log10_n_values=[12] * 10**5)
        with pytest.raises(ValueError, match="^d: "):
            data.regression_function("r").lipschitz_constant(20_000)
        with pytest.raises(ValueError, match="^n_values, models: "):
            scaling.scaling_table(models=["M1"] * 1000, n_values=[1e6] * 1000)
        with pytest.raises(ValueError, match="^regression: the expression has more than"):
            data.regression_function(big)
        with pytest.raises(ValueError, match="^regression: .*cannot be evaluated"):
            data.regression_function(sp.gamma(x1))
        with pytest.raises(ValueError, match="^noise: "):
            data.NoiseModel(0.5, "heteroscedastic", expression=["x1"])


@pytest.mark.parametrize(
    "value", [np.ma.masked, np.ma.masked_all((3,)), np.timedelta64(2), np.datetime64("2026-01-01")]
)
def test_masked_values_and_time_spans_are_not_numbers(value):
    """A masked value read as 0 by one check and NaN by the rule ('holds' from nothing); numpy's
    timedelta64 subclasses its integers."""
    from mhanw.infra import verdicts as V
    from mhanw.infra.validate import as_float_array, positive_int, real_scalar

    with pytest.raises(ValueError, match="^x: "):
        V.number(value, "x")
    with pytest.raises(ValueError, match="^x: "):
        real_scalar(value, "x") if np.ndim(value) == 0 else as_float_array(value, "x")
    if np.ndim(value) == 0 and not isinstance(value, np.ma.MaskedArray):
        with pytest.raises(ValueError, match="^x: "):
            positive_int(value, "x")
