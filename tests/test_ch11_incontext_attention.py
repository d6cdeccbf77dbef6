"""Chapter 11 (mhanw.chapters.ch11_incontext_attention and its figures' texts): the decision rules flipped on
synthetic paths built to rise, to fall and to stay, the best-head-size chain on synthetic MSE surfaces with
a planted d_k*(n) that grows or shrinks, the law rule's three outcomes, the declared records reading the
decisions, the hand-written head against the library, and the steps at a tiny size."""

from types import MappingProxyType

import numpy as np
import pytest
from nbtools import declared_parameters

from mhanw import incontext as ic
from mhanw.chapters import base
from mhanw.chapters import ch11_figures as figs
from mhanw.chapters import ch11_incontext_attention as ch
from mhanw.infra import verdicts as V
from mhanw.infra.estimates import Estimate
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.infra.results import Results
from mhanw.infra.rules import decide_all

GOOD = declared_parameters(
    "11_incontext_attention", fidelity="quick", seed=1, figures_dir="f", macros_path="m", results_path="r"
)


def test_parameters_and_their_bounds():
    p = check_parameters(GOOD, ch.PARAMETERS, ch.CONSTRAINTS)
    assert p["heads"] == 4 and p["d"] % p["heads"] == 0
    for change, name in ((dict(heads=3), "heads"), (dict(n_seeds=10**6), "n_seeds"), (dict(lr=5.0), "lr")):
        with pytest.raises(ParameterError, match=name):
            check_parameters({**GOOD, **change}, ch.PARAMETERS, ch.CONSTRAINTS)
    big = {**GOOD, "fidelity": "paper", "n": 4096, "n_seeds": 500}  # each in range, their product days of CPU
    with pytest.raises(ParameterError, match="^n: .*n_seeds = 500"):
        check_parameters(big, ch.PARAMETERS, ch.CONSTRAINTS)


# --------------------------------------------------------------------------- the rules on synthetic paths


def _paths(shift: float, seeds: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    start = 0.75 + 0.02 * rng.standard_normal(seeds)
    return start, start + shift + 0.02 * rng.standard_normal(seeds)


@pytest.mark.parametrize("shift, verdict", [(0.2, V.HOLDS), (-0.2, V.FAILS), (0.0, V.UNDECIDED)])
def test_the_heads_apart_rule_flips_with_the_direction_of_the_paths(shift, verdict):
    d = ch.apart_decision(*_paths(shift))
    assert d["verdict"] == verdict
    assert d["statistics"][0].value == pytest.approx(shift, abs=0.03)
    assert d["detectable"] == pytest.approx(ch.N_SE_RULE * d["statistics"][0].se)


def test_the_heads_apart_rule_needs_twenty_seeds():
    assert ch.MIN_SEEDS == 20 and ch.N_SE_RULE == 3
    assert ch.apart_decision(*_paths(0.2, seeds=19))["verdict"] == V.UNDECIDED
    assert ch.apart_decision(*_paths(0.2, seeds=20))["verdict"] == V.HOLDS


def test_the_negative_control_holds_on_tied_heads_and_fails_on_a_move():
    zeros = np.zeros(20) + 1e-16 * np.arange(20)  # tied heads: 0 up to rounding
    assert ch.tied_decision(zeros, -zeros)["verdict"] == V.HOLDS
    assert ch.tied_decision(*_paths(0.2))["verdict"] == V.FAILS
    assert ch.tied_decision(*_paths(-0.2))["verdict"] == V.FAILS


def _surface(planted_log2, d_k, seeds: int, rng, noise: float = 0.01):
    """Synthetic test MSEs (K, S): a parabola in log2 d_k with its minimum at ``planted_log2``."""
    x = np.log2(d_k)
    return 1.0 + 0.1 * (x - planted_log2)[:, None] ** 2 + noise * rng.standard_normal((x.size, seeds))


@pytest.mark.parametrize("direction, verdict", [(1, V.HOLDS), (-1, V.FAILS), (0, V.UNDECIDED)])
def test_the_growth_rule_flips_on_planted_optima_that_rise_fall_or_stay(direction, verdict):
    rng = np.random.default_rng(3)
    d_k = np.array([1, 2, 4, 8, 16, 32])
    n_values = np.array([16, 32, 64, 128, 256, 512])
    planted = 2.5 + direction * 0.3 * (np.log2(n_values) - 6)  # log2 d_k*: 1.9 .. 3.4 or back, or 2.5
    estimates = [ic.best_head_size(d_k, _surface(p, d_k, 8, rng), 400, i) for i, p in enumerate(planted)]
    # the planted optimum is recovered (the library's own test checks one surface; here the chain)
    np.testing.assert_allclose([e.log2_best for e in estimates], planted, atol=0.2)
    growth = ic.growth(n_values, estimates)
    d = ch.growth_decision(growth, sum(not e.censored for e in estimates))
    assert d["verdict"] == verdict
    assert d["statistics"][0].value == pytest.approx(direction * 0.3, abs=0.08)


def test_the_growth_rule_is_undecided_with_too_few_estimates_inside_the_grid():
    assert ch.growth_decision(None, 0)["verdict"] == V.UNDECIDED
    assert ch.growth_decision(None, 0)["statistics"] == ()
    assert ch.growth_decision(Estimate(1.0, 0.01), 2)["verdict"] == V.UNDECIDED
    assert ch.growth_decision(Estimate(1.0, 0.01), 3)["verdict"] == V.HOLDS


def _fits(**p_values):
    return {law: ic.LawFit(law, 0.0, 1.0, 3, p_values[law], 1 / 3) for law in ic.LAWS}


@pytest.mark.parametrize(
    "p_values, verdict",
    [
        (dict(printed=0.5, M1=0.001, constant=0.001), V.HOLDS),
        (dict(printed=0.001, M1=0.5, constant=0.001), V.FAILS),
        (dict(printed=0.001, M1=0.001, constant=0.001), V.FAILS),
        (dict(printed=0.5, M1=0.5, constant=0.001), V.UNDECIDED),
    ],
)
def test_the_law_rule_supports_rejects_or_cannot_tell(p_values, verdict):
    d = ch.law_decision(_fits(**p_values))
    assert d["verdict"] == verdict
    assert d["statistics"][0].value == p_values["printed"]
    assert ch.law_decision({})["verdict"] == V.UNDECIDED


def test_the_law_rule_on_a_planted_printed_law():
    """Optima planted on the printed law (a factor 2 above it): the printed law alone survives when the
    estimates are sharp, and the rule cannot tell when they are loose."""
    n = np.array([16.0, 64, 256, 1024, 4096, 65536])
    y = np.log2(ic.law_values("printed", n, 1)) + 1.0
    noise = np.random.default_rng(1).standard_normal((6, 400))
    for se, verdict in ((0.005, V.HOLDS), (5.0, V.UNDECIDED)):
        est = [
            ic.HeadSizeEstimate(
                np.array([1.0, 2, 4, 8, 16]), Estimate(np.zeros(5), np.zeros(5)), v, se, (1, 16), 0.0, v + se * b
            )
            for v, b in zip(y, noise)
        ]
        assert ch.law_decision(ic.compare_laws(n, est, 1))["verdict"] == verdict


@pytest.mark.parametrize("mean, verdict", [(-0.3, V.HOLDS), (0.3, V.FAILS), (0.0, V.UNDECIDED)])
def test_the_locality_rule_flips_with_the_slope_of_the_share(mean, verdict):
    rng = np.random.default_rng(2)
    n = np.array([16, 64, 256])
    per_seed = mean * np.log2(n)[:, None] + 0.1 * rng.standard_normal((3, 5)) - 1
    d = ch.local_decision(ic.slope(np.log2(n), per_seed))
    assert d["verdict"] == verdict


# --------------------------------------------------------------------------- the records and the words


def _tree(apart_shift: float, growth: float, p_printed: float, local: float) -> Results:
    """Results with the paths the records read, built from synthetic decisions."""
    apart = {name: {} for name, _ in ch.FAMILIES}
    for name in apart:
        for config in ch.CONFIGS:
            shift = {"free": apart_shift, "penalised": 0.25, "tied": 0.0}[config]
            start, end = _paths(shift) if config != "tied" else (np.zeros(20), np.zeros(20))
            change = Estimate.paired(end, start)
            q = ch.Q(float(change.mean), float(change.se))
            apart[name][config] = {
                "decision": (ch.tied_decision if config == "tied" else ch.apart_decision)(start, end),
                "hdi_change": q,
                "hdi_circuit_change": q,
                "error_corr_change": q,
                "mse_change": q,
                "start": ch.Q(float(start.mean())),
                "end": ch.Q(float(end.mean())),
            }
        apart[name]["haar"] = ch.Q(0.75)
    sizes = {}
    for D in ch.BUDGETS:
        fits = _fits(printed=p_printed, M1=0.001, constant=0.001)
        sizes[f"d{D}"] = {
            "growth_decision": ch.growth_decision(Estimate(growth, 0.05), 4),
            "law_decision": ch.law_decision(fits),
            "laws": {law: {"p_value": f.p_value} for law, f in fits.items()},
            "law_word": ic.law_decision(fits, ch.ALPHA),
            "local_decision": ch.local_decision(Estimate(local, 0.02)),
            "beta_slope": ch.Q(0.2, 0.02),
        }
    return Results({"heads_apart": apart, "head_sizes": sizes})


def _verdicts(results):
    return {r.claim: r.verdict for r in decide_all(ch.CLAIMS, results, chapter="11_incontext_attention")}


def test_the_declared_records_read_the_decisions():
    assert len(ch.CLAIMS) == 12 and len({c.id for c in ch.CLAIMS}) == 12
    up = _verdicts(_tree(0.2, 0.3, 0.5, -0.3))
    down = _verdicts(_tree(-0.2, -0.3, 0.001, 0.3))
    for claim in up:
        if claim.startswith("incontext/"):
            assert up[claim] == V.HOLDS and down[claim] == V.FAILS, claim
        else:  # the controls do not depend on the free heads
            assert up[claim] == down[claim] == V.HOLDS, claim
    paper, controls = ch.paper_and_controls(decide_all(ch.CLAIMS, _tree(0.2, 0.3, 0.5, -0.3)))
    assert len(paper) == 8 and len(controls) == 4


def test_captions_and_takeaway_follow_the_records():
    up, down = _tree(0.2, 0.3, 0.5, -0.3), _tree(-0.2, -0.3, 0.001, 0.3)
    assert "holds for iso and aniso" in figs.apart_caption(up["heads_apart"])
    assert "fails as stated for iso and aniso" in figs.apart_caption(down["heads_apart"])
    assert "moved by +0.20" in figs.apart_takeaway(up["heads_apart"])
    assert "moved by -0.19" in figs.apart_takeaway(down["heads_apart"])
    assert "holds for d16 and d64" in figs.local_caption(up["head_sizes"])
    assert "fails as stated for d16 and d64" in figs.local_caption(down["head_sizes"])


# --------------------------------------------------------------------------- the steps at a tiny size


def _ctx(**sizes):
    ctx = base.setup(ch, render=False, **{**GOOD, "n_seeds": 3, "size_seeds": 2, "n": 16})
    small = dict(
        apart_steps=4,
        apart_tasks=2,
        record_every=2,
        apart_test_tasks=4,
        heads_16=(1, 2, 4),
        heads_64=(4, 8, 16),
        n_values=(8, 16, 32),
        size_steps=3,
        size_tasks=2,
        size_test_tasks=4,
        n_boot=20,
    )
    ctx.sizes = MappingProxyType({**ctx.sizes, **small, **sizes})
    return ctx


def test_the_hand_written_head_agrees_with_the_library_and_the_gradient_is_checked():
    check = ch.head_check(_ctx())
    raw = check["data"].value
    A = raw["Q"] @ raw["K"].swapaxes(-1, -2) / np.sqrt(raw["Q"].shape[-1])  # (H, d, d)
    logits = np.einsum("btd,hde,bne->bhtn", raw["Xq"], A, raw["X"])
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.einsum("bhtn,bn->bht", w, raw["Y"]), raw["heads"], rtol=1e-10)
    assert check["gradient_gap"].value < ch.GRADIENT_TOL


def test_the_steps_at_a_tiny_size():
    ctx = _ctx()
    apart = ch.heads_apart(ctx)
    iso = apart["isotropic"]
    np.testing.assert_array_equal(iso["steps"], [0, 2, 4])
    # every configuration starts from the same keys: equal HDI_PA at initialisation (the tied heads: 0)
    assert iso["free"]["start"].value == iso["penalised"]["start"].value
    assert abs(iso["tied"]["end"].value) < 1e-9 and iso["tied"]["decision"]["verdict"] == V.HOLDS
    assert iso["free"]["decision"]["verdict"] == V.UNDECIDED  # 3 seeds < MIN_SEEDS
    rows = figs.summary_table(apart)
    assert len(rows) == 6 and all("±" in row["change: test MSE"] for row in rows.values())
    sizes = ch.head_sizes(ctx)
    node = sizes["d16"]
    assert node["mse_mean"].shape == (3, 3) and len(node["best"]) == 3
    assert np.all((node["neff_mean"] > 0) & (node["neff_mean"] <= 1))
    records = decide_all(ch.CLAIMS, Results({"heads_apart": apart, "head_sizes": sizes}))
    assert len(records) == 12
